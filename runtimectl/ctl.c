/* SPDX-License-Identifier: ISC */
/*
 * ctl.c: runtimectl's main and command line.
 *
 *	runtimectl [-hqVv] [--json] [-S socket] [-s statedir] command ...
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl.h"

static __dead void	ctl_usage(int);
static int	ctl_take_json(int *, char **);

static __dead void
ctl_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimectl [-hqVv] [--json] [-S socket] [-s statedir] "
	    "command\n"
	    "  status                 the daemon, its kernels, pool and "
	    "store\n"
	    "  rooms                  the notebooks it holds\n"
	    "  kernels                the kernels running, pooled ones "
	    "marked\n"
	    "  logs [-f] [PROCESS]    list the logs, print one, or follow\n"
	    "  stop                   stop the daemon and its kernels\n"
	    "  doctor                 find what is wrong, and the fix\n"
	    "  domains                remote Jupyter Servers: reachable, "
	    "token taken, who\n"
	    "                         the server says you are\n"
	    "  call TOOL [--json ARGS | key=value ...]\n"
	    "                         run one MCP tool (path=FILE attaches "
	    "a notebook)\n"
	    "  call --list            the tools' names\n"
	    "  open [PATH]            the live view's address for a "
	    "notebook\n"
	    "                         (runs $BROWSER on it when set)\n"
	    "  --json                 JSON for scripts (with call: the "
	    "tool's\n"
	    "                         structuredContent)\n"
	    "  -S socket              socket (default $RUNTIMED_SOCKET)\n"
	    "  -s statedir            state directory (default "
	    "$RUNTIMED_STATE_DIR)\n"
	    "  -q, -v                 less, more output\n"
	    "exit: 0 ok, 1 failed, 2 usage, 3 doctor found a problem, 4 the "
	    "worker failed\n");
	exit(status);
}

/* Take --json out of a command's arguments (it may come after it). */
static int
ctl_take_json(int *argc, char **argv)
{
	int	i, j, found = 0;

	for (i = j = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && i > 0)
			found = 1;
		else
			argv[j++] = argv[i];
	}
	argv[j] = NULL;
	*argc = j;
	return (found);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	struct ctl_ctx	 ctx;
	char		*sock = NULL, *state = NULL;
	const char	*cmd;
	int		 ch, rc;

	memset(&ctx, 0, sizeof ctx);
	while ((ch = getopt_long(argc, argv, "+hJqS:s:Vv", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			ctl_usage(0);
		case 'J':
			ctx.json = 1;
			break;
		case 'q':
			ctx.quiet = 1;
			break;
		case 'S':
			free(sock);
			sock = xstrdup(optarg);
			break;
		case 's':
			free(state);
			state = xstrdup(optarg);
			break;
		case 'V':
			printf("runtimectl %s\n", RUNTIMED_VERSION);
			return (CTL_EXIT_OK);
		case 'v':
			ctx.verbose++;
			break;
		default:
			ctl_usage(CTL_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		ctl_usage(CTL_EXIT_USAGE);
	ctx.socket = sock != NULL ? sock : (sock = sockdir_socket_path());
	ctx.state_dir = state != NULL ? state : (state = sockdir_state_path());
	log_open("runtimectl", ctx.verbose ? LOG_LEVEL_INFO : LOG_LEVEL_WARN,
	    NULL);

	cmd = argv[0];
	if (strcmp(cmd, "call") != 0 && ctl_take_json(&argc, argv))
		ctx.json = 1;
	if (strcmp(cmd, "logs") == 0)
		rc = ctl_logs(&ctx, argc, argv);
	else if (strcmp(cmd, "call") == 0)
		rc = ctl_call(&ctx, argc, argv);
	else if (strcmp(cmd, "open") == 0)
		rc = ctl_open(&ctx, argc, argv);
	else if (argc != 1 && (strcmp(cmd, "status") == 0 ||
	    strcmp(cmd, "rooms") == 0 || strcmp(cmd, "kernels") == 0 ||
	    strcmp(cmd, "stop") == 0 || strcmp(cmd, "doctor") == 0 ||
	    strcmp(cmd, "domains") == 0)) {
		ctl_client_error("%s takes no arguments", cmd);
		rc = CTL_EXIT_USAGE;
	} else if (strcmp(cmd, "status") == 0)
		rc = ctl_status(&ctx);
	else if (strcmp(cmd, "rooms") == 0)
		rc = ctl_status_rooms(&ctx);
	else if (strcmp(cmd, "kernels") == 0)
		rc = ctl_status_kernels(&ctx);
	else if (strcmp(cmd, "stop") == 0)
		rc = ctl_stop(&ctx);
	else if (strcmp(cmd, "doctor") == 0)
		rc = ctl_doctor(&ctx);
	else if (strcmp(cmd, "domains") == 0)
		rc = ctl_domains(&ctx);
	else {
		ctl_client_error("no command %s", cmd);
		ctl_usage(CTL_EXIT_USAGE);
	}
	/* The command said what was wrong; point at the rest. */
	if (rc == CTL_EXIT_USAGE)
		fprintf(stderr, "usage: runtimectl [options] %s ... (see "
		    "runtimectl --help, man runtimectl)\n", cmd);
	free(sock);
	free(state);
	return (rc);
}
