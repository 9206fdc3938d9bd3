/* SPDX-License-Identifier: ISC */
/*
 * utf8.c: strict UTF-8 (as Python decodes it: no overlongs, no
 * surrogates, nothing past U+10FFFF) checked, and repaired where bytes
 * from outside (kernels, blob files) enter the suite.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static size_t	utf8_seq(const unsigned char *, size_t, size_t *);

/*
 * Length of the valid sequence at p (1-4), or 0 when it is invalid; *sub
 * gets the length of its maximal invalid subpart (Unicode 3.9, what
 * Python's "replace" handler turns into one U+FFFD).
 */
static size_t
utf8_seq(const unsigned char *p, size_t left, size_t *sub)
{
	unsigned char	lo = 0x80, hi = 0xbf;
	size_t		n, k;

	*sub = 1;
	if (p[0] < 0x80)
		return (1);
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return (0);
	for (k = 1; k < n; k++) {
		if (k >= left || p[k] < lo || p[k] > hi) {
			*sub = k;
			return (0);
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return (n);
}

/* Is s valid UTF-8?  If not, *bad (when given) is the first bad byte. */
int
utf8_valid(const char *s, size_t len, size_t *bad)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n, sub;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			/* ASCII runs a word at a time. */
			while (i + 8 <= len) {
				uint64_t	w;

				memcpy(&w, p + i, 8);
				if (w & 0x8080808080808080ULL)
					break;
				i += 8;
			}
			continue;
		}
		if ((n = utf8_seq(p + i, len - i, &sub)) == 0) {
			if (bad != NULL)
				*bad = i;
			return (0);
		}
		i += n;
	}
	return (1);
}

/*
 * s with every invalid sequence replaced by U+FFFD, or NULL when s is
 * already valid.  Caller frees; *outlen gets the new length.
 */
char *
utf8_repair(const char *s, size_t len, size_t *outlen)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, n, sub, o = 0, bad;
	char			*out;

	if (utf8_valid(s, len, &bad))
		return (NULL);
	/* Each bad byte grows to at most 3. */
	out = xmalloc(len * 3 + 1);
	memcpy(out, s, bad);
	o = bad;
	i = bad;
	while (i < len) {
		if ((n = utf8_seq(p + i, len - i, &sub)) != 0) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		memcpy(out + o, "\xef\xbf\xbd", 3);
		o += 3;
		i += sub;
	}
	out[o] = '\0';
	*outlen = o;
	return (out);
}

/*
 * Characters (Unicode code points, what Python's len() counts) in s: the
 * bytes that do not continue a sequence.
 */
size_t
utf8_chars(const char *s, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	}
	return (n);
}

/* Byte offset just after the first n characters of s. */
size_t
utf8_skip(const char *s, size_t len, size_t n)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
			return (i);
	}
	return (len);
}

/* Byte offset where the last n characters of s begin. */
size_t
utf8_back(const char *s, size_t len, size_t n)
{
	size_t	i = len;

	while (n > 0 && i > 0) {
		i--;
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n--;
	}
	return (i);
}
