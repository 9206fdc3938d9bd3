/* SPDX-License-Identifier: ISC */
/*
 * ctl-stop.c: stop the daemon and wait until its socket no longer
 * answers (its kernels are shut down first, by the daemon).
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

/* How long a stop may take: the daemon's grace for kernels, and more. */
#define CTL_STOP_WAIT_MS	10000

static int	ctl_stop_gone(pid_t);

/* Has pid exited (a zombie counts: its parent reaps it, not us)? */
static int
ctl_stop_gone(pid_t pid)
{
	char	 path[64], buf[256], *p;
	FILE	*f;
	int	 zombie = 0;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return (1);
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		zombie = p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return (zombie);
}

int
ctl_stop(struct ctl_ctx *ctx)
{
	struct proto_daemon_status_reply	 s;
	struct json_object			*j;
	msgpack_unpacked			 u;
	int64_t					 deadline, pid;
	int					 fd;

	if (ctl_client_status(ctx->socket, 0, &u, &s) != 0)
		return (CTL_EXIT_FAIL);
	pid = s.pid;
	msgpack_unpacked_destroy(&u);
	if ((fd = ctl_client_connect(ctx->socket, 0)) == -1)
		return (CTL_EXIT_FAIL);
	if (ctl_client_request(fd, PROTO_MSG_DAEMON_STOP, NULL, &u) != 0) {
		close(fd);
		return (CTL_EXIT_FAIL);
	}
	msgpack_unpacked_destroy(&u);
	close(fd);
	deadline = util_mono_ms() + CTL_STOP_WAIT_MS;
	while (util_mono_ms() < deadline) {
		if ((fd = sockdir_connect(ctx->socket)) == -1 &&
		    ctl_stop_gone((pid_t)pid)) {
			if (ctx->json) {
				j = json_object_new_object();
				json_object_object_add(j, "stopped",
				    json_object_new_boolean(1));
				json_object_object_add(j, "pid",
				    json_object_new_int64(pid));
				ctl_client_print_json(NULL, j);
			} else if (!ctx->quiet)
				printf("stopped (pid %lld)\n", (long long)pid);
			return (CTL_EXIT_OK);
		}
		if (fd != -1)
			close(fd);
		usleep(50000);
	}
	ctl_client_error("the daemon (pid %lld) did not stop within %d s",
	    (long long)pid, CTL_STOP_WAIT_MS / 1000);
	return (CTL_EXIT_FAIL);
}
