/*
 * mpjson.c: JSON (json-c) <-> msgpack, one to one, so nbformat objects and
 * MCP values cross frames as structured maps.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Pack a json-c value; NULL packs nil. */
void
mpjson_pack(msgpack_packer *pk, struct json_object *j)
{
	struct json_object_iterator	 it, end;
	const char			*s;
	size_t				 i, n;

	switch (json_object_get_type(j)) {
	case json_type_null:
		msgpack_pack_nil(pk);
		break;
	case json_type_boolean:
		if (json_object_get_boolean(j))
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		break;
	case json_type_double:
		msgpack_pack_double(pk, json_object_get_double(j));
		break;
	case json_type_int:
		if (json_object_get_int64(j) == INT64_MAX &&
		    json_object_get_uint64(j) > (uint64_t)INT64_MAX)
			msgpack_pack_uint64(pk, json_object_get_uint64(j));
		else
			msgpack_pack_int64(pk, json_object_get_int64(j));
		break;
	case json_type_string:
		s = json_object_get_string(j);
		n = (size_t)json_object_get_string_len(j);
		msgpack_pack_str(pk, n);
		msgpack_pack_str_body(pk, s, n);
		break;
	case json_type_array:
		n = json_object_array_length(j);
		msgpack_pack_array(pk, n);
		for (i = 0; i < n; i++)
			mpjson_pack(pk, json_object_array_get_idx(j, i));
		break;
	case json_type_object:
		msgpack_pack_map(pk, (size_t)json_object_object_length(j));
		it = json_object_iter_begin(j);
		end = json_object_iter_end(j);
		while (!json_object_iter_equal(&it, &end)) {
			proto_pack_cstr(pk, json_object_iter_peek_name(&it));
			mpjson_pack(pk, json_object_iter_peek_value(&it));
			json_object_iter_next(&it);
		}
		break;
	}
}

/* A new json-c value for a msgpack object; caller puts it.  Binary data
 * becomes a string; map keys that are not strings are skipped. */
struct json_object *
mpjson_unpack(const msgpack_object *o)
{
	struct json_object	*j;
	const msgpack_object_kv	*kv;
	char			*key;
	uint32_t		 i;

	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		return (NULL);
	case MSGPACK_OBJECT_BOOLEAN:
		return (json_object_new_boolean(o->via.boolean));
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		if (o->via.u64 > (uint64_t)INT64_MAX)
			return (json_object_new_uint64(o->via.u64));
		return (json_object_new_int64((int64_t)o->via.u64));
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return (json_object_new_int64(o->via.i64));
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (!isfinite(o->via.f64))
			return (NULL);
		return (json_object_new_double(o->via.f64));
	case MSGPACK_OBJECT_STR:
		return (json_object_new_string_len(o->via.str.ptr,
		    (int)o->via.str.size));
	case MSGPACK_OBJECT_BIN:
		return (json_object_new_string_len(o->via.bin.ptr,
		    (int)o->via.bin.size));
	case MSGPACK_OBJECT_ARRAY:
		j = json_object_new_array_ext((int)o->via.array.size);
		for (i = 0; i < o->via.array.size; i++) {
			json_object_array_add(j,
			    mpjson_unpack(&o->via.array.ptr[i]));
		}
		return (j);
	case MSGPACK_OBJECT_MAP:
		j = json_object_new_object();
		for (i = 0; i < o->via.map.size; i++) {
			kv = &o->via.map.ptr[i];
			if (kv->key.type != MSGPACK_OBJECT_STR)
				continue;
			/* msgpack-c gives an empty key a NULL pointer. */
			key = kv->key.via.str.size == 0 ? xstrdup("") :
			    xstrndup(kv->key.via.str.ptr,
			    kv->key.via.str.size);
			json_object_object_add(j, key,
			    mpjson_unpack(&kv->val));
			free(key);
		}
		return (j);
	case MSGPACK_OBJECT_EXT:
	default:
		return (NULL);
	}
}
