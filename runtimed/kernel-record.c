/* SPDX-License-Identifier: ISC */
/*
 * kernel-record.c: writes execution records to the store from a thread
 * of their own.  The store commits with fsync (3-20 ms measured on the
 * VM disk), and a run of 1+1 takes ~5 ms: written from the event loop,
 * every record would stall the next run.  Records are queued in order
 * (a run's in-flight record, then its final one) and written in order;
 * the store's connection is serialized (SQLITE_OPEN_FULLMUTEX), so the
 * loop's own store calls stay safe, waiting at most for one commit.
 */

#include <sys/queue.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* Finished records are kept this long besides the last RUNS_KEPT. */
#define KERNEL_RECORD_KEEP_US	(3600LL * 1000000)

struct kernel_record {
	char			 exec_id[37];
	char			 nb_id[37];
	void			*data;
	size_t			 len;
	TAILQ_ENTRY(kernel_record) entry;
};
static TAILQ_HEAD(, kernel_record) kernel_records =
    TAILQ_HEAD_INITIALIZER(kernel_records);
static void	*kernel_record_main(void *);

static pthread_mutex_t	kernel_record_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	kernel_record_wake = PTHREAD_COND_INITIALIZER;
static pthread_t	kernel_record_thread;
static int		kernel_record_running;
static int		kernel_record_quit;

static void *
kernel_record_main(void *arg)
{
	struct kernel_record	*kr;
	char			*cause = NULL;

	pthread_mutex_lock(&kernel_record_lock);
	for (;;) {
		while (TAILQ_EMPTY(&kernel_records) && !kernel_record_quit)
			pthread_cond_wait(&kernel_record_wake,
			    &kernel_record_lock);
		if ((kr = TAILQ_FIRST(&kernel_records)) == NULL)
			break;
		TAILQ_REMOVE(&kernel_records, kr, entry);
		pthread_mutex_unlock(&kernel_record_lock);

		if (store_exec_put(runtimed_store, kr->exec_id, kr->nb_id,
		    util_now_us(), kr->data, kr->len, &cause) != 0) {
			log_warnx("run %s: not recorded: %s", kr->exec_id,
			    cause);
			free(cause);
			cause = NULL;
		} else
			store_exec_prune(runtimed_store, kr->nb_id,
			    RUNTIMED_RUNS_KEPT,
			    util_now_us() - KERNEL_RECORD_KEEP_US);
		free(kr->data);
		free(kr);

		pthread_mutex_lock(&kernel_record_lock);
	}
	pthread_mutex_unlock(&kernel_record_lock);
	return (NULL);
}

/* Queue a record (data is taken over); written soon, in order. */
void
kernel_record_put(const char *exec_id, const char *nb_id, void *data,
    size_t len)
{
	struct kernel_record	*kr;

	if (runtimed_store == NULL) {
		free(data);
		return;
	}
	kr = xcalloc(1, sizeof *kr);
	snprintf(kr->exec_id, sizeof kr->exec_id, "%s", exec_id);
	snprintf(kr->nb_id, sizeof kr->nb_id, "%s", nb_id);
	kr->data = data;
	kr->len = len;
	pthread_mutex_lock(&kernel_record_lock);
	if (!kernel_record_running) {
		kernel_record_quit = 0;
		if (pthread_create(&kernel_record_thread, NULL,
		    kernel_record_main, NULL) != 0)
			fatalx("cannot start the record writer thread");
		kernel_record_running = 1;
	}
	TAILQ_INSERT_TAIL(&kernel_records, kr, entry);
	pthread_cond_signal(&kernel_record_wake);
	pthread_mutex_unlock(&kernel_record_lock);
}

/* Write what is queued and end the thread (before the store closes). */
void
kernel_record_stop(void)
{
	pthread_mutex_lock(&kernel_record_lock);
	if (!kernel_record_running) {
		pthread_mutex_unlock(&kernel_record_lock);
		return;
	}
	kernel_record_quit = 1;
	pthread_cond_signal(&kernel_record_wake);
	pthread_mutex_unlock(&kernel_record_lock);
	pthread_join(kernel_record_thread, NULL);
	kernel_record_running = 0;
}
