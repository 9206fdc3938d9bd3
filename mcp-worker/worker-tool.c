/* SPDX-License-Identifier: ISC */
/*
 * worker-tool.c: the table of tools (one tool-*.c each) and tools/list.
 */

#include <string.h>

#include "worker.h"

/*
 * The tools, in tools/list order: the entry each tool-*.c defines.  This
 * list is the only one: it declares the entries and fills the table.
 */
#define WORKER_TOOLS(X)							\
	X(connect_notebook)						\
	X(create_notebook)						\
	X(list_notebooks)						\
	X(inspect_notebook)						\
	X(edit_cells)							\
	X(run_cells)							\
	X(get_results)							\
	X(search_cells)							\
	X(move_cells)							\
	X(clear_outputs)						\
	X(interrupt_kernel)						\
	X(restart_kernel)						\
	X(get_kernel_info)						\
	X(list_kernels)							\
	X(select_kernel)						\
	X(export_notebook)						\
	X(add_comment)							\
	X(reply_comment)						\
	X(resolve_comment)						\
	X(save_notebook)						\
	X(disconnect_notebook)

#define WORKER_TOOL_EXTERN(name)					\
	extern const struct tool_entry tool_##name##_entry;
WORKER_TOOLS(WORKER_TOOL_EXTERN)

#define WORKER_TOOL_ROW(name) &tool_##name##_entry,
static const struct tool_entry *const worker_tool_table[] = {
	WORKER_TOOLS(WORKER_TOOL_ROW)
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
