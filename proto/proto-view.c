/* SPDX-License-Identifier: ISC */
/*
 * proto-view.c: the live view (runtimed-web, docs/decisions/025):
 * VIEW_READY, whose port has a range.  VIEW_OPEN, VIEW_URL and
 * VIEW_STATE_REPLY are declared by their fields in proto-body.h.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

void
proto_view_ready_pack(msgpack_packer *pk, const struct proto_view_ready *m)
{
	msgpack_pack_map(pk, 1);
	proto_pack_int(pk, "port", m->port);
}

int
proto_view_ready_unpack(const msgpack_object *body, struct proto_view_ready *m,
    char *err, size_t errlen)
{
	const char	*n = "VIEW_READY";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "port", PROTO_REQ | PROTO_UNSIGNED,
	    &m->port, NULL, err, errlen));
	if (m->port < 1 || m->port > 65535) {
		snprintf(err, errlen, "VIEW_READY: port is not 1-65535");
		return (-1);
	}
	return (0);
}
