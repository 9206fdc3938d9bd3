/* SPDX-License-Identifier: ISC */
/*
 * test-room-cell.c: a cell as packed and its version (docs/decisions/
 * 037, 101).  The version is the SHA-256 of the fields as packed; a pack
 * with the version kept gives the bytes (and has_out) a fresh one gives;
 * every setter of room-nb.c and every kind of edit drops the version.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <openssl/evp.h>

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

/* The same, the version dropped first: what the cell is now. */
static char *
fresh_bytes(struct room_cell *c, int read, size_t *len)
{
	room_cell_touch(c);
	return (read_bytes(c, read, len));
}

/* A read and a snapshot at a kept version equal a fresh pack. */
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

/*
 * The version is the first hex digits of the SHA-256 of the fields as a
 * snapshot packs them (decision 023), kept values and all.
 */
static void
version_is_sha256(struct room_cell *c)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen, i;
	char			*bytes, want[ROOM_VERSION_LEN + 1];
	size_t			 len;

	bytes = read_bytes(c, 0, &len);
	/* Fewer than 16 fields: a one-byte map header. */
	cr_assert_eq((unsigned char)bytes[0] & 0xf0, 0x80);
	cr_assert_eq(EVP_Digest(bytes + 1, len - 1, md, &mdlen, EVP_sha256(),
	    NULL), 1);
	for (i = 0; i < ROOM_VERSION_LEN / 2; i++) {
		want[2 * i] = hex[md[i] >> 4];
		want[2 * i + 1] = hex[md[i] & 0xf];
	}
	want[ROOM_VERSION_LEN] = '\0';
	cr_assert_str_eq(c->version, want, "cell %s", c->id);
	free(bytes);
}

Test(cache, hit_equals_fresh_pack)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c;
	char			 v[ROOM_VERSION_LEN + 1];
	size_t			 i;

	for (i = 0; i < nb->ncells; i++) {
		c = nb->cells[i];
		cr_assert_eq(c->version[0], '\0');
		version_is_sha256(c);
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
	version_is_sha256(c);
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
	cr_assert_eq(c->version[0], '\0', "%s kept the version", what);	\
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
		/* Every cell at a kept version, then the edit. */
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

/* Set c's source to len bytes of ch. */
static void
set_filled(struct room_cell *c, int ch, size_t len)
{
	char	*s = xmalloc(len);

	memset(s, ch, len);
	room_nb_cell_set_source(c, s, len);
	free(s);
}

/* A big cell packs and hashes as a small one (no cap since 101). */
Test(cache, big_cell)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1];

	set_filled(c, 'x', 200 * 1024);
	md_set(&c->metadata, "big", json_object_new_string_len(
	    c->source, 100 * 1024));
	room_cell_version(c, v);
	version_is_sha256(c);
	same_as_fresh(c, "big");
	room_nb_free(nb);
}

/* The version is kept until a change says so (room_cell_touch). */
Test(cache, version_kept_until_touch)
{
	struct room_nb		*nb = nb_cells();
	struct room_cell	*c = nb->cells[0];
	char			 v[ROOM_VERSION_LEN + 1], w[ROOM_VERSION_LEN + 1];

	room_cell_version(c, v);
	test_outputs_add(c->outputs, json_object_new_string("missed"));
	room_cell_version(c, w);
	cr_assert_str_eq(v, w);
	room_cell_touch(c);
	room_cell_version(c, w);
	cr_assert_str_neq(v, w);
	room_nb_free(nb);
}
