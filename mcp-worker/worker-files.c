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
 * that fails removes its temporary at either end.
 *
 * A server's connection cut mid-transfer (reset, closed early, a proxy
 * answering 502-504 while it restarts) is taken up where it was, within
 * the same call (decision 092): tried again WORKER_FILES_RETRY_FIRST_MS
 * later, doubling, for up to WORKER_FILES_RETRY_MS after the cut.  A
 * download asks the file's model again (the same size and last_modified)
 * and GETs the rest with a Range, its hash going on; a 206 of another
 * range or Last-Modified, or a 200, begins it again from zero, once.  An
 * upload's chunk cut short asks the temporary's size: the chunk is sent
 * again if it is not there, the next one if it is, and the temporary is
 * removed if the size is neither.
 *
 * A worker killed mid-transfer leaves a record of how far it got
 * (worker-files-record.c); the next call for the same transfer, in a new
 * worker, takes it up from there once the kept bytes hash as recorded
 * and the file is the same at both ends, or begins from zero and removes
 * that temporary (decision 098).
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
	WORKER_FILES_COPY,	/* this machine: the next piece copied */
	WORKER_FILES_CHECK,	/* download, cut: the file's model again */
	WORKER_FILES_ASK,	/* upload, cut: the temporary's size */
	WORKER_FILES_KEPT	/* upload: an earlier call's temporary's size */
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
	size_t			 nextraw;	/* its bytes of the file */
	int			 nextlast;
	char			*cur;		/* the PUT in flight's body */
	size_t			 curlen;
	uint64_t		 curoff;	/* bytes sent before it */
	/* After a cut connection (decision 092). */
	int			 resumes;	/* went on after a cut */
	int			 restarted;	/* begun again from zero */
	int64_t			 cut;		/* when, while waited out */
	int			 backoff;	/* ms to the next try */
	char			*cutwhy;	/* what the last try got */
	uint64_t		 cutat;		/* bytes moved at the cut */
	char			*lastmod;	/* the model's last_modified */
	char			*modified;	/* the first 200's Last-Modified */
	uint64_t		 from;		/* the stream's first byte */
	const char		*refused;	/* why its head was not taken */
	struct event		*retry;
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
	uint64_t		 synced;	/* of them, sent to disk */
	size_t			 fill;		/* a download's, in buf */
	const char		*dstpath;
	int			 exists;	/* dstpath was there */
	int			 old;		/* the file replaced, or -1 */
	struct event		*pump;
	/* What a later call may take up if this worker is killed (098). */
	struct worker_files_record rec;
	uint64_t		 recorded;	/* bytes when last written down */
	uint64_t		 kept;		/* taken up from an earlier call */
	const char		*anew;		/* why an earlier call's was not */
	int64_t			 mtime;		/* the file sent, ns */
	char			 pend[65];	/* SHA-256 of the bytes through */
	uint64_t		 pendoff;	/* the PUT in flight */
	struct worker_files_record earlier; /* an upload's earlier call's */
	/* Does the kernel see the server's contents (decision 100)? */
	struct worker_room	*room;
	char			*nbpath;	/* the notebook's, on the server */
	char			*probe;		/* its file there, or NULL */
	char			*probetext;	/* what the file holds */
	char			*unsure;	/* not decided: why */
	/* The result. */
	char			*where;		/* the kernel side */
	uint64_t		 bytes;
	char			 sha256[65];
	int			 replaced;
};

static void	worker_files_hex(struct worker_files_xfer *, char [65]);
static int	worker_files_known(struct worker_files_xfer *, const char *);
static int	worker_files_probe(struct worker_files_xfer *, const char *);
static void	worker_files_probe_put(struct jserver_reply *, void *);
static void	worker_files_probe_seen(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	worker_files_probe_gone(struct jserver_reply *, void *);
static int	worker_files_begin(struct worker_files_xfer *);
static void	worker_files_transfer(struct worker_call *, int);
static int	worker_files_fail(struct worker_files_xfer *, const char *,
		    const char *, ...) printflike(3, 4);
static int	worker_files_open(struct worker_files_xfer *, const char *);
static int	worker_files_read(struct worker_files_xfer *, size_t);
static int	worker_files_create(struct worker_files_xfer *, const char *);
static void	worker_files_take(struct worker_files_xfer *);
static void	worker_files_note(struct worker_files_xfer *);
static int	worker_files_stale(struct worker_files_record *, void *);
static int	worker_files_ours(const char *, const char *);
static int	worker_files_take_up(struct worker_files_xfer *);
static int	worker_files_kept(struct worker_files_xfer *,
		    struct jserver_reply *);
static void	worker_files_noted(struct worker_files_xfer *);
static int	worker_files_write(struct worker_files_xfer *, const void *,
		    size_t);
static int	worker_files_commit(struct worker_files_xfer *);
static void	worker_files_release(evutil_socket_t, short, void *);
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
static int	worker_files_model(struct worker_files_xfer *,
		    struct jserver_reply *, int64_t *, char **);
static int	worker_files_size(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_head(const struct jserver_head *, void *);
static int	worker_files_piece(const void *, size_t, void *);
static int	worker_files_raw(struct worker_files_xfer *,
		    enum worker_files_step, const char *, uint64_t);
static int	worker_files_cut(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_again(struct worker_files_xfer *,
		    struct jserver_reply *);
static void	worker_files_retry(evutil_socket_t, short, void *);
static int	worker_files_check(struct worker_files_xfer *,
		    struct jserver_reply *);
static int	worker_files_restart(struct worker_files_xfer *,
		    const char *);
static int	worker_files_send(struct worker_files_xfer *);
static int	worker_files_sent(struct worker_files_xfer *);
static int	worker_files_ask(struct worker_files_xfer *,
		    struct jserver_reply *);
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
	x->mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
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
	x->dstpath = path;
	x->woff = 0;
	x->synced = 0;
	x->differs = 0;
	if (x->cmp == NULL)
		x->cmp = xmalloc(WORKER_FILES_CMP);
	/* A download from a server an earlier call left: taken up. */
	if (x->rec.path != NULL && !x->upload)
		worker_files_take(x);
	if (x->a == NULL &&
	    (x->a = atomic_create(path, 0644, &cause)) == NULL) {
		worker_files_fail(x, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	}
	if (x->d != NULL && !x->upload) {
		worker_files_note(x);
		/* Other leftovers of killed downloads to path (not locked). */
		atomic_sweep(path);
	}
	return (0);
}

/*
 * The temporary of a download an earlier call left (its worker killed
 * mid-way), taken up if its record names this transfer, the server's
 * model is the one it began with, and the bytes it holds hash as the
 * record says: x->kept of them, the hash going on from there; the GET
 * asks for the rest with a Range (worker_files_head checks the 206 as
 * after a cut).  Otherwise that temporary is removed (a link or a file
 * not ours there is not touched) and the download begins from zero;
 * x->anew says why.
 */
static void
worker_files_take(struct worker_files_xfer *x)
{
	struct worker_files_record	 old;
	struct evp_md_ctx_st		*h;
	struct atomic			*a;
	struct stat			 sb;
	unsigned char			 md[CRYPTO_SHA256_LEN];
	const char			*why = NULL;
	char				*cause, sum[65];
	uint64_t			 off = 0;
	int64_t				 t0;
	ssize_t				 n;
	size_t				 len;
	int				 fd;

	if (worker_files_record_load(&x->rec, &old) != 0)
		return;
	t0 = util_mono_ms();
	if ((a = atomic_adopt(x->dstpath, old.tmp, 0644, &cause)) == NULL) {
		log_warnx("download of %s from %s: an earlier call's copy is "
		    "not taken up: %s", x->where, x->domain, cause);
		free(cause);
		/* One a live download holds keeps its record. */
		if (errno != EWOULDBLOCK)
			worker_files_record_drop(&x->rec);
		worker_files_record_free(&old);
		return;
	}
	fd = atomic_fd(a);
	h = crypto_sha256_begin();
	if (old.bytes == 0)
		;	/* nothing kept (killed before its first byte): removed */
	else if (old.size != x->size || x->lastmod == NULL ||
	    strcmp(old.lastmod, x->lastmod) != 0 || *old.modified == '\0')
		why = "the file changed on the server since an earlier call "
		    "began it";
	else if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size < old.bytes)
		why = "an earlier call's copy here is shorter than it was";
	else {
		/* Its bytes hashed again: they are what the record says. */
		while (off < old.bytes) {
			len = old.bytes - off < WORKER_FILES_CHUNK ?
			    (size_t)(old.bytes - off) : WORKER_FILES_CHUNK;
			n = pread(fd, x->buf, len, (off_t)off);
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			crypto_sha256_add(h, x->buf, (size_t)n);
			off += (uint64_t)n;
		}
		crypto_sha256_now(h, md);
		util_hex(md, CRYPTO_SHA256_LEN, sum);
		if (off != old.bytes || strcmp(sum, old.sha256) != 0)
			why = "an earlier call's copy here is not the bytes it "
			    "was";
		else if (ftruncate(fd, (off_t)off) != 0 ||
		    lseek(fd, (off_t)off, SEEK_SET) == -1)
			why = "an earlier call's copy here cannot be cut to "
			    "what was kept";
	}
	if (why != NULL || old.bytes == 0) {
		if (why != NULL)
			log_info("download of %s from %s begun from zero: %s",
			    x->where, x->domain, why);
		x->anew = why;
		crypto_sha256_end(h, NULL);
		atomic_free(a);		/* removes that temporary */
		worker_files_record_drop(&x->rec);
		worker_files_record_free(&old);
		return;
	}
	log_info("download of %s from %s taken up at byte %llu of %llu "
	    "(hashed again in %lld ms)", x->where, x->domain,
	    (unsigned long long)off, (unsigned long long)x->size,
	    (long long)(util_mono_ms() - t0));
	x->a = a;
	crypto_sha256_end(x->hash, NULL);
	x->hash = h;
	x->off = x->woff = x->synced = x->kept = x->recorded = off;
	free(x->modified);
	x->modified = xstrdup(old.modified);
	worker_files_record_free(&old);
}

/*
 * Write down how far a download from a server got: its temporary holds
 * x->woff bytes, all hashed (nothing gathered in buf).
 */
static void
worker_files_note(struct worker_files_xfer *x)
{
	unsigned char	md[CRYPTO_SHA256_LEN];

	if (x->rec.path == NULL || x->a == NULL)
		return;
	free(x->rec.tmp);
	x->rec.tmp = xstrdup(atomic_temp(x->a));
	free(x->rec.lastmod);
	x->rec.lastmod = x->lastmod != NULL ? xstrdup(x->lastmod) : NULL;
	free(x->rec.modified);
	x->rec.modified = x->modified != NULL ? xstrdup(x->modified) : NULL;
	x->rec.size = x->size;
	x->rec.bytes = x->woff;
	if (x->hash != NULL)
		crypto_sha256_now(x->hash, md);
	else
		crypto_sha256("", 0, md);
	util_hex(md, CRYPTO_SHA256_LEN, x->rec.sha256);
	worker_files_record_save(&x->rec);
	x->recorded = x->woff;
}

/*
 * A record not written for WORKER_FILES_KEEP_S (worker_files_record_sweep):
 * its temporary here removed (only one of ours: atomic_adopt), or an
 * upload's on this transfer's server; 0 if done, -1 to keep the record
 * (an upload's on another server, for a transfer there).
 */
static int
worker_files_stale(struct worker_files_record *r, void *arg)
{
	struct worker_files_xfer	*x = arg;
	struct atomic			*a;
	char				*cause;

	if (!r->upload) {
		if ((a = atomic_adopt(r->local, r->tmp, 0644, &cause)) == NULL)
			free(cause);
		atomic_free(a);
		return (0);
	}
	if (strcmp(r->domain, x->domain) != 0)
		return (-1);
	if (worker_files_ours(r->remote, r->tmp))
		worker_files_delete(x, r->tmp);
	return (0);
}

/*
 * Is tmp one of our temporary names on a server for the file remote:
 * beside it, "rtd-", the tag of its name, "-", 16 hex, ".tmp"?
 */
static int
worker_files_ours(const char *remote, const char *tmp)
{
	const char	*base, *name;
	char		 tag[ATOMIC_TAG_SIZE];
	size_t		 dlen;

	base = strrchr(remote, '/');
	dlen = base != NULL ? (size_t)(base - remote) + 1 : 0;
	base = base != NULL ? base + 1 : remote;
	if (strncmp(tmp, remote, dlen) != 0)
		return (0);
	name = tmp + dlen;
	atomic_tag(base, tag);
	return (strlen(name) == ATOMIC_NAME_SIZE - 2 &&
	    strncmp(name, "rtd-", 4) == 0 &&
	    strncmp(name + 4, tag, ATOMIC_TAG_SIZE - 1) == 0 &&
	    name[4 + ATOMIC_TAG_SIZE - 1] == '-' &&
	    strspn(name + 4 + ATOMIC_TAG_SIZE, "0123456789abcdef") == 16 &&
	    strcmp(name + 4 + ATOMIC_TAG_SIZE + 16, ".tmp") == 0);
}

/*
 * An upload an earlier call left on the server (its worker killed): if
 * its record names this transfer, the local file has the size and
 * mtime it had and its first bytes hash as the record says (read and
 * hashed here, the stream going on from there), the temporary's size is
 * asked (WORKER_FILES_KEPT): 1.  0 if there is nothing to take up (an
 * earlier call's temporary deleted, x->anew saying why when it was not
 * taken up), -1 if the file cannot be read.
 */
static int
worker_files_take_up(struct worker_files_xfer *x)
{
	struct worker_files_record	*o = &x->earlier;
	unsigned char			 md[CRYPTO_SHA256_LEN];
	char				 sum[65];
	size_t				 len;

	if (worker_files_record_load(&x->rec, o) != 0)
		return (0);
	if (!worker_files_ours(x->where, o->tmp)) {
		log_warnx("upload of %s to %s: %s is not a temporary of ours; "
		    "not taken up", x->where, x->domain, o->tmp);
		worker_files_record_drop(&x->rec);
		worker_files_record_free(o);
		return (0);
	}
	if (o->bytes == 0) {
		worker_files_delete(x, o->tmp);
		worker_files_record_drop(&x->rec);
		worker_files_record_free(o);
		return (0);
	}
	if (o->size != x->size || o->mtime != x->mtime || o->chunks < 1 ||
	    o->bytes >= o->size ||
	    o->bytes != (uint64_t)o->chunks * WORKER_FILES_CHUNK)
		x->anew = "the local file changed since an earlier call began "
		    "sending it";
	else {
		/* What was sent, read and hashed again: the same bytes. */
		while (x->off < o->bytes) {
			len = o->bytes - x->off < WORKER_FILES_CHUNK ?
			    (size_t)(o->bytes - x->off) : WORKER_FILES_CHUNK;
			if (worker_files_read(x, len) != 0)
				return (-1);
		}
		crypto_sha256_now(x->hash, md);
		util_hex(md, CRYPTO_SHA256_LEN, sum);
		if (strcmp(sum, o->sha256) != 0)
			x->anew = "the local file is not what an earlier call "
			    "sent";
	}
	if (x->anew == NULL) {
		if (worker_files_request(x, WORKER_FILES_KEPT, "GET", o->tmp,
		    "?content=0", NULL, 0) != 0)
			return (-1);
		return (1);
	}
	log_info("upload of %s to %s begun from zero: %s", x->where,
	    x->domain, x->anew);
	worker_files_delete(x, o->tmp);
	worker_files_record_drop(&x->rec);
	worker_files_record_free(o);
	if (x->off > 0 && lseek(x->src, 0, SEEK_SET) != 0)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot read %s again: %s", x->srcpath, strerror(errno)));
	x->off = 0;
	crypto_sha256_end(x->hash, NULL);
	x->hash = crypto_sha256_begin();
	return (0);
}

/*
 * The size of the temporary an earlier call left: what it sent (the
 * upload goes on with the next chunk) or not (deleted, from zero).
 */
static int
worker_files_kept(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct worker_files_record	*o = &x->earlier;
	struct json_object		*j, *v;
	char				*why = NULL;
	int64_t				 size = -1;

	if (r->status == 200 && (j = jserver_reply_json(r, &why)) != NULL) {
		if (json_object_object_get_ex(j, "size", &v) &&
		    json_object_is_type(v, json_type_int))
			size = json_object_get_int64(v);
		json_object_put(j);
	}
	free(why);
	if (size >= 0 && (uint64_t)size == o->bytes) {
		log_info("upload of %s to %s taken up at byte %llu of %llu",
		    x->where, x->domain, (unsigned long long)o->bytes,
		    (unsigned long long)x->size);
		x->tmp = o->tmp;
		o->tmp = NULL;
		x->chunk = 1;
		x->sent = o->chunks;
		x->sentoff = o->bytes;
		x->kept = o->bytes;
		x->resumes++;
		worker_files_record_free(o);
		return (worker_files_put(x));
	}
	x->anew = size < 0 ? "an earlier call's copy on the server is gone" :
	    "an earlier call's copy on the server is not what it sent";
	log_info("upload of %s to %s begun from zero: %s", x->where,
	    x->domain, x->anew);
	if (size >= 0)
		worker_files_delete(x, o->tmp);
	worker_files_record_drop(&x->rec);
	worker_files_record_free(o);
	if (lseek(x->src, 0, SEEK_SET) != 0)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot read %s again: %s", x->srcpath, strerror(errno)));
	x->off = 0;
	crypto_sha256_end(x->hash, NULL);
	x->hash = crypto_sha256_begin();
	return (worker_files_put(x));
}

/*
 * The chunks of an upload the server has taken, written down: its
 * temporary holds x->sentoff bytes, whose hash is x->pend.
 */
static void
worker_files_noted(struct worker_files_xfer *x)
{
	if (x->rec.path == NULL || x->tmp == NULL || x->chunk == 0)
		return;
	free(x->rec.tmp);
	x->rec.tmp = xstrdup(x->tmp);
	x->rec.size = x->size;
	x->rec.mtime = x->mtime;
	x->rec.bytes = x->sentoff;
	x->rec.chunks = x->sentoff == 0 ? 0 : x->sent;
	memcpy(x->rec.sha256, x->pend, sizeof x->pend);
	worker_files_record_save(&x->rec);
}

/*
 * len bytes more into this machine's temporary, read back, and sent on
 * to the disk a chunk at a time.
 */
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
#ifdef SYNC_FILE_RANGE_WRITE
	/*
	 * Start writing it out now (not waiting for it), so that the fsync
	 * before the rename has only the last chunk to wait for, not the
	 * whole file: that wait was most of a download's lag behind curl,
	 * which does not fsync.  An error here is fsync's to report.
	 */
	if (x->woff - x->synced >= WORKER_FILES_CHUNK) {
		(void)sync_file_range(fd, (off_t)x->synced,
		    (off_t)(x->woff - x->synced), SYNC_FILE_RANGE_WRITE);
		x->synced = x->woff;
	}
#endif
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
	/*
	 * The file replaced is held open, so that freeing it (its pages and
	 * blocks: a quarter of a second for a GiB) comes after the answer,
	 * not inside the rename.  A file that is not a regular one is not
	 * held (O_NONBLOCK: a FIFO put there meanwhile does not block).
	 */
	if (x->exists && (x->old = open(x->dstpath, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) != -1 &&
	    (fstat(x->old, &sb) != 0 || !S_ISREG(sb.st_mode))) {
		close(x->old);
		x->old = -1;
	}
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

/*
 * The file a transfer replaced, closed after its answer: freed now.  Its
 * descriptor is arg (a timer's fd is -1).
 */
static void
worker_files_release(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	close((int)(intptr_t)arg);
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
	if (x->step != WORKER_FILES_COPY) {
		if (x->upload && x->next == NULL && !x->nextlast)
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
	x->refused = NULL;
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
 * A download's model without content: its size (-1 if not given) and
 * last_modified in *lastmod (NULL if not given).  A directory, a missing
 * file or one over the cap is refused.
 */
static int
worker_files_model(struct worker_files_xfer *x, struct jserver_reply *r,
    int64_t *sizep, char **lastmod)
{
	struct json_object	*o, *v;
	char			*why;
	int64_t			 size = -1;
	int			 file = 1;

	*lastmod = NULL;

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
	if (json_object_object_get_ex(o, "last_modified", &v) &&
	    json_object_is_type(v, json_type_string))
		*lastmod = xstrdup(json_object_get_string(v));
	json_object_put(o);
	if (!file || size > WORKER_FILES_MAX) {
		free(*lastmod);
		*lastmod = NULL;
	}
	if (!file)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s on %s is not a file", x->where, x->d->url));
	if (size > WORKER_FILES_MAX)
		return (worker_files_fail(x, PROTO_E_INVALID_ARGUMENT,
		    "%s on %s is %lld bytes, over the %d-byte (%d MiB) cap of "
		    "a transfer; nothing was fetched", x->where, x->d->url,
		    (long long)size, WORKER_FILES_MAX, WORKER_FILES_MAX >> 20));
	*sizep = size;
	return (0);
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
	int64_t	 size;

	free(x->lastmod);
	if (worker_files_model(x, r, &size, &x->lastmod) != 0)
		return (-1);
	x->size = size >= 0 ? (uint64_t)size : WORKER_FILES_MAX;
	x->off = 0;
	return (worker_files_create(x, x->host_path));
}

/*
 * A stream's head, before any of its body is taken.  From zero it must
 * be a 200 (its Last-Modified kept for a download); resumed, a 206 of
 * the rest of the same file: the range asked, the size known, the same
 * Last-Modified.  Anything else stops it, x->refused saying why.
 */
static int
worker_files_head(const struct jserver_head *h, void *arg)
{
	struct worker_files_xfer	*x = arg;
	uint64_t			 total;

	x->refused = NULL;
	if (x->from == 0) {
		if (h->status != 200)
			x->refused = "it answered a part of the file to a GET "
			    "of all of it";
		else if (x->step == WORKER_FILES_GET) {
			free(x->modified);
			x->modified = h->modified != NULL ?
			    xstrdup(h->modified) : NULL;
		}
		return (x->refused != NULL ? -1 : 0);
	}
	total = x->step == WORKER_FILES_BACK ? x->bytes : x->size;
	if (h->status != 206)
		x->refused = "it answered the whole file (200) to a GET of "
		    "the rest (Range)";
	else if (h->first < 0 || (uint64_t)h->first != x->from ||
	    h->total < 0 || (uint64_t)h->total != total)
		x->refused = "its size changed";
	else if (x->step == WORKER_FILES_GET &&
	    (x->modified == NULL || h->modified == NULL ||
	    strcmp(x->modified, h->modified) != 0))
		x->refused = "its Last-Modified changed";
	if (x->refused != NULL)
		return (-1);
	x->resumes++;
	x->cut = 0;
	return (0);
}

/*
 * A piece of a download's body (up to a MiB, or 4 KiB from a reply
 * without Content-Length): past the cap the GET is stopped, else it goes
 * into the hash and to the temporary here, pieces under
 * WORKER_FILES_DIRECT gathered in buf first.  Writing it before
 * returning is the back-pressure: evhttp reads no more meanwhile.
 */
static int
worker_files_piece(const void *data, size_t len, void *arg)
{
	struct worker_files_xfer	*x = arg;
	const char			*p = data;
	size_t				 n;

	if (x->step == WORKER_FILES_BACK) {
		if (x->off + len > x->bytes)
			return (worker_files_fail(x,
			    PROTO_E_NOTEBOOK_UNAVAILABLE, "the copy on %s "
			    "reads back longer than the %llu bytes sent; "
			    "nothing was put in place", x->domain,
			    (unsigned long long)x->bytes));
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
	if (len >= WORKER_FILES_DIRECT) {
		n = x->fill;
		x->fill = 0;
		if (n > 0 && worker_files_write(x, x->buf, n) != 0)
			return (-1);
		if (worker_files_write(x, data, len) != 0)
			return (-1);
		if (x->woff - x->recorded >= WORKER_FILES_CHUNK)
			worker_files_note(x);
		return (0);
	}
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
		if (len == 0)
			worker_files_note(x);
	}
	return (0);
}

/*
 * Start a GET of path's bytes as they are, from files/ (the server's
 * file handler, the same token): no base64 made by the server and parsed
 * here, about 10x faster than the contents API.  Its body is streamed
 * to worker_files_piece, hashed as it comes; its end is step.  It may
 * take JSERVER_TIMEOUT and a second a MiB.  From a byte past zero it
 * is the rest of a stream cut short, its hash going on (Range; the
 * head is checked by worker_files_head).
 */
static int
worker_files_raw(struct worker_files_xfer *x, enum worker_files_step step,
    const char *path, uint64_t from)
{
	char	*enc, *uri;
	int	 rc;

	enc = domain_encode_path(path);
	xasprintf(&uri, "files/%s", enc);
	free(enc);
	x->step = step;
	x->from = from;
	x->refused = NULL;
	if (from == 0) {
		x->off = 0;
		crypto_sha256_end(x->hash, NULL);
		x->hash = crypto_sha256_begin();
	}
	rc = jserver_stream(worker_rpc_base(), x->d, uri, from,
	    WORKER_FILES_MAX, JSERVER_TIMEOUT + (int)((x->size - from) >> 20),
	    worker_files_head, worker_files_piece, worker_files_step, x);
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
	x->nextraw = len;
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
	unsigned char	 rnd[8], md[CRYPTO_SHA256_LEN];
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
	/* A temporary named: written down before anything is sent to it. */
	if (x->sent == 0 && x->chunk) {
		crypto_sha256("", 0, md);
		util_hex(md, CRYPTO_SHA256_LEN, x->pend);
		worker_files_noted(x);
	}
	x->sent++;
	x->sentoff = x->off;
	x->curoff = x->off - x->nextraw;
	/* The hash is of all through this chunk (the next not read yet). */
	if (x->chunk && !x->last) {
		crypto_sha256_now(x->hash, md);
		util_hex(md, CRYPTO_SHA256_LEN, x->pend);
	}
	/* Kept until its reply: a cut one is sent again. */
	free(x->cur);
	x->cur = x->next;
	x->curlen = x->nextlen;
	x->next = NULL;
	rc = worker_files_send(x);
	if (rc == 0 && !x->last)
		evtimer_add(x->pump, &tv);
	return (rc);
}

/* (Again) the PUT of the chunk in flight. */
static int
worker_files_send(struct worker_files_xfer *x)
{
	return (worker_files_request(x, WORKER_FILES_PUT, "PUT", x->tmp, "",
	    x->cur, x->curlen));
}

/*
 * The chunk in flight is on the server: the next one, or (the last)
 * the read-back.  -1 (the temporary deleted) if it cannot start.
 */
static int
worker_files_sent(struct worker_files_xfer *x)
{
	x->cut = 0;
	free(x->cur);
	x->cur = NULL;
	if (!x->last) {
		worker_files_noted(x);
		if (worker_files_put(x) != 0) {
			worker_files_delete(x, x->tmp);
			return (-1);
		}
		return (0);
	}
	x->bytes = x->size;
	worker_files_hex(x, x->sha256);
	if (worker_files_raw(x, WORKER_FILES_BACK, x->tmp, 0) != 0) {
		worker_files_delete(x, x->tmp);
		return (-1);
	}
	return (0);
}

/*
 * After a cut PUT of chunk 2 or later, the temporary's size says where
 * the chunk went: all sent so far (it was appended: the next one), or
 * all before it (it was not: again).  Anything else is refused and the
 * temporary deleted.  Chunk 1 and a single PUT write the file whole, so
 * they are sent again without asking.
 */
static int
worker_files_ask(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct json_object	*o, *v;
	char			*why = NULL;
	int64_t			 size = -1;

	if (r->status != 200) {
		why = jserver_reply_message(r);
		worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "writing %s "
		    "on %s, cut at chunk %d: its temporary cannot be asked its "
		    "size (%s); nothing was put in place: upload it again",
		    x->where, x->d->url, x->sent, why);
		free(why);
		return (-1);
	}
	if ((o = jserver_reply_json(r, &why)) != NULL) {
		if (json_object_object_get_ex(o, "size", &v) &&
		    json_object_is_type(v, json_type_int))
			size = json_object_get_int64(v);
		json_object_put(o);
	}
	free(why);
	x->resumes++;
	if (size >= 0 && (uint64_t)size == x->sentoff)
		return (worker_files_sent(x));
	if (size >= 0 && (uint64_t)size == x->curoff)
		return (worker_files_send(x));
	return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE, "writing "
	    "%s on %s, cut at chunk %d: its temporary holds %lld bytes, "
	    "neither the %llu sent before that chunk nor the %llu with it; it "
	    "was removed and nothing was put in place: upload it again",
	    x->where, x->d->url, x->sent, (long long)size,
	    (unsigned long long)x->curoff, (unsigned long long)x->sentoff));
}

/*
 * A connection cut (reset, closed before the reply was whole, refused
 * while a proxy restarts), or a proxy's answer for a server it cannot
 * reach: 502-504; while one is waited out, also the answers of a proxy
 * whose routes are not back yet (a 404 that is not the contents API's
 * JSON) or of JupyterHub (3xx, 424).
 */
static int
worker_files_cut(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct json_object	*o;
	char			*why;
	int			 own;

	if (r->closed || r->status == 502 || r->status == 503 ||
	    r->status == 504)
		return (1);
	if (x->cut == 0)
		return (0);
	if (r->status == 424 || (r->status >= 300 && r->status < 400))
		return (1);
	if (r->status != 404)
		return (0);
	if ((o = jserver_reply_json(r, &why)) == NULL) {
		free(why);
		return (1);
	}
	own = json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "message", NULL);
	json_object_put(o);
	return (!own);
}

/*
 * Try the step cut short again after the backoff, while within
 * WORKER_FILES_RETRY_MS of the cut (and WORKER_FILES_RESUMES a
 * transfer); past that, -1 with the failure.
 */
static int
worker_files_again(struct worker_files_xfer *x, struct jserver_reply *r)
{
	struct timeval	 tv;
	int64_t		 now = util_mono_ms();

	free(x->cutwhy);
	x->cutwhy = jserver_reply_message(r);
	if (x->cut == 0) {
		x->cut = now;
		x->backoff = WORKER_FILES_RETRY_FIRST_MS;
		x->cutat = x->upload ? x->curoff : x->off;
	}
	if (x->resumes >= WORKER_FILES_RESUMES)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "%s %s on %s: the connection was cut %d times; nothing was "
		    "put in place: try again once it holds (last: %s)",
		    x->upload ? "writing" : "reading", x->where, x->d->url,
		    x->resumes + 1, x->cutwhy));
	if (now + x->backoff - x->cut > WORKER_FILES_RETRY_MS)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "%s %s on %s: the connection was cut at %llu of %llu bytes "
		    "and the server did not answer again within %d s (last: "
		    "%s); nothing was put in place: try again once it answers",
		    x->upload ? "writing" : "reading", x->where, x->d->url,
		    (unsigned long long)x->cutat, (unsigned long long)x->size,
		    WORKER_FILES_RETRY_MS / 1000, x->cutwhy));
	tv.tv_sec = x->backoff / 1000;
	tv.tv_usec = (x->backoff % 1000) * 1000;
	evtimer_add(x->retry, &tv);
	if ((x->backoff *= 2) > WORKER_FILES_RETRY_MAX_MS)
		x->backoff = WORKER_FILES_RETRY_MAX_MS;
	return (0);
}

/* The backoff is over: the step cut short, again. */
static void
worker_files_retry(evutil_socket_t fd, short events, void *arg)
{
	struct worker_files_xfer	*x = arg;
	int				 rc;

	(void)fd;
	(void)events;
	switch (x->step) {
	case WORKER_FILES_SIZE:
	case WORKER_FILES_EXISTS:
		rc = worker_files_request(x, x->step, "GET", x->where,
		    "?content=0", NULL, 0);
		break;
	case WORKER_FILES_KEPT:
		rc = worker_files_request(x, x->step, "GET", x->earlier.tmp,
		    "?content=0", NULL, 0);
		break;
	case WORKER_FILES_GET:
	case WORKER_FILES_CHECK:
		rc = worker_files_request(x, WORKER_FILES_CHECK, "GET",
		    x->where, "?content=0", NULL, 0);
		break;
	case WORKER_FILES_BACK:
		rc = worker_files_raw(x, WORKER_FILES_BACK, x->tmp, x->off);
		break;
	case WORKER_FILES_PUT:
	case WORKER_FILES_ASK:
		if (x->sent == 1) {
			x->resumes++;
			rc = worker_files_send(x);
		} else
			rc = worker_files_request(x, WORKER_FILES_ASK, "GET",
			    x->tmp, "?content=0", NULL, 0);
		break;
	default:
		rc = -1;
		break;
	}
	if (rc == 0)
		return;
	if (x->tmp != NULL)
		worker_files_delete(x, x->tmp);
	worker_files_answer(x, -1);
}

/*
 * A cut download's model, asked again: the same size and last_modified
 * go on from x->off; another begins it again (once).  From zero it is
 * the model to go by.
 */
static int
worker_files_check(struct worker_files_xfer *x, struct jserver_reply *r)
{
	int64_t	 size;
	char	*lastmod;

	if (worker_files_model(x, r, &size, &lastmod) != 0)
		return (-1);
	if (x->off > 0 && (size < 0 || (uint64_t)size != x->size ||
	    lastmod == NULL || x->lastmod == NULL ||
	    strcmp(lastmod, x->lastmod) != 0)) {
		free(lastmod);
		return (worker_files_restart(x, "its size or last_modified "
		    "changed"));
	}
	if (x->off == 0) {
		free(x->lastmod);
		x->lastmod = lastmod;
		x->size = size >= 0 ? (uint64_t)size : WORKER_FILES_MAX;
	} else
		free(lastmod);
	return (worker_files_raw(x, WORKER_FILES_GET, x->where, x->off));
}

/*
 * A cut download cannot go on (why): begin it again from zero, once,
 * its temporary here emptied; the second time it fails.
 */
static int
worker_files_restart(struct worker_files_xfer *x, const char *why)
{
	int	 fd = atomic_fd(x->a);

	if (x->restarted)
		return (worker_files_fail(x, PROTO_E_FILE_CHANGED_ON_DISK,
		    "reading %s on %s: the connection was cut and the "
		    "download could not go on where it was, twice (%s); "
		    "nothing was put in place: download it again once it no "
		    "longer changes", x->where, x->d->url, why));
	log_info("download of %s from %s begun again: %s", x->where,
	    x->d->url, why);
	x->restarted = 1;
	/* An earlier call's copy the server did not go on from. */
	if (x->kept > 0) {
		x->kept = 0;
		x->anew = why;
	}
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot empty the temporary beside %s: %s", x->dstpath,
		    strerror(errno)));
	x->woff = 0;
	x->synced = 0;
	x->differs = 0;
	x->fill = 0;
	x->off = 0;
	crypto_sha256_end(x->hash, NULL);
	x->hash = NULL;
	worker_files_note(x);
	return (worker_files_request(x, WORKER_FILES_CHECK, "GET", x->where,
	    "?content=0", NULL, 0));
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
	if (x->resumes > 0)
		return (worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "writing %s on %s: after a cut chunk its temporary holds "
		    "%lld bytes of the %llu sent; it was removed and nothing "
		    "was put in place: upload it again", x->where, x->d->url,
		    (long long)size, (unsigned long long)x->sentoff));
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
	int				 rc;

	/* Before anything is made there: the server was not trusted. */
	if (r->untrusted && (x->step == WORKER_FILES_SIZE ||
	    x->step == WORKER_FILES_EXISTS)) {
		worker_files_fail(x, PROTO_E_TLS_UNVERIFIED, "%s", r->cause);
		worker_files_answer(x, -1);
		return;
	}
	/* A piece that failed (the cap, a write), a chunk not read. */
	if (x->msg != NULL) {
		if (x->tmp != NULL)
			worker_files_delete(x, x->tmp);
		worker_files_answer(x, -1);
		return;
	}
	/* A cut or a proxy's answer: the step again, a moment later. */
	if (x->refused == NULL && x->step != WORKER_FILES_DELETE &&
	    x->step != WORKER_FILES_PATCH && worker_files_cut(x, r)) {
		if (worker_files_again(x, r) == 0)
			return;
		if (x->tmp != NULL)
			worker_files_delete(x, x->tmp);
		worker_files_answer(x, -1);
		return;
	}
	switch (x->step) {
	case WORKER_FILES_SIZE:
		x->cut = 0;
		if (worker_files_size(x, r) != 0)
			break;
		if (worker_files_raw(x, WORKER_FILES_GET, x->where,
		    x->kept) != 0)
			break;
		return;
	case WORKER_FILES_CHECK:
		if (worker_files_check(x, r) != 0)
			break;
		return;
	case WORKER_FILES_GET:
		/* Its head was not the rest of the same file. */
		if (x->refused != NULL) {
			if (worker_files_restart(x, x->refused) != 0)
				break;
			return;
		}
		if (r->status != 200 && r->status != 206) {
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
		x->cut = 0;
		if ((x->ex = worker_files_exists(x, r)) == -1)
			break;
		if (x->ex && !x->overwrite) {
			worker_files_fail(x, PROTO_E_FILE_EXISTS, "%s exists "
			    "on %s; pass overwrite: true to replace it",
			    x->where, x->domain);
			break;
		}
		/* An earlier call's temporary: its size asked first. */
		if ((rc = worker_files_take_up(x)) == 1)
			return;
		if (rc != 0 || worker_files_put(x) != 0)
			break;
		return;
	case WORKER_FILES_KEPT:
		x->cut = 0;
		if (worker_files_kept(x, r) != 0)
			break;
		return;
	case WORKER_FILES_ASK:
		if (worker_files_ask(x, r) != 0) {
			worker_files_delete(x, x->tmp);
			break;
		}
		return;
	case WORKER_FILES_PUT:
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
		if (worker_files_sent(x) != 0)
			break;
		return;
	case WORKER_FILES_BACK:
		/* Not the rest of it: read back from zero, once. */
		if (x->refused != NULL && !x->restarted) {
			x->restarted = 1;
			if (worker_files_raw(x, WORKER_FILES_BACK, x->tmp,
			    0) != 0) {
				worker_files_delete(x, x->tmp);
				break;
			}
			return;
		}
		if (x->refused != NULL) {
			worker_files_delete(x, x->tmp);
			worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
			    "reading %s back on %s: the connection was cut and "
			    "it could not go on where it was, twice (%s); "
			    "nothing was put in place", x->where, x->d->url,
			    x->refused);
			break;
		}
		/* A message names the target: the temporary is ours. */
		if (r->status != 200 && r->status != 206) {
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
		/* It may have been renamed before the cut: not done again. */
		if (r->status == 0 || r->status == 502 || r->status == 504) {
			why = jserver_reply_message(r);
			worker_files_fail(x, PROTO_E_OUTCOME_UNKNOWN, "renaming "
			    "the upload into place on %s: %s; it may or may not "
			    "be at %s now: look (its SHA-256 is %s) before "
			    "uploading again", x->domain, why, x->where,
			    x->sha256);
			free(why);
			worker_files_delete(x, x->tmp);
			break;
		}
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
	/* What earlier calls left and nobody took up: removed. */
	worker_files_record_sweep(worker_files_stale, x);
	worker_files_record_init(&x->rec, x->upload, x->domain, x->where,
	    x->host_path);
	return (worker_files_known(x, nbpath));
}

/*
 * Has the kernel been asked what it sees (its agent keeps the answer
 * until it restarts)?  If not, and it can be, the probe.
 */
static int
worker_files_known(struct worker_files_xfer *x, const char *nbpath)
{
	struct proto_sees	 m;
	struct mpbuf		 b;

	x->nbpath = xstrdup(nbpath);
	memset(&m, 0, sizeof m);
	mpbuf_init(&b);
	proto_sees_pack(&b.pk, &m);
	worker_room_request(x->room, PROTO_MSG_KERNEL_SEES, &b.sb,
	    worker_files_probe_seen, x);
	mpbuf_free(&b);
	return (0);
}

/*
 * Before any byte moves: does the kernel see the server's contents?
 * Behind a gateway it runs elsewhere and may not (decision 100).  A file
 * of random text is written beside the target through the contents API
 * and the kernel is asked, silently, whether it reads that text at that
 * name (KERNEL_SEES); the file is deleted whatever the answer.
 */
static int
worker_files_probe(struct worker_files_xfer *x, const char *nbpath)
{
	struct json_object	*o;
	unsigned char		 rnd[16];
	char			 hex[33], *dir, *base, *uri;
	const char		*body;
	size_t			 i;
	int			 rc;

	if (crypto_random(rnd, sizeof rnd) != 0)
		fatalx("no random bytes");
	for (i = 0; i < sizeof rnd; i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	/* In the notebook's directory, where the kernel's paths start. */
	base = strrchr(nbpath, '/');
	dir = base != NULL ? xstrndup(nbpath, (size_t)(base - nbpath)) : NULL;
	/* Not hidden (a server refuses those); the kernel's name is base. */
	if (dir != NULL)
		xasprintf(&x->probe, "%s/rtd-probe-%.16s.txt", dir, hex);
	else
		xasprintf(&x->probe, "rtd-probe-%.16s.txt", hex);
	free(dir);
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("file"));
	json_object_object_add(o, "format", json_object_new_string("text"));
	json_object_object_add(o, "content", json_object_new_string(hex + 16));
	body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	uri = domain_contents_uri(x->probe, "");
	rc = jserver_request(worker_rpc_base(), x->d, "PUT", uri, body,
	    strlen(body), JSERVER_TIMEOUT, worker_files_probe_put, x);
	free(uri);
	x->probetext = xstrdup(hex + 16);
	json_object_put(o);
	if (rc != 0) {
		worker_files_fail(x, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "cannot start a request to %s", x->d->url);
		return (-1);
	}
	return (0);
}

/* The probe's file is written (or not): ask the kernel. */
static void
worker_files_probe_put(struct jserver_reply *r, void *arg)
{
	struct worker_files_xfer	*x = arg;
	struct proto_sees		 m;
	struct mpbuf			 b;
	const char			*name;
	char				*text = x->probetext;

	x->probetext = NULL;
	if (r->untrusted) {
		free(text);
		free(x->probe);
		x->probe = NULL;
		worker_files_fail(x, PROTO_E_TLS_UNVERIFIED, "%s", r->cause);
		worker_files_answer(x, -1);
		return;
	}
	if (r->status != 200 && r->status != 201) {
		/* The transfer's own steps will say what the server says. */
		free(text);
		/* A lost reply: the file may be there all the same. */
		if (r->status == 0)
			worker_files_delete(x, x->probe);
		free(x->probe);
		x->probe = NULL;
		xasprintf(&x->unsure, "the server did not take a probe file "
		    "(%d)", r->status);
		if (worker_files_begin(x) != 0)
			worker_files_answer(x, -1);
		return;
	}
	name = strrchr(x->probe, '/') != NULL ? strrchr(x->probe, '/') + 1 :
	    x->probe;
	memset(&m, 0, sizeof m);
	m.name = proto_str_make(name);
	m.text = proto_str_make(text);
	m.has_timeout_ms = 1;
	m.timeout_ms = WORKER_FILES_PROBE_MS;
	mpbuf_init(&b);
	proto_sees_pack(&b.pk, &m);
	worker_room_request(x->room, PROTO_MSG_KERNEL_SEES, &b.sb,
	    worker_files_probe_seen, x);
	mpbuf_free(&b);
	free(text);
}

/* The kernel's answer: go on, go on saying it was not decided, or refuse. */
static void
worker_files_probe_seen(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_files_xfer	*x = arg;
	struct proto_sees_reply		 m;
	char				 err[256], *state = NULL, *uri;

	if (code != NULL && strcmp(code, PROTO_E_KERNEL_UNAVAILABLE) == 0)
		x->unsure = xstrdup("no kernel runs yet to be asked (once "
		    "one runs, a transfer checks it)");
	else if (code != NULL)
		xasprintf(&x->unsure, "the kernel could not be asked (%s: %s)",
		    code, msg);
	else if (type != PROTO_MSG_KERNEL_SEES_REPLY ||
	    proto_sees_reply_unpack(reply, &m, err, sizeof err) != 0)
		xasprintf(&x->unsure, "the kernel's answer did not read");
	else if ((state = proto_str_dup(&m.state)) != NULL &&
	    strcmp(state, "unseen") == 0)
		worker_files_fail(x, PROTO_E_NOT_SUPPORTED, "the notebook's "
		    "kernel does not see the files of %s's contents (a file "
		    "written there beside the notebook was not in the kernel's "
		    "working directory): it runs elsewhere, e.g. behind a "
		    "gateway that does not mount the contents volume, so %s %s "
		    "would not reach it. Nothing was transferred. Mount the "
		    "contents volume where the kernel runs (docs/remote.md, "
		    "gateways), or move the file with a cell in the kernel",
		    x->domain, x->upload ? "an upload to" : "a download of",
		    x->where);
	else if (strcmp(state, "unasked") == 0 && x->probe == NULL) {
		free(state);
		if (worker_files_probe(x, x->nbpath) != 0)
			worker_files_answer(x, -1);
		return;
	} else if (strcmp(state, "seen") != 0)
		x->unsure = m.why.ptr != NULL ? proto_str_dup(&m.why) :
		    xstrdup("the kernel could not tell");
	free(state);
	if (x->probe == NULL) {
		worker_files_probe_gone(NULL, x);
		return;
	}
	/* The probe goes before the answer or the transfer. */
	uri = domain_contents_uri(x->probe, "");
	if (jserver_request(worker_rpc_base(), x->d, "DELETE", uri, NULL, 0,
	    JSERVER_TIMEOUT, worker_files_probe_gone, x) != 0)
		worker_files_probe_gone(NULL, x);
	free(uri);
}

/* The probe file is gone (or could not be: said in the log). */
static void
worker_files_probe_gone(struct jserver_reply *r, void *arg)
{
	struct worker_files_xfer	*x = arg;

	if (x->probe != NULL && (r == NULL ||
	    (r->status != 204 && r->status != 200)))
		log_warnx("%s: the probe file %s was not deleted (%d)",
		    x->domain, x->probe, r != NULL ? r->status : 0);
	free(x->probe);
	x->probe = NULL;
	if (x->msg != NULL || worker_files_begin(x) != 0)
		worker_files_answer(x, -1);
}

/* The transfer's own first step. */
static int
worker_files_begin(struct worker_files_xfer *x)
{
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
	x->old = -1;
	x->buf = xmalloc(WORKER_FILES_CHUNK);
	x->pump = evtimer_new(worker_rpc_base(), worker_files_pump, x);
	x->retry = evtimer_new(worker_rpc_base(), worker_files_retry, x);
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
		x->room = room;
		worker_room_ref(room);
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
	struct timeval		 tv = { 0, 0 };
	char			*text, *resumed = NULL;

	/* An unfinished temporary here goes before the answer says so. */
	atomic_free(x->a);
	x->a = NULL;
	/* Done or given up: nothing for a later call to take up. */
	worker_files_record_drop(&x->rec);
	worker_files_record_free(&x->rec);
	worker_files_record_free(&x->earlier);
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
		/* Only a transfer that went on after a cut says so. */
		if (x->resumes > 0)
			json_object_object_add(sc, "resumed",
			    json_object_new_int(x->resumes));
		if (x->restarted || x->anew != NULL)
			json_object_object_add(sc, "restarted",
			    json_object_new_boolean(1));
		/* Not decided whether the kernel sees it: said, not guessed. */
		if (x->unsure != NULL) {
			json_object_object_add(sc, "kernel_sees",
			    json_object_new_string("unknown"));
			json_object_object_add(sc, "kernel_sees_why",
			    json_object_new_string(x->unsure));
		}
		if (x->kept > 0)
			xasprintf(&resumed, "; resumed at byte %llu from what "
			    "an earlier call left%s", (unsigned long long)
			    x->kept, x->resumes > 1 ? " and after cuts" : "");
		else if (x->resumes > 0)
			xasprintf(&resumed, "; resumed after %d cut%s",
			    x->resumes, x->resumes == 1 ? "" : "s");
		xasprintf(&text, "%s %llu bytes %s %s (sha256 %s, checked at "
		    "both ends%s%s%s%s)", x->upload ? "uploaded" : "downloaded",
		    (unsigned long long)x->bytes, x->upload ? "to" : "from",
		    x->where, x->sha256, resumed != NULL ? resumed : "",
		    x->restarted && x->anew == NULL ?
		    "; begun again from zero after a cut" : "",
		    x->anew != NULL ? "; begun from zero: " : "",
		    x->anew != NULL ? x->anew : "");
		free(resumed);
		if (x->unsure != NULL) {
			xasprintf(&resumed, "%s; not known whether the kernel "
			    "sees the server's files: %s", text, x->unsure);
			free(text);
			text = resumed;
		}
		worker_call_result(x->call, text, sc);
		free(text);
	}
	if (x->old != -1 && event_base_once(worker_rpc_base(), -1, EV_TIMEOUT,
	    worker_files_release, (void *)(intptr_t)x->old, &tv) != 0)
		close(x->old);
	if (x->probe != NULL)
		worker_files_delete(x, x->probe);
	free(x->probe);
	free(x->nbpath);
	free(x->probetext);
	free(x->unsure);
	if (x->room != NULL)
		worker_room_unref(x->room);
	free(x->msg);
	free(x->where);
	free(x->host);
	free(x->domain);
	domain_free(x->d);
	free(x->tmp);
	free(x->next);
	free(x->cur);
	free(x->cutwhy);
	free(x->lastmod);
	free(x->modified);
	event_free(x->retry);
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
