/* SPDX-License-Identifier: ISC */
/*
 * fuzz-remote.c: libFuzzer target for what a Jupyter Server sends the
 * remote agent and the daemon: the input is read as (1) the server's
 * answer to the WebSocket upgrade, (2) a stream of WebSocket frames,
 * each complete data frame decoded as a kernel message in both
 * encodings (v1 binary, and JSON text or binary with buffers), and (3)
 * a REST reply body (jserver_reply_json, jserver_reply_message).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime-agent/agent-remote.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A small cap too, so the "over the cap" path is reached. */
#define FUZZ_REMOTE_SMALL	4096

static void
fuzz_remote_decode(const u_char *p, size_t len, int binary)
{
	struct agent_wire_msg	*m;
	char			*channel, *cause;
	int			 v1;

	for (v1 = 0; v1 < 2; v1++) {
		m = agent_remote_ws_decode(v1, binary, p, len, &channel,
		    &cause);
		if (m == NULL) {
			free(cause);
			continue;
		}
		(void)agent_wire_msg_type(m);
		(void)agent_wire_msg_content(m);
		agent_wire_msg_free(m);
		free(channel);
	}
}

static void
fuzz_remote_frames(const u_char *p, size_t len, size_t max)
{
	struct agent_remote_ws_frame	 f;
	char				*cause;
	int				 rc;

	while (len > 0) {
		rc = agent_remote_ws_frame_parse(p, len, max, &f, &cause);
		if (rc == -1) {
			free(cause);
			return;
		}
		if (rc == 0)
			return;
		if (f.opcode == AGENT_REMOTE_WS_TEXT ||
		    f.opcode == AGENT_REMOTE_WS_BINARY ||
		    f.opcode == AGENT_REMOTE_WS_CONT)
			fuzz_remote_decode(f.payload, f.len,
			    f.opcode != AGENT_REMOTE_WS_TEXT);
		p += f.size;
		len -= f.size;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jserver_reply	 r;
	struct json_object	*o;
	char			*proto, *cause, *msg;
	size_t			 hlen;
	int			 rc;

	rc = agent_remote_ws_handshake_parse((const char *)data, size,
	    "dGhlIHNhbXBsZSBub25jZQ==", &hlen, &proto, &cause);
	if (rc == -1)
		free(cause);
	else if (rc == 1) {
		free(proto);
		fuzz_remote_frames(data + hlen, size - hlen,
		    AGENT_REMOTE_WS_MAX);
	}
	fuzz_remote_frames(data, size, AGENT_REMOTE_WS_MAX);
	fuzz_remote_frames(data, size, FUZZ_REMOTE_SMALL);
	fuzz_remote_decode(data, size, 0);
	fuzz_remote_decode(data, size, 1);

	memset(&r, 0, sizeof r);
	r.status = size > 0 && data[0] == '{' ? 200 : 500;
	r.body = malloc(size + 1);
	memcpy(r.body, data, size);
	r.body[size] = '\0';
	r.len = size;
	if ((o = jserver_reply_json(&r, &cause)) == NULL)
		free(cause);
	json_object_put(o);
	msg = jserver_reply_message(&r);
	free(msg);
	free(r.body);
	return (0);
}
