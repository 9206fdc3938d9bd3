/* SPDX-License-Identifier: ISC */
/*
 * test-json-splice.c: long string literals taken verbatim give exactly
 * json-c's result (value, error, where parsing stopped), whole and in
 * slices cut anywhere, and are taken where they can be.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common.h"

#define LONG_LEN	5000
#define DEPTH		64
#define STRICT	(JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS)

/* How one parse came out. */
struct outcome {
	struct json_object	*v;
	enum json_tokener_error	 err;
	size_t			 end;	/* in the last slice fed */
	size_t			 slice;	/* the slice it ended in */
	size_t			 taken;
	int			 control;
};

/* A text with LONG_LEN 'A'-ish base64 bytes where "@" is; caller frees. */
static char *
expand(const char *tmpl, size_t *lenp)
{
	char	*out, *o;
	size_t	 i, n = 0;

	for (i = 0; tmpl[i] != '\0'; i++)
		n += tmpl[i] == '@' ? LONG_LEN : 1;
	o = out = xmalloc(n + 1);
	for (i = 0; tmpl[i] != '\0'; i++) {
		if (tmpl[i] != '@') {
			*o++ = tmpl[i];
			continue;
		}
		for (size_t k = 0; k < LONG_LEN; k++)
			*o++ = "ABCDEFGHIJKLMNOPQRSTUVWXYZ+/=09\xc3\xa9"
			    [k % 33];
	}
	*o = '\0';
	*lenp = n;
	return (out);
}

/* json-c alone on the slices cut at cuts[0..ncuts). */
static void
plain(const char *t, size_t len, int flags, const size_t *cuts,
    size_t ncuts, struct outcome *o)
{
	struct json_tokener	*tok = json_tokener_new_ex(DEPTH);
	size_t			 k, from = 0, to;

	memset(o, 0, sizeof *o);
	json_tokener_set_flags(tok, flags);
	for (k = 0; k <= ncuts; k++) {
		to = k < ncuts ? cuts[k] : len;
		o->v = json_tokener_parse_ex(tok, t + from, (int)(to - from));
		o->err = json_tokener_get_error(tok);
		o->end = json_tokener_get_parse_end(tok);
		o->slice = k;
		if (o->v != NULL || o->err != json_tokener_continue)
			break;
		from = to;
	}
	json_tokener_free(tok);
}

/* The same through a splice. */
static void
spliced(const char *t, size_t len, int flags, int sflags, size_t min,
    const size_t *cuts, size_t ncuts, struct outcome *o)
{
	struct json_tokener	*tok = json_tokener_new_ex(DEPTH);
	struct json_splice	*s;
	enum json_splice_status	 rc = JSON_SPLICE_MORE;
	size_t			 k, from = 0, to;

	memset(o, 0, sizeof *o);
	json_tokener_set_flags(tok, flags);
	s = json_splice_create(tok, min, sflags);
	for (k = 0; k <= ncuts; k++) {
		to = k < ncuts ? cuts[k] : len;
		rc = json_splice_feed(s, t + from, to - from, &o->v);
		o->end = json_splice_parse_end(s);
		o->slice = k;
		if (rc != JSON_SPLICE_MORE)
			break;
		from = to;
	}
	cr_assert_neq(rc, JSON_SPLICE_REDO, "json-c 0.16 never needs a redo");
	o->control = rc == JSON_SPLICE_CONTROL;
	o->err = json_tokener_get_error(tok);
	o->taken = json_splice_taken(s);
	json_splice_free(s);
	json_tokener_free(tok);
}

static void
same(struct outcome *a, struct outcome *b, const char *what)
{
	cr_assert_eq(a->v == NULL, b->v == NULL, "%s: value or not", what);
	cr_assert_eq(a->err, b->err, "%s: error %s, not json-c's %s", what,
	    json_tokener_error_desc(b->err), json_tokener_error_desc(a->err));
	cr_assert_eq(a->slice, b->slice, "%s: slice", what);
	cr_assert_eq(a->end, b->end, "%s: end %zu, not %zu", what, b->end,
	    a->end);
	if (a->v != NULL)
		cr_assert(json_object_equal(a->v, b->v), "%s: value", what);
	json_object_put(a->v);
	json_object_put(b->v);
}

/* Whole and cut once at each offset near every long literal's ends. */
static size_t
check(const char *tmpl, int flags)
{
	struct outcome	 a, b;
	const char	*at;
	char		*t, what[64];
	size_t		 len, end, cut, taken, open;

	t = expand(tmpl, &len);
	plain(t, len, flags, NULL, 0, &a);
	spliced(t, len, flags, JSON_SPLICE_WHOLE, 1024, NULL, 0, &b);
	taken = b.taken;
	same(&a, &b, "whole");
	/* json_splice_parse, as the agent calls it. */
	{
		struct json_tokener	*tok = json_tokener_new_ex(DEPTH);

		json_tokener_set_flags(tok, flags);
		b.v = json_splice_parse(tok, t, len, 1024, &end);
		b.err = json_tokener_get_error(tok);
		b.end = end;
		b.slice = 0;
		plain(t, len, flags, NULL, 0, &a);
		same(&a, &b, "parse");
		json_tokener_free(tok);
	}
	if ((at = strchr(tmpl, '@')) != NULL) {
		/* Cuts near the first literal's quotes (offsets in t). */
		open = (size_t)(at - tmpl) - 1;
		for (cut = open > 8 ? open - 8 : 1; cut < len; cut++) {
			if (cut > open + 8 && cut + 8 < open + LONG_LEN + 1)
				continue;
			if (cut > open + LONG_LEN + 9)
				break;
			snprintf(what, sizeof what, "cut at %zu", cut);
			plain(t, len, flags, &cut, 1, &a);
			spliced(t, len, flags, 0, 1024, &cut, 1, &b);
			same(&a, &b, what);
		}
	}
	free(t);
	return (taken);
}

Test(json_splice, literal_value_taken)
{
	cr_assert_eq(check("{\"a\": [\"x\", \"@\", 1], \"b\": \"tail\"}",
	    STRICT), 1);
	cr_assert_eq(check("{\"a\":\"@\",\"b\":\"@\"}", STRICT), 2);
	cr_assert_eq(check("[\"@\"]", 0), 1);
}

/*
 * The next cut after j: every offset within 4 bytes of a quote, a few
 * between.
 */
static size_t
next_cut(const char *t, size_t len, size_t j)
{
	size_t	k;

	for (k = j + 1; k < len && t[k] != '"'; k++)
		;
	if (k == len || k <= j + 5)
		return (j + 1);
	for (k = j > 4 ? j - 4 : 0; k < j; k++) {
		if (t[k] == '"')
			return (j + 1);
	}
	for (k = j + 1; k < len && t[k] != '"'; k++)
		;
	return (j + 499 < k - 4 ? j + 499 : k - 4);
}

Test(json_splice, every_slice_offset)
{
	struct outcome	 a, b;
	char		*t, what[64];
	size_t		 len, cut[2], i, j;

	t = expand("{\"k\": [\"short\", \"@\", {\"n\": \"@\"}], \"z\": 1}",
	    &len);
	/* A cut near the first literal's opening quote, one near a quote. */
	for (i = 8; i < 8 + 24; i++) {
		for (j = i + 1; j < len; j = next_cut(t, len, j)) {
			cut[0] = i;
			cut[1] = j;
			snprintf(what, sizeof what, "cuts %zu %zu", i, j);
			plain(t, len, STRICT, cut, 2, &a);
			spliced(t, len, STRICT, 0, 1024, cut, 2, &b);
			cr_assert_geq(b.taken, 1, "%s: taken", what);
			same(&a, &b, what);
		}
	}
	/* Many small slices: one literal spread over 50 of them. */
	{
		size_t	cuts[200], n = 0, at;

		for (at = 100; at < len && n < 200; at += 100)
			cuts[n++] = at;
		plain(t, len, STRICT, cuts, n, &a);
		spliced(t, len, STRICT, 0, 1024, cuts, n, &b);
		cr_assert_eq(b.taken, 2);
		same(&a, &b, "100-byte slices");
	}
	free(t);
}

Test(json_splice, escapes_and_controls_near)
{
	static const char *const tmpl[] = {
		"{\"a\":\"\\n@\"}", "{\"a\":\"@\\n\"}", "{\"a\":\"@\\\\\"}",
		"{\"a\":\"\\\"@\"}", "{\"a\":\"@\\u0041\"}",
		"{\"a\":\"x\\\"\",\"b\":\"@\"}", "{\"a\":\"\\\\\",\"b\":\"@\"}",
		"{\"a\":\"\x01@\"}", "{\"a\":\"@\x1f\"}", "{\"a\":\"@\t@\"}",
		"{\"a\":\"\x01\",\"b\":\"@\"}", "{\"a\":\"@\"\n,\"b\":\"@\"}",
		NULL
	};
	struct outcome	 a, b;
	char		*t;
	size_t		 i, len, cut;

	for (i = 0; tmpl[i] != NULL; i++)
		check(tmpl[i], STRICT);
	/* Refused with JSON_SPLICE_CONTROLS, where the byte is. */
	t = expand("{\"a\":\"@\x01@\"}", &len);
	for (cut = 1; cut < len; cut += 333) {
		spliced(t, len, STRICT, JSON_SPLICE_CONTROLS, 1024, &cut, 1,
		    &b);
		cr_assert(b.control);
		cr_assert_eq(b.slice, cut <= 6 + LONG_LEN ? 1 : 0);
		json_object_put(b.v);
	}
	plain(t, len, STRICT, NULL, 0, &a);
	cr_assert_not_null(a.v, "json-c takes raw controls");
	json_object_put(a.v);
	free(t);
	/* A literal that is long and clean but for one escape at its end. */
	cr_assert_eq(check("{\"a\":[\"@\\t\", \"@\"]}", STRICT), 1);
}

Test(json_splice, long_key_and_top_level)
{
	cr_assert_eq(check("{\"@\": 1}", STRICT), 0);
	cr_assert_eq(check("{\"@\": \"@\"}", STRICT), 1);
	cr_assert_eq(check("\"@\"", STRICT), 0);
	cr_assert_eq(check("\"@\"  \n", 0), 0);
	cr_assert_eq(check("\"@\" [1]", STRICT), 0);
	/*
	 * Not strict: single quotes and comments hold double quotes, which
	 * put the scanner out of step with json-c: only what json-c says is
	 * a string value's opening quote is taken.
	 */
	check("{'x\"': \"@\", /* \" */ \"b\": '\"@'}", 0);
	check("{\"a\": '@', \"b\": \"@\", 'c': '\"@\"'}", 0);
	cr_assert_eq(check("{'x': \"@\"}", 0), 1);
	cr_assert_eq(check("['@', \"@\"]", 0), 1);
}

Test(json_splice, nesting)
{
	cr_assert_eq(check("[[[[{\"a\":[[\"@\"]],\"b\":{\"c\":\"@\"}}]]]]",
	    STRICT), 2);
	cr_assert_eq(check("{\"cells\":[{\"outputs\":[{\"data\":"
	    "{\"image/png\":\"@\",\"text/plain\":[\"<Figure>\"]}}]}]}",
	    STRICT), 1);
}

Test(json_splice, trailing_and_truncated)
{
	static const char *const tmpl[] = {
		"{\"a\":\"@\"} x", "{\"a\":\"@\"}}", "{\"a\":\"@\"]",
		"[\"@\" \"@\"]", "[\"@\",]", "{\"a\":\"@\"",
		"{\"a\":\"@", "[\"@\"", "[\"@\"\0]", "{\"a\":\"@\"} {\"b\":1}",
		NULL
	};
	struct outcome	 a, b;
	char		*t;
	size_t		 i, len, n;

	for (i = 0; tmpl[i] != NULL; i++) {
		check(tmpl[i], STRICT);
		check(tmpl[i], JSON_TOKENER_STRICT);
		check(tmpl[i], 0);
	}
	/* Every prefix of a text: json-c's error class, whole. */
	t = expand("{\"a\": [\"@\", \"@\"], \"b\": true}", &len);
	for (n = 0; n <= len; n += (n > 12 && n < len - 12) ? 41 : 1) {
		plain(t, n, STRICT, NULL, 0, &a);
		spliced(t, n, STRICT, JSON_SPLICE_WHOLE, 1024, NULL, 0, &b);
		same(&a, &b, "prefix");
	}
	free(t);
}

Test(json_splice, scan_finds_controls)
{
	const unsigned char	 t[] = "{\"a\": \"x\\\"\x01\", \n \"b\": 1}";
	int			 in = 0, esc = 0;
	size_t			 at;

	at = json_splice_scan(t, sizeof t - 1, &in, &esc);
	cr_assert_eq(at, 10);
	cr_assert_eq(in, 1);
	/* Across slices: the backslash ends the first. */
	in = esc = 0;
	cr_assert_eq(json_splice_scan(t, 9, &in, &esc), 9);
	cr_assert_eq(esc, 1);
	cr_assert_eq(json_splice_scan(t + 9, sizeof t - 10, &in, &esc), 1);
	in = esc = 0;
	cr_assert_eq(json_splice_scan((const unsigned char *)"{\"a\":\n1}", 8,
	    &in, &esc), 8, "a newline between values is no string's");
}

/* Literals of megabytes across many 256 KB slices, as the reader reads. */
Test(json_splice, big_literals_in_slices)
{
	struct outcome	 a, b;
	char		*t;
	size_t		 len, n = 0, cuts[64], big = 3 * 1024 * 1024 + 7, k;

	t = xmalloc(2 * big + 64);
	len = (size_t)sprintf(t, "{\"a\": [\"");
	for (k = 0; k < big; k++)
		t[len++] = "QUJD+/=="[k % 8];
	len += (size_t)sprintf(t + len, "\", \"x\"], \"b\": \"");
	for (k = 0; k < big; k++)
		t[len++] = 'z';
	len += (size_t)sprintf(t + len, "\"}");
	for (k = 256 * 1024; k < len && n < 64; k += 256 * 1024)
		cuts[n++] = k;
	plain(t, len, STRICT, cuts, n, &a);
	spliced(t, len, STRICT, 0, JSON_SPLICE_MIN, cuts, n, &b);
	cr_assert_eq(b.taken, 2);
	same(&a, &b, "256 KB slices");
	free(t);
}
