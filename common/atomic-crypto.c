/* SPDX-License-Identifier: ISC */
/*
 * atomic-crypto.c: what atomic.c takes from libcrypto: the hash part of
 * its temporary names (16 hex of the SHA-256 of the target's name,
 * docs/decisions/009) and their random part.  Apart from atomic.c so
 * that runtimed-mcp, which writes only a private file of its own, links
 * its own two functions and no libcrypto (mcp-proxy/proxy-atomic.c).
 */

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common.h"

/* The hash part of the temporary names of base. */
void
atomic_tag(const char *base, char out[ATOMIC_TAG_SIZE])
{
	unsigned char	md[EVP_MAX_MD_SIZE];
	unsigned int	mdlen;

	EVP_Digest(base, strlen(base), md, &mdlen, EVP_sha256(), NULL);
	util_hex(md, (ATOMIC_TAG_SIZE - 1) / 2, out);
}

/* n random bytes for a temporary name; -1 if there are none. */
int
atomic_random(unsigned char *buf, size_t n)
{
	return (RAND_bytes(buf, (int)n) == 1 ? 0 : -1);
}
