/* SPDX-License-Identifier: ISC */
/*
 * util.c: clocks, ids, hex, the umask and small file utilities.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include "common.h"

static mode_t	util_umask_user = (mode_t)-1;

/* Write len bytes as lowercase hex into out (2 * len + 1 bytes). */
void
util_hex(const unsigned char *in, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * len] = '\0';
}

/* Wall clock in microseconds since the epoch. */
int64_t
util_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* Monotonic milliseconds, for timeouts and measurements. */
int64_t
util_mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* A random (version 4) UUID in lowercase text. */
void
util_uuid(char out[37])
{
	uuid_t	u;

	uuid_generate_random(u);
	uuid_unparse_lower(u, out);
}

/*
 * Keep the files we create private (umask 077: state, logs, blobs) and
 * remember the user's umask for the files that are theirs (notebooks,
 * exports) and for our children.  Call once, before any thread starts.
 */
void
util_umask_private(void)
{
	util_umask_user = umask(077);
}

/*
 * The user's umask; before util_umask_private, the process's (read by
 * setting 077 for a moment: a thread creating a file meanwhile gets a
 * stricter mode, never a looser one).
 */
mode_t
util_user_umask(void)
{
	mode_t	m;

	if (util_umask_user != (mode_t)-1)
		return (util_umask_user);
	m = umask(077);
	umask(m);
	return (m);
}

/* Read a whole file; *data is NUL-terminated and the caller frees it. */
int
util_read_file(const char *path, char **data, size_t *len, char **cause)
{
	struct stat	 sb;
	char		*buf;
	size_t		 off = 0;
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot open %s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s is not a regular file", path);
		close(fd);
		return (-1);
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	for (;;) {
		if (off == (size_t)sb.st_size) {
			/* The file may have grown; read until EOF. */
			buf = xreallocarray(buf, 1, off * 2 + 4097);
			sb.st_size = (off_t)(off * 2 + 4096);
		}
		n = read(fd, buf + off, (size_t)sb.st_size - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			xasprintf(cause, "cannot read %s: %s", path,
			    strerror(errno));
			free(buf);
			close(fd);
			return (-1);
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*data = buf;
	*len = off;
	return (0);
}

/* Create a directory 0700 (and its missing parents 0700). */
int
util_mkdir_private(const char *path, char **cause)
{
	char	*copy, *p;

	copy = xstrdup(path);
	for (p = copy + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
			xasprintf(cause, "cannot create %s: %s", copy,
			    strerror(errno));
			free(copy);
			return (-1);
		}
		*p = '/';
	}
	free(copy);
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		xasprintf(cause, "cannot create %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* realpath into a new string; NULL with errno set on failure. */
char *
util_realpath_new(const char *path)
{
	return (realpath(path, NULL));
}

int
util_set_cloexec(int fd)
{
	int	flags;

	if ((flags = fcntl(fd, F_GETFD)) == -1)
		return (-1);
	return (fcntl(fd, F_SETFD, flags | FD_CLOEXEC));
}

int
util_set_nonblock(int fd)
{
	int	flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return (-1);
	return (fcntl(fd, F_SETFL, flags | O_NONBLOCK));
}
