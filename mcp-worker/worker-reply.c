/* SPDX-License-Identifier: ISC */
/*
 * worker-reply.c: small readers of the daemon's replies that several
 * tools share.
 */

#include <stdlib.h>

#include "worker.h"

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
