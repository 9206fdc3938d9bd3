/* SPDX-License-Identifier: ISC */
/*
 * proto-map.c: a packed map copied with some of its keys set, added or
 * dropped, as json_object_object_add and json_object_object_del leave a
 * json-c object: a key set keeps its place, a key added goes at the end
 * in the order given, every other pair is copied as it is.  So a run
 * record (runtimed/room-exec.c) is rewritten to the bytes the json-c
 * path gave without leaving msgpack.
 */

#include <string.h>

#include "proto.h"

static const struct proto_map_set *proto_map_find(const msgpack_object *,
		    const struct proto_map_set *, size_t);
static void	proto_map_value(msgpack_packer *, const struct proto_map_set *,
		    const msgpack_object *);

/* The set for key k (a string of exactly set's key), or NULL. */
static const struct proto_map_set *
proto_map_find(const msgpack_object *k, const struct proto_map_set *set,
    size_t nset)
{
	size_t	i;

	for (i = 0; i < nset; i++) {
		if (proto_obj_streq(k, set[i].key))
			return (&set[i]);
	}
	return (NULL);
}

/* The new value: the callback's, else the bytes given. */
static void
proto_map_value(msgpack_packer *pk, const struct proto_map_set *s,
    const msgpack_object *old)
{
	if (s->pack != NULL)
		s->pack(pk, old, s->arg);
	else
		pk->callback(pk->data, s->packed, s->packed_len);
}

/*
 * Copy map with set applied: each set has a pack callback (given the old
 * value, NULL when the key is new), or packed bytes, or neither to drop
 * its key.  Every other value is packed by copy (given arg), or as it
 * is when copy is NULL.  map's keys are taken as json-c keeps them
 * (mpjson_repack: each once).  -1, having packed nothing, if map is not
 * a map.
 */
int
proto_map_copy(msgpack_packer *pk, const msgpack_object *map,
    const struct proto_map_set *set, size_t nset, proto_map_copy_cb copy,
    void *arg)
{
	const msgpack_object_kv		*kv;
	const struct proto_map_set	*s;
	unsigned char			 seen[PROTO_MAP_SET_MAX];
	uint32_t			 i, n;
	size_t				 j;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP ||
	    nset > PROTO_MAP_SET_MAX)
		return (-1);
	memset(seen, 0, sizeof seen);
	n = map->via.map.size;
	for (i = 0; i < map->via.map.size; i++) {
		kv = &map->via.map.ptr[i];
		if ((s = proto_map_find(&kv->key, set, nset)) == NULL)
			continue;
		seen[s - set] = 1;
		if (s->pack == NULL && s->packed == NULL)
			n--;
	}
	for (j = 0; j < nset; j++) {
		if (!seen[j] && (set[j].pack != NULL || set[j].packed != NULL))
			n++;
	}
	msgpack_pack_map(pk, n);
	for (i = 0; i < map->via.map.size; i++) {
		kv = &map->via.map.ptr[i];
		if ((s = proto_map_find(&kv->key, set, nset)) == NULL) {
			msgpack_pack_object(pk, kv->key);
			if (copy != NULL)
				copy(pk, &kv->val, arg);
			else
				msgpack_pack_object(pk, kv->val);
		} else if (s->pack != NULL || s->packed != NULL) {
			msgpack_pack_object(pk, kv->key);
			proto_map_value(pk, s, &kv->val);
		}
	}
	for (j = 0; j < nset; j++) {
		if (seen[j] || (set[j].pack == NULL && set[j].packed == NULL))
			continue;
		proto_pack_key(pk, set[j].key);
		proto_map_value(pk, &set[j], NULL);
	}
	return (0);
}
