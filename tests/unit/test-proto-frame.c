/* SPDX-License-Identifier: ISC */
/*
 * test-proto-frame.c: the frame codec, including truncated, oversized and
 * malformed frames.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

static size_t	make_frame(uint8_t *, size_t, uint16_t, uint8_t, uint32_t);

/* Build one frame of type with a {k: "v"} body into buf; returns its size. */
static size_t
make_frame(uint8_t *buf, size_t size, uint16_t type, uint8_t version,
    uint32_t id)
{
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	struct proto_header	hdr;
	size_t			n;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 1);
	proto_pack_str(&pk, "k", "v");
	hdr.length = (uint32_t)sb.size;
	hdr.type = type;
	hdr.version = version;
	hdr.flags = 0;
	hdr.id = id;
	cr_assert(PROTO_HEADER_SIZE + sb.size <= size);
	proto_header_pack(&hdr, buf);
	memcpy(buf + PROTO_HEADER_SIZE, sb.data, sb.size);
	n = PROTO_HEADER_SIZE + sb.size;
	msgpack_sbuffer_destroy(&sb);
	return (n);
}

/* A header we send: our version, no flags, the given fields. */
Test(proto_frame, header_make)
{
	struct proto_header	h;
	uint8_t			buf[PROTO_HEADER_SIZE];

	memset(buf, 0xff, sizeof buf);
	proto_header_make(buf, PROTO_MSG_EXEC_RUN, 0xa0b0c0d0, 0x01020304);
	proto_header_unpack(buf, &h);
	cr_assert_eq(h.length, 0x01020304);
	cr_assert_eq(h.type, PROTO_MSG_EXEC_RUN);
	cr_assert_eq(h.version, PROTO_VERSION);
	cr_assert_eq(h.flags, 0);
	cr_assert_eq(h.id, 0xa0b0c0d0);
}

Test(proto_frame, header_round_trip)
{
	struct proto_header	a = { 0x01020304, 0x0506, 7, 0, 0xa0b0c0d0 };
	struct proto_header	b;
	uint8_t			buf[PROTO_HEADER_SIZE];

	proto_header_pack(&a, buf);
	cr_assert_eq(buf[0], 0x01);
	cr_assert_eq(buf[3], 0x04);
	cr_assert_eq(buf[4], 0x05);
	cr_assert_eq(buf[6], 7);
	cr_assert_eq(buf[8], 0xa0);
	proto_header_unpack(buf, &b);
	cr_assert_eq(b.length, a.length);
	cr_assert_eq(b.type, a.type);
	cr_assert_eq(b.version, a.version);
	cr_assert_eq(b.id, a.id);
}

Test(proto_frame, decode_whole_frame)
{
	uint8_t			buf[256];
	struct proto_header	hdr;
	msgpack_unpacked	u;
	size_t			n, used = 0;
	char			err[128];
	size_t			len;
	const char		*v;

	n = make_frame(buf, sizeof buf, PROTO_MSG_ROOM_GET, PROTO_VERSION,
	    42);
	cr_assert_eq(proto_frame_decode(buf, n, &hdr, &u, &used, err,
	    sizeof err), 1);
	cr_assert_eq(used, n);
	cr_assert_eq(hdr.id, 42);
	cr_assert_eq(hdr.type, PROTO_MSG_ROOM_GET);
	v = proto_get_str(&u.data, "k", &len);
	cr_assert_not_null(v);
	cr_assert_eq(len, 1);
	cr_assert_eq(v[0], 'v');
	msgpack_unpacked_destroy(&u);
}

Test(proto_frame, truncated_needs_more)
{
	uint8_t			buf[256];
	struct proto_header	hdr;
	msgpack_unpacked	u;
	size_t			n, cut, used;
	char			err[128];

	n = make_frame(buf, sizeof buf, PROTO_MSG_ROOM_GET, PROTO_VERSION, 1);
	/* Every proper prefix, header included, asks for more bytes. */
	for (cut = 0; cut < n; cut++) {
		cr_assert_eq(proto_frame_decode(buf, cut, &hdr, &u, &used, err,
		    sizeof err), 0, "prefix of %zu bytes", cut);
	}
}

Test(proto_frame, oversized_rejected_before_body)
{
	struct proto_header	hdr = { 0, PROTO_MSG_HELLO, PROTO_VERSION, 0,
	    1 };
	uint8_t			buf[PROTO_HEADER_SIZE];
	msgpack_unpacked	u;
	size_t			used;
	char			err[128];

	hdr.length = proto_msg_cap(PROTO_MSG_HELLO) + 1;
	proto_header_pack(&hdr, buf);
	/* Only the header is present: the cap is checked on it alone. */
	cr_assert_eq(proto_frame_decode(buf, sizeof buf, &hdr, &u, &used, err,
	    sizeof err), -1);
	cr_assert(strstr(err, "exceeds cap") != NULL, "err: %s", err);
}

Test(proto_frame, unknown_type_rejected)
{
	struct proto_header	hdr = { 1, 9999, PROTO_VERSION, 0, 1 };

	char	err[128];

	cr_assert_eq(proto_frame_check(&hdr, err, sizeof err), -1);
	cr_assert(strstr(err, "unknown message type") != NULL);
	cr_assert_eq(proto_msg_cap(9999), 0);
	cr_assert_str_eq(proto_msg_name(9999), "unknown");
}

Test(proto_frame, other_version_only_for_handshake)
{
	struct proto_header	hdr = { 1, PROTO_MSG_HELLO, PROTO_VERSION + 1,
	    0, 1 };
	char			err[128];

	cr_assert_eq(proto_frame_check(&hdr, err, sizeof err), 0);
	hdr.type = PROTO_MSG_VERSION_MISMATCH;
	cr_assert_eq(proto_frame_check(&hdr, err, sizeof err), 0);
	hdr.type = PROTO_MSG_ROOM_EDIT;
	cr_assert_eq(proto_frame_check(&hdr, err, sizeof err), -1);
	cr_assert(strstr(err, "protocol version") != NULL);
}

Test(proto_frame, body_must_be_one_map)
{
	uint8_t			buf[64];
	struct proto_header	hdr = { 0, PROTO_MSG_OK, PROTO_VERSION, 0, 1 };
	msgpack_unpacked	u;
	size_t			used;
	char			err[128];

	/* A msgpack array, not a map. */
	buf[PROTO_HEADER_SIZE] = 0x90;
	hdr.length = 1;
	proto_header_pack(&hdr, buf);
	cr_assert_eq(proto_frame_decode(buf, PROTO_HEADER_SIZE + 1, &hdr, &u,
	    &used, err, sizeof err), -1);
	/* Two objects where one is declared. */
	buf[PROTO_HEADER_SIZE] = 0x80;
	buf[PROTO_HEADER_SIZE + 1] = 0x80;
	hdr.length = 2;
	proto_header_pack(&hdr, buf);
	cr_assert_eq(proto_frame_decode(buf, PROTO_HEADER_SIZE + 2, &hdr, &u,
	    &used, err, sizeof err), -1);
	/* A map that claims more entries than the body holds. */
	buf[PROTO_HEADER_SIZE] = 0x83;
	hdr.length = 1;
	proto_header_pack(&hdr, buf);
	cr_assert_eq(proto_frame_decode(buf, PROTO_HEADER_SIZE + 1, &hdr, &u,
	    &used, err, sizeof err), -1);
}

Test(proto_frame, two_frames_back_to_back)
{
	uint8_t			buf[512];
	struct proto_header	hdr;
	msgpack_unpacked	u;
	size_t			n1, n2, used;
	char			err[128];

	n1 = make_frame(buf, sizeof buf, PROTO_MSG_PING, PROTO_VERSION, 1);
	n2 = make_frame(buf + n1, sizeof buf - n1, PROTO_MSG_PONG,
	    PROTO_VERSION, 2);
	cr_assert_eq(proto_frame_decode(buf, n1 + n2, &hdr, &u, &used, err,
	    sizeof err), 1);
	cr_assert_eq(used, n1);
	cr_assert_eq(hdr.type, PROTO_MSG_PING);
	msgpack_unpacked_destroy(&u);
	cr_assert_eq(proto_frame_decode(buf + used, n1 + n2 - used, &hdr, &u,
	    &used, err, sizeof err), 1);
	cr_assert_eq(hdr.type, PROTO_MSG_PONG);
	cr_assert_eq(hdr.id, 2);
	msgpack_unpacked_destroy(&u);
}

Test(proto_frame, every_type_has_name_and_cap)
{
	static const uint16_t	types[] = { 1, 2, 3, 4, 5, 6, 7, 100, 101,
	    102, 110, 111, 112, 113, 114, 116, 120, 121, 122, 123, 124, 125,
	    126, 127, 128, 130, 131, 132, 134, 135, 136, 137, 138, 139, 140,
	    141, 142, 200, 201, 202, 203, 204,
	    205, 206, 207, 208, 209, 300, 301, 302, 303 };
	size_t			i;

	for (i = 0; i < sizeof types / sizeof *types; i++) {
		cr_assert_gt(proto_msg_cap(types[i]), 0, "type %u", types[i]);
		cr_assert_str_neq(proto_msg_name(types[i]), "unknown");
		cr_assert_leq(proto_msg_cap(types[i]), PROTO_MAX_FRAME);
	}
}

/* Found by fuzz-frame: msgpack-c sizes a container from its declared
 * count before reading it, so such a body must be refused up front. */
Test(proto_frame, container_larger_than_body_rejected)
{
	uint8_t			buf[64];
	struct proto_header	hdr = { 0, PROTO_MSG_ROOM_EDIT, PROTO_VERSION,
	    0, 1 };
	msgpack_unpacked	u;
	size_t			used, n = PROTO_HEADER_SIZE;
	char			err[128];

	buf[n++] = 0x81;			/* map of one pair */
	buf[n++] = 0xa1;			/* key "e" */
	buf[n++] = 'e';
	buf[n++] = 0xdd;			/* array32 of 2^31 items */
	buf[n++] = 0x80;
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 0xc0;
	hdr.length = (uint32_t)(n - PROTO_HEADER_SIZE);
	proto_header_pack(&hdr, buf);
	cr_assert_eq(proto_frame_decode(buf, n, &hdr, &u, &used, err,
	    sizeof err), -1);
	cr_assert(strstr(err, "well-formed") != NULL, "err: %s", err);
}

/* The fix* forms, checked on their own fast path: a fixstr, fixarray or
 * fixmap that the body cannot hold is refused; one it holds is decoded. */
Test(proto_frame, fix_forms_checked)
{
	static const uint8_t	bad[][6] = {
		{ 0x81, 0xa1, 'e', 0xa5, 'a', 'b' },	/* str of 5, 2 left */
		{ 0x81, 0xa1, 'e', 0x9f, 1, 2 },	/* array of 15 */
		{ 0x81, 0xa1, 'e', 0x8f, 1, 2 },	/* map of 15 pairs */
		{ 0x82, 0xa1, 'e', 0x7f, 0xa1, 'f' },	/* second value gone */
	};
	static const uint8_t	good[] = { 0x82, 0xa1, 'e', 0x92, 0xe0, 0x7f,
	    0xa1, 'f', 0x81, 0xa0, 0xc3 };
	uint8_t			buf[64];
	struct proto_header	hdr = { 0, PROTO_MSG_ROOM_EDIT, PROTO_VERSION,
	    0, 1 };
	msgpack_unpacked	u;
	size_t			used, i;
	char			err[128];

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(buf + PROTO_HEADER_SIZE, bad[i], sizeof bad[i]);
		hdr.length = sizeof bad[i];
		proto_header_pack(&hdr, buf);
		cr_assert_eq(proto_frame_decode(buf, PROTO_HEADER_SIZE +
		    sizeof bad[i], &hdr, &u, &used, err, sizeof err), -1,
		    "bad body %zu accepted", i);
	}
	memcpy(buf + PROTO_HEADER_SIZE, good, sizeof good);
	hdr.length = sizeof good;
	proto_header_pack(&hdr, buf);
	cr_assert_eq(proto_frame_decode(buf, PROTO_HEADER_SIZE + sizeof good,
	    &hdr, &u, &used, err, sizeof err), 1, "%s", err);
	cr_assert_eq(used, PROTO_HEADER_SIZE + sizeof good);
	cr_assert_eq(u.data.via.map.size, 2);
	msgpack_unpacked_destroy(&u);
}

/*
 * Bytes read back from the store get the frame body's walk: a record
 * whose garbage claims a map of 2^30 pairs is refused before msgpack-c
 * would size 16 GiB for it; a sound one is unpacked and *off set past
 * it, whatever follows.
 */
Test(proto_frame, unpack_walks_stored_bytes)
{
	static const uint8_t	bad[] = { 0x81, 0xa1, 'r', 0xdf, 0x40, 0, 0,
	    0, 0xc0, 0xc0 };
	static const uint8_t	good[] = { 0x81, 0xa1, 'r', 0x92, 1, 2, 0xff };
	msgpack_unpacked	u;
	size_t			off = 99;

	msgpack_unpacked_init(&u);
	cr_assert_eq(proto_frame_unpack(&u, bad, sizeof bad, &off), -1);
	cr_assert_eq(off, 99, "off moved on a refusal");
	cr_assert_eq(proto_frame_unpack(&u, NULL, 0, NULL), -1);
	cr_assert_eq(proto_frame_unpack(&u, good, 3, NULL), -1,
	    "a cut record");
	cr_assert_eq(proto_frame_unpack(&u, good, sizeof good, &off), 0);
	cr_assert_eq(off, sizeof good - 1);
	cr_assert_eq(u.data.type, MSGPACK_OBJECT_MAP);
	cr_assert_eq(u.data.via.map.ptr[0].val.via.array.size, 2);
	msgpack_unpacked_destroy(&u);
}
