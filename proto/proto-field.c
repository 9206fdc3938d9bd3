/* SPDX-License-Identifier: ISC */
/*
 * proto-field.c: the pieces every codec is made of.  Reading a field
 * checks its type and says which message and field were wrong; strings
 * and documents are borrowed from the received frame, never copied.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static const msgpack_object	*proto_field_get(const msgpack_object *,
		    const char *, int);
static int	proto_field_missing(const char *, const char *, int, char *,
		    size_t);
static int	proto_field_wrong(const char *, const char *, const char *,
		    char *, size_t);
static int	proto_field_unpack_enum(const msgpack_object *, const char *,
		    const struct proto_field *, int *, char *, size_t);
static int	proto_field_unpack_str_max(const msgpack_object *,
		    const char *, const struct proto_field *, struct proto_str *,
		    char *, size_t);
static int	proto_field_unpack_range(const msgpack_object *,
		    const char *, const struct proto_field *, int64_t *, char *,
		    size_t);
static const char *proto_field_enum_name(const struct proto_field *, int);

/* A value of key, NULL when absent or nil (a required one is missing). */
static const msgpack_object *
proto_field_get(const msgpack_object *body, const char *key, int flags)
{
	const msgpack_object	*v;

	(void)flags;
	v = proto_get(body, key);
	if (v != NULL && v->type == MSGPACK_OBJECT_NIL)
		return (NULL);
	return (v);
}

static int
proto_field_missing(const char *msg, const char *key, int flags, char *err,
    size_t errlen)
{
	if (~flags & PROTO_REQ)
		return (0);
	snprintf(err, errlen, "%s: %s is missing", msg, key);
	return (-1);
}

static int
proto_field_wrong(const char *msg, const char *key, const char *what,
    char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s is not %s", msg, key, what);
	return (-1);
}

/* Is the body a map?  Every codec asks first. */
int
proto_field_body(const msgpack_object *body, const char *msg, char *err,
    size_t errlen)
{
	if (body == NULL || body->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: the body is not a map", msg);
		return (-1);
	}
	return (0);
}

int
proto_field_str(const msgpack_object *body, const char *msg,
    const char *key, int flags, struct proto_str *out, char *err,
    size_t errlen)
{
	const msgpack_object	*v;

	out->ptr = NULL;
	out->len = 0;
	if ((v = proto_field_get(body, key, flags)) == NULL)
		return (proto_field_missing(msg, key, flags, err, errlen));
	if (v->type != MSGPACK_OBJECT_STR)
		return (proto_field_wrong(msg, key, "a string", err, errlen));
	if ((flags & PROTO_NONUL) &&
	    memchr(v->via.str.ptr, '\0', v->via.str.size) != NULL) {
		snprintf(err, errlen, "%s: %s holds a NUL", msg, key);
		return (-1);
	}
	/* An empty string is present: never a NULL pointer. */
	out->ptr = v->via.str.size > 0 ? v->via.str.ptr : "";
	out->len = v->via.str.size;
	return (0);
}

int
proto_field_int(const msgpack_object *body, const char *msg,
    const char *key, int flags, int64_t *out, int *has, char *err,
    size_t errlen)
{
	const msgpack_object	*v;

	*out = 0;
	if (has != NULL)
		*has = 0;
	if ((v = proto_field_get(body, key, flags)) == NULL)
		return (proto_field_missing(msg, key, flags, err, errlen));
	if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    v->via.u64 <= INT64_MAX)
		*out = (int64_t)v->via.u64;
	else if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		*out = v->via.i64;
	else
		return (proto_field_wrong(msg, key, "an integer", err, errlen));
	if ((flags & PROTO_UNSIGNED) && *out < 0)
		return (proto_field_wrong(msg, key, "a non-negative integer",
		    err, errlen));
	if (has != NULL)
		*has = 1;
	return (0);
}

/* An integer >= 0 (PROTO_UNSIGNED is implied). */
int
proto_field_uint(const msgpack_object *body, const char *msg,
    const char *key, int flags, uint64_t *out, int *has, char *err,
    size_t errlen)
{
	int64_t	v;
	int	rc;

	rc = proto_field_int(body, msg, key, flags | PROTO_UNSIGNED, &v, has,
	    err, errlen);
	*out = (uint64_t)v;
	return (rc);
}

int
proto_field_bool(const msgpack_object *body, const char *msg,
    const char *key, int flags, int *out, int *has, char *err, size_t errlen)
{
	const msgpack_object	*v;

	*out = 0;
	if (has != NULL)
		*has = 0;
	if ((v = proto_field_get(body, key, flags)) == NULL)
		return (proto_field_missing(msg, key, flags, err, errlen));
	if (v->type != MSGPACK_OBJECT_BOOLEAN)
		return (proto_field_wrong(msg, key, "a boolean", err, errlen));
	*out = v->via.boolean;
	if (has != NULL)
		*has = 1;
	return (0);
}

/* A document: any value, or with PROTO_MAP or PROTO_ARRAY only that. */
int
proto_field_doc(const msgpack_object *body, const char *msg,
    const char *key, int flags, struct proto_doc *out, char *err,
    size_t errlen)
{
	const msgpack_object	*v;

	memset(out, 0, sizeof *out);
	if ((v = proto_field_get(body, key, flags)) == NULL)
		return (proto_field_missing(msg, key, flags, err, errlen));
	if ((flags & PROTO_MAP) && v->type != MSGPACK_OBJECT_MAP)
		return (proto_field_wrong(msg, key, "a map", err, errlen));
	if ((flags & PROTO_ARRAY) && v->type != MSGPACK_OBJECT_ARRAY)
		return (proto_field_wrong(msg, key, "an array", err, errlen));
	out->obj = v;
	return (0);
}

/* One of names (n of them), its index in *out; -1 absent (optional). */
int
proto_field_enum(const msgpack_object *body, const char *msg,
    const char *key, int flags, const char *const *names, size_t n,
    int *out, char *err, size_t errlen)
{
	struct proto_str	s;
	size_t			i;

	*out = -1;
	PROTO_TRY(proto_field_str(body, msg, key, flags, &s, err, errlen));
	if (s.ptr == NULL)
		return (0);
	for (i = 0; i < n; i++) {
		if (proto_str_eq(&s, names[i])) {
			*out = (int)i;
			return (0);
		}
	}
	snprintf(err, errlen, "%s: %s \"%.*s\" is not one we know", msg, key,
	    s.len > 32 ? 32 : (int)s.len, s.ptr);
	return (-1);
}

/* An integer field when has, else nil. */
void
proto_pack_opt_int(msgpack_packer *pk, const char *key, int has,
    int64_t value)
{
	if (has)
		proto_pack_int(pk, key, value);
	else
		proto_pack_nil(pk, key);
}

/* A string field: str, or nil when absent. */
void
proto_pack_pstr(msgpack_packer *pk, const char *key,
    const struct proto_str *s)
{
	proto_pack_key(pk, key);
	if (s->ptr == NULL)
		msgpack_pack_nil(pk);
	else {
		msgpack_pack_str(pk, s->len);
		msgpack_pack_str_body(pk, s->ptr, s->len);
	}
}

/* A document field: its callback packs it, or its object is copied. */
void
proto_pack_doc(msgpack_packer *pk, const char *key,
    const struct proto_doc *d)
{
	proto_pack_key(pk, key);
	proto_doc_pack(pk, d);
}

/* A document's value: what its callback packs, else the object it was
 * read as, else nil. */
void
proto_doc_pack(msgpack_packer *pk, const struct proto_doc *d)
{
	if (d->pack != NULL)
		d->pack(pk, d->arg);
	else if (d->obj != NULL)
		msgpack_pack_object(pk, *d->obj);
	else
		msgpack_pack_nil(pk);
}

/* Is a document there to pack? */
int
proto_doc_present(const struct proto_doc *d)
{
	return (d->pack != NULL || d->obj != NULL);
}

static void
proto_field_pack_cstr(msgpack_packer *pk, const void *arg)
{
	proto_pack_cstr(pk, arg);
}

static void
proto_field_pack_cstrs(msgpack_packer *pk, const void *arg)
{
	const struct proto_cstrs	*l = arg;
	size_t				 i;

	msgpack_pack_array(pk, l->n);
	for (i = 0; i < l->n; i++)
		proto_pack_cstr(pk, l->v[i]);
}

/* Text a sender holds (a cell id) as a document; s must outlive it. */
struct proto_doc
proto_doc_cstr(const char *s)
{
	struct proto_doc	d;

	memset(&d, 0, sizeof d);
	d.pack = proto_field_pack_cstr;
	d.arg = s;
	return (d);
}

/* A list of texts a sender holds as a document; l must outlive it. */
struct proto_doc
proto_doc_cstrs(const struct proto_cstrs *l)
{
	struct proto_doc	d;

	memset(&d, 0, sizeof d);
	d.pack = proto_field_pack_cstrs;
	d.arg = l;
	return (d);
}

struct proto_str
proto_str_make(const char *s)
{
	struct proto_str	ps;

	ps.ptr = s;
	ps.len = s != NULL ? strlen(s) : 0;
	return (ps);
}

/* A NUL-terminated copy, NULL when absent; caller frees. */
char *
proto_str_dup(const struct proto_str *s)
{
	char	*copy;

	if (s->ptr == NULL || (copy = malloc(s->len + 1)) == NULL)
		return (NULL);
	memcpy(copy, s->ptr, s->len);
	copy[s->len] = '\0';
	return (copy);
}

int
proto_str_eq(const struct proto_str *s, const char *cs)
{
	size_t	len = strlen(cs);

	return (s->ptr != NULL && s->len == len &&
	    memcmp(s->ptr, cs, len) == 0);
}

/*
 * A body declared by its fields (proto-body.h, docs/decisions/096):
 * each field read in order with the refusal its kind has above, into
 * the member at its offset.  m is zeroed by the caller.
 */
int
proto_field_unpack(const msgpack_object *body, const char *msg,
    const struct proto_field *f, size_t n, void *m, char *err,
    size_t errlen)
{
	char	*b = m;
	size_t	 i;

	PROTO_TRY(proto_field_body(body, msg, err, errlen));
	for (i = 0; i < n; i++, f++) {
		switch (f->kind) {
		case PROTO_FIELD_STR:
		case PROTO_FIELD_OPT_STR:
			PROTO_TRY(proto_field_str(body, msg, f->key, f->flags,
			    (struct proto_str *)(b + f->off), err, errlen));
			break;
		case PROTO_FIELD_STR_MAX:
			PROTO_TRY(proto_field_unpack_str_max(body, msg, f,
			    (struct proto_str *)(b + f->off), err, errlen));
			break;
		case PROTO_FIELD_NIL_UINT:
			PROTO_TRY(proto_field_uint(body, msg, f->key, f->flags,
			    (uint64_t *)(b + f->off), (int *)(b + f->has), err,
			    errlen));
			break;
		case PROTO_FIELD_INT:
			PROTO_TRY(proto_field_int(body, msg, f->key, f->flags,
			    (int64_t *)(b + f->off), NULL, err, errlen));
			break;
		case PROTO_FIELD_UINT:
			PROTO_TRY(proto_field_uint(body, msg, f->key, f->flags,
			    (uint64_t *)(b + f->off), NULL, err, errlen));
			break;
		case PROTO_FIELD_OPT_INT:
		case PROTO_FIELD_NIL_INT:
			PROTO_TRY(proto_field_int(body, msg, f->key, f->flags,
			    (int64_t *)(b + f->off), (int *)(b + f->has), err,
			    errlen));
			break;
		case PROTO_FIELD_BOOL:
		case PROTO_FIELD_FLAG:
			PROTO_TRY(proto_field_bool(body, msg, f->key, f->flags,
			    (int *)(b + f->off), NULL, err, errlen));
			break;
		case PROTO_FIELD_DOC:
		case PROTO_FIELD_OPT_DOC:
			PROTO_TRY(proto_field_doc(body, msg, f->key, f->flags,
			    (struct proto_doc *)(b + f->off), err, errlen));
			break;
		case PROTO_FIELD_ENUM:
			PROTO_TRY(proto_field_unpack_enum(body, msg, f,
			    (int *)(b + f->off), err, errlen));
			break;
		case PROTO_FIELD_RANGE:
			PROTO_TRY(proto_field_unpack_range(body, msg, f,
			    (int64_t *)(b + f->off), err, errlen));
			break;
		}
	}
	return (0);
}

static int
proto_field_unpack_str_max(const msgpack_object *body, const char *msg,
    const struct proto_field *f, struct proto_str *out, char *err,
    size_t errlen)
{
	PROTO_TRY(proto_field_str(body, msg, f->key, f->flags, out, err,
	    errlen));
	if (out->len > (uint64_t)f->hi) {
		snprintf(err, errlen, "%s: %s is over %" PRId64 " bytes", msg,
		    f->key, f->hi);
		return (-1);
	}
	return (0);
}

/* An enum's member is an int (an enum type is one here). */
static int
proto_field_unpack_enum(const msgpack_object *body, const char *msg,
    const struct proto_field *f, int *out, char *err, size_t errlen)
{
	size_t	n;
	int	v;

	for (n = 0; f->names[n] != NULL; n++)
		;
	PROTO_TRY(proto_field_enum(body, msg, f->key, f->flags, f->names, n,
	    &v, err, errlen));
	*out = v;
	return (0);
}

static int
proto_field_unpack_range(const msgpack_object *body, const char *msg,
    const struct proto_field *f, int64_t *out, char *err, size_t errlen)
{
	int	has;

	PROTO_TRY(proto_field_int(body, msg, f->key, f->flags, out, &has,
	    err, errlen));
	if (has && (*out < f->lo || *out > f->hi)) {
		snprintf(err, errlen, "%s: %s is not %" PRId64 "-%" PRId64, msg,
		    f->key, f->lo, f->hi);
		return (-1);
	}
	return (0);
}

/* An enum's name, "unknown" past its list. */
static const char *
proto_field_enum_name(const struct proto_field *f, int v)
{
	int	i;

	for (i = 0; f->names[i] != NULL; i++) {
		if (i == v)
			return (f->names[i]);
	}
	return ("unknown");
}

/* Is a field of a declared body on the wire?  An OPT_INT only when set,
 * an OPT_STR or OPT_DOC only when there, a FLAG only when true. */
static int
proto_field_packed(const struct proto_field *f, const char *b)
{
	switch (f->kind) {
	case PROTO_FIELD_OPT_INT:
		return (*(const int *)(b + f->has) != 0);
	case PROTO_FIELD_OPT_STR:
		return (((const struct proto_str *)(b + f->off))->ptr != NULL);
	case PROTO_FIELD_OPT_DOC:
		return (proto_doc_present((const struct proto_doc *)(b +
		    f->off)));
	case PROTO_FIELD_FLAG:
		return (*(const int *)(b + f->off) != 0);
	default:
		return (1);
	}
}

/* Pack a body declared by its fields, in their order. */
void
proto_field_pack(msgpack_packer *pk, const struct proto_field *f, size_t n,
    const void *m)
{
	const char	*b = m;
	size_t		 i, count = 0;

	for (i = 0; i < n; i++)
		count += proto_field_packed(&f[i], b);
	msgpack_pack_map(pk, count);
	for (i = 0; i < n; i++, f++) {
		if (!proto_field_packed(f, b))
			continue;
		switch (f->kind) {
		case PROTO_FIELD_STR:
		case PROTO_FIELD_OPT_STR:
		case PROTO_FIELD_STR_MAX:
			proto_pack_pstr(pk, f->key,
			    (const struct proto_str *)(b + f->off));
			break;
		case PROTO_FIELD_INT:
		case PROTO_FIELD_OPT_INT:
		case PROTO_FIELD_RANGE:
			proto_pack_int(pk, f->key,
			    *(const int64_t *)(b + f->off));
			break;
		case PROTO_FIELD_NIL_INT:
			proto_pack_opt_int(pk, f->key,
			    *(const int *)(b + f->has),
			    *(const int64_t *)(b + f->off));
			break;
		case PROTO_FIELD_NIL_UINT:
			if (*(const int *)(b + f->has))
				proto_pack_uint(pk, f->key,
				    *(const uint64_t *)(b + f->off));
			else
				proto_pack_nil(pk, f->key);
			break;
		case PROTO_FIELD_ENUM:
			proto_pack_str(pk, f->key, proto_field_enum_name(f,
			    *(const int *)(b + f->off)));
			break;
		case PROTO_FIELD_UINT:
			proto_pack_uint(pk, f->key,
			    *(const uint64_t *)(b + f->off));
			break;
		case PROTO_FIELD_BOOL:
			proto_pack_bool(pk, f->key, *(const int *)(b + f->off));
			break;
		case PROTO_FIELD_FLAG:
			proto_pack_bool(pk, f->key, 1);
			break;
		case PROTO_FIELD_DOC:
		case PROTO_FIELD_OPT_DOC:
			proto_pack_doc(pk, f->key,
			    (const struct proto_doc *)(b + f->off));
			break;
		}
	}
}
