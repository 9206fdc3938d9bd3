/* SPDX-License-Identifier: ISC */
/*
 * worker-files-record.c: what a transfer with a server has kept so far,
 * written down for a later call to take up if this worker is killed
 * (decision 098).  A record is a small JSON file in the state directory's
 * private transfers/ (0700, checked as the state directory is), named by
 * a hash of the transfer (its direction, domain, server path and
 * host_path), rewritten in place each WORKER_FILES_CHUNK (one pwrite,
 * padded with spaces to what it held; no rename, no fsync: a rename each
 * 4 MiB cost a 64 MiB download a third of its time, and a record torn
 * by a power cut does not parse and is dropped).
 * It names the temporary (a name beside host_path here, a path on the
 * server for an upload), the file's identity (the model's size and
 * last_modified; the local file's size and mtime) and how many bytes the
 * temporary holds with their SHA-256.  Nothing in it is trusted: it must
 * name this very transfer, and the caller hashes the bytes again before
 * going on from them.  Records older than WORKER_FILES_KEEP_S are swept
 * with their temporaries by the next transfer with a server.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

static char	*worker_files_record_dir(void);
static int	 worker_files_record_read(const char *,
		    struct worker_files_record *, char **);
static int	 worker_files_record_int(struct json_object *, const char *,
		    int64_t *);

/* transfers/ in the state directory, made private; NULL if it cannot be. */
static char *
worker_files_record_dir(void)
{
	char	*state, *dir, *cause;

	state = sockdir_state_path();
	xasprintf(&dir, "%s/transfers", state);
	free(state);
	if (sockdir_check_named("transfer records directory", dir, 1,
	    &cause) != 0) {
		log_info("transfers cannot be resumed by a later call: %s",
		    cause);
		free(cause);
		free(dir);
		return (NULL);
	}
	return (dir);
}

/*
 * r for the transfer named (upload or download, domain, the server's
 * path, host_path); r->path is its record's file, NULL if there is no
 * place for records.
 */
void
worker_files_record_init(struct worker_files_record *r, int upload,
    const char *domain, const char *remote, const char *local)
{
	unsigned char	 md[CRYPTO_SHA256_LEN];
	char		*key, *dir, hex[2 * CRYPTO_SHA256_LEN + 1];
	int		 len;

	memset(r, 0, sizeof *r);
	r->upload = upload;
	r->domain = xstrdup(domain);
	r->remote = xstrdup(remote);
	r->local = xstrdup(local);
	len = xasprintf(&key, "%c%c%s%c%s%c%s", upload ? 'u' : 'd', 0,
	    domain, 0, remote, 0, local);
	crypto_sha256(key, (size_t)len, md);
	free(key);
	util_hex(md, 16, hex);
	if ((dir = worker_files_record_dir()) != NULL)
		xasprintf(&r->path, "%s/%s.json", dir, hex);
	free(dir);
}

void
worker_files_record_free(struct worker_files_record *r)
{
	if (r->wrote)
		close(r->fd);
	free(r->domain);
	free(r->remote);
	free(r->local);
	free(r->tmp);
	free(r->lastmod);
	free(r->modified);
	free(r->path);
	memset(r, 0, sizeof *r);
}

static int
worker_files_record_int(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    (*out = json_object_get_int64(v)) < 0)
		return (-1);
	return (0);
}

/*
 * The record at path into out: a regular file of ours (no link
 * followed), small, of the fields below.  0; -1 with *why NULL if there
 * is none, or set if it is not a record.
 */
static int
worker_files_record_read(const char *path, struct worker_files_record *out,
    char **why)
{
	struct json_object	*o = NULL;
	struct stat		 sb;
	const char		*kind, *domain, *remote, *local, *tmp, *lm, *m;
	const char		*sum;
	char			 buf[WORKER_FILES_RECORD_MAX + 1];
	int64_t			 v, size, mtime, bytes, chunks;
	ssize_t			 n;
	int			 fd;

	*why = NULL;
	memset(out, 0, sizeof *out);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno != ENOENT)
			xasprintf(why, "cannot open it: %s", strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_size > WORKER_FILES_RECORD_MAX) {
		close(fd);
		xasprintf(why, "not a small regular file of ours");
		return (-1);
	}
	while ((n = read(fd, buf, sizeof buf - 1)) == -1 && errno == EINTR)
		;
	close(fd);
	if (n < 0 || n > WORKER_FILES_RECORD_MAX) {
		xasprintf(why, "cannot read it");
		return (-1);
	}
	buf[n] = '\0';
	if (strlen(buf) != (size_t)n || (o = json_tokener_parse(buf)) == NULL ||
	    !json_object_is_type(o, json_type_object))
		goto bad;
	kind = jsonget_str(o, "kind", NULL);
	domain = jsonget_str(o, "domain", NULL);
	remote = jsonget_str(o, "path", NULL);
	local = jsonget_str(o, "host_path", NULL);
	tmp = jsonget_str(o, "tmp", NULL);
	lm = jsonget_str(o, "last_modified", NULL);
	m = jsonget_str(o, "modified", NULL);
	sum = jsonget_str(o, "sha256", NULL);
	if (worker_files_record_int(o, "v", &v) != 0 || v != 1 ||
	    kind == NULL || (strcmp(kind, "upload") != 0 &&
	    strcmp(kind, "download") != 0) || domain == NULL ||
	    remote == NULL || local == NULL || tmp == NULL || *tmp == '\0' ||
	    lm == NULL || m == NULL || sum == NULL || strlen(sum) != 64 ||
	    strspn(sum, "0123456789abcdef") != 64 ||
	    worker_files_record_int(o, "size", &size) != 0 ||
	    worker_files_record_int(o, "mtime", &mtime) != 0 ||
	    worker_files_record_int(o, "bytes", &bytes) != 0 ||
	    worker_files_record_int(o, "chunks", &chunks) != 0 ||
	    bytes > size || size > WORKER_FILES_MAX || chunks > INT_MAX)
		goto bad;
	out->upload = strcmp(kind, "upload") == 0;
	out->domain = xstrdup(domain);
	out->remote = xstrdup(remote);
	out->local = xstrdup(local);
	out->tmp = xstrdup(tmp);
	out->lastmod = xstrdup(lm);
	out->modified = xstrdup(m);
	out->size = (uint64_t)size;
	out->mtime = mtime;
	out->bytes = (uint64_t)bytes;
	out->chunks = (int)chunks;
	memcpy(out->sha256, sum, 65);
	json_object_put(o);
	return (0);

bad:
	json_object_put(o);
	xasprintf(why, "not a record of a transfer");
	return (-1);
}

/*
 * The record of r's transfer into out, if there is one and it names
 * this very transfer: 0.  -1 if there is none; one that is not a record
 * or names another transfer is removed (logged), never followed.
 */
int
worker_files_record_load(struct worker_files_record *r,
    struct worker_files_record *out)
{
	char	*why;

	memset(out, 0, sizeof *out);
	if (r->path == NULL)
		return (-1);
	if (worker_files_record_read(r->path, out, &why) != 0) {
		if (why == NULL)
			return (-1);
		log_warnx("%s: %s; removed", r->path, why);
		free(why);
		unlink(r->path);
		return (-1);
	}
	if (out->upload != r->upload || strcmp(out->domain, r->domain) != 0 ||
	    strcmp(out->remote, r->remote) != 0 ||
	    strcmp(out->local, r->local) != 0) {
		log_warnx("%s names another transfer (%s of %s on %s, %s); "
		    "removed", r->path, out->upload ? "upload" : "download",
		    out->remote, out->domain, out->local);
		worker_files_record_free(out);
		unlink(r->path);
		return (-1);
	}
	return (0);
}

/*
 * Write r down: in place, over what it held, spaces after it (JSON's
 * whitespace) so that a shorter record leaves nothing of the longer one;
 * not synced.  A record that cannot be written is logged: the transfer
 * goes on, only not resumable by a later call.
 */
void
worker_files_record_save(struct worker_files_record *r)
{
	struct json_object	*o;
	struct stat		 sb;
	const char		*s;
	char			*buf;
	size_t			 len, n;

	if (r->path == NULL)
		return;
	if (!r->wrote) {
		r->fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC, 0600);
		if (r->fd == -1 || fstat(r->fd, &sb) != 0 ||
		    !S_ISREG(sb.st_mode) || sb.st_nlink != 1) {
			log_info("cannot write the record %s: %s", r->path,
			    r->fd == -1 ? strerror(errno) : "not a file");
			if (r->fd != -1)
				close(r->fd);
			free(r->path);
			r->path = NULL;
			return;
		}
		r->wrote = 1;
		r->len = 0;
	}
	o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "kind", json_object_new_string(r->upload ?
	    "upload" : "download"));
	json_object_object_add(o, "domain", json_object_new_string(r->domain));
	json_object_object_add(o, "path", json_object_new_string(r->remote));
	json_object_object_add(o, "host_path",
	    json_object_new_string(r->local));
	json_object_object_add(o, "tmp", json_object_new_string(r->tmp));
	json_object_object_add(o, "size", json_object_new_int64(
	    (int64_t)r->size));
	json_object_object_add(o, "last_modified", json_object_new_string(
	    r->lastmod != NULL ? r->lastmod : ""));
	json_object_object_add(o, "modified", json_object_new_string(
	    r->modified != NULL ? r->modified : ""));
	json_object_object_add(o, "mtime", json_object_new_int64(r->mtime));
	json_object_object_add(o, "bytes", json_object_new_int64(
	    (int64_t)r->bytes));
	json_object_object_add(o, "sha256", json_object_new_string(r->sha256));
	json_object_object_add(o, "chunks", json_object_new_int(r->chunks));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	n = len > r->len ? len : r->len;
	buf = xmalloc(n);
	memcpy(buf, s, len);
	memset(buf + len, ' ', n - len);
	if (len > WORKER_FILES_RECORD_MAX ||
	    pwrite(r->fd, buf, n, 0) != (ssize_t)n) {
		log_info("cannot write the record %s: %s", r->path,
		    len > WORKER_FILES_RECORD_MAX ? "too long" :
		    strerror(errno));
		/* Half written, or stale: not to be taken up. */
		worker_files_record_drop(r);
	} else
		r->len = n;
	free(buf);
	json_object_put(o);
}

/* r's record is done with: removed (a later save makes it anew). */
void
worker_files_record_drop(struct worker_files_record *r)
{
	if (r->path == NULL)
		return;
	if (unlink(r->path) != 0 && errno != ENOENT)
		log_info("cannot remove %s: %s", r->path, strerror(errno));
	if (r->wrote)
		close(r->fd);
	r->wrote = 0;
}

/*
 * Records not written for WORKER_FILES_KEEP_S: each is given to old (to
 * remove its temporary), then removed unless old says -1 (not now); so
 * is anything else in the directory as old (a record torn mid-write).
 */
void
worker_files_record_sweep(int (*old)(struct worker_files_record *, void *),
    void *arg)
{
	struct worker_files_record	 r;
	struct dirent			*de;
	struct stat			 sb;
	DIR				*d;
	char				*dir, *path, *why;
	time_t				 now = time(NULL);
	int				 keep;

	if ((dir = worker_files_record_dir()) == NULL)
		return;
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (*de->d_name == '.')
			continue;
		xasprintf(&path, "%s/%s", dir, de->d_name);
		if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    now - sb.st_mtime < WORKER_FILES_KEEP_S) {
			free(path);
			continue;
		}
		keep = 0;
		if (worker_files_record_read(path, &r, &why) == 0) {
			if ((keep = old(&r, arg)) == 0)
				log_info("%s of %s on %s left %s %lld s ago: "
				    "removed", r.upload ? "an upload" :
				    "a download", r.remote, r.domain, r.tmp,
				    (long long)(now - sb.st_mtime));
			worker_files_record_free(&r);
		}
		free(why);
		if (keep == 0)
			unlink(path);
		free(path);
	}
	closedir(d);
	free(dir);
}
