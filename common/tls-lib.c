/* SPDX-License-Identifier: ISC */
/*
 * tls-lib.c: the libssl and libevent_openssl of jserver-tls.c as linked.
 * The worker has a tls_lib() of its own (mcp-worker/worker-tls.c), which
 * the linker takes, so this one and those libraries are not linked there.
 */

#include <openssl/err.h>

#include "tls.h"

static const struct tls_lib	tls_lib_linked = {
	TLS_client_method, SSL_CTX_new, SSL_CTX_free,
	SSL_CTX_set_default_verify_paths, SSL_CTX_load_verify_file,
	SSL_CTX_set_verify, SSL_new, SSL_free, SSL_ctrl, SSL_set1_host,
	SSL_get0_param, X509_VERIFY_PARAM_set1_ip_asc, SSL_get_verify_result,
	SSL_is_init_finished,
	X509_verify_cert_error_string, ERR_get_error, ERR_error_string_n,
	ERR_clear_error, bufferevent_openssl_socket_new,
	bufferevent_openssl_get_ssl, bufferevent_get_openssl_error,
	SSL_read, SSL_CTX_use_certificate_chain_file, SSL_CTX_use_PrivateKey,
	SSL_CTX_check_private_key, SSL_CTX_set_client_cert_cb, BIO_new_mem_buf,
	BIO_free, PEM_read_bio_PrivateKey, EVP_PKEY_free, SSL_set_ex_data,
	SSL_get_ex_data, SSL_get_certificate
};

const struct tls_lib *
tls_lib(void)
{
	return (&tls_lib_linked);
}
