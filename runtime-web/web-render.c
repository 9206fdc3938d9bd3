/* SPDX-License-Identifier: ISC */
/*
 * web-render.c: one cell as HTML.  Notebook content never becomes markup
 * of the page: text is escaped (web-ansi.c), markdown goes through cmark
 * with raw HTML off (CMARK_OPT_SAFE: no HTML, no javascript: links),
 * images become data: URIs of base64 we checked (SVG too, never inline),
 * and text/html outputs are the srcdoc of an iframe sandboxed without
 * allow-scripts or allow-same-origin.
 */

#include <stdlib.h>
#include <string.h>

#include <cmark.h>
#include <openssl/evp.h>

#include "web.h"

static const msgpack_object *web_render_get(const msgpack_object *,
		    const char *);
static char	*web_render_text(const msgpack_object *, size_t *);
static void	web_render_markdown(struct evbuffer *, const char *, size_t);
static int	web_render_image(struct evbuffer *, const char *,
		    const msgpack_object *);
static void	web_render_svg(struct evbuffer *, const msgpack_object *);
static void	web_render_data(struct evbuffer *, const msgpack_object *);
static void	web_render_output(struct evbuffer *, const msgpack_object *);
static void	web_render_comments(struct evbuffer *, struct json_object *,
		    const char *);

static const msgpack_object *
web_render_get(const msgpack_object *o, const char *key)
{
	if (o == NULL || o->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	return (proto_get(o, key));
}

/*
 * A string, or an nbformat list of strings, as one string; NULL for
 * anything else (a blob reference).  Caller frees.
 */
static char *
web_render_text(const msgpack_object *o, size_t *lenp)
{
	struct evbuffer	*b;
	char		*s;
	size_t		 len;
	uint32_t	 i;

	*lenp = 0;
	if (o == NULL)
		return (NULL);
	if (o->type == MSGPACK_OBJECT_STR) {
		*lenp = o->via.str.size;
		s = xmalloc(o->via.str.size + 1);
		memcpy(s, o->via.str.ptr, o->via.str.size);
		s[o->via.str.size] = '\0';
		return (s);
	}
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return (NULL);
	b = evbuffer_new();
	for (i = 0; i < o->via.array.size; i++) {
		if (o->via.array.ptr[i].type == MSGPACK_OBJECT_STR)
			evbuffer_add(b, o->via.array.ptr[i].via.str.ptr,
			    o->via.array.ptr[i].via.str.size);
	}
	len = evbuffer_get_length(b);
	s = xmalloc(len + 1);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	evbuffer_free(b);
	*lenp = len;
	return (s);
}

static void
web_render_markdown(struct evbuffer *b, const char *s, size_t len)
{
	char	*html;

	html = cmark_markdown_to_html(s, len, CMARK_OPT_SAFE);
	WEB_ADD(b, "<div class=\"md\">");
	evbuffer_add(b, html, strlen(html));
	WEB_ADD(b, "</div>");
	free(html);
}

/* A PNG or JPEG: its base64, whitespace dropped, only if all base64. */
static int
web_render_image(struct evbuffer *b, const char *mime,
    const msgpack_object *v)
{
	char	*s;
	size_t	 len, i, j;

	if ((s = web_render_text(v, &len)) == NULL)
		return (-1);
	for (i = j = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' ||
		    s[i] == '\t')
			continue;
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789+/=", s[i]) == NULL || s[i] == '\0') {
			free(s);
			return (-1);
		}
		s[j++] = s[i];
	}
	if (j == 0) {
		free(s);
		return (-1);
	}
	evbuffer_add_printf(b, "<img class=\"out-img\" alt=\"%s\" src=\"data:"
	    "%s;base64,", mime, mime);
	evbuffer_add(b, s, j);
	WEB_ADD(b, "\">");
	free(s);
	return (0);
}

/* SVG as an image, so its script and links are inert. */
static void
web_render_svg(struct evbuffer *b, const msgpack_object *v)
{
	unsigned char	*out;
	char		*s;
	size_t		 len;
	int		 n;

	if ((s = web_render_text(v, &len)) == NULL || len > 64 * 1024 * 1024)
		goto out;
	out = xmalloc(4 * ((len + 2) / 3) + 1);
	n = EVP_EncodeBlock(out, (const unsigned char *)s, (int)len);
	WEB_ADD(b, "<img class=\"out-img\" alt=\"image/svg+xml\" "
	    "src=\"data:image/svg+xml;base64,");
	evbuffer_add(b, out, n);
	WEB_ADD(b, "\">");
	free(out);
out:
	free(s);
}

/* display_data and execute_result: the richest type we show. */
static void
web_render_data(struct evbuffer *b, const msgpack_object *data)
{
	const msgpack_object	*v;
	char			*s;
	size_t			 len;

	if ((v = web_render_get(data, "image/png")) != NULL &&
	    web_render_image(b, "image/png", v) == 0)
		return;
	if ((v = web_render_get(data, "image/jpeg")) != NULL &&
	    web_render_image(b, "image/jpeg", v) == 0)
		return;
	if ((v = web_render_get(data, "image/svg+xml")) != NULL &&
	    (s = web_render_text(v, &len)) != NULL) {
		free(s);
		web_render_svg(b, v);
		return;
	}
	if ((v = web_render_get(data, "text/html")) != NULL &&
	    (s = web_render_text(v, &len)) != NULL) {
		/* sandbox with no tokens: no script, an opaque origin. */
		WEB_ADD(b, "<iframe class=\"out-html\" sandbox "
		    "referrerpolicy=\"no-referrer\" srcdoc=\"");
		web_ansi_escape(b, s, len, 1);
		WEB_ADD(b, "\"></iframe>");
		free(s);
		return;
	}
	if ((v = web_render_get(data, "text/markdown")) != NULL &&
	    (s = web_render_text(v, &len)) != NULL) {
		web_render_markdown(b, s, len);
		free(s);
		return;
	}
	if ((v = web_render_get(data, "text/plain")) != NULL &&
	    (s = web_render_text(v, &len)) != NULL) {
		WEB_ADD(b, "<pre class=\"out-text\">");
		web_ansi_html(b, s, len);
		WEB_ADD(b, "</pre>");
		free(s);
		return;
	}
	WEB_ADD(b, "<div class=\"out-note\">(an output this page does "
	    "not show, or one kept in the blob store)</div>");
}

static void
web_render_output(struct evbuffer *b, const msgpack_object *o)
{
	const msgpack_object	*type, *v;
	char			*s;
	size_t			 len;
	uint32_t		 i;

	if ((type = web_render_get(o, "output_type")) == NULL ||
	    type->type != MSGPACK_OBJECT_STR)
		return;
	if (proto_obj_streq(type, "stream")) {
		v = web_render_get(o, "name");
		evbuffer_add_printf(b, "<pre class=\"out-stream %s\">",
		    v != NULL && proto_obj_streq(v, "stderr") ? "stderr" :
		    "stdout");
		if ((s = web_render_text(web_render_get(o, "text"),
		    &len)) != NULL) {
			web_ansi_html(b, s, len);
			free(s);
		}
		WEB_ADD(b, "</pre>");
	} else if (proto_obj_streq(type, "error")) {
		WEB_ADD(b, "<pre class=\"out-error\">");
		v = web_render_get(o, "traceback");
		if (v != NULL && v->type == MSGPACK_OBJECT_ARRAY &&
		    v->via.array.size > 0) {
			for (i = 0; i < v->via.array.size; i++) {
				if (v->via.array.ptr[i].type !=
				    MSGPACK_OBJECT_STR)
					continue;
				web_ansi_html(b,
				    v->via.array.ptr[i].via.str.ptr,
				    v->via.array.ptr[i].via.str.size);
				WEB_ADD(b, "\n");
			}
		} else {
			if ((s = web_render_text(web_render_get(o, "ename"),
			    &len)) != NULL) {
				web_ansi_escape(b, s, len, 0);
				free(s);
			}
			WEB_ADD(b, ": ");
			if ((s = web_render_text(web_render_get(o, "evalue"),
			    &len)) != NULL) {
				web_ansi_escape(b, s, len, 0);
				free(s);
			}
		}
		WEB_ADD(b, "</pre>");
	} else
		web_render_data(b, web_render_get(o, "data"));
}

/* The comment threads anchored to this cell. */
static void
web_render_comments(struct evbuffer *b, struct json_object *threads,
    const char *cell_id)
{
	struct json_object	*t, *a, *cid, *cs, *c, *v;
	size_t			 i, j;
	const char		*s;

	for (i = 0; threads != NULL && i < json_object_array_length(threads);
	    i++) {
		t = json_object_array_get_idx(threads, i);
		if (!json_object_is_type(t, json_type_object) ||
		    !json_object_object_get_ex(t, "anchor", &a) ||
		    !json_object_object_get_ex(a, "cell_id", &cid) ||
		    !json_object_is_type(cid, json_type_string) ||
		    strcmp(json_object_get_string(cid), cell_id) != 0)
			continue;
		v = json_object_object_get(t, "resolved");
		evbuffer_add_printf(b, "<div class=\"thread%s\">",
		    json_object_get_boolean(v) ? " resolved" : "");
		cs = json_object_object_get(t, "comments");
		for (j = 0; cs != NULL && json_object_is_type(cs,
		    json_type_array) && j < json_object_array_length(cs);
		    j++) {
			c = json_object_array_get_idx(cs, j);
			WEB_ADD(b, "<div class=\"comment\"><b>");
			s = json_object_get_string(json_object_object_get(c,
			    "author"));
			if (s != NULL)
				web_ansi_escape(b, s, strlen(s), 0);
			WEB_ADD(b, "</b> ");
			s = json_object_get_string(json_object_object_get(c,
			    "body"));
			if (s != NULL)
				web_ansi_escape(b, s, strlen(s), 0);
			WEB_ADD(b, "</div>");
		}
		WEB_ADD(b, "</div>");
	}
}

/* The comment threads of notebook metadata, or NULL.  Caller puts. */
struct json_object *
web_render_threads(const msgpack_object *metadata)
{
	const msgpack_object	*rt, *cs;

	if ((rt = web_render_get(metadata, "runtimed")) == NULL ||
	    (cs = web_render_get(rt, "comments")) == NULL ||
	    cs->type != MSGPACK_OBJECT_ARRAY)
		return (NULL);
	return (mpjson_unpack(cs));
}

/* One cell of ROOM_CONTENT as a <section>. */
void
web_render_cell(struct evbuffer *b, const msgpack_object *cell,
    struct json_object *threads)
{
	const msgpack_object	*v, *outs;
	char			*id, *src;
	size_t			 len;
	uint32_t		 i;
	int			 md, code;

	if ((v = web_render_get(cell, "cell_id")) == NULL ||
	    v->type != MSGPACK_OBJECT_STR)
		return;
	id = xstrndup(v->via.str.ptr, v->via.str.size);
	v = web_render_get(cell, "cell_type");
	md = v != NULL && proto_obj_streq(v, "markdown");
	code = v != NULL && proto_obj_streq(v, "code");
	evbuffer_add_printf(b, "<section class=\"cell %s\" data-id=\"",
	    md ? "cell-md" : code ? "cell-code" : "cell-raw");
	web_ansi_escape(b, id, strlen(id), 1);
	WEB_ADD(b, "\"><div class=\"gutter\">");
	v = web_render_get(cell, "execution_count");
	if (code && v != NULL && (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER))
		evbuffer_add_printf(b, "[%llu]",
		    (unsigned long long)v->via.u64);
	else if (code)
		WEB_ADD(b, "[ ]");
	WEB_ADD(b, "</div><div class=\"body\">");
	src = web_render_text(web_render_get(cell, "source"), &len);
	if (md && src != NULL)
		web_render_markdown(b, src, len);
	else {
		WEB_ADD(b, "<pre class=\"source\">");
		if (src != NULL)
			web_ansi_escape(b, src, len, 0);
		WEB_ADD(b, "</pre>");
	}
	free(src);
	outs = web_render_get(cell, "outputs");
	if (outs != NULL && outs->type == MSGPACK_OBJECT_ARRAY &&
	    outs->via.array.size > 0) {
		WEB_ADD(b, "<div class=\"outputs\">");
		for (i = 0; i < outs->via.array.size; i++)
			web_render_output(b, &outs->via.array.ptr[i]);
		WEB_ADD(b, "</div>");
	}
	WEB_ADD(b, "<div class=\"threads\">");
	web_render_comments(b, threads, id);
	WEB_ADD(b, "</div><button class=\"comment-btn\" data-cell=\"");
	web_ansi_escape(b, id, strlen(id), 1);
	WEB_ADD(b, "\">Comment</button></div></section>");
	free(id);
}
