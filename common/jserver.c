/* SPDX-License-Identifier: ISC */
/*
 * jserver.c: REST calls to a Jupyter Server over libevent's evhttp
 * client, authenticated by "Authorization: token T".  Token-authenticated
 * requests are exempt from the server's XSRF check, so POST, PUT and
 * PATCH need no cookie.  jserver_request runs on the caller's loop (the
 * daemon's and the worker's calls: decision 029); jserver_call blocks on
 * a private loop, for what serves no one else while it waits (runtimectl,
 * an agent starting).  A reply's headers are capped at
 * JSERVER_HEADERS_MAX and its body at JSERVER_BODY_MAX, and the whole
 * reply must come within the call's timeout (a deadline, not only
 * evhttp's idle timeout, which a server trickling a byte at a time
 * would reset forever).  jserver_stream is a GET whose body is not
 * kept: its pieces go to the caller as they arrive (a download of up to
 * a GiB in bounded memory), at most JSERVER_STREAM_READ at a time; the
 * caller's writes to disk are its back-pressure, since nothing more is
 * read until it returns.  A stream may start at a byte (Range: the
 * rest of a download cut short), its head checked by the caller before
 * any piece is taken (the right 206, the same file).  An https domain's
 * requests go over a verified TLS bufferevent (jserver-tls.c); a failed
 * verification is the reply's cause, with untrusted set.
 */

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/http.h>

#include "common.h"
#include "domain.h"

struct jserver_req {
	struct event_base		*base;
	struct evhttp_connection	*conn;
	struct evhttp_request		*req;
	struct event			*deadline;
	int				 timeout;
	jserver_cb			 cb;
	void				*arg;
	enum evhttp_request_error	 error;
	int				 failed;
	int				 late;		/* past the deadline */
	/* jserver_stream: the body goes to piece, not into the reply. */
	jserver_head_cb			 head;
	jserver_piece_cb		 piece;
	int				 checked;	/* the head was seen */
	int				 taken;		/* its body goes to piece */
	int				 stopped;	/* piece said stop */
	size_t				 max;		/* its body's cap */
	int64_t				 length;	/* Content-Length, or -1 */
	uint64_t			 got;		/* given to piece */
	struct evbuffer			*errbody;	/* a refusal's body */
	/* https: what a TLS failure's message names. */
	int				 tls;
	char				*name;
	char				*host;
	char				*ca_file;
};

/* A refusal's body (its JSON message) kept from a stream, at most this. */
#define JSERVER_STREAM_ERRBODY	(64 * 1024)

/*
 * A DNS base for each loop jserver_request runs on (a process has one or
 * two), so a host name is resolved without blocking it.  jserver_call's
 * private loops go without: they block anyway.
 */
#define JSERVER_DNS_MAX	4
static struct {
	struct event_base	*base;
	struct evdns_base	*dns;
} jserver_dns[JSERVER_DNS_MAX];

static struct evdns_base *jserver_dns_for(struct event_base *, const char *);
static int	jserver_start(struct event_base *, struct evdns_base *,
		    const struct domain *, const char *, const char *,
		    const char *, size_t, int, uint64_t, jserver_head_cb,
		    jserver_piece_cb, size_t, jserver_cb, void *);
static int	jserver_check(struct jserver_req *, struct evhttp_request *);
static void	jserver_error_cb(enum evhttp_request_error, void *);
static void	jserver_deadline_cb(evutil_socket_t, short, void *);
static void	jserver_done(struct evhttp_request *, void *);
static void	jserver_chunk(struct evhttp_request *, void *);
static void	jserver_pull(struct jserver_req *);
static void	jserver_pull_read(struct evbuffer *, int, uint64_t);
static void	jserver_free_conn(evutil_socket_t, short, void *);
static void	jserver_sync_cb(struct jserver_reply *, void *);

static void
jserver_error_cb(enum evhttp_request_error e, void *arg)
{
	struct jserver_req	*jr = arg;

	jr->error = e;
	jr->failed = 1;
}

/*
 * The reply has not come whole within the call's timeout: the request
 * is cancelled (evhttp then calls no callback of its own) and answered.
 */
static void
jserver_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct jserver_req	*jr = arg;

	(void)fd;
	(void)events;
	jr->late = 1;
	evhttp_cancel_request(jr->req);
	jserver_done(NULL, jr);
}

/* Free the connection once its callback has returned. */
static void
jserver_free_conn(evutil_socket_t fd, short events, void *arg)
{
	evhttp_connection_free(arg);
}

static void
jserver_done(struct evhttp_request *req, void *arg)
{
	struct jserver_req	*jr = arg;
	struct jserver_reply	 r;
	struct evbuffer		*in;
	struct evkeyvalq	*hs;
	const char		*v;
	size_t			 len;

	memset(&r, 0, sizeof r);
	event_free(jr->deadline);
	if (req != NULL)
		r.status = evhttp_request_get_response_code(req);
	if (jr->stopped) {
		r.cause = xstrdup("stopped by the receiver");
		r.status = 0;
	} else if (jr->late) {
		xasprintf(&r.cause, "the server's reply did not come whole "
		    "within %d s", jr->timeout);
		r.status = 0;
	} else if (req == NULL || r.status == 0) {
		switch (jr->failed ? jr->error : EVREQ_HTTP_EOF) {
		case EVREQ_HTTP_TIMEOUT:
			r.cause = xstrdup("the server did not answer in time");
			break;
		case EVREQ_HTTP_DATA_TOO_LONG:
			xasprintf(&r.cause, "the reply is over %zu MiB",
			    jr->max / (1024 * 1024));
			break;
		case EVREQ_HTTP_INVALID_HEADER:
			/* evhttp says so of headers over its cap too. */
			xasprintf(&r.cause, "the reply is not HTTP, or its "
			    "headers are over %d KiB", JSERVER_HEADERS_MAX /
			    1024);
			break;
		default:
			r.cause = xstrdup("connection refused or closed");
			r.closed = 1;
			break;
		}
		r.status = 0;
	} else {
		hs = evhttp_request_get_input_headers(req);
		if ((v = evhttp_find_header(hs, "Location")) != NULL)
			r.location = xstrndup(v, 1024);
		/* JupyterHub, its proxy's routes and its users' servers say so. */
		r.hub = evhttp_find_header(hs, "X-JupyterHub-Version") != NULL;
		in = jr->errbody != NULL ? jr->errbody :
		    evhttp_request_get_input_buffer(req);
		len = evbuffer_get_length(in);
		r.body = xmalloc(len + 1);
		evbuffer_remove(in, r.body, len);
		r.body[len] = '\0';
		r.len = len;
	}
	/* No reply over https: TLS may be why (said before the rest). */
	if (r.status == 0 && jr->tls && !jr->stopped && (v =
	    jserver_tls_failure(evhttp_connection_get_bufferevent(jr->conn),
	    jr->name, jr->host, jr->ca_file, jr->late, &r.untrusted)) !=
	    NULL) {
		free(r.cause);
		r.cause = (char *)v;
		r.closed = 0;
	} else if (r.closed && jr->tls && !jr->stopped && (v =
	    jserver_tls_closed(evhttp_connection_get_bufferevent(jr->conn),
	    jr->name)) != NULL) {
		/* Still closed: a call that retries may yet go through. */
		free(r.cause);
		r.cause = (char *)v;
	}
	if (jr->errbody != NULL)
		evbuffer_free(jr->errbody);
	jr->cb(&r, jr->arg);
	jserver_reply_clear(&r);
	event_base_once(jr->base, -1, EV_TIMEOUT, jserver_free_conn,
	    jr->conn, NULL);
	free(jr->name);
	free(jr->host);
	free(jr->ca_file);
	free(jr);
}

/*
 * A stream's first piece: its head, which the caller may refuse (a 206
 * not of the range asked).  A 200 or 206 taken goes to piece, anything
 * else is a refusal.  Content-Length is noted for jserver_pull.
 */
static int
jserver_check(struct jserver_req *jr, struct evhttp_request *req)
{
	struct evkeyvalq	*hs = evhttp_request_get_input_headers(req);
	struct jserver_head	 h;
	const char		*v;
	char			*end;
	long long		 first, last, total;

	jr->checked = 1;
	if ((v = evhttp_find_header(hs, "Content-Length")) != NULL) {
		jr->length = strtoll(v, &end, 10);
		if (*v == '\0' || *end != '\0' || jr->length <= 0)
			jr->length = -1;
	} else
		jr->length = -1;
	memset(&h, 0, sizeof h);
	h.status = evhttp_request_get_response_code(req);
	h.first = h.total = -1;
	if (h.status != 200 && h.status != 206)
		return (0);
	/* "bytes FIRST-LAST/TOTAL" */
	if ((v = evhttp_find_header(hs, "Content-Range")) != NULL &&
	    sscanf(v, "bytes %lld-%lld/%lld", &first, &last, &total) == 3 &&
	    first >= 0 && last >= first && total > last) {
		h.first = first;
		h.total = total;
	}
	h.modified = evhttp_find_header(hs, "Last-Modified");
	if (jr->head != NULL && jr->head(&h, jr->arg) != 0) {
		jr->stopped = 1;
		return (-1);
	}
	/* A 206 nobody checked is not the body asked for. */
	jr->taken = h.status == 200 || jr->head != NULL;
	return (0);
}

/*
 * A piece of a stream's body has come (evhttp drains it after): a taken
 * one goes to the caller, a refusal's is kept for its message.  When the
 * caller says stop, the request is cancelled from the deadline's event,
 * outside evhttp's callback, and answered "stopped by the receiver".
 */
static void
jserver_chunk(struct evhttp_request *req, void *arg)
{
	struct jserver_req	*jr = arg;
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct evbuffer_iovec	 v[16];
	size_t			 len = evbuffer_get_length(in);
	int			 i, n;

	if (jr->stopped)
		return;
	if (!jr->checked && jserver_check(jr, req) != 0) {
		event_active(jr->deadline, EV_TIMEOUT, 1);
		return;
	}
	if (!jr->taken) {
		if (jr->errbody == NULL)
			jr->errbody = evbuffer_new();
		if (evbuffer_get_length(jr->errbody) < JSERVER_STREAM_ERRBODY)
			evbuffer_add_buffer(jr->errbody, in);
		return;
	}
	while (len > 0 && !jr->stopped) {
		n = evbuffer_peek(in, -1, NULL, v, 16);
		if (n > 16)
			n = 16;
		for (i = 0; i < n && !jr->stopped; i++) {
			jr->got += v[i].iov_len;
			if (jr->piece(v[i].iov_base, v[i].iov_len,
			    jr->arg) != 0)
				jr->stopped = 1;
		}
		for (i = 0; i < n; i++)
			evbuffer_drain(in, v[i].iov_len);
		len = evbuffer_get_length(in);
	}
	if (jr->stopped)
		event_active(jr->deadline, EV_TIMEOUT, 1);
	else if (jr->length > 0)
		jserver_pull(jr);
}

/*
 * libevent 2.1 reads at most 4 KiB of a socket a turn of the loop
 * (EVBUFFER_MAX_READ), a quarter of a million turns for a GiB, and one
 * TLS record (16 KiB) of an OpenSSL bufferevent: read up to
 * JSERVER_STREAM_READ more of the body now into the connection's input,
 * which evhttp takes on its next turn.  Some of the body is left unread
 * (a byte in the socket; over TLS a record's worth, jserver_tls_pull),
 * so that turn comes (the socket readable, or closed), and nothing past
 * the body is read.
 */
static void
jserver_pull(struct jserver_req *jr)
{
	struct bufferevent	*bev;
	struct evbuffer		*bin;
	uint64_t		 have, want, left;
	size_t			 before;
	int			 fd;

	bev = evhttp_connection_get_bufferevent(jr->conn);
	bin = bufferevent_get_input(bev);
	if ((fd = bufferevent_getfd(bev)) == -1)
		return;
	have = jr->got + evbuffer_get_length(bin);
	left = jr->tls ? JSERVER_TLS_RECORD : 1;
	if (have + left >= (uint64_t)jr->length)
		return;
	want = (uint64_t)jr->length - have - left;
	if (want > JSERVER_STREAM_READ)
		want = JSERVER_STREAM_READ;
	before = evbuffer_get_length(bin);
	if (jr->tls)
		jserver_tls_pull(bev, bin, want);
	else {
		/* As bufferevent's own read does: its input is frozen else. */
		evbuffer_unfreeze(bin, 0);
		jserver_pull_read(bin, fd, want);
		evbuffer_freeze(bin, 0);
	}
	/*
	 * evhttp's turn for what was read, from the loop (not from inside
	 * its callback): if the connection was cut right after it, the
	 * read that meets the end would fail the request without giving
	 * evhttp those bytes, up to a MiB lost to each cut a download
	 * resumes from (decision 092).
	 */
	if (evbuffer_get_length(bin) > before)
		bufferevent_trigger(bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
}

/* Up to want bytes of fd into bin, as many as are there now. */
static void
jserver_pull_read(struct evbuffer *bin, int fd, uint64_t want)
{
	struct evbuffer_iovec	 v;
	ssize_t			 n;

	while (want > 0) {
		if (evbuffer_reserve_space(bin, (ev_ssize_t)want, &v, 1) != 1)
			return;
		if (v.iov_len > want)
			v.iov_len = want;
		n = read(fd, v.iov_base, v.iov_len);
		if (n <= 0) {
			/* EAGAIN, an end or an error: evhttp's turn sees it. */
			v.iov_len = 0;
			evbuffer_commit_space(bin, &v, 1);
			return;
		}
		v.iov_len = (size_t)n;
		evbuffer_commit_space(bin, &v, 1);
		want -= (uint64_t)n;
	}
}

/* base's DNS base for host, NULL for an address (or none to be had). */
static struct evdns_base *
jserver_dns_for(struct event_base *base, const char *host)
{
	struct in6_addr	 a;
	int		 i;

	if (inet_pton(AF_INET, host, &a) == 1 ||
	    inet_pton(AF_INET6, host, &a) == 1)
		return (NULL);
	for (i = 0; i < JSERVER_DNS_MAX; i++) {
		if (jserver_dns[i].base == base)
			return (jserver_dns[i].dns);
	}
	for (i = 0; i < JSERVER_DNS_MAX; i++) {
		if (jserver_dns[i].base != NULL)
			continue;
		jserver_dns[i].base = base;
		/* Failing that (no resolv.conf), evhttp's blocking lookup. */
		jserver_dns[i].dns = evdns_base_new(base,
		    EVDNS_BASE_INITIALIZE_NAMESERVERS |
		    EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		return (jserver_dns[i].dns);
	}
	return (NULL);
}

/* A loop of jserver_request's callers is to be freed: its DNS base too. */
void
jserver_forget(struct event_base *base)
{
	int	i;

	for (i = 0; i < JSERVER_DNS_MAX; i++) {
		if (jserver_dns[i].base != base)
			continue;
		if (jserver_dns[i].dns != NULL)
			evdns_base_free(jserver_dns[i].dns, 0);
		jserver_dns[i].base = NULL;
		jserver_dns[i].dns = NULL;
	}
}

/*
 * Start method on path (relative to the domain's base, or from the
 * host's root when it starts with /)
 * with an optional JSON body; cb gets the reply on base's loop.
 */
int
jserver_request(struct event_base *base, const struct domain *d,
    const char *method, const char *path, const char *body, size_t len,
    int timeout, jserver_cb cb, void *arg)
{
	return (jserver_start(base, jserver_dns_for(base, d->host), d, method,
	    path, body, len, timeout, 0, NULL, NULL, 0, cb, arg));
}

/*
 * GET path with its body streamed, from byte from (a Range past 0):
 * head, if not NULL, sees a 200's or 206's status and headers first
 * (non-zero stops the request; without head only a 200 is taken); piece
 * gets each part of the body taken as it arrives (non-zero stops the
 * request), cb the reply at the end (no body but a refusal's, kept as
 * usual; the caller counts).  A body over max is refused as
 * JSERVER_BODY_MAX is elsewhere.
 */
int
jserver_stream(struct event_base *base, const struct domain *d,
    const char *path, uint64_t from, size_t max, int timeout,
    jserver_head_cb head, jserver_piece_cb piece, jserver_cb cb, void *arg)
{
	return (jserver_start(base, jserver_dns_for(base, d->host), d, "GET",
	    path, NULL, 0, timeout, from, head, piece, max, cb, arg));
}

static int
jserver_start(struct event_base *base, struct evdns_base *dns,
    const struct domain *d, const char *method, const char *path,
    const char *body, size_t len, int timeout, uint64_t from,
    jserver_head_cb head, jserver_piece_cb piece, size_t max, jserver_cb cb,
    void *arg)
{
	struct jserver_req		*jr;
	struct evhttp_request		*req;
	struct bufferevent		*bev;
	struct evkeyvalq		*h;
	enum evhttp_cmd_type		 type;
	struct timeval			 tv;
	char				*uri, *auth, host[300];

	if (strcmp(method, "GET") == 0)
		type = EVHTTP_REQ_GET;
	else if (strcmp(method, "POST") == 0)
		type = EVHTTP_REQ_POST;
	else if (strcmp(method, "PUT") == 0)
		type = EVHTTP_REQ_PUT;
	else if (strcmp(method, "PATCH") == 0)
		type = EVHTTP_REQ_PATCH;
	else if (strcmp(method, "DELETE") == 0)
		type = EVHTTP_REQ_DELETE;
	else
		return (-1);

	jr = xcalloc(1, sizeof *jr);
	jr->base = base;
	jr->cb = cb;
	jr->arg = arg;
	jr->head = head;
	jr->piece = piece;
	jr->max = piece != NULL ? max : JSERVER_BODY_MAX;
	if (d->tls) {
		if ((bev = jserver_tls_bufferevent(base, d)) == NULL) {
			free(jr);
			return (-1);
		}
		jr->conn = evhttp_connection_base_bufferevent_new(base, dns,
		    bev, d->host, (uint16_t)d->port);
		if (jr->conn == NULL)
			bufferevent_free(bev);
	} else
		jr->conn = evhttp_connection_base_new(base, dns, d->host,
		    (uint16_t)d->port);
	if (jr->conn == NULL) {
		free(jr);
		return (-1);
	}
	if (d->tls) {
		jr->tls = 1;
		jr->name = xstrdup(d->name);
		jr->host = xstrdup(d->host);
		if (d->ca_file != NULL)
			jr->ca_file = xstrdup(d->ca_file);
	}
	evhttp_connection_set_timeout(jr->conn, timeout);
	evhttp_connection_set_max_headers_size(jr->conn, JSERVER_HEADERS_MAX);
	evhttp_connection_set_max_body_size(jr->conn, (ev_ssize_t)jr->max);
	evhttp_connection_set_retries(jr->conn, 0);
	jr->req = req = evhttp_request_new(jserver_done, jr);
	if (piece != NULL) {
		evhttp_request_set_chunked_cb(req, jserver_chunk);
		/* Fewer, larger pieces than evhttp's 16 KiB reads. */
		bufferevent_set_max_single_read(
		    evhttp_connection_get_bufferevent(jr->conn),
		    JSERVER_STREAM_READ);
	}
	evhttp_request_set_error_cb(req, jserver_error_cb);
	h = evhttp_request_get_output_headers(req);
	snprintf(host, sizeof host, "%s:%d", d->host, d->port);
	evhttp_add_header(h, "Host", host);
	xasprintf(&auth, "token %s", d->token);
	evhttp_add_header(h, "Authorization", auth);
	explicit_bzero(auth, strlen(auth));
	free(auth);
	evhttp_add_header(h, "Accept", "application/json");
	evhttp_add_header(h, "Connection", "close");
	if (from > 0) {
		snprintf(host, sizeof host, "bytes=%llu-",
		    (unsigned long long)from);
		evhttp_add_header(h, "Range", host);
	}
	if (body != NULL) {
		/* evhttp adds it only for POST and PUT; PATCH needs it too. */
		snprintf(host, sizeof host, "%zu", len);
		evhttp_add_header(h, "Content-Length", host);
		evhttp_add_header(h, "Content-Type", "application/json");
		evbuffer_add(evhttp_request_get_output_buffer(req), body, len);
	}
	jr->timeout = timeout;
	tv.tv_sec = timeout;
	tv.tv_usec = 0;
	jr->deadline = evtimer_new(base, jserver_deadline_cb, jr);
	evtimer_add(jr->deadline, &tv);
	/* A path from / is the host's (a hub's API), not the server's. */
	if (*path == '/')
		uri = xstrdup(path);
	else
		xasprintf(&uri, "%s%s", d->base, path);
	if (evhttp_make_request(jr->conn, req, type, uri) != 0) {
		free(uri);
		/* evhttp freed req. */
		event_free(jr->deadline);
		evhttp_connection_free(jr->conn);
		free(jr->name);
		free(jr->host);
		free(jr->ca_file);
		free(jr);
		return (-1);
	}
	free(uri);
	return (0);
}

struct jserver_sync {
	struct jserver_reply	*out;
	int			 done;
};

static void
jserver_sync_cb(struct jserver_reply *r, void *arg)
{
	struct jserver_sync	*s = arg;

	*s->out = *r;
	memset(r, 0, sizeof *r);	/* moved to out */
	s->done = 1;
}

/* Blocking: the reply in *out (clear it with jserver_reply_clear). */
int
jserver_call(const struct domain *d, const char *method, const char *path,
    const char *body, size_t len, int timeout, struct jserver_reply *out)
{
	struct event_base	*base;
	struct jserver_sync	 s;

	memset(out, 0, sizeof *out);
	if ((base = event_base_new()) == NULL) {
		out->cause = xstrdup("event_base_new failed");
		return (-1);
	}
	s.out = out;
	s.done = 0;
	if (jserver_start(base, NULL, d, method, path, body, len, timeout,
	    0, NULL, NULL, 0, jserver_sync_cb, &s) != 0) {
		out->cause = xstrdup("cannot start the request");
		event_base_free(base);
		return (-1);
	}
	while (!s.done && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	/* Run the deferred connection free. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_free(base);
	return (s.done ? 0 : -1);
}

void
jserver_reply_clear(struct jserver_reply *r)
{
	free(r->body);
	free(r->cause);
	free(r->location);
	memset(r, 0, sizeof *r);
}

/* The body as JSON (any type); NULL and a cause if it is not JSON. */
struct json_object *
jserver_reply_json(const struct jserver_reply *r, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*o;

	if (r->body == NULL || r->len == 0 || r->len > INT32_MAX) {
		xasprintf(cause, "the server's reply is empty");
		return (NULL);
	}
	tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
	o = json_tokener_parse_ex(tok, r->body, (int)r->len);
	if (o == NULL || (size_t)tok->char_offset != r->len) {
		xasprintf(cause, "the server's reply is not JSON");
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return (o);
}

/* What a failed reply says, for an error message; caller frees. */
char *
jserver_reply_message(const struct jserver_reply *r)
{
	struct json_object	*o, *v;
	char			*why, *msg = NULL;

	if (r->status == 0) {
		xasprintf(&msg, "%s", r->cause != NULL ? r->cause :
		    "no answer");
		return (msg);
	}
	if ((o = jserver_reply_json(r, &why)) == NULL)
		free(why);
	else if (json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "message", &v) &&
	    json_object_is_type(v, json_type_string))
		xasprintf(&msg, "HTTP %d: %.200s", r->status,
		    json_object_get_string(v));
	json_object_put(o);
	if (msg == NULL)
		xasprintf(&msg, "HTTP %d", r->status);
	return (msg);
}
