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
static void	fuzz_jupyter_stream(const uint8_t *, size_t);

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
	fuzz_jupyter_stream(data, size);
	return (0);
}

/*
 * The input as a stream message's content, read the way a huge one is
 * (agent-wire-stream.c) and by json-c: where both read it (UTF-8,
 * without \u escapes, whose lone surrogates the two mend differently)
 * and nothing was cut, the text must be the same.
 */
static void
fuzz_jupyter_stream(const uint8_t *data, size_t size)
{
	struct json_tokener	*tok;
	struct json_object	*c, *o = NULL, *out, *v, *t;

	if ((c = agent_wire_stream_content((const char *)data, size)) == NULL)
		return;
	if ((out = agent_wire_stream_output(c)) == NULL ||
	    !json_object_object_get_ex(c, "name", &v))
		abort();
	if (size < 65536 && memchr(data, 0, size) == NULL &&
	    memmem(data, size, "\\u", 2) == NULL &&
	    utf8_valid((const char *)data, size, NULL) &&
	    (tok = json_tokener_new()) != NULL) {
		o = json_tokener_parse_ex(tok, (const char *)data, (int)size);
		if (o != NULL && json_tokener_get_parse_end(tok) == size &&
		    !streamcap_truncated(out) &&
		    json_object_object_get_ex(o, "text", &t) &&
		    json_object_is_type(t, json_type_string) &&
		    json_object_object_get_ex(out, "text", &v) &&
		    (json_object_get_string_len(t) !=
		    json_object_get_string_len(v) ||
		    memcmp(json_object_get_string(t), json_object_get_string(v),
		    (size_t)json_object_get_string_len(v)) != 0))
			abort();
		json_tokener_free(tok);
	}
	json_object_put(o);
	json_object_put(c);
}
