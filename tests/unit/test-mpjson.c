/* SPDX-License-Identifier: ISC */
/*
 * test-mpjson.c: mpjson_repack writes, without json-c, the bytes that
 * mpjson_unpack then mpjson_pack_depth write: on what json-c changes
 * (a key twice, bytes not UTF-8, a binary, a float32, a NaN, an ext, a
 * NUL in a key, a container deep in) and on random values built of it.
 * fuzz/fuzz-frame.c checks the same on every body it reads.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common.h"
#include "mpjson-gen.h"

static void	agree(const msgpack_object *, unsigned int);
static void	agree_bytes(const char *, size_t);

/* Both ways at depth, and as it came when mpjson_plain says so. */
static void
agree(const msgpack_object *o, unsigned int depth)
{
	struct json_object	*j;
	struct mpbuf		 a, b, c;

	mpbuf_init(&a);
	mpbuf_init(&b);
	mpbuf_init(&c);
	j = mpjson_unpack(o);
	mpjson_pack_depth(&a.pk, j, depth);
	json_object_put(j);
	mpjson_repack(&b.pk, o, depth);
	cr_assert_eq(a.sb.size, b.sb.size, "depth %u: %zu bytes, not %zu",
	    depth, b.sb.size, a.sb.size);
	cr_assert(memcmp(a.sb.data, b.sb.data, a.sb.size) == 0,
	    "depth %u: the bytes differ", depth);
	if (mpjson_plain(o, depth)) {
		msgpack_pack_object(&c.pk, *o);
		cr_assert_eq(a.sb.size, c.sb.size);
		cr_assert(memcmp(a.sb.data, c.sb.data, a.sb.size) == 0);
	}
	mpbuf_free(&a);
	mpbuf_free(&b);
	mpbuf_free(&c);
}

static void
agree_bytes(const char *data, size_t len)
{
	msgpack_unpacked	u;
	size_t			off = 0;
	unsigned int		d;

	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, data, len, &off),
	    MSGPACK_UNPACK_SUCCESS);
	for (d = 0; d <= 25; d++)
		agree(&u.data, d);
	msgpack_unpacked_destroy(&u);
}

#define AGREE(s)	agree_bytes((s), sizeof (s) - 1)

Test(mpjson, repack_odd_values)
{
	/* {"a":1,"b":2,"a":3}: "a" first, with 3. */
	AGREE("\x83\xa1" "a\x01\xa1" "b\x02\xa1" "a\x03");
	/* Bytes not UTF-8, in a value and a key. */
	AGREE("\x81\xa2\xff" "a\xa3x\xc3(");
	/* A key with a NUL, and the key it then equals. */
	AGREE("\x82\xa3" "a\x00" "b\x01\xa1" "a\x02");
	/* An empty key, twice; a key that is not a string. */
	AGREE("\x83\xa0\x01\x05\x02\xa0\x03");
	/* A binary; a float32; a NaN; an infinity; -0.0. */
	AGREE("\x95\xc4\x02hi\xca\x3f\xc0\x00\x00"
	    "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"
	    "\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00"
	    "\xcb\x80\x00\x00\x00\x00\x00\x00\x00");
	/* Integers the long way, and past INT64_MAX. */
	AGREE("\x94\xcf\x00\x00\x00\x00\x00\x00\x00\x05"
	    "\xcf\xff\xff\xff\xff\xff\xff\xff\xff"
	    "\xd3\xff\xff\xff\xff\xff\xff\xff\xfe\xd0\x05");
	/* A foreign ext; mpjson's JSON text ext; one that is not JSON. */
	AGREE("\x93\xd4\x05\x01\xc7\x0d\x01{\"a\":[1,2.5]}\xd5\x01{x");
	/* A string with a NUL in it. */
	AGREE("\xa3" "a\x00" "b");
}

Test(mpjson, repack_deep)
{
	char	buf[64];
	size_t	i;

	/* 30 nested arrays around a map: JSON text from depth 24 on. */
	for (i = 0; i < 30; i++)
		buf[i] = '\x91';
	memcpy(buf + 30, "\x82\xa1" "a\xc4\x01z\xa1" "a\x01", 10);
	agree_bytes(buf, 40);
}

Test(mpjson, repack_many_keys)
{
	struct mpbuf		b;
	msgpack_unpacked	u;
	size_t			off = 0;
	char			key[16];
	int			i, n;

	/* More keys than mpjson_plain looks at, some twice. */
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 300);
	for (i = 0; i < 300; i++) {
		n = snprintf(key, sizeof key, "k%d", (i * 7) % 200);
		msgpack_pack_str(&b.pk, (size_t)n);
		msgpack_pack_str_body(&b.pk, key, (size_t)n);
		msgpack_pack_int(&b.pk, i);
	}
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	agree(&u.data, 0);
	agree(&u.data, 1);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
}

Test(mpjson, repack_random)
{
	struct mpbuf		b;
	msgpack_unpacked	u;
	size_t			off;
	int			k;

	for (k = 0; k < 5000; k++) {
		mpbuf_init(&b);
		gen(&b.pk, 0);
		msgpack_unpacked_init(&u);
		off = 0;
		cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size,
		    &off), MSGPACK_UNPACK_SUCCESS);
		agree(&u.data, (unsigned int)k % 26);
		msgpack_unpacked_destroy(&u);
		mpbuf_free(&b);
	}
}
