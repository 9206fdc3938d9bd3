/* SPDX-License-Identifier: ISC */
/*
 * worker-attach.c: the notebook handles this worker issued.  A handle is
 * opaque and unguessable ("nbh_" + session tag + 128 random bits); it
 * names one attachment of one notebook through one room connection.  At
 * most WORKER_MAX_ATTACH exist, acquisitions still in progress included.
 */

#include <sys/queue.h>
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

#define WORKER_ATTACH_RELEASED_MAX	4096

struct worker_handle {
	char			 id[WORKER_HANDLE_LEN + 1];
	char			*notebook_id;
	struct worker_room	*room;
	int			 pending;	/* not yet joined */
	int			 owner;		/* ID address owner */
	int			 lost;		/* room connection gone */
	int			 announced;	/* final update sent */
	int			 rejoin;	/* hosted, its daemon replaced */
	int			 rejoining;	/* its ROOM_OPEN in flight */
	struct proto_incarnation inc;		/* issued under */
	TAILQ_ENTRY(worker_handle) entry;
};
TAILQ_HEAD(worker_attach_head, worker_handle);

static struct worker_attach_head worker_attach_all =
    TAILQ_HEAD_INITIALIZER(worker_attach_all);
static u_int	 worker_attach_n;
static uint32_t	 worker_attach_tagv;
static uint32_t	 worker_attach_get_tag(void);
static void	worker_attach_random(void *, size_t);
static void	worker_attach_mint(char *);
static void	worker_attach_remove(struct worker_handle *);
static void	worker_attach_remember(const char *);
static int	worker_attach_was_released(const char *);
static struct worker_handle	*worker_attach_by_handle(const char *,
		    const char **, char **);
static struct worker_handle	*worker_attach_by_id(const char *,
				    const char *, int *,
		    const char **, char **);
static int	 worker_attach_tag_set;
static void	worker_attach_rejoin(struct worker_handle *);
static void	worker_attach_rejoined(void *, struct worker_room *,
		    struct worker_nb *, const char *, const char *);

/* One re-join of a hosted notebook: its room as it was. */
struct worker_attach_rejoin {
	struct worker_room	*old;
	char			*domain;
};

/* Re-joins failing for want of a server back off up to this. */
#define WORKER_ATTACH_REJOIN_MAX_MS	60000
static int64_t	 worker_attach_rejoin_at;
static int	 worker_attach_rejoin_ms;

/* Released handle ids, oldest first, so they answer attachment_expired. */
static char	**worker_attach_released;
static u_int	  worker_attach_nreleased;

static void
worker_attach_random(void *buf, size_t len)
{
	uint8_t	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("getrandom");
		p += n;
		len -= (size_t)n;
	}
}

/* The tag shared by every worker of one proxy (or this one on stdio). */
void
worker_attach_set_tag(uint32_t tag)
{
	worker_attach_tagv = tag;
	worker_attach_tag_set = 1;
}

uint32_t
worker_attach_tag(void)
{
	return (worker_attach_get_tag());
}

static uint32_t
worker_attach_get_tag(void)
{
	if (!worker_attach_tag_set) {
		worker_attach_random(&worker_attach_tagv,
		    sizeof worker_attach_tagv);
		worker_attach_tag_set = 1;
	}
	return (worker_attach_tagv);
}

static void
worker_attach_mint(char *out)
{
	uint8_t	rnd[16];
	char	*p;
	u_int	 i;

	worker_attach_random(rnd, sizeof rnd);
	p = out + snprintf(out, WORKER_HANDLE_LEN + 1, "%s%08x",
	    WORKER_HANDLE_PREFIX, worker_attach_get_tag());
	for (i = 0; i < sizeof rnd; i++)
		p += sprintf(p, "%02x", rnd[i]);
}

/* Take a slot before any effect; NULL when all are in use. */
struct worker_handle *
worker_attach_reserve(void)
{
	struct worker_handle	*h;

	if (worker_attach_n >= WORKER_MAX_ATTACH)
		return (NULL);
	h = xcalloc(1, sizeof *h);
	worker_attach_mint(h->id);
	h->pending = 1;
	TAILQ_INSERT_TAIL(&worker_attach_all, h, entry);
	worker_attach_n++;
	return (h);
}

void
worker_attach_commit(struct worker_handle *h, struct worker_room *room,
    const char *notebook_id)
{
	h->pending = 0;
	h->room = room;
	h->notebook_id = xstrdup(notebook_id);
	if (room != NULL)
		h->inc = *worker_room_incarnation(room);
	worker_room_ref(room);
	log_debug("%s: %s -> %s", __func__, h->id, notebook_id);
	worker_resource_list_changed();
}

static void
worker_attach_remove(struct worker_handle *h)
{
	TAILQ_REMOVE(&worker_attach_all, h, entry);
	worker_attach_n--;
	if (h->room != NULL)
		worker_room_unref(h->room);
	free(h->notebook_id);
	free(h);
}

/* An acquisition failed: give the slot back, the id was never seen. */
void
worker_attach_cancel(struct worker_handle *h)
{
	worker_attach_remove(h);
}

static void
worker_attach_remember(const char *id)
{
	if (worker_attach_nreleased == WORKER_ATTACH_RELEASED_MAX) {
		free(worker_attach_released[0]);
		memmove(worker_attach_released, worker_attach_released + 1,
		    (worker_attach_nreleased - 1) * sizeof (char *));
		worker_attach_nreleased--;
	}
	worker_attach_released = xreallocarray(worker_attach_released,
	    worker_attach_nreleased + 1, sizeof (char *));
	worker_attach_released[worker_attach_nreleased++] = xstrdup(id);
}

/* Release one owner; the room connection goes with its last handle. */
void
worker_attach_release(struct worker_handle *h)
{
	log_debug("%s: %s", __func__, h->id);
	worker_attach_remember(h->id);
	if (!h->announced)
		worker_resource_handle_ended(h->id, "attachmentExpired");
	worker_attach_remove(h);
}

/* A committed handle by its id, or NULL. */
struct worker_handle *
worker_attach_find(const char *id)
{
	struct worker_handle	*h;

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (!h->pending && strcmp(h->id, id) == 0)
			return (h);
	}
	return (NULL);
}

void
worker_attach_foreach(void (*fn)(struct worker_handle *, void *), void *arg)
{
	struct worker_handle	*h, *next;

	for (h = TAILQ_FIRST(&worker_attach_all); h != NULL; h = next) {
		next = TAILQ_NEXT(h, entry);
		if (!h->pending)
			fn(h, arg);
	}
}

/*
 * The daemon was replaced (cur is the new one) or is gone (cur NULL):
 * every handle issued under another incarnation expires, except those
 * of notebooks on a domain (decision 030): the server has the notebook,
 * so they wait for a daemon and are joined to the same notebook again.
 */
void
worker_attach_expire(const struct proto_incarnation *cur, const char *why)
{
	struct worker_handle	*h, *next;
	u_int			 n = 0;

	for (h = TAILQ_FIRST(&worker_attach_all); h != NULL; h = next) {
		next = TAILQ_NEXT(h, entry);
		if (h->pending || h->room == NULL)
			continue;
		if (cur != NULL && h->inc.pid == cur->pid &&
		    h->inc.started_at == cur->started_at)
			continue;
		if (worker_room_domain(h->room) != NULL &&
		    worker_room_path(h->room) != NULL) {
			if (!h->rejoin)
				log_info("%s: waits to be joined again to %s "
				    "on %s", h->id, worker_room_path(h->room),
				    worker_room_domain(h->room));
			h->rejoin = 1;
			h->lost = 1;
			continue;
		}
		worker_attach_release(h);
		n++;
	}
	if (cur != NULL) {
		worker_attach_rejoin_at = 0;
		worker_attach_rejoin_ms = 0;
		worker_attach_rejoin_all();
	}
	if (n > 0) {
		log_info("%u notebook handle%s expired: %s", n,
		    n == 1 ? "" : "s", why);
		worker_rpc_log(4, "runtimed", "%u notebook handle%s expired: "
		    "%s", n, n == 1 ? "" : "s", why);
	}
}

/* Are hosted handles waiting for a daemon to be joined to again? */
int
worker_attach_rejoin_pending(void)
{
	struct worker_handle	*h;

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->rejoin)
			return (1);
	}
	return (0);
}

/* A daemon answers: join every waiting hosted notebook again. */
void
worker_attach_rejoin_all(void)
{
	struct worker_handle	*h;

	if (util_mono_ms() < worker_attach_rejoin_at)
		return;
	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->rejoin && !h->rejoining)
			worker_attach_rejoin(h);
	}
}

/*
 * ROOM_OPEN {path, domain, notebook_id} for h's notebook: the daemon
 * gives only the room that was that notebook, under the principal it was
 * opened as.  Every handle of the same room rides on this one.
 */
static void
worker_attach_rejoin(struct worker_handle *h)
{
	struct worker_attach_rejoin	*rj;
	struct worker_handle		*o;
	struct proto_room_open		 m;
	struct mpbuf			 b;

	rj = xcalloc(1, sizeof *rj);
	rj->old = h->room;
	worker_room_ref(rj->old);
	rj->domain = xstrdup(worker_room_domain(h->room));
	TAILQ_FOREACH(o, &worker_attach_all, entry) {
		if (o->rejoin && o->room == rj->old)
			o->rejoining = 1;
	}
	log_debug("%s: %s (%s on %s)", __func__, h->notebook_id,
	    worker_room_path(h->room), rj->domain);
	memset(&m, 0, sizeof m);
	m.path = proto_str_make(worker_room_path(h->room));
	m.domain = proto_str_make(rj->domain);
	m.notebook_id = proto_str_make(h->notebook_id);
	mpbuf_init(&b);
	proto_room_open_pack(&b.pk, &m);
	worker_room_join(PROTO_MSG_ROOM_OPEN, &b.sb, worker_attach_rejoined,
	    rj);
	mpbuf_free(&b);
}

static void
worker_attach_rejoined(void *arg, struct worker_room *room,
    struct worker_nb *joined, const char *code, const char *msg)
{
	struct worker_attach_rejoin	*rj = arg;
	struct worker_handle		*h, *next;
	u_int				 n = 0;

	if (room != NULL)
		worker_room_set_domain(room, rj->domain);
	for (h = TAILQ_FIRST(&worker_attach_all); h != NULL; h = next) {
		next = TAILQ_NEXT(h, entry);
		if (!h->rejoin || h->room != rj->old)
			continue;
		h->rejoining = 0;
		if (room != NULL) {
			worker_room_unref(h->room);
			h->room = room;
			worker_room_ref(room);
			h->inc = *worker_room_incarnation(room);
			h->rejoin = h->lost = h->announced = 0;
			n++;
		} else if (strcmp(code, PROTO_E_ATTACHMENT_EXPIRED) == 0) {
			worker_attach_release(h);
			n++;
		}
	}
	if (room != NULL) {
		worker_attach_rejoin_ms = 0;
		log_info("%u handle%s of %s joined again", n, n == 1 ? "" :
		    "s", worker_room_notebook_id(room));
		worker_rpc_log(5, "runtimed", "the daemon was replaced; %u "
		    "handle%s of notebook %s on %s joined it again", n,
		    n == 1 ? "" : "s", worker_room_notebook_id(room),
		    rj->domain);
		worker_resource_list_changed();
	} else if (strcmp(code, PROTO_E_ATTACHMENT_EXPIRED) == 0) {
		log_info("%u handle%s expired: %s", n, n == 1 ? "" : "s", msg);
		worker_rpc_log(4, "runtimed", "%u notebook handle%s expired: "
		    "%s", n, n == 1 ? "" : "s", msg);
	} else {
		/* The server (or the daemon) is not there yet: later. */
		worker_attach_rejoin_ms = worker_attach_rejoin_ms == 0 ?
		    WORKER_WATCH_PERIOD_MS : worker_attach_rejoin_ms * 2;
		if (worker_attach_rejoin_ms > WORKER_ATTACH_REJOIN_MAX_MS)
			worker_attach_rejoin_ms = WORKER_ATTACH_REJOIN_MAX_MS;
		worker_attach_rejoin_at = util_mono_ms() +
		    worker_attach_rejoin_ms;
		log_info("re-join of %s on %s failed (%s: %s); again in "
		    "%d s", worker_room_path(rj->old), rj->domain, code, msg,
		    worker_attach_rejoin_ms / 1000);
	}
	worker_room_unref(rj->old);
	free(rj->domain);
	free(rj);
}

/* A room's connection is gone; the watch decides what that means. */
void
worker_attach_room_lost(struct worker_room *room)
{
	struct worker_handle	*h;

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->room == room)
			h->lost = 1;
	}
}

/*
 * The daemon is the same one: handles of lost rooms are unavailable for
 * good but keep their slots until released.  Returns how many.
 */
int
worker_attach_unavailable(struct worker_handle *only)
{
	struct worker_handle	*h;
	int			 n = 0;

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (only != NULL && h != only)
			continue;
		if (!h->lost || h->announced || h->rejoin)
			continue;
		h->announced = 1;
		worker_resource_handle_ended(h->id, "attachmentUnavailable");
		n++;
	}
	return (n);
}

u_int
worker_attach_count(void)
{
	return (worker_attach_n);
}

const char *
worker_attach_id(struct worker_handle *h)
{
	return (h->id);
}

const char *
worker_attach_notebook_id(struct worker_handle *h)
{
	return (h->notebook_id);
}

struct worker_room *
worker_attach_room(struct worker_handle *h)
{
	return (h->room);
}

static int
worker_attach_was_released(const char *id)
{
	u_int	i;

	for (i = 0; i < worker_attach_nreleased; i++) {
		if (strcmp(worker_attach_released[i], id) == 0)
			return (1);
	}
	return (0);
}

static struct worker_handle *
worker_attach_by_handle(const char *value, const char **code, char **msg)
{
	struct worker_handle	*h;
	char			 prefix[16];

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->pending || strcmp(h->id, value) != 0)
			continue;
		if (h->rejoin) {
			*code = PROTO_E_ATTACHMENT_UNAVAILABLE;
			xasprintf(msg, "the local daemon was replaced; this "
			    "handle is joined again to %s on %s as soon as a "
			    "daemon and the server answer: retry in a moment",
			    worker_room_path(h->room),
			    worker_room_domain(h->room));
			return (NULL);
		}
		if (h->lost || (h->room != NULL &&
		    !worker_room_alive(h->room))) {
			h->lost = 1;
			worker_watch_poke();
			*code = PROTO_E_ATTACHMENT_UNAVAILABLE;
			xasprintf(msg, "the notebook behind this handle is no "
			    "longer reachable; release it with "
			    "disconnect_notebook and call connect_notebook "
			    "again");
			return (NULL);
		}
		return (h);
	}
	snprintf(prefix, sizeof prefix, "%s%08x", WORKER_HANDLE_PREFIX,
	    worker_attach_get_tag());
	if (worker_attach_was_released(value)) {
		*code = PROTO_E_ATTACHMENT_EXPIRED;
		xasprintf(msg, "this notebook handle was released; call "
		    "connect_notebook for a new one");
	} else if (strncmp(value, prefix, strlen(prefix)) == 0 &&
	    strlen(value) == WORKER_HANDLE_LEN) {
		*code = PROTO_E_ATTACHMENT_EXPIRED;
		xasprintf(msg, "this notebook handle is from an earlier "
		    "worker of this session; call connect_notebook again");
	} else {
		*code = PROTO_E_INVALID_NOTEBOOK_TARGET;
		xasprintf(msg, "unknown notebook handle; use the "
		    "notebook_handle returned by connect_notebook or "
		    "create_notebook");
	}
	return (NULL);
}

/*
 * An ID resolves only among notebooks attached here and never opens
 * anything.  The first ID call mints an address owner (one slot) that
 * later ID calls reuse until it is released.
 */
static struct worker_handle *
worker_attach_by_id(const char *value, const char *domain, int *minted,
    const char **code, char **msg)
{
	struct worker_handle	*h, *any = NULL;
	const char		*hd;

	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->pending || strcmp(h->notebook_id, value) != 0)
			continue;
		/* The id names a notebook of that domain only. */
		hd = h->room != NULL ? worker_room_domain(h->room) : NULL;
		if ((hd == NULL) != (domain == NULL) ||
		    (hd != NULL && strcmp(hd, domain) != 0))
			continue;
		if (h->lost || (h->room != NULL &&
		    !worker_room_alive(h->room)))
			continue;
		if (h->owner)
			return (h);
		if (any == NULL)
			any = h;
	}
	if (any == NULL) {
		*code = PROTO_E_NOT_ATTACHED;
		xasprintf(msg, "notebook %s is not attached in this session%s%s; "
		    "call connect_notebook with its notebook_id or path first",
		    value, domain != NULL ? " from domain " : "",
		    domain != NULL ? domain : "");
		return (NULL);
	}
	if ((h = worker_attach_reserve()) == NULL) {
		*code = PROTO_E_ATTACHMENT_LIMIT;
		xasprintf(msg, "%d notebook handles are in use; release some "
		    "with disconnect_notebook", WORKER_MAX_ATTACH);
		return (NULL);
	}
	h->owner = 1;
	worker_attach_commit(h, any->room, value);
	*minted = 1;
	return (h);
}

/* Resolve a parsed target to a live handle, or a code and message. */
struct worker_handle *
worker_attach_resolve(const struct worker_target *t, int *minted,
    const char **code, char **msg)
{
	*minted = 0;
	if (t->kind == WORKER_TARGET_HANDLE)
		return (worker_attach_by_handle(t->value, code, msg));
	return (worker_attach_by_id(t->value, t->domain, minted, code, msg));
}

/* The attachments part of list_notebooks. */
struct json_object *
worker_attach_list(void)
{
	struct json_object	*a, *o;
	struct worker_handle	*h;

	a = json_object_new_array();
	TAILQ_FOREACH(h, &worker_attach_all, entry) {
		if (h->pending)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "notebook_handle",
		    json_object_new_string(h->id));
		json_object_object_add(o, "notebook_id",
		    json_object_new_string(h->notebook_id));
		json_object_object_add(o, "live", json_object_new_boolean(
		    !h->lost && (h->room == NULL ||
		    worker_room_alive(h->room))));
		json_object_array_add(a, o);
	}
	return (a);
}

/* Forget everything (tests). */
void
worker_attach_reset(void)
{
	struct worker_handle	*h;
	u_int			 i;

	while ((h = TAILQ_FIRST(&worker_attach_all)) != NULL)
		worker_attach_remove(h);
	for (i = 0; i < worker_attach_nreleased; i++)
		free(worker_attach_released[i]);
	free(worker_attach_released);
	worker_attach_released = NULL;
	worker_attach_nreleased = 0;
}

/*
 * End a pending acquisition: on success bind the reserved handle to the
 * room and answer with the attached notebook; else give the reservation
 * back and answer the error.
 */
void
worker_attach_finish(struct worker_call *call, struct worker_handle *h,
    struct worker_room *room, const struct worker_nb *joined,
    const char *code, const char *msg)
{
	if (code != NULL) {
		worker_attach_cancel(h);
		worker_call_error(call, code, "%s", msg);
		return;
	}
	worker_attach_commit(h, room, worker_room_notebook_id(room));
	worker_output_attached(call, h, joined);
}
