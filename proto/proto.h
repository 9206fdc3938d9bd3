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

enum proto_msg {
	/* 1-99: every connection. */
	PROTO_MSG_HELLO = 1,		/* first frame on every connection */
	PROTO_MSG_HELLO_OK = 2,		/* answer: incarnation and version */
	PROTO_MSG_VERSION_MISMATCH = 3,	/* answer, then the peer is closed */
	PROTO_MSG_OK = 4,		/* generic success reply */
	PROTO_MSG_ERROR = 5,		/* generic failure reply {code,message} */
	PROTO_MSG_PING = 6,
	PROTO_MSG_PONG = 7,

	/* 100-199: clients (workers, runtimed status/stop) <-> daemon. */
	PROTO_MSG_DAEMON_STATUS = 100,
	PROTO_MSG_DAEMON_STATUS_REPLY = 101,
	PROTO_MSG_DAEMON_STOP = 102,
	PROTO_MSG_ROOM_LIST = 110,
	PROTO_MSG_ROOM_LIST_REPLY = 111,
	PROTO_MSG_ROOM_CREATE = 112,
	PROTO_MSG_ROOM_JOINED = 113,
	PROTO_MSG_ROOM_OPEN = 114,
	PROTO_MSG_ROOM_LEAVE = 116,
	PROTO_MSG_ROOM_GET = 120,
	PROTO_MSG_ROOM_CONTENT = 121,
	PROTO_MSG_ROOM_EDIT = 122,
	PROTO_MSG_ROOM_EDIT_REPLY = 123,
	PROTO_MSG_ROOM_SAVE = 124,
	PROTO_MSG_ROOM_SAVE_REPLY = 125,
	PROTO_MSG_ROOM_CHANGED = 126,	/* event to the room's peers */
	PROTO_MSG_ROOM_CHANGES = 127,
	PROTO_MSG_ROOM_CHANGES_REPLY = 128,
	PROTO_MSG_EXEC_RUN = 130,
	PROTO_MSG_EXEC_STATE = 131,
	PROTO_MSG_EXEC_GET = 132,
	PROTO_MSG_EXEC_CANCEL = 133,	/* one run, as an MCP task */
	PROTO_MSG_KERNEL_INTERRUPT = 134,
	PROTO_MSG_KERNEL_RESTART = 135,
	PROTO_MSG_KERNEL_INFO = 136,
	PROTO_MSG_KERNEL_INFO_REPLY = 137,
	PROTO_MSG_KERNEL_LIST = 138,
	PROTO_MSG_KERNEL_LIST_REPLY = 139,
	PROTO_MSG_KERNEL_SELECT = 140,
	PROTO_MSG_BLOB_GET = 141,
	PROTO_MSG_BLOB_REPLY = 142,
	/* EXEC_LIST's reply is numbered below it (numbers never change). */
	PROTO_MSG_EXEC_LIST_REPLY = 143,
	PROTO_MSG_EXEC_LIST = 144,
	PROTO_MSG_EXEC_TASKS = 150,	/* room-less: one owner's task runs */
	PROTO_MSG_EXEC_TASKS_REPLY = 151,
	/* A look inside the kernel without a cell; stdin (decision 022). */
	PROTO_MSG_KERNEL_VARIABLES = 170,
	PROTO_MSG_KERNEL_VARIABLES_REPLY = 171,	/* from the agent too */
	PROTO_MSG_KERNEL_COMPLETE = 172,
	PROTO_MSG_KERNEL_COMPLETE_REPLY = 173,	/* from the agent too */
	PROTO_MSG_KERNEL_INSPECT = 174,
	PROTO_MSG_KERNEL_INSPECT_REPLY = 175,	/* from the agent too */
	PROTO_MSG_EXEC_INPUT = 176,
	/* 180-189: the live view (runtimed-web). */
	PROTO_MSG_VIEW_OPEN = 180,	/* start the view, answer its URL */
	PROTO_MSG_VIEW_URL = 181,
	PROTO_MSG_VIEW_READY = 182,	/* runtimed-web: listening on port */
	PROTO_MSG_VIEW_STATE = 183,	/* runs, peers, last changer */
	PROTO_MSG_VIEW_STATE_REPLY = 184,
	/* 195-199: change waits served without a round trip (decision 031). */
	PROTO_MSG_ROOM_WAIT = 195,	/* next change of kinds: with content */
	PROTO_MSG_ROOM_CHANGED_CONTENT = 196,	/* ROOM_CHANGED + content */

	/* 200-299: daemon <-> runtime agent. */
	PROTO_MSG_AGENT_START = 200,
	PROTO_MSG_AGENT_READY = 201,
	PROTO_MSG_AGENT_EXECUTE = 202,
	PROTO_MSG_AGENT_OUTPUT = 203,
	PROTO_MSG_AGENT_EXEC_DONE = 204,
	PROTO_MSG_AGENT_EXEC_STARTED = 205,
	PROTO_MSG_AGENT_INTERRUPT = 206,
	PROTO_MSG_AGENT_SHUTDOWN = 207,
	PROTO_MSG_AGENT_STATUS = 208,
	PROTO_MSG_AGENT_CLEAR_OUTPUT = 209,
	PROTO_MSG_AGENT_VARIABLES = 220,	/* -> KERNEL_VARIABLES_REPLY */
	PROTO_MSG_AGENT_COMPLETE = 221,		/* -> KERNEL_COMPLETE_REPLY */
	PROTO_MSG_AGENT_INSPECT = 222,		/* -> KERNEL_INSPECT_REPLY */
	PROTO_MSG_AGENT_INPUT_REQUEST = 223,	/* event */
	PROTO_MSG_AGENT_INPUT_REPLY = 224,	/* -> OK */

	/* 300-399: proxy <-> worker. */
	PROTO_MSG_MCP = 300,		/* one JSON-RPC message, unchanged */
	PROTO_MSG_WORKER_READY = 301,
	PROTO_MSG_WORKER_UPGRADE = 302,
	PROTO_MSG_WORKER_SHUTDOWN = 303,
};

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
