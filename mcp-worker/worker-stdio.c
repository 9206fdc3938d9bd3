/* SPDX-License-Identifier: ISC */
/*
 * worker-stdio.c: newline-delimited JSON-RPC on stdin/stdout, read
 * through common/lineread.c (lines up to PROTO_MCP_REQUEST_CAP, as the
 * proxy reads them).  Nothing but MCP messages ever goes to stdout; logs
 * go to stderr.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

static struct lineread	*worker_stdio_in;
static struct evbuffer	*worker_stdio_out;
static struct event	*worker_stdio_wev;
static int		 worker_stdio_closed;	/* stdin EOF seen */
static struct event	*worker_stdio_grace;
static int		 worker_stdio_paused;	/* backpressure */

static void	worker_stdio_flow(void);
static void	worker_stdio_flush(int);
static void	worker_stdio_write_cb(evutil_socket_t, short, void *);
static void	worker_stdio_send(const char *, size_t, void *);
static __dead void	worker_stdio_leave(void);
static void	worker_stdio_grace_cb(evutil_socket_t, short, void *);
static void	worker_stdio_eof(void *);
static void	worker_stdio_idle(void *);
static void	worker_stdio_line(const char *, size_t, void *);
static void	worker_stdio_overlong(size_t, const char *, void *);

/*
 * Backpressure: above PEER_QUEUE_HIGH of answers the client has not read,
 * read no more requests; resume below PEER_QUEUE_LOW.
 */
static void
worker_stdio_flow(void)
{
	size_t	out = evbuffer_get_length(worker_stdio_out);

	if (!worker_stdio_paused && out > PEER_QUEUE_HIGH) {
		worker_stdio_paused = 1;
		lineread_pause(worker_stdio_in);
	} else if (worker_stdio_paused && out <= PEER_QUEUE_LOW) {
		worker_stdio_paused = 0;
		lineread_resume(worker_stdio_in);
	}
}

/* Write what is queued; block only when exiting. */
static void
worker_stdio_flush(int blocking)
{
	ssize_t	n;
	int	flags;

	if (blocking) {
		flags = fcntl(STDOUT_FILENO, F_GETFL);
		if (flags != -1 && (flags & O_NONBLOCK))
			fcntl(STDOUT_FILENO, F_SETFL, flags & ~O_NONBLOCK);
	}
	while (evbuffer_get_length(worker_stdio_out) > 0) {
		n = evbuffer_write(worker_stdio_out, STDOUT_FILENO);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    !blocking) {
			event_add(worker_stdio_wev, NULL);
			worker_stdio_flow();
			return;
		}
		if (n <= 0) {
			if (n == -1)
				log_warn("stdout");
			evbuffer_drain(worker_stdio_out,
			    evbuffer_get_length(worker_stdio_out));
			if (!blocking)
				worker_exit(0);
			return;
		}
	}
	worker_stdio_flow();
}

static void
worker_stdio_write_cb(evutil_socket_t fd, short events, void *arg)
{
	worker_stdio_flush(0);
}

static void
worker_stdio_send(const char *json, size_t len, void *arg)
{
	evbuffer_add(worker_stdio_out, json, len);
	evbuffer_add(worker_stdio_out, "\n", 1);
	worker_stdio_flush(0);
}

static __dead void
worker_stdio_leave(void)
{
	worker_stdio_flush(1);
	worker_exit(0);
}

static void
worker_stdio_grace_cb(evutil_socket_t fd, short events, void *arg)
{
	log_debug("calls still in flight after %d ms; exiting",
	    WORKER_EOF_GRACE_MS);
	worker_stdio_leave();
}

/*
 * Stdin is gone: read nothing more, let the calls in flight answer for
 * up to WORKER_EOF_GRACE_MS, then exit (the daemon keeps rooms and runs).
 */
static void
worker_stdio_eof(void *arg)
{
	struct timeval	tv = { WORKER_EOF_GRACE_MS / 1000,
			    (WORKER_EOF_GRACE_MS % 1000) * 1000 };

	log_debug("stdin closed, %u calls in flight", worker_call_inflight());
	worker_stdio_closed = 1;
	if (worker_call_inflight() == 0)
		worker_stdio_leave();
	worker_stdio_grace = evtimer_new(worker_rpc_base(),
	    worker_stdio_grace_cb, NULL);
	evtimer_add(worker_stdio_grace, &tv);
}

/* The last call in flight finished: exit if stdin is gone. */
static void
worker_stdio_idle(void *arg)
{
	if (worker_stdio_closed)
		worker_stdio_leave();
}

static void
worker_stdio_line(const char *line, size_t len, void *arg)
{
	worker_rpc_input(line, len);
}

/* Too long to be a message: its id is unknown, so answer with null. */
static void
worker_stdio_overlong(size_t len, const char *why, void *arg)
{
	log_warnx("%s", why);
	worker_rpc_fail(NULL, -32600, why);
}

static const struct lineread_cbs worker_stdio_cbs = {
	worker_stdio_line, worker_stdio_overlong, worker_stdio_eof
};

static const struct worker_transport worker_stdio_transport = {
	.send = worker_stdio_send,
	.idle = worker_stdio_idle,
};

int
worker_stdio_start(struct event_base *base)
{
	struct stat	 sb;

	worker_stdio_out = evbuffer_new();
	worker_rpc_init(base, &worker_stdio_transport);

	if (fstat(STDOUT_FILENO, &sb) == 0 &&
	    (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		util_set_nonblock(STDOUT_FILENO);
	worker_stdio_wev = event_new(base, STDOUT_FILENO, EV_WRITE,
	    worker_stdio_write_cb, NULL);

	if (fstat(STDIN_FILENO, &sb) == 0 &&
	    (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		util_set_nonblock(STDIN_FILENO);
	worker_stdio_in = lineread_create(base, STDIN_FILENO,
	    PROTO_MCP_REQUEST_CAP, &worker_stdio_cbs, NULL);
	return (0);
}
