/* SPDX-License-Identifier: ISC */
/*
 * store-wal.c: find what SQLite would silently drop from the state
 * database's write-ahead log.  SQLite reads the log's frames up to the
 * first one whose salt or checksum is wrong and takes the last commit
 * before it; anything after is treated as never written.  That is right
 * for the torn end of a transaction no one was told of, but garbage in
 * the header or the middle of the log throws away transactions that
 * were committed (fsynced: synchronous=FULL) and acknowledged, and the
 * store opens as if they never were: read as empty, without a word.
 *
 * So before SQLite opens the file, the log is read as its format says
 * (https://www.sqlite.org/fileformat2.html#walformat): after the valid
 * prefix ends, a later frame of the same log (its salts) whose checksum
 * holds from the frame before it, and that ends a transaction (a commit
 * frame), is a committed transaction SQLite will drop, unless every
 * page it wrote is in the database already (checkpointed).  The notebooks
 * those frames held rows of are named from the ids and .ipynb paths in
 * their pages.
 *
 * A log cut short at a frame boundary is, to SQLite, a sound log that
 * ends sooner.  So the writer keeps a mark outside the log
 * (<path>-walmark): after each commit, the log's salts and how many
 * frames it holds, written without an fsync, after the commit's own
 * (store.c).  At open, a log of the same salts whose last sound commit
 * is before the mark's count was cut.  The mark is only ever behind
 * what is durable in the log, never ahead, so it cannot accuse a sound
 * log: after a kill -9 it is current (the page cache keeps it), after
 * a power loss it may be older and a cut past it goes unseen.
 */

#include <sys/stat.h>

#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "store.h"

#define STORE_WAL_HEADER	32
#define STORE_WAL_FRAME_HEADER	24
#define STORE_WAL_MAGIC		0x377f0682U
#define STORE_WAL_NAMES_MAX	32	/* ids and paths named at most */
#define STORE_WAL_PATH_MAX	4096
#define STORE_WAL_MARK_MAGIC	"rtdwalm1"

static uint32_t	store_wal_get32(const unsigned char *);
static int	store_wal_frame_ok(int, const unsigned char *, uint32_t,
		    uint32_t *, uint32_t *);
static void	store_wal_sum(int, const unsigned char *, size_t,
		    uint32_t *, uint32_t *);
static void	store_wal_names(struct store_wal_loss *,
		    const unsigned char *, size_t);
static void	store_wal_add(char ***, size_t *, const char *, size_t);
static int	store_wal_header(const unsigned char *, int *, uint32_t *);
static void	store_wal_put32(unsigned char *, uint32_t);

static uint32_t
store_wal_get32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

static void
store_wal_put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Is this a sound log header?  Its byte order and page size if so. */
static int
store_wal_header(const unsigned char *hdr, int *big, uint32_t *psz)
{
	uint32_t	magic, s0 = 0, s1 = 0;

	magic = store_wal_get32(hdr);
	*big = magic & 1;
	*psz = store_wal_get32(hdr + 8);
	store_wal_sum(*big, hdr, 24, &s0, &s1);
	return ((magic & ~1U) == STORE_WAL_MAGIC &&
	    store_wal_get32(hdr + 4) == 3007000 && *psz >= 512 &&
	    *psz <= 65536 && (*psz & (*psz - 1)) == 0 &&
	    s0 == store_wal_get32(hdr + 24) &&
	    s1 == store_wal_get32(hdr + 28));
}

/* The log's checksum over len bytes (a multiple of 8), from s0, s1. */
static void
store_wal_sum(int big, const unsigned char *p, size_t len, uint32_t *s0,
    uint32_t *s1)
{
	uint32_t	x0, x1;
	size_t		i;

	for (i = 0; i + 8 <= len; i += 8) {
		if (big) {
			x0 = store_wal_get32(p + i);
			x1 = store_wal_get32(p + i + 4);
		} else {
			x0 = (uint32_t)p[i + 3] << 24 | (uint32_t)p[i + 2] << 16 |
			    (uint32_t)p[i + 1] << 8 | p[i];
			x1 = (uint32_t)p[i + 7] << 24 | (uint32_t)p[i + 6] << 16 |
			    (uint32_t)p[i + 5] << 8 | p[i + 4];
		}
		*s0 += x0 + *s1;
		*s1 += x1 + *s0;
	}
}

/*
 * Does a frame's checksum hold, chained from the sums before it (*p0,
 * *p1)?  The sums the frame stores carry the chain on to the next one.
 */
static int
store_wal_frame_ok(int big, const unsigned char *frame, uint32_t psz,
    uint32_t *p0, uint32_t *p1)
{
	uint32_t	c0 = *p0, c1 = *p1;

	store_wal_sum(big, frame, 8, &c0, &c1);
	store_wal_sum(big, frame + STORE_WAL_FRAME_HEADER, psz, &c0, &c1);
	*p0 = store_wal_get32(frame + 16);
	*p1 = store_wal_get32(frame + 20);
	return (c0 == *p0 && c1 == *p1);
}

/* Remember a name once (at most STORE_WAL_NAMES_MAX). */
static void
store_wal_add(char ***names, size_t *n, const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < *n; i++) {
		if (strlen((*names)[i]) == len &&
		    memcmp((*names)[i], s, len) == 0)
			return;
	}
	if (*n == STORE_WAL_NAMES_MAX)
		return;
	*names = xreallocarray(*names, *n + 1, sizeof **names);
	(*names)[(*n)++] = xstrndup(s, len);
}

/* The notebook ids (UUIDs) and .ipynb paths a lost page holds. */
static void
store_wal_names(struct store_wal_loss *l, const unsigned char *p, size_t len)
{
	static const char	 shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	size_t			 i, k, start;

	for (i = 0; i + 36 <= len; i++) {
		for (k = 0; k < 36; k++) {
			if (shape[k] == '-' ? p[i + k] != '-' :
			    strchr("0123456789abcdef", p[i + k]) == NULL ||
			    p[i + k] == '\0')
				break;
		}
		if (k == 36) {
			store_wal_add(&l->ids, &l->nids, (const char *)p + i,
			    36);
			i += 35;
		}
	}
	for (i = 0; i + 6 <= len; i++) {
		if (memcmp(p + i, ".ipynb", 6) != 0)
			continue;
		/* Back to the '/' that starts it, over printable bytes. */
		for (start = i; start > 0 && i - start < STORE_WAL_PATH_MAX &&
		    p[start - 1] >= 0x20 && p[start - 1] != 0x7f; start--)
			;
		while (start < i && p[start] != '/')
			start++;
		if (start < i)
			store_wal_add(&l->paths, &l->npaths,
			    (const char *)p + start, i + 6 - start);
	}
}

/*
 * Read path's log (<path>-wal): 1 when committed transactions would be
 * dropped (l filled: clear it with store_wal_loss_clear), else 0 (no
 * log, an empty one, a sound one, or only a torn last transaction).
 */
int
store_wal_check(const char *path, struct store_wal_loss *l)
{
	struct stat	 sb;
	unsigned char	 hdr[STORE_WAL_HEADER], *frame = NULL, *page;
	uint32_t	 psz, salt1, salt2, p0, p1;
	uint32_t	 pgno;
	uint64_t	 off, fsz, nframes, i, brk = UINT64_MAX;
	uint64_t	 txn_frames = 0;
	char		*wal;
	int		 fd, dbfd, big, hdr_ok, have_salts, rc = 0;

	memset(l, 0, sizeof *l);
	xasprintf(&wal, "%s-wal", path);
	fd = open(wal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(wal);
	if (fd == -1)
		return (0);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size <= STORE_WAL_HEADER ||
	    pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr)
		goto out;
	hdr_ok = store_wal_header(hdr, &big, &psz);
	if (!hdr_ok) {
		/* Garbage over the header: SQLite sums in the host's order. */
		if (psz < 512 || psz > 65536 || (psz & (psz - 1)) != 0)
			psz = 4096;
		big = htonl(1) == 1;
	}
	salt1 = store_wal_get32(hdr + 16);
	salt2 = store_wal_get32(hdr + 20);
	have_salts = hdr_ok;
	fsz = STORE_WAL_FRAME_HEADER + psz;
	nframes = ((uint64_t)sb.st_size - STORE_WAL_HEADER) / fsz;
	frame = xmalloc(fsz);
	page = xmalloc(psz);
	dbfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (!hdr_ok)
		brk = 0;
	/* The sums the frame before each one stored (the header's first). */
	p0 = store_wal_get32(hdr + 24);
	p1 = store_wal_get32(hdr + 28);
	for (i = 0; i < nframes; i++) {
		off = STORE_WAL_HEADER + i * fsz;
		if (pread(fd, frame, fsz, (off_t)off) != (ssize_t)fsz)
			break;
		if (!store_wal_frame_ok(big, frame, psz, &p0, &p1)) {
			/* Its sum does not hold: damaged, or the torn end. */
			if (brk == UINT64_MAX)
				brk = off;
			continue;
		}
		if (!have_salts) {
			salt1 = store_wal_get32(frame + 8);
			salt2 = store_wal_get32(frame + 12);
			have_salts = 1;
		}
		if (store_wal_get32(frame + 8) != salt1 ||
		    store_wal_get32(frame + 12) != salt2) {
			/* An older log's frame, left past a restart: fine. */
			if (brk == UINT64_MAX)
				brk = off;
			continue;
		}
		if (brk == UINT64_MAX)
			continue;	/* still the part SQLite reads */
		/*
		 * Sound, of this log, after the break: SQLite drops it.  A
		 * page the database already holds (checkpointed before the
		 * kill) loses nothing.
		 */
		pgno = store_wal_get32(frame);
		if (dbfd == -1 || pgno == 0 || pread(dbfd, page, psz,
		    (off_t)(pgno - 1) * psz) != (ssize_t)psz ||
		    memcmp(page, frame + STORE_WAL_FRAME_HEADER, psz) != 0) {
			txn_frames++;
			store_wal_names(l, frame + STORE_WAL_FRAME_HEADER, psz);
		}
		if (store_wal_get32(frame + 4) != 0 && txn_frames > 0) {
			l->commits++;
			l->frames += txn_frames;
			txn_frames = 0;
		}
	}
	if (dbfd != -1)
		close(dbfd);
	free(page);
	if (l->commits > 0) {
		l->offset = brk;
		rc = 1;
	} else
		store_wal_loss_clear(l);
out:
	free(frame);
	close(fd);
	return (rc);
}

void
store_wal_loss_clear(struct store_wal_loss *l)
{
	size_t	i;

	for (i = 0; i < l->nids; i++)
		free(l->ids[i]);
	for (i = 0; i < l->npaths; i++)
		free(l->paths[i]);
	free(l->ids);
	free(l->paths);
	memset(l, 0, sizeof *l);
}

/*
 * The mark of a log (STORE_WAL_MARK_LEN bytes): magic, salts, frames,
 * and the log's own checksum over the first 24 bytes.  frames 0 claims
 * nothing.
 */
void
store_wal_mark_pack(unsigned char *m, uint32_t salt1, uint32_t salt2,
    uint32_t frames)
{
	uint32_t	s0 = 0, s1 = 0;

	memset(m, 0, STORE_WAL_MARK_LEN);
	memcpy(m, STORE_WAL_MARK_MAGIC, 8);
	store_wal_put32(m + 8, salt1);
	store_wal_put32(m + 12, salt2);
	store_wal_put32(m + 16, frames);
	store_wal_sum(1, m, 24, &s0, &s1);
	store_wal_put32(m + 24, s0);
	store_wal_put32(m + 28, s1);
}

/* The salts of the log at walfd, if its header is sound: 0, else -1. */
int
store_wal_salts(int walfd, uint32_t *salt1, uint32_t *salt2)
{
	unsigned char	hdr[STORE_WAL_HEADER];
	uint32_t	psz;
	int		big;

	if (pread(walfd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
	    !store_wal_header(hdr, &big, &psz))
		return (-1);
	*salt1 = store_wal_get32(hdr + 16);
	*salt2 = store_wal_get32(hdr + 20);
	return (0);
}

/*
 * Was path's log cut short?  1 when its mark (<path>-walmark) counts
 * more frames of this log (same salts) than its last sound commit
 * holds: *kept and *marked say how many; else 0 (no mark, a mark that
 * claims nothing or is not whole, another log, no log or no sound
 * header: nothing to compare).
 */
int
store_wal_cut_check(const char *path, uint64_t *kept, uint64_t *marked)
{
	struct stat	 sb;
	unsigned char	 m[STORE_WAL_MARK_LEN], hdr[STORE_WAL_HEADER], *frame;
	uint32_t	 s0 = 0, s1 = 0, psz, salt1, salt2, p0, p1;
	uint64_t	 i, nframes, fsz, last = 0;
	char		*name;
	int		 fd, big, rc = 0;

	xasprintf(&name, "%s-walmark", path);
	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(name);
	if (fd == -1)
		return (0);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    pread(fd, m, sizeof m, 0) != (ssize_t)sizeof m) {
		close(fd);
		return (0);
	}
	close(fd);
	store_wal_sum(1, m, 24, &s0, &s1);
	if (memcmp(m, STORE_WAL_MARK_MAGIC, 8) != 0 ||
	    s0 != store_wal_get32(m + 24) || s1 != store_wal_get32(m + 28) ||
	    (*marked = store_wal_get32(m + 16)) == 0)
		return (0);

	xasprintf(&name, "%s-wal", path);
	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(name);
	if (fd == -1)
		return (0);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
	    !store_wal_header(hdr, &big, &psz) ||
	    (salt1 = store_wal_get32(hdr + 16)) != store_wal_get32(m + 8) ||
	    (salt2 = store_wal_get32(hdr + 20)) != store_wal_get32(m + 12)) {
		close(fd);
		return (0);
	}
	/* The frames SQLite will read: to the first whose sum or salt fails. */
	fsz = STORE_WAL_FRAME_HEADER + psz;
	nframes = ((uint64_t)sb.st_size - STORE_WAL_HEADER) / fsz;
	frame = xmalloc(fsz);
	p0 = store_wal_get32(hdr + 24);
	p1 = store_wal_get32(hdr + 28);
	for (i = 0; i < nframes && i < *marked; i++) {
		if (pread(fd, frame, fsz, (off_t)(STORE_WAL_HEADER + i * fsz)) !=
		    (ssize_t)fsz)
			break;
		if (!store_wal_frame_ok(big, frame, psz, &p0, &p1) ||
		    store_wal_get32(frame + 8) != salt1 ||
		    store_wal_get32(frame + 12) != salt2)
			break;
		if (store_wal_get32(frame + 4) != 0)
			last = i + 1;
	}
	free(frame);
	close(fd);
	if (last < *marked) {
		*kept = last;
		rc = 1;
	}
	return (rc);
}
