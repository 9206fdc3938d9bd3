/* SPDX-License-Identifier: ISC */
/*
 * domain.c: remote domains from domains.json,
 *
 *	{"NAME": {"url": "https://host:port/base/", "token_file": "PATH",
 *	    "ca_file": "PATH", "cert_file": "PATH", "key_file": "PATH"}}
 *
 * in $RUNTIMED_CONFIG_DIR, else $XDG_CONFIG_HOME/runtimed, else
 * ~/.config/runtimed.  A token file must be a regular file of ours that
 * nobody else can read (0600), like ssh's keys: otherwise it is refused
 * and the message says the chmod.  An https url is spoken over TLS,
 * verified against the system's CAs or only the optional ca_file's
 * (jserver-tls.c), presenting the optional client certificate
 * (cert_file, and key_file, which must be private as a token file is);
 * relative files are the config directory's.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "common.h"
#include "domain.h"

static char	*domain_read_small(const char *, size_t, int, char **);
static int	 domain_parse_url(struct domain *, const char *, char **);
static char	*domain_token_path(const char *);
static char	*domain_read_token(const char *, char **);
static int	 domain_load_cert(struct domain *, struct json_object *,
		     const char *, char **, char **);
static void	 domain_whoami_step(struct jserver_reply *, void *);
static void	 domain_whoami_sync_cb(struct domain_identity *, void *);
struct domain_whoami_op;
static char	*domain_hub_user_path(const struct domain *);
static char	*domain_hub_server_path(const struct domain *);
static void	 domain_whoami_server(struct domain_whoami_op *);

/* domain_whoami_start's three requests in turn. */
struct domain_whoami_op {
	struct event_base	*base;
	const struct domain	*d;
	int			 step;
	int			 status_ok;
	int			 hub;		/* a JupyterHub user server */
	struct domain_identity	 id;
	domain_whoami_cb	 cb;
	void			*arg;
};

/* Where domains.json lives; caller frees. */
char *
domain_config_path(void)
{
	const char	*dir, *home;
	char		*path;

	if ((dir = getenv("RUNTIMED_CONFIG_DIR")) != NULL && *dir != '\0')
		xasprintf(&path, "%s/domains.json", dir);
	else if ((dir = getenv("XDG_CONFIG_HOME")) != NULL && *dir == '/')
		xasprintf(&path, "%s/runtimed/domains.json", dir);
	else {
		if ((home = getenv("HOME")) == NULL || *home == '\0')
			home = "/";
		xasprintf(&path, "%s/.config/runtimed/domains.json", home);
	}
	return (path);
}

/* A domain name: 1..64 of [A-Za-z0-9._-], not "local". */
int
domain_valid_name(const char *name)
{
	size_t	i, len = strlen(name);

	if (len == 0 || len > DOMAIN_NAME_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((u_char)name[i]) && strchr("._-", name[i]) == NULL)
			return (0);
	}
	return (1);
}

/*
 * Read a small file whole: refused past max bytes, and with private set
 * unless it is a regular file of ours that only we can read.
 */
static char *
domain_read_small(const char *path, size_t max, int private, char **cause)
{
	struct stat	 sb;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	/* Never waits on a FIFO or device put there (util_open_regular). */
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		xasprintf(cause, "%s is a symbolic link; point at the file "
		    "itself", path);
		return (NULL);
	}
	if ((fd = util_open_regular(path, UTIL_NOFOLLOW, &sb, cause)) == -1)
		return (NULL);
	if (private && sb.st_uid != getuid()) {
		xasprintf(cause, "%s is not yours (uid %ld): chown %ld %s",
		    path, (long)sb.st_uid, (long)getuid(), path);
		close(fd);
		return (NULL);
	}
	if (private && (sb.st_mode & 077) != 0) {
		xasprintf(cause, "%s can be read by others (mode %04o): "
		    "chmod 600 %s", path, (u_int)(sb.st_mode & 07777), path);
		close(fd);
		return (NULL);
	}
	if ((size_t)sb.st_size > max) {
		xasprintf(cause, "%s is over %zu bytes", path, max);
		close(fd);
		return (NULL);
	}
	buf = xmalloc(max + 1);
	while (off < max) {
		n = read(fd, buf + off, max - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "cannot read %s: %s", path,
			    strerror(errno));
			free(buf);
			close(fd);
			return (NULL);
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	if (strlen(buf) != off) {
		xasprintf(cause, "%s holds a NUL byte", path);
		if (private)
			explicit_bzero(buf, off);
		free(buf);
		return (NULL);
	}
	return (buf);
}

/*
 * domains.json as a JSON object, {} when there is no file; NULL and a
 * cause when it is there but unreadable or not an object.
 */
struct json_object *
domain_config_load(char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*obj;
	char			*path, *text, *why;

	path = domain_config_path();
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		free(path);
		return (json_object_new_object());
	}
	if ((text = domain_read_small(path, DOMAIN_CONFIG_MAX, 0,
	    &why)) == NULL) {
		*cause = why;
		free(path);
		return (NULL);
	}
	tok = json_tokener_new();
	obj = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (obj == NULL || tok->char_offset != (int)strlen(text) ||
	    !json_object_is_type(obj, json_type_object)) {
		xasprintf(cause, "%s is not a JSON object (%s); see "
		    "runtimectl(1), DOMAINS", path, obj == NULL ?
		    json_tokener_error_desc(json_tokener_get_error(tok)) :
		    "trailing bytes or another type");
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	free(text);
	free(path);
	return (obj);
}

/* "http[s]://host[:port][/base/]" into d's host, port and base. */
static int
domain_parse_url(struct domain *d, const char *url, char **cause)
{
	const char	*p, *slash, *colon;
	char		*end;
	long		 port = 80;
	size_t		 hlen;

	if (strncmp(url, "https://", 8) == 0) {
		d->tls = 1;
		port = 443;
		p = url + 8;
	} else if (strncmp(url, "http://", 7) == 0)
		p = url + 7;
	else {
		xasprintf(cause, "domain %s: url must start with https:// or "
		    "http://", d->name);
		return (-1);
	}
	if ((slash = strchr(p, '/')) == NULL)
		slash = p + strlen(p);
	colon = memchr(p, ':', (size_t)(slash - p));
	hlen = (size_t)((colon != NULL ? colon : slash) - p);
	if (hlen == 0 || hlen > 253 || memchr(p, '@', (size_t)(slash - p))) {
		xasprintf(cause, "domain %s: url has no host (or has user "
		    "info; put the token in token_file)", d->name);
		return (-1);
	}
	if (colon != NULL) {
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (end != slash || errno != 0 || port < 1 || port > 65535) {
			xasprintf(cause, "domain %s: bad port in url",
			    d->name);
			return (-1);
		}
	}
	if (strpbrk(slash, "?#\"\\ \t\r\n") != NULL) {
		xasprintf(cause, "domain %s: url has a query, fragment or "
		    "space", d->name);
		return (-1);
	}
	d->host = xstrndup(p, hlen);
	d->port = (int)port;
	if (*slash == '\0')
		d->base = xstrdup("/");
	else if (slash[strlen(slash) - 1] == '/')
		d->base = xstrdup(slash);
	else
		xasprintf(&d->base, "%s/", slash);
	xasprintf(&d->url, "%s://%s:%d%s", d->tls ? "https" : "http",
	    d->host, d->port, d->base);
	return (0);
}

/* A token_file, ca_file, cert_file or key_file relative to the config
 * directory; caller frees. */
static char *
domain_token_path(const char *file)
{
	char	*cfg, *slash, *path;

	if (*file == '/')
		return (xstrdup(file));
	cfg = domain_config_path();
	if ((slash = strrchr(cfg, '/')) != NULL)
		*slash = '\0';
	xasprintf(&path, "%s/%s", cfg, file);
	free(cfg);
	return (path);
}

/* The token: the file's first line, printable ASCII only. */
static char *
domain_read_token(const char *path, char **cause)
{
	char	*t;
	size_t	 len, i;

	if ((t = domain_read_small(path, DOMAIN_TOKEN_MAX, 1, cause)) == NULL)
		return (NULL);
	len = strlen(t);
	while (len > 0 && isspace((u_char)t[len - 1]))
		t[--len] = '\0';
	if (len == 0) {
		xasprintf(cause, "the token file %s is empty", path);
		free(t);
		return (NULL);
	}
	for (i = 0; i < len; i++) {
		if (t[i] <= ' ' || t[i] > '~') {
			xasprintf(cause, "the token file %s holds more than "
			    "one word (a token is one line of printable "
			    "ASCII)", path);
			explicit_bzero(t, len);
			free(t);
			return (NULL);
		}
	}
	return (t);
}

/*
 * Read d's token file again: a token rotated there (a new one for the
 * same user) is used from the next call on.  A file that no longer
 * passes the checks keeps the token in memory (the call then says what
 * the server thinks of it); 0 if the token is the file's.
 */
int
domain_reload_token(struct domain *d)
{
	char	*t, *cause;

	if ((t = domain_read_token(d->token_file, &cause)) == NULL) {
		log_warnx("domain %s: %s; the token read before is used",
		    d->name, cause);
		free(cause);
		return (-1);
	}
	if (strcmp(t, d->token) != 0)
		log_info("domain %s: a new token in %s", d->name,
		    d->token_file);
	explicit_bzero(d->token, strlen(d->token));
	free(d->token);
	d->token = t;
	return (0);
}

/*
 * A client certificate: "cert_file" and "key_file" go together, https
 * only.  The key is read here as a token is (a regular file of ours
 * nobody else can read) and handed over in *key, which the caller wipes:
 * OpenSSL never opens it by name, so what is checked is what is read.
 */
static int
domain_load_cert(struct domain *d, struct json_object *o, const char *path,
    char **key, char **cause)
{
	struct json_object	*cert, *kf;
	char			*why;
	int			 has_cert, has_key;

	has_cert = json_object_object_get_ex(o, "cert_file", &cert);
	has_key = json_object_object_get_ex(o, "key_file", &kf);
	if (!has_cert && !has_key)
		return (0);
	if (!d->tls) {
		xasprintf(cause, "domain %s in %s: \"cert_file\" and "
		    "\"key_file\" are for an https:// url", d->name, path);
		return (-1);
	}
	if (!has_cert || !has_key ||
	    !json_object_is_type(cert, json_type_string) ||
	    json_object_get_string_len(cert) == 0 ||
	    !json_object_is_type(kf, json_type_string) ||
	    json_object_get_string_len(kf) == 0) {
		xasprintf(cause, "domain %s in %s: a client certificate needs "
		    "both \"cert_file\" (its PEM certificate) and \"key_file\" "
		    "(its PEM private key, mode 0600)", d->name, path);
		return (-1);
	}
	d->cert_file = domain_token_path(json_object_get_string(cert));
	d->key_file = domain_token_path(json_object_get_string(kf));
	if ((*key = domain_read_small(d->key_file, DOMAIN_KEY_MAX, 1,
	    &why)) == NULL) {
		xasprintf(cause, "domain %s: key_file: %s", d->name, why);
		free(why);
		return (-1);
	}
	return (0);
}

/* The named domain, its token read and checked; NULL and a cause if not. */
struct domain *
domain_load(const char *name, char **cause)
{
	struct json_object	*cfg, *o, *v;
	struct domain		*d;
	char			*path, *key = NULL;
	int			 rc;

	if (!domain_valid_name(name) || strcmp(name, DOMAIN_LOCAL) == 0) {
		xasprintf(cause, "domain must be 1 to %d of A-Z a-z 0-9 . _ - "
		    "(and not %s)", DOMAIN_NAME_MAX, DOMAIN_LOCAL);
		return (NULL);
	}
	if ((cfg = domain_config_load(cause)) == NULL)
		return (NULL);
	path = domain_config_path();
	if (!json_object_object_get_ex(cfg, name, &o)) {
		xasprintf(cause, "no domain %s in %s (runtimectl domains lists "
		    "them)", name, path);
		goto fail;
	}
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "url", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		xasprintf(cause, "domain %s in %s needs \"url\": "
		    "\"http://host:port/\"", name, path);
		goto fail;
	}
	d = xcalloc(1, sizeof *d);
	d->name = xstrdup(name);
	if (domain_parse_url(d, json_object_get_string(v), cause) != 0)
		goto fail_d;
	if (!json_object_object_get_ex(o, "token_file", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0) {
		xasprintf(cause, "domain %s in %s needs \"token_file\": the "
		    "path of a 0600 file holding the server's token", name,
		    path);
		goto fail_d;
	}
	d->token_file = domain_token_path(json_object_get_string(v));
	if ((d->token = domain_read_token(d->token_file, cause)) == NULL)
		goto fail_d;
	if (json_object_object_get_ex(o, "ca_file", &v)) {
		if (!d->tls) {
			xasprintf(cause, "domain %s in %s: \"ca_file\" is for "
			    "an https:// url", name, path);
			goto fail_d;
		}
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) == 0) {
			xasprintf(cause, "domain %s in %s: \"ca_file\" must be "
			    "the path of a CA's PEM certificate", name, path);
			goto fail_d;
		}
		d->ca_file = domain_token_path(json_object_get_string(v));
	}
	if (domain_load_cert(d, o, path, &key, cause) != 0)
		goto fail_d;
	rc = d->tls ? jserver_tls_setup(d, key, cause) : 0;
	if (key != NULL) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
	if (rc != 0)
		goto fail_d;
	json_object_put(cfg);
	free(path);
	return (d);

fail_d:
	domain_free(d);
fail:
	json_object_put(cfg);
	free(path);
	return (NULL);
}

void
domain_free(struct domain *d)
{
	if (d == NULL)
		return;
	if (d->token != NULL) {
		explicit_bzero(d->token, strlen(d->token));
		free(d->token);
	}
	free(d->name);
	free(d->url);
	free(d->host);
	free(d->base);
	free(d->token_file);
	free(d->ca_file);
	free(d->cert_file);
	free(d->key_file);
	jserver_tls_free(d);
	free(d);
}

/*
 * /hub/api/user of the hub whose user server d is (its base ends in
 * user/NAME/); NULL if d's base is not such.  Caller frees.
 */
static char *
domain_hub_user_path(const struct domain *d)
{
	const char	*b = d->base, *p;
	size_t		 len = strlen(b);
	char		*path;

	if (len < 8 || b[len - 1] != '/')
		return (NULL);
	for (p = b + len - 2; p > b && *p != '/'; p--)
		;
	/* p is the / before NAME: "user" must come before it. */
	if (p - b < 5 || strncmp(p - 5, "/user", 5) != 0)
		return (NULL);
	xasprintf(&path, "%.*shub/api/user", (int)(p - 5 - b + 1), b);
	return (path);
}

/* /hub/api/users/NAME/server of d's hub (d at user/NAME/), or NULL. */
static char *
domain_hub_server_path(const struct domain *d)
{
	char	*user, *path, *end;
	size_t	 n;

	if ((user = domain_hub_user_path(d)) == NULL)
		return (NULL);
	/* user is PREFIX/hub/api/user; d->base is PREFIX/user/NAME/. */
	n = strlen(user) - strlen("hub/api/user");
	end = d->base + n + strlen("user/");
	xasprintf(&path, "%.*shub/api/users/%.*s/server", (int)n, user,
	    (int)(strlen(end) - 1), end);
	free(user);
	return (path);
}

/*
 * A server without /api/me and no hub's word: one that took the token
 * serves one user, so the principal is the server itself (its host,
 * port and base), whichever of its tokens is used: a rotated token
 * keeps every room (issue 38).
 */
static void
domain_whoami_server(struct domain_whoami_op *w)
{
	const struct domain	*d = w->d;
	struct domain_identity	*id = &w->id;

	id->authenticated = 1;
	xasprintf(&id->principal, "server:%s:%d%s", d->host, d->port,
	    d->base);
	id->evidence = xstrdup("token accepted by api/status (no api/me): "
	    "the server's one user");
}

/*
 * Who the server says we are.  /api/me (jupyter_server 2) names the
 * user; without it (1.23) behind JupyterHub the hub's api/user names
 * the token's owner; else the evidence is /api/status accepting the
 * token, and the principal is the server (its URL).  Evidence
 * that disagrees (api/me answering while api/status refuses) fails
 * closed.  Three requests in turn on base's loop; cb gets the identity
 * (authenticated, else problem set) and may take its strings.  d must
 * live until then.  -1 if the first request cannot start.
 */
int
domain_whoami_start(struct event_base *base, const struct domain *d,
    domain_whoami_cb cb, void *arg)
{
	struct domain_whoami_op	*w;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->d = d;
	w->cb = cb;
	w->arg = arg;
	if (jserver_request(base, d, "GET", "api", NULL, 0, 10,
	    domain_whoami_step, w) != 0) {
		free(w);
		return (-1);
	}
	return (0);
}

/* One answer of the three; the next request, or the identity. */
static void
domain_whoami_step(struct jserver_reply *r, void *arg)
{
	struct domain_whoami_op	*w = arg;
	struct domain_identity	*id = &w->id;
	const struct domain	*d = w->d;
	struct json_object	*o, *ident, *v;
	char			*why;
	const char		*user = NULL, *next;

	switch (w->step++) {
	case 0:
		if (r->status == 0) {
			xasprintf(&id->problem, "cannot reach %s: %s", d->url,
			    r->cause != NULL ? r->cause : "no answer");
			id->untrusted = r->untrusted;
			goto done;
		}
		id->reachable = 1;
		w->hub = r->hub;
		/*
		 * A hub user's server that is not running: the proxy has
		 * no route for it, so the hub answers (a redirect to its
		 * /hub/user/NAME/..., or 424, or 503 while it starts).
		 */
		if (r->hub && (r->status == 424 || r->status == 503 ||
		    (r->status >= 300 && r->status < 400 &&
		    r->location != NULL &&
		    strstr(r->location, "/hub/user/") != NULL))) {
			xasprintf(&id->problem, "%s is a JupyterHub user "
			    "server that is not running (the hub answered "
			    "%d): start it from the hub's home page, or with "
			    "POST %s", d->url, r->status, (next =
			    domain_hub_server_path(d)) != NULL ? next :
			    "/hub/api/users/NAME/server");
			free((char *)next);
			goto done;
		}
		if (r->status != 200) {
			xasprintf(&id->problem, "%s answered %d to /api: is it "
			    "a Jupyter Server, and is the base path right?",
			    d->url, r->status);
			goto done;
		}
		if ((o = jserver_reply_json(r, &why)) != NULL) {
			if (json_object_object_get_ex(o, "version", &v) &&
			    json_object_is_type(v, json_type_string))
				id->version = xstrdup(
				    json_object_get_string(v));
			json_object_put(o);
		} else
			free(why);
		next = "api/status";
		break;
	case 1:
		if (r->status == 0) {
			xasprintf(&id->problem, "%s stopped answering: %s",
			    d->url, r->cause != NULL ? r->cause : "no answer");
			goto done;
		}
		w->status_ok = r->status == 200;
		next = "api/me";
		break;
	case 3:
		/* The hub's word on the token's owner. */
		if (r->status == 200 && (o = jserver_reply_json(r,
		    &why)) != NULL) {
			if (json_object_object_get_ex(o, "name", &v) &&
			    json_object_is_type(v, json_type_string) &&
			    json_object_get_string_len(v) > 0)
				user = json_object_get_string(v);
			if (user != NULL) {
				id->authenticated = 1;
				xasprintf(&id->principal, "%s@%s:%d%s", user,
				    d->host, d->port, d->base);
				id->evidence = xstrdup("the hub's api/user "
				    "(the token's owner)");
			}
			json_object_put(o);
			if (user != NULL)
				goto done;
		} else if (r->status == 200)
			free(why);
		domain_whoami_server(w);
		goto done;
	default:
		if (r->status == 200 && (o = jserver_reply_json(r,
		    &why)) != NULL) {
			if (json_object_object_get_ex(o, "identity", &ident) &&
			    json_object_object_get_ex(ident, "username", &v) &&
			    json_object_is_type(v, json_type_string) &&
			    json_object_get_string_len(v) > 0)
				user = json_object_get_string(v);
			if (user == NULL || !w->status_ok) {
				xasprintf(&id->problem, "%s gives conflicting "
				    "identity evidence (api/me %s, api/status "
				    "%s); refusing it", d->url, user != NULL ?
				    "names a user" : "names nobody",
				    w->status_ok ? "accepts the token" :
				    "refuses it");
				json_object_put(o);
				goto done;
			}
			id->authenticated = 1;
			xasprintf(&id->principal, "%s@%s:%d%s", user, d->host,
			    d->port, d->base);
			id->evidence = xstrdup("api/me");
			json_object_put(o);
			goto done;
		}
		if (r->status == 200)
			free(why);
		if (r->status == 401 || r->status == 403 || !w->status_ok) {
			xasprintf(&id->problem, "%s refused the token in %s "
			    "(HTTP %d): put the server's current token there",
			    d->url, d->token_file, r->status != 0 &&
			    r->status != 404 ? r->status : 403);
			goto done;
		}
		/* Behind a hub, the hub names the token's owner. */
		if (w->hub && (next = domain_hub_user_path(d)) != NULL) {
			w->step = 3;
			if (jserver_request(w->base, d, "GET", next, NULL, 0,
			    10, domain_whoami_step, w) == 0) {
				free((char *)next);
				return;
			}
			free((char *)next);
		}
		domain_whoami_server(w);
		goto done;
	}
	if (jserver_request(w->base, d, "GET", next, NULL, 0, 10,
	    domain_whoami_step, w) == 0)
		return;
	xasprintf(&id->problem, "cannot ask %s who we are", d->url);
done:
	w->cb(id, w->arg);
	domain_identity_clear(id);
	free(w);
}

struct domain_whoami_sync {
	struct domain_identity	*out;
	int			 done;
};

static void
domain_whoami_sync_cb(struct domain_identity *id, void *arg)
{
	struct domain_whoami_sync	*s = arg;

	*s->out = *id;
	memset(id, 0, sizeof *id);	/* moved to out */
	s->done = 1;
}

/* Blocking (runtimectl): 0 if authenticated, else -1 with problem set. */
int
domain_whoami(const struct domain *d, struct domain_identity *id)
{
	struct event_base		*base;
	struct domain_whoami_sync	 s;

	memset(id, 0, sizeof *id);
	s.out = id;
	s.done = 0;
	if ((base = event_base_new()) == NULL ||
	    domain_whoami_start(base, d, domain_whoami_sync_cb, &s) != 0) {
		xasprintf(&id->problem, "cannot reach %s: cannot start a "
		    "request", d->url);
		if (base != NULL) {
			jserver_forget(base);
			event_base_free(base);
		}
		return (-1);
	}
	while (!s.done && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	/* Run the deferred connection frees. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	jserver_forget(base);
	event_base_free(base);
	if (!s.done && id->problem == NULL)
		xasprintf(&id->problem, "cannot reach %s: no answer", d->url);
	return (id->authenticated ? 0 : -1);
}

void
domain_identity_clear(struct domain_identity *id)
{
	free(id->principal);
	free(id->evidence);
	free(id->version);
	free(id->problem);
	memset(id, 0, sizeof *id);
}

/* A server path with each segment percent-encoded; caller frees. */
char *
domain_encode_path(const char *path)
{
	struct evbuffer	*eb;
	const char	*p = path, *slash;
	char		*seg, *out;
	size_t		 len;

	eb = evbuffer_new();
	while (*p != '\0') {
		if ((slash = strchr(p, '/')) == NULL)
			slash = p + strlen(p);
		seg = evhttp_uriencode(p, (ev_ssize_t)(slash - p), 0);
		evbuffer_add_printf(eb, "%s%s", seg, *slash == '/' ? "/" : "");
		free(seg);
		p = *slash == '/' ? slash + 1 : slash;
	}
	len = evbuffer_get_length(eb);
	out = xmalloc(len + 1);
	evbuffer_remove(eb, out, len);
	out[len] = '\0';
	evbuffer_free(eb);
	return (out);
}

/* api/contents/PATH (encoded) followed by query; caller frees. */
char *
domain_contents_uri(const char *path, const char *query)
{
	char	*enc, *uri;

	enc = domain_encode_path(path);
	xasprintf(&uri, "api/contents/%s%s", enc, query);
	free(enc);
	return (uri);
}
