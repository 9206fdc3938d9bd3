/* SPDX-License-Identifier: ISC */
/*
 * room.c: rooms, one per notebook, keyed by real path and by id.
 *
 * A room is loaded (content in memory) or dormant (content only in the
 * state store, see room-journal.c).  Every stored room is known from
 * start-up on (dormant until someone opens it), so ROOM_LIST shows
 * untitled and unsaved notebooks after a crash.  A loaded room with no
 * peers and no kernel goes dormant after a grace period; a clean
 * file-backed one is then forgotten, its file being the whole truth.
 *
 * Every change bumps seq, is kept in a log of the last ROOM_LOG_SIZE
 * changes (ROOM_CHANGES) and is announced to every peer of the room
 * (room-changes.c); a file-backed room is saved a moment after its last
 * change (room-autosave.c).
 */

#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"
#include "domain.h"

static struct room	**room_all;
static size_t		  room_nall;

/*
 * A save or a files row on its way through the store writer: the file
 * is written by the loop, made durable (fsync, rename, fsync of the
 * directory) by the writer, and only then is the save answered and the
 * room clean.  r is NULL once the room is gone, peer once it left.
 */
struct room_ticket {
	struct room		*r;
	int			 file;		/* a files row, not a save */
	struct peer		*peer;
	uint32_t		 id;
	room_save_cb		 cb;
	char			*target;
	int			 same;
	uint64_t		 gen;		/* content_gen at the write */
	dev_t			 dev;		/* the new file */
	ino_t			 ino;
	off_t			 size;
	int64_t			 mtime_ns;
	struct room_ipynb_tail	*tail;		/* the writer's to write */
	struct room_base	*base;		/* what it wrote (room-merge.c) */
	TAILQ_ENTRY(room_ticket)  entry;
};

/* Stored rooms found damaged at start (room_start_one). */
struct room_start_damage {
	char		**ids;
	size_t		  n;
	char		 *names;	/* "path (notebook id): why; ..." */
	int		  unsaved;	/* some had content no file holds */
};

static TAILQ_HEAD(, room_ticket) room_tickets =
    TAILQ_HEAD_INITIALIZER(room_tickets);

static int64_t		  room_grace_ms = 60000;
static int		  room_grace_set;	/* by --room-grace */
static struct event	 *room_sweep_ev;

static void	room_sweep_arm(void);
static struct room	*room_find_path(const char *);
static struct room	*room_find_id(const char *, size_t);
static char	*room_canon_path(const char *, int *, char **);
static int	room_valid_kernel_name(const char *);
static void	room_note_disk(struct room *);
static void	room_save_expect(struct room *, struct atomic *, const char *,
		    int, int, int);
static int	room_disk_changed(struct room *);
static void	room_unload_content(struct room *);
static void	room_free(struct room *);
static int	room_start_one(const struct store_room *, void *);
static void	room_start_lost(struct room_start_damage *);
static void	room_start_forgot(int, const char *, void *);
static char	*room_nb_kernel(struct room_nb *);
static int	room_load_file(struct room *, char **);
static int	room_file_match(const struct store_file *, void *);
static int	room_file_renamed(const struct store_file *, void *);
static int	room_file_id(const char *, char [37], char **);
static void	room_file_store(struct room *);
static struct room	*room_open_file(char *, const char *, char **);
static struct room	*room_open_known(const char *, char **);
static int	room_wake(struct room *, int, char **);
static void	room_pack_path(struct room *, msgpack_packer *);
static void	room_pack_kernel(struct room *, msgpack_packer *);
static void	room_file_stored(int, const char *, void *);
static int	room_save_fill(void *, int, char **);
static void	room_saved(int, const char *, void *);
static int	room_disk_is_saving(struct room *, const struct stat *);
static int	room_idle(struct room *);
static int	room_unload(struct room *);
static void	room_sweep(evutil_socket_t, short, void *);
static u_int	room_loaded_count(void);
static void	room_pack_summary(struct room *, msgpack_packer *);

/* Rooms with content in memory. */
static u_int
room_loaded_count(void)
{
	size_t	i;
	u_int	n = 0;

	for (i = 0; i < room_nall; i++)
		n += room_all[i]->loaded;
	return (n);
}

/* The i-th room, NULL past the last. */
struct room *
room_nth(size_t i)
{
	return (i < room_nall ? room_all[i] : NULL);
}

u_int
room_count(void)
{
	return (room_loaded_count());
}

void
room_set_grace(int64_t ms)
{
	room_grace_ms = ms;
	room_grace_set = 1;
}

/* The room of a path, or the one whose save-as to it is in flight. */
static struct room *
room_find_path(const char *path)
{
	struct room_ticket	*t;
	size_t			 i;

	for (i = 0; i < room_nall; i++) {
		if (room_all[i]->path != NULL &&
		    strcmp(room_all[i]->path, path) == 0)
			return (room_all[i]);
	}
	TAILQ_FOREACH(t, &room_tickets, entry) {
		if (t->r != NULL && !t->file && !t->same &&
		    strcmp(t->target, path) == 0)
			return (t->r);
	}
	return (NULL);
}

static struct room *
room_find_id(const char *id, size_t len)
{
	size_t	i;

	for (i = 0; i < room_nall; i++) {
		if (strlen(room_all[i]->id) == len &&
		    memcmp(room_all[i]->id, id, len) == 0)
			return (room_all[i]);
	}
	return (NULL);
}

/*
 * The canonical name of a notebook path: realpath when the file exists,
 * else the real path of its directory plus the file name; a dangling
 * symlink stands for its target (atomic_resolve).  Caller frees.
 */
static char *
room_canon_path(const char *path, int *exists, char **cause)
{
	char	*copy, *dir, *base, *rdir, *out, *target;

	if (*path == '\0') {
		xasprintf(cause, "empty path");
		return (NULL);
	}
	/* Another user's link in /tmp is never followed (sticky.c). */
	if (sticky_check(path, cause) != 0)
		return (NULL);
	if ((out = util_realpath_new(path)) != NULL) {
		*exists = 1;
		return (out);
	}
	*exists = 0;
	if ((target = atomic_resolve(path, cause)) == NULL)
		return (NULL);
	copy = xstrdup(target);
	dir = dirname(copy);
	if ((rdir = util_realpath_new(dir)) == NULL) {
		xasprintf(cause, "directory %s does not exist", dir);
		free(copy);
		free(target);
		return (NULL);
	}
	free(copy);
	copy = xstrdup(target);
	base = basename(copy);
	if (strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		xasprintf(cause, "%s is not a file name", path);
		free(copy);
		free(rdir);
		free(target);
		return (NULL);
	}
	xasprintf(&out, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base);
	free(copy);
	free(rdir);
	free(target);
	return (out);
}

static int
room_valid_kernel_name(const char *name)
{
	size_t	len = strlen(name);

	if (len == 0 || len > 128)
		return (0);
	return (strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len);
}

/* Remember what the file looked like, to notice outside changes. */
static void
room_note_disk(struct room *r)
{
	struct stat	sb;

	/* lstat: a link put at the real path is a change (issue 36). */
	r->disk_known = 0;
	if (r->path == NULL || lstat(r->path, &sb) != 0)
		return;
	r->disk_known = 1;
	r->disk_dev = sb.st_dev;
	r->disk_ino = sb.st_ino;
	r->disk_size = sb.st_size;
	r->disk_mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
	    sb.st_mtim.tv_nsec;
}

static int
room_disk_changed(struct room *r)
{
	struct stat	sb;

	if (lstat(r->path, &sb) != 0)
		return (0);	/* gone: writing it back loses nothing */
	if (room_disk_is_saving(r, &sb))
		return (0);	/* our save, renamed, not yet answered */
	if (!r->disk_known)
		return (1);	/* appeared since we created the room */
	return (sb.st_dev != r->disk_dev || sb.st_ino != r->disk_ino ||
	    sb.st_size != r->disk_size ||
	    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec !=
	    r->disk_mtime_ns);
}

/* Is the file on disk one of the room's saves still in flight? */
static int
room_disk_is_saving(struct room *r, const struct stat *sb)
{
	struct room_ticket	*t;

	/*
	 * A save with a tail is still growing on the file thread: its
	 * temporary's inode is the match until it is done (decision 038).
	 */
	TAILQ_FOREACH(t, &room_tickets, entry) {
		if (t->r == r && !t->file && t->dev == sb->st_dev &&
		    t->ino == sb->st_ino && (t->tail != NULL ||
		    (t->size == sb->st_size && t->mtime_ns ==
		    (int64_t)sb->st_mtim.tv_sec * 1000000000 +
		    sb->st_mtim.tv_nsec)))
			return (1);
	}
	return (0);
}

/* A room in room_all; id NULL mints one.  Content comes later. */
struct room *
room_new(const char *id, char *path, const char *kernel)
{
	struct room	*r;

	r = xcalloc(1, sizeof *r);
	if (id != NULL)
		snprintf(r->id, sizeof r->id, "%s", id);
	else
		util_uuid(r->id);
	r->path = path;
	r->kernel_name = xstrdup(kernel);
	room_changes_create(r);
	room_all = xreallocarray(room_all, room_nall + 1, sizeof *room_all);
	room_all[room_nall++] = r;
	room_exec_create(r);
	return (r);
}

/* Drop the content, keep the room known (dormant). */
static void
room_unload_content(struct room *r)
{
	room_edit_free(r);
	room_journal_stop(r);
	room_watch_remove(r);
	room_autosave_free(r);
	room_merge_free(r);
	room_undo_free(r->undo);
	r->undo = NULL;
	room_nb_free(r->nb);
	r->nb = NULL;
	r->loaded = 0;
	room_changes_clear(r);
}

static void
room_free(struct room *r)
{
	struct room_ticket	*t;

	TAILQ_FOREACH(t, &room_tickets, entry) {
		if (t->r == r)
			t->r = NULL;
	}
	room_exec_free(r);
	room_kernel_free(r);
	room_unload_content(r);
	room_changes_free(r);
	room_stale_free(r);
	free(r->members);
	free(r->path);
	free(r->kernel_name);
	room_remote_free(r->remote);
	free(r);
}

/* Take a room out of room_all and free it. */
void
room_remove(struct room *r)
{
	size_t	i;

	for (i = 0; i < room_nall; i++) {
		if (room_all[i] == r) {
			memmove(&room_all[i], &room_all[i + 1],
			    (room_nall - i - 1) * sizeof *room_all);
			room_nall--;
			break;
		}
	}
	room_free(r);
}

void
room_free_all(void)
{
	size_t	i;

	for (i = 0; i < room_nall; i++) {
		if (room_all[i]->loaded && room_journal_flush(room_all[i]) != 0)
			log_warnx("room %s: its latest outputs or metadata "
			    "could not be stored before stopping",
			    room_all[i]->id);
		room_free(room_all[i]);
	}
	free(room_all);
	room_all = NULL;
	room_nall = 0;
	if (room_sweep_ev != NULL) {
		event_free(room_sweep_ev);
		room_sweep_ev = NULL;
	}
	room_watch_free_all();
}

/* Names given in the warning at most; the rest are counted. */
#define ROOM_START_NAMED	32

/*
 * A stored room becomes a dormant room at start-up, if what is stored
 * of it can be read back whole; a damaged one is not restored (never as
 * an empty or partial notebook) and is named in one warning.
 */
static int
room_start_one(const struct store_room *sr, void *arg)
{
	struct room_start_damage	*d = arg;
	struct room			*r;
	char				*why = NULL, *old;
	int				 unsaved;

	if (room_find_id(sr->notebook_id, strlen(sr->notebook_id)) != NULL)
		return (0);
	if (strlen(sr->notebook_id) >= sizeof r->id)
		return (0);
	/*
	 * A file-backed room whose journal lost entries to a recovery would
	 * come back as a mix of edits no one made (and be autosaved over
	 * its file): its file, as last saved, is what opens.
	 */
	if (sr->path != NULL && store_journal_lost(runtimed_store,
	    sr->notebook_id))
		xasprintf(&why, "edits in its journal were lost with the "
		    "damaged pages");
	if (why != NULL || room_journal_check(sr, &why) != 0) {
		/* A clean room's file holds all of it: nothing is lost. */
		unsaved = sr->path == NULL || sr->dirty ||
		    store_journal_bytes(runtimed_store, sr->notebook_id) != 0;
		d->unsaved |= unsaved;
		d->ids = xreallocarray(d->ids, d->n + 1, sizeof *d->ids);
		d->ids[d->n++] = xstrdup(sr->notebook_id);
		if (d->n <= ROOM_START_NAMED) {
			old = d->names;
			xasprintf(&d->names, "%s%s%s (notebook %s): %s%s",
			    old != NULL ? old : "", old != NULL ? "; " : "",
			    sr->path != NULL ? sr->path : "untitled",
			    sr->notebook_id, why, unsaved ? "" :
			    " (it was saved: nothing is lost)");
			free(old);
		}
		log_warnx("room %s (%s): not restored: %s", sr->notebook_id,
		    sr->path != NULL ? sr->path : "untitled", why);
		free(why);
		return (0);
	}
	r = room_new(sr->notebook_id, sr->path != NULL ?
	    xstrdup(sr->path) : NULL, sr->kernel);
	if (sr->path == NULL)
		room_remote_restore(r, sr->snapshot, sr->snapshot_len);
	/* Journal after the snapshot: content the file does not have. */
	r->dirty = sr->dirty ||
	    store_journal_bytes(runtimed_store, sr->notebook_id) != 0;
	log_info("room %s stored (%s%s%s%s)", r->id, r->path != NULL ?
	    r->path : r->remote != NULL ? room_remote_path(r) : "untitled",
	    r->remote != NULL ? " on " : "", r->remote != NULL ?
	    room_remote_domain_name(r) : "", r->dirty ? ", unsaved changes" :
	    "");
	return (0);
}

/* At start: know every stored room; start the idle sweep. */
void
room_start(void)
{
	struct room_start_damage	 d;
	const char	*env;
	char		*end;
	long long	 v;

	if (!room_grace_set &&
	    (env = getenv("RUNTIMED_ROOM_GRACE_MS")) != NULL) {
		v = strtoll(env, &end, 10);
		if (*env != '\0' && *end == '\0' && v >= 0)
			room_grace_ms = v;
	}
	if ((env = getenv("RUNTIMED_AUTOSAVE")) != NULL &&
	    strcmp(env, "0") == 0)
		room_autosave_set(0, -1);
	room_ipynb_write_set_blob_dir(runtimed_state_dir);
	if (runtimed_store != NULL &&
	    store_file_prune(runtimed_store, STORE_FILES_KEPT) > 0)
		log_info("forgot the ids of files not seen since the last "
		    "%d", STORE_FILES_KEPT);
	memset(&d, 0, sizeof d);
	if (runtimed_store != NULL &&
	    store_room_each(runtimed_store, room_start_one, &d) < 0)
		runtimed_warn("not every stored notebook could be read from "
		    "the state database; %zu are known", room_nall);
	if (d.n > 0)
		room_start_lost(&d);
	room_sweep_arm();
}

/*
 * Say which stored notebooks could not be restored and why, where the
 * store as it was is kept, and forget their rows: the copy aside holds
 * them, and a notebook with a file then opens as the file was saved
 * instead of failing (or coming back empty) every time.  If no copy can
 * be made, the rows stay for the next start.
 */
static void
room_start_lost(struct room_start_damage *d)
{
	const char	*kept;
	char		*cause = NULL, *more = NULL;
	size_t		 i;

	kept = store_keep_aside(runtimed_store, &cause);
	if (d->n > ROOM_START_NAMED)
		xasprintf(&more, "; and %zu more (the log names each)",
		    d->n - ROOM_START_NAMED);
	runtimed_warn("%zu stored notebook%s could not be restored from the "
	    "state database, what it holds of them damaged: %s%s; %s%s%s%s",
	    d->n, d->n == 1 ? "" : "s", d->names, more != NULL ? more : "",
	    d->unsaved ? "what was not saved to a file is only in " :
	    "the damaged store is ", kept != NULL ? "the copy of the store "
	    "kept as " : "the store (no copy could be kept: ",
	    kept != NULL ? kept : cause, kept != NULL ? "; a notebook with a "
	    "file opens as the file was last saved" : ")");
	for (i = 0; i < d->n; i++) {
		if (kept != NULL && runtimed_writer != NULL)
			store_writer_forget(runtimed_writer, d->ids[i],
			    room_start_forgot, d->ids[i]);
		else
			free(d->ids[i]);
	}
	free(more);
	free(cause);
	free(d->ids);
	free(d->names);
}

static void
room_start_forgot(int ok, const char *cause, void *arg)
{
	if (!ok)
		log_warnx("room %s: its damaged rows stay in the store: %s",
		    (char *)arg, cause);
	free(arg);
}

/* A fresh room is loaded, stored and watched. */
void
room_loaded(struct room *r)
{
	r->loaded = 1;
	room_changes_rebase(r);
	r->idle_since = 0;
	room_watch_add(r);
}

/* ROOM_CREATE: an untitled room, or a room for a file not yet written. */
struct room *
room_create(const char *path, const char *kernel, char **cause,
    const char **code)
{
	struct room	*r;
	char		*canon = NULL;
	int		 exists;

	*code = PROTO_E_INVALID_ARGUMENT;
	if (kernel == NULL)
		kernel = "python3";
	if (!room_valid_kernel_name(kernel)) {
		xasprintf(cause, "invalid kernel name \"%s\"", kernel);
		return (NULL);
	}
	if (kernel_spec_check(kernel, cause) != 0) {
		*code = PROTO_E_KERNEL_UNAVAILABLE;
		return (NULL);
	}
	if (path != NULL) {
		if ((canon = room_canon_path(path, &exists, cause)) == NULL)
			return (NULL);
		if (exists) {
			xasprintf(cause, "%s: file exists; use "
			    "connect_notebook", path);
			free(canon);
			return (NULL);
		}
		if (room_find_path(canon) != NULL) {
			xasprintf(cause, "%s: already open as a new notebook; "
			    "use connect_notebook", path);
			free(canon);
			return (NULL);
		}
	}
	r = room_new(NULL, canon, kernel);
	r->nb = room_nb_create();
	/* A new notebook names its kernel before one runs (kernel.json). */
	kernel_spec_metadata(r->nb, kernel);
	r->kernel_facts = 1;
	r->fresh = 1;
	r->dirty = canon != NULL;
	if (canon != NULL)
		room_merge_base_set(r, room_merge_base_make(r->nb, 0));
	room_loaded(r);
	/* An untitled notebook is nothing but its stored copy. */
	if (room_journal_snapshot(r) != 0 || room_journal_flush(r) != 0) {
		*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
		xasprintf(cause, "the notebook was not created: the state "
		    "database cannot store it (%s); free disk space for %s, "
		    "then retry", runtimed_store != NULL ?
		    store_write_error(runtimed_store) : "no store",
		    runtimed_state_dir);
		room_remove(r);
		return (NULL);
	}
	/* From now on the path names this notebook, not an older one. */
	room_file_store(r);
	log_info("room %s created for %s (kernel %s)", r->id,
	    canon != NULL ? canon : "untitled", kernel);
	if (r->dirty)
		room_autosave_arm(r);
	/* No kernel yet: the first run starts one (decision 018). */
	return (r);
}

/* The kernelspec a notebook names, when it is a valid name.  Caller frees. */
static char *
room_nb_kernel(struct room_nb *nb)
{
	char	*s;

	if ((s = room_ipynb_meta_str(nb, "kernelspec", "name", NULL)) != NULL &&
	    !room_valid_kernel_name(s)) {
		free(s);
		s = NULL;
	}
	return (s);
}

/* Load r's content from its file (r->path); keeps the id. */
static int
room_load_file(struct room *r, char **cause)
{
	struct room_nb	*nb;
	struct stat	 sb;
	char		*kernel;

	if (stat(r->path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s: not a regular file", r->path);
		return (-1);
	}
	if ((nb = room_ipynb_read(r->path, cause)) == NULL)
		return (-1);
	/* What a save interrupted by a crash left beside the file. */
	atomic_sweep(r->path);
	room_nb_free(r->nb);
	r->nb = nb;
	if ((kernel = room_nb_kernel(nb)) != NULL) {
		free(r->kernel_name);
		r->kernel_name = kernel;
	}
	r->dirty = 0;
	r->fresh = 0;
	room_note_disk(r);
	room_merge_base_set(r, room_merge_base_make(nb, 1));
	return (0);
}

/* What room_file_id is after, and found. */
struct room_file_find {
	const char	*path;		/* the real path being opened */
	struct stat	 sb;
	char		 id[37];
	char		*was;		/* the stored path of that id */
};

/* store_file_get's row: its id, unless a room has it already. */
static int
room_file_match(const struct store_file *f, void *arg)
{
	struct room_file_find	*ff = arg;

	free(ff->was);
	ff->was = xstrdup(f->path);
	if (strlen(f->notebook_id) < sizeof ff->id &&
	    room_find_id(f->notebook_id, strlen(f->notebook_id)) == NULL)
		snprintf(ff->id, sizeof ff->id, "%s", f->notebook_id);
	return (1);
}

/*
 * A row of the same inode: the file renamed while no room had it, if it
 * is unchanged (size, mtime) and its old name is gone.  A hard link's
 * other name still exists, so it is another notebook.
 */
static int
room_file_renamed(const struct store_file *f, void *arg)
{
	struct room_file_find	*ff = arg;
	struct stat		 sb;
	int64_t			 mtime;

	mtime = (int64_t)ff->sb.st_mtim.tv_sec * 1000000000 +
	    ff->sb.st_mtim.tv_nsec;
	if (f->size != (int64_t)ff->sb.st_size || f->mtime_ns != mtime ||
	    strcmp(f->path, ff->path) == 0 || strlen(f->notebook_id) >=
	    sizeof ff->id)
		return (0);
	if (lstat(f->path, &sb) == 0 || errno != ENOENT)
		return (0);
	if (room_find_id(f->notebook_id, strlen(f->notebook_id)) != NULL ||
	    room_find_path(f->path) != NULL)
		return (0);
	log_info("%s was %s (same file, renamed): it keeps notebook id %s",
	    ff->path, f->path, f->notebook_id);
	snprintf(ff->id, sizeof ff->id, "%s", f->notebook_id);
	return (1);
}

/*
 * The notebook id a file had (id[0] = '\0' when none: a new one is
 * minted).  A store that cannot be read is an error, never "no id".
 */
static int
room_file_id(const char *path, char id[37], char **cause)
{
	struct room_file_find	ff;
	int			rc;

	id[0] = '\0';
	if (runtimed_store == NULL)
		return (0);
	memset(&ff, 0, sizeof ff);
	ff.path = path;
	rc = store_file_get(runtimed_store, path, NULL, room_file_match, &ff);
	if (rc == 0 && stat(path, &ff.sb) == 0)
		rc = store_file_each_inode(runtimed_store, ff.sb.st_dev,
		    ff.sb.st_ino, room_file_renamed, &ff);
	free(ff.was);
	if (rc < 0) {
		xasprintf(cause, "%s: the state database cannot be read, so "
		    "the notebook id this file had is unknown (%s); see "
		    "runtimed status", path, store_write_error(runtimed_store)
		    != NULL ? store_write_error(runtimed_store) : "read error");
		return (-1);
	}
	snprintf(id, 37, "%s", ff.id);
	return (0);
}

/*
 * Store which id the room's file has, with the file as it is now (for
 * rename detection).  A failure is retried at the next save or unload.
 */
static void
room_file_store(struct room *r)
{
	struct store_file	 f;
	struct room_ticket	*t;
	struct stat		 sb;
	char			*cause = NULL;

	if (r->path == NULL || runtimed_store == NULL)
		return;
	memset(&f, 0, sizeof f);
	f.path = r->path;
	f.notebook_id = r->id;
	if (stat(r->path, &sb) == 0) {
		f.dev = sb.st_dev;
		f.ino = sb.st_ino;
		f.size = sb.st_size;
		f.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
		    sb.st_mtim.tv_nsec;
	}
	/* Through the writer: the loop does not wait for the disk. */
	if (runtimed_writer != NULL) {
		t = xcalloc(1, sizeof *t);
		t->r = r;
		t->file = 1;
		TAILQ_INSERT_TAIL(&room_tickets, t, entry);
		store_writer_file(runtimed_writer, &f, room_file_stored, t);
		return;
	}
	if (store_file_put(runtimed_store, &f, &cause) != 0) {
		log_warnx("room %s: the id of %s is not stored: %s", r->id,
		    r->path, cause);
		free(cause);
		r->file_stored = 0;
		return;
	}
	r->file_stored = 1;
}

/* A files row is durable, or not (retried at the next save or unload). */
static void
room_file_stored(int ok, const char *cause, void *arg)
{
	struct room_ticket	*t = arg;
	struct room		*r = t->r;

	TAILQ_REMOVE(&room_tickets, t, entry);
	free(t);
	if (r == NULL)
		return;
	if (!ok)
		log_warnx("room %s: the id of %s is not stored: %s", r->id,
		    r->path != NULL ? r->path : "its file", cause);
	r->file_stored = ok;
}

/* Bring a dormant room back: from its file when clean, else the store. */
static int
room_wake(struct room *r, int by_id, char **cause)
{
	char	*why = NULL;

	if (r->path != NULL && !r->dirty) {
		if (access(r->path, F_OK) != 0) {
			xasprintf(cause, "%s: no such file", r->path);
			return (-1);
		}
		if (room_load_file(r, cause) != 0)
			return (-1);
		/* Who wrote each cell, and the batches, are not in the file. */
		room_journal_keep(r);
		room_loaded(r);
		room_journal_snapshot(r);
		return (0);
	}
	if (room_journal_recover(r, &why) != 0) {
		xasprintf(cause, "notebook %s cannot be recovered: %s", r->id,
		    why);
		free(why);
		return (-1);
	}
	/*
	 * A file-backed room whose file vanished since it was saved: its
	 * unsaved copy comes back only when asked for by id, so a path
	 * never silently stands for a stale copy.
	 */
	if (r->path != NULL && !by_id && !r->fresh &&
	    access(r->path, F_OK) != 0) {
		xasprintf(cause, "%s: no such file; its unsaved changes are "
		    "kept: open notebook_id %s to get them back, then save",
		    r->path, r->id);
		room_nb_free(r->nb);
		r->nb = NULL;
		return (-1);
	}
	/* A save a crash interrupted left its temporary beside the file. */
	if (r->path != NULL)
		atomic_sweep(r->path);
	log_info("room %s recovered (%s, seq %llu)", r->id, r->path != NULL ?
	    r->path : "untitled", (unsigned long long)r->seq);
	room_loaded(r);
	if (r->dirty)
		room_autosave_arm(r);
	/*
	 * The file may have changed while no daemon watched it: a person's
	 * edit, or our own save that landed after the last snapshot (killed
	 * between the rename and the snapshot).  The two cannot be told
	 * apart, and merging our own save against the older base would
	 * bring back what was deleted since it (an acknowledged edit lost,
	 * found by tests/rooms/chaos.sh): a dirty room then keeps its
	 * content, as before decision 056, and saves need force.
	 */
	if (r->path != NULL && r->dirty && room_merge_has_base(r) &&
	    room_disk_changed(r)) {
		log_info("room %s: %s changed since the snapshot; its base is "
		    "not trusted", r->id, r->path);
		room_merge_base_set(r, NULL);
	}
	if (r->path != NULL)
		room_disk_check(r);
	return (0);
}

/*
 * A room for an existing file no room has (canon, which it takes), with
 * the id the file had, else a new one; loaded and stored.
 */
static struct room *
room_open_file(char *canon, const char *id, char **cause)
{
	struct room	*r;
	char		 had[37];

	if (id == NULL) {
		if (room_file_id(canon, had, cause) != 0) {
			free(canon);
			return (NULL);
		}
		if (*had != '\0')
			id = had;
	}
	r = room_new(id, canon, "python3");
	if (room_load_file(r, cause) != 0) {
		room_remove(r);
		return (NULL);
	}
	log_info("room %s opened %s (kernel %s)", r->id, r->path,
	    r->kernel_name);
	room_loaded(r);
	room_journal_snapshot(r);
	room_file_store(r);
	return (r);
}

/*
 * ROOM_OPEN of an id no room has: a file that had that id is opened
 * again, if it is still there under that name.
 */
static struct room *
room_open_known(const char *id, char **cause)
{
	struct room_file_find	 ff;
	struct room		*r;
	char			*canon, *why = NULL;
	int			 rc, exists;

	if (runtimed_store == NULL) {
		xasprintf(cause, "no notebook has id %s", id);
		return (NULL);
	}
	memset(&ff, 0, sizeof ff);
	rc = store_file_get(runtimed_store, NULL, id, room_file_match, &ff);
	if (rc < 0) {
		xasprintf(cause, "notebook %s: the state database cannot be "
		    "read (see runtimed status); connect_notebook by its path "
		    "instead", id);
		return (NULL);
	}
	if (rc == 0) {
		xasprintf(cause, "no notebook has id %s", id);
		return (NULL);
	}
	if ((canon = room_canon_path(ff.was, &exists, &why)) == NULL ||
	    !exists || strcmp(canon, ff.was) != 0) {
		free(why);
		xasprintf(cause, "notebook %s was the file %s, which is no "
		    "longer there (moved or deleted); connect_notebook by the "
		    "path it has now", id, ff.was);
		free(canon);
		free(ff.was);
		return (NULL);
	}
	free(ff.was);
	if ((r = room_find_path(canon)) != NULL) {
		xasprintf(cause, "notebook %s was the file %s, which is now "
		    "notebook %s", id, canon, r->id);
		free(canon);
		return (NULL);
	}
	return (room_open_file(canon, id, cause));
}

/* ROOM_OPEN: the room for a path or id, loading or recovering it. */
struct room *
room_open(const char *path, const char *id, char **cause, const char **code)
{
	struct room	*r;
	char		*canon, *why = NULL;
	int		 exists;

	*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
	if (id != NULL) {
		if ((r = room_find_id(id, strlen(id))) == NULL) {
			if ((r = room_open_known(id, cause)) == NULL)
				return (NULL);
			goto found;
		}
		if (!r->loaded && r->remote != NULL) {
			/* Its server wakes it (room-remote.c), not the store. */
			*code = PROTO_E_INVALID_ARGUMENT;
			xasprintf(cause, "notebook %s is %s on domain %s: open "
			    "it with that path and domain", id,
			    room_remote_path(r), room_remote_domain_name(r));
			return (NULL);
		}
		if (!r->loaded && room_wake(r, 1, cause) != 0)
			return (NULL);
		goto found;
	}
	if ((canon = room_canon_path(path, &exists, &why)) == NULL) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		return (NULL);
	}
	if ((r = room_find_path(canon)) != NULL) {
		free(canon);
		if (!r->loaded && room_wake(r, 0, cause) != 0)
			return (NULL);
		goto found;
	}
	if (!exists) {
		xasprintf(cause, "%s: no such file", path);
		free(canon);
		return (NULL);
	}
	if ((r = room_open_file(canon, NULL, cause)) == NULL)
		return (NULL);
found:
	/* No kernel is started to read a notebook (decision 018). */
	return (r);
}

void
room_join(struct room *r, struct peer *p)
{
	r->members = xreallocarray(r->members, r->nmembers + 1,
	    sizeof *r->members);
	r->members[r->nmembers++] = p;
	r->idle_since = 0;
	room_kernel_peers_changed(r);
}

void
room_leave(struct room *r, struct peer *p)
{
	struct room_ticket	*t;
	size_t			 i;

	room_edit_peer_gone(r, p);
	room_changes_wait(r, p, 0, 0, 0, 0, 0);
	TAILQ_FOREACH(t, &room_tickets, entry) {
		if (t->r == r && t->peer == p)
			t->peer = NULL;
	}
	for (i = 0; i < r->nmembers; i++) {
		if (r->members[i] == p) {
			memmove(&r->members[i], &r->members[i + 1],
			    (r->nmembers - i - 1) * sizeof *r->members);
			r->nmembers--;
			room_kernel_peers_changed(r);
			return;
		}
	}
}

/*
 * Something in the room changed that room.c did not do itself (kernel
 * state, outputs, kernelspec metadata): record, persist, announce.
 * Content changed this way is persisted by a (debounced) snapshot.
 */
void
room_changed(struct room *r, struct peer *except, const char *kind)
{
	(void)except;
	room_changed_by(r, kind, NULL);
}

/*
 * The same, made by someone other than a client: "kernel" for the
 * kernelspec and language_info a kernel writes (bookkeeping, which a
 * wait for content does not wake for).
 */
void
room_changed_by(struct room *r, const char *kind, const char *by)
{
	int	kinds = room_changes_kind(kind);

	if (by != NULL)
		room_changes_record_by(r, kinds, NULL, 0, NULL, 0, by, 0);
	else
		room_changes_record(r, kinds, NULL, 0, NULL);
	if (kinds & ROOM_CHANGE_CONTENT) {
		/* Metadata alone is journaled: no whole-notebook snapshot. */
		if ((kinds & ROOM_CHANGE_CONTENT) == ROOM_CHANGE_METADATA)
			r->pend_metadata = 1;
		else
			r->persist_full = 1;
		room_journal_later(r);
	}
	room_changes_announce(r);
}

/*
 * A change to one cell from an execution (kind "outputs" usually):
 * record with the cell and run, journal the cell's outputs (debounced),
 * announce.
 */
void
room_cell_changed(struct room *r, const char *kind, const char *cell_id,
    const char *execution_id)
{
	char	*cells[1];
	int	 kinds = room_changes_kind(kind);
	size_t	 i;

	cells[0] = (char *)cell_id;
	room_changes_record(r, kinds, cells, cell_id != NULL ? 1 : 0,
	    execution_id);
	if (kinds & ROOM_CHANGE_CONTENT) {
		if (cell_id == NULL || (kinds & ~ROOM_CHANGE_OUTPUTS &
		    ROOM_CHANGE_CONTENT))
			r->persist_full = 1;
		else {
			for (i = 0; i < r->npend_outputs; i++) {
				if (strcmp(r->pend_outputs[i], cell_id) == 0)
					break;
			}
			if (i == r->npend_outputs) {
				r->pend_outputs = xreallocarray(
				    r->pend_outputs, r->npend_outputs + 1,
				    sizeof *r->pend_outputs);
				r->pend_outputs[r->npend_outputs++] =
				    xstrdup(cell_id);
			}
		}
		room_journal_later(r);
	}
	room_changes_announce(r);
}

static void
room_pack_path(struct room *r, msgpack_packer *pk)
{
	if (r->remote != NULL)
		proto_pack_str(pk, "path", room_remote_path(r));
	else if (r->path != NULL)
		proto_pack_str(pk, "path", r->path);
	else
		proto_pack_nil(pk, "path");
}

static void
room_pack_kernel(struct room *r, msgpack_packer *pk)
{
	proto_pack_key(pk, "kernel");
	msgpack_pack_map(pk, 2);
	proto_pack_str(pk, "name", r->kernel_name);
	proto_pack_str(pk, "state", room_kernel_state(r));
}

/*
 * {notebook_id, path, domain, server_lost, peers, agents, loaded, dirty,
 * seq, kernel: {name, state}}
 */
static void
room_pack_summary(struct room *r, msgpack_packer *pk)
{
	const char	*ks = room_kernel_state(r);

	msgpack_pack_map(pk, 10);
	proto_pack_str(pk, "notebook_id", r->id);
	room_pack_path(r, pk);
	/* Which server's notebook; copies of one path are told apart. */
	proto_pack_str(pk, "domain", r->remote != NULL ?
	    room_remote_domain_name(r) : DOMAIN_LOCAL);
	proto_pack_bool(pk, "server_lost", room_remote_server_lost(r));
	proto_pack_uint(pk, "peers", r->nmembers);
	proto_pack_uint(pk, "agents", strcmp(ks, "none") != 0 &&
	    strcmp(ks, "dead") != 0 ? 1 : 0);
	proto_pack_bool(pk, "loaded", r->loaded);
	proto_pack_bool(pk, "dirty", r->dirty);
	proto_pack_uint(pk, "seq", r->seq);
	room_pack_kernel(r, pk);
}

/* ROOM_LIST_REPLY {rooms, warnings}. */
void
room_list_pack(msgpack_packer *pk)
{
	size_t	i;

	msgpack_pack_map(pk, 2);
	proto_pack_key(pk, "warnings");
	runtimed_warn_pack(pk, NULL);
	proto_pack_key(pk, "rooms");
	msgpack_pack_array(pk, room_nall);
	for (i = 0; i < room_nall; i++)
		room_pack_summary(room_all[i], pk);
}

/*
 * {cell_id, cell_type, source, metadata, execution_count, outputs,
 * attachments?, extra?, no_source?}: extra holds the keys kept verbatim.
 */
void
room_pack_cell(msgpack_packer *pk, struct room_cell *c)
{
	room_cell_pack(pk, c);
}

/* ROOM_JOINED, or ROOM_CONTENT when with_metadata. */
void
room_pack_joined(struct room *r, msgpack_packer *pk, int with_metadata)
{
	room_pack_content(r, pk, with_metadata, NULL, 0);
}

/*
 * The content with the cells whole where whole[i] (all when whole is
 * NULL), the others as references [cell_id, version, stale?] to a copy
 * the reader holds (docs/decisions/036), or, when runs, each stretch of
 * them as one [count, cell_id, digest] (decision 041): the caller knows
 * they are in the reader's copy in that order.
 */
void
room_pack_content(struct room *r, msgpack_packer *pk, int with_metadata,
    const char *whole, int runs)
{
	struct room_cell	**up;
	size_t		i, j, n;
	int		*stale;
	uint64_t	 digest;

	msgpack_pack_map(pk, (with_metadata ? 9 : 8) +
	    (r->nb->warnings != NULL) + (room_merge_nconflicts(r) > 0) +
	    (room_exec_queue_length(r) > 0));
	proto_pack_str(pk, "notebook_id", r->id);
	room_pack_path(r, pk);
	proto_pack_bool(pk, "dirty", r->dirty);
	proto_pack_uint(pk, "seq", r->seq);
	proto_pack_int(pk, "nbformat", r->nb->nbformat);
	proto_pack_int(pk, "nbformat_minor", r->nb->nbformat_minor);
	room_pack_kernel(r, pk);
	if (with_metadata) {
		proto_pack_key(pk, "metadata");
		mpvalue_pack(pk, &r->nb->metadata);
	}
	if (r->nb->warnings != NULL) {
		proto_pack_key(pk, "warnings");
		mpjson_pack(pk, r->nb->warnings);
	}
	if (room_merge_nconflicts(r) > 0) {
		proto_pack_key(pk, "conflicts");
		room_merge_pack(r, pk);
	}
	if (room_exec_queue_length(r) > 0) {
		/* Which cells run or wait to, for outlines (issue 39). */
		proto_pack_key(pk, "active");
		room_exec_pack_active(pk, r);
	}
	proto_pack_key(pk, "cells");
	runs = runs && whole != NULL;
	n = r->nb->ncells;
	if (runs) {
		/* One element per whole cell and per stretch of others. */
		for (n = 0, i = 0; i < r->nb->ncells; i++)
			n += whole[i] || i == 0 || whole[i - 1];
	}
	msgpack_pack_array(pk, n);
	stale = room_stale_compute(r, &up);
	for (i = 0; i < r->nb->ncells; i++) {
		if (whole == NULL || whole[i])
			room_cell_pack_read(pk, r->nb->cells[i], stale[i],
			    up[i] != NULL ? up[i]->id : NULL);
		else if (!runs)
			room_cell_pack_ref(pk, r->nb->cells[i], stale[i],
			    up[i] != NULL ? up[i]->id : NULL);
		else {
			digest = PROTO_FNV64_INIT;
			for (j = i; j < r->nb->ncells && !whole[j]; j++)
				digest = proto_run_fold(digest,
				    room_cell_run_hash(r->nb->cells[j],
				    stale[j], up[j] != NULL ? up[j]->id :
				    NULL));
			msgpack_pack_array(pk, 3);
			msgpack_pack_uint64(pk, j - i);
			proto_pack_cstr(pk, r->nb->cells[i]->id);
			msgpack_pack_uint64(pk, digest);
			i = j - 1;
		}
	}
	free(stale);
	free(up);
}

/*
 * What the save's rename may replace, checked by the file thread right
 * at the rename (atomic_expect): the file as the room last knew it, a
 * file still absent, or (force) anything.  A save behind another of the
 * same file still in flight expects that save's file.
 */
static void
room_save_expect(struct room *r, struct atomic *a, const char *target,
    int same, int exists, int force)
{
	struct room_ticket	*t, *last = NULL;

	if (force)
		return;
	TAILQ_FOREACH(t, &room_tickets, entry) {
		if (t->r == r && !t->file && t->target != NULL &&
		    strcmp(t->target, target) == 0)
			last = t;
	}
	if (last != NULL)
		atomic_expect(a, ATOMIC_SAME, last->dev, last->ino, -1, -1);
	else if (!exists)
		atomic_expect(a, ATOMIC_ABSENT, 0, 0, -1, -1);
	else if (same && r->disk_known)
		atomic_expect(a, ATOMIC_SAME, r->disk_dev, r->disk_ino,
		    r->disk_size, r->disk_mtime_ns);
}

/*
 * Save the notebook, to path when given (save-as: the room stands for
 * that file from then on).  Refuses to overwrite a file that changed on
 * disk since load, or another file, unless force: then -1 with *cause
 * and *code, nothing written.  Else the loop writes the temporary file
 * (decision 009) and the store writer makes it durable and renames it
 * (decision 028); cb (if any) gets the outcome on the loop, and the
 * room is clean from then if no change came meanwhile.
 */
int
room_save_start(struct room *r, const char *path, int force,
    struct peer *peer, uint32_t id, room_save_cb cb, char **cause,
    const char **code)
{
	struct room_ticket	*t;
	struct room_ipynb_tail	*tail = NULL;
	struct atomic		*a;
	struct stat		 sb;
	char			*target, *why = NULL;
	int			 exists, same, rc;

	/* A server's contents API, answered from its completion. */
	if (r->remote != NULL)
		return (room_remote_save(r, path, force, peer, id, cb, cause,
		    code));
	*code = PROTO_E_INVALID_ARGUMENT;
	if (path == NULL && r->path == NULL) {
		xasprintf(cause, "untitled notebook: saving needs a path");
		return (-1);
	}
	if (path != NULL) {
		if ((target = room_canon_path(path, &exists, &why)) == NULL) {
			xasprintf(cause, "%s: %s", path, why);
			free(why);
			return (-1);
		}
	} else {
		target = xstrdup(r->path);
		exists = access(target, F_OK) == 0;
	}
	same = r->path != NULL && strcmp(target, r->path) == 0;
	if (!same && room_find_path(target) != NULL) {
		xasprintf(cause, "%s is open as another notebook", target);
		free(target);
		return (-1);
	}
	if (!force && same && room_merge_nconflicts(r) > 0) {
		*code = PROTO_E_FILE_CHANGED_ON_DISK;
		xasprintf(cause, "%u cell%s of %s conflict%s with the file's "
		    "version (inspect_notebook lists them): resolve them with "
		    "edit_cells op resolve, or save with force to overwrite "
		    "the file's", room_merge_nconflicts(r),
		    room_merge_nconflicts(r) == 1 ? "" : "s", target,
		    room_merge_nconflicts(r) == 1 ? "s" : "");
		free(target);
		return (-1);
	}
	if (!force && exists) {
		if (same && room_disk_changed(r)) {
			*code = PROTO_E_FILE_CHANGED_ON_DISK;
			xasprintf(cause, "%s changed on disk since it was "
			    "loaded; save with force to overwrite", target);
			free(target);
			return (-1);
		}
		if (!same) {
			*code = PROTO_E_FILE_EXISTS;
			xasprintf(cause, "%s exists; save with force to "
			    "overwrite", target);
			free(target);
			return (-1);
		}
	}
	*code = PROTO_E_NOTEBOOK_UNAVAILABLE;
	/* With a writer, the big outputs are its to write (decision 038). */
	if ((a = atomic_create(target, 0644, &why)) == NULL ||
	    room_ipynb_write_start(r->nb, atomic_fd(a), target,
	    runtimed_writer != NULL ? &tail : NULL, &why) != 0 ||
	    fstat(atomic_fd(a), &sb) != 0) {
		if (why == NULL)
			xasprintf(&why, "cannot write %s: %s", target,
			    strerror(errno));
		if (a != NULL)
			atomic_free(a);
		room_ipynb_tail_free(tail);
		*cause = why;
		free(target);
		return (-1);
	}

	room_save_expect(r, a, target, same, exists, force);

	t = xcalloc(1, sizeof *t);
	t->tail = tail;
	t->r = r;
	t->peer = peer;
	t->id = id;
	t->cb = cb;
	t->target = target;
	t->same = same;
	t->gen = r->content_gen;
	t->dev = sb.st_dev;
	t->ino = sb.st_ino;
	t->size = sb.st_size;
	t->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
	    sb.st_mtim.tv_nsec;
	/* Once written, the file is what both sides agree on. */
	t->base = room_merge_base_make(r->nb, 0);
	TAILQ_INSERT_TAIL(&room_tickets, t, entry);
	r->saves_inflight++;
	if (runtimed_writer != NULL) {
		store_writer_save(runtimed_writer, a, tail != NULL ?
		    room_save_fill : NULL, tail, room_saved, t);
		return (0);
	}
	rc = atomic_commit(a, &why);
	room_saved(rc == 0 ? 1 : rc == ATOMIC_CHANGED ? -1 : 0, why, t);
	free(why);
	return (0);
}

/* The writer's thread: the rest of a save's file. */
static int
room_save_fill(void *arg, int fd, char **cause)
{
	return (room_ipynb_tail_write(arg, fd, cause));
}

/* A save is durable (or not): the room takes the file; answer. */
static void
room_saved(int ok, const char *cause, void *arg)
{
	struct room_ticket	*t = arg;
	struct room		*r = t->r;
	const struct stat	*sb;

	TAILQ_REMOVE(&room_tickets, t, entry);
	if (ok && t->tail != NULL) {
		/* The file as the writer finished it. */
		sb = room_ipynb_tail_stat(t->tail);
		t->size = sb->st_size;
		t->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
		    sb->st_mtim.tv_nsec;
	}
	if (r == NULL)
		goto out;
	r->saves_inflight--;
	if (ok <= 0) {
		log_info("room %s: not saved: %s", r->id, cause);
		if (t->cb != NULL)
			t->cb(r, t->peer, t->id, cause, ok == -1 ?
			    PROTO_E_FILE_CHANGED_ON_DISK :
			    PROTO_E_NOTEBOOK_UNAVAILABLE);
		goto out;
	}
	if (!t->same && (r->path == NULL || strcmp(r->path,
	    t->target) != 0)) {
		room_watch_remove(r);
		free(r->path);
		r->path = t->target;
		t->target = NULL;
		room_watch_add(r);
	}
	r->fresh = 0;
	/* The file this save wrote, even if the disk moved on since. */
	r->disk_known = 1;
	r->disk_dev = t->dev;
	r->disk_ino = t->ino;
	r->disk_size = t->size;
	r->disk_mtime_ns = t->mtime_ns;
	room_merge_base_set(r, t->base);
	t->base = NULL;
	/* Save-as: the new path has this id (and the old one none). */
	if (!t->same || !r->file_stored)
		room_file_store(r);
	/* What the loader warned about is now what the file holds. */
	json_object_put(r->nb->warnings);
	r->nb->warnings = NULL;
	log_info("room %s saved to %s", r->id, r->path);
	if (r->content_gen == t->gen) {
		r->dirty = 0;
		r->unsaved_since = 0;
		room_autosave_cancel(r);
	}
	/* The snapshot holds pending outputs too; nothing waits for it. */
	room_journal_snapshot(r);
	room_changes_record(r, ROOM_CHANGE_SAVED, NULL, 0, NULL);
	if (t->cb != NULL)
		t->cb(r, t->peer, t->id, NULL, NULL);
	else
		room_changes_announce(r);
out:
	room_merge_base_free(t->base);
	room_ipynb_tail_free(t->tail);
	free(t->target);
	free(t);
}

/* A save nobody waits for (autosave, unloading): its outcome is logged. */
int
room_save(struct room *r, const char *path, int force, char **cause,
    const char **code)
{
	return (room_save_start(r, path, force, NULL, 0, NULL, cause, code));
}

/* Has the room nothing holding it in memory? */
static int
room_idle(struct room *r)
{
	const char	*ks;

	if (!r->loaded || r->nmembers > 0 || room_exec_queue_length(r) > 0 ||
	    room_edit_pending(r) > 0 || r->saves_inflight > 0)
		return (0);
	ks = room_kernel_state(r);
	return (strcmp(ks, "none") == 0 || strcmp(ks, "dead") == 0);
}

/* Put an idle room to sleep: its state stays in the store; -1 if kept. */
static int
room_unload(struct room *r)
{
	char	*cause = NULL;
	const char *code;

	if (r->dirty && r->path != NULL && room_autosave_enabled() &&
	    room_save(r, NULL, 0, &cause, &code) != 0) {
		log_info("room %s: save before unloading skipped: %s", r->id,
		    cause);
		free(cause);
	}
	if (room_journal_flush(r) != 0) {
		/* Its memory is the only copy of something: keep it. */
		log_info("room %s: not unloaded, the store cannot write",
		    r->id);
		return (-1);
	}
	/*
	 * The file as it is now, to know it again if it is renamed.  The
	 * flush above waited for the writer already (and delivered the
	 * save); this waits for the row: unloading is the sweep's, no one
	 * waits on it.
	 */
	room_file_store(r);
	if (runtimed_writer != NULL)
		store_writer_sync(runtimed_writer);
	if (r->path != NULL && !r->file_stored) {
		log_info("room %s: not unloaded, its file's id is not stored",
		    r->id);
		return (-1);
	}
	room_kernel_free(r);
	if (r->remote != NULL && !r->dirty) {
		/* Clean: the server's copy is the whole truth. */
		log_info("room %s unloaded (%s on %s)", r->id,
		    room_remote_path(r), room_remote_domain_name(r));
		room_journal_forget(r);
		room_remove(r);
		return (0);
	}
	log_info("room %s unloaded (%s)", r->id, r->path != NULL ? r->path :
	    "untitled");
	if (r->path != NULL && !r->dirty) {
		/* Clean and file-backed: the file is the whole truth. */
		room_journal_forget(r);
		room_remove(r);
		return (0);
	}
	room_unload_content(r);
	return (0);
}

static void
room_sweep(evutil_socket_t fd, short events, void *arg)
{
	int64_t	now = util_mono_ms();
	size_t	i;

	(void)fd;
	(void)events;
	(void)arg;
	for (i = 0; i < room_nall; i++) {
		if (!room_idle(room_all[i])) {
			room_all[i]->idle_since = 0;
			continue;
		}
		if (room_all[i]->idle_since == 0)
			room_all[i]->idle_since = now;
		if (now - room_all[i]->idle_since >= room_grace_ms) {
			if (room_unload(room_all[i]) != 0) {
				room_all[i]->idle_since = now;
				continue;
			}
			i = (size_t)-1;	/* room_all may have shrunk */
			now = util_mono_ms();
		}
	}
	room_sweep_arm();
}

static void
room_sweep_arm(void)
{
	struct timeval	tv;
	int64_t		ms = room_grace_ms / 4;

	if (runtimed_base == NULL)
		return;
	if (ms > 1000)
		ms = 1000;
	if (ms < 50)
		ms = 50;
	if (room_sweep_ev == NULL)
		room_sweep_ev = evtimer_new(runtimed_base, room_sweep, NULL);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(room_sweep_ev, &tv);
}

/*
 * The file may have changed on disk (room-watch.c saw its name).  Our
 * own saves match what room_note_disk remembered and are ignored.  The
 * file is merged into the room (room-merge.c) against what both last
 * agreed on; without that base (a dirty room recovered from the store
 * by an older daemon) a clean room reloads and a dirty one keeps its
 * content, and ROOM_SAVE refuses with file_changed_on_disk unless force.
 */
void
room_disk_check(struct room *r)
{
	struct room_nb	*nb;
	struct stat	 before, after;
	char		*cause = NULL;

	if (!r->loaded || r->path == NULL || r->remote != NULL ||
	    !room_disk_changed(r))
		return;
	if (room_edit_pending(r) > 0) {
		/* Its batch is prepared on this content: right after it. */
		room_merge_later(r);
		return;
	}
	if (r->dirty && !room_merge_has_base(r)) {
		log_info("room %s: %s changed on disk; keeping unsaved "
		    "changes", r->id, r->path);
		return;
	}
	if (lstat(r->path, &before) != 0)
		return;
	if ((nb = room_ipynb_read(r->path, &cause)) == NULL) {
		/* Likely half written by an editor; the next event retries. */
		log_info("room %s: not reloading: %s", r->id, cause);
		free(cause);
		return;
	}
	/* Changed again while read: what was read may be half of it. */
	if (lstat(r->path, &after) != 0 || after.st_ino != before.st_ino ||
	    after.st_size != before.st_size ||
	    after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != before.st_mtim.tv_nsec) {
		room_nb_free(nb);
		room_merge_later(r);
		return;
	}
	if (!room_merge_has_base(r)) {
		room_reloaded(r, nb);
		return;
	}
	room_note_disk(r);
	room_merge_disk(r, nb, (int64_t)before.st_mtim.tv_sec * 1000 +
	    before.st_mtim.tv_nsec / 1000000);
}

/*
 * A clean room's notebook changed where it lives (its file here, or its
 * server's copy, room-remote.c): the room takes nb and says "reloaded".
 */
void
room_reloaded(struct room *r, struct room_nb *nb)
{
	char	*kernel;

	/* The snapshot below replaces what was pending. */
	room_nb_free(r->nb);
	r->nb = nb;
	if ((kernel = room_nb_kernel(nb)) != NULL &&
	    strcmp(kernel, r->kernel_name) != 0) {
		free(r->kernel_name);
		r->kernel_name = kernel;
		kernel = NULL;
	}
	free(kernel);
	if (r->remote == NULL)
		room_note_disk(r);
	room_merge_base_set(r, room_merge_base_make(nb, 1));
	log_info("room %s: reloaded %s", r->id, r->remote != NULL ?
	    room_remote_path(r) : r->path);
	room_changes_record(r, ROOM_CHANGE_RELOADED, NULL, 0, NULL);
	r->dirty = 0;
	room_journal_snapshot(r);
	room_changes_announce(r);
}
