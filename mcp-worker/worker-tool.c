/* SPDX-License-Identifier: ISC */
/*
 * worker-tool.c: the table of tools (one tool-*.c each), tools/list, and
 * the instructions initialize returns.  Text every tool would otherwise
 * repeat (targets, cell references, waits, cursors, caps) is said once,
 * in the instructions; a tool's description says when to use it, and
 * its schema keeps every type and limit but little prose, so the
 * catalog stays within its budget (docs/limits.md, tested by
 * tests/worker/catalog-budget.sh).
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
	X(list_variables)						\
	X(complete_code)						\
	X(inspect_code)							\
	X(send_input)							\
	X(list_kernels)							\
	X(select_kernel)						\
	X(export_notebook)						\
	X(add_comment)							\
	X(reply_comment)						\
	X(resolve_comment)						\
	X(save_notebook)						\
	X(upload_file)							\
	X(download_file)						\
	X(disconnect_notebook)						\
	X(show_notebook)

#define WORKER_TOOL_EXTERN(name)					\
	extern const struct tool_entry tool_##name##_entry;
WORKER_TOOLS(WORKER_TOOL_EXTERN)

#define WORKER_TOOL_ROW(name) &tool_##name##_entry,
static const struct tool_entry *const worker_tool_table[] = {
	WORKER_TOOLS(WORKER_TOOL_ROW)
	NULL
};

static const char worker_tool_instructions_text[] =
    "runtimed: Jupyter notebooks on live kernels, shared with other "
    "clients (people and agents).\n"
    "Workflow:\n"
    "1. connect_notebook with a path (or a notebook_id from "
    "list_notebooks), or create_notebook: you get a notebook_handle and "
    "an outline of the cells.\n"
    "2. Read what you need with inspect_notebook (the outline first, then "
    "source or outputs of chosen cells) or search_cells.\n"
    "3. Change cells with edit_cells, naming them by cell_id; a batch "
    "applies whole or not at all.\n"
    "4. run_cells returns an execution_id; if the run is still going "
    "after wait_secs, follow it with get_results (timeout_secs to "
    "wait).\n"
    "5. save_notebook writes the .ipynb; disconnect_notebook releases the "
    "handle.\n"
    "Shared arguments:\n"
    "- Target: every tool acting on a notebook takes exactly one of "
    "notebook_handle (from connect_notebook or create_notebook) or "
    "notebook_id (of a notebook this session has connected to; domain "
    "only with it: omit or \"local\"). connect_notebook alone opens any "
    "notebook_id from list_notebooks.\n"
    "- domain on connect_notebook and create_notebook: a Jupyter Server "
    "from domains.json; path is then relative to its root.\n"
    "- Cells (in cell_ids, cell_id, after): a cell_id string, or an "
    "integer taken as a zero-based index at the time of the call (a "
    "string is always an id); results name cells by cell_id.\n"
    "- timeout_secs and wait_secs: 0 to 50 seconds. run_cells: at most "
    "256 cell_ids. inspect_notebook: count 1 to 100, max_source_chars "
    "and max_output_chars 1 to 12000. search_cells: max_matches 1 to "
    "1000.\n"
    "- overwrite: a file already at the path a tool writes is replaced "
    "only with overwrite:true (else file_exists).\n"
    "- Cursors: inspect_notebook returns a cursor; give it back as after "
    "to learn what changed since: outcome changed (with what and where), "
    "unchanged, timed_out, resync_required (read again without after) or "
    "unavailable.\n"
    "- Outputs returned inline are capped and say so when cut, and "
    "library frames of a traceback are folded; a get_results poll shows "
    "what is new since your last read. get_results with "
    "full_output:true gives the whole run.\n"
    "- Versions: every cell read shows its version (v1a2b3c4d); give it "
    "as an edit's expect_version to refuse the batch if the cell "
    "changed since (edit_conflict, with its source now). \"stale\" "
    "marks a code cell whose outputs may not match it, and why.\n"
    "- A failure is isError, its text \"code: message\". "
    "outcome_unknown: a change may or may not have happened (the worker "
    "restarted); inspect before retrying.";

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

/* What initialize and server/discover return as instructions. */
const char *
worker_tool_instructions(void)
{
	return (worker_tool_instructions_text);
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
		if (te->task_support != NULL) {
			ann = json_object_new_object();
			json_object_object_add(ann, "taskSupport",
			    json_object_new_string(te->task_support));
			json_object_object_add(t, "execution", ann);
		}
		json_object_array_add(tools, t);
	}
	res = json_object_new_object();
	json_object_object_add(res, "tools", tools);
	return (res);
}
