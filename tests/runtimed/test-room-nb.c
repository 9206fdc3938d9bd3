/* SPDX-License-Identifier: ISC */
/*
 * test-room-nb.c: the atomic edit batch and each op of its table (replace
 * and index references with their refusals).  Edits are built as msgpack,
 * exactly as they arrive in ROOM_EDIT.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "runtimed/runtimed.h"
#include "tests/runtimed/room-test.h"

/* Outputs are kept packed (decision 097): a json-c one added, put. */
static void
test_outputs_add(struct proto_outputs *o, struct json_object *j)
{
	mpjson_outputs_add(o, j);
	json_object_put(j);
}

struct edit_batch {
	struct mpbuf		b;
	msgpack_unpacked	u;
	int			unpacked;
};

static void	batch_begin(struct edit_batch *, size_t);
static const msgpack_object	*batch_end(struct edit_batch *);
static void	batch_free(struct edit_batch *);
static struct room_nb	*nb_three(void);
static char	*nb_dump(struct room_nb *);
static int	apply(struct room_nb *, const msgpack_object *, char ***,
		    size_t *, int *, const char **);
static void	ids_free(char **, size_t);
static struct room_nb	*nb_unknown(void);
static void	refused(struct room_nb *, const msgpack_object *, int,
		    const char *, const char *);
static void	pack_replace(struct edit_batch *, const char *, const char *,
		    const char *);

static void
batch_begin(struct edit_batch *e, size_t n)
{
	memset(e, 0, sizeof *e);
	mpbuf_init(&e->b);
	msgpack_pack_array(&e->b.pk, n);
}

static const msgpack_object *
batch_end(struct edit_batch *e)
{
	msgpack_unpacked_init(&e->u);
	cr_assert_eq(msgpack_unpack_next(&e->u, e->b.sb.data, e->b.sb.size,
	    NULL), MSGPACK_UNPACK_SUCCESS);
	e->unpacked = 1;
	return (&e->u.data);
}

static void
batch_free(struct edit_batch *e)
{
	if (e->unpacked)
		msgpack_unpacked_destroy(&e->u);
	mpbuf_free(&e->b);
}

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
	c = room_nb_cell_create(nb, ROOM_CELL_CODE, "c = 3", 5);
	room_nb_cell_set_id(nb, c, "cccc", 4);
	room_test_md_set(&c->metadata, "keep", json_object_new_int(1));
	return (nb);
}

static char *
nb_dump(struct room_nb *nb)
{
	size_t	len;

	return (room_ipynb_write_dump(nb, &len));
}

static int
apply(struct room_nb *nb, const msgpack_object *edits, char ***ids,
    size_t *n, int *index, const char **code)
{
	struct room_nb_result	 res;
	char			*cause = NULL;
	int			 rc;

	rc = room_nb_edit(nb, edits, 0, NULL, &res, &cause, code);
	free(cause);
	*index = res.index;
	*ids = res.ids;
	*n = res.nids;
	res.ids = NULL;
	res.nids = 0;
	room_nb_result_free(&res);
	return (rc);
}

static void
ids_free(char **ids, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

Test(edit, batch_applies_in_order)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids;
	size_t			 n;
	int			 index;
	char			 str[16];
	const char		*code;

	batch_begin(&e, 5);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "TOP");
	proto_pack_str(&e.b.pk, "source", "first");
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "bbbb");
	proto_pack_str(&e.b.pk, "cell_type", "markdown");
	proto_pack_str(&e.b.pk, "source", "after b");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "source", "a = 10");
	proto_pack_key(&e.b.pk, "metadata");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "tag", "x");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "BOTTOM");
	proto_pack_str(&e.b.pk, "source", "last");

	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_eq(n, 5);
	cr_assert_eq(nb->ncells, 5);
	cr_assert_str_eq(nb->cells[0]->source, "first");
	cr_assert_str_eq(nb->cells[0]->id, ids[0]);
	cr_assert_eq(strlen(ids[0]), 8);
	cr_assert_str_eq(nb->cells[1]->id, "aaaa");
	cr_assert_str_eq(nb->cells[1]->source, "a = 10");
	/* Editing source keeps outputs and execution_count. */
	cr_assert_eq(nb->cells[1]->outputs->n, 1);
	cr_assert_eq(nb->cells[1]->execution_count, 4);
	cr_assert_eq(room_test_md_has(&nb->cells[1]->metadata, "tag", str, sizeof str),
	    1);
	cr_assert_str_eq(str, "x");
	cr_assert_str_eq(nb->cells[2]->id, "bbbb");
	cr_assert_str_eq(nb->cells[3]->source, "after b");
	cr_assert_eq(nb->cells[3]->type, ROOM_CELL_MARKDOWN);
	cr_assert_null(nb->cells[3]->outputs);
	cr_assert_str_eq(nb->cells[4]->source, "last");
	cr_assert_str_eq(ids[2], "cccc");
	cr_assert_null(room_nb_find(nb, "cccc", NULL));
	cr_assert_str_neq(ids[0], ids[1]);
	ids_free(ids, n);
	batch_free(&e);
	room_nb_free(nb);
}

/* A failing edit anywhere in the batch leaves every cell as it was. */
Test(edit, failed_batch_changes_nothing)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids = NULL, *before, *after;
	size_t			 n = 0;
	int			 index;
	const char		*code;

	before = nb_dump(nb);
	batch_begin(&e, 4);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "cell_type", "markdown");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "cccc");
	proto_pack_str(&e.b.pk, "source", "new");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");	/* deleted above */
	proto_pack_str(&e.b.pk, "source", "x");

	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_eq(index, 3);
	cr_assert_str_eq(code, "cell_not_found");
	after = nb_dump(nb);
	cr_assert_str_eq(before, after);
	cr_assert_eq(nb->ncells, 3);
	cr_assert_eq(nb->cells[0]->type, ROOM_CELL_CODE);
	cr_assert_eq(nb->cells[0]->outputs->n, 1);
	free(before);
	free(after);
	batch_free(&e);
	room_nb_free(nb);
}

Test(edit, invalid_arguments)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids = NULL, *before, *after;
	size_t			 n = 0;
	int			 index;
	const char		*code;

	before = nb_dump(nb);

	/* Empty list. */
	batch_begin(&e, 0);
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_str_eq(code, "invalid_argument");
	batch_free(&e);

	/* Unknown op second. */
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "source", "ok");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "op", "explode");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_eq(index, 1);
	cr_assert_str_eq(code, "invalid_argument");
	batch_free(&e);

	/* Bad cell_type, bad UTF-8, metadata not a map. */
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "cell_type", "python");
	proto_pack_str(&e.b.pk, "source", "x");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_eq(index, 0);
	batch_free(&e);
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_strn(&e.b.pk, "source", "\xed\xa0\x80", 3);
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_str_eq(code, "invalid_argument");
	batch_free(&e);
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "metadata", "nope");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), -1);
	cr_assert_str_eq(code, "invalid_argument");
	batch_free(&e);

	after = nb_dump(nb);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	room_nb_free(nb);
}

/* NUL in source survives; an index reference works; type change. */
Test(edit, nul_index_and_type)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids;
	size_t			 n;
	int			 index;
	const char		*code;

	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_key(&e.b.pk, "cell_id");
	msgpack_pack_uint32(&e.b.pk, 0);
	proto_pack_strn(&e.b.pk, "source", "a\0b", 3);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");
	proto_pack_str(&e.b.pk, "cell_type", "code");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_eq(nb->cells[0]->source_len, 3);
	cr_assert_eq(memcmp(nb->cells[0]->source, "a\0b", 3), 0);
	cr_assert_eq(nb->cells[1]->type, ROOM_CELL_CODE);
	cr_assert_not_null(nb->cells[1]->outputs);
	cr_assert_eq(nb->cells[1]->execution_count, -1);
	ids_free(ids, n);
	batch_free(&e);
	room_nb_free(nb);
}

/* A notebook with a cell of an unknown type carrying its own keys. */
static struct room_nb *
nb_unknown(void)
{
	const char	*s = "{\"cells\": [{\"cell_type\": \"widget\", "
	    "\"id\": \"wwww\", \"metadata\": {\"w\": 1}, \"source\": \"s\", "
	    "\"state\": [1]}, {\"cell_type\": \"markdown\", \"id\": \"mmmm\", "
	    "\"metadata\": {}, \"outputs\": [\"stray\"], \"source\": \"m\"}], "
	    "\"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 6}";
	struct room_nb	*nb;
	char		*cause = NULL;

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "%s", cause);
	return (nb);
}

/* An unknown cell: no partial edit; replaced whole, moved, deleted. */
Test(edit, unknown_type_whole_only)
{
	struct room_nb		*nb = nb_unknown();
	struct edit_batch	 e;
	struct room_cell	*c;
	char			**ids = NULL, *before, *after;
	size_t			 n = 0;
	int			 index, i;
	const char		*code;

	before = nb_dump(nb);
	for (i = 0; i < 3; i++) {
		batch_begin(&e, 1);
		msgpack_pack_map(&e.b.pk, 3);
		proto_pack_str(&e.b.pk, "op", "edit");
		proto_pack_str(&e.b.pk, "cell_id", "wwww");
		if (i == 0)
			proto_pack_str(&e.b.pk, "source", "x");
		else if (i == 1)
			proto_pack_str(&e.b.pk, "cell_type", "code");
		else {
			proto_pack_key(&e.b.pk, "metadata");
			msgpack_pack_map(&e.b.pk, 0);
		}
		cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index,
		    &code), -1, "partial edit %d applied", i);
		cr_assert_str_eq(code, "invalid_argument");
		batch_free(&e);
	}
	after = nb_dump(nb);
	cr_assert_str_eq(before, after, "a refused edit changed the notebook");
	free(after);

	/* Whole: type and source given; nothing of the old cell stays. */
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "wwww");
	proto_pack_str(&e.b.pk, "cell_type", "code");
	proto_pack_str(&e.b.pk, "source", "x = 1");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "mmmm");
	proto_pack_str(&e.b.pk, "cell_type", "code");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	ids_free(ids, n);
	batch_free(&e);
	c = nb->cells[0];
	cr_assert_eq(c->type, ROOM_CELL_CODE);
	cr_assert_null(c->type_name);
	cr_assert_eq(c->extra.len, 0);
	cr_assert_eq(c->metadata.len, 1, "metadata is {}");
	cr_assert_str_eq(c->source, "x = 1");
	/* The markdown cell's stray outputs do not become real ones. */
	c = nb->cells[1];
	cr_assert_eq(c->outputs->n, 0);
	cr_assert_neq(room_test_md_has(&c->extra, "outputs", NULL, 0), 1);
	free(before);
	room_nb_free(nb);

	/* Move and delete need nothing of the type. */
	nb = nb_unknown();
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	msgpack_pack_str_with_body(&e.b.pk, "wwww", 4);
	proto_pack_str(&e.b.pk, "after", "BOTTOM");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "wwww");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	ids_free(ids, n);
	batch_free(&e);
	cr_assert_eq(nb->ncells, 1);
	room_nb_free(nb);
}

/* A clone (a batch's scratch copy) keeps the type and the kept keys. */
Test(edit, unknown_type_survives_other_edits)
{
	struct room_nb		*nb = nb_unknown();
	struct edit_batch	 e;
	char			**ids = NULL, *before, *after;
	size_t			 n = 0;
	int			 index;
	const char		*code;

	before = nb_dump(nb);
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "clear_outputs");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	msgpack_pack_str_with_body(&e.b.pk, "wwww", 4);
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	ids_free(ids, n);
	batch_free(&e);
	after = nb_dump(nb);
	cr_assert_str_eq(before, after);
	cr_assert_not_null(strstr(after, "\"state\": [\n    1\n   ]"));
	free(before);
	free(after);
	room_nb_free(nb);
}

/*
 * A batch prepared and then dropped (its journal commit failed) leaves
 * the notebook exactly as it was: the same cells, sources, outputs and
 * metadata; committing the same batch afterwards applies it once.
 */
Test(edit, prepared_then_aborted_changes_nothing)
{
	struct room_nb		*nb = nb_three();
	struct room_nb_result	 res;
	struct room_nb_pending	*p;
	struct room_cell	*cells[3];
	struct edit_batch	 e;
	const msgpack_object	*edits;
	char			*before, *after, *cause = NULL;
	const char		*code;
	size_t			 i, j;

	for (i = 0; i < 3; i++)
		cells[i] = nb->cells[i];
	before = nb_dump(nb);
	batch_begin(&e, 5);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "source", "new");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	proto_pack_key(&e.b.pk, "metadata");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "keep", "changed");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "clear_outputs");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	proto_pack_cstr(&e.b.pk, "aaaa");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "notebook_metadata");
	proto_pack_key(&e.b.pk, "metadata");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "x", "y");
	edits = batch_end(&e);

	cr_assert_eq(room_nb_edit_prepare(nb, edits, 0, NULL, &res, &p,
	    &cause, &code), 0, "%s", cause);
	room_nb_result_free(&res);
	room_nb_edit_abort(nb, p);
	after = nb_dump(nb);
	cr_assert_str_eq(after, before);
	cr_assert_eq(nb->ncells, 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(nb->cells[i], cells[i]);
		cr_assert_eq(room_nb_find(nb, cells[i]->id, &j), cells[i]);
		cr_assert_eq(j, i);
	}
	free(after);

	cr_assert_eq(room_nb_edit_prepare(nb, edits, 0, NULL, &res, &p,
	    &cause, &code), 0, "%s", cause);
	room_nb_result_free(&res);
	room_nb_edit_commit(nb, p);
	cr_assert_eq(nb->ncells, 3);
	cr_assert_str_eq(nb->cells[2]->source, "new");
	cr_assert_eq(nb->cells[0]->outputs->n, 0);
	/* The index follows: copies and inserts found, the deleted not. */
	for (i = 0; i < 3; i++) {
		cr_assert_eq(room_nb_find(nb, nb->cells[i]->id, &j),
		    nb->cells[i]);
		cr_assert_eq(j, i);
	}
	cr_assert_null(room_nb_find(nb, "bbbb", NULL));
	free(before);
	batch_free(&e);
	room_nb_free(nb);
}

/* Inserts after one another, moves and deletes in one long batch. */
Test(edit, long_batch_keeps_order)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids, *dump;
	size_t			 n;
	int			 index, i;
	const char		*code;

	/* 300 inserts each after the previous one, then move aaaa last. */
	batch_begin(&e, 302);
	for (i = 0; i < 300; i++) {
		char	src[16];

		snprintf(src, sizeof src, "s%d", i);
		msgpack_pack_map(&e.b.pk, 3);
		proto_pack_str(&e.b.pk, "op", "insert");
		proto_pack_str(&e.b.pk, "after", i == 0 ? "TOP" : "BOTTOM");
		proto_pack_str(&e.b.pk, "source", src);
	}
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_str(&e.b.pk, "after", "BOTTOM");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	proto_pack_cstr(&e.b.pk, "aaaa");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_int(&e.b.pk, "cell_id", 1);	/* bbbb, by start index */
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_eq(nb->ncells, 302);
	cr_assert_str_eq(nb->cells[0]->source, "s0");
	cr_assert_str_eq(nb->cells[1]->source, "c = 3");
	cr_assert_str_eq(nb->cells[2]->source, "s1");
	cr_assert_str_eq(nb->cells[300]->source, "s299");
	cr_assert_str_eq(nb->cells[301]->id, "aaaa");
	for (i = 0; i < 302; i++)
		cr_assert_eq(room_nb_find(nb, nb->cells[i]->id, NULL),
		    nb->cells[i], "ids are not unique");
	dump = nb_dump(nb);
	free(dump);
	ids_free(ids, n);
	batch_free(&e);
	room_nb_free(nb);
}

/*
 * The notebook's id index follows every commit: after each of many
 * batches of inserts, edits (copies), moves and deletes, each cell is
 * found by its id at its place and no deleted id is found.  10,000
 * cells and 1600 deletes take the index through its growth into a new
 * table over more than one commit.
 */
Test(edit, id_index_follows_many_batches)
{
	struct room_nb		*nb = room_nb_create();
	struct room_nb_result	 res;
	struct edit_batch	 e;
	const msgpack_object	*edits;
	struct room_cell	*c;
	char			*cause = NULL, **gone, src[32];
	const char		*code;
	size_t			 round, i, j, n, ndel, ngone = 0;
	int			 moving = 0;

	gone = xcalloc(80 * 20, sizeof *gone);
	for (round = 0; round < 80; round++) {
		n = nb->ncells;
		ndel = 0;
		for (j = round % 5; j < n && ndel < 20; j += 5)
			ndel++;
		batch_begin(&e, 150 + (n > 1 ? 2 : 0) + ndel);
		for (i = 0; i < 150; i++) {
			snprintf(src, sizeof src, "r%zu i%zu", round, i);
			msgpack_pack_map(&e.b.pk, 3);
			proto_pack_str(&e.b.pk, "op", "insert");
			proto_pack_key(&e.b.pk, "after");
			if (n == 0)
				msgpack_pack_str_with_body(&e.b.pk, "BOTTOM", 6);
			else
				msgpack_pack_uint64(&e.b.pk, (i * 7) % n);
			proto_pack_str(&e.b.pk, "source", src);
		}
		if (n > 1) {
			msgpack_pack_map(&e.b.pk, 3);
			proto_pack_str(&e.b.pk, "op", "edit");
			proto_pack_key(&e.b.pk, "cell_id");
			msgpack_pack_uint64(&e.b.pk, round % 5);
			proto_pack_str(&e.b.pk, "source", "edited");
			msgpack_pack_map(&e.b.pk, 3);
			proto_pack_str(&e.b.pk, "op", "move");
			proto_pack_str(&e.b.pk, "after", "TOP");
			proto_pack_key(&e.b.pk, "cell_ids");
			msgpack_pack_array(&e.b.pk, 1);
			msgpack_pack_uint64(&e.b.pk, n - 1);
		}
		ndel = 0;
		for (j = round % 5; j < n && ndel < 20; j += 5) {
			gone[ngone++] = xstrdup(nb->cells[j]->id);
			msgpack_pack_map(&e.b.pk, 2);
			proto_pack_str(&e.b.pk, "op", "delete");
			proto_pack_key(&e.b.pk, "cell_id");
			msgpack_pack_uint64(&e.b.pk, j);
			ndel++;
		}
		edits = batch_end(&e);
		cr_assert_eq(room_nb_edit(nb, edits, 0, NULL, &res, &cause,
		    &code), 0, "round %zu: %s", round, cause);
		room_nb_result_free(&res);
		batch_free(&e);
		cr_assert_eq(nb->ncells, n + 150 - ndel);
		moving |= nb->ids_old != NULL;
		for (i = 0; i < nb->ncells; i++) {
			cr_assert_eq(room_nb_find(nb, nb->cells[i]->id, &j),
			    nb->cells[i], "round %zu cell %zu", round, i);
			cr_assert_eq(j, i, "round %zu cell %zu", round, i);
		}
		/*
		 * A deleted id finds nothing, or a live cell where it is: ids
		 * are unique among live cells only, so a later insert may
		 * mint a deleted one again (1 in 2^32 each).
		 */
		for (i = 0; i < ngone; i++) {
			c = room_nb_find(nb, gone[i], &j);
			cr_assert(c == NULL || (j < nb->ncells &&
			    nb->cells[j] == c), "round %zu: deleted %s found",
			    round, gone[i]);
		}
	}
	cr_assert_gt(nb->ncells, 10000);
	cr_assert(moving, "the index never grew into a new table");
	for (i = 0; i < ngone; i++)
		free(gone[i]);
	free(gone);
	room_nb_free(nb);
}

/*
 * The ops, one handler each in room-nb.c's table.  A refusal changes
 * nothing, names the failing edit (index and "edit N: ") and says what
 * was wrong.
 */
static void
refused(struct room_nb *nb, const msgpack_object *edits, int want_index,
    const char *want_code, const char *want_text)
{
	struct room_nb_result	 res;
	char			*before, *after, *cause = NULL;
	const char		*code;

	before = nb_dump(nb);
	cr_assert_eq(room_nb_edit(nb, edits, 0, NULL, &res, &cause, &code), -1,
	    "applied; wanted %s", want_code);
	cr_assert_eq(res.index, want_index, "index %d: %s", res.index, cause);
	cr_assert_str_eq(code, want_code, "%s", cause);
	cr_assert_not_null(strstr(cause, want_text), "\"%s\" lacks \"%s\"",
	    cause, want_text);
	if (want_index >= 0) {
		char	pfx[32];

		snprintf(pfx, sizeof pfx, "edit %d: ", want_index);
		cr_assert_eq(strncmp(cause, pfx, strlen(pfx)), 0, "%s", cause);
	}
	after = nb_dump(nb);
	cr_assert_str_eq(before, after, "a refused batch changed the notebook");
	room_nb_result_free(&res);
	free(cause);
	free(before);
	free(after);
}

static void
pack_replace(struct edit_batch *e, const char *id, const char *old,
    const char *new)
{
	msgpack_pack_map(&e->b.pk, 4);
	proto_pack_str(&e->b.pk, "op", "replace");
	proto_pack_str(&e->b.pk, "cell_id", id);
	proto_pack_str(&e->b.pk, "old_text", old);
	proto_pack_str(&e->b.pk, "new_text", new);
}

/* Every op of the table in one batch, and the batch as journalled. */
Test(ops, every_op_in_one_batch)
{
	struct room_nb		*nb = nb_three();
	struct room_nb_result	 res;
	struct edit_batch	 e;
	struct mpbuf		 j;
	msgpack_unpacked	 u;
	const msgpack_object	*rec;
	char			*cause = NULL, str[16];
	const char		*code, *src;
	size_t			 len;

	batch_begin(&e, 7);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "TOP");
	proto_pack_str(&e.b.pk, "source", "top");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "source", "a = 1\nb = 2");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");
	pack_replace(&e, "aaaa", "b = 2", "b = 20");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_str(&e.b.pk, "after", "TOP");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	proto_pack_cstr(&e.b.pk, "cccc");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "op", "clear_outputs");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "notebook_metadata");
	proto_pack_key(&e.b.pk, "metadata");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "k", "v");

	mpbuf_init(&j);
	cr_assert_eq(room_nb_edit(nb, batch_end(&e), 0, &j.pk, &res, &cause,
	    &code), 0, "%s", cause);
	cr_assert_eq(res.nids, 7);
	cr_assert_str_eq(res.ids[1], "aaaa");
	cr_assert_str_eq(res.ids[2], "bbbb");
	cr_assert_str_eq(res.ids[3], "aaaa");
	cr_assert_str_eq(res.ids[4], "cccc");
	cr_assert_str_eq(res.ids[5], "cccc");	/* first code cell now */
	cr_assert_null(res.ids[6]);
	cr_assert_eq(res.kinds, ROOM_CHANGE_CELLS | ROOM_CHANGE_OUTPUTS |
	    ROOM_CHANGE_METADATA);
	cr_assert_eq(nb->ncells, 3);
	cr_assert_str_eq(nb->cells[0]->id, "cccc");
	cr_assert_str_eq(nb->cells[1]->source, "top");
	cr_assert_str_eq(nb->cells[2]->source, "a = 1\nb = 20");
	cr_assert_eq(nb->cells[2]->outputs->n, 0);
	cr_assert_eq(room_test_md_has(&nb->metadata, "k", str, sizeof str), 1);
	cr_assert_str_eq(str, "v");

	/* The journal holds replace as the edit it made. */
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, j.sb.data, j.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(u.data.via.array.size, 7);
	rec = &u.data.via.array.ptr[3];
	cr_assert(proto_obj_streq(proto_get(rec, "op"), "edit"));
	cr_assert(proto_obj_streq(proto_get(rec, "cell_id"), "aaaa"));
	src = proto_get_str(rec, "source", &len);
	cr_assert_not_null(src);
	cr_assert_eq(len, strlen("a = 1\nb = 20"));
	cr_assert_eq(memcmp(src, "a = 1\nb = 20", len), 0);
	cr_assert_null(proto_get(rec, "old_text"));
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&j);
	room_nb_result_free(&res);
	batch_free(&e);
	room_nb_free(nb);
}

/*
 * The journal a batch leaves (its edits as applied, packed by the edit
 * codec), replayed onto the notebook as it was, gives the same notebook;
 * so do entries an older daemon wrote, keys in its order (insert's
 * after before cell_id, edit's cell_type last).
 */
Test(ops, journal_replays)
{
	struct room_nb		*nb = nb_three(), *again = nb_three();
	struct room_nb_result	 res;
	struct edit_batch	 e;
	struct mpbuf		 j;
	msgpack_unpacked	 u;
	char			*cause = NULL, *want, *got;
	const char		*code;

	batch_begin(&e, 6);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "TOP");
	proto_pack_str(&e.b.pk, "source", "top");
	msgpack_pack_map(&e.b.pk, 5);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "bbbb");
	proto_pack_str(&e.b.pk, "cell_type", "raw");
	proto_pack_str(&e.b.pk, "source", "r");
	proto_pack_key(&e.b.pk, "metadata");
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_int(&e.b.pk, "n", 1);
	pack_replace(&e, "aaaa", "= 1", "= 10");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_key(&e.b.pk, "after");
	msgpack_pack_uint8(&e.b.pk, 2);		/* an index: cccc */
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	msgpack_pack_uint8(&e.b.pk, 0);		/* aaaa */
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "op", "clear_outputs");
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	mpbuf_init(&j);
	cr_assert_eq(room_nb_edit(nb, batch_end(&e), 0, &j.pk, &res, &cause,
	    &code), 0, "%s", cause);
	room_nb_result_free(&res);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, j.sb.data, j.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(room_nb_edit(again, &u.data, 1, NULL, &res, &cause,
	    &code), 0, "%s", cause);
	room_nb_result_free(&res);
	want = nb_dump(nb);
	got = nb_dump(again);
	cr_assert_str_eq(got, want);
	free(want);
	free(got);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&j);
	batch_free(&e);
	room_nb_free(again);

	/* As the daemon wrote them before the codec packed them. */
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 5);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "aaaa");
	proto_pack_str(&e.b.pk, "cell_id", "old1");
	proto_pack_str(&e.b.pk, "cell_type", "markdown");
	proto_pack_str(&e.b.pk, "source", "old");
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "old1");
	proto_pack_str(&e.b.pk, "source", "older");
	proto_pack_str(&e.b.pk, "cell_type", "raw");
	again = nb_three();
	cr_assert_eq(room_nb_edit(again, batch_end(&e), 1, NULL, &res, &cause,
	    &code), 0, "%s", cause);
	room_nb_result_free(&res);
	cr_assert_eq(again->ncells, 4);
	cr_assert_str_eq(again->cells[1]->id, "old1");
	cr_assert_str_eq(again->cells[1]->source, "older");
	cr_assert_eq(again->cells[1]->type, ROOM_CELL_RAW);
	batch_free(&e);
	room_nb_free(again);
	room_nb_free(nb);
}

/* replace sees the batch's earlier edits; its refusals. */
Test(ops, replace)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids;
	size_t			 n;
	int			 index;
	const char		*code;

	/* Two replaces of one cell, the second on the first's result. */
	batch_begin(&e, 2);
	pack_replace(&e, "aaaa", "= 1", "= 10");
	pack_replace(&e, "aaaa", "a = 10", "x = 10");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_str_eq(nb->cells[0]->source, "x = 10");
	/* Outputs and execution_count stay, as with an edit of source. */
	cr_assert_eq(nb->cells[0]->outputs->n, 1);
	cr_assert_eq(nb->cells[0]->execution_count, 4);
	ids_free(ids, n);
	batch_free(&e);

	/* NUL in the source and in the text: bytes, not C strings. */
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	proto_pack_strn(&e.b.pk, "source", "p\0q\0r", 5);
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "replace");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	proto_pack_strn(&e.b.pk, "old_text", "\0r", 2);
	proto_pack_strn(&e.b.pk, "new_text", "\0s\0", 3);
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_eq(nb->cells[2]->source_len, 6);
	cr_assert_eq(memcmp(nb->cells[2]->source, "p\0q\0s\0", 6), 0);
	ids_free(ids, n);
	batch_free(&e);

	/* An edit earlier in the batch removed the text: nothing applies. */
	batch_begin(&e, 3);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "source", "new");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "source", "y = 1");
	pack_replace(&e, "aaaa", "x = 10", "z");
	refused(nb, batch_end(&e), 2, "no_match",
	    "old_text occurs nowhere in cell aaaa; read the cell");
	batch_free(&e);

	/* Overlapping occurrences count: "xx" is twice in "xxx". */
	batch_begin(&e, 2);
	pack_replace(&e, "bbbb", "#", "##");
	pack_replace(&e, "bbbb", "#", "x");
	refused(nb, batch_end(&e), 1, "ambiguous_match",
	    "more than once in cell bbbb; include more surrounding text");
	batch_free(&e);

	batch_begin(&e, 1);
	pack_replace(&e, "aaaa", "", "z");
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "old_text must not be empty");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "replace");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "old_text", "x");
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "replace needs new_text");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "replace");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "old_text", "x");
	proto_pack_int(&e.b.pk, "new_text", 7);
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "old_text and new_text must be strings");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "replace");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "old_text", "x");
	proto_pack_strn(&e.b.pk, "new_text", "\xed\xa0\x80", 3);
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "new_text is not valid UTF-8");
	batch_free(&e);

	batch_begin(&e, 1);
	pack_replace(&e, "gone", "x", "y");
	refused(nb, batch_end(&e), 0, "cell_not_found", "no cell gone");
	batch_free(&e);
	room_nb_free(nb);

	/* A cell of a type runtimed does not know is replaced whole only. */
	nb = nb_unknown();
	batch_begin(&e, 1);
	pack_replace(&e, "wwww", "s", "t");
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "cell wwww is of type \"widget\"");
	batch_free(&e);
	room_nb_free(nb);
}

/* Index references: the cell at the start of the batch, else typed. */
Test(ops, index_references)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	char			**ids;
	size_t			 n;
	int			 index;
	const char		*code;

	/* After an insert at TOP, index 0 is still aaaa, not the new cell. */
	batch_begin(&e, 3);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "TOP");
	proto_pack_str(&e.b.pk, "source", "new");
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "replace");
	proto_pack_int(&e.b.pk, "cell_id", 0);
	proto_pack_str(&e.b.pk, "old_text", "a = 1");
	proto_pack_str(&e.b.pk, "new_text", "a = 2");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_int(&e.b.pk, "after", 2);
	proto_pack_str(&e.b.pk, "source", "after c");
	cr_assert_eq(apply(nb, batch_end(&e), &ids, &n, &index, &code), 0);
	cr_assert_str_eq(ids[1], "aaaa");
	cr_assert_str_eq(nb->cells[1]->source, "a = 2");
	cr_assert_str_eq(nb->cells[4]->source, "after c");
	ids_free(ids, n);
	batch_free(&e);

	/* Now 5 cells: index 5 is past the end. */
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_int(&e.b.pk, "cell_id", 5);
	refused(nb, batch_end(&e), 0, "cell_not_found",
	    "cell index 5 is out of range (5 cells)");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_int(&e.b.pk, "cell_id", -1);
	proto_pack_str(&e.b.pk, "source", "x");
	refused(nb, batch_end(&e), 0, "cell_not_found",
	    "cell index -1 is out of range");
	batch_free(&e);

	/* Deleted earlier in the batch, by index and by id. */
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_int(&e.b.pk, "cell_id", 1);
	proto_pack_str(&e.b.pk, "source", "x");
	refused(nb, batch_end(&e), 1, "cell_not_found",
	    "cell index 1 (cell aaaa) was deleted by an earlier edit");
	batch_free(&e);

	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	pack_replace(&e, "aaaa", "a", "b");
	refused(nb, batch_end(&e), 1, "cell_not_found",
	    "cell aaaa was deleted by an earlier edit of this batch");
	batch_free(&e);

	/* Not a reference at all. */
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "");
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "a cell_id must not be empty");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_bool(&e.b.pk, "cell_id", 1);
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "a cell reference is a cell_id string or a zero-based index");
	batch_free(&e);

	/* In a list, the entry is named. */
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 2);
	msgpack_pack_uint32(&e.b.pk, 0);
	msgpack_pack_uint32(&e.b.pk, 9);
	refused(nb, batch_end(&e), 0, "cell_not_found",
	    "cell_ids[1]: cell index 9 is out of range (5 cells)");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "clear_outputs");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	proto_pack_cstr(&e.b.pk, "nope");
	refused(nb, batch_end(&e), 0, "cell_not_found",
	    "cell_ids[0]: no cell nope in this notebook");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "insert");
	proto_pack_str(&e.b.pk, "after", "nope");
	proto_pack_str(&e.b.pk, "source", "x");
	refused(nb, batch_end(&e), 0, "cell_not_found",
	    "after: no cell nope in this notebook");
	batch_free(&e);
	room_nb_free(nb);
}

/* What the table says each op needs; an unknown op lists the ops. */
Test(ops, needed_fields)
{
	static const char *const	 ops[][2] = {
		{ "edit", "edit needs cell_id" },
		{ "delete", "delete needs cell_id" },
		{ "replace", "replace needs cell_id" },
		{ "move", "move needs cell_ids" },
		{ "notebook_metadata", "notebook_metadata needs metadata" },
		{ "explode", "unknown op \"explode\" (insert, edit, delete, "
		    "replace, move" },
	};
	struct room_nb			*nb = nb_three();
	struct edit_batch		 e;
	size_t				 i;

	for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		batch_begin(&e, 2);
		msgpack_pack_map(&e.b.pk, 2);
		proto_pack_str(&e.b.pk, "op", "insert");
		proto_pack_str(&e.b.pk, "source", "first");
		msgpack_pack_map(&e.b.pk, 2);
		proto_pack_str(&e.b.pk, "op", ops[i][0]);
		proto_pack_nil(&e.b.pk, "cell_id");
		refused(nb, batch_end(&e), 1, "invalid_argument", ops[i][1]);
		batch_free(&e);
	}
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 1);
	proto_pack_str(&e.b.pk, "source", "x");
	refused(nb, batch_end(&e), 0, "invalid_argument", "op is missing");
	batch_free(&e);
	batch_begin(&e, 1);
	msgpack_pack_str_with_body(&e.b.pk, "insert", 6);
	refused(nb, batch_end(&e), 0, "invalid_argument", "an edit is a map");
	batch_free(&e);
	room_nb_free(nb);
}

/* room_nb_ref, EXEC_RUN's resolver: ids and indexes of the notebook. */
Test(ops, ref_outside_a_batch)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;
	const msgpack_object	*refs;
	const char		*code;
	char			*cause = NULL;

	batch_begin(&e, 4);
	proto_pack_cstr(&e.b.pk, "cccc");
	msgpack_pack_uint32(&e.b.pk, 1);
	msgpack_pack_uint32(&e.b.pk, 3);
	proto_pack_cstr(&e.b.pk, "zz");
	refs = batch_end(&e);
	cr_assert_eq(room_nb_ref(nb, &refs->via.array.ptr[0], "", &cause,
	    &code), nb->cells[2]);
	cr_assert_eq(room_nb_ref(nb, &refs->via.array.ptr[1], "", &cause,
	    &code), nb->cells[1]);
	cr_assert_null(room_nb_ref(nb, &refs->via.array.ptr[2],
	    "cell_ids[2]: ", &cause, &code));
	cr_assert_str_eq(code, "cell_not_found");
	cr_assert_str_eq(cause, "cell_ids[2]: cell index 3 is out of range "
	    "(3 cells)");
	free(cause);
	cr_assert_null(room_nb_ref(nb, &refs->via.array.ptr[3], "", &cause,
	    &code));
	cr_assert_str_eq(code, "cell_not_found");
	cr_assert_not_null(strstr(cause, "no cell zz in this notebook"));
	free(cause);
	batch_free(&e);
	room_nb_free(nb);
}

/* A move naming a cell twice, or after a cell it moves. */
Test(ops, move_refusals)
{
	struct room_nb		*nb = nb_three();
	struct edit_batch	 e;

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 2);
	proto_pack_cstr(&e.b.pk, "aaaa");
	msgpack_pack_uint32(&e.b.pk, 0);
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "cell aaaa named twice");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_key(&e.b.pk, "cell_ids");
	msgpack_pack_array(&e.b.pk, 1);
	proto_pack_cstr(&e.b.pk, "bbbb");
	proto_pack_int(&e.b.pk, "after", 1);
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "cannot move a cell after itself");
	batch_free(&e);

	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 2);
	proto_pack_str(&e.b.pk, "op", "move");
	proto_pack_str(&e.b.pk, "cell_ids", "aaaa");
	refused(nb, batch_end(&e), 0, "invalid_argument",
	    "cell_ids must be a non-empty list");
	batch_free(&e);
	room_nb_free(nb);
}

/* A cell's version: same content, same version; any change, another. */
Test(version, changes_with_every_part)
{
	struct room_nb		*nb = nb_three();
	struct room_cell	*c = nb->cells[0], *copy;
	char			 v0[ROOM_VERSION_LEN + 1];
	char			 v[ROOM_VERSION_LEN + 1];
	char			 seen[8][ROOM_VERSION_LEN + 1];
	size_t			 i, j, n = 0;

	room_cell_version(c, v0);
	cr_assert_eq(strlen(v0), ROOM_VERSION_LEN);
	cr_assert_eq(strspn(v0, "0123456789abcdef"), ROOM_VERSION_LEN);
	/* Another cell of the same content has the same version. */
	copy = room_nb_cell_create(nb, ROOM_CELL_CODE, "a = 1", 5);
	room_nb_cell_set_id(nb, copy, "aaaa", 4);
	test_outputs_add(copy->outputs, json_object_new_string("out"));
	copy->execution_count = 4;
	room_cell_version(copy, v);
	cr_assert_str_eq(v, v0);
	memcpy(seen[n++], v0, sizeof v0);

	/* Changed through the setters, or touched after a change in place. */
	room_nb_cell_set_source(c, "a = 2", 5);
	room_cell_version(c, seen[n++]);
	room_test_md_set(&c->metadata, "tags", json_object_new_array());
	room_cell_touch(c);
	room_cell_version(c, seen[n++]);
	test_outputs_add(c->outputs, json_object_new_string("more"));
	room_cell_touch(c);
	room_cell_version(c, seen[n++]);
	room_nb_cell_set_count(c, 5);
	room_cell_version(c, seen[n++]);
	c->type = ROOM_CELL_RAW;
	room_cell_touch(c);
	room_cell_version(c, seen[n++]);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			cr_assert_str_neq(seen[i], seen[j], "%zu %zu", i, j);
	/* Back to what it was: the version it had. */
	c->type = ROOM_CELL_CODE;
	room_nb_cell_set_count(c, 4);
	proto_outputs_truncate(c->outputs, 1);
	room_test_md_set(&c->metadata, "tags", NULL);
	room_nb_cell_set_source(c, "a = 1", 5);
	room_cell_version(c, v);
	cr_assert_str_eq(v, v0);
	room_nb_free(nb);
}

/* expect_version: a mismatch refuses the batch with the cell as it is. */
Test(version, expect_version_guards_the_batch)
{
	struct room_nb		*nb = nb_three();
	struct room_nb_result	 res;
	struct edit_batch	 e;
	char			 v[ROOM_VERSION_LEN + 1], *cause = NULL;
	char			*before, *after;
	const char		*code;
	const msgpack_object	*edits;

	room_cell_version(nb->cells[2], v);
	before = nb_dump(nb);
	batch_begin(&e, 2);
	msgpack_pack_map(&e.b.pk, 3);
	proto_pack_str(&e.b.pk, "op", "delete");
	proto_pack_str(&e.b.pk, "cell_id", "aaaa");
	proto_pack_str(&e.b.pk, "expect_version", "00000000");
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	proto_pack_str(&e.b.pk, "source", "c = 4");
	proto_pack_str(&e.b.pk, "expect_version", v);
	cr_assert_eq(room_nb_edit(nb, batch_end(&e), 0, NULL, &res, &cause,
	    &code), -1);
	cr_assert_str_eq(code, "edit_conflict");
	cr_assert_eq(res.index, 0);
	cr_assert_str_eq(res.conflict_id, "aaaa");
	room_cell_version(nb->cells[0], v);
	cr_assert_str_eq(res.conflict_version, v);
	cr_assert_str_eq(res.conflict_source, "a = 1");
	after = nb_dump(nb);
	cr_assert_str_eq(before, after);
	free(after);
	free(cause);
	cause = NULL;
	room_nb_result_free(&res);
	batch_free(&e);

	/* The right version lets the same edit through; replay ignores it. */
	room_cell_version(nb->cells[2], v);
	batch_begin(&e, 1);
	msgpack_pack_map(&e.b.pk, 4);
	proto_pack_str(&e.b.pk, "op", "edit");
	proto_pack_str(&e.b.pk, "cell_id", "cccc");
	proto_pack_str(&e.b.pk, "source", "c = 4");
	proto_pack_str(&e.b.pk, "expect_version", v);
	edits = batch_end(&e);
	cr_assert_eq(room_nb_edit(nb, edits, 0, NULL, &res, &cause, &code), 0,
	    "%s", cause);
	cr_assert_str_eq(nb->cells[2]->source, "c = 4");
	room_nb_result_free(&res);
	cr_assert_eq(room_nb_edit(nb, edits, 1, NULL, &res, &cause, &code), 0,
	    "replay checks no version");
	room_nb_result_free(&res);
	batch_free(&e);
	free(before);
	room_nb_free(nb);
}
