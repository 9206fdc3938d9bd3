/* SPDX-License-Identifier: ISC */
/*
 * tool-save-notebook.c: write the notebook as nbformat 4.5 (atomically,
 * in the daemon); with path, save-as.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_save_notebook_saved(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	tool_save_notebook(struct worker_call *);

static void
tool_save_notebook_saved(void *arg, uint16_t type,
    const msgpack_object *reply, const char *code, const char *msg)
{
	struct worker_call		*call = arg;
	struct proto_room_save_reply	 m;
	struct json_object		*sc;
	char				*text, err[256];

	if (code != NULL) {
		worker_call_error(call, code, "%s", msg);
		return;
	}
	if (type != PROTO_MSG_ROOM_SAVE_REPLY ||
	    proto_room_save_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return;
	}
	sc = json_object_new_object();
	json_object_object_add(sc, "path", worker_reply_str(&m.path));
	xasprintf(&text, "saved %.*s", (int)m.path.len, m.path.ptr);
	worker_call_result(call, text, sc);
	free(text);
}

static void
tool_save_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "path", "force",
		NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct proto_room_save		 m;
	struct mpbuf			 b;
	struct worker_handle		*h;
	const char			*path;
	char				*msg = NULL, *abs;
	int				 force;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "path", 0, &path, &msg) != 0 ||
	    worker_args_bool(args, "force", 0, &force, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if (path != NULL && *path == '\0') {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "path must not be empty when given");
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	/* A remote notebook's path is on its server, as given. */
	abs = path == NULL ? NULL :
	    worker_room_domain(worker_attach_room(h)) != NULL ?
	    xstrdup(path) : worker_args_path(path);
	m.path = proto_str_make(abs);
	m.force = force;
	mpbuf_init(&b);
	proto_room_save_pack(&b.pk, &m);
	/* The call outlives nothing here: the reply needs only the call. */
	worker_room_request(worker_attach_room(h), PROTO_MSG_ROOM_SAVE, &b.sb,
	    tool_save_notebook_saved, call);
	mpbuf_free(&b);
	free(abs);
}

const struct tool_entry tool_save_notebook_entry = {
	.name = "save_notebook",
	.description = "Save as .ipynb; with path, save there and follow that "
	    "file (needed if untitled). force:true overwrites a file changed "
	    "on disk since load, or another file at path.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"path\":{\"type\":\"string\"},"
	    "\"force\":{\"type\":\"boolean\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"path\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_save_notebook,
};
