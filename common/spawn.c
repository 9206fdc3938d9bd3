/* SPDX-License-Identifier: ISC */
/*
 * spawn.c: finding our sibling executables and starting children with a
 * socketpair end at a fixed fd (3).
 */

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "common.h"

static int	spawn_is_exec(const char *);
static char	*spawn_self_dir(void);
static char	*spawn_relative(const char *, const char *);
static char	*spawn_join(const char *, const char *, const char *);
static char	**spawn_places(const char *, const char *);
static void	spawn_places_free(char **);
static void __dead	spawn_exec(const char *, char *const [], int, int, int);

static int
spawn_is_exec(const char *path)
{
	struct stat	sb;

	return (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0);
}

/* The directory of the running executable, symlinks resolved; or NULL. */
static char *
spawn_self_dir(void)
{
	char		 self[PATH_MAX], *slash;
#ifdef __APPLE__
	char		 raw[PATH_MAX];
	uint32_t	 size = sizeof raw;

	if (_NSGetExecutablePath(raw, &size) != 0 ||
	    realpath(raw, self) == NULL)
		return (NULL);
#else
	ssize_t		 n;

	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0)
		return (NULL);
	self[n] = '\0';
#endif
	if ((slash = strrchr(self, '/')) == NULL)
		return (NULL);
	*slash = '\0';
	return (xstrdup(self));
}

/*
 * The path from directory from to directory to, both absolute and as
 * configured ("../libexec/runtimed" from bindir); NULL if either has a
 * ".." we cannot reason about.  Caller frees.
 */
static char *
spawn_relative(const char *from, const char *to)
{
	const char	*f = from, *t = to, *fe, *te;
	char		*rel, *tmp;
	size_t		 flen, tlen;

	if (*from != '/' || *to != '/' || strstr(from, "..") != NULL ||
	    strstr(to, "..") != NULL)
		return (NULL);
	/* Skip the components the two share. */
	for (;;) {
		while (*f == '/')
			f++;
		while (*t == '/')
			t++;
		fe = f + strcspn(f, "/");
		te = t + strcspn(t, "/");
		flen = fe - f;
		tlen = te - t;
		if (flen == 0 || flen != tlen || memcmp(f, t, flen) != 0)
			break;
		f = fe;
		t = te;
	}
	rel = NULL;
	for (; *f != '\0'; f = fe) {
		while (*f == '/')
			f++;
		if (*f == '\0')
			break;
		fe = f + strcspn(f, "/");
		xasprintf(&tmp, "%s%s..", rel != NULL ? rel : "",
		    rel != NULL ? "/" : "");
		free(rel);
		rel = tmp;
	}
	if (*t != '\0') {
		xasprintf(&tmp, "%s%s%s", rel != NULL ? rel : "",
		    rel != NULL ? "/" : "", t);
		free(rel);
		rel = tmp;
	}
	if (rel == NULL)
		rel = xstrdup(".");
	return (rel);
}

/* dir/rel/name with each leading ".." of rel taken off dir. */
static char *
spawn_join(const char *dir, const char *rel, const char *name)
{
	char	*copy, *slash, *path;

	copy = xstrdup(dir);
	while (strncmp(rel, "..", 2) == 0 &&
	    (rel[2] == '/' || rel[2] == '\0') &&
	    (slash = strrchr(copy, '/')) != NULL && slash != copy) {
		*slash = '\0';
		rel += rel[2] == '/' ? 3 : 2;
	}
	if (*rel == '\0')
		xasprintf(&path, "%s/%s", copy, name);
	else
		xasprintf(&path, "%s/%s/%s", copy, rel, name);
	free(copy);
	return (path);
}

/*
 * The places name is looked for, in order, as a NULL-terminated array
 * (caller frees each and the array): each directory of
 * $RUNTIMED_LIBEXEC_DIR (a colon-separated list; tests point it into the
 * build tree); then beside our own executable; then where the install
 * layout puts it relative to our executable (bindir and pkglibexecdir
 * are the only two homes, so from one we look in the other), so a moved
 * tree works; then the configured directory.
 */
static char **
spawn_places(const char *name, const char *configured)
{
	const char	*env, *home;
	char		**v, *list, *dir, *last, *self, *rel;
	u_int		 n = 0, size = 8;

	v = xcalloc(size, sizeof *v);
	if ((env = getenv("RUNTIMED_LIBEXEC_DIR")) != NULL && *env != '\0') {
		list = xstrdup(env);
		for (dir = strtok_r(list, ":", &last); dir != NULL;
		    dir = strtok_r(NULL, ":", &last)) {
			if (n + 4 >= size) {
				v = xreallocarray(v, size * 2, sizeof *v);
				size *= 2;
			}
			xasprintf(&v[n++], "%s/%s", dir, name);
		}
		free(list);
	}
	if ((self = spawn_self_dir()) != NULL) {
		xasprintf(&v[n++], "%s/%s", self, name);
		home = strcmp(configured, RUNTIMED_BINDIR) == 0 ?
		    RUNTIMED_LIBEXECDIR : RUNTIMED_BINDIR;
		if ((rel = spawn_relative(home, configured)) != NULL &&
		    strcmp(rel, ".") != 0)
			v[n++] = spawn_join(self, rel, name);
		free(rel);
		free(self);
	}
	xasprintf(&v[n++], "%s/%s", configured, name);
	v[n] = NULL;
	return (v);
}

static void
spawn_places_free(char **v)
{
	u_int	i;

	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * Find executable name (see spawn_places for where), resolved on every
 * call so an upgraded install is picked up.  configured is RUNTIMED_BINDIR
 * or RUNTIMED_LIBEXECDIR.  Caller frees; NULL if not found, with *cause
 * (if not NULL) naming every path tried.
 */
char *
spawn_find(const char *name, const char *configured, char **cause)
{
	char	**v, *path = NULL, *tried, *tmp;
	u_int	  i;

	v = spawn_places(name, configured);
	for (i = 0; v[i] != NULL; i++) {
		if (spawn_is_exec(v[i])) {
			path = xstrdup(v[i]);
			break;
		}
	}
	if (path == NULL && cause != NULL) {
		tried = xstrdup(v[0]);
		for (i = 1; v[i] != NULL; i++) {
			xasprintf(&tmp, "%s, %s", tried, v[i]);
			free(tried);
			tried = tmp;
		}
		xasprintf(cause, "cannot find %s (tried %s); reinstall "
		    "runtimed or set RUNTIMED_LIBEXEC_DIR to its directory",
		    name, tried);
		free(tried);
	}
	spawn_places_free(v);
	return (path);
}

/* In the child: arrange fds and signals, then exec.  Reports errno on
 * errfd if exec fails. */
static void __dead
spawn_exec(const char *path, char *const argv[], int fd3, int new_session,
    int errfd)
{
	sigset_t	set;
	int		fd, e, sig;

	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (new_session)
		setsid();
	/* Our umask keeps state private; kernels make the user's files. */
	umask(util_user_umask());

	if (fd3 != -1) {
		/* Move it out of the way first in case it is 0-2. */
		if ((fd = fcntl(fd3, F_DUPFD, 10)) == -1 || dup2(fd, 3) == -1)
			goto fail;
	}
	if (errfd == 3 || errfd < 10) {
		if ((fd = fcntl(errfd, F_DUPFD_CLOEXEC, 10)) == -1)
			goto fail;
		errfd = fd;
	}
	if ((fd = open("/dev/null", O_RDONLY)) == -1 || dup2(fd, 0) == -1)
		goto fail;
	if (dup2(2, 1) == -1)
		goto fail;
	for (fd = fd3 != -1 ? 4 : 3; fd < 1024; fd++) {
		if (fd != errfd)
			close(fd);
	}
	execv(path, argv);
fail:
	e = errno;
	if (write(errfd, &e, sizeof e) == -1)
		_exit(127);
	_exit(127);
}

/*
 * Start path with argv.  fd3 (or -1) becomes the child's fd 3; stdin is
 * /dev/null and stdout goes to our stderr so no child ever writes to a
 * protocol stdout.  Returns the pid, or -1 with *cause set.
 */
pid_t
spawn_child(const char *path, char *const argv[], int fd3, int new_session,
    char **cause)
{
	int	pfd[2], e;
	pid_t	pid;
	ssize_t	n;

	if (pipe2(pfd, O_CLOEXEC) != 0) {
		xasprintf(cause, "pipe: %s", strerror(errno));
		return (-1);
	}
	switch (pid = fork()) {
	case -1:
		xasprintf(cause, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return (-1);
	case 0:
		close(pfd[0]);
		spawn_exec(path, argv, fd3, new_session, pfd[1]);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof e);
	while (n == -1 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof e) {
		waitpid(pid, NULL, 0);
		xasprintf(cause, "cannot run %s: %s", path, strerror(e));
		return (-1);
	}
	return (pid);
}
