/* SPDX-License-Identifier: ISC */
/*
 * fuzz-args.c: libFuzzer target for tool argument validation.  The input
 * is a tool name, a newline and the JSON text of its arguments.  A
 * notebook is attached first (create_notebook, answered by the daemon
 * end of fuzz-worker.c as notebook_id "fuzz-nb"), so arguments naming it
 * get past the target check into the tool's own checks and the request it
 * builds; the daemon end answers those requests with a typed error.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz-worker.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	const uint8_t	*nl;
	char		*tool;
	size_t		 len;

	if (!ready) {
		fuzz_worker_init(NULL);
		ready = 1;
	}
	if ((nl = memchr(data, '\n', size)) == NULL)
		return (0);
	len = (size_t)(nl - data);
	tool = xstrndup((const char *)data, len);
	/* Not a name worth quoting into JSON: worker_tool_find says no. */
	if (strchr(tool, '"') == NULL && strchr(tool, '\\') == NULL) {
		fuzz_worker_call("create_notebook", "{}", 2);
		fuzz_worker_call(tool, (const char *)nl + 1, size - len - 1);
	}
	free(tool);
	fuzz_worker_reset();
	return (0);
}
