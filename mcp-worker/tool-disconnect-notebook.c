/* SPDX-License-Identifier: ISC */
/*
 * tool-disconnect-notebook.c: release one handle.  Other handles of the
 * same notebook keep working; the room connection closes with the last.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_disconnect_notebook(struct worker_call *);

static void
tool_disconnect_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", NULL
	};
	struct worker_handle		*h;
	struct json_object		*sc;
	char				*text, *id, *nb;

	if (worker_call_check(call, allowed) != 0)
		return;
	/* An unavailable handle can still give its slot back. */
	h = worker_attach_find(json_object_get_string(json_object_object_get(
	    worker_call_args(call), "notebook_handle")));
	if (h == NULL && (h = worker_call_target(call)) == NULL)
		return;
	id = xstrdup(worker_attach_id(h));
	nb = xstrdup(worker_attach_notebook_id(h));
	worker_attach_release(h);
	sc = json_object_new_object();
	json_object_object_add(sc, "notebook_handle",
	    json_object_new_string(id));
	json_object_object_add(sc, "notebook_id", json_object_new_string(nb));
	json_object_object_add(sc, "released", json_object_new_boolean(1));
	xasprintf(&text, "released %s (notebook %s)", id, nb);
	worker_call_result(call, text, sc);
	free(text);
	free(id);
	free(nb);
}

const struct tool_entry tool_disconnect_notebook_entry = {
	.name = "disconnect_notebook",
	.description = "Release a notebook_handle when done; the notebook, "
	    "its kernel and other handles stay.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"notebook_handle\":{\"type\":\"string\"}},"
	    "\"required\":[\"notebook_handle\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"notebook_handle\":{\"type\":\"string\"},"
	    "\"notebook_id\":{\"type\":\"string\"},"
	    "\"released\":{\"type\":\"boolean\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_disconnect_notebook,
};
