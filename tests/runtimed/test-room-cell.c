/* SPDX-License-Identifier: ISC */
/*
 * test-room-cell.c: the cache of a cell as packed (docs/decisions/037).
 * A hit gives the bytes (and has_out) a fresh pack gives; every setter
 * of room-nb.c and every kind of edit drops it; a cell too big keeps
 * only its version; and the self-check (RUNTIMED_CHECK_CELL_CACHE=1)
 * ends the process on a change that missed room_cell_touch.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "runtimed/runtimed.h"

/* A kept map's key set to a json-c value (taken). */
static void
md_set(struct mpvalue *m, const char *key, struct json_object *v)
{
	struct json_object	*j;

	if ((j = mpvalue_json(m)) == NULL)
		j = json_object_new_object();
	json_object_object_add(j, key, v);
	mpvalue_set_json(m, j);
	json_object_put(j);
}

/* Outputs are kept packed (decision 097): a json-c one added, put. */
static void
test_outputs_add(struct proto_outputs *o, struct json_object *j)
{
	mpjson_outputs_add(o, j);
	json_object_put(j);
}

/* A packed list of a json-c array's outputs (the array put). */
static struct proto_outputs *
test_outputs(struct json_object *arr)
{
	struct proto_outputs	*o = room_nb_outputs_new();

	mpjson_outputs_pack(o, arr);
	json_object_put(arr);
	return (o);
}

static struct room_nb	*nb_cells(void);
static char	*read_bytes(struct room_cell *, int, size_t *);
static char	*fresh_bytes(struct room_cell *, int, size_t *);
static void	same_as_fresh(struct room_cell *, const char *);
static void	edit_one(struct room_nb *, const char *, const char *,
		    const char *);

/* A code cell with outputs, a markdown cell with attachments, an unknown. */
static struct room_nb *
nb_cells(void)
{
	struct room_nb		*nb;
	struct room_cell	*c;
	struct json_object	*o;

	nb = room_nb_create();
	c = room_nb_cell_create(nb, ROOM_CELL_CODE, "print(1)", 8);
	room_nb_cell_set_id(nb, c, "code", 4);
	o = json_object_new_object();
	json_object_object_add(o, "output_type", json_object_new_string(
	    "stream"));
	json_object_object_add(o, "name", json_object_new_string("stdout"));
	json_object_object_add(o, "text", json_object_new_string("1\n"));
	test_outputs_add(c->outputs, o);
	room_nb_cell_set_count(c, 3);
	c = room_nb_cell_create(nb, ROOM_CELL_MARKDOWN, "![a](attachment:a)",
	    18);
	room_nb_cell_set_id(nb, c, "md", 2);
	md_set(&c->attachments, "a", json_object_new_object());
	c = room_nb_cell_create(nb, ROOM_CELL_RAW, "", 0);
	room_nb_cell_set_id(nb, c, "odd", 3);
	room_nb_cell_set_type_name(c, "future", 6);
	md_set(&c->extra, "source", json_object_new_int(7));
	c->flags |= ROOM_CELL_NO_SOURCE;
	return (nb);
}

/* The cell as a read (or, read 0, the snapshot) packs it. */
static char *
read_bytes(struct room_cell *c, int read, size_t *len)
{
	msgpack_sbuffer	 sb;
	msgpack_packer	 pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (read)
		room_cell_pack_read(&pk, c, ROOM_STALE_SOURCE, NULL);
	else
		room_cell_pack(&pk, c);
	*len = sb.size;
	return (msgpack_sbuffer_release(&sb));
}

/* The same, the cache dropped first: what the cell is now. */
static char *
fresh_bytes(struct room_cell *c, int read, size_t *len)
{
	room_cell_touch(c);
	return (read_bytes(c, read, len));
}

/* A read and a snapshot from the cache equal a fresh pack. */
static void
same_as_fresh(struct room_cell *c, const char *what)
{
	char	*hit, *fresh;
	size_t	 hlen, flen;
	int	 read, out;

	for (read = 0; read < 2; read++) {
		cr_assert_neq(c->version[0], '\0', "%s: not cached", what);
		out = room_cell_has_out(c);
		hit = read_bytes(c, read, &hlen);
		fresh = fresh_bytes(c, read, &flen);
		cr_assert_eq(out, room_cell_has_out(c), "%s: has_out", what);
		cr_assert_eq(hlen, flen, "%s: %zu bytes, fresh %zu", what,
		    hlen, flen);
		cr_assert_eq(memcmp(hit, fresh, hlen), 0, "%s: bytes differ",
		    what);
		free(hit);
		free(fresh);
	}
}

/* One edit op on cell id with one string field, applied. */
static void
edit_one(struct room_nb *nb, const char *op, const char *id,
    const char *json)
{
	struct room_nb_result	 res;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	struct json_object	*j;
	char			*cause = NULL;
	const char		*code;

	j = json_tokener_parse(json);
	cr_assert_not_null(j);
	json_object_object_add(j, "op", json_object_new_string(op));
	if (id != NULL)
		json_object_object_add(j, "cell_id", json_object_new_string(id));
	mpbuf_init(&b);
	msgpack_pack_array(&b.pk, 1);
	mpjson_pack(&b.pk, j);
	json_object_put(j);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(room_nb_edit(nb, &u.data, 0, NULL, &res, &cause, &code),
	    0, "%s: %s", op, cause);
	room_nb_result_free(&res);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
}

Test(cache, hit_equals_fresh_pack)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c;
	char			 v[ROOM_VERSION_LEN + 1];
	char			*bytes;
	size_t			 i, len;

	for (i = 0; i < nb->ncells; i++) {
		c = nb->cells[i];
		cr_assert_eq(c->version[0], '\0');
		/* The first read fills the cache with what it wrote. */
		bytes = read_bytes(c, 1, &len);
		cr_assert_not_null(c->packed);
		cr_assert_lt(c->packed_len, len);
		cr_assert_eq(memcmp(bytes + 1, c->packed, c->packed_len), 0);
		free(bytes);
		same_as_fresh(c, c->id);
		room_cell_version(c, v);
		cr_assert_str_eq(v, c->version);
	}
	room_nb_free(nb);
}

/* A version asked first fills the cache as a read would. */
Test(cache, version_first)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1];

	room_cell_version(c, v);
	cr_assert_not_null(c->packed);
	same_as_fresh(c, "version first");
	room_cell_version(c, v);
	cr_assert_str_eq(v, c->version);
	room_nb_free(nb);
}

/* Each setter drops the cache; the next read is the cell as it is. */
Test(cache, setters_invalidate)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0], *u = nb->cells[2];
	char			 v[ROOM_VERSION_LEN + 1];
	char			 seen[8][ROOM_VERSION_LEN + 1];
	size_t			 i, j, n = 0;

#define STEP(what, change) do {						\
	room_cell_version(c, v);					\
	change;								\
	cr_assert_eq(c->version[0], '\0', "%s kept the cache", what);	\
	cr_assert_null(c->packed, "%s kept the bytes", what);		\
	room_cell_version(c, seen[n++]);				\
	same_as_fresh(c, what);						\
} while (0)
	room_cell_version(c, seen[n++]);
	STEP("set_source", room_nb_cell_set_source(c, "x\0y", 3));
	STEP("set_count", room_nb_cell_set_count(c, 9));
	STEP("set_outputs", room_nb_cell_set_outputs(c,
	    room_nb_outputs_new()));
	room_nb_cell_set_outputs(c, test_outputs(json_tokener_parse("[1]")));
	STEP("clear_outputs", room_nb_clear_outputs(c));
	STEP("set_id", room_nb_cell_set_id(nb, c, "code2", 5));
	STEP("set_type_name", room_nb_cell_set_type_name(c, "raw", 3));
	STEP("touch", (md_set(&c->metadata, "k", json_object_new_int(1)),
	    room_cell_touch(c)));
#undef STEP
	/* set_outputs and clear_outputs both leave [] here. */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!(i == 3 && j == 4))
				cr_assert_str_neq(seen[i], seen[j], "%zu %zu",
				    i, j);

	room_cell_version(u, v);
	room_nb_cell_set_type_name(u, "code", 4);
	cr_assert_eq(u->version[0], '\0');

	/* has_out follows the count and the outputs through the cache. */
	room_nb_cell_set_count(u, -1);
	room_cell_version(u, v);
	cr_assert_eq(room_cell_has_out(u), 0);
	room_nb_cell_set_outputs(u, test_outputs(json_tokener_parse("[{}]")));
	cr_assert_eq(room_cell_has_out(u), 1);
	room_cell_version(u, v);
	cr_assert_eq(room_cell_has_out(u), 1);
	room_nb_clear_outputs(u);
	room_cell_version(u, v);
	cr_assert_eq(room_cell_has_out(u), 0);
	room_nb_cell_set_count(u, 1);
	cr_assert_eq(room_cell_has_out(u), 1);
	room_nb_free(nb);
}

/* Every kind of edit gives the edited cell a version read afresh. */
Test(cache, edits_invalidate)
{
	static const struct {
		const char	*op, *id, *json;
	} edits[] = {
		{ "edit", "code", "{\"source\": \"print(2)\"}" },
		{ "edit", "code", "{\"metadata\": {\"tags\": [\"t\"]}}" },
		{ "edit", "code", "{\"metadata\": {\"comments\": [{\"by\": "
		    "\"a\", \"text\": \"hi\"}]}}" },
		{ "replace", "code", "{\"old_text\": \"2\", \"new_text\": "
		    "\"3\"}" },
		{ "clear_outputs", NULL, "{}" },
		{ "edit", "code", "{\"cell_type\": \"markdown\"}" },
		{ "edit", "odd", "{\"cell_type\": \"code\", \"source\": "
		    "\"1\"}" },
		{ "edit", "md", "{\"source\": \"text\"}" },
	};
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c;
	char			 before[ROOM_VERSION_LEN + 1];
	char			 after[ROOM_VERSION_LEN + 1];
	size_t			 i, k;

	for (i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		/* Every cell cached, then the edit. */
		for (k = 0; k < nb->ncells; k++)
			room_cell_version(nb->cells[k], after);
		c = room_nb_find(nb, edits[i].id != NULL ? edits[i].id :
		    "code", NULL);
		room_cell_version(c, before);
		edit_one(nb, edits[i].op, edits[i].id, edits[i].json);
		c = room_nb_find(nb, edits[i].id != NULL ? edits[i].id :
		    "code", NULL);
		cr_assert_not_null(c);
		room_cell_version(c, after);
		cr_assert_str_neq(before, after, "edit %zu kept the version",
		    i);
		for (k = 0; k < nb->ncells; k++)
			same_as_fresh(nb->cells[k], edits[i].op);
	}
	room_nb_free(nb);
}

/* A cell over ROOM_CELL_CACHE_MAX keeps its version, not its bytes. */
/* Set c's source to len bytes of ch. */
static void
set_filled(struct room_cell *c, int ch, size_t len)
{
	char	*s = xmalloc(len);

	memset(s, ch, len);
	room_nb_cell_set_source(c, s, len);
	free(s);
}

Test(cache, big_cell_keeps_version_only)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1];
	size_t			 len = ROOM_CELL_CACHE_MAX + 1;

	set_filled(c, 'x', len);
	room_cell_version(c, v);
	cr_assert_null(c->packed);
	cr_assert_str_eq(v, c->version);
	same_as_fresh(c, "big");
	/* Just under the cap is kept whole. */
	room_nb_cell_set_source(c, "", 0);
	room_cell_version(c, v);
	len = ROOM_CELL_CACHE_MAX - c->packed_len - 8;
	set_filled(c, 'y', len);
	room_cell_version(c, v);
	cr_assert_not_null(c->packed);
	cr_assert_leq(c->packed_len, ROOM_CELL_CACHE_MAX);
	same_as_fresh(c, "under the cap");
	room_nb_free(nb);
}

static void
check_on(void)
{
	setenv("RUNTIMED_CHECK_CELL_CACHE", "1", 1);
}

/*
 * The notebook the fatal exit leaves behind, held where LeakSanitizer
 * looks (a global), so an ASan build exits 1 as the test expects.
 */
static struct room_nb *volatile check_nb;	/* a store kept */

/* The self-check: a change in place without room_cell_touch is fatal. */
Test(cache, check_catches_a_missed_touch, .init = check_on, .exit_code = 1)
{
	struct room_nb		*nb = check_nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1];

	room_cell_version(c, v);
	room_cell_version(c, v);	/* a checked hit: no change, no exit */
	test_outputs_add(c->outputs, json_object_new_string("missed"));
	room_cell_version(c, v);
	cr_assert_fail("the missed touch went unnoticed");
}

/* Without the variable a hit is not checked (and so is cheap). */
Test(cache, unchecked_hit_is_the_cache)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1], w[ROOM_VERSION_LEN + 1];

	unsetenv("RUNTIMED_CHECK_CELL_CACHE");
	room_cell_version(c, v);
	test_outputs_add(c->outputs, json_object_new_string("missed"));
	room_cell_version(c, w);
	cr_assert_str_eq(v, w);
	room_cell_touch(c);
	room_cell_version(c, w);
	cr_assert_str_neq(v, w);
	room_nb_free(nb);
}
