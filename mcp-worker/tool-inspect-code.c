/* SPDX-License-Identifier: ISC */
/*
 * tool-inspect-code.c: the kernel's help for the name at a cursor (a
 * docstring, a signature) as plain text, escapes removed, capped; no
 * user code runs.  While a cell runs the request waits behind it, up
 * to WORKER_INTROSPECT_MS.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_inspect_code_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_inspect_code(struct worker_call *);

static void
tool_inspect_code_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_inspect_reply	 m;
	struct json_object		*sc;
	char				*s, err[256];

	if (proto_inspect_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", err);
		return;
	}
	sc = json_object_new_object();
	json_object_object_add(sc, "found", json_object_new_boolean(m.found));
	json_object_object_add(sc, "text", worker_reply_str(&m.text));
	json_object_object_add(sc, "truncated",
	    json_object_new_boolean(m.truncated));
	json_object_object_add(sc, "while_busy",
	    json_object_new_boolean(m.while_busy));
	if (!m.found)
		s = xstrdup("the kernel found nothing to inspect there");
	else
		xasprintf(&s, "%.*s%s", (int)m.text.len, m.text.ptr,
		    m.truncated ? "\n[... cut]" : "");
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_inspect_code(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "code",
		"cursor_pos", "detail_level", NULL
	};
	struct proto_inspect		 m = { 0 };
	struct worker_handle		*h;
	struct mpbuf			 b;
	int				 pos, level;

	if ((h = worker_call_code(call, allowed, &m.code, &pos,
	    &level)) == NULL)
		return;
	m.has_cursor_pos = pos >= 0;
	m.cursor_pos = pos;
	m.detail_level = level;
	m.has_timeout_ms = 1;
	m.timeout_ms = WORKER_INTROSPECT_MS;
	mpbuf_init(&b);
	proto_inspect_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h),
	    PROTO_MSG_KERNEL_INSPECT, &b.sb, tool_inspect_code_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_inspect_code_entry = {
	.name = "inspect_code",
	.description = "Docstring/signature at cursor_pos as plain text; "
	    "runs no code.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"code\":{\"type\":\"string\"},"
	    "\"cursor_pos\":{\"type\":\"integer\"},"
	    "\"detail_level\":{\"type\":\"integer\"}},"
	    "\"required\":[\"code\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"found\":{\"type\":\"boolean\"},"
	    "\"text\":{\"type\":[\"string\",\"null\"]},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_inspect_code,
};
