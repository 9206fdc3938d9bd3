/*
 * store.c: durable daemon state in SQLite, WAL mode, synchronous=FULL, so
 * a committed write survives a crash of the daemon or the machine.  The
 * daemon acknowledges a mutation only after its journal entry committed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common.h"
#include "store.h"

#define STORE_SCHEMA_VERSION	1

struct store {
	sqlite3		*db;
	sqlite3_stmt	*journal_insert;
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
    " updated_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS rooms_path ON rooms(path);"
    "CREATE TABLE IF NOT EXISTS journal ("
    " notebook_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " op BLOB NOT NULL,"
    " PRIMARY KEY (notebook_id, seq));"
    "CREATE TABLE IF NOT EXISTS executions ("
    " execution_id TEXT PRIMARY KEY,"
    " notebook_id TEXT NOT NULL,"
    " finished_at INTEGER NOT NULL,"
    " record BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS executions_nb ON"
    " executions(notebook_id, finished_at);";

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

/* Open (creating) <dir>/runtimed.db. */
struct store *
store_open(const char *dir, char **cause)
{
	struct store	*st;
	char		*path, sql[128];

	st = xcalloc(1, sizeof *st);
	xasprintf(&path, "%s/runtimed.db", dir);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		xasprintf(cause, "cannot open %s: %s", path,
		    sqlite3_errmsg(st->db));
		free(path);
		sqlite3_close(st->db);
		free(st);
		return (NULL);
	}
	free(path);
	sqlite3_busy_timeout(st->db, 5000);
	if (store_exec_sql(st, "PRAGMA journal_mode=WAL;"
	    "PRAGMA synchronous=FULL;", cause) != 0 ||
	    store_exec_sql(st, store_schema, cause) != 0)
		goto fail;
	snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta VALUES "
	    "('schema', '%d');", STORE_SCHEMA_VERSION);
	if (store_exec_sql(st, sql, cause) != 0)
		goto fail;
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO journal "
	    "(notebook_id, seq, op) VALUES (?, ?, ?)", -1,
	    &st->journal_insert, NULL) != SQLITE_OK) {
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
		goto fail;
	}
	return (st);

fail:
	sqlite3_close(st->db);
	free(st);
	return (NULL);
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	sqlite3_finalize(st->journal_insert);
	sqlite3_close(st->db);
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

	if (store_exec_sql(st, "BEGIN IMMEDIATE", cause) != 0)
		return (-1);
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO rooms "
	    "(notebook_id, path, kernel, dirty, seq, snapshot, updated_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
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
	if (store_exec_sql(st, "COMMIT", cause) != 0)
		goto fail;
	return (0);

fail:
	if (cause != NULL && *cause == NULL)
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	store_exec_sql(st, "ROLLBACK", NULL);
	return (-1);
}

/* Append one mutation; durable when this returns 0. */
int
store_journal_append(struct store *st, const char *id, uint64_t seq,
    const void *op, size_t len, char **cause)
{
	sqlite3_stmt	*s = st->journal_insert;
	int		 r;

	sqlite3_reset(s);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	sqlite3_bind_blob64(s, 3, op, len, SQLITE_STATIC);
	r = sqlite3_step(s);
	sqlite3_clear_bindings(s);
	sqlite3_reset(s);
	if (r != SQLITE_DONE) {
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
		return (-1);
	}
	return (0);
}

/* Forget a room and its journal (a saved file-backed room, unloaded). */
int
store_room_forget(struct store *st, const char *id, char **cause)
{
	sqlite3_stmt	*s = NULL;
	const char	*sqls[] = { "DELETE FROM rooms WHERE notebook_id = ?",
	    "DELETE FROM journal WHERE notebook_id = ?" };
	size_t		 i;

	if (store_exec_sql(st, "BEGIN IMMEDIATE", cause) != 0)
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
	return (store_exec_sql(st, "COMMIT", cause));

fail:
	xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	store_exec_sql(st, "ROLLBACK", NULL);
	return (-1);
}

static int
store_room_rows(sqlite3_stmt *s, store_room_cb cb, void *arg)
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
		r.snapshot = sqlite3_column_blob(s, 5);
		r.snapshot_len = (size_t)sqlite3_column_bytes(s, 5);
		n++;
		if (cb(&r, arg) != 0)
			break;
	}
	sqlite3_finalize(s);
	return (n);
}

#define STORE_ROOM_COLUMNS \
    "SELECT notebook_id, path, kernel, dirty, seq, snapshot FROM rooms"

/* Call cb for every stored room; returns how many were visited. */
int
store_room_each(struct store *st, store_room_cb cb, void *arg)
{
	sqlite3_stmt	*s;

	if (sqlite3_prepare_v2(st->db, STORE_ROOM_COLUMNS, -1, &s, NULL) !=
	    SQLITE_OK)
		return (-1);
	return (store_room_rows(s, cb, arg));
}

/* Find one room by id, or (id NULL) by path; 1 if found, 0 if not. */
int
store_room_get(struct store *st, const char *id, const char *path,
    store_room_cb cb, void *arg)
{
	sqlite3_stmt	*s;

	if (sqlite3_prepare_v2(st->db, id != NULL ?
	    STORE_ROOM_COLUMNS " WHERE notebook_id = ?" :
	    STORE_ROOM_COLUMNS " WHERE path = ?", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, id != NULL ? id : path, -1, SQLITE_TRANSIENT);
	return (store_room_rows(s, cb, arg) > 0);
}

/* Call cb for each journal entry of a room after seq, in order. */
int
store_journal_each(struct store *st, const char *id, uint64_t after,
    store_journal_cb cb, void *arg)
{
	sqlite3_stmt	*s;
	int		 n = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT seq, op FROM journal WHERE "
	    "notebook_id = ? AND seq > ? ORDER BY seq", -1, &s, NULL) !=
	    SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)after);
	while (sqlite3_step(s) == SQLITE_ROW) {
		n++;
		if (cb((uint64_t)sqlite3_column_int64(s, 0),
		    sqlite3_column_blob(s, 1),
		    (size_t)sqlite3_column_bytes(s, 1), arg) != 0)
			break;
	}
	sqlite3_finalize(s);
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
	sqlite3_finalize(s);
	return (n);
}

/* Store a finished execution record. */
int
store_exec_put(struct store *st, const char *exec_id, const char *nb_id,
    int64_t finished_at, const void *rec, size_t len, char **cause)
{
	sqlite3_stmt	*s;
	int		 r;

	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO executions "
	    "(execution_id, notebook_id, finished_at, record) "
	    "VALUES (?, ?, ?, ?)", -1, &s, NULL) != SQLITE_OK) {
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
		return (-1);
	}
	sqlite3_bind_text(s, 1, exec_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, nb_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, finished_at);
	sqlite3_bind_blob64(s, 4, rec, len, SQLITE_STATIC);
	r = sqlite3_step(s);
	sqlite3_finalize(s);
	if (r != SQLITE_DONE) {
		xasprintf(cause, "state database: %s", sqlite3_errmsg(st->db));
		return (-1);
	}
	return (0);
}

/* Fetch a record: 1 found (caller frees *nb_id and *rec), 0 not found. */
int
store_exec_get(struct store *st, const char *exec_id, char **nb_id,
    void **rec, size_t *len)
{
	sqlite3_stmt	*s;
	int		 found = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT notebook_id, record FROM "
	    "executions WHERE execution_id = ?", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, exec_id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*nb_id = xstrdup((const char *)sqlite3_column_text(s, 0));
		*len = (size_t)sqlite3_column_bytes(s, 1);
		*rec = xmalloc(*len + 1);
		memcpy(*rec, sqlite3_column_blob(s, 1), *len);
		found = 1;
	}
	sqlite3_finalize(s);
	return (found);
}

/*
 * Keep, for one notebook, the newest `keep` records and every record
 * finished at or after `since` (microseconds); delete the rest.
 */
int
store_exec_prune(struct store *st, const char *nb_id, int keep,
    int64_t since)
{
	sqlite3_stmt	*s;
	int		 r;

	if (sqlite3_prepare_v2(st->db, "DELETE FROM executions WHERE "
	    "notebook_id = ?1 AND finished_at < ?2 AND execution_id NOT IN "
	    "(SELECT execution_id FROM executions WHERE notebook_id = ?1 "
	    "ORDER BY finished_at DESC LIMIT ?3)", -1, &s, NULL) != SQLITE_OK)
		return (-1);
	sqlite3_bind_text(s, 1, nb_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, since);
	sqlite3_bind_int(s, 3, keep);
	r = sqlite3_step(s);
	sqlite3_finalize(s);
	return (r == SQLITE_DONE ? sqlite3_changes(st->db) : -1);
}
