/* SPDX-License-Identifier: ISC */
/*
 * proto-frame.c: the fixed frame header, checking it against the type's
 * cap (proto-msg.c), and decoding one frame from a byte buffer.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static uint64_t	proto_frame_be(const uint8_t *, size_t);

void
proto_header_pack(const struct proto_header *hdr, uint8_t *p)
{
	p[0] = hdr->length >> 24;
	p[1] = hdr->length >> 16;
	p[2] = hdr->length >> 8;
	p[3] = hdr->length;
	p[4] = hdr->type >> 8;
	p[5] = hdr->type;
	p[6] = hdr->version;
	p[7] = hdr->flags;
	p[8] = hdr->id >> 24;
	p[9] = hdr->id >> 16;
	p[10] = hdr->id >> 8;
	p[11] = hdr->id;
}

/* The header of a frame we send: our version, no flags. */
void
proto_header_make(uint8_t *p, uint16_t type, uint32_t id, uint32_t length)
{
	struct proto_header	hdr;

	hdr.length = length;
	hdr.type = type;
	hdr.version = PROTO_VERSION;
	hdr.flags = 0;
	hdr.id = id;
	proto_header_pack(&hdr, p);
}

void
proto_header_unpack(const uint8_t *p, struct proto_header *hdr)
{
	hdr->length = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	hdr->type = (uint16_t)(p[4] << 8 | p[5]);
	hdr->version = p[6];
	hdr->flags = p[7];
	hdr->id = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 |
	    (uint32_t)p[10] << 8 | p[11];
}

/*
 * Check a header before its body is read.  A version other than ours is
 * allowed only on the handshake messages, so the handshake can answer it.
 * Returns 0 if acceptable, else -1 with the reason in err.
 */
int
proto_frame_check(const struct proto_header *hdr, char *err, size_t errlen)
{
	uint32_t	cap;

	cap = proto_msg_cap(hdr->type);
	if (cap == 0) {
		snprintf(err, errlen, "unknown message type %u", hdr->type);
		return (-1);
	}
	if (hdr->length > cap) {
		snprintf(err, errlen, "%s frame of %u bytes exceeds cap %u",
		    proto_msg_name(hdr->type), hdr->length, cap);
		return (-1);
	}
	if (hdr->version != PROTO_VERSION &&
	    !proto_msg_has(hdr->type, PROTO_F_ANY_VERSION)) {
		snprintf(err, errlen, "%s frame has protocol version %u, "
		    "expected %u", proto_msg_name(hdr->type), hdr->version,
		    PROTO_VERSION);
		return (-1);
	}
	return (0);
}

/*
 * Check a header that arrives before the handshake is done: only a
 * handshake frame of at most PROTO_HELLO_MAX bytes, whatever its type's
 * cap, so nothing larger is ever buffered for a peer we do not know yet.
 * Returns 0 if acceptable, else -1 with the reason in err.
 */
int
proto_frame_check_hello(const struct proto_header *hdr, char *err,
    size_t errlen)
{
	if (!proto_msg_has(hdr->type, PROTO_F_HANDSHAKE)) {
		snprintf(err, errlen, "%s frame of %u bytes before HELLO "
		    "(only a handshake frame may come first)",
		    proto_msg_name(hdr->type), hdr->length);
		return (-1);
	}
	if (hdr->length > PROTO_HELLO_MAX) {
		snprintf(err, errlen, "%s frame of %u bytes before HELLO "
		    "(at most %u until the handshake is done)",
		    proto_msg_name(hdr->type), hdr->length, PROTO_HELLO_MAX);
		return (-1);
	}
	return (proto_frame_check(hdr, err, errlen));
}

/* Big-endian unsigned of n bytes. */
static uint64_t
proto_frame_be(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;

	while (n-- > 0)
		v = v << 8 | *p++;
	return (v);
}

/*
 * Walk a msgpack body without building it, and refuse one whose containers
 * declare more elements than bytes remain.  msgpack-c allocates room for a
 * container's declared size before reading its elements, so a 20-byte body
 * claiming a map of four billion entries would make it ask for 128 GiB.
 * Every element takes at least one byte, so a sane body never declares
 * more pending elements than it has bytes left.  Whoever unpacks bytes it
 * did not write itself asks this first.
 */
int
proto_frame_sane(const uint8_t *p, size_t len)
{
	size_t		off = 0, skip, hdr;
	uint64_t	pending = 1, n;
	uint8_t		b;

	while (pending > 0) {
		if (off >= len)
			return (0);
		b = p[off];
		pending--;
		/* The fix* forms, most of a frame, without the tables below. */
		if (b <= 0x7f || b >= 0xe0) {
			off++;
			continue;
		}
		if (b >= 0xa0 && b <= 0xbf) {
			skip = b & 0x1f;
			if (len - off - 1 < skip)
				return (0);
			off += 1 + skip;
			if (pending > len - off)
				return (0);
			continue;
		}
		if (b <= 0x9f) {
			pending += b <= 0x8f ? 2 * (uint64_t)(b & 0x0f) :
			    (uint64_t)(b & 0x0f);
			off++;
			if (pending > len - off)
				return (0);
			continue;
		}
		hdr = 1;
		skip = 0;
		n = 0;
		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 ||
		    b == 0xc3)
			;
		else if (b >= 0x80 && b <= 0x8f)
			n = 2 * (uint64_t)(b & 0x0f);
		else if (b >= 0x90 && b <= 0x9f)
			n = b & 0x0f;
		else if (b >= 0xa0 && b <= 0xbf)
			skip = b & 0x1f;
		else {
			switch (b) {
			case 0xc4: case 0xd9:	/* bin8, str8 */
				hdr = 2;
				break;
			case 0xc5: case 0xda:	/* bin16, str16 */
				hdr = 3;
				break;
			case 0xc6: case 0xdb:	/* bin32, str32 */
				hdr = 5;
				break;
			case 0xc7:		/* ext8 */
				hdr = 3;
				break;
			case 0xc8:		/* ext16 */
				hdr = 4;
				break;
			case 0xc9:		/* ext32 */
				hdr = 6;
				break;
			case 0xca: case 0xce: case 0xd2:
				skip = 4;
				break;
			case 0xcb: case 0xcf: case 0xd3:
				skip = 8;
				break;
			case 0xcc: case 0xd0:
				skip = 1;
				break;
			case 0xcd: case 0xd1:
				skip = 2;
				break;
			case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
				skip = 1 + ((size_t)1 << (b - 0xd4));
				break;
			case 0xdc: case 0xde:	/* array16, map16 */
				hdr = 3;
				break;
			case 0xdd: case 0xdf:	/* array32, map32 */
				hdr = 5;
				break;
			default:		/* 0xc1: never used */
				return (0);
			}
		}
		if (len - off < hdr)
			return (0);
		switch (b) {
		case 0xc4: case 0xc5: case 0xc6:
		case 0xd9: case 0xda: case 0xdb:
			skip = proto_frame_be(p + off + 1, hdr - 1);
			break;
		case 0xc7: case 0xc8: case 0xc9:
			skip = proto_frame_be(p + off + 1, hdr - 2);
			break;
		case 0xdc: case 0xdd:
			n = proto_frame_be(p + off + 1, hdr - 1);
			break;
		case 0xde: case 0xdf:
			n = 2 * proto_frame_be(p + off + 1, hdr - 1);
			break;
		}
		off += hdr;
		if (len - off < skip)
			return (0);
		off += skip;
		pending += n;
		if (pending > len - off)
			return (0);
	}
	return (1);
}

/*
 * Unpack the msgpack object at the front of bytes read back from disk (a
 * stored record, a snapshot, a journal entry): walked first, as a frame
 * body is, so a damaged store costs an "unreadable" and never the memory
 * its garbage claims.  0 with u holding the object (and *off, if not
 * NULL, just past it), -1 otherwise; the caller destroys u either way.
 */
int
proto_frame_unpack(msgpack_unpacked *u, const void *buf, size_t len,
    size_t *off)
{
	size_t	at = 0;

	if (buf == NULL || !proto_frame_sane(buf, len))
		return (-1);
	if (msgpack_unpack_next(u, buf, len, &at) != MSGPACK_UNPACK_SUCCESS)
		return (-1);
	if (off != NULL)
		*off = at;
	return (0);
}

/*
 * Decode one frame from the front of buf.  Returns 1 with *used set when a
 * whole frame was decoded; out then points into buf (msgpack does not copy
 * strings), so buf must outlive it, and the caller destroys out.  0
 * when more bytes are needed, -1 on a protocol violation with err set.
 */
int
proto_frame_decode(const uint8_t *buf, size_t len, struct proto_header *hdr,
    msgpack_unpacked *out, size_t *used, char *err, size_t errlen)
{
	size_t			off = 0;
	msgpack_unpack_return	ret;

	if (len < PROTO_HEADER_SIZE)
		return (0);
	proto_header_unpack(buf, hdr);
	if (proto_frame_check(hdr, err, errlen) != 0)
		return (-1);
	if (len - PROTO_HEADER_SIZE < hdr->length)
		return (0);

	if (!proto_frame_sane(buf + PROTO_HEADER_SIZE, hdr->length)) {
		snprintf(err, errlen, "%s frame body is not one well-formed "
		    "msgpack object", proto_msg_name(hdr->type));
		return (-1);
	}
	msgpack_unpacked_init(out);
	ret = msgpack_unpack_next(out, (const char *)buf + PROTO_HEADER_SIZE,
	    hdr->length, &off);
	if (ret != MSGPACK_UNPACK_SUCCESS || off != hdr->length) {
		msgpack_unpacked_destroy(out);
		snprintf(err, errlen, "%s frame body is not one msgpack object",
		    proto_msg_name(hdr->type));
		return (-1);
	}
	if (out->data.type != MSGPACK_OBJECT_MAP) {
		msgpack_unpacked_destroy(out);
		snprintf(err, errlen, "%s frame body is not a map",
		    proto_msg_name(hdr->type));
		return (-1);
	}
	*used = PROTO_HEADER_SIZE + hdr->length;
	return (1);
}
