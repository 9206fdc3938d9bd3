/* SPDX-License-Identifier: ISC */
/*
 * common.h: the shared library every runtimed executable links
 * (libcommon.a): logging, allocation, the framed peer layer on libevent,
 * socket and state directories, child spawning, JSON<->msgpack and small
 * file utilities.
 */

#ifndef COMMON_H
#define COMMON_H

#include <sys/types.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <json-c/json.h>
#include <msgpack.h>

#include "proto/proto.h"

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif
#define printflike(a, b) __attribute__((format(printf, a, b)))
#ifndef nitems
#define nitems(a)	(sizeof (a) / sizeof (a)[0])
#endif
/* BSD's <sys/queue.h> has it; glibc's does not. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

/*
 * log.c: silent by default except warnings; stderr or a file, rotated
 * past LOG_ROTATE_BYTES (RUNTIMED_LOG_MAX_BYTES overrides) into NAME.1
 * .. NAME.LOG_ROTATE_KEEP.
 */
#define LOG_ROTATE_BYTES	(8 * 1024 * 1024)
#define LOG_ROTATE_KEEP		3
enum log_level {
	LOG_LEVEL_ERROR = -1,	/* -q: only why a process exits */
	LOG_LEVEL_WARN = 0,	/* the default: warnings and errors */
	LOG_LEVEL_INFO = 1,	/* -v */
	LOG_LEVEL_DEBUG = 2	/* -vv */
};
void	log_open(const char *, int, const char *);
const char *log_level_flag(int);
int	log_level_step(int, int);
const char *log_path(void);
void	log_capture(int);
void	log_close(void);
void	log_tidy(void);
void	log_follow(void);
void	log_warnx(const char *, ...) printflike(1, 2);
void	log_warn(const char *, ...) printflike(1, 2);
void	log_info(const char *, ...) printflike(1, 2);
void	log_debug(const char *, ...) printflike(1, 2);
void	fatal_set_cleanup(void (*)(void));
__dead void fatal(const char *, ...) printflike(1, 2);
__dead void fatalx(const char *, ...) printflike(1, 2);

/* xmalloc.c: never return NULL; a 0-byte request is a bug. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...) printflike(2, 3);
int	 xvasprintf(char **, const char *, va_list);

/* util.c */
struct stat;
#define UTIL_NOFOLLOW	0x1		/* util_open_regular: no final link */
#define UTIL_READ_MAX	(1024U * 1024 * 1024) /* util_read_file's cap */
int64_t	 util_now_us(void);
int64_t	 util_mono_ms(void);
void	 util_uuid(char [37]);
void	 util_hex(const unsigned char *, size_t, char *);
void	 util_umask_private(void);
mode_t	 util_user_umask(void);
int	 util_read_file(const char *, char **, size_t *, char **);
int	 util_read_file_max(const char *, int, size_t, char **, size_t *,
	    char **);
int	 util_read_fd_max(int, const char *, const struct stat *, size_t,
	    char **, size_t *, char **);
int	 util_open_regular(const char *, int, struct stat *, char **);
const char *util_file_kind(mode_t);
int	 util_mkdir_private(const char *, char **);
char	*util_realpath_new(const char *);
int	 util_set_cloexec(int);
int	 util_set_nonblock(int);

/* sticky.c */
int	 sticky_check(const char *, char **);

/* atomic.c: replace a file whole, through an unpredictable temporary. */
#define ATOMIC_NAME_SIZE	43	/* ".rtd-" 16 hex "-" 16 hex ".tmp" NUL */
struct atomic;
struct atomic	*atomic_create(const char *, mode_t, char **);
int		 atomic_fd(struct atomic *);
int		 atomic_commit(struct atomic *, char **);
void		 atomic_expect(struct atomic *, int, dev_t, ino_t, off_t,
		     int64_t);
#define ATOMIC_ANY	0	/* atomic_expect: replace whatever is there */
#define ATOMIC_ABSENT	1	/* only if the target does not exist */
#define ATOMIC_SAME	2	/* only if it is still this file */
#define ATOMIC_CHANGED	(-2)	/* atomic_commit: the target was not so */
void		 atomic_free(struct atomic *);
struct atomic	*atomic_adopt(const char *, const char *, mode_t, char **);
const char	*atomic_temp(struct atomic *);
int		 atomic_write(const char *, const void *, size_t, mode_t,
		    char **);
int		 atomic_sweep(const char *);
char		*atomic_resolve(const char *, char **);
void		 atomic_temp_name(const char *, const unsigned char [8],
		    char [ATOMIC_NAME_SIZE]);
/* atomic-crypto.c (mcp-proxy/proxy-atomic.c in the proxy). */
#define ATOMIC_TAG_SIZE		17	/* 16 hex and NUL */
void		 atomic_tag(const char *, char [ATOMIC_TAG_SIZE]);
int		 atomic_random(unsigned char *, size_t);

/* crypto.c: SHA-256, base64 and random bytes (libcrypto; crypto.h). */
#define CRYPTO_SHA256_LEN	32
void	 crypto_sha256(const void *, size_t, unsigned char [CRYPTO_SHA256_LEN]);
struct evp_md_ctx_st;
struct evp_md_ctx_st *crypto_sha256_begin(void);
void	 crypto_sha256_add(struct evp_md_ctx_st *, const void *, size_t);
void	 crypto_sha256_end(struct evp_md_ctx_st *,
	     unsigned char [CRYPTO_SHA256_LEN]);
void	 crypto_sha256_now(struct evp_md_ctx_st *,
	     unsigned char [CRYPTO_SHA256_LEN]);
size_t	 crypto_b64_encode(char *, const void *, size_t);
int	 crypto_b64_decode(void *, const char *, size_t);
int	 crypto_random(void *, size_t);

/* blob.c: content-addressed large outputs under <state>/blobs. */
#define BLOB_THRESHOLD	(1024 * 1024)	/* outputs this large go to blobs */
void	 blob_hash(const void *, size_t, char [65]);
int	 blob_valid_name(const char *, size_t);
char	*blob_path(const char *, const char *);
int	 blob_put(const char *, const void *, size_t, char [65], char **);
int	 blob_get(const char *, const char *, char **, size_t *, char **);

/* sockdir.c: docs/files.md. */
char	*sockdir_socket_path(void);
char	*sockdir_state_path(void);
int	 sockdir_check_named(const char *, const char *, int, char **);
int	 sockdir_check_dir(const char *, int, char **);
int	 sockdir_private_files(const char *);
int	 sockdir_listen(const char *, char **);
int	 sockdir_connect(const char *);
int	 sockdir_peer_uid(int, uid_t *);

/* spawn.c: start a child with one end of a socketpair as fd 3. */
char	*spawn_find(const char *, const char *, char **);
pid_t	 spawn_child(const char *, char *const [], int, int, char **);

/* frameio.c: blocking frame I/O for short-lived clients and tests. */
int	 frameio_write(int, uint16_t, uint32_t, const void *, size_t);
int	 frameio_read(int, int, struct proto_header *, msgpack_unpacked *,
	     char **);
int	 frameio_hello(int, const char *, const char *,
	     struct proto_incarnation *, char **);

/*
 * peer.c: one framed, non-blocking connection on an event_base.  Every
 * connection opens with the handshake: until HELLO_OK has been sent or
 * received, only handshake frames of at most PROTO_HELLO_MAX bytes are
 * read, and a peer that has not finished it within PEER_HELLO_TIMEOUT
 * seconds (PEER_HELLO_OK_TIMEOUT once we said HELLO) is closed.
 */
#define PEER_HELLO_TIMEOUT	5
/*
 * The side that connected and said HELLO waits longer for HELLO_OK: the
 * other side is a daemon or worker it chose, which may still be opening
 * its store on a busy disk, and waiting costs the caller one connection.
 */
#define PEER_HELLO_OK_TIMEOUT	20
struct peer;
/*
 * Called once per complete frame; with hdr == NULL and body == NULL when
 * the peer is lost (EOF, error, protocol violation or peer_kill).  After
 * the lost callback the peer is freed by the layer; do not touch it.
 */
typedef void (*peer_dispatch_cb)(struct peer *, const struct proto_header *,
    const msgpack_object *, void *);

struct peer	*peer_create(struct event_base *, int, const char *,
		    peer_dispatch_cb, void *);
void		 peer_set_arg(struct peer *, void *);
const char	*peer_name(struct peer *);
int		 peer_fd(struct peer *);
uint32_t	 peer_next_id(struct peer *);
int		 peer_send(struct peer *, uint16_t, uint32_t,
		    const msgpack_sbuffer *);
int		 peer_send_raw(struct peer *, uint16_t, uint32_t,
		    const void *, size_t);
int		 peer_send_parts(struct peer *, uint16_t, uint32_t,
		    const void *, size_t, const void *, size_t);
int		 peer_send_error(struct peer *, uint32_t, const char *,
		    const char *, ...) printflike(4, 5);
int		 peer_send_ok(struct peer *, uint32_t);
void		 peer_kill(struct peer *, const char *);
size_t		 peer_pending_output(struct peer *);
/* Backpressure: stop reading above this much queued output, resume once
 * it drains below the low mark. */
#define PEER_QUEUE_HIGH	(4U * 1024 * 1024)
#define PEER_QUEUE_LOW	(1U * 1024 * 1024)
typedef void (*peer_drain_cb)(struct peer *, void *);
void		 peer_set_reading(struct peer *, int);
void		 peer_hold(struct peer *, int);
void		 peer_set_drain_cb(struct peer *, size_t, peer_drain_cb);
void		 peer_keep_frames(struct peer *, size_t);
msgpack_zone	*peer_take_frame(struct peer *);

/*
 * peer-dispatch.c: a receiver's table, one row per type it takes, ended
 * by a row with no handler.  A handler gets the body, and with
 * PEER_DISPATCH_UNPACK also the body read through the type's codec
 * (the struct proto's table names; NULL otherwise).  refuse gets a body
 * the codec refuses, with the reason.
 */
#define PEER_DISPATCH_UNPACK	0x1
typedef void (*peer_handler_cb)(struct peer *, const struct proto_header *,
    const msgpack_object *, const void *, void *);
typedef void (*peer_refuse_cb)(struct peer *, const struct proto_header *,
    const char *, void *);
struct peer_dispatch {
	uint16_t	 type;
	u_int		 flags;		/* PEER_DISPATCH_* */
	peer_handler_cb	 handler;
};
const struct peer_dispatch *peer_dispatch_find(const struct peer_dispatch *,
		    uint16_t);
int		 peer_dispatch(const struct peer_dispatch *, peer_refuse_cb,
		    struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
void		 peer_dispatch_pong(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
void		 peer_dispatch_ignore(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);

/*
 * streamcap.c: a stream output longer than STREAMCAP_HEAD + STREAMCAP_TAIL
 * characters keeps its head and its tail with a marker between.
 */
#define STREAMCAP_HEAD	250000
#define STREAMCAP_TAIL	250000
struct streamcap {
	char		*head;
	size_t		 head_len;	/* bytes */
	size_t		 head_chars;
	int		 is_cut;
	uint64_t	 cut;		/* characters cut after the head */
	char		*tail;
	size_t		 tail_len;
	size_t		 tail_chars;
};
void			 streamcap_init(struct streamcap *);
void			 streamcap_free(struct streamcap *);
void			 streamcap_add(struct streamcap *, const char *,
			     size_t);
struct json_object	*streamcap_output(const struct streamcap *,
			     const char *);
uint64_t		 streamcap_cut(struct json_object *);
size_t			 streamcap_marker_chars(uint64_t);
int			 streamcap_truncated(struct json_object *);
struct json_object	*streamcap_merge(struct json_object *,
			     struct json_object *);
struct json_object	*streamcap_fit(struct json_object *);
void			 streamcap_merge_obj(msgpack_packer *,
			     const msgpack_object *, const msgpack_object *);
int			 streamcap_fit_obj(msgpack_packer *,
			     const msgpack_object *);

/*
 * tbmap.c: an error's frames mapped to the cells that ran them
 * (docs/decisions/070).  A cell that ran in this kernel: its execution
 * count and the murmur2 of its code (the name ipykernel's and
 * xeus-python's compilers give it).
 */
#define TBMAP_SEED	0xc70f6907U
struct tbmap_cell {
	int64_t		 count;
	uint32_t	 hash;
	const char	*cell_id;
};
uint32_t		 tbmap_murmur2(const void *, size_t, uint32_t);
struct json_object	*tbmap_frames(struct json_object *,
			     const struct tbmap_cell *, size_t, const char *);

/*
 * pydefuse.c: the top-level names a python cell may bind (defs) and those
 * it reads from outside itself (uses), conservatively (decision 072).
 */
#define PYDEFUSE_WILDCARD	0x1	/* may bind any name: import *, %run */
#define PYDEFUSE_NOLINT		0x2	/* no undefined-name warning for it */
struct pydefuse {
	const char	**defs;		/* sorted, distinct */
	size_t		  ndefs;
	const char	**uses;
	size_t		  nuses;
	int		  flags;
	char		 *buf;
};
struct pydefuse	*pydefuse_scan(const char *, size_t);
void		 pydefuse_free(struct pydefuse *);
int		 pydefuse_defines(const struct pydefuse *, const char *);
int		 pydefuse_uses(const struct pydefuse *, const char *);
int		 pydefuse_known(const char *);

/* lastline.c */
const char	*lastline_find(struct json_object *, size_t, size_t *);
const char	*lastline_find_packed(const struct proto_outputs *,
		    msgpack_unpacked *, size_t, size_t *);

/* utf8.c */
int	 utf8_valid(const char *, size_t, size_t *);
char	*utf8_repair(const char *, size_t, size_t *);
size_t	 utf8_chars(const char *, size_t);
size_t	 utf8_skip(const char *, size_t, size_t);
size_t	 utf8_back(const char *, size_t, size_t);

/*
 * json-splice.c: json-c with long string literals that need no decoding
 * (no backslash, no byte below 0x20) taken verbatim (decision 033).
 */
#define JSON_SPLICE_MIN		1024	/* bytes; shorter go to json-c */
#define JSON_SPLICE_CONTROLS	0x1	/* refuse raw controls in strings */
#define JSON_SPLICE_WHOLE	0x2	/* one feed holds the whole text */
enum json_splice_status {
	JSON_SPLICE_MORE,	/* json_tokener_continue */
	JSON_SPLICE_DONE,	/* a value */
	JSON_SPLICE_ERROR,	/* json-c's: json_tokener_get_error */
	JSON_SPLICE_CONTROL,	/* a raw control byte in a string */
	JSON_SPLICE_REDO	/* parse again without splicing */
};
struct json_splice;
size_t	json_splice_scan(const unsigned char *, size_t, int *, int *);
struct json_splice *json_splice_create(struct json_tokener *, size_t, int);
void	json_splice_free(struct json_splice *);
enum json_splice_status json_splice_feed(struct json_splice *, const char *,
	    size_t, struct json_object **);
size_t	json_splice_parse_end(struct json_splice *);
size_t	json_splice_taken(struct json_splice *);
struct json_object *json_splice_parse(struct json_tokener *, const char *,
	    size_t, size_t, size_t *);

/* mpjson.c: nbformat and MCP objects cross frames as msgpack maps. */
void			 mpjson_pack(msgpack_packer *, struct json_object *);
void			 mpjson_pack_depth(msgpack_packer *,
			     struct json_object *, unsigned int);
int			 mpjson_plain(const msgpack_object *, unsigned int);
int			 mpjson_plain_keys(const msgpack_object *);
void			 mpjson_repack(msgpack_packer *, const msgpack_object *,
			     unsigned int);
int			 mpjson_inline(const msgpack_object *, unsigned int);
int			 mpjson_kv_cmp(const void *, const void *);
int			 mpjson_outputs_pack(struct proto_outputs *,
			     struct json_object *);
void			 mpjson_outputs_add(struct proto_outputs *,
			     struct json_object *);
struct json_object	*mpjson_outputs_unpack(const struct proto_outputs *);
int			 mpjson_outputs_read(struct proto_outputs *,
			     const msgpack_object *);
struct json_object	*mpjson_unpack(const msgpack_object *);
struct json_object	*mpjson_parse(const char *, size_t, char **);

/* jsonget.c: a JSON object's member, read as the type expected. */
const char	*jsonget_str(struct json_object *, const char *, const char *);

/*
 * mpvalue.c: one JSON value kept as the bytes mpjson_pack writes of it
 * (decision 101); len 0: absent.
 */
struct mpvalue {
	char	*ptr;
	size_t	 len;
};
void			 mpvalue_free(struct mpvalue *);
void			 mpvalue_set_json(struct mpvalue *,
			     struct json_object *);
void			 mpvalue_set_obj(struct mpvalue *,
			     const msgpack_object *);
void			 mpvalue_set_bytes(struct mpvalue *, const char *,
			     size_t);
void			 mpvalue_copy(struct mpvalue *,
			     const struct mpvalue *);
void			 mpvalue_pack(msgpack_packer *, const struct mpvalue *);
const msgpack_object	*mpvalue_view(const struct mpvalue *,
			     msgpack_unpacked *);
struct json_object	*mpvalue_json(const struct mpvalue *);
int			 mpvalue_merge(struct mpvalue *,
			     const msgpack_object *);
void			 mpvalue_del(struct mpvalue *, const char *const *);
const msgpack_object	*mpvalue_get(const msgpack_object *,
			     const msgpack_object *);
int			 mpvalue_equal(const msgpack_object *,
			     const msgpack_object *);

/* jsonrpc.c: one JSON-RPC message, its id kept as sent. */
struct json_object	*jsonrpc_parse(const char *, size_t, size_t *,
			     size_t *, int *, char **);
struct json_object	*jsonrpc_id_from_text(const char *);
int			 jsonrpc_id_equal(struct json_object *,
			     struct json_object *);

/* toolresult.c: the isError result of a tool (docs/errors.md). */
#define TOOLRESULT_MESSAGE_MAX	2000	/* characters of a message */
struct json_object	*toolresult_error(const char *, const char *);
struct json_object	*toolresult_error_detail(struct json_object *);
#define TOOLRESULT_STRUCTURED	"io.runtimed/structured"
int			 toolresult_structured(struct json_object *);
void			 toolresult_plain(struct json_object *);
void			 toolresult_lean_tools(struct json_object *);

/* Shorthand for building one msgpack body. */
/* trace.c: the per-hop trace, on when RUNTIMED_TRACE names a file. */
void	 trace_hop(const char *, const char *, const char *, uint32_t,
	     size_t);

/* lineread.c: newline-delimited messages (MCP on stdin). */
struct lineread;
struct lineread_cbs {
	/* One line without its \r\n; never blank. */
	void	(*line)(const char *, size_t, void *);
	/* A line over the cap was dropped: its length, and why in words. */
	void	(*overlong)(size_t, const char *, void *);
	/* End of input, after its last line. */
	void	(*eof)(void *);
};
struct lineread	*lineread_create(struct event_base *, int, size_t,
		     const struct lineread_cbs *, void *);
void		 lineread_free(struct lineread *);
void		 lineread_pause(struct lineread *);
void		 lineread_resume(struct lineread *);
void		 lineread_stop(struct lineread *);

struct mpbuf {
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
};
void	mpbuf_init(struct mpbuf *);
void	mpbuf_free(struct mpbuf *);
void	mpbuf_error(struct mpbuf *, const char *, const char *, va_list)
	    printflike(3, 0);

#endif
