/* SPDX-License-Identifier: ISC */
/*
 * tool-list-variables.c: the user's variables in the notebook's kernel,
 * without a cell: name, type, a short repr, length or shape.  While a
 * cell runs they come from the kernel's debugger, marked while_busy; a
 * kernel without one answers busy then (docs/decisions/022).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_list_variables_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_list_variables(struct worker_call *);

static void
tool_list_variables_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_variables_reply	 m;
	struct json_object		*sc, *vars, *v, *x;
	struct evbuffer			*text;
	char				*s, err[256];
	size_t				 i, n;

	if (proto_variables_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", err);
		return;
	}
	vars = mpjson_unpack(m.variables.obj);
	n = json_object_array_length(vars);
	sc = json_object_new_object();
	json_object_object_add(sc, "variables", vars);
	json_object_object_add(sc, "total",
	    json_object_new_int64((int64_t)m.total));
	json_object_object_add(sc, "truncated",
	    json_object_new_boolean(m.total > n));
	json_object_object_add(sc, "while_busy",
	    json_object_new_boolean(m.while_busy));
	json_object_object_add(sc, "via", worker_reply_str(&m.via));
	text = evbuffer_new();
	evbuffer_add_printf(text, "%zu of %llu variables%s:\n", n,
	    (unsigned long long)m.total, m.while_busy ?
	    " (while a cell runs, from the debugger)" : "");
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(vars, i);
		evbuffer_add_printf(text, "%s: %s",
		    json_object_get_string(json_object_object_get(v, "name")),
		    json_object_get_string(json_object_object_get(v, "type")));
		if ((x = json_object_object_get(v, "shape")) != NULL)
			evbuffer_add_printf(text, " shape %s",
			    json_object_to_json_string_ext(x,
			    JSON_C_TO_STRING_PLAIN));
		else if ((x = json_object_object_get(v, "len")) != NULL)
			evbuffer_add_printf(text, " len %lld",
			    (long long)json_object_get_int64(x));
		evbuffer_add_printf(text, " = %s\n", json_object_get_string(
		    json_object_object_get(v, "repr")));
	}
	if (m.total > n)
		evbuffer_add_printf(text, "(%llu more: narrow with filter, or "
		    "raise max)\n", (unsigned long long)(m.total - n));
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_list_variables(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "filter", "max",
		NULL
	};
	struct proto_variables		 m;
	struct worker_handle		*h;
	struct mpbuf			 b;
	const char			*filter = NULL;
	char				*msg = NULL;
	int				 max;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(worker_call_args(call), "filter", 0, &filter,
	    &msg) != 0 || worker_args_uint(worker_call_args(call), "max",
	    PROTO_VARIABLES_DEFAULT, 1, PROTO_VARIABLES_MAX, &max,
	    &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if (filter != NULL && (size_t)json_object_get_string_len(
	    json_object_object_get(worker_call_args(call), "filter")) !=
	    strlen(filter)) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "'filter' holds a NUL: a name pattern cannot");
		return;
	}
	if (filter != NULL && strlen(filter) > PROTO_FILTER_MAX) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "'filter' is over %u bytes", PROTO_FILTER_MAX);
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	memset(&m, 0, sizeof m);
	m.filter = proto_str_make(filter);
	m.has_max = 1;
	m.max = (uint64_t)max;
	mpbuf_init(&b);
	proto_variables_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h),
	    PROTO_MSG_KERNEL_VARIABLES, &b.sb, tool_list_variables_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_list_variables_entry = {
	.name = "list_variables",
	.description = "Kernel's user variables (type, repr, len) without a "
	    "cell; mid-run if it has a debugger.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"filter\":{\"type\":\"string\"},"
	    "\"max\":{\"type\":\"integer\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"variables\":{\"type\":\"array\"},"
	    "\"total\":{\"type\":\"integer\"},"
	    "\"while_busy\":{\"type\":\"boolean\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_list_variables,
};
