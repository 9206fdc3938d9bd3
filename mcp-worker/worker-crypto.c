/* SPDX-License-Identifier: ISC */
/*
 * worker-crypto.c: the worker's libcrypto, loaded when it first hashes,
 * encodes or draws random bytes (docs/decisions/042).  Most workers never
 * do: a linked libcrypto was 1.4 MB of an idle worker's 4.7 MB resident,
 * 0.4 MB of it private (its data as the loader relocates it).  Defined
 * here, this crypto_lib() is the one the linker takes; common/
 * crypto-lib.c and libcrypto are not linked into runtimed-mcp-worker.
 */

#include <dlfcn.h>

#include "common.h"
#include "crypto.h"
#include "worker.h"

static struct crypto_lib	 worker_crypto;
static int			 worker_crypto_loaded;

/* name in h, the library soname, or the worker exits saying so. */
void *
worker_crypto_sym(void *h, const char *soname, const char *name)
{
	void	*p;

	if ((p = dlsym(h, name)) == NULL)
		fatalx("%s has no %s: %s", soname, name, dlerror());
	return (p);
}

const struct crypto_lib *
crypto_lib(void)
{
	void	*h;

	if (worker_crypto_loaded)
		return (&worker_crypto);
	if ((h = dlopen(LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		fatalx("cannot load %s (OpenSSL's libcrypto): %s",
		    LIBCRYPTO_SONAME, dlerror());
	/* POSIX: a dlsym result converts to a function pointer. */
#define WORKER_CRYPTO_SYM(field, name) \
	*(void **)&worker_crypto.field = worker_crypto_sym(h, \
	    LIBCRYPTO_SONAME, name)
	WORKER_CRYPTO_SYM(digest, "EVP_Digest");
	WORKER_CRYPTO_SYM(sha256, "EVP_sha256");
	WORKER_CRYPTO_SYM(encode, "EVP_EncodeBlock");
	WORKER_CRYPTO_SYM(decode, "EVP_DecodeBlock");
	WORKER_CRYPTO_SYM(random, "RAND_bytes");
	WORKER_CRYPTO_SYM(ctx_new, "EVP_MD_CTX_new");
	WORKER_CRYPTO_SYM(ctx_free, "EVP_MD_CTX_free");
	WORKER_CRYPTO_SYM(init, "EVP_DigestInit_ex");
	WORKER_CRYPTO_SYM(update, "EVP_DigestUpdate");
	WORKER_CRYPTO_SYM(final, "EVP_DigestFinal_ex");
	WORKER_CRYPTO_SYM(copy, "EVP_MD_CTX_copy_ex");
#undef WORKER_CRYPTO_SYM
	worker_crypto_loaded = 1;
	log_debug("loaded %s", LIBCRYPTO_SONAME);
	return (&worker_crypto);
}
