/* SPDX-License-Identifier: ISC */
/*
 * proto-introspect.c: looking inside a kernel without a cell, and
 * answering a cell's input() (PROTOCOL.md, "Introspection and stdin";
 * docs/decisions/022).
 *
 * A client's KERNEL_VARIABLES, KERNEL_COMPLETE and KERNEL_INSPECT have
 * the bodies the daemon passes on as AGENT_VARIABLES, AGENT_COMPLETE and
 * AGENT_INSPECT, and the agent's reply is the one the client gets: one
 * codec per body serves both links.  EXEC_INPUT (client) and
 * AGENT_INPUT_REPLY (daemon) share a body too; an answer's value is
 * never logged by anyone, so no codec error quotes it.  Here are the
 * codecs that need code (a cap on code whose refusal says what to send
 * instead, detail_level's "0 or 1"); KERNEL_VARIABLES, the replies and
 * EXEC_INPUT are declared by their fields in proto-body.h.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static void	proto_introspect_at_pack(msgpack_packer *,
		    const struct proto_str *, int, int64_t);
static int	proto_introspect_at_unpack(const msgpack_object *,
		    const char *, struct proto_str *, int *, int64_t *, char *,
		    size_t);

/* Where KERNEL_COMPLETE and KERNEL_INSPECT look: code and cursor_pos. */
static void
proto_introspect_at_pack(msgpack_packer *pk, const struct proto_str *code,
    int has_cursor_pos, int64_t cursor_pos)
{
	proto_pack_pstr(pk, "code", code);
	proto_pack_opt_int(pk, "cursor_pos", has_cursor_pos, cursor_pos);
}

/* Code to complete or inspect fits its frame with room to spare. */
static int
proto_introspect_at_unpack(const msgpack_object *body, const char *n,
    struct proto_str *code, int *has_cursor_pos, int64_t *cursor_pos,
    char *err, size_t errlen)
{
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "code", PROTO_REQ, code, err,
	    errlen));
	if (code->len > PROTO_CODE_MAX) {
		snprintf(err, errlen, "%s: code is over %u bytes: send the "
		    "lines around the cursor", n, PROTO_CODE_MAX);
		return (-1);
	}
	return (proto_field_int(body, n, "cursor_pos", PROTO_UNSIGNED,
	    cursor_pos, has_cursor_pos, err, errlen));
}

void
proto_complete_pack(msgpack_packer *pk, const struct proto_complete *m)
{
	msgpack_pack_map(pk, 3);
	proto_introspect_at_pack(pk, &m->code, m->has_cursor_pos,
	    m->cursor_pos);
	proto_pack_opt_int(pk, "timeout_ms", m->has_timeout_ms,
	    m->timeout_ms);
}

int
proto_complete_unpack(const msgpack_object *body, struct proto_complete *m,
    char *err, size_t errlen)
{
	const char	*n = "KERNEL_COMPLETE";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_introspect_at_unpack(body, n, &m->code,
	    &m->has_cursor_pos, &m->cursor_pos, err, errlen));
	return (proto_field_int(body, n, "timeout_ms", PROTO_UNSIGNED,
	    &m->timeout_ms, &m->has_timeout_ms, err, errlen));
}

void
proto_inspect_pack(msgpack_packer *pk, const struct proto_inspect *m)
{
	msgpack_pack_map(pk, 4);
	proto_introspect_at_pack(pk, &m->code, m->has_cursor_pos,
	    m->cursor_pos);
	proto_pack_int(pk, "detail_level", m->detail_level);
	proto_pack_opt_int(pk, "timeout_ms", m->has_timeout_ms,
	    m->timeout_ms);
}

int
proto_inspect_unpack(const msgpack_object *body, struct proto_inspect *m,
    char *err, size_t errlen)
{
	const char	*n = "KERNEL_INSPECT";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_introspect_at_unpack(body, n, &m->code,
	    &m->has_cursor_pos, &m->cursor_pos, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "detail_level", PROTO_UNSIGNED,
	    &m->detail_level, NULL, err, errlen));
	if (m->detail_level > 1) {
		snprintf(err, errlen, "%s: detail_level is not 0 or 1", n);
		return (-1);
	}
	return (proto_field_int(body, n, "timeout_ms", PROTO_UNSIGNED,
	    &m->timeout_ms, &m->has_timeout_ms, err, errlen));
}
