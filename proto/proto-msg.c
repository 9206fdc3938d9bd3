/* SPDX-License-Identifier: ISC */
/*
 * proto-msg.c: the one table of facts about every message type: its
 * name, body cap, who may send it, its reply and its flags
 * (docs/decisions/014).  Every process asks here; no other list of
 * types exists.
 */

#include <pthread.h>
#include <stdio.h>

#include "proto.h"

#define KIB	1024U
#define MIB	(1024U * 1024U)

/* A batch within PROTO_EDIT_MAX_EDITS always has a reply that fits. */
_Static_assert((uint64_t)PROTO_EDIT_MAX_EDITS * PROTO_EDIT_REPLY_ENTRY + 64 <=
    16 * MIB, "ROOM_EDIT_REPLY's cap must hold a full batch's reply");

#define C	PROTO_FROM_CLIENT
#define D	PROTO_FROM_DAEMON
#define A	PROTO_FROM_AGENT
#define P	PROTO_FROM_PROXY
#define W	PROTO_FROM_WORKER
#define ANY	(C | D | A | P | W)

#define ROOM	PROTO_F_ROOM
#define MUT	PROTO_F_MUTATES
#define RETRY	PROTO_F_RETRY
#define EVENT	PROTO_F_EVENT
#define HS	PROTO_F_HANDSHAKE
#define ANYV	PROTO_F_ANY_VERSION

#define M(t)	PROTO_MSG_##t, #t
#define R(t)	PROTO_MSG_##t
#define U(n)	proto_msg_##n

/*
 * The codec column: each codec behind the one signature of
 * proto_unpack_cb, its struct checked to fit PROTO_BODY_MAX.
 */
#define CODEC(n, st)							\
_Static_assert(sizeof (struct proto_##st) <= PROTO_BODY_MAX,		\
    "struct proto_" #st " is larger than PROTO_BODY_MAX");		\
static int								\
proto_msg_##n(const msgpack_object *o, void *m, char *err, size_t len)	\
{									\
	return (proto_##n##_unpack(o, m, err, len));			\
}
/* A codec that names its type in its errors. */
#define CODEC_NAMED(n, f, st, name)					\
_Static_assert(sizeof (struct proto_##st) <= PROTO_BODY_MAX,		\
    "struct proto_" #st " is larger than PROTO_BODY_MAX");		\
static int								\
proto_msg_##n(const msgpack_object *o, void *m, char *err, size_t len)	\
{									\
	return (proto_##f##_unpack(o, name, m, err, len));		\
}
/* An empty body: no struct. */
#define CODEC_EMPTY(n)							\
static int								\
proto_msg_##n(const msgpack_object *o, void *m, char *err, size_t len)	\
{									\
	return (proto_##n##_unpack(o, err, len));			\
}

CODEC(hello, hello)
CODEC(hello_ok, incarnation)
CODEC(mismatch, mismatch)
CODEC(error, error)
CODEC(daemon_status_reply, daemon_status_reply)
CODEC(room_list_reply, room_list_reply)
CODEC(room_create, room_create)
CODEC(room_joined, room_joined)
CODEC(room_open, room_open)
CODEC(room_content, room_joined)
CODEC(room_edit, room_edit)
CODEC(room_edit_reply, room_edit_reply)
CODEC(room_save, room_save)
CODEC(room_save_reply, room_save_reply)
CODEC(room_changed, room_changed)
CODEC(room_changes, room_changes)
CODEC(room_changes_reply, room_changes_reply)
CODEC(room_wait, room_wait)
CODEC(room_changed_content, room_changed_content)
CODEC(exec_run, exec_run)
CODEC(exec_state, exec_state)
CODEC_NAMED(exec_get, exec_id, exec_id, "EXEC_GET")
CODEC_NAMED(exec_cancel, exec_id, exec_id, "EXEC_CANCEL")
CODEC(exec_list, exec_list)
CODEC_NAMED(exec_list_reply, exec_runs, exec_runs, "EXEC_LIST_REPLY")
CODEC(kernel_info_reply, kernel_info_reply)
CODEC(kernel_list_reply, kernel_list_reply)
CODEC(kernel_select, kernel_select)
CODEC(blob_get, blob_get)
CODEC(blob_reply, blob_reply)
CODEC(exec_tasks, exec_tasks)
CODEC_NAMED(exec_tasks_reply, exec_runs, exec_runs, "EXEC_TASKS_REPLY")
CODEC(variables, variables)
CODEC(variables_reply, variables_reply)
CODEC(complete, complete)
CODEC(complete_reply, complete_reply)
CODEC(inspect, inspect)
CODEC(inspect_reply, inspect_reply)
CODEC(exec_input, exec_input)
CODEC(view_open, view_open)
CODEC(view_url, view_url)
CODEC(view_ready, view_ready)
CODEC(view_state_reply, view_state_reply)
CODEC(agent_start, agent_start)
CODEC(agent_ready, agent_ready)
CODEC(agent_execute, agent_execute)
CODEC(agent_output, agent_output)
CODEC(agent_exec_done, agent_exec_done)
CODEC(agent_exec_started, agent_exec_started)
CODEC_EMPTY(agent_interrupt)
CODEC(agent_shutdown, agent_shutdown)
CODEC(agent_status, agent_status)
CODEC(agent_clear_output, agent_clear_output)
CODEC(agent_input_request, agent_input_request)
CODEC(mcp, mcp)
CODEC(worker_ready, worker_ready)
CODEC_EMPTY(worker_upgrade)
CODEC_EMPTY(worker_shutdown)

/*
 * Caps are checked before a body is read or allocated.  Control messages
 * are small; messages that carry cells or outputs may be large; whole
 * notebooks are largest.
 */
static const struct proto_msg_info proto_msg_table[] = {
	/* type, name	cap		from	reply		flags, codec */
	{ M(HELLO),		PROTO_HELLO_MAX, C|A|W, R(HELLO_OK), HS|ANYV,
	    U(hello) },
	{ M(HELLO_OK),		PROTO_HELLO_MAX, D|P,	0, HS,
	    U(hello_ok) },
	{ M(VERSION_MISMATCH),	PROTO_HELLO_MAX, D|P,	0, HS|ANYV,
	    U(mismatch) },
	{ M(OK),		64 * KIB,	ANY,	0, 0, NULL },
	{ M(ERROR),		64 * KIB,	ANY,	0, HS,
	    U(error) },
	{ M(PING),		4 * KIB,	ANY,	R(PONG), RETRY, NULL },
	{ M(PONG),		4 * KIB,	ANY,	0, 0, NULL },

	{ M(DAEMON_STATUS),	4 * KIB,	C,
	    R(DAEMON_STATUS_REPLY), RETRY, NULL },
	{ M(DAEMON_STATUS_REPLY), 64 * KIB,	D,	0, 0,
	    U(daemon_status_reply) },
	{ M(DAEMON_STOP),	4 * KIB,	C,	R(OK), 0, NULL },
	{ M(ROOM_LIST),		4 * KIB,	C, R(ROOM_LIST_REPLY), RETRY,
	    NULL },
	{ M(ROOM_LIST_REPLY),	16 * MIB,	D,	0, 0,
	    U(room_list_reply) },
	{ M(ROOM_CREATE),	64 * KIB,	C,	R(ROOM_JOINED), MUT,
	    U(room_create) },
	{ M(ROOM_JOINED),	64 * MIB,	D,	0, 0,
	    U(room_joined) },
	{ M(ROOM_OPEN),		64 * KIB,	C, R(ROOM_JOINED), RETRY,
	    U(room_open) },
	{ M(ROOM_LEAVE),	4 * KIB,	C,	R(OK), ROOM, NULL },
	{ M(ROOM_GET),		64 * KIB,	C,
	    R(ROOM_CONTENT), ROOM|RETRY, NULL },
	{ M(ROOM_CONTENT),	64 * MIB,	D,	0, 0,
	    U(room_content) },
	{ M(ROOM_EDIT),		16 * MIB,	C,
	    R(ROOM_EDIT_REPLY), ROOM|MUT,
	    U(room_edit) },
	{ M(ROOM_EDIT_REPLY),	16 * MIB,	D,	0, 0,
	    U(room_edit_reply) },
	{ M(ROOM_SAVE),		64 * KIB,	C,
	    R(ROOM_SAVE_REPLY), ROOM|MUT,
	    U(room_save) },
	{ M(ROOM_SAVE_REPLY),	64 * KIB,	D,	0, 0,
	    U(room_save_reply) },
	/* Names every cell a change touched: as many as a batch's edits. */
	{ M(ROOM_CHANGED),	16 * MIB,	D,	0, EVENT,
	    U(room_changed) },
	{ M(ROOM_CHANGES),	4 * KIB,	C,
	    R(ROOM_CHANGES_REPLY), ROOM|RETRY,
	    U(room_changes) },
	{ M(ROOM_CHANGES_REPLY), 16 * MIB,	D,	0, 0,
	    U(room_changes_reply) },
	/* A change and the whole notebook after it, to a peer that waits. */
	{ M(ROOM_WAIT),		4 * KIB,	C,	R(OK), ROOM|RETRY,
	    U(room_wait) },
	{ M(ROOM_CHANGED_CONTENT), 80 * MIB,	D,	0, EVENT,
	    U(room_changed_content) },
	{ M(EXEC_RUN),		1 * MIB,	C, R(EXEC_STATE), ROOM|MUT,
	    U(exec_run) },
	{ M(EXEC_STATE),	64 * MIB,	D,	0, 0,
	    U(exec_state) },
	{ M(EXEC_GET),		64 * KIB,	C, R(EXEC_STATE), ROOM|RETRY,
	    U(exec_get) },
	{ M(EXEC_CANCEL),	64 * KIB,	C, R(EXEC_STATE), ROOM|MUT,
	    U(exec_cancel) },
	{ M(EXEC_LIST),		4 * KIB,	C,
	    R(EXEC_LIST_REPLY), ROOM|RETRY,
	    U(exec_list) },
	{ M(KERNEL_INTERRUPT),	4 * KIB,	C,	R(OK), ROOM|MUT, NULL },
	{ M(KERNEL_RESTART),	4 * KIB,	C,	R(OK), ROOM|MUT, NULL },
	{ M(KERNEL_INFO),	4 * KIB,	C,
	    R(KERNEL_INFO_REPLY), ROOM|RETRY, NULL },
	{ M(KERNEL_INFO_REPLY),	1 * MIB,	D,	0, 0,
	    U(kernel_info_reply) },
	/* Room-less too. */
	{ M(KERNEL_LIST),	4 * KIB,	C,
	    R(KERNEL_LIST_REPLY), RETRY, NULL },
	{ M(KERNEL_LIST_REPLY),	1 * MIB,	D,	0, 0,
	    U(kernel_list_reply) },
	{ M(KERNEL_SELECT),	4 * KIB,	C,	R(OK), ROOM|MUT,
	    U(kernel_select) },
	{ M(BLOB_GET),		4 * KIB,	C,	R(BLOB_REPLY), RETRY,
	    U(blob_get) },
	{ M(BLOB_REPLY),	64 * MIB,	D,	0, 0,
	    U(blob_reply) },
	/* Room-less. */
	{ M(EXEC_TASKS),	64 * KIB,	C,
	    R(EXEC_TASKS_REPLY), RETRY,
	    U(exec_tasks) },
	{ M(EXEC_TASKS_REPLY),	16 * MIB,	D,	0, 0,
	    U(exec_tasks_reply) },
	/* Replies from the daemon to a client, from an agent to it. */
	{ M(KERNEL_VARIABLES),	64 * KIB,	C,
	    R(KERNEL_VARIABLES_REPLY), ROOM|RETRY,
	    U(variables) },
	{ M(KERNEL_VARIABLES_REPLY), 4 * MIB,	D|A,	0, 0,
	    U(variables_reply) },
	{ M(KERNEL_COMPLETE),	1 * MIB,	C,
	    R(KERNEL_COMPLETE_REPLY), ROOM|RETRY,
	    U(complete) },
	{ M(KERNEL_COMPLETE_REPLY), 1 * MIB,	D|A,	0, 0,
	    U(complete_reply) },
	{ M(KERNEL_INSPECT),	1 * MIB,	C,
	    R(KERNEL_INSPECT_REPLY), ROOM|RETRY,
	    U(inspect) },
	{ M(KERNEL_INSPECT_REPLY), 1 * MIB,	D|A,	0, 0,
	    U(inspect_reply) },
	/* Not resent: a second answer would go to the next question. */
	{ M(EXEC_INPUT),	128 * KIB,	C,	R(OK), ROOM|MUT,
	    U(exec_input) },
	{ M(EXEC_LIST_REPLY),	1 * MIB,	D,	0, 0,
	    U(exec_list_reply) },
	{ M(VIEW_OPEN),		4 * KIB,	C,	R(VIEW_URL), RETRY,
	    U(view_open) },
	{ M(VIEW_URL),		4 * KIB,	D,	0, 0,
	    U(view_url) },
	{ M(VIEW_READY),	4 * KIB,	C,	R(OK), 0,
	    U(view_ready) },
	{ M(VIEW_STATE),	4 * KIB,	C,
	    R(VIEW_STATE_REPLY), ROOM|RETRY, NULL },
	{ M(VIEW_STATE_REPLY),	16 * MIB,	D,	0, 0,
	    U(view_state_reply) },

	{ M(AGENT_START),	64 * KIB,	D,	R(AGENT_READY), MUT,
	    U(agent_start) },
	{ M(AGENT_READY),	1 * MIB,	A,	0, 0,
	    U(agent_ready) },
	/* No reply when accepted; ERROR when not. */
	{ M(AGENT_EXECUTE),	16 * MIB,	D,	0, MUT,
	    U(agent_execute) },
	{ M(AGENT_OUTPUT),	64 * MIB,	A,	0, EVENT,
	    U(agent_output) },
	{ M(AGENT_EXEC_DONE),	64 * KIB,	A,	0, EVENT,
	    U(agent_exec_done) },
	{ M(AGENT_EXEC_STARTED), 64 * KIB,	A,	0, EVENT,
	    U(agent_exec_started) },
	{ M(AGENT_INTERRUPT),	4 * KIB,	D,	R(OK), MUT,
	    U(agent_interrupt) },
	{ M(AGENT_SHUTDOWN),	4 * KIB,	D,	R(OK), MUT,
	    U(agent_shutdown) },
	{ M(AGENT_STATUS),	64 * KIB,	A,	0, EVENT,
	    U(agent_status) },
	{ M(AGENT_CLEAR_OUTPUT), 4 * KIB,	A,	0, EVENT,
	    U(agent_clear_output) },
	{ M(AGENT_VARIABLES),	64 * KIB,	D,
	    R(KERNEL_VARIABLES_REPLY), 0,
	    U(variables) },
	{ M(AGENT_COMPLETE),	1 * MIB,	D,
	    R(KERNEL_COMPLETE_REPLY), 0,
	    U(complete) },
	{ M(AGENT_INSPECT),	1 * MIB,	D,
	    R(KERNEL_INSPECT_REPLY), 0,
	    U(inspect) },
	{ M(AGENT_INPUT_REQUEST), 64 * KIB,	A,	0, EVENT,
	    U(agent_input_request) },
	{ M(AGENT_INPUT_REPLY),	128 * KIB,	D,	R(OK), MUT,
	    U(exec_input) },

	{ M(MCP),		16 * MIB + 16 * KIB, P|W, 0, 0,
	    U(mcp) },
	{ M(WORKER_READY),	16 * MIB,	W,	0, EVENT,
	    U(worker_ready) },
	{ M(WORKER_UPGRADE),	4 * KIB,	W,	0, EVENT,
	    U(worker_upgrade) },
	{ M(WORKER_SHUTDOWN),	4 * KIB,	P,	0, EVENT,
	    U(worker_shutdown) },
};

/*
 * Every frame asks the table several times (its cap, who may send it,
 * its name for the trace): types below PROTO_MSG_INDEX_MAX find their
 * row through an index (row + 1; 0 = not a type), built once, by
 * whichever thread asks first.
 */
#define PROTO_MSG_INDEX_MAX	1024
#define PROTO_MSG_NTYPES	(sizeof proto_msg_table / sizeof *proto_msg_table)
_Static_assert(PROTO_MSG_NTYPES < 255, "the index holds a row in a byte");

static uint8_t		proto_msg_index[PROTO_MSG_INDEX_MAX];
static pthread_once_t	proto_msg_index_once = PTHREAD_ONCE_INIT;

static void
proto_msg_index_build(void)
{
	size_t	i;

	for (i = 0; i < PROTO_MSG_NTYPES; i++) {
		if (proto_msg_table[i].type < PROTO_MSG_INDEX_MAX)
			proto_msg_index[proto_msg_table[i].type] = i + 1;
	}
}

/* The facts of a type, or NULL for a type not in the table. */
const struct proto_msg_info *
proto_msg_info(uint16_t type)
{
	size_t	i;

	if (type < PROTO_MSG_INDEX_MAX) {
		if (pthread_once(&proto_msg_index_once,
		    proto_msg_index_build) != 0)
			return (NULL);
		i = proto_msg_index[type];
		return (i != 0 ? &proto_msg_table[i - 1] : NULL);
	}
	for (i = 0; i < PROTO_MSG_NTYPES; i++) {
		if (proto_msg_table[i].type == type)
			return (&proto_msg_table[i]);
	}
	return (NULL);
}

/* Name of a message type for logs; "unknown" if not in the table. */
const char *
proto_msg_name(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->name : "unknown");
}

/* Largest body allowed for a type; 0 for an unknown type. */
uint32_t
proto_msg_cap(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->cap : 0);
}

/* Does a type carry flag (PROTO_F_*)?  0 for an unknown type. */
int
proto_msg_has(uint16_t type, u_int flag)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL && (info->flags & flag) != 0);
}

/* May a peer of kind from (PROTO_FROM_*) send this type? */
int
proto_msg_from(uint16_t type, u_int from)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL && (info->from & from) != 0);
}

/* The table's rows in order, for whoever walks them all; NULL past the end. */
const struct proto_msg_info *
proto_msg_row(size_t i)
{
	return (i < PROTO_MSG_NTYPES ? &proto_msg_table[i] : NULL);
}

/* The type that answers a request; 0 when none does. */
uint16_t
proto_msg_reply(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->reply : 0);
}

/*
 * Read a body of a type into its struct (m, PROTO_BODY_MAX bytes will
 * do) through the type's codec; -1 with the codec's reason in err, or
 * when the type has none.
 */
int
proto_msg_unpack(uint16_t type, const msgpack_object *body, void *m,
    char *err, size_t errlen)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	if (info == NULL || info->unpack == NULL) {
		snprintf(err, errlen, "%s has no body to read",
		    proto_msg_name(type));
		return (-1);
	}
	return (info->unpack(body, m, err, errlen));
}
