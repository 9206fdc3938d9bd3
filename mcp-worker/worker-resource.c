/* SPDX-License-Identifier: ISC */
/*
 * worker-resource.c: MCP resources.  runtimed://notebooks (the daemon's
 * rooms) and, per handle, runtimed://sessions/{notebook_handle}/cells,
 * .../cells/{cell_id} and .../comments ({...} percent-encoded).
 * Watches come from resources/subscribe (2025 revisions) or from a
 * subscriptions/listen stream (2026-07-28); at most PROTO_MAX_WATCHES
 * per connection.  Changes are coalesced for WORKER_RESOURCE_COALESCE_MS
 * into notifications/resources/updated; a handle's end sends a final
 * update whose _meta says why (io.runtimed/attachmentExpired or
 * io.runtimed/attachmentUnavailable) and drops its watches.
 */

#include <sys/queue.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define WORKER_RESOURCE_SCHEME		"runtimed://"
#define WORKER_RESOURCE_NOTEBOOKS	"runtimed://notebooks"
#define WORKER_RESOURCE_SESSIONS	"runtimed://sessions/"
#define WORKER_RESOURCE_COALESCE_MS	100

enum worker_resource_kind {
	WORKER_RESOURCE_LIST,		/* runtimed://notebooks */
	WORKER_RESOURCE_CELLS,
	WORKER_RESOURCE_CELL,
	WORKER_RESOURCE_COMMENTS,
	WORKER_RESOURCE_OTHER,		/* not ours: never updated */
};

struct worker_resource_uri {
	enum worker_resource_kind	 kind;
	char				*handle;
	char				*cell_id;
};

struct worker_resource_watch {
	char				*uri;
	struct worker_resource_uri	 u;
	struct json_object		*listen;	/* stream id or NULL */
	int				 dirty;
	TAILQ_ENTRY(worker_resource_watch) entry;
};
TAILQ_HEAD(worker_resource_watches, worker_resource_watch);

/* An open subscriptions/listen stream. */
struct worker_resource_stream {
	struct json_object		*id;
	int				 list_changed;
	TAILQ_ENTRY(worker_resource_stream) entry;
};
TAILQ_HEAD(worker_resource_streams, worker_resource_stream);

static struct worker_resource_watches worker_resource_all =
    TAILQ_HEAD_INITIALIZER(worker_resource_all);
static struct worker_resource_streams worker_resource_streams =
    TAILQ_HEAD_INITIALIZER(worker_resource_streams);
static u_int		 worker_resource_n;
static struct event	*worker_resource_timer;

struct worker_resource_read;
static char	*worker_resource_decode(const char *, size_t);
static void	worker_resource_uri_free(struct worker_resource_uri *);
static int	worker_resource_parse(const char *,
		    struct worker_resource_uri *);
static char	*worker_resource_cells_uri(const char *);
static void	worker_resource_send_updated(struct worker_resource_watch *,
		    const char *);
static void	worker_resource_flush(evutil_socket_t, short, void *);
static void	worker_resource_mark(struct worker_resource_watch *);
static int	worker_resource_has(const msgpack_object *, const char *);
static void	worker_resource_drop(struct worker_resource_watch *);
static int	worker_resource_check(const char *,
		    struct worker_resource_uri *, const char **);
static struct worker_resource_watch	*worker_resource_find(const char *,
		    struct json_object *);
static void	worker_resource_add(const char *, struct worker_resource_uri *,
		    struct json_object *);
static void	worker_resource_not_found(struct json_object *, int,
		    const char *);
static struct json_object	*worker_resource_entry(const char *,
		    const char *, const char *);
static void	worker_resource_list_one(struct worker_handle *, void *);
static void	worker_resource_list(struct json_object *, struct json_object *,
		    int);
static void	worker_resource_templates(struct json_object *, int);
static void	worker_resource_read_free(struct worker_resource_read *);
static void	worker_resource_read_done(struct worker_resource_read *,
		    struct json_object *, const struct worker_nb *,
		    const char *, const char *);
static void	worker_resource_read_list(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	worker_resource_read_nb(void *, struct worker_nb *,
		    const char *, const char *);
static void	worker_resource_read(struct json_object *, struct json_object *,
		    int);
static void	worker_resource_subscribe(struct json_object *,
		    struct json_object *, int);

/* Percent-encode everything but unreserved characters.  Caller frees. */
char *
worker_resource_encode(const char *s)
{
	struct evbuffer	*b;

	b = evbuffer_new();
	for (; *s != '\0'; s++) {
		if (isalnum((unsigned char)*s) || strchr("-._~", *s) != NULL)
			evbuffer_add(b, s, 1);
		else
			evbuffer_add_printf(b, "%%%02X", (unsigned char)*s);
	}
	return (worker_output_take(b));
}

/* Decode len bytes of s; NULL when malformed.  Caller frees. */
static char *
worker_resource_decode(const char *s, size_t len)
{
	char	*out, *o, hex[3];
	size_t	 i;

	o = out = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= len || !isxdigit((unsigned char)s[i + 1]) ||
		    !isxdigit((unsigned char)s[i + 2]))
			goto bad;
		hex[0] = s[i + 1];
		hex[1] = s[i + 2];
		hex[2] = '\0';
		*o++ = (char)strtol(hex, NULL, 16);
		i += 2;
	}
	*o = '\0';
	if (memchr(out, '\0', (size_t)(o - out)) != NULL || *out == '\0')
		goto bad;
	return (out);
bad:
	free(out);
	return (NULL);
}

static void
worker_resource_uri_free(struct worker_resource_uri *u)
{
	free(u->handle);
	free(u->cell_id);
}

/* Parse one of our URIs; -1 if it is not one. */
static int
worker_resource_parse(const char *uri, struct worker_resource_uri *u)
{
	const char	*p, *slash;

	memset(u, 0, sizeof *u);
	if (strcmp(uri, WORKER_RESOURCE_NOTEBOOKS) == 0) {
		u->kind = WORKER_RESOURCE_LIST;
		return (0);
	}
	if (strncmp(uri, WORKER_RESOURCE_SESSIONS,
	    strlen(WORKER_RESOURCE_SESSIONS)) != 0)
		return (-1);
	p = uri + strlen(WORKER_RESOURCE_SESSIONS);
	if ((slash = strchr(p, '/')) == NULL)
		return (-1);
	if ((u->handle = worker_resource_decode(p, (size_t)(slash - p))) ==
	    NULL)
		return (-1);
	p = slash + 1;
	if (strcmp(p, "cells") == 0)
		u->kind = WORKER_RESOURCE_CELLS;
	else if (strcmp(p, "comments") == 0)
		u->kind = WORKER_RESOURCE_COMMENTS;
	else if (strncmp(p, "cells/", 6) == 0 && p[6] != '\0' &&
	    strchr(p + 6, '/') == NULL &&
	    (u->cell_id = worker_resource_decode(p + 6, strlen(p + 6))) !=
	    NULL)
		u->kind = WORKER_RESOURCE_CELL;
	else {
		worker_resource_uri_free(u);
		return (-1);
	}
	return (0);
}

/* Caller frees. */
static char *
worker_resource_cells_uri(const char *handle)
{
	char	*enc, *uri;

	enc = worker_resource_encode(handle);
	xasprintf(&uri, "%s%s/cells", WORKER_RESOURCE_SESSIONS, enc);
	free(enc);
	return (uri);
}

static void
worker_resource_send_updated(struct worker_resource_watch *w,
    const char *ended)
{
	struct json_object	*p, *meta = NULL;
	char			*key;

	p = json_object_new_object();
	json_object_object_add(p, "uri", json_object_new_string(w->uri));
	if (ended != NULL || w->listen != NULL)
		meta = json_object_new_object();
	if (ended != NULL) {
		xasprintf(&key, "io.runtimed/%s", ended);
		json_object_object_add(meta, key, json_object_new_boolean(1));
		free(key);
	}
	if (w->listen != NULL)
		json_object_object_add(meta,
		    "io.modelcontextprotocol/subscriptionId",
		    json_object_get(w->listen));
	if (meta != NULL)
		json_object_object_add(p, "_meta", meta);
	worker_rpc_notify("notifications/resources/updated", p);
}

static void
worker_resource_flush(evutil_socket_t fd, short events, void *arg)
{
	struct worker_resource_watch	*w;

	TAILQ_FOREACH(w, &worker_resource_all, entry) {
		if (w->dirty) {
			w->dirty = 0;
			worker_resource_send_updated(w, NULL);
		}
	}
}

static void
worker_resource_mark(struct worker_resource_watch *w)
{
	struct timeval	tv = { 0, WORKER_RESOURCE_COALESCE_MS * 1000 };

	w->dirty = 1;
	if (worker_resource_timer == NULL)
		worker_resource_timer = evtimer_new(worker_rpc_base(),
		    worker_resource_flush, NULL);
	if (!evtimer_pending(worker_resource_timer, NULL))
		evtimer_add(worker_resource_timer, &tv);
}

/* Does a list of strings of a ROOM_CHANGED hold s? */
static int
worker_resource_has(const msgpack_object *arr, const char *s)
{
	uint32_t	i;

	if (arr == NULL)
		return (-1);	/* unknown: assume it may have */
	for (i = 0; i < arr->via.array.size; i++) {
		if (proto_obj_streq(&arr->via.array.ptr[i], s))
			return (1);
	}
	return (0);
}

/* A room changed (ev is its ROOM_CHANGED): mark the watches it touches. */
void
worker_resource_room_changed(struct worker_room *room,
    const struct proto_room_changed *ev)
{
	struct worker_resource_watch	*w;
	struct worker_handle		*h;

	TAILQ_FOREACH(w, &worker_resource_all, entry) {
		if (w->u.kind == WORKER_RESOURCE_OTHER)
			continue;
		if (w->u.kind == WORKER_RESOURCE_LIST) {
			worker_resource_mark(w);
			continue;
		}
		if ((h = worker_attach_find(w->u.handle)) == NULL ||
		    worker_attach_room(h) != room)
			continue;
		if (w->u.kind == WORKER_RESOURCE_CELL && worker_resource_has(
		    ev->cell_ids.obj, w->u.cell_id) == 0)
			continue;
		if (w->u.kind == WORKER_RESOURCE_COMMENTS && worker_resource_has(
		    ev->kinds.obj, "metadata") == 0)
			continue;
		worker_resource_mark(w);
	}
}

static void
worker_resource_drop(struct worker_resource_watch *w)
{
	TAILQ_REMOVE(&worker_resource_all, w, entry);
	worker_resource_n--;
	worker_resource_uri_free(&w->u);
	json_object_put(w->listen);
	free(w->uri);
	free(w);
}

/* A handle ended: its watches get a final update and go. */
void
worker_resource_handle_ended(const char *handle, const char *why)
{
	struct worker_resource_watch	*w, *next;

	for (w = TAILQ_FIRST(&worker_resource_all); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->u.handle == NULL || strcmp(w->u.handle, handle) != 0)
			continue;
		worker_resource_send_updated(w, why);
		worker_resource_drop(w);
	}
	worker_resource_list_changed();
}

/* The attachment list changed: resources/list differs. */
void
worker_resource_list_changed(void)
{
	struct worker_resource_stream	*s;
	struct json_object		*p, *meta;

	if (worker_rpc_base() == NULL)
		return;
	if (worker_rpc_ready())
		worker_rpc_notify("notifications/resources/list_changed",
		    NULL);
	TAILQ_FOREACH(s, &worker_resource_streams, entry) {
		if (!s->list_changed)
			continue;
		p = json_object_new_object();
		meta = json_object_new_object();
		json_object_object_add(meta,
		    "io.modelcontextprotocol/subscriptionId",
		    json_object_get(s->id));
		json_object_object_add(p, "_meta", meta);
		worker_rpc_notify("notifications/resources/list_changed", p);
	}
}

/* Check a URI for watching: 0, or -1 with msg. */
static int
worker_resource_check(const char *uri, struct worker_resource_uri *u,
    const char **msg)
{
	if (worker_resource_parse(uri, u) != 0) {
		/*
		 * Another scheme: a watch that never fires, as a generic
		 * client may expect; our own scheme must name something.
		 */
		if (strncmp(uri, WORKER_RESOURCE_SCHEME,
		    strlen(WORKER_RESOURCE_SCHEME)) != 0 &&
		    strchr(uri, ':') != NULL && *uri != ':') {
			memset(u, 0, sizeof *u);
			u->kind = WORKER_RESOURCE_OTHER;
			return (0);
		}
		*msg = "unknown resource URI (see resources/list and "
		    "resources/templates/list)";
		return (-1);
	}
	if (u->handle != NULL && worker_attach_find(u->handle) == NULL) {
		worker_resource_uri_free(u);
		*msg = "no such notebook handle in this session (released "
		    "or expired?)";
		return (-1);
	}
	return (0);
}

static struct worker_resource_watch *
worker_resource_find(const char *uri, struct json_object *listen)
{
	struct worker_resource_watch	*w;

	TAILQ_FOREACH(w, &worker_resource_all, entry) {
		if (strcmp(w->uri, uri) != 0)
			continue;
		if ((w->listen == NULL) != (listen == NULL))
			continue;
		if (listen != NULL && strcmp(json_object_to_json_string(
		    w->listen), json_object_to_json_string(listen)) != 0)
			continue;
		return (w);
	}
	return (NULL);
}

static void
worker_resource_add(const char *uri, struct worker_resource_uri *u,
    struct json_object *listen)
{
	struct worker_resource_watch	*w;

	w = xcalloc(1, sizeof *w);
	w->uri = xstrdup(uri);
	w->u = *u;
	w->listen = listen != NULL ? json_object_get(listen) : NULL;
	TAILQ_INSERT_TAIL(&worker_resource_all, w, entry);
	worker_resource_n++;
}

static void
worker_resource_not_found(struct json_object *id, int modern,
    const char *msg)
{
	worker_rpc_fail(id, modern ? -32602 : -32002, msg);
}

static struct json_object *
worker_resource_entry(const char *uri, const char *name, const char *desc)
{
	struct json_object	*r;

	r = json_object_new_object();
	json_object_object_add(r, "uri", json_object_new_string(uri));
	json_object_object_add(r, "name", json_object_new_string(name));
	json_object_object_add(r, "description", json_object_new_string(
	    desc));
	json_object_object_add(r, "mimeType", json_object_new_string(
	    "application/json"));
	return (r);
}

struct worker_resource_list {
	struct json_object	*arr;
};

static void
worker_resource_list_one(struct worker_handle *h, void *arg)
{
	struct worker_resource_list	*l = arg;
	char				*uri, *name;

	uri = worker_resource_cells_uri(worker_attach_id(h));
	xasprintf(&name, "cells of notebook %s", worker_attach_notebook_id(h));
	json_object_array_add(l->arr, worker_resource_entry(uri, name,
	    "The cells of this attached notebook (JSON, with a cursor)."));
	free(name);
	free(uri);
}

static void
worker_resource_list(struct json_object *id, struct json_object *params,
    int modern)
{
	struct worker_resource_list	 l;
	struct json_object		*res, *page;
	u_int				 off, size, i, n;
	char				*c;

	if (worker_rpc_page_cursor(params, &off) != 0) {
		worker_rpc_fail(id, -32602, "invalid cursor");
		return;
	}
	l.arr = json_object_new_array();
	json_object_array_add(l.arr, worker_resource_entry(
	    WORKER_RESOURCE_NOTEBOOKS, "notebooks", "The notebooks runtimed "
	    "has open (id, path, kernel, peers, dirty)."));
	worker_attach_foreach(worker_resource_list_one, &l);
	n = (u_int)json_object_array_length(l.arr);
	size = worker_rpc_page_size();
	if (off > 0 && off >= n) {
		json_object_put(l.arr);
		worker_rpc_fail(id, -32602, "invalid cursor");
		return;
	}
	page = json_object_new_array();
	for (i = off; i < n && i < off + size; i++)
		json_object_array_add(page, json_object_get(
		    json_object_array_get_idx(l.arr, i)));
	json_object_put(l.arr);
	res = json_object_new_object();
	json_object_object_add(res, "resources", page);
	if (off + size < n) {
		c = worker_rpc_page_next(off + size);
		json_object_object_add(res, "nextCursor",
		    json_object_new_string(c));
		free(c);
	}
	if (modern)
		worker_rpc_cache_hints(res);
	worker_rpc_result(id, res);
}

static void
worker_resource_templates(struct json_object *id, int modern)
{
	static const char *const t[][3] = {
		{ "runtimed://sessions/{notebook_handle}/cells", "cells",
		  "All cells of an attached notebook, with a cursor." },
		{ "runtimed://sessions/{notebook_handle}/cells/{cell_id}",
		  "cell", "One cell with its outputs." },
		{ "runtimed://sessions/{notebook_handle}/comments", "comments",
		  "The notebook's comment threads." },
	};
	struct json_object	*res, *arr, *o;
	size_t			 i;

	arr = json_object_new_array();
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "uriTemplate",
		    json_object_new_string(t[i][0]));
		json_object_object_add(o, "name", json_object_new_string(
		    t[i][1]));
		json_object_object_add(o, "description",
		    json_object_new_string(t[i][2]));
		json_object_object_add(o, "mimeType", json_object_new_string(
		    "application/json"));
		json_object_array_add(arr, o);
	}
	res = json_object_new_object();
	json_object_object_add(res, "resourceTemplates", arr);
	if (modern)
		worker_rpc_cache_hints(res);
	worker_rpc_result(id, res);
}

struct worker_resource_read {
	struct json_object		*id;
	char				*uri;
	struct worker_resource_uri	 u;
	int				 modern;
	struct worker_room		*room;
};

static void
worker_resource_read_free(struct worker_resource_read *r)
{
	json_object_put(r->id);
	free(r->uri);
	worker_resource_uri_free(&r->u);
	worker_room_unref(r->room);
	free(r);
}

/* Answer a read from the room list (list) or the notebook (reply). */
static void
worker_resource_read_done(struct worker_resource_read *r,
    struct json_object *list, const struct worker_nb *reply,
    const char *code, const char *msg)
{
	struct json_object		*out = NULL, *cells, *cell, *c, *res;
	struct json_object		*contents, *item, *o;
	const char			*cid;
	size_t				 i;
	int64_t				 seq;

	if (code != NULL) {
		worker_rpc_fail(r->id, -32603, msg);
		goto done;
	}
	switch (r->u.kind) {
	case WORKER_RESOURCE_OTHER:
	case WORKER_RESOURCE_LIST:
		out = json_object_get(list);
		break;
	case WORKER_RESOURCE_CELLS:
	case WORKER_RESOURCE_CELL:
	case WORKER_RESOURCE_COMMENTS:
		seq = reply->seq;
		cells = worker_nb_cells(reply);
		out = json_object_new_object();
		json_object_object_add(out, "notebook_id",
		    json_object_new_string(reply->notebook_id));
		json_object_object_add(out, "cursor",
		    worker_output_cursor(r->room, seq));
		if (r->u.kind == WORKER_RESOURCE_COMMENTS) {
			o = worker_comment_threads(reply->metadata);
			json_object_object_add(out, "threads", o != NULL ?
			    json_object_get(o) : json_object_new_array());
			break;
		}
		c = json_object_new_array();
		for (i = 0; cells != NULL && json_object_is_type(cells,
		    json_type_array) && i < json_object_array_length(cells);
		    i++) {
			cell = json_object_array_get_idx(cells, i);
			cid = json_object_get_string(json_object_object_get(
			    cell, "cell_id"));
			if (r->u.kind == WORKER_RESOURCE_CELL) {
				if (cid != NULL &&
				    strcmp(cid, r->u.cell_id) == 0) {
					json_object_object_add(out, "cell",
					    json_object_get(cell));
					break;
				}
				continue;
			}
			o = json_object_new_object();
			json_object_object_add(o, "cell_id",
			    json_object_new_string(cid != NULL ? cid : ""));
			json_object_object_add(o, "cell_type", json_object_get(
			    json_object_object_get(cell, "cell_type")));
			json_object_object_add(o, "source", json_object_get(
			    json_object_object_get(cell, "source")));
			json_object_object_add(o, "execution_count",
			    json_object_get(json_object_object_get(cell,
			    "execution_count")));
			json_object_object_add(o, "outputs",
			    json_object_new_int64((int64_t)
			    json_object_array_length(json_object_object_get(
			    cell, "outputs"))));
			json_object_array_add(c, o);
		}
		if (r->u.kind == WORKER_RESOURCE_CELL) {
			json_object_put(c);
			if (json_object_object_get(out, "cell") == NULL) {
				json_object_put(out);
				worker_resource_not_found(r->id, r->modern,
				    "Resource not found: no such cell");
				goto done;
			}
		} else
			json_object_object_add(out, "cells", c);
		break;
	}
	item = json_object_new_object();
	json_object_object_add(item, "uri", json_object_new_string(r->uri));
	json_object_object_add(item, "mimeType", json_object_new_string(
	    "application/json"));
	json_object_object_add(item, "text", json_object_new_string(
	    json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE)));
	json_object_put(out);
	contents = json_object_new_array();
	json_object_array_add(contents, item);
	res = json_object_new_object();
	json_object_object_add(res, "contents", contents);
	if (r->modern) {
		worker_rpc_cache_hints(res);
		worker_rpc_stateless_result(res);
	}
	worker_rpc_result(r->id, res);
done:
	worker_resource_read_free(r);
}

/* ROOM_LIST_REPLY: the list resource is it, as {warnings, rooms}. */
static void
worker_resource_read_list(void *arg, uint16_t type,
    const msgpack_object *reply, const char *code, const char *msg)
{
	struct proto_room_list_reply	 m;
	struct json_object		*list = NULL;
	char				 err[256];

	if (code == NULL && (type != PROTO_MSG_ROOM_LIST_REPLY ||
	    proto_room_list_reply_unpack(reply, &m, err, sizeof err) != 0)) {
		code = PROTO_E_NOTEBOOK_UNAVAILABLE;
		msg = "unexpected reply from runtimed";
	}
	if (code == NULL) {
		list = json_object_new_object();
		json_object_object_add(list, "warnings",
		    m.warnings.obj != NULL ? mpjson_unpack(m.warnings.obj) :
		    json_object_new_array());
		json_object_object_add(list, "rooms",
		    mpjson_unpack(m.rooms.obj));
	}
	worker_resource_read_done(arg, list, NULL, code, msg);
	json_object_put(list);
}

static void
worker_resource_read_nb(void *arg, struct worker_nb *nb, const char *code,
    const char *msg)
{
	worker_resource_read_done(arg, NULL, nb, code, msg);
}

static void
worker_resource_read(struct json_object *id, struct json_object *params,
    int modern)
{
	struct worker_resource_read	*r;
	struct worker_handle		*h;
	struct json_object		*v;
	const char			*uri;

	if (params == NULL || !json_object_object_get_ex(params, "uri", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		worker_rpc_fail(id, -32602, "resources/read needs a uri");
		return;
	}
	uri = json_object_get_string(v);
	r = xcalloc(1, sizeof *r);
	if (worker_resource_parse(uri, &r->u) != 0) {
		free(r);
		worker_resource_not_found(id, modern, "Resource not found");
		return;
	}
	r->id = json_object_get(id);
	r->uri = xstrdup(uri);
	r->modern = modern;
	if (r->u.kind == WORKER_RESOURCE_LIST) {
		worker_daemon_request(worker_daemon_control(),
		    PROTO_MSG_ROOM_LIST, NULL, worker_resource_read_list, r);
		return;
	}
	if ((h = worker_attach_find(r->u.handle)) == NULL) {
		worker_resource_not_found(id, modern, "Resource not found: "
		    "the notebook handle was released or has expired");
		worker_resource_read_free(r);
		return;
	}
	r->room = worker_attach_room(h);
	worker_room_ref(r->room);
	worker_room_get(r->room, worker_resource_read_nb, r);
}

static void
worker_resource_subscribe(struct json_object *id, struct json_object *params,
    int on)
{
	struct worker_resource_watch	*w;
	struct worker_resource_uri	 u;
	struct json_object		*v;
	const char			*uri, *msg;

	if (params == NULL || !json_object_object_get_ex(params, "uri", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		worker_rpc_fail(id, -32602, "a uri is required");
		return;
	}
	uri = json_object_get_string(v);
	w = worker_resource_find(uri, NULL);
	if (!on) {
		if (w != NULL)
			worker_resource_drop(w);
		worker_rpc_result(id, json_object_new_object());
		return;
	}
	if (w != NULL) {
		worker_rpc_result(id, json_object_new_object());
		return;
	}
	if (worker_resource_check(uri, &u, &msg) != 0) {
		worker_rpc_fail(id, -32602, msg);
		return;
	}
	if (worker_resource_n >= PROTO_MAX_WATCHES) {
		worker_resource_uri_free(&u);
		worker_rpc_fail(id, -32602, "too many resource watches (at "
		    "most 128 per connection); unsubscribe some first");
		return;
	}
	worker_resource_add(uri, &u, NULL);
	worker_rpc_result(id, json_object_new_object());
}

/* resources/list, templates/list, read, subscribe, unsubscribe. */
void
worker_resource_request(const char *method, struct json_object *id,
    struct json_object *params, int modern)
{
	if (strcmp(method, "resources/list") == 0)
		worker_resource_list(id, params, modern);
	else if (strcmp(method, "resources/templates/list") == 0)
		worker_resource_templates(id, modern);
	else if (strcmp(method, "resources/read") == 0)
		worker_resource_read(id, params, modern);
	else if (strcmp(method, "resources/subscribe") == 0 && !modern)
		worker_resource_subscribe(id, params, 1);
	else if (strcmp(method, "resources/unsubscribe") == 0 && !modern)
		worker_resource_subscribe(id, params, 0);
	else
		worker_rpc_fail(id, -32601, "Method not found");
}

/*
 * subscriptions/listen (2026-07-28): watch the URIs named, acknowledge,
 * and stay open (no response) until the client cancels the request.
 */
void
worker_resource_listen(struct json_object *id, struct json_object *params)
{
	struct worker_resource_stream	*s;
	struct worker_resource_uri	*us;
	struct json_object		*n, *uris, *v, *ack, *acc, *meta, *p;
	const char			*msg = "a URI must be a string";
	size_t				 i, k, count;
	int				 lc, tc;

	if (params == NULL || !json_object_object_get_ex(params,
	    "notifications", &n) || !json_object_is_type(n,
	    json_type_object)) {
		worker_rpc_fail(id, -32602, "subscriptions/listen needs a "
		    "notifications object");
		return;
	}
	uris = json_object_object_get(n, "resourceSubscriptions");
	if (uris != NULL && !json_object_is_type(uris, json_type_array)) {
		worker_rpc_fail(id, -32602, "resourceSubscriptions must be a "
		    "list of URIs");
		return;
	}
	count = uris != NULL ? json_object_array_length(uris) : 0;
	if (worker_resource_n + count > PROTO_MAX_WATCHES) {
		worker_rpc_fail(id, -32602, "too many resource watches (at "
		    "most 128 per connection)");
		return;
	}
	us = xcalloc(count + 1, sizeof *us);
	for (i = 0; i < count; i++) {
		v = json_object_array_get_idx(uris, i);
		if (!json_object_is_type(v, json_type_string) ||
		    worker_resource_check(json_object_get_string(v), &us[i],
		    &msg) != 0) {
			for (k = 0; k < i; k++)
				worker_resource_uri_free(&us[k]);
			free(us);
			worker_rpc_fail(id, -32602, json_object_is_type(v,
			    json_type_string) ? msg : "a URI must be a string");
			return;
		}
	}
	acc = json_object_new_array();
	for (i = 0; i < count; i++) {
		v = json_object_array_get_idx(uris, i);
		worker_resource_add(json_object_get_string(v), &us[i], id);
		json_object_array_add(acc, json_object_get(v));
	}
	free(us);
	lc = json_object_get_boolean(json_object_object_get(n,
	    "resourcesListChanged"));
	tc = json_object_get_boolean(json_object_object_get(n,
	    "toolsListChanged"));
	s = xcalloc(1, sizeof *s);
	s->id = json_object_get(id);
	s->list_changed = lc;
	TAILQ_INSERT_TAIL(&worker_resource_streams, s, entry);

	ack = json_object_new_object();
	json_object_object_add(ack, "resourceSubscriptions", acc);
	if (lc)
		json_object_object_add(ack, "resourcesListChanged",
		    json_object_new_boolean(1));
	if (tc)
		json_object_object_add(ack, "toolsListChanged",
		    json_object_new_boolean(1));
	p = json_object_new_object();
	meta = json_object_new_object();
	json_object_object_add(meta, "io.modelcontextprotocol/subscriptionId",
	    json_object_get(id));
	json_object_object_add(p, "_meta", meta);
	json_object_object_add(p, "notifications", ack);
	worker_rpc_notify("notifications/subscriptions/acknowledged", p);
}

/* The client cancelled a listen stream: drop its watches. */
void
worker_resource_cancel(struct json_object *id)
{
	struct worker_resource_stream	*s;
	struct worker_resource_watch	*w, *next;
	const char			*want;

	want = json_object_to_json_string(id);
	TAILQ_FOREACH(s, &worker_resource_streams, entry) {
		if (strcmp(json_object_to_json_string(s->id), want) == 0)
			break;
	}
	if (s == NULL)
		return;
	for (w = TAILQ_FIRST(&worker_resource_all); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->listen != NULL && strcmp(json_object_to_json_string(
		    w->listen), want) == 0)
			worker_resource_drop(w);
	}
	TAILQ_REMOVE(&worker_resource_streams, s, entry);
	json_object_put(s->id);
	free(s);
}
