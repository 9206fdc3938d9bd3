/* SPDX-License-Identifier: ISC */
/*
 * proxy-catalog.c: the tools/list result the proxy answers by itself, at
 * once, even before a worker is up.  It comes from, in order:
 *
 * - the last successful discovery from a worker of this proxy;
 * - the disk cache <state dir>/proxy/tool-cache.json, written atomically
 *   after each discovery that changed it;
 * - the catalog of the worker built with this proxy (proxy-builtin.c,
 *   generated at build time by runtimed-mcp-worker --print-catalog).
 *
 * Without any of them tools/list is forwarded to the worker.  A catalog
 * is only replaced by a successful, non-empty tools/list from the current
 * worker; the relay tells the client when that changed it.  The proxy's
 * own reconnect tool is added to every answer.
 */

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "proxy.h"

/*
 * Kept as text, not as a json-c tree: a tree of the catalog costs ten
 * times its text (a hash table per object), and an idle proxy holds
 * little else.
 */
static char			*proxy_catalog_plain;	/* {tools: [...]} */
static char			**proxy_catalog_ro;	/* read-only tools */
static size_t			  proxy_catalog_nro;
static char			*proxy_catalog_text;	/* with reconnect */
static char			*proxy_catalog_lean;	/* no outputSchema */
static const char		*proxy_catalog_source = "none";
static int			 proxy_catalog_on_disk;	/* cache is current */

static const char proxy_catalog_reconnect[] =
    "{\"name\":\"reconnect\","
    "\"description\":\"Replace this session's MCP worker when tools keep "
    "failing with internal errors or the worker is unavailable; "
    "notebooks and kernels stay, handles expire (connect again).\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{},"
    "\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"worker_pid\":{\"type\":\"integer\"},"
    "\"previous_worker_pid\":{\"type\":[\"integer\",\"null\"]},"
    "\"handles_expired\":{\"type\":\"boolean\"},"
    "\"error\":{\"type\":\"object\",\"properties\":{"
    "\"code\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}},"
    "\"required\":[\"code\",\"message\"]}}},"
    "\"annotations\":{\"title\":\"Reconnect the MCP worker\","
    "\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":true,\"openWorldHint\":false}}";

static int	proxy_catalog_valid(struct json_object *);
static struct json_object	*proxy_catalog_parse(const char *, size_t);
static void	proxy_catalog_set(struct json_object *, const char *);
static char	*proxy_catalog_path(void);
static void	proxy_catalog_save(void);
static void	proxy_catalog_lean_set(void);

/* A usable catalog: an object with a non-empty array of named tools. */
static int
proxy_catalog_valid(struct json_object *obj)
{
	struct json_object	*tools, *t, *name;
	size_t			 i, n;

	if (obj == NULL || !json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array))
		return (0);
	if ((n = json_object_array_length(tools)) == 0)
		return (0);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(tools, i);
		if (!json_object_is_type(t, json_type_object) ||
		    !json_object_object_get_ex(t, "name", &name) ||
		    !json_object_is_type(name, json_type_string))
			return (0);
	}
	return (1);
}

static struct json_object *
proxy_catalog_parse(const char *text, size_t len)
{
	struct json_tokener	*tok;
	struct json_object	*obj;

	if (len == 0 || len > INT32_MAX)
		return (NULL);
	if ((tok = json_tokener_new_ex(PROTO_MAX_DEPTH)) == NULL)
		return (NULL);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	json_tokener_free(tok);
	if (!proxy_catalog_valid(obj)) {
		json_object_put(obj);
		return (NULL);
	}
	return (obj);
}

/*
 * The catalog for a client that did not ask for structuredContent
 * (decision 043): the same tools without their output schemas.
 */
static void
proxy_catalog_lean_set(void)
{
	struct json_object	*obj;

	free(proxy_catalog_lean);
	obj = json_tokener_parse(proxy_catalog_text);
	toolresult_lean_tools(obj);
	proxy_catalog_lean = xstrdup(json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

/* Take obj as the catalog and render the answer with reconnect added. */
static void
proxy_catalog_set(struct json_object *obj, const char *source)
{
	struct json_object	*copy = NULL, *tools, *t, *rc, *v, *ann;
	size_t			 i, n, len;

	free(proxy_catalog_plain);
	proxy_catalog_plain = xstrdup(json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	proxy_catalog_source = source;

	/* Which tools a retry may send again (proxy_catalog_read_only). */
	for (i = 0; i < proxy_catalog_nro; i++)
		free(proxy_catalog_ro[i]);
	free(proxy_catalog_ro);
	proxy_catalog_ro = NULL;
	proxy_catalog_nro = 0;
	json_object_object_get_ex(obj, "tools", &tools);
	n = json_object_array_length(tools);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(tools, i);
		if (!json_object_object_get_ex(t, "annotations", &ann) ||
		    !json_object_object_get_ex(ann, "readOnlyHint", &v) ||
		    !json_object_is_type(v, json_type_boolean) ||
		    !json_object_get_boolean(v))
			continue;
		proxy_catalog_ro = xreallocarray(proxy_catalog_ro,
		    proxy_catalog_nro + 1, sizeof *proxy_catalog_ro);
		proxy_catalog_ro[proxy_catalog_nro++] = xstrdup(
		    json_object_get_string(json_object_object_get(t, "name")));
	}

	rc = json_tokener_parse(proxy_catalog_reconnect);
	if (rc == NULL)
		fatalx("the reconnect tool is not JSON");

	/*
	 * The worker's tools, then ours: the plain text with ours spliced
	 * in before its closing "]}" (what json-c prints for the list with
	 * ours added), unless the worker has a reconnect of its own.
	 */
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(tools, i);
		if (strcmp(json_object_get_string(json_object_object_get(t,
		    "name")), "reconnect") == 0)
			break;
	}
	len = strlen(proxy_catalog_plain);
	if (i == n && len > 2 &&
	    strcmp(proxy_catalog_plain + len - 2, "]}") == 0) {
		free(proxy_catalog_text);
		xasprintf(&proxy_catalog_text, "%.*s,%s]}", (int)(len - 2),
		    proxy_catalog_plain, json_object_to_json_string_ext(rc,
		    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(rc);
		json_object_put(obj);
		goto out;
	}

	/* Drop the worker's own reconnect from a copy, then add ours. */
	json_object_deep_copy(obj, &copy, NULL);
	json_object_put(obj);
	json_object_object_get_ex(copy, "tools", &tools);
	for (i = json_object_array_length(tools); i > 0; i--) {
		t = json_object_array_get_idx(tools, i - 1);
		if (strcmp(json_object_get_string(json_object_object_get(t,
		    "name")), "reconnect") == 0)
			json_object_array_del_idx(tools, i - 1, 1);
	}
	json_object_array_add(tools, rc);
	free(proxy_catalog_text);
	proxy_catalog_text = xstrdup(json_object_to_json_string_ext(copy,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(copy);
out:
	proxy_catalog_lean_set();
#ifdef __GLIBC__
	/* The trees' memory goes back to the system, not to an idle heap. */
	malloc_trim(0);
#endif
	log_debug("tool catalog from %s", source);
}

static char *
proxy_catalog_path(void)
{
	char	*state, *path;

	state = sockdir_state_path();
	xasprintf(&path, "%s/proxy/tool-cache.json", state);
	free(state);
	return (path);
}

static void
proxy_catalog_save(void)
{
	char		*path, *dir, *slash, *cause = NULL;
	const char	*text;

	path = proxy_catalog_path();
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	text = proxy_catalog_plain;
	if (util_mkdir_private(dir, &cause) != 0 ||
	    atomic_write(path, text, strlen(text), 0600, &cause) != 0) {
		log_warnx("tool cache: %s", cause);
		free(cause);
	} else
		proxy_catalog_on_disk = 1;
	free(dir);
	free(path);
}

/* At start: the disk cache, else the built-in catalog, else nothing. */
void
proxy_catalog_init(void)
{
	struct json_object	*obj;
	char			*path, *text = NULL, *cause = NULL;
	size_t			 len;

	path = proxy_catalog_path();
	if (util_read_file(path, &text, &len, &cause) == 0) {
		if ((obj = proxy_catalog_parse(text, len)) != NULL) {
			proxy_catalog_set(obj, "the disk cache");
			proxy_catalog_on_disk = 1;
		} else
			log_warnx("%s is not a tool catalog; ignored", path);
		free(text);
	} else
		free(cause);
	free(path);
	if (proxy_catalog_plain != NULL)
		return;
	obj = proxy_catalog_parse(proxy_builtin_catalog,
	    strlen(proxy_builtin_catalog));
	if (obj != NULL)
		proxy_catalog_set(obj, "the built-in catalog");
	else
		log_info("no tool catalog yet: tools/list waits for a worker");
}

int
proxy_catalog_ready(void)
{
	return (proxy_catalog_text != NULL);
}

/*
 * The tools/list result, reconnect included, as JSON text: with output
 * schemas for a client that asked for structuredContent, else without.
 */
const char *
proxy_catalog_result(int structured)
{
	return (structured ? proxy_catalog_text : proxy_catalog_lean);
}

/*
 * Whether a tools/call of this tool may be sent again after the worker
 * died before answering: only when the catalog says it is read-only.
 */
int
proxy_catalog_read_only(const char *name)
{
	size_t	i;

	for (i = 0; i < proxy_catalog_nro; i++) {
		if (strcmp(proxy_catalog_ro[i], name) == 0)
			return (1);
	}
	return (0);
}

/*
 * A tools/list result from the current worker.  Returns 1 when it
 * replaced a different catalog the client may have been given (it should
 * be told), 0 otherwise.  The disk cache is brought up to date either way.
 */
int
proxy_catalog_discovered(struct json_object *result)
{
	struct json_object	*obj = NULL;
	int			 had = proxy_catalog_plain != NULL, changed;

	if (!proxy_catalog_valid(result)) {
		log_warnx("worker answered tools/list without tools; "
		    "keeping the catalog from %s", proxy_catalog_source);
		return (0);
	}
	/* Keep only what a catalog holds, not a nextCursor or _meta. */
	obj = json_object_new_object();
	json_object_object_add(obj, "tools", json_object_get(
	    json_object_object_get(result, "tools")));
	changed = proxy_catalog_plain == NULL ||
	    strcmp(proxy_catalog_plain, json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE)) != 0;
	if (!changed) {
		json_object_put(obj);
		proxy_catalog_source = "the current worker";
		if (!proxy_catalog_on_disk)
			proxy_catalog_save();
		return (0);
	}
	proxy_catalog_on_disk = 0;
	proxy_catalog_set(obj, "the current worker");
	proxy_catalog_save();
	log_info("tool catalog changed; cache saved");
	return (had);
}

void
proxy_catalog_free(void)
{
	size_t	i;

	for (i = 0; i < proxy_catalog_nro; i++)
		free(proxy_catalog_ro[i]);
	free(proxy_catalog_ro);
	proxy_catalog_ro = NULL;
	proxy_catalog_nro = 0;
	free(proxy_catalog_plain);
	proxy_catalog_plain = NULL;
	free(proxy_catalog_text);
	proxy_catalog_text = NULL;
	free(proxy_catalog_lean);
	proxy_catalog_lean = NULL;
}
