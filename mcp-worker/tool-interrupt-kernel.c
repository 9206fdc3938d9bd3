/* SPDX-License-Identifier: ISC */
/*
 * tool-interrupt-kernel.c: interrupt the notebook's kernel; the running
 * run and every queued one end as interrupted.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_interrupt_kernel_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_interrupt_kernel(struct worker_call *);

static void
tool_interrupt_kernel_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc;

	sc = json_object_new_object();
	json_object_object_add(sc, "interrupted", json_object_new_boolean(1));
	worker_call_result(call, "kernel interrupted; the running and queued "
	    "runs ended as interrupted", sc);
}

static void
tool_interrupt_kernel(struct worker_call *call)
{
	worker_call_target_request(call, PROTO_MSG_KERNEL_INTERRUPT, PROTO_MSG_OK,
	    tool_interrupt_kernel_done);
}

const struct tool_entry tool_interrupt_kernel_entry = {
	.name = "interrupt_kernel",
	.description = "Interrupt the kernel when a run hangs or takes too "
	    "long; running and queued runs end interrupted, variables stay.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"interrupted\":{\"type\":\"boolean\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = tool_interrupt_kernel,
};
