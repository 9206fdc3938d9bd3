/* SPDX-License-Identifier: ISC */
/*
 * fuzz-reply.c: libFuzzer target for the worker's decoding of what the
 * daemon sends: replies to its requests and events.  The input is one
 * line "tool {arguments}" and then frames (12-byte header, body).  A
 * notebook is attached first with canned replies; then the tool is
 * called, and each request it makes is answered by the next frame of the
 * input (its id replaced by the request's), after every frame with id 0
 * before it, sent as an event.  When the frames run out the daemon end
 * answers as fuzz-worker.c does.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz-worker.h"

static const uint8_t	*fuzz_reply_data;
static size_t		 fuzz_reply_left;
static int		 fuzz_reply_on;

static int	fuzz_reply_next(int, uint32_t, int *);
static int	fuzz_reply_answer(int, const struct proto_header *,
		    const msgpack_object *);

/* The next frame of the input, written as it is but for the id. */
static int
fuzz_reply_next(int fd, uint32_t id, int *event)
{
	struct proto_header	hdr;
	uint8_t			h[PROTO_HEADER_SIZE];
	size_t			blen;

	if (fuzz_reply_left < PROTO_HEADER_SIZE)
		return (0);
	memcpy(h, fuzz_reply_data, sizeof h);
	proto_header_unpack(h, &hdr);
	*event = hdr.id == 0;
	if (!*event) {
		hdr.id = id;
		proto_header_pack(&hdr, h);
	}
	blen = fuzz_reply_left - sizeof h;
	if (blen > hdr.length)
		blen = hdr.length;
	if (write(fd, h, sizeof h) != (ssize_t)sizeof h ||
	    (blen > 0 && write(fd, fuzz_reply_data + sizeof h, blen) !=
	    (ssize_t)blen))
		return (0);
	fuzz_reply_data += sizeof h + blen;
	fuzz_reply_left -= sizeof h + blen;
	return (1);
}

static int
fuzz_reply_answer(int fd, const struct proto_header *hdr,
    const msgpack_object *body)
{
	int	event;

	if (!fuzz_reply_on)
		return (0);
	do {
		if (!fuzz_reply_next(fd, hdr->id, &event))
			return (0);
	} while (event);
	return (1);
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	const uint8_t	*nl, *sp;
	char		*tool;
	size_t		 len;

	if (!ready) {
		fuzz_worker_init(fuzz_reply_answer);
		ready = 1;
	}
	if ((nl = memchr(data, '\n', size)) == NULL)
		return (0);
	len = (size_t)(nl - data);
	if ((sp = memchr(data, ' ', len)) == NULL)
		return (0);
	tool = xstrndup((const char *)data, (size_t)(sp - data));
	if (strchr(tool, '"') == NULL && strchr(tool, '\\') == NULL) {
		fuzz_worker_call("create_notebook", "{}", 2);
		fuzz_reply_data = nl + 1;
		fuzz_reply_left = size - len - 1;
		fuzz_reply_on = 1;
		fuzz_worker_call(tool, (const char *)sp + 1,
		    (size_t)(nl - sp - 1));
	}
	fuzz_reply_on = 0;
	free(tool);
	fuzz_worker_reset();
	return (0);
}
