/* SPDX-License-Identifier: ISC */
/*
 * fuzz-jupyter.c: libFuzzer target for the Jupyter wire message parser the
 * agent runs on every frame a kernel sends.  The input is split into
 * multipart frames at each 0xff byte; the key is fixed, so most inputs
 * fail the signature check and some (the corpus) pass it.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime-agent/agent.h"

#define FUZZ_MAX_FRAMES	16

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_wire_frame	 frames[FUZZ_MAX_FRAMES];
	struct agent_wire_msg	*m;
	size_t			 n = 0, start = 0, i;
	char			*cause = NULL;

	for (i = 0; i <= size && n < FUZZ_MAX_FRAMES; i++) {
		if (i == size || data[i] == 0xff) {
			frames[n].data = data + start;
			frames[n].len = i - start;
			n++;
			start = i + 1;
		}
	}
	m = agent_wire_parse("fuzz-key", frames, n, &cause);
	if (m != NULL) {
		agent_wire_msg_type(m);
		agent_wire_msg_id(m);
		agent_wire_msg_parent_id(m);
		agent_wire_msg_header(m);
		agent_wire_msg_content(m);
		agent_wire_msg_nbuffers(m);
		agent_wire_msg_free(m);
	}
	free(cause);
	return (0);
}
