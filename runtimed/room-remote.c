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
 * Identity: every open asks the server who we are (domain_whoami) and
 * fails closed without a principal; a room opened under one principal is
 * never joined under another (another token for the same server).
 *
 * The contents calls block the daemon's loop for their duration (at
 * most JSERVER_TIMEOUT seconds each): see docs/remote.md.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "runtimed.h"
#include "domain.h"

struct room_remote {
	char		*domain;
	struct domain	*d;
	char		*path;		/* on the server, relative to its root */
	char		*last_modified;	/* NULL: not on the server yet */
	char		*principal;
	int		 lost;		/* the server went away */
	char		*kernel_id;	/* the server's, once ready */
	char		*kept_kernel;	/* one an earlier daemon left */
};

static int	room_remote_valid_path(const char *, char **);
static struct domain *room_remote_domain(const char *, char **, char **,
		    const char **);
static char	*room_remote_whoami(struct domain *, char **, const char **);
static int	room_remote_stat(struct domain *, const char *, char **,
		    char **);
static struct room *room_remote_find(const char *, const char *);
static int	room_remote_put(struct room_remote *, const char *,
		    const char *, size_t, char **, char **);
static struct room_nb *room_remote_fetch(struct domain *, const char *,
		    char **, char **);
static struct room *room_remote_wake(struct room *, struct domain *, char **,
		    const char **);
static void	room_remote_reclaim(struct room *);

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

/* Domain name, loaded, and who its server says we are (*principal). */
static struct domain *
room_remote_domain(const char *name, char **principal, char **cause,
    const char **code)
{
	struct domain	*d;
	char		*why;

	if ((d = domain_load(name, &why)) == NULL) {
		*code = "invalid_argument";
		*cause = why;
		return (NULL);
	}
	if ((*principal = room_remote_whoami(d, cause, code)) == NULL) {
		domain_free(d);
		return (NULL);
	}
	return (d);
}

/* Who the server says we are; NULL (fail closed) unless it says. */
static char *
room_remote_whoami(struct domain *d, char **cause, const char **code)
{
	struct domain_identity	 id;
	char			*p;

	if (domain_whoami(d, &id) != 0) {
		*code = id.reachable ? "invalid_argument" :
		    "notebook_unavailable";
		*cause = id.problem;
		id.problem = NULL;
		domain_identity_clear(&id);
		return (NULL);
	}
	p = id.principal;
	id.principal = NULL;
	domain_identity_clear(&id);
	return (p);
}

/*
 * The server's last_modified of path: 1 with *lm set, 0 if there is no
 * such file, -1 with a cause when the server cannot say.
 */
static int
room_remote_stat(struct domain *d, const char *path, char **lm, char **cause)
{
	struct jserver_reply	 r;
	struct json_object	*o, *v;
	char			*enc, *uri, *why;
	int			 rc = -1;

	*lm = NULL;
	enc = domain_encode_path(path);
	xasprintf(&uri, "api/contents/%s?content=0", enc);
	free(enc);
	jserver_call(d, "GET", uri, NULL, 0, JSERVER_TIMEOUT, &r);
	free(uri);
	if (r.status == 404)
		rc = 0;
	else if (r.status == 200 && (o = jserver_reply_json(&r, &why)) !=
	    NULL) {
		if (json_object_object_get_ex(o, "last_modified", &v) &&
		    json_object_is_type(v, json_type_string)) {
			*lm = xstrdup(json_object_get_string(v));
			rc = 1;
		} else
			xasprintf(cause, "%s: the server's model of %s has no "
			    "last_modified", d->url, path);
		json_object_put(o);
	} else {
		if (r.status == 200)
			free(why);
		why = jserver_reply_message(&r);
		xasprintf(cause, "%s: cannot look at %s: %s", d->url, path,
		    why);
		free(why);
	}
	jserver_reply_clear(&r);
	return (rc);
}

/* An open remote room for domain and path. */
static struct room *
room_remote_find(const char *domain, const char *path)
{
	struct room	*r;
	size_t		 i = 0;

	while ((r = room_nth(i++)) != NULL) {
		if (r->remote != NULL && !r->remote->lost &&
		    strcmp(r->remote->domain, domain) == 0 &&
		    strcmp(r->remote->path, path) == 0)
			return (r);
	}
	return (NULL);
}

/* PUT the bytes to path as a text file; *lm its new last_modified. */
static int
room_remote_put(struct room_remote *rr, const char *path, const char *data,
    size_t len, char **lm, char **cause)
{
	struct json_object	*body, *o, *v;
	struct jserver_reply	 r;
	const char		*text;
	char			*enc, *uri, *why;
	size_t			 tlen;
	int			 rc = -1;

	*lm = NULL;
	body = json_object_new_object();
	json_object_object_add(body, "type", json_object_new_string("file"));
	json_object_object_add(body, "format", json_object_new_string("text"));
	json_object_object_add(body, "content",
	    json_object_new_string_len(data, (int)len));
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	tlen = strlen(text);
	enc = domain_encode_path(path);
	xasprintf(&uri, "api/contents/%s", enc);
	free(enc);
	jserver_call(rr->d, "PUT", uri, text, tlen, JSERVER_TIMEOUT, &r);
	free(uri);
	json_object_put(body);
	if ((r.status == 200 || r.status == 201) &&
	    (o = jserver_reply_json(&r, &why)) != NULL) {
		if (json_object_object_get_ex(o, "last_modified", &v) &&
		    json_object_is_type(v, json_type_string))
			*lm = xstrdup(json_object_get_string(v));
		json_object_put(o);
		rc = 0;
	} else {
		if (r.status == 200 || r.status == 201)
			free(why);
		why = jserver_reply_message(&r);
		xasprintf(cause, "%s: saving %s failed (%s); the copy on the "
		    "server is as it was", rr->d->url, path, why);
		free(why);
	}
	jserver_reply_clear(&r);
	return (rc);
}

/* The room of the notebook at path on domain, loading it if needed. */
struct room *
room_remote_open(const char *domain, const char *path, char **cause,
    const char **code)
{
	struct room_remote	*rr;
	struct room		*r;
	struct room_nb		*nb;
	struct domain		*d;
	struct jserver_reply	 rep;
	struct json_object	*o = NULL, *v, *c;
	char			*principal, *enc, *uri, *why;
	const char		*kernel;

	*code = "invalid_argument";
	if (room_remote_valid_path(path, cause) != 0)
		return (NULL);
	if ((d = room_remote_domain(domain, &principal, cause, code)) == NULL)
		return (NULL);
	if ((r = room_remote_find(domain, path)) != NULL) {
		if (strcmp(r->remote->principal, principal) != 0) {
			*code = "notebook_unavailable";
			xasprintf(cause, "%s on %s is open here as %s, and the "
			    "server now says you are %s: one notebook is never "
			    "shared between two identities", path, domain,
			    r->remote->principal, principal);
			free(principal);
			domain_free(d);
			return (NULL);
		}
		free(principal);
		if (!r->loaded)		/* stored, dormant: decision 030 */
			return (room_remote_wake(r, d, cause, code));
		domain_free(d);
		return (r);
	}

	enc = domain_encode_path(path);
	xasprintf(&uri, "api/contents/%s?type=file&format=text&content=1",
	    enc);
	free(enc);
	jserver_call(d, "GET", uri, NULL, 0, JSERVER_TIMEOUT, &rep);
	free(uri);
	*code = "notebook_unavailable";
	if (rep.status != 200) {
		why = jserver_reply_message(&rep);
		xasprintf(cause, "%s on %s: %s%s", path, d->url, why,
		    rep.status == 404 ? " (no such file on the server; "
		    "create_notebook makes one)" : "");
		free(why);
		goto fail;
	}
	if ((o = jserver_reply_json(&rep, &why)) == NULL ||
	    !json_object_object_get_ex(o, "content", &c) ||
	    !json_object_is_type(c, json_type_string) ||
	    !json_object_object_get_ex(o, "last_modified", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		if (o == NULL)
			free(why);
		xasprintf(cause, "%s on %s: the server's answer is not a "
		    "text file model (is it a directory, or not UTF-8?)",
		    path, d->url);
		goto fail;
	}
	if ((nb = room_ipynb_parse(json_object_get_string(c),
	    (size_t)json_object_get_string_len(c), &why)) == NULL) {
		xasprintf(cause, "%s on %s: %s", path, d->url, why);
		free(why);
		goto fail;
	}
	rr = xcalloc(1, sizeof *rr);
	rr->domain = xstrdup(domain);
	rr->d = d;
	rr->path = xstrdup(path);
	rr->last_modified = xstrdup(json_object_get_string(v));
	rr->principal = principal;
	json_object_put(o);
	jserver_reply_clear(&rep);

	kernel = room_remote_nb_kernel(nb);
	r = room_new(NULL, NULL, kernel != NULL ? kernel : "python3");
	r->remote = rr;
	r->nb = nb;
	room_loaded(r);
	if (room_journal_snapshot(r) != 0)
		log_warnx("room %s: the store did not take its first "
		    "snapshot", r->id);
	log_info("room %s opened %s on %s as %s", r->id, path, d->url,
	    principal);
	return (r);

fail:
	json_object_put(o);
	jserver_reply_clear(&rep);
	free(principal);
	domain_free(d);
	return (NULL);
}

/*
 * A new notebook on the server at path (or, without one, where the
 * server's "new notebook" puts it), written at once so it exists there.
 */
struct room *
room_remote_create(const char *domain, const char *path, const char *kernel,
    char **cause, const char **code)
{
	struct room_remote	*rr;
	struct room		*r;
	struct domain		*d;
	struct jserver_reply	 rep;
	struct json_object	*o, *v;
	char			*principal, *lm, *why, *data, *where = NULL;
	size_t			 len;
	int			 rc;

	*code = "invalid_argument";
	if (kernel == NULL)
		kernel = "python3";
	if (path != NULL && room_remote_valid_path(path, cause) != 0)
		return (NULL);
	if ((d = room_remote_domain(domain, &principal, cause, code)) == NULL)
		return (NULL);
	if (room_remote_check_kernel(d, kernel, cause) != 0) {
		*code = "kernel_unavailable";
		goto fail;
	}
	if (path == NULL) {
		jserver_call(d, "POST", "api/contents",
		    "{\"type\":\"notebook\"}", 19, JSERVER_TIMEOUT, &rep);
		if (rep.status != 201 || (o = jserver_reply_json(&rep,
		    &why)) == NULL || !json_object_object_get_ex(o, "path",
		    &v) || !json_object_is_type(v, json_type_string)) {
			why = jserver_reply_message(&rep);
			*code = "notebook_unavailable";
			xasprintf(cause, "%s would not make a new notebook: %s",
			    d->url, why);
			free(why);
			jserver_reply_clear(&rep);
			goto fail;
		}
		where = xstrdup(json_object_get_string(v));
		json_object_put(o);
		jserver_reply_clear(&rep);
	} else {
		if ((rc = room_remote_stat(d, path, &lm, cause)) != 0) {
			if (rc == 1) {
				free(lm);
				xasprintf(cause, "%s exists on %s; use "
				    "connect_notebook", path, domain);
			} else
				*code = "notebook_unavailable";
			goto fail;
		}
		where = xstrdup(path);
	}
	rr = xcalloc(1, sizeof *rr);
	rr->domain = xstrdup(domain);
	rr->d = d;
	rr->path = where;
	rr->principal = principal;
	r = room_new(NULL, NULL, kernel);
	r->remote = rr;
	r->nb = room_nb_create();
	kernel_spec_metadata(r->nb, kernel);
	r->kernel_facts = 1;
	r->fresh = 1;
	room_loaded(r);
	data = room_ipynb_write_dump(r->nb, &len);
	if (room_remote_put(rr, rr->path, data, len, &lm, cause) != 0) {
		free(data);
		*code = "notebook_unavailable";
		room_remote_forget(r);
		return (NULL);
	}
	free(data);
	rr->last_modified = lm;
	if (room_journal_snapshot(r) != 0)
		log_warnx("room %s: the store did not take its first "
		    "snapshot", r->id);
	log_info("room %s created %s on %s as %s", r->id, rr->path, d->url,
	    principal);
	return (r);

fail:
	free(principal);
	domain_free(d);
	return (NULL);
}

/*
 * Save to the server: its path, or (save-as) another path there.  A
 * file that changed there since our load or last save, or another file
 * at the new path, needs force.
 */
int
room_remote_save(struct room *r, const char *path, int force, char **cause,
    const char **code)
{
	struct room_remote	*rr = r->remote;
	char			*lm, *data, *why;
	const char		*target;
	size_t			 len;
	int			 rc, same;

	*code = "invalid_argument";
	target = path != NULL ? path : rr->path;
	if (room_remote_valid_path(target, cause) != 0)
		return (-1);
	same = strcmp(target, rr->path) == 0;
	if (!same && room_remote_find(rr->domain, target) != NULL) {
		xasprintf(cause, "%s on %s is open as another notebook",
		    target, rr->domain);
		return (-1);
	}
	*code = "notebook_unavailable";
	if ((rc = room_remote_stat(rr->d, target, &lm, cause)) == -1)
		return (-1);
	if (rc == 1 && !force) {
		if (!same || rr->last_modified == NULL ||
		    strcmp(lm, rr->last_modified) != 0) {
			*code = "file_changed_on_disk";
			xasprintf(cause, same ? "%s changed on %s since it was "
			    "loaded (last_modified %s, was %s); save with "
			    "force to overwrite" : "%s exists on %s; save with "
			    "force to overwrite", target, rr->domain, lm,
			    rr->last_modified != NULL ? rr->last_modified :
			    "none");
			free(lm);
			return (-1);
		}
	}
	free(lm);
	data = room_ipynb_write_dump(r->nb, &len);
	if (room_remote_put(rr, target, data, len, &lm, &why) != 0) {
		free(data);
		*cause = why;
		return (-1);
	}
	free(data);
	if (!same) {
		free(rr->path);
		rr->path = xstrdup(target);
	}
	free(rr->last_modified);
	rr->last_modified = lm;
	r->fresh = 0;
	r->dirty = 0;
	r->unsaved_since = 0;
	json_object_put(r->nb->warnings);
	r->nb->warnings = NULL;
	log_info("room %s saved to %s on %s", r->id, rr->path, rr->domain);
	room_journal_snapshot(r);
	return (0);
}

/* Is kernelspec name one of the server's?  -1 with the list if not. */
int
room_remote_check_kernel(struct domain *d, const char *name, char **cause)
{
	struct jserver_reply	 rep;
	struct json_object	*o, *specs;
	struct evbuffer		*names;
	char			*why;
	int			 rc = -1;

	jserver_call(d, "GET", "api/kernelspecs", NULL, 0, JSERVER_TIMEOUT,
	    &rep);
	if (rep.status != 200 || (o = jserver_reply_json(&rep, &why)) ==
	    NULL) {
		why = jserver_reply_message(&rep);
		xasprintf(cause, "%s: cannot list its kernelspecs: %s",
		    d->url, why);
		free(why);
		jserver_reply_clear(&rep);
		return (-1);
	}
	jserver_reply_clear(&rep);
	if (json_object_object_get_ex(o, "kernelspecs", &specs) &&
	    json_object_is_type(specs, json_type_object)) {
		if (json_object_object_get_ex(specs, name, NULL))
			rc = 0;
		else {
			names = evbuffer_new();
			json_object_object_foreach(specs, key, val) {
				(void)val;
				evbuffer_add_printf(names, "%s%s",
				    evbuffer_get_length(names) ? ", " : "",
				    key);
			}
			evbuffer_add(names, "", 1);
			xasprintf(cause, "%s has no kernelspec %s (it has: %s)",
			    d->url, name, evbuffer_pullup(names, -1));
			evbuffer_free(names);
		}
	} else
		xasprintf(cause, "%s: its kernelspecs answer has no "
		    "kernelspecs", d->url);
	json_object_put(o);
	return (rc);
}

/* Is name one of the kernelspecs of r's server? */
int
room_remote_room_kernel(struct room *r, const char *name, char **cause)
{
	return (room_remote_check_kernel(r->remote->d, name, cause));
}

/* The kernelspec a loaded notebook names, if a plain name. */
const char *
room_remote_nb_kernel(struct room_nb *nb)
{
	struct json_object	*ks, *name;
	const char		*s;

	if (json_object_object_get_ex(nb->metadata, "kernelspec", &ks) &&
	    json_object_object_get_ex(ks, "name", &name) &&
	    json_object_is_type(name, json_type_string) &&
	    (s = json_object_get_string(name)) != NULL &&
	    domain_valid_name(s))
		return (s);
	return (NULL);
}

/* The server's kernelspecs for KERNEL_LIST as kernelspec_list has them. */
struct json_object *
room_remote_kernels(struct room *r, char **cause)
{
	struct jserver_reply	 rep;
	struct json_object	*o, *specs, *list, *item, *spec, *v;
	char			*why;

	jserver_call(r->remote->d, "GET", "api/kernelspecs", NULL, 0,
	    JSERVER_TIMEOUT, &rep);
	if (rep.status != 200 || (o = jserver_reply_json(&rep, &why)) ==
	    NULL) {
		why = jserver_reply_message(&rep);
		xasprintf(cause, "%s: cannot list its kernelspecs: %s",
		    r->remote->d->url, why);
		free(why);
		jserver_reply_clear(&rep);
		return (NULL);
	}
	jserver_reply_clear(&rep);
	list = json_object_new_array();
	if (json_object_object_get_ex(o, "kernelspecs", &specs) &&
	    json_object_is_type(specs, json_type_object)) {
		json_object_object_foreach(specs, key, val) {
			item = json_object_new_object();
			json_object_object_add(item, "name",
			    json_object_new_string(key));
			if (json_object_object_get_ex(val, "spec", &spec)) {
				if (json_object_object_get_ex(spec,
				    "display_name", &v))
					json_object_object_add(item,
					    "display_name", json_object_get(v));
				if (json_object_object_get_ex(spec,
				    "language", &v))
					json_object_object_add(item,
					    "language", json_object_get(v));
			}
			json_object_array_add(list, item);
		}
	}
	json_object_put(o);
	return (list);
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
	struct jserver_reply	 rep;
	struct peer		**members;
	size_t			 i, n;

	if (r->remote == NULL || r->remote->lost)
		return;
	jserver_call(r->remote->d, "GET", "api", NULL, 0, 5, &rep);
	if (rep.status != 0) {
		jserver_reply_clear(&rep);
		return;
	}
	log_warnx("room %s: %s does not answer (%s); its attachments are "
	    "unavailable", r->id, r->remote->d->url, rep.cause != NULL ?
	    rep.cause : "no answer");
	jserver_reply_clear(&rep);
	r->remote->lost = 1;
	room_journal_snapshot(r);	/* the store forgets the binding */
	n = r->nmembers;
	members = xreallocarray(NULL, n > 0 ? n : 1, sizeof *members);
	memcpy(members, r->members, n * sizeof *members);
	for (i = 0; i < n; i++)
		peer_kill(members[i], "the notebook's Jupyter Server is gone");
	free(members);
}

/* Forget a room that never made it (create failed). */
void
room_remote_forget(struct room *r)
{
	room_remove(r);
}

void
room_remote_free(struct room_remote *rr)
{
	if (rr == NULL)
		return;
	domain_free(rr->d);
	free(rr->domain);
	free(rr->path);
	free(rr->last_modified);
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
 * Does the snapshot carry a binding?  Not once the server was lost: the
 * edits then stay an untitled copy and a connect loads the server's.
 */
int
room_remote_bound(struct room *r)
{
	return (r->remote != NULL && !r->remote->lost);
}

/* The binding as the snapshot's "remote" value (room-journal.c). */
void
room_remote_pack(struct room *r, msgpack_packer *pk)
{
	struct room_remote	*rr = r->remote;
	const char		*kid;

	kid = rr->kernel_id != NULL ? rr->kernel_id : rr->kept_kernel;
	msgpack_pack_map(pk, 3 + (rr->last_modified != NULL) + (kid != NULL));
	proto_pack_str(pk, "domain", rr->domain);
	proto_pack_str(pk, "path", rr->path);
	proto_pack_str(pk, "principal", rr->principal);
	if (rr->last_modified != NULL)
		proto_pack_str(pk, "last_modified", rr->last_modified);
	if (kid != NULL)
		proto_pack_str(pk, "kernel_id", kid);
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

	msgpack_unpacked_init(&u);
	if (snap == NULL || msgpack_unpack_next(&u, snap, len, NULL) !=
	    MSGPACK_UNPACK_SUCCESS ||
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

/* GET the notebook at path as text: parsed, *lm its last_modified. */
static struct room_nb *
room_remote_fetch(struct domain *d, const char *path, char **lm,
    char **cause)
{
	struct jserver_reply	 rep;
	struct json_object	*o = NULL, *v, *c;
	struct room_nb		*nb = NULL;
	char			*enc, *uri, *why;

	enc = domain_encode_path(path);
	xasprintf(&uri, "api/contents/%s?type=file&format=text&content=1",
	    enc);
	free(enc);
	jserver_call(d, "GET", uri, NULL, 0, JSERVER_TIMEOUT, &rep);
	free(uri);
	if (rep.status != 200) {
		why = jserver_reply_message(&rep);
		xasprintf(cause, "%s on %s: %s", path, d->url, why);
		free(why);
		goto out;
	}
	if ((o = jserver_reply_json(&rep, &why)) == NULL ||
	    !json_object_object_get_ex(o, "content", &c) ||
	    !json_object_is_type(c, json_type_string) ||
	    !json_object_object_get_ex(o, "last_modified", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		if (o == NULL)
			free(why);
		xasprintf(cause, "%s on %s: the server's answer is not a "
		    "text file model", path, d->url);
		goto out;
	}
	if ((nb = room_ipynb_parse(json_object_get_string(c),
	    (size_t)json_object_get_string_len(c), &why)) == NULL) {
		xasprintf(cause, "%s on %s: %s", path, d->url, why);
		free(why);
		goto out;
	}
	*lm = xstrdup(json_object_get_string(v));
out:
	json_object_put(o);
	jserver_reply_clear(&rep);
	return (nb);
}

/*
 * Load a dormant remote room (d, which it takes, is its domain, the
 * principal checked).  Clean, the server's copy is the whole truth.
 * With unsaved edits (acknowledged, so never dropped) the stored copy
 * comes back; if the server's copy changed since our load or last save
 * the edits are kept over it, a warning says so and the next save
 * answers file_changed_on_disk, as for a local file changed meanwhile.
 */
static struct room *
room_remote_wake(struct room *r, struct domain *d, char **cause,
    const char **code)
{
	struct room_remote	*rr = r->remote;
	struct room_nb		*nb;
	char			*lm = NULL, *why = NULL;
	int			 rc;

	domain_free(rr->d);
	rr->d = d;
	*code = "notebook_unavailable";
	if (!r->dirty) {
		if ((nb = room_remote_fetch(d, rr->path, &lm, cause)) == NULL)
			return (NULL);
		room_nb_free(r->nb);
		r->nb = nb;
		free(rr->last_modified);
		rr->last_modified = lm;
		room_loaded(r);
		room_journal_snapshot(r);
		log_info("room %s reopened %s on %s as %s", r->id, rr->path,
		    d->url, rr->principal);
		room_remote_reclaim(r);
		return (r);
	}
	if ((rc = room_remote_stat(d, rr->path, &lm, &why)) == -1) {
		*cause = why;
		return (NULL);
	}
	if (room_journal_recover(r, &why) != 0) {
		xasprintf(cause, "notebook %s cannot be recovered: %s", r->id,
		    why);
		free(why);
		free(lm);
		return (NULL);
	}
	if (rc == 0 || rr->last_modified == NULL ||
	    strcmp(lm, rr->last_modified) != 0) {
		log_warnx("room %s: %s on %s changed on the server since its "
		    "unsaved edits were made; they are kept", r->id, rr->path,
		    rr->domain);
		room_nb_warn(r->nb, -1, NULL, "overwrites the server's copy "
		    "(save_notebook with force)", "%s changed on the server "
		    "(last_modified %s, was %s) while this notebook had "
		    "unsaved edits; they are kept here: a save answers "
		    "file_changed_on_disk", rr->path, lm != NULL ? lm :
		    "none: deleted", rr->last_modified != NULL ?
		    rr->last_modified : "none");
	}
	free(lm);
	room_loaded(r);
	log_info("room %s recovered %s on %s as %s (seq %llu)", r->id,
	    rr->path, d->url, rr->principal, (unsigned long long)r->seq);
	room_remote_reclaim(r);
	return (r);
}

/*
 * ROOM_OPEN {path, domain, notebook_id}: a worker re-joining handles
 * after the daemon was replaced.  Only the room that was that notebook
 * (same id, bound to that path on that domain) and only under its own
 * principal; anything else is attachment_expired, so a handle never
 * comes back as another notebook or another identity.
 */
struct room *
room_remote_rejoin(const char *domain, const char *path, const char *id,
    char **cause, const char **code)
{
	struct room	*r;
	struct domain	*d;
	char		*principal;
	size_t		 i = 0;

	while ((r = room_nth(i++)) != NULL && strcmp(r->id, id) != 0)
		;
	if (r == NULL || r->remote == NULL || r->remote->lost ||
	    strcmp(r->remote->domain, domain) != 0 ||
	    strcmp(r->remote->path, path) != 0) {
		*code = "attachment_expired";
		xasprintf(cause, "notebook %s is no longer %s on %s here",
		    id, path, domain);
		return (NULL);
	}
	if ((d = room_remote_domain(domain, &principal, cause, code)) == NULL) {
		/* The server or its configuration may come back: retry. */
		*code = "notebook_unavailable";
		return (NULL);
	}
	if (strcmp(r->remote->principal, principal) != 0) {
		*code = "attachment_expired";
		xasprintf(cause, "%s on %s was opened as %s, and the server "
		    "now says you are %s: it is not joined under another "
		    "identity", path, domain, r->remote->principal, principal);
		log_warnx("room %s: re-join refused: %s", r->id, *cause);
		free(principal);
		domain_free(d);
		return (NULL);
	}
	free(principal);
	if (r->loaded) {
		domain_free(d);
		return (r);
	}
	return (room_remote_wake(r, d, cause, code));
}
