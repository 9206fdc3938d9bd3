/* SPDX-License-Identifier: ISC */
/*
 * proto-edit.c: the codec of one edit of a ROOM_EDIT batch (struct
 * proto_edit), packed by its senders and read by the daemon.  Its
 * messages are those a client has always seen: msg is "edit N".
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

/* By enum proto_edit_op. */
static const char *const proto_edit_ops[] = {
	"insert", "edit", "delete", "replace", "move", "clear_outputs",
	"notebook_metadata", "resolve"
};

/* The fields an op cannot do without, checked before any other. */
static const char *const proto_edit_needs[][3] = {
	[PROTO_EDIT_INSERT] = { NULL },
	[PROTO_EDIT_EDIT] = { "cell_id" },
	[PROTO_EDIT_DELETE] = { "cell_id" },
	[PROTO_EDIT_REPLACE] = { "cell_id", "old_text", "new_text" },
	[PROTO_EDIT_MOVE] = { "cell_ids" },
	[PROTO_EDIT_CLEAR_OUTPUTS] = { NULL },
	[PROTO_EDIT_NOTEBOOK_METADATA] = { "metadata" },
	[PROTO_EDIT_RESOLVE] = { "cell_id" },
};

#define PROTO_EDIT_NOPS	(sizeof proto_edit_ops / sizeof proto_edit_ops[0])

static int	proto_edit_op_read(const msgpack_object *, const char *,
		    enum proto_edit_op *, char *, size_t);
static size_t	proto_edit_count(const struct proto_edit *);

const char *
proto_edit_op_name(enum proto_edit_op op)
{
	return ((size_t)op < PROTO_EDIT_NOPS ? proto_edit_ops[op] : "");
}

static size_t
proto_edit_count(const struct proto_edit *m)
{
	return (1 + proto_doc_present(&m->cell_id) +
	    proto_doc_present(&m->after) + proto_doc_present(&m->cell_ids) +
	    (m->cell_type.ptr != NULL) + (m->source.ptr != NULL) +
	    proto_doc_present(&m->metadata) +
	    (m->expect_version.ptr != NULL) + (m->old_text.ptr != NULL) +
	    (m->new_text.ptr != NULL) + (m->take.ptr != NULL));
}

/* Only the fields there: an absent one is not sent as nil. */
void
proto_edit_pack(msgpack_packer *pk, const struct proto_edit *m)
{
	msgpack_pack_map(pk, proto_edit_count(m));
	proto_pack_str(pk, "op", proto_edit_op_name(m->op));
	if (proto_doc_present(&m->cell_id))
		proto_pack_doc(pk, "cell_id", &m->cell_id);
	if (proto_doc_present(&m->after))
		proto_pack_doc(pk, "after", &m->after);
	if (proto_doc_present(&m->cell_ids))
		proto_pack_doc(pk, "cell_ids", &m->cell_ids);
	if (m->cell_type.ptr != NULL)
		proto_pack_pstr(pk, "cell_type", &m->cell_type);
	if (m->source.ptr != NULL)
		proto_pack_pstr(pk, "source", &m->source);
	if (proto_doc_present(&m->metadata))
		proto_pack_doc(pk, "metadata", &m->metadata);
	if (m->expect_version.ptr != NULL)
		proto_pack_pstr(pk, "expect_version", &m->expect_version);
	if (m->old_text.ptr != NULL)
		proto_pack_pstr(pk, "old_text", &m->old_text);
	if (m->new_text.ptr != NULL)
		proto_pack_pstr(pk, "new_text", &m->new_text);
	if (m->take.ptr != NULL)
		proto_pack_pstr(pk, "take", &m->take);
}

/* A batch of one edit, as a struct proto_doc packs it: arg the edit. */
void
proto_edit_pack_one(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 1);
	proto_edit_pack(pk, arg);
}

/* A batch, as a struct proto_doc packs it: arg a struct proto_edits. */
void
proto_edits_pack(msgpack_packer *pk, const void *arg)
{
	const struct proto_edits	*l = arg;
	size_t				 i;

	msgpack_pack_array(pk, l->n);
	for (i = 0; i < l->n; i++)
		proto_edit_pack(pk, &l->v[i]);
}

/*
 * A batch's size as PROTO_EDIT_MAX_EDITS counts it, before any edit is
 * read: its edits and the items of their cell_ids lists; 0 if it is no
 * list.
 */
size_t
proto_edits_size(const msgpack_object *edits)
{
	const msgpack_object	*list;
	size_t			 i, n;

	if (edits == NULL || edits->type != MSGPACK_OBJECT_ARRAY)
		return (0);
	n = edits->via.array.size;
	for (i = 0; i < edits->via.array.size; i++) {
		if ((list = proto_get_array(&edits->via.array.ptr[i],
		    "cell_ids")) != NULL)
			n += list->via.array.size;
	}
	return (n);
}

/* The op named name (len bytes); -1 if none is. */
int
proto_edit_op_find(const char *name, size_t len, enum proto_edit_op *op)
{
	size_t	i;

	for (i = 0; i < PROTO_EDIT_NOPS; i++) {
		if (strlen(proto_edit_ops[i]) == len &&
		    memcmp(proto_edit_ops[i], name, len) == 0) {
			*op = (enum proto_edit_op)i;
			return (0);
		}
	}
	return (-1);
}

/* The op, and the fields it needs there (not nil). */
static int
proto_edit_op_read(const msgpack_object *body, const char *n,
    enum proto_edit_op *op, char *err, size_t errlen)
{
	const msgpack_object	*v;
	const char		*name;
	size_t			 len, j;

	if ((name = proto_get_str(body, "op", &len)) == NULL) {
		snprintf(err, errlen, "%s: op is missing", n);
		return (-1);
	}
	if (proto_edit_op_find(name, len, op) != 0) {
		snprintf(err, errlen, "%s: unknown op \"%.*s\" (insert, edit, "
		    "delete, replace, move, clear_outputs or "
		    "notebook_metadata)", n, (int)len, name);
		return (-1);
	}
	for (j = 0; j < 3 && proto_edit_needs[*op][j] != NULL; j++) {
		v = proto_get(body, proto_edit_needs[*op][j]);
		if (v == NULL || v->type == MSGPACK_OBJECT_NIL) {
			snprintf(err, errlen, "%s: %s needs %s", n,
			    proto_edit_ops[*op], proto_edit_needs[*op][j]);
			return (-1);
		}
	}
	return (0);
}

/*
 * Read one edit; n names it in err ("edit N").  Each field is checked
 * for its type, and a list for being one; what a reference names, a
 * cell_type's value and a source's UTF-8 are the daemon's to judge.
 */
int
proto_edit_unpack(const msgpack_object *body, const char *n,
    struct proto_edit *m, char *err, size_t errlen)
{
	const msgpack_object	*v;

	memset(m, 0, sizeof *m);
	if (body == NULL || body->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: an edit is a map", n);
		return (-1);
	}
	PROTO_TRY(proto_edit_op_read(body, n, &m->op, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "cell_type", 0, &m->cell_type,
	    err, errlen));
	PROTO_TRY(proto_field_str(body, n, "source", 0, &m->source, err,
	    errlen));
	PROTO_TRY(proto_field_doc(body, n, "metadata", PROTO_MAP,
	    &m->metadata, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "cell_id", 0, &m->cell_id, err,
	    errlen));
	PROTO_TRY(proto_field_doc(body, n, "after", 0, &m->after, err,
	    errlen));
	switch (m->op) {
	case PROTO_EDIT_EDIT:
	case PROTO_EDIT_DELETE:
	case PROTO_EDIT_REPLACE:
		PROTO_TRY(proto_field_str(body, n, "expect_version", 0,
		    &m->expect_version, err, errlen));
		break;
	default:
		break;
	}
	switch (m->op) {
	case PROTO_EDIT_REPLACE:
		if (proto_field_str(body, n, "old_text", 0, &m->old_text, err,
		    errlen) != 0 || proto_field_str(body, n, "new_text", 0,
		    &m->new_text, err, errlen) != 0) {
			snprintf(err, errlen, "%s: old_text and new_text must "
			    "be strings", n);
			return (-1);
		}
		break;
	case PROTO_EDIT_MOVE:
		v = proto_get(body, "cell_ids");
		if (v->type != MSGPACK_OBJECT_ARRAY ||
		    v->via.array.size == 0) {
			snprintf(err, errlen, "%s: cell_ids must be a non-empty "
			    "list", n);
			return (-1);
		}
		m->cell_ids.obj = v;
		break;
	case PROTO_EDIT_CLEAR_OUTPUTS:
		if (proto_field_doc(body, n, "cell_ids", PROTO_ARRAY,
		    &m->cell_ids, err, errlen) != 0) {
			snprintf(err, errlen, "%s: cell_ids must be a list", n);
			return (-1);
		}
		break;
	case PROTO_EDIT_RESOLVE:
		PROTO_TRY(proto_field_str(body, n, "take", 0, &m->take, err,
		    errlen));
		break;
	default:
		break;
	}
	return (0);
}
