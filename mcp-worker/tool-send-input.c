/* SPDX-License-Identifier: ISC */
/*
 * tool-send-input.c: answer a run whose cell asks for input (status
 * input_required); the run goes on.  The value is passed on and never
 * echoed: it may be a password.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_send_input_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_send_input(struct worker_call *);

static void
tool_send_input_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc;
	const char		*id;
	char			*s;

	id = json_object_get_string(json_object_object_get(
	    worker_call_args(call), "execution_id"));
	sc = json_object_new_object();
	json_object_object_add(sc, "execution_id", json_object_new_string(id));
	json_object_object_add(sc, "answered", json_object_new_boolean(1));
	xasprintf(&s, "answered run %s; it goes on (get_results %s to "
	    "follow it)", id, id);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_send_input(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "execution_id",
		"value", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct proto_exec_input		 m;
	struct worker_handle		*h;
	struct mpbuf			 b;
	const char			*id, *value;
	char				*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "execution_id", 1, &id, &msg) != 0 ||
	    worker_args_string(args, "value", 1, &value, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	/* The whole string: an answer may hold NUL. */
	m.value.ptr = value;
	m.value.len = (size_t)json_object_get_string_len(
	    json_object_object_get(args, "value"));
	if (m.value.len > PROTO_INPUT_MAX) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "'value' is over %u bytes", PROTO_INPUT_MAX);
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	m.execution_id = proto_str_make(id);
	mpbuf_init(&b);
	proto_exec_input_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_EXEC_INPUT,
	    &b.sb, tool_send_input_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_send_input_entry = {
	.name = "send_input",
	.description = "Answer a run in status input_required (input, "
	    "getpass); never echoed.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"value\":{\"type\":\"string\"}},"
	    "\"required\":[\"execution_id\",\"value\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_send_input,
};
