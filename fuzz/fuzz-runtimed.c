/* SPDX-License-Identifier: ISC */
/*
 * fuzz-runtimed.c: the daemon in a box shared by fuzz-daemon.c and
 * fuzz-agentframes.c (fuzz-runtimed.h).
 */

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
