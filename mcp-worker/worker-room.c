/* SPDX-License-Identifier: ISC */
/*
 * worker-room.c: one daemon connection joined to a room per notebook
 * attached in this worker.  Every handle of that notebook shares it; the
 * last handle released closes it, which leaves the room.  While a watch
 * wants changes with the content (a change wait), the daemon is asked
 * (ROOM_WAIT) to send the next one as ROOM_CHANGED_CONTENT, which
 * becomes the kept content: the wait answers without a round trip.  It
 * says which content it holds (have), so only the cells changed since
 * come whole, the others by reference (docs/decisions/036).  The wait
 * is standing: every change of its kinds comes so, each by reference to
 * the one before, and it outlives the last watch that wanted it by
 * WORKER_ROOM_KEEP_MS, so a client waiting again right after an answer
 * costs no ROOM_WAIT (docs/decisions/040).  The
 * last WORKER_ROOM_LOG changes are kept too, so a wait whose cursor is
 * that recent reads what changed here rather than by ROOM_CHANGES.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>		/* malloc_trim */
#endif

#include "worker.h"

struct worker_room_watch {
	struct worker_room		*room;
	worker_room_change_cb		 cb;
	void				*arg;
	int				 dead;
	int				 want;	/* PROTO_KIND_*: with content */
	TAILQ_ENTRY(worker_room_watch)	 entry;
};
TAILQ_HEAD(worker_room_watches, worker_room_watch);

/* A change as ROOM_CHANGED told it (packed), by seq. */
struct worker_room_change {
	int64_t			 seq;
	char			*body;		/* NULL: too large to keep */
	size_t			 len;
};

struct worker_room {
	char			*notebook_id;
	struct worker_room_watches watches;
	int			 notifying;
	struct worker_dconn	*dc;
	int			 refs;
	int			 lost;
	int64_t			 seq;
	char			*path;		/* as the daemon named it */
	char			*domain;	/* NULL: this machine */
	struct worker_nb	*content;	/* last ROOM_CONTENT */
	struct worker_nb	*last;		/* content, no longer current */
	struct event		*keep;		/* drops content unused */
	u_int			 gen;		/* bumped by every change */
	int			 armed;		/* ROOM_WAIT kinds asked */
	int			 standing;	/* the daemon may hold one */
	int64_t			 wanted_at;	/* a watch last wanted them */
	struct worker_nb	*base;		/* the content the daemon has */
	struct worker_room_change log[WORKER_ROOM_LOG];	/* at seq % size */
	LIST_ENTRY(worker_room)	 entry;
};
LIST_HEAD(worker_room_list, worker_room);

static struct worker_room_list	worker_rooms =
    LIST_HEAD_INITIALIZER(worker_rooms);

struct worker_room_join {
	struct worker_dconn	*dc;
	worker_room_join_cb	 cb;
	void			*arg;
};

static struct worker_room	*worker_room_find(const char *);
static void	worker_room_notify(struct worker_room *,
		    const struct proto_room_changed *);
static void	worker_room_free(struct worker_room *);
static void	worker_room_lost(struct worker_dconn *, void *);
static void	worker_room_event(struct worker_dconn *, uint16_t,
		    const msgpack_object *, void *);
static void	worker_room_event_done(struct worker_room *,
		    struct proto_room_changed *, int, const char *);
static void	worker_room_joined(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_room_got(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_room_cached_cb(evutil_socket_t, short, void *);
static void	worker_room_get_failed(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_room_invalidate(struct worker_room *);
static void	worker_room_keep(struct worker_room *, struct worker_nb *);
static void	worker_room_drop(evutil_socket_t, short, void *);
static void	worker_room_log(struct worker_room *,
		    const struct proto_room_changed *);
static void	worker_room_arm(struct worker_room *, int);
static void	worker_room_rebase(struct worker_room *);
static void	worker_room_armed(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);

static struct worker_room *
worker_room_find(const char *notebook_id)
{
	struct worker_room	*room;

	LIST_FOREACH(room, &worker_rooms, entry) {
		if (!room->lost && strcmp(room->notebook_id, notebook_id) == 0)
			return (room);
	}
	return (NULL);
}

/* Tell every watcher; ev NULL means the room connection is gone. */
static void
worker_room_notify(struct worker_room *room,
    const struct proto_room_changed *ev)
{
	struct worker_room_watch	*w, *next;

	room->refs++;
	room->notifying++;
	TAILQ_FOREACH(w, &room->watches, entry) {
		if (!w->dead)
			w->cb(room, ev, w->arg);
	}
	if (--room->notifying == 0) {
		for (w = TAILQ_FIRST(&room->watches); w != NULL; w = next) {
			next = TAILQ_NEXT(w, entry);
			if (w->dead) {
				if (w->want != 0)
					room->wanted_at = util_mono_ms();
				TAILQ_REMOVE(&room->watches, w, entry);
				free(w);
			}
		}
		if (ev != NULL)
			worker_room_arm(room, 0);
	}
	worker_room_unref(room);
}

/* Call cb on every change (and once with NULL if the room is lost). */
struct worker_room_watch *
worker_room_watch(struct worker_room *room, worker_room_change_cb cb,
    void *arg)
{
	struct worker_room_watch	*w;

	w = xcalloc(1, sizeof *w);
	w->room = room;
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&room->watches, w, entry);
	return (w);
}

void
worker_room_unwatch(struct worker_room_watch *w)
{
	struct worker_room	*room;
	int			 want;

	if (w == NULL)
		return;
	if (w->room->notifying) {
		w->dead = 1;
		return;
	}
	room = w->room;
	want = w->want;
	TAILQ_REMOVE(&room->watches, w, entry);
	free(w);
	if (want != 0) {
		room->wanted_at = util_mono_ms();	/* until now */
		worker_room_arm(room, 0);
	}
}

/* The watch wants changes of kinds (PROTO_KIND_*) with the content. */
void
worker_room_want(struct worker_room_watch *w, int kinds)
{
	w->want = kinds;
	if (!w->room->notifying)
		worker_room_arm(w->room, 0);
}

static void
worker_room_armed(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	if (code != NULL)
		log_debug("ROOM_WAIT: %s: %s", code, msg);
}

/*
 * Ask the daemon for what the watches want with the content (a standing
 * ROOM_WAIT); nothing when it is asked already.  Wanted by none, a wait
 * the daemon may hold (standing, even once a push could not be used and
 * armed is 0) is ended WORKER_ROOM_KEEP_MS after the last watch wanted
 * it (now if drop).  The current content, when kept, is the base the
 * next push may refer to.
 */
static void
worker_room_arm(struct worker_room *room, int drop)
{
	struct worker_room_watch	*w;
	struct worker_nb		*nb;
	struct proto_room_wait		 m;
	struct mpbuf			 b;
	int				 kinds = 0;
	int64_t				 now;

	TAILQ_FOREACH(w, &room->watches, entry) {
		if (!w->dead)
			kinds |= w->want;
	}
	now = util_mono_ms();
	if (kinds != 0)
		room->wanted_at = now;
	if (kinds != 0 && (kinds & ~room->armed) == 0)
		return;
	if (kinds == 0 && (!room->standing ||
	    (!drop && now - room->wanted_at < WORKER_ROOM_KEEP_MS)))
		return;
	if (room->lost || !worker_room_alive(room))
		return;
	room->armed = kinds;
	room->standing = kinds != 0;
	memset(&m, 0, sizeof m);
	m.kinds = kinds;
	m.standing = 1;
	m.runs = 1;
	worker_nb_unref(room->base);
	room->base = NULL;
	if (kinds != 0) {
		nb = room->content != NULL ? room->content : room->last;
		if (nb != NULL) {
			worker_room_rebase(room);
			m.has_have = 1;
			m.have = (uint64_t)room->base->seq;
		}
	}
	mpbuf_init(&b);
	proto_room_wait_pack(&b.pk, &m);
	worker_daemon_request(room->dc, PROTO_MSG_ROOM_WAIT, &b.sb,
	    worker_room_armed, NULL);
	mpbuf_free(&b);
}

/*
 * The content kept (current, else the last) is the base of the next
 * push: copied into one zone first when it spans too many.
 */
static void
worker_room_rebase(struct worker_room *room)
{
	struct worker_nb	**nbp, *nb;

	nbp = room->content != NULL ? &room->content : &room->last;
	if (!worker_nb_delta_ok(*nbp)) {
		/* Too many frames' zones: a copy in one is a base again. */
		nb = worker_nb_compact(*nbp);
		worker_nb_unref(*nbp);
		*nbp = nb;
	}
	worker_nb_unref(room->base);
	room->base = worker_nb_ref(*nbp);
}

/* Keep a change (its fields, not content) in the room's log. */
static void
worker_room_log(struct worker_room *room, const struct proto_room_changed *ev)
{
	struct worker_room_change	*c;
	struct mpbuf			 b;

	if (ev->seq == 0)
		return;
	c = &room->log[ev->seq % WORKER_ROOM_LOG];
	free(c->body);
	c->seq = (int64_t)ev->seq;
	c->body = NULL;
	c->len = 0;
	mpbuf_init(&b);
	proto_room_changed_pack(&b.pk, ev);
	if (b.sb.size <= WORKER_ROOM_LOG_BYTES) {
		c->body = xmalloc(b.sb.size);
		memcpy(c->body, b.sb.data, b.sb.size);
		c->len = b.sb.size;
	}
	mpbuf_free(&b);
}

/*
 * The changes after seq after up to upto as ROOM_CHANGES_REPLY lists
 * them (a msgpack array, into out), when every one is in the log; else
 * -1 and out is as it was.
 */
int
worker_room_changes(struct worker_room *room, int64_t after, int64_t upto,
    msgpack_sbuffer *out)
{
	struct worker_room_change	*c;
	msgpack_packer			 pk;
	int64_t				 s;

	if (upto <= after || upto - after > WORKER_ROOM_LOG)
		return (-1);
	for (s = after + 1; s <= upto; s++) {
		c = &room->log[s % WORKER_ROOM_LOG];
		if (c->seq != s || c->body == NULL)
			return (-1);
	}
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, (size_t)(upto - after));
	for (s = after + 1; s <= upto; s++) {
		c = &room->log[s % WORKER_ROOM_LOG];
		msgpack_sbuffer_write(out, c->body, c->len);
	}
	return (0);
}

/* The kept content (current until the next change), or NULL. */
struct worker_nb *
worker_room_content(struct worker_room *room)
{
	return (room->content);
}

/* The seq of the newest change this connection was told of. */
int64_t
worker_room_seq(struct worker_room *room)
{
	return (room->seq);
}

const struct proto_incarnation *
worker_room_incarnation(struct worker_room *room)
{
	return (worker_daemon_incarnation(room->dc));
}

static void	worker_room_set_path(struct worker_room *, const char *);

/*
 * A live room of this worker by notebook id, or NULL: a connect by id
 * shares it rather than joining the room a second time (the daemon would
 * count that connection until it closed again).
 */
struct worker_room *
worker_room_find_id(const char *notebook_id)
{
	struct worker_room	*room;

	if ((room = worker_room_find(notebook_id)) == NULL ||
	    !worker_room_alive(room))
		return (NULL);
	return (room);
}

/* A live room of this worker standing for the file path, or NULL. */
struct worker_room *
worker_room_find_path(const char *path)
{
	struct worker_room	*room;

	LIST_FOREACH(room, &worker_rooms, entry) {
		if (!room->lost && room->path != NULL &&
		    worker_room_alive(room) && strcmp(room->path, path) == 0)
			return (room);
	}
	return (NULL);
}

/* A remote room of ours: domain and the path on its server. */
struct worker_room *
worker_room_find_remote(const char *domain, const char *path)
{
	struct worker_room	*room;

	LIST_FOREACH(room, &worker_rooms, entry) {
		if (!room->lost && room->path != NULL &&
		    room->domain != NULL && worker_room_alive(room) &&
		    strcmp(room->domain, domain) == 0 &&
		    strcmp(room->path, path) == 0)
			return (room);
	}
	return (NULL);
}

/* The room was opened on domain (NULL: this machine). */
void
worker_room_set_domain(struct worker_room *room, const char *domain)
{
	free(room->domain);
	room->domain = domain != NULL ? xstrdup(domain) : NULL;
}

const char *
worker_room_domain(struct worker_room *room)
{
	return (room->domain);
}

/* The notebook's path as the daemon names it; NULL when untitled. */
const char *
worker_room_path(struct worker_room *room)
{
	return (room->path);
}

static void
worker_room_free(struct worker_room *room)
{
	struct worker_room_watch	*w;
	size_t				 i;

	while ((w = TAILQ_FIRST(&room->watches)) != NULL) {
		TAILQ_REMOVE(&room->watches, w, entry);
		free(w);
	}
	LIST_REMOVE(room, entry);
	for (i = 0; i < WORKER_ROOM_LOG; i++)
		free(room->log[i].body);
	worker_nb_unref(room->content);
	worker_nb_unref(room->last);
	worker_nb_unref(room->base);
	if (room->keep != NULL)
		event_free(room->keep);
	free(room->path);
	free(room->domain);
	if (room->dc != NULL)
		worker_daemon_free(room->dc, PROTO_E_ATTACHMENT_EXPIRED,
		    "the notebook handle was released during the call");
	free(room->notebook_id);
	free(room);
}

static void
worker_room_lost(struct worker_dconn *dc, void *arg)
{
	struct worker_room	*room = arg;

	log_warnx("lost the daemon connection of notebook %s",
	    room->notebook_id);
	room->lost = 1;
	worker_rpc_log(4, "runtimed", "lost the daemon connection of "
	    "notebook %s", room->notebook_id);
	worker_room_notify(room, NULL);
	worker_attach_room_lost(room);
	worker_watch_poke();
}

/*
 * ROOM_CHANGED_CONTENT: the change into ev, and the content after it kept
 * (when it is that content): the daemon's standing wait goes on from it,
 * so it is the next base.  Content by reference to a base not held, or
 * not as held, is not kept: the watchers read the room as after a
 * ROOM_CHANGED, and the wait is asked again with a content held.
 */
static int
worker_room_event_content(struct worker_room *room,
    const msgpack_object *body, msgpack_zone *zone,
    struct proto_room_changed *ev, struct worker_nb **nbp, char *err,
    size_t errlen)
{
	struct proto_room_changed_content	 m;
	struct worker_nb			*nb;
	char					*cause;

	if (proto_room_changed_content_unpack(body, &m, err, errlen) != 0) {
		room->armed = 0;
		return (-1);
	}
	*ev = m.change;
	if (!m.has_base)
		nb = worker_nb_read(PROTO_MSG_ROOM_CONTENT, m.content.obj,
		    zone, &cause);
	else if (room->base == NULL || room->base->seq != (int64_t)m.base) {
		nb = NULL;
		xasprintf(&cause, "content by reference to seq %llu, not "
		    "held", (unsigned long long)m.base);
	} else
		nb = worker_nb_read_delta(m.content.obj, zone, room->base,
		    &cause);
	worker_nb_unref(room->base);
	room->base = NULL;
	if (nb == NULL) {
		log_warnx("ROOM_CHANGED_CONTENT: %s", cause);
		free(cause);
		room->armed = 0;
		return (0);
	}
	*nbp = nb;	/* holds zone, which ev points into */
	if (nb->seq != (int64_t)ev->seq) {
		room->armed = 0;
		return (0);
	}
	worker_room_keep(room, nb);
	worker_room_set_path(room, nb->path);
	if (room->standing)
		worker_room_rebase(room);
	return (0);
}

static void
worker_room_event(struct worker_dconn *dc, uint16_t type,
    const msgpack_object *body, void *arg)
{
	struct worker_room		*room = arg;
	struct proto_room_changed	 ev;
	struct worker_nb		*nb = NULL;
	msgpack_zone			*zone;
	char				 err[256];
	int				 r;

	if (type != PROTO_MSG_ROOM_CHANGED &&
	    type != PROTO_MSG_ROOM_CHANGED_CONTENT)
		return;
	worker_room_invalidate(room);
	if (type == PROTO_MSG_ROOM_CHANGED_CONTENT) {
		/* The content is kept as it came, in the frame's zone. */
		zone = worker_daemon_take(dc);
		r = worker_room_event_content(room, body, zone, &ev, &nb, err,
		    sizeof err);
		if (nb == NULL && zone != NULL) {
			/* Not kept: copy what the watchers read of ev. */
			worker_room_event_done(room, &ev, r, err);
			msgpack_zone_free(zone);
			return;
		}
	} else {
		r = proto_room_changed_unpack(body, &ev, err, sizeof err);
		/* A wait the daemon ended without the content (too big). */
		if (r == 0 && (proto_room_change_kinds(&ev) & room->armed))
			room->armed = room->standing = 0;
	}
	worker_room_event_done(room, &ev, r, err);
	worker_nb_unref(nb);
}

/* Log the change ev (r: whether it decoded) and tell the watchers. */
static void
worker_room_event_done(struct worker_room *room,
    struct proto_room_changed *ev, int r, const char *err)
{
	if (r != 0) {
		/* Still a change: watchers re-read, the seq stays. */
		log_warnx("%s", err);
		memset(ev, 0, sizeof *ev);
	} else
		worker_room_log(room, ev);
	if ((int64_t)ev->seq > room->seq)
		room->seq = (int64_t)ev->seq;
	worker_room_notify(room, ev);
	worker_resource_room_changed(room, ev);
}

static void
worker_room_joined(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_room_join	*j = arg;
	struct worker_room	*room;
	struct worker_nb	*nb;
	msgpack_zone		*zone;
	char			*cause;

	if (code != NULL) {
		j->cb(j->arg, NULL, NULL, code, msg);
		worker_daemon_free(j->dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "closed");
		goto out;
	}
	zone = worker_daemon_take(j->dc);
	if ((nb = worker_nb_read(type, reply, zone, &cause)) == NULL &&
	    zone != NULL)
		msgpack_zone_free(zone);
	if (nb == NULL || *nb->notebook_id == '\0') {
		log_warnx("room join: %s", nb == NULL ? cause : "no id");
		if (nb == NULL)
			free(cause);
		worker_nb_unref(nb);
		j->cb(j->arg, NULL, NULL, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed to a room join");
		worker_daemon_free(j->dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "closed");
		goto out;
	}
	if ((room = worker_room_find(nb->notebook_id)) != NULL &&
	    worker_room_alive(room)) {
		/* Already joined here: share that connection. */
		worker_daemon_free(j->dc, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "closed");
	} else {
		room = xcalloc(1, sizeof *room);
		room->notebook_id = xstrdup(nb->notebook_id);
		TAILQ_INIT(&room->watches);
		room->dc = j->dc;
		/* Contents are kept as they came (worker_nb_read). */
		worker_daemon_keep_frames(room->dc, WORKER_ROOM_KEEP_FRAME);
		worker_watch_seen(worker_daemon_incarnation(room->dc));
		worker_daemon_set_cbs(room->dc, worker_room_lost,
		    worker_room_event, room);
		LIST_INSERT_HEAD(&worker_rooms, room, entry);
	}
	room->seq = nb->seq;
	worker_room_set_path(room, nb->path);
	room->refs++;		/* hold it across the callback */
	j->cb(j->arg, room, nb, NULL, NULL);
	worker_nb_unref(nb);
	worker_room_unref(room);
out:
	free(j);
}

/* Join (ROOM_CREATE or ROOM_OPEN) on a new connection. */
void
worker_room_join(uint16_t type, const msgpack_sbuffer *body,
    worker_room_join_cb cb, void *arg)
{
	struct worker_room_join	*j;

	j = xcalloc(1, sizeof *j);
	j->cb = cb;
	j->arg = arg;
	j->dc = worker_daemon_open("room");
	worker_daemon_request(j->dc, type, body, worker_room_joined, j);
}

void
worker_room_ref(struct worker_room *room)
{
	if (room != NULL)
		room->refs++;
}

void
worker_room_unref(struct worker_room *room)
{
	if (room == NULL)
		return;
	if (--room->refs == 0)
		worker_room_free(room);
}

int
worker_room_alive(struct worker_room *room)
{
	return (!room->lost && worker_daemon_alive(room->dc));
}

const char *
worker_room_notebook_id(struct worker_room *room)
{
	return (room->notebook_id);
}

int64_t
worker_room_started_at(struct worker_room *room)
{
	return (worker_daemon_incarnation(room->dc)->started_at);
}

/*
 * The last ROOM_CONTENT is kept until anything changes: a ROOM_CHANGED
 * or any request that may change the room.  Events and replies share
 * the connection in order, so a kept copy is never older than what a
 * new ROOM_GET sent now could have missed.  It stays the last content
 * held, which a content pushed later may refer to (worker_room_arm).
 */
static void
worker_room_invalidate(struct worker_room *room)
{
	room->gen++;
	if (room->content == NULL)
		return;
	worker_nb_unref(room->last);
	room->last = room->content;
	room->content = NULL;
}

/*
 * Keep nb as the room's content for WORKER_ROOM_KEEP_MS past its last
 * use: a notebook's JSON tree is several times its file, and an idle
 * worker need not hold one per attachment (issue 14).
 */
static void
worker_room_keep(struct worker_room *room, struct worker_nb *nb)
{
	struct timeval	tv;

	if (nb != room->content) {
		worker_nb_unref(room->content);
		room->content = worker_nb_ref(nb);
		worker_nb_unref(room->last);
		room->last = NULL;
	}
	if (room->keep == NULL)
		room->keep = evtimer_new(worker_rpc_base(), worker_room_drop,
		    room);
	tv.tv_sec = WORKER_ROOM_KEEP_MS / 1000;
	tv.tv_usec = (WORKER_ROOM_KEEP_MS % 1000) * 1000;
	evtimer_add(room->keep, &tv);
}

/* Unused for a while: drop it, and give the pages it held back. */
static void
worker_room_drop(evutil_socket_t fd, short events, void *arg)
{
	struct worker_room	*room = arg;

	worker_room_arm(room, 1);	/* a wait no watch wants, and its base */
	if (room->content == NULL && room->last == NULL)
		return;
	worker_nb_unref(room->content);
	room->content = NULL;
	worker_nb_unref(room->last);
	room->last = NULL;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static void
worker_room_set_path(struct worker_room *room, const char *path)
{
	free(room->path);
	room->path = path != NULL ? xstrdup(path) : NULL;
}

struct worker_room_get {
	struct worker_room	*room;
	u_int			 gen;
	worker_room_nb_cb	 cb;
	void			*arg;
	struct worker_nb	*cached;
};

static void
worker_room_got(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_room_get	*g = arg;
	struct worker_nb	*nb = NULL;
	msgpack_zone		*zone = NULL;
	char			*cause = NULL;

	if (code == NULL)
		zone = worker_daemon_take(g->room->dc);
	if (code == NULL &&
	    (nb = worker_nb_read(type, reply, zone, &cause)) == NULL) {
		if (zone != NULL)
			msgpack_zone_free(zone);
		log_warnx("ROOM_GET: %s", cause);
		code = PROTO_E_NOTEBOOK_UNAVAILABLE;
		msg = "unexpected reply from runtimed";
	}
	if (nb != NULL && g->gen == g->room->gen && !g->room->lost) {
		worker_room_keep(g->room, nb);
		worker_room_set_path(g->room, nb->path);
	}
	g->cb(g->arg, nb, code, msg);
	worker_nb_unref(nb);
	free(cause);
	worker_room_unref(g->room);
	free(g);
}

static void
worker_room_cached_cb(evutil_socket_t fd, short events, void *arg)
{
	struct worker_room_get	*g = arg;

	g->cb(g->arg, g->cached, NULL, NULL);
	worker_nb_unref(g->cached);
	worker_room_unref(g->room);
	free(g);
}

static void
worker_room_get_failed(void *arg, uint16_t type, const msgpack_object *body,
    const char *code, const char *msg)
{
	struct worker_room_get	*g = arg;

	g->cb(g->arg, NULL, code, msg);
	free(g);
}

/* The room's content (ROOM_GET), from the kept copy when it is current. */
void
worker_room_get(struct worker_room *room, worker_room_nb_cb cb, void *arg)
{
	struct worker_room_get	*g;

	g = xcalloc(1, sizeof *g);
	g->cb = cb;
	g->arg = arg;
	if (!worker_room_alive(room)) {
		worker_daemon_fail_later(worker_room_get_failed, g,
		    PROTO_E_ATTACHMENT_EXPIRED,
		    "the daemon behind this handle went "
		    "away; call connect_notebook again");
		return;
	}
	g->room = room;
	room->refs++;
	g->gen = room->gen;
	if (room->content != NULL) {
		/* Answer from the kept copy, from a fresh callback. */
		g->cached = worker_nb_ref(room->content);
		worker_room_keep(room, room->content);
		event_base_once(worker_rpc_base(), -1, EV_TIMEOUT,
		    worker_room_cached_cb, g, NULL);
		return;
	}
	worker_daemon_request(room->dc, PROTO_MSG_ROOM_GET, NULL,
	    worker_room_got, g);
}

/* Any request but ROOM_GET (worker_room_get) on the room's connection. */
void
worker_room_request(struct worker_room *room, uint16_t type,
    const msgpack_sbuffer *body, worker_daemon_cb cb, void *arg)
{
	if (!worker_room_alive(room)) {
		worker_daemon_fail_later(cb, arg, PROTO_E_ATTACHMENT_EXPIRED,
		    "the daemon behind this handle went away; call "
		    "connect_notebook again");
		return;
	}
	if (proto_msg_has(type, PROTO_F_MUTATES))
		worker_room_invalidate(room);
	worker_daemon_request(room->dc, type, body, cb, arg);
}
