/* SPDX-License-Identifier: ISC */
/*
 * tool-create-notebook.c: a new notebook (untitled, or at a new path) in
 * a new room, and a new handle on it.
 */

#include <stdlib.h>

#include "worker.h"

struct tool_create_notebook {
	struct worker_call	*call;
	struct worker_handle	*h;
	char			*domain;	/* NULL: this machine */
};

static void	tool_create_notebook_joined(void *, struct worker_room *,
		    struct worker_nb *, const char *, const char *);
static void	tool_create_notebook(struct worker_call *);

static void
tool_create_notebook_joined(void *arg, struct worker_room *room,
    struct worker_nb *joined, const char *code, const char *msg)
{
	struct tool_create_notebook	*st = arg;

	if (room != NULL && st->domain != NULL)
		worker_room_set_domain(room, st->domain);
	worker_attach_finish(st->call, st->h, room, joined, code, msg);
	free(st->domain);
	free(st);
}

static void
tool_create_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"path", "kernel", "domain", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct proto_room_create	 m;
	struct mpbuf			 b;
	struct tool_create_notebook	*st;
	const char			*path, *kernel, *domain;
	char				*msg = NULL, *abs;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "path", 0, &path, &msg) != 0 ||
	    worker_args_string(args, "kernel", 0, &kernel, &msg) != 0 ||
	    worker_target_domain(args, &domain, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if ((path != NULL && *path == '\0') ||
	    (kernel != NULL && *kernel == '\0')) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "path and kernel must not be empty when given");
		return;
	}
	st = xcalloc(1, sizeof *st);
	st->call = call;
	if ((st->h = worker_attach_reserve()) == NULL) {
		free(st);
		worker_call_error(call, PROTO_E_ATTACHMENT_LIMIT, "%d notebook "
		    "handles are in use; release some with "
		    "disconnect_notebook", WORKER_MAX_ATTACH);
		return;
	}
	memset(&m, 0, sizeof m);
	abs = path == NULL ? NULL : domain != NULL ? xstrdup(path) :
	    worker_args_path(path);
	m.path = proto_str_make(abs);
	m.kernel = proto_str_make(kernel);
	m.domain = proto_str_make(domain);
	st->domain = domain != NULL ? xstrdup(domain) : NULL;
	mpbuf_init(&b);
	proto_room_create_pack(&b.pk, &m);
	worker_room_join(PROTO_MSG_ROOM_CREATE, &b.sb,
	    tool_create_notebook_joined, st);
	mpbuf_free(&b);
	free(abs);
}

const struct tool_entry tool_create_notebook_entry = {
	.name = "create_notebook",
	.description = "Create a notebook: a new .ipynb at path, or "
	    "untitled (save it later with a path). kernel: a kernelspec, "
	    "default python3, started by the first run_cells.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"path\":{\"type\":\"string\"},"
	    "\"kernel\":{\"type\":\"string\"},"
	    "\"domain\":{\"type\":\"string\"}}}",
	.output_schema = WORKER_ATTACHED_SCHEMA,
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_create_notebook,
};
