/* SPDX-License-Identifier: ISC */
/*
 * worker-task.c: run_cells as an MCP task (protocol 2025-11-25, the
 * experimental tasks utility; docs/decisions/024-runs-as-tasks.md), and
 * as the tasks extension of 2026-07-28 (SEP-2663, decision 069): there
 * run_cells answers a task handle when its wait ends before the run,
 * tasks/get carries the final result or the input asked for, tasks/update
 * answers that input (EXEC_INPUT, as send_input does) and tasks/cancel is
 * an acknowledgement; no tasks/list, tasks/result or notifications.
 *
 * A task is one tracked run, and its id names the run's notebook and
 * execution_id ("rtk_<notebook_id>_<execution_id>"), so any worker finds
 * it again: the daemon's durable record is the task's only state.  A
 * task-augmented run_cells answers with a CreateTaskResult at once;
 * tasks/get reads the record, tasks/result waits on it and shapes it as
 * run_cells does, tasks/cancel sends EXEC_CANCEL (that run only), and
 * tasks/list asks the daemon for the runs this session submitted
 * (EXEC_TASKS, by the session tag every worker of one proxy shares).
 * While this worker knows of a task that has not ended, a watch waits
 * on its record and sends notifications/tasks/status when it changes.
 */

#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

#define WORKER_TASK_PREFIX	"rtk_"
#define WORKER_TASK_RETRY_MS	250	/* rejoin after a lost daemon */
#define WORKER_TASK_RETRIES	160	/* ... for 40 s */
#define WORKER_TASK_RELATED	"io.modelcontextprotocol/related-task"

enum worker_task_kind {
	WORKER_TASK_GET,
	WORKER_TASK_RESULT,
	WORKER_TASK_CANCEL,
	WORKER_TASK_WATCH,
	WORKER_TASK_UPDATE,	/* tasks/update: the record first */
	WORKER_TASK_ANSWER,	/* ... then EXEC_INPUT */
	WORKER_TASK_DECLINE,	/* ... or EXEC_CANCEL: input declined */
};

struct worker_task_op;
TAILQ_HEAD(worker_task_ops, worker_task_op);

struct worker_task {
	char			*id;
	char			*notebook_id;
	char			*execution_id;
	struct worker_room	*room;		/* held while here */
	int			 joining;
	int			 watching;
	int			 retries;
	struct event		*retry_ev;
	char			*told;		/* status last seen */
	struct worker_task_ops	 pending;	/* wait for the room */
	struct worker_task_ops	 waiters;	/* tasks/result */
	int			 refs;
	LIST_ENTRY(worker_task)	 entry;
};
static LIST_HEAD(, worker_task) worker_tasks =
    LIST_HEAD_INITIALIZER(worker_tasks);

struct worker_task_op {
	enum worker_task_kind	 kind;
	struct json_object	*id;		/* NULL: a watch */
	struct worker_task	*task;
	int			 ext;		/* SEP-2663 shapes */
	int			 structured;	/* decision 043 */
	struct json_object	*responses;	/* tasks/update's */
	char			*value;		/* the answer, len bytes */
	size_t			 len;
	TAILQ_ENTRY(worker_task_op) entry;
};

/* A tasks/list waiting for EXEC_TASKS_REPLY. */
struct worker_task_list {
	struct json_object	*id;
	u_int			 offset;
};

static struct worker_task *worker_task_find(const char *);
static void	worker_task_unref(struct worker_task *);
static struct worker_task_op *worker_task_op_create(struct worker_task *,
		    enum worker_task_kind, struct json_object *);
static void	worker_task_op_free(struct worker_task_op *);
static void	worker_task_run(struct worker_task_op *);
static void	worker_task_join(struct worker_task *);
static void	worker_task_joined(void *, struct worker_room *,
		    struct worker_nb *, const char *, const char *);
static void	worker_task_flush(struct worker_task *, const char *,
		    const char *);
static void	worker_task_retry(struct worker_task *,
		    struct worker_task_op *);
static void	worker_task_retry_cb(evutil_socket_t, short, void *);
static void	worker_task_send(struct worker_task_op *);
static void	worker_task_reply(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_task_fail(struct worker_task_op *, const char *,
		    const char *);
static void	worker_task_watch(struct worker_task *);
static void	worker_task_state(struct worker_task_op *,
		    const msgpack_object *, const struct proto_exec_state *);
static void	worker_task_shape(struct worker_task_op *,
		    struct json_object *, const msgpack_object *);
static struct json_object *worker_task_wrap(void *, struct json_object *);
static struct json_object *worker_task_inputs(
		    const struct proto_exec_state *);
static char	*worker_task_input_key(const msgpack_object *);
static void	worker_task_update(struct worker_task_op *,
		    const struct proto_exec_state *);
static void	worker_task_ack(struct worker_task_op *);
static int	worker_task_acts(enum worker_task_kind);
static void	worker_task_refuse(struct json_object *, const char *, ...)
		    printflike(2, 3);
static const char *worker_task_status(const char *);
static int	worker_task_ended(const char *);
static void	worker_task_time(int64_t, char [32]);
static struct json_object *worker_task_object(const char *, const char *,
		    const char *, int64_t, int64_t, struct json_object *, int);
static struct json_object *worker_task_json(const char *,
		    const struct proto_exec_state *, int);
static void	worker_task_notify(struct json_object *);
static char	*worker_task_id_of(struct worker_call *, struct worker_room *,
		    const msgpack_object *, struct proto_exec_state *, char **);
static void	worker_task_listed(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_task_list(struct json_object *, struct json_object *);
static char	*worker_task_make_id(const char *, const char *);

/* capabilities.tasks of initialize. */
struct json_object *
worker_task_capability(void)
{
	struct json_object	*t, *req, *tools;

	t = json_object_new_object();
	json_object_object_add(t, "list", json_object_new_object());
	json_object_object_add(t, "cancel", json_object_new_object());
	tools = json_object_new_object();
	json_object_object_add(tools, "call", json_object_new_object());
	req = json_object_new_object();
	json_object_object_add(req, "tools", tools);
	json_object_object_add(t, "requests", req);
	return (t);
}

/*
 * The session the runs of our tasks are recorded under: the tag every
 * worker of one proxy shares (a worker on stdio has its own), so a
 * restarted worker lists what its predecessor started.
 */
const char *
worker_task_owner(void)
{
	static char	owner[16];

	snprintf(owner, sizeof owner, "mcp-%08x",
	    (u_int)worker_attach_tag());
	return (owner);
}

/* Caller frees. */
static char *
worker_task_make_id(const char *notebook_id, const char *execution_id)
{
	char	*id;

	xasprintf(&id, "%s%s_%s", WORKER_TASK_PREFIX, notebook_id,
	    execution_id);
	return (id);
}

/* The task of an id this worker knows, or one made from a well-formed
 * id (no reference taken); NULL if the id cannot be ours. */
static struct worker_task *
worker_task_find(const char *id)
{
	struct worker_task	*t;
	const char		*nb, *sep;
	size_t			 i, plen = strlen(WORKER_TASK_PREFIX);

	LIST_FOREACH(t, &worker_tasks, entry) {
		if (strcmp(t->id, id) == 0)
			return (t);
	}
	if (strncmp(id, WORKER_TASK_PREFIX, plen) != 0)
		return (NULL);
	nb = id + plen;
	if ((sep = strchr(nb, '_')) == NULL || sep == nb || sep[1] == '\0' ||
	    strlen(id) > 200)
		return (NULL);
	for (i = plen; id[i] != '\0'; i++) {
		if (id[i] != '-' && id[i] != '_' && !(id[i] >= '0' &&
		    id[i] <= '9') && !(id[i] >= 'a' && id[i] <= 'f'))
			return (NULL);
	}
	if (strchr(sep + 1, '_') != NULL)
		return (NULL);
	t = xcalloc(1, sizeof *t);
	t->id = xstrdup(id);
	t->notebook_id = xstrndup(nb, (size_t)(sep - nb));
	t->execution_id = xstrdup(sep + 1);
	TAILQ_INIT(&t->pending);
	TAILQ_INIT(&t->waiters);
	LIST_INSERT_HEAD(&worker_tasks, t, entry);
	return (t);
}

static void
worker_task_unref(struct worker_task *t)
{
	if (--t->refs > 0)
		return;
	LIST_REMOVE(t, entry);
	if (t->retry_ev != NULL)
		event_free(t->retry_ev);
	worker_room_unref(t->room);
	free(t->told);
	free(t->id);
	free(t->notebook_id);
	free(t->execution_id);
	free(t);
}

static struct worker_task_op *
worker_task_op_create(struct worker_task *t, enum worker_task_kind kind,
    struct json_object *id)
{
	struct worker_task_op	*op;

	op = xcalloc(1, sizeof *op);
	op->kind = kind;
	op->id = json_object_get(id);
	op->task = t;
	t->refs++;
	return (op);
}

static void
worker_task_op_free(struct worker_task_op *op)
{
	struct worker_task	*t = op->task;

	if (op->kind == WORKER_TASK_WATCH)
		t->watching = 0;
	json_object_put(op->id);
	json_object_put(op->responses);
	if (op->value != NULL) {
		explicit_bzero(op->value, op->len);	/* may be a password */
		free(op->value);
	}
	free(op);
	worker_task_unref(t);
}

/* Send op once the task's room is joined. */
static void
worker_task_run(struct worker_task_op *op)
{
	struct worker_task	*t = op->task;

	if (t->room != NULL && worker_room_alive(t->room)) {
		worker_task_send(op);
		return;
	}
	TAILQ_INSERT_TAIL(&t->pending, op, entry);
	worker_task_join(t);
}

/*
 * The room of the task's notebook: one this worker has joined, or
 * ROOM_OPEN by notebook_id (a restarted worker, or a restarted daemon
 * that loads the room again from its store or file).
 */
static void
worker_task_join(struct worker_task *t)
{
	struct proto_room_open	 m;
	struct worker_room	*room;
	struct mpbuf		 b;

	if (t->joining || (t->retry_ev != NULL &&
	    evtimer_pending(t->retry_ev, NULL)))
		return;
	if (t->room != NULL) {
		worker_room_unref(t->room);
		t->room = NULL;
	}
	if ((room = worker_room_find_id(t->notebook_id)) != NULL) {
		worker_room_ref(room);
		t->room = room;
		worker_task_flush(t, NULL, NULL);
		return;
	}
	t->joining = 1;
	t->refs++;
	memset(&m, 0, sizeof m);
	m.notebook_id = proto_str_make(t->notebook_id);
	mpbuf_init(&b);
	proto_room_open_pack(&b.pk, &m);
	worker_room_join(PROTO_MSG_ROOM_OPEN, &b.sb, worker_task_joined, t);
	mpbuf_free(&b);
}

static void
worker_task_joined(void *arg, struct worker_room *room, struct worker_nb *nb,
    const char *code, const char *msg)
{
	struct worker_task	*t = arg;

	t->joining = 0;
	if (code == NULL) {
		worker_room_ref(room);
		t->room = room;
		t->retries = 0;
	}
	worker_task_flush(t, code, msg);
	worker_task_unref(t);
}

/* The room is there (code NULL) or could not be joined: go on. */
static void
worker_task_flush(struct worker_task *t, const char *code, const char *msg)
{
	struct worker_task_ops	 ops;
	struct worker_task_op	*op;

	TAILQ_INIT(&ops);
	TAILQ_CONCAT(&ops, &t->pending, entry);
	while ((op = TAILQ_FIRST(&ops)) != NULL) {
		TAILQ_REMOVE(&ops, op, entry);
		if (code == NULL)
			worker_task_send(op);
		else if (op->kind == WORKER_TASK_WATCH ||
		    op->kind == WORKER_TASK_RESULT)
			worker_task_retry(t, op);	/* waits: try on */
		else if (!worker_task_acts(op->kind) &&
		    msg != NULL && strcmp(msg, WORKER_DAEMON_LOST) == 0)
			worker_task_retry(t, op);	/* a daemon restarting */
		else
			worker_task_fail(op, code, msg);
	}
}

/* The daemon went away under a wait: join again shortly, a bounded
 * number of times (a restarted daemon loads the room again). */
static void
worker_task_retry(struct worker_task *t, struct worker_task_op *op)
{
	struct timeval	tv = { 0, WORKER_TASK_RETRY_MS * 1000 };

	if (t->room != NULL) {
		worker_room_unref(t->room);
		t->room = NULL;
	}
	if (++t->retries > WORKER_TASK_RETRIES) {
		worker_task_fail(op, "daemon_unreachable", "runtimed has "
		    "not answered for 40 s; ask again with tasks/get");
		return;
	}
	TAILQ_INSERT_TAIL(&t->pending, op, entry);
	if (t->retry_ev == NULL)
		t->retry_ev = evtimer_new(worker_rpc_base(),
		    worker_task_retry_cb, t);
	if (!evtimer_pending(t->retry_ev, NULL))
		evtimer_add(t->retry_ev, &tv);
}

static void
worker_task_retry_cb(evutil_socket_t fd, short events, void *arg)
{
	worker_task_join(arg);
}

static void
worker_task_send(struct worker_task_op *op)
{
	struct worker_task	*t = op->task;
	struct proto_exec_id	 gm;
	struct proto_exec_id	 cm;
	struct proto_exec_input	 im;
	struct mpbuf		 b;

	mpbuf_init(&b);
	if (op->kind == WORKER_TASK_ANSWER) {
		memset(&im, 0, sizeof im);
		im.execution_id = proto_str_make(t->execution_id);
		im.value.ptr = op->value;
		im.value.len = op->len;
		proto_exec_input_pack(&b.pk, &im);
		worker_room_request(t->room, PROTO_MSG_EXEC_INPUT, &b.sb,
		    worker_task_reply, op);
	} else if (op->kind == WORKER_TASK_CANCEL ||
	    op->kind == WORKER_TASK_DECLINE) {
		memset(&cm, 0, sizeof cm);
		cm.execution_id = proto_str_make(t->execution_id);
		proto_exec_id_pack(&b.pk, &cm);
		worker_room_request(t->room, PROTO_MSG_EXEC_CANCEL, &b.sb,
		    worker_task_reply, op);
	} else {
		memset(&gm, 0, sizeof gm);
		gm.execution_id = proto_str_make(t->execution_id);
		gm.has_timeout_ms = 1;
		gm.timeout_ms = op->kind == WORKER_TASK_WATCH ?
		    PROTO_WAIT_MAX_MS : 0;
		proto_exec_id_pack(&b.pk, &gm);
		worker_room_request(t->room, PROTO_MSG_EXEC_GET, &b.sb,
		    worker_task_reply, op);
	}
	mpbuf_free(&b);
}

/* A request of op failed: the JSON-RPC error the spec gives it. */
static void
worker_task_fail(struct worker_task_op *op, const char *code,
    const char *msg)
{
	char	*text;
	int	 rc = -32603;

	if (op->id == NULL) {
		worker_task_op_free(op);
		return;
	}
	/*
	 * SEP-2663: cancellation and input are acknowledged, not refused,
	 * when the run has already ended or the question was answered.
	 */
	if (op->ext && (((op->kind == WORKER_TASK_CANCEL ||
	    op->kind == WORKER_TASK_DECLINE) &&
	    strcmp(code, PROTO_E_INVALID_ARGUMENT) == 0) ||
	    (op->kind == WORKER_TASK_ANSWER &&
	    strcmp(code, PROTO_E_INPUT_NOT_PENDING) == 0))) {
		worker_task_ack(op);
		return;
	}
	if (strcmp(code, PROTO_E_EXECUTION_NOT_FOUND) == 0) {
		rc = -32602;
		xasprintf(&text, "Failed to retrieve task: Task not found "
		    "(%s)", msg);
	} else if (op->kind == WORKER_TASK_CANCEL &&
	    strcmp(code, PROTO_E_INVALID_ARGUMENT) == 0) {
		rc = -32602;
		xasprintf(&text, "Cannot cancel task: already in terminal "
		    "status (%s)", msg);
	} else if (strcmp(code, PROTO_E_NOTEBOOK_UNAVAILABLE) == 0 &&
	    op->task->room == NULL) {
		rc = -32602;
		xasprintf(&text, "Failed to retrieve task: its notebook %s "
		    "cannot be opened: %s", op->task->notebook_id, msg);
	} else
		xasprintf(&text, "%s: %s", code, msg);
	worker_rpc_fail(op->id, rc, text);
	free(text);
	worker_task_op_free(op);
}

static void
worker_task_reply(void *arg, uint16_t type, const msgpack_object *body,
    const char *code, const char *msg)
{
	struct worker_task_op	*op = arg;
	struct worker_task	*t = op->task;
	struct proto_exec_state	 m;
	char			 err[256];

	if (code != NULL) {
		if (!worker_task_acts(op->kind) && (t->room == NULL ||
		    !worker_room_alive(t->room) ||
		    strcmp(code, PROTO_E_NOTEBOOK_UNAVAILABLE) == 0)) {
			/* Lost the daemon: a read is asked again. */
			worker_task_retry(t, op);
			return;
		}
		worker_task_fail(op, code, msg);
		return;
	}
	if (op->kind == WORKER_TASK_ANSWER && type == PROTO_MSG_OK) {
		worker_task_ack(op);	/* the run goes on */
		return;
	}
	if (type != PROTO_MSG_EXEC_STATE ||
	    proto_exec_state_unpack(body, &m, err, sizeof err) != 0) {
		worker_task_fail(op, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return;
	}
	/* Another session's run, or no task at all, is not found here. */
	if (m.task_owner.ptr == NULL ||
	    m.task_owner.len != strlen(worker_task_owner()) ||
	    memcmp(m.task_owner.ptr, worker_task_owner(),
	    m.task_owner.len) != 0) {
		worker_task_fail(op, PROTO_E_EXECUTION_NOT_FOUND,
		    "not a task of this session");
		return;
	}
	t->retries = 0;
	worker_task_state(op, body, &m);
}

/* Answer op with the run's record in body (m, as its codec read it). */
static void
worker_task_state(struct worker_task_op *op, const msgpack_object *body,
    const struct proto_exec_state *m)
{
	struct worker_task	*t = op->task;
	struct worker_task_op	*w;
	struct json_object	*task;
	const char		*ts;
	char			*run;

	run = proto_str_dup(&m->status);
	ts = worker_task_status(run);
	/* Tell a change this worker saw happen (not the first look); the
	 * extension's clients asked for no notifications. */
	if (!op->ext) {
		if (t->told != NULL && strcmp(t->told, ts) != 0)
			worker_task_notify(worker_task_json(t->id, m, 0));
		free(t->told);
		t->told = xstrdup(ts);
	}

	switch (op->kind) {
	case WORKER_TASK_GET:
		if (op->ext) {
			/* The final result inside the Task, else where
			 * it is (the input it asks for included). */
			task = worker_task_json(t->id, m, 1);
			if (strcmp(ts, "completed") == 0) {
				worker_task_shape(op, task, body);
				break;
			}
			worker_rpc_stateless_result(task);
			worker_rpc_result(op->id, task);
			break;
		}
		worker_rpc_result(op->id, worker_task_json(t->id, m, 0));
		if (!worker_task_ended(ts))
			worker_task_watch(t);
		break;
	case WORKER_TASK_RESULT:
		if (!worker_task_ended(ts)) {
			/* tasks/result blocks until the run ends. */
			TAILQ_INSERT_TAIL(&t->waiters, op, entry);
			worker_task_watch(t);
			free(run);
			return;
		}
		worker_task_shape(op, NULL, body);
		break;
	case WORKER_TASK_UPDATE:
		worker_task_update(op, m);
		free(run);
		return;
	case WORKER_TASK_ANSWER:
	case WORKER_TASK_DECLINE:
		worker_task_ack(op);	/* declined: the run is cancelled */
		free(run);
		return;
	case WORKER_TASK_CANCEL:
		if (op->ext) {
			/* Cooperative: tasks/get tells how it ended. */
			worker_task_ack(op);
			free(run);
			return;
		}
		if (strcmp(ts, "cancelled") != 0) {
			worker_rpc_fail(op->id, -32603, "the kernel was asked "
			    "to stop the run and has not yet; tasks/get tells "
			    "when it has (interrupt_kernel or restart_kernel "
			    "stop it for certain)");
			break;
		}
		task = worker_task_json(t->id, m, 0);
		worker_rpc_result(op->id, task);
		break;
	case WORKER_TASK_WATCH:
		if (!worker_task_ended(ts)) {
			worker_task_send(op);	/* wait on */
			free(run);
			return;
		}
		while ((w = TAILQ_FIRST(&t->waiters)) != NULL) {
			TAILQ_REMOVE(&t->waiters, w, entry);
			worker_task_shape(w, NULL, body);
			worker_task_op_free(w);
		}
		break;
	}
	free(run);
	worker_task_op_free(op);
}

/* Watch a task that has not ended, once. */
static void
worker_task_watch(struct worker_task *t)
{
	if (t->watching)
		return;
	t->watching = 1;
	worker_task_run(worker_task_op_create(t, WORKER_TASK_WATCH, NULL));
}

/*
 * tasks/result: exactly what run_cells would have answered for this
 * state (worker-output.c's shapes and caps), with the related-task _meta;
 * for the extension, that result inside task (taken), tasks/get's answer.
 */
static void
worker_task_shape(struct worker_task_op *op, struct json_object *task,
    const msgpack_object *body)
{
	const struct tool_entry	*te;
	struct worker_exec	*state;
	struct worker_budget	 budget;
	struct worker_call	*call;
	struct json_object	*args, *sc, *meta, *rel;
	struct evbuffer		*text;
	char			*s, *cause;

	if ((state = worker_exec_read(body, &cause)) == NULL) {
		worker_rpc_fail(op->id, -32603, cause);
		free(cause);
		json_object_put(task);
		return;
	}
	te = worker_tool_find("run_cells");
	args = json_object_new_object();
	call = worker_call_create(op->id, te, args, NULL);
	json_object_put(args);
	if (task != NULL) {
		if (op->structured)
			worker_call_set_structured(call);
		worker_call_set_wrap(call, worker_task_wrap, task);
	} else {
		rel = json_object_new_object();
		json_object_object_add(rel, "taskId",
		    json_object_new_string(op->task->id));
		meta = json_object_new_object();
		json_object_object_add(meta, WORKER_TASK_RELATED, rel);
		worker_call_set_meta(call, meta);
	}
	text = evbuffer_new();
	worker_budget_init(&budget, 0);
	sc = worker_output_exec(state, &budget, text, call);
	worker_exec_free(state);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

/* A completed task's tasks/get: the Task (arg) with its result. */
static struct json_object *
worker_task_wrap(void *arg, struct json_object *res)
{
	struct json_object	*task = arg;

	json_object_object_add(task, "result", res);
	worker_rpc_stateless_result(task);
	return (task);
}

/*
 * The name of a question in inputRequests: unique over the task's life
 * (SEP-2663), so from when the daemon was asked.  Caller frees.
 */
static char *
worker_task_input_key(const msgpack_object *input)
{
	const char	*cid;
	char		*key;
	size_t		 len;
	int64_t		 at;

	if (proto_get_int(input, "asked_at", &at) == 0 && at > 0)
		xasprintf(&key, "stdin-%lld", (long long)at);
	else if ((cid = proto_get_str(input, "cell_id", &len)) != NULL)
		xasprintf(&key, "stdin-%.*s", (int)len, cid);
	else
		key = xstrdup("stdin");
	return (key);
}

/*
 * inputRequests of a run asking for input: one form elicitation whose
 * answer (content.input) is what the cell's input() or getpass() reads.
 */
static struct json_object *
worker_task_inputs(const struct proto_exec_state *m)
{
	const msgpack_object	*in;
	struct json_object	*reqs, *req, *p, *schema, *props, *str, *a;
	const char		*cid, *prompt;
	char			*key, *msg;
	size_t			 clen = 0, plen = 0;
	int			 password = 0;

	if ((in = m->input.obj) == NULL)
		return (NULL);
	cid = proto_get_str(in, "cell_id", &clen);
	prompt = proto_get_str(in, "prompt", &plen);
	proto_get_bool(in, "password", &password);
	xasprintf(&msg, "cell %.*s asks for %s%s%.*s", (int)clen,
	    cid != NULL ? cid : "?", password ? "a password (passed to the "
	    "kernel, never recorded)" : "input", plen > 0 ? ": " : "",
	    (int)plen, prompt != NULL ? prompt : "");
	str = json_object_new_object();
	json_object_object_add(str, "type", json_object_new_string("string"));
	json_object_object_add(str, "description",
	    json_object_new_string_len(prompt != NULL ? prompt : "",
	    (int)plen));
	props = json_object_new_object();
	json_object_object_add(props, "input", str);
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_string("input"));
	schema = json_object_new_object();
	json_object_object_add(schema, "type", json_object_new_string(
	    "object"));
	json_object_object_add(schema, "properties", props);
	json_object_object_add(schema, "required", a);
	p = json_object_new_object();
	json_object_object_add(p, "mode", json_object_new_string("form"));
	json_object_object_add(p, "message", json_object_new_string(msg));
	json_object_object_add(p, "requestedSchema", schema);
	req = json_object_new_object();
	json_object_object_add(req, "method", json_object_new_string(
	    "elicitation/create"));
	json_object_object_add(req, "params", p);
	reqs = json_object_new_object();
	key = worker_task_input_key(in);
	json_object_object_add(reqs, key, req);
	free(key);
	free(msg);
	return (reqs);
}

/* -32602 for bad params, said as fmt. */
static void
worker_task_refuse(struct json_object *id, const char *fmt, ...)
{
	va_list	 ap;
	char	*text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	worker_rpc_fail(id, -32602, text);
	free(text);
}

/* The extension's empty acknowledgement (tasks/update, tasks/cancel). */
static void
worker_task_ack(struct worker_task_op *op)
{
	struct json_object	*res;

	res = json_object_new_object();
	worker_rpc_stateless_result(res);
	worker_rpc_result(op->id, res);
	worker_task_op_free(op);
}

/* Requests with an effect: never sent twice. */
static int
worker_task_acts(enum worker_task_kind kind)
{
	return (kind == WORKER_TASK_CANCEL || kind == WORKER_TASK_ANSWER ||
	    kind == WORKER_TASK_DECLINE);
}

/*
 * tasks/update, the record read: the response to the question the run
 * asks now goes to the kernel (accept: content.input) or ends the run
 * (decline, cancel); responses to any other key are ignored (SEP-2663).
 */
static void
worker_task_update(struct worker_task_op *op,
    const struct proto_exec_state *m)
{
	const msgpack_object	*in;
	struct json_object	*r, *v, *c;
	const char		*action;
	char			*key;

	if ((in = m->input.obj) == NULL) {
		worker_task_ack(op);
		return;
	}
	key = worker_task_input_key(in);
	r = json_object_object_get(op->responses, key);
	if (r == NULL) {
		free(key);
		worker_task_ack(op);
		return;
	}
	v = NULL;
	if (!json_object_is_type(r, json_type_object) ||
	    !json_object_object_get_ex(r, "action", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		worker_task_refuse(op->id, "inputResponses.%s must "
		    "be an elicitation result {action, content}", key);
		goto fail;
	}
	action = json_object_get_string(v);
	if (strcmp(action, "decline") == 0 || strcmp(action, "cancel") == 0) {
		/* Nobody will answer: the run stops, as tasks/cancel. */
		op->kind = WORKER_TASK_DECLINE;
		free(key);
		worker_task_run(op);
		return;
	}
	if (strcmp(action, "accept") != 0 ||
	    !json_object_object_get_ex(r, "content", &c) ||
	    !json_object_object_get_ex(c, "input", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		worker_task_refuse(op->id, "inputResponses.%s: "
		    "action must be accept (with content.input, a string), "
		    "decline or cancel", key);
		goto fail;
	}
	if ((size_t)json_object_get_string_len(v) > PROTO_INPUT_MAX) {
		worker_task_refuse(op->id, "inputResponses.%s: "
		    "content.input is over %u bytes", key, PROTO_INPUT_MAX);
		goto fail;
	}
	/* The whole string: an answer may hold NUL. */
	op->len = (size_t)json_object_get_string_len(v);
	op->value = xmalloc(op->len + 1);
	memcpy(op->value, json_object_get_string(v), op->len + 1);
	op->kind = WORKER_TASK_ANSWER;
	free(key);
	worker_task_run(op);
	return;
fail:
	free(key);
	worker_task_op_free(op);
}

/*
 * A run's status as a task's: queued and running are working; a run
 * that ended in any way is completed (its result says how: run_cells
 * succeeds with status error when a cell raised), except cancelled.
 */
static const char *
worker_task_status(const char *run)
{
	if (strcmp(run, "queued") == 0 || strcmp(run, "running") == 0)
		return ("working");
	if (strcmp(run, "input_required") == 0)
		return ("input_required");
	if (strcmp(run, "cancelled") == 0)
		return ("cancelled");
	return ("completed");
}

static int
worker_task_ended(const char *ts)
{
	return (strcmp(ts, "completed") == 0 || strcmp(ts, "failed") == 0 ||
	    strcmp(ts, "cancelled") == 0);
}

/* ISO 8601 of ms since the epoch (now when 0: a record without it). */
static void
worker_task_time(int64_t ms, char out[32])
{
	struct tm	tm;
	time_t		t;
	char		day[24];

	if (ms <= 0)
		ms = util_now_us() / 1000;
	t = (time_t)(ms / 1000);
	gmtime_r(&t, &tm);
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%03uZ", day, (u_int)(ms % 1000));
}

/* A Task object of a run's status; message and progress may be NULL. */
static struct json_object *
worker_task_object(const char *id, const char *run, const char *message,
    int64_t created, int64_t updated, struct json_object *progress, int ext)
{
	struct json_object	*o;
	char			 c[32], u[32];
	struct evbuffer		*msg;
	char			*s;

	worker_task_time(created, c);
	worker_task_time(updated > 0 ? updated : created, u);
	o = json_object_new_object();
	json_object_object_add(o, "taskId", json_object_new_string(id));
	json_object_object_add(o, "status", json_object_new_string(
	    worker_task_status(run)));
	msg = evbuffer_new();
	evbuffer_add_printf(msg, "run %s", run);
	if (progress != NULL)
		evbuffer_add_printf(msg, ": %s", json_object_get_string(
		    progress));
	if (message != NULL && *message != '\0')
		evbuffer_add_printf(msg, " (%s)", message);
	s = worker_output_take(msg);
	json_object_object_add(o, "statusMessage", json_object_new_string(s));
	free(s);
	json_object_object_add(o, "createdAt", json_object_new_string(c));
	json_object_object_add(o, "lastUpdatedAt", json_object_new_string(u));
	/* SEP-2663 says the units in the names. */
	json_object_object_add(o, ext ? "ttlMs" : "ttl", json_object_new_int(
	    WORKER_TASK_TTL_MS));
	json_object_object_add(o, ext ? "pollIntervalMs" : "pollInterval",
	    json_object_new_int(WORKER_TASK_POLL_MS));
	return (o);
}

/* The Task of a run's record (EXEC_STATE): where it is at; for the
 * extension with the input it asks for (inputRequests). */
static struct json_object *
worker_task_json(const char *id, const struct proto_exec_state *m, int ext)
{
	const msgpack_object	*cells, *c;
	struct json_object	*o, *p;
	const char		*s, *cid = NULL;
	char			*run, *message = NULL, *line;
	size_t			 len, clen = 0, i, n = 0, ok = 0, at = 0;

	run = proto_str_dup(&m->status);
	if (m->message.ptr != NULL)
		message = proto_str_dup(&m->message);
	/* Each cell is a document: its keys are read as they are. */
	if ((cells = m->cells.obj) != NULL) {
		n = cells->via.array.size;
		for (i = 0; i < n; i++) {
			c = &cells->via.array.ptr[i];
			if ((s = proto_get_str(c, "status", &len)) == NULL)
				continue;
			if (len == 2 && memcmp(s, "ok", 2) == 0)
				ok++;
			if (cid == NULL && len == 7 &&
			    memcmp(s, "running", 7) == 0) {
				cid = proto_get_str(c, "cell_id", &clen);
				at = i + 1;
			}
		}
	}
	/* Progress: the cell running, else how many cells ran ok. */
	if (cid != NULL)
		xasprintf(&line, "cell %zu of %zu (%.*s)", at, n, (int)clen,
		    cid);
	else
		xasprintf(&line, "%zu of %zu cells ok", ok, n);
	p = json_object_new_string(line);
	free(line);
	o = worker_task_object(id, run, message, m->created_at, m->updated_at,
	    p, ext);
	json_object_put(p);
	if (ext && strcmp(worker_task_status(run), "input_required") == 0 &&
	    (p = worker_task_inputs(m)) != NULL)
		json_object_object_add(o, "inputRequests", p);
	free(run);
	free(message);
	return (o);
}

/* notifications/tasks/status: the whole Task; takes it. */
static void
worker_task_notify(struct json_object *task)
{
	worker_rpc_notify("notifications/tasks/status", task);
}

/*
 * The task id of the run the daemon answered with (its execution id in
 * *e; caller frees both), or NULL having answered call with an error.
 */
static char *
worker_task_id_of(struct worker_call *call, struct worker_room *room,
    const msgpack_object *body, struct proto_exec_state *m, char **e)
{
	char	err[256];

	if (proto_exec_state_unpack(body, m, err, sizeof err) != 0) {
		log_warnx("%s", err);
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return (NULL);
	}
	*e = proto_str_dup(&m->execution_id);
	return (worker_task_make_id(worker_room_notebook_id(room), *e));
}

/* A task-augmented run_cells was queued: CreateTaskResult; frees call. */
void
worker_task_created(struct worker_call *call, struct worker_room *room,
    const msgpack_object *body)
{
	struct worker_task	*t;
	struct proto_exec_state	 m;
	struct json_object	*res, *task, *meta;
	char			*id, *e, *text;

	if ((id = worker_task_id_of(call, room, body, &m, &e)) == NULL)
		return;
	task = worker_task_json(id, &m, 0);
	res = json_object_new_object();
	json_object_object_add(res, "task", task);
	xasprintf(&text, "run_cells is running as task %s (execution_id "
	    "%s): tasks/result waits for its outputs, tasks/get says where "
	    "it is", id, e);
	meta = json_object_new_object();
	json_object_object_add(meta,
	    "io.modelcontextprotocol/model-immediate-response",
	    json_object_new_string(text));
	json_object_object_add(res, "_meta", meta);
	free(text);
	worker_call_answer(call, res);

	/* Watch it from here on, on the room we have. */
	if ((t = worker_task_find(id)) != NULL) {
		if (t->room == NULL) {
			worker_room_ref(room);
			t->room = room;
		}
		t->refs++;
		free(t->told);
		t->told = xstrdup("working");
		worker_task_watch(t);
		worker_task_unref(t);
	}
	free(id);
	free(e);
}

/*
 * run_cells of a client that declared the tasks extension, its wait
 * over before the run: the CreateTaskResult (the Task, flat, resultType
 * "task"); frees call.  The record the daemon answered from is the task,
 * so tasks/get finds it from any worker.
 */
void
worker_task_handle(struct worker_call *call, struct worker_room *room,
    const msgpack_object *body)
{
	struct proto_exec_state	 m;
	struct json_object	*res;
	char			*id, *e;

	if ((id = worker_task_id_of(call, room, body, &m, &e)) == NULL)
		return;
	res = worker_task_json(id, &m, 1);
	json_object_object_add(res, "resultType",
	    json_object_new_string("task"));
	worker_call_answer(call, res);
	free(id);
	free(e);
}

/* EXEC_TASKS_REPLY: one page of Tasks, newest first. */
static void
worker_task_listed(void *arg, uint16_t type, const msgpack_object *body,
    const char *code, const char *msg)
{
	struct worker_task_list	*l = arg;
	struct proto_exec_runs	 m;
	const msgpack_object	*r;
	struct worker_task	*t;
	struct json_object	*res, *tasks;
	const char		*eid, *nb, *st, *mg;
	char			*id, *e, *n, *s, *ms, *c, err[256];
	size_t			 i, size, elen, nlen, slen, mlen;
	int64_t			 created, updated;

	if (code != NULL) {
		xasprintf(&s, "%s: %s", code, msg);
		worker_rpc_fail(l->id, -32603, s);
		free(s);
		goto out;
	}
	if (type != PROTO_MSG_EXEC_TASKS_REPLY ||
	    proto_exec_runs_unpack(body, "EXEC_TASKS_REPLY", &m, err,
	    sizeof err) != 0) {
		worker_rpc_fail(l->id, -32603,
		    "unexpected reply from runtimed");
		goto out;
	}
	size = m.runs.obj->via.array.size;
	if (l->offset > 0 && l->offset >= size) {
		worker_rpc_fail(l->id, -32602, "invalid cursor");
		goto out;
	}
	tasks = json_object_new_array();
	for (i = l->offset; i < size && i < l->offset +
	    worker_rpc_page_size(); i++) {
		r = &m.runs.obj->via.array.ptr[i];
		if ((eid = proto_get_str(r, "execution_id", &elen)) == NULL ||
		    (nb = proto_get_str(r, "notebook_id", &nlen)) == NULL ||
		    (st = proto_get_str(r, "status", &slen)) == NULL)
			continue;
		created = updated = 0;
		proto_get_int(r, "created_at", &created);
		proto_get_int(r, "updated_at", &updated);
		mg = proto_get_str(r, "message", &mlen);
		e = xstrndup(eid, elen);
		n = xstrndup(nb, nlen);
		s = xstrndup(st, slen);
		ms = mg != NULL ? xstrndup(mg, mlen) : NULL;
		id = worker_task_make_id(n, e);
		json_object_array_add(tasks, worker_task_object(id, s, ms,
		    created, updated, NULL, 0));
		/* A task not ended is watched, to tell when it ends. */
		if (!worker_task_ended(worker_task_status(s)) &&
		    (t = worker_task_find(id)) != NULL) {
			t->refs++;
			if (t->told == NULL)
				t->told = xstrdup(worker_task_status(s));
			worker_task_watch(t);
			worker_task_unref(t);
		}
		free(id);
		free(e);
		free(n);
		free(s);
		free(ms);
	}
	res = json_object_new_object();
	json_object_object_add(res, "tasks", tasks);
	if (i < size) {
		c = worker_rpc_page_next((u_int)i);
		json_object_object_add(res, "nextCursor",
		    json_object_new_string(c));
		free(c);
	}
	worker_rpc_result(l->id, res);
out:
	json_object_put(l->id);
	free(l);
}

/* tasks/list {cursor?}: this session's tasks, from the daemon. */
static void
worker_task_list(struct json_object *id, struct json_object *params)
{
	struct worker_task_list	*l;
	struct proto_exec_tasks	 m;
	struct mpbuf		 b;
	u_int			 off;

	if (worker_rpc_page_cursor(params, &off) != 0) {
		worker_rpc_fail(id, -32602, "invalid cursor");
		return;
	}
	l = xcalloc(1, sizeof *l);
	l->id = json_object_get(id);
	l->offset = off;
	memset(&m, 0, sizeof m);
	m.task_owner = proto_str_make(worker_task_owner());
	mpbuf_init(&b);
	proto_exec_tasks_pack(&b.pk, &m);
	worker_daemon_request(worker_daemon_control(), PROTO_MSG_EXEC_TASKS,
	    &b.sb, worker_task_listed, l);
	mpbuf_free(&b);
}

/*
 * notifications/cancelled of a blocked tasks/result: it ends unanswered;
 * the run goes on (tasks/cancel is what stops it).
 */
void
worker_task_cancel_id(struct json_object *id)
{
	struct worker_task	*t;
	struct worker_task_op	*op;

	LIST_FOREACH(t, &worker_tasks, entry) {
		TAILQ_FOREACH(op, &t->waiters, entry) {
			if (op->id != NULL && jsonrpc_id_equal(op->id, id)) {
				TAILQ_REMOVE(&t->waiters, op, entry);
				worker_task_op_free(op);
				return;
			}
		}
	}
}

/*
 * A request of 2026-07-28 without the extension: -32021 naming it
 * (SEP-2663).
 */
void
worker_task_undeclared(struct json_object *id)
{
	struct json_object	*data, *caps, *ext;

	ext = json_object_new_object();
	json_object_object_add(ext, WORKER_TASK_EXTENSION,
	    json_object_new_object());
	caps = json_object_new_object();
	json_object_object_add(caps, "extensions", ext);
	data = json_object_new_object();
	json_object_object_add(data, "requiredCapabilities", caps);
	worker_rpc_fail_data(id, -32021, "Missing required client "
	    "capability: declare the extension " WORKER_TASK_EXTENSION
	    " in io.modelcontextprotocol/clientCapabilities", data);
}

/*
 * tasks/get, tasks/result, tasks/cancel {taskId}; tasks/list (2025-11-25).
 * With the extension of 2026-07-28: tasks/get, tasks/update
 * {taskId, inputResponses}, tasks/cancel.
 */
void
worker_task_request(const char *method, struct json_object *id,
    struct json_object *params, enum worker_task_mode mode)
{
	struct worker_task	*t;
	struct worker_task_op	*op;
	struct json_object	*v, *r = NULL;
	enum worker_task_kind	 kind;

	if (mode == WORKER_TASK_LEGACY && strcmp(method, "tasks/list") == 0) {
		worker_task_list(id, params);
		return;
	}
	if (strcmp(method, "tasks/get") == 0)
		kind = WORKER_TASK_GET;
	else if (mode == WORKER_TASK_LEGACY &&
	    strcmp(method, "tasks/result") == 0)
		kind = WORKER_TASK_RESULT;
	else if (strcmp(method, "tasks/cancel") == 0)
		kind = WORKER_TASK_CANCEL;
	else if (mode != WORKER_TASK_LEGACY &&
	    strcmp(method, "tasks/update") == 0)
		kind = WORKER_TASK_UPDATE;
	else {
		worker_rpc_fail(id, -32601, "Method not found");
		return;
	}
	if (mode == WORKER_TASK_UNDECLARED) {
		worker_task_undeclared(id);
		return;
	}
	if (params == NULL || !json_object_object_get_ex(params, "taskId",
	    &v) || !json_object_is_type(v, json_type_string)) {
		worker_rpc_fail(id, -32602, "taskId must be a string");
		return;
	}
	if (kind == WORKER_TASK_UPDATE && (!json_object_object_get_ex(params,
	    "inputResponses", &r) || !json_object_is_type(r,
	    json_type_object))) {
		worker_rpc_fail(id, -32602, "inputResponses must be an object");
		return;
	}
	if ((t = worker_task_find(json_object_get_string(v))) == NULL) {
		worker_rpc_fail(id, -32602, "Failed to retrieve task: Task not "
		    "found");
		return;
	}
	op = worker_task_op_create(t, kind, id);
	op->ext = mode == WORKER_TASK_EXT;
	op->structured = toolresult_structured(params);
	op->responses = json_object_get(r);
	worker_task_run(op);
}
