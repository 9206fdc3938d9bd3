/* SPDX-License-Identifier: ISC */
/*
 * server-activate.c: what a service manager hands the daemon.  A
 * listening socket made for us (systemd's LISTEN_FDS and LISTEN_PID, or
 * launchd's launch_activate_socket on macOS), and the readiness
 * notification systemd waits for with Type=notify (one datagram to
 * $NOTIFY_SOCKET; the protocol is a few lines, so no libsystemd).
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <launch.h>
#endif

#include "runtimed.h"

/* systemd passes sockets from this descriptor on (sd_listen_fds(3)). */
#define SERVER_ACTIVATE_FD	3

static char	*server_activate_notify_path;

static int	server_activate_check(int, char **, char **);
#ifdef __APPLE__
static int	server_activate_launchd(char **, char **);
#endif

/* Is fd a listening AF_UNIX stream socket?  Its path goes in *path. */
static int
server_activate_check(int fd, char **path, char **cause)
{
	struct sockaddr_un	sa;
	socklen_t		len = sizeof sa;
	int			type, listening;
	socklen_t		olen;

	memset(&sa, 0, sizeof sa);
	olen = sizeof type;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &olen) != 0) {
		xasprintf(cause, "the activated descriptor %d is not a "
		    "socket: %s", fd, strerror(errno));
		return (-1);
	}
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 ||
	    sa.sun_family != AF_UNIX || type != SOCK_STREAM ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sa.sun_path[0] == '\0') {
		xasprintf(cause, "the activated socket (descriptor %d) is not "
		    "a Unix stream socket with a path: check ListenStream= "
		    "in runtimed.socket", fd);
		return (-1);
	}
#ifdef SO_ACCEPTCONN
	olen = sizeof listening;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
	    &olen) == 0 && !listening) {
		xasprintf(cause, "the activated socket %s is not listening",
		    sa.sun_path);
		return (-1);
	}
#endif
	sa.sun_path[sizeof sa.sun_path - 1] = '\0';
	*path = xstrdup(sa.sun_path);
	return (0);
}

#ifdef __APPLE__
/* launchd: the "Listeners" socket of our LaunchAgent plist. */
static int
server_activate_launchd(char **path, char **cause)
{
	int	*fds = NULL, fd;
	size_t	 n = 0, i;
	int	 e;

	if ((e = launch_activate_socket("Listeners", &fds, &n)) != 0) {
		/* ESRCH: not started by launchd; ENOENT: no such socket. */
		if (e == ESRCH || e == ENOENT)
			return (-1);
		xasprintf(cause, "launch_activate_socket: %s", strerror(e));
		return (-2);
	}
	if (n == 0) {
		free(fds);
		return (-1);
	}
	fd = fds[0];
	for (i = 1; i < n; i++)
		close(fds[i]);
	free(fds);
	if (server_activate_check(fd, path, cause) != 0) {
		close(fd);
		return (-2);
	}
	return (fd);
}
#endif

/*
 * The listening socket a service manager made for us: its descriptor
 * (non-blocking, close-on-exec) with *path set; -1 when we were not
 * socket-activated; -2 with *cause when what we were given is unusable.
 * The variables are removed so no child thinks it is activated too.
 */
int
server_activate_listener(char **path, char **cause)
{
	const char	*pid, *fds;
	char		*end;
	long		 n;
	int		 fd, flags;

	pid = getenv("LISTEN_PID");
	fds = getenv("LISTEN_FDS");
	if (pid == NULL || fds == NULL) {
#ifdef __APPLE__
		return (server_activate_launchd(path, cause));
#else
		return (-1);
#endif
	}
	n = strtol(pid, &end, 10);
	if (*pid == '\0' || *end != '\0' || n != (long)getpid())
		return (-1);	/* meant for a process before us */
	n = strtol(fds, &end, 10);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (*fds == '\0' || *end != '\0' || n < 1) {
		xasprintf(cause, "LISTEN_FDS=%s: expected one socket", fds);
		return (-2);
	}
	if (n > 1)
		log_warnx("%ld sockets passed; using the first", n);
	for (fd = SERVER_ACTIVATE_FD + 1; fd < SERVER_ACTIVATE_FD + n; fd++)
		close(fd);
	fd = SERVER_ACTIVATE_FD;
	if (server_activate_check(fd, path, cause) != 0)
		return (-2);
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		xasprintf(cause, "fcntl on the activated socket: %s",
		    strerror(errno));
		free(*path);
		*path = NULL;
		return (-2);
	}
	return (fd);
}

/* Remember $NOTIFY_SOCKET and take it out of our children's way. */
void
server_activate_notify_init(void)
{
	const char	*env;

	if ((env = getenv("NOTIFY_SOCKET")) != NULL &&
	    (*env == '/' || *env == '@'))
		server_activate_notify_path = xstrdup(env);
	unsetenv("NOTIFY_SOCKET");
}

/* Tell systemd our state ("READY=1", "STOPPING=1"); quiet without it. */
void
server_activate_notify(const char *state)
{
	struct sockaddr_un	 sa;
	const char		*path = server_activate_notify_path;
	socklen_t		 len;
	size_t			 plen;
	int			 fd;

	if (path == NULL)
		return;
	plen = strlen(path);
	if (plen >= sizeof sa.sun_path) {
		log_warnx("NOTIFY_SOCKET too long: %s", path);
		return;
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, plen);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* an abstract socket */
	len = offsetof(struct sockaddr_un, sun_path) + plen;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("notify socket");
		return;
	}
	if (sendto(fd, state, strlen(state), 0, (struct sockaddr *)&sa,
	    len) == -1)
		log_warn("notify %s", path);
	close(fd);
}
