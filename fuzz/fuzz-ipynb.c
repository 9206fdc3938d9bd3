/* SPDX-License-Identifier: ISC */
/*
 * fuzz-ipynb.c: libFuzzer target for the .ipynb loader, which reads any
 * file a user points us at, and for the writer on whatever it accepted.
 * It also parses the input as JSON with json-c alone and through
 * json-splice.c (every clean literal taken verbatim), whole and in
 * slices, with the reader's flags and the agent's: the two must agree.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed/runtimed.h"

#define FUZZ_DEPTH	32

/* How a parse came out: value, error, slice it ended in and where. */
struct fuzz_parse {
	struct json_object	*v;
	enum json_tokener_error	 err;
	size_t			 slice;
	size_t			 end;
};

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
static void	fuzz_ipynb_parse(const char *, size_t, int, size_t, int,
		    struct fuzz_parse *);
static void	fuzz_ipynb_splice(const uint8_t *, size_t);
static int	fuzz_ipynb_same(struct json_object *, struct json_object *);

/* Text in slices of step bytes (0: whole), json-c alone or spliced. */
static void
fuzz_ipynb_parse(const char *t, size_t len, int flags, size_t step,
    int splice, struct fuzz_parse *o)
{
	struct json_tokener	*tok = json_tokener_new_ex(FUZZ_DEPTH);
	struct json_splice	*s;
	enum json_splice_status	 rc;
	size_t			 off = 0, n;

	memset(o, 0, sizeof *o);
	json_tokener_set_flags(tok, flags);
	s = json_splice_create(tok, 1, step == 0 ? JSON_SPLICE_WHOLE : 0);
	do {
		n = step == 0 || len - off < step ? len - off : step;
		if (splice) {
			rc = json_splice_feed(s, t + off, n, &o->v);
			if (rc == JSON_SPLICE_REDO || rc == JSON_SPLICE_CONTROL)
				abort();	/* never with json-c 0.16 */
			o->end = json_splice_parse_end(s);
		} else {
			o->v = json_tokener_parse_ex(tok, t + off, (int)n);
			o->end = json_tokener_get_parse_end(tok);
		}
		o->err = json_tokener_get_error(tok);
		if (o->v != NULL || o->err != json_tokener_continue)
			break;
		off += n;
		o->slice++;
	} while (off < len);
	json_splice_free(s);
	json_tokener_free(tok);
}

/*
 * The same value: json_object_equal, or the same text where it is not,
 * since a NaN (which json-c reads without JSON_TOKENER_STRICT) is equal
 * to nothing, itself included.
 */
static int
fuzz_ipynb_same(struct json_object *a, struct json_object *b)
{
	if (json_object_equal(a, b))
		return (1);
	return (strcmp(json_object_to_json_string_ext(a,
	    JSON_C_TO_STRING_PLAIN), json_object_to_json_string_ext(b,
	    JSON_C_TO_STRING_PLAIN)) == 0);
}

/* json-c alone and spliced agree, on every way of feeding the text. */
static void
fuzz_ipynb_splice(const uint8_t *data, size_t size)
{
	static const int	flags[] = { JSON_TOKENER_STRICT |
				    JSON_TOKENER_ALLOW_TRAILING_CHARS, 0 };
	struct fuzz_parse	a, b;
	struct json_tokener	*tok;
	struct json_object	*v;
	size_t			steps[3], i, k, end;

	if (size == 0 || size > INT32_MAX)
		return;
	steps[0] = 0;
	steps[1] = 1 + data[0] % 7;
	steps[2] = 1 + (size_t)data[size - 1] * 3;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 3; i++) {
			fuzz_ipynb_parse((const char *)data, size, flags[k],
			    steps[i], 0, &a);
			fuzz_ipynb_parse((const char *)data, size, flags[k],
			    steps[i], 1, &b);
			if ((a.v == NULL) != (b.v == NULL) || a.err != b.err ||
			    a.slice != b.slice || a.end != b.end ||
			    (a.v != NULL && !fuzz_ipynb_same(a.v, b.v)))
				abort();
			json_object_put(a.v);
			json_object_put(b.v);
		}
		/* json_splice_parse, as the agent calls it. */
		tok = json_tokener_new_ex(FUZZ_DEPTH);
		json_tokener_set_flags(tok, flags[k]);
		v = json_splice_parse(tok, (const char *)data, size, 1, &end);
		fuzz_ipynb_parse((const char *)data, size, flags[k], 0, 0, &a);
		if ((a.v == NULL) != (v == NULL) || a.end != end ||
		    a.err != json_tokener_get_error(tok) ||
		    (v != NULL && !fuzz_ipynb_same(a.v, v)))
			abort();
		json_object_put(a.v);
		json_object_put(v);
		json_tokener_free(tok);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct room_nb	*nb;
	char		*cause = NULL, *out, *again;
	size_t		 len, len2;

	fuzz_ipynb_splice(data, size);
	nb = room_ipynb_parse((const char *)data, size, &cause);
	if (nb == NULL) {
		free(cause);
		return (0);
	}
	/*
	 * What we write is UTF-8 and a fixed point: loading it again and
	 * saving gives the same bytes (kept unknown keys included).
	 */
	out = room_ipynb_write_dump(nb, &len);
	room_nb_free(nb);
	if (!utf8_valid(out, len, NULL))
		abort();
	if ((nb = room_ipynb_parse(out, len, &cause)) == NULL)
		abort();
	again = room_ipynb_write_dump(nb, &len2);
	if (len2 != len || memcmp(out, again, len) != 0)
		abort();
	free(again);
	free(out);
	room_nb_free(nb);
	return (0);
}
