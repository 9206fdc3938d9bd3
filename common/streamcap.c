/* SPDX-License-Identifier: ISC */
/*
 * streamcap.c: a stream output's text kept within its cap.  A stream of
 * more than STREAMCAP_HEAD + STREAMCAP_TAIL characters keeps its first
 * STREAMCAP_HEAD and its last STREAMCAP_TAIL, with a marker between
 * saying how many were cut.  The agent cuts one huge kernel message;
 * the daemon cuts as it merges a stream's chunks, so memory stays
 * bounded however much a cell prints, and the end (where a result or a
 * traceback's lead-up is) is never lost.
 *
 * Characters are Unicode code points (what Python's len() counts): the
 * UTF-8 bytes that do not continue a sequence.  Cuts fall on character
 * boundaries.
 *
 * A cut output says so in its "transient" member (never saved to .ipynb,
 * see room-ipynb-write.c):
 * {"runtimed_cut": {"characters": n, "head_bytes": b}}, which is how the
 * next chunk is merged and how the worker reports the output truncated.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static size_t	streamcap_chars(const char *, size_t);
static size_t	streamcap_skip(const char *, size_t, size_t);
static size_t	streamcap_back(const char *, size_t, size_t);
static char	*streamcap_marker(uint64_t, size_t *);
static void	streamcap_set_tail(struct streamcap *, const char *, size_t,
		    size_t);
static void	streamcap_start_cut(struct streamcap *);
static struct json_object	*streamcap_state(struct json_object *);
static void	streamcap_gap(struct streamcap *, uint64_t);
static char	*streamcap_text(const struct streamcap *, size_t *);
static void	streamcap_load_text(struct streamcap *, const char *, size_t,
		    int64_t, int64_t);
static void	streamcap_load(struct streamcap *, struct json_object *);
static const msgpack_object *streamcap_obj_get(const msgpack_object *,
		    const char *);
static int	streamcap_obj_int(const msgpack_object *, int64_t *);
static void	streamcap_load_obj(struct streamcap *, const msgpack_object *);
static void	streamcap_pack(msgpack_packer *, const struct streamcap *,
		    const char *, size_t);
static const char *streamcap_obj_name(const msgpack_object *, size_t *);

/* Characters in s. */
static size_t
streamcap_chars(const char *s, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	}
	return (n);
}

/* Byte offset just after the first n characters of s. */
static size_t
streamcap_skip(const char *s, size_t len, size_t n)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
			return (i);
	}
	return (len);
}

/* Byte offset where the last n characters of s begin. */
static size_t
streamcap_back(const char *s, size_t len, size_t n)
{
	size_t	i = len;

	while (n > 0 && i > 0) {
		i--;
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n--;
	}
	return (i);
}

/* The marker for n cut characters (caller frees). */
static char *
streamcap_marker(uint64_t n, size_t *len)
{
	char	*m;

	*len = (size_t)xasprintf(&m, "\n[... runtimed: %" PRIu64
	    " characters cut here ...]\n", n);
	return (m);
}

/* Characters of the marker that says n were cut (ASCII: its length). */
size_t
streamcap_marker_chars(uint64_t n)
{
	char	*m;
	size_t	 len;

	m = streamcap_marker(n, &len);
	free(m);
	return (len);
}

void
streamcap_init(struct streamcap *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->head = xmalloc(1);
	sc->tail = xmalloc(1);
}

void
streamcap_free(struct streamcap *sc)
{
	free(sc->head);
	free(sc->tail);
}

/* Replace the tail with the last STREAMCAP_TAIL characters of s. */
static void
streamcap_set_tail(struct streamcap *sc, const char *s, size_t len,
    size_t chars)
{
	size_t	off = 0;

	if (chars > STREAMCAP_TAIL) {
		off = streamcap_back(s, len, STREAMCAP_TAIL);
		sc->cut += chars - STREAMCAP_TAIL;
		chars = STREAMCAP_TAIL;
	}
	free(sc->tail);
	sc->tail = xmalloc(len - off + 1);
	memcpy(sc->tail, s + off, len - off);
	sc->tail_len = len - off;
	sc->tail_chars = chars;
}

/* From now on the text is cut: what the head holds past its cap moves
 * to the tail. */
static void
streamcap_start_cut(struct streamcap *sc)
{
	size_t	off;

	if (sc->is_cut)
		return;
	sc->is_cut = 1;
	if (sc->head_chars <= STREAMCAP_HEAD)
		return;
	off = streamcap_skip(sc->head, sc->head_len, STREAMCAP_HEAD);
	streamcap_set_tail(sc, sc->head + off, sc->head_len - off,
	    sc->head_chars - STREAMCAP_HEAD);
	sc->head_len = off;
	sc->head_chars = STREAMCAP_HEAD;
}

/* Append text to the stream. */
void
streamcap_add(struct streamcap *sc, const char *s, size_t len)
{
	size_t	chars = streamcap_chars(s, len), off, k;
	char	*joined;

	if (len == 0)
		return;
	if (!sc->is_cut &&
	    sc->head_chars + chars <= STREAMCAP_HEAD + STREAMCAP_TAIL) {
		sc->head = xreallocarray(sc->head, 1, sc->head_len + len + 1);
		memcpy(sc->head + sc->head_len, s, len);
		sc->head_len += len;
		sc->head_chars += chars;
		return;
	}
	if (!sc->is_cut && sc->head_chars < STREAMCAP_HEAD) {
		/* Fill the head from the front of s first. */
		k = STREAMCAP_HEAD - sc->head_chars;
		off = streamcap_skip(s, len, k);
		sc->head = xreallocarray(sc->head, 1, sc->head_len + off + 1);
		memcpy(sc->head + sc->head_len, s, off);
		sc->head_len += off;
		sc->head_chars += k;
		s += off;
		len -= off;
		chars -= k;
	}
	streamcap_start_cut(sc);
	if (chars >= STREAMCAP_TAIL) {
		/* The old tail is cut whole. */
		sc->cut += sc->tail_chars;
		streamcap_set_tail(sc, s, len, chars);
		return;
	}
	joined = xmalloc(sc->tail_len + len + 1);
	memcpy(joined, sc->tail, sc->tail_len);
	memcpy(joined + sc->tail_len, s, len);
	streamcap_set_tail(sc, joined, sc->tail_len + len,
	    sc->tail_chars + chars);
	free(joined);
}

/* n characters were cut here by someone else (the agent). */
static void
streamcap_gap(struct streamcap *sc, uint64_t n)
{
	if (n == 0)
		return;
	streamcap_start_cut(sc);
	sc->cut += sc->tail_chars + n;
	sc->tail_len = 0;
	sc->tail_chars = 0;
}

/* The text: head, marker and tail (caller frees). */
static char *
streamcap_text(const struct streamcap *sc, size_t *len)
{
	char	*m, *t;
	size_t	 mlen;

	if (!sc->is_cut) {
		t = xmalloc(sc->head_len + 1);
		memcpy(t, sc->head, sc->head_len);
		t[sc->head_len] = '\0';
		*len = sc->head_len;
		return (t);
	}
	m = streamcap_marker(sc->cut, &mlen);
	*len = sc->head_len + mlen + sc->tail_len;
	t = xmalloc(*len + 1);
	memcpy(t, sc->head, sc->head_len);
	memcpy(t + sc->head_len, m, mlen);
	memcpy(t + sc->head_len + mlen, sc->tail, sc->tail_len);
	t[*len] = '\0';
	free(m);
	return (t);
}

/* The runtimed_cut member of a stream output, or NULL. */
static struct json_object *
streamcap_state(struct json_object *out)
{
	struct json_object	*t, *c;

	if (!json_object_object_get_ex(out, "transient", &t) ||
	    !json_object_object_get_ex(t, "runtimed_cut", &c) ||
	    !json_object_is_type(c, json_type_object))
		return (NULL);
	return (c);
}

/*
 * Load a stream output's text, split back into head and tail when it was
 * cut before (n characters cut after hb bytes of head; n 0 when not).  A
 * state that does not match the text is ignored and the text taken whole.
 */
static void
streamcap_load_text(struct streamcap *sc, const char *text, size_t len,
    int64_t n, int64_t hb64)
{
	size_t	 mlen, hb;
	char	*m;

	streamcap_init(sc);
	if (n > 0 && hb64 >= 0 && (uint64_t)hb64 <= len) {
		hb = (size_t)hb64;
		m = streamcap_marker((uint64_t)n, &mlen);
		if (len - hb >= mlen && memcmp(text + hb, m, mlen) == 0) {
			free(m);
			streamcap_add(sc, text, hb);
			sc->is_cut = 1;
			sc->cut = (uint64_t)n;
			streamcap_set_tail(sc, text + hb + mlen,
			    len - hb - mlen, streamcap_chars(text + hb + mlen,
			    len - hb - mlen));
			return;
		}
		free(m);
	}
	streamcap_add(sc, text, len);
}

/* Load a stream output (json-c). */
static void
streamcap_load(struct streamcap *sc, struct json_object *out)
{
	struct json_object	*v, *c;
	const char		*text = "";
	size_t			 len = 0;
	int64_t			 n = 0, hb = -1;

	if (json_object_object_get_ex(out, "text", &v) &&
	    json_object_is_type(v, json_type_string)) {
		text = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
	}
	if ((c = streamcap_state(out)) != NULL &&
	    json_object_object_get_ex(c, "characters", &v) &&
	    json_object_is_type(v, json_type_int) &&
	    (n = json_object_get_int64(v)) > 0 &&
	    json_object_object_get_ex(c, "head_bytes", &v) &&
	    json_object_is_type(v, json_type_int))
		hb = json_object_get_int64(v);
	streamcap_load_text(sc, text, len, n, hb);
}

/* A msgpack map's value at key, or NULL. */
static const msgpack_object *
streamcap_obj_get(const msgpack_object *map, const char *key)
{
	size_t		len = strlen(key);
	uint32_t	i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	for (i = map->via.map.size; i > 0; i--) {
		const msgpack_object_kv *kv = &map->via.map.ptr[i - 1];

		if (kv->key.type == MSGPACK_OBJECT_STR &&
		    kv->key.via.str.size == len &&
		    memcmp(kv->key.via.str.ptr, key, len) == 0)
			return (&kv->val);
	}
	return (NULL);
}

/* A msgpack integer as json-c would hold it, or 0 when it is none. */
static int
streamcap_obj_int(const msgpack_object *o, int64_t *v)
{
	if (o == NULL)
		return (0);
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = o->via.u64 > INT64_MAX ? INT64_MAX : (int64_t)o->via.u64;
		return (1);
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return (1);
	}
	return (0);
}

/* Load a stream output (a msgpack view). */
static void
streamcap_load_obj(struct streamcap *sc, const msgpack_object *out)
{
	const msgpack_object	*v, *c;
	const char		*text = "";
	size_t			 len = 0;
	int64_t			 n = 0, hb = -1;

	if ((v = streamcap_obj_get(out, "text")) != NULL &&
	    v->type == MSGPACK_OBJECT_STR) {
		text = v->via.str.ptr;
		len = v->via.str.size;
	}
	c = streamcap_obj_get(streamcap_obj_get(out, "transient"),
	    "runtimed_cut");
	if (c != NULL && c->type == MSGPACK_OBJECT_MAP &&
	    streamcap_obj_int(streamcap_obj_get(c, "characters"), &n) &&
	    n > 0 && !streamcap_obj_int(streamcap_obj_get(c, "head_bytes"),
	    &hb))
		hb = -1;
	streamcap_load_text(sc, text, len, n, hb);
}

/* A stream output named name holding sc (a new reference). */
struct json_object *
streamcap_output(const struct streamcap *sc, const char *name)
{
	struct json_object	*out, *t, *c;
	char			*text;
	size_t			 len;

	out = json_object_new_object();
	json_object_object_add(out, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(out, "name", json_object_new_string(name));
	text = streamcap_text(sc, &len);
	json_object_object_add(out, "text",
	    json_object_new_string_len(text, (int)len));
	free(text);
	if (sc->is_cut) {
		c = json_object_new_object();
		json_object_object_add(c, "characters",
		    json_object_new_int64((int64_t)sc->cut));
		json_object_object_add(c, "head_bytes",
		    json_object_new_int64((int64_t)sc->head_len));
		t = json_object_new_object();
		json_object_object_add(t, "runtimed_cut", c);
		json_object_object_add(out, "transient", t);
	}
	return (out);
}

/* Characters cut from a stream output, 0 if whole. */
uint64_t
streamcap_cut(struct json_object *out)
{
	struct json_object	*c, *v;

	if ((c = streamcap_state(out)) == NULL ||
	    !json_object_object_get_ex(c, "characters", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return (0);
	return ((uint64_t)json_object_get_int64(v));
}

/*
 * Join stream output add to last (both of one name): the merged output,
 * within the cap (a new reference).
 */
struct json_object *
streamcap_merge(struct json_object *last, struct json_object *add)
{
	struct streamcap	 a, b;
	struct json_object	*v, *out;

	streamcap_load(&a, last);
	streamcap_load(&b, add);
	streamcap_add(&a, b.head, b.head_len);
	if (b.is_cut) {
		streamcap_gap(&a, b.cut);
		streamcap_add(&a, b.tail, b.tail_len);
	}
	if (!json_object_object_get_ex(last, "name", &v) ||
	    !json_object_is_type(v, json_type_string))
		v = NULL;
	out = streamcap_output(&a, v != NULL ? json_object_get_string(v) :
	    "stdout");
	streamcap_free(&a);
	streamcap_free(&b);
	return (out);
}

/*
 * A stream output within the cap: out itself (a new reference) when it
 * fits, else a cut copy.
 */
struct json_object *
streamcap_fit(struct json_object *out)
{
	struct streamcap	 sc;
	struct json_object	*v, *fit;

	if (!json_object_object_get_ex(out, "text", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) <=
	    STREAMCAP_HEAD + STREAMCAP_TAIL ||
	    streamcap_chars(json_object_get_string(v),
	    (size_t)json_object_get_string_len(v)) <=
	    STREAMCAP_HEAD + STREAMCAP_TAIL)
		return (json_object_get(out));
	streamcap_load(&sc, out);
	if (!json_object_object_get_ex(out, "name", &v) ||
	    !json_object_is_type(v, json_type_string))
		v = NULL;
	fit = streamcap_output(&sc, v != NULL ? json_object_get_string(v) :
	    "stdout");
	streamcap_free(&sc);
	return (fit);
}

/* Was this output cut, or dropped for a note, on its way here? */
int
streamcap_truncated(struct json_object *out)
{
	struct json_object	*t;

	return (streamcap_cut(out) > 0 ||
	    (json_object_object_get_ex(out, "transient", &t) &&
	    json_object_object_get_ex(t, "runtimed_dropped", NULL)));
}

/* A stream output named name (len bytes) holding sc, packed as
 * streamcap_output's would be by mpjson_pack. */
static void
streamcap_pack(msgpack_packer *pk, const struct streamcap *sc,
    const char *name, size_t namelen)
{
	char	*text;
	size_t	 len;

	msgpack_pack_map(pk, 3 + sc->is_cut);
	msgpack_pack_str(pk, 11);
	msgpack_pack_str_body(pk, "output_type", 11);
	msgpack_pack_str(pk, 6);
	msgpack_pack_str_body(pk, "stream", 6);
	msgpack_pack_str(pk, 4);
	msgpack_pack_str_body(pk, "name", 4);
	msgpack_pack_str(pk, namelen);
	msgpack_pack_str_body(pk, name, namelen);
	text = streamcap_text(sc, &len);
	msgpack_pack_str(pk, 4);
	msgpack_pack_str_body(pk, "text", 4);
	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, text, len);
	free(text);
	if (!sc->is_cut)
		return;
	msgpack_pack_str(pk, 9);
	msgpack_pack_str_body(pk, "transient", 9);
	msgpack_pack_map(pk, 1);
	msgpack_pack_str(pk, 12);
	msgpack_pack_str_body(pk, "runtimed_cut", 12);
	msgpack_pack_map(pk, 2);
	msgpack_pack_str(pk, 10);
	msgpack_pack_str_body(pk, "characters", 10);
	msgpack_pack_int64(pk, (int64_t)sc->cut);
	msgpack_pack_str(pk, 10);
	msgpack_pack_str_body(pk, "head_bytes", 10);
	msgpack_pack_int64(pk, (int64_t)sc->head_len);
}

/* The name of a stream output (a msgpack view), "stdout" if none. */
static const char *
streamcap_obj_name(const msgpack_object *out, size_t *len)
{
	const msgpack_object	*v;

	const char		*nul;

	if ((v = streamcap_obj_get(out, "name")) == NULL ||
	    v->type != MSGPACK_OBJECT_STR) {
		*len = 6;
		return ("stdout");
	}
	/* As json-c's string is read: up to a NUL. */
	nul = memchr(v->via.str.ptr, '\0', v->via.str.size);
	*len = nul != NULL ? (size_t)(nul - v->via.str.ptr) : v->via.str.size;
	return (v->via.str.ptr);
}

/*
 * streamcap_merge over msgpack views (the daemon keeps outputs packed,
 * docs/decisions/097): the merged output packed to pk, the bytes
 * mpjson_pack(streamcap_merge(last, add)) would give.
 */
void
streamcap_merge_obj(msgpack_packer *pk, const msgpack_object *last,
    const msgpack_object *add)
{
	struct streamcap	 a, b;
	const char		*name;
	size_t			 len;

	streamcap_load_obj(&a, last);
	streamcap_load_obj(&b, add);
	streamcap_add(&a, b.head, b.head_len);
	if (b.is_cut) {
		streamcap_gap(&a, b.cut);
		streamcap_add(&a, b.tail, b.tail_len);
	}
	name = streamcap_obj_name(last, &len);
	streamcap_pack(pk, &a, name, len);
	streamcap_free(&a);
	streamcap_free(&b);
}

/*
 * streamcap_fit over a msgpack view: 0 when out fits as it is (nothing
 * packed), else 1 with the cut copy packed to pk.
 */
int
streamcap_fit_obj(msgpack_packer *pk, const msgpack_object *out)
{
	struct streamcap	 sc;
	const msgpack_object	*v;
	const char		*name;
	size_t			 len;

	if ((v = streamcap_obj_get(out, "text")) == NULL ||
	    v->type != MSGPACK_OBJECT_STR ||
	    v->via.str.size <= STREAMCAP_HEAD + STREAMCAP_TAIL ||
	    streamcap_chars(v->via.str.ptr, v->via.str.size) <=
	    STREAMCAP_HEAD + STREAMCAP_TAIL)
		return (0);
	streamcap_load_obj(&sc, out);
	name = streamcap_obj_name(out, &len);
	streamcap_pack(pk, &sc, name, len);
	streamcap_free(&sc);
	return (1);
}
