/* SPDX-License-Identifier: ISC */
/*
 * mpjson-gen.h: random msgpack values made of what json-c changes (keys
 * twice, bytes not UTF-8, NUL in keys, binaries, float32, NaN, exts,
 * nesting past MPJSON_INLINE_DEPTH), for the tests that compare a path
 * without json-c against the json-c one (test-mpjson, test-room-record).
 */

#ifndef MPJSON_GEN_H
#define MPJSON_GEN_H

#include <math.h>
#include <stdint.h>

static uint64_t	gen_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
gen_rand(void)
{
	gen_state ^= gen_state << 13;
	gen_state ^= gen_state >> 7;
	gen_state ^= gen_state << 17;
	return ((uint32_t)(gen_state >> 16));
}

/* A random value of what json-c changes, nested at most 28 deep. */
static void
gen(msgpack_packer *pk, unsigned int depth)
{
	static const char	*strs[] = { "", "a", "b", "a\0b", "\xff",
	    "\xc3\xa9", "\xed\xa0\x80", "text", "a\0c", "\xe2\x82" };
	static const size_t	 lens[] = { 0, 1, 1, 3, 1, 2, 3, 4, 3, 2 };
	uint32_t		 r = gen_rand(), i, n;

	switch (r % (depth < 28 ? 14 : 9)) {
	case 0:
		msgpack_pack_nil(pk);
		break;
	case 1:
		msgpack_pack_int64(pk, (int64_t)gen_rand() - (1 << 30));
		break;
	case 2:
		msgpack_pack_uint64(pk, ((uint64_t)gen_rand() << 32) |
		    gen_rand());
		break;
	case 3:
		msgpack_pack_float(pk, (float)gen_rand() / 7.0f);
		break;
	case 4:
		msgpack_pack_double(pk, r & 32 ? NAN : (double)gen_rand() /
		    3.0);
		break;
	case 5:
		i = gen_rand() % 10;
		msgpack_pack_str(pk, lens[i]);
		msgpack_pack_str_body(pk, strs[i], lens[i]);
		break;
	case 6:
		i = gen_rand() % 10;
		msgpack_pack_bin(pk, lens[i]);
		msgpack_pack_bin_body(pk, strs[i], lens[i]);
		break;
	case 7:
		msgpack_pack_ext(pk, 2, (int8_t)(gen_rand() % 3));
		msgpack_pack_ext_body(pk, "[]", 2);
		break;
	case 8:
		if (r & 64)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		break;
	case 9:
	case 10:
	case 11:
		n = gen_rand() % 6;
		msgpack_pack_map(pk, n);
		for (i = 0; i < n; i++) {
			if (gen_rand() % 9 == 0)
				msgpack_pack_int(pk, 1);
			else {
				r = gen_rand() % 10;
				msgpack_pack_str(pk, lens[r]);
				msgpack_pack_str_body(pk, strs[r], lens[r]);
			}
			gen(pk, depth + 1);
		}
		break;
	default:
		n = gen_rand() % 4;
		msgpack_pack_array(pk, n);
		for (i = 0; i < n; i++)
			gen(pk, depth + 1);
		break;
	}
}

#endif
