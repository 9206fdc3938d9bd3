/* SPDX-License-Identifier: ISC */
/*
 * test-room-undo.c: the records batches leave for undo and the reverts
 * planned from them (runtimed/room-undo.c, docs/decisions/074): what a
 * record keeps, who may revert what, the conflicts that refuse a revert,
 * and that a planned revert, applied, puts the notebook back; the person
 * reverting anyone's batch (decision 085), and the last editor a batch
 * leaves on the cells it wrote (decision 084).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <event2/buffer.h>

#include "runtimed/runtimed.h"
#include "tests/runtimed/room-test.h"

/* Outputs are kept packed (decision 097): a json-c one added, put. */
static void
test_outputs_add(struct proto_outputs *o, struct json_object *j)
{
	mpjson_outputs_add(o, j);
	json_object_put(j);
}

static uint64_t	next_id;

static struct room_nb *
nb_three(void)
{
	struct room_nb		*nb;
	struct room_cell	*c;

	nb = room_nb_create();
	c = room_nb_cell_create(nb, ROOM_CELL_CODE, "a = 1", 5);
	room_nb_cell_set_id(nb, c, "aaaa", 4);
	test_outputs_add(c->outputs, json_object_new_string("out"));
	c->execution_count = 4;
	c = room_nb_cell_create(nb, ROOM_CELL_MARKDOWN, "# b", 3);
	room_nb_cell_set_id(nb, c, "bbbb", 4);
	room_test_md_set(&c->metadata, "tags", json_object_new_array());
	c = room_nb_cell_create(nb, ROOM_CELL_CODE, "c = 3", 5);
	room_nb_cell_set_id(nb, c, "cccc", 4);
	next_id = 1;
	return (nb);
}

/* Apply a batch (packed) as session did, keeping its record in u. */
static int
batch_packed(struct room_nb *nb, struct room_undo *u, const char *data,
    size_t len, const char *session, const uint64_t *reverts,
    size_t nreverts, int replay)
{
	msgpack_unpacked	 m;
	msgpack_sbuffer		 rec;
	struct room_nb_result	 res;
	struct room_nb_pending	*p;
	struct room_cell	**after, **fresh;
	char			*cause = NULL;
	const char		*code;
	size_t			 n, nfresh;
	int			 kept;

	msgpack_unpacked_init(&m);
	cr_assert_eq(msgpack_unpack_next(&m, data, len, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(room_nb_edit_prepare(nb, &m.data, replay, NULL, &res,
	    &p, &cause, &code), 0, "%s", cause);
	after = room_nb_pending_cells(p, &n);
	fresh = room_nb_pending_fresh(p, &nfresh);
	kept = room_undo_record(nb, after, n, fresh, nfresh, res.touched,
	    res.ntouched, next_id++, session, session, reverts, nreverts, 0,
	    &rec);
	if (kept) {
		cr_assert_eq(room_undo_add(u, rec.data, rec.size), 0);
		msgpack_sbuffer_destroy(&rec);
	}
	room_nb_edit_commit(nb, p);
	room_nb_result_free(&res);
	msgpack_unpacked_destroy(&m);
	return (kept);
}

/* The same, of a batch written as JSON. */
static int
batch(struct room_nb *nb, struct room_undo *u, const char *json,
    const char *session, const uint64_t *reverts, size_t nreverts,
    int replay)
{
	struct json_object	*j;
	struct mpbuf		 b;
	int			 kept;

	j = json_tokener_parse(json);
	cr_assert_not_null(j, "%s", json);
	mpbuf_init(&b);
	mpjson_pack(&b.pk, j);
	json_object_put(j);
	kept = batch_packed(nb, u, b.sb.data, b.sb.size, session, reverts,
	    nreverts, replay);
	mpbuf_free(&b);
	return (kept);
}

/* Plan session's revert and apply it; 0, or -1 with *code, *cause. */
static int
revert(struct room_nb *nb, struct room_undo *u, const char *session,
    int64_t nbatches, uint64_t id, const char **code, char **cause)
{
	msgpack_sbuffer		 ops;
	uint64_t		*reverts;
	size_t			 nreverts;
	int			 rc;

	*cause = NULL;
	msgpack_sbuffer_init(&ops);
	rc = room_undo_plan(u, nb, session, nbatches, id, &ops, &reverts,
	    &nreverts, cause, code);
	cr_assert_eq(rc == 0, ops.size > 0, "a refused revert writes nothing");
	if (rc == 0)
		batch_packed(nb, u, ops.data, ops.size, session, reverts,
		    nreverts, 1);
	msgpack_sbuffer_destroy(&ops);
	free(reverts);
	return (rc);
}

static char *
sources(struct room_nb *nb)
{
	struct evbuffer	*e = evbuffer_new();
	char		*s;
	size_t		 i;

	for (i = 0; i < nb->ncells; i++)
		evbuffer_add_printf(e, "%s%s=%.*s", i > 0 ? "|" : "",
		    nb->cells[i]->id, (int)nb->cells[i]->source_len,
		    nb->cells[i]->source);
	evbuffer_add(e, "", 1);
	s = xstrdup((char *)evbuffer_pullup(e, -1));
	evbuffer_free(e);
	return (s);
}

#define SOURCES_ARE(nb, want) do {					\
	char *got_ = sources(nb);					\
	cr_assert_str_eq(got_, want);					\
	free(got_);							\
} while (0)

Test(undo, outputs_only_leave_no_record)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();

	cr_assert_eq(batch(nb, u, "[{\"op\":\"clear_outputs\"}]", "s1", NULL,
	    0, 0), 0);
	cr_assert_eq(batch(nb, u, "[{\"op\":\"notebook_metadata\","
	    "\"metadata\":{\"x\":1}}]", "s1", NULL, 0, 0), 0);
	cr_assert_eq(room_undo_count(u), 0);
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, edits_inserts_deletes_and_moves_come_back)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	const char		*code;
	char			*cause;

	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"a = 2\","
	    "\"metadata\":{\"new\":1}},"
	    "{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"metadata\":{\"tags\":null},"
	    "\"cell_type\":\"raw\"},"
	    "{\"op\":\"delete\",\"cell_id\":\"cccc\"},"
	    "{\"op\":\"insert\",\"after\":\"TOP\",\"source\":\"new\"}]",
	    "s1", NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"move\",\"cell_ids\":[\"aaaa\"],"
	    "\"after\":\"BOTTOM\"}]", "s1", NULL, 0, 0);
	cr_assert_eq(room_undo_count(u), 2);
	cr_assert_eq(revert(nb, u, "s1", 2, 0, &code, &cause), 0, "%s", cause);
	SOURCES_ARE(nb, "aaaa=a = 1|bbbb=# b|cccc=c = 3");
	cr_assert_str_eq(room_nb_cell_type_name(nb->cells[1]), "markdown");
	cr_assert_eq(room_test_md_has(&nb->cells[1]->metadata, "tags", NULL, 0), 1);
	cr_assert_eq(room_test_md_has(&nb->cells[0]->metadata, "new", NULL, 0), 0);
	/* The revert is a batch: nothing of the session's is left to undo. */
	cr_assert_eq(revert(nb, u, "s1", 1, 0, &code, &cause), -1);
	cr_assert_str_eq(code, PROTO_E_INVALID_ARGUMENT);
	free(cause);
	/* Undoing the revert (id 3) redoes both. */
	cr_assert_eq(revert(nb, u, "s1", 0, 3, &code, &cause), 0, "%s", cause);
	cr_assert_eq(nb->ncells, 3);
	cr_assert_str_eq(nb->cells[2]->id, "aaaa");
	cr_assert_str_eq(nb->cells[2]->source, "a = 2");
	cr_assert_str_eq(nb->cells[0]->source, "new");
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, a_later_batch_of_another_refuses_naming_the_cell)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	const char		*code;
	char			*cause;

	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A1\"},"
	    "{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"source\":\"A2\"}]", "s1",
	    NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"source\":\"B2\"}]",
	    "s2", NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"cccc\",\"source\":\"A3\"}]",
	    "s1", NULL, 0, 0);
	cr_assert_eq(revert(nb, u, "s1", 2, 0, &code, &cause), -1);
	cr_assert_str_eq(code, PROTO_E_UNDO_CONFLICT);
	cr_assert(strstr(cause, "cell bbbb was changed after your batch b1 by "
	    "another client s2 (batch b2)") != NULL, "%s", cause);
	cr_assert_null(strstr(cause, "aaaa"), "%s", cause);
	free(cause);
	SOURCES_ARE(nb, "aaaa=A1|bbbb=B2|cccc=A3");
	/* Another's batch is not the session's to revert. */
	cr_assert_eq(revert(nb, u, "s1", 0, 2, &code, &cause), -1);
	cr_assert_str_eq(code, PROTO_E_INVALID_ARGUMENT);
	cr_assert(strstr(cause, "another client's") != NULL, "%s", cause);
	free(cause);
	/* Its last batch, of its own cell only, goes. */
	cr_assert_eq(revert(nb, u, "s1", 1, 0, &code, &cause), 0, "%s", cause);
	SOURCES_ARE(nb, "aaaa=A1|bbbb=B2|cccc=c = 3");
	/* s2's batch is the newest on bbbb: it may revert it. */
	cr_assert_eq(revert(nb, u, "s2", 1, 0, &code, &cause), 0, "%s", cause);
	SOURCES_ARE(nb, "aaaa=A1|bbbb=A2|cccc=c = 3");
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, a_change_outside_batches_refuses)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	const char		*code;
	char			*cause;

	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A1\"}]",
	    "s1", NULL, 0, 0);
	/* As a merge from disk does: no batch. */
	room_nb_cell_set_source(nb->cells[0], "disk", 4);
	cr_assert_eq(revert(nb, u, "s1", 1, 0, &code, &cause), -1);
	cr_assert_str_eq(code, PROTO_E_UNDO_CONFLICT);
	cr_assert(strstr(cause, "cell aaaa was changed since, outside") !=
	    NULL, "%s", cause);
	free(cause);
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, records_survive_a_pack_and_restore_and_list_says_whose)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create(), *v;
	struct json_object	*j, *b0;
	struct mpbuf		 b;
	msgpack_unpacked	 m;
	const char		*code;
	char			*cause;

	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A1\"}]",
	    "s1", NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"cccc\",\"source\":\"B\"}]",
	    "s2", NULL, 0, 0);
	mpbuf_init(&b);
	room_undo_pack(u, &b.pk);
	msgpack_unpacked_init(&m);
	cr_assert_eq(msgpack_unpack_next(&m, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	v = room_undo_create();
	room_undo_restore(v, &m.data);
	msgpack_unpacked_destroy(&m);
	mpbuf_free(&b);
	cr_assert_eq(room_undo_count(v), 2);
	cr_assert_eq(revert(nb, v, "s1", 1, 0, &code, &cause), 0, "%s", cause);
	mpbuf_init(&b);
	room_undo_list(v, "s1", 0, ROOM_UNDO_MAX, &b.pk);
	msgpack_unpacked_init(&m);
	cr_assert_eq(msgpack_unpack_next(&m, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	j = mpjson_unpack(&m.data);
	cr_assert_eq(json_object_array_length(j), 3);
	b0 = json_object_array_get_idx(j, 2);
	cr_assert_eq(json_object_get_int64(json_object_object_get(b0,
	    "batch_id")), 1);
	cr_assert_eq(json_object_get_int64(json_object_object_get(b0,
	    "undone_by")), 3);
	cr_assert(json_object_get_boolean(json_object_object_get(b0, "mine")));
	cr_assert_not(json_object_get_boolean(json_object_object_get(
	    json_object_array_get_idx(j, 1), "mine")));
	json_object_put(j);
	msgpack_unpacked_destroy(&m);
	mpbuf_free(&b);
	room_undo_free(v);
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, the_oldest_batches_go_past_the_cap)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	const char		*code;
	char			*cause, json[128];
	int			 i;

	for (i = 0; i < ROOM_UNDO_MAX + 5; i++) {
		snprintf(json, sizeof json, "[{\"op\":\"edit\",\"cell_id\":"
		    "\"aaaa\",\"source\":\"v%d\"}]", i);
		batch(nb, u, json, "s1", NULL, 0, 0);
	}
	cr_assert_eq(room_undo_count(u), ROOM_UNDO_MAX);
	cr_assert_eq(revert(nb, u, "s1", 0, 1, &code, &cause), -1);
	cr_assert(strstr(cause, "no batch b1") != NULL, "%s", cause);
	free(cause);
	cr_assert_eq(revert(nb, u, "s1", ROOM_UNDO_MAX, 0, &code, &cause), 0,
	    "%s", cause);
	SOURCES_ARE(nb, "aaaa=v4|bbbb=# b|cccc=c = 3");
	room_undo_free(u);
	room_nb_free(nb);
}

Test(undo, a_batch_of_many_cells_is_undone_whole)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	struct evbuffer		*e = evbuffer_new();
	const char		*code;
	char			*cause;
	int			 i;

	/* Many cells, inserted and changed, found in the new order. */
	evbuffer_add_printf(e, "[{\"op\":\"edit\",\"cell_id\":\"bbbb\","
	    "\"source\":\"changed\"}");
	for (i = 0; i < 40; i++)
		evbuffer_add_printf(e, ",{\"op\":\"insert\",\"after\":"
		    "\"%s\",\"source\":\"n%d\"}", i % 2 ? "TOP" : "aaaa", i);
	evbuffer_add(e, "]", 2);
	batch(nb, u, (char *)evbuffer_pullup(e, -1), "s1", NULL, 0, 0);
	evbuffer_free(e);
	cr_assert_eq(nb->ncells, 43);
	cr_assert_eq(revert(nb, u, "s1", 1, 0, &code, &cause), 0, "%s", cause);
	SOURCES_ARE(nb, "aaaa=a = 1|bbbb=# b|cccc=c = 3");
	room_undo_free(u);
	room_nb_free(nb);
}

/*
 * The person on the live page (no session) reverts anyone's batch by
 * its id; the same conflicts refuse it, naming who (decision 085).
 */
Test(undo, the_person_reverts_any_batch_by_id)
{
	struct room_nb		*nb = nb_three();
	struct room_undo	*u = room_undo_create();
	const char		*code;
	char			*cause;

	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A1\"}]",
	    "s1", NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"source\":\"B2\"}]",
	    "s2", NULL, 0, 0);
	batch(nb, u, "[{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"source\":\"B3\"}]",
	    "s3", NULL, 0, 0);
	cr_assert_eq(revert(nb, u, NULL, 0, 2, &code, &cause), -1);
	cr_assert_str_eq(code, PROTO_E_UNDO_CONFLICT);
	cr_assert(strstr(cause, "cell bbbb was changed after batch b2 by s3 "
	    "(batch b3)") != NULL, "%s", cause);
	free(cause);
	SOURCES_ARE(nb, "aaaa=A1|bbbb=B3|cccc=c = 3");
	cr_assert_eq(revert(nb, u, NULL, 0, 1, &code, &cause), 0, "%s", cause);
	SOURCES_ARE(nb, "aaaa=a = 1|bbbb=B3|cccc=c = 3");
	cr_assert_eq(revert(nb, u, NULL, 0, 1, &code, &cause), -1);
	cr_assert(strstr(cause, "undone already") != NULL, "%s", cause);
	free(cause);
	room_undo_free(u);
	room_nb_free(nb);
}

/* Apply a batch (JSON) by author by. */
static void
authored(struct room_nb *nb, const char *json, struct room_author *by)
{
	struct json_object	*j;
	struct mpbuf		 b;
	msgpack_unpacked	 m;
	struct room_nb_result	 res;
	struct room_nb_pending	*p;
	char			*cause = NULL;
	const char		*code;

	j = json_tokener_parse(json);
	mpbuf_init(&b);
	mpjson_pack(&b.pk, j);
	json_object_put(j);
	msgpack_unpacked_init(&m);
	cr_assert_eq(msgpack_unpack_next(&m, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(room_nb_edit_prepare(nb, &m.data, 0, NULL, &res, &p,
	    &cause, &code), 0, "%s", cause);
	room_nb_pending_author(nb, p, by);
	room_nb_edit_commit(nb, p);
	room_nb_result_free(&res);
	msgpack_unpacked_destroy(&m);
	mpbuf_free(&b);
}

/*
 * A batch's author is the last editor of the cells it made or whose
 * source or type it changed, not of those it moved, cleared, gave
 * metadata or set to the source they had; the version says so
 * (decision 084).
 */
Test(author, a_batch_writes_its_author_on_the_cells_it_wrote)
{
	struct room_nb		*nb = nb_three();
	struct room_author	*a = room_author_create("agent-a", "0000000a", 0);
	struct room_author	*b = room_author_create("agent-b", NULL, 0);
	struct room_cell	*c;
	char			 v0[ROOM_VERSION_LEN + 1], v1[ROOM_VERSION_LEN + 1];

	room_cell_version(room_nb_find(nb, "aaaa", NULL), v0);
	authored(nb, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A\"},"
	    "{\"op\":\"insert\",\"after\":\"TOP\",\"source\":\"new\"},"
	    "{\"op\":\"edit\",\"cell_id\":\"bbbb\",\"cell_type\":\"raw\"}]", a);
	cr_assert_eq(room_nb_find(nb, "aaaa", NULL)->by, a);
	cr_assert_eq(room_nb_find(nb, "bbbb", NULL)->by, a);
	cr_assert_eq(nb->cells[0]->by, a);
	cr_assert_null(room_nb_find(nb, "cccc", NULL)->by);
	cr_assert_eq(a->refs, 4);
	authored(nb, "[{\"op\":\"move\",\"cell_ids\":[\"aaaa\"],"
	    "\"after\":\"BOTTOM\"},{\"op\":\"edit\",\"cell_id\":\"bbbb\","
	    "\"metadata\":{\"x\":1}},{\"op\":\"edit\",\"cell_id\":\"cccc\","
	    "\"source\":\"c = 3\"},{\"op\":\"clear_outputs\"}]", b);
	cr_assert_eq(room_nb_find(nb, "aaaa", NULL)->by, a);
	cr_assert_eq(room_nb_find(nb, "bbbb", NULL)->by, a);
	cr_assert_null(room_nb_find(nb, "cccc", NULL)->by);
	c = room_nb_find(nb, "aaaa", NULL);
	room_cell_version(c, v1);
	cr_assert_str_neq(v0, v1);
	/* The same content by another: another version. */
	authored(nb, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"B\"}]",
	    b);
	authored(nb, "[{\"op\":\"edit\",\"cell_id\":\"aaaa\",\"source\":\"A\"}]",
	    b);
	c = room_nb_find(nb, "aaaa", NULL);
	cr_assert_eq(c->by, b);
	room_cell_version(c, v0);
	cr_assert_str_neq(v0, v1);
	room_author_unref(a);
	room_author_unref(b);
	room_nb_free(nb);
}
