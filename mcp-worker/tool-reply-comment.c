/* SPDX-License-Identifier: ISC */
/*
 * tool-reply-comment.c: add a comment to an existing thread.
 */

#include <stdlib.h>

#include "worker.h"

struct tool_reply_comment {
	struct worker_call	*call;
	const char		*thread_id;
	const char		*body;
	const char		*author;
};

static int	tool_reply_comment_apply(struct json_object *,
		    const struct worker_nb *, void *, char **, const char **);
static void	tool_reply_comment_done(void *, struct json_object *,
		    const char *, const char *);
static void	tool_reply_comment(struct worker_call *);

static int
tool_reply_comment_apply(struct json_object *threads,
    const struct worker_nb *content, void *arg, char **msg, const char **code)
{
	struct tool_reply_comment	*st = arg;
	struct json_object		*t, *cs;

	if ((t = worker_comment_find(threads, st->thread_id)) == NULL) {
		*code = PROTO_E_INVALID_ARGUMENT;
		xasprintf(msg, "no comment thread %s in this notebook",
		    st->thread_id);
		return (-1);
	}
	if (!json_object_object_get_ex(t, "comments", &cs) ||
	    !json_object_is_type(cs, json_type_array)) {
		cs = json_object_new_array();
		json_object_object_add(t, "comments", cs);
	}
	json_object_array_add(cs, worker_comment_new(st->author, st->body));
	return (0);
}

static void
tool_reply_comment_done(void *arg, struct json_object *threads,
    const char *code, const char *msg)
{
	struct tool_reply_comment	*st = arg;
	struct json_object		*sc, *t;
	struct evbuffer			*text;
	char				*s;

	if (code != NULL)
		worker_call_error(st->call, code, "%s", msg);
	else {
		t = worker_comment_find(threads, st->thread_id);
		sc = json_object_new_object();
		json_object_object_add(sc, "thread_id",
		    json_object_new_string(st->thread_id));
		json_object_object_add(sc, "thread", json_object_get(t));
		text = evbuffer_new();
		worker_comment_print(text, t);
		s = worker_output_take(text);
		worker_call_result(st->call, s, sc);
		free(s);
	}
	free(st);
}

static void
tool_reply_comment(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "thread_id",
		"body", "author", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct tool_reply_comment	*st;
	struct worker_handle		*h;
	const char			*tid, *body, *author;
	char				*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "thread_id", 1, &tid, &msg) != 0 ||
	    worker_args_string(args, "body", 1, &body, &msg) != 0 ||
	    worker_args_string(args, "author", 0, &author, &msg) != 0)
		goto bad;
	if (*body == '\0' || *tid == '\0') {
		xasprintf(&msg, "thread_id and body must not be empty");
		goto bad;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->thread_id = tid;
	st->body = body;
	st->author = author;
	worker_comment_update(worker_attach_room(h), tool_reply_comment_apply,
	    st, tool_reply_comment_done, st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_reply_comment_entry = {
	.name = "reply_comment",
	.description = "Reply in a comment thread (thread_id from add_comment "
	    "or the comments resource).",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"thread_id\":{\"type\":\"string\"},"
	    "\"body\":{\"type\":\"string\",\"minLength\":1},"
	    "\"author\":{\"type\":\"string\"}},\"required\":[\"thread_id\","
	    "\"body\"]}",
	.output_schema = WORKER_COMMENT_SCHEMA,
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_reply_comment,
};
