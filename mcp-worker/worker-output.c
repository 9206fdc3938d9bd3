/* SPDX-License-Identifier: ISC */
/*
 * worker-output.c: the shapes every tool returns for cells, outputs and
 * runs.  Two channels: compact text for the model (output text, ANSI
 * stripped, no JSON dumps) and structuredContent with nbformat objects.
 * Inline output is capped per cell and per result; cuts are flagged.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static void	worker_output_image(struct worker_call *,
		    struct worker_budget *, const char *, struct json_object *,
		    struct evbuffer *);
static int	worker_output_is_image(const char *);
struct worker_output_cut;
static size_t	worker_output_len(struct json_object *);
static int	worker_output_textual(struct json_object *);
static const char	*worker_output_fallback(struct json_object *);
static int	worker_output_shows_image(struct json_object *);
static int	worker_output_shows(struct worker_budget *, struct json_object *,
		    const char *, struct json_object *);
static size_t	worker_output_measure(struct json_object *,
		    struct worker_budget *);
static char	*worker_output_marker(const struct worker_output_cut *);
static void	worker_output_say(struct evbuffer *, const char *, size_t);
static struct json_object	*worker_output_piece(struct json_object *,
		    struct worker_output_cut *, struct evbuffer *, int *);
static struct json_object	*worker_output_extra(struct json_object *,
		    struct worker_budget *, struct worker_output_cut *, int *);
static struct json_object	*worker_output_bundle(struct json_object *,
		    struct worker_budget *, struct worker_output_cut *,
		    struct evbuffer *, int *, struct worker_call *);
struct worker_output_row;
static int	worker_output_exec_full(const char *);
static int	worker_output_exec_ran(const char *);
static void	worker_output_exec_cell(struct worker_output_row *,
		    struct worker_budget *, struct worker_call *);
static void	worker_output_exec_source(struct worker_output_row *,
		    struct worker_budget *);
static void	worker_output_exec_error(struct evbuffer *,
		    struct json_object *);
static void	worker_output_exec_why(struct evbuffer *,
		    const struct worker_exec *);
static void	worker_output_stale_name(struct evbuffer *, const char *,
		    size_t, size_t *);
static void	worker_output_exec_version(struct evbuffer *,
		    const struct worker_output_row *);
static void	worker_output_exec_ids(struct evbuffer *,
		    struct worker_output_row *, size_t, const char *);
static void	worker_output_exec_text(struct evbuffer *,
		    const struct worker_exec *, struct worker_output_row *,
		    size_t);
static struct json_object	*worker_output_exec_cells(
		    struct worker_output_row *, size_t, struct worker_budget *,
		    size_t *, size_t *);
static void	worker_output_warnings(struct json_object *,
		    struct json_object *, struct evbuffer *);
static int	worker_output_known_type(const char *);
static struct json_object	*worker_output_summaries(struct json_object *,
		    struct evbuffer *);
static struct json_object	*worker_output_resources(const char *);
static void	worker_output_census(struct evbuffer *, struct json_object *);

void
worker_budget_init(struct worker_budget *b, int full)
{
	/* Full output is bounded too, and read on by line ranges. */
	b->cell_cap = full ? WORKER_FULL_CAP : WORKER_CELL_CAP;
	b->result_left = full ? WORKER_FULL_CAP : WORKER_RESULT_CAP;
	b->full = full;
	b->images = 0;
	b->image_bytes = 0;
	b->cell_id = NULL;
	b->every_mime = 0;
	b->more = NULL;
	b->original = NULL;
	b->delta = 0;
	b->start_line = 0;
	b->end_line = 0;
}

/* Remove ANSI escape sequences (CSI, OSC, two-byte ESC x).  Caller frees. */
char *
worker_output_strip_ansi(const char *s, size_t len, size_t *outlen)
{
	char	*out;
	size_t	 i = 0, o = 0;

	out = xmalloc(len + 1);
	while (i < len) {
		if (s[i] != '\033') {
			out[o++] = s[i++];
			continue;
		}
		i++;
		if (i >= len)
			break;
		if (s[i] == '[') {
			/* CSI: parameters, intermediates, one final byte. */
			for (i++; i < len; i++) {
				if ((unsigned char)s[i] >= 0x40 &&
				    (unsigned char)s[i] <= 0x7e) {
					i++;
					break;
				}
			}
		} else if (s[i] == ']') {
			/* OSC: up to BEL or ESC \. */
			for (i++; i < len; i++) {
				if (s[i] == '\a') {
					i++;
					break;
				}
				if (s[i] == '\033' && i + 1 < len &&
				    s[i + 1] == '\\') {
					i += 2;
					break;
				}
			}
		} else
			i++;
	}
	out[o] = '\0';
	if (outlen != NULL)
		*outlen = o;
	return (out);
}

/* nbformat multiline text: a string or a list of strings.  Caller frees. */
char *
worker_output_join(struct json_object *v, size_t *len)
{
	struct evbuffer	*b;
	struct json_object *e;
	char		*s;
	size_t		 i;

	if (v == NULL) {
		*len = 0;
		return (xstrdup(""));
	}
	if (json_object_is_type(v, json_type_string)) {
		*len = (size_t)json_object_get_string_len(v);
		s = xmalloc(*len + 1);
		memcpy(s, json_object_get_string(v), *len);
		s[*len] = '\0';
		return (s);
	}
	b = evbuffer_new();
	if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++) {
			e = json_object_array_get_idx(v, i);
			if (json_object_is_type(e, json_type_string))
				evbuffer_add(b, json_object_get_string(e),
				    (size_t)json_object_get_string_len(e));
		}
	}
	*len = evbuffer_get_length(b);
	s = xmalloc(*len + 1);
	evbuffer_remove(b, s, *len);
	s[*len] = '\0';
	evbuffer_free(b);
	return (s);
}

/* An image as MCP image content, within the per-result limits. */
static void
worker_output_image(struct worker_call *call, struct worker_budget *b,
    const char *mime, struct json_object *v, struct evbuffer *text)
{
	struct json_object	*blk;
	char			*s;
	size_t			 len, i, k;

	s = worker_output_join(v, &len);
	/* nbformat keeps line breaks in base64; MCP wants it bare. */
	for (i = 0, k = 0; i < len; i++) {
		if (s[i] != '\n' && s[i] != '\r' && s[i] != ' ')
			s[k++] = s[i];
	}
	s[k] = '\0';
	if ((blk = worker_image_show(b, call != NULL, mime, s, k,
	    text)) != NULL)
		worker_call_add_content(call, blk);
	free(s);
}

static int
worker_output_is_image(const char *mime)
{
	return (strcmp(mime, "image/png") == 0 ||
	    strcmp(mime, "image/jpeg") == 0 || strcmp(mime, "image/gif") == 0);
}

/*
 * Where one cell's outputs are cut.  The text a model is shown of them
 * (streams, traceback lines, each bundle's text/plain or first text) is
 * one run of characters; past the cell's budget its first head and its
 * last characters are kept, the middle cut at one marker that says how
 * much went and which call returns it.  The end of a log and the
 * traceback matter most, so the tail gets three quarters.  The other
 * representations of a bundle (text/html beside text/plain) are kept in
 * structuredContent from what budget is left.  Characters are code
 * points; cuts fall between them.
 */
struct worker_output_cut {
	size_t		 total;		/* characters shown, uncut */
	size_t		 keep;		/* characters kept of them */
	size_t		 head;		/* of those, from the start */
	size_t		 pos;		/* characters passed */
	size_t		 left;		/* for the other representations */
	int		 marked;	/* the marker is written */
	const char	*more;		/* the call that returns the rest */
	uint64_t	 dropped;	/* characters the daemon did not keep */
	uint64_t	 markers;	/* characters of its markers */
	int		 full;		/* full_output: past it, line ranges */
};

/* Characters in a text value (a string or a list of strings). */
static size_t
worker_output_len(struct json_object *v)
{
	struct json_object	*e;
	size_t			 i, n = 0;

	if (json_object_is_type(v, json_type_string))
		return (utf8_chars(json_object_get_string(v),
		    (size_t)json_object_get_string_len(v)));
	if (!json_object_is_type(v, json_type_array))
		return (0);
	for (i = 0; i < json_object_array_length(v); i++) {
		e = json_object_array_get_idx(v, i);
		if (json_object_is_type(e, json_type_string))
			n += utf8_chars(json_object_get_string(e),
			    (size_t)json_object_get_string_len(e));
	}
	return (n);
}

static int
worker_output_textual(struct json_object *v)
{
	/* (A blob reference is an object.) */
	return (json_object_is_type(v, json_type_string) ||
	    json_object_is_type(v, json_type_array));
}

/* A bundle's text the model is shown when it has no text/plain. */
static const char *
worker_output_fallback(struct json_object *data)
{
	struct json_object_iterator	 it, end;
	struct json_object		*v;
	const char			*mime;

	if (json_object_object_get_ex(data, "text/plain", &v) &&
	    worker_output_textual(v))
		return (NULL);
	it = json_object_iter_begin(data);
	end = json_object_iter_end(data);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		mime = json_object_iter_peek_name(&it);
		v = json_object_iter_peek_value(&it);
		if (worker_output_textual(v) && !worker_output_is_image(mime) &&
		    strcmp(mime, "image/svg+xml") != 0)
			return (mime);
	}
	return (NULL);
}

/* Is this representation of a bundle shown in the text? */
static int
worker_output_shows(struct worker_budget *b, struct json_object *data,
    const char *mime, struct json_object *v)
{
	const char	*fallback;

	if (!worker_output_textual(v) || worker_output_is_image(mime))
		return (0);
	/* A summary is read in place of the rest (worker-digest.c). */
	if (json_object_object_get(data, WORKER_DIGEST_MIME) != NULL)
		return (b->every_mime || strcmp(mime, WORKER_DIGEST_MIME) == 0);
	/* An image's text/plain is a repr ("<Figure ...>"): not for the model. */
	if (strcmp(mime, "text/plain") == 0)
		return (b->every_mime || !worker_output_shows_image(data));
	fallback = worker_output_fallback(data);
	return (strcmp(mime, "image/svg+xml") == 0 || b->every_mime ||
	    (fallback != NULL && strcmp(mime, fallback) == 0));
}

/* Does the bundle hold an image (held inline) the model is shown? */
static int
worker_output_shows_image(struct json_object *data)
{
	struct json_object_iterator	 it, end;
	const char			*sha;
	int64_t				 size;

	it = json_object_iter_begin(data);
	end = json_object_iter_end(data);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		if (worker_output_is_image(json_object_iter_peek_name(&it)) &&
		    !worker_blob_is_ref(json_object_iter_peek_value(&it), &sha,
		    &size))
			return (1);
	}
	return (0);
}

/* Characters of outputs shown in the text, in the order they are. */
static size_t
worker_output_measure(struct json_object *outputs, struct worker_budget *b)
{
	struct json_object_iterator	 it, end;
	struct json_object		*o, *v, *tb, *data;
	const char			*type;
	size_t				 i, k, n = 0;

	for (i = 0; i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		if (!json_object_is_type(o, json_type_object))
			continue;
		type = json_object_get_string(json_object_object_get(o,
		    "output_type"));
		if (type != NULL && strcmp(type, "stream") == 0) {
			n += worker_output_len(json_object_object_get(o,
			    "text"));
		} else if (type != NULL && strcmp(type, "error") == 0) {
			tb = json_object_object_get(o, "traceback");
			for (k = 0; json_object_is_type(tb, json_type_array) &&
			    k < json_object_array_length(tb); k++)
				n += worker_output_len(
				    json_object_array_get_idx(tb, k));
		} else if (json_object_object_get_ex(o, "data", &data) &&
		    json_object_is_type(data, json_type_object)) {
			it = json_object_iter_begin(data);
			end = json_object_iter_end(data);
			for (; !json_object_iter_equal(&it, &end);
			    json_object_iter_next(&it)) {
				v = json_object_iter_peek_value(&it);
				if (worker_output_shows(b, data,
				    json_object_iter_peek_name(&it), v))
					n += worker_output_len(v);
			}
		}
	}
	return (n);
}

/* The marker where a cut is.  Caller frees. */
static char *
worker_output_marker(const struct worker_output_cut *cut)
{
	char	*m, *kept = NULL;

	/*
	 * The whole cut: what the daemon did not keep of a huge stream
	 * (its head and tail are kept, common/streamcap.c) counts too.
	 */
	if (cut->dropped > 0)
		xasprintf(&kept, " (%llu of them not kept by runtimed: the "
		    "cell printed %llu; the middle is gone)",
		    (unsigned long long)cut->dropped,
		    (unsigned long long)(cut->total - cut->markers +
		    cut->dropped));
	xasprintf(&m, "[... %llu characters cut%s; %s]",
	    (unsigned long long)(cut->total - cut->keep + cut->dropped),
	    kept != NULL ? kept : "", cut->full ? "get_results full_output:"
	    "true with start_line and end_line reads a range of lines, "
	    "search_cells finds one" : cut->more != NULL ? cut->more :
	    cut->dropped > 0 ? "get_results full_output:true returns what "
	    "was kept" : "get_results full_output:true returns them");
	free(kept);
	return (m);
}

/* Text for the model: ANSI stripped, ending with a newline. */
static void
worker_output_say(struct evbuffer *text, const char *s, size_t len)
{
	char	*clean;
	size_t	 clen;

	if (text == NULL || len == 0)
		return;
	clean = worker_output_strip_ansi(s, len, &clen);
	evbuffer_add(text, clean, clen);
	if (clen > 0 && clean[clen - 1] != '\n')
		evbuffer_add(text, "\n", 1);
	free(clean);
}

/*
 * A shown text value, kept whole or cut where the cell's cut falls; NULL
 * when all of it falls in the cut (past the marker).
 */
static struct json_object *
worker_output_piece(struct json_object *v, struct worker_output_cut *cut,
    struct evbuffer *text, int *truncated)
{
	struct json_object	*out;
	struct evbuffer		*sb;
	char			*s, *m;
	size_t			 len, l, start, from, hk = 0, tk = 0, hb, tb;

	s = worker_output_join(v, &len);
	l = utf8_chars(s, len);
	start = cut->pos;
	cut->pos += l;
	if (cut->keep < cut->total) {
		from = cut->total - (cut->keep - cut->head);
		if (start < cut->head)
			hk = l < cut->head - start ? l : cut->head - start;
		if (start + l > from)
			tk = start + l - from < l ? start + l - from : l;
	}
	if (cut->keep == cut->total || hk + tk >= l) {
		worker_output_say(text, s, len);
		out = json_object_new_string_len(s, (int)len);
		free(s);
		return (out);
	}
	*truncated = 1;
	if (hk == 0 && tk == 0 && cut->marked) {
		free(s);
		return (NULL);
	}
	hb = utf8_skip(s, len, hk);
	tb = utf8_back(s, len, tk);
	sb = evbuffer_new();
	evbuffer_add(sb, s, hb);
	worker_output_say(text, s, hb);
	if (!cut->marked) {
		m = worker_output_marker(cut);
		if (hb > 0 && s[hb - 1] != '\n')
			evbuffer_add(sb, "\n", 1);
		evbuffer_add_printf(sb, "%s\n", m);
		if (text != NULL)
			evbuffer_add_printf(text, "%s\n", m);
		free(m);
		cut->marked = 1;
	}
	evbuffer_add(sb, s + tb, len - tb);
	worker_output_say(text, s + tb, len - tb);
	free(s);
	len = evbuffer_get_length(sb);
	out = json_object_new_string_len((const char *)evbuffer_pullup(sb, -1),
	    (int)len);
	evbuffer_free(sb);
	return (out);
}

/* A representation not shown: kept from what the cell has left. */
static struct json_object *
worker_output_extra(struct json_object *v, struct worker_budget *b,
    struct worker_output_cut *cut, int *truncated)
{
	char	*s;
	size_t	 len, l, n;
	struct json_object *out;

	if (b->full)
		return (json_object_get(v));
	if (!worker_output_textual(v)) {
		/* application/json and friends: whole if they fit. */
		l = utf8_chars(json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN), strlen(
		    json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN)));
		if (l > cut->left) {
			*truncated = 1;
			return (NULL);
		}
		cut->left -= l;
		b->result_left -= l;
		return (json_object_get(v));
	}
	s = worker_output_join(v, &len);
	l = utf8_chars(s, len);
	n = l <= cut->left ? l : cut->left;
	if (n < l) {
		*truncated = 1;
		len = utf8_skip(s, len, n);
	}
	cut->left -= n;
	b->result_left -= n;
	out = json_object_new_string_len(s, (int)len);
	free(s);
	return (out);
}

/*
 * A display_data / execute_result mime bundle; NULL when what the model
 * is shown of it falls in the cut.
 */
static struct json_object *
worker_output_bundle(struct json_object *data, struct worker_budget *b,
    struct worker_output_cut *cut, struct evbuffer *text, int *truncated,
    struct worker_call *call)
{
	struct json_object_iterator	 it, end;
	struct json_object		*out, *v, *plain = NULL, *p;
	const char			*mime, *fb, *sha;
	int64_t				 blob_size;
	char				*note;
	size_t				 len;
	int				 shown = 0, kept = 0, pass;

	out = json_object_new_object();
	if (data == NULL || !json_object_is_type(data, json_type_object))
		return (out);
	fb = worker_output_fallback(data);
	json_object_object_get_ex(data, "text/plain", &plain);
	/* text/plain first: it is what the model reads. */
	for (pass = 0; pass < 2; pass++) {
		it = json_object_iter_begin(data);
		end = json_object_iter_end(data);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			mime = json_object_iter_peek_name(&it);
			v = json_object_iter_peek_value(&it);
			if ((strcmp(mime, "text/plain") == 0) != (pass == 0))
				continue;
			if (worker_blob_is_ref(v, &sha, &blob_size)) {
				json_object_object_add(out, mime,
				    json_object_get(v));
				if (text != NULL)
					evbuffer_add_printf(text, "[%s: %lld "
					    "bytes omitted (blob %.12s); "
					    "full_output=true fetches them]\n",
					    mime, (long long)blob_size, sha);
				*truncated = 1;
				continue;
			}
			if (worker_output_is_image(mime)) {
				if (text != NULL)
					worker_output_image(call, b, mime, v,
					    text);
				if (b->full) {
					json_object_object_add(out, mime,
					    json_object_get(v));
					continue;
				}
				free(worker_output_join(v, &len));
				xasprintf(&note, "[%zu bytes base64 omitted; "
				    "get_results full_output=true has it]",
				    len);
				json_object_object_add(out, mime,
				    json_object_new_string(note));
				free(note);
				*truncated = 1;
				continue;
			}
			if (worker_output_shows(b, data, mime, v)) {
				shown++;
				p = worker_output_piece(v, cut, text,
				    truncated);
				if (p != NULL) {
					json_object_object_add(out, mime, p);
					kept++;
				}
				continue;
			}
			if ((p = worker_output_extra(v, b, cut,
			    truncated)) != NULL)
				json_object_object_add(out, mime, p);
			if (!worker_output_textual(v) && plain == NULL &&
			    fb == NULL && text != NULL &&
			    (shown == 0 || kept > 0)) {
				evbuffer_add_printf(text, "[%s output]\n",
				    mime);
				fb = mime;
			}
		}
	}
	if (shown > 0 && kept == 0) {
		json_object_put(out);
		return (NULL);
	}
	return (out);
}

/*
 * A capped copy of one cell's nbformat outputs; the model's text for them
 * goes to text.  Images become content blocks of call (if not NULL).
 */
struct json_object *
worker_output_cap(struct json_object *outputs, struct worker_budget *b,
    struct evbuffer *text, int *truncated, struct worker_call *call)
{
	struct json_object_iterator	 it, end;
	struct json_object		*arr, *o, *copy, *v, *tb, *tv, *p, *view;
	struct worker_output_cut	 cut;
	const char			*type, *key, *ev, *sha;
	int64_t				 blob_size;
	size_t				 i, k, avail, lines;
	uint64_t			 u;

	arr = json_object_new_array();
	*truncated = 0;
	if (outputs == NULL || !json_object_is_type(outputs, json_type_array))
		return (arr);
	/* A range of lines, then shaped as any outputs (worker-range.c). */
	if (b->start_line > 0) {
		view = worker_range_view(outputs, b->start_line, b->end_line,
		    &lines);
		if (text != NULL)
			evbuffer_add_printf(text, "[lines %zu-%zu of %zu]\n",
			    b->start_line, b->end_line != 0 &&
			    b->end_line < lines ? b->end_line : lines, lines);
		k = b->start_line;
		b->start_line = 0;
		json_object_put(arr);
		arr = worker_output_cap(view, b, text, truncated, call);
		b->start_line = k;
		json_object_put(view);
		return (arr);
	}
	/* Library frames folded unless all was asked for. */
	if (!b->full && (view = worker_traceback_view(outputs)) != NULL) {
		json_object_put(arr);
		arr = worker_output_cap(view, b, text, truncated, call);
		json_object_put(view);
		return (arr);
	}
	/* Rich outputs summarized unless the originals were asked for. */
	if (!b->full && !b->every_mime &&
	    (view = worker_digest_view(outputs, b->original)) != NULL) {
		/* Figures drawn as images beside their summaries. */
		for (i = 0; call != NULL &&
		    i < json_object_array_length(outputs); i++) {
			o = json_object_array_get_idx(outputs, i);
			if (json_object_is_type(o, json_type_object) &&
			    json_object_object_get_ex(o, "data", &v))
				worker_figure_queue(call, b, v, i);
		}
		json_object_put(arr);
		arr = worker_output_cap(view, b, text, truncated, call);
		json_object_put(view);
		return (arr);
	}
	memset(&cut, 0, sizeof cut);
	cut.more = b->more;
	cut.full = b->full;
	cut.total = worker_output_measure(outputs, b);
	for (i = 0; i < json_object_array_length(outputs); i++) {
		u = streamcap_cut(json_object_array_get_idx(outputs, i));
		if (u > 0) {
			cut.dropped += u;
			cut.markers += streamcap_marker_chars(u);
		}
	}
	avail = b->cell_cap < b->result_left ? b->cell_cap : b->result_left;
	if (cut.total <= avail)
		cut.keep = cut.total;
	else
		cut.keep = avail;
	cut.head = cut.keep / 4;
	if (avail == 0 && cut.total > 0) {
		/* The result's budget is spent: no outputs, not a marker. */
		*truncated = 1;
		if (text != NULL)
			evbuffer_add_printf(text, "[%zu characters of output not "
			    "shown: the result cap is reached; %s]\n",
			    cut.total, b->more != NULL ? b->more :
			    "get_results full_output:true returns them");
		return (arr);
	}
	if (b->full) {
		cut.left = SIZE_MAX;
		b->result_left -= cut.keep;
	} else {
		cut.left = avail - cut.keep;
		b->result_left -= cut.keep;
	}
	for (i = 0; i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		if (!json_object_is_type(o, json_type_object))
			continue;
		type = json_object_get_string(json_object_object_get(o,
		    "output_type"));
		if (type == NULL)
			type = "";
		/* Cut or dropped on its way here (common/streamcap.c). */
		if (streamcap_truncated(o))
			*truncated = 1;
		copy = json_object_new_object();
		it = json_object_iter_begin(o);
		end = json_object_iter_end(o);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			key = json_object_iter_peek_name(&it);
			v = json_object_iter_peek_value(&it);
			if (strcmp(key, "text") == 0 ||
			    strcmp(key, "data") == 0 ||
			    strcmp(key, "traceback") == 0)
				continue;
			/* Frames mapped to cells: said after the traceback. */
			if (strcmp(key, "transient") == 0 &&
			    strcmp(type, "error") == 0)
				continue;
			if (strcmp(key, "evalue") == 0 && !b->full &&
			    json_object_is_type(v, json_type_string) &&
			    worker_output_len(v) > WORKER_EVALUE_CAP) {
				ev = json_object_get_string(v);
				json_object_object_add(copy, key,
				    json_object_new_string_len(ev, (int)
				    utf8_skip(ev, (size_t)
				    json_object_get_string_len(v),
				    WORKER_EVALUE_CAP)));
				*truncated = 1;
				continue;
			}
			json_object_object_add(copy, key, json_object_get(v));
		}
		if (strcmp(type, "stream") == 0) {
			v = json_object_object_get(o, "text");
			if (worker_blob_is_ref(v, &sha, &blob_size)) {
				/* Kept in the daemon's blob store. */
				*truncated = 1;
				if (text != NULL)
					evbuffer_add_printf(text, "[%lld bytes "
					    "omitted (blob %.12s); "
					    "full_output=true fetches them]\n",
					    (long long)blob_size, sha);
				p = json_object_get(v);
			} else
				p = worker_output_piece(v, &cut, text,
				    truncated);
			if (p == NULL) {
				json_object_put(copy);
				continue;
			}
			json_object_object_add(copy, "text", p);
		} else if (strcmp(type, "error") == 0) {
			tb = json_object_object_get(o, "traceback");
			tv = json_object_new_array();
			for (k = 0; tb != NULL &&
			    json_object_is_type(tb, json_type_array) &&
			    k < json_object_array_length(tb); k++) {
				p = worker_output_piece(
				    json_object_array_get_idx(tb, k), &cut,
				    text, truncated);
				if (p != NULL)
					json_object_array_add(tv, p);
			}
			if (json_object_array_length(tv) == 0 && text != NULL)
				evbuffer_add_printf(text, "%s: %s\n",
				    jsonget_str(o, "ename", "?"),
				    jsonget_str(copy, "evalue", ""));
			json_object_object_add(copy, "traceback", tv);
			worker_traceback_lift(json_object_object_get(o,
			    "transient"), copy, text);
		} else {
			p = worker_output_bundle(json_object_object_get(o,
			    "data"), b, &cut, text, truncated, call);
			if (p == NULL) {
				json_object_put(copy);
				continue;
			}
			json_object_object_add(copy, "data", p);
		}
		json_object_array_add(arr, copy);
	}
	return (arr);
}

/* A cell's source as one string (joined in place if it was a list). */
const char *
worker_output_source(struct json_object *cell, size_t *len)
{
	struct json_object	*v;
	char			*s;
	size_t			 l;

	if (!json_object_object_get_ex(cell, "source", &v) || v == NULL) {
		*len = 0;
		return ("");
	}
	if (!json_object_is_type(v, json_type_string)) {
		s = worker_output_join(v, &l);
		json_object_object_add(cell, "source",
		    json_object_new_string_len(s, (int)l));
		free(s);
		v = json_object_object_get(cell, "source");
	}
	*len = (size_t)json_object_get_string_len(v);
	return (json_object_get_string(v));
}

/*
 * pre, then n in decimal: for text written in pieces, where a printf
 * of each piece would cost more than the rest.
 */
void
worker_output_num(struct evbuffer *b, const char *pre, long long n)
{
	char			 num[24];
	size_t			 i = sizeof num;
	unsigned long long	 u;

	/* Digits from the right: snprintf is most of an outline's cost. */
	u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
	do {
		num[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (n < 0)
		num[--i] = '-';
	evbuffer_add(b, pre, strlen(pre));
	evbuffer_add(b, num + i, sizeof num - i);
}

/* The first line of a source, at most max bytes. */
void
worker_output_preview(struct evbuffer *text, const char *s, size_t len,
    size_t max)
{
	const char	*nl;
	size_t		 n;

	nl = memchr(s, '\n', len);
	n = nl != NULL ? (size_t)(nl - s) : len;
	n = utf8_skip(s, n, max);
	evbuffer_add(text, s, n);
	/* One character, not four: an outline has one a cell. */
	if (n < len)
		evbuffer_add(text, " \u2026", 4);
}

/*
 * What a cell that succeeded printed, as its summary line ends: a short
 * output whole (one line on the same line, more indented below), a long
 * one by its first lines within WORKER_PREVIEW_CHARS, and how much more
 * there is.  A table's header alone says nothing of its values.
 */
void
worker_output_lines(struct evbuffer *text, const char *s, size_t len)
{
	const char	*nl, *p = s, *e = s + len;
	size_t		 lines = 0, chars = 0, n, more;

	if (memchr(s, '\n', len) == NULL &&
	    utf8_chars(s, len) <= WORKER_PREVIEW_CHARS) {
		evbuffer_add(text, ": ", 2);
		evbuffer_add(text, s, len);
		evbuffer_add(text, "\n", 1);
		return;
	}
	evbuffer_add(text, ":\n", 2);
	while (p < e && lines < WORKER_PREVIEW_LINES &&
	    chars < WORKER_PREVIEW_CHARS) {
		nl = memchr(p, '\n', (size_t)(e - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(e - p);
		n = utf8_skip(p, n, WORKER_PREVIEW_CHARS - chars);
		evbuffer_add(text, "    ", 4);
		evbuffer_add(text, p, n);
		evbuffer_add(text, "\n", 1);
		chars += utf8_chars(p, n);
		lines++;
		p += n;
		if (p < e && *p == '\n')
			p++;
		else if (p < e) {
			/* A long line cut: go to the next. */
			nl = memchr(p, '\n', (size_t)(e - p));
			p = nl != NULL ? nl + 1 : e;
		}
	}
	if (p < e) {
		for (more = 1, nl = p; (nl = memchr(nl, '\n',
		    (size_t)(e - nl))) != NULL && nl + 1 < e; nl++)
			more++;
		evbuffer_add_printf(text, "    [... %zu more line%s]\n", more,
		    more == 1 ? "" : "s");
	}
}

int
worker_output_terminal(const char *status)
{
	enum proto_run_status	st;

	if (status == NULL ||
	    proto_run_status_parse(status, strlen(status), &st) != 0)
		return (0);
	/* A wait ends there too: the run needs send_input to go on. */
	return (proto_run_status_ended(st) || st == PROTO_RUN_INPUT_REQUIRED);
}

/*
 * One cell of a run as it is shaped: its structuredContent entry and
 * what the model would be shown of its outputs.
 */
struct worker_output_row {
	struct json_object	*cell;		/* EXEC_STATE's, borrowed */
	const char		*status;
	int			 full;		/* shown in full in the text */
	int			 same;		/* nothing new since last read */
	struct json_object	*c;
	struct evbuffer		*text;
};

/* Statuses whose cells a run's text shows in full: what went wrong, and
 * what is running now. */
static int
worker_output_exec_full(const char *status)
{
	return (strcmp(status, "error") == 0 ||
	    strcmp(status, "interrupted") == 0 ||
	    strcmp(status, "kernel_died") == 0 ||
	    strcmp(status, "running") == 0);
}

/* Did the cell run (or start to)? */
static int
worker_output_exec_ran(const char *status)
{
	return (strcmp(status, "queued") != 0 &&
	    strcmp(status, "not_run") != 0);
}

/* A cell's entry but its source: status, count, capped outputs. */
static void
worker_output_exec_cell(struct worker_output_row *r, struct worker_budget *b,
    struct worker_call *call)
{
	struct json_object	*c;
	int			 trunc;

	c = json_object_new_object();
	json_object_object_add(c, "cell_id", json_object_new_string(
	    jsonget_str(r->cell, "cell_id", "")));
	json_object_object_add(c, "status",
	    json_object_new_string(r->status));
	if (json_object_object_get(r->cell, "version") != NULL)
		json_object_object_add(c, "version", json_object_get(
		    json_object_object_get(r->cell, "version")));
	json_object_object_add(c, "execution_count", json_object_get(
	    json_object_object_get(r->cell, "execution_count")));
	r->text = evbuffer_new();
	b->cell_id = jsonget_str(r->cell, "cell_id", NULL);
	json_object_object_add(c, "outputs", worker_output_cap(
	    json_object_object_get(r->cell, "outputs"), b, r->text, &trunc,
	    call));
	b->cell_id = NULL;
	json_object_object_add(c, "truncated", json_object_new_boolean(trunc));
	r->c = c;
}

/* The source as it ran, its head kept within the result's budget. */
static void
worker_output_exec_source(struct worker_output_row *r,
    struct worker_budget *b)
{
	const char	*src;
	size_t		 len, l, n;

	src = worker_output_source(r->cell, &len);
	if (!b->full) {
		l = utf8_chars(src, len);
		n = WORKER_SOURCE_CAP < b->result_left ? WORKER_SOURCE_CAP :
		    b->result_left;
		if (l > n) {
			json_object_object_add(r->c, "source_truncated",
			    json_object_new_boolean(1));
			/* Spent: no source rather than an empty one. */
			if (n == 0)
				return;
			len = utf8_skip(src, len, n);
			l = n;
		}
		b->result_left -= l;
	}
	json_object_object_add(r->c, "source",
	    json_object_new_string_len(src, (int)len));
}

/* The first error of a cell's outputs: "ename: evalue", cut short. */
static void
worker_output_exec_error(struct evbuffer *text, struct json_object *cell)
{
	struct json_object	*outs, *o;
	const char		*type, *ev;
	size_t			 i;

	outs = json_object_object_get(cell, "outputs");
	for (i = 0; json_object_is_type(outs, json_type_array) &&
	    i < json_object_array_length(outs); i++) {
		o = json_object_array_get_idx(outs, i);
		type = jsonget_str(o, "output_type", "");
		if (strcmp(type, "error") != 0)
			continue;
		ev = jsonget_str(o, "evalue", "");
		evbuffer_add_printf(text, " (%s: ",
		    jsonget_str(o, "ename", "?"));
		worker_output_preview(text, ev, strlen(ev), 100);
		evbuffer_add(text, ")", 1);
		return;
	}
}

/*
 * Why a run ended as it did, and what to do next, where the daemon said
 * (a kernel's death, a restart, the daemon stopping): in the run's own
 * result, not only in the next call's.
 */
static void
worker_output_exec_why(struct evbuffer *text, const struct worker_exec *state)
{
	if (state->status == NULL)
		return;
	if (strcmp(state->status, "kernel_died") == 0) {
		evbuffer_add_printf(text, "%s. Call restart_kernel to start "
		    "a fresh one (its variables are gone), then run again the "
		    "cells that define them.\n",
		    state->message != NULL ? state->message : "the kernel died");
		return;
	}
	if (state->message != NULL && (strcmp(state->status,
	    "interrupted") == 0 || strcmp(state->status, "cancelled") == 0))
		evbuffer_add_printf(text, "why: %s\n", state->message);
}

/*
 * A cell's version now, once it ran (the daemon gives it in a reply): the
 * one an edit may expect.  Not while it runs: each output changes it.
 */
static void
worker_output_exec_version(struct evbuffer *text,
    const struct worker_output_row *r)
{
	const char	*v;

	if ((v = jsonget_str(r->cell, "version", NULL)) == NULL ||
	    strcmp(r->status, "running") == 0)
		return;
	evbuffer_add_printf(text, " v%s", v);
}

/* Up to 10 ids of the cells of one status that the text summarises. */
static void
worker_output_exec_ids(struct evbuffer *text, struct worker_output_row *rows,
    size_t n, const char *status)
{
	size_t	i, k = 0, m = 0;

	for (i = 0; i < n; i++) {
		if (!rows[i].full && !rows[i].same &&
		    strcmp(rows[i].status, status) == 0)
			m++;
	}
	for (i = 0; i < n; i++) {
		if (rows[i].full || rows[i].same ||
		    strcmp(rows[i].status, status) != 0)
			continue;
		if (k++ == WORKER_RUN_IDS) {
			evbuffer_add_printf(text, " (+%zu more)",
			    m - WORKER_RUN_IDS);
			break;
		}
		evbuffer_add_printf(text, " %s",
		    jsonget_str(rows[i].cell, "cell_id", "?"));
	}
}

/*
 * The text of a run (docs/decisions/015): the outcome first, then the
 * cells that failed, were cut off or are running, in full, then the last
 * cell that ran; the others summarised, a line each at most, and those
 * that did not run one line for all.
 */
static void
worker_output_exec_text(struct evbuffer *text, const struct worker_exec *state,
    struct worker_output_row *rows, size_t n)
{
	static const char *const	 rest[] = {
		"ok", "not_run", "queued", NULL
	};
	struct worker_output_row	*r;
	const char			*first = NULL, *st;
	char				*line;
	size_t				 i, k, m, len, nerr = 0;
	struct json_object		*ec;

	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].status, "error") == 0 && nerr++ == 0)
			first = jsonget_str(rows[i].cell, "cell_id", "?");
	}
	evbuffer_add_printf(text, "execution_id %s: %s",
	    *state->execution_id != '\0' ? state->execution_id : "?",
	    state->status);
	if (nerr == 1) {
		evbuffer_add_printf(text, "; cell %s failed", first);
		for (i = 0; strcmp(rows[i].status, "error") != 0; i++)
			;
		worker_output_exec_error(text, rows[i].cell);
	} else if (nerr > 1)
		evbuffer_add_printf(text, "; %zu cells failed, first %s",
		    nerr, first);
	/* Counts by status, in the order they first occur. */
	for (i = 0, k = 0; i < n; i++) {
		st = rows[i].status;
		for (m = 0; m < i && strcmp(rows[m].status, st) != 0; m++)
			;
		if (m < i || (nerr > 0 && strcmp(st, "error") == 0))
			continue;
		for (len = 0, m = i; m < n; m++)
			len += strcmp(rows[m].status, st) == 0;
		evbuffer_add_printf(text, "%s%zu %s", k++ == 0 ? "; " : ", ",
		    len, st);
	}
	evbuffer_add(text, "\n", 1);
	worker_output_exec_why(text, state);

	for (i = 0; i < n; i++) {
		r = &rows[i];
		if (!r->full)
			continue;
		evbuffer_add_printf(text, "--- cell %s",
		    jsonget_str(r->cell, "cell_id", "?"));
		ec = json_object_object_get(r->cell, "execution_count");
		if (json_object_is_type(ec, json_type_int))
			evbuffer_add_printf(text, " [%lld]",
			    (long long)json_object_get_int64(ec));
		worker_output_exec_version(text, r);
		evbuffer_add_printf(text, ": %s\n", r->status);
		if (strcmp(r->status, "ok") != 0 &&
		    strcmp(r->status, "running") != 0) {
			st = json_object_get_string(json_object_object_get(
			    r->c, "source"));
			evbuffer_add_printf(text, "source:\n%s%s\n",
			    st != NULL ? st : "",
			    json_object_object_get(r->c,
			    "source_truncated") != NULL ? "\n[... source "
			    "cut; get_results full_output:true has it]" : "");
			if (evbuffer_get_length(r->text) > 0)
				evbuffer_add(text, "output:\n", 8);
		}
		evbuffer_add_buffer(text, r->text);
	}

	for (i = 0, m = 0; i < n; i++)
		m += rows[i].same;
	if (m > 0) {
		evbuffer_add(text, "unchanged since your last read:", 31);
		for (i = 0, k = 0; i < n; i++) {
			if (!rows[i].same)
				continue;
			if (k++ == WORKER_RUN_IDS) {
				evbuffer_add_printf(text, " (+%zu more)",
				    m - WORKER_RUN_IDS);
				break;
			}
			evbuffer_add_printf(text, " %s", jsonget_str(
			    rows[i].cell, "cell_id", "?"));
		}
		evbuffer_add(text, "\n", 1);
	}
	for (k = 0; rest[k] != NULL; k++) {
		for (i = 0, m = 0; i < n; i++)
			m += !rows[i].full && !rows[i].same &&
			    strcmp(rows[i].status, rest[k]) == 0;
		if (m == 0)
			continue;
		evbuffer_add_printf(text, "%s: %zu cell%s", rest[k], m,
		    m == 1 ? "" : "s");
		if (strcmp(rest[k], "ok") != 0 || m > WORKER_RUN_LINES) {
			evbuffer_add(text, ":", 1);
			worker_output_exec_ids(text, rows, n, rest[k]);
			evbuffer_add(text, "\n", 1);
			continue;
		}
		/* A few: each with the first line it printed. */
		evbuffer_add(text, "\n", 1);
		for (i = 0; i < n; i++) {
			r = &rows[i];
			if (r->full || r->same ||
			    strcmp(r->status, rest[k]) != 0)
				continue;
			evbuffer_add_printf(text, "  %s",
			    jsonget_str(r->cell, "cell_id", "?"));
			worker_output_exec_version(text, r);
			len = evbuffer_get_length(r->text);
			line = (char *)evbuffer_pullup(r->text, -1);
			while (len > 0 && line[len - 1] == '\n')
				len--;
			if (len > 0)
				worker_output_lines(text, line, len);
			else
				evbuffer_add(text, "\n", 1);
		}
	}
	/* Any other status (a newer daemon's) is summarised too. */
	for (i = 0; i < n; i++) {
		if (rows[i].full || rows[i].same)
			continue;
		for (k = 0; rest[k] != NULL &&
		    strcmp(rest[k], rows[i].status) != 0; k++)
			;
		if (rest[k] == NULL)
			evbuffer_add_printf(text, "%s: cell %s\n",
			    rows[i].status, jsonget_str(rows[i].cell,
			    "cell_id", "?"));
	}
}

/*
 * EXEC_STATE -> the run result of docs/tools.md: execution_id,
 * status, cells with status, execution_count, source, outputs, truncated.
 * The budget goes first to the cells the text shows in full, then to the
 * outputs of the others, then to their sources.
 */
struct json_object *
worker_output_exec(const struct worker_exec *state, struct worker_budget *b,
    struct evbuffer *text, struct worker_call *call)
{
	struct json_object		*sc, *cells, *v, *view = NULL;
	struct worker_output_row	*rows;
	size_t				 i, n, last = SIZE_MAX, bare, omitted;
	int				 pass, any_trunc = 0;

	sc = json_object_new_object();
	json_object_object_add(sc, "execution_id",
	    json_object_new_string(state->execution_id));
	json_object_object_add(sc, "status",
	    json_object_new_string(state->status));
	if (state->input != NULL) {
		json_object_object_add(sc, "input",
		    json_object_get(state->input));
		evbuffer_add_printf(text, "cell %s asks for %s: %s\n"
		    "(answer with send_input execution_id=%s)\n",
		    jsonget_str(state->input, "cell_id", "?"),
		    json_object_get_boolean(json_object_object_get(
		    state->input, "password")) ? "a password" : "input",
		    jsonget_str(state->input, "prompt", ""),
		    state->execution_id);
	}
	v = state->cells;
	/* A poll: only what this session has not read (worker-seen.c). */
	if (b->delta && !b->full &&
	    (view = worker_seen_delta(state->execution_id, v)) != NULL)
		v = view;
	n = v != NULL && json_object_is_type(v, json_type_array) ?
	    json_object_array_length(v) : 0;
	rows = xcalloc(n + 1, sizeof *rows);
	for (i = 0; i < n; i++) {
		rows[i].cell = json_object_array_get_idx(v, i);
		rows[i].status = jsonget_str(rows[i].cell, "status",
		    proto_cell_status_name(PROTO_CELL_QUEUED));
		rows[i].same = json_object_get_boolean(json_object_object_get(
		    rows[i].cell, "unchanged"));
		if (worker_output_exec_ran(rows[i].status))
			last = i;
		rows[i].full = !rows[i].same &&
		    worker_output_exec_full(rows[i].status);
	}
	if (last != SIZE_MAX && !rows[last].same)
		rows[last].full = 1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if (rows[i].full != (pass == 0))
				continue;
			worker_output_exec_cell(&rows[i], b, call);
			if (pass == 0)
				worker_output_exec_source(&rows[i], b);
		}
	}
	for (i = 0; i < n; i++) {
		if (!rows[i].full)
			worker_output_exec_source(&rows[i], b);
		any_trunc |= json_object_get_boolean(json_object_object_get(
		    rows[i].c, "truncated"));
	}
	cells = worker_output_exec_cells(rows, n, b, &bare, &omitted);
	json_object_object_add(sc, "cells", cells);
	if (omitted > 0)
		json_object_object_add(sc, "cells_omitted",
		    json_object_new_int64((int64_t)omitted));
	json_object_object_add(sc, "truncated",
	    json_object_new_boolean(any_trunc || bare > 0 || omitted > 0));
	worker_output_exec_text(text, state, rows, n);
	if ((bare > 0 || omitted > 0) && call != NULL &&
	    worker_call_structured(call))
		evbuffer_add_printf(text, "(structuredContent: %zu cells "
		    "without outputs, %zu left out; get_results full_output:"
		    "true has every cell)\n", bare, omitted);
	/* Said once: a poll's reader knows how it got there. */
	if (view == NULL && state->status != NULL &&
	    !worker_output_terminal(state->status))
		evbuffer_add_printf(text, "(still %s: call get_results with "
		    "this execution_id and timeout_secs to wait)\n",
		    state->status);
	for (i = 0; i < n; i++) {
		json_object_put(rows[i].c);
		evbuffer_free(rows[i].text);
	}
	free(rows);
	if (call != NULL)
		worker_seen_note(state->execution_id, state->cells);
	json_object_put(view);
	return (sc);
}

/* Bytes of o as JSON (at least its characters). */
size_t
worker_output_json_size(struct json_object *o)
{
	size_t	len = 0;

	json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	return (len);
}

/*
 * A run's cells for structuredContent, within WORKER_STRUCT_CAP: the
 * per-cell fields of a long run add up past the text's caps.  The cells
 * the text shows in full keep what they have; the others, in order, as
 * they are while they fit, then as {cell_id, status, execution_count}
 * (*bare counts them), and past that not at all (*omitted).  With
 * full_output every cell is whole.
 */
static struct json_object *
worker_output_exec_cells(struct worker_output_row *rows, size_t n,
    struct worker_budget *b, size_t *bare, size_t *omitted)
{
	struct json_object	*cells, *small;
	size_t			 i, len, left;

	*bare = *omitted = 0;
	/* Room for the result's other fields (ids, status, target). */
	left = WORKER_STRUCT_CAP - 1000;
	for (i = 0; i < n && !b->full; i++) {
		if (rows[i].full) {
			len = worker_output_json_size(rows[i].c) + 1;
			left = len < left ? left - len : 0;
		}
	}
	cells = json_object_new_array();
	for (i = 0; i < n; i++) {
		if (b->full || rows[i].full) {
			json_object_array_add(cells, json_object_get(rows[i].c));
			continue;
		}
		len = worker_output_json_size(rows[i].c) + 1;
		if (len <= left) {
			left -= len;
			json_object_array_add(cells, json_object_get(rows[i].c));
			continue;
		}
		small = json_object_new_object();
		json_object_object_add(small, "cell_id", json_object_get(
		    json_object_object_get(rows[i].c, "cell_id")));
		json_object_object_add(small, "status", json_object_get(
		    json_object_object_get(rows[i].c, "status")));
		json_object_object_add(small, "execution_count",
		    json_object_get(json_object_object_get(rows[i].c,
		    "execution_count")));
		json_object_object_add(small, "outputs_omitted",
		    json_object_new_boolean(1));
		len = worker_output_json_size(small) + 1;
		if (len <= left) {
			left -= len;
			json_object_array_add(cells, small);
			(*bare)++;
		} else {
			json_object_put(small);
			(*omitted)++;
		}
	}
	return (cells);
}

/* Is this a cell_type runtimed runs and edits (not a newer format's)? */
static int
worker_output_known_type(const char *type)
{
	return (strcmp(type, "code") == 0 || strcmp(type, "markdown") == 0 ||
	    strcmp(type, "raw") == 0);
}

/*
 * Cells a merge from disk left in conflict (docs/decisions/056): into
 * sc.conflicts as the daemon gives them, and a line each into text with
 * the file's version's first line and how to resolve it.
 */
void
worker_output_conflicts(struct json_object *cf, struct json_object *sc,
    struct evbuffer *text)
{
	struct json_object	*v, *d;
	const char		*src, *kind, *nl;
	size_t			 i, n, len;

	if (cf == NULL || !json_object_is_type(cf, json_type_array) ||
	    (n = json_object_array_length(cf)) == 0)
		return;
	json_object_object_add(sc, "conflicts", json_object_get(cf));
	evbuffer_add_printf(text, "%zu conflict%s with the file (changed on "
	    "disk and here; the file is not written until resolved with "
	    "edit_cells {op: \"resolve\", cell_id, take: \"room\"|\"disk\"|"
	    "\"both\"}):\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(cf, i);
		kind = jsonget_str(v, "kind", "?");
		evbuffer_add_printf(text, "- cell %s: %s",
		    jsonget_str(v, "cell_id", "?"),
		    strcmp(kind, "both_edited") == 0 ? "edited here and on "
		    "disk" : strcmp(kind, "deleted_on_disk") == 0 ?
		    "edited here, deleted on disk" : strcmp(kind,
		    "deleted_in_room") == 0 ? "deleted here, edited on disk" :
		    kind);
		if (json_object_object_get_ex(v, "disk", &d) && d != NULL &&
		    (src = jsonget_str(d, "source", NULL)) != NULL) {
			nl = strchr(src, '\n');
			len = nl != NULL ? (size_t)(nl - src) : strlen(src);
			if (len > 80)
				len = 80;
			evbuffer_add_printf(text, "; disk's: %s \"%.*s%s\"",
			    jsonget_str(d, "cell_type", "code"),
			    (int)len, src, len < strlen(src) ? "..." : "");
		}
		evbuffer_add(text, "\n", 1);
	}
}

/*
 * What the loader found wrong with the file (nbformat's validation
 * warnings) and what a save changes: into sc, and a line per warning
 * (the first few) into text.
 */
static void
worker_output_warnings(struct json_object *w, struct json_object *sc,
    struct evbuffer *text)
{
	struct json_object	*v;
	size_t			 i, n;

	if (w == NULL || !json_object_is_type(w, json_type_array) ||
	    (n = json_object_array_length(w)) == 0)
		return;
	json_object_object_add(sc, "warnings", json_object_get(w));
	evbuffer_add_printf(text, "%zu warning%s (the file is not valid "
	    "nbformat; structuredContent.warnings has all):\n", n,
	    n == 1 ? "" : "s");
	for (i = 0; i < n && i < WORKER_SUMMARY_WARNINGS; i++) {
		v = json_object_array_get_idx(w, i);
		evbuffer_add_printf(text, "- %s; a save %s\n",
		    jsonget_str(v, "message", "?"),
		    jsonget_str(v, "on_save", "keeps it as it is"));
	}
	if (n > WORKER_SUMMARY_WARNINGS)
		evbuffer_add_printf(text, "- (%zu more)\n",
		    n - WORKER_SUMMARY_WARNINGS);
}

/*
 * A stale reason as the daemon sends it: the reason's length, and for
 * "upstream_changed:<cell_id>" (decision 072) the cell in *up, *uplen
 * (NULL otherwise).
 */
size_t
worker_output_stale_reason(const char *s, size_t len, const char **up,
    size_t *uplen)
{
	const char	*c;

	*up = NULL;
	*uplen = 0;
	if (s == NULL || (c = memchr(s, ':', len)) == NULL)
		return (len);
	*up = c + 1;
	*uplen = len - (size_t)(c + 1 - s);
	return ((size_t)(c - s));
}

/*
 * A cell's last editor as a line names it (issue 39): nothing when no
 * one is known or it was this session, " (on disk)" for a merge of the
 * file, else " (by NAME)", the words change reports use; c gets by.
 */
void
worker_output_by(struct evbuffer *text, struct evbuffer *js,
    struct json_object *c, const char *client, size_t clen,
    const char *session, size_t slen, int disk)
{
	char	own[16];

	if (!disk) {
		if (client == NULL)
			return;
		snprintf(own, sizeof own, "%08x", worker_attach_tag());
		if (session != NULL && slen == strlen(own) &&
		    memcmp(session, own, slen) == 0)
			return;
	} else {
		client = "disk";
		clen = 4;
	}
	if (text != NULL) {
		if (disk)
			evbuffer_add(text, " (on disk)", 10);
		else {
			evbuffer_add(text, " (by ", 5);
			evbuffer_add(text, client, clen);
			evbuffer_add(text, ")", 1);
		}
	}
	if (js != NULL) {
		evbuffer_add(js, ",\"by\":", 6);
		worker_json_quote(js, client, clen);
	}
	if (c != NULL)
		json_object_object_add(c, "by", json_object_new_string_len(
		    client, (int)clen));
}

/* The same from a decoded cell's by ({disk} or {client, session?}). */
static void
worker_output_by_json(struct json_object *cell, struct json_object *c,
    struct evbuffer *text)
{
	struct json_object	*by, *v, *sv;

	by = json_object_object_get(cell, "by");
	if (!json_object_is_type(by, json_type_object))
		return;
	if (json_object_object_get_ex(by, "disk", &v) &&
	    json_object_get_boolean(v)) {
		worker_output_by(text, NULL, c, NULL, 0, NULL, 0, 1);
		return;
	}
	if (!json_object_object_get_ex(by, "client", &v) ||
	    !json_object_is_type(v, json_type_string))
		return;
	if (!json_object_object_get_ex(by, "session", &sv) ||
	    !json_object_is_type(sv, json_type_string))
		sv = NULL;
	worker_output_by(text, NULL, c, json_object_get_string(v),
	    (size_t)json_object_get_string_len(v),
	    sv != NULL ? json_object_get_string(sv) : NULL,
	    sv != NULL ? (size_t)json_object_get_string_len(sv) : 0, 0);
}

/*
 * A cell's version and, when its outputs may not match it, its stale
 * reasons into its result c (and upstream, the cell upstream_changed
 * names), and who last changed it when another; text gets " vVERSION",
 * " stale" and " (by NAME)".
 */
void
worker_output_version(struct json_object *cell, struct json_object *c,
    struct evbuffer *text)
{
	struct json_object	*v, *st, *names, *r, *upstream = NULL;
	const char		*up;
	size_t			 i, k = 0, n, uplen;

	v = json_object_object_get(cell, "version");
	st = json_object_object_get(cell, "stale");
	if (json_object_is_type(v, json_type_string)) {
		json_object_object_add(c, "version", json_object_get(v));
		if (text != NULL)
			evbuffer_add_printf(text, " v%s",
			    json_object_get_string(v));
	}
	if (json_object_is_type(st, json_type_array) &&
	    json_object_array_length(st) > 0) {
		names = json_object_new_array();
		for (i = 0; i < json_object_array_length(st); i++) {
			r = json_object_array_get_idx(st, i);
			if (!json_object_is_type(r, json_type_string))
				continue;
			n = worker_output_stale_reason(json_object_get_string(
			    r), (size_t)json_object_get_string_len(r), &up,
			    &uplen);
			json_object_array_add(names, json_object_new_string_len(
			    json_object_get_string(r), (int)n));
			if (up != NULL) {
				json_object_put(upstream);
				upstream = json_object_new_string_len(up,
				    (int)uplen);
			}
			if (text != NULL)
				worker_output_stale_name(text,
				    json_object_get_string(r),
				    (size_t)json_object_get_string_len(r), &k);
		}
		json_object_object_add(c, "stale", names);
		if (upstream != NULL)
			json_object_object_add(c, "upstream", upstream);
		if (k > 0)
			evbuffer_add(text, ")", 1);
	}
	worker_output_by_json(cell, c, text);
}

/*
 * One reason a cell is stale onto its line, " stale(a,b)" (*k counts
 * them; the caller closes the parenthesis), upstream_changed with its
 * cell ("upstream_changed by c1").  never_run is left out: a line without
 * an execution count says it.
 */
static void
worker_output_stale_name(struct evbuffer *text, const char *s, size_t len,
    size_t *k)
{
	const char	*up;
	size_t		 n, uplen;

	if (s == NULL || (len == 9 && memcmp(s, "never_run", 9) == 0))
		return;
	if ((*k)++ == 0)
		evbuffer_add(text, " stale(", 7);
	else
		evbuffer_add(text, ",", 1);
	n = worker_output_stale_reason(s, len, &up, &uplen);
	evbuffer_add(text, s, n);
	if (up != NULL) {
		evbuffer_add(text, " by ", 4);
		evbuffer_add(text, up, uplen);
	}
}

/* The stale reasons of a packed cell (an array of names) onto its line. */
void
worker_output_stale_mp(struct evbuffer *text, const msgpack_object *st)
{
	size_t		 k = 0;
	uint32_t	 i;

	if (st->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (i = 0; i < st->via.array.size; i++) {
		if (st->via.array.ptr[i].type == MSGPACK_OBJECT_STR)
			worker_output_stale_name(text,
			    st->via.array.ptr[i].via.str.ptr,
			    st->via.array.ptr[i].via.str.size, &k);
	}
	if (k > 0)
		evbuffer_add(text, ")", 1);
}

/*
 * How many cells are stale, by reason, into sc (stale: {cells, reason:
 * count...}) and a line of text; nothing when none is.
 */
static void
worker_output_stale(struct json_object *cells, struct json_object *sc,
    struct evbuffer *text)
{
	struct json_object	*count, *st, *r, *have;
	const char		*up;
	char			*name;
	size_t			 i, j, n, stale = 0, len, uplen;
	int			 first = 1;

	count = json_object_new_object();
	n = json_object_array_length(cells);
	for (i = 0; i < n; i++) {
		st = json_object_object_get(json_object_array_get_idx(cells,
		    i), "stale");
		if (!json_object_is_type(st, json_type_array) ||
		    json_object_array_length(st) == 0)
			continue;
		stale++;
		for (j = 0; j < json_object_array_length(st); j++) {
			r = json_object_array_get_idx(st, j);
			if (!json_object_is_type(r, json_type_string))
				continue;
			/* By reason: upstream_changed without its cell. */
			len = worker_output_stale_reason(json_object_get_string(
			    r), (size_t)json_object_get_string_len(r), &up,
			    &uplen);
			name = xstrndup(json_object_get_string(r), len);
			have = json_object_object_get(count, name);
			json_object_object_add(count, name,
			    json_object_new_int64(have == NULL ? 1 :
			    json_object_get_int64(have) + 1));
			free(name);
		}
	}
	if (stale == 0) {
		json_object_put(count);
		return;
	}
	evbuffer_add_printf(text, "%zu code cell%s stale (", stale,
	    stale == 1 ? "" : "s");
	json_object_object_foreach(count, key, val) {
		evbuffer_add_printf(text, "%s%s %lld", first ? "" : ", ", key,
		    (long long)json_object_get_int64(val));
		first = 0;
	}
	evbuffer_add_printf(text, ")\n");
	json_object_object_add(count, "cells",
	    json_object_new_int64((int64_t)stale));
	json_object_object_add(sc, "stale", count);
}

/* Cell summaries for connect/create: cell_id, type, count, preview. */
static struct json_object *
worker_output_summaries(struct json_object *cells, struct evbuffer *text)
{
	struct json_object	*arr, *cell, *c, *ec, *outs;
	struct evbuffer		*pv;
	const char		*src, *type;
	size_t			 i, n, len;
	char			*p;

	arr = json_object_new_array();
	n = cells != NULL && json_object_is_type(cells, json_type_array) ?
	    json_object_array_length(cells) : 0;
	if (n > WORKER_SUMMARY_CELLS)
		n = WORKER_SUMMARY_CELLS;
	for (i = 0; i < n; i++) {
		cell = json_object_array_get_idx(cells, i);
		type = jsonget_str(cell, "cell_type", "code");
		c = json_object_new_object();
		json_object_object_add(c, "cell_id", json_object_new_string(
		    jsonget_str(cell, "cell_id", "")));
		json_object_object_add(c, "cell_type",
		    json_object_new_string(type));
		ec = json_object_object_get(cell, "execution_count");
		json_object_object_add(c, "execution_count",
		    json_object_get(ec));
		outs = json_object_object_get(cell, "outputs");
		json_object_object_add(c, "outputs", json_object_new_int(
		    outs != NULL && json_object_is_type(outs,
		    json_type_array) ? (int)json_object_array_length(outs) :
		    0));
		src = worker_output_source(cell, &len);
		pv = evbuffer_new();
		worker_output_preview(pv, src, len, 80);
		len = evbuffer_get_length(pv);
		p = xmalloc(len + 1);
		evbuffer_remove(pv, p, len);
		p[len] = '\0';
		evbuffer_free(pv);
		json_object_object_add(c, "preview",
		    json_object_new_string_len(p, (int)len));
		if (!worker_output_known_type(type))
			json_object_object_add(c, "known_type",
			    json_object_new_boolean(0));
		if (text != NULL) {
			evbuffer_add_printf(text, "[%zu] %s %s%s",
			    i, jsonget_str(cell, "cell_id", "?"), type,
			    worker_output_known_type(type) ? "" :
			    " (unknown type: not runnable; replace whole, move "
			    "or delete)");
			if (json_object_is_type(ec, json_type_int))
				evbuffer_add_printf(text, " [%lld]",
				    (long long)json_object_get_int64(ec));
		}
		worker_output_version(cell, c, text);
		if (text != NULL)
			evbuffer_add_printf(text, ": %s\n", p);
		free(p);
		json_object_array_add(arr, c);
	}
	return (arr);
}

/* "N cells (a code, b markdown)" and where the outline is. */
static void
worker_output_census(struct evbuffer *text, struct json_object *cells)
{
	static const char *const	 types[] = { "code", "markdown", "raw" };
	size_t				 i, k, n, count[4] = { 0 };
	const char			*type;
	int				 first = 1;

	n = json_object_array_length(cells);
	for (i = 0; i < n; i++) {
		type = jsonget_str(json_object_array_get_idx(cells, i),
		    "cell_type", "code");
		for (k = 0; k < 3 && strcmp(types[k], type) != 0; k++)
			;
		count[k]++;
	}
	evbuffer_add_printf(text, "%zu cells (", n);
	for (k = 0; k < 4; k++) {
		if (count[k] == 0)
			continue;
		evbuffer_add_printf(text, "%s%zu %s", first ? "" : ", ",
		    count[k], k < 3 ? types[k] : "of other types");
		first = 0;
	}
	evbuffer_add_printf(text, "); inspect_notebook shows the outline\n");
}

/* The resource URIs of a handle (handles need no percent-encoding). */
static struct json_object *
worker_output_resources(const char *handle)
{
	struct json_object	*arr;
	char			*uri;

	char	*enc;

	enc = worker_resource_encode(handle);
	arr = json_object_new_array();
	xasprintf(&uri, "runtimed://sessions/%s/cells", enc);
	json_object_array_add(arr, json_object_new_string(uri));
	free(uri);
	xasprintf(&uri, "runtimed://sessions/%s/comments", enc);
	json_object_array_add(arr, json_object_new_string(uri));
	free(uri);
	free(enc);
	return (arr);
}

/*
 * The text gathered in b as a string; frees b.  Caller frees.  A NUL
 * byte (a source may hold one) is shown as U+2400, the symbol for
 * null: the text is a C string from here on, and the rest of it would
 * be lost.
 */
char *
worker_output_take(struct evbuffer *b)
{
	static const char	 sym[] = "\xe2\x90\x80";
	size_t			 len, i, n, k;
	char			*s, *t;

	len = evbuffer_get_length(b);
	s = xmalloc(len + 1);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	evbuffer_free(b);
	for (n = 0, i = 0; i < len; i++)
		n += s[i] == '\0';
	if (n > 0) {
		t = xmalloc(len + 2 * n + 1);
		for (i = 0, k = 0; i < len; i++) {
			if (s[i] != '\0')
				t[k++] = s[i];
			else {
				memcpy(t + k, sym, 3);
				k += 3;
			}
		}
		t[k] = '\0';
		free(s);
		s = t;
		len = k;
	}
	/* No trailing newline in a content block. */
	while (len > 0 && s[len - 1] == '\n')
		s[--len] = '\0';
	return (s);
}

/* The kernel {name, state} of a room summary (ROOM_LIST), copied. */
struct json_object *
worker_output_kernel(struct json_object *reply)
{
	struct json_object	*k, *out;

	out = json_object_new_object();
	k = json_object_object_get(reply, "kernel");
	json_object_object_add(out, "name", json_object_new_string(
	    jsonget_str(k, "name", "")));
	json_object_object_add(out, "state", json_object_new_string(
	    jsonget_str(k, "state", "none")));
	return (out);
}

/*
 * Readiness of a notebook for runs, from its kernel's state: "ready"
 * (idle or busy), "starting" (runs wait for the kernel), "unresponsive",
 * or "kernel_unavailable" (dead: restart_kernel).
 */
const char *
worker_output_readiness(const char *st)
{
	if (strcmp(st, "idle") == 0 || strcmp(st, "busy") == 0)
		return ("ready");
	if (strcmp(st, "dead") == 0)
		return (PROTO_E_KERNEL_UNAVAILABLE);
	if (strcmp(st, "unresponsive") == 0)
		return ("unresponsive");
	return ("starting");
}

/* An observation cursor: daemon incarnation and room sequence. */
struct json_object *
worker_output_cursor(struct worker_room *room, int64_t seq)
{
	char	*s;
	struct json_object *o;

	s = worker_cursor_make(worker_attach_tag(),
	    worker_room_notebook_id(room), worker_room_started_at(room), seq);
	o = json_object_new_string(s);
	free(s);
	return (o);
}

/* Finish connect_notebook / create_notebook from ROOM_JOINED. */
void
worker_output_attached(struct worker_call *call, struct worker_handle *h,
    const struct worker_nb *joined)
{
	struct json_object	*sc, *cells, *v, *kernel;
	struct evbuffer		*text;
	const char		*path;
	char			*s;
	size_t			 n;

	sc = json_object_new_object();
	text = evbuffer_new();
	path = joined->path;
	kernel = worker_nb_kernel(joined);
	json_object_object_add(sc, "notebook_handle",
	    json_object_new_string(worker_attach_id(h)));
	json_object_object_add(sc, "notebook_id", json_object_new_string(
	    worker_attach_notebook_id(h)));
	json_object_object_add(sc, "path", path != NULL ?
	    json_object_new_string(path) : NULL);
	/* A notebook on a Jupyter Server says which (docs/remote.md). */
	if (worker_attach_room(h) != NULL &&
	    worker_room_domain(worker_attach_room(h)) != NULL)
		json_object_object_add(sc, "domain", json_object_new_string(
		    worker_room_domain(worker_attach_room(h))));
	evbuffer_add_printf(text, "notebook_handle: %s\nnotebook_id: %s\n"
	    "path: %s\nkernel: %s (%s)\n", worker_attach_id(h),
	    worker_attach_notebook_id(h), path != NULL ? path : "(untitled)",
	    jsonget_str(kernel, "name", ""),
	    jsonget_str(kernel, "state", ""));
	json_object_object_add(sc, "kernel", kernel);
	json_object_object_add(sc, "dirty",
	    json_object_new_boolean(joined->dirty));
	v = worker_nb_cells(joined);
	n = v != NULL && json_object_is_type(v, json_type_array) ?
	    json_object_array_length(v) : 0;
	/* A small notebook is listed; a large one is inspect_notebook's. */
	if (n <= WORKER_SUMMARY_TEXT_CELLS) {
		evbuffer_add_printf(text, "%zu cells%s\n", n, n > 0 ? ":" :
		    "");
		cells = worker_output_summaries(v, text);
	} else {
		cells = worker_output_summaries(v, NULL);
		worker_output_census(text, v);
	}
	json_object_object_add(sc, "cells", cells);
	json_object_object_add(sc, "cells_truncated",
	    json_object_new_boolean(n > WORKER_SUMMARY_CELLS));
	json_object_object_add(sc, "total_cells",
	    json_object_new_int64((int64_t)n));
	if (v != NULL && json_object_is_type(v, json_type_array))
		worker_output_stale(v, sc, text);
	worker_output_warnings(joined->warnings, sc, text);
	worker_output_conflicts(joined->conflicts, sc, text);
	json_object_object_add(sc, "cursor", worker_output_cursor(
	    worker_attach_room(h), joined->seq));
	json_object_object_add(sc, "readiness", json_object_new_string(
	    worker_output_readiness(joined->kernel_state)));
	json_object_object_add(sc, "resources",
	    worker_output_resources(worker_attach_id(h)));
	s = worker_output_take(text);
	worker_call_result(call, s, sc);
	free(s);
}

/*
 * A view of outputs that shares what it does not change: element i of
 * the view is o (taken), or outputs' own when o is NULL.  *view stays
 * NULL until an element is replaced, so the caller keeps outputs when
 * none was (the traceback and digest views).
 */
void
worker_output_view_put(struct json_object **view, struct json_object *outputs,
    size_t i, struct json_object *o)
{
	size_t	k;

	if (o == NULL) {
		if (*view != NULL)
			json_object_array_add(*view, json_object_get(
			    json_object_array_get_idx(outputs, i)));
		return;
	}
	if (*view == NULL) {
		*view = json_object_new_array();
		for (k = 0; k < i; k++)
			json_object_array_add(*view, json_object_get(
			    json_object_array_get_idx(outputs, k)));
	}
	json_object_array_add(*view, o);
}

/* A shallow copy of object o without key (NULL: with every key). */
struct json_object *
worker_output_copy_but(struct json_object *o, const char *key)
{
	struct json_object	*copy = json_object_new_object();

	json_object_object_foreach(o, k, v) {
		if (key == NULL || strcmp(k, key) != 0)
			json_object_object_add(copy, k, json_object_get(v));
	}
	return (copy);
}
