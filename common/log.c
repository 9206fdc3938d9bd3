/* SPDX-License-Identifier: ISC */
/*
 * log.c: one log per process, to stderr or a file.  Never stdout: in the
 * proxy and worker stdout may be the protocol.
 *
 * A log file is rotated by size: before a line, once it is past the limit
 * (LOG_ROTATE_BYTES, or RUNTIMED_LOG_MAX_BYTES), NAME.2 becomes NAME.3,
 * NAME.1 NAME.2, NAME NAME.1, and a fresh NAME is opened; the oldest
 * generation (LOG_ROTATE_KEEP) is dropped.  Several processes may write
 * one file (the daemon and its agents, a proxy's successive workers),
 * each through its own descriptor, so any of them may rotate: under an
 * flock on the old file it renames only if the name still is that file,
 * else someone rotated first and it just opens the new one.  A writer
 * whose file was renamed away sees that on its next line, since a
 * rotated file is past the limit.  Descriptors inherited without log.c
 * (a child's stderr) keep writing to the file they had; log_capture
 * moves our fd 2 (and 1) to each new file, so children started later
 * get it.
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* NAME.1 .. NAME.9: one digit, as runtimectl logs reads them. */
#if LOG_ROTATE_KEEP < 1 || LOG_ROTATE_KEEP > 9
#error "LOG_ROTATE_KEEP is 1 to 9"
#endif

static int		 log_fd = -1;	/* -1: stderr */
static char		*log_file;	/* the path of log_fd */
static int		 log_capture_fds;	/* 1: fds 1 and 2; 2: fd 2 */
static int		 log_reopen_failed;
static off_t		 log_max_bytes = LOG_ROTATE_BYTES;
static int		 log_level = LOG_LEVEL_WARN;
static char		 log_name[32] = "runtimed";
static void		(*log_cleanup)(void);

static int	log_open_file(const char *);
static void	log_set_level(int);
static off_t	log_limit(void);
static void	log_capture_apply(void);
static void	log_shift(void);
static void	log_rotate(void);
static void	log_vwrite(const char *, const char *, va_list, const char *);

/* Logs hold notebook paths and errors: ours only (0600), no symlink. */
static int
log_open_file(const char *path)
{
	return (open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600));
}

/* RUNTIMED_LOG_MAX_BYTES: a positive number of bytes, else the default. */
static off_t
log_limit(void)
{
	const char	*s = getenv("RUNTIMED_LOG_MAX_BYTES");
	char		*end;
	long long	 n;

	if (s == NULL || *s == '\0')
		return (LOG_ROTATE_BYTES);
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || n <= 0)
		return (LOG_ROTATE_BYTES);
	return ((off_t)n);
}

/* Open the log: name prefixes each line; path NULL means stderr. */
void
log_open(const char *name, int level, const char *path)
{
	int	fd;

	snprintf(log_name, sizeof log_name, "%s", name);
	log_set_level(level);
	log_max_bytes = log_limit();
	if (path == NULL || (fd = log_open_file(path)) == -1)
		return;
	if (log_fd != -1)
		close(log_fd);
	free(log_file);
	log_file = xstrdup(path);
	log_fd = fd;
}

/* The log file's path, or NULL when the log is stderr. */
const char *
log_path(void)
{
	return (log_fd != -1 ? log_file : NULL);
}

static void
log_capture_apply(void)
{
	if (log_fd == -1 || log_capture_fds == 0)
		return;
	if (log_capture_fds == 1)
		dup2(log_fd, 1);
	dup2(log_fd, 2);
}

/*
 * Make fd 2 (and fd 1 if stdout_too) the log file, now and after every
 * rotation: stray writes and the children started later go there too.
 */
void
log_capture(int stdout_too)
{
	log_capture_fds = stdout_too ? 1 : 2;
	log_capture_apply();
}

/* Each -v raises the level, each -q lowers it: kept within the enum. */
static void
log_set_level(int level)
{
	if (level < LOG_LEVEL_ERROR)
		level = LOG_LEVEL_ERROR;
	if (level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_level = level;
}

/* The flag that gives a child our level ("-q", "-v", "-vv"), or NULL. */
const char *
log_level_flag(int level)
{
	if (level <= LOG_LEVEL_ERROR)
		return ("-q");
	if (level == LOG_LEVEL_INFO)
		return ("-v");
	if (level >= LOG_LEVEL_DEBUG)
		return ("-vv");
	return (NULL);
}

/* The level after a -q (quieter) or -v (more verbose) on the command line. */
int
log_level_step(int level, int ch)
{
	if (ch == 'q' && level > LOG_LEVEL_ERROR)
		level--;
	else if (ch == 'v' && level < LOG_LEVEL_DEBUG)
		level++;
	return (level);
}

/*
 * At exit: a log file nothing was written to is not kept.  Under the
 * flock rotation takes, and only if the name still is our file.  A
 * daemon that starts meanwhile opened the same file; it calls
 * log_follow once it holds the daemon lock, which we give up after this.
 */
void
log_tidy(void)
{
	struct stat	sb, nb;

	if (log_fd == -1 || flock(log_fd, LOCK_EX) != 0)
		return;
	if (fstat(log_fd, &sb) == 0 && sb.st_size == 0 &&
	    lstat(log_file, &nb) == 0 && nb.st_dev == sb.st_dev &&
	    nb.st_ino == sb.st_ino)
		unlink(log_file);
	flock(log_fd, LOCK_UN);
}

/* Open the log's path again if it no longer names our file (tidied). */
void
log_follow(void)
{
	struct stat	sb, nb;
	int		fd;

	if (log_fd == -1 || fstat(log_fd, &sb) != 0)
		return;
	if (lstat(log_file, &nb) == 0 && nb.st_dev == sb.st_dev &&
	    nb.st_ino == sb.st_ino)
		return;
	if ((fd = log_open_file(log_file)) == -1)
		return;
	close(log_fd);
	log_fd = fd;
	log_capture_apply();
}

void
log_close(void)
{
	if (log_fd != -1)
		close(log_fd);
	log_fd = -1;
	free(log_file);
	log_file = NULL;
}

/* Shift NAME.1 .. NAME.(KEEP-1) up one and NAME to NAME.1. */
static void
log_shift(void)
{
	char	from[PATH_MAX], to[PATH_MAX];
	int	i;

	for (i = LOG_ROTATE_KEEP - 1; i >= 1; i--) {
		snprintf(from, sizeof from, "%s.%d", log_file, i);
		snprintf(to, sizeof to, "%s.%d", log_file, i + 1);
		rename(from, to);
	}
	snprintf(to, sizeof to, "%s.1", log_file);
	rename(log_file, to);
}

/* Past the limit: rotate, or follow whoever rotated first (see top). */
static void
log_rotate(void)
{
	struct stat	 sb, nb;
	int		 fd, saved = errno;

	if (fstat(log_fd, &sb) != 0 || sb.st_size < log_max_bytes)
		return;
	/* NAME.N must fit, or a shortened name would be renamed over. */
	if (strlen(log_file) + 3 >= PATH_MAX)
		return;
	if (flock(log_fd, LOCK_EX) != 0)
		return;
	if (lstat(log_file, &nb) == 0 && nb.st_dev == sb.st_dev &&
	    nb.st_ino == sb.st_ino)
		log_shift();
	fd = log_open_file(log_file);
	flock(log_fd, LOCK_UN);
	if (fd == -1) {
		/* Keep writing where we were; say so once. */
		if (!log_reopen_failed)
			dprintf(log_fd, "%s[%ld] warn: cannot open %s: %s\n",
			    log_name, (long)getpid(), log_file,
			    strerror(errno));
		log_reopen_failed = 1;
		errno = saved;
		return;
	}
	log_reopen_failed = 0;
	close(log_fd);
	log_fd = fd;
	log_capture_apply();
	errno = saved;
}

/* One write(2) per line, so lines of writers sharing a file never mix. */
static void
log_vwrite(const char *level, const char *fmt, va_list ap, const char *tail)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32], pre[128], buf[4096], *line = buf;
	va_list		 ap2;
	size_t		 n, size, len;
	ssize_t		 w;
	int		 m, fd;

	/*
	 * Rotate before a line, not after: a file is never left empty by a
	 * rotation, so the last line a process writes is not tidied away.
	 */
	if (log_fd != -1)
		log_rotate();
	fd = log_fd != -1 ? log_fd : 2;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	m = snprintf(pre, sizeof pre, "%s.%03ld %s[%ld] %s: ", when,
	    ts.tv_nsec / 1000000, log_name, (long)getpid(), level);
	n = m < 0 ? 0 : (size_t)m < sizeof pre ? (size_t)m : sizeof pre - 1;
	va_copy(ap2, ap);
	m = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	size = n + (m < 0 ? 0 : (size_t)m) + 2;
	if (tail != NULL)
		size += strlen(tail) + 2;
	/* Too long for the stack: a buffer that fits, else cut short. */
	if (size > sizeof buf && (line = malloc(size)) == NULL) {
		line = buf;
		size = sizeof buf;
	} else if (size <= sizeof buf)
		size = sizeof buf;
	memcpy(line, pre, n);
	vsnprintf(line + n, size - n, fmt, ap);
	len = n + strlen(line + n);
	if (tail != NULL && len + 1 < size) {
		snprintf(line + len, size - len, ": %s", tail);
		len += strlen(line + len);
	}
	if (len > size - 2)
		len = size - 2;
	line[len++] = '\n';
	w = write(fd, line, len);
	(void)w;
	if (line != buf)
		free(line);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < LOG_LEVEL_WARN)
		return;
	va_start(ap, fmt);
	log_vwrite("warn", fmt, ap, NULL);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	if (log_level < LOG_LEVEL_WARN)
		return;
	va_start(ap, fmt);
	log_vwrite("warn", fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	log_vwrite("info", fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	log_vwrite("debug", fmt, ap, NULL);
	va_end(ap);
}

/* Each executable may set a hook that runs before a fatal exit. */
void
fatal_set_cleanup(void (*fn)(void))
{
	log_cleanup = fn;
}

void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_vwrite("fatal", fmt, ap, strerror(saved));
	va_end(ap);
	if (log_cleanup != NULL)
		log_cleanup();
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("fatal", fmt, ap, NULL);
	va_end(ap);
	if (log_cleanup != NULL)
		log_cleanup();
	exit(1);
}
