/* SPDX-License-Identifier: ISC */
/*
 * agent-blob.c: a large output value is hashed, written and fsynced into
 * the blob store (common/blob.c) on one long-lived thread, so the loop
 * goes on reading the kernel meanwhile, and the frames to the daemon keep
 * the order they would have had were the writes done on the loop.
 *
 * The send queue holds, in order, outputs waiting for their blobs and
 * copies of the frames sent after them (agent_send asks agent_blob_hold
 * first).  An output leaves only once each of its blobs is durable or
 * failed: its callback (agent-exec.c) then names the blob or keeps the
 * value inline with a warning, as blob_put on the loop did.  So an
 * AGENT_OUTPUT naming a blob never reaches the daemon before the blob is
 * on disk, and nothing sent after it overtakes it.  The writer takes the
 * jobs in order, so a second output of the same new value finds the
 * first one's file (blob_put's stat) and writes nothing.
 *
 * What waits is bounded: once AGENT_BLOB_HELD_MAX bytes (values and
 * frame copies) wait, the loop waits for the writer before queueing
 * more, so the agent holds at most that plus the value at hand.  At exit
 * the queue is written and sent while the daemon is there, else dropped.
 * See docs/decisions/034-agent-blob-writer.md.
 */

#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

/* Most bytes waiting in the send queue before the loop waits. */
#define AGENT_BLOB_HELD_MAX	(64 * 1024 * 1024)

struct agent_blob {
	char			*dir;		/* the state dir */
	struct json_object	*value;		/* a reference; loop only */
	const char		*data;		/* value's bytes, read-only */
	size_t			 len;
	char			 hex[65];	/* these three: the writer's */
	int			 failed;
	char			*cause;
	int			 done;		/* under the lock */
	TAILQ_ENTRY(agent_blob)	 entry;		/* the writer's queue */
};
TAILQ_HEAD(agent_blob_jobs, agent_blob);

/* A frame, or an output waiting for its blobs, in sending order. */
struct agent_blob_item {
	uint16_t		 type;
	uint32_t		 id;
	void			*body;
	size_t			 len;		/* bytes held */
	struct agent_blob	**blobs;	/* NULL for a frame */
	size_t			 nblobs;
	agent_blob_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(agent_blob_item) entry;
};

static TAILQ_HEAD(, agent_blob_item) agent_blob_items =
    TAILQ_HEAD_INITIALIZER(agent_blob_items);
static size_t			 agent_blob_held;
static int			 agent_blob_sending;	/* in a callback */

static struct event_base	*agent_blob_base;
static int			 agent_blob_started;
static pthread_t		 agent_blob_thread;
static pthread_mutex_t		 agent_blob_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t		 agent_blob_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t		 agent_blob_written =
				    PTHREAD_COND_INITIALIZER;
static struct agent_blob_jobs	 agent_blob_queued =
    TAILQ_HEAD_INITIALIZER(agent_blob_queued);
static int			 agent_blob_quit;	/* 2: drop the rest */
static int			 agent_blob_pipe[2] = { -1, -1 };
static struct event		*agent_blob_ev;

static void	*agent_blob_main(void *);
static void	 agent_blob_start(void);
static void	 agent_blob_read_cb(evutil_socket_t, short, void *);
static int	 agent_blob_ready(struct agent_blob_item *);
static void	 agent_blob_wait_head(void);
static void	 agent_blob_drain(void);
static void	 agent_blob_room(size_t);
static void	 agent_blob_call(struct agent_blob_item *);
static void	 agent_blob_item_free(struct agent_blob_item *);

/* The writer: each job in turn, then a byte on the pipe for the loop. */
static void *
agent_blob_main(void *arg)
{
	struct agent_blob	*b;
	char			 c = 0;

	pthread_mutex_lock(&agent_blob_lock);
	for (;;) {
		while (TAILQ_EMPTY(&agent_blob_queued) && !agent_blob_quit)
			pthread_cond_wait(&agent_blob_wake, &agent_blob_lock);
		if ((b = TAILQ_FIRST(&agent_blob_queued)) == NULL ||
		    agent_blob_quit == 2)
			break;
		TAILQ_REMOVE(&agent_blob_queued, b, entry);
		pthread_mutex_unlock(&agent_blob_lock);

		b->failed = blob_put(b->dir, b->data, b->len, b->hex,
		    &b->cause) != 0;

		pthread_mutex_lock(&agent_blob_lock);
		b->done = 1;
		pthread_cond_broadcast(&agent_blob_written);
		pthread_mutex_unlock(&agent_blob_lock);
		while (write(agent_blob_pipe[1], &c, 1) == -1 &&
		    errno == EINTR)
			;
		pthread_mutex_lock(&agent_blob_lock);
	}
	pthread_mutex_unlock(&agent_blob_lock);
	return (NULL);
}

/* Start the writer at the first large value: an idle agent has none. */
static void
agent_blob_start(void)
{
	sigset_t	all, old;

	if (agent_blob_started)
		return;
	if (pipe2(agent_blob_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		fatal("pipe2");
	agent_blob_ev = event_new(agent_blob_base, agent_blob_pipe[0],
	    EV_READ | EV_PERSIST, agent_blob_read_cb, NULL);
	event_add(agent_blob_ev, NULL);
	agent_blob_quit = 0;
	/* Signals are the loop's (libevent's handlers). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&agent_blob_thread, NULL, agent_blob_main,
	    NULL) != 0)
		fatalx("cannot start the blob writer thread");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	agent_blob_started = 1;
}

/* Blobs were written: send what is ready. */
static void
agent_blob_read_cb(evutil_socket_t fd, short events, void *arg)
{
	char	buf[64];

	while (read(fd, buf, sizeof buf) > 0)
		;
	agent_blob_drain();
}

void
agent_blob_init(struct event_base *base)
{
	agent_blob_base = base;
}

/* Queue value (a string) to be written; a reference to it is kept. */
struct agent_blob *
agent_blob_write(const char *dir, struct json_object *value)
{
	struct agent_blob	*b;

	b = xcalloc(1, sizeof *b);
	b->dir = xstrdup(dir);
	b->value = json_object_get(value);
	b->data = json_object_get_string(value);
	b->len = (size_t)json_object_get_string_len(value);
	agent_blob_room(b->len);
	agent_blob_held += b->len;

	agent_blob_start();
	pthread_mutex_lock(&agent_blob_lock);
	TAILQ_INSERT_TAIL(&agent_blob_queued, b, entry);
	pthread_cond_signal(&agent_blob_wake);
	pthread_mutex_unlock(&agent_blob_lock);
	return (b);
}

/*
 * What became of a blob, once its output's callback runs: 0 with its
 * name in *hex, or -1 with why in *cause.
 */
int
agent_blob_result(struct agent_blob *b, const char **hex,
    const char **cause)
{
	if (b->failed) {
		*cause = b->cause != NULL ? b->cause : "not written";
		return (-1);
	}
	*hex = b->hex;
	return (0);
}

/*
 * Run cb(arg) on the loop once the n blobs are written (or failed) and
 * everything queued before is sent.  The blobs are freed after it.
 */
void
agent_blob_after(struct agent_blob **blobs, size_t n, agent_blob_cb cb,
    void *arg)
{
	struct agent_blob_item	*it;

	it = xcalloc(1, sizeof *it);
	it->blobs = xreallocarray(NULL, n, sizeof *it->blobs);
	memcpy(it->blobs, blobs, n * sizeof *blobs);
	it->nblobs = n;
	it->cb = cb;
	it->arg = arg;
	TAILQ_INSERT_TAIL(&agent_blob_items, it, entry);
}

/*
 * A frame about to be sent: if outputs wait for their blobs, queue a copy
 * behind them and return 1; else 0, and the caller sends it now.
 */
int
agent_blob_hold(uint16_t type, uint32_t id, const void *body, size_t len)
{
	struct agent_blob_item	*it;

	if (TAILQ_EMPTY(&agent_blob_items) || agent_blob_sending)
		return (0);
	agent_blob_room(len);
	if (TAILQ_EMPTY(&agent_blob_items))
		return (0);	/* the wait sent everything */
	it = xcalloc(1, sizeof *it);
	it->type = type;
	it->id = id;
	it->body = xmalloc(len > 0 ? len : 1);
	memcpy(it->body, body, len);
	it->len = len;
	TAILQ_INSERT_TAIL(&agent_blob_items, it, entry);
	agent_blob_held += len;
	return (1);
}

/* Are an item's blobs all written?  Under the lock. */
static int
agent_blob_ready(struct agent_blob_item *it)
{
	size_t	i;

	for (i = 0; i < it->nblobs; i++) {
		if (!it->blobs[i]->done)
			return (0);
	}
	return (1);
}

/* Wait until the writer is done with the first item's blobs. */
static void
agent_blob_wait_head(void)
{
	struct agent_blob_item	*it = TAILQ_FIRST(&agent_blob_items);

	pthread_mutex_lock(&agent_blob_lock);
	while (it != NULL && !agent_blob_ready(it))
		pthread_cond_wait(&agent_blob_written, &agent_blob_lock);
	pthread_mutex_unlock(&agent_blob_lock);
}

static void
agent_blob_item_free(struct agent_blob_item *it)
{
	struct agent_blob	*b;
	size_t			 i;

	for (i = 0; i < it->nblobs; i++) {
		b = it->blobs[i];
		agent_blob_held -= b->len;
		json_object_put(b->value);
		free(b->dir);
		free(b->cause);
		free(b);
	}
	agent_blob_held -= it->len;
	free(it->blobs);
	free(it->body);
	free(it);
}

/* An output's callback; its frames go straight out, nothing is before. */
static void
agent_blob_call(struct agent_blob_item *it)
{
	agent_blob_sending = 1;
	it->cb(it->arg);
	agent_blob_sending = 0;
}

/* Send the items at the head whose blobs are written, in order. */
static void
agent_blob_drain(void)
{
	struct agent_blob_item	*it;
	int			 ready;

	while ((it = TAILQ_FIRST(&agent_blob_items)) != NULL) {
		pthread_mutex_lock(&agent_blob_lock);
		ready = agent_blob_ready(it);
		pthread_mutex_unlock(&agent_blob_lock);
		if (!ready)
			break;
		TAILQ_REMOVE(&agent_blob_items, it, entry);
		if (it->cb != NULL)
			agent_blob_call(it);
		else
			agent_send_raw(it->type, it->id, it->body, it->len);
		agent_blob_item_free(it);
	}
}

/*
 * Make room for len more bytes: while the queue holds too much, wait for
 * the writer and send what it finished.  The one value at hand always
 * goes in, however large.
 */
static void
agent_blob_room(size_t len)
{
	while (agent_blob_held + len > AGENT_BLOB_HELD_MAX &&
	    !TAILQ_EMPTY(&agent_blob_items)) {
		agent_blob_wait_head();
		agent_blob_drain();
	}
}

/* Is anything waiting to be written or sent? */
int
agent_blob_pending(void)
{
	return (!TAILQ_EMPTY(&agent_blob_items));
}

/*
 * At exit: with send, finish every write and send the queue; without
 * (the daemon is gone), the writer stops after the value it is on, and
 * the outputs not written are given their callbacks as failed (what they
 * send goes nowhere).  A later value starts the writer again.
 */
void
agent_blob_finish(int send)
{
	struct agent_blob_item	*it;
	size_t			 i;

	while (send && !TAILQ_EMPTY(&agent_blob_items)) {
		agent_blob_wait_head();
		agent_blob_drain();
	}
	if (agent_blob_started) {
		pthread_mutex_lock(&agent_blob_lock);
		agent_blob_quit = send ? 1 : 2;
		pthread_cond_signal(&agent_blob_wake);
		pthread_mutex_unlock(&agent_blob_lock);
		pthread_join(agent_blob_thread, NULL);
		event_free(agent_blob_ev);
		agent_blob_ev = NULL;
		close(agent_blob_pipe[0]);
		close(agent_blob_pipe[1]);
		agent_blob_pipe[0] = agent_blob_pipe[1] = -1;
		agent_blob_started = 0;
		TAILQ_INIT(&agent_blob_queued);
	}
	while ((it = TAILQ_FIRST(&agent_blob_items)) != NULL) {
		TAILQ_REMOVE(&agent_blob_items, it, entry);
		for (i = 0; i < it->nblobs; i++) {
			if (!it->blobs[i]->done)
				it->blobs[i]->failed = 1;
		}
		if (it->cb != NULL)
			agent_blob_call(it);
		agent_blob_item_free(it);
	}
}
