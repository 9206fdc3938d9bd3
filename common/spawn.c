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

#include "common.h"

static int
spawn_is_exec(const char *path)
{
	struct stat	sb;

	return (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0);
}

/*
 * Find executable name: in each directory of $RUNTIMED_LIBEXEC_DIR (a
 * colon-separated list; tests point it into the build tree), then beside
 * our own executable, then in the configured directory.  Resolved on
 * every call so an upgraded install is picked up.  Caller frees; NULL if
 * not found.
 */
char *
spawn_find(const char *name, const char *configured)
{
	const char	*env;
	char		 self[PATH_MAX], *slash, *path, *list, *dir, *last;
	ssize_t		 n;

	if ((env = getenv("RUNTIMED_LIBEXEC_DIR")) != NULL && *env != '\0') {
		list = xstrdup(env);
		for (dir = strtok_r(list, ":", &last); dir != NULL;
		    dir = strtok_r(NULL, ":", &last)) {
			xasprintf(&path, "%s/%s", dir, name);
			if (spawn_is_exec(path)) {
				free(list);
				return (path);
			}
			free(path);
		}
		free(list);
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			xasprintf(&path, "%s/%s", self, name);
			if (spawn_is_exec(path))
				return (path);
			free(path);
		}
	}
	if (configured != NULL) {
		xasprintf(&path, "%s/%s", configured, name);
		if (spawn_is_exec(path))
			return (path);
		free(path);
	}
	return (NULL);
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
