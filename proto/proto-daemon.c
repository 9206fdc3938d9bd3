/* SPDX-License-Identifier: ISC */
/*
 * proto-daemon.c: codecs of the generic replies (OK, ERROR, PING, PONG)
 * and of DAEMON_STATUS, DAEMON_STATUS_REPLY and DAEMON_STOP.
 */

#include <string.h>

#include "proto.h"

/*
 * OK, PING, PONG and every request without fields (DAEMON_STATUS,
 * DAEMON_STOP, ROOM_LIST, ROOM_LEAVE, ROOM_GET, KERNEL_INTERRUPT,
 * KERNEL_RESTART, KERNEL_INFO, KERNEL_LIST): an empty map.  Whatever
 * keys arrive in one are ignored, so these need no unpacker.
 */
void
proto_empty_pack(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 0);
}

void
proto_error_pack(msgpack_packer *pk, const struct proto_error *e)
{
	msgpack_pack_map(pk, 2 + (e->reason.ptr != NULL) + e->has_bytes +
	    e->has_cap + e->has_index + 3 * (e->cell_id.ptr != NULL));
	proto_pack_pstr(pk, "code", &e->code);
	proto_pack_pstr(pk, "message", &e->message);
	if (e->reason.ptr != NULL)
		proto_pack_pstr(pk, "reason", &e->reason);
	if (e->has_bytes)
		proto_pack_uint(pk, "bytes", e->bytes);
	if (e->has_cap)
		proto_pack_uint(pk, "cap", e->cap);
	if (e->has_index)
		proto_pack_int(pk, "index", e->index);
	if (e->cell_id.ptr != NULL) {
		proto_pack_pstr(pk, "cell_id", &e->cell_id);
		proto_pack_pstr(pk, "version", &e->version);
		proto_pack_pstr(pk, "source", &e->source);
	}
}

int
proto_error_unpack(const msgpack_object *body, struct proto_error *e,
    char *err, size_t errlen)
{
	const char	*m = "ERROR";
	int64_t		 v;

	memset(e, 0, sizeof *e);
	if (proto_field_body(body, m, err, errlen) != 0 ||
	    proto_field_str(body, m, "code", PROTO_REQ, &e->code, err,
	    errlen) != 0 ||
	    proto_field_str(body, m, "message", PROTO_REQ, &e->message, err,
	    errlen) != 0 ||
	    proto_field_str(body, m, "reason", 0, &e->reason, err,
	    errlen) != 0 ||
	    proto_field_int(body, m, "bytes", PROTO_UNSIGNED, &v,
	    &e->has_bytes, err, errlen) != 0)
		return (-1);
	e->bytes = (uint64_t)v;
	if (proto_field_int(body, m, "cap", PROTO_UNSIGNED, &v, &e->has_cap,
	    err, errlen) != 0)
		return (-1);
	e->cap = (uint64_t)v;
	PROTO_TRY(proto_field_int(body, m, "index", 0, &e->index,
	    &e->has_index, err, errlen));
	/* edit_conflict: all three or none. */
	PROTO_TRY(proto_field_str(body, m, "cell_id", 0, &e->cell_id, err,
	    errlen));
	if (e->cell_id.ptr == NULL)
		return (0);
	PROTO_TRY(proto_field_str(body, m, "version", PROTO_REQ | PROTO_NONUL,
	    &e->version, err, errlen));
	return (proto_field_str(body, m, "source", PROTO_REQ, &e->source, err,
	    errlen));
}

void
proto_daemon_status_reply_pack(msgpack_packer *pk,
    const struct proto_daemon_status_reply *s)
{
	msgpack_pack_map(pk, 10 + 7 * (s->has_detail != 0) +
	    (s->view.ptr != NULL));
	proto_pack_int(pk, "pid", s->pid);
	proto_pack_int(pk, "started_at", s->started_at);
	proto_pack_pstr(pk, "version", &s->version);
	proto_pack_uint(pk, "rooms", s->rooms);
	proto_pack_uint(pk, "peers", s->peers);
	proto_pack_uint(pk, "kernels", s->kernels);
	proto_pack_uint(pk, "fds_open", s->fds_open);
	proto_pack_uint(pk, "fds_limit", s->fds_limit);
	proto_pack_uint(pk, "peers_room", s->peers_room);
	proto_pack_doc(pk, "warnings", &s->warnings);
	if (s->view.ptr != NULL)
		proto_pack_pstr(pk, "view", &s->view);
	if (!s->has_detail)
		return;
	proto_pack_uint(pk, "agents", s->agents);
	proto_pack_uint(pk, "pool_size", s->pool_size);
	proto_pack_uint(pk, "pool_ready", s->pool_ready);
	proto_pack_pstr(pk, "state_dir", &s->state_dir);
	proto_pack_pstr(pk, "store_damage", &s->store_damage);
	proto_pack_pstr(pk, "store_write_error", &s->store_write_error);
	proto_pack_doc(pk, "kernel_list", &s->kernel_list);
}

int
proto_daemon_status_reply_unpack(const msgpack_object *body,
    struct proto_daemon_status_reply *s, char *err, size_t errlen)
{
	const char	*m = "DAEMON_STATUS_REPLY";
	const char	*counts[] = { "rooms", "peers", "kernels" };
	const char	*fds[] = { "fds_open", "fds_limit", "peers_room" };
	const char	*more[] = { "agents", "pool_size", "pool_ready" };
	uint64_t	*cv[] = { &s->rooms, &s->peers, &s->kernels };
	uint64_t	*fv[] = { &s->fds_open, &s->fds_limit, &s->peers_room };
	uint64_t	*mv[] = { &s->agents, &s->pool_size, &s->pool_ready };
	int64_t		 v;
	int		 has;
	size_t		 i;

	memset(s, 0, sizeof *s);
	if (proto_field_body(body, m, err, errlen) != 0 ||
	    proto_field_int(body, m, "pid", PROTO_REQ, &s->pid, NULL, err,
	    errlen) != 0 ||
	    proto_field_int(body, m, "started_at", PROTO_REQ, &s->started_at,
	    NULL, err, errlen) != 0 ||
	    proto_field_str(body, m, "version", PROTO_REQ, &s->version, err,
	    errlen) != 0 ||
	    proto_field_doc(body, m, "warnings", PROTO_ARRAY, &s->warnings,
	    err, errlen) != 0 ||
	    proto_field_str(body, m, "view", 0, &s->view, err, errlen) != 0)
		return (-1);
	for (i = 0; i < 3; i++) {
		if (proto_field_int(body, m, counts[i],
		    PROTO_REQ | PROTO_UNSIGNED, &v, NULL, err, errlen) != 0)
			return (-1);
		*cv[i] = (uint64_t)v;
	}
	/* Added later: a daemon may not report them. */
	s->has_fds = 1;
	for (i = 0; i < 3; i++) {
		if (proto_field_int(body, m, fds[i], PROTO_UNSIGNED, &v, &has,
		    err, errlen) != 0)
			return (-1);
		*fv[i] = (uint64_t)v;
		s->has_fds &= has;
	}
	s->has_detail = 1;
	for (i = 0; i < 3; i++) {
		if (proto_field_int(body, m, more[i], PROTO_UNSIGNED, &v, &has,
		    err, errlen) != 0)
			return (-1);
		*mv[i] = (uint64_t)v;
		s->has_detail &= has;
	}
	if (proto_field_str(body, m, "state_dir", 0, &s->state_dir, err,
	    errlen) != 0 ||
	    proto_field_str(body, m, "store_damage", 0, &s->store_damage, err,
	    errlen) != 0 ||
	    proto_field_str(body, m, "store_write_error", 0,
	    &s->store_write_error, err, errlen) != 0 ||
	    proto_field_doc(body, m, "kernel_list", PROTO_ARRAY,
	    &s->kernel_list, err, errlen) != 0)
		return (-1);
	if (s->state_dir.ptr == NULL || s->kernel_list.obj == NULL)
		s->has_detail = 0;
	return (0);
}
