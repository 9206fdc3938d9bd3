/* SPDX-License-Identifier: ISC */
/*
 * proxy-atomic.c: the proxy's atomic_tag and atomic_random, in place of
 * common/atomic-crypto.c.
 *
 * The proxy writes one file, its tool cache in the private state
 * directory, which nothing sweeps: its temporary names need no hash of
 * the target, and getrandom(2) gives the random part, so the proxy
 * links no libcrypto (about 3 MB of its idle RSS once OpenSSL is
 * initialized).  Defined here, these are the ones the linker takes;
 * libcommon.a's are not pulled in.
 */

#include <sys/random.h>

#include <string.h>

#include "common.h"

void
atomic_tag(const char *base, char out[ATOMIC_TAG_SIZE])
{
	(void)base;
	memset(out, '0', ATOMIC_TAG_SIZE - 1);
	out[ATOMIC_TAG_SIZE - 1] = '\0';
}

int
atomic_random(unsigned char *buf, size_t n)
{
	return (getrandom(buf, n, 0) == (ssize_t)n ? 0 : -1);
}
