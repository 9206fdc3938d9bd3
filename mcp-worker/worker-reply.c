/* SPDX-License-Identifier: ISC */
/*
 * worker-reply.c: the daemon's replies the tools render: a notebook
 * (ROOM_JOINED, ROOM_CONTENT; shared by reference, the room keeps the
 * last one) and a run (EXEC_STATE).  Their codecs check and type them;
 * only their documents (cells, metadata, warnings) become JSON.  A
 * notebook's cells stay packed, each becoming JSON when first asked
 * for: a view of a few cells decodes those (docs/decisions/035).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/*
 * The cells of a notebook as the daemon sent them (msgpack objects in a
 * zone of their own), each decoded to JSON when first asked for.
 */
struct worker_nb_doc {
	msgpack_zone		*zone;
	const msgpack_object	*cells;		/* n, in zone */
	size_t			 n;
	struct json_object	**cell;		/* decoded, or NULL */
	struct json_object	*all;		/* the array, if asked */
};

static struct worker_nb_doc	*worker_nb_doc_create(const msgpack_object *,
				    msgpack_zone *);
static void	worker_nb_doc_free(struct worker_nb_doc *);

/*
 * The cells (an array) kept: in zone, the frame's own (the doc takes
 * it), or else copied into one (packed and unpacked again).
 */
static struct worker_nb_doc *
worker_nb_doc_create(const msgpack_object *cells, msgpack_zone *zone)
{
	struct worker_nb_doc	*d;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;

	d = xcalloc(1, sizeof *d);
	if (zone == NULL) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_object(&pk, *cells);
		msgpack_unpacked_init(&u);
		if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) !=
		    MSGPACK_UNPACK_SUCCESS ||
		    !msgpack_zone_push_finalizer(u.zone, free, sb.data))
			fatalx("cannot copy a notebook's cells");
		zone = msgpack_unpacked_release_zone(&u);
		cells = &u.data;	/* the object itself is a copy */
	}
	d->zone = zone;
	if (cells->type == MSGPACK_OBJECT_ARRAY) {
		d->n = cells->via.array.size;
		d->cells = cells->via.array.ptr;
	}
	d->cell = xcalloc(d->n + 1, sizeof *d->cell);
	return (d);
}

static void
worker_nb_doc_free(struct worker_nb_doc *d)
{
	size_t	i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++)
		json_object_put(d->cell[i]);
	json_object_put(d->all);
	free(d->cell);
	msgpack_zone_free(d->zone);
	free(d);
}

/* How many cells the notebook has. */
size_t
worker_nb_count(const struct worker_nb *nb)
{
	return (nb->doc->n);
}

/* Cell i as JSON (borrowed, decoded once), or NULL past the end. */
struct json_object *
worker_nb_cell(const struct worker_nb *nb, size_t i)
{
	struct worker_nb_doc	*d = nb->doc;

	if (i >= d->n)
		return (NULL);
	if (d->cell[i] == NULL &&
	    (d->cell[i] = mpjson_unpack(&d->cells[i])) == NULL)
		d->cell[i] = json_object_new_object();	/* a nil cell */
	return (d->cell[i]);
}

/* Every cell as a JSON array (borrowed; shares the cells). */
struct json_object *
worker_nb_cells(const struct worker_nb *nb)
{
	struct worker_nb_doc	*d = nb->doc;
	size_t			 i;

	if (d->all != NULL)
		return (d->all);
	d->all = json_object_new_array_ext((int)d->n);
	for (i = 0; i < d->n; i++)
		json_object_array_add(d->all,
		    json_object_get(worker_nb_cell(nb, i)));
	return (d->all);
}

/*
 * The index of the cell whose cell_id is id, or -1: read from the cells
 * as sent, without decoding them.
 */
ssize_t
worker_nb_find(const struct worker_nb *nb, const char *id)
{
	struct worker_nb_doc	*d = nb->doc;
	const char		*s;
	size_t			 i, len, idlen = strlen(id);

	for (i = 0; i < d->n; i++) {
		s = proto_get_str(&d->cells[i], "cell_id", &len);
		if (s != NULL && len == idlen && memcmp(s, id, len) == 0)
			return ((ssize_t)i);
	}
	return (-1);
}

/*
 * Decode a ROOM_JOINED or ROOM_CONTENT (type); NULL with *cause if bad.
 * zone, if not NULL, is the one body lives in (worker_daemon_take): the
 * notebook keeps it rather than a copy of the cells; the caller keeps it
 * on failure.
 */
struct worker_nb *
worker_nb_read(uint16_t type, const msgpack_object *body, msgpack_zone *zone,
    char **cause)
{
	struct proto_room_joined	 m;
	struct worker_nb		*nb;
	char				 err[256];
	int				 r;

	if (type == PROTO_MSG_ROOM_CONTENT)
		r = proto_room_content_unpack(body, &m, err, sizeof err);
	else if (type == PROTO_MSG_ROOM_JOINED)
		r = proto_room_joined_unpack(body, &m, err, sizeof err);
	else {
		snprintf(err, sizeof err, "%s instead of the notebook",
		    proto_msg_name(type));
		r = -1;
	}
	if (r != 0) {
		xasprintf(cause, "unexpected reply from runtimed: %s", err);
		return (NULL);
	}
	nb = xcalloc(1, sizeof *nb);
	nb->refs = 1;
	nb->notebook_id = proto_str_dup(&m.notebook_id);
	nb->path = proto_str_dup(&m.path);
	nb->kernel_name = m.kernel_name.ptr != NULL ?
	    proto_str_dup(&m.kernel_name) : xstrdup("");
	nb->kernel_state = m.kernel_state.ptr != NULL ?
	    proto_str_dup(&m.kernel_state) : xstrdup("none");
	nb->dirty = m.dirty;
	nb->seq = (int64_t)m.seq;
	nb->doc = worker_nb_doc_create(m.cells.obj, zone);
	if (m.metadata.obj != NULL)
		nb->metadata = mpjson_unpack(m.metadata.obj);
	if (m.warnings.obj != NULL)
		nb->warnings = mpjson_unpack(m.warnings.obj);
	return (nb);
}

struct worker_nb *
worker_nb_ref(struct worker_nb *nb)
{
	if (nb != NULL)
		nb->refs++;
	return (nb);
}

void
worker_nb_unref(struct worker_nb *nb)
{
	if (nb == NULL || --nb->refs > 0)
		return;
	free(nb->notebook_id);
	free(nb->path);
	free(nb->kernel_name);
	free(nb->kernel_state);
	worker_nb_doc_free(nb->doc);
	json_object_put(nb->metadata);
	json_object_put(nb->warnings);
	free(nb);
}

/* The kernel {name, state} as the tools report it. */
struct json_object *
worker_nb_kernel(const struct worker_nb *nb)
{
	struct json_object	*o;

	o = json_object_new_object();
	json_object_object_add(o, "name",
	    json_object_new_string(nb->kernel_name));
	json_object_object_add(o, "state",
	    json_object_new_string(nb->kernel_state));
	return (o);
}

/* Decode an EXEC_STATE; NULL with *cause if it is not one. */
struct worker_exec *
worker_exec_read(const msgpack_object *body, char **cause)
{
	struct proto_exec_state	 m;
	struct worker_exec	*e;
	char			 err[256];

	if (proto_exec_state_unpack(body, &m, err, sizeof err) != 0) {
		xasprintf(cause, "unexpected reply from runtimed: %s", err);
		return (NULL);
	}
	e = xcalloc(1, sizeof *e);
	e->execution_id = proto_str_dup(&m.execution_id);
	e->status = proto_str_dup(&m.status);
	e->cells = mpjson_unpack(m.cells.obj);
	if (m.input.obj != NULL)
		e->input = mpjson_unpack(m.input.obj);
	return (e);
}

void
worker_exec_free(struct worker_exec *e)
{
	if (e == NULL)
		return;
	free(e->execution_id);
	free(e->status);
	json_object_put(e->cells);
	json_object_put(e->input);
	free(e);
}

/* A string field of a reply as JSON: a string, or null when absent. */
struct json_object *
worker_reply_str(const struct proto_str *s)
{
	if (s->ptr == NULL)
		return (NULL);
	return (json_object_new_string_len(s->ptr, (int)s->len));
}

/* The seq of a ROOM_EDIT_REPLY, or -1 (logged) when it is not one. */
int64_t
worker_reply_edit_seq(const msgpack_object *body)
{
	struct proto_room_edit_reply	m;
	char				err[256];

	if (proto_room_edit_reply_unpack(body, &m, err, sizeof err) != 0) {
		log_warnx("%s", err);
		return (-1);
	}
	return ((int64_t)m.seq);
}
