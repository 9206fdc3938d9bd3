/* SPDX-License-Identifier: ISC */
/*
 * fuzz-proxy.c: libFuzzer target for the proxy's side of the worker
 * link: the supervision frames (HELLO, MCP, WORKER_READY,
 * WORKER_UPGRADE, PING) and the worker's JSON-RPC messages they carry,
 * which the relay parses and answers the client with.  proxy-worker.c is
 * compiled in here, so the real proxy_worker_dispatch takes the frames
 * on a socketpair, with the real relay, stdio, catalog and budget behind
 * it; the client is a socketpair on fds 0 and 1.
 *
 * The input is client lines, a NUL byte, then the worker's frames (no
 * NUL: all frames).  Each input is one worker's life: the harness
 * attaches a link as proxy_worker_spawn does, minus the process; the
 * link closes at the end and proxy_worker_lost runs for real.  Nothing is
 * ever started: the respawn timer is the harness's (it only resets the
 * budget, as the real one does before it spawns), and client lines
 * naming the reconnect tool (which starts a worker at once) are dropped.
 */

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common.h"
#include "mcp-proxy/proxy.h"

#include "mcp-proxy/proxy-worker.c"

#define FUZZ_PROXY_PASSES	64

/* What proxy.c defines for the rest of the proxy. */
struct event_base	*proxy_base;
int64_t			 proxy_started_at;
int			 proxy_log_level;

static int		 fuzz_proxy_client = -1;	/* the client's end */
static int		 fuzz_proxy_trace;

static void	fuzz_proxy_respawn(evutil_socket_t, short, void *);
static void	fuzz_proxy_init(void);
static int	fuzz_proxy_drain(int);
static void	fuzz_proxy_pump(int, int);
static void	fuzz_proxy_write(int, const void *, size_t);

/* The client went away: the real proxy drains and exits; not here. */
void
proxy_shutdown(int drain, const char *why)
{
	log_debug("shutdown asked: %s", why);
}

void
proxy_shutdown_check(void)
{
}

/* proxy_worker_respawn_cb but for the spawn: the next input attaches. */
static void
fuzz_proxy_respawn(evutil_socket_t fd, short events, void *arg)
{
	if (proxy_worker_tripped) {
		proxy_worker_tripped = 0;
		proxy_budget_reset();
		proxy_relay_worker_unavailable(NULL);
	}
}

static void
fuzz_proxy_init(void)
{
	int	c[2];

	fuzz_proxy_trace = getenv("FUZZ_TRACE") != NULL;
	log_open("fuzz-proxy", getenv("FUZZ_TRACE") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARN, getenv("FUZZ_TRACE") != NULL ?
	    NULL : "/dev/null");
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c) != 0 ||
	    dup2(c[0], 0) == -1 || dup2(c[0], 1) == -1) {
		perror("fuzz-proxy");
		exit(1);
	}
	close(c[0]);
	fuzz_proxy_client = c[1];
	util_set_nonblock(fuzz_proxy_client);
	proxy_base = event_base_new();
	proxy_started_at = util_now_us();
	proxy_worker_base = proxy_base;
	proxy_worker_respawn = evtimer_new(proxy_base, fuzz_proxy_respawn,
	    NULL);
	proxy_catalog_init();
	proxy_stdio_init(proxy_base);
}

/* Drop what went out on fd; 1 once its peer closed. */
static int
fuzz_proxy_drain(int fd)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (fuzz_proxy_trace)
			fprintf(stderr, "%s %.*s\n", fd == fuzz_proxy_client ?
			    "client <" : "worker <", (int)n, buf);
	}
	return (n == 0);
}

static void
fuzz_proxy_pump(int link, int passes)
{
	int	i;

	for (i = 0; i < passes; i++) {
		event_base_loop(proxy_base, EVLOOP_NONBLOCK);
		if (link != -1)
			fuzz_proxy_drain(link);
		fuzz_proxy_drain(fuzz_proxy_client);
	}
}

static void
fuzz_proxy_write(int fd, const void *p, size_t len)
{
	const uint8_t	*q = p;
	ssize_t		 n;
	int		 tries = 0;

	while (len > 0 && tries < FUZZ_PROXY_PASSES) {
		if ((n = write(fd, q, len)) > 0) {
			q += n;
			len -= (size_t)n;
		} else if (n == -1 && errno == EAGAIN) {
			fuzz_proxy_pump(-1, 1);
			tries++;
		} else
			return;
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct proxy_worker	*w;
	const uint8_t		*nul, *line, *nl, *end;
	int			 sv[2], i;

	if (!ready) {
		fuzz_proxy_init();
		ready = 1;
	}
	fuzz_proxy_respawn(-1, 0, NULL);
	evtimer_del(proxy_worker_respawn);

	/* A worker, as proxy_worker_spawn makes one, minus the process. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	w = xcalloc(1, sizeof *w);
	w->started = util_mono_ms();
	w->peer = peer_create(proxy_base, sv[0], "worker",
	    proxy_worker_dispatch, w);
	w->hello_timer = evtimer_new(proxy_base, proxy_worker_hello_timeout,
	    w);
	proxy_worker_cur = w;

	/* The client's lines, then the worker's frames. */
	if ((nul = memchr(data, '\0', size)) != NULL) {
		end = nul;
		for (line = data; line < end; line = nl + 1) {
			if ((nl = memchr(line, '\n', end - line)) == NULL)
				nl = end;
			if (memmem(line, nl - line, "reconnect", 9) == NULL) {
				fuzz_proxy_write(fuzz_proxy_client, line,
				    nl - line);
				fuzz_proxy_write(fuzz_proxy_client, "\n", 1);
			}
		}
		fuzz_proxy_pump(sv[1], 2);
		size -= nul + 1 - data;
		data = nul + 1;
	}
	fuzz_proxy_write(sv[1], data, size);
	fuzz_proxy_pump(sv[1], 4);

	/* The worker exits. */
	close(sv[1]);
	for (i = 0; i < FUZZ_PROXY_PASSES && proxy_worker_cur == w; i++)
		fuzz_proxy_pump(-1, 1);
	fuzz_proxy_pump(-1, 2);
	if (proxy_worker_cur != NULL) {
		fprintf(stderr, "fuzz-proxy: the worker link outlived EOF\n");
		abort();
	}
	return (0);
}
