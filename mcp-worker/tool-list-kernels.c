/* SPDX-License-Identifier: ISC */
/*
 * tool-list-kernels.c: the installed kernelspecs (no notebook needed).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_list_kernels_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_list_kernels(struct worker_call *);

static void
tool_list_kernels_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_kernel_list_reply	 m;
	struct json_object		*sc, *ks, *k;
	struct evbuffer			*text;
	const char			*def, *dn, *lang;
	char				*s, err[256];
	size_t				 i, n;

	if (proto_kernel_list_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", err);
		return;
	}
	sc = json_object_new_object();
	json_object_object_add(sc, "default",
	    worker_reply_str(&m.default_name));
	def = json_object_get_string(json_object_object_get(sc, "default"));
	ks = mpjson_unpack(m.kernels.obj);
	json_object_object_add(sc, "kernels", ks);
	text = evbuffer_new();
	n = json_object_array_length(ks);
	evbuffer_add_printf(text, "%zu kernelspec%s installed:\n", n,
	    n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		k = json_object_array_get_idx(ks, i);
		s = (char *)json_object_get_string(json_object_object_get(k,
		    "name"));
		dn = json_object_get_string(json_object_object_get(k,
		    "display_name"));
		lang = json_object_get_string(json_object_object_get(k,
		    "language"));
		evbuffer_add_printf(text, "%s: %s (%s)%s\n", s != NULL ? s : "?",
		    dn != NULL ? dn : "", lang != NULL ? lang : "?",
		    s != NULL && def != NULL && strcmp(s, def) == 0 ?
		    " [default]" : "");
	}
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_list_kernels(struct worker_call *call)
{
	static const char *const	 targeted[] = {
		"notebook_handle", "notebook_id", "domain", NULL
	};
	static const char *const	 plain[] = { NULL };
	struct json_object		*args = worker_call_args(call);
	struct worker_handle		*h;
	struct worker_room		*room = NULL;

	/* With a target: that notebook's kernelspecs (its server's);
	 * without one, this machine's. */
	if (json_object_object_get_ex(args, "notebook_handle", NULL) ||
	    json_object_object_get_ex(args, "notebook_id", NULL)) {
		if (worker_call_check(call, targeted) != 0 ||
		    (h = worker_call_target(call)) == NULL)
			return;
		room = worker_attach_room(h);
	} else if (worker_call_check(call, plain) != 0)
		return;
	worker_call_room(call, room, PROTO_MSG_KERNEL_LIST, NULL,
	    tool_list_kernels_done);
}

const struct tool_entry tool_list_kernels_entry = {
	.name = "list_kernels",
	.description = "Installed kernelspecs and the default (with a "
	    "target: its server's).",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"default\":{\"type\":[\"string\",\"null\"]},"
	    "\"kernels\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"name\":{\"type\":\"string\"},"
	    "\"display_name\":{\"type\":[\"string\",\"null\"]},"
	    "\"language\":{\"type\":[\"string\",\"null\"]}}}},"
	    WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_list_kernels,
};
