/* SPDX-License-Identifier: ISC */
/*
 * tool-edit-cells.c: one atomic batch of insert / edit / delete / replace.
 * The edits are checked for shape here and sent through the edit codec
 * (struct proto_edit) with the references as given: the daemon
 * resolves cell references (ids, or integer indexes at the start of the
 * batch) and applies replace to the source as it is then, so the whole
 * batch is judged against one state (PROTOCOL.md, ROOM_EDIT).
 */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct tool_edit_cells {
	struct worker_call	*call;
	struct worker_room	*room;
	struct json_object	*edits;		/* borrowed */
	int			 run;
	struct json_object	*done;		/* result cells */
	struct json_object	*run_ids;
	struct evbuffer		*text;
	int64_t			 seq;
	struct worker_budget	 budget;
};

static void	tool_edit_cells_free(struct tool_edit_cells *);
static void	tool_edit_cells_fail(struct tool_edit_cells *, const char *,
		    const char *);
static int	tool_edit_cells_type_ok(const char *);
static int	tool_edit_cells_check_one(struct json_object *, size_t,
		    char **);
static void	tool_edit_cells_conflict(struct tool_edit_cells *,
		    const struct proto_error *, const char *);
static void	tool_edit_cells_finish(struct tool_edit_cells *,
		    struct json_object *);
static void	tool_edit_cells_ran(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	tool_edit_cells_edited(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	tool_edit_cells_undefined(struct tool_edit_cells *,
		    struct json_object *, struct json_object *);
static void	tool_edit_cells_read(struct json_object *,
		    struct proto_edit *);
static void	tool_edit_cells_send(struct tool_edit_cells *);
static void	tool_edit_cells(struct worker_call *);

static void
tool_edit_cells_free(struct tool_edit_cells *st)
{
	worker_room_unref(st->room);
	json_object_put(st->done);
	json_object_put(st->run_ids);
	if (st->text != NULL)
		evbuffer_free(st->text);
	free(st);
}

static void
tool_edit_cells_fail(struct tool_edit_cells *st, const char *code,
    const char *msg)
{
	worker_call_error(st->call, code, "%s", msg);
	tool_edit_cells_free(st);
}

static int
tool_edit_cells_type_ok(const char *t)
{
	return (strcmp(t, "code") == 0 || strcmp(t, "markdown") == 0 ||
	    strcmp(t, "raw") == 0);
}

/* Check one edit's shape; what it names is the daemon's to judge. */
static int
tool_edit_cells_check_one(struct json_object *e, size_t i, char **msg)
{
	static const char *const	 ins[] = {
		"op", "after", "cell_type", "source", "metadata", NULL
	};
	static const char *const	 edit[] = {
		"op", "cell_id", "source", "cell_type", "metadata",
		"expect_version", NULL
	};
	static const char *const	 del[] = {
		"op", "cell_id", "expect_version", NULL
	};
	static const char *const	 rep[] = {
		"op", "cell_id", "old_text", "new_text", "expect_version", NULL
	};
	static const char *const	 res[] = {
		"op", "cell_id", "take", NULL
	};
	/* The ops edit_cells offers (move_cells, clear_outputs: theirs). */
	static const char *const *const	 ops[] = {
		[PROTO_EDIT_INSERT] = ins,
		[PROTO_EDIT_EDIT] = edit,
		[PROTO_EDIT_DELETE] = del,
		[PROTO_EDIT_REPLACE] = rep,
		[PROTO_EDIT_RESOLVE] = res,
	};
	const char			*opname, *s;
	struct json_object		*v;
	char				*m = NULL;
	enum proto_edit_op		 op;
	int				 ins_op;

	if (!json_object_is_type(e, json_type_object)) {
		xasprintf(msg, "edits[%zu] must be an object", i);
		return (-1);
	}
	if (worker_args_string(e, "op", 1, &opname, &m) != 0)
		goto bad;
	if (proto_edit_op_find(opname, strlen(opname), &op) != 0 ||
	    (size_t)op >= nitems(ops) || ops[op] == NULL) {
		xasprintf(msg, "edits[%zu]: op must be insert, edit, delete, "
		    "replace or resolve", i);
		return (-1);
	}
	ins_op = op == PROTO_EDIT_INSERT;
	if (worker_args_check(e, ops[op], &m) != 0)
		goto bad;
	if (worker_args_string(e, "expect_version", 0, &s, &m) != 0)
		goto bad;
	/* As results show it ("v1a2b3c4d"): a model copies it so. */
	if (s != NULL && s[0] == 'v' && strlen(s) == 9)
		json_object_object_add(e, "expect_version",
		    json_object_new_string(s + 1));
	if (worker_args_string(e, "cell_type", 0, &s, &m) != 0)
		goto bad;
	if (s != NULL && !tool_edit_cells_type_ok(s)) {
		xasprintf(msg, "edits[%zu]: cell_type must be code, markdown "
		    "or raw", i);
		return (-1);
	}
	if (json_object_object_get_ex(e, "metadata", &v) && v != NULL &&
	    !json_object_is_type(v, json_type_object)) {
		xasprintf(msg, "edits[%zu]: metadata must be an object", i);
		return (-1);
	}
	if (worker_args_string(e, "source", ins_op, &s, &m) != 0)
		goto bad;
	v = json_object_object_get(e, ins_op ? "after" : "cell_id");
	if (v == NULL || (!json_object_is_type(v, json_type_string) &&
	    !json_object_is_type(v, json_type_int))) {
		xasprintf(msg, "edits[%zu]: %s must be a cell_id string or a "
		    "zero-based index%s", i, ins_op ? "after" : "cell_id",
		    ins_op ? " (or \"TOP\" / \"BOTTOM\")" : "");
		return (-1);
	}
	if (json_object_is_type(v, json_type_string) &&
	    worker_args_cellref(v, NULL, &s, &m) != 0)
		goto bad;
	if (op == PROTO_EDIT_EDIT &&
	    json_object_object_get(e, "source") == NULL &&
	    json_object_object_get(e, "cell_type") == NULL &&
	    json_object_object_get(e, "metadata") == NULL) {
		xasprintf(msg, "edits[%zu]: edit needs source, cell_type or "
		    "metadata", i);
		return (-1);
	}
	if (op == PROTO_EDIT_RESOLVE) {
		/* A merge conflict (docs/decisions/056): which to keep. */
		if (worker_args_string(e, "take", 1, &s, &m) != 0)
			goto bad;
		if (strcmp(s, "room") != 0 && strcmp(s, "disk") != 0 &&
		    strcmp(s, "both") != 0) {
			xasprintf(msg, "edits[%zu]: take must be room (this "
			    "notebook's version), disk (the file's) or both",
			    i);
			return (-1);
		}
		if (!json_object_is_type(json_object_object_get(e,
		    "cell_id"), json_type_string)) {
			xasprintf(msg, "edits[%zu]: resolve names the cell by "
			    "its cell_id", i);
			return (-1);
		}
	}
	if (op == PROTO_EDIT_REPLACE) {
		if (worker_args_string(e, "old_text", 1, &s, &m) != 0 ||
		    worker_args_string(e, "new_text", 1, &s, &m) != 0)
			goto bad;
		if (json_object_get_string_len(json_object_object_get(e,
		    "old_text")) == 0) {
			xasprintf(msg, "edits[%zu]: old_text must not be "
			    "empty", i);
			return (-1);
		}
	}
	return (0);
bad:
	xasprintf(msg, "edits[%zu]: %s", i, m);
	free(m);
	return (-1);
}

/*
 * edit_conflict: the error names the cell, its version now and its
 * source (capped by the daemon), in the text too, so the edit can be
 * redone without another read.
 */
static void
tool_edit_cells_conflict(struct tool_edit_cells *st,
    const struct proto_error *em, const char *msg)
{
	struct json_object	*f;
	char			*tail;

	f = json_object_new_object();
	json_object_object_add(f, "cell_id", worker_reply_str(&em->cell_id));
	json_object_object_add(f, "version", worker_reply_str(&em->version));
	json_object_object_add(f, "source", worker_reply_str(&em->source));
	xasprintf(&tail, "cell %.*s v%.*s now:\n%.*s", (int)em->cell_id.len,
	    em->cell_id.ptr, (int)em->version.len, em->version.ptr,
	    (int)em->source.len, em->source.ptr);
	worker_call_error_fields(st->call, PROTO_E_EDIT_CONFLICT, msg, f, tail);
	free(tail);
}

static void
tool_edit_cells_finish(struct tool_edit_cells *st, struct json_object *run)
{
	struct json_object	*sc;
	char			*s;

	sc = json_object_new_object();
	json_object_object_add(sc, "cells", json_object_get(st->done));
	json_object_object_add(sc, "seq", json_object_new_int64(st->seq));
	json_object_object_add(sc, "cursor",
	    worker_output_cursor(st->room, st->seq));
	if (run != NULL)
		json_object_object_add(sc, "run", run);
	s = worker_output_take(st->text);
	st->text = NULL;
	worker_call_result(st->call, s, sc);
	free(s);
	tool_edit_cells_free(st);
}

static void
tool_edit_cells_ran(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct tool_edit_cells	*st = arg;
	struct json_object	*run, *err;
	struct worker_exec	*state = NULL;
	struct proto_exec_id	 gm;
	struct mpbuf		 b;
	char			*cause = NULL;

	if (code == NULL && (type != PROTO_MSG_EXEC_STATE ||
	    (state = worker_exec_read(reply, &cause)) == NULL)) {
		log_warnx("run after edit: %s", cause != NULL ? cause :
		    proto_msg_name(type));
		free(cause);
		code = PROTO_E_NOTEBOOK_UNAVAILABLE;
		msg = "unexpected reply from runtimed";
	}
	if (code != NULL) {
		/* The edits stand; say the run failed. */
		evbuffer_add_printf(st->text, "run failed: %s: %s\n", code,
		    msg);
		err = json_object_new_object();
		json_object_object_add(err, "code",
		    json_object_new_string(code));
		json_object_object_add(err, "message",
		    json_object_new_string(msg));
		run = json_object_new_object();
		json_object_object_add(run, "error", err);
		tool_edit_cells_finish(st, run);
		return;
	}
	if (!worker_output_terminal(state->status) && st->run == 1) {
		/* Give it the default short wait, like run_cells. */
		st->run = 2;
		gm.execution_id = proto_str_make(state->execution_id);
		gm.has_timeout_ms = 1;
		gm.timeout_ms = WORKER_RUN_DEFAULT_SECS * 1000;
		mpbuf_init(&b);
		proto_exec_id_pack(&b.pk, &gm);
		worker_room_request(st->room, PROTO_MSG_EXEC_GET, &b.sb,
		    tool_edit_cells_ran, st);
		mpbuf_free(&b);
		worker_exec_free(state);
		return;
	}
	run = worker_output_exec(state, &st->budget, st->text, st->call);
	worker_exec_free(state);
	tool_edit_cells_finish(st, run);
}

/*
 * The names the cell's source reads that no cell defines (the daemon's
 * lint, decision 072): a warning in text and in the result cell c; the
 * edit stands.
 */
static void
tool_edit_cells_undefined(struct tool_edit_cells *st,
    struct json_object *reply, struct json_object *c)
{
	struct json_object	*u, *v;
	size_t			 i, n;

	u = json_object_object_get(reply, "undefined");
	if (!json_object_is_type(u, json_type_array) ||
	    (n = json_object_array_length(u)) == 0)
		return;
	evbuffer_add(st->text, "  warning: reads ", 17);
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(u, i);
		evbuffer_add_printf(st->text, "%s%s", i > 0 ? ", " : "",
		    json_object_get_string(v));
	}
	evbuffer_add_printf(st->text, ", which no cell defines\n");
	json_object_object_add(c, "undefined", json_object_get(u));
}

static void
tool_edit_cells_edited(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct tool_edit_cells		*st = arg;
	struct proto_error		 em;
	struct proto_room_edit_reply	 m;
	struct json_object		*cells, *e, *c;
	struct proto_exec_run		 rm;
	struct mpbuf			 b;
	const char			*op, *id, *ct, *ver;
	enum proto_edit_op		 o;
	char				 err[256], *pfx;
	size_t				 i, n;

	if (code != NULL) {
		if (reply != NULL && type == PROTO_MSG_ERROR &&
		    proto_error_unpack(reply, &em, err, sizeof err) == 0 &&
		    em.has_index && em.index >= 0) {
			/* The daemon says "edit N: "; we say edits[N]. */
			n = (size_t)em.index;
			xasprintf(&pfx, "edit %zu: ", n);
			if (strncmp(msg, pfx, strlen(pfx)) == 0)
				msg += strlen(pfx);
			free(pfx);
			xasprintf(&pfx, "edits[%zu]: %s (no edit of the batch "
			    "was applied)", n, msg);
			if (em.cell_id.ptr != NULL)
				tool_edit_cells_conflict(st, &em, pfx);
			else
				worker_call_error(st->call, code, "%s", pfx);
			free(pfx);
			tool_edit_cells_free(st);
		} else
			tool_edit_cells_fail(st, code, msg);
		return;
	}
	if (type != PROTO_MSG_ROOM_EDIT_REPLY ||
	    proto_room_edit_reply_unpack(reply, &m, err, sizeof err) != 0) {
		tool_edit_cells_fail(st, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return;
	}
	st->seq = (int64_t)m.seq;
	cells = mpjson_unpack(m.cells.obj);
	n = json_object_array_length(st->edits);
	evbuffer_add_printf(st->text, "applied %zu edit%s:\n", n,
	    n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(st->edits, i);
		op = json_object_get_string(json_object_object_get(e, "op"));
		/* It passed tool_edit_cells_check_one. */
		if (proto_edit_op_find(op, strlen(op), &o) != 0)
			fatalx("%s: op %s passed the check", __func__, op);
		c = cells != NULL && json_object_is_type(cells,
		    json_type_array) ? json_object_array_get_idx(cells, i) :
		    NULL;
		id = json_object_get_string(json_object_object_get(c,
		    "cell_id"));
		ct = json_object_get_string(json_object_object_get(c,
		    "cell_type"));
		ver = json_object_get_string(json_object_object_get(c,
		    "version"));
		if (id == NULL)
			id = "";
		c = json_object_new_object();
		json_object_object_add(c, "cell_id",
		    json_object_new_string(id));
		json_object_object_add(c, "op", json_object_new_string(op));
		if (ver != NULL && o != PROTO_EDIT_DELETE)
			json_object_object_add(c, "version",
			    json_object_new_string(ver));
		json_object_array_add(st->done, c);
		if (ver != NULL && o != PROTO_EDIT_DELETE)
			evbuffer_add_printf(st->text, "%s %s v%s\n", op, id,
			    ver);
		else
			evbuffer_add_printf(st->text, "%s %s\n", op, id);
		if (o == PROTO_EDIT_INSERT || o == PROTO_EDIT_EDIT ||
		    o == PROTO_EDIT_REPLACE)
			tool_edit_cells_undefined(st, json_object_array_get_idx(
			    cells, i), c);

		/*
		 * What run reruns: code cells that were inserted or changed,
		 * by their type after the batch (none when a later edit of
		 * the batch deleted them).
		 */
		if (o != PROTO_EDIT_DELETE && *id != '\0' && ct != NULL &&
		    strcmp(ct, "code") == 0)
			json_object_array_add(st->run_ids,
			    json_object_new_string(id));
	}
	json_object_put(cells);
	if (!st->run || json_object_array_length(st->run_ids) == 0) {
		tool_edit_cells_finish(st, NULL);
		return;
	}
	memset(&rm, 0, sizeof rm);
	rm.cell_ids = worker_daemon_doc(st->run_ids);
	worker_client_who(&rm.who);
	mpbuf_init(&b);
	proto_exec_run_pack(&b.pk, &rm);
	worker_room_request(st->room, PROTO_MSG_EXEC_RUN, &b.sb,
	    tool_edit_cells_ran, st);
	mpbuf_free(&b);
}

/*
 * A checked edit as its codec's struct, borrowing from e: null is
 * absent, references go as given.
 */
static void
tool_edit_cells_read(struct json_object *e, struct proto_edit *m)
{
	static const struct {
		const char	*key;
		size_t		 off;
	} strs[] = {
		{ "cell_type", offsetof(struct proto_edit, cell_type) },
		{ "source", offsetof(struct proto_edit, source) },
		{ "expect_version",
		    offsetof(struct proto_edit, expect_version) },
		{ "old_text", offsetof(struct proto_edit, old_text) },
		{ "new_text", offsetof(struct proto_edit, new_text) },
		{ "take", offsetof(struct proto_edit, take) },
	};
	struct json_object	*v;
	struct proto_str	*ps;
	const char		*op;
	size_t			 i;

	memset(m, 0, sizeof *m);
	op = json_object_get_string(json_object_object_get(e, "op"));
	if (proto_edit_op_find(op, strlen(op), &m->op) != 0)
		fatalx("%s: op %s passed the check", __func__, op);
	if ((v = json_object_object_get(e, "cell_id")) != NULL)
		m->cell_id = worker_daemon_doc(v);
	if ((v = json_object_object_get(e, "after")) != NULL)
		m->after = worker_daemon_doc(v);
	if ((v = json_object_object_get(e, "metadata")) != NULL)
		m->metadata = worker_daemon_doc(v);
	for (i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		v = json_object_object_get(e, strs[i].key);
		if (!json_object_is_type(v, json_type_string))
			continue;
		ps = (struct proto_str *)((char *)m + strs[i].off);
		ps->ptr = json_object_get_string(v);
		ps->len = json_object_get_string_len(v);
	}
}

/* The edits as the caller gave them, checked, through their codec. */
static void
tool_edit_cells_send(struct tool_edit_cells *st)
{
	struct proto_room_edit	 m;
	struct proto_edit	*v;
	struct proto_edits	 l;
	struct mpbuf		 b;
	size_t			 i;

	l.n = json_object_array_length(st->edits);
	v = xcalloc(l.n, sizeof *v);
	for (i = 0; i < l.n; i++)
		tool_edit_cells_read(json_object_array_get_idx(st->edits, i),
		    &v[i]);
	l.v = v;
	memset(&m, 0, sizeof m);
	m.edits.pack = proto_edits_pack;
	m.edits.arg = &l;
	worker_client_edit_who(&m);
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &m);
	worker_room_request(st->room, PROTO_MSG_ROOM_EDIT, &b.sb,
	    tool_edit_cells_edited, st);
	mpbuf_free(&b);
	free(v);
}

static void
tool_edit_cells(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "edits", "run",
		"undo", NULL
	};
	struct json_object		*args, *edits;
	struct tool_edit_cells		*st;
	struct worker_handle		*h;
	char				*msg = NULL;
	size_t				 i, n;
	int				 run;

	args = worker_call_args(call);
	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_bool(args, "run", 0, &run, &msg) != 0)
		goto bad;
	if (json_object_object_get_ex(args, "undo", &edits)) {
		if (json_object_object_get_ex(args, "edits", NULL) || run) {
			xasprintf(&msg, "undo goes alone: no edits, no run");
			goto bad;
		}
		worker_undo(call, edits);
		return;
	}
	if (!json_object_object_get_ex(args, "edits", &edits) ||
	    !json_object_is_type(edits, json_type_array) ||
	    (n = json_object_array_length(edits)) == 0 ||
	    n > PROTO_EDIT_MAX_EDITS) {
		xasprintf(&msg, "edits must be a list of 1 to %d edits",
		    PROTO_EDIT_MAX_EDITS);
		goto bad;
	}
	for (i = 0; i < n; i++) {
		if (tool_edit_cells_check_one(json_object_array_get_idx(edits,
		    i), i, &msg) != 0)
			goto bad;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;

	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->room = worker_attach_room(h);
	worker_room_ref(st->room);
	st->edits = edits;
	st->run = run;
	st->done = json_object_new_array();
	st->run_ids = json_object_new_array();
	st->text = evbuffer_new();
	worker_budget_init(&st->budget, 0);
	tool_edit_cells_send(st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_edit_cells_entry = {
	.name = "edit_cells",
	.description = "Change cells in one all-or-nothing batch: insert "
	    "(after a cell, \"TOP\" or \"BOTTOM\"), edit (source, cell_type, "
	    "metadata merged), delete, replace (old_text, found once in the "
	    "cell, by new_text), resolve (a conflict with the file: take "
	    "room, disk or both). run:true runs the changed code cells. "
	    "undo (no edits): N reverts your last N batches, \"b7\" that "
	    "one, \"list\" lists them.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"edits\":{\"type\":\"array\",\"minItems\":1,"
	    "\"items\":{\"type\":\"object\","
	    "\"properties\":{\"op\":{\"type\":\"string\",\"enum\":[\"insert\","
	    "\"edit\",\"delete\",\"replace\",\"resolve\"]},"
	    "\"take\":{\"type\":\"string\",\"enum\":[\"room\",\"disk\","
	    "\"both\"]},"
	    "\"after\":{\"type\":[\"string\",\"integer\"]},"
	    "\"cell_id\":{\"type\":[\"string\",\"integer\"]},"
	    "\"cell_type\":{\"type\":\"string\",\"enum\":[\"code\","
	    "\"markdown\",\"raw\"]},\"source\":{\"type\":\"string\"},"
	    "\"metadata\":{\"type\":\"object\"},"
	    "\"old_text\":{\"type\":\"string\"},"
	    "\"new_text\":{\"type\":\"string\"},"
	    "\"expect_version\":{\"type\":\"string\","
	    "\"description\":\"refuse unless the cell is at it\"}},"
	    "\"required\":[\"op\"]}},"
	    "\"run\":{\"type\":\"boolean\"},"
	    "\"undo\":{\"type\":[\"integer\",\"string\"]}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"cells\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"cell_id\":{\"type\":\"string\"},"
	    "\"op\":{\"type\":\"string\"},"
	    "\"undefined\":{\"type\":\"array\"}}}},"
	    "\"seq\":{\"type\":\"integer\"},\"cursor\":{\"type\":\"string\"},"
	    "\"run\":{\"type\":\"object\"},\"target\":{\"type\":\"object\"},"
	    "\"batches\":{\"type\":\"array\"},"
	    "\"reverted\":{\"type\":\"array\"},"
	    "\"batch_id\":{\"type\":\"string\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 0,
	.handler = tool_edit_cells,
};
