/* SPDX-License-Identifier: ISC */
/*
 * fuzz-worker.h: the worker in a box for the fuzz targets that drive
 * mcp-worker code (fuzz-rpc, fuzz-args, fuzz-reply).  The real worker
 * code runs on a private event loop; its JSON-RPC output goes to a sink,
 * and its daemon connections reach a daemon end in the harness that
 * answers every request, from canned replies or from the fuzzer's input.
 */

#ifndef FUZZ_WORKER_H
#define FUZZ_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "mcp-worker/worker.h"

/* The notebook_id the daemon end gives every joined room. */
#define FUZZ_WORKER_NOTEBOOK	"fuzz-nb"

/*
 * Answer one request (type, id, raw body) on the daemon end: write the
 * reply frames with fuzz_worker_reply; return 0 to fall back to the
 * canned reply.
 */
typedef int (*fuzz_worker_answer_cb)(int, const struct proto_header *,
    const msgpack_object *);

void	fuzz_worker_init(fuzz_worker_answer_cb);
void	fuzz_worker_input(const char *, size_t);
void	fuzz_worker_call(const char *, const char *, size_t);
void	fuzz_worker_run(void);
void	fuzz_worker_reset(void);
void	fuzz_worker_reply(int, uint16_t, uint32_t, const void *, size_t);
void	fuzz_worker_canned(int, const struct proto_header *);

#endif
