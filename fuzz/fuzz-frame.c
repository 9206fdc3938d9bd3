/* SPDX-License-Identifier: ISC */
/*
 * fuzz-frame.c: libFuzzer target for the frame decoder and the body
 * readers every peer runs on untrusted input: every codec in proto's
 * table of message facts reads every body (its own type's among them),
 * and the edit codec each item of a body's edits and the body itself.
 * Each body is also packed through json-c and by mpjson_repack, which
 * must agree byte for byte.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * mpjson_repack must write what json-c does, byte for byte, and a
 * value mpjson_plain passes must be those bytes as it came.
 */
static void
fuzz_frame_repack(const msgpack_object *o, struct json_object *j,
    unsigned int depth)
{
	struct mpbuf	a, b, c;

	mpbuf_init(&a);
	mpbuf_init(&b);
	mpbuf_init(&c);
	mpjson_pack_depth(&a.pk, j, depth);
	mpjson_repack(&b.pk, o, depth);
	if (a.sb.size != b.sb.size ||
	    memcmp(a.sb.data, b.sb.data, a.sb.size) != 0)
		abort();
	if (mpjson_plain(o, depth)) {
		msgpack_pack_object(&c.pk, *o);
		if (a.sb.size != c.sb.size ||
		    memcmp(a.sb.data, c.sb.data, a.sb.size) != 0)
			abort();
	}
	mpbuf_free(&a);
	mpbuf_free(&b);
	mpbuf_free(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_header		 hdr;
	struct proto_hello		 hello;
	const struct proto_msg_info	*info;
	const msgpack_object		*edits;
	struct proto_edit		 edit;
	union {
		max_align_t	align;
		char		bytes[PROTO_BODY_MAX];
	}				 m;
	struct json_object		*j;
	msgpack_unpacked		 u;
	char				 err[256], *s;
	size_t				 used, len, i;
	uint32_t			 k;
	int64_t				 v;
	int				 b;

	/* Decode frames back to back, as a peer reads a stream. */
	while (proto_frame_decode(data, size, &hdr, &u, &used, err,
	    sizeof err) == 1) {
		if (proto_hello_unpack(&u.data, &hello, err, sizeof err) == 0)
			proto_hello_check(&hello, err, sizeof err);
		for (i = 0; (info = proto_msg_row(i)) != NULL; i++) {
			if (info->unpack != NULL)
				info->unpack(&u.data, &m, err, sizeof err);
		}
		/* ROOM_EDIT's edits are a document its codec leaves whole. */
		proto_edit_unpack(&u.data, "edit 0", &edit, err, sizeof err);
		if ((edits = proto_get_array(&u.data, "edits")) != NULL) {
			(void)proto_edits_size(edits);
			for (k = 0; k < edits->via.array.size; k++)
				proto_edit_unpack(&edits->via.array.ptr[k],
				    "edit 0", &edit, err, sizeof err);
		}
		proto_get_str(&u.data, "code", &len);
		proto_get_int(&u.data, "id", &v);
		proto_get_bool(&u.data, "force", &b);
		proto_get_array(&u.data, "cells");
		if ((s = proto_dup_str(&u.data, "path")) != NULL)
			free(s);
		j = mpjson_unpack(&u.data);
		fuzz_frame_repack(&u.data, j, 0);
		fuzz_frame_repack(&u.data, j, 1);
		fuzz_frame_repack(&u.data, j, 23);
		json_object_put(j);
		msgpack_unpacked_destroy(&u);
		data += used;
		size -= used;
	}
	return (0);
}
