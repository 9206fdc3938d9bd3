/* SPDX-License-Identifier: ISC */
/*
 * ctl-doctor.c: what stands between the user and a working daemon.  Each
 * check gives a finding (ok, warning or problem) and, when it is not ok,
 * the command that fixes it.  Nothing is changed here: doctor only looks
 * (and starts each kernelspec once, to see that it starts).
 */

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "client/ctl.h"
#include "kernelspec.h"

/* Below this much free space in the state directory, writes will fail. */
#define CTL_DOCTOR_MIN_FREE	(64ULL * 1024 * 1024)
/* How long a kernel has to listen on its shell port. */
#define CTL_DOCTOR_KERNEL_MS	20000

enum ctl_doctor_level { CTL_DOCTOR_OK, CTL_DOCTOR_WARNING, CTL_DOCTOR_PROBLEM };

struct ctl_doctor {
	struct ctl_ctx		*ctx;
	struct json_object	*findings;
	u_int			 problems;
	u_int			 warnings;
};

static void	ctl_doctor_add(struct ctl_doctor *,
		    enum ctl_doctor_level, const char *, const char *,
		    const char *, ...) printflike(5, 6);
static int	ctl_doctor_dir(struct ctl_doctor *, const char *, const char *,
		    const char *);
static void	ctl_doctor_socket(struct ctl_doctor *,
		    struct proto_daemon_status_reply *, int *);
static void	ctl_doctor_disk(struct ctl_doctor *, const char *);
static void	ctl_doctor_store(struct ctl_doctor *, const char *,
		    struct proto_daemon_status_reply *);
static void	ctl_doctor_ports(int [5]);
static int	ctl_doctor_listening(int);
static char	*ctl_doctor_start(struct kernelspec *, const char *);
static void	ctl_doctor_kernels(struct ctl_doctor *);

/* One finding; fix (or NULL) is the command that mends it. */
static void printflike(5, 6)
ctl_doctor_add(struct ctl_doctor *d, enum ctl_doctor_level level,
    const char *check, const char *fix, const char *fmt, ...)
{
	const char		*names[] = { "ok", "warning", "problem" };
	struct json_object	*o;
	va_list			 ap;
	char			*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	if (level == CTL_DOCTOR_PROBLEM)
		d->problems++;
	else if (level == CTL_DOCTOR_WARNING)
		d->warnings++;
	o = json_object_new_object();
	json_object_object_add(o, "check", json_object_new_string(check));
	json_object_object_add(o, "status",
	    json_object_new_string(names[level]));
	json_object_object_add(o, "message", json_object_new_string(msg));
	json_object_object_add(o, "fix", fix != NULL ?
	    json_object_new_string(fix) : NULL);
	json_object_array_add(d->findings, o);
	if (!d->ctx->json && !(d->ctx->quiet && level == CTL_DOCTOR_OK)) {
		printf("%-8s %s\n", level == CTL_DOCTOR_OK ? "ok" :
		    level == CTL_DOCTOR_WARNING ? "warning" : "PROBLEM", msg);
		if (fix != NULL)
			printf("%-8s fix: %s\n", "", fix);
	}
	free(msg);
}

/* A directory of ours, 0700; what is the directory for (its name). */
static int
ctl_doctor_dir(struct ctl_doctor *d, const char *check, const char *what,
    const char *dir)
{
	struct stat	 sb;
	char		*fix;

	if (lstat(dir, &sb) != 0) {
		if (errno == ENOENT) {
			ctl_doctor_add(d, CTL_DOCTOR_OK, check, NULL,
			    "%s %s does not exist yet (the daemon creates it "
			    "0700)", what, dir);
			return (-1);
		}
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, check, NULL,
		    "%s %s: %s", what, dir, strerror(errno));
		return (-1);
	}
	if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode)) {
		xasprintf(&fix, "rm %s", dir);
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, check, fix,
		    "%s %s is %s, not a directory", what, dir,
		    S_ISLNK(sb.st_mode) ? "a symbolic link" : "a file");
		free(fix);
		return (-1);
	}
	if (sb.st_uid != getuid()) {
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, check,
		    "set RUNTIMED_SOCKET and RUNTIMED_STATE_DIR to paths "
		    "of your own", "%s %s belongs to uid %ld, not to you "
		    "(uid %ld)", what, dir, (long)sb.st_uid, (long)getuid());
		return (-1);
	}
	if ((sb.st_mode & 077) != 0) {
		xasprintf(&fix, "chmod 700 %s", dir);
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, check, fix,
		    "%s %s is open to others (mode %04o): the daemon refuses "
		    "to use it", what, dir, (unsigned)(sb.st_mode & 07777));
		free(fix);
		return (-1);
	}
	ctl_doctor_add(d, CTL_DOCTOR_OK, check, NULL, "%s %s: mode 0700, "
	    "yours", what, dir);
	return (0);
}

/* The socket: answering, stale, or something else in its place. */
static void
ctl_doctor_socket(struct ctl_doctor *d, struct proto_daemon_status_reply *s,
    int *running)
{
	const char	*sock = d->ctx->socket;
	struct stat	 sb;
	char		*fix, *lock;
	int		 fd;
	pid_t		 pid = 0;
	char		 buf[32];
	ssize_t		 n;

	*running = 0;
	if (lstat(sock, &sb) != 0) {
		ctl_doctor_add(d, CTL_DOCTOR_OK, "socket", NULL, "no daemon "
		    "is running (runtimed, or any MCP client, starts one)");
	} else if (!S_ISSOCK(sb.st_mode)) {
		xasprintf(&fix, "rm %s", sock);
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "socket", fix, "%s is "
		    "not a socket: no daemon can listen there", sock);
		free(fix);
	} else if (s->pid != 0) {
		*running = 1;
		ctl_doctor_add(d, CTL_DOCTOR_OK, "socket", NULL, "the daemon "
		    "(pid %lld, version %.*s) answers on %s", (long long)s->pid,
		    (int)s->version.len, s->version.ptr, sock);
	} else {
		xasprintf(&fix, "rm %s (or just start runtimed: it replaces "
		    "a stale socket)", sock);
		ctl_doctor_add(d, CTL_DOCTOR_WARNING, "socket", fix, "stale "
		    "socket %s: no daemon answers on it", sock);
		free(fix);
	}

	xasprintf(&lock, "%s.lock", sock);
	if ((fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		free(lock);
		return;
	}
	if ((n = pread(fd, buf, sizeof buf - 1, 0)) > 0) {
		buf[n] = '\0';
		pid = (pid_t)strtol(buf, NULL, 10);
	}
	/* A shared lock for a moment: a starting daemon retries. */
	if (flock(fd, LOCK_SH | LOCK_NB) != 0)
		ctl_doctor_add(d, CTL_DOCTOR_OK, "lock", NULL, "lock %s held "
		    "by pid %ld", lock, (long)pid);
	else if (!*running) {
		flock(fd, LOCK_UN);
		xasprintf(&fix, "rm %s", lock);
		ctl_doctor_add(d, CTL_DOCTOR_WARNING, "lock", fix, "stale "
		    "lock %s (pid %ld is gone); harmless, a new daemon takes "
		    "it over", lock, (long)pid);
		free(fix);
	} else
		flock(fd, LOCK_UN);
	close(fd);
	free(lock);
}

/* Free space where the store and logs are written. */
static void
ctl_doctor_disk(struct ctl_doctor *d, const char *dir)
{
	struct statvfs	 sv;
	unsigned long long free_bytes;
	char		*fix, *copy;

	copy = xstrdup(dir);
	if (statvfs(dir, &sv) != 0 && statvfs(dirname(copy), &sv) != 0) {
		free(copy);
		return;
	}
	free(copy);
	free_bytes = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (free_bytes < CTL_DOCTOR_MIN_FREE) {
		xasprintf(&fix, "free disk space on the file system of %s",
		    dir);
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "disk", fix, "only %llu "
		    "MB free for the state in %s: edits will be refused",
		    free_bytes / 1000000, dir);
		free(fix);
	} else
		ctl_doctor_add(d, CTL_DOCTOR_OK, "disk", NULL, "%llu MB free "
		    "for the state in %s", free_bytes / 1000000, dir);
}

/* The store: SQLite's own check, read-only, beside a running daemon. */
static void
ctl_doctor_store(struct ctl_doctor *d, const char *dir,
    struct proto_daemon_status_reply *s)
{
	const char	*fix = "runtimectl stop; runtimed (at start the "
			    "daemon sets a damaged store aside and recovers "
			    "what it can)";
	sqlite3		*db = NULL;
	sqlite3_stmt	*st = NULL;
	const char	*res = NULL;
	char		*path, *fixdisk;
	int		 rc;

	if (s->has_detail && s->store_write_error.ptr != NULL) {
		xasprintf(&fixdisk, "free disk space in %s", dir);
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "store", fixdisk, "the "
		    "daemon cannot write its store: %.*s",
		    (int)s->store_write_error.len, s->store_write_error.ptr);
		free(fixdisk);
	}
	if (s->has_detail && s->store_damage.ptr != NULL)
		ctl_doctor_add(d, CTL_DOCTOR_WARNING, "store", "read the "
		    "message; then remove the copy it names", "the store was "
		    "found damaged at start: %.*s", (int)s->store_damage.len,
		    s->store_damage.ptr);
	xasprintf(&path, "%s/runtimed.db", dir);
	if (access(path, F_OK) != 0) {
		ctl_doctor_add(d, CTL_DOCTOR_OK, "store", NULL, "no store yet "
		    "(%s is created at the first start)", path);
		free(path);
		return;
	}
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 5000);
		rc = sqlite3_prepare_v2(db, "PRAGMA quick_check;", -1, &st,
		    NULL);
	}
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		res = (const char *)sqlite3_column_text(st, 0);
		rc = SQLITE_OK;
	}
	if (rc == SQLITE_OK && res != NULL && strcmp(res, "ok") == 0)
		ctl_doctor_add(d, CTL_DOCTOR_OK, "store", NULL, "store %s "
		    "passes SQLite's integrity check", path);
	else
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "store", fix, "store %s "
		    "is damaged: %s", path, res != NULL ? res :
		    db != NULL ? sqlite3_errmsg(db) : "cannot open it");
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
}

/*
 * A kernel's five free TCP ports on 127.0.0.1 (0 where none), all
 * different: each socket is held until the last is bound, or two could
 * get one port.
 */
static void
ctl_doctor_ports(int ports[5])
{
	struct sockaddr_in	sin;
	socklen_t		len;
	int			fds[5], i;

	for (i = 0; i < 5; i++) {
		ports[i] = 0;
		if ((fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) == -1)
			continue;
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof sin;
		if (bind(fds[i], (struct sockaddr *)&sin, sizeof sin) == 0 &&
		    getsockname(fds[i], (struct sockaddr *)&sin, &len) == 0)
			ports[i] = ntohs(sin.sin_port);
	}
	while (i-- > 0) {
		if (fds[i] != -1)
			close(fds[i]);
	}
}

static int
ctl_doctor_listening(int port)
{
	struct sockaddr_in	sin;
	int			fd, r;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	r = connect(fd, (struct sockaddr *)&sin, sizeof sin);
	close(fd);
	return (r == 0);
}

/*
 * Start one kernelspec as the agent would (its argv, its env, a fresh
 * connection file) and wait until it listens on its shell port.  Returns
 * NULL when it did, else why not; caller frees.
 */
static char *
ctl_doctor_start(struct kernelspec *ks, const char *tmp)
{
	struct json_object	*c;
	char			*conn, *logpath, **argv, *why = NULL, *v;
	char			*text = NULL, *cause = NULL, key[33], *nl;
	const char		*names[] = { "shell_port", "iopub_port",
				    "stdin_port", "control_port", "hb_port" };
	unsigned char		 raw[16];
	int			 ports[5], i, fd, status;
	int64_t			 deadline;
	size_t			 len, k;
	pid_t			 pid;

	xasprintf(&conn, "%s/%s.json", tmp, kernelspec_name(ks));
	xasprintf(&logpath, "%s/%s.log", tmp, kernelspec_name(ks));
	c = json_object_new_object();
	ctl_doctor_ports(ports);
	for (i = 0; i < 5; i++) {
		json_object_object_add(c, names[i],
		    json_object_new_int(ports[i]));
	}
	arc4random_buf(raw, sizeof raw);
	util_hex(raw, sizeof raw, key);
	json_object_object_add(c, "ip", json_object_new_string("127.0.0.1"));
	json_object_object_add(c, "transport", json_object_new_string("tcp"));
	json_object_object_add(c, "key", json_object_new_string(key));
	json_object_object_add(c, "signature_scheme",
	    json_object_new_string("hmac-sha256"));
	json_object_object_add(c, "kernel_name",
	    json_object_new_string(kernelspec_name(ks)));
	json_object_to_file(conn, c);
	json_object_put(c);

	argv = kernelspec_argv(ks, conn);
	switch (pid = fork()) {
	case -1:
		xasprintf(&why, "fork: %s", strerror(errno));
		goto out;
	case 0:
		setsid();
		for (k = 0; k < kernelspec_nenv(ks); k++) {
			v = kernelspec_env_value(ks, k);
			setenv(kernelspec_env_name(ks, k), v, 1);
		}
		if ((fd = open("/dev/null", O_RDONLY)) != -1)
			dup2(fd, 0);
		if ((fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	deadline = util_mono_ms() + CTL_DOCTOR_KERNEL_MS;
	for (;;) {
		if (ports[0] != 0 && ctl_doctor_listening(ports[0]))
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			if (util_read_file(logpath, &text, &len, &cause) != 0)
				free(cause);
			if (text != NULL) {
				/* Its last line says most. */
				while (len > 0 && text[len - 1] == '\n')
					text[--len] = '\0';
				nl = strrchr(text, '\n');
				xasprintf(&why, "it exited (status %d): %s",
				    WIFEXITED(status) ? WEXITSTATUS(status) :
				    128 + WTERMSIG(status),
				    nl != NULL ? nl + 1 : text);
			} else
				xasprintf(&why, "it exited (status %d)",
				    WIFEXITED(status) ? WEXITSTATUS(status) :
				    128 + WTERMSIG(status));
			break;
		}
		if (util_mono_ms() >= deadline) {
			xasprintf(&why, "it did not listen within %d s",
			    CTL_DOCTOR_KERNEL_MS / 1000);
			break;
		}
		usleep(50000);
	}
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
out:
	free(text);
	kernelspec_argv_free(argv);
	unlink(conn);
	unlink(logpath);
	free(conn);
	free(logpath);
	return (why);
}

/* Every kernelspec: found, readable, and starting. */
static void
ctl_doctor_kernels(struct ctl_doctor *d)
{
	struct json_object	*list, *item, *v;
	struct kernelspec	*ks;
	char			 tmp[] = "/tmp/runtimectl-doctor.XXXXXX";
	char			*cause = NULL, *why, *fix;
	const char		*name;
	size_t			 i, n;

	list = kernelspec_list();
	n = json_object_array_length(list);
	if (n == 0) {
		/*
		 * Debian's Python refuses pip outside a venv (PEP 668,
		 * externally-managed-environment); its package brings the
		 * kernelspec too.
		 */
		ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "kernels",
		    access("/etc/debian_version", F_OK) == 0 ?
		    "sudo apt-get install python3-ipykernel" :
		    "python3 -m pip install --user ipykernel && python3 -m "
		    "ipykernel install --user", "no kernelspec is installed: "
		    "notebooks cannot run code");
		json_object_put(list);
		return;
	}
	if (mkdtemp(tmp) == NULL) {
		ctl_doctor_add(d, CTL_DOCTOR_WARNING, "kernels", NULL,
		    "cannot try the kernels: mkdtemp: %s", strerror(errno));
		json_object_put(list);
		return;
	}
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		if (!json_object_object_get_ex(item, "name", &v))
			continue;
		name = json_object_get_string(v);
		if ((ks = kernelspec_find(name, &cause)) == NULL) {
			ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "kernels", NULL,
			    "kernel %s: %s", name, cause);
			free(cause);
			cause = NULL;
			continue;
		}
		if ((why = ctl_doctor_start(ks, tmp)) == NULL)
			ctl_doctor_add(d, CTL_DOCTOR_OK, "kernels", NULL,
			    "kernel %s (%s) starts", name,
			    kernelspec_resource_dir(ks));
		else {
			xasprintf(&fix, "reinstall it, or remove it: jupyter "
			    "kernelspec remove %s", name);
			ctl_doctor_add(d, CTL_DOCTOR_PROBLEM, "kernels", fix,
			    "kernel %s (%s) does not start: %s", name,
			    kernelspec_resource_dir(ks), why);
			free(fix);
			free(why);
		}
		kernelspec_free(ks);
	}
	rmdir(tmp);
	json_object_put(list);
}

int
ctl_doctor(struct ctl_ctx *ctx)
{
	struct proto_daemon_status_reply	 s;
	struct ctl_doctor			 d;
	struct json_object			*j;
	msgpack_unpacked			 u;
	char					*copy, *state;
	int					 got, running;

	memset(&d, 0, sizeof d);
	d.ctx = ctx;
	d.findings = json_object_new_array();
	memset(&s, 0, sizeof s);
	got = ctl_client_status(ctx->socket, 1, &u, &s) == 0;

	copy = xstrdup(ctx->socket);
	ctl_doctor_dir(&d, "socket directory", "socket directory",
	    dirname(copy));
	free(copy);
	ctl_doctor_socket(&d, &s, &running);

	if (got && s.has_detail)
		state = proto_str_dup(&s.state_dir);
	else
		state = xstrdup(ctx->state_dir);
	if (ctl_doctor_dir(&d, "state directory", "state directory",
	    state) == 0 && access(state, W_OK) != 0) {
		ctl_doctor_add(&d, CTL_DOCTOR_PROBLEM, "state directory",
		    "chmod u+w on it", "state directory %s is not writable",
		    state);
	}
	ctl_doctor_disk(&d, state);
	ctl_doctor_store(&d, state, &s);
	ctl_doctor_kernels(&d);
	free(state);
	if (got)
		msgpack_unpacked_destroy(&u);

	if (ctx->json) {
		j = json_object_new_object();
		json_object_object_add(j, "problems",
		    json_object_new_int(d.problems));
		json_object_object_add(j, "warnings",
		    json_object_new_int(d.warnings));
		json_object_object_add(j, "findings", d.findings);
		ctl_client_print_json(NULL, j);
	} else {
		if (!ctx->quiet)
			printf("%u problem%s, %u warning%s\n", d.problems,
			    d.problems == 1 ? "" : "s", d.warnings,
			    d.warnings == 1 ? "" : "s");
		json_object_put(d.findings);
	}
	return (d.problems > 0 ? CTL_EXIT_PROBLEMS : CTL_EXIT_OK);
}
