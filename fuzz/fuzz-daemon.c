/* SPDX-License-Identifier: ISC */
/*
 * fuzz-daemon.c: libFuzzer target for the daemon's handling of what a
 * client sends: the input is the byte stream of one client connection
 * (frames: 12-byte header, body).  The real server-client.c takes it on
 * a socketpair, with the real rooms, store (SQLite) and kernel code
 * behind it, as runtimed.c would set them up; so every handler's field
 * extraction runs on the fuzzer's bodies, and ROOM_EDIT edits a real
 * notebook.
 *
 * No process is ever started: the state directory holds a regular file
 * named "kernels", so each kernel fails to get its runtime directory and
 * is dead from the start (EXEC_RUN, KERNEL_RESTART and KERNEL_SELECT then
 * answer kernel_unavailable, as they do when a kernel cannot start).  The
 * daemon writes files where a client says (ROOM_CREATE then ROOM_SAVE):
 * it runs in the private state directory, and frames whose body holds
 * '/' or ".." (which could name a file elsewhere) are left out.  After
 * each input the rooms are freed and the store starts empty.
 */

#include <sys/socket.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed/runtimed.h"
#include "runtimed/store.h"

#define FUZZ_DAEMON_MAX_PASSES	512

/* What runtimed.c defines for the rest of the daemon. */
struct event_base		*runtimed_base;
struct proto_incarnation	 runtimed_incarnation;
char				*runtimed_state_dir;
struct store			*runtimed_store;
struct store_writer		*runtimed_writer;
int				 runtimed_log_level;

/* On tmpfs where there is one: SQLite syncs every commit. */
static char	 fuzz_daemon_dir[64];
static int	 fuzz_daemon_home = -1;
static int	 fuzz_daemon_stops;

static void	fuzz_daemon_pass(void);
static void	fuzz_daemon_cwd(int);
static void	fuzz_daemon_sweep(void);
static void	fuzz_daemon_cleanup(void);
static void	fuzz_daemon_open_store(void);
static void	fuzz_daemon_init(void);
static int	fuzz_daemon_escapes(const uint8_t *, size_t);
static int	fuzz_daemon_drain(int);
static void	fuzz_daemon_write(int, const uint8_t *, size_t);

/* DAEMON_STOP: the real one ends the process; count it instead. */
void
runtimed_stop(void)
{
	fuzz_daemon_stops++;
}

/*
 * One loop pass, then what the store's writer finished (its replies), so
 * a run does not depend on how fast the writer thread is.
 */
static void
fuzz_daemon_pass(void)
{
	event_base_loop(runtimed_base, EVLOOP_NONBLOCK);
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
}

static void
fuzz_daemon_cwd(int ours)
{
	if (ours ? chdir(fuzz_daemon_dir) : fchdir(fuzz_daemon_home)) {
		perror("fuzz-daemon: chdir");
		abort();
	}
}

/* Empty the state directory but for the "kernels" file. */
static void
fuzz_daemon_sweep(void)
{
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(".")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "kernels") != 0 &&
		    unlink(de->d_name) != 0 && errno == EISDIR)
			fprintf(stderr, "fuzz-daemon: left %s/%s\n",
			    fuzz_daemon_dir, de->d_name);
	}
	closedir(d);
}

static void
fuzz_daemon_cleanup(void)
{
	store_writer_free(runtimed_writer);
	runtimed_writer = NULL;
	if (runtimed_store != NULL)
		store_close(runtimed_store);
	runtimed_store = NULL;
	if (chdir(fuzz_daemon_dir) == 0) {
		fuzz_daemon_sweep();
		unlink("kernels");
	}
	rmdir(fuzz_daemon_dir);
}

static void
fuzz_daemon_open_store(void)
{
	char	*cause = NULL;

	if ((runtimed_store = store_open(runtimed_state_dir, &cause)) ==
	    NULL) {
		fprintf(stderr, "fuzz-daemon: %s\n", cause);
		abort();
	}
	runtimed_writer = store_writer_create(runtimed_store, runtimed_base);
}

static void
fuzz_daemon_init(void)
{
	int	fd;

	log_open("fuzz-daemon", getenv("FUZZ_TRACE") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARN, getenv("FUZZ_TRACE") != NULL ?
	    NULL : "/dev/null");
	signal(SIGPIPE, SIG_IGN);
	snprintf(fuzz_daemon_dir, sizeof fuzz_daemon_dir,
	    "%s/fuzz-daemon-XXXXXX", access("/dev/shm", W_OK) == 0 ?
	    "/dev/shm" : "/tmp");
	if (mkdtemp(fuzz_daemon_dir) == NULL ||
	    (fuzz_daemon_home = open(".", O_RDONLY | O_DIRECTORY)) == -1) {
		perror("fuzz-daemon");
		exit(1);
	}
	atexit(fuzz_daemon_cleanup);
	runtimed_state_dir = xstrdup(fuzz_daemon_dir);
	fuzz_daemon_cwd(1);
	if ((fd = open("kernels", O_WRONLY | O_CREAT, 0600)) == -1) {
		perror("fuzz-daemon: kernels");
		exit(1);
	}
	close(fd);
	runtimed_base = event_base_new();
	runtimed_incarnation.pid = getpid();
	runtimed_incarnation.started_at = util_now_us();
	snprintf(runtimed_incarnation.version,
	    sizeof runtimed_incarnation.version, "%s", RUNTIMED_VERSION);
	room_autosave_set(0, -1);
	kernel_pool_set_size(0);
	fuzz_daemon_open_store();
	room_start();
	fuzz_daemon_cwd(0);
}

/* Could this body name a file outside the state directory? */
static int
fuzz_daemon_escapes(const uint8_t *body, size_t len)
{
	return (memchr(body, '/', len) != NULL ||
	    memmem(body, len, "..", 2) != NULL);
}

/* Read what the daemon answered; 1 once it has closed its end. */
static int
fuzz_daemon_drain(int fd)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		;
	return (n == 0);
}

static void
fuzz_daemon_write(int fd, const uint8_t *p, size_t len)
{
	ssize_t	n;
	int	passes = 0;

	while (len > 0 && passes < FUZZ_DAEMON_MAX_PASSES) {
		n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN)
			return;
		/* Full: let the daemon read and answer. */
		fuzz_daemon_pass();
		fuzz_daemon_drain(fd);
		passes++;
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct proto_header	 hdr;
	size_t			 blen;
	int			 sv[2], i;

	if (!ready) {
		fuzz_daemon_init();
		ready = 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	fuzz_daemon_cwd(1);
	server_client_accept(sv[0]);
	while (size >= PROTO_HEADER_SIZE) {
		proto_header_unpack(data, &hdr);
		blen = size - PROTO_HEADER_SIZE;
		if (blen > hdr.length)
			blen = hdr.length;
		if (!fuzz_daemon_escapes(data + PROTO_HEADER_SIZE, blen))
			fuzz_daemon_write(sv[1], data,
			    PROTO_HEADER_SIZE + blen);
		data += PROTO_HEADER_SIZE + blen;
		size -= PROTO_HEADER_SIZE + blen;
	}
	fuzz_daemon_write(sv[1], data, size);
	shutdown(sv[1], SHUT_WR);
	for (i = 0; i < FUZZ_DAEMON_MAX_PASSES; i++) {
		fuzz_daemon_pass();
		if (fuzz_daemon_drain(sv[1]))
			break;
	}
	close(sv[1]);
	for (i = 0; i < FUZZ_DAEMON_MAX_PASSES && server_client_count() > 0;
	    i++)
		fuzz_daemon_pass();
	fuzz_daemon_pass();

	/* Next input: a daemon that knows nothing. */
	room_free_all();
	room_exec_flush();
	store_writer_free(runtimed_writer);
	runtimed_writer = NULL;
	store_close(runtimed_store);
	fuzz_daemon_sweep();
	fuzz_daemon_open_store();
	room_start();
	fuzz_daemon_cwd(0);
	return (0);
}
