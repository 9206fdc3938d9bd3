/* SPDX-License-Identifier: ISC */
/*
 * log.c: one log per process, to stderr or a file.  Never stdout: in the
 * proxy and worker stdout may be the protocol.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static FILE		*log_file;
static int		 log_level = LOG_LEVEL_WARN;
static char		 log_name[32] = "runtimed";
static void		(*log_cleanup)(void);

static void	log_vwrite(const char *, const char *, va_list, const char *);

/* Open the log: name prefixes each line; path NULL means stderr. */
void
log_open(const char *name, int level, const char *path)
{
	FILE	*f = NULL;
	int	 fd;

	snprintf(log_name, sizeof log_name, "%s", name);
	log_level = level;
	/* Logs hold notebook paths and errors: ours only (0600). */
	if (path != NULL && (fd = open(path, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0600)) != -1 && (f = fdopen(fd, "a")) == NULL)
		close(fd);
	if (f != NULL) {
		setvbuf(f, NULL, _IOLBF, 0);
		if (log_file != NULL && log_file != stderr)
			fclose(log_file);
		log_file = f;
	}
}

void
log_close(void)
{
	if (log_file != NULL && log_file != stderr)
		fclose(log_file);
	log_file = NULL;
}

static void
log_vwrite(const char *level, const char *fmt, va_list ap, const char *tail)
{
	FILE		*f = log_file != NULL ? log_file : stderr;
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	fprintf(f, "%s.%03ld %s[%ld] %s: ", when, ts.tv_nsec / 1000000,
	    log_name, (long)getpid(), level);
	vfprintf(f, fmt, ap);
	if (tail != NULL)
		fprintf(f, ": %s", tail);
	fputc('\n', f);
	fflush(f);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("warn", fmt, ap, NULL);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

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
