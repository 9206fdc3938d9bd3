/* SPDX-License-Identifier: ISC */
/*
 * tool-move-cells.c: move cells (content, outputs and metadata kept) to
 * after a cell, the top or the bottom, in one atomic edit.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_move_cells_done(struct worker_call *, struct worker_room *,
		    const msgpack_object *);
static void	tool_move_cells(struct worker_call *);

static void
tool_move_cells_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc, *ids, *v;
	struct evbuffer		*text;
	int64_t			 seq;
	char			*s;
	size_t			 i;

	ids = json_object_object_get(worker_call_args(call), "cell_ids");
	seq = worker_reply_edit_seq(reply);
	sc = json_object_new_object();
	json_object_object_add(sc, "cell_ids", json_object_get(ids));
	json_object_object_add(sc, "after", json_object_get(
	    json_object_object_get(worker_call_args(call), "after")));
	json_object_object_add(sc, "seq", json_object_new_int64(seq));
	json_object_object_add(sc, "cursor", worker_output_cursor(room, seq));
	text = evbuffer_new();
	evbuffer_add_printf(text, "moved %zu cell%s after %s:",
	    json_object_array_length(ids),
	    json_object_array_length(ids) == 1 ? "" : "s",
	    json_object_get_string(json_object_object_get(
	    worker_call_args(call), "after")));
	for (i = 0; i < json_object_array_length(ids); i++) {
		v = json_object_array_get_idx(ids, i);
		evbuffer_add_printf(text, " %s", json_object_get_string(v));
	}
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_move_cells(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "cell_ids",
		"after", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct json_object		*ids, *after, *v;
	struct proto_room_edit		 m;
	struct proto_edit		 ed;
	struct mpbuf			 b;
	struct worker_handle		*h;
	size_t				 i, n;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (!json_object_object_get_ex(args, "cell_ids", &ids) ||
	    !json_object_is_type(ids, json_type_array) ||
	    (n = json_object_array_length(ids)) == 0 ||
	    n > PROTO_RUN_MAX_CELLS) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "cell_ids must be "
		    "a list of 1 to %d cell references", PROTO_RUN_MAX_CELLS);
		return;
	}
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(ids, i);
		if ((!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) == 0) &&
		    !json_object_is_type(v, json_type_int)) {
			worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
			    "cell_ids[%zu] must be a cell_id string or a "
			    "zero-based index",
			    i);
			return;
		}
	}
	if (!json_object_object_get_ex(args, "after", &after) ||
	    ((!json_object_is_type(after, json_type_string) ||
	    json_object_get_string_len(after) == 0) &&
	    !json_object_is_type(after, json_type_int))) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "after must be a cell_id, a zero-based index, \"TOP\" or "
		    "\"BOTTOM\"");
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	memset(&ed, 0, sizeof ed);
	ed.op = PROTO_EDIT_MOVE;
	ed.cell_ids = worker_daemon_doc(ids);
	ed.after = worker_daemon_doc(after);
	memset(&m, 0, sizeof m);
	m.edits.pack = proto_edit_pack_one;
	m.edits.arg = &ed;
	worker_client_edit_who(&m);
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_ROOM_EDIT,
	    &b.sb, tool_move_cells_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_move_cells_entry = {
	.name = "move_cells",
	.description = "Move cell_ids, in that order, to right after the cell "
	    "named by after (or \"TOP\"/\"BOTTOM\"); content and outputs are "
	    "kept.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"cell_ids\":{\"type\":\"array\",\"minItems\":1,"
	    "\"items\":{\"type\":[\"string\",\"integer\"]}},"
	    "\"after\":{\"type\":[\"string\",\"integer\"]}},"
	    "\"required\":[\"cell_ids\",\"after\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"cell_ids\":{\"type\":\"array\"},"
	    "\"after\":{\"type\":[\"string\",\"integer\"]},"
	    "\"seq\":{\"type\":\"integer\"},\"cursor\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_move_cells,
};
