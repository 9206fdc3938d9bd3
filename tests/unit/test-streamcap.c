/* SPDX-License-Identifier: ISC */
/*
 * test-streamcap.c: stream outputs kept as head and tail.  However a
 * stream arrives (one piece, many pieces, pieces the agent already cut)
 * the result is the first STREAMCAP_HEAD and last STREAMCAP_TAIL
 * characters with a marker counting the rest.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common.h"

static char	*text_of(size_t, size_t *);
static size_t	bytes_of(const char *, size_t);
static char	*expect_of(const char *, size_t, size_t, size_t *);
static struct json_object	*stream(const char *, size_t);
static void	assert_text(struct json_object *, const char *, size_t);

/* n characters cycling through ASCII, é (2 bytes) and 😀 (4 bytes). */
static char *
text_of(size_t n, size_t *len)
{
	static const char	*pieces[] = { "a", "\xc3\xa9", "b",
	    "\xf0\x9f\x98\x80", "\n" };
	char			*t = xmalloc(n * 4 + 1), *p = t;
	size_t			 i, l;

	for (i = 0; i < n; i++) {
		l = strlen(pieces[i % 5]);
		memcpy(p, pieces[i % 5], l);
		p += l;
	}
	*p = '\0';
	*len = (size_t)(p - t);
	return (t);
}

/* Bytes of the first n characters of t. */
static size_t
bytes_of(const char *t, size_t n)
{
	size_t	i = 0;

	while (n > 0) {
		i++;
		while (((unsigned char)t[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return (i);
}

/* The expected cut text of t (total characters n). */
static char *
expect_of(const char *t, size_t len, size_t n, size_t *elen)
{
	char	*m, *e;
	size_t	 h = bytes_of(t, STREAMCAP_HEAD);
	size_t	 s = bytes_of(t, n - STREAMCAP_TAIL);

	xasprintf(&m, "\n[... runtimed: %zu characters cut here ...]\n",
	    n - STREAMCAP_HEAD - STREAMCAP_TAIL);
	*elen = h + strlen(m) + (len - s);
	e = xmalloc(*elen + 1);
	memcpy(e, t, h);
	memcpy(e + h, m, strlen(m));
	memcpy(e + h + strlen(m), t + s, len - s);
	free(m);
	return (e);
}

static struct json_object *
stream(const char *t, size_t len)
{
	struct json_object	*o = json_object_new_object();

	json_object_object_add(o, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(o, "name", json_object_new_string("stdout"));
	json_object_object_add(o, "text", json_object_new_string_len(t,
	    (int)len));
	return (o);
}

static void
assert_text(struct json_object *o, const char *want, size_t wlen)
{
	struct json_object	*v;

	cr_assert(json_object_object_get_ex(o, "text", &v));
	cr_assert_eq((size_t)json_object_get_string_len(v), wlen,
	    "text of %d bytes, wanted %zu", json_object_get_string_len(v),
	    wlen);
	cr_assert(memcmp(json_object_get_string(v), want, wlen) == 0);
}

Test(streamcap, short_text_whole)
{
	struct json_object	*o = stream("hello\n", 6), *f;

	f = streamcap_fit(o);
	cr_assert_eq(f, o);
	cr_assert_eq(streamcap_cut(f), 0);
	cr_assert(!streamcap_truncated(f));
	json_object_put(f);
	json_object_put(o);
}

Test(streamcap, one_piece_and_many_pieces_agree)
{
	size_t			 n = 700001, len, elen, off, k, seed = 7;
	char			*t = text_of(n, &len), *e;
	struct json_object	*whole, *one, *acc, *m, *piece;

	e = expect_of(t, len, n, &elen);
	whole = stream(t, len);
	one = streamcap_fit(whole);
	json_object_put(whole);
	assert_text(one, e, elen);
	cr_assert_eq(streamcap_cut(one), n - 500000);
	cr_assert(streamcap_truncated(one));

	/* The same text in pieces of 1 to ~64 KiB, split anywhere on a
	 * character boundary, merged as the daemon does. */
	acc = NULL;
	for (off = 0; off < len; off += k) {
		seed = seed * 1103515245 + 12345;
		k = 1 + (seed >> 8) % 65536;
		if (off + k > len)
			k = len - off;
		while (off + k < len &&
		    ((unsigned char)t[off + k] & 0xc0) == 0x80)
			k++;
		piece = stream(t + off, k);
		if (acc == NULL)
			acc = streamcap_fit(piece);
		else {
			m = streamcap_merge(acc, piece);
			json_object_put(acc);
			acc = m;
		}
		json_object_put(piece);
	}
	assert_text(acc, e, elen);
	cr_assert_eq(streamcap_cut(acc), n - 500000);
	json_object_put(acc);
	json_object_put(one);
	free(e);
	free(t);
}

Test(streamcap, merge_after_agent_cut)
{
	size_t			 n = 600000, len, elen;
	char			*t = text_of(n, &len), *e, *all;
	struct json_object	*small, *big, *m;

	/* "abc", then a piece the agent cut: the whole is cut once. */
	small = stream("abc", 3);
	m = stream(t, len);
	big = streamcap_fit(m);
	json_object_put(m);
	m = streamcap_merge(small, big);
	all = xmalloc(len + 4);
	memcpy(all, "abc", 3);
	memcpy(all + 3, t, len + 1);
	e = expect_of(all, len + 3, n + 3, &elen);
	assert_text(m, e, elen);
	cr_assert_eq(streamcap_cut(m), n + 3 - 500000);
	json_object_put(m);
	json_object_put(big);
	json_object_put(small);
	free(all);
	free(e);
	free(t);
}

Test(streamcap, a_state_that_lies_is_ignored)
{
	struct json_object	*o = stream("abc", 3), *tr, *c, *m, *d;

	c = json_object_new_object();
	json_object_object_add(c, "characters", json_object_new_int64(5));
	json_object_object_add(c, "head_bytes", json_object_new_int64(99));
	tr = json_object_new_object();
	json_object_object_add(tr, "runtimed_cut", c);
	json_object_object_add(o, "transient", tr);
	d = stream("def", 3);
	m = streamcap_merge(o, d);
	json_object_put(d);
	assert_text(m, "abcdef", 6);
	cr_assert_eq(streamcap_cut(m), 0);
	json_object_put(m);
	json_object_put(o);
}
