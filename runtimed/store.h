/* SPDX-License-Identifier: ISC */
/*
 * store.h: the daemon's durable state in SQLite (store.c).  Rooms are a
 * snapshot plus a journal of mutations after it; execution records are
 * blobs.  What the blobs hold is the callers' business (msgpack).
 */

#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_writer;
struct event_base;

struct store_room {
	const char	*notebook_id;
	const char	*path;		/* NULL when untitled */
	const char	*kernel;
	int		 dirty;
	uint64_t	 seq;		/* seq the snapshot stands for */
	const void	*snapshot;
	size_t		 snapshot_len;
	int		 damaged;	/* fails its checksum */
};

/* A file-backed notebook's id, and the file as last seen (files). */
struct store_file {
	const char	*path;		/* real path */
	const char	*notebook_id;
	int64_t		 dev;
	int64_t		 ino;		/* 0 = not yet written */
	int64_t		 size;
	int64_t		 mtime_ns;
};

/* File ids kept across restarts, the most recently seen (store_file_prune). */
#define STORE_FILES_KEPT	16384

typedef int (*store_room_cb)(const struct store_room *, void *);
typedef int (*store_file_cb)(const struct store_file *, void *);
typedef int (*store_journal_cb)(uint64_t, const void *, size_t, void *);
typedef int (*store_exec_cb)(const char *, const char *, const void *,
    size_t, void *);
/*
 * A writer job is done (in the loop): ok (1), else why not (0; a save
 * also -1: its target changed on disk, ATOMIC_CHANGED).
 */
typedef void (*store_writer_cb)(int, const char *, void *);
/* The rest of a save's file, written on the writer's thread: 0, or -1
 * with *cause. */
typedef int (*store_writer_fill)(void *, int, char **);

/* store.c */
struct store	*store_open(const char *, char **);
void		 store_close(struct store *);
const char	*store_damage(struct store *);
const char	*store_keep_aside(struct store *, char **);
int		 store_journal_lost(struct store *, const char *);
const char	*store_write_error(struct store *);
void		 store_set_write_error(struct store *, const char *);
int		 store_group_begin(struct store *, char **);
int		 store_group_commit(struct store *, char **);
int		 store_group_lost(struct store *);
int		 store_checkpoint(struct store *);
int		 store_room_snapshot(struct store *, const struct store_room *,
		     char **);
int		 store_journal_append(struct store *, const char *, uint64_t,
		     const void *, size_t, char **);
int		 store_room_forget(struct store *, const char *, char **);
int		 store_room_each(struct store *, store_room_cb, void *);
int		 store_room_get(struct store *, const char *, const char *,
		     store_room_cb, void *);
int		 store_journal_each(struct store *, const char *, uint64_t,
		     store_journal_cb, void *);
int64_t		 store_journal_bytes(struct store *, const char *);
int		 store_exec_put(struct store *, const char *, const char *,
		     int64_t, const void *, size_t, char **);
int		 store_exec_get(struct store *, const char *, char **,
		     void **, size_t *);
int		 store_exec_prune(struct store *, const char *, int, int64_t);
int		 store_exec_each(struct store *, store_exec_cb, void *);
typedef void	(*store_exec_list_cb)(const void *, size_t, int64_t, void *);
int		 store_exec_list(struct store *, const char *, int,
		     store_exec_list_cb, void *);
int		 store_file_put(struct store *, const struct store_file *,
		     char **);
int		 store_file_write(struct store *, const struct store_file *,
		     char **);
int		 store_file_get(struct store *, const char *, const char *,
		     store_file_cb, void *);
int		 store_file_each_inode(struct store *, int64_t, int64_t,
		     store_file_cb, void *);
int		 store_file_prune(struct store *, int);

/* store-writer.c */
struct store_writer *store_writer_create(struct store *, struct event_base *);
void		 store_writer_free(struct store_writer *);
void		 store_writer_sync(struct store_writer *);
void		 store_writer_journal(struct store_writer *, const char *,
		     uint64_t, void *, size_t, store_writer_cb, void *);
void		 store_writer_snapshot(struct store_writer *,
		     const struct store_room *, void *, store_writer_cb,
		     void *);
void		 store_writer_forget(struct store_writer *, const char *,
		     store_writer_cb, void *);
void		 store_writer_exec(struct store_writer *, const char *,
		     const char *, int, void *, size_t, store_writer_cb,
		     void *);
struct atomic;
void		 store_writer_save(struct store_writer *, struct atomic *,
		     store_writer_fill, void *, store_writer_cb, void *);
void		 store_writer_file(struct store_writer *,
		     const struct store_file *, store_writer_cb, void *);

/* store-wal.c: committed transactions SQLite would drop from the log. */
struct store_wal_loss {
	uint64_t	 offset;	/* where the log breaks */
	uint64_t	 frames;	/* sound frames after it */
	uint64_t	 commits;	/* of them, transactions' ends */
	char		**ids;		/* notebook ids in their pages */
	size_t		 nids;
	char		**paths;	/* .ipynb paths in their pages */
	size_t		 npaths;
};
int		 store_wal_check(const char *, struct store_wal_loss *);
void		 store_wal_loss_clear(struct store_wal_loss *);
#define STORE_WAL_MARK_LEN	32
void		 store_wal_mark_pack(unsigned char *, uint32_t, uint32_t,
		     uint32_t);
int		 store_wal_salts(int, uint32_t *, uint32_t *);
int		 store_wal_cut_check(const char *, uint64_t *, uint64_t *);

/* store-recover.c */
struct sqlite3;
int		 store_recover_copy(struct sqlite3 *, struct sqlite3 *,
		     char **, char ***, size_t *);

#endif
