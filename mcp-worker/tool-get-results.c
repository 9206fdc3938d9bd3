/* SPDX-License-Identifier: ISC */
/*
 * tool-get-results.c: the state and outputs of one run by execution_id,
 * waiting up to timeout_secs for it to finish.
 */

#include <stdlib.h>

#include "worker.h"

struct tool_get_results {
	struct worker_call	*call;
	struct worker_room	*room;
	int			 full;
	struct worker_exec	*state;
	int			 wait_ms;
	int64_t			 start_ms;
	struct worker_progress	*progress;	/* with a progressToken */
};

static void	tool_get_results_free(struct tool_get_results *);

static void	tool_get_results_shape(void *);
static void	tool_get_results_ask(struct tool_get_results *, const char *,
		    int);
static void	tool_get_results_state(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	tool_get_results(struct worker_call *);

static void
tool_get_results_shape(void *arg)
{
	struct tool_get_results	*st = arg;
	struct worker_budget	 budget;
	struct json_object	*sc;
	struct evbuffer		*text;
	char			*s;

	text = evbuffer_new();
	worker_budget_init(&budget, st->full);
	sc = worker_output_exec(st->state, &budget, text, st->call);
	s = worker_output_take(text);
	worker_call_result(st->call, s, sc);
	free(s);
	tool_get_results_free(st);
}

static void
tool_get_results_free(struct tool_get_results *st)
{
	worker_exec_free(st->state);
	worker_progress_free(st->progress);
	worker_room_unref(st->room);
	free(st);
}

/* Ask for the run, waiting ms for it to end. */
static void
tool_get_results_ask(struct tool_get_results *st, const char *id, int ms)
{
	struct proto_exec_get	 m;
	struct mpbuf		 b;

	m.execution_id = proto_str_make(id);
	m.has_timeout_ms = 1;
	m.timeout_ms = ms;
	mpbuf_init(&b);
	proto_exec_get_pack(&b.pk, &m);
	worker_room_request(st->room, PROTO_MSG_EXEC_GET, &b.sb,
	    tool_get_results_state, st);
	mpbuf_free(&b);
}

static void
tool_get_results_state(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct tool_get_results	*st = arg;
	char			*cause = NULL, *id;
	int64_t			 left;

	if (code == NULL && type == PROTO_MSG_EXEC_STATE &&
	    (st->state = worker_exec_read(reply, &cause)) == NULL) {
		log_warnx("%s", cause);
		free(cause);
		type = 0;
	}
	if (code != NULL || type != PROTO_MSG_EXEC_STATE) {
		if (code != NULL)
			worker_call_error(st->call, code, "%s", msg);
		else
			worker_call_error(st->call, "notebook_unavailable",
			    "unexpected reply from runtimed");
		tool_get_results_free(st);
		return;
	}
	/* A cancelled wait answers nothing; the run goes on. */
	if (worker_call_cancelled(st->call)) {
		worker_call_error(st->call, "busy", "cancelled");
		tool_get_results_free(st);
		return;
	}
	/* With progress, the first look was at once: now wait the rest. */
	if (st->progress != NULL && st->start_ms != 0) {
		worker_progress_exec(st->progress, st->state);
		left = st->wait_ms - (util_mono_ms() - st->start_ms);
		st->start_ms = 0;
		if (left > 0 && !worker_output_terminal(st->state->status)) {
			id = xstrdup(st->state->execution_id);
			worker_exec_free(st->state);
			st->state = NULL;
			tool_get_results_ask(st, id, (int)left);
			free(id);
			return;
		}
	}
	if (st->full)
		worker_blob_resolve(st->room, st->state->cells,
		    tool_get_results_shape, st);
	else	/* A large plot is a blob: the model sees it downscaled. */
		worker_blob_resolve_images(st->room, st->state->cells,
		    tool_get_results_shape, st);
}

static void
tool_get_results(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "execution_id",
		"timeout_secs", "full_output", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct tool_get_results		*st;
	struct worker_handle		*h;
	const char			*id;
	char				*msg = NULL;
	int				 timeout_ms, full;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "execution_id", 1, &id, &msg) != 0 ||
	    worker_args_secs(args, "timeout_secs", 0, &timeout_ms,
	    &msg) != 0 ||
	    worker_args_bool(args, "full_output", 0, &full, &msg) != 0) {
		worker_call_error(call, "invalid_argument", "%s", msg);
		free(msg);
		return;
	}
	if (*id == '\0') {
		worker_call_error(call, "invalid_argument",
		    "execution_id must not be empty");
		return;
	}
	if (timeout_ms > 0 && worker_call_wait_acquire(call) != 0)
		return;
	if ((h = worker_call_target(call)) == NULL)
		return;
	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->room = worker_attach_room(h);
	worker_room_ref(st->room);
	st->full = full;
	st->wait_ms = timeout_ms;
	if (timeout_ms > 0 && worker_call_has_progress(call)) {
		/* Look at once, to say which cell runs; then wait. */
		st->progress = worker_progress_create(call, st->room,
		    timeout_ms);
		st->start_ms = util_mono_ms();
		tool_get_results_ask(st, id, 0);
		return;
	}
	tool_get_results_ask(st, id, timeout_ms);
}

const struct tool_entry tool_get_results_entry = {
	.name = "get_results",
	.description = "Follow a run by execution_id: its status and outputs, "
	    "waiting up to timeout_secs (default 0) for it to end; shows the "
	    "source as it ran. full_output:true lifts the inline caps.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"timeout_secs\":{\"type\":\"number\",\"minimum\":0,"
	    "\"maximum\":50},"
	    "\"full_output\":{\"type\":\"boolean\"}},"
	    "\"required\":[\"execution_id\"],\"additionalProperties\":false}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"status\":{\"type\":\"string\"},"
	    "\"cells\":{\"type\":\"array\"},"
	    "\"truncated\":{\"type\":\"boolean\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_get_results,
};
