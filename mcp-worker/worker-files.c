/* SPDX-License-Identifier: ISC */
/*
 * worker-files.c: upload_file and download_file, files between this
 * machine and where a notebook's kernel runs.  For a notebook on a
 * Jupyter Server (a domain) that is the server's contents API (its size
 * first, the upload's PUT in base64, the rename) and its files/ handler
 * for the bytes as they are (a download, an upload's read-back); for a
 * local notebook a copy on this machine.  kernel_path
 * is relative to the notebook's directory (where its kernel runs), or
 * absolute for a local one.
 *
 * Every transfer is checked end to end with SHA-256: the bytes read are
 * hashed, and what was written is read back and hashed before it is put
 * in place.  Files go to a temporary name (atomic.c for this machine:
 * O_CREAT|O_EXCL|O_NOFOLLOW, 64 random bits; on a server the same kind
 * of name beside the target, without its leading dot, since a server
 * refuses hidden files) and are renamed over only when overwrite
 * is given; without it an existing target is refused.  A file over
 * WORKER_FILES_MAX is refused before it is read whole.
 *
 * A transfer with a server is a chain of asynchronous contents calls on
 * the worker's loop (worker_files_step), answered when the last one is
 * back: other tool calls go on meanwhile (decision 029).  Reading and
 * writing this machine's file, and the hashes, stay on the loop: a few
 * tens of milliseconds for the 16 MiB cap.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "worker.h"
#include "domain.h"

/* A remote transfer's steps, in order. */
enum worker_files_step {
	WORKER_FILES_SIZE,	/* download: the file's size, no content */
	WORKER_FILES_GET,	/* download: the file */
	WORKER_FILES_EXISTS,	/* upload: is the target there */
	WORKER_FILES_PUT,	/* the temporary beside it */
	WORKER_FILES_BACK,	/* the temporary read back */
	WORKER_FILES_DELETE,	/* overwrite: the old target */
	WORKER_FILES_PATCH	/* the temporary renamed into place */
};

struct worker_files_xfer {
	struct worker_call	*call;
	int			 upload;
	const char		*host_path;	/* the call's arguments */
	const char		*kernel_path;
	int			 overwrite;
	char			*host;
	const char		*code;
	char			*msg;
	/* A transfer with a server. */
	char			*domain;
	struct domain		*d;
	enum worker_files_step	 step;
	char			*data;
	size_t			 len;
	char			*tmp;
	int			 ex;
	/* The result. */
	char			*where;		/* the kernel side */
	size_t			 bytes;
	char			 sha256[65];
	int			 replaced;
};

static void	worker_files_hash(const void *, size_t, char [65]);
static void	worker_files_transfer(struct worker_call *, int);
static int	worker_files_fail(struct worker_files_xfer *, const char *,
		    const char *, ...) printflike(3, 4);
static int	worker_files_read(struct worker_files_xfer *, const char *,
		    char **, size_t *);
static int	worker_files_write(struct worker_files_xfer *, const char *,
		    const char *, size_t);
static char	*worker_files_remote_path(struct worker_files_xfer *,
		    const char *);
static int	worker_files_request(struct worker_files_xfer *,
		    enum worker_files_step, const char *, const char *,
		    const char *, const char *, size_t);
static int	worker_files_exists(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_size(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_raw(struct worker_files_xfer *,
		    enum worker_files_step, const char *);
static int	worker_files_put(struct worker_files_xfer *);
static void	worker_files_ignore(struct jserver_reply *, void *);
static void	worker_files_delete(struct worker_files_xfer *,
		    const char *);
static int	worker_files_patch(struct worker_files_xfer *);
static void	worker_files_step(struct jserver_reply *, void *);
static int	worker_files_remote(struct worker_files_xfer *,
		    const char *);
static int	worker_files_local(struct worker_files_xfer *, const char *);
static void	worker_files_answer(struct worker_files_xfer *, int);

static void
worker_files_hash(const void *data, size_t len, char out[65])
{
	unsigned char	md[CRYPTO_SHA256_LEN];

	crypto_sha256(data, len, md);
	util_hex(md, CRYPTO_SHA256_LEN, out);
}

static int
worker_files_fail(struct worker_files_xfer *x, const char *code,
    const char *fmt, ...)
{
	va_list	ap;

	x->code = code;
	free(x->msg);
	va_start(ap, fmt);
	xvasprintf(&x->msg, fmt, ap);
	va_end(ap);
	return (-1);
}

/* A file of this machine whole: regular, not a symlink, within the cap. */
static int
worker_files_read(struct worker_files_xfer *x, const char *path, char **data,
    size_t *len)
{
	struct stat	 sb;
	char		*buf, *cause;
	size_t		 off = 0;
	ssize_t		 n = 0;
	int		 fd;

	/* A FIFO or device there is refused without waiting on it. */
	if (sticky_check(path, &cause) != 0 ||
	    (fd = util_open_regular(path, UTIL_NOFOLLOW, &sb, &cause)) == -1) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	if ((uint64_t)sb.st_size > WORKER_FILES_MAX) {
		close(fd);
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s is %lld bytes, over the %d-byte (%d MiB) cap of a "
		    "transfer; nothing was sent", path, (long long)sb.st_size,
		    WORKER_FILES_MAX, WORKER_FILES_MAX >> 20));
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (off < (size_t)sb.st_size + 1) {
		n = read(fd, buf + off, (size_t)sb.st_size + 1 - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (n == -1 || off != (size_t)sb.st_size) {
		free(buf);
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s "
		    "changed size or could not be read while copying", path));
	}
	*data = buf;
	*len = off;
	return (0);
}

/*
 * Write data to path through a temporary file beside it, read it back
 * and check its hash, then rename it into place.  Without overwrite an
 * existing path is refused (checked again just before the rename).
 */
static int
worker_files_write(struct worker_files_xfer *x, const char *path,
    const char *data, size_t len)
{
	struct atomic	*a;
	struct stat	 sb;
	char		*cause, *back, sum[65];
	size_t		 off;
	ssize_t		 n;
	int		 fd, exists, rc;

	if (sticky_check(path, &cause) != 0) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	exists = lstat(path, &sb) == 0;
	if (exists && !x->overwrite)
		return (worker_files_fail(x, PROTO_E_FILE_EXISTS, "%s exists; "
		    "pass overwrite: true to replace it", path));
	if (exists && !S_ISREG(sb.st_mode))
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s is not a regular file (a symbolic link or directory is "
		    "never written through)", path));
	if ((a = atomic_create(path, 0644, &cause)) == NULL) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	fd = atomic_fd(a);
	for (off = 0; off < len; off += (size_t)n) {
		if ((n = write(fd, data + off, len - off)) <= 0) {
			if (n == -1 && errno == EINTR) {
				n = 0;
				continue;
			}
			atomic_free(a);
			return (worker_files_fail(x,
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "cannot write beside %s: %s", path,
			    strerror(errno)));
		}
	}
	/* The other end: what the file holds now. */
	back = xmalloc(len + 1);
	for (off = 0; off < len + 1; off += (size_t)n) {
		if ((n = pread(fd, back + off, len + 1 - off,
		    (off_t)off)) <= 0)
			break;
	}
	worker_files_hash(back, off, sum);
	free(back);
	if (off != len || strcmp(sum, x->sha256) != 0) {
		atomic_free(a);
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "the copy written beside %s does not read back with the "
		    "same SHA-256; nothing was put in place", path));
	}
	if (!x->overwrite && lstat(path, &sb) == 0) {
		atomic_free(a);
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s appeared while copying; pass overwrite: true to "
		    "replace it",
		    path));
	}
	/* Without overwrite the rename itself never replaces a file. */
	if (!x->overwrite)
		atomic_expect(a, ATOMIC_ABSENT, 0, 0, -1, -1);
	if ((rc = atomic_commit(a, &cause)) != 0) {
		if (rc == ATOMIC_CHANGED)
			worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
			    "%s appeared while copying; pass overwrite: true "
			    "to replace it",
			    path);
		else
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s",
			    cause);
		free(cause);
		return (-1);
	}
	x->replaced = exists;
	return (0);
}

/* kernel_path on the server: under the notebook's directory. */
static char *
worker_files_remote_path(struct worker_files_xfer *x, const char *nbpath)
{
	const char	*kp = x->kernel_path, *slash;
	char		*p;
	size_t		 len = strlen(kp);

	if (*kp == '/' || len == 0 || len > 1024 || strcmp(kp, "..") == 0 ||
	    strncmp(kp, "../", 3) == 0 || strstr(kp, "/../") != NULL ||
	    (len >= 3 && strcmp(kp + len - 3, "/..") == 0) ||
	    kp[len - 1] == '/' || strpbrk(kp, "\\\r\n") != NULL) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "kernel_path on a Jupyter Server is a file relative to the "
		    "notebook's directory, without ..");
		return (NULL);
	}
	if ((slash = strrchr(nbpath, '/')) == NULL)
		return (xstrdup(kp));
	xasprintf(&p, "%.*s/%s", (int)(slash - nbpath), nbpath, kp);
	return (p);
}

/* Start a contents call of x's (path with query); its reply is step. */
static int
worker_files_request(struct worker_files_xfer *x, enum worker_files_step step,
    const char *method, const char *path, const char *query,
    const char *body, size_t len)
{
	char	*uri;
	int	 rc;

	x->step = step;
	uri = domain_contents_uri(path, query);
	rc = jserver_request(worker_rpc_base(), x->d, method, uri, body, len,
	    JSERVER_TIMEOUT, worker_files_step, x);
	free(uri);
	if (rc != 0)
		worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot start a request to %s", x->d->url);
	return (rc);
}

/*
 * A download's first answer, the model without content: a directory, a
 * missing file or one over the cap is refused before its bytes move.  A
 * server that gives no size is checked on the content (the decode).
 */
static int
worker_files_size(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct json_object	*o, *v;
	char			*why;
	int64_t			 size = -1;
	int			 file = 1;

	if (r->status != 200) {
		why = jserver_reply_message(r);
		worker_files_fail(x, r->status == 404 || r->status == 400 ?
		    PROTO_E_INVALID_ARGUMENT : PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "%s on %s: %s",
		    x->where, x->d->url, why);
		free(why);
		return (-1);
	}
	if ((o = jserver_reply_json(r, &why)) == NULL) {
		worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s", why);
		free(why);
		return (-1);
	}
	if (json_object_object_get_ex(o, "type", &v) &&
	    json_object_is_type(v, json_type_string))
		file = strcmp(json_object_get_string(v), "directory") != 0;
	if (json_object_object_get_ex(o, "size", &v) &&
	    json_object_is_type(v, json_type_int))
		size = json_object_get_int64(v);
	json_object_put(o);
	if (!file)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s on %s is not a file", x->where, x->d->url));
	if (size > WORKER_FILES_MAX)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s on %s is %lld bytes, over the %d-byte (%d MiB) cap of "
		    "a transfer; nothing was fetched", x->where, x->d->url,
		    (long long)size, WORKER_FILES_MAX, WORKER_FILES_MAX >> 20));
	return (0);
}

/*
 * Start a GET of path's bytes as they are, from files/ (the server's
 * file handler, the same token): no base64 made by the server and parsed
 * here, about 10x faster than the contents API for 16 MiB.  Its reply
 * (a body within JSERVER_BODY_MAX) is step.
 */
static int
worker_files_raw(struct worker_files_xfer *x, enum worker_files_step step,
    const char *path)
{
	char	*enc, *uri;
	int	 rc;

	enc = domain_encode_path(path);
	xasprintf(&uri, "files/%s", enc);
	free(enc);
	x->step = step;
	rc = jserver_request(worker_rpc_base(), x->d, "GET", uri, NULL, 0,
	    JSERVER_TIMEOUT, worker_files_step, x);
	free(uri);
	if (rc != 0)
		worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot start a request to %s", x->d->url);
	return (rc);
}

/* 1 if the target exists on the server, 0 if not, -1 if it cannot say. */
static int
worker_files_exists(struct worker_files_xfer *x, struct jserver_reply *r)
{
	char	*why;

	if (r->status == 200 || r->status == 404)
		return (r->status == 200);
	why = jserver_reply_message(r);
	worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s: %s", x->d->url,
	    why);
	free(why);
	return (-1);
}

/* Start the PUT of the data to a temporary name beside the target. */
static int
worker_files_put(struct worker_files_xfer *x)
{
	unsigned char	 rnd[8];
	char		 name[ATOMIC_NAME_SIZE];
	char		*dir, *base, *b64, *body;
	int		 rc;

	if (crypto_random(rnd, sizeof rnd) != 0)
		fatalx("no random bytes");
	base = strrchr(x->where, '/');
	dir = base != NULL ? xstrndup(x->where, (size_t)(base - x->where)) :
	    NULL;
	/* Without the leading dot: a server refuses hidden names. */
	atomic_temp_name(base != NULL ? base + 1 : x->where, rnd, name);
	if (dir != NULL)
		xasprintf(&x->tmp, "%s/%s", dir, name + 1);
	else
		x->tmp = xstrdup(name + 1);
	free(dir);
	b64 = xmalloc(4 * ((x->len + 2) / 3) + 1);
	crypto_b64_encode(b64, x->data, x->len);
	xasprintf(&body, "{\"type\":\"file\",\"format\":\"base64\","
	    "\"content\":\"%s\"}", b64);
	free(b64);
	rc = worker_files_request(x, WORKER_FILES_PUT, "PUT", x->tmp, "",
	    body, strlen(body));
	free(body);
	return (rc);
}

static void
worker_files_ignore(struct jserver_reply *r, void *arg)
{
	(void)r;
	(void)arg;
}

/* Delete a server path, not waiting for it; a missing one is fine. */
static void
worker_files_delete(struct worker_files_xfer *x, const char *path)
{
	char	*uri;

	uri = domain_contents_uri(path, "");
	jserver_request(worker_rpc_base(), x->d, "DELETE", uri, NULL, 0,
	    JSERVER_TIMEOUT, worker_files_ignore, NULL);
	free(uri);
}

/* Start renaming the temporary into place. */
static int
worker_files_patch(struct worker_files_xfer *x)
{
	struct json_object	*o;
	const char		*body;
	int			 rc;

	o = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(x->where));
	body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	rc = worker_files_request(x, WORKER_FILES_PATCH, "PATCH", x->tmp, "",
	    body, strlen(body));
	json_object_put(o);
	if (rc != 0)
		worker_files_delete(x, x->tmp);
	return (rc);
}

/*
 * One contents call of a transfer is back: check it, start the next,
 * or answer.  An upload's temporary is deleted when a later step fails.
 */
static void
worker_files_step(struct jserver_reply *r, void *arg)
{
	struct worker_files_xfer	*x = arg;
	char				*why, sum[65];

	switch (x->step) {
	case WORKER_FILES_SIZE:
		if (worker_files_size(x, r) != 0)
			break;
		if (worker_files_raw(x, WORKER_FILES_GET, x->where) != 0)
			break;
		return;
	case WORKER_FILES_GET:
		if (r->status != 200) {
			why = jserver_reply_message(r);
			worker_files_fail(x,
			    r->status == 404 ? PROTO_E_INVALID_ARGUMENT :
			    PROTO_E_NOTEBOOK_UNAVAILABLE, "%s on %s: %s",
			    x->where, x->d->url, why);
			free(why);
			break;
		}
		if (r->len > WORKER_FILES_MAX) {
			worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
			    "%s on %s is "
			    "over the %d-byte (%d MiB) cap of a transfer (it "
			    "grew since its size was asked)", x->where,
			    x->d->url, WORKER_FILES_MAX, WORKER_FILES_MAX >> 20);
			break;
		}
		/* The reply's body is ours now. */
		x->data = r->body;
		x->len = r->len;
		r->body = NULL;
		r->len = 0;
		x->bytes = x->len;
		worker_files_hash(x->data, x->len, x->sha256);
		worker_files_answer(x, worker_files_write(x, x->host_path,
		    x->data, x->len));
		return;
	case WORKER_FILES_EXISTS:
		if ((x->ex = worker_files_exists(x, r)) == -1)
			break;
		if (x->ex && !x->overwrite) {
			worker_files_fail(x, PROTO_E_FILE_EXISTS, "%s exists "
			    "on %s; pass overwrite: true to replace it",
			    x->where, x->domain);
			break;
		}
		if (worker_files_put(x) != 0)
			break;
		return;
	case WORKER_FILES_PUT:
		if (r->status != 200 && r->status != 201) {
			why = jserver_reply_message(r);
			worker_files_fail(x, r->status == 404 ?
			    PROTO_E_INVALID_ARGUMENT :
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "writing %s on %s: %s", x->where, x->d->url, why);
			free(why);
			break;
		}
		if (worker_files_raw(x, WORKER_FILES_BACK, x->tmp) != 0) {
			worker_files_delete(x, x->tmp);
			break;
		}
		return;
	case WORKER_FILES_BACK:
		/* A message names the target: the temporary is ours. */
		if (r->status != 200) {
			why = jserver_reply_message(r);
			worker_files_delete(x, x->tmp);
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "reading %s "
			    "back on %s: %s", x->where, x->d->url, why);
			free(why);
			break;
		}
		worker_files_hash(r->body, r->len, sum);
		if (r->len != x->len || strcmp(sum, x->sha256) != 0) {
			worker_files_delete(x, x->tmp);
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "the copy on %s does not read back with the same "
			    "SHA-256; nothing was put in place", x->domain);
			break;
		}
		if (x->ex) {
			if (worker_files_request(x, WORKER_FILES_DELETE,
			    "DELETE", x->where, "", NULL, 0) != 0) {
				worker_files_delete(x, x->tmp);
				break;
			}
			return;
		}
		if (worker_files_patch(x) != 0)
			break;
		return;
	case WORKER_FILES_DELETE:
		if (worker_files_patch(x) != 0)
			break;
		return;
	case WORKER_FILES_PATCH:
		if (r->status != 200) {
			why = jserver_reply_message(r);
			worker_files_delete(x, x->tmp);
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "renaming into place on %s: %s", x->domain, why);
			free(why);
			break;
		}
		x->replaced = x->ex;
		worker_files_answer(x, 0);
		return;
	}
	worker_files_answer(x, -1);
}

/*
 * Start a transfer with a notebook on domain at nbpath: 0 if its first
 * contents call is under way (worker_files_step answers), -1 if it
 * failed at once.
 */
static int
worker_files_remote(struct worker_files_xfer *x, const char *nbpath)
{
	char	*cause;

	if ((x->d = domain_load(x->domain, &cause)) == NULL) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	if ((x->where = worker_files_remote_path(x, nbpath)) == NULL)
		return (-1);
	/* A download over the cap is refused before its bytes move. */
	if (!x->upload)
		return (worker_files_request(x, WORKER_FILES_SIZE, "GET",
		    x->where, "?content=0", NULL, 0));
	if (worker_files_read(x, x->host_path, &x->data, &x->len) != 0)
		return (-1);
	x->bytes = x->len;
	worker_files_hash(x->data, x->len, x->sha256);
	return (worker_files_request(x, WORKER_FILES_EXISTS, "GET", x->where,
	    "?content=0", NULL, 0));
}

/* A copy on this machine, kernel_path relative to nbdir. */
static int
worker_files_local(struct worker_files_xfer *x, const char *nbdir)
{
	char	*data;
	size_t	 len;
	int	 rc;

	if (*x->kernel_path == '/')
		x->where = xstrdup(x->kernel_path);
	else
		xasprintf(&x->where, "%s/%s", nbdir, x->kernel_path);
	if (worker_files_read(x, x->upload ? x->host_path : x->where, &data,
	    &len) != 0)
		return (-1);
	x->bytes = len;
	worker_files_hash(data, len, x->sha256);
	rc = worker_files_write(x, x->upload ? x->where : x->host_path, data,
	    len);
	free(data);
	return (rc);
}

/*
 * Run the transfer of tool call (upload or download) for the notebook it
 * names and answer the call.  Each tool lists its arguments in its own
 * order (an unknown argument's error quotes the list).
 */
static void
worker_files_transfer(struct worker_call *call, int upload)
{
	static const char *const	 allowed_up[] = {
		"notebook_handle", "notebook_id", "domain", "host_path",
		"kernel_path", "overwrite", NULL
	};
	static const char *const	 allowed_down[] = {
		"notebook_handle", "notebook_id", "domain", "kernel_path",
		"host_path", "overwrite", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct worker_files_xfer	*x;
	struct worker_handle		*h;
	struct worker_room		*room;
	const char			*domain, *nbpath, *home;
	char				*msg = NULL, *dir;
	int				 rc;

	if (worker_call_check(call, upload ? allowed_up : allowed_down) != 0)
		return;
	if ((h = worker_call_target(call)) == NULL)
		return;
	room = worker_attach_room(h);
	x = xcalloc(1, sizeof *x);
	x->call = call;
	x->upload = upload;
	if (worker_args_string(args, "host_path", 1, &x->host_path,
	    &msg) != 0 ||
	    worker_args_string(args, "kernel_path", 1, &x->kernel_path,
	    &msg) != 0 ||
	    worker_args_bool(args, "overwrite", 0, &x->overwrite, &msg) != 0) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", msg);
		free(msg);
		worker_files_answer(x, -1);
		return;
	}
	if (*x->host_path == '\0' || *x->kernel_path == '\0') {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "host_path and kernel_path must not be empty");
		worker_files_answer(x, -1);
		return;
	}
	x->host = worker_args_path(x->host_path);
	x->host_path = x->host;
	domain = worker_room_domain(room);
	nbpath = worker_room_path(room);
	if (domain != NULL) {
		x->domain = xstrdup(domain);
		if (worker_files_remote(x, nbpath != NULL ? nbpath : "") != 0)
			worker_files_answer(x, -1);
		return;
	}
	/* An untitled notebook's kernel runs in $HOME. */
	if (nbpath != NULL) {
		dir = xstrdup(nbpath);
		*strrchr(dir, '/') = '\0';
	} else {
		home = getenv("HOME");
		dir = xstrdup(home != NULL && *home != '\0' ? home : "/");
	}
	rc = worker_files_local(x, *dir == '\0' ? "/" : dir);
	free(dir);
	worker_files_answer(x, rc);
}

/* Answer the transfer's call (rc 0: done) and free it. */
static void
worker_files_answer(struct worker_files_xfer *x, int rc)
{
	struct json_object	*sc;
	char			*text;

	if (rc != 0)
		worker_call_error(x->call, x->code, "%s", x->msg);
	else {
		sc = json_object_new_object();
		json_object_object_add(sc, "host_path",
		    json_object_new_string(x->host_path));
		json_object_object_add(sc, "kernel_path",
		    json_object_new_string(x->where));
		json_object_object_add(sc, "domain", json_object_new_string(
		    x->domain != NULL ? x->domain : "local"));
		json_object_object_add(sc, "bytes", json_object_new_int64(
		    (int64_t)x->bytes));
		json_object_object_add(sc, "sha256",
		    json_object_new_string(x->sha256));
		json_object_object_add(sc, "replaced",
		    json_object_new_boolean(x->replaced));
		xasprintf(&text, "%s %zu bytes %s %s (sha256 %s, checked at "
		    "both ends)", x->upload ? "uploaded" : "downloaded",
		    x->bytes, x->upload ? "to" : "from", x->where, x->sha256);
		worker_call_result(x->call, text, sc);
		free(text);
	}
	free(x->msg);
	free(x->where);
	free(x->host);
	free(x->domain);
	domain_free(x->d);
	free(x->data);
	free(x->tmp);
	free(x);
}

/* The handlers of upload_file and download_file. */
void
worker_files_upload(struct worker_call *call)
{
	worker_files_transfer(call, 1);
}

void
worker_files_download(struct worker_call *call)
{
	worker_files_transfer(call, 0);
}
