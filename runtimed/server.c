/*
 * server.c: the listening socket (CONTRACT section 3).  One daemon per
 * socket: flock on "<socket>.lock" held for life, then a stale socket
 * left by a dead daemon is replaced.
 */

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

static int		 server_fd = -1;
static int		 server_lock_fd = -1;
static struct event	*server_ev;
static char		*server_path;

/* The pid the lock holder wrote, or 0. */
static pid_t
server_lock_pid(int fd)
{
	char	buf[32];
	ssize_t	n;

	n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	return ((pid_t)strtol(buf, NULL, 10));
}

static void
server_accept_cb(evutil_socket_t fd, short events, void *arg)
{
	int	cfd;

	for (;;) {
		cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		server_client_accept(cfd);
	}
}

/*
 * Take the socket.  Returns 0 when listening, 1 when another daemon
 * already serves it (*other gets its pid, 0 if unknown), -1 on error
 * with *cause set.
 */
int
server_start(const char *path, char **cause, pid_t *other)
{
	struct stat	 sb;
	char		*copy, *lockpath, buf[32];
	int		 fd, len, i;

	*other = 0;
	copy = xstrdup(path);
	if (sockdir_check_named("socket directory", dirname(copy), 1,
	    cause) != 0) {
		free(copy);
		return (-1);
	}
	free(copy);

	xasprintf(&lockpath, "%s.lock", path);
	server_lock_fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (server_lock_fd == -1) {
		xasprintf(cause, "%s: %s", lockpath, strerror(errno));
		free(lockpath);
		return (-1);
	}
	free(lockpath);
	/*
	 * Another daemon holds the lock: it is either starting (wait until
	 * it answers, so our caller can connect when we return) or stopping
	 * (then the lock comes free and we take over).
	 */
	for (i = 0; flock(server_lock_fd, LOCK_EX | LOCK_NB) != 0; i++) {
		if (errno != EWOULDBLOCK) {
			xasprintf(cause, "flock: %s", strerror(errno));
			return (-1);
		}
		if (i >= 200 || (fd = sockdir_connect(path)) != -1) {
			if (i < 200)
				close(fd);
			for (i = 0; i < 20 && (*other =
			    server_lock_pid(server_lock_fd)) == 0; i++)
				usleep(50000);
			close(server_lock_fd);
			server_lock_fd = -1;
			return (1);
		}
		usleep(50000);
	}
	len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(server_lock_fd, 0) != 0 ||
	    pwrite(server_lock_fd, buf, (size_t)len, 0) != len)
		log_warn("writing the lock file");

	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			xasprintf(cause, "%s exists and is not a socket", path);
			return (-1);
		}
		if ((fd = sockdir_connect(path)) != -1) {
			/* Live, yet nobody holds the lock: leave it be. */
			close(fd);
			close(server_lock_fd);
			server_lock_fd = -1;
			return (1);
		}
		log_info("removing stale socket %s", path);
		if (unlink(path) != 0 && errno != ENOENT) {
			xasprintf(cause, "unlink %s: %s", path,
			    strerror(errno));
			return (-1);
		}
	}
	if ((server_fd = sockdir_listen(path, cause)) == -1)
		return (-1);
	server_path = xstrdup(path);
	server_ev = event_new(runtimed_base, server_fd, EV_READ | EV_PERSIST,
	    server_accept_cb, NULL);
	event_add(server_ev, NULL);
	log_info("listening on %s", path);
	return (0);
}

/*
 * Stop accepting.  The socket stays open until exit so that "runtimed
 * stop", which waits for connects to fail, returns only once we are gone.
 */
void
server_stop_accepting(void)
{
	if (server_ev != NULL) {
		event_free(server_ev);
		server_ev = NULL;
	}
}

void
server_shutdown_listener(void)
{
	server_stop_accepting();
	if (server_fd != -1) {
		close(server_fd);
		server_fd = -1;
	}
}

/* Remove our socket (only ever ours: we hold the lock). */
void
server_unlink_socket(void)
{
	if (server_path != NULL && server_lock_fd != -1) {
		unlink(server_path);
		free(server_path);
		server_path = NULL;
	}
}
