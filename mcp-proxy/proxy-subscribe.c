/* SPDX-License-Identifier: ISC */
/*
 * proxy-subscribe.c: the client's resources/subscribe, unsubscribe and
 * subscriptions/listen requests, on the leases of proxy-lease.c, so the
 * worker sees one subscription per URI however many hold it.
 */

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "proxy.h"

static void	proxy_subscribe_send(const char *, const char *);
static int	proxy_subscribe_ext_tasks(struct json_object *);

/* Did the request declare the tasks extension in its capabilities? */
static int
proxy_subscribe_ext_tasks(struct json_object *params)
{
	struct json_object	*meta, *caps, *ext, *v;

	return (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/clientCapabilities", &caps) &&
	    json_object_object_get_ex(caps, "extensions", &ext) &&
	    json_object_is_type(ext, json_type_object) &&
	    json_object_object_get_ex(ext, "io.modelcontextprotocol/tasks",
	    &v) && json_object_is_type(v, json_type_object));
}

/* Ask the worker (un)subscribe for uri as the proxy's own request. */
static void
proxy_subscribe_send(const char *uri, const char *method)
{
	struct json_object	*params;

	params = json_object_new_object();
	json_object_object_add(params, "uri", json_object_new_string(uri));
	proxy_replay_private(PROXY_REPLAY_SUBSCRIBE, method,
	    json_object_to_json_string_ext(params,
	    JSON_C_TO_STRING_PLAIN|JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(params);
}

/* Subscribe the worker to a URI someone holds a lease on. */
void
proxy_subscribe_worker(const char *uri)
{
	proxy_subscribe_send(uri, "resources/subscribe");
}

/* The last lease on uri ended: the worker may drop it. */
void
proxy_subscribe_drop(const char *uri)
{
	if (proxy_relay_up())
		proxy_subscribe_send(uri, "resources/unsubscribe");
}

/*
 * subscriptions/listen (2026-07-28): a holder of leases until it is
 * cancelled.  It is acknowledged at once with what of its filter is
 * honoured (the list changes, and the URIs it now holds), even when it
 * names no resource: a client waits for the acknowledgement before it
 * goes on (Claude Code gave up after ~27 s without one).
 */
void
proxy_subscribe_listen(struct json_object *obj, const char *id)
{
	struct json_object	*params, *filter, *uris = NULL, *v, *ok, *held;
	char			*holder;
	size_t			 i;

	if (!json_object_object_get_ex(obj, "params", &params) ||
	    !json_object_object_get_ex(params, "notifications", &filter) ||
	    !json_object_is_type(filter, json_type_object)) {
		proxy_answer_error(id, -32602, "subscriptions/listen "
		    "needs params.notifications");
		return;
	}
	if (json_object_object_get_ex(filter, "resourceSubscriptions",
	    &uris) && !json_object_is_type(uris, json_type_array)) {
		proxy_answer_error(id, -32602,
		    "resourceSubscriptions must be an array of URIs");
		return;
	}
	/* Task notifications are the tasks extension's: refused to a
	 * request that did not declare it; to one that did, acknowledged
	 * with no taskIds, as none are sent (decision 069). */
	if (json_object_object_get_ex(filter, "taskIds", NULL) &&
	    !proxy_subscribe_ext_tasks(params)) {
		proxy_answer_missing_tasks(id);
		return;
	}
	ok = json_object_new_object();
	if (json_object_get_boolean(json_object_object_get(filter,
	    "toolsListChanged")))
		json_object_object_add(ok, "toolsListChanged",
		    json_object_new_boolean(1));
	if (json_object_get_boolean(json_object_object_get(filter,
	    "resourcesListChanged")))
		json_object_object_add(ok, "resourcesListChanged",
		    json_object_new_boolean(1));
	held = json_object_new_array();
	xasprintf(&holder, "listen:%s", id);
	for (i = 0; uris != NULL && i < json_object_array_length(uris); i++) {
		v = json_object_array_get_idx(uris, i);
		if (!json_object_is_type(v, json_type_string))
			continue;
		switch (proxy_lease_add(holder, json_object_get_string(v))) {
		case PROXY_LEASE_FIRST:
			if (proxy_relay_up())
				proxy_subscribe_worker(
				    json_object_get_string(v));
			break;
		case PROXY_LEASE_FULL:
			proxy_lease_remove_holder(holder, proxy_subscribe_drop);
			proxy_answer_error(id, -32603, "too many "
			    "resource watches (128)");
			json_object_put(held);
			json_object_put(ok);
			free(holder);
			return;
		default:
			break;
		}
		json_object_array_add(held, json_object_get(v));
	}
	free(holder);
	if (uris != NULL)
		json_object_object_add(ok, "resourceSubscriptions", held);
	else
		json_object_put(held);
	proxy_answer_listen_acknowledged(id, ok);
}

/*
 * resources/subscribe and unsubscribe: 1 when answered here.  A
 * subscribe that took the first lease on its URI goes to the worker, and
 * *first gets the URI (caller frees) so a refusal gives the lease back.
 */
int
proxy_subscribe_request(struct json_object *obj, const char *id,
    const char *method, char **first)
{
	const char	*uri;

	if ((uri = proxy_request_param(obj, "uri")) == NULL)
		return (0);	/* the worker says what is wrong */
	if (strcmp(method, "resources/subscribe") == 0) {
		switch (proxy_lease_add("session", uri)) {
		case PROXY_LEASE_FIRST:
			*first = xstrdup(uri);
			return (0);
		case PROXY_LEASE_FULL:
			proxy_answer_error(id, -32603, "too many "
			    "resource watches (128)");
			return (1);
		default:
			proxy_answer_result(id, json_object_new_object());
			return (1);
		}
	}
	switch (proxy_lease_remove("session", uri)) {
	case PROXY_LEASE_NONE:
		/* Another listener still holds it: the worker keeps it. */
		proxy_answer_result(id, json_object_new_object());
		return (1);
	default:
		return (0);
	}
}

/* A listen stream ended: its leases go, the other listeners' stay. */
void
proxy_subscribe_cancel(const char *id)
{
	char	*holder;

	xasprintf(&holder, "listen:%s", id);
	proxy_lease_remove_holder(holder, proxy_subscribe_drop);
	free(holder);
}
