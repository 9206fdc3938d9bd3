/* SPDX-License-Identifier: ISC */
/*
 * fuzz-wal.c: libFuzzer target for store_wal_check, which reads the
 * state database's write-ahead log before SQLite does, to name what
 * SQLite would drop (issue 36): the input is the log's bytes, written
 * beside a database file (the first 64 KiB of the input again, so some
 * frames' pages match it and count as checkpointed).  Aborts unless a
 * loss it reports has a commit, and every name it gives is an id or a
 * path ending in .ipynb.  Then store_wal_cut_check on the same log with
 * a writer's mark beside it (the input's last 32 bytes when its length
 * is odd, else a whole mark of the log's salts counting more frames than
 * it holds): a cut it reports keeps fewer frames than the mark counts.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "runtimed/store.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	*fuzz_wal_dir;

/* Leave nothing in /tmp. */
static void
fuzz_wal_cleanup(void)
{
	char	*path;

	xasprintf(&path, "%s/s.db-wal", fuzz_wal_dir);
	unlink(path);
	free(path);
	xasprintf(&path, "%s/s.db-walmark", fuzz_wal_dir);
	unlink(path);
	free(path);
	xasprintf(&path, "%s/s.db", fuzz_wal_dir);
	unlink(path);
	free(path);
	rmdir(fuzz_wal_dir);
}

/* Write len bytes to dir/name. */
static void
fuzz_wal_put(const char *name, const uint8_t *p, size_t len)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", fuzz_wal_dir, name);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	if (len > 0 && fwrite(p, 1, len, f) != len)
		abort();
	fclose(f);
	free(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_wal_loss	 l;
	unsigned char		 mark[STORE_WAL_MARK_LEN];
	uint64_t		 kept, marked;
	char			*db, tmpl[] = "/tmp/fuzz-wal.XXXXXX";
	size_t			 i;

	if (fuzz_wal_dir == NULL) {
		if (mkdtemp(tmpl) == NULL)
			abort();
		fuzz_wal_dir = xstrdup(tmpl);
		atexit(fuzz_wal_cleanup);
	}
	fuzz_wal_put("s.db-wal", data, size);
	fuzz_wal_put("s.db", data, size < 65536 ? size : 65536);
	xasprintf(&db, "%s/s.db", fuzz_wal_dir);
	if (store_wal_check(db, &l) == 1) {
		if (l.commits == 0 || l.frames < l.commits)
			abort();
		for (i = 0; i < l.nids; i++) {
			if (strlen(l.ids[i]) != 36)
				abort();
		}
		for (i = 0; i < l.npaths; i++) {
			if (*l.paths[i] != '/' || strlen(l.paths[i]) < 7 ||
			    strcmp(l.paths[i] + strlen(l.paths[i]) - 6,
			    ".ipynb") != 0)
				abort();
		}
		store_wal_loss_clear(&l);
	}
	/*
	 * The writer's mark beside it: the input's last 32 bytes as they
	 * are (a mark of garbage is read as none), or a whole mark naming
	 * the log's salts and more frames than it can hold, so the log's
	 * prefix is walked.
	 */
	if (size >= STORE_WAL_MARK_LEN && (size & 1))
		fuzz_wal_put("s.db-walmark", data + size - STORE_WAL_MARK_LEN,
		    STORE_WAL_MARK_LEN);
	else {
		store_wal_mark_pack(mark, size >= 24 ? (uint32_t)data[16] << 24 |
		    (uint32_t)data[17] << 16 | (uint32_t)data[18] << 8 |
		    data[19] : 0, size >= 24 ? (uint32_t)data[20] << 24 |
		    (uint32_t)data[21] << 16 | (uint32_t)data[22] << 8 |
		    data[23] : 0, (uint32_t)(size / 512 + 1));
		fuzz_wal_put("s.db-walmark", mark, sizeof mark);
	}
	if (store_wal_cut_check(db, &kept, &marked) == 1 && kept >= marked)
		abort();
	free(db);
	return (0);
}
