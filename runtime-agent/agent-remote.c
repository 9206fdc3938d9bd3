/* SPDX-License-Identifier: ISC */
/*
 * agent-remote.c: runtimed-agent-remote, the runtime agent for a kernel
 * on a Jupyter Server (agent-remote.h).  The daemon starts it like
 * runtimed-agent, with the domain and the kernel's server directory on
 * the command line, and speaks the same frames (PROTOCOL.md, "Daemon and
 * agent"):
 *
 *	AGENT_START	-> AGENT_READY once the server's kernel answers
 *			   kernel_info, or ERROR kernel_unavailable; its
 *			   kernel_name picks the server's kernelspec, its
 *			   cwd and runtime_dir are unused (the server has
 *			   them)
 *	AGENT_EXECUTE	as runtimed-agent (agent-exec.c, unchanged)
 *	AGENT_VARIABLES, AGENT_COMPLETE, AGENT_INSPECT, AGENT_INPUT_REPLY
 *			as runtimed-agent (agent-introspect.c, agent-stdin.c)
 *			over the WebSocket
 *	AGENT_INTERRUPT	-> OK once the server accepted POST .../interrupt,
 *			   ERROR refused (401, 403) or kernel_unavailable
 *	AGENT_SHUTDOWN	-> OK once the server answered the DELETE; with
 *			   restart, POST .../restart, then AGENT_READY id 0
 *			   when the kernel answers kernel_info again
 *
 * AGENT_READY carries server_kernel_id, the server's id of the kernel.
 * When the daemon dies (fd 3 closed, or our parent gone at SIGTERM)
 * without an AGENT_SHUTDOWN, the kernel is left on the server and we
 * exit; the next daemon's agent takes it back with --kernel-id ID if
 * the server still has it (decision 030).  The pid in AGENT_READY is
 * ours: the kernel's process is the server's.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-remote.h"

extern char **environ;

static struct domain		*agent_remote_domain;
static char			*agent_remote_dir;
static char			*agent_remote_kept;

static __dead void	agent_remote_usage(int);
static struct agent_kernel *agent_remote_create(struct event_base *,
		    struct peer *, uint32_t, const struct proto_agent_start *);
static const char *agent_remote_restart_check(struct agent_kernel *);
static void	agent_remote_clear(void);

static const struct agent_daemon_hooks agent_remote_hooks = {
	.name = "runtimed-agent-remote",
	.language_fallback = 1,
	.create = agent_remote_create,
	.clear = agent_remote_clear,
	.restart_check = agent_remote_restart_check,
	.orphaned = agent_remote_kernel_orphaned,
	.interrupt = agent_remote_kernel_interrupt,
	.shutdown_refused = agent_remote_kernel_refused,
};

static __dead void
agent_remote_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-agent-remote [-hqVv] [--log file] --domain name "
	    "[--path dir] [--kernel-id id]\n"
	    "       runtimed-agent-remote --domain name --list-kernelspecs\n"
	    "Started by runtimed with its socket as fd 3; see "
	    "runtimed-agent(8).\n");
	exit(status);
}

/* The server's kernel answered kernel_info: AGENT_READY. */
void
agent_ready(struct agent_kernel *k, struct json_object *info)
{
	struct proto_agent_ready	 m;
	struct json_object		*caps;
	char				*display;

	memset(&m, 0, sizeof m);
	caps = agent_introspect_caps(k, info);
	m.capabilities.arg = caps;
	/* The kernel's process is the server's; ours stands for it. */
	m.pid = getpid();
	m.kernel_name = agent_str(agent_remote_kernel_name(k));
	if (agent_remote_kernel_display_name(k) != NULL)
		display = xstrdup(agent_remote_kernel_display_name(k));
	else
		display = xstrdup(agent_remote_kernel_name(k));
	m.display_name = agent_str(display);
	m.language = agent_str(agent_remote_kernel_language(k));
	m.server_kernel_id = agent_str(agent_remote_kernel_id(k));
	agent_daemon_ready(&m, info, "remote kernel");
	free(display);
	json_object_put(caps);
}

/* What stdin and introspection had in flight goes with the kernel. */
static void
agent_remote_clear(void)
{
	agent_stdin_clear();
	agent_introspect_clear();
}

/* AGENT_START: kernel_name picks the server's kernelspec. */
static struct agent_kernel *
agent_remote_create(struct event_base *base, struct peer *p, uint32_t id,
    const struct proto_agent_start *m)
{
	struct agent_kernel	*k;
	char			*name;

	name = xstrndup(m->kernel_name.ptr, m->kernel_name.len);
	k = agent_remote_kernel_create(base, agent_remote_domain, name,
	    agent_remote_dir);
	free(name);
	if (agent_remote_kept != NULL)
		agent_remote_kernel_keep(k, agent_remote_kept);
	return (k);
}

/* A restart is POST .../restart: the server must still have the kernel. */
static const char *
agent_remote_restart_check(struct agent_kernel *k)
{
	if (agent_kernel_is_running(k) || !agent_kernel_start_ok(k))
		return (agent_remote_kernel_why(k));
	return (NULL);
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "kernel-id", required_argument, NULL, 'K' },
		{ "list-kernelspecs", no_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "path", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*logfile = NULL, *name = NULL;
	char			*cause;
	int			 ch, level = LOG_LEVEL_WARN, list = 0, rc;

	agent_daemon_init(&agent_remote_hooks);
	while ((ch = getopt_long(argc, argv, "hqVv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			name = optarg;
			break;
		case 'h':
			agent_remote_usage(0);
		case 'K':
			/* The server's ids are uuids; nothing else goes in a URL. */
			if (*optarg == '\0' || strlen(optarg) > 128 ||
			    strspn(optarg, "0123456789abcdef-") !=
			    strlen(optarg))
				agent_remote_usage(1);
			free(agent_remote_kept);
			agent_remote_kept = xstrdup(optarg);
			break;
		case 'p':
			free(agent_remote_dir);
			agent_remote_dir = xstrdup(optarg);
			break;
		default:
			if (!agent_daemon_option(ch, optarg, &level, &logfile,
			    &list))
				agent_remote_usage(1);
		}
	}
	if (optind != argc || name == NULL)
		agent_remote_usage(1);
	log_open("runtimed-agent-remote", level, logfile);
	if ((agent_remote_domain = domain_load(name, &cause)) == NULL) {
		fprintf(stderr, "runtimed-agent-remote: %s\n", cause);
		log_warnx("%s", cause);
		free(cause);
		return (1);
	}
	/*
	 * The server's kernel has an environment we cannot read: the names
	 * RUNTIMED_SECRET_NAMES lists, with our values, the server's token
	 * and the shapes are what is redacted (decision 064).
	 */
	agent_redact_init(environ, 1);
	agent_redact_add(AGENT_REMOTE_TOKEN_LABEL, agent_remote_domain->token,
	    1);
	if (agent_remote_dir == NULL)
		agent_remote_dir = xstrdup("");
	signal(SIGPIPE, SIG_IGN);
	if (list) {
		rc = agent_remote_kernel_list_specs(agent_remote_domain);
		domain_free(agent_remote_domain);
		return (rc);
	}

	agent_daemon_run();
	domain_free(agent_remote_domain);
	free(agent_remote_dir);
	free(agent_remote_kept);
	log_info("exit");
	log_close();
	return (0);
}
