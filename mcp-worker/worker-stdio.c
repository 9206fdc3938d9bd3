/*
 * worker-stdio.c: newline-delimited JSON-RPC on stdin/stdout.  Nothing
 * but MCP messages ever goes to stdout; logs go to stderr.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#define WORKER_STDIO_MAX_LINE	PROTO_MCP_REPLY_CAP

static struct evbuffer	*worker_stdio_in;
static struct evbuffer	*worker_stdio_out;
static struct event	*worker_stdio_rev;
static struct event	*worker_stdio_wev;
static int		 worker_stdio_discard;
static int		 worker_stdio_regular;
static int		 worker_stdio_closed;	/* stdin EOF seen */
static struct event	*worker_stdio_grace;
static int		 worker_stdio_paused;	/* backpressure */

static void	worker_stdio_lines(void);
static void	worker_stdio_flow(void);

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
		if (!worker_stdio_regular && worker_stdio_rev != NULL)
			event_del(worker_stdio_rev);
	} else if (worker_stdio_paused && out <= PEER_QUEUE_LOW) {
		worker_stdio_paused = 0;
		worker_stdio_lines();
		if (worker_stdio_paused || worker_stdio_closed ||
		    worker_stdio_rev == NULL)
			return;
		if (worker_stdio_regular)
			event_active(worker_stdio_rev, EV_TIMEOUT, 0);
		else
			event_add(worker_stdio_rev, NULL);
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
worker_stdio_eof(void)
{
	struct timeval	tv = { WORKER_EOF_GRACE_MS / 1000,
			    (WORKER_EOF_GRACE_MS % 1000) * 1000 };

	log_debug("stdin closed, %u calls in flight", worker_call_inflight());
	worker_stdio_closed = 1;
	if (worker_stdio_rev != NULL)
		event_del(worker_stdio_rev);
	if (worker_call_inflight() == 0)
		worker_stdio_leave();
	worker_stdio_grace = evtimer_new(worker_rpc_base(),
	    worker_stdio_grace_cb, NULL);
	evtimer_add(worker_stdio_grace, &tv);
}

/* The last call in flight finished: exit if stdin is gone. */
void
worker_eof(void)
{
	if (worker_stdio_closed)
		worker_stdio_leave();
}

/* Hand every complete line to the dispatcher. */
static void
worker_stdio_lines(void)
{
	struct evbuffer_ptr	 p;
	size_t			 len;
	char			*line;

	while (!worker_stdio_paused) {
		p = evbuffer_search_eol(worker_stdio_in, NULL, NULL,
		    EVBUFFER_EOL_LF);
		if (p.pos == -1)
			break;
		len = (size_t)p.pos;
		if (worker_stdio_discard) {
			evbuffer_drain(worker_stdio_in, len + 1);
			worker_stdio_discard = 0;
			continue;
		}
		line = xmalloc(len + 1);
		evbuffer_remove(worker_stdio_in, line, len);
		line[len] = '\0';
		evbuffer_drain(worker_stdio_in, 1);
		worker_rpc_input(line, len);
		free(line);
	}
	if (evbuffer_get_length(worker_stdio_in) > WORKER_STDIO_MAX_LINE) {
		/* Too long to be a message: answer once, skip to its end. */
		evbuffer_drain(worker_stdio_in,
		    evbuffer_get_length(worker_stdio_in));
		if (!worker_stdio_discard)
			worker_rpc_input("\x01too long", 9);
		worker_stdio_discard = 1;
	}
}

static void
worker_stdio_read_cb(evutil_socket_t fd, short events, void *arg)
{
	int	n;

	n = evbuffer_read(worker_stdio_in, STDIN_FILENO, 65536);
	if (n == -1 && (errno == EAGAIN || errno == EINTR ||
	    errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		if (n == -1)
			log_warn("stdin");
		/* A last line without its newline still counts. */
		if (!worker_stdio_discard &&
		    evbuffer_get_length(worker_stdio_in) > 0) {
			evbuffer_add(worker_stdio_in, "\n", 1);
			worker_stdio_lines();
		}
		worker_stdio_eof();
		return;
	}
	worker_stdio_lines();
	if (worker_stdio_regular && !worker_stdio_paused)
		event_active(worker_stdio_rev, EV_TIMEOUT, 0);
}

int
worker_stdio_start(struct event_base *base)
{
	struct stat	 sb;

	worker_stdio_in = evbuffer_new();
	worker_stdio_out = evbuffer_new();
	worker_rpc_init(base, worker_stdio_send, NULL, NULL);

	if (fstat(STDOUT_FILENO, &sb) == 0 &&
	    (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		util_set_nonblock(STDOUT_FILENO);
	worker_stdio_wev = event_new(base, STDOUT_FILENO, EV_WRITE,
	    worker_stdio_write_cb, NULL);

	/* epoll refuses regular files: read those from a timer instead. */
	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)) {
		worker_stdio_regular = 1;
		worker_stdio_rev = event_new(base, -1, 0,
		    worker_stdio_read_cb, NULL);
		event_active(worker_stdio_rev, EV_TIMEOUT, 0);
		return 0;
	}
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
		util_set_nonblock(STDIN_FILENO);
	worker_stdio_rev = event_new(base, STDIN_FILENO, EV_READ | EV_PERSIST,
	    worker_stdio_read_cb, NULL);
	if (event_add(worker_stdio_rev, NULL) != 0) {
		log_warnx("cannot watch stdin");
		return -1;
	}
	return 0;
}
