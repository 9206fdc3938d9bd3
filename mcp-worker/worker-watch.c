/* SPDX-License-Identifier: ISC */
/*
 * worker-watch.c: the daemon incarnation, watched live.  Every HELLO_OK
 * reports the incarnation it came from; a persistent room-less probe
 * asks DAEMON_STATUS every WORKER_WATCH_PERIOD_MS and at once when a
 * connection drops.  One failed lookup is not loss: it is retried after
 * WORKER_WATCH_RETRY_MS and only a second failure confirms absence.  A
 * new incarnation or a confirmed absence expires every handle issued
 * under the old one; a changed daemon version makes the worker hand off
 * (WORKER_UPGRADE, exit 75) so the proxy starts a matching worker.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static struct {
	struct event_base		*base;
	struct event			*timer;
	struct worker_dconn		*dc;
	int				 known;
	struct proto_incarnation	 inc;
	char				 version[32];	/* first seen */
	int				 failures;
	int				 probing;
} worker_watch;

static void	worker_watch_arm(int);
static __dead void	worker_watch_upgrade(const char *);
static void	worker_watch_lost(struct worker_dconn *, void *);
static void	worker_watch_failed(void);
static void	worker_watch_status(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_watch_tick(evutil_socket_t, short, void *);

void
worker_watch_start(struct event_base *base)
{
	worker_watch.base = base;
}

static __dead void
worker_watch_upgrade(const char *version)
{
	log_info("runtimed changed version %s -> %s: handing off",
	    worker_watch.version, version);
	worker_rpc_log(5, "runtimed", "runtimed upgraded (%s -> %s); the "
	    "worker restarts", worker_watch.version, version);
	worker_proxy_upgrade();
	worker_exit(WORKER_EXIT_UPGRADE);
}

/* An incarnation reported by the daemon (HELLO_OK or DAEMON_STATUS). */
void
worker_watch_seen(const struct proto_incarnation *inc)
{
	if (worker_watch.base == NULL)
		return;
	if (worker_watch.version[0] == '\0')
		snprintf(worker_watch.version, sizeof worker_watch.version,
		    "%s", inc->version);
	else if (inc->version[0] != '\0' &&
	    strcmp(inc->version, worker_watch.version) != 0)
		worker_watch_upgrade(inc->version);
	worker_watch.failures = 0;
	if (worker_watch.known && (inc->pid != worker_watch.inc.pid ||
	    inc->started_at != worker_watch.inc.started_at)) {
		log_info("runtimed replaced: pid %lld -> %lld",
		    (long long)worker_watch.inc.pid, (long long)inc->pid);
		worker_watch.inc = *inc;
		worker_attach_expire(inc, "the daemon was replaced");
	}
	worker_watch.inc = *inc;
	if (!worker_watch.known) {
		worker_watch.known = 1;
		worker_attach_expire(inc, "the daemon was replaced");
		worker_watch_arm(WORKER_WATCH_PERIOD_MS);
	}
}

static void
worker_watch_lost(struct worker_dconn *dc, void *arg)
{
	worker_watch_poke();
}

static void
worker_watch_failed(void)
{
	if (++worker_watch.failures < 2) {
		worker_watch_arm(WORKER_WATCH_RETRY_MS);
		return;
	}
	/* Confirmed: nobody answers.  Handles of that daemon are gone. */
	log_info("runtimed is gone");
	worker_watch.known = 0;
	worker_watch.failures = 0;
	worker_attach_expire(NULL, "the daemon stopped");
	/* Hosted handles wait for the next daemon: keep looking. */
	if (worker_attach_rejoin_pending())
		worker_watch_arm(WORKER_WATCH_PERIOD_MS);
}

static void
worker_watch_status(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct proto_incarnation		 inc;
	struct proto_daemon_status_reply	 m;
	char					 err[256];

	worker_watch.probing = 0;
	if (code == NULL && type == PROTO_MSG_DAEMON_STATUS_REPLY &&
	    proto_daemon_status_reply_unpack(reply, &m, err,
	    sizeof err) != 0) {
		log_warnx("%s", err);
		msg = err;
		type = 0;
	}
	if (code != NULL || type != PROTO_MSG_DAEMON_STATUS_REPLY) {
		log_debug("%s: probe failed: %s", __func__,
		    msg != NULL ? msg : "unexpected reply");
		if (worker_watch.dc != NULL) {
			worker_daemon_free(worker_watch.dc,
			    PROTO_E_DAEMON_ABSENT,
			    "closed");
			worker_watch.dc = NULL;
		}
		if (worker_watch.known)
			worker_watch_failed();
		else if (worker_attach_rejoin_pending())
			worker_watch_arm(WORKER_WATCH_PERIOD_MS);
		return;
	}
	memset(&inc, 0, sizeof inc);
	inc.pid = m.pid;
	inc.started_at = m.started_at;
	snprintf(inc.version, sizeof inc.version, "%.*s", (int)m.version.len,
	    m.version.ptr);
	worker_watch_seen(&inc);
	/* Same daemon, yet a room connection dropped: unavailable. */
	worker_attach_unavailable(NULL);
	worker_attach_rejoin_all();
	worker_watch_arm(WORKER_WATCH_PERIOD_MS);
}

static void
worker_watch_tick(evutil_socket_t fd, short events, void *arg)
{
	if (worker_watch.probing || (!worker_watch.known &&
	    !worker_attach_rejoin_pending()))
		return;
	if (worker_watch.dc != NULL && !worker_daemon_alive(worker_watch.dc)) {
		worker_daemon_free(worker_watch.dc, PROTO_E_DAEMON_ABSENT,
		    "closed");
		worker_watch.dc = NULL;
	}
	if (worker_watch.dc == NULL) {
		worker_watch.dc = worker_daemon_probe("watch");
		worker_daemon_set_cbs(worker_watch.dc, worker_watch_lost, NULL,
		    NULL);
	}
	worker_watch.probing = 1;
	worker_daemon_request(worker_watch.dc, PROTO_MSG_DAEMON_STATUS, NULL,
	    worker_watch_status, NULL);
}

static void
worker_watch_arm(int ms)
{
	struct timeval	tv;

	if (worker_watch.base == NULL)
		return;
	if (worker_watch.timer == NULL)
		worker_watch.timer = evtimer_new(worker_watch.base,
		    worker_watch_tick, NULL);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(worker_watch.timer, &tv);
}

/* A connection dropped: look now rather than at the next period. */
void
worker_watch_poke(void)
{
	if (worker_watch.known && !worker_watch.probing)
		worker_watch_arm(0);
}
