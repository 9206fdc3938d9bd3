/* SPDX-License-Identifier: ISC */
/*
 * worker.c: runtimed-mcp-worker main.  Picks the transport, runs the loop.
 */

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

static struct event_base	*worker_base;

static __dead void	worker_usage(int);
static void	worker_signal(evutil_socket_t, short, void *);

static __dead void
worker_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-mcp-worker [-hqVv] [--log FILE] [--proxy-fd N | "
	    "--print-catalog]\n"
	    "Started by runtimed-mcp with its link as fd 3; see "
	    "runtimed-mcp-worker(8).\n");
	exit(status);
}

/* Leave at once: the daemon keeps rooms and runs; our sockets close. */
__dead void
worker_exit(int status)
{
	worker_daemon_shutdown();
	worker_figure_shutdown();
	log_debug("%s: exit %d", __func__, status);
	exit(status);
}

static void
worker_signal(evutil_socket_t sig, short events, void *arg)
{
	log_info("signal %d, exiting", (int)sig);
	worker_exit(0);
}

int
main(int argc, char **argv)
{
	struct event	*ev_term, *ev_int;
	int		 i, level = LOG_LEVEL_WARN, proxy_fd = -1;
	long		 n;
	char		*end;
	const char	*env, *logfile = NULL;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0 ||
		    strcmp(argv[i], "--verbose") == 0)
			level++;
		else if (strcmp(argv[i], "-vv") == 0)
			level += 2;
		else if (strcmp(argv[i], "-q") == 0 ||
		    strcmp(argv[i], "--quiet") == 0)
			level--;
		else if (strcmp(argv[i], "--proxy-fd") == 0 && i + 1 < argc) {
			errno = 0;
			n = strtol(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || n < 0 ||
			    n > INT_MAX)
				worker_usage(2);
			proxy_fd = (int)n;
		} else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
			logfile = argv[++i];
		else if (strcmp(argv[i], "--print-catalog") == 0) {
			/* The proxy's built-in catalog: tools/list as JSON. */
			struct json_object *list = worker_tool_list();

			printf("%s\n", json_object_to_json_string_ext(list,
			    JSON_C_TO_STRING_PLAIN |
			    JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(list);
			exit(0);
		} else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			worker_usage(0);
		else if (strcmp(argv[i], "-V") == 0 ||
		    strcmp(argv[i], "--version") == 0) {
			printf("runtimed-mcp-worker %s\n", RUNTIMED_VERSION);
			exit(0);
		} else
			worker_usage(2);
	}
	if ((env = getenv("RUNTIMED_DEBUG")) != NULL && *env != '\0')
		level = LOG_LEVEL_DEBUG;
	log_open("runtimed-mcp-worker", level, logfile);
	/* Our stderr (and stdout, past a proxy) follow the log's rotation. */
	if (log_path() != NULL)
		log_capture(proxy_fd >= 0);

	signal(SIGPIPE, SIG_IGN);
	if ((worker_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	ev_term = evsignal_new(worker_base, SIGTERM, worker_signal, NULL);
	ev_int = evsignal_new(worker_base, SIGINT, worker_signal, NULL);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);

	worker_daemon_init(worker_base);
	worker_figure_init(worker_base);
	worker_watch_start(worker_base);
	if (proxy_fd >= 0) {
		if (worker_proxy_start(worker_base, proxy_fd) != 0)
			exit(1);
	} else {
		if (worker_stdio_start(worker_base) != 0)
			exit(1);
	}
	event_base_dispatch(worker_base);
	worker_exit(0);
}
