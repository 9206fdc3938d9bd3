/* SPDX-License-Identifier: ISC */
/*
 * worker-daemon.c: connections to runtimed.  Each one connects (starting
 * the daemon when nobody listens), says HELLO, then carries requests
 * whose replies come back by id to a callback.  Requests made before the
 * handshake finished wait in a queue; a lost connection fails them all.
 */

#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#define WORKER_DAEMON_POLL_MS	50

enum worker_dconn_state {
	WORKER_DCONN_STARTING,	/* waiting for the daemon to listen */
	WORKER_DCONN_HELLO,	/* HELLO sent */
	WORKER_DCONN_READY,
	WORKER_DCONN_DEAD,
};

struct worker_dreq {
	uint32_t		 id;
	uint16_t		 type;
	char			*body;	/* packed by its codec, until sent */
	size_t			 len;
	worker_daemon_cb	 cb;
	void			*arg;
	TAILQ_ENTRY(worker_dreq) entry;
};
TAILQ_HEAD(worker_dreq_head, worker_dreq);

struct worker_dconn {
	char				*name;
	enum worker_dconn_state		 state;
	struct peer			*peer;
	struct proto_incarnation	 inc;
	struct worker_dreq_head		 queued;
	struct worker_dreq_head		 pending;
	char				*dead_code;
	char				*dead_msg;
	worker_daemon_lost_cb		 lost;
	worker_daemon_event_cb		 event;
	void				*cb_arg;
	LIST_ENTRY(worker_dconn)	 start_entry;
	int				 starting;
	int				 probe;	/* never autostart */
};
LIST_HEAD(worker_dconn_list, worker_dconn);

static struct event_base	*worker_daemon_base;
static struct worker_dconn	*worker_daemon_ctl;

/* The one autostart in progress, shared by every waiting connection. */
static struct {
	struct worker_dconn_list waiting;
	struct event		*timer;
	pid_t			 pid;
	int			 status;
	int			 exited;
	int64_t			 deadline;
	char			*path;
} worker_daemon_start;

static void	worker_daemon_connected(struct worker_dconn *, int);
static void	worker_daemon_die(struct worker_dconn *, const char *,
		    const char *);
static void	worker_daemon_free_cb(evutil_socket_t, short, void *);
static void	worker_daemon_later_cb(evutil_socket_t, short, void *);
static void	worker_daemon_req_free(struct worker_dreq *);
static void	worker_daemon_fail_all(struct worker_dconn *, const char *,
		    const char *);
static void	worker_daemon_send(struct worker_dconn *, struct worker_dreq *);
static void	worker_daemon_hello_reply(struct worker_dconn *,
		    const struct proto_header *, const msgpack_object *);
static void	worker_daemon_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static int	worker_daemon_try(struct worker_dconn *, char **);
static void	worker_daemon_start_finish(void);
static void	worker_daemon_start_tick(evutil_socket_t, short, void *);
static void	worker_daemon_autostart(struct worker_dconn *);
static struct worker_dconn	*worker_daemon_new(const char *, int);
static void	worker_daemon_pack_json(msgpack_packer *, const void *);

void
worker_daemon_init(struct event_base *base)
{
	worker_daemon_base = base;
	LIST_INIT(&worker_daemon_start.waiting);
}

/* Deliver a failure from a fresh callback, never from the caller's. */
struct worker_daemon_later {
	worker_daemon_cb	 cb;
	void			*arg;
	char			*code;
	char			*msg;
};

static void
worker_daemon_later_cb(evutil_socket_t fd, short events, void *arg)
{
	struct worker_daemon_later	*l = arg;

	l->cb(l->arg, 0, NULL, l->code, l->msg);
	free(l->code);
	free(l->msg);
	free(l);
}

void
worker_daemon_fail_later(worker_daemon_cb cb, void *arg, const char *code,
    const char *msg)
{
	struct worker_daemon_later	*l;

	l = xcalloc(1, sizeof *l);
	l->cb = cb;
	l->arg = arg;
	l->code = xstrdup(code);
	l->msg = xstrdup(msg);
	event_base_once(worker_daemon_base, -1, EV_TIMEOUT,
	    worker_daemon_later_cb, l, NULL);
}

static void
worker_daemon_req_free(struct worker_dreq *r)
{
	free(r->body);
	free(r);
}

/* Fail every request; the connection is unusable from now on. */
static void
worker_daemon_fail_all(struct worker_dconn *dc, const char *code,
    const char *msg)
{
	struct worker_dreq	*r;

	while ((r = TAILQ_FIRST(&dc->queued)) != NULL) {
		TAILQ_REMOVE(&dc->queued, r, entry);
		worker_daemon_fail_later(r->cb, r->arg, code, msg);
		worker_daemon_req_free(r);
	}
	while ((r = TAILQ_FIRST(&dc->pending)) != NULL) {
		TAILQ_REMOVE(&dc->pending, r, entry);
		/*
		 * A change the daemon received may have been applied and made
		 * durable before the connection went: never report it as
		 * refused.
		 */
		if (proto_msg_has(r->type, PROTO_F_MUTATES))
			worker_daemon_fail_later(r->cb, r->arg,
			    PROTO_E_OUTCOME_UNKNOWN,
			    "the daemon connection was lost before it "
			    "answered; the change may or may not have been "
			    "made: inspect the notebook before retrying");
		else
			worker_daemon_fail_later(r->cb, r->arg, code, msg);
		worker_daemon_req_free(r);
	}
}

static void
worker_daemon_send(struct worker_dconn *dc, struct worker_dreq *r)
{
	const char	*code;
	char		*msg;

	r->id = peer_next_id(dc->peer);
	if (peer_send_raw(dc->peer, r->type, r->id, r->body, r->len) != 0) {
		code = PROTO_E_INVALID_ARGUMENT;
		if (r->len > proto_msg_cap(r->type))
			xasprintf(&msg, "the %s request would be %.1f MB, "
			    "over its %u MiB cap: send fewer or smaller edits "
			    "or cells", proto_msg_name(r->type),
			    r->len / 1e6,
			    proto_msg_cap(r->type) / (1024 * 1024));
		else {
			code = PROTO_E_NOTEBOOK_UNAVAILABLE;
			xasprintf(&msg, "the connection to runtimed is "
			    "closing; retry");
		}
		worker_daemon_fail_later(r->cb, r->arg, code, msg);
		free(msg);
		worker_daemon_req_free(r);
		return;
	}
	free(r->body);
	r->body = NULL;
	TAILQ_INSERT_TAIL(&dc->pending, r, entry);
}

static void
worker_daemon_hello_reply(struct worker_dconn *dc,
    const struct proto_header *hdr, const msgpack_object *body)
{
	struct worker_dreq	*r;
	char			 cause[256], *msg;

	if (hdr->type == PROTO_MSG_VERSION_MISMATCH) {
		xasprintf(&msg, "protocol version mismatch: worker %d, daemon "
		    "%lld; stop the running runtimed (runtimed stop) so a "
		    "matching one starts", PROTO_VERSION,
		    (long long)proto_mismatch_version(body));
		log_warnx("%s", msg);
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE, msg);
		free(msg);
		return;
	}
	if (hdr->type != PROTO_MSG_HELLO_OK ||
	    proto_hello_ok_unpack(body, &dc->inc, cause, sizeof cause) != 0) {
		if (hdr->type != PROTO_MSG_HELLO_OK)
			snprintf(cause, sizeof cause, "%s instead of HELLO_OK",
			    proto_msg_name(hdr->type));
		xasprintf(&msg, "bad handshake from runtimed: %s", cause);
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE, msg);
		free(msg);
		return;
	}
	if (strcmp(dc->inc.version, RUNTIMED_VERSION) != 0) {
		log_warnx("runtimed is version %s, this worker %s",
		    dc->inc.version, RUNTIMED_VERSION);
	}
	log_debug("%s: daemon pid %lld started_at %lld", dc->name,
	    (long long)dc->inc.pid, (long long)dc->inc.started_at);
	dc->state = WORKER_DCONN_READY;
	worker_watch_seen(&dc->inc);
	while ((r = TAILQ_FIRST(&dc->queued)) != NULL) {
		TAILQ_REMOVE(&dc->queued, r, entry);
		worker_daemon_send(dc, r);
	}
}

static void
worker_daemon_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct worker_dconn	*dc = arg;
	struct worker_dreq	*r;
	struct proto_error	 e;
	char			*code, *msg, cause[256];

	if (dc == NULL)
		return;		/* detached by worker_daemon_free */
	if (hdr == NULL) {
		dc->peer = NULL;
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    WORKER_DAEMON_LOST);
		return;
	}
	if (dc->state == WORKER_DCONN_HELLO) {
		worker_daemon_hello_reply(dc, hdr, body);
		return;
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_DAEMON)) {
		log_warnx("%s: runtimed sent %s, which it never sends",
		    dc->name, proto_msg_name(hdr->type));
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "runtimed sent a message it never sends; reconnect");
		return;
	}
	if (hdr->id == 0 || proto_msg_has(hdr->type, PROTO_F_EVENT)) {
		if (dc->event != NULL)
			dc->event(dc, hdr->type, body, dc->cb_arg);
		return;
	}
	TAILQ_FOREACH(r, &dc->pending, entry) {
		if (r->id == hdr->id)
			break;
	}
	if (r == NULL) {
		log_debug("%s: reply %s to unknown id %u", dc->name,
		    proto_msg_name(hdr->type), hdr->id);
		return;
	}
	TAILQ_REMOVE(&dc->pending, r, entry);
	if (hdr->type == PROTO_MSG_ERROR) {
		if (proto_error_unpack(body, &e, cause, sizeof cause) != 0) {
			log_warnx("%s: %s", dc->name, cause);
			r->cb(r->arg, hdr->type, body,
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "the daemon refused the request");
		} else {
			code = proto_str_dup(&e.code);
			msg = proto_str_dup(&e.message);
			r->cb(r->arg, hdr->type, body, code, msg);
			free(code);
			free(msg);
		}
	} else
		r->cb(r->arg, hdr->type, body, NULL, NULL);
	worker_daemon_req_free(r);
}

/* The connection failed: fail its requests, tell its owner. */
static void
worker_daemon_die(struct worker_dconn *dc, const char *code, const char *msg)
{
	if (dc->state == WORKER_DCONN_DEAD)
		return;
	dc->state = WORKER_DCONN_DEAD;
	if (dc->starting) {
		LIST_REMOVE(dc, start_entry);
		dc->starting = 0;
	}
	free(dc->dead_code);
	free(dc->dead_msg);
	dc->dead_code = xstrdup(code);
	dc->dead_msg = xstrdup(msg);
	if (dc->peer != NULL) {
		peer_set_arg(dc->peer, NULL);
		peer_kill(dc->peer, NULL);
		dc->peer = NULL;
	}
	worker_daemon_fail_all(dc, code, msg);
	if (dc == worker_daemon_ctl) {
		/* Nobody else holds it: the next call reconnects. */
		worker_daemon_ctl = NULL;
		event_base_once(worker_daemon_base, -1, EV_TIMEOUT,
		    worker_daemon_free_cb, dc, NULL);
	}
	if (dc->lost != NULL)
		dc->lost(dc, dc->cb_arg);
}

/* Socket connected: wrap it and say HELLO. */
static void
worker_daemon_connected(struct worker_dconn *dc, int fd)
{
	struct proto_hello	 hello;
	struct mpbuf		 b;

	dc->peer = peer_create(worker_daemon_base, fd, dc->name,
	    worker_daemon_dispatch, dc);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_WORKER);
	snprintf(hello.label, sizeof hello.label, "runtimed-mcp-worker %s",
	    dc->name);
	hello.pid = getpid();
	snprintf(hello.client, sizeof hello.client, "%s",
	    worker_client_name_get());
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	peer_send(dc->peer, PROTO_MSG_HELLO, peer_next_id(dc->peer), &b.sb);
	mpbuf_free(&b);
	dc->state = WORKER_DCONN_HELLO;
}

/* Try the socket: 0 connected, 1 nobody listens yet, -1 failed. */
static int
worker_daemon_try(struct worker_dconn *dc, char **cause)
{
	char		*path, *dir, *tmp, *why = NULL;
	struct stat	 sb;
	int		 fd, r = -1;

	path = sockdir_socket_path();
	tmp = xstrdup(path);
	dir = dirname(tmp);
	if (lstat(dir, &sb) == 0 && sockdir_check_dir(dir, 0, &why) != 0) {
		xasprintf(cause, "unsafe socket directory %s: %s", dir, why);
		free(why);
		goto out;
	}
	fd = sockdir_connect(path);
	if (fd >= 0) {
		worker_daemon_connected(dc, fd);
		r = 0;
	} else if (errno == ENOENT || errno == ECONNREFUSED)
		r = 1;
	else
		xasprintf(cause, "cannot connect to %s: %s", path,
		    strerror(errno));
out:
	free(tmp);
	free(path);
	return (r);
}

static void
worker_daemon_start_finish(void)
{
	if (worker_daemon_start.timer != NULL) {
		event_free(worker_daemon_start.timer);
		worker_daemon_start.timer = NULL;
	}
	free(worker_daemon_start.path);
	worker_daemon_start.path = NULL;
}

/* Poll the starting daemon: reap it, retry every waiting connection. */
static void
worker_daemon_start_tick(evutil_socket_t fd, short events, void *arg)
{
	struct worker_dconn	*dc, *next;
	struct timeval		 tv = { 0, WORKER_DAEMON_POLL_MS * 1000 };
	char			*cause = NULL, *msg;
	int			 status, r;

	if (worker_daemon_start.pid > 0 && !worker_daemon_start.exited &&
	    waitpid(worker_daemon_start.pid, &status, WNOHANG) ==
	    worker_daemon_start.pid) {
		worker_daemon_start.exited = 1;
		worker_daemon_start.status = status;
		log_debug("runtimed starter exited with %d", status);
	}
	for (dc = LIST_FIRST(&worker_daemon_start.waiting); dc != NULL;
	    dc = next) {
		next = LIST_NEXT(dc, start_entry);
		r = worker_daemon_try(dc, &cause);
		if (r == 1)
			continue;
		LIST_REMOVE(dc, start_entry);
		dc->starting = 0;
		if (r == -1) {
			worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    cause);
			free(cause);
			cause = NULL;
		}
	}
	if (LIST_EMPTY(&worker_daemon_start.waiting)) {
		worker_daemon_start_finish();
		return;
	}
	/* A starter that failed, or no socket by the deadline: give up. */
	if ((worker_daemon_start.exited &&
	    (!WIFEXITED(worker_daemon_start.status) ||
	    WEXITSTATUS(worker_daemon_start.status) != 0)) ||
	    util_mono_ms() > worker_daemon_start.deadline) {
		if (worker_daemon_start.exited &&
		    (!WIFEXITED(worker_daemon_start.status) ||
		    WEXITSTATUS(worker_daemon_start.status) != 0))
			xasprintf(&msg, "could not start runtimed (%s exited "
			    "with status %d); see its log",
			    worker_daemon_start.path,
			    WIFEXITED(worker_daemon_start.status) ?
			    WEXITSTATUS(worker_daemon_start.status) : -1);
		else
			xasprintf(&msg, "runtimed did not start listening "
			    "within %d s", WORKER_START_TIMEOUT_MS / 1000);
		while ((dc = LIST_FIRST(&worker_daemon_start.waiting)) !=
		    NULL)
			worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    msg);
		free(msg);
		worker_daemon_start_finish();
		return;
	}
	evtimer_add(worker_daemon_start.timer, &tv);
}

/* Nobody listens: start runtimed once and wait for its socket. */
static void
worker_daemon_autostart(struct worker_dconn *dc)
{
	struct timeval	 tv = { 0, WORKER_DAEMON_POLL_MS * 1000 };
	char		*argv[2], *cause = NULL, *msg;
	pid_t		 pid;

	LIST_INSERT_HEAD(&worker_daemon_start.waiting, dc, start_entry);
	dc->starting = 1;
	dc->state = WORKER_DCONN_STARTING;
	if (worker_daemon_start.timer != NULL)
		return;		/* a start is already in progress */

	worker_daemon_start.path = spawn_find("runtimed", RUNTIMED_BINDIR,
	    &cause);
	if (worker_daemon_start.path == NULL) {
		xasprintf(&msg, "runtimed is not running and %s", cause);
		free(cause);
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE, msg);
		free(msg);
		return;
	}
	argv[0] = worker_daemon_start.path;
	argv[1] = NULL;
	log_info("starting %s", worker_daemon_start.path);
	pid = spawn_child(worker_daemon_start.path, argv, -1, 1, &cause);
	if (pid == -1) {
		xasprintf(&msg, "cannot start runtimed: %s", cause);
		free(cause);
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE, msg);
		free(msg);
		free(worker_daemon_start.path);
		worker_daemon_start.path = NULL;
		return;
	}
	worker_daemon_start.pid = pid;
	worker_daemon_start.exited = 0;
	worker_daemon_start.deadline = util_mono_ms() +
	    WORKER_START_TIMEOUT_MS;
	worker_daemon_start.timer = evtimer_new(worker_daemon_base,
	    worker_daemon_start_tick, NULL);
	evtimer_add(worker_daemon_start.timer, &tv);
}

static struct worker_dconn *
worker_daemon_new(const char *name, int probe)
{
	struct worker_dconn	*dc;
	char			*cause = NULL;
	int			 r;

	dc = xcalloc(1, sizeof *dc);
	dc->name = xstrdup(name);
	dc->probe = probe;
	TAILQ_INIT(&dc->queued);
	TAILQ_INIT(&dc->pending);
	dc->state = WORKER_DCONN_STARTING;
	r = worker_daemon_try(dc, &cause);
	if (r == 1 && probe)
		worker_daemon_die(dc, PROTO_E_DAEMON_ABSENT, "runtimed is not "
		    "running");
	else if (r == 1)
		worker_daemon_autostart(dc);
	else if (r == -1) {
		worker_daemon_die(dc, PROTO_E_NOTEBOOK_UNAVAILABLE, cause);
		free(cause);
	}
	return (dc);
}

/* A new connection; requests may be made at once. */
struct worker_dconn *
worker_daemon_open(const char *name)
{
	return (worker_daemon_new(name, 0));
}

/* A connection that never starts the daemon (the incarnation watch). */
struct worker_dconn *
worker_daemon_probe(const char *name)
{
	return (worker_daemon_new(name, 1));
}

void
worker_daemon_set_cbs(struct worker_dconn *dc, worker_daemon_lost_cb lost,
    worker_daemon_event_cb event, void *arg)
{
	dc->lost = lost;
	dc->event = event;
	dc->cb_arg = arg;
}

/*
 * Send a request whose body its codec packed (copied; NULL for a request
 * without fields); cb gets the reply or an error.
 */
void
worker_daemon_request(struct worker_dconn *dc, uint16_t type,
    const msgpack_sbuffer *body, worker_daemon_cb cb, void *arg)
{
	struct mpbuf		 b;
	struct worker_dreq	*r;

	if (dc->state == WORKER_DCONN_DEAD) {
		worker_daemon_fail_later(cb, arg, dc->dead_code,
		    dc->dead_msg);
		return;
	}
	r = xcalloc(1, sizeof *r);
	r->type = type;
	if (body == NULL) {
		mpbuf_init(&b);
		proto_empty_pack(&b.pk);
		body = &b.sb;
	}
	r->body = xmalloc(body->size);
	memcpy(r->body, body->data, body->size);
	r->len = body->size;
	if (body == &b.sb)
		mpbuf_free(&b);
	r->cb = cb;
	r->arg = arg;
	if (dc->state == WORKER_DCONN_READY)
		worker_daemon_send(dc, r);
	else
		TAILQ_INSERT_TAIL(&dc->queued, r, entry);
}

static void
worker_daemon_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* A document of a request (an edit batch, cell ids) from the tool's JSON. */
struct proto_doc
worker_daemon_doc(struct json_object *json)
{
	struct proto_doc	d;

	d.obj = NULL;
	d.pack = worker_daemon_pack_json;
	d.arg = json;
	return (d);
}

/* Close a connection on purpose; pending requests fail with code. */
void
worker_daemon_free(struct worker_dconn *dc, const char *code,
    const char *msg)
{
	dc->lost = NULL;
	if (dc == worker_daemon_ctl)
		worker_daemon_ctl = NULL;
	worker_daemon_die(dc, code, msg);
	free(dc->dead_code);
	free(dc->dead_msg);
	free(dc->name);
	free(dc);
}

static void
worker_daemon_free_cb(evutil_socket_t fd, short events, void *arg)
{
	worker_daemon_free(arg, PROTO_E_NOTEBOOK_UNAVAILABLE,
	    "connection closed");
}

int
worker_daemon_alive(struct worker_dconn *dc)
{
	return (dc->state != WORKER_DCONN_DEAD);
}

const struct proto_incarnation *
worker_daemon_incarnation(struct worker_dconn *dc)
{
	return (&dc->inc);
}

/* The room-less connection for list and status, made on first use. */
struct worker_dconn *
worker_daemon_control(void)
{
	if (worker_daemon_ctl == NULL ||
	    !worker_daemon_alive(worker_daemon_ctl))
		worker_daemon_ctl = worker_daemon_open("control");
	return (worker_daemon_ctl);
}

/*
 * Exiting: nothing to flush (requests are not replayed), so the sockets
 * close with the process and the daemon sees each room peer leave.
 */
void
worker_daemon_shutdown(void)
{
	worker_daemon_ctl = NULL;
}

/*
 * Bodies of at least min bytes on dc are decoded from a copy of their
 * own, which an event or reply callback may keep (worker_daemon_take).
 */
void
worker_daemon_keep_frames(struct worker_dconn *dc, size_t min)
{
	if (dc->peer != NULL)
		peer_keep_frames(dc->peer, min);
}

/*
 * In an event or reply callback of dc: the zone its body lives in, now
 * the caller's (msgpack_zone_free), or NULL when the body is not one to
 * keep (worker_daemon_keep_frames).
 */
msgpack_zone *
worker_daemon_take(struct worker_dconn *dc)
{
	if (dc == NULL || dc->peer == NULL)
		return (NULL);
	return (peer_take_frame(dc->peer));
}
