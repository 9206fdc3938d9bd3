/* SPDX-License-Identifier: ISC */
/*
 * proxy-answer.c: the answers runtimed-mcp gives itself, in the shapes
 * the worker's answers have: JSON-RPC errors and results, tool results
 * and tool errors, and the notifications the proxy sends on its own.
 * proxy-relay.c decides when; this file says what.  They cover what no
 * worker can answer: a call lost with its worker (outcome_unknown), a
 * request refused while the crash budget is tripped, the reconnect
 * tool, tools/list from the cached catalog, the last update of a lease
 * on a gone worker's handle, a request the proxy is shutting down on.
 */

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

static void	proxy_answer_emit(struct json_object *);
static struct json_object	*proxy_answer_reply(const char *);
static void	proxy_answer_tool(const char *, const char *,
		    struct json_object *);
static char	*proxy_answer_unavailable_text(const char *);
static void	proxy_answer_tool_result(const char *, struct json_object *);

/* The client asked for structuredContent in its initialize. */
static int	 proxy_answer_structure;

int
proxy_answer_structured(void)
{
	return (proxy_answer_structure);
}

void
proxy_answer_set_structured(int on)
{
	proxy_answer_structure = on;
}

/* Write one message (taking obj) to the client. */
static void
proxy_answer_emit(struct json_object *obj)
{
	const char	*s;

	s = json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE);
	proxy_stdio_write_line(s, strlen(s));
	json_object_put(obj);
}

/* A response to id (JSON text, as the client sent it; NULL: null). */
static struct json_object *
proxy_answer_reply(const char *id)
{
	struct json_object	*obj, *idobj = NULL;

	obj = json_object_new_object();
	json_object_object_add(obj, "jsonrpc", json_object_new_string("2.0"));
	if (id != NULL)
		idobj = jsonrpc_id_from_text(id);
	json_object_object_add(obj, "id", idobj);
	return (obj);
}

/* A JSON-RPC error. */
void
proxy_answer_error(const char *id, int code, const char *message)
{
	struct json_object	*obj, *err;

	obj = proxy_answer_reply(id);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	json_object_object_add(obj, "error", err);
	proxy_answer_emit(obj);
}

/*
 * -32021: a request of 2026-07-28 asked for what only the tasks
 * extension has without declaring it (SEP-2663, decision 069).
 */
void
proxy_answer_missing_tasks(const char *id)
{
	struct json_object	*obj, *err, *data, *caps, *ext;

	ext = json_object_new_object();
	json_object_object_add(ext, "io.modelcontextprotocol/tasks",
	    json_object_new_object());
	caps = json_object_new_object();
	json_object_object_add(caps, "extensions", ext);
	data = json_object_new_object();
	json_object_object_add(data, "requiredCapabilities", caps);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(-32021));
	json_object_object_add(err, "message", json_object_new_string(
	    "Missing required client capability: declare the extension "
	    "io.modelcontextprotocol/tasks in "
	    "io.modelcontextprotocol/clientCapabilities"));
	json_object_object_add(err, "data", data);
	obj = proxy_answer_reply(id);
	json_object_object_add(obj, "error", err);
	proxy_answer_emit(obj);
}

/* A JSON-RPC result; takes res. */
void
proxy_answer_result(const char *id, struct json_object *res)
{
	struct json_object	*obj;

	obj = proxy_answer_reply(id);
	json_object_object_add(obj, "result", res);
	proxy_answer_emit(obj);
}

/* A tool result (taken), plain unless the client asked for structure. */
static void
proxy_answer_tool_result(const char *id, struct json_object *res)
{
	if (!proxy_answer_structure)
		toolresult_plain(res);
	proxy_answer_result(id, res);
}

/* A tool result: text for the model, structuredContent (taken) for
 * programs.  A tool error is toolresult_error's. */
static void
proxy_answer_tool(const char *id, const char *text, struct json_object *sc)
{
	struct json_object	*res, *content, *t;

	res = json_object_new_object();
	content = json_object_new_array();
	t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(content, t);
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "structuredContent", sc);
	proxy_answer_tool_result(id, res);
}

/* A tool error result (docs/errors.md). */
void
proxy_answer_tool_error(const char *id, const char *code,
    const char *message)
{
	proxy_answer_tool_result(id, toolresult_error(code, message));
}

/* A tools/call whose worker died: its effect is unknown (docs/errors.md). */
void
proxy_answer_lost_call(const char *id)
{
	struct json_object	*res;

	res = toolresult_error(PROTO_E_OUTCOME_UNKNOWN, "the worker restarted "
	    "before answering; inspect the notebook before retrying");
	json_object_object_add(toolresult_error_detail(res), "retry_safe",
	    json_object_new_boolean(0));
	proxy_answer_tool_result(id, res);
}

/* Why no worker serves requests now, and when one will be tried. */
static char *
proxy_answer_unavailable_text(const char *why)
{
	char	*msg;
	int64_t	 secs = (proxy_budget_retry_in() + 999) / 1000;

	xasprintf(&msg, "runtimed-mcp-worker is not available: %s; the next "
	    "try is in %lld s (or call the reconnect tool to try now); its "
	    "log is %s", why != NULL ? why :
	    "it is restarting", (long long)secs, proxy_worker_log_path());
	return (msg);
}

/*
 * Refuse a request while the crash budget is tripped (why: what tripped
 * it; NULL while the worker restarts).
 */
void
proxy_answer_unavailable(const char *id, const char *method, const char *why)
{
	struct json_object	*res, *err;
	char			*msg;

	msg = proxy_answer_unavailable_text(why);
	if (method == NULL || strcmp(method, "tools/call") != 0) {
		proxy_answer_error(id, -32603, msg);
		free(msg);
		return;
	}
	res = toolresult_error(PROTO_E_NOTEBOOK_UNAVAILABLE, msg);
	err = toolresult_error_detail(res);
	json_object_object_add(err, "reason",
	    json_object_new_string("worker_unavailable"));
	json_object_object_add(err, "retry_after_secs", json_object_new_int64(
	    (proxy_budget_retry_in() + 999) / 1000));
	json_object_object_add(err, "log",
	    json_object_new_string(proxy_worker_log_path()));
	json_object_object_add(err, "retry_safe", json_object_new_boolean(1));
	proxy_answer_tool_result(id, res);
	free(msg);
}

/* A notification without params. */
void
proxy_answer_notify(const char *method)
{
	char	*line;

	xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}", method);
	proxy_stdio_write_line(line, strlen(line));
	free(line);
}

/*
 * The first message of a subscriptions/listen stream: the part of its
 * filter that is honoured (taken), tagged with the request's id.
 */
void
proxy_answer_listen_acknowledged(const char *id, struct json_object *ok)
{
	struct json_object	*obj, *params, *meta;

	obj = json_object_new_object();
	json_object_object_add(obj, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(obj, "method", json_object_new_string(
	    "notifications/subscriptions/acknowledged"));
	params = json_object_new_object();
	json_object_object_add(params, "notifications", ok);
	meta = json_object_new_object();
	json_object_object_add(meta, "io.modelcontextprotocol/subscriptionId",
	    jsonrpc_id_from_text(id));
	json_object_object_add(params, "_meta", meta);
	json_object_object_add(obj, "params", params);
	proxy_answer_emit(obj);
}

/* A lease on a handle of a worker that is gone: its last update. */
void
proxy_answer_subscription_ended(const char *uri)
{
	struct json_object	*obj, *params, *meta;

	obj = json_object_new_object();
	json_object_object_add(obj, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(obj, "method", json_object_new_string(
	    "notifications/resources/updated"));
	params = json_object_new_object();
	json_object_object_add(params, "uri", json_object_new_string(uri));
	meta = json_object_new_object();
	json_object_object_add(meta, "io.runtimed/attachmentExpired",
	    json_object_new_boolean(1));
	json_object_object_add(params, "_meta", meta);
	json_object_object_add(obj, "params", params);
	proxy_answer_emit(obj);
}

/* A request the worker died on that is not sent again. */
void
proxy_answer_restarted(const char *id, const char *method)
{
	char	*msg;

	if (strcmp(method, "tasks/cancel") == 0 ||
	    strcmp(method, "tasks/update") == 0)
		xasprintf(&msg, "the worker restarted before answering "
		    "%s, which may have taken effect: tasks/get "
		    "tells the task's status", method);
	else
		xasprintf(&msg, "the worker restarted before answering %s; "
		    "retry the request", method);
	proxy_answer_error(id, -32603, msg);
	free(msg);
}

/* The reconnect tool's answer once the new worker is initialized. */
void
proxy_answer_reconnected(const char *id, long pid, long prev_pid)
{
	struct json_object	*sc;
	char			*text;

	sc = json_object_new_object();
	json_object_object_add(sc, "worker_pid", json_object_new_int64(pid));
	json_object_object_add(sc, "previous_worker_pid", prev_pid > 0 ?
	    json_object_new_int64(prev_pid) : NULL);
	json_object_object_add(sc, "handles_expired",
	    json_object_new_boolean(1));
	xasprintf(&text, "Reconnected: worker %ld replaced worker %ld and is "
	    "initialized. Notebook handles from before are expired; call "
	    "connect_notebook again.", pid, prev_pid);
	proxy_answer_tool(id, text, sc);
	free(text);
}

/* tools/list from the cached catalog (proxy-catalog.c). */
void
proxy_answer_catalog(const char *id)
{
	char	*line;

	xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", id,
	    proxy_catalog_result(proxy_answer_structure));
	proxy_stdio_write_line(line, strlen(line));
	free(line);
}
