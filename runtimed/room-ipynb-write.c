/* SPDX-License-Identifier: ISC */
/*
 * room-ipynb-write.c: a room_nb saved as nbformat.write saves it, byte
 * for byte: multi-line strings split as str.splitlines(keepends=True),
 * transient, trusted and orig_nbformat dropped, output values kept as
 * blobs inlined, then json.dumps(indent=1, sort_keys=True,
 * ensure_ascii=False) and a trailing newline.  json-c's printer neither
 * sorts keys nor escapes like Python, hence our own.  Reading is
 * room-ipynb.c.
 */

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"
#include "room-ipynb.h"

/* Where output values kept as blobs live (the state dir), and the first
 * blob that could not be inlined during a dump. */
static char	*room_ipynb_write_blob_dir;
static char	*room_ipynb_write_blob_error;

struct room_ipynb_out;
struct room_ipynb_key;
static int	room_ipynb_write_split_mime(const char *);
static void	room_ipynb_write_flush(struct room_ipynb_out *);
static inline void	room_ipynb_write_reserve(struct room_ipynb_out *,
		    size_t);
static inline void	room_ipynb_write_bytes(struct room_ipynb_out *,
		    const void *, size_t);
static inline void	room_ipynb_write_char(struct room_ipynb_out *, char);
static void	room_ipynb_write_str(struct room_ipynb_out *, const char *);
static void	room_ipynb_write_indent(struct room_ipynb_out *, int);
static void	room_ipynb_write_string(struct room_ipynb_out *, const char *,
		    size_t);
static void	room_ipynb_write_double(struct room_ipynb_out *, double);
static int	room_ipynb_write_key_cmp(const void *, const void *);
static const char	**room_ipynb_write_keys(struct json_object *,
		    const char *const *, size_t *);
static void	room_ipynb_write_key(struct room_ipynb_out *, const char *, int,
		    int);
static void	room_ipynb_write_value(struct room_ipynb_out *,
		    struct json_object *, int);
static void	room_ipynb_write_lines(struct room_ipynb_out *, const char *,
		    size_t, int);
static struct json_object	*room_ipynb_write_blob_value(
		    struct json_object *, int);
static int	room_ipynb_write_is_blob(struct json_object *);
static struct json_object	*room_ipynb_write_blob_hex(const char *, int);
static const msgpack_object_kv	**room_ipynb_write_kvs(const msgpack_object *,
		    const char *, size_t *);
static void	room_ipynb_write_mkey(struct room_ipynb_out *,
		    const msgpack_object *, int, int);
static void	room_ipynb_write_mvalue(struct room_ipynb_out *,
		    const msgpack_object *, int);
static void	room_ipynb_write_mtext(struct room_ipynb_out *,
		    const msgpack_object *, int, int, int);
static void	room_ipynb_write_mbundle(struct room_ipynb_out *,
		    const msgpack_object *, int);
static int	room_ipynb_write_mis(const msgpack_object *, const char *);
static void	room_ipynb_write_moutput(struct room_ipynb_out *,
		    const msgpack_object *, int);
static void	room_ipynb_write_packed(struct room_ipynb_out *,
		    const struct proto_outputs *);
static void	room_ipynb_write_defer(struct room_ipynb_out *, const char *,
		    int, int);
static void	room_ipynb_write_text(struct room_ipynb_out *,
		    struct json_object *, int, int, int);
static void	room_ipynb_write_bundle(struct room_ipynb_out *,
		    struct json_object *, int);
static void	room_ipynb_write_output(struct room_ipynb_out *,
		    struct json_object *, int);
static void	room_ipynb_write_skipping(struct room_ipynb_out *,
		    struct json_object *, const char *const *, int);
static int	room_ipynb_write_mkey_cmp(const void *, const void *);
static void	room_ipynb_write_attachments(struct room_ipynb_out *,
		    struct json_object *);
static struct room_ipynb_key	*room_ipynb_write_merge_mkeys(
		    const char *const *, const msgpack_object *, size_t *);
static void	room_ipynb_write_skey(struct room_ipynb_out *, const char *,
		    size_t, int, int);
static void	room_ipynb_write_kept(struct room_ipynb_out *,
		    const msgpack_object *, int);
static void	room_ipynb_write_mmetadata(struct room_ipynb_out *,
		    const struct mpvalue *, const char *const *, int);
static void	room_ipynb_write_mattachments(struct room_ipynb_out *,
		    const msgpack_object *);
static void	room_ipynb_write_cell(struct room_ipynb_out *,
		    struct room_cell *);
static void	room_ipynb_write_nb(struct room_ipynb_out *, struct room_nb *);

void
room_ipynb_write_set_blob_dir(const char *dir)
{
	free(room_ipynb_write_blob_dir);
	room_ipynb_write_blob_dir = dir != NULL ? xstrdup(dir) : NULL;
}

/* Does nbformat split this mimetype's string into lines on write? */
static int
room_ipynb_write_split_mime(const char *mime)
{
	return (strncmp(mime, "text/", 5) == 0 ||
	    strcmp(mime, "application/javascript") == 0 ||
	    strcmp(mime, "image/svg+xml") == 0);
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
	struct room_ipynb_tail *tail;	/* NULL: blobs are inlined here */
};

/*
 * A save's tail (docs/decisions/038): from its first string blob on, the
 * file is what the writer's thread writes, not the loop: each blob value
 * (read, checked, repaired to UTF-8, escaped as the loop would) and the
 * text that follows it up to the next, kept by the loop as it went.
 */
struct room_ipynb_seg {
	char	*hex;		/* the blob */
	int	 split;		/* written as lines (a text mimetype) */
	int	 level;
	char	*text;		/* what follows it in the file */
	size_t	 len;
};
struct room_ipynb_tail {
	struct room_ipynb_seg	*segs;
	size_t			 n;
	char			*what;
	char			*blob_dir;
	struct stat		 sb;	/* the whole file, once written */
};

#define ROOM_IPYNB_WRITE_CHUNK	(256 * 1024)

static void
room_ipynb_write_flush(struct room_ipynb_out *o)
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
room_ipynb_write_reserve(struct room_ipynb_out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	if (o->fd != -1) {
		room_ipynb_write_flush(o);
		if (n <= o->cap)
			return;
	}
	while (o->len + n > o->cap)
		o->cap = o->cap == 0 ? ROOM_IPYNB_WRITE_CHUNK : o->cap * 2;
	o->buf = xreallocarray(o->buf, 1, o->cap);
}

static inline void
room_ipynb_write_bytes(struct room_ipynb_out *o, const void *p, size_t n)
{
	if (o->fd != -1 && n > o->cap) {
		room_ipynb_write_flush(o);
		o->len = n;	/* write straight from p */
		{
			char	*save = o->buf;

			o->buf = (char *)p;
			room_ipynb_write_flush(o);
			o->buf = save;
		}
		return;
	}
	room_ipynb_write_reserve(o, n);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static inline void
room_ipynb_write_char(struct room_ipynb_out *o, char c)
{
	room_ipynb_write_reserve(o, 1);
	o->buf[o->len++] = c;
}

static void
room_ipynb_write_str(struct room_ipynb_out *o, const char *s)
{
	room_ipynb_write_bytes(o, s, strlen(s));
}

static void
room_ipynb_write_indent(struct room_ipynb_out *o, int level)
{
	room_ipynb_write_reserve(o, (size_t)level + 1);
	o->buf[o->len++] = '\n';
	memset(o->buf + o->len, ' ', (size_t)level);
	o->len += (size_t)level;
}

/* Python json string escaping with ensure_ascii=False. */
static void
room_ipynb_write_string(struct room_ipynb_out *o, const char *s, size_t len)
{
	static const char	 from[] = "\"\\\n\r\t\b\f", to[] = "\"\\nrtbf";
	const unsigned char	*p = (const unsigned char *)s;
	const char		*q;
	size_t			 i, run;
	char			 esc[8];

	room_ipynb_write_char(o, '"');
	i = 0;
	while (i < len) {
		run = room_ipynb_scan(p, i, len, '"', '\\');
		if (run > i) {
			room_ipynb_write_bytes(o, s + i, run - i);
			i = run;
			if (i == len)
				break;
		}
		/* Short escapes where JSON has one, else \\u00XX. */
		if ((q = memchr(from, p[i], sizeof from - 1)) != NULL) {
			esc[0] = '\\';
			esc[1] = to[q - from];
			room_ipynb_write_bytes(o, esc, 2);
		} else {
			snprintf(esc, sizeof esc, "\\u%04x", p[i]);
			room_ipynb_write_bytes(o, esc, 6);
		}
		i++;
	}
	room_ipynb_write_char(o, '"');
}

/* Python's float repr: shortest round-trip digits, repr's layout. */
static void
room_ipynb_write_double(struct room_ipynb_out *o, double d)
{
	char	buf[64], digits[32];
	int	prec, exp10, decpt, nd, i;
	char	*e, *p;

	if (isnan(d)) {
		room_ipynb_write_str(o, "NaN");
		return;
	}
	if (isinf(d)) {
		room_ipynb_write_str(o, d < 0 ? "-Infinity" : "Infinity");
		return;
	}
	if (d == 0) {
		room_ipynb_write_str(o, signbit(d) ? "-0.0" : "0.0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	p = buf;
	if (*p == '-') {
		room_ipynb_write_char(o, '-');
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
			room_ipynb_write_str(o, "0.");
			for (i = 0; i < -decpt; i++)
				room_ipynb_write_char(o, '0');
			room_ipynb_write_str(o, digits);
		} else if (decpt < nd) {
			room_ipynb_write_bytes(o, digits, (size_t)decpt);
			room_ipynb_write_char(o, '.');
			room_ipynb_write_str(o, digits + decpt);
		} else {
			room_ipynb_write_str(o, digits);
			for (i = nd; i < decpt; i++)
				room_ipynb_write_char(o, '0');
			room_ipynb_write_str(o, ".0");
		}
		return;
	}
	room_ipynb_write_char(o, digits[0]);
	if (nd > 1) {
		room_ipynb_write_char(o, '.');
		room_ipynb_write_str(o, digits + 1);
	}
	snprintf(buf, sizeof buf, "e%c%02d", exp10 < 0 ? '-' : '+',
	    abs(exp10));
	room_ipynb_write_str(o, buf);
}

static int
room_ipynb_write_key_cmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* An object's keys, sorted, minus the skipped ones.  Caller frees. */
static const char **
room_ipynb_write_keys(struct json_object *obj, const char *const *skip,
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
	qsort(keys, i, sizeof *keys, room_ipynb_write_key_cmp);
	*np = i;
	return (keys);
}

/* Open "key": at level+1 after an optional comma. */
static void
room_ipynb_write_key(struct room_ipynb_out *o, const char *key, int level,
    int first)
{
	if (!first)
		room_ipynb_write_char(o, ',');
	room_ipynb_write_indent(o, level + 1);
	room_ipynb_write_string(o, key, strlen(key));
	room_ipynb_write_bytes(o, ": ", 2);
}

/* room_ipynb_write_key of a key of len bytes (no NUL among them). */
static void
room_ipynb_write_skey(struct room_ipynb_out *o, const char *key, size_t len,
    int level, int first)
{
	if (!first)
		room_ipynb_write_char(o, ',');
	room_ipynb_write_indent(o, level + 1);
	room_ipynb_write_string(o, key, len);
	room_ipynb_write_bytes(o, ": ", 2);
}

/* json.dumps(indent=1, sort_keys=True, separators=(",", ": ")). */
static void
room_ipynb_write_value(struct room_ipynb_out *o, struct json_object *v,
    int level)
{
	const char	**keys;
	size_t		  n, i;
	int64_t		  iv;
	char		  num[32];

	switch (json_object_get_type(v)) {
	case json_type_null:
		room_ipynb_write_bytes(o, "null", 4);
		break;
	case json_type_boolean:
		room_ipynb_write_str(o, json_object_get_boolean(v) ? "true" :
		    "false");
		break;
	case json_type_int:
		iv = json_object_get_int64(v);
		if (iv == INT64_MAX)
			snprintf(num, sizeof num, "%llu",
			    (unsigned long long)json_object_get_uint64(v));
		else
			snprintf(num, sizeof num, "%lld", (long long)iv);
		room_ipynb_write_str(o, num);
		break;
	case json_type_double:
		room_ipynb_write_double(o, json_object_get_double(v));
		break;
	case json_type_string:
		room_ipynb_write_string(o, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
		break;
	case json_type_array:
		n = json_object_array_length(v);
		if (n == 0) {
			room_ipynb_write_bytes(o, "[]", 2);
			break;
		}
		room_ipynb_write_char(o, '[');
		for (i = 0; i < n; i++) {
			if (i != 0)
				room_ipynb_write_char(o, ',');
			room_ipynb_write_indent(o, level + 1);
			room_ipynb_write_value(o,
			    json_object_array_get_idx(v, i), level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, ']');
		break;
	case json_type_object:
		keys = room_ipynb_write_keys(v, NULL, &n);
		if (n == 0) {
			room_ipynb_write_bytes(o, "{}", 2);
			free(keys);
			break;
		}
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_key(o, keys[i], level, i == 0);
			room_ipynb_write_value(o,
			    json_object_object_get(v, keys[i]), level + 1);
		}
		free(keys);
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
		break;
	}
}

/*
 * A string as nbformat writes multi-line strings: the list of
 * str.splitlines(keepends=True) (UTF-8: breaks at \n, \r, \r\n, \v, \f,
 * \x1c-\x1e, U+0085, U+2028, U+2029).
 */
static void
room_ipynb_write_lines(struct room_ipynb_out *o, const char *s, size_t len,
    int level)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 start = 0, i = 0, brk;
	int			 first = 1;

	if (len == 0) {
		room_ipynb_write_bytes(o, "[]", 2);
		return;
	}
	room_ipynb_write_char(o, '[');
	while (i < len) {
		brk = 0;
		if ((i = room_ipynb_scan(p, i, len, 0xc2, 0xe2)) >= len)
			break;
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
			room_ipynb_write_char(o, ',');
		first = 0;
		room_ipynb_write_indent(o, level + 1);
		room_ipynb_write_string(o, s + start, i - start);
		start = i;
	}
	if (start < len) {
		if (!first)
			room_ipynb_write_char(o, ',');
		room_ipynb_write_indent(o, level + 1);
		room_ipynb_write_string(o, s + start, len - start);
	}
	room_ipynb_write_indent(o, level);
	room_ipynb_write_char(o, ']');
}

/*
 * A value kept in the blob store ({"runtimed_blob": sha256, "size": n})
 * as the real value: a string, or parsed JSON for a JSON mimetype.
 * NULL (and room_ipynb_write_blob_error set) when it cannot be read.
 */
static struct json_object *
room_ipynb_write_blob_value(struct json_object *ref, int json)
{
	struct json_object	*h;

	if (!json_object_object_get_ex(ref, "runtimed_blob", &h) ||
	    !json_object_is_type(h, json_type_string))
		return (NULL);
	return (room_ipynb_write_blob_hex(json_object_get_string(h), json));
}

/* The blob hex as room_ipynb_write_blob_value gives it. */
static struct json_object *
room_ipynb_write_blob_hex(const char *hex, int json)
{
	struct json_object	*v;
	char			*data = NULL, *cause = NULL, *fixed;
	size_t			 len;

	if (room_ipynb_write_blob_dir == NULL) {
		if (room_ipynb_write_blob_error == NULL)
			xasprintf(&room_ipynb_write_blob_error,
			    "output blob %s: no blob store", hex);
		return (NULL);
	}
	if (blob_get(room_ipynb_write_blob_dir, hex,
	    &data, &len, &cause) != 0) {
		if (room_ipynb_write_blob_error == NULL)
			xasprintf(&room_ipynb_write_blob_error,
			    "output blob: %s", cause);
		free(cause);
		return (NULL);
	}
	/* A blob holds bytes a kernel sent; the file gets only UTF-8. */
	if ((fixed = utf8_repair(data, len, &len)) != NULL) {
		free(data);
		data = fixed;
	}
	v = NULL;
	if (json && (v = mpjson_parse(data, len, &cause)) == NULL)
		free(cause);
	if (v == NULL)
		v = json_object_new_string_len(data, (int)len);
	free(data);
	return (v);
}

/*
 * Leave a string blob to the tail: the file so far goes to the fd (the
 * first time) or is what followed the previous one, and from here on
 * is kept in memory.
 */
static void
room_ipynb_write_defer(struct room_ipynb_out *o, const char *hex, int split,
    int level)
{
	struct room_ipynb_tail	*t = o->tail;
	struct room_ipynb_seg	*seg;

	if (t->n == 0) {
		room_ipynb_write_flush(o);
		o->fd = -1;
	} else {
		seg = &t->segs[t->n - 1];
		seg->text = xmalloc(o->len + 1);
		memcpy(seg->text, o->buf, o->len);
		seg->len = o->len;
		o->len = 0;
	}
	t->segs = xreallocarray(t->segs, t->n + 1, sizeof *t->segs);
	seg = &t->segs[t->n++];
	memset(seg, 0, sizeof *seg);
	seg->hex = xstrdup(hex);
	seg->split = split;
	seg->level = level;
}

static int
room_ipynb_write_is_blob(struct json_object *v)
{
	return (json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "runtimed_blob", NULL));
}

/* A value that nbformat may split into lines, blob references inlined. */
static void
room_ipynb_write_text(struct room_ipynb_out *o, struct json_object *v,
    int split, int json, int level)
{
	struct json_object	*real = NULL, *h;

	if (o->tail != NULL && !json && room_ipynb_write_blob_dir != NULL &&
	    room_ipynb_write_is_blob(v) &&
	    json_object_object_get_ex(v, "runtimed_blob", &h) &&
	    json_object_is_type(h, json_type_string)) {
		room_ipynb_write_defer(o, json_object_get_string(h), split,
		    level);
		return;
	}
	if (room_ipynb_write_is_blob(v) &&
	    (real = room_ipynb_write_blob_value(v, json)) != NULL)
		v = real;
	if (split && json_object_is_type(v, json_type_string))
		room_ipynb_write_lines(o, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v), level);
	else
		room_ipynb_write_value(o, v, level);
	json_object_put(real);
}

/* A mime bundle (output data, attachment). */
static void
room_ipynb_write_bundle(struct room_ipynb_out *o, struct json_object *data,
    int level)
{
	const char	**keys;
	size_t		  n, i;

	if (!json_object_is_type(data, json_type_object)) {
		room_ipynb_write_value(o, data, level);
		return;
	}
	keys = room_ipynb_write_keys(data, NULL, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_key(o, keys[i], level, i == 0);
			room_ipynb_write_text(o,
			    json_object_object_get(data, keys[i]),
			    room_ipynb_write_split_mime(keys[i]),
			    room_ipynb_json_mime(keys[i]), level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
	}
	free(keys);
}

/* An output as saved: lines split, transient dropped, blobs inlined. */
static void
room_ipynb_write_output(struct room_ipynb_out *o, struct json_object *out,
    int level)
{
	static const char *const skip[] = { "transient", NULL };
	struct json_object	*type, *v;
	const char		**keys, *t = "";
	size_t			  n, i;

	if (!json_object_is_type(out, json_type_object)) {
		room_ipynb_write_value(o, out, level);
		return;
	}
	if (json_object_object_get_ex(out, "output_type", &type) &&
	    json_object_is_type(type, json_type_string))
		t = json_object_get_string(type);
	keys = room_ipynb_write_keys(out, skip, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_key(o, keys[i], level, i == 0);
			v = json_object_object_get(out, keys[i]);
			if (strcmp(keys[i], "data") == 0 &&
			    (strcmp(t, "execute_result") == 0 ||
			    strcmp(t, "display_data") == 0))
				room_ipynb_write_bundle(o, v, level + 1);
			else if (strcmp(keys[i], "text") == 0)
				room_ipynb_write_text(o, v,
				    strcmp(t, "stream") == 0, 0, level + 1);
			else
				room_ipynb_write_value(o, v, level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
	}
	free(keys);
}

/*
 * The outputs kept packed (decision 097) are written from their views,
 * as the json-c writers above write their json-c form: keys sorted as
 * strcmp sorts them (a plain map's keys hold no NUL, none twice), the
 * same splitting, blobs and numbers.  An output that is not plain
 * (mpjson_plain) is written through json-c.
 */
/* A plain map's entries, sorted, minus key skip (or NULL).  Caller frees. */
static const msgpack_object_kv **
room_ipynb_write_kvs(const msgpack_object *map, const char *skip, size_t *np)
{
	const msgpack_object_kv	**kv;
	size_t			  i, n = 0;

	kv = xreallocarray(NULL, map->via.map.size + 1, sizeof *kv);
	for (i = 0; i < map->via.map.size; i++) {
		if (skip != NULL && proto_obj_streq(&map->via.map.ptr[i].key,
		    skip))
			continue;
		kv[n++] = &map->via.map.ptr[i];
	}
	qsort(kv, n, sizeof *kv, mpjson_kv_cmp);
	*np = n;
	return (kv);
}

static void
room_ipynb_write_mkey(struct room_ipynb_out *o, const msgpack_object *key,
    int level, int first)
{
	if (!first)
		room_ipynb_write_char(o, ',');
	room_ipynb_write_indent(o, level + 1);
	room_ipynb_write_string(o, key->via.str.ptr, key->via.str.size);
	room_ipynb_write_bytes(o, ": ", 2);
}

/* room_ipynb_write_value over a plain view. */
static void
room_ipynb_write_mvalue(struct room_ipynb_out *o, const msgpack_object *v,
    int level)
{
	const msgpack_object_kv	**kv;
	size_t			  n, i;
	char			  num[32];

	switch (v->type) {
	case MSGPACK_OBJECT_BOOLEAN:
		room_ipynb_write_str(o, v->via.boolean ? "true" : "false");
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		snprintf(num, sizeof num, "%llu",
		    (unsigned long long)v->via.u64);
		room_ipynb_write_str(o, num);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		snprintf(num, sizeof num, "%lld", (long long)v->via.i64);
		room_ipynb_write_str(o, num);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		room_ipynb_write_double(o, v->via.f64);
		break;
	case MSGPACK_OBJECT_STR:
		room_ipynb_write_string(o, v->via.str.ptr, v->via.str.size);
		break;
	case MSGPACK_OBJECT_ARRAY:
		if ((n = v->via.array.size) == 0) {
			room_ipynb_write_bytes(o, "[]", 2);
			break;
		}
		room_ipynb_write_char(o, '[');
		for (i = 0; i < n; i++) {
			if (i != 0)
				room_ipynb_write_char(o, ',');
			room_ipynb_write_indent(o, level + 1);
			room_ipynb_write_mvalue(o, &v->via.array.ptr[i],
			    level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, ']');
		break;
	case MSGPACK_OBJECT_MAP:
		kv = room_ipynb_write_kvs(v, NULL, &n);
		if (n == 0) {
			room_ipynb_write_bytes(o, "{}", 2);
			free(kv);
			break;
		}
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_mkey(o, &kv[i]->key, level, i == 0);
			room_ipynb_write_mvalue(o, &kv[i]->val, level + 1);
		}
		free(kv);
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
		break;
	default:
		room_ipynb_write_bytes(o, "null", 4);
		break;
	}
}

/* room_ipynb_write_text over a plain view. */
static void
room_ipynb_write_mtext(struct room_ipynb_out *o, const msgpack_object *v,
    int split, int json, int level)
{
	struct json_object	*real = NULL;
	const msgpack_object	*h;
	char			*hex;

	h = v->type == MSGPACK_OBJECT_MAP ? proto_get(v, "runtimed_blob") :
	    NULL;
	if (h != NULL && h->type == MSGPACK_OBJECT_STR) {
		hex = xstrndup(h->via.str.ptr, h->via.str.size);
		if (o->tail != NULL && !json &&
		    room_ipynb_write_blob_dir != NULL) {
			room_ipynb_write_defer(o, hex, split, level);
			free(hex);
			return;
		}
		real = room_ipynb_write_blob_hex(hex, json);
		free(hex);
	}
	if (real != NULL) {
		if (split && json_object_is_type(real, json_type_string))
			room_ipynb_write_lines(o, json_object_get_string(real),
			    (size_t)json_object_get_string_len(real), level);
		else
			room_ipynb_write_value(o, real, level);
		json_object_put(real);
	} else if (split && v->type == MSGPACK_OBJECT_STR)
		room_ipynb_write_lines(o, v->via.str.ptr, v->via.str.size,
		    level);
	else
		room_ipynb_write_mvalue(o, v, level);
}

/* room_ipynb_write_bundle over a plain view. */
static void
room_ipynb_write_mbundle(struct room_ipynb_out *o, const msgpack_object *data,
    int level)
{
	const msgpack_object_kv	**kv;
	char			 *mime;
	size_t			  n, i;

	if (data->type != MSGPACK_OBJECT_MAP) {
		room_ipynb_write_mvalue(o, data, level);
		return;
	}
	kv = room_ipynb_write_kvs(data, NULL, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_mkey(o, &kv[i]->key, level, i == 0);
			mime = xstrndup(kv[i]->key.via.str.ptr,
			    kv[i]->key.via.str.size);
			room_ipynb_write_mtext(o, &kv[i]->val,
			    room_ipynb_write_split_mime(mime),
			    room_ipynb_json_mime(mime), level + 1);
			free(mime);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
	}
	free(kv);
}

/* Is a plain string o equal to s, as strcmp on json-c's would say? */
static int
room_ipynb_write_mis(const msgpack_object *o, const char *s)
{
	size_t	len = strlen(s);

	return (o != NULL && o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size >= len && memcmp(o->via.str.ptr, s, len) == 0 &&
	    (o->via.str.size == len || o->via.str.ptr[len] == '\0'));
}

/* room_ipynb_write_output over a plain view. */
static void
room_ipynb_write_moutput(struct room_ipynb_out *o, const msgpack_object *out,
    int level)
{
	const msgpack_object_kv	**kv;
	const msgpack_object	 *t = NULL;
	size_t			  n, i;
	int			  bundle, stream;

	if (out->type != MSGPACK_OBJECT_MAP) {
		room_ipynb_write_mvalue(o, out, level);
		return;
	}
	if ((t = proto_get(out, "output_type")) != NULL &&
	    t->type != MSGPACK_OBJECT_STR)
		t = NULL;
	bundle = room_ipynb_write_mis(t, "execute_result") ||
	    room_ipynb_write_mis(t, "display_data");
	stream = room_ipynb_write_mis(t, "stream");
	kv = room_ipynb_write_kvs(out, "transient", &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_mkey(o, &kv[i]->key, level, i == 0);
			if (bundle && proto_obj_streq(&kv[i]->key, "data"))
				room_ipynb_write_mbundle(o, &kv[i]->val,
				    level + 1);
			else if (proto_obj_streq(&kv[i]->key, "text"))
				room_ipynb_write_mtext(o, &kv[i]->val, stream,
				    0, level + 1);
			else
				room_ipynb_write_mvalue(o, &kv[i]->val,
				    level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
	}
	free(kv);
}

/* A code cell's outputs, from the bytes kept. */
static void
room_ipynb_write_packed(struct room_ipynb_out *o,
    const struct proto_outputs *outs)
{
	struct json_object	*j;
	msgpack_unpacked	 u;
	const msgpack_object	*v;
	size_t			 i;

	if (outs == NULL || outs->n == 0) {
		room_ipynb_write_bytes(o, "[]", 2);
		return;
	}
	msgpack_unpacked_init(&u);
	room_ipynb_write_char(o, '[');
	for (i = 0; i < outs->n; i++) {
		if (i != 0)
			room_ipynb_write_char(o, ',');
		room_ipynb_write_indent(o, 4);
		if ((v = proto_outputs_get(outs, i, &u)) == NULL)
			fatalx("%s: an output kept cannot be read", __func__);
		if (mpjson_inline(v, 1))
			room_ipynb_write_moutput(o, v, 4);
		else {
			j = mpjson_unpack(v);
			room_ipynb_write_output(o, j, 4);
			json_object_put(j);
		}
	}
	msgpack_unpacked_destroy(&u);
	room_ipynb_write_indent(o, 3);
	room_ipynb_write_char(o, ']');
}

/* An object minus some keys. */
static void
room_ipynb_write_skipping(struct room_ipynb_out *o, struct json_object *obj,
    const char *const *skip, int level)
{
	const char	**keys;
	size_t		  n, i;

	keys = room_ipynb_write_keys(obj, skip, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_key(o, keys[i], level, i == 0);
			room_ipynb_write_value(o,
			    json_object_object_get(obj, keys[i]), level + 1);
		}
		room_ipynb_write_indent(o, level);
		room_ipynb_write_char(o, '}');
	}
	free(keys);
}

/*
 * The keys of an object we write from a model: the modelled keys present
 * (NULL-terminated) and the kept extra ones, sorted as json.dumps sorts
 * them.  An entry's extra flag says where its value is.  Caller frees.
 */
struct room_ipynb_key {
	const char		*key;	/* no NUL in its len bytes */
	size_t			 len;
	int			 extra;
	const msgpack_object	*val;	/* a packed extra's value */
};

/* strcmp's order, of keys that hold no NUL. */
static int
room_ipynb_write_mkey_cmp(const void *a, const void *b)
{
	const struct room_ipynb_key	*ka = a, *kb = b;
	int				 c;

	if ((c = memcmp(ka->key, kb->key, ka->len < kb->len ? ka->len :
	    kb->len)) != 0)
		return (c);
	return (ka->len < kb->len ? -1 : ka->len > kb->len);
}

/* The keys of an object we write: the modelled ones and extra's. */
static struct room_ipynb_key *
room_ipynb_write_merge_mkeys(const char *const *known,
    const msgpack_object *extra, size_t *np)
{
	struct room_ipynb_key	*keys;
	size_t			 n = 0, cap;
	uint32_t		 i;

	for (cap = 0; known[cap] != NULL; cap++)
		;
	if (extra != NULL)
		cap += extra->via.map.size;
	keys = xreallocarray(NULL, cap + 1, sizeof *keys);
	for (; known[n] != NULL; n++) {
		keys[n].key = known[n];
		keys[n].len = strlen(known[n]);
		keys[n].extra = 0;
		keys[n].val = NULL;
	}
	for (i = 0; extra != NULL && i < extra->via.map.size; i++) {
		keys[n].key = extra->via.map.ptr[i].key.via.str.ptr;
		keys[n].len = extra->via.map.ptr[i].key.via.str.size;
		keys[n].extra = 1;
		keys[n++].val = &extra->via.map.ptr[i].val;
	}
	qsort(keys, n, sizeof *keys, room_ipynb_write_mkey_cmp);
	*np = n;
	return (keys);
}

/* A kept value from its view, or through json-c when not inline. */
static void
room_ipynb_write_kept(struct room_ipynb_out *o, const msgpack_object *v,
    int level)
{
	struct json_object	*j;

	if (mpjson_inline(v, 1)) {
		room_ipynb_write_mvalue(o, v, level);
		return;
	}
	j = mpjson_unpack(v);
	room_ipynb_write_value(o, j, level);
	json_object_put(j);
}

/*
 * A cell's or the notebook's metadata minus the keys skip names
 * (NULL-terminated), from its view.
 */
static void
room_ipynb_write_mmetadata(struct room_ipynb_out *o,
    const struct mpvalue *md, const char *const *skip, int level)
{
	const msgpack_object_kv	**kv;
	struct json_object	 *j;
	msgpack_unpacked	  u;
	const msgpack_object	 *v;
	size_t			  n, i, k, m;

	msgpack_unpacked_init(&u);
	if ((v = mpvalue_view(md, &u)) == NULL ||
	    v->type != MSGPACK_OBJECT_MAP)
		room_ipynb_write_bytes(o, "{}", 2);
	else if (!mpjson_inline(v, 0)) {
		j = mpjson_unpack(v);
		room_ipynb_write_skipping(o, j, skip, level);
		json_object_put(j);
	} else {
		kv = room_ipynb_write_kvs(v, NULL, &n);
		for (m = 0, i = 0; i < n; i++) {
			for (k = 0; skip[k] != NULL; k++) {
				if (proto_obj_streq(&kv[i]->key, skip[k]))
					break;
			}
			if (skip[k] == NULL)
				kv[m++] = kv[i];
		}
		n = m;
		if (n == 0)
			room_ipynb_write_bytes(o, "{}", 2);
		else {
			room_ipynb_write_char(o, '{');
			for (i = 0; i < n; i++) {
				room_ipynb_write_mkey(o, &kv[i]->key, level,
				    i == 0);
				room_ipynb_write_mvalue(o, &kv[i]->val,
				    level + 1);
			}
			room_ipynb_write_indent(o, level);
			room_ipynb_write_char(o, '}');
		}
		free(kv);
	}
	msgpack_unpacked_destroy(&u);
}

/* A cell's attachments (a map), from their view: each a mime bundle. */
static void
room_ipynb_write_mattachments(struct room_ipynb_out *o,
    const msgpack_object *a)
{
	const msgpack_object_kv	**kv;
	struct json_object	 *j;
	size_t			  n, i;

	if (!mpjson_inline(a, 0)) {
		j = mpjson_unpack(a);
		room_ipynb_write_attachments(o, j);
		json_object_put(j);
		return;
	}
	kv = room_ipynb_write_kvs(a, NULL, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_mkey(o, &kv[i]->key, 3, i == 0);
			room_ipynb_write_mbundle(o, &kv[i]->val, 4);
		}
		room_ipynb_write_indent(o, 3);
		room_ipynb_write_char(o, '}');
	}
	free(kv);
}

/* A cell's attachments: each a mime bundle. */
static void
room_ipynb_write_attachments(struct room_ipynb_out *o, struct json_object *a)
{
	const char	**keys;
	size_t		  n, i;

	keys = room_ipynb_write_keys(a, NULL, &n);
	if (n == 0)
		room_ipynb_write_bytes(o, "{}", 2);
	else {
		room_ipynb_write_char(o, '{');
		for (i = 0; i < n; i++) {
			room_ipynb_write_key(o, keys[i], 3, i == 0);
			room_ipynb_write_bundle(o, json_object_object_get(a,
			    keys[i]), 4);
		}
		room_ipynb_write_indent(o, 3);
		room_ipynb_write_char(o, '}');
	}
	free(keys);
}

/* One cell: its modelled keys and its kept ones, in sorted order. */
static void
room_ipynb_write_cell(struct room_ipynb_out *o, struct room_cell *c)
{
	static const char *const cskip[] = { "trusted", NULL };
	struct room_ipynb_key	*keys;
	msgpack_unpacked	 ua, ux;
	const msgpack_object	*att, *extra;
	const char		*known[8], *k;
	char			 num[32];
	size_t			 n = 0, i;

	msgpack_unpacked_init(&ua);
	msgpack_unpacked_init(&ux);
	if ((att = mpvalue_view(&c->attachments, &ua)) != NULL &&
	    att->type != MSGPACK_OBJECT_MAP)
		att = NULL;
	if ((extra = mpvalue_view(&c->extra, &ux)) != NULL &&
	    extra->type != MSGPACK_OBJECT_MAP)
		extra = NULL;
	if (att != NULL)
		known[n++] = "attachments";
	known[n++] = "cell_type";
	if (c->type == ROOM_CELL_CODE)
		known[n++] = "execution_count";
	known[n++] = "id";
	known[n++] = "metadata";
	if (c->type == ROOM_CELL_CODE)
		known[n++] = "outputs";
	if (!(c->flags & ROOM_CELL_NO_SOURCE))
		known[n++] = "source";
	known[n] = NULL;
	keys = room_ipynb_write_merge_mkeys(known, extra, &n);

	room_ipynb_write_char(o, '{');
	for (i = 0; i < n; i++) {
		k = keys[i].key;
		room_ipynb_write_skey(o, k, keys[i].len, 2, i == 0);
		if (keys[i].extra)
			room_ipynb_write_kept(o, keys[i].val, 3);
		else if (strcmp(k, "attachments") == 0)
			room_ipynb_write_mattachments(o, att);
		else if (strcmp(k, "cell_type") == 0)
			room_ipynb_write_string(o, room_nb_cell_type_name(c),
			    strlen(room_nb_cell_type_name(c)));
		else if (strcmp(k, "execution_count") == 0) {
			if (c->execution_count < 0)
				room_ipynb_write_bytes(o, "null", 4);
			else {
				snprintf(num, sizeof num, "%lld",
				    (long long)c->execution_count);
				room_ipynb_write_str(o, num);
			}
		} else if (strcmp(k, "id") == 0)
			room_ipynb_write_string(o, c->id, strlen(c->id));
		else if (strcmp(k, "metadata") == 0)
			room_ipynb_write_mmetadata(o, &c->metadata, cskip, 3);
		else if (strcmp(k, "outputs") == 0)
			room_ipynb_write_packed(o, c->outputs);
		else if (strcmp(k, "source") == 0)
			room_ipynb_write_lines(o, c->source, c->source_len, 3);
	}
	free(keys);
	msgpack_unpacked_destroy(&ua);
	msgpack_unpacked_destroy(&ux);
	room_ipynb_write_indent(o, 2);
	room_ipynb_write_char(o, '}');
}

/* The notebook as nbformat.write writes it, trailing newline included. */
static void
room_ipynb_write_nb(struct room_ipynb_out *o, struct room_nb *nb)
{
	static const char *const skip[] = { "orig_nbformat",
	    "orig_nbformat_minor", "signature", NULL };
	static const char *const known[] = { "cells", "metadata", "nbformat",
	    "nbformat_minor", NULL };
	struct room_ipynb_key	*keys;
	msgpack_unpacked	 ux;
	const msgpack_object	*extra;
	const char		*k;
	char			 num[32];
	size_t			 n, i, j;

	msgpack_unpacked_init(&ux);
	if ((extra = mpvalue_view(&nb->extra, &ux)) != NULL &&
	    extra->type != MSGPACK_OBJECT_MAP)
		extra = NULL;
	keys = room_ipynb_write_merge_mkeys(known, extra, &n);
	room_ipynb_write_char(o, '{');
	for (i = 0; i < n; i++) {
		k = keys[i].key;
		room_ipynb_write_skey(o, k, keys[i].len, 0, i == 0);
		if (keys[i].extra)
			room_ipynb_write_kept(o, keys[i].val, 1);
		else if (strcmp(k, "cells") == 0) {
			if (nb->ncells == 0) {
				room_ipynb_write_bytes(o, "[]", 2);
				continue;
			}
			room_ipynb_write_char(o, '[');
			for (j = 0; j < nb->ncells; j++) {
				if (j != 0)
					room_ipynb_write_char(o, ',');
				room_ipynb_write_indent(o, 2);
				room_ipynb_write_cell(o, nb->cells[j]);
			}
			room_ipynb_write_indent(o, 1);
			room_ipynb_write_char(o, ']');
		} else if (strcmp(k, "metadata") == 0)
			room_ipynb_write_mmetadata(o, &nb->metadata, skip, 1);
		else if (strcmp(k, "nbformat") == 0)
			room_ipynb_write_char(o, '4');
		else if (strcmp(k, "nbformat_minor") == 0) {
			snprintf(num, sizeof num, "%d",
			    nb->nbformat_minor < 5 ? 5 : nb->nbformat_minor);
			room_ipynb_write_str(o, num);
		}
	}
	free(keys);
	msgpack_unpacked_destroy(&ux);
	room_ipynb_write_bytes(o, "\n}\n", 3);
}

/* The notebook as nbformat.write would write it.  Caller frees. */
char *
room_ipynb_write_dump(struct room_nb *nb, size_t *len)
{
	struct room_ipynb_out	o;

	memset(&o, 0, sizeof o);
	o.fd = -1;
	room_ipynb_write_nb(&o, nb);
	room_ipynb_write_char(&o, '\0');
	*len = o.len - 1;
	return (o.buf);
}

/*
 * Stream the notebook as nbformat.write writes it to fd (no fsync), a
 * 256 KB buffer at a time, so a save holds no copy of the file.  With
 * tailp, string blobs are not read here: from the first one on, what
 * the file needs is *tailp (NULL when there was none), for
 * room_ipynb_tail_write.  Returns -1 with *cause (naming what) when a
 * write or a blob fails.
 */
int
room_ipynb_write_start(struct room_nb *nb, int fd, const char *what,
    struct room_ipynb_tail **tailp, char **cause)
{
	struct room_ipynb_out	 o;
	struct room_ipynb_tail	*t = NULL;

	free(room_ipynb_write_blob_error);
	room_ipynb_write_blob_error = NULL;
	memset(&o, 0, sizeof o);
	o.fd = fd;
	o.cap = ROOM_IPYNB_WRITE_CHUNK;
	o.buf = xmalloc(o.cap);
	if (tailp != NULL) {
		*tailp = NULL;
		o.tail = t = xcalloc(1, sizeof *t);
	}
	room_ipynb_write_nb(&o, nb);
	if (t != NULL && t->n > 0) {
		/* The end of the file follows the last blob. */
		t->segs[t->n - 1].text = o.buf;
		t->segs[t->n - 1].len = o.len;
		o.buf = NULL;
		t->what = xstrdup(what);
		t->blob_dir = xstrdup(room_ipynb_write_blob_dir);
	} else
		room_ipynb_write_flush(&o);
	free(o.buf);
	if (room_ipynb_write_blob_error != NULL) {
		xasprintf(cause, "%s: not saved: %s", what,
		    room_ipynb_write_blob_error);
		free(room_ipynb_write_blob_error);
		room_ipynb_write_blob_error = NULL;
		room_ipynb_tail_free(t);
		return (-1);
	}
	if (o.error != 0) {
		xasprintf(cause, "cannot write %s: %s", what,
		    strerror(o.error));
		room_ipynb_tail_free(t);
		return (-1);
	}
	if (t != NULL && t->n == 0)
		room_ipynb_tail_free(t);
	else if (tailp != NULL)
		*tailp = t;
	return (0);
}

int
room_ipynb_write_fd(struct room_nb *nb, int fd, const char *what,
    char **cause)
{
	return (room_ipynb_write_start(nb, fd, what, NULL, cause));
}

/*
 * Write a tail to fd (the file room_ipynb_write_start began): on the
 * store writer's thread, so it touches nothing of the loop's but t,
 * and reads only the blob store.  Then t holds the file's stat.
 */
int
room_ipynb_tail_write(struct room_ipynb_tail *t, int fd, char **cause)
{
	struct room_ipynb_out	 o;
	struct room_ipynb_seg	*seg;
	char			*data, *fixed, *why = NULL;
	size_t			 i, len;

	memset(&o, 0, sizeof o);
	o.fd = fd;
	o.cap = ROOM_IPYNB_WRITE_CHUNK;
	o.buf = xmalloc(o.cap);
	for (i = 0; i < t->n && o.error == 0; i++) {
		seg = &t->segs[i];
		if (blob_get(t->blob_dir, seg->hex, &data, &len, &why) != 0) {
			xasprintf(cause, "%s: not saved: output blob: %s",
			    t->what, why);
			free(why);
			free(o.buf);
			return (-1);
		}
		/* A blob holds bytes a kernel sent; the file gets only UTF-8. */
		if ((fixed = utf8_repair(data, len, &len)) != NULL) {
			free(data);
			data = fixed;
		}
		if (seg->split)
			room_ipynb_write_lines(&o, data, len, seg->level);
		else
			room_ipynb_write_string(&o, data, len);
		free(data);
		room_ipynb_write_bytes(&o, seg->text, seg->len);
	}
	room_ipynb_write_flush(&o);
	free(o.buf);
	if (o.error != 0) {
		xasprintf(cause, "cannot write %s: %s", t->what,
		    strerror(o.error));
		return (-1);
	}
	if (fstat(fd, &t->sb) != 0) {
		xasprintf(cause, "cannot write %s: %s", t->what,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* The file a tail finished (after room_ipynb_tail_write). */
const struct stat *
room_ipynb_tail_stat(const struct room_ipynb_tail *t)
{
	return (&t->sb);
}

void
room_ipynb_tail_free(struct room_ipynb_tail *t)
{
	size_t	i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->segs[i].hex);
		free(t->segs[i].text);
	}
	free(t->segs);
	free(t->what);
	free(t->blob_dir);
	free(t);
}

/*
 * Save atomically (atomic.c): stream into an unpredictable temporary file
 * beside path, fsync, rename over path, fsync the directory.  A crash
 * leaves the old or the new file, never a torn one; a new file is 0644
 * less the user's umask, an existing one keeps its mode.
 */
int
room_ipynb_write(struct room_nb *nb, const char *path, char **cause)
{
	struct atomic	*a;

	if ((a = atomic_create(path, 0644, cause)) == NULL)
		return (-1);
	if (room_ipynb_write_fd(nb, atomic_fd(a), path, cause) != 0) {
		atomic_free(a);
		return (-1);
	}
	return (atomic_commit(a, cause));
}
