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
 * describes every message in prose.
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
	PROTO_MSG_EXEC_LIST = 144,
	PROTO_MSG_KERNEL_INTERRUPT = 134,
	PROTO_MSG_KERNEL_RESTART = 135,
	PROTO_MSG_KERNEL_INFO = 136,
	PROTO_MSG_KERNEL_INFO_REPLY = 137,
	PROTO_MSG_KERNEL_LIST = 138,
	PROTO_MSG_KERNEL_LIST_REPLY = 139,
	PROTO_MSG_KERNEL_SELECT = 140,
	PROTO_MSG_BLOB_GET = 141,
	PROTO_MSG_BLOB_REPLY = 142,
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
	PROTO_MSG_EXEC_LIST_REPLY = 143,
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

/* proto-pack.c: building bodies. */
void	proto_pack_key(msgpack_packer *, const char *);
void	proto_pack_str(msgpack_packer *, const char *, const char *);
void	proto_pack_strn(msgpack_packer *, const char *, const char *, size_t);
void	proto_pack_int(msgpack_packer *, const char *, int64_t);
void	proto_pack_uint(msgpack_packer *, const char *, uint64_t);
void	proto_pack_bool(msgpack_packer *, const char *, int);
void	proto_pack_nil(msgpack_packer *, const char *);
void	proto_pack_cstr(msgpack_packer *, const char *);

/* proto-pack.c: a document inside a typed body. */

/* proto-pack.c: reading bodies.  Getters return NULL/-1 when absent or
 * of the wrong type, so callers can reject a bad peer in one place. */
const msgpack_object	*proto_get(const msgpack_object *, const char *);
const char		*proto_get_str(const msgpack_object *, const char *,
			     size_t *);
char			*proto_dup_str(const msgpack_object *, const char *);
int			 proto_get_int(const msgpack_object *, const char *,
			     int64_t *);
int			 proto_get_bool(const msgpack_object *, const char *,
			     int *);
const msgpack_object	*proto_get_map(const msgpack_object *, const char *);
const msgpack_object	*proto_get_array(const msgpack_object *,
			     const char *);
int			 proto_obj_streq(const msgpack_object *, const char *);

/*
 * proto-field.c: what codecs are made of (docs/decisions/014).  For a
 * message X, struct proto_X holds its fields; proto_X_pack writes it and
 * proto_X_unpack reads it, returning -1 with "X: field is not a string"
 * when a field is missing or mistyped.  Unpacking borrows from the
 * received frame and allocates nothing; unknown keys are ignored.
 */
struct proto_str {
	const char	*ptr;		/* not NUL-terminated; NULL: absent */
	size_t		 len;
};

/* A document (cells, outputs, metadata, edits) the codec does not type:
 * unpacked, obj; packed, pack(pk, arg) if set, else obj copied. */
typedef void (*proto_doc_cb)(msgpack_packer *, const void *);
struct proto_doc {
	const msgpack_object	*obj;
	proto_doc_cb		 pack;
	const void		*arg;
};

#define PROTO_REQ	0x01	/* the field must be there (nil is not) */
#define PROTO_NONUL	0x02	/* a string without NUL */
#define PROTO_UNSIGNED	0x04	/* an integer >= 0 */
#define PROTO_MAP	0x08	/* a document that is a map */
#define PROTO_ARRAY	0x10	/* a document that is an array */

/* In a codec: give up on the first field that is wrong (err says why). */
#define PROTO_TRY(x) do {						\
	if ((x) != 0)							\
		return (-1);						\
} while (0)

int	proto_field_body(const msgpack_object *, const char *, char *,
	    size_t);
int	proto_field_str(const msgpack_object *, const char *, const char *,
	    int, struct proto_str *, char *, size_t);
int	proto_field_int(const msgpack_object *, const char *, const char *,
	    int, int64_t *, int *, char *, size_t);
int	proto_field_uint(const msgpack_object *, const char *, const char *,
	    int, uint64_t *, int *, char *, size_t);
int	proto_field_bool(const msgpack_object *, const char *, const char *,
	    int, int *, int *, char *, size_t);
int	proto_field_doc(const msgpack_object *, const char *, const char *,
	    int, struct proto_doc *, char *, size_t);
void	proto_pack_pstr(msgpack_packer *, const char *,
	    const struct proto_str *);
void	proto_pack_doc(msgpack_packer *, const char *,
	    const struct proto_doc *);
void	proto_doc_pack(msgpack_packer *, const struct proto_doc *);
int	proto_doc_present(const struct proto_doc *);
struct proto_str proto_str_make(const char *);
char	*proto_str_dup(const struct proto_str *);
int	 proto_str_eq(const struct proto_str *, const char *);

/* proto-daemon.c: OK, ERROR, PING, PONG, DAEMON_*. */
struct proto_error {
	struct proto_str	 code;
	struct proto_str	 message;
	struct proto_str	 reason;	/* "too_large" or absent */
	int			 has_bytes;
	uint64_t		 bytes;
	int			 has_cap;
	uint64_t		 cap;
	int			 has_index;	/* the failing edit */
	int64_t			 index;
	/* edit_conflict: the cell as it is (source capped); else absent. */
	struct proto_str	 cell_id;
	struct proto_str	 version;
	struct proto_str	 source;
};
struct proto_daemon_status_reply {
	int64_t			 pid;
	int64_t			 started_at;
	struct proto_str	 version;
	uint64_t		 rooms;
	uint64_t		 peers;
	uint64_t		 kernels;
	int			 has_fds;
	uint64_t		 fds_open;
	uint64_t		 fds_limit;
	uint64_t		 peers_room;
	struct proto_doc	 warnings;	/* [string] */
	/* Added with runtimectl; has_detail when all are there. */
	int			 has_detail;
	uint64_t		 agents;	/* agent links, pooled too */
	uint64_t		 pool_size;
	uint64_t		 pool_ready;
	struct proto_str	 state_dir;
	struct proto_str	 store_damage;	/* nil: none found */
	struct proto_str	 store_write_error; /* nil: writes work */
	struct proto_doc	 kernel_list;	/* [kernel summary] */
	struct proto_str	 view;		/* the live view's address */
};
void	proto_empty_pack(msgpack_packer *);
void	proto_error_pack(msgpack_packer *, const struct proto_error *);
int	proto_error_unpack(const msgpack_object *, struct proto_error *,
	    char *, size_t);
void	proto_daemon_status_reply_pack(msgpack_packer *,
	    const struct proto_daemon_status_reply *);
int	proto_daemon_status_reply_unpack(const msgpack_object *,
	    struct proto_daemon_status_reply *, char *, size_t);

/* proto-room.c: ROOM_*, BLOB_*. */
struct proto_room_create {
	struct proto_str	 path;		/* absent: untitled */
	struct proto_str	 kernel;
	struct proto_str	 domain;	/* absent or "local": here */
};
struct proto_room_open {
	struct proto_str	 path;		/* exactly one of the two */
	struct proto_str	 notebook_id;
	struct proto_str	 domain;	/* with path: on that server */
};
/* ROOM_JOINED and ROOM_CONTENT (only it carries metadata). */
struct proto_room_joined {
	struct proto_str	 notebook_id;
	struct proto_str	 path;		/* absent: untitled */
	int			 dirty;
	uint64_t		 seq;
	int64_t			 nbformat;
	int64_t			 nbformat_minor;
	struct proto_str	 kernel_name;
	struct proto_str	 kernel_state;
	struct proto_doc	 metadata;
	struct proto_doc	 warnings;	/* [warning] or absent */
	struct proto_doc	 conflicts;	/* [conflict] or absent */
	struct proto_doc	 active;	/* [{cell_id, status}] or absent */
	struct proto_doc	 cells;		/* [cell] */
};
struct proto_room_list_reply {
	struct proto_doc	 warnings;	/* [string] */
	struct proto_doc	 rooms;		/* [room summary] */
};
struct proto_room_edit {
	struct proto_doc	 edits;		/* [edit], read by the daemon */
	int			 has_if_seq;
	uint64_t		 if_seq;
};
struct proto_room_edit_reply {
	uint64_t		 seq;
	struct proto_doc	 cells;		/* [{cell_id}] */
};
struct proto_room_save {
	struct proto_str	 path;
	int			 force;
};
struct proto_room_save_reply {
	struct proto_str	 path;
	uint64_t		 seq;
};
/*
 * What a change changed (kinds of ROOM_CHANGED and of every change
 * ROOM_CHANGES_REPLY lists), as bits; proto_change_kind_name names them
 * for both ends.
 */
#define PROTO_KIND_CELLS	0x01
#define PROTO_KIND_OUTPUTS	0x02
#define PROTO_KIND_KERNEL	0x04
#define PROTO_KIND_SAVED	0x08
#define PROTO_KIND_METADATA	0x10
#define PROTO_KIND_RELOADED	0x20
#define PROTO_KIND_ALL		0x3f

/*
 * How one cell (or the kernel) changed: the details of a change, so a
 * reader can say "cell abc: source edited" without reading the notebook.
 * Fields: inserted and moved carry index (the cell's place after the
 * change), outputs carries outputs (how many the cell has now) and line
 * (the last line of its last output, at most PROTO_CHANGE_LINE_MAX
 * characters), kernel carries from (when known) and to.  A change lists
 * at most PROTO_CHANGE_MAX_DETAILS (then details_truncated; cell_ids
 * still names every cell).
 */
enum proto_change_how {
	PROTO_CHANGE_INSERTED,
	PROTO_CHANGE_DELETED,
	PROTO_CHANGE_MOVED,
	PROTO_CHANGE_SOURCE,
	PROTO_CHANGE_TYPE,
	PROTO_CHANGE_METADATA,
	PROTO_CHANGE_OUTPUTS,
	PROTO_CHANGE_CLEARED,
	PROTO_CHANGE_KERNEL,
	PROTO_CHANGE_CONFLICT,	/* a merge from disk left a conflict */
	PROTO_CHANGE_RESOLVED,	/* a conflict was resolved */
};
#define PROTO_CHANGE_LINE_MAX		120
#define PROTO_CHANGE_MAX_DETAILS	1000
struct proto_change_detail {
	enum proto_change_how	 how;
	struct proto_str	 cell_id;	/* absent for kernel */
	int			 has_index;
	int64_t			 index;
	int			 has_outputs;
	int64_t			 outputs;
	struct proto_str	 line;
	struct proto_str	 from;
	struct proto_str	 to;
};
/* One change: ROOM_CHANGED's body (with notebook_id), or an entry of
 * ROOM_CHANGES_REPLY's changes. */
struct proto_room_changed {
	struct proto_str	 notebook_id;
	uint64_t		 seq;
	struct proto_doc	 kinds;		/* [string] */
	struct proto_doc	 cell_ids;	/* [string] */
	struct proto_doc	 execution_ids;	/* [string] */
	struct proto_doc	 details;	/* [detail]; absent: none */
	int			 details_truncated;
	struct proto_str	 by;		/* "disk": merged from the file */
	int			 has_at;
	int64_t			 at;		/* the file's mtime, ms */
};
struct proto_room_changes {
	uint64_t		 after;
};
struct proto_room_changes_reply {
	uint64_t		 seq;
	int			 resync;
	struct proto_doc	 changes;	/* [{seq, kinds, ...}] */
};
/*
 * ROOM_WAIT: the next change of these kinds comes with the content;
 * standing: every one does, until the next ROOM_WAIT; runs: held cells
 * may come as runs (docs/decisions/041).
 */
struct proto_room_wait {
	int			 kinds;		/* PROTO_KIND_*; 0: none */
	int			 has_have;
	uint64_t		 have;		/* the content held, by seq */
	int			 standing;
	int			 runs;
};
/*
 * A run of held cells [count, cell_id, digest] in a content by reference
 * (docs/decisions/041): digest folds each cell's hash (FNV-1a 64 of its
 * version, then of a NUL and each stale name) in order, from
 * PROTO_FNV64_INIT: d = (d ^ hash) * the FNV prime, mod 2^64.
 */
#define PROTO_FNV64_INIT	0xcbf29ce484222325ULL
/* ROOM_CHANGED_CONTENT: a change and the room's content just after it. */
struct proto_room_changed_content {
	struct proto_room_changed change;
	struct proto_doc	 content;	/* a ROOM_CONTENT body */
	int			 has_base;	/* cells by reference to: */
	uint64_t		 base;		/* the content at this seq */
};
struct proto_blob_get {
	struct proto_str	 sha256;
};
struct proto_blob_reply {
	struct proto_str	 sha256;
	struct proto_str	 data;
};
void	proto_room_create_pack(msgpack_packer *,
	    const struct proto_room_create *);
int	proto_room_create_unpack(const msgpack_object *,
	    struct proto_room_create *, char *, size_t);
void	proto_room_open_pack(msgpack_packer *, const struct proto_room_open *);
int	proto_room_open_unpack(const msgpack_object *,
	    struct proto_room_open *, char *, size_t);
void	proto_room_joined_pack(msgpack_packer *,
	    const struct proto_room_joined *);
int	proto_room_joined_unpack(const msgpack_object *,
	    struct proto_room_joined *, char *, size_t);
void	proto_room_content_pack(msgpack_packer *,
	    const struct proto_room_joined *);
int	proto_room_content_unpack(const msgpack_object *,
	    struct proto_room_joined *, char *, size_t);
void	proto_room_list_reply_pack(msgpack_packer *,
	    const struct proto_room_list_reply *);
int	proto_room_list_reply_unpack(const msgpack_object *,
	    struct proto_room_list_reply *, char *, size_t);
void	proto_room_edit_pack(msgpack_packer *, const struct proto_room_edit *);
int	proto_room_edit_unpack(const msgpack_object *,
	    struct proto_room_edit *, char *, size_t);
void	proto_room_edit_reply_pack(msgpack_packer *,
	    const struct proto_room_edit_reply *);
int	proto_room_edit_reply_unpack(const msgpack_object *,
	    struct proto_room_edit_reply *, char *, size_t);
void	proto_room_save_pack(msgpack_packer *, const struct proto_room_save *);
int	proto_room_save_unpack(const msgpack_object *,
	    struct proto_room_save *, char *, size_t);
void	proto_room_save_reply_pack(msgpack_packer *,
	    const struct proto_room_save_reply *);
int	proto_room_save_reply_unpack(const msgpack_object *,
	    struct proto_room_save_reply *, char *, size_t);
void	proto_room_changed_pack(msgpack_packer *,
	    const struct proto_room_changed *);
int	proto_room_changed_unpack(const msgpack_object *,
	    struct proto_room_changed *, char *, size_t);
int	proto_room_change_unpack(const msgpack_object *,
	    struct proto_room_changed *, char *, size_t);
int	proto_room_change_kinds(const struct proto_room_changed *);
void	proto_change_detail_pack(msgpack_packer *,
	    const struct proto_change_detail *);
int	proto_change_detail_unpack(const msgpack_object *,
	    struct proto_change_detail *, char *, size_t);
const char *proto_change_how_name(enum proto_change_how);
const char *proto_change_kind_name(int);
int	proto_change_kind_parse(const char *, size_t);
void	proto_room_changes_pack(msgpack_packer *,
	    const struct proto_room_changes *);
int	proto_room_changes_unpack(const msgpack_object *,
	    struct proto_room_changes *, char *, size_t);
void	proto_room_changes_reply_pack(msgpack_packer *,
	    const struct proto_room_changes_reply *);
int	proto_room_changes_reply_unpack(const msgpack_object *,
	    struct proto_room_changes_reply *, char *, size_t);
void	proto_room_wait_pack(msgpack_packer *, const struct proto_room_wait *);
int	proto_room_wait_unpack(const msgpack_object *,
	    struct proto_room_wait *, char *, size_t);
void	proto_room_changed_content_pack(msgpack_packer *,
	    const struct proto_room_changed_content *);
uint64_t proto_fnv64(uint64_t, const void *, size_t);
uint64_t proto_run_fold(uint64_t, uint64_t);
int	proto_room_changed_content_unpack(const msgpack_object *,
	    struct proto_room_changed_content *, char *, size_t);
void	proto_blob_get_pack(msgpack_packer *, const struct proto_blob_get *);
int	proto_blob_get_unpack(const msgpack_object *, struct proto_blob_get *,
	    char *, size_t);
void	proto_blob_reply_pack(msgpack_packer *,
	    const struct proto_blob_reply *);
int	proto_blob_reply_unpack(const msgpack_object *,
	    struct proto_blob_reply *, char *, size_t);

/* proto-exec.c: EXEC_*, KERNEL_*. */
/* EXEC_STATE's status of a run and of each of its cells (proto-status.c). */
enum proto_run_status {
	PROTO_RUN_QUEUED,
	PROTO_RUN_RUNNING,
	PROTO_RUN_DONE,
	PROTO_RUN_ERROR,
	PROTO_RUN_INTERRUPTED,
	PROTO_RUN_KERNEL_DIED,
	PROTO_RUN_CANCELLED,
	PROTO_RUN_INPUT_REQUIRED,	/* running, waiting for send_input */
};
enum proto_cell_status {
	PROTO_CELL_QUEUED,
	PROTO_CELL_RUNNING,
	PROTO_CELL_OK,
	PROTO_CELL_ERROR,
	PROTO_CELL_NOT_RUN,
	PROTO_CELL_INTERRUPTED,
	PROTO_CELL_KERNEL_DIED,
};
/*
 * Who asked for a run: the MCP client (clientInfo of its initialize) and
 * the worker's session (its proxy's handle tag).  Each is optional (a
 * client that sent none, runtimectl, an older worker).
 */
struct proto_exec_who {
	struct proto_str	 client_name;
	struct proto_str	 client_version;
	struct proto_str	 session;
};
struct proto_exec_run {
	struct proto_doc	 cell_ids;	/* [cell_id | index] */
	int			 has_stop_on_error;
	int			 stop_on_error;
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
	struct proto_str	 task_owner;	/* an MCP task's session */
	struct proto_exec_who	 who;
};
/* EXEC_GET and EXEC_CANCEL: a run, and how long to wait for it. */
struct proto_exec_id {
	struct proto_str	 execution_id;
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
struct proto_exec_state {
	struct proto_str	 execution_id;
	int64_t			 daemon_started_at;
	struct proto_str	 notebook_id;
	struct proto_str	 status;
	struct proto_str	 message;	/* packed as nil when absent */
	struct proto_str	 reason;
	int			 outputs_omitted;
	struct proto_doc	 input;		/* {cell_id, prompt, password} */
	struct proto_doc	 cells;		/* [{cell_id, status, ...}] */
	struct proto_str	 task_owner;	/* absent: not a task */
	int64_t			 created_at;	/* ms since the epoch; 0: */
	int64_t			 updated_at;	/* unknown (older record) */
	/* Absent from records of older daemons. */
	struct proto_exec_who	 who;
	int			 has_submitted_at;
	int64_t			 submitted_at;	/* microseconds, epoch */
	struct proto_str	 kernel_session; /* the kernel it ran in */
};
struct proto_exec_tasks {
	struct proto_str	 task_owner;
};
/*
 * EXEC_TASKS_REPLY: [{execution_id, notebook_id, status, message,
 * created_at, updated_at}]; EXEC_LIST_REPLY: [{execution_id, status, ...}];
 * both newest first.
 */
struct proto_exec_runs {
	struct proto_doc	 runs;
};
/* EXEC_LIST: the notebook's kept runs, newest first, at most limit. */
#define PROTO_EXEC_LIST_MAX	20
struct proto_exec_list {
	int			 has_limit;
	int64_t			 limit;
};
struct proto_kernel_info_reply {
	struct proto_str	 name;
	struct proto_str	 state;
	struct proto_str	 display_name;
	struct proto_str	 message;
	int			 has_pid;
	int64_t			 pid;
	int			 has_agent_pid;
	int64_t			 agent_pid;
	struct proto_doc	 language_info;
	int64_t			 execution_count;
	uint64_t		 queue;
	struct proto_doc	 capabilities;	/* a map, or absent */
};
struct proto_kernel_list_reply {
	struct proto_str	 default_name;	/* "default" */
	struct proto_doc	 kernels;	/* [{name, ...}] */
};
struct proto_kernel_select {
	struct proto_str	 kernel;
};
void	proto_exec_run_pack(msgpack_packer *, const struct proto_exec_run *);
int	proto_exec_run_unpack(const msgpack_object *, struct proto_exec_run *,
	    char *, size_t);
void	proto_exec_id_pack(msgpack_packer *, const struct proto_exec_id *);
int	proto_exec_id_unpack(const msgpack_object *, const char *,
	    struct proto_exec_id *, char *, size_t);
void	proto_exec_state_pack(msgpack_packer *,
	    const struct proto_exec_state *);
int	proto_exec_state_unpack(const msgpack_object *,
	    struct proto_exec_state *, char *, size_t);
void	proto_exec_tasks_pack(msgpack_packer *,
	    const struct proto_exec_tasks *);
int	proto_exec_tasks_unpack(const msgpack_object *,
	    struct proto_exec_tasks *, char *, size_t);
void	proto_exec_runs_pack(msgpack_packer *, const struct proto_exec_runs *);
int	proto_exec_runs_unpack(const msgpack_object *, const char *,
	    struct proto_exec_runs *, char *, size_t);
void	proto_exec_list_pack(msgpack_packer *, const struct proto_exec_list *);
int	proto_exec_list_unpack(const msgpack_object *,
	    struct proto_exec_list *, char *, size_t);

/* proto-status.c */
const char *proto_run_status_name(enum proto_run_status);
int	proto_run_status_parse(const char *, size_t, enum proto_run_status *);
int	proto_run_status_ended(enum proto_run_status);
const char *proto_cell_status_name(enum proto_cell_status);
int	proto_cell_status_parse(const char *, size_t,
	    enum proto_cell_status *);
void	proto_kernel_info_reply_pack(msgpack_packer *,
	    const struct proto_kernel_info_reply *);
int	proto_kernel_info_reply_unpack(const msgpack_object *,
	    struct proto_kernel_info_reply *, char *, size_t);
void	proto_kernel_list_reply_pack(msgpack_packer *,
	    const struct proto_kernel_list_reply *);
int	proto_kernel_list_reply_unpack(const msgpack_object *,
	    struct proto_kernel_list_reply *, char *, size_t);
void	proto_kernel_select_pack(msgpack_packer *,
	    const struct proto_kernel_select *);
int	proto_kernel_select_unpack(const msgpack_object *,
	    struct proto_kernel_select *, char *, size_t);

/* proto-view.c: the live view (docs/decisions/025). */
struct proto_view_open {
	struct proto_str	 notebook_id;	/* optional: the page to open */
};
struct proto_view_url {
	struct proto_str	 url;		/* with the secret */
	struct proto_str	 address;	/* http://127.0.0.1:PORT/ */
	int64_t			 port;
};
struct proto_view_ready {
	int64_t			 port;
};
struct proto_view_state_reply {
	uint64_t		 seq;
	struct proto_str	 kernel_state;
	struct proto_doc	 cells;	/* [{cell_id, status}] queued, running */
	struct proto_doc	 peers;	/* [{kind, label, client}] */
	struct proto_str	 last_client;	/* nil: none known */
};
void	proto_view_open_pack(msgpack_packer *, const struct proto_view_open *);
int	proto_view_open_unpack(const msgpack_object *,
	    struct proto_view_open *, char *, size_t);
void	proto_view_url_pack(msgpack_packer *, const struct proto_view_url *);
int	proto_view_url_unpack(const msgpack_object *, struct proto_view_url *,
	    char *, size_t);
void	proto_view_ready_pack(msgpack_packer *,
	    const struct proto_view_ready *);
int	proto_view_ready_unpack(const msgpack_object *,
	    struct proto_view_ready *, char *, size_t);
void	proto_view_state_reply_pack(msgpack_packer *,
	    const struct proto_view_state_reply *);
int	proto_view_state_reply_unpack(const msgpack_object *,
	    struct proto_view_state_reply *, char *, size_t);

/* proto-hello.c: the handshake every connection opens with. */
struct proto_hello {
	int		 version;
	char		 kind[16];
	char		 label[128];
	int64_t		 pid;
	char		 client[128];	/* MCP clientInfo name, or "" */
};
struct proto_incarnation {
	int64_t		 pid;
	int64_t		 started_at;	/* microseconds since the epoch */
	char		 version[32];	/* package version string */
};
void	proto_hello_pack(msgpack_packer *, const struct proto_hello *);
int	proto_hello_unpack(const msgpack_object *, struct proto_hello *,
	    char *, size_t);
void	proto_hello_ok_pack(msgpack_packer *,
	    const struct proto_incarnation *);
int	proto_hello_ok_unpack(const msgpack_object *,
	    struct proto_incarnation *, char *, size_t);
void	proto_mismatch_pack(msgpack_packer *, int);
int	proto_hello_check(const struct proto_hello *, char *, size_t);

/* proto-agent.c: daemon <-> runtime agent (200-299), PROTOCOL.md. */
struct proto_agent_start {
	struct proto_str	 kernel_id;
	struct proto_str	 kernel_name;
	struct proto_str	 cwd;
	struct proto_str	 runtime_dir;
	struct proto_str	 state_dir;	/* optional */
};
struct proto_agent_ready {
	int64_t			 pid;
	struct proto_str	 kernel_name;
	struct proto_str	 display_name;	/* optional */
	struct proto_str	 language;	/* optional */
	struct proto_doc	 language_info;	/* a map; optional */
	struct proto_str	 protocol_version; /* optional */
	struct proto_doc	 capabilities;	/* a map; optional */
	struct proto_str	 server_kernel_id; /* a server's; optional */
};
struct proto_agent_execute {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	struct proto_str	 code;		/* may hold NUL */
	int			 stop_on_error;
	int			 silent;
};
struct proto_agent_exec_started {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	int			 has_execution_count;
	int64_t			 execution_count;
};
struct proto_agent_output {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	int			 update;
	struct proto_str	 display_id;	/* required with update */
	struct proto_doc	 output;	/* one nbformat output, a map */
};
struct proto_agent_clear_output {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	int			 wait;
};
enum proto_agent_exec_status {
	PROTO_AGENT_EXEC_OK,
	PROTO_AGENT_EXEC_ERROR,
	PROTO_AGENT_EXEC_ABORTED,
};
struct proto_agent_exec_done {
	struct proto_str		 exec_id;
	struct proto_str		 cell_id;
	enum proto_agent_exec_status	 status;
	int				 has_execution_count;
	int64_t				 execution_count;
};
struct proto_agent_shutdown {
	int			 restart;
};
enum proto_agent_state {
	PROTO_AGENT_IDLE,
	PROTO_AGENT_BUSY,
	PROTO_AGENT_UNRESPONSIVE,
	PROTO_AGENT_DEAD,
};
struct proto_agent_status {
	enum proto_agent_state	 state;
	struct proto_str	 reason;	/* optional */
};
void	proto_agent_start_pack(msgpack_packer *,
	    const struct proto_agent_start *);
int	proto_agent_start_unpack(const msgpack_object *,
	    struct proto_agent_start *, char *, size_t);
void	proto_agent_ready_pack(msgpack_packer *,
	    const struct proto_agent_ready *);
int	proto_agent_ready_unpack(const msgpack_object *,
	    struct proto_agent_ready *, char *, size_t);
void	proto_agent_execute_pack(msgpack_packer *,
	    const struct proto_agent_execute *);
int	proto_agent_execute_unpack(const msgpack_object *,
	    struct proto_agent_execute *, char *, size_t);
void	proto_agent_exec_started_pack(msgpack_packer *,
	    const struct proto_agent_exec_started *);
int	proto_agent_exec_started_unpack(const msgpack_object *,
	    struct proto_agent_exec_started *, char *, size_t);
void	proto_agent_output_pack(msgpack_packer *,
	    const struct proto_agent_output *);
int	proto_agent_output_unpack(const msgpack_object *,
	    struct proto_agent_output *, char *, size_t);
void	proto_agent_clear_output_pack(msgpack_packer *,
	    const struct proto_agent_clear_output *);
int	proto_agent_clear_output_unpack(const msgpack_object *,
	    struct proto_agent_clear_output *, char *, size_t);
void	proto_agent_exec_done_pack(msgpack_packer *,
	    const struct proto_agent_exec_done *);
int	proto_agent_exec_done_unpack(const msgpack_object *,
	    struct proto_agent_exec_done *, char *, size_t);
void	proto_agent_interrupt_pack(msgpack_packer *);
int	proto_agent_interrupt_unpack(const msgpack_object *, char *, size_t);
void	proto_agent_shutdown_pack(msgpack_packer *,
	    const struct proto_agent_shutdown *);
int	proto_agent_shutdown_unpack(const msgpack_object *,
	    struct proto_agent_shutdown *, char *, size_t);
void	proto_agent_status_pack(msgpack_packer *,
	    const struct proto_agent_status *);
int	proto_agent_status_unpack(const msgpack_object *,
	    struct proto_agent_status *, char *, size_t);

/*
 * proto-introspect.c: KERNEL_VARIABLES, _COMPLETE, _INSPECT (a client
 * asks the daemon, the daemon asks the agent with AGENT_*, and one reply
 * type serves both links), EXEC_INPUT and the agent's stdin messages
 * (docs/decisions/022).
 */
#define PROTO_VARIABLES_MAX	1000	/* variables a reply lists */
#define PROTO_VARIABLES_DEFAULT	100
#define PROTO_REPR_MAX		200	/* code points of a repr */
#define PROTO_COMPLETE_MAX	200	/* matches a reply lists */
#define PROTO_INSPECT_MAX	8000	/* code points of inspect text */
#define PROTO_INPUT_MAX		(64U * 1024)	/* bytes of an answer */
#define PROTO_PROMPT_MAX	(8U * 1024)	/* bytes of a prompt kept */
#define PROTO_FILTER_MAX	1024		/* bytes of a name pattern */
#define PROTO_CODE_MAX		(1020U * 1024)	/* bytes of code to complete */
struct proto_variables {		/* KERNEL_ and AGENT_VARIABLES */
	struct proto_str	 filter;	/* fnmatch(3) pattern */
	int			 has_max;
	uint64_t		 max;
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
struct proto_variables_reply {
	struct proto_doc	 variables;	/* [{name, type, repr, ...}] */
	uint64_t		 total;		/* matching, before max */
	int			 while_busy;
	struct proto_str	 via;		/* "debugger" or "execute" */
};
struct proto_complete {			/* KERNEL_ and AGENT_COMPLETE */
	struct proto_str	 code;
	int			 has_cursor_pos;
	int64_t			 cursor_pos;	/* code points; absent: end */
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
struct proto_complete_reply {
	struct proto_doc	 matches;	/* [{text, type?}] */
	int64_t			 cursor_start;
	int64_t			 cursor_end;
	uint64_t		 total;
	int			 while_busy;
};
struct proto_inspect {			/* KERNEL_ and AGENT_INSPECT */
	struct proto_str	 code;
	int			 has_cursor_pos;
	int64_t			 cursor_pos;
	int64_t			 detail_level;	/* 0 or 1 */
	int			 has_timeout_ms;
	int64_t			 timeout_ms;
};
struct proto_inspect_reply {
	int			 found;
	struct proto_str	 text;		/* plain, ANSI removed, capped */
	int			 truncated;
	int			 while_busy;
};
struct proto_exec_input {		/* EXEC_INPUT, AGENT_INPUT_REPLY */
	struct proto_str	 execution_id;
	struct proto_str	 value;
};
struct proto_agent_input_request {
	struct proto_str	 exec_id;
	struct proto_str	 cell_id;
	struct proto_str	 prompt;
	int			 password;
};
void	proto_variables_pack(msgpack_packer *,
	    const struct proto_variables *);
int	proto_variables_unpack(const msgpack_object *,
	    struct proto_variables *, char *, size_t);
void	proto_variables_reply_pack(msgpack_packer *,
	    const struct proto_variables_reply *);
int	proto_variables_reply_unpack(const msgpack_object *,
	    struct proto_variables_reply *, char *, size_t);
void	proto_complete_pack(msgpack_packer *, const struct proto_complete *);
int	proto_complete_unpack(const msgpack_object *,
	    struct proto_complete *, char *, size_t);
void	proto_complete_reply_pack(msgpack_packer *,
	    const struct proto_complete_reply *);
int	proto_complete_reply_unpack(const msgpack_object *,
	    struct proto_complete_reply *, char *, size_t);
void	proto_inspect_pack(msgpack_packer *, const struct proto_inspect *);
int	proto_inspect_unpack(const msgpack_object *,
	    struct proto_inspect *, char *, size_t);
void	proto_inspect_reply_pack(msgpack_packer *,
	    const struct proto_inspect_reply *);
int	proto_inspect_reply_unpack(const msgpack_object *,
	    struct proto_inspect_reply *, char *, size_t);
void	proto_exec_input_pack(msgpack_packer *,
	    const struct proto_exec_input *);
int	proto_exec_input_unpack(const msgpack_object *,
	    struct proto_exec_input *, char *, size_t);
void	proto_agent_input_request_pack(msgpack_packer *,
	    const struct proto_agent_input_request *);
int	proto_agent_input_request_unpack(const msgpack_object *,
	    struct proto_agent_input_request *, char *, size_t);

/*
 * proto-mcp.c: proxy <-> worker.  MCP carries one JSON-RPC message as
 * its text; from the worker also the message's id (its exact JSON text),
 * method and error flag, so the proxy relays it without parsing it.
 * json is packed last, so a sender may pack the rest with
 * proto_mcp_pack_head and send json's bytes after it uncopied.
 */
struct proto_mcp {
	struct proto_str json;		/* the message, required */
	struct proto_str id;		/* its id as JSON text; worker only */
	struct proto_str method;	/* its method; worker only */
	int		 error;		/* a response with "error" */
};
struct proto_worker_ready {
	struct proto_str catalog;	/* tools/list result, JSON text */
};
void	proto_mcp_pack(msgpack_packer *, const struct proto_mcp *);
void	proto_mcp_pack_head(msgpack_packer *, const struct proto_mcp *);
int	proto_mcp_unpack(const msgpack_object *, struct proto_mcp *, char *,
	    size_t);
void	proto_worker_ready_pack(msgpack_packer *,
	    const struct proto_worker_ready *);
int	proto_worker_ready_unpack(const msgpack_object *,
	    struct proto_worker_ready *, char *, size_t);
/* WORKER_UPGRADE and WORKER_SHUTDOWN have empty bodies: no struct. */
void	proto_worker_upgrade_pack(msgpack_packer *);
int	proto_worker_upgrade_unpack(const msgpack_object *, char *, size_t);
void	proto_worker_shutdown_pack(msgpack_packer *);
int	proto_worker_shutdown_unpack(const msgpack_object *, char *, size_t);

#endif
