/* SPDX-License-Identifier: ISC */
/*
 * runtimed.h: the room daemon's private header.  Structs first (each
 * owned by the file named in its comment), then prototypes per file.
 */

#ifndef RUNTIMED_H
#define RUNTIMED_H

#include <sys/types.h>

#include <stdint.h>

#include <sys/queue.h>

#include "common.h"
#include "store.h"

/* Finished runs kept per room, besides the active and queued ones. */
#define RUNTIMED_RUNS_KEPT	8
/* Seconds a kernel outlives its room's last client peer (room-kernel.c). */
#define RUNTIMED_KERNEL_KEEPALIVE	30
/* Kernels of the default kernelspec kept started (kernel-pool.c). */
#define RUNTIMED_WARM_POOL	1
/* How long a graceful stop waits for agents before SIGKILL. */
#define RUNTIMED_STOP_GRACE_MS	5000

enum room_cell_type {
	ROOM_CELL_CODE,
	ROOM_CELL_MARKDOWN,
	ROOM_CELL_RAW,
	ROOM_CELL_UNKNOWN,	/* a newer nbformat's type: kept, not run */
};

/* Hex digits of a cell's version (room-cell.c). */
#define ROOM_VERSION_LEN	8
#define ROOM_CELL_SEEN		8	/* versions of one content (room-cell.c) */

/*
 * Largest notebook file read (room-ipynb.c): checked from its size
 * before anything is allocated, and a file growing as it is read stops
 * here.  A JSON tree of this much text takes about as much again.
 */
#define ROOM_IPYNB_FILE_MAX	(512U * 1024 * 1024)

/* Characters of source an edit_conflict carries (room-nb.c). */
#define ROOM_CONFLICT_SOURCE_MAX	2000

/* Why a code cell's outputs may not match it (room-stale.c). */
#define ROOM_STALE_SOURCE	0x01	/* source_changed */
#define ROOM_STALE_KERNEL	0x02	/* kernel_restarted */
#define ROOM_STALE_NEVER_RUN	0x04	/* never_run */
#define ROOM_STALE_ORDER	0x08	/* out_of_order */
#define ROOM_STALE_UPSTREAM	0x10	/* upstream_changed (decision 072) */
#define ROOM_UNDEFINED_MAX	20	/* names an edit reply warns of */

/* room_cell flags. */
#define ROOM_CELL_NO_SOURCE	0x01	/* unknown type saved without source */
#define ROOM_CELL_MINTED	0x02	/* its file gave no usable id */
#define ROOM_CELL_UNDO		0x04	/* transient: room-undo.c's scan */

/*
 * Who last changed a cell's type or source, or made it (issue 39): a
 * client's edit batch (client, and session for an agent; the live page
 * has none) or a merge of the file (disk).  Shared by the cells one
 * batch touched (refs); never written into the .ipynb.
 */
struct room_author {
	int			 refs;
	int			 disk;
	char			*client;	/* NULL with disk */
	char			*session;	/* or NULL */
};

/*
 * One notebook cell (owned by room-nb.c).  Strings may hold NUL, so
 * source carries its length.  outputs is a packed list for code cells
 * (as the agent sent them, docs/decisions/097) and NULL otherwise.
 * metadata, attachments and extra are kept packed, the bytes mpjson_pack
 * gives of their JSON (docs/decisions/101); attachments is absent when
 * the cell has none.  extra holds, verbatim, every key of the cell that
 * its type does not define (absent when none), so a newer minor
 * version's fields survive.
 * version (with has_out and seen) is what room-cell.c keeps of the cell
 * as packed, its hash: whatever changes a cell in the notebook goes
 * through room-nb.c's setters or calls room_cell_touch (decision 101).
 */
struct room_cell {
	char			*id;
	enum room_cell_type	 type;
	char			*type_name;	/* ROOM_CELL_UNKNOWN only */
	char			*source;
	size_t			 source_len;
	struct mpvalue		 metadata;	/* a map */
	int64_t			 execution_count;	/* -1 = null */
	struct proto_outputs	*outputs;
	struct mpvalue		 attachments;	/* a map, or absent */
	struct mpvalue		 extra;		/* a map, or absent */
	int			 flags;		/* ROOM_CELL_* */
	size_t			 pos;	/* index in cells, with nb->ids */
	char			 version[ROOM_VERSION_LEN + 1]; /* "": none */
	int			 has_out;	/* with version */
	uint64_t		 edit_hash;	/* of what an edit changes */
	uint32_t		 seen[ROOM_CELL_SEEN];	/* versions of it */
	u_int			 nseen;
	struct pydefuse		*defuse;	/* room-stale.c, of source */
	struct room_author	*by;		/* last editor, or NULL */
};

/*
 * A notebook's content (owned by room-nb.c).  extra: the top-level keys
 * nbformat 4.5 does not define, verbatim, kept packed (decision 101;
 * absent when none).  warnings:
 * what the loader found wrong and how a save changes it, a json array
 * of {cell_index?, cell_id?, message, on_save} (NULL when none).
 * ids: an index of the cells by id, built by the first edit batch (once
 * the loader has settled every id) and kept by each one after; it grows
 * into a new table a few thousand entries per batch (ids_old), never
 * rehashing all at once.
 */
struct room_nb {
	struct mpvalue		 metadata;	/* a map, always (decision 105) */
	int			 nbformat;
	int			 nbformat_minor;
	struct room_cell	**cells;
	size_t			 ncells;
	struct mpvalue		 extra;		/* a map, or absent */
	struct json_object	*warnings;
	struct lh_table		*ids;	/* cell id -> cell, from 1st edit */
	struct lh_table		*ids_old;	/* being moved into ids */
	size_t			 ids_freed;	/* deletes in ids */
};

/* What changed in a room (ROOM_CHANGED kinds), as bits. */
#define ROOM_CHANGE_CELLS	PROTO_KIND_CELLS
#define ROOM_CHANGE_OUTPUTS	PROTO_KIND_OUTPUTS
#define ROOM_CHANGE_KERNEL	PROTO_KIND_KERNEL
#define ROOM_CHANGE_SAVED	PROTO_KIND_SAVED
#define ROOM_CHANGE_METADATA	PROTO_KIND_METADATA
#define ROOM_CHANGE_RELOADED	PROTO_KIND_RELOADED
/* Kinds that change notebook content (and so the dirty flag). */
#define ROOM_CHANGE_CONTENT	(ROOM_CHANGE_CELLS|ROOM_CHANGE_OUTPUTS|\
				 ROOM_CHANGE_METADATA)

/* Changes a room keeps for ROOM_CHANGES. */
#define ROOM_LOG_SIZE		1024

/* What an edit batch did (room-nb.c fills it). */
struct room_nb_result {
	char		**ids;		/* one per edit; NULL entries = nil */
	size_t		  nids;
	int		  kinds;	/* ROOM_CHANGE_* */
	char		**touched;	/* cell ids the batch touched */
	size_t		  ntouched;
	int		  index;	/* the failing edit, or -1 */
	/* edit_conflict: the cell as it is (conflict_id NULL otherwise). */
	char		 *conflict_id;
	char		  conflict_version[ROOM_VERSION_LEN + 1];
	char		 *conflict_source;	/* capped */
	size_t		  conflict_source_len;
	char		 *undo;		/* an undo's answer, packed */
	size_t		  undo_len;
};

struct room_nb_pending;
struct room_edits;
struct room_undo;
struct room_kernel;
struct room_execs;
struct room_log;
struct room_watch;
struct room_stale;
struct room_merge;
struct room_base;

/* How a cell's merge from disk conflicts (room-merge.c). */
enum room_conflict_kind {
	ROOM_CONFLICT_BOTH_EDITED,	/* the room and the file changed it */
	ROOM_CONFLICT_DELETED_ON_DISK,	/* the room changed it (or runs it) */
	ROOM_CONFLICT_DELETED_IN_ROOM,	/* the file changed it */
};

/*
 * A room: one open notebook, shared by every peer that joined it (owned
 * by room.c).  Everything that would be journaled lives here.
 */
struct room {
	char			 id[37];
	char			*path;	/* real path; NULL untitled */
	char			*kernel_name;
	struct room_nb		*nb;
	uint64_t		 seq;
	int			 dirty;
	int			 fresh;	/* created, never loaded */
	int			 file_stored;	/* path -> id in the store */
	int			 saves_inflight; /* written, not yet durable */
	uint64_t		 content_gen;	/* content changes so far */
	/* The next ready kernel's kernelspec and language_info go in. */
	int			 kernel_facts;

	/* What was on disk at load or last save, to notice changes. */
	int			 disk_known;
	dev_t			 disk_dev;
	ino_t			 disk_ino;
	off_t			 disk_size;
	int64_t			 disk_mtime_ns;

	struct peer		**members;
	size_t			 nmembers;

	struct room_kernel	*kernel;
	/* A server's kernel being shut down for a restart (room-kernel.c). */
	struct room_kernel	*kernel_leaving;
	char			*kernel_left;	/* why it may still run there */
	struct room_execs	*execs;

	/*
	 * Durability (room-journal.c).  A room is loaded (nb in memory) or
	 * dormant (only in the store, nb NULL).  jseq numbers journal
	 * entries, independent of seq, which also counts kernel changes.
	 */
	int			 loaded;
	uint64_t		 jseq;
	size_t			 journal_bytes;	/* since the snapshot */
	size_t			 snapshot_bytes;
	int			 persist_full;	/* changed outside the journal */
	int			 pend_metadata;	/* metadata not yet journaled */
	int			 persist_failing; /* the store refused; retrying */
	char			**pend_outputs;	/* cells with unjournaled outputs */
	size_t			 npend_outputs;
	struct event		*persist_ev;
	struct event		*compact_ev;	/* a large snapshot, when quiet */
	int			 edit_inflight;	/* its entry not yet durable */
	int			 snapshot_wanted; /* once it is */
	struct room_edits	*edits;		/* room-edit.c */
	struct room_undo	*undo;		/* room-undo.c, or NULL */

	struct room_log		*log;		/* room-changes.c */
	int64_t			 idle_since;	/* no peers, no kernel (ms) */
	struct event		*autosave_ev;	/* room-autosave.c */
	int64_t			 unsaved_since;	/* first unsaved change (ms) */
	struct room_watch	*watch;		/* room-watch.c */
	int			 reload_pending;
	struct room_stale	*stale;		/* room-stale.c */
	struct room_merge	*merge;		/* room-merge.c */
	struct room_remote	*remote;	/* room-remote.c; NULL local */
};

/* runtimed.c */
extern struct event_base	*runtimed_base;
extern struct proto_incarnation	 runtimed_incarnation;
extern char			*runtimed_state_dir;
extern struct store		*runtimed_store;
extern struct store_writer	*runtimed_writer;
extern int			 runtimed_log_level;
void	runtimed_stop(void);

/* runtimed-warn.c */
void	runtimed_warn(const char *, ...) printflike(1, 2);
void	runtimed_warn_pack(msgpack_packer *, const void *);
void	runtimed_warn_clear(void);

/* server.c */
int	server_start(const char *, char **, pid_t *);
void	server_stop_accepting(void);
void	server_shutdown_listener(void);
void	server_unlink_socket(void);
void	server_resume_accepting(void);
u_int	server_fds_open(void);
u_int	server_fds_limit(void);
u_int	server_peers_room(void);

/* server-activate.c */
int	server_activate_listener(char **, char **);
void	server_activate_notify_init(void);
void	server_activate_notify(const char *);

/* server-client.c */
struct peer *server_client_accept(int);
void	server_client_pack_peers(msgpack_packer *, const void *);
u_int	server_client_count(void);
void	server_client_free_all(void);

/* server-web.c */
extern const struct peer_dispatch server_web_table[];
void	server_web_ready(struct peer *, const char *, uint32_t,
	    const msgpack_object *);
void	server_web_peer_gone(struct peer *);
const char *server_web_address(void);
void	server_web_note_change(struct room *, const char *);

/* room.c */
struct room	*room_create(const char *, const char *, char **,
		     const char **);
struct room	*room_open(const char *, const char *, char **,
		     const char **);
void		 room_join(struct room *, struct peer *);
void		 room_leave(struct room *, struct peer *);
void		 room_changed(struct room *, struct peer *, const char *);
void		 room_changed_by(struct room *, const char *, const char *);
void		 room_cell_changed(struct room *, const char *, const char *,
		     const char *);
void		 room_start(void);
void		 room_set_grace(int64_t);
void		 room_disk_check(struct room *);
void		 room_reloaded(struct room *, struct room_nb *);
void		 room_pack_joined(struct room *, msgpack_packer *, int);
void		 room_pack_content(struct room *, msgpack_packer *, int,
		     const char *, int);
void		 room_pack_cell(msgpack_packer *, struct room_cell *);
int		 room_save(struct room *, const char *, int, char **,
		     const char **);
typedef void	(*room_save_cb)(struct room *, struct peer *, uint32_t,
		     const char *, const char *);
int		 room_save_start(struct room *, const char *, int,
		     struct peer *, uint32_t, room_save_cb, char **,
		     const char **);
void		 room_list_pack(msgpack_packer *);
u_int		 room_count(void);
void		 room_free_all(void);
struct room	*room_new(const char *, char *, const char *);
void		 room_loaded(struct room *);
void		 room_remove(struct room *);
struct room	*room_nth(size_t);

/* room-remote.c: rooms of notebooks on a Jupyter Server (domain.h). */
struct room_remote;
struct domain;
typedef void	(*room_remote_open_cb)(struct room *, struct peer *,
		     uint32_t, const char *, const char *);
int		 room_remote_open(const char *, const char *, struct peer *,
		     uint32_t, room_remote_open_cb, char **, const char **);
int		 room_remote_create(const char *, const char *,
		     const char *, struct peer *, uint32_t,
		     room_remote_open_cb, char **, const char **);
int		 room_remote_save(struct room *, const char *, int,
		     struct peer *, uint32_t, room_save_cb, char **,
		     const char **);
typedef void	(*room_remote_kernels_cb)(struct room *, struct peer *,
		     uint32_t, const char *, struct json_object *,
		     const char *);
void		 room_remote_kernels(struct room *, const char *,
		     struct peer *, uint32_t, room_remote_kernels_cb);
char		*room_remote_nb_kernel(struct room_nb *);
const char	*room_remote_domain_name(struct room *);
const char	*room_remote_path(struct room *);
char		*room_remote_kernel_dir(struct room *);
void		 room_remote_kernel_died(struct room *);
void		 room_remote_peer_gone(struct peer *);
void		 room_remote_free(struct room_remote *);
int		 room_remote_bound(struct room *);
int		 room_remote_server_lost(struct room *);
void		 room_remote_pack(struct room *, msgpack_packer *);
void		 room_remote_restore(struct room *, const void *, size_t);
void		 room_remote_kernel_ready(struct room *, const char *);
void		 room_remote_kernel_left(struct room *, int);
char		*room_remote_take_kernel(struct room *);
int		 room_remote_rejoin(const char *, const char *, const char *,
		     struct peer *, uint32_t, room_remote_open_cb, char **,
		     const char **);

/* room-cell.c */
void		 room_cell_pack(msgpack_packer *, struct room_cell *);
void		 room_cell_pack_read(msgpack_packer *, struct room_cell *,
		     int, const char *);
void		 room_cell_pack_ref(msgpack_packer *, struct room_cell *, int,
		     const char *);
uint64_t	 room_cell_run_hash(struct room_cell *, int, const char *);
void		 room_cell_version(struct room_cell *,
		     char [ROOM_VERSION_LEN + 1]);
void		 room_cell_touch(struct room_cell *);
struct room_author *room_author_create(const char *, const char *, int);
struct room_author *room_author_unpack(const msgpack_object *);
void		 room_author_ref(struct room_author *);
void		 room_author_unref(struct room_author *);
void		 room_author_pack(msgpack_packer *, const struct room_author *);
void		 room_cell_set_author(struct room_cell *,
		     struct room_author *);
int		 room_cell_same_content(struct room_cell *, const char *,
		     size_t);
int		 room_cell_has_out(struct room_cell *);

/* room-stale.c */
void		 room_stale_ran(struct room *, const char *, const char *,
		     size_t);
int		*room_stale_compute(struct room *, struct room_cell ***);
struct lh_table	*room_stale_defined(struct room *);
size_t		 room_stale_undefined(struct lh_table *, struct room_cell *,
		     const char **, size_t);
void		 room_stale_free(struct room *);

/* room-edit.c */
/* An edit batch's answer: cause NULL when applied, else code and cause. */
typedef void	(*room_edit_cb)(struct room *, struct peer *, uint32_t,
		    struct room_nb_result *, const char *, const char *);
void		 room_edit(struct room *, const struct proto_room_edit *, int,
		     struct peer *, uint32_t, room_edit_cb);
u_int		 room_edit_pending(struct room *);
void		 room_edit_peer_gone(struct room *, struct peer *);
void		 room_edit_free(struct room *);

/* room-undo.c: the last ROOM_UNDO_MAX batches, within ROOM_UNDO_MAX_BYTES. */
#define ROOM_UNDO_MAX			64
#define ROOM_UNDO_MAX_BYTES		(16 * 1024 * 1024)
#define ROOM_UNDO_RECORD_MAX		(4 * 1024 * 1024)
#define ROOM_UNDO_CONFLICTS_SHOWN	8
struct room_undo *room_undo_create(void);
void		 room_undo_free(struct room_undo *);
uint64_t	 room_undo_hash(struct room_cell *);
int		 room_undo_record(struct room_nb *, struct room_cell **,
		     size_t, struct room_cell **, size_t, char **, size_t,
		     uint64_t, const char *,
		     const char *, const uint64_t *, size_t, int,
		     msgpack_sbuffer *);
int		 room_undo_add(struct room_undo *, const char *, size_t);
size_t		 room_undo_count(struct room_undo *);
void		 room_undo_pack(struct room_undo *, msgpack_packer *);
void		 room_undo_restore(struct room_undo *, const msgpack_object *);
void		 room_undo_list(struct room_undo *, const char *, int, size_t,
		     msgpack_packer *);
int		 room_undo_plan(struct room_undo *, struct room_nb *,
		     const char *, int64_t, uint64_t, msgpack_sbuffer *,
		     uint64_t **, size_t *, char **, const char **);

/* room-changes.c */
void		 room_changes_create(struct room *);
void		 room_changes_clear(struct room *);
void		 room_changes_free(struct room *);
void		 room_changes_rebase(struct room *);
uint64_t	 room_changes_record(struct room *, int, char **, size_t,
		     const char *);
uint64_t	 room_changes_record_by(struct room *, int, char **, size_t,
		     const struct proto_change_detail *, size_t, const char *,
		     int64_t);
uint64_t	 room_changes_record_edit(struct room *,
		     const struct room_nb_result *, const char *, size_t,
		     char **, size_t, const char *, const char *);
void		 room_changes_announce(struct room *);
void		 room_changes_wait(struct room *, struct peer *, int, int,
		     uint64_t, int, int);
int		 room_changes_pack(struct room *, uint64_t, msgpack_packer *);
int		 room_changes_kind(const char *);

/* room-merge.c */
uint64_t	 room_merge_hash_in(struct room_cell *);
uint64_t	 room_merge_hash_out(struct room_cell *);
struct room_base *room_merge_base_make(struct room_nb *, int);
void		 room_merge_base_free(struct room_base *);
void		 room_merge_base_set(struct room *, struct room_base *);
int		 room_merge_has_base(struct room *);
u_int		 room_merge_nconflicts(struct room *);
const char	*room_merge_kind_name(enum room_conflict_kind);
void		 room_merge_free(struct room *);
void		 room_merge_disk(struct room *, struct room_nb *, int64_t);
void		 room_merge_later(struct room *);
void		 room_merge_pack(struct room *, msgpack_packer *);
int		 room_merge_rewrite(struct room *, const msgpack_object *,
		     msgpack_sbuffer *, char ***, size_t *, char **);
void		 room_merge_resolved(struct room *, char **, size_t);
int		 room_merge_stored(struct room *);
void		 room_merge_pack_state(struct room *, msgpack_packer *);
void		 room_merge_restore(struct room *, const msgpack_object *);

/* room-autosave.c */
void		 room_autosave_set(int, int64_t);
int		 room_autosave_enabled(void);
void		 room_autosave_arm(struct room *);
void		 room_autosave_cancel(struct room *);
void		 room_autosave_free(struct room *);

/* room-nb.c */
struct room_nb		*room_nb_create(void);
void			 room_nb_free(struct room_nb *);
struct room_cell	*room_nb_cell_create(struct room_nb *,
			     enum room_cell_type, const char *, size_t);
void			 room_nb_cell_set_id(struct room_nb *,
			     struct room_cell *, const char *, size_t);
struct room_cell	*room_nb_find(struct room_nb *, const char *, size_t *);
struct room_cell	*room_nb_ref(struct room_nb *, const msgpack_object *,
			     const char *, char **, const char **);
void			 room_nb_mint_id(struct room_nb *, char [9]);
int			 room_nb_valid_id(const char *, size_t);
const char		*room_nb_type_name(enum room_cell_type);
const char		*room_nb_cell_type_name(const struct room_cell *);
void			 room_nb_cell_set_type_name(struct room_cell *,
			     const char *, size_t);
int			 room_nb_cell_known_key(const struct room_cell *,
			     const char *);
void			 room_nb_warn(struct room_nb *, ssize_t,
			     const char *, const char *, const char *, ...)
			     printflike(5, 6);
int			 room_nb_edit(struct room_nb *,
			     const msgpack_object *, int, msgpack_packer *,
			     struct room_nb_result *, char **, const char **);
int			 room_nb_edit_prepare(struct room_nb *,
			     const msgpack_object *, int, msgpack_packer *,
			     struct room_nb_result *, struct room_nb_pending **,
			     char **, const char **);
void			 room_nb_edit_commit(struct room_nb *,
			     struct room_nb_pending *);
void			 room_nb_edit_abort(struct room_nb *,
			     struct room_nb_pending *);
struct room_cell	**room_nb_pending_cells(struct room_nb_pending *,
			     size_t *);
struct room_cell	**room_nb_pending_fresh(struct room_nb_pending *,
			     size_t *);
void			 room_nb_pending_author(struct room_nb *,
			     struct room_nb_pending *, struct room_author *);
void			 room_nb_result_free(struct room_nb_result *);
void			 room_nb_set_cells(struct room_nb *,
			     struct room_cell **, size_t);
void			 room_nb_cell_destroy(struct room_cell *);
void			 room_nb_clear_outputs(struct room_cell *);
void			 room_nb_cell_set_outputs(struct room_cell *,
			     struct proto_outputs *);
struct proto_outputs	*room_nb_outputs_new(void);
void			 room_nb_cell_set_count(struct room_cell *, int64_t);
void			 room_nb_cell_set_source(struct room_cell *,
			     const char *, size_t);

/* room-journal.c */
/* An edit's entry is durable (ok) or refused (cause). */
typedef void	(*room_journal_cb)(struct room *, int, const char *, void *);
int		 room_journal_snapshot(struct room *);
void		 room_journal_pack_nb(msgpack_packer *, struct room_nb *);
struct room_nb	*room_journal_unpack_nb(const msgpack_object *, char **);
void		 room_journal_edit(struct room *, const char *, size_t,
		     const char *, size_t, struct room_author *,
		     room_journal_cb, void *);
void		 room_journal_grown(struct room *);
void		 room_journal_keep(struct room *);
int		 room_journal_flush(struct room *);
void		 room_journal_later(struct room *);
int		 room_journal_recover(struct room *, char **);
int		 room_journal_check(const struct store_room *, char **);
void		 room_journal_forget(struct room *);
void		 room_journal_stop(struct room *);

/* room-watch.c */
void		 room_watch_add(struct room *);
void		 room_watch_remove(struct room *);
void		 room_watch_free_all(void);

/* room-upgrade.c */
struct json_object *room_upgrade_v4(struct json_object *, char **, char **);

/* room-ipynb.c */
struct room_nb	*room_ipynb_parse(const char *, size_t, char **);
struct room_nb	*room_ipynb_read(const char *, char **);
void		 room_ipynb_set_kernelspec(struct room_nb *, const char *,
		     const char *, const char *, struct json_object *);
extern const char *const room_ipynb_kernel_keys[];
int		 room_ipynb_has_kernelspec(struct room_nb *);
char		*room_ipynb_meta_str(struct room_nb *, const char *,
		     const char *, int *);

/* room-ipynb-write.c */
void		 room_ipynb_write_set_blob_dir(const char *);
char		*room_ipynb_write_dump(struct room_nb *, size_t *);
int		 room_ipynb_write_fd(struct room_nb *, int, const char *,
		     char **);
struct room_ipynb_tail;
int		 room_ipynb_write_start(struct room_nb *, int, const char *,
		     struct room_ipynb_tail **, char **);
int		 room_ipynb_tail_write(struct room_ipynb_tail *, int, char **);
const struct stat *room_ipynb_tail_stat(const struct room_ipynb_tail *);
void		 room_ipynb_tail_free(struct room_ipynb_tail *);
int		 room_ipynb_write(struct room_nb *, const char *, char **);

/* room-kernel.c */
extern int	 room_kernel_keepalive;
struct room_kernel *room_kernel_spawn(struct room *, const char *);
void		 room_kernel_detach(struct room_kernel *, int);
int		 room_kernel_replace(struct room *, struct peer *, uint32_t,
		     const char *);
void		 room_kernel_answer_retired(struct room *, struct peer *,
		     uint32_t);
void		 room_kernel_peers_changed(struct room *);
u_int		 room_kernel_processes(void);
int		 room_kernel_is_dead(struct room_kernel *);
int		 room_kernel_is_starting(struct room_kernel *);
const char	*room_kernel_name(struct room_kernel *);
const char	*room_kernel_session(struct room *);
void		 room_kernel_start(struct room *);
void		 room_kernel_want(struct room *);
void		 room_kernel_free(struct room *);
const char	*room_kernel_state(struct room *);
int		 room_kernel_ready(struct room *);
int		 room_kernel_dead(struct room *, const char **);
int64_t		 room_kernel_execute(struct room *, const char *,
		     const char *, const char *, size_t, char **);
int		 room_kernel_interrupt(struct room *);
int		 room_kernel_restart(struct room *, struct peer *, uint32_t);
void		 room_kernel_pack_info(struct room *, msgpack_packer *);
void		 room_kernel_reap(void);
u_int		 room_kernel_count(void);
u_int		 room_kernel_agents(void);
void		 room_kernel_list_pack(msgpack_packer *, const void *);
void		 room_kernel_shutdown_all(void);
void		 room_kernel_kill_all(void);
void		 room_kernel_peer_gone(struct peer *);
struct peer	*room_kernel_agent(struct room *);

/* room-exec.c */
void	room_exec_create(struct room *);
void	room_exec_free(struct room *);
extern const struct peer_dispatch room_exec_table[];
void	room_exec_kick(struct room *);
void	room_exec_started(struct room *,
	    const struct proto_agent_exec_started *);
void	room_exec_output(struct room *, const struct proto_agent_output *);
void	room_exec_clear(struct room *,
	    const struct proto_agent_clear_output *);
void	room_exec_done(struct room *, const struct proto_agent_exec_done *);
int	room_exec_refused(struct room *, uint32_t, const char *);
void	room_exec_kernel_died(struct room *, const char *);
void	room_exec_interrupt(struct room *, const char *);
void	room_exec_interrupt_by(struct room *, const char *, const char *,
	    msgpack_packer *);
u_int	room_exec_queue_length(struct room *);
int	room_exec_cell_busy(struct room *, const char *);
void	room_exec_pack_active(msgpack_packer *, const void *);
void	room_exec_peer_gone(struct peer *);
void	room_exec_wake(struct room *, const char *);

/* room-input.c */
extern const struct peer_dispatch room_input_table[];
void	room_input_request(struct room *,
	    const struct proto_agent_input_request *);
int	room_input_pending(struct room *, const char *);
void	room_input_pack(msgpack_packer *, const void *);
void	room_input_clear(struct room *);

/* kernel-introspect.c */
extern const struct peer_dispatch kernel_introspect_table[];
void	kernel_introspect_ask(struct room *, struct peer *, uint32_t,
	    uint16_t, const msgpack_object *);
int	kernel_introspect_interrupt(struct room *, struct peer *, uint32_t,
	    const char *, const char *);
int	kernel_introspect_answer(struct room *, struct peer *,
	    const struct proto_header *, const msgpack_object *);
void	kernel_introspect_peer_gone(struct peer *);
void	room_exec_flush(void);

/* room-record.c */
#define ROOM_RECORD_ORPHANED	\
	"the daemon restarted while this run was in flight"
const msgpack_object *room_record_normal(const msgpack_object *,
	    struct mpbuf *, msgpack_unpacked *);
int	room_record_ran(const msgpack_object *);
void	room_record_orphan(msgpack_packer *, const msgpack_object *, int64_t);
void	room_record_omit(msgpack_packer *, const msgpack_object *,
	    const char *);
void	room_record_task(msgpack_packer *, const msgpack_object *,
	    const char *, const char *, int);
int64_t	room_record_created_at(const msgpack_object *);
/* A line of EXEC_TASKS, packed, and what the list is sorted by. */
struct room_record_line {
	int64_t	 created_at;
	char	*data;
	size_t	 len;
};
int	room_record_line_cmp(const void *, const void *);

/* room-runs.c */
extern const struct peer_dispatch room_runs_table[];

/* kernel-pool.c */
void		 kernel_pool_set_size(int);
void		 kernel_pool_fill(void);
struct room_kernel *kernel_pool_take(const char *);
void		 kernel_pool_lost(struct room_kernel *);
void		 kernel_pool_stop(void);
u_int		 kernel_pool_size_get(void);
u_int		 kernel_pool_ready(void);

/* kernel-tidy.c */
void	kernel_tidy(const char *);

/* kernel-spec.c */
int	kernel_spec_check(const char *, char **);
void	kernel_spec_metadata(struct room_nb *, const char *);
extern const struct peer_dispatch kernel_spec_table[];

/* kernel-blob.c */
extern const struct peer_dispatch kernel_blob_table[];

#endif
