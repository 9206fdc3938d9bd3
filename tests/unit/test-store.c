/* SPDX-License-Identifier: ISC */
/*
 * test-store.c: the SQLite state store, including entries acknowledged
 * just before a SIGKILL.
 */

#include <sys/stat.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "common.h"
#include "runtimed/store.h"

static char	tmpdir[] = "/tmp/test-store-XXXXXX";

static void	setup(void);
static void	teardown(void);
static struct store	*open_store(void);
static int	room_cb(const struct store_room *, void *);
static int	journal_cb(uint64_t, const void *, size_t, void *);
static size_t	make_snapshot(char *, size_t, int);
static void	fill_store(void);
static void	garble(const char *, off_t, size_t);
static char	*read_all(const char *, size_t *);
static int	check_room_cb(const struct store_room *, void *);
static int	count_journal_cb(uint64_t, const void *, size_t, void *);

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char	*cmd;

	xasprintf(&cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		cr_log_warn("cleanup failed");
	free(cmd);
}

TestSuite(store, .init = setup, .fini = teardown);

static struct store *
open_store(void)
{
	char		*cause = NULL;
	struct store	*st = store_open(tmpdir, &cause);

	cr_assert_not_null(st, "store_open: %s", cause);
	return (st);
}

struct seen_room {
	int	n;
	char	id[64];
	char	path[64];
	int	path_null;
	uint64_t seq;
	char	snap[64];
};

static int
room_cb(const struct store_room *r, void *arg)
{
	struct seen_room	*s = arg;

	s->n++;
	snprintf(s->id, sizeof s->id, "%s", r->notebook_id);
	s->path_null = r->path == NULL;
	snprintf(s->path, sizeof s->path, "%s", r->path ? r->path : "");
	s->seq = r->seq;
	snprintf(s->snap, sizeof s->snap, "%.*s", (int)r->snapshot_len,
	    (const char *)r->snapshot);
	return (0);
}

struct seen_journal {
	int		n;
	uint64_t	first;
	uint64_t	last;
};

static int
journal_cb(uint64_t seq, const void *op, size_t len, void *arg)
{
	struct seen_journal	*s = arg;

	if (s->n++ == 0)
		s->first = seq;
	s->last = seq;
	return (0);
}

Test(store, snapshot_then_journal_survive_reopen)
{
	struct store		*st = open_store();
	struct store_room	 r = { "nb-1", NULL, "python3", 1, 5, "SNAP",
	    4, 0 };
	struct seen_room	 sr = { 0 };
	struct seen_journal	 sj = { 0 };
	char			*cause = NULL;

	cr_assert_eq(store_room_snapshot(st, &r, &cause), 0);
	cr_assert_eq(store_journal_append(st, "nb-1", 6, "a", 1, &cause), 0);
	cr_assert_eq(store_journal_append(st, "nb-1", 7, "bb", 2, &cause), 0);
	store_close(st);

	st = open_store();
	cr_assert_eq(store_room_each(st, room_cb, &sr), 1);
	cr_assert_str_eq(sr.id, "nb-1");
	cr_assert(sr.path_null);
	cr_assert_eq(sr.seq, 5);
	cr_assert_str_eq(sr.snap, "SNAP");
	cr_assert_eq(store_journal_each(st, "nb-1", 5, journal_cb, &sj), 2);
	cr_assert_eq(sj.first, 6);
	cr_assert_eq(sj.last, 7);
	cr_assert_eq(store_journal_bytes(st, "nb-1"), 3);

	/* A newer snapshot drops the journal it covers. */
	r.seq = 7;
	cr_assert_eq(store_room_snapshot(st, &r, &cause), 0);
	sj.n = 0;
	cr_assert_eq(store_journal_each(st, "nb-1", 0, journal_cb, &sj), 0);
	store_close(st);
}

Test(store, find_by_path_and_forget)
{
	struct store		*st = open_store();
	struct store_room	 r = { "nb-2", "/x/y.ipynb", "python3", 0, 1,
	    "S", 1, 0 };
	struct seen_room	 sr = { 0 };
	char			*cause = NULL;

	cr_assert_eq(store_room_snapshot(st, &r, &cause), 0);
	cr_assert_eq(store_room_get(st, NULL, "/x/y.ipynb", room_cb, &sr), 1);
	cr_assert_str_eq(sr.id, "nb-2");
	cr_assert_eq(store_room_get(st, "nb-2", NULL, room_cb, &sr), 1);
	cr_assert_eq(store_room_get(st, NULL, "/nope", room_cb, &sr), 0);
	cr_assert_eq(store_room_forget(st, "nb-2", &cause), 0);
	cr_assert_eq(store_room_get(st, "nb-2", NULL, room_cb, &sr), 0);
	store_close(st);
}

Test(store, exec_records_pruned_to_eight_or_one_hour)
{
	struct store	*st = open_store();
	char		 id[16], *nb, *cause = NULL;
	void		*rec;
	size_t		 len;
	int64_t		 now = util_now_us(), hour = 3600LL * 1000000;
	int		 i;

	/* 12 old records and 3 recent ones. */
	for (i = 0; i < 12; i++) {
		snprintf(id, sizeof id, "old-%02d", i);
		cr_assert_eq(store_exec_put(st, id, "nb", now - 2 * hour + i,
		    "r", 1, &cause), 0);
	}
	for (i = 0; i < 3; i++) {
		snprintf(id, sizeof id, "new-%d", i);
		cr_assert_eq(store_exec_put(st, id, "nb", now - i, "r", 1,
		    &cause), 0);
	}
	cr_assert_eq(store_exec_put(st, "other", "nb2", now - 3 * hour, "r",
	    1, &cause), 0);
	/* Keep 8 newest (3 new + 5 newest old) plus all within the hour. */
	cr_assert_eq(store_exec_prune(st, "nb", 8, now - hour), 7);
	cr_assert_eq(store_exec_get(st, "old-06", &nb, &rec, &len), 0);
	cr_assert_eq(store_exec_get(st, "old-07", &nb, &rec, &len), 1);
	cr_assert_str_eq(nb, "nb");
	free(nb);
	free(rec);
	cr_assert_eq(store_exec_get(st, "new-2", &nb, &rec, &len), 1);
	free(nb);
	free(rec);
	/* Another notebook's records are untouched. */
	cr_assert_eq(store_exec_get(st, "other", &nb, &rec, &len), 1);
	free(nb);
	free(rec);
	store_close(st);
}

/* Each record's bytes as store_exec_list and store_journal_each give them. */
static void
empty_list_cb(const void *rec, size_t len, int64_t at, void *arg)
{
	(void)at;
	cr_assert_not_null(rec, "a record's bytes are never NULL");
	*(size_t *)arg += len + 1;
}

static int
empty_journal_cb(uint64_t seq, const void *op, size_t len, void *arg)
{
	(void)seq;
	cr_assert_not_null(op, "an entry's bytes are never NULL");
	*(size_t *)arg += len + 1;
	return (0);
}

/*
 * Empty rows (a damaged or hand-made store: SQLite reads an empty blob
 * back as NULL) come back as zero bytes at a real address, so a reader
 * that copies them copies nothing rather than from NULL.
 */
Test(store, empty_blobs_read_back_as_empty_bytes)
{
	struct store	*st = open_store();
	char		*nb, *cause = NULL;
	void		*rec;
	size_t		 len, seen = 0;

	cr_assert_eq(store_exec_put(st, "e-1", "nb", 1, "", 0, &cause), 0);
	cr_assert_eq(store_journal_append(st, "nb", 1, "", 0, &cause), 0);
	cr_assert_eq(store_exec_get(st, "e-1", &nb, &rec, &len), 1);
	cr_assert_eq(len, 0);
	free(nb);
	free(rec);
	cr_assert_eq(store_exec_list(st, "nb", 8, empty_list_cb, &seen), 0);
	cr_assert_eq(seen, 1, "the empty record was listed once");
	seen = 0;
	cr_assert_geq(store_journal_each(st, "nb", 0, empty_journal_cb, &seen),
	    0);
	cr_assert_eq(seen, 1, "the empty entry was read once");
	store_close(st);
}

/*
 * A child appends entries and reports each one after store_journal_append
 * returned; the parent SIGKILLs it mid-stream.  Every reported entry must
 * be there after reopening.
 */
Test(store, acknowledged_entries_survive_sigkill)
{
	struct seen_journal	*sj = calloc(1, sizeof *sj);
	int			 round, p[2];
	uint64_t		 acked, last = 0, seq;
	pid_t			 pid;
	struct store		*st;
	char			*cause = NULL;

	for (round = 0; round < 5; round++) {
		cr_assert_eq(pipe(p), 0);
		if ((pid = fork()) == 0) {
			close(p[0]);
			st = store_open(tmpdir, &cause);
			if (st == NULL)
				_exit(1);
			for (seq = last + 1; seq < last + 100000; seq++) {
				if (store_journal_append(st, "nb-k", seq,
				    "edit", 4, &cause) != 0)
					_exit(1);
				if (write(p[1], &seq, sizeof seq) !=
				    (ssize_t)sizeof seq)
					_exit(1);
			}
			_exit(0);
		}
		close(p[1]);
		/* Wait for the first acknowledgement, then kill at random. */
		cr_assert_eq(read(p[0], &seq, sizeof seq), (ssize_t)sizeof seq,
		    "round %d: writer acknowledged nothing", round);
		acked = seq;
		usleep((useconds_t)(random() % 50000));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		while (read(p[0], &seq, sizeof seq) == (ssize_t)sizeof seq)
			acked = seq;
		close(p[0]);
		cr_assert_gt(acked, last, "round %d acknowledged nothing",
		    round);

		st = open_store();
		sj->n = 0;
		store_journal_each(st, "nb-k", last, journal_cb, sj);
		cr_assert_geq((uint64_t)sj->n, acked - last,
		    "round %d: %d entries after %llu, %llu acknowledged",
		    round, sj->n, (unsigned long long)last,
		    (unsigned long long)(acked - last));
		last = sj->last;
		/* Start the next round past whatever landed unacknowledged. */
		store_close(st);
	}
	free(sj);
}

/* A snapshot that says which room it is, long enough to overflow. */
static size_t
make_snapshot(char *buf, size_t size, int i)
{
	size_t	n;

	n = (size_t)snprintf(buf, size, "snapshot of room %d:", i);
	for (; n < size - 1; n++)
		buf[n] = (char)('a' + (i + (int)n) % 26);
	buf[n] = '\0';
	return (n);
}

/* 50 rooms, each with a snapshot and 20 journal entries. */
static void
fill_store(void)
{
	struct store		*st = open_store();
	struct store_room	 r;
	char			 id[32], snap[3000], *cause = NULL;
	int			 i, j;

	for (i = 0; i < 50; i++) {
		snprintf(id, sizeof id, "room-%02d", i);
		memset(&r, 0, sizeof r);
		r.notebook_id = id;
		r.kernel = "python3";
		r.seq = 0;
		r.snapshot = snap;
		r.snapshot_len = make_snapshot(snap, 200 + 50 * (size_t)i, i);
		cr_assert_eq(store_room_snapshot(st, &r, &cause), 0);
		for (j = 1; j <= 20; j++)
			cr_assert_eq(store_journal_append(st, id, (uint64_t)j,
			    "an edit of some length", 22, &cause), 0);
	}
	store_close(st);
}

static void
garble(const char *path, off_t off, size_t len)
{
	FILE	*f = fopen(path, "r+b");
	size_t	 i;

	cr_assert_not_null(f);
	cr_assert_eq(fseeko(f, off, SEEK_SET), 0);
	srandom((unsigned)off);
	for (i = 0; i < len; i++)
		fputc((int)(random() & 0xff), f);
	cr_assert_eq(fclose(f), 0);
}

static char *
read_all(const char *path, size_t *len)
{
	char	*data, *cause = NULL;

	cr_assert_eq(util_read_file(path, &data, len, &cause), 0, "%s",
	    cause);
	return (data);
}

struct check_rooms {
	int	n;
	int	bad;
};

/* Every recovered room has exactly the snapshot written for it. */
static int
check_room_cb(const struct store_room *r, void *arg)
{
	struct check_rooms	*c = arg;
	char			 want[3000];
	int			 i;
	size_t			 n;

	c->n++;
	if (sscanf(r->notebook_id, "room-%d", &i) != 1 || i < 0 || i >= 50) {
		c->bad++;
		return (0);
	}
	n = make_snapshot(want, 200 + 50 * (size_t)i, i);
	if (r->snapshot_len != n || memcmp(r->snapshot, want, n) != 0)
		c->bad++;
	return (0);
}

Test(store, clean_store_reports_no_damage)
{
	struct store	*st;

	fill_store();
	st = open_store();
	cr_assert_null(store_damage(st));
	store_close(st);
}

/*
 * 8 KiB of garbage in the middle: the damaged file is kept aside byte
 * for byte, every row still readable is in the new store, and the
 * report says how many of how many.
 */
Test(store, damaged_store_is_set_aside_and_recovered)
{
	struct store		*st;
	struct check_rooms	 c = { 0, 0 };
	char			*path, *aside, *before, *after, *cmd;
	const char		*d;
	size_t			 blen, alen;
	struct stat		 sb;
	FILE			*p;
	char			 line[1024];

	fill_store();
	xasprintf(&path, "%s/runtimed.db", tmpdir);
	cr_assert_eq(stat(path, &sb), 0);
	garble(path, (sb.st_size / 2) & ~(off_t)4095, 8192);
	before = read_all(path, &blen);

	st = open_store();
	d = store_damage(st);
	cr_assert_not_null(d, "garbage in the middle went unnoticed");
	cr_log_info("%s", d);
	cr_assert(strstr(d, "damaged") != NULL);
	cr_assert(strstr(d, "of 50 notebooks") != NULL, "%s", d);
	cr_assert(strstr(d, "of 1000 journal entries") != NULL, "%s", d);

	/* The damaged copy, named in the report, is the damaged file. */
	xasprintf(&cmd, "ls %s/runtimed.db.damaged-* | grep -v -e -wal -e -shm",
	    tmpdir);
	p = popen(cmd, "r");
	cr_assert_not_null(fgets(line, sizeof line, p));
	pclose(p);
	line[strcspn(line, "\n")] = '\0';
	aside = line;
	cr_assert(strstr(d, aside) != NULL, "report does not name %s", aside);
	after = read_all(aside, &alen);
	cr_assert_eq(alen, blen);
	cr_assert(memcmp(before, after, blen) == 0);

	cr_assert_geq(store_room_each(st, check_room_cb, &c), 0);
	cr_assert_eq(c.bad, 0, "%d recovered rooms hold garbage", c.bad);
	cr_assert_gt(c.n, 0, "nothing recovered");
	store_close(st);

	/* The rebuilt store is sound and keeps what was recovered. */
	st = open_store();
	cr_assert_null(store_damage(st));
	c.n = 0;
	cr_assert_geq(store_room_each(st, check_room_cb, &c), 0);
	cr_assert_gt(c.n, 0);
	store_close(st);
	free(before);
	free(after);
	free(cmd);
	free(path);
}

/* Garbage at each page in turn: never an error, never garbage rows. */
Test(store, garbage_anywhere_past_the_header_is_recovered)
{
	struct store		*st;
	struct check_rooms	 c;
	char			*path, *clean, *cmd, *cause = NULL;
	size_t			 len;
	off_t			 off;
	FILE			*f;

	fill_store();
	xasprintf(&path, "%s/runtimed.db", tmpdir);
	clean = read_all(path, &len);
	for (off = 4096; off + 8192 <= (off_t)len; off += 4096) {
		xasprintf(&cmd, "rm -f %s/runtimed.db*", tmpdir);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
		f = fopen(path, "wb");
		cr_assert_eq(fwrite(clean, 1, len, f), len);
		fclose(f);
		garble(path, off, 8192);
		st = store_open(tmpdir, &cause);
		cr_assert_not_null(st, "offset %lld: %s", (long long)off,
		    cause);
		memset(&c, 0, sizeof c);
		cr_assert_geq(store_room_each(st, check_room_cb, &c), 0);
		cr_assert_eq(c.bad, 0, "offset %lld: garbage rows",
		    (long long)off);
		if (c.n < 50)
			cr_assert_not_null(store_damage(st), "offset %lld: "
			    "%d of 50 rooms and no word of it",
			    (long long)off, c.n);
		store_close(st);
	}
	free(clean);
	free(path);
}

Test(store, not_a_database_is_an_error)
{
	struct store	*st;
	char		*path, *cause = NULL, *before, *after;
	size_t		 blen, alen;
	FILE		*f;

	xasprintf(&path, "%s/runtimed.db", tmpdir);
	f = fopen(path, "wb");
	fputs("this is not a database, but it is somebody's file\n", f);
	fclose(f);
	garble(path, 60, 8192);
	before = read_all(path, &blen);
	st = store_open(tmpdir, &cause);
	cr_assert_null(st, "a non-database opened as a store");
	cr_assert(strstr(cause, path) != NULL, "%s", cause);
	cr_assert(strstr(cause, "not a SQLite database") != NULL, "%s", cause);
	after = read_all(path, &alen);
	cr_assert(alen == blen && memcmp(before, after, blen) == 0,
	    "the file was changed");
	free(cause);
	free(before);
	free(after);
	free(path);
}

Test(store, unopenable_is_an_error)
{
	struct store	*st;
	char		*path, *cause = NULL;

	xasprintf(&path, "%s/runtimed.db", tmpdir);
	cr_assert_eq(mkdir(path, 0700), 0);
	st = store_open(tmpdir, &cause);
	cr_assert_null(st, "a directory opened as a store");
	cr_assert(strstr(cause, path) != NULL, "%s", cause);
	free(cause);
	free(path);
}

struct count_journal {
	int	n;
};

static int
count_journal_cb(uint64_t seq, const void *op, size_t len, void *arg)
{
	((struct count_journal *)arg)->n++;
	return (0);
}

/*
 * Killed with commits still in the WAL, then damaged: the WAL is kept
 * aside with the file, byte for byte, and its commits are recovered.
 */
Test(store, damaged_with_wal_keeps_and_recovers_the_wal)
{
	struct store		*st;
	struct count_journal	 cj = { 0 };
	char			*path, *wal, *wbefore, *wafter, *cmd;
	char			 line[1024], *cause = NULL;
	size_t			 wlen, alen;
	struct stat		 sb;
	pid_t			 pid;
	FILE			*p;
	uint64_t		 seq;

	fill_store();
	if ((pid = fork()) == 0) {
		st = store_open(tmpdir, &cause);
		for (seq = 1; st != NULL && seq <= 30; seq++)
			store_journal_append(st, "room-late", seq, "late", 4,
			    &cause);
		_exit(st != NULL ? 0 : 1);	/* no close: as if killed */
	}
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	xasprintf(&path, "%s/runtimed.db", tmpdir);
	xasprintf(&wal, "%s/runtimed.db-wal", tmpdir);
	cr_assert_eq(stat(wal, &sb), 0);
	cr_assert_gt(sb.st_size, 0, "no WAL left behind");
	wbefore = read_all(wal, &wlen);
	cr_assert_eq(stat(path, &sb), 0);
	garble(path, (sb.st_size / 2) & ~(off_t)4095, 8192);

	st = open_store();
	cr_assert_not_null(store_damage(st));
	cr_assert(strstr(store_damage(st), "with its -wal") != NULL, "%s",
	    store_damage(st));
	cr_assert_eq(store_journal_each(st, "room-late", 0, count_journal_cb,
	    &cj), 30);
	store_close(st);
	xasprintf(&cmd, "ls %s/runtimed.db.damaged-*-wal", tmpdir);
	p = popen(cmd, "r");
	cr_assert_not_null(fgets(line, sizeof line, p));
	pclose(p);
	line[strcspn(line, "\n")] = '\0';
	wafter = read_all(line, &alen);
	cr_assert(alen == wlen && memcmp(wbefore, wafter, wlen) == 0,
	    "the WAL kept aside is not the damaged file's WAL");
	free(cmd);
	xasprintf(&cmd, "%s/runtimed.db.recovering", tmpdir);
	cr_assert_neq(access(cmd, F_OK), 0, "a .recovering file remains");
	free(cmd);
	free(wbefore);
	free(wafter);
	free(wal);
	free(path);
}

struct seen_file {
	int	n;
	char	path[64];
	char	id[64];
	int64_t	ino;
	int	bad;
};

static int
file_cb(const struct store_file *f, void *arg)
{
	struct seen_file	*s = arg;

	s->n++;
	snprintf(s->path, sizeof s->path, "%s", f->path);
	snprintf(s->id, sizeof s->id, "%s", f->notebook_id);
	s->ino = f->ino;
	/* fill_files wrote ino = the number in the id and the path. */
	if (strcmp(f->path + strlen("/nb/f-"), f->notebook_id +
	    strlen("id-")) != 0 || f->ino != atoi(f->notebook_id + 3))
		s->bad++;
	return (0);
}

/*
 * A file's id, by path and by id, across a reopen; a save-as moves the
 * id to the new path (the old path has none); rows found by inode; the
 * oldest pruned past a bound.
 */
Test(store, file_ids_by_path_id_and_inode)
{
	struct store		*st = open_store();
	struct store_file	 f = { "/nb/f-1", "id-1", 5, 1, 10, 100 };
	struct seen_file	 sf = { 0 };
	char			*cause = NULL;

	cr_assert_eq(store_file_get(st, "/nb/f-1", NULL, file_cb, &sf), 0);
	cr_assert_eq(store_file_put(st, &f, &cause), 0, "%s", cause);
	f.path = "/nb/f-2";
	f.notebook_id = "id-2";
	f.ino = 2;
	cr_assert_eq(store_file_put(st, &f, &cause), 0);
	store_close(st);

	st = open_store();
	cr_assert_eq(store_file_get(st, "/nb/f-1", NULL, file_cb, &sf), 1);
	cr_assert_str_eq(sf.id, "id-1");
	cr_assert_eq(store_file_get(st, NULL, "id-2", file_cb, &sf), 1);
	cr_assert_str_eq(sf.path, "/nb/f-2");
	cr_assert_eq(sf.bad, 0);

	/* Save-as of id-1 over f-2: f-2 is id-1 now, f-1 and id-2 gone. */
	f.path = "/nb/f-2";
	f.notebook_id = "id-1";
	cr_assert_eq(store_file_put(st, &f, &cause), 0);
	memset(&sf, 0, sizeof sf);
	cr_assert_eq(store_file_get(st, "/nb/f-1", NULL, file_cb, &sf), 0);
	cr_assert_eq(store_file_get(st, NULL, "id-2", file_cb, &sf), 0);
	cr_assert_eq(store_file_get(st, "/nb/f-2", NULL, file_cb, &sf), 1);
	cr_assert_str_eq(sf.id, "id-1");

	memset(&sf, 0, sizeof sf);
	cr_assert_eq(store_file_each_inode(st, 5, 2, file_cb, &sf), 1);
	cr_assert_eq(store_file_each_inode(st, 6, 2, file_cb, &sf), 0);
	cr_assert_eq(store_file_each_inode(st, 5, 1, file_cb, &sf), 0);
	store_close(st);
}

Test(store, file_ids_pruned_to_the_newest)
{
	struct store		*st = open_store();
	struct store_file	 f = { NULL, NULL, 1, 0, 0, 0 };
	struct seen_file	 sf = { 0 };
	char			 path[32], id[32], *cause = NULL;
	int			 i;

	for (i = 1; i <= 30; i++) {
		snprintf(path, sizeof path, "/nb/f-%d", i);
		snprintf(id, sizeof id, "id-%d", i);
		f.path = path;
		f.notebook_id = id;
		f.ino = i;
		cr_assert_eq(store_file_put(st, &f, &cause), 0);
		usleep(1000);	/* distinct seen_at */
	}
	cr_assert_eq(store_file_prune(st, 10), 20);
	cr_assert_eq(store_file_prune(st, 10), 0);
	cr_assert_eq(store_file_get(st, "/nb/f-20", NULL, file_cb, &sf), 0);
	cr_assert_eq(store_file_get(st, "/nb/f-21", NULL, file_cb, &sf), 1);
	cr_assert_eq(store_file_get(st, "/nb/f-30", NULL, file_cb, &sf), 1);
	cr_assert_eq(sf.bad, 0);
	store_close(st);
}

/* A damaged store: the file ids still readable come back, as they were. */
Test(store, file_ids_recovered_from_a_damaged_store)
{
	struct store		*st;
	struct store_file	 f = { NULL, NULL, 1, 0, 0, 0 };
	struct seen_file	 sf = { 0 };
	struct stat		 sb;
	char			 p[32], id[32], *path, *cause = NULL;
	const char		*d;
	int			 i, found = 0;

	fill_store();
	st = open_store();
	for (i = 1; i <= 500; i++) {
		snprintf(p, sizeof p, "/nb/f-%d", i);
		snprintf(id, sizeof id, "id-%d", i);
		f.path = p;
		f.notebook_id = id;
		f.ino = i;
		cr_assert_eq(store_file_put(st, &f, &cause), 0);
	}
	store_close(st);
	xasprintf(&path, "%s/runtimed.db", tmpdir);
	cr_assert_eq(stat(path, &sb), 0);
	garble(path, (sb.st_size / 2) & ~(off_t)4095, 8192);
	st = open_store();
	d = store_damage(st);
	cr_assert_not_null(d);
	cr_assert(strstr(d, "of 500 file ids") != NULL, "%s", d);
	for (i = 1; i <= 500; i++) {
		snprintf(p, sizeof p, "/nb/f-%d", i);
		found += store_file_get(st, p, NULL, file_cb, &sf);
	}
	cr_assert_gt(found, 0, "no file id recovered: %s", d);
	cr_assert_eq(sf.bad, 0, "recovered file ids hold garbage");
	store_close(st);
	free(path);
}

struct seen_sums {
	int	n;
	int	damaged[4];
	char	id[4][16];
	size_t	lens[4];
};

static int
sums_room_cb(const struct store_room *r, void *arg)
{
	struct seen_sums	*s = arg;

	if (s->n < 4) {
		s->damaged[s->n] = r->damaged;
		snprintf(s->id[s->n], sizeof s->id[s->n], "%s", r->notebook_id);
	}
	s->n++;
	return (0);
}

static int
sums_journal_cb(uint64_t seq, const void *op, size_t len, void *arg)
{
	struct seen_sums	*s = arg;

	if (s->n < 4)
		s->lens[s->n] = len;
	s->n++;
	return (0);
}

static void
sql_on(const char *sql)
{
	sqlite3	*db;
	char	*path, *err = NULL;

	xasprintf(&path, "%s/runtimed.db", tmpdir);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &err), SQLITE_OK,
	    "%s: %s", sql, err);
	sqlite3_close(db);
	free(path);
}

/*
 * A blob changed in place keeps decoding; its checksum tells (decision
 * 080).  A row without one (an older daemon's) is not judged.
 */
Test(store, a_changed_blob_fails_its_checksum)
{
	struct store		*st = open_store();
	struct store_room	 r = { "nb-1", NULL, "python3", 1, 5, "SNAP",
	    4, 0 };
	struct seen_sums	 s;
	char			*cause = NULL, *nb;
	void			*rec;
	size_t			 len;

	cr_assert_eq(store_room_snapshot(st, &r, &cause), 0);
	cr_assert_eq(store_journal_append(st, "nb-1", 6, "ab", 2, &cause), 0);
	cr_assert_eq(store_journal_append(st, "nb-1", 7, "cd", 2, &cause), 0);
	cr_assert_eq(store_exec_put(st, "e-1", "nb-1", 1, "REC", 3, &cause),
	    0);
	store_close(st);
	sql_on("UPDATE rooms SET snapshot = CAST('SNAQ' AS BLOB);"
	    "UPDATE journal SET op = CAST('ax' AS BLOB) WHERE seq = 6;"
	    "UPDATE executions SET record = CAST('REX' AS BLOB);"
	    "INSERT INTO rooms VALUES ('nb-2', NULL, 'python3', 1, 1,"
	    " CAST('OLD' AS BLOB), 0, NULL);");

	st = open_store();
	memset(&s, 0, sizeof s);
	cr_assert_eq(store_room_each(st, sums_room_cb, &s), 2);
	cr_assert_str_eq(s.id[0], "nb-1");
	cr_assert(s.damaged[0], "a changed snapshot passed");
	cr_assert_str_eq(s.id[1], "nb-2");
	cr_assert(!s.damaged[1], "a row without a checksum was judged");
	memset(&s, 0, sizeof s);
	cr_assert_eq(store_journal_each(st, "nb-1", 5, sums_journal_cb, &s), 2);
	cr_assert_eq(s.lens[0], 0, "a changed entry read as %zu bytes",
	    s.lens[0]);
	cr_assert_eq(s.lens[1], 2);
	cr_assert_eq(store_exec_get(st, "e-1", &nb, &rec, &len), -1);
	store_close(st);
}

/* An older daemon's store gains the column; its rows read unjudged. */
Test(store, an_older_store_gains_checksums)
{
	struct store		*st;
	struct store_room	 r = { "nb-2", NULL, "python3", 0, 9, "NEW",
	    3, 0 };
	struct seen_sums	 s;
	char			*cause = NULL;

	sql_on("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	    "CREATE TABLE rooms (notebook_id TEXT PRIMARY KEY, path TEXT,"
	    " kernel TEXT NOT NULL, dirty INTEGER NOT NULL,"
	    " seq INTEGER NOT NULL, snapshot BLOB NOT NULL,"
	    " updated_at INTEGER NOT NULL);"
	    "CREATE TABLE journal (notebook_id TEXT NOT NULL,"
	    " seq INTEGER NOT NULL, op BLOB NOT NULL,"
	    " PRIMARY KEY (notebook_id, seq));"
	    "CREATE TABLE executions (execution_id TEXT PRIMARY KEY,"
	    " notebook_id TEXT NOT NULL, finished_at INTEGER NOT NULL,"
	    " record BLOB NOT NULL);"
	    "INSERT INTO rooms VALUES ('nb-1', NULL, 'python3', 1, 1,"
	    " CAST('OLD' AS BLOB), 0);");
	st = open_store();
	cr_assert_eq(store_room_snapshot(st, &r, &cause), 0, "%s", cause);
	memset(&s, 0, sizeof s);
	cr_assert_eq(store_room_each(st, sums_room_cb, &s), 2);
	cr_assert(!s.damaged[0] && !s.damaged[1]);
	store_close(st);
	sql_on("UPDATE rooms SET snapshot = CAST('NEX' AS BLOB) "
	    "WHERE notebook_id = 'nb-2';");
	st = open_store();
	memset(&s, 0, sizeof s);
	cr_assert_eq(store_room_each(st, sums_room_cb, &s), 2);
	cr_assert(!s.damaged[0] && s.damaged[1],
	    "the new row is checked, the old one not");
	store_close(st);
}
