/* SPDX-License-Identifier: ISC */
/*
 * agent-heartbeat.c: is the kernel alive?  A heartbeat ping every
 * second (agent-kernel.c sends it: only that file speaks ZeroMQ).
 * Between cells every kernel echoes, so an echo missing for 1.5 s makes
 * it "unresponsive".  While a cell runs, silence proves nothing:
 * ipykernel and xeus echo from a thread, IRkernel only between cells,
 * and a long computation is not a hang.  Then only a stopped process
 * (state T or t in /proc) is unresponsive.  Unresponsive for
 * AGENT_HEARTBEAT_HUNG_MS (env RUNTIMED_KERNEL_HUNG_SECS) the kernel is
 * killed and reported dead with the reason kept here.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_HEARTBEAT_MS		1000
#define AGENT_HEARTBEAT_HUNG_MS		30000

struct agent_heartbeat {
	struct agent_kernel	*k;
	struct event		*ev;
	int			 pending;	/* a ping without echo */
	int64_t			 ok_ms;		/* last echo */
	int			 was_running;	/* a cell, last check */
	int			 unresponsive;
	int64_t			 unresponsive_ms;
	int64_t			 hung_ms;
	char			*kill_reason;
};

static void	agent_heartbeat_cb(evutil_socket_t, short, void *);
static int	agent_heartbeat_is_stopped(pid_t);
static void	agent_heartbeat_check(struct agent_heartbeat *);

struct agent_heartbeat *
agent_heartbeat_create(struct event_base *base, struct agent_kernel *k)
{
	struct agent_heartbeat	*hb;
	const char		*env;

	hb = xcalloc(1, sizeof *hb);
	hb->k = k;
	hb->hung_ms = AGENT_HEARTBEAT_HUNG_MS;
	if ((env = getenv("RUNTIMED_KERNEL_HUNG_SECS")) != NULL &&
	    atoi(env) > 0)
		hb->hung_ms = (int64_t)atoi(env) * 1000;
	hb->ev = evtimer_new(base, agent_heartbeat_cb, hb);
	return (hb);
}

void
agent_heartbeat_free(struct agent_heartbeat *hb)
{
	if (hb == NULL)
		return;
	event_free(hb->ev);
	free(hb->kill_reason);
	free(hb);
}

/* The kernel is ready: ping now, then every second. */
void
agent_heartbeat_start(struct agent_heartbeat *hb)
{
	hb->ok_ms = util_mono_ms();
	agent_heartbeat_cb(-1, 0, hb);
}

/* The kernel's sockets are closed: forget the last one's state. */
void
agent_heartbeat_stop(struct agent_heartbeat *hb)
{
	evtimer_del(hb->ev);
	hb->pending = 0;
	hb->was_running = 0;
	hb->unresponsive = 0;
}

/* Why the heartbeat killed the kernel, if it did; caller frees. */
char *
agent_heartbeat_kill_reason(struct agent_heartbeat *hb)
{
	char	*reason = hb->kill_reason;

	hb->kill_reason = NULL;
	return (reason);
}

/* Is the kernel process stopped (SIGSTOP, a debugger)? */
static int
agent_heartbeat_is_stopped(pid_t pid)
{
	char	 path[64], buf[512], *cp;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (0);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, even ") ". */
	if ((cp = strrchr(buf, ')')) == NULL || cp[1] != ' ')
		return (0);
	return (cp[2] == 'T' || cp[2] == 't');
}

/*
 * Decide whether the kernel is responsive and say so when that changes;
 * kill it when it has not been for too long.
 */
static void
agent_heartbeat_check(struct agent_heartbeat *hb)
{
	pid_t	 pid = agent_kernel_pid(hb->k);
	int64_t	 now = util_mono_ms();
	char	*why = NULL;
	int	 running = agent_exec_running();

	if (!agent_kernel_is_ready(hb->k))
		return;
	/* A kernel that was deaf during a cell gets a ping's grace after. */
	if (hb->was_running && !running)
		hb->ok_ms = now;
	hb->was_running = running;
	if (agent_heartbeat_is_stopped(pid))
		why = xstrdup("the kernel process is stopped");
	else if (!running && now - hb->ok_ms > AGENT_HEARTBEAT_MS +
	    AGENT_HEARTBEAT_MS / 2)
		xasprintf(&why, "no heartbeat for %lld ms",
		    (long long)(now - hb->ok_ms));
	if (why != NULL && !hb->unresponsive) {
		hb->unresponsive = 1;
		hb->unresponsive_ms = now;
		log_warnx("kernel %ld unresponsive: %s", (long)pid, why);
		agent_responsive(hb->k, 0, why);
	} else if (why == NULL && hb->unresponsive) {
		hb->unresponsive = 0;
		log_warnx("kernel %ld responsive again", (long)pid);
		agent_responsive(hb->k, 1, NULL);
	}
	if (hb->unresponsive && now - hb->unresponsive_ms >= hb->hung_ms &&
	    hb->kill_reason == NULL) {
		xasprintf(&hb->kill_reason, "unresponsive for %lld s (%s); "
		    "killed", (long long)(now - hb->unresponsive_ms) / 1000,
		    why);
		log_warnx("kernel %ld %s", (long)pid, hb->kill_reason);
		killpg(pid, SIGKILL);
	}
	free(why);
}

/* An echo came back on the heartbeat socket. */
void
agent_heartbeat_echo(struct agent_heartbeat *hb)
{
	hb->pending = 0;
	hb->ok_ms = util_mono_ms();
	agent_heartbeat_check(hb);
}

/*
 * Once a second: ping (a socket whose last echo never came is replaced,
 * agent_kernel_ping) and check.
 */
static void
agent_heartbeat_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_heartbeat	*hb = arg;
	struct timeval		 tv = { AGENT_HEARTBEAT_MS / 1000,
	    (AGENT_HEARTBEAT_MS % 1000) * 1000 };

	if (!agent_kernel_is_ready(hb->k))
		return;
	if (agent_kernel_ping(hb->k, hb->pending) == 0)
		hb->pending = 1;
	else
		hb->pending = 0;
	/* Reading the socket now may bring the echo (and clear pending). */
	agent_kernel_ping_drain(hb->k);
	agent_heartbeat_check(hb);
	if (agent_kernel_is_ready(hb->k))
		evtimer_add(hb->ev, &tv);
}
