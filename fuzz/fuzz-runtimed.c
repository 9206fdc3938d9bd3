/* SPDX-License-Identifier: ISC */
/*
 * fuzz-runtimed.c: the daemon in a box shared by fuzz-daemon.c and
 * fuzz-agentframes.c (fuzz-runtimed.h).
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

#include "fuzz/fuzz-runtimed.h"

/* What runtimed.c defines for the rest of the daemon. */
struct event_base		*runtimed_base;
struct proto_incarnation	 runtimed_incarnation;
char				*runtimed_state_dir;
struct store			*runtimed_store;
struct store_writer		*runtimed_writer;
int				 runtimed_log_level;

char			 fuzz_runtimed_dir[64];
static int		 fuzz_runtimed_home = -1;
static const char	*fuzz_runtimed_name;
static void		(*fuzz_runtimed_sweep)(void);

static void	fuzz_runtimed_cleanup(void);

/* At exit: close the store and remove the state directory. */
static void
fuzz_runtimed_cleanup(void)
{
	fuzz_runtimed_close_store();
	fuzz_runtimed_sweep();
	rmdir(fuzz_runtimed_dir);
}

/* Into the state directory (ours) or back to where the target started. */
void
fuzz_runtimed_cwd(int ours)
{
	if (ours ? chdir(fuzz_runtimed_dir) : fchdir(fuzz_runtimed_home)) {
		fprintf(stderr, "%s: chdir: ", fuzz_runtimed_name);
		perror(NULL);
		abort();
	}
}

/*
 * One loop pass, then what the store's writer finished (its replies), so
 * a run does not depend on how fast the writer thread is.
 */
void
fuzz_runtimed_pass(void)
{
	event_base_loop(runtimed_base, EVLOOP_NONBLOCK);
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
}

/* The store and its writer, as runtimed.c opens them. */
void
fuzz_runtimed_open_store(void)
{
	char	*cause = NULL;

	if ((runtimed_store = store_open(runtimed_state_dir, &cause)) ==
	    NULL) {
		fprintf(stderr, "%s: %s\n", fuzz_runtimed_name, cause);
		abort();
	}
	runtimed_writer = store_writer_create(runtimed_store, runtimed_base);
}

/* As runtimed.c stops: the writer done first, then the store. */
void
fuzz_runtimed_close_store(void)
{
	store_writer_free(runtimed_writer);
	runtimed_writer = NULL;
	if (runtimed_store != NULL)
		store_close(runtimed_store);
	runtimed_store = NULL;
}

/*
 * Set the daemon up for target name: prepare fills the new state
 * directory before the store and the rooms start; sweep empties it at
 * exit, after the store is closed.
 */
void
fuzz_runtimed_init(const char *name, void (*prepare)(void),
    void (*sweep)(void))
{
	fuzz_runtimed_name = name;
	fuzz_runtimed_sweep = sweep;
	log_open(name, getenv("FUZZ_TRACE") != NULL ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_WARN, getenv("FUZZ_TRACE") != NULL ? NULL : "/dev/null");
	signal(SIGPIPE, SIG_IGN);
	snprintf(fuzz_runtimed_dir, sizeof fuzz_runtimed_dir,
	    "%s/%s-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
	    "/tmp", name);
	if (mkdtemp(fuzz_runtimed_dir) == NULL ||
	    (fuzz_runtimed_home = open(".", O_RDONLY | O_DIRECTORY)) == -1) {
		perror(name);
		exit(1);
	}
	atexit(fuzz_runtimed_cleanup);
	runtimed_state_dir = xstrdup(fuzz_runtimed_dir);
	prepare();
	runtimed_base = event_base_new();
	runtimed_incarnation.pid = getpid();
	runtimed_incarnation.started_at = util_now_us();
	snprintf(runtimed_incarnation.version,
	    sizeof runtimed_incarnation.version, "%s", RUNTIMED_VERSION);
	room_autosave_set(0, -1);
	kernel_pool_set_size(0);
	fuzz_runtimed_open_store();
	room_start();
}

/*
 * For the targets that start no kernel (fuzz-daemon, fuzz-store): a file
 * where the kernels' directory would be, so every kernel fails to get its
 * runtime directory and is dead from the start.  A prepare for
 * fuzz_runtimed_init.
 */
void
fuzz_runtimed_no_kernels(void)
{
	int	fd;

	fuzz_runtimed_cwd(1);
	if ((fd = open("kernels", O_WRONLY | O_CREAT, 0600)) == -1) {
		fprintf(stderr, "%s: kernels: ", fuzz_runtimed_name);
		perror(NULL);
		exit(1);
	}
	close(fd);
	fuzz_runtimed_cwd(0);
}

/* Empty the state directory (the cwd) but for the "kernels" file. */
void
fuzz_runtimed_empty(void)
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
			fprintf(stderr, "%s: left %s/%s\n", fuzz_runtimed_name,
			    fuzz_runtimed_dir, de->d_name);
	}
	closedir(d);
}

/* At exit, after fuzz_runtimed_no_kernels: every file, "kernels" too. */
void
fuzz_runtimed_no_kernels_cleanup(void)
{
	if (chdir(fuzz_runtimed_dir) == 0) {
		fuzz_runtimed_empty();
		unlink("kernels");
	}
}

/* Read what the daemon sent the harness's end; 1 once it has closed. */
int
fuzz_runtimed_drain(int fd)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		;
	return (n == 0);
}

/* One frame of b's body to fd, whole (b is freed). */
void
fuzz_runtimed_frame(int fd, uint16_t type, uint32_t id, struct mpbuf *b)
{
	uint8_t	h[PROTO_HEADER_SIZE];

	proto_header_make(h, type, id, (uint32_t)b->sb.size);
	if (write(fd, h, sizeof h) != sizeof h ||
	    write(fd, b->sb.data, b->sb.size) != (ssize_t)b->sb.size)
		abort();
	mpbuf_free(b);
}

/* HELLO as the worker sends it, labelled. */
void
fuzz_runtimed_hello(int fd, const char *label)
{
	struct proto_hello	hello;
	struct mpbuf		b;

	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_WORKER);
	snprintf(hello.label, sizeof hello.label, "%s", label);
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	fuzz_runtimed_frame(fd, PROTO_MSG_HELLO, 1, &b);
}

/*
 * The harness's client is done (fd, its end): read the daemon's answers
 * until it closes, then let it let go of the connection; at most passes
 * loop passes each.
 */
void
fuzz_runtimed_hangup(int fd, int passes)
{
	int	i;

	shutdown(fd, SHUT_WR);
	for (i = 0; i < passes; i++) {
		fuzz_runtimed_pass();
		if (fuzz_runtimed_drain(fd))
			break;
	}
	close(fd);
	for (i = 0; i < passes && server_client_count() > 0; i++)
		fuzz_runtimed_pass();
	fuzz_runtimed_pass();
}

/*
 * Next input: a daemon that knows nothing (its rooms and queued records
 * gone, the store empty, the state directory emptied by sweep, the cwd).
 */
void
fuzz_runtimed_reset(void (*sweep)(void))
{
	room_free_all();
	room_exec_flush();
	fuzz_runtimed_close_store();
	sweep();
	runtimed_warn_clear();
	fuzz_runtimed_open_store();
	room_start();
}
