/* SPDX-License-Identifier: ISC */
/*
 * server-web.c: the live view's side in the daemon (docs/decisions/025).
 * The daemon starts runtimed-web on demand (VIEW_OPEN), with one end of
 * a socketpair as its fd 3, which it treats as a client connection of
 * kind "web"; runtimed-web answers VIEW_READY with the port it listens
 * on, and the waiting VIEW_OPENs get the URL.  The secret the URL holds
 * is made once per daemon incarnation and kept 0600 in the state
 * directory, where runtimed-web reads it.
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "runtimed.h"

/* How long a VIEW_OPEN waits for runtimed-web to listen. */
#define SERVER_WEB_START_MS	10000
/* Notebooks whose last changer is remembered. */
#define SERVER_WEB_LAST_MAX	256

struct server_web_wait {
	struct peer		*peer;
	uint32_t		 id;
	char			*notebook_id;
	TAILQ_ENTRY(server_web_wait) entry;
};

struct server_web_last {
	char			 notebook_id[37];
	char			 client[128];
	TAILQ_ENTRY(server_web_last) entry;
};

static TAILQ_HEAD(, server_web_wait) server_web_waits =
    TAILQ_HEAD_INITIALIZER(server_web_waits);
static TAILQ_HEAD(server_web_lasts_head, server_web_last) server_web_lasts =
    TAILQ_HEAD_INITIALIZER(server_web_lasts);
static u_int		 server_web_nlast;
static char		 server_web_secret[65];
static struct peer	*server_web_peer;	/* our end of its fd 3 */
static int		 server_web_port;	/* 0 until VIEW_READY */
static pid_t		 server_web_pid = -1;
static struct event	*server_web_timer;

static int	server_web_secret_make(char **);
static int	server_web_spawn(char **);
static void	server_web_answer(struct server_web_wait *);
static void	server_web_fail_all(const char *);
static void	server_web_timeout(evutil_socket_t, short, void *);
static void	server_web_open(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	server_web_state(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The requests this file answers: server-client.c tries this table, its
 * handlers given the room (NULL for VIEW_OPEN, room-less;
 * docs/decisions/096).
 */
const struct peer_dispatch server_web_table[] = {
	{ PROTO_MSG_VIEW_OPEN, PEER_DISPATCH_UNPACK, server_web_open },
	{ PROTO_MSG_VIEW_STATE, 0, server_web_state },
	{ 0, 0, NULL }
};

/* The secret, RAND_bytes, written 0600 exclusively, never via a link. */
static int
server_web_secret_make(char **cause)
{
	unsigned char	 raw[32];
	char		*path;
	int		 fd;
	ssize_t		 n;

	if (server_web_secret[0] != '\0')
		return (0);
	if (RAND_bytes(raw, sizeof raw) != 1) {
		xasprintf(cause, "no random bytes for the view's secret");
		return (-1);
	}
	util_hex(raw, sizeof raw, server_web_secret);
	xasprintf(&path, "%s/web-secret", runtimed_state_dir);
	/* An earlier incarnation's (or anything planted there) goes. */
	if (unlink(path) != 0 && errno != ENOENT) {
		xasprintf(cause, "cannot remove %s: %s", path,
		    strerror(errno));
		goto fail;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		xasprintf(cause, "cannot create %s: %s", path,
		    strerror(errno));
		goto fail;
	}
	n = write(fd, server_web_secret, 64);
	if (n != 64 || fsync(fd) != 0) {
		xasprintf(cause, "cannot write %s: %s", path,
		    n == -1 ? strerror(errno) : "short write");
		close(fd);
		unlink(path);
		goto fail;
	}
	close(fd);
	free(path);
	return (0);
fail:
	free(path);
	memset(server_web_secret, 0, sizeof server_web_secret);
	return (-1);
}

/* Start runtimed-web with a socketpair end as its fd 3. */
static int
server_web_spawn(char **cause)
{
	char		*web, *sock;
	char		*argv[8];
	int		 sv[2], i = 0;

	if ((web = spawn_find("runtimed-web", RUNTIMED_LIBEXECDIR,
	    cause)) == NULL)
		return (-1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		xasprintf(cause, "socketpair: %s", strerror(errno));
		free(web);
		return (-1);
	}
	sock = sockdir_socket_path();
	argv[i++] = "runtimed-web";
	argv[i++] = "-S";
	argv[i++] = sock;
	argv[i++] = "-d";
	argv[i++] = runtimed_state_dir;
	if (runtimed_log_level > 0)
		argv[i++] = runtimed_log_level > 1 ? "-vv" : "-v";
	argv[i] = NULL;
	server_web_pid = spawn_child(web, argv, sv[1], 1, cause);
	close(sv[1]);
	free(web);
	free(sock);
	if (server_web_pid == -1) {
		close(sv[0]);
		return (-1);
	}
	/* Our side is a client connection like any other, of kind web. */
	server_web_peer = server_client_accept(sv[0]);
	log_info("runtimed-web pid %ld started", (long)server_web_pid);
	return (0);
}

static void
server_web_answer(struct server_web_wait *w)
{
	struct proto_view_url	 m;
	struct mpbuf		 b;
	char			*url, *address;

	xasprintf(&address, "http://127.0.0.1:%d/", server_web_port);
	if (w->notebook_id != NULL)
		xasprintf(&url, "%sopen?s=%s&nb=%s", address,
		    server_web_secret, w->notebook_id);
	else
		xasprintf(&url, "%sopen?s=%s", address, server_web_secret);
	memset(&m, 0, sizeof m);
	m.url = proto_str_make(url);
	m.address = proto_str_make(address);
	m.port = server_web_port;
	mpbuf_init(&b);
	proto_view_url_pack(&b.pk, &m);
	peer_send(w->peer, PROTO_MSG_VIEW_URL, w->id, &b.sb);
	mpbuf_free(&b);
	free(url);
	free(address);
}

static void
server_web_fail_all(const char *why)
{
	struct server_web_wait	*w, *w1;

	TAILQ_FOREACH_SAFE(w, &server_web_waits, entry, w1) {
		peer_send_error(w->peer, w->id, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "the live view did not start: %s", why);
		TAILQ_REMOVE(&server_web_waits, w, entry);
		free(w->notebook_id);
		free(w);
	}
	if (server_web_timer != NULL)
		evtimer_del(server_web_timer);
}

static void
server_web_timeout(evutil_socket_t fd, short events, void *arg)
{
	server_web_fail_all("runtimed-web did not listen within 10 s; see "
	    "the daemon's log (runtimectl logs)");
	/* A view that never said VIEW_READY goes; the next open starts one. */
	if (server_web_peer != NULL && server_web_port == 0)
		peer_kill(server_web_peer, "runtimed-web did not say VIEW_READY");
}

/* VIEW_OPEN {notebook_id?}: answer the URL, starting the view first. */
static void
server_web_open(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_view_open	*m = mv;
	struct server_web_wait		*w;
	struct timeval			 tv = { SERVER_WEB_START_MS / 1000, 0 };
	uint32_t			 id = hdr->id;
	char				*cause = NULL;

	if (m->notebook_id.ptr != NULL && (m->notebook_id.len == 0 ||
	    m->notebook_id.len > 36 || strspn(m->notebook_id.ptr,
	    "0123456789abcdef-") < m->notebook_id.len)) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT, "VIEW_OPEN: "
		    "notebook_id is not a notebook's id");
		return;
	}
	if (server_web_secret_make(&cause) != 0) {
		peer_send_error(p, id, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s",
		    cause);
		free(cause);
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->peer = p;
	w->id = id;
	w->notebook_id = proto_str_dup(&m->notebook_id);
	if (server_web_port != 0) {
		server_web_answer(w);
		free(w->notebook_id);
		free(w);
		return;
	}
	TAILQ_INSERT_TAIL(&server_web_waits, w, entry);
	if (server_web_peer == NULL) {
		if (server_web_spawn(&cause) != 0) {
			server_web_fail_all(cause);
			free(cause);
			return;
		}
		if (server_web_timer == NULL)
			server_web_timer = evtimer_new(runtimed_base,
			    server_web_timeout, NULL);
		evtimer_add(server_web_timer, &tv);
	} else if (!evtimer_pending(server_web_timer, NULL))
		evtimer_add(server_web_timer, &tv);
}

/* VIEW_READY {port} from runtimed-web: answer whoever waits. */
void
server_web_ready(struct peer *p, const char *kind, uint32_t id,
    const msgpack_object *body)
{
	struct proto_view_ready	 m;
	struct server_web_wait	*w, *w1;
	char			 err[256];

	if (strcmp(kind, PROTO_PEER_WEB) != 0 || p != server_web_peer) {
		peer_kill(p, "VIEW_READY from a client that is not the view");
		return;
	}
	if (proto_view_ready_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT, "%s", err);
		return;
	}
	server_web_port = (int)m.port;
	peer_send_ok(p, id);
	log_info("live view at http://127.0.0.1:%d/", server_web_port);
	if (server_web_timer != NULL)
		evtimer_del(server_web_timer);
	TAILQ_FOREACH_SAFE(w, &server_web_waits, entry, w1) {
		server_web_answer(w);
		TAILQ_REMOVE(&server_web_waits, w, entry);
		free(w->notebook_id);
		free(w);
	}
}

/* A client connection is gone: its waits, or the view itself. */
void
server_web_peer_gone(struct peer *p)
{
	struct server_web_wait	*w, *w1;

	TAILQ_FOREACH_SAFE(w, &server_web_waits, entry, w1) {
		if (w->peer != p)
			continue;
		TAILQ_REMOVE(&server_web_waits, w, entry);
		free(w->notebook_id);
		free(w);
	}
	if (p != server_web_peer)
		return;
	log_info("runtimed-web pid %ld is gone", (long)server_web_pid);
	server_web_peer = NULL;
	server_web_port = 0;
	server_web_pid = -1;
	server_web_fail_all("runtimed-web exited; see the daemon's log");
}

/* The view's address for status, or NULL when it does not run. */
const char *
server_web_address(void)
{
	static char	address[64];

	if (server_web_port == 0)
		return (NULL);
	snprintf(address, sizeof address, "http://127.0.0.1:%d/",
	    server_web_port);
	return (address);
}

/* Remember who made a room's latest change (a client's name). */
void
server_web_note_change(struct room *r, const char *client)
{
	struct server_web_last	*l;

	if (r == NULL || client == NULL || *client == '\0')
		return;
	TAILQ_FOREACH(l, &server_web_lasts, entry) {
		if (strcmp(l->notebook_id, r->id) == 0)
			break;
	}
	if (l != NULL)
		TAILQ_REMOVE(&server_web_lasts, l, entry);
	else if (server_web_nlast == SERVER_WEB_LAST_MAX) {
		l = TAILQ_LAST(&server_web_lasts, server_web_lasts_head);
		TAILQ_REMOVE(&server_web_lasts, l, entry);
	} else {
		l = xcalloc(1, sizeof *l);
		server_web_nlast++;
	}
	snprintf(l->notebook_id, sizeof l->notebook_id, "%s", r->id);
	snprintf(l->client, sizeof l->client, "%s", client);
	TAILQ_INSERT_HEAD(&server_web_lasts, l, entry);
}

/* VIEW_STATE: what the page shows beside the cells. */
static void
server_web_state(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct proto_view_state_reply	 m;
	struct server_web_last		*l;
	struct room			*r = arg;
	struct mpbuf			 b;
	uint32_t			 id = hdr->id;

	memset(&m, 0, sizeof m);
	m.seq = r->seq;
	m.kernel_state = proto_str_make(room_kernel_state(r));
	m.cells.pack = room_exec_pack_active;
	m.cells.arg = r;
	m.peers.pack = server_client_pack_peers;
	m.peers.arg = r;
	TAILQ_FOREACH(l, &server_web_lasts, entry) {
		if (strcmp(l->notebook_id, r->id) == 0) {
			m.last_client = proto_str_make(l->client);
			break;
		}
	}
	mpbuf_init(&b);
	proto_view_state_reply_pack(&b.pk, &m);
	peer_send(p, PROTO_MSG_VIEW_STATE_REPLY, id, &b.sb);
	mpbuf_free(&b);
}
