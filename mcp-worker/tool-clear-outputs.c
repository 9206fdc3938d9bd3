/* SPDX-License-Identifier: ISC */
/*
 * tool-clear-outputs.c: drop the outputs (and execution counts) of some
 * cells or of every code cell.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_clear_outputs_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_clear_outputs(struct worker_call *);

static void
tool_clear_outputs_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc, *ids;
	int64_t			 seq;
	char			*text;

	ids = json_object_object_get(worker_call_args(call), "cell_ids");
	seq = worker_reply_edit_seq(reply);
	sc = json_object_new_object();
	json_object_object_add(sc, "cleared", ids != NULL ?
	    json_object_get(ids) : json_object_new_string("all"));
	json_object_object_add(sc, "seq", json_object_new_int64(seq));
	json_object_object_add(sc, "cursor", worker_output_cursor(room, seq));
	if (ids != NULL)
		xasprintf(&text, "cleared the outputs of %zu cell%s",
		    json_object_array_length(ids),
		    json_object_array_length(ids) == 1 ? "" : "s");
	else
		xasprintf(&text, "cleared the outputs of every code cell");
	worker_call_result(call, text, sc);
	free(text);
}

static void
tool_clear_outputs(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "cell_ids", "all",
		NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct json_object		*ids = NULL, *v;
	struct proto_room_edit		 m;
	struct proto_edit		 ed;
	struct mpbuf			 b;
	struct worker_handle		*h;
	char				*msg = NULL;
	size_t				 i, n;
	int				 all;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_bool(args, "all", 0, &all, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if (json_object_object_get_ex(args, "cell_ids", &ids) &&
	    json_object_is_type(ids, json_type_null))
		ids = NULL;
	if ((ids == NULL) == !all) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "give cell_ids or all:true (not both)");
		return;
	}
	if (ids != NULL) {
		if (!json_object_is_type(ids, json_type_array) ||
		    (n = json_object_array_length(ids)) == 0) {
			worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
			    "cell_ids must be a non-empty list of cell "
			    "references");
			return;
		}
		for (i = 0; i < n; i++) {
			v = json_object_array_get_idx(ids, i);
			if ((!json_object_is_type(v, json_type_string) ||
			    json_object_get_string_len(v) == 0) &&
			    !json_object_is_type(v, json_type_int)) {
				worker_call_error(call,
				    PROTO_E_INVALID_ARGUMENT,
				    "cell_ids[%zu] must be a cell_id string or "
				    "a zero-based index", i);
				return;
			}
		}
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	/* Without cell_ids: every code cell. */
	memset(&ed, 0, sizeof ed);
	ed.op = PROTO_EDIT_CLEAR_OUTPUTS;
	if (ids != NULL)
		ed.cell_ids = worker_daemon_doc(ids);
	memset(&m, 0, sizeof m);
	m.edits.pack = proto_edit_pack_one;
	m.edits.arg = &ed;
	worker_client_edit_who(&m);
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_ROOM_EDIT,
	    &b.sb, tool_clear_outputs_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_clear_outputs_entry = {
	.name = "clear_outputs",
	.description = "Clear the outputs and execution counts of cell_ids, "
	    "or of every code cell with all:true.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"cell_ids\":{\"type\":\"array\",\"minItems\":1,"
	    "\"items\":{\"type\":[\"string\",\"integer\"]}},"
	    "\"all\":{\"type\":\"boolean\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"cleared\":{\"type\":[\"array\",\"string\"]},"
	    "\"seq\":{\"type\":\"integer\"},\"cursor\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = tool_clear_outputs,
};
