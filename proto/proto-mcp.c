/* SPDX-License-Identifier: ISC */
/*
 * proto-mcp.c: the proxy <-> worker messages (300-399): MCP, and
 * WORKER_READY, WORKER_UPGRADE, WORKER_SHUTDOWN, read with proto-field.c
 * as every codec.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static void	proto_mcp_pack_strv(msgpack_packer *, const char *,
		    const struct proto_str *);

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
	const char	*msg = "MCP";

	memset(mcp, 0, sizeof *mcp);
	PROTO_TRY(proto_field_body(body, msg, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "json", PROTO_REQ, &mcp->json,
	    err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "id", 0, &mcp->id, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "method", 0, &mcp->method, err,
	    errlen));
	return (proto_field_bool(body, msg, "error", 0, &mcp->error, NULL,
	    err, errlen));
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
	PROTO_TRY(proto_field_body(body, "WORKER_READY", err, errlen));
	return (proto_field_str(body, "WORKER_READY", "catalog", PROTO_REQ,
	    &ready->catalog, err, errlen));
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
	return (proto_field_body(body, "WORKER_UPGRADE", err, errlen));
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
	return (proto_field_body(body, "WORKER_SHUTDOWN", err, errlen));
}
