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

/*
 * The msgpack forms (the daemon keeps outputs packed, decision 097) give
 * the bytes of the json-c forms packed: a merge of two views packs as
 * mpjson_pack(streamcap_merge(...)), a fit as mpjson_pack(streamcap_fit).
 */
struct packed {
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;
};

static const msgpack_object *
packed_of(struct packed *p, struct json_object *o)
{
	size_t	off = 0;

	msgpack_sbuffer_init(&p->sb);
	msgpack_packer_init(&p->pk, &p->sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&p->u);
	mpjson_pack(&p->pk, o);
	cr_assert_eq(msgpack_unpack_next(&p->u, p->sb.data, p->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	return (&p->u.data);
}

static void
packed_free(struct packed *p)
{
	msgpack_unpacked_destroy(&p->u);
	msgpack_sbuffer_destroy(&p->sb);
}

/* merge(last, add) both ways; the json-c result (a new reference). */
static struct json_object *
merge_both(struct json_object *last, struct json_object *add)
{
	struct packed		 a, b, want;
	struct json_object	*m;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;

	m = streamcap_merge(last, add);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	streamcap_merge_obj(&pk, packed_of(&a, last), packed_of(&b, add));
	packed_of(&want, m);
	cr_assert_eq(sb.size, want.sb.size, "merge: %zu bytes, json-c %zu",
	    sb.size, want.sb.size);
	cr_assert(memcmp(sb.data, want.sb.data, sb.size) == 0);
	packed_free(&a);
	packed_free(&b);
	packed_free(&want);
	msgpack_sbuffer_destroy(&sb);
	return (m);
}

/* fit(out) both ways; the json-c result (a new reference). */
static struct json_object *
fit_both(struct json_object *out)
{
	struct packed		 a, want;
	struct json_object	*f;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;

	f = streamcap_fit(out);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (streamcap_fit_obj(&pk, packed_of(&a, out)) == 0) {
		cr_assert_eq(f, out, "fit copied what the packed form kept");
		msgpack_sbuffer_write(&sb, a.sb.data, a.sb.size);
	}
	packed_of(&want, f);
	cr_assert_eq(sb.size, want.sb.size, "fit: %zu bytes, json-c %zu",
	    sb.size, want.sb.size);
	cr_assert(memcmp(sb.data, want.sb.data, sb.size) == 0);
	packed_free(&a);
	packed_free(&want);
	msgpack_sbuffer_destroy(&sb);
	return (f);
}

Test(streamcap, packed_agrees_with_json)
{
	struct json_object	*acc, *piece, *m, *o, *tr, *c;
	char			*t;
	size_t			 len, off, step, i;

	/* Short pieces, and pieces that grow past the cap. */
	t = text_of(1300000, &len);
	o = stream("", 0);
	acc = fit_both(o);
	json_object_put(o);
	for (off = 0, i = 0; off < len; off += step, i++) {
		step = i % 3 == 0 ? 7 : 150001;
		if (step > len - off)
			step = len - off;
		while (off + step < len &&
		    ((unsigned char)t[off + step] & 0xc0) == 0x80)
			step++;
		o = stream(t + off, step);
		piece = fit_both(o);
		json_object_put(o);
		m = merge_both(acc, piece);
		json_object_put(piece);
		json_object_put(acc);
		acc = m;
	}
	cr_assert_gt(streamcap_cut(acc), 0);

	/* A piece the agent cut, merged after a cut stream. */
	o = stream(t, len);
	piece = fit_both(o);
	json_object_put(o);
	m = merge_both(acc, piece);
	json_object_put(m);
	o = stream("x", 1);
	m = merge_both(o, piece);
	json_object_put(m);
	json_object_put(o);
	json_object_put(piece);
	json_object_put(acc);

	/* A state that lies; a stream without a name; stderr. */
	o = stream("abc", 3);
	c = json_object_new_object();
	json_object_object_add(c, "characters", json_object_new_int64(5));
	json_object_object_add(c, "head_bytes", json_object_new_int64(99));
	tr = json_object_new_object();
	json_object_object_add(tr, "runtimed_cut", c);
	json_object_object_add(o, "transient", tr);
	piece = json_object_new_object();
	json_object_object_add(piece, "text", json_object_new_string("d"));
	m = merge_both(o, piece);
	json_object_put(m);
	m = merge_both(piece, o);
	json_object_put(m);
	json_object_object_add(o, "name", json_object_new_string("stderr"));
	m = merge_both(o, o);
	json_object_put(m);
	json_object_put(piece);
	json_object_put(o);
	free(t);
}
