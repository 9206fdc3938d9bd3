/* SPDX-License-Identifier: ISC */
/*
 * tool-add-comment.c: start a comment thread on a cell or on the whole
 * notebook (kept in notebook metadata, saved with the .ipynb).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct tool_add_comment {
	struct worker_call	*call;
	struct json_object	*cell;		/* borrowed ref, or NULL */
	const char		*body;
	const char		*author;
	char			*thread_id;
};

static int	tool_add_comment_apply(struct json_object *,
		    const struct worker_nb *, void *, char **, const char **);
static void	tool_add_comment_done(void *, struct json_object *,
		    const char *, const char *);
static void	tool_add_comment(struct worker_call *);

static int
tool_add_comment_apply(struct json_object *threads,
    const struct worker_nb *content, void *arg, char **msg, const char **code)
{
	struct tool_add_comment	*st = arg;
	struct json_object	*t, *a, *cs, *cells, *c;
	const char		*id = NULL;
	size_t			 i;
	int			 r;

	a = json_object_new_object();
	if (st->cell != NULL) {
		cells = worker_nb_cells(content);
		if ((r = worker_args_cellref(st->cell, cells, &id, msg)) != 0) {
			*code = r == -2 ? PROTO_E_CELL_NOT_FOUND :
			    PROTO_E_INVALID_ARGUMENT;
			json_object_put(a);
			return (-1);
		}
		for (i = 0; i < json_object_array_length(cells); i++) {
			c = json_object_array_get_idx(cells, i);
			if (strcmp(json_object_get_string(
			    json_object_object_get(c, "cell_id")), id) == 0)
				break;
		}
		if (i == json_object_array_length(cells)) {
			*code = PROTO_E_CELL_NOT_FOUND;
			xasprintf(msg, "no cell %s in this notebook", id);
			json_object_put(a);
			return (-1);
		}
		json_object_object_add(a, "cell_id", json_object_new_string(id));
	} else
		json_object_object_add(a, "notebook",
		    json_object_new_boolean(1));
	free(st->thread_id);
	st->thread_id = worker_comment_id("t_");
	t = json_object_new_object();
	json_object_object_add(t, "thread_id",
	    json_object_new_string(st->thread_id));
	json_object_object_add(t, "anchor", a);
	json_object_object_add(t, "resolved", json_object_new_boolean(0));
	cs = json_object_new_array();
	json_object_array_add(cs, worker_comment_new(st->author, st->body));
	json_object_object_add(t, "comments", cs);
	json_object_array_add(threads, t);
	return (0);
}

static void
tool_add_comment_done(void *arg, struct json_object *threads,
    const char *code, const char *msg)
{
	struct tool_add_comment	*st = arg;
	struct json_object	*sc, *t;
	struct evbuffer		*text;
	char			*s;

	if (code != NULL)
		worker_call_error(st->call, code, "%s", msg);
	else {
		t = worker_comment_find(threads, st->thread_id);
		sc = json_object_new_object();
		json_object_object_add(sc, "thread_id",
		    json_object_new_string(st->thread_id));
		json_object_object_add(sc, "thread", json_object_get(t));
		json_object_object_add(sc, "threads", json_object_new_int64(
		    (int64_t)json_object_array_length(threads)));
		text = evbuffer_new();
		worker_comment_print(text, t);
		s = worker_output_take(text);
		worker_call_result(st->call, s, sc);
		free(s);
	}
	free(st->thread_id);
	free(st);
}

static void
tool_add_comment(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "cell_id", "body",
		"author", NULL
	};
	struct json_object		*args = worker_call_args(call), *cell;
	struct tool_add_comment		*st;
	struct worker_handle		*h;
	const char			*body, *author;
	char				*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "body", 1, &body, &msg) != 0 ||
	    worker_args_string(args, "author", 0, &author, &msg) != 0)
		goto bad;
	if (*body == '\0') {
		xasprintf(&msg, "body must not be empty");
		goto bad;
	}
	if (!json_object_object_get_ex(args, "cell_id", &cell) ||
	    json_object_is_type(cell, json_type_null))
		cell = NULL;
	if (cell != NULL && ((!json_object_is_type(cell, json_type_string) ||
	    json_object_get_string_len(cell) == 0) &&
	    !json_object_is_type(cell, json_type_int))) {
		xasprintf(&msg, "cell_id must be a cell_id string or a "
		    "zero-based index (omit it to comment on the notebook)");
		goto bad;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->cell = cell;
	st->body = body;
	st->author = author;
	worker_comment_update(worker_attach_room(h), tool_add_comment_apply,
	    st, tool_add_comment_done, st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_add_comment_entry = {
	.name = "add_comment",
	.description = "Start a comment thread on a cell (cell_id) or the "
	    "notebook, for people or other agents; saved in the notebook. "
	    "Returns a thread_id.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"cell_id\":{\"type\":[\"string\",\"integer\"]},"
	    "\"body\":{\"type\":\"string\",\"minLength\":1},"
	    "\"author\":{\"type\":\"string\"}},\"required\":[\"body\"]}",
	.output_schema = WORKER_COMMENT_SCHEMA,
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_add_comment,
};
