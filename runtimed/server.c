/* SPDX-License-Identifier: ISC */
/*
 * server.c: the listening socket (docs/files.md).  One daemon per
 * socket: flock on "<socket>.lock" held for life, then a stale socket
 * left by a dead daemon is replaced.
 *
 * Descriptors: the soft limit is raised to the hard one at start.  The
 * last SERVER_FD_RESERVE descriptors are kept for what the daemon does
 * for its clients (saving, the store, starting kernels), so it accepts
 * only while it has more free than that; otherwise, and on EMFILE or
 * ENFILE, it stops accepting for SERVER_ACCEPT_PAUSE_MS or until a
 * client leaves.  New clients wait in the listen backlog meanwhile, and
 * the ones connected are served as before (docs/decisions/012).
 *
 * A socket made by systemd or launchd (server-activate.c) is used as it
 * is and never removed by us.  Like tmux, the daemon stops once its
 * socket file is removed or replaced (checked every SERVER_WATCH_MS by
 * inode): nobody could reach it any more, and a replacement must not
 * lose its socket when we exit.
 */

#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

/* Descriptors kept free of clients; pause and log interval. */
#define SERVER_FD_RESERVE	16
#define SERVER_ACCEPT_PAUSE_MS	1000
#define SERVER_FD_LOG_MS	10000
#define SERVER_WATCH_MS		1000

static int		 server_fd = -1;
static int		 server_lock_fd = -1;
static struct event	*server_ev;
static struct event	*server_pause_ev;	/* resumes accepting */
static int		 server_paused;
static int64_t		 server_logged_at;	/* last "no room" line */
static u_int		 server_waits;		/* pauses since */
static char		*server_path;
static rlim_t		 server_fd_limit;
static int		 server_activated;	/* the socket is not ours */
static struct event	*server_watch_ev;
static dev_t		 server_sock_dev;
static ino_t		 server_sock_ino;

static pid_t	server_lock_pid(int);
static void	server_raise_fd_limit(void);
static u_int	server_fd_reserve(void);
static int	server_have_room(void);
static void	server_pause(const char *);
static void	server_accept_cb(evutil_socket_t, short, void *);
static void	server_resume_cb(evutil_socket_t, short, void *);
static void	server_watch_cb(evutil_socket_t, short, void *);
static void	server_watch_start(void);

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

/* Raise the soft descriptor limit to the hard one; remember it. */
static void
server_raise_fd_limit(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		log_warn("getrlimit");
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			log_warn("setrlimit");
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	server_fd_limit = rl.rlim_cur;
}

/* The reserve: a quarter of a tiny limit, so some client still fits. */
static u_int
server_fd_reserve(void)
{
	if (server_fd_limit != RLIM_INFINITY &&
	    server_fd_limit / 4 < SERVER_FD_RESERVE)
		return ((u_int)(server_fd_limit / 4));
	return (SERVER_FD_RESERVE);
}

/*
 * Is there room for one more client beyond the reserve?  The kernel
 * hands out the lowest free descriptor, so a probe that lands inside
 * the reserve means (holes aside) that fewer than that are free.
 */
static int
server_have_room(void)
{
	int	fd;

	if ((fd = fcntl(server_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return (0);
	close(fd);
	return (server_fd_limit == RLIM_INFINITY ||
	    (rlim_t)fd + server_fd_reserve() < server_fd_limit);
}

/* Stop accepting for a while; say so once per SERVER_FD_LOG_MS. */
static void
server_pause(const char *why)
{
	struct timeval	tv = { SERVER_ACCEPT_PAUSE_MS / 1000,
			    (SERVER_ACCEPT_PAUSE_MS % 1000) * 1000 };
	int64_t		now = util_mono_ms();

	if (server_ev == NULL)
		return;
	if (!server_paused) {
		event_del(server_ev);
		server_paused = 1;
	}
	evtimer_add(server_pause_ev, &tv);
	server_waits++;
	if (server_logged_at != 0 &&
	    now - server_logged_at < SERVER_FD_LOG_MS)
		return;
	if (server_logged_at == 0)
		log_warnx("accept: not accepting clients for now: %s (%u of "
		    "%llu descriptors open, %u kept for saving and kernels); "
		    "new clients wait until one leaves", why,
		    server_fds_open(), (unsigned long long)server_fd_limit,
		    server_fd_reserve());
	else
		log_warnx("accept: still short of descriptors: %s (%u of "
		    "%llu open); paused %u times in the last %d s", why,
		    server_fds_open(), (unsigned long long)server_fd_limit,
		    server_waits, (int)((now - server_logged_at) / 1000));
	server_logged_at = now;
	server_waits = 0;
}

static void
server_accept_cb(evutil_socket_t fd, short events, void *arg)
{
	int	cfd;

	for (;;) {
		if (!server_have_room()) {
			server_pause("too few descriptors left");
			return;
		}
		cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (cfd == -1) {
			if (errno == EMFILE || errno == ENFILE)
				server_pause(strerror(errno));
			else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		server_client_accept(cfd);
	}
}

/* Accept again (the timer, or a client left); pause again if no room. */
static void
server_resume_cb(evutil_socket_t fd, short events, void *arg)
{
	if (!server_paused || server_ev == NULL)
		return;
	server_paused = 0;
	event_add(server_ev, NULL);
	log_debug("accepting clients again");
}

/*
 * A client left: try again soon, from a fresh callback, once its
 * descriptor is closed.
 */
void
server_resume_accepting(void)
{
	struct timeval	tv = { 0, 0 };

	if (server_paused && server_pause_ev != NULL)
		evtimer_add(server_pause_ev, &tv);
}

/* Descriptors open now (the limit when even that cannot be counted). */
u_int
server_fds_open(void)
{
	DIR		*d;
	struct dirent	*de;
	u_int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return ((u_int)server_fd_limit);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return (n > 0 ? n - 1 : 0);	/* not the one reading the dir */
}

/* The soft descriptor limit we run under. */
u_int
server_fds_limit(void)
{
	if (server_fd_limit == RLIM_INFINITY || server_fd_limit > UINT_MAX)
		return (UINT_MAX);
	return ((u_int)server_fd_limit);
}

/* How many more clients fit beside those connected. */
u_int
server_peers_room(void)
{
	u_int	open = server_fds_open(), limit = server_fds_limit();
	u_int	reserve = server_fd_reserve();

	if (open + reserve >= limit)
		return (0);
	return (limit - open - reserve);
}

/* Is our socket file still the one we listen on? */
static void
server_watch_cb(evutil_socket_t fd, short events, void *arg)
{
	struct timeval	 tv = { SERVER_WATCH_MS / 1000,
			    (SERVER_WATCH_MS % 1000) * 1000 };
	struct stat	 sb;
	const char	*what = NULL;

	if (lstat(server_path, &sb) != 0)
		what = errno == ENOENT ? "removed" : strerror(errno);
	else if (sb.st_dev != server_sock_dev || sb.st_ino != server_sock_ino)
		what = "replaced";
	if (what == NULL) {
		evtimer_add(server_watch_ev, &tv);
		return;
	}
	log_warnx("socket %s %s; stopping (no client can reach this daemon "
	    "now)", server_path, what);
	/* Whatever is at the path now is not ours to remove. */
	free(server_path);
	server_path = NULL;
	runtimed_stop();
}

static void
server_watch_start(void)
{
	struct timeval	tv = { SERVER_WATCH_MS / 1000,
			    (SERVER_WATCH_MS % 1000) * 1000 };
	struct stat	sb;

	if (lstat(server_path, &sb) != 0) {
		log_warn("lstat %s", server_path);
		return;
	}
	server_sock_dev = sb.st_dev;
	server_sock_ino = sb.st_ino;
	server_watch_ev = evtimer_new(runtimed_base, server_watch_cb, NULL);
	evtimer_add(server_watch_ev, &tv);
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
	char		*copy, *lockpath, *apath = NULL, buf[32];
	int		 fd, len, i, afd;

	*other = 0;
	server_raise_fd_limit();
	if ((afd = server_activate_listener(&apath, cause)) == -2)
		return (-1);
	if (afd >= 0) {
		if (strcmp(apath, path) != 0)
			log_warnx("activated on %s, not %s: clients must use "
			    "%s", apath, path, apath);
		path = apath;
		server_activated = 1;
	}
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
		if (afd >= 0 && i >= 200) {
			xasprintf(cause, "another runtimed holds %s.lock (pid "
			    "%ld); stop it before the socket unit's",
			    path, (long)server_lock_pid(server_lock_fd));
			return (-1);
		}
		if (afd < 0 &&
		    (i >= 200 || (fd = sockdir_connect(path)) != -1)) {
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

	if (afd >= 0) {
		server_fd = afd;
		goto listening;
	}
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
listening:
	server_path = xstrdup(path);
	free(apath);
	server_ev = event_new(runtimed_base, server_fd, EV_READ | EV_PERSIST,
	    server_accept_cb, NULL);
	event_add(server_ev, NULL);
	server_pause_ev = evtimer_new(runtimed_base, server_resume_cb, NULL);
	server_watch_start();
	log_info("listening on %s%s", server_path, server_activated ?
	    " (socket-activated)" : "");
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
	if (server_pause_ev != NULL) {
		event_free(server_pause_ev);
		server_pause_ev = NULL;
	}
	if (server_watch_ev != NULL) {
		event_free(server_watch_ev);
		server_watch_ev = NULL;
	}
	server_paused = 0;
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

/*
 * Remove our socket (only ever ours: we hold the lock, made it, and it
 * was not replaced).  A service manager's socket stays for the next
 * activation.
 */
void
server_unlink_socket(void)
{
	if (server_path != NULL && server_lock_fd != -1) {
		if (!server_activated)
			unlink(server_path);
		free(server_path);
		server_path = NULL;
	}
}
