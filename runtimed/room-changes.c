/* SPDX-License-Identifier: ISC */
/*
 * room-changes.c: a room's change log.  Every change bumps the room's
 * seq and is kept in a ring of the last ROOM_LOG_SIZE changes, so a
 * client that missed some asks for those after its seq (ROOM_CHANGES)
 * and is told to resync when they are gone; the newest is announced to
 * every peer of the room as ROOM_CHANGED.  Each change also says how
 * its cells changed (details: "source", "inserted" at an index,
 * "outputs" with their count and last line, the kernel's state from and
 * to), so a client waiting for changes can say what happened without
 * reading the notebook (docs/decisions/019).  A peer with a change
 * wait asks (ROOM_WAIT) that the next change of the kinds it waits for
 * come with the content as ROOM_CHANGED_CONTENT, so it answers without
 * asking again (docs/decisions/031); when it says which content it holds,
 * only the cells changed since come whole (docs/decisions/036).  A
 * standing wait is not spent by a change: every one of its kinds comes
 * with the content, by reference to the one pushed before
 * (docs/decisions/040).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* One entry of a room's change log; details kept packed. */
struct room_change {
	uint64_t	  seq;
	int		  kinds;
	char		**cells;
	size_t		  ncells;
	char		 *exec_id;
	char		 *details;	/* msgpack, ndetails details */
	size_t		  details_len;
	size_t		  ndetails;
	int		  details_truncated;
	int		  reorders;	/* a cell deleted or moved */
	char		 *by;		/* "disk", or NULL */
	int64_t		  at;		/* the file's mtime (ms) */
	char		 *client;	/* a client's edit: its name */
	char		 *session;	/* and its session */
};

/*
 * A peer that wants the next change of kinds with the content; delta:
 * it holds the content at seq have (docs/decisions/036); standing: every
 * such change, each push then the content it holds (decision 040).
 */
struct room_wait {
	struct peer	*peer;
	int		 kinds;
	int		 delta;
	uint64_t	 have;
	int		 standing;
	int		 runs;		/* it reads runs (decision 041) */
};

/* A ROOM_CHANGED_CONTENT packed for the waits that hold have (or none). */
struct room_changes_with {
	int		 delta;
	uint64_t	 have;
	int		 runs;
	int		 ok;		/* 0: over the cap */
	struct mpbuf	 b;
};

/*
 * The last ROOM_LOG_SIZE changes, a ring; base = seq before the oldest.
 * The ring grows as changes come (until it is full, head == n), so a
 * room that is only read holds none of its 72 KiB.
 */
struct room_log {
	struct room_change	*ring;
	size_t			 cap;
	size_t			head;
	size_t			n;
	uint64_t		base;
	char			kernel[16];	/* state at the last change */
	struct room_wait	*waits;
	size_t			 nwaits;
};

/*
 * Most bytes of details one ROOM_CHANGES_REPLY carries: older changes
 * past it are listed without them (details_truncated), so the reply
 * stays well within its 16 MiB cap rather than turning into a resync.
 */
#define ROOM_CHANGES_DETAILS_BUDGET	(4 * 1024 * 1024)

/*
 * Most changes a content by reference spans: past them so many cells
 * have likely changed that the whole content is as good.
 */
#define ROOM_CHANGES_DELTA_MAX		64

/*
 * Most contents by reference packed for one change: waits that hold yet
 * another content get it whole (packed once), so a change costs at most
 * that many packs more than it did.
 */
#define ROOM_CHANGES_WITH_MAX		4

/* The details of a change being recorded. */
struct room_changes_det {
	struct mpbuf	b;
	size_t		n;
	int		truncated;
	int		reorders;
};

static void	room_changes_pack_kinds(msgpack_packer *, int);
static void	room_changes_pack_one(msgpack_packer *, struct room_change *,
		    int, int);
static void	room_changes_det_add(struct room_changes_det *,
		    const struct proto_change_detail *);
static void	room_changes_det_cell(struct room_changes_det *,
		    enum proto_change_how, const char *, struct room *);
static void	room_changes_det_outputs(struct room_changes_det *,
		    struct room *, const char *);
static uint64_t	room_changes_push(struct room *, int, char **, size_t,
		    const char *, struct room_changes_det *);
static void	room_changes_det_edit(struct room_changes_det *,
		    struct room *, const msgpack_object *);
static char	*room_changes_whole(struct room *, uint64_t, int *);
static struct room_changes_with *room_changes_with(struct room *,
		    struct room_change *, struct room_changes_with **,
		    size_t *, const struct room_wait *);

/* A new room's empty log. */
void
room_changes_create(struct room *r)
{
	r->log = xcalloc(1, sizeof *r->log);
}

/* Forget every change (the room's content is dropped). */
void
room_changes_clear(struct room *r)
{
	struct room_log		*log = r->log;
	struct room_change	*ch;
	size_t			 i, j;

	for (i = 0; i < log->cap; i++) {
		ch = &log->ring[i];
		for (j = 0; j < ch->ncells; j++)
			free(ch->cells[j]);
		free(ch->cells);
		free(ch->exec_id);
		free(ch->details);
		free(ch->by);
		free(ch->client);
		free(ch->session);
	}
	free(log->ring);
	log->ring = NULL;
	log->head = log->n = log->cap = 0;
	log->base = r->seq;	/* what came before is not held */
}

/* The room is freed. */
void
room_changes_free(struct room *r)
{
	room_changes_clear(r);
	free(r->log->waits);
	free(r->log);
	r->log = NULL;
}

/* The room was loaded: changes from its present seq on are known. */
void
room_changes_rebase(struct room *r)
{
	r->log->base = r->seq;
}

static void
room_changes_det_add(struct room_changes_det *d,
    const struct proto_change_detail *m)
{
	if (d->n == PROTO_CHANGE_MAX_DETAILS) {
		d->truncated = 1;
		return;
	}
	proto_change_detail_pack(&d->b.pk, m);
	d->n++;
}

/* A detail of one cell; inserted and moved say where it is now. */
static void
room_changes_det_cell(struct room_changes_det *d, enum proto_change_how how,
    const char *id, struct room *r)
{
	struct proto_change_detail	m;
	size_t				idx;

	memset(&m, 0, sizeof m);
	m.how = how;
	m.cell_id = proto_str_make(id);
	if (how == PROTO_CHANGE_DELETED || how == PROTO_CHANGE_MOVED)
		d->reorders = 1;	/* even past the details kept */
	if ((how == PROTO_CHANGE_INSERTED || how == PROTO_CHANGE_MOVED) &&
	    r->nb != NULL && room_nb_find(r->nb, id, &idx) != NULL) {
		m.has_index = 1;
		m.index = (int64_t)idx;
	}
	room_changes_det_add(d, &m);
}

/* An outputs detail: how many the cell has now, and its last line. */
static void
room_changes_det_outputs(struct room_changes_det *d, struct room *r,
    const char *id)
{
	struct proto_change_detail	 m;
	struct room_cell		*c;
	const char			*line;
	msgpack_unpacked		 u;
	size_t				 len;

	memset(&m, 0, sizeof m);
	msgpack_unpacked_init(&u);
	m.how = PROTO_CHANGE_OUTPUTS;
	m.cell_id = proto_str_make(id);
	if (r->nb != NULL && (c = room_nb_find(r->nb, id, NULL)) != NULL &&
	    c->outputs != NULL) {
		m.has_outputs = 1;
		m.outputs = (int64_t)c->outputs->n;
		if ((line = lastline_find_packed(c->outputs, &u,
		    PROTO_CHANGE_LINE_MAX, &len)) != NULL) {
			m.line.ptr = line;
			m.line.len = len;
		}
	}
	room_changes_det_add(d, &m);
	msgpack_unpacked_destroy(&u);
}

/*
 * Record a change: bump seq, keep it in the log, mark content changes
 * dirty (and due for autosave).  Takes cells (an array of ids, copied).
 * Announcing is separate, so a request's reply can go first.
 */
static uint64_t
room_changes_push(struct room *r, int kinds, char **cells, size_t ncells,
    const char *exec_id, struct room_changes_det *d)
{
	struct room_log			*log = r->log;
	struct room_change		*ch;
	struct proto_change_detail	 m;
	const char			*state = room_kernel_state(r);
	size_t				 i, grow;

	if (kinds & ROOM_CHANGE_KERNEL) {
		memset(&m, 0, sizeof m);
		m.how = PROTO_CHANGE_KERNEL;
		if (log->kernel[0] != '\0')
			m.from = proto_str_make(log->kernel);
		m.to = proto_str_make(state);
		room_changes_det_add(d, &m);
	}
	snprintf(log->kernel, sizeof log->kernel, "%s", state);
	r->seq++;
	if (log->head == log->cap) {
		/* Not full yet (head == n): room for more. */
		grow = log->cap == 0 ? 16 : log->cap * 2;
		if (grow > ROOM_LOG_SIZE)
			grow = ROOM_LOG_SIZE;
		log->ring = xreallocarray(log->ring, grow, sizeof *log->ring);
		memset(log->ring + log->cap, 0,
		    (grow - log->cap) * sizeof *log->ring);
		log->cap = grow;
	}
	ch = &log->ring[log->head];
	if (log->n == ROOM_LOG_SIZE)
		log->base = ch->seq;
	for (i = 0; i < ch->ncells; i++)
		free(ch->cells[i]);
	free(ch->cells);
	free(ch->exec_id);
	free(ch->details);
	free(ch->by);
	ch->by = NULL;
	ch->at = 0;
	free(ch->client);
	free(ch->session);
	ch->client = ch->session = NULL;
	ch->seq = r->seq;
	ch->kinds = kinds;
	ch->ncells = ncells;
	ch->cells = ncells > 0 ? xreallocarray(NULL, ncells,
	    sizeof *ch->cells) : NULL;
	for (i = 0; i < ncells; i++)
		ch->cells[i] = xstrdup(cells[i]);
	ch->exec_id = exec_id != NULL ? xstrdup(exec_id) : NULL;
	ch->ndetails = d->n;
	ch->details_truncated = d->truncated;
	ch->reorders = d->reorders;
	ch->details_len = d->b.sb.size;
	ch->details = NULL;
	if (d->b.sb.size > 0) {
		ch->details = xmalloc(d->b.sb.size);
		memcpy(ch->details, d->b.sb.data, d->b.sb.size);
	}
	mpbuf_free(&d->b);
	log->head = (log->head + 1) % ROOM_LOG_SIZE;
	if (log->n < ROOM_LOG_SIZE)
		log->n++;
	if (kinds & ROOM_CHANGE_CONTENT) {
		r->content_gen++;	/* a save in flight leaves it dirty */
		if (!r->dirty || r->unsaved_since == 0)
			r->unsaved_since = util_mono_ms();
		r->dirty = 1;
		room_autosave_arm(r);
	}
	return (r->seq);
}

/* A change of kinds to cells (outputs of a run, the kernel, a save). */
uint64_t
room_changes_record(struct room *r, int kinds, char **cells, size_t ncells,
    const char *exec_id)
{
	struct room_changes_det	d;
	size_t			i;

	memset(&d, 0, sizeof d);
	mpbuf_init(&d.b);
	if (kinds & ROOM_CHANGE_OUTPUTS) {
		for (i = 0; i < ncells; i++)
			room_changes_det_outputs(&d, r, cells[i]);
	}
	return (room_changes_push(r, kinds, cells, ncells, exec_id, &d));
}

/*
 * A change someone other than a client made (by: "disk", a merge of the
 * file, whose mtime is at), with its details.
 */
uint64_t
room_changes_record_by(struct room *r, int kinds, char **cells,
    size_t ncells, const struct proto_change_detail *dets, size_t ndets,
    const char *by, int64_t at)
{
	struct room_changes_det	 d;
	struct room_change	*ch;
	uint64_t		 seq;
	size_t			 i;

	memset(&d, 0, sizeof d);
	mpbuf_init(&d.b);
	for (i = 0; i < ndets; i++) {
		if (dets[i].how == PROTO_CHANGE_DELETED ||
		    dets[i].how == PROTO_CHANGE_MOVED)
			d.reorders = 1;
		if (dets[i].how == PROTO_CHANGE_INSERTED ||
		    dets[i].how == PROTO_CHANGE_MOVED)
			room_changes_det_cell(&d, dets[i].how,
			    dets[i].cell_id.ptr, r);
		else if (dets[i].how == PROTO_CHANGE_OUTPUTS)
			room_changes_det_outputs(&d, r, dets[i].cell_id.ptr);
		else
			room_changes_det_add(&d, &dets[i]);
	}
	seq = room_changes_push(r, kinds, cells, ncells, NULL, &d);
	ch = &r->log->ring[(r->log->head + ROOM_LOG_SIZE - 1) %
	    ROOM_LOG_SIZE];
	ch->by = by != NULL ? xstrdup(by) : NULL;
	ch->at = at;
	return (seq);
}

/*
 * The details of one resolved edit (room-nb.c packs them for the
 * journal: cell references are ids there), read by the edit codec.
 */
static void
room_changes_det_edit(struct room_changes_det *d, struct room *r,
    const msgpack_object *e)
{
	struct proto_edit	 m;
	const msgpack_object	*list, *v;
	char			*id = NULL, err[512];
	uint32_t		 i;

	if (proto_edit_unpack(e, "edit", &m, err, sizeof err) != 0)
		return;
	if (m.cell_id.obj != NULL && m.cell_id.obj->type == MSGPACK_OBJECT_STR)
		id = xstrndup(m.cell_id.obj->via.str.ptr,
		    m.cell_id.obj->via.str.size);
	if (m.op == PROTO_EDIT_INSERT && id != NULL)
		room_changes_det_cell(d, PROTO_CHANGE_INSERTED, id, r);
	else if (m.op == PROTO_EDIT_DELETE && id != NULL)
		room_changes_det_cell(d, PROTO_CHANGE_DELETED, id, r);
	else if (m.op == PROTO_EDIT_EDIT && id != NULL) {
		if (m.source.ptr != NULL)
			room_changes_det_cell(d, PROTO_CHANGE_SOURCE, id, r);
		if (m.cell_type.ptr != NULL)
			room_changes_det_cell(d, PROTO_CHANGE_TYPE, id, r);
		if (m.metadata.obj != NULL)
			room_changes_det_cell(d, PROTO_CHANGE_METADATA, id, r);
	} else if (m.op == PROTO_EDIT_MOVE ||
	    m.op == PROTO_EDIT_CLEAR_OUTPUTS) {
		list = m.cell_ids.obj;
		for (i = 0; list != NULL && i < list->via.array.size; i++) {
			v = &list->via.array.ptr[i];
			if (v->type != MSGPACK_OBJECT_STR)
				continue;
			free(id);
			id = xstrndup(v->via.str.ptr, v->via.str.size);
			room_changes_det_cell(d, m.op == PROTO_EDIT_MOVE ?
			    PROTO_CHANGE_MOVED : PROTO_CHANGE_CLEARED, id, r);
		}
	}
	free(id);
}

/*
 * Record an applied edit batch: batch is the batch as resolved (ids for
 * every reference, minted ids of inserts), which says how each cell
 * changed; positions are read after the commit.
 */
uint64_t
room_changes_record_edit(struct room *r, const struct room_nb_result *res,
    const char *batch, size_t len, char **resolved, size_t nresolved,
    const char *client, const char *session)
{
	struct room_changes_det	 d;
	struct room_change	*ch;
	msgpack_unpacked	 u;
	uint32_t		 i;
	uint64_t		 seq;

	memset(&d, 0, sizeof d);
	mpbuf_init(&d.b);
	msgpack_unpacked_init(&u);
	if (batch != NULL && msgpack_unpack_next(&u, batch, len, NULL) ==
	    MSGPACK_UNPACK_SUCCESS && u.data.type == MSGPACK_OBJECT_ARRAY) {
		for (i = 0; i < u.data.via.array.size; i++)
			room_changes_det_edit(&d, r, &u.data.via.array.ptr[i]);
	}
	msgpack_unpacked_destroy(&u);
	/* Merge conflicts the batch's resolve ops ended (decision 056). */
	for (i = 0; i < nresolved; i++)
		room_changes_det_cell(&d, PROTO_CHANGE_RESOLVED, resolved[i],
		    r);
	seq = room_changes_push(r, res->kinds, res->touched, res->ntouched,
	    NULL, &d);
	/* Who made it: the client the batch names (issue 39). */
	ch = &r->log->ring[(r->log->head + ROOM_LOG_SIZE - 1) %
	    ROOM_LOG_SIZE];
	ch->client = client != NULL ? xstrdup(client) : NULL;
	ch->session = session != NULL ? xstrdup(session) : NULL;
	return (seq);
}

static void
room_changes_pack_kinds(msgpack_packer *pk, int kinds)
{
	size_t	i, n = 0;

	for (i = 0; proto_change_kind_name(1 << i) != NULL; i++)
		n += (kinds & (1 << i)) != 0;
	proto_pack_key(pk, "kinds");
	msgpack_pack_array(pk, n);
	for (i = 0; proto_change_kind_name(1 << i) != NULL; i++) {
		if (kinds & (1 << i))
			proto_pack_cstr(pk, proto_change_kind_name(1 << i));
	}
}

/*
 * {seq, kinds, cell_ids, execution_ids, details, details_truncated?} of
 * one change, plus extra.
 */
static void
room_changes_pack_one(msgpack_packer *pk, struct room_change *ch, int extra,
    int bare)
{
	size_t	i;
	int	cut = ch->details_truncated || (bare && ch->ndetails > 0);

	msgpack_pack_map(pk, 5 + cut + extra + (ch->by != NULL ? 2 : 0) +
	    (ch->client != NULL) + (ch->session != NULL));
	proto_pack_uint(pk, "seq", ch->seq);
	if (ch->by != NULL) {
		proto_pack_str(pk, "by", ch->by);
		proto_pack_int(pk, "at", ch->at);
	}
	if (ch->client != NULL)
		proto_pack_str(pk, "client", ch->client);
	if (ch->session != NULL)
		proto_pack_str(pk, "session", ch->session);
	room_changes_pack_kinds(pk, ch->kinds);
	proto_pack_key(pk, "cell_ids");
	msgpack_pack_array(pk, ch->ncells);
	for (i = 0; i < ch->ncells; i++)
		proto_pack_cstr(pk, ch->cells[i]);
	proto_pack_key(pk, "execution_ids");
	msgpack_pack_array(pk, ch->exec_id != NULL ? 1 : 0);
	if (ch->exec_id != NULL)
		proto_pack_cstr(pk, ch->exec_id);
	proto_pack_key(pk, "details");
	msgpack_pack_array(pk, bare ? 0 : ch->ndetails);
	if (!bare && ch->details_len > 0)
		pk->callback(pk->data, ch->details, ch->details_len);
	if (cut)
		proto_pack_bool(pk, "details_truncated", 1);
}

/*
 * ROOM_WAIT: peer wants the next change of kinds with the content (0:
 * no longer), holding the content at seq have if has_have.  One change
 * ends it, unless standing; the peer asks again for the next.
 */
void
room_changes_wait(struct room *r, struct peer *peer, int kinds,
    int has_have, uint64_t have, int standing, int runs)
{
	struct room_log	*log = r->log;
	size_t		 i;

	for (i = 0; i < log->nwaits; i++) {
		if (log->waits[i].peer == peer)
			break;
	}
	if (kinds == 0) {
		if (i < log->nwaits)
			log->waits[i] = log->waits[--log->nwaits];
		return;
	}
	if (i == log->nwaits) {
		log->waits = xreallocarray(log->waits, log->nwaits + 1,
		    sizeof *log->waits);
		log->waits[log->nwaits++].peer = peer;
	}
	log->waits[i].kinds = kinds;
	log->waits[i].delta = has_have;
	log->waits[i].have = have;
	log->waits[i].standing = standing;
	log->waits[i].runs = runs;
}

/* The wait of peer for a change of kinds with the content, or NULL. */
static struct room_wait *
room_changes_waited(struct room *r, struct peer *peer, int kinds)
{
	struct room_log	*log = r->log;
	size_t		 i;

	for (i = 0; i < log->nwaits; i++) {
		if (log->waits[i].peer != peer)
			continue;
		if ((log->waits[i].kinds & kinds) == 0)
			return (NULL);
		return (&log->waits[i]);
	}
	return (NULL);
}

/*
 * The change at seq reached w's peer: with the content (pushed), a
 * standing wait goes on from that content; else the wait is over.
 */
static void
room_changes_spent(struct room *r, struct room_wait *w, int pushed,
    uint64_t seq)
{
	struct room_log	*log = r->log;

	if (pushed && w->standing) {
		w->delta = 1;
		w->have = seq;
		return;
	}
	*w = log->waits[--log->nwaits];
}

/*
 * Which cells to send whole to a peer that holds the content at seq
 * have (the others it gets by reference): those the changes since then
 * name.  NULL (send it all) unless every one of those changes is in the
 * log and names every cell it changed: a reload, or outputs or cells of
 * a change that lists none, may have changed any.  A cell missed here
 * is still caught: the reader checks each reference's version.  *runs:
 * whether the others are in the peer's copy in the same order with the
 * same stale, as far as the log tells (no cell deleted or moved, no run
 * or kernel change), so they can go as runs (decision 041).
 */
static char *
room_changes_whole(struct room *r, uint64_t have, int *runs)
{
	struct room_log		*log = r->log;
	struct room_change	*ch;
	char			*whole;
	uint64_t		 s, back;
	size_t			 i, idx, n = 0, nwhole = 0;

	*runs = 1;
	if (have >= r->seq || have < log->base || r->seq - have > log->n ||
	    r->seq - have > ROOM_CHANGES_DELTA_MAX || r->nb->ncells == 0)
		return (NULL);
	for (s = have + 1; s <= r->seq; s++) {
		back = r->seq - s;
		ch = &log->ring[(log->head + ROOM_LOG_SIZE - 1 - back) %
		    ROOM_LOG_SIZE];
		if (ch->seq != s || (ch->kinds & ROOM_CHANGE_RELOADED) ||
		    (ch->ncells == 0 &&
		    (ch->kinds & (ROOM_CHANGE_CELLS|ROOM_CHANGE_OUTPUTS))))
			return (NULL);
		if (ch->reorders ||
		    (ch->kinds & (ROOM_CHANGE_OUTPUTS|ROOM_CHANGE_KERNEL)))
			*runs = 0;
		n += ch->ncells;
	}
	if (n >= r->nb->ncells)
		return (NULL);
	whole = xcalloc(r->nb->ncells, 1);
	for (s = have + 1; s <= r->seq; s++) {
		back = r->seq - s;
		ch = &log->ring[(log->head + ROOM_LOG_SIZE - 1 - back) %
		    ROOM_LOG_SIZE];
		for (i = 0; i < ch->ncells; i++) {
			if (room_nb_find(r->nb, ch->cells[i], &idx) != NULL &&
			    idx < r->nb->ncells && !whole[idx]) {
				whole[idx] = 1;
				nwhole++;
			}
		}
	}
	if (nwhole == r->nb->ncells) {
		free(whole);
		return (NULL);
	}
	return (whole);
}

/*
 * The newest change as ROOM_CHANGED_CONTENT for the wait w, packed once
 * for every peer that holds the same content (or none): the cells that
 * changed since have whole, the others by reference, when it can
 * (room_changes_whole); else all whole.  Not ok when over the cap (they
 * get ROOM_CHANGED).
 */
static struct room_changes_with *
room_changes_with(struct room *r, struct room_change *ch,
    struct room_changes_with **withs, size_t *nwiths,
    const struct room_wait *w)
{
	struct room_changes_with	*with;
	char				*whole = NULL;
	size_t				 i, ndelta = 0;
	int				 delta = w->delta, runs = 0;

	for (i = 0; i < *nwiths; i++) {
		with = &(*withs)[i];
		if (with->delta == delta && (!delta ||
		    (with->have == w->have && with->runs == w->runs)))
			return (with);
		ndelta += with->delta;
	}
	if (delta && ndelta == ROOM_CHANGES_WITH_MAX) {
		for (i = 0; i < *nwiths; i++) {
			if (!(*withs)[i].delta)
				return (&(*withs)[i]);
		}
		delta = 0;
	}
	*withs = xreallocarray(*withs, *nwiths + 1, sizeof **withs);
	with = &(*withs)[(*nwiths)++];
	with->delta = delta;
	with->have = w->have;
	with->runs = w->runs;
	if (delta)
		whole = room_changes_whole(r, w->have, &runs);
	mpbuf_init(&with->b);
	room_changes_pack_one(&with->b.pk, ch, 2 + (whole != NULL), 0);
	proto_pack_str(&with->b.pk, "notebook_id", r->id);
	proto_pack_key(&with->b.pk, "content");
	room_pack_content(r, &with->b.pk, 1, whole, runs && w->runs);
	if (whole != NULL)
		proto_pack_uint(&with->b.pk, "base", w->have);
	free(whole);
	with->ok = with->b.sb.size <=
	    proto_msg_cap(PROTO_MSG_ROOM_CHANGED_CONTENT);
	return (with);
}

/*
 * Send the newest change as ROOM_CHANGED to every peer of the room, as
 * ROOM_CHANGED_CONTENT to those that wait for its kinds.
 */
void
room_changes_announce(struct room *r)
{
	struct room_log			*log = r->log;
	struct room_change		*ch;
	struct room_changes_with	*withs = NULL, *with;
	struct room_wait		*w;
	struct mpbuf			 b;
	size_t				 i, nwiths = 0;
	int				 pushed, kinds;

	if (r->nmembers == 0 || log->n == 0)
		return;
	ch = &log->ring[(log->head + ROOM_LOG_SIZE - 1) % ROOM_LOG_SIZE];
	/* The kernel's own metadata is the kernel's news, not content's. */
	kinds = ch->by != NULL && strcmp(ch->by, "kernel") == 0 &&
	    (ch->kinds & ROOM_CHANGE_METADATA) ? (ch->kinds &
	    ~ROOM_CHANGE_METADATA) | ROOM_CHANGE_KERNEL : ch->kinds;
	mpbuf_init(&b);
	room_changes_pack_one(&b.pk, ch, 1, 0);
	proto_pack_str(&b.pk, "notebook_id", r->id);
	for (i = 0; i < r->nmembers; i++) {
		if (log->nwaits > 0 && (w = room_changes_waited(r,
		    r->members[i], kinds)) != NULL) {
			/* Not loaded, or over the cap: the wait is over. */
			with = NULL;
			if (r->nb != NULL)
				with = room_changes_with(r, ch, &withs,
				    &nwiths, w);
			pushed = with != NULL && with->ok;
			room_changes_spent(r, w, pushed, ch->seq);
			if (pushed) {
				peer_send(r->members[i],
				    PROTO_MSG_ROOM_CHANGED_CONTENT, 0,
				    &with->b.sb);
				continue;
			}
		}
		peer_send(r->members[i], PROTO_MSG_ROOM_CHANGED, 0, &b.sb);
	}
	for (i = 0; i < nwiths; i++)
		mpbuf_free(&withs[i].b);
	free(withs);
	mpbuf_free(&b);
}

/* ROOM_CHANGES_REPLY {seq, resync, changes} for changes after `after`. */
int
room_changes_pack(struct room *r, uint64_t after, msgpack_packer *pk)
{
	struct room_log	*log = r->log;
	size_t		 i, first, n = 0, keep, bytes = 0;
	int		 resync;

	resync = after > r->seq || after < log->base ||
	    r->seq - after > log->n;
	if (!resync)
		n = (size_t)(r->seq - after);
	msgpack_pack_map(pk, 3);
	proto_pack_uint(pk, "seq", r->seq);
	proto_pack_bool(pk, "resync", resync);
	proto_pack_key(pk, "changes");
	msgpack_pack_array(pk, n);
	first = (log->head + ROOM_LOG_SIZE - n) % ROOM_LOG_SIZE;
	/* The newest changes keep their details within a budget. */
	for (keep = n; keep > 0; keep--) {
		bytes += log->ring[(first + keep - 1) % ROOM_LOG_SIZE].
		    details_len;
		if (bytes > ROOM_CHANGES_DETAILS_BUDGET)
			break;
	}
	for (i = 0; i < n; i++) {
		room_changes_pack_one(pk,
		    &log->ring[(first + i) % ROOM_LOG_SIZE], 0, i < keep);
	}
	return (0);
}

/* A kind's name ("outputs") as its ROOM_CHANGE_* bit; 0 if unknown. */
int
room_changes_kind(const char *kind)
{
	return (proto_change_kind_parse(kind, strlen(kind)));
}
