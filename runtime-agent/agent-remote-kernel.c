/* SPDX-License-Identifier: ISC */
/*
 * agent-remote-kernel.c: a kernel on a Jupyter Server, behind the same
 * agent_kernel_* calls agent-exec.c makes of a local one.
 *
 * Start is POST api/kernels {name, path}; then the kernel WebSocket is
 * opened and kernel_info_request is sent on shell every second until one
 * is answered: a server may drop what is sent while its kernel comes up
 * (1.23 does, right after a restart), so only the kernel's own reply
 * says it is ready.  Interrupt and restart are POSTs to the kernel's
 * URL; shutdown is its DELETE.  A lost WebSocket is not yet a lost
 * kernel: GET api/kernels/ID asks the server, and a kernel it kept is
 * reconnected with the same session id, for which jupyter_server buffered
 * the kernel's messages meanwhile and replays them, so a run in flight
 * completes with its outputs (decision 030).  The kernel dies for us when
 * the server no longer has it or does not answer, or when it reports the
 * kernel restarting or dead on iopub without our asking.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-remote.h"

/* How long the kernel has to answer kernel_info, and how often it is asked. */
#define AGENT_REMOTE_READY_MS	60000
#define AGENT_REMOTE_INFO_MS	1000
/*
 * A lost WebSocket: the server is asked again, 250 ms apart doubling to
 * 4 s, for up to RUNTIMED_REMOTE_REJOIN_MS (default 20 s) while it does
 * not answer as itself (no answer, or a proxy's or hub's answer: a
 * configurable-http-proxy restarting answers 404 and the hub 302 before
 * the routes are back), and 3 times when it answers but the channel
 * closes again at once.
 */
#define AGENT_REMOTE_REJOIN_TRIES	3
#define AGENT_REMOTE_REJOIN_FIRST_MS	250
#define AGENT_REMOTE_REJOIN_MAX_MS	4000
#define AGENT_REMOTE_REJOIN_WINDOW_MS	20000

enum agent_remote_state {
	AGENT_REMOTE_NEW,
	AGENT_REMOTE_POSTING,		/* POST api/kernels in flight */
	AGENT_REMOTE_CONNECTING,	/* WebSocket upgrade, kernel_info */
	AGENT_REMOTE_READY,
	AGENT_REMOTE_REJOINING,		/* WebSocket lost, asking the server */
	AGENT_REMOTE_STOPPING,		/* restart or DELETE in flight */
	AGENT_REMOTE_DEAD,
};

struct agent_kernel {
	struct event_base	*base;
	struct domain		*d;
	char			*name;		/* kernelspec */
	char			*path;		/* server dir the kernel runs in */
	char			*id;		/* the server's kernel id */
	char			 session[37];
	enum agent_remote_state	 state;
	struct agent_remote_ws	*ws;
	int			 v1;
	struct event		*info_ev;
	int64_t			 ready_by;
	char			*why;		/* last failure */
	char			*display_name;	/* the server's kernelspec */
	char			*language;
	struct json_object	*metadata;	/* the kernelspec's */
	struct json_object	*info;

	void			(*done)(struct agent_kernel *, void *);
	void			*done_arg;
	int			 restart;
	int			 closing;	/* we asked for the DELETE */
	char			*refused;	/* why the DELETE did not end it */
	int			 rejoins;	/* tries since the last open */
	int64_t			 rejoin_by;	/* end of the window */
	int			 rejoin_ms;	/* the next wait */
	char			*kept;		/* a kernel an earlier agent left */
	struct event		*rejoin_ev;
};

static void	agent_remote_kernel_spec(struct agent_kernel *);
static void	agent_remote_kernel_posted(struct jserver_reply *, void *);
static void	agent_remote_kernel_connect(struct agent_kernel *);
static void	agent_remote_kernel_open(void *, int);
static void	agent_remote_kernel_message(void *, int, const u_char *,
		    size_t);
static void	agent_remote_kernel_closed(void *, const char *);
static void	agent_remote_kernel_rejoin(evutil_socket_t, short, void *);
static void	agent_remote_kernel_checked(struct jserver_reply *, void *);
static int64_t	agent_remote_kernel_window(void);
static int	agent_remote_kernel_listed(struct agent_kernel *,
		    struct jserver_reply *);
static int	agent_remote_kernel_post(struct agent_kernel *, char **);
static void	agent_remote_kernel_kept(struct jserver_reply *, void *);
static void	agent_remote_kernel_info_cb(evutil_socket_t, short, void *);
static void	agent_remote_kernel_fail(struct agent_kernel *,
		    const char *);
static void	agent_remote_kernel_stopped(struct jserver_reply *, void *);
static void	agent_remote_kernel_interrupted(struct jserver_reply *,
		    void *);
static int	agent_remote_kernel_channel(const char *,
		    enum agent_channel *);
static const char *agent_remote_kernel_channel_name(enum agent_channel);

static const struct agent_remote_ws_cbs agent_remote_kernel_cbs = {
	agent_remote_kernel_open,
	agent_remote_kernel_message,
	agent_remote_kernel_closed,
};

/* A kernel of kernelspec name in server directory path (may be ""). */
struct agent_kernel *
agent_remote_kernel_create(struct event_base *base, struct domain *d,
    const char *name, const char *path)
{
	struct agent_kernel	*k;

	k = xcalloc(1, sizeof *k);
	k->base = base;
	k->d = d;
	k->name = xstrdup(name);
	k->path = xstrdup(path);
	util_uuid(k->session);
	k->info_ev = evtimer_new(base, agent_remote_kernel_info_cb, k);
	k->rejoin_ev = evtimer_new(base, agent_remote_kernel_rejoin, k);
	return (k);
}

void
agent_kernel_free(struct agent_kernel *k)
{
	if (k == NULL)
		return;
	agent_remote_ws_free(k->ws);
	event_free(k->info_ev);
	event_free(k->rejoin_ev);
	json_object_put(k->info);
	json_object_put(k->metadata);
	free(k->name);
	free(k->path);
	free(k->id);
	free(k->kept);
	free(k->why);
	free(k->refused);
	free(k->display_name);
	free(k->language);
	free(k);
}

/* The server's kernelspec of our name: display_name and language. */
static void
agent_remote_kernel_spec(struct agent_kernel *k)
{
	struct jserver_reply	 r;
	struct json_object	*o, *spec, *v;
	char			*enc, *path, *why;

	enc = domain_encode_path(k->name);
	xasprintf(&path, "api/kernelspecs/%s", enc);
	free(enc);
	if (jserver_call(k->d, "GET", path, NULL, 0, JSERVER_TIMEOUT,
	    &r) == 0 && r.status == 200 &&
	    (o = jserver_reply_json(&r, &why)) != NULL) {
		if (json_object_object_get_ex(o, "spec", &spec)) {
			if (json_object_object_get_ex(spec, "display_name",
			    &v) && json_object_is_type(v, json_type_string))
				k->display_name =
				    xstrdup(json_object_get_string(v));
			if (json_object_object_get_ex(spec, "language", &v) &&
			    json_object_is_type(v, json_type_string))
				k->language = xstrdup(json_object_get_string(v));
			if (json_object_object_get_ex(spec, "metadata", &v) &&
			    json_object_is_type(v, json_type_object))
				k->metadata = json_object_get(v);
		}
		json_object_put(o);
	} else if (r.status == 200)
		free(why);
	jserver_reply_clear(&r);
	free(path);
}

/* The server's kernelspec metadata ("debugger" for introspection). */
struct json_object *
agent_kernel_metadata(struct agent_kernel *k)
{
	return (k->metadata);
}

/* No directory of ours the kernel writes to: it is on the server. */
const char *
agent_kernel_runtime_dir(struct agent_kernel *k)
{
	return (NULL);
}

const char *
agent_remote_kernel_display_name(struct agent_kernel *k)
{
	return (k->display_name);
}

const char *
agent_remote_kernel_language(struct agent_kernel *k)
{
	return (k->language);
}

/*
 * Take the kernel an agent of an earlier daemon left on the server
 * (--kernel-id), if the server still has it, rather than a new one.
 */
void
agent_remote_kernel_keep(struct agent_kernel *k, const char *id)
{
	free(k->kept);
	k->kept = xstrdup(id);
}

/* The server's id of our kernel; NULL before it has one. */
const char *
agent_remote_kernel_id(struct agent_kernel *k)
{
	return (k->id);
}

/*
 * The daemon died: leave a started kernel to the server (1), so the
 * next daemon's agent takes it back with --kernel-id (decision 030).
 */
int
agent_remote_kernel_orphaned(struct agent_kernel *k)
{
	if (k->id == NULL || k->state == AGENT_REMOTE_DEAD ||
	    k->state == AGENT_REMOTE_STOPPING)
		return (0);
	log_info("kernel %s: the daemon died; left running on %s for the "
	    "next one", k->id, k->d->url);
	evtimer_del(k->info_ev);
	evtimer_del(k->rejoin_ev);
	k->state = AGENT_REMOTE_DEAD;
	agent_remote_ws_free(k->ws);
	k->ws = NULL;
	return (1);
}

/* Start the kernel, or (after a restart) reconnect to it. */
int
agent_kernel_start(struct agent_kernel *k, char **cause)
{
	char	*path;
	int	 rc;

	k->ready_by = util_mono_ms() + AGENT_REMOTE_READY_MS;
	if (k->id != NULL) {
		agent_remote_kernel_connect(k);
		return (0);
	}
	agent_remote_kernel_spec(k);
	if (k->kept == NULL)
		return (agent_remote_kernel_post(k, cause));
	xasprintf(&path, "api/kernels/%s", k->kept);
	k->state = AGENT_REMOTE_POSTING;
	rc = jserver_request(k->base, k->d, "GET", path, NULL, 0,
	    JSERVER_TIMEOUT, agent_remote_kernel_kept, k);
	free(path);
	if (rc != 0) {
		k->state = AGENT_REMOTE_DEAD;
		xasprintf(cause, "cannot reach %s", k->d->url);
		return (-1);
	}
	return (0);
}

/* The kept kernel is there: ours again; else a new one. */
static void
agent_remote_kernel_kept(struct jserver_reply *r, void *arg)
{
	struct agent_kernel	*k = arg;
	struct json_object	*o, *v;
	char			*cause, *why;
	int			 same = 0;

	if (k->state != AGENT_REMOTE_POSTING)
		return;
	/* Only a kernel of the kernelspec asked for is taken back. */
	if (r->status == 200 && (o = jserver_reply_json(r, &why)) != NULL) {
		same = json_object_object_get_ex(o, "name", &v) &&
		    json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), k->name) == 0;
		json_object_put(o);
	} else if (r->status == 200)
		free(why);
	if (same) {
		k->id = k->kept;
		k->kept = NULL;
		log_info("kernel %s on %s: kept by the server, taken back",
		    k->id, k->d->url);
		agent_remote_kernel_connect(k);
		return;
	}
	log_info("kernel %s is no longer on %s (HTTP %d): a new one", k->kept,
	    k->d->url, r->status);
	free(k->kept);
	k->kept = NULL;
	if (agent_remote_kernel_post(k, &cause) != 0) {
		agent_remote_kernel_fail(k, cause);
		free(cause);
	}
}

/* POST api/kernels {name, path}: a new kernel on the server. */
static int
agent_remote_kernel_post(struct agent_kernel *k, char **cause)
{
	struct json_object	*body;
	const char		*text;

	body = json_object_new_object();
	json_object_object_add(body, "name", json_object_new_string(k->name));
	json_object_object_add(body, "path", json_object_new_string(k->path));
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	k->state = AGENT_REMOTE_POSTING;
	if (jserver_request(k->base, k->d, "POST", "api/kernels", text,
	    strlen(text), JSERVER_TIMEOUT, agent_remote_kernel_posted,
	    k) != 0) {
		json_object_put(body);
		k->state = AGENT_REMOTE_DEAD;
		xasprintf(cause, "cannot reach %s", k->d->url);
		return (-1);
	}
	json_object_put(body);
	log_info("starting kernel %s on %s", k->name, k->d->url);
	return (0);
}

/* POST api/kernels answered: the kernel's id, then its WebSocket. */
static void
agent_remote_kernel_posted(struct jserver_reply *r, void *arg)
{
	struct agent_kernel	*k = arg;
	struct json_object	*o, *v;
	char			*why, *msg;

	if (k->state != AGENT_REMOTE_POSTING)
		return;
	if (r->status != 201 && r->status != 200) {
		msg = jserver_reply_message(r);
		xasprintf(&why, "the Jupyter Server at %s did not start "
		    "kernel %s: %s", k->d->url, k->name, msg);
		free(msg);
		agent_remote_kernel_fail(k, why);
		free(why);
		return;
	}
	if ((o = jserver_reply_json(r, &why)) == NULL ||
	    !json_object_object_get_ex(o, "id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 ||
	    json_object_get_string_len(v) > 128 ||
	    strspn(json_object_get_string(v), "0123456789abcdef-") !=
	    (size_t)json_object_get_string_len(v)) {
		if (o != NULL)
			why = NULL;
		json_object_put(o);
		agent_remote_kernel_fail(k, "the server's answer to POST "
		    "api/kernels has no kernel id");
		free(why);
		return;
	}
	k->id = xstrdup(json_object_get_string(v));
	json_object_put(o);
	log_info("kernel %s is %s on %s", k->name, k->id, k->d->url);
	agent_remote_kernel_connect(k);
}

/* Open the kernel's WebSocket; kernel_info follows once it is open. */
static void
agent_remote_kernel_connect(struct agent_kernel *k)
{
	const char	*force;
	char		*path, *cause;
	int		 offer;

	agent_remote_ws_free(k->ws);
	k->ws = NULL;
	k->state = AGENT_REMOTE_CONNECTING;
	/* RUNTIMED_REMOTE_WS=json: the JSON encoding even where v1 is. */
	force = getenv("RUNTIMED_REMOTE_WS");
	offer = force == NULL || strcmp(force, "json") != 0;
	xasprintf(&path, "api/kernels/%s/channels?session_id=%s", k->id,
	    k->session);
	k->ws = agent_remote_ws_create(k->base, k->d, path, offer,
	    &agent_remote_kernel_cbs, k, &cause);
	free(path);
	if (k->ws == NULL) {
		agent_remote_kernel_fail(k, cause);
		free(cause);
	}
}

static void
agent_remote_kernel_open(void *arg, int v1)
{
	struct agent_kernel	*k = arg;

	k->v1 = v1;
	k->rejoins = 0;
	log_info("kernel %s: WebSocket open (%s)", k->id, v1 ?
	    AGENT_REMOTE_WS_V1 : "JSON messages");
	if (k->state == AGENT_REMOTE_REJOINING) {
		/* The same kernel: what it sent meanwhile is replayed. */
		log_info("kernel %s: reconnected to the kernel the server "
		    "kept", k->id);
		k->state = AGENT_REMOTE_READY;
		return;
	}
	agent_remote_kernel_info_cb(-1, 0, k);
}

/* Ask kernel_info again until the kernel answers or the time is up. */
static void
agent_remote_kernel_info_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_kernel	*k = arg;
	struct timeval		 tv = { 0, AGENT_REMOTE_INFO_MS * 1000 };
	char			 id[37], *why;

	if (k->state != AGENT_REMOTE_CONNECTING)
		return;
	if (util_mono_ms() > k->ready_by) {
		xasprintf(&why, "kernel %s on %s did not answer kernel_info "
		    "within %d s", k->name, k->d->url,
		    AGENT_REMOTE_READY_MS / 1000);
		agent_remote_kernel_fail(k, why);
		free(why);
		return;
	}
	agent_kernel_send(k, AGENT_CHANNEL_SHELL, "kernel_info_request", NULL,
	    id);
	evtimer_add(k->info_ev, &tv);
}

/* Give up on the kernel: before ready it failed, after it died. */
static void
agent_remote_kernel_fail(struct agent_kernel *k, const char *why)
{
	enum agent_remote_state	 was = k->state;
	void			(*done)(struct agent_kernel *, void *);

	k->state = AGENT_REMOTE_DEAD;
	evtimer_del(k->info_ev);
	evtimer_del(k->rejoin_ev);
	free(k->why);
	k->why = xstrdup(why);
	if (was == AGENT_REMOTE_READY || was == AGENT_REMOTE_REJOINING)
		agent_died(k, why);
	else if (was == AGENT_REMOTE_STOPPING && k->done != NULL) {
		done = k->done;
		k->done = NULL;
		done(k, k->done_arg);
	} else if (was != AGENT_REMOTE_DEAD)
		agent_failed(k, why);
}

static int
agent_remote_kernel_channel(const char *name, enum agent_channel *ch)
{
	if (strcmp(name, "shell") == 0)
		*ch = AGENT_CHANNEL_SHELL;
	else if (strcmp(name, "iopub") == 0)
		*ch = AGENT_CHANNEL_IOPUB;
	else if (strcmp(name, "stdin") == 0)
		*ch = AGENT_CHANNEL_STDIN;
	else if (strcmp(name, "control") == 0)
		*ch = AGENT_CHANNEL_CONTROL;
	else
		return (-1);
	return (0);
}

static const char *
agent_remote_kernel_channel_name(enum agent_channel ch)
{
	switch (ch) {
	case AGENT_CHANNEL_SHELL:
		return ("shell");
	case AGENT_CHANNEL_CONTROL:
		return ("control");
	case AGENT_CHANNEL_STDIN:
		return ("stdin");
	case AGENT_CHANNEL_IOPUB:
		return ("iopub");
	default:
		return (NULL);
	}
}

/* One message from the server. */
static void
agent_remote_kernel_message(void *arg, int binary, const u_char *data,
    size_t len)
{
	struct agent_kernel	*k = arg;
	struct agent_wire_msg	*m;
	struct json_object	*c, *v;
	enum agent_channel	 ch;
	const char		*type, *state;
	char			*channel, *cause, *why;

	if ((m = agent_remote_ws_decode(k->v1, binary, data, len, &channel,
	    &cause)) == NULL) {
		log_warnx("kernel %s: dropped a message: %s", k->id, cause);
		free(cause);
		return;
	}
	if (agent_remote_kernel_channel(channel, &ch) != 0) {
		log_warnx("kernel %s: dropped a message on channel %.32s",
		    k->id, channel);
		goto out;
	}
	type = agent_wire_msg_type(m);
	c = agent_wire_msg_content(m);
	log_debug("%s: %s %s", __func__, channel, type);
	if (k->state == AGENT_REMOTE_CONNECTING) {
		if (ch == AGENT_CHANNEL_SHELL &&
		    strcmp(type, "kernel_info_reply") == 0) {
			evtimer_del(k->info_ev);
			json_object_put(k->info);
			k->info = json_object_get(c);
			k->state = AGENT_REMOTE_READY;
			agent_ready(k, k->info);
		}
		goto out;
	}
	if (k->state != AGENT_REMOTE_READY && k->state != AGENT_REMOTE_STOPPING)
		goto out;
	/* The server restarting or losing the kernel behind our back. */
	if (k->state == AGENT_REMOTE_READY && ch == AGENT_CHANNEL_IOPUB &&
	    strcmp(type, "status") == 0 &&
	    json_object_object_get_ex(c, "execution_state", &v) &&
	    (state = json_object_get_string(v)) != NULL &&
	    (strcmp(state, "restarting") == 0 || strcmp(state, "dead") == 0) &&
	    agent_wire_msg_parent_id(m) == NULL) {
		xasprintf(&why, "the kernel on %s died (the server reports it "
		    "%s)", k->d->url, state);
		agent_remote_kernel_fail(k, why);
		free(why);
		goto out;
	}
	/* Introspection and stdin first, as the local agent (decision 022). */
	if (agent_introspect_message(k, ch, m))
		goto out;
	if (ch == AGENT_CHANNEL_STDIN && agent_stdin_message(k, m))
		goto out;
	agent_exec_message(k, ch, m);
out:
	agent_wire_msg_free(m);
	free(channel);
}

/* The WebSocket is gone. */
static void
agent_remote_kernel_closed(void *arg, const char *why)
{
	struct agent_kernel	*k = arg;
	struct timeval		 tv = { 0, AGENT_REMOTE_REJOIN_FIRST_MS * 1000 };
	char			*msg;

	if (k->state == AGENT_REMOTE_STOPPING && k->restart)
		return;		/* the restart's answer reconnects */
	if ((k->state == AGENT_REMOTE_READY ||
	    k->state == AGENT_REMOTE_REJOINING) &&
	    k->rejoins < AGENT_REMOTE_REJOIN_TRIES) {
		log_warnx("kernel %s: WebSocket lost (%s); asking %s whether "
		    "it kept the kernel", k->id, why, k->d->url);
		if (k->state == AGENT_REMOTE_READY) {
			k->rejoin_by = util_mono_ms() +
			    agent_remote_kernel_window();
			k->rejoin_ms = AGENT_REMOTE_REJOIN_FIRST_MS;
		}
		k->state = AGENT_REMOTE_REJOINING;
		if (k->rejoins++ == 0)
			agent_remote_kernel_rejoin(-1, 0, k);
		else
			evtimer_add(k->rejoin_ev, &tv);
		return;
	}
	xasprintf(&msg, "lost the kernel on %s: %s", k->d->url, why);
	agent_remote_kernel_fail(k, msg);
	free(msg);
}

/* The window of a lost WebSocket: RUNTIMED_REMOTE_REJOIN_MS, else 20 s. */
static int64_t
agent_remote_kernel_window(void)
{
	const char	*s = getenv("RUNTIMED_REMOTE_REJOIN_MS");
	long long	 v;
	char		*end;

	if (s != NULL) {
		v = strtoll(s, &end, 10);
		if (*s != '\0' && *end == '\0' && v >= 100 && v <= 3600000)
			return (v);
	}
	return (AGENT_REMOTE_REJOIN_WINDOW_MS);
}

/*
 * Does the server still have our kernel?  GET api/kernels, the list: a
 * Jupyter Server answers it with a JSON array whether or not it has our
 * kernel, so an answer that is not one is not the server's word (a
 * proxy without its routes yet, the hub) and is asked again.
 */
static void
agent_remote_kernel_rejoin(evutil_socket_t fd, short events, void *arg)
{
	struct agent_kernel	*k = arg;
	char			*msg;

	if (k->state != AGENT_REMOTE_REJOINING)
		return;
	/* A token rotated meanwhile: the reconnect uses the new one. */
	domain_reload_token(k->d);
	agent_redact_add(AGENT_REMOTE_TOKEN_LABEL, k->d->token, 1);
	if (jserver_request(k->base, k->d, "GET", "api/kernels", NULL, 0,
	    JSERVER_TIMEOUT, agent_remote_kernel_checked, k) != 0) {
		xasprintf(&msg, "lost the kernel on %s: cannot reach it",
		    k->d->url);
		agent_remote_kernel_fail(k, msg);
		free(msg);
	}
}

/* In the server's list of kernels: 1 ours is there, 0 not, -1 no list. */
static int
agent_remote_kernel_listed(struct agent_kernel *k, struct jserver_reply *r)
{
	struct json_object	*o, *item, *v;
	char			*why;
	size_t			 i;
	int			 found = 0;

	if (r->status != 200)
		return (-1);
	if ((o = jserver_reply_json(r, &why)) == NULL) {
		free(why);
		return (-1);
	}
	if (!json_object_is_type(o, json_type_array)) {
		json_object_put(o);
		return (-1);
	}
	for (i = 0; i < json_object_array_length(o); i++) {
		item = json_object_array_get_idx(o, i);
		if (json_object_object_get_ex(item, "id", &v) &&
		    json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), k->id) == 0)
			found = 1;
	}
	json_object_put(o);
	return (found);
}

/* The server's answer: reconnect to a kept kernel, else it is gone. */
static void
agent_remote_kernel_checked(struct jserver_reply *r, void *arg)
{
	struct agent_kernel	*k = arg;
	struct timeval		 tv;
	char			*path, *cause, *msg, *why;
	const char		*force;
	int64_t			 left;
	int			 offer, listed, wait;

	if (k->state != AGENT_REMOTE_REJOINING)
		return;
	if ((listed = agent_remote_kernel_listed(k, r)) == -1) {
		why = jserver_reply_message(r);
		if ((left = k->rejoin_by - util_mono_ms()) > 0) {
			/* Not the server's word: a proxy, the hub, a blip. */
			wait = left < k->rejoin_ms ? (int)left : k->rejoin_ms;
			log_info("kernel %s: %s answers not as itself (%s); "
			    "asking again in %d ms", k->id, k->d->url, why,
			    wait);
			free(why);
			tv.tv_sec = wait / 1000;
			tv.tv_usec = (wait % 1000) * 1000;
			evtimer_add(k->rejoin_ev, &tv);
			if ((k->rejoin_ms *= 2) > AGENT_REMOTE_REJOIN_MAX_MS)
				k->rejoin_ms = AGENT_REMOTE_REJOIN_MAX_MS;
			return;
		}
		xasprintf(&msg, "lost the kernel on %s: the server did not "
		    "answer as itself for %lld s (%s)", k->d->url,
		    (long long)agent_remote_kernel_window() / 1000, why);
		free(why);
		agent_remote_kernel_fail(k, msg);
		free(msg);
		return;
	}
	if (listed == 0) {
		xasprintf(&msg, "the kernel on %s is gone (the server no "
		    "longer has it)", k->d->url);
		agent_remote_kernel_fail(k, msg);
		free(msg);
		return;
	}
	agent_remote_ws_free(k->ws);
	force = getenv("RUNTIMED_REMOTE_WS");
	offer = force == NULL || strcmp(force, "json") != 0;
	/* The same session id: the server replays what it buffered. */
	xasprintf(&path, "api/kernels/%s/channels?session_id=%s", k->id,
	    k->session);
	k->ws = agent_remote_ws_create(k->base, k->d, path, offer,
	    &agent_remote_kernel_cbs, k, &cause);
	free(path);
	if (k->ws == NULL) {
		agent_remote_kernel_fail(k, cause);
		free(cause);
	}
}

int
agent_kernel_is_ready(struct agent_kernel *k)
{
	return (k->state == AGENT_REMOTE_READY);
}

int
agent_kernel_is_running(struct agent_kernel *k)
{
	return (k->state == AGENT_REMOTE_POSTING ||
	    k->state == AGENT_REMOTE_CONNECTING ||
	    k->state == AGENT_REMOTE_READY ||
	    k->state == AGENT_REMOTE_REJOINING ||
	    k->state == AGENT_REMOTE_STOPPING);
}

const char *
agent_remote_kernel_name(struct agent_kernel *k)
{
	return (k->name);
}

/* No stderr to tail: the server keeps the kernel's log. */
char *
agent_kernel_tail(struct agent_kernel *k)
{
	char	*s;

	xasprintf(&s, "(the kernel runs on %s; its log is the server's)",
	    k->d->url);
	return (s);
}

int
agent_kernel_send(struct agent_kernel *k, enum agent_channel channel,
    const char *msg_type, struct json_object *content, char *msg_id)
{
	return (agent_kernel_send_parent(k, channel, msg_type, content, NULL,
	    msg_id));
}

/* Send on a channel through the WebSocket, in its encoding. */
int
agent_kernel_send_parent(struct agent_kernel *k, enum agent_channel channel,
    const char *msg_type, struct json_object *content,
    struct json_object *parent, char *msg_id)
{
	const char	*name;
	char		*parts[AGENT_WIRE_NPARTS], *out;
	size_t		 len;
	int		 rc;

	if (k->ws == NULL || (name =
	    agent_remote_kernel_channel_name(channel)) == NULL)
		return (-1);
	if (agent_wire_encode("", k->session, msg_type, content, parent,
	    msg_id, parts) != 0)
		return (-1);
	out = agent_remote_ws_encode(k->v1, name, parts, &len);
	agent_wire_parts_free(parts);
	rc = agent_remote_ws_send(k->ws, k->v1 ? AGENT_REMOTE_WS_BINARY :
	    AGENT_REMOTE_WS_TEXT, out, len);
	free(out);
	if (rc == 0)
		log_debug("%s: sent %s %s", __func__, msg_type, msg_id);
	return (rc);
}

/* An interrupt the daemon waits for: its request id. */
struct agent_remote_interrupt {
	struct agent_kernel	*k;
	uint32_t		 id;
};

/*
 * The server's answer to POST .../interrupt is the daemon's: OK when it
 * took it, refused when it would not (403: the token may not), else
 * kernel_unavailable.  A refused interrupt interrupts nothing: the run
 * goes on, and the daemon leaves it so.
 */
static void
agent_remote_kernel_interrupted(struct jserver_reply *r, void *arg)
{
	struct agent_remote_interrupt	*ai = arg;
	struct agent_kernel		*k = ai->k;
	char				*msg;

	if (r->status == 204 || r->status == 200)
		agent_send_ok(ai->id);
	else {
		msg = jserver_reply_message(r);
		log_warnx("kernel %s: interrupt: %s", k->id, msg);
		if (r->status == 401 || r->status == 403)
			agent_send_error(ai->id, PROTO_E_REFUSED,
			    "%s refused to "
			    "interrupt the kernel (%s): the run goes on; the "
			    "token in %s may not do this", k->d->url, msg,
			    k->d->token_file);
		else
			agent_send_error(ai->id, PROTO_E_KERNEL_UNAVAILABLE,
			    "%s did not interrupt the kernel (%s): the run "
			    "goes on",
			    k->d->url, msg);
		free(msg);
	}
	free(ai);
}

/* AGENT_INTERRUPT: POST .../interrupt, answered with the server's word. */
void
agent_remote_kernel_interrupt(struct agent_kernel *k, uint32_t id)
{
	struct agent_remote_interrupt	*ai;
	char				*path;

	if (k->id == NULL || k->state == AGENT_REMOTE_DEAD) {
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE, "no kernel is "
		    "running on %s", k->d->url);
		return;
	}
	domain_reload_token(k->d);
	agent_redact_add(AGENT_REMOTE_TOKEN_LABEL, k->d->token, 1);
	ai = xcalloc(1, sizeof *ai);
	ai->k = k;
	ai->id = id;
	xasprintf(&path, "api/kernels/%s/interrupt", k->id);
	if (jserver_request(k->base, k->d, "POST", path, "{}", 2,
	    JSERVER_TIMEOUT, agent_remote_kernel_interrupted, ai) != 0) {
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE,
		    "cannot reach %s",
		    k->d->url);
		free(ai);
	}
	free(path);
}

/* The link's own call: AGENT_INTERRUPT goes through the hook above. */
int
agent_kernel_interrupt(struct agent_kernel *k, char **cause)
{
	xasprintf(cause, "an interrupt of a server's kernel is answered by "
	    "the server");
	return (-1);
}

static void
agent_remote_kernel_stopped(struct jserver_reply *r, void *arg)
{
	struct agent_kernel	*k = arg;
	void			(*done)(struct agent_kernel *, void *);
	char			*msg;

	if (r->status < 200 || r->status > 299) {
		msg = jserver_reply_message(r);
		if (!k->restart && r->status != 404)
			log_warnx("kernel %s: %s refused to shut it down (%s): "
			    "it still runs there until the server culls it",
			    k->id, k->d->url, msg);
		else
			log_warnx("kernel %s: %s: %s", k->id, k->restart ?
			    "restart" : "shutdown", msg);
		if (!k->restart && r->status != 404 && r->status != 0) {
			free(k->why);
			xasprintf(&k->why, "%s refused to shut the kernel "
			    "down (%s)", k->d->url, msg);
		}
		/* Said to the daemon, for the tool that asked (restart). */
		if (!k->restart && r->status != 404) {
			free(k->refused);
			if (r->status == 0)
				xasprintf(&k->refused, "%s did not answer the "
				    "shutdown of kernel %s (%s): it may still "
				    "run there", k->d->url, k->id, msg);
			else
				xasprintf(&k->refused, "%s refused to shut "
				    "kernel %s down (%s): it may still run "
				    "there, until the server culls it or it is "
				    "shut down from the server's side",
				    k->d->url, k->id, msg);
		}
		free(msg);
		if (!k->restart) {
			/* Gone already, or the server is: either way over. */
			free(k->id);
			k->id = NULL;
		}
	} else if (!k->restart) {
		free(k->id);
		k->id = NULL;
	}
	k->state = k->restart && k->id != NULL && r->status >= 200 &&
	    r->status <= 299 ? AGENT_REMOTE_NEW : AGENT_REMOTE_DEAD;
	if (k->restart && k->state == AGENT_REMOTE_DEAD) {
		free(k->why);
		msg = jserver_reply_message(r);
		xasprintf(&k->why, "restart on %s failed: %s", k->d->url, msg);
		free(msg);
	}
	if ((done = k->done) != NULL) {
		k->done = NULL;
		done(k, k->done_arg);
	}
}

/*
 * Shut the kernel down (DELETE) or restart it (POST .../restart); done
 * runs when the server has answered.  A restarted kernel is then
 * reconnected with agent_kernel_start.
 */
void
agent_kernel_shutdown(struct agent_kernel *k, int restart,
    void (*done)(struct agent_kernel *, void *), void *arg)
{
	char	*path;
	int	 rc;

	evtimer_del(k->info_ev);
	evtimer_del(k->rejoin_ev);
	k->done = done;
	k->done_arg = arg;
	k->restart = restart;
	if (k->id == NULL) {
		k->state = AGENT_REMOTE_DEAD;
		k->done = NULL;
		done(k, arg);
		return;
	}
	k->state = AGENT_REMOTE_STOPPING;
	free(k->refused);
	k->refused = NULL;
	domain_reload_token(k->d);
	agent_redact_add(AGENT_REMOTE_TOKEN_LABEL, k->d->token, 1);
	if (restart) {
		xasprintf(&path, "api/kernels/%s/restart", k->id);
		rc = jserver_request(k->base, k->d, "POST", path, "{}", 2,
		    JSERVER_TIMEOUT * 3, agent_remote_kernel_stopped, k);
	} else {
		xasprintf(&path, "api/kernels/%s", k->id);
		rc = jserver_request(k->base, k->d, "DELETE", path, NULL, 0,
		    JSERVER_TIMEOUT, agent_remote_kernel_stopped, k);
	}
	free(path);
	if (rc != 0) {
		k->state = AGENT_REMOTE_DEAD;
		k->done = NULL;
		done(k, arg);
	}
}

/* After a shutdown: can agent_kernel_start bring it back? */
int
agent_kernel_start_ok(struct agent_kernel *k)
{
	return (k->state == AGENT_REMOTE_NEW && k->id != NULL);
}

/* Why the last shutdown may have left the kernel running, or NULL. */
const char *
agent_remote_kernel_refused(struct agent_kernel *k)
{
	return (k->refused);
}

/* Why the kernel is not there, for the daemon. */
const char *
agent_remote_kernel_why(struct agent_kernel *k)
{
	return (k->why != NULL ? k->why : "the kernel is not running");
}

/*
 * --list-kernelspecs for a domain: GET api/kernelspecs as runtimed-agent
 * prints the local ones, [{name, display_name, language}], sorted.
 */
int
agent_remote_kernel_list_specs(struct domain *d)
{
	struct jserver_reply	 r;
	struct json_object	*o, *specs, *list, *item, *spec, *v;
	char			*why;

	if (jserver_call(d, "GET", "api/kernelspecs", NULL, 0,
	    JSERVER_TIMEOUT, &r) != 0 || r.status != 200) {
		why = jserver_reply_message(&r);
		fprintf(stderr, "runtimed-agent-remote: %s: %s\n", d->url,
		    why);
		free(why);
		jserver_reply_clear(&r);
		return (1);
	}
	if ((o = jserver_reply_json(&r, &why)) == NULL) {
		fprintf(stderr, "runtimed-agent-remote: %s\n", why);
		free(why);
		jserver_reply_clear(&r);
		return (1);
	}
	jserver_reply_clear(&r);
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
					    "display_name",
					    json_object_get(v));
				if (json_object_object_get_ex(spec,
				    "language", &v))
					json_object_object_add(item,
					    "language", json_object_get(v));
			}
			json_object_array_add(list, item);
		}
	}
	printf("%s\n", json_object_to_json_string_ext(list,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(list);
	json_object_put(o);
	return (fflush(stdout) == 0 ? 0 : 1);
}
