/* SPDX-License-Identifier: ISC */
/*
 * room-record.c: a stored run record rewritten without leaving msgpack
 * (decision 104): a run an earlier daemon lost, a record sent without
 * its outputs, a run's line of EXEC_TASKS.  Each gives the bytes the
 * json-c path gave (mpjson_unpack, json-c's object_add, mpjson_pack):
 * the record is copied with its keys set where json-c set them
 * (proto_map_copy), every value it keeps packed as json-c keeps it
 * (mpjson_repack).  What json-c would find by other keys than those the
 * record has (a key twice, or with a NUL, ...) is repacked whole first
 * (room_record_normal).
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

static int	room_record_cell_status(const msgpack_object *,
		    enum proto_cell_status *);
static void	room_record_pack_str(msgpack_packer *, const msgpack_object *,
		    void *);
static void	room_record_pack_int(msgpack_packer *, const msgpack_object *,
		    void *);
static void	room_record_orphan_cells(msgpack_packer *,
		    const msgpack_object *, void *);
static void	room_record_omit_cells(msgpack_packer *,
		    const msgpack_object *, void *);
static void	room_record_value(msgpack_packer *, const char *,
		    const msgpack_object *);
static void	room_record_copy(msgpack_packer *, const msgpack_object *,
		    void *);
static int64_t	room_record_int64(const msgpack_object *);
static int	room_record_plain(const msgpack_object *);

/* Depths of a record's values, of its cells, of a cell's values. */
static unsigned int	room_record_depth[] = { 1, 2, 3 };

/* A value kept, packed as json-c keeps it at its depth (arg). */
static void
room_record_copy(msgpack_packer *pk, const msgpack_object *v, void *arg)
{
	mpjson_repack(pk, v, *(unsigned int *)arg);
}

/*
 * Does rec read by its keys as json-c read it: its keys and its cells'
 * plain (mpjson_plain_keys), its cells and each cell no JSON text (an
 * ext json-c reads as a list or a map), its cells' statuses plain
 * strings (json-c would read a binary, or JSON text, as a string)?
 */
static int
room_record_plain(const msgpack_object *rec)
{
	const msgpack_object	*cells, *c, *st;
	uint32_t		 i;

	if (!mpjson_plain_keys(rec))
		return (0);
	if ((cells = proto_get(rec, "cells")) == NULL)
		return (1);
	if (cells->type == MSGPACK_OBJECT_EXT)
		return (0);
	if (cells->type != MSGPACK_OBJECT_ARRAY)
		return (1);
	for (i = 0; i < cells->via.array.size; i++) {
		c = &cells->via.array.ptr[i];
		if (c->type == MSGPACK_OBJECT_EXT)
			return (0);
		if (c->type != MSGPACK_OBJECT_MAP)
			continue;
		if (!mpjson_plain_keys(c) || ((st = proto_get(c, "status")) !=
		    NULL && !mpjson_plain(st, 3)))
			return (0);
	}
	return (1);
}

/*
 * rec, to be read by its keys as json-c read it: rec itself when
 * room_record_plain says so, else repacked into b (mpjson_repack) and
 * read back into u.  NULL if it is not a map.
 */
const msgpack_object *
room_record_normal(const msgpack_object *rec, struct mpbuf *b,
    msgpack_unpacked *u)
{
	size_t	off = 0;

	if (rec->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	if (room_record_plain(rec))
		return (rec);
	mpjson_repack(&b->pk, rec, 0);
	if (msgpack_unpack_next(u, b->sb.data, b->sb.size, &off) !=
	    MSGPACK_UNPACK_SUCCESS || u->data.type != MSGPACK_OBJECT_MAP)
		return (NULL);
	return (&u->data);
}

/* A cell's status, when it has one that is a known string. */
static int
room_record_cell_status(const msgpack_object *c, enum proto_cell_status *cs)
{
	const msgpack_object	*st;

	if (c->type != MSGPACK_OBJECT_MAP ||
	    (st = proto_get(c, "status")) == NULL ||
	    st->type != MSGPACK_OBJECT_STR)
		return (-1);
	return (proto_cell_status_parse(st->via.str.ptr, st->via.str.size,
	    cs));
}

/* Did the lost run (a normal record) have a cell running? */
int
room_record_ran(const msgpack_object *rec)
{
	const msgpack_object	*cells;
	enum proto_cell_status	 cs;
	uint32_t		 i;

	if ((cells = proto_get(rec, "cells")) == NULL ||
	    cells->type != MSGPACK_OBJECT_ARRAY)
		return (0);
	for (i = 0; i < cells->via.array.size; i++) {
		if (room_record_cell_status(&cells->via.array.ptr[i],
		    &cs) == 0 && cs == PROTO_CELL_RUNNING)
			return (1);
	}
	return (0);
}

static void
room_record_pack_str(msgpack_packer *pk, const msgpack_object *old,
    void *arg)
{
	proto_pack_cstr(pk, arg);
}

static void
room_record_pack_int(msgpack_packer *pk, const msgpack_object *old,
    void *arg)
{
	msgpack_pack_int64(pk, *(int64_t *)arg);
}

/* The cells of a lost run: running ones died, queued ones did not run. */
static void
room_record_orphan_cells(msgpack_packer *pk, const msgpack_object *cells,
    void *arg)
{
	struct proto_map_set	 set;
	const msgpack_object	*c;
	enum proto_cell_status	 cs;
	uint32_t		 i;

	msgpack_pack_array(pk, cells->via.array.size);
	for (i = 0; i < cells->via.array.size; i++) {
		c = &cells->via.array.ptr[i];
		if (room_record_cell_status(c, &cs) != 0 ||
		    (cs != PROTO_CELL_RUNNING && cs != PROTO_CELL_QUEUED)) {
			mpjson_repack(pk, c, 2);
			continue;
		}
		memset(&set, 0, sizeof set);
		set.key = "status";
		set.pack = room_record_pack_str;
		set.arg = (void *)proto_cell_status_name(cs ==
		    PROTO_CELL_RUNNING ? PROTO_CELL_KERNEL_DIED :
		    PROTO_CELL_NOT_RUN);
		proto_map_copy(pk, c, &set, 1, room_record_copy,
		    &room_record_depth[2]);
	}
}

/*
 * A record (normal) that was in flight when an earlier daemon died: it
 * ended then, as far as anyone can tell.  Its status, message and
 * daemon_started_at set, in that order.
 */
void
room_record_orphan(msgpack_packer *pk, const msgpack_object *rec,
    int64_t started_at)
{
	struct proto_map_set	 set[4];
	const msgpack_object	*cells;
	size_t			 n = 0;

	memset(set, 0, sizeof set);
	if ((cells = proto_get(rec, "cells")) != NULL &&
	    cells->type == MSGPACK_OBJECT_ARRAY) {
		set[n].key = "cells";
		set[n++].pack = room_record_orphan_cells;
	}
	set[n].key = "status";
	set[n].pack = room_record_pack_str;
	set[n++].arg = (void *)proto_run_status_name(room_record_ran(rec) ?
	    PROTO_RUN_KERNEL_DIED : PROTO_RUN_CANCELLED);
	set[n].key = "message";
	set[n].pack = room_record_pack_str;
	set[n++].arg = (void *)ROOM_RECORD_ORPHANED;
	set[n].key = "daemon_started_at";
	set[n].pack = room_record_pack_int;
	set[n++].arg = &started_at;
	proto_map_copy(pk, rec, set, n, room_record_copy,
	    &room_record_depth[0]);
}

/* Every cell that is a map with its outputs emptied. */
static void
room_record_omit_cells(msgpack_packer *pk, const msgpack_object *cells,
    void *arg)
{
	struct proto_map_set	 set;
	const msgpack_object	*c;
	uint32_t		 i;

	memset(&set, 0, sizeof set);
	set.key = "outputs";
	set.packed = "\x90";
	set.packed_len = 1;
	msgpack_pack_array(pk, cells->via.array.size);
	for (i = 0; i < cells->via.array.size; i++) {
		c = &cells->via.array.ptr[i];
		if (c->type == MSGPACK_OBJECT_MAP)
			proto_map_copy(pk, c, &set, 1, room_record_copy,
			    &room_record_depth[2]);
		else
			mpjson_repack(pk, c, 2);
	}
}

/*
 * A record (normal) sent without its outputs: message says why, and
 * outputs_omitted is true.
 */
void
room_record_omit(msgpack_packer *pk, const msgpack_object *rec,
    const char *msg)
{
	struct proto_map_set	 set[3];
	const msgpack_object	*cells;
	size_t			 n = 0;

	memset(set, 0, sizeof set);
	set[n].key = "message";
	set[n].pack = room_record_pack_str;
	set[n++].arg = (void *)msg;
	set[n].key = "outputs_omitted";
	set[n].packed = "\xc3";
	set[n++].packed_len = 1;
	if ((cells = proto_get(rec, "cells")) != NULL &&
	    cells->type == MSGPACK_OBJECT_ARRAY) {
		set[n].key = "cells";
		set[n++].pack = room_record_omit_cells;
	}
	proto_map_copy(pk, rec, set, n, room_record_copy,
	    &room_record_depth[0]);
}

/* key and a value of a normal record, two levels into EXEC_TASKS. */
static void
room_record_value(msgpack_packer *pk, const char *key,
    const msgpack_object *v)
{
	proto_pack_key(pk, key);
	mpjson_repack(pk, v, 2);
}

/*
 * A run's line of EXEC_TASKS from its record (normal): execution_id,
 * notebook_id, then the status, message, created_at and updated_at it
 * has; a lost run's status and message as room_record_orphan sets them.
 */
void
room_record_task(msgpack_packer *pk, const msgpack_object *rec,
    const char *eid, const char *nb, int orphan)
{
	static const char	*keys[] = { "status", "message", "created_at",
	    "updated_at" };
	const msgpack_object	*v[4];
	size_t			 i, n = 2;

	for (i = 0; i < 4; i++) {
		if ((v[i] = proto_get(rec, keys[i])) != NULL)
			n++;
	}
	if (orphan)
		n += (v[0] == NULL) + (v[1] == NULL);
	msgpack_pack_map(pk, n);
	proto_pack_str(pk, "execution_id", eid);
	proto_pack_str(pk, "notebook_id", nb);
	if (orphan) {
		proto_pack_str(pk, "status", proto_run_status_name(
		    room_record_ran(rec) ? PROTO_RUN_KERNEL_DIED :
		    PROTO_RUN_CANCELLED));
		proto_pack_str(pk, "message", ROOM_RECORD_ORPHANED);
	} else {
		for (i = 0; i < 2; i++) {
			if (v[i] != NULL)
				room_record_value(pk, keys[i], v[i]);
		}
	}
	for (i = 2; i < 4; i++) {
		if (v[i] != NULL)
			room_record_value(pk, keys[i], v[i]);
	}
}

/*
 * A record's created_at as json-c's get_int64 reads it, which the
 * EXEC_TASKS list is sorted by: integers clamped to int64, a double
 * truncated, a boolean 0 or 1, a string by strtoll, the rest 0.  rec
 * is room_record_normal's.
 */
int64_t
room_record_created_at(const msgpack_object *rec)
{
	const msgpack_object	*v;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	size_t			 off = 0;
	int64_t			 t = 0;

	if ((v = proto_get(rec, "created_at")) == NULL)
		return (0);
	if (!mpjson_plain(v, 1)) {
		/* A binary, a NaN, JSON text: read as json-c has it. */
		mpbuf_init(&b);
		msgpack_unpacked_init(&u);
		mpjson_repack(&b.pk, v, 1);
		if (msgpack_unpack_next(&u, b.sb.data, b.sb.size, &off) ==
		    MSGPACK_UNPACK_SUCCESS)
			t = room_record_int64(&u.data);
		msgpack_unpacked_destroy(&u);
		mpbuf_free(&b);
		return (t);
	}
	return (room_record_int64(v));
}

/* A plain value as json-c's get_int64 reads it. */
static int64_t
room_record_int64(const msgpack_object *v)
{
	char	*s;
	int64_t	 t;

	switch (v->type) {
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return (v->via.u64 >= (uint64_t)INT64_MAX ? INT64_MAX :
		    (int64_t)v->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return (v->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (v->via.f64 >= (double)INT64_MAX)
			return (INT64_MAX);
		if (v->via.f64 <= (double)INT64_MIN)
			return (INT64_MIN);
		return ((int64_t)v->via.f64);
	case MSGPACK_OBJECT_BOOLEAN:
		return (v->via.boolean);
	case MSGPACK_OBJECT_STR:
		if (v->via.str.size == 0)
			return (0);
		s = xstrndup(v->via.str.ptr, v->via.str.size);
		t = strtoll(s, NULL, 10);
		free(s);
		return (t);
	default:
		return (0);
	}
}

/*
 * qsort's comparison of two pointers to lines: newest first.  Sorting
 * pointers with it gives the order json-c's array sort gave (qsort
 * of pointers, the same comparisons), ties and all.
 */
int
room_record_line_cmp(const void *a, const void *b)
{
	const struct room_record_line	*la = *(const struct room_record_line
					    *const *)a;
	const struct room_record_line	*lb = *(const struct room_record_line
					    *const *)b;

	return (la->created_at < lb->created_at ? 1 :
	    la->created_at > lb->created_at ? -1 : 0);
}
