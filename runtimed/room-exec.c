/* SPDX-License-Identifier: ISC */
/*
 * room-exec.c: tracked runs.  A run snapshots its cells' sources, waits
 * in the room's FIFO, and is fed to the kernel one cell at a time.
 * Outputs go both to the run's record and to the room's cell.
 *
 * Records are durable (runtimed_store): a run is written shortly after
 * it is submitted if it has not finished by then, and again when it
 * finishes; the store keeps the last RUNTIMED_RUNS_KEPT per notebook and
 * everything finished within the last hour.  Writes are deferred by
 * ROOM_EXEC_PERSIST_MS and written by the store's writer thread
 * (store-writer.c), so neither a reply nor the next run waits for an
 * fsync.  A record
 * written while its run was in flight, under an earlier daemon
 * incarnation, is answered as kernel_died ("the daemon restarted").
 */

#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

struct room_exec_cell {
	char				*cell_id;
	char				*source;
	size_t				 source_len;
	enum room_cell_type		 type;
	enum proto_cell_status		 status;
	int64_t				 execution_count;
	struct proto_outputs		 outputs;	/* as the agent sent them */
	int				 clear_wait;
};

/* Delay before a record is queued for writing. */
#define ROOM_EXEC_PERSIST_MS	20

/* Most runs one EXEC_TASKS lists (a few per hour is what a client has). */
#define ROOM_EXEC_TASKS_MAX	1000

struct room_exec {
	char			 id[37];
	int			 persist;	/* on room_exec_persists */
	TAILQ_ENTRY(room_exec)	 pentry;
	struct room		*room;
	enum proto_run_status	 status;
	int			 stop_on_error;
	int			 had_error;
	int			 interrupted;	/* while running */
	char			*message;
	struct room_exec_cell	*cells;
	size_t			 ncells;
	size_t			 current;
	int			 sent;	/* current cell in kernel */
	uint32_t		 req;	/* its AGENT_EXECUTE's id */
	char			*task_owner;	/* an MCP task's, or NULL */
	int			 cancelled;	/* EXEC_CANCEL: ends so */
	int64_t			 updated_at;	/* ms: last status change */
	TAILQ_ENTRY(room_exec)	 entry;
	/* Who asked, when, and in which kernel it ran (NULL: unknown). */
	char			*client_name;
	char			*client_version;
	char			*session;
	int64_t			 submitted_at;	/* us; created_at in ms */
	char			*kernel_session;
};
TAILQ_HEAD(room_exec_list, room_exec);

/* The longest name of a client kept in a record. */
#define ROOM_EXEC_WHO_MAX	128

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

/* Records waiting to be written. */
static TAILQ_HEAD(, room_exec) room_exec_persists =
    TAILQ_HEAD_INITIALIZER(room_exec_persists);
static struct event	*room_exec_persist_ev;

static void	room_exec_pack(struct room_exec *, msgpack_packer *, int);
static void	room_exec_write(struct room_exec *);
static void	room_exec_mint_id(struct room *, char [37]);
static int64_t	room_exec_timeout(struct peer *, uint32_t, int, int64_t);
static void	room_exec_answer(struct room_exec *, struct peer *, uint32_t,
		    int64_t);
static void	room_exec_fail(struct room_exec *, const char *);
static void	room_exec_wait_free(struct room_exec_wait *);
static void	room_exec_destroy(struct room_exec *);
static int	room_exec_terminal(struct room_exec *);
static void	room_exec_pack_cells(msgpack_packer *, const void *);
static void	room_exec_send(struct peer *, uint32_t, const char *, size_t);
static void	room_exec_reply(struct room_exec *, struct peer *, uint32_t);
static void	room_exec_written(int, const char *, void *);
static void	room_exec_queue_all(void);
static void	room_exec_persist_cb(evutil_socket_t, short, void *);
static void	room_exec_persist(struct room_exec *);
static void	room_exec_finish(struct room_exec *, enum proto_run_status);
static struct room_exec	*room_exec_find(struct room *, const char *, size_t);
static void	room_exec_wait_timeout(evutil_socket_t, short, void *);
static int	room_exec_orphaned(const msgpack_object *);
static void	room_exec_pack_none(msgpack_packer *, const void *);
static struct room_cell	**room_exec_resolve(struct room *, struct peer *,
		    uint32_t, const msgpack_object *, size_t *);
static struct room_cell	**room_exec_select(struct room *, struct peer *,
		    uint32_t, enum proto_run_select, size_t *);
static int	room_exec_get_lost(struct room *, struct peer *, uint32_t,
		    const char *, size_t);
static int	room_exec_get_stored(struct room *, struct peer *, uint32_t,
		    const char *, size_t);
static int	room_exec_is(const struct proto_str *, const char *);
static struct room_exec_cell	*room_exec_event(struct room *,
		    const struct proto_str *, const struct proto_str *,
		    struct room_exec **);
static struct room_cell	*room_exec_room_cell(struct room *,
		    struct room_exec_cell *);
static int	room_exec_dropped_obj(const msgpack_object *);
static int	room_exec_is_stream(const msgpack_object *);
static int	room_exec_same_name(const msgpack_object *,
		    const msgpack_object *);
static void	room_exec_add(struct proto_outputs *, const msgpack_object *);
static void	room_exec_add_plain(struct proto_outputs *,
		    const msgpack_object *);
static int	room_exec_update_outputs(struct proto_outputs *,
		    const char *, const msgpack_object *);
static void	room_exec_update_display(struct room *,
		    const struct proto_str *, const msgpack_object *);
static void	room_exec_run(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_exec_get(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_exec_cancel(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_exec_tasks(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The requests this file answers: server-client.c tries this table, its
 * handlers given the room (NULL for EXEC_TASKS, room-less;
 * docs/decisions/096).
 */
const struct peer_dispatch room_exec_table[] = {
	{ PROTO_MSG_EXEC_RUN, PEER_DISPATCH_UNPACK, room_exec_run },
	{ PROTO_MSG_EXEC_GET, PEER_DISPATCH_UNPACK, room_exec_get },
	{ PROTO_MSG_EXEC_CANCEL, PEER_DISPATCH_UNPACK, room_exec_cancel },
	{ PROTO_MSG_EXEC_TASKS, PEER_DISPATCH_UNPACK, room_exec_tasks },
	{ 0, 0, NULL }
};

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

	if (e->persist)
		room_exec_write(e);
	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->exec == e)
			room_exec_wait_free(w);
	}
	for (i = 0; i < e->ncells; i++) {
		free(e->cells[i].cell_id);
		free(e->cells[i].source);
		proto_outputs_free(&e->cells[i].outputs);
	}
	free(e->cells);
	free(e->message);
	free(e->task_owner);
	free(e->client_name);
	free(e->client_version);
	free(e->session);
	free(e->kernel_session);
	free(e);
}

/* A who field as kept: at most ROOM_EXEC_WHO_MAX characters, or NULL. */
static char *
room_exec_who(const struct proto_str *s)
{
	if (s->ptr == NULL || !utf8_valid(s->ptr, s->len, NULL))
		return (NULL);
	return (xstrndup(s->ptr, utf8_skip(s->ptr, s->len,
	    ROOM_EXEC_WHO_MAX)));
}

void
room_exec_free(struct room *r)
{
	struct room_exec	*e, *e1;
	size_t			 i;

	if (r->execs == NULL)
		return;
	room_input_clear(r);
	TAILQ_FOREACH_SAFE(e, &r->execs->active, entry, e1) {
		/* The daemon is stopping: the record says so. */
		for (i = 0; i < e->ncells; i++) {
			if (e->cells[i].status == PROTO_CELL_RUNNING)
				e->cells[i].status =
				    PROTO_CELL_KERNEL_DIED;
			else if (e->cells[i].status == PROTO_CELL_QUEUED)
				e->cells[i].status = PROTO_CELL_NOT_RUN;
		}
		if (e->status == PROTO_RUN_RUNNING || e->sent)
			e->status = PROTO_RUN_KERNEL_DIED;
		else
			e->status = PROTO_RUN_CANCELLED;
		free(e->message);
		e->message = xstrdup("the daemon stopped before the run "
		    "finished");
		room_exec_write(e);
		room_exec_destroy(e);
	}
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

/* Is cell id queued or running in one of the room's active runs? */
int
room_exec_cell_busy(struct room *r, const char *id)
{
	struct room_exec	*e;
	size_t			 i;

	if (r->execs == NULL)
		return (0);
	TAILQ_FOREACH(e, &r->execs->active, entry) {
		for (i = 0; i < e->ncells; i++) {
			if ((e->cells[i].status == PROTO_CELL_QUEUED ||
			    e->cells[i].status == PROTO_CELL_RUNNING) &&
			    strcmp(e->cells[i].cell_id, id) == 0)
				return (1);
		}
	}
	return (0);
}

/*
 * The live view's cells of the room's active runs: [{cell_id, status}]
 * for each cell running or queued, in run order (VIEW_STATE).
 */
void
room_exec_pack_active(msgpack_packer *pk, const void *arg)
{
	struct room		*r = (struct room *)arg;
	struct room_exec	*e;
	size_t			 i, n = 0;
	int			 pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			msgpack_pack_array(pk, n);
		TAILQ_FOREACH(e, &r->execs->active, entry) {
			for (i = 0; i < e->ncells; i++) {
				if (e->cells[i].status != PROTO_CELL_QUEUED &&
				    e->cells[i].status != PROTO_CELL_RUNNING)
					continue;
				if (pass == 0) {
					n++;
					continue;
				}
				msgpack_pack_map(pk, 2);
				proto_pack_str(pk, "cell_id",
				    e->cells[i].cell_id);
				proto_pack_str(pk, "status",
				    proto_cell_status_name(
				    e->cells[i].status));
			}
		}
	}
}

static int
room_exec_terminal(struct room_exec *e)
{
	return (proto_run_status_ended(e->status));
}

/*
 * A reply (not a record) gives each cell that ran its version now, so a
 * run's result names the version an edit may expect (issue 34).
 */
static int	room_exec_packing_live;

/* EXEC_STATE {execution_id, status, cells: [...]} */
static void
room_exec_pack_cells(msgpack_packer *pk, const void *arg)
{
	const struct room_exec		*e = arg;
	const struct room_exec_cell	*c;
	struct room_cell		*rc;
	char				 version[ROOM_VERSION_LEN + 1];
	size_t				 i;

	msgpack_pack_array(pk, e->ncells);
	for (i = 0; i < e->ncells; i++) {
		c = &e->cells[i];
		rc = NULL;
		if (room_exec_packing_live && e->room->nb != NULL &&
		    c->status != PROTO_CELL_QUEUED)
			rc = room_nb_find(e->room->nb, c->cell_id, NULL);
		msgpack_pack_map(pk, 6 + (rc != NULL));
		proto_pack_str(pk, "cell_id", c->cell_id);
		if (rc != NULL) {
			room_cell_version(rc, version);
			proto_pack_str(pk, "version", version);
		}
		proto_pack_str(pk, "cell_type", room_nb_type_name(c->type));
		proto_pack_str(pk, "status", proto_cell_status_name(c->status));
		if (c->execution_count >= 0)
			proto_pack_int(pk, "execution_count",
			    c->execution_count);
		else
			proto_pack_nil(pk, "execution_count");
		proto_pack_strn(pk, "source", c->source, c->source_len);
		proto_pack_key(pk, "outputs");
		proto_outputs_pack(pk, &c->outputs);
	}
}

/* live: for a reply, with a question waiting (a record never has one). */
static void
room_exec_pack(struct room_exec *e, msgpack_packer *pk, int live)
{
	struct proto_exec_state	m;

	memset(&m, 0, sizeof m);
	m.execution_id = proto_str_make(e->id);
	m.daemon_started_at = runtimed_incarnation.started_at;
	m.notebook_id = proto_str_make(e->room->id);
	m.status = proto_str_make(proto_run_status_name(e->status));
	m.message = proto_str_make(e->message);
	m.cells.pack = room_exec_pack_cells;
	m.cells.arg = e;
	m.task_owner = proto_str_make(e->task_owner);
	m.created_at = e->submitted_at / 1000;
	m.updated_at = e->updated_at;
	if (live && room_input_pending(e->room, e->id)) {
		m.status = proto_str_make(proto_run_status_name(
		    PROTO_RUN_INPUT_REQUIRED));
		m.input.pack = room_input_pack;
		m.input.arg = e->room;
	}
	m.who.client_name = proto_str_make(e->client_name);
	m.who.client_version = proto_str_make(e->client_version);
	m.who.session = proto_str_make(e->session);
	m.has_submitted_at = 1;
	m.submitted_at = e->submitted_at;
	m.kernel_session = proto_str_make(e->kernel_session);
	room_exec_packing_live = live;
	proto_exec_state_pack(pk, &m);
	room_exec_packing_live = 0;
}

/*
 * Send a packed EXEC_STATE.  One over its cap goes without its outputs,
 * and its message says why, so the request is still answered.
 */
static void
room_exec_send(struct peer *p, uint32_t id, const char *data, size_t len)
{
	const msgpack_object	*rec;
	msgpack_unpacked	 u, nu;
	struct mpbuf		 b, nb;
	size_t			 off = 0;
	char			*msg;

	if (len <= proto_msg_cap(PROTO_MSG_EXEC_STATE)) {
		peer_send_raw(p, PROTO_MSG_EXEC_STATE, id, data, len);
		return;
	}
	msgpack_unpacked_init(&u);
	msgpack_unpacked_init(&nu);
	mpbuf_init(&nb);
	if (proto_frame_unpack(&u, data, len, &off) != 0 ||
	    (rec = room_record_normal(&u.data, &nb, &nu)) == NULL) {
		msgpack_unpacked_destroy(&u);
		msgpack_unpacked_destroy(&nu);
		mpbuf_free(&nb);
		peer_send_error(p, id, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "the run's state could not be read back");
		return;
	}
	xasprintf(&msg, "the outputs of this run are %.1f MB, over the %u MiB "
	    "cap of EXEC_STATE, and are left out: read them a cell at a time "
	    "with inspect_notebook", len / 1e6,
	    proto_msg_cap(PROTO_MSG_EXEC_STATE) / (1024 * 1024));
	log_warnx("%s", msg);
	mpbuf_init(&b);
	room_record_omit(&b.pk, rec, msg);
	peer_send(p, PROTO_MSG_EXEC_STATE, id, &b.sb);
	mpbuf_free(&b);
	msgpack_unpacked_destroy(&u);
	msgpack_unpacked_destroy(&nu);
	mpbuf_free(&nb);
	free(msg);
}

static void
room_exec_reply(struct room_exec *e, struct peer *p, uint32_t id)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	room_exec_pack(e, &b.pk, 1);
	room_exec_send(p, id, b.sb.data, b.sb.size);
	mpbuf_free(&b);
}

/* Hand one record to the store's writer thread. */
static void
room_exec_write(struct room_exec *e)
{
	struct mpbuf	 b;

	if (e->persist) {
		TAILQ_REMOVE(&room_exec_persists, e, pentry);
		e->persist = 0;
	}
	if (runtimed_writer == NULL)
		return;
	mpbuf_init(&b);
	room_exec_pack(e, &b.pk, 0);
	/* The writer frees the buffer. */
	store_writer_exec(runtimed_writer, e->id, e->room->id,
	    RUNTIMED_RUNS_KEPT, b.sb.data, b.sb.size, room_exec_written,
	    xstrdup(e->id));
	b.sb.data = NULL;
	b.sb.size = b.sb.alloc = 0;
	mpbuf_free(&b);
}

/* A record is in the store, or could not be written. */
static void
room_exec_written(int ok, const char *cause, void *arg)
{
	char	*id = arg;

	if (!ok)
		log_warnx("run %s: not recorded: %s", id, cause);
	free(id);
}

/* Hand every pending record to the writer. */
static void
room_exec_queue_all(void)
{
	struct room_exec	*e;

	while ((e = TAILQ_FIRST(&room_exec_persists)) != NULL)
		room_exec_write(e);
}

/*
 * Write every pending record and wait until they are in the store
 * (before a store read, and before the store closes).
 */
void
room_exec_flush(void)
{
	room_exec_queue_all();
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
}

static void
room_exec_persist_cb(evutil_socket_t fd, short events, void *arg)
{
	room_exec_queue_all();
}

/* Write the record soon, in its state then. */
static void
room_exec_persist(struct room_exec *e)
{
	struct timeval	tv = { 0, ROOM_EXEC_PERSIST_MS * 1000 };

	if (!e->persist) {
		TAILQ_INSERT_TAIL(&room_exec_persists, e, pentry);
		e->persist = 1;
	}
	if (room_exec_persist_ev == NULL)
		room_exec_persist_ev = evtimer_new(runtimed_base,
		    room_exec_persist_cb, NULL);
	if (!evtimer_pending(room_exec_persist_ev, NULL))
		evtimer_add(room_exec_persist_ev, &tv);
}

/* The run reached a terminal state: record it, answer its waiters. */
static void
room_exec_finish(struct room_exec *e, enum proto_run_status status)
{
	struct room_execs	*x = e->room->execs;
	struct room_exec_wait	*w, *w1;
	struct room_exec	*old;
	size_t			 i;

	for (i = 0; i < e->ncells; i++) {
		if (e->cells[i].status == PROTO_CELL_QUEUED ||
		    e->cells[i].status == PROTO_CELL_RUNNING)
			e->cells[i].status = PROTO_CELL_NOT_RUN;
	}
	/* A cancelled task stays cancelled, however its cell ended. */
	if (e->cancelled)
		status = PROTO_RUN_CANCELLED;
	e->status = status;
	e->updated_at = util_now_us() / 1000;
	e->sent = 0;
	TAILQ_REMOVE(&x->active, e, entry);
	TAILQ_INSERT_HEAD(&x->finished, e, entry);
	if (++x->nfinished > RUNTIMED_RUNS_KEPT) {
		old = TAILQ_LAST(&x->finished, room_exec_list);
		TAILQ_REMOVE(&x->finished, old, entry);
		x->nfinished--;
		room_exec_destroy(old);
	}
	log_info("run %s: %s", e->id, proto_run_status_name(status));
	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->exec != e)
			continue;
		room_exec_reply(e, w->peer, w->id);
		room_exec_wait_free(w);
	}
	room_exec_persist(e);
}

/* Feed the kernel the next cell of the head run, if it can take one. */
void
room_exec_kick(struct room *r)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	int64_t			 req;
	char			*cause;

	while ((e = TAILQ_FIRST(&r->execs->active)) != NULL) {
		if (e->sent || !room_kernel_ready(r))
			return;
		if (e->status != PROTO_RUN_RUNNING)
			e->updated_at = util_now_us() / 1000;
		e->status = PROTO_RUN_RUNNING;
		while (e->current < e->ncells &&
		    e->cells[e->current].type != ROOM_CELL_CODE) {
			/* Markdown and raw cells run by being there. */
			e->cells[e->current].status = PROTO_CELL_OK;
			e->current++;
		}
		if (e->current >= e->ncells) {
			room_exec_finish(e, e->had_error ? PROTO_RUN_ERROR :
			    PROTO_RUN_DONE);
			continue;
		}
		c = &e->cells[e->current];
		req = room_kernel_execute(r, e->id, c->cell_id, c->source,
		    c->source_len, &cause);
		if (req == 0)
			return;
		if (req == -1) {
			room_exec_fail(e, cause);
			free(cause);
			continue;
		}
		e->sent = 1;
		e->req = (uint32_t)req;
		return;
	}
}

/*
 * The head run's current cell cannot run (too large to send, or refused
 * by the agent): it and the run end as error with why, and the cells
 * after it are not run.  A run always ends; this is how when the kernel
 * never saw the cell.
 */
static void
room_exec_fail(struct room_exec *e, const char *why)
{
	struct room_exec_cell	*c = &e->cells[e->current];

	log_warnx("run %s: %s", e->id, why);
	c->status = PROTO_CELL_ERROR;
	free(e->message);
	e->message = xstrdup(why);
	e->had_error = 1;
	room_cell_changed(e->room, "outputs", c->cell_id, e->id);
	room_exec_finish(e, PROTO_RUN_ERROR);
}

/*
 * An ERROR from the agent to request id: if it is the AGENT_EXECUTE of
 * the head run's cell in flight, that run ends as error with the agent's
 * message and the next run starts.  -1 if id was no such request.
 */
int
room_exec_refused(struct room *r, uint32_t id, const char *message)
{
	struct room_exec	*e;
	char			*why;

	if ((e = TAILQ_FIRST(&r->execs->active)) == NULL || !e->sent ||
	    e->req != id)
		return (-1);
	xasprintf(&why, "the kernel's agent refused cell %s: %s",
	    e->cells[e->current].cell_id, message);
	room_exec_fail(e, why);
	free(why);
	room_exec_kick(r);
	return (0);
}

/*
 * EXEC_RUN's cell_ids, each resolved once, here: ids or indexes of the
 * notebook as it is.  NULL when one is refused (answered).
 */
static struct room_cell **
room_exec_resolve(struct room *r, struct peer *p, uint32_t id,
    const msgpack_object *ids, size_t *np)
{
	struct room_cell	**cells;
	const char		 *code;
	char			 *cause = NULL, what[40];
	size_t			  i, n = ids->via.array.size;

	if (n == 0) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "cell_ids must be a non-empty list");
		return (NULL);
	}
	if (n > PROTO_RUN_MAX_CELLS) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "a run takes at most %d cells, not %zu",
		    PROTO_RUN_MAX_CELLS, n);
		return (NULL);
	}
	cells = xreallocarray(NULL, n, sizeof *cells);
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof what, "cell_ids[%zu]: ", i);
		if ((cells[i] = room_nb_ref(r->nb, &ids->via.array.ptr[i],
		    what, &cause, &code)) == NULL) {
			peer_send_error(p, id, code, "%s", cause);
			free(cause);
			free(cells);
			return (NULL);
		}
		if (cells[i]->type == ROOM_CELL_UNKNOWN) {
			peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
			    "%scell %s is of type \"%s\", which runtimed "
			    "cannot run",
			    what, cells[i]->id,
			    room_nb_cell_type_name(cells[i]));
			free(cells);
			return (NULL);
		}
	}
	*np = n;
	return (cells);
}

/*
 * EXEC_RUN's select: the code cells in notebook order as the run is
 * queued, all of them or those a read shows stale (room-stale.c), so no
 * client reads the notebook first to list them.  NULL when none or too
 * many (answered): no stale cell is a run of nothing, answered as done
 * with no execution_id and no cells.
 */
static struct room_cell **
room_exec_select(struct room *r, struct peer *p, uint32_t id,
    enum proto_run_select sel, size_t *np)
{
	struct room_cell	**cells, **up = NULL;
	struct proto_exec_state	  m;
	struct mpbuf		  b;
	int			 *stale = NULL;
	size_t			  i, n = 0;

	if (sel == PROTO_RUN_SELECT_STALE)
		stale = room_stale_compute(r, &up);
	cells = xreallocarray(NULL, r->nb->ncells + 1, sizeof *cells);
	for (i = 0; i < r->nb->ncells; i++) {
		if (r->nb->cells[i]->type == ROOM_CELL_CODE &&
		    (stale == NULL || stale[i] != 0))
			cells[n++] = r->nb->cells[i];
	}
	free(stale);
	free(up);
	if (n > 0 && n <= PROTO_RUN_MAX_CELLS) {
		*np = n;
		return (cells);
	}
	free(cells);
	if (n > 0)
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT, "the notebook "
		    "has more than %d %scode cells; run them in parts with "
		    "cell_ids", PROTO_RUN_MAX_CELLS,
		    sel == PROTO_RUN_SELECT_STALE ? "stale " : "");
	else if (sel == PROTO_RUN_SELECT_ALL)
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "the notebook has no code cells to run");
	else {
		memset(&m, 0, sizeof m);
		m.execution_id = proto_str_make("");
		m.daemon_started_at = runtimed_incarnation.started_at;
		m.notebook_id = proto_str_make(r->id);
		m.status = proto_str_make(proto_run_status_name(
		    PROTO_RUN_DONE));
		m.cells.pack = room_exec_pack_none;
		mpbuf_init(&b);
		proto_exec_state_pack(&b.pk, &m);
		peer_send(p, PROTO_MSG_EXEC_STATE, id, &b.sb);
		mpbuf_free(&b);
	}
	return (NULL);
}

/*
 * EXEC_RUN {cell_ids | select, stop_on_error?, timeout_ms?, ...}: the
 * cells' sources as they are now, queued on the room's kernel.
 */
static void
room_exec_run(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_run	*m = mv;
	struct room			*r = arg;
	struct room_exec		*e;
	struct room_cell		*cell, **cells;
	const char			*why;
	uint32_t			 id = hdr->id;
	size_t				 i, n;
	int64_t				 timeout;
	int				 stop = 1;
	/* With timeout_ms the reply waits like EXEC_GET: one round trip. */
	if ((timeout = room_exec_timeout(p, id, m->has_timeout_ms,
	    m->timeout_ms)) < 0)
		return;
	if (m->has_stop_on_error)
		stop = m->stop_on_error;
	if (m->select == PROTO_RUN_SELECT_IDS)
		cells = room_exec_resolve(r, p, id, m->cell_ids.obj, &n);
	else
		cells = room_exec_select(r, p, id, m->select, &n);
	if (cells == NULL)
		return;
	if (r->kernel != NULL && room_kernel_dead(r, &why)) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "kernel %s is not "
		    "running: %s; call restart_kernel to start a fresh one "
		    "(its variables are gone)", r->kernel_name, why);
		free(cells);
		return;
	}

	e = xcalloc(1, sizeof *e);
	room_exec_mint_id(r, e->id);
	e->room = r;
	e->stop_on_error = stop;
	e->status = PROTO_RUN_QUEUED;
	e->task_owner = proto_str_dup(&m->task_owner);
	e->client_name = room_exec_who(&m->who.client_name);
	e->client_version = room_exec_who(&m->who.client_version);
	e->session = room_exec_who(&m->who.session);
	e->submitted_at = util_now_us();
	e->updated_at = e->submitted_at / 1000;
	e->ncells = n;
	e->cells = xcalloc(n, sizeof *e->cells);
	for (i = 0; i < n; i++) {
		cell = cells[i];
		e->cells[i].cell_id = xstrdup(cell->id);
		e->cells[i].source = xmalloc(cell->source_len + 1);
		memcpy(e->cells[i].source, cell->source, cell->source_len + 1);
		e->cells[i].source_len = cell->source_len;
		e->cells[i].type = cell->type;
		e->cells[i].execution_count = -1;
		proto_outputs_init(&e->cells[i].outputs);
	}
	free(cells);
	TAILQ_INSERT_TAIL(&r->execs->active, e, entry);
	log_info("run %s: %zu cells queued in room %s", e->id, n, r->id);
	/* Torn down for idleness: the next run brings a kernel back. */
	if (r->kernel == NULL) {
		room_kernel_start(r);
		room_changed(r, NULL, "kernel");
	}
	room_exec_kick(r);
	if (!room_exec_terminal(e))
		room_exec_persist(e);
	room_exec_answer(e, p, id, timeout);
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

/*
 * Was this record (a map) in flight when an earlier daemon died?  It
 * ended then, as far as anyone can tell (room_record_orphan).
 */
static int
room_exec_orphaned(const msgpack_object *rec)
{
	const char		*st;
	size_t			 len;
	enum proto_run_status	 rs;
	int64_t			 inc;

	st = proto_get_str(rec, "status", &len);
	if (proto_get_int(rec, "daemon_started_at", &inc) != 0)
		inc = 0;
	return (st != NULL && proto_run_status_parse(st, len, &rs) == 0 &&
	    !proto_run_status_ended(rs) &&
	    inc != runtimed_incarnation.started_at);
}

/*
 * Execution ids say which notebook and which daemon incarnation issued
 * them: <8 hex of SHA-256(notebook id)>-<12 hex start time in ms>-<14
 * random hex>.  A run is acknowledged before its record reaches the disk
 * (an fsync per run would double the time of a short one), so a daemon
 * killed in between forgets it; the id still tells the next daemon that
 * the run was this notebook's and belonged to an earlier incarnation, and
 * get_results can answer it as ended instead of unknown.
 */
static void
room_exec_mint_id(struct room *r, char id[37])
{
	char		hash[65], rnd[37];
	uint64_t	ms = (uint64_t)runtimed_incarnation.started_at / 1000;

	blob_hash(r->id, strlen(r->id), hash);
	util_uuid(rnd);
	snprintf(id, 37, "%.8s-%012llx-%.4s%.4s%.4s%.2s", hash,
	    (unsigned long long)(ms & 0xffffffffffffULL), rnd + 9, rnd + 14,
	    rnd + 19, rnd + 24);
}

static void
room_exec_pack_none(msgpack_packer *pk, const void *unused)
{
	msgpack_pack_array(pk, 0);
}

/*
 * An id this notebook was given by an earlier daemon, whose run never
 * reached the store: answer it as ended.  -1 if the id is not such.
 */
static int
room_exec_get_lost(struct room *r, struct peer *p, uint32_t id,
    const char *eid, size_t len)
{
	char			 hash[65], *end, inc[13];
	uint64_t		 ms, now = (uint64_t)
				    runtimed_incarnation.started_at / 1000;
	struct proto_exec_state	 m;
	struct mpbuf		 b;

	if (len != 36 || eid[8] != '-' || eid[21] != '-')
		return (-1);
	blob_hash(r->id, strlen(r->id), hash);
	if (memcmp(eid, hash, 8) != 0)
		return (-1);
	memcpy(inc, eid + 9, 12);
	inc[12] = '\0';
	ms = strtoull(inc, &end, 16);
	if (*end != '\0' || ms >= (now & 0xffffffffffffULL))
		return (-1);
	memset(&m, 0, sizeof m);
	m.execution_id.ptr = eid;
	m.execution_id.len = len;
	m.notebook_id = proto_str_make(r->id);
	m.daemon_started_at = runtimed_incarnation.started_at;
	m.status = proto_str_make(proto_run_status_name(PROTO_RUN_KERNEL_DIED));
	m.message = proto_str_make("the daemon stopped before this run was "
	    "recorded; its cells may or may not have run: inspect the "
	    "notebook");
	m.cells.pack = room_exec_pack_none;
	mpbuf_init(&b);
	proto_exec_state_pack(&b.pk, &m);
	peer_send(p, PROTO_MSG_EXEC_STATE, id, &b.sb);
	mpbuf_free(&b);
	return (0);
}

/* EXEC_GET of a run no longer in memory: the store; -1 if not there. */
static int
room_exec_get_stored(struct room *r, struct peer *p, uint32_t id,
    const char *eid, size_t len)
{
	const msgpack_object	*rec;
	msgpack_unpacked	 u, nu;
	struct mpbuf		 b, norm;
	char			*key, *nb = NULL;
	void			*data = NULL;
	size_t			 dlen, off = 0;

	if (runtimed_store == NULL || runtimed_writer == NULL)
		return (-1);
	room_exec_flush();
	key = xstrndup(eid, len);
	if (store_exec_get(runtimed_store, key, &nb, &data, &dlen) != 1) {
		free(key);
		return (-1);
	}
	if (strcmp(nb, r->id) != 0) {
		/* Another notebook's run does not exist here. */
		free(key);
		free(nb);
		free(data);
		return (-1);
	}
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, data, dlen, &off) != 0 ||
	    u.data.type != MSGPACK_OBJECT_MAP) {
		log_warnx("run %s: unreadable record", key);
		msgpack_unpacked_destroy(&u);
		free(key);
		free(nb);
		free(data);
		return (-1);
	}
	msgpack_unpacked_init(&nu);
	mpbuf_init(&norm);
	if (room_exec_orphaned(&u.data) &&
	    (rec = room_record_normal(&u.data, &norm, &nu)) != NULL) {
		mpbuf_init(&b);
		room_record_orphan(&b.pk, rec, runtimed_incarnation.started_at);
		room_exec_send(p, id, b.sb.data, b.sb.size);
		/* The writer frees the buffer. */
		store_writer_exec(runtimed_writer, key, nb, RUNTIMED_RUNS_KEPT,
		    b.sb.data, b.sb.size, room_exec_written, xstrdup(key));
	} else
		room_exec_send(p, id, data, off);
	msgpack_unpacked_destroy(&nu);
	mpbuf_free(&norm);
	msgpack_unpacked_destroy(&u);
	free(key);
	free(nb);
	free(data);
	return (0);
}

/* timeout_ms of an EXEC_RUN or EXEC_GET: 0 when absent, -1 if invalid. */
static int64_t
room_exec_timeout(struct peer *p, uint32_t id, int has, int64_t timeout)
{
	if (!has)
		return (0);
	if (timeout < 0 || timeout > PROTO_WAIT_MAX_MS) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "timeout_ms must be an integer from 0 to %d",
		    PROTO_WAIT_MAX_MS);
		return (-1);
	}
	return (timeout);
}

/* Answer at once if the run is over or nobody waits, else park. */
static void
room_exec_answer(struct room_exec *e, struct peer *p, uint32_t id,
    int64_t timeout)
{
	struct room_exec_wait	*w;
	struct timeval		 tv;

	if (room_exec_terminal(e) || timeout == 0 ||
	    room_input_pending(e->room, e->id)) {
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

/* EXEC_GET {execution_id, timeout_ms?} */
static void
room_exec_get(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_id	*m = mv;
	struct room			*r = arg;
	struct room_exec		*e;
	const char			*eid;
	uint32_t			 id = hdr->id;
	size_t				 len;
	int64_t				 timeout;

	eid = m->execution_id.ptr;
	len = m->execution_id.len;
	if ((timeout = room_exec_timeout(p, id, m->has_timeout_ms,
	    m->timeout_ms)) < 0)
		return;
	if ((e = room_exec_find(r, eid, len)) == NULL) {
		if (room_exec_get_stored(r, p, id, eid, len) != 0 &&
		    room_exec_get_lost(r, p, id, eid, len) != 0)
			peer_send_error(p, id, PROTO_E_EXECUTION_NOT_FOUND,
			    "no run %.*s in this notebook", (int)len, eid);
		return;
	}
	room_exec_answer(e, p, id, timeout);
}

/* Is s the string str? */
static int
room_exec_is(const struct proto_str *s, const char *str)
{
	return (s->ptr != NULL && strlen(str) == s->len &&
	    memcmp(str, s->ptr, s->len) == 0);
}

/* The run and cell an agent event is about: the head run's current. */
static struct room_exec_cell *
room_exec_event(struct room *r, const struct proto_str *exec_id,
    const struct proto_str *cell_id, struct room_exec **ep)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;

	if ((e = TAILQ_FIRST(&r->execs->active)) == NULL || !e->sent)
		return (NULL);
	if (!room_exec_is(exec_id, e->id))
		return (NULL);
	c = &e->cells[e->current];
	if (!room_exec_is(cell_id, c->cell_id))
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
room_exec_started(struct room *r, const struct proto_agent_exec_started *m)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;
	const char		*session;

	if ((c = room_exec_event(r, &m->exec_id, &m->cell_id, &e)) == NULL)
		return;
	c->status = PROTO_CELL_RUNNING;
	if (m->has_execution_count && m->execution_count >= 0)
		c->execution_count = m->execution_count;
	if ((cell = room_exec_room_cell(r, c)) != NULL) {
		room_nb_clear_outputs(cell);
		room_nb_cell_set_count(cell, c->execution_count);
	}
	room_stale_ran(r, c->cell_id, c->source, c->source_len);
	if (e->kernel_session == NULL &&
	    (session = room_kernel_session(r)) != NULL)
		e->kernel_session = xstrdup(session);
	room_cell_changed(r, "outputs", c->cell_id, e->id);
	/* A record written now says which cell a daemon death hit. */
	room_exec_persist(e);
}

/*
 * The agent's note for an output too large to send, or lost: kept as it
 * is, never merged with the stream before or after it.
 */
static int
room_exec_dropped_obj(const msgpack_object *out)
{
	return (proto_get(proto_get_map(out, "transient"),
	    "runtimed_dropped") != NULL);
}

/* Is out a stream output (a view), as strcmp on json-c would say? */
static int
room_exec_is_stream(const msgpack_object *out)
{
	const char	*t;
	size_t		 len;

	return ((t = proto_get_str(out, "output_type", &len)) != NULL &&
	    len >= 6 && memcmp(t, "stream", 6) == 0 &&
	    (len == 6 || t[6] == '\0'));
}

/* Two stream names the same, as strcmp on json-c strings would say? */
static int
room_exec_same_name(const msgpack_object *a, const msgpack_object *b)
{
	const char	*n1, *n2, *z;
	size_t		 l1, l2;

	if ((n1 = proto_get_str(a, "name", &l1)) == NULL ||
	    (n2 = proto_get_str(b, "name", &l2)) == NULL)
		return (0);
	if ((z = memchr(n1, '\0', l1)) != NULL)
		l1 = (size_t)(z - n1);
	if ((z = memchr(n2, '\0', l2)) != NULL)
		l2 = (size_t)(z - n2);
	return (l1 == l2 && memcmp(n1, n2, l1) == 0);
}

/*
 * Append an output, merging a stream into a previous one of the same
 * name as Jupyter front ends do (decision 097): the agent's bytes are
 * copied as they came; a stream keeps its head and its tail within the
 * cap (common/streamcap.c, over views), so a cell that prints without
 * end costs the daemon a bounded amount of memory.
 */
static void
room_exec_add(struct proto_outputs *outs, const msgpack_object *out)
{
	msgpack_unpacked	 plain;
	struct mpbuf		 fixed;
	size_t			 off = 0;

	/*
	 * What json-c would change (bytes not UTF-8, a key twice, ...) is
	 * changed as it would, as every output was before: the bytes kept
	 * are those mpjson_pack gave one level into the list.
	 */
	if (!mpjson_plain(out, 1)) {
		mpbuf_init(&fixed);
		mpjson_repack(&fixed.pk, out, 1);
		msgpack_unpacked_init(&plain);
		if (msgpack_unpack_next(&plain, fixed.sb.data, fixed.sb.size,
		    &off) == MSGPACK_UNPACK_SUCCESS)
			room_exec_add_plain(outs, &plain.data);
		msgpack_unpacked_destroy(&plain);
		mpbuf_free(&fixed);
		return;
	}
	room_exec_add_plain(outs, out);
}

/* Append out (as json-c would leave it), merging a stream. */
static void
room_exec_add_plain(struct proto_outputs *outs, const msgpack_object *out)
{
	msgpack_unpacked	 u;
	const msgpack_object	*last = NULL, *t1, *t2;
	struct mpbuf		 b;
	int			 merge;

	if (!room_exec_is_stream(out)) {
		if (proto_outputs_append(outs, out) != 0)
			fatalx("out of memory");
		return;
	}
	msgpack_unpacked_init(&u);
	if (outs->n > 0)
		last = proto_outputs_get(outs, outs->n - 1, &u);
	mpbuf_init(&b);
	merge = last != NULL && room_exec_is_stream(last) &&
	    room_exec_same_name(last, out) &&
	    (t1 = proto_get(last, "text")) != NULL &&
	    t1->type == MSGPACK_OBJECT_STR &&
	    (t2 = proto_get(out, "text")) != NULL &&
	    t2->type == MSGPACK_OBJECT_STR &&
	    !room_exec_dropped_obj(last) && !room_exec_dropped_obj(out);
	if (merge) {
		streamcap_merge_obj(&b.pk, last, out);
		if (proto_outputs_set_packed(outs, outs->n - 1, b.sb.data,
		    b.sb.size) != 0)
			fatalx("out of memory");
	} else if (streamcap_fit_obj(&b.pk, out)) {
		if (proto_outputs_append_packed(outs, b.sb.data,
		    b.sb.size) != 0)
			fatalx("out of memory");
	} else if (proto_outputs_append(outs, out) != 0)
		fatalx("out of memory");
	mpbuf_free(&b);
	msgpack_unpacked_destroy(&u);
}

/* Replace the displays with display_id did in outs; how many. */
static int
room_exec_update_outputs(struct proto_outputs *outs, const char *did,
    const msgpack_object *upd)
{
	int	n;

	if (outs == NULL)
		return (0);
	if ((n = proto_outputs_update_display(outs, did, strlen(did),
	    upd)) < 0)
		fatalx("out of memory");
	return (n);
}

/*
 * update_display_data: every output with that display_id, in every cell
 * of the room and every run record in memory, takes the new content.
 */
static void
room_exec_update_display(struct room *r, const struct proto_str *pdid,
    const msgpack_object *upd)
{
	struct room_exec	*e;
	struct room_exec_list	*lists[2];
	msgpack_unpacked	 plain;
	struct mpbuf		 fixed;
	char			*did;
	size_t			 i, off = 0;
	int			 n = 0, m, l;

	/*
	 * What json-c would change is changed so, as for an output
	 * appended: the outputs kept stay as json-c would have them.
	 */
	msgpack_unpacked_init(&plain);
	mpbuf_init(&fixed);
	if (!mpjson_plain(upd, 1)) {
		mpjson_repack(&fixed.pk, upd, 1);
		if (msgpack_unpack_next(&plain, fixed.sb.data, fixed.sb.size,
		    &off) != MSGPACK_UNPACK_SUCCESS) {
			msgpack_unpacked_destroy(&plain);
			mpbuf_free(&fixed);
			return;
		}
		upd = &plain.data;
	}
	/* Cut at a NUL, as the json-c path compared it. */
	did = xstrndup(pdid->ptr, pdid->len);
	if (r->nb != NULL) {
		for (i = 0; i < r->nb->ncells; i++) {
			m = room_exec_update_outputs(r->nb->cells[i]->outputs,
			    did, upd);
			if (m > 0)
				room_cell_touch(r->nb->cells[i]);
			n += m;
		}
	}
	lists[0] = &r->execs->active;
	lists[1] = &r->execs->finished;
	for (l = 0; l < 2; l++) {
		TAILQ_FOREACH(e, lists[l], entry) {
			m = 0;
			for (i = 0; i < e->ncells; i++)
				m += room_exec_update_outputs(
				    &e->cells[i].outputs, did, upd);
			if (m > 0 && l == 1)
				room_exec_persist(e);
			n += m;
		}
	}
	log_debug("display %s updated in %d outputs", did, n);
	free(did);
	msgpack_unpacked_destroy(&plain);
	mpbuf_free(&fixed);
	if (n > 0)
		room_changed(r, NULL, "outputs");
}

void
room_exec_output(struct room *r, const struct proto_agent_output *m)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;

	if (m->update) {
		room_exec_update_display(r, &m->display_id, m->output.obj);
		return;
	}
	if ((c = room_exec_event(r, &m->exec_id, &m->cell_id, &e)) == NULL)
		return;
	cell = room_exec_room_cell(r, c);
	if (c->clear_wait) {
		proto_outputs_clear(&c->outputs);
		if (cell != NULL)
			room_nb_clear_outputs(cell);
		c->clear_wait = 0;
	}
	/* The run record and the cell keep the agent's bytes (097). */
	room_exec_add(&c->outputs, m->output.obj);
	if (cell != NULL && cell->outputs != NULL) {
		room_exec_add(cell->outputs, m->output.obj);
		room_cell_touch(cell);
	}
	room_cell_changed(r, "outputs", c->cell_id, e->id);
}

void
room_exec_clear(struct room *r, const struct proto_agent_clear_output *m)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;

	if ((c = room_exec_event(r, &m->exec_id, &m->cell_id, &e)) == NULL)
		return;
	if (m->wait) {
		c->clear_wait = 1;
		return;
	}
	proto_outputs_clear(&c->outputs);
	if ((cell = room_exec_room_cell(r, c)) != NULL)
		room_nb_clear_outputs(cell);
	room_cell_changed(r, "outputs", c->cell_id, e->id);
}

void
room_exec_done(struct room *r, const struct proto_agent_exec_done *m)
{
	struct room_exec	*e;
	struct room_exec_cell	*c;
	struct room_cell	*cell;

	if ((c = room_exec_event(r, &m->exec_id, &m->cell_id, &e)) == NULL)
		return;
	room_input_clear(r);
	if (m->has_execution_count && m->execution_count >= 0)
		c->execution_count = m->execution_count;
	if ((cell = room_exec_room_cell(r, c)) != NULL)
		room_nb_cell_set_count(cell, c->execution_count);
	e->sent = 0;
	e->current++;
	if (m->status == PROTO_AGENT_EXEC_OK) {
		c->status = PROTO_CELL_OK;
		if (e->cancelled) {
			/* It ended before the interrupt came: stop here. */
			room_cell_changed(r, "outputs", c->cell_id, e->id);
			room_exec_finish(e, PROTO_RUN_CANCELLED);
			room_exec_kick(r);
			return;
		}
	} else if (e->interrupted) {
		c->status = PROTO_CELL_INTERRUPTED;
		room_cell_changed(r, "outputs", c->cell_id, e->id);
		room_exec_finish(e, PROTO_RUN_INTERRUPTED);
		room_exec_kick(r);
		return;
	} else if (m->status == PROTO_AGENT_EXEC_ERROR) {
		c->status = PROTO_CELL_ERROR;
		e->had_error = 1;
	} else {
		/* aborted: the kernel refused it; nothing after can run */
		c->status = PROTO_CELL_NOT_RUN;
		e->had_error = 1;
		room_cell_changed(r, "outputs", c->cell_id, e->id);
		room_exec_finish(e, PROTO_RUN_ERROR);
		room_exec_kick(r);
		return;
	}
	room_cell_changed(r, "outputs", c->cell_id, e->id);
	if (c->status == PROTO_CELL_ERROR && e->stop_on_error)
		room_exec_finish(e, PROTO_RUN_ERROR);
	else if (e->current >= e->ncells)
		room_exec_finish(e, e->had_error ? PROTO_RUN_ERROR :
		    PROTO_RUN_DONE);
	room_exec_kick(r);
}

/* The kernel died: the run in flight ends kernel_died, so do the queued. */
void
room_exec_kernel_died(struct room *r, const char *why)
{
	struct room_exec	*e;

	room_input_clear(r);
	while ((e = TAILQ_FIRST(&r->execs->active)) != NULL) {
		if (e->sent)
			e->cells[e->current].status =
			    PROTO_CELL_KERNEL_DIED;
		free(e->message);
		e->message = xstrdup(why);
		room_exec_finish(e, PROTO_RUN_KERNEL_DIED);
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

	room_input_clear(r);
	TAILQ_FOREACH_SAFE(e, &r->execs->active, entry, e1) {
		if (e->sent && reason == NULL) {
			e->interrupted = 1;
			continue;
		}
		if (e->sent)
			e->cells[e->current].status =
			    PROTO_CELL_INTERRUPTED;
		if (reason != NULL) {
			free(e->message);
			e->message = xstrdup(reason);
		}
		room_exec_finish(e, PROTO_RUN_INTERRUPTED);
	}
}

/*
 * KERNEL_INTERRUPT by a client (name and session, NULL when unknown):
 * every run in progress ends, and one another client asked for says who
 * ended it, and, when none of its cells had started, that none ran.
 * ended (when not NULL) gets them: {ended: [{execution_id, client_name?,
 * session?, status: running|queued, yours}]} (issue 39).
 */
void
room_exec_interrupt_by(struct room *r, const char *name, const char *session,
    msgpack_packer *ended)
{
	struct room_exec	*e;
	size_t			 i, n = 0;
	int			 started, yours;

	TAILQ_FOREACH(e, &r->execs->active, entry)
		n++;
	if (ended != NULL) {
		msgpack_pack_map(ended, 1);
		proto_pack_key(ended, "ended");
		msgpack_pack_array(ended, n);
	}
	TAILQ_FOREACH(e, &r->execs->active, entry) {
		for (started = 0, i = 0; i < e->ncells; i++)
			started |= e->cells[i].status != PROTO_CELL_QUEUED;
		yours = session != NULL && e->session != NULL &&
		    strcmp(session, e->session) == 0;
		if (ended != NULL) {
			msgpack_pack_map(ended, 3 + (e->client_name != NULL) +
			    (e->session != NULL));
			proto_pack_str(ended, "execution_id", e->id);
			if (e->client_name != NULL)
				proto_pack_str(ended, "client_name",
				    e->client_name);
			if (e->session != NULL)
				proto_pack_str(ended, "session", e->session);
			proto_pack_str(ended, "status", started ? "running" :
			    "queued");
			proto_pack_bool(ended, "yours", yours);
		}
		if (yours)
			continue;
		free(e->message);
		if (session == NULL)
			xasprintf(&e->message, "%s by an interrupt of the "
			    "kernel from outside the MCP sessions (runtimectl, "
			    "the live page)%s", started ? "interrupted" :
			    "ended", started ? "" : " before it started: none "
			    "of its cells ran");
		else
			xasprintf(&e->message, "%s by %s's interrupt_kernel "
			    "(another client, session %s)%s", started ?
			    "interrupted" : "ended", name != NULL &&
			    *name != '\0' ? name : "a client", session,
			    started ? "" : " before it started: none of its "
			    "cells ran");
	}
	room_exec_interrupt(r, NULL);
}

/*
 * Run exec_id changed without ending (it asks for input): its parked
 * EXEC_GETs are answered now.
 */
void
room_exec_wake(struct room *r, const char *exec_id)
{
	struct room_exec_wait	*w, *w1;

	TAILQ_FOREACH_SAFE(w, &room_exec_waits, entry, w1) {
		if (w->exec->room != r || strcmp(w->exec->id, exec_id) != 0)
			continue;
		room_exec_reply(w->exec, w->peer, w->id);
		room_exec_wait_free(w);
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

/*
 * EXEC_CANCEL {execution_id, timeout_ms?}: end this run only, as
 * cancelled (an MCP task's tasks/cancel).  A queued run leaves the queue
 * at once; a running one has its kernel interrupted and ends when the
 * kernel reports, the reply waiting for that up to timeout_ms (default
 * ROOM_EXEC_CANCEL_MS).  Other runs queued behind it go on.  A run that
 * has already ended is refused, and nothing changes.
 */
#define ROOM_EXEC_CANCEL_MS	10000

static void
room_exec_cancel(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_id	*m = mv;
	struct room			*r = arg;
	struct room_exec		*e;
	char				*key, *nb = NULL;
	void				*data = NULL;
	uint32_t			 id = hdr->id;
	size_t				 len;
	int64_t				 timeout = ROOM_EXEC_CANCEL_MS;

	if (m->has_timeout_ms && (timeout = room_exec_timeout(p, id, 1,
	    m->timeout_ms)) < 0)
		return;
	len = m->execution_id.len;
	if ((e = room_exec_find(r, m->execution_id.ptr, len)) == NULL) {
		/* Not in memory: ended under an earlier daemon, or unknown. */
		key = xstrndup(m->execution_id.ptr, len);
		if (runtimed_store != NULL) {
			room_exec_flush();
			if (store_exec_get(runtimed_store, key, &nb, &data,
			    &len) != 1 || strcmp(nb, r->id) != 0) {
				free(nb);
				nb = NULL;
			}
		}
		if (nb != NULL)
			peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
			    "run %s has already ended; nothing to cancel", key);
		else
			peer_send_error(p, id, PROTO_E_EXECUTION_NOT_FOUND,
			    "no run %s in this notebook", key);
		free(key);
		free(nb);
		free(data);
		return;
	}
	if (room_exec_terminal(e)) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT, "run %s has "
		    "already ended (%s); nothing to cancel", e->id,
		    proto_run_status_name(e->status));
		return;
	}
	e->cancelled = 1;
	free(e->message);
	e->message = xstrdup("cancelled by request");
	log_info("run %s: cancel", e->id);
	if (!e->sent) {
		/* Not in the kernel: it leaves the queue now. */
		room_exec_finish(e, PROTO_RUN_CANCELLED);
		room_exec_kick(r);
		room_exec_reply(e, p, id);
		return;
	}
	e->interrupted = 1;
	if (room_kernel_interrupt(r) != 0)
		log_warnx("run %s: the kernel cannot be interrupted", e->id);
	room_exec_persist(e);
	room_exec_answer(e, p, id, timeout);
}

/* The lines of EXEC_TASKS: one per stored record of the owner's. */
struct room_exec_tasks {
	const struct proto_str	 *owner;
	struct room_record_line	**v;
	size_t			  n;
};

static int
room_exec_tasks_one(const char *eid, const char *nb, const void *data,
    size_t len, void *arg)
{
	struct room_exec_tasks	*t = arg;
	struct room_record_line	*l;
	const msgpack_object	*rec;
	msgpack_unpacked	 u, nu;
	struct mpbuf		 b, norm;
	size_t			 off = 0, slen;
	const char		*st;

	if (t->n >= ROOM_EXEC_TASKS_MAX)
		return (1);
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, data, len, &off) != 0 ||
	    u.data.type != MSGPACK_OBJECT_MAP ||
	    (st = proto_get_str(&u.data, "task_owner", &slen)) == NULL ||
	    slen != t->owner->len || memcmp(st, t->owner->ptr, slen) != 0) {
		msgpack_unpacked_destroy(&u);
		return (0);
	}
	msgpack_unpacked_init(&nu);
	mpbuf_init(&norm);
	if ((rec = room_record_normal(&u.data, &norm, &nu)) != NULL) {
		mpbuf_init(&b);
		room_record_task(&b.pk, rec, eid, nb,
		    room_exec_orphaned(&u.data));
		l = xcalloc(1, sizeof *l);
		l->created_at = room_record_created_at(rec);
		l->data = b.sb.data;	/* the line keeps the buffer */
		l->len = b.sb.size;
		t->v[t->n++] = l;
	}
	msgpack_unpacked_destroy(&nu);
	mpbuf_free(&norm);
	msgpack_unpacked_destroy(&u);
	return (0);
}

static void
room_exec_tasks_pack(msgpack_packer *pk, const void *arg)
{
	const struct room_exec_tasks	*t = arg;
	size_t				 i;

	msgpack_pack_array(pk, t->n);
	for (i = 0; i < t->n; i++)
		pk->callback(pk->data, t->v[i]->data, t->v[i]->len);
}

static void
room_exec_tasks_free(struct room_exec_tasks *t)
{
	size_t	i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i]->data);
		free(t->v[i]);
	}
	free(t->v);
}

/*
 * EXEC_TASKS {task_owner} (room-less): the runs that owner submitted as
 * MCP tasks, of every notebook, from the store (every run is there
 * within ROOM_EXEC_PERSIST_MS, and pending ones are flushed first), so
 * the list is the same after a worker or daemon restart.
 */
static void
room_exec_tasks(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_tasks	*m = mv;
	struct proto_exec_runs		 rm;
	struct room_exec_tasks		 t;
	struct mpbuf			 b;
	uint32_t			 id = hdr->id;

	t.owner = &m->task_owner;
	t.v = xcalloc(ROOM_EXEC_TASKS_MAX, sizeof *t.v);
	t.n = 0;
	if (runtimed_store != NULL) {
		room_exec_flush();
		if (store_exec_each(runtimed_store, room_exec_tasks_one,
		    &t) != 0) {
			room_exec_tasks_free(&t);
			peer_send_error(p, id, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "the state database cannot be read");
			return;
		}
	}
	/* Newest first, ties in the order json-c's array sort left them. */
	qsort(t.v, t.n, sizeof *t.v, room_record_line_cmp);
	memset(&rm, 0, sizeof rm);
	rm.runs.pack = room_exec_tasks_pack;
	rm.runs.arg = &t;
	mpbuf_init(&b);
	proto_exec_runs_pack(&b.pk, &rm);
	peer_send(p, PROTO_MSG_EXEC_TASKS_REPLY, id, &b.sb);
	mpbuf_free(&b);
	room_exec_tasks_free(&t);
}
