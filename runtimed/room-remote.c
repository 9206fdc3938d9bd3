/* SPDX-License-Identifier: ISC */
/*
 * room-remote.c: rooms whose notebook lives on a Jupyter Server (a
 * domain, domain.h).  The room is an ordinary room (edits, runs,
 * journal, observation are unchanged); only where its bytes come from
 * and go to differs: the contents API, GET to load and PUT to save, as
 * text so the .ipynb writer's bytes reach the server unchanged.  The
 * server's last_modified at load or last save guards a save: a
 * different one now is file_changed_on_disk, like a local file's stat.
 * Its kernel is run by runtimed-agent-remote (room-kernel.c) on the
 * server, in the notebook's directory.
 *
 * Identity: every open asks the server who we are (domain_whoami_start)
 * and fails closed without a principal; a room opened under one
 * principal is never joined under another (another token for the same
 * server).
 *
 * No call here waits for the server (decision 029): each is an
 * operation (struct room_remote_op) of asynchronous requests on the
 * daemon's loop, answered from its completion.  An operation outlives
 * what it was for: the room it works on (rr) and the peer it answers
 * are cleared when they go (room_remote_free, room_remote_peer_gone)
 * and its completion then does nothing with them.  A room's saves run
 * one at a time, in order.  While a room has clients its server copy is
 * polled (the watch): a last_modified we did not write is an outside
 * change, merged into the room against the copy both last agreed on
 * (room-merge.c), as a local file's change is (docs/decisions/056).
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "runtimed.h"
#include "domain.h"

/* How often a remote room with clients looks at the server's copy. */
#define ROOM_REMOTE_WATCH_MS	5000

enum room_remote_kind {
	ROOM_REMOTE_OPEN,
	ROOM_REMOTE_REJOIN,
	ROOM_REMOTE_CREATE,
	ROOM_REMOTE_SAVE,
	ROOM_REMOTE_KERNELS,
	ROOM_REMOTE_PROBE,
	ROOM_REMOTE_WATCH
};

struct room_remote_op;
TAILQ_HEAD(room_remote_ops, room_remote_op);

struct room_remote {
	struct room		*room;
	char			*domain;
	struct domain		*d;
	char			*path;	/* relative to its root */
	char			*last_modified; /* NULL: not there yet */
	char			*principal;
	int			 lost;	/* the server went away */
	int			 kept;	/* lost with unsaved edits: kept bound */
	int			 probing; /* /api after a kernel died */
	uint64_t		 gen;	/* a save started or ended */
	char			*outside; /* a change kept (dirty) */
	struct event		*watch;
	int			 watching; /* a watch call in flight */
	struct room_remote_ops	 saves;	/* the first one runs */
	char			*kernel_id; /* the server's, once ready */
	char			*kept_kernel; /* one an earlier daemon left */
};

struct room_remote_op {
	enum room_remote_kind	 kind;
	int			 step;
	struct room_remote	*rr;	/* NULL once the room is gone */
	struct peer		*peer;	/* NULL once it left */
	uint32_t		 id;
	/* Open, rejoin and create: the room to be (a rejoin's id). */
	char			*nbid;
	char			*domain;
	char			*path;
	char			*kernel;
	struct domain		*d;
	char			*principal;
	struct room_nb		*nb;
	room_remote_open_cb	 open_cb;
	/* Save. */
	char			*target;
	int			 force;
	int			 same;
	uint64_t		 content_gen;	/* at the PUT */
	struct room_base	*base;		/* what the PUT wrote */
	room_save_cb		 save_cb;
	/* Kernelspecs. */
	char			*name;
	room_remote_kernels_cb	 kernels_cb;
	/* The watch: the room's generation, the last_modified seen. */
	uint64_t		 gen;
	char			*seen;
	TAILQ_ENTRY(room_remote_op) entry;	/* room_remote_all */
	TAILQ_ENTRY(room_remote_op) sentry;	/* rr->saves */
};
static struct room_remote_ops room_remote_all =
    TAILQ_HEAD_INITIALIZER(room_remote_all);
static int	room_remote_watch_ms = -1;

static int	room_remote_valid_path(const char *, char **);
static struct room_remote_op *room_remote_op_create(enum room_remote_kind,
		    struct peer *, uint32_t);
static void	room_remote_op_free(struct room_remote_op *);
static int	room_remote_get(struct room_remote_op *, const char *,
		    const char *, const char *, size_t, jserver_cb);
static int	room_remote_lm(struct jserver_reply *, char **);
static int64_t	room_remote_lm_ms(const char *);
static struct room_nb *room_remote_parse(struct jserver_reply *,
		    const char *, const char *, char **, char **);
static struct room *room_remote_find(const char *, const char *);
static int	room_remote_busy_path(const char *, const char *);
static void	room_remote_finish(struct room_remote_op *, struct room *,
		    const char *, const char *);
static void	room_remote_start(struct room_remote_op *, char **,
		    const char **);
static void	room_remote_whoami_done(struct domain_identity *, void *);
static struct room *room_remote_rejoin_room(struct room_remote_op *);
static int	room_remote_join(struct room_remote_op *);
static void	room_remote_wake(struct room_remote_op *, struct room *,
		    struct jserver_reply *);
static void	room_remote_reclaim(struct room *);
static void	room_remote_loaded(struct jserver_reply *, void *);
static struct room *room_remote_make(struct room_remote_op *,
		    const char *);
static void	room_remote_create_step(struct jserver_reply *, void *);
static char	*room_remote_put_body(const char *, size_t, size_t *);
static void	room_remote_save_next(struct room_remote *);
static void	room_remote_save_step(struct jserver_reply *, void *);
static void	room_remote_save_end(struct room_remote_op *, const char *,
		    const char *);
static struct json_object *room_remote_specs(struct jserver_reply *,
		    const char *, const char *, char **);
static void	room_remote_kernels_done(struct jserver_reply *, void *);
static void	room_remote_probed(struct jserver_reply *, void *);
static void	room_remote_watch_add(struct room_remote *);
static void	room_remote_watch_tick(evutil_socket_t, short, void *);
static void	room_remote_watch_step(struct jserver_reply *, void *);

/* A server path: relative, no "..", no NUL or control bytes. */
static int
room_remote_valid_path(const char *path, char **cause)
{
	const char	*p;
	size_t		 len = strlen(path);

	if (len == 0 || len > 1024 || *path == '/') {
		xasprintf(cause, "a path on a Jupyter Server is relative to "
		    "its root, like dir/name.ipynb");
		return (-1);
	}
	for (p = path; *p != '\0'; p++) {
		if ((u_char)*p < 0x20 || *p == '\\') {
			xasprintf(cause, "the path holds a control byte or "
			    "backslash");
			return (-1);
		}
	}
	if (strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0 ||
	    strstr(path, "/../") != NULL ||
	    (len >= 3 && strcmp(path + len - 3, "/..") == 0)) {
		xasprintf(cause, "the path may not climb out with ..");
		return (-1);
	}
	return (0);
}

static struct room_remote_op *
room_remote_op_create(enum room_remote_kind kind, struct peer *peer,
    uint32_t id)
{
	struct room_remote_op	*op;

	op = xcalloc(1, sizeof *op);
	op->kind = kind;
	op->peer = peer;
	op->id = id;
	TAILQ_INSERT_TAIL(&room_remote_all, op, entry);
	return (op);
}

static void
room_remote_op_free(struct room_remote_op *op)
{
	TAILQ_REMOVE(&room_remote_all, op, entry);
	free(op->domain);
	free(op->nbid);
	free(op->path);
	free(op->kernel);
	domain_free(op->d);
	free(op->principal);
	if (op->nb != NULL)
		room_nb_free(op->nb);
	free(op->target);
	room_merge_base_free(op->base);
	free(op->name);
	free(op->seen);
	free(op);
}

/* Start a request of op's: its own domain (open, create) or its room's. */
static int
room_remote_get(struct room_remote_op *op, const char *method,
    const char *uri, const char *body, size_t len, jserver_cb cb)
{
	const struct domain	*d = op->d != NULL ? op->d : op->rr->d;

	return (jserver_request(runtimed_base, d, method, uri, body, len,
	    JSERVER_TIMEOUT, cb, op));
}

/*
 * The last_modified of a contents model reply: 1 with *lm set, 0 if
 * there is no such file, -1 when the reply cannot say.
 */
static int
room_remote_lm(struct jserver_reply *r, char **lm)
{
	struct json_object	*o, *v;
	char			*why;
	int			 rc = -1;

	*lm = NULL;
	if (r->status == 404)
		return (0);
	/* A PUT or POST that made the file answers 201 with its model. */
	if (r->status != 200 && r->status != 201)
		return (-1);
	if ((o = jserver_reply_json(r, &why)) == NULL) {
		free(why);
		return (-1);
	}
	if (json_object_object_get_ex(o, "last_modified", &v) &&
	    json_object_is_type(v, json_type_string)) {
		*lm = xstrdup(json_object_get_string(v));
		rc = 1;
	}
	json_object_put(o);
	return (rc);
}

/*
 * A last_modified ("2026-12-07T10:00:00.123456Z") in ms since the epoch,
 * or 0 if it is not in that form.
 */
static int64_t
room_remote_lm_ms(const char *lm)
{
	struct tm	 tm;
	const char	*p;
	int64_t		 ms = 0, scale = 100;

	memset(&tm, 0, sizeof tm);
	if ((p = strptime(lm, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return (0);
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			ms += (*p - '0') * scale;
			scale /= 10;
		}
	}
	return ((int64_t)timegm(&tm) * 1000 + ms);
}

/* A GET of path's text model as a notebook, and its last_modified. */
static struct room_nb *
room_remote_parse(struct jserver_reply *rep, const char *path,
    const char *url, char **lm, char **cause)
{
	struct json_object	*o = NULL, *v, *c;
	struct room_nb		*nb;
	char			*why;

	*lm = NULL;
	if (rep->status != 200) {
		why = jserver_reply_message(rep);
		xasprintf(cause, "%s on %s: %s%s", path, url, why,
		    rep->status == 404 ? " (no such file on the server; "
		    "create_notebook makes one)" : "");
		free(why);
		return (NULL);
	}
	if ((o = jserver_reply_json(rep, &why)) == NULL ||
	    !json_object_object_get_ex(o, "content", &c) ||
	    !json_object_is_type(c, json_type_string) ||
	    !json_object_object_get_ex(o, "last_modified", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		if (o == NULL)
			free(why);
		json_object_put(o);
		xasprintf(cause, "%s on %s: the server's answer is not a "
		    "text file model (is it a directory, or not UTF-8?)",
		    path, url);
		return (NULL);
	}
	if ((nb = room_ipynb_parse(json_object_get_string(c),
	    (size_t)json_object_get_string_len(c), &why)) == NULL) {
		xasprintf(cause, "%s on %s: %s", path, url, why);
		free(why);
		json_object_put(o);
		return (NULL);
	}
	*lm = xstrdup(json_object_get_string(v));
	json_object_put(o);
	return (nb);
}

/* An open remote room for domain and path. */
static struct room *
room_remote_find(const char *domain, const char *path)
{
	struct room	*r;
	size_t		 i = 0;

	while ((r = room_nth(i++)) != NULL) {
		if (r->remote != NULL &&
		    (!r->remote->lost || r->remote->kept) &&
		    strcmp(r->remote->domain, domain) == 0 &&
		    strcmp(r->remote->path, path) == 0)
			return (r);
	}
	return (NULL);
}

/*
 * Is path on domain about to be a room: another create of it, or a
 * save-as to it, in flight (as room_find_path counts a local save-as)?
 */
static int
room_remote_busy_path(const char *domain, const char *path)
{
	struct room_remote_op	*op;

	TAILQ_FOREACH(op, &room_remote_all, entry) {
		if (op->kind == ROOM_REMOTE_CREATE && op->path != NULL &&
		    strcmp(op->domain, domain) == 0 &&
		    strcmp(op->path, path) == 0)
			return (1);
		if (op->kind == ROOM_REMOTE_SAVE && op->rr != NULL &&
		    op->target != NULL &&
		    strcmp(op->rr->domain, domain) == 0 &&
		    strcmp(op->target, path) == 0)
			return (1);
	}
	return (0);
}

/* An open or create is over: answer whoever asked, if still there. */
static void
room_remote_finish(struct room_remote_op *op, struct room *r,
    const char *cause, const char *code)
{
	if (op->peer != NULL && op->open_cb != NULL)
		op->open_cb(r, op->peer, op->id, cause, code);
	room_remote_op_free(op);
}

/* Load the domain and ask who we are; the rest follows from there. */
static void
room_remote_start(struct room_remote_op *op, char **cause, const char **code)
{
	char	*why;

	if ((op->d = domain_load(op->domain, &why)) == NULL) {
		*code = PROTO_E_INVALID_ARGUMENT;
		*cause = why;
		room_remote_op_free(op);
		return;
	}
	if (domain_whoami_start(runtimed_base, op->d, room_remote_whoami_done,
	    op) != 0) {
		*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
		xasprintf(cause, "cannot reach %s: cannot start a request",
		    op->d->url);
		room_remote_op_free(op);
	}
}

/*
 * Start opening the notebook at path on domain: cb gets its room (or
 * why not, with the code) on the loop.  -1 with *cause and *code for a
 * request refused at once (nothing started, cb not called).
 */
int
room_remote_open(const char *domain, const char *path, struct peer *peer,
    uint32_t id, room_remote_open_cb cb, char **cause, const char **code)
{
	struct room_remote_op	*op;

	*cause = NULL;
	*code = PROTO_E_INVALID_ARGUMENT;
	if (room_remote_valid_path(path, cause) != 0)
		return (-1);
	op = room_remote_op_create(ROOM_REMOTE_OPEN, peer, id);
	op->domain = xstrdup(domain);
	op->path = xstrdup(path);
	op->open_cb = cb;
	room_remote_start(op, cause, code);
	return (*cause != NULL ? -1 : 0);
}

/*
 * Start a new notebook on the server at path (or, without one, where
 * the server's "new notebook" puts it), written at once so it exists
 * there; as room_remote_open.
 */
int
room_remote_create(const char *domain, const char *path, const char *kernel,
    struct peer *peer, uint32_t id, room_remote_open_cb cb, char **cause,
    const char **code)
{
	struct room_remote_op	*op;

	*cause = NULL;
	*code = PROTO_E_INVALID_ARGUMENT;
	if (path != NULL && room_remote_valid_path(path, cause) != 0)
		return (-1);
	if (path != NULL && (room_remote_find(domain, path) != NULL ||
	    room_remote_busy_path(domain, path))) {
		xasprintf(cause, "%s exists on %s (open here, or being "
		    "created); use connect_notebook", path, domain);
		return (-1);
	}
	op = room_remote_op_create(ROOM_REMOTE_CREATE, peer, id);
	op->domain = xstrdup(domain);
	op->path = path != NULL ? xstrdup(path) : NULL;
	op->kernel = xstrdup(kernel != NULL ? kernel : "python3");
	op->open_cb = cb;
	room_remote_start(op, cause, code);
	return (*cause != NULL ? -1 : 0);
}

/* Who the server says we are: go on, or fail closed. */
static void
room_remote_whoami_done(struct domain_identity *id, void *arg)
{
	struct room_remote_op	*op = arg;
	char			*uri;
	int			 rc;

	if (!id->authenticated) {
		room_remote_finish(op, NULL, id->problem != NULL ?
		    id->problem : "the server does not say who you are",
		    id->untrusted ? PROTO_E_TLS_UNVERIFIED :
		    id->reachable && op->kind != ROOM_REMOTE_REJOIN ?
		    PROTO_E_INVALID_ARGUMENT : PROTO_E_NOTEBOOK_UNAVAILABLE);
		return;
	}
	op->principal = id->principal;
	id->principal = NULL;
	if (op->kind == ROOM_REMOTE_OPEN || op->kind == ROOM_REMOTE_REJOIN) {
		if (room_remote_join(op))
			return;
		uri = domain_contents_uri(op->path,
		    "?type=file&format=text&content=1");
		rc = room_remote_get(op, "GET", uri, NULL, 0,
		    room_remote_loaded);
		free(uri);
	} else {
		rc = room_remote_get(op, "GET", "api/kernelspecs", NULL, 0,
		    room_remote_create_step);
	}
	if (rc != 0)
		room_remote_finish(op, NULL, "cannot start a request to the "
		    "server", PROTO_E_NOTEBOOK_UNAVAILABLE);
}

/*
 * Is op's notebook open already (perhaps by another open that finished
 * first)?  Then op ends: it joins that room, unless under another
 * principal.  A rejoin ends too if its room is no longer that notebook.
 * 1 if op is over; 0 to go on with the GET (none, or a dormant room it
 * wakes).
 */
static int
room_remote_join(struct room_remote_op *op)
{
	struct room	*r;
	const char	*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
	char		*why;

	if (op->kind == ROOM_REMOTE_REJOIN) {
		if ((r = room_remote_rejoin_room(op)) == NULL) {
			xasprintf(&why, "notebook %s is no longer %s on %s "
			    "here", op->nbid, op->path, op->domain);
			room_remote_finish(op, NULL, why,
			    PROTO_E_ATTACHMENT_EXPIRED);
			free(why);
			return (1);
		}
	} else if ((r = room_remote_find(op->domain, op->path)) == NULL)
		return (0);
	if (strcmp(r->remote->principal, op->principal) != 0) {
		if (op->kind == ROOM_REMOTE_REJOIN) {
			code = PROTO_E_ATTACHMENT_EXPIRED;
			xasprintf(&why, "%s on %s was opened as %s, and the "
			    "server now says you are %s: it is not joined "
			    "under another identity", op->path, op->domain,
			    r->remote->principal, op->principal);
			log_warnx("room %s: re-join refused: %s", r->id, why);
		} else
			xasprintf(&why, "%s on %s is open here as %s, and the "
			    "server now says you are %s: one notebook is never "
			    "shared between two identities", op->path,
			    op->domain, r->remote->principal, op->principal);
		room_remote_finish(op, NULL, why, code);
		free(why);
		return (1);
	}
	if (!r->loaded || r->remote->lost)
		return (0);	/* dormant (decision 030), or lost: the GET */
	room_remote_finish(op, r, NULL, NULL);
	return (1);
}

/* The room of an open or create: it takes op's domain, path, principal. */
static struct room *
room_remote_make(struct room_remote_op *op, const char *kernel)
{
	struct room_remote	*rr;
	struct room		*r;

	rr = xcalloc(1, sizeof *rr);
	TAILQ_INIT(&rr->saves);
	rr->domain = op->domain;
	op->domain = NULL;
	rr->d = op->d;
	op->d = NULL;
	rr->path = op->path;
	op->path = NULL;
	rr->principal = op->principal;
	op->principal = NULL;
	r = room_new(NULL, NULL, kernel);
	r->remote = rr;
	rr->room = r;
	r->nb = op->nb;
	op->nb = NULL;
	room_remote_watch_add(rr);
	return (r);
}

/*
 * The GET of an open or rejoin came back: the room, unless another open
 * beat us; a dormant room of that notebook wakes from it.
 */
static void
room_remote_loaded(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct room		*r;
	char			*kernel, *lm, *why;

	if (room_remote_join(op))
		return;
	if ((r = op->kind == ROOM_REMOTE_REJOIN ? room_remote_rejoin_room(op) :
	    room_remote_find(op->domain, op->path)) != NULL) {
		room_remote_wake(op, r, rep);
		return;
	}
	if ((op->nb = room_remote_parse(rep, op->path, op->d->url, &lm,
	    &why)) == NULL) {
		room_remote_finish(op, NULL, why, PROTO_E_NOTEBOOK_UNAVAILABLE);
		free(why);
		return;
	}
	kernel = room_remote_nb_kernel(op->nb);
	r = room_remote_make(op, kernel != NULL ? kernel : "python3");
	free(kernel);
	r->remote->last_modified = lm;
	/* What both sides agree on: a change there is merged (room-merge.c). */
	room_merge_base_set(r, room_merge_base_make(r->nb, 1));
	room_loaded(r);
	if (room_journal_snapshot(r) != 0)
		log_warnx("room %s: the store did not take its first "
		    "snapshot", r->id);
	log_info("room %s opened %s on %s as %s", r->id, r->remote->path,
	    r->remote->d->url, r->remote->principal);
	room_remote_finish(op, r, NULL, NULL);
}

/* The JSON text of a PUT of data as a text file; caller frees. */
static char *
room_remote_put_body(const char *data, size_t len, size_t *tlen)
{
	struct json_object	*body;
	char			*text;

	body = json_object_new_object();
	json_object_object_add(body, "type", json_object_new_string("file"));
	json_object_object_add(body, "format", json_object_new_string("text"));
	json_object_object_add(body, "content",
	    json_object_new_string_len(data, (int)len));
	text = xstrdup(json_object_to_json_string_ext(body,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(body);
	*tlen = strlen(text);
	return (text);
}

/*
 * A create's steps: the kernelspec is the server's (0); the path is
 * named by the server's POST, or is free (1); the PUT of the new
 * notebook (2) makes the room.
 */
static void
room_remote_create_step(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct json_object	*o, *v;
	struct room		*r;
	char			*why = NULL, *lm, *data, *body, *uri;
	const char		*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
	size_t			 len;
	int			 rc;

	switch (op->step++) {
	case 0:
		if ((o = room_remote_specs(rep, op->d->url, op->kernel,
		    &why)) == NULL) {
			code = PROTO_E_KERNEL_UNAVAILABLE;
			goto fail;
		}
		json_object_put(o);
		if (op->path == NULL)
			rc = room_remote_get(op, "POST", "api/contents",
			    "{\"type\":\"notebook\"}", 19,
			    room_remote_create_step);
		else {
			uri = domain_contents_uri(op->path, "?content=0");
			rc = room_remote_get(op, "GET", uri, NULL, 0,
			    room_remote_create_step);
			free(uri);
		}
		if (rc != 0)
			goto nostart;
		return;
	case 1:
		if (op->path == NULL) {
			o = NULL;
			if (rep->status == 201 && (o = jserver_reply_json(rep,
			    &why)) == NULL)
				free(why);
			if (o == NULL || !json_object_object_get_ex(o, "path",
			    &v) || !json_object_is_type(v, json_type_string)) {
				json_object_put(o);
				why = jserver_reply_message(rep);
				xasprintf(&data, "%s would not make a new "
				    "notebook: %s", op->d->url, why);
				free(why);
				why = data;
				goto fail;
			}
			op->path = xstrdup(json_object_get_string(v));
			json_object_put(o);
		} else if ((rc = room_remote_lm(rep, &lm)) != 0) {
			free(lm);
			if (rc == 1) {
				code = PROTO_E_INVALID_ARGUMENT;
				xasprintf(&why, "%s exists on %s; use "
				    "connect_notebook", op->path, op->domain);
			} else {
				data = jserver_reply_message(rep);
				xasprintf(&why, "%s: cannot look at %s: %s",
				    op->d->url, op->path, data);
				free(data);
			}
			goto fail;
		}
		if (room_remote_find(op->domain, op->path) != NULL) {
			code = PROTO_E_INVALID_ARGUMENT;
			xasprintf(&why, "%s exists on %s (open here); use "
			    "connect_notebook", op->path, op->domain);
			goto fail;
		}
		op->nb = room_nb_create();
		kernel_spec_metadata(op->nb, op->kernel);
		data = room_ipynb_write_dump(op->nb, &len);
		body = room_remote_put_body(data, len, &len);
		free(data);
		uri = domain_contents_uri(op->path, "");
		rc = room_remote_get(op, "PUT", uri, body, len,
		    room_remote_create_step);
		free(uri);
		free(body);
		if (rc != 0)
			goto nostart;
		return;
	}
	if (rep->status != 200 && rep->status != 201) {
		data = jserver_reply_message(rep);
		xasprintf(&why, "%s: saving %s failed (%s); the copy on the "
		    "server is as it was", op->d->url, op->path, data);
		free(data);
		goto fail;
	}
	room_remote_lm(rep, &lm);
	r = room_remote_make(op, op->kernel);
	r->remote->last_modified = lm;
	r->kernel_facts = 1;
	r->fresh = 1;
	room_merge_base_set(r, room_merge_base_make(r->nb, 0));
	room_loaded(r);
	if (room_journal_snapshot(r) != 0)
		log_warnx("room %s: the store did not take its first "
		    "snapshot", r->id);
	log_info("room %s created %s on %s as %s", r->id, r->remote->path,
	    r->remote->d->url, r->remote->principal);
	room_remote_finish(op, r, NULL, NULL);
	return;

nostart:
	why = xstrdup("cannot start a request to the server");
fail:
	room_remote_finish(op, NULL, why, code);
	free(why);
}

/*
 * Start saving to the server: its path, or (save-as) another path
 * there.  A file that changed there since our load or last save, or
 * another file at the new path, needs force.  The room's saves run in
 * order; cb (if any) gets the outcome on the loop.  -1 with *cause and
 * *code for a save refused at once.
 */
int
room_remote_save(struct room *r, const char *path, int force,
    struct peer *peer, uint32_t id, room_save_cb cb, char **cause,
    const char **code)
{
	struct room_remote	*rr = r->remote;
	struct room_remote_op	*op;
	const char		*target;

	*code = PROTO_E_INVALID_ARGUMENT;
	target = path != NULL ? path : rr->path;
	if (room_remote_valid_path(target, cause) != 0)
		return (-1);
	if (strcmp(target, rr->path) != 0 &&
	    (room_remote_find(rr->domain, target) != NULL ||
	    room_remote_busy_path(rr->domain, target))) {
		xasprintf(cause, "%s on %s is open as another notebook",
		    target, rr->domain);
		return (-1);
	}
	if (!force && strcmp(target, rr->path) == 0 &&
	    room_merge_nconflicts(r) > 0) {
		*code = PROTO_E_FILE_CHANGED_ON_DISK;
		xasprintf(cause, "%u cell%s of %s conflict%s with the server's "
		    "version (inspect_notebook lists them): resolve them with "
		    "edit_cells op resolve, or save with force to overwrite "
		    "the server's", room_merge_nconflicts(r),
		    room_merge_nconflicts(r) == 1 ? "" : "s", target,
		    room_merge_nconflicts(r) == 1 ? "s" : "");
		return (-1);
	}
	/* A token rotated in its file is the one a save uses. */
	domain_reload_token(rr->d);
	op = room_remote_op_create(ROOM_REMOTE_SAVE, peer, id);
	op->rr = rr;
	if (path != NULL && strcmp(path, rr->path) != 0)
		op->target = xstrdup(path);
	op->force = force;
	op->save_cb = cb;
	r->saves_inflight++;
	rr->gen++;
	TAILQ_INSERT_TAIL(&rr->saves, op, sentry);
	if (TAILQ_FIRST(&rr->saves) == op)
		room_remote_save_next(rr);
	return (0);
}

/* Run the room's next save: first the server's last_modified. */
static void
room_remote_save_next(struct room_remote *rr)
{
	struct room_remote_op	*op;
	char			*uri;
	int			 rc;

	if ((op = TAILQ_FIRST(&rr->saves)) == NULL)
		return;
	uri = domain_contents_uri(op->target != NULL ? op->target : rr->path,
	    "?content=0");
	rc = room_remote_get(op, "GET", uri, NULL, 0, room_remote_save_step);
	free(uri);
	if (rc != 0)
		room_remote_save_end(op, "cannot start a request to the "
		    "server", PROTO_E_NOTEBOOK_UNAVAILABLE);
}

/*
 * A save's steps: the guard (0), then the PUT of the notebook as it is
 * now (1).  The room is clean after it only if no content change came
 * while it was in flight (content_gen, as room_saved).
 */
static void
room_remote_save_step(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct room_remote	*rr = op->rr;
	struct room		*r;
	const char		*target;
	char			*lm, *why, *cause, *data, *body, *uri;
	size_t			 len;
	int			 rc, same;

	if (rr == NULL) {
		room_remote_op_free(op);
		return;
	}
	r = rr->room;
	target = op->target != NULL ? op->target : rr->path;
	same = strcmp(target, rr->path) == 0;
	if (op->step++ == 0) {
		if ((rc = room_remote_lm(rep, &lm)) == -1) {
			why = jserver_reply_message(rep);
			xasprintf(&cause, "%s: cannot look at %s: %s",
			    rr->d->url, target, why);
			free(why);
			room_remote_save_end(op, cause,
			    PROTO_E_NOTEBOOK_UNAVAILABLE);
			free(cause);
			return;
		}
		if (rc == 1 && !op->force && (!same ||
		    rr->last_modified == NULL ||
		    strcmp(lm, rr->last_modified) != 0)) {
			xasprintf(&cause, same ? "%s changed on %s since it "
			    "was loaded (last_modified %s, was %s); save with "
			    "force to overwrite" : "%s exists on %s; save with "
			    "force to overwrite", target, rr->domain, lm,
			    rr->last_modified != NULL ? rr->last_modified :
			    "none");
			free(lm);
			room_remote_save_end(op, cause, same ?
			    PROTO_E_FILE_CHANGED_ON_DISK : PROTO_E_FILE_EXISTS);
			free(cause);
			return;
		}
		free(lm);
		op->content_gen = r->content_gen;
		/* Once written, the server's copy is what both agree on. */
		op->base = room_merge_base_make(r->nb, 0);
		data = room_ipynb_write_dump(r->nb, &len);
		body = room_remote_put_body(data, len, &len);
		free(data);
		uri = domain_contents_uri(target, "");
		rc = room_remote_get(op, "PUT", uri, body, len,
		    room_remote_save_step);
		free(uri);
		free(body);
		if (rc != 0)
			room_remote_save_end(op, "cannot start a request to "
			    "the server", PROTO_E_NOTEBOOK_UNAVAILABLE);
		return;
	}
	if (rep->status != 200 && rep->status != 201) {
		why = jserver_reply_message(rep);
		xasprintf(&cause, "%s: saving %s failed (%s); the copy on the "
		    "server is as it was", rr->d->url, target, why);
		free(why);
		room_remote_save_end(op, cause, PROTO_E_NOTEBOOK_UNAVAILABLE);
		free(cause);
		return;
	}
	room_remote_lm(rep, &lm);
	if (!same) {
		free(rr->path);
		rr->path = xstrdup(target);
	}
	free(rr->last_modified);
	rr->last_modified = lm;
	free(rr->outside);
	rr->outside = NULL;
	room_merge_base_set(r, op->base);
	op->base = NULL;
	r->fresh = 0;
	if (r->content_gen == op->content_gen) {
		r->dirty = 0;
		r->unsaved_since = 0;
		room_autosave_cancel(r);
	}
	json_object_put(r->nb->warnings);
	r->nb->warnings = NULL;
	log_info("room %s saved to %s on %s", r->id, rr->path, rr->domain);
	room_journal_snapshot(r);
	room_changes_record(r, ROOM_CHANGE_SAVED, NULL, 0, NULL);
	room_remote_save_end(op, NULL, NULL);
}

/* A save is over: answer, then the room's next one. */
static void
room_remote_save_end(struct room_remote_op *op, const char *cause,
    const char *code)
{
	struct room_remote	*rr = op->rr;
	struct room		*r = rr->room;

	TAILQ_REMOVE(&rr->saves, op, sentry);
	r->saves_inflight--;
	rr->gen++;
	if (cause != NULL)
		log_info("room %s: not saved: %s", r->id, cause);
	if (op->save_cb != NULL)
		op->save_cb(r, op->peer, op->id, cause, code);
	else if (cause == NULL)
		room_changes_announce(r);
	room_remote_op_free(op);
	room_remote_save_next(rr);
}

/*
 * A kernelspecs reply, parsed (caller puts it); with name, NULL and the
 * list in *cause unless name is one of them.
 */
static struct json_object *
room_remote_specs(struct jserver_reply *rep, const char *url,
    const char *name, char **cause)
{
	struct json_object	*o, *specs;
	struct evbuffer		*names;
	char			*why;

	if (rep->status != 200 || (o = jserver_reply_json(rep, &why)) ==
	    NULL) {
		if (rep->status == 200)
			free(why);
		why = jserver_reply_message(rep);
		xasprintf(cause, "%s: cannot list its kernelspecs: %s", url,
		    why);
		free(why);
		return (NULL);
	}
	if (!json_object_object_get_ex(o, "kernelspecs", &specs) ||
	    !json_object_is_type(specs, json_type_object)) {
		xasprintf(cause, "%s: its kernelspecs answer has no "
		    "kernelspecs", url);
		json_object_put(o);
		return (NULL);
	}
	if (name == NULL || json_object_object_get_ex(specs, name, NULL))
		return (o);
	names = evbuffer_new();
	json_object_object_foreach(specs, key, val) {
		(void)val;
		evbuffer_add_printf(names, "%s%s", evbuffer_get_length(names) ?
		    ", " : "", key);
	}
	evbuffer_add(names, "", 1);
	xasprintf(cause, "%s has no kernelspec %s (it has: %s)", url, name,
	    evbuffer_pullup(names, -1));
	evbuffer_free(names);
	json_object_put(o);
	return (NULL);
}

/*
 * Ask r's server for its kernelspecs: cb gets them as kernelspec_list
 * has them, or why not; with name, why not if it is not one of them.
 * Nothing is answered for a room or peer gone meanwhile.
 */
void
room_remote_kernels(struct room *r, const char *name, struct peer *peer,
    uint32_t id, room_remote_kernels_cb cb)
{
	struct room_remote_op	*op;

	op = room_remote_op_create(ROOM_REMOTE_KERNELS, peer, id);
	op->rr = r->remote;
	op->name = name != NULL ? xstrdup(name) : NULL;
	op->kernels_cb = cb;
	if (room_remote_get(op, "GET", "api/kernelspecs", NULL, 0,
	    room_remote_kernels_done) != 0) {
		cb(r, peer, id, name, NULL, "cannot start a request to the "
		    "server");
		room_remote_op_free(op);
	}
}

static void
room_remote_kernels_done(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct json_object	*o, *specs, *list, *item, *spec, *v;
	struct room		*r;
	char			*why;

	if (op->rr == NULL || op->peer == NULL) {
		room_remote_op_free(op);
		return;
	}
	r = op->rr->room;
	if ((o = room_remote_specs(rep, op->rr->d->url, op->name,
	    &why)) == NULL) {
		op->kernels_cb(r, op->peer, op->id, op->name, NULL, why);
		free(why);
		room_remote_op_free(op);
		return;
	}
	list = json_object_new_array();
	json_object_object_get_ex(o, "kernelspecs", &specs);
	json_object_object_foreach(specs, key, val) {
		item = json_object_new_object();
		json_object_object_add(item, "name",
		    json_object_new_string(key));
		if (json_object_object_get_ex(val, "spec", &spec)) {
			if (json_object_object_get_ex(spec, "display_name", &v))
				json_object_object_add(item, "display_name",
				    json_object_get(v));
			if (json_object_object_get_ex(spec, "language", &v))
				json_object_object_add(item, "language",
				    json_object_get(v));
		}
		json_object_array_add(list, item);
	}
	json_object_put(o);
	op->kernels_cb(r, op->peer, op->id, op->name, list, NULL);
	json_object_put(list);
	room_remote_op_free(op);
}

/* The kernelspec a loaded notebook names, if a plain name.  Caller frees. */
char *
room_remote_nb_kernel(struct room_nb *nb)
{
	char	*s;

	if ((s = room_ipynb_meta_str(nb, "kernelspec", "name", NULL)) != NULL &&
	    !domain_valid_name(s)) {
		free(s);
		s = NULL;
	}
	return (s);
}

/* The room's domain name, or NULL for a local room. */
const char *
room_remote_domain_name(struct room *r)
{
	return (r->remote != NULL ? r->remote->domain : NULL);
}

const char *
room_remote_path(struct room *r)
{
	return (r->remote->path);
}

/* The kernel's directory on the server: the notebook's; caller frees. */
char *
room_remote_kernel_dir(struct room *r)
{
	char	*dir, *slash;

	dir = xstrdup(r->remote->path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		*dir = '\0';
	return (dir);
}

/*
 * The room's kernel died.  If its server no longer answers, the room's
 * attachments are unavailable: their connections are closed (a worker
 * then answers attachment_unavailable and keeps their slots), and the
 * room is no longer the one a connect finds, so once the server is back
 * a new connect loads the notebook as the server has it.  An answering
 * server only lost the kernel: runs ended kernel_died, a restart helps.
 */
void
room_remote_kernel_died(struct room *r)
{
	struct room_remote	*rr = r->remote;
	struct room_remote_op	*op;

	if (rr == NULL || rr->lost || rr->probing)
		return;
	op = room_remote_op_create(ROOM_REMOTE_PROBE, NULL, 0);
	op->rr = rr;
	if (jserver_request(runtimed_base, rr->d, "GET", "api", NULL, 0, 5,
	    room_remote_probed, op) != 0) {
		room_remote_op_free(op);
		return;
	}
	rr->probing = 1;
}

static void
room_remote_probed(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct room_remote	*rr = op->rr;
	struct room		*r;
	struct peer		**members;
	size_t			 i, n;

	room_remote_op_free(op);
	if (rr == NULL)
		return;
	rr->probing = 0;
	if (rep->status != 0)
		return;
	r = rr->room;
	log_warnx("room %s: %s does not answer (%s); its attachments are "
	    "unavailable", r->id, rr->d->url, rep->cause != NULL ?
	    rep->cause : "no answer");
	rr->lost = 1;
	/*
	 * Unsaved edits stay bound to the notebook (the snapshot keeps the
	 * binding, list_notebooks says server_lost): a connect once the
	 * server is back joins them, kept over the server's copy.  A clean
	 * room is forgotten: the server's copy is the whole truth.
	 */
	rr->kept = r->dirty;
	room_journal_snapshot(r);
	n = r->nmembers;
	members = xreallocarray(NULL, n > 0 ? n : 1, sizeof *members);
	memcpy(members, r->members, n * sizeof *members);
	for (i = 0; i < n; i++)
		peer_kill(members[i], "the notebook's Jupyter Server is gone");
	free(members);
}

/* Poll the server's copy every RUNTIMED_REMOTE_WATCH_MS (or the default). */
static void
room_remote_watch_add(struct room_remote *rr)
{
	struct timeval	 tv;
	const char	*s;
	char		*end;
	long long	 ms;

	if (runtimed_base == NULL)
		return;
	if (room_remote_watch_ms < 0) {
		room_remote_watch_ms = ROOM_REMOTE_WATCH_MS;
		if ((s = getenv("RUNTIMED_REMOTE_WATCH_MS")) != NULL) {
			ms = strtoll(s, &end, 10);
			if (*s != '\0' && *end == '\0' && ms >= 50 &&
			    ms <= 86400000)
				room_remote_watch_ms = (int)ms;
			else
				log_warnx("RUNTIMED_REMOTE_WATCH_MS %s is not "
				    "50 to 86400000 ms; using %d", s,
				    ROOM_REMOTE_WATCH_MS);
		}
	}
	rr->watch = event_new(runtimed_base, -1, EV_PERSIST,
	    room_remote_watch_tick, rr);
	tv.tv_sec = room_remote_watch_ms / 1000;
	tv.tv_usec = (room_remote_watch_ms % 1000) * 1000;
	evtimer_add(rr->watch, &tv);
}

/*
 * While the room has clients and nothing of ours is in flight, ask for
 * the server's last_modified (without the content).
 */
static void
room_remote_watch_tick(evutil_socket_t fd, short events, void *arg)
{
	struct room_remote	*rr = arg;
	struct room		*r = rr->room;
	struct room_remote_op	*op;
	char			*uri;
	int			 rc;

	(void)fd;
	(void)events;
	if (rr->lost || rr->watching || !TAILQ_EMPTY(&rr->saves) ||
	    !r->loaded || r->nmembers == 0 || rr->last_modified == NULL)
		return;
	domain_reload_token(rr->d);
	op = room_remote_op_create(ROOM_REMOTE_WATCH, NULL, 0);
	op->rr = rr;
	op->gen = rr->gen;
	uri = domain_contents_uri(rr->path, "?content=0");
	rc = room_remote_get(op, "GET", uri, NULL, 0, room_remote_watch_step);
	free(uri);
	if (rc != 0)
		room_remote_op_free(op);
	else
		rr->watching = 1;
}

/*
 * The watch's steps: a last_modified neither loaded nor saved by us is
 * an outside change (0).  A dirty room keeps its content (the next save
 * is file_changed_on_disk); a clean one loads the server's copy (1) and
 * says "reloaded", as room_disk_check does for a file here.  A save
 * started or ended meanwhile (gen) makes the answer stale.
 */
static void
room_remote_watch_step(struct jserver_reply *rep, void *arg)
{
	struct room_remote_op	*op = arg;
	struct room_remote	*rr = op->rr;
	struct room		*r;
	struct room_nb		*nb;
	char			*lm, *why, *uri;

	if (rr == NULL)
		goto out;
	rr->watching = 0;
	r = rr->room;
	if (rr->gen != op->gen || !TAILQ_EMPTY(&rr->saves) || !r->loaded ||
	    rr->last_modified == NULL)
		goto out;
	if (op->step++ == 0) {
		if (room_remote_lm(rep, &lm) != 1)
			goto out;
		if (strcmp(lm, rr->last_modified) == 0 ||
		    (rr->outside != NULL && strcmp(lm, rr->outside) == 0)) {
			free(lm);
			goto out;
		}
		if (r->dirty && !room_merge_has_base(r)) {
			log_info("room %s: %s changed on %s; keeping unsaved "
			    "changes", r->id, rr->path, rr->domain);
			free(rr->outside);
			rr->outside = lm;
			goto out;
		}
		if (room_edit_pending(r) > 0) {
			/* Its batch is prepared on this content; next time. */
			free(lm);
			goto out;
		}
		op->seen = lm;
		uri = domain_contents_uri(rr->path,
		    "?type=file&format=text&content=1");
		if (room_remote_get(op, "GET", uri, NULL, 0,
		    room_remote_watch_step) == 0) {
			rr->watching = 1;
			free(uri);
			return;
		}
		free(uri);
		goto out;
	}
	if ((nb = room_remote_parse(rep, rr->path, rr->d->url, &lm,
	    &why)) == NULL) {
		log_info("room %s: not reloading: %s", r->id, why);
		free(why);
		if (rep->status == 200) {
			/* Its content is bad: not again until it changes. */
			free(rr->outside);
			rr->outside = op->seen;
			op->seen = NULL;
		}
		goto out;
	}
	if ((r->dirty && !room_merge_has_base(r)) ||
	    room_edit_pending(r) > 0) {
		/* Edited meanwhile: the next tick sees the change again. */
		room_nb_free(nb);
		free(lm);
		goto out;
	}
	free(rr->last_modified);
	rr->last_modified = lm;
	free(rr->outside);
	rr->outside = NULL;
	if (room_merge_has_base(r))
		room_merge_disk(r, nb, room_remote_lm_ms(lm));
	else
		room_reloaded(r, nb);
out:
	room_remote_op_free(op);
}

/* A client is gone: no operation answers it. */
void
room_remote_peer_gone(struct peer *p)
{
	struct room_remote_op	*op;

	TAILQ_FOREACH(op, &room_remote_all, entry) {
		if (op->peer == p)
			op->peer = NULL;
	}
}

/* The room is going: its operations in flight end without it. */
void
room_remote_free(struct room_remote *rr)
{
	struct room_remote_op	*op, *next;

	if (rr == NULL)
		return;
	/* The first save is in flight; the others never started. */
	if ((op = TAILQ_FIRST(&rr->saves)) != NULL) {
		while ((next = TAILQ_NEXT(op, sentry)) != NULL) {
			TAILQ_REMOVE(&rr->saves, next, sentry);
			room_remote_op_free(next);
		}
	}
	TAILQ_FOREACH(op, &room_remote_all, entry) {
		if (op->rr == rr)
			op->rr = NULL;
	}
	if (rr->watch != NULL)
		event_free(rr->watch);
	domain_free(rr->d);
	free(rr->domain);
	free(rr->path);
	free(rr->last_modified);
	free(rr->outside);
	free(rr->principal);
	free(rr->kernel_id);
	free(rr->kept_kernel);
	free(rr);
}

/*
 * Surviving a daemon replacement (decision 030).  A remote room's
 * snapshot carries its binding (domain, server path, principal, the
 * server's last_modified), so a new daemon knows a stored room as that
 * notebook again rather than as an untitled copy; a worker re-joining
 * its handles opens it by domain, path and notebook_id.
 */

/*
 * Does the snapshot carry a binding?  Not once the server was lost with
 * nothing unsaved: a connect then loads the server's copy.  Unsaved
 * edits stay bound, so a connect (or a daemon started meanwhile) finds
 * them as that notebook.
 */
int
room_remote_bound(struct room *r)
{
	return (r->remote != NULL && (!r->remote->lost || r->remote->kept));
}

/* Was the room's server lost while it had unsaved edits (kept)? */
int
room_remote_server_lost(struct room *r)
{
	return (r->remote != NULL && r->remote->lost && r->remote->kept);
}

/* The binding as the snapshot's "remote" value (room-journal.c). */
void
room_remote_pack(struct room *r, msgpack_packer *pk)
{
	struct room_remote	*rr = r->remote;
	const char		*kid;

	kid = rr->kernel_id != NULL ? rr->kernel_id : rr->kept_kernel;
	msgpack_pack_map(pk, 3 + (rr->last_modified != NULL) + (kid != NULL) +
	    (rr->lost && rr->kept));
	proto_pack_str(pk, "domain", rr->domain);
	proto_pack_str(pk, "path", rr->path);
	proto_pack_str(pk, "principal", rr->principal);
	if (rr->last_modified != NULL)
		proto_pack_str(pk, "last_modified", rr->last_modified);
	if (kid != NULL)
		proto_pack_str(pk, "kernel_id", kid);
	/* A restart keeps the word, until a connect finds the server back. */
	if (rr->lost && rr->kept)
		proto_pack_bool(pk, "server_lost", 1);
}

/*
 * The room's kernel is ready as the server's kernel id: stored, so a
 * daemon started after our death takes that kernel back.
 */
void
room_remote_kernel_ready(struct room *r, const char *id)
{
	struct room_remote	*rr = r->remote;

	if (rr->kernel_id != NULL && strcmp(rr->kernel_id, id) == 0)
		return;
	free(rr->kernel_id);
	rr->kernel_id = xstrdup(id);
	free(rr->kept_kernel);
	rr->kept_kernel = NULL;
	room_journal_snapshot(r);
}

/*
 * The room's kernel was shut down for idleness.  Gone from its server,
 * the snapshot stops naming it; still there (the server refused the
 * DELETE, or did not answer it), it is the kernel the next start takes
 * back, as one an earlier daemon left.
 */
void
room_remote_kernel_left(struct room *r, int still_there)
{
	struct room_remote	*rr = r->remote;

	if (rr == NULL || rr->kernel_id == NULL)
		return;
	if (still_there) {
		log_warnx("room %s: kernel %s still runs on %s; the next run "
		    "takes it back", r->id, rr->kernel_id, rr->domain);
		free(rr->kept_kernel);
		rr->kept_kernel = rr->kernel_id;
	} else
		free(rr->kernel_id);
	rr->kernel_id = NULL;
	room_journal_snapshot(r);
}

/* The kernel id to take back at the room's first kernel start, once. */
char *
room_remote_take_kernel(struct room *r)
{
	char	*id = r->remote->kept_kernel;

	r->remote->kept_kernel = NULL;
	return (id);
}

/*
 * At start-up: a stored room whose snapshot names a binding is that
 * remote notebook, dormant; its domain is loaded when it is opened.
 */
void
room_remote_restore(struct room *r, const void *snap, size_t len)
{
	struct room_remote	*rr;
	msgpack_unpacked	 u;
	const msgpack_object	*m;
	const char		*dom, *path, *who, *lm, *kid;
	size_t			 dl, pl, wl, ll = 0, kl = 0;
	char			*why;
	int			 lost = 0;

	msgpack_unpacked_init(&u);
	if (snap == NULL || proto_frame_unpack(&u, snap, len, NULL) != 0 ||
	    (m = proto_get_map(&u.data, "remote")) == NULL ||
	    (dom = proto_get_str(m, "domain", &dl)) == NULL ||
	    (path = proto_get_str(m, "path", &pl)) == NULL ||
	    (who = proto_get_str(m, "principal", &wl)) == NULL) {
		msgpack_unpacked_destroy(&u);
		return;
	}
	lm = proto_get_str(m, "last_modified", &ll);
	kid = proto_get_str(m, "kernel_id", &kl);
	rr = xcalloc(1, sizeof *rr);
	TAILQ_INIT(&rr->saves);
	if (proto_get_bool(m, "server_lost", &lost) == 0 && lost)
		rr->lost = rr->kept = 1;
	rr->domain = xstrndup(dom, dl);
	rr->path = xstrndup(path, pl);
	rr->principal = xstrndup(who, wl);
	rr->last_modified = lm != NULL ? xstrndup(lm, ll) : NULL;
	/* Only what a server's id can be goes on the agent's command line. */
	if (kid != NULL && kl > 0 && kl <= 128) {
		rr->kept_kernel = xstrndup(kid, kl);
		if (strspn(rr->kept_kernel, "0123456789abcdef-") != kl) {
			free(rr->kept_kernel);
			rr->kept_kernel = NULL;
		}
	}
	msgpack_unpacked_destroy(&u);
	if (!domain_valid_name(rr->domain) ||
	    room_remote_valid_path(rr->path, &why) != 0) {
		if (rr->domain != NULL && domain_valid_name(rr->domain))
			free(why);
		log_warnx("room %s: its stored binding to a server is not "
		    "valid; it stays an untitled copy", r->id);
		room_remote_free(rr);
		return;
	}
	if (room_remote_find(rr->domain, rr->path) != NULL) {
		log_warnx("room %s: %s on %s is another stored room's; this "
		    "one stays an untitled copy", r->id, rr->path, rr->domain);
		room_remote_free(rr);
		return;
	}
	r->remote = rr;
	rr->room = r;
}

/*
 * A kernel an earlier daemon's agent left on the server is taken back
 * as soon as its room is loaded again, so its variables are there for
 * the next run (a run in flight at the death ended kernel_died).
 */
static void
room_remote_reclaim(struct room *r)
{
	if (r->remote->kept_kernel == NULL || r->kernel != NULL)
		return;
	log_info("room %s: taking back kernel %s on %s", r->id,
	    r->remote->kept_kernel, r->remote->domain);
	room_kernel_want(r);
}

/*
 * Wake a dormant remote room from the GET of its open or rejoin (op's
 * domain, the principal checked).  Clean, the server's copy is the
 * whole truth.  With unsaved edits (acknowledged, so never dropped) the
 * stored copy comes back; if the server's copy changed since our load
 * or last save the edits are kept over it, a warning says so and the
 * next save answers file_changed_on_disk, as for a local file changed
 * meanwhile.
 */
static void
room_remote_wake(struct room_remote_op *op, struct room *r,
    struct jserver_reply *rep)
{
	struct room_remote	*rr = r->remote;
	struct room_nb		*nb, *theirs = NULL;
	char			*lm, *why, *msg;
	int			 rc;

	if (!r->dirty) {
		if ((nb = room_remote_parse(rep, rr->path, op->d->url, &lm,
		    &why)) == NULL)
			goto fail;
		room_nb_free(r->nb);
		r->nb = nb;
		free(rr->last_modified);
		rr->last_modified = lm;
		room_merge_base_set(r, room_merge_base_make(nb, 1));
	} else {
		if ((rc = room_remote_lm(rep, &lm)) == -1) {
			msg = jserver_reply_message(rep);
			xasprintf(&why, "%s: cannot look at %s: %s",
			    op->d->url, rr->path, msg);
			free(msg);
			goto fail;
		}
		if (!r->loaded && room_journal_recover(r, &msg) != 0) {
			xasprintf(&why, "notebook %s cannot be recovered: %s",
			    r->id, msg);
			free(msg);
			free(lm);
			goto fail;
		}
		/* Changed, with a base to merge against: merged below. */
		if (rc == 1 && rr->last_modified != NULL &&
		    strcmp(lm, rr->last_modified) != 0 &&
		    room_merge_has_base(r) && (theirs = room_remote_parse(rep,
		    rr->path, op->d->url, &msg, &why)) == NULL) {
			log_info("room %s: not merging: %s", r->id, why);
			free(why);
		}
		if (theirs != NULL) {
			free(msg);
			free(rr->last_modified);
			rr->last_modified = lm;
			lm = NULL;
		} else if (rc == 0 || rr->last_modified == NULL ||
		    strcmp(lm, rr->last_modified) != 0) {
			log_warnx("room %s: %s on %s changed on the server "
			    "since its unsaved edits were made; they are kept",
			    r->id, rr->path, rr->domain);
			room_nb_warn(r->nb, -1, NULL, "overwrites the server's "
			    "copy (save_notebook with force)", "%s changed on "
			    "the server (last_modified %s, was %s) while this "
			    "notebook had unsaved edits; they are kept here: a "
			    "save answers file_changed_on_disk", rr->path,
			    lm != NULL ? lm : "none: deleted",
			    rr->last_modified != NULL ? rr->last_modified :
			    "none");
		}
		/* The watch knows this change already. */
		free(rr->outside);
		rr->outside = lm;
	}
	domain_free(rr->d);
	rr->d = op->d;
	op->d = NULL;
	if (rr->lost) {
		/* The server is back: its kernel went with it. */
		rr->lost = rr->kept = 0;
		if (r->kernel != NULL &&
		    strcmp(room_kernel_state(r), "dead") == 0) {
			room_kernel_detach(r->kernel, 1);
			r->kernel = NULL;
		}
		free(rr->kernel_id);
		rr->kernel_id = NULL;
	}
	if (!r->loaded)
		room_loaded(r);
	/* What changed there while no daemon ran joins the unsaved edits. */
	if (theirs != NULL)
		room_merge_disk(r, theirs, room_remote_lm_ms(rr->last_modified));
	if (!r->dirty)
		room_journal_snapshot(r);
	log_info("room %s %s %s on %s as %s (seq %llu)", r->id, r->dirty ?
	    "recovered" : "reopened", rr->path, rr->d->url, rr->principal,
	    (unsigned long long)r->seq);
	if (rr->watch == NULL)
		room_remote_watch_add(rr);
	room_remote_reclaim(r);
	room_remote_finish(op, r, NULL, NULL);
	return;

fail:
	room_remote_finish(op, NULL, why, PROTO_E_NOTEBOOK_UNAVAILABLE);
	free(why);
}

/* A rejoin's room: that id, bound to that path on that domain. */
static struct room *
room_remote_rejoin_room(struct room_remote_op *op)
{
	struct room	*r;
	size_t		 i = 0;

	while ((r = room_nth(i++)) != NULL && strcmp(r->id, op->nbid) != 0)
		;
	if (r == NULL || r->remote == NULL || r->remote->lost ||
	    strcmp(r->remote->domain, op->domain) != 0 ||
	    strcmp(r->remote->path, op->path) != 0)
		return (NULL);
	return (r);
}

/*
 * ROOM_OPEN {path, domain, notebook_id}: a worker re-joining handles
 * after the daemon was replaced.  Only the room that was that notebook
 * (same id, bound to that path on that domain) and only under its own
 * principal; anything else is attachment_expired, so a handle never
 * comes back as another notebook or another identity.  It runs as an
 * open does: who we are, then (a dormant room) the GET that wakes it;
 * cb gets the room on the loop, -1 with *cause and *code if refused at
 * once.  A server or configuration that fails may come back, so that
 * is notebook_unavailable: the worker asks again.
 */
int
room_remote_rejoin(const char *domain, const char *path, const char *id,
    struct peer *peer, uint32_t hid, room_remote_open_cb cb, char **cause,
    const char **code)
{
	struct room_remote_op	*op;

	*cause = NULL;
	op = room_remote_op_create(ROOM_REMOTE_REJOIN, peer, hid);
	op->domain = xstrdup(domain);
	op->path = xstrdup(path);
	op->nbid = xstrdup(id);
	op->open_cb = cb;
	if (room_remote_rejoin_room(op) == NULL) {
		*code = PROTO_E_ATTACHMENT_EXPIRED;
		xasprintf(cause, "notebook %s is no longer %s on %s here",
		    id, path, domain);
		room_remote_op_free(op);
		return (-1);
	}
	room_remote_start(op, cause, code);
	if (*cause == NULL)
		return (0);
	*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
	return (-1);
}
