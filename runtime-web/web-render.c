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
#include <time.h>

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
static void	web_render_where(struct evbuffer *, const msgpack_object *);
static void	web_render_comments(struct evbuffer *, struct json_object *,
		    const char *);
static void	web_render_button(struct evbuffer *, const char *,
		    const char *, const char *, const char *);
static void	web_render_by(struct evbuffer *, const msgpack_object *);
static void	web_render_ids(struct evbuffer *, const msgpack_object *);
static void	web_render_pre(struct evbuffer *, const char *, const char *,
		    size_t);

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
		web_render_where(b, web_render_get(web_render_get(o,
		    "transient"), "runtimed_traceback"));
	} else
		web_render_data(b, web_render_get(o, "data"));
}

/*
 * Where an error was raised, from the frames the agent mapped to cells
 * (docs/decisions/070): innermost first, each cell a link to it.
 */
static void
web_render_where(struct evbuffer *b, const msgpack_object *rt)
{
	const msgpack_object	*frames, *f, *id, *v;
	uint32_t		 i;
	int			 k = 0;

	if ((frames = web_render_get(rt, "frames")) == NULL ||
	    frames->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (i = frames->via.array.size; i-- > 0;) {
		f = &frames->via.array.ptr[i];
		if ((id = web_render_get(f, "cell_id")) == NULL ||
		    id->type != MSGPACK_OBJECT_STR ||
		    ((v = web_render_get(f, "chained")) != NULL &&
		    v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean))
			continue;
		if (k++ == 0)
			WEB_ADD(b, "<div class=\"out-where\">at ");
		else
			WEB_ADD(b, ", called from ");
		WEB_ADD(b, "<a href=\"#cell-");
		web_ansi_escape(b, id->via.str.ptr, id->via.str.size, 1);
		WEB_ADD(b, "\">cell ");
		web_ansi_escape(b, id->via.str.ptr, id->via.str.size, 0);
		WEB_ADD(b, "</a>");
		if ((v = web_render_get(f, "line")) != NULL &&
		    v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			evbuffer_add_printf(b, " line %llu",
			    (unsigned long long)v->via.u64);
		if ((v = web_render_get(f, "name")) != NULL &&
		    v->type == MSGPACK_OBJECT_STR) {
			WEB_ADD(b, " in ");
			web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 0);
		}
	}
	if (k > 0)
		WEB_ADD(b, "</div>");
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
	/* id: what a traceback's "at cell" links to. */
	evbuffer_add_printf(b, "<section class=\"cell %s\" id=\"cell-",
	    md ? "cell-md" : code ? "cell-code" : "cell-raw");
	web_ansi_escape(b, id, strlen(id), 1);
	WEB_ADD(b, "\" data-id=\"");
	web_ansi_escape(b, id, strlen(id), 1);
	/* What the page's editor starts from, and the version it guards. */
	WEB_ADD(b, "\" data-version=\"");
	if ((v = web_render_get(cell, "version")) != NULL &&
	    v->type == MSGPACK_OBJECT_STR)
		web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 1);
	WEB_ADD(b, "\" data-src=\"");
	src = web_render_text(web_render_get(cell, "source"), &len);
	if (src != NULL)
		web_ansi_escape(b, src, len, 1);
	WEB_ADD(b, "\"><div class=\"gutter\">");
	v = web_render_get(cell, "execution_count");
	if (code && v != NULL && (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER))
		evbuffer_add_printf(b, "[%llu]",
		    (unsigned long long)v->via.u64);
	else if (code)
		WEB_ADD(b, "[ ]");
	web_render_by(b, web_render_get(cell, "by"));
	WEB_ADD(b, "</div><div class=\"body\">");
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
	WEB_ADD(b, "</div><div class=\"acts\">");
	web_render_button(b, "comment-btn", NULL, id, "Comment");
	web_render_button(b, "act", "edit", id, "Edit");
	if (code)
		web_render_button(b, "act", "run", id, "Run");
	web_render_button(b, "act", "insert", id, "Add cell below");
	WEB_ADD(b, "</div></div></section>");
	free(id);
}

/*
 * Who last changed the cell's source or made it (issue 39): a client
 * (its session in the title), "disk" for the file's editor, or nothing.
 */
static void
web_render_by(struct evbuffer *b, const msgpack_object *by)
{
	const msgpack_object	*v, *s;
	int			 disk;

	if (by == NULL || by->type != MSGPACK_OBJECT_MAP)
		return;
	if (proto_get_bool(by, "disk", &disk) == 0 && disk) {
		WEB_ADD(b, "<div class=\"by\" data-by=\"disk\" title=\"last "
		    "changed in the file, by its editor\">on disk</div>");
		return;
	}
	if ((v = proto_get(by, "client")) == NULL ||
	    v->type != MSGPACK_OBJECT_STR)
		return;
	WEB_ADD(b, "<div class=\"by\" data-by=\"");
	web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 1);
	WEB_ADD(b, "\" title=\"last changed by ");
	web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 1);
	if ((s = proto_get(by, "session")) != NULL &&
	    s->type == MSGPACK_OBJECT_STR) {
		WEB_ADD(b, ", session ");
		web_ansi_escape(b, s->via.str.ptr, s->via.str.size, 1);
	}
	WEB_ADD(b, "\">");
	web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 0);
	WEB_ADD(b, "</div>");
}

/* A button of a cell: class, data-act (when act), data-cell. */
static void
web_render_button(struct evbuffer *b, const char *class, const char *act,
    const char *id, const char *label)
{
	evbuffer_add_printf(b, "<button type=\"button\" class=\"%s\"", class);
	if (act != NULL)
		evbuffer_add_printf(b, " data-act=\"%s\"", act);
	WEB_ADD(b, " data-cell=\"");
	web_ansi_escape(b, id, strlen(id), 1);
	evbuffer_add_printf(b, "\">%s</button>", label);
}

/* A source for a <pre>: the parser drops a first newline, so add one. */
static void
web_render_pre(struct evbuffer *b, const char *class, const char *s,
    size_t len)
{
	evbuffer_add_printf(b, "<pre class=\"%s\">\n", class);
	if (s != NULL)
		web_ansi_escape(b, s, len, 0);
	WEB_ADD(b, "</pre>");
}

/*
 * ROOM_CONTENT's conflicts with the file (decision 056), each with both
 * versions and the three ways to end it (decision 079): this notebook's
 * cell from cells, the file's from the conflict (capped by the daemon).
 */
void
web_render_conflicts(struct evbuffer *b, const msgpack_object *conflicts,
    const msgpack_object *cells)
{
	const msgpack_object	*c, *v, *disk, *room;
	const char		*what, *keep, *take;
	char			*id, *s;
	size_t			 len;
	uint32_t		 i, j;

	WEB_ADD(b, "<h2>Changed here and in the file</h2>");
	for (i = 0; i < conflicts->via.array.size; i++) {
		c = &conflicts->via.array.ptr[i];
		if ((v = web_render_get(c, "cell_id")) == NULL ||
		    v->type != MSGPACK_OBJECT_STR)
			continue;
		id = xstrndup(v->via.str.ptr, v->via.str.size);
		room = NULL;
		for (j = 0; cells != NULL && cells->type ==
		    MSGPACK_OBJECT_ARRAY && j < cells->via.array.size; j++) {
			v = web_render_get(&cells->via.array.ptr[j], "cell_id");
			if (v != NULL && v->type == MSGPACK_OBJECT_STR &&
			    v->via.str.size == strlen(id) &&
			    memcmp(v->via.str.ptr, id, strlen(id)) == 0)
				room = &cells->via.array.ptr[j];
		}
		disk = web_render_get(c, "disk");
		if (disk != NULL && disk->type != MSGPACK_OBJECT_MAP)
			disk = NULL;
		v = web_render_get(c, "kind");
		if (v != NULL && proto_obj_streq(v, "deleted_on_disk")) {
			what = "the file deleted this cell; it was changed here";
			keep = "Keep the cell";
			take = "Delete it, as the file did";
		} else if (v != NULL && proto_obj_streq(v, "deleted_in_room")) {
			what = "this cell was deleted here; the file changed it";
			keep = "Leave it deleted";
			take = "Bring back the file's cell";
		} else {
			what = "changed here and in the file";
			keep = "Keep this notebook's";
			take = "Take the file's";
		}
		WEB_ADD(b, "<div class=\"conflict\" data-cell=\"");
		web_ansi_escape(b, id, strlen(id), 1);
		WEB_ADD(b, "\"><div>Cell <code>");
		web_ansi_escape(b, id, strlen(id), 0);
		evbuffer_add_printf(b, "</code>: %s</div><div class=\"both\">"
		    "<div class=\"side room\"><b>This notebook</b>", what);
		if (room != NULL) {
			s = web_render_text(web_render_get(room, "source"),
			    &len);
			web_render_pre(b, "source", s, len);
			free(s);
		} else
			WEB_ADD(b, "<div class=\"out-note\">(deleted)</div>");
		WEB_ADD(b, "</div><div class=\"side disk\"><b>The file</b>");
		if (disk != NULL) {
			s = web_render_text(web_render_get(disk, "source"),
			    &len);
			web_render_pre(b, "source", s, len);
			free(s);
			if ((v = web_render_get(disk, "source_truncated")) !=
			    NULL && v->type == MSGPACK_OBJECT_BOOLEAN &&
			    v->via.boolean)
				WEB_ADD(b, "<div class=\"out-note\">(its first "
				    "2,000 characters)</div>");
		} else
			WEB_ADD(b, "<div class=\"out-note\">(deleted)</div>");
		WEB_ADD(b, "</div></div>");
		web_render_button(b, "resolve", "room", id, keep);
		web_render_button(b, "resolve", "disk", id, take);
		if (room != NULL && disk != NULL)
			web_render_button(b, "resolve", "both", id,
			    "Keep both");
		WEB_ADD(b, "</div>");
		free(id);
	}
}

/* A list of batch numbers, " b1 b2", from an array of them. */
static void
web_render_ids(struct evbuffer *b, const msgpack_object *a)
{
	uint32_t	i;

	for (i = 0; a != NULL && a->type == MSGPACK_OBJECT_ARRAY &&
	    i < a->via.array.size; i++) {
		if (a->via.array.ptr[i].type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			evbuffer_add_printf(b, " b%llu", (unsigned long long)
			    a->via.array.ptr[i].via.u64);
	}
}

/*
 * The notebook's edit batches, newest first, as an undo list gives them
 * ([{batch_id, at, client?, cells, reverts?, undone_by?, lost?}]), each
 * with who made it, its cells, and a Revert button unless it is undone
 * already or was too large to keep (decision 085).
 */
void
web_render_batches(struct evbuffer *b, const msgpack_object *batches)
{
	const msgpack_object	*o, *v, *cells;
	struct tm		 tm;
	time_t			 t;
	char			 when[32];
	uint64_t		 id;
	uint32_t		 i, j, n;
	int			 undone, lost;

	if (batches == NULL || batches->type != MSGPACK_OBJECT_ARRAY)
		return;
	n = batches->via.array.size;
	evbuffer_add_printf(b, "<ol class=\"batches\" data-count=\"%u\">", n);
	for (i = 0; i < n; i++) {
		o = &batches->via.array.ptr[i];
		if ((v = web_render_get(o, "batch_id")) == NULL ||
		    v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			continue;
		id = v->via.u64;
		undone = web_render_get(o, "undone_by") != NULL;
		v = web_render_get(o, "lost");
		lost = v != NULL && v->type == MSGPACK_OBJECT_BOOLEAN &&
		    v->via.boolean;
		evbuffer_add_printf(b, "<li class=\"batch%s\" data-batch=\"%llu\">"
		    "<b>b%llu</b> <span class=\"who\">", undone ? " undone" : "",
		    (unsigned long long)id, (unsigned long long)id);
		if ((v = web_render_get(o, "client")) != NULL &&
		    v->type == MSGPACK_OBJECT_STR)
			web_ansi_escape(b, v->via.str.ptr, v->via.str.size, 0);
		else
			WEB_ADD(b, "a client");
		WEB_ADD(b, "</span>");
		if ((v = web_render_get(o, "at")) != NULL &&
		    v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
			t = (time_t)(v->via.u64 / 1000);
			gmtime_r(&t, &tm);
			strftime(when, sizeof when, "%H:%M:%S UTC", &tm);
			evbuffer_add_printf(b, " at %s", when);
		}
		cells = web_render_get(o, "cells");
		if (cells != NULL && cells->type == MSGPACK_OBJECT_ARRAY) {
			evbuffer_add_printf(b, ", %u cell%s:",
			    cells->via.array.size,
			    cells->via.array.size == 1 ? "" : "s");
			for (j = 0; j < cells->via.array.size && j < 8; j++) {
				v = &cells->via.array.ptr[j];
				if (v->type != MSGPACK_OBJECT_STR)
					continue;
				WEB_ADD(b, " <code>");
				web_ansi_escape(b, v->via.str.ptr,
				    v->via.str.size, 0);
				WEB_ADD(b, "</code>");
			}
			if (cells->via.array.size > 8)
				WEB_ADD(b, " ...");
		}
		if ((v = web_render_get(o, "reverts")) != NULL &&
		    v->type == MSGPACK_OBJECT_ARRAY && v->via.array.size > 0) {
			WEB_ADD(b, "; reverts");
			web_render_ids(b, v);
		}
		if ((v = web_render_get(o, "undone_by")) != NULL &&
		    v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			evbuffer_add_printf(b, "; undone by b%llu",
			    (unsigned long long)v->via.u64);
		if (lost)
			WEB_ADD(b, "; too large to revert");
		if (!undone && !lost)
			evbuffer_add_printf(b, " <button type=\"button\" "
			    "class=\"revert\" data-batch=\"%llu\">Revert</button>",
			    (unsigned long long)id);
		WEB_ADD(b, "</li>");
	}
	WEB_ADD(b, "</ol>");
}
