/* SPDX-License-Identifier: ISC */
/*
 * tool-complete-code.c: the kernel's completions at a cursor, with their
 * types where the kernel gives them; no user code runs.  While a cell
 * runs the request waits behind it, up to WORKER_INTROSPECT_MS.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_complete_code_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_complete_code(struct worker_call *);

static void
tool_complete_code_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_complete_reply	 m;
	struct json_object		*sc, *matches, *v, *t;
	struct evbuffer			*text;
	char				*s, err[256];
	size_t				 i, n;

	if (proto_complete_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", err);
		return;
	}
	matches = mpjson_unpack(m.matches.obj);
	n = json_object_array_length(matches);
	sc = json_object_new_object();
	json_object_object_add(sc, "matches", matches);
	json_object_object_add(sc, "cursor_start",
	    json_object_new_int64(m.cursor_start));
	json_object_object_add(sc, "cursor_end",
	    json_object_new_int64(m.cursor_end));
	json_object_object_add(sc, "total",
	    json_object_new_int64((int64_t)m.total));
	json_object_object_add(sc, "while_busy",
	    json_object_new_boolean(m.while_busy));
	text = evbuffer_new();
	evbuffer_add_printf(text, "%llu matches (replace %lld-%lld):",
	    (unsigned long long)m.total, (long long)m.cursor_start,
	    (long long)m.cursor_end);
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(matches, i);
		evbuffer_add_printf(text, "%s %s", i > 0 ? "," : "",
		    json_object_get_string(json_object_object_get(v, "text")));
		if ((t = json_object_object_get(v, "type")) != NULL)
			evbuffer_add_printf(text, " (%s)",
			    json_object_get_string(t));
	}
	if (m.total > n)
		evbuffer_add_printf(text, ", ... %llu more",
		    (unsigned long long)(m.total - n));
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_complete_code(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "code",
		"cursor_pos", NULL
	};
	struct proto_complete		 m = { 0 };
	struct worker_handle		*h;
	struct mpbuf			 b;
	int				 pos;

	if ((h = worker_call_code(call, allowed, &m.code, &pos,
	    NULL)) == NULL)
		return;
	m.has_cursor_pos = pos >= 0;
	m.cursor_pos = pos;
	m.has_timeout_ms = 1;
	m.timeout_ms = WORKER_INTROSPECT_MS;
	mpbuf_init(&b);
	proto_complete_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h),
	    PROTO_MSG_KERNEL_COMPLETE, &b.sb, tool_complete_code_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_complete_code_entry = {
	.name = "complete_code",
	.description = "Completions with types at cursor_pos (default end); "
	    "runs no code.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"code\":{\"type\":\"string\"},"
	    "\"cursor_pos\":{\"type\":\"integer\"}},"
	    "\"required\":[\"code\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"matches\":{\"type\":\"array\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_complete_code,
};
