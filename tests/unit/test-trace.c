/* SPDX-License-Identifier: ISC */
/*
 * test-trace.c: the per-hop trace (common/trace.c) writes one line per
 * hop to the file RUNTIMED_TRACE names, and never through a symlink.
 * Criterion runs each test in a process of its own, so each sees the
 * variable fresh.
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common.h"

static char	*trace_tmp(void);

static char *
trace_tmp(void)
{
	char	*dir;

	dir = strdup("/tmp/test-trace.XXXXXX");
	cr_assert(mkdtemp(dir) != NULL);
	return (dir);
}

Test(trace, lines)
{
	char		*dir, path[256], line[256], proc[64], d[8], peer[32];
	char		 what[32];
	long long	 t1, t2;
	unsigned	 id;
	size_t		 len;
	FILE		*f;

	dir = trace_tmp();
	snprintf(path, sizeof path, "%s/trace", dir);
	setenv("RUNTIMED_TRACE", path, 1);
	trace_hop("in", "daemon", "EXEC_RUN", 7, 12);
	trace_hop("out", "agent", "AGENT_EXECUTE", 8, 300);
	cr_assert((f = fopen(path, "r")) != NULL);
	cr_assert(fgets(line, sizeof line, f) != NULL);
	cr_assert_eq(sscanf(line, "%lld %63s %7s %31s %31s %u %zu", &t1, proc,
	    d, peer, what, &id, &len), 7, "%s", line);
	cr_assert(strchr(proc, '[') != NULL, "%s", proc);
	cr_assert_str_eq(d, "in");
	cr_assert_str_eq(peer, "daemon");
	cr_assert_str_eq(what, "EXEC_RUN");
	cr_assert_eq(id, 7);
	cr_assert_eq(len, 12);
	cr_assert(fgets(line, sizeof line, f) != NULL);
	cr_assert_eq(sscanf(line, "%lld %63s %7s %31s %31s %u %zu", &t2, proc,
	    d, peer, what, &id, &len), 7, "%s", line);
	cr_assert_str_eq(what, "AGENT_EXECUTE");
	cr_assert(t2 >= t1);
	cr_assert(fgets(line, sizeof line, f) == NULL);
	fclose(f);
	unlink(path);
	rmdir(dir);
	free(dir);
}

Test(trace, off_without_the_variable)
{
	unsetenv("RUNTIMED_TRACE");
	trace_hop("in", "daemon", "EXEC_RUN", 7, 12);
}

Test(trace, never_through_a_symlink)
{
	struct stat	 sb;
	char		*dir, path[256], target[256];
	FILE		*f;

	dir = trace_tmp();
	snprintf(target, sizeof target, "%s/target", dir);
	snprintf(path, sizeof path, "%s/trace", dir);
	cr_assert((f = fopen(target, "w")) != NULL);
	fclose(f);
	cr_assert(symlink(target, path) == 0);
	setenv("RUNTIMED_TRACE", path, 1);
	trace_hop("in", "daemon", "EXEC_RUN", 7, 12);
	cr_assert(stat(target, &sb) == 0);
	cr_assert_eq(sb.st_size, 0, "the trace went through the symlink");
	unlink(path);
	unlink(target);
	rmdir(dir);
	free(dir);
}
