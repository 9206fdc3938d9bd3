/* SPDX-License-Identifier: ISC */
/*
 * test-mpvalue.c: a JSON value kept packed (docs/decisions/101).  What
 * is kept is always the bytes mpjson_pack gives of the json-c value it
 * stands for: a merge, a delete and a value from a frame give the bytes
 * the json-c operations they replace gave, key order included.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common.h"

static void	keep_json(struct mpvalue *, const char *);
static void	pack_json(struct mpbuf *, const char *);
static void	same_as(const struct mpvalue *, struct json_object *,
		    const char *);
static void	merge_as_json_c(const char *, const struct mpbuf *,
		    const char *);

/* Keep the JSON text's value as the loader does. */
static void
keep_json(struct mpvalue *v, const char *text)
{
	struct json_object	*j;

	j = json_tokener_parse(text);
	cr_assert_not_null(j, "%s", text);
	mpvalue_set_json(v, j);
	json_object_put(j);
}

/* The JSON text's value as a frame carries it (mpjson_pack). */
static void
pack_json(struct mpbuf *b, const char *text)
{
	struct json_object	*j;

	j = json_tokener_parse(text);
	cr_assert_not_null(j, "%s", text);
	mpbuf_init(b);
	mpjson_pack(&b->pk, j);
	json_object_put(j);
}

/* v holds the bytes mpjson_pack gives of j. */
static void
same_as(const struct mpvalue *v, struct json_object *j, const char *what)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	mpjson_pack(&b.pk, j);
	cr_assert_eq(v->len, b.sb.size, "%s: %zu bytes, json-c %zu", what,
	    v->len, b.sb.size);
	cr_assert_eq(memcmp(v->ptr, b.sb.data, v->len), 0, "%s: bytes differ",
	    what);
	mpbuf_free(&b);
}

/*
 * Merge src (packed in b) into the value of text dst both ways: by
 * mpvalue_merge, and as room-nb.c did over json-c before decision 101.
 */
static void
merge_as_json_c(const char *dst, const struct mpbuf *b, const char *what)
{
	struct mpvalue		 v = { NULL, 0 };
	struct json_object	*j, *add;
	msgpack_unpacked	 u;

	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b->sb.data, b->sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	keep_json(&v, dst);
	cr_assert_eq(mpvalue_merge(&v, &u.data), 0, "%s", what);
	j = json_tokener_parse(dst);
	add = mpjson_unpack(&u.data);
	json_object_object_foreach(add, key, val) {
		if (val == NULL)
			json_object_object_del(j, key);
		else
			json_object_object_add(j, key, json_object_get(val));
	}
	json_object_put(add);
	same_as(&v, j, what);
	json_object_put(j);
	mpvalue_free(&v);
	msgpack_unpacked_destroy(&u);
}

Test(mpvalue, merge_as_json_c_did)
{
	static const struct {
		const char	*dst, *src;
	} cases[] = {
		{ "{}", "{\"a\": 1}" },
		{ "{\"a\": 1, \"b\": 2, \"c\": 3}", "{\"b\": [true]}" },
		{ "{\"a\": 1, \"b\": 2, \"c\": 3}", "{\"z\": 0, \"a\": null}" },
		{ "{\"a\": 1}", "{\"gone\": null}" },
		{ "{\"a\": {\"x\": 1.5}}", "{\"a\": {\"y\": \"\\u00e9\"}, "
		    "\"\": \"empty key\"}" },
		{ "{\"tags\": [\"t\"], \"k\": 1}", "{\"tags\": null, "
		    "\"k\": null}" },
	};
	struct mpbuf	b;
	size_t		i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pack_json(&b, cases[i].src);
		merge_as_json_c(cases[i].dst, &b, cases[i].src);
		mpbuf_free(&b);
	}
}

/* A map json-c would change is merged through json-c, as before. */
Test(mpvalue, merge_not_plain)
{
	struct mpbuf	b;

	/* A NaN (json-c: null, so deleted), bytes that are not UTF-8. */
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_key(&b.pk, "a");
	msgpack_pack_double(&b.pk, NAN);
	proto_pack_key(&b.pk, "bad");
	msgpack_pack_str(&b.pk, 2);
	msgpack_pack_str_body(&b.pk, "\xff\xfe", 2);
	proto_pack_key(&b.pk, "n");
	msgpack_pack_int(&b.pk, 3);
	merge_as_json_c("{\"a\": 1, \"b\": 2}", &b, "not plain");
	mpbuf_free(&b);
	/* A key twice: the last wins, where the first stood. */
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_int(&b.pk, "k", 1);
	proto_pack_int(&b.pk, "j", 2);
	proto_pack_int(&b.pk, "k", 3);
	merge_as_json_c("{\"z\": 0}", &b, "twice");
	mpbuf_free(&b);
}

Test(mpvalue, merge_refuses_what_is_not_a_map)
{
	struct mpvalue	 v = { NULL, 0 };
	msgpack_object	 o;

	keep_json(&v, "{\"a\": 1}");
	memset(&o, 0, sizeof o);
	o.type = MSGPACK_OBJECT_NIL;
	cr_assert_eq(mpvalue_merge(&v, &o), -1);
	o.type = MSGPACK_OBJECT_POSITIVE_INTEGER;
	cr_assert_eq(mpvalue_merge(&v, &o), -1);
	cr_assert_eq(mpvalue_merge(&v, NULL), -1);
	mpvalue_free(&v);
}

/* Deleted keys go, the others keep their order, an empty map stays. */
Test(mpvalue, del_as_json_c_did)
{
	static const char *const code[] = { "outputs", "execution_count",
	    NULL };
	struct mpvalue		 v = { NULL, 0 };
	struct json_object	*j;

	keep_json(&v, "{\"z\": 1, \"outputs\": [], \"a\": 2, "
	    "\"execution_count\": 3}");
	mpvalue_del(&v, code);
	j = json_tokener_parse("{\"z\": 1, \"a\": 2}");
	same_as(&v, j, "two of four");
	json_object_put(j);
	mpvalue_del(&v, code);
	keep_json(&v, "{\"outputs\": 1}");
	mpvalue_del(&v, code);
	j = json_object_new_object();
	same_as(&v, j, "none left");
	json_object_put(j);
	mpvalue_free(&v);
	mpvalue_del(&v, code);
	cr_assert_eq(v.len, 0);
}

/* As json_object_equal: maps in any order; numbers by type and value. */
Test(mpvalue, equal_as_json_c)
{
	static const struct {
		const char	*a, *b;
		int		 same;
	} cases[] = {
		{ "{\"a\": 1, \"b\": [1, 2]}", "{\"b\": [1, 2], \"a\": 1}", 1 },
		{ "{\"a\": 1}", "{\"a\": 1.0}", 0 },
		{ "{\"a\": 1}", "{\"a\": 1, \"b\": null}", 0 },
		{ "{\"a\": null}", "{\"b\": null}", 0 },
		{ "[1, 2]", "[2, 1]", 0 },
		{ "{\"s\": \"x\"}", "{\"s\": \"x\"}", 1 },
		{ "{}", "{}", 1 },
	};
	struct json_object	*ja, *jb;
	struct mpvalue		 a = { NULL, 0 }, b = { NULL, 0 };
	msgpack_unpacked	 ua, ub;
	size_t			 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		keep_json(&a, cases[i].a);
		keep_json(&b, cases[i].b);
		msgpack_unpacked_init(&ua);
		msgpack_unpacked_init(&ub);
		cr_assert_eq(mpvalue_equal(mpvalue_view(&a, &ua),
		    mpvalue_view(&b, &ub)), cases[i].same, "%s %s",
		    cases[i].a, cases[i].b);
		ja = json_tokener_parse(cases[i].a);
		jb = json_tokener_parse(cases[i].b);
		cr_assert_eq(json_object_equal(ja, jb), cases[i].same);
		json_object_put(ja);
		json_object_put(jb);
		msgpack_unpacked_destroy(&ua);
		msgpack_unpacked_destroy(&ub);
	}
	mpvalue_free(&a);
	mpvalue_free(&b);
}

/* A value from a frame: kept as it came when plain, else as json-c packs. */
Test(mpvalue, set_obj_keeps_what_json_c_would)
{
	struct mpvalue		 v = { NULL, 0 };
	struct json_object	*j;
	struct mpbuf		 b;
	msgpack_unpacked	 u;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_key(&b.pk, "f");
	msgpack_pack_float(&b.pk, 0.5f);
	proto_pack_str(&b.pk, "s", "ok");
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	mpvalue_set_obj(&v, &u.data);
	j = mpjson_unpack(&u.data);
	same_as(&v, j, "a float32");
	json_object_put(j);
	cr_assert_neq(v.len, b.sb.size, "a float32 is kept as a double");
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);

	pack_json(&b, "{\"tags\": [\"a\"], \"n\": -3}");
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	mpvalue_set_obj(&v, &u.data);
	cr_assert_eq(v.len, b.sb.size);
	cr_assert_eq(memcmp(v.ptr, b.sb.data, v.len), 0);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
	mpvalue_set_obj(&v, NULL);
	cr_assert_eq(v.len, 0);

	/* json-c has no NaN: it reads as null, which is absent here. */
	mpbuf_init(&b);
	msgpack_pack_double(&b.pk, NAN);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	mpvalue_set_bytes(&v, "\xa1x", 2);
	mpvalue_set_obj(&v, &u.data);
	cr_assert_eq(v.len, 0, "a NaN is kept as absent, as json-c's NULL");
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
	mpvalue_free(&v);
}
