/* SPDX-License-Identifier: ISC */
/*
 * store-writer.c: the one thread that writes the store, so the event
 * loop never waits for the disk.  The loop queues jobs (a journal entry,
 * a snapshot, a forget, an execution record); the writer takes every job
 * queued so far and commits them in one transaction (one fsync for the
 * group: group commit), then hands them back to the loop through a pipe,
 * where each job's done callback runs in the order the jobs were queued.
 * A reply that needs durability (an edit's, a save's) is sent from there.
 * A save's temporary file, begun by the loop, is finished (its tail,
 * decision 038) and committed (fsync, rename, fsync of the directory:
 * atomic_commit) by a second thread, the file thread, one save at a
 * time in order, so megabytes of a notebook's outputs never hold up the
 * journal's commits behind them; its completions join the same list.
 *
 * The store's connection is serialized (SQLITE_OPEN_FULLMUTEX) and the
 * loop's own reads of it are rare (a dormant room waking, the record of
 * an old run); those first call store_writer_sync, so they see what was
 * queued before them.  See docs/decisions/021-durable-writer.md.
 */

#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common.h"
#include "store.h"

/* Finished records are kept this long besides the last `keep`. */
#define STORE_WRITER_KEEP_US	(3600LL * 1000000)

enum store_writer_kind {
	STORE_WRITER_JOURNAL,
	STORE_WRITER_SNAPSHOT,
	STORE_WRITER_FORGET,
	STORE_WRITER_EXEC,
	STORE_WRITER_SAVE,	/* a file's tail and atomic_commit: file thread */
	STORE_WRITER_FILE,	/* a files row */
};

struct store_writer_job {
	enum store_writer_kind	 kind;
	char			*id;		/* notebook */
	char			*exec_id;
	char			*path;
	char			*kernel;
	int			 dirty;
	uint64_t		 seq;
	int			 keep;
	struct atomic		*atomic;
	store_writer_fill	 fill;		/* SAVE: the file's rest */
	void			*fill_arg;
	struct store_file	 file;		/* its strings in path, id */
	void			*data;
	size_t			 len;
	store_writer_cb		 cb;
	void			*arg;
	int			 ok;
	char			*cause;
	TAILQ_ENTRY(store_writer_job) entry;
};
TAILQ_HEAD(store_writer_jobs, store_writer_job);

struct store_writer {
	struct store		*st;
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 wake;		/* jobs queued, or quit */
	pthread_cond_t		 idle;		/* a group is done */
	struct store_writer_jobs queued;
	struct store_writer_jobs saves;		/* the file thread's */
	struct store_writer_jobs done;
	int			 busy;		/* a group in flight */
	pthread_t		 file_thread;
	pthread_cond_t		 file_wake;	/* a save queued, or quit */
	int			 file_busy;	/* a save in flight */
	int			 quit;
	int			 pipe[2];
	struct event		*ev;
	uint64_t		 groups;
	uint64_t		 jobs;
	int			 failed;	/* checkpoint before the next */
};

static void	*store_writer_main(void *);
static void	*store_writer_file_main(void *);
static void	 store_writer_finished(struct store_writer *,
		    struct store_writer_jobs *);
static int	 store_writer_run(struct store_writer *,
		    struct store_writer_job *);
static void	 store_writer_group(struct store_writer *,
		    struct store_writer_jobs *);
static void	 store_writer_deliver(struct store_writer *);
static void	 store_writer_read_cb(evutil_socket_t, short, void *);
static void	 store_writer_job_free(struct store_writer_job *);
static struct store_writer_job *store_writer_job_create(
		    enum store_writer_kind, const char *, store_writer_cb,
		    void *);
static void	 store_writer_put(struct store_writer *,
		    struct store_writer_job *);

static void
store_writer_job_free(struct store_writer_job *j)
{
	free(j->id);
	free(j->exec_id);
	free(j->path);
	free(j->kernel);
	if (j->atomic != NULL)
		atomic_free(j->atomic);
	free(j->data);
	free(j->cause);
	free(j);
}

static struct store_writer_job *
store_writer_job_create(enum store_writer_kind kind, const char *id,
    store_writer_cb cb, void *arg)
{
	struct store_writer_job	*j;

	j = xcalloc(1, sizeof *j);
	j->kind = kind;
	j->id = xstrdup(id);
	j->cb = cb;
	j->arg = arg;
	return (j);
}

/* One job, inside the group's transaction (writer thread). */
static int
store_writer_run(struct store_writer *w, struct store_writer_job *j)
{
	struct store_room	sr;

	switch (j->kind) {
	case STORE_WRITER_JOURNAL:
		return (store_journal_append(w->st, j->id, j->seq, j->data,
		    j->len, &j->cause));
	case STORE_WRITER_SNAPSHOT:
		memset(&sr, 0, sizeof sr);
		sr.notebook_id = j->id;
		sr.path = j->path;
		sr.kernel = j->kernel;
		sr.dirty = j->dirty;
		sr.seq = j->seq;
		sr.snapshot = j->data;
		sr.snapshot_len = j->len;
		return (store_room_snapshot(w->st, &sr, &j->cause));
	case STORE_WRITER_FORGET:
		return (store_room_forget(w->st, j->id, &j->cause));
	case STORE_WRITER_FILE:
		return (store_file_write(w->st, &j->file, &j->cause));
	case STORE_WRITER_SAVE:
		return (0);	/* never in a group: the file thread's */
	case STORE_WRITER_EXEC:
		if (store_exec_put(w->st, j->exec_id, j->id, util_now_us(),
		    j->data, j->len, &j->cause) != 0)
			return (-1);
		store_exec_prune(w->st, j->id, j->keep, util_now_us() -
		    STORE_WRITER_KEEP_US);
		return (0);
	}
	return (-1);
}

/*
 * Commit a group in one transaction.  A job that fails is rolled back
 * alone (its savepoint); when the store rolls back the whole transaction
 * (a full disk, an I/O error) or the commit fails, every job of the
 * group so far failed with it.
 */
static void
store_writer_group(struct store_writer *w, struct store_writer_jobs *g)
{
	struct store_writer_job	*j, *k;
	char			*cause = NULL;

	/* After a failure (a full disk), space freed goes to the WAL first. */
	if (w->failed && store_checkpoint(w->st) == 0)
		w->failed = 0;
	if (store_group_begin(w->st, &cause) != 0) {
		w->failed = 1;
		TAILQ_FOREACH(j, g, entry)
			j->cause = xstrdup(cause);
		free(cause);
		return;
	}
	TAILQ_FOREACH(j, g, entry) {
		j->ok = store_writer_run(w, j) == 0;
		if (j->ok || !store_group_lost(w->st))
			continue;
		/* The whole transaction is gone: so is the group so far. */
		for (k = TAILQ_FIRST(g); k != j; k = TAILQ_NEXT(k, entry)) {
			if (k->ok) {
				k->ok = 0;
				k->cause = xstrdup(j->cause != NULL ?
				    j->cause : "state database: rolled back");
			}
		}
		if (store_group_begin(w->st, &cause) != 0) {
			while ((k = TAILQ_NEXT(k, entry)) != NULL)
				k->cause = xstrdup(cause);
			free(cause);
			return;
		}
	}
	TAILQ_FOREACH(j, g, entry) {
		if (!j->ok)
			w->failed = 1;
	}
	if (store_group_commit(w->st, &cause) != 0) {
		w->failed = 1;
		TAILQ_FOREACH(j, g, entry) {
			if (j->ok) {
				j->ok = 0;
				j->cause = xstrdup(cause);
			}
		}
		free(cause);
	}
}

static void *
store_writer_main(void *arg)
{
	struct store_writer		*w = arg;
	struct store_writer_jobs	 g;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (TAILQ_EMPTY(&w->queued) && !w->quit)
			pthread_cond_wait(&w->wake, &w->lock);
		if (TAILQ_EMPTY(&w->queued))
			break;
		TAILQ_INIT(&g);
		TAILQ_CONCAT(&g, &w->queued, entry);
		w->busy = 1;
		pthread_mutex_unlock(&w->lock);

		store_writer_group(w, &g);

		pthread_mutex_lock(&w->lock);
		w->busy = 0;
		w->groups++;
		store_writer_finished(w, &g);
	}
	pthread_mutex_unlock(&w->lock);
	return (NULL);
}

/* Hand finished jobs to the loop (lock held). */
static void
store_writer_finished(struct store_writer *w, struct store_writer_jobs *g)
{
	int	was_empty = TAILQ_EMPTY(&w->done);
	char	c = 0;

	TAILQ_CONCAT(&w->done, g, entry);
	pthread_cond_broadcast(&w->idle);
	if (was_empty) {
		while (write(w->pipe[1], &c, 1) == -1 && errno == EINTR)
			;
	}
}

/*
 * The file thread: each save's tail (fill), then its atomic_commit, one
 * at a time in the order they were queued.  A fill that fails leaves
 * the temporary to the job, which removes it.
 */
static void *
store_writer_file_main(void *arg)
{
	struct store_writer		*w = arg;
	struct store_writer_jobs	 g;
	struct store_writer_job		*j;
	int				 rc;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (TAILQ_EMPTY(&w->saves) && !w->quit)
			pthread_cond_wait(&w->file_wake, &w->lock);
		if ((j = TAILQ_FIRST(&w->saves)) == NULL)
			break;
		TAILQ_REMOVE(&w->saves, j, entry);
		w->file_busy = 1;
		pthread_mutex_unlock(&w->lock);

		if (j->fill == NULL || j->fill(j->fill_arg,
		    atomic_fd(j->atomic), &j->cause) == 0) {
			/* ok -1: the target changed on disk (ATOMIC_CHANGED). */
			rc = atomic_commit(j->atomic, &j->cause);
			j->ok = rc == 0 ? 1 : rc == ATOMIC_CHANGED ? -1 : 0;
			j->atomic = NULL;	/* freed by atomic_commit */
		}

		pthread_mutex_lock(&w->lock);
		w->file_busy = 0;
		TAILQ_INIT(&g);
		TAILQ_INSERT_TAIL(&g, j, entry);
		store_writer_finished(w, &g);
	}
	pthread_mutex_unlock(&w->lock);
	return (NULL);
}

/*
 * Run the done callbacks of every finished job, in order (loop).  One
 * at a time off the shared list, so a callback that delivers again (by
 * store_writer_sync) keeps the order.
 */
static void
store_writer_deliver(struct store_writer *w)
{
	struct store_writer_job	*j;
	char			 buf[64];

	while (read(w->pipe[0], buf, sizeof buf) > 0)
		;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		if ((j = TAILQ_FIRST(&w->done)) != NULL)
			TAILQ_REMOVE(&w->done, j, entry);
		pthread_mutex_unlock(&w->lock);
		if (j == NULL)
			break;
		if (j->kind != STORE_WRITER_SAVE)
			store_set_write_error(w->st, j->ok ? NULL : j->cause);
		if (j->cb != NULL)
			j->cb(j->ok, j->cause, j->arg);
		store_writer_job_free(j);
	}
}

static void
store_writer_read_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	store_writer_deliver(arg);
}

/* Start the writer of a store; completions arrive on base. */
struct store_writer *
store_writer_create(struct store *st, struct event_base *base)
{
	struct store_writer	*w;

	w = xcalloc(1, sizeof *w);
	w->st = st;
	TAILQ_INIT(&w->queued);
	TAILQ_INIT(&w->saves);
	TAILQ_INIT(&w->done);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	pthread_cond_init(&w->file_wake, NULL);
	pthread_cond_init(&w->idle, NULL);
	if (pipe2(w->pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		fatal("pipe2");
	w->ev = event_new(base, w->pipe[0], EV_READ | EV_PERSIST,
	    store_writer_read_cb, w);
	event_add(w->ev, NULL);
	if (pthread_create(&w->thread, NULL, store_writer_main, w) != 0)
		fatalx("cannot start the store writer thread");
	if (pthread_create(&w->file_thread, NULL, store_writer_file_main,
	    w) != 0)
		fatalx("cannot start the store's file thread");
	return (w);
}

/* Write everything queued, deliver it, end the thread. */
void
store_writer_free(struct store_writer *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_signal(&w->wake);
	pthread_cond_signal(&w->file_wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_join(w->file_thread, NULL);
	store_writer_deliver(w);
	log_debug("store writer: %llu jobs in %llu groups",
	    (unsigned long long)w->jobs, (unsigned long long)w->groups);
	event_free(w->ev);
	close(w->pipe[0]);
	close(w->pipe[1]);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->file_wake);
	pthread_cond_destroy(&w->idle);
	free(w);
}

/*
 * Wait until every job queued so far is committed and delivered.  Only
 * for what is rare and must read its own writes (a wake from the store,
 * an old run's record, creating an untitled notebook): never on the
 * path of a read, an edit or a run.
 */
void
store_writer_sync(struct store_writer *w)
{
	pthread_mutex_lock(&w->lock);
	while (!TAILQ_EMPTY(&w->queued) || w->busy ||
	    !TAILQ_EMPTY(&w->saves) || w->file_busy)
		pthread_cond_wait(&w->idle, &w->lock);
	pthread_mutex_unlock(&w->lock);
	store_writer_deliver(w);
}

static void
store_writer_put(struct store_writer *w, struct store_writer_job *j)
{
	pthread_mutex_lock(&w->lock);
	if (j->kind == STORE_WRITER_SAVE) {
		TAILQ_INSERT_TAIL(&w->saves, j, entry);
		pthread_cond_signal(&w->file_wake);
	} else {
		TAILQ_INSERT_TAIL(&w->queued, j, entry);
		pthread_cond_signal(&w->wake);
	}
	w->jobs++;
	pthread_mutex_unlock(&w->lock);
}

/* Append a journal entry (data is taken over); cb once it is durable. */
void
store_writer_journal(struct store_writer *w, const char *id, uint64_t seq,
    void *data, size_t len, store_writer_cb cb, void *arg)
{
	struct store_writer_job	*j;

	j = store_writer_job_create(STORE_WRITER_JOURNAL, id, cb, arg);
	j->seq = seq;
	j->data = data;
	j->len = len;
	store_writer_put(w, j);
}

/* Replace a room's snapshot (r->snapshot is taken over). */
void
store_writer_snapshot(struct store_writer *w, const struct store_room *r,
    void *snapshot, store_writer_cb cb, void *arg)
{
	struct store_writer_job	*j;

	j = store_writer_job_create(STORE_WRITER_SNAPSHOT, r->notebook_id,
	    cb, arg);
	if (r->path != NULL)
		j->path = xstrdup(r->path);
	j->kernel = xstrdup(r->kernel);
	j->dirty = r->dirty;
	j->seq = r->seq;
	j->data = snapshot;
	j->len = r->snapshot_len;
	store_writer_put(w, j);
}

/* Forget a room and its journal. */
void
store_writer_forget(struct store_writer *w, const char *id,
    store_writer_cb cb, void *arg)
{
	store_writer_put(w, store_writer_job_create(STORE_WRITER_FORGET, id,
	    cb, arg));
}

/*
 * Store an execution record (data is taken over) and prune the
 * notebook's old ones down to the newest keep and the last hour's.
 */
void
store_writer_exec(struct store_writer *w, const char *exec_id,
    const char *nb_id, int keep, void *data, size_t len, store_writer_cb cb,
    void *arg)
{
	struct store_writer_job	*j;

	j = store_writer_job_create(STORE_WRITER_EXEC, nb_id, cb, arg);
	j->exec_id = xstrdup(exec_id);
	j->keep = keep;
	j->data = data;
	j->len = len;
	store_writer_put(w, j);
}

/*
 * Commit a save's temporary file (a is taken over; atomic_commit frees
 * it): fill (if any) writes the rest of it on the writer's thread, then
 * fsync, rename over the target, fsync the directory.  cb once the new
 * file is durable, or with why not (the target is then unchanged).
 * fill_arg is the thread's until cb runs.
 */
void
store_writer_save(struct store_writer *w, struct atomic *a,
    store_writer_fill fill, void *fill_arg, store_writer_cb cb, void *arg)
{
	struct store_writer_job	*j;

	j = store_writer_job_create(STORE_WRITER_SAVE, "", cb, arg);
	j->atomic = a;
	j->fill = fill;
	j->fill_arg = fill_arg;
	store_writer_put(w, j);
}

/* Remember a file's id (the files table, decision 018). */
void
store_writer_file(struct store_writer *w, const struct store_file *f,
    store_writer_cb cb, void *arg)
{
	struct store_writer_job	*j;

	j = store_writer_job_create(STORE_WRITER_FILE, f->notebook_id, cb,
	    arg);
	j->path = xstrdup(f->path);
	j->file = *f;
	j->file.path = j->path;
	j->file.notebook_id = j->id;
	store_writer_put(w, j);
}
