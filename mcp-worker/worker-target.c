/* SPDX-License-Identifier: ISC */
/*
 * worker-target.c: the target form of docs/targets.md.  Exactly one
 * of notebook_handle or notebook_id (+ domain omitted or "local"); any
 * other shape fails before the tool has any effect.  Pure.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker.h"
#include "domain.h"

#define WORKER_TARGET_MAX	128

static struct json_object	*worker_target_get(struct json_object *,
		    const char *);
static int	worker_target_string(struct json_object *, const char *,
		    char **);

static struct json_object *
worker_target_get(struct json_object *args, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(args, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return (NULL);
	return (v);
}

static int
worker_target_string(struct json_object *v, const char *key, char **msg)
{
	int	len;

	if (!json_object_is_type(v, json_type_string)) {
		xasprintf(msg, "%s must be a string", key);
		return (-1);
	}
	len = json_object_get_string_len(v);
	if (len == 0 || len > WORKER_TARGET_MAX ||
	    strlen(json_object_get_string(v)) != (size_t)len) {
		xasprintf(msg, "%s is not a valid %s", key, key);
		return (-1);
	}
	return (0);
}

/*
 * The domain argument of connect_notebook and create_notebook: NULL for
 * none or local, else a name domains.json may hold.
 */
int
worker_target_domain(struct json_object *args, const char **domain,
    char **msg)
{
	struct json_object	*v;
	const char		*d;

	*domain = NULL;
	if ((v = worker_target_get(args, "domain")) == NULL)
		return (0);
	if (!json_object_is_type(v, json_type_string)) {
		xasprintf(msg, "domain must be a string");
		return (-1);
	}
	d = json_object_get_string(v);
	if (strcasecmp(d, "local") == 0)
		return (0);
	if (!domain_valid_name(d)) {
		xasprintf(msg, "domain must be local or a name from "
		    "domains.json (runtimectl domains)");
		return (-1);
	}
	*domain = d;
	return (0);
}

int
worker_target_parse(struct json_object *args, int allow_id,
    struct worker_target *t, char **msg)
{
	struct json_object	*h, *id, *dom;
	const char		*d;

	memset(t, 0, sizeof *t);
	h = worker_target_get(args, "notebook_handle");
	id = worker_target_get(args, "notebook_id");
	dom = worker_target_get(args, "domain");

	if (h != NULL && id != NULL) {
		xasprintf(msg, "give exactly one of notebook_handle or "
		    "notebook_id, not both");
		return (-1);
	}
	if (h == NULL && id == NULL) {
		xasprintf(msg, "missing notebook target: pass the "
		    "notebook_handle from connect_notebook or "
		    "create_notebook%s",
		    allow_id ? " (or the notebook_id of an attached notebook)"
		    : "");
		return (-1);
	}
	if (h != NULL) {
		if (dom != NULL) {
			xasprintf(msg, "domain goes only with notebook_id");
			return (-1);
		}
		if (worker_target_string(h, "notebook_handle", msg) != 0)
			return (-1);
		t->kind = WORKER_TARGET_HANDLE;
		t->value = json_object_get_string(h);
		return (0);
	}
	if (!allow_id) {
		xasprintf(msg, "this tool takes notebook_handle only");
		return (-1);
	}
	if (worker_target_string(id, "notebook_id", msg) != 0)
		return (-1);
	if (dom != NULL) {
		if (!json_object_is_type(dom, json_type_string)) {
			xasprintf(msg, "domain must be a string");
			return (-1);
		}
		d = json_object_get_string(dom);
		if (strcasecmp(d, "local") != 0) {
			if (!domain_valid_name(d)) {
				xasprintf(msg, "domain must be local or a name "
				    "from domains.json (runtimectl domains)");
				return (-1);
			}
			t->domain = d;
		}
	}
	t->kind = WORKER_TARGET_ID;
	t->value = json_object_get_string(id);
	return (0);
}
