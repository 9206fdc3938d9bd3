/* SPDX-License-Identifier: ISC */
/*
 * proxy-stdio.c: the client side.  Reads newline-delimited JSON-RPC
 * from stdin through common/lineread.c (a trailing \r is dropped, blank
 * lines are skipped, a line may be up to PROTO_MCP_REQUEST_CAP, 16 MiB)
 * and writes one message per line to stdout.  Nothing but protocol is
 * ever written to stdout.
 *
 * Backpressure: a client that does not read its answers must not make us
 * queue them without bound.  Above PEER_QUEUE_HIGH bytes of output for
 * the client (or of requests for the worker, or queued for the next
 * worker), no more lines are taken from stdin, and above it for the
 * client the worker's messages are left in the worker; both resume once
 * the queues drain below PEER_QUEUE_LOW.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common.h"
#include "proxy.h"

static struct lineread	*proxy_stdio_in;
static struct evbuffer	*proxy_stdio_out;
static struct event	*proxy_stdio_wev;
static int		 proxy_stdio_polled_out;
static int		 proxy_stdio_broken;	/* stdout write failed */
static int		 proxy_stdio_paused;	/* backpressure */
static int		 proxy_stdio_worker_paused;

static int	proxy_stdio_pollable(int);
static void	proxy_stdio_line(const char *, size_t, void *);
static void	proxy_stdio_overlong(size_t, const char *, void *);
static void	proxy_stdio_at_eof(void *);
static void	proxy_stdio_drain_out(void);
static void	proxy_stdio_writable(evutil_socket_t, short, void *);

static int
proxy_stdio_pollable(int fd)
{
	struct stat	sb;

	if (fstat(fd, &sb) == -1)
		return (0);
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
		return (1);
	return (S_ISCHR(sb.st_mode) && isatty(fd));
}

static void
proxy_stdio_line(const char *line, size_t len, void *arg)
{
	proxy_relay_client_line(line, len);
}

static void
proxy_stdio_overlong(size_t len, const char *why, void *arg)
{
	proxy_relay_client_overlong(why);
}

static void
proxy_stdio_at_eof(void *arg)
{
	proxy_shutdown(1, "end of input");
}

static const struct lineread_cbs proxy_stdio_cbs = {
	proxy_stdio_line, proxy_stdio_overlong, proxy_stdio_at_eof
};

/* Apply backpressure; called whenever a queue grows or drains. */
void
proxy_stdio_flow(void)
{
	size_t	out, wq, rq;

	out = evbuffer_get_length(proxy_stdio_out);
	wq = proxy_worker_pending();
	rq = proxy_relay_queued_bytes();
	if (!proxy_stdio_worker_paused && out > PEER_QUEUE_HIGH) {
		proxy_stdio_worker_paused = 1;
		proxy_worker_set_reading(0);
	} else if (proxy_stdio_worker_paused && out <= PEER_QUEUE_LOW) {
		proxy_stdio_worker_paused = 0;
		proxy_worker_set_reading(1);
	}
	if (!proxy_stdio_paused && (out > PEER_QUEUE_HIGH ||
	    wq > PEER_QUEUE_HIGH || rq > PEER_QUEUE_HIGH)) {
		log_debug("backpressure: output %zu, to the worker %zu, "
		    "queued %zu: not reading stdin", out, wq, rq);
		proxy_stdio_paused = 1;
		lineread_pause(proxy_stdio_in);
	} else if (proxy_stdio_paused && out <= PEER_QUEUE_LOW &&
	    wq <= PEER_QUEUE_LOW && rq <= PEER_QUEUE_LOW) {
		proxy_stdio_paused = 0;
		/* What is already buffered first; it may pause us again. */
		lineread_resume(proxy_stdio_in);
	}
}

/* Write what we can; the rest waits for EV_WRITE on a pipe. */
static void
proxy_stdio_drain_out(void)
{
	int	n;

	while (evbuffer_get_length(proxy_stdio_out) > 0) {
		n = evbuffer_write(proxy_stdio_out, 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			event_add(proxy_stdio_wev, NULL);
			proxy_stdio_flow();
			return;
		}
		if (n <= 0) {
			/* The client is gone; nobody will read answers. */
			proxy_stdio_broken = 1;
			evbuffer_drain(proxy_stdio_out,
			    evbuffer_get_length(proxy_stdio_out));
			proxy_shutdown(0, "stdout closed");
			return;
		}
	}
	proxy_stdio_flow();
}

static void
proxy_stdio_writable(evutil_socket_t fd, short events, void *arg)
{
	proxy_stdio_drain_out();
}

/*
 * Queue one message and its newline.  A raw newline inside JSON text can
 * only be insignificant whitespace, so replacing it keeps the message
 * and the framing intact.
 */
void
proxy_stdio_write_line(const char *data, size_t len)
{
	char	*copy = NULL;
	size_t	 i;

	if (proxy_stdio_broken)
		return;
	if (memchr(data, '\n', len) != NULL ||
	    memchr(data, '\r', len) != NULL) {
		copy = xmalloc(len);
		memcpy(copy, data, len);
		for (i = 0; i < len; i++) {
			if (copy[i] == '\n' || copy[i] == '\r')
				copy[i] = ' ';
		}
		data = copy;
	}
	evbuffer_add(proxy_stdio_out, data, len);
	evbuffer_add(proxy_stdio_out, "\n", 1);
	free(copy);
	trace_hop("out", "stdout", "line", 0, len + 1);
	if (!event_pending(proxy_stdio_wev, EV_WRITE, NULL))
		proxy_stdio_drain_out();
	else
		proxy_stdio_flow();
}

void
proxy_stdio_close_input(void)
{
	lineread_stop(proxy_stdio_in);
}

/* Last words before exit: block up to timeout_ms writing what is left. */
void
proxy_stdio_flush(int timeout_ms)
{
	struct pollfd	pfd = { .fd = 1, .events = POLLOUT };
	int64_t		deadline = util_mono_ms() + timeout_ms, left;
	int		n;

	event_del(proxy_stdio_wev);
	while (!proxy_stdio_broken &&
	    evbuffer_get_length(proxy_stdio_out) > 0) {
		left = deadline - util_mono_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		n = evbuffer_write(proxy_stdio_out, 1);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
	}
}

void
proxy_stdio_init(struct event_base *base)
{
	if ((proxy_stdio_out = evbuffer_new()) == NULL)
		fatalx("evbuffer_new failed");
	proxy_stdio_in = lineread_create(base, 0, PROTO_MCP_REQUEST_CAP,
	    &proxy_stdio_cbs, NULL);

	/*
	 * Non-blocking stdout only on a pipe or socket, whose open file
	 * description nobody else shares; a terminal or file is written
	 * blocking.
	 */
	proxy_stdio_polled_out = proxy_stdio_pollable(1) && !isatty(1);
	if (proxy_stdio_polled_out)
		util_set_nonblock(1);
	proxy_stdio_wev = event_new(base, 1, EV_WRITE, proxy_stdio_writable,
	    NULL);
}
