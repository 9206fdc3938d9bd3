/* SPDX-License-Identifier: ISC */
/*
 * test-room-record.c: room-record.c rewrites a run record to the bytes
 * of the json-c path it replaced (decision 104), kept here as it was in
 * room-exec.c: a lost run (room_exec_orphan), a record sent without its
 * outputs (room_exec_send), the EXEC_TASKS list (room_exec_tasks_one,
 * room_exec_tasks_cmp), on records made of what json-c changes.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "runtimed/runtimed.h"
#include "tests/unit/mpjson-gen.h"

#define STARTED_AT	1765150000123456LL

/* The json-c path, as room-exec.c had it. */
static struct json_object *
old_orphan(struct json_object *rec)
{
	struct json_object	*cells, *c, *st;
	enum proto_cell_status	 cs;
	size_t			 i;
	int			 ran = 0;

	if (json_object_object_get_ex(rec, "cells", &cells) &&
	    json_object_is_type(cells, json_type_array)) {
		for (i = 0; i < json_object_array_length(cells); i++) {
			c = json_object_array_get_idx(cells, i);
			if (!json_object_object_get_ex(c, "status", &st))
				continue;
			if (!json_object_is_type(st, json_type_string) ||
			    proto_cell_status_parse(json_object_get_string(st),
			    (size_t)json_object_get_string_len(st), &cs) != 0)
				continue;
			if (cs == PROTO_CELL_RUNNING) {
				ran = 1;
				json_object_object_add(c, "status",
				    json_object_new_string(proto_cell_status_name(
				    PROTO_CELL_KERNEL_DIED)));
			} else if (cs == PROTO_CELL_QUEUED)
				json_object_object_add(c, "status",
				    json_object_new_string(proto_cell_status_name(
				    PROTO_CELL_NOT_RUN)));
		}
	}
	json_object_object_add(rec, "status", json_object_new_string(
	    proto_run_status_name(ran ? PROTO_RUN_KERNEL_DIED :
	    PROTO_RUN_CANCELLED)));
	json_object_object_add(rec, "message", json_object_new_string(
	    "the daemon restarted while this run was in flight"));
	json_object_object_add(rec, "daemon_started_at",
	    json_object_new_int64(STARTED_AT));
	return (rec);
}

static void
old_omit(struct json_object *rec, const char *msg)
{
	struct json_object	*cells, *cell;
	size_t			 i;

	json_object_object_add(rec, "message", json_object_new_string(msg));
	json_object_object_add(rec, "outputs_omitted",
	    json_object_new_boolean(1));
	cells = json_object_object_get(rec, "cells");
	for (i = 0; i < json_object_array_length(cells); i++) {
		cell = json_object_array_get_idx(cells, i);
		if (json_object_is_type(cell, json_type_object))
			json_object_object_add(cell, "outputs",
			    json_object_new_array());
	}
}

static struct json_object *
old_task(struct json_object *rec, const char *eid, const char *nb)
{
	struct json_object	*run, *v;

	run = json_object_new_object();
	json_object_object_add(run, "execution_id",
	    json_object_new_string(eid));
	json_object_object_add(run, "notebook_id", json_object_new_string(nb));
	if (json_object_object_get_ex(rec, "status", &v))
		json_object_object_add(run, "status", json_object_get(v));
	if (json_object_object_get_ex(rec, "message", &v))
		json_object_object_add(run, "message", json_object_get(v));
	if (json_object_object_get_ex(rec, "created_at", &v))
		json_object_object_add(run, "created_at", json_object_get(v));
	if (json_object_object_get_ex(rec, "updated_at", &v))
		json_object_object_add(run, "updated_at", json_object_get(v));
	return (run);
}

static int
old_tasks_cmp(const void *a, const void *b)
{
	struct json_object *const	*ja = a, *const *jb = b;
	int64_t				 ta, tb;

	ta = json_object_get_int64(json_object_object_get(*ja, "created_at"));
	tb = json_object_get_int64(json_object_object_get(*jb, "created_at"));
	return (ta < tb ? 1 : ta > tb ? -1 : 0);
}

/* A string of the record's kind, or now and then anything. */
static void
gen_pick(msgpack_packer *pk, const char *const *v, size_t n)
{
	uint32_t	r = gen_rand() % (n + 2);

	if (r < n)
		proto_pack_cstr(pk, v[r]);
	else
		gen(pk, 3);
}

/* Now and then records with each key once, of the daemon's names. */
static int	gen_clean;

/* Key k of v, or now and then (unless clean) an odd one. */
static void
gen_key(msgpack_packer *pk, const char *const *v, size_t n, uint32_t k)
{
	uint32_t	r = gen_clean ? k : gen_rand() % (n + 3);

	if (r < n)
		r = k;
	if (r < n)
		proto_pack_cstr(pk, v[r]);
	else if (r == n)
		msgpack_pack_str_with_body(pk, "status\0x", 8);
	else if (r == n + 1)
		msgpack_pack_str_with_body(pk, "\xff", 1);
	else
		msgpack_pack_int(pk, 7);
}

static void
gen_cell(msgpack_packer *pk)
{
	static const char *const	keys[] = { "cell_id", "status",
	    "outputs", "execution_count", "status" };
	static const char *const	sts[] = { "running", "queued", "ok",
	    "error", "not_run", "kernel_died" };
	uint32_t			i, n, k, r, ks[5];

	if (gen_rand() % 8 == 0) {
		gen(pk, 2);
		return;
	}
	if (gen_rand() % 12 == 0) {
		/* JSON text (mpjson's ext), which json-c reads as a map. */
		msgpack_pack_ext_with_body(pk, "{\"status\":\"running\"}", 20,
		    1);
		return;
	}
	for (n = 0, i = 0; i < 5; i++) {
		if (gen_clean && i < 4 && gen_rand() % 3 != 0)
			ks[n++] = i;
		else if (!gen_clean && gen_rand() % 2 == 0)
			ks[n++] = gen_rand() % 5;
	}
	msgpack_pack_map(pk, n);
	for (i = 0; i < n; i++) {
		k = ks[i];
		gen_key(pk, keys, 5, k);
		if ((k == 1 || k == 4) && gen_rand() % 6 == 0) {
			/* A binary json-c reads as the string. */
			r = gen_rand() % 2;
			msgpack_pack_bin_with_body(pk, sts[r], strlen(sts[r]));
		} else if (k == 1 || k == 4)
			gen_pick(pk, sts, 6);
		else if (k == 2) {
			msgpack_pack_array(pk, 2);
			gen(pk, 4);
			gen(pk, 4);
		} else
			gen(pk, 3);
	}
}

/* A run record: the daemon's keys mostly, some twice, odd values. */
static void
gen_record(msgpack_packer *pk)
{
	static const char *const	keys[] = { "execution_id", "status",
	    "message", "cells", "created_at", "updated_at",
	    "daemon_started_at", "outputs_omitted", "cells", "created_at" };
	static const char *const	sts[] = { "running", "queued", "done",
	    "input_required", "error" };
	uint32_t			i, j, n, nc, k, ks[10];

	for (n = 0, i = 0; i < 10; i++) {
		if (gen_clean && i < 8 && gen_rand() % 3 != 0)
			ks[n++] = i;
		else if (!gen_clean && gen_rand() % 2 == 0)
			ks[n++] = gen_rand() % 10;
	}
	msgpack_pack_map(pk, n);
	for (i = 0; i < n; i++) {
		k = ks[i];
		gen_key(pk, keys, 10, k);
		switch (k) {
		case 1:
			gen_pick(pk, sts, 5);
			break;
		case 3:
		case 8:
			if (gen_rand() % 8 == 0) {
				/* JSON text json-c reads as the list. */
				msgpack_pack_ext_with_body(pk,
				    "[{\"status\":\"queued\"},1]", 23, 1);
				break;
			}
			nc = gen_rand() % 5;
			msgpack_pack_array(pk, nc);
			for (j = 0; j < nc; j++)
				gen_cell(pk);
			break;
		case 4:
		case 9:
			if (gen_rand() % 3 == 0)
				gen(pk, 1);
			else
				msgpack_pack_int64(pk, gen_rand() % 50);
			break;
		default:
			gen(pk, 1);
			break;
		}
	}
}

static void
same(struct mpbuf *a, struct mpbuf *b, const char *what, int k)
{
	cr_assert_eq(a->sb.size, b->sb.size, "%s %d: %zu bytes, not %zu",
	    what, k, b->sb.size, a->sb.size);
	cr_assert(memcmp(a->sb.data, b->sb.data, a->sb.size) == 0,
	    "%s %d: the bytes differ", what, k);
}

/* One record both ways: orphaned, omitted, as a line of EXEC_TASKS. */
static void
both(const msgpack_object *raw, int k, struct json_object *runs,
    struct room_record_line **lines, size_t *nlines)
{
	struct json_object	*rec;
	struct mpbuf		 a, b, nb;
	msgpack_unpacked	 nu;
	const msgpack_object	*norm;
	struct room_record_line	*l;
	int			 orphan = k & 1;

	mpbuf_init(&nb);
	msgpack_unpacked_init(&nu);
	norm = room_record_normal(raw, &nb, &nu);
	cr_assert_not_null(norm);

	mpbuf_init(&a);
	mpbuf_init(&b);
	rec = old_orphan(mpjson_unpack(raw));
	mpjson_pack(&a.pk, rec);
	json_object_put(rec);
	room_record_orphan(&b.pk, norm, STARTED_AT);
	same(&a, &b, "orphan", k);
	mpbuf_free(&a);
	mpbuf_free(&b);

	/* The json-c path aborted on a record whose cells are not a list. */
	rec = mpjson_unpack(raw);
	if (json_object_is_type(json_object_object_get(rec, "cells"),
	    json_type_array)) {
		mpbuf_init(&a);
		mpbuf_init(&b);
		old_omit(rec, "left out");
		mpjson_pack(&a.pk, rec);
		room_record_omit(&b.pk, norm, "left out");
		same(&a, &b, "omit", k);
		mpbuf_free(&a);
		mpbuf_free(&b);
	}
	json_object_put(rec);

	rec = mpjson_unpack(raw);
	if (orphan)
		rec = old_orphan(rec);
	json_object_array_add(runs, old_task(rec, "e", "nb"));
	json_object_put(rec);
	l = xcalloc(1, sizeof *l);
	mpbuf_init(&b);
	room_record_task(&b.pk, norm, "e", "nb", orphan);
	l->data = b.sb.data;
	l->len = b.sb.size;
	l->created_at = room_record_created_at(norm);
	lines[(*nlines)++] = l;

	msgpack_unpacked_destroy(&nu);
	mpbuf_free(&nb);
}

Test(room_record, as_json_c_did)
{
	struct json_object	*runs;
	struct room_record_line	*lines[64];
	struct mpbuf		 r, a, b;
	msgpack_unpacked	 u;
	size_t			 off, n, i;
	int			 k, round;

	for (round = 0; round < 300; round++) {
		runs = json_object_new_array();
		n = 0;
		for (k = 0; k < 64; k++) {
			mpbuf_init(&r);
			gen_clean = k % 2;
			gen_record(&r.pk);
			msgpack_unpacked_init(&u);
			off = 0;
			cr_assert_eq(msgpack_unpack_next(&u, r.sb.data,
			    r.sb.size, &off), MSGPACK_UNPACK_SUCCESS);
			both(&u.data, round * 64 + k, runs, lines, &n);
			msgpack_unpacked_destroy(&u);
			mpbuf_free(&r);
		}
		/* The list of EXEC_TASKS, sorted, ties as qsort left them. */
		json_object_array_sort(runs, old_tasks_cmp);
		mpbuf_init(&a);
		mpjson_pack(&a.pk, runs);
		qsort(lines, n, sizeof *lines, room_record_line_cmp);
		mpbuf_init(&b);
		msgpack_pack_array(&b.pk, n);
		for (i = 0; i < n; i++) {
			b.pk.callback(b.pk.data, lines[i]->data, lines[i]->len);
			free(lines[i]->data);
			free(lines[i]);
		}
		same(&a, &b, "tasks", round);
		mpbuf_free(&a);
		mpbuf_free(&b);
		json_object_put(runs);
	}
}
