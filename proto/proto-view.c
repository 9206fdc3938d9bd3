/* SPDX-License-Identifier: ISC */
/*
 * proto-view.c: the live view (runtimed-web, docs/decisions/025):
 * VIEW_OPEN, VIEW_URL, VIEW_READY, VIEW_STATE_REPLY.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

void
proto_view_open_pack(msgpack_packer *pk, const struct proto_view_open *m)
{
	msgpack_pack_map(pk, 1);
	proto_pack_pstr(pk, "notebook_id", &m->notebook_id);
}

int
proto_view_open_unpack(const msgpack_object *body, struct proto_view_open *m,
    char *err, size_t errlen)
{
	const char	*n = "VIEW_OPEN";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	return (proto_field_str(body, n, "notebook_id", PROTO_NONUL,
	    &m->notebook_id, err, errlen));
}

void
proto_view_url_pack(msgpack_packer *pk, const struct proto_view_url *m)
{
	msgpack_pack_map(pk, 3);
	proto_pack_pstr(pk, "url", &m->url);
	proto_pack_pstr(pk, "address", &m->address);
	proto_pack_int(pk, "port", m->port);
}

int
proto_view_url_unpack(const msgpack_object *body, struct proto_view_url *m,
    char *err, size_t errlen)
{
	const char	*n = "VIEW_URL";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "url", PROTO_REQ | PROTO_NONUL,
	    &m->url, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "address", PROTO_REQ | PROTO_NONUL,
	    &m->address, err, errlen));
	return (proto_field_int(body, n, "port", PROTO_REQ | PROTO_UNSIGNED,
	    &m->port, NULL, err, errlen));
}

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

void
proto_view_state_reply_pack(msgpack_packer *pk,
    const struct proto_view_state_reply *m)
{
	msgpack_pack_map(pk, 5);
	proto_pack_uint(pk, "seq", m->seq);
	proto_pack_pstr(pk, "kernel_state", &m->kernel_state);
	proto_pack_doc(pk, "cells", &m->cells);
	proto_pack_doc(pk, "peers", &m->peers);
	proto_pack_pstr(pk, "last_client", &m->last_client);
}

int
proto_view_state_reply_unpack(const msgpack_object *body,
    struct proto_view_state_reply *m, char *err, size_t errlen)
{
	const char	*n = "VIEW_STATE_REPLY";
	int64_t		 v;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "seq", PROTO_REQ | PROTO_UNSIGNED,
	    &v, NULL, err, errlen));
	m->seq = (uint64_t)v;
	PROTO_TRY(proto_field_str(body, n, "kernel_state", PROTO_REQ,
	    &m->kernel_state, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "cells", PROTO_REQ | PROTO_ARRAY,
	    &m->cells, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "peers", PROTO_REQ | PROTO_ARRAY,
	    &m->peers, err, errlen));
	return (proto_field_str(body, n, "last_client", 0, &m->last_client,
	    err, errlen));
}
