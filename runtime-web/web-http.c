/* SPDX-License-Identifier: ISC */
/*
 * web-http.c: the HTTP face, on evhttp, bound to 127.0.0.1 only.  Every
 * request is judged in one order: its Host must be this address and
 * port (DNS rebinding), then it must carry the secret (in the cookie,
 * or on /open in the URL, which sets the cookie), then a POST must carry
 * the page's token and no foreign Origin.  Anything else is 403 with the
 * same short body, so a stranger learns nothing.  evhttp caps headers,
 * bodies and slow clients, and answers methods other than GET and POST
 * itself (405).
 */

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "web.h"

#define WEB_CSP	"default-src 'none'; script-src 'self'; " \
	"style-src 'self' 'unsafe-inline'; img-src data:; " \
	"connect-src 'self'; frame-src 'self'; form-action 'none'; " \
	"base-uri 'none'; frame-ancestors 'none'"

static struct evhttp	*web_http;
static char		 web_http_cookie[32];	/* "rtd_PORT" */
static struct evconnlistener *web_http_listener;

static void	web_http_request(struct evhttp_request *, void *);
static void	web_http_accept_resume(evutil_socket_t, short, void *);
static struct bufferevent *web_http_bevcb(struct event_base *, void *);
static void	web_http_served(struct bufferevent *);
static void	web_http_accept_error(struct evconnlistener *, void *);
static void	web_http_open(struct evhttp_request *, const char *);
static void	web_http_index(struct evhttp_request *);
static void	web_http_listed(const msgpack_object *, const char *, void *);
static void	web_http_wait_closed(struct evhttp_connection *, void *);
static void	web_http_notebook(struct evhttp_request *, const char *,
		    const char *);
static int	web_http_write(const char *);
static int	web_http_cell_ok(const char *);
static int	web_http_one_of(const char *, const char *);
static const char *web_http_fields(const char *, const char *, size_t,
		    struct web_post *);
static void	web_http_post(struct evhttp_request *, const char *,
		    const char *);
static void	web_http_static(struct evhttp_request *, const char *,
		    const char *);

/*
 * Every connection's bufferevent, made here for evhttp (evhttp_set_bevcb)
 * with a reference of ours, so a connection that has not sent a whole
 * request WEB_REQUEST_SECS after it came is shut: evhttp's own timeout
 * is an idle one, which a client sending a header byte every few
 * seconds (slowloris) resets forever.  Our reference keeps the
 * bufferevent's memory until the tick sees evhttp has let it go.
 */
struct web_http_conn {
	struct bufferevent		*bev;
	int64_t				 since;
	int				 served;
	TAILQ_ENTRY(web_http_conn)	 entry;
};
static TAILQ_HEAD(, web_http_conn) web_http_conns =
    TAILQ_HEAD_INITIALIZER(web_http_conns);

static struct bufferevent *
web_http_bevcb(struct event_base *base, void *arg)
{
	struct web_http_conn	*c;
	struct bufferevent	*bev;

	(void)arg;
	if ((bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return (NULL);
	bufferevent_incref(bev);
	c = xcalloc(1, sizeof *c);
	c->bev = bev;
	c->since = util_mono_ms();
	TAILQ_INSERT_TAIL(&web_http_conns, c, entry);
	return (bev);
}

/* A request came whole on this bufferevent's connection. */
static void
web_http_served(struct bufferevent *bev)
{
	struct web_http_conn	*c;

	TAILQ_FOREACH(c, &web_http_conns, entry) {
		if (c->bev == bev) {
			c->served = 1;
			return;
		}
	}
}

/* Once a second: let go of what evhttp freed, shut the too slow. */
void
web_http_tick(void)
{
	struct web_http_conn	*c, *c1;
	bufferevent_data_cb	 r, w;
	bufferevent_event_cb	 e;
	void			*arg;
	int64_t			 now = util_mono_ms();
	int			 fd;

	TAILQ_FOREACH_SAFE(c, &web_http_conns, entry, c1) {
		bufferevent_getcb(c->bev, &r, &w, &e, &arg);
		if (r == NULL && e == NULL && now - c->since > 1000) {
			/* evhttp freed it: ours was the last reference. */
			TAILQ_REMOVE(&web_http_conns, c, entry);
			bufferevent_decref(c->bev);
			free(c);
			continue;
		}
		if (c->served || now - c->since < WEB_REQUEST_SECS * 1000)
			continue;
		if ((fd = bufferevent_getfd(c->bev)) != -1)
			shutdown(fd, SHUT_RDWR);
		c->served = 1;		/* once */
		log_debug("closed a connection without a whole request "
		    "after %d s", WEB_REQUEST_SECS);
	}
}

/* Accepting again, a moment after descriptors ran out. */
static void
web_http_accept_resume(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	(void)arg;
	evconnlistener_enable(web_http_listener);
}

/*
 * accept() failed (EMFILE, ENFILE: every descriptor in use).  The
 * listening socket stays readable, so evhttp would try again at once,
 * forever: 100% of a CPU and a log line each time (430 MB in 10 s).
 * Accepting pauses for WEB_ACCEPT_PAUSE_MS instead, logged at most once
 * every WEB_ACCEPT_LOG_SECS; open pages are served meanwhile.
 */
static void
web_http_accept_error(struct evconnlistener *l, void *arg)
{
	static struct event	*ev;
	static time_t		 logged;
	struct timeval		 tv = { 0, WEB_ACCEPT_PAUSE_MS * 1000 };
	int			 e = EVUTIL_SOCKET_ERROR();

	(void)arg;
	evconnlistener_disable(l);
	if (ev == NULL)
		ev = evtimer_new(web_base, web_http_accept_resume, NULL);
	evtimer_add(ev, &tv);
	if (time(NULL) - logged >= WEB_ACCEPT_LOG_SECS) {
		logged = time(NULL);
		log_warnx("cannot accept a connection: %s; pausing %d ms "
		    "(%u pages open)", evutil_socket_error_to_string(e),
		    WEB_ACCEPT_PAUSE_MS, web_nb_streams());
	}
}

/* Listen on 127.0.0.1:RUNTIMED_WEB_PORT (default: any free port). */
int
web_http_start(char **cause)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 len = sizeof sin;
	const char			*s;
	char				*end;
	long				 port = 0;

	if ((s = getenv("RUNTIMED_WEB_PORT")) != NULL && *s != '\0') {
		port = strtol(s, &end, 10);
		if (*end != '\0' || port < 0 || port > 65535) {
			xasprintf(cause, "RUNTIMED_WEB_PORT=%s is not a port",
			    s);
			return (-1);
		}
	}
	web_http = evhttp_new(web_base);
	evhttp_set_max_headers_size(web_http, WEB_MAX_HEADERS);
	evhttp_set_max_body_size(web_http, WEB_MAX_BODY);
	evhttp_set_timeout(web_http, 10);
	evhttp_set_allowed_methods(web_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
	evhttp_set_gencb(web_http, web_http_request, NULL);
	evhttp_set_bevcb(web_http, web_http_bevcb, NULL);
	bs = evhttp_bind_socket_with_handle(web_http, "127.0.0.1",
	    (uint16_t)port);
	if (bs == NULL) {
		xasprintf(cause, "cannot listen on 127.0.0.1:%ld", port);
		return (-1);
	}
	if (getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &len) != 0) {
		xasprintf(cause, "getsockname failed");
		return (-1);
	}
	/* Out of descriptors: pause accepting, never spin and log. */
	web_http_listener = evhttp_bound_socket_get_listener(bs);
	evconnlistener_set_error_cb(web_http_listener, web_http_accept_error);
	web_port = ntohs(sin.sin_port);
	snprintf(web_http_cookie, sizeof web_http_cookie, "rtd_%d", web_port);
	log_info("listening on 127.0.0.1:%d", web_port);
	return (0);
}

/*
 * Watch a request's connection for its close.  When a browser leaves
 * while we still owe an answer, evhttp detaches the request from the
 * connection and leaves it to us: answering it then frees it
 * (web_http_detached tells which case a close callback is in).
 */
void
web_http_closecb(struct evhttp_request *req,
    void (*cb)(struct evhttp_connection *, void *), void *arg)
{
	struct evhttp_connection	*conn;

	if ((conn = evhttp_request_get_connection(req)) != NULL)
		evhttp_connection_set_closecb(conn, cb, arg);
}

/* In a close callback: is req ours now (else it goes with its conn)? */
int
web_http_detached(struct evhttp_request *req)
{
	return (evhttp_request_get_connection(req) == NULL);
}

/* At exit: close every connection, answering what is still open. */
void
web_http_stop(void)
{
	struct web_http_conn	*c;

	if (web_http != NULL) {
		evhttp_free(web_http);
		web_http = NULL;
	}
	/* evhttp freed its connections: our references are the last. */
	while ((c = TAILQ_FIRST(&web_http_conns)) != NULL) {
		TAILQ_REMOVE(&web_http_conns, c, entry);
		bufferevent_decref(c->bev);
		free(c);
	}
}

/* Is this Host header ours: 127.0.0.1:PORT or localhost:PORT? */
int
web_http_host_ok(const char *host)
{
	char	a[40], b[40];

	if (host == NULL)
		return (0);
	snprintf(a, sizeof a, "127.0.0.1:%d", web_port);
	snprintf(b, sizeof b, "localhost:%d", web_port);
	return (strcmp(host, a) == 0 || strcmp(host, b) == 0);
}

/* The headers of every answer: what it is, and what it may not do. */
void
web_http_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_remove_header(h, "Content-Type");
	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Content-Security-Policy", WEB_CSP);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "Cross-Origin-Opener-Policy", "same-origin");
	evhttp_add_header(h, "Cross-Origin-Resource-Policy", "same-origin");
	/* One request a connection: each gets WEB_REQUEST_SECS to come. */
	evhttp_add_header(h, "Connection", "close");
}

/* A short plain answer: 403 always says the same. */
void
web_http_error(struct evhttp_request *req, int code, const char *text)
{
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add_printf(b, "%s\n", text);
	web_http_headers(req, "text/plain; charset=utf-8");
	evhttp_send_reply(req, code, code == 403 ? "Forbidden" :
	    code == 404 ? "Not Found" : code == 400 ? "Bad Request" :
	    code == 409 ? "Conflict" : "Error", b);
	evbuffer_free(b);
}

static void
web_http_static(struct evhttp_request *req, const char *type,
    const char *text)
{
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add_reference(b, text, strlen(text), NULL, NULL);
	web_http_headers(req, type);
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* GET /open?s=SECRET[&nb=ID]: the cookie, then the page without it. */
static void
web_http_open(struct evhttp_request *req, const char *query)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	char			*s, *nb, *cookie, *loc;

	s = query != NULL ? web_form_get(query, strlen(query), "s") : NULL;
	nb = query != NULL ? web_form_get(query, strlen(query), "nb") : NULL;
	if (!web_form_equal(s, web_secret) || (nb != NULL &&
	    !web_form_id_ok(nb))) {
		web_http_error(req, 403, "forbidden");
		goto out;
	}
	/* Sent to no other port's pages: only under web_prefix. */
	xasprintf(&cookie, "%s=%s; HttpOnly; SameSite=Strict; Path=%s/",
	    web_http_cookie, web_secret, web_prefix);
	evhttp_add_header(h, "Set-Cookie", cookie);
	free(cookie);
	if (nb != NULL)
		xasprintf(&loc, "%s/nb/%s", web_prefix, nb);
	else
		xasprintf(&loc, "%s/", web_prefix);
	evhttp_add_header(h, "Location", loc);
	free(loc);
	web_http_headers(req, "text/plain; charset=utf-8");
	evhttp_send_reply(req, 303, "See Other", NULL);
out:
	free(s);
	free(nb);
}

/* A GET / waiting for ROOM_LIST; req NULL once its browser left. */
struct web_http_wait {
	struct evhttp_request	*req;
};

static void
web_http_wait_closed(struct evhttp_connection *conn, void *arg)
{
	struct web_http_wait	*w = arg;

	/* Detached, it is ours until answered; else it goes with conn. */
	if (!web_http_detached(w->req))
		w->req = NULL;
}

/* GET /: the notebooks the daemon has open. */
static void
web_http_index(struct evhttp_request *req)
{
	struct web_http_wait	*w;

	w = xcalloc(1, sizeof *w);
	w->req = req;
	web_http_closecb(req, web_http_wait_closed, w);
	web_list_rooms(web_http_listed, w);
}

static void
web_http_listed(const msgpack_object *body, const char *why, void *arg)
{
	struct web_http_wait		*w = arg;
	struct evhttp_request		*req = w->req;
	struct proto_room_list_reply	 m;
	const msgpack_object		*rooms, *r, *id, *path;
	struct evbuffer			*b;
	char				 err[256], *ids;
	uint32_t			 i;

	free(w);
	if (req == NULL)
		return;
	web_http_closecb(req, NULL, NULL);
	if (body == NULL || proto_room_list_reply_unpack(body, &m, err,
	    sizeof err) != 0 || (rooms = m.rooms.obj) == NULL ||
	    rooms->type != MSGPACK_OBJECT_ARRAY) {
		web_http_error(req, 409, why);
		return;
	}
	b = evbuffer_new();
	WEB_ADD(b, "<!doctype html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\"><title>runtimed notebooks</title><link "
	    "rel=\"stylesheet\" href=\"static/page.css\"></head><body><main>"
	    "<h1>Notebooks</h1><ul>");
	for (i = 0; i < rooms->via.array.size; i++) {
		r = &rooms->via.array.ptr[i];
		if ((id = proto_get(r, "notebook_id")) == NULL ||
		    id->type != MSGPACK_OBJECT_STR)
			continue;
		ids = xstrndup(id->via.str.ptr, id->via.str.size);
		if (!web_form_id_ok(ids)) {
			free(ids);
			continue;
		}
		evbuffer_add_printf(b, "<li><a href=\"nb/%s\">", ids);
		path = proto_get(r, "path");
		if (path != NULL && path->type == MSGPACK_OBJECT_STR)
			web_ansi_escape(b, path->via.str.ptr,
			    path->via.str.size, 0);
		else
			evbuffer_add_printf(b, "untitled %s", ids);
		WEB_ADD(b, "</a></li>");
		free(ids);
	}
	WEB_ADD(b, "</ul></main></body></html>\n");
	web_http_headers(req, "text/html; charset=utf-8");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* /nb/ID, /nb/ID/events, and the POSTs under /nb/ID/. */
static void
web_http_notebook(struct evhttp_request *req, const char *id,
    const char *rest)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	struct evbuffer		*b;
	struct web_nb		*nb;
	char			*token;
	int			 post;

	post = evhttp_request_get_command(req) == EVHTTP_REQ_POST;
	if (!post && *rest == '\0') {
		token = web_token_make(id);
		b = evbuffer_new();
		web_page_html(b, id, token);
		free(token);
		web_http_headers(req, "text/html; charset=utf-8");
		evhttp_send_reply(req, 200, "OK", b);
		evbuffer_free(b);
		return;
	}
	if (!post && strcmp(rest, "/events") == 0) {
		if ((nb = web_nb_find(id, 1)) == NULL) {
			web_http_error(req, 409, "the daemon cannot be "
			    "reached");
			return;
		}
		web_nb_stream(nb, req, evhttp_find_header(in,
		    "Last-Event-ID"));
		return;
	}
	if (post && *rest == '/' && web_http_write(rest + 1)) {
		web_http_post(req, id, rest + 1);
		return;
	}
	web_http_error(req, 404, "not found");
}

/*
 * The writes a page may make, and nothing else (decision 079): each
 * maps to one daemon request on the view's own connection.
 */
static int
web_http_write(const char *what)
{
	static const char *const	 writes[] = {
		"interrupt", "restart", "comment", "edit", "insert", "run",
		"run-all", "resolve", "revert", NULL
	};
	size_t				 i;

	for (i = 0; writes[i] != NULL; i++) {
		if (strcmp(what, writes[i]) == 0)
			return (1);
	}
	return (0);
}

/* A cell id as the daemon takes them: 1-64 of [A-Za-z0-9_-]. */
static int
web_http_cell_ok(const char *id)
{
	size_t	len;

	if (id == NULL)
		return (0);
	len = strlen(id);
	return (len > 0 && len <= 64 && strspn(id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == len);
}

/* One of the words in list (NUL-separated, ending in an empty one). */
static int
web_http_one_of(const char *v, const char *list)
{
	for (; v != NULL && *list != '\0'; list += strlen(list) + 1) {
		if (strcmp(v, list) == 0)
			return (1);
	}
	return (0);
}

/*
 * A write's fields, checked here so that web-nb.c sends the daemon only
 * what the write may say: a bad one is 400 with what it needs.
 */
static const char *
web_http_fields(const char *what, const char *body, size_t len,
    struct web_post *f)
{
	f->cell_id = web_form_get(body, len, "cell_id");
	if (strcmp(what, "comment") == 0) {
		f->text = web_form_get(body, len, "text");
		if (f->cell_id == NULL || *f->cell_id == '\0' ||
		    strlen(f->cell_id) > 64 || f->text == NULL ||
		    *f->text == '\0' || strlen(f->text) > WEB_COMMENT_MAX ||
		    !utf8_valid(f->text, strlen(f->text), NULL) ||
		    !utf8_valid(f->cell_id, strlen(f->cell_id), NULL))
			return ("a comment needs a cell_id and a text of at "
			    "most 16 KiB of UTF-8");
	} else if (strcmp(what, "edit") == 0) {
		f->text = web_form_get(body, len, "source");
		f->version = web_form_get(body, len, "version");
		if (!web_http_cell_ok(f->cell_id) || f->version == NULL ||
		    strlen(f->version) != 8 ||
		    strspn(f->version, "0123456789abcdef") != 8 ||
		    f->text == NULL ||
		    !utf8_valid(f->text, strlen(f->text), NULL))
			return ("an edit needs a cell_id, the version of the "
			    "cell it was made on (8 hex digits) and a source "
			    "of UTF-8");
	} else if (strcmp(what, "insert") == 0) {
		f->text = web_form_get(body, len, "source");
		f->after = web_form_get(body, len, "after");
		f->cell_type = web_form_get(body, len, "cell_type");
		if (f->text == NULL)
			f->text = xstrdup("");
		if (f->after == NULL || (!web_http_cell_ok(f->after) &&
		    !web_http_one_of(f->after, "TOP\0BOTTOM\0")) ||
		    !web_http_one_of(f->cell_type, "code\0markdown\0") ||
		    !utf8_valid(f->text, strlen(f->text), NULL))
			return ("a new cell needs after (a cell_id, TOP or "
			    "BOTTOM), a cell_type (code or markdown) and a "
			    "source of UTF-8");
	} else if (strcmp(what, "run") == 0) {
		if (!web_http_cell_ok(f->cell_id))
			return ("a run needs the cell_id of a code cell");
	} else if (strcmp(what, "revert") == 0) {
		f->batch_id = web_form_get(body, len, "batch_id");
		if (f->batch_id == NULL || *f->batch_id < '1' ||
		    *f->batch_id > '9' || strlen(f->batch_id) > 18 ||
		    strspn(f->batch_id, "0123456789") != strlen(f->batch_id))
			return ("a revert needs the batch_id of a batch the "
			    "page lists (its number)");
	} else if (strcmp(what, "resolve") == 0) {
		f->take = web_form_get(body, len, "take");
		if (!web_http_cell_ok(f->cell_id) ||
		    !web_http_one_of(f->take, "room\0disk\0both\0"))
			return ("resolving a conflict needs its cell_id and "
			    "take: room, disk or both");
	}
	return (NULL);
}

/*
 * A POST: the token of a page of this notebook, its fields, then the
 * notebook's connection and the action.
 */
static void
web_http_post(struct evhttp_request *req, const char *id, const char *what)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 len = evbuffer_get_length(in);
	struct web_nb	*nb;
	struct web_post	 f;
	const char	*bad;
	char		*body, *token;

	memset(&f, 0, sizeof f);
	if (len > WEB_MAX_BODY) {
		web_http_error(req, 400, "the request is too large");
		return;
	}
	body = xmalloc(len + 1);
	evbuffer_copyout(in, body, len);
	body[len] = '\0';
	token = web_form_get(body, len, "token");
	if (!web_token_check(token, id)) {
		web_http_error(req, 403, "forbidden");
		goto out;
	}
	if ((bad = web_http_fields(what, body, len, &f)) != NULL) {
		web_http_error(req, 400, bad);
		goto out;
	}
	if ((nb = web_nb_find(id, 0)) == NULL) {
		web_http_error(req, 409, "this notebook has no page open; "
		    "reload it");
		goto out;
	}
	web_nb_action(nb, req, what, &f);
out:
	free(body);
	free(token);
	web_post_free(&f);
}

/* Every request, in the order the top of this file says. */
static void
web_http_request(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path, *query, *origin, *slash;
	struct bufferevent	*bev;
	char			*cookie, *id, o1[40], o2[40];
	size_t			 n;
	int			 fd, one = 1;

	web_activity();
	bev = evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(req));
	web_http_served(bev);
	/* Small writes (events, short pages) go out at once. */
	fd = bufferevent_getfd(bev);
	if (fd != -1)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (!web_http_host_ok(evhttp_find_header(in, "Host"))) {
		web_http_error(req, 403, "forbidden");
		return;
	}
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	if (path == NULL || *path != '/') {
		web_http_error(req, 400, "bad request");
		return;
	}
	if (strcmp(path, "/open") == 0 &&
	    evhttp_request_get_command(req) == EVHTTP_REQ_GET) {
		web_http_open(req, query);
		return;
	}
	cookie = web_form_cookie(evhttp_find_header(in, "Cookie"),
	    web_http_cookie);
	n = web_form_equal(cookie, web_secret);
	free(cookie);
	if (!n) {
		web_http_error(req, 403, "forbidden");
		return;
	}
	/* Every page is under the cookie's path (web_prefix). */
	if (strncmp(path, web_prefix, WEB_PREFIX_LEN) != 0 ||
	    path[WEB_PREFIX_LEN] != '/') {
		web_http_error(req, 404, "not found");
		return;
	}
	path += WEB_PREFIX_LEN;
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
		/* A browser names the page's origin on a POST: ours only. */
		origin = evhttp_find_header(in, "Origin");
		snprintf(o1, sizeof o1, "http://127.0.0.1:%d", web_port);
		snprintf(o2, sizeof o2, "http://localhost:%d", web_port);
		if (origin != NULL && strcmp(origin, o1) != 0 &&
		    strcmp(origin, o2) != 0) {
			web_http_error(req, 403, "forbidden");
			return;
		}
	}
	if (strcmp(path, "/") == 0 &&
	    evhttp_request_get_command(req) == EVHTTP_REQ_GET) {
		web_http_index(req);
		return;
	}
	if (strcmp(path, "/static/page.js") == 0) {
		web_http_static(req, "text/javascript; charset=utf-8",
		    web_page_js);
		return;
	}
	if (strcmp(path, "/static/page.css") == 0) {
		web_http_static(req, "text/css; charset=utf-8", web_page_css);
		return;
	}
	if (strncmp(path, "/nb/", 4) == 0) {
		slash = strchr(path + 4, '/');
		id = slash != NULL ? xstrndup(path + 4, slash - path - 4) :
		    xstrdup(path + 4);
		if (web_form_id_ok(id)) {
			web_http_notebook(req, id, slash != NULL ? slash : "");
			free(id);
			return;
		}
		free(id);
	}
	web_http_error(req, 404, "not found");
}
