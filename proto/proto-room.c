/* SPDX-License-Identifier: ISC */
/*
 * proto-room.c: codecs of the room messages (ROOM_*) and BLOB_GET and
 * BLOB_REPLY.  Cells, metadata, edit batches and change lists are
 * documents (struct proto_doc): their meaning is the daemon's.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static void	proto_room_joined_pack1(msgpack_packer *,
		    const struct proto_room_joined *, int);
static int	proto_room_joined_unpack1(const msgpack_object *,
		    struct proto_room_joined *, const char *, char *, size_t);

void
proto_room_create_pack(msgpack_packer *pk, const struct proto_room_create *m)
{
	msgpack_pack_map(pk, (m->path.ptr != NULL) + (m->kernel.ptr != NULL) +
	    (m->domain.ptr != NULL));
	if (m->path.ptr != NULL)
		proto_pack_pstr(pk, "path", &m->path);
	if (m->kernel.ptr != NULL)
		proto_pack_pstr(pk, "kernel", &m->kernel);
	if (m->domain.ptr != NULL)
		proto_pack_pstr(pk, "domain", &m->domain);
}

int
proto_room_create_unpack(const msgpack_object *body,
    struct proto_room_create *m, char *err, size_t errlen)
{
	const char	*n = "ROOM_CREATE";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "path", PROTO_NONUL,
	    &m->path, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "domain", PROTO_NONUL,
	    &m->domain, err, errlen));
	return (proto_field_str(body, n, "kernel", PROTO_NONUL, &m->kernel,
	    err, errlen));
}

void
proto_room_open_pack(msgpack_packer *pk, const struct proto_room_open *m)
{
	msgpack_pack_map(pk, (m->path.ptr != NULL) +
	    (m->notebook_id.ptr != NULL) + (m->domain.ptr != NULL));
	if (m->path.ptr != NULL)
		proto_pack_pstr(pk, "path", &m->path);
	if (m->notebook_id.ptr != NULL)
		proto_pack_pstr(pk, "notebook_id", &m->notebook_id);
	if (m->domain.ptr != NULL)
		proto_pack_pstr(pk, "domain", &m->domain);
}

int
proto_room_open_unpack(const msgpack_object *body, struct proto_room_open *m,
    char *err, size_t errlen)
{
	const char	*n = "ROOM_OPEN";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "path", PROTO_NONUL,
	    &m->path, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "domain", PROTO_NONUL,
	    &m->domain, err, errlen));
	return (proto_field_str(body, n, "notebook_id", PROTO_NONUL,
	    &m->notebook_id, err, errlen));
}

/* ROOM_JOINED and ROOM_CONTENT (which adds metadata). */
static void
proto_room_joined_pack1(msgpack_packer *pk, const struct proto_room_joined *m,
    int content)
{
	int	meta = content && proto_doc_present(&m->metadata);

	msgpack_pack_map(pk, 8 + meta + proto_doc_present(&m->warnings) +
	    proto_doc_present(&m->conflicts) + proto_doc_present(&m->active));
	proto_pack_pstr(pk, "notebook_id", &m->notebook_id);
	proto_pack_pstr(pk, "path", &m->path);
	proto_pack_bool(pk, "dirty", m->dirty);
	proto_pack_uint(pk, "seq", m->seq);
	proto_pack_int(pk, "nbformat", m->nbformat);
	proto_pack_int(pk, "nbformat_minor", m->nbformat_minor);
	proto_pack_key(pk, "kernel");
	msgpack_pack_map(pk, 2);
	proto_pack_pstr(pk, "name", &m->kernel_name);
	proto_pack_pstr(pk, "state", &m->kernel_state);
	if (meta)
		proto_pack_doc(pk, "metadata", &m->metadata);
	if (proto_doc_present(&m->warnings))
		proto_pack_doc(pk, "warnings", &m->warnings);
	if (proto_doc_present(&m->conflicts))
		proto_pack_doc(pk, "conflicts", &m->conflicts);
	if (proto_doc_present(&m->active))
		proto_pack_doc(pk, "active", &m->active);
	proto_pack_doc(pk, "cells", &m->cells);
}

static int
proto_room_joined_unpack1(const msgpack_object *body,
    struct proto_room_joined *m, const char *n, char *err, size_t errlen)
{
	struct proto_doc	kernel;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "notebook_id",
	    PROTO_REQ | PROTO_NONUL, &m->notebook_id, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "path", PROTO_NONUL,
	    &m->path, err, errlen));
	PROTO_TRY(proto_field_bool(body, n, "dirty", 0, &m->dirty, NULL,
	    err, errlen));
	PROTO_TRY(proto_field_uint(body, n, "seq", PROTO_REQ, &m->seq, NULL,
	    err, errlen));
	PROTO_TRY(proto_field_int(body, n, "nbformat", 0, &m->nbformat,
	    NULL, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "nbformat_minor", 0,
	    &m->nbformat_minor, NULL, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "kernel", PROTO_MAP, &kernel,
	    err, errlen));
	if (kernel.obj != NULL) {
		PROTO_TRY(proto_field_str(kernel.obj, n, "name", 0,
		    &m->kernel_name, err, errlen));
		PROTO_TRY(proto_field_str(kernel.obj, n, "state", 0,
		    &m->kernel_state, err, errlen));
	}
	PROTO_TRY(proto_field_doc(body, n, "metadata", PROTO_MAP,
	    &m->metadata, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "warnings", PROTO_ARRAY,
	    &m->warnings, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "conflicts", PROTO_ARRAY,
	    &m->conflicts, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "active", PROTO_ARRAY,
	    &m->active, err, errlen));
	return (proto_field_doc(body, n, "cells", PROTO_REQ | PROTO_ARRAY,
	    &m->cells, err, errlen));
}

void
proto_room_joined_pack(msgpack_packer *pk, const struct proto_room_joined *m)
{
	proto_room_joined_pack1(pk, m, 0);
}

int
proto_room_joined_unpack(const msgpack_object *body,
    struct proto_room_joined *m, char *err, size_t errlen)
{
	return (proto_room_joined_unpack1(body, m, "ROOM_JOINED", err,
	    errlen));
}

void
proto_room_content_pack(msgpack_packer *pk, const struct proto_room_joined *m)
{
	proto_room_joined_pack1(pk, m, 1);
}

int
proto_room_content_unpack(const msgpack_object *body,
    struct proto_room_joined *m, char *err, size_t errlen)
{
	return (proto_room_joined_unpack1(body, m, "ROOM_CONTENT", err,
	    errlen));
}

void
proto_room_edit_pack(msgpack_packer *pk, const struct proto_room_edit *m)
{
	msgpack_pack_map(pk, proto_doc_present(&m->edits) +
	    proto_doc_present(&m->undo) + m->has_if_seq +
	    (m->session.ptr != NULL) + (m->client_name.ptr != NULL));
	if (proto_doc_present(&m->edits))
		proto_pack_doc(pk, "edits", &m->edits);
	if (proto_doc_present(&m->undo))
		proto_pack_doc(pk, "undo", &m->undo);
	if (m->has_if_seq)
		proto_pack_uint(pk, "if_seq", m->if_seq);
	if (m->session.ptr != NULL)
		proto_pack_pstr(pk, "session", &m->session);
	if (m->client_name.ptr != NULL)
		proto_pack_pstr(pk, "client_name", &m->client_name);
}

int
proto_room_edit_unpack(const msgpack_object *body, struct proto_room_edit *m,
    char *err, size_t errlen)
{
	const char	*n = "ROOM_EDIT";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "undo", PROTO_MAP, &m->undo, err,
	    errlen));
	PROTO_TRY(proto_field_doc(body, n, "edits", PROTO_ARRAY |
	    (m->undo.obj == NULL ? PROTO_REQ : 0), &m->edits, err, errlen));
	PROTO_TRY(proto_field_uint(body, n, "if_seq", 0, &m->if_seq,
	    &m->has_if_seq, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "session", PROTO_NONUL,
	    &m->session, err, errlen));
	return (proto_field_str(body, n, "client_name", PROTO_NONUL,
	    &m->client_name, err, errlen));
}

/* ROOM_CHANGED: one change, as ROOM_CHANGES_REPLY lists them. */
static void
proto_room_changed_pack1(msgpack_packer *pk,
    const struct proto_room_changed *m, int extra)
{
	int	details = proto_doc_present(&m->details);

	msgpack_pack_map(pk, 5 + details + m->details_truncated + extra +
	    (m->by.ptr != NULL) + m->has_at + (m->client.ptr != NULL) +
	    (m->session.ptr != NULL));
	proto_pack_uint(pk, "seq", m->seq);
	if (m->by.ptr != NULL)
		proto_pack_pstr(pk, "by", &m->by);
	if (m->has_at)
		proto_pack_int(pk, "at", m->at);
	if (m->client.ptr != NULL)
		proto_pack_pstr(pk, "client", &m->client);
	if (m->session.ptr != NULL)
		proto_pack_pstr(pk, "session", &m->session);
	proto_pack_doc(pk, "kinds", &m->kinds);
	proto_pack_doc(pk, "cell_ids", &m->cell_ids);
	proto_pack_doc(pk, "execution_ids", &m->execution_ids);
	if (details)
		proto_pack_doc(pk, "details", &m->details);
	if (m->details_truncated)
		proto_pack_bool(pk, "details_truncated", 1);
	proto_pack_pstr(pk, "notebook_id", &m->notebook_id);
}

void
proto_room_changed_pack(msgpack_packer *pk, const struct proto_room_changed *m)
{
	proto_room_changed_pack1(pk, m, 0);
}

static int
proto_room_change_unpack1(const msgpack_object *body,
    struct proto_room_changed *m, const char *n, char *err, size_t errlen)
{

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_uint(body, n, "seq", PROTO_REQ, &m->seq, NULL,
	    err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "kinds", PROTO_ARRAY,
	    &m->kinds, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "cell_ids", PROTO_ARRAY,
	    &m->cell_ids, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "execution_ids",
	    PROTO_ARRAY, &m->execution_ids, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "details", PROTO_ARRAY,
	    &m->details, err, errlen));
	PROTO_TRY(proto_field_bool(body, n, "details_truncated", 0,
	    &m->details_truncated, NULL, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "by", PROTO_NONUL, &m->by, err,
	    errlen));
	PROTO_TRY(proto_field_int(body, n, "at", 0, &m->at, &m->has_at, err,
	    errlen));
	PROTO_TRY(proto_field_str(body, n, "client", PROTO_NONUL, &m->client,
	    err, errlen));
	PROTO_TRY(proto_field_str(body, n, "session", PROTO_NONUL,
	    &m->session, err, errlen));
	return (proto_field_str(body, n, "notebook_id", 0, &m->notebook_id,
	    err, errlen));
}

int
proto_room_changed_unpack(const msgpack_object *body,
    struct proto_room_changed *m, char *err, size_t errlen)
{
	return (proto_room_change_unpack1(body, m, "ROOM_CHANGED", err,
	    errlen));
}

/* One entry of ROOM_CHANGES_REPLY's changes (no notebook_id). */
int
proto_room_change_unpack(const msgpack_object *entry,
    struct proto_room_changed *m, char *err, size_t errlen)
{
	return (proto_room_change_unpack1(entry, m, "ROOM_CHANGES_REPLY",
	    err, errlen));
}

/*
 * A change's kinds as PROTO_KIND_* bits (names not known are left out).
 * The metadata a kernel writes (by "kernel": its kernelspec and
 * language_info) counts as a kernel change, not a content one.
 */
int
proto_room_change_kinds(const struct proto_room_changed *m)
{
	const msgpack_object	*k = m->kinds.obj, *v;
	uint32_t		 i;
	int			 bits = 0;

	if (k == NULL || k->type != MSGPACK_OBJECT_ARRAY)
		return (0);
	for (i = 0; i < k->via.array.size; i++) {
		v = &k->via.array.ptr[i];
		if (v->type == MSGPACK_OBJECT_STR)
			bits |= proto_change_kind_parse(v->via.str.ptr,
			    v->via.str.size);
	}
	if ((bits & PROTO_KIND_METADATA) && proto_str_eq(&m->by, "kernel"))
		bits = (bits & ~PROTO_KIND_METADATA) | PROTO_KIND_KERNEL;
	return (bits);
}

static const char *const proto_room_kinds[] = {
	"cells", "outputs", "kernel", "saved", "metadata", "reloaded"
};
static const char *const proto_room_hows[] = {
	"inserted", "deleted", "moved", "source", "type", "metadata",
	"outputs", "cleared", "kernel", "conflict", "resolved"
};
#define PROTO_ROOM_NITEMS(a)	(sizeof (a) / sizeof *(a))

/* The name of one PROTO_KIND_* bit, or NULL. */
const char *
proto_change_kind_name(int bit)
{
	size_t	i;

	for (i = 0; i < PROTO_ROOM_NITEMS(proto_room_kinds); i++) {
		if (bit == (1 << i))
			return (proto_room_kinds[i]);
	}
	return (NULL);
}

/* A kind's name as its PROTO_KIND_* bit; 0 if unknown. */
int
proto_change_kind_parse(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < PROTO_ROOM_NITEMS(proto_room_kinds); i++) {
		if (strlen(proto_room_kinds[i]) == len &&
		    memcmp(proto_room_kinds[i], s, len) == 0)
			return (1 << i);
	}
	return (0);
}

const char *
proto_change_how_name(enum proto_change_how how)
{
	if ((size_t)how >= PROTO_ROOM_NITEMS(proto_room_hows))
		return ("?");
	return (proto_room_hows[how]);
}

/* One detail of a change: {how, cell_id?, index?, outputs?, line?,
 * from?, to?}. */
void
proto_change_detail_pack(msgpack_packer *pk,
    const struct proto_change_detail *m)
{
	msgpack_pack_map(pk, 1 + (m->cell_id.ptr != NULL) + m->has_index +
	    m->has_outputs + (m->line.ptr != NULL) + (m->from.ptr != NULL) +
	    (m->to.ptr != NULL));
	proto_pack_str(pk, "how", proto_change_how_name(m->how));
	if (m->cell_id.ptr != NULL)
		proto_pack_pstr(pk, "cell_id", &m->cell_id);
	if (m->has_index)
		proto_pack_int(pk, "index", m->index);
	if (m->has_outputs)
		proto_pack_int(pk, "outputs", m->outputs);
	if (m->line.ptr != NULL)
		proto_pack_pstr(pk, "line", &m->line);
	if (m->from.ptr != NULL)
		proto_pack_pstr(pk, "from", &m->from);
	if (m->to.ptr != NULL)
		proto_pack_pstr(pk, "to", &m->to);
}

/* A detail whose how this end does not know is refused (-1): skip it. */
int
proto_change_detail_unpack(const msgpack_object *body,
    struct proto_change_detail *m, char *err, size_t errlen)
{
	const char		*n = "change detail";
	struct proto_str	 how;
	size_t			 i;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "how", PROTO_REQ, &how, err,
	    errlen));
	for (i = 0; i < PROTO_ROOM_NITEMS(proto_room_hows); i++) {
		if (proto_str_eq(&how, proto_room_hows[i]))
			break;
	}
	if (i == PROTO_ROOM_NITEMS(proto_room_hows)) {
		snprintf(err, errlen, "%s: how \"%.*s\" is not known", n,
		    (int)how.len, how.ptr);
		return (-1);
	}
	m->how = (enum proto_change_how)i;
	PROTO_TRY(proto_field_str(body, n, "cell_id", PROTO_NONUL,
	    &m->cell_id, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "index", PROTO_UNSIGNED,
	    &m->index, &m->has_index, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "outputs", PROTO_UNSIGNED,
	    &m->outputs, &m->has_outputs, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "line", 0, &m->line, err,
	    errlen));
	PROTO_TRY(proto_field_str(body, n, "from", PROTO_NONUL,
	    &m->from, err, errlen));
	return (proto_field_str(body, n, "to", PROTO_NONUL, &m->to, err,
	    errlen));
}

/*
 * ROOM_WAIT {kinds: [string], have?, standing?, runs?}; a kind this end
 * does not know is left out.
 */
void
proto_room_wait_pack(msgpack_packer *pk, const struct proto_room_wait *m)
{
	size_t	i, n = 0;

	for (i = 0; i < PROTO_ROOM_NITEMS(proto_room_kinds); i++)
		n += (m->kinds & (1 << i)) != 0;
	msgpack_pack_map(pk, 1 + (m->has_have != 0) + (m->standing != 0) +
	    (m->runs != 0));
	if (m->has_have)
		proto_pack_uint(pk, "have", m->have);
	if (m->standing)
		proto_pack_bool(pk, "standing", 1);
	if (m->runs)
		proto_pack_bool(pk, "runs", 1);
	proto_pack_key(pk, "kinds");
	msgpack_pack_array(pk, n);
	for (i = 0; i < PROTO_ROOM_NITEMS(proto_room_kinds); i++) {
		if (m->kinds & (1 << i))
			proto_pack_cstr(pk, proto_room_kinds[i]);
	}
}

int
proto_room_wait_unpack(const msgpack_object *body, struct proto_room_wait *m,
    char *err, size_t errlen)
{
	const char		*n = "ROOM_WAIT";
	struct proto_doc	 kinds;
	const msgpack_object	*v;
	uint32_t		 i;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "kinds", PROTO_REQ | PROTO_ARRAY,
	    &kinds, err, errlen));
	for (i = 0; i < kinds.obj->via.array.size; i++) {
		v = &kinds.obj->via.array.ptr[i];
		if (v->type != MSGPACK_OBJECT_STR) {
			snprintf(err, errlen, "%s: kinds[%u] is not a string",
			    n, i);
			return (-1);
		}
		m->kinds |= proto_change_kind_parse(v->via.str.ptr,
		    v->via.str.size);
	}
	PROTO_TRY(proto_field_uint(body, n, "have", 0, &m->have,
	    &m->has_have, err, errlen));
	PROTO_TRY(proto_field_bool(body, n, "standing", 0, &m->standing,
	    NULL, err, errlen));
	return (proto_field_bool(body, n, "runs", 0, &m->runs, NULL, err,
	    errlen));
}

/* h with the n bytes at p (FNV-1a, 64 bits; PROTO_FNV64_INIT first). */
uint64_t
proto_fnv64(uint64_t h, const void *p, size_t n)
{
	const unsigned char	*b = p;
	size_t			 i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return (h);
}

/* A run's digest d with the next cell's hash h: one FNV step a word. */
uint64_t
proto_run_fold(uint64_t d, uint64_t h)
{
	return ((d ^ h) * 0x100000001b3ULL);
}

/* ROOM_CHANGED_CONTENT: ROOM_CHANGED's fields, content and base?. */
void
proto_room_changed_content_pack(msgpack_packer *pk,
    const struct proto_room_changed_content *m)
{
	proto_room_changed_pack1(pk, &m->change, 1 + (m->has_base != 0));
	proto_pack_doc(pk, "content", &m->content);
	if (m->has_base)
		proto_pack_uint(pk, "base", m->base);
}

int
proto_room_changed_content_unpack(const msgpack_object *body,
    struct proto_room_changed_content *m, char *err, size_t errlen)
{
	const char	*n = "ROOM_CHANGED_CONTENT";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_room_change_unpack1(body, &m->change, n, err,
	    errlen));
	PROTO_TRY(proto_field_uint(body, n, "base", 0, &m->base, &m->has_base,
	    err, errlen));
	return (proto_field_doc(body, n, "content", PROTO_REQ | PROTO_MAP,
	    &m->content, err, errlen));
}
