/* SPDX-License-Identifier: ISC */
/*
 * worker.h: runtimed-mcp-worker, the MCP server behind runtimed-mcp.
 *
 * One JSON-RPC dispatcher (worker-rpc.c) serves either stdio
 * (worker-stdio.c) or the proxy's socketpair (worker-proxy.c).  Tools
 * (tool-*.c, tabled in worker-tool.c) resolve their notebook target
 * through the attachment registry (worker-attach.c) and talk to the
 * daemon through rooms (worker-room.c) over daemon connections
 * (worker-daemon.c).  Everything runs on one libevent loop.
 */

#ifndef WORKER_H
#define WORKER_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "common.h"

/* Limits (docs/limits.md). */
#define WORKER_MAX_ATTACH	128	/* handles, pending ones included */
#define WORKER_WAIT_PERMITS	8	/* concurrent waits */
#define WORKER_RUN_DEFAULT_SECS	1
/* Why a daemon request failed when its connection dropped: transient,
 * since the next request starts or finds a daemon. */
#define WORKER_DAEMON_LOST	"lost the connection to runtimed"
#define WORKER_CELL_CAP		8000	/* inline chars of outputs a cell */
#define WORKER_RESULT_CAP	10000	/* inline chars of a result */
#define WORKER_FULL_CAP		100000	/* chars of outputs, full_output */
#define WORKER_SOURCE_CAP	2000	/* chars of a source in a run */
#define WORKER_STRUCT_CAP	12000	/* bytes of a run's structuredContent */
#define WORKER_LIST_HANDLES	20	/* handles list_notebooks names in text */
#define WORKER_EVALUE_CAP	1000	/* chars of an error's evalue */
#define WORKER_RUN_LINES	5	/* ok cells of a run given a line each */
#define WORKER_RUN_IDS		10	/* ids a run's text lists per status */
#define WORKER_PREVIEW_CHARS	300	/* of an ok cell's output in a run */
#define WORKER_PREVIEW_LINES	8	/* lines of it */
#define WORKER_MAX_IMAGES	4	/* image content blocks per result */
#define WORKER_MAX_IMAGE_B64	(1024 * 1024)	/* base64 of one image */
#define WORKER_MAX_IMAGE_TOTAL	(2 * 1024 * 1024) /* of all, per result */
#define WORKER_IMAGE_MAX_SIDE	1568	/* long side sent to the model */
#define WORKER_IMAGE_MAX_PIXELS	50000000 /* decoded at most */
#define WORKER_FIGURE_AT_ONCE	2	/* figures drawn at once */
#define WORKER_FIGURE_TIMEOUT_MS 8000	/* to draw one, then killed */
#define WORKER_FIGURE_MAX_PNG	(4 * 1024 * 1024) /* its screenshot */
#define WORKER_FIGURE_MAX_B64	(256 * 1024)	/* base64 of its image */
#define WORKER_FIGURE_MIN_SIDE	100	/* of a layout's own size */
#define WORKER_FIGURE_CACHE	16	/* screenshots kept */
#define WORKER_FIGURE_CACHE_BYTES (4 * 1024 * 1024)	/* their bytes */
#define WORKER_FIGURE_JS_DIR	"/usr/share/javascript"	/* libjs-vega */
#define WORKER_START_TIMEOUT_MS	5000	/* daemon autostart */
#define WORKER_HANDLE_PREFIX	"nbh_"
#define WORKER_HANDLE_LEN	(4 + 8 + 32)	/* prefix, tag, random */

#define WORKER_PROTOCOL_LATEST	"2025-11-25"
#define WORKER_PROTOCOL_STATELESS "2026-07-28"
#define WORKER_PAGE_SIZE	64	/* tools/list, resources/list */
#define WORKER_WATCH_PERIOD_MS	2000	/* daemon incarnation probe */
#define WORKER_WATCH_RETRY_MS	200	/* confirm a failed probe */
#define WORKER_ROOM_KEEP_MS	10000	/* a room's content kept unused */
#define WORKER_ROOM_LOG		32	/* changes a room keeps (a ring) */
#define WORKER_ROOM_LOG_BYTES	(64 * 1024)	/* a larger one is not */
#define WORKER_ROOM_KEEP_FRAME	1024	/* bodies kept as they came */
#define WORKER_NB_ZONES		32	/* frames a notebook's cells span */
#define WORKER_EOF_GRACE_MS	2000	/* finish calls after stdin EOF */
#define WORKER_EXIT_UPGRADE	75	/* daemon upgraded: respawn me */
#define WORKER_CHANGES_MAX	100	/* ids listed per change report */
#define WORKER_SUMMARY_CELLS	25	/* cells summarised by connect */
#define WORKER_SUMMARY_TEXT_CELLS 10	/* ... and listed in its text */
#define WORKER_SUMMARY_WARNINGS	3	/* file warnings in connect's text */

struct worker_call;
struct worker_dconn;
struct worker_room;
struct worker_nb;
struct worker_nb_doc;
struct worker_exec;
struct worker_handle;

/*
 * Notebook target arguments shared by every notebook tool's schema.  What
 * they mean is said once, in the server's instructions (worker-tool.c),
 * not in each of the tools that take them.  So is domain, which every
 * such tool takes beside notebook_id but few calls need: in 24 schemas
 * it cost every session 600 characters (issue 34).
 */
#define WORKER_TARGET_PROPS \
	"\"notebook_handle\":{\"type\":\"string\"}," \
	"\"notebook_id\":{\"type\":\"string\"}"

/* How long complete_code and inspect_code wait behind a running cell. */
#define WORKER_INTROSPECT_MS	5000
/* upload_file and download_file (worker-files.c). */
#define WORKER_FILES_MAX	(1024 * 1024 * 1024)
/* A transfer moves this much at a time: a chunked PUT, a copy's read. */
#define WORKER_FILES_CHUNK	(4 * 1024 * 1024)
/* What is written here is read back and compared this much at a time. */
#define WORKER_FILES_CMP	(256 * 1024)
/*
 * A transfer's connection cut is tried again this long after the cut,
 * FIRST ms later doubling to MAX (a proxy restarts in 0.35 s, a hub in a
 * few seconds), and goes on at most RESUMES times (decision 092).
 */
#define WORKER_FILES_RETRY_MS		15000
#define WORKER_FILES_RETRY_FIRST_MS	100
#define WORKER_FILES_RETRY_MAX_MS	2000
#define WORKER_FILES_RESUMES		16
/* A download's piece this large is written as it is, not gathered. */
#define WORKER_FILES_DIRECT	(64 * 1024)
/*
 * What a transfer kept, written down for a later call if the worker is
 * killed (decision 098): a record's largest size, and how long one not
 * written again is kept (with its temporaries) before a sweep.
 */
#define WORKER_FILES_RECORD_MAX	8192
#define WORKER_FILES_KEEP_S	(24 * 60 * 60)
/* How long the kernel may take to say whether it sees a server's file. */
#define WORKER_FILES_PROBE_MS	10000
#define WORKER_FILES_SCHEMA \
	"{\"type\":\"object\",\"properties\":{" \
	"\"host_path\":{\"type\":\"string\"}," \
	"\"kernel_path\":{\"type\":\"string\"}," \
	"\"bytes\":{\"type\":\"integer\"}," \
	"\"sha256\":{\"type\":\"string\"}," \
	"\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}"

/* The error shape every output schema admits. */
#define WORKER_ERROR_PROP \
	"\"error\":{\"type\":\"object\",\"properties\":{" \
	"\"code\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}}}"

/* The result of connect_notebook and create_notebook (worker-output.c's
 * worker_output_attached builds both). */
#define WORKER_ATTACHED_SCHEMA \
	"{\"type\":\"object\",\"properties\":{" \
	"\"notebook_handle\":{\"type\":\"string\"}," \
	"\"notebook_id\":{\"type\":\"string\"}," \
	"\"path\":{\"type\":[\"string\",\"null\"]}," \
	"\"kernel\":{\"type\":\"object\"}," \
	"\"cells\":{\"type\":\"array\"}," \
	"\"total_cells\":{\"type\":\"integer\"}," \
	"\"warnings\":{\"type\":\"array\",\"items\":{\"type\":\"object\"," \
	"\"properties\":{\"cell_index\":{\"type\":\"integer\"}," \
	"\"cell_id\":{\"type\":\"string\"}," \
	"\"message\":{\"type\":\"string\"}," \
	"\"on_save\":{\"type\":\"string\"}}}}," \
	"\"cursor\":{\"type\":\"string\"}," \
	"\"resources\":{\"type\":\"array\"," \
	"\"items\":{\"type\":\"string\"}}," \
	WORKER_ERROR_PROP "}}"

/* worker-tool.c: one entry per tool-*.c. */
struct tool_entry {
	const char	*name;
	const char	*description;
	const char	*input_schema;	/* JSON text */
	const char	*output_schema;	/* JSON text */
	int		 read_only;
	int		 destructive;
	int		 idempotent;
	const char	*task_support;	/* MCP tasks: "optional", NULL */
	void		(*handler)(struct worker_call *);
};
const struct tool_entry	*worker_tool_find(const char *);
struct json_object	*worker_tool_list(void);
const char		*worker_tool_instructions(void);
char	*tool_export_notebook_render(struct json_object *, const char *,
	    size_t *, size_t *);
struct worker_nb_line;
struct json_object	*tool_inspect_notebook_line(size_t,
	    const struct worker_nb_line *, struct evbuffer *, struct evbuffer *,
	    size_t *);
struct json_object	*worker_tool_page(u_int, u_int, u_int *);

/*
 * worker-rpc.c: the JSON-RPC dispatcher behind both transports.  A
 * transport registers itself with worker_rpc_init; the dispatcher and
 * the calls it runs reach it only through these callbacks (any may be
 * NULL), each given arg.
 */
struct worker_transport {
	/* One message out; worker_rpc_head() describes it meanwhile. */
	void	(*send)(const char *, size_t, void *);
	/* The first initialize was answered. */
	void	(*initialized)(void *);
	/* The last call in flight finished (stdio exits if stdin is gone). */
	void	(*idle)(void *);
	void	*arg;
};
struct worker_rpc_head {
	const char	*id;		/* JSON text; NULL if none */
	const char	*method;	/* NULL for a response */
	int		 error;		/* a response with "error" */
};
const struct worker_rpc_head *worker_rpc_head(void);
void		 worker_rpc_init(struct event_base *,
		     const struct worker_transport *);
void		 worker_rpc_idle(void);
void		 worker_rpc_input(const char *, size_t);
int		 worker_rpc_structured(void);
void		 worker_rpc_answer(struct json_object *,
		     struct json_object *);
void		 worker_rpc_notify(const char *, struct json_object *);
int		 worker_rpc_ready(void);
void		 worker_rpc_log(int, const char *, const char *, ...)
		     printflike(3, 4);
void		 worker_rpc_cache_hints(struct json_object *);
void		 worker_rpc_stateless_result(struct json_object *);
void		 worker_rpc_fail(struct json_object *, int, const char *);
void		 worker_rpc_fail_data(struct json_object *, int,
		     const char *, struct json_object *);
void		 worker_rpc_result(struct json_object *, struct json_object *);
int		 worker_rpc_page_cursor(struct json_object *, u_int *);
u_int		 worker_rpc_page_size(void);
char		*worker_rpc_page_next(u_int);
struct event_base *worker_rpc_base(void);
int		 worker_rpc_scan_surrogates(const char *, size_t);

/* worker-json.c: JSON text written once, or by hand (decision 039). */
size_t		 worker_json_freeze(struct json_object *);
struct json_object *worker_json_frozen(struct evbuffer *);
void		 worker_json_quote(struct evbuffer *, const char *, size_t);

/* worker-call.c: one tools/call in flight. */
typedef void (*worker_call_cancel_cb)(struct worker_call *, void *);
typedef struct json_object *(*worker_call_wrap_fn)(void *,
		     struct json_object *);
struct worker_call *worker_call_create(struct json_object *,
		     const struct tool_entry *, struct json_object *,
		     struct json_object *);
void		 worker_call_cancel_id(struct json_object *);
void		 worker_call_set_task(struct worker_call *);
void		 worker_call_set_structured(struct worker_call *);
int		 worker_call_structured(struct worker_call *);
int		 worker_call_task(struct worker_call *);
void		 worker_call_set_ext_task(struct worker_call *);
int		 worker_call_ext_task(struct worker_call *);
void		 worker_call_set_wrap(struct worker_call *,
		     worker_call_wrap_fn, void *);
void		 worker_call_set_meta(struct worker_call *,
		     struct json_object *);
void		 worker_call_answer(struct worker_call *,
		     struct json_object *);
void		 worker_call_on_cancel(struct worker_call *,
		     worker_call_cancel_cb, void *);
int		 worker_call_cancelled(struct worker_call *);
u_int		 worker_call_inflight(void);
struct json_object *worker_call_args(struct worker_call *);
struct worker_figures;
struct worker_figures **worker_call_figures(struct worker_call *);
void		 worker_call_add_content(struct worker_call *,
		     struct json_object *);
void		 worker_call_result(struct worker_call *, const char *,
		     struct json_object *);
void		 worker_call_error(struct worker_call *, const char *,
		     const char *, ...) printflike(3, 4);
void		 worker_call_error_fields(struct worker_call *, const char *,
		     const char *, struct json_object *, const char *);
struct worker_handle *worker_call_target(struct worker_call *);
struct worker_handle *worker_call_target_only(struct worker_call *);
struct worker_handle *worker_call_code(struct worker_call *,
		     const char *const [], struct proto_str *, int *, int *);
int		 worker_call_check(struct worker_call *,
		     const char *const []);
int		 worker_call_wait_acquire(struct worker_call *);
void		 worker_call_wait_release(struct worker_call *);
typedef void (*worker_call_progress_fn)(struct worker_call *, void *,
    struct evbuffer *);
void		 worker_call_wait_bound(struct worker_call *, int,
		     worker_call_progress_fn, void *);
int		 worker_call_has_progress(struct worker_call *);
typedef void (*worker_call_reply_cb)(struct worker_call *,
    struct worker_room *, const msgpack_object *);
typedef void (*worker_call_nb_cb)(struct worker_call *,
    struct worker_room *, struct worker_nb *);
void		 worker_call_room_get(struct worker_call *,
		     struct worker_room *, worker_call_nb_cb);
void		 worker_call_room(struct worker_call *, struct worker_room *,
		     uint16_t, const msgpack_sbuffer *, worker_call_reply_cb);
void		 worker_call_target_request(struct worker_call *, uint16_t,
		     worker_call_reply_cb);

/* worker-args.c: argument validation (pure). */
int	 worker_args_check(struct json_object *, const char *const [],
	    char **);
int	 worker_args_string(struct json_object *, const char *, int,
	    const char **, char **);
int	 worker_args_secs(struct json_object *, const char *, int, int *,
	    char **);
int	 worker_args_bool(struct json_object *, const char *, int, int *,
	    char **);
int	 worker_args_uint(struct json_object *, const char *, int, int,
	    int, int *, char **);
int	 worker_args_utf8_ok(struct json_object *);
char	*worker_args_path(const char *);
int	 worker_args_cellref(struct json_object *, struct json_object *,
	    const char **, char **);

/* worker-target.c: the target arguments of docs/targets.md (pure). */
enum worker_target_kind {
	WORKER_TARGET_HANDLE,
	WORKER_TARGET_ID,
};
struct worker_target {
	enum worker_target_kind	 kind;
	const char		*value;	/* borrowed from args */
	const char		*domain; /* NULL: local; borrowed */
};
int	 worker_target_domain(struct json_object *, const char **, char **);
int	 worker_target_parse(struct json_object *, int,
	    struct worker_target *, char **);

/* worker-attach.c: the registry of notebook handles. */
void		 worker_attach_set_tag(uint32_t);
uint32_t	 worker_attach_tag(void);
struct worker_handle *worker_attach_reserve(void);
struct worker_handle *worker_attach_find(const char *);
void		 worker_attach_expire(const struct proto_incarnation *,
		     const char *);
void		 worker_attach_room_lost(struct worker_room *);
int		 worker_attach_rejoin_pending(void);
void		 worker_attach_rejoin_all(void);
int		 worker_attach_unavailable(struct worker_handle *);
void		 worker_attach_foreach(void (*)(struct worker_handle *,
		     void *), void *);
void		 worker_attach_commit(struct worker_handle *,
		     struct worker_room *, const char *);
void		 worker_attach_cancel(struct worker_handle *);
void		 worker_attach_finish(struct worker_call *,
		    struct worker_handle *, struct worker_room *,
		    const struct worker_nb *, const char *, const char *);
void		 worker_attach_release(struct worker_handle *);
u_int		 worker_attach_count(void);
const char	*worker_attach_id(struct worker_handle *);
const char	*worker_attach_notebook_id(struct worker_handle *);
struct worker_room *worker_attach_room(struct worker_handle *);
struct worker_handle *worker_attach_resolve(const struct worker_target *,
		     int *, const char **, char **);
struct json_object *worker_attach_list(void);
void		 worker_attach_reset(void);

/*
 * worker-daemon.c: connections to runtimed.  A reply callback gets the
 * reply's body, to read with its codec, or (code, msg) for an ERROR or a
 * lost connection (then body is the ERROR's, or NULL).
 */
typedef void (*worker_daemon_cb)(void *, uint16_t, const msgpack_object *,
    const char *, const char *);
typedef void (*worker_daemon_lost_cb)(struct worker_dconn *, void *);
typedef void (*worker_daemon_event_cb)(struct worker_dconn *, uint16_t,
    const msgpack_object *, void *);
void		 worker_daemon_init(struct event_base *);
struct worker_dconn *worker_daemon_open(const char *);
struct worker_dconn *worker_daemon_probe(const char *);
void		 worker_daemon_set_cbs(struct worker_dconn *,
		     worker_daemon_lost_cb, worker_daemon_event_cb, void *);
void		 worker_daemon_request(struct worker_dconn *, uint16_t,
		     const msgpack_sbuffer *, worker_daemon_cb, void *);
void		 worker_daemon_free(struct worker_dconn *, const char *,
		     const char *);
int		 worker_daemon_alive(struct worker_dconn *);
void		 worker_daemon_keep_frames(struct worker_dconn *, size_t);
msgpack_zone	*worker_daemon_take(struct worker_dconn *);
const struct proto_incarnation *worker_daemon_incarnation(
		     struct worker_dconn *);
struct worker_dconn *worker_daemon_control(void);
void		 worker_daemon_fail_later(worker_daemon_cb, void *,
		     const char *, const char *);
void		 worker_daemon_shutdown(void);
struct proto_doc worker_daemon_doc(struct json_object *);

/*
 * worker-nb.c: the notebook replica (ROOM_JOINED, ROOM_CONTENT), read
 * with their codecs; only the documents (cells, metadata, warnings) are
 * JSON.  worker-exec.c: a run (EXEC_STATE).  worker-reply.c: small
 * readers of other replies.
 */
struct worker_nb {			/* ROOM_JOINED, ROOM_CONTENT */
	char			*notebook_id;
	char			*path;		/* NULL: untitled */
	int			 dirty;
	int64_t			 seq;
	char			*kernel_name;
	char			*kernel_state;
	struct worker_nb_doc	*doc;		/* the cells, packed */
	struct json_object	*metadata;	/* NULL in ROOM_JOINED */
	struct json_object	*warnings;	/* NULL when none */
	struct json_object	*conflicts;	/* merge conflicts; NULL: none */
	struct json_object	*active;	/* cells running or queued */
	int			 refs;
};
/* What an outline shows of a cell (worker_nb_cell_line): borrowed. */
#define WORKER_NB_LINE_STR_MAX	256	/* longer strings: the JSON path */
struct worker_nb_line {
	const msgpack_object	*id;		/* STR */
	const msgpack_object	*type;		/* STR, or NULL: code */
	const char		*source;	/* "" when none */
	size_t			 source_len;
	int			 has_count;
	int64_t			 count;
	const msgpack_object	*version;	/* STR, or NULL */
	const msgpack_object	*stale;		/* non-empty ARRAY, or NULL */
	const msgpack_object	*by_client;	/* STR, or NULL */
	const msgpack_object	*by_session;	/* STR, or NULL */
	int			 by_disk;
	size_t			 nouts;
	const char		*run;		/* "running", "queued", NULL */
};
struct worker_exec {			/* EXEC_STATE */
	char			*execution_id;
	char			*status;
	char			*message;	/* why it ended so, or NULL */
	struct json_object	*cells;
	struct json_object	*input;	/* {cell_id, prompt, password} */
};
struct worker_nb *worker_nb_read(uint16_t, const msgpack_object *,
		     msgpack_zone *, char **);
struct worker_nb *worker_nb_read_delta(const msgpack_object *,
		     msgpack_zone *, const struct worker_nb *, char **);
int		 worker_nb_delta_ok(const struct worker_nb *);
struct worker_nb *worker_nb_compact(const struct worker_nb *);
struct worker_nb *worker_nb_ref(struct worker_nb *);
void		 worker_nb_unref(struct worker_nb *);
struct json_object *worker_nb_kernel(const struct worker_nb *);
size_t		 worker_nb_count(const struct worker_nb *);
struct json_object *worker_nb_cell(const struct worker_nb *, size_t);
struct json_object *worker_nb_cell_head(const struct worker_nb *, size_t,
		     size_t *);
const msgpack_object *worker_nb_packed(const struct worker_nb *, size_t);
int		 worker_nb_cell_line(const struct worker_nb *, size_t,
		     struct worker_nb_line *);
struct json_object *worker_nb_cells(const struct worker_nb *);
ssize_t		 worker_nb_find(const struct worker_nb *, const char *);
struct worker_exec *worker_exec_read(const msgpack_object *, char **);
void		 worker_exec_free(struct worker_exec *);
struct json_object *worker_reply_str(const struct proto_str *);
int64_t		 worker_reply_edit_seq(const msgpack_object *);

/* worker-room.c: one joined daemon connection per attached notebook. */
typedef void (*worker_room_join_cb)(void *, struct worker_room *,
    struct worker_nb *, const char *, const char *);
typedef void (*worker_room_nb_cb)(void *, struct worker_nb *, const char *,
    const char *);
void		 worker_room_get(struct worker_room *, worker_room_nb_cb,
		     void *);
void		 worker_room_join(uint16_t, const msgpack_sbuffer *,
		     worker_room_join_cb, void *);
void		 worker_room_ref(struct worker_room *);
void		 worker_room_unref(struct worker_room *);
int		 worker_room_alive(struct worker_room *);
const char	*worker_room_notebook_id(struct worker_room *);
int64_t		 worker_room_started_at(struct worker_room *);
void		 worker_room_request(struct worker_room *, uint16_t,
		     const msgpack_sbuffer *, worker_daemon_cb, void *);
typedef void (*worker_room_change_cb)(struct worker_room *,
    const struct proto_room_changed *, void *);
struct worker_room_watch;
struct worker_room_watch *worker_room_watch(struct worker_room *,
		     worker_room_change_cb, void *);
void		 worker_room_unwatch(struct worker_room_watch *);
void		 worker_room_want(struct worker_room_watch *, int);
struct worker_nb *worker_room_content(struct worker_room *);
int64_t		 worker_room_seq(struct worker_room *);
int		 worker_room_changes(struct worker_room *, int64_t, int64_t,
		     msgpack_sbuffer *);
struct worker_room *worker_room_find_path(const char *);
struct worker_room *worker_room_find_id(const char *);
struct worker_room *worker_room_find_remote(const char *, const char *);
void		 worker_room_set_domain(struct worker_room *, const char *);
const char	*worker_room_domain(struct worker_room *);
const char	*worker_room_path(struct worker_room *);

/* worker-files.c */
void		 worker_files_upload(struct worker_call *);
void		 worker_files_download(struct worker_call *);

/* worker-files-record.c */
struct worker_files_record {
	int		 upload;
	char		*domain;
	char		*remote;	/* the file on the server */
	char		*local;		/* host_path */
	char		*tmp;		/* beside local; an upload's on the server */
	uint64_t	 size;		/* the file's, as the transfer began */
	char		*lastmod;	/* download: the model's last_modified */
	char		*modified;	/* download: the first 200's Last-Modified */
	int64_t		 mtime;		/* upload: the local file's, ns */
	uint64_t	 bytes;		/* the temporary holds so far */
	char		 sha256[65];	/* of those bytes */
	int		 chunks;	/* upload: PUTs taken */
	char		*path;		/* the record's file, or NULL */
	int		 fd;		/* it, open to write (if wrote) */
	int		 wrote;
	size_t		 len;		/* bytes written at its start */
};
void		 worker_files_record_init(struct worker_files_record *, int,
		    const char *, const char *, const char *);
void		 worker_files_record_free(struct worker_files_record *);
int		 worker_files_record_load(struct worker_files_record *,
		    struct worker_files_record *);
void		 worker_files_record_save(struct worker_files_record *);
void		 worker_files_record_drop(struct worker_files_record *);
void		 worker_files_record_sweep(int (*)(struct worker_files_record *,
		    void *), void *);
const struct proto_incarnation *worker_room_incarnation(
		     struct worker_room *);

/* worker-client.c: who this worker serves (for run records). */
void		 worker_client_set(struct json_object *);
void		 worker_client_who(struct proto_exec_who *);
void	 worker_client_edit_who(struct proto_room_edit *);

/* worker-undo.c: edit_cells undo (decision 074). */
#define ROOM_UNDO_BATCHES_MAX	64	/* the daemon's ROOM_UNDO_MAX */
void	 worker_undo(struct worker_call *, struct json_object *);
const char	*worker_client_name_get(void);

/* worker-changes.c: what a change wait asks for, what it reports. */
#define WORKER_CHANGES_CONTENT	0x01	/* cells, notebook metadata, reload */
#define WORKER_CHANGES_OUTPUTS	0x02
#define WORKER_CHANGES_KERNEL	0x04
#define WORKER_CHANGES_SAVES	0x08
#define WORKER_CHANGES_DEFAULT	(WORKER_CHANGES_CONTENT | \
				 WORKER_CHANGES_OUTPUTS | WORKER_CHANGES_KERNEL)
int		 worker_changes_parse(struct json_object *, int *, char **);
void		 worker_changes_names(int, struct evbuffer *);
int		 worker_changes_event(int, const struct proto_room_changed *);
void		 worker_changes_report(struct json_object *,
		     const msgpack_object *, int, int64_t, struct evbuffer *,
		     size_t *);
void		 worker_changes_report_one(struct json_object *,
		     const struct proto_room_changed *, size_t, int,
		     struct evbuffer *, size_t *);
int		 worker_changes_kinds(int);

/* worker-progress.c: what a wait for a run says it is at. */
struct worker_progress;
struct worker_progress *worker_progress_create(struct worker_call *,
		     struct worker_room *, int);
void		 worker_progress_exec(struct worker_progress *,
		     const struct worker_exec *);
void		 worker_progress_free(struct worker_progress *);

/* worker-cursor.c: observation cursors (pure). */
char		*worker_cursor_make(uint32_t, const char *, int64_t,
		     int64_t);
int		 worker_cursor_parse(uint32_t, const char *, int64_t,
		     const char *, int64_t *);

/* worker-resource.c: resources, templates, subscriptions. */
void		 worker_resource_request(const char *, struct json_object *,
		     struct json_object *, int);
void		 worker_resource_listen(struct json_object *,
		     struct json_object *);
void		 worker_resource_cancel(struct json_object *);
void		 worker_resource_room_changed(struct worker_room *,
		     const struct proto_room_changed *);
void		 worker_resource_list_changed(void);
void		 worker_resource_handle_ended(const char *, const char *);
char		*worker_resource_encode(const char *);

/* worker-watch.c: the daemon incarnation, watched live. */
void		 worker_watch_start(struct event_base *);
void		 worker_watch_poke(void);
void		 worker_watch_seen(const struct proto_incarnation *);
void		 worker_watch_set_upgrade_cb(void (*)(void));

/* worker-blob.c: blob references in outputs. */
typedef void (*worker_blob_cb)(void *);
int		 worker_blob_is_ref(struct json_object *, const char **,
		     int64_t *);
void		 worker_blob_resolve(struct worker_room *,
		     struct json_object *, worker_blob_cb, void *);
void		 worker_blob_resolve_images(struct worker_room *,
		     struct json_object *, worker_blob_cb, void *);

/* worker-comment.c: comment threads kept in notebook metadata. */
typedef void (*worker_comment_cb)(void *, struct json_object *,
    const char *, const char *);
typedef int (*worker_comment_fn)(struct json_object *,
    const struct worker_nb *, void *, char **, const char **);
void		 worker_comment_update(struct worker_room *,
		     worker_comment_fn, void *, worker_comment_cb, void *);
struct json_object *worker_comment_threads(struct json_object *);
char		*worker_comment_id(const char *);
struct json_object *worker_comment_find(struct json_object *, const char *);
struct json_object *worker_comment_new(const char *, const char *);
void		 worker_comment_print(struct evbuffer *, struct json_object *);

/* The output schema of the comment tools. */
#define WORKER_COMMENT_SCHEMA "{\"type\":\"object\",\"properties\":{" \
	"\"thread_id\":{\"type\":\"string\"}," \
	"\"thread\":{\"type\":\"object\"}," \
	"\"threads\":{\"type\":\"integer\"}," \
	"\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}"

/* worker-image.c: PNG and JPEG made fit for the model. */
struct worker_image_info {
	u_int		 width, height;		/* as in the notebook */
	u_int		 sent_width, sent_height;
	const char	*sent_mime;
};
int		 worker_image_handles(const char *);
int		 worker_image_probe(const char *, const char *, size_t,
		     struct worker_image_info *);
char		*worker_image_fit(const char *, const char *, size_t, size_t,
		     struct worker_image_info *, char **);
struct worker_budget;
struct json_object *worker_image_show(struct worker_budget *, int,
		     const char *, const char *, size_t, struct evbuffer *);

/* worker-seen.c: what this session read of each run. */
#define WORKER_SEEN_RUNS	64	/* runs remembered */
void		 worker_seen_note(const char *, struct json_object *);
struct json_object *worker_seen_delta(const char *, struct json_object *);
void		 worker_seen_reset(void);

/* worker-range.c: a range of lines of a cell's outputs. */
struct json_object *worker_range_view(struct json_object *, size_t, size_t,
		     size_t *);

/* worker-html.c: an HTML output as text rows or text (decision 076). */
char		*worker_html_table(const char *, size_t, const char *,
		     const char *);
char		*worker_html_rows(const char *, size_t, const char *,
		     const char *, int *);
char		*worker_html_text(const char *, size_t, size_t);

/* worker-digest.c: a readable summary of a rich output (decision 076). */
#define WORKER_DIGEST_MIME	"text/x-runtimed-summary"
char		*worker_digest_plotly(struct json_object *, const char *);
char		*worker_digest_vega(const char *, struct json_object *,
		     const char *);
char		*worker_digest_widget(struct json_object *, const char *,
		     const char *);
char		*worker_digest_widget_state(struct json_object *,
		     struct json_object *, const char *);
char		*worker_digest_bundle(struct json_object *, const char *);
struct json_object *worker_digest_view(struct json_object *, const char *);

/* worker-figure.c: a figure drawn to a PNG by Chromium (decision 088). */
struct worker_figures;
void		 worker_figure_init(struct event_base *);
void		 worker_figure_shutdown(void);
void		 worker_figure_queue(struct worker_call *,
		     struct worker_budget *, struct json_object *, size_t);
int		 worker_figure_hold(struct worker_figures *, const char *,
		     struct json_object *);
void		 worker_figures_free(struct worker_figures *);

/* worker-traceback.c: library frames folded for the model. */
struct json_object *worker_traceback_fold(struct json_object *);
struct json_object *worker_traceback_view(struct json_object *);
void		 worker_traceback_lift(struct json_object *,
		    struct json_object *, struct evbuffer *);

/* worker-output.c: the compact shapes of cells and outputs. */
struct worker_budget {
	size_t		 cell_cap;	/* characters of outputs a cell */
	size_t		 result_left;	/* characters left in the result */
	int		 full;		/* uncapped: full_output */
	int		 images;	/* image blocks sent */
	size_t		 image_bytes;	/* their base64 */
	const char	*cell_id;	/* of the outputs capped now */
	int		 every_mime;	/* show every text representation */
	const char	*more;		/* the call a cut names, or NULL */
	const char	*original;	/* how a summary's original is read */
	int		 delta;		/* only what was not read before */
	size_t		 start_line;	/* a range of output lines, or 0 */
	size_t		 end_line;	/* 0: to the last */
};
void		 worker_budget_init(struct worker_budget *, int);
char		*worker_output_strip_ansi(const char *, size_t, size_t *);
char		*worker_output_join(struct json_object *, size_t *);
struct json_object *worker_output_cap(struct json_object *,
		     struct worker_budget *, struct evbuffer *, int *,
		     struct worker_call *);
const char	*worker_output_source(struct json_object *, size_t *);
void		 worker_output_version(struct json_object *,
		     struct json_object *, struct evbuffer *);
void		 worker_output_num(struct evbuffer *, const char *, long long);
void		 worker_output_lines(struct evbuffer *, const char *, size_t);
void		 worker_output_stale_mp(struct evbuffer *, const msgpack_object *);
void		 worker_output_by(struct evbuffer *, struct evbuffer *,
		     struct json_object *, const char *, size_t, const char *,
		     size_t, int);
size_t		 worker_output_stale_reason(const char *, size_t, const char **,
		     size_t *);
void		 worker_output_preview(struct evbuffer *, const char *,
		     size_t, size_t);
size_t		 worker_output_json_size(struct json_object *);
struct json_object *worker_output_exec(const struct worker_exec *,
		     struct worker_budget *, struct evbuffer *,
		     struct worker_call *);
int		 worker_output_terminal(const char *);
char		*worker_output_take(struct evbuffer *);
struct json_object *worker_output_kernel(struct json_object *);
const char	*worker_output_readiness(const char *);
void		 worker_output_view_put(struct json_object **,
		     struct json_object *, size_t, struct json_object *);
struct json_object *worker_output_copy_but(struct json_object *,
		     const char *);
struct json_object *worker_output_cursor(struct worker_room *, int64_t);
void		 worker_output_conflicts(struct json_object *,
		     struct json_object *, struct evbuffer *);
const char	*worker_nb_run_status(const struct worker_nb *, const char *);
void		 worker_output_attached(struct worker_call *,
		     struct worker_handle *, const struct worker_nb *);

/* worker-task.c: runs as MCP tasks (docs/decisions/024). */
#define WORKER_TASK_TTL_MS	3600000	/* finished records kept >= 1 h */
#define WORKER_TASK_POLL_MS	1000	/* pollInterval suggested */
#define WORKER_TASK_EXTENSION	"io.modelcontextprotocol/tasks"
enum worker_task_mode {
	WORKER_TASK_LEGACY,	/* 2025-11-25: the tasks utility */
	WORKER_TASK_UNDECLARED,	/* 2026-07-28 without the extension */
	WORKER_TASK_EXT,	/* 2026-07-28 with it (SEP-2663) */
};
void		 worker_task_request(const char *, struct json_object *,
		     struct json_object *, enum worker_task_mode);
void		 worker_task_cancel_id(struct json_object *);
void		 worker_task_created(struct worker_call *, struct worker_room *,
		     const msgpack_object *);
void		 worker_task_handle(struct worker_call *, struct worker_room *,
		     const msgpack_object *);
void		 worker_task_undeclared(struct json_object *);
const char	*worker_task_owner(void);
struct json_object *worker_task_capability(void);

/* worker-stdio.c and worker-proxy.c: the transports. */
int	 worker_stdio_start(struct event_base *);
int	 worker_proxy_start(struct event_base *, int);
void	 worker_proxy_upgrade(void);

/* worker.c */
__dead void worker_exit(int);

/* worker-crypto.c: a symbol of a library loaded late (also worker-tls.c). */
void	*worker_crypto_sym(void *, const char *, const char *);

#endif
