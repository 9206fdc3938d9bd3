/* SPDX-License-Identifier: ISC */
/*
 * tool-list-notebooks.c: the daemon's rooms and this worker's handles.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_list_notebooks_reply(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	tool_list_notebooks(struct worker_call *);

static void
tool_list_notebooks_reply(void *arg, uint16_t type,
    const msgpack_object *reply, const char *code, const char *msg)
{
	struct worker_call		*call = arg;
	struct proto_room_list_reply	 m;
	struct json_object		*sc, *rooms, *r, *nb, *k, *att, *w;
	struct evbuffer			*text;
	const char			*path, *domain;
	size_t				 i, n, used, room;
	char				*s, err[256];

	if (code != NULL) {
		worker_call_error(call, code, "%s", msg);
		return;
	}
	if (type != PROTO_MSG_ROOM_LIST_REPLY ||
	    proto_room_list_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed");
		return;
	}
	sc = json_object_new_object();
	text = evbuffer_new();
	/* What the daemon lost or cannot keep comes first. */
	w = m.warnings.obj != NULL ? mpjson_unpack(m.warnings.obj) : NULL;
	n = w != NULL && json_object_is_type(w, json_type_array) ?
	    json_object_array_length(w) : 0;
	for (i = 0; i < n; i++)
		evbuffer_add_printf(text, "WARNING: %s\n",
		    json_object_get_string(json_object_array_get_idx(w, i)));
	if (n > 0)
		json_object_object_add(sc, "warnings", json_object_get(w));
	json_object_put(w);
	/*
	 * Within the caps: this session's handles first (at most
	 * WORKER_MAX_ATTACH), then the daemon's rooms (every client's) in
	 * what is left; the rest of either counted.
	 */
	att = worker_attach_list();
	n = json_object_array_length(att);
	for (i = 0, used = 1000; i < n; i++) {
		used += worker_output_json_size(json_object_array_get_idx(att,
		    i)) + 1;
		if (used > WORKER_STRUCT_CAP) {
			json_object_object_add(sc, "attachments_omitted",
			    json_object_new_int64((int64_t)(n - i)));
			json_object_array_del_idx(att, i, n - i);
			used = WORKER_STRUCT_CAP;
			break;
		}
	}
	room = WORKER_STRUCT_CAP - used;
	used = 0;
	rooms = json_object_new_array();
	r = mpjson_unpack(m.rooms.obj);
	n = r != NULL && json_object_is_type(r, json_type_array) ?
	    json_object_array_length(r) : 0;
	evbuffer_add_printf(text, "%zu open notebook%s\n", n, n == 1 ?
	    "" : "s");
	for (i = 0; i < n; i++) {
		nb = json_object_array_get_idx(r, i);
		used += worker_output_json_size(nb) + 1;
		if (used > room ||
		    evbuffer_get_length(text) > WORKER_RESULT_CAP / 2) {
			evbuffer_add_printf(text, "(%zu more not listed; "
			    "connect_notebook by path finds one)\n", n - i);
			json_object_object_add(sc, "notebooks_omitted",
			    json_object_new_int64((int64_t)(n - i)));
			break;
		}
		k = worker_output_kernel(nb);
		path = json_object_get_string(json_object_object_get(nb,
		    "path"));
		domain = json_object_get_string(json_object_object_get(nb,
		    "domain"));
		evbuffer_add_printf(text, "%s %s%s%s kernel %s (%s) peers "
		    "%d%s%s\n", json_object_get_string(json_object_object_get(
		    nb, "notebook_id")), path != NULL ? path : "(untitled)",
		    domain != NULL && strcmp(domain, "local") != 0 ? " on " :
		    "", domain != NULL && strcmp(domain, "local") != 0 ?
		    domain : "",
		    json_object_get_string(json_object_object_get(k, "name")),
		    json_object_get_string(json_object_object_get(k, "state")),
		    json_object_get_int(json_object_object_get(nb, "peers")),
		    json_object_get_boolean(json_object_object_get(nb,
		    "dirty")) ? " dirty" : "",
		    json_object_get_boolean(json_object_object_get(nb,
		    "server_lost")) ? " (server lost: its unsaved edits are "
		    "kept; connect_notebook {path, domain} once the server "
		    "is back)" : "");
		json_object_object_add(nb, "kernel", k);
		json_object_array_add(rooms, json_object_get(nb));
	}
	json_object_put(r);
	n = json_object_array_length(att);
	evbuffer_add_printf(text, "%zu handle%s in this session\n", n,
	    n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		if (i == WORKER_LIST_HANDLES) {
			evbuffer_add_printf(text, "(%zu more handles)\n",
			    n - i);
			break;
		}
		r = json_object_array_get_idx(att, i);
		evbuffer_add_printf(text, "%s -> %s\n",
		    json_object_get_string(json_object_object_get(r,
		    "notebook_handle")), json_object_get_string(
		    json_object_object_get(r, "notebook_id")));
	}
	json_object_object_add(sc, "notebooks", rooms);
	json_object_object_add(sc, "attachments", att);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_list_notebooks(struct worker_call *call)
{
	static const char *const	allowed[] = { NULL };

	if (worker_call_check(call, allowed) != 0)
		return;
	worker_daemon_request(worker_daemon_control(), PROTO_MSG_ROOM_LIST,
	    NULL, tool_list_notebooks_reply, call);
}

const struct tool_entry tool_list_notebooks_entry = {
	.name = "list_notebooks",
	.description = "Notebooks the daemon has open (id, path, kernel, "
	    "peers, unsaved changes) and this session's handles.",
	.input_schema = "{\"type\":\"object\",\"properties\":{}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"notebooks\":{\"type\":\"array\"},"
	    "\"attachments\":{\"type\":\"array\"},"
	    "\"warnings\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	    WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_list_notebooks,
};
