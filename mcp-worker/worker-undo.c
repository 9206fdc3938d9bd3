/* SPDX-License-Identifier: ISC */
/*
 * worker-undo.c: edit_cells undo (docs/decisions/074).  undo: N reverts
 * this session's last N batches on the notebook, "bID" that batch (a
 * revert too: a redo), "list" lists the notebook's batches.  The daemon
 * plans and refuses (undo_conflict); this turns the answer into a result.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Cells shown of each batch in a list. */
#define WORKER_UNDO_CELLS_SHOWN	4

static void	worker_undo_done(struct worker_call *, struct worker_room *,
		    const msgpack_object *);
static void	worker_undo_list(struct evbuffer *, struct json_object *,
		    struct json_object *);

static struct json_object *
worker_undo_id(int64_t id)
{
	char	buf[32];

	snprintf(buf, sizeof buf, "b%lld", (long long)id);
	return (json_object_new_string(buf));
}

/* One line a batch: "b41 you 2 cells a1b2c3d4 9f8e7d6c, undone by b45". */
static void
worker_undo_list(struct evbuffer *text, struct json_object *batches,
    struct json_object *out)
{
	struct json_object	*b, *o, *cells, *v;
	size_t			 i, j, n, nc;
	int			 mine;

	n = json_object_array_length(batches);
	evbuffer_add_printf(text, "%zu batch%s on this notebook, newest "
	    "first:", n, n == 1 ? "" : "es");
	for (i = 0; i < n; i++) {
		b = json_object_array_get_idx(batches, i);
		mine = json_object_get_boolean(json_object_object_get(b,
		    "mine"));
		cells = json_object_object_get(b, "cells");
		nc = json_object_array_length(cells);
		o = json_object_new_object();
		json_object_object_add(o, "batch_id", worker_undo_id(
		    json_object_get_int64(json_object_object_get(b,
		    "batch_id"))));
		json_object_object_add(o, "mine",
		    json_object_new_boolean(mine));
		if ((v = json_object_object_get(b, "client")) != NULL &&
		    !mine)
			json_object_object_add(o, "client",
			    json_object_get(v));
		json_object_object_add(o, "cell_ids", json_object_get(cells));
		evbuffer_add_printf(text, "\nb%lld %s %zu cell%s",
		    (long long)json_object_get_int64(json_object_object_get(b,
		    "batch_id")), mine ? "you" : (v != NULL ?
		    json_object_get_string(v) : "other"), nc,
		    nc == 1 ? "" : "s");
		for (j = 0; j < nc && j < WORKER_UNDO_CELLS_SHOWN; j++)
			evbuffer_add_printf(text, " %s", json_object_get_string(
			    json_object_array_get_idx(cells, j)));
		if (nc > WORKER_UNDO_CELLS_SHOWN)
			evbuffer_add_printf(text, " ...");
		if ((v = json_object_object_get(b, "reverts")) != NULL &&
		    json_object_array_length(v) > 0) {
			evbuffer_add_printf(text, ", undoes");
			for (j = 0; j < json_object_array_length(v); j++)
				evbuffer_add_printf(text, " b%lld", (long long)
				    json_object_get_int64(
				    json_object_array_get_idx(v, j)));
		}
		if ((v = json_object_object_get(b, "undone_by")) != NULL) {
			evbuffer_add_printf(text, ", undone by b%lld",
			    (long long)json_object_get_int64(v));
			json_object_object_add(o, "undone_by",
			    worker_undo_id(json_object_get_int64(v)));
		}
		json_object_array_add(out, o);
	}
}

static void
worker_undo_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_room_edit_reply	 m;
	struct json_object		*undo, *sc, *v, *ids;
	struct evbuffer			*text;
	char				 err[256];
	char				*s;
	size_t				 i;

	if (proto_room_edit_reply_unpack(reply, &m, err, sizeof err) != 0 ||
	    (undo = mpjson_unpack(m.undo.obj)) == NULL) {
		worker_call_error(call, PROTO_E_OUTCOME_UNKNOWN,
		    "unexpected reply from runtimed");
		return;
	}
	sc = json_object_new_object();
	text = evbuffer_new();
	if ((v = json_object_object_get(undo, "batches")) != NULL) {
		ids = json_object_new_array();
		worker_undo_list(text, v, ids);
		json_object_object_add(sc, "batches", ids);
	} else {
		v = json_object_object_get(undo, "reverted");
		ids = json_object_new_array();
		evbuffer_add_printf(text, "undid");
		for (i = 0; i < json_object_array_length(v); i++) {
			json_object_array_add(ids, worker_undo_id(
			    json_object_get_int64(json_object_array_get_idx(v,
			    i))));
			evbuffer_add_printf(text, " b%lld", (long long)
			    json_object_get_int64(json_object_array_get_idx(v,
			    i)));
		}
		evbuffer_add_printf(text, " as batch b%lld (undo \"b%lld\" "
		    "redoes it)", (long long)json_object_get_int64(
		    json_object_object_get(undo, "batch_id")), (long long)
		    json_object_get_int64(json_object_object_get(undo,
		    "batch_id")));
		json_object_object_add(sc, "reverted", ids);
		json_object_object_add(sc, "batch_id", worker_undo_id(
		    json_object_get_int64(json_object_object_get(undo,
		    "batch_id"))));
		json_object_object_add(sc, "seq",
		    json_object_new_int64((int64_t)m.seq));
		json_object_object_add(sc, "cursor",
		    worker_output_cursor(room, (int64_t)m.seq));
	}
	json_object_put(undo);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

/* edit_cells with undo (and no edits): checked, then to the daemon. */
void
worker_undo(struct worker_call *call, struct json_object *arg)
{
	struct proto_room_edit	 m;
	struct json_object	*u;
	struct worker_handle	*h;
	struct mpbuf		 b;
	const char		*s = "";
	char			*end;
	long long		 id;

	u = json_object_new_object();
	if (json_object_is_type(arg, json_type_int) &&
	    json_object_get_int64(arg) >= 1 &&
	    json_object_get_int64(arg) <= ROOM_UNDO_BATCHES_MAX)
		json_object_object_add(u, "batches",
		    json_object_new_int64(json_object_get_int64(arg)));
	else if (json_object_is_type(arg, json_type_string) &&
	    strcmp((s = json_object_get_string(arg)), "list") == 0)
		json_object_object_add(u, "list", json_object_new_boolean(1));
	else if (json_object_is_type(arg, json_type_string) && s[0] == 'b' &&
	    s[1] >= '1' && s[1] <= '9' && (id = strtoll(s + 1, &end, 10)) > 0 &&
	    *end == '\0')
		json_object_object_add(u, "batch_id", json_object_new_int64(id));
	else {
		json_object_put(u);
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "undo must be "
		    "a number of your batches to revert (1 to %d), a batch id "
		    "such as \"b12\", or \"list\"", ROOM_UNDO_BATCHES_MAX);
		return;
	}
	if ((h = worker_call_target(call)) == NULL) {
		json_object_put(u);
		return;
	}
	memset(&m, 0, sizeof m);
	m.undo = worker_daemon_doc(u);
	worker_client_edit_who(&m);
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_ROOM_EDIT,
	    &b.sb, worker_undo_done);
	mpbuf_free(&b);
	json_object_put(u);
}
