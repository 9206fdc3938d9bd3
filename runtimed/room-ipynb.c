/*
 * room-ipynb.c: .ipynb files (nbformat 4.x) in and out.
 *
 * Loading follows nbformat's reader: multi-line fields stored as lists
 * of lines are joined, orig_nbformat/signature/trusted are dropped.
 * Saving follows nbformat.write byte for byte: lines split as
 * str.splitlines(keepends=True), then json.dumps(indent=1,
 * sort_keys=True, ensure_ascii=False) and a trailing newline.  json-c's
 * printer neither sorts keys nor escapes like Python, hence our own.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

/* Every notebook nbformat reads nests less (proto.h). */
#define ROOM_IPYNB_MAX_DEPTH	PROTO_MAX_DEPTH

/* Where output values kept as blobs live (the state dir), and the first
 * blob that could not be inlined during a dump. */
static char	*room_ipynb_blob_dir;
static char	*room_ipynb_blob_error;

void
room_ipynb_set_blob_dir(const char *dir)
{
	free(room_ipynb_blob_dir);
	room_ipynb_blob_dir = dir != NULL ? xstrdup(dir) : NULL;
}

/* Is this a JSON mimetype, kept as is by nbformat? */
static int
room_ipynb_json_mime(const char *mime)
{
	size_t	len = strlen(mime);

	if (strcmp(mime, "application/json") == 0)
		return (1);
	return (strncmp(mime, "application/", 12) == 0 && len >= 5 &&
	    strcmp(mime + len - 5, "+json") == 0);
}

/* Does nbformat split this mimetype's string into lines on write? */
static int
room_ipynb_split_mime(const char *mime)
{
	return (strncmp(mime, "text/", 5) == 0 ||
	    strcmp(mime, "application/javascript") == 0 ||
	    strcmp(mime, "image/svg+xml") == 0);
}

/* A list of strings joined into one string, or NULL. */
static struct json_object *
room_ipynb_join(struct json_object *list)
{
	struct json_object	*item, *s;
	char			*buf = NULL;
	size_t			 len = 0, n, i, total = 0;

	if (!json_object_is_type(list, json_type_array))
		return (NULL);
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		if (!json_object_is_type(item, json_type_string))
			return (NULL);
		total += (size_t)json_object_get_string_len(item);
	}
	buf = xmalloc(total + 1);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		memcpy(buf + len, json_object_get_string(item),
		    (size_t)json_object_get_string_len(item));
		len += (size_t)json_object_get_string_len(item);
	}
	buf[len] = '\0';
	s = json_object_new_string_len(buf, (int)len);
	free(buf);
	return (s);
}

static void
room_ipynb_rejoin_bundle(struct json_object *data)
{
	struct json_object	*s;

	if (!json_object_is_type(data, json_type_object))
		return;
	json_object_object_foreach(data, key, val) {
		if (room_ipynb_json_mime(key))
			continue;
		if ((s = room_ipynb_join(val)) != NULL)
			json_object_object_add(data, key, s);
	}
}

static void
room_ipynb_rejoin_output(struct json_object *out)
{
	struct json_object	*type, *v, *s;

	if (!json_object_is_type(out, json_type_object))
		return;
	if (!json_object_object_get_ex(out, "output_type", &type) ||
	    !json_object_is_type(type, json_type_string))
		return;
	if (strcmp(json_object_get_string(type), "execute_result") == 0 ||
	    strcmp(json_object_get_string(type), "display_data") == 0) {
		if (json_object_object_get_ex(out, "data", &v))
			room_ipynb_rejoin_bundle(v);
	} else if (json_object_object_get_ex(out, "text", &v) &&
	    (s = room_ipynb_join(v)) != NULL)
		json_object_object_add(out, "text", s);
}

/* Parse notebook text.  Returns NULL with *cause set (caller frees). */
struct room_nb *
room_ipynb_parse(const char *data, size_t len, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*root, *v, *cells, *cell, *src, *o, *outs;
	struct room_nb		*nb = NULL;
	struct room_cell	*c;
	enum room_cell_type	 type;
	enum json_tokener_error	 jerr;
	size_t			 i, ncells, j, used;
	const char		*str;
	char			 id[9];

	if (len > INT32_MAX) {
		xasprintf(cause, "notebook too large");
		return (NULL);
	}
	tok = json_tokener_new_ex(ROOM_IPYNB_MAX_DEPTH);
	root = json_tokener_parse_ex(tok, data, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (root == NULL && jerr == json_tokener_error_depth) {
		xasprintf(cause, "the notebook nests deeper than %d levels, "
		    "which nbformat cannot read either", ROOM_IPYNB_MAX_DEPTH);
		return (NULL);
	}
	if (root == NULL || jerr != json_tokener_success) {
		xasprintf(cause, "not JSON: %s", json_tokener_error_desc(jerr));
		json_object_put(root);
		return (NULL);
	}
	for (; used < len; used++) {
		if (strchr(" \t\r\n", data[used]) == NULL) {
			xasprintf(cause, "not JSON: trailing data");
			json_object_put(root);
			return (NULL);
		}
	}
	if (!json_object_is_type(root, json_type_object)) {
		xasprintf(cause, "not a notebook (top level is not an object)");
		goto fail;
	}
	if (!json_object_object_get_ex(root, "nbformat", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != 4) {
		xasprintf(cause, "unsupported notebook format (nbformat 4 "
		    "only)");
		goto fail;
	}
	nb = room_nb_create();
	if (json_object_object_get_ex(root, "nbformat_minor", &v) &&
	    json_object_is_type(v, json_type_int))
		nb->nbformat_minor = json_object_get_int(v);
	if (nb->nbformat_minor < 5)
		nb->nbformat_minor = 5;
	if (json_object_object_get_ex(root, "metadata", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			xasprintf(cause, "notebook metadata is not an object");
			goto fail;
		}
		json_object_put(nb->metadata);
		nb->metadata = json_object_get(v);
		json_object_object_del(v, "orig_nbformat");
		json_object_object_del(v, "orig_nbformat_minor");
		json_object_object_del(v, "signature");
	}
	if (!json_object_object_get_ex(root, "cells", &cells) ||
	    !json_object_is_type(cells, json_type_array)) {
		xasprintf(cause, "notebook has no cells list");
		goto fail;
	}
	ncells = json_object_array_length(cells);
	for (i = 0; i < ncells; i++) {
		cell = json_object_array_get_idx(cells, i);
		if (!json_object_is_type(cell, json_type_object) ||
		    !json_object_object_get_ex(cell, "cell_type", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    room_nb_type_parse(json_object_get_string(v),
		    (size_t)json_object_get_string_len(v), &type) != 0) {
			xasprintf(cause, "cell %zu has no known cell_type", i);
			goto fail;
		}
		src = NULL;
		if (json_object_object_get_ex(cell, "source", &v)) {
			if (json_object_is_type(v, json_type_string))
				src = json_object_get(v);
			else if ((src = room_ipynb_join(v)) == NULL) {
				xasprintf(cause, "cell %zu: source is neither "
				    "a string nor a list of strings", i);
				goto fail;
			}
		}
		c = room_nb_cell_create(nb, type,
		    src != NULL ? json_object_get_string(src) : "",
		    src != NULL ? (size_t)json_object_get_string_len(src) : 0);
		json_object_put(src);

		/*
		 * Keep a valid, unique id.  Others get an empty id now and
		 * a minted one once every kept id is known.
		 */
		free(c->id);
		c->id = xstrdup("");
		if (json_object_object_get_ex(cell, "id", &v) &&
		    json_object_is_type(v, json_type_string)) {
			str = json_object_get_string(v);
			if (room_nb_valid_id(str,
			    (size_t)json_object_get_string_len(v)) &&
			    room_nb_find(nb, str, &j) == NULL) {
				free(c->id);
				c->id = xstrdup(str);
			}
		}

		if (json_object_object_get_ex(cell, "metadata", &v) &&
		    json_object_is_type(v, json_type_object)) {
			json_object_put(c->metadata);
			c->metadata = json_object_get(v);
			json_object_object_del(v, "trusted");
		}
		if (json_object_object_get_ex(cell, "attachments", &v) &&
		    json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, akey, aval) {
				(void)akey;
				room_ipynb_rejoin_bundle(aval);
			}
			c->attachments = json_object_get(v);
		}
		if (type != ROOM_CELL_CODE)
			continue;
		if (json_object_object_get_ex(cell, "execution_count", &v) &&
		    json_object_is_type(v, json_type_int))
			c->execution_count = json_object_get_int64(v);
		if (json_object_object_get_ex(cell, "outputs", &outs) &&
		    json_object_is_type(outs, json_type_array)) {
			for (j = 0; j < json_object_array_length(outs); j++) {
				o = json_object_array_get_idx(outs, j);
				room_ipynb_rejoin_output(o);
			}
			json_object_put(c->outputs);
			c->outputs = json_object_get(outs);
		}
	}
	for (i = 0; i < nb->ncells; i++) {
		if (*nb->cells[i]->id != '\0')
			continue;
		room_nb_mint_id(nb, id);
		free(nb->cells[i]->id);
		nb->cells[i]->id = xstrdup(id);
	}
	json_object_put(root);
	return (nb);

fail:
	room_nb_free(nb);
	json_object_put(root);
	return (NULL);
}

/* Read and parse a notebook file. */
struct room_nb *
room_ipynb_read(const char *path, char **cause)
{
	struct room_nb	*nb;
	char		*data, *why = NULL;
	size_t		 len;

	if (util_read_file(path, &data, &len, &why) != 0) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		return (NULL);
	}
	nb = room_ipynb_parse(data, len, &why);
	free(data);
	if (nb == NULL) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
	}
	return (nb);
}

/*
 * The writer: json.dumps(indent=1, sort_keys=True, ensure_ascii=False)
 * streamed straight from the room_nb, with nbformat.write's changes on
 * the way (multi-line strings split into lines, transient, trusted and
 * orig_nbformat dropped, blob references inlined), into a buffer that
 * is flushed to a file descriptor when there is one.  No copy of the
 * notebook is made, so a save needs little more memory than the
 * notebook itself.
 */
struct room_ipynb_out {
	char	*buf;
	size_t	 len;
	size_t	 cap;
	int	 fd;		/* -1: keep everything in buf */
	int	 error;		/* errno of a failed write */
};

#define ROOM_IPYNB_OUT_CHUNK	(256 * 1024)

static void
room_ipynb_out_flush(struct room_ipynb_out *o)
{
	size_t	off = 0;
	ssize_t	n;

	while (o->fd != -1 && off < o->len && o->error == 0) {
		n = write(o->fd, o->buf + off, o->len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->error = n == -1 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	o->len = 0;
}

static inline void
room_ipynb_out_reserve(struct room_ipynb_out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	if (o->fd != -1) {
		room_ipynb_out_flush(o);
		if (n <= o->cap)
			return;
	}
	while (o->len + n > o->cap)
		o->cap = o->cap == 0 ? ROOM_IPYNB_OUT_CHUNK : o->cap * 2;
	o->buf = xreallocarray(o->buf, 1, o->cap);
}

static inline void
room_ipynb_out(struct room_ipynb_out *o, const void *p, size_t n)
{
	if (o->fd != -1 && n > o->cap) {
		room_ipynb_out_flush(o);
		o->len = n;	/* write straight from p */
		{
			char	*save = o->buf;

			o->buf = (char *)p;
			room_ipynb_out_flush(o);
			o->buf = save;
		}
		return;
	}
	room_ipynb_out_reserve(o, n);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static inline void
room_ipynb_outc(struct room_ipynb_out *o, char c)
{
	room_ipynb_out_reserve(o, 1);
	o->buf[o->len++] = c;
}

static void
room_ipynb_outs(struct room_ipynb_out *o, const char *s)
{
	room_ipynb_out(o, s, strlen(s));
}

static void
room_ipynb_indent(struct room_ipynb_out *o, int level)
{
	room_ipynb_out_reserve(o, (size_t)level + 1);
	o->buf[o->len++] = '\n';
	memset(o->buf + o->len, ' ', (size_t)level);
	o->len += (size_t)level;
}

/*
 * Word-at-a-time scanning (SWAR): does any byte of w fall below n, or
 * equal c?  False positives only send a word to the byte loop.
 */
#define ROOM_IPYNB_ONES		0x0101010101010101ULL
#define ROOM_IPYNB_HIGHS	0x8080808080808080ULL

static inline int
room_ipynb_has_less(uint64_t w, unsigned n)
{
	return (((w - ROOM_IPYNB_ONES * n) & ~w & ROOM_IPYNB_HIGHS) != 0);
}

static inline int
room_ipynb_has_byte(uint64_t w, unsigned c)
{
	uint64_t	x = w ^ (ROOM_IPYNB_ONES * c);

	return (((x - ROOM_IPYNB_ONES) & ~x & ROOM_IPYNB_HIGHS) != 0);
}

/* Python json string escaping with ensure_ascii=False. */
static void
room_ipynb_put_string(struct room_ipynb_out *o, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i, run;
	char			 esc[8];

	room_ipynb_outc(o, '"');
	i = 0;
	while (i < len) {
		run = i;
		while (run + 8 <= len) {
			uint64_t	w;

			memcpy(&w, p + run, 8);
			if (room_ipynb_has_less(w, 0x20) ||
			    room_ipynb_has_byte(w, '"') ||
			    room_ipynb_has_byte(w, '\\'))
				break;
			run += 8;
		}
		for (; run < len && p[run] >= 0x20 && p[run] != '"' &&
		    p[run] != '\\'; run++)
			;
		if (run > i) {
			room_ipynb_out(o, s + i, run - i);
			i = run;
			if (i == len)
				break;
		}
		switch (p[i]) {
		case '"':
			room_ipynb_out(o, "\\\"", 2);
			break;
		case '\\':
			room_ipynb_out(o, "\\\\", 2);
			break;
		case '\n':
			room_ipynb_out(o, "\\n", 2);
			break;
		case '\r':
			room_ipynb_out(o, "\\r", 2);
			break;
		case '\t':
			room_ipynb_out(o, "\\t", 2);
			break;
		case '\b':
			room_ipynb_out(o, "\\b", 2);
			break;
		case '\f':
			room_ipynb_out(o, "\\f", 2);
			break;
		default:
			snprintf(esc, sizeof esc, "\\u%04x", p[i]);
			room_ipynb_out(o, esc, 6);
			break;
		}
		i++;
	}
	room_ipynb_outc(o, '"');
}

/* Python's float repr: shortest round-trip digits, repr's layout. */
static void
room_ipynb_put_double(struct room_ipynb_out *o, double d)
{
	char	buf[64], digits[32];
	int	prec, exp10, decpt, nd, i;
	char	*e, *p;

	if (isnan(d)) {
		room_ipynb_outs(o, "NaN");
		return;
	}
	if (isinf(d)) {
		room_ipynb_outs(o, d < 0 ? "-Infinity" : "Infinity");
		return;
	}
	if (d == 0) {
		room_ipynb_outs(o, signbit(d) ? "-0.0" : "0.0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	p = buf;
	if (*p == '-') {
		room_ipynb_outc(o, '-');
		p++;
	}
	e = strchr(p, 'e');
	exp10 = atoi(e + 1);
	nd = 0;
	for (; p < e; p++) {
		if (*p != '.')
			digits[nd++] = *p;
	}
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	decpt = exp10 + 1;
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			room_ipynb_outs(o, "0.");
			for (i = 0; i < -decpt; i++)
				room_ipynb_outc(o, '0');
			room_ipynb_outs(o, digits);
		} else if (decpt < nd) {
			room_ipynb_out(o, digits, (size_t)decpt);
			room_ipynb_outc(o, '.');
			room_ipynb_outs(o, digits + decpt);
		} else {
			room_ipynb_outs(o, digits);
			for (i = nd; i < decpt; i++)
				room_ipynb_outc(o, '0');
			room_ipynb_outs(o, ".0");
		}
		return;
	}
	room_ipynb_outc(o, digits[0]);
	if (nd > 1) {
		room_ipynb_outc(o, '.');
		room_ipynb_outs(o, digits + 1);
	}
	snprintf(buf, sizeof buf, "e%c%02d", exp10 < 0 ? '-' : '+',
	    abs(exp10));
	room_ipynb_outs(o, buf);
}

static int
room_ipynb_key_cmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* An object's keys, sorted, minus the skipped ones.  Caller frees. */
static const char **
room_ipynb_keys(struct json_object *obj, const char *const *skip,
    size_t *np)
{
	const char	**keys;
	size_t		  n, i = 0, k;

	n = (size_t)json_object_object_length(obj);
	keys = xreallocarray(NULL, n + 1, sizeof *keys);
	json_object_object_foreach(obj, key, val) {
		(void)val;
		for (k = 0; skip != NULL && skip[k] != NULL; k++) {
			if (strcmp(key, skip[k]) == 0)
				break;
		}
		if (skip == NULL || skip[k] == NULL)
			keys[i++] = key;
	}
	qsort(keys, i, sizeof *keys, room_ipynb_key_cmp);
	*np = i;
	return (keys);
}

/* Open "key": at level+1 after an optional comma. */
static void
room_ipynb_put_key(struct room_ipynb_out *o, const char *key, int level,
    int first)
{
	if (!first)
		room_ipynb_outc(o, ',');
	room_ipynb_indent(o, level + 1);
	room_ipynb_put_string(o, key, strlen(key));
	room_ipynb_out(o, ": ", 2);
}

/* json.dumps(indent=1, sort_keys=True, separators=(",", ": ")). */
static void
room_ipynb_put(struct room_ipynb_out *o, struct json_object *v, int level)
{
	const char	**keys;
	size_t		  n, i;
	int64_t		  iv;
	char		  num[32];

	switch (json_object_get_type(v)) {
	case json_type_null:
		room_ipynb_out(o, "null", 4);
		break;
	case json_type_boolean:
		room_ipynb_outs(o, json_object_get_boolean(v) ? "true" :
		    "false");
		break;
	case json_type_int:
		iv = json_object_get_int64(v);
		if (iv == INT64_MAX)
			snprintf(num, sizeof num, "%llu",
			    (unsigned long long)json_object_get_uint64(v));
		else
			snprintf(num, sizeof num, "%lld", (long long)iv);
		room_ipynb_outs(o, num);
		break;
	case json_type_double:
		room_ipynb_put_double(o, json_object_get_double(v));
		break;
	case json_type_string:
		room_ipynb_put_string(o, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
		break;
	case json_type_array:
		n = json_object_array_length(v);
		if (n == 0) {
			room_ipynb_out(o, "[]", 2);
			break;
		}
		room_ipynb_outc(o, '[');
		for (i = 0; i < n; i++) {
			if (i != 0)
				room_ipynb_outc(o, ',');
			room_ipynb_indent(o, level + 1);
			room_ipynb_put(o, json_object_array_get_idx(v, i),
			    level + 1);
		}
		room_ipynb_indent(o, level);
		room_ipynb_outc(o, ']');
		break;
	case json_type_object:
		keys = room_ipynb_keys(v, NULL, &n);
		if (n == 0) {
			room_ipynb_out(o, "{}", 2);
			free(keys);
			break;
		}
		room_ipynb_outc(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_put_key(o, keys[i], level, i == 0);
			room_ipynb_put(o, json_object_object_get(v, keys[i]),
			    level + 1);
		}
		free(keys);
		room_ipynb_indent(o, level);
		room_ipynb_outc(o, '}');
		break;
	}
}

/*
 * A string as nbformat writes multi-line strings: the list of
 * str.splitlines(keepends=True) (UTF-8: breaks at \n, \r, \r\n, \v, \f,
 * \x1c-\x1e, U+0085, U+2028, U+2029).
 */
static void
room_ipynb_put_lines(struct room_ipynb_out *o, const char *s, size_t len,
    int level)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 start = 0, i = 0, brk;
	int			 first = 1;

	if (len == 0) {
		room_ipynb_out(o, "[]", 2);
		return;
	}
	room_ipynb_outc(o, '[');
	while (i < len) {
		brk = 0;
		while (i + 8 <= len) {
			uint64_t	w;

			memcpy(&w, p + i, 8);
			if (room_ipynb_has_less(w, 0x20) ||
			    room_ipynb_has_byte(w, 0xc2) ||
			    room_ipynb_has_byte(w, 0xe2))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		if (p[i] >= 0x20 && p[i] != 0xc2 && p[i] != 0xe2) {
			i++;
			continue;
		}
		if (p[i] == '\r')
			brk = (i + 1 < len && p[i + 1] == '\n') ? 2 : 1;
		else if (p[i] == '\n' || p[i] == 0x0b || p[i] == 0x0c ||
		    (p[i] >= 0x1c && p[i] <= 0x1e))
			brk = 1;
		else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] == 0x85)
			brk = 2;
		else if (p[i] == 0xe2 && i + 2 < len && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			brk = 3;
		if (brk == 0) {
			i++;
			continue;
		}
		i += brk;
		if (!first)
			room_ipynb_outc(o, ',');
		first = 0;
		room_ipynb_indent(o, level + 1);
		room_ipynb_put_string(o, s + start, i - start);
		start = i;
	}
	if (start < len) {
		if (!first)
			room_ipynb_outc(o, ',');
		room_ipynb_indent(o, level + 1);
		room_ipynb_put_string(o, s + start, len - start);
	}
	room_ipynb_indent(o, level);
	room_ipynb_outc(o, ']');
}

/*
 * A value kept in the blob store ({"runtimed_blob": sha256, "size": n})
 * as the real value: a string, or parsed JSON for a JSON mimetype.
 * NULL (and room_ipynb_blob_error set) when it cannot be read.
 */
static struct json_object *
room_ipynb_blob_value(struct json_object *ref, int json)
{
	struct json_object	*h, *v;
	char			*data = NULL, *cause = NULL;
	size_t			 len;

	if (!json_object_object_get_ex(ref, "runtimed_blob", &h) ||
	    !json_object_is_type(h, json_type_string))
		return (NULL);
	if (room_ipynb_blob_dir == NULL) {
		if (room_ipynb_blob_error == NULL)
			xasprintf(&room_ipynb_blob_error, "output blob %s: no "
			    "blob store", json_object_get_string(h));
		return (NULL);
	}
	if (blob_get(room_ipynb_blob_dir, json_object_get_string(h), &data,
	    &len, &cause) != 0) {
		if (room_ipynb_blob_error == NULL)
			xasprintf(&room_ipynb_blob_error, "output blob: %s",
			    cause);
		free(cause);
		return (NULL);
	}
	v = NULL;
	if (json && (v = mpjson_parse(data, len, &cause)) == NULL)
		free(cause);
	if (v == NULL)
		v = json_object_new_string_len(data, (int)len);
	free(data);
	return (v);
}

static int
room_ipynb_is_blob(struct json_object *v)
{
	return (json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "runtimed_blob", NULL));
}

/* A value that nbformat may split into lines, blob references inlined. */
static void
room_ipynb_put_text(struct room_ipynb_out *o, struct json_object *v,
    int split, int json, int level)
{
	struct json_object	*real = NULL;

	if (room_ipynb_is_blob(v) &&
	    (real = room_ipynb_blob_value(v, json)) != NULL)
		v = real;
	if (split && json_object_is_type(v, json_type_string))
		room_ipynb_put_lines(o, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v), level);
	else
		room_ipynb_put(o, v, level);
	json_object_put(real);
}

/* A mime bundle (output data, attachment). */
static void
room_ipynb_put_bundle(struct room_ipynb_out *o, struct json_object *data,
    int level)
{
	const char	**keys;
	size_t		  n, i;

	if (!json_object_is_type(data, json_type_object)) {
		room_ipynb_put(o, data, level);
		return;
	}
	keys = room_ipynb_keys(data, NULL, &n);
	if (n == 0)
		room_ipynb_out(o, "{}", 2);
	else {
		room_ipynb_outc(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_put_key(o, keys[i], level, i == 0);
			room_ipynb_put_text(o,
			    json_object_object_get(data, keys[i]),
			    room_ipynb_split_mime(keys[i]),
			    room_ipynb_json_mime(keys[i]), level + 1);
		}
		room_ipynb_indent(o, level);
		room_ipynb_outc(o, '}');
	}
	free(keys);
}

/* An output as saved: lines split, transient dropped, blobs inlined. */
static void
room_ipynb_put_output(struct room_ipynb_out *o, struct json_object *out,
    int level)
{
	static const char *const skip[] = { "transient", NULL };
	struct json_object	*type, *v;
	const char		**keys, *t = "";
	size_t			  n, i;

	if (!json_object_is_type(out, json_type_object)) {
		room_ipynb_put(o, out, level);
		return;
	}
	if (json_object_object_get_ex(out, "output_type", &type) &&
	    json_object_is_type(type, json_type_string))
		t = json_object_get_string(type);
	keys = room_ipynb_keys(out, skip, &n);
	if (n == 0)
		room_ipynb_out(o, "{}", 2);
	else {
		room_ipynb_outc(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_put_key(o, keys[i], level, i == 0);
			v = json_object_object_get(out, keys[i]);
			if (strcmp(keys[i], "data") == 0 &&
			    (strcmp(t, "execute_result") == 0 ||
			    strcmp(t, "display_data") == 0))
				room_ipynb_put_bundle(o, v, level + 1);
			else if (strcmp(keys[i], "text") == 0)
				room_ipynb_put_text(o, v,
				    strcmp(t, "stream") == 0, 0, level + 1);
			else
				room_ipynb_put(o, v, level + 1);
		}
		room_ipynb_indent(o, level);
		room_ipynb_outc(o, '}');
	}
	free(keys);
}

/* An object minus some keys. */
static void
room_ipynb_put_skipping(struct room_ipynb_out *o, struct json_object *obj,
    const char *const *skip, int level)
{
	const char	**keys;
	size_t		  n, i;

	keys = room_ipynb_keys(obj, skip, &n);
	if (n == 0)
		room_ipynb_out(o, "{}", 2);
	else {
		room_ipynb_outc(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_put_key(o, keys[i], level, i == 0);
			room_ipynb_put(o, json_object_object_get(obj, keys[i]),
			    level + 1);
		}
		room_ipynb_indent(o, level);
		room_ipynb_outc(o, '}');
	}
	free(keys);
}

/* One cell; keys in sorted order. */
static void
room_ipynb_put_cell(struct room_ipynb_out *o, struct room_cell *c)
{
	static const char *const skip[] = { "trusted", NULL };
	const char	**keys;
	char		  num[32];
	size_t		  n, i, nout;
	int		  first = 1;

	room_ipynb_outc(o, '{');
	if (c->attachments != NULL && c->type != ROOM_CELL_CODE &&
	    json_object_is_type(c->attachments, json_type_object)) {
		room_ipynb_put_key(o, "attachments", 2, first);
		first = 0;
		keys = room_ipynb_keys(c->attachments, NULL, &n);
		if (n == 0)
			room_ipynb_out(o, "{}", 2);
		else {
			room_ipynb_outc(o, '{');
			for (i = 0; i < n; i++) {
				room_ipynb_put_key(o, keys[i], 3, i == 0);
				room_ipynb_put_bundle(o, json_object_object_get(
				    c->attachments, keys[i]), 4);
			}
			room_ipynb_indent(o, 3);
			room_ipynb_outc(o, '}');
		}
		free(keys);
	}
	room_ipynb_put_key(o, "cell_type", 2, first);
	room_ipynb_put_string(o, room_nb_type_name(c->type),
	    strlen(room_nb_type_name(c->type)));
	if (c->type == ROOM_CELL_CODE) {
		room_ipynb_put_key(o, "execution_count", 2, 0);
		if (c->execution_count < 0)
			room_ipynb_out(o, "null", 4);
		else {
			snprintf(num, sizeof num, "%lld",
			    (long long)c->execution_count);
			room_ipynb_outs(o, num);
		}
	}
	room_ipynb_put_key(o, "id", 2, 0);
	room_ipynb_put_string(o, c->id, strlen(c->id));
	room_ipynb_put_key(o, "metadata", 2, 0);
	room_ipynb_put_skipping(o, c->metadata, skip, 3);
	if (c->type == ROOM_CELL_CODE) {
		room_ipynb_put_key(o, "outputs", 2, 0);
		nout = c->outputs != NULL ?
		    json_object_array_length(c->outputs) : 0;
		if (nout == 0)
			room_ipynb_out(o, "[]", 2);
		else {
			room_ipynb_outc(o, '[');
			for (i = 0; i < nout; i++) {
				if (i != 0)
					room_ipynb_outc(o, ',');
				room_ipynb_indent(o, 4);
				room_ipynb_put_output(o,
				    json_object_array_get_idx(c->outputs, i),
				    4);
			}
			room_ipynb_indent(o, 3);
			room_ipynb_outc(o, ']');
		}
	}
	room_ipynb_put_key(o, "source", 2, 0);
	room_ipynb_put_lines(o, c->source, c->source_len, 3);
	room_ipynb_indent(o, 2);
	room_ipynb_outc(o, '}');
}

/* The notebook as nbformat.write writes it, trailing newline included. */
static void
room_ipynb_put_nb(struct room_ipynb_out *o, struct room_nb *nb)
{
	static const char *const skip[] = { "orig_nbformat",
	    "orig_nbformat_minor", "signature", NULL };
	char	num[32];
	size_t	i;

	room_ipynb_outc(o, '{');
	room_ipynb_put_key(o, "cells", 0, 1);
	if (nb->ncells == 0)
		room_ipynb_out(o, "[]", 2);
	else {
		room_ipynb_outc(o, '[');
		for (i = 0; i < nb->ncells; i++) {
			if (i != 0)
				room_ipynb_outc(o, ',');
			room_ipynb_indent(o, 2);
			room_ipynb_put_cell(o, nb->cells[i]);
		}
		room_ipynb_indent(o, 1);
		room_ipynb_outc(o, ']');
	}
	room_ipynb_put_key(o, "metadata", 0, 0);
	room_ipynb_put_skipping(o, nb->metadata, skip, 1);
	room_ipynb_put_key(o, "nbformat", 0, 0);
	room_ipynb_outc(o, '4');
	room_ipynb_put_key(o, "nbformat_minor", 0, 0);
	snprintf(num, sizeof num, "%d", nb->nbformat_minor < 5 ? 5 :
	    nb->nbformat_minor);
	room_ipynb_outs(o, num);
	room_ipynb_out(o, "\n}\n", 3);
}

/* Any json value in Python's layout, no trailing newline.  Caller frees. */
char *
room_ipynb_json_dump(struct json_object *v, size_t *len)
{
	struct room_ipynb_out	o;

	memset(&o, 0, sizeof o);
	o.fd = -1;
	room_ipynb_put(&o, v, 0);
	room_ipynb_outc(&o, '\0');
	*len = o.len - 1;
	return (o.buf);
}

/* The notebook as nbformat.write would write it.  Caller frees. */
char *
room_ipynb_dump(struct room_nb *nb, size_t *len)
{
	struct room_ipynb_out	o;

	memset(&o, 0, sizeof o);
	o.fd = -1;
	room_ipynb_put_nb(&o, nb);
	room_ipynb_outc(&o, '\0');
	*len = o.len - 1;
	return (o.buf);
}

static void
room_ipynb_fsync_dir(const char *path)
{
	char	*copy;
	int	 fd;

	copy = xstrdup(path);
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Save atomically: stream into a temporary file in the same directory,
 * fsync, rename over path, fsync the directory.  A crash leaves the old
 * or the new file, never a torn one.
 */
int
room_ipynb_write(struct room_nb *nb, const char *path, char **cause)
{
	struct room_ipynb_out	 o;
	struct stat		 sb;
	mode_t			 mode = 0644;
	char			*tmp;
	int			 fd;

	free(room_ipynb_blob_error);
	room_ipynb_blob_error = NULL;
	if (stat(path, &sb) == 0)
		mode = sb.st_mode & 07777;
	xasprintf(&tmp, "%s.runtimed-tmp-%ld", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		xasprintf(cause, "cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return (-1);
	}
	memset(&o, 0, sizeof o);
	o.fd = fd;
	o.cap = ROOM_IPYNB_OUT_CHUNK;
	o.buf = xmalloc(o.cap);
	room_ipynb_put_nb(&o, nb);
	room_ipynb_out_flush(&o);
	free(o.buf);
	if (room_ipynb_blob_error != NULL) {
		xasprintf(cause, "%s: not saved: %s", path,
		    room_ipynb_blob_error);
		free(room_ipynb_blob_error);
		room_ipynb_blob_error = NULL;
		goto fail;
	}
	if (o.error != 0 || fchmod(fd, mode) != 0 || fsync(fd) != 0) {
		xasprintf(cause, "cannot write %s: %s", tmp,
		    strerror(o.error != 0 ? o.error : errno));
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		xasprintf(cause, "cannot write %s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		xasprintf(cause, "cannot rename %s: %s", tmp, strerror(errno));
		goto fail;
	}
	room_ipynb_fsync_dir(path);
	free(tmp);
	return (0);

fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
	free(tmp);
	return (-1);
}

/* Fill kernelspec and language_info for a new notebook, if absent. */
void
room_ipynb_set_kernelspec(struct room_nb *nb, const char *name,
    const char *display, const char *language)
{
	struct json_object	*ks, *li;

	if (json_object_object_get_ex(nb->metadata, "kernelspec", NULL))
		return;
	ks = json_object_new_object();
	json_object_object_add(ks, "display_name",
	    json_object_new_string(display != NULL ? display : name));
	json_object_object_add(ks, "language",
	    json_object_new_string(language != NULL ? language : "python"));
	json_object_object_add(ks, "name", json_object_new_string(name));
	json_object_object_add(nb->metadata, "kernelspec", ks);
	if (!json_object_object_get_ex(nb->metadata, "language_info", NULL)) {
		li = json_object_new_object();
		json_object_object_add(li, "name", json_object_new_string(
		    language != NULL ? language : "python"));
		json_object_object_add(nb->metadata, "language_info", li);
	}
}
