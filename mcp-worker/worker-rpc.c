/* SPDX-License-Identifier: ISC */
/*
 * worker-rpc.c: the JSON-RPC 2.0 dispatcher shared by both transports.
 * One message in, zero or one message out (tools/call answers later).
 */

#include <ctype.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "worker.h"

static struct event_base	*worker_rpc_evbase;
static struct worker_transport	 worker_rpc_transport;
static int			 worker_rpc_init_sent;
static int			 worker_rpc_log_level = 3;	/* warning */
static int			 worker_rpc_initialized;
static int			 worker_rpc_structure;	/* decision 043 */
static struct worker_rpc_head	 worker_rpc_out_head;

static const char *const worker_rpc_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* A result may be PROTO_MCP_REPLY_CAP; room for the rest of its reply
 * within the MCP frame cap (proto-msg.c). */
#define WORKER_RPC_ID_SLACK	(8 * 1024)

static const char *const worker_rpc_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

static void	worker_rpc_set_head(struct json_object *);
static struct json_object	*worker_rpc_error_object(int, const char *);
static void	worker_rpc_emit(struct json_object *);
static void	worker_rpc_reply(struct json_object *, struct json_object *);
static void	worker_rpc_error(struct json_object *, int,
		    const char *, ...) printflike(3, 4);
static int	worker_rpc_hex4(const char *, size_t, u_int *);
static struct json_object	*worker_rpc_capabilities(int);
static struct json_object	*worker_rpc_server_info(void);
static void	worker_rpc_discover(struct json_object *);
static void	worker_rpc_initialize(struct json_object *,
		    struct json_object *);
static void	worker_rpc_tools_call(struct json_object *,
		    struct json_object *, int, int);
static int	worker_rpc_level(struct json_object *);
static int	worker_rpc_meta(struct json_object *, struct json_object *);
static void	worker_rpc_tool_error(struct json_object *,
		    struct json_object *, const char *);
static void	worker_rpc_list_tools(struct json_object *,
		    struct json_object *);
static void	worker_rpc_request(const char *, struct json_object *,
		    struct json_object *, int);
static int	worker_rpc_protocol_supported(const char *);

/* Serve the transport t (copied) on base. */
void
worker_rpc_init(struct event_base *base, const struct worker_transport *t)
{
	worker_rpc_evbase = base;
	worker_rpc_transport = *t;
}

/* No call is in flight any more: tell the transport. */
void
worker_rpc_idle(void)
{
	if (worker_rpc_transport.idle != NULL)
		worker_rpc_transport.idle(worker_rpc_transport.arg);
}

struct event_base *
worker_rpc_base(void)
{
	return (worker_rpc_evbase);
}

static int
worker_rpc_protocol_supported(const char *v)
{
	u_int	i;

	for (i = 0; worker_rpc_versions[i] != NULL; i++) {
		if (strcmp(v, worker_rpc_versions[i]) == 0)
			return (1);
	}
	return (0);
}

static void
worker_rpc_set_head(struct json_object *msg)
{
	struct json_object	*v;

	memset(&worker_rpc_out_head, 0, sizeof worker_rpc_out_head);
	if (json_object_object_get_ex(msg, "method", &v) &&
	    json_object_is_type(v, json_type_string))
		worker_rpc_out_head.method = json_object_get_string(v);
	if (json_object_object_get_ex(msg, "id", &v) && v != NULL)
		worker_rpc_out_head.id = json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN);
	worker_rpc_out_head.error = json_object_object_get_ex(msg, "error",
	    NULL);
}

/* {code, message} of a JSON-RPC error. */
static struct json_object *
worker_rpc_error_object(int code, const char *text)
{
	struct json_object	*err;

	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", json_object_new_string(text));
	return (err);
}

/*
 * Send one message; takes the reference.  One longer than an MCP frame
 * can carry (an id that long) is dropped: a reply is then an error with
 * id null, since the id cannot be echoed.
 */
static void
worker_rpc_emit(struct json_object *msg)
{
	const char	*s;
	size_t		 len, max;

	max = PROTO_MCP_REPLY_CAP + WORKER_RPC_ID_SLACK;
	s = json_object_to_json_string_length(msg,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (len > max) {
		log_warnx("dropping a message of %zu bytes (over %zu)", len,
		    max);
		if (!json_object_object_get_ex(msg, "id", NULL)) {
			json_object_put(msg);
			return;
		}
		json_object_put(msg);
		msg = json_object_new_object();
		json_object_object_add(msg, "jsonrpc",
		    json_object_new_string("2.0"));
		json_object_object_add(msg, "id", NULL);
		json_object_object_add(msg, "error", worker_rpc_error_object(
		    -32600, "the request's id is too long to echo"));
		s = json_object_to_json_string_length(msg,
		    JSON_C_TO_STRING_PLAIN, &len);
	}
	worker_rpc_set_head(msg);
	if (worker_rpc_transport.send != NULL)
		worker_rpc_transport.send(s, len, worker_rpc_transport.arg);
	memset(&worker_rpc_out_head, 0, sizeof worker_rpc_out_head);
	json_object_put(msg);
}

/*
 * The id (JSON text), method and error flag of the message a transport
 * is being given, so the proxy link can carry them beside it and the
 * proxy need not parse the message (PROTOCOL.md, MCP).  Valid only
 * during the send callback.
 */
const struct worker_rpc_head *
worker_rpc_head(void)
{
	return (&worker_rpc_out_head);
}

/* A notification; takes the params reference (may be NULL). */
void
worker_rpc_notify(const char *method, struct json_object *params)
{
	struct json_object	*msg;

	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "method", json_object_new_string(method));
	if (params != NULL)
		json_object_object_add(msg, "params", params);
	worker_rpc_emit(msg);
}

/* Has the client said notifications/initialized? */
int
worker_rpc_ready(void)
{
	return (worker_rpc_initialized);
}

/* notifications/message at or above the level the client set. */
void
worker_rpc_log(int level, const char *logger, const char *fmt, ...)
{
	struct json_object	*p;
	va_list			 ap;
	char			*text;

	if (level < worker_rpc_log_level || !worker_rpc_initialized)
		return;
	if (level < 0 || level > 7)
		level = 7;
	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	p = json_object_new_object();
	json_object_object_add(p, "level", json_object_new_string(
	    worker_rpc_levels[level]));
	json_object_object_add(p, "logger", json_object_new_string(logger));
	json_object_object_add(p, "data", json_object_new_string(text));
	free(text);
	worker_rpc_notify("notifications/message", p);
}

/* Results of the 2026-07-28 revision say what they are. */
/*
 * The caching hints 2026-07-28 asks on every cacheable result: ttlMs 0
 * and cacheScope "private", do not reuse.  Tools, notebooks and handles
 * change under a session, and resources name its handles.
 */
void
worker_rpc_cache_hints(struct json_object *res)
{
	json_object_object_add(res, "ttlMs", json_object_new_int(0));
	json_object_object_add(res, "cacheScope",
	    json_object_new_string("private"));
}

void
worker_rpc_stateless_result(struct json_object *res)
{
	json_object_object_add(res, "resultType",
	    json_object_new_string("complete"));
}

/* Page size of tools/list and resources/list (tests may lower it). */
u_int
worker_rpc_page_size(void)
{
	static u_int	 size;
	const char	*env;
	long		 n;

	if (size == 0) {
		size = WORKER_PAGE_SIZE;
		if ((env = getenv("RUNTIMED_MCP_PAGE_SIZE")) != NULL &&
		    (n = strtol(env, NULL, 10)) > 0 && n <= 1000)
			size = (u_int)n;
	}
	return (size);
}

/* The offset a list cursor names: 0 without one, -1 if not ours. */
int
worker_rpc_page_cursor(struct json_object *params, u_int *offset)
{
	struct json_object	*v;
	const char		*s;
	char			*end;
	unsigned long		 n;

	*offset = 0;
	if (params == NULL || !json_object_object_get_ex(params, "cursor",
	    &v) || json_object_is_type(v, json_type_null))
		return (0);
	if (!json_object_is_type(v, json_type_string))
		return (-1);
	s = json_object_get_string(v);
	if (strncmp(s, "pg1.", 4) != 0 || s[4] < '1' || s[4] > '9')
		return (-1);
	n = strtoul(s + 4, &end, 10);
	if (*end != '\0' || n > 1000000 || n % worker_rpc_page_size() != 0)
		return (-1);
	*offset = (u_int)n;
	return (0);
}

/* Caller frees. */
char *
worker_rpc_page_next(u_int offset)
{
	char	*s;

	xasprintf(&s, "pg1.%u", offset);
	return (s);
}

/* Reply to a request id (borrowed); takes the result reference. */
static int	worker_rpc_cur_stateless;	/* request being served */

static void
worker_rpc_reply(struct json_object *id, struct json_object *result)
{
	struct json_object	*msg, *err, *data;
	size_t			 len;
	char			*text;

	if (worker_rpc_cur_stateless &&
	    !json_object_object_get_ex(result, "resultType", NULL))
		worker_rpc_stateless_result(result);
	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_to_json_string_length(result, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (len <= PROTO_MCP_REPLY_CAP) {
		json_object_object_add(msg, "result", result);
		worker_rpc_emit(msg);
		return;
	}
	/* Too large to send: say so, and how to ask for less. */
	json_object_put(result);
	xasprintf(&text, "the result would be %.1f MB, over the %u MiB "
	    "reply cap: read it with inspect_notebook instead, whose "
	    "output_mode \"text\" caps outputs",
	    len / 1e6, PROTO_MCP_REPLY_CAP / (1024 * 1024));
	log_warnx("%s", text);
	err = worker_rpc_error_object(-32603, text);
	free(text);
	data = json_object_new_object();
	json_object_object_add(data, "reason",
	    json_object_new_string("too_large"));
	json_object_object_add(data, "bytes", json_object_new_int64(
	    (int64_t)len));
	json_object_object_add(data, "cap",
	    json_object_new_int64(PROTO_MCP_REPLY_CAP));
	json_object_object_add(err, "data", data);
	json_object_object_add(msg, "error", err);
	worker_rpc_emit(msg);
}

/* Answer a tools/call (worker-call.c checked its size); takes result. */
void
worker_rpc_answer(struct json_object *id, struct json_object *result)
{
	struct json_object	*msg;

	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result);
	worker_rpc_emit(msg);
}

static void printflike(3, 4)
worker_rpc_error(struct json_object *id, int code, const char *fmt, ...)
{
	struct json_object	*msg, *err;
	va_list			 ap;
	char			*text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", json_object_new_string(text));
	free(text);
	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "error", err);
	worker_rpc_emit(msg);
}

static int
worker_rpc_hex4(const char *p, size_t left, u_int *out)
{
	u_int	v = 0, i;
	int	c;

	if (left < 4)
		return (-1);
	for (i = 0; i < 4; i++) {
		c = (unsigned char)p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return (-1);
	}
	*out = v;
	return (0);
}

/*
 * Does the JSON text hold a \u escape of a lone surrogate?  json-c
 * silently turns those into U+FFFD, so look at the text itself.
 */
int
worker_rpc_scan_surrogates(const char *s, size_t len)
{
	size_t	i;
	int	instr = 0;
	u_int	u, lo;

	for (i = 0; i < len; i++) {
		if (!instr) {
			if (s[i] == '"')
				instr = 1;
			continue;
		}
		if (s[i] == '"') {
			instr = 0;
			continue;
		}
		if (s[i] != '\\')
			continue;
		if (++i >= len)
			break;
		if (s[i] != 'u')
			continue;
		if (worker_rpc_hex4(s + i + 1, len - i - 1, &u) != 0)
			continue;
		i += 4;
		if (u >= 0xdc00 && u <= 0xdfff)
			return (1);
		if (u < 0xd800 || u > 0xdbff)
			continue;
		if (i + 2 < len && s[i + 1] == '\\' && s[i + 2] == 'u' &&
		    worker_rpc_hex4(s + i + 3, len - i - 3, &lo) == 0 &&
		    lo >= 0xdc00 && lo <= 0xdfff) {
			i += 6;
			continue;
		}
		return (1);
	}
	return (0);
}

/*
 * Capabilities: of 2025-11-25 (the tasks utility), or of 2026-07-28
 * (modern), where tasks are the extension io.modelcontextprotocol/tasks.
 */
static struct json_object *
worker_rpc_capabilities(int modern)
{
	struct json_object	*caps, *o;

	caps = json_object_new_object();
	o = json_object_new_object();
	json_object_object_add(o, "listChanged", json_object_new_boolean(1));
	json_object_object_add(caps, "tools", o);
	o = json_object_new_object();
	json_object_object_add(o, "subscribe", json_object_new_boolean(1));
	json_object_object_add(o, "listChanged", json_object_new_boolean(1));
	json_object_object_add(caps, "resources", o);
	json_object_object_add(caps, "logging", json_object_new_object());
	if (!modern) {
		json_object_object_add(caps, "tasks",
		    worker_task_capability());
		return (caps);
	}
	o = json_object_new_object();
	json_object_object_add(o, WORKER_TASK_EXTENSION,
	    json_object_new_object());
	json_object_object_add(caps, "extensions", o);
	return (caps);
}

static struct json_object *
worker_rpc_server_info(void)
{
	struct json_object	*info;

	info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string(
	    "runtimed"));
	json_object_object_add(info, "version", json_object_new_string(
	    RUNTIMED_VERSION));
	return (info);
}

/* server/discover (2026-07-28): versions, capabilities, instructions. */
static void
worker_rpc_discover(struct json_object *id)
{
	struct json_object	*res, *a;
	u_int			 i;

	res = json_object_new_object();
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_string(
	    WORKER_PROTOCOL_STATELESS));
	for (i = 0; worker_rpc_versions[i] != NULL; i++)
		json_object_array_add(a, json_object_new_string(
		    worker_rpc_versions[i]));
	json_object_object_add(res, "supportedVersions", a);
	json_object_object_add(res, "capabilities",
	    worker_rpc_capabilities(1));
	json_object_object_add(res, "serverInfo", worker_rpc_server_info());
	json_object_object_add(res, "instructions",
	    json_object_new_string(worker_tool_instructions()));
	worker_rpc_cache_hints(res);
	worker_rpc_stateless_result(res);
	worker_rpc_reply(id, res);
}

/* The session asked for structuredContent in its initialize. */
int
worker_rpc_structured(void)
{
	return (worker_rpc_structure);
}

static void
worker_rpc_initialize(struct json_object *id, struct json_object *params)
{
	struct json_object	*res, *v;
	const char		*version = WORKER_PROTOCOL_LATEST;

	if (params != NULL &&
	    json_object_object_get_ex(params, "clientInfo", &v))
		worker_client_set(v);
	worker_rpc_structure = toolresult_structured(params);
	if (params != NULL &&
	    json_object_object_get_ex(params, "protocolVersion", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    worker_rpc_protocol_supported(json_object_get_string(v)))
		version = json_object_get_string(v);

	res = json_object_new_object();
	json_object_object_add(res, "protocolVersion",
	    json_object_new_string(version));
	json_object_object_add(res, "capabilities",
	    worker_rpc_capabilities(0));
	json_object_object_add(res, "serverInfo", worker_rpc_server_info());
	json_object_object_add(res, "instructions", json_object_new_string(
	    worker_tool_instructions()));
	worker_rpc_reply(id, res);

	if (!worker_rpc_init_sent && worker_rpc_transport.initialized != NULL) {
		worker_rpc_init_sent = 1;
		worker_rpc_transport.initialized(worker_rpc_transport.arg);
	}
}

/* A tools/call refused before any tool saw it: invalid_argument. */
static void
worker_rpc_tool_error(struct json_object *id, struct json_object *params,
    const char *msg)
{
	struct json_object	*res;

	res = toolresult_error(PROTO_E_INVALID_ARGUMENT, msg);
	if (!worker_rpc_structure && !toolresult_structured(params))
		toolresult_plain(res);
	worker_rpc_reply(id, res);
}

static void
worker_rpc_tools_call(struct json_object *id, struct json_object *params,
    int bad_unicode, int ext)
{
	const struct tool_entry	*te;
	struct json_object	*name, *args = NULL, *meta = NULL, *task;
	struct worker_call	*call;
	int			 as_task = 0;

	if (params == NULL ||
	    !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		worker_rpc_error(id, -32602, "tools/call needs a tool name");
		return;
	}
	if ((te = worker_tool_find(json_object_get_string(name))) == NULL) {
		worker_rpc_error(id, -32602, "Unknown tool: %s",
		    json_object_get_string(name));
		return;
	}
	/*
	 * A task-augmented call (MCP tasks, 2025-11-25); a client that
	 * declared the 2026 extension is not heard asking (SEP-2663).
	 */
	if (!ext && json_object_object_get_ex(params, "task", &task) &&
	    task != NULL) {
		if (te->task_support == NULL) {
			worker_rpc_error(id, -32601, "%s cannot run as a "
			    "task; call it without \"task\"", te->name);
			return;
		}
		if (!json_object_is_type(task, json_type_object)) {
			worker_rpc_error(id, -32602, "task must be an object");
			return;
		}
		as_task = 1;
	}
	json_object_object_get_ex(params, "arguments", &args);
	if (args != NULL && json_object_is_type(args, json_type_null))
		args = NULL;
	if (args != NULL && !json_object_is_type(args, json_type_object)) {
		worker_rpc_tool_error(id, params, "arguments must be an "
		    "object");
		return;
	}
	if (bad_unicode || (args != NULL && !worker_args_utf8_ok(args))) {
		worker_rpc_tool_error(id, params, "a string argument is not "
		    "well-formed Unicode (lone surrogate or invalid UTF-8)");
		return;
	}
	if (args == NULL)
		args = json_object_new_object();
	else
		json_object_get(args);
	if (params != NULL)
		json_object_object_get_ex(params, "_meta", &meta);
	call = worker_call_create(id, te, args, meta);
	if (toolresult_structured(params))
		worker_call_set_structured(call);
	if (as_task)
		worker_call_set_task(call);
	if (ext && te->task_support != NULL)
		worker_call_set_ext_task(call);
	json_object_put(args);
	log_debug("tools/call %s", te->name);
	te->handler(call);
}

/* The index of a level name in v, or -1. */
static int
worker_rpc_level(struct json_object *v)
{
	u_int	i;

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return (-1);
	for (i = 0; worker_rpc_levels[i] != NULL; i++) {
		if (strcmp(json_object_get_string(v),
		    worker_rpc_levels[i]) == 0)
			return ((int)i);
	}
	return (-1);
}

/*
 * The per-request metadata of 2026-07-28, checked before anything else
 * happens: 0 (modern request, valid), 1 (legacy request), -1 (answered).
 */
static int
worker_rpc_meta(struct json_object *id, struct json_object *params)
{
	struct json_object	*meta, *v, *err, *data, *a, *n;
	const char		*ver;

	if (params == NULL || !json_object_object_get_ex(params, "_meta",
	    &meta) || !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/protocolVersion", &v))
		return (1);
	if (!json_object_is_type(v, json_type_string)) {
		worker_rpc_error(id, -32602, "invalid _meta: "
		    "io.modelcontextprotocol/protocolVersion must be a string");
		return (-1);
	}
	ver = json_object_get_string(v);
	if (strcmp(ver, WORKER_PROTOCOL_STATELESS) != 0) {
		err = json_object_new_object();
		json_object_object_add(err, "code",
		    json_object_new_int(-32022));
		json_object_object_add(err, "message", json_object_new_string(
		    "Unsupported protocol version"));
		data = json_object_new_object();
		a = json_object_new_array();
		json_object_array_add(a, json_object_new_string(
		    WORKER_PROTOCOL_STATELESS));
		json_object_object_add(data, "supported", a);
		json_object_object_add(data, "requested",
		    json_object_new_string(ver));
		json_object_object_add(err, "data", data);
		n = json_object_new_object();
		json_object_object_add(n, "jsonrpc",
		    json_object_new_string("2.0"));
		json_object_object_add(n, "id", json_object_get(id));
		json_object_object_add(n, "error", err);
		worker_rpc_emit(n);
		return (-1);
	}
	if (!json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/clientCapabilities", &v) ||
	    !json_object_is_type(v, json_type_object)) {
		worker_rpc_error(id, -32602, "invalid _meta: "
		    "io.modelcontextprotocol/clientCapabilities must be an "
		    "object");
		return (-1);
	}
	if (json_object_object_get_ex(meta, "io.modelcontextprotocol/clientInfo",
	    &v) && (!json_object_is_type(v, json_type_object) ||
	    !json_object_is_type(json_object_object_get(v, "name"),
	    json_type_string) ||
	    !json_object_is_type(json_object_object_get(v, "version"),
	    json_type_string))) {
		worker_rpc_error(id, -32602, "invalid _meta: "
		    "io.modelcontextprotocol/clientInfo needs name and "
		    "version strings");
		return (-1);
	}
	if (json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/clientInfo", &v))
		worker_client_set(v);
	if (json_object_object_get_ex(meta, "io.modelcontextprotocol/logLevel",
	    &v) && worker_rpc_level(v) < 0) {
		worker_rpc_error(id, -32602, "invalid _meta: "
		    "io.modelcontextprotocol/logLevel is not a log level");
		return (-1);
	}
	if (json_object_object_get_ex(meta, "progressToken", &v) &&
	    !json_object_is_type(v, json_type_string) &&
	    !json_object_is_type(v, json_type_int)) {
		worker_rpc_error(id, -32602, "invalid _meta: progressToken "
		    "must be a string or an integer");
		return (-1);
	}
	return (0);
}

static void
worker_rpc_list_tools(struct json_object *id, struct json_object *params)
{
	struct json_object	*res;
	u_int			 off, next;
	char			*c;

	if (worker_rpc_page_cursor(params, &off) != 0) {
		worker_rpc_error(id, -32602, "invalid cursor");
		return;
	}
	if ((res = worker_tool_page(off, worker_rpc_page_size(), &next)) == NULL) {
		worker_rpc_error(id, -32602, "invalid cursor");
		return;
	}
	if (next != 0) {
		c = worker_rpc_page_next(next);
		json_object_object_add(res, "nextCursor",
		    json_object_new_string(c));
		free(c);
	}
	if (worker_rpc_cur_stateless)
		worker_rpc_cache_hints(res);
	if (!worker_rpc_structured() && !toolresult_structured(params))
		toolresult_lean_tools(res);
	worker_rpc_reply(id, res);
}

/*
 * Did a modern request declare the tasks extension in its per-request
 * capabilities (extensions."io.modelcontextprotocol/tasks": {})?
 */
static int
worker_rpc_ext_tasks(struct json_object *params)
{
	struct json_object	*meta, *caps, *ext, *v;

	return (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/clientCapabilities", &caps) &&
	    json_object_is_type(caps, json_type_object) &&
	    json_object_object_get_ex(caps, "extensions", &ext) &&
	    json_object_is_type(ext, json_type_object) &&
	    json_object_object_get_ex(ext, WORKER_TASK_EXTENSION, &v) &&
	    json_object_is_type(v, json_type_object));
}

static void
worker_rpc_request(const char *method, struct json_object *id,
    struct json_object *params, int bad_unicode)
{
	struct json_object	*v;
	int			 modern, level, ext = 0;

	if ((modern = worker_rpc_meta(id, params)) == -1)
		return;
	modern = !modern;
	if (modern)
		ext = worker_rpc_ext_tasks(params);
	worker_rpc_cur_stateless = modern;
	if (strcmp(method, "tools/call") == 0) {
		worker_rpc_tools_call(id, params, bad_unicode, ext);
		goto out;
	}
	if (bad_unicode) {
		worker_rpc_error(id, -32602, "params hold a lone surrogate");
		goto out;
	}
	if (strcmp(method, "initialize") == 0) {
		if (modern) {
			worker_rpc_error(id, -32600, "initialize is not part "
			    "of protocol %s", WORKER_PROTOCOL_STATELESS);
			goto out;
		}
		worker_rpc_initialize(id, params);
	} else if (strcmp(method, "server/discover") == 0)
		worker_rpc_discover(id);
	else if (strcmp(method, "ping") == 0)
		worker_rpc_reply(id, json_object_new_object());
	else if (strcmp(method, "tools/list") == 0) {
		worker_rpc_list_tools(id, params);
#ifdef __GLIBC__
		/* The catalog's trees (~500 kB) back to the system at once. */
		malloc_trim(0);
#endif
	} else if (strcmp(method, "logging/setLevel") == 0) {
		v = NULL;
		if (params != NULL)
			json_object_object_get_ex(params, "level", &v);
		if ((level = worker_rpc_level(v)) < 0) {
			worker_rpc_error(id, -32602, "invalid logging level");
			goto out;
		}
		worker_rpc_log_level = level;
		worker_rpc_reply(id, json_object_new_object());
	} else if (strcmp(method, "subscriptions/listen") == 0) {
		/* Task notifications are the extension's (not sent: the
		 * acknowledgement names no taskIds, decision 069). */
		if (!ext && params != NULL && json_object_object_get_ex(params,
		    "notifications", &v) && json_object_object_get_ex(v,
		    "taskIds", NULL))
			worker_task_undeclared(id);
		else
			worker_resource_listen(id, params);
	}
	else if (strncmp(method, "resources/", 10) == 0)
		worker_resource_request(method, id, params, modern);
	else if (strncmp(method, "tasks/", 6) == 0)
		worker_task_request(method, id, params, !modern ?
		    WORKER_TASK_LEGACY : ext ? WORKER_TASK_EXT :
		    WORKER_TASK_UNDECLARED);
	else if (strcmp(method, "prompts/list") == 0) {
		v = json_object_new_object();
		json_object_object_add(v, "prompts", json_object_new_array());
		worker_rpc_reply(id, v);
	} else
		worker_rpc_error(id, -32601, "Method not found: %s", method);
out:
	worker_rpc_cur_stateless = 0;
}

/* A JSON-RPC error for a request (resources use it). */
void
worker_rpc_fail(struct json_object *id, int code, const char *msg)
{
	worker_rpc_error(id, code, "%s", msg);
}

/* A JSON-RPC error with data (takes it) for a request. */
void
worker_rpc_fail_data(struct json_object *id, int code, const char *msg,
    struct json_object *data)
{
	struct json_object	*m, *err;

	err = worker_rpc_error_object(code, msg);
	if (data != NULL)
		json_object_object_add(err, "data", data);
	m = json_object_new_object();
	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "id", json_object_get(id));
	json_object_object_add(m, "error", err);
	worker_rpc_emit(m);
}

/* A plain result for a request (resources use it); takes res. */
void
worker_rpc_result(struct json_object *id, struct json_object *res)
{
	worker_rpc_reply(id, res);
}

/* One JSON-RPC message (a line without its newline, or a frame body). */
void
worker_rpc_input(const char *buf, size_t len)
{
	struct json_object	*msg, *v, *id = NULL, *params = NULL;
	const char		*method;
	char			*cause = NULL, *text;
	size_t			 id_off, id_len;
	int			 bad_unicode, nested;

	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	while (len > 0 && isspace((unsigned char)*buf)) {
		buf++;
		len--;
	}
	if (len == 0)
		return;

	msg = jsonrpc_parse(buf, len, &id_off, &id_len, &nested, &cause);
	if (msg == NULL && nested && id_len > 0) {
		/* Well-formed but too deep: answer its id. */
		text = xstrndup(buf + id_off, id_len);
		id = jsonrpc_id_from_text(text);
		free(text);
		if (id != NULL && !json_object_is_type(id, json_type_string) &&
		    !json_object_is_type(id, json_type_int) &&
		    !json_object_is_type(id, json_type_double)) {
			json_object_put(id);
			id = NULL;
		}
		worker_rpc_error(id, -32600, "Invalid Request: %s", cause);
		json_object_put(id);
		free(cause);
		return;
	}
	if (msg == NULL) {
		worker_rpc_error(NULL, -32700, "Parse error: %s", cause);
		free(cause);
		return;
	}
	/* A lone surrogate in the id is the client's to choose. */
	bad_unicode = worker_rpc_scan_surrogates(buf, id_off) ||
	    worker_rpc_scan_surrogates(buf + id_off + id_len,
	    len - id_off - id_len);

	if (!json_object_is_type(msg, json_type_object)) {
		worker_rpc_error(NULL, -32600, "Invalid Request: %s",
		    json_object_is_type(msg, json_type_array) ?
		    "batches are not supported" : "not an object");
		goto out;
	}
	if (json_object_object_get_ex(msg, "id", &v)) {
		if (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double))
			id = v;
		else {
			worker_rpc_error(NULL, -32600,
			    "Invalid Request: bad id");
			goto out;
		}
	}
	if (!json_object_object_get_ex(msg, "method", &v)) {
		/* A response to a request of ours: we send none. */
		goto out;
	}
	if (!json_object_is_type(v, json_type_string) ||
	    !json_object_object_get_ex(msg, "jsonrpc", NULL) ||
	    strcmp(json_object_get_string(json_object_object_get(msg,
	    "jsonrpc")), "2.0") != 0) {
		if (id != NULL)
			worker_rpc_error(id, -32600, "Invalid Request");
		goto out;
	}
	method = json_object_get_string(v);
	if (json_object_object_get_ex(msg, "params", &params) &&
	    !json_object_is_type(params, json_type_object)) {
		if (json_object_is_type(params, json_type_null))
			params = NULL;
		else {
			if (id != NULL)
				worker_rpc_error(id, -32602,
				    "params must be an object");
			goto out;
		}
	}
	if (id == NULL) {
		/* Notifications need no answer. */
		log_debug("notification %s", method);
		if (strcmp(method, "notifications/initialized") == 0)
			worker_rpc_initialized = 1;
		else if (strcmp(method, "notifications/cancelled") == 0 &&
		    params != NULL &&
		    json_object_object_get_ex(params, "requestId", &v)) {
			worker_call_cancel_id(v);
			worker_resource_cancel(v);
			worker_task_cancel_id(v);
		}
		goto out;
	}
	worker_rpc_request(method, id, params, bad_unicode);
out:
	json_object_put(msg);
}
