/*
 * room-exec.c: tracked runs.  A run snapshots its cells' sources, waits
 * in the room's FIFO, and is fed to the kernel one cell at a time.
 * Outputs go both to the run's record and to the room's cell.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

enum room_exec_status {
	ROOM_EXEC_QUEUED,
	ROOM_EXEC_RUNNING,
	ROOM_EXEC_DONE,
	ROOM_EXEC_ERROR,
	ROOM_EXEC_INTERRUPTED,
	ROOM_EXEC_KERNEL_DIED,
	ROOM_EXEC_CANCELLED,
};
static const char *room_exec_status_names[] = {
	"queued", "running", "done", "error", "interrupted", "kernel_died",
	"cancelled"
};

enum room_exec_cell_status {
	ROOM_EXEC_CELL_QUEUED,
	ROOM_EXEC_CELL_RUNNING,
	ROOM_EXEC_CELL_OK,
	ROOM_EXEC_CELL_ERROR,
	ROOM_EXEC_CELL_NOT_RUN,
	ROOM_EXEC_CELL_INTERRUPTED,
	ROOM_EXEC_CELL_KERNEL_DIED,
};
static const char *room_exec_cell_names[] = {
	"queued", "running", "ok", "error", "not_run", "interrupted",
	"kernel_died"
};

struct room_exec_cell {
	char				*cell_id;
	char				*source;
	size_t				 source_len;
	enum room_cell_type		 type;
	enum room_exec_cell_status	 status;
	int64_t				 execution_count;
	struct json_object		*outputs;
	int				 clear_wait;
};

struct room_exec {
	char			 id[37];
	struct room		*room;
	enum room_exec_status	 status;
	int			 stop_on_error;
	int			 had_error;
	int			 interrupted;	/* while running */
	char			*message;
	struct room_exec_cell	*cells;
	size_t			 ncells;
	size_t			 current;
	int			 sent;	/* current cell in kernel */
	TAILQ_ENTRY(room_exec)	 entry;
};
TAILQ_HEAD(room_exec_list, room_exec);

struct room_execs {
	struct room_exec_list	 active;	/* running, then queued */
	struct room_exec_list	 finished;	/* newest first */
	u_int			 nfinished;
};

/* An EXEC_GET parked until its run ends or its timer fires. */
struct room_exec_wait {
	struct peer		*peer;
	uint32_t		 id;
	struct room_exec	*exec;
	struct event		*timer;
	TAILQ_ENTRY(room_exec_wait) entry;
};
static TAILQ_HEAD(, room_exec_wait) room_exec_waits =
    TAILQ_HEAD_INITIALIZER(room_exec_waits);

void
room_exec_create(struct room *r)
{
	r->execs = xcalloc(1, sizeof *r->execs);
	TAILQ_INIT(&r->execs->active);
	TAILQ_INIT(&r->execs->finished);
}

static void
room_exec_wait_free(struct room_exec_wait *w)
{
	TAILQ_REMOVE(&room_exec_waits, w, entry);
	event_free(w->timer);
	free(w);
}

static void
room_exec_destroy(struct room_exec *e)
{
	struct room_exec_wait	*w, *w1;
	size_t			 i;

	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->exec == e)
			room_exec_wait_free(w);
	}
	for (i = 0; i < e->ncells; i++) {
		free(e->cells[i].cell_id);
		free(e->cells[i].source);
		json_object_put(e->cells[i].outputs);
	}
	free(e->cells);
	free(e->message);
	free(e);
}

void
room_exec_free(struct room *r)
{
	struct room_exec	*e, *e1;

	if (r->execs == NULL)
		return;
	TAILQ_FOREACH_SAFE(e, &r->execs->active, entry, e1)
		room_exec_destroy(e);
	TAILQ_FOREACH_SAFE(e, &r->execs->finished, entry, e1)
		room_exec_destroy(e);
	free(r->execs);
	r->execs = NULL;
}

u_int
room_exec_queue_length(struct room *r)
{
	struct room_exec	*e;
	u_int			 n = 0;

	TAILQ_FOREACH(e, &r->execs->active, entry)
		n++;
	return (n);
}

static int
room_exec_terminal(struct room_exec *e)
{
	return (e->status != ROOM_EXEC_QUEUED &&
	    e->status != ROOM_EXEC_RUNNING);
}

/* EXEC_STATE {execution_id, status, cells: [...]} */
static void
room_exec_pack(struct room_exec *e, msgpack_packer *pk)
{
	struct room_exec_cell	*c;
	size_t			 i;

	msgpack_pack_map(pk, 5);
	proto_pack_str(pk, "execution_id", e->id);
	proto_pack_str(pk, "notebook_id", e->room->id);
	proto_pack_str(pk, "status", room_exec_status_names[e->status]);
	if (e->message != NULL)
		proto_pack_str(pk, "message", e->message);
	else
		proto_pack_nil(pk, "message");
	proto_pack_key(pk, "cells");
	msgpack_pack_array(pk, e->ncells);
	for (i = 0; i < e->ncells; i++) {
		c = &e->cells[i];
		msgpack_pack_map(pk, 6);
		proto_pack_str(pk, "cell_id", c->cell_id);
		proto_pack_str(pk, "cell_type", room_nb_type_name(c->type));
		proto_pack_str(pk, "status", room_exec_cell_names[c->status]);
		if (c->execution_count >= 0)
			proto_pack_int(pk, "execution_count",
			    c->execution_count);
		else
			proto_pack_nil(pk, "execution_count");
		proto_pack_strn(pk, "source", c->source, c->source_len);
		proto_pack_key(pk, "outputs");
		mpjson_pack(pk, c->outputs);
	}
}

static void
room_exec_reply(struct room_exec *e, struct peer *p, uint32_t id)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	room_exec_pack(e, &b.pk);
	peer_send(p, PROTO_MSG_EXEC_STATE, id, &b.sb);
	mpbuf_free(&b);
}

/* The run reached a terminal state: record it, answer its waiters. */
static void
room_exec_finish(struct room_exec *e, enum room_exec_status status)
{
	struct room_execs	*x = e->room->execs;
	struct room_exec_wait	*w, *w1;
	struct room_exec	*old;
	size_t			 i;

	for (i = 0; i < e->ncells; i++) {
		if (e->cells[i].status == ROOM_EXEC_CELL_QUEUED ||
		    e->cells[i].status == ROOM_EXEC_CELL_RUNNING)
			e->cells[i].status = ROOM_EXEC_CELL_NOT_RUN;
	}
	e->status = status;
	e->sent = 0;
	TAILQ_REMOVE(&x->active, e, entry);
	TAILQ_INSERT_HEAD(&x->finished, e, entry);
	if (++x->nfinished > RUNTIMED_RUNS_KEPT) {
		old = TAILQ_LAST(&x->finished, room_exec_list);
		TAILQ_REMOVE(&x->finished, old, entry);
		x->nfinished--;
		room_exec_destroy(old);
	}
	log_info("run %s: %s", e->id, room_exec_status_names[status]);
	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->exec != e)
			continue;
		room_exec_reply(e, w->peer, w->id);
		room_exec_wait_free(w);
	}
}

/* Feed the kernel the next cell of the head run, if it can take one. */
void
room_exec_kick(struct room *r)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;

	while ((e = TAILQ_FIRST(&r->execs->active)) != NULL) {
		if (e->sent || !room_kernel_ready(r))
			return;
		e->status = ROOM_EXEC_RUNNING;
		while (e->current < e->ncells &&
		    e->cells[e->current].type != ROOM_CELL_CODE) {
			/* Markdown and raw cells run by being there. */
			e->cells[e->current].status = ROOM_EXEC_CELL_OK;
			e->current++;
		}
		if (e->current >= e->ncells) {
			room_exec_finish(e, e->had_error ? ROOM_EXEC_ERROR :
			    ROOM_EXEC_DONE);
			continue;
		}
		c = &e->cells[e->current];
		if (room_kernel_execute(r, e->id, c->cell_id, c->source,
		    c->source_len) != 0)
			return;
		e->sent = 1;
		return;
	}
}

/* EXEC_RUN {cell_ids, stop_on_error?} */
void
room_exec_run(struct room *r, struct peer *p, uint32_t id,
    const msgpack_object *body)
{
	const msgpack_object	*ids, *ref;
	struct room_exec	*e;
	struct room_cell	*cell;
	const char		*why;
	size_t			 i, n;
	int			 stop = 1;

	ids = proto_get_array(body, "cell_ids");
	if (ids == NULL || ids->via.array.size == 0) {
		peer_send_error(p, id, "invalid_argument",
		    "cell_ids must be a non-empty list");
		return;
	}
	n = ids->via.array.size;
	if (n > RUNTIMED_RUN_MAX_CELLS) {
		peer_send_error(p, id, "invalid_argument", "a run takes at "
		    "most %d cells, not %zu", RUNTIMED_RUN_MAX_CELLS, n);
		return;
	}
	if (proto_get(body, "stop_on_error") != NULL &&
	    proto_get(body, "stop_on_error")->type != MSGPACK_OBJECT_NIL &&
	    proto_get_bool(body, "stop_on_error", &stop) != 0) {
		peer_send_error(p, id, "invalid_argument",
		    "stop_on_error must be a boolean");
		return;
	}
	for (i = 0; i < n; i++) {
		ref = &ids->via.array.ptr[i];
		cell = NULL;
		if (ref->type == MSGPACK_OBJECT_STR) {
			char	*s = xstrndup(ref->via.str.ptr,
			    ref->via.str.size);
			cell = room_nb_find(r->nb, s, NULL);
			free(s);
		} else if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    ref->via.u64 < r->nb->ncells)
			cell = r->nb->cells[ref->via.u64];
		if (cell == NULL) {
			if (ref->type == MSGPACK_OBJECT_STR)
				peer_send_error(p, id, "cell_not_found",
				    "no cell %.*s in this notebook",
				    (int)ref->via.str.size, ref->via.str.ptr);
			else
				peer_send_error(p, id, "cell_not_found",
				    "cell reference %zu is not a cell", i);
			return;
		}
	}
	if (room_kernel_dead(r, &why)) {
		peer_send_error(p, id, "kernel_unavailable", "kernel %s is not "
		    "running: %s", r->kernel_name, why);
		return;
	}

	e = xcalloc(1, sizeof *e);
	util_uuid(e->id);
	e->room = r;
	e->stop_on_error = stop;
	e->status = ROOM_EXEC_QUEUED;
	e->ncells = n;
	e->cells = xcalloc(n, sizeof *e->cells);
	for (i = 0; i < n; i++) {
		ref = &ids->via.array.ptr[i];
		if (ref->type == MSGPACK_OBJECT_STR) {
			char	*s = xstrndup(ref->via.str.ptr,
			    ref->via.str.size);
			cell = room_nb_find(r->nb, s, NULL);
			free(s);
		} else
			cell = r->nb->cells[ref->via.u64];
		e->cells[i].cell_id = xstrdup(cell->id);
		e->cells[i].source = xmalloc(cell->source_len + 1);
		memcpy(e->cells[i].source, cell->source, cell->source_len + 1);
		e->cells[i].source_len = cell->source_len;
		e->cells[i].type = cell->type;
		e->cells[i].execution_count = -1;
		e->cells[i].outputs = json_object_new_array();
	}
	TAILQ_INSERT_TAIL(&r->execs->active, e, entry);
	log_info("run %s: %zu cells queued in room %s", e->id, n, r->id);
	room_exec_kick(r);
	room_exec_reply(e, p, id);
}

static struct room_exec *
room_exec_find(struct room *r, const char *id, size_t len)
{
	struct room_exec	*e;

	TAILQ_FOREACH(e, &r->execs->active, entry) {
		if (strlen(e->id) == len && memcmp(e->id, id, len) == 0)
			return (e);
	}
	TAILQ_FOREACH(e, &r->execs->finished, entry) {
		if (strlen(e->id) == len && memcmp(e->id, id, len) == 0)
			return (e);
	}
	return (NULL);
}

static void
room_exec_wait_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct room_exec_wait	*w = arg;

	room_exec_reply(w->exec, w->peer, w->id);
	room_exec_wait_free(w);
}

/* EXEC_GET {execution_id, timeout_ms?} */
void
room_exec_get(struct room *r, struct peer *p, uint32_t id,
    const msgpack_object *body)
{
	struct room_exec	*e;
	struct room_exec_wait	*w;
	struct timeval		 tv;
	const char		*eid;
	size_t			 len;
	int64_t			 timeout = 0;

	if ((eid = proto_get_str(body, "execution_id", &len)) == NULL) {
		peer_send_error(p, id, "invalid_argument",
		    "execution_id is required");
		return;
	}
	if (proto_get(body, "timeout_ms") != NULL &&
	    proto_get(body, "timeout_ms")->type != MSGPACK_OBJECT_NIL &&
	    (proto_get_int(body, "timeout_ms", &timeout) != 0 ||
	    timeout < 0 || timeout > RUNTIMED_WAIT_MAX_MS)) {
		peer_send_error(p, id, "invalid_argument",
		    "timeout_ms must be an integer from 0 to %d",
		    RUNTIMED_WAIT_MAX_MS);
		return;
	}
	if ((e = room_exec_find(r, eid, len)) == NULL) {
		peer_send_error(p, id, "execution_not_found",
		    "no run %.*s in this notebook", (int)len, eid);
		return;
	}
	if (room_exec_terminal(e) || timeout == 0) {
		room_exec_reply(e, p, id);
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->peer = p;
	w->id = id;
	w->exec = e;
	w->timer = evtimer_new(runtimed_base, room_exec_wait_timeout, w);
	tv.tv_sec = timeout / 1000;
	tv.tv_usec = (timeout % 1000) * 1000;
	evtimer_add(w->timer, &tv);
	TAILQ_INSERT_TAIL(&room_exec_waits, w, entry);
}

/* The run and cell an agent event is about: the head run's current. */
static struct room_exec_cell *
room_exec_event(struct room *r, const msgpack_object *body,
    struct room_exec **ep)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	const char		*eid, *cid;
	size_t			 elen, clen;

	if ((e = TAILQ_FIRST(&r->execs->active)) == NULL || !e->sent)
		return (NULL);
	eid = proto_get_str(body, "exec_id", &elen);
	cid = proto_get_str(body, "cell_id", &clen);
	if (eid == NULL || strlen(e->id) != elen ||
	    memcmp(e->id, eid, elen) != 0)
		return (NULL);
	c = &e->cells[e->current];
	if (cid != NULL && (strlen(c->cell_id) != clen ||
	    memcmp(c->cell_id, cid, clen) != 0))
		return (NULL);
	*ep = e;
	return (c);
}

static struct room_cell *
room_exec_room_cell(struct room *r, struct room_exec_cell *c)
{
	struct room_cell	*cell;

	cell = room_nb_find(r->nb, c->cell_id, NULL);
	if (cell == NULL || cell->type != ROOM_CELL_CODE)
		return (NULL);
	return (cell);
}

void
room_exec_started(struct room *r, const msgpack_object *body)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;
	int64_t			 ec;

	if ((c = room_exec_event(r, body, &e)) == NULL)
		return;
	c->status = ROOM_EXEC_CELL_RUNNING;
	if (proto_get_int(body, "execution_count", &ec) == 0 && ec >= 0)
		c->execution_count = ec;
	if ((cell = room_exec_room_cell(r, c)) != NULL) {
		room_nb_clear_outputs(cell);
		cell->execution_count = c->execution_count;
	}
	room_changed(r, NULL, "outputs");
}

/*
 * Append an output, merging a stream into a previous one of the same
 * name as Jupyter front ends do.
 */
static void
room_exec_append(struct json_object *outs, struct json_object *out)
{
	struct json_object	*last, *t1, *t2, *n1, *n2, *m;
	size_t			 n;
	char			*text;

	n = json_object_array_length(outs);
	last = n > 0 ? json_object_array_get_idx(outs, n - 1) : NULL;
	if (last != NULL &&
	    json_object_object_get_ex(last, "output_type", &t1) &&
	    json_object_object_get_ex(out, "output_type", &t2) &&
	    strcmp(json_object_get_string(t1), "stream") == 0 &&
	    strcmp(json_object_get_string(t2), "stream") == 0 &&
	    json_object_object_get_ex(last, "name", &n1) &&
	    json_object_object_get_ex(out, "name", &n2) &&
	    strcmp(json_object_get_string(n1),
	    json_object_get_string(n2)) == 0 &&
	    json_object_object_get_ex(last, "text", &t1) &&
	    json_object_object_get_ex(out, "text", &t2) &&
	    json_object_is_type(t1, json_type_string) &&
	    json_object_is_type(t2, json_type_string)) {
		size_t	l1 = (size_t)json_object_get_string_len(t1);
		size_t	l2 = (size_t)json_object_get_string_len(t2);

		text = xmalloc(l1 + l2 + 1);
		memcpy(text, json_object_get_string(t1), l1);
		memcpy(text + l1, json_object_get_string(t2), l2);
		m = json_object_new_object();
		json_object_object_add(m, "output_type",
		    json_object_new_string("stream"));
		json_object_object_add(m, "name",
		    json_object_new_string(json_object_get_string(n1)));
		json_object_object_add(m, "text",
		    json_object_new_string_len(text, (int)(l1 + l2)));
		free(text);
		json_object_array_put_idx(outs, n - 1, m);
		return;
	}
	json_object_array_add(outs, json_object_get(out));
}

void
room_exec_output(struct room *r, const msgpack_object *body)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;
	struct json_object	*out;
	const msgpack_object	*o;

	if ((c = room_exec_event(r, body, &e)) == NULL)
		return;
	if ((o = proto_get_map(body, "output")) == NULL ||
	    (out = mpjson_unpack(o)) == NULL)
		return;
	cell = room_exec_room_cell(r, c);
	if (c->clear_wait) {
		json_object_put(c->outputs);
		c->outputs = json_object_new_array();
		if (cell != NULL)
			room_nb_clear_outputs(cell);
		c->clear_wait = 0;
	}
	room_exec_append(c->outputs, out);
	if (cell != NULL)
		room_exec_append(cell->outputs, out);
	json_object_put(out);
	room_changed(r, NULL, "outputs");
}

void
room_exec_clear(struct room *r, const msgpack_object *body)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;
	int			 wait = 0;

	if ((c = room_exec_event(r, body, &e)) == NULL)
		return;
	proto_get_bool(body, "wait", &wait);
	if (wait) {
		c->clear_wait = 1;
		return;
	}
	json_object_put(c->outputs);
	c->outputs = json_object_new_array();
	if ((cell = room_exec_room_cell(r, c)) != NULL)
		room_nb_clear_outputs(cell);
	room_changed(r, NULL, "outputs");
}

void
room_exec_done(struct room *r, const msgpack_object *body)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;
	const char		*st;
	size_t			 len;
	int64_t			 ec;

	if ((c = room_exec_event(r, body, &e)) == NULL)
		return;
	if (proto_get_int(body, "execution_count", &ec) == 0 && ec >= 0)
		c->execution_count = ec;
	if ((cell = room_exec_room_cell(r, c)) != NULL)
		cell->execution_count = c->execution_count;
	st = proto_get_str(body, "status", &len);
	e->sent = 0;
	e->current++;
	if (st != NULL && len == 2 && memcmp(st, "ok", 2) == 0)
		c->status = ROOM_EXEC_CELL_OK;
	else if (e->interrupted) {
		c->status = ROOM_EXEC_CELL_INTERRUPTED;
		room_changed(r, NULL, "outputs");
		room_exec_finish(e, ROOM_EXEC_INTERRUPTED);
		room_exec_kick(r);
		return;
	} else if (st != NULL && len == 5 && memcmp(st, "error", 5) == 0) {
		c->status = ROOM_EXEC_CELL_ERROR;
		e->had_error = 1;
	} else {
		/* aborted: the kernel refused it; nothing after can run */
		c->status = ROOM_EXEC_CELL_NOT_RUN;
		e->had_error = 1;
		room_changed(r, NULL, "outputs");
		room_exec_finish(e, ROOM_EXEC_ERROR);
		room_exec_kick(r);
		return;
	}
	room_changed(r, NULL, "outputs");
	if (c->status == ROOM_EXEC_CELL_ERROR && e->stop_on_error)
		room_exec_finish(e, ROOM_EXEC_ERROR);
	else if (e->current >= e->ncells)
		room_exec_finish(e, e->had_error ? ROOM_EXEC_ERROR :
		    ROOM_EXEC_DONE);
	room_exec_kick(r);
}

/* The kernel died: the run in flight ends kernel_died, so do the queued. */
void
room_exec_kernel_died(struct room *r, const char *why)
{
	struct room_exec	*e;

	while ((e = TAILQ_FIRST(&r->execs->active)) != NULL) {
		if (e->sent)
			e->cells[e->current].status =
			    ROOM_EXEC_CELL_KERNEL_DIED;
		free(e->message);
		e->message = xstrdup(why);
		room_exec_finish(e, ROOM_EXEC_KERNEL_DIED);
	}
}

/*
 * Interrupt: queued runs end interrupted now; the running cell ends
 * interrupted when the kernel reports it, or now on a restart (reason
 * set), when no report will come.
 */
void
room_exec_interrupt(struct room *r, const char *reason)
{
	struct room_exec	*e, *e1;

	TAILQ_FOREACH_SAFE(e, &r->execs->active, entry, e1) {
		if (e->sent && reason == NULL) {
			e->interrupted = 1;
			continue;
		}
		if (e->sent)
			e->cells[e->current].status =
			    ROOM_EXEC_CELL_INTERRUPTED;
		if (reason != NULL) {
			free(e->message);
			e->message = xstrdup(reason);
		}
		room_exec_finish(e, ROOM_EXEC_INTERRUPTED);
	}
}

/* A client went away: drop its parked EXEC_GETs. */
void
room_exec_peer_gone(struct peer *p)
{
	struct room_exec_wait	*w, *w1;

	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->peer == p)
			room_exec_wait_free(w);
	}
}
