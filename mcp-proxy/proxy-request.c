/* SPDX-License-Identifier: ISC */
/*
 * proxy-request.c: reading one client message for the relay: parse it,
 * learn its id and method, pick its params, and judge whether a request
 * may be sent again to the next worker if this one dies first (a
 * request without effects may; a mutation is answered outcome_unknown
 * instead, docs/errors.md, docs/durability.md).
 */

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

/* An object message, or NULL (the worker answers what is not one). */
struct json_object *
proxy_request_parse(const char *data, size_t len)
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

/*
 * Free a message proxy_request_parse made of len bytes.  A large one's tree
 * (a tools/list result is ~600 json-c objects, 0.4 MB of hash tables)
 * leaves free pages between the few live allocations of an idle proxy;
 * they go back to the system now instead of staying resident.
 */
void
proxy_request_free(struct json_object *obj, size_t len)
{
	if (obj == NULL)
		return;
	json_object_put(obj);
#ifdef __GLIBC__
	if (len >= PROXY_TRIM_BYTES)
		malloc_trim(0);
#endif
}

/* Id (as the JSON text it was sent with; caller frees) and method. */
void
proxy_request_classify(struct json_object *obj, char **id, const char **method)
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
const char *
proxy_request_param(struct json_object *obj, const char *key)
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

/* A request carrying the stateless revision's per-request version. */
int
proxy_request_modern(struct json_object *obj)
{
	struct json_object	*params, *meta;

	return (json_object_object_get_ex(obj, "params", &params) &&
	    json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_is_type(meta, json_type_object) &&
	    json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/protocolVersion", NULL));
}

/* Whether a request may be sent to the next worker if this one dies. */
int
proxy_request_may_repeat(struct json_object *obj, const char *method)
{
	struct json_object	*params, *args;
	const char		*tool;

	/* tasks/cancel interrupts a run: sent twice, the second is refused
	 * (the task has ended) and hides that the first worked; tasks/update
	 * answers a cell's input(), once. */
	if (strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0 ||
	    strcmp(method, "tasks/cancel") == 0 ||
	    strcmp(method, "tasks/update") == 0)
		return (0);
	if (strcmp(method, "tools/call") != 0)
		return (1);	/* the other requests have no effects */
	if ((tool = proxy_request_param(obj, "name")) == NULL ||
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
