/* SPDX-License-Identifier: ISC */
/*
 * fuzz-pydefuse.c: libFuzzer target for the scan of a python cell's
 * source into the names it defines and reads (common/pydefuse.c,
 * decision 072): any bytes a client may put in a cell.  Every name
 * comes back sorted and distinct, non-empty, NUL-free and a slice of the
 * input, and the lookups find each of them.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_pydefuse_check(const struct pydefuse *du, const char **v, size_t n,
    const uint8_t *data, size_t size, int (*has)(const struct pydefuse *,
    const char *))
{
	size_t	i, len;

	for (i = 0; i < n; i++) {
		len = strlen(v[i]);
		if (len == 0 || len > size || memmem(data, size, v[i],
		    len) == NULL)
			abort();
		if (i > 0 && strcmp(v[i - 1], v[i]) >= 0)
			abort();
		if (!has(du, v[i]))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pydefuse	*du;

	if (size > 256 * 1024)
		return (0);
	du = pydefuse_scan((const char *)data, size);
	fuzz_pydefuse_check(du, du->defs, du->ndefs, data, size,
	    pydefuse_defines);
	fuzz_pydefuse_check(du, du->uses, du->nuses, data, size,
	    pydefuse_uses);
	if (du->flags & ~(PYDEFUSE_WILDCARD | PYDEFUSE_NOLINT))
		abort();
	(void)pydefuse_known("_");
	pydefuse_free(du);
	return (0);
}
