/* SPDX-License-Identifier: ISC */
/*
 * tool-connect-notebook.c: open an .ipynb (or join an open room by id)
 * and mint a new handle on it; never idempotent by design.
 */

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

#include "worker.h"

struct tool_connect_notebook {
	struct worker_call	*call;
	char			*domain;	/* NULL: this machine */
	struct worker_handle	*h;
	struct worker_room	*room;	/* already joined here */
};

static void	tool_connect_notebook_content(void *, struct worker_nb *,
		    const char *, const char *);
static void	tool_connect_notebook_joined(void *, struct worker_room *,
		    struct worker_nb *, const char *, const char *);
static void	tool_connect_notebook(struct worker_call *);

/* The notebook is already open in a room of ours: a new owner, no join. */
static void
tool_connect_notebook_content(void *arg, struct worker_nb *reply,
    const char *code, const char *msg)
{
	struct tool_connect_notebook	*st = arg;

	worker_attach_finish(st->call, st->h, st->room, reply, code, msg);
	worker_room_unref(st->room);
	free(st->domain);
	free(st);
}

static void
tool_connect_notebook_joined(void *arg, struct worker_room *room,
    struct worker_nb *joined, const char *code, const char *msg)
{
	struct tool_connect_notebook	*st = arg;

	if (room != NULL && st->domain != NULL)
		worker_room_set_domain(room, st->domain);
	worker_attach_finish(st->call, st->h, room, joined, code, msg);
	free(st->domain);
	free(st);
}

static void
tool_connect_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"path", "notebook_id", "domain", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct proto_room_open		 m;
	struct mpbuf			 b;
	struct tool_connect_notebook	*st;
	const char			*path, *id, *domain;
	char				*msg = NULL, *abs, *real;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "path", 0, &path, &msg) != 0 ||
	    worker_args_string(args, "notebook_id", 0, &id, &msg) != 0 ||
	    worker_target_domain(args, &domain, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if ((path == NULL) == (id == NULL) ||
	    (path != NULL && *path == '\0') || (id != NULL && *id == '\0')) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "give exactly one of path (an .ipynb file) or notebook_id "
		    "(from list_notebooks)");
		return;
	}
	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->domain = domain != NULL ? xstrdup(domain) : NULL;
	if ((st->h = worker_attach_reserve()) == NULL) {
		free(st->domain);
		free(st);
		worker_call_error(call, PROTO_E_ATTACHMENT_LIMIT, "%d notebook "
		    "handles are in use; release some with "
		    "disconnect_notebook", WORKER_MAX_ATTACH);
		return;
	}
	if (domain != NULL && path != NULL) {
		/* A path on the server, relative to its root. */
		if ((st->room = worker_room_find_remote(domain,
		    path)) != NULL) {
			worker_room_ref(st->room);
			worker_room_get(st->room,
			    tool_connect_notebook_content, st);
			return;
		}
	} else if (domain != NULL) {
		if ((st->room = worker_room_find_id(id)) != NULL &&
		    worker_room_domain(st->room) != NULL &&
		    strcmp(worker_room_domain(st->room), domain) == 0) {
			worker_room_ref(st->room);
			worker_room_get(st->room,
			    tool_connect_notebook_content, st);
			return;
		}
		worker_attach_cancel(st->h);
		free(st->domain);
		free(st);
		worker_call_error(call, PROTO_E_NOT_ATTACHED,
		    "notebook %s is not open from domain %s here; "
		    "connect_notebook with its path and domain", id, domain);
		return;
	} else if (path != NULL) {
		abs = worker_args_path(path);
		if ((real = realpath(abs, NULL)) != NULL &&
		    (st->room = worker_room_find_path(real)) != NULL) {
			free(real);
			free(abs);
			worker_room_ref(st->room);
			worker_room_get(st->room,
			    tool_connect_notebook_content, st);
			return;
		}
		free(real);
		free(abs);
	} else if ((st->room = worker_room_find_id(id)) != NULL) {
		worker_room_ref(st->room);
		worker_room_get(st->room, tool_connect_notebook_content, st);
		return;
	}
	memset(&m, 0, sizeof m);
	abs = path == NULL ? NULL : domain != NULL ? xstrdup(path) :
	    worker_args_path(path);
	m.path = proto_str_make(abs);
	m.domain = proto_str_make(domain);
	if (path == NULL)
		m.notebook_id = proto_str_make(id);
	mpbuf_init(&b);
	proto_room_open_pack(&b.pk, &m);
	worker_room_join(PROTO_MSG_ROOM_OPEN, &b.sb,
	    tool_connect_notebook_joined, st);
	mpbuf_free(&b);
	free(abs);
}

const struct tool_entry tool_connect_notebook_entry = {
	.name = "connect_notebook",
	.description = "Open an .ipynb path, or a notebook_id from "
	    "list_notebooks: a new notebook_handle, the cell outline, any "
	    "nbformat warnings. The first run_cells starts the kernel.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"path\":{\"type\":\"string\"},"
	    "\"notebook_id\":{\"type\":\"string\"},"
	    "\"domain\":{\"type\":\"string\"}}}",
	.output_schema = WORKER_ATTACHED_SCHEMA,
	.read_only = 0,
	.destructive = 0,
	.idempotent = 0,
	.handler = tool_connect_notebook,
};
