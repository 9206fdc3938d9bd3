/* SPDX-License-Identifier: ISC */
/*
 * proxy.h: runtimed-mcp, the process an MCP client spawns.  It speaks
 * newline-delimited JSON-RPC on stdin/stdout and relays every message,
 * unchanged, to one runtimed-mcp-worker child over a socketpair in
 * PROTO_MSG_MCP frames.  When the worker dies the proxy starts another
 * one, replays the client's initialize to it privately and carries on,
 * so the client's connection survives worker crashes and upgrades.
 *
 *	proxy.c		main, options, signals, shutdown
 *	proxy-stdio.c	the client side: lines in, lines out
 *	proxy-relay.c	the relay: in-flight requests, read-only retries,
 *			the queue while no worker is up, refusals
 *	proxy-request.c	reading a client message: id, method, params,
 *			whether it may be sent again
 *	proxy-replay.c	what carries over to a new worker: the replayed
 *			initialize, the proxy's own requests, reconnect
 *	proxy-subscribe.c subscribe, unsubscribe and listen on the leases
 *	proxy-answer.c	the answers the proxy gives itself (lost calls,
 *			refusals, reconnect, tools/list from the catalog)
 *	proxy-catalog.c	the tools/list catalog: disk cache, built-in copy,
 *			discovery from the current worker
 *	proxy-lease.c	resource subscriptions: reference-counted leases
 *	proxy-budget.c	the crash budget and the upgrade limiter
 *	proxy-worker.c	the worker child: spawn, handshake, frames, death
 *	proxy-builtin.c	(generated) the catalog of the worker built with us
 */

#ifndef PROXY_H
#define PROXY_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct json_object;

/* Crash budget: this many crashes inside the window trip it. */
#define PROXY_CRASH_LIMIT	5
#define PROXY_CRASH_WINDOW_MS	30000
/* Once tripped, requests are refused for this long. */
#define PROXY_TRIP_MS		60000
/* A worker that cannot be found or started is tried again after this. */
#define PROXY_START_RETRY_MS	10000
/* A worker that lived less than this died "quickly": back off. */
#define PROXY_QUICK_MS		1000
/* How long a worker gets to exit after WORKER_SHUTDOWN. */
#define PROXY_SHUTDOWN_MS	2000
/* How long a closed link waits for the exit status (crash or upgrade). */
#define PROXY_STATUS_MS		1000
/* How long stdin EOF waits for answers to requests already sent. */
#define PROXY_DRAIN_MS		2000
/* A parsed message this large is freed with malloc_trim (proxy-request.c). */
#define PROXY_TRIM_BYTES	(16 * 1024)
/* Requests queued while no worker is up. */
#define PROXY_QUEUE_MAX		1024
/* The worker's "daemon upgraded, start me again" exit status. */
#define PROXY_EXIT_UPGRADE	75

/* proxy.c */
extern struct event_base *proxy_base;
extern int64_t	 proxy_started_at;
extern int	 proxy_log_level;	/* given to the worker too */
void		 proxy_shutdown(int, const char *);
void		 proxy_shutdown_check(void);

/* proxy-stdio.c */
void		 proxy_stdio_init(struct event_base *);
void		 proxy_stdio_write_line(const char *, size_t);
void		 proxy_stdio_close_input(void);
void		 proxy_stdio_flush(int);
void		 proxy_stdio_flow(void);

/* proxy-relay.c: called by proxy-stdio.c and proxy-worker.c. */
void		 proxy_relay_client_line(const char *, size_t);
void		 proxy_relay_client_overlong(const char *);
void		 proxy_relay_worker_up(void);
struct proxy_relay_head {
	const char	*id;		/* JSON text; NULL if none */
	const char	*method;
	int		 error;
};
void		 proxy_relay_worker_message(const char *, size_t,
		     const struct proxy_relay_head *);
void		 proxy_relay_worker_down(void);
void		 proxy_relay_worker_unavailable(const char *);
int		 proxy_relay_pending(void);
size_t		 proxy_relay_queued_bytes(void);
void		 proxy_relay_abandon(void);
void		 proxy_relay_free(void);
void		 proxy_relay_resume(void);
int		 proxy_relay_up(void);

/* proxy-request.c */
struct json_object *proxy_request_parse(const char *, size_t);
void		 proxy_request_free(struct json_object *, size_t);
void		 proxy_request_classify(struct json_object *, char **,
		     const char **);
const char	*proxy_request_param(struct json_object *, const char *);
int		 proxy_request_modern(struct json_object *);
int		 proxy_request_may_repeat(struct json_object *, const char *);

/* proxy-replay.c */
enum proxy_replay_kind {
	PROXY_REPLAY_INIT,	/* initialize for a new worker */
	PROXY_REPLAY_DISCOVER,	/* tools/list for the catalog */
	PROXY_REPLAY_SUBSCRIBE,	/* a lease's worker subscription */
};
void		 proxy_replay_private(enum proxy_replay_kind, const char *,
		     const char *);
void		 proxy_replay_privs_clear(void);
int		 proxy_replay_owns(const char *);
void		 proxy_replay_client_initialized(void);
void		 proxy_replay_remember(struct json_object *, const char *,
		     size_t, const char *);
int		 proxy_replay_init_pending(const char *, const char **,
		     size_t *);
void		 proxy_replay_init_answer(const char *, size_t);
int		 proxy_replay_start(void);
void		 proxy_replay_worker_ready(void);
void		 proxy_replay_answer(struct json_object *, const char *);
void		 proxy_replay_reconnect(struct json_object *, const char *);
void		 proxy_replay_reconnected(const char *);
void		 proxy_replay_cancel(const char *);
int		 proxy_replay_pending(void);
void		 proxy_replay_abandon(void);
void		 proxy_replay_free(void);

/* proxy-subscribe.c */
void		 proxy_subscribe_worker(const char *);
void		 proxy_subscribe_drop(const char *);
void		 proxy_subscribe_listen(struct json_object *, const char *);
int		 proxy_subscribe_request(struct json_object *, const char *,
		     const char *, char **);
void		 proxy_subscribe_cancel(const char *);

/* proxy-answer.c: what the proxy answers itself (proxy-relay.c). */
void		 proxy_answer_error(const char *, int, const char *);
void		 proxy_answer_missing_tasks(const char *);
void		 proxy_answer_result(const char *, struct json_object *);
void		 proxy_answer_tool_error(const char *, const char *,
		     const char *);
void		 proxy_answer_lost_call(const char *);
void		 proxy_answer_restarted(const char *, const char *);
void		 proxy_answer_unavailable(const char *, const char *,
		     const char *);
void		 proxy_answer_reconnected(const char *, long, long);
void		 proxy_answer_catalog(const char *);
void		 proxy_answer_notify(const char *);
void		 proxy_answer_subscription_ended(const char *);
int		 proxy_answer_structured(void);
void		 proxy_answer_set_structured(int);
void		 proxy_answer_listen_acknowledged(const char *,
		    struct json_object *);

/* proxy-catalog.c */
/* The params of the proxy's own tools/list: the catalog with its schemas. */
#define PROXY_CATALOG_ASK	"{\"_meta\":{\"" TOOLRESULT_STRUCTURED "\":true}}"
void		 proxy_catalog_init(void);
int		 proxy_catalog_ready(void);
const char	*proxy_catalog_result(int);
int		 proxy_catalog_read_only(const char *);
int		 proxy_catalog_discovered(struct json_object *);
void		 proxy_catalog_free(void);

/* proxy-lease.c */
enum proxy_lease_change {
	PROXY_LEASE_NONE,	/* nothing for the worker to do */
	PROXY_LEASE_FIRST,	/* first lease: subscribe the worker */
	PROXY_LEASE_LAST,	/* last lease gone: unsubscribe the worker */
	PROXY_LEASE_FULL,	/* too many watches */
	PROXY_LEASE_UNKNOWN,	/* this holder had no lease on it */
};
enum proxy_lease_change proxy_lease_add(const char *, const char *);
enum proxy_lease_change proxy_lease_remove(const char *, const char *);
void		 proxy_lease_remove_holder(const char *,
		     void (*)(const char *));
void		 proxy_lease_replaced(void (*)(const char *));
void		 proxy_lease_foreach(void (*)(const char *));
void		 proxy_lease_free(void);

/* proxy-budget.c */
enum proxy_budget_kind {
	PROXY_BUDGET_CRASH,
	PROXY_BUDGET_UPGRADE,
};
int64_t		 proxy_budget_note(enum proxy_budget_kind, int64_t);
int64_t		 proxy_budget_trip(const char *);
int		 proxy_budget_tripped(void);
int64_t		 proxy_budget_retry_in(void);
const char	*proxy_budget_why(void);
void		 proxy_budget_reset(void);

/* proxy-worker.c */
void		 proxy_worker_init(struct event_base *);
int		 proxy_worker_send(const char *, size_t);
void		 proxy_worker_replace(void);
void		 proxy_worker_shutdown(void (*)(void));
const char	*proxy_worker_log_path(void);
int		 proxy_worker_unavailable(void);
long		 proxy_worker_pid(void);
size_t		 proxy_worker_pending(void);
void		 proxy_worker_set_reading(int);

/* proxy-builtin.c (generated; empty when the worker could not print it) */
extern const char proxy_builtin_catalog[];

#endif
