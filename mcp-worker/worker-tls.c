/* SPDX-License-Identifier: ISC */
/*
 * worker-tls.c: the worker's libevent_openssl and libssl, loaded when it
 * first meets an https domain (a transfer to or from one), as
 * worker-crypto.c loads libcrypto (decision 042): most workers never
 * do.  One dlopen of libevent_openssl brings libssl and libcrypto (its
 * dependencies), whose functions are looked up through the same handle.
 * Defined here, this tls_lib() is the one the linker takes; common/
 * tls-lib.c and those libraries are not linked into runtimed-mcp-worker.
 */

#include <dlfcn.h>

#include "common.h"
#include "tls.h"
#include "worker.h"

static struct tls_lib	 worker_tls;
static int		 worker_tls_loaded;

const struct tls_lib *
tls_lib(void)
{
	void	*h;

	if (worker_tls_loaded)
		return (&worker_tls);
	if ((h = dlopen(LIBEVENT_OPENSSL_SONAME, RTLD_NOW | RTLD_LOCAL)) ==
	    NULL)
		fatalx("cannot load %s (libevent's OpenSSL bufferevents): %s",
		    LIBEVENT_OPENSSL_SONAME, dlerror());
#define WORKER_TLS_SYM(field, name) \
	*(void **)&worker_tls.field = worker_crypto_sym(h, \
	    LIBEVENT_OPENSSL_SONAME, name)
	/* POSIX: a dlsym result converts to a function pointer. */
	WORKER_TLS_SYM(client_method, "TLS_client_method");
	WORKER_TLS_SYM(ctx_new, "SSL_CTX_new");
	WORKER_TLS_SYM(ctx_free, "SSL_CTX_free");
	WORKER_TLS_SYM(ctx_default_paths, "SSL_CTX_set_default_verify_paths");
	WORKER_TLS_SYM(ctx_load_file, "SSL_CTX_load_verify_file");
	WORKER_TLS_SYM(ctx_set_verify, "SSL_CTX_set_verify");
	WORKER_TLS_SYM(ssl_new, "SSL_new");
	WORKER_TLS_SYM(ssl_free, "SSL_free");
	WORKER_TLS_SYM(ssl_ctrl, "SSL_ctrl");
	WORKER_TLS_SYM(set1_host, "SSL_set1_host");
	WORKER_TLS_SYM(get0_param, "SSL_get0_param");
	WORKER_TLS_SYM(param_ip, "X509_VERIFY_PARAM_set1_ip_asc");
	WORKER_TLS_SYM(verify_result, "SSL_get_verify_result");
	WORKER_TLS_SYM(init_finished, "SSL_is_init_finished");
	WORKER_TLS_SYM(verify_string, "X509_verify_cert_error_string");
	WORKER_TLS_SYM(err_get, "ERR_get_error");
	WORKER_TLS_SYM(err_string, "ERR_error_string_n");
	WORKER_TLS_SYM(err_clear, "ERR_clear_error");
	WORKER_TLS_SYM(bev_new, "bufferevent_openssl_socket_new");
	WORKER_TLS_SYM(bev_ssl, "bufferevent_openssl_get_ssl");
	WORKER_TLS_SYM(bev_error, "bufferevent_get_openssl_error");
	WORKER_TLS_SYM(ssl_read, "SSL_read");
	WORKER_TLS_SYM(ctx_use_chain_file,
	    "SSL_CTX_use_certificate_chain_file");
	WORKER_TLS_SYM(ctx_use_key, "SSL_CTX_use_PrivateKey");
	WORKER_TLS_SYM(ctx_check_key, "SSL_CTX_check_private_key");
	WORKER_TLS_SYM(ctx_set_cert_cb, "SSL_CTX_set_client_cert_cb");
	WORKER_TLS_SYM(bio_mem, "BIO_new_mem_buf");
	WORKER_TLS_SYM(bio_free, "BIO_free");
	WORKER_TLS_SYM(pem_key, "PEM_read_bio_PrivateKey");
	WORKER_TLS_SYM(pkey_free, "EVP_PKEY_free");
	WORKER_TLS_SYM(set_ex_data, "SSL_set_ex_data");
	WORKER_TLS_SYM(get_ex_data, "SSL_get_ex_data");
	WORKER_TLS_SYM(get_certificate, "SSL_get_certificate");
#undef WORKER_TLS_SYM
	worker_tls_loaded = 1;
	log_debug("loaded %s", LIBEVENT_OPENSSL_SONAME);
	return (&worker_tls);
}
