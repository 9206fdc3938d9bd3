/* SPDX-License-Identifier: ISC */
/*
 * tool-select-kernel.c: replace the notebook's kernel by one of another
 * kernelspec.
 */

#include <stdlib.h>

#include "worker.h"

static void	tool_select_kernel_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_select_kernel(struct worker_call *);

static void
tool_select_kernel_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc;
	const char		*k, *old;
	size_t			 olen;
	char			*text;

	k = json_object_get_string(json_object_object_get(
	    worker_call_args(call), "kernel"));
	/* A server's old kernel that may still run there (its DELETE). */
	old = proto_get_str(reply, "old_kernel", &olen);
	sc = json_object_new_object();
	json_object_object_add(sc, "kernel", json_object_new_string(k));
	if (old != NULL)
		json_object_object_add(sc, "old_kernel",
		    json_object_new_string_len(old, (int)olen));
	xasprintf(&text, "kernel switched to %s; the old kernel's state is "
	    "gone (get_kernel_info shows when it is ready)%s%.*s", k,
	    old != NULL ? "\nold kernel: " : "", old != NULL ? (int)olen : 0,
	    old != NULL ? old : "");
	worker_call_result(call, text, sc);
	free(text);
}

static void
tool_select_kernel(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "kernel", NULL
	};
	struct proto_kernel_select	 m;
	struct mpbuf			 b;
	struct worker_handle		*h;
	const char			*k;
	char				*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(worker_call_args(call), "kernel", 1, &k,
	    &msg) != 0 || *k == '\0') {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s",
		    msg != NULL ?
		    msg : "'kernel' must name a kernelspec (see "
		    "list_kernels)");
		free(msg);
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	m.kernel = proto_str_make(k);
	mpbuf_init(&b);
	proto_kernel_select_pack(&b.pk, &m);
	worker_call_room(call, worker_attach_room(h), PROTO_MSG_KERNEL_SELECT,
	    &b.sb, tool_select_kernel_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_select_kernel_entry = {
	.name = "select_kernel",
	.description = "Switch the notebook to another kernelspec (from "
	    "list_kernels); the kernel's variables are lost, cells stay.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"kernel\":{\"type\":\"string\"}},\"required\":[\"kernel\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"kernel\":{\"type\":\"string\"},"
	    "\"old_kernel\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = tool_select_kernel,
};
