/* SPDX-License-Identifier: ISC */
/*
 * tls.h: the libssl and libevent_openssl functions jserver-tls.c calls,
 * as a table (https domains).  An executable links common/tls-lib.c,
 * which gives the linked ones, or defines tls_lib() itself: the worker
 * loads them when it first meets an https domain
 * (mcp-worker/worker-tls.c), as it does libcrypto (decision 042).
 */

#ifndef TLS_H
#define TLS_H

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

struct tls_lib {
	const SSL_METHOD *(*client_method)(void);
	SSL_CTX		*(*ctx_new)(const SSL_METHOD *);
	void		 (*ctx_free)(SSL_CTX *);
	int		 (*ctx_default_paths)(SSL_CTX *);
	int		 (*ctx_load_file)(SSL_CTX *, const char *);
	void		 (*ctx_set_verify)(SSL_CTX *, int, SSL_verify_cb);
	SSL		*(*ssl_new)(SSL_CTX *);
	void		 (*ssl_free)(SSL *);
	long		 (*ssl_ctrl)(SSL *, int, long, void *);
	int		 (*set1_host)(SSL *, const char *);
	X509_VERIFY_PARAM *(*get0_param)(SSL *);
	int		 (*param_ip)(X509_VERIFY_PARAM *, const char *);
	long		 (*verify_result)(const SSL *);
	int		 (*init_finished)(const SSL *);
	const char	*(*verify_string)(long);
	unsigned long	 (*err_get)(void);
	void		 (*err_string)(unsigned long, char *, size_t);
	void		 (*err_clear)(void);
	struct bufferevent *(*bev_new)(struct event_base *, evutil_socket_t,
			     SSL *, enum bufferevent_ssl_state, int);
	SSL		*(*bev_ssl)(struct bufferevent *);
	unsigned long	 (*bev_error)(struct bufferevent *);
	int		 (*ssl_read)(SSL *, void *, int);
	/* A client certificate (cert_file, key_file). */
	int		 (*ctx_use_chain_file)(SSL_CTX *, const char *);
	int		 (*ctx_use_key)(SSL_CTX *, EVP_PKEY *);
	int		 (*ctx_check_key)(const SSL_CTX *);
	void		 (*ctx_set_cert_cb)(SSL_CTX *,
			     int (*)(SSL *, X509 **, EVP_PKEY **));
	BIO		*(*bio_mem)(const void *, int);
	int		 (*bio_free)(BIO *);
	EVP_PKEY	*(*pem_key)(BIO *, EVP_PKEY **, pem_password_cb *,
			     void *);
	void		 (*pkey_free)(EVP_PKEY *);
	int		 (*set_ex_data)(SSL *, int, void *);
	void		*(*get_ex_data)(const SSL *, int);
	X509		*(*get_certificate)(const SSL *);
};

const struct tls_lib	*tls_lib(void);

#endif
