/* SPDX-License-Identifier: ISC */
/*
 * proto.h: the wire contract between every pair of runtimed processes.
 *
 * A frame is a fixed 12-byte header followed by a msgpack body:
 *
 *	u32 length	body length in bytes (big endian)
 *	u16 type	enum proto_msg (big endian)
 *	u8  version	PROTO_VERSION of the sender
 *	u8  flags	reserved, 0
 *	u32 id		request id; a reply carries its request's id, events 0
 *
 * The body is always one msgpack map with string keys.  PROTOCOL.md
 * describes every message in prose.  This file is the contract: the
 * numbers in order, the limits, the table of facts; proto-body.h holds
 * each body's struct and codec, proto-errors.h the error codes.
 *
 * Rules: every value below is explicit and never renumbered; a retired
 * value stays, marked unused.  Changing a payload in a way an older peer
 * cannot read means bumping PROTO_VERSION.
 *
 * This header and the proto sources depend on nothing else in the tree.
 */

#ifndef PROTO_H
#define PROTO_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "proto-errors.h"

#define PROTO_VERSION		1
#define PROTO_HEADER_SIZE	12

/* Hard ceiling for any frame; per-type caps below are tighter. */
#define PROTO_MAX_FRAME		(64U * 1024 * 1024)

/*
 * Until the handshake is done (HELLO_OK sent or received) a peer may send
 * only handshake frames (HELLO, HELLO_OK, VERSION_MISMATCH, ERROR) of at
 * most this many bytes: a stranger cannot make us buffer more.
 */
#define PROTO_HELLO_MAX		(4U * 1024)

/*
 * The deepest nesting of any JSON the suite parses or packs: MCP
 * messages (common/jsonrpc.c), notebooks (room-ipynb.c), Jupyter
 * messages (agent-wire.c), values crossing frames (common/mpjson.c).
 * nbformat reads what Python's json module reads, about 990 levels, so
 * every notebook it reads fits under this.  Past it the answer is a
 * typed error naming the limit (an MCP request's carries its id).
 */
#define PROTO_MAX_DEPTH		1024

/*
 * The largest MCP messages: a request line longer than the request cap
 * is refused by whichever process reads it from stdin (the proxy, or a
 * worker on stdio; common/lineread.c), and a reply that would be longer
 * than the reply cap is answered with an error saying how to ask for
 * less.  They keep the proxy's memory bounded whatever a client sends
 * or asks for.  The MCP frame cap adds room for the envelope.  Replies
 * stay under 10 MiB: the official SDK's stdio transport drops the
 * connection on a longer line.
 */
#define PROTO_MCP_REQUEST_CAP	(16U * 1024 * 1024)
#define PROTO_MCP_REPLY_CAP	(8U * 1024 * 1024)

/*
 * Most edits plus cells named in cell_ids lists in one ROOM_EDIT.  A
 * batch this size takes tens of milliseconds, so no other client waits
 * 100 ms behind one (docs/decisions/010); and its reply, one cell per
 * edit of at most 100 bytes (ids are 1-64 characters), always fits the
 * ROOM_EDIT_REPLY cap, so the daemon refuses a larger batch before
 * applying any of it and never commits an edit it cannot answer.
 */
#define PROTO_EDIT_MAX_EDITS	1000
#define PROTO_EDIT_REPLY_ENTRY	100

/*
 * Most cells in one run (EXEC_RUN; run_cells cell_ids or all,
 * move_cells): a run's record and its EXEC_STATE reply, every cell's
 * outputs inline, stay within the reply caps.  The worker checks it to
 * answer invalid_argument before asking; the daemon checks it again for
 * any client.
 */
#define PROTO_RUN_MAX_CELLS	256

/*
 * Longest wait of one request (EXEC_GET timeout_ms; the tools'
 * wait_secs and timeout_secs in whole seconds, 0 to 50): short of the
 * request timeouts MCP clients commonly set, so a wait ends with an
 * answer rather than a client giving up.  The worker refuses a longer
 * one as invalid_argument; the daemon again for any client.
 */
#define PROTO_WAIT_MAX_MS	50000

/*
 * Resource watches one MCP connection holds, counted by the worker
 * that answers resources/subscribe and by the proxy that keeps them
 * across worker restarts: both must refuse at the same count.
 */
#define PROTO_MAX_WATCHES	128

/*
 * A change report (ROOM_CHANGED, ROOM_CHANGES_REPLY): details of one
 * change (how each cell changed), and the characters of the last output
 * line an outputs detail carries.
 */
#define PROTO_CHANGE_LINE_MAX		120
#define PROTO_CHANGE_MAX_DETAILS	1000

/* Runs EXEC_LIST lists at most. */
#define PROTO_EXEC_LIST_MAX	20

/* Introspection and stdin (docs/decisions/022). */
#define PROTO_VARIABLES_MAX	1000	/* variables a reply lists */
#define PROTO_VARIABLES_DEFAULT	100
#define PROTO_REPR_MAX		200	/* code points of a repr */
#define PROTO_COMPLETE_MAX	200	/* matches a reply lists */
#define PROTO_INSPECT_MAX	8000	/* code points of inspect text */
#define PROTO_INPUT_MAX		(64U * 1024)	/* bytes of an answer */
#define PROTO_PROMPT_MAX	(8U * 1024)	/* bytes of a prompt kept */
#define PROTO_FILTER_MAX	1024		/* bytes of a name pattern */
#define PROTO_CODE_MAX		(1020U * 1024)	/* bytes of code to complete */

/*
 * Every message type, in numeric order, with its facts: the one list
 * (docs/decisions/014, 096).  The enum below and proto-msg.c's table
 * are built from it, so a new type is one row here and nothing there:
 *
 *	X(name, number, cap, from, reply, flags, codec kind, codec, struct)
 *
 * cap: the largest body in bytes (KIB, MIB), checked before it is
 * read.  from: who may send it, C client, D daemon, A agent, P proxy,
 * W worker, ANY all (PROTO_FROM_*).  reply: the type that answers it,
 * NONE when none.  flags: ROOM, MUT, RETRY, EVENT, HS, ANYV (PROTO_F_*)
 * or 0.  The codec reads a body into struct proto_<struct>: BODY
 * through proto_<codec>_unpack(o, m, err, len), NAMED the same with the
 * type's name first (for its errors), EMPTY a body with no fields and
 * no struct, NONE no codec (the receiver reads the body, or it has none).
 * Numbers are never reused: a retired type's number stays, in a comment.
 */
#define PROTO_MSGS(X)							\
	/* 1-99: every connection; HELLO first on each. */		\
	X(HELLO, 1, PROTO_HELLO_MAX, C|A|W, HELLO_OK, HS|ANYV,		\
	    BODY, hello, hello)						\
	X(HELLO_OK, 2, PROTO_HELLO_MAX, D|P, NONE, HS,			\
	    BODY, hello_ok, incarnation)				\
									\
	/* An answer, then the peer is closed. */			\
	X(VERSION_MISMATCH, 3, PROTO_HELLO_MAX, D|P, NONE, HS|ANYV,	\
	    BODY, mismatch, mismatch)					\
									\
	/* The generic replies: success, failure {code, message}. */	\
	X(OK, 4, 64 * KIB, ANY, NONE, 0, NONE, , )			\
	X(ERROR, 5, 64 * KIB, ANY, NONE, HS, BODY, error, error)	\
	X(PING, 6, 4 * KIB, ANY, PONG, RETRY, NONE, , )			\
	X(PONG, 7, 4 * KIB, ANY, NONE, 0, NONE, , )			\
									\
	/* 100-199: clients (workers, runtimed status/stop) <-> daemon. */ \
	X(DAEMON_STATUS, 100, 4 * KIB, C, DAEMON_STATUS_REPLY, RETRY,	\
	    NONE, , )							\
	X(DAEMON_STATUS_REPLY, 101, 64 * KIB, D, NONE, 0,		\
	    BODY, daemon_status_reply, daemon_status_reply)		\
	X(DAEMON_STOP, 102, 4 * KIB, C, OK, 0, NONE, , )		\
	X(ROOM_LIST, 110, 4 * KIB, C, ROOM_LIST_REPLY, RETRY, NONE, , )	\
	X(ROOM_LIST_REPLY, 111, 16 * MIB, D, NONE, 0,			\
	    BODY, room_list_reply, room_list_reply)			\
	X(ROOM_CREATE, 112, 64 * KIB, C, ROOM_JOINED, MUT,		\
	    BODY, room_create, room_create)				\
	X(ROOM_JOINED, 113, 64 * MIB, D, NONE, 0,			\
	    BODY, room_joined, room_joined)				\
	X(ROOM_OPEN, 114, 64 * KIB, C, ROOM_JOINED, RETRY,		\
	    BODY, room_open, room_open)					\
	X(ROOM_LEAVE, 116, 4 * KIB, C, OK, ROOM, NONE, , )		\
	X(ROOM_GET, 120, 64 * KIB, C, ROOM_CONTENT, ROOM|RETRY,		\
	    NONE, , )							\
	X(ROOM_CONTENT, 121, 64 * MIB, D, NONE, 0,			\
	    BODY, room_content, room_joined)				\
	X(ROOM_EDIT, 122, 16 * MIB, C, ROOM_EDIT_REPLY, ROOM|MUT,	\
	    BODY, room_edit, room_edit)					\
	X(ROOM_EDIT_REPLY, 123, 16 * MIB, D, NONE, 0,			\
	    BODY, room_edit_reply, room_edit_reply)			\
	X(ROOM_SAVE, 124, 64 * KIB, C, ROOM_SAVE_REPLY, ROOM|MUT,	\
	    BODY, room_save, room_save)					\
	X(ROOM_SAVE_REPLY, 125, 64 * KIB, D, NONE, 0,			\
	    BODY, room_save_reply, room_save_reply)			\
									\
	/* An event to the room's peers: every cell a change		\
	 * touched, as many as a batch's edits. */			\
	X(ROOM_CHANGED, 126, 16 * MIB, D, NONE, EVENT,			\
	    BODY, room_changed, room_changed)				\
	X(ROOM_CHANGES, 127, 4 * KIB, C, ROOM_CHANGES_REPLY,		\
	    ROOM|RETRY, BODY, room_changes, room_changes)		\
	X(ROOM_CHANGES_REPLY, 128, 16 * MIB, D, NONE, 0,		\
	    BODY, room_changes_reply, room_changes_reply)		\
	X(EXEC_RUN, 130, 1 * MIB, C, EXEC_STATE, ROOM|MUT,		\
	    BODY, exec_run, exec_run)					\
	X(EXEC_STATE, 131, 64 * MIB, D, NONE, 0,			\
	    BODY, exec_state, exec_state)				\
	X(EXEC_GET, 132, 64 * KIB, C, EXEC_STATE, ROOM|RETRY,		\
	    NAMED, exec_id, exec_id)					\
									\
	/* One run, as an MCP task. */					\
	X(EXEC_CANCEL, 133, 64 * KIB, C, EXEC_STATE, ROOM|MUT,		\
	    NAMED, exec_id, exec_id)					\
	X(KERNEL_INTERRUPT, 134, 4 * KIB, C, OK, ROOM|MUT, NONE, , )	\
	X(KERNEL_RESTART, 135, 4 * KIB, C, OK, ROOM|MUT, NONE, , )	\
	X(KERNEL_INFO, 136, 4 * KIB, C, KERNEL_INFO_REPLY, ROOM|RETRY,	\
	    NONE, , )							\
	X(KERNEL_INFO_REPLY, 137, 1 * MIB, D, NONE, 0,			\
	    BODY, kernel_info_reply, kernel_info_reply)			\
									\
	/* Room-less too. */						\
	X(KERNEL_LIST, 138, 4 * KIB, C, KERNEL_LIST_REPLY, RETRY,	\
	    NONE, , )							\
	X(KERNEL_LIST_REPLY, 139, 1 * MIB, D, NONE, 0,			\
	    BODY, kernel_list_reply, kernel_list_reply)			\
	X(KERNEL_SELECT, 140, 4 * KIB, C, OK, ROOM|MUT,			\
	    BODY, kernel_select, kernel_select)				\
	X(BLOB_GET, 141, 4 * KIB, C, BLOB_REPLY, RETRY,			\
	    BODY, blob_get, blob_get)					\
	X(BLOB_REPLY, 142, 64 * MIB, D, NONE, 0,			\
	    BODY, blob_reply, blob_reply)				\
									\
	/* EXEC_LIST's reply is numbered below it (numbers never	\
	 * change). */							\
	X(EXEC_LIST_REPLY, 143, 1 * MIB, D, NONE, 0,			\
	    NAMED, exec_runs, exec_runs)				\
	X(EXEC_LIST, 144, 4 * KIB, C, EXEC_LIST_REPLY, ROOM|RETRY,	\
	    BODY, exec_list, exec_list)					\
									\
	/* Room-less: one owner's task runs. */				\
	X(EXEC_TASKS, 150, 64 * KIB, C, EXEC_TASKS_REPLY, RETRY,	\
	    BODY, exec_tasks, exec_tasks)				\
	X(EXEC_TASKS_REPLY, 151, 16 * MIB, D, NONE, 0,			\
	    NAMED, exec_runs, exec_runs)				\
									\
	/* A look inside the kernel without a cell; stdin		\
	 * (decision 022).  The replies come from the agent too. */	\
	X(KERNEL_VARIABLES, 170, 64 * KIB, C, KERNEL_VARIABLES_REPLY,	\
	    ROOM|RETRY, BODY, variables, variables)			\
	X(KERNEL_VARIABLES_REPLY, 171, 4 * MIB, D|A, NONE, 0,		\
	    BODY, variables_reply, variables_reply)			\
	X(KERNEL_COMPLETE, 172, 1 * MIB, C, KERNEL_COMPLETE_REPLY,	\
	    ROOM|RETRY, BODY, complete, complete)			\
	X(KERNEL_COMPLETE_REPLY, 173, 1 * MIB, D|A, NONE, 0,		\
	    BODY, complete_reply, complete_reply)			\
	X(KERNEL_INSPECT, 174, 1 * MIB, C, KERNEL_INSPECT_REPLY,	\
	    ROOM|RETRY, BODY, inspect, inspect)				\
	X(KERNEL_INSPECT_REPLY, 175, 1 * MIB, D|A, NONE, 0,		\
	    BODY, inspect_reply, inspect_reply)				\
	/* Does the kernel see a file the contents API wrote? */	\
	X(KERNEL_SEES, 177, 64 * KIB, C, KERNEL_SEES_REPLY,		\
	    ROOM|RETRY, NAMED, sees, sees)				\
	X(KERNEL_SEES_REPLY, 178, 4 * KIB, D|A, NONE, 0,		\
	    BODY, sees_reply, sees_reply)				\
									\
	/* Not resent: a second answer would go to the next question. */\
	X(EXEC_INPUT, 176, 128 * KIB, C, OK, ROOM|MUT,			\
	    BODY, exec_input, exec_input)				\
									\
	/* 180-189: the live view (runtimed-web): start it, answer its	\
	 * URL; VIEW_READY: listening on a port; VIEW_STATE: runs, peers, \
	 * last changer. */						\
	X(VIEW_OPEN, 180, 4 * KIB, C, VIEW_URL, RETRY,			\
	    BODY, view_open, view_open)					\
	X(VIEW_URL, 181, 4 * KIB, D, NONE, 0, BODY, view_url, view_url)	\
	X(VIEW_READY, 182, 4 * KIB, C, OK, 0,				\
	    BODY, view_ready, view_ready)				\
	X(VIEW_STATE, 183, 4 * KIB, C, VIEW_STATE_REPLY, ROOM|RETRY,	\
	    NONE, , )							\
	X(VIEW_STATE_REPLY, 184, 16 * MIB, D, NONE, 0,			\
	    BODY, view_state_reply, view_state_reply)			\
									\
	/* 195-199: change waits served without a round trip (decision	\
	 * 031): the next change of some kinds, then ROOM_CHANGED with the \
	 * whole notebook after it. */					\
	X(ROOM_WAIT, 195, 4 * KIB, C, OK, ROOM|RETRY,			\
	    BODY, room_wait, room_wait)					\
	X(ROOM_CHANGED_CONTENT, 196, 80 * MIB, D, NONE, EVENT,		\
	    BODY, room_changed_content, room_changed_content)		\
									\
	/* 200-299: daemon <-> runtime agent. */			\
	X(AGENT_START, 200, 64 * KIB, D, AGENT_READY, MUT,		\
	    BODY, agent_start, agent_start)				\
	X(AGENT_READY, 201, 1 * MIB, A, NONE, 0,			\
	    BODY, agent_ready, agent_ready)				\
									\
	/* No reply when accepted; ERROR when not. */			\
	X(AGENT_EXECUTE, 202, 16 * MIB, D, NONE, MUT,			\
	    BODY, agent_execute, agent_execute)				\
	X(AGENT_OUTPUT, 203, 64 * MIB, A, NONE, EVENT,			\
	    BODY, agent_output, agent_output)				\
	X(AGENT_EXEC_DONE, 204, 64 * KIB, A, NONE, EVENT,		\
	    BODY, agent_exec_done, agent_exec_done)			\
	X(AGENT_EXEC_STARTED, 205, 64 * KIB, A, NONE, EVENT,		\
	    BODY, agent_exec_started, agent_exec_started)		\
	X(AGENT_INTERRUPT, 206, 4 * KIB, D, OK, MUT,			\
	    EMPTY, agent_interrupt, )					\
	X(AGENT_SHUTDOWN, 207, 4 * KIB, D, OK, MUT,			\
	    BODY, agent_shutdown, agent_shutdown)			\
	X(AGENT_STATUS, 208, 64 * KIB, A, NONE, EVENT,			\
	    BODY, agent_status, agent_status)				\
	X(AGENT_CLEAR_OUTPUT, 209, 4 * KIB, A, NONE, EVENT,		\
	    BODY, agent_clear_output, agent_clear_output)		\
									\
	/* Introspection relayed from KERNEL_*; stdin asked and answered. */ \
	X(AGENT_VARIABLES, 220, 64 * KIB, D, KERNEL_VARIABLES_REPLY, 0,	\
	    BODY, variables, variables)					\
	X(AGENT_COMPLETE, 221, 1 * MIB, D, KERNEL_COMPLETE_REPLY, 0,	\
	    BODY, complete, complete)					\
	X(AGENT_INSPECT, 222, 1 * MIB, D, KERNEL_INSPECT_REPLY, 0,	\
	    BODY, inspect, inspect)					\
	X(AGENT_INPUT_REQUEST, 223, 64 * KIB, A, NONE, EVENT,		\
	    BODY, agent_input_request, agent_input_request)		\
	X(AGENT_INPUT_REPLY, 224, 128 * KIB, D, OK, MUT,		\
	    BODY, exec_input, exec_input)				\
	X(AGENT_SEES, 225, 64 * KIB, D, KERNEL_SEES_REPLY, 0,		\
	    NAMED, sees, sees)						\
									\
	/* 300-399: proxy <-> worker; MCP: a JSON-RPC message, as is. */\
	X(MCP, 300, 16 * MIB + 16 * KIB, P|W, NONE, 0, BODY, mcp, mcp)	\
	X(WORKER_READY, 301, 16 * MIB, W, NONE, EVENT,			\
	    BODY, worker_ready, worker_ready)				\
	X(WORKER_UPGRADE, 302, 4 * KIB, W, NONE, EVENT,			\
	    EMPTY, worker_upgrade, )					\
	X(WORKER_SHUTDOWN, 303, 4 * KIB, P, NONE, EVENT,		\
	    EMPTY, worker_shutdown, )

#define PROTO_MSG_ENUM(t, n, cap, from, reply, flags, kind, codec, st)	\
	PROTO_MSG_##t = n,
enum proto_msg {
	PROTO_MSG_NONE = 0,		/* no type: a request with no reply */
	PROTO_MSGS(PROTO_MSG_ENUM)
};
#undef PROTO_MSG_ENUM

/* Peer kinds named in HELLO. */
#define PROTO_PEER_WORKER	"worker"
#define PROTO_PEER_AGENT	"agent"
#define PROTO_PEER_CTL		"ctl"
#define PROTO_PEER_PROXY	"proxy"
#define PROTO_PEER_WEB		"web"	/* runtimed-web, the live view */

struct proto_header {
	uint32_t	length;
	uint16_t	type;
	uint8_t		version;
	uint8_t		flags;
	uint32_t	id;
};

/*
 * proto-msg.c: the facts of every type.  from is who may send it, as
 * PROTO_FROM_* bits: a receiver kills a peer that sends what its kind
 * may not.  reply is the answer's type (0 when none).
 */
#define PROTO_FROM_CLIENT	0x01	/* worker, ctl, proxy to the daemon */
#define PROTO_FROM_DAEMON	0x02	/* daemon to a client or an agent */
#define PROTO_FROM_AGENT	0x04	/* agent to the daemon */
#define PROTO_FROM_PROXY	0x08	/* proxy to its worker */
#define PROTO_FROM_WORKER	0x10	/* worker to its proxy */

#define PROTO_F_ROOM		0x01	/* needs a joined room */
#define PROTO_F_MUTATES		0x02	/* changes a notebook or a kernel */
#define PROTO_F_RETRY		0x04	/* safe to resend after a restart */
#define PROTO_F_EVENT		0x08	/* unsolicited, id 0 */
#define PROTO_F_HANDSHAKE	0x10	/* may come before the handshake ends */
#define PROTO_F_ANY_VERSION	0x20	/* any version byte (to answer it) */

/*
 * unpack is the type's codec, reading a body into its struct (void * so
 * one column holds them all); NULL for a type with no body to read.
 * Receivers unpack through it (proto_msg_unpack), the fuzz target runs
 * every one.  A struct fits in PROTO_BODY_MAX bytes (checked at build).
 */
#define PROTO_BODY_MAX		512
typedef int (*proto_unpack_cb)(const msgpack_object *, void *, char *,
    size_t);
struct proto_msg_info {
	uint16_t	 type;
	const char	*name;
	uint32_t	 cap;		/* largest body, checked first */
	u_int		 from;		/* PROTO_FROM_* */
	uint16_t	 reply;
	u_int		 flags;		/* PROTO_F_* */
	proto_unpack_cb	 unpack;
};
const struct proto_msg_info *proto_msg_info(uint16_t);
const struct proto_msg_info *proto_msg_row(size_t);
uint16_t	 proto_msg_reply(uint16_t);
int		 proto_msg_unpack(uint16_t, const msgpack_object *, void *,
		     char *, size_t);
const char	*proto_msg_name(uint16_t);
uint32_t	 proto_msg_cap(uint16_t);
int		 proto_msg_has(uint16_t, u_int);
int		 proto_msg_from(uint16_t, u_int);

/* proto-frame.c */
void		 proto_header_pack(const struct proto_header *, uint8_t *);
void		 proto_header_make(uint8_t *, uint16_t, uint32_t, uint32_t);
void		 proto_header_unpack(const uint8_t *, struct proto_header *);
int		 proto_frame_check(const struct proto_header *, char *, size_t);
int		 proto_frame_sane(const uint8_t *, size_t);
int		 proto_frame_unpack(msgpack_unpacked *, const void *, size_t,
		     size_t *);
int		 proto_frame_check_hello(const struct proto_header *, char *,
		     size_t);
int		 proto_frame_decode(const uint8_t *, size_t, struct proto_header *,
		     msgpack_unpacked *, size_t *, char *, size_t);

#include "proto-body.h"

#endif
