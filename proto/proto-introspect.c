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
 * never logged by anyone, so no codec error quotes it.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static void	proto_introspect_opt(msgpack_packer *, const char *, int,
		    int64_t);
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
	proto_introspect_opt(pk, "cursor_pos", has_cursor_pos, cursor_pos);
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

/* An optional integer: itself, or nil. */
static void
proto_introspect_opt(msgpack_packer *pk, const char *key, int has,
    int64_t v)
{
	if (has)
		proto_pack_int(pk, key, v);
	else
		proto_pack_nil(pk, key);
}

void
proto_variables_pack(msgpack_packer *pk, const struct proto_variables *m)
{
	msgpack_pack_map(pk, 3);
	proto_pack_pstr(pk, "filter", &m->filter);
	if (m->has_max)
		proto_pack_uint(pk, "max", m->max);
	else
		proto_pack_nil(pk, "max");
	proto_introspect_opt(pk, "timeout_ms", m->has_timeout_ms,
	    m->timeout_ms);
}

int
proto_variables_unpack(const msgpack_object *body, struct proto_variables *m,
    char *err, size_t errlen)
{
	const char	*n = "KERNEL_VARIABLES";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "filter", PROTO_NONUL, &m->filter,
	    err, errlen));
	if (m->filter.len > PROTO_FILTER_MAX) {
		snprintf(err, errlen, "%s: filter is over %u bytes", n,
		    PROTO_FILTER_MAX);
		return (-1);
	}
	PROTO_TRY(proto_field_uint(body, n, "max", 0, &m->max, &m->has_max,
	    err, errlen));
	return (proto_field_int(body, n, "timeout_ms", PROTO_UNSIGNED,
	    &m->timeout_ms, &m->has_timeout_ms, err, errlen));
}

void
proto_complete_pack(msgpack_packer *pk, const struct proto_complete *m)
{
	msgpack_pack_map(pk, 3);
	proto_introspect_at_pack(pk, &m->code, m->has_cursor_pos,
	    m->cursor_pos);
	proto_introspect_opt(pk, "timeout_ms", m->has_timeout_ms,
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
proto_complete_reply_pack(msgpack_packer *pk,
    const struct proto_complete_reply *m)
{
	msgpack_pack_map(pk, 5);
	proto_pack_doc(pk, "matches", &m->matches);
	proto_pack_int(pk, "cursor_start", m->cursor_start);
	proto_pack_int(pk, "cursor_end", m->cursor_end);
	proto_pack_uint(pk, "total", m->total);
	proto_pack_bool(pk, "while_busy", m->while_busy);
}

int
proto_complete_reply_unpack(const msgpack_object *body,
    struct proto_complete_reply *m, char *err, size_t errlen)
{
	const char	*n = "KERNEL_COMPLETE_REPLY";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "matches", PROTO_REQ | PROTO_ARRAY,
	    &m->matches, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "cursor_start", 0,
	    &m->cursor_start, NULL, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "cursor_end", 0, &m->cursor_end,
	    NULL, err, errlen));
	PROTO_TRY(proto_field_uint(body, n, "total", 0, &m->total, NULL, err,
	    errlen));
	return (proto_field_bool(body, n, "while_busy", 0, &m->while_busy,
	    NULL, err, errlen));
}

void
proto_inspect_pack(msgpack_packer *pk, const struct proto_inspect *m)
{
	msgpack_pack_map(pk, 4);
	proto_introspect_at_pack(pk, &m->code, m->has_cursor_pos,
	    m->cursor_pos);
	proto_pack_int(pk, "detail_level", m->detail_level);
	proto_introspect_opt(pk, "timeout_ms", m->has_timeout_ms,
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

void
proto_exec_input_pack(msgpack_packer *pk, const struct proto_exec_input *m)
{
	msgpack_pack_map(pk, 2);
	proto_pack_pstr(pk, "execution_id", &m->execution_id);
	proto_pack_pstr(pk, "value", &m->value);
}

int
proto_exec_input_unpack(const msgpack_object *body,
    struct proto_exec_input *m, char *err, size_t errlen)
{
	const char	*n = "EXEC_INPUT";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "execution_id", PROTO_REQ |
	    PROTO_NONUL, &m->execution_id, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "value", PROTO_REQ, &m->value,
	    err, errlen));
	if (m->value.len > PROTO_INPUT_MAX) {
		snprintf(err, errlen, "%s: value is over %u bytes", n,
		    PROTO_INPUT_MAX);
		return (-1);
	}
	return (0);
}
