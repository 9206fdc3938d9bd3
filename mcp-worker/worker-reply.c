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

/* The cells of a notebook, packed back to back, decoded on demand. */
struct worker_nb_doc {
	char			*packed;
	size_t			*off;		/* n + 1: cell i at off[i] */
	size_t			 n;
	struct json_object	**cell;		/* decoded, or NULL */
	struct json_object	*all;		/* the array, once asked */
};

static struct worker_nb_doc	*worker_nb_doc_create(const msgpack_object *);
static void	worker_nb_doc_free(struct worker_nb_doc *);

/* Pack each cell of cells (an array) into one buffer, by offset. */
static struct worker_nb_doc *
worker_nb_doc_create(const msgpack_object *cells)
{
	struct worker_nb_doc	*d;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	size_t			 i;

	d = xcalloc(1, sizeof *d);
	if (cells->type == MSGPACK_OBJECT_ARRAY)
		d->n = cells->via.array.size;
	d->off = xcalloc(d->n + 1, sizeof *d->off);
	d->cell = xcalloc(d->n + 1, sizeof *d->cell);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (i = 0; i < d->n; i++) {
		d->off[i] = sb.size;
		msgpack_pack_object(&pk, cells->via.array.ptr[i]);
	}
	d->off[d->n] = sb.size;
	d->packed = msgpack_sbuffer_release(&sb);
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
	free(d->off);
	free(d->packed);
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
	msgpack_unpacked	 u;

	if (i >= d->n)
		return (NULL);
	if (d->cell[i] != NULL)
		return (d->cell[i]);
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, d->packed + d->off[i],
	    d->off[i + 1] - d->off[i], NULL) == MSGPACK_UNPACK_SUCCESS)
		d->cell[i] = mpjson_unpack(&u.data);
	msgpack_unpacked_destroy(&u);
	if (d->cell[i] == NULL)
		d->cell[i] = json_object_new_object();	/* cannot happen */
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
 * The index of the cell whose cell_id is id, or -1: read from the packed
 * cells without decoding them.
 */
ssize_t
worker_nb_find(const struct worker_nb *nb, const char *id)
{
	struct worker_nb_doc	*d = nb->doc;
	msgpack_unpacked	 u;
	const char		*s;
	size_t			 i, len, idlen = strlen(id);
	ssize_t			 found = -1;

	msgpack_unpacked_init(&u);
	for (i = 0; i < d->n && found == -1; i++) {
		if (d->cell[i] != NULL) {
			s = json_object_get_string(json_object_object_get(
			    d->cell[i], "cell_id"));
			if (s != NULL && strcmp(s, id) == 0)
				found = (ssize_t)i;
			continue;
		}
		if (msgpack_unpack_next(&u, d->packed + d->off[i],
		    d->off[i + 1] - d->off[i], NULL) !=
		    MSGPACK_UNPACK_SUCCESS)
			continue;
		s = proto_get_str(&u.data, "cell_id", &len);
		if (s != NULL && len == idlen && memcmp(s, id, len) == 0)
			found = (ssize_t)i;
	}
	msgpack_unpacked_destroy(&u);
	return (found);
}

/* Decode a ROOM_JOINED or ROOM_CONTENT (type); NULL with *cause if bad. */
struct worker_nb *
worker_nb_read(uint16_t type, const msgpack_object *body, char **cause)
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
	nb->doc = worker_nb_doc_create(m.cells.obj);
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
