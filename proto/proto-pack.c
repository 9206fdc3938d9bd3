/* SPDX-License-Identifier: ISC */
/*
 * proto-pack.c: building and reading msgpack map bodies by key.
 */

#include <stdlib.h>
#include <string.h>

#include "proto.h"

void
proto_pack_cstr(msgpack_packer *pk, const char *s)
{
	size_t	len = strlen(s);

	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

void
proto_pack_key(msgpack_packer *pk, const char *key)
{
	proto_pack_cstr(pk, key);
}

/* msgpack_packer's write callback of a struct proto_fill. */
int
proto_fill_write(void *data, const char *buf, size_t len)
{
	struct proto_fill	*f = data;

	if (f->p != NULL)
		memcpy(f->p + f->len, buf, len);
	f->len += len;
	return (0);
}

/* Pack key and a string value; a NULL value packs nil. */
void
proto_pack_str(msgpack_packer *pk, const char *key, const char *value)
{
	proto_pack_key(pk, key);
	if (value == NULL)
		msgpack_pack_nil(pk);
	else
		proto_pack_cstr(pk, value);
}

void
proto_pack_strn(msgpack_packer *pk, const char *key, const char *value,
    size_t len)
{
	proto_pack_key(pk, key);
	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, value, len);
}

void
proto_pack_int(msgpack_packer *pk, const char *key, int64_t value)
{
	proto_pack_key(pk, key);
	msgpack_pack_int64(pk, value);
}

void
proto_pack_uint(msgpack_packer *pk, const char *key, uint64_t value)
{
	proto_pack_key(pk, key);
	msgpack_pack_uint64(pk, value);
}

void
proto_pack_bool(msgpack_packer *pk, const char *key, int value)
{
	proto_pack_key(pk, key);
	if (value)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

void
proto_pack_nil(msgpack_packer *pk, const char *key)
{
	proto_pack_key(pk, key);
	msgpack_pack_nil(pk);
}

/* Is obj a string equal to s? */
int
proto_obj_streq(const msgpack_object *obj, const char *s)
{
	size_t	len = strlen(s);

	if (obj == NULL || obj->type != MSGPACK_OBJECT_STR)
		return (0);
	return (obj->via.str.size == len &&
	    memcmp(obj->via.str.ptr, s, len) == 0);
}

/* Value of key in a map, or NULL. */
const msgpack_object *
proto_get(const msgpack_object *map, const char *key)
{
	uint32_t	i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	for (i = 0; i < map->via.map.size; i++) {
		if (proto_obj_streq(&map->via.map.ptr[i].key, key))
			return (&map->via.map.ptr[i].val);
	}
	return (NULL);
}

/* String value of key (not NUL-terminated), or NULL if absent/not str. */
const char *
proto_get_str(const msgpack_object *map, const char *key, size_t *len)
{
	const msgpack_object	*v = proto_get(map, key);

	if (v == NULL || v->type != MSGPACK_OBJECT_STR)
		return (NULL);
	if (len != NULL)
		*len = v->via.str.size;
	return (v->via.str.ptr);
}

/* NUL-terminated copy of a string value; caller frees.  NULL if absent
 * or if the string holds a NUL. */
char *
proto_dup_str(const msgpack_object *map, const char *key)
{
	const char	*s;
	size_t		 len;
	char		*copy;

	if ((s = proto_get_str(map, key, &len)) == NULL)
		return (NULL);
	if (memchr(s, '\0', len) != NULL)
		return (NULL);
	if ((copy = malloc(len + 1)) == NULL)
		return (NULL);
	memcpy(copy, s, len);
	copy[len] = '\0';
	return (copy);
}

int
proto_get_int(const msgpack_object *map, const char *key, int64_t *value)
{
	const msgpack_object	*v = proto_get(map, key);

	if (v == NULL)
		return (-1);
	if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (v->via.u64 > INT64_MAX)
			return (-1);
		*value = (int64_t)v->via.u64;
		return (0);
	}
	if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*value = v->via.i64;
		return (0);
	}
	return (-1);
}

int
proto_get_bool(const msgpack_object *map, const char *key, int *value)
{
	const msgpack_object	*v = proto_get(map, key);

	if (v == NULL || v->type != MSGPACK_OBJECT_BOOLEAN)
		return (-1);
	*value = v->via.boolean;
	return (0);
}

const msgpack_object *
proto_get_map(const msgpack_object *map, const char *key)
{
	const msgpack_object	*v = proto_get(map, key);

	return (v != NULL && v->type == MSGPACK_OBJECT_MAP ? v : NULL);
}

const msgpack_object *
proto_get_array(const msgpack_object *map, const char *key)
{
	const msgpack_object	*v = proto_get(map, key);

	return (v != NULL && v->type == MSGPACK_OBJECT_ARRAY ? v : NULL);
}
