/* SPDX-License-Identifier: ISC */
/*
 * proto-outputs.c: a cell's outputs as the wire carries them (issue 37,
 * docs/decisions/097).  Each output is kept as its own packed msgpack
 * value, so appending one, replacing one (a stream merged, a display
 * updated) or clearing them all never touches the others; the list packs
 * as one msgpack array by copying the bytes.  Readers take a
 * msgpack_object view of one output at a time.  An output comes in as a
 * msgpack_object (the agent's frame, a snapshot) and is copied by
 * msgpack_pack_object, or as bytes packed by the caller (the JSON edges
 * pack json-c with mpjson_pack); nothing here knows JSON.
 */

#include <stdlib.h>
#include <string.h>

#include "proto.h"

static int	proto_outputs_grow(struct proto_outputs *);
static int	proto_outputs_copy_obj(const msgpack_object *,
		    struct proto_output *);
static int	proto_outputs_one(const char *, size_t);
static void	proto_outputs_pack_obj(msgpack_packer *,
		    const msgpack_object *, void *);
static int	proto_outputs_replace(const msgpack_object *,
		    const msgpack_object *, struct proto_output *);

void
proto_outputs_init(struct proto_outputs *o)
{
	memset(o, 0, sizeof *o);
}

/* No outputs; the list's own memory is kept for the next ones. */
void
proto_outputs_clear(struct proto_outputs *o)
{
	size_t	i;

	for (i = 0; i < o->n; i++)
		free(o->v[i].data);
	o->n = 0;
}

void
proto_outputs_free(struct proto_outputs *o)
{
	proto_outputs_clear(o);
	free(o->v);
	proto_outputs_init(o);
}

/*
 * A list of its own allocation, with one reference (a notebook's cell
 * and a batch's copy of it share one, as they shared a json-c array);
 * NULL when memory runs out.
 */
struct proto_outputs *
proto_outputs_new(void)
{
	struct proto_outputs	*o;

	if ((o = calloc(1, sizeof *o)) == NULL)
		return (NULL);
	o->refs = 1;
	return (o);
}

/* Another reference to o (NULL: none). */
struct proto_outputs *
proto_outputs_ref(struct proto_outputs *o)
{
	if (o != NULL)
		o->refs++;
	return (o);
}

/* Drop a reference to o, freed with the last (NULL: none). */
void
proto_outputs_unref(struct proto_outputs *o)
{
	if (o == NULL || --o->refs > 0)
		return;
	proto_outputs_free(o);
	free(o);
}

static int
proto_outputs_grow(struct proto_outputs *o)
{
	struct proto_output	*v;
	size_t			 size;

	if (o->n < o->size)
		return (0);
	size = o->size == 0 ? 4 : o->size * 2;
	if (size > SIZE_MAX / sizeof *v ||
	    (v = realloc(o->v, size * sizeof *v)) == NULL)
		return (-1);
	o->v = v;
	o->size = size;
	return (0);
}

/*
 * obj packed into one allocation of its exact size: a first pass counts
 * the bytes without copying them, so a 10 MB image is copied once.
 */
static int
proto_outputs_copy_obj(const msgpack_object *obj, struct proto_output *out)
{
	struct proto_fill		 b = { NULL, 0 };
	msgpack_packer			 pk;
	size_t				 len;

	msgpack_packer_init(&pk, &b, proto_fill_write);
	msgpack_pack_object(&pk, *obj);
	if ((b.p = malloc(b.len == 0 ? 1 : b.len)) == NULL)
		return (-1);
	len = b.len;
	b.len = 0;
	msgpack_packer_init(&pk, &b, proto_fill_write);
	msgpack_pack_object(&pk, *obj);
	if (b.len != len) {
		free(b.p);
		return (-1);
	}
	out->data = b.p;
	out->len = len;
	return (0);
}

/* Is data exactly one msgpack value? */
static int
proto_outputs_one(const char *data, size_t len)
{
	msgpack_unpacked	u;
	size_t			off = 0;
	int			ok;

	msgpack_unpacked_init(&u);
	ok = msgpack_unpack_next(&u, data, len, &off) ==
	    MSGPACK_UNPACK_SUCCESS && off == len;
	msgpack_unpacked_destroy(&u);
	return (ok);
}

/* Append a copy of out. */
int
proto_outputs_append(struct proto_outputs *o, const msgpack_object *out)
{
	if (proto_outputs_grow(o) != 0 ||
	    proto_outputs_copy_obj(out, &o->v[o->n]) != 0)
		return (-1);
	o->n++;
	return (0);
}

/* Append a copy of an output already packed (one value, else -1). */
int
proto_outputs_append_packed(struct proto_outputs *o, const char *data,
    size_t len)
{
	char	*copy;

	if (!proto_outputs_one(data, len) || proto_outputs_grow(o) != 0 ||
	    (copy = malloc(len)) == NULL)
		return (-1);
	memcpy(copy, data, len);
	o->v[o->n].data = copy;
	o->v[o->n].len = len;
	o->n++;
	return (0);
}

/*
 * Append an output the caller packed into data (malloc'd, exactly one
 * value: a packer's output, not a peer's, is not read back to check),
 * taken without a copy; -1 and data still the caller's if out of memory.
 */
int
proto_outputs_append_take(struct proto_outputs *o, char *data, size_t len)
{
	if (proto_outputs_grow(o) != 0)
		return (-1);
	o->v[o->n].data = data;
	o->v[o->n].len = len;
	o->n++;
	return (0);
}

/* Output i (< n) becomes a copy of out. */
int
proto_outputs_set(struct proto_outputs *o, size_t i, const msgpack_object *out)
{
	struct proto_output	new;

	if (i >= o->n || proto_outputs_copy_obj(out, &new) != 0)
		return (-1);
	free(o->v[i].data);
	o->v[i] = new;
	return (0);
}

/* Output i (< n) becomes a copy of packed bytes (one value, else -1). */
int
proto_outputs_set_packed(struct proto_outputs *o, size_t i, const char *data,
    size_t len)
{
	char	*copy;

	if (i >= o->n || !proto_outputs_one(data, len) ||
	    (copy = malloc(len)) == NULL)
		return (-1);
	memcpy(copy, data, len);
	free(o->v[i].data);
	o->v[i].data = copy;
	o->v[i].len = len;
	return (0);
}

/* Keep the first n outputs (all when there are fewer). */
void
proto_outputs_truncate(struct proto_outputs *o, size_t n)
{
	while (o->n > n)
		free(o->v[--o->n].data);
}

/* dst (initialised) becomes a copy of src. */
int
proto_outputs_copy(struct proto_outputs *dst, const struct proto_outputs *src)
{
	size_t	i;
	char	*copy;

	proto_outputs_clear(dst);
	for (i = 0; i < src->n; i++) {
		if (proto_outputs_grow(dst) != 0 ||
		    (copy = malloc(src->v[i].len)) == NULL)
			return (-1);
		memcpy(copy, src->v[i].data, src->v[i].len);
		dst->v[dst->n].data = copy;
		dst->v[dst->n].len = src->v[i].len;
		dst->n++;
	}
	return (0);
}

/*
 * The outputs of a received array (a snapshot's, ROOM_CONTENT's), each
 * copied; -1 if it is not an array, o then empty.
 */
int
proto_outputs_unpack(struct proto_outputs *o, const msgpack_object *array)
{
	uint32_t	i;

	proto_outputs_clear(o);
	if (array == NULL || array->type != MSGPACK_OBJECT_ARRAY)
		return (-1);
	for (i = 0; i < array->via.array.size; i++) {
		if (proto_outputs_append(o, &array->via.array.ptr[i]) != 0) {
			proto_outputs_clear(o);
			return (-1);
		}
	}
	return (0);
}

/* The outputs as one msgpack array: their bytes, copied. */
void
proto_outputs_pack(msgpack_packer *pk, const struct proto_outputs *o)
{
	size_t	i;

	msgpack_pack_array(pk, o->n);
	for (i = 0; i < o->n; i++)
		pk->callback(pk->data, o->v[i].data, o->v[i].len);
}

/*
 * A view of output i (< n), valid until u is reused or destroyed; it
 * borrows the output's strings.  NULL past the end.
 */
const msgpack_object *
proto_outputs_get(const struct proto_outputs *o, size_t i, msgpack_unpacked *u)
{
	size_t	off = 0;

	if (i >= o->n || msgpack_unpack_next(u, o->v[i].data, o->v[i].len,
	    &off) != MSGPACK_UNPACK_SUCCESS)
		return (NULL);
	return (&u->data);
}

/* The same outputs, byte for byte? */
int
proto_outputs_equal(const struct proto_outputs *a,
    const struct proto_outputs *b)
{
	size_t	i;

	if (a->n != b->n)
		return (0);
	for (i = 0; i < a->n; i++) {
		if (a->v[i].len != b->v[i].len ||
		    memcmp(a->v[i].data, b->v[i].data, a->v[i].len) != 0)
			return (0);
	}
	return (1);
}

/* The bytes the outputs hold, packed. */
size_t
proto_outputs_bytes(const struct proto_outputs *o)
{
	size_t	i, n = 0;

	for (i = 0; i < o->n; i++)
		n += o->v[i].len;
	return (n);
}

/* An output's transient display_id (not NUL-terminated), or NULL. */
const char *
proto_output_display_id(const msgpack_object *out, size_t *len)
{
	const msgpack_object	*t;

	if ((t = proto_get_map(out, "transient")) == NULL)
		return (NULL);
	return (proto_get_str(t, "display_id", len));
}

/* A value of upd as a set of proto_map_copy. */
static void
proto_outputs_pack_obj(msgpack_packer *pk, const msgpack_object *old,
    void *arg)
{
	msgpack_pack_object(pk, *(const msgpack_object *)arg);
}

/*
 * out with its data and metadata those of upd, where upd has them: in
 * place when out has the key, else added at the end, data first (as
 * json_object_object_add does, so the order of the keys is as before).
 * Sized by a counting pass, as proto_outputs_copy_obj is.
 */
static int
proto_outputs_replace(const msgpack_object *out, const msgpack_object *upd,
    struct proto_output *new)
{
	static const char		*keys[] = { "data", "metadata" };
	struct proto_map_set		 set[2];
	struct proto_fill		 b = { NULL, 0 };
	msgpack_packer			 pk;
	const msgpack_object		*v;
	size_t				 i, n = 0, len;

	memset(set, 0, sizeof set);
	for (i = 0; i < 2; i++) {
		if ((v = proto_get(upd, keys[i])) == NULL)
			continue;
		set[n].key = keys[i];
		set[n].pack = proto_outputs_pack_obj;
		set[n++].arg = (void *)v;
	}
	msgpack_packer_init(&pk, &b, proto_fill_write);
	if (proto_map_copy(&pk, out, set, n, NULL, NULL) != 0 ||
	    (b.p = malloc(b.len == 0 ? 1 : b.len)) == NULL)
		return (-1);
	len = b.len;
	b.len = 0;
	msgpack_packer_init(&pk, &b, proto_fill_write);
	proto_map_copy(&pk, out, set, n, NULL, NULL);
	if (b.len != len) {
		free(b.p);
		return (-1);
	}
	new->data = b.p;
	new->len = len;
	return (0);
}

/*
 * update_display_data: every output whose transient display_id is did
 * takes upd's data and metadata.  How many did, or -1 (out of memory;
 * those before may have changed).
 */
int
proto_outputs_update_display(struct proto_outputs *o, const char *did,
    size_t didlen, const msgpack_object *upd)
{
	msgpack_unpacked	 u;
	const msgpack_object	*out;
	struct proto_output	 new;
	const char		*id;
	size_t			 i, len;
	int			 n = 0;

	if (upd == NULL || upd->type != MSGPACK_OBJECT_MAP)
		return (0);
	msgpack_unpacked_init(&u);
	for (i = 0; i < o->n; i++) {
		if ((out = proto_outputs_get(o, i, &u)) == NULL ||
		    out->type != MSGPACK_OBJECT_MAP ||
		    (id = proto_output_display_id(out, &len)) == NULL ||
		    len != didlen || memcmp(id, did, len) != 0)
			continue;
		if (proto_outputs_replace(out, upd, &new) != 0) {
			n = -1;
			break;
		}
		free(o->v[i].data);
		o->v[i] = new;
		n++;
	}
	msgpack_unpacked_destroy(&u);
	return (n);
}
