/* SPDX-License-Identifier: ISC */
/*
 * store.c: durable daemon state in SQLite, WAL mode, synchronous=FULL, so
 * a committed write survives a crash of the daemon or the machine.  The
 * daemon acknowledges a mutation only after its journal entry committed.
 * Writes run on the writer thread (store-writer.c), grouped in one
 * transaction (store_group_begin/commit), so each write here is a
 * savepoint or a single statement within it; reads run on the loop.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common.h"
#include "store.h"

#define STORE_SCHEMA_VERSION	1

/*
 * The statements of every group the writer commits, prepared once: a
 * prepare parses and plans its SQL, about as much work as the write it
 * serves (a run's record and its prune, the transaction around them).
 */
enum store_stmt {
	STORE_BEGIN,
	STORE_COMMIT,
	STORE_JOURNAL_INSERT,
	STORE_EXEC_PUT,
	STORE_EXEC_PRUNE,
	STORE_NSTMTS
};
static const char *const store_stmt_sql[STORE_NSTMTS] = {
	"BEGIN IMMEDIATE",
	"COMMIT",
	"INSERT OR REPLACE INTO journal (notebook_id, seq, op, checksum) "
	"VALUES (?, ?, ?, ?)",
	"INSERT OR REPLACE INTO executions (execution_id, notebook_id, "
	"finished_at, record, checksum) VALUES (?, ?, ?, ?, ?)",
	/* The newest ?3 of notebook ?1 and all finished at or after ?2. */
	"DELETE FROM executions WHERE notebook_id = ?1 AND finished_at < ?2 "
	"AND execution_id NOT IN (SELECT execution_id FROM executions WHERE "
	"notebook_id = ?1 ORDER BY finished_at DESC LIMIT ?3)",
};

struct store {
	sqlite3		*db;
	sqlite3_stmt	*stmt[STORE_NSTMTS];
	char		*path;		/* <dir>/runtimed.db */
	char		*damage;	/* what recovery found at open */
	char		*kept;		/* the damaged copy kept aside */
	char		**lost;		/* ids whose journal lost entries */
	size_t		  nlost;
	int		 markfd;	/* <path>-walmark (store-wal.c) */
	char		*walpath;	/* <path>-wal */
	char		*write_error;	/* while writes fail */
};

static const char *store_schema =
    "CREATE TABLE IF NOT EXISTS meta ("
    " key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS rooms ("
    " notebook_id TEXT PRIMARY KEY,"
    " path TEXT,"
    " kernel TEXT NOT NULL,"
    " dirty INTEGER NOT NULL,"
    " seq INTEGER NOT NULL,"
    " snapshot BLOB NOT NULL,"
    " updated_at INTEGER NOT NULL,"
    " checksum INTEGER);"
    "CREATE INDEX IF NOT EXISTS rooms_path ON rooms(path);"
    "CREATE TABLE IF NOT EXISTS journal ("
    " notebook_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " op BLOB NOT NULL,"
    " checksum INTEGER,"
    " PRIMARY KEY (notebook_id, seq));"
    "CREATE TABLE IF NOT EXISTS executions ("
    " execution_id TEXT PRIMARY KEY,"
    " notebook_id TEXT NOT NULL,"
    " finished_at INTEGER NOT NULL,"
    " record BLOB NOT NULL,"
    " checksum INTEGER);"
    "CREATE INDEX IF NOT EXISTS executions_nb ON"
    " executions(notebook_id, finished_at);"
    "CREATE TABLE IF NOT EXISTS files ("
    " path TEXT PRIMARY KEY,"
    " notebook_id TEXT NOT NULL UNIQUE,"
    " dev INTEGER NOT NULL,"
    " ino INTEGER NOT NULL,"
    " size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL,"
    " seen_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS files_inode ON files(ino, dev);";

/*
 * The tables whose blob has a checksum beside it (docs/decisions/080):
 * SQLite keeps no page checksums, and garbage in a page can leave a blob
 * that still decodes.  A store an older daemon made gains the column at
 * open; rows it wrote have none (NULL) and are not checked.
 */
static const char *const store_summed[] = { "rooms", "journal",
    "executions" };

static int	store_exec_sql(struct store *, const char *, char **);
static int64_t	store_sum(const void *, size_t);
static int	store_sum_ok(sqlite3_stmt *, int, const void *, size_t);
static int	store_add_sums(struct store *, char **);
static sqlite3	*store_open_db(const char *, char **);
static void	store_check_tidy(char *);
static const void *store_column_blob(sqlite3_stmt *, int, size_t *);
static int	store_check(sqlite3 *, const char *, char **);
static int	store_copy_file(const char *, const char *, char **);
static char	*store_cut_short(const char *);
static char	*store_keep_copy(const char *, char **);
static void	store_wal_report(struct store *, const struct store_wal_loss *,
		    const char *);
static int	store_init(struct store *, char **);
static int	store_stmts_prepare(struct store *, char **);
static void	store_stmts_finalize(struct store *);
static int	store_stmt_done(struct store *, enum store_stmt, char **);
static void	store_mark(struct store *, int);
static int	store_wal_hook(void *, sqlite3 *, const char *, int);
static void	store_cut_report(struct store *, uint64_t, uint64_t,
		    const char *);
static char	*store_aside_name(const char *);
static void	store_unlink(const char *, const char *);
static int	store_link_aside(const char *, const char *, char **);
static int	store_rebuild(struct store *, const char *, const char *,
		    char **);
static void	store_rollback(struct store *);
static void	store_rollback_to(struct store *);
static int	store_read_failed(struct store *, const char *);
static int	store_room_rows(struct store *, sqlite3_stmt *, store_room_cb,
		    void *);
static int	store_file_rows(struct store *, sqlite3_stmt *, store_file_cb,
		    void *);

static int
store_exec_sql(struct store *st, const char *sql, char **cause)
{
	char	*err = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		if (cause != NULL)
			xasprintf(cause, "state database: %s", err);
		else
			log_warnx("state database: %s: %s", sql, err);
		sqlite3_free(err);
		return (-1);
	}
	return (0);
}

/* Open a database file, or say why not (caller frees *cause). */
static sqlite3 *
store_open_db(const char *path, char **cause)
{
	sqlite3	*db;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		xasprintf(cause, "cannot open the state database %s: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return (NULL);
	}
	sqlite3_busy_timeout(db, 5000);
	sqlite3_extended_result_codes(db, 0);
	/* Closing must not fold a damaged file's WAL into it. */
	sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	return (db);
}

/* quick_check's first message on one line, without its banner. */
static void
store_check_tidy(char *msg)
{
	const char	*banner = "*** in database main ***\n";
	char		*p;

	if (strncmp(msg, banner, strlen(banner)) == 0)
		memmove(msg, msg + strlen(banner), strlen(msg) -
		    strlen(banner) + 1);
	for (p = msg; *p != '\0'; p++) {
		if (*p == '\n')
			*p = ' ';
	}
}

/*
 * Check the file: 0 sound, 1 damaged (*cause says how), -1 unusable (not
 * a database, unreadable; *cause is the error).  quick_check reads every
 * page but does not compare indexes with their tables, which is what a
 * start-up can afford (bench figures in docs/decisions/010).
 */
static int
store_check(sqlite3 *db, const char *path, char **cause)
{
	sqlite3_stmt	*s;
	const char	*row;
	int		 rc, sound = 1;

	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(3)", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			row = (const char *)sqlite3_column_text(s, 0);
			if (row != NULL && strcmp(row, "ok") == 0)
				continue;
			if (sound)
				xasprintf(cause, "%s", row != NULL ? row :
				    "quick_check failed");
			sound = 0;
		}
		sqlite3_finalize(s);
	}
	if (rc == SQLITE_DONE && !sound)
		store_check_tidy(*cause);
	if (rc == SQLITE_DONE)
		return (sound ? 0 : 1);
	if (!sound)
		free(*cause);
	if (rc == SQLITE_CORRUPT) {
		xasprintf(cause, "%s", sqlite3_errmsg(db));
		return (1);
	}
	if (rc == SQLITE_NOTADB)
		xasprintf(cause, "the state database %s is not a SQLite "
		    "database (%s); move it aside to start with an empty "
		    "store", path, sqlite3_errmsg(db));
	else
		xasprintf(cause, "cannot read the state database %s: %s", path,
		    sqlite3_errmsg(db));
	return (-1);
}

/* A blob's checksum: the first 8 bytes of its SHA-256. */
static int64_t
store_sum(const void *p, size_t len)
{
	unsigned char	md[CRYPTO_SHA256_LEN];
	int64_t		v;

	crypto_sha256(p, len, md);
	memcpy(&v, md, sizeof v);
	return (v);
}

/* Does a row's blob match its checksum (column col)?  NULL: unchecked. */
static int
store_sum_ok(sqlite3_stmt *s, int col, const void *p, size_t len)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return (1);
	return (sqlite3_column_int64(s, col) == store_sum(p, len));
}

/* A store an older daemon made: the checksum columns it lacks. */
static int
store_add_sums(struct store *st, char **cause)
{
	sqlite3_stmt	*s;
	char		*sql;
	size_t		 i;
	int		 rc;

	for (i = 0; i < sizeof store_summed / sizeof store_summed[0]; i++) {
		xasprintf(&sql, "SELECT checksum FROM %s LIMIT 0",
		    store_summed[i]);
		rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
		free(sql);
		sqlite3_finalize(s);
		if (rc == SQLITE_OK)
			continue;
		xasprintf(&sql, "ALTER TABLE %s ADD COLUMN checksum INTEGER",
		    store_summed[i]);
		rc = store_exec_sql(st, sql, cause);
		free(sql);
		if (rc != 0)
			return (-1);
	}
	return (0);
}

/* Create the schema and the prepared statements. */
static int
store_init(struct store *st, char **cause)
{
	char	sql[128];

	/*
	 * A WAL reset by a checkpoint is cut back to 1 MiB rather than kept
	 * at its largest (4 MiB and more): on a small disk that space is
	 * the user's.
	 */
	if (store_exec_sql(st, "PRAGMA journal_mode=WAL;"
	    "PRAGMA synchronous=FULL;"
	    "PRAGMA journal_size_limit=1048576;", cause) != 0)
		return (-1);
	/*
	 * One transaction, so a new store costs one flush, not one per
	 * table: on a busy disk a dozen flushes kept the first client
	 * waiting seconds for the daemon's loop.
	 */
	snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta VALUES "
	    "('schema', '%d');", STORE_SCHEMA_VERSION);
	if (store_exec_sql(st, "BEGIN IMMEDIATE", cause) != 0)
		return (-1);
	if (store_exec_sql(st, store_schema, cause) != 0 ||
	    store_add_sums(st, cause) != 0 ||
	    store_exec_sql(st, sql, cause) != 0 ||
	    store_exec_sql(st, "COMMIT", cause) != 0) {
		store_exec_sql(st, "ROLLBACK", NULL);
		return (-1);
	}
	if (store_stmts_prepare(st, cause) != 0)
		return (-1);
	/* From here on a clean close checkpoints as usual. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	return (0);
}

/* The writer's statements (store_stmt_sql), once per connection. */
static int
store_stmts_prepare(struct store *st, char **cause)
{
	size_t	i;

	for (i = 0; i < STORE_NSTMTS; i++) {
		if (sqlite3_prepare_v3(st->db, store_stmt_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmt[i], NULL) !=
		    SQLITE_OK) {
			xasprintf(cause, "state database: %s",
			    sqlite3_errmsg(st->db));
			store_stmts_finalize(st);
			return (-1);
		}
	}
	return (0);
}

/* Before the connection closes: SQLite keeps it open while any is. */
static void
store_stmts_finalize(struct store *st)
{
	size_t	i;

	for (i = 0; i < STORE_NSTMTS; i++) {
		sqlite3_finalize(st->stmt[i]);
		st->stmt[i] = NULL;
	}
}

/* Step a prepared statement that returns no rows, and reset it. */
static int
store_stmt_done(struct store *st, enum store_stmt which, char **cause)
{
	sqlite3_stmt	*s = st->stmt[which];
	int		 r;

	r = sqlite3_step(s);
	if (r != SQLITE_DONE && cause != NULL)
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_clear_bindings(s);
	sqlite3_reset(s);
	return (r == SQLITE_DONE ? 0 : -1);
}

/* A free name <path>.damaged-<UTC time>[.N] (caller frees). */
static char *
store_aside_name(const char *path)
{
	char		*to, *wal, when[32];
	struct tm	 tm;
	time_t		 t = time(NULL);
	int		 n;

	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
	for (n = 0;; n++) {
		if (n == 0)
			xasprintf(&to, "%s.damaged-%s", path, when);
		else
			xasprintf(&to, "%s.damaged-%s.%d", path, when, n);
		xasprintf(&wal, "%s-wal", to);
		if (access(to, F_OK) != 0 && errno == ENOENT &&
		    access(wal, F_OK) != 0 && errno == ENOENT) {
			free(wal);
			return (to);
		}
		free(wal);
		free(to);
	}
}

/* Remove path with a suffix, if it is there. */
static void
store_unlink(const char *path, const char *ext)
{
	char	*p;

	xasprintf(&p, "%s%s", path, ext);
	if (unlink(p) != 0 && errno != ENOENT)
		log_warnx("state database: cannot remove %s: %s", p,
		    strerror(errno));
	free(p);
}

/* Give path (and its -wal) a second name, aside; -1 with *cause. */
static int
store_link_aside(const char *path, const char *aside, char **cause)
{
	char	*from, *to;

	if (link(path, aside) != 0) {
		xasprintf(cause, "cannot keep %s as %s: %s", path, aside,
		    strerror(errno));
		return (-1);
	}
	xasprintf(&from, "%s-wal", path);
	xasprintf(&to, "%s-wal", aside);
	if (link(from, to) != 0 && errno != ENOENT) {
		xasprintf(cause, "cannot keep %s as %s: %s", from, to,
		    strerror(errno));
		free(from);
		free(to);
		unlink(aside);
		return (-1);
	}
	free(from);
	free(to);
	return (0);
}

/*
 * Is the file shorter than its header says (a truncated copy, a disk
 * that lost its end)?  Then what recovery could not find there is lost
 * without a name: a sentence saying so (caller frees), else NULL.  The
 * header's page count counts only if it is current (offset 92 equals
 * the change counter at 24, as SQLite checks).
 */
static char *
store_cut_short(const char *path)
{
	unsigned char	 h[100];
	struct stat	 sb;
	uint64_t	 psz, count, have;
	char		*out = NULL;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return (NULL);
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h &&
	    memcmp(h, "SQLite format 3", 16) == 0 &&
	    memcmp(h + 24, h + 92, 4) == 0) {
		psz = (uint64_t)h[16] << 8 | h[17];
		if (psz == 1)
			psz = 65536;
		count = (uint64_t)h[28] << 24 | (uint64_t)h[29] << 16 |
		    (uint64_t)h[30] << 8 | h[31];
		have = (uint64_t)sb.st_size / (psz != 0 ? psz : 1);
		if (psz >= 512 && count > 0 && have < count)
			xasprintf(&out, "; and the file is cut short: it holds "
			    "%llu of the %llu pages its header counts, so "
			    "whatever was in the other %llu is lost and cannot "
			    "be named (\"nothing known lost\" means nothing "
			    "more was found missing)", (unsigned long long)have,
			    (unsigned long long)count,
			    (unsigned long long)(count - have));
	}
	close(fd);
	return (out);
}

/*
 * The damaged file is kept aside (never deleted) and every row that can
 * still be read from it is copied into a new database, which then takes
 * its place.  The order makes a crash at any point harmless: the damaged
 * file gets its second name by link(2), the copy is built under
 * <path>.recovering and renamed over path only when complete, so path
 * is always the damaged file (recovered again next start) or the whole
 * copy.  st->damage says what happened, for the log, `runtimed status`
 * and MCP clients.
 */
static int
store_rebuild(struct store *st, const char *path, const char *why,
    char **cause)
{
	struct store	 tmp;
	sqlite3		*from;
	struct stat	 sb;
	char		*aside, *report = NULL, *err = NULL, *wal, *rec, *cut;
	int		 had_wal;

	xasprintf(&wal, "%s-wal", path);
	had_wal = stat(wal, &sb) == 0 && sb.st_size > 0;
	free(wal);
	sqlite3_close(st->db);
	st->db = NULL;
	aside = store_aside_name(path);
	if (store_link_aside(path, aside, cause) != 0) {
		free(aside);
		return (-1);
	}
	xasprintf(&rec, "%s.recovering", path);
	store_unlink(rec, "");
	store_unlink(rec, "-wal");
	store_unlink(rec, "-shm");
	memset(&tmp, 0, sizeof tmp);
	if ((tmp.db = store_open_db(rec, cause)) == NULL ||
	    store_init(&tmp, cause) != 0)
		goto fail;
	if ((from = store_open_db(aside, &err)) == NULL ||
	    sqlite3_exec(from, "PRAGMA query_only=1", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		xasprintf(&report, "nothing could be read from it (%s)",
		    err != NULL ? err : sqlite3_errmsg(from));
		free(err);
	} else if (store_recover_copy(from, tmp.db, &report, &st->lost,
	    &st->nlost) != 0) {
		xasprintf(cause, "cannot write the recovered state database "
		    "%s: %s", rec, sqlite3_errmsg(tmp.db));
		sqlite3_close(from);
		goto fail;
	}
	sqlite3_close(from);
	store_stmts_finalize(&tmp);
	if (sqlite3_close(tmp.db) != SQLITE_OK) {
		xasprintf(cause, "cannot close %s", rec);
		tmp.db = NULL;
		goto fail;
	}
	tmp.db = NULL;
	/* The damaged WAL must not meet the new file; it is kept aside. */
	store_unlink(path, "-wal");
	store_unlink(path, "-shm");
	if (rename(rec, path) != 0) {
		xasprintf(cause, "cannot rename %s to %s: %s", rec, path,
		    strerror(errno));
		xasprintf(&wal, "%s-wal", aside);
		xasprintf(&err, "%s-wal", path);
		if (link(wal, err) != 0 && errno != ENOENT)
			log_warnx("state database: %s is now only %s", err,
			    wal);
		free(wal);
		free(err);
		goto fail;
	}
	if ((st->db = store_open_db(path, cause)) == NULL ||
	    store_init(st, cause) != 0) {
		free(report);
		free(rec);
		free(aside);
		return (-1);
	}
	cut = store_cut_short(aside);
	xasprintf(&st->damage, "the state database was damaged (%s); it is "
	    "kept as %s%s; %s%s", why, aside, had_wal ? " (with its -wal)" : "",
	    report, cut != NULL ? cut : "");
	free(cut);
	free(report);
	free(rec);
	st->kept = aside;
	return (0);

fail:
	/* Leave the damaged file as it was, for the next start. */
	store_stmts_finalize(&tmp);
	sqlite3_close(tmp.db);
	store_unlink(rec, "");
	store_unlink(rec, "-wal");
	store_unlink(rec, "-shm");
	free(report);
	free(rec);
	free(aside);
	return (-1);
}

/* Copy from to a new file to (0600, never through a link); -1 and *cause. */
static int
store_copy_file(const char *from, const char *to, char **cause)
{
	char	 buf[65536];
	ssize_t	 n, w, off;
	int	 in, out;

	if ((in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot keep a copy of %s: %s", from,
		    strerror(errno));
		return (-1);
	}
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		xasprintf(cause, "cannot keep a copy of %s as %s: %s", from,
		    to, strerror(errno));
		close(in);
		return (-1);
	}
	while ((n = read(in, buf, sizeof buf)) > 0) {
		for (off = 0; off < n; off += w) {
			if ((w = write(out, buf + off, (size_t)(n - off))) <= 0)
				break;
		}
		if (off < n) {
			n = -1;
			break;
		}
	}
	if (n < 0 || fsync(out) != 0) {
		xasprintf(cause, "cannot keep a copy of %s as %s: %s", from,
		    to, strerror(errno));
		close(in);
		close(out);
		unlink(to);
		return (-1);
	}
	close(in);
	close(out);
	return (0);
}

/*
 * Keep the database and its log as they are now, copied (not linked:
 * SQLite writes both in place once it opens them) under a free name
 * aside; that name, or NULL and *cause.
 */
static char *
store_keep_copy(const char *path, char **cause)
{
	char	*aside, *from, *to;

	aside = store_aside_name(path);
	if (store_copy_file(path, aside, cause) != 0) {
		free(aside);
		return (NULL);
	}
	xasprintf(&from, "%s-wal", path);
	xasprintf(&to, "%s-wal", aside);
	if ((access(from, F_OK) == 0 || errno != ENOENT) &&
	    store_copy_file(from, to, cause) != 0) {
		unlink(aside);
		free(aside);
		aside = NULL;
	}
	free(from);
	free(to);
	return (aside);
}

/*
 * Say what a damaged log lost (st->damage, with what recovery said if
 * anything): where it broke, how many committed transactions, and the
 * notebooks their pages held rows of, by path where the store knows it.
 */
static void
store_wal_report(struct store *st, const struct store_wal_loss *l,
    const char *kept)
{
	sqlite3_stmt	*s = NULL;
	char		*names = NULL, *others = NULL, *next, *known;
	size_t		 i, other = 0;

	sqlite3_prepare_v2(st->db, "SELECT path FROM rooms WHERE notebook_id "
	    "= ?1 AND path IS NOT NULL UNION SELECT path FROM files WHERE "
	    "notebook_id = ?1", -1, &s, NULL);
	for (i = 0; i < l->nids; i++) {
		known = NULL;
		if (s != NULL) {
			sqlite3_reset(s);
			sqlite3_bind_text(s, 1, l->ids[i], -1, SQLITE_STATIC);
			if (sqlite3_step(s) == SQLITE_ROW &&
			    sqlite3_column_text(s, 0) != NULL)
				known = xstrdup((const char *)
				    sqlite3_column_text(s, 0));
		}
		if (known == NULL) {
			/* Its row went with the log: the id is all there is. */
			xasprintf(&next, "%s%s%s", others != NULL ? others : "",
			    others != NULL ? ", " : "", l->ids[i]);
			free(others);
			others = next;
			other++;
			continue;
		}
		xasprintf(&next, "%s%s%s (notebook %s)", names != NULL ?
		    names : "", names != NULL ? ", " : "", known, l->ids[i]);
		free(names);
		free(known);
		names = next;
	}
	sqlite3_finalize(s);
	for (i = 0; i < l->npaths; i++) {
		if (names != NULL && strstr(names, l->paths[i]) != NULL)
			continue;
		xasprintf(&next, "%s%s%s", names != NULL ? names : "",
		    names != NULL ? ", " : "", l->paths[i]);
		free(names);
		names = next;
	}
	if (other > 0) {
		xasprintf(&next, "%s%s%zu id%s the store no longer knows: %s",
		    names != NULL ? names : "", names != NULL ? ", and " : "",
		    other, other == 1 ? "" : "s", others);
		free(names);
		names = next;
	}
	free(others);
	xasprintf(&next, "the state database's write-ahead log is damaged at "
	    "byte %llu: %llu committed transaction%s after it (%llu "
	    "pages) could not be read and are lost%s%s%s; the database and "
	    "its log as they were are kept as %s and %s-wal%s%s",
	    (unsigned long long)l->offset, (unsigned long long)l->commits,
	    l->commits == 1 ? "" : "s", (unsigned long long)l->frames,
	    names != NULL ? " (they held rows of " : "",
	    names != NULL ? names : "", names != NULL ? ")" : "", kept, kept,
	    st->damage != NULL ? "; " : "",
	    st->damage != NULL ? st->damage : "");
	free(names);
	free(st->damage);
	st->damage = next;
}

/*
 * Write the mark of the log (store-wal.c): its salts and frames, or with
 * frames 0 nothing (before the log may shrink: a checkpoint that
 * truncates it, a close).  No fsync: the mark must never be ahead of
 * the log, and the log was synced before it.
 */
static void
store_mark(struct store *st, int frames)
{
	unsigned char	m[STORE_WAL_MARK_LEN];
	uint32_t	salt1 = 0, salt2 = 0;
	int		fd;

	if (st->markfd == -1)
		return;
	if (frames > 0) {
		fd = open(st->walpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (fd == -1 || store_wal_salts(fd, &salt1, &salt2) != 0)
			frames = 0;
		if (fd != -1)
			close(fd);
	}
	store_wal_mark_pack(m, salt1, salt2, (uint32_t)frames);
	if (pwrite(st->markfd, m, sizeof m, 0) != (ssize_t)sizeof m)
		log_debug("state database: the log's mark: %s",
		    strerror(errno));
}

/*
 * After each commit (SQLite's WAL hook): the mark, then the automatic
 * checkpoint this hook replaces (sqlite3_wal_autocheckpoint's default,
 * 1000 frames).
 */
static int
store_wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	store_mark(arg, frames);
	if (frames >= 1000)
		sqlite3_wal_checkpoint(db, name);
	return (SQLITE_OK);
}

/* Say what a log cut short lost (st->damage, after any other finding). */
static void
store_cut_report(struct store *st, uint64_t kept, uint64_t marked,
    const char *aside)
{
	char	*next;

	xasprintf(&next, "%s%sthe state database's write-ahead log is cut "
	    "short: it ends with frame %llu where %llu frames had been "
	    "committed to it (the writer's mark, runtimed.db-walmark), so the "
	    "transactions in the last %llu could not be read and are lost; "
	    "what they held cannot be named; the database and its log as "
	    "they were are kept as %s and %s-wal", st->damage != NULL ?
	    st->damage : "", st->damage != NULL ? "; " : "",
	    (unsigned long long)kept, (unsigned long long)marked,
	    (unsigned long long)(marked - kept), aside, aside);
	free(st->damage);
	st->damage = next;
}

/*
 * Open (creating) <dir>/runtimed.db.  A damaged file is set aside and
 * what can be read of it recovered (see store_damage); a file that is no
 * database or cannot be read is an error, never an empty store.
 */
struct store *
store_open(const char *dir, char **cause)
{
	struct store		*st;
	struct store_wal_loss	 loss;
	struct stat		 sb;
	uint64_t		 cut_kept = 0, cut_marked = 0;
	char			*path, *why = NULL, *kept = NULL, *markpath;
	int			 walrc, cutrc = 0;

	st = xcalloc(1, sizeof *st);
	st->markfd = -1;
	xasprintf(&path, "%s/runtimed.db", dir);
	/* Before SQLite opens it and drops what it cannot read. */
	if ((walrc = store_wal_check(path, &loss)) == 1 &&
	    (kept = store_keep_copy(path, cause)) == NULL) {
		store_wal_loss_clear(&loss);
		goto fail;
	}
	/* A log sound but shorter than the writer's mark says: cut. */
	if (walrc == 0 && (cutrc = store_wal_cut_check(path, &cut_kept,
	    &cut_marked)) == 1 && (kept = store_keep_copy(path, cause)) == NULL)
		goto fail;
	if ((st->db = store_open_db(path, cause)) == NULL)
		goto fail;
	switch (store_check(st->db, path, &why)) {
	case -1:
		*cause = why;
		goto fail;
	case 1:
		if (store_rebuild(st, path, why, cause) != 0) {
			free(why);
			goto fail;
		}
		free(why);
		break;
	default:
		if (store_init(st, cause) != 0)
			goto fail;
		break;
	}
	if (walrc == 1)
		store_wal_report(st, &loss, kept);
	if (cutrc == 1)
		store_cut_report(st, cut_kept, cut_marked, kept);
	if (walrc == 1)
		store_wal_loss_clear(&loss);
	if (kept != NULL && st->kept == NULL) {
		st->kept = kept;
		kept = NULL;
	}
	free(kept);
	st->path = path;
	xasprintf(&st->walpath, "%s-wal", path);
	xasprintf(&markpath, "%s-walmark", path);
	if ((st->markfd = open(markpath, O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC, 0600)) == -1 ||
	    fstat(st->markfd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		log_warnx("state database: %s: %s; a write-ahead log cut short "
		    "will not be found", markpath, st->markfd == -1 ?
		    strerror(errno) : "not a regular file");
		if (st->markfd != -1)
			close(st->markfd);
		st->markfd = -1;
	}
	free(markpath);
	/* What the log held is judged; from here the mark is new. */
	store_mark(st, 0);
	sqlite3_wal_hook(st->db, store_wal_hook, st);
	return (st);

fail:
	if (walrc == 1)
		store_wal_loss_clear(&loss);
	free(kept);
	free(path);
	store_stmts_finalize(st);
	sqlite3_close(st->db);
	free(st);
	return (NULL);
}

/*
 * Where the store as it was at open is kept aside: the copy made when
 * damage was found at open, else (damage found since, in what the rows
 * hold) a copy of the database and its log made now, before anything
 * is written.  NULL and *cause if no copy can be made.
 */
const char *
store_keep_aside(struct store *st, char **cause)
{
	if (st->kept == NULL)
		st->kept = store_keep_copy(st->path, cause);
	return (st->kept);
}

/*
 * Did recovery at open lose journal entries of this notebook?  Then what
 * is left of it is not what was stored (store-recover.c).
 */
int
store_journal_lost(struct store *st, const char *id)
{
	size_t	i;

	for (i = 0; i < st->nlost; i++) {
		if (strcmp(st->lost[i], id) == 0)
			return (1);
	}
	return (0);
}

/* What recovery found at open (a sentence), or NULL if the file was sound. */
const char *
store_damage(struct store *st)
{
	return (st->damage);
}

/* The last write that failed, while writes keep failing; else NULL. */
const char *
store_write_error(struct store *st)
{
	return (st->write_error);
}

/* End a failed transaction, if SQLite has not already. */
static void
store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		store_exec_sql(st, "ROLLBACK", NULL);
}

/*
 * Undo a failed write's savepoint and leave it; the group's transaction
 * around it goes on, unless SQLite has rolled it all back already.
 */
static void
store_rollback_to(struct store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	store_exec_sql(st, "ROLLBACK TO room", NULL);
	store_exec_sql(st, "RELEASE room", NULL);
}

/*
 * Remember whether the last write failed, for `runtimed status` (the
 * loop, from store-writer.c's completions; cause is NULL on success).
 */
void
store_set_write_error(struct store *st, const char *cause)
{
	const char	*prefix = "state database: ";

	free(st->write_error);
	st->write_error = NULL;
	if (cause == NULL)
		return;
	if (strncmp(cause, prefix, strlen(prefix)) == 0)
		cause += strlen(prefix);
	st->write_error = xstrdup(cause);
}

/*
 * One transaction for a group of writes (store-writer.c): the writes
 * inside it are durable together at store_group_commit, one fsync.
 */
int
store_group_begin(struct store *st, char **cause)
{
	return (store_stmt_done(st, STORE_BEGIN, cause));
}

int
store_group_commit(struct store *st, char **cause)
{
	if (store_stmt_done(st, STORE_COMMIT, cause) != 0) {
		store_rollback(st);
		return (-1);
	}
	return (0);
}

/*
 * Column col of a row as bytes, never NULL: SQLite gives NULL for an empty
 * blob (a damaged or hand-made row), and readers copy what they get.
 */
static const void *
store_column_blob(sqlite3_stmt *s, int col, size_t *len)
{
	const void	*p = sqlite3_column_blob(s, col);

	*len = (size_t)sqlite3_column_bytes(s, col);
	return (p != NULL ? p : "");
}

/*
 * Copy the WAL into the database and truncate it to nothing (the writer,
 * before writing again after a failed group).  A WAL on a disk that
 * filled up is never checkpointed by SQLite's own automatic checkpoint
 * (which needs room in the database file) and grows into whatever space
 * is freed, so writes went on failing "database or disk is full" after
 * the disk had room again: the freed space must go to the checkpoint
 * first.  -1 (nothing lost) when it cannot yet.
 */
int
store_checkpoint(struct store *st)
{
	int	rc;

	store_mark(st, 0);	/* the log is about to be cut to nothing */
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL,
	    SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (rc != SQLITE_OK) {
		log_debug("state database: checkpoint: %s",
		    sqlite3_errmsg(st->db));
		return (-1);
	}
	return (0);
}

/* Did the last failure roll back the whole group's transaction? */
int
store_group_lost(struct store *st)
{
	return (sqlite3_get_autocommit(st->db));
}

void
store_close(struct store *st)
{
	size_t	i;

	if (st == NULL)
		return;
	store_stmts_finalize(st);
	/* Closing checkpoints and removes the log: the mark claims none. */
	store_mark(st, 0);
	sqlite3_close(st->db);
	if (st->markfd != -1)
		close(st->markfd);
	for (i = 0; i < st->nlost; i++)
		free(st->lost[i]);
	free(st->lost);
	free(st->walpath);
	free(st->path);
	free(st->damage);
	free(st->kept);
	free(st->write_error);
	free(st);
}

/*
 * Replace a room's snapshot and drop the journal it makes redundant, in
 * one transaction.
 */
int
store_room_snapshot(struct store *st, const struct store_room *r,
    char **cause)
{
	sqlite3_stmt	*s = NULL;

	if (store_exec_sql(st, "SAVEPOINT room", cause) != 0)
		return (-1);
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO rooms "
	    "(notebook_id, path, kernel, dirty, seq, snapshot, updated_at, "
	    "checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &s, NULL) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_bind_text(s, 1, r->notebook_id, -1, SQLITE_STATIC);
	if (r->path != NULL)
		sqlite3_bind_text(s, 2, r->path, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 2);
	sqlite3_bind_text(s, 3, r->kernel, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, r->dirty);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)r->seq);
	sqlite3_bind_blob64(s, 6, r->snapshot, r->snapshot_len,
	    SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, util_now_us());
	sqlite3_bind_int64(s, 8, store_sum(r->snapshot, r->snapshot_len));
	if (sqlite3_step(s) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(st->db, "DELETE FROM journal WHERE "
	    "notebook_id = ? AND seq <= ?", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(s, 1, r->notebook_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)r->seq);
	if (sqlite3_step(s) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	s = NULL;
	if (store_exec_sql(st, "RELEASE room", cause) != 0)
		goto fail;
	return (0);

fail:
	if (cause != NULL && *cause == NULL)
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	store_rollback_to(st);
	return (-1);
}

/* Append one mutation; durable when this returns 0. */
int
store_journal_append(struct store *st, const char *id, uint64_t seq,
    const void *op, size_t len, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STORE_JOURNAL_INSERT];

	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	sqlite3_bind_blob64(s, 3, op, len, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, store_sum(op, len));
	return (store_stmt_done(st, STORE_JOURNAL_INSERT, cause));
}

/* Forget a room and its journal (a saved file-backed room, unloaded). */
int
store_room_forget(struct store *st, const char *id, char **cause)
{
	sqlite3_stmt	*s = NULL;
	const char	*sqls[] = { "DELETE FROM rooms WHERE notebook_id = ?",
	    "DELETE FROM journal WHERE notebook_id = ?" };
	size_t		 i;

	if (store_exec_sql(st, "SAVEPOINT room", cause) != 0)
		return (-1);
	for (i = 0; i < 2; i++) {
		if (sqlite3_prepare_v2(st->db, sqls[i], -1, &s, NULL) !=
		    SQLITE_OK)
			goto fail;
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE)
			goto fail;
		sqlite3_finalize(s);
		s = NULL;
	}
	if (store_exec_sql(st, "RELEASE room", cause) != 0) {
		store_rollback_to(st);
		return (-1);
	}
	return (0);

fail:
	xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	store_rollback_to(st);
	return (-1);
}

/* Log a read that ended in an error; -1. */
static int
store_read_failed(struct store *st, const char *what)
{
	log_warnx("state database: reading %s failed: %s", what,
	    sqlite3_errmsg(st->db));
	return (-1);
}

static int
store_room_rows(struct store *st, sqlite3_stmt *s, store_room_cb cb,
    void *arg)
{
	struct store_room	r;
	int			rc, n = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&r, 0, sizeof r);
		r.notebook_id = (const char *)sqlite3_column_text(s, 0);
		r.path = (const char *)sqlite3_column_text(s, 1);
		r.kernel = (const char *)sqlite3_column_text(s, 2);
		r.dirty = sqlite3_column_int(s, 3);
		r.seq = (uint64_t)sqlite3_column_int64(s, 4);
		r.snapshot = store_column_blob(s, 5, &r.snapshot_len);
		r.damaged = !store_sum_ok(s, 6, r.snapshot, r.snapshot_len);
		n++;
		if (cb(&r, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return (store_read_failed(st, "notebooks"));
	return (n);
}

#define STORE_ROOM_COLUMNS \
    "SELECT notebook_id, path, kernel, dirty, seq, snapshot, checksum " \
    "FROM rooms"

/* Call cb for every stored room; how many were visited, -1 on error. */
int
store_room_each(struct store *st, store_room_cb cb, void *arg)
{
	sqlite3_stmt	*s;

	if (sqlite3_prepare_v2(st->db, STORE_ROOM_COLUMNS, -1, &s, NULL) !=
	    SQLITE_OK)
		return (store_read_failed(st, "notebooks"));
	return (store_room_rows(st, s, cb, arg));
}

/* Find one room by id, or (id NULL) by path; 1 found, 0 not, -1 error. */
int
store_room_get(struct store *st, const char *id, const char *path,
    store_room_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	int		 n;

	if (sqlite3_prepare_v2(st->db, id != NULL ?
	    STORE_ROOM_COLUMNS " WHERE notebook_id = ?" :
	    STORE_ROOM_COLUMNS " WHERE path = ?", -1, &s, NULL) != SQLITE_OK)
		return (store_read_failed(st, "a notebook"));
	sqlite3_bind_text(s, 1, id != NULL ? id : path, -1, SQLITE_TRANSIENT);
	if ((n = store_room_rows(st, s, cb, arg)) < 0)
		return (-1);
	return (n > 0);
}

/* Call cb for each journal entry of a room after seq, in order. */
int
store_journal_each(struct store *st, const char *id, uint64_t after,
    store_journal_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	const void	*blob;
	size_t		 len;
	int		 n = 0, rc;

	if (sqlite3_prepare_v2(st->db, "SELECT seq, op, checksum FROM journal "
	    "WHERE notebook_id = ? AND seq > ? ORDER BY seq", -1, &s, NULL) !=
	    SQLITE_OK)
		return (store_read_failed(st, "the journal"));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)after);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		n++;
		blob = store_column_blob(s, 1, &len);
		/* A damaged entry reads as none: it decodes as nothing. */
		if (!store_sum_ok(s, 2, blob, len)) {
			log_warnx("state database: journal entry %lld of %s "
			    "fails its checksum", sqlite3_column_int64(s, 0),
			    id);
			len = 0;
		}
		if (cb((uint64_t)sqlite3_column_int64(s, 0), blob, len,
		    arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return (store_read_failed(st, "the journal"));
	return (n);
}

/* Bytes of journal a room has, to decide when to snapshot. */
int64_t
store_journal_bytes(struct store *st, const char *id)
{
	sqlite3_stmt	*s;
	int64_t		 n = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT COALESCE(SUM(LENGTH(op)), 0) "
	    "FROM journal WHERE notebook_id = ?", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	else
		n = store_read_failed(st, "the journal");
	sqlite3_finalize(s);
	return (n);
}

/* Store a finished execution record. */
int
store_exec_put(struct store *st, const char *exec_id, const char *nb_id,
    int64_t finished_at, const void *rec, size_t len, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STORE_EXEC_PUT];

	sqlite3_bind_text(s, 1, exec_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, nb_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, finished_at);
	sqlite3_bind_blob64(s, 4, rec, len, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, store_sum(rec, len));
	return (store_stmt_done(st, STORE_EXEC_PUT, cause));
}

/*
 * Fetch a record: 1 found (caller frees *nb_id and *rec), 0 not found,
 * -1 unreadable.
 */
int
store_exec_get(struct store *st, const char *exec_id, char **nb_id,
    void **rec, size_t *len)
{
	sqlite3_stmt	*s;
	const void	*blob;
	int		 found = 0, rc;

	if (sqlite3_prepare_v2(st->db, "SELECT notebook_id, record, checksum "
	    "FROM executions WHERE execution_id = ?", -1, &s, NULL) !=
	    SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, exec_id, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW &&
	    !store_sum_ok(s, 2, sqlite3_column_blob(s, 1),
	    (size_t)sqlite3_column_bytes(s, 1))) {
		log_warnx("state database: execution record %s fails its "
		    "checksum", exec_id);
		found = -1;
	} else if (rc == SQLITE_ROW) {
		*nb_id = xstrdup((const char *)sqlite3_column_text(s, 0));
		blob = store_column_blob(s, 1, len);
		*rec = xmalloc(*len + 1);
		memcpy(*rec, blob, *len);
		found = 1;
	} else if (rc != SQLITE_DONE)
		found = store_read_failed(st, "an execution record");
	sqlite3_finalize(s);
	return (found);
}

/*
 * The newest records of one notebook (at most limit, by the time each
 * was last written): cb(record, len, written_at, arg) for each.  -1 when
 * the store cannot be read.
 */
int
store_exec_list(struct store *st, const char *nb_id, int limit,
    store_exec_list_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	const void	*blob;
	size_t		 len;
	int		 rc;

	if (sqlite3_prepare_v2(st->db, "SELECT record, finished_at, checksum "
	    "FROM executions WHERE notebook_id = ? ORDER BY finished_at DESC "
	    "LIMIT ?", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, nb_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		blob = store_column_blob(s, 0, &len);
		if (!store_sum_ok(s, 2, blob, len)) {
			log_warnx("state database: an execution record of %s "
			    "fails its checksum; left out", nb_id);
			continue;
		}
		cb(blob, len, sqlite3_column_int64(s, 1), arg);
	}
	if (rc != SQLITE_DONE)
		store_read_failed(st, "the execution records");
	sqlite3_finalize(s);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/*
 * Keep, for one notebook, the newest `keep` records and every record
 * finished at or after `since` (microseconds); delete the rest.
 */
int
store_exec_prune(struct store *st, const char *nb_id, int keep,
    int64_t since)
{
	sqlite3_stmt	*s = st->stmt[STORE_EXEC_PRUNE];

	sqlite3_bind_text(s, 1, nb_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int(s, 3, keep);
	if (store_stmt_done(st, STORE_EXEC_PRUNE, NULL) != 0)
		return (-1);
	return (sqlite3_changes(st->db));
}

/*
 * Every execution record, newest finished first, to cb(execution_id,
 * notebook_id, record, length, arg) until it returns non-zero: 0, or -1
 * when the table cannot be read.
 */
int
store_exec_each(struct store *st, store_exec_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	const void	*blob;
	size_t		 len;
	int		 rc;

	if (sqlite3_prepare_v2(st->db, "SELECT execution_id, notebook_id, "
	    "record, checksum FROM executions ORDER BY finished_at DESC", -1,
	    &s, NULL) != SQLITE_OK)
		return (-1);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		blob = store_column_blob(s, 2, &len);
		if (!store_sum_ok(s, 3, blob, len)) {
			log_warnx("state database: execution record %s fails "
			    "its checksum; left out",
			    (const char *)sqlite3_column_text(s, 0));
			continue;
		}
		if (cb((const char *)sqlite3_column_text(s, 0),
		    (const char *)sqlite3_column_text(s, 1), blob, len,
		    arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		rc = store_read_failed(st, "the execution records");
	else
		rc = 0;
	sqlite3_finalize(s);
	return (rc);
}

/*
 * The files table: which notebook_id a file-backed notebook has, by its
 * real path, so a room opened again (after an unload or a restart) keeps
 * its id.  dev, ino, size and mtime are the file as last seen, to know it
 * again under a new name after a rename.  See docs/decisions/018.
 */

/* Remember (replace) a file's id; the id's and the path's old rows go. */
int
store_file_put(struct store *st, const struct store_file *f, char **cause)
{
	int	r;

	r = store_file_write(st, f, cause);
	store_set_write_error(st, r == 0 ? NULL : *cause);
	return (r);
}

/* store_file_put without touching store_write_error (the writer's). */
int
store_file_write(struct store *st, const struct store_file *f, char **cause)
{
	sqlite3_stmt	*s;
	int		 r;

	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO files "
	    "(path, notebook_id, dev, ino, size, mtime_ns, seen_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &s, NULL) != SQLITE_OK) {
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
		return (-1);
	}
	sqlite3_bind_text(s, 1, f->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, f->notebook_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, f->dev);
	sqlite3_bind_int64(s, 4, f->ino);
	sqlite3_bind_int64(s, 5, f->size);
	sqlite3_bind_int64(s, 6, f->mtime_ns);
	sqlite3_bind_int64(s, 7, util_now_us());
	r = sqlite3_step(s);
	if (r != SQLITE_DONE)
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	return (r == SQLITE_DONE ? 0 : -1);
}

static int
store_file_rows(struct store *st, sqlite3_stmt *s, store_file_cb cb,
    void *arg)
{
	struct store_file	f;
	int			rc, n = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&f, 0, sizeof f);
		f.path = (const char *)sqlite3_column_text(s, 0);
		f.notebook_id = (const char *)sqlite3_column_text(s, 1);
		f.dev = sqlite3_column_int64(s, 2);
		f.ino = sqlite3_column_int64(s, 3);
		f.size = sqlite3_column_int64(s, 4);
		f.mtime_ns = sqlite3_column_int64(s, 5);
		if (f.path == NULL || f.notebook_id == NULL)
			continue;
		n++;
		if (cb(&f, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return (store_read_failed(st, "notebook ids of files"));
	return (n);
}

#define STORE_FILE_COLUMNS \
    "SELECT path, notebook_id, dev, ino, size, mtime_ns FROM files"

/*
 * The row of a path, or (path NULL) of an id: 1 found (cb called), 0 not,
 * -1 the store could not be read (never to be taken for "not found").
 */
int
store_file_get(struct store *st, const char *path, const char *id,
    store_file_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	int		 n;

	if (sqlite3_prepare_v2(st->db, path != NULL ?
	    STORE_FILE_COLUMNS " WHERE path = ?" :
	    STORE_FILE_COLUMNS " WHERE notebook_id = ?", -1, &s, NULL) !=
	    SQLITE_OK)
		return (store_read_failed(st, "notebook ids of files"));
	sqlite3_bind_text(s, 1, path != NULL ? path : id, -1,
	    SQLITE_TRANSIENT);
	if ((n = store_file_rows(st, s, cb, arg)) < 0)
		return (-1);
	return (n > 0);
}

/* Call cb for every row of a file (dev, ino); how many, -1 on error. */
int
store_file_each_inode(struct store *st, int64_t dev, int64_t ino,
    store_file_cb cb, void *arg)
{
	sqlite3_stmt	*s;

	if (sqlite3_prepare_v2(st->db, STORE_FILE_COLUMNS
	    " WHERE ino = ? AND dev = ?", -1, &s, NULL) != SQLITE_OK)
		return (store_read_failed(st, "notebook ids of files"));
	sqlite3_bind_int64(s, 1, ino);
	sqlite3_bind_int64(s, 2, dev);
	return (store_file_rows(st, s, cb, arg));
}

/* Keep the `keep` rows seen last; how many went, -1 on error. */
int
store_file_prune(struct store *st, int keep)
{
	sqlite3_stmt	*s;
	int		 r;

	if (sqlite3_prepare_v2(st->db, "DELETE FROM files WHERE rowid IN "
	    "(SELECT rowid FROM files ORDER BY seen_at DESC LIMIT -1 "
	    "OFFSET ?)", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_int(s, 1, keep);
	r = sqlite3_step(s);
	store_set_write_error(st, r == SQLITE_DONE ? NULL :
	    sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	return (r == SQLITE_DONE ? sqlite3_changes(st->db) : -1);
}
