/*
 * fuzz-ipynb.c: libFuzzer target for the .ipynb loader, which reads any
 * file a user points us at, and for the writer on whatever it accepted.
 */

#include <stdint.h>
#include <stdlib.h>

#include "runtimed/runtimed.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct room_nb	*nb;
	char		*cause = NULL, *out;
	size_t		 len;

	nb = room_ipynb_parse((const char *)data, size, &cause);
	if (nb == NULL) {
		free(cause);
		return (0);
	}
	if ((out = room_ipynb_dump(nb, &len)) != NULL)
		free(out);
	room_nb_free(nb);
	return (0);
}
