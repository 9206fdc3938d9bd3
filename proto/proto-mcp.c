/* SPDX-License-Identifier: ISC */
/*
 * proto-mcp.c: the proxy <-> worker messages (300-399): MCP, and
 * WORKER_READY, WORKER_UPGRADE, WORKER_SHUTDOWN.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static int	proto_mcp_str(const msgpack_object *, const char *,
		    struct proto_str *, int, const char *, char *, size_t);
static int	proto_mcp_map(const msgpack_object *, const char *, char *,
		    size_t);
static void	proto_mcp_pack_strv(msgpack_packer *, const char *,
		    const struct proto_str *);

/* A string field into a borrowed proto_str: absent is ptr NULL. */
static int
proto_mcp_str(const msgpack_object *body, const char *key,
    struct proto_str *out, int required, const char *msg, char *err,
    size_t errlen)
{
	const msgpack_object	*v;

	out->ptr = NULL;
	out->len = 0;
	if ((v = proto_get(body, key)) == NULL) {
		if (!required)
			return (0);
		snprintf(err, errlen, "%s: %s is missing", msg, key);
		return (-1);
	}
	if (v->type != MSGPACK_OBJECT_STR) {
		snprintf(err, errlen, "%s: %s is not a string", msg, key);
		return (-1);
	}
	/* An empty string still has a pointer, so it is not "absent". */
	out->ptr = v->via.str.size > 0 ? v->via.str.ptr : "";
	out->len = v->via.str.size;
	return (0);
}

static int
proto_mcp_map(const msgpack_object *body, const char *msg, char *err,
    size_t errlen)
{
	if (body == NULL || body->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: body is not a map", msg);
		return (-1);
	}
	return (0);
}

static void
proto_mcp_pack_strv(msgpack_packer *pk, const char *key,
    const struct proto_str *s)
{
	if (s->ptr == NULL)
		proto_pack_strn(pk, key, "", 0);
	else
		proto_pack_strn(pk, key, s->ptr, s->len);
}

/* Everything but json's bytes: the map, the envelope, json's header. */
void
proto_mcp_pack_head(msgpack_packer *pk, const struct proto_mcp *mcp)
{
	msgpack_pack_map(pk, 1 + (mcp->id.ptr != NULL) +
	    (mcp->method.ptr != NULL) + (mcp->error != 0));
	if (mcp->id.ptr != NULL)
		proto_mcp_pack_strv(pk, "id", &mcp->id);
	if (mcp->method.ptr != NULL)
		proto_mcp_pack_strv(pk, "method", &mcp->method);
	if (mcp->error)
		proto_pack_bool(pk, "error", 1);
	proto_pack_key(pk, "json");
	msgpack_pack_str(pk, mcp->json.len);
}

void
proto_mcp_pack(msgpack_packer *pk, const struct proto_mcp *mcp)
{
	proto_mcp_pack_head(pk, mcp);
	msgpack_pack_str_body(pk, mcp->json.ptr, mcp->json.len);
}

int
proto_mcp_unpack(const msgpack_object *body, struct proto_mcp *mcp,
    char *err, size_t errlen)
{
	const msgpack_object	*v;

	memset(mcp, 0, sizeof *mcp);
	if (proto_mcp_map(body, "MCP", err, errlen) != 0 ||
	    proto_mcp_str(body, "json", &mcp->json, 1, "MCP", err,
	    errlen) != 0 ||
	    proto_mcp_str(body, "id", &mcp->id, 0, "MCP", err, errlen) != 0 ||
	    proto_mcp_str(body, "method", &mcp->method, 0, "MCP", err,
	    errlen) != 0)
		return (-1);
	if ((v = proto_get(body, "error")) != NULL) {
		if (v->type != MSGPACK_OBJECT_BOOLEAN) {
			snprintf(err, errlen, "MCP: error is not a boolean");
			return (-1);
		}
		mcp->error = v->via.boolean;
	}
	return (0);
}

void
proto_worker_ready_pack(msgpack_packer *pk,
    const struct proto_worker_ready *ready)
{
	msgpack_pack_map(pk, 1);
	proto_mcp_pack_strv(pk, "catalog", &ready->catalog);
}

int
proto_worker_ready_unpack(const msgpack_object *body,
    struct proto_worker_ready *ready, char *err, size_t errlen)
{
	memset(ready, 0, sizeof *ready);
	if (proto_mcp_map(body, "WORKER_READY", err, errlen) != 0 ||
	    proto_mcp_str(body, "catalog", &ready->catalog, 1, "WORKER_READY",
	    err, errlen) != 0)
		return (-1);
	return (0);
}

void
proto_worker_upgrade_pack(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 0);
}

int
proto_worker_upgrade_unpack(const msgpack_object *body, char *err,
    size_t errlen)
{
	return (proto_mcp_map(body, "WORKER_UPGRADE", err, errlen));
}

void
proto_worker_shutdown_pack(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 0);
}

int
proto_worker_shutdown_unpack(const msgpack_object *body, char *err,
    size_t errlen)
{
	return (proto_mcp_map(body, "WORKER_SHUTDOWN", err, errlen));
}
