/* SPDX-License-Identifier: ISC */
/*
 * worker-files.c: upload_file and download_file, files between this
 * machine and where a notebook's kernel runs.  For a notebook on a
 * Jupyter Server (a domain) that is the server's contents API (its size
 * first, the upload's PUTs in base64, the rename) and its files/ handler
 * for the bytes as they are (a download, an upload's read-back); for a
 * local notebook a copy on this machine.  kernel_path is relative to the
 * notebook's directory (where its kernel runs), or absolute for a local
 * one.
 *
 * A transfer is a stream, WORKER_FILES_CHUNK at a time, never the file
 * whole (docs/decisions/081): an upload is read as it is sent, in
 * chunked PUTs ("chunk": 1, 2, ..., -1, which the server's
 * LargeFileManager appends; a file of one chunk is one plain PUT); a
 * download is written to disk as its body arrives (jserver_stream).
 * Every transfer is checked end to end with SHA-256: the bytes are
 * hashed as they pass, and what was written is read back before it is
 * put in place: here each piece right after its write, from the same
 * descriptor, compared byte for byte with the piece that was hashed (so
 * the file holds exactly the hashed bytes, for a memcmp rather than a
 * second SHA-256 pass); on a server a GET of the whole temporary,
 * hashed again.  Files go to a temporary name (atomic.c for
 * this machine: O_CREAT|O_EXCL|O_NOFOLLOW, 64 random bits; on a server
 * the same kind of name beside the target, without its leading dot,
 * since a server refuses hidden files) and are renamed over only when
 * overwrite is given; without it an existing target is refused.  A file
 * over WORKER_FILES_MAX is refused before any byte moves.  A transfer
 * that fails removes its temporary at either end; none is resumed.
 *
 * A transfer is a chain of asynchronous steps on the worker's loop
 * (worker_files_step for a server's replies, worker_files_pump for this
 * machine's pieces, a zero timer apart so the loop polls between them),
 * answered when the last one is done: other tool calls go on meanwhile
 * (decision 029).
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

/* A transfer's steps. */
enum worker_files_step {
	WORKER_FILES_SIZE,	/* download: the file's size, no content */
	WORKER_FILES_GET,	/* download: the file, streamed to disk */
	WORKER_FILES_EXISTS,	/* upload: is the target there */
	WORKER_FILES_PUT,	/* upload: a chunk of the temporary beside it */
	WORKER_FILES_BACK,	/* the temporary read back */
	WORKER_FILES_DELETE,	/* overwrite: the old target */
	WORKER_FILES_PATCH,	/* the temporary renamed into place */
	WORKER_FILES_COPY	/* this machine: the next piece copied */
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
	char			*tmp;
	int			 ex;
	int			 chunk;		/* PUTs in chunks (0: one PUT) */
	int			 sent;		/* PUTs sent */
	uint64_t		 sentoff;	/* bytes in them */
	int			 last;		/* the PUT sent is the last */
	char			*next;		/* the next PUT's body, ready */
	size_t			 nextlen;
	int			 nextlast;
	/* The stream. */
	int			 src;		/* the file read here, or -1 */
	const char		*srcpath;
	uint64_t		 size;		/* what it should come to */
	uint64_t		 off;		/* bytes moved so far */
	char			*buf;		/* WORKER_FILES_CHUNK */
	struct evp_md_ctx_st	*hash;
	struct atomic		*a;		/* this machine's temporary */
	char			*cmp;		/* WORKER_FILES_CMP read back */
	int			 differs;	/* it read back otherwise */
	uint64_t		 woff;		/* bytes written to it */
	size_t			 fill;		/* a download's, in buf */
	const char		*dstpath;
	int			 exists;	/* dstpath was there */
	struct event		*pump;
	/* The result. */
	char			*where;		/* the kernel side */
	uint64_t		 bytes;
	char			 sha256[65];
	int			 replaced;
};

static void	worker_files_hex(struct worker_files_xfer *, char [65]);
static void	worker_files_transfer(struct worker_call *, int);
static int	worker_files_fail(struct worker_files_xfer *, const char *,
		    const char *, ...) printflike(3, 4);
static int	worker_files_open(struct worker_files_xfer *, const char *);
static int	worker_files_read(struct worker_files_xfer *, size_t);
static int	worker_files_create(struct worker_files_xfer *, const char *);
static int	worker_files_write(struct worker_files_xfer *, const void *,
		    size_t);
static int	worker_files_commit(struct worker_files_xfer *);
static int	worker_files_finish(struct worker_files_xfer *);
static void	worker_files_next(struct worker_files_xfer *,
		    enum worker_files_step);
static void	worker_files_pump(evutil_socket_t, short, void *);
static char	*worker_files_remote_path(struct worker_files_xfer *,
		    const char *);
static int	worker_files_request(struct worker_files_xfer *,
		    enum worker_files_step, const char *, const char *,
		    const char *, const char *, size_t);
static int	worker_files_exists(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_size(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_piece(const void *, size_t, void *);
static int	worker_files_raw(struct worker_files_xfer *,
		    enum worker_files_step, const char *);
static int	worker_files_prep(struct worker_files_xfer *);
static int	worker_files_put(struct worker_files_xfer *);
static int	worker_files_grew(struct worker_files_xfer *,
		    struct jserver_reply *);
static void	worker_files_ignore(struct jserver_reply *, void *);
static void	worker_files_delete(struct worker_files_xfer *,
		    const char *);
static int	worker_files_patch(struct worker_files_xfer *);
static void	worker_files_step(struct jserver_reply *, void *);
static int	worker_files_remote(struct worker_files_xfer *,
		    const char *);
static int	worker_files_local(struct worker_files_xfer *, const char *);
static void	worker_files_answer(struct worker_files_xfer *, int);

/* The stream's hash, ended, as hex. */
static void
worker_files_hex(struct worker_files_xfer *x, char out[65])
{
	unsigned char	md[CRYPTO_SHA256_LEN];

	crypto_sha256_end(x->hash, md);
	x->hash = NULL;
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

/* Open the file of this machine to send: regular, no symlink, capped. */
static int
worker_files_open(struct worker_files_xfer *x, const char *path)
{
	struct stat	 sb;
	char		*cause;

	/* A FIFO or device there is refused without waiting on it. */
	if (sticky_check(path, &cause) != 0 ||
	    (x->src = util_open_regular(path, UTIL_NOFOLLOW, &sb,
	    &cause)) == -1) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	if ((uint64_t)sb.st_size > WORKER_FILES_MAX)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s is %lld bytes, over the %d-byte (%d MiB) cap of a "
		    "transfer; nothing was sent", path, (long long)sb.st_size,
		    WORKER_FILES_MAX, WORKER_FILES_MAX >> 20));
	x->srcpath = path;
	x->size = (uint64_t)sb.st_size;
	x->off = 0;
	x->hash = crypto_sha256_begin();
	return (0);
}

/*
 * The next len bytes of the file sent into buf, hashed; at its end, one
 * more read says it did not grow.  A file that changed size meanwhile
 * fails the transfer.
 */
static int
worker_files_read(struct worker_files_xfer *x, size_t len)
{
	size_t	 got = 0;
	ssize_t	 n = 0;
	char	 extra;

	while (got < len) {
		n = read(x->src, x->buf + got, len - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == len && x->off + len == x->size) {
		while ((n = read(x->src, &extra, 1)) == -1 && errno == EINTR)
			;
		if (n != 0)
			n = -2;
	}
	if (got != len || n < 0)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s "
		    "changed size or could not be read while copying; nothing "
		    "was put in place", x->srcpath));
	crypto_sha256_add(x->hash, x->buf, len);
	x->off += len;
	return (0);
}

/*
 * The temporary file beside path, to write into.  Without overwrite an
 * existing path is refused (checked again just before the rename); a
 * symbolic link or directory there always is.
 */
static int
worker_files_create(struct worker_files_xfer *x, const char *path)
{
	struct stat	 sb;
	char		*cause;

	if (sticky_check(path, &cause) != 0) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	x->exists = lstat(path, &sb) == 0;
	if (x->exists && !x->overwrite)
		return (worker_files_fail(x, PROTO_E_FILE_EXISTS, "%s exists; "
		    "pass overwrite: true to replace it", path));
	if (x->exists && !S_ISREG(sb.st_mode))
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s is not a regular file (a symbolic link or directory is "
		    "never written through)", path));
	if ((x->a = atomic_create(path, 0644, &cause)) == NULL) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	x->dstpath = path;
	x->woff = 0;
	x->differs = 0;
	if (x->cmp == NULL)
		x->cmp = xmalloc(WORKER_FILES_CMP);
	return (0);
}

/* len bytes more into this machine's temporary. */
static int
worker_files_write(struct worker_files_xfer *x, const void *data, size_t len)
{
	const char	*p = data;
	size_t		 off;
	ssize_t		 n;

	int		 fd = atomic_fd(x->a);

	for (off = 0; off < len; off += (size_t)n) {
		if ((n = write(fd, p + off, len - off)) <= 0) {
			if (n == -1 && errno == EINTR) {
				n = 0;
				continue;
			}
			return (worker_files_fail(x,
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "cannot write beside %s: %s", x->dstpath,
			    n == 0 ? "no progress" : strerror(errno)));
		}
	}
	/*
	 * The other end: what the file holds there now, the same bytes as
	 * the ones hashed (data may be x->buf: read into x->cmp).
	 */
	for (off = 0; off < len; off += (size_t)n) {
		n = pread(fd, x->cmp, len - off < WORKER_FILES_CMP ?
		    len - off : WORKER_FILES_CMP, (off_t)(x->woff + off));
		if (n == -1 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0)
			break;
		if (memcmp(x->cmp, p + off, (size_t)n) != 0) {
			x->differs = 1;
			break;
		}
	}
	x->woff += off;
	return (0);
}

/*
 * All written: if it read back whole and as the hashed bytes were,
 * rename it into place.
 */
static int
worker_files_finish(struct worker_files_xfer *x)
{
	if (x->woff != x->bytes || x->differs)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "the copy written beside %s does not read back as the "
		    "bytes hashed were (SHA-256 %s); nothing was put in place",
		    x->dstpath, x->sha256));
	return (worker_files_commit(x));
}

/* The temporary, read back as it was written, renamed into place. */
static int
worker_files_commit(struct worker_files_xfer *x)
{
	struct atomic	*a = x->a;
	struct stat	 sb;
	char		*cause;
	int		 rc;

	if (!x->overwrite && lstat(x->dstpath, &sb) == 0)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s appeared while copying; pass overwrite: true to "
		    "replace it", x->dstpath));
	/* Without overwrite the rename itself never replaces a file. */
	if (!x->overwrite)
		atomic_expect(a, ATOMIC_ABSENT, 0, 0, -1, -1);
	x->a = NULL;	/* atomic_commit frees it either way */
	if ((rc = atomic_commit(a, &cause)) != 0) {
		if (rc == ATOMIC_CHANGED)
			worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
			    "%s appeared while copying; pass overwrite: true "
			    "to replace it", x->dstpath);
		else
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "%s",
			    cause);
		free(cause);
		return (-1);
	}
	x->replaced = x->exists;
	return (0);
}

/* Run step from the loop, after it has polled (other calls go on). */
static void
worker_files_next(struct worker_files_xfer *x, enum worker_files_step step)
{
	struct timeval	tv = { 0, 0 };

	x->step = step;
	evtimer_add(x->pump, &tv);
}

/* A local copy's next piece, written and read back; then its end. */
static void
worker_files_pump(evutil_socket_t fd, short events, void *arg)
{
	struct worker_files_xfer	*x = arg;
	size_t				 len;

	(void)fd;
	(void)events;
	/* An upload's next chunk; a failure is answered with the reply. */
	if (x->step == WORKER_FILES_PUT) {
		if (x->next == NULL)
			worker_files_prep(x);
		return;
	}
	len = x->size - x->off < WORKER_FILES_CHUNK ?
	    (size_t)(x->size - x->off) : WORKER_FILES_CHUNK;
	if (worker_files_read(x, len) != 0 ||
	    worker_files_write(x, x->buf, len) != 0) {
		worker_files_answer(x, -1);
		return;
	}
	if (x->off < x->size) {
		worker_files_next(x, WORKER_FILES_COPY);
		return;
	}
	x->bytes = x->size;
	worker_files_hex(x, x->sha256);
	worker_files_answer(x, worker_files_finish(x));
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
 * missing file or one over the cap is refused before its bytes move, and
 * so is a host_path that may not be written.  A server that gives no
 * size is held to the cap as the bytes come.
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
	x->size = size >= 0 ? (uint64_t)size : WORKER_FILES_MAX;
	x->off = 0;
	return (worker_files_create(x, x->host_path));
}

/*
 * A piece of a download's body (up to a MiB, or 4 KiB from a reply
 * without Content-Length): past the cap the GET is stopped, else it goes
 * into the hash and to the temporary here, small pieces gathered in buf
 * first.  Writing it
 * before returning is the back-pressure: evhttp reads no more meanwhile.
 */
static int
worker_files_piece(const void *data, size_t len, void *arg)
{
	struct worker_files_xfer	*x = arg;
	const char			*p = data;
	size_t				 n;

	if (x->step == WORKER_FILES_BACK) {
		crypto_sha256_add(x->hash, data, len);
		x->off += len;
		return (0);
	}
	if (x->off + len > WORKER_FILES_MAX)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s on %s is over the %d-byte (%d MiB) cap of a transfer "
		    "(it grew since its size was asked); nothing was put in "
		    "place", x->where, x->d->url, WORKER_FILES_MAX,
		    WORKER_FILES_MAX >> 20));
	crypto_sha256_add(x->hash, data, len);
	x->off += len;
	/* A large piece (jserver_pull's) goes as it is, not through buf. */
	if (x->fill == 0 && len >= WORKER_FILES_CHUNK / 4)
		return (worker_files_write(x, data, len));
	while (len > 0) {
		n = WORKER_FILES_CHUNK - x->fill < len ?
		    WORKER_FILES_CHUNK - x->fill : len;
		memcpy(x->buf + x->fill, p, n);
		x->fill += n;
		p += n;
		len -= n;
		if (x->fill < WORKER_FILES_CHUNK)
			break;
		x->fill = 0;
		if (worker_files_write(x, x->buf, WORKER_FILES_CHUNK) != 0)
			return (-1);
	}
	return (0);
}

/*
 * Start a GET of path's bytes as they are, from files/ (the server's
 * file handler, the same token): no base64 made by the server and parsed
 * here, about 10x faster than the contents API.  Its body is streamed
 * to worker_files_piece, hashed as it comes; its end is step.  It may
 * take JSERVER_TIMEOUT and a second a MiB.
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
	x->off = 0;
	x->hash = crypto_sha256_begin();
	rc = jserver_stream(worker_rpc_base(), x->d, uri, WORKER_FILES_MAX,
	    JSERVER_TIMEOUT + (int)(x->size >> 20), worker_files_piece,
	    worker_files_step, x);
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

/*
 * The next chunk's PUT body, made ready in x->next: read from the file,
 * hashed, its base64 in place.  A file of one chunk is one plain PUT; a
 * longer one goes as "chunk": 1, 2, ..., -1, which the server's
 * LargeFileManager writes, then appends.
 */
static int
worker_files_prep(struct worker_files_xfer *x)
{
	char	 num[32];
	size_t	 len, n, plen;

	len = x->size - x->off < WORKER_FILES_CHUNK ?
	    (size_t)(x->size - x->off) : WORKER_FILES_CHUNK;
	if (worker_files_read(x, len) != 0)
		return (-1);
	x->nextlast = x->off == x->size;
	if (x->chunk == 0)
		*num = '\0';
	else
		snprintf(num, sizeof num, "\"chunk\":%d,",
		    x->nextlast ? -1 : x->sent + 1);
	plen = (size_t)snprintf(NULL, 0, "{\"type\":\"file\",\"format\":"
	    "\"base64\",%s\"content\":\"", num);
	x->next = xmalloc(plen + 4 * ((len + 2) / 3) + 3);
	snprintf(x->next, plen + 1, "{\"type\":\"file\",\"format\":\"base64\","
	    "%s\"content\":\"", num);
	n = plen + crypto_b64_encode(x->next + plen, x->buf, len);
	memcpy(x->next + n, "\"}", 3);
	x->nextlen = n + 2;
	return (0);
}

/*
 * Start the PUT of the next chunk to the temporary name beside the
 * target (named at the first).  The chunk after it is made ready from
 * the loop a moment later, while the server takes this one in: its
 * read, hash and base64 overlap the server's work rather than add to it.
 */
static int
worker_files_put(struct worker_files_xfer *x)
{
	struct timeval	 tv = { 0, 2000 };
	unsigned char	 rnd[8];
	char		 name[ATOMIC_NAME_SIZE];
	char		*dir, *base;
	int		 rc;

	if (x->tmp == NULL) {
		if (crypto_random(rnd, sizeof rnd) != 0)
			fatalx("no random bytes");
		base = strrchr(x->where, '/');
		dir = base != NULL ? xstrndup(x->where,
		    (size_t)(base - x->where)) : NULL;
		/* Without the leading dot: a server refuses hidden names. */
		atomic_temp_name(base != NULL ? base + 1 : x->where, rnd, name);
		if (dir != NULL)
			xasprintf(&x->tmp, "%s/%s", dir, name + 1);
		else
			x->tmp = xstrdup(name + 1);
		free(dir);
		x->chunk = x->size > WORKER_FILES_CHUNK;
	}
	/* Not made ready yet (the reply came first): now. */
	evtimer_del(x->pump);
	if (x->next == NULL && worker_files_prep(x) != 0)
		return (-1);
	x->last = x->nextlast;
	x->sent++;
	x->sentoff = x->off;
	rc = worker_files_request(x, WORKER_FILES_PUT, "PUT", x->tmp, "",
	    x->next, x->nextlen);
	free(x->next);
	x->next = NULL;
	if (rc == 0 && !x->last)
		evtimer_add(x->pump, &tv);
	return (rc);
}

/*
 * A chunk's reply gives the temporary's size: it must be all sent so
 * far.  A server whose contents manager does not append chunks (not a
 * LargeFileManager) writes each one whole: refused, with the reason.
 */
static int
worker_files_grew(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct json_object	*o, *v;
	char			*why;
	int64_t			 size = -1;

	if ((o = jserver_reply_json(r, &why)) == NULL) {
		free(why);
		return (0);	/* the read-back will tell */
	}
	if (json_object_object_get_ex(o, "size", &v) &&
	    json_object_is_type(v, json_type_int))
		size = json_object_get_int64(v);
	json_object_put(o);
	if (size == -1 || (uint64_t)size == x->sentoff)
		return (0);
	return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
	    "%s does not append chunked uploads (the copy holds %lld bytes "
	    "of the %llu sent; its contents manager is not a "
	    "LargeFileManager): a file over %d MiB cannot be uploaded there; "
	    "nothing was put in place", x->d->url, (long long)size,
	    (unsigned long long)x->sentoff, WORKER_FILES_CHUNK >> 20));
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
 * or answer.  An upload's temporary is deleted when a later step fails,
 * a download's (here) when the transfer is answered.
 */
static void
worker_files_step(struct jserver_reply *r, void *arg)
{
	struct worker_files_xfer	*x = arg;
	char				*why, sum[65];

	/* Before anything is made there: the server was not trusted. */
	if (r->untrusted && (x->step == WORKER_FILES_SIZE ||
	    x->step == WORKER_FILES_EXISTS)) {
		worker_files_fail(x, PROTO_E_TLS_UNVERIFIED, "%s", r->cause);
		worker_files_answer(x, -1);
		return;
	}
	switch (x->step) {
	case WORKER_FILES_SIZE:
		if (worker_files_size(x, r) != 0)
			break;
		if (worker_files_raw(x, WORKER_FILES_GET, x->where) != 0)
			break;
		return;
	case WORKER_FILES_GET:
		/* A piece that failed (the cap, a write) stopped it. */
		if (x->msg != NULL)
			break;
		if (r->status != 200) {
			why = jserver_reply_message(r);
			worker_files_fail(x,
			    r->status == 404 ? PROTO_E_INVALID_ARGUMENT :
			    PROTO_E_NOTEBOOK_UNAVAILABLE, "%s on %s: %s",
			    x->where, x->d->url, why);
			free(why);
			break;
		}
		if (worker_files_write(x, x->buf, x->fill) != 0)
			break;
		x->bytes = x->off;
		worker_files_hex(x, x->sha256);
		worker_files_answer(x, worker_files_finish(x));
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
		/* The next chunk could not be read. */
		if (x->msg != NULL) {
			worker_files_delete(x, x->tmp);
			break;
		}
		if (r->status != 200 && r->status != 201) {
			why = jserver_reply_message(r);
			worker_files_delete(x, x->tmp);
			worker_files_fail(x, r->status == 404 ?
			    PROTO_E_INVALID_ARGUMENT :
			    PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "writing %s on %s: %s", x->where, x->d->url, why);
			free(why);
			break;
		}
		if (x->chunk != 0 && worker_files_grew(x, r) != 0) {
			worker_files_delete(x, x->tmp);
			break;
		}
		if (!x->last) {
			if (worker_files_put(x) != 0) {
				worker_files_delete(x, x->tmp);
				break;
			}
			return;
		}
		x->bytes = x->size;
		worker_files_hex(x, x->sha256);
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
		worker_files_hex(x, sum);
		if (x->off != x->bytes || strcmp(sum, x->sha256) != 0) {
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
	case WORKER_FILES_COPY:
		break;	/* the pump's, never a reply's */
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
	if (worker_files_open(x, x->host_path) != 0)
		return (-1);
	return (worker_files_request(x, WORKER_FILES_EXISTS, "GET", x->where,
	    "?content=0", NULL, 0));
}

/* A copy on this machine, kernel_path relative to nbdir: pumped. */
static int
worker_files_local(struct worker_files_xfer *x, const char *nbdir)
{
	if (*x->kernel_path == '/')
		x->where = xstrdup(x->kernel_path);
	else
		xasprintf(&x->where, "%s/%s", nbdir, x->kernel_path);
	if (worker_files_open(x, x->upload ? x->host_path : x->where) != 0 ||
	    worker_files_create(x, x->upload ? x->where : x->host_path) != 0)
		return (-1);
	worker_files_next(x, WORKER_FILES_COPY);
	return (0);
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
	x->src = -1;
	x->buf = xmalloc(WORKER_FILES_CHUNK);
	x->pump = evtimer_new(worker_rpc_base(), worker_files_pump, x);
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
	if (rc != 0)
		worker_files_answer(x, -1);
}

/* Answer the transfer's call (rc 0: done) and free it. */
static void
worker_files_answer(struct worker_files_xfer *x, int rc)
{
	struct json_object	*sc;
	char			*text;

	/* An unfinished temporary here goes before the answer says so. */
	atomic_free(x->a);
	x->a = NULL;
	if (x->src != -1)
		close(x->src);
	x->src = -1;
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
		xasprintf(&text, "%s %llu bytes %s %s (sha256 %s, checked at "
		    "both ends)", x->upload ? "uploaded" : "downloaded",
		    (unsigned long long)x->bytes, x->upload ? "to" : "from", x->where, x->sha256);
		worker_call_result(x->call, text, sc);
		free(text);
	}
	free(x->msg);
	free(x->where);
	free(x->host);
	free(x->domain);
	domain_free(x->d);
	free(x->tmp);
	free(x->next);
	free(x->buf);
	crypto_sha256_end(x->hash, NULL);
	free(x->cmp);
	event_free(x->pump);
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
