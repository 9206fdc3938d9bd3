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

/*
 * Caps are checked before a body is read or allocated.  Control messages
 * are small; messages that carry cells or outputs may be large; whole
 * notebooks are largest.
 */
static const struct proto_msg_info proto_msg_table[] = {
	/* type, name		cap		from	reply		flags */
	{ M(HELLO),		PROTO_HELLO_MAX, C|A|W, R(HELLO_OK), HS|ANYV },
	{ M(HELLO_OK),		PROTO_HELLO_MAX, D|P,	0, HS },
	{ M(VERSION_MISMATCH),	PROTO_HELLO_MAX, D|P,	0, HS|ANYV },
	{ M(OK),		64 * KIB,	ANY,	0, 0 },
	{ M(ERROR),		64 * KIB,	ANY,	0, HS },
	{ M(PING),		4 * KIB,	ANY,	R(PONG), RETRY },
	{ M(PONG),		4 * KIB,	ANY,	0, 0 },

	{ M(DAEMON_STATUS),	4 * KIB,	C,
	    R(DAEMON_STATUS_REPLY), RETRY },
	{ M(DAEMON_STATUS_REPLY), 64 * KIB,	D,	0, 0 },
	{ M(DAEMON_STOP),	4 * KIB,	C,	R(OK), 0 },
	{ M(ROOM_LIST),		4 * KIB,	C, R(ROOM_LIST_REPLY), RETRY },
	{ M(ROOM_LIST_REPLY),	16 * MIB,	D,	0, 0 },
	{ M(ROOM_CREATE),	64 * KIB,	C,	R(ROOM_JOINED), MUT },
	{ M(ROOM_JOINED),	64 * MIB,	D,	0, 0 },
	{ M(ROOM_OPEN),		64 * KIB,	C, R(ROOM_JOINED), RETRY },
	{ M(ROOM_LEAVE),	4 * KIB,	C,	R(OK), ROOM },
	{ M(ROOM_GET),		64 * KIB,	C,
	    R(ROOM_CONTENT), ROOM|RETRY },
	{ M(ROOM_CONTENT),	64 * MIB,	D,	0, 0 },
	{ M(ROOM_EDIT),		16 * MIB,	C,
	    R(ROOM_EDIT_REPLY), ROOM|MUT },
	{ M(ROOM_EDIT_REPLY),	16 * MIB,	D,	0, 0 },
	{ M(ROOM_SAVE),		64 * KIB,	C,
	    R(ROOM_SAVE_REPLY), ROOM|MUT },
	{ M(ROOM_SAVE_REPLY),	64 * KIB,	D,	0, 0 },
	/* Names every cell a change touched: as many as a batch's edits. */
	{ M(ROOM_CHANGED),	16 * MIB,	D,	0, EVENT },
	{ M(ROOM_CHANGES),	4 * KIB,	C,
	    R(ROOM_CHANGES_REPLY), ROOM|RETRY },
	{ M(ROOM_CHANGES_REPLY), 16 * MIB,	D,	0, 0 },
	/* A change and the whole notebook after it, to a peer that waits. */
	{ M(ROOM_WAIT),		4 * KIB,	C,	R(OK), ROOM|RETRY },
	{ M(ROOM_CHANGED_CONTENT), 80 * MIB,	D,	0, EVENT },
	{ M(EXEC_RUN),		1 * MIB,	C, R(EXEC_STATE), ROOM|MUT },
	{ M(EXEC_STATE),	64 * MIB,	D,	0, 0 },
	{ M(EXEC_GET),		64 * KIB,	C, R(EXEC_STATE), ROOM|RETRY },
	{ M(EXEC_CANCEL),	64 * KIB,	C, R(EXEC_STATE), ROOM|MUT },
	{ M(EXEC_LIST),		4 * KIB,	C,
	    R(EXEC_LIST_REPLY), ROOM|RETRY },
	{ M(KERNEL_INTERRUPT),	4 * KIB,	C,	R(OK), ROOM|MUT },
	{ M(KERNEL_RESTART),	4 * KIB,	C,	R(OK), ROOM|MUT },
	{ M(KERNEL_INFO),	4 * KIB,	C,
	    R(KERNEL_INFO_REPLY), ROOM|RETRY },
	{ M(KERNEL_INFO_REPLY),	1 * MIB,	D,	0, 0 },
	/* Room-less too. */
	{ M(KERNEL_LIST),	4 * KIB,	C,
	    R(KERNEL_LIST_REPLY), RETRY },
	{ M(KERNEL_LIST_REPLY),	1 * MIB,	D,	0, 0 },
	{ M(KERNEL_SELECT),	4 * KIB,	C,	R(OK), ROOM|MUT },
	{ M(BLOB_GET),		4 * KIB,	C,	R(BLOB_REPLY), RETRY },
	{ M(BLOB_REPLY),	64 * MIB,	D,	0, 0 },
	/* Room-less. */
	{ M(EXEC_TASKS),	64 * KIB,	C,
	    R(EXEC_TASKS_REPLY), RETRY },
	{ M(EXEC_TASKS_REPLY),	16 * MIB,	D,	0, 0 },
	/* Replies from the daemon to a client, from an agent to it. */
	{ M(KERNEL_VARIABLES),	64 * KIB,	C,
	    R(KERNEL_VARIABLES_REPLY), ROOM|RETRY },
	{ M(KERNEL_VARIABLES_REPLY), 4 * MIB,	D|A,	0, 0 },
	{ M(KERNEL_COMPLETE),	1 * MIB,	C,
	    R(KERNEL_COMPLETE_REPLY), ROOM|RETRY },
	{ M(KERNEL_COMPLETE_REPLY), 1 * MIB,	D|A,	0, 0 },
	{ M(KERNEL_INSPECT),	1 * MIB,	C,
	    R(KERNEL_INSPECT_REPLY), ROOM|RETRY },
	{ M(KERNEL_INSPECT_REPLY), 1 * MIB,	D|A,	0, 0 },
	/* Not resent: a second answer would go to the next question. */
	{ M(EXEC_INPUT),	128 * KIB,	C,	R(OK), ROOM|MUT },
	{ M(EXEC_LIST_REPLY),	1 * MIB,	D,	0, 0 },
	{ M(VIEW_OPEN),		4 * KIB,	C,	R(VIEW_URL), RETRY },
	{ M(VIEW_URL),		4 * KIB,	D,	0, 0 },
	{ M(VIEW_READY),	4 * KIB,	C,	R(OK), 0 },
	{ M(VIEW_STATE),	4 * KIB,	C,
	    R(VIEW_STATE_REPLY), ROOM|RETRY },
	{ M(VIEW_STATE_REPLY),	16 * MIB,	D,	0, 0 },

	{ M(AGENT_START),	64 * KIB,	D,	R(AGENT_READY), MUT },
	{ M(AGENT_READY),	1 * MIB,	A,	0, 0 },
	/* No reply when accepted; ERROR when not. */
	{ M(AGENT_EXECUTE),	16 * MIB,	D,	0, MUT },
	{ M(AGENT_OUTPUT),	64 * MIB,	A,	0, EVENT },
	{ M(AGENT_EXEC_DONE),	64 * KIB,	A,	0, EVENT },
	{ M(AGENT_EXEC_STARTED), 64 * KIB,	A,	0, EVENT },
	{ M(AGENT_INTERRUPT),	4 * KIB,	D,	R(OK), MUT },
	{ M(AGENT_SHUTDOWN),	4 * KIB,	D,	R(OK), MUT },
	{ M(AGENT_STATUS),	64 * KIB,	A,	0, EVENT },
	{ M(AGENT_CLEAR_OUTPUT), 4 * KIB,	A,	0, EVENT },
	{ M(AGENT_VARIABLES),	64 * KIB,	D,
	    R(KERNEL_VARIABLES_REPLY), 0 },
	{ M(AGENT_COMPLETE),	1 * MIB,	D,
	    R(KERNEL_COMPLETE_REPLY), 0 },
	{ M(AGENT_INSPECT),	1 * MIB,	D,
	    R(KERNEL_INSPECT_REPLY), 0 },
	{ M(AGENT_INPUT_REQUEST), 64 * KIB,	A,	0, EVENT },
	{ M(AGENT_INPUT_REPLY),	128 * KIB,	D,	R(OK), MUT },

	{ M(MCP),		16 * MIB + 16 * KIB, P|W, 0, 0 },
	{ M(WORKER_READY),	16 * MIB,	W,	0, EVENT },
	{ M(WORKER_UPGRADE),	4 * KIB,	W,	0, EVENT },
	{ M(WORKER_SHUTDOWN),	4 * KIB,	P,	0, EVENT },
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
