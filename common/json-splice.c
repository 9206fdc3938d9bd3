/* SPDX-License-Identifier: ISC */
/*
 * json-splice.c: long JSON string literals taken verbatim around json-c.
 *
 * A string literal with no backslash and no byte below 0x20 has as its
 * value exactly its bytes, but json-c copies them one at a time (about
 * 1.9 ns a byte here: 2.6 ms for a 1.33 MB base64 image).  So json-c
 * is fed the text up to and including the literal's opening quote, and
 * then, if its published state says it is now at the start of a string
 * value, only the closing quote; the empty string it makes is then set
 * to the literal's bytes with one copy.  json-c parses every structure
 * and every short string; where its state is not the one expected (an
 * object key, a comment, another json-c) the literal goes to it as is.
 * Decision 033.
 *
 * The same scanner finds raw control characters in strings, which JSON
 * refuses and json-c does not (the .ipynb readers check for them).
 */

#include <json-c/printbuf.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common.h"

/* The string state of a text, carried across the slices it comes in. */
struct json_splice_state {
	int	in;		/* inside a string */
	int	esc;		/* after a backslash in one */
	int	controls;	/* stop at a raw control byte in one */
	size_t	min;		/* literals this long are taken; 0: none */
	int	whole;		/* the text ends here: none is cut */
};

struct json_splice {
	struct json_tokener	*tok;
	struct json_splice_state st;
	size_t			 end;		/* where parsing stopped */
	char			*acc;		/* a literal a slice cut */
	size_t			 acclen;
	size_t			 accsize;
	int			 accum;		/* json-c is in it */
	size_t			 taken;		/* literals set verbatim */
};

/* A buffer for cut literals bigger than this is not kept for the next. */
#define JSON_SPLICE_KEEP	(1024 * 1024)

enum json_splice_event {
	JSON_SPLICE_EV_END,
	JSON_SPLICE_EV_CONTROL,		/* a raw control byte in a string */
	JSON_SPLICE_EV_LITERAL,		/* a long literal's opening quote */
};

static inline size_t json_splice_span(const unsigned char *, size_t, size_t,
		    int) __attribute__((__always_inline__));
static enum json_splice_event	json_splice_step(struct json_splice_state *,
		    const unsigned char *, size_t *, size_t);
static enum json_splice_status	json_splice_chunk(struct json_splice *,
		    const char *, size_t, size_t, struct json_object **);
static int	json_splice_opened(struct json_splice *);
static enum json_splice_status	json_splice_close(struct json_splice *,
		    const char *, size_t);
static void	json_splice_keep(struct json_splice *, const char *, size_t);

#ifndef __SSE2__
#define JSON_SPLICE_ONES	0x0101010101010101ULL
#define JSON_SPLICE_HIGHS	0x8080808080808080ULL

/* Does a byte of w equal c, or (less) fall below 0x20?  SWAR. */
static inline int
json_splice_has(uint64_t w, unsigned c, int less)
{
	uint64_t	x = w ^ (JSON_SPLICE_ONES * c);

	if (((x - JSON_SPLICE_ONES) & ~x & JSON_SPLICE_HIGHS) != 0)
		return (1);
	return (less &&
	    ((w - JSON_SPLICE_ONES * 0x20) & ~w & JSON_SPLICE_HIGHS) != 0);
}
#endif

/*
 * The first byte at or after i that matters to the string state, or
 * len: outside a string a quote; inside one a quote, a backslash or a
 * byte below 0x20.  16 bytes at a time with SSE2, else 8.
 */
static inline size_t
json_splice_span(const unsigned char *p, size_t i, size_t len, int in)
{
#ifdef __SSE2__
	const __m128i	q = _mm_set1_epi8('"');
	const __m128i	b = _mm_set1_epi8('\\');
	const __m128i	c = _mm_set1_epi8(0x1f);
	__m128i		v, m;
	int		bits;

	while (i + 16 <= len) {
		v = _mm_loadu_si128((const __m128i *)(p + i));
		m = _mm_cmpeq_epi8(v, q);
		if (in)
			m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, b),
			    _mm_cmpeq_epi8(_mm_min_epu8(v, c), v)));
		if ((bits = _mm_movemask_epi8(m)) != 0)
			return (i + (size_t)__builtin_ctz((unsigned)bits));
		i += 16;
	}
#else
	uint64_t	w;

	while (i + 8 <= len) {
		memcpy(&w, p + i, 8);
		if (json_splice_has(w, '"', in) ||
		    (in && json_splice_has(w, '\\', 0)))
			break;
		i += 8;
	}
#endif
	for (; i < len; i++) {
		if (p[i] == '"' || (in && (p[i] == '\\' || p[i] < 0x20)))
			break;
	}
	return (i);
}

/*
 * Carry the string state over p[*ip, len) to the next event: a raw
 * control byte in a string (when asked), the opening quote of a literal
 * to take (clean and at least min long, or clean to the end of a slice
 * that is not the last), or the end.  *ip is where the event is.
 */
static enum json_splice_event
json_splice_step(struct json_splice_state *st, const unsigned char *p,
    size_t *ip, size_t len)
{
	size_t	i = *ip, r;

	while (i < len) {
		if (st->esc) {
			st->esc = 0;
			if (p[i] < 0x20 && st->controls)
				goto control;
			i++;
			continue;
		}
		if (!st->in) {
			if ((i = json_splice_span(p, i, len, 0)) == len)
				break;
			st->in = 1;
			if (st->min == 0) {
				i++;
				continue;
			}
			r = json_splice_span(p, i + 1, len, 1);
			if (r == len ? !st->whole :
			    p[r] == '"' && r - i - 1 >= st->min) {
				*ip = i;
				return (JSON_SPLICE_EV_LITERAL);
			}
			/* A short string closes where the look ended. */
			if (r < len && p[r] == '"') {
				st->in = 0;
				r++;
			}
			i = r;
			continue;
		}
		if ((i = json_splice_span(p, i, len, 1)) == len)
			break;
		if (p[i] == '"')
			st->in = 0;
		else if (p[i] == '\\')
			st->esc = 1;
		else if (st->controls)
			goto control;
		i++;
	}
	*ip = len;
	return (JSON_SPLICE_EV_END);

control:
	*ip = i;
	return (JSON_SPLICE_EV_CONTROL);
}

/*
 * The first raw control byte inside a string in p[0, len), or len; *in
 * and *esc carry the string state across calls, so a text can come in
 * slices.
 */
size_t
json_splice_scan(const unsigned char *p, size_t len, int *in, int *esc)
{
	struct json_splice_state	st;
	size_t				i = 0;

	memset(&st, 0, sizeof st);
	st.in = *in;
	st.esc = *esc;
	st.controls = 1;
	json_splice_step(&st, p, &i, len);
	*in = st.in;
	*esc = st.esc;
	return (i);
}

/* Splice on tok (the caller's); flags JSON_SPLICE_*. */
struct json_splice *
json_splice_create(struct json_tokener *tok, size_t min, int flags)
{
	struct json_splice	*s;

	s = xcalloc(1, sizeof *s);
	s->tok = tok;
	s->st.min = min;
	s->st.controls = (flags & JSON_SPLICE_CONTROLS) != 0;
	s->st.whole = (flags & JSON_SPLICE_WHOLE) != 0;
	/* Bytes json-c would check one by one go to it. */
	if (tok->flags & JSON_TOKENER_VALIDATE_UTF8)
		s->st.min = 0;
	return (s);
}

void
json_splice_free(struct json_splice *s)
{
	if (s == NULL)
		return;
	free(s->acc);
	free(s);
}

/* Where parsing stopped in the data of the last feed. */
size_t
json_splice_parse_end(struct json_splice *s)
{
	return (s->end);
}

/* How many literals were taken verbatim (for tests). */
size_t
json_splice_taken(struct json_splice *s)
{
	return (s->taken);
}

/* Text to json-c as it is; base is its offset in the feed's data. */
static enum json_splice_status
json_splice_chunk(struct json_splice *s, const char *data, size_t len,
    size_t base, struct json_object **value)
{
	struct json_object	*v;

	if (len == 0) {
		s->end = base;
		return (JSON_SPLICE_MORE);
	}
	v = json_tokener_parse_ex(s->tok, data, (int)len);
	s->end = base + json_tokener_get_parse_end(s->tok);
	if (v != NULL) {
		*value = v;
		return (JSON_SPLICE_DONE);
	}
	if (json_tokener_get_error(s->tok) == json_tokener_continue)
		return (JSON_SPLICE_MORE);
	return (JSON_SPLICE_ERROR);
}

/*
 * Did the quote just fed open a string value?  json-c 0.16 is then in
 * its string state for '"' with nothing gathered, below the top level
 * (where it would end the parse on the closing quote itself).
 */
static int
json_splice_opened(struct json_splice *s)
{
	struct json_tokener	*tok = s->tok;

	return (tok->depth > 0 &&
	    tok->stack[tok->depth].state == json_tokener_state_string &&
	    tok->quote_char == '"' && tok->pb->bpos == 0);
}

/*
 * The closing quote alone, so the string json-c makes is still its
 * current value (state eatws, then finish), set to the literal's bytes.
 * Anything else: JSON_SPLICE_REDO, parse the text again plainly.
 */
static enum json_splice_status
json_splice_close(struct json_splice *s, const char *bytes, size_t len)
{
	struct json_tokener	*tok = s->tok;
	struct json_tokener_srec *top;
	struct json_object	*v;

	v = json_tokener_parse_ex(tok, "\"", 1);
	top = &tok->stack[tok->depth];
	if (v != NULL || json_tokener_get_error(tok) !=
	    json_tokener_continue || tok->depth == 0 ||
	    top->state != json_tokener_state_eatws ||
	    top->saved_state != json_tokener_state_finish ||
	    !json_object_is_type(top->current, json_type_string) ||
	    json_object_get_string_len(top->current) != 0 ||
	    len > INT32_MAX - 2 ||
	    !json_object_set_string_len(top->current, bytes, (int)len)) {
		json_object_put(v);
		return (JSON_SPLICE_REDO);
	}
	s->taken++;
	return (JSON_SPLICE_MORE);
}

/* Keep the bytes of a literal a slice cut. */
static void
json_splice_keep(struct json_splice *s, const char *data, size_t len)
{
	if (s->acclen + len > s->accsize) {
		s->accsize = s->accsize * 2 > s->acclen + len ?
		    s->accsize * 2 : s->acclen + len;
		s->acc = xreallocarray(s->acc, 1, s->accsize);
	}
	if (len != 0)
		memcpy(s->acc + s->acclen, data, len);
	s->acclen += len;
}

/*
 * Feed the next bytes of the text.  JSON_SPLICE_DONE sets *value (the
 * caller's) and json_splice_parse_end says where it ended in data;
 * JSON_SPLICE_ERROR is json-c's (json_tokener_get_error); MORE wants
 * the next bytes; CONTROL is a raw control byte in a string (with
 * JSON_SPLICE_CONTROLS), at json_splice_parse_end; REDO is a json-c
 * that was not in the state expected: the tokener is spent and the
 * text must be parsed again without splicing.
 */
enum json_splice_status
json_splice_feed(struct json_splice *s, const char *data, size_t len,
    struct json_object **value)
{
	const unsigned char	*p = (const unsigned char *)data;
	enum json_splice_status	 rc;
	size_t			 start = 0, i = 0, r;

	*value = NULL;
	s->end = 0;
	if (len > INT32_MAX)
		return (JSON_SPLICE_REDO);
	if (len == 0 && !s->accum) {
		/* As json-c says of no text. */
		if ((*value = json_tokener_parse_ex(s->tok, "", 0)) != NULL)
			return (JSON_SPLICE_DONE);
		return (json_tokener_get_error(s->tok) ==
		    json_tokener_continue ? JSON_SPLICE_MORE :
		    JSON_SPLICE_ERROR);
	}
	if (s->accum) {
		/* In a literal a slice cut: its end, or what it holds. */
		if ((r = json_splice_span(p, 0, len, 1)) == len) {
			json_splice_keep(s, data, len);
			s->end = len;
			return (JSON_SPLICE_MORE);
		}
		s->accum = 0;
		if (p[r] == '"') {
			json_splice_keep(s, data, r);
			if ((rc = json_splice_close(s, s->acc, s->acclen)) !=
			    JSON_SPLICE_MORE)
				return (rc);
			s->st.in = 0;
			start = i = r + 1;
		} else {
			/* Not clean after all: json-c gets its bytes. */
			if (json_splice_chunk(s, s->acc, s->acclen, 0, value) !=
			    JSON_SPLICE_MORE) {
				json_object_put(*value);
				*value = NULL;
				return (JSON_SPLICE_REDO);
			}
			i = r;
		}
		s->acclen = 0;
		if (s->accsize > JSON_SPLICE_KEEP) {
			free(s->acc);
			s->acc = NULL;
			s->accsize = 0;
		}
	}
	for (;;) {
		switch (json_splice_step(&s->st, p, &i, len)) {
		case JSON_SPLICE_EV_END:
			return (json_splice_chunk(s, data + start, len - start,
			    start, value));
		case JSON_SPLICE_EV_CONTROL:
			s->end = i;
			return (JSON_SPLICE_CONTROL);
		case JSON_SPLICE_EV_LITERAL:
			break;
		}
		/* Up to and including the opening quote at i. */
		rc = json_splice_chunk(s, data + start, i + 1 - start, start,
		    value);
		if (rc != JSON_SPLICE_MORE)
			return (rc);
		start = i + 1;
		r = json_splice_span(p, i + 1, len, 1);
		if (!json_splice_opened(s)) {
			i = r;
			continue;
		}
		if (r == len) {
			s->accum = 1;
			s->acclen = 0;
			json_splice_keep(s, data + start, len - start);
			s->end = len;
			return (JSON_SPLICE_MORE);
		}
		if ((rc = json_splice_close(s, data + start, r - start)) !=
		    JSON_SPLICE_MORE)
			return (rc);
		s->st.in = 0;
		start = i = r + 1;
	}
}

/*
 * A whole text through tok (the caller's, reset first), splicing
 * literals of at least min bytes: json_tokener_parse_ex's value, error
 * and *end (json_tokener_get_parse_end), whatever json-c is linked.
 */
struct json_object *
json_splice_parse(struct json_tokener *tok, const char *data, size_t len,
    size_t min, size_t *end)
{
	struct json_splice	*s;
	struct json_object	*v;
	enum json_splice_status	 rc;

	*end = 0;
	if (len > INT32_MAX)
		return (NULL);
	json_tokener_reset(tok);
	s = json_splice_create(tok, min, JSON_SPLICE_WHOLE);
	rc = json_splice_feed(s, data, len, &v);
	*end = json_splice_parse_end(s);
	json_splice_free(s);
	if (rc != JSON_SPLICE_REDO)
		return (v);
	json_tokener_reset(tok);
	v = json_tokener_parse_ex(tok, data, (int)len);
	*end = json_tokener_get_parse_end(tok);
	return (v);
}
