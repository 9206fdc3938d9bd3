/*
 * test-files.c: the modes of what we create (log.c, sockdir.c).
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common.h"

static char *
test_dir(void)
{
	char	*dir = xstrdup("/tmp/test-atomic-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	return (dir);
}

static void
test_rmdir(char *dir)
{
	char	*cmd;

	xasprintf(&cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

static mode_t
test_mode(const char *path)
{
	struct stat	sb;

	cr_assert_eq(lstat(path, &sb), 0, "%s: %s", path, strerror(errno));
	return (sb.st_mode & 07777);
}

/* Logs are ours only, whatever the umask. */
Test(files, state_modes)
{
	char	*dir = test_dir(), *p;

	umask(0);
	xasprintf(&p, "%s/test.log", dir);
	log_open("test", LOG_LEVEL_WARN, p);
	log_warnx("a line");
	log_close();
	cr_assert_eq(test_mode(p), 0600);
	free(p);
	test_rmdir(dir);
}

/* Directories others may enter are refused with the fix. */
Test(files, private_dirs)
{
	char	*dir = test_dir(), *p, *want, *cause = NULL;

	cr_assert_eq(sockdir_check_named("state directory", dir, 0, &cause),
	    0);
	chmod(dir, 0755);
	cr_assert_eq(sockdir_check_named("state directory", dir, 0, &cause),
	    -1);
	xasprintf(&want, "state directory %s is readable by others (mode "
	    "0755): chmod 700 %s", dir, dir);
	cr_assert_str_eq(cause, want);
	free(want);
	free(cause);
	chmod(dir, 0730);
	cr_assert_eq(sockdir_check_dir(dir, 0, &cause), -1);
	cr_assert(strstr(cause, "is writable by others (mode 0730): "
	    "chmod 700") != NULL, "%s", cause);
	free(cause);
	chmod(dir, 0700);
	xasprintf(&p, "%s/link", dir);
	cr_assert_eq(symlink(dir, p), 0);
	cr_assert_eq(sockdir_check_dir(p, 0, &cause), -1);
	cr_assert(strstr(cause, "is a symbolic link") != NULL, "%s", cause);
	free(cause);
	free(p);
	if (geteuid() == 0) {
		cr_assert_eq(chown(dir, 65534, 65534), 0);
		cr_assert_eq(sockdir_check_dir(dir, 0, &cause), -1);
		cr_assert(strstr(cause, "is owned by uid 65534, not by you "
		    "(uid 0): remove it") != NULL, "%s", cause);
		free(cause);
	}
	test_rmdir(dir);
}
