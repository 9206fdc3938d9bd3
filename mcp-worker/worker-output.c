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

static char	*worker_output_join(struct json_object *, size_t *);
static size_t	worker_output_fit(const char *, size_t, size_t);
static void	worker_output_charge(struct worker_budget *, size_t *, size_t);
static struct json_object	*worker_output_text(struct json_object *,
		    struct worker_budget *, size_t *, struct evbuffer *, int *);
static void	worker_output_image(struct worker_call *,
		    struct worker_budget *, const char *, struct json_object *,
		    struct evbuffer *);
static int	worker_output_is_image(const char *);
static struct json_object	*worker_output_bundle(struct json_object *,
		    struct worker_budget *, size_t *, struct evbuffer *, int *,
		    struct worker_call *);
static const char	*worker_output_str(struct json_object *, const char *,
		    const char *);
static void	worker_output_warnings(struct json_object *,
		    struct json_object *, struct evbuffer *);
static int	worker_output_known_type(const char *);
static struct json_object	*worker_output_summaries(struct json_object *,
		    struct evbuffer *);
static struct json_object	*worker_output_resources(const char *);

void
worker_budget_init(struct worker_budget *b, int full)
{
	b->cell_cap = WORKER_CELL_CAP;
	b->result_left = WORKER_RESULT_CAP;
	b->full = full;
	b->images = 0;
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
static char *
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

/* How much of len bytes fits in left, cut on a UTF-8 boundary. */
static size_t
worker_output_fit(const char *s, size_t len, size_t left)
{
	size_t	n;

	if (len <= left)
		return (len);
	n = left;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (n);
}

/* Charge n bytes to the cell and the result. */
static void
worker_output_charge(struct worker_budget *b, size_t *cell_left, size_t n)
{
	*cell_left -= n;
	b->result_left -= n;
}

/* A capped copy of a text value; the model sees it ANSI-stripped. */
static struct json_object *
worker_output_text(struct json_object *v, struct worker_budget *b,
    size_t *cell_left, struct evbuffer *text, int *truncated)
{
	char	*s, *clean;
	size_t	 len, n, clen;
	struct json_object *out;
	const char *sha;
	int64_t	 size;

	if (worker_blob_is_ref(v, &sha, &size)) {
		/* Kept in the daemon's blob store: say so, keep the ref. */
		*truncated = 1;
		if (text != NULL)
			evbuffer_add_printf(text, "[%lld bytes omitted (blob "
			    "%.12s); full_output=true fetches them]\n",
			    (long long)size, sha);
		return (json_object_get(v));
	}
	s = worker_output_join(v, &len);
	n = b->full ? len : worker_output_fit(s, len, *cell_left);
	if (n < len)
		*truncated = 1;
	if (!b->full)
		worker_output_charge(b, cell_left, n);
	out = json_object_new_string_len(s, (int)n);
	if (text != NULL) {
		clean = worker_output_strip_ansi(s, n, &clen);
		evbuffer_add(text, clean, clen);
		if (clen > 0 && clean[clen - 1] != '\n')
			evbuffer_add(text, "\n", 1);
		if (n < len)
			evbuffer_add_printf(text, "[... %zu more bytes "
			    "truncated]\n", len - n);
		free(clean);
	}
	free(s);
	return (out);
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
	len = k;
	evbuffer_add_printf(text, "[%s image, %zu bytes base64]\n", mime,
	    len);
	if (call != NULL && b->images < WORKER_MAX_IMAGES &&
	    len <= WORKER_MAX_IMAGE_B64 && len > 0) {
		blk = json_object_new_object();
		json_object_object_add(blk, "type",
		    json_object_new_string("image"));
		json_object_object_add(blk, "data",
		    json_object_new_string_len(s, (int)len));
		json_object_object_add(blk, "mimeType",
		    json_object_new_string(mime));
		worker_call_add_content(call, blk);
		b->images++;
	}
	free(s);
}

static int
worker_output_is_image(const char *mime)
{
	return (strcmp(mime, "image/png") == 0 ||
	    strcmp(mime, "image/jpeg") == 0 || strcmp(mime, "image/gif") == 0);
}

/* A display_data / execute_result mime bundle. */
static struct json_object *
worker_output_bundle(struct json_object *data, struct worker_budget *b,
    size_t *cell_left, struct evbuffer *text, int *truncated,
    struct worker_call *call)
{
	struct json_object_iterator	 it, end;
	struct json_object		*out, *v, *plain = NULL;
	const char			*mime, *fallback = NULL, *fallback_sha;
	int64_t				 blob_size;
	char				*note;
	size_t				 len;

	out = json_object_new_object();
	if (data == NULL || !json_object_is_type(data, json_type_object))
		return (out);
	json_object_object_get_ex(data, "text/plain", &plain);
	if (plain != NULL)
		json_object_object_add(out, "text/plain", worker_output_text(
		    plain, b, cell_left, text, truncated));

	it = json_object_iter_begin(data);
	end = json_object_iter_end(data);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		mime = json_object_iter_peek_name(&it);
		v = json_object_iter_peek_value(&it);
		if (strcmp(mime, "text/plain") == 0)
			continue;
		if (worker_blob_is_ref(v, &fallback_sha, &blob_size)) {
			json_object_object_add(out, mime, json_object_get(v));
			evbuffer_add_printf(text, "[%s: %lld bytes omitted "
			    "(blob %.12s); full_output=true fetches them]\n",
			    mime, (long long)blob_size, fallback_sha);
			*truncated = 1;
			continue;
		}
		if (strcmp(mime, "image/svg+xml") == 0) {
			/* SVG is text: the model gets it as text. */
			json_object_object_add(out, mime, worker_output_text(v,
			    b, cell_left, text, truncated));
			continue;
		}
		if (worker_output_is_image(mime)) {
			worker_output_image(call, b, mime, v, text);
			if (b->full)
				json_object_object_add(out, mime,
				    json_object_get(v));
			else {
				free(worker_output_join(v, &len));
				xasprintf(&note, "[%zu bytes base64 omitted; "
				    "get_results full_output=true has it]",
				    len);
				json_object_object_add(out, mime,
				    json_object_new_string(note));
				free(note);
				*truncated = 1;
			}
			continue;
		}
		if (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_array)) {
			/* The model gets text/plain, else the first text. */
			json_object_object_add(out, mime, worker_output_text(v,
			    b, cell_left, plain == NULL && fallback == NULL ?
			    text : NULL, truncated));
			if (fallback == NULL)
				fallback = mime;
			continue;
		}
		/* application/json and friends: whole if they fit. */
		len = strlen(json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN));
		if (b->full || len <= *cell_left) {
			if (!b->full)
				worker_output_charge(b, cell_left, len);
			json_object_object_add(out, mime, json_object_get(v));
		} else
			*truncated = 1;
		if (plain == NULL && fallback == NULL) {
			evbuffer_add_printf(text, "[%s output]\n", mime);
			fallback = mime;
		}
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
	struct json_object		*arr, *o, *copy, *v, *tb;
	const char			*type, *key;
	size_t				 i, k, cell_left, dropped = 0, n;

	arr = json_object_new_array();
	*truncated = 0;
	if (outputs == NULL || !json_object_is_type(outputs, json_type_array))
		return (arr);
	cell_left = b->cell_cap < b->result_left ? b->cell_cap :
	    b->result_left;
	n = json_object_array_length(outputs);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(outputs, i);
		if (!json_object_is_type(o, json_type_object))
			continue;
		if (!b->full && cell_left == 0) {
			dropped = n - i;
			*truncated = 1;
			break;
		}
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
			json_object_object_add(copy, key, json_object_get(v));
		}
		if (strcmp(type, "stream") == 0) {
			json_object_object_add(copy, "text",
			    worker_output_text(json_object_object_get(o,
			    "text"), b, &cell_left, text, truncated));
		} else if (strcmp(type, "error") == 0) {
			tb = json_object_object_get(o, "traceback");
			v = json_object_new_array();
			for (k = 0; tb != NULL &&
			    json_object_is_type(tb, json_type_array) &&
			    k < json_object_array_length(tb); k++) {
				if (!b->full && cell_left == 0) {
					*truncated = 1;
					break;
				}
				json_object_array_add(v, worker_output_text(
				    json_object_array_get_idx(tb, k), b,
				    &cell_left, text, truncated));
			}
			if (k == 0)
				evbuffer_add_printf(text, "%s: %s\n",
				    json_object_get_string(
				    json_object_object_get(o, "ename")),
				    json_object_get_string(
				    json_object_object_get(o, "evalue")));
			json_object_object_add(copy, "traceback", v);
		} else {
			json_object_object_add(copy, "data",
			    worker_output_bundle(json_object_object_get(o,
			    "data"), b, &cell_left, text, truncated, call));
		}
		json_object_array_add(arr, copy);
	}
	if (dropped > 0)
		evbuffer_add_printf(text, "[... %zu more outputs truncated]\n",
		    dropped);
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

/* The first line of a source, at most max bytes. */
void
worker_output_preview(struct evbuffer *text, const char *s, size_t len,
    size_t max)
{
	const char	*nl;
	size_t		 n;

	nl = memchr(s, '\n', len);
	n = nl != NULL ? (size_t)(nl - s) : len;
	if (n > max)
		n = worker_output_fit(s, n, max);
	evbuffer_add(text, s, n);
	if (n < len)
		evbuffer_add(text, " ...", 4);
}

int
worker_output_terminal(const char *status)
{
	enum proto_run_status	st;

	if (status == NULL ||
	    proto_run_status_parse(status, strlen(status), &st) != 0)
		return (0);
	return (proto_run_status_ended(st));
}

static const char *
worker_output_str(struct json_object *o, const char *key, const char *def)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return (def);
	return (json_object_get_string(v));
}

/*
 * EXEC_STATE -> the run result of docs/tools.md: execution_id,
 * status, cells with status, execution_count, source, outputs, truncated.
 */
struct json_object *
worker_output_exec(const struct worker_exec *state, struct worker_budget *b,
    struct evbuffer *text, struct worker_call *call)
{
	struct json_object	*sc, *cells, *cell, *c, *v;
	const char		*status, *cstatus, *src;
	size_t			 i, n, srclen;
	int			 trunc, any_trunc = 0;

	sc = json_object_new_object();
	status = state->status;
	json_object_object_add(sc, "execution_id",
	    json_object_new_string(state->execution_id));
	json_object_object_add(sc, "status", json_object_new_string(status));
	evbuffer_add_printf(text, "execution_id %s: %s\n",
	    *state->execution_id != '\0' ? state->execution_id : "?", status);

	cells = json_object_new_array();
	v = state->cells;
	n = v != NULL && json_object_is_type(v, json_type_array) ?
	    json_object_array_length(v) : 0;
	for (i = 0; i < n; i++) {
		cell = json_object_array_get_idx(v, i);
		cstatus = worker_output_str(cell, "status",
		    proto_cell_status_name(PROTO_CELL_QUEUED));
		c = json_object_new_object();
		json_object_object_add(c, "cell_id", json_object_new_string(
		    worker_output_str(cell, "cell_id", "")));
		json_object_object_add(c, "status",
		    json_object_new_string(cstatus));
		json_object_object_add(c, "execution_count", json_object_get(
		    json_object_object_get(cell, "execution_count")));
		src = worker_output_source(cell, &srclen);
		json_object_object_add(c, "source",
		    json_object_new_string_len(src, (int)srclen));
		evbuffer_add_printf(text, "--- cell %s: %s",
		    worker_output_str(cell, "cell_id", "?"), cstatus);
		if (json_object_is_type(json_object_object_get(cell,
		    "execution_count"), json_type_int))
			evbuffer_add_printf(text, " [%lld]", (long long)
			    json_object_get_int64(json_object_object_get(cell,
			    "execution_count")));
		evbuffer_add(text, "\n", 1);
		json_object_object_add(c, "outputs", worker_output_cap(
		    json_object_object_get(cell, "outputs"), b, text, &trunc,
		    call));
		json_object_object_add(c, "truncated",
		    json_object_new_boolean(trunc));
		any_trunc |= trunc;
		json_object_array_add(cells, c);
	}
	json_object_object_add(sc, "cells", cells);
	json_object_object_add(sc, "truncated",
	    json_object_new_boolean(any_trunc));
	if (!worker_output_terminal(status))
		evbuffer_add_printf(text, "(still %s: call get_results with "
		    "this execution_id and timeout_secs to wait)\n", status);
	return (sc);
}

/* Is this a cell_type runtimed runs and edits (not a newer format's)? */
static int
worker_output_known_type(const char *type)
{
	return (strcmp(type, "code") == 0 || strcmp(type, "markdown") == 0 ||
	    strcmp(type, "raw") == 0);
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
		    worker_output_str(v, "message", "?"),
		    worker_output_str(v, "on_save", "keeps it as it is"));
	}
	if (n > WORKER_SUMMARY_WARNINGS)
		evbuffer_add_printf(text, "- (%zu more)\n",
		    n - WORKER_SUMMARY_WARNINGS);
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
		type = worker_output_str(cell, "cell_type", "code");
		c = json_object_new_object();
		json_object_object_add(c, "cell_id", json_object_new_string(
		    worker_output_str(cell, "cell_id", "")));
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
			    i, worker_output_str(cell, "cell_id", "?"), type,
			    worker_output_known_type(type) ? "" :
			    " (unknown type: not runnable; replace whole, move "
			    "or delete)");
			if (json_object_is_type(ec, json_type_int))
				evbuffer_add_printf(text, " [%lld]",
				    (long long)json_object_get_int64(ec));
			evbuffer_add_printf(text, ": %s\n", p);
		}
		free(p);
		json_object_array_add(arr, c);
	}
	return (arr);
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

/* The text gathered in b as a string; frees b.  Caller frees. */
char *
worker_output_take(struct evbuffer *b)
{
	size_t	 len;
	char	*s;

	len = evbuffer_get_length(b);
	s = xmalloc(len + 1);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	evbuffer_free(b);
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
	    worker_output_str(k, "name", "")));
	json_object_object_add(out, "state", json_object_new_string(
	    worker_output_str(k, "state", "none")));
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
		return ("kernel_unavailable");
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
	evbuffer_add_printf(text, "notebook_handle: %s\nnotebook_id: %s\n"
	    "path: %s\nkernel: %s (%s)\n", worker_attach_id(h),
	    worker_attach_notebook_id(h), path != NULL ? path : "(untitled)",
	    worker_output_str(kernel, "name", ""),
	    worker_output_str(kernel, "state", ""));
	json_object_object_add(sc, "kernel", kernel);
	json_object_object_add(sc, "dirty",
	    json_object_new_boolean(joined->dirty));
	v = joined->cells;
	n = v != NULL && json_object_is_type(v, json_type_array) ?
	    json_object_array_length(v) : 0;
	evbuffer_add_printf(text, "%zu cells%s\n", n, n > 0 ? ":" : "");
	cells = worker_output_summaries(v, text);
	json_object_object_add(sc, "cells", cells);
	json_object_object_add(sc, "cells_truncated",
	    json_object_new_boolean(n > WORKER_SUMMARY_CELLS));
	if (n > WORKER_SUMMARY_CELLS)
		evbuffer_add_printf(text, "(first %d of %zu cells; "
		    "inspect_notebook with start/count shows the rest)\n",
		    WORKER_SUMMARY_CELLS, n);
	json_object_object_add(sc, "total_cells",
	    json_object_new_int64((int64_t)n));
	worker_output_warnings(joined->warnings, sc, text);
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
