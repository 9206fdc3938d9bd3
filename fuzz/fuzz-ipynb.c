/* SPDX-License-Identifier: ISC */
/*
 * fuzz-ipynb.c: libFuzzer target for the .ipynb loader, which reads any
 * file a user points us at, and for the writer on whatever it accepted.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed/runtimed.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct room_nb	*nb;
	char		*cause = NULL, *out, *again;
	size_t		 len, len2;

	nb = room_ipynb_parse((const char *)data, size, &cause);
	if (nb == NULL) {
		free(cause);
		return (0);
	}
	/*
	 * What we write is UTF-8 and a fixed point: loading it again and
	 * saving gives the same bytes (kept unknown keys included).
	 */
	out = room_ipynb_write_dump(nb, &len);
	room_nb_free(nb);
	if (!utf8_valid(out, len, NULL))
		abort();
	if ((nb = room_ipynb_parse(out, len, &cause)) == NULL)
		abort();
	again = room_ipynb_write_dump(nb, &len2);
	if (len2 != len || memcmp(out, again, len) != 0)
		abort();
	free(again);
	free(out);
	room_nb_free(nb);
	return (0);
}
