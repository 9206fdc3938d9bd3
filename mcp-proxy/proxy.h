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
 *	proxy-relay.c	JSON-RPC bookkeeping: initialize, in-flight requests,
 *			the queue while no worker is up
 *	proxy-worker.c	the worker child: spawn, handshake, frames,
 *			restarts and the restart limiter
 */

#ifndef PROXY_H
#define PROXY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* Restart limiter: this many crashes inside the window trips it. */
#define PROXY_CRASH_LIMIT	5
#define PROXY_CRASH_WINDOW_MS	30000
/* Once tripped, requests are refused for this long. */
#define PROXY_TRIP_MS		60000
/* How long a worker gets to exit after WORKER_SHUTDOWN. */
#define PROXY_SHUTDOWN_MS	2000
/* How long stdin EOF waits for answers to requests already sent. */
#define PROXY_DRAIN_MS		2000
/* Requests queued while no worker is up. */
#define PROXY_QUEUE_MAX		1024

/* proxy.c */
extern struct event_base *proxy_base;
extern int64_t	 proxy_started_at;
void		 proxy_shutdown(int, const char *);
void		 proxy_shutdown_check(void);

/* proxy-stdio.c */
void		 proxy_stdio_init(struct event_base *);
void		 proxy_stdio_write_line(const char *, size_t);
void		 proxy_stdio_close_input(void);
void		 proxy_stdio_flush(int);
size_t		 proxy_stdio_max_line(void);

/* proxy-relay.c: called by proxy-stdio.c and proxy-worker.c. */
void		 proxy_relay_client_line(const char *, size_t);
void		 proxy_relay_client_overlong(size_t);
void		 proxy_relay_worker_up(void);
void		 proxy_relay_worker_message(const char *, size_t);
void		 proxy_relay_worker_catalog(const char *, size_t);
void		 proxy_relay_worker_down(void);
void		 proxy_relay_worker_unavailable(const char *);
int		 proxy_relay_pending(void);
void		 proxy_relay_abandon(void);
void		 proxy_relay_free(void);

/* proxy-worker.c */
void		 proxy_worker_init(struct event_base *);
int		 proxy_worker_send(const char *, size_t);
void		 proxy_worker_shutdown(void (*)(void));
const char	*proxy_worker_log_path(void);
int		 proxy_worker_unavailable(void);

#endif
