/* SPDX-License-Identifier: ISC */
/*
 * proxy-worker.c: the runtimed-mcp-worker child.  Spawns it with one end
 * of a socketpair as fd 3 (the binary is looked up again on every spawn,
 * so an upgraded install is picked up), answers its HELLO, carries MCP
 * frames both ways, and notices its death by EOF on the link or by
 * SIGCHLD, whichever comes first.  The relay hears of it at once (so it
 * can answer what the worker owed); the next worker is started as soon
 * as the exit status says whether it was a crash or an upgrade handoff
 * (exit 75 or WORKER_UPGRADE), which proxy-budget.c counts separately.
 * A worker that closes its link but keeps running gets PROXY_STATUS_MS
 * to exit before it is stopped and counted as a crash.
 *
 * The worker's stderr (and so its stdout, which spawn_child sends to
 * stderr) goes to <state dir>/logs/mcp-worker-<proxy pid>.log: the log
 * file is dup2'ed onto our own fd 2 around spawn_child and put back
 * after, which is safe because the proxy is single-threaded.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common.h"
#include "proxy.h"

#define PROXY_WORKER_NAME	"runtimed-mcp-worker"
#define PROXY_WORKER_ORPHANS	16
/* A worker that has not said HELLO by then is stuck: kill it. */
#define PROXY_WORKER_HELLO_MS	15000

struct proxy_worker {
	pid_t		 pid;		/* 0 once reaped */
	struct peer	*peer;		/* NULL once the link is gone */
	int		 hello;		/* handshake done */
	int		 upgrading;	/* exit is an upgrade, not a crash */
	int64_t		 started;	/* monotonic ms */
	struct event	*hello_timer;	/* bounds the wait for HELLO */
	struct event	*status_timer;	/* bounds the wait for the status */
};

static struct event_base	*proxy_worker_base;
static struct proxy_worker	*proxy_worker_cur;
/* The last worker: link gone, exit status not yet known. */
static struct proxy_worker	*proxy_worker_dying;
static pid_t			 proxy_worker_last_pid;
static struct event		*proxy_worker_sigchld;
static struct event		*proxy_worker_respawn;
static struct event		*proxy_worker_stop_timer;
static char			*proxy_worker_log;
static int			 proxy_worker_logfd = -1;
static int			 proxy_worker_tripped;
static int			 proxy_worker_stopping;
static void			(*proxy_worker_stop_done)(void);
/* Old workers signalled to exit and not reaped yet. */
static pid_t			 proxy_worker_orphans[PROXY_WORKER_ORPHANS];

static void	proxy_worker_spawn(void);
static void	proxy_worker_drained(struct peer *, void *);
static int	proxy_worker_mkdirs(const char *, char **);
static void	proxy_worker_tidy_log(void);
static void	proxy_worker_open_log(void);
static void	proxy_worker_orphan_add(pid_t);
static int	proxy_worker_orphan_remove(pid_t);
static void	proxy_worker_orphan_timeout(evutil_socket_t, short, void *);
static int	proxy_worker_no_children(void);
static void	proxy_worker_stop_finish(void);
static void	proxy_worker_respawn_cb(evutil_socket_t, short, void *);
static void	proxy_worker_schedule(int64_t);
static void	proxy_worker_free(struct proxy_worker *);
static void	proxy_worker_finish(struct proxy_worker *);
static void	proxy_worker_orphan(pid_t, int);
static void	proxy_worker_status_timeout(evutil_socket_t, short, void *);
static void	proxy_worker_lost(struct proxy_worker *, const char *, int);
static void	proxy_worker_sigchld_cb(evutil_socket_t, short, void *);
static void	proxy_worker_hello(struct proxy_worker *,
		    const struct proto_header *, const msgpack_object *);
static void	proxy_worker_message(const struct proto_mcp *);
static void	proxy_worker_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static void	proxy_worker_send_shutdown(struct peer *);
static void	proxy_worker_mcp(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	proxy_worker_ready(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	proxy_worker_upgrade(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	proxy_worker_refuse(struct peer *,
		    const struct proto_header *, const char *, void *);
static void	proxy_worker_hello_timeout(evutil_socket_t, short, void *);
static pid_t	proxy_worker_exec(const char *, int, char **);
static void	proxy_worker_cannot_start(const char *);
static void	proxy_worker_stop_timeout(evutil_socket_t, short, void *);
static void	proxy_worker_follow_log(void);

/* A worker's frames once it said HELLO; a body that does not read kills it. */
static const struct peer_dispatch proxy_worker_table[] = {
	{ PROTO_MSG_MCP, PEER_DISPATCH_UNPACK, proxy_worker_mcp },
	{ PROTO_MSG_WORKER_READY, PEER_DISPATCH_UNPACK, proxy_worker_ready },
	{ PROTO_MSG_WORKER_UPGRADE, PEER_DISPATCH_UNPACK, proxy_worker_upgrade },
	{ PROTO_MSG_PING, 0, peer_dispatch_pong },
	{ PROTO_MSG_PONG, 0, peer_dispatch_ignore },
	{ PROTO_MSG_OK, 0, peer_dispatch_ignore },
	{ 0, 0, NULL }
};

const char *
proxy_worker_log_path(void)
{
	return (proxy_worker_log != NULL ? proxy_worker_log : "stderr");
}

int
proxy_worker_unavailable(void)
{
	return (proxy_worker_tripped);
}

/* The pid of the current worker, else of the last one, else 0. */
long
proxy_worker_pid(void)
{
	if (proxy_worker_cur != NULL && proxy_worker_cur->pid > 0)
		return ((long)proxy_worker_cur->pid);
	return ((long)proxy_worker_last_pid);
}

/* mkdir -p with mode 0700 for what is missing; the last must be ours. */
static int
proxy_worker_mkdirs(const char *path, char **cause)
{
	char	*copy, *p;

	copy = xstrdup(path);
	for (p = copy + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0700) == -1 && errno != EEXIST) {
			xasprintf(cause, "mkdir %s: %s", copy, strerror(errno));
			free(copy);
			return (-1);
		}
		*p = '/';
	}
	free(copy);
	if (mkdir(path, 0700) == -1 && errno != EEXIST) {
		xasprintf(cause, "mkdir %s: %s", path, strerror(errno));
		return (-1);
	}
	return (sockdir_check_dir(path, 0, cause));
}

/* A worker rotated the log (common/log.c): hold the new file instead. */
static void
proxy_worker_follow_log(void)
{
	struct stat	sb, lb;
	int		fd;

	if (proxy_worker_log == NULL || proxy_worker_logfd == -1)
		return;
	if (fstat(proxy_worker_logfd, &sb) == 0 &&
	    lstat(proxy_worker_log, &lb) == 0 && lb.st_dev == sb.st_dev &&
	    lb.st_ino == sb.st_ino)
		return;
	fd = open(proxy_worker_log, O_WRONLY|O_CREAT|O_APPEND|O_NOFOLLOW|
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return;
	close(proxy_worker_logfd);
	proxy_worker_logfd = fd;
}

/* At exit: a log nothing was written to is not kept. */
static void
proxy_worker_tidy_log(void)
{
	struct stat	sb;

	if (proxy_worker_log == NULL || proxy_worker_logfd == -1)
		return;
	proxy_worker_follow_log();
	if (fstat(proxy_worker_logfd, &sb) == 0 && sb.st_size == 0)
		unlink(proxy_worker_log);
}

/* Open the worker's log file; without one its stderr is ours. */
static void
proxy_worker_open_log(void)
{
	char	*state, *dir, *cause = NULL;

	state = sockdir_state_path();
	xasprintf(&dir, "%s/logs", state);
	if (proxy_worker_mkdirs(state, &cause) == 0 &&
	    proxy_worker_mkdirs(dir, &cause) == 0) {
		xasprintf(&proxy_worker_log, "%s/mcp-worker-%ld.log", dir,
		    (long)getpid());
		proxy_worker_logfd = open(proxy_worker_log,
		    O_WRONLY|O_CREAT|O_APPEND|O_NOFOLLOW|O_CLOEXEC, 0600);
		if (proxy_worker_logfd == -1) {
			log_warn("open %s", proxy_worker_log);
			free(proxy_worker_log);
			proxy_worker_log = NULL;
		} else
			atexit(proxy_worker_tidy_log);
	} else {
		log_warnx("worker log: %s", cause);
		free(cause);
	}
	free(dir);
	free(state);
}

static void
proxy_worker_orphan_add(pid_t pid)
{
	u_int	i;

	for (i = 0; i < PROXY_WORKER_ORPHANS; i++) {
		if (proxy_worker_orphans[i] == 0) {
			proxy_worker_orphans[i] = pid;
			return;
		}
	}
	/* No room to track it: make sure it cannot linger. */
	kill(pid, SIGKILL);
}

static int
proxy_worker_orphan_remove(pid_t pid)
{
	u_int	i;

	for (i = 0; i < PROXY_WORKER_ORPHANS; i++) {
		if (proxy_worker_orphans[i] == pid) {
			proxy_worker_orphans[i] = 0;
			return (1);
		}
	}
	return (0);
}

/* An orphan that ignored SIGTERM: its pid is still ours (unreaped). */
static void
proxy_worker_orphan_timeout(evutil_socket_t fd, short events, void *arg)
{
	pid_t	pid = (pid_t)(intptr_t)arg;
	u_int	i;

	for (i = 0; i < PROXY_WORKER_ORPHANS; i++) {
		if (proxy_worker_orphans[i] == pid) {
			log_warnx("worker %ld did not exit; killing it",
			    (long)pid);
			kill(pid, SIGKILL);
		}
	}
}

static int
proxy_worker_no_children(void)
{
	u_int	i;

	if (proxy_worker_cur != NULL || proxy_worker_dying != NULL)
		return (0);
	for (i = 0; i < PROXY_WORKER_ORPHANS; i++) {
		if (proxy_worker_orphans[i] != 0)
			return (0);
	}
	return (1);
}

static void
proxy_worker_stop_finish(void)
{
	void	(*done)(void) = proxy_worker_stop_done;

	if (done == NULL)
		return;
	proxy_worker_stop_done = NULL;
	if (proxy_worker_stop_timer != NULL)
		event_del(proxy_worker_stop_timer);
	done();
}

static void
proxy_worker_respawn_cb(evutil_socket_t fd, short events, void *arg)
{
	if (proxy_worker_stopping || proxy_worker_cur != NULL)
		return;
	if (proxy_worker_tripped) {
		log_warnx("cooldown over; starting the worker again");
		proxy_worker_tripped = 0;
		proxy_budget_reset();
		proxy_relay_worker_unavailable(NULL);
	}
	proxy_worker_spawn();
}

/* Start a new worker after delay_ms (tripped: the budget refuses). */
static void
proxy_worker_schedule(int64_t delay_ms)
{
	struct timeval	tv;

	if (proxy_worker_stopping)
		return;
	if (proxy_budget_tripped() && !proxy_worker_tripped) {
		proxy_worker_tripped = 1;
		proxy_relay_worker_unavailable(proxy_budget_why());
	}
	tv.tv_sec = delay_ms / 1000;
	tv.tv_usec = (delay_ms % 1000) * 1000;
	evtimer_add(proxy_worker_respawn, &tv);
}

static void
proxy_worker_free(struct proxy_worker *w)
{
	if (w->hello_timer != NULL)
		event_free(w->hello_timer);
	if (w->status_timer != NULL)
		event_free(w->status_timer);
	free(w);
}

/* Its exit status is known (or given up on): count it, start the next. */
static void
proxy_worker_finish(struct proxy_worker *w)
{
	int64_t	lived = util_mono_ms() - w->started, delay;

	if (w == proxy_worker_dying)
		proxy_worker_dying = NULL;
	delay = proxy_budget_note(w->upgrading ? PROXY_BUDGET_UPGRADE :
	    PROXY_BUDGET_CRASH, lived);
	if (delay > 0)
		log_info("next worker in %lld ms", (long long)delay);
	proxy_worker_free(w);
	proxy_worker_schedule(delay);
}

/* Stop a process we no longer talk to: SIGTERM now, SIGKILL later. */
static void
proxy_worker_orphan(pid_t pid, int sig)
{
	struct timeval	tv = { PROXY_SHUTDOWN_MS / 1000,
			    (PROXY_SHUTDOWN_MS % 1000) * 1000 };

	proxy_worker_orphan_add(pid);
	if (sig != 0)
		kill(pid, sig);
	event_base_once(proxy_worker_base, -1, EV_TIMEOUT,
	    proxy_worker_orphan_timeout, (void *)(intptr_t)pid, &tv);
}

/* A closed link and still no exit status: stop it, call it a crash. */
static void
proxy_worker_status_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct proxy_worker	*w = arg;

	log_warnx("worker %ld closed its link but did not exit; stopping it",
	    (long)w->pid);
	proxy_worker_orphan(w->pid, SIGTERM);
	w->pid = 0;
	w->upgrading = 0;
	proxy_worker_finish(w);
}

/*
 * The current worker is gone (link closed, process exited, or no HELLO):
 * detach the link and let the relay answer what the worker owed at once;
 * the next worker starts once the exit status is known.
 */
static void
proxy_worker_lost(struct proxy_worker *w, const char *why, int term)
{
	struct timeval	tv = { PROXY_STATUS_MS / 1000,
			    (PROXY_STATUS_MS % 1000) * 1000 };

	if (w != proxy_worker_cur)
		return;
	proxy_worker_cur = NULL;
	if (!proxy_worker_stopping)
		log_warnx("worker %ld lost: %s", (long)w->pid, why);
	if (w->pid > 0)
		proxy_worker_last_pid = w->pid;
	if (w->peer != NULL) {
		peer_set_arg(w->peer, NULL);
		peer_kill(w->peer, NULL);
		w->peer = NULL;
	}
	if (w->hello_timer != NULL)
		evtimer_del(w->hello_timer);
	if (proxy_worker_stopping) {
		if (w->pid > 0)
			proxy_worker_orphan(w->pid, SIGTERM);
		proxy_worker_free(w);
		if (proxy_worker_no_children())
			proxy_worker_stop_finish();
		return;
	}
	proxy_relay_worker_down();
	if (w->pid <= 0) {
		proxy_worker_finish(w);
		return;
	}
	if (term)
		kill(w->pid, SIGTERM);
	proxy_worker_dying = w;
	w->status_timer = evtimer_new(proxy_worker_base,
	    proxy_worker_status_timeout, w);
	evtimer_add(w->status_timer, &tv);
}

static void
proxy_worker_sigchld_cb(evutil_socket_t sig, short events, void *arg)
{
	struct proxy_worker	*w;
	char			*why;
	pid_t			 pid;
	int			 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (WIFEXITED(status))
			xasprintf(&why, "exited with status %d",
			    WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			xasprintf(&why, "killed by signal %d (%s)",
			    WTERMSIG(status), strsignal(WTERMSIG(status)));
		else {
			continue;
		}
		log_info("worker %ld %s", (long)pid, why);
		if ((w = proxy_worker_cur) == NULL || w->pid != pid)
			w = proxy_worker_dying;
		if (w != NULL && w->pid == pid) {
			w->pid = 0;
			if (WIFEXITED(status) &&
			    WEXITSTATUS(status) == PROXY_EXIT_UPGRADE)
				w->upgrading = 1;
			if (w == proxy_worker_cur)
				proxy_worker_lost(w, why, 0);
			else
				proxy_worker_finish(w);
		} else
			proxy_worker_orphan_remove(pid);
		free(why);
	}
	if (proxy_worker_stopping && proxy_worker_no_children())
		proxy_worker_stop_finish();
}

static void
proxy_worker_hello(struct proxy_worker *w, const struct proto_header *hdr,
    const msgpack_object *body)
{
	struct proto_hello		h;
	struct proto_incarnation	inc;
	struct mpbuf			b;
	char				err[256];

	if (hdr->type != PROTO_MSG_HELLO) {
		peer_kill(w->peer, "frame before HELLO");
		return;
	}
	if (proto_hello_unpack(body, &h, err, sizeof err) != 0) {
		peer_kill(w->peer, err);
		return;
	}
	mpbuf_init(&b);
	if (proto_hello_check(&h, err, sizeof err) != 0) {
		proto_mismatch_pack(&b.pk, h.version);
		peer_send(w->peer, PROTO_MSG_VERSION_MISMATCH, hdr->id, &b.sb);
		mpbuf_free(&b);
		peer_kill(w->peer, err);
		return;
	}
	if (strcmp(h.kind, PROTO_PEER_WORKER) != 0) {
		mpbuf_free(&b);
		peer_kill(w->peer, "HELLO from something not a worker");
		return;
	}
	memset(&inc, 0, sizeof inc);
	inc.pid = getpid();
	inc.started_at = proxy_started_at;
	snprintf(inc.version, sizeof inc.version, "%s", RUNTIMED_VERSION);
	proto_hello_ok_pack(&b.pk, &inc);
	peer_send(w->peer, PROTO_MSG_HELLO_OK, hdr->id, &b.sb);
	mpbuf_free(&b);
	w->hello = 1;
	evtimer_del(w->hello_timer);
	log_info("worker %ld (%s) up after %lld ms", (long)w->pid, h.label,
	    (long long)(util_mono_ms() - w->started));
	proxy_relay_worker_up();
}

/*
 * An MCP frame: hand the message on with the id and method the worker
 * carries beside it, if it does (and they are text a C string can hold);
 * else the relay parses the message to learn them.
 */
static void
proxy_worker_message(const struct proto_mcp *mcp)
{
	struct proxy_relay_head	 head;
	char			*id = NULL, *method = NULL;

	if ((mcp->id.ptr == NULL && mcp->method.ptr == NULL) ||
	    (mcp->id.ptr != NULL && memchr(mcp->id.ptr, '\0',
	    mcp->id.len) != NULL) ||
	    (mcp->method.ptr != NULL && memchr(mcp->method.ptr, '\0',
	    mcp->method.len) != NULL)) {
		proxy_relay_worker_message(mcp->json.ptr, mcp->json.len, NULL);
		return;
	}
	if (mcp->id.ptr != NULL)
		id = xstrndup(mcp->id.ptr, mcp->id.len);
	if (mcp->method.ptr != NULL)
		method = xstrndup(mcp->method.ptr, mcp->method.len);
	head.id = id;
	head.method = method;
	head.error = mcp->error;
	proxy_relay_worker_message(mcp->json.ptr, mcp->json.len, &head);
	free(id);
	free(method);
}

static void
proxy_worker_mcp(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	proxy_worker_message(m);
}

/* The catalog is learnt by tools/list, like any client's. */
static void
proxy_worker_ready(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct proxy_worker	*w = arg;

	log_debug("worker %ld ready", (long)w->pid);
}

static void
proxy_worker_upgrade(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct proxy_worker	*w = arg;

	log_info("worker %ld will exit for an upgrade", (long)w->pid);
	w->upgrading = 1;
}

/* A worker is ours: a body that does not read means it is broken. */
static void
proxy_worker_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	peer_kill(p, err);
}

static void
proxy_worker_dispatch(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct proxy_worker	*w = arg;

	if (w == NULL)
		return;		/* a link we already let go of */
	if (hdr == NULL) {
		w->peer = NULL;
		proxy_worker_lost(w, "link closed", 0);
		return;
	}
	if (!w->hello) {
		proxy_worker_hello(w, hdr, body);
		return;
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_WORKER) ||
	    peer_dispatch(proxy_worker_table, proxy_worker_refuse, peer, hdr,
	    body, w) != 0) {
		log_warnx("worker sent unexpected %s",
		    proto_msg_name(hdr->type));
		peer_kill(peer, "unexpected frame");
	}
}

/* Ask a worker to exit. */
static void
proxy_worker_send_shutdown(struct peer *peer)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	proto_worker_shutdown_pack(&b.pk);
	peer_send(peer, PROTO_MSG_WORKER_SHUTDOWN, 0, &b.sb);
	mpbuf_free(&b);
}

static void
proxy_worker_hello_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct proxy_worker	*w = arg;

	log_warnx("worker %ld sent no HELLO in %d s; killing it",
	    (long)w->pid, PROXY_WORKER_HELLO_MS / 1000);
	proxy_worker_lost(w, "no HELLO", 1);
}

/* Run the worker with its stderr on the log file (see the top). */
static pid_t
proxy_worker_exec(const char *path, int fd3, char **cause)
{
	char	*argv[7] = { (char *)path, "--proxy-fd", "3" };
	pid_t	 pid;
	int	 saved = -1, i = 3;

	/* As verbose as we are; it writes and rotates the log itself. */
	if (log_level_flag(proxy_log_level) != NULL)
		argv[i++] = (char *)log_level_flag(proxy_log_level);
	if (proxy_worker_log != NULL) {
		argv[i++] = (char *)"--log";
		argv[i++] = proxy_worker_log;
	}
	argv[i] = NULL;

	proxy_worker_follow_log();
	if (proxy_worker_logfd != -1) {
		saved = fcntl(2, F_DUPFD_CLOEXEC, 10);
		if (saved == -1 || dup2(proxy_worker_logfd, 2) == -1) {
			if (saved != -1)
				close(saved);
			saved = -1;
		}
	}
	pid = spawn_child(path, argv, fd3, 0, cause);
	if (saved != -1) {
		dup2(saved, 2);
		close(saved);
	}
	return (pid);
}

/*
 * No worker could be run at all: that is no crash to retry at once, and
 * the client is told the cause (which names the paths tried), not a
 * count of deaths.  The log says it too, so the log is never empty.
 */
static void
proxy_worker_cannot_start(const char *cause)
{
	log_warnx("%s", cause);
	proxy_worker_follow_log();
	if (proxy_worker_logfd != -1)
		dprintf(proxy_worker_logfd, "runtimed-mcp: %s\n", cause);
	proxy_worker_schedule(proxy_budget_trip(cause));
}

static void
proxy_worker_spawn(void)
{
	struct proxy_worker	*w;
	struct timeval		 tv;
	char			*path, *cause = NULL;
	int			 sv[2];
	pid_t			 pid;

	if ((path = spawn_find(PROXY_WORKER_NAME, RUNTIMED_LIBEXECDIR,
	    &cause)) == NULL) {
		proxy_worker_cannot_start(cause);
		free(cause);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair");
		free(path);
		proxy_worker_schedule(proxy_budget_note(PROXY_BUDGET_CRASH, 0));
		return;
	}
	pid = proxy_worker_exec(path, sv[1], &cause);
	close(sv[1]);
	if (pid == -1) {
		proxy_worker_cannot_start(cause);
		free(cause);
		free(path);
		close(sv[0]);
		return;
	}
	log_info("started %s, pid %ld, log %s", path, (long)pid,
	    proxy_worker_log_path());
	free(path);

	w = xcalloc(1, sizeof *w);
	w->pid = pid;
	w->started = util_mono_ms();
	w->peer = peer_create(proxy_worker_base, sv[0], "worker",
	    proxy_worker_dispatch, w);
	peer_set_drain_cb(w->peer, PEER_QUEUE_LOW, proxy_worker_drained);
	w->hello_timer = evtimer_new(proxy_worker_base,
	    proxy_worker_hello_timeout, w);
	tv.tv_sec = PROXY_WORKER_HELLO_MS / 1000;
	tv.tv_usec = 0;
	evtimer_add(w->hello_timer, &tv);
	proxy_worker_cur = w;
}

/* What we queued for the worker drained below the low mark. */
static void
proxy_worker_drained(struct peer *peer, void *arg)
{
	proxy_stdio_flow();
}

/* Bytes queued for the current worker and not yet taken by it. */
size_t
proxy_worker_pending(void)
{
	struct proxy_worker	*w = proxy_worker_cur;

	if (w == NULL || w->peer == NULL)
		return (0);
	return (peer_pending_output(w->peer));
}

/* Read the worker's messages (1) or leave them queued in it (0). */
void
proxy_worker_set_reading(int on)
{
	struct proxy_worker	*w = proxy_worker_cur;

	if (w != NULL && w->peer != NULL)
		peer_set_reading(w->peer, on);
}

/* One MCP message to the current worker; -1 when there is no link. */
int
proxy_worker_send(const char *json, size_t len)
{
	struct proxy_worker	*w = proxy_worker_cur;
	struct proto_mcp	 mcp;
	struct mpbuf		 b;
	int			 r;

	if (w == NULL || w->peer == NULL || !w->hello)
		return (-1);
	/* {json}: the map around the text, then the text, not copied. */
	memset(&mcp, 0, sizeof mcp);
	mcp.json.ptr = json;
	mcp.json.len = len;
	mpbuf_init(&b);
	proto_mcp_pack_head(&b.pk, &mcp);
	r = peer_send_parts(w->peer, PROTO_MSG_MCP, 0, b.sb.data, b.sb.size,
	    json, len);
	mpbuf_free(&b);
	proxy_stdio_flow();
	return (r);
}

/*
 * The reconnect tool: replace the worker (not the daemon) now.  The old
 * one is asked to exit, which does not count as a crash; a tripped
 * budget is reset, since a person or agent asked to try again.
 */
void
proxy_worker_replace(void)
{
	struct proxy_worker	*w = proxy_worker_cur;

	if (proxy_worker_stopping)
		return;
	if (proxy_worker_tripped) {
		proxy_worker_tripped = 0;
		proxy_budget_reset();
		proxy_relay_worker_unavailable(NULL);
	}
	if (w != NULL) {
		log_info("replacing worker %ld on request", (long)w->pid);
		proxy_worker_cur = NULL;
		if (w->pid > 0)
			proxy_worker_last_pid = w->pid;
		if (w->peer != NULL) {
			proxy_worker_send_shutdown(w->peer);
			peer_set_arg(w->peer, NULL);
			peer_kill(w->peer, NULL);
		}
		if (w->pid > 0)
			proxy_worker_orphan(w->pid, 0);
		proxy_worker_free(w);
		proxy_relay_worker_down();
	} else if (proxy_worker_dying != NULL)
		return;		/* its status will start the next one */
	evtimer_del(proxy_worker_respawn);
	proxy_worker_spawn();
}

static void
proxy_worker_stop_timeout(evutil_socket_t fd, short events, void *arg)
{
	u_int	i;
	pid_t	pid;

	for (i = 0; i < PROXY_WORKER_ORPHANS; i++) {
		if ((pid = proxy_worker_orphans[i]) == 0)
			continue;
		log_warnx("worker %ld did not exit in time; killing it",
		    (long)pid);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		proxy_worker_orphans[i] = 0;
	}
	proxy_worker_stop_finish();
}

/*
 * Ask the worker to exit (WORKER_SHUTDOWN, then close the link), give it
 * PROXY_SHUTDOWN_MS, then SIGKILL; call done when no child is left.
 */
void
proxy_worker_shutdown(void (*done)(void))
{
	struct proxy_worker	*w = proxy_worker_cur;
	struct timeval		 tv = { PROXY_SHUTDOWN_MS / 1000,
				    (PROXY_SHUTDOWN_MS % 1000) * 1000 };

	proxy_worker_stopping = 1;
	proxy_worker_stop_done = done;
	evtimer_del(proxy_worker_respawn);
	if (w != NULL) {
		if (w->peer != NULL) {
			proxy_worker_send_shutdown(w->peer);
			peer_set_arg(w->peer, NULL);
			peer_kill(w->peer, NULL);
			w->peer = NULL;
		}
		/* Keep it as an orphan so the timer can still kill it. */
		proxy_worker_cur = NULL;
		if (w->pid > 0)
			proxy_worker_orphan_add(w->pid);
		proxy_worker_free(w);
	}
	if ((w = proxy_worker_dying) != NULL) {
		proxy_worker_dying = NULL;
		if (w->pid > 0)
			proxy_worker_orphan_add(w->pid);
		proxy_worker_free(w);
	}
	if (proxy_worker_no_children()) {
		proxy_worker_stop_finish();
		return;
	}
	proxy_worker_stop_timer = evtimer_new(proxy_worker_base,
	    proxy_worker_stop_timeout, NULL);
	evtimer_add(proxy_worker_stop_timer, &tv);
}

void
proxy_worker_init(struct event_base *base)
{
	proxy_worker_base = base;
	proxy_worker_open_log();
	proxy_worker_sigchld = evsignal_new(base, SIGCHLD,
	    proxy_worker_sigchld_cb, NULL);
	evsignal_add(proxy_worker_sigchld, NULL);
	proxy_worker_respawn = evtimer_new(base, proxy_worker_respawn_cb,
	    NULL);
	proxy_worker_spawn();
}
