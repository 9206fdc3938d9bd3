/* SPDX-License-Identifier: ISC */
/*
 * mpvalue.c: one JSON value kept as msgpack, exactly the bytes mpjson_pack
 * writes of its json-c form (docs/decisions/101), so a daemon cell's
 * metadata, attachments and kept keys pack by a copy and hash to the
 * versions they always had.  A value from a frame is kept as it came when
 * json-c would not change it (mpjson_plain), else taken through json-c.
 * Absent (len 0) packs as nil, as mpjson_pack(NULL) did.
 */

#include <stdlib.h>
#include <string.h>

#include "common.h"

void
mpvalue_free(struct mpvalue *v)
{
	free(v->ptr);
	v->ptr = NULL;
	v->len = 0;
}

/* Keep a json-c value (NULL: absent), sized by a pass that copies nothing. */
void
mpvalue_set_json(struct mpvalue *v, struct json_object *j)
{
	struct proto_fill	f = { NULL, 0 };
	msgpack_packer		pk;
	size_t			len;

	mpvalue_free(v);
	if (j == NULL)
		return;
	msgpack_packer_init(&pk, &f, proto_fill_write);
	mpjson_pack(&pk, j);
	len = f.len;
	f.p = xmalloc(len);
	f.len = 0;
	mpjson_pack(&pk, j);
	if (f.len != len)
		fatalx("%s: a value packed to %zu bytes, then %zu", __func__,
		    len, f.len);
	v->ptr = f.p;
	v->len = len;
}

/*
 * Keep a msgpack value (nil or NULL: absent): as it is when plain, else as
 * json-c would keep it.
 */
void
mpvalue_set_obj(struct mpvalue *v, const msgpack_object *o)
{
	struct proto_fill	 f = { NULL, 0 };
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	size_t			 len;

	if (o == NULL || o->type == MSGPACK_OBJECT_NIL) {
		mpvalue_free(v);
		return;
	}
	if (!mpjson_plain(o, 0)) {
		/* As json-c keeps it (decision 104); nil there is absent. */
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		mpjson_repack(&pk, o, 0);
		if (sb.size == 1 && (unsigned char)sb.data[0] == 0xc0)
			mpvalue_free(v);
		else
			mpvalue_set_bytes(v, sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
		return;
	}
	mpvalue_free(v);
	msgpack_packer_init(&pk, &f, proto_fill_write);
	msgpack_pack_object(&pk, *o);
	len = f.len;
	f.p = xmalloc(len);
	f.len = 0;
	msgpack_pack_object(&pk, *o);
	v->ptr = f.p;
	v->len = len;
}

/* Keep len bytes already of the kept form (one value; 0: absent). */
void
mpvalue_set_bytes(struct mpvalue *v, const char *buf, size_t len)
{
	mpvalue_free(v);
	if (len == 0)
		return;
	v->ptr = xmalloc(len);
	memcpy(v->ptr, buf, len);
	v->len = len;
}

void
mpvalue_copy(struct mpvalue *dst, const struct mpvalue *src)
{
	mpvalue_set_bytes(dst, src->ptr, src->len);
}

/* The value's bytes, or nil when absent. */
void
mpvalue_pack(msgpack_packer *pk, const struct mpvalue *v)
{
	if (v->len == 0)
		msgpack_pack_nil(pk);
	else
		pk->callback(pk->data, v->ptr, v->len);
}

/* A view of the value (u holds it), or NULL when absent. */
const msgpack_object *
mpvalue_view(const struct mpvalue *v, msgpack_unpacked *u)
{
	size_t	off = 0;

	if (v->len == 0)
		return (NULL);
	if (msgpack_unpack_next(u, v->ptr, v->len, &off) !=
	    MSGPACK_UNPACK_SUCCESS || off != v->len)
		fatalx("%s: a value kept cannot be read", __func__);
	return (&u->data);
}

/* The value as json-c (a new reference; NULL when absent or null). */
struct json_object *
mpvalue_json(const struct mpvalue *v)
{
	struct json_object	*j;
	msgpack_unpacked	 u;
	const msgpack_object	*o;

	if (v->len == 0)
		return (NULL);
	msgpack_unpacked_init(&u);
	o = mpvalue_view(v, &u);
	j = mpjson_unpack(o);
	msgpack_unpacked_destroy(&u);
	return (j);
}

/* The value of map m's key (a string), or NULL. */
const msgpack_object *
mpvalue_get(const msgpack_object *m, const msgpack_object *key)
{
	const msgpack_object	*k;
	uint32_t		 i;

	if (m == NULL || m->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	for (i = 0; i < m->via.map.size; i++) {
		k = &m->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR &&
		    k->via.str.size == key->via.str.size &&
		    (k->via.str.size == 0 || memcmp(k->via.str.ptr,
		    key->via.str.ptr, k->via.str.size) == 0))
			return (&m->via.map.ptr[i].val);
	}
	return (NULL);
}

/*
 * Shallow-merge map src into the value (a map; absent is empty): a key
 * src gives nil is deleted, one the value has is replaced where it is,
 * a new one goes at the end, as json_object_object_add did.  -1 if src
 * is not a map.
 */
int
mpvalue_merge(struct mpvalue *v, const msgpack_object *src)
{
	struct proto_fill	 f = { NULL, 0 };
	struct json_object	*dst, *add;
	msgpack_unpacked	 u;
	msgpack_packer		 pk;
	const msgpack_object	*have, *val;
	msgpack_object		 none;
	size_t			 n, len = 0;
	uint32_t		 i;
	int			 pass;

	if (src == NULL || src->type != MSGPACK_OBJECT_MAP)
		return (-1);
	if (!mpjson_plain(src, 0)) {
		/* What json-c would change of it: through json-c. */
		if ((dst = mpvalue_json(v)) == NULL)
			dst = json_object_new_object();
		add = mpjson_unpack(src);
		json_object_object_foreach(add, key, aval) {
			if (aval == NULL)
				json_object_object_del(dst, key);
			else
				json_object_object_add(dst, key,
				    json_object_get(aval));
		}
		json_object_put(add);
		mpvalue_set_json(v, dst);
		json_object_put(dst);
		return (0);
	}
	msgpack_unpacked_init(&u);
	if ((have = mpvalue_view(v, &u)) == NULL ||
	    have->type != MSGPACK_OBJECT_MAP) {
		memset(&none, 0, sizeof none);
		none.type = MSGPACK_OBJECT_MAP;
		have = &none;
	}
	n = 0;
	for (i = 0; i < have->via.map.size; i++) {
		val = mpvalue_get(src, &have->via.map.ptr[i].key);
		n += val == NULL || val->type != MSGPACK_OBJECT_NIL;
	}
	for (i = 0; i < src->via.map.size; i++) {
		n += mpvalue_get(have, &src->via.map.ptr[i].key) == NULL &&
		    src->via.map.ptr[i].val.type != MSGPACK_OBJECT_NIL;
	}
	msgpack_packer_init(&pk, &f, proto_fill_write);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			len = f.len;
			f.p = xmalloc(len);
			f.len = 0;
		}
		msgpack_pack_map(&pk, n);
		for (i = 0; i < have->via.map.size; i++) {
			val = mpvalue_get(src, &have->via.map.ptr[i].key);
			if (val != NULL && val->type == MSGPACK_OBJECT_NIL)
				continue;
			msgpack_pack_object(&pk, have->via.map.ptr[i].key);
			msgpack_pack_object(&pk, val != NULL ? *val :
			    have->via.map.ptr[i].val);
		}
		for (i = 0; i < src->via.map.size; i++) {
			if (mpvalue_get(have, &src->via.map.ptr[i].key) !=
			    NULL || src->via.map.ptr[i].val.type ==
			    MSGPACK_OBJECT_NIL)
				continue;
			msgpack_pack_object(&pk, src->via.map.ptr[i].key);
			msgpack_pack_object(&pk, src->via.map.ptr[i].val);
		}
	}
	msgpack_unpacked_destroy(&u);
	free(v->ptr);
	v->ptr = f.p;
	v->len = len;
	return (0);
}

/*
 * Delete keys (NULL-terminated) from the value when it is a map, as
 * json_object_object_del did: the others keep their order, and a map
 * left empty stays.
 */
void
mpvalue_del(struct mpvalue *v, const char *const *keys)
{
	struct proto_map_set	 set[PROTO_MAP_SET_MAX];
	struct proto_fill	 f = { NULL, 0 };
	msgpack_unpacked	 u;
	msgpack_packer		 pk;
	const msgpack_object	*m;
	size_t			 n, len, found = 0;

	msgpack_unpacked_init(&u);
	if ((m = mpvalue_view(v, &u)) == NULL ||
	    m->type != MSGPACK_OBJECT_MAP) {
		msgpack_unpacked_destroy(&u);
		return;
	}
	/* A set with neither bytes nor a callback drops its key. */
	memset(set, 0, sizeof set);
	for (n = 0; keys[n] != NULL; n++) {
		if (n == PROTO_MAP_SET_MAX)
			fatalx("%s: more than %d keys", __func__,
			    PROTO_MAP_SET_MAX);
		set[n].key = keys[n];
		found += proto_get(m, keys[n]) != NULL;
	}
	if (found == 0) {
		msgpack_unpacked_destroy(&u);
		return;
	}
	msgpack_packer_init(&pk, &f, proto_fill_write);
	proto_map_copy(&pk, m, set, n, NULL, NULL);
	len = f.len;
	f.p = xmalloc(len);
	f.len = 0;
	proto_map_copy(&pk, m, set, n, NULL, NULL);
	msgpack_unpacked_destroy(&u);
	free(v->ptr);
	v->ptr = f.p;
	v->len = len;
}

/*
 * Are two kept values equal as json_object_equal says of their json-c
 * forms: maps whatever their keys' order, numbers by type and value?
 * NULL is JSON null.
 */
int
mpvalue_equal(const msgpack_object *a, const msgpack_object *b)
{
	const msgpack_object	*bv;
	uint32_t		 i;
	int			 na, nb;

	na = a == NULL || a->type == MSGPACK_OBJECT_NIL;
	nb = b == NULL || b->type == MSGPACK_OBJECT_NIL;
	if (na || nb)
		return (na && nb);
	if (a->type != b->type)
		return (0);
	switch (a->type) {
	case MSGPACK_OBJECT_BOOLEAN:
		return (a->via.boolean == b->via.boolean);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return (a->via.u64 == b->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return (a->via.i64 == b->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return (a->via.f64 == b->via.f64);
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BIN:
		return (a->via.str.size == b->via.str.size &&
		    (a->via.str.size == 0 || memcmp(a->via.str.ptr,
		    b->via.str.ptr, a->via.str.size) == 0));
	case MSGPACK_OBJECT_EXT:
		return (a->via.ext.type == b->via.ext.type &&
		    a->via.ext.size == b->via.ext.size &&
		    (a->via.ext.size == 0 || memcmp(a->via.ext.ptr,
		    b->via.ext.ptr, a->via.ext.size) == 0));
	case MSGPACK_OBJECT_ARRAY:
		if (a->via.array.size != b->via.array.size)
			return (0);
		for (i = 0; i < a->via.array.size; i++) {
			if (!mpvalue_equal(&a->via.array.ptr[i],
			    &b->via.array.ptr[i]))
				return (0);
		}
		return (1);
	case MSGPACK_OBJECT_MAP:
		if (a->via.map.size != b->via.map.size)
			return (0);
		for (i = 0; i < a->via.map.size; i++) {
			if (a->via.map.ptr[i].key.type != MSGPACK_OBJECT_STR ||
			    (bv = mpvalue_get(b, &a->via.map.ptr[i].key)) ==
			    NULL || !mpvalue_equal(&a->via.map.ptr[i].val, bv))
				return (0);
		}
		return (1);
	default:
		return (0);
	}
}
