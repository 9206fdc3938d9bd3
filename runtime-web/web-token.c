/* SPDX-License-Identifier: ISC */
/*
 * web-token.c: the per-page token every POST carries (CSRF): a random
 * nonce and an HMAC-SHA256 of it and the notebook id under the secret,
 * so a token is checked without keeping state and one page's token does
 * not act on another notebook.
 */

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "web.h"

#define WEB_TOKEN_NONCE	16	/* bytes; 32 hex */

static void	web_token_mac(const char *, const char *, char [65]);

static void
web_token_mac(const char *nonce, const char *nb, char hex[65])
{
	unsigned char	 mac[EVP_MAX_MD_SIZE];
	unsigned int	 len = 0;
	char		*msg;

	xasprintf(&msg, "csrf|%s|%s", nb, nonce);
	HMAC(EVP_sha256(), web_secret, WEB_SECRET_LEN,
	    (const unsigned char *)msg, strlen(msg), mac, &len);
	util_hex(mac, 32, hex);
	free(msg);
}

/* A fresh token for a page of notebook nb.  Caller frees. */
char *
web_token_make(const char *nb)
{
	unsigned char	 raw[WEB_TOKEN_NONCE];
	char		 nonce[2 * WEB_TOKEN_NONCE + 1], mac[65], *t;

	if (RAND_bytes(raw, sizeof raw) != 1)
		fatalx("RAND_bytes failed");
	util_hex(raw, sizeof raw, nonce);
	web_token_mac(nonce, nb, mac);
	xasprintf(&t, "%s.%s", nonce, mac);
	return (t);
}

/* Is token one we made for notebook nb? */
int
web_token_check(const char *token, const char *nb)
{
	char	 nonce[2 * WEB_TOKEN_NONCE + 1], mac[65];

	if (token == NULL || strlen(token) != 2 * WEB_TOKEN_NONCE + 1 + 64 ||
	    token[2 * WEB_TOKEN_NONCE] != '.')
		return (0);
	memcpy(nonce, token, 2 * WEB_TOKEN_NONCE);
	nonce[2 * WEB_TOKEN_NONCE] = '\0';
	web_token_mac(nonce, nb, mac);
	return (web_form_equal(token + 2 * WEB_TOKEN_NONCE + 1, mac));
}
