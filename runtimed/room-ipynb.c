/* SPDX-License-Identifier: ISC */
/*
 * room-ipynb.c: reading .ipynb files (nbformat 4.x) into a room_nb.
 *
 * Loading follows nbformat's reader: multi-line fields stored as lists
 * of lines are joined, orig_nbformat/signature/trusted are dropped, and
 * keys runtimed does not model are kept for the writer
 * (room-ipynb-write.c), which saves as nbformat.write does.
 */

#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"
#include "room-ipynb.h"

/* Every notebook nbformat reads nests less (proto.h). */
#define ROOM_IPYNB_MAX_DEPTH	PROTO_MAX_DEPTH

/*
 * The fast reader takes the text a slice at a time: each slice is
 * checked while it is in the cache and the file is never held whole.
 */
#ifndef ROOM_IPYNB_SLICE
#define ROOM_IPYNB_SLICE	(256 * 1024)
#endif

/* String literals this long (images) skip json-c's byte loop. */
#ifndef ROOM_IPYNB_SPLICE_MIN
#define ROOM_IPYNB_SPLICE_MIN	JSON_SPLICE_MIN
#endif

/* Why a cell's id cannot be kept (the loader mints one). */
enum room_ipynb_idfix {
	ROOM_IPYNB_ID_OK,
	ROOM_IPYNB_ID_MISSING,		/* nbformat mints one too */
	ROOM_IPYNB_ID_NOT_STRING,
	ROOM_IPYNB_ID_EMPTY,
	ROOM_IPYNB_ID_DUPLICATE,	/* nbformat mints one too */
};

/*
 * Text fed to json-c a slice at a time, with the checks json-c does not
 * make (strict UTF-8, no raw control character in a string, nothing but
 * white space around the notebook) made on the way, and long string
 * literals taken verbatim (json-splice.c).  It only accepts or refuses:
 * a refused text is read again by room_ipynb_json, which says why.
 */
struct room_ipynb_feed {
	struct json_tokener	*tok;
	struct json_splice	*splice;
	struct json_object	*root;		/* once the tokener is done */
	struct json_object	*cells;		/* the cells list being read */
	size_t			 joined;	/* its cells pre-joined */
	size_t			 total;		/* bytes fed */
	int			 started;	/* first non-blank byte seen */
	int			 failed;
};

static struct json_object	*room_ipynb_join(struct json_object *);
static void	room_ipynb_rejoin_bundle(struct json_object *);
static void	room_ipynb_pack_text(msgpack_packer *, struct json_object *,
		    unsigned int);
static void	room_ipynb_pack_output(msgpack_packer *,
		    struct json_object *);
static struct proto_outputs	*room_ipynb_outputs(struct json_object *);
static void	room_ipynb_outputs_drop(struct json_object *, void *);
static const char	*room_ipynb_num(size_t, char [32]);
static char	*room_ipynb_where(const char *, size_t, size_t);
static const char	*room_ipynb_eof_what(struct json_tokener *);
static size_t	room_ipynb_raw_control(const char *, size_t);
static int	room_ipynb_cut_char(const char *, size_t, size_t);
static struct json_object	*room_ipynb_json(const char *, size_t, char **);
static size_t	room_ipynb_feed_cut(const unsigned char *, size_t);
static void	room_ipynb_feed_prejoin(struct room_ipynb_feed *);
static int	room_ipynb_feed_add(struct room_ipynb_feed *, const char *,
		    size_t, size_t, int);
static struct room_ipynb_feed	*room_ipynb_feed_create(void);
static struct json_object	*room_ipynb_feed_finish(
		    struct room_ipynb_feed *);
static void	room_ipynb_feed_free(struct room_ipynb_feed *);
static void	room_ipynb_prejoin_cell(struct json_object *);
static int	room_ipynb_major(struct json_object *);
static struct room_nb	*room_ipynb_convert(struct json_object *, char **);
static struct room_nb	*room_ipynb_careful(const char *, size_t, char **);
static struct json_object	*room_ipynb_fast_bytes(const char *, size_t);
static struct json_object	*room_ipynb_fast_fd(int, size_t, int *);
static void	room_ipynb_keep(struct json_object **, const char *,
		    struct json_object *);
static int	room_ipynb_parse_code(struct room_nb *, struct room_cell *,
		    struct json_object *, size_t, struct room_ipynb_check *,
		    char **);
static int	room_ipynb_parse_cell(struct room_nb *, struct json_object *,
		    size_t, struct room_ipynb_check *, enum room_ipynb_idfix *,
		    char **);
static void	room_ipynb_name_warnings(struct room_nb *, size_t);

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

/*
 * Text as nbformat reads it: a list of strings packed as the one string
 * it joins to, straight from the lines (no joined json-c string between);
 * anything else as mpjson packs it depth levels in.  pk writes to a
 * struct proto_fill (room_ipynb_outputs).
 */
static void
room_ipynb_pack_text(msgpack_packer *pk, struct json_object *v,
    unsigned int depth)
{
	struct proto_fill	*f;
	struct array_list	*al;
	struct json_object	*s;
	size_t			 i, n, total = 0;

	if (!json_object_is_type(v, json_type_array)) {
		mpjson_pack_depth(pk, v, depth);
		return;
	}
	al = json_object_get_array(v);
	for (i = 0; i < al->length; i++) {
		s = al->array[i];
		if (!json_object_is_type(s, json_type_string)) {
			mpjson_pack_depth(pk, v, depth);
			return;
		}
		total += (size_t)json_object_get_string_len(s);
	}
	msgpack_pack_str(pk, total);
	/* The lines straight into the buffer: a call each was 160,000. */
	f = pk->data;
	if (f->p != NULL) {
		for (i = 0; i < al->length; i++) {
			s = al->array[i];
			n = (size_t)json_object_get_string_len(s);
			memcpy(f->p + f->len, json_object_get_string(s), n);
			f->len += n;
		}
	} else
		f->len += total;
}

/*
 * An output as mpjson packs it one level into the list, with the joins
 * nbformat's reader makes: the text of a stream (or error), the values
 * of a display's data but JSON types'.
 */
static void
room_ipynb_pack_output(msgpack_packer *pk, struct json_object *out)
{
	struct json_object	*type;
	int			 bundle;

	if (!json_object_is_type(out, json_type_object) ||
	    !json_object_object_get_ex(out, "output_type", &type) ||
	    !json_object_is_type(type, json_type_string)) {
		mpjson_pack_depth(pk, out, 1);
		return;
	}
	bundle = strcmp(json_object_get_string(type), "execute_result") == 0 ||
	    strcmp(json_object_get_string(type), "display_data") == 0;
	msgpack_pack_map(pk, (size_t)json_object_object_length(out));
	json_object_object_foreach(out, key, val) {
		proto_pack_cstr(pk, key);
		if (!bundle && strcmp(key, "text") == 0)
			room_ipynb_pack_text(pk, val, 2);
		else if (!bundle || strcmp(key, "data") != 0 ||
		    !json_object_is_type(val, json_type_object))
			mpjson_pack_depth(pk, val, 2);
		else {
			msgpack_pack_map(pk,
			    (size_t)json_object_object_length(val));
			json_object_object_foreach(val, mime, mval) {
				proto_pack_cstr(pk, mime);
				if (room_ipynb_json_mime(mime))
					mpjson_pack_depth(pk, mval, 3);
				else
					room_ipynb_pack_text(pk, mval, 3);
			}
		}
	}
}

/*
 * A list of outputs kept packed (decision 097), each in a buffer of its
 * size: one pass counts, one writes (a packer's doubling buffer left
 * slack that scattered the heap).
 */
static struct proto_outputs *
room_ipynb_outputs(struct json_object *list)
{
	struct proto_outputs	*outs;
	struct proto_fill	 f;
	struct json_object	*o;
	msgpack_packer		 pk;
	size_t			 i, n, len;

	outs = room_nb_outputs_new();
	msgpack_packer_init(&pk, &f, proto_fill_write);
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(list, i);
		f.p = NULL;
		f.len = 0;
		room_ipynb_pack_output(&pk, o);
		len = f.len;
		f.p = xmalloc(len == 0 ? 1 : len);
		f.len = 0;
		room_ipynb_pack_output(&pk, o);
		if (f.len != len ||
		    proto_outputs_append_take(outs, f.p, len) != 0)
			fatalx("%s: an output packed to %zu bytes, then %zu",
			    __func__, len, f.len);
	}
	return (outs);
}

/* json-c's deleter of a cell's outputs packed while it was read. */
static void
room_ipynb_outputs_drop(struct json_object *cell, void *outs)
{
	(void)cell;
	proto_outputs_unref(outs);
}

/*
 * The joins room_ipynb_parse_cell makes (source, attachments), made early
 * by the fast reader (joining a joined string again changes nothing); a
 * code cell's outputs packed as room_ipynb_parse_code would, kept on the
 * cell (json-c's userdata, freed with it) and their json-c freed here,
 * so a load never holds the notebook's outputs in both forms.
 */
static void
room_ipynb_prejoin_cell(struct json_object *cell)
{
	struct json_object	*v, *s;

	if (!json_object_is_type(cell, json_type_object))
		return;
	if (json_object_object_get_ex(cell, "source", &v) &&
	    (s = room_ipynb_join(v)) != NULL)
		json_object_object_add(cell, "source", s);
	if (json_object_object_get_ex(cell, "attachments", &v) &&
	    json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, akey, aval) {
			(void)akey;
			room_ipynb_rejoin_bundle(aval);
		}
	}
	if (!json_object_object_get_ex(cell, "cell_type", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "code") != 0 ||
	    json_object_get_string_len(v) != 4 ||
	    !json_object_object_get_ex(cell, "outputs", &v) ||
	    !json_object_is_type(v, json_type_array) ||
	    json_object_get_userdata(cell) != NULL)
		return;
	json_object_set_userdata(cell, room_ipynb_outputs(v),
	    room_ipynb_outputs_drop);
	json_object_object_del(cell, "outputs");
}

/* n with thousands separators, as people read byte offsets. */
static const char *
room_ipynb_num(size_t n, char buf[32])
{
	char	tmp[32];
	size_t	len, i, o = 0;

	len = (size_t)snprintf(tmp, sizeof tmp, "%zu", n);
	for (i = 0; i < len; i++) {
		if (i != 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return (buf);
}

/* "byte N (line L, column C)" for an offset; caller frees. */
static char *
room_ipynb_where(const char *data, size_t len, size_t off)
{
	size_t	i, line = 1, col = 1;
	char	nbuf[32], *s;

	for (i = 0; i < off && i < len; i++) {
		if (data[i] == '\n') {
			line++;
			col = 1;
		} else if (((unsigned char)data[i] & 0xc0) != 0x80)
			col++;
	}
	xasprintf(&s, "byte %s (line %zu, column %zu)",
	    room_ipynb_num(off, nbuf), line, col);
	return (s);
}

/* What the tokener was in the middle of when the text ran out. */
static const char *
room_ipynb_eof_what(struct json_tokener *tok)
{
	enum json_tokener_state	st = tok->stack[tok->depth].state;

	if (st == json_tokener_state_eatws)
		st = tok->stack[tok->depth].saved_state;
	switch (st) {
	case json_tokener_state_string:
	case json_tokener_state_string_escape:
	case json_tokener_state_escape_unicode:
	case json_tokener_state_escape_unicode_need_escape:
	case json_tokener_state_escape_unicode_need_u:
		return ("a string");
	case json_tokener_state_object_field_start:
	case json_tokener_state_object_field:
	case json_tokener_state_object_field_end:
	case json_tokener_state_object_field_start_after_sep:
		return ("an object key");
	case json_tokener_state_object_value:
	case json_tokener_state_object_value_add:
	case json_tokener_state_object_sep:
		return ("an object");
	case json_tokener_state_array:
	case json_tokener_state_array_add:
	case json_tokener_state_array_sep:
	case json_tokener_state_array_after_sep:
		return ("a list");
	case json_tokener_state_number:
		return ("a number");
	case json_tokener_state_comment_start:
	case json_tokener_state_comment:
	case json_tokener_state_comment_eol:
	case json_tokener_state_comment_end:
		return ("a comment");
	case json_tokener_state_null:
	case json_tokener_state_boolean:
	case json_tokener_state_inf:
		return ("a literal");
	default:
		return ("a value");
	}
}

/* The first raw control character in a string of the whole text, or len. */
static size_t
room_ipynb_raw_control(const char *data, size_t len)
{
	int	in = 0, esc = 0;

	/* JSON and Python's json refuse them raw; json-c does not. */
	return (json_splice_scan((const unsigned char *)data, len, &in, &esc));
}

/* Does the text end inside the UTF-8 character that starts at bad? */
static int
room_ipynb_cut_char(const char *data, size_t len, size_t bad)
{
	const unsigned char	*p = (const unsigned char *)data + bad;
	size_t			 need, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		need = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		need = 4;
	else
		return (0);
	if (len - bad >= need)
		return (0);
	for (i = 1; i < len - bad; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
	}
	return (1);
}

/*
 * JSON text to a value, or NULL with a cause a person can act on: what
 * is wrong and at which byte.  nbformat refuses the same files (it
 * decodes UTF-8 strictly, then json.loads).
 */
static struct json_object *
room_ipynb_json(const char *data, size_t len, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*root;
	enum json_tokener_error	 jerr;
	size_t			 used, i, bad;
	char			*where, nbuf[32];
	unsigned char		 ch;

	if (len == 0) {
		xasprintf(cause, "the file is empty");
		return (NULL);
	}
	for (i = 0; i < len && strchr(" \t\r\n", data[i]) != NULL; i++)
		;
	if (i == len) {
		xasprintf(cause, "the file holds only white space (%s bytes)",
		    room_ipynb_num(len, nbuf));
		return (NULL);
	}
	if (!utf8_valid(data, len, &bad) && room_ipynb_cut_char(data, len,
	    bad)) {
		/* Cut inside a character: say what the text was in. */
		if ((root = room_ipynb_json(data, bad, cause)) != NULL) {
			json_object_put(root);
			xasprintf(cause, "the file ends at byte %s in the "
			    "middle of a character (truncated?)",
			    room_ipynb_num(len, nbuf));
		} else if (strncmp(*cause, "the file ends at byte ", 22) == 0) {
			where = *cause;
			xasprintf(cause, "the file ends at byte %s%s",
			    room_ipynb_num(len, nbuf), strchr(where + 22, ' '));
			free(where);
		}
		return (NULL);
	}
	if (!utf8_valid(data, len, &bad)) {
		where = room_ipynb_where(data, len, bad);
		xasprintf(cause, "not UTF-8: %s is 0x%02x, not valid UTF-8 "
		    "(a Latin-1 file? save it as UTF-8)", where,
		    (unsigned char)data[bad]);
		free(where);
		return (NULL);
	}
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		xasprintf(cause, "the file starts with a byte order mark "
		    "(EF BB BF), which JSON does not allow; remove it");
		return (NULL);
	}
	ch = (unsigned char)data[i];
	if (ch != '{' && ch != '[' && ch != '"' && ch != '-' &&
	    (ch < '0' || ch > '9') && ch != 't' && ch != 'f' && ch != 'n' &&
	    ch != 'N' && ch != 'I' && ch != '/') {
		where = room_ipynb_where(data, len, i);
		xasprintf(cause, "not JSON text: it starts with %s%c%s at %s, "
		    "where a notebook starts with {", isprint(ch) ? "'" : "",
		    isprint(ch) ? ch : '?', isprint(ch) ? "'" : "", where);
		free(where);
		return (NULL);
	}

	if ((i = room_ipynb_raw_control(data, len)) < len) {
		where = room_ipynb_where(data, len, i);
		xasprintf(cause, "not JSON: a raw control character "
		    "(0x%02x) in a string at %s; JSON needs it escaped",
		    (unsigned char)data[i], where);
		free(where);
		return (NULL);
	}

	/* Strict, as Python's json: no comments, quotes ' or commas ,] */
	tok = json_tokener_new_ex(ROOM_IPYNB_MAX_DEPTH);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_ALLOW_TRAILING_CHARS);
	root = json_tokener_parse_ex(tok, data, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		xasprintf(cause, "the file ends at byte %s in the middle of %s "
		    "(truncated?)", room_ipynb_num(len, nbuf),
		    room_ipynb_eof_what(tok));
		json_tokener_free(tok);
		json_object_put(root);
		return (NULL);
	}
	json_tokener_free(tok);
	if (root == NULL || jerr != json_tokener_success) {
		where = room_ipynb_where(data, len, used);
		if (jerr == json_tokener_error_depth)
			xasprintf(cause, "not JSON: nested deeper than %d "
			    "at %s", ROOM_IPYNB_MAX_DEPTH, where);
		else if (used < len && isprint((unsigned char)data[used]))
			xasprintf(cause, "not JSON: %s%sunexpected %s%c%s "
			    "at %s",
			    jerr == json_tokener_error_parse_unexpected ? "" :
			    json_tokener_error_desc(jerr),
			    jerr == json_tokener_error_parse_unexpected ? "" :
			    ": ", data[used] == '\'' ? "\"" : "'", data[used],
			    data[used] == '\'' ? "\"" : "'", where);
		else
			xasprintf(cause, "not JSON: %s at %s",
			    json_tokener_error_desc(jerr), where);
		free(where);
		json_object_put(root);
		return (NULL);
	}
	for (i = used; i < len; i++) {
		if (strchr(" \t\r\n", data[i]) == NULL) {
			where = room_ipynb_where(data, len, i);
			xasprintf(cause, "not JSON: something follows the "
			    "notebook at %s", where);
			free(where);
			json_object_put(root);
			return (NULL);
		}
	}
	return (root);
}

/*
 * Where UTF-8 checking of a slice stops so that no character is cut:
 * before a trailing lead byte whose sequence the slice does not hold.
 */
static size_t
room_ipynb_feed_cut(const unsigned char *p, size_t len)
{
	size_t	i, need;

	for (i = len; i > 0 && len - i < 3; i--) {
		if ((p[i - 1] & 0xc0) == 0x80)
			continue;
		if (p[i - 1] < 0xc0)
			return (len);
		need = p[i - 1] >= 0xf0 ? 4 : p[i - 1] >= 0xe0 ? 3 : 2;
		return (len - (i - 1) < need ? i - 1 : len);
	}
	return (len);
}

/*
 * Join the line lists of each cell the tokener has finished, as the
 * conversion would, so the lists' thousands of small strings are freed
 * while the rest of the file is read: peak memory is the notebook, not
 * the notebook's lines.  The tokener's stack is json-c's published
 * state; the cells list is the value at depth 1 of the "cells" key.
 */
static void
room_ipynb_feed_prejoin(struct room_ipynb_feed *f)
{
	struct json_tokener	*tok = f->tok;
	struct json_object	*cells;
	size_t			 n;

	if (tok->depth < 1 || tok->stack[0].obj_field_name == NULL ||
	    strcmp(tok->stack[0].obj_field_name, "cells") != 0)
		return;
	cells = tok->stack[1].current;
	if (!json_object_is_type(cells, json_type_array))
		return;
	if (cells != f->cells) {
		f->cells = cells;
		f->joined = 0;
	}
	n = json_object_array_length(cells);
	for (; f->joined < n; f->joined++)
		room_ipynb_prejoin_cell(json_object_array_get_idx(cells,
		    f->joined));
}

/*
 * Feed the next bytes; data[-carry, 0) are the bytes of a character
 * the last slice cut, which the caller keeps before data (or 0 when
 * there is none).  Returns how many of data[-carry, len) are left
 * unchecked at the end (at most 3), or -1 when the text is refused.
 */
static int
room_ipynb_feed_add(struct room_ipynb_feed *f, const char *data,
    size_t len, size_t carry, int last)
{
	const unsigned char	*p = (const unsigned char *)data - carry;
	struct json_object	*v;
	size_t			 n = len + carry, cut, i = 0, used;

	if (f->failed)
		return (-1);
	f->total += len;
	cut = last ? n : room_ipynb_feed_cut(p, n);
	if (!utf8_valid((const char *)p, cut, NULL))
		goto refuse;
	if (!f->started) {
		for (; i < len && strchr(" \t\r\n", data[i]) != NULL; i++)
			;
		if (i < len) {
			/* Not a BOM, nor anything but a notebook's {. */
			if (data[i] != '{')
				goto refuse;
			f->started = 1;
		}
	}
	if (f->root != NULL) {
		used = 0;
		goto trailing;
	}
	if (i == len)
		return ((int)(n - cut));
	/* Raw control characters are refused there, as room_ipynb_json does. */
	switch (json_splice_feed(f->splice, data + i, len - i, &v)) {
	case JSON_SPLICE_MORE:
		room_ipynb_feed_prejoin(f);
		return ((int)(n - cut));
	case JSON_SPLICE_DONE:
		break;
	default:
		goto refuse;
	}
	f->root = v;
	data += i;
	len -= i;
	used = json_splice_parse_end(f->splice);
trailing:
	for (i = used; i < len; i++) {
		if (strchr(" \t\r\n", data[i]) == NULL)
			goto refuse;
	}
	return ((int)(n - cut));

refuse:
	f->failed = 1;
	return (-1);
}

static struct room_ipynb_feed *
room_ipynb_feed_create(void)
{
	struct room_ipynb_feed	*f;

	f = xcalloc(1, sizeof *f);
	f->tok = json_tokener_new_ex(ROOM_IPYNB_MAX_DEPTH);
	json_tokener_set_flags(f->tok, JSON_TOKENER_STRICT |
	    JSON_TOKENER_ALLOW_TRAILING_CHARS);
	f->splice = json_splice_create(f->tok, ROOM_IPYNB_SPLICE_MIN,
	    JSON_SPLICE_CONTROLS);
	return (f);
}

/* The whole value, or NULL when the text was refused or ends early. */
static struct json_object *
room_ipynb_feed_finish(struct room_ipynb_feed *f)
{
	struct json_object	*root;

	if (f->failed || f->root == NULL || f->total > INT32_MAX)
		return (NULL);
	root = f->root;
	f->root = NULL;
	return (root);
}

static void
room_ipynb_feed_free(struct room_ipynb_feed *f)
{
	json_object_put(f->root);
	json_splice_free(f->splice);
	json_tokener_free(f->tok);
	free(f);
}

/* A json value's kind, for messages (room-ipynb-check.c too). */
const char *
room_ipynb_kind(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return ("null");
	case json_type_boolean:
		return ("a boolean");
	case json_type_double:
	case json_type_int:
		return ("a number");
	case json_type_string:
		return ("a string");
	case json_type_array:
		return ("a list");
	case json_type_object:
		return ("an object");
	}
	return ("a value");
}

/* Keep key: val in *extra (created on demand). */
static void
room_ipynb_keep(struct json_object **extra, const char *key,
    struct json_object *val)
{
	if (*extra == NULL)
		*extra = json_object_new_object();
	json_object_object_add(*extra, key, json_object_get(val));
}

/*
 * One code cell's execution_count and outputs; ck (NULL for a newer
 * minor's file) checks each output against nbformat's schema.
 */
static int
room_ipynb_parse_code(struct room_nb *nb, struct room_cell *c,
    struct json_object *cell, size_t i, struct room_ipynb_check *ck,
    char **cause)
{
	struct json_object	*v;
	struct proto_outputs	*outs;
	const msgpack_object	*o;
	msgpack_unpacked	 u;
	size_t			 j;

	if (!json_object_object_get_ex(cell, "execution_count", &v))
		room_nb_warn(nb, (ssize_t)i, c->id, "writes execution_count "
		    "null", "code cell %zu has no execution_count", i);
	else if (json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) >= 0)
		room_nb_cell_set_count(c, json_object_get_int64(v));
	else if (v != NULL)
		room_nb_warn(nb, (ssize_t)i, c->id, "writes execution_count "
		    "null", "code cell %zu: execution_count is %s, not a "
		    "count", i, room_ipynb_kind(v));
	if ((outs = json_object_get_userdata(cell)) != NULL) {
		/* Packed as it was read (room_ipynb_prejoin_cell): taken. */
		proto_outputs_ref(outs);
		json_object_set_userdata(cell, NULL, NULL);
	} else if (!json_object_object_get_ex(cell, "outputs", &v)) {
		room_nb_warn(nb, (ssize_t)i, c->id, "writes an empty outputs "
		    "list", "code cell %zu has no outputs", i);
		return (0);
	} else if (!json_object_is_type(v, json_type_array)) {
		xasprintf(cause, "code cell %zu: outputs is %s, not a list", i,
		    room_ipynb_kind(v));
		return (-1);
	} else {
		/* The JSON edge: kept packed from here (decision 097). */
		outs = room_ipynb_outputs(v);
		/* Freed now, so a load's peak holds one form of them. */
		json_object_object_del(cell, "outputs");
	}
	msgpack_unpacked_init(&u);
	for (j = 0; j < outs->n; j++) {
		if ((o = proto_outputs_get(outs, j, &u)) == NULL)
			fatalx("%s: an output packed cannot be read", __func__);
		if (ck != NULL)
			room_ipynb_check_output(ck, i, c->id, j, o);
		if (proto_get(o, "transient") != NULL)
			room_nb_warn(nb, (ssize_t)i, c->id, "drops transient",
			    "code cell %zu, output %zu: \"transient\" is "
			    "runtime data that is not saved", i, j);
	}
	msgpack_unpacked_destroy(&u);
	room_nb_cell_set_outputs(c, outs);
	return (0);
}

/*
 * One cell; its id is settled afterwards (fix[i]).  ck is NULL for a file
 * of a newer minor than 4.5, whose schema runtimed does not know.
 */
static int
room_ipynb_parse_cell(struct room_nb *nb, struct json_object *cell,
    size_t i, struct room_ipynb_check *ck, enum room_ipynb_idfix *fix,
    char **cause)
{
	struct json_object	*v, *src = NULL, *md = NULL, *att = NULL;
	struct json_object	*extra = NULL;
	struct room_cell	*c;
	const char		*str;
	size_t			 len, j;
	int			 strict = ck != NULL;

	if (!json_object_is_type(cell, json_type_object)) {
		xasprintf(cause, "cell %zu is %s, not an object", i,
		    room_ipynb_kind(cell));
		return (-1);
	}
	if (!json_object_object_get_ex(cell, "cell_type", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0) {
		xasprintf(cause, "cell %zu has no cell_type", i);
		return (-1);
	}
	c = room_nb_cell_create(nb, ROOM_CELL_RAW, "", 0);
	room_nb_cell_set_type_name(c, json_object_get_string(v),
	    (size_t)json_object_get_string_len(v));
	if (c->type == ROOM_CELL_UNKNOWN && strict)
		room_nb_warn(nb, (ssize_t)i, NULL, NULL, "cell %zu is of type "
		    "\"%s\", which nbformat %d.%d does not define: it cannot "
		    "run or be edited in part", i, c->type_name, nb->nbformat,
		    nb->nbformat_minor);

	if (json_object_object_get_ex(cell, "source", &v)) {
		if (json_object_is_type(v, json_type_string))
			src = json_object_get(v);
		else if ((src = room_ipynb_join(v)) == NULL &&
		    c->type != ROOM_CELL_UNKNOWN) {
			xasprintf(cause, "cell %zu: source is %s, not a string "
			    "or a list of strings", i, room_ipynb_kind(v));
			return (-1);
		}
		if (src == NULL) {
			room_ipynb_keep(&extra, "source", v);
			c->flags |= ROOM_CELL_NO_SOURCE;
		}
	} else if (c->type == ROOM_CELL_UNKNOWN)
		c->flags |= ROOM_CELL_NO_SOURCE;
	else
		room_nb_warn(nb, (ssize_t)i, c->id, "writes an empty source",
		    "cell %zu has no source", i);
	if (src != NULL) {
		room_nb_cell_set_source(c, json_object_get_string(src),
		    (size_t)json_object_get_string_len(src));
		json_object_put(src);
	}

	/* Keep a usable, unique id; others are minted once all are known. */
	room_nb_cell_set_id(nb, c, "", 0);
	fix[i] = ROOM_IPYNB_ID_OK;
	if (!json_object_object_get_ex(cell, "id", &v))
		fix[i] = ROOM_IPYNB_ID_MISSING;
	else if (!json_object_is_type(v, json_type_string))
		fix[i] = ROOM_IPYNB_ID_NOT_STRING;
	else {
		str = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (len == 0 || strlen(str) != len)
			fix[i] = ROOM_IPYNB_ID_EMPTY;
		else if (room_nb_find(nb, str, &j) != NULL)
			fix[i] = ROOM_IPYNB_ID_DUPLICATE;
		else {
			room_nb_cell_set_id(nb, c, str, len);
			if (!room_nb_valid_id(str, len))
				room_nb_warn(nb, (ssize_t)i, str, NULL,
				    "cell %zu: id \"%s\" is not a valid "
				    "nbformat cell id (1-64 of a-z A-Z 0-9 - "
				    "_)", i, str);
		}
	}

	if (!json_object_object_get_ex(cell, "metadata", &v))
		room_nb_warn(nb, (ssize_t)i, c->id, "writes empty metadata",
		    "cell %zu has no metadata", i);
	else if (!json_object_is_type(v, json_type_object)) {
		xasprintf(cause, "cell %zu: metadata is %s, not an object", i,
		    room_ipynb_kind(v));
		json_object_put(extra);
		return (-1);
	} else {
		json_object_object_del(v, "trusted");
		md = v;
	}
	if (json_object_object_get_ex(cell, "attachments", &v)) {
		if (json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, akey, aval) {
				(void)akey;
				room_ipynb_rejoin_bundle(aval);
			}
			att = v;
		} else {
			room_ipynb_keep(&extra, "attachments", v);
			room_nb_warn(nb, (ssize_t)i, c->id, NULL, "cell %zu: "
			    "attachments is %s, not an object", i,
			    room_ipynb_kind(v));
		}
	}
	if (ck != NULL)
		room_ipynb_check_cell(ck, i, c->id, c->type, md, att);
	/* The JSON edge: kept packed from here (decision 101). */
	if (md != NULL) {
		mpvalue_set_json(&c->metadata, md);
		json_object_object_del(cell, "metadata");
	}
	if (att != NULL) {
		mpvalue_set_json(&c->attachments, att);
		json_object_object_del(cell, "attachments");
	}
	if (c->type == ROOM_CELL_CODE &&
	    room_ipynb_parse_code(nb, c, cell, i, ck, cause) != 0) {
		json_object_put(extra);
		return (-1);
	}

	json_object_object_foreach(cell, key, val) {
		if (room_nb_cell_known_key(c, key))
			continue;
		room_ipynb_keep(&extra, key, val);
		if (strict && c->type != ROOM_CELL_UNKNOWN)
			room_nb_warn(nb, (ssize_t)i, c->id, NULL, "cell %zu: "
			    "\"%s\" is not a key of a %s cell in nbformat "
			    "%d.%d", i, key, c->type_name != NULL ?
			    c->type_name : room_nb_type_name(c->type),
			    nb->nbformat, nb->nbformat_minor);
	}
	mpvalue_set_json(&c->extra, extra);
	json_object_put(extra);
	return (0);
}

/* Name cell i by its (new) id in the warnings given before it had one. */
static void
room_ipynb_name_warnings(struct room_nb *nb, size_t i)
{
	struct json_object	*w, *v;
	size_t			 k;

	for (k = 0; nb->warnings != NULL &&
	    k < json_object_array_length(nb->warnings); k++) {
		w = json_object_array_get_idx(nb->warnings, k);
		if (json_object_object_get_ex(w, "cell_index", &v) &&
		    json_object_get_int64(v) == (int64_t)i &&
		    !json_object_object_get_ex(w, "cell_id", NULL))
			json_object_object_add(w, "cell_id",
			    json_object_new_string(nb->cells[i]->id));
	}
}

/*
 * Parse notebook text.  Returns NULL with *cause set (caller frees).
 * As nbformat does, what it reads with a validation error is opened:
 * nb->warnings says what and what a save changes.  Keys runtimed does
 * not model are kept verbatim at every level.
 */
struct room_nb *
room_ipynb_parse(const char *data, size_t len, char **cause)
{
	struct json_object	*root;

	if (len > INT32_MAX) {
		xasprintf(cause, "notebook too large");
		return (NULL);
	}
	if ((root = room_ipynb_fast_bytes(data, len)) != NULL)
		return (room_ipynb_convert(root, cause));
	return (room_ipynb_careful(data, len, cause));
}

/* The careful reader: says what is wrong with text the fast one refused. */
static struct room_nb *
room_ipynb_careful(const char *data, size_t len, char **cause)
{
	struct json_object	*root;

	if (len > INT32_MAX) {
		xasprintf(cause, "notebook too large");
		return (NULL);
	}
	if ((root = room_ipynb_json(data, len, cause)) == NULL)
		return (NULL);
	return (room_ipynb_convert(root, cause));
}

/* The nbformat major version a value says it is, or 0. */
static int
room_ipynb_major(struct json_object *root)
{
	struct json_object	*v;

	if (json_object_is_type(root, json_type_object) &&
	    json_object_object_get_ex(root, "nbformat", &v) &&
	    json_object_is_type(v, json_type_int))
		return (json_object_get_int(v));
	return (0);
}

/*
 * The fast reader on text in memory: an nbformat 4 value, or NULL when
 * the careful reader must look (refused text, an older format, which
 * is upgraded from the value as it was written).
 */
static struct json_object *
room_ipynb_fast_bytes(const char *data, size_t len)
{
	struct room_ipynb_feed	*f;
	struct json_object	*root;
	size_t			 off = 0, n, carry = 0;
	int			 left;

	f = room_ipynb_feed_create();
	do {
		n = len - off < ROOM_IPYNB_SLICE ? len - off :
		    ROOM_IPYNB_SLICE;
		left = room_ipynb_feed_add(f, data + off, n, carry,
		    off + n == len);
		if (left < 0)
			break;
		carry = (size_t)left;
		off += n;
	} while (off < len);
	root = room_ipynb_feed_finish(f);
	room_ipynb_feed_free(f);
	if (root != NULL && room_ipynb_major(root) != 4) {
		json_object_put(root);
		root = NULL;
	}
	return (root);
}

/*
 * The fast reader on an open file, read a slice at a time into one
 * buffer, at most max bytes: NULL (the careful reader reads it again)
 * as room_ipynb_fast_bytes; *over set when the file grew past max while
 * it was read.
 */
static struct json_object *
room_ipynb_fast_fd(int fd, size_t max, int *over)
{
	struct room_ipynb_feed	*f;
	struct json_object	*root = NULL;
	char			*buf;
	size_t			 carry = 0, total = 0;
	ssize_t			 n;
	int			 left;

	*over = 0;
	/* The cut character's bytes (at most 3) go before the next read. */
	buf = xmalloc(ROOM_IPYNB_SLICE + 4);
	f = room_ipynb_feed_create();
	for (;;) {
		n = read(fd, buf + 4, ROOM_IPYNB_SLICE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		/* A file growing as it is read stops here (issue 36). */
		if ((total += (size_t)n) > max) {
			*over = 1;
			break;
		}
		left = room_ipynb_feed_add(f, buf + 4, (size_t)n, carry,
		    n == 0);
		if (left < 0 || n == 0) {
			if (n == 0)
				root = room_ipynb_feed_finish(f);
			break;
		}
		carry = (size_t)left;
		memmove(buf + 4 - carry, buf + 4 + n - carry, carry);
	}
	free(buf);
	room_ipynb_feed_free(f);
	if (root != NULL && room_ipynb_major(root) != 4) {
		json_object_put(root);
		root = NULL;
	}
	return (root);
}

/*
 * A parsed value to a room_nb (takes root).  Older formats are upgraded
 * first; keys runtimed does not model are kept.
 */
static struct room_nb *
room_ipynb_convert(struct json_object *root, char **cause)
{
	static const char *const top[] = { "cells", "metadata", "nbformat",
	    "nbformat_minor", NULL };
	struct json_object	*v, *cells, *extra = NULL;
	struct room_nb		*nb = NULL;
	struct room_ipynb_check	 ck;
	enum room_ipynb_idfix	*fix = NULL;
	size_t			 i, ncells, k, nmissing = 0;
	int			 strict, major, minor = -1;
	char			 id[9], *save, *note = NULL;
	const char		*old;

	if (!json_object_is_type(root, json_type_object)) {
		xasprintf(cause, "not a notebook: the top level is %s, not an "
		    "object", room_ipynb_kind(root));
		goto fail;
	}
	major = room_ipynb_major(root);
	if (major >= 1 && major <= 3) {
		/* Upgraded as nbformat does; read as nbformat 4 below. */
		if ((v = room_upgrade_v4(root, &note, cause)) == NULL)
			goto fail;
		json_object_put(root);
		root = v;
		major = 4;
	}
	if (major > 4) {
		xasprintf(cause, "nbformat %d is newer than runtimed reads "
		    "(nbformat 1 to 4): update runtimed", major);
		goto fail;
	}
	if (major != 4) {
		xasprintf(cause, "unsupported notebook format (nbformat 1 "
		    "to 4 only)");
		goto fail;
	}
	nb = room_nb_create();
	if (json_object_object_get_ex(root, "nbformat_minor", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    json_object_get_int(v) >= 0)
		minor = json_object_get_int(v);
	/* A newer minor's schema admits unknown keys and cell types. */
	nb->nbformat_minor = minor < 5 ? 5 : minor;
	strict = nb->nbformat_minor == 5;
	room_ipynb_check_init(&ck, nb);
	if (note != NULL)
		room_nb_warn(nb, -1, NULL, "writes nbformat 4.5 with an id "
		    "for every cell", "%s", note);
	else if (minor < 0)
		room_nb_warn(nb, -1, NULL, "writes nbformat 4.5 with an id "
		    "for every cell", "the notebook has no valid "
		    "nbformat_minor");
	else if (minor < 5)
		room_nb_warn(nb, -1, NULL, "writes nbformat 4.5 with an id "
		    "for every cell", "the notebook is nbformat 4.%d", minor);
	if (!json_object_object_get_ex(root, "metadata", &v))
		room_nb_warn(nb, -1, NULL, "writes empty metadata",
		    "the notebook has no metadata");
	else if (!json_object_is_type(v, json_type_object)) {
		xasprintf(cause, "the notebook's metadata is %s, not an object",
		    room_ipynb_kind(v));
		goto fail;
	} else {
		json_object_object_del(v, "orig_nbformat");
		json_object_object_del(v, "orig_nbformat_minor");
		json_object_object_del(v, "signature");
		if (strict)
			room_ipynb_check_notebook(&ck, v);
		/* The JSON edge: kept packed from here (decision 101). */
		mpvalue_set_json(&nb->metadata, v);
	}
	if (!json_object_object_get_ex(root, "cells", &cells) ||
	    !json_object_is_type(cells, json_type_array)) {
		xasprintf(cause, "not a notebook: it has no cells list");
		goto fail;
	}
	json_object_object_foreach(root, key, val) {
		for (k = 0; top[k] != NULL; k++) {
			if (strcmp(key, top[k]) == 0)
				break;
		}
		if (top[k] != NULL)
			continue;
		room_ipynb_keep(&extra, key, val);
		if (strict)
			room_nb_warn(nb, -1, NULL, NULL, "\"%s\" is not a "
			    "top-level key in nbformat 4.%d", key,
			    nb->nbformat_minor);
	}
	/* The JSON edge: kept packed from here (decision 101). */
	mpvalue_set_json(&nb->extra, extra);
	json_object_put(extra);

	ncells = json_object_array_length(cells);
	fix = xcalloc(ncells + 1, sizeof *fix);
	for (i = 0; i < ncells; i++) {
		if (room_ipynb_parse_cell(nb, json_object_array_get_idx(cells,
		    i), i, strict ? &ck : NULL, fix, cause) != 0)
			goto fail;
		if (fix[i] == ROOM_IPYNB_ID_MISSING)
			nmissing++;
		/* Taken: freed now (an id to fix is read again below). */
		if (fix[i] == ROOM_IPYNB_ID_OK)
			json_object_array_put_idx(cells, i, NULL);
	}
	room_ipynb_check_done(&ck);
	/*
	 * Cells without an id are said once: an upgraded file's first
	 * warning says every cell gets one; a 4.5 file's cells are counted
	 * (a lecture of 193 cells gave 193 warnings, most of its answer).
	 */
	if (nmissing > 1 && minor >= 5 && note == NULL)
		room_nb_warn(nb, -1, NULL, "writes a new id for each",
		    "%zu cells have no id", nmissing);
	for (i = 0; i < nb->ncells; i++) {
		if (fix[i] == ROOM_IPYNB_ID_OK) {
			room_ipynb_name_warnings(nb, i);
			continue;
		}
		room_nb_mint_id(nb, id);
		room_nb_cell_set_id(nb, nb->cells[i], id, strlen(id));
		nb->cells[i]->flags |= ROOM_CELL_MINTED;
		v = json_object_object_get(json_object_array_get_idx(cells, i),
		    "id");
		old = json_object_get_string(v);
		xasprintf(&save, "writes id \"%s\"", id);
		switch (fix[i]) {
		case ROOM_IPYNB_ID_MISSING:
			if (minor >= 5 && note == NULL && nmissing == 1)
				room_nb_warn(nb, (ssize_t)i, id, save,
				    "cell %zu has no id", i);
			break;
		case ROOM_IPYNB_ID_NOT_STRING:
			room_nb_warn(nb, (ssize_t)i, id, save,
			    "cell %zu: id is %s, not a string", i,
			    room_ipynb_kind(v));
			break;
		case ROOM_IPYNB_ID_EMPTY:
			room_nb_warn(nb, (ssize_t)i, id, save,
			    "cell %zu: id is empty or holds NUL", i);
			break;
		case ROOM_IPYNB_ID_DUPLICATE:
			room_nb_warn(nb, (ssize_t)i, id, save,
			    "cell %zu: id \"%s\" is also an earlier cell's",
			    i, old);
			break;
		case ROOM_IPYNB_ID_OK:
			break;
		}
		free(save);
		room_ipynb_name_warnings(nb, i);
	}
	free(fix);
	free(note);
	json_object_put(root);
	return (nb);

fail:
	free(note);
	free(fix);
	room_nb_free(nb);
	json_object_put(root);
	return (NULL);
}

/*
 * Read and parse a notebook file.  Only a regular file is read, never
 * through a symbolic link at path (a room's path is its real path: a
 * link there now was put since), and one over ROOM_IPYNB_FILE_MAX is
 * refused from its size before anything is allocated for it.
 */
struct room_nb *
room_ipynb_read(const char *path, char **cause)
{
	struct room_nb		*nb;
	struct json_object	*root;
	struct stat		 sb;
	char			*data, *why = NULL;
	size_t			 len;
	int			 fd, over;

	if ((fd = util_open_regular(path, UTIL_NOFOLLOW, &sb, &why)) == -1) {
		*cause = why;
		return (NULL);
	}
	if ((uint64_t)sb.st_size > ROOM_IPYNB_FILE_MAX) {
		xasprintf(cause, "%s: notebook too large: %lld bytes, over "
		    "the %u MiB a notebook file may be", path,
		    (long long)sb.st_size, ROOM_IPYNB_FILE_MAX >> 20);
		close(fd);
		return (NULL);
	}
	/*
	 * Read as it was when opened: a file growing meanwhile is being
	 * written (or is hostile), and is not read past its size then.
	 */
	if ((root = room_ipynb_fast_fd(fd, (size_t)sb.st_size,
	    &over)) != NULL) {
		close(fd);
		if ((nb = room_ipynb_convert(root, &why)) == NULL) {
			xasprintf(cause, "%s: %s", path, why);
			free(why);
		}
		return (nb);
	}
	if (over) {
		xasprintf(cause, "%s changed while it was read (it grew past "
		    "the %lld bytes it had); open it again once it is written",
		    path, (long long)sb.st_size);
		close(fd);
		return (NULL);
	}
	/* Refused, or older: read again, carefully, to say why. */
	if (lseek(fd, 0, SEEK_SET) != 0 || util_read_fd_max(fd, path, &sb,
	    (size_t)sb.st_size, &data, &len, &why) != 0) {
		if (why == NULL)
			xasprintf(&why, "cannot read: %s", strerror(errno));
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		close(fd);
		return (NULL);
	}
	close(fd);
	nb = room_ipynb_careful(data, len, &why);
	free(data);
	if (nb == NULL) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
	}
	return (nb);
}

/*
 * Fill kernelspec and language_info for a new notebook, if absent:
 * language_info is the kernel's (kernel_info_reply), when it has a name,
 * else {name: language}.
 */
void
room_ipynb_set_kernelspec(struct room_nb *nb, const char *name,
    const char *display, const char *language, struct json_object *info)
{
	struct json_object	*add, *ks, *li = NULL, *v;
	struct mpvalue		 mv = { NULL, 0 };
	msgpack_unpacked	 u;
	const msgpack_object	*md;
	int			 has_ks, has_li;

	msgpack_unpacked_init(&u);
	md = mpvalue_view(&nb->metadata, &u);
	has_ks = proto_get(md, "kernelspec") != NULL;
	has_li = proto_get(md, "language_info") != NULL;
	msgpack_unpacked_destroy(&u);
	if (has_ks && has_li)
		return;
	/* Added at the end, in this order, as json_object_object_add did. */
	add = json_object_new_object();
	if (!has_ks) {
		ks = json_object_new_object();
		json_object_object_add(ks, "display_name",
		    json_object_new_string(display != NULL ? display : name));
		json_object_object_add(ks, "language", json_object_new_string(
		    language != NULL ? language : "python"));
		json_object_object_add(ks, "name",
		    json_object_new_string(name));
		json_object_object_add(add, "kernelspec", ks);
	}
	if (!has_li) {
		if (info != NULL && json_object_is_type(info,
		    json_type_object) && json_object_object_get_ex(info,
		    "name", &v) && json_object_is_type(v, json_type_string))
			li = json_object_get(info);
		if (li == NULL) {
			li = json_object_new_object();
			json_object_object_add(li, "name",
			    json_object_new_string(language != NULL ?
			    language : "python"));
		}
		json_object_object_add(add, "language_info", li);
	}
	mpvalue_set_json(&mv, add);
	json_object_put(add);
	msgpack_unpacked_init(&u);
	if (mpvalue_merge(&nb->metadata, mpvalue_view(&mv, &u)) != 0)
		fatalx("%s: metadata is not a map", __func__);
	msgpack_unpacked_destroy(&u);
	mpvalue_free(&mv);
}

/* The notebook metadata's keys a kernel writes. */
const char *const room_ipynb_kernel_keys[] = { "kernelspec", "language_info",
    NULL };

/* Has the notebook's metadata a kernelspec (null included)? */
int
room_ipynb_has_kernelspec(struct room_nb *nb)
{
	msgpack_unpacked	 u;
	int			 has;

	msgpack_unpacked_init(&u);
	has = proto_get(mpvalue_view(&nb->metadata, &u), "kernelspec") != NULL;
	msgpack_unpacked_destroy(&u);
	return (has);
}

/*
 * The string at metadata[outer][key] as json_object_get_string read it
 * (up to a NUL it holds), or NULL when it is not a string.  *had says
 * whether metadata has outer at all.  Caller frees.
 */
char *
room_ipynb_meta_str(struct room_nb *nb, const char *outer, const char *key,
    int *had)
{
	msgpack_unpacked	 u;
	const msgpack_object	*o, *v;
	char			*s = NULL;

	msgpack_unpacked_init(&u);
	o = proto_get(mpvalue_view(&nb->metadata, &u), outer);
	if (had != NULL)
		*had = o != NULL;
	if ((v = proto_get(o, key)) != NULL && v->type == MSGPACK_OBJECT_STR) {
		s = xmalloc(v->via.str.size + 1);
		if (v->via.str.size != 0)
			memcpy(s, v->via.str.ptr, v->via.str.size);
		s[v->via.str.size] = '\0';
	}
	msgpack_unpacked_destroy(&u);
	return (s);
}
