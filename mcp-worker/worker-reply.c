/* SPDX-License-Identifier: ISC */
/*
 * worker-reply.c: the daemon's replies the tools render: a notebook
 * (ROOM_JOINED, ROOM_CONTENT; shared by reference, the room keeps the
 * last one) and a run (EXEC_STATE).  Their codecs check and type them;
 * only their documents (cells, metadata, warnings) become JSON.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

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
	nb->cells = mpjson_unpack(m.cells.obj);
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
	json_object_put(nb->cells);
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
