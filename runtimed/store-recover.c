/* SPDX-License-Identifier: ISC */
/*
 * store-recover.c: copy every row that can still be read from a damaged
 * state database into a fresh one, through SQL only (Debian 12's SQLite
 * 3.40 ships neither the recovery API nor sqlite_dbpage).
 *
 * A table's rowids come from three sources: a scan in rowid order that,
 * when it hits an unreadable page, seeks past it (probing ever further,
 * then bisecting back to the first readable rowid); a scan from the end
 * backwards; and every index, read without the table.  Each rowid is then
 * read on its own, so a row lost to a damaged overflow page costs only
 * that row, and what an index still knows about a lost row (its notebook
 * id) says what was lost.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common.h"
#include "store.h"

/* The column a store an older daemon made lacks (store.c). */
#define STORE_RECOVER_SUM	", checksum"

/* The tables, their columns and the index that names a lost row. */
static const struct store_recover_table {
	const char	*name;
	const char	*what;		/* for the report */
	const char	*columns;
	int		 ncolumns;
	const char	*key;		/* indexed column naming the row */
	const char	*indexes[2][2];	/* {index, its first column} */
} store_recover_tables[] = {
	{ "meta", NULL, "key, value", 2, NULL,
	    { { "sqlite_autoindex_meta_1", "key" } } },
	{ "rooms", "notebooks",
	    "notebook_id, path, kernel, dirty, seq, snapshot, updated_at, "
	    "checksum", 8,
	    "notebook_id", { { "sqlite_autoindex_rooms_1", "notebook_id" },
	    { "rooms_path", "path" } } },
	{ "journal", "journal entries", "notebook_id, seq, op, checksum", 4,
	    "notebook_id", { { "sqlite_autoindex_journal_1",
	    "notebook_id" } } },
	{ "executions", "execution records",
	    "execution_id, notebook_id, finished_at, record, checksum", 5, NULL,
	    { { "sqlite_autoindex_executions_1", "execution_id" },
	    { "executions_nb", "notebook_id" } } },
	{ "files", "file ids",
	    "path, notebook_id, dev, ino, size, mtime_ns, seen_at", 7,
	    "notebook_id", { { "sqlite_autoindex_files_2", "notebook_id" },
	    { "sqlite_autoindex_files_1", "path" } } },
};

/* A rowid found, with the key an index gave it (or NULL). */
struct store_recover_row {
	int64_t	 id;
	char	*key;
	int	 lost;
};

struct store_recover_ids {
	struct store_recover_row	*rows;
	size_t				 n;
	size_t				 cap;
};

static void	store_recover_add(struct store_recover_ids *, int64_t,
		    const char *);
static int	store_recover_cmp_id(const void *, const void *);
static int	store_recover_cmp_key(const void *, const void *);
static int	store_recover_scan(sqlite3 *, const char *, int64_t, int,
		    struct store_recover_ids *, int64_t *);
static int	store_recover_seek(sqlite3 *, const char *, int64_t);
static int	store_recover_skip(sqlite3 *, const char *, int64_t, int64_t *);
static void	store_recover_index(sqlite3 *,
		    const struct store_recover_table *, const char *const *,
		    struct store_recover_ids *);
static void	store_recover_find(sqlite3 *,
		    const struct store_recover_table *,
		    struct store_recover_ids *);
static void	store_recover_free_ids(struct store_recover_ids *);
static int	store_recover_row(sqlite3_stmt *, sqlite3_stmt *, int, int64_t);
static char	*store_recover_path(sqlite3 *, const char *);
static void	store_recover_note_ids(struct store_recover_ids *, char ***,
		    size_t *);
static void	store_recover_note_lost(sqlite3 *, char **,
		    const struct store_recover_table *,
		    struct store_recover_ids *);

static void
store_recover_add(struct store_recover_ids *s, int64_t id, const char *key)
{
	if (s->n == s->cap) {
		s->cap = s->cap < 64 ? 64 : s->cap * 2;
		s->rows = xreallocarray(s->rows, s->cap, sizeof *s->rows);
	}
	s->rows[s->n].id = id;
	s->rows[s->n].key = key != NULL ? xstrdup(key) : NULL;
	s->rows[s->n].lost = 0;
	s->n++;
}

/* By rowid, a row with a key first. */
static int
store_recover_cmp_id(const void *a, const void *b)
{
	const struct store_recover_row	*x = a, *y = b;

	if (x->id != y->id)
		return (x->id < y->id ? -1 : 1);
	return ((x->key == NULL) - (y->key == NULL));
}

/* Lost rows first, grouped by key. */
static int
store_recover_cmp_key(const void *a, const void *b)
{
	const struct store_recover_row	*x = a, *y = b;

	if (x->lost != y->lost)
		return (y->lost - x->lost);
	if (x->key == NULL || y->key == NULL)
		return ((x->key == NULL) - (y->key == NULL));
	return (strcmp(x->key, y->key));
}

/* Rowids after `after` in order until the end (0) or an error (-1). */
static int
store_recover_scan(sqlite3 *db, const char *table, int64_t after, int desc,
    struct store_recover_ids *s, int64_t *last)
{
	sqlite3_stmt	*st;
	char		*sql;
	int		 rc;

	xasprintf(&sql, desc ? "SELECT rowid FROM \"%s\" ORDER BY rowid DESC" :
	    "SELECT rowid FROM \"%s\" WHERE rowid > ? ORDER BY rowid", table);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return (-1);
	if (!desc)
		sqlite3_bind_int64(st, 1, after);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*last = sqlite3_column_int64(st, 0);
		store_recover_add(s, *last, NULL);
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/* Can the table be entered at rowids after x? 1 yes, 0 end, -1 no. */
static int
store_recover_seek(sqlite3 *db, const char *table, int64_t x)
{
	sqlite3_stmt	*st;
	char		*sql;
	int		 rc;

	xasprintf(&sql, "SELECT rowid FROM \"%s\" WHERE rowid > ? "
	    "ORDER BY rowid LIMIT 1", table);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return (-1);
	sqlite3_bind_int64(st, 1, x);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return (1);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/* The first rowid bound past an unreadable stretch after `last`. */
static int
store_recover_skip(sqlite3 *db, const char *table, int64_t last,
    int64_t *next)
{
	int64_t	step = 1, lo, hi, mid;
	int	rc;

	for (;;) {
		if (step > INT64_MAX / 2 || last > INT64_MAX - step)
			return (-1);
		if ((rc = store_recover_seek(db, table, last + step)) >= 0)
			break;
		step *= 2;
	}
	/* Bisect between the last failing and the first working probe. */
	lo = last + step / 2;
	hi = last + step;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (store_recover_seek(db, table, mid) >= 0)
			hi = mid;
		else
			lo = mid;
	}
	*next = hi;
	return (rc);
}

/* Rowids (with keys) an index still holds, from both ends. */
static void
store_recover_index(sqlite3 *db, const struct store_recover_table *t,
    const char *const *index, struct store_recover_ids *s)
{
	sqlite3_stmt	*st;
	char		*sql;
	int		 desc, rc, named;

	/* Only the index is read: rowid and its first column. */
	named = t->key != NULL && strcmp(t->key, index[1]) == 0;
	for (desc = 0; desc < 2; desc++) {
		xasprintf(&sql, "SELECT rowid, %s FROM \"%s\" INDEXED BY "
		    "\"%s\" ORDER BY %s%s", index[1], t->name, index[0],
		    index[1], desc ? " DESC" : "");
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		free(sql);
		if (rc != SQLITE_OK)
			return;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			store_recover_add(s, sqlite3_column_int64(st, 0),
			    named ? (const char *)sqlite3_column_text(st, 1) :
			    NULL);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE)
			return;		/* read whole: no need going back */
	}
}

/* Every rowid of a table that anything still knows, sorted, unique. */
static void
store_recover_find(sqlite3 *db, const struct store_recover_table *t,
    struct store_recover_ids *s)
{
	int64_t	last = 0, next;
	size_t	i, k;

	while (store_recover_scan(db, t->name, last, 0, s, &last) != 0) {
		/* Rows up to `next` sit where entering failed. */
		if (store_recover_skip(db, t->name, last, &next) <= 0)
			break;
		last = next;
	}
	store_recover_scan(db, t->name, 0, 1, s, &last);
	for (i = 0; i < 2 && t->indexes[i][0] != NULL; i++)
		store_recover_index(db, t, t->indexes[i], s);

	if (s->n == 0)
		return;
	/* Sort by rowid, keeping one row each, with a key if any had it. */
	qsort(s->rows, s->n, sizeof *s->rows, store_recover_cmp_id);
	for (i = 0, k = 0; i < s->n; i++) {
		if (k > 0 && s->rows[k - 1].id == s->rows[i].id) {
			free(s->rows[i].key);
			continue;
		}
		s->rows[k++] = s->rows[i];
	}
	s->n = k;
}

static void
store_recover_free_ids(struct store_recover_ids *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		free(s->rows[i].key);
	free(s->rows);
	memset(s, 0, sizeof *s);
}

/* Copy one row; 0 copied, -1 unreadable. */
static int
store_recover_row(sqlite3_stmt *get, sqlite3_stmt *put, int ncolumns,
    int64_t id)
{
	int	i, rc;

	sqlite3_reset(get);
	sqlite3_bind_int64(get, 1, id);
	if (sqlite3_step(get) != SQLITE_ROW)
		return (-1);
	sqlite3_reset(put);
	for (i = 0; i < ncolumns; i++) {
		if (sqlite3_bind_value(put, i + 1,
		    sqlite3_column_value(get, i)) != SQLITE_OK)
			return (-1);
	}
	rc = sqlite3_step(put);
	sqlite3_reset(put);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/*
 * The file a notebook id stands for, from whatever row of the damaged
 * store still says (its room, else the files table): " (path)" or ""
 * (caller frees), so a person reads which notebook, not only an id.
 */
static char *
store_recover_path(sqlite3 *from, const char *id)
{
	sqlite3_stmt	*st;
	char		*out = NULL;

	if (sqlite3_prepare_v2(from, "SELECT path FROM rooms WHERE "
	    "notebook_id = ?1 AND path IS NOT NULL UNION ALL SELECT path "
	    "FROM files WHERE notebook_id = ?1 LIMIT 1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0) != NULL)
			xasprintf(&out, " (%s)", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (out == NULL) {
		/* Its room's row is what is damaged: the path index. */
		if (sqlite3_prepare_v2(from, "SELECT r.path FROM rooms AS r "
		    "INDEXED BY rooms_path, rooms AS k INDEXED BY "
		    "sqlite_autoindex_rooms_1 WHERE k.notebook_id = ?1 AND "
		    "r.rowid = k.rowid AND r.path IS NOT NULL", -1, &st,
		    NULL) == SQLITE_OK) {
			sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW &&
			    sqlite3_column_text(st, 0) != NULL)
				xasprintf(&out, " (%s)",
				    sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
		}
	}
	return (out != NULL ? out : xstrdup(""));
}

/* Lost rows of a table, counted by key ("notebook 1234 (/a.ipynb)"). */
static void
store_recover_note_lost(sqlite3 *from, char **lost,
    const struct store_recover_table *t, struct store_recover_ids *s)
{
	size_t	i, j;
	char	*old, *path;

	if (s->n == 0)
		return;
	qsort(s->rows, s->n, sizeof *s->rows, store_recover_cmp_key);
	for (i = 0; i < s->n && s->rows[i].lost; i = j) {
		for (j = i + 1; j < s->n && s->rows[j].lost &&
		    (s->rows[i].key == NULL) == (s->rows[j].key == NULL) &&
		    (s->rows[i].key == NULL ||
		    strcmp(s->rows[i].key, s->rows[j].key) == 0); j++)
			;
		old = *lost;
		path = s->rows[i].key != NULL ?
		    store_recover_path(from, s->rows[i].key) : NULL;
		if (s->rows[i].key == NULL)
			xasprintf(lost, "%s%s%zu %s of unknown notebooks",
			    old != NULL ? old : "", old != NULL ? "; " : "",
			    j - i, t->what);
		else if (strcmp(t->name, "rooms") == 0)
			xasprintf(lost, "%s%snotebook %s%s", old != NULL ?
			    old : "", old != NULL ? "; " : "", s->rows[i].key,
			    path);
		else if (strcmp(t->name, "files") == 0)
			xasprintf(lost, "%s%sthe file of notebook %s%s (it "
			    "gets a new id)", old != NULL ? old : "",
			    old != NULL ? "; " : "", s->rows[i].key, path);
		else
			xasprintf(lost, "%s%s%zu %s of notebook %s%s",
			    old != NULL ? old : "", old != NULL ? "; " : "",
			    j - i, t->what, s->rows[i].key, path);
		free(path);
		free(old);
	}
}

/* Note the notebooks whose journal lost entries (ids, unique). */
static void
store_recover_note_ids(struct store_recover_ids *s, char ***ids,
    size_t *nids)
{
	size_t	i;

	for (i = 0; i < s->n; i++) {
		if (!s->rows[i].lost || s->rows[i].key == NULL ||
		    (*nids > 0 && strcmp((*ids)[*nids - 1],
		    s->rows[i].key) == 0))
			continue;
		*ids = xreallocarray(*ids, *nids + 1, sizeof **ids);
		(*ids)[(*nids)++] = xstrdup(s->rows[i].key);
	}
}

/*
 * Copy what can be read from `from` into `to` (same schema, empty), in
 * one transaction.  *report says what was recovered and what was lost
 * (caller frees); *ids (*nids of them) the notebooks whose journal lost
 * entries, which cannot come back as they were.  Returns -1 only if
 * `to` cannot be written.
 */
int
store_recover_copy(sqlite3 *from, sqlite3 *to, char **report, char ***ids,
    size_t *nids)
{
	const struct store_recover_table	*t;
	struct store_recover_ids		 s;
	sqlite3_stmt				*get, *put;
	char					*sql, *counts = NULL, *lost = NULL;
	char					*old, *qs, *cols, *at;
	int					 ncols;
	size_t					 i, j, got;
	int					 rc = 0;

	if (sqlite3_exec(to, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return (-1);
	for (i = 0; i < sizeof store_recover_tables /
	    sizeof store_recover_tables[0]; i++) {
		t = &store_recover_tables[i];
		memset(&s, 0, sizeof s);
		store_recover_find(from, t, &s);
		cols = xstrdup(t->columns);
		ncols = t->ncolumns;
		xasprintf(&sql, "SELECT %s FROM \"%s\" WHERE rowid = ?",
		    cols, t->name);
		rc = sqlite3_prepare_v2(from, sql, -1, &get, NULL);
		free(sql);
		if (rc != SQLITE_OK &&
		    (at = strstr(cols, STORE_RECOVER_SUM)) != NULL) {
			/* An older daemon's store: no checksums to copy. */
			*at = '\0';
			ncols--;
			xasprintf(&sql, "SELECT %s FROM \"%s\" WHERE rowid = ?",
			    cols, t->name);
			rc = sqlite3_prepare_v2(from, sql, -1, &get, NULL);
			free(sql);
		}
		if (rc != SQLITE_OK)
			get = NULL;
		qs = xcalloc(1, (size_t)ncols * 3 + 1);
		for (j = 0; j < (size_t)ncols; j++)
			strcat(qs, j > 0 ? ", ?" : "?");
		xasprintf(&sql, "INSERT OR IGNORE INTO \"%s\" (%s) VALUES (%s)",
		    t->name, cols, qs);
		free(cols);
		free(qs);
		if (sqlite3_prepare_v2(to, sql, -1, &put, NULL) != SQLITE_OK) {
			free(sql);
			sqlite3_finalize(get);
			store_recover_free_ids(&s);
			rc = -1;
			goto out;
		}
		free(sql);
		for (j = 0, got = 0; j < s.n; j++) {
			if (get != NULL && store_recover_row(get, put,
			    ncols, s.rows[j].id) == 0)
				got++;
			else
				s.rows[j].lost = 1;
		}
		sqlite3_finalize(get);
		sqlite3_finalize(put);
		if (t->what != NULL) {
			old = counts;
			xasprintf(&counts, "%s%s%zu of %zu %s", old != NULL ?
			    old : "", old != NULL ? ", " : "", got, s.n,
			    t->what);
			free(old);
		}
		if (t->key != NULL)
			store_recover_note_lost(from, &lost, t, &s);
		/* note_lost sorted the lost rows first, by key. */
		if (strcmp(t->name, "journal") == 0)
			store_recover_note_ids(&s, ids, nids);
		store_recover_free_ids(&s);
	}
	if (sqlite3_exec(to, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = -1;
		goto out;
	}
	xasprintf(report, "recovered %s%s%s", counts, lost != NULL ?
	    "; lost: " : "; nothing known lost", lost != NULL ? lost : "");
	rc = 0;
out:
	if (rc != 0)
		sqlite3_exec(to, "ROLLBACK", NULL, NULL, NULL);
	free(counts);
	free(lost);
	return (rc);
}
