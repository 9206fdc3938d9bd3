/* SPDX-License-Identifier: ISC */
/*
 * tool-get-results.c: the state and outputs of one run by execution_id,
 * waiting up to timeout_secs for it to finish; without one, the runs the
 * notebook keeps, newest first, with who asked for each (EXEC_LIST).
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

struct tool_get_results {
	struct worker_call	*call;
	struct worker_room	*room;
	int			 full;
	size_t			 start_line, end_line;
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
static void	tool_get_results_listed(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	tool_get_results_list(struct worker_call *,
		    struct worker_handle *);
static void	tool_get_results(struct worker_call *);

/* One run of the list: "ID NAME VERSION (session S) WHEN STATUS N cells". */
static void
tool_get_results_line(struct evbuffer *text, struct json_object *run)
{
	struct json_object	*ids;
	const char		*name, *ver, *sess;
	char			 when[32];
	struct tm		 tm;
	time_t			 t;
	size_t			 i, n;

	name = jsonget_str(run, "client_name", NULL);
	ver = jsonget_str(run, "client_version", NULL);
	sess = jsonget_str(run, "session", NULL);
	t = (time_t)(json_object_get_int64(json_object_object_get(run,
	    "submitted_at")) / 1000000);
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	evbuffer_add_printf(text, "%s %s%s%s", jsonget_str(run,
	    "execution_id", "?"), name != NULL ? name : "(unknown client)",
	    ver != NULL ? " " : "", ver != NULL ? ver : "");
	if (sess != NULL)
		evbuffer_add_printf(text, " (session %s)", sess);
	n = (size_t)json_object_get_int64(json_object_object_get(run,
	    "ncells"));
	evbuffer_add_printf(text, " %s %s %zu cell%s:", when,
	    jsonget_str(run, "status", "?"), n, n == 1 ? "" : "s");
	ids = json_object_object_get(run, "cell_ids");
	for (i = 0; i < json_object_array_length(ids); i++)
		evbuffer_add_printf(text, "%s%s", i == 0 ? " " : ",",
		    json_object_get_string(json_object_array_get_idx(ids, i)));
	if (n > json_object_array_length(ids))
		evbuffer_add_printf(text, ",...");
	evbuffer_add(text, "\n", 1);
}

static void
tool_get_results_listed(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_call		*call = arg;
	struct proto_exec_runs		 m;
	struct json_object		*runs, *sc;
	struct evbuffer			*text;
	char				 err[256], *s;
	size_t				 i, n;

	if (code != NULL) {
		worker_call_error(call, code, "%s", msg);
		return;
	}
	if (type != PROTO_MSG_EXEC_LIST_REPLY ||
	    proto_exec_runs_unpack(reply, "EXEC_LIST_REPLY", &m, err,
	    sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return;
	}
	runs = mpjson_unpack(m.runs.obj);
	n = json_object_array_length(runs);
	text = evbuffer_new();
	if (n == 0)
		evbuffer_add_printf(text, "no runs kept for this notebook\n");
	else
		evbuffer_add_printf(text, "%zu run%s, newest first:\n", n,
		    n == 1 ? "" : "s");
	for (i = 0; i < n; i++)
		tool_get_results_line(text, json_object_array_get_idx(runs, i));
	sc = json_object_new_object();
	json_object_object_add(sc, "runs", runs);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

/* get_results without execution_id: the notebook's kept runs. */
static void
tool_get_results_list(struct worker_call *call, struct worker_handle *h)
{
	struct proto_exec_list	 m;
	struct mpbuf		 b;

	memset(&m, 0, sizeof m);
	mpbuf_init(&b);
	proto_exec_list_pack(&b.pk, &m);
	worker_room_request(worker_attach_room(h), PROTO_MSG_EXEC_LIST, &b.sb,
	    tool_get_results_listed, call);
	mpbuf_free(&b);
}

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
	/* A plain poll says what is new; the whole run is full_output. */
	budget.delta = !worker_call_structured(st->call);
	budget.start_line = st->start_line;
	budget.end_line = st->end_line;
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
	struct proto_exec_id	 m;
	struct mpbuf		 b;

	m.execution_id = proto_str_make(id);
	m.has_timeout_ms = 1;
	m.timeout_ms = ms;
	mpbuf_init(&b);
	proto_exec_id_pack(&b.pk, &m);
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
			worker_call_error(st->call,
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "unexpected reply from runtimed");
		tool_get_results_free(st);
		return;
	}
	/* A cancelled wait answers nothing; the run goes on. */
	if (worker_call_cancelled(st->call)) {
		worker_call_error(st->call, PROTO_E_BUSY, "cancelled");
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
		"timeout_secs", "full_output", "start_line", "end_line", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct tool_get_results		*st;
	struct worker_handle		*h;
	const char			*id;
	char				*msg = NULL;
	int				 timeout_ms, full, sl, el;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "execution_id", 0, &id, &msg) != 0 ||
	    worker_args_secs(args, "timeout_secs", 0, &timeout_ms,
	    &msg) != 0 ||
	    worker_args_bool(args, "full_output", 0, &full, &msg) != 0 ||
	    worker_args_uint(args, "start_line", 0, 1, INT32_MAX, &sl,
	    &msg) != 0 ||
	    worker_args_uint(args, "end_line", 0, 1, INT32_MAX, &el,
	    &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if ((sl != 0 || el != 0) && !full) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "start_line and end_line read a range of a run's full "
		    "output: give full_output:true with them");
		return;
	}
	if (el != 0 && el < (sl != 0 ? sl : 1)) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "end_line must not be before start_line");
		return;
	}
	if (el != 0 && sl == 0)
		sl = 1;
	if (id == NULL && (json_object_object_get(args, "timeout_secs") !=
	    NULL || json_object_object_get(args, "full_output") != NULL)) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "timeout_secs and full_output are about one run: give its "
		    "execution_id");
		return;
	}
	if (id == NULL) {
		if ((h = worker_call_target(call)) != NULL)
			tool_get_results_list(call, h);
		return;
	}
	if (*id == '\0') {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
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
	st->start_line = (size_t)sl;
	st->end_line = (size_t)el;
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
	.description = "Follow a run by execution_id, waiting up to "
	    "timeout_secs (default 0) for it to end: its status and what is "
	    "new since your last read; full_output:true gives all. Without "
	    "execution_id: the kept runs and who ran each.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"timeout_secs\":{\"type\":\"number\",\"minimum\":0,"
	    "\"maximum\":50},"
	    "\"full_output\":{\"type\":\"boolean\"},"
	    "\"start_line\":{\"type\":\"integer\",\"minimum\":1},"
	    "\"end_line\":{\"type\":\"integer\",\"minimum\":1}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"execution_id\":{\"type\":\"string\"},"
	    "\"status\":{\"type\":\"string\"},"
	    "\"cells\":{\"type\":\"array\"},"
	    "\"truncated\":{\"type\":\"boolean\"},"
	    "\"runs\":{\"type\":\"array\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_get_results,
};
