/* SPDX-License-Identifier: ISC */
/*
 * proto-hello.c: the handshake that opens every connection.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static int	proto_hello_copy(const msgpack_object *, const char *, char *,
		    size_t);

/* Copy a string field into a fixed buffer; -1 if absent, too long or
 * holding a NUL. */
static int
proto_hello_copy(const msgpack_object *map, const char *key, char *dst,
    size_t dstlen)
{
	const char	*s;
	size_t		 len;

	if ((s = proto_get_str(map, key, &len)) == NULL)
		return (-1);
	if (len >= dstlen || memchr(s, '\0', len) != NULL)
		return (-1);
	memcpy(dst, s, len);
	dst[len] = '\0';
	return (0);
}

void
proto_hello_pack(msgpack_packer *pk, const struct proto_hello *hello)
{
	msgpack_pack_map(pk, 4 + (hello->client[0] != '\0'));
	proto_pack_int(pk, "version", hello->version);
	proto_pack_str(pk, "kind", hello->kind);
	proto_pack_str(pk, "label", hello->label);
	proto_pack_int(pk, "pid", hello->pid);
	if (hello->client[0] != '\0')
		proto_pack_str(pk, "client", hello->client);
}

int
proto_hello_unpack(const msgpack_object *body, struct proto_hello *hello,
    char *err, size_t errlen)
{
	int64_t	version, pid;

	memset(hello, 0, sizeof *hello);
	if (proto_get_int(body, "version", &version) != 0 ||
	    version < 0 || version > 255) {
		snprintf(err, errlen, "HELLO without a valid version");
		return (-1);
	}
	hello->version = (int)version;
	if (proto_hello_copy(body, "kind", hello->kind,
	    sizeof hello->kind) != 0) {
		snprintf(err, errlen, "HELLO without a valid kind");
		return (-1);
	}
	if (proto_get(body, "label") != NULL &&
	    proto_hello_copy(body, "label", hello->label,
	    sizeof hello->label) != 0) {
		snprintf(err, errlen, "HELLO label is not a short string");
		return (-1);
	}
	if (proto_get_int(body, "pid", &pid) == 0)
		hello->pid = pid;
	/* The MCP client's name, for the live view; optional. */
	if (proto_get(body, "client") != NULL &&
	    proto_hello_copy(body, "client", hello->client,
	    sizeof hello->client) != 0) {
		snprintf(err, errlen, "HELLO client is not a short string");
		return (-1);
	}
	return (0);
}

/* Is this a HELLO we can serve?  Checks the version and the peer kind. */
int
proto_hello_check(const struct proto_hello *hello, char *err, size_t errlen)
{
	if (hello->version != PROTO_VERSION) {
		snprintf(err, errlen, "protocol version mismatch: peer %d, "
		    "ours %d", hello->version, PROTO_VERSION);
		return (-1);
	}
	if (strcmp(hello->kind, PROTO_PEER_WORKER) != 0 &&
	    strcmp(hello->kind, PROTO_PEER_AGENT) != 0 &&
	    strcmp(hello->kind, PROTO_PEER_CTL) != 0 &&
	    strcmp(hello->kind, PROTO_PEER_PROXY) != 0 &&
	    strcmp(hello->kind, PROTO_PEER_WEB) != 0) {
		snprintf(err, errlen, "unknown peer kind \"%s\"", hello->kind);
		return (-1);
	}
	return (0);
}

void
proto_hello_ok_pack(msgpack_packer *pk, const struct proto_incarnation *inc)
{
	msgpack_pack_map(pk, 4);
	proto_pack_int(pk, "version", PROTO_VERSION);
	proto_pack_int(pk, "pid", inc->pid);
	proto_pack_int(pk, "started_at", inc->started_at);
	proto_pack_str(pk, "daemon_version", inc->version);
}

int
proto_hello_ok_unpack(const msgpack_object *body,
    struct proto_incarnation *inc, char *err, size_t errlen)
{
	memset(inc, 0, sizeof *inc);
	if (proto_get_int(body, "pid", &inc->pid) != 0 ||
	    proto_get_int(body, "started_at", &inc->started_at) != 0) {
		snprintf(err, errlen, "HELLO_OK without an incarnation");
		return (-1);
	}
	if (proto_hello_copy(body, "daemon_version", inc->version,
	    sizeof inc->version) != 0) {
		snprintf(err, errlen, "HELLO_OK without a version");
		return (-1);
	}
	return (0);
}

void
proto_mismatch_pack(msgpack_packer *pk, int peer_version)
{
	char	msg[128];

	snprintf(msg, sizeof msg, "protocol version mismatch: peer %d, "
	    "ours %d", peer_version, PROTO_VERSION);
	msgpack_pack_map(pk, 2);
	proto_pack_int(pk, "version", PROTO_VERSION);
	proto_pack_str(pk, "message", msg);
}

/*
 * Any version may answer this, so every field is optional: a reader
 * that gets -1 says the version it did not learn.
 */
int
proto_mismatch_unpack(const msgpack_object *body, struct proto_mismatch *m,
    char *err, size_t errlen)
{
	const char	*n = "VERSION_MISMATCH";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "version", 0, &m->version,
	    &m->has_version, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "message", 0, &m->message, err,
	    errlen));
	return (0);
}

/* The version a VERSION_MISMATCH says, or -1 when it says none. */
int64_t
proto_mismatch_version(const msgpack_object *body)
{
	struct proto_mismatch	m;
	char			err[128];

	if (proto_mismatch_unpack(body, &m, err, sizeof err) != 0 ||
	    !m.has_version)
		return (-1);
	return (m.version);
}
