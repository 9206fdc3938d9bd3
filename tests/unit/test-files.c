/* SPDX-License-Identifier: ISC */
/*
 * test-files.c: whole-file replacement (common/atomic.c) and the modes
 * of what we create (log.c, blob.c, sockdir.c).
 *
 * RAND_bytes is defined here, over libcrypto's, so a test can make the
 * writer draw names it has planted first; unrigged it reads
 * /dev/urandom.
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

static unsigned char	test_rig[32][8];
static int		test_rig_n, test_rig_next;

int	RAND_bytes(unsigned char *, int);

static void	test_rig_names(int, int);
static char	*test_dir(void);
static void	test_rmdir(char *);
static char	*test_read(const char *);
static void	test_put(const char *, const char *);
static int	test_count(const char *, const char *);
static mode_t	test_mode(const char *);

int
RAND_bytes(unsigned char *buf, int num)
{
	int	fd;

	if (num == 8 && test_rig_next < test_rig_n) {
		memcpy(buf, test_rig[test_rig_next++], 8);
		return (1);
	}
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	if (read(fd, buf, (size_t)num) != num) {
		close(fd);
		return (0);
	}
	close(fd);
	return (1);
}

/* The next drawn names: 8 bytes of value i each. */
static void
test_rig_names(int first, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		memset(test_rig[test_rig_n++], first + i, 8);
}

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

static char *
test_read(const char *path)
{
	char	*data, *cause = NULL;
	size_t	 len;

	if (util_read_file(path, &data, &len, &cause) != 0) {
		free(cause);
		return (NULL);
	}
	return (data);
}

static void
test_put(const char *path, const char *text)
{
	FILE	*f;

	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* How many names in dir start with prefix. */
static int
test_count(const char *dir, const char *prefix)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	cr_assert_not_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	}
	closedir(d);
	return (n);
}

static mode_t
test_mode(const char *path)
{
	struct stat	sb;

	cr_assert_eq(lstat(path, &sb), 0, "%s: %s", path, strerror(errno));
	return (sb.st_mode & 07777);
}

Test(atomic, modes)
{
	char	*dir = test_dir(), *path, *cause = NULL, *s;

	umask(022);
	xasprintf(&path, "%s/nb.ipynb", dir);
	cr_assert_eq(atomic_write(path, "one", 3, 0644, &cause), 0, "%s",
	    cause);
	cr_assert_str_eq(s = test_read(path), "one");
	free(s);
	cr_assert_eq(test_mode(path), 0644);
	chmod(path, 0640);
	cr_assert_eq(atomic_write(path, "two", 3, 0644, &cause), 0);
	cr_assert_eq(test_mode(path), 0640, "an existing file keeps its mode");
	cr_assert_str_eq(s = test_read(path), "two");
	free(s);
	cr_assert_eq(test_count(dir, ".rtd-"), 0, "a temporary file is left");

	/* A private process still makes the user's files with their umask. */
	util_umask_private();
	cr_assert_eq(util_user_umask(), 022);
	free(path);
	xasprintf(&path, "%s/new.ipynb", dir);
	cr_assert_eq(atomic_write(path, "x", 1, 0644, &cause), 0);
	cr_assert_eq(test_mode(path), 0644);
	free(path);
	xasprintf(&path, "%s/state", dir);
	cr_assert_eq(atomic_write(path, "x", 1, 0600, &cause), 0);
	cr_assert_eq(test_mode(path), 0600);
	free(path);
	test_rmdir(dir);
}

/*
 * Symlinks to a victim and a file of someone else at the first names the
 * writer draws: each is skipped, none written through or truncated.
 */
Test(atomic, planted_names_skipped)
{
	char		*dir = test_dir(), *path, *victim, *p, *cause = NULL;
	char		*s, name[ATOMIC_NAME_SIZE];
	unsigned char	 rnd[8];
	int		 i;

	xasprintf(&path, "%s/nb.ipynb", dir);
	xasprintf(&victim, "%s/victim", dir);
	test_put(victim, "precious");
	test_rig_names(1, 4);
	for (i = 1; i <= 3; i++) {
		memset(rnd, i, 8);
		atomic_temp_name("nb.ipynb", rnd, name);
		xasprintf(&p, "%s/%s", dir, name);
		if (i == 3)
			test_put(p, "foreign");
		else
			cr_assert_eq(symlink(victim, p), 0);
		free(p);
	}
	cr_assert_eq(atomic_write(path, "saved", 5, 0644, &cause), 0, "%s",
	    cause);
	cr_assert_eq(test_rig_next, 4, "the fourth name was not used");
	cr_assert_str_eq(s = test_read(victim), "precious");
	free(s);
	cr_assert_str_eq(s = test_read(path), "saved");
	free(s);
	memset(rnd, 3, 8);
	atomic_temp_name("nb.ipynb", rnd, name);
	xasprintf(&p, "%s/%s", dir, name);
	cr_assert_str_eq(s = test_read(p), "foreign");
	free(s);
	free(p);
	cr_assert_eq(test_count(dir, ".rtd-"), 3);
	free(path);
	free(victim);
	test_rmdir(dir);
}

/* Every name it may try is taken: it gives up, the target unchanged. */
Test(atomic, all_names_taken)
{
	char		*dir = test_dir(), *path, *victim, *p, *cause = NULL;
	char		*s, name[ATOMIC_NAME_SIZE];
	unsigned char	 rnd[8];
	int		 i;

	xasprintf(&path, "%s/nb.ipynb", dir);
	xasprintf(&victim, "%s/victim", dir);
	test_put(victim, "precious");
	test_put(path, "old");
	test_rig_names(1, 32);
	for (i = 1; i <= 32; i++) {
		memset(rnd, i, 8);
		atomic_temp_name("nb.ipynb", rnd, name);
		xasprintf(&p, "%s/%s", dir, name);
		cr_assert_eq(symlink(victim, p), 0);
		free(p);
	}
	cr_assert_eq(atomic_write(path, "new", 3, 0644, &cause), -1);
	cr_assert(strstr(cause, "random names were taken") != NULL, "%s",
	    cause);
	free(cause);
	cr_assert_lt(test_rig_next, 32, "tries are not bounded");
	cr_assert_str_eq(s = test_read(path), "old");
	free(s);
	cr_assert_str_eq(s = test_read(victim), "precious");
	free(s);
	free(path);
	free(victim);
	test_rmdir(dir);
}

/* The temporary name is short whatever the target's name is. */
Test(atomic, longest_name)
{
	char	*dir = test_dir(), *path, *cause = NULL, base[257];

	memset(base, 'n', 255);
	base[255] = '\0';
	xasprintf(&path, "%s/%s", dir, base);
	cr_assert_eq(atomic_write(path, "x", 1, 0644, &cause), 0, "%s",
	    cause);
	free(path);
	memset(base, 'n', 256);
	base[256] = '\0';
	xasprintf(&path, "%s/%s", dir, base);
	cr_assert_eq(atomic_write(path, "x", 1, 0644, &cause), -1);
	cr_assert(strstr(cause, "too long") != NULL, "%s", cause);
	free(cause);
	cr_assert_eq(test_count(dir, ".rtd-"), 0);
	free(path);
	test_rmdir(dir);
}

/* Given up, or a symlink at the target itself: nothing written through. */
Test(atomic, abort_and_link_at_target)
{
	struct atomic	*a;
	char		*dir = test_dir(), *path, *victim, *cause = NULL, *s;

	xasprintf(&path, "%s/nb.ipynb", dir);
	xasprintf(&victim, "%s/victim", dir);
	test_put(path, "old");
	cr_assert_not_null(a = atomic_create(path, 0644, &cause));
	cr_assert_eq(write(atomic_fd(a), "half", 4), 4);
	atomic_free(a);
	cr_assert_str_eq(s = test_read(path), "old");
	free(s);
	cr_assert_eq(test_count(dir, ".rtd-"), 0);

	unlink(path);
	test_put(victim, "precious");
	cr_assert_eq(symlink(victim, path), 0);
	cr_assert_eq(atomic_write(path, "new", 3, 0644, &cause), 0);
	cr_assert_str_eq(s = test_read(victim), "precious");
	free(s);
	cr_assert(!S_ISLNK(test_mode(path)));
	free(path);
	free(victim);
	test_rmdir(dir);
}

/*
 * atomic_expect: a file renamed over the target after the check is
 * never replaced (issue 36): ATOMIC_SAME of another inode, ATOMIC_ABSENT
 * of a file that appeared; the expected file is replaced; no temporary
 * is left either way.
 */
Test(atomic, expect_at_the_rename)
{
	struct atomic	*a;
	struct stat	 sb;
	char		*dir = test_dir(), *path, *other, *cause = NULL, *s;

	xasprintf(&path, "%s/nb.ipynb", dir);
	xasprintf(&other, "%s/editor", dir);
	test_put(path, "old");
	cr_assert_eq(stat(path, &sb), 0);

	/* The editor's version renamed over it while we write. */
	cr_assert_not_null(a = atomic_create(path, 0644, &cause));
	atomic_expect(a, ATOMIC_SAME, sb.st_dev, sb.st_ino, sb.st_size,
	    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
	cr_assert_eq(write(atomic_fd(a), "ours", 4), 4);
	test_put(other, "editor");
	cr_assert_eq(rename(other, path), 0);
	cr_assert_eq(atomic_commit(a, &cause), ATOMIC_CHANGED);
	cr_assert(strstr(cause, "changed on disk during the save") != NULL,
	    "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_str_eq(s = test_read(path), "editor");
	free(s);
	cr_assert_eq(test_count(dir, ".rtd-"), 0);

	/* The file as expected: replaced. */
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_not_null(a = atomic_create(path, 0644, &cause));
	atomic_expect(a, ATOMIC_SAME, sb.st_dev, sb.st_ino, sb.st_size,
	    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
	cr_assert_eq(write(atomic_fd(a), "ours", 4), 4);
	cr_assert_eq(atomic_commit(a, &cause), 0, "%s", cause);
	cr_assert_str_eq(s = test_read(path), "ours");
	free(s);
	cr_assert_eq(test_count(dir, ".rtd-"), 0);

	/* Absent when checked, created before the rename. */
	unlink(path);
	cr_assert_not_null(a = atomic_create(path, 0644, &cause));
	atomic_expect(a, ATOMIC_ABSENT, 0, 0, -1, -1);
	cr_assert_eq(write(atomic_fd(a), "ours", 4), 4);
	test_put(path, "editor");
	cr_assert_eq(atomic_commit(a, &cause), ATOMIC_CHANGED);
	free(cause);
	cr_assert_str_eq(s = test_read(path), "editor");
	free(s);
	cr_assert_eq(test_count(dir, ".rtd-"), 0);
	free(path);
	free(other);
	test_rmdir(dir);
}

/* Leftovers: ours go; links, others', another file's and locked stay. */
Test(atomic, sweep)
{
	char		*dir = test_dir(), *path, *p, name[ATOMIC_NAME_SIZE];
	char		 other[ATOMIC_NAME_SIZE];
	unsigned char	 rnd[8];
	int		 i, fd = -1;

	xasprintf(&path, "%s/nb.ipynb", dir);
	test_put(path, "{}");
	for (i = 1; i <= 6; i++) {
		memset(rnd, i, 8);
		atomic_temp_name("nb.ipynb", rnd, name);
		xasprintf(&p, "%s/%s", dir, name);
		if (i == 3)
			cr_assert_eq(symlink(path, p), 0);
		else
			test_put(p, "partial");
		if (i == 4 && geteuid() == 0)
			cr_assert_eq(chown(p, 65534, 65534), 0);
		if (i == 5) {
			fd = open(p, O_RDONLY);
			cr_assert_eq(flock(fd, LOCK_EX), 0);
		}
		free(p);
	}
	memset(rnd, 7, 8);
	atomic_temp_name("other.ipynb", rnd, other);
	xasprintf(&p, "%s/%s", dir, other);
	test_put(p, "partial");
	free(p);
	xasprintf(&p, "%s/%.*sX.tmp", dir, (int)strlen(name) - 5, name);
	test_put(p, "partial");
	free(p);
	xasprintf(&p, "%s/%s~", dir, name);
	test_put(p, "partial");
	free(p);

	cr_assert_eq(atomic_sweep(path), geteuid() == 0 ? 3 : 4);
	for (i = 1; i <= 6; i++) {
		struct stat	sb;
		int		kept;

		memset(rnd, i, 8);
		atomic_temp_name("nb.ipynb", rnd, name);
		xasprintf(&p, "%s/%s", dir, name);
		kept = i == 3 || i == 5 || (i == 4 && geteuid() == 0);
		cr_assert_eq(lstat(p, &sb) == 0, kept, "%s: %s", name,
		    kept ? "removed" : "kept");
		free(p);
	}
	cr_assert_eq(test_count(dir, ".rtd-"), geteuid() == 0 ? 6 : 5);
	close(fd);
	free(path);
	test_rmdir(dir);
}

/*
 * atomic_adopt takes up a leftover temporary (a killed download's,
 * decision 098) only when it is one of ours for that target: a regular
 * file, not a link, not another user's, not locked by a live writer,
 * with one link; then it commits as a new one does.
 */
Test(atomic, adopt)
{
	struct atomic	*a;
	char		*dir = test_dir(), *path, *p, *cause = NULL;
	char		 name[6][ATOMIC_NAME_SIZE], other[ATOMIC_NAME_SIZE];
	unsigned char	 rnd[8];
	int		 i, fd = -1;

	xasprintf(&path, "%s/data.bin", dir);
	for (i = 0; i < 6; i++) {
		memset(rnd, i + 1, 8);
		atomic_temp_name("data.bin", rnd, name[i]);
		xasprintf(&p, "%s/%s", dir, name[i]);
		if (i == 1)
			cr_assert_eq(symlink("/etc/passwd", p), 0);
		else
			test_put(p, "kept");
		if (i == 2) {
			fd = open(p, O_RDONLY);
			cr_assert_eq(flock(fd, LOCK_EX), 0);
		}
		if (i == 3) {
			free(p);
			xasprintf(&p, "%s/%s", dir, name[3]);
			cr_assert_eq(link(p, path), 0);
		}
		if (i == 4 && geteuid() == 0)
			cr_assert_eq(chown(p, 65534, 65534), 0);
		free(p);
	}
	memset(rnd, 9, 8);
	atomic_temp_name("other.bin", rnd, other);

	cr_assert_null(atomic_adopt(path, name[1], 0644, &cause));
	cr_assert(strstr(cause, "cannot open") != NULL, "%s", cause);
	free(cause);
	cr_assert_null(atomic_adopt(path, name[2], 0644, &cause));
	cr_assert_eq(errno, EWOULDBLOCK);
	cr_assert(strstr(cause, "being written") != NULL, "%s", cause);
	free(cause);
	cr_assert_null(atomic_adopt(path, name[3], 0644, &cause));
	cr_assert(strstr(cause, "one link") != NULL, "%s", cause);
	free(cause);
	if (geteuid() == 0) {
		cr_assert_null(atomic_adopt(path, name[4], 0644, &cause));
		free(cause);
	}
	cr_assert_null(atomic_adopt(path, other, 0644, &cause));
	cr_assert(strstr(cause, "not a temporary name") != NULL, "%s", cause);
	free(cause);
	cr_assert_null(atomic_adopt(path, "../data.bin", 0644, &cause));
	free(cause);
	/* Nothing refused was removed; the link's target untouched. */
	cr_assert_eq(test_count(dir, ".rtd-"), 6);
	unlink(path);

	cr_assert_not_null(a = atomic_adopt(path, name[0], 0644, &cause));
	cr_assert_str_eq(atomic_temp(a), name[0]);
	cr_assert_eq(lseek(atomic_fd(a), 0, SEEK_END), 4);
	cr_assert_eq(write(atomic_fd(a), " more", 5), 5);
	cr_assert_eq(atomic_commit(a, &cause), 0);
	p = test_read(path);
	cr_assert_str_eq(p, "kept more");
	free(p);
	cr_assert_eq(test_count(dir, ".rtd-"), 5);
	close(fd);
	free(path);
	test_rmdir(dir);
}

Test(atomic, resolve)
{
	char	*dir = test_dir(), *p, *q, *r, *cause = NULL;

	xasprintf(&p, "%s/plain", dir);
	test_put(p, "x");
	cr_assert_str_eq(r = atomic_resolve(p, &cause), p);
	free(r);
	free(p);

	/* Dangling, relative to the link's own directory, then a chain. */
	xasprintf(&p, "%s/sub", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	free(p);
	xasprintf(&p, "%s/link", dir);
	cr_assert_eq(symlink("sub/hop", p), 0);
	xasprintf(&q, "%s/sub/hop", dir);
	cr_assert_eq(symlink("../end", q), 0);
	free(q);
	xasprintf(&q, "%s/sub/../end", dir);
	cr_assert_str_eq(r = atomic_resolve(p, &cause), q);
	free(r);
	free(q);
	free(p);

	xasprintf(&p, "%s/a", dir);
	xasprintf(&q, "%s/b", dir);
	cr_assert_eq(symlink("b", p), 0);
	cr_assert_eq(symlink(p, q), 0);
	cr_assert_null(atomic_resolve(p, &cause));
	cr_assert(strstr(cause, "too many levels of symbolic links") != NULL);
	free(cause);
	free(p);
	free(q);
	test_rmdir(dir);
}

/* Logs and blobs are ours only, whatever the umask. */
Test(files, state_modes)
{
	char	*dir = test_dir(), *p, hex[65], *cause = NULL;

	umask(0);
	xasprintf(&p, "%s/test.log", dir);
	log_open("test", LOG_LEVEL_WARN, p);
	log_warnx("a line");
	log_close();
	cr_assert_eq(test_mode(p), 0600);
	free(p);
	cr_assert_eq(blob_put(dir, "data", 4, hex, &cause), 0, "%s", cause);
	p = blob_path(dir, hex);
	cr_assert_eq(test_mode(p), 0600);
	free(p);
	test_rmdir(dir);
}

/*
 * A line that takes the log past its limit does not rotate it: the next
 * line does.  So a process whose last line reached the limit leaves that
 * file in place at exit, not an empty new one that log_tidy removes.
 */
Test(files, log_rotates_before_a_line)
{
	char		*dir = test_dir(), *p, *q;
	struct stat	 sb;
	char		 line[40];

	xasprintf(&p, "%s/test.log", dir);
	xasprintf(&q, "%s.1", p);
	setenv("RUNTIMED_LOG_MAX_BYTES", "100", 1);
	log_open("test", LOG_LEVEL_WARN, p);
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\0';
	log_warnx("%s", line);
	log_warnx("%s", line);
	cr_assert_eq(stat(p, &sb), 0);
	cr_assert_gt(sb.st_size, 100, "the second line did not pass the limit");
	cr_assert_neq(stat(q, &sb), 0, "rotated with no line to write");
	log_tidy();
	log_close();
	cr_assert_eq(stat(p, &sb), 0, "the live log was removed at exit");
	cr_assert_gt(sb.st_size, 0);

	log_open("test", LOG_LEVEL_WARN, p);
	log_warnx("%s", line);
	log_close();
	cr_assert_eq(stat(q, &sb), 0, "the next line did not rotate");
	cr_assert_gt(sb.st_size, 100);
	cr_assert_eq(stat(p, &sb), 0);
	cr_assert_lt(sb.st_size, 100);
	unsetenv("RUNTIMED_LOG_MAX_BYTES");
	free(q);
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
