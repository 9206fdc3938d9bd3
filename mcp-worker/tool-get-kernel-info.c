/* SPDX-License-Identifier: ISC */
/*
 * tool-get-kernel-info.c: the kernel's state, kernelspec, language,
 * execution count, queue length and pids.
 */

#include <stdlib.h>

#include "worker.h"

static const char	*tool_get_kernel_info_str(struct json_object *,
		    const char *);
static struct json_object	*tool_get_kernel_info_int(int, int64_t);
static void	tool_get_kernel_info_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_get_kernel_info(struct worker_call *);

static const char *
tool_get_kernel_info_str(struct json_object *o, const char *key)
{
	const char	*s;

	s = json_object_get_string(json_object_object_get(o, key));
	return (s != NULL ? s : "-");
}

/* An optional integer of the reply as JSON. */
static struct json_object *
tool_get_kernel_info_int(int has, int64_t v)
{
	return (has ? json_object_new_int64(v) : NULL);
}

static void
tool_get_kernel_info_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct proto_kernel_info_reply	 m;
	struct json_object		*sc, *li, *caps;
	struct evbuffer			*text;
	char				*s, err[256];

	if (proto_kernel_info_reply_unpack(reply, &m, err, sizeof err) != 0) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", err);
		return;
	}
	li = m.language_info.obj != NULL ?
	    mpjson_unpack(m.language_info.obj) : NULL;
	sc = json_object_new_object();
	json_object_object_add(sc, "name", worker_reply_str(&m.name));
	json_object_object_add(sc, "state", worker_reply_str(&m.state));
	json_object_object_add(sc, "pid",
	    tool_get_kernel_info_int(m.has_pid, m.pid));
	json_object_object_add(sc, "language_info", li);
	json_object_object_add(sc, "execution_count",
	    json_object_new_int64(m.execution_count));
	json_object_object_add(sc, "queue",
	    json_object_new_int64((int64_t)m.queue));
	json_object_object_add(sc, "display_name",
	    worker_reply_str(&m.display_name));
	json_object_object_add(sc, "message", worker_reply_str(&m.message));
	json_object_object_add(sc, "agent_pid",
	    tool_get_kernel_info_int(m.has_agent_pid, m.agent_pid));
	caps = m.capabilities.obj != NULL ?
	    mpjson_unpack(m.capabilities.obj) : NULL;
	json_object_object_add(sc, "capabilities", caps);
	text = evbuffer_new();
	evbuffer_add_printf(text, "kernel %s (%s): %s\n",
	    tool_get_kernel_info_str(sc, "name"),
	    tool_get_kernel_info_str(sc, "display_name"),
	    tool_get_kernel_info_str(sc, "state"));
	evbuffer_add_printf(text, "language: %s %s\n",
	    tool_get_kernel_info_str(li, "name"),
	    tool_get_kernel_info_str(li, "version"));
	evbuffer_add_printf(text, "execution_count %lld, queue %lld, pid %s, "
	    "agent pid %s", (long long)m.execution_count,
	    (long long)m.queue, tool_get_kernel_info_str(sc, "pid"),
	    tool_get_kernel_info_str(sc, "agent_pid"));
	if (caps != NULL)
		evbuffer_add_printf(text, "\nprotocol %s; debugger %s; "
		    "subshells %s", tool_get_kernel_info_str(caps,
		    "protocol_version"), tool_get_kernel_info_str(caps,
		    "debugger"), tool_get_kernel_info_str(caps, "subshells"));
	if (m.message.ptr != NULL)
		evbuffer_add_printf(text, "\n%.*s", (int)m.message.len,
		    m.message.ptr);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_get_kernel_info(struct worker_call *call)
{
	worker_call_target_request(call, PROTO_MSG_KERNEL_INFO,
	    tool_get_kernel_info_done);
}

const struct tool_entry tool_get_kernel_info_entry = {
	.name = "get_kernel_info",
	.description = "Kernel state, kernelspec, language, execution count, "
	    "queue and pids: to check readiness, or why runs fail.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS "}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"name\":{\"type\":[\"string\",\"null\"]},"
	    "\"display_name\":{\"type\":[\"string\",\"null\"]},"
	    "\"state\":{\"type\":\"string\"},"
	    "\"language_info\":{\"type\":[\"object\",\"null\"]},"
	    "\"execution_count\":{\"type\":[\"integer\",\"null\"]},"
	    "\"queue\":{\"type\":[\"integer\",\"null\"]},"
	    "\"pid\":{\"type\":[\"integer\",\"null\"]},"
	    "\"agent_pid\":{\"type\":[\"integer\",\"null\"]},"
	    "\"capabilities\":{\"type\":[\"object\",\"null\"]},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_get_kernel_info,
};
