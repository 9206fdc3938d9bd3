/* SPDX-License-Identifier: ISC */
/*
 * agent-stderr.c: what the kernel writes on stdout and stderr (one pipe;
 * never our own stdout).  Each line is logged, and the last
 * AGENT_STDERR_TAIL bytes are kept, so a kernel that fails to start or
 * to answer is reported with what it said (its traceback, as a rule).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_STDERR_TAIL	4096

struct agent_stderr {
	struct event_base	*base;
	int			 fd;
	struct event		*ev;
	pid_t			 pid;		/* for the log */
	char			 line[1024];	/* unfinished line */
	size_t			 linelen;
	char			 tail[AGENT_STDERR_TAIL];
	size_t			 taillen;
};

static void	agent_stderr_cb(evutil_socket_t, short, void *);
static void	agent_stderr_line(struct agent_stderr *, const char *, size_t);

struct agent_stderr *
agent_stderr_create(struct event_base *base)
{
	struct agent_stderr	*es;

	es = xcalloc(1, sizeof *es);
	es->base = base;
	es->fd = -1;
	return (es);
}

void
agent_stderr_free(struct agent_stderr *es)
{
	if (es == NULL)
		return;
	agent_stderr_close(es);
	free(es);
}

/* A new launch: forget what the last one said. */
void
agent_stderr_reset(struct agent_stderr *es)
{
	es->taillen = es->linelen = 0;
}

static void
agent_stderr_cb(evutil_socket_t fd, short events, void *arg)
{
	agent_stderr_read(arg);
}

/* Read fd, the kernel pid's output pipe, from now on. */
void
agent_stderr_open(struct agent_stderr *es, int fd, pid_t pid)
{
	agent_stderr_close(es);
	es->fd = fd;
	es->pid = pid;
	util_set_nonblock(fd);
	es->ev = event_new(es->base, fd, EV_READ|EV_PERSIST, agent_stderr_cb,
	    es);
	event_add(es->ev, NULL);
}

/* Stop reading; the tail stays for the messages still to come. */
void
agent_stderr_close(struct agent_stderr *es)
{
	if (es->ev != NULL) {
		event_free(es->ev);
		es->ev = NULL;
	}
	if (es->fd != -1) {
		close(es->fd);
		es->fd = -1;
	}
}

/*
 * The last lines of the output as one line; caller frees.  A kernel
 * writes in its own locale's encoding (Latin-1, say) and the tail may
 * begin inside a character: what goes into messages is UTF-8, each bad
 * sequence a U+FFFD (utf8.c).
 */
char *
agent_stderr_tail(struct agent_stderr *es)
{
	char	*copy, *line, *next, *out = NULL, *prev, *fixed;
	char	*lines[3] = { NULL, NULL, NULL };
	size_t	 len;
	int	 i;

	if (es->taillen == 0 && es->linelen == 0)
		return (xstrdup("no output on stderr"));
	xasprintf(&copy, "%.*s%.*s", (int)es->taillen, es->tail,
	    (int)es->linelen, es->line);
	next = copy;
	while ((line = strsep(&next, "\n")) != NULL) {
		line += strspn(line, " \t\r");
		if (*line == '\0')
			continue;
		lines[0] = lines[1];
		lines[1] = lines[2];
		lines[2] = line;
	}
	for (i = 0; i < 3; i++) {
		if (lines[i] == NULL)
			continue;
		prev = out;
		xasprintf(&out, "%s%s%s", prev != NULL ? prev : "",
		    prev != NULL ? " | " : "", lines[i]);
		free(prev);
	}
	free(copy);
	if (out == NULL)
		return (xstrdup("no output on stderr"));
	if ((fixed = utf8_repair(out, strlen(out), &len)) != NULL) {
		free(out);
		out = fixed;
	}
	return (out);
}

/* Keep a finished line in the tail buffer and log it. */
static void
agent_stderr_line(struct agent_stderr *es, const char *line, size_t len)
{
	size_t	need = len + 1, rlen, hold;
	char	*red;

	/* The log is in the state directory: no secret in it either. */
	red = agent_redact_text(line, len, 1, &rlen, &hold, NULL);
	log_info("kernel %ld: %.*s", (long)es->pid,
	    (int)(red != NULL ? rlen : len), red != NULL ? red : line);
	free(red);
	if (need > sizeof es->tail) {
		line += need - sizeof es->tail;
		len = sizeof es->tail - 1;
		need = sizeof es->tail;
	}
	if (es->taillen + need > sizeof es->tail) {
		memmove(es->tail, es->tail + (es->taillen + need -
		    sizeof es->tail), sizeof es->tail - need);
		es->taillen = sizeof es->tail - need;
	}
	memcpy(es->tail + es->taillen, line, len);
	es->tail[es->taillen + len] = '\n';
	es->taillen += need;
}

/* Read what the kernel wrote, up to now (also when it has died). */
void
agent_stderr_read(struct agent_stderr *es)
{
	char	 buf[4096], *nl, *cp;
	ssize_t	 n;
	size_t	 len;

	while (es->fd != -1) {
		n = read(es->fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (es->linelen != 0) {
				agent_stderr_line(es, es->line, es->linelen);
				es->linelen = 0;
			}
			agent_stderr_close(es);
			return;
		}
		cp = buf;
		len = n;
		while (len > 0) {
			nl = memchr(cp, '\n', len);
			n = nl != NULL ? nl - cp : (ssize_t)len;
			if (es->linelen + n >= sizeof es->line) {
				/* Overlong line: flush what fits. */
				agent_stderr_line(es, es->line, es->linelen);
				es->linelen = 0;
				if ((size_t)n >= sizeof es->line)
					n = sizeof es->line - 1;
				nl = NULL;
			}
			memcpy(es->line + es->linelen, cp, n);
			es->linelen += n;
			cp += n;
			len -= n;
			if (nl != NULL) {
				agent_stderr_line(es, es->line, es->linelen);
				es->linelen = 0;
				cp++;
				len--;
			}
		}
	}
}
