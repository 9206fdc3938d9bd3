/* SPDX-License-Identifier: ISC */
/*
 * crypto.h: the libcrypto functions crypto.c calls, as a table.  An
 * executable links common/crypto-lib.c, which gives the linked ones, or
 * defines crypto_lib() itself: the worker loads libcrypto when it first
 * needs it (mcp-worker/worker-crypto.c, docs/decisions/042).
 */

#ifndef CRYPTO_H
#define CRYPTO_H

#include <openssl/evp.h>

struct crypto_lib {
	int		 (*digest)(const void *, size_t, unsigned char *,
			     unsigned int *, const EVP_MD *, ENGINE *);
	const EVP_MD	*(*sha256)(void);
	int		 (*encode)(unsigned char *, const unsigned char *, int);
	int		 (*decode)(unsigned char *, const unsigned char *, int);
	int		 (*random)(unsigned char *, int);
	/* A hash over a stream (crypto_sha256_begin). */
	EVP_MD_CTX	*(*ctx_new)(void);
	void		 (*ctx_free)(EVP_MD_CTX *);
	int		 (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int		 (*update)(EVP_MD_CTX *, const void *, size_t);
	int		 (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
	int		 (*copy)(EVP_MD_CTX *, const EVP_MD_CTX *);
};

const struct crypto_lib	*crypto_lib(void);

#endif
