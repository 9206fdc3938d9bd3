/* SPDX-License-Identifier: ISC */
/*
 * tool-interrupt-kernel.c: interrupt the notebook's kernel; the running
 * run and every queued one end as interrupted, whoever asked for them:
 * the answer says whose they were (issue 39).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	tool_interrupt_kernel_done(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_interrupt_kernel_cancelled(struct worker_call *,
		    struct worker_room *, const msgpack_object *);
static void	tool_interrupt_kernel(struct worker_call *);

/*
 * With execution_id, that run only (EXEC_CANCEL): queued, it leaves the
 * queue; running, the kernel is interrupted for it and the runs queued
 * behind it go on.  Answered with the run as get_results shows it.
 */
static void
tool_interrupt_kernel_cancelled(struct worker_call *call,
    struct worker_room *room, const msgpack_object *reply)
{
	struct worker_exec	*state;
	struct worker_budget	 budget;
	struct json_object	*sc;
	struct evbuffer		*text;
	char			*cause = NULL, *s;

	(void)room;
	if ((state = worker_exec_read(reply, &cause)) == NULL) {
		worker_call_error(call, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "unexpected reply from runtimed: %s", cause);
		free(cause);
		return;
	}
	text = evbuffer_new();
	evbuffer_add_printf(text, "run %s cancelled (this run only; other "
	    "runs go on)\n", state->execution_id);
	worker_budget_init(&budget, 0);
	sc = worker_output_exec(state, &budget, text, call);
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
	worker_exec_free(state);
}

static void
tool_interrupt_kernel_done(struct worker_call *call, struct worker_room *room,
    const msgpack_object *reply)
{
	struct json_object	*sc, *ended, *e;
	struct evbuffer		*text;
	const msgpack_object	*v;
	const char		*who, *st;
	char			*s;
	size_t			 i, n;

	(void)room;
	sc = json_object_new_object();
	json_object_object_add(sc, "interrupted", json_object_new_boolean(1));
	text = evbuffer_new();
	evbuffer_add_printf(text, "kernel interrupted");
	/* The runs it ended, and whose (a daemon before issue 39: none). */
	v = reply != NULL ? proto_get_array(reply, "ended") : NULL;
	ended = v != NULL ? mpjson_unpack(v) : NULL;
	n = ended != NULL ? json_object_array_length(ended) : 0;
	if (ended != NULL)
		json_object_object_add(sc, "ended", ended);
	if (ended == NULL)
		evbuffer_add_printf(text, "; the running and queued runs "
		    "ended as interrupted");
	else if (n == 0)
		evbuffer_add_printf(text, "; no run was in progress");
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(ended, i);
		st = json_object_get_string(json_object_object_get(e,
		    "status"));
		who = json_object_get_string(json_object_object_get(e,
		    "client_name"));
		evbuffer_add_printf(text, "%s run %s (%s, %s", i == 0 ? "; ended:" :
		    ",", json_object_get_string(json_object_object_get(e,
		    "execution_id")), json_object_get_boolean(
		    json_object_object_get(e, "yours")) ? "yours" : who != NULL ?
		    who : "another client", st != NULL ? st : "?");
		if (st != NULL && strcmp(st, "queued") == 0)
			evbuffer_add_printf(text, ": none of its cells ran");
		evbuffer_add_printf(text, ")");
	}
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_interrupt_kernel(struct worker_call *call)
{
	static const char *const allowed[] = {
		"notebook_handle", "notebook_id", "domain", "execution_id",
		NULL
	};
	struct worker_handle	*h;
	struct proto_exec_who	 who;
	struct proto_exec_id	 cm;
	struct mpbuf		 b;
	const char		*eid;
	char			*msg = NULL;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(worker_call_args(call), "execution_id", 0,
	    &eid, &msg) != 0) {
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		return;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	if (eid != NULL) {
		memset(&cm, 0, sizeof cm);
		cm.execution_id = proto_str_make(eid);
		mpbuf_init(&b);
		proto_exec_id_pack(&b.pk, &cm);
		worker_call_room(call, worker_attach_room(h),
		    PROTO_MSG_EXEC_CANCEL, &b.sb,
		    tool_interrupt_kernel_cancelled);
		mpbuf_free(&b);
		return;
	}
	/* Who interrupts, so other clients' runs can say so. */
	memset(&who, 0, sizeof who);
	worker_client_who(&who);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "client_name", worker_client_name_get());
	proto_pack_pstr(&b.pk, "session", &who.session);
	worker_call_room(call, worker_attach_room(h),
	    PROTO_MSG_KERNEL_INTERRUPT, &b.sb, tool_interrupt_kernel_done);
	mpbuf_free(&b);
}

const struct tool_entry tool_interrupt_kernel_entry = {
	.name = "interrupt_kernel",
	.description = "Interrupt the kernel when a run hangs or takes too "
	    "long; running and queued runs end interrupted, variables stay. "
	    "execution_id: cancel that run only.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ",\"execution_id\":{\"type\":\"string\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"interrupted\":{\"type\":\"boolean\"},"
	    "\"ended\":{\"type\":\"array\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = tool_interrupt_kernel,
};
