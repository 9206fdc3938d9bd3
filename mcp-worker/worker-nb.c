/* SPDX-License-Identifier: ISC */
/*
 * worker-nb.c: the worker's replica of a notebook, from the daemon's
 * ROOM_JOINED and ROOM_CONTENT (shared by reference, the room keeps the
 * last one).  Their codecs check and type them; only their documents
 * (cells, metadata, warnings) become JSON.  A notebook's cells stay
 * packed, each becoming JSON when first asked for: a view of a few
 * cells decodes those (docs/decisions/035).  A content pushed by
 * reference to the last one shares the cells that did not change with
 * it (docs/decisions/036).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/*
 * A frame's zone, shared by the notebooks whose cells live in it; cells:
 * how many it brought whole.
 */
struct worker_nb_zone {
	msgpack_zone		*zone;
	size_t			 cells;
	int			 refs;
};

/*
 * A cell's cell_id, version and stale (NULL: none), where it keeps them,
 * and its hash in a run of references (hashed: it has one; decision 041).
 */
struct worker_nb_key {
	const msgpack_object	*id;
	const msgpack_object	*version;
	const msgpack_object	*stale;
	uint64_t		 hash;
	int			 hashed;
};

/*
 * The cells of a notebook as the daemon sent them (msgpack objects in
 * zones of their own), each decoded to JSON when first asked for.  The
 * cells of a content pushed whole live in zones[0]; one pushed by
 * reference has its new cells and the array in zones[0], and the cells
 * it shares in the zones of the content before it (from).
 */
struct worker_nb_doc {
	struct worker_nb_zone	**zones;
	size_t			 nzones;
	size_t			*from;		/* zone of each; NULL: 0 */
	struct worker_nb_key	*keys;		/* of each, or NULL */
	const msgpack_object	*cells;		/* n */
	size_t			 n;
	struct json_object	**cell;		/* decoded, or NULL */
	struct json_object	*all;		/* the array, if asked */
};

static msgpack_object	 worker_nb_copy(const msgpack_object *,
			     msgpack_zone **);
static struct worker_nb_doc	*worker_nb_doc_create(const msgpack_object *,
				    msgpack_zone *);
static void	worker_nb_doc_free(struct worker_nb_doc *);
static struct worker_nb_zone	*worker_nb_zone_create(msgpack_zone *, size_t);
static void	worker_nb_zone_unref(struct worker_nb_zone *);
static struct worker_nb *worker_nb_create(const struct proto_room_joined *);
static void	worker_nb_key_read(const msgpack_object *,
		    struct worker_nb_key *);
static const struct worker_nb_key *worker_nb_keys(struct worker_nb_doc *);
static int	worker_nb_str_eq(const msgpack_object *,
		    const msgpack_object *);
static int	worker_nb_stale_eq(const msgpack_object *,
		    const msgpack_object *);
static ssize_t	worker_nb_delta_find(const struct worker_nb_doc *,
		    const struct worker_nb_key *, const msgpack_object *,
		    size_t);
static ssize_t	worker_nb_delta_run(const struct worker_nb_doc *,
		    const struct worker_nb_key *, const msgpack_object *,
		    size_t);
static int	worker_nb_delta_count(const msgpack_object *, size_t,
		    size_t *);
static void	worker_nb_delta_from(const struct worker_nb_doc *, size_t,
		    struct worker_nb_doc *, size_t, size_t *);
static void	worker_nb_delta_held(const struct worker_nb_doc *, size_t,
		    struct worker_nb_doc *, size_t, msgpack_object *,
		    size_t *);
static const char	*worker_nb_bytes(msgpack_zone *, const char *, uint32_t);
static void	worker_nb_clone(msgpack_zone *, const msgpack_object *,
		    msgpack_object *, int);
static int	worker_nb_delta_cell(msgpack_zone *, const msgpack_object *,
		    const struct worker_nb_key *, const msgpack_object *,
		    msgpack_object *, struct worker_nb_key *);

static struct worker_nb_zone *
worker_nb_zone_create(msgpack_zone *zone, size_t cells)
{
	struct worker_nb_zone	*z;

	z = xcalloc(1, sizeof *z);
	z->zone = zone;
	z->cells = cells;
	z->refs = 1;
	return (z);
}

static void
worker_nb_zone_unref(struct worker_nb_zone *z)
{
	if (z == NULL || --z->refs > 0)
		return;
	msgpack_zone_free(z->zone);
	free(z);
}

/* A copy of o in a zone of its own (packed and unpacked again). */
static msgpack_object
worker_nb_copy(const msgpack_object *o, msgpack_zone **zone)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_object(&pk, *o);
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) !=
	    MSGPACK_UNPACK_SUCCESS ||
	    !msgpack_zone_push_finalizer(u.zone, free, sb.data))
		fatalx("cannot copy a notebook's cells");
	*zone = msgpack_unpacked_release_zone(&u);
	return (u.data);
}

/*
 * The cells (an array) kept: in zone, the frame's own (the doc takes
 * it), or else copied into one.
 */
static struct worker_nb_doc *
worker_nb_doc_create(const msgpack_object *cells, msgpack_zone *zone)
{
	struct worker_nb_doc	*d;
	msgpack_object		 copy;

	d = xcalloc(1, sizeof *d);
	if (zone == NULL) {
		copy = worker_nb_copy(cells, &zone);
		cells = &copy;	/* the object itself is a copy */
	}
	if (cells->type == MSGPACK_OBJECT_ARRAY) {
		d->n = cells->via.array.size;
		d->cells = cells->via.array.ptr;
	}
	d->zones = xcalloc(1, sizeof *d->zones);
	d->zones[0] = worker_nb_zone_create(zone, d->n);
	d->nzones = 1;
	d->cell = xcalloc(d->n + 1, sizeof *d->cell);
	return (d);
}

static void
worker_nb_doc_free(struct worker_nb_doc *d)
{
	size_t	i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++)
		json_object_put(d->cell[i]);
	json_object_put(d->all);
	free(d->cell);
	for (i = 0; i < d->nzones; i++)
		worker_nb_zone_unref(d->zones[i]);
	free(d->zones);
	free(d->from);
	free(d->keys);
	free(d);
}

/* How many cells the notebook has. */
size_t
worker_nb_count(const struct worker_nb *nb)
{
	return (nb->doc->n);
}

/* Cell i as JSON (borrowed, decoded once), or NULL past the end. */
struct json_object *
worker_nb_cell(const struct worker_nb *nb, size_t i)
{
	struct worker_nb_doc	*d = nb->doc;

	if (i >= d->n)
		return (NULL);
	if (d->cell[i] == NULL &&
	    (d->cell[i] = mpjson_unpack(&d->cells[i])) == NULL)
		d->cell[i] = json_object_new_object();	/* a nil cell */
	return (d->cell[i]);
}

/*
 * Cell i's own fields as JSON (a reference the caller puts), without the
 * parts an outline does not show (outputs, metadata, attachments, extra);
 * *nouts gets how many outputs it has.  The decoded cell when there is
 * one; else only those fields are decoded, and nothing is kept.
 */
struct json_object *
worker_nb_cell_head(const struct worker_nb *nb, size_t i, size_t *nouts)
{
	static const char *const skip[] = {
		"outputs", "metadata", "attachments", "extra", NULL
	};
	struct worker_nb_doc	*d = nb->doc;
	struct json_object	*cell, *v;
	const msgpack_object_kv	*kv;
	const msgpack_object	*o;
	char			*key;
	size_t			 k;
	uint32_t		 j;

	*nouts = 0;
	if (i >= d->n)
		return (NULL);
	if (d->cell[i] != NULL) {
		v = json_object_object_get(d->cell[i], "outputs");
		if (json_object_is_type(v, json_type_array))
			*nouts = json_object_array_length(v);
		return (json_object_get(d->cell[i]));
	}
	o = &d->cells[i];
	cell = json_object_new_object();
	if (o->type != MSGPACK_OBJECT_MAP)
		return (cell);		/* a nil cell */
	for (j = 0; j < o->via.map.size; j++) {
		kv = &o->via.map.ptr[j];
		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->key.via.str.size == 0)
			continue;
		for (k = 0; skip[k] != NULL; k++) {
			if (kv->key.via.str.size == strlen(skip[k]) &&
			    memcmp(kv->key.via.str.ptr, skip[k],
			    kv->key.via.str.size) == 0)
				break;
		}
		if (k == 0 && kv->val.type == MSGPACK_OBJECT_ARRAY)
			*nouts = kv->val.via.array.size;
		if (skip[k] != NULL)
			continue;
		key = xstrndup(kv->key.via.str.ptr, kv->key.via.str.size);
		json_object_object_add(cell, key, mpjson_unpack(&kv->val));
		free(key);
	}
	return (cell);
}

/* A string an outline line shows as text: short and without NUL. */
static int
worker_nb_line_str(const msgpack_object *o)
{
	return (o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size <= WORKER_NB_LINE_STR_MAX &&
	    memchr(o->via.str.ptr, '\0', o->via.str.size) == NULL);
}

/* A cell's last editor, {disk: true} or {client, session?}; -1 if not. */
static int
worker_nb_line_by(const msgpack_object *v, struct worker_nb_line *l)
{
	const msgpack_object	*o;
	int			 disk;

	l->by_client = l->by_session = NULL;
	l->by_disk = 0;
	if (v->type != MSGPACK_OBJECT_MAP)
		return (-1);
	if (proto_get_bool(v, "disk", &disk) == 0 && disk) {
		l->by_disk = 1;
		return (0);
	}
	if ((o = proto_get(v, "client")) == NULL || !worker_nb_line_str(o))
		return (-1);
	l->by_client = o;
	if ((o = proto_get(v, "session")) != NULL) {
		if (!worker_nb_line_str(o))
			return (-1);
		l->by_session = o;
	}
	return (0);
}

/*
 * What an outline shows of cell i, borrowed from the cell as the daemon
 * sent it, without decoding it.  -1 when the cell was decoded or holds
 * a field of a type the daemon does not send: the caller then reads
 * worker_nb_cell_head, which shows any cell.
 */
int
worker_nb_cell_line(const struct worker_nb *nb, size_t i,
    struct worker_nb_line *l)
{
	struct worker_nb_doc	*d = nb->doc;
	const msgpack_object_kv	*kv;
	const msgpack_object	*o, *v;
	const char		*key;
	uint32_t		 j, k;

	memset(l, 0, sizeof *l);
	l->source = "";
	if (i >= d->n || d->cell[i] != NULL)
		return (-1);
	o = &d->cells[i];
	if (o->type != MSGPACK_OBJECT_MAP)
		return (-1);
	/* The last of a key wins, as it does in the decoded cell. */
	for (j = 0; j < o->via.map.size; j++) {
		kv = &o->via.map.ptr[j];
		if (kv->key.type != MSGPACK_OBJECT_STR)
			continue;
		key = kv->key.via.str.ptr;
		v = &kv->val;
		switch (kv->key.via.str.size) {
		case 2:
			if (memcmp(key, "by", 2) != 0)
				break;
			if (worker_nb_line_by(v, l) != 0)
				return (-1);
			break;
		case 5:
			if (memcmp(key, "stale", 5) != 0)
				break;
			if (v->type != MSGPACK_OBJECT_ARRAY)
				return (-1);
			for (k = 0; k < v->via.array.size; k++)
				if (!worker_nb_line_str(&v->via.array.ptr[k]))
					return (-1);
			l->stale = v->via.array.size > 0 ? v : NULL;
			break;
		case 6:
			if (memcmp(key, "source", 6) != 0)
				break;
			if (v->type != MSGPACK_OBJECT_STR)
				return (-1);
			l->source = v->via.str.ptr;
			l->source_len = v->via.str.size;
			break;
		case 7:
			if (memcmp(key, "cell_id", 7) == 0) {
				if (!worker_nb_line_str(v))
					return (-1);
				l->id = v;
			} else if (memcmp(key, "outputs", 7) == 0)
				l->nouts = v->type == MSGPACK_OBJECT_ARRAY ?
				    v->via.array.size : 0;
			else if (memcmp(key, "version", 7) == 0) {
				if (!worker_nb_line_str(v))
					return (-1);
				l->version = v;
			}
			break;
		case 9:
			if (memcmp(key, "cell_type", 9) != 0)
				break;
			if (!worker_nb_line_str(v))
				return (-1);
			l->type = v;
			break;
		case 15:
			if (memcmp(key, "execution_count", 15) != 0)
				break;
			l->has_count = 1;
			if (v->type == MSGPACK_OBJECT_NIL)
				l->has_count = 0;
			else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
			    v->via.u64 <= INT64_MAX)
				l->count = (int64_t)v->via.u64;
			else if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
				l->count = v->via.i64;
			else
				return (-1);
			break;
		}
	}
	return (l->id != NULL ? 0 : -1);
}

/* Cell i as the daemon sent it (a map, in the notebook's zone), or NULL. */
const msgpack_object *
worker_nb_packed(const struct worker_nb *nb, size_t i)
{
	return (i < nb->doc->n ? &nb->doc->cells[i] : NULL);
}

/* Every cell as a JSON array (borrowed; shares the cells). */
struct json_object *
worker_nb_cells(const struct worker_nb *nb)
{
	struct worker_nb_doc	*d = nb->doc;
	size_t			 i;

	if (d->all != NULL)
		return (d->all);
	d->all = json_object_new_array_ext((int)d->n);
	for (i = 0; i < d->n; i++)
		json_object_array_add(d->all,
		    json_object_get(worker_nb_cell(nb, i)));
	return (d->all);
}

/*
 * The index of the cell whose cell_id is id, or -1: read from the cells
 * as sent, without decoding them.
 */
ssize_t
worker_nb_find(const struct worker_nb *nb, const char *id)
{
	struct worker_nb_doc	*d = nb->doc;
	const char		*s;
	size_t			 i, len, idlen = strlen(id);

	for (i = 0; i < d->n; i++) {
		s = proto_get_str(&d->cells[i], "cell_id", &len);
		if (s != NULL && len == idlen && memcmp(s, id, len) == 0)
			return ((ssize_t)i);
	}
	return (-1);
}

/*
 * Decode a ROOM_JOINED or ROOM_CONTENT (type); NULL with *cause if bad.
 * zone, if not NULL, is the one body lives in (worker_daemon_take): the
 * notebook keeps it rather than a copy of the cells; the caller keeps it
 * on failure.
 */
struct worker_nb *
worker_nb_read(uint16_t type, const msgpack_object *body, msgpack_zone *zone,
    char **cause)
{
	struct proto_room_joined	 m;
	struct worker_nb		*nb;
	char				 err[256];
	int				 r;

	if (type == PROTO_MSG_ROOM_CONTENT)
		r = proto_room_content_unpack(body, &m, err, sizeof err);
	else if (type == PROTO_MSG_ROOM_JOINED)
		r = proto_room_joined_unpack(body, &m, err, sizeof err);
	else {
		snprintf(err, sizeof err, "%s instead of the notebook",
		    proto_msg_name(type));
		r = -1;
	}
	if (r != 0) {
		xasprintf(cause, "unexpected reply from runtimed: %s", err);
		return (NULL);
	}
	nb = worker_nb_create(&m);
	nb->doc = worker_nb_doc_create(m.cells.obj, zone);
	return (nb);
}

/* A notebook of m's fields but its cells. */
static struct worker_nb *
worker_nb_create(const struct proto_room_joined *m)
{
	struct worker_nb	*nb;

	nb = xcalloc(1, sizeof *nb);
	nb->refs = 1;
	nb->notebook_id = proto_str_dup(&m->notebook_id);
	nb->path = proto_str_dup(&m->path);
	nb->kernel_name = m->kernel_name.ptr != NULL ?
	    proto_str_dup(&m->kernel_name) : xstrdup("");
	nb->kernel_state = m->kernel_state.ptr != NULL ?
	    proto_str_dup(&m->kernel_state) : xstrdup("none");
	nb->dirty = m->dirty;
	nb->seq = (int64_t)m->seq;
	if (m->metadata.obj != NULL)
		nb->metadata = mpjson_unpack(m->metadata.obj);
	if (m->warnings.obj != NULL)
		nb->warnings = mpjson_unpack(m->warnings.obj);
	if (m->conflicts.obj != NULL)
		nb->conflicts = mpjson_unpack(m->conflicts.obj);
	if (m->active.obj != NULL)
		nb->active = mpjson_unpack(m->active.obj);
	return (nb);
}

/* The fields of a cell a reference is checked against, in one pass. */
static void
worker_nb_key_read(const msgpack_object *cell, struct worker_nb_key *k)
{
	const msgpack_object_kv	*kv;
	const char		*key;
	uint32_t		 i;

	memset(k, 0, sizeof *k);
	if (cell->type != MSGPACK_OBJECT_MAP)
		return;
	/* By length first: this runs over every cell of a base. */
	for (i = 0; i < cell->via.map.size; i++) {
		kv = &cell->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR)
			continue;
		key = kv->key.via.str.ptr;
		switch (kv->key.via.str.size) {
		case 7:
			if (memcmp(key, "cell_id", 7) == 0)
				k->id = &kv->val;
			else if (memcmp(key, "version", 7) == 0)
				k->version = &kv->val;
			break;
		case 5:
			if (memcmp(key, "stale", 5) == 0)
				k->stale = &kv->val;
			break;
		}
	}
	/* As the daemon hashes it (room_cell_run_hash). */
	if (k->version == NULL || k->version->type != MSGPACK_OBJECT_STR)
		return;
	k->hash = proto_fnv64(PROTO_FNV64_INIT, k->version->via.str.ptr,
	    k->version->via.str.size);
	if (k->stale != NULL && k->stale->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (i = 0; k->stale != NULL && i < k->stale->via.array.size; i++) {
		if (k->stale->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
			return;
		k->hash = proto_fnv64(k->hash, "", 1);
		k->hash = proto_fnv64(k->hash,
		    k->stale->via.array.ptr[i].via.str.ptr,
		    k->stale->via.array.ptr[i].via.str.size);
	}
	k->hashed = 1;
}

/* Those fields of every cell of d, read when first needed. */
static const struct worker_nb_key *
worker_nb_keys(struct worker_nb_doc *d)
{
	size_t	i;

	if (d->keys == NULL) {
		d->keys = xcalloc(d->n + 1, sizeof *d->keys);
		for (i = 0; i < d->n; i++)
			worker_nb_key_read(&d->cells[i], &d->keys[i]);
	}
	return (d->keys);
}

static int
worker_nb_str_eq(const msgpack_object *a, const msgpack_object *b)
{
	return (a != NULL && b != NULL && a->type == MSGPACK_OBJECT_STR &&
	    b->type == MSGPACK_OBJECT_STR && a->via.str.size == b->via.str.size &&
	    memcmp(a->via.str.ptr, b->via.str.ptr, a->via.str.size) == 0);
}

/* Whether two stale lists (arrays of names, or NULL: none) are the same. */
static int
worker_nb_stale_eq(const msgpack_object *a, const msgpack_object *b)
{
	uint32_t	i;

	if (a == NULL || b == NULL)
		return (a == b);
	if (a->type != MSGPACK_OBJECT_ARRAY || b->type != MSGPACK_OBJECT_ARRAY ||
	    a->via.array.size != b->via.array.size)
		return (0);
	for (i = 0; i < a->via.array.size; i++) {
		if (!worker_nb_str_eq(&a->via.array.ptr[i],
		    &b->via.array.ptr[i]))
			return (0);
	}
	return (1);
}

/*
 * The index in d (its keys k) of the cell named id, or -1: tried at hint
 * first, as references come in the order of the cells.
 */
static ssize_t
worker_nb_delta_find(const struct worker_nb_doc *d,
    const struct worker_nb_key *k, const msgpack_object *id, size_t hint)
{
	size_t	i, j;

	for (i = 0; i < d->n; i++) {
		j = (hint + i) % d->n;
		if (worker_nb_str_eq(k[j].id, id))
			return ((ssize_t)j);
	}
	return (-1);
}

/*
 * Where in d (its keys k) a run [count, cell_id, digest] starts, or -1:
 * its count cells from the one named cell_id (tried at hint first), in
 * d's order, must fold to digest (decision 041).
 */
static ssize_t
worker_nb_delta_run(const struct worker_nb_doc *d,
    const struct worker_nb_key *k, const msgpack_object *run, size_t hint)
{
	const msgpack_object	*a = run->via.array.ptr;
	uint64_t		 digest = PROTO_FNV64_INIT, count;
	size_t			 i;
	ssize_t			 j;

	if (run->via.array.size != 3 || a[2].type !=
	    MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    (j = worker_nb_delta_find(d, k, &a[1], hint)) < 0)
		return (-1);
	count = a[0].via.u64;
	if (count > d->n - (size_t)j)
		return (-1);
	for (i = 0; i < count; i++) {
		if (!k[j + i].hashed)
			return (-1);
		digest = proto_run_fold(digest, k[j + i].hash);
	}
	return (digest == a[2].via.u64 ? j : -1);
}

/*
 * The cells a content by reference stands for, into *n: a run counts
 * its count (decision 041), anything else one.  -1 when the runs name
 * more cells than base holds, or a run is empty.
 */
static int
worker_nb_delta_count(const msgpack_object *cells, size_t held, size_t *n)
{
	const msgpack_object	*c;
	uint64_t		 count;
	uint32_t		 i;

	*n = 0;
	for (i = 0; i < cells->via.array.size; i++) {
		c = &cells->via.array.ptr[i];
		if (c->type != MSGPACK_OBJECT_ARRAY || c->via.array.size == 0 ||
		    c->via.array.ptr[0].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER) {
			(*n)++;
			continue;
		}
		count = c->via.array.ptr[0].via.u64;
		if (count == 0 || count > held)
			return (-1);
		held -= count;
		*n += count;
	}
	return (0);
}

/* n bytes copied into zone (p itself when there are none). */
static const char *
worker_nb_bytes(msgpack_zone *zone, const char *p, uint32_t n)
{
	char	*q;

	if (n == 0)
		return (p);
	if ((q = msgpack_zone_malloc(zone, n)) == NULL)
		fatalx("out of memory");
	memcpy(q, p, n);
	return (q);
}

/*
 * o copied into zone, strings too, so that it refers to no other zone.
 * Cells come decoded by proto_frame_decode, within PROTO_MAX_DEPTH.
 */
static void
worker_nb_clone(msgpack_zone *zone, const msgpack_object *o,
    msgpack_object *out, int depth)
{
	msgpack_object_kv	*kv;
	msgpack_object		*a;
	uint32_t		 i, n;

	if (depth > PROTO_MAX_DEPTH)
		fatalx("a cell deeper than a frame may be");
	*out = *o;
	switch (o->type) {
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BIN:	/* bin shares str's layout */
		out->via.str.ptr = worker_nb_bytes(zone, o->via.str.ptr,
		    o->via.str.size);
		break;
	case MSGPACK_OBJECT_EXT:
		out->via.ext.ptr = worker_nb_bytes(zone, o->via.ext.ptr,
		    o->via.ext.size);
		break;
	case MSGPACK_OBJECT_ARRAY:
		n = o->via.array.size;
		if ((a = msgpack_zone_malloc(zone, (n + 1) * sizeof *a)) == NULL)
			fatalx("out of memory");
		for (i = 0; i < n; i++)
			worker_nb_clone(zone, &o->via.array.ptr[i], &a[i],
			    depth + 1);
		out->via.array.ptr = a;
		break;
	case MSGPACK_OBJECT_MAP:
		n = o->via.map.size;
		if ((kv = msgpack_zone_malloc(zone, (n + 1) * sizeof *kv)) ==
		    NULL)
			fatalx("out of memory");
		for (i = 0; i < n; i++) {
			worker_nb_clone(zone, &o->via.map.ptr[i].key,
			    &kv[i].key, depth + 1);
			worker_nb_clone(zone, &o->via.map.ptr[i].val,
			    &kv[i].val, depth + 1);
		}
		out->via.map.ptr = kv;
		break;
	default:
		break;
	}
}

/*
 * The cell a reference [cell_id, version, stale?] stands for: held (its
 * keys hk), of the same version, with the reference's stale; into out
 * and its keys into ok.  0 when out is held itself; 1 when stale differs
 * and out is a copy in zone (the reference's) of held's other fields with
 * the new stale: a cell lives in one zone, so a content built on this
 * one holds it by holding that zone alone.  -1 if held is not of that
 * version.
 */
static int
worker_nb_delta_cell(msgpack_zone *zone, const msgpack_object *held,
    const struct worker_nb_key *hk, const msgpack_object *ref,
    msgpack_object *out, struct worker_nb_key *ok)
{
	static const msgpack_object	 key = { .type = MSGPACK_OBJECT_STR,
	    .via.str = { .size = 5, .ptr = "stale" } };
	const msgpack_object		*stale = NULL;
	msgpack_object_kv		*kv;
	uint32_t			 i, n = 0;

	if (!worker_nb_str_eq(hk->version, &ref->via.array.ptr[1]))
		return (-1);
	if (ref->via.array.size > 2)
		stale = &ref->via.array.ptr[2];
	if (worker_nb_stale_eq(hk->stale, stale)) {
		*out = *held;
		*ok = *hk;
		return (0);
	}
	/* The same fields, but stale as the reference has it now. */
	kv = msgpack_zone_malloc(zone, (held->via.map.size + 1) * sizeof *kv);
	if (kv == NULL)
		fatalx("out of memory");
	for (i = 0; i < held->via.map.size; i++) {
		if (&held->via.map.ptr[i].val == hk->stale)
			continue;
		worker_nb_clone(zone, &held->via.map.ptr[i].key, &kv[n].key, 1);
		worker_nb_clone(zone, &held->via.map.ptr[i].val, &kv[n++].val,
		    1);
	}
	if (stale != NULL) {
		kv[n].key = key;	/* static */
		kv[n++].val = *stale;	/* in zone, the reference's own */
	}
	out->type = MSGPACK_OBJECT_MAP;
	out->via.map.size = n;
	out->via.map.ptr = kv;
	worker_nb_key_read(out, ok);
	return (1);
}

/*
 * Cell i of d is base's cell j, in its zone: d holds that zone (map:
 * base's zones to d's, 0 until held).
 */
static void
worker_nb_delta_from(const struct worker_nb_doc *bd, size_t j,
    struct worker_nb_doc *d, size_t i, size_t *map)
{
	size_t	z;

	z = bd->from != NULL ? bd->from[j] : 0;
	if (map[z] == 0) {
		d->zones[d->nzones] = bd->zones[z];
		bd->zones[z]->refs++;
		map[z] = d->nzones++;
	}
	d->from[i] = map[z];
}

/* Cell i of d (cells) is base's cell j as it is, with its keys. */
static void
worker_nb_delta_held(const struct worker_nb_doc *bd, size_t j,
    struct worker_nb_doc *d, size_t i, msgpack_object *cells, size_t *map)
{
	cells[i] = bd->cells[j];
	d->keys[i] = bd->keys[j];
	worker_nb_delta_from(bd, j, d, i, map);
}

/*
 * A ROOM_CHANGED_CONTENT's content by reference to base (the content at
 * the seq it names): a cell that is an array, not a map, is a reference
 * [cell_id, version, stale?] to one of base's, or a run [count, cell_id,
 * digest] of count of them as base has them (decision 041).  zone, if
 * not NULL, is the one content lives in, the new notebook's (the caller
 * keeps it on failure); else content is copied into one.  NULL with
 * *cause if a reference is not to a cell base has at that version, or a
 * run not to cells base has so: the caller then reads the notebook as
 * if the content had not come.
 */
struct worker_nb *
worker_nb_read_delta(const msgpack_object *content, msgpack_zone *zone,
    const struct worker_nb *base, char **cause)
{
	struct proto_room_joined	 m;
	struct worker_nb_doc		*bd = base->doc, *d;
	const struct worker_nb_key	*bk;
	struct worker_nb		*nb;
	const msgpack_object		*c;
	msgpack_object			*cells, copy;
	msgpack_zone			*own = NULL;
	size_t				*map, e, i, k, n, nwhole = 0, hint = 0;
	size_t				 count;
	ssize_t				 j;
	int				 copied;
	char				 err[256];

	if (proto_room_content_unpack(content, &m, err, sizeof err) != 0) {
		xasprintf(cause, "unexpected reply from runtimed: %s", err);
		return (NULL);
	}
	if (zone == NULL) {
		/* A small frame, not decoded from a copy of its own. */
		copy = worker_nb_copy(content, &own);
		content = &copy;
		zone = own;
		if (proto_room_content_unpack(content, &m, err,
		    sizeof err) != 0)
			fatalx("a copy of a notebook does not decode");
	}
	bk = worker_nb_keys(bd);
	if (worker_nb_delta_count(m.cells.obj, bd->n, &n) != 0) {
		xasprintf(cause, "runs of more cells than held (%zu)", bd->n);
		if (own != NULL)
			msgpack_zone_free(own);
		return (NULL);
	}
	if ((cells = msgpack_zone_malloc(zone, (n + 1) * sizeof *cells)) ==
	    NULL)
		fatalx("out of memory");
	map = xcalloc(bd->nzones, sizeof *map);	/* base zone -> ours */
	d = xcalloc(1, sizeof *d);
	d->zones = xcalloc(bd->nzones + 1, sizeof *d->zones);
	d->nzones = 1;
	d->from = xcalloc(n + 1, sizeof *d->from);
	d->keys = xcalloc(n + 1, sizeof *d->keys);
	for (e = 0, i = 0; i < n; e++, i++) {
		c = &m.cells.obj->via.array.ptr[e];
		if (c->type != MSGPACK_OBJECT_ARRAY) {
			cells[i] = *c;		/* whole, in zone */
			worker_nb_key_read(c, &d->keys[i]);
			nwhole++;
			continue;
		}
		if (c->via.array.size > 0 && c->via.array.ptr[0].type ==
		    MSGPACK_OBJECT_POSITIVE_INTEGER) {
			/* A run: count held cells as they are. */
			if ((j = worker_nb_delta_run(bd, bk, c, hint)) < 0) {
				xasprintf(cause, "cell %zu: a run of cells not "
				    "held as they are", i);
				goto fail;
			}
			count = c->via.array.ptr[0].via.u64;
			for (k = 0; k < count; k++)
				worker_nb_delta_held(bd, (size_t)j + k, d, i + k,
				    cells, map);
			i += count - 1;
			hint = (size_t)j + count;
			continue;
		}
		if (c->via.array.size < 2 || (j = worker_nb_delta_find(bd, bk,
		    &c->via.array.ptr[0], hint)) < 0 ||
		    (copied = worker_nb_delta_cell(zone, &bd->cells[j],
		    &bk[j], c, &cells[i], &d->keys[i])) < 0) {
			xasprintf(cause, "cell %zu: a reference to a cell not "
			    "held at that version", i);
			goto fail;
		}
		hint = (size_t)j + 1;
		if (copied) {
			nwhole++;	/* whole in zone, like a new cell */
			continue;
		}
		worker_nb_delta_from(bd, (size_t)j, d, i, map);
	}
	free(map);
	d->zones[0] = worker_nb_zone_create(zone, nwhole);
	d->cells = cells;
	d->n = n;
	d->cell = xcalloc(n + 1, sizeof *d->cell);
	nb = worker_nb_create(&m);
	nb->doc = d;
	return (nb);

fail:
	for (i = 1; i < d->nzones; i++)
		worker_nb_zone_unref(d->zones[i]);
	free(d->zones);
	free(d->from);
	free(d->keys);
	free(d);
	free(map);
	if (own != NULL)
		msgpack_zone_free(own);
	return (NULL);
}

/*
 * nb with its cells copied into one zone of its own (its decoded cells
 * are not kept: they decode again when asked for).  A notebook built by
 * reference over many pushes holds the zones of their frames; once that
 * is too many to be a base (worker_nb_delta_ok), a copy of its live cells
 * is one again, which costs this worker a copy rather than the daemon a
 * whole push to every waiter.
 */
struct worker_nb *
worker_nb_compact(const struct worker_nb *nb)
{
	const struct worker_nb_doc	*od = nb->doc;
	struct worker_nb_doc		*d;
	struct worker_nb		*c;
	msgpack_zone			*zone;
	msgpack_object			*cells;
	size_t				 i;

	if ((zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE)) == NULL ||
	    (cells = msgpack_zone_malloc(zone, (od->n + 1) *
	    sizeof *cells)) == NULL)
		fatalx("out of memory");
	for (i = 0; i < od->n; i++)
		worker_nb_clone(zone, &od->cells[i], &cells[i], 1);
	d = xcalloc(1, sizeof *d);
	d->zones = xcalloc(1, sizeof *d->zones);
	d->zones[0] = worker_nb_zone_create(zone, od->n);
	d->nzones = 1;
	d->cells = cells;
	d->n = od->n;
	d->cell = xcalloc(d->n + 1, sizeof *d->cell);

	c = xcalloc(1, sizeof *c);
	c->refs = 1;
	c->notebook_id = xstrdup(nb->notebook_id);
	c->path = nb->path != NULL ? xstrdup(nb->path) : NULL;
	c->dirty = nb->dirty;
	c->seq = nb->seq;
	c->kernel_name = xstrdup(nb->kernel_name);
	c->kernel_state = xstrdup(nb->kernel_state);
	c->doc = d;
	c->metadata = json_object_get(nb->metadata);	/* read only */
	c->warnings = json_object_get(nb->warnings);
	c->conflicts = json_object_get(nb->conflicts);
	c->active = json_object_get(nb->active);
	return (c);
}

/*
 * Whether the next content may come by reference to nb: not while its
 * cells keep more zones, or more cells in them, than is worth holding.
 * Else the whole content comes once and the zones before it go.
 */
int
worker_nb_delta_ok(const struct worker_nb *nb)
{
	const struct worker_nb_doc	*d = nb->doc;
	size_t				 i, held = 0;

	if (d->nzones >= WORKER_NB_ZONES)
		return (0);
	for (i = 0; i < d->nzones; i++)
		held += d->zones[i]->cells;
	return (held <= 2 * d->n + WORKER_NB_ZONES);
}

struct worker_nb *
worker_nb_ref(struct worker_nb *nb)
{
	if (nb != NULL)
		nb->refs++;
	return (nb);
}

void
worker_nb_unref(struct worker_nb *nb)
{
	if (nb == NULL || --nb->refs > 0)
		return;
	free(nb->notebook_id);
	free(nb->path);
	free(nb->kernel_name);
	free(nb->kernel_state);
	worker_nb_doc_free(nb->doc);
	json_object_put(nb->metadata);
	json_object_put(nb->warnings);
	json_object_put(nb->conflicts);
	json_object_put(nb->active);
	free(nb);
}

/* "running" or "queued" when a run has cell id so, else NULL. */
const char *
worker_nb_run_status(const struct worker_nb *nb, const char *id)
{
	struct json_object	*e;
	const char		*s;
	size_t			 i;

	if (nb->active == NULL || id == NULL ||
	    !json_object_is_type(nb->active, json_type_array))
		return (NULL);
	for (i = 0; i < json_object_array_length(nb->active); i++) {
		e = json_object_array_get_idx(nb->active, i);
		s = json_object_get_string(json_object_object_get(e,
		    "cell_id"));
		if (s != NULL && strcmp(s, id) == 0)
			return (json_object_get_string(
			    json_object_object_get(e, "status")));
	}
	return (NULL);
}

/* The kernel {name, state} as the tools report it. */
struct json_object *
worker_nb_kernel(const struct worker_nb *nb)
{
	struct json_object	*o;

	o = json_object_new_object();
	json_object_object_add(o, "name",
	    json_object_new_string(nb->kernel_name));
	json_object_object_add(o, "state",
	    json_object_new_string(nb->kernel_state));
	return (o);
}
