/* SPDX-License-Identifier: ISC */
/*
 * crypto-lib.c: the libcrypto of crypto.c as linked.  The worker has a
 * crypto_lib() of its own (mcp-worker/worker-crypto.c), which the linker
 * takes, so this one and libcrypto are not linked there.
 */

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "crypto.h"

static const struct crypto_lib	crypto_lib_linked = {
	EVP_Digest, EVP_sha256, EVP_EncodeBlock, EVP_DecodeBlock, RAND_bytes,
	EVP_MD_CTX_new, EVP_MD_CTX_free, EVP_DigestInit_ex, EVP_DigestUpdate,
	EVP_DigestFinal_ex, EVP_MD_CTX_copy_ex
};

const struct crypto_lib *
crypto_lib(void)
{
	return (&crypto_lib_linked);
}
