/* SPDX-License-Identifier: ISC */
/*
 * worker-comment.c: comment threads, kept in the notebook's metadata
 * under runtimed.comments so they travel with the .ipynb:
 *
 *	{"runtimed": {"comments": [{thread_id, anchor: {cell_id} |
 *	    {notebook: true}, resolved, comments: [{comment_id, author,
 *	    body, created_at}]}]}}
 *
 * Changes are read-modify-write: read the room (metadata and seq), change
 * a copy, write it back with the notebook_metadata edit and if_seq; a
 * "conflict" (someone else changed the room in between) starts over.
 */

#include <sys/random.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

#define WORKER_COMMENT_TRIES	8

struct worker_comment {
	struct worker_room	*room;
	worker_comment_fn	 fn;
	void			*fn_arg;
	worker_comment_cb	 cb;
	void			*cb_arg;
	int			 tries;
	struct json_object	*runtimed;	/* what we write */
};

static void	worker_comment_read(struct worker_comment *);
static void	worker_comment_finish(struct worker_comment *,
		    struct json_object *, const char *, const char *);
static void	worker_comment_written(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_comment_content(void *, struct worker_nb *, const char *,
		    const char *);

/* The thread list of notebook metadata (borrowed), or NULL. */
struct json_object *
worker_comment_threads(struct json_object *metadata)
{
	struct json_object	*rt, *c;

	if (metadata == NULL ||
	    !json_object_object_get_ex(metadata, "runtimed", &rt) ||
	    !json_object_is_type(rt, json_type_object) ||
	    !json_object_object_get_ex(rt, "comments", &c) ||
	    !json_object_is_type(c, json_type_array))
		return (NULL);
	return (c);
}

static void
worker_comment_finish(struct worker_comment *wc, struct json_object *threads,
    const char *code, const char *msg)
{
	wc->cb(wc->cb_arg, threads, code, msg);
	worker_room_unref(wc->room);
	json_object_put(wc->runtimed);
	free(wc);
}

static void
worker_comment_written(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_comment	*wc = arg;

	if (code != NULL && strcmp(code, PROTO_E_CONFLICT) == 0 &&
	    ++wc->tries < WORKER_COMMENT_TRIES) {
		log_debug("%s: conflict, try %d", __func__, wc->tries + 1);
		json_object_put(wc->runtimed);
		wc->runtimed = NULL;
		worker_comment_read(wc);
		return;
	}
	if (code != NULL) {
		worker_comment_finish(wc, NULL, code, msg);
		return;
	}
	worker_comment_finish(wc, json_object_object_get(wc->runtimed,
	    "comments"), NULL, NULL);
}

static void
worker_comment_content(void *arg, struct worker_nb *reply, const char *code,
    const char *msg)
{
	struct worker_comment	*wc = arg;
	struct json_object	*md, *rt, *m;
	struct proto_room_edit	 em;
	struct proto_edit	 ed;
	struct mpbuf		 b;
	const char		*ecode = PROTO_E_INVALID_ARGUMENT;
	char			*err = NULL;

	if (code != NULL) {
		worker_comment_finish(wc, NULL, code, msg);
		return;
	}
	md = reply->metadata;
	rt = NULL;
	if (md != NULL && json_object_object_get_ex(md, "runtimed", &rt) &&
	    json_object_is_type(rt, json_type_object))
		json_object_deep_copy(rt, &wc->runtimed, NULL);
	else
		wc->runtimed = json_object_new_object();
	if (worker_comment_threads(md) == NULL)
		json_object_object_add(wc->runtimed, "comments",
		    json_object_new_array());
	if (wc->fn(json_object_object_get(wc->runtimed, "comments"), reply,
	    wc->fn_arg, &err, &ecode) != 0) {
		worker_comment_finish(wc, NULL, ecode, err);
		free(err);
		return;
	}
	m = json_object_new_object();
	json_object_object_add(m, "runtimed", json_object_get(wc->runtimed));
	memset(&ed, 0, sizeof ed);
	ed.op = PROTO_EDIT_NOTEBOOK_METADATA;
	ed.metadata = worker_daemon_doc(m);
	memset(&em, 0, sizeof em);
	em.edits.pack = proto_edit_pack_one;
	em.edits.arg = &ed;
	worker_client_edit_who(&em);
	em.has_if_seq = 1;
	em.if_seq = (uint64_t)reply->seq;
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &em);
	worker_room_request(wc->room, PROTO_MSG_ROOM_EDIT, &b.sb,
	    worker_comment_written, wc);
	mpbuf_free(&b);
	json_object_put(m);
}

static void
worker_comment_read(struct worker_comment *wc)
{
	worker_room_get(wc->room, worker_comment_content, wc);
}

/*
 * Change the threads with fn (given the thread array to modify and the
 * ROOM_CONTENT reply), write them back, retrying on conflict; cb gets
 * the threads as written or a code and message.
 */
void
worker_comment_update(struct worker_room *room, worker_comment_fn fn,
    void *fn_arg, worker_comment_cb cb, void *cb_arg)
{
	struct worker_comment	*wc;

	wc = xcalloc(1, sizeof *wc);
	wc->room = room;
	worker_room_ref(room);
	wc->fn = fn;
	wc->fn_arg = fn_arg;
	wc->cb = cb;
	wc->cb_arg = cb_arg;
	worker_comment_read(wc);
}

/* A fresh id: prefix + 12 hex digits.  Caller frees. */
char *
worker_comment_id(const char *prefix)
{
	uint8_t	 rnd[6];
	char	*s;

	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		fatal("getrandom");
	xasprintf(&s, "%s%02x%02x%02x%02x%02x%02x", prefix, rnd[0], rnd[1],
	    rnd[2], rnd[3], rnd[4], rnd[5]);
	return (s);
}

/* The thread with this id in threads (borrowed), or NULL. */
struct json_object *
worker_comment_find(struct json_object *threads, const char *id)
{
	struct json_object	*t;
	const char		*tid;
	size_t			 i;

	for (i = 0; threads != NULL && i < json_object_array_length(threads);
	    i++) {
		t = json_object_array_get_idx(threads, i);
		tid = json_object_get_string(json_object_object_get(t,
		    "thread_id"));
		if (tid != NULL && strcmp(tid, id) == 0)
			return (t);
	}
	return (NULL);
}

/* One comment; takes nothing.  Caller puts. */
struct json_object *
worker_comment_new(const char *author, const char *body)
{
	struct json_object	*c;
	char			*id, ts[32];
	time_t			 now;
	struct tm		 tm;

	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	id = worker_comment_id("c_");
	c = json_object_new_object();
	json_object_object_add(c, "comment_id", json_object_new_string(id));
	json_object_object_add(c, "author", json_object_new_string(
	    author != NULL ? author : "agent"));
	json_object_object_add(c, "body", json_object_new_string(body));
	json_object_object_add(c, "created_at", json_object_new_string(ts));
	free(id);
	return (c);
}

/* A thread as the model reads it. */
void
worker_comment_print(struct evbuffer *text, struct json_object *t)
{
	struct json_object	*a, *cs, *c;
	size_t			 i;

	a = json_object_object_get(t, "anchor");
	evbuffer_add_printf(text, "thread %s on %s%s%s\n",
	    json_object_get_string(json_object_object_get(t, "thread_id")),
	    json_object_object_get(a, "cell_id") != NULL ? "cell " :
	    "the notebook", json_object_object_get(a, "cell_id") != NULL ?
	    json_object_get_string(json_object_object_get(a, "cell_id")) : "",
	    json_object_get_boolean(json_object_object_get(t, "resolved")) ?
	    " (resolved)" : "");
	cs = json_object_object_get(t, "comments");
	for (i = 0; cs != NULL && json_object_is_type(cs, json_type_array) &&
	    i < json_object_array_length(cs); i++) {
		c = json_object_array_get_idx(cs, i);
		evbuffer_add_printf(text, "  %s: %s\n",
		    json_object_get_string(json_object_object_get(c,
		    "author")), json_object_get_string(
		    json_object_object_get(c, "body")));
	}
}
