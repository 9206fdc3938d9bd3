/* SPDX-License-Identifier: ISC */
/*
 * jserver-tls.c: https domains.  A domain's TLS context trusts the
 * system's store (OpenSSL's default paths: ca-certificates on Debian),
 * or, when domains.json names a "ca_file", only the certificates in that
 * file: a hub with a private CA is trusted by its own CA and by nothing
 * else.  Every connection verifies the server's chain and that the
 * certificate is for the url's host (a name, sent as SNI too, or an
 * address), through libevent's OpenSSL bufferevents, for evhttp's
 * requests (jserver.c) and the kernel WebSocket alike, presenting the
 * domain's client certificate (cert_file, key_file) when a server asks
 * for one (decision 099).  There is no
 * switch to turn verification off (decision 086).  A shutdown without
 * close_notify is an error, not an end: every reply evhttp takes is
 * framed by its length, so a truncation is never taken for a whole.
 * libssl and libevent_openssl are called through tls_lib() (tls.h).
 */

#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include <openssl/err.h>

#include "common.h"
#include "domain.h"
#include "tls.h"

static char	*jserver_tls_ssl_error(const struct tls_lib *, unsigned long);
static int	 jserver_tls_check_file(const struct domain *, const char *,
		     const char *, char **);
static int	 jserver_tls_no_passphrase(char *, int, int, void *);
static int	 jserver_tls_asked(SSL *, X509 **, EVP_PKEY **);
static int	 jserver_tls_client_cert(struct domain *, SSL_CTX *,
		     const char *, char **);
static int	 jserver_tls_cert_alert(unsigned long);

/* Set on a connection whose server asked for a certificate we lack. */
static char	 jserver_tls_asked_mark;

/* OpenSSL's reason for e (its own queue's last one when e is 0). */
static char *
jserver_tls_ssl_error(const struct tls_lib *l, unsigned long e)
{
	char	buf[256];

	if (e == 0)
		e = l->err_get();
	if (e == 0)
		return (xstrdup("no reason given"));
	l->err_string(e, buf, sizeof buf);
	return (xstrdup(buf));
}

/*
 * A file that decides whom we trust or who we say we are (ca_file,
 * cert_file): public, but a regular file owned by us or root that nobody
 * else can write, as ssh asks of its configuration.  0, or -1 and a cause.
 */
static int
jserver_tls_check_file(const struct domain *d, const char *what,
    const char *path, char **cause)
{
	struct stat	sb;

	if (stat(path, &sb) != 0) {
		xasprintf(cause, "domain %s: %s %s: %s", d->name, what, path,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISREG(sb.st_mode)) {
		xasprintf(cause, "domain %s: %s %s is not a regular file",
		    d->name, what, path);
		return (-1);
	}
	if ((sb.st_uid != getuid() && sb.st_uid != 0) ||
	    (sb.st_mode & 022) != 0) {
		xasprintf(cause, "domain %s: %s %s can be changed by others "
		    "(owner %ld, mode %04o): make it yours and chmod go-w %s",
		    d->name, what, path, (long)sb.st_uid,
		    (u_int)(sb.st_mode & 07777), path);
		return (-1);
	}
	return (0);
}

/* An encrypted key: there is no one to ask for its passphrase. */
static int
jserver_tls_no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	*(int *)arg = 1;
	return (-1);
}

/*
 * The server asked for a client certificate and the domain has none: it
 * is marked on the connection (ex_data 0, the app data slot, which
 * libevent_openssl leaves alone) so a failure can say so, and the
 * handshake goes on without one (the server decides).
 */
static int
jserver_tls_asked(SSL *ssl, X509 **x509, EVP_PKEY **pkey)
{
	(void)x509;
	(void)pkey;
	tls_lib()->set_ex_data(ssl, 0, &jserver_tls_asked_mark);
	return (0);
}

/*
 * d's client certificate into ctx: the chain from cert_file, the key
 * from key (key_file's PEM as domain_load read and checked it, never
 * opened again by name), and that they belong together.
 */
static int
jserver_tls_client_cert(struct domain *d, SSL_CTX *ctx, const char *key,
    char **cause)
{
	const struct tls_lib	*l = tls_lib();
	EVP_PKEY		*pkey;
	BIO			*bio;
	char			*why;
	int			 encrypted = 0;

	if (jserver_tls_check_file(d, "cert_file", d->cert_file, cause) != 0)
		return (-1);
	l->err_clear();
	if (l->ctx_use_chain_file(ctx, d->cert_file) != 1) {
		why = jserver_tls_ssl_error(l, 0);
		xasprintf(cause, "domain %s: cert_file %s holds no PEM "
		    "certificate OpenSSL can read (%s)", d->name, d->cert_file,
		    why);
		free(why);
		return (-1);
	}
	if ((bio = l->bio_mem(key, (int)strlen(key))) == NULL)
		fatalx("BIO_new_mem_buf failed");
	pkey = l->pem_key(bio, NULL, jserver_tls_no_passphrase, &encrypted);
	l->bio_free(bio);
	if (pkey == NULL) {
		why = jserver_tls_ssl_error(l, 0);
		if (encrypted)
			xasprintf(cause, "domain %s: key_file %s is encrypted "
			    "and nothing can ask for its passphrase: keep it "
			    "decrypted, mode 0600 (openssl pkey -in %s -out "
			    "NEW.key)", d->name, d->key_file, d->key_file);
		else
			xasprintf(cause, "domain %s: key_file %s holds no PEM "
			    "private key OpenSSL can read (%s)", d->name,
			    d->key_file, why);
		free(why);
		l->err_clear();
		return (-1);
	}
	if (l->ctx_use_key(ctx, pkey) != 1 || l->ctx_check_key(ctx) != 1) {
		why = jserver_tls_ssl_error(l, 0);
		xasprintf(cause, "domain %s: key_file %s is not the key of "
		    "cert_file %s (%s)", d->name, d->key_file, d->cert_file,
		    why);
		free(why);
		l->pkey_free(pkey);
		l->err_clear();
		return (-1);
	}
	l->pkey_free(pkey);
	return (0);
}

/*
 * d's TLS context: its CA file (if any) checked and loaded, or the
 * system's store; its client certificate (if any) with key, the PEM text
 * of key_file.  0, or -1 and a cause.
 */
int
jserver_tls_setup(struct domain *d, const char *key, char **cause)
{
	const struct tls_lib	*l = tls_lib();
	SSL_CTX			*ctx;
	char			*why;

	if (d->ca_file != NULL &&
	    jserver_tls_check_file(d, "ca_file", d->ca_file, cause) != 0)
		return (-1);
	l->err_clear();
	if ((ctx = l->ctx_new(l->client_method())) == NULL) {
		why = jserver_tls_ssl_error(l, 0);
		xasprintf(cause, "domain %s: no TLS context: %s", d->name,
		    why);
		free(why);
		return (-1);
	}
	if (d->ca_file != NULL ? l->ctx_load_file(ctx, d->ca_file) != 1 :
	    l->ctx_default_paths(ctx) != 1) {
		why = jserver_tls_ssl_error(l, 0);
		if (d->ca_file != NULL)
			xasprintf(cause, "domain %s: ca_file %s holds no PEM "
			    "certificate OpenSSL can read (%s)", d->name,
			    d->ca_file, why);
		else
			xasprintf(cause, "domain %s: cannot load the system's "
			    "certificates (%s): install ca-certificates, or "
			    "name the server's CA in \"ca_file\"", d->name, why);
		free(why);
		l->ctx_free(ctx);
		return (-1);
	}
	if (d->cert_file != NULL &&
	    jserver_tls_client_cert(d, ctx, key, cause) != 0) {
		l->ctx_free(ctx);
		return (-1);
	}
	l->ctx_set_cert_cb(ctx, jserver_tls_asked);
	l->ctx_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	d->tls_ctx = ctx;
	return (0);
}

void
jserver_tls_free(struct domain *d)
{
	if (d->tls_ctx != NULL)
		tls_lib()->ctx_free(d->tls_ctx);
	d->tls_ctx = NULL;
}

/*
 * A bufferevent that connects (bufferevent_socket_connect, or evhttp)
 * and then speaks TLS to d's host, verified.  NULL if it cannot be made.
 */
struct bufferevent *
jserver_tls_bufferevent(struct event_base *base, const struct domain *d)
{
	const struct tls_lib	*l = tls_lib();
	struct bufferevent	*bev;
	struct in6_addr		 a;
	SSL			*ssl;

	if ((ssl = l->ssl_new(d->tls_ctx)) == NULL)
		return (NULL);
	if (inet_pton(AF_INET, d->host, &a) == 1 ||
	    inet_pton(AF_INET6, d->host, &a) == 1) {
		/* An address is checked against the certificate's IP SANs. */
		if (l->param_ip(l->get0_param(ssl), d->host) != 1)
			goto fail;
	} else if (l->set1_host(ssl, d->host) != 1 ||
	    l->ssl_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
	    TLSEXT_NAMETYPE_host_name, d->host) != 1)
		goto fail;
	/* Freeing the bufferevent frees ssl (BEV_OPT_CLOSE_ON_FREE). */
	bev = l->bev_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL)
		goto fail;
	return (bev);

fail:
	l->ssl_free(ssl);
	return (NULL);
}

/*
 * Why the TLS connection of bev failed, said so a person can act on it;
 * NULL if TLS did not fail (refused, closed: the caller's own words).
 * *refused is 1 when the server's certificate was not trusted, or the
 * server would not take ours (none, or one it does not trust).  late:
 * the call's time ran out, perhaps before any handshake.
 */
char *
jserver_tls_failure(struct bufferevent *bev, const char *name,
    const char *host, const char *ca_file, int late, int *refused)
{
	const struct tls_lib	*l = tls_lib();
	SSL			*ssl;
	unsigned long		 e;
	long			 v;
	char			*why, *msg;

	*refused = 0;
	if (bev == NULL || (ssl = l->bev_ssl(bev)) == NULL)
		return (NULL);
	if ((v = l->verify_result(ssl)) != X509_V_OK) {
		*refused = 1;
		if (v == X509_V_ERR_HOSTNAME_MISMATCH ||
		    v == X509_V_ERR_IP_ADDRESS_MISMATCH)
			xasprintf(&msg, "domain %s: the server's certificate "
			    "is not for %s (%s): its url in domains.json must "
			    "name a host the certificate names", name, host,
			    l->verify_string(v));
		else if (ca_file != NULL)
			xasprintf(&msg, "domain %s: the server's certificate "
			    "did not verify (%s) against ca_file %s, the only "
			    "CA trusted for it: name the CA that signed the "
			    "server's certificate there", name,
			    l->verify_string(v), ca_file);
		else
			xasprintf(&msg, "domain %s: the server's certificate "
			    "did not verify (%s) against the system's CAs: if "
			    "the server's CA is a private one, give its "
			    "certificate's path as \"ca_file\" in the "
			    "domain's entry in domains.json (runtimectl "
			    "domains checks it)", name, l->verify_string(v));
		return (msg);
	}
	e = l->bev_error(bev);
	/* The server asked for our certificate and we had none to give. */
	if (l->get_ex_data(ssl, 0) == &jserver_tls_asked_mark && !late) {
		*refused = 1;
		why = e != 0 ? jserver_tls_ssl_error(l, e) :
		    xstrdup("it closed the connection");
		xasprintf(&msg, "domain %s: the server asks for a client "
		    "certificate (%s) and the domain has none: give the PEM "
		    "certificate and key it takes as \"cert_file\" and "
		    "\"key_file\" in the domain's entry in domains.json "
		    "(runtimectl domains checks them)", name, why);
		free(why);
		return (msg);
	}
	/* Ours was sent and the server said what it thinks of it. */
	if (l->get_certificate(ssl) != NULL && jserver_tls_cert_alert(e)) {
		*refused = 1;
		why = jserver_tls_ssl_error(l, e);
		xasprintf(&msg, "domain %s: the server refused the domain's "
		    "client certificate (%s): its \"cert_file\" must be one "
		    "the server's client CA signed, not expired, and "
		    "\"key_file\" its key", name, why);
		free(why);
		return (msg);
	}
	if (e != 0) {
		why = jserver_tls_ssl_error(l, e);
		xasprintf(&msg, "domain %s: TLS with %s failed (%s): is the "
		    "url's port an https one?", name, host, why);
		free(why);
		return (msg);
	}
	/* Connected (or timed out) but no handshake: not a TLS server. */
	if (!late || l->init_finished(ssl))
		return (NULL);
	xasprintf(&msg, "domain %s: %s did not complete a TLS handshake: is "
	    "the url's port an https one?", name, host);
	return (msg);
}

/*
 * The connection closed with no reply and no TLS error, and the domain
 * presents a client certificate: under TLS 1.3 the client's handshake
 * ends before the server has judged that certificate, and the server's
 * alert refusing it is lost when the request sent meanwhile is answered
 * with a reset, which also leaves OpenSSL nothing to tell of the
 * handshake.  What to check, or NULL when no certificate of ours is in
 * play.
 */
char *
jserver_tls_closed(struct bufferevent *bev, const char *name)
{
	const struct tls_lib	*l = tls_lib();
	SSL			*ssl;
	char			*msg;

	if (bev == NULL || (ssl = l->bev_ssl(bev)) == NULL ||
	    l->get_certificate(ssl) == NULL)
		return (NULL);
	xasprintf(&msg, "domain %s: the connection closed without a reply; "
	    "the domain presents a client certificate, and a server that "
	    "refuses one may close the connection without saying so: check "
	    "that its \"cert_file\" is one the server's client CA signed, "
	    "not expired, with \"key_file\" its key, and that the server is "
	    "up", name);
	return (msg);
}

/* Is e an alert a server sends about a client's certificate? */
static int
jserver_tls_cert_alert(unsigned long e)
{
	if (e == 0 || ERR_GET_LIB(e) != ERR_LIB_SSL)
		return (0);
	switch (ERR_GET_REASON(e)) {
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
	case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
	case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
		return (1);
	}
	return (0);
}

/*
 * Up to want bytes more of bev's decrypted stream into in, read now
 * under libevent_openssl (which reads one record a turn of the loop): a
 * stream's body, 1 MiB a turn as jserver_pull reads a plain socket.
 * Each SSL_read is given room for a whole record (JSERVER_TLS_RECORD),
 * so no decrypted byte stays in OpenSSL where nothing would wake the
 * bufferevent for it; the caller leaves at least a record's worth of
 * the body unread, so more of it comes on the socket and libevent's
 * next read (and evhttp's turn) follows.  A record not yet whole, an end
 * or an error is left for that read to meet, as libevent would have.
 */
void
jserver_tls_pull(struct bufferevent *bev, struct evbuffer *in, uint64_t want)
{
	const struct tls_lib	*l = tls_lib();
	struct evbuffer_iovec	 v;
	SSL			*ssl;
	int			 n;

	if ((ssl = l->bev_ssl(bev)) == NULL)
		return;
	while (want >= JSERVER_TLS_RECORD) {
		if (evbuffer_reserve_space(in, (ev_ssize_t)want, &v, 1) != 1)
			return;
		if (v.iov_len > want)
			v.iov_len = want;
		if (v.iov_len > INT_MAX)
			v.iov_len = INT_MAX;
		l->err_clear();
		if ((n = l->ssl_read(ssl, v.iov_base, (int)v.iov_len)) <= 0) {
			v.iov_len = 0;
			evbuffer_commit_space(in, &v, 1);
			l->err_clear();
			return;
		}
		v.iov_len = (size_t)n;
		evbuffer_commit_space(in, &v, 1);
		want -= (uint64_t)n;
	}
}
