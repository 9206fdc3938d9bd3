/* SPDX-License-Identifier: ISC */
/*
 * tool-export-notebook.c: the notebook as Markdown, a Python script or
 * one self-contained HTML page (images inline as data: URIs), close to
 * what `jupyter nbconvert --to markdown|python|html` gives.  Written to
 * path (atomically) when given, answering its path and size only; else
 * returned inline within the result cap, truncation flagged, with each
 * image replaced by a line naming its cell (decision 017).
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

enum tool_export_format {
	TOOL_EXPORT_MARKDOWN,
	TOOL_EXPORT_PYTHON,
	TOOL_EXPORT_HTML,
};

static const char	*tool_export_notebook_str(struct json_object *,
		    const char *);
static void	tool_export_notebook_join(struct evbuffer *,
		    struct json_object *);
static char	*tool_export_notebook_text(struct json_object *, size_t *);
static void	tool_export_notebook_escape(struct evbuffer *, const char *,
		    size_t);
static void	tool_export_notebook_inline(struct evbuffer *, const char *,
		    size_t);
static void	tool_export_notebook_md_html(struct evbuffer *, const char *,
		    size_t);
static void	tool_export_notebook_output(struct evbuffer *,
		    struct json_object *, enum tool_export_format,
		    const char *, size_t *);
static void	tool_export_notebook_omit(struct evbuffer *,
		    enum tool_export_format, const char *, const char *);
static int	tool_export_notebook_write(const char *, int, const char *,
		    size_t, const char **, char **);
static void	tool_export_notebook_finish(void *);
static void	tool_export_notebook_content(struct worker_call *,
		    struct worker_room *, struct worker_nb *);
static void	tool_export_notebook(struct worker_call *);

static const char *
tool_export_notebook_str(struct json_object *o, const char *key)
{
	return (json_object_get_string(json_object_object_get(o, key)));
}

/* nbformat multiline text (string or list) appended to b. */
static void
tool_export_notebook_join(struct evbuffer *b, struct json_object *v)
{
	size_t	i;

	if (v == NULL)
		return;
	if (json_object_is_type(v, json_type_string)) {
		evbuffer_add(b, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
		return;
	}
	if (!json_object_is_type(v, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(v); i++)
		tool_export_notebook_join(b, json_object_array_get_idx(v, i));
}

static char *
tool_export_notebook_text(struct json_object *v, size_t *len)
{
	struct evbuffer	*b;
	char		*s;

	b = evbuffer_new();
	tool_export_notebook_join(b, v);
	*len = evbuffer_get_length(b);
	s = xmalloc(*len + 1);
	evbuffer_remove(b, s, *len);
	s[*len] = '\0';
	evbuffer_free(b);
	return (s);
}

static void
tool_export_notebook_escape(struct evbuffer *b, const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '<':
			evbuffer_add(b, "&lt;", 4);
			break;
		case '>':
			evbuffer_add(b, "&gt;", 4);
			break;
		case '&':
			evbuffer_add(b, "&amp;", 5);
			break;
		case '"':
			evbuffer_add(b, "&quot;", 6);
			break;
		default:
			evbuffer_add(b, s + i, 1);
			break;
		}
	}
}

/* Inline Markdown: `code`, **bold**, *em*, escaped otherwise. */
static void
tool_export_notebook_inline(struct evbuffer *b, const char *s, size_t len)
{
	const char	*end;
	size_t		 i = 0;

	while (i < len) {
		if (s[i] == '`' && (end = memchr(s + i + 1, '`',
		    len - i - 1)) != NULL) {
			evbuffer_add(b, "<code>", 6);
			tool_export_notebook_escape(b, s + i + 1,
			    (size_t)(end - s - i - 1));
			evbuffer_add(b, "</code>", 7);
			i = (size_t)(end - s) + 1;
		} else if (i + 1 < len && s[i] == '*' && s[i + 1] == '*' &&
		    (end = memmem(s + i + 2, len - i - 2, "**", 2)) != NULL) {
			evbuffer_add(b, "<strong>", 8);
			tool_export_notebook_escape(b, s + i + 2,
			    (size_t)(end - s - i - 2));
			evbuffer_add(b, "</strong>", 9);
			i = (size_t)(end - s) + 2;
		} else {
			tool_export_notebook_escape(b, s + i, 1);
			i++;
		}
	}
}

/* A small Markdown renderer: headings, fences, lists, paragraphs. */
static void
tool_export_notebook_md_html(struct evbuffer *b, const char *s, size_t len)
{
	const char	*line, *nl;
	size_t		 llen;
	int		 para = 0, list = 0, fence = 0, level;

	for (line = s; line < s + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(s + len - line));
		if (nl == NULL)
			nl = s + len;
		llen = (size_t)(nl - line);
		if (llen >= 3 && strncmp(line, "```", 3) == 0) {
			if (para) { evbuffer_add(b, "</p>\n", 5); para = 0; }
			evbuffer_add_printf(b, fence ? "</code></pre>\n" :
			    "<pre><code>");
			fence = !fence;
			continue;
		}
		if (fence) {
			tool_export_notebook_escape(b, line, llen);
			evbuffer_add(b, "\n", 1);
			continue;
		}
		if (para && (llen == 0 || line[0] == '#' ||
		    (llen > 1 && (line[0] == '-' || line[0] == '*') &&
		    line[1] == ' '))) {
			evbuffer_add(b, "</p>\n", 5);
			para = 0;
		}
		if (list && !(llen > 1 && (line[0] == '-' || line[0] == '*') &&
		    line[1] == ' ')) {
			evbuffer_add(b, "</ul>\n", 6);
			list = 0;
		}
		if (llen == 0)
			continue;
		for (level = 0; level < (int)llen && line[level] == '#';
		    level++)
			;
		if (level > 0 && level <= 6 && (size_t)level < llen &&
		    line[level] == ' ') {
			evbuffer_add_printf(b, "<h%d>", level);
			tool_export_notebook_inline(b, line + level + 1,
			    llen - (size_t)level - 1);
			evbuffer_add_printf(b, "</h%d>\n", level);
			continue;
		}
		if (llen > 1 && (line[0] == '-' || line[0] == '*') &&
		    line[1] == ' ') {
			if (!list)
				evbuffer_add(b, "<ul>\n", 5);
			list = 1;
			evbuffer_add(b, "<li>", 4);
			tool_export_notebook_inline(b, line + 2, llen - 2);
			evbuffer_add(b, "</li>\n", 6);
			continue;
		}
		evbuffer_add(b, para ? "\n" : "<p>", para ? 1 : 3);
		para = 1;
		tool_export_notebook_inline(b, line, llen);
		if (nl == s + len)
			break;
	}
	if (fence)
		evbuffer_add(b, "</code></pre>\n", 14);
	if (para)
		evbuffer_add(b, "</p>\n", 5);
	if (list)
		evbuffer_add(b, "</ul>\n", 6);
}

static const char *const tool_export_notebook_images[] = {
	"image/png", "image/jpeg", "image/gif", NULL
};

/*
 * Where an inline export leaves an image out: what it was and how to get
 * it (the model sees it as image content through the readers).
 */
static void
tool_export_notebook_omit(struct evbuffer *b, enum tool_export_format fmt,
    const char *mime, const char *cell_id)
{
	struct evbuffer	*t;
	char		*s;
	size_t		 len;

	t = evbuffer_new();
	evbuffer_add_printf(t, "[%s output of cell %s left out of this inline "
	    "export: inspect_notebook with cell_ids [\"%s\"] and view "
	    "\"outputs\" (or get_results of its run) shows it; export with "
	    "path embeds it]", mime, cell_id, cell_id);
	len = evbuffer_get_length(t);
	s = xmalloc(len + 1);
	evbuffer_remove(t, s, len);
	evbuffer_free(t);
	if (fmt == TOOL_EXPORT_HTML) {
		evbuffer_add_printf(b, "<p class=\"output_image_omitted\">");
		tool_export_notebook_escape(b, s, len);
		evbuffer_add(b, "</p>\n", 5);
	} else {
		evbuffer_add(b, s, len);
		evbuffer_add(b, "\n\n", 2);
	}
	free(s);
}

/*
 * One output of cell cell_id in the chosen format.  With omitted, images
 * are left out (counted there) and a placeholder says how to get them.
 */
static void
tool_export_notebook_output(struct evbuffer *b, struct json_object *o,
    enum tool_export_format fmt, const char *cell_id, size_t *omitted)
{
	struct json_object	*data, *v;
	const char		*type, *mime = NULL;
	char			*s, *clean;
	size_t			 len, clen, i, k;

	type = tool_export_notebook_str(o, "output_type");
	if (type == NULL)
		return;
	data = json_object_object_get(o, "data");
	if (strcmp(type, "stream") == 0 || strcmp(type, "error") == 0) {
		v = strcmp(type, "stream") == 0 ? json_object_object_get(o,
		    "text") : NULL;
		if (v != NULL)
			s = tool_export_notebook_text(v, &len);
		else {
			struct evbuffer *tb = evbuffer_new();

			v = json_object_object_get(o, "traceback");
			for (i = 0; v != NULL && json_object_is_type(v,
			    json_type_array) &&
			    i < json_object_array_length(v); i++) {
				tool_export_notebook_join(tb,
				    json_object_array_get_idx(v, i));
				evbuffer_add(tb, "\n", 1);
			}
			len = evbuffer_get_length(tb);
			s = xmalloc(len + 1);
			evbuffer_remove(tb, s, len);
			s[len] = '\0';
			evbuffer_free(tb);
		}
		clean = worker_output_strip_ansi(s, len, &clen);
		if (fmt == TOOL_EXPORT_HTML) {
			evbuffer_add(b, "<pre class=\"output\">", 20);
			tool_export_notebook_escape(b, clean, clen);
			evbuffer_add(b, "</pre>\n", 7);
		} else {
			/* nbconvert indents outputs four spaces. */
			for (k = 0; k < clen; k++) {
				if (k == 0 || clean[k - 1] == '\n')
					evbuffer_add(b, "    ", 4);
				evbuffer_add(b, clean + k, 1);
			}
			evbuffer_add(b, "\n\n", clen > 0 &&
			    clean[clen - 1] == '\n' ? 1 : 2);
		}
		free(clean);
		free(s);
		return;
	}
	if (data == NULL || !json_object_is_type(data, json_type_object))
		return;
	for (i = 0; tool_export_notebook_images[i] != NULL; i++) {
		if (json_object_object_get(data,
		    tool_export_notebook_images[i]) != NULL) {
			mime = tool_export_notebook_images[i];
			break;
		}
	}
	if (mime != NULL && omitted != NULL) {
		tool_export_notebook_omit(b, fmt, mime, cell_id);
		(*omitted)++;
		return;
	}
	if (mime != NULL) {
		s = tool_export_notebook_text(json_object_object_get(data,
		    mime), &len);
		for (i = 0, k = 0; i < len; i++) {
			if (s[i] != '\n' && s[i] != '\r')
				s[k++] = s[i];
		}
		s[k] = '\0';
		if (fmt == TOOL_EXPORT_HTML)
			evbuffer_add_printf(b, "<img src=\"data:%s;base64,%s\""
			    ">\n", mime, s);
		else
			evbuffer_add_printf(b, "![%s](data:%s;base64,%s)\n\n",
			    mime + 6, mime, s);
		free(s);
		return;
	}
	if (fmt == TOOL_EXPORT_HTML &&
	    (v = json_object_object_get(data, "text/html")) != NULL) {
		s = tool_export_notebook_text(v, &len);
		evbuffer_add(b, "<div class=\"output_html\">", 25);
		evbuffer_add(b, s, len);
		evbuffer_add(b, "</div>\n", 7);
		free(s);
		return;
	}
	if (fmt == TOOL_EXPORT_HTML &&
	    (v = json_object_object_get(data, "image/svg+xml")) != NULL) {
		s = tool_export_notebook_text(v, &len);
		evbuffer_add(b, s, len);
		evbuffer_add(b, "\n", 1);
		free(s);
		return;
	}
	if ((v = json_object_object_get(data, "text/plain")) != NULL) {
		struct json_object *o2 = json_object_new_object();

		json_object_object_add(o2, "output_type",
		    json_object_new_string("stream"));
		json_object_object_add(o2, "text", json_object_get(v));
		tool_export_notebook_output(b, o2, fmt, cell_id, omitted);
		json_object_put(o2);
	}
}

/*
 * The notebook {path, metadata, cells} in fmt; with omitted, images are
 * left out and counted there.  Caller frees.
 */
char *
tool_export_notebook_render(struct json_object *nb, const char *fmt_name,
    size_t *omitted, size_t *outlen)
{
	struct json_object	*cells, *cell, *outs, *ec, *li;
	struct evbuffer		*b;
	enum tool_export_format	 fmt;
	const char		*type, *lang = "python", *path, *title, *id;
	char			*src, *s;
	size_t			 i, k, len;

	if (strcmp(fmt_name, "markdown") == 0)
		fmt = TOOL_EXPORT_MARKDOWN;
	else if (strcmp(fmt_name, "python") == 0)
		fmt = TOOL_EXPORT_PYTHON;
	else
		fmt = TOOL_EXPORT_HTML;
	li = json_object_object_get(json_object_object_get(nb, "metadata"),
	    "language_info");
	if (tool_export_notebook_str(li, "name") != NULL)
		lang = tool_export_notebook_str(li, "name");
	path = tool_export_notebook_str(nb, "path");
	title = path != NULL ? (strrchr(path, '/') != NULL ?
	    strrchr(path, '/') + 1 : path) : "Untitled";
	b = evbuffer_new();
	if (fmt == TOOL_EXPORT_PYTHON)
		evbuffer_add_printf(b, "#!/usr/bin/env python\n"
		    "# coding: utf-8\n\n");
	if (fmt == TOOL_EXPORT_HTML) {
		evbuffer_add_printf(b, "<!DOCTYPE html>\n<html>\n<head>\n"
		    "<meta charset=\"utf-8\">\n<title>");
		tool_export_notebook_escape(b, title, strlen(title));
		evbuffer_add_printf(b, "</title>\n<style>\n"
		    "body{font-family:sans-serif;max-width:60em;margin:auto}\n"
		    ".cell{margin:1em 0}\n"
		    ".input pre{background:#f5f5f5;padding:.5em}\n"
		    ".prompt{color:#303f9f;font-family:monospace}\n"
		    "pre.output{padding:.5em;margin:0}\n"
		    "img{max-width:100%%}\n</style>\n</head>\n<body>\n");
	}
	cells = json_object_object_get(nb, "cells");
	for (i = 0; cells != NULL && json_object_is_type(cells,
	    json_type_array) && i < json_object_array_length(cells); i++) {
		cell = json_object_array_get_idx(cells, i);
		type = tool_export_notebook_str(cell, "cell_type");
		if (type == NULL)
			type = "code";
		src = tool_export_notebook_text(json_object_object_get(cell,
		    "source"), &len);
		ec = json_object_object_get(cell, "execution_count");
		outs = json_object_object_get(cell, "outputs");
		if ((id = tool_export_notebook_str(cell, "cell_id")) == NULL)
			id = "";
		if (fmt == TOOL_EXPORT_PYTHON) {
			if (strcmp(type, "code") == 0) {
				if (json_object_is_type(ec, json_type_int))
					evbuffer_add_printf(b, "# In[%lld]:\n\n"
					    "\n", (long long)
					    json_object_get_int64(ec));
				else
					evbuffer_add(b, "# In[ ]:\n\n\n", 11);
				evbuffer_add(b, src, len);
				evbuffer_add(b, "\n\n\n", 3);
			} else {
				for (k = 0; k < len; k++) {
					if (k == 0 || src[k - 1] == '\n')
						evbuffer_add(b, "# ", 2);
					evbuffer_add(b, src + k, 1);
				}
				evbuffer_add(b, "\n\n", 2);
			}
		} else if (fmt == TOOL_EXPORT_MARKDOWN) {
			if (strcmp(type, "code") == 0) {
				evbuffer_add_printf(b, "```%s\n", lang);
				evbuffer_add(b, src, len);
				evbuffer_add(b, "\n```\n\n", 6);
			} else {
				evbuffer_add(b, src, len);
				evbuffer_add(b, "\n\n", 2);
			}
		} else {
			/* A file's cell_type and id may hold anything. */
			evbuffer_add(b, "<div class=\"cell ", 17);
			tool_export_notebook_escape(b, type, strlen(type));
			evbuffer_add(b, "\" id=\"", 6);
			tool_export_notebook_escape(b, id, strlen(id));
			evbuffer_add(b, "\">\n", 3);
			if (strcmp(type, "markdown") == 0)
				tool_export_notebook_md_html(b, src, len);
			else if (strcmp(type, "code") == 0) {
				evbuffer_add(b, "<div class=\"input\">", 19);
				if (json_object_is_type(ec, json_type_int))
					evbuffer_add_printf(b, "<span class=\""
					    "prompt\">In [%lld]:</span>",
					    (long long)json_object_get_int64(
					    ec));
				evbuffer_add_printf(b, "<pre><code class=\""
				    "language-%s\">", lang);
				tool_export_notebook_escape(b, src, len);
				evbuffer_add(b, "</code></pre></div>\n", 20);
			} else {
				evbuffer_add(b, "<pre>", 5);
				tool_export_notebook_escape(b, src, len);
				evbuffer_add(b, "</pre>\n", 7);
			}
		}
		for (k = 0; fmt != TOOL_EXPORT_PYTHON && outs != NULL &&
		    json_object_is_type(outs, json_type_array) &&
		    k < json_object_array_length(outs); k++)
			tool_export_notebook_output(b, json_object_array_get_idx(
			    outs, k), fmt, id, omitted);
		if (fmt == TOOL_EXPORT_HTML)
			evbuffer_add(b, "</div>\n", 7);
		free(src);
	}
	if (fmt == TOOL_EXPORT_HTML)
		evbuffer_add(b, "</body>\n</html>\n", 16);
	*outlen = evbuffer_get_length(b);
	s = xmalloc(*outlen + 1);
	evbuffer_remove(b, s, *outlen);
	s[*outlen] = '\0';
	evbuffer_free(b);
	return (s);
}

/*
 * Write atomically (atomic.c); a symlink at path, even a dangling one, is
 * written through to its target as Jupyter does.  An existing file is
 * replaced only when asked (overwrite), as save_notebook and the file
 * transfers refuse: -1 with *code "file_exists" then.
 */
static int
tool_export_notebook_write(const char *path, int overwrite, const char *s,
    size_t len, const char **code, char **msg)
{
	struct stat	 sb;
	char		*target;
	int		 r;

	*code = PROTO_E_INVALID_ARGUMENT;
	if ((target = atomic_resolve(path, msg)) == NULL)
		return (-1);
	if (!overwrite && lstat(target, &sb) == 0) {
		*code = PROTO_E_FILE_EXISTS;
		xasprintf(msg, "%s exists; pass overwrite: true to replace it",
		    path);
		free(target);
		return (-1);
	}
	r = atomic_write(target, s, len, 0644, msg);
	free(target);
	return (r);
}

struct tool_export_notebook {
	struct worker_call	*call;
	struct json_object	*content;
	const char		*format;
	char			*path;
	int			 overwrite;
};

static void
tool_export_notebook_finish(void *arg)
{
	struct tool_export_notebook	*st = arg;
	struct json_object		*sc;
	char				*out, *msg = NULL, *text;
	const char			*code;
	size_t				 len, n, omitted = 0;

	/* Inline, images are left out: base64 is no use to a model. */
	out = tool_export_notebook_render(st->content, st->format,
	    st->path != NULL ? NULL : &omitted, &len);
	sc = json_object_new_object();
	json_object_object_add(sc, "format", json_object_new_string(
	    st->format));
	json_object_object_add(sc, "bytes", json_object_new_int64(
	    (int64_t)len));
	if (st->path == NULL)
		json_object_object_add(sc, "images_omitted",
		    json_object_new_int64((int64_t)omitted));
	if (st->path != NULL) {
		if (tool_export_notebook_write(st->path, st->overwrite, out,
		    len, &code, &msg) != 0) {
			json_object_put(sc);
			worker_call_error(st->call, code, "%s", msg);
			free(msg);
			goto out;
		}
		json_object_object_add(sc, "path",
		    json_object_new_string(st->path));
		json_object_object_add(sc, "truncated",
		    json_object_new_boolean(0));
		xasprintf(&text, "exported %s (%zu bytes) to %s", st->format,
		    len, st->path);
		worker_call_result(st->call, text, sc);
		free(text);
		goto out;
	}
	n = len;
	if (n > WORKER_RESULT_CAP) {
		n = WORKER_RESULT_CAP;
		while (n > 0 && ((unsigned char)out[n] & 0xc0) == 0x80)
			n--;
	}
	json_object_object_add(sc, "content", json_object_new_string_len(out,
	    (int)n));
	json_object_object_add(sc, "truncated", json_object_new_boolean(
	    n < len));
	if (n < len) {
		xasprintf(&text, "%.*s\n[... %zu more bytes truncated; pass "
		    "path to write the whole export to a file]", (int)n, out,
		    len - n);
		worker_call_result(st->call, text, sc);
		free(text);
	} else
		worker_call_result(st->call, out, sc);
out:
	free(out);
	json_object_put(st->content);
	free(st->path);
	free(st);
}

static void
tool_export_notebook_content(struct worker_call *call,
    struct worker_room *room, struct worker_nb *reply)
{
	struct tool_export_notebook	*st;
	struct json_object		*v;
	const char			*path;
	char				*msg = NULL;

	st = xcalloc(1, sizeof *st);
	st->call = call;
	/* A copy: blobs are put in place, the room's kept copy stays. */
	st->content = json_object_new_object();
	json_object_object_add(st->content, "path", reply->path != NULL ?
	    json_object_new_string(reply->path) : NULL);
	v = NULL;
	json_object_deep_copy(reply->metadata, &v, NULL);
	json_object_object_add(st->content, "metadata", v);
	v = NULL;
	json_object_deep_copy(worker_nb_cells(reply), &v, NULL);
	json_object_object_add(st->content, "cells", v);
	worker_args_string(worker_call_args(call), "format", 1, &st->format,
	    &msg);
	worker_args_string(worker_call_args(call), "path", 0, &path, &msg);
	free(msg);
	msg = NULL;
	worker_args_bool(worker_call_args(call), "overwrite", 0,
	    &st->overwrite, &msg);
	free(msg);
	if (path != NULL)
		st->path = worker_args_path(path);
	/* Outputs held as blobs are fetched so the export is whole. */
	worker_blob_resolve(room, st->content, tool_export_notebook_finish,
	    st);
}

static void
tool_export_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "format", "path",
		"overwrite", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct worker_handle		*h;
	const char			*fmt, *path;
	char				*msg = NULL;
	int				 overwrite;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "format", 1, &fmt, &msg) != 0 ||
	    worker_args_string(args, "path", 0, &path, &msg) != 0 ||
	    worker_args_bool(args, "overwrite", 0, &overwrite, &msg) != 0)
		goto bad;
	if (strcmp(fmt, "markdown") != 0 && strcmp(fmt, "python") != 0 &&
	    strcmp(fmt, "html") != 0) {
		xasprintf(&msg, "format must be markdown, python or html");
		goto bad;
	}
	if (path != NULL && *path == '\0') {
		xasprintf(&msg, "path must not be empty when given");
		goto bad;
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	worker_call_room_get(call, worker_attach_room(h),
	    tool_export_notebook_content);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_export_notebook_entry = {
	.name = "export_notebook",
	.description = "Export as markdown, python (a script) or html "
	    "(self-contained): written to path with images, or returned "
	    "inline without them, capped.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"format\":{\"type\":\"string\",\"enum\":[\"markdown\","
	    "\"python\",\"html\"]},"
	    "\"path\":{\"type\":\"string\"},"
	    "\"overwrite\":{\"type\":\"boolean\"}},\"required\":[\"format\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"format\":{\"type\":\"string\"},"
	    "\"bytes\":{\"type\":\"integer\"},"
	    "\"path\":{\"type\":\"string\"},"
	    "\"content\":{\"type\":\"string\"},"
	    "\"truncated\":{\"type\":\"boolean\"},"
	    "\"images_omitted\":{\"type\":\"integer\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 0,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_export_notebook,
};
