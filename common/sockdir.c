/* SPDX-License-Identifier: ISC */
/*
 * sockdir.c: where the daemon's socket and state live, and the checks that
 * keep other users out (docs/files.md).
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static const char	*sockdir_home(void);
static int	sockdir_addr(const char *, struct sockaddr_un *);

static const char *
sockdir_home(void)
{
	const char	*home = getenv("HOME");
	struct passwd	*pw;

	if (home != NULL && *home == '/')
		return (home);
	if ((pw = getpwuid(getuid())) != NULL)
		return (pw->pw_dir);
	return ("/");
}

/* The socket path; caller frees. */
char *
sockdir_socket_path(void)
{
	const char	*env;
	char		*path;

	if ((env = getenv("RUNTIMED_SOCKET")) != NULL && *env != '\0')
		return (xstrdup(env));
	if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && *env == '/')
		xasprintf(&path, "%s/runtimed/runtimed.sock", env);
	else
		xasprintf(&path, "/tmp/runtimed-%ld/runtimed.sock",
		    (long)getuid());
	return (path);
}

/* The state directory; caller frees. */
char *
sockdir_state_path(void)
{
	const char	*env;
	char		*path;

	if ((env = getenv("RUNTIMED_STATE_DIR")) != NULL && *env != '\0')
		return (xstrdup(env));
	if ((env = getenv("XDG_STATE_HOME")) != NULL && *env == '/')
		xasprintf(&path, "%s/runtimed", env);
	else
		xasprintf(&path, "%s/.local/state/runtimed", sockdir_home());
	return (path);
}

/*
 * Check (and with create, make) a private directory: it must be a real
 * directory, not a symlink, owned by us, with no group or other access.
 * what names it in the message ("state directory"), which says the fix.
 */
int
sockdir_check_named(const char *what, const char *dir, int create,
    char **cause)
{
	struct stat	 sb;
	const char	*how;

	if (create && util_mkdir_private(dir, cause) != 0)
		return (-1);
	if (lstat(dir, &sb) != 0) {
		xasprintf(cause, "%s %s: %s", what, dir, strerror(errno));
		return (-1);
	}
	if (S_ISLNK(sb.st_mode)) {
		xasprintf(cause, "%s %s is a symbolic link: use the real "
		    "directory's path instead", what, dir);
		return (-1);
	}
	if (!S_ISDIR(sb.st_mode)) {
		xasprintf(cause, "%s %s is not a directory: choose another "
		    "path", what, dir);
		return (-1);
	}
	if (sb.st_uid != getuid()) {
		xasprintf(cause, "%s %s is owned by uid %ld, not by you "
		    "(uid %ld): remove it, or use a directory of your own",
		    what, dir, (long)sb.st_uid, (long)getuid());
		return (-1);
	}
	if ((sb.st_mode & 077) != 0) {
		if (sb.st_mode & 044)
			how = "readable";
		else if (sb.st_mode & 022)
			how = "writable";
		else
			how = "accessible";
		xasprintf(cause, "%s %s is %s by others (mode %04o): "
		    "chmod 700 %s", what, dir, how,
		    (unsigned)(sb.st_mode & 07777), dir);
		return (-1);
	}
	return (0);
}

/* sockdir_check_named for a directory of no particular role. */
int
sockdir_check_dir(const char *dir, int create, char **cause)
{
	return (sockdir_check_named("directory", dir, create, cause));
}

/*
 * Take group and other access off our regular files directly in dir
 * (earlier versions left the database and logs 0644).  Links and other
 * users' files are left alone.  Returns how many were changed.
 */
int
sockdir_private_files(const char *dir)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd, n = 0;

	if ((d = opendir(dir)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != getuid() || (sb.st_mode & 077) == 0)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd == -1)
			continue;
		if (fchmod(fd, sb.st_mode & 0700) == 0) {
			log_info("%s/%s: mode %04o made %04o", dir, de->d_name,
			    (unsigned)(sb.st_mode & 07777),
			    (unsigned)(sb.st_mode & 0700));
			n++;
		}
		close(fd);
	}
	closedir(d);
	return (n);
}

static int
sockdir_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa->sun_path) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	strcpy(sa->sun_path, path);
	return (0);
}

/* Bind and listen on path under umask 0177; the caller has removed any
 * stale socket first. */
int
sockdir_listen(const char *path, char **cause)
{
	struct sockaddr_un	sa;
	mode_t			old;
	int			fd;

	if (sockdir_addr(path, &sa) != 0) {
		xasprintf(cause, "socket path too long: %s", path);
		return (-1);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		umask(old);
		xasprintf(cause, "bind %s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	umask(old);
	if (listen(fd, 128) != 0) {
		xasprintf(cause, "listen %s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Connect to path; a blocking, close-on-exec fd or -1 with errno. */
int
sockdir_connect(const char *path)
{
	struct sockaddr_un	sa;
	int			fd, saved;

	if (sockdir_addr(path, &sa) != 0)
		return (-1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

/* The uid of the process at the other end; -1 if it cannot be known, in
 * which case the caller must refuse the peer. */
int
sockdir_peer_uid(int fd, uid_t *uid)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return (-1);
	if (len != sizeof cred)
		return (-1);
	*uid = cred.uid;
	return (0);
}
