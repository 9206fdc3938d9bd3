/* SPDX-License-Identifier: ISC */
/*
 * peer-dispatch.c: a receiver's dispatch table, OpenSSH monitor.c's
 * {type, flags, handler}: which types a receiver takes and who handles
 * each (docs/decisions/067).  A row marked PEER_DISPATCH_UNPACK has its
 * body read through the type's codec in proto's table first, and a body
 * the codec refuses goes to the table's refuse callback: the one place a
 * receiver says what a bad body costs (an ERROR back, or the peer
 * killed), never the daemon.
 */

#include <stddef.h>

#include "common.h"

/* The row for a type, or NULL. */
const struct peer_dispatch *
peer_dispatch_find(const struct peer_dispatch *rows, uint16_t type)
{
	for (; rows->handler != NULL; rows++) {
		if (rows->type == type)
			return (rows);
	}
	return (NULL);
}

/*
 * Hand a frame to its row's handler, its body typed when the row says
 * so; refuse (with the codec's reason) takes a body that does not read.
 * -1 when no row takes the type: the caller says what that costs.
 */
int
peer_dispatch(const struct peer_dispatch *rows, peer_refuse_cb refuse,
    struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	const struct peer_dispatch	*d;
	union {
		max_align_t	align;
		char		bytes[PROTO_BODY_MAX];
	}				 m;
	char				 err[256];

	if ((d = peer_dispatch_find(rows, hdr->type)) == NULL)
		return (-1);
	if (~d->flags & PEER_DISPATCH_UNPACK) {
		d->handler(p, hdr, body, NULL, arg);
		return (0);
	}
	if (proto_msg_unpack(hdr->type, body, &m, err, sizeof err) != 0) {
		refuse(p, hdr, err, arg);
		return (0);
	}
	d->handler(p, hdr, body, &m, arg);
	return (0);
}

/* PING: PONG, for every receiver's table. */
void
peer_dispatch_pong(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	peer_send_raw(p, PROTO_MSG_PONG, hdr->id, "\x80", 1);
}

/* A type a receiver takes and has nothing to do about (a late OK). */
void
peer_dispatch_ignore(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
}
