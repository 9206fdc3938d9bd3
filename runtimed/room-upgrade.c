/* SPDX-License-Identifier: ISC */
/*
 * room-upgrade.c: nbformat 1, 2 and 3 notebooks upgraded to nbformat 4.
 *
 * The same steps as nbformat.read(f, as_version=4), on json-c objects:
 * the old version's reader (lines joined its way, v2 images checked to be
 * ASCII), then one upgrade per version (v1 -> v2 -> v3 -> v4): worksheets
 * flattened, heading and html cells to markdown, input to source,
 * prompt_number to execution_count, pyout/pyerr to execute_result/error,
 * output keys moved into a mimetype bundle, stream to name.  Keys nbformat
 * keeps are kept.  What nbformat cannot read (it raises) is refused with a
 * sentence saying what is missing and where.  Cell ids are left to the
 * v4 parser to mint.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* Beyond any real heading; keeps "#" * level small. */
#define ROOM_UPGRADE_MAX_LEVEL	1000

/* v3's short output keys and the mimetypes nbformat gives them. */
static const char *const room_upgrade_mime[][2] = {
	{ "text", "text/plain" },
	{ "html", "text/html" },
	{ "svg", "image/svg+xml" },
	{ "png", "image/png" },
	{ "jpeg", "image/jpeg" },
	{ "latex", "text/latex" },
	{ "json", "application/json" },
	{ "javascript", "application/javascript" },
};

/* Output keys the v2 and v3 readers join when stored as lists. */
static const char *const room_upgrade_multiline[] = {
	"text", "html", "svg", "latex", "javascript", "json", NULL
};

#define ROOM_UPGRADE_NMIME \
	(sizeof room_upgrade_mime / sizeof room_upgrade_mime[0])

/* Where an error is, for messages: worksheet and cell, output. */
struct room_upgrade_at {
	int	major;		/* the file's nbformat */
	size_t	ws;
	size_t	cell;
};

static struct json_object	*room_upgrade_get(struct json_object *,
		    const char *);
static struct json_object	*room_upgrade_pop(struct json_object *,
		    const char *);
static int	room_upgrade_truthy(struct json_object *);
static void	room_upgrade_where(char *, size_t,
		    const struct room_upgrade_at *);
static int	room_upgrade_join(struct json_object *, const char *,
		    const struct room_upgrade_at *, const char *, char **);
static int	room_upgrade_ascii(struct json_object *, const char *,
		    const struct room_upgrade_at *, size_t, char **);
static struct json_object	*room_upgrade_need(struct json_object *,
		    const char *, enum json_type, const char *, int, char **);
static int	room_upgrade_read_cell(struct json_object *,
		    const struct room_upgrade_at *, char **);
static int	room_upgrade_read(struct json_object *, int, char **);
static struct json_object	*room_upgrade_from_v1(struct json_object *,
		    char **);
static void	room_upgrade_v2_v3(struct json_object *);
static void	room_upgrade_mime_keys(struct json_object *);
static int	room_upgrade_json_value(struct json_object *, const char *,
		    size_t, int, char **);
static int	room_upgrade_output(struct json_object *, const char *, size_t,
		    int, char **);
static void	room_upgrade_one_line(const char *, size_t, char *, size_t *);
static int	room_upgrade_heading(struct json_object *, const char *, int,
		    char **);
static int	room_upgrade_cell(struct json_object *,
		    const struct room_upgrade_at *, char **);
static int	room_upgrade_v3_v4(struct json_object *, int, char **);

static struct json_object *
room_upgrade_get(struct json_object *obj, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(obj, key, &v))
		return (NULL);
	return (v);
}

/* Take key out of obj; the caller owns the reference (NULL if absent). */
static struct json_object *
room_upgrade_pop(struct json_object *obj, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(obj, key, &v))
		return (NULL);
	json_object_get(v);
	json_object_object_del(obj, key);
	return (v);
}

/* Python truth of a JSON value (null, false, 0, "", [] and {} are false). */
static int
room_upgrade_truthy(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return (0);
	case json_type_boolean:
		return (json_object_get_boolean(v));
	case json_type_int:
		return (json_object_get_int64(v) != 0 ||
		    json_object_get_uint64(v) != 0);
	case json_type_double:
		return (json_object_get_double(v) != 0);
	case json_type_string:
		return (json_object_get_string_len(v) != 0);
	case json_type_array:
		return (json_object_array_length(v) != 0);
	case json_type_object:
		return (json_object_object_length(v) != 0);
	}
	return (0);
}

/* "worksheet 1 cell 3" (1-based, as a person counts). */
static void
room_upgrade_where(char *buf, size_t size, const struct room_upgrade_at *at)
{
	snprintf(buf, size, "worksheet %zu cell %zu", at->ws + 1, at->cell + 1);
}

/*
 * Join a list of strings stored under key, in place: v2 always joins with
 * "\n"; v3 joins as stored when the first line ends in a newline, else
 * with "\n" (its guard against lines split without their ends).
 */
static int
room_upgrade_join(struct json_object *obj, const char *key,
    const struct room_upgrade_at *at, const char *what, char **cause)
{
	struct json_object	*list, *item;
	const char		*first;
	char			*buf, where[64];
	size_t			 n, i, len = 0, total = 0, flen;
	int			 nl;

	if ((list = room_upgrade_get(obj, key)) == NULL ||
	    !json_object_is_type(list, json_type_array))
		return (0);
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		if (!json_object_is_type(item, json_type_string)) {
			room_upgrade_where(where, sizeof where, at);
			xasprintf(cause, "nbformat %d notebook: %s: %s \"%s\" "
			    "is a list holding something other than strings",
			    at->major, where, what, key);
			return (-1);
		}
		total += (size_t)json_object_get_string_len(item) + 1;
	}
	nl = 1;
	if (at->major == 3 && n > 0) {
		item = json_object_array_get_idx(list, 0);
		first = json_object_get_string(item);
		flen = (size_t)json_object_get_string_len(item);
		if (flen > 0 && (first[flen - 1] == '\n' ||
		    first[flen - 1] == '\r'))
			nl = 0;
	}
	buf = xmalloc(total + 1);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		if (nl && i != 0)
			buf[len++] = '\n';
		memcpy(buf + len, json_object_get_string(item),
		    (size_t)json_object_get_string_len(item));
		len += (size_t)json_object_get_string_len(item);
	}
	buf[len] = '\0';
	json_object_object_add(obj, key, json_object_new_string_len(buf,
	    (int)len));
	free(buf);
	return (0);
}

/* v2 keeps images as base64 ASCII; nbformat's reader insists on it. */
static int
room_upgrade_ascii(struct json_object *out, const char *key,
    const struct room_upgrade_at *at, size_t j, char **cause)
{
	struct json_object	*v;
	const unsigned char	*s;
	char			 where[64];
	size_t			 len, i;

	if ((v = room_upgrade_get(out, key)) == NULL)
		return (0);
	room_upgrade_where(where, sizeof where, at);
	if (!json_object_is_type(v, json_type_string)) {
		xasprintf(cause, "nbformat 2 notebook: %s output %zu: \"%s\" "
		    "is not a base64 string", where, j + 1, key);
		return (-1);
	}
	s = (const unsigned char *)json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	for (i = 0; i < len; i++) {
		if (s[i] >= 0x80) {
			xasprintf(cause, "nbformat 2 notebook: %s output %zu: "
			    "\"%s\" holds a non-ASCII byte at offset %zu (not "
			    "base64)", where, j + 1, key, i);
			return (-1);
		}
	}
	return (0);
}

/* obj[key], which must be there with this type (where NULL: the top). */
static struct json_object *
room_upgrade_need(struct json_object *obj, const char *key,
    enum json_type type, const char *where, int major, char **cause)
{
	struct json_object	*v;
	const char		*what;

	what = type == json_type_array ? "a list" : "an object";
	if ((v = room_upgrade_get(obj, key)) == NULL) {
		if (where == NULL)
			xasprintf(cause, "nbformat %d notebook without "
			    "\"%s\"", major, key);
		else
			xasprintf(cause, "nbformat %d notebook: %s has no "
			    "\"%s\"", major, where, key);
		return (NULL);
	}
	if (!json_object_is_type(v, type)) {
		if (where == NULL)
			xasprintf(cause, "nbformat %d notebook: \"%s\" is not "
			    "%s", major, key, what);
		else
			xasprintf(cause, "nbformat %d notebook: %s: \"%s\" is "
			    "not %s", major, where, key, what);
		return (NULL);
	}
	return (v);
}

/* The v2 or v3 reader on one cell: lines joined, outputs checked. */
static int
room_upgrade_read_cell(struct json_object *cell,
    const struct room_upgrade_at *at, char **cause)
{
	struct json_object	*type, *outs, *out;
	char			 where[64];
	size_t			 j, k;

	room_upgrade_where(where, sizeof where, at);
	if (!json_object_is_type(cell, json_type_object)) {
		xasprintf(cause, "nbformat %d notebook: %s is not an object",
		    at->major, where);
		return (-1);
	}
	if ((type = room_upgrade_get(cell, "cell_type")) == NULL) {
		xasprintf(cause, "nbformat %d notebook: %s has no "
		    "\"cell_type\"", at->major, where);
		return (-1);
	}
	if (!json_object_is_type(type, json_type_string) ||
	    strcmp(json_object_get_string(type), "code") != 0) {
		if (room_upgrade_join(cell, "source", at, "cell", cause) != 0 ||
		    room_upgrade_join(cell, "rendered", at, "cell", cause) != 0)
			return (-1);
		return (0);
	}
	if (room_upgrade_join(cell, "input", at, "cell", cause) != 0)
		return (-1);
	if ((outs = room_upgrade_need(cell, "outputs", json_type_array, where,
	    at->major, cause)) == NULL)
		return (-1);
	for (j = 0; j < json_object_array_length(outs); j++) {
		out = json_object_array_get_idx(outs, j);
		if (!json_object_is_type(out, json_type_object)) {
			xasprintf(cause, "nbformat %d notebook: %s output %zu "
			    "is not an object", at->major, where, j + 1);
			return (-1);
		}
		for (k = 0; room_upgrade_multiline[k] != NULL; k++) {
			if (room_upgrade_join(out, room_upgrade_multiline[k],
			    at, "output", cause) != 0)
				return (-1);
		}
		if (at->major == 2 &&
		    (room_upgrade_ascii(out, "png", at, j, cause) != 0 ||
		    room_upgrade_ascii(out, "jpeg", at, j, cause) != 0))
			return (-1);
	}
	return (0);
}

/*
 * The v2 or v3 reader: worksheets, their cells and code cells' outputs
 * must be there; lists of lines are joined.
 */
static int
room_upgrade_read(struct json_object *nb, int major, char **cause)
{
	struct json_object	*wss, *ws, *cells;
	struct room_upgrade_at	 at;
	char			 where[64];

	memset(&at, 0, sizeof at);
	at.major = major;
	if ((wss = room_upgrade_need(nb, "worksheets", json_type_array, NULL,
	    major, cause)) == NULL)
		return (-1);
	for (at.ws = 0; at.ws < json_object_array_length(wss); at.ws++) {
		ws = json_object_array_get_idx(wss, at.ws);
		snprintf(where, sizeof where, "worksheet %zu", at.ws + 1);
		if (!json_object_is_type(ws, json_type_object)) {
			xasprintf(cause, "nbformat %d notebook: %s is not an "
			    "object", major, where);
			return (-1);
		}
		if ((cells = room_upgrade_need(ws, "cells", json_type_array,
		    where, major, cause)) == NULL)
			return (-1);
		for (at.cell = 0; at.cell < json_object_array_length(cells);
		    at.cell++) {
			if (room_upgrade_read_cell(json_object_array_get_idx(
			    cells, at.cell), &at, cause) != 0)
				return (-1);
		}
	}
	return (0);
}

/* nbformat's v2.upgrade from v1: only cells survive, in one worksheet. */
static struct json_object *
room_upgrade_from_v1(struct json_object *v1, char **cause)
{
	struct json_object	*nb, *ws, *cells, *wss, *c, *v, *new;
	const char		*type;
	size_t			 i;

	if ((cells = room_upgrade_need(v1, "cells", json_type_array,
	    NULL, 1, cause)) == NULL)
		return (NULL);
	nb = json_object_new_object();
	json_object_object_add(nb, "metadata", json_object_new_object());
	json_object_object_add(nb, "nbformat", json_object_new_int(2));
	wss = json_object_new_array();
	ws = json_object_new_object();
	json_object_array_add(wss, ws);
	json_object_object_add(nb, "worksheets", wss);
	json_object_object_add(ws, "cells", json_object_new_array());
	for (i = 0; i < json_object_array_length(cells); i++) {
		c = json_object_array_get_idx(cells, i);
		type = NULL;
		if (json_object_is_type(c, json_type_object) &&
		    (v = room_upgrade_get(c, "cell_type")) != NULL &&
		    json_object_is_type(v, json_type_string))
			type = json_object_get_string(v);
		new = json_object_new_object();
		if (type != NULL && strcmp(type, "code") == 0) {
			json_object_object_add(new, "cell_type",
			    json_object_new_string("code"));
			json_object_object_add(new, "language",
			    json_object_new_string("python"));
			if ((v = room_upgrade_get(c, "code")) != NULL &&
			    !json_object_is_type(v, json_type_null)) {
				if (!json_object_is_type(v, json_type_string))
					goto bad;
				json_object_object_add(new, "input",
				    json_object_get(v));
			}
			if ((v = room_upgrade_get(c, "prompt_number")) !=
			    NULL && !json_object_is_type(v, json_type_null)) {
				if (!json_object_is_type(v, json_type_int))
					goto bad;
				json_object_object_add(new, "prompt_number",
				    json_object_get(v));
			}
			json_object_object_add(new, "outputs",
			    json_object_new_array());
			json_object_object_add(new, "collapsed",
			    json_object_new_boolean(0));
		} else if (type != NULL && strcmp(type, "text") == 0) {
			if ((v = room_upgrade_get(c, "text")) != NULL &&
			    !json_object_is_type(v, json_type_null)) {
				if (!json_object_is_type(v, json_type_string))
					goto bad;
				json_object_object_add(new, "source",
				    json_object_get(v));
			}
			json_object_object_add(new, "cell_type",
			    json_object_new_string("markdown"));
		} else {
			xasprintf(cause, "nbformat 1 notebook: cell %zu is "
			    "neither a code nor a text cell", i + 1);
			json_object_put(new);
			json_object_put(nb);
			return (NULL);
		}
		json_object_array_add(room_upgrade_get(ws, "cells"), new);
	}
	return (nb);

bad:
	xasprintf(cause, "nbformat 1 notebook: cell %zu has a field of the "
	    "wrong type (code and text are strings, prompt_number an integer)",
	    i + 1);
	json_object_put(new);
	json_object_put(nb);
	return (NULL);
}

/* nbformat's v3.upgrade from v2: every cell gets metadata. */
static void
room_upgrade_v2_v3(struct json_object *nb)
{
	struct json_object	*wss, *cells, *cell;
	size_t			 i, j;

	json_object_object_add(nb, "nbformat", json_object_new_int(3));
	json_object_object_add(nb, "nbformat_minor", json_object_new_int(0));
	json_object_object_add(nb, "orig_nbformat", json_object_new_int(2));
	wss = room_upgrade_get(nb, "worksheets");
	for (i = 0; i < json_object_array_length(wss); i++) {
		cells = room_upgrade_get(json_object_array_get_idx(wss, i),
		    "cells");
		for (j = 0; j < json_object_array_length(cells); j++) {
			cell = json_object_array_get_idx(cells, j);
			if (room_upgrade_get(cell, "metadata") == NULL)
				json_object_object_add(cell, "metadata",
				    json_object_new_object());
		}
	}
}

/* v3 short keys to mimetypes, in nbformat's order (to_mime_key). */
static void
room_upgrade_mime_keys(struct json_object *d)
{
	struct json_object	*v;
	size_t			 i;

	for (i = 0; i < ROOM_UPGRADE_NMIME; i++) {
		if ((v = room_upgrade_pop(d, room_upgrade_mime[i][0])) != NULL)
			json_object_object_add(d, room_upgrade_mime[i][1], v);
	}
}

/* application/json was a string of JSON in v3; nbformat parses it. */
static int
room_upgrade_json_value(struct json_object *data, const char *where,
    size_t j, int major, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*s, *v;
	enum json_tokener_error	 jerr;
	const char		*p;
	size_t			 len, used;

	if ((s = room_upgrade_get(data, "application/json")) == NULL)
		return (0);
	if (!json_object_is_type(s, json_type_string)) {
		xasprintf(cause, "nbformat %d notebook: %s output %zu: "
		    "\"json\" is not a string of JSON", major, where, j + 1);
		return (-1);
	}
	p = json_object_get_string(s);
	len = (size_t)json_object_get_string_len(s);
	tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* With its NUL: a bare 3 or null is complete only at the end. */
	v = json_tokener_parse_ex(tok, p, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	/* JSON null parses as NULL, with success. */
	for (; jerr == json_tokener_success && used < len; used++) {
		if (p[used] == '\0' || strchr(" \t\r\n", p[used]) == NULL)
			jerr = json_tokener_error_parse_unexpected;
	}
	if (jerr == json_tokener_error_depth) {
		xasprintf(cause, "nbformat %d notebook: %s output %zu: "
		    "\"json\" nests deeper than %d levels", major, where,
		    j + 1, PROTO_MAX_DEPTH);
		json_object_put(v);
		return (-1);
	}
	if (jerr != json_tokener_success) {
		xasprintf(cause, "nbformat %d notebook: %s output %zu: "
		    "\"json\" is not valid JSON (%s)", major, where, j + 1,
		    jerr == json_tokener_continue ? "it ends early" :
		    json_tokener_error_desc(jerr));
		json_object_put(v);
		return (-1);
	}
	json_object_object_add(data, "application/json", v);
	return (0);
}

/* nbformat's v4 upgrade_output. */
static int
room_upgrade_output(struct json_object *out, const char *where, size_t j,
    int major, char **cause)
{
	struct json_object	*type, *md, *data, *v;
	const char		*t;

	if ((type = room_upgrade_get(out, "output_type")) == NULL) {
		xasprintf(cause, "nbformat %d notebook: %s output %zu has no "
		    "\"output_type\"", major, where, j + 1);
		return (-1);
	}
	if (!json_object_is_type(type, json_type_string))
		return (0);
	t = json_object_get_string(type);
	if (strcmp(t, "pyerr") == 0) {
		json_object_object_add(out, "output_type",
		    json_object_new_string("error"));
		return (0);
	}
	if (strcmp(t, "stream") == 0) {
		if ((v = room_upgrade_pop(out, "stream")) == NULL)
			v = json_object_new_string("stdout");
		json_object_object_add(out, "name", v);
		return (0);
	}
	if (strcmp(t, "pyout") != 0 && strcmp(t, "display_data") != 0)
		return (0);
	if ((md = room_upgrade_get(out, "metadata")) == NULL) {
		md = json_object_new_object();
		json_object_object_add(out, "metadata", md);
	}
	if (!json_object_is_type(md, json_type_object)) {
		xasprintf(cause, "nbformat %d notebook: %s output %zu: "
		    "\"metadata\" is not an object", major, where, j + 1);
		return (-1);
	}
	if (strcmp(t, "pyout") == 0) {
		json_object_object_add(out, "output_type",
		    json_object_new_string("execute_result"));
		json_object_object_add(out, "execution_count",
		    room_upgrade_pop(out, "prompt_number"));
	}

	/* Everything else is output data (copied, then taken out). */
	data = json_object_new_object();
	json_object_object_foreach(out, key, val) {
		if (strcmp(key, "output_type") != 0 &&
		    strcmp(key, "execution_count") != 0 &&
		    strcmp(key, "metadata") != 0)
			json_object_object_add(data, key, json_object_get(val));
	}
	json_object_object_foreach(data, dkey, dval) {
		(void)dval;
		json_object_object_del(out, dkey);
	}
	room_upgrade_mime_keys(data);
	json_object_object_add(out, "data", data);
	room_upgrade_mime_keys(md);
	return (room_upgrade_json_value(data, where, j, major, cause));
}

/*
 * " ".join(s.splitlines()): Python's line boundaries (\n, \r, \r\n, \v,
 * \f, \x1c-\x1e, U+0085, U+2028, U+2029) become single spaces and a
 * final one goes.  Appends to buf at *len (room for slen bytes).
 */
static void
room_upgrade_one_line(const char *s, size_t slen, char *buf, size_t *len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, start = 0, brk;
	int			 first = 1;

	while (i < slen) {
		brk = 0;
		if (p[i] == '\r')
			brk = (i + 1 < slen && p[i + 1] == '\n') ? 2 : 1;
		else if (p[i] == '\n' || p[i] == 0x0b || p[i] == 0x0c ||
		    (p[i] >= 0x1c && p[i] <= 0x1e))
			brk = 1;
		else if (p[i] == 0xc2 && i + 1 < slen && p[i + 1] == 0x85)
			brk = 2;
		else if (p[i] == 0xe2 && i + 2 < slen && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			brk = 3;
		if (brk == 0) {
			i++;
			continue;
		}
		if (!first)
			buf[(*len)++] = ' ';
		first = 0;
		memcpy(buf + *len, s + start, i - start);
		*len += i - start;
		i += brk;
		start = i;
	}
	if (start < slen) {
		if (!first)
			buf[(*len)++] = ' ';
		memcpy(buf + *len, s + start, slen - start);
		*len += slen - start;
	}
}

/* A heading cell becomes a markdown cell "## text" on one line. */
static int
room_upgrade_heading(struct json_object *cell, const char *where,
    int major, char **cause)
{
	struct json_object	*lv, *src;
	const char		*s = "";
	char			*buf;
	size_t			 slen = 0, len = 0;
	int64_t			 level = 1, i;

	json_object_object_add(cell, "cell_type",
	    json_object_new_string("markdown"));
	if ((lv = room_upgrade_pop(cell, "level")) != NULL) {
		if (!json_object_is_type(lv, json_type_int) &&
		    !json_object_is_type(lv, json_type_boolean)) {
			xasprintf(cause, "nbformat %d notebook: %s: heading "
			    "\"level\" is not a number", major, where);
			json_object_put(lv);
			return (-1);
		}
		level = json_object_get_int64(lv);
		json_object_put(lv);
		if (level > ROOM_UPGRADE_MAX_LEVEL) {
			xasprintf(cause, "nbformat %d notebook: %s: heading "
			    "level %lld is out of range", major, where,
			    (long long)level);
			return (-1);
		}
	}
	if ((src = room_upgrade_get(cell, "source")) != NULL) {
		if (!json_object_is_type(src, json_type_string)) {
			xasprintf(cause, "nbformat %d notebook: %s: heading "
			    "\"source\" is not a string", major, where);
			return (-1);
		}
		s = json_object_get_string(src);
		slen = (size_t)json_object_get_string_len(src);
	}
	buf = xmalloc((level > 0 ? (size_t)level : 0) + slen + 2);
	for (i = 0; i < level; i++)
		buf[len++] = '#';
	buf[len++] = ' ';
	room_upgrade_one_line(s, slen, buf, &len);
	json_object_object_add(cell, "source", json_object_new_string_len(buf,
	    (int)len));
	free(buf);
	return (0);
}

/* nbformat's v4 upgrade_cell, but no id: the v4 parser mints ids. */
static int
room_upgrade_cell(struct json_object *cell, const struct room_upgrade_at *at,
    char **cause)
{
	struct json_object	*md, *type, *v, *outs;
	char			 where[64];
	const char		*t;
	size_t			 j;

	room_upgrade_where(where, sizeof where, at);
	if ((md = room_upgrade_get(cell, "metadata")) == NULL) {
		md = json_object_new_object();
		json_object_object_add(cell, "metadata", md);
	}
	if (!json_object_is_type(md, json_type_object)) {
		xasprintf(cause, "nbformat %d notebook: %s: \"metadata\" is "
		    "not an object", at->major, where);
		return (-1);
	}
	type = room_upgrade_get(cell, "cell_type");
	if (!json_object_is_type(type, json_type_string))
		return (0);
	t = json_object_get_string(type);
	if (strcmp(t, "heading") == 0)
		return (room_upgrade_heading(cell, where, at->major, cause));
	if (strcmp(t, "html") == 0) {
		json_object_object_add(cell, "cell_type",
		    json_object_new_string("markdown"));
		return (0);
	}
	if (strcmp(t, "code") != 0)
		return (0);
	json_object_object_del(cell, "language");
	if ((v = room_upgrade_pop(cell, "collapsed")) != NULL)
		json_object_object_add(md, "collapsed", v);
	if ((v = room_upgrade_pop(cell, "input")) == NULL)
		v = json_object_new_string("");
	json_object_object_add(cell, "source", v);
	json_object_object_add(cell, "execution_count",
	    room_upgrade_pop(cell, "prompt_number"));
	outs = room_upgrade_get(cell, "outputs");
	for (j = 0; j < json_object_array_length(outs); j++) {
		if (room_upgrade_output(json_object_array_get_idx(outs, j),
		    where, j, at->major, cause) != 0)
			return (-1);
	}
	return (0);
}

/* nbformat's v4 upgrade from v3 (nb already read by room_upgrade_read). */
static int
room_upgrade_v3_v4(struct json_object *nb, int major, char **cause)
{
	struct json_object	*md, *o, *om, *wss, *ws, *cells, *cell;
	struct room_upgrade_at	 at;
	size_t			 i;

	memset(&at, 0, sizeof at);
	at.major = major;
	if (room_upgrade_get(nb, "nbformat_minor") == NULL) {
		xasprintf(cause, "nbformat 3 notebook: no \"nbformat_minor\" "
		    "(it says which 3.x the file is; 0 for every 3.x file)");
		return (-1);
	}
	if ((md = room_upgrade_need(nb, "metadata", json_type_object,
	    NULL, major, cause)) == NULL)
		return (-1);
	o = room_upgrade_pop(nb, "orig_nbformat");
	om = room_upgrade_pop(nb, "orig_nbformat_minor");
	json_object_object_add(md, "orig_nbformat", room_upgrade_truthy(o) ?
	    json_object_get(o) : json_object_new_int(3));
	json_object_object_add(md, "orig_nbformat_minor",
	    room_upgrade_truthy(om) ? json_object_get(om) :
	    json_object_new_int(0));
	json_object_put(o);
	json_object_put(om);
	json_object_object_add(nb, "nbformat", json_object_new_int(4));
	json_object_object_add(nb, "nbformat_minor", json_object_new_int(5));

	/* Worksheets flattened, in order; their own metadata goes. */
	cells = json_object_new_array();
	json_object_object_add(nb, "cells", cells);
	wss = room_upgrade_pop(nb, "worksheets");
	for (at.ws = 0; at.ws < json_object_array_length(wss); at.ws++) {
		ws = json_object_array_get_idx(wss, at.ws);
		o = room_upgrade_get(ws, "cells");
		for (i = 0; i < json_object_array_length(o); i++) {
			at.cell = i;
			cell = json_object_array_get_idx(o, i);
			if (room_upgrade_cell(cell, &at, cause) != 0) {
				json_object_put(wss);
				return (-1);
			}
			json_object_array_add(cells, json_object_get(cell));
		}
	}
	json_object_put(wss);
	json_object_object_del(md, "name");
	json_object_object_del(md, "signature");
	return (0);
}

/*
 * Upgrade a parsed nbformat 1, 2 or 3 root to nbformat 4.5.  Returns a new
 * object (root is not changed) and a one-line *note for the user, or NULL
 * and *cause.  Caller frees both.
 */
struct json_object *
room_upgrade_v4(struct json_object *root, char **note, char **cause)
{
	struct json_object	*nb = NULL, *v;
	int			 major, minor = -1;

	*note = NULL;
	if ((v = room_upgrade_get(root, "nbformat")) == NULL ||
	    !json_object_is_type(v, json_type_int) ||
	    (major = json_object_get_int(v)) < 1 || major > 3) {
		xasprintf(cause, "not an nbformat 1, 2 or 3 notebook");
		return (NULL);
	}
	if ((v = room_upgrade_get(root, "nbformat_minor")) != NULL &&
	    json_object_is_type(v, json_type_int))
		minor = json_object_get_int(v);
	if (major == 1) {
		if ((nb = room_upgrade_from_v1(root, cause)) == NULL)
			return (NULL);
	} else if (json_object_deep_copy(root, &nb, NULL) != 0) {
		xasprintf(cause, "out of memory upgrading the notebook");
		return (NULL);
	}
	if (major != 1 && room_upgrade_read(nb, major, cause) != 0)
		goto fail;
	if (major < 3)
		room_upgrade_v2_v3(nb);
	if (room_upgrade_v3_v4(nb, major, cause) != 0)
		goto fail;
	if (minor >= 0 && major > 1)
		xasprintf(note, "upgraded from nbformat %d.%d; a save writes "
		    "nbformat 4.5", major, minor);
	else
		xasprintf(note, "upgraded from nbformat %d; a save writes "
		    "nbformat 4.5", major);
	return (nb);

fail:
	json_object_put(nb);
	return (NULL);
}
