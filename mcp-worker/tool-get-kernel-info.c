/*
 * tool-get-kernel-info.c: the kernel's state, kernelspec, language,
 * execution count, queue length and pids.
 */

#include <stdlib.h>

#include "worker.h"

static const char *
tool_get_kernel_info_str(struct json_object *o, const char *key)
{
	const char	*s;

	s = json_object_get_string(json_object_object_get(o, key));
	return s != NULL ? s : "-";
}

static void
tool_get_kernel_info_done(struct worker_call *call, struct worker_room *room,
    struct json_object *reply)
{
	struct json_object	*sc, *li;
	struct evbuffer		*text;
	char			*s;

	sc = json_object_get(reply);
	li = json_object_object_get(reply, "language_info");
	text = evbuffer_new();
	evbuffer_add_printf(text, "kernel %s (%s): %s\n",
	    tool_get_kernel_info_str(reply, "name"),
	    tool_get_kernel_info_str(reply, "display_name"),
	    tool_get_kernel_info_str(reply, "state"));
	evbuffer_add_printf(text, "language: %s %s\n",
	    tool_get_kernel_info_str(li, "name"),
	    tool_get_kernel_info_str(li, "version"));
	evbuffer_add_printf(text, "execution_count %lld, queue %lld, pid %s, "
	    "agent pid %s", (long long)json_object_get_int64(
	    json_object_object_get(reply, "execution_count")),
	    (long long)json_object_get_int64(json_object_object_get(reply,
	    "queue")), tool_get_kernel_info_str(reply, "pid"),
	    tool_get_kernel_info_str(reply, "agent_pid"));
	if (json_object_get_string(json_object_object_get(reply,
	    "message")) != NULL)
		evbuffer_add_printf(text, "\n%s", json_object_get_string(
		    json_object_object_get(reply, "message")));
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_get_kernel_info(struct worker_call *call)
{
	worker_call_target_request(call, PROTO_MSG_KERNEL_INFO, PROTO_MSG_KERNEL_INFO_REPLY,
	    tool_get_kernel_info_done);
}

const struct tool_entry tool_get_kernel_info_entry = {
	.name = "get_kernel_info",
	.description = "Show the notebook's kernel: state (starting, idle, "
	    "busy, restarting, dead), kernelspec name, language and version, "
	    "execution count, queued runs and process ids. Use it to check "
	    "readiness or why runs fail with kernel_unavailable.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "},\"additionalProperties\":false}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"name\":{\"type\":[\"string\",\"null\"]},"
	    "\"display_name\":{\"type\":[\"string\",\"null\"]},"
	    "\"state\":{\"type\":\"string\"},"
	    "\"language_info\":{\"type\":[\"object\",\"null\"]},"
	    "\"execution_count\":{\"type\":[\"integer\",\"null\"]},"
	    "\"queue\":{\"type\":[\"integer\",\"null\"]},"
	    "\"pid\":{\"type\":[\"integer\",\"null\"]},"
	    "\"agent_pid\":{\"type\":[\"integer\",\"null\"]},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_get_kernel_info,
};
