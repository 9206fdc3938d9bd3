/* SPDX-License-Identifier: ISC */
/*
 * worker-exec.c: a run as the daemon reports it (EXEC_STATE), checked by
 * its codec; only its documents (cells, the input request) become JSON
 * for the tools to render.
 */

#include <stdlib.h>

#include "worker.h"

/* Decode an EXEC_STATE; NULL with *cause if it is not one. */
struct worker_exec *
worker_exec_read(const msgpack_object *body, char **cause)
{
	struct proto_exec_state	 m;
	struct worker_exec	*e;
	char			 err[256];

	if (proto_exec_state_unpack(body, &m, err, sizeof err) != 0) {
		xasprintf(cause, "unexpected reply from runtimed: %s", err);
		return (NULL);
	}
	e = xcalloc(1, sizeof *e);
	e->execution_id = proto_str_dup(&m.execution_id);
	e->status = proto_str_dup(&m.status);
	if (m.message.ptr != NULL)
		e->message = proto_str_dup(&m.message);
	e->cells = mpjson_unpack(m.cells.obj);
	if (m.input.obj != NULL) {
		e->input = mpjson_unpack(m.input.obj);
		/* Only tasks read it (worker-task.c), from the record. */
		if (json_object_is_type(e->input, json_type_object))
			json_object_object_del(e->input, "asked_at");
	}
	return (e);
}

void
worker_exec_free(struct worker_exec *e)
{
	if (e == NULL)
		return;
	free(e->execution_id);
	free(e->status);
	free(e->message);
	json_object_put(e->cells);
	json_object_put(e->input);
	free(e);
}
