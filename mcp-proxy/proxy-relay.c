/* SPDX-License-Identifier: ISC */
/*
 * proxy-relay.c: the client's messages to whichever worker is current and
 * the worker's back.  Messages pass through as the bytes they came as;
 * the relay parses a client message only to learn its id and method
 * (proxy-request.c), and a worker message only when the proxy must read
 * it:
 *
 * - tools/list is answered from the cached catalog (proxy-catalog.c);
 * - requests sent to a worker stay "in flight" until it answers.  When
 *   the worker dies first, a request without effects is sent once more
 *   to the next worker; a mutation is answered outcome_unknown and never
 *   sent again, because it may or may not have happened (docs/errors.md,
 *   docs/durability.md);
 * - while no worker is up, messages wait in a queue; while the crash
 *   budget is tripped, requests are refused with a reason.
 *
 * What carries over to a new worker (the replayed initialize, the
 * reconnect tool) is proxy-replay.c; subscriptions are
 * proxy-subscribe.c; what the proxy answers itself is proxy-answer.c.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

/* Requests larger than this are not kept to send to a next worker. */
#define PROXY_RELAY_RETRY_MAX	(1024 * 1024)

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

static enum proxy_relay_state	 proxy_relay_state = PROXY_RELAY_DOWN;
static struct proxy_relay_msgs	 proxy_relay_queue =
    TAILQ_HEAD_INITIALIZER(proxy_relay_queue);
static u_int			 proxy_relay_queued;
static size_t			 proxy_relay_queued_len;	/* bytes */
static int			 proxy_relay_flushing;
static struct proxy_relay_msgs	 proxy_relay_flight =
    TAILQ_HEAD_INITIALIZER(proxy_relay_flight);
static char			*proxy_relay_why;	/* when unavailable */

static void	proxy_relay_refuse(const char *, const char *);
static struct proxy_relay_msg	*proxy_relay_msg_create(const char *, size_t,
		    const char *, const char *);
static void	proxy_relay_msg_free(struct proxy_relay_msg *);
static struct proxy_relay_msg	*proxy_relay_flight_take(const char *);
static void	proxy_relay_enqueue(struct proxy_relay_msg *);
static void	proxy_relay_send(struct proxy_relay_msg *, const char *,
		    size_t);
static void	proxy_relay_flush_queue(void);
static int	proxy_relay_tools_list(struct json_object *, const char *);
static void	proxy_relay_cancelled(struct json_object *);
static int	proxy_relay_list_answer(struct json_object *, const char *);

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
			proxy_lease_remove("session", m->sub_uri);
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

/* tools/list from the catalog; 0 when it must go to the worker. */
static int
proxy_relay_tools_list(struct json_object *obj, const char *id)
{
	if (!proxy_catalog_ready() || proxy_request_modern(obj))
		return (0);
	if (proxy_request_param(obj, "cursor") != NULL) {
		proxy_answer_error(id, -32602, "invalid cursor");
		return (1);
	}
	proxy_answer_catalog(id);
	return (1);
}

/* notifications/cancelled: no answer is due for that request now. */
static void
proxy_relay_cancelled(struct json_object *obj)
{
	struct json_object	*params, *rid;
	struct proxy_relay_msg	*m;
	char			*cid;

	if (!json_object_object_get_ex(obj, "params", &params) ||
	    !json_object_object_get_ex(params, "requestId", &rid))
		return;
	cid = xstrdup(json_object_to_json_string_ext(rid,
	    JSON_C_TO_STRING_PLAIN));
	if ((m = proxy_relay_flight_take(cid)) != NULL)
		proxy_relay_msg_free(m);
	proxy_replay_cancel(cid);
	proxy_subscribe_cancel(cid);
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

	obj = proxy_request_parse(line, len);
	proxy_request_classify(obj, &id, &method);
	request = id != NULL && method != NULL;

	if (request && strcmp(method, "initialize") == 0) {
		proxy_replay_remember(obj, line, len, id);
		proxy_answer_set_structured(toolresult_structured(
		    json_object_object_get(obj, "params")));
	}	else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/initialized") == 0)
		proxy_replay_client_initialized();
	else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/cancelled") == 0)
		proxy_relay_cancelled(obj);

	/* What the proxy answers itself, in any state. */
	if (request && strcmp(method, "tools/list") == 0 &&
	    proxy_relay_tools_list(obj, id))
		goto out;
	if (request && strcmp(method, "tools/call") == 0 &&
	    (tool = proxy_request_param(obj, "name")) != NULL &&
	    strcmp(tool, "reconnect") == 0) {
		proxy_replay_reconnect(obj, id);
		goto out;
	}
	if (proxy_relay_state == PROXY_RELAY_UNAVAILABLE) {
		if (request)
			proxy_relay_refuse(id, method);
		goto out;
	}
	if (request && strcmp(method, "subscriptions/listen") == 0) {
		proxy_subscribe_listen(obj, id);
		goto out;
	}

	m = proxy_relay_msg_create(NULL, 0, id, method);
	if (request) {
		if ((strcmp(method, "resources/subscribe") == 0 ||
		    strcmp(method, "resources/unsubscribe") == 0) &&
		    proxy_subscribe_request(obj, id, method, &m->sub_uri)) {
			proxy_relay_msg_free(m);
			goto out;
		}
		m->again = proxy_request_may_repeat(obj, method);
		m->tools_list = strcmp(method, "tools/list") == 0 &&
		    !proxy_request_modern(obj);
	}
	proxy_relay_send(m, line, len);
out:
	free(id);
	proxy_request_free(obj, len);
}

/* A line too long for a frame: its id is unknown, so answer with null. */
void
proxy_relay_client_overlong(const char *why)
{
	log_warnx("%s", why);
	proxy_answer_error(NULL, -32600, why);
}

/* The worker link completed its handshake. */
void
proxy_relay_worker_up(void)
{
	if (proxy_replay_start()) {
		/* Relay again once the replayed initialize is answered. */
		proxy_relay_state = PROXY_RELAY_REPLAYING;
		return;
	}
	proxy_relay_resume();
}

/* The worker is ready for the client's messages: send what waited. */
void
proxy_relay_resume(void)
{
	proxy_relay_state = PROXY_RELAY_UP;
	proxy_relay_flush_queue();
}

/* Whether messages go to the worker now. */
int
proxy_relay_up(void)
{
	return (proxy_relay_state == PROXY_RELAY_UP);
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
	/* Without output schemas (decision 043): not a catalog to keep. */
	if (!proxy_answer_structured())
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
		obj = proxy_request_parse(json, len);
		proxy_request_classify(obj, &id, &method);
		error = json_object_object_get_ex(obj, "error", NULL);
	}
	if (id != NULL && method == NULL) {
		if (proxy_replay_owns(id)) {
			if (obj == NULL)
				obj = proxy_request_parse(json, len);
			proxy_replay_answer(obj, id);
			goto out;
		}
		if ((m = proxy_relay_flight_take(id)) != NULL) {
			/* A refused first subscription holds no lease. */
			if (m->sub_uri != NULL && error)
				proxy_lease_remove("session", m->sub_uri);
			if (m->tools_list && obj == NULL)
				obj = proxy_request_parse(json, len);
			if (m->tools_list && proxy_relay_list_answer(obj, id)) {
				proxy_relay_msg_free(m);
				proxy_shutdown_check();
				goto out;
			}
			proxy_relay_msg_free(m);
		}
		if (proxy_replay_init_pending(id, NULL, NULL)) {
			proxy_replay_init_answer(json, len);
			goto out;
		}
	} else if (id == NULL && method != NULL &&
	    strcmp(method, "notifications/tools/list_changed") == 0) {
		/* Learn the new list first; tell the client if it differs. */
		proxy_replay_private(PROXY_REPLAY_DISCOVER, "tools/list",
		    PROXY_CATALOG_ASK);
		goto out;
	}
	proxy_stdio_write_line(json, len);
	proxy_shutdown_check();
out:
	free(id);
	proxy_request_free(obj, len);
}

/*
 * The worker is gone: requests without effects go to the next worker
 * (once), the others are answered now; leases on its handles end.
 */
void
proxy_relay_worker_down(void)
{
	struct proxy_relay_msgs	 again = TAILQ_HEAD_INITIALIZER(again);
	struct proxy_relay_msg	*m, *init;
	const char		*line;
	size_t			 len;

	while ((m = TAILQ_FIRST(&proxy_relay_flight)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_flight, m, entry);
		if (proxy_replay_init_pending(m->id, &line, &len)) {
			/* initialize has no effect: send it again. */
			init = proxy_relay_msg_create(line, len, m->id,
			    "initialize");
			proxy_relay_msg_free(m);
			TAILQ_INSERT_TAIL(&again, init, entry);
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
	proxy_replay_privs_clear();
	proxy_lease_replaced(proxy_answer_subscription_ended);
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
	proxy_replay_reconnected(proxy_relay_why);
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
	proxy_replay_abandon();
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
	if (!TAILQ_EMPTY(&proxy_relay_flight) || proxy_replay_pending())
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
	proxy_replay_free();
	free(proxy_relay_why);
}
