/* SPDX-License-Identifier: ISC */
/*
 * runtimed-warn.c: what the user must hear about, kept for as long as the
 * daemon runs: a damaged store found at start, a store that cannot be
 * written now.  `runtimed status` and every list_notebooks show them.
 */

#include <stdarg.h>
#include <stdlib.h>

#include "runtimed.h"

static char	**runtimed_warnings;
static size_t	  runtimed_nwarnings;

/*
 * Something the user must hear about (state lost or at risk): logged
 * loudly and kept, for `runtimed status` and every MCP client's
 * list_notebooks, until the daemon stops.
 */
void
runtimed_warn(const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	log_warnx("WARNING: %s", msg);
	runtimed_warnings = xreallocarray(runtimed_warnings,
	    runtimed_nwarnings + 1, sizeof *runtimed_warnings);
	runtimed_warnings[runtimed_nwarnings++] = msg;
}

/* warnings: [string], the standing ones plus a failing store. */
void
runtimed_warn_pack(msgpack_packer *pk, const void *unused)
{
	const char	*werr = NULL;
	size_t		 i;

	if (runtimed_store != NULL)
		werr = store_write_error(runtimed_store);
	msgpack_pack_array(pk, runtimed_nwarnings + (werr != NULL));
	for (i = 0; i < runtimed_nwarnings; i++)
		proto_pack_cstr(pk, runtimed_warnings[i]);
	if (werr != NULL) {
		char	*msg;

		xasprintf(&msg, "the state database cannot be written (%s): "
		    "edits are refused until it can; free disk space in %s",
		    werr, runtimed_state_dir);
		proto_pack_cstr(pk, msg);
		free(msg);
	}
}

/* Forget every standing warning (the fuzzers' next input: a new daemon). */
void
runtimed_warn_clear(void)
{
	size_t	i;

	for (i = 0; i < runtimed_nwarnings; i++)
		free(runtimed_warnings[i]);
	free(runtimed_warnings);
	runtimed_warnings = NULL;
	runtimed_nwarnings = 0;
}
