/* SPDX-License-Identifier: ISC */
/*
 * proxy-replay.c: what carries the client's session over to each new
 * worker, so the client never sees the worker change:
 *
 * - the client's initialize (params and line) is kept, so a new worker
 *   can be initialized privately and the client never sees it;
 * - the proxy's own requests to a worker (that initialize, a tools/list
 *   that refreshes the catalog, a subscription for each lease that
 *   carries over), with ids the client cannot have sent, and what their
 *   answers change;
 * - the reconnect tool replaces the worker and is answered once the new
 *   one is initialized.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

/* Ids of the proxy's own requests to a worker start with this. */
#define PROXY_REPLAY_PRIVATE	"\"runtimed-mcp-proxy-"

struct proxy_replay_priv {
	char			*id;
	enum proxy_replay_kind	 kind;
	TAILQ_ENTRY(proxy_replay_priv) entry;
};
TAILQ_HEAD(proxy_replay_privs, proxy_replay_priv);

/* A reconnect call waiting for the next worker. */
struct proxy_replay_reconnect {
	char			*id;
	TAILQ_ENTRY(proxy_replay_reconnect) entry;
};
TAILQ_HEAD(proxy_replay_reconnects, proxy_replay_reconnect);

static struct proxy_replay_privs	 proxy_replay_privs =
    TAILQ_HEAD_INITIALIZER(proxy_replay_privs);
static u_int			 proxy_replay_nprivate;
static struct proxy_replay_reconnects	 proxy_replay_reconnects =
    TAILQ_HEAD_INITIALIZER(proxy_replay_reconnects);
static long			 proxy_replay_prev_pid;	/* for reconnect */

/* The client's initialize, for replay to later workers. */
static char			*proxy_replay_init_line;
static size_t			 proxy_replay_init_len;
static char			*proxy_replay_init_params;
static char			*proxy_replay_init_id;
static int			 proxy_replay_init_answered;
static int			 proxy_replay_initialized; /* sent by client */
static u_int			 proxy_replay_generation;  /* workers ready */
/* What to tell the client once it is initialized. */
static int			 proxy_replay_tell_tools;
static int			 proxy_replay_tell_resources;

static void	proxy_replay_tell(void);
static void	proxy_replay_reconnect_free(struct proxy_replay_reconnect *);

/* One request of the proxy's own to the current worker. */
void
proxy_replay_private(enum proxy_replay_kind kind, const char *method,
    const char *params)
{
	static const char		*names[] = { "replay", "discover",
					    "subscribe" };
	struct proxy_replay_priv	*p;
	char				*line;

	p = xcalloc(1, sizeof *p);
	p->kind = kind;
	xasprintf(&p->id, "%s%s-%u\"", PROXY_REPLAY_PRIVATE, names[kind],
	    ++proxy_replay_nprivate);
	xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\","
	    "\"params\":%s}", p->id, method, params);
	if (proxy_worker_send(line, strlen(line)) != 0) {
		free(line);
		free(p->id);
		free(p);
		return;
	}
	free(line);
	TAILQ_INSERT_TAIL(&proxy_replay_privs, p, entry);
}

/* Forget the proxy's own requests: their worker is gone. */
void
proxy_replay_privs_clear(void)
{
	struct proxy_replay_priv	*p;

	while ((p = TAILQ_FIRST(&proxy_replay_privs)) != NULL) {
		TAILQ_REMOVE(&proxy_replay_privs, p, entry);
		free(p->id);
		free(p);
	}
}

/* Whether id (as JSON text) is one of the proxy's own requests. */
int
proxy_replay_owns(const char *id)
{
	return (strncmp(id, PROXY_REPLAY_PRIVATE,
	    strlen(PROXY_REPLAY_PRIVATE)) == 0);
}

/* Tell an initialized client what changed (now, or once initialized). */
static void
proxy_replay_tell(void)
{
	if (!proxy_replay_initialized)
		return;
	if (proxy_replay_tell_tools)
		proxy_answer_notify("notifications/tools/list_changed");
	if (proxy_replay_tell_resources)
		proxy_answer_notify("notifications/resources/list_changed");
	proxy_replay_tell_tools = proxy_replay_tell_resources = 0;
}

/* The client sent notifications/initialized. */
void
proxy_replay_client_initialized(void)
{
	proxy_replay_initialized = 1;
	proxy_replay_tell();
}

/* The client's initialize request (obj parsed from line), kept. */
void
proxy_replay_remember(struct json_object *obj, const char *line,
    size_t len, const char *id)
{
	struct json_object	*params;

	free(proxy_replay_init_line);
	free(proxy_replay_init_params);
	free(proxy_replay_init_id);
	proxy_replay_init_line = xmalloc(len);
	memcpy(proxy_replay_init_line, line, len);
	proxy_replay_init_len = len;
	if (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_is_type(params, json_type_object))
		proxy_replay_init_params = xstrdup(
		    json_object_to_json_string_ext(params,
		    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		proxy_replay_init_params = xstrdup("{}");
	proxy_replay_init_id = xstrdup(id);
	proxy_replay_init_answered = 0;
}

/*
 * Whether id is the client's initialize, not yet answered; *line and
 * *len (borrowed) get the line it came as.
 */
int
proxy_replay_init_pending(const char *id, const char **line, size_t *len)
{
	if (proxy_replay_init_id == NULL || proxy_replay_init_answered ||
	    strcmp(id, proxy_replay_init_id) != 0)
		return (0);
	if (line != NULL) {
		*line = proxy_replay_init_line;
		*len = proxy_replay_init_len;
	}
	return (1);
}

/* The worker answered the client's own initialize: pass it on. */
void
proxy_replay_init_answer(const char *json, size_t len)
{
	proxy_replay_init_answered = 1;
	proxy_stdio_write_line(json, len);
	proxy_replay_worker_ready();
}

/*
 * A new worker completed its handshake: initialize it privately if the
 * client's initialize was answered by an earlier one; 0 if there is
 * nothing to replay (the client's own initialize, if any, is to come).
 */
int
proxy_replay_start(void)
{
	if (proxy_replay_init_params == NULL || !proxy_replay_init_answered)
		return (0);
	proxy_replay_private(PROXY_REPLAY_INIT, "initialize",
	    proxy_replay_init_params);
	return (1);
}

/*
 * The current worker is initialized (by the client's own initialize or a
 * replayed one): learn its catalog, subscribe it to the leases that
 * carry over, and answer reconnect calls.
 */
void
proxy_replay_worker_ready(void)
{
	proxy_replay_generation++;
	if (proxy_replay_generation > 1) {
		/* The old worker's handles, and their resources, are gone. */
		proxy_replay_tell_resources = 1;
		proxy_replay_tell();
	}
	proxy_replay_private(PROXY_REPLAY_DISCOVER, "tools/list",
		    PROXY_CATALOG_ASK);
	proxy_lease_foreach(proxy_subscribe_worker);
	proxy_replay_reconnected(NULL);
}

/* The answer to one of the proxy's own requests. */
void
proxy_replay_answer(struct json_object *obj, const char *id)
{
	static const char		 note[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct proxy_replay_priv	*p;
	struct json_object		*err, *res;

	TAILQ_FOREACH(p, &proxy_replay_privs, entry) {
		if (strcmp(p->id, id) == 0)
			break;
	}
	if (p == NULL)
		return;		/* for an earlier worker */
	TAILQ_REMOVE(&proxy_replay_privs, p, entry);
	err = json_object_object_get(obj, "error");
	switch (p->kind) {
	case PROXY_REPLAY_INIT:
		if (err != NULL)
			log_warnx("worker refused the replayed initialize: %s",
			    json_object_to_json_string(err));
		if (proxy_replay_initialized)
			proxy_worker_send(note, sizeof note - 1);
		log_info("worker initialized from the remembered initialize");
		proxy_relay_resume();
		proxy_replay_worker_ready();
		break;
	case PROXY_REPLAY_DISCOVER:
		if (err == NULL &&
		    json_object_object_get_ex(obj, "result", &res) &&
		    proxy_catalog_discovered(res)) {
			proxy_replay_tell_tools = 1;
			proxy_replay_tell_resources = 1;
			proxy_replay_tell();
		}
		break;
	case PROXY_REPLAY_SUBSCRIBE:
		if (err != NULL)
			log_info("worker refused a subscription: %s",
			    json_object_to_json_string(err));
		break;
	}
	free(p->id);
	free(p);
}

static void
proxy_replay_reconnect_free(struct proxy_replay_reconnect *r)
{
	free(r->id);
	free(r);
}

/* The reconnect tool: replace the worker, answer when the next is up. */
void
proxy_replay_reconnect(struct json_object *obj, const char *id)
{
	struct json_object		*params, *args;
	struct proxy_replay_reconnect	*r;
	int				 busy;

	busy = !TAILQ_EMPTY(&proxy_replay_reconnects);
	if (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_object_get_ex(params, "arguments", &args) &&
	    args != NULL && (!json_object_is_type(args, json_type_object) ||
	    json_object_object_length(args) != 0)) {
		proxy_answer_tool_error(id, PROTO_E_INVALID_ARGUMENT,
		    "reconnect takes no arguments");
		return;
	}
	r = xcalloc(1, sizeof *r);
	r->id = xstrdup(id);
	TAILQ_INSERT_TAIL(&proxy_replay_reconnects, r, entry);
	if (busy)
		return;		/* one replacement answers them all */
	proxy_replay_prev_pid = proxy_worker_pid();
	proxy_worker_replace();
}

/*
 * The reconnect calls waiting for a worker: answer them, or refuse them
 * with why (the crash budget tripped).
 */
void
proxy_replay_reconnected(const char *why)
{
	struct proxy_replay_reconnect	*r;
	long				 pid = proxy_worker_pid();

	while ((r = TAILQ_FIRST(&proxy_replay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_replay_reconnects, r, entry);
		if (why != NULL)
			proxy_answer_unavailable(r->id, "tools/call", why);
		else
			proxy_answer_reconnected(r->id, pid,
			    proxy_replay_prev_pid);
		proxy_replay_reconnect_free(r);
	}
	proxy_shutdown_check();
}

/* notifications/cancelled for id: no answer is due to that reconnect. */
void
proxy_replay_cancel(const char *id)
{
	struct proxy_replay_reconnect	*r;

	TAILQ_FOREACH(r, &proxy_replay_reconnects, entry) {
		if (strcmp(r->id, id) == 0) {
			TAILQ_REMOVE(&proxy_replay_reconnects, r, entry);
			proxy_replay_reconnect_free(r);
			break;
		}
	}
}

/* Reconnect calls still to answer. */
int
proxy_replay_pending(void)
{
	return (!TAILQ_EMPTY(&proxy_replay_reconnects));
}

/* Shutting down: the reconnect calls will not be answered now. */
void
proxy_replay_abandon(void)
{
	struct proxy_replay_reconnect	*r;

	while ((r = TAILQ_FIRST(&proxy_replay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_replay_reconnects, r, entry);
		proxy_answer_tool_error(r->id, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "runtimed-mcp is shutting down");
		proxy_replay_reconnect_free(r);
	}
}

void
proxy_replay_free(void)
{
	struct proxy_replay_reconnect	*r;

	while ((r = TAILQ_FIRST(&proxy_replay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_replay_reconnects, r, entry);
		proxy_replay_reconnect_free(r);
	}
	proxy_replay_privs_clear();
	free(proxy_replay_init_line);
	free(proxy_replay_init_params);
	free(proxy_replay_init_id);
}
