/* SPDX-License-Identifier: ISC */
/*
 * worker-call.c: one tools/call in flight, from arguments to the result
 * (or the typed failure) the client sees.
 */

#include <sys/queue.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_call {
	struct json_object		*id;
	const struct tool_entry		*tool;
	struct json_object		*args;
	struct json_object		*extra;	/* more content */
	struct worker_target		 target;
	int				 has_target;
	char				*owner;	/* ID owner */
	int				 owner_minted;	/* by this call */
	int				 waiting;
	int				 cancelled;
	int				 stateless;	/* 2026-07-28 */
	int				 task;	/* as an MCP task */
	int				 ext_task; /* may answer a task */
	worker_call_wrap_fn		 wrap;	/* reshapes the result */
	void				*wrap_arg;
	int				 structured;	/* decision 043 */
	struct json_object		*meta;	/* the result's _meta */
	struct json_object		*progress;	/* token */
	struct event			*progress_ev;
	int64_t				 wait_start;
	int64_t				 progress_last;
	int				 wait_bound;	/* ms, 0: unsaid */
	worker_call_progress_fn		 progress_cb;
	void				*progress_arg;
	worker_call_cancel_cb		 on_cancel;
	void				*cancel_arg;
	struct worker_figures		*figures;	/* being drawn */
	TAILQ_ENTRY(worker_call)	 entry;
};
TAILQ_HEAD(worker_call_head, worker_call);

static u_int			worker_call_waits;
static u_int			worker_call_n;
static struct worker_call_head	worker_call_all =
    TAILQ_HEAD_INITIALIZER(worker_call_all);

static void	worker_call_free(struct worker_call *);
static struct json_object	*worker_call_text_block(const char *);
static const char	*worker_call_hint(const char *);
static struct json_object	*worker_call_too_large(struct worker_call *,
		    struct json_object *, size_t);
static void	worker_call_send(struct worker_call *, struct json_object *);
static void	worker_call_progress_cb(evutil_socket_t, short, void *);
static void	worker_call_room_done(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_call_room_got(void *, struct worker_nb *, const char *,
		    const char *);
static void	worker_call_set_target(struct worker_call *, const char *,
		    int);

/* A call in flight; meta is the request's _meta (borrowed, may be NULL). */
struct worker_call *
worker_call_create(struct json_object *id, const struct tool_entry *tool,
    struct json_object *args, struct json_object *meta)
{
	struct worker_call	*call;
	struct json_object	*v;

	call = xcalloc(1, sizeof *call);
	call->id = json_object_get(id);
	call->tool = tool;
	call->args = json_object_get(args);
	call->extra = json_object_new_array();
	call->structured = worker_rpc_structured();
	if (meta != NULL &&
	    json_object_object_get_ex(meta, "progressToken", &v) &&
	    (json_object_is_type(v, json_type_string) ||
	    json_object_is_type(v, json_type_int)))
		call->progress = json_object_get(v);
	if (meta != NULL && json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/protocolVersion", NULL))
		call->stateless = 1;
	TAILQ_INSERT_TAIL(&worker_call_all, call, entry);
	worker_call_n++;
	return (call);
}

u_int
worker_call_inflight(void)
{
	return (worker_call_n);
}

static void
worker_call_free(struct worker_call *call)
{
	TAILQ_REMOVE(&worker_call_all, call, entry);
	worker_call_n--;
	if (call->waiting)
		worker_call_wait_release(call);
	json_object_put(call->progress);
	json_object_put(call->id);
	json_object_put(call->args);
	json_object_put(call->extra);
	json_object_put(call->meta);
	worker_figures_free(call->figures);
	free(call->owner);
	free(call);
	if (worker_call_n == 0)
		worker_rpc_idle();
}

/*
 * notifications/cancelled: the client will ignore the answer, so send
 * none.  A wait ends now; a run or an edit already sent goes on.
 */
void
worker_call_cancel_id(struct json_object *id)
{
	struct worker_call	*call;

	TAILQ_FOREACH(call, &worker_call_all, entry) {
		if (!call->cancelled && jsonrpc_id_equal(call->id, id))
			break;
	}
	if (call == NULL)
		return;
	log_debug("%s: cancelled", call->tool->name);
	call->cancelled = 1;
	worker_call_wait_release(call);
	if (call->on_cancel != NULL)
		call->on_cancel(call, call->cancel_arg);
}

/* This call's result keeps its structuredContent (decision 043). */
void
worker_call_set_structured(struct worker_call *call)
{
	call->structured = 1;
}

int
worker_call_structured(struct worker_call *call)
{
	return (call->structured);
}

/* The call asked to run as an MCP task (params.task). */
void
worker_call_set_task(struct worker_call *call)
{
	call->task = 1;
}

int
worker_call_task(struct worker_call *call)
{
	return (call->task);
}

/*
 * The client declared the tasks extension of 2026-07-28 on this call
 * (decision 069): it may be answered with a task handle instead.
 */
void
worker_call_set_ext_task(struct worker_call *call)
{
	call->ext_task = 1;
}

int
worker_call_ext_task(struct worker_call *call)
{
	return (call->ext_task);
}

/* The result goes through fn before it is sent (a task's tasks/get
 * carries it inside the Task). */
void
worker_call_set_wrap(struct worker_call *call, worker_call_wrap_fn fn,
    void *arg)
{
	call->wrap = fn;
	call->wrap_arg = arg;
}

/* The result's _meta (takes the reference). */
void
worker_call_set_meta(struct worker_call *call, struct json_object *meta)
{
	json_object_put(call->meta);
	call->meta = meta;
}

/* Answer with res as it is (a CreateTaskResult); takes res, frees call. */
void
worker_call_answer(struct worker_call *call, struct json_object *res)
{
	if (call->cancelled)
		json_object_put(res);
	else
		worker_rpc_answer(call->id, res);
	worker_call_free(call);
}

void
worker_call_on_cancel(struct worker_call *call, worker_call_cancel_cb cb,
    void *arg)
{
	call->on_cancel = cb;
	call->cancel_arg = arg;
}

int
worker_call_cancelled(struct worker_call *call)
{
	return (call->cancelled);
}

struct json_object *
worker_call_args(struct worker_call *call)
{
	return (call->args);
}

/* An ID target went through an address owner: results name it. */
static void
worker_call_set_target(struct worker_call *call, const char *handle,
    int minted)
{
	free(call->owner);
	call->owner = handle != NULL ? xstrdup(handle) : NULL;
	call->owner_minted = minted;
}

/* The figures drawn for this call's result (worker-figure.c). */
struct worker_figures **
worker_call_figures(struct worker_call *call)
{
	return (&call->figures);
}

/* Another content block (an image) after the text; takes the ref. */
void
worker_call_add_content(struct worker_call *call, struct json_object *block)
{
	json_object_array_add(call->extra, block);
}

static struct json_object *
worker_call_text_block(const char *text)
{
	struct json_object	*b;

	b = json_object_new_object();
	json_object_object_add(b, "type", json_object_new_string("text"));
	json_object_object_add(b, "text", json_object_new_string(text));
	return (b);
}

/* How to ask each tool for less when its result is over the cap. */
static const struct {
	const char	*tool;
	const char	*hint;
} worker_call_hints[] = {
	{ "inspect_notebook", "ask for fewer cells (cell_ids, or start and "
	    "count)" },
	{ "get_results", "leave out full_output (outputs are then capped), "
	    "or read the cells one at a time with inspect_notebook" },
	{ "search_cells", "narrow the query, or search only in \"source\"" },
	{ "export_notebook", "export to a file instead (give path)" },
};

static const char *
worker_call_hint(const char *tool)
{
	size_t	i;

	for (i = 0; i < sizeof worker_call_hints /
	    sizeof worker_call_hints[0]; i++) {
		if (strcmp(worker_call_hints[i].tool, tool) == 0)
			return (worker_call_hints[i].hint);
	}
	return ("ask for fewer cells or less output");
}

/*
 * A result over PROTO_MCP_REPLY_CAP cannot be sent: answer with one that
 * fits.  A read becomes a typed error saying how to ask for less; a call
 * with effects did take effect, so it succeeds with what of its result is
 * small (ids, status, cursor) and says what was left out.  Takes res.
 */
static struct json_object *
worker_call_too_large(struct worker_call *call, struct json_object *res,
    size_t len)
{
	struct json_object_iterator	 it, end;
	struct json_object		*sc, *small, *v, *err, *out, *content;
	const char			*name = call->tool->name;
	char				*msg, *text;

	xasprintf(&msg, "the result would be %.1f MB, over the %u MiB reply "
	    "cap: %s", len / 1e6, PROTO_MCP_REPLY_CAP / (1024 * 1024),
	    worker_call_hint(name));
	log_warnx("%s: %s", name, msg);
	if (call->tool->read_only) {
		out = toolresult_error(PROTO_E_INVALID_ARGUMENT, msg);
		err = toolresult_error_detail(out);
		json_object_object_add(err, "reason",
		    json_object_new_string("too_large"));
		json_object_object_add(err, "bytes", json_object_new_int64(
		    (int64_t)len));
		json_object_object_add(err, "cap",
		    json_object_new_int64(PROTO_MCP_REPLY_CAP));
		free(msg);
		json_object_put(res);
		return (out);
	}
	small = json_object_new_object();
	if ((sc = json_object_object_get(res, "structuredContent")) != NULL &&
	    json_object_is_type(sc, json_type_object)) {
		it = json_object_iter_begin(sc);
		end = json_object_iter_end(sc);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			v = json_object_iter_peek_value(&it);
			if (json_object_is_type(v, json_type_object) ||
			    json_object_is_type(v, json_type_array) ||
			    (json_object_is_type(v, json_type_string) &&
			    json_object_get_string_len(v) > 256))
				continue;
			json_object_object_add(small,
			    json_object_iter_peek_name(&it),
			    json_object_get(v));
		}
	}
	json_object_object_add(small, "result_truncated",
	    json_object_new_boolean(1));
	xasprintf(&text, "%s took effect; %s, so only its summary is here",
	    name, msg);
	json_object_object_add(small, "message", json_object_new_string(text));
	out = json_object_new_object();
	content = json_object_new_array();
	json_object_array_add(content, worker_call_text_block(text));
	json_object_object_add(out, "content", content);
	json_object_object_add(out, "structuredContent", small);
	json_object_object_add(out, "isError", json_object_new_boolean(0));
	free(text);
	free(msg);
	json_object_put(res);
	return (out);
}

/* Answer the call with res (or, if too large, one that fits); takes res. */
static void
worker_call_send(struct worker_call *call, struct json_object *res)
{
	struct json_object	*sc, *err, *msg;
	size_t			 len;

	/*
	 * A task that could not be created is no CreateTaskResult: the
	 * request fails, with the tool error as its data (decision 024).
	 */
	if (call->task && json_object_get_boolean(json_object_object_get(res,
	    "isError")) && (sc = json_object_object_get(res,
	    "structuredContent")) != NULL &&
	    (err = json_object_object_get(sc, "error")) != NULL) {
		msg = json_object_object_get(err, "message");
		worker_rpc_fail_data(call->id, -32602, msg != NULL ?
		    json_object_get_string(msg) : "the task was not created",
		    json_object_get(err));
		json_object_put(res);
		return;
	}
	if (!call->structured)
		toolresult_plain(res);
	if (call->meta != NULL)
		json_object_object_add(res, "_meta",
		    json_object_get(call->meta));
	if (call->stateless)
		worker_rpc_stateless_result(res);
	/* Measured once: the reply copies this text (worker_json_freeze). */
	len = worker_json_freeze(res);
	if (len > PROTO_MCP_REPLY_CAP) {
		res = worker_call_too_large(call, res, len);
		if (call->stateless)
			worker_rpc_stateless_result(res);
	}
	if (call->wrap != NULL)
		res = call->wrap(call->wrap_arg, res);
	worker_rpc_answer(call->id, res);
}

/* Finish with success; takes the structured reference.  Frees call. */
void
worker_call_result(struct worker_call *call, const char *text,
    struct json_object *sc)
{
	struct json_object	*res, *content, *t;
	char			*owned = NULL;
	size_t			 i;

	/* Figures being drawn: the result waits for their images. */
	if (call->figures != NULL && !call->cancelled &&
	    worker_figure_hold(call->figures, text, sc))
		return;
	if (call->owner != NULL) {
		t = json_object_new_object();
		json_object_object_add(t, "notebook_handle",
		    json_object_new_string(call->owner));
		json_object_object_add(sc, "target", t);
		/* The slot it holds is the caller's to give back. */
		xasprintf(&owned, "%s%s%s address owner %s (one of %d handle "
		    "slots); release it with disconnect_notebook "
		    "notebook_handle=%s\n", text, *text != '\0' &&
		    text[strlen(text) - 1] != '\n' ? "\n" : "",
		    call->owner_minted ? "notebook_id retained" :
		    "notebook_id went through", call->owner,
		    WORKER_MAX_ATTACH, call->owner);
		text = owned;
	}
	content = json_object_new_array();
	json_object_array_add(content, worker_call_text_block(text));
	free(owned);
	for (i = 0; i < json_object_array_length(call->extra); i++) {
		json_object_array_add(content, json_object_get(
		    json_object_array_get_idx(call->extra, i)));
	}
	res = json_object_new_object();
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(0));
	if (call->cancelled)
		json_object_put(res);
	else
		worker_call_send(call, res);
	worker_call_free(call);
}

/* Finish with a typed failure.  Frees call. */
void
worker_call_error(struct worker_call *call, const char *code,
    const char *fmt, ...)
{
	struct json_object	*res;
	va_list			 ap;
	char			*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	log_debug("%s: %s: %s", call->tool->name, code, msg);
	if (!call->cancelled) {
		res = toolresult_error(code, msg);
		worker_call_send(call, res);
	}
	free(msg);
	worker_call_free(call);
}

/*
 * Finish with a typed failure whose error carries fields too (taken),
 * and tail after the text's message (say, the text the fields hold).
 */
void
worker_call_error_fields(struct worker_call *call, const char *code,
    const char *msg, struct json_object *fields, const char *tail)
{
	struct json_object	*res, *err, *block;
	char			*text;

	log_debug("%s: %s: %s", call->tool->name, code, msg);
	if (!call->cancelled) {
		res = toolresult_error(code, msg);
		err = toolresult_error_detail(res);
		json_object_object_foreach(fields, key, val)
			json_object_object_add(err, key, json_object_get(val));
		if (tail != NULL) {
			block = json_object_array_get_idx(
			    json_object_object_get(res, "content"), 0);
			xasprintf(&text, "%s\n%s", json_object_get_string(
			    json_object_object_get(block, "text")), tail);
			json_object_object_add(block, "text",
			    json_object_new_string(text));
			free(text);
		}
		worker_call_send(call, res);
	}
	json_object_put(fields);
	worker_call_free(call);
}

/*
 * Check the argument names and, for notebook tools (allowed holds
 * notebook_handle), the target's form.  On failure the call is answered
 * and freed and -1 returned.
 */
int
worker_call_check(struct worker_call *call, const char *const allowed[])
{
	char	*msg = NULL;
	u_int	 i;
	int	 wants_target = 0, allow_id = 0;

	for (i = 0; allowed[i] != NULL; i++) {
		if (strcmp(allowed[i], "notebook_handle") == 0)
			wants_target = 1;
		if (strcmp(allowed[i], "notebook_id") == 0)
			allow_id = 1;
	}
	if (wants_target) {
		if (worker_target_parse(call->args, allow_id, &call->target,
		    &msg) != 0) {
			worker_call_error(call, PROTO_E_INVALID_NOTEBOOK_TARGET,
			    "%s", msg);
			free(msg);
			return (-1);
		}
		call->has_target = 1;
	}
	if (worker_args_check(call->args, allowed, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return (-1);
	}
	return (0);
}

/* Resolve the checked target to a live handle, or answer the failure. */
struct worker_handle *
worker_call_target(struct worker_call *call)
{
	struct worker_handle	*h;
	const char		*code;
	char			*msg = NULL;
	int			 minted = 0;

	if (!call->has_target) {
		worker_call_error(call, PROTO_E_INVALID_NOTEBOOK_TARGET,
		    "give notebook_handle or notebook_id");
		return (NULL);
	}
	h = worker_attach_resolve(&call->target, &minted, &code, &msg);
	if (h == NULL) {
		worker_call_error(call, code, "%s", msg);
		free(msg);
		return (NULL);
	}
	if (minted || call->target.kind == WORKER_TARGET_ID)
		worker_call_set_target(call, worker_attach_id(h), minted);
	return (h);
}

/*
 * complete_code and inspect_code: check the arguments, read code (the
 * whole string: it may hold NUL), cursor_pos (-1 when absent) and, when
 * level is not NULL, detail_level; resolve the target.  NULL when the
 * failure is answered.
 */
struct worker_handle *
worker_call_code(struct worker_call *call, const char *const allowed[],
    struct proto_str *code, int *pos, int *level)
{
	struct json_object	*args = call->args;
	const char		*s;
	char			*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return (NULL);
	if (worker_args_string(args, "code", 1, &s, &msg) != 0 ||
	    worker_args_uint(args, "cursor_pos", -1, 0, INT32_MAX, pos,
	    &msg) != 0 ||
	    (level != NULL && worker_args_uint(args, "detail_level", 0, 0, 1,
	    level, &msg) != 0)) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return (NULL);
	}
	code->ptr = s;
	code->len = (size_t)json_object_get_string_len(
	    json_object_object_get(args, "code"));
	if (code->len > PROTO_CODE_MAX) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "'code' is over %u bytes: send the lines around the cursor",
		    PROTO_CODE_MAX);
		return (NULL);
	}
	return (worker_call_target(call));
}

static const struct timeval worker_call_second = { 1, 0 };

/*
 * Once a second while waiting: elapsed seconds (always increasing)
 * against the bound, and what the wait is at ("3s of 30s: cell abc (2
 * of 5) running: step 2"), from the tool's progress callback.
 */
static void
worker_call_progress_cb(evutil_socket_t fd, short events, void *arg)
{
	struct worker_call	*call = arg;
	struct json_object	*p;
	struct evbuffer		*msg;
	int64_t			 secs;
	char			*s;

	secs = (util_mono_ms() - call->wait_start) / 1000;
	if (secs <= call->progress_last)
		secs = call->progress_last + 1;
	call->progress_last = secs;
	msg = evbuffer_new();
	evbuffer_add_printf(msg, "%llds", (long long)secs);
	if (call->wait_bound > 0)
		evbuffer_add_printf(msg, " of %ds", call->wait_bound / 1000);
	if (call->progress_cb != NULL) {
		evbuffer_add(msg, ": ", 2);
		call->progress_cb(call, call->progress_arg, msg);
	} else
		evbuffer_add(msg, ": waiting", 9);
	s = worker_output_take(msg);
	p = json_object_new_object();
	json_object_object_add(p, "progressToken",
	    json_object_get(call->progress));
	json_object_object_add(p, "progress", json_object_new_int64(secs));
	if (call->wait_bound > 0)
		json_object_object_add(p, "total",
		    json_object_new_int64(call->wait_bound / 1000));
	json_object_object_add(p, "message", json_object_new_string(s));
	free(s);
	worker_rpc_notify("notifications/progress", p);
}

/*
 * The wait's bound (ms) and what its progress says; cb (may be NULL)
 * appends to the message and lives as long as the wait.
 */
void
worker_call_wait_bound(struct worker_call *call, int bound_ms,
    worker_call_progress_fn cb, void *arg)
{
	call->wait_bound = bound_ms;
	call->progress_cb = cb;
	call->progress_arg = arg;
}

/* Did the client ask for progress (a progressToken)? */
int
worker_call_has_progress(struct worker_call *call)
{
	return (call->progress != NULL);
}

/* Waits share WORKER_WAIT_PERMITS; past them fail fast with busy. */
int
worker_call_wait_acquire(struct worker_call *call)
{
	if (call->waiting)
		return (0);
	if (worker_call_waits >= WORKER_WAIT_PERMITS) {
		worker_call_error(call, PROTO_E_BUSY, "%d waits are already in "
		    "progress; retry later or pass a shorter wait",
		    WORKER_WAIT_PERMITS);
		return (-1);
	}
	worker_call_waits++;
	call->waiting = 1;
	call->wait_start = util_mono_ms();
	call->progress_last = 0;
	if (call->progress != NULL) {
		call->progress_ev = event_new(worker_rpc_base(), -1,
		    EV_PERSIST, worker_call_progress_cb, call);
		event_add(call->progress_ev, &worker_call_second);
	}
	return (0);
}

void
worker_call_wait_release(struct worker_call *call)
{
	if (!call->waiting)
		return;
	call->waiting = 0;
	worker_call_waits--;
	call->progress_cb = NULL;
	if (call->progress_ev != NULL) {
		event_free(call->progress_ev);
		call->progress_ev = NULL;
	}
}

/* One daemon request on behalf of a call; reply or failure finishes. */
struct worker_call_req {
	struct worker_call	*call;
	struct worker_room	*room;
	uint16_t		 expect;
	worker_call_reply_cb	 cb;
	worker_call_nb_cb	 nb_cb;
};

static void
worker_call_room_done(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_call_req	*r = arg;

	if (code != NULL)
		worker_call_error(r->call, code, "%s", msg);
	else if (r->expect != 0 && type != r->expect)
		worker_call_error(r->call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply %s from runtimed",
		    proto_msg_name(type));
	else
		r->cb(r->call, r->room, reply);
	worker_room_unref(r->room);
	free(r);
}

/*
 * Send type with body (packed by its codec, NULL when empty) on room; cb
 * gets the reply if its type is the one proto's table names for type,
 * else the call fails typed.  With room NULL the request goes on the
 * room-less control connection.
 */
void
worker_call_room(struct worker_call *call, struct worker_room *room,
    uint16_t type, const msgpack_sbuffer *body, worker_call_reply_cb cb)
{
	struct worker_call_req	*r;

	r = xcalloc(1, sizeof *r);
	r->call = call;
	r->room = room;
	r->expect = proto_msg_reply(type);
	r->cb = cb;
	if (room == NULL) {
		worker_daemon_request(worker_daemon_control(), type, body,
		    worker_call_room_done, r);
		return;
	}
	worker_room_ref(room);
	worker_room_request(room, type, body, worker_call_room_done, r);
}

static void
worker_call_room_got(void *arg, struct worker_nb *nb, const char *code,
    const char *msg)
{
	struct worker_call_req	*r = arg;

	if (code != NULL)
		worker_call_error(r->call, code, "%s", msg);
	else
		r->nb_cb(r->call, r->room, nb);
	worker_room_unref(r->room);
	free(r);
}

/* Read room's content (ROOM_GET) for a call; cb gets it, or the call
 * fails typed. */
void
worker_call_room_get(struct worker_call *call, struct worker_room *room,
    worker_call_nb_cb cb)
{
	struct worker_call_req	*r;

	r = xcalloc(1, sizeof *r);
	r->call = call;
	r->room = room;
	r->nb_cb = cb;
	worker_room_ref(room);
	worker_room_get(room, worker_call_room_got, r);
}

/*
 * A tool whose only arguments are the target: check them and resolve the
 * notebook.  NULL when the failure is answered.
 */
struct worker_handle *
worker_call_target_only(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", NULL
	};

	if (worker_call_check(call, allowed) != 0)
		return (NULL);
	return (worker_call_target(call));
}

/* Such a tool that sends one request to the notebook's room. */
void
worker_call_target_request(struct worker_call *call, uint16_t type,
    worker_call_reply_cb done)
{
	struct worker_handle	*h;

	if ((h = worker_call_target_only(call)) == NULL)
		return;
	worker_call_room(call, worker_attach_room(h), type, NULL, done);
}
