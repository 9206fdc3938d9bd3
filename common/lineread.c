/* SPDX-License-Identifier: ISC */
/*
 * lineread.c: newline-delimited messages from a file descriptor, as the
 * proxy and the worker read MCP from stdin.  A line ends at \n; a \r
 * before it is dropped, and a line of only blanks is skipped.  A line
 * longer than the cap is never buffered whole: it is dropped as it
 * comes, and the caller hears its length once it ends.  A last line
 * without its newline still counts at end of input.
 *
 * Pipes, sockets and terminals are watched with libevent; a regular file
 * or /dev/null cannot be polled, so those are read from a zero timer.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common.h"

/* Bytes asked of one read. */
#define LINEREAD_CHUNK	(1024 * 1024)

struct lineread {
	int			 fd;
	size_t			 max;
	struct lineread_cbs	 cbs;
	void			*arg;
	struct evbuffer		*in;
	struct event		*ev;
	int			 polled;	/* else a timer */
	int			 paused;
	int			 stopped;	/* EOF or lineread_stop */
	int			 busy;		/* in lineread_lines */
	size_t			 scanned;	/* bytes with no \n */
	size_t			 discarding;	/* of an overlong line */
};

static void	lineread_arm(struct lineread *);
static int	lineread_pollable(int);
static void	lineread_overlong(struct lineread *, size_t);
static void	lineread_line(struct lineread *, const char *, size_t);
static void	lineread_lines(struct lineread *);
static void	lineread_at_eof(struct lineread *);
static void	lineread_read(evutil_socket_t, short, void *);

static int
lineread_pollable(int fd)
{
	struct stat	sb;

	if (fstat(fd, &sb) == -1)
		return (0);
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
		return (1);
	return (S_ISCHR(sb.st_mode) && isatty(fd));
}

static void
lineread_overlong(struct lineread *lr, size_t len)
{
	char	*why;

	xasprintf(&why, "message of %zu bytes exceeds the limit of %zu "
	    "bytes and was dropped", len, lr->max);
	lr->cbs.overlong(len, why, lr->arg);
	free(why);
}

/* One line without its \n: drop a \r, skip blanks, check the cap. */
static void
lineread_line(struct lineread *lr, const char *line, size_t len)
{
	size_t	i;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > lr->max) {
		lineread_overlong(lr, len);
		return;
	}
	for (i = 0; i < len; i++) {
		if (strchr(" \t\r", line[i]) == NULL)
			break;
	}
	if (i < len) {
		trace_hop("in", "stdin", "line", 0, len);
		lr->cbs.line(line, len, lr->arg);
	}
}

/*
 * Hand every complete line in the buffer on, until paused.  A callback
 * may pause, resume or stop the reader; resuming from inside one only
 * lets this loop go on.
 */
static void
lineread_lines(struct lineread *lr)
{
	struct evbuffer_ptr	 p;
	size_t			 len;
	char			*line;

	if (lr->busy)
		return;
	lr->busy = 1;
	while (!lr->paused && !lr->stopped) {
		len = evbuffer_get_length(lr->in);
		if (lr->scanned >= len)
			break;
		evbuffer_ptr_set(lr->in, &p, lr->scanned, EVBUFFER_PTR_SET);
		p = evbuffer_search(lr->in, "\n", 1, &p);
		if (p.pos == -1) {
			lr->scanned = len;
			/* Over the cap (and a \r): drop it as it comes. */
			if (len > lr->max + 1) {
				lr->discarding += len;
				evbuffer_drain(lr->in, len);
				lr->scanned = 0;
			}
			break;
		}
		len = (size_t)p.pos;
		lr->scanned = 0;
		if (lr->discarding > 0) {
			len += lr->discarding;
			lr->discarding = 0;
			evbuffer_drain(lr->in, (size_t)p.pos + 1);
			lineread_overlong(lr, len);
			continue;
		}
		line = (char *)evbuffer_pullup(lr->in, len + 1);
		lineread_line(lr, line, len);
		evbuffer_drain(lr->in, len + 1);
	}
	lr->busy = 0;
}

static void
lineread_at_eof(struct lineread *lr)
{
	size_t	 len;
	char	*line;

	lr->stopped = 1;
	if (lr->polled)
		event_del(lr->ev);
	len = evbuffer_get_length(lr->in);
	if (lr->discarding > 0)
		lineread_overlong(lr, lr->discarding + len);
	else if (len > 0) {
		line = (char *)evbuffer_pullup(lr->in, len);
		lineread_line(lr, line, len);
	}
	lr->discarding = 0;
	evbuffer_drain(lr->in, evbuffer_get_length(lr->in));
	lr->cbs.eof(lr->arg);
}

static void
lineread_read(evutil_socket_t fd, short events, void *arg)
{
	struct lineread	*lr = arg;
	int		 n;

	if (lr->stopped || lr->paused)
		return;
	n = evbuffer_read(lr->in, lr->fd, LINEREAD_CHUNK);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n == -1)
		log_warn("read fd %d", lr->fd);
	if (n <= 0) {
		lineread_at_eof(lr);
		return;
	}
	lineread_lines(lr);
	if (!lr->polled)
		lineread_arm(lr);
}

/* Watch for input (again), unless paused or stopped. */
static void
lineread_arm(struct lineread *lr)
{
	struct timeval	tv = { 0, 0 };

	if (lr->stopped || lr->paused)
		return;
	if (lr->polled)
		event_add(lr->ev, NULL);
	else
		evtimer_add(lr->ev, &tv);
}

/*
 * Read lines from fd (not closed by us) until end of input, each up to
 * max bytes (without its \r\n).  The callbacks get arg; a line is
 * borrowed until its callback returns.
 */
struct lineread *
lineread_create(struct event_base *base, int fd, size_t max,
    const struct lineread_cbs *cbs, void *arg)
{
	struct lineread	*lr;

	lr = xcalloc(1, sizeof *lr);
	lr->fd = fd;
	lr->max = max;
	lr->cbs = *cbs;
	lr->arg = arg;
	if ((lr->in = evbuffer_new()) == NULL)
		fatalx("evbuffer_new failed");
	lr->polled = lineread_pollable(fd);
	if (lr->polled)
		lr->ev = event_new(base, fd, EV_READ|EV_PERSIST, lineread_read,
		    lr);
	else
		lr->ev = evtimer_new(base, lineread_read, lr);
	if (lr->ev == NULL)
		fatalx("event_new failed");
	lineread_arm(lr);
	return (lr);
}

void
lineread_free(struct lineread *lr)
{
	if (lr == NULL)
		return;
	event_free(lr->ev);
	evbuffer_free(lr->in);
	free(lr);
}

/* Take no more lines (backpressure) until lineread_resume. */
void
lineread_pause(struct lineread *lr)
{
	if (lr->paused)
		return;
	lr->paused = 1;
	if (!lr->stopped)
		event_del(lr->ev);
}

/* Hand on what is buffered first (it may pause again), then read. */
void
lineread_resume(struct lineread *lr)
{
	if (!lr->paused)
		return;
	lr->paused = 0;
	lineread_lines(lr);
	lineread_arm(lr);
}

/* Read nothing more; no eof callback follows. */
void
lineread_stop(struct lineread *lr)
{
	lr->stopped = 1;
	event_del(lr->ev);
}
