/* SPDX-License-Identifier: ISC */
/*
 * agent.c: runtimed-agent, one per kernel.
 *
 * The daemon starts us with one end of a socketpair as fd 3 and nothing
 * else.  We say HELLO, wait for HELLO_OK, then serve AGENT_* requests
 * (PROTOCOL.md, "Daemon and agent"; the link is agent-daemon.c).  When
 * fd 3 goes away the daemon is gone: shut the kernel down and exit 0.
 *
 * Replies and events:
 *	AGENT_START	-> AGENT_READY (same id) or ERROR
 *			   kernel_unavailable
 *	AGENT_EXECUTE	-> no reply on success, events carry exec_id;
 *			   ERROR (same id) if the kernel cannot take it
 *			   (the daemon then ends that run as error);
 *			   optional stop_on_error (default false) and
 *			   silent (no history, outputs not forwarded)
 *	AGENT_INTERRUPT	-> OK or ERROR
 *	AGENT_SHUTDOWN	-> OK once the old process is reaped; with
 *			   restart a new kernel is then launched and
 *			   announced with AGENT_READY id 0, or
 *			   AGENT_STATUS dead if it fails to come up
 *	AGENT_VARIABLES, AGENT_COMPLETE, AGENT_INSPECT
 *			-> KERNEL_*_REPLY or ERROR (agent-introspect.c)
 *	AGENT_INPUT_REPLY -> OK or ERROR (agent-stdin.c)
 */

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

static __dead void	agent_usage(int);
static struct agent_kernel *agent_create(struct event_base *, struct peer *,
		    uint32_t, const struct proto_agent_start *);
static void	agent_clear(void);
static void	agent_cleanup(void);

static const struct agent_daemon_hooks agent_hooks = {
	.name = "runtimed-agent",
	.sigchld = agent_kernel_sigchld,
	.create = agent_create,
	.clear = agent_clear,
};

static __dead void
agent_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-agent [-hqVv] [--log file]\n"
	    "       runtimed-agent --list-kernelspecs\n"
	    "Started by runtimed with its socket as fd 3; see "
	    "runtimed-agent(8).\n");
	exit(status);
}

/* The kernel answered kernel_info: send AGENT_READY. */
void
agent_ready(struct agent_kernel *k, struct json_object *info)
{
	struct kernelspec		*ks = agent_kernel_spec(k);
	struct proto_agent_ready	 m;
	struct json_object		*caps;

	memset(&m, 0, sizeof m);
	m.pid = agent_kernel_pid(k);
	m.kernel_name = agent_str(kernelspec_name(ks));
	m.display_name = agent_str(kernelspec_display_name(ks));
	m.language = agent_str(kernelspec_language(ks));
	m.transport = agent_str(agent_kernel_transport(k));
	caps = agent_introspect_caps(k, info);
	m.capabilities.arg = caps;
	agent_daemon_ready(&m, info, "kernel");
	json_object_put(caps);
}

/* What stdin and introspection had in flight goes with the kernel. */
static void
agent_clear(void)
{
	agent_stdin_clear();
	agent_introspect_clear();
}

/*
 * AGENT_START for a local kernel: cwd and the runtime directory must be
 * directories and the kernelspec installed.
 */
static struct agent_kernel *
agent_create(struct event_base *base, struct peer *p, uint32_t id,
    const struct proto_agent_start *m)
{
	struct agent_kernel	*k = NULL;
	struct kernelspec	*ks;
	struct stat		 sb;
	char			*kernel_id, *name, *cwd, *rdir;
	char			*cause, *real;

	kernel_id = xstrndup(m->kernel_id.ptr, m->kernel_id.len);
	name = xstrndup(m->kernel_name.ptr, m->kernel_name.len);
	cwd = xstrndup(m->cwd.ptr, m->cwd.len);
	rdir = xstrndup(m->runtime_dir.ptr, m->runtime_dir.len);
	if (stat(cwd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "working directory %s is not a directory", cwd);
		goto out;
	}
	if (sockdir_check_dir(rdir, 0, &cause) != 0) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "runtime directory: %s", cause);
		free(cause);
		goto out;
	}
	/* The kernel runs in cwd, so its connection file path is absolute. */
	if ((real = util_realpath_new(rdir)) == NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "runtime directory %s: %s", rdir, strerror(errno));
		goto out;
	}
	free(rdir);
	rdir = real;
	if ((real = util_realpath_new(cwd)) != NULL) {
		free(cwd);
		cwd = real;
	}
	if ((ks = kernelspec_find(name, &cause)) == NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		free(cause);
		goto out;
	}
	k = agent_kernel_create(base, ks, kernel_id, cwd, rdir);
	/* The daemon saw this kernelspec fail on ipc (decision 060). */
	if (m->transport.ptr != NULL && m->transport.len == 3 &&
	    memcmp(m->transport.ptr, "tcp", 3) == 0)
		agent_kernel_set_tcp(k);

out:
	free(kernel_id);
	free(name);
	free(cwd);
	free(rdir);
	return (k);
}

/* fatal() cleanup: never leave a kernel behind. */
static void
agent_cleanup(void)
{
	agent_kernel_emergency(agent_daemon_kernel());
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "list-kernelspecs", no_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*logfile = NULL;
	struct json_object	*specs;
	int			 ch, level = LOG_LEVEL_WARN, list = 0;

	/*
	 * One malloc arena: libzmq's I/O thread would otherwise get one of
	 * its own, which keeps what a burst of output left in it.
	 */
	mallopt(M_ARENA_MAX, 1);
	/*
	 * A big output is three buffers of its size (libzmq's message,
	 * json-c's string buffer, the parsed string).  Left to malloc's own
	 * thresholds they came fresh from the kernel for every message, a page
	 * fault per 4 KiB (2,560 for a 10 MB image, about a third of the
	 * agent's time on it); from the heap they are reused.  What a burst
	 * leaves is given back once the kernel has been idle for
	 * AGENT_EXEC_TRIM_SECS (agent-exec.c).
	 */
	mallopt(M_MMAP_THRESHOLD, AGENT_HEAP_MMAP);
	mallopt(M_TRIM_THRESHOLD, AGENT_HEAP_TRIM);

	agent_daemon_init(&agent_hooks);
	while ((ch = getopt_long(argc, argv, "hqVv", longopts, NULL)) != -1) {
		if (ch == 'h')
			agent_usage(0);
		if (!agent_daemon_option(ch, optarg, &level, &logfile, &list))
			agent_usage(1);
	}
	if (optind != argc)
		agent_usage(1);
	log_open("runtimed-agent", level, logfile);
	fatal_set_cleanup(agent_cleanup);

	/* For list_kernels: the installed kernelspecs as JSON on stdout. */
	if (list) {
		specs = kernelspec_list();
		printf("%s\n", json_object_to_json_string_ext(specs,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(specs);
		return (fflush(stdout) == 0 ? 0 : 1);
	}

	agent_daemon_run();
	log_info("exit");
	log_close();
	return (0);
}
