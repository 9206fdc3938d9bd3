/* SPDX-License-Identifier: ISC */
/*
 * server-client.c: one client connection (worker, runtimed status/stop,
 * proxy).  HELLO first; then room-less requests, or requests on the one
 * room the connection joined.  A bad client is closed, never the daemon.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

struct server_client {
	struct peer		*peer;
	int			 hello;
	char			 kind[16];
	char			 label[128];
	char			 client[128];	/* MCP client's name */
	struct room		*room;
	int			 editing;	/* a batch not yet durable */
	int			 joining;	/* a remote open waits */
	TAILQ_ENTRY(server_client) entry;
};
static TAILQ_HEAD(, server_client) server_clients =
    TAILQ_HEAD_INITIALIZER(server_clients);

static void	server_client_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static void	server_client_hello(struct server_client *,
		    const struct proto_header *, const msgpack_object *);
static void	server_client_joined(struct room *, struct peer *, uint32_t,
		    const char *, const char *);
static void	server_client_edit_cells(msgpack_packer *, const void *);
static void	server_client_saved(struct room *, struct peer *, uint32_t,
		    const char *, const char *);
static void	server_client_edited(struct room *, struct peer *, uint32_t,
		    struct room_nb_result *, const char *, const char *);
static void	server_client_no_changes(msgpack_packer *, const void *);
static void	server_client_refuse(struct peer *,
		    const struct proto_header *, const char *, void *);
static int	server_client_concern(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    struct room *);
static void	server_client_status(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_join(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_edit(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static int	server_client_lists(const struct proto_header *,
		    const msgpack_object *);
static void	server_client_interrupt(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	server_client_save(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_changes(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	server_client_wait(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_leave(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_get(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_restart(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	server_client_kernel_info(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	server_client_stop(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_list(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_client_view_ready(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static int	server_client_reply(struct peer *, uint16_t, uint32_t,
		    const msgpack_sbuffer *, const char *, const char *);
static u_int	server_client_count_kind(const char *);

/*
 * Requests that need a joined room (PROTO_F_ROOM).  A body that does not
 * read is answered invalid_argument (server_client_refuse).
 */
static const struct peer_dispatch server_client_room_table[] = {
	{ PROTO_MSG_ROOM_LEAVE, 0, server_client_leave },
	{ PROTO_MSG_ROOM_GET, 0, server_client_get },
	{ PROTO_MSG_ROOM_EDIT, PEER_DISPATCH_UNPACK, server_client_edit },
	{ PROTO_MSG_ROOM_SAVE, PEER_DISPATCH_UNPACK, server_client_save },
	{ PROTO_MSG_ROOM_CHANGES, 0, server_client_changes },
	{ PROTO_MSG_ROOM_WAIT, PEER_DISPATCH_UNPACK, server_client_wait },
	{ PROTO_MSG_KERNEL_INTERRUPT, 0, server_client_interrupt },
	{ PROTO_MSG_KERNEL_RESTART, 0, server_client_restart },
	{ PROTO_MSG_KERNEL_INFO, 0, server_client_kernel_info },
	{ 0, 0, NULL }
};

/*
 * Then the tables of the concerns that answer requests in their own
 * files, rows and handlers together, each handler given the client's
 * room (NULL when it joined none; a request that needs one never gets
 * there without, PROTO_F_ROOM): a new request of one of these concerns
 * needs no line here (docs/decisions/096).
 */
static const struct peer_dispatch *const server_client_concerns[] = {
	room_exec_table,
	room_runs_table,
	room_input_table,
	kernel_spec_table,
	kernel_introspect_table,
	kernel_blob_table,
	server_web_table,
};

/* Requests any client may send, in a room or not. */
static const struct peer_dispatch server_client_table[] = {
	{ PROTO_MSG_PING, 0, peer_dispatch_pong },
	{ PROTO_MSG_DAEMON_STATUS, 0, server_client_status },
	{ PROTO_MSG_DAEMON_STOP, 0, server_client_stop },
	{ PROTO_MSG_ROOM_LIST, 0, server_client_list },
	{ PROTO_MSG_ROOM_CREATE, 0, server_client_join },
	{ PROTO_MSG_ROOM_OPEN, 0, server_client_join },
	{ PROTO_MSG_VIEW_READY, 0, server_client_view_ready },
	{ 0, 0, NULL }
};

/*
 * Send a reply, or, when it is over its type's frame cap, ERROR {code,
 * message, reason: "too_large", bytes, cap} saying how to ask for less:
 * every request is answered.  Returns 0 when the reply itself was sent.
 */
static int
server_client_reply(struct peer *p, uint16_t type, uint32_t id,
    const msgpack_sbuffer *sb, const char *code, const char *hint)
{
	struct mpbuf		b;
	struct proto_error	e;
	uint32_t		cap = proto_msg_cap(type);
	char			*msg;

	if (sb->size <= cap)
		return (peer_send(p, type, id, sb));
	xasprintf(&msg, "the %s reply would be %.1f MB, over its %u MiB "
	    "frame cap: %s", proto_msg_name(type), sb->size / 1e6,
	    cap / (1024 * 1024), hint);
	log_warnx("peer %s: %s", peer_name(p), msg);
	memset(&e, 0, sizeof e);
	e.code = proto_str_make(code);
	e.message = proto_str_make(msg);
	e.reason = proto_str_make("too_large");
	e.has_bytes = e.has_cap = 1;
	e.bytes = sb->size;
	e.cap = cap;
	mpbuf_init(&b);
	proto_error_pack(&b.pk, &e);
	peer_send(p, PROTO_MSG_ERROR, id, &b.sb);
	mpbuf_free(&b);
	free(msg);
	return (-1);
}

#define SERVER_CLIENT_NB_HINT "clear large outputs (clear_outputs) or " \
	"delete cells to make it smaller; it cannot be sent whole"

/* A new connection: only our own uid may talk to us.  Its peer, or NULL. */
struct peer *
server_client_accept(int fd)
{
	struct server_client	*c;
	uid_t			 uid;

	if (sockdir_peer_uid(fd, &uid) != 0 || uid != getuid()) {
		log_warnx("refusing a connection from uid %ld",
		    sockdir_peer_uid(fd, &uid) != 0 ? -1L : (long)uid);
		close(fd);
		return (NULL);
	}
	c = xcalloc(1, sizeof *c);
	c->peer = peer_create(runtimed_base, fd, "client",
	    server_client_dispatch, c);
	TAILQ_INSERT_TAIL(&server_clients, c, entry);
	return (c->peer);
}

/* VIEW_STATE's peers: [{kind, label, client}] of a room, not the view. */
void
server_client_pack_peers(msgpack_packer *pk, const void *arg)
{
	const struct room	*r = arg;
	struct server_client	*c;
	u_int			 n = 0;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->room == r && strcmp(c->kind, PROTO_PEER_WEB) != 0)
			n++;
	}
	msgpack_pack_array(pk, n);
	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->room != r || strcmp(c->kind, PROTO_PEER_WEB) == 0)
			continue;
		msgpack_pack_map(pk, 3);
		proto_pack_str(pk, "kind", c->kind);
		proto_pack_str(pk, "label", c->label);
		if (c->client[0] != '\0')
			proto_pack_str(pk, "client", c->client);
		else
			proto_pack_nil(pk, "client");
	}
}

/* Clients past HELLO. */
u_int
server_client_count(void)
{
	struct server_client	*c;
	u_int			 n = 0;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->hello)
			n++;
	}
	return (n);
}

/* Clients past HELLO of one kind ("worker", "ctl", ...). */
static u_int
server_client_count_kind(const char *kind)
{
	struct server_client	*c;
	u_int			 n = 0;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->hello && strcmp(c->kind, kind) == 0)
			n++;
	}
	return (n);
}

/* At exit: close every client. */
void
server_client_free_all(void)
{
	struct server_client	*c;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->room != NULL) {
			room_leave(c->room, c->peer);
			c->room = NULL;
		}
		peer_kill(c->peer, NULL);
	}
}

static void
server_client_hello(struct server_client *c, const struct proto_header *hdr,
    const msgpack_object *body)
{
	struct proto_hello	 hello;
	struct mpbuf		 b;
	char			 err[256];
	int			 version;

	if (hdr->type != PROTO_MSG_HELLO) {
		peer_kill(c->peer, "first frame is not HELLO");
		return;
	}
	if (proto_hello_unpack(body, &hello, err, sizeof err) != 0) {
		peer_kill(c->peer, err);
		return;
	}
	if (hdr->version != PROTO_VERSION || hello.version != PROTO_VERSION) {
		version = hdr->version != PROTO_VERSION ? hdr->version :
		    hello.version;
		mpbuf_init(&b);
		proto_mismatch_pack(&b.pk, version);
		peer_send(c->peer, PROTO_MSG_VERSION_MISMATCH, hdr->id, &b.sb);
		mpbuf_free(&b);
		log_warnx("client pid %lld: protocol version %d, ours %d",
		    (long long)hello.pid, version, PROTO_VERSION);
		peer_kill(c->peer, NULL);
		return;
	}
	if (proto_hello_check(&hello, err, sizeof err) != 0 ||
	    strcmp(hello.kind, PROTO_PEER_AGENT) == 0) {
		peer_send_error(c->peer, hdr->id, PROTO_E_INVALID_ARGUMENT,
		    "peer kind \"%s\" cannot connect here", hello.kind);
		peer_kill(c->peer, "bad peer kind");
		return;
	}
	c->hello = 1;
	snprintf(c->kind, sizeof c->kind, "%s", hello.kind);
	snprintf(c->label, sizeof c->label, "%s", hello.label);
	snprintf(c->client, sizeof c->client, "%s", hello.client);
	mpbuf_init(&b);
	proto_hello_ok_pack(&b.pk, &runtimed_incarnation);
	peer_send(c->peer, PROTO_MSG_HELLO_OK, hdr->id, &b.sb);
	mpbuf_free(&b);
	log_debug("client %s pid %lld (%s) connected", hello.kind,
	    (long long)hello.pid, hello.label);
}

static void
server_client_status(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client			*c = arg;
	struct proto_daemon_status_reply	 s;
	struct mpbuf				 b;
	uint32_t				 id = hdr->id;

	memset(&s, 0, sizeof s);
	s.pid = runtimed_incarnation.pid;
	s.started_at = runtimed_incarnation.started_at;
	s.version = proto_str_make(runtimed_incarnation.version);
	s.rooms = room_count();
	/* Clients are workers and proxies: not ctl connections (this one). */
	s.peers = server_client_count() - server_client_count_kind(
	    PROTO_PEER_CTL) - server_client_count_kind(PROTO_PEER_WEB);
	s.kernels = room_kernel_count();
	s.has_fds = 1;
	s.fds_open = server_fds_open();
	s.fds_limit = server_fds_limit();
	s.peers_room = server_peers_room();
	s.warnings.pack = runtimed_warn_pack;
	s.has_detail = 1;
	s.agents = room_kernel_agents();
	s.pool_size = kernel_pool_size_get();
	s.pool_ready = kernel_pool_ready();
	s.state_dir = proto_str_make(runtimed_state_dir);
	if (runtimed_store != NULL) {
		s.store_damage = proto_str_make(store_damage(runtimed_store));
		s.store_write_error = proto_str_make(
		    store_write_error(runtimed_store));
	}
	s.kernel_list.pack = room_kernel_list_pack;
	s.view = proto_str_make(server_web_address());
	mpbuf_init(&b);
	proto_daemon_status_reply_pack(&b.pk, &s);
	peer_send(c->peer, PROTO_MSG_DAEMON_STATUS_REPLY, id, &b.sb);
	mpbuf_free(&b);
}

/* ROOM_CREATE and ROOM_OPEN. */
static void
server_client_join(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *unused, void *arg)
{
	struct server_client		*c = arg;
	struct proto_room_create	 cm;
	struct proto_room_open		 om;
	struct room			*r;
	char				*path = NULL, *kernel = NULL;
	char				*id = NULL, *domain = NULL;
	char				*cause = NULL, err[256];
	const char			*code;
	int				 bad, rc;

	if (c->room != NULL) {
		peer_send_error(c->peer, hdr->id, PROTO_E_INVALID_ARGUMENT,
		    "this connection already joined a notebook; leave it "
		    "first");
		return;
	}
	if (hdr->type == PROTO_MSG_ROOM_CREATE) {
		bad = proto_room_create_unpack(body, &cm, err, sizeof err);
		path = proto_str_dup(&cm.path);
		kernel = proto_str_dup(&cm.kernel);
		domain = proto_str_dup(&cm.domain);
	} else {
		bad = proto_room_open_unpack(body, &om, err, sizeof err);
		path = proto_str_dup(&om.path);
		id = proto_str_dup(&om.notebook_id);
		domain = proto_str_dup(&om.domain);
	}
	/* "local" is this daemon, as no domain is. */
	if (domain != NULL && strcmp(domain, "local") == 0) {
		free(domain);
		domain = NULL;
	}
	if (bad != 0) {
		peer_send_error(c->peer, hdr->id, PROTO_E_INVALID_ARGUMENT,
		    "%s", err);
		goto out;
	}
	if (domain != NULL && hdr->type == PROTO_MSG_ROOM_OPEN &&
	    path == NULL) {
		peer_send_error(c->peer, hdr->id, PROTO_E_INVALID_ARGUMENT,
		    "a notebook on domain %s is opened by its path there",
		    domain);
		goto out;
	}
	if (domain != NULL) {
		/* Answered from the server's answers (room-remote.c); this
		 * connection's later requests wait until then.  A path with
		 * a notebook_id is a worker re-joining (decision 030). */
		if (hdr->type == PROTO_MSG_ROOM_CREATE)
			rc = room_remote_create(domain, path, kernel, c->peer,
			    hdr->id, server_client_joined, &cause, &code);
		else if (id != NULL)
			rc = room_remote_rejoin(domain, path, id, c->peer,
			    hdr->id, server_client_joined, &cause, &code);
		else
			rc = room_remote_open(domain, path, c->peer, hdr->id,
			    server_client_joined, &cause, &code);
		if (rc != 0) {
			peer_send_error(c->peer, hdr->id, code, "%s", cause);
			goto out;
		}
		c->joining = 1;
		peer_hold(c->peer, 1);
		goto out;
	}
	if (hdr->type == PROTO_MSG_ROOM_CREATE)
		r = room_create(path, kernel, &cause, &code);
	else if ((path == NULL) == (id == NULL)) {
		peer_send_error(c->peer, hdr->id, PROTO_E_INVALID_ARGUMENT,
		    "give exactly one of path and notebook_id");
		goto out;
	} else
		r = room_open(path, id, &cause, &code);
	server_client_joined(r, c->peer, hdr->id, cause, code);
out:
	free(cause);
	free(path);
	free(kernel);
	free(id);
	free(domain);
}

/* A join's outcome: the room joined and ROOM_JOINED, or the ERROR. */
static void
server_client_joined(struct room *r, struct peer *p, uint32_t id,
    const char *cause, const char *code)
{
	struct server_client	*c;
	struct mpbuf		 b;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->peer == p)
			break;
	}
	if (c == NULL)
		return;
	if (c->joining) {
		c->joining = 0;
		peer_hold(p, 0);
	}
	if (r == NULL) {
		peer_send_error(p, id, code, "%s", cause);
		return;
	}
	c->room = r;
	room_join(r, p);
	mpbuf_init(&b);
	room_pack_joined(r, &b.pk, 0);
	if (server_client_reply(p, PROTO_MSG_ROOM_JOINED, id, &b.sb,
	    PROTO_E_NOTEBOOK_UNAVAILABLE, SERVER_CLIENT_NB_HINT) != 0) {
		/* Refused: the connection did not join. */
		room_leave(r, p);
		c->room = NULL;
	}
	mpbuf_free(&b);
}

struct server_client_edit_cells {
	struct room			*room;
	const struct room_nb_result	*res;
};

/*
 * ROOM_EDIT_REPLY's cells: [{cell_id, cell_type, version, undefined?}],
 * one per edit; type and version are the cell's after the batch (the type
 * is what a run of the cell means); undefined, the names a python cell
 * reads that no cell defines (decision 072), a warning.
 */
static void
server_client_edit_cells(msgpack_packer *pk, const void *arg)
{
	const struct server_client_edit_cells	*ec = arg;
	const struct room_nb_result		*res = ec->res;
	struct room_cell			*cell;
	const char				*names[ROOM_UNDEFINED_MAX];
	char					 version[ROOM_VERSION_LEN + 1];
	struct lh_table				*defined;
	size_t					 i, k, n;

	/* What every cell defines, once for all the batch's cells. */
	defined = room_stale_defined(ec->room);
	msgpack_pack_array(pk, res->nids);
	for (i = 0; i < res->nids; i++) {
		cell = res->ids[i] != NULL ? room_nb_find(ec->room->nb,
		    res->ids[i], NULL) : NULL;
		n = cell != NULL ? room_stale_undefined(defined, cell, names,
		    ROOM_UNDEFINED_MAX) : 0;
		if (n > ROOM_UNDEFINED_MAX)
			n = ROOM_UNDEFINED_MAX;
		msgpack_pack_map(pk, cell != NULL ? 3 + (n > 0) : 1);
		if (res->ids[i] != NULL)
			proto_pack_str(pk, "cell_id", res->ids[i]);
		else
			proto_pack_nil(pk, "cell_id");
		if (cell != NULL) {
			proto_pack_str(pk, "cell_type",
			    room_nb_cell_type_name(cell));
			room_cell_version(cell, version);
			proto_pack_str(pk, "version", version);
		}
		if (n > 0) {
			proto_pack_key(pk, "undefined");
			msgpack_pack_array(pk, n);
			for (k = 0; k < n; k++)
				proto_pack_cstr(pk, names[k]);
		}
	}
	if (defined != NULL)
		lh_table_free(defined);
}

/*
 * ROOM_EDIT: the batch is answered once durable (room-edit.c), from
 * server_client_edited.  Until then this connection's later requests
 * wait unread, so each sees the edits sent before it (a run of the
 * cells just inserted); other connections go on.
 */
static void
server_client_edit(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;
	struct proto_room_edit	 em = *(const struct proto_room_edit *)m;

	/* A batch that names no client is its connection's: the page's. */
	if (em.client_name.ptr == NULL) {
		if (strcmp(c->kind, PROTO_PEER_WEB) == 0)
			em.client_name = proto_str_make("live page");
		else if (c->client[0] != '\0')
			em.client_name = proto_str_make(c->client);
	}
	/* room_edit refuses a batch past PROTO_EDIT_MAX_EDITS unapplied. */
	c->editing = 1;
	room_edit(c->room, &em, strcmp(c->kind, PROTO_PEER_WEB) == 0, c->peer,
	    hdr->id, server_client_edited);
	if (c->editing)
		peer_hold(c->peer, 1);
}

/* A batch is applied: reply {seq, cells}, then ROOM_CHANGED to all. */
static void
server_client_edited(struct room *r, struct peer *p, uint32_t id,
    struct room_nb_result *res, const char *cause, const char *code)
{
	struct proto_room_edit_reply	 rm;
	struct server_client_edit_cells	 ec;
	struct proto_error		 e;
	struct mpbuf			 b;
	struct server_client		*c;
	msgpack_unpacked		 u;

	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->peer == p && c->editing) {
			c->editing = 0;
			peer_hold(p, 0);
			break;
		}
	}
	if (cause != NULL) {
		memset(&e, 0, sizeof e);
		e.code = proto_str_make(code);
		e.message = proto_str_make(cause);
		e.has_index = res->index >= 0;
		e.index = res->index;
		if (res->conflict_id != NULL) {
			e.cell_id = proto_str_make(res->conflict_id);
			e.version = proto_str_make(res->conflict_version);
			e.source.ptr = res->conflict_source;
			e.source.len = res->conflict_source_len;
		}
		mpbuf_init(&b);
		proto_error_pack(&b.pk, &e);
		peer_send(p, PROTO_MSG_ERROR, id, &b.sb);
		mpbuf_free(&b);
		return;
	}
	memset(&rm, 0, sizeof rm);
	rm.seq = r->seq;
	ec.room = r;
	ec.res = res;
	rm.cells.pack = server_client_edit_cells;
	rm.cells.arg = &ec;
	msgpack_unpacked_init(&u);
	/* An undo's list or revert (room-edit.c, decision 074). */
	if (res->undo != NULL && msgpack_unpack_next(&u, res->undo,
	    res->undo_len, NULL) == MSGPACK_UNPACK_SUCCESS)
		rm.undo.obj = &u.data;
	mpbuf_init(&b);
	proto_room_edit_reply_pack(&b.pk, &rm);
	msgpack_unpacked_destroy(&u);
	/* Within the cap by PROTO_EDIT_MAX_EDITS; if not, the edit is
	 * applied and the ERROR says so. */
	server_client_reply(p, PROTO_MSG_ROOM_EDIT_REPLY, id, &b.sb,
	    PROTO_E_OUTCOME_UNKNOWN, "the edit was applied; read the notebook "
	    "for its cells");
	mpbuf_free(&b);
	/* A list changed nothing. */
	if (res->nids > 0)
		room_changes_announce(r);
}

/*
 * A ROOM_EDIT that only lists the undo batches changes nothing: it is
 * no one's latest change (the live page lists them after every change).
 */
static int
server_client_lists(const struct proto_header *hdr, const msgpack_object *body)
{
	const msgpack_object	*u;
	int			 list;

	return (hdr->type == PROTO_MSG_ROOM_EDIT && body != NULL &&
	    (u = proto_get_map(body, "undo")) != NULL &&
	    proto_get_bool(u, "list", &list) == 0 && list);
}

/*
 * KERNEL_INTERRUPT {client_name?, session?}: who asks, so the runs of
 * other clients it ends say so; OK {ended} names them (issue 39).
 */
static void
server_client_interrupt(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;
	struct mpbuf		 b;
	char			*name, *session;
	uint32_t		 id = hdr->id;

	name = body != NULL ? proto_dup_str(body, "client_name") : NULL;
	session = body != NULL ? proto_dup_str(body, "session") : NULL;
	/* A started kernel's agent says whether it was done. */
	if (kernel_introspect_interrupt(c->room, c->peer, id, name,
	    session) == 0)
		goto out;
	if (room_kernel_interrupt(c->room) != 0) {
		peer_send_error(c->peer, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "the kernel is not running");
		goto out;
	}
	mpbuf_init(&b);
	room_exec_interrupt_by(c->room, name, session, &b.pk);
	peer_send(c->peer, PROTO_MSG_OK, id, &b.sb);
	mpbuf_free(&b);
out:
	free(name);
	free(session);
}

/* ROOM_SAVE: answered once the file is durable (server_client_saved). */
static void
server_client_save(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct server_client		*c = arg;
	const struct proto_room_save	*m = mv;
	char				*path, *cause = NULL;
	const char			*code;
	uint32_t			 id = hdr->id;

	path = proto_str_dup(&m->path);
	if (room_save_start(c->room, path, m->force, c->peer, id,
	    server_client_saved, &cause, &code) != 0) {
		peer_send_error(c->peer, id, code, "%s", cause);
		free(cause);
	}
	free(path);
}

static void
server_client_saved(struct room *r, struct peer *p, uint32_t id,
    const char *cause, const char *code)
{
	struct proto_room_save_reply	 rm;
	struct mpbuf			 b;

	if (p != NULL && cause != NULL)
		peer_send_error(p, id, code, "%s", cause);
	else if (p != NULL) {
		memset(&rm, 0, sizeof rm);
		rm.path = proto_str_make(r->remote != NULL ?
		    room_remote_path(r) : r->path);
		rm.seq = r->seq;
		mpbuf_init(&b);
		proto_room_save_reply_pack(&b.pk, &rm);
		peer_send(p, PROTO_MSG_ROOM_SAVE_REPLY, id, &b.sb);
		mpbuf_free(&b);
	}
	room_changes_announce(r);
}

static void
server_client_no_changes(msgpack_packer *pk, const void *unused)
{
	msgpack_pack_array(pk, 0);
}

/* ROOM_CHANGES {after} -> ROOM_CHANGES_REPLY {seq, resync, changes}. */
static void
server_client_changes(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *unused, void *arg)
{
	struct server_client		*c = arg;
	uint32_t			 id = hdr->id;
	struct proto_room_changes	 m;
	struct proto_room_changes_reply	 rm;
	struct mpbuf			 b;
	char				 err[256];

	if (proto_room_changes_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(c->peer, id, PROTO_E_INVALID_ARGUMENT,
		    "%s (a seq)", err);
		return;
	}
	mpbuf_init(&b);
	room_changes_pack(c->room, m.after, &b.pk);
	if (b.sb.size > proto_msg_cap(PROTO_MSG_ROOM_CHANGES_REPLY)) {
		/* Too many changes to list: the caller re-reads the room. */
		mpbuf_free(&b);
		memset(&rm, 0, sizeof rm);
		rm.seq = c->room->seq;
		rm.resync = 1;
		rm.changes.pack = server_client_no_changes;
		mpbuf_init(&b);
		proto_room_changes_reply_pack(&b.pk, &rm);
	}
	peer_send(c->peer, PROTO_MSG_ROOM_CHANGES_REPLY, id, &b.sb);
	mpbuf_free(&b);
}

/* ROOM_WAIT {kinds} -> OK: the next such change comes with the content. */
static void
server_client_wait(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct server_client		*c = arg;
	const struct proto_room_wait	*m = mv;

	room_changes_wait(c->room, c->peer, m->kinds, m->has_have, m->have,
	    m->standing, m->runs);
	peer_send_ok(c->peer, hdr->id);
}

/* ROOM_LEAVE -> OK. */
static void
server_client_leave(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;

	room_leave(c->room, c->peer);
	c->room = NULL;
	peer_send_ok(c->peer, hdr->id);
}

/* ROOM_GET -> ROOM_CONTENT. */
static void
server_client_get(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;
	struct mpbuf		 b;

	mpbuf_init(&b);
	room_pack_joined(c->room, &b.pk, 1);
	server_client_reply(c->peer, PROTO_MSG_ROOM_CONTENT, hdr->id, &b.sb,
	    PROTO_E_NOTEBOOK_UNAVAILABLE, SERVER_CLIENT_NB_HINT);
	mpbuf_free(&b);
}

/* KERNEL_RESTART, answered once the kernel is back. */
static void
server_client_restart(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;

	if (room_kernel_restart(c->room, p, hdr->id) != 0)
		peer_send_error(p, hdr->id, PROTO_E_BUSY,
		    "a restart is already under way");
}

/* KERNEL_INFO -> KERNEL_INFO_REPLY; asking starts the kernel (decision 018). */
static void
server_client_kernel_info(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;
	struct mpbuf		 b;

	room_kernel_want(c->room);
	mpbuf_init(&b);
	room_kernel_pack_info(c->room, &b.pk);
	server_client_reply(p, PROTO_MSG_KERNEL_INFO_REPLY, hdr->id, &b.sb,
	    PROTO_E_KERNEL_UNAVAILABLE,
	    "the kernel's language_info is too large to report");
	mpbuf_free(&b);
}

/* DAEMON_STOP -> OK, then the daemon stops. */
static void
server_client_stop(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;

	log_info("stop requested by a %s client", c->kind);
	peer_send_ok(p, hdr->id);
	runtimed_stop();
}

/* ROOM_LIST -> ROOM_LIST_REPLY. */
static void
server_client_list(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	room_list_pack(&b.pk);
	server_client_reply(p, PROTO_MSG_ROOM_LIST_REPLY, hdr->id, &b.sb,
	    PROTO_E_NOTEBOOK_UNAVAILABLE, "too many notebooks to list at once");
	mpbuf_free(&b);
}

/* VIEW_READY (server-web.c). */
static void
server_client_view_ready(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct server_client	*c = arg;

	server_web_ready(p, c->kind, hdr->id, body);
}

/* A request one of the concerns' tables takes; -1 when none does. */
static int
server_client_concern(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, struct room *r)
{
	size_t	i;

	for (i = 0; i < nitems(server_client_concerns); i++) {
		if (peer_dispatch(server_client_concerns[i],
		    server_client_refuse, p, hdr, body, r) == 0)
			return (0);
	}
	return (-1);
}

/* A request whose body does not read: invalid_argument, nothing done. */
static void
server_client_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	peer_send_error(p, hdr->id, PROTO_E_INVALID_ARGUMENT, "%s", err);
}

static void
server_client_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct server_client	*c = arg;

	if (hdr == NULL) {
		if (c->room != NULL)
			room_leave(c->room, p);
		room_exec_peer_gone(p);
		room_kernel_peer_gone(p);
		kernel_introspect_peer_gone(p);
		server_web_peer_gone(p);
		room_remote_peer_gone(p);
		TAILQ_REMOVE(&server_clients, c, entry);
		free(c);
		server_resume_accepting();
		return;
	}
	if (!c->hello) {
		server_client_hello(c, hdr, body);
		return;
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_CLIENT)) {
		peer_kill(p, "unexpected message from a client");
		return;
	}
	if (proto_msg_has(hdr->type, PROTO_F_ROOM)) {
		if (c->room == NULL) {
			peer_send_error(p, hdr->id, PROTO_E_INVALID_ARGUMENT,
			    "%s needs a notebook: send ROOM_CREATE or "
			    "ROOM_OPEN first",
			    proto_msg_name(hdr->type));
			return;
		}
		if (proto_msg_has(hdr->type, PROTO_F_MUTATES) &&
		    !server_client_lists(hdr, body))
			server_web_note_change(c->room, c->client[0] != '\0' ?
			    c->client : c->kind);
		if (peer_dispatch(server_client_room_table,
		    server_client_refuse, p, hdr, body, c) != 0)
			(void)server_client_concern(p, hdr, body, c->room);
		return;
	}
	/* A reply (OK, PONG) waits for nothing; a second HELLO is bad. */
	if (peer_dispatch(server_client_table, server_client_refuse, p, hdr,
	    body, c) != 0 && server_client_concern(p, hdr, body,
	    c->room) != 0 && proto_msg_info(hdr->type)->reply != 0)
		peer_kill(p, "unexpected message from a client");
}
