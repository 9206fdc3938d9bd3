/* SPDX-License-Identifier: ISC */
/*
 * web-nb.c: one notebook on view.  Its own connection to the daemon
 * joins the room (ROOM_OPEN by notebook_id); every ROOM_CHANGED makes it
 * read the room again (ROOM_GET, then VIEW_STATE), render every cell
 * (web-render.c) and send the pages only the cells whose HTML changed,
 * with the order and the state, as one Server-Sent Event whose id is the
 * room's seq.  A page that reconnects with Last-Event-ID gets the cells
 * the daemon's change log (ROOM_CHANGES) names since then, or everything
 * when the log no longer reaches back.  Writes (interrupt, restart, a
 * comment) go over the same connection.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent.h>

#include <openssl/rand.h>

#include "web.h"

/* How long a notebook stays joined after its last page closed. */
#define WEB_NB_LINGER_SECS	10
#define WEB_NB_COMMENT_TRIES	8

enum web_nb_state {
	WEB_NB_HELLO,
	WEB_NB_JOINING,
	WEB_NB_READY,
	WEB_NB_DEAD
};

struct web_cell {
	char			*id;
	char			*html;
};

struct web_stream {
	struct web_nb		*nb;
	struct evhttp_request	*req;
	uint64_t		 last;		/* Last-Event-ID */
	int			 has_last;
	int			 started;	/* sent its first event */
	TAILQ_ENTRY(web_stream)	 entry;
};

typedef void (*web_nb_cb)(struct web_nb *, uint16_t, const msgpack_object *,
    void *);
struct web_req {
	uint32_t		 id;
	web_nb_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(web_req)	 entry;
};

/* A POST waiting for the daemon; req NULL once its browser left. */
struct web_action {
	struct web_nb		*nb;
	struct evhttp_request	*req;
	char			*what;
	enum proto_edit_op	 op;		/* edit, insert, resolve */
	struct web_post		 f;
	int			 tries;
};

struct web_nb {
	char			 id[37];
	struct peer		*peer;
	enum web_nb_state	 state;
	char			*title;
	uint64_t		 seq;
	int			 have;		/* cells rendered */
	struct web_cell		*cells;
	size_t			 ncells;
	struct json_object	*view;		/* the page's state object */
	int			 fetching;
	int			 again;
	int			 want_content;
	struct json_object	*changed;	/* {id: html} this fetch */
	char			*conflicts;	/* their HTML, or NULL */
	char			*batches;	/* their HTML, or NULL */
	int			 batches_new;	/* not sent to every page */
	TAILQ_HEAD(, web_stream) streams;
	TAILQ_HEAD(, web_req)	 reqs;
	struct event		*linger;
	TAILQ_ENTRY(web_nb)	 entry;
};
static TAILQ_HEAD(, web_nb) web_nbs = TAILQ_HEAD_INITIALIZER(web_nbs);
static u_int	web_nb_nstreams;

static void	web_nb_free(struct web_nb *);
static void	web_nb_die(struct web_nb *, const char *);
static void	web_nb_dispatch(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static void	web_nb_request(struct web_nb *, uint16_t, struct mpbuf *,
		    web_nb_cb, void *);
static void	web_nb_joined(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_refresh(struct web_nb *, int);
static void	web_nb_content(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_viewstate(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static int	web_nb_backlogged(struct web_stream *);
static int	web_nb_send(struct web_stream *, const char *,
		    struct json_object *);
static struct json_object *web_nb_event(struct web_nb *, struct json_object *,
		    int, int);
static void	web_nb_start(struct web_stream *);
static void	web_nb_resumed(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_stream_closed(struct evhttp_connection *, void *);
static void	web_nb_stream_free(struct web_stream *);
static void	web_nb_linger_cb(evutil_socket_t, short, void *);
static void	web_nb_answer(struct web_action *, int, const char *);
static void	web_nb_action_closed(struct evhttp_connection *, void *);
static void	web_nb_acted(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_comment_read(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_comment_written(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static char	*web_nb_error(uint16_t, const msgpack_object *);
static void	web_nb_pack_json(msgpack_packer *, const void *);
static void	web_nb_edit(struct web_nb *, struct web_action *,
		    const struct proto_edit *, int, uint64_t, web_nb_cb);
static void	web_nb_change(struct web_nb *, struct web_action *);
static void	web_nb_changed(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_run(struct web_nb *, struct web_action *,
		    struct json_object *);
static void	web_nb_ran(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_undo(struct web_nb *, struct web_action *,
		    const char *, web_nb_cb);
static void	web_nb_batches(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);
static void	web_nb_reverted(struct web_nb *, uint16_t,
		    const msgpack_object *, void *);

/* The notebook with this id, joining it first if create. */
struct web_nb *
web_nb_find(const char *id, int create)
{
	struct web_nb		*nb;
	struct proto_hello	 hello;
	struct mpbuf		 b;
	int			 fd;

	TAILQ_FOREACH(nb, &web_nbs, entry) {
		if (strcmp(nb->id, id) == 0 && nb->state != WEB_NB_DEAD)
			return (nb);
	}
	if (!create)
		return (NULL);
	if ((fd = sockdir_connect(web_socket_path)) == -1) {
		log_warnx("cannot connect to %s", web_socket_path);
		return (NULL);
	}
	nb = xcalloc(1, sizeof *nb);
	snprintf(nb->id, sizeof nb->id, "%s", id);
	TAILQ_INIT(&nb->streams);
	TAILQ_INIT(&nb->reqs);
	nb->linger = evtimer_new(web_base, web_nb_linger_cb, nb);
	nb->peer = peer_create(web_base, fd, "notebook", web_nb_dispatch, nb);
	TAILQ_INSERT_TAIL(&web_nbs, nb, entry);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_WEB);
	snprintf(hello.label, sizeof hello.label, "runtimed-web");
	/* What the page writes is the person's: name them so. */
	snprintf(hello.client, sizeof hello.client, "person (live view)");
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	peer_send(nb->peer, PROTO_MSG_HELLO, peer_next_id(nb->peer), &b.sb);
	mpbuf_free(&b);
	nb->state = WEB_NB_HELLO;
	return (nb);
}

static void
web_nb_free(struct web_nb *nb)
{
	struct web_req	*r, *r1;
	size_t		 i;

	TAILQ_FOREACH_SAFE(r, &nb->reqs, entry, r1) {
		if (r->cb != NULL)
			r->cb(nb, 0, NULL, r->arg);
		TAILQ_REMOVE(&nb->reqs, r, entry);
		free(r);
	}
	for (i = 0; i < nb->ncells; i++) {
		free(nb->cells[i].id);
		free(nb->cells[i].html);
	}
	free(nb->cells);
	free(nb->title);
	free(nb->conflicts);
	free(nb->batches);
	if (nb->view != NULL)
		json_object_put(nb->view);
	if (nb->changed != NULL)
		json_object_put(nb->changed);
	event_free(nb->linger);
	TAILQ_REMOVE(&web_nbs, nb, entry);
	free(nb);
}

/* The daemon link is lost or refused us: tell the pages, close them. */
static void
web_nb_die(struct web_nb *nb, const char *why)
{
	struct web_stream	*s, *s1;
	struct json_object	*o;

	if (nb->state == WEB_NB_DEAD)
		return;
	nb->state = WEB_NB_DEAD;
	log_info("notebook %s: %s", nb->id, why);
	o = json_object_new_object();
	json_object_object_add(o, "message", json_object_new_string(why));
	TAILQ_FOREACH_SAFE(s, &nb->streams, entry, s1) {
		if (web_nb_send(s, "gone", o) != 0)
			continue;	/* closed and freed */
		web_http_closecb(s->req, NULL, NULL);
		evhttp_send_reply_end(s->req);
		s->req = NULL;
		web_nb_stream_free(s);
	}
	json_object_put(o);
	if (nb->peer != NULL)
		peer_kill(nb->peer, NULL);
	else
		web_nb_free(nb);
}

static void
web_nb_request(struct web_nb *nb, uint16_t type, struct mpbuf *b,
    web_nb_cb cb, void *arg)
{
	struct web_req	*r;

	r = xcalloc(1, sizeof *r);
	r->id = peer_next_id(nb->peer);
	r->cb = cb;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&nb->reqs, r, entry);
	if (b != NULL)
		peer_send(nb->peer, type, r->id, &b->sb);
	else
		peer_send_raw(nb->peer, type, r->id, "\x80", 1);
}

static void
web_nb_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct web_nb		*nb = arg;
	struct web_req		*r;
	struct proto_room_open	 om;
	struct mpbuf		 b;

	if (hdr == NULL) {
		/* With no peer left, web_nb_die frees the notebook too. */
		nb->peer = NULL;
		if (nb->state != WEB_NB_DEAD)
			web_nb_die(nb, "the daemon closed the connection");
		else
			web_nb_free(nb);
		return;
	}
	if (nb->state == WEB_NB_HELLO) {
		if (hdr->type != PROTO_MSG_HELLO_OK) {
			web_nb_die(nb, "the daemon refused the view's "
			    "connection");
			return;
		}
		memset(&om, 0, sizeof om);
		om.notebook_id = proto_str_make(nb->id);
		mpbuf_init(&b);
		proto_room_open_pack(&b.pk, &om);
		nb->state = WEB_NB_JOINING;
		web_nb_request(nb, PROTO_MSG_ROOM_OPEN, &b, web_nb_joined,
		    NULL);
		mpbuf_free(&b);
		return;
	}
	if (hdr->type == PROTO_MSG_ROOM_CHANGED) {
		if (nb->state == WEB_NB_READY)
			web_nb_refresh(nb, 1);
		return;
	}
	TAILQ_FOREACH(r, &nb->reqs, entry) {
		if (r->id == hdr->id)
			break;
	}
	if (r == NULL)
		return;
	TAILQ_REMOVE(&nb->reqs, r, entry);
	if (r->cb != NULL)
		r->cb(nb, hdr->type, body, r->arg);
	free(r);
}

/* An ERROR's message, or a sentence for a lost link.  Caller frees. */
static char *
web_nb_error(uint16_t type, const msgpack_object *body)
{
	struct proto_error	e;
	char			err[256];

	if (type == 0 || body == NULL)
		return (xstrdup("the daemon connection was lost"));
	if (type != PROTO_MSG_ERROR ||
	    proto_error_unpack(body, &e, err, sizeof err) != 0 ||
	    e.message.ptr == NULL)
		return (xstrdup("the daemon answered something unexpected"));
	return (xstrndup(e.message.ptr, e.message.len));
}

static void
web_nb_joined(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct proto_room_joined	 m;
	char				 err[256], *why;

	if (type == 0)
		return;
	if (type != PROTO_MSG_ROOM_JOINED ||
	    proto_room_joined_unpack(body, &m, err, sizeof err) != 0) {
		why = web_nb_error(type, body);
		web_nb_die(nb, why);
		free(why);
		return;
	}
	if (m.path.ptr != NULL)
		nb->title = proto_str_dup(&m.path);
	else
		xasprintf(&nb->title, "untitled %s", nb->id);
	nb->state = WEB_NB_READY;
	web_nb_refresh(nb, 1);
}

/* Read the room again (content only when asked), coalescing. */
static void
web_nb_refresh(struct web_nb *nb, int content)
{
	nb->want_content |= content;
	if (nb->fetching) {
		nb->again = 1;
		return;
	}
	nb->fetching = 1;
	if (nb->want_content || !nb->have) {
		nb->want_content = 0;
		web_nb_request(nb, PROTO_MSG_ROOM_GET, NULL, web_nb_content,
		    NULL);
	} else
		web_nb_request(nb, PROTO_MSG_VIEW_STATE, NULL,
		    web_nb_viewstate, NULL);
}

/* ROOM_CONTENT: render every cell, keep those whose HTML changed. */
static void
web_nb_content(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct proto_room_joined	 m;
	const msgpack_object		*cells, *v;
	struct json_object		*threads;
	struct evbuffer			*eb;
	struct web_cell			*nc;
	char				 err[256], *html, *why;
	size_t				 n, i, j, len;

	if (type == 0)
		return;
	if (type != PROTO_MSG_ROOM_CONTENT ||
	    proto_room_content_unpack(body, &m, err, sizeof err) != 0 ||
	    (cells = m.cells.obj) == NULL ||
	    cells->type != MSGPACK_OBJECT_ARRAY) {
		why = web_nb_error(type, body);
		web_nb_die(nb, why);
		free(why);
		return;
	}
	threads = web_render_threads(m.metadata.obj);
	n = cells->via.array.size;
	nc = n > 0 ? xcalloc(n, sizeof *nc) : NULL;
	if (nb->changed != NULL)
		json_object_put(nb->changed);
	nb->changed = json_object_new_object();
	eb = evbuffer_new();
	for (i = 0; i < n; i++) {
		v = proto_get(&cells->via.array.ptr[i], "cell_id");
		if (v == NULL || v->type != MSGPACK_OBJECT_STR)
			continue;
		web_render_cell(eb, &cells->via.array.ptr[i], threads);
		len = evbuffer_get_length(eb);
		html = xmalloc(len + 1);
		evbuffer_remove(eb, html, len);
		html[len] = '\0';
		nc[i].id = xstrndup(v->via.str.ptr, v->via.str.size);
		nc[i].html = html;
		/* Most cells keep their place: look there first. */
		j = i < nb->ncells && nb->cells[i].id != NULL &&
		    strcmp(nb->cells[i].id, nc[i].id) == 0 ? i : nb->ncells;
		if (j == nb->ncells) {
			for (j = 0; j < nb->ncells; j++) {
				if (nb->cells[j].id != NULL &&
				    strcmp(nb->cells[j].id, nc[i].id) == 0)
					break;
			}
		}
		if (j == nb->ncells || strcmp(nb->cells[j].html, html) != 0)
			json_object_object_add(nb->changed, nc[i].id,
			    json_object_new_string_len(html, len));
	}
	/* Conflicts with the file, both versions (decision 056). */
	free(nb->conflicts);
	nb->conflicts = NULL;
	if (m.conflicts.obj != NULL &&
	    m.conflicts.obj->type == MSGPACK_OBJECT_ARRAY &&
	    m.conflicts.obj->via.array.size > 0) {
		web_render_conflicts(eb, m.conflicts.obj, cells);
		len = evbuffer_get_length(eb);
		nb->conflicts = xmalloc(len + 1);
		evbuffer_remove(eb, nb->conflicts, len);
		nb->conflicts[len] = '\0';
	}
	evbuffer_free(eb);
	if (threads != NULL)
		json_object_put(threads);
	for (i = 0; i < nb->ncells; i++) {
		free(nb->cells[i].id);
		free(nb->cells[i].html);
	}
	free(nb->cells);
	nb->cells = nc;
	nb->ncells = n;
	nb->seq = m.seq;
	if (m.path.ptr != NULL) {
		free(nb->title);
		nb->title = proto_str_dup(&m.path);
	}
	web_nb_undo(nb, NULL, NULL, web_nb_batches);
}

/*
 * ROOM_EDIT undo of the notebook: list its batches (batch_id NULL), or
 * revert one; the daemon knows this connection as the person's page,
 * which may revert any batch (decision 085).
 */
static void
web_nb_undo(struct web_nb *nb, struct web_action *a, const char *batch_id,
    web_nb_cb cb)
{
	struct proto_room_edit	 em;
	struct json_object	*u;
	struct mpbuf		 b;

	u = json_object_new_object();
	if (batch_id == NULL)
		json_object_object_add(u, "list", json_object_new_boolean(1));
	else
		json_object_object_add(u, "batch_id", json_object_new_int64(
		    strtoll(batch_id, NULL, 10)));
	memset(&em, 0, sizeof em);
	em.undo.pack = web_nb_pack_json;
	em.undo.arg = u;
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &em);
	web_nb_request(nb, PROTO_MSG_ROOM_EDIT, &b, cb, a);
	mpbuf_free(&b);
	json_object_put(u);
}

/* The batches' list: their HTML, sent with the next event if it changed. */
static void
web_nb_batches(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct proto_room_edit_reply	 m;
	const msgpack_object		*list;
	struct evbuffer			*eb;
	char				 err[256], *html;
	size_t				 len;

	if (type == 0)
		return;
	/* An older daemon, or none kept: the page shows no list. */
	if (type == PROTO_MSG_ROOM_EDIT_REPLY &&
	    proto_room_edit_reply_unpack(body, &m, err, sizeof err) == 0 &&
	    m.undo.obj != NULL &&
	    (list = proto_get(m.undo.obj, "batches")) != NULL) {
		eb = evbuffer_new();
		web_render_batches(eb, list);
		len = evbuffer_get_length(eb);
		html = xmalloc(len + 1);
		evbuffer_remove(eb, html, len);
		html[len] = '\0';
		evbuffer_free(eb);
		if (nb->batches == NULL || strcmp(nb->batches, html) != 0) {
			free(nb->batches);
			nb->batches = html;
			nb->batches_new = 1;
		} else
			free(html);
	}
	web_nb_request(nb, PROTO_MSG_VIEW_STATE, NULL, web_nb_viewstate,
	    NULL);
}

/* VIEW_STATE: the state object; then every page gets its event. */
static void
web_nb_viewstate(struct web_nb *nb, uint16_t type,
    const msgpack_object *body, void *arg)
{
	struct proto_view_state_reply	 m;
	struct json_object		*o, *runs, *peers, *ev;
	struct web_stream		*s, *s1;
	const msgpack_object		*a, *e, *v;
	char				 err[256], *why, *name;
	uint32_t			 i;

	if (type == 0)
		return;
	if (type != PROTO_MSG_VIEW_STATE_REPLY ||
	    proto_view_state_reply_unpack(body, &m, err, sizeof err) != 0) {
		why = web_nb_error(type, body);
		web_nb_die(nb, why);
		free(why);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "kernel", json_object_new_string_len(
	    m.kernel_state.ptr, m.kernel_state.len));
	runs = json_object_new_array();
	a = m.cells.obj;
	for (i = 0; i < a->via.array.size; i++) {
		e = &a->via.array.ptr[i];
		if ((v = proto_get(e, "cell_id")) == NULL ||
		    v->type != MSGPACK_OBJECT_STR)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "cell_id",
		    json_object_new_string_len(v->via.str.ptr,
		    v->via.str.size));
		v = proto_get(e, "status");
		json_object_object_add(ev, "status", json_object_new_string(
		    v != NULL && proto_obj_streq(v, "running") ? "running" :
		    "queued"));
		json_object_array_add(runs, ev);
	}
	json_object_object_add(o, "runs", runs);
	peers = json_object_new_array();
	a = m.peers.obj;
	for (i = 0; i < a->via.array.size; i++) {
		e = &a->via.array.ptr[i];
		if ((v = proto_get(e, "client")) == NULL ||
		    v->type != MSGPACK_OBJECT_STR)
			v = proto_get(e, "label");
		if (v == NULL || v->type != MSGPACK_OBJECT_STR)
			continue;
		name = xstrndup(v->via.str.ptr, v->via.str.size);
		json_object_array_add(peers, json_object_new_string(name));
		free(name);
	}
	json_object_object_add(o, "peers", peers);
	if (m.last_client.ptr != NULL)
		json_object_object_add(o, "last", json_object_new_string_len(
		    m.last_client.ptr, m.last_client.len));
	if (nb->view != NULL)
		json_object_put(nb->view);
	nb->view = o;
	nb->have = 1;

	ev = web_nb_event(nb, nb->changed, 0, nb->batches_new);
	nb->batches_new = 0;
	TAILQ_FOREACH_SAFE(s, &nb->streams, entry, s1) {
		if (s->started)
			web_nb_send(s, "update", ev);
		else
			web_nb_start(s);
	}
	json_object_put(ev);
	if (nb->changed != NULL) {
		json_object_put(nb->changed);
		nb->changed = NULL;
	}
	nb->fetching = 0;
	if (nb->again) {
		nb->again = 0;
		web_nb_refresh(nb, 0);
	}
}

/*
 * {seq, title, order, cells, conflicts, batches?, state}; cells all, or
 * those given; batches (their HTML) with all or when asked.
 */
static struct json_object *
web_nb_event(struct web_nb *nb, struct json_object *cells, int all,
    int batches)
{
	struct json_object	*o, *order, *c;
	size_t			 i;

	o = json_object_new_object();
	json_object_object_add(o, "seq", json_object_new_uint64(nb->seq));
	json_object_object_add(o, "title", json_object_new_string(
	    nb->title != NULL ? nb->title : nb->id));
	order = json_object_new_array();
	for (i = 0; i < nb->ncells; i++) {
		if (nb->cells[i].id != NULL)
			json_object_array_add(order,
			    json_object_new_string(nb->cells[i].id));
	}
	json_object_object_add(o, "order", order);
	if (all) {
		c = json_object_new_object();
		for (i = 0; i < nb->ncells; i++) {
			if (nb->cells[i].id != NULL)
				json_object_object_add(c, nb->cells[i].id,
				    json_object_new_string(
				    nb->cells[i].html));
		}
	} else
		c = cells != NULL ? json_object_get(cells) :
		    json_object_new_object();
	json_object_object_add(o, "cells", c);
	/* Few and rare: every event carries them whole. */
	json_object_object_add(o, "conflicts", json_object_new_string(
	    nb->conflicts != NULL ? nb->conflicts : ""));
	/* Up to 64, changed by edits only: not on every output. */
	if ((all || batches) && nb->batches != NULL)
		json_object_object_add(o, "batches",
		    json_object_new_string(nb->batches));
	if (nb->view != NULL)
		json_object_object_add(o, "state", json_object_get(nb->view));
	return (o);
}

/*
 * Is s's page not reading?  Then its stream is closed (s is freed: 1):
 * what it has not read stays in runtimed-web's memory else, growing
 * with every change (8 such pages took it to 1.9 GB).  The page's
 * EventSource comes back on its own, and resumes from its last event.
 */
static int
web_nb_backlogged(struct web_stream *s)
{
	struct evhttp_connection	*conn;
	struct bufferevent		*bev;
	size_t				 len;

	if (s->req == NULL ||
	    (conn = evhttp_request_get_connection(s->req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(conn)) == NULL)
		return (0);
	len = evbuffer_get_length(bufferevent_get_output(bev));
	if (len <= WEB_STREAM_BACKLOG)
		return (0);
	log_info("notebook %s: a page has not read %zu bytes of its stream; "
	    "closing it (the page reconnects)", s->nb->id, len);
	/* Its close callback (web_nb_stream_closed) frees s. */
	evhttp_connection_free(conn);
	return (1);
}

/*
 * One Server-Sent Event: id (the seq), event name, one line of JSON.
 * -1 if the page was not reading and its stream is closed (s freed).
 */
static int
web_nb_send(struct web_stream *s, const char *event, struct json_object *o)
{
	struct evbuffer	*b;
	const char	*text;

	if (s->req == NULL)
		return (0);
	if (web_nb_backlogged(s))
		return (-1);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	b = evbuffer_new();
	if (strcmp(event, "gone") != 0)
		evbuffer_add_printf(b, "id: %llu\n",
		    (unsigned long long)s->nb->seq);
	evbuffer_add_printf(b, "event: %s\ndata: %s\n\n", event, text);
	evhttp_send_reply_chunk(s->req, b);
	evbuffer_free(b);
	s->started = 1;
	web_activity();
	return (0);
}

/* A page's first event: all of it, or what changed since its last. */
static void
web_nb_start(struct web_stream *s)
{
	struct web_nb		*nb = s->nb;
	struct json_object	*ev;
	struct proto_room_changes m;
	struct mpbuf		 b;

	if (s->has_last && s->last < nb->seq) {
		m.after = s->last;
		mpbuf_init(&b);
		proto_room_changes_pack(&b.pk, &m);
		s->started = 1;		/* nothing else before the resume */
		web_nb_request(nb, PROTO_MSG_ROOM_CHANGES, &b, web_nb_resumed,
		    s);
		mpbuf_free(&b);
		return;
	}
	if (s->has_last && s->last == nb->seq) {
		ev = web_nb_event(nb, NULL, 0, 1);
		web_nb_send(s, "update", ev);
	} else {
		ev = web_nb_event(nb, NULL, 1, 1);
		web_nb_send(s, "reset", ev);
	}
	json_object_put(ev);
}

/* ROOM_CHANGES since the page's last event: send those cells. */
static void
web_nb_resumed(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct web_stream		*s = arg, *t;
	struct proto_room_changes_reply	 m;
	struct json_object		*cells, *ev;
	const msgpack_object		*ch, *ids, *v, *kinds;
	char				 err[256], *id;
	uint32_t			 i, k;
	size_t				 j;
	int				 resync = 1;

	if (type == 0)
		return;
	TAILQ_FOREACH(t, &nb->streams, entry) {
		if (t == s)
			break;
	}
	if (t == NULL)
		return;		/* the page left meanwhile */
	cells = json_object_new_object();
	if (type == PROTO_MSG_ROOM_CHANGES_REPLY &&
	    proto_room_changes_reply_unpack(body, &m, err, sizeof err) == 0 &&
	    !m.resync && (ch = m.changes.obj) != NULL &&
	    ch->type == MSGPACK_OBJECT_ARRAY) {
		resync = 0;
		for (i = 0; i < ch->via.array.size; i++) {
			/* Comments live in the metadata and show in cells. */
			kinds = proto_get(&ch->via.array.ptr[i], "kinds");
			for (k = 0; kinds != NULL && kinds->type ==
			    MSGPACK_OBJECT_ARRAY && k < kinds->via.array.size;
			    k++) {
				if (proto_obj_streq(&kinds->via.array.ptr[k],
				    "metadata") || proto_obj_streq(
				    &kinds->via.array.ptr[k], "reloaded"))
					resync = 1;
			}
			ids = proto_get(&ch->via.array.ptr[i], "cell_ids");
			if (ids == NULL || ids->type != MSGPACK_OBJECT_ARRAY)
				continue;
			for (k = 0; k < ids->via.array.size; k++) {
				v = &ids->via.array.ptr[k];
				if (v->type != MSGPACK_OBJECT_STR)
					continue;
				id = xstrndup(v->via.str.ptr, v->via.str.size);
				for (j = 0; j < nb->ncells; j++) {
					if (nb->cells[j].id != NULL && strcmp(
					    nb->cells[j].id, id) == 0)
						json_object_object_add(cells,
						    id, json_object_new_string(
						    nb->cells[j].html));
				}
				free(id);
			}
		}
	}
	ev = web_nb_event(nb, cells, resync, 1);
	web_nb_send(s, resync ? "reset" : "update", ev);
	json_object_put(ev);
	json_object_put(cells);
}

/* GET /nb/ID/events: a page's stream. */
void
web_nb_stream(struct web_nb *nb, struct evhttp_request *req,
    const char *last)
{
	struct web_stream		*s;
	struct evhttp_connection	*conn;
	char				*end;

	if (web_nb_nstreams >= WEB_MAX_STREAMS) {
		web_http_error(req, 503, "too many pages are open");
		return;
	}
	s = xcalloc(1, sizeof *s);
	s->nb = nb;
	s->req = req;
	if (last != NULL && *last != '\0') {
		s->last = strtoull(last, &end, 10);
		s->has_last = *end == '\0' && last[0] != '-';
	}
	TAILQ_INSERT_TAIL(&nb->streams, s, entry);
	web_nb_nstreams++;
	evtimer_del(nb->linger);
	conn = evhttp_request_get_connection(req);
	web_http_closecb(req, web_nb_stream_closed, s);
	/* The stream is quiet between changes: pings keep it open. */
	evhttp_connection_set_timeout(conn, 4 * WEB_PING_SECS);
	web_http_headers(req, "text/event-stream");
	evhttp_send_reply_start(req, 200, "OK");
	if (nb->state == WEB_NB_READY && nb->have && !nb->fetching)
		web_nb_start(s);
}

static void
web_nb_stream_free(struct web_stream *s)
{
	struct web_nb	*nb = s->nb;

	TAILQ_REMOVE(&nb->streams, s, entry);
	web_nb_nstreams--;
	free(s);
	if (TAILQ_EMPTY(&nb->streams) && nb->state != WEB_NB_DEAD) {
		struct timeval	tv = { WEB_NB_LINGER_SECS, 0 };

		evtimer_add(nb->linger, &tv);
	}
	web_activity();
}

/* The browser closed the page (or the stream broke). */
static void
web_nb_stream_closed(struct evhttp_connection *conn, void *arg)
{
	struct web_stream	*s = arg;

	/* A stream we never ended is ours: ending it frees it. */
	if (web_http_detached(s->req))
		evhttp_send_reply_end(s->req);
	s->req = NULL;
	web_nb_stream_free(s);
}

/* No page for a while: leave the room. */
static void
web_nb_linger_cb(evutil_socket_t fd, short events, void *arg)
{
	struct web_nb	*nb = arg;

	if (TAILQ_EMPTY(&nb->streams))
		web_nb_die(nb, "no page open");
}

/* Pages open now. */
u_int
web_nb_streams(void)
{
	return (web_nb_nstreams);
}

/* A comment line on every stream, so proxies and timeouts keep it. */
void
web_nb_ping(void)
{
	struct web_nb		*nb;
	struct web_stream	*s, *s1;
	struct evbuffer		*b;

	TAILQ_FOREACH(nb, &web_nbs, entry) {
		TAILQ_FOREACH_SAFE(s, &nb->streams, entry, s1) {
			if (s->req == NULL || !s->started ||
			    web_nb_backlogged(s))
				continue;
			b = evbuffer_new();
			WEB_ADD(b, ": ping\n\n");
			evhttp_send_reply_chunk(s->req, b);
			evbuffer_free(b);
		}
	}
}

static void
web_nb_answer(struct web_action *a, int code, const char *text)
{
	struct evbuffer	*b;

	if (a->req != NULL) {
		/* Answering a detached request frees it: still answer. */
		web_http_closecb(a->req, NULL, NULL);
		b = evbuffer_new();
		evbuffer_add(b, text, strlen(text));
		web_http_headers(a->req, "text/plain; charset=utf-8");
		evhttp_send_reply(a->req, code, code == 200 ? "OK" :
		    "Conflict", b);
		evbuffer_free(b);
	}
	free(a->what);
	web_post_free(&a->f);
	free(a);
}

static void
web_nb_action_closed(struct evhttp_connection *conn, void *arg)
{
	struct web_action	*a = arg;

	if (!web_http_detached(a->req))
		a->req = NULL;
}

void
web_post_free(struct web_post *f)
{
	free(f->cell_id);
	free(f->text);
	free(f->version);
	free(f->take);
	free(f->cell_type);
	free(f->after);
	free(f->batch_id);
	memset(f, 0, sizeof *f);
}

/*
 * A POST, its token and fields already checked (web-http.c); f is ours
 * now.  Each write is one request on this notebook's own connection,
 * so the daemon knows it as the live page's (decision 079).
 */
void
web_nb_action(struct web_nb *nb, struct evhttp_request *req,
    const char *what, struct web_post *f)
{
	struct web_action	*a;
	struct json_object	*ids;

	if (nb->state != WEB_NB_READY) {
		web_http_error(req, 409, "the notebook is not ready yet; "
		    "reload the page");
		return;
	}
	a = xcalloc(1, sizeof *a);
	a->nb = nb;
	a->req = req;
	a->what = xstrdup(what);
	a->f = *f;
	memset(f, 0, sizeof *f);
	web_http_closecb(req, web_nb_action_closed, a);
	if (strcmp(what, "interrupt") == 0)
		web_nb_request(nb, PROTO_MSG_KERNEL_INTERRUPT, NULL,
		    web_nb_acted, a);
	else if (strcmp(what, "restart") == 0)
		web_nb_request(nb, PROTO_MSG_KERNEL_RESTART, NULL,
		    web_nb_acted, a);
	else if (strcmp(what, "comment") == 0)
		web_nb_request(nb, PROTO_MSG_ROOM_GET, NULL,
		    web_nb_comment_read, a);
	else if (strcmp(what, "run") == 0) {
		ids = json_object_new_array();
		json_object_array_add(ids, json_object_new_string(
		    a->f.cell_id));
		web_nb_run(nb, a, ids);
		json_object_put(ids);
	} else if (strcmp(what, "run-all") == 0)
		web_nb_run(nb, a, NULL);
	else if (strcmp(what, "revert") == 0)
		web_nb_undo(nb, a, a->f.batch_id, web_nb_reverted);
	else
		web_nb_change(nb, a);
}

static void
web_nb_acted(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct web_action	*a = arg;
	char			*why;

	if (type == PROTO_MSG_OK) {
		web_nb_answer(a, 200, strcmp(a->what, "interrupt") == 0 ?
		    "interrupted" : "the kernel restarted");
		return;
	}
	why = web_nb_error(type, body);
	web_nb_answer(a, 409, why);
	free(why);
}

/* The room as it is now: add a thread on the cell, write it if_seq. */
static void
web_nb_comment_read(struct web_nb *nb, uint16_t type,
    const msgpack_object *body, void *arg)
{
	struct web_action		*a = arg;
	struct proto_room_joined	 m;
	struct json_object		*md, *rt, *threads, *t, *an, *cs, *c;
	struct json_object		*nm;
	struct proto_edit		 ed;
	const msgpack_object		*cells, *v;
	unsigned char			 rnd[12];
	char				 err[256], hex[25], *why, ts[32];
	char				*id;
	time_t				 now;
	struct tm			 tm;
	uint32_t			 i;
	int				 found = 0;

	if (type != PROTO_MSG_ROOM_CONTENT ||
	    proto_room_content_unpack(body, &m, err, sizeof err) != 0) {
		why = web_nb_error(type, body);
		web_nb_answer(a, 409, why);
		free(why);
		return;
	}
	cells = m.cells.obj;
	for (i = 0; cells != NULL && i < cells->via.array.size; i++) {
		v = proto_get(&cells->via.array.ptr[i], "cell_id");
		if (v != NULL && v->type == MSGPACK_OBJECT_STR &&
		    v->via.str.size == strlen(a->f.cell_id) &&
		    memcmp(v->via.str.ptr, a->f.cell_id, v->via.str.size) == 0)
			found = 1;
	}
	if (!found) {
		web_nb_answer(a, 409, "that cell is no longer in the "
		    "notebook");
		return;
	}
	md = m.metadata.obj != NULL ? mpjson_unpack(m.metadata.obj) : NULL;
	if (md == NULL || !json_object_object_get_ex(md, "runtimed", &rt) ||
	    !json_object_is_type(rt, json_type_object))
		rt = NULL;
	rt = rt != NULL ? json_object_get(rt) : json_object_new_object();
	if (!json_object_object_get_ex(rt, "comments", &threads) ||
	    !json_object_is_type(threads, json_type_array)) {
		threads = json_object_new_array();
		json_object_object_add(rt, "comments", threads);
	}
	if (RAND_bytes(rnd, sizeof rnd) != 1)
		fatalx("RAND_bytes failed");
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	t = json_object_new_object();
	util_hex(rnd, 6, hex);
	xasprintf(&id, "t_%s", hex);
	json_object_object_add(t, "thread_id", json_object_new_string(id));
	free(id);
	an = json_object_new_object();
	json_object_object_add(an, "cell_id", json_object_new_string(
	    a->f.cell_id));
	json_object_object_add(t, "anchor", an);
	json_object_object_add(t, "resolved", json_object_new_boolean(0));
	cs = json_object_new_array();
	c = json_object_new_object();
	util_hex(rnd + 6, 6, hex);
	xasprintf(&id, "c_%s", hex);
	json_object_object_add(c, "comment_id", json_object_new_string(id));
	free(id);
	json_object_object_add(c, "author", json_object_new_string(
	    "person (live view)"));
	json_object_object_add(c, "body", json_object_new_string(a->f.text));
	json_object_object_add(c, "created_at", json_object_new_string(ts));
	json_object_array_add(cs, c);
	json_object_object_add(t, "comments", cs);
	json_object_array_add(threads, t);
	if (md != NULL)
		json_object_put(md);

	nm = json_object_new_object();
	json_object_object_add(nm, "runtimed", rt);
	memset(&ed, 0, sizeof ed);
	ed.op = PROTO_EDIT_NOTEBOOK_METADATA;
	ed.metadata.pack = web_nb_pack_json;
	ed.metadata.arg = nm;
	web_nb_edit(nb, a, &ed, 1, m.seq, web_nb_comment_written);
	json_object_put(nm);
}

static void
web_nb_comment_written(struct web_nb *nb, uint16_t type,
    const msgpack_object *body, void *arg)
{
	struct web_action	*a = arg;
	struct proto_error	 e;
	char			 err[256], *why;

	if (type == PROTO_MSG_ROOM_EDIT_REPLY) {
		web_nb_answer(a, 200, "comment posted");
		return;
	}
	if (type == PROTO_MSG_ERROR &&
	    proto_error_unpack(body, &e, err, sizeof err) == 0 &&
	    proto_str_eq(&e.code, PROTO_E_CONFLICT) &&
	    ++a->tries < WEB_NB_COMMENT_TRIES) {
		/* Someone changed the room in between: read it again. */
		web_nb_request(nb, PROTO_MSG_ROOM_GET, NULL,
		    web_nb_comment_read, a);
		return;
	}
	why = web_nb_error(type, body);
	web_nb_answer(a, 409, why);
	free(why);
}

/* A proto_doc's packer for a JSON document (metadata, cell ids). */
static void
web_nb_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* ROOM_EDIT of one edit (if_seq when has_seq), answered to cb with a. */
static void
web_nb_edit(struct web_nb *nb, struct web_action *a,
    const struct proto_edit *e, int has_seq, uint64_t seq, web_nb_cb cb)
{
	struct proto_room_edit	 em;
	struct mpbuf		 b;

	memset(&em, 0, sizeof em);
	em.edits.pack = proto_edit_pack_one;
	em.edits.arg = e;
	em.has_if_seq = has_seq;
	em.if_seq = seq;
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &em);
	web_nb_request(nb, PROTO_MSG_ROOM_EDIT, &b, cb, a);
	mpbuf_free(&b);
}

/*
 * edit, insert or resolve: one op, as an agent's edit_cells sends it.
 * An edit carries the version of the cell the page showed when the
 * person began (expect_version): the daemon refuses the batch, nothing
 * applied, if anyone changed the cell since.
 */
static void
web_nb_change(struct web_nb *nb, struct web_action *a)
{
	struct proto_edit	e;

	/* The page's writes edit, insert and resolve are those ops. */
	memset(&e, 0, sizeof e);
	if (proto_edit_op_find(a->what, strlen(a->what), &a->op) != 0) {
		web_nb_answer(a, 400, "no such write");
		return;
	}
	e.op = a->op;
	switch (a->op) {
	case PROTO_EDIT_EDIT:
		e.cell_id = proto_doc_cstr(a->f.cell_id);
		e.source = proto_str_make(a->f.text);
		e.expect_version = proto_str_make(a->f.version);
		break;
	case PROTO_EDIT_INSERT:
		e.after = proto_doc_cstr(a->f.after);
		e.cell_type = proto_str_make(a->f.cell_type);
		e.source = proto_str_make(a->f.text);
		break;
	case PROTO_EDIT_RESOLVE:
		e.cell_id = proto_doc_cstr(a->f.cell_id);
		e.take = proto_str_make(a->f.take);
		break;
	default:
		web_nb_answer(a, 400, "no such write");
		return;
	}
	web_nb_edit(nb, a, &e, 0, 0, web_nb_changed);
}

static void
web_nb_changed(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct web_action	*a = arg;
	struct proto_error	 e;
	char			 err[256], *why;

	if (type == PROTO_MSG_ROOM_EDIT_REPLY) {
		web_nb_answer(a, 200, a->op == PROTO_EDIT_EDIT ? "saved" :
		    a->op == PROTO_EDIT_INSERT ? "cell added" :
		    "conflict resolved");
		return;
	}
	if (type == PROTO_MSG_ERROR &&
	    proto_error_unpack(body, &e, err, sizeof err) == 0 &&
	    proto_str_eq(&e.code, PROTO_E_EDIT_CONFLICT)) {
		web_nb_answer(a, 409, "someone changed this cell after you "
		    "began editing it: your edit was not applied and the "
		    "notebook is unchanged; copy your text, open the cell "
		    "again and redo it");
		return;
	}
	why = web_nb_error(type, body);
	web_nb_answer(a, 409, why);
	free(why);
}

/*
 * EXEC_RUN of ids, or without ids of every code cell as the daemon finds
 * them when it queues the run (decision 082), as the worker's run_cells
 * sends it, answered at once.
 */
static void
web_nb_run(struct web_nb *nb, struct web_action *a, struct json_object *ids)
{
	struct proto_exec_run	 rm;
	struct mpbuf		 b;

	memset(&rm, 0, sizeof rm);
	if (ids == NULL)
		rm.select = PROTO_RUN_SELECT_ALL;
	else {
		rm.cell_ids.pack = web_nb_pack_json;
		rm.cell_ids.arg = ids;
	}
	rm.has_stop_on_error = 1;
	rm.stop_on_error = 1;
	rm.has_timeout_ms = 1;
	rm.timeout_ms = 0;
	/* The run's record names who asked (interrupt_kernel says it). */
	rm.who.client_name = proto_str_make("live page");
	mpbuf_init(&b);
	proto_exec_run_pack(&b.pk, &rm);
	web_nb_request(nb, PROTO_MSG_EXEC_RUN, &b, web_nb_ran, a);
	mpbuf_free(&b);
}

static void
web_nb_ran(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct web_action	*a = arg;
	char			*why;

	if (type == PROTO_MSG_EXEC_STATE) {
		web_nb_answer(a, 200, strcmp(a->what, "run") == 0 ?
		    "the cell is running or queued" :
		    "the code cells are running or queued");
		return;
	}
	why = web_nb_error(type, body);
	web_nb_answer(a, 409, why);
	free(why);
}

/*
 * A revert's answer: the batch that did it, or why not (undo_conflict
 * names each cell and who changed it since; nothing was undone).
 */
static void
web_nb_reverted(struct web_nb *nb, uint16_t type, const msgpack_object *body,
    void *arg)
{
	struct web_action		*a = arg;
	struct proto_room_edit_reply	 m;
	const msgpack_object		*v;
	char				 err[256], *why, *text;

	(void)nb;
	if (type == PROTO_MSG_ROOM_EDIT_REPLY &&
	    proto_room_edit_reply_unpack(body, &m, err, sizeof err) == 0 &&
	    m.undo.obj != NULL && (v = proto_get(m.undo.obj, "batch_id")) !=
	    NULL && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		xasprintf(&text, "reverted b%s as batch b%llu", a->f.batch_id,
		    (unsigned long long)v->via.u64);
		web_nb_answer(a, 200, text);
		free(text);
		return;
	}
	why = web_nb_error(type, body);
	web_nb_answer(a, 409, why);
	free(why);
}
