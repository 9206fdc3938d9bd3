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

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

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
 * or asks for.  The MCP frame cap adds room for the envelope.
 */
#define PROTO_MCP_REQUEST_CAP	(16U * 1024 * 1024)
#define PROTO_MCP_REPLY_CAP	(16U * 1024 * 1024)

/*
 * Most edits plus cells named in cell_ids lists in one ROOM_EDIT.  A
 * batch this size takes tens of milliseconds, so no other client waits
 * 100 ms behind one (docs/decisions/010); and its reply, one cell per
 * edit of at most 75 bytes (ids are 1-64 characters), always fits the
 * ROOM_EDIT_REPLY cap, so the daemon refuses a larger batch before
 * applying any of it and never commits an edit it cannot answer.
 */
#define PROTO_EDIT_MAX_EDITS	1000
#define PROTO_EDIT_REPLY_ENTRY	75

/*
 * Typed bodies (docs/decisions/014): every message has a struct and a
 * pack/unpack pair in its family's file.  Unpacking borrows from the
 * received frame, so nothing allocates and the frame must outlive the
 * struct: a string is a pointer and a length (ptr NULL when absent, not
 * NUL-terminated), a document (cell, output, metadata) the msgpack object
 * itself.  Packing a document takes that object, or a callback that packs
 * the value.  Unpackers return 0, or -1 with err naming the message and
 * the field; unknown keys are ignored.
 */
struct proto_str {
	const char	*ptr;
	size_t		 len;
};
struct proto_doc {
	const msgpack_object	*obj;
	void			(*pack)(msgpack_packer *, const void *);
	const void		*arg;
};

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
	PROTO_MSG_KERNEL_INTERRUPT = 134,
	PROTO_MSG_KERNEL_RESTART = 135,
	PROTO_MSG_KERNEL_INFO = 136,
	PROTO_MSG_KERNEL_INFO_REPLY = 137,
	PROTO_MSG_KERNEL_LIST = 138,
	PROTO_MSG_KERNEL_LIST_REPLY = 139,
	PROTO_MSG_KERNEL_SELECT = 140,
	PROTO_MSG_BLOB_GET = 141,
	PROTO_MSG_BLOB_REPLY = 142,

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

struct proto_header {
	uint32_t	length;
	uint16_t	type;
	uint8_t		version;
	uint8_t		flags;
	uint32_t	id;
};

/* proto-frame.c */
const char	*proto_msg_name(uint16_t);
uint32_t	 proto_msg_cap(uint16_t);
void		 proto_header_pack(const struct proto_header *, uint8_t *);
void		 proto_header_unpack(const uint8_t *, struct proto_header *);
int		 proto_frame_check(const struct proto_header *, char *, size_t);
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
void	proto_doc_pack(msgpack_packer *, const struct proto_doc *);

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

/* proto-hello.c: the handshake every connection opens with. */
struct proto_hello {
	int		 version;
	char		 kind[16];
	char		 label[128];
	int64_t		 pid;
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
const char *proto_agent_state_name(enum proto_agent_state);
const char *proto_agent_exec_status_name(enum proto_agent_exec_status);

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
