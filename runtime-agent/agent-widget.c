/* SPDX-License-Identifier: ISC */
/*
 * agent-widget.c: what an ipywidgets view shows, kept from the kernel's
 * comm messages (docs/decisions/089).  A widget's state lives in its
 * model, which the kernel opens (comm_open on the jupyter.widget target)
 * and updates (comm_msg, method "update") on iopub; the view output
 * holds only the model's id.  The agent keeps the few fields a reader
 * can use (the model's class, description, value, index, min, max and
 * option labels) per model, bounded in count and bytes, forgets a model
 * on comm_close and all of them when the kernel goes, and puts the
 * model's state, as it is when the view is shown, in the view output's
 * "transient" (never saved to .ipynb).
 *
 * ipywidgets 7 and 8 send {state, buffer_paths} as the comm's data;
 * ipywidgets 6 (Debian 12's) sends the state itself.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent.h"

#define AGENT_WIDGET_VIEW	"application/vnd.jupyter.widget-view+json"


struct agent_widget {
	char				*id;	/* comm_id = model_id */
	struct json_object		*state;	/* the kept fields */
	size_t				 size;	/* their JSON's bytes */
	TAILQ_ENTRY(agent_widget)	 entry;	/* most recently used first */
};
TAILQ_HEAD(agent_widget_head, agent_widget);

static struct agent_widget_head	agent_widget_all =
    TAILQ_HEAD_INITIALIZER(agent_widget_all);
static u_int			agent_widget_n;
static size_t			agent_widget_bytes;

/* The fields kept, as the state names them. */
static const char *const agent_widget_keys[] = {
	"_model_name", "description", "value", "index", "min", "max",
	"_options_labels", "options",
};

static struct agent_widget	*agent_widget_find(const char *);
static void	agent_widget_free(struct agent_widget *);
static struct json_object	*agent_widget_value(struct json_object *,
		    int);
static void	agent_widget_merge(struct agent_widget *,
		    struct json_object *);
static struct json_object	*agent_widget_state(struct json_object *);

static struct agent_widget *
agent_widget_find(const char *id)
{
	struct agent_widget	*w;

	TAILQ_FOREACH(w, &agent_widget_all, entry) {
		if (strcmp(w->id, id) == 0)
			return (w);
	}
	return (NULL);
}

static void
agent_widget_free(struct agent_widget *w)
{
	TAILQ_REMOVE(&agent_widget_all, w, entry);
	agent_widget_n--;
	agent_widget_bytes -= w->size;
	json_object_put(w->state);
	free(w->id);
	free(w);
}

/* The kernel is gone (or restarted): its models with it. */
void
agent_widget_clear(void)
{
	struct agent_widget	*w;

	while ((w = TAILQ_FIRST(&agent_widget_all)) != NULL)
		agent_widget_free(w);
}

/*
 * A kept copy of a state value: scalars, strings cut to
 * AGENT_WIDGET_STR bytes (at a UTF-8 boundary), arrays of those
 * (AGENT_WIDGET_ITEMS at most); NULL for anything else.
 */
static struct json_object *
agent_widget_value(struct json_object *v, int nested)
{
	struct json_object	*a, *e;
	const char		*s;
	size_t			 i, len;

	switch (json_object_get_type(v)) {
	case json_type_null:
		return (NULL);
	case json_type_boolean:
	case json_type_int:
	case json_type_double:
		return (json_object_get(v));
	case json_type_string:
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (len <= AGENT_WIDGET_STR)
			return (json_object_get(v));
		for (len = AGENT_WIDGET_STR; len > 0 &&
		    ((u_char)s[len] & 0xc0) == 0x80; len--)
			;
		return (json_object_new_string_len(s, (int)len));
	case json_type_array:
		if (nested)
			return (NULL);
		a = json_object_new_array();
		for (i = 0; i < json_object_array_length(v) &&
		    i < AGENT_WIDGET_ITEMS; i++) {
			e = agent_widget_value(json_object_array_get_idx(v, i),
			    1);
			json_object_array_add(a, e);
		}
		if (json_object_array_length(v) > AGENT_WIDGET_ITEMS)
			json_object_array_add(a, json_object_new_string("…"));
		return (a);
	default:
		return (NULL);
	}
}

/* The comm's data as a state object: {state} (7, 8) or itself (6). */
static struct json_object *
agent_widget_state(struct json_object *data)
{
	struct json_object	*st;

	if (!json_object_is_type(data, json_type_object))
		return (NULL);
	if (json_object_object_get_ex(data, "state", &st) &&
	    json_object_is_type(st, json_type_object))
		return (st);
	return (data);
}

/* The kept fields of state into w; the bounds kept by evicting. */
static void
agent_widget_merge(struct agent_widget *w, struct json_object *state)
{
	struct json_object	*v, *kept;
	size_t			 i;

	for (i = 0; i < nitems(agent_widget_keys); i++) {
		if (!json_object_object_get_ex(state, agent_widget_keys[i],
		    &v))
			continue;
		if ((kept = agent_widget_value(v, 0)) == NULL)
			json_object_object_del(w->state, agent_widget_keys[i]);
		else
			json_object_object_add(w->state, agent_widget_keys[i],
			    kept);
	}
	/* What the model shows is output: secrets are taken out. */
	agent_redact_json(w->state);
	agent_widget_bytes -= w->size;
	w->size = strlen(json_object_to_json_string_ext(w->state,
	    JSON_C_TO_STRING_PLAIN));
	agent_widget_bytes += w->size;
	while ((agent_widget_n > AGENT_WIDGET_MAX ||
	    agent_widget_bytes > AGENT_WIDGET_BYTES) &&
	    TAILQ_LAST(&agent_widget_all, agent_widget_head) != w)
		agent_widget_free(TAILQ_LAST(&agent_widget_all,
		    agent_widget_head));
}

/* comm_open, comm_msg or comm_close from the kernel, on iopub. */
void
agent_widget_comm(const char *type, struct json_object *content)
{
	struct agent_widget	*w;
	struct json_object	*v, *data, *state;
	const char		*id, *s;

	if (!json_object_object_get_ex(content, "comm_id", &v) ||
	    !json_object_is_type(v, json_type_string))
		return;
	id = json_object_get_string(v);
	w = agent_widget_find(id);
	data = json_object_object_get(content, "data");
	if (strcmp(type, "comm_close") == 0) {
		if (w != NULL)
			agent_widget_free(w);
		return;
	}
	if (strcmp(type, "comm_open") == 0) {
		if (!json_object_object_get_ex(content, "target_name", &v) ||
		    (s = json_object_get_string(v)) == NULL ||
		    strcmp(s, "jupyter.widget") != 0 ||
		    (state = agent_widget_state(data)) == NULL)
			return;
		if (w != NULL)
			agent_widget_free(w);
		w = xcalloc(1, sizeof *w);
		w->id = xstrdup(id);
		w->state = json_object_new_object();
		TAILQ_INSERT_HEAD(&agent_widget_all, w, entry);
		agent_widget_n++;
		agent_widget_merge(w, state);
		return;
	}
	if (strcmp(type, "comm_msg") != 0 || w == NULL ||
	    !json_object_is_type(data, json_type_object) ||
	    !json_object_object_get_ex(data, "method", &v) ||
	    (s = json_object_get_string(v)) == NULL ||
	    (strcmp(s, "update") != 0 && strcmp(s, "echo_update") != 0) ||
	    !json_object_object_get_ex(data, "state", &state) ||
	    !json_object_is_type(state, json_type_object))
		return;
	TAILQ_REMOVE(&agent_widget_all, w, entry);
	TAILQ_INSERT_HEAD(&agent_widget_all, w, entry);
	agent_widget_merge(w, state);
}

/*
 * The state of the model a view output (content of display_data) shows,
 * a copy (later updates do not change an output), or NULL: not a view,
 * or a model not seen.
 */
struct json_object *
agent_widget_view(struct json_object *content)
{
	struct agent_widget	*w;
	struct json_object	*data, *view, *v, *copy = NULL;

	if (!json_object_object_get_ex(content, "data", &data) ||
	    !json_object_object_get_ex(data, AGENT_WIDGET_VIEW, &view) ||
	    !json_object_object_get_ex(view, "model_id", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (w = agent_widget_find(json_object_get_string(v))) == NULL)
		return (NULL);
	if (json_object_deep_copy(w->state, &copy, NULL) != 0)
		return (NULL);
	return (copy);
}
