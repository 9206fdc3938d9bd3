/* SPDX-License-Identifier: ISC */
/*
 * lastline.c: the latest line a cell printed, for a change detail (the
 * daemon) and a wait's progress (the worker): the last line of its last
 * output, a stream's text, an error's evalue or a result's text/plain.
 */

#include <string.h>

#include "common.h"

/*
 * The last non-empty line of the last output in outs, at most max
 * characters, cut on a character boundary: its start, and its length in
 * bytes in *len; NULL when there is none.  Points into outs.
 */
/* The last non-empty line of s (len bytes), as lastline_find says. */
static const char *
lastline_of(const char *s, size_t slen, size_t max, size_t *len)
{
	const char	*end, *start;
	size_t		 chars;

	end = s + slen;
	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (start = end; start > s && start[-1] != '\n'; start--)
		;
	for (*len = 0, chars = 0; start + *len < end && chars < max;
	    chars++) {
		(*len)++;
		while (start + *len < end &&
		    ((unsigned char)start[*len] & 0xc0) == 0x80)
			(*len)++;
	}
	return (*len > 0 ? start : NULL);
}

const char *
lastline_find(struct json_object *outs, size_t max, size_t *len)
{
	struct json_object	*o, *v, *d;
	const char		*type;
	size_t			 n;

	n = outs != NULL && json_object_is_type(outs, json_type_array) ?
	    json_object_array_length(outs) : 0;
	if (n == 0)
		return (NULL);
	o = json_object_array_get_idx(outs, n - 1);
	type = json_object_get_string(json_object_object_get(o,
	    "output_type"));
	v = NULL;
	if (type != NULL && strcmp(type, "stream") == 0)
		v = json_object_object_get(o, "text");
	else if (type != NULL && strcmp(type, "error") == 0)
		v = json_object_object_get(o, "evalue");
	else if ((d = json_object_object_get(o, "data")) != NULL)
		v = json_object_object_get(d, "text/plain");
	if (v == NULL || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (lastline_of(json_object_get_string(v),
	    (size_t)json_object_get_string_len(v), max, len));
}

/* A msgpack map's last value at key (as json-c keeps it), or NULL. */
static const msgpack_object *
lastline_get(const msgpack_object *map, const char *key)
{
	size_t		len = strlen(key);
	uint32_t	i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	for (i = map->via.map.size; i > 0; i--) {
		if (map->via.map.ptr[i - 1].key.type == MSGPACK_OBJECT_STR &&
		    map->via.map.ptr[i - 1].key.via.str.size == len &&
		    memcmp(map->via.map.ptr[i - 1].key.via.str.ptr, key,
		    len) == 0)
			return (&map->via.map.ptr[i - 1].val);
	}
	return (NULL);
}

/* Is o the string s, as strcmp on json-c's string would say? */
static int
lastline_is(const msgpack_object *o, const char *s)
{
	size_t	len = strlen(s);

	return (o != NULL && o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size >= len && memcmp(o->via.str.ptr, s, len) == 0 &&
	    (o->via.str.size == len || o->via.str.ptr[len] == '\0'));
}

/*
 * lastline_find over the last output of a packed list (decision 097):
 * points into outs' bytes, valid until u is reused.
 */
const char *
lastline_find_packed(const struct proto_outputs *outs, msgpack_unpacked *u,
    size_t max, size_t *len)
{
	const msgpack_object	*o, *t, *v;

	if (outs == NULL || outs->n == 0 ||
	    (o = proto_outputs_get(outs, outs->n - 1, u)) == NULL)
		return (NULL);
	t = lastline_get(o, "output_type");
	if (lastline_is(t, "stream"))
		v = lastline_get(o, "text");
	else if (lastline_is(t, "error"))
		v = lastline_get(o, "evalue");
	else
		v = lastline_get(lastline_get(o, "data"), "text/plain");
	if (v == NULL || v->type != MSGPACK_OBJECT_STR)
		return (NULL);
	return (lastline_of(v->via.str.ptr, v->via.str.size, max, len));
}
