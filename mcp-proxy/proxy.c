/* SPDX-License-Identifier: ISC */
/*
 * proxy.c: main for runtimed-mcp.  Sets up the event loop, the client
 * side on stdin/stdout and the worker child, and runs the shutdown:
 * stdin EOF lets requests already sent be answered (briefly), then asks
 * the worker to exit and exits 0.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common.h"
#include "proxy.h"

struct event_base	*proxy_base;
int64_t			 proxy_started_at;
int			 proxy_log_level = LOG_LEVEL_WARN;

enum proxy_state {
	PROXY_RUNNING,
	PROXY_DRAINING,		/* stdin closed, answers still due */
	PROXY_STOPPING,		/* worker asked to exit */
};
static enum proxy_state	 proxy_state = PROXY_RUNNING;
static struct event	*proxy_drain_timer;
static struct event	*proxy_signals[4];

static __dead void	proxy_usage(int);
static void	proxy_sanitize_fds(void);
static void	proxy_done(void);
static void	proxy_stop(void);
static void	proxy_drain_timeout(evutil_socket_t, short, void *);
static void	proxy_signal(evutil_socket_t, short, void *);

static __dead void
proxy_usage(int status)
{
	FILE	*f = status == 0 ? stdout : stderr;

	fprintf(f,
	    "usage: runtimed-mcp [-hqVv]\n"
	    "\n"
	    "MCP server for Jupyter notebooks on stdin/stdout (newline-"
	    "delimited JSON-RPC).\n"
	    "Agent clients spawn it; it runs runtimed-mcp-worker and "
	    "restarts it when it dies.\n"
	    "\n"
	    "  -h, --help      show this help and exit\n"
	    "  -V, --version   print the version and exit\n"
	    "  -q, --quiet     log errors only, no warnings\n"
	    "  -v, --verbose   log more to stderr (repeat for debug)\n"
	    "                  (the worker's log follows -q and -v)\n"
	    "\n"
	    "Environment: RUNTIMED_SOCKET, RUNTIMED_STATE_DIR, "
	    "RUNTIMED_LIBEXEC_DIR.\n"
	    "The worker's log is <state dir>/logs/mcp-worker-<pid>.log.\n");
	exit(status);
}

/* Make sure 0, 1 and 2 are open so no socket ever lands on stdout. */
static void
proxy_sanitize_fds(void)
{
	int	fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) == -1)
			exit(1);
	}
}

static void
proxy_done(void)
{
	proxy_stdio_flush(PROXY_SHUTDOWN_MS);
	event_base_loopexit(proxy_base, NULL);
}

static void
proxy_stop(void)
{
	if (proxy_state == PROXY_STOPPING)
		return;
	proxy_state = PROXY_STOPPING;
	if (proxy_drain_timer != NULL)
		event_del(proxy_drain_timer);
	proxy_stdio_close_input();
	proxy_relay_abandon();
	proxy_worker_shutdown(proxy_done);
}

static void
proxy_drain_timeout(evutil_socket_t fd, short events, void *arg)
{
	log_info("requests still unanswered at shutdown; stopping anyway");
	proxy_stop();
}

/*
 * Begin shutting down.  With drain set (stdin EOF), requests already
 * sent get up to PROXY_DRAIN_MS to be answered, so "printf ... | runtimed-mcp"
 * works; a signal or a vanished client stops at once.
 */
void
proxy_shutdown(int drain, const char *why)
{
	struct timeval	tv;

	log_debug("shutdown: %s", why);
	if (proxy_state == PROXY_STOPPING)
		return;
	if (!drain || !proxy_relay_pending() || proxy_worker_unavailable()) {
		proxy_stop();
		return;
	}
	if (proxy_state == PROXY_DRAINING)
		return;
	proxy_state = PROXY_DRAINING;
	proxy_stdio_close_input();
	proxy_drain_timer = evtimer_new(proxy_base, proxy_drain_timeout, NULL);
	tv.tv_sec = PROXY_DRAIN_MS / 1000;
	tv.tv_usec = (PROXY_DRAIN_MS % 1000) * 1000;
	evtimer_add(proxy_drain_timer, &tv);
}

/* Called when an answer went out: finish draining once nothing is due. */
void
proxy_shutdown_check(void)
{
	if (proxy_state == PROXY_DRAINING && !proxy_relay_pending())
		proxy_stop();
}

static void
proxy_signal(evutil_socket_t sig, short events, void *arg)
{
	if (proxy_state == PROXY_STOPPING) {
		/* Second signal: do not wait for the worker any longer. */
		proxy_done();
		return;
	}
	proxy_shutdown(0, strsignal(sig));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	int	ch, level = LOG_LEVEL_WARN;
	size_t	i;

	proxy_sanitize_fds();
	while ((ch = getopt_long(argc, argv, "hqVv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			proxy_usage(0);
		case 'V':
			printf("runtimed-mcp %s\n", RUNTIMED_VERSION);
			exit(0);
		case 'q':
		case 'v':
			level = log_level_step(level, ch);
			break;
		default:
			proxy_usage(2);
		}
	}
	if (optind != argc)
		proxy_usage(2);

	log_open("runtimed-mcp", level, NULL);
	proxy_log_level = level;
	signal(SIGPIPE, SIG_IGN);
	proxy_started_at = util_now_us();

	if ((proxy_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		proxy_signals[i] = evsignal_new(proxy_base, sigs[i],
		    proxy_signal, NULL);
		evsignal_add(proxy_signals[i], NULL);
	}

	proxy_stdio_init(proxy_base);
	proxy_catalog_init();
	proxy_worker_init(proxy_base);
	event_base_dispatch(proxy_base);

	proxy_relay_free();
	proxy_lease_free();
	proxy_catalog_free();
	proxy_budget_reset();
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		event_free(proxy_signals[i]);
	if (proxy_drain_timer != NULL)
		event_free(proxy_drain_timer);
	log_close();
	return (0);
}
