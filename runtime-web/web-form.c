/* SPDX-License-Identifier: ISC */
/*
 * web-form.c: the parts of a request runtimed-web parses itself: a
 * query string or an application/x-www-form-urlencoded body, a Cookie
 * header, a notebook id in a path.  Everything here takes hostile bytes
 * (fuzz/fuzz-web.c).
 */

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "web.h"

static int	web_form_hex(int);

static int
web_form_hex(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * The value of key in "a=1&b=2" (percent and + decoded), or NULL when
 * absent or when it decodes to a NUL.  Caller frees.
 */
char *
web_form_get(const char *s, size_t len, const char *key)
{
	size_t		 klen = strlen(key), i, j, end;
	const char	*p = s, *stop = s + len, *amp;
	char		*out;
	int		 h, l;

	while (p < stop) {
		amp = memchr(p, '&', stop - p);
		end = (amp != NULL ? amp : stop) - p;
		if (end > klen && memcmp(p, key, klen) == 0 && p[klen] == '=') {
			out = xmalloc(end - klen);
			for (i = klen + 1, j = 0; i < end; i++) {
				if (p[i] == '+')
					out[j++] = ' ';
				else if (p[i] == '%' && i + 2 < end &&
				    (h = web_form_hex((u_char)p[i + 1])) != -1 &&
				    (l = web_form_hex((u_char)p[i + 2])) != -1) {
					out[j++] = (char)(h << 4 | l);
					i += 2;
				} else
					out[j++] = p[i];
			}
			out[j] = '\0';
			if (memchr(out, '\0', j) != NULL) {
				free(out);
				return (NULL);
			}
			return (out);
		}
		if (end == klen && memcmp(p, key, klen) == 0)
			return (xstrdup(""));
		if (amp == NULL)
			break;
		p = amp + 1;
	}
	return (NULL);
}

/* The value of cookie name in a Cookie header, or NULL.  Caller frees. */
char *
web_form_cookie(const char *header, const char *name)
{
	size_t		 nlen = strlen(name), vlen;
	const char	*p = header, *semi;

	if (header == NULL)
		return (NULL);
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t')
			p++;
		semi = strchr(p, ';');
		vlen = semi != NULL ? (size_t)(semi - p) : strlen(p);
		if (vlen > nlen && strncmp(p, name, nlen) == 0 &&
		    p[nlen] == '=')
			return (xstrndup(p + nlen + 1, vlen - nlen - 1));
		if (semi == NULL)
			break;
		p = semi + 1;
	}
	return (NULL);
}

/* A notebook id as the daemon makes them: 1-36 of [0-9a-f-]. */
int
web_form_id_ok(const char *id)
{
	size_t	len = strlen(id);

	return (len > 0 && len <= 36 &&
	    strspn(id, "0123456789abcdef-") == len);
}

/* Equal strings, in time that does not depend on where they differ. */
int
web_form_equal(const char *a, const char *b)
{
	size_t	la, lb;

	if (a == NULL || b == NULL)
		return (0);
	la = strlen(a);
	lb = strlen(b);
	if (la != lb || la == 0)
		return (0);
	return (CRYPTO_memcmp(a, b, la) == 0);
}
