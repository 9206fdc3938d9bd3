/* SPDX-License-Identifier: ISC */
/*
 * ctl-logs.c: the per-process logs in the state directory (runtimed.log;
 * logs/mcp-worker-PID.log) and their rotated generations (NAME.1 ..
 * NAME.3, common/log.c): listed, printed oldest first, or followed as
 * they grow and across rotations.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/ctl.h"

/* With -f, how often files are looked at, and how much is shown first. */
#define CTL_LOGS_POLL_US	200000
#define CTL_LOGS_TAIL		(64 * 1024)

struct ctl_logs_file {
	char	*name;		/* "runtimed.log", "runtimed.log.1" */
	char	*path;
	size_t	 baselen;	/* of the name without ".N" */
	int	 gen;		/* N, 0 for the live file */
	off_t	 size;
	time_t	 mtime;
	ino_t	 ino;		/* -f: the file being followed */
	off_t	 seen;		/* -f: bytes printed so far */
};

static int	ctl_logs_generation(const char *, size_t *);
static int	ctl_logs_cmp(const void *, const void *);
static int	ctl_logs_match(const char *, size_t, const char *);
static void	ctl_logs_scan(const char *, const char *,
		    struct ctl_logs_file **, size_t *);
static struct ctl_logs_file	*ctl_logs_find(const char *, const char *,
		    size_t *);
static void	ctl_logs_free(struct ctl_logs_file *, size_t);
static off_t	ctl_logs_copy(const char *, off_t);
static char	*ctl_logs_dir(struct ctl_ctx *);
static void	ctl_logs_list(struct ctl_ctx *, const char *,
		    struct ctl_logs_file *, size_t);
static void	ctl_logs_print(struct ctl_ctx *, struct ctl_logs_file *,
		    size_t);
static void	ctl_logs_rotated(struct ctl_logs_file *, const struct stat *);
static __dead void	ctl_logs_follow(const char *, const char *,
		    struct ctl_logs_file *, size_t);

/* A log's name ("x.log") and generation (0, or N of "x.log.N"), or -1. */
static int
ctl_logs_generation(const char *name, size_t *baselen)
{
	const char	*dot;
	size_t		 len = strlen(name);

	if (len > 4 && strcmp(name + len - 4, ".log") == 0) {
		*baselen = len;
		return (0);
	}
	if ((dot = strrchr(name, '.')) == NULL || dot[1] < '1' ||
	    dot[1] > '9' || dot[2] != '\0' || dot - name <= 4 ||
	    strncmp(dot - 4, ".log", 4) != 0)
		return (-1);
	*baselen = dot - name;
	return (dot[1] - '0');
}

/* By log, each oldest generation first: the order lines were written. */
static int
ctl_logs_cmp(const void *a, const void *b)
{
	const struct ctl_logs_file	*fa = a, *fb = b;
	size_t				 len;
	int				 c;

	len = fa->baselen < fb->baselen ? fa->baselen : fb->baselen;
	if ((c = strncmp(fa->name, fb->name, len)) != 0)
		return (c);
	if (fa->baselen != fb->baselen)
		return (fa->baselen < fb->baselen ? -1 : 1);
	return (fb->gen - fa->gen);
}

/* Does log name belong to process (a name, "name-pid" or file name)? */
static int
ctl_logs_match(const char *name, size_t baselen, const char *process)
{
	size_t	len;

	if (process == NULL || strcmp(name, process) == 0)
		return (1);
	len = strlen(process);
	if (len > baselen || strncmp(name, process, len) != 0)
		return (0);
	if (len == baselen)
		return (1);	/* "x.log" names its generations too */
	return (strncmp(name + len, ".log", baselen - len) == 0 ||
	    name[len] == '-');
}

/* Add the logs (regular *.log files of ours) in dir matching process. */
static void
ctl_logs_scan(const char *dir, const char *process,
    struct ctl_logs_file **fp, size_t *n)
{
	struct ctl_logs_file	*f = *fp;
	struct dirent		*de;
	struct stat		 sb;
	DIR			*d;
	size_t			 baselen;
	int			 gen;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if ((gen = ctl_logs_generation(de->d_name, &baselen)) == -1)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != getuid())
			continue;
		if (process != NULL &&
		    !ctl_logs_match(de->d_name, baselen, process))
			continue;
		f = xreallocarray(f, *n + 1, sizeof *f);
		f[*n].name = xstrdup(de->d_name);
		xasprintf(&f[*n].path, "%s/%s", dir, de->d_name);
		f[*n].baselen = baselen;
		f[*n].gen = gen;
		f[*n].size = sb.st_size;
		f[*n].mtime = sb.st_mtime;
		f[*n].ino = sb.st_ino;
		f[*n].seen = 0;
		(*n)++;
	}
	closedir(d);
	*fp = f;
}

/*
 * The logs matching process (or all): the daemon's in the state
 * directory, the workers' in its logs/ (as the proxy puts them).
 */
static struct ctl_logs_file *
ctl_logs_find(const char *dir, const char *process, size_t *n)
{
	struct ctl_logs_file	*f = NULL;
	char			*sub;

	*n = 0;
	ctl_logs_scan(dir, process, &f, n);
	xasprintf(&sub, "%s/logs", dir);
	ctl_logs_scan(sub, process, &f, n);
	free(sub);
	if (*n > 0)
		qsort(f, *n, sizeof *f, ctl_logs_cmp);
	return (f);
}

static void
ctl_logs_free(struct ctl_logs_file *f, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].path);
	}
	free(f);
}

/* Copy path from offset to stdout; returns the offset reached. */
static off_t
ctl_logs_copy(const char *path, off_t from)
{
	char	buf[8192], *safe;
	ssize_t	n;
	int	fd;

	/* Never waits on a FIFO put in a log's place. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return (from);
	if (lseek(fd, from, SEEK_SET) == -1) {
		close(fd);
		return (from);
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		/* A kernel's stderr is in there: no escape is printed. */
		safe = ctl_term_safe(buf, (size_t)n);
		fputs(safe, stdout);
		free(safe);
		from += n;
	}
	close(fd);
	fflush(stdout);
	return (from);
}

/* The state directory: the running daemon's, else -s or the default. */
static char *
ctl_logs_dir(struct ctl_ctx *ctx)
{
	struct proto_daemon_status_reply	 s;
	msgpack_unpacked			 u;
	char					*dir;

	if (ctl_client_status(ctx->socket, 1, &u, &s) == 0) {
		dir = s.has_detail ? proto_str_dup(&s.state_dir) : NULL;
		msgpack_unpacked_destroy(&u);
		if (dir != NULL)
			return (dir);
	}
	return (xstrdup(ctx->state_dir));
}

static void
ctl_logs_list(struct ctl_ctx *ctx, const char *dir, struct ctl_logs_file *f,
    size_t n)
{
	struct ctl_table	*t;
	struct json_object	*j, *a, *o;
	struct tm		 tm;
	char			 when[32], bytes[32];
	size_t			 i;

	if (ctx->json) {
		j = json_object_new_object();
		json_object_object_add(j, "state_dir",
		    json_object_new_string(dir));
		a = json_object_new_array();
		for (i = 0; i < n; i++) {
			o = json_object_new_object();
			json_object_object_add(o, "name",
			    json_object_new_string(f[i].name));
			json_object_object_add(o, "path",
			    json_object_new_string(f[i].path));
			json_object_object_add(o, "bytes",
			    json_object_new_int64(f[i].size));
			json_object_object_add(o, "modified",
			    json_object_new_int64(f[i].mtime));
			json_object_array_add(a, o);
		}
		json_object_object_add(j, "logs", a);
		ctl_client_print_json(NULL, j);
		return;
	}
	t = ctl_table_create(3, "LOG", "BYTES", "MODIFIED");
	for (i = 0; i < n; i++) {
		localtime_r(&f[i].mtime, &tm);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(bytes, sizeof bytes, "%lld", (long long)f[i].size);
		ctl_table_add(t, f[i].name, bytes, when);
	}
	ctl_table_print(t, stdout);
	ctl_table_free(t);
	if (!ctx->quiet)
		printf("(in %s; runtimectl logs NAME prints one)\n", dir);
}

static void
ctl_logs_print(struct ctl_ctx *ctx, struct ctl_logs_file *f, size_t n)
{
	struct json_object	*j, *a, *o;
	char			*text, *cause = NULL;
	size_t			 i, len;

	if (!ctx->json) {
		for (i = 0; i < n; i++) {
			if (n > 1)
				printf("%s==> %s <==\n", i > 0 ? "\n" : "",
				    f[i].path);
			f[i].seen = ctl_logs_copy(f[i].path, 0);
		}
		return;
	}
	j = json_object_new_object();
	a = json_object_new_array();
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "name",
		    json_object_new_string(f[i].name));
		json_object_object_add(o, "path",
		    json_object_new_string(f[i].path));
		if (util_read_file(f[i].path, &text, &len, &cause) == 0) {
			json_object_object_add(o, "text",
			    json_object_new_string_len(text, (int)len));
			free(text);
		} else {
			json_object_object_add(o, "error",
			    json_object_new_string(cause));
			free(cause);
			cause = NULL;
		}
		json_object_array_add(a, o);
	}
	json_object_object_add(j, "logs", a);
	ctl_client_print_json(NULL, j);
}

/*
 * The live file was renamed to NAME.1: print what was added to it before
 * the rotation, then follow the new file from its start.
 */
static void
ctl_logs_rotated(struct ctl_logs_file *f, const struct stat *sb)
{
	struct stat	 ob;
	char		*old;

	xasprintf(&old, "%s.1", f->path);
	if (lstat(old, &ob) == 0 && S_ISREG(ob.st_mode) && ob.st_ino == f->ino)
		ctl_logs_copy(old, f->seen);
	free(old);
	f->ino = sb->st_ino;
	f->seen = 0;
}

/* -f: the last part of each live log, then what is added, until killed. */
static __dead void
ctl_logs_follow(const char *dir, const char *process,
    struct ctl_logs_file *f, size_t n)
{
	struct ctl_logs_file	*now;
	struct stat		 sb;
	size_t			 i, j, m;

	for (i = 0; i < n; i++) {
		if (f[i].gen != 0)
			continue;
		f[i].seen = f[i].size > CTL_LOGS_TAIL ?
		    f[i].size - CTL_LOGS_TAIL : 0;
		f[i].seen = ctl_logs_copy(f[i].path, f[i].seen);
	}
	for (;;) {
		usleep(CTL_LOGS_POLL_US);
		/* New processes' logs join in as they appear. */
		now = ctl_logs_find(dir, process, &m);
		for (j = 0; j < m; j++) {
			if (now[j].gen != 0)
				continue;
			for (i = 0; i < n; i++) {
				if (strcmp(f[i].path, now[j].path) == 0)
					break;
			}
			if (i < n)
				continue;
			f = xreallocarray(f, n + 1, sizeof *f);
			f[n] = now[j];
			f[n].name = xstrdup(now[j].name);
			f[n].path = xstrdup(now[j].path);
			f[n].seen = 0;
			n++;
		}
		ctl_logs_free(now, m);
		for (i = 0; i < n; i++) {
			if (f[i].gen != 0 || lstat(f[i].path, &sb) != 0 ||
			    !S_ISREG(sb.st_mode))
				continue;
			if (sb.st_ino != f[i].ino)
				ctl_logs_rotated(&f[i], &sb);
			else if (sb.st_size < f[i].seen)
				f[i].seen = 0;	/* truncated */
			if (sb.st_size > f[i].seen)
				f[i].seen = ctl_logs_copy(f[i].path,
				    f[i].seen);
		}
	}
}

int
ctl_logs(struct ctl_ctx *ctx, int argc, char **argv)
{
	struct ctl_logs_file	*f;
	const char		*process = NULL;
	char			*dir;
	size_t			 n;
	int			 ch, follow = 0;

	optind = 0;	/* GNU getopt: start afresh */
	while ((ch = getopt(argc, argv, "f")) != -1) {
		switch (ch) {
		case 'f':
			follow = 1;
			break;
		default:
			return (CTL_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		ctl_client_error("logs: one process at a time");
		return (CTL_EXIT_USAGE);
	}
	if (argc == 1)
		process = argv[0];
	if (follow && ctx->json) {
		ctl_client_error("logs: -f prints text; --json goes "
		    "without it");
		return (CTL_EXIT_USAGE);
	}
	dir = ctl_logs_dir(ctx);
	f = ctl_logs_find(dir, process, &n);
	if (n == 0 && (process != NULL || !follow)) {
		if (process != NULL)
			ctl_client_error("no log of %s in %s: runtimectl logs "
			    "lists the logs there", process, dir);
		else
			ctl_client_error("no logs in %s", dir);
		free(dir);
		return (CTL_EXIT_FAIL);
	}
	if (follow)
		ctl_logs_follow(dir, process, f, n);
	if (process == NULL)
		ctl_logs_list(ctx, dir, f, n);
	else
		ctl_logs_print(ctx, f, n);
	ctl_logs_free(f, n);
	free(dir);
	return (CTL_EXIT_OK);
}
