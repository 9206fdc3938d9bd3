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
#include <stdint.h>
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

/*
 * Open path to read it without ever waiting on what it is: O_NONBLOCK,
 * so a FIFO or a device opens at once instead of waiting for a partner
 * (and the loop with it), then anything but a regular file is refused
 * and O_NONBLOCK cleared.  With UTIL_NOFOLLOW a symbolic link as the
 * last component is refused too.  The fd (sb filled), or -1 with
 * *cause set (caller frees).
 */
int
util_open_regular(const char *path, int flags, struct stat *sb,
    char **cause)
{
	int	fd, oflags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

	if (flags & UTIL_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	if ((fd = open(path, oflags)) == -1) {
		if (errno == ELOOP && (flags & UTIL_NOFOLLOW))
			xasprintf(cause, "%s is a symbolic link (not followed)",
			    path);
		else
			xasprintf(cause, "cannot open %s: %s", path,
			    strerror(errno));
		return (-1);
	}
	if (fstat(fd, sb) != 0) {
		xasprintf(cause, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	if (!S_ISREG(sb->st_mode)) {
		xasprintf(cause, "%s is not a regular file (it is %s)", path,
		    util_file_kind(sb->st_mode));
		close(fd);
		return (-1);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		xasprintf(cause, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/* What a file of this mode is, for a message. */
const char *
util_file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return ("a regular file");
	if (S_ISDIR(mode))
		return ("a directory");
	if (S_ISFIFO(mode))
		return ("a FIFO");
	if (S_ISSOCK(mode))
		return ("a socket");
	if (S_ISCHR(mode))
		return ("a character device");
	if (S_ISBLK(mode))
		return ("a block device");
	if (S_ISLNK(mode))
		return ("a symbolic link");
	return ("of an unknown kind");
}

/*
 * Read a regular file whole, at most max bytes: its size is checked
 * before anything is allocated, and a file that grows while it is read
 * is read to max + 1 bytes, never further.  *data is NUL-terminated;
 * the caller frees it.  flags as util_open_regular's.
 */
int
util_read_file_max(const char *path, int flags, size_t max, char **data,
    size_t *len, char **cause)
{
	struct stat	 sb;
	int		 fd, rc;

	if ((fd = util_open_regular(path, flags, &sb, cause)) == -1)
		return (-1);
	rc = util_read_fd_max(fd, path, &sb, max, data, len, cause);
	close(fd);
	return (rc);
}

/* util_read_file_max on an open regular file, from where it is. */
int
util_read_fd_max(int fd, const char *path, const struct stat *sb,
    size_t max, char **data, size_t *len, char **cause)
{
	char		*buf;
	size_t		 off = 0, size;
	ssize_t		 n;

	if (sb->st_size < 0 || (uint64_t)sb->st_size > max) {
		xasprintf(cause, "%s is %lld bytes, over the cap of %zu",
		    path, (long long)sb->st_size, max);
		return (-1);
	}
	size = (size_t)sb->st_size;
	buf = xmalloc(size + 1);
	for (;;) {
		if (off == size) {
			/* It may have grown: on, but never past max + 1. */
			if (size > max)
				break;
			size = size > max / 2 ? max + 1 : size * 2 + 4096;
			if (size > max)
				size = max + 1;
			buf = xreallocarray(buf, 1, size + 1);
		}
		n = read(fd, buf + off, size - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			xasprintf(cause, "cannot read %s: %s", path,
			    strerror(errno));
			free(buf);
			return (-1);
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	if (off > max) {
		xasprintf(cause, "%s grew past the cap of %zu bytes while it "
		    "was read", path, max);
		free(buf);
		return (-1);
	}
	buf[off] = '\0';
	*data = buf;
	*len = off;
	return (0);
}

/* Read a whole file of at most UTIL_READ_MAX bytes (see above). */
int
util_read_file(const char *path, char **data, size_t *len, char **cause)
{
	return (util_read_file_max(path, 0, UTIL_READ_MAX, data, len, cause));
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
