/* SPDX-License-Identifier: ISC */
/*
 * crypto.c: what the executables take from libcrypto: SHA-256, base64
 * and random bytes, through the table crypto_lib() gives (crypto.h).
 */

#include <limits.h>
#include <string.h>

#include "common.h"
#include "crypto.h"

/* The SHA-256 of len bytes at data. */
void
crypto_sha256(const void *data, size_t len,
    unsigned char md[CRYPTO_SHA256_LEN])
{
	const struct crypto_lib	*l = crypto_lib();
	unsigned char		 out[EVP_MAX_MD_SIZE];
	unsigned int		 n = 0;

	if (l->digest(data, len, out, &n, l->sha256(), NULL) != 1 ||
	    n != CRYPTO_SHA256_LEN)
		fatalx("SHA-256 failed");
	memcpy(md, out, CRYPTO_SHA256_LEN);
}

/* A SHA-256 over a stream: begin, add its pieces, end (which frees). */
struct evp_md_ctx_st *
crypto_sha256_begin(void)
{
	const struct crypto_lib	*l = crypto_lib();
	EVP_MD_CTX		*c;

	if ((c = l->ctx_new()) == NULL || l->init(c, l->sha256(), NULL) != 1)
		fatalx("SHA-256 failed");
	return (c);
}

void
crypto_sha256_add(struct evp_md_ctx_st *c, const void *data, size_t len)
{
	if (crypto_lib()->update(c, data, len) != 1)
		fatalx("SHA-256 failed");
}

/* The hash in md, or with md NULL only the free (a stream abandoned). */
void
crypto_sha256_end(struct evp_md_ctx_st *c,
    unsigned char md[CRYPTO_SHA256_LEN])
{
	const struct crypto_lib	*l = crypto_lib();
	unsigned char		 out[EVP_MAX_MD_SIZE];
	unsigned int		 n = 0;

	if (c == NULL)
		return;
	if (md != NULL) {
		if (l->final(c, out, &n) != 1 || n != CRYPTO_SHA256_LEN)
			fatalx("SHA-256 failed");
		memcpy(md, out, CRYPTO_SHA256_LEN);
	}
	l->ctx_free(c);
}

/*
 * The hash of what was added so far in md, the stream going on (a
 * transfer's record of how far it got: worker-files-record.c).
 */
void
crypto_sha256_now(struct evp_md_ctx_st *c,
    unsigned char md[CRYPTO_SHA256_LEN])
{
	const struct crypto_lib	*l = crypto_lib();
	EVP_MD_CTX		*t;

	if ((t = l->ctx_new()) == NULL || l->copy(t, c) != 1)
		fatalx("SHA-256 failed");
	crypto_sha256_end(t, md);
}

/* len bytes as base64, no line breaks, into out (4 * ((len + 2) / 3) + 1
 * bytes); its length. */
size_t
crypto_b64_encode(char *out, const void *in, size_t len)
{
	if (len > (size_t)INT_MAX / 4 * 3)
		fatalx("base64 of %zu bytes", len);
	return ((size_t)crypto_lib()->encode((unsigned char *)out, in,
	    (int)len));
}

/*
 * len bytes of base64 (no line breaks) into out (len / 4 * 3 bytes);
 * the bytes written, padding counted as zeros, or -1 if it is not base64.
 */
int
crypto_b64_decode(void *out, const char *in, size_t len)
{
	if (len > INT_MAX)
		return (-1);
	return (crypto_lib()->decode(out, (const unsigned char *)in,
	    (int)len));
}

/* n random bytes; -1 if there are none. */
int
crypto_random(void *buf, size_t n)
{
	if (n > INT_MAX)
		return (-1);
	return (crypto_lib()->random(buf, (int)n) == 1 ? 0 : -1);
}
