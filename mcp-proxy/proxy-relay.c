/*
 * proxy-relay.c: the JSON-RPC bookkeeping between the client and
 * whichever worker is current.  Messages pass through as the bytes the
 * client sent; the relay only parses them to learn ids and methods:
 *
 * - the client's initialize (params and line) is kept, so a new worker
 *   can be initialized privately and the client never sees it;
 * - requests sent to a worker stay "in flight" until it answers; when the
 *   worker dies first, the relay answers them itself (tools/call with an
 *   outcome_unknown tool error, anything else with -32603), because the
 *   effect may or may not have happened and must not be replayed;
 * - while no worker is up, messages wait in a queue.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

/* json-c's default depth (32) is too shallow for notebook metadata. */
#define PROXY_RELAY_DEPTH	1024

#define PROXY_RELAY_LOST_TEXT \
	"outcome_unknown: the worker restarted before answering; " \
	"inspect the notebook before retrying"

struct proxy_relay_msg {
	char			*line;
	size_t			 len;
	char			*id;	/* JSON text; NULL unless a request */
	char			*method;
	TAILQ_ENTRY(proxy_relay_msg) entry;
};
TAILQ_HEAD(proxy_relay_msgs, proxy_relay_msg);

enum proxy_relay_state {
	PROXY_RELAY_DOWN,	/* no worker link: queue */
	PROXY_RELAY_REPLAYING,	/* private initialize in flight: queue */
	PROXY_RELAY_UP,		/* relay */
	PROXY_RELAY_UNAVAILABLE, /* restart limiter tripped: refuse */
};

static enum proxy_relay_state	 proxy_relay_state = PROXY_RELAY_DOWN;
static struct proxy_relay_msgs	 proxy_relay_queue =
    TAILQ_HEAD_INITIALIZER(proxy_relay_queue);
static u_int			 proxy_relay_queued;
static struct proxy_relay_msgs	 proxy_relay_flight =
    TAILQ_HEAD_INITIALIZER(proxy_relay_flight);
static char			*proxy_relay_why;	/* when unavailable */

/* The client's initialize, for replay to later workers. */
static char			*proxy_relay_init_line;
static size_t			 proxy_relay_init_len;
static char			*proxy_relay_init_params;
static char			*proxy_relay_init_id;
static int			 proxy_relay_init_answered;
static int			 proxy_relay_initialized; /* sent by client */
static char			*proxy_relay_replay_id;
static u_int			 proxy_relay_replays;
static char			*proxy_relay_catalog;

static struct json_object *
proxy_relay_parse(const char *data, size_t len)
{
	struct json_tokener	*tok;
	struct json_object	*obj;

	if (len > INT32_MAX)
		return NULL;
	if ((tok = json_tokener_new_ex(PROXY_RELAY_DEPTH)) == NULL)
		return NULL;
	obj = json_tokener_parse_ex(tok, data, (int)len);
	if (obj != NULL && !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/* Id (as canonical JSON text, caller frees) and method of a message. */
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

static void
proxy_relay_emit(struct json_object *obj)
{
	const char	*s;

	s = json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE);
	proxy_stdio_write_line(s, strlen(s));
	json_object_put(obj);
}

static struct json_object *
proxy_relay_reply(const char *id)
{
	struct json_object	*obj, *idobj = NULL;

	obj = json_object_new_object();
	json_object_object_add(obj, "jsonrpc", json_object_new_string("2.0"));
	if (id != NULL)
		idobj = json_tokener_parse(id);
	json_object_object_add(obj, "id", idobj);
	return obj;
}

static void
proxy_relay_answer_error(const char *id, int code, const char *message)
{
	struct json_object	*obj, *err;

	obj = proxy_relay_reply(id);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	json_object_object_add(obj, "error", err);
	proxy_relay_emit(obj);
}

/* A tools/call whose worker died: its effect is unknown (CONTRACT 6). */
static void
proxy_relay_answer_lost_call(const char *id)
{
	struct json_object	*obj, *res, *content, *text, *sc, *err;

	obj = proxy_relay_reply(id);
	res = json_object_new_object();
	content = json_object_new_array();
	text = json_object_new_object();
	json_object_object_add(text, "type", json_object_new_string("text"));
	json_object_object_add(text, "text",
	    json_object_new_string(PROXY_RELAY_LOST_TEXT));
	json_object_array_add(content, text);
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "isError", json_object_new_boolean(1));
	err = json_object_new_object();
	json_object_object_add(err, "code",
	    json_object_new_string("outcome_unknown"));
	json_object_object_add(err, "message", json_object_new_string(
	    "the worker restarted before answering; inspect the notebook "
	    "before retrying"));
	sc = json_object_new_object();
	json_object_object_add(sc, "error", err);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(obj, "result", res);
	proxy_relay_emit(obj);
}

static void
proxy_relay_refuse(const char *id)
{
	char	*msg;

	xasprintf(&msg, "runtimed-mcp-worker is not available (%s); see %s",
	    proxy_relay_why != NULL ? proxy_relay_why : "restarting",
	    proxy_worker_log_path());
	proxy_relay_answer_error(id, -32603, msg);
	free(msg);
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
	return m;
}

static void
proxy_relay_msg_free(struct proxy_relay_msg *m)
{
	free(m->line);
	free(m->id);
	free(m->method);
	free(m);
}

static void
proxy_relay_flight_drop(const char *id)
{
	struct proxy_relay_msg	*m;

	TAILQ_FOREACH(m, &proxy_relay_flight, entry) {
		if (strcmp(m->id, id) == 0) {
			TAILQ_REMOVE(&proxy_relay_flight, m, entry);
			proxy_relay_msg_free(m);
			return;
		}
	}
}

static void
proxy_relay_enqueue(const char *line, size_t len, const char *id,
    const char *method)
{
	struct proxy_relay_msg	*m;

	if (proxy_relay_queued >= PROXY_QUEUE_MAX) {
		if (id != NULL && method != NULL)
			proxy_relay_answer_error(id, -32603, "too many "
			    "requests queued while the worker restarts; "
			    "retry later");
		return;
	}
	m = proxy_relay_msg_create(line, len, id, method);
	TAILQ_INSERT_TAIL(&proxy_relay_queue, m, entry);
	proxy_relay_queued++;
}

/* Send one message to the worker, or queue it if the link is gone. */
static void
proxy_relay_send(const char *line, size_t len, const char *id,
    const char *method)
{
	struct proxy_relay_msg	*m;

	if (proxy_worker_send(line, len) != 0) {
		proxy_relay_enqueue(line, len, id, method);
		return;
	}
	if (id != NULL && method != NULL) {
		m = proxy_relay_msg_create(NULL, 0, id, method);
		TAILQ_INSERT_TAIL(&proxy_relay_flight, m, entry);
	}
}

static void
proxy_relay_flush_queue(void)
{
	struct proxy_relay_msg	*m;

	while (proxy_relay_state == PROXY_RELAY_UP &&
	    (m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		proxy_relay_queued--;
		if (proxy_worker_send(m->line, m->len) != 0) {
			TAILQ_INSERT_HEAD(&proxy_relay_queue, m, entry);
			proxy_relay_queued++;
			return;
		}
		if (m->id != NULL) {
			free(m->line);
			m->line = NULL;
			TAILQ_INSERT_TAIL(&proxy_relay_flight, m, entry);
		} else
			proxy_relay_msg_free(m);
	}
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

/* One line from the client. */
void
proxy_relay_client_line(const char *line, size_t len)
{
	struct json_object	*obj, *params, *rid;
	const char		*method;
	char			*id, *cid;

	obj = proxy_relay_parse(line, len);
	proxy_relay_classify(obj, &id, &method);
	if (method != NULL && id != NULL &&
	    strcmp(method, "initialize") == 0)
		proxy_relay_remember_init(obj, line, len, id);
	else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/initialized") == 0)
		proxy_relay_initialized = 1;
	else if (method != NULL && id == NULL &&
	    strcmp(method, "notifications/cancelled") == 0 &&
	    json_object_object_get_ex(obj, "params", &params) &&
	    json_object_object_get_ex(params, "requestId", &rid)) {
		/* No answer is due for a cancelled request. */
		cid = xstrdup(json_object_to_json_string_ext(rid,
		    JSON_C_TO_STRING_PLAIN));
		proxy_relay_flight_drop(cid);
		free(cid);
	}

	switch (proxy_relay_state) {
	case PROXY_RELAY_UNAVAILABLE:
		if (id != NULL && method != NULL)
			proxy_relay_refuse(id);
		break;
	case PROXY_RELAY_UP:
		proxy_relay_send(line, len, id, method);
		break;
	default:
		proxy_relay_enqueue(line, len, id, method);
		break;
	}
	free(id);
	json_object_put(obj);
}

/* A line too long for a frame: its id is unknown, so answer with null. */
void
proxy_relay_client_overlong(size_t len)
{
	char	*msg;

	xasprintf(&msg, "message of %zu bytes exceeds the limit of %zu "
	    "bytes and was dropped", len, proxy_stdio_max_line());
	log_warnx("%s", msg);
	proxy_relay_answer_error(NULL, -32600, msg);
	free(msg);
}

static void
proxy_relay_replay_done(struct json_object *obj)
{
	static const char	 note[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct json_object	*err;

	if (json_object_object_get_ex(obj, "error", &err))
		log_warnx("worker refused the replayed initialize: %s",
		    json_object_to_json_string(err));
	free(proxy_relay_replay_id);
	proxy_relay_replay_id = NULL;
	proxy_relay_state = PROXY_RELAY_UP;
	if (proxy_relay_initialized)
		proxy_worker_send(note, sizeof note - 1);
	log_info("worker initialized from the remembered initialize");
	proxy_relay_flush_queue();
}

/* The worker link completed its handshake. */
void
proxy_relay_worker_up(void)
{
	char	*line;

	if (proxy_relay_init_params == NULL || !proxy_relay_init_answered) {
		/* The client's own initialize (if any) is still to come. */
		proxy_relay_state = PROXY_RELAY_UP;
		proxy_relay_flush_queue();
		return;
	}
	free(proxy_relay_replay_id);
	xasprintf(&proxy_relay_replay_id, "\"runtimed-mcp-proxy-replay-%u\"",
	    ++proxy_relay_replays);
	xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"initialize\",\"params\":%s}", proxy_relay_replay_id,
	    proxy_relay_init_params);
	proxy_relay_state = PROXY_RELAY_REPLAYING;
	proxy_worker_send(line, strlen(line));
	free(line);
}

/* One MCP message from the worker. */
void
proxy_relay_worker_message(const char *json, size_t len)
{
	struct json_object	*obj;
	const char		*method;
	char			*id;

	obj = proxy_relay_parse(json, len);
	proxy_relay_classify(obj, &id, &method);
	if (id != NULL && method == NULL) {
		if (proxy_relay_replay_id != NULL &&
		    strcmp(id, proxy_relay_replay_id) == 0) {
			/* The answer to our private initialize: keep it. */
			proxy_relay_replay_done(obj);
			goto out;
		}
		proxy_relay_flight_drop(id);
		if (proxy_relay_init_id != NULL &&
		    strcmp(id, proxy_relay_init_id) == 0)
			proxy_relay_init_answered = 1;
	}
	proxy_stdio_write_line(json, len);
	proxy_shutdown_check();
out:
	free(id);
	json_object_put(obj);
}

/* WORKER_READY: tell an initialized client when the tools changed. */
void
proxy_relay_worker_catalog(const char *catalog, size_t len)
{
	static const char	note[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}";
	int			changed;

	changed = proxy_relay_catalog != NULL &&
	    (strlen(proxy_relay_catalog) != len ||
	    memcmp(proxy_relay_catalog, catalog, len) != 0);
	free(proxy_relay_catalog);
	proxy_relay_catalog = xstrndup(catalog, len);
	if (changed && proxy_relay_initialized)
		proxy_stdio_write_line(note, sizeof note - 1);
}

/* The worker is gone: answer what it owed, keep the queue for the next. */
void
proxy_relay_worker_down(void)
{
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
			TAILQ_INSERT_HEAD(&proxy_relay_queue, m, entry);
			proxy_relay_queued++;
			continue;
		}
		if (strcmp(m->method, "tools/call") == 0)
			proxy_relay_answer_lost_call(m->id);
		else {
			char	*msg;

			xasprintf(&msg, "the worker restarted before "
			    "answering %s; retry the request", m->method);
			proxy_relay_answer_error(m->id, -32603, msg);
			free(msg);
		}
		proxy_relay_msg_free(m);
	}
	free(proxy_relay_replay_id);
	proxy_relay_replay_id = NULL;
	if (proxy_relay_state != PROXY_RELAY_UNAVAILABLE)
		proxy_relay_state = PROXY_RELAY_DOWN;
	proxy_shutdown_check();
}

/*
 * The restart limiter tripped (why != NULL): refuse everything queued
 * and everything that comes until it resets (why == NULL).
 */
void
proxy_relay_worker_unavailable(const char *why)
{
	struct proxy_relay_msg	*m;

	free(proxy_relay_why);
	proxy_relay_why = NULL;
	if (why == NULL) {
		proxy_relay_state = PROXY_RELAY_DOWN;
		return;
	}
	proxy_relay_why = xstrdup(why);
	proxy_relay_state = PROXY_RELAY_UNAVAILABLE;
	while ((m = TAILQ_FIRST(&proxy_relay_queue)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_queue, m, entry);
		if (m->id != NULL)
			proxy_relay_refuse(m->id);
		proxy_relay_msg_free(m);
	}
	proxy_relay_queued = 0;
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
			proxy_relay_answer_error(m->id, -32603,
			    "runtimed-mcp is shutting down");
		proxy_relay_msg_free(m);
	}
	proxy_relay_queued = 0;
	while ((m = TAILQ_FIRST(&proxy_relay_flight)) != NULL) {
		TAILQ_REMOVE(&proxy_relay_flight, m, entry);
		if (strcmp(m->method, "tools/call") == 0)
			proxy_relay_answer_lost_call(m->id);
		else
			proxy_relay_answer_error(m->id, -32603,
			    "runtimed-mcp is shutting down");
		proxy_relay_msg_free(m);
	}
}

/* Requests the client still expects an answer to. */
int
proxy_relay_pending(void)
{
	struct proxy_relay_msg	*m;

	if (proxy_relay_state == PROXY_RELAY_UNAVAILABLE)
		return 0;
	if (!TAILQ_EMPTY(&proxy_relay_flight))
		return 1;
	TAILQ_FOREACH(m, &proxy_relay_queue, entry) {
		if (m->id != NULL)
			return 1;
	}
	return 0;
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
	free(proxy_relay_why);
	free(proxy_relay_init_line);
	free(proxy_relay_init_params);
	free(proxy_relay_init_id);
	free(proxy_relay_replay_id);
	free(proxy_relay_catalog);
}
