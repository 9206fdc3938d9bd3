/* SPDX-License-Identifier: ISC */
/*
 * worker-cursor.c: observation cursors.  A cursor names a point in one
 * room's change log under one daemon incarnation:
 *
 *	c1.<started_at>.<seq>.<check>
 *
 * check is a 64-bit hash of the session tag, the notebook id, the
 * incarnation and the seq, so a cursor typed by hand, cut short or
 * taken from another notebook or session is told apart (never issued:
 * invalid_argument) from one of an earlier daemon (resync_required).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static uint64_t	worker_cursor_hash(uint32_t, const char *, int64_t, int64_t);

static uint64_t
worker_cursor_hash(uint32_t tag, const char *notebook_id, int64_t inc,
    int64_t seq)
{
	uint64_t	 h = PROTO_FNV64_INIT;
	char		 buf[96];
	int		 n, pass;

	n = snprintf(buf, sizeof buf, "%08x|%lld|%lld|", tag, (long long)inc,
	    (long long)seq);
	/* Two passes so every input bit reaches every output bit. */
	for (pass = 0; pass < 2; pass++) {
		h = proto_fnv64(h, buf, (size_t)n);
		h = proto_fnv64(h, notebook_id, strlen(notebook_id));
		h ^= h >> 29;
	}
	return (h);
}

/* Caller frees. */
char *
worker_cursor_make(uint32_t tag, const char *notebook_id, int64_t inc,
    int64_t seq)
{
	char	*s;

	xasprintf(&s, "c1.%lld.%lld.%016" PRIx64, (long long)inc,
	    (long long)seq, worker_cursor_hash(tag, notebook_id, inc, seq));
	return (s);
}

/*
 * 0: issued here under incarnation inc, *seq set.  1: issued here under
 * another incarnation (resync).  -1: never issued for this notebook.
 */
int
worker_cursor_parse(uint32_t tag, const char *notebook_id, int64_t inc,
    const char *cursor, int64_t *seq)
{
	long long		 c_inc, c_seq;
	unsigned long long	 check;
	int			 n = 0;

	if (strlen(cursor) > 80 || strncmp(cursor, "c1.", 3) != 0)
		return (-1);
	if (sscanf(cursor, "c1.%lld.%lld.%16llx%n", &c_inc, &c_seq, &check,
	    &n) != 3 || cursor[n] != '\0' || c_seq < 0 || c_inc < 0 ||
	    strlen(strrchr(cursor, '.') + 1) != 16)
		return (-1);
	if ((uint64_t)check != worker_cursor_hash(tag, notebook_id, c_inc,
	    c_seq))
		return (-1);
	*seq = c_seq;
	return (c_inc == inc ? 0 : 1);
}
