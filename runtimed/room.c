/*
 * room.c: rooms, one per open notebook, keyed by real path and by id.
 * A room outlives its peers in this version: untitled rooms stay in
 * memory for the daemon's life.
 */

#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

static struct room	**room_all;
static size_t		  room_nall;

u_int
room_count(void)
{
	return ((u_int)room_nall);
}

struct room *
room_first(void)
{
	return (room_nall > 0 ? room_all[0] : NULL);
}

struct room *
room_next(struct room *r)
{
	size_t	i;

	for (i = 0; i + 1 < room_nall; i++) {
		if (room_all[i] == r)
			return (room_all[i + 1]);
	}
	return (NULL);
}

static struct room *
room_find_path(const char *path)
{
	size_t	i;

	for (i = 0; i < room_nall; i++) {
		if (room_all[i]->path != NULL &&
		    strcmp(room_all[i]->path, path) == 0)
			return (room_all[i]);
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
 * else the real path of its directory plus the file name.  Caller frees.
 */
static char *
room_canon_path(const char *path, int *exists, char **cause)
{
	char	*copy, *dir, *base, *rdir, *out;

	if (*path == '\0') {
		xasprintf(cause, "empty path");
		return (NULL);
	}
	if ((out = util_realpath_new(path)) != NULL) {
		*exists = 1;
		return (out);
	}
	*exists = 0;
	copy = xstrdup(path);
	dir = dirname(copy);
	if ((rdir = util_realpath_new(dir)) == NULL) {
		xasprintf(cause, "directory %s does not exist", dir);
		free(copy);
		return (NULL);
	}
	free(copy);
	copy = xstrdup(path);
	base = basename(copy);
	if (strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		xasprintf(cause, "%s is not a file name", path);
		free(copy);
		free(rdir);
		return (NULL);
	}
	xasprintf(&out, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base);
	free(copy);
	free(rdir);
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

	r->disk_known = 0;
	if (r->path == NULL || stat(r->path, &sb) != 0)
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

	if (stat(r->path, &sb) != 0)
		return (0);	/* gone: writing it back loses nothing */
	if (!r->disk_known)
		return (1);	/* appeared since we created the room */
	return (sb.st_dev != r->disk_dev || sb.st_ino != r->disk_ino ||
	    sb.st_size != r->disk_size ||
	    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec !=
	    r->disk_mtime_ns);
}

static struct room *
room_new(char *path, const char *kernel, struct room_nb *nb)
{
	struct room	*r;

	r = xcalloc(1, sizeof *r);
	util_uuid(r->id);
	r->path = path;
	r->kernel_name = xstrdup(kernel);
	r->nb = nb;
	room_all = xreallocarray(room_all, room_nall + 1, sizeof *room_all);
	room_all[room_nall++] = r;
	room_exec_create(r);
	log_info("room %s created for %s (kernel %s)", r->id,
	    path != NULL ? path : "untitled", kernel);
	return (r);
}

static void
room_free(struct room *r)
{
	room_exec_free(r);
	room_kernel_free(r);
	room_nb_free(r->nb);
	free(r->members);
	free(r->path);
	free(r->kernel_name);
	free(r);
}

void
room_free_all(void)
{
	size_t	i;

	for (i = 0; i < room_nall; i++)
		room_free(room_all[i]);
	free(room_all);
	room_all = NULL;
	room_nall = 0;
}

/* ROOM_CREATE: an untitled room, or a room for a file not yet written. */
struct room *
room_create(const char *path, const char *kernel, char **cause,
    const char **code)
{
	struct room	*r;
	char		*canon = NULL;
	int		 exists;

	*code = "invalid_argument";
	if (kernel == NULL)
		kernel = "python3";
	if (!room_valid_kernel_name(kernel)) {
		xasprintf(cause, "invalid kernel name \"%s\"", kernel);
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
	r = room_new(canon, kernel, room_nb_create());
	r->fresh = 1;
	r->dirty = canon != NULL;
	room_kernel_start(r);
	return (r);
}

/* ROOM_OPEN: join the room for a path or id, loading the file if new. */
struct room *
room_open(const char *path, const char *id, char **cause, const char **code)
{
	struct room		*r;
	struct room_nb		*nb;
	struct json_object	*ks, *name;
	struct stat		 sb;
	char			*canon, *why = NULL;
	const char		*kernel = "python3";
	int			 exists;

	*code = "notebook_unavailable";
	if (id != NULL) {
		if ((r = room_find_id(id, strlen(id))) == NULL)
			xasprintf(cause, "no open notebook has id %s", id);
		return (r);
	}
	if ((canon = room_canon_path(path, &exists, &why)) == NULL) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		return (NULL);
	}
	if ((r = room_find_path(canon)) != NULL) {
		free(canon);
		return (r);
	}
	if (!exists) {
		xasprintf(cause, "%s: no such file", path);
		free(canon);
		return (NULL);
	}
	if (stat(canon, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s: not a regular file", path);
		free(canon);
		return (NULL);
	}
	if ((nb = room_ipynb_read(canon, cause)) == NULL) {
		free(canon);
		return (NULL);
	}
	if (json_object_object_get_ex(nb->metadata, "kernelspec", &ks) &&
	    json_object_object_get_ex(ks, "name", &name) &&
	    json_object_is_type(name, json_type_string) &&
	    room_valid_kernel_name(json_object_get_string(name)))
		kernel = json_object_get_string(name);
	r = room_new(canon, kernel, nb);
	room_note_disk(r);
	room_kernel_start(r);
	return (r);
}

void
room_join(struct room *r, struct peer *p)
{
	r->members = xreallocarray(r->members, r->nmembers + 1,
	    sizeof *r->members);
	r->members[r->nmembers++] = p;
}

void
room_leave(struct room *r, struct peer *p)
{
	size_t	i;

	for (i = 0; i < r->nmembers; i++) {
		if (r->members[i] == p) {
			memmove(&r->members[i], &r->members[i + 1],
			    (r->nmembers - i - 1) * sizeof *r->members);
			r->nmembers--;
			return;
		}
	}
}

/*
 * Something in the room changed: bump seq, mark content changes dirty
 * and tell every member but the one that asked.
 */
void
room_changed(struct room *r, struct peer *except, const char *kind)
{
	struct mpbuf	b;
	size_t		i;

	r->seq++;
	if (strcmp(kind, "cells") == 0 || strcmp(kind, "outputs") == 0)
		r->dirty = 1;
	if (r->nmembers == 0)
		return;
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_uint(&b.pk, "seq", r->seq);
	proto_pack_str(&b.pk, "notebook_id", r->id);
	proto_pack_key(&b.pk, "kinds");
	msgpack_pack_array(&b.pk, 1);
	proto_pack_cstr(&b.pk, kind);
	for (i = 0; i < r->nmembers; i++) {
		if (r->members[i] != except)
			peer_send(r->members[i], PROTO_MSG_ROOM_CHANGED, 0,
			    &b.sb);
	}
	mpbuf_free(&b);
}

static void
room_pack_path(struct room *r, msgpack_packer *pk)
{
	if (r->path != NULL)
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

/* {notebook_id, path, peers, agents, dirty, kernel: {name, state}} */
void
room_pack_summary(struct room *r, msgpack_packer *pk)
{
	msgpack_pack_map(pk, 7);
	proto_pack_str(pk, "notebook_id", r->id);
	room_pack_path(r, pk);
	proto_pack_uint(pk, "peers", r->nmembers);
	proto_pack_uint(pk, "agents", r->kernel != NULL &&
	    strcmp(room_kernel_state(r), "dead") != 0 ? 1 : 0);
	proto_pack_bool(pk, "dirty", r->dirty);
	proto_pack_uint(pk, "seq", r->seq);
	room_pack_kernel(r, pk);
}

void
room_list_pack(msgpack_packer *pk)
{
	size_t	i;

	msgpack_pack_map(pk, 1);
	proto_pack_key(pk, "rooms");
	msgpack_pack_array(pk, room_nall);
	for (i = 0; i < room_nall; i++)
		room_pack_summary(room_all[i], pk);
}

/* {cell_id, cell_type, source, metadata, execution_count, outputs} */
void
room_pack_cell(msgpack_packer *pk, const struct room_cell *c)
{
	msgpack_pack_map(pk, c->attachments != NULL ? 7 : 6);
	proto_pack_str(pk, "cell_id", c->id);
	proto_pack_str(pk, "cell_type", room_nb_type_name(c->type));
	proto_pack_strn(pk, "source", c->source, c->source_len);
	proto_pack_key(pk, "metadata");
	mpjson_pack(pk, c->metadata);
	if (c->execution_count >= 0)
		proto_pack_int(pk, "execution_count", c->execution_count);
	else
		proto_pack_nil(pk, "execution_count");
	proto_pack_key(pk, "outputs");
	if (c->outputs != NULL)
		mpjson_pack(pk, c->outputs);
	else
		msgpack_pack_array(pk, 0);
	if (c->attachments != NULL) {
		proto_pack_key(pk, "attachments");
		mpjson_pack(pk, c->attachments);
	}
}

/* ROOM_JOINED, or ROOM_CONTENT when with_metadata. */
void
room_pack_joined(struct room *r, msgpack_packer *pk, int with_metadata)
{
	size_t	i;

	msgpack_pack_map(pk, with_metadata ? 9 : 8);
	proto_pack_str(pk, "notebook_id", r->id);
	room_pack_path(r, pk);
	proto_pack_bool(pk, "dirty", r->dirty);
	proto_pack_uint(pk, "seq", r->seq);
	proto_pack_int(pk, "nbformat", r->nb->nbformat);
	proto_pack_int(pk, "nbformat_minor", r->nb->nbformat_minor);
	room_pack_kernel(r, pk);
	if (with_metadata) {
		proto_pack_key(pk, "metadata");
		mpjson_pack(pk, r->nb->metadata);
	}
	proto_pack_key(pk, "cells");
	msgpack_pack_array(pk, r->nb->ncells);
	for (i = 0; i < r->nb->ncells; i++)
		room_pack_cell(pk, r->nb->cells[i]);
}

/*
 * ROOM_SAVE: write the notebook, to path when given (save-as: the room
 * stands for that file from then on).  Refuses to overwrite a file that
 * changed on disk since load, or another file, unless force.
 */
int
room_save(struct room *r, const char *path, int force, char **cause,
    const char **code)
{
	char	*target, *why = NULL;
	int	 exists, same;

	*code = "invalid_argument";
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
	if (!force && exists) {
		if (same && room_disk_changed(r)) {
			*code = "file_changed_on_disk";
			xasprintf(cause, "%s changed on disk since it was "
			    "loaded; save with force to overwrite", target);
			free(target);
			return (-1);
		}
		if (!same) {
			xasprintf(cause, "%s exists; save with force to "
			    "overwrite", target);
			free(target);
			return (-1);
		}
	}
	if (room_ipynb_write(r->nb, target, &why) != 0) {
		*code = "notebook_unavailable";
		xasprintf(cause, "%s", why);
		free(why);
		free(target);
		return (-1);
	}
	free(r->path);
	r->path = target;
	r->fresh = 0;
	room_note_disk(r);
	log_info("room %s saved to %s", r->id, r->path);
	r->dirty = 0;
	return (0);
}
