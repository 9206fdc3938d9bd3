/* SPDX-License-Identifier: ISC */
/*
 * proxy-relay.c: the JSON-RPC bookkeeping between the client and
 * whichever worker is current.  Messages pass through as the bytes the
 * client sent; the relay only parses them to learn ids and methods:
 *
 * - the client's initialize (params and line) is kept, so a new worker
 *   can be initialized privately and the client never sees it;
 * - tools/list is answered from the cached catalog (proxy-catalog.c),
 *   which a private tools/list refreshes from each new worker;
 * - requests sent to a worker stay "in flight" until it answers.  When
 *   the worker dies first, a request without effects (a read-only tool,
 *   by the catalog's readOnlyHint, or any request but tools/call) is
 *   sent once more to the next worker; a mutation is answered
 *   outcome_unknown and never sent again, because it may or may not have
 *   happened (docs/errors.md, docs/durability.md);
 * - resources/subscribe and subscriptions/listen take leases
 *   (proxy-subs.c), so the worker sees one subscription per URI;
 * - the reconnect tool replaces the worker and is answered once the new
 *   one is initialized;
 * - while no worker is up, messages wait in a queue; while the crash
 *   budget is tripped, requests are refused with a reason.
 *
 * What the proxy answers itself is shaped in proxy-answer.c.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

/* Requests larger than this are not kept to send to a next worker. */
#define PROXY_RELAY_RETRY_MAX	(1024 * 1024)

/* Ids of the proxy's own requests to a worker start with this. */
#define PROXY_RELAY_PRIVATE	"\"runtimed-mcp-proxy-"

struct proxy_relay_msg {
	char			*line;	/* kept while it may be sent again */
	size_t			 len;
	char			*id;	/* JSON text; NULL unless a request */
	char			*method;
	int			 again;	/* may be sent to the next worker */
	int			 retried;
	char			*sub_uri; /* subscribe that took a first lease */
	int			 tools_list; /* before any catalog: learn it */
	TAILQ_ENTRY(proxy_relay_msg) entry;
};
TAILQ_HEAD(proxy_relay_msgs, proxy_relay_msg);

enum proxy_relay_state {
	PROXY_RELAY_DOWN,	/* no worker link: queue */
	PROXY_RELAY_REPLAYING,	/* private initialize in flight: queue */
	PROXY_RELAY_UP,		/* relay */
	PROXY_RELAY_UNAVAILABLE, /* crash budget tripped: refuse */
};

enum proxy_relay_private {
	PROXY_RELAY_REPLAY,	/* initialize for a new worker */
	PROXY_RELAY_DISCOVER,	/* tools/list for the catalog */
	PROXY_RELAY_SUBSCRIBE,	/* a lease's worker subscription */
};

struct proxy_relay_priv {
	char			*id;
	enum proxy_relay_private kind;
	TAILQ_ENTRY(proxy_relay_priv) entry;
};
TAILQ_HEAD(proxy_relay_privs, proxy_relay_priv);

static enum proxy_relay_state	 proxy_relay_state = PROXY_RELAY_DOWN;
static struct proxy_relay_msgs	 proxy_relay_queue =
    TAILQ_HEAD_INITIALIZER(proxy_relay_queue);
static u_int			 proxy_relay_queued;
static size_t			 proxy_relay_queued_len;	/* bytes */
static int			 proxy_relay_flushing;
static struct proxy_relay_msgs	 proxy_relay_flight =
    TAILQ_HEAD_INITIALIZER(proxy_relay_flight);
/* reconnect calls waiting for the next worker. */
static struct proxy_relay_msgs	 proxy_relay_reconnects =
    TAILQ_HEAD_INITIALIZER(proxy_relay_reconnects);
static struct proxy_relay_privs	 proxy_relay_privs =
    TAILQ_HEAD_INITIALIZER(proxy_relay_privs);
static u_int			 proxy_relay_nprivate;
static char			*proxy_relay_why;	/* when unavailable */

/* The client's initialize, for replay to later workers. */
static char			*proxy_relay_init_line;
static size_t			 proxy_relay_init_len;
static char			*proxy_relay_init_params;
static char			*proxy_relay_init_id;
static int			 proxy_relay_init_answered;
static int			 proxy_relay_initialized; /* sent by client */
static u_int			 proxy_relay_generation;  /* workers ready */
static int			 proxy_relay_tell_tools;  /* after initialized */
static int			 proxy_relay_tell_resources;
static long			 proxy_relay_prev_pid;	/* for reconnect */

static struct json_object	*proxy_relay_parse(const char *, size_t);
static void	proxy_relay_classify(struct json_object *, char **,
		    const char **);
static const char	*proxy_relay_param(struct json_object *, const char *);
static void	proxy_relay_refuse(const char *, const char *);
static struct proxy_relay_msg	*proxy_relay_msg_create(const char *, size_t,
		    const char *, const char *);
static void	proxy_relay_msg_free(struct proxy_relay_msg *);
static struct proxy_relay_msg	*proxy_relay_flight_take(const char *);
static void	proxy_relay_enqueue(struct proxy_relay_msg *);
static void	proxy_relay_send(struct proxy_relay_msg *, const char *,
		    size_t);
static void	proxy_relay_flush_queue(void);
static void	proxy_relay_private(enum proxy_relay_private, const char *,
		    const char *);
static void	proxy_relay_privs_clear(void);
static void	proxy_relay_tell(void);
static void	proxy_relay_subscribe_worker(const char *, const char *);
static void	proxy_relay_resubscribe(const char *);
static void	proxy_relay_unsubscribe(const char *);
static void	proxy_relay_reconnected(int);
static void	proxy_relay_worker_ready(void);
static void	proxy_relay_remember_init(struct json_object *, const char *,
		    size_t, const char *);
static int	proxy_relay_modern(struct json_object *);
static int	proxy_relay_tools_list(struct json_object *, const char *);
static void	proxy_relay_reconnect(struct json_object *, const char *);
static int	proxy_relay_may_repeat(struct json_object *, const char *);
static void	proxy_relay_listen(struct json_object *, const char *);
static int	proxy_relay_subscription(struct json_object *, const char *,
		    const char *, struct proxy_relay_msg *);
static void	proxy_relay_cancelled(struct json_object *);
static void	proxy_relay_private_answer(struct json_object *, const char *);
static int	proxy_relay_list_answer(struct json_object *, const char *);

/* An object message, or NULL (the worker answers what is not one). */
static struct json_object *
proxy_relay_parse(const char *data, size_t len)
{
	struct json_object	*obj;
	char			*cause = NULL;

	obj = jsonrpc_parse(data, len, NULL, NULL, NULL, &cause);
	free(cause);
	if (obj != NULL && !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	return (obj);
}

/* Id (as the JSON text it was sent with; caller frees) and method. */
static void
proxy_relay_classify(struct json_object *obj, char **id, const char **method)
{
	struct json_object	*v;

	*id = NULL;
	*method = NULL;
	if (obj == NULL)
		return;
	if (json_object_object_get_ex(obj, "method", &v) &&
	    json_object_is_type(v, json_type_string))
		*method = json_object_get_string(v);
	if (json_object_object_get_ex(obj, "id", &v) && v != NULL)
		*id = xstrdup(json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN));
}

/* params.<key> as a string, or NULL. */
static const char *
proxy_relay_param(struct json_object *obj, const char *key)
{
	struct json_object	*params, *v;

	if (obj == NULL ||
	    !json_object_object_get_ex(obj, "params", &params) ||
	    !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

/* Refuse a request while the crash budget is tripped. */
static void
proxy_relay_refuse(const char *id, const char *method)
{
	proxy_answer_unavailable(id, method, proxy_relay_why);
}

static struct proxy_relay_msg *
proxy_relay_msg_create(const char *line, size_t len, const char *id,
    const char *method)
{
	struct proxy_relay_msg	*m;

	m = xcalloc(1, sizeof *m);
	if (line != NULL) {
		m->line = xmalloc(len + 1);
		memcpy(m->line, line, len);
		m->line[len] = '\0';
		m->len = len;
	}
	if (id != NULL && method != NULL) {
		m->id = xstrdup(id);
		m->method = xstrdup(method);
	}
	return (m);
}

static void
proxy_relay_msg_free(struct proxy_relay_msg *m)
{
	free(m->line);
	free(m->id);
	free(m->method);
	free(m->sub_uri);
	free(m);
}

static struct proxy_relay_msg *
proxy_relay_flight_take(const char *id)
{
	struct proxy_relay_msg	*m;

	TAILQ_FOREACH(m, &proxy_relay_flight, entry) {
		if (strcmp(m->id, id) == 0) {
			TAILQ_REMOVE(&proxy_relay_flight, m, entry);
			return (m);
		}
	}
	return (NULL);
}

static void
proxy_relay_enqueue(struct proxy_relay_msg *m)
{
	if (proxy_relay_queued >= PROXY_QUEUE_MAX) {
		if (m->id != NULL)
			proxy_answer_error(m->id, -32603, "too many "
			    "requests queued while the worker restarts; "
			    "retry later");
		if (m->sub_uri != NULL)
			proxy_subs_remove("session", m->sub_uri);
		proxy_relay_msg_free(m);
		return;
	}
	TAILQ_INSERT_TAIL(&proxy_relay_queue, m, entry);
	proxy_relay_queued++;
	proxy_relay_queued_len += m->len;
}

/*
 * Send one client line (borrowed) to the worker, or queue a copy of it if
 * the link is gone.  A copy is kept in flight only to send it again to
 * the next worker, and only up to PROXY_RELAY_RETRY_MAX bytes: a larger
 * request is answered "retry" instead, so it is held once, not twice.
 */
static void
proxy_relay_send(struct proxy_relay_msg *m, const char *line, size_t len)
{
	m->len = len;
	if (proxy_relay_state != PROXY_RELAY_UP ||
	    proxy_worker_send(line, len) != 0) {
		m->line = xmalloc(len + 1);
		memcpy(m->line, line, len);
		m->line[len] = '\0';
		proxy_relay_enqueue(m);
		return;
	}
	if (m->id == NULL) {
		proxy_relay_msg_free(m);
		return;
	}
	if (m->again && len <= PROXY_RELAY_RETRY_MAX) {
		m->line = xmalloc(len + 1);
		memcpy(m->line, line, len);
		m->line[len] = '\0';
	} else
		m->again = 0;
	TAILQ_INSERT_TAIL(&proxy_relay_flight, m, entry);
}

static void
proxy_relay_flush_queue(void)
{
	struct proxy_relay_msg	*m;

	/* No new line from stdin may overtake what waited (flow). */
	proxy_relay_flushing = 1;
	while (proxy_relay_state == PROXY_RELAY_UP &&
	    (m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		proxy_relay_queued--;
		proxy_relay_queued_len -= m->len;
		if (proxy_worker_send(m->line, m->len) != 0) {
			TAILQ_INSERT_HEAD(&proxy_relay_queue, m, entry);
			proxy_relay_queued++;
			proxy_relay_queued_len += m->len;
			break;
		}
		if (m->id != NULL) {
			if (!m->again || m->len > PROXY_RELAY_RETRY_MAX) {
				m->again = 0;
				free(m->line);
				m->line = NULL;
			}
			TAILQ_INSERT_TAIL(&proxy_relay_flight, m, entry);
		} else
			proxy_relay_msg_free(m);
	}
	proxy_relay_flushing = 0;
	proxy_stdio_flow();
}

/* One request of the proxy's own to the current worker. */
static void
proxy_relay_private(enum proxy_relay_private kind, const char *method,
    const char *params)
{
	static const char	*names[] = { "replay", "discover", "subscribe" };
	struct proxy_relay_priv	*p;
	char			*line;

	p = xcalloc(1, sizeof *p);
	p->kind = kind;
	xasprintf(&p->id, "%s%s-%u\"", PROXY_RELAY_PRIVATE, names[kind],
	    ++proxy_relay_nprivate);
	xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\","
	    "\"params\":%s}", p->id, method, params);
	if (proxy_worker_send(line, strlen(line)) != 0) {
		free(line);
		free(p->id);
		free(p);
		return;
	}
	free(line);
	TAILQ_INSERT_TAIL(&proxy_relay_privs, p, entry);
}

static void
proxy_relay_privs_clear(void)
{
	struct proxy_relay_priv	*p;

	while ((p = TAILQ_FIRST(&proxy_relay_privs)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_privs, p, entry);
		free(p->id);
		free(p);
	}
}

/* Tell an initialized client what changed (now, or once initialized). */
static void
proxy_relay_tell(void)
{
	if (!proxy_relay_initialized)
		return;
	if (proxy_relay_tell_tools)
		proxy_answer_notify("notifications/tools/list_changed");
	if (proxy_relay_tell_resources)
		proxy_answer_notify("notifications/resources/list_changed");
	proxy_relay_tell_tools = proxy_relay_tell_resources = 0;
}

/* Subscribe the worker to a URI someone holds a lease on. */
static void
proxy_relay_subscribe_worker(const char *uri, const char *method)
{
	struct json_object	*params;

	params = json_object_new_object();
	json_object_object_add(params, "uri", json_object_new_string(uri));
	proxy_relay_private(PROXY_RELAY_SUBSCRIBE, method,
	    json_object_to_json_string_ext(params,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(params);
}

static void
proxy_relay_resubscribe(const char *uri)
{
	proxy_relay_subscribe_worker(uri, "resources/subscribe");
}

static void
proxy_relay_unsubscribe(const char *uri)
{
	if (proxy_relay_state == PROXY_RELAY_UP)
		proxy_relay_subscribe_worker(uri, "resources/unsubscribe");
}

/* The reconnect calls waiting for a worker: answer them. */
static void
proxy_relay_reconnected(int ok)
{
	struct proxy_relay_msg	*m;
	long			 pid = proxy_worker_pid();

	while ((m = TAILQ_FIRST(&proxy_relay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_reconnects, m, entry);
		if (!ok) {
			proxy_relay_refuse(m->id, "tools/call");
			proxy_relay_msg_free(m);
			continue;
		}
		proxy_answer_reconnected(m->id, pid, proxy_relay_prev_pid);
		proxy_relay_msg_free(m);
	}
	proxy_shutdown_check();
}

/*
 * The current worker is initialized (by the client's own initialize or a
 * replayed one): learn its catalog, subscribe it to the leases that
 * carry over, and answer reconnect calls.
 */
static void
proxy_relay_worker_ready(void)
{
	proxy_relay_generation++;
	if (proxy_relay_generation > 1) {
		/* The old worker's handles, and their resources, are gone. */
		proxy_relay_tell_resources = 1;
		proxy_relay_tell();
	}
	proxy_relay_private(PROXY_RELAY_DISCOVER, "tools/list", "{}");
	proxy_subs_foreach(proxy_relay_resubscribe);
	proxy_relay_reconnected(1);
}

static void
proxy_relay_remember_init(struct json_object *obj, const char *line,
    size_t len, const char *id)
{
	struct json_object	*params;

	free(proxy_relay_init_line);
	free(proxy_relay_init_params);
	free(proxy_relay_init_id);
	proxy_relay_init_line = xmalloc(len);
	memcpy(proxy_relay_init_line, line, len);
	proxy_relay_init_len = len;
	if (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_is_type(params, json_type_object))
		proxy_relay_init_params = xstrdup(
		    json_object_to_json_string_ext(params,
		    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		proxy_relay_init_params = xstrdup("{}");
	proxy_relay_init_id = xstrdup(id);
	proxy_relay_init_answered = 0;
}

/* A request carrying the stateless revision's per-request version. */
static int
proxy_relay_modern(struct json_object *obj)
{
	struct json_object	*params, *meta;

	return (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_is_type(meta, json_type_object) &&
	    json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/protocolVersion", NULL));
}

/* tools/list from the catalog; 0 when it must go to the worker. */
static int
proxy_relay_tools_list(struct json_object *obj, const char *id)
{
	if (!proxy_catalog_ready() || proxy_relay_modern(obj))
		return (0);
	if (proxy_relay_param(obj, "cursor") != NULL) {
		proxy_answer_error(id, -32602, "invalid cursor");
		return (1);
	}
	proxy_answer_catalog(id);
	return (1);
}

/* The reconnect tool: replace the worker, answer when the next is up. */
static void
proxy_relay_reconnect(struct json_object *obj, const char *id)
{
	struct json_object	*params, *args;
	struct proxy_relay_msg	*m;
	int			 busy = !TAILQ_EMPTY(&proxy_relay_reconnects);

	if (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_object_get_ex(params, "arguments", &args) &&
	    args != NULL && (!json_object_is_type(args, json_type_object) ||
	    json_object_object_length(args) != 0)) {
		proxy_answer_tool_error(id, "invalid_argument",
		    "reconnect takes no arguments");
		return;
	}
	m = proxy_relay_msg_create(NULL, 0, id, "tools/call");
	TAILQ_INSERT_TAIL(&proxy_relay_reconnects, m, entry);
	if (busy)
		return;		/* one replacement answers them all */
	proxy_relay_prev_pid = proxy_worker_pid();
	proxy_worker_replace();
}

/* Whether a request may be sent to the next worker if this one dies. */
static int
proxy_relay_may_repeat(struct json_object *obj, const char *method)
{
	struct json_object	*params, *args;
	const char		*tool;

	if (strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0)
		return (0);
	if (strcmp(method, "tools/call") != 0)
		return (1);	/* the other requests have no effects */
	if ((tool = proxy_relay_param(obj, "name")) == NULL ||
	    !proxy_catalog_read_only(tool))
		return (0);
	/* An export to a file writes one: not read-only whatever it says. */
	if (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_object_get_ex(params, "arguments", &args) &&
	    json_object_is_type(args, json_type_object) &&
	    json_object_object_get_ex(args, "path", NULL) &&
	    strcmp(tool, "export_notebook") == 0)
		return (0);
	return (1);
}

/* subscriptions/listen: a holder of leases until it is cancelled. */
static void
proxy_relay_listen(struct json_object *obj, const char *id)
{
	struct json_object	*params, *filter, *uris, *v;
	char			*holder;
	size_t			 i;

	if (!json_object_object_get_ex(obj, "params", &params) ||
	    !json_object_object_get_ex(params, "notifications", &filter) ||
	    !json_object_is_type(filter, json_type_object)) {
		proxy_answer_error(id, -32602, "subscriptions/listen "
		    "needs params.notifications");
		return;
	}
	if (!json_object_object_get_ex(filter, "resourceSubscriptions", &uris))
		return;
	if (!json_object_is_type(uris, json_type_array)) {
		proxy_answer_error(id, -32602,
		    "resourceSubscriptions must be an array of URIs");
		return;
	}
	xasprintf(&holder, "listen:%s", id);
	for (i = 0; i < json_object_array_length(uris); i++) {
		v = json_object_array_get_idx(uris, i);
		if (!json_object_is_type(v, json_type_string))
			continue;
		switch (proxy_subs_add(holder, json_object_get_string(v))) {
		case PROXY_SUBS_FIRST:
			if (proxy_relay_state == PROXY_RELAY_UP)
				proxy_relay_resubscribe(
				    json_object_get_string(v));
			break;
		case PROXY_SUBS_FULL:
			proxy_subs_remove_holder(holder,
			    proxy_relay_unsubscribe);
			proxy_answer_error(id, -32603, "too many "
			    "resource watches (128)");
			free(holder);
			return;
		default:
			break;
		}
	}
	free(holder);
}

/* resources/subscribe and unsubscribe: 1 when answered here. */
static int
proxy_relay_subscription(struct json_object *obj, const char *id,
    const char *method, struct proxy_relay_msg *m)
{
	const char	*uri;

	if ((uri = proxy_relay_param(obj, "uri")) == NULL)
		return (0);	/* the worker says what is wrong */
	if (strcmp(method, "resources/subscribe") == 0) {
		switch (proxy_subs_add("session", uri)) {
		case PROXY_SUBS_FIRST:
			m->sub_uri = xstrdup(uri);
			return (0);
		case PROXY_SUBS_FULL:
			proxy_answer_error(id, -32603, "too many "
			    "resource watches (128)");
			return (1);
		default:
			proxy_answer_result(id, json_object_new_object());
			return (1);
		}
	}
	switch (proxy_subs_remove("session", uri)) {
	case PROXY_SUBS_NONE:
		/* Another listener still holds it: the worker keeps it. */
		proxy_answer_result(id, json_object_new_object());
		return (1);
	default:
		return (0);
	}
}

/* notifications/cancelled: no answer is due for that request now. */
static void
proxy_relay_cancelled(struct json_object *obj)
{
	struct json_object	*params, *rid;
	struct proxy_relay_msg	*m;
	char			*cid, *holder;

	if (!json_object_object_get_ex(obj, "params", &params) ||
	    !json_object_object_get_ex(params, "requestId", &rid))
		return;
	cid = xstrdup(json_object_to_json_string_ext(rid,
	    JSON_C_TO_STRING_PLAIN));
	if ((m = proxy_relay_flight_take(cid)) != NULL)
		proxy_relay_msg_free(m);
	TAILQ_FOREACH(m, &proxy_relay_reconnects, entry) {
		if (strcmp(m->id, cid) == 0) {
			TAILQ_REMOVE(&proxy_relay_reconnects, m, entry);
			proxy_relay_msg_free(m);
			break;
		}
	}
	/* Ending one listen stream leaves the other listeners' leases. */
	xasprintf(&holder, "listen:%s", cid);
	proxy_subs_remove_holder(holder, proxy_relay_unsubscribe);
	free(holder);
	free(cid);
}

/* One line from the client. */
void
proxy_relay_client_line(const char *line, size_t len)
{
	struct json_object	*obj;
	struct proxy_relay_msg	*m;
	const char		*method, *tool;
	char			*id;
	int			 request;

	obj = proxy_relay_parse(line, len);
	proxy_relay_classify(obj, &id, &method);
	request = id != NULL && method != NULL;

	if (request && strcmp(method, "initialize") == 0)
		proxy_relay_remember_init(obj, line, len, id);
	else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/initialized") == 0) {
		proxy_relay_initialized = 1;
		proxy_relay_tell();
	} else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/cancelled") == 0)
		proxy_relay_cancelled(obj);

	/* What the proxy answers itself, in any state. */
	if (request && strcmp(method, "tools/list") == 0 &&
	    proxy_relay_tools_list(obj, id))
		goto out;
	if (request && strcmp(method, "tools/call") == 0 &&
	    (tool = proxy_relay_param(obj, "name")) != NULL &&
	    strcmp(tool, "reconnect") == 0) {
		proxy_relay_reconnect(obj, id);
		goto out;
	}
	if (proxy_relay_state == PROXY_RELAY_UNAVAILABLE) {
		if (request)
			proxy_relay_refuse(id, method);
		goto out;
	}
	if (request && strcmp(method, "subscriptions/listen") == 0) {
		proxy_relay_listen(obj, id);
		goto out;
	}

	m = proxy_relay_msg_create(NULL, 0, id, method);
	if (request) {
		if ((strcmp(method, "resources/subscribe") == 0 ||
		    strcmp(method, "resources/unsubscribe") == 0) &&
		    proxy_relay_subscription(obj, id, method, m)) {
			proxy_relay_msg_free(m);
			goto out;
		}
		m->again = proxy_relay_may_repeat(obj, method);
		m->tools_list = strcmp(method, "tools/list") == 0 &&
		    !proxy_relay_modern(obj);
	}
	proxy_relay_send(m, line, len);
out:
	free(id);
	json_object_put(obj);
}

/* A line too long for a frame: its id is unknown, so answer with null. */
void
proxy_relay_client_overlong(const char *why)
{
	log_warnx("%s", why);
	proxy_answer_error(NULL, -32600, why);
}

/* The answer to one of the proxy's own requests. */
static void
proxy_relay_private_answer(struct json_object *obj, const char *id)
{
	static const char	 note[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct proxy_relay_priv	*p;
	struct json_object	*err, *res;

	TAILQ_FOREACH(p, &proxy_relay_privs, entry) {
		if (strcmp(p->id, id) == 0)
			break;
	}
	if (p == NULL)
		return;		/* for an earlier worker */
	TAILQ_REMOVE(&proxy_relay_privs, p, entry);
	err = json_object_object_get(obj, "error");
	switch (p->kind) {
	case PROXY_RELAY_REPLAY:
		if (err != NULL)
			log_warnx("worker refused the replayed initialize: %s",
			    json_object_to_json_string(err));
		proxy_relay_state = PROXY_RELAY_UP;
		if (proxy_relay_initialized)
			proxy_worker_send(note, sizeof note - 1);
		log_info("worker initialized from the remembered initialize");
		proxy_relay_flush_queue();
		proxy_relay_worker_ready();
		break;
	case PROXY_RELAY_DISCOVER:
		if (err == NULL &&
		    json_object_object_get_ex(obj, "result", &res) &&
		    proxy_catalog_discovered(res)) {
			proxy_relay_tell_tools = 1;
			proxy_relay_tell_resources = 1;
			proxy_relay_tell();
		}
		break;
	case PROXY_RELAY_SUBSCRIBE:
		if (err != NULL)
			log_info("worker refused a subscription: %s",
			    json_object_to_json_string(err));
		break;
	}
	free(p->id);
	free(p);
}

/* The worker link completed its handshake. */
void
proxy_relay_worker_up(void)
{
	if (proxy_relay_init_params == NULL || !proxy_relay_init_answered) {
		/* The client's own initialize (if any) is still to come. */
		proxy_relay_state = PROXY_RELAY_UP;
		proxy_relay_flush_queue();
		return;
	}
	proxy_relay_state = PROXY_RELAY_REPLAYING;
	proxy_relay_private(PROXY_RELAY_REPLAY, "initialize",
	    proxy_relay_init_params);
}

/*
 * The worker answered a tools/list sent while the proxy had no catalog:
 * learn it, and answer from it so reconnect is listed too.
 */
static int
proxy_relay_list_answer(struct json_object *obj, const char *id)
{
	struct json_object	*res;

	if (!json_object_object_get_ex(obj, "result", &res))
		return (0);
	proxy_catalog_discovered(res);
	if (!proxy_catalog_ready())
		return (0);
	proxy_answer_catalog(id);
	return (1);
}

/*
 * One MCP message from the worker.  With head (the id, method and error
 * flag the worker carries beside it) the message is parsed only when the
 * proxy must read it (its own requests' answers, a first tools/list), so
 * a large result passes as the bytes it is; without (an older worker) it
 * is parsed to learn them.
 */
void
proxy_relay_worker_message(const char *json, size_t len,
    const struct proxy_relay_head *head)
{
	struct proxy_relay_msg	*m;
	struct json_object	*obj = NULL;
	const char		*method;
	char			*id;
	int			 error;

	if (head != NULL) {
		id = head->id != NULL ? xstrdup(head->id) : NULL;
		method = head->method;
		error = head->error;
	} else {
		obj = proxy_relay_parse(json, len);
		proxy_relay_classify(obj, &id, &method);
		error = json_object_object_get_ex(obj, "error", NULL);
	}
	if (id != NULL && method == NULL) {
		if (strncmp(id, PROXY_RELAY_PRIVATE,
		    strlen(PROXY_RELAY_PRIVATE)) == 0) {
			if (obj == NULL)
				obj = proxy_relay_parse(json, len);
			proxy_relay_private_answer(obj, id);
			goto out;
		}
		if ((m = proxy_relay_flight_take(id)) != NULL) {
			/* A refused first subscription holds no lease. */
			if (m->sub_uri != NULL && error)
				proxy_subs_remove("session", m->sub_uri);
			if (m->tools_list && obj == NULL)
				obj = proxy_relay_parse(json, len);
			if (m->tools_list && proxy_relay_list_answer(obj, id)) {
				proxy_relay_msg_free(m);
				proxy_shutdown_check();
				goto out;
			}
			proxy_relay_msg_free(m);
		}
		if (proxy_relay_init_id != NULL && !proxy_relay_init_answered &&
		    strcmp(id, proxy_relay_init_id) == 0) {
			proxy_relay_init_answered = 1;
			proxy_stdio_write_line(json, len);
			proxy_relay_worker_ready();
			goto out;
		}
	} else if (id == NULL && method != NULL &&
	    strcmp(method, "notifications/tools/list_changed") == 0) {
		/* Learn the new list first; tell the client if it differs. */
		proxy_relay_private(PROXY_RELAY_DISCOVER, "tools/list", "{}");
		goto out;
	}
	proxy_stdio_write_line(json, len);
	proxy_shutdown_check();
out:
	free(id);
	json_object_put(obj);
}

/*
 * The worker is gone: requests without effects go to the next worker
 * (once), the others are answered now; leases on its handles end.
 */
void
proxy_relay_worker_down(void)
{
	struct proxy_relay_msgs	 again = TAILQ_HEAD_INITIALIZER(again);
	struct proxy_relay_msg	*m;

	while ((m = TAILQ_FIRST(&proxy_relay_flight)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_flight, m, entry);
		if (proxy_relay_init_id != NULL && !proxy_relay_init_answered &&
		    strcmp(m->id, proxy_relay_init_id) == 0) {
			/* initialize has no effect: send it again. */
			proxy_relay_msg_free(m);
			m = proxy_relay_msg_create(proxy_relay_init_line,
			    proxy_relay_init_len, proxy_relay_init_id,
			    "initialize");
			TAILQ_INSERT_TAIL(&again, m, entry);
			continue;
		}
		if (m->again && !m->retried && m->line != NULL) {
			log_info("sending %s %s to the next worker",
			    m->method, m->id);
			m->retried = 1;
			TAILQ_INSERT_TAIL(&again, m, entry);
			continue;
		}
		if (strcmp(m->method, "tools/call") == 0)
			proxy_answer_lost_call(m->id);
		else if (m->sub_uri != NULL &&
		    strncmp(m->sub_uri, "runtimed://sessions/", 20) != 0)
			/* The lease carries over to the next worker. */
			proxy_answer_result(m->id,
			    json_object_new_object());
		else
			proxy_answer_restarted(m->id, m->method);
		proxy_relay_msg_free(m);
	}
	/* Sent first, in their order, ahead of what was queued since. */
	while ((m = TAILQ_LAST(&again, proxy_relay_msgs)) != NULL) {
		TAILQ_REMOVE(&again, m, entry);
		TAILQ_INSERT_HEAD(&proxy_relay_queue, m, entry);
		proxy_relay_queued++;
		proxy_relay_queued_len += m->len;
	}
	proxy_relay_privs_clear();
	proxy_subs_replaced(proxy_answer_subscription_ended);
	if (proxy_relay_state != PROXY_RELAY_UNAVAILABLE)
		proxy_relay_state = PROXY_RELAY_DOWN;
	proxy_shutdown_check();
}

/*
 * The crash budget tripped (why != NULL): refuse everything queued and
 * everything that comes until it resets (why == NULL).
 */
void
proxy_relay_worker_unavailable(const char *why)
{
	struct proxy_relay_msg	*m;

	free(proxy_relay_why);
	proxy_relay_why = NULL;
	if (why == NULL) {
		if (proxy_relay_state == PROXY_RELAY_UNAVAILABLE)
			proxy_relay_state = PROXY_RELAY_DOWN;
		return;
	}
	proxy_relay_why = xstrdup(why);
	proxy_relay_state = PROXY_RELAY_UNAVAILABLE;
	while ((m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		if (m->id != NULL && m->method != NULL &&
		    strcmp(m->method, "initialize") != 0)
			proxy_relay_refuse(m->id, m->method);
		else if (m->id != NULL)
			proxy_relay_refuse(m->id, NULL);
		proxy_relay_msg_free(m);
	}
	proxy_relay_queued = 0;
	proxy_relay_queued_len = 0;
	proxy_relay_reconnected(0);
	proxy_shutdown_check();
}

/* Shutting down: nothing queued or in flight will be answered now. */
void
proxy_relay_abandon(void)
{
	struct proxy_relay_msg	*m;

	while ((m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		if (m->id != NULL)
			proxy_answer_error(m->id, -32603,
			    "runtimed-mcp is shutting down");
		proxy_relay_msg_free(m);
	}
	proxy_relay_queued = 0;
	proxy_relay_queued_len = 0;
	while ((m = TAILQ_FIRST(&proxy_relay_flight)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_flight, m, entry);
		if (strcmp(m->method, "tools/call") == 0)
			proxy_answer_lost_call(m->id);
		else
			proxy_answer_error(m->id, -32603,
			    "runtimed-mcp is shutting down");
		proxy_relay_msg_free(m);
	}
	while ((m = TAILQ_FIRST(&proxy_relay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_reconnects, m, entry);
		proxy_answer_tool_error(m->id, "notebook_unavailable",
		    "runtimed-mcp is shutting down");
		proxy_relay_msg_free(m);
	}
}

/*
 * Bytes of client messages waiting for a worker (backpressure); while
 * they are being sent, as if over any mark, so stdin waits its turn.
 */
size_t
proxy_relay_queued_bytes(void)
{
	return (proxy_relay_flushing ? SIZE_MAX : proxy_relay_queued_len);
}

/* Requests the client still expects an answer to. */
int
proxy_relay_pending(void)
{
	struct proxy_relay_msg	*m;

	if (proxy_relay_state == PROXY_RELAY_UNAVAILABLE)
		return (0);
	if (!TAILQ_EMPTY(&proxy_relay_flight) ||
	    !TAILQ_EMPTY(&proxy_relay_reconnects))
		return (1);
	TAILQ_FOREACH(m, &proxy_relay_queue, entry) {
		if (m->id != NULL)
			return (1);
	}
	return (0);
}

void
proxy_relay_free(void)
{
	struct proxy_relay_msg	*m;

	while ((m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		proxy_relay_msg_free(m);
	}
	while ((m = TAILQ_FIRST(&proxy_relay_flight)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_flight, m, entry);
		proxy_relay_msg_free(m);
	}
	while ((m = TAILQ_FIRST(&proxy_relay_reconnects)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_reconnects, m, entry);
		proxy_relay_msg_free(m);
	}
	proxy_relay_privs_clear();
	free(proxy_relay_why);
	free(proxy_relay_init_line);
	free(proxy_relay_init_params);
	free(proxy_relay_init_id);
}
