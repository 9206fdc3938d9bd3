/* SPDX-License-Identifier: ISC */
/*
 * web.h: runtimed-web, the live notebook page (docs/decisions/025).  A
 * client peer of the daemon like a worker: it reaches the daemon only
 * through proto/ frames, on its fd 3 (the daemon's link, which says
 * VIEW_READY) and one socket connection per notebook on view.  It serves
 * HTTP on 127.0.0.1 with libevent's evhttp; the code that parses
 * untrusted HTTP lives in this process alone.
 */

#ifndef WEB_H
#define WEB_H

#include <sys/types.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "common.h"

/* Caps on what a browser may send (evhttp checks them, and we do). */
#define WEB_MAX_HEADERS		(8 * 1024)
#define WEB_MAX_BODY		(64 * 1024)
#define WEB_COMMENT_MAX		(16 * 1024)	/* bytes of a comment */
#define WEB_MAX_STREAMS		64		/* open pages at once */
#define WEB_IDLE_SECS		120	/* RUNTIMED_WEB_IDLE_SECS overrides */
#define WEB_PING_SECS		15	/* SSE keepalive comment */
#define WEB_STREAM_BACKLOG	(4 * 1024 * 1024) /* a page's unread stream */
#define WEB_ACCEPT_PAUSE_MS	1000	/* no accept after EMFILE */
#define WEB_REQUEST_SECS	10	/* a request must come whole */
#define WEB_ACCEPT_LOG_SECS	10	/* at most one log line per */
#define WEB_SECRET_LEN		64	/* hex characters */

/* Append a string literal. */
#define WEB_ADD(b, s)	evbuffer_add((b), (s), sizeof (s) - 1)

/* web.c */
extern struct event_base	*web_base;
extern char			*web_socket_path;
extern int			 web_port;
extern char			 web_secret[WEB_SECRET_LEN + 1];
/* "/v" and 16 hex of the secret's SHA-256: every page's path starts so. */
#define WEB_PREFIX_LEN	18
extern char			 web_prefix[WEB_PREFIX_LEN + 1];
void	web_activity(void);
void	web_list_rooms(void (*)(const msgpack_object *, const char *,
	    void *), void *);

/* web-http.c */
int	web_http_start(char **);
void	web_http_stop(void);
void	web_http_tick(void);
void	web_http_closecb(struct evhttp_request *,
	    void (*)(struct evhttp_connection *, void *), void *);
int	web_http_detached(struct evhttp_request *);
int	web_http_host_ok(const char *);
void	web_http_headers(struct evhttp_request *, const char *);
void	web_http_error(struct evhttp_request *, int, const char *);

/* web-form.c: what we parse of a request ourselves (fuzz/fuzz-web.c). */
char	*web_form_get(const char *, size_t, const char *);
char	*web_form_cookie(const char *, const char *);
int	 web_form_id_ok(const char *);
int	 web_form_equal(const char *, const char *);

/* web-ansi.c */
void	web_ansi_html(struct evbuffer *, const char *, size_t);
void	web_ansi_escape(struct evbuffer *, const char *, size_t, int);

/* web-render.c */
void	web_render_cell(struct evbuffer *, const msgpack_object *,
	    struct json_object *);
void	web_render_conflicts(struct evbuffer *, const msgpack_object *,
	    const msgpack_object *);
struct json_object *web_render_threads(const msgpack_object *);
void	web_render_batches(struct evbuffer *, const msgpack_object *);

/* web-page.c: the page, its script and its style, served as they are. */
void	web_page_html(struct evbuffer *, const char *, const char *);
extern const char	web_page_js[];
extern const char	web_page_css[];

/* web-token.c: the per-page CSRF token. */
char	*web_token_make(const char *);
int	 web_token_check(const char *, const char *);

/*
 * A write's fields, checked by web-http.c (which names the bounds);
 * web_nb_action takes them over.
 */
struct web_post {
	char	*cell_id;
	char	*text;		/* a comment's text, or a cell's source */
	char	*version;	/* edit: the cell's version it was made on */
	char	*take;		/* resolve: room, disk or both */
	char	*cell_type;	/* insert: code or markdown */
	char	*after;		/* insert: a cell id, TOP or BOTTOM */
	char	*batch_id;	/* revert: a batch's number */
};

/* web-nb.c: one notebook on view, its daemon connection, its pages. */
struct web_nb;
struct web_nb	*web_nb_find(const char *, int);
void		 web_nb_stream(struct web_nb *, struct evhttp_request *,
		     const char *);
void		 web_nb_action(struct web_nb *, struct evhttp_request *,
		     const char *, struct web_post *);
void		 web_post_free(struct web_post *);
u_int		 web_nb_streams(void);
void		 web_nb_ping(void);

#endif
