/* SPDX-License-Identifier: ISC */
/*
 * room-merge.c: a file-backed notebook's file changed on disk (an
 * editor's save, git checkout, a script); merge it into the room, cell
 * by cell, three-way (docs/decisions/056).
 *
 * The base is the content both sides last agreed on: what the room last
 * loaded from the file or saved to it, kept as each cell's id and two
 * hashes (its input: type, source, metadata, attachments, other keys;
 * its outputs: execution count and outputs), in order, and the
 * notebook's metadata.  A cell is matched by id; a cell the file gives
 * no id (the loader minted one) by content, then by position, among
 * the base's cells that had none either.  For each cell, what changed
 * on one side only is taken; what changed on both sides the same way is
 * kept; what changed on both sides differently is a conflict: the room
 * keeps its version, the file's is kept beside it, the file is not
 * written (autosave skips, a save needs force) until edit_cells'
 * resolve op says which to keep.  Inserts and deletes of either side
 * are kept; a cell deleted on one side and edited on the other is a
 * conflict.  The order is the file's unless the room reordered cells
 * (then the room's, with the file's inserts after their predecessor).
 * Outputs of a cell queued or running in the room are the room's: a
 * run in progress never loses them.  Once merged, the base is the file
 * just read, and the room is dirty (autosave writes the merge) unless
 * it now equals the file.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* A merge that waits for an edit batch in flight tries again after. */
#define ROOM_MERGE_RETRY_MS	20

struct room_base_cell {
	char		*id;
	int		 minted;	/* the file gave it no id */
	uint64_t	 in;
	uint64_t	 out;
};

struct room_base {
	struct room_base_cell	*cells;
	size_t			 n;
	struct mpvalue		 metadata;	/* a map */
};

struct room_conflict {
	char			*id;
	enum room_conflict_kind	 kind;
	struct room_cell	*disk;	/* the file's version; NULL: deleted */
	char			*after;	/* deleted in the room: its place */
	int64_t			 at;	/* the file's mtime, ms */
};

/* A file's cell's metadata, as an edit of the room's cell packs it. */
struct room_merge_md {
	struct room_cell	*disk;
	struct room_cell	*room;		/* NULL: an insert */
};

struct room_merge {
	struct room_base	*base;
	struct room_conflict	*conflicts;
	size_t			 nconflicts;
	struct event		*retry;
};

static const char *const room_merge_kind_names[] = {
	"both_edited", "deleted_on_disk", "deleted_in_room"
};

static struct room_merge	*room_merge_get(struct room *);
static uint64_t	room_merge_fnv(uint64_t, const void *, size_t);
static uint64_t	room_merge_json(uint64_t, struct json_object *);
static uint64_t	room_merge_value(uint64_t, const struct mpvalue *);
static uint64_t	room_merge_kept(uint64_t, const msgpack_object *);
static uint64_t	room_merge_mp(uint64_t, const msgpack_object *);
static uint64_t	room_merge_obj(uint64_t, const msgpack_object *);
static int	room_merge_keycmp(const void *, const void *);
static void	room_merge_retry(evutil_socket_t, short, void *);
static void	room_merge_conflict_free(struct room_conflict *);
static void	room_merge_conflict_drop(struct room_merge *, const char *);
static struct room_conflict *room_merge_conflict_find(struct room_merge *,
		    const char *);
static void	room_merge_conflict_add(struct room_merge *, const char *,
		    enum room_conflict_kind, struct room_cell *,
		    const char *, int64_t);
static void	room_merge_swap_input(struct room_cell *, struct room_cell *);
static void	room_merge_swap_outputs(struct room_cell *,
		    struct room_cell *);
static int	room_merge_metadata(const struct mpvalue *,
		    const struct mpvalue *, const struct mpvalue *,
		    struct mpvalue *);
static void	room_merge_pack_md(msgpack_packer *, const void *);
static void	room_merge_disk_edit(struct proto_edit *,
		    struct room_merge_md *, struct room_cell *,
		    struct room_cell *);
static int	room_merge_is_resolve(const msgpack_object *, uint32_t,
		    struct proto_edit *);
static int	room_merge_resolve(struct room *, struct room_conflict *,
		    const struct proto_str *, struct proto_edit *,
		    struct room_merge_md *);

#define ROOM_MERGE_FNV_PRIME	0x100000001b3ULL

static struct room_merge *
room_merge_get(struct room *r)
{
	if (r->merge == NULL)
		r->merge = xcalloc(1, sizeof *r->merge);
	return (r->merge);
}

static uint64_t
room_merge_fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char	*s = p;
	size_t			 i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= ROOM_MERGE_FNV_PRIME;
	}
	return (h);
}

static int
room_merge_keycmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/*
 * A JSON value, hashed with the keys of each object in sorted order:
 * Jupyter writes keys sorted, the room keeps them as they came, and
 * either is the same metadata.
 */
static uint64_t
room_merge_json(uint64_t h, struct json_object *j)
{
	const char	**keys;
	char		  tag;
	size_t		  i, n;
	int64_t		  iv;
	double		  dv;

	tag = (char)('0' + json_object_get_type(j));
	h = room_merge_fnv(h, &tag, 1);
	switch (json_object_get_type(j)) {
	case json_type_null:
		break;
	case json_type_boolean:
		tag = (char)json_object_get_boolean(j);
		h = room_merge_fnv(h, &tag, 1);
		break;
	case json_type_int:
		iv = json_object_get_int64(j);
		h = room_merge_fnv(h, &iv, sizeof iv);
		break;
	case json_type_double:
		dv = json_object_get_double(j);
		h = room_merge_fnv(h, &dv, sizeof dv);
		break;
	case json_type_string:
		n = (size_t)json_object_get_string_len(j);
		h = room_merge_fnv(h, &n, sizeof n);
		h = room_merge_fnv(h, json_object_get_string(j), n);
		break;
	case json_type_array:
		n = json_object_array_length(j);
		h = room_merge_fnv(h, &n, sizeof n);
		for (i = 0; i < n; i++)
			h = room_merge_json(h, json_object_array_get_idx(j,
			    i));
		break;
	case json_type_object:
		n = (size_t)json_object_object_length(j);
		keys = xcalloc(n + 1, sizeof *keys);
		i = 0;
		json_object_object_foreach(j, key, val) {
			(void)val;
			if (i < n)
				keys[i++] = key;
		}
		qsort(keys, i, sizeof *keys, room_merge_keycmp);
		h = room_merge_fnv(h, &n, sizeof n);
		for (n = i, i = 0; i < n; i++) {
			h = room_merge_fnv(h, keys[i], strlen(keys[i]) + 1);
			h = room_merge_json(h, json_object_object_get(j,
			    keys[i]));
		}
		free(keys);
		break;
	}
	return (h);
}

/*
 * room_merge_json over a plain msgpack value (mpjson_plain): the same
 * hash as of its json-c form, so kept bases still match (decision 097).
 */
static uint64_t
room_merge_mp(uint64_t h, const msgpack_object *v)
{
	const msgpack_object_kv	**kv;
	char			  tag, z = '\0';
	size_t			  i, n;
	int64_t			  iv;
	double			  dv;

	switch (v->type) {
	case MSGPACK_OBJECT_BOOLEAN:
		tag = (char)('0' + json_type_boolean);
		h = room_merge_fnv(h, &tag, 1);
		tag = (char)v->via.boolean;
		return (room_merge_fnv(h, &tag, 1));
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		tag = (char)('0' + json_type_int);
		h = room_merge_fnv(h, &tag, 1);
		if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			iv = v->via.i64;
		else
			iv = v->via.u64 > INT64_MAX ? INT64_MAX :
			    (int64_t)v->via.u64;
		return (room_merge_fnv(h, &iv, sizeof iv));
	case MSGPACK_OBJECT_FLOAT64:
		tag = (char)('0' + json_type_double);
		h = room_merge_fnv(h, &tag, 1);
		dv = v->via.f64;
		return (room_merge_fnv(h, &dv, sizeof dv));
	case MSGPACK_OBJECT_STR:
		tag = (char)('0' + json_type_string);
		h = room_merge_fnv(h, &tag, 1);
		n = v->via.str.size;
		h = room_merge_fnv(h, &n, sizeof n);
		return (room_merge_fnv(h, v->via.str.ptr, n));
	case MSGPACK_OBJECT_ARRAY:
		tag = (char)('0' + json_type_array);
		h = room_merge_fnv(h, &tag, 1);
		n = v->via.array.size;
		h = room_merge_fnv(h, &n, sizeof n);
		for (i = 0; i < n; i++)
			h = room_merge_mp(h, &v->via.array.ptr[i]);
		return (h);
	case MSGPACK_OBJECT_MAP:
		tag = (char)('0' + json_type_object);
		h = room_merge_fnv(h, &tag, 1);
		n = v->via.map.size;
		kv = xcalloc(n + 1, sizeof *kv);
		for (i = 0; i < n; i++)
			kv[i] = &v->via.map.ptr[i];
		qsort(kv, n, sizeof *kv, mpjson_kv_cmp);
		h = room_merge_fnv(h, &n, sizeof n);
		for (i = 0; i < n; i++) {
			h = room_merge_fnv(h, kv[i]->key.via.str.ptr,
			    kv[i]->key.via.str.size);
			h = room_merge_fnv(h, &z, 1);
			h = room_merge_mp(h, &kv[i]->val);
		}
		free(kv);
		return (h);
	default:
		tag = (char)('0' + json_type_null);
		return (room_merge_fnv(h, &tag, 1));
	}
}

/* An output's hash: over its view when plain, else its json-c form. */
static uint64_t
room_merge_obj(uint64_t h, const msgpack_object *v)
{
	struct json_object	*j;

	if (mpjson_plain(v, 1))
		return (room_merge_mp(h, v));
	j = mpjson_unpack(v);
	h = room_merge_json(h, j);
	json_object_put(j);
	return (h);
}

/*
 * A value kept packed (decision 101): room_merge_json's hash of its json-c
 * form, over its view when it holds no JSON text.
 */
static uint64_t
room_merge_value(uint64_t h, const struct mpvalue *val)
{
	msgpack_unpacked	 u;

	msgpack_unpacked_init(&u);
	h = room_merge_kept(h, mpvalue_view(val, &u));
	msgpack_unpacked_destroy(&u);
	return (h);
}

/* room_merge_value over a view of a kept value (NULL: absent, null). */
static uint64_t
room_merge_kept(uint64_t h, const msgpack_object *v)
{
	struct json_object	*j;

	if (v == NULL)
		return (room_merge_json(h, NULL));
	if (mpjson_inline(v, 0))
		return (room_merge_mp(h, v));
	j = mpjson_unpack(v);
	h = room_merge_json(h, j);
	json_object_put(j);
	return (h);
}

/* What a person edits of a cell: type, source, metadata, the rest. */
uint64_t
room_merge_hash_in(struct room_cell *c)
{
	const char	*type = room_nb_cell_type_name(c);
	uint64_t	 h = PROTO_FNV64_INIT;

	h = room_merge_fnv(h, type, strlen(type) + 1);
	h = room_merge_fnv(h, &c->source_len, sizeof c->source_len);
	if (c->source_len > 0)
		h = room_merge_fnv(h, c->source, c->source_len);
	h = room_merge_value(h, &c->metadata);
	h = room_merge_value(h, &c->attachments);
	return (room_merge_value(h, &c->extra));
}

/* What a run writes: the execution count and the outputs. */
uint64_t
room_merge_hash_out(struct room_cell *c)
{
	uint64_t	h = PROTO_FNV64_INIT;

	msgpack_unpacked	 u;
	const msgpack_object	*v;
	size_t			 i;
	char			 tag;

	h = room_merge_fnv(h, &c->execution_count,
	    sizeof c->execution_count);
	/* As room_merge_json hashed the json-c array (bases are kept). */
	tag = (char)('0' + (c->outputs != NULL ? json_type_array :
	    json_type_null));
	h = room_merge_fnv(h, &tag, 1);
	if (c->outputs == NULL)
		return (h);
	h = room_merge_fnv(h, &c->outputs->n, sizeof c->outputs->n);
	msgpack_unpacked_init(&u);
	for (i = 0; i < c->outputs->n; i++) {
		if ((v = proto_outputs_get(c->outputs, i, &u)) == NULL)
			fatalx("%s: an output kept cannot be read", __func__);
		h = room_merge_obj(h, v);
	}
	msgpack_unpacked_destroy(&u);
	return (h);
}

/* The base of nb as it is now (the file was just read or written). */
struct room_base *
room_merge_base_make(struct room_nb *nb, int from_file)
{
	struct room_base	*b;
	size_t			 i;

	b = xcalloc(1, sizeof *b);
	b->n = nb->ncells;
	b->cells = xcalloc(b->n + 1, sizeof *b->cells);
	for (i = 0; i < b->n; i++) {
		b->cells[i].id = xstrdup(nb->cells[i]->id);
		b->cells[i].minted = from_file &&
		    (nb->cells[i]->flags & ROOM_CELL_MINTED);
		b->cells[i].in = room_merge_hash_in(nb->cells[i]);
		b->cells[i].out = room_merge_hash_out(nb->cells[i]);
	}
	mpvalue_copy(&b->metadata, &nb->metadata);
	return (b);
}

void
room_merge_base_free(struct room_base *b)
{
	size_t	i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		free(b->cells[i].id);
	free(b->cells);
	mpvalue_free(&b->metadata);
	free(b);
}

/* The room agrees with the file again: b (taken) is the new base. */
void
room_merge_base_set(struct room *r, struct room_base *b)
{
	struct room_merge	*m = room_merge_get(r);

	room_merge_base_free(m->base);
	m->base = b;
}

int
room_merge_has_base(struct room *r)
{
	return (r->merge != NULL && r->merge->base != NULL);
}

static void
room_merge_conflict_free(struct room_conflict *c)
{
	free(c->id);
	if (c->disk != NULL)
		room_nb_cell_destroy(c->disk);
	free(c->after);
}

static struct room_conflict *
room_merge_conflict_find(struct room_merge *m, const char *id)
{
	size_t	i;

	for (i = 0; m != NULL && i < m->nconflicts; i++) {
		if (strcmp(m->conflicts[i].id, id) == 0)
			return (&m->conflicts[i]);
	}
	return (NULL);
}

static void
room_merge_conflict_drop(struct room_merge *m, const char *id)
{
	struct room_conflict	*c;
	size_t			 i;

	if ((c = room_merge_conflict_find(m, id)) == NULL)
		return;
	i = (size_t)(c - m->conflicts);
	room_merge_conflict_free(c);
	memmove(&m->conflicts[i], &m->conflicts[i + 1],
	    (m->nconflicts - i - 1) * sizeof *m->conflicts);
	m->nconflicts--;
}

/* A conflict on cell id (the newer replaces an older one); takes disk. */
static void
room_merge_conflict_add(struct room_merge *m, const char *id,
    enum room_conflict_kind kind, struct room_cell *disk, const char *after,
    int64_t at)
{
	struct room_conflict	*c;

	room_merge_conflict_drop(m, id);
	m->conflicts = xreallocarray(m->conflicts, m->nconflicts + 1,
	    sizeof *m->conflicts);
	c = &m->conflicts[m->nconflicts++];
	memset(c, 0, sizeof *c);
	c->id = xstrdup(id);
	c->kind = kind;
	c->disk = disk;
	c->after = after != NULL ? xstrdup(after) : NULL;
	c->at = at;
}

u_int
room_merge_nconflicts(struct room *r)
{
	return (r->merge != NULL ? (u_int)r->merge->nconflicts : 0);
}

const char *
room_merge_kind_name(enum room_conflict_kind kind)
{
	return (room_merge_kind_names[kind]);
}

/* The room's merge state goes with its content. */
void
room_merge_free(struct room *r)
{
	struct room_merge	*m = r->merge;
	size_t			 i;

	if (m == NULL)
		return;
	room_merge_base_free(m->base);
	for (i = 0; i < m->nconflicts; i++)
		room_merge_conflict_free(&m->conflicts[i]);
	free(m->conflicts);
	if (m->retry != NULL)
		event_free(m->retry);
	free(m);
	r->merge = NULL;
}

/* Swap what a person edits between a room cell and a file's cell. */
static void
room_merge_swap_input(struct room_cell *a, struct room_cell *b)
{
	struct room_cell	t;

	t = *a;
	a->type = b->type;
	a->type_name = b->type_name;
	a->source = b->source;
	a->source_len = b->source_len;
	a->metadata = b->metadata;
	a->attachments = b->attachments;
	a->extra = b->extra;
	a->flags = (a->flags & ~ROOM_CELL_NO_SOURCE) |
	    (b->flags & ROOM_CELL_NO_SOURCE);
	b->type = t.type;
	b->type_name = t.type_name;
	b->source = t.source;
	b->source_len = t.source_len;
	b->metadata = t.metadata;
	b->attachments = t.attachments;
	b->extra = t.extra;
	b->flags = (b->flags & ~ROOM_CELL_NO_SOURCE) |
	    (t.flags & ROOM_CELL_NO_SOURCE);
	/* The sources' scans go with them (room-stale.c). */
	a->defuse = b->defuse;
	b->defuse = t.defuse;
	room_cell_touch(a);
	room_cell_touch(b);
}

static void
room_merge_swap_outputs(struct room_cell *a, struct room_cell *b)
{
	struct proto_outputs	*o = a->outputs;
	int64_t			 n = a->execution_count;

	a->outputs = b->outputs;
	a->execution_count = b->execution_count;
	b->outputs = o;
	b->execution_count = n;
	room_cell_touch(a);
	room_cell_touch(b);
}

/*
 * The notebook's metadata, key by key against the base: a key changed
 * on one side takes that side's value; on both, the room's (a kernel
 * writes language_info in both places; no cell is at stake).  *out is
 * the merged metadata, as json-c's add and del made it of the room's:
 * a key taken from the file replaces the room's where it is, or goes
 * at the end, in the file's order.  Returns whether it differs from the
 * room's (*out is then set).  Hashes are compared within this call only.
 */
static int
room_merge_metadata(const struct mpvalue *basev, const struct mpvalue *roomv,
    const struct mpvalue *diskv, struct mpvalue *out)
{
	msgpack_unpacked	 ub, ur, ud;
	const msgpack_object	*base, *room, *disk, *bv, *rv, *dv, *k;
	const msgpack_object_kv	*kv;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	uint32_t		 i, j;
	size_t			 n;
	uint64_t		 hb, hr, hd;
	char			*take, *drop;
	int			 changed = 0;

	msgpack_unpacked_init(&ub);
	msgpack_unpacked_init(&ur);
	msgpack_unpacked_init(&ud);
	base = mpvalue_view(basev, &ub);
	room = mpvalue_view(roomv, &ur);
	disk = mpvalue_view(diskv, &ud);
	if (room == NULL || room->type != MSGPACK_OBJECT_MAP ||
	    disk == NULL || disk->type != MSGPACK_OBJECT_MAP)
		fatalx("%s: the notebook's metadata is not a map", __func__);
	take = xcalloc(disk->via.map.size + 1, 1);
	drop = xcalloc(room->via.map.size + 1, 1);
	for (i = 0; i < disk->via.map.size; i++) {
		kv = &disk->via.map.ptr[i];
		bv = mpvalue_get(base, &kv->key);
		rv = mpvalue_get(room, &kv->key);
		hb = bv != NULL ? room_merge_kept(1, bv) : 0;
		hr = rv != NULL ? room_merge_kept(1, rv) : 0;
		hd = room_merge_kept(1, &kv->val);
		if (hd == hr || hd == hb || hr != hb)
			continue;	/* same, unchanged on disk, or ours */
		take[i] = 1;
		changed = 1;
	}
	/* A key the file dropped, unchanged in the room, goes. */
	for (i = 0; i < room->via.map.size; i++) {
		kv = &room->via.map.ptr[i];
		if (mpvalue_get(disk, &kv->key) != NULL ||
		    (bv = mpvalue_get(base, &kv->key)) == NULL)
			continue;
		if (room_merge_kept(1, &kv->val) != room_merge_kept(1, bv))
			continue;
		drop[i] = 1;
		changed = 1;
	}
	if (changed) {
		n = 0;
		for (i = 0; i < room->via.map.size; i++)
			n += !drop[i];
		for (i = 0; i < disk->via.map.size; i++) {
			n += take[i] && mpvalue_get(room,
			    &disk->via.map.ptr[i].key) == NULL;
		}
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, n);
		for (i = 0; i < room->via.map.size; i++) {
			kv = &room->via.map.ptr[i];
			if (drop[i])
				continue;
			dv = &kv->val;
			for (j = 0; j < disk->via.map.size; j++) {
				k = &disk->via.map.ptr[j].key;
				if (take[j] && k->type == MSGPACK_OBJECT_STR &&
				    k->via.str.size == kv->key.via.str.size &&
				    memcmp(k->via.str.ptr, kv->key.via.str.ptr,
				    k->via.str.size) == 0)
					dv = &disk->via.map.ptr[j].val;
			}
			msgpack_pack_object(&pk, kv->key);
			msgpack_pack_object(&pk, *dv);
		}
		for (i = 0; i < disk->via.map.size; i++) {
			kv = &disk->via.map.ptr[i];
			if (!take[i] || mpvalue_get(room, &kv->key) != NULL)
				continue;
			msgpack_pack_object(&pk, kv->key);
			msgpack_pack_object(&pk, kv->val);
		}
		mpvalue_set_bytes(out, sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
	}
	free(take);
	free(drop);
	msgpack_unpacked_destroy(&ub);
	msgpack_unpacked_destroy(&ur);
	msgpack_unpacked_destroy(&ud);
	return (changed);
}

/* Ids to places, for one side of a merge. */
static struct lh_table *
room_merge_index(char **ids, size_t n)
{
	struct lh_table	*t;
	size_t		 i;

	t = lh_kchar_table_new((int)(n * 2 + 16), NULL);
	for (i = 0; i < n; i++) {
		if (!lh_table_lookup_ex(t, ids[i], NULL))
			lh_table_insert(t, ids[i], (void *)(uintptr_t)(i + 1));
	}
	return (t);
}

static ssize_t
room_merge_at(struct lh_table *t, const char *id)
{
	void	*v;

	if (!lh_table_lookup_ex(t, id, &v))
		return (-1);
	return ((ssize_t)(uintptr_t)v - 1);
}

/*
 * Cells the file gave no id (or an id none of ours has) whose base cell
 * had none either: matched by content first, then by position, so an
 * old file's cells keep their ids in the room.
 */
static void
room_merge_match(struct room_base *base, struct room_nb *room,
    struct room_nb *disk, uint64_t *din)
{
	struct lh_table	*bt, *dt;
	char		**ids, id[9];
	char		 *used;
	size_t		  i, j;
	ssize_t		  k;

	ids = xcalloc(base->n + 1, sizeof *ids);
	for (i = 0; i < base->n; i++)
		ids[i] = base->cells[i].id;
	bt = room_merge_index(ids, base->n);
	free(ids);
	ids = xcalloc(disk->ncells + 1, sizeof *ids);
	for (i = 0; i < disk->ncells; i++)
		ids[i] = disk->cells[i]->id;
	dt = room_merge_index(ids, disk->ncells);
	free(ids);
	used = xcalloc(base->n + 1, 1);
	/* A base cell a file's cell names by id is not free. */
	for (i = 0; i < disk->ncells; i++) {
		if (!(disk->cells[i]->flags & ROOM_CELL_MINTED) &&
		    (k = room_merge_at(bt, disk->cells[i]->id)) >= 0)
			used[k] = 1;
	}
	for (i = 0; i < base->n; i++) {
		if (!base->cells[i].minted)
			used[i] = 1;
	}
	for (i = 0; i < disk->ncells; i++) {
		if (!(disk->cells[i]->flags & ROOM_CELL_MINTED) &&
		    room_merge_at(bt, disk->cells[i]->id) >= 0)
			continue;
		for (j = 0; j < base->n; j++) {
			if (!used[j] && base->cells[j].in == din[i])
				break;
		}
		if (j == base->n && i < base->n && !used[i])
			j = i;
		if (j < base->n && room_merge_at(dt, base->cells[j].id) < 0) {
			used[j] = 1;
			room_nb_cell_set_id(disk, disk->cells[i],
			    base->cells[j].id, strlen(base->cells[j].id));
			continue;
		}
		/* A new cell: its minted id must be new to the room too. */
		if ((disk->cells[i]->flags & ROOM_CELL_MINTED) &&
		    (room_nb_find(room, disk->cells[i]->id, NULL) != NULL ||
		    room_merge_at(bt, disk->cells[i]->id) >= 0)) {
			do
				room_nb_mint_id(disk, id);
			while (room_nb_find(room, id, NULL) != NULL);
			room_nb_cell_set_id(disk, disk->cells[i], id,
			    strlen(id));
		}
	}
	free(used);
	lh_table_free(bt);
	lh_table_free(dt);
}

/* Details of a merge being gathered. */
struct room_merge_acc {
	struct proto_change_detail	*d;
	size_t				 n;
	char				**cells;
	size_t				 ncells;
	int				 kinds;
};

static void
room_merge_note(struct room_merge_acc *a, enum proto_change_how how,
    const char *id, int kinds)
{
	struct proto_change_detail	*d;
	size_t				 i;

	a->kinds |= kinds;
	for (i = 0; i < a->ncells; i++) {
		if (strcmp(a->cells[i], id) == 0)
			break;
	}
	if (i == a->ncells) {
		/* Copied: a deleted cell's id goes with it. */
		a->cells = xreallocarray(a->cells, a->ncells + 1,
		    sizeof *a->cells);
		a->cells[a->ncells++] = xstrdup(id);
	}
	a->d = xreallocarray(a->d, a->n + 1, sizeof *a->d);
	d = &a->d[a->n++];
	memset(d, 0, sizeof *d);
	d->how = how;
	d->cell_id = proto_str_make(a->cells[i]);
}

/* Put cell c into v (n of cap) after the cell after (NULL: first). */
static void
room_merge_place(struct room_cell **v, size_t *n, struct room_cell *after,
    struct room_cell *c)
{
	size_t	i = 0;

	if (after != NULL) {
		for (i = 0; i < *n && v[i] != after; i++)
			;
		i = i < *n ? i + 1 : *n;
	}
	memmove(&v[i + 1], &v[i], (*n - i) * sizeof *v);
	v[i] = c;
	(*n)++;
}

/*
 * Merge disk (the file just read, taken) into the room; at is the
 * file's mtime (ms).  Records the change (by "disk"), snapshots,
 * announces.
 */
void
room_merge_disk(struct room *r, struct room_nb *disk, int64_t at)
{
	struct room_merge	*m = room_merge_get(r);
	struct room_base	*base = m->base, *nbase;
	struct room_nb		*room = r->nb;
	struct room_merge_acc	 a;
	struct lh_table		*bt, *rt, *dt;
	struct room_cell	**merged, *rc, *dc, *pred;
	struct mpvalue		 md = { NULL, 0 };
	uint64_t		*din, *dout, rin, rout;
	char			**ids, *after;
	char			*rkeep, *dtake, *placed, *dused;
	size_t			 i, n = 0, last;
	ssize_t			 bj, dj, rj;
	struct room_author	*disk_by;
	int			 room_moved = 0, differs = 0, busy, changed;
	int			 wrote;

	memset(&a, 0, sizeof a);
	disk_by = room_author_create(NULL, NULL, 1);
	din = xcalloc(disk->ncells + 1, sizeof *din);
	dout = xcalloc(disk->ncells + 1, sizeof *dout);
	for (i = 0; i < disk->ncells; i++) {
		din[i] = room_merge_hash_in(disk->cells[i]);
		dout[i] = room_merge_hash_out(disk->cells[i]);
	}
	room_merge_match(base, room, disk, din);
	nbase = room_merge_base_make(disk, 1);

	ids = xcalloc(base->n + room->ncells + disk->ncells + 1,
	    sizeof *ids);
	for (i = 0; i < base->n; i++)
		ids[i] = base->cells[i].id;
	bt = room_merge_index(ids, base->n);
	for (i = 0; i < room->ncells; i++)
		ids[i] = room->cells[i]->id;
	rt = room_merge_index(ids, room->ncells);
	for (i = 0; i < disk->ncells; i++)
		ids[i] = disk->cells[i]->id;
	dt = room_merge_index(ids, disk->ncells);
	free(ids);

	rkeep = xcalloc(room->ncells + 1, 1);
	dtake = xcalloc(disk->ncells + 1, 1);
	dused = xcalloc(disk->ncells + 1, 1);

	/* Did the room reorder the cells all three have? */
	last = 0;
	for (i = 0; i < room->ncells; i++) {
		if ((bj = room_merge_at(bt, room->cells[i]->id)) < 0 ||
		    room_merge_at(dt, room->cells[i]->id) < 0)
			continue;
		if ((size_t)bj + 1 < last)
			room_moved = 1;
		last = (size_t)bj + 1;
	}

	/* The room's cells: kept, merged with the file's, or dropped. */
	for (i = 0; i < room->ncells; i++) {
		rc = room->cells[i];
		bj = room_merge_at(bt, rc->id);
		dj = room_merge_at(dt, rc->id);
		busy = room_exec_cell_busy(r, rc->id);
		rin = room_merge_hash_in(rc);
		rout = room_merge_hash_out(rc);
		if (dj < 0) {
			if (bj < 0) {
				rkeep[i] = 1;	/* the room's insert */
				differs = 1;
			} else if (rin != base->cells[bj].in || busy) {
				rkeep[i] = 1;
				differs = 1;
				room_merge_conflict_add(m, rc->id,
				    ROOM_CONFLICT_DELETED_ON_DISK, NULL, NULL,
				    at);
				room_merge_note(&a, PROTO_CHANGE_CONFLICT,
				    rc->id, ROOM_CHANGE_CELLS);
			} else {
				room_merge_conflict_drop(m, rc->id);
				room_merge_note(&a, PROTO_CHANGE_DELETED,
				    rc->id, ROOM_CHANGE_CELLS);
			}
			continue;
		}
		rkeep[i] = 1;
		dused[dj] = 1;
		dc = disk->cells[dj];
		if (rin == din[dj])
			room_merge_conflict_drop(m, rc->id);
		else if (bj >= 0 && rin == base->cells[bj].in &&
		    !(busy && dc->type != rc->type)) {
			changed = dc->type != rc->type;
			wrote = changed;
			if (changed)
				room_merge_note(&a, PROTO_CHANGE_TYPE, rc->id,
				    ROOM_CHANGE_CELLS);
			if (dc->source_len != rc->source_len ||
			    (rc->source_len > 0 && memcmp(dc->source,
			    rc->source, rc->source_len) != 0)) {
				room_merge_note(&a, PROTO_CHANGE_SOURCE,
				    rc->id, ROOM_CHANGE_CELLS);
				wrote = 1;
			}
			if (room_merge_value(1, &dc->metadata) !=
			    room_merge_value(1, &rc->metadata))
				room_merge_note(&a, PROTO_CHANGE_METADATA,
				    rc->id, ROOM_CHANGE_CELLS);
			room_merge_swap_input(rc, dc);
			/* The file's editor wrote it last (issue 39). */
			if (wrote)
				room_cell_set_author(rc, disk_by);
			if (changed) {
				/* A cell of another type has other outputs. */
				room_merge_swap_outputs(rc, dc);
				rout = room_merge_hash_out(rc);
			}
			room_merge_conflict_drop(m, rc->id);
		} else if (bj < 0 || din[dj] != base->cells[bj].in) {
			/* Both changed it, differently. */
			differs = 1;
			room_merge_conflict_add(m, rc->id,
			    ROOM_CONFLICT_BOTH_EDITED, dc, NULL, at);
			disk->cells[dj] = NULL;
			dc = NULL;
			room_merge_note(&a, PROTO_CHANGE_CONFLICT, rc->id,
			    ROOM_CHANGE_CELLS);
		} else
			differs = 1;	/* the room's edit stands */
		if (dc == NULL)
			continue;
		/* Outputs: the file's only where the room's are the base's. */
		if (rout != dout[dj] && !busy && rc->type == dc->type &&
		    bj >= 0 && rout == base->cells[bj].out) {
			room_merge_swap_outputs(rc, dc);
			room_merge_note(&a, PROTO_CHANGE_OUTPUTS, rc->id,
			    ROOM_CHANGE_OUTPUTS);
		} else if (room_merge_hash_out(rc) != dout[dj])
			differs = 1;
	}

	/* The file's cells the room does not have: inserts, or deleted here. */
	for (i = 0; i < disk->ncells; i++) {
		if (dused[i] || disk->cells[i] == NULL)
			continue;
		bj = room_merge_at(bt, disk->cells[i]->id);
		if (bj < 0) {
			dtake[i] = 1;
			continue;
		}
		differs = 1;	/* the room deleted it */
		if (din[i] == base->cells[bj].in)
			continue;
		after = NULL;
		for (rj = (ssize_t)i - 1; rj >= 0; rj--) {
			if (disk->cells[rj] != NULL &&
			    room_merge_at(rt, disk->cells[rj]->id) >= 0) {
				after = disk->cells[rj]->id;
				break;
			}
		}
		room_merge_conflict_add(m, disk->cells[i]->id,
		    ROOM_CONFLICT_DELETED_IN_ROOM, disk->cells[i], after, at);
		room_merge_note(&a, PROTO_CHANGE_CONFLICT, disk->cells[i]->id,
		    ROOM_CHANGE_CELLS);
		disk->cells[i] = NULL;
	}

	/* The order: the file's, unless the room reordered its cells. */
	merged = xcalloc(room->ncells + disk->ncells + 1, sizeof *merged);
	placed = xcalloc(room->ncells + 1, 1);
	if (!room_moved) {
		for (i = 0; i < disk->ncells; i++) {
			if (disk->cells[i] == NULL)
				continue;
			if ((rj = room_merge_at(rt, disk->cells[i]->id)) >= 0 &&
			    rkeep[rj]) {
				merged[n++] = room->cells[rj];
				placed[rj] = 1;
			} else if (dtake[i])
				merged[n++] = disk->cells[i];
		}
		for (i = 0; i < room->ncells; i++) {
			if (!rkeep[i] || placed[i])
				continue;
			pred = NULL;
			for (rj = (ssize_t)i - 1; rj >= 0; rj--) {
				if (placed[rj]) {
					pred = room->cells[rj];
					break;
				}
			}
			room_merge_place(merged, &n, pred, room->cells[i]);
			placed[i] = 1;
		}
	} else {
		differs = 1;
		for (i = 0; i < room->ncells; i++) {
			if (rkeep[i])
				merged[n++] = room->cells[i];
		}
		for (i = 0; i < disk->ncells; i++) {
			if (!dtake[i])
				continue;
			pred = NULL;
			for (dj = (ssize_t)i - 1; dj >= 0; dj--) {
				if (disk->cells[dj] == NULL)
					continue;
				if (dtake[dj]) {
					pred = disk->cells[dj];
					break;
				}
				if ((rj = room_merge_at(rt,
				    disk->cells[dj]->id)) >= 0 && rkeep[rj]) {
					pred = room->cells[rj];
					break;
				}
			}
			room_merge_place(merged, &n, pred, disk->cells[i]);
		}
	}
	/* Cells that moved: those whose predecessor among kept ones changed. */
	for (i = 0; i < n && !room_moved; i++) {
		if ((rj = room_merge_at(rt, merged[i]->id)) < 0)
			continue;
		pred = NULL;
		for (dj = (ssize_t)i - 1; dj >= 0; dj--) {
			if (room_merge_at(rt, merged[dj]->id) >= 0) {
				pred = merged[dj];
				break;
			}
		}
		for (bj = rj - 1; bj >= 0 && !rkeep[bj]; bj--)
			;
		if ((bj < 0 ? NULL : room->cells[bj]) != pred)
			room_merge_note(&a, PROTO_CHANGE_MOVED, merged[i]->id,
			    ROOM_CHANGE_CELLS);
	}
	for (i = 0; i < disk->ncells; i++) {
		if (dtake[i]) {
			room_merge_note(&a, PROTO_CHANGE_INSERTED,
			    disk->cells[i]->id, ROOM_CHANGE_CELLS);
			room_cell_set_author(disk->cells[i], disk_by);
			disk->cells[i] = NULL;	/* the room's now */
		}
	}
	for (i = 0; i < room->ncells; i++) {
		if (!rkeep[i])
			room_nb_cell_destroy(room->cells[i]);
	}
	room_nb_set_cells(room, merged, n);

	if (room_merge_metadata(&base->metadata, &room->metadata,
	    &disk->metadata, &md)) {
		mpvalue_free(&room->metadata);
		room->metadata = md;
		a.kinds |= ROOM_CHANGE_METADATA;
	}
	if (room_merge_value(1, &room->metadata) !=
	    room_merge_value(1, &disk->metadata))
		differs = 1;
	if (m->nconflicts > 0)
		differs = 1;

	room_merge_base_free(m->base);
	m->base = nbase;
	log_info("room %s: merged %s from %s (%zu cell changes, %zu "
	    "conflicts)%s", r->id, r->remote != NULL ? room_remote_path(r) :
	    r->path, r->remote != NULL ? room_remote_domain_name(r) : "disk",
	    a.n, m->nconflicts,
	    differs ? "" : ", now the same as the file");
	if (a.kinds != 0)
		room_changes_record_by(r, a.kinds, a.cells, a.ncells, a.d, a.n,
		    "disk", at);
	if (!differs) {
		r->dirty = 0;
		r->unsaved_since = 0;
		room_autosave_cancel(r);
	} else if (r->dirty)
		room_autosave_arm(r);
	r->persist_full = 1;
	room_journal_snapshot(r);
	if (a.kinds != 0)
		room_changes_announce(r);

	free(a.d);
	for (i = 0; i < a.ncells; i++)
		free(a.cells[i]);
	free(a.cells);
	free(rkeep);
	free(dtake);
	free(dused);
	free(placed);
	free(din);
	free(dout);
	lh_table_free(bt);
	lh_table_free(rt);
	lh_table_free(dt);
	room_nb_free(disk);
	room_author_unref(disk_by);
}

static void
room_merge_retry(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	room_disk_check(arg);
}

/* Check the file again shortly (an edit batch is in flight). */
void
room_merge_later(struct room *r)
{
	struct room_merge	*m = room_merge_get(r);
	struct timeval		 tv = { 0, ROOM_MERGE_RETRY_MS * 1000 };

	if (m->retry == NULL)
		m->retry = evtimer_new(runtimed_base, room_merge_retry, r);
	evtimer_add(m->retry, &tv);
}

/*
 * ROOM_CONTENT's conflicts: [{cell_id, kind, disk: {cell_type, source,
 * metadata} | nil, after?, at}], capped sources as edit_conflict's.
 */
void
room_merge_pack(struct room *r, msgpack_packer *pk)
{
	struct room_merge	*m = r->merge;
	struct room_conflict	*c;
	size_t			 i, len;

	msgpack_pack_array(pk, m != NULL ? m->nconflicts : 0);
	for (i = 0; m != NULL && i < m->nconflicts; i++) {
		c = &m->conflicts[i];
		msgpack_pack_map(pk, 4 + (c->after != NULL));
		proto_pack_str(pk, "cell_id", c->id);
		proto_pack_str(pk, "kind", room_merge_kind_names[c->kind]);
		proto_pack_int(pk, "at", c->at);
		if (c->after != NULL)
			proto_pack_str(pk, "after", c->after);
		proto_pack_key(pk, "disk");
		if (c->disk == NULL) {
			msgpack_pack_nil(pk);
			continue;
		}
		msgpack_pack_map(pk, 3 + (c->disk->source_len >
		    ROOM_CONFLICT_SOURCE_MAX));
		proto_pack_str(pk, "cell_type", room_nb_cell_type_name(
		    c->disk));
		len = c->disk->source_len;
		if (len > ROOM_CONFLICT_SOURCE_MAX)
			len = ROOM_CONFLICT_SOURCE_MAX;
		proto_pack_strn(pk, "source", c->disk->source, len);
		proto_pack_key(pk, "metadata");
		mpvalue_pack(pk, &c->disk->metadata);
		if (c->disk->source_len > ROOM_CONFLICT_SOURCE_MAX)
			proto_pack_bool(pk, "source_truncated", 1);
	}
}

/* The file's metadata, put in place of the room's (struct room_merge_md). */
static void
room_merge_pack_md(msgpack_packer *pk, const void *arg)
{
	const struct room_merge_md	*md = arg;
	msgpack_unpacked		 ud, ur;
	const msgpack_object		*d, *room = NULL;
	msgpack_object			 none;
	size_t				 n;
	uint32_t			 i;

	msgpack_unpacked_init(&ud);
	msgpack_unpacked_init(&ur);
	memset(&none, 0, sizeof none);
	none.type = MSGPACK_OBJECT_MAP;
	if ((d = mpvalue_view(&md->disk->metadata, &ud)) == NULL ||
	    d->type != MSGPACK_OBJECT_MAP)
		d = &none;
	if (md->room != NULL &&
	    ((room = mpvalue_view(&md->room->metadata, &ur)) == NULL ||
	    room->type != MSGPACK_OBJECT_MAP))
		room = NULL;
	/* Replaces the room's: keys only the room has are deleted. */
	n = d->via.map.size;
	for (i = 0; room != NULL && i < room->via.map.size; i++)
		n += mpvalue_get(d, &room->via.map.ptr[i].key) == NULL;
	msgpack_pack_map(pk, n);
	for (i = 0; i < d->via.map.size; i++) {
		msgpack_pack_object(pk, d->via.map.ptr[i].key);
		msgpack_pack_object(pk, d->via.map.ptr[i].val);
	}
	for (i = 0; room != NULL && i < room->via.map.size; i++) {
		if (mpvalue_get(d, &room->via.map.ptr[i].key) != NULL)
			continue;
		msgpack_pack_object(pk, room->via.map.ptr[i].key);
		msgpack_pack_nil(pk);
	}
	msgpack_unpacked_destroy(&ud);
	msgpack_unpacked_destroy(&ur);
}

/* The file's version d as an insert's or edit's fields (of room's). */
static void
room_merge_disk_edit(struct proto_edit *e, struct room_merge_md *md,
    struct room_cell *d, struct room_cell *room)
{
	md->disk = d;
	md->room = room;
	e->cell_type = proto_str_make(room_nb_cell_type_name(d));
	e->source.ptr = d->source != NULL ? d->source : "";
	e->source.len = d->source_len;
	e->metadata.pack = room_merge_pack_md;
	e->metadata.arg = md;
}

/* Is edit e (read as *m) a resolve?  One that does not read is not. */
static int
room_merge_is_resolve(const msgpack_object *e, uint32_t i,
    struct proto_edit *m)
{
	char	n[32], err[512];

	snprintf(n, sizeof n, "edit %u", i);
	return (proto_edit_unpack(e, n, m, err, sizeof err) == 0 &&
	    m->op == PROTO_EDIT_RESOLVE);
}

/*
 * The plain edit (*e) that resolves conflict c with take; -1 if take is
 * none of room, disk or both.
 */
static int
room_merge_resolve(struct room *r, struct room_conflict *c,
    const struct proto_str *take, struct proto_edit *e,
    struct room_merge_md *md)
{
	static const msgpack_object	 none = { .type = MSGPACK_OBJECT_MAP };
	struct room_cell		*rc;
	int				 room, disk;

	room = proto_str_eq(take, "room");
	disk = proto_str_eq(take, "disk");
	if (!room && !disk && !proto_str_eq(take, "both"))
		return (-1);
	memset(e, 0, sizeof *e);
	rc = room_nb_find(r->nb, c->id, NULL);
	if (room || (c->disk == NULL && !disk) ||
	    (c->kind == ROOM_CONFLICT_DELETED_IN_ROOM && rc != NULL)) {
		/* Nothing to change: an empty metadata merge. */
		if (rc != NULL) {
			e->op = PROTO_EDIT_EDIT;
			e->cell_id = proto_doc_cstr(c->id);
		} else
			e->op = PROTO_EDIT_NOTEBOOK_METADATA;
		e->metadata.obj = &none;
	} else if (c->disk == NULL) {
		e->op = PROTO_EDIT_DELETE;
		e->cell_id = proto_doc_cstr(c->id);
	} else if (disk && rc != NULL) {
		e->op = PROTO_EDIT_EDIT;
		e->cell_id = proto_doc_cstr(c->id);
		room_merge_disk_edit(e, md, c->disk, rc);
	} else {
		/* Both, or the file's of a cell the room deleted. */
		e->op = PROTO_EDIT_INSERT;
		if (rc != NULL)
			e->after = proto_doc_cstr(c->id);
		else if (c->after != NULL &&
		    room_nb_find(r->nb, c->after, NULL) != NULL)
			e->after = proto_doc_cstr(c->after);
		else
			e->after = proto_doc_cstr("TOP");
		room_merge_disk_edit(e, md, c->disk, NULL);
	}
	return (0);
}

/*
 * An edit batch with resolve ops ({op: "resolve", cell_id, take: room,
 * disk or both}): each becomes the plain op that does it, so the journal
 * and its replay never need the conflict.  Returns 0 with *out unset
 * when there is none, 1 with *out (the batch rewritten) and *ids (the
 * cells resolved, to drop once it is durable), -1 with *cause.  An edit
 * that does not read is left for the batch's codec to refuse.
 */
int
room_merge_rewrite(struct room *r, const msgpack_object *edits,
    msgpack_sbuffer *out, char ***ids, size_t *nids, char **cause)
{
	struct room_merge	*m = r->merge;
	struct room_conflict	*c;
	struct room_merge_md	 md;
	struct proto_edit	 pe, rw;
	const msgpack_object	*e, *id;
	msgpack_packer		 pk;
	char			*s;
	uint32_t		 i;
	int			 any = 0;

	*ids = NULL;
	*nids = 0;
	if (edits == NULL || edits->type != MSGPACK_OBJECT_ARRAY)
		return (0);
	for (i = 0; i < edits->via.array.size && !any; i++)
		any = room_merge_is_resolve(&edits->via.array.ptr[i], i, &pe);
	if (!any)
		return (0);
	msgpack_sbuffer_init(out);
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, edits->via.array.size);
	for (i = 0; i < edits->via.array.size; i++) {
		e = &edits->via.array.ptr[i];
		if (!room_merge_is_resolve(e, i, &pe)) {
			msgpack_pack_object(&pk, *e);
			continue;
		}
		id = pe.cell_id.obj;
		if (id->type != MSGPACK_OBJECT_STR) {
			xasprintf(cause, "edit %u: resolve needs cell_id", i);
			goto fail;
		}
		s = xstrndup(id->via.str.ptr, id->via.str.size);
		c = room_merge_conflict_find(m, s);
		if (c == NULL) {
			xasprintf(cause, "edit %u: no conflict on cell %s", i,
			    s);
			free(s);
			goto fail;
		}
		free(s);
		if (room_merge_resolve(r, c, &pe.take, &rw, &md) != 0) {
			xasprintf(cause, "edit %u: take must be room, disk or "
			    "both", i);
			goto fail;
		}
		proto_edit_pack(&pk, &rw);
		*ids = xreallocarray(*ids, *nids + 1, sizeof **ids);
		(*ids)[(*nids)++] = xstrdup(c->id);
	}
	return (1);

fail:
	msgpack_sbuffer_destroy(out);
	for (i = 0; i < *nids; i++)
		free((*ids)[i]);
	free(*ids);
	*ids = NULL;
	*nids = 0;
	return (-1);
}

/* Resolved conflicts are gone once the batch that resolved them is. */
void
room_merge_resolved(struct room *r, char **ids, size_t nids)
{
	size_t	i;

	for (i = 0; i < nids; i++)
		room_merge_conflict_drop(r->merge, ids[i]);
	if (nids > 0)
		room_journal_snapshot(r);
}

/*
 * The merge state a snapshot keeps (room-journal.c), so a daemon that
 * restarts still knows the base and every conflict's file version:
 * {base: [[cell_id, minted, in, out]...], metadata, conflicts:
 * [{cell_id, kind, at, after?, disk}], disk: {cells: the file's versions
 * of those with disk true, in order}}.
 */
int
room_merge_stored(struct room *r)
{
	return (r->merge != NULL && (r->merge->base != NULL ||
	    r->merge->nconflicts > 0));
}

void
room_merge_pack_state(struct room *r, msgpack_packer *pk)
{
	struct room_merge	*m = r->merge;
	struct room_base	*b = m->base;
	struct room_conflict	*c;
	struct room_nb		 nb;
	size_t			 i, n = 0;

	msgpack_pack_map(pk, 4);
	proto_pack_key(pk, "base");
	msgpack_pack_array(pk, b != NULL ? b->n : 0);
	for (i = 0; b != NULL && i < b->n; i++) {
		msgpack_pack_array(pk, 4);
		proto_pack_cstr(pk, b->cells[i].id);
		msgpack_pack_int(pk, b->cells[i].minted);
		msgpack_pack_uint64(pk, b->cells[i].in);
		msgpack_pack_uint64(pk, b->cells[i].out);
	}
	proto_pack_key(pk, "metadata");
	if (b != NULL)
		mpvalue_pack(pk, &b->metadata);
	else
		msgpack_pack_nil(pk);
	proto_pack_key(pk, "conflicts");
	msgpack_pack_array(pk, m->nconflicts);
	memset(&nb, 0, sizeof nb);
	nb.cells = xcalloc(m->nconflicts + 1, sizeof *nb.cells);
	for (i = 0; i < m->nconflicts; i++) {
		c = &m->conflicts[i];
		msgpack_pack_map(pk, 4 + (c->after != NULL));
		proto_pack_str(pk, "cell_id", c->id);
		proto_pack_int(pk, "kind", (int64_t)c->kind);
		proto_pack_int(pk, "at", c->at);
		proto_pack_bool(pk, "disk", c->disk != NULL);
		if (c->after != NULL)
			proto_pack_str(pk, "after", c->after);
		if (c->disk != NULL)
			nb.cells[n++] = c->disk;
	}
	nb.ncells = n;
	nb.metadata.ptr = (char *)"\x80";	/* {}, only read */
	nb.metadata.len = 1;
	proto_pack_key(pk, "disk");
	room_journal_pack_nb(pk, &nb);
	free(nb.cells);
}

/* The merge state of a snapshot (an older one has none). */
void
room_merge_restore(struct room *r, const msgpack_object *o)
{
	struct room_merge	*m;
	struct room_base	*b;
	struct room_nb		*disk;
	const msgpack_object	*list, *e, *v;
	char			*cause = NULL, *id, *after;
	size_t			 i, n = 0, len;
	const char		*s;
	int64_t			 kind, at;
	int			 has;

	if (o == NULL || o->type != MSGPACK_OBJECT_MAP)
		return;
	room_merge_free(r);
	m = room_merge_get(r);
	if ((list = proto_get_array(o, "base")) != NULL &&
	    (v = proto_get_map(o, "metadata")) != NULL) {
		b = xcalloc(1, sizeof *b);
		b->cells = xcalloc(list->via.array.size + 1,
		    sizeof *b->cells);
		for (i = 0; i < list->via.array.size; i++) {
			e = &list->via.array.ptr[i];
			if (e->type != MSGPACK_OBJECT_ARRAY ||
			    e->via.array.size != 4 ||
			    e->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
			    e->via.array.ptr[2].type !=
			    MSGPACK_OBJECT_POSITIVE_INTEGER ||
			    e->via.array.ptr[3].type !=
			    MSGPACK_OBJECT_POSITIVE_INTEGER)
				continue;
			b->cells[b->n].id = xstrndup(
			    e->via.array.ptr[0].via.str.ptr,
			    e->via.array.ptr[0].via.str.size);
			b->cells[b->n].minted =
			    e->via.array.ptr[1].type ==
			    MSGPACK_OBJECT_POSITIVE_INTEGER &&
			    e->via.array.ptr[1].via.u64 != 0;
			b->cells[b->n].in = e->via.array.ptr[2].via.u64;
			b->cells[b->n].out = e->via.array.ptr[3].via.u64;
			b->n++;
		}
		mpvalue_set_obj(&b->metadata, v);
		m->base = b;
	}
	disk = room_journal_unpack_nb(proto_get(o, "disk"), &cause);
	free(cause);
	if ((list = proto_get_array(o, "conflicts")) == NULL)
		goto out;
	for (i = 0; i < list->via.array.size; i++) {
		e = &list->via.array.ptr[i];
		if ((s = proto_get_str(e, "cell_id", &len)) == NULL ||
		    proto_get_int(e, "kind", &kind) != 0 || kind < 0 ||
		    kind > ROOM_CONFLICT_DELETED_IN_ROOM ||
		    proto_get_bool(e, "disk", &has) != 0)
			continue;
		if (proto_get_int(e, "at", &at) != 0)
			at = 0;
		id = xstrndup(s, len);
		after = proto_dup_str(e, "after");
		if (has && (disk == NULL || n >= disk->ncells)) {
			free(id);
			free(after);
			continue;
		}
		room_merge_conflict_add(m, id, (enum room_conflict_kind)kind,
		    has ? disk->cells[n] : NULL, after, at);
		if (has)
			disk->cells[n++] = NULL;
		free(id);
		free(after);
	}
out:
	room_nb_free(disk);
}
