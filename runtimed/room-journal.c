/* SPDX-License-Identifier: ISC */
/*
 * room-journal.c: a room's durability in the state store (store.c).
 *
 * A room is a snapshot (msgpack: the whole notebook plus the room's
 * flags) and a journal of what happened after it.  Each entry has its
 * own number (room->jseq), separate from the room's seq, and holds:
 *
 *	{t: "edit", seq, edits, undo?, by?}
 *					a ROOM_EDIT batch as applied:
 *					every reference an id, inserts
 *					with their minted cell_id; undo
 *					its record for reverts
 *					(room-undo.c); by its author,
 *					the last editor of the cells it
 *					wrote (room_author_pack)
 *	{t: "outputs", seq, cells: [{cell_id, execution_count, outputs}]}
 *					cells' outputs as they now are
 *	{t: "metadata", seq, metadata}	the notebook's metadata as it now
 *					is (a kernel wrote its kernelspec)
 *
 * Every write goes to the store's writer thread (store-writer.c) and
 * comes back through a ticket: the loop never waits for the disk.  An
 * edit is journaled (committed, fsync'd by SQLite) before its reply is
 * sent, from the ticket's callback.  Outputs and metadata are journaled after a short debounce;
 * other content changes by a debounced snapshot.  A snapshot is
 * taken on create, load, save, reload, and when the journal grows past
 * the snapshot's size (a large one once the room is quiet, see
 * room_journal_grown); it drops the journal it covers.
 *
 * An edit is applied to a copy first (room_nb_edit_prepare) and becomes
 * the room's content only once its entry committed: a failed commit
 * leaves the room as it was.  What is not acknowledged to anyone
 * (outputs, kernelspec metadata, a save's bookkeeping) stays in memory
 * when the store cannot write and is retried every second until it can;
 * a room with such pending state is not unloaded.
 *
 * Recovery is snapshot + replay: an edit entry goes through the same
 * room_nb_edit as the request did, with the recorded ids, so it lands
 * the same way; an outputs entry sets the cells' outputs, a metadata
 * entry the notebook's metadata.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/*
 * One write on its way to the store.  r goes NULL when the room's
 * content goes away first (room_journal_stop).
 */
struct room_journal_ticket {
	struct room		*r;
	int			 what;		/* ROOM_JOURNAL_T_* */
	size_t			 covered;	/* journal bytes a snapshot covers */
	size_t			 len;
	room_journal_cb		 cb;		/* an edit's */
	void			*arg;
	TAILQ_ENTRY(room_journal_ticket) entry;
};
#define ROOM_JOURNAL_T_ENTRY	1
#define ROOM_JOURNAL_T_SNAPSHOT	2
#define ROOM_JOURNAL_T_EDIT	3
static TAILQ_HEAD(, room_journal_ticket) room_journal_tickets =
    TAILQ_HEAD_INITIALIZER(room_journal_tickets);

/* Debounce for outputs and out-of-band content changes. */
#define ROOM_JOURNAL_DELAY_MS	200
/* While the store cannot write, try again this often. */
#define ROOM_JOURNAL_RETRY_MS	1000
/* Snapshot once the journal is past max(snapshot size, this). */
#define ROOM_JOURNAL_MIN_BYTES	(64 * 1024)
/*
 * A snapshot past this size holds every client long enough to matter
 * (0.3 s for 100,000 cells, 7 MB, on a loaded 2-core machine), so it
 * waits until the room has journaled nothing for this long, unless the
 * journal grows past ROOM_JOURNAL_COMPACT_MAX times the snapshot first.
 */
#define ROOM_JOURNAL_LARGE_BYTES	(1024 * 1024)
#define ROOM_JOURNAL_QUIET_MS		1000
#define ROOM_JOURNAL_COMPACT_MAX	4

static void	room_journal_set_outputs(struct room_cell *,
		    const msgpack_object *);
static void	room_journal_failed(struct room *, const char *, const char *);
static void	room_journal_clear_pending(struct room *);
static struct room_journal_ticket *room_journal_ticket(struct room *, int);
static void	room_journal_done(int, const char *, void *);
static void	room_journal_append(struct room *, void *, size_t,
		    struct room_journal_ticket *);
static void	room_journal_queue(struct room *);
static size_t	room_journal_limit(struct room *);
static void	room_journal_compact_fire(evutil_socket_t, short, void *);
static void	room_journal_outputs(struct room *);
static void	room_journal_metadata(struct room *);
static void	room_journal_fire(evutil_socket_t, short, void *);
static void	room_journal_arm(struct room *, int);
static void	room_journal_forgot(int, const char *, void *);
static int	room_journal_load_snapshot(const struct store_room *, void *);
static int	room_journal_replay(uint64_t, const void *, size_t, void *);
static int	room_journal_check_entry(uint64_t, const void *, size_t,
		    void *);

/*
 * The notebook: {nbformat, nbformat_minor, metadata, cells, extra?,
 * warnings?}.
 */
void
room_journal_pack_nb(msgpack_packer *pk, struct room_nb *nb)
{
	size_t	i;

	msgpack_pack_map(pk, 4 + (nb->extra.len != 0) +
	    (nb->warnings != NULL));
	if (nb->extra.len != 0) {
		proto_pack_key(pk, "extra");
		mpvalue_pack(pk, &nb->extra);
	}
	if (nb->warnings != NULL) {
		proto_pack_key(pk, "warnings");
		mpjson_pack(pk, nb->warnings);
	}
	proto_pack_int(pk, "nbformat", nb->nbformat);
	proto_pack_int(pk, "nbformat_minor", nb->nbformat_minor);
	proto_pack_key(pk, "metadata");
	mpvalue_pack(pk, &nb->metadata);
	proto_pack_key(pk, "cells");
	msgpack_pack_array(pk, nb->ncells);
	for (i = 0; i < nb->ncells; i++)
		room_pack_cell(pk, nb->cells[i]);
}

/* Set a cell's outputs from a msgpack array. */
static void
room_journal_set_outputs(struct room_cell *c, const msgpack_object *o)
{
	struct proto_outputs	*outs;

	if (o == NULL || o->type != MSGPACK_OBJECT_ARRAY)
		return;
	outs = room_nb_outputs_new();
	mpjson_outputs_read(outs, o);
	room_nb_cell_set_outputs(c, outs);
}

struct room_nb *
room_journal_unpack_nb(const msgpack_object *o, char **cause)
{
	struct room_nb		*nb;
	struct room_cell	*c;
	const msgpack_object	*cells, *co, *v;
	const char		*s;
	size_t			 len, i;
	int64_t			 n;
	int			 flag;

	if (o == NULL || o->type != MSGPACK_OBJECT_MAP ||
	    (cells = proto_get_array(o, "cells")) == NULL) {
		xasprintf(cause, "snapshot has no cells");
		return (NULL);
	}
	nb = room_nb_create();
	if (proto_get_int(o, "nbformat", &n) == 0)
		nb->nbformat = (int)n;
	if (proto_get_int(o, "nbformat_minor", &n) == 0)
		nb->nbformat_minor = (int)n;
	if ((v = proto_get_map(o, "metadata")) != NULL)
		mpvalue_set_obj(&nb->metadata, v);
	if ((v = proto_get_map(o, "extra")) != NULL)
		mpvalue_set_obj(&nb->extra, v);
	if ((v = proto_get_array(o, "warnings")) != NULL)
		nb->warnings = mpjson_unpack(v);
	for (i = 0; i < cells->via.array.size; i++) {
		co = &cells->via.array.ptr[i];
		if ((s = proto_get_str(co, "cell_type", &len)) == NULL ||
		    len == 0) {
			xasprintf(cause, "snapshot cell %zu has no type", i);
			room_nb_free(nb);
			return (NULL);
		}
		c = room_nb_cell_create(nb, ROOM_CELL_RAW, "", 0);
		room_nb_cell_set_type_name(c, s, len);
		if ((s = proto_get_str(co, "source", &len)) != NULL)
			room_nb_cell_set_source(c, s, len);
		if ((s = proto_get_str(co, "cell_id", &len)) != NULL &&
		    room_nb_valid_id(s, len))
			room_nb_cell_set_id(nb, c, s, len);
		if ((v = proto_get_map(co, "metadata")) != NULL)
			mpvalue_set_obj(&c->metadata, v);
		if (proto_get_int(co, "execution_count", &n) == 0)
			room_nb_cell_set_count(c, n);
		if (c->type == ROOM_CELL_CODE)
			room_journal_set_outputs(c, proto_get(co, "outputs"));
		if ((v = proto_get_map(co, "attachments")) != NULL)
			mpvalue_set_obj(&c->attachments, v);
		if ((v = proto_get_map(co, "extra")) != NULL)
			mpvalue_set_obj(&c->extra, v);
		if (proto_get_bool(co, "no_source", &flag) == 0 && flag)
			c->flags |= ROOM_CELL_NO_SOURCE;
		c->by = room_author_unpack(proto_get_map(co, "by"));
	}
	return (nb);
}

static void	room_journal_retry(struct room *);

/* Say once that the store refused; the retries are quiet. */
static void
room_journal_failed(struct room *r, const char *what, const char *cause)
{
	if (!r->persist_failing)
		log_warnx("room %s: %s failed, retrying every %d ms until the "
		    "store can write: %s", r->id, what, ROOM_JOURNAL_RETRY_MS,
		    cause);
	else
		log_debug("room %s: %s failed again: %s", r->id, what, cause);
	r->persist_failing = 1;
}

static void
room_journal_clear_pending(struct room *r)
{
	size_t	i;

	for (i = 0; i < r->npend_outputs; i++)
		free(r->pend_outputs[i]);
	free(r->pend_outputs);
	r->pend_outputs = NULL;
	r->npend_outputs = 0;
	r->persist_full = 0;
	r->pend_metadata = 0;
	if (r->persist_ev != NULL)
		evtimer_del(r->persist_ev);
}

/*
 * Write the whole room as its new snapshot; -1 when the store cannot
 * (then it is retried until it can).
 */
int
room_journal_snapshot(struct room *r)
{
	struct store_room		 sr;
	struct room_journal_ticket	*t;
	struct mpbuf			 b;

	if (runtimed_writer == NULL || !r->loaded)
		return (0);
	if (r->edit_inflight) {
		/* Its content is not the journal's yet: after the edit. */
		r->snapshot_wanted = 1;
		return (0);
	}
	r->snapshot_wanted = 0;
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 5 + room_remote_bound(r) +
	    room_merge_stored(r) + (room_undo_count(r->undo) > 0));
	proto_pack_int(&b.pk, "v", 1);
	if (room_undo_count(r->undo) > 0) {
		/* The batches clients may revert (decision 074). */
		proto_pack_key(&b.pk, "undo");
		room_undo_pack(r->undo, &b.pk);
	}
	if (room_merge_stored(r)) {
		/* The base and conflicts of merges from disk (decision 056). */
		proto_pack_key(&b.pk, "merge");
		room_merge_pack_state(r, &b.pk);
	}
	if (room_remote_bound(r)) {
		/* Which server's notebook this is (decision 030). */
		proto_pack_key(&b.pk, "remote");
		room_remote_pack(r, &b.pk);
	}
	proto_pack_uint(&b.pk, "seq", r->seq);
	proto_pack_bool(&b.pk, "fresh", r->fresh);
	proto_pack_key(&b.pk, "disk");
	msgpack_pack_map(&b.pk, 5);
	proto_pack_bool(&b.pk, "known", r->disk_known);
	proto_pack_uint(&b.pk, "dev", (uint64_t)r->disk_dev);
	proto_pack_uint(&b.pk, "ino", (uint64_t)r->disk_ino);
	proto_pack_int(&b.pk, "size", (int64_t)r->disk_size);
	proto_pack_int(&b.pk, "mtime_ns", r->disk_mtime_ns);
	proto_pack_key(&b.pk, "nb");
	room_journal_pack_nb(&b.pk, r->nb);

	memset(&sr, 0, sizeof sr);
	sr.notebook_id = r->id;
	sr.path = r->path;
	sr.kernel = r->kernel_name;
	sr.dirty = r->dirty;
	sr.seq = r->jseq;
	sr.snapshot_len = b.sb.size;
	t = room_journal_ticket(r, ROOM_JOURNAL_T_SNAPSHOT);
	t->covered = r->journal_bytes;
	t->len = b.sb.size;
	/* What is pending is in this snapshot; a failure takes another. */
	room_journal_clear_pending(r);
	r->persist_full = 0;
	if (r->compact_ev != NULL)
		evtimer_del(r->compact_ev);
	store_writer_snapshot(runtimed_writer, &sr, b.sb.data,
	    room_journal_done, t);
	return (0);
}

static struct room_journal_ticket *
room_journal_ticket(struct room *r, int what)
{
	struct room_journal_ticket	*t;

	t = xcalloc(1, sizeof *t);
	t->r = r;
	t->what = what;
	TAILQ_INSERT_TAIL(&room_journal_tickets, t, entry);
	return (t);
}

/* A write came back from the store's writer (the loop). */
static void
room_journal_done(int ok, const char *cause, void *arg)
{
	struct room_journal_ticket	*t = arg;
	struct room			*r = t->r;

	TAILQ_REMOVE(&room_journal_tickets, t, entry);
	if (t->what == ROOM_JOURNAL_T_EDIT) {
		if (r != NULL)
			r->edit_inflight = 0;
		if (t->cb != NULL)
			t->cb(r, ok, cause, t->arg);
		if (r != NULL && r->snapshot_wanted)
			room_journal_snapshot(r);
		free(t);
		return;
	}
	if (r == NULL) {
		free(t);
		return;
	}
	if (!ok) {
		room_journal_failed(r, t->what == ROOM_JOURNAL_T_SNAPSHOT ?
		    "snapshot" : "journal", cause);
		r->persist_full = 1;	/* a snapshot, once it can */
		room_journal_retry(r);
	} else if (t->what == ROOM_JOURNAL_T_SNAPSHOT) {
		if (r->persist_failing && !r->persist_full) {
			log_warnx("room %s: stored again", r->id);
			r->persist_failing = 0;
		}
		r->snapshot_bytes = t->len;
		r->journal_bytes = r->journal_bytes > t->covered ?
		    r->journal_bytes - t->covered : 0;
	} else
		room_journal_grown(r);
	free(t);
}

/* Append one entry (buf is taken over); t says what to do when done. */
static void
room_journal_append(struct room *r, void *buf, size_t len,
    struct room_journal_ticket *t)
{
	r->jseq++;
	r->journal_bytes += len;
	store_writer_journal(runtimed_writer, r->id, r->jseq, buf, len,
	    room_journal_done, t);
}

static size_t
room_journal_limit(struct room *r)
{
	return (r->snapshot_bytes > ROOM_JOURNAL_MIN_BYTES ?
	    r->snapshot_bytes : ROOM_JOURNAL_MIN_BYTES);
}

static void
room_journal_compact_fire(evutil_socket_t fd, short events, void *arg)
{
	struct room	*r = arg;

	(void)fd;
	(void)events;
	if (r->loaded && r->journal_bytes > room_journal_limit(r))
		room_journal_snapshot(r);
}

/*
 * Snapshot when the journal has grown past the snapshot; only once what
 * was journaled is the room's content.  A large one waits until the
 * room has journaled nothing for ROOM_JOURNAL_QUIET_MS (each entry puts
 * it off), so a stream of batches is not held by it; the journal,
 * durable already, only grows (up to ROOM_JOURNAL_COMPACT_MAX
 * snapshots' worth).
 */
void
room_journal_grown(struct room *r)
{
	struct timeval	tv = { ROOM_JOURNAL_QUIET_MS / 1000,
			    (ROOM_JOURNAL_QUIET_MS % 1000) * 1000 };
	size_t		limit;

	limit = room_journal_limit(r);
	if (r->journal_bytes <= limit)
		return;
	if (r->snapshot_bytes <= ROOM_JOURNAL_LARGE_BYTES ||
	    r->journal_bytes > ROOM_JOURNAL_COMPACT_MAX * limit ||
	    runtimed_base == NULL) {
		room_journal_snapshot(r);
		return;
	}
	if (r->compact_ev == NULL)
		r->compact_ev = evtimer_new(runtimed_base,
		    room_journal_compact_fire, r);
	evtimer_add(r->compact_ev, &tv);
}

/*
 * Journal an edit batch (resolved, packed array) prepared but not yet
 * applied; it will be the room's change seq + 1.  cb runs once it is
 * durable (ok) or refused, with the room (NULL if its content went away
 * meanwhile).  One edit is in flight per room (r->edit_inflight): the
 * next is prepared on the content this one makes.
 */
void
room_journal_edit(struct room *r, const char *edits, size_t len,
    const char *undo, size_t ulen, struct room_author *by, room_journal_cb cb,
    void *arg)
{
	struct room_journal_ticket	*t;
	struct mpbuf			 b;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3 + (ulen > 0) + (by != NULL));
	if (by != NULL) {
		proto_pack_key(&b.pk, "by");
		room_author_pack(&b.pk, by);
	}
	proto_pack_str(&b.pk, "t", "edit");
	proto_pack_uint(&b.pk, "seq", r->seq + 1);
	proto_pack_key(&b.pk, "edits");
	msgpack_sbuffer_write(&b.sb, edits, len);
	if (ulen > 0) {
		proto_pack_key(&b.pk, "undo");
		msgpack_sbuffer_write(&b.sb, undo, ulen);
	}
	t = room_journal_ticket(r, ROOM_JOURNAL_T_EDIT);
	t->cb = cb;
	t->arg = arg;
	r->edit_inflight = 1;
	if (runtimed_writer == NULL) {
		mpbuf_free(&b);
		room_journal_done(1, NULL, t);
		return;
	}
	room_journal_append(r, b.sb.data, b.sb.size, t);
}

/* Journal the outputs of the cells that changed since the last flush. */
static void
room_journal_outputs(struct room *r)
{
	struct room_cell	*c;
	struct mpbuf		 b;
	size_t			 i, n = 0;

	for (i = 0; i < r->npend_outputs; i++) {
		c = room_nb_find(r->nb, r->pend_outputs[i], NULL);
		if (c != NULL && c->type == ROOM_CELL_CODE)
			n++;
	}
	if (n > 0) {
		mpbuf_init(&b);
		msgpack_pack_map(&b.pk, 3);
		proto_pack_str(&b.pk, "t", "outputs");
		proto_pack_uint(&b.pk, "seq", r->seq);
		proto_pack_key(&b.pk, "cells");
		msgpack_pack_array(&b.pk, n);
		for (i = 0; i < r->npend_outputs; i++) {
			c = room_nb_find(r->nb, r->pend_outputs[i], NULL);
			if (c == NULL || c->type != ROOM_CELL_CODE)
				continue;
			msgpack_pack_map(&b.pk, 3);
			proto_pack_str(&b.pk, "cell_id", c->id);
			if (c->execution_count >= 0)
				proto_pack_int(&b.pk, "execution_count",
				    c->execution_count);
			else
				proto_pack_nil(&b.pk, "execution_count");
			proto_pack_key(&b.pk, "outputs");
			if (c->outputs != NULL)
				proto_outputs_pack(&b.pk, c->outputs);
			else
				msgpack_pack_nil(&b.pk);
		}
		room_journal_clear_pending(r);
		room_journal_append(r, b.sb.data, b.sb.size,
		    room_journal_ticket(r, ROOM_JOURNAL_T_ENTRY));
		return;
	}
	room_journal_clear_pending(r);
}

/*
 * Journal the notebook's metadata, changed outside an edit (a kernel
 * wrote its kernelspec).  A snapshot instead would hold every client
 * for the whole notebook (0.1 to 0.8 s at 100,000 cells) once per
 * kernel start; an entry costs the metadata, and a snapshot follows
 * only as room_journal_grown decides.
 */
static void
room_journal_metadata(struct room *r)
{
	struct mpbuf	 b;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_str(&b.pk, "t", "metadata");
	proto_pack_uint(&b.pk, "seq", r->seq);
	proto_pack_key(&b.pk, "metadata");
	mpvalue_pack(&b.pk, &r->nb->metadata);
	r->pend_metadata = 0;
	room_journal_append(r, b.sb.data, b.sb.size,
	    room_journal_ticket(r, ROOM_JOURNAL_T_ENTRY));
}

/* Hand what is pending to the writer. */
static void
room_journal_queue(struct room *r)
{
	if (!r->loaded || runtimed_writer == NULL)
		return;
	if (r->persist_full)
		room_journal_snapshot(r);
	else {
		if (r->pend_metadata)
			room_journal_metadata(r);
		if (r->npend_outputs > 0)
			room_journal_outputs(r);
	}
}

/*
 * Persist what is pending and wait until it is stored; -1 if some of it
 * could not be.  This waits for the writer: only for what is rare and
 * must know (unloading a room, stopping, creating an untitled notebook).
 */
int
room_journal_flush(struct room *r)
{
	if (!r->loaded)
		return (0);
	room_journal_queue(r);
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
	return (r->persist_full || r->npend_outputs > 0 || r->pend_metadata ?
	    -1 : 0);
}

static void
room_journal_fire(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	room_journal_queue(arg);
}

static void
room_journal_arm(struct room *r, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	if (runtimed_base == NULL)
		return;
	if (r->persist_ev == NULL)
		r->persist_ev = evtimer_new(runtimed_base, room_journal_fire,
		    r);
	if (!evtimer_pending(r->persist_ev, NULL))
		evtimer_add(r->persist_ev, &tv);
}

/* Persist pending changes soon. */
void
room_journal_later(struct room *r)
{
	room_journal_arm(r, ROOM_JOURNAL_DELAY_MS);
}

/* The store failed: try again in a while. */
static void
room_journal_retry(struct room *r)
{
	room_journal_arm(r, ROOM_JOURNAL_RETRY_MS);
}

/* Drop pending work and the timer (content is going away). */
void
room_journal_stop(struct room *r)
{
	struct room_journal_ticket	*t;

	TAILQ_FOREACH(t, &room_journal_tickets, entry) {
		if (t->r == r) {
			t->r = NULL;
			t->cb = NULL;	/* room-edit.c dropped it */
		}
	}
	r->edit_inflight = 0;
	r->snapshot_wanted = 0;
	room_journal_clear_pending(r);
	if (r->persist_ev != NULL) {
		event_free(r->persist_ev);
		r->persist_ev = NULL;
	}
	if (r->compact_ev != NULL) {
		event_free(r->compact_ev);
		r->compact_ev = NULL;
	}
}

/* The room leaves the store (clean, file-backed, unloaded). */
void
room_journal_forget(struct room *r)
{
	if (runtimed_writer == NULL)
		return;
	store_writer_forget(runtimed_writer, r->id, room_journal_forgot,
	    xstrdup(r->id));
}

static void
room_journal_forgot(int ok, const char *cause, void *arg)
{
	if (!ok)
		log_warnx("room %s: %s", (char *)arg, cause);
	free(arg);
}

struct room_journal_load {
	struct room	*r;
	char		*cause;
	int		 found;
	uint64_t	 jseq;
	size_t		 bytes;
	size_t		 entries;
	size_t		 failed;
};

static int
room_journal_load_snapshot(const struct store_room *sr, void *arg)
{
	struct room_journal_load	*ld = arg;
	struct room			*r = ld->r;
	msgpack_unpacked		 u;
	const msgpack_object		*d;
	int64_t				 v;
	size_t				 at = 0;
	int				 b;

	ld->found = 1;
	if (sr->damaged) {
		xasprintf(&ld->cause, "its snapshot fails its checksum");
		return (1);
	}
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, sr->snapshot, sr->snapshot_len,
	    &at) != 0 || at != sr->snapshot_len) {
		xasprintf(&ld->cause, "snapshot is not msgpack");
		msgpack_unpacked_destroy(&u);
		return (1);
	}
	if ((r->nb = room_journal_unpack_nb(proto_get(&u.data, "nb"),
	    &ld->cause)) == NULL) {
		msgpack_unpacked_destroy(&u);
		return (1);
	}
	if (proto_get_int(&u.data, "seq", &v) == 0)
		r->seq = (uint64_t)v;
	if (proto_get_bool(&u.data, "fresh", &b) == 0)
		r->fresh = b;
	if ((d = proto_get_map(&u.data, "disk")) != NULL) {
		if (proto_get_bool(d, "known", &b) == 0)
			r->disk_known = b;
		if (proto_get_int(d, "dev", &v) == 0)
			r->disk_dev = (dev_t)v;
		if (proto_get_int(d, "ino", &v) == 0)
			r->disk_ino = (ino_t)v;
		if (proto_get_int(d, "size", &v) == 0)
			r->disk_size = (off_t)v;
		if (proto_get_int(d, "mtime_ns", &v) == 0)
			r->disk_mtime_ns = v;
	}
	room_merge_restore(r, proto_get_map(&u.data, "merge"));
	room_undo_free(r->undo);
	r->undo = room_undo_create();
	room_undo_restore(r->undo, proto_get_array(&u.data, "undo"));
	free(r->path);
	r->path = sr->path != NULL ? xstrdup(sr->path) : NULL;
	free(r->kernel_name);
	r->kernel_name = xstrdup(sr->kernel);
	r->dirty = sr->dirty;
	r->jseq = sr->seq;
	r->snapshot_bytes = sr->snapshot_len;
	msgpack_unpacked_destroy(&u);
	return (1);
}

/* Replay one journal entry onto the recovered notebook. */
static int
room_journal_replay(uint64_t jseq, const void *buf, size_t len, void *arg)
{
	struct room_journal_load	*ld = arg;
	struct room			*r = ld->r;
	struct room_nb_result		 res;
	struct room_nb_pending		*pend;
	struct room_author		*by;
	struct room_cell		*c;
	msgpack_unpacked		 u;
	const msgpack_object		*cells, *co, *md, *uo;
	msgpack_sbuffer			 usb;
	msgpack_packer			 upk;
	const char			*cid;
	char				*cause = NULL;
	const char			*code;
	int64_t				 v;
	size_t				 i, clen;

	ld->jseq = jseq;
	ld->bytes += len;
	ld->entries++;
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, buf, len, NULL) != 0) {
		ld->failed++;
		msgpack_unpacked_destroy(&u);
		return (0);
	}
	if (proto_get_int(&u.data, "seq", &v) == 0 && (uint64_t)v > r->seq)
		r->seq = (uint64_t)v;
	r->dirty = 1;
	if (proto_obj_streq(proto_get(&u.data, "t"), "edit")) {
		if (room_nb_edit_prepare(r->nb, proto_get(&u.data, "edits"), 1,
		    NULL, &res, &pend, &cause, &code) != 0) {
			log_warnx("room %s: journal entry %llu does not "
			    "apply: %s", r->id, (unsigned long long)jseq,
			    cause);
			free(cause);
			ld->failed++;
		} else {
			/* Who wrote the cells, as the request said. */
			by = room_author_unpack(proto_get_map(&u.data, "by"));
			room_nb_pending_author(r->nb, pend, by);
			room_author_unref(by);
			room_nb_edit_commit(r->nb, pend);
			room_nb_result_free(&res);
			if ((uo = proto_get_map(&u.data, "undo")) != NULL) {
				msgpack_sbuffer_init(&usb);
				msgpack_packer_init(&upk, &usb,
				    msgpack_sbuffer_write);
				msgpack_pack_object(&upk, *uo);
				if (r->undo == NULL)
					r->undo = room_undo_create();
				(void)room_undo_add(r->undo, usb.data,
				    usb.size);
				msgpack_sbuffer_destroy(&usb);
			}
		}
	} else if (proto_obj_streq(proto_get(&u.data, "t"), "metadata") &&
	    (md = proto_get_map(&u.data, "metadata")) != NULL) {
		mpvalue_set_obj(&r->nb->metadata, md);
	} else if (proto_obj_streq(proto_get(&u.data, "t"), "outputs") &&
	    (cells = proto_get_array(&u.data, "cells")) != NULL) {
		for (i = 0; i < cells->via.array.size; i++) {
			co = &cells->via.array.ptr[i];
			if ((cid = proto_get_str(co, "cell_id", &clen)) ==
			    NULL)
				continue;
			cause = xstrndup(cid, clen);
			c = room_nb_find(r->nb, cause, NULL);
			free(cause);
			cause = NULL;
			if (c == NULL || c->type != ROOM_CELL_CODE)
				continue;
			room_journal_set_outputs(c, proto_get(co, "outputs"));
			room_nb_cell_set_count(c, proto_get_int(co,
			    "execution_count", &v) == 0 ? v : -1);
		}
	}
	msgpack_unpacked_destroy(&u);
	return (0);
}

/* A journal entry is one whole msgpack value, else it is counted bad. */
static int
room_journal_check_entry(uint64_t jseq, const void *buf, size_t len,
    void *arg)
{
	size_t			*bad = arg;
	msgpack_unpacked	 u;
	size_t			 at = 0;

	(void)jseq;
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, buf, len, &at) != 0 || at != len ||
	    u.data.type != MSGPACK_OBJECT_MAP)
		(*bad)++;
	msgpack_unpacked_destroy(&u);
	return (0);
}

/*
 * Can a stored room be brought back as it was stored?  Its snapshot must
 * be one whole msgpack value holding a notebook whose cells have types,
 * and its journal must read to the end (a damaged page gives SQLITE_CORRUPT)
 * with every entry whole.  quick_check at open sees the b-trees, not what
 * the rows hold: garbage in the last page of a snapshot's overflow chain
 * reads back as the snapshot's tail.  0, or -1 with *why (caller frees).
 */
int
room_journal_check(const struct store_room *sr, char **why)
{
	msgpack_unpacked	 u;
	const msgpack_object	*nb, *cells, *co;
	size_t			 at = 0, bad = 0, len, i;
	int			 n;

	if (sr->damaged) {
		xasprintf(why, "its snapshot (%zu bytes) fails its checksum",
		    sr->snapshot_len);
		return (-1);
	}
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, sr->snapshot, sr->snapshot_len, &at) != 0 ||
	    at != sr->snapshot_len) {
		xasprintf(why, "its snapshot (%zu bytes) does not decode",
		    sr->snapshot_len);
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	if ((nb = proto_get_map(&u.data, "nb")) == NULL ||
	    (cells = proto_get_array(nb, "cells")) == NULL) {
		xasprintf(why, "its snapshot holds no notebook");
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	for (i = 0; i < cells->via.array.size; i++) {
		co = &cells->via.array.ptr[i];
		if (proto_get_str(co, "cell_type", &len) == NULL || len == 0) {
			xasprintf(why, "cell %zu of its snapshot has no type",
			    i);
			msgpack_unpacked_destroy(&u);
			return (-1);
		}
	}
	msgpack_unpacked_destroy(&u);
	if ((n = store_journal_each(runtimed_store, sr->notebook_id, sr->seq,
	    room_journal_check_entry, &bad)) < 0) {
		xasprintf(why, "its journal cannot be read");
		return (-1);
	}
	if (bad > 0) {
		xasprintf(why, "%zu of its %d journal entries do not decode",
		    bad, n);
		return (-1);
	}
	return (0);
}

/*
 * A clean room woken from its file keeps what its snapshot adds to the
 * file: each cell's last editor, where the file's cell (same id) has
 * the type and source the snapshot's had, and the batches for undo.
 */
static int
room_journal_keep_cb(const struct store_room *sr, void *arg)
{
	struct room		*r = arg;
	struct room_cell	*c;
	struct room_author	*by;
	msgpack_unpacked	 u;
	const msgpack_object	*nb, *cells, *co;
	const char		*s, *t;
	char			*id;
	size_t			 at = 0, len, tlen, i;

	if (sr->damaged || r->nb == NULL)
		return (1);
	msgpack_unpacked_init(&u);
	if (proto_frame_unpack(&u, sr->snapshot, sr->snapshot_len, &at) != 0 ||
	    at != sr->snapshot_len) {
		msgpack_unpacked_destroy(&u);
		return (1);
	}
	if ((nb = proto_get_map(&u.data, "nb")) != NULL &&
	    (cells = proto_get_array(nb, "cells")) != NULL) {
		for (i = 0; i < cells->via.array.size; i++) {
			co = &cells->via.array.ptr[i];
			if (proto_get_map(co, "by") == NULL ||
			    (s = proto_get_str(co, "cell_id", &len)) == NULL)
				continue;
			id = xstrndup(s, len);
			c = room_nb_find(r->nb, id, NULL);
			free(id);
			s = proto_get_str(co, "source", &len);
			t = proto_get_str(co, "cell_type", &tlen);
			if (c == NULL || c->by != NULL || s == NULL ||
			    t == NULL || len != c->source_len ||
			    memcmp(s, c->source, len) != 0 ||
			    strlen(room_nb_cell_type_name(c)) != tlen ||
			    memcmp(t, room_nb_cell_type_name(c), tlen) != 0)
				continue;
			by = room_author_unpack(proto_get_map(co, "by"));
			room_cell_set_author(c, by);
			room_author_unref(by);
		}
	}
	if (room_undo_count(r->undo) == 0) {
		room_undo_free(r->undo);
		r->undo = room_undo_create();
		room_undo_restore(r->undo, proto_get_array(&u.data, "undo"));
	}
	msgpack_unpacked_destroy(&u);
	return (1);
}

void
room_journal_keep(struct room *r)
{
	if (runtimed_store == NULL)
		return;
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
	(void)store_room_get(runtimed_store, r->id, NULL,
	    room_journal_keep_cb, r);
}

/* Rebuild a dormant room's content from its snapshot and journal. */
int
room_journal_recover(struct room *r, char **cause)
{
	struct room_journal_load	ld;

	if (runtimed_store == NULL) {
		xasprintf(cause, "no state store");
		return (-1);
	}
	/* Read what was queued for it, too. */
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
	memset(&ld, 0, sizeof ld);
	ld.r = r;
	room_nb_free(r->nb);
	r->nb = NULL;
	if (store_room_get(runtimed_store, r->id, NULL,
	    room_journal_load_snapshot, &ld) <= 0 || r->nb == NULL) {
		if (ld.cause != NULL)
			*cause = ld.cause;
		else
			xasprintf(cause, "not in the state store");
		return (-1);
	}
	ld.jseq = r->jseq;
	/* Never come back with less than was stored without saying so. */
	if (store_journal_each(runtimed_store, r->id, r->jseq,
	    room_journal_replay, &ld) < 0) {
		room_nb_free(r->nb);
		r->nb = NULL;
		xasprintf(cause, "its journal cannot be read from the state "
		    "database");
		return (-1);
	}
	r->jseq = ld.jseq;
	r->journal_bytes = ld.bytes;
	if (ld.failed > 0)
		runtimed_warn("notebook %s (%s): %zu of its %zu journal entries "
		    "did not apply; it came back without them", r->id,
		    r->path != NULL ? r->path : "untitled", ld.failed,
		    ld.entries);
	log_debug("room %s: snapshot + %zu journal entries", r->id,
	    ld.entries);
	return (0);
}
