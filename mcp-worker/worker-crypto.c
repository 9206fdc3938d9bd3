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

static struct crypto_lib	 worker_crypto;
static int			 worker_crypto_loaded;

static void	*worker_crypto_sym(void *, const char *);

static void *
worker_crypto_sym(void *h, const char *name)
{
	void	*p;

	if ((p = dlsym(h, name)) == NULL)
		fatalx("%s has no %s: %s", LIBCRYPTO_SONAME, name, dlerror());
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
	*(void **)&worker_crypto.digest = worker_crypto_sym(h, "EVP_Digest");
	*(void **)&worker_crypto.sha256 = worker_crypto_sym(h, "EVP_sha256");
	*(void **)&worker_crypto.encode = worker_crypto_sym(h,
	    "EVP_EncodeBlock");
	*(void **)&worker_crypto.decode = worker_crypto_sym(h,
	    "EVP_DecodeBlock");
	*(void **)&worker_crypto.random = worker_crypto_sym(h, "RAND_bytes");
	*(void **)&worker_crypto.ctx_new = worker_crypto_sym(h,
	    "EVP_MD_CTX_new");
	*(void **)&worker_crypto.ctx_free = worker_crypto_sym(h,
	    "EVP_MD_CTX_free");
	*(void **)&worker_crypto.init = worker_crypto_sym(h,
	    "EVP_DigestInit_ex");
	*(void **)&worker_crypto.update = worker_crypto_sym(h,
	    "EVP_DigestUpdate");
	*(void **)&worker_crypto.final = worker_crypto_sym(h,
	    "EVP_DigestFinal_ex");
	worker_crypto_loaded = 1;
	log_debug("loaded %s", LIBCRYPTO_SONAME);
	return (&worker_crypto);
}
