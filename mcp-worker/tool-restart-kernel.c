/* SPDX-License-Identifier: ISC */
/*
 * tool-restart-kernel.c: restart the notebook's kernel and wait until it
 * is ready again (the daemon bounds the wait); runs end as interrupted.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_restart_kernel_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_restart_kernel(struct worker_call *);

static void
tool_restart_kernel_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc;
	const char		*state, *old;
	size_t			 len, olen;
	char			*text, *more;

	/* An older daemon's OK says nothing of the state: none given. */
	state = proto_get_str(reply, "state", &len);
	/* A server's kernel it replaced that may still run there (403). */
	old = proto_get_str(reply, "old_kernel", &olen);
	sc = json_object_new_object();
	json_object_object_add(sc, "restarted", json_object_new_boolean(1));
	if (state != NULL)
		json_object_object_add(sc, "state",
		    json_object_new_string_len(state, (int)len));
	if (old != NULL)
		json_object_object_add(sc, "old_kernel",
		    json_object_new_string_len(old, (int)olen));
	if (state != NULL)
		xasprintf(&text, "kernel restarted and ready (%.*s); variables "
		    "are gone, rerun the cells you need", (int)len, state);
	else
		text = xstrdup("kernel restarted and ready; variables are "
		    "gone, rerun the cells you need");
	if (old != NULL) {
		xasprintf(&more, "%s\nold kernel: %.*s", text, (int)olen, old);
		free(text);
		text = more;
	}
	worker_call_result(call, text, sc);
	free(text);
}

static void
tool_restart_kernel(struct worker_call *call)
{
	worker_call_target_request(call, PROTO_MSG_KERNEL_RESTART,
	    tool_restart_kernel_done);
}

const struct tool_entry tool_restart_kernel_entry = {
	.name = "restart_kernel",
	.description = "Restart the kernel (dead, stuck, or for a clean "
	    "state) and wait until ready; variables are lost, runs end "
	    "interrupted, cells stay.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"restarted\":{\"type\":\"boolean\"},"
	    "\"state\":{\"type\":\"string\"},"
	    "\"old_kernel\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 0,
	.handler = tool_restart_kernel,
};
