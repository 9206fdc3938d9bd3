/* SPDX-License-Identifier: ISC */
/*
 * worker-tool.c: the table of tools (one tool-*.c each) and tools/list.
 */

#include <string.h>

#include "worker.h"

static const struct tool_entry *const worker_tool_table[] = {
	&tool_connect_notebook_entry,
	&tool_create_notebook_entry,
	&tool_list_notebooks_entry,
	&tool_inspect_notebook_entry,
	&tool_edit_cells_entry,
	&tool_run_cells_entry,
	&tool_get_results_entry,
	&tool_search_cells_entry,
	&tool_move_cells_entry,
	&tool_clear_outputs_entry,
	&tool_interrupt_kernel_entry,
	&tool_restart_kernel_entry,
	&tool_get_kernel_info_entry,
	&tool_list_kernels_entry,
	&tool_select_kernel_entry,
	&tool_export_notebook_entry,
	&tool_add_comment_entry,
	&tool_reply_comment_entry,
	&tool_resolve_comment_entry,
	&tool_save_notebook_entry,
	&tool_disconnect_notebook_entry,
	NULL
};

static struct json_object	*worker_tool_schema(const struct tool_entry *,
		    const char *);

const struct tool_entry *
worker_tool_find(const char *name)
{
	u_int	i;

	for (i = 0; worker_tool_table[i] != NULL; i++) {
		if (strcmp(worker_tool_table[i]->name, name) == 0)
			return (worker_tool_table[i]);
	}
	return (NULL);
}

static struct json_object *
worker_tool_schema(const struct tool_entry *te, const char *text)
{
	struct json_object	*o;

	if ((o = json_tokener_parse(text)) == NULL)
		fatalx("tool %s: schema is not JSON", te->name);
	return (o);
}

/* The whole tools/list result; caller puts it. */
struct json_object *
worker_tool_list(void)
{
	u_int	next;

	return (worker_tool_page(0, 1000, &next));
}

/*
 * One page of tools/list from offset; *next is the next offset, 0 at the
 * end.  NULL if offset is past the end.  Caller puts the result.
 */
struct json_object *
worker_tool_page(u_int offset, u_int size, u_int *next)
{
	const struct tool_entry	*te;
	struct json_object	*res, *tools, *t, *ann;
	u_int			 i, n;

	for (n = 0; worker_tool_table[n] != NULL; n++)
		;
	if (offset > 0 && offset >= n)
		return (NULL);
	*next = offset + size < n ? offset + size : 0;
	tools = json_object_new_array();
	for (i = offset; i < n && i < offset + size; i++) {
		te = worker_tool_table[i];
		t = json_object_new_object();
		json_object_object_add(t, "name",
		    json_object_new_string(te->name));
		json_object_object_add(t, "description",
		    json_object_new_string(te->description));
		json_object_object_add(t, "inputSchema",
		    worker_tool_schema(te, te->input_schema));
		json_object_object_add(t, "outputSchema",
		    worker_tool_schema(te, te->output_schema));
		ann = json_object_new_object();
		json_object_object_add(ann, "readOnlyHint",
		    json_object_new_boolean(te->read_only));
		json_object_object_add(ann, "destructiveHint",
		    json_object_new_boolean(te->destructive));
		json_object_object_add(ann, "idempotentHint",
		    json_object_new_boolean(te->idempotent));
		json_object_object_add(ann, "openWorldHint",
		    json_object_new_boolean(0));
		json_object_object_add(t, "annotations", ann);
		json_object_array_add(tools, t);
	}
	res = json_object_new_object();
	json_object_object_add(res, "tools", tools);
	return (res);
}
