/* SPDX-License-Identifier: ISC */
/*
 * trace.c: a per-hop timestamp trace, off unless RUNTIMED_TRACE names a
 * file.  Every process of the chain (proxy, worker, daemon, agent) then
 * appends one line per frame it receives or queues (common/peer.c), per
 * MCP line it reads (common/lineread.c) or the proxy queues for stdout
 * (PEER "stdout") and, in the agent, per kernel message it reads or
 * sends (runtime-agent/agent-kernel.c, PEER "kernel", TYPE the channel
 * in, the message type out):
 *
 *	MICROSECONDS PROCESS[PID] in|out PEER TYPE ID LENGTH
 *
 * MICROSECONDS is CLOCK_MONOTONIC, one clock for every process of the
 * machine, so the lines of all four merge into one timeline
 * (bench/hops.mjs reads them).  Each line is one write(2) to a file
 * opened O_APPEND, so lines of different processes do not interleave.
 * The file is created 0600 and never followed through a symlink.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static int	trace_fd = -2;	/* -2 not looked at yet, -1 off */

static int	trace_open(void);

static int
trace_open(void)
{
	const char	*path;

	if (trace_fd != -2)
		return (trace_fd);
	trace_fd = -1;
	if ((path = getenv("RUNTIMED_TRACE")) == NULL || *path == '\0')
		return (-1);
	trace_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (trace_fd == -1)
		log_warn("RUNTIMED_TRACE %s: no trace", path);
	return (trace_fd);
}

/* One hop: dir "in" or "out", what (a message name), an id, a length. */
void
trace_hop(const char *dir, const char *peer, const char *what, uint32_t id,
    size_t len)
{
	struct timespec	ts;
	char		line[256];
	int		n;

	if (trace_fd == -1 || trace_open() == -1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof line, "%lld %s[%ld] %s %s %s %u %zu\n",
	    (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
	    program_invocation_short_name, (long)getpid(), dir, peer, what,
	    id, len);
	/* A trace is best effort: a failed write loses one line. */
	if (n > 0 && (size_t)n < sizeof line &&
	    write(trace_fd, line, n) != n)
		return;
}
