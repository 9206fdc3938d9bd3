/* SPDX-License-Identifier: ISC */
/*
 * tool-resolve-comment.c: mark a comment thread resolved (or reopen it).
 */

#include <stdlib.h>

#include "worker.h"

struct tool_resolve_comment {
	struct worker_call	*call;
	const char		*thread_id;
	int			 resolved;
};

static int	tool_resolve_comment_apply(struct json_object *,
		    const struct worker_nb *, void *, char **, const char **);
static void	tool_resolve_comment_done(void *, struct json_object *,
		    const char *, const char *);
static void	tool_resolve_comment(struct worker_call *);

static int
tool_resolve_comment_apply(struct json_object *threads,
    const struct worker_nb *content, void *arg, char **msg, const char **code)
{
	struct tool_resolve_comment	*st = arg;
	struct json_object		*t;

	if ((t = worker_comment_find(threads, st->thread_id)) == NULL) {
		*code = PROTO_E_INVALID_ARGUMENT;
		xasprintf(msg, "no comment thread %s in this notebook",
		    st->thread_id);
		return (-1);
	}
	json_object_object_add(t, "resolved",
	    json_object_new_boolean(st->resolved));
	return (0);
}

static void
tool_resolve_comment_done(void *arg, struct json_object *threads,
    const char *code, const char *msg)
{
	struct tool_resolve_comment	*st = arg;
	struct json_object		*sc;
	char				*s;

	if (code != NULL)
		worker_call_error(st->call, code, "%s", msg);
	else {
		sc = json_object_new_object();
		json_object_object_add(sc, "thread_id",
		    json_object_new_string(st->thread_id));
		json_object_object_add(sc, "thread", json_object_get(
		    worker_comment_find(threads, st->thread_id)));
		xasprintf(&s, "thread %s %s", st->thread_id, st->resolved ?
		    "resolved" : "reopened");
		worker_call_result(st->call, s, sc);
		free(s);
	}
	free(st);
}

static void
tool_resolve_comment(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "thread_id",
		"resolved", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct tool_resolve_comment	*st;
	struct worker_handle		*h;
	const char			*tid;
	char				*msg = NULL;
	int				 resolved;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "thread_id", 1, &tid, &msg) != 0 ||
	    worker_args_bool(args, "resolved", 1, &resolved, &msg) != 0)
		goto bad;
	if (*tid == '\0') {
		xasprintf(&msg, "thread_id must not be empty");
		goto bad;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->thread_id = tid;
	st->resolved = resolved;
	worker_comment_update(worker_attach_room(h),
	    tool_resolve_comment_apply, st, tool_resolve_comment_done, st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_resolve_comment_entry = {
	.name = "resolve_comment",
	.description = "Mark a comment thread resolved once addressed; "
	    "resolved:false reopens it.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"thread_id\":{\"type\":\"string\"},"
	    "\"resolved\":{\"type\":\"boolean\"}},"
	    "\"required\":[\"thread_id\"]}",
	.output_schema = WORKER_COMMENT_SCHEMA,
	.read_only = 0,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_resolve_comment,
};
