/* SPDX-License-Identifier: ISC */
/*
 * domain.h: remote domains (domain.c), Jupyter Servers named in
 * $XDG_CONFIG_HOME/runtimed/domains.json, and the HTTP client to them
 * (jserver.c), over TLS for an https domain (jserver-tls.c).  Shared by runtimectl (which
 * checks them), the daemon (contents API) and runtimed-agent-remote
 * (kernels API and the kernel WebSocket).
 *
 * A token is read from its file when the domain is loaded, kept in
 * memory and sent only in the Authorization header: it is never logged,
 * returned or put in an error message.
 */

#ifndef DOMAIN_H
#define DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <json-c/json.h>

/* The name that means this machine's daemon. */
#define DOMAIN_LOCAL		"local"
#define DOMAIN_NAME_MAX		64
/* domains.json and a token file are small; past this they are refused. */
#define DOMAIN_CONFIG_MAX	(64 * 1024)
#define DOMAIN_TOKEN_MAX	4096
/* A client certificate's private key file (PEM) is refused past this. */
#define DOMAIN_KEY_MAX		(64 * 1024)

/* A reply body from a server is refused past this (contents of a file). */
#define JSERVER_BODY_MAX	(96 * 1024 * 1024)
/* A reply's headers from a server are refused past this. */
#define JSERVER_HEADERS_MAX	(64 * 1024)
/* A streamed reply (jserver_stream) is read at most this much at a time. */
#define JSERVER_STREAM_READ	(1024 * 1024)
/* The most plaintext a TLS record holds (RFC 8446 5.1, RFC 5246 6.2.1). */
#define JSERVER_TLS_RECORD	16384
/* Seconds a REST call may take, its whole reply included. */
#define JSERVER_TIMEOUT		20

struct domain {
	char		*name;
	char		*url;		/* as configured, ending in / */
	char		*host;
	int		 port;
	char		*base;		/* path prefix, starts and ends with / */
	char		*token_file;
	char		*token;		/* never logged or returned */
	int		 tls;		/* an https url */
	char		*ca_file;	/* the only CA trusted, or NULL */
	char		*cert_file;	/* our client certificate, or NULL */
	char		*key_file;	/* its key (0600), with cert_file */
	struct ssl_ctx_st *tls_ctx;	/* https: the verifying context */
};

/* What a server says about who we are (domain_whoami). */
struct domain_identity {
	int		 reachable;
	int		 authenticated;
	char		*principal;	/* NULL unless authenticated */
	char		*evidence;	/* "api/me" or "token accepted" */
	char		*version;	/* the server's, from /api */
	char		*problem;	/* why not, with the fix */
	int		 untrusted;	/* its TLS certificate was refused */
};

/* domain.c */
char		*domain_config_path(void);
int		 domain_valid_name(const char *);
struct json_object *domain_config_load(char **);
struct domain	*domain_load(const char *, char **);
void		 domain_free(struct domain *);
int		 domain_reload_token(struct domain *);
int		 domain_whoami(const struct domain *, struct domain_identity *);
typedef void (*domain_whoami_cb)(struct domain_identity *, void *);
int		 domain_whoami_start(struct event_base *, const struct domain *,
		     domain_whoami_cb, void *);
void		 domain_identity_clear(struct domain_identity *);
char		*domain_encode_path(const char *);
char		*domain_contents_uri(const char *, const char *);

/* jserver.c: REST over evhttp. */
struct jserver_reply {
	int		 status;	/* HTTP status, 0 if none came */
	char		*body;		/* NUL-terminated, caller frees */
	size_t		 len;
	char		*cause;		/* when status is 0 */
	char		*location;	/* a redirect's Location, or NULL */
	int		 hub;		/* X-JupyterHub-Version was sent */
	int		 untrusted;	/* status 0: TLS certificate refused */
	int		 closed;	/* status 0: refused, reset or closed */
};
/* A streamed reply's status and headers, before its first piece. */
struct jserver_head {
	int		 status;	/* 200 or 206 */
	int64_t		 first;		/* a 206's Content-Range, else -1 */
	int64_t		 total;		/* its size of the whole, else -1 */
	const char	*modified;	/* Last-Modified, or NULL */
};
typedef void (*jserver_cb)(struct jserver_reply *, void *);
typedef int (*jserver_head_cb)(const struct jserver_head *, void *);
typedef int (*jserver_piece_cb)(const void *, size_t, void *);
int		 jserver_request(struct event_base *, const struct domain *,
		     const char *, const char *, const char *, size_t, int,
		     jserver_cb, void *);
int		 jserver_stream(struct event_base *, const struct domain *,
		     const char *, uint64_t, size_t, int, jserver_head_cb,
		     jserver_piece_cb, jserver_cb, void *);
void		 jserver_forget(struct event_base *);
int		 jserver_call(const struct domain *, const char *,
		     const char *, const char *, size_t, int,
		     struct jserver_reply *);
void		 jserver_reply_clear(struct jserver_reply *);
struct json_object *jserver_reply_json(const struct jserver_reply *,
		     char **);
char		*jserver_reply_message(const struct jserver_reply *);

/* jserver-tls.c: https domains. */
struct bufferevent;
struct evbuffer;
int		 jserver_tls_setup(struct domain *, const char *, char **);
void		 jserver_tls_free(struct domain *);
struct bufferevent *jserver_tls_bufferevent(struct event_base *,
		     const struct domain *);
char		*jserver_tls_failure(struct bufferevent *, const char *,
		     const char *, const char *, int, int *);
char		*jserver_tls_closed(struct bufferevent *, const char *);
void		 jserver_tls_pull(struct bufferevent *, struct evbuffer *,
		     uint64_t);

#endif
