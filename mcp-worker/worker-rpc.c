/*
 * worker-rpc.c: the JSON-RPC 2.0 dispatcher shared by both transports.
 * One message in, zero or one message out (tools/call answers later).
 */

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static struct event_base	*worker_rpc_evbase;
static worker_rpc_send_cb	 worker_rpc_out;
static void			*worker_rpc_out_arg;
static void			(*worker_rpc_on_init)(void);
static int			 worker_rpc_init_sent;

static const char *const worker_rpc_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

static const char *const worker_rpc_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

void
worker_rpc_init(struct event_base *base, worker_rpc_send_cb out, void *arg,
    void (*on_init)(void))
{
	worker_rpc_evbase = base;
	worker_rpc_out = out;
	worker_rpc_out_arg = arg;
	worker_rpc_on_init = on_init;
}

struct event_base *
worker_rpc_base(void)
{
	return worker_rpc_evbase;
}

int
worker_rpc_protocol_supported(const char *v)
{
	u_int	i;

	for (i = 0; worker_rpc_versions[i] != NULL; i++) {
		if (strcmp(v, worker_rpc_versions[i]) == 0)
			return 1;
	}
	return 0;
}

/* Send one message; takes the reference. */
static void
worker_rpc_emit(struct json_object *msg)
{
	const char	*s;
	size_t		 len;

	s = json_object_to_json_string_length(msg,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (worker_rpc_out != NULL)
		worker_rpc_out(s, len, worker_rpc_out_arg);
	json_object_put(msg);
}

/* Reply to a request id (borrowed); takes the result reference. */
static void
worker_rpc_reply(struct json_object *id, struct json_object *result)
{
	struct json_object	*msg;

	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result);
	worker_rpc_emit(msg);
}

/* Answer a tools/call (worker-call.c); takes the result reference. */
void
worker_rpc_answer(struct json_object *id, struct json_object *result)
{
	worker_rpc_reply(id, result);
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
		return -1;
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
			return -1;
	}
	*out = v;
	return 0;
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
			return 1;
		if (u < 0xd800 || u > 0xdbff)
			continue;
		if (i + 2 < len && s[i + 1] == '\\' && s[i + 2] == 'u' &&
		    worker_rpc_hex4(s + i + 3, len - i - 3, &lo) == 0 &&
		    lo >= 0xdc00 && lo <= 0xdfff) {
			i += 6;
			continue;
		}
		return 1;
	}
	return 0;
}

static struct json_object *
worker_rpc_capabilities(void)
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
	return caps;
}

static void
worker_rpc_initialize(struct json_object *id, struct json_object *params)
{
	struct json_object	*res, *info, *v;
	const char		*version = WORKER_PROTOCOL_LATEST;

	if (params != NULL &&
	    json_object_object_get_ex(params, "protocolVersion", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    worker_rpc_protocol_supported(json_object_get_string(v)))
		version = json_object_get_string(v);

	res = json_object_new_object();
	json_object_object_add(res, "protocolVersion",
	    json_object_new_string(version));
	json_object_object_add(res, "capabilities",
	    worker_rpc_capabilities());
	info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string(
	    "runtimed"));
	json_object_object_add(info, "version", json_object_new_string(
	    RUNTIMED_VERSION));
	json_object_object_add(res, "serverInfo", info);
	json_object_object_add(res, "instructions", json_object_new_string(
	    "Jupyter notebooks on real kernels. Start with connect_notebook "
	    "(an existing .ipynb) or create_notebook; pass the returned "
	    "notebook_handle to every other tool. Edit with edit_cells, run "
	    "with run_cells (long runs: get_results with the execution_id), "
	    "read compactly with inspect_notebook."));
	worker_rpc_reply(id, res);

	if (!worker_rpc_init_sent && worker_rpc_on_init != NULL) {
		worker_rpc_init_sent = 1;
		worker_rpc_on_init();
	}
}

static void
worker_rpc_tools_call(struct json_object *id, struct json_object *params,
    int bad_unicode)
{
	const struct tool_entry	*te;
	struct json_object	*name, *args = NULL;
	struct worker_call	*call;

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
	json_object_object_get_ex(params, "arguments", &args);
	if (args != NULL && json_object_is_type(args, json_type_null))
		args = NULL;
	if (args != NULL && !json_object_is_type(args, json_type_object)) {
		worker_rpc_reply(id, worker_call_error_result(
		    "invalid_argument", "arguments must be an object"));
		return;
	}
	if (bad_unicode || (args != NULL && !worker_args_utf8_ok(args))) {
		worker_rpc_reply(id, worker_call_error_result(
		    "invalid_argument", "a string argument is not well-formed "
		    "Unicode (lone surrogate or invalid UTF-8)"));
		return;
	}
	if (args == NULL)
		args = json_object_new_object();
	else
		json_object_get(args);
	call = worker_call_create(id, te, args);
	json_object_put(args);
	log_debug("tools/call %s", te->name);
	te->handler(call);
}

static int
worker_rpc_level_ok(struct json_object *params)
{
	struct json_object	*v;
	u_int			 i;

	if (params == NULL ||
	    !json_object_object_get_ex(params, "level", &v) ||
	    !json_object_is_type(v, json_type_string))
		return 0;
	for (i = 0; worker_rpc_levels[i] != NULL; i++) {
		if (strcmp(json_object_get_string(v),
		    worker_rpc_levels[i]) == 0)
			return 1;
	}
	return 0;
}

static void
worker_rpc_request(const char *method, struct json_object *id,
    struct json_object *params, int bad_unicode)
{
	struct json_object	*res;

	if (strcmp(method, "tools/call") == 0) {
		worker_rpc_tools_call(id, params, bad_unicode);
		return;
	}
	if (bad_unicode) {
		worker_rpc_error(id, -32602, "params hold a lone surrogate");
		return;
	}
	if (strcmp(method, "initialize") == 0)
		worker_rpc_initialize(id, params);
	else if (strcmp(method, "ping") == 0)
		worker_rpc_reply(id, json_object_new_object());
	else if (strcmp(method, "tools/list") == 0) {
		if (params != NULL &&
		    json_object_object_get_ex(params, "cursor", NULL)) {
			worker_rpc_error(id, -32602, "invalid cursor");
			return;
		}
		worker_rpc_reply(id, worker_tool_list());
	} else if (strcmp(method, "logging/setLevel") == 0) {
		if (!worker_rpc_level_ok(params)) {
			worker_rpc_error(id, -32602, "invalid logging level");
			return;
		}
		worker_rpc_reply(id, json_object_new_object());
	} else if (strcmp(method, "resources/list") == 0) {
		res = json_object_new_object();
		json_object_object_add(res, "resources",
		    json_object_new_array());
		worker_rpc_reply(id, res);
	} else if (strcmp(method, "resources/templates/list") == 0) {
		res = json_object_new_object();
		json_object_object_add(res, "resourceTemplates",
		    json_object_new_array());
		worker_rpc_reply(id, res);
	} else if (strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0)
		worker_rpc_reply(id, json_object_new_object());
	else if (strcmp(method, "resources/read") == 0)
		worker_rpc_error(id, -32002, "Resource not found");
	else
		worker_rpc_error(id, -32601, "Method not found: %s", method);
}

/* One JSON-RPC message (a line without its newline, or a frame body). */
void
worker_rpc_input(const char *buf, size_t len)
{
	struct json_tokener	*tok;
	struct json_object	*msg, *v, *id = NULL, *params = NULL;
	enum json_tokener_error	 jerr;
	const char		*method;
	size_t			 end;
	int			 bad_unicode;

	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	while (len > 0 && isspace((unsigned char)*buf)) {
		buf++;
		len--;
	}
	if (len == 0)
		return;
	if (len > INT32_MAX) {
		worker_rpc_error(NULL, -32700, "Parse error: too long");
		return;
	}

	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	msg = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (msg == NULL || jerr != json_tokener_success || end != len) {
		json_object_put(msg);
		worker_rpc_error(NULL, -32700, "Parse error: %s",
		    jerr != json_tokener_success ?
		    json_tokener_error_desc(jerr) : "trailing data");
		return;
	}
	bad_unicode = worker_rpc_scan_surrogates(buf, len);

	if (!json_object_is_type(msg, json_type_object)) {
		worker_rpc_error(NULL, -32600, "Invalid Request: %s",
		    json_object_is_type(msg, json_type_array) ?
		    "batches are not supported" : "not an object");
		goto out;
	}
	if (json_object_object_get_ex(msg, "id", &v)) {
		if (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_int))
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
		/* Notifications, cancellation included, need no answer. */
		log_debug("notification %s", method);
		goto out;
	}
	worker_rpc_request(method, id, params, bad_unicode);
out:
	json_object_put(msg);
}
