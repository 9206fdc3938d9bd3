/* SPDX-License-Identifier: ISC */
/*
 * room-undo.c: the batches a room's clients made, so each can revert its
 * own (docs/decisions/074), and the person on the live page any one
 * (docs/decisions/085).  Every edit batch that changes a cell's
 * content, existence or place leaves a record: who made it (the worker's
 * session, the MCP client's name), and for each cell it touched the cell
 * as it was before (type, source, metadata, the cell before it, its
 * index) and a hash of what it became.  Records go into the batch's own
 * journal entry and the snapshot, so they are as durable as the edit.
 *
 * A revert is planned on the content as it is now: it is refused
 * (undo_conflict) when a batch not being reverted touched one of the
 * cells later, or a cell is no longer what the batch left (the file on
 * disk, a Jupyter server); otherwise it is the plain ops that put each
 * cell back, applied as a batch of its own, which a later revert can
 * revert again.  Outputs and the notebook's metadata are not undone.
 *
 * The record, msgpack:
 *	{id, at, session?, client?, reverts?: [id], lost?,
 *	 cells: [{cell_id, before?: {cell_type, source, metadata, prev,
 *	 index}, after?: {hash, prev}}]}
 * before absent: the batch made the cell; after absent: it deleted it;
 * prev nil: the cell was first; lost: too large to keep the befores.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "runtimed.h"

struct room_undo_batch {
	uint64_t		 id;
	char			*session;	/* NULL: none said */
	char			*client;
	int64_t			 at;		/* ms since the epoch */
	uint64_t		*reverts;
	size_t			 nreverts;
	char			**cells;
	size_t			 ncells;
	int			 lost;
	char			*rec;		/* the record, packed */
	size_t			 len;
	TAILQ_ENTRY(room_undo_batch) entry;
};

struct room_undo {
	TAILQ_HEAD(room_undo_list_head, room_undo_batch) list; /* oldest first */
	size_t				 n;
	size_t				 bytes;
};

/* Where a batch's touched cells are in its new order. */
struct room_undo_where {
	struct lh_table		*byid;		/* id -> the cell after */
	struct lh_table		*pos;		/* that cell -> index + 1 */
};

/* The batch a revert is being planned as: its edits, packed, counted. */
struct room_undo_ops {
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	size_t			 n;
};

/* The metadata that makes cur's into want's (a map or NULL: none). */
struct room_undo_md {
	struct room_cell	*cur;
	const msgpack_object	*want;
};

/* One cell of a revert being planned. */
struct room_undo_cell {
	const char		*id;
	const msgpack_object	*before;	/* oldest reverted: NULL new */
	const msgpack_object	*after;		/* newest: NULL deleted */
	int			 moved;
	uint64_t		 index;
};

static int	room_undo_fnv_write(void *, const char *, size_t);
static void	room_undo_op(struct room_undo_ops *,
		    const struct proto_edit *);
static void	room_undo_pack_md(msgpack_packer *, const void *);
static void	room_undo_put_back(struct room_undo_ops *, enum proto_edit_op,
		    struct room_undo_cell *, struct room_cell *, const char *);
static const char *room_undo_prev_id(struct room_cell **, size_t);
static void	room_undo_pack_prev(msgpack_packer *, struct room_cell **,
		    size_t);
static void	room_undo_where(struct room_undo_where *, struct room_nb *,
		    struct room_cell **, size_t, struct room_cell **, size_t,
		    char **, size_t);
static struct room_cell *room_undo_where_find(struct room_undo_where *,
		    const char *, size_t *);
static void	room_undo_where_free(struct room_undo_where *);
static void	room_undo_batch_free(struct room_undo_batch *);
static int	room_undo_parse(struct room_undo_batch *, const char *,
		    size_t);
static void	room_undo_flags(struct room_undo *, struct room_undo_batch **,
		    int *);
static int	room_undo_mine(struct room_undo_batch *, const char *);
static void	room_undo_why(struct evbuffer *, size_t,
		    struct room_undo_batch *, struct room_undo_batch *,
		    const char *, const char *);
static int	room_undo_index_cmp(const void *, const void *);

struct room_undo *
room_undo_create(void)
{
	struct room_undo	*u;

	u = xcalloc(1, sizeof *u);
	TAILQ_INIT(&u->list);
	return (u);
}

void
room_undo_free(struct room_undo *u)
{
	struct room_undo_batch	*b;

	if (u == NULL)
		return;
	while ((b = TAILQ_FIRST(&u->list)) != NULL) {
		TAILQ_REMOVE(&u->list, b, entry);
		room_undo_batch_free(b);
	}
	free(u);
}

static void
room_undo_batch_free(struct room_undo_batch *b)
{
	size_t	i;

	for (i = 0; i < b->ncells; i++)
		free(b->cells[i]);
	free(b->cells);
	free(b->reverts);
	free(b->session);
	free(b->client);
	free(b->rec);
	free(b);
}

static int
room_undo_fnv_write(void *data, const char *buf, size_t len)
{
	uint64_t	*h = data;

	*h = proto_fnv64(*h, buf, len);
	return (0);
}

/* What an edit makes of a cell: type, source, metadata (not outputs). */
uint64_t
room_undo_hash(struct room_cell *c)
{
	msgpack_packer	 pk;
	uint64_t	 h = PROTO_FNV64_INIT;

	msgpack_packer_init(&pk, &h, room_undo_fnv_write);
	proto_pack_cstr(&pk, room_nb_cell_type_name(c));
	msgpack_pack_str(&pk, c->source_len);
	msgpack_pack_str_body(&pk, c->source, c->source_len);
	mpvalue_pack(&pk, &c->metadata);
	return (h);
}

/* The id of the cell before index i of cells (NULL: i is first). */
static const char *
room_undo_prev_id(struct room_cell **cells, size_t i)
{
	return (i == 0 ? NULL : cells[i - 1]->id);
}

static void
room_undo_pack_prev(msgpack_packer *pk, struct room_cell **cells, size_t i)
{
	const char	*prev = room_undo_prev_id(cells, i);

	if (prev != NULL)
		proto_pack_str(pk, "prev", prev);
	else
		proto_pack_nil(pk, "prev");
}

/*
 * Where the touched cells are in after[]: the batch's new cells and
 * copies (fresh), else the originals (moved, or untouched by a
 * clear_outputs of other cells), found by one pass over after[] that
 * tests a flag, not an id: a batch of 1000 edits into 100,000 cells
 * would otherwise hash every id of the notebook.
 */
static void
room_undo_where(struct room_undo_where *w, struct room_nb *nb,
    struct room_cell **after, size_t nafter, struct room_cell **fresh,
    size_t nfresh, char **touched, size_t ntouched)
{
	struct lh_entry		*e;
	struct room_cell	*c;
	size_t			 i;

	w->byid = lh_kchar_table_new(2 * (ntouched + nfresh) + 16, NULL);
	w->pos = lh_kptr_table_new(2 * (ntouched + nfresh) + 16, NULL);
	for (i = 0; i < nfresh; i++)
		lh_table_insert(w->byid, fresh[i]->id, fresh[i]);
	for (i = 0; i < ntouched; i++) {
		if (lh_table_lookup_entry(w->byid, touched[i]) == NULL &&
		    (c = room_nb_find(nb, touched[i], NULL)) != NULL)
			lh_table_insert(w->byid, touched[i], c);
	}
	lh_foreach(w->byid, e)
		((struct room_cell *)lh_entry_v(e))->flags |= ROOM_CELL_UNDO;
	for (i = 0; i < nafter; i++) {
		if (after[i]->flags & ROOM_CELL_UNDO)
			lh_table_insert(w->pos, after[i], (void *)(i + 1));
	}
	lh_foreach(w->byid, e)
		((struct room_cell *)lh_entry_v(e))->flags &= ~ROOM_CELL_UNDO;
}

/* The touched cell id in after[] and where, or NULL (deleted). */
static struct room_cell *
room_undo_where_find(struct room_undo_where *w, const char *id, size_t *at)
{
	struct lh_entry		*e, *p;
	struct room_cell	*c;

	if ((e = lh_table_lookup_entry(w->byid, id)) == NULL)
		return (NULL);
	c = (struct room_cell *)lh_entry_v(e);
	if ((p = lh_table_lookup_entry(w->pos, c)) == NULL)
		return (NULL);
	*at = (size_t)(uintptr_t)lh_entry_v(p) - 1;
	return (c);
}

static void
room_undo_where_free(struct room_undo_where *w)
{
	lh_table_free(w->byid);
	lh_table_free(w->pos);
}

/*
 * The record of a batch about to turn nb's cells into after[] (its
 * touched cells named), or 0 when it changed no cell's content, being
 * or place (outputs, the notebook's metadata).  With lost, the befores
 * are left out (too large to keep).
 */
int
room_undo_record(struct room_nb *nb, struct room_cell **after, size_t nafter,
    struct room_cell **fresh, size_t nfresh, char **touched,
    size_t ntouched, uint64_t id, const char *session,
    const char *client, const uint64_t *reverts, size_t nreverts, int lost,
    msgpack_sbuffer *out)
{
	struct room_undo_where	 w;
	struct room_cell	*b, *a;
	msgpack_packer		 pk;
	const char		*pb, *pa;
	size_t			 i, bi, ai = 0, n = 0;
	int			*keep;

	room_undo_where(&w, nb, after, nafter, fresh, nfresh, touched,
	    ntouched);
	keep = xcalloc(ntouched + 1, sizeof *keep);
	for (i = 0; i < ntouched; i++) {
		b = room_nb_find(nb, touched[i], &bi);
		a = room_undo_where_find(&w, touched[i], &ai);
		if (b == NULL && a == NULL)
			continue;
		if (b != NULL && a != NULL) {
			pb = room_undo_prev_id(nb->cells, bi);
			pa = room_undo_prev_id(after, ai);
			if (room_undo_hash(b) == room_undo_hash(a) &&
			    ((pb == NULL && pa == NULL) || (pb != NULL &&
			    pa != NULL && strcmp(pb, pa) == 0)))
				continue;
		}
		keep[i] = 1;
		n++;
	}
	/* A revert is kept even when it changed nothing: it undid. */
	if (n == 0 && nreverts == 0) {
		room_undo_where_free(&w);
		free(keep);
		return (0);
	}
	msgpack_sbuffer_init(out);
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3 + (session != NULL) + (client != NULL) +
	    (nreverts > 0) + lost);
	proto_pack_uint(&pk, "id", id);
	proto_pack_int(&pk, "at", util_now_us() / 1000);
	if (session != NULL)
		proto_pack_str(&pk, "session", session);
	if (client != NULL)
		proto_pack_str(&pk, "client", client);
	if (nreverts > 0) {
		proto_pack_key(&pk, "reverts");
		msgpack_pack_array(&pk, nreverts);
		for (i = 0; i < nreverts; i++)
			msgpack_pack_uint64(&pk, reverts[i]);
	}
	if (lost)
		proto_pack_bool(&pk, "lost", 1);
	proto_pack_key(&pk, "cells");
	msgpack_pack_array(&pk, n);
	for (i = 0; i < ntouched; i++) {
		if (!keep[i])
			continue;
		b = room_nb_find(nb, touched[i], &bi);
		a = room_undo_where_find(&w, touched[i], &ai);
		msgpack_pack_map(&pk, 1 + (b != NULL && !lost) + (a != NULL));
		proto_pack_str(&pk, "cell_id", touched[i]);
		if (b != NULL && !lost) {
			proto_pack_key(&pk, "before");
			msgpack_pack_map(&pk, 5);
			proto_pack_str(&pk, "cell_type",
			    room_nb_cell_type_name(b));
			proto_pack_strn(&pk, "source", b->source,
			    b->source_len);
			proto_pack_key(&pk, "metadata");
			mpvalue_pack(&pk, &b->metadata);
			room_undo_pack_prev(&pk, nb->cells, bi);
			proto_pack_uint(&pk, "index", bi);
		}
		if (a != NULL) {
			proto_pack_key(&pk, "after");
			msgpack_pack_map(&pk, 2);
			proto_pack_uint(&pk, "hash", room_undo_hash(a));
			room_undo_pack_prev(&pk, after, ai);
		}
	}
	room_undo_where_free(&w);
	free(keep);
	return (1);
}

/* Read a record's index fields; -1 if it is not one. */
static int
room_undo_parse(struct room_undo_batch *b, const char *rec, size_t len)
{
	msgpack_unpacked	 u;
	const msgpack_object	*cells, *rv, *o;
	const char		*s;
	size_t			 i, slen;
	int64_t			 v;
	int			 flag;

	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, rec, len, NULL) != MSGPACK_UNPACK_SUCCESS ||
	    proto_get_int(&u.data, "id", &v) != 0 ||
	    (cells = proto_get_array(&u.data, "cells")) == NULL) {
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	b->id = (uint64_t)v;
	if (proto_get_int(&u.data, "at", &v) == 0)
		b->at = v;
	if ((s = proto_get_str(&u.data, "session", &slen)) != NULL)
		b->session = xstrndup(s, slen);
	if ((s = proto_get_str(&u.data, "client", &slen)) != NULL)
		b->client = xstrndup(s, slen);
	if (proto_get_bool(&u.data, "lost", &flag) == 0)
		b->lost = flag;
	if ((rv = proto_get_array(&u.data, "reverts")) != NULL) {
		b->reverts = xcalloc(rv->via.array.size + 1,
		    sizeof *b->reverts);
		for (i = 0; i < rv->via.array.size; i++) {
			o = &rv->via.array.ptr[i];
			if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
				b->reverts[b->nreverts++] = o->via.u64;
		}
	}
	b->cells = xcalloc(cells->via.array.size + 1, sizeof *b->cells);
	for (i = 0; i < cells->via.array.size; i++) {
		if ((s = proto_get_str(&cells->via.array.ptr[i], "cell_id",
		    &slen)) != NULL)
			b->cells[b->ncells++] = xstrndup(s, slen);
	}
	msgpack_unpacked_destroy(&u);
	b->rec = xmalloc(len);
	memcpy(b->rec, rec, len);
	b->len = len;
	return (0);
}

/* Keep a record (as journaled or restored); the oldest go past the caps. */
int
room_undo_add(struct room_undo *u, const char *rec, size_t len)
{
	struct room_undo_batch	*b;

	b = xcalloc(1, sizeof *b);
	if (room_undo_parse(b, rec, len) != 0) {
		room_undo_batch_free(b);
		return (-1);
	}
	TAILQ_INSERT_TAIL(&u->list, b, entry);
	u->n++;
	u->bytes += len;
	while ((u->n > ROOM_UNDO_MAX || u->bytes > ROOM_UNDO_MAX_BYTES) &&
	    (b = TAILQ_FIRST(&u->list)) != NULL && b != TAILQ_LAST(&u->list,
	    room_undo_list_head)) {
		TAILQ_REMOVE(&u->list, b, entry);
		u->n--;
		u->bytes -= b->len;
		room_undo_batch_free(b);
	}
	return (0);
}

size_t
room_undo_count(struct room_undo *u)
{
	return (u != NULL ? u->n : 0);
}

/* The records as an array (the snapshot's "undo"). */
void
room_undo_pack(struct room_undo *u, msgpack_packer *pk)
{
	struct room_undo_batch	*b;

	msgpack_pack_array(pk, u->n);
	TAILQ_FOREACH(b, &u->list, entry)
		pk->callback(pk->data, b->rec, b->len);
}

/* Records from a snapshot's "undo". */
void
room_undo_restore(struct room_undo *u, const msgpack_object *o)
{
	msgpack_sbuffer	 sb;
	msgpack_packer	 pk;
	size_t		 i;

	if (o == NULL || o->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (i = 0; i < o->via.array.size; i++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_object(&pk, o->via.array.ptr[i]);
		(void)room_undo_add(u, sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
	}
}

/*
 * The batches oldest first in v, and which are undone: reverted by a
 * batch that is not itself undone (a revert is newer than what it
 * reverts, so newest first settles each before it counts).
 */
static void
room_undo_flags(struct room_undo *u, struct room_undo_batch **v, int *undone)
{
	struct room_undo_batch	*b;
	size_t			 i, j, k;

	i = 0;
	TAILQ_FOREACH(b, &u->list, entry) {
		v[i] = b;
		undone[i++] = 0;
	}
	for (i = u->n; i-- > 0;) {
		if (undone[i])
			continue;
		for (k = 0; k < v[i]->nreverts; k++) {
			for (j = 0; j < i; j++) {
				if (v[j]->id == v[i]->reverts[k])
					undone[j] = 1;
			}
		}
	}
}

static int
room_undo_mine(struct room_undo_batch *b, const char *session)
{
	return (session != NULL && b->session != NULL &&
	    strcmp(b->session, session) == 0);
}

/* Say that cell was changed after batch b, by later. */
static void
room_undo_why(struct evbuffer *why, size_t nconf, struct room_undo_batch *b,
    struct room_undo_batch *later, const char *cell, const char *session)
{
	int	mine = room_undo_mine(later, session);

	if (session == NULL) {
		/* The person's revert: whoever's batch it was. */
		evbuffer_add_printf(why, "%scell %s was changed after batch "
		    "b%llu by %s (batch b%llu)", nconf > 1 ? "; " : "", cell,
		    (unsigned long long)b->id, later->client != NULL ?
		    later->client : "a client", (unsigned long long)later->id);
		return;
	}
	evbuffer_add_printf(why, "%scell %s was changed after your batch "
	    "b%llu by %s%s%s (batch b%llu)", nconf > 1 ? "; " : "", cell,
	    (unsigned long long)b->id, mine ? "you" : "another client",
	    later->client != NULL && !mine ? " " : "",
	    later->client != NULL && !mine ? later->client : "",
	    (unsigned long long)later->id);
}

/*
 * The batches, newest first: [{batch_id, at, mine, client?, cells,
 * reverts?, undone_by?}]; at most max, and only session's with mine.
 */
void
room_undo_list(struct room_undo *u, const char *session, int only_mine,
    size_t max, msgpack_packer *pk)
{
	struct room_undo_batch	**v;
	int			 *undone;
	size_t			  i, j, k, n = 0;
	uint64_t		  by;

	if (u == NULL || u->n == 0) {
		msgpack_pack_array(pk, 0);
		return;
	}
	v = xcalloc(u->n, sizeof *v);
	undone = xcalloc(u->n, sizeof *undone);
	room_undo_flags(u, v, undone);
	for (i = 0; i < u->n; i++)
		n += !only_mine || room_undo_mine(v[i], session);
	if (n > max)
		n = max;
	msgpack_pack_array(pk, n);
	for (i = u->n; i-- > 0 && n > 0;) {
		if (only_mine && !room_undo_mine(v[i], session))
			continue;
		n--;
		by = 0;
		if (undone[i]) {
			for (j = i + 1; j < u->n && by == 0; j++) {
				for (k = 0; k < v[j]->nreverts; k++) {
					if (v[j]->reverts[k] == v[i]->id &&
					    !undone[j])
						by = v[j]->id;
				}
			}
		}
		msgpack_pack_map(pk, 4 + (v[i]->client != NULL) +
		    (v[i]->nreverts > 0) + (by != 0) + v[i]->lost);
		proto_pack_uint(pk, "batch_id", v[i]->id);
		proto_pack_int(pk, "at", v[i]->at);
		proto_pack_bool(pk, "mine", room_undo_mine(v[i], session));
		if (v[i]->client != NULL)
			proto_pack_str(pk, "client", v[i]->client);
		proto_pack_key(pk, "cells");
		msgpack_pack_array(pk, v[i]->ncells);
		for (j = 0; j < v[i]->ncells; j++)
			proto_pack_cstr(pk, v[i]->cells[j]);
		if (v[i]->nreverts > 0) {
			proto_pack_key(pk, "reverts");
			msgpack_pack_array(pk, v[i]->nreverts);
			for (j = 0; j < v[i]->nreverts; j++)
				msgpack_pack_uint64(pk, v[i]->reverts[j]);
		}
		if (by != 0)
			proto_pack_uint(pk, "undone_by", by);
		if (v[i]->lost)
			proto_pack_bool(pk, "lost", 1);
	}
	free(v);
	free(undone);
}

static int
room_undo_index_cmp(const void *a, const void *b)
{
	const struct room_undo_cell	*x = *(const struct room_undo_cell *const *)a;
	const struct room_undo_cell	*y = *(const struct room_undo_cell *const *)b;

	return (x->index < y->index ? -1 : x->index > y->index);
}

/* Is the cell id given (a str object) among the planned inserts so far? */
static int
room_undo_placed(struct room_undo_cell **order, size_t n, const char *id,
    size_t len)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strlen(order[i]->id) == len &&
		    memcmp(order[i]->id, id, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * "after" for a cell put back: its old neighbour, else by its index;
 * caller frees.
 */
static char *
room_undo_after(struct room_nb *nb, const msgpack_object *before,
    struct room_undo_cell **order, size_t placed, const char *self)
{
	const char	*prev;
	char		*id;
	size_t		 len, idx;
	int64_t		 index;
	struct room_cell *c;

	if ((prev = proto_get_str(before, "prev", &len)) == NULL)
		return (xstrdup("TOP"));
	id = xstrndup(prev, len);
	c = room_nb_find(nb, id, NULL);
	if ((c != NULL && strcmp(id, self) != 0) ||
	    room_undo_placed(order, placed, prev, len))
		return (id);
	free(id);
	/* Its neighbour is gone: by where it stood. */
	if (proto_get_int(before, "index", &index) != 0 || index <= 0)
		return (xstrdup("TOP"));
	idx = (size_t)index - 1;
	if (idx >= nb->ncells)
		return (xstrdup("BOTTOM"));
	if (strcmp(nb->cells[idx]->id, self) == 0)
		return (xstrdup("TOP"));
	return (xstrdup(nb->cells[idx]->id));
}

/*
 * The metadata that makes cur's into want's, as a merge: keys only cur
 * has are nil (deleted), want's as they are (struct room_undo_md).
 */
static void
room_undo_pack_md(msgpack_packer *pk, const void *arg)
{
	const struct room_undo_md	*md = arg;
	const msgpack_object		*want = md->want, *have = NULL;
	msgpack_unpacked		 u;
	size_t				 i, n;

	msgpack_unpacked_init(&u);
	if (md->cur != NULL &&
	    ((have = mpvalue_view(&md->cur->metadata, &u)) == NULL ||
	    have->type != MSGPACK_OBJECT_MAP))
		have = NULL;
	n = want != NULL ? want->via.map.size : 0;
	for (i = 0; have != NULL && i < have->via.map.size; i++) {
		if (want == NULL ||
		    mpvalue_get(want, &have->via.map.ptr[i].key) == NULL)
			n++;
	}
	msgpack_pack_map(pk, n);
	for (i = 0; have != NULL && i < have->via.map.size; i++) {
		if (want != NULL &&
		    mpvalue_get(want, &have->via.map.ptr[i].key) != NULL)
			continue;
		msgpack_pack_object(pk, have->via.map.ptr[i].key);
		msgpack_pack_nil(pk);
	}
	for (i = 0; want != NULL && i < want->via.map.size; i++) {
		msgpack_pack_object(pk, want->via.map.ptr[i].key);
		msgpack_pack_object(pk, want->via.map.ptr[i].val);
	}
	msgpack_unpacked_destroy(&u);
}

static const char *
room_undo_type(const msgpack_object *before)
{
	size_t		 len;
	const char	*s = proto_get_str(before, "cell_type", &len);

	if (s != NULL && len == 8 && memcmp(s, "markdown", 8) == 0)
		return ("markdown");
	if (s != NULL && len == 3 && memcmp(s, "raw", 3) == 0)
		return ("raw");
	return ("code");
}

/* One edit more of the revert. */
static void
room_undo_op(struct room_undo_ops *o, const struct proto_edit *e)
{
	proto_edit_pack(&o->pk, e);
	o->n++;
}

/*
 * The op (edit of cur, or insert after after when cur is NULL) that
 * makes uc's cell what it was before: its type, source and metadata.
 */
static void
room_undo_put_back(struct room_undo_ops *o, enum proto_edit_op op,
    struct room_undo_cell *uc, struct room_cell *cur, const char *after)
{
	struct proto_edit	e;
	struct room_undo_md	md;
	const char		*s;
	size_t			 len;

	memset(&e, 0, sizeof e);
	e.op = op;
	e.cell_id = proto_doc_cstr(uc->id);
	if (after != NULL)
		e.after = proto_doc_cstr(after);
	e.cell_type = proto_str_make(room_undo_type(uc->before));
	s = proto_get_str(uc->before, "source", &len);
	e.source.ptr = s != NULL ? s : "";
	e.source.len = s != NULL ? len : 0;
	md.cur = cur;
	md.want = proto_get_map(uc->before, "metadata");
	e.metadata.pack = room_undo_pack_md;
	e.metadata.arg = &md;
	room_undo_op(o, &e);
}

/* Does cur hold what before says (type, source, metadata)? */
static int
room_undo_same(struct room_cell *cur, const msgpack_object *before)
{
	msgpack_unpacked	 u;
	const msgpack_object	*want;
	const char		*s;
	size_t			 len;
	int			 same;

	s = proto_get_str(before, "source", &len);
	if (strcmp(room_nb_cell_type_name(cur), room_undo_type(before)) != 0 ||
	    s == NULL || len != cur->source_len ||
	    memcmp(s, cur->source, len) != 0)
		return (0);
	if ((want = proto_get_map(before, "metadata")) == NULL)
		return (0);
	msgpack_unpacked_init(&u);
	same = mpvalue_equal(want, mpvalue_view(&cur->metadata, &u));
	msgpack_unpacked_destroy(&u);
	return (same);
}

/*
 * Plan the revert of session's last nbatches batches (batch_id 0) or of
 * batch batch_id, on nb as it is: the plain ops that put each cell back
 * (a batch of edits, packed into ops) and the batches reverted
 * (*reverts); or -1 with
 * *code and *cause (undo_conflict names each cell and who changed it).
 * session NULL is the person on the live page, who reverts one batch by
 * its id, whoever made it (decision 085); the same conflicts refuse it.
 */
int
room_undo_plan(struct room_undo *u, struct room_nb *nb, const char *session,
    int64_t nbatches, uint64_t batch_id, msgpack_sbuffer *ops,
    uint64_t **reverts, size_t *nreverts, char **cause, const char **code)
{
	struct room_undo_batch	**v = NULL;
	struct room_undo_cell	 *cells = NULL, **order = NULL, *uc;
	struct room_undo_ops	  o;
	struct proto_edit	  pe;
	struct proto_cstrs	  l;
	struct json_object	 *byid = NULL, *touch = NULL, *e;
	msgpack_packer		  pk;
	msgpack_unpacked	 *recs = NULL;
	const msgpack_object	 *list, *co, *bf, *af, *h;
	struct room_cell	 *cur;
	struct evbuffer		 *why = NULL;
	const char		 *s, *p1, *p2;
	char			 *key, *after;
	size_t			  i, j, k, n, ncells = 0, cap = 0, nconf = 0;
	size_t			  nsel = 0, norder = 0, len, l1, l2, t;
	int			 *undone = NULL, *sel = NULL;
	int64_t			  hv;
	int			  rc = -1;

	msgpack_sbuffer_init(&o.sb);
	msgpack_packer_init(&o.pk, &o.sb, msgpack_sbuffer_write);
	o.n = 0;
	*reverts = NULL;
	*nreverts = 0;
	*code = PROTO_E_INVALID_ARGUMENT;
	n = room_undo_count(u);
	if (n > 0) {
		v = xcalloc(n, sizeof *v);
		undone = xcalloc(n, sizeof *undone);
		sel = xcalloc(n, sizeof *sel);
		room_undo_flags(u, v, undone);
	}
	if (batch_id != 0) {
		for (i = 0; i < n && v[i]->id != batch_id; i++)
			;
		if (i == n) {
			xasprintf(cause, "no batch b%llu on this notebook (the "
			    "last %d are kept): list them with undo \"list\"",
			    (unsigned long long)batch_id, ROOM_UNDO_MAX);
			goto out;
		}
		if (session != NULL && !room_undo_mine(v[i], session)) {
			xasprintf(cause, "batch b%llu is another client's%s%s%s: "
			    "only your own batches are undone",
			    (unsigned long long)batch_id,
			    v[i]->client != NULL ? " (" : "",
			    v[i]->client != NULL ? v[i]->client : "",
			    v[i]->client != NULL ? ")" : "");
			goto out;
		}
		if (undone[i]) {
			xasprintf(cause, "batch b%llu is undone already; undo "
			    "the batch that reverted it to redo it",
			    (unsigned long long)batch_id);
			goto out;
		}
		sel[i] = 1;
		nsel = 1;
	} else {
		for (i = n; i-- > 0 && (int64_t)nsel < nbatches;) {
			if (!room_undo_mine(v[i], session) || undone[i] ||
			    v[i]->nreverts > 0)
				continue;
			sel[i] = 1;
			nsel++;
		}
		if ((int64_t)nsel < nbatches) {
			xasprintf(cause, "you have %zu batch%s to undo on this "
			    "notebook, not %lld; nothing was undone", nsel,
			    nsel == 1 ? "" : "es", (long long)nbatches);
			goto out;
		}
	}
	for (i = 0, len = 0; i < n; i++)
		len += sel[i] ? v[i]->ncells : 0;
	if (len > PROTO_EDIT_MAX_EDITS) {
		xasprintf(cause, "those batches touched %zu cells; one undo "
		    "puts back at most %d: undo fewer at once", len,
		    PROTO_EDIT_MAX_EDITS);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (sel[i] && v[i]->lost) {
			xasprintf(cause, "batch b%llu was too large to keep for "
			    "undo; nothing was undone",
			    (unsigned long long)v[i]->id);
			goto out;
		}
	}

	/* Which batches touched each cell, oldest first. */
	touch = json_object_new_object();
	for (i = 0; i < n; i++) {
		for (k = 0; k < v[i]->ncells; k++) {
			if (!json_object_object_get_ex(touch, v[i]->cells[k],
			    &e)) {
				e = json_object_new_array();
				json_object_object_add(touch, v[i]->cells[k], e);
			}
			json_object_array_add(e, json_object_new_int64(
			    (int64_t)i));
		}
	}

	/* A later batch not reverted here touched the same cells. */
	why = evbuffer_new();
	for (i = 0; i < n; i++) {
		if (!sel[i])
			continue;
		for (k = 0; k < v[i]->ncells; k++) {
			json_object_object_get_ex(touch, v[i]->cells[k], &e);
			for (t = 0; t < json_object_array_length(e); t++) {
				j = (size_t)json_object_get_int64(
				    json_object_array_get_idx(e, t));
				if (j <= i || sel[j] || undone[j])
					continue;
				/* A revert of later batches only: they cancel. */
				for (len = 0; len < v[j]->nreverts &&
				    v[j]->reverts[len] > v[i]->id; len++)
					;
				if (v[j]->nreverts > 0 &&
				    len == v[j]->nreverts)
					continue;
				if (nconf++ < ROOM_UNDO_CONFLICTS_SHOWN)
					room_undo_why(why, nconf, v[i], v[j],
					    v[i]->cells[k], session);
				break;
			}
		}
	}

	/* Each cell: before the oldest reverted batch, after the newest. */
	recs = xcalloc(n, sizeof *recs);
	byid = json_object_new_object();
	for (i = 0; i < n; i++) {
		msgpack_unpacked_init(&recs[i]);
		if (!sel[i])
			continue;
		if (msgpack_unpack_next(&recs[i], v[i]->rec, v[i]->len, NULL) !=
		    MSGPACK_UNPACK_SUCCESS ||
		    (list = proto_get_array(&recs[i].data, "cells")) == NULL)
			fatalx("%s: a kept record does not read", __func__);
		for (k = 0; k < list->via.array.size; k++) {
			co = &list->via.array.ptr[k];
			if ((s = proto_get_str(co, "cell_id", &len)) == NULL)
				continue;
			bf = proto_get_map(co, "before");
			af = proto_get_map(co, "after");
			key = xstrndup(s, len);
			if (!json_object_object_get_ex(byid, key, &e)) {
				if (ncells == cap) {
					cap = cap < 16 ? 16 : cap * 2;
					cells = xreallocarray(cells, cap,
					    sizeof *cells);
				}
				uc = &cells[ncells];
				memset(uc, 0, sizeof *uc);
				uc->before = bf;
				json_object_object_add(byid, key,
				    json_object_new_int64((int64_t)ncells++));
			} else
				uc = &cells[json_object_get_int64(e)];
			free(key);
			uc->after = af;
			p1 = bf != NULL ? proto_get_str(bf, "prev", &l1) : NULL;
			p2 = af != NULL ? proto_get_str(af, "prev", &l2) : NULL;
			if (bf != NULL && af != NULL && ((p1 == NULL) !=
			    (p2 == NULL) || (p1 != NULL && (l1 != l2 ||
			    memcmp(p1, p2, l1) != 0))))
				uc->moved = 1;
		}
	}
	/* Pointers into byid's keys stay valid while byid lives. */
	json_object_object_foreach(byid, k1, val)
		cells[json_object_get_int64(val)].id = k1;

	/* Each cell must be what the newest reverted batch left. */
	for (i = 0; i < ncells; i++) {
		uc = &cells[i];
		cur = room_nb_find(nb, uc->id, NULL);
		if (uc->after != NULL && cur != NULL &&
		    (h = proto_get(uc->after, "hash")) != NULL &&
		    h->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    h->via.u64 == room_undo_hash(cur))
			continue;
		if (uc->after == NULL && cur == NULL)
			continue;
		/* Named already by the batch that changed it. */
		if (nconf > 0 && evbuffer_search(why, uc->id, strlen(uc->id),
		    NULL).pos != -1)
			continue;
		if (nconf++ < ROOM_UNDO_CONFLICTS_SHOWN)
			evbuffer_add_printf(why, "%scell %s %s since, outside "
			    "any client's batch (the file on disk or its "
			    "server)", nconf > 1 ? "; " : "", uc->id,
			    uc->after == NULL ? "came back" : cur == NULL ?
			    "was deleted" : "was changed");
	}
	if (nconf > 0) {
		*code = PROTO_E_UNDO_CONFLICT;
		xasprintf(cause, "nothing was undone: %.*s%s; undo only what "
		    "no one changed since, or edit the cells yourself",
		    (int)evbuffer_get_length(why),
		    (const char *)evbuffer_pullup(why, -1),
		    nconf > ROOM_UNDO_CONFLICTS_SHOWN ? " (and more)" : "");
		goto out;
	}

	/* Deletes, edits, then inserts and moves in their old order. */
	order = xcalloc(ncells + 1, sizeof *order);
	for (i = 0; i < ncells; i++) {
		uc = &cells[i];
		cur = room_nb_find(nb, uc->id, NULL);
		if (uc->before == NULL) {
			if (cur == NULL)
				continue;
			memset(&pe, 0, sizeof pe);
			pe.op = PROTO_EDIT_DELETE;
			pe.cell_id = proto_doc_cstr(uc->id);
			room_undo_op(&o, &pe);
			continue;
		}
		if (proto_get_int(uc->before, "index", &hv) == 0 && hv >= 0)
			uc->index = (uint64_t)hv;
		if (cur == NULL || uc->moved)
			order[norder++] = uc;
		if (cur == NULL || room_undo_same(cur, uc->before))
			continue;
		room_undo_put_back(&o, PROTO_EDIT_EDIT, uc, cur, NULL);
	}
	qsort(order, norder, sizeof *order, room_undo_index_cmp);
	for (i = 0; i < norder; i++) {
		uc = order[i];
		after = room_undo_after(nb, uc->before, order, i, uc->id);
		if (room_nb_find(nb, uc->id, NULL) == NULL)
			room_undo_put_back(&o, PROTO_EDIT_INSERT, uc, NULL,
			    after);
		else {
			memset(&pe, 0, sizeof pe);
			pe.op = PROTO_EDIT_MOVE;
			l.v = &uc->id;
			l.n = 1;
			pe.cell_ids = proto_doc_cstrs(&l);
			pe.after = proto_doc_cstr(after);
			room_undo_op(&o, &pe);
		}
		free(after);
	}
	if (o.n == 0) {
		/* Every cell is as it was: an edit that changes nothing. */
		for (i = 0; i < ncells; i++) {
			if ((cur = room_nb_find(nb, cells[i].id, NULL)) == NULL)
				continue;
			memset(&pe, 0, sizeof pe);
			pe.op = PROTO_EDIT_EDIT;
			pe.cell_id = proto_doc_cstr(cur->id);
			pe.source.ptr = cur->source;
			pe.source.len = cur->source_len;
			room_undo_op(&o, &pe);
			break;
		}
	}
	if (o.n == 0) {
		xasprintf(cause, "nothing to undo: the batch's cells are gone "
		    "and were new");
		goto out;
	}
	msgpack_packer_init(&pk, ops, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, o.n);
	msgpack_sbuffer_write(ops, o.sb.data, o.sb.size);
	*reverts = xcalloc(nsel + 1, sizeof **reverts);
	for (i = n; i-- > 0;) {
		if (sel[i])
			(*reverts)[(*nreverts)++] = v[i]->id;
	}
	rc = 0;
out:
	msgpack_sbuffer_destroy(&o.sb);
	if (recs != NULL) {
		for (i = 0; i < n; i++)
			msgpack_unpacked_destroy(&recs[i]);
		free(recs);
	}
	json_object_put(byid);
	json_object_put(touch);
	if (why != NULL)
		evbuffer_free(why);
	free(order);
	free(cells);
	free(v);
	free(undone);
	free(sel);
	return (rc);
}
