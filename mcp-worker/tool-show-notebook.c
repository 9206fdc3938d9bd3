/* SPDX-License-Identifier: ISC */
/*
 * tool-show-notebook.c: the live view's address for a notebook, for the
 * person beside the agent (runtimed-web, docs/decisions/025).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_show_notebook_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_show_notebook_go(struct worker_call *,
		    struct worker_handle *);
static void	tool_show_notebook(struct worker_call *);

static void
tool_show_notebook_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_view_url	 m;
	struct json_object	*sc;
	char			 err[256], *text;

	if (proto_view_url_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s",
		    err);
		return;
	}
	sc = json_object_new_object();
	json_object_object_add(sc, "url", json_object_new_string_len(m.url.ptr,
	    m.url.len));
	json_object_object_add(sc, "address", json_object_new_string_len(
	    m.address.ptr, m.address.len));
	xasprintf(&text, "give the person this address to open in a browser "
	    "on this machine (it shows the notebook live; keep it private, "
	    "it holds a secret): %.*s", (int)m.url.len, m.url.ptr);
	worker_call_result(call, text, sc);
	free(text);
}

static void
tool_show_notebook_go(struct worker_call *call, struct worker_handle *h)
{
	struct proto_view_open	 m;
	struct mpbuf		 b;

	memset(&m, 0, sizeof m);
	m.notebook_id = proto_str_make(worker_attach_notebook_id(h));
	mpbuf_init(&b);
	proto_view_open_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_VIEW_OPEN,
	    &b.sb, tool_show_notebook_done);
	mpbuf_free(&b);
}

static void
tool_show_notebook(struct worker_call *call)
{
	struct worker_handle	*h;

	if ((h = worker_call_target_only(call)) == NULL)
		return;
	tool_show_notebook_go(call, h);
}

const struct tool_entry tool_show_notebook_entry = {
	.name = "show_notebook",
	.description = "Give the person a live page of the notebook to "
	    "watch your work; returns a local URL to hand them.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"url\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_show_notebook,
};
