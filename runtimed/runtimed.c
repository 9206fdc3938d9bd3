/* SPDX-License-Identifier: ISC */
/*
 * runtimed.c: the room daemon's main and command line.
 *
 *	runtimed [-Dv] [-S socket] [-s statedir]	start the daemon
 *	runtimed [-S socket] status | stop
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtimed.h"
#include "client/ctl.h"

struct event_base	*runtimed_base;
struct proto_incarnation runtimed_incarnation;
char			*runtimed_state_dir;
struct store		*runtimed_store;
struct store_writer	*runtimed_writer;
int			 runtimed_log_level;


static int		 runtimed_stopping;
static int64_t		 runtimed_stop_deadline;
static int		 runtimed_killed;
static struct event	*runtimed_stop_timer;

static __dead void	runtimed_usage(int);
static void	runtimed_cleanup(void);
static void	runtimed_stop_check(evutil_socket_t, short, void *);
static void	runtimed_signal(evutil_socket_t, short, void *);
static void	runtimed_report(int, const char *, ...);
static void	runtimed_detach(void);
static int	runtimed_serve(const char *, int, int, int);
static int	runtimed_daemonize(const char *, int);
static int	runtimed_ctl(const char *, const char *);
static int	runtimed_number(const char *, int, int);

static __dead void
runtimed_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed [-DhqVv] [-S socket] [-s statedir] "
	    "[status | stop]\n"
	    "  -D            stay in the foreground, log to stderr\n"
	    "  -q, --quiet   log errors only, no warnings\n"
	    "  -v, --verbose more logging (repeat for debug)\n"
	    "  -S socket     socket path (default $RUNTIMED_SOCKET, else\n"
	    "                $XDG_RUNTIME_DIR/runtimed/runtimed.sock)\n"
	    "  -s statedir   state directory (default "
	    "$RUNTIMED_STATE_DIR)\n"
	    "  --kernel-keepalive SECS  keep a kernel SECS after its last "
	    "client left\n"
	    "                (default 30, $RUNTIMED_KERNEL_KEEPALIVE)\n"
	    "  --warm-pool N kernels kept started for new notebooks "
	    "(default 1,\n"
	    "                $RUNTIMED_WARM_POOL; 0 disables)\n"
	    "  --no-autosave           do not save file-backed notebooks "
	    "by themselves\n"
	    "  --autosave-delay SECS   autosave this long after the last "
	    "change (2)\n"
	    "  --room-grace SECS       unload rooms idle this long (60)\n"
	    "  status        show the running daemon\n"
	    "  stop          stop the running daemon\n");
	exit(status);
}

/* Last-resort cleanup on fatal(): leave no agents or socket behind. */
static void
runtimed_cleanup(void)
{
	room_kernel_kill_all();
	server_unlink_socket();
}

static void
runtimed_stop_check(evutil_socket_t fd, short events, void *arg)
{
	struct timeval	tv = { 0, 100000 };

	room_kernel_reap();
	if (room_kernel_processes() == 0) {
		event_base_loopbreak(runtimed_base);
		return;
	}
	if (util_mono_ms() >= runtimed_stop_deadline) {
		if (runtimed_killed) {
			event_base_loopbreak(runtimed_base);
			return;
		}
		room_kernel_kill_all();
		runtimed_killed = 1;
		runtimed_stop_deadline = util_mono_ms() + 1000;
	}
	evtimer_add(runtimed_stop_timer, &tv);
}

/*
 * Graceful stop: no new clients, every kernel shut down through its
 * agent, bounded wait for the agents, then SIGKILL for stragglers.
 */
void
runtimed_stop(void)
{
	struct timeval	tv = { 0, 50000 };

	if (runtimed_stopping)
		return;
	runtimed_stopping = 1;
	log_info("stopping");
	server_activate_notify("STOPPING=1");
	server_stop_accepting();
	server_client_free_all();
	kernel_pool_stop();
	room_kernel_shutdown_all();
	runtimed_stop_deadline = util_mono_ms() + RUNTIMED_STOP_GRACE_MS;
	runtimed_stop_timer = evtimer_new(runtimed_base, runtimed_stop_check,
	    NULL);
	evtimer_add(runtimed_stop_timer, &tv);
}

static void
runtimed_signal(evutil_socket_t sig, short events, void *arg)
{
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		runtimed_stop();
		break;
	case SIGCHLD:
		room_kernel_reap();
		break;
	}
}

/* Tell the starting process how it went ("R", "A<pid>", "E<message>"). */
static void
runtimed_report(int fd, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	ssize_t	 n;

	if (fd == -1)
		return;
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	n = write(fd, msg, strlen(msg));
	(void)n;
	free(msg);
	close(fd);
}

/*
 * Let go of whoever started us: stdin from /dev/null, stdout and stderr
 * to our log (and to each new one after a rotation), before any child is
 * started, so no agent holds the launcher's pipe ("runtimed 2>&1 | cat"
 * returns) or the log of the worker that started us on demand.
 */
static void
runtimed_detach(void)
{
	int	fd;

	if ((fd = open("/dev/null", O_RDONLY)) != -1) {
		if (fd != 0) {
			dup2(fd, 0);
			close(fd);
		}
	}
	if (log_path() != NULL)
		log_capture(1);
	else if ((fd = open("/dev/null", O_WRONLY)) != -1) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

static int
runtimed_serve(const char *sock, int foreground, int level, int ready_fd)
{
	struct event	*ev_term, *ev_int, *ev_chld;
	char		*cause = NULL, *logpath;
	pid_t		 other;
	int		 rc;

	server_activate_notify_init();
	setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1", 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* Past a file size limit, writes fail (EFBIG) like a full disk. */
	signal(SIGXFSZ, SIG_IGN);

	/* Everything we create is private; the user's umask is kept. */
	util_umask_private();
	if (sockdir_check_named("state directory", runtimed_state_dir, 1,
	    &cause) != 0) {
		if (foreground)
			fprintf(stderr, "runtimed: %s\n", cause);
		runtimed_report(ready_fd, "Eruntimed: %s", cause);
		free(cause);
		return (1);
	}
	runtimed_log_level = level;
	xasprintf(&logpath, "%s/runtimed.log", runtimed_state_dir);
	log_open("runtimed", level, foreground ? NULL : logpath);
	/* Still on the starter's stderr: say why there will be no log. */
	if (!foreground && log_path() == NULL)
		log_warn("no log: cannot open %s (a symbolic link is not "
		    "followed; remove it)", logpath);
	sockdir_private_files(runtimed_state_dir);
	if (!foreground)
		runtimed_detach();
	free(logpath);

	runtimed_base = event_base_new();
	if (runtimed_base == NULL)
		fatalx("event_base_new failed");
	runtimed_incarnation.pid = getpid();
	runtimed_incarnation.started_at = util_now_us();
	snprintf(runtimed_incarnation.version,
	    sizeof runtimed_incarnation.version, "%s", RUNTIMED_VERSION);

	rc = server_start(sock, &cause, &other);
	if (rc == 1) {
		if (foreground)
			printf("runtimed: already running (pid %ld)\n",
			    (long)other);
		runtimed_report(ready_fd, "A%ld", (long)other);
		return (0);
	}
	if (rc != 0) {
		if (foreground)
			fprintf(stderr, "runtimed: %s\n", cause);
		runtimed_report(ready_fd, "Eruntimed: %s", cause);
		free(cause);
		return (1);
	}
	fatal_set_cleanup(runtimed_cleanup);
	/* The lock is ours: a daemon before us may have tidied our log. */
	log_follow();

	/* Durable state: opened once the lock is ours, so one writer. */
	if ((runtimed_store = store_open(runtimed_state_dir, &cause)) == NULL) {
		if (foreground)
			fprintf(stderr, "runtimed: %s\n", cause);
		runtimed_report(ready_fd, "Eruntimed: %s", cause);
		fatalx("%s", cause);
	}
	if (store_damage(runtimed_store) != NULL)
		runtimed_warn("%s", store_damage(runtimed_store));
	runtimed_writer = store_writer_create(runtimed_store, runtimed_base);
	room_start();

	ev_term = evsignal_new(runtimed_base, SIGTERM, runtimed_signal, NULL);
	ev_int = evsignal_new(runtimed_base, SIGINT, runtimed_signal, NULL);
	ev_chld = evsignal_new(runtimed_base, SIGCHLD, runtimed_signal, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_chld, NULL);

	log_info("started, pid %ld, version %s, state %s", (long)getpid(),
	    RUNTIMED_VERSION, runtimed_state_dir);
	kernel_pool_fill();
	runtimed_report(ready_fd, "R");
	server_activate_notify("READY=1");

	event_base_dispatch(runtimed_base);

	room_kernel_reap();
	server_shutdown_listener();
	server_unlink_socket();
	room_free_all();
	room_exec_flush();
	store_writer_free(runtimed_writer);
	runtimed_writer = NULL;
	store_close(runtimed_store);
	runtimed_store = NULL;
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_chld);
	if (runtimed_stop_timer != NULL)
		event_free(runtimed_stop_timer);
	log_info("stopped");
	log_tidy();
	return (0);
}

/* Fork; the parent exits when the child listens (or says why not). */
static int
runtimed_daemonize(const char *sock, int level)
{
	char	buf[512];
	ssize_t	n, len = 0;
	pid_t	pid;
	int	pfd[2], fd;

	if (pipe2(pfd, O_CLOEXEC) != 0) {
		fprintf(stderr, "runtimed: pipe: %s\n", strerror(errno));
		return (1);
	}
	switch (pid = fork()) {
	case -1:
		fprintf(stderr, "runtimed: fork: %s\n", strerror(errno));
		return (1);
	case 0:
		close(pfd[0]);
		setsid();
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			close(fd);
		}
		exit(runtimed_serve(sock, 0, level, pfd[1]));
	}
	close(pfd[1]);
	while (len < (ssize_t)sizeof buf - 1) {
		n = read(pfd[0], buf + len, sizeof buf - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(pfd[0]);
	switch (buf[0]) {
	case 'R':
		return (0);
	case 'A':
		printf("runtimed: already running (pid %s)\n", buf + 1);
		return (0);
	case 'E':
		fprintf(stderr, "%s\n", buf + 1);
		return (1);
	}
	fprintf(stderr, "runtimed: the daemon failed to start\n");
	return (1);
}

/* status and stop: runtimectl's (runtimectl/ctl-status.c, ctl-stop.c). */
static int
runtimed_ctl(const char *sock, const char *cmd)
{
	struct ctl_ctx	ctx;

	memset(&ctx, 0, sizeof ctx);
	ctx.socket = sock;
	ctx.state_dir = runtimed_state_dir;
	if (strcmp(cmd, "status") == 0)
		return (ctl_status(&ctx));
	return (ctl_stop(&ctx));
}

/* A decimal number from min to max, or -1. */
static int
runtimed_number(const char *s, int min, int max)
{
	char	*end;
	long	 n;

	if (*s == '\0')
		return (-1);
	n = strtol(s, &end, 10);
	if (*end != '\0' || n < min || n > max)
		return (-1);
	return ((int)n);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-autosave", no_argument, NULL, 'N' },
		{ "autosave-delay", required_argument, NULL, 'A' },
		{ "room-grace", required_argument, NULL, 'G' },
		{ "kernel-keepalive", required_argument, NULL, 'K' },
		{ "warm-pool", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*env;
	char	*sock = NULL, *end;
	double	 secs;
	int	 ch, rc, foreground = 0, level = LOG_LEVEL_WARN;

	if ((env = getenv("RUNTIMED_KERNEL_KEEPALIVE")) != NULL &&
	    runtimed_number(env, 0, 86400) >= 0)
		room_kernel_keepalive = runtimed_number(env, 0, 86400);
	if ((env = getenv("RUNTIMED_WARM_POOL")) != NULL &&
	    runtimed_number(env, 0, 16) >= 0)
		kernel_pool_set_size(runtimed_number(env, 0, 16));
	while ((ch = getopt_long(argc, argv, "DhqS:s:Vv", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'D':
			foreground = 1;
			break;
		case 'h':
			runtimed_usage(0);
		case 'S':
			free(sock);
			sock = xstrdup(optarg);
			break;
		case 's':
			free(runtimed_state_dir);
			runtimed_state_dir = xstrdup(optarg);
			break;
		case 'N':
			room_autosave_set(0, -1);
			break;
		case 'A':
		case 'G':
			secs = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || secs < 0 ||
			    secs > 86400) {
				fprintf(stderr, "runtimed: --%s: not a number "
				    "of seconds: %s\n", ch == 'A' ?
				    "autosave-delay" : "room-grace", optarg);
				return (2);
			}
			if (ch == 'A')
				room_autosave_set(1, (int64_t)(secs * 1000));
			else
				room_set_grace((int64_t)(secs * 1000));
			break;
		case 'V':
			printf("runtimed %s\n", RUNTIMED_VERSION);
			return (0);
		case 'K':
			if ((rc = runtimed_number(optarg, 0, 86400)) < 0) {
				fprintf(stderr, "runtimed: --kernel-keepalive: "
				    "0 to 86400 seconds\n");
				return (2);
			}
			room_kernel_keepalive = rc;
			break;
		case 'P':
			if ((rc = runtimed_number(optarg, 0, 16)) < 0) {
				fprintf(stderr, "runtimed: --warm-pool: 0 to "
				    "16 kernels\n");
				return (2);
			}
			kernel_pool_set_size(rc);
			break;
		case 'q':
		case 'v':
			level = log_level_step(level, ch);
			break;
		default:
			runtimed_usage(2);
		}
	}
	argc -= optind;
	argv += optind;
	if (sock == NULL)
		sock = sockdir_socket_path();
	if (runtimed_state_dir == NULL)
		runtimed_state_dir = sockdir_state_path();

	if (argc > 1)
		runtimed_usage(2);
	if (argc == 1 && (strcmp(argv[0], "status") == 0 ||
	    strcmp(argv[0], "stop") == 0))
		rc = runtimed_ctl(sock, argv[0]);
	else if (argc == 1 && strcmp(argv[0], "start") != 0)
		runtimed_usage(2);
	else if (foreground)
		rc = runtimed_serve(sock, 1, level, -1);
	else
		rc = runtimed_daemonize(sock, level);
	free(sock);
	free(runtimed_state_dir);
	return (rc);
}
