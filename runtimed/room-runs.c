/* SPDX-License-Identifier: ISC */
/*
 * room-runs.c: EXEC_LIST, the runs a notebook keeps, newest first, one
 * summary each: who asked (client, session), when, the kernel session
 * it ran in, its status and its cells.  Read from the store once every
 * pending record is written, so runs in memory and runs from before a
 * restart are listed alike; a record of an older daemon without who
 * fields is listed with them absent.
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* Cell ids a summary names; the rest are counted. */
#define ROOM_RUNS_CELL_IDS	8

struct room_runs_entry {
	char			*rec;	/* a copy: u points into it */
	msgpack_unpacked	 u;
	struct proto_exec_state	 m;
	int64_t			 when;	/* submitted, else last written */
	int64_t			 written_at;
};

struct room_runs {
	struct room		*room;
	struct room_runs_entry	*v;
	size_t			 n;
};

static void	room_runs_add(const void *, size_t, int64_t, void *);
static int	room_runs_cmp(const void *, const void *);
static const char *room_runs_status(const struct proto_exec_state *);
static void	room_runs_pack_one(msgpack_packer *,
		    const struct room_runs_entry *);
static void	room_runs_pack(msgpack_packer *, const void *);
static void	room_runs_list(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The requests this file answers on a joined room: server-client.c
 * tries this table, its handlers given the room (docs/decisions/096).
 */
const struct peer_dispatch room_runs_table[] = {
	{ PROTO_MSG_EXEC_LIST, PEER_DISPATCH_UNPACK, room_runs_list },
	{ 0, 0, NULL }
};

static void
room_runs_add(const void *rec, size_t len, int64_t written_at, void *arg)
{
	struct room_runs	*rs = arg;
	struct room_runs_entry	*en;
	char			 err[256];

	rs->v = xreallocarray(rs->v, rs->n + 1, sizeof *rs->v);
	en = &rs->v[rs->n];
	memset(en, 0, sizeof *en);
	en->rec = xmalloc(len + 1);
	memcpy(en->rec, rec, len);
	msgpack_unpacked_init(&en->u);
	if (proto_frame_unpack(&en->u, en->rec, len, NULL) != 0 ||
	    proto_exec_state_unpack(&en->u.data, &en->m, err,
	    sizeof err) != 0) {
		log_warnx("a run of room %s: unreadable record", rs->room->id);
		msgpack_unpacked_destroy(&en->u);
		free(en->rec);
		return;
	}
	en->written_at = written_at;
	en->when = en->m.has_submitted_at ? en->m.submitted_at : written_at;
	rs->n++;
}

/* Newest first. */
static int
room_runs_cmp(const void *a, const void *b)
{
	const struct room_runs_entry	*x = a, *y = b;

	if (x->when != y->when)
		return (x->when < y->when ? 1 : -1);
	return (0);
}

/* A record left unfinished by an earlier daemon ended with it. */
static const char *
room_runs_status(const struct proto_exec_state *m)
{
	enum proto_run_status	rs;

	if (proto_run_status_parse(m->status.ptr, m->status.len, &rs) == 0 &&
	    !proto_run_status_ended(rs) &&
	    m->daemon_started_at != runtimed_incarnation.started_at)
		return (proto_run_status_name(PROTO_RUN_KERNEL_DIED));
	return (NULL);
}

static void
room_runs_pack_one(msgpack_packer *pk, const struct room_runs_entry *en)
{
	const struct proto_exec_state	*m = &en->m;
	const msgpack_object		*cells = m->cells.obj, *c;
	const char			*st, *id;
	size_t				 i, n, k, len;

	n = cells != NULL ? cells->via.array.size : 0;
	msgpack_pack_map(pk, 6 + (m->who.client_name.ptr != NULL) +
	    (m->who.client_version.ptr != NULL) +
	    (m->who.session.ptr != NULL) +
	    (m->kernel_session.ptr != NULL));
	proto_pack_pstr(pk, "execution_id", &m->execution_id);
	if ((st = room_runs_status(m)) != NULL)
		proto_pack_str(pk, "status", st);
	else
		proto_pack_pstr(pk, "status", &m->status);
	if (m->who.client_name.ptr != NULL)
		proto_pack_pstr(pk, "client_name", &m->who.client_name);
	if (m->who.client_version.ptr != NULL)
		proto_pack_pstr(pk, "client_version", &m->who.client_version);
	if (m->who.session.ptr != NULL)
		proto_pack_pstr(pk, "session", &m->who.session);
	if (m->kernel_session.ptr != NULL)
		proto_pack_pstr(pk, "kernel_session", &m->kernel_session);
	proto_pack_int(pk, "submitted_at", en->when);
	proto_pack_int(pk, "updated_at", en->written_at);
	proto_pack_uint(pk, "ncells", n);
	proto_pack_key(pk, "cell_ids");
	k = n < ROOM_RUNS_CELL_IDS ? n : ROOM_RUNS_CELL_IDS;
	msgpack_pack_array(pk, k);
	for (i = 0; i < k; i++) {
		c = &cells->via.array.ptr[i];
		if ((id = proto_get_str(c, "cell_id", &len)) != NULL)
			msgpack_pack_str_with_body(pk, id, len);
		else
			msgpack_pack_nil(pk);
	}
}

static void
room_runs_pack(msgpack_packer *pk, const void *arg)
{
	const struct room_runs	*rs = arg;
	size_t			 i;

	msgpack_pack_array(pk, rs->n);
	for (i = 0; i < rs->n; i++)
		room_runs_pack_one(pk, &rs->v[i]);
}

/* EXEC_LIST {limit?} -> EXEC_LIST_REPLY {runs} */
static void
room_runs_list(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_list	*m = mv;
	struct room			*r = arg;
	struct proto_exec_runs		 rm;
	struct room_runs		 rs;
	struct mpbuf			 b;
	uint32_t			 id = hdr->id;
	int				 limit = PROTO_EXEC_LIST_MAX;
	size_t				 i;

	if (m->has_limit && m->limit > 0 && m->limit < PROTO_EXEC_LIST_MAX)
		limit = (int)m->limit;
	memset(&rs, 0, sizeof rs);
	rs.room = r;
	if (runtimed_store != NULL && runtimed_writer != NULL) {
		room_exec_flush();
		if (store_exec_list(runtimed_store, r->id, limit, room_runs_add,
		    &rs) != 0) {
			peer_send_error(p, id, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "the state database cannot be read; runtimectl "
			    "doctor says why");
			goto out;
		}
	}
	/* No run kept: rs.v is NULL, and qsort must not be given it. */
	if (rs.n > 1)
		qsort(rs.v, rs.n, sizeof *rs.v, room_runs_cmp);
	memset(&rm, 0, sizeof rm);
	rm.runs.pack = room_runs_pack;
	rm.runs.arg = &rs;
	mpbuf_init(&b);
	proto_exec_runs_pack(&b.pk, &rm);
	peer_send(p, PROTO_MSG_EXEC_LIST_REPLY, id, &b.sb);
	mpbuf_free(&b);
out:
	for (i = 0; i < rs.n; i++) {
		msgpack_unpacked_destroy(&rs.v[i].u);
		free(rs.v[i].rec);
	}
	free(rs.v);
}
