/* SPDX-License-Identifier: ISC */
/*
 * sticky.c: never follow a symbolic link another user planted in a
 * sticky directory others can write (/tmp), as Linux's
 * fs.protected_symlinks does, whatever that sysctl says.  A save, an
 * export or a transfer to /tmp/report.py would else write where
 * another local user's link points (their choice of our file).  The
 * kernel's check covers only links it follows itself; realpath and our
 * own resolution of dangling links (atomic_resolve) read links with
 * readlink, which it does not check.
 */

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define STICKY_LINKS	40	/* links followed, as Linux's MAXSYMLINKS */

static int	sticky_refuse(const char *, const char *, const struct stat *,
		    char **);

/*
 * May a link (lsb) in directory dir be followed?  Not if dir is sticky
 * and writable by others and the link is neither ours nor dir's owner's.
 */
static int
sticky_refuse(const char *dir, const char *link, const struct stat *lsb,
    char **cause)
{
	struct stat	dsb;

	if (stat(*dir == '\0' ? "/" : dir, &dsb) != 0)
		return (0);
	if ((dsb.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH) ||
	    lsb->st_uid == geteuid() || lsb->st_uid == dsb.st_uid)
		return (0);
	xasprintf(cause, "%s is a symbolic link of another user (uid %ld) "
	    "in the shared directory %s: not followed (as "
	    "fs.protected_symlinks does); use a path of your own", link,
	    (long)lsb->st_uid, *dir == '\0' ? "/" : dir);
	return (-1);
}

/*
 * Walk path as the kernel resolves it, link by link, and refuse (-1 with
 * *cause) if following it would go through another user's link in a
 * sticky directory others can write.  A part that does not exist ends
 * the walk (what would be created there is a plain name); a loop or a
 * link that cannot be read is left to the caller's own resolution to
 * report.  0 if nothing is refused.
 */
int
sticky_check(const char *path, char **cause)
{
	struct stat	 lsb;
	char		*cur, *rest, *next, *name, *slash, *cand, *buf;
	ssize_t		 n;
	int		 links = 0, rc = 0;

	if (*path == '/')
		cur = xstrdup("");
	else if ((cur = getcwd(NULL, 0)) == NULL)
		return (0);
	else if (strcmp(cur, "/") == 0)
		*cur = '\0';
	rest = xstrdup(path);
	buf = xmalloc(PATH_MAX + 1);
	name = rest;
	while (name != NULL && *name != '\0') {
		while (*name == '/')
			name++;
		if (*name == '\0')
			break;
		if ((slash = strchr(name, '/')) != NULL)
			*slash++ = '\0';
		if (strcmp(name, ".") == 0) {
			name = slash;
			continue;
		}
		if (strcmp(name, "..") == 0) {
			/* cur holds no links: ".." is lexical from here. */
			if ((next = strrchr(cur, '/')) != NULL)
				*next = '\0';
			name = slash;
			continue;
		}
		xasprintf(&cand, "%s/%s", cur, name);
		if (lstat(cand, &lsb) != 0) {
			free(cand);
			break;
		}
		if (!S_ISLNK(lsb.st_mode)) {
			free(cur);
			cur = cand;
			name = slash;
			continue;
		}
		if (sticky_refuse(cur, cand, &lsb, cause) != 0) {
			free(cand);
			rc = -1;
			break;
		}
		if (++links > STICKY_LINKS || (n = readlink(cand, buf,
		    PATH_MAX)) <= 0) {
			free(cand);
			break;
		}
		free(cand);
		buf[n] = '\0';
		/* The link's text, then what was left of the path. */
		xasprintf(&next, "%s/%s", buf, slash != NULL ? slash : "");
		free(rest);
		rest = name = next;
		if (*buf == '/')
			*cur = '\0';
	}
	free(buf);
	free(rest);
	free(cur);
	return (rc);
}
