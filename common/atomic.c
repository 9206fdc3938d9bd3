/* SPDX-License-Identifier: ISC */
/*
 * atomic.c: replacing a file whole.  The new content goes to a temporary
 * file beside the target, which is fsynced and renamed over it, so a
 * crash leaves the old or the new file, never a torn one.
 *
 * The temporary file is in a directory others may be able to write, so
 * its name is unpredictable (64 random bits), it is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (a planted name is skipped, never followed or
 * truncated) and it is short whatever the target's name: ".rtd-", 16 hex
 * of the SHA-256 of the target's name (which file a leftover belongs to),
 * "-", 16 random hex, ".tmp".  See docs/decisions/009-temporary-files.md.
 * The hash and the random bytes come from atomic-crypto.c (libcrypto),
 * kept apart so a program that writes only private files of its own can
 * do without.
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define ATOMIC_PREFIX	".rtd-"
#define ATOMIC_SUFFIX	".tmp"
#define ATOMIC_HEX	16	/* hex digits of hash and random part */
#define ATOMIC_TRIES	16	/* names tried before giving up */
#define ATOMIC_LINKS	40	/* links followed, as Linux's MAXSYMLINKS */

struct atomic {
	char	*path;		/* the target, as given */
	char	*dir;
	char	*base;
	char	 tmp[ATOMIC_NAME_SIZE];
	int	 dfd;
	int	 fd;
	mode_t	 mode;		/* the mode the file ends with */
	int	 expect;	/* ATOMIC_ANY, _ABSENT or _SAME */
	dev_t	 exp_dev;	/* ATOMIC_SAME: the file expected */
	ino_t	 exp_ino;
	off_t	 exp_size;	/* -1: not compared */
	int64_t	 exp_mtime_ns;	/* -1: not compared */
};

static int	atomic_is_temp(const char *, const char *);
static int	atomic_matches(struct atomic *, const char *);
static int	atomic_swap_in(struct atomic *, char **);
static int	atomic_split(const char *, char **, char **, char **);

/* The temporary name for base with these random bytes. */
void
atomic_temp_name(const char *base, const unsigned char rnd[8],
    char out[ATOMIC_NAME_SIZE])
{
	char	tag[ATOMIC_TAG_SIZE], r[ATOMIC_HEX + 1];

	atomic_tag(base, tag);
	util_hex(rnd, ATOMIC_HEX / 2, r);
	snprintf(out, ATOMIC_NAME_SIZE, ATOMIC_PREFIX "%s-%s" ATOMIC_SUFFIX,
	    tag, r);
}

/* Is name one of our temporary names for the file whose tag is given? */
static int
atomic_is_temp(const char *name, const char *tag)
{
	const char	*p;

	if (strlen(name) != ATOMIC_NAME_SIZE - 1)
		return (0);
	if (strncmp(name, ATOMIC_PREFIX, strlen(ATOMIC_PREFIX)) != 0)
		return (0);
	p = name + strlen(ATOMIC_PREFIX);
	if (strncmp(p, tag, ATOMIC_HEX) != 0 || p[ATOMIC_HEX] != '-')
		return (0);
	p += ATOMIC_HEX + 1;
	if (strspn(p, "0123456789abcdef") != ATOMIC_HEX)
		return (0);
	return (strcmp(p + ATOMIC_HEX, ATOMIC_SUFFIX) == 0);
}

/* Split path into its directory and last name; -1 if it names no file. */
static int
atomic_split(const char *path, char **dir, char **base, char **cause)
{
	const char	*slash;

	if (*path == '\0' || path[strlen(path) - 1] == '/') {
		xasprintf(cause, "%s is not a file name", path);
		return (-1);
	}
	if ((slash = strrchr(path, '/')) == NULL) {
		*dir = xstrdup(".");
		*base = xstrdup(path);
	} else {
		*dir = slash == path ? xstrdup("/") :
		    xstrndup(path, (size_t)(slash - path));
		*base = xstrdup(slash + 1);
	}
	if (strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) {
		xasprintf(cause, "%s is not a file name", path);
		free(*dir);
		free(*base);
		return (-1);
	}
	return (0);
}

/*
 * Start replacing path: a new temporary file beside it, open for writing
 * and reading back what was written (atomic_fd).  The file ends with the mode path has now, or mode less
 * the user's umask if there is none.  Finish with atomic_commit, or
 * atomic_free to give up.  NULL with *cause set on failure.
 */
struct atomic *
atomic_create(const char *path, mode_t mode, char **cause)
{
	struct atomic	*a;
	struct stat	 sb;
	unsigned char	 rnd[ATOMIC_HEX / 2];
	int		 i;

	a = xcalloc(1, sizeof *a);
	a->fd = a->dfd = -1;
	if (atomic_split(path, &a->dir, &a->base, cause) != 0) {
		free(a);
		return (NULL);
	}
	a->path = xstrdup(path);
	a->dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dfd == -1) {
		xasprintf(cause, "cannot open directory %s: %s", a->dir,
		    strerror(errno));
		goto fail;
	}
	if (fstatat(a->dfd, a->base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode))
		a->mode = sb.st_mode & 07777;
	else
		a->mode = mode & ~util_user_umask() & 07777;
	for (i = 0; i < ATOMIC_TRIES; i++) {
		if (atomic_random(rnd, sizeof rnd) != 0) {
			xasprintf(cause, "cannot write %s: no random bytes "
			    "for a temporary name", path);
			goto fail;
		}
		atomic_temp_name(a->base, rnd, a->tmp);
		a->fd = openat(a->dfd, a->tmp, O_RDWR | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (a->fd != -1)
			break;
		if (errno != EEXIST) {
			xasprintf(cause, "cannot create a temporary file in "
			    "%s: %s", a->dir, strerror(errno));
			goto fail;
		}
	}
	if (a->fd == -1) {
		xasprintf(cause, "cannot create a temporary file in %s: %d "
		    "random names were taken", a->dir, ATOMIC_TRIES);
		goto fail;
	}
	/* Held until the rename, so atomic_sweep leaves a live save be. */
	flock(a->fd, LOCK_EX | LOCK_NB);
	return (a);

fail:
	*a->tmp = '\0';
	atomic_free(a);
	return (NULL);
}

/*
 * Take up again the temporary tmp (a name only, beside path) that an
 * earlier process left: only one of our names for path, a regular file
 * (never a link: O_NOFOLLOW), ours, with no other link, and not locked
 * by a live writer.  It is then as atomic_create left it (mode as there), open for
 * writing and reading back (its offset at 0).  NULL with *cause set if
 * it is not so (errno EWOULDBLOCK if a live writer holds it); nothing is
 * removed then.
 */
struct atomic *
atomic_adopt(const char *path, const char *tmp, mode_t mode, char **cause)
{
	struct atomic	*a;
	struct stat	 sb;
	char		 tag[ATOMIC_TAG_SIZE];

	a = xcalloc(1, sizeof *a);
	a->fd = a->dfd = -1;
	if (atomic_split(path, &a->dir, &a->base, cause) != 0) {
		free(a);
		return (NULL);
	}
	a->path = xstrdup(path);
	atomic_tag(a->base, tag);
	if (!atomic_is_temp(tmp, tag)) {
		xasprintf(cause, "%s is not a temporary name of %s", tmp,
		    path);
		goto fail;
	}
	if ((a->dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		xasprintf(cause, "cannot open directory %s: %s", a->dir,
		    strerror(errno));
		goto fail;
	}
	a->fd = openat(a->dfd, tmp, O_RDWR | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (a->fd == -1) {
		xasprintf(cause, "cannot open %s/%s: %s", a->dir, tmp,
		    strerror(errno));
		goto fail;
	}
	if (fstat(a->fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_nlink != 1) {
		xasprintf(cause, "%s/%s is not a regular file of ours with "
		    "one link", a->dir, tmp);
		goto fail;
	}
	if (flock(a->fd, LOCK_EX | LOCK_NB) != 0) {
		xasprintf(cause, "%s/%s is being written", a->dir, tmp);
		atomic_free(a);
		errno = EWOULDBLOCK;
		return (NULL);
	}
	if (fcntl(a->fd, F_SETFL, O_RDWR) == -1) {
		xasprintf(cause, "%s/%s: %s", a->dir, tmp, strerror(errno));
		goto fail;
	}
	snprintf(a->tmp, sizeof a->tmp, "%s", tmp);
	if (fstatat(a->dfd, a->base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode))
		a->mode = sb.st_mode & 07777;
	else
		a->mode = mode & ~util_user_umask() & 07777;
	return (a);

fail:
	*a->tmp = '\0';
	atomic_free(a);
	return (NULL);
}

/* The temporary file's name (in the target's directory). */
const char *
atomic_temp(struct atomic *a)
{
	return (a->tmp);
}

/* The temporary file's descriptor, to write the content to. */
int
atomic_fd(struct atomic *a)
{
	return (a->fd);
}

/* Give up: remove the temporary file.  NULL is fine. */
void
atomic_free(struct atomic *a)
{
	if (a == NULL)
		return;
	if (*a->tmp != '\0')
		unlinkat(a->dfd, a->tmp, 0);
	if (a->fd != -1)
		close(a->fd);
	if (a->dfd != -1)
		close(a->dfd);
	free(a->path);
	free(a->dir);
	free(a->base);
	free(a);
}

/*
 * Commit only if the target is then as given: ATOMIC_ABSENT (not there),
 * ATOMIC_SAME (still the file dev/ino, and of this size and mtime unless
 * -1), or ATOMIC_ANY (the default).  An editor that renames its own
 * version over the file while a long save runs is so never replaced.
 */
void
atomic_expect(struct atomic *a, int expect, dev_t dev, ino_t ino,
    off_t size, int64_t mtime_ns)
{
	a->expect = expect;
	a->exp_dev = dev;
	a->exp_ino = ino;
	a->exp_size = size;
	a->exp_mtime_ns = mtime_ns;
}

/* Is the directory entry name the file a->expect expects? */
static int
atomic_matches(struct atomic *a, const char *name)
{
	struct stat	sb;

	if (fstatat(a->dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return (0);
	return (sb.st_dev == a->exp_dev && sb.st_ino == a->exp_ino &&
	    (a->exp_size == -1 || sb.st_size == a->exp_size) &&
	    (a->exp_mtime_ns == -1 || (int64_t)sb.st_mtim.tv_sec *
	    1000000000 + sb.st_mtim.tv_nsec == a->exp_mtime_ns));
}

/*
 * Put the temporary in the target's place only if the target is what
 * atomic_expect said, in as near one step as the kernel gives: with
 * ATOMIC_ABSENT a rename that never replaces (RENAME_NOREPLACE); with
 * ATOMIC_SAME the two names exchanged (RENAME_EXCHANGE), the file now
 * at the temporary name checked, and exchanged back if it is not the
 * one expected, so whatever was put there meanwhile is back at its
 * name.  0; ATOMIC_CHANGED with *cause (nothing replaced); or -1 with
 * errno EINVAL when the file system has neither, to check and rename.
 */
static int
atomic_swap_in(struct atomic *a, char **cause)
{
	struct stat	sb, tsb;

	if (a->expect == ATOMIC_ABSENT) {
		if (renameat2(a->dfd, a->tmp, a->dfd, a->base,
		    RENAME_NOREPLACE) == 0)
			return (0);
		if (errno != EEXIST)
			return (-1);
		xasprintf(cause, "%s was created on disk during the save; "
		    "nothing was replaced (save with force to overwrite it)",
		    a->path);
		return (ATOMIC_CHANGED);
	}
	if (renameat2(a->dfd, a->tmp, a->dfd, a->base,
	    RENAME_EXCHANGE) != 0) {
		if (errno != ENOENT)
			return (-1);
		/* Gone meanwhile: writing it back loses nothing. */
		a->expect = ATOMIC_ABSENT;
		return (atomic_swap_in(a, cause));
	}
	if (atomic_matches(a, a->tmp)) {
		/* The old file, now at the temporary name. */
		unlinkat(a->dfd, a->tmp, 0);
		*a->tmp = '\0';
		return (0);
	}
	/* Not the file we read: give the name back to what was there. */
	if (renameat2(a->dfd, a->tmp, a->dfd, a->base,
	    RENAME_EXCHANGE) != 0) {
		xasprintf(cause, "%s changed on disk during the save, and "
		    "putting it back failed: %s; the version found is at "
		    "%s/%s", a->path, strerror(errno), a->dir, a->tmp);
		*a->tmp = '\0';
		return (ATOMIC_CHANGED);
	}
	if (fstat(a->fd, &sb) != 0 || fstatat(a->dfd, a->tmp, &tsb,
	    AT_SYMLINK_NOFOLLOW) != 0 || tsb.st_ino != sb.st_ino ||
	    tsb.st_dev != sb.st_dev) {
		/* Changed twice: keep what is at the temporary name too. */
		xasprintf(cause, "%s changed on disk during the save (twice: "
		    "one version is at %s/%s); nothing of the save was kept",
		    a->path, a->dir, a->tmp);
		*a->tmp = '\0';
		return (ATOMIC_CHANGED);
	}
	xasprintf(cause, "%s changed on disk during the save; nothing was "
	    "replaced (save with force to overwrite it)", a->path);
	return (ATOMIC_CHANGED);
}

/*
 * Put the written file in place: mode, fsync, rename over the target
 * (a symlink there is replaced, not followed), fsync the directory.
 * Frees a, whatever happens; on failure the target is unchanged: -1,
 * or ATOMIC_CHANGED when it is not what atomic_expect said.
 */
int
atomic_commit(struct atomic *a, char **cause)
{
	int	rc, fallback;

	if (fchmod(a->fd, a->mode) != 0 || fsync(a->fd) != 0) {
		xasprintf(cause, "cannot write %s: %s", a->path,
		    strerror(errno));
		atomic_free(a);
		return (-1);
	}
	rc = -1;
	fallback = a->expect == ATOMIC_ANY;
	if (!fallback) {
		if ((rc = atomic_swap_in(a, cause)) == ATOMIC_CHANGED) {
			atomic_free(a);
			return (ATOMIC_CHANGED);
		}
		fallback = rc == -1 && errno == EINVAL;
	}
	if (fallback && a->expect != ATOMIC_ANY &&
	    faccessat(a->dfd, a->base, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (a->expect == ATOMIC_ABSENT || !atomic_matches(a, a->base))) {
		/* No exchange here (some file systems): check, then rename. */
		xasprintf(cause, "%s changed on disk during the save; nothing "
		    "was replaced (save with force to overwrite it)", a->path);
		atomic_free(a);
		return (ATOMIC_CHANGED);
	}
	if (fallback)
		rc = renameat(a->dfd, a->tmp, a->dfd, a->base);
	if (rc != 0) {
		xasprintf(cause, "cannot replace %s: %s", a->path,
		    strerror(errno));
		atomic_free(a);
		return (-1);
	}
	*a->tmp = '\0';
	fsync(a->dfd);
	atomic_free(a);
	return (0);
}

/* Replace path with len bytes of data (see atomic_create for mode). */
int
atomic_write(const char *path, const void *data, size_t len, mode_t mode,
    char **cause)
{
	struct atomic	*a;
	const char	*p = data;
	ssize_t		 n;

	if ((a = atomic_create(path, mode, cause)) == NULL)
		return (-1);
	while (len > 0) {
		if ((n = write(a->fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			xasprintf(cause, "cannot write %s: %s", path,
			    strerror(errno));
			atomic_free(a);
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (atomic_commit(a, cause));
}

/*
 * Remove what interrupted saves of path left: only names of our pattern
 * for this file, only regular files (not links) owned by us, and not
 * one a live save holds locked.  Returns how many were removed, -1 if
 * the directory cannot be read.
 */
int
atomic_sweep(const char *path)
{
	struct dirent	*de;
	struct stat	 sb, fsb;
	DIR		*d;
	char		*dir, *base, *cause = NULL, tag[ATOMIC_TAG_SIZE];
	int		 dfd, fd, n = 0;

	if (atomic_split(path, &dir, &base, &cause) != 0) {
		free(cause);
		return (-1);
	}
	atomic_tag(base, tag);
	free(base);
	d = NULL;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1 &&
	    (fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0)) != -1 &&
	    (d = fdopendir(fd)) == NULL)
		close(fd);
	if (d == NULL) {
		if (dfd != -1)
			close(dfd);
		free(dir);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (!atomic_is_temp(de->d_name, tag))
			continue;
		if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
			continue;
		fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd == -1)
			continue;
		if (fstat(fd, &fsb) == 0 && fsb.st_dev == sb.st_dev &&
		    fsb.st_ino == sb.st_ino &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    unlinkat(dfd, de->d_name, 0) == 0) {
			log_info("removed %s/%s, left by an interrupted save",
			    dir, de->d_name);
			n++;
		}
		close(fd);
	}
	closedir(d);
	close(dfd);
	free(dir);
	return (n);
}

/*
 * The file a save of path replaces: path itself, or when path is a
 * symbolic link, the end of its chain of links, whether that exists yet
 * or not (a dangling link is written through, as Jupyter does).  A
 * relative link is relative to its own directory.  Caller frees; NULL
 * with *cause set for a loop, or a link another user planted in a
 * sticky directory (sticky_check).
 */
char *
atomic_resolve(const char *path, char **cause)
{
	struct stat	 sb;
	char		*cur, *next, *buf, *slash;
	ssize_t		 n;
	int		 i;

	/* Another user's link in /tmp is never followed (sticky.c). */
	if (sticky_check(path, cause) != 0)
		return (NULL);
	cur = xstrdup(path);
	for (i = 0; lstat(cur, &sb) == 0 && S_ISLNK(sb.st_mode); i++) {
		if (i == ATOMIC_LINKS) {
			xasprintf(cause, "%s: too many levels of symbolic "
			    "links", path);
			free(cur);
			return (NULL);
		}
		buf = xmalloc(PATH_MAX + 1);
		if ((n = readlink(cur, buf, PATH_MAX + 1)) == -1 ||
		    n > PATH_MAX || n == 0) {
			xasprintf(cause, "cannot read the link %s: %s", cur,
			    n == -1 ? strerror(errno) : "too long or empty");
			free(buf);
			free(cur);
			return (NULL);
		}
		buf[n] = '\0';
		if (*buf == '/' || (slash = strrchr(cur, '/')) == NULL)
			next = xstrdup(buf);
		else
			xasprintf(&next, "%.*s/%s", (int)(slash - cur), cur,
			    buf);
		free(buf);
		free(cur);
		cur = next;
	}
	return (cur);
}
