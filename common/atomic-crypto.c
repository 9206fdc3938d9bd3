/* SPDX-License-Identifier: ISC */
/*
 * atomic-crypto.c: what atomic.c takes from libcrypto: the hash part of
 * its temporary names (16 hex of the SHA-256 of the target's name,
 * docs/decisions/009) and their random part.  Apart from atomic.c so
 * that runtimed-mcp, which writes only a private file of its own, links
 * its own two functions and no libcrypto (mcp-proxy/proxy-atomic.c).
 */

#include <string.h>

#include "common.h"

/* The hash part of the temporary names of base. */
void
atomic_tag(const char *base, char out[ATOMIC_TAG_SIZE])
{
	unsigned char	md[CRYPTO_SHA256_LEN];

	crypto_sha256(base, strlen(base), md);
	util_hex(md, (ATOMIC_TAG_SIZE - 1) / 2, out);
}

/* n random bytes for a temporary name; -1 if there are none. */
int
atomic_random(unsigned char *buf, size_t n)
{
	return (crypto_random(buf, n));
}
