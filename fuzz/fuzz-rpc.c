/* SPDX-License-Identifier: ISC */
/*
 * fuzz-rpc.c: libFuzzer target for the worker's JSON-RPC input: each
 * line of the input is one message, as worker-stdio.c hands lines (and
 * worker-proxy.c MCP frame bodies) to worker_rpc_input.  Requests run for
 * real: tools/call reaches the tool handlers, whose daemon requests the
 * daemon end of fuzz-worker.c answers.
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
	size_t		 len;

	if (!ready) {
		fuzz_worker_init(NULL);
		ready = 1;
	}
	while (size > 0) {
		nl = memchr(data, '\n', size);
		len = nl != NULL ? (size_t)(nl - data) : size;
		fuzz_worker_input((const char *)data, len);
		if (nl == NULL)
			break;
		data += len + 1;
		size -= len + 1;
	}
	fuzz_worker_reset();
	return (0);
}
