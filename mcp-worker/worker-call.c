/*
 * worker-call.c: one tools/call in flight, from arguments to the result
 * (or the typed failure) the client sees.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_call {
	struct json_object		*id;
	const struct tool_entry		*tool;
	struct json_object		*args;
	struct json_object		*extra;	/* more content */
	struct worker_target		 target;
	int				 has_target;
	char				*owner;	/* ID owner */
	int				 waiting;
};

static u_int	worker_call_waits;

struct worker_call *
worker_call_create(struct json_object *id, const struct tool_entry *tool,
    struct json_object *args)
{
	struct worker_call	*call;

	call = xcalloc(1, sizeof *call);
	call->id = json_object_get(id);
	call->tool = tool;
	call->args = json_object_get(args);
	call->extra = json_object_new_array();
	return call;
}

static void
worker_call_free(struct worker_call *call)
{
	if (call->waiting)
		worker_call_wait_release(call);
	json_object_put(call->id);
	json_object_put(call->args);
	json_object_put(call->extra);
	free(call->owner);
	free(call);
}

struct json_object *
worker_call_args(struct worker_call *call)
{
	return call->args;
}

const char *
worker_call_tool(struct worker_call *call)
{
	return call->tool->name;
}

/* An ID target minted an address owner: results name it. */
void
worker_call_set_target(struct worker_call *call, const char *handle)
{
	free(call->owner);
	call->owner = handle != NULL ? xstrdup(handle) : NULL;
}

/* Another content block (an image) after the text; takes the ref. */
void
worker_call_add_content(struct worker_call *call, struct json_object *block)
{
	json_object_array_add(call->extra, block);
}

static struct json_object *
worker_call_text_block(const char *text)
{
	struct json_object	*b;

	b = json_object_new_object();
	json_object_object_add(b, "type", json_object_new_string("text"));
	json_object_object_add(b, "text", json_object_new_string(text));
	return b;
}

/* The isError result of CONTRACT section 4. */
struct json_object *
worker_call_error_result(const char *code, const char *message)
{
	struct json_object	*res, *content, *sc, *err;
	char			*text;

	xasprintf(&text, "%s: %s", code, message);
	content = json_object_new_array();
	json_object_array_add(content, worker_call_text_block(text));
	free(text);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	sc = json_object_new_object();
	json_object_object_add(sc, "error", err);
	res = json_object_new_object();
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(1));
	return res;
}

/* Finish with success; takes the structured reference.  Frees call. */
void
worker_call_result(struct worker_call *call, const char *text,
    struct json_object *sc)
{
	struct json_object	*res, *content, *t;
	size_t			 i;

	if (call->owner != NULL) {
		t = json_object_new_object();
		json_object_object_add(t, "notebook_handle",
		    json_object_new_string(call->owner));
		json_object_object_add(sc, "target", t);
	}
	content = json_object_new_array();
	json_object_array_add(content, worker_call_text_block(text));
	for (i = 0; i < json_object_array_length(call->extra); i++) {
		json_object_array_add(content, json_object_get(
		    json_object_array_get_idx(call->extra, i)));
	}
	res = json_object_new_object();
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(0));
	worker_rpc_answer(call->id, res);
	worker_call_free(call);
}

/* Finish with a typed failure.  Frees call. */
void
worker_call_error(struct worker_call *call, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	log_debug("%s: %s: %s", call->tool->name, code, msg);
	worker_rpc_answer(call->id, worker_call_error_result(code, msg));
	free(msg);
	worker_call_free(call);
}

/*
 * Check the argument names and, for notebook tools (allowed holds
 * notebook_handle), the target's form.  On failure the call is answered
 * and freed and -1 returned.
 */
int
worker_call_check(struct worker_call *call, const char *const allowed[])
{
	char	*msg = NULL;
	u_int	 i;
	int	 wants_target = 0, allow_id = 0;

	for (i = 0; allowed[i] != NULL; i++) {
		if (strcmp(allowed[i], "notebook_handle") == 0)
			wants_target = 1;
		if (strcmp(allowed[i], "notebook_id") == 0)
			allow_id = 1;
	}
	if (wants_target) {
		if (worker_target_parse(call->args, allow_id, &call->target,
		    &msg) != 0) {
			worker_call_error(call, "invalid_notebook_target",
			    "%s", msg);
			free(msg);
			return -1;
		}
		call->has_target = 1;
	}
	if (worker_args_check(call->args, allowed, &msg) != 0) {
		worker_call_error(call, "invalid_argument", "%s", msg);
		free(msg);
		return -1;
	}
	return 0;
}

/* Resolve the checked target to a live handle, or answer the failure. */
struct worker_handle *
worker_call_target(struct worker_call *call)
{
	struct worker_handle	*h;
	const char		*code;
	char			*msg = NULL;
	int			 minted = 0;

	if (!call->has_target) {
		worker_call_error(call, "invalid_notebook_target",
		    "give notebook_handle or notebook_id");
		return NULL;
	}
	h = worker_attach_resolve(&call->target, &minted, &code, &msg);
	if (h == NULL) {
		worker_call_error(call, code, "%s", msg);
		free(msg);
		return NULL;
	}
	if (minted || call->target.kind == WORKER_TARGET_ID)
		worker_call_set_target(call, worker_attach_id(h));
	return h;
}

/* Waits share WORKER_WAIT_PERMITS; past them fail fast with busy. */
int
worker_call_wait_acquire(struct worker_call *call)
{
	if (call->waiting)
		return 0;
	if (worker_call_waits >= WORKER_WAIT_PERMITS) {
		worker_call_error(call, "busy", "%d waits are already in "
		    "progress; retry later or pass a shorter wait",
		    WORKER_WAIT_PERMITS);
		return -1;
	}
	worker_call_waits++;
	call->waiting = 1;
	return 0;
}

void
worker_call_wait_release(struct worker_call *call)
{
	if (!call->waiting)
		return;
	call->waiting = 0;
	worker_call_waits--;
}
