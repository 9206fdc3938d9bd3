/* SPDX-License-Identifier: ISC */
/*
 * jsonrpc.c: reading one JSON-RPC message the way both the proxy and the
 * worker must, so they agree on what a message and its id are.
 *
 * The text must be well-formed UTF-8 (RFC 8259); a message that is not
 * is a parse error.  A request's id is echoed exactly as sent: json-c
 * rewrites some ids when it prints them again (an integer past 64 bits
 * saturates to 18446744073709551615, a lone surrogate escape becomes
 * U+FFFD), so the id keeps the text it had in the message and prints as
 * that text.
 */

#include <stdlib.h>
#include <string.h>

#include "common.h"

#define JSONRPC_TOK_KEEP	(64 * 1024)	/* parsed with the kept one */

static struct json_tokener	*jsonrpc_tok;

static size_t	jsonrpc_skip_ws(const char *, size_t, size_t);
static struct json_object	*jsonrpc_value_at(const char *, size_t, size_t,
		    size_t *);
static size_t	jsonrpc_skip_container(const char *, size_t, size_t);
static size_t	jsonrpc_skip_value(const char *, size_t, size_t);
static int	jsonrpc_id_span(const char *, size_t, struct json_object *,
		    size_t *, size_t *);
static void	jsonrpc_keep_text(struct json_object *, const char *, size_t);

static size_t
jsonrpc_skip_ws(const char *buf, size_t len, size_t off)
{
	while (off < len && strchr(" \t\r\n", buf[off]) != NULL &&
	    buf[off] != '\0')
		off++;
	return (off);
}

/*
 * Parse the one JSON value starting at buf[off]: *end is set past it
 * (trailing whitespace not included).  Caller puts the result.
 */
static struct json_object *
jsonrpc_value_at(const char *buf, size_t len, size_t off, size_t *end)
{
	struct json_tokener	*tok;
	struct json_object	*v;
	size_t			 n;

	/*
	 * One tokener for the process, reset for each value: a new one
	 * callocs PROTO_MAX_DEPTH levels, which cost 70% of a parse, and a
	 * message takes one per top-level key and value (bench-hotpath
	 * rpc).  The proxy and the worker parse on one thread.
	 */
	if (jsonrpc_tok == NULL &&
	    (jsonrpc_tok = json_tokener_new_ex(PROTO_MAX_DEPTH)) == NULL)
		return (NULL);
	tok = jsonrpc_tok;
	json_tokener_reset(tok);
	json_tokener_set_flags(tok, 0);
	v = json_tokener_parse_ex(tok, buf + off, (int)(len - off));
	n = json_tokener_get_parse_end(tok);
	if (v == NULL &&
	    json_tokener_get_error(tok) == json_tokener_continue) {
		/* A number at the very end: tell the tokener it ended. */
		v = json_tokener_parse_ex(tok, "", 1);
		n = len - off;
	}
	if (v != NULL && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(v);
		v = NULL;
	}
	while (n > 0 && strchr(" \t\r\n", buf[off + n - 1]) != NULL)
		n--;
	*end = off + n;
	return (v);
}

/*
 * The end of the container at buf[off], found without building it: for
 * a value nested too deep for the tokener, so the id after it can still
 * be found.  len if it does not end.
 */
static size_t
jsonrpc_skip_container(const char *buf, size_t len, size_t off)
{
	size_t	depth = 0;
	int	instr = 0;

	for (; off < len; off++) {
		if (instr) {
			if (buf[off] == '\\')
				off++;
			else if (buf[off] == '"')
				instr = 0;
			continue;
		}
		if (buf[off] == '"')
			instr = 1;
		else if (buf[off] == '[' || buf[off] == '{')
			depth++;
		else if ((buf[off] == ']' || buf[off] == '}') && --depth == 0)
			return (off + 1);
	}
	return (len);
}

/*
 * The end of the value at buf[off] of a text json-c accepted whole, found
 * without building it: only "id" members need their value.
 */
static size_t
jsonrpc_skip_value(const char *buf, size_t len, size_t off)
{
	if (buf[off] == '[' || buf[off] == '{')
		return (jsonrpc_skip_container(buf, len, off));
	if (buf[off] == '"') {
		for (off++; off < len; off++) {
			if (buf[off] == '\\')
				off++;
			else if (buf[off] == '"')
				return (off + 1);
		}
		return (len);
	}
	while (off < len && strchr(",}] \t\r\n", buf[off]) == NULL)
		off++;
	return (off);
}

/*
 * Where the text of the top-level "id" of an object is: the member json-c
 * kept (with duplicate keys, the last), the other members' values
 * skipped unparsed.  With id NULL (the message was too deep to parse,
 * so may hold anything), the last "id" member, each value parsed.  -1
 * if it has none.
 */
static int
jsonrpc_id_span(const char *buf, size_t len, struct json_object *id,
    size_t *start, size_t *end)
{
	struct json_object	*k, *v;
	const char		*want;
	size_t			 off, vstart, vend, kend;
	int			 found = 0, same;

	want = id != NULL ? json_object_to_json_string_ext(id,
	    JSON_C_TO_STRING_PLAIN) : NULL;
	off = jsonrpc_skip_ws(buf, len, 0);
	if (off >= len || buf[off] != '{')
		return (-1);
	off = jsonrpc_skip_ws(buf, len, off + 1);
	while (off < len && buf[off] != '}') {
		if (want != NULL && buf[off] == '"') {
			/* A key with no escape is its bytes: "id" or skip. */
			for (kend = off + 1; kend < len && buf[kend] != '"' &&
			    buf[kend] != '\\'; kend++)
				;
			if (kend < len && buf[kend] == '"' &&
			    (kend - off - 1 != 2 || memcmp(buf + off + 1, "id",
			    2) != 0)) {
				off = jsonrpc_skip_ws(buf, len, kend + 1);
				if (off >= len || buf[off] != ':')
					return (-1);
				vstart = jsonrpc_skip_ws(buf, len, off + 1);
				if (vstart >= len)
					return (-1);
				off = jsonrpc_skip_ws(buf, len,
				    jsonrpc_skip_value(buf, len, vstart));
				if (off < len && buf[off] == ',')
					off = jsonrpc_skip_ws(buf, len,
					    off + 1);
				continue;
			}
		}
		if ((k = jsonrpc_value_at(buf, len, off, &kend)) == NULL)
			return (-1);
		off = jsonrpc_skip_ws(buf, len, kend);
		if (off >= len || buf[off] != ':') {
			json_object_put(k);
			return (-1);
		}
		vstart = jsonrpc_skip_ws(buf, len, off + 1);
		v = NULL;
		if (want != NULL && vstart < len &&
		    (!json_object_is_type(k, json_type_string) ||
		    strcmp(json_object_get_string(k), "id") != 0)) {
			/* Valid (json-c took it all): skip, do not build. */
			json_object_put(k);
			off = jsonrpc_skip_ws(buf, len,
			    jsonrpc_skip_value(buf, len, vstart));
			if (off < len && buf[off] == ',')
				off = jsonrpc_skip_ws(buf, len, off + 1);
			continue;
		}
		if (vstart >= len ||
		    ((v = jsonrpc_value_at(buf, len, vstart, &vend)) == NULL &&
		    (want != NULL || strchr("[{", buf[vstart]) == NULL))) {
			json_object_put(k);
			return (-1);
		}
		if (v == NULL)
			vend = jsonrpc_skip_container(buf, len, vstart);
		if (v != NULL && json_object_is_type(k, json_type_string) &&
		    strcmp(json_object_get_string(k), "id") == 0) {
			same = want != NULL && strcmp(
			    json_object_to_json_string_ext(v,
			    JSON_C_TO_STRING_PLAIN), want) == 0;
			*start = vstart;
			*end = vend;
			found = 1;
			if (same) {
				/* The one json-c kept, unless a later twin
				 * differs; twins are rare, so stop here. */
				json_object_put(k);
				json_object_put(v);
				return (0);
			}
		}
		json_object_put(k);
		json_object_put(v);
		off = jsonrpc_skip_ws(buf, len, vend);
		if (off < len && buf[off] == ',')
			off = jsonrpc_skip_ws(buf, len, off + 1);
	}
	return (found ? 0 : -1);
}

/* Make v print as text (len bytes) from now on. */
static void
jsonrpc_keep_text(struct json_object *v, const char *text, size_t len)
{
	json_object_set_serializer(v, json_object_userdata_to_json_string,
	    xstrndup(text, len), json_object_free_userdata);
}

/*
 * Parse one message of len bytes.  Returns the value (any JSON type; the
 * caller puts it), or NULL with *cause set (caller frees) when the text
 * is not one well-formed JSON value in UTF-8.  *nested is set when it
 * failed only by nesting deeper than PROTO_MAX_DEPTH.  An object's
 * top-level id prints as the text it was sent with; id_off and id_len
 * (may be NULL) say where that text is, 0 and 0 when there is none (also
 * set for a message too deep, whose id the caller may still answer).
 */
struct json_object *
jsonrpc_parse(const char *buf, size_t len, size_t *id_off, size_t *id_len,
    int *nested, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*msg, *id;
	enum json_tokener_error	 jerr;
	size_t			 end, s, e;

	if (id_off != NULL)
		*id_off = *id_len = 0;
	if (nested != NULL)
		*nested = 0;
	if (len > INT32_MAX) {
		xasprintf(cause, "message of %zu bytes is too long", len);
		return (NULL);
	}
	/*
	 * Strict UTF-8 first (utf8.c): json-c's own check lets encoded
	 * surrogates and overlong forms through, which no client's decoder
	 * would have sent and Python's refuses to read back.
	 */
	if (!utf8_valid(buf, len, &s)) {
		xasprintf(cause, "the message is not valid UTF-8 (byte %zu)",
		    s);
		return (NULL);
	}
	/*
	 * The process's tokener, as jsonrpc_value_at's (done with it here),
	 * but for a long message: a tokener keeps the buffer its longest
	 * string grew, and the proxy must not hold one of many MB.
	 */
	if (len <= JSONRPC_TOK_KEEP) {
		if (jsonrpc_tok == NULL && (jsonrpc_tok =
		    json_tokener_new_ex(PROTO_MAX_DEPTH)) == NULL)
			fatalx("json_tokener_new_ex failed");
		tok = jsonrpc_tok;
		json_tokener_reset(tok);
	} else if ((tok = json_tokener_new_ex(PROTO_MAX_DEPTH)) == NULL)
		fatalx("json_tokener_new_ex failed");
	json_tokener_set_flags(tok, 0);
	msg = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (msg == NULL && jerr == json_tokener_continue) {
		/* A bare number at the very end needs to be told so. */
		msg = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	if (tok != jsonrpc_tok)
		json_tokener_free(tok);
	if (msg != NULL && jerr == json_tokener_success &&
	    jsonrpc_skip_ws(buf, len, end) != len) {
		json_object_put(msg);
		xasprintf(cause, "trailing data after the message");
		return (NULL);
	}
	if (msg == NULL || jerr != json_tokener_success) {
		json_object_put(msg);
		if (jerr == json_tokener_error_depth) {
			if (nested != NULL)
				*nested = 1;
			xasprintf(cause, "the message nests deeper than %d "
			    "levels (the limit of every JSON value here); send "
			    "values nested less deeply", PROTO_MAX_DEPTH);
			/* Valid JSON past our limit: still answer its id. */
			if (id_off != NULL &&
			    jsonrpc_id_span(buf, len, NULL, &s, &e) == 0) {
				*id_off = s;
				*id_len = e - s;
			}
		} else if (jerr == json_tokener_error_parse_utf8_string)
			xasprintf(cause, "the message is not valid UTF-8");
		else
			xasprintf(cause, "%s", json_tokener_error_desc(jerr));
		return (NULL);
	}
	if (json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "id", &id) && id != NULL &&
	    (json_object_is_type(id, json_type_int) ||
	    json_object_is_type(id, json_type_double) ||
	    json_object_is_type(id, json_type_string)) &&
	    jsonrpc_id_span(buf, len, id, &s, &e) == 0) {
		jsonrpc_keep_text(id, buf + s, e - s);
		if (id_off != NULL) {
			*id_off = s;
			*id_len = e - s;
		}
	}
	return (msg);
}

/* An id from its JSON text (as jsonrpc_parse keeps it); NULL if bad. */
struct json_object *
jsonrpc_id_from_text(const char *text)
{
	struct json_object	*id;
	size_t			 end, len = strlen(text);

	if ((id = jsonrpc_value_at(text, len, 0, &end)) == NULL)
		return (NULL);
	if (end != len) {
		json_object_put(id);
		return (NULL);
	}
	jsonrpc_keep_text(id, text, len);
	return (id);
}

/*
 * Do two ids name the same request?  Strings by their value, numbers by
 * their text (two integers past 64 bits are different ids).
 */
int
jsonrpc_id_equal(struct json_object *a, struct json_object *b)
{
	const char	*sa, *sb;

	if (a == NULL || b == NULL)
		return (a == b);
	if (json_object_is_type(a, json_type_string) !=
	    json_object_is_type(b, json_type_string))
		return (0);
	if (json_object_is_type(a, json_type_string))
		return (json_object_get_string_len(a) ==
		    json_object_get_string_len(b) &&
		    memcmp(json_object_get_string(a), json_object_get_string(b),
		    (size_t)json_object_get_string_len(a)) == 0);
	sa = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
	sb = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
	return (strcmp(sa, sb) == 0);
}
