/* SPDX-License-Identifier: ISC */
/*
 * tool-run-cells.c: queue an ordered run of cells and wait up to
 * wait_secs for it; the run goes on after the wait, get_results follows
 * it by execution_id.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct tool_run_cells {
	struct worker_call	*call;
	struct worker_room	*room;
	struct json_object	*refs;	/* caller's cell_ids or NULL */
	enum proto_run_select	 select;	/* all:true, stale:true */
	int			 stop_on_error;
	int			 wait_ms;
	int64_t			 start_ms;
	int			 waited;
	int			 task;	/* MCP task: answer at once */
	struct worker_progress	*progress;	/* with a progressToken */
};

static void	tool_run_cells_free(struct tool_run_cells *);
static void	tool_run_cells_state(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static int	tool_run_cells_none(struct tool_run_cells *,
		    const msgpack_object *);
static void	tool_run_cells_submit(struct tool_run_cells *);
static void	tool_run_cells(struct worker_call *);

static void
tool_run_cells_free(struct tool_run_cells *st)
{
	worker_progress_free(st->progress);
	worker_room_unref(st->room);
	free(st);
}

static void
tool_run_cells_state(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct tool_run_cells	*st = arg;
	struct worker_exec	*state;
	struct worker_budget	 budget;
	struct json_object	*sc;
	struct proto_exec_id	 gm;
	struct mpbuf		 b;
	struct evbuffer		*text;
	int64_t			 left;
	char			*s, *cause;

	if (code != NULL) {
		worker_call_error(st->call, code, "%s", msg);
		tool_run_cells_free(st);
		return;
	}
	if (type == PROTO_MSG_EXEC_STATE && tool_run_cells_none(st, reply)) {
		tool_run_cells_free(st);
		return;
	}
	if (st->task && type == PROTO_MSG_EXEC_STATE) {
		worker_task_created(st->call, st->room, reply);
		tool_run_cells_free(st);
		return;
	}
	if (type != PROTO_MSG_EXEC_STATE ||
	    (state = worker_exec_read(reply, &cause)) == NULL) {
		worker_call_error(st->call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		tool_run_cells_free(st);
		return;
	}
	worker_progress_exec(st->progress, state);
	left = st->wait_ms - (util_mono_ms() - st->start_ms);
	if (!st->waited && left > 0 && !worker_output_terminal(
	    state->status)) {
		st->waited = 1;
		gm.execution_id = proto_str_make(state->execution_id);
		gm.has_timeout_ms = 1;
		gm.timeout_ms = left;
		mpbuf_init(&b);
		proto_exec_id_pack(&b.pk, &gm);
		worker_room_request(st->room, PROTO_MSG_EXEC_GET, &b.sb,
		    tool_run_cells_state, st);
		mpbuf_free(&b);
		worker_exec_free(state);
		return;
	}
	/*
	 * Not done within the wait, for a client that declared the tasks
	 * extension: a task handle instead, asking for input included
	 * (decision 069).
	 */
	if (worker_call_ext_task(st->call) &&
	    (!worker_output_terminal(state->status) ||
	    strcmp(state->status, "input_required") == 0)) {
		worker_exec_free(state);
		worker_task_handle(st->call, st->room, reply);
		tool_run_cells_free(st);
		return;
	}
	text = evbuffer_new();
	worker_budget_init(&budget, 0);
	sc = worker_output_exec(state, &budget, text, st->call);
	worker_exec_free(state);
	s = worker_output_take(text);
	worker_call_result(st->call, s, sc);
	free(s);
	tool_run_cells_free(st);
}

/*
 * stale:true when no code cell was stale: the daemon queued nothing and
 * answered a run of no cells without an id.  Nothing to do is no error:
 * say so (1).
 */
static int
tool_run_cells_none(struct tool_run_cells *st, const msgpack_object *reply)
{
	struct proto_exec_state	 m;
	struct json_object	*sc;
	char			 err[256];

	if (st->select != PROTO_RUN_SELECT_STALE ||
	    proto_exec_state_unpack(reply, &m, err, sizeof err) != 0 ||
	    m.execution_id.len != 0)
		return (0);
	sc = json_object_new_object();
	json_object_object_add(sc, "status", json_object_new_string("done"));
	json_object_object_add(sc, "cells", json_object_new_array());
	worker_call_result(st->call, "no code cell is stale: nothing to run\n",
	    sc);
	return (1);
}

/*
 * Submit the caller's cell_ids, or have the daemon pick the code cells
 * (all:true) or the stale ones (stale:true), in notebook order as it
 * queues the run.
 */
static void
tool_run_cells_submit(struct tool_run_cells *st)
{
	struct json_object	*ids = NULL;
	struct proto_exec_run	 rm;
	struct mpbuf		 b;

	memset(&rm, 0, sizeof rm);
	rm.select = st->select;
	/* Ids and indexes alike: the daemon resolves them, once. */
	if (st->refs != NULL) {
		ids = json_object_get(st->refs);
		rm.cell_ids = worker_daemon_doc(ids);
	}
	rm.has_stop_on_error = 1;
	rm.stop_on_error = st->stop_on_error;
	/*
	 * The daemon holds the reply until the run ends or wait_secs pass;
	 * with progress asked for, it answers at once (the run's id and
	 * cells), and EXEC_GET waits the rest.
	 */
	rm.has_timeout_ms = 1;
	rm.timeout_ms = st->progress != NULL || st->task ? 0 : st->wait_ms;
	/* A task's run names its owner, so tasks/list finds it again. */
	if (st->task || worker_call_ext_task(st->call))
		rm.task_owner = proto_str_make(worker_task_owner());
	worker_client_who(&rm.who);
	st->start_ms = util_mono_ms();
	mpbuf_init(&b);
	proto_exec_run_pack(&b.pk, &rm);
	worker_room_request(st->room, PROTO_MSG_EXEC_RUN, &b.sb,
	    tool_run_cells_state, st);
	mpbuf_free(&b);
	json_object_put(ids);
}

static void
tool_run_cells(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "cell_ids", "all",
		"stale", "wait_secs", "stop_on_error", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct json_object		*refs, *ref;
	struct tool_run_cells		*st;
	struct worker_handle		*h;
	const char			*id;
	char				*msg = NULL, *m = NULL;
	size_t				 i, n;
	int				 all, stale, stop, wait_ms;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_bool(args, "all", 0, &all, &msg) != 0 ||
	    worker_args_bool(args, "stale", 0, &stale, &msg) != 0 ||
	    worker_args_bool(args, "stop_on_error", 1, &stop, &msg) != 0 ||
	    worker_args_secs(args, "wait_secs", WORKER_RUN_DEFAULT_SECS,
	    &wait_ms, &msg) != 0)
		goto bad;
	if (!json_object_object_get_ex(args, "cell_ids", &refs) ||
	    json_object_is_type(refs, json_type_null))
		refs = NULL;
	if ((refs != NULL) + (all != 0) + (stale != 0) != 1) {
		xasprintf(&msg, "give one of cell_ids (a list of cell_ids or "
		    "indexes), all:true or stale:true");
		goto bad;
	}
	if (refs != NULL) {
		if (!json_object_is_type(refs, json_type_array) ||
		    (n = json_object_array_length(refs)) == 0 ||
		    n > PROTO_RUN_MAX_CELLS) {
			xasprintf(&msg, "cell_ids must be a list of 1 to %d "
			    "cell references", PROTO_RUN_MAX_CELLS);
			goto bad;
		}
		for (i = 0; i < n; i++) {
			ref = json_object_array_get_idx(refs, i);
			if (json_object_is_type(ref, json_type_int))
				continue;
			if (!json_object_is_type(ref, json_type_string)) {
				xasprintf(&msg, "cell_ids[%zu] must be a "
				    "cell_id string or a zero-based index", i);
				goto bad;
			}
			if (worker_args_cellref(ref, NULL, &id, &m) != 0) {
				xasprintf(&msg, "cell_ids[%zu]: %s", i, m);
				free(m);
				goto bad;
			}
		}
	}
	/* A task answers at once; tasks/result is its wait. */
	if (worker_call_task(call))
		wait_ms = 0;
	if (wait_ms > 0 && worker_call_wait_acquire(call) != 0)
		return;
	if ((h = worker_call_target(call)) == NULL)
		return;

	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->room = worker_attach_room(h);
	worker_room_ref(st->room);
	st->refs = refs;
	st->select = all ? PROTO_RUN_SELECT_ALL : stale ?
	    PROTO_RUN_SELECT_STALE : PROTO_RUN_SELECT_IDS;
	st->stop_on_error = stop;
	st->wait_ms = wait_ms;
	st->task = worker_call_task(call);
	if (wait_ms > 0 && worker_call_has_progress(call))
		st->progress = worker_progress_create(call, st->room, wait_ms);
	tool_run_cells_submit(st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_run_cells_entry = {
	.name = "run_cells",
	.description = "Run cell_ids in order, all:true (every code cell) "
	    "or stale:true (stale ones); waits up to wait_secs (default 1), "
	    "returns the run so far and execution_id. Stops at an error "
	    "unless stop_on_error:false.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"cell_ids\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":256,"
	    "\"items\":{\"type\":[\"string\",\"integer\"]}},"
	    "\"all\":{\"type\":\"boolean\"},"
	    "\"stale\":{\"type\":\"boolean\"},"
	    "\"wait_secs\":{\"type\":\"number\",\"minimum\":0,\"maximum\":50},"
	    "\"stop_on_error\":{\"type\":\"boolean\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"status\":{\"type\":\"string\"},"
	    "\"cells\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"cell_id\":{\"type\":\"string\"},"
	    "\"status\":{\"type\":\"string\"},"
	    "\"execution_count\":{\"type\":[\"integer\",\"null\"]},"
	    "\"source\":{\"type\":\"string\"},"
	    "\"outputs\":{\"type\":\"array\"},"
	    "\"truncated\":{\"type\":\"boolean\"}}}},"
	    "\"truncated\":{\"type\":\"boolean\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.task_support = "optional",
	.handler = tool_run_cells,
};
