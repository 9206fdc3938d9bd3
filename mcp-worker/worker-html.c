/* SPDX-License-Identifier: ISC */
/*
 * worker-html.c: an HTML output made readable for the model
 * (docs/decisions/076).  A tolerant scan, not a parser: tags and text in
 * one pass, script, style and comments skipped, entities decoded, every
 * size bounded.  A table (pandas, polars, a Styler) becomes text rows
 * headed by what it is and how many rows and columns it has; other HTML
 * its text.  The input is whatever a kernel sent: nothing in it is
 * trusted, nothing is fetched, nothing is run.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define WORKER_HTML_MAX_INPUT	(8 * 1024 * 1024)	/* bytes scanned */
#define WORKER_HTML_CELL	60	/* characters of a cell shown */
#define WORKER_HTML_COLS	24	/* cells of a row shown */
#define WORKER_HTML_HEAD	10	/* first rows shown */
#define WORKER_HTML_TAIL	5	/* last rows shown */
#define WORKER_HTML_HEADER	4	/* header rows shown */

/* The scan: where it is in the input. */
struct worker_html_lex {
	const char	*s;
	size_t		 len;
	size_t		 i;
};

/* One token: text (raw, entities still in) or a tag. */
struct worker_html_tok {
	int		 tag;		/* 0 text, 1 tag */
	int		 close;		/* </name> */
	char		 name[12];	/* lowercased, cut */
	const char	*text;
	size_t		 len;
};

/* A table's row being read. */
struct worker_html_row {
	char		*cell[WORKER_HTML_COLS];
	size_t		 ncells;	/* cells, kept or not */
	size_t		 nth, ntd;
	size_t		 dots, other;	/* "..." cells, cells with text */
	int		 cut;		/* a cell was cut */
};

/* A table as it is read. */
struct worker_html_table {
	struct evbuffer	*header;	/* header rows, as lines */
	size_t		 nheader;
	char		*dtypes;	/* a row of types under the header */
	char		*head[WORKER_HTML_HEAD];
	char		*tail[WORKER_HTML_TAIL];
	size_t		 rows;		/* data rows */
	size_t		 elided_at;	/* data rows before a "..." row, +1 */
	size_t		 cols;		/* widest data row's data cells */
	size_t		 index;		/* leading header cells of data rows */
	int		 truncated_cols; /* a row had more cells than shown */
	int		 cut_cells;	/* a cell was cut */
};

static int	worker_html_next(struct worker_html_lex *,
		    struct worker_html_tok *);
static void	worker_html_decode(struct evbuffer *, const char *, size_t,
		    int *);
static size_t	worker_html_entity(const char *, size_t, struct evbuffer *);
static void	worker_html_utf8(struct evbuffer *, unsigned long);
static char	*worker_html_cut(struct evbuffer *, size_t, int *);
static char	*worker_html_line(struct worker_html_row *);
static void	worker_html_row_free(struct worker_html_row *);
static void	worker_html_row_end(struct worker_html_table *,
		    struct worker_html_row *, int);
static void	worker_html_cell_end(struct worker_html_row *,
		    struct evbuffer **, int);
static void	worker_html_row_say(struct evbuffer *,
		    struct worker_html_table *, size_t);
static int	worker_html_dims(const char *, size_t, const char *,
		    size_t *, size_t *, const char **);
static const char	*worker_html_find(const char *, size_t, const char *);

/*
 * The next token; 0 at the end.  A tag's attributes are skipped with
 * their quotes; script and style bodies and comments are skipped whole
 * (to their end, or the input's).
 */
static int
worker_html_next(struct worker_html_lex *lx, struct worker_html_tok *t)
{
	const char	*s = lx->s, *e;
	size_t		 i = lx->i, n, start;
	char		 q;

	for (;;) {
		if (i >= lx->len)
			return (0);
		if (s[i] != '<' || i + 1 >= lx->len ||
		    !(isalpha((u_char)s[i + 1]) || s[i + 1] == '/' ||
		    s[i + 1] == '!' || s[i + 1] == '?')) {
			/* Text to the next tag that can be one. */
			start = i;
			for (i++; i < lx->len; i++) {
				if (s[i] == '<' && i + 1 < lx->len &&
				    (isalpha((u_char)s[i + 1]) ||
				    s[i + 1] == '/' || s[i + 1] == '!' ||
				    s[i + 1] == '?'))
					break;
			}
			t->tag = 0;
			t->text = s + start;
			t->len = i - start;
			lx->i = i;
			return (1);
		}
		if (s[i + 1] == '!' || s[i + 1] == '?') {
			/* A comment, doctype or processing instruction. */
			if (lx->len - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
				e = worker_html_find(s + i + 4,
				    lx->len - i - 4, "-->");
				i = e == NULL ? lx->len :
				    (size_t)(e - s) + 3;
			} else {
				e = memchr(s + i, '>', lx->len - i);
				i = e == NULL ? lx->len : (size_t)(e - s) + 1;
			}
			continue;
		}
		break;
	}
	t->tag = 1;
	t->close = s[i + 1] == '/';
	i += t->close ? 2 : 1;
	for (n = 0; i < lx->len && (isalnum((u_char)s[i])); i++) {
		if (n < sizeof t->name - 1)
			t->name[n++] = (char)tolower((u_char)s[i]);
	}
	t->name[n] = '\0';
	/* Attributes, with quotes that may hold '>'. */
	for (q = 0; i < lx->len; i++) {
		if (q != 0) {
			if (s[i] == q)
				q = 0;
		} else if (s[i] == '"' || s[i] == '\'')
			q = s[i];
		else if (s[i] == '>')
			break;
	}
	if (i < lx->len)
		i++;
	if (!t->close && (strcmp(t->name, "script") == 0 ||
	    strcmp(t->name, "style") == 0)) {
		e = worker_html_find(s + i, lx->len - i,
		    t->name[1] == 'c' ? "</script" : "</style");
		i = e == NULL ? lx->len : (size_t)(e - s);
	}
	lx->i = i;
	return (1);
}

/* needle (lower case) in s, ignoring case; NULL if not there. */
static const char *
worker_html_find(const char *s, size_t len, const char *needle)
{
	size_t	 n = strlen(needle), i, k;

	for (i = 0; n <= len && i <= len - n; i++) {
		for (k = 0; k < n && tolower((u_char)s[i + k]) ==
		    (u_char)needle[k];
		    k++)
			;
		if (k == n)
			return (s + i);
	}
	return (NULL);
}

/* A code point as UTF-8; what is not one is U+FFFD. */
static void
worker_html_utf8(struct evbuffer *b, unsigned long c)
{
	u_char	 u[4];

	if (c == 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = 0xfffd;
	if (c < 0x80) {
		u[0] = (u_char)c;
		evbuffer_add(b, u, 1);
	} else if (c < 0x800) {
		u[0] = (u_char)(0xc0 | (c >> 6));
		u[1] = (u_char)(0x80 | (c & 0x3f));
		evbuffer_add(b, u, 2);
	} else if (c < 0x10000) {
		u[0] = (u_char)(0xe0 | (c >> 12));
		u[1] = (u_char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (u_char)(0x80 | (c & 0x3f));
		evbuffer_add(b, u, 3);
	} else {
		u[0] = (u_char)(0xf0 | (c >> 18));
		u[1] = (u_char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (u_char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (u_char)(0x80 | (c & 0x3f));
		evbuffer_add(b, u, 4);
	}
}

/*
 * An entity at s ('&'...) decoded into b; the bytes it took, or 0 when
 * it is none we know (the '&' is then text).
 */
static size_t
worker_html_entity(const char *s, size_t len, struct evbuffer *b)
{
	static const struct {
		const char	*name;
		unsigned long	 c;
	} named[] = {
		{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' },
		{ "apos", '\'' }, { "nbsp", ' ' }, { "times", 0xd7 },
		{ "hellip", 0x2026 }, { "ndash", 0x2013 }, { "mdash", 0x2014 },
		{ "minus", 0x2212 }, { "middot", 0xb7 },
	};
	unsigned long	 c = 0;
	size_t		 i, k, n;
	int		 hex;

	if (len >= 3 && s[1] == '#') {
		hex = s[2] == 'x' || s[2] == 'X';
		for (i = hex ? 3 : 2, n = 0; i < len && n < 8; i++, n++) {
			if (hex && isxdigit((u_char)s[i]))
				c = c * 16 + (unsigned long)(isdigit((u_char)
				    s[i]) ? s[i] - '0' : (tolower((u_char)s[i]) -
				    'a' + 10));
			else if (!hex && isdigit((u_char)s[i]))
				c = c * 10 + (unsigned long)(s[i] - '0');
			else
				break;
		}
		if (n == 0 || n == 8)
			return (0);
		worker_html_utf8(b, c);
		return (i < len && s[i] == ';' ? i + 1 : i);
	}
	for (k = 0; k < sizeof named / sizeof named[0]; k++) {
		n = strlen(named[k].name);
		if (len >= n + 2 && memcmp(s + 1, named[k].name, n) == 0 &&
		    s[n + 1] == ';') {
			worker_html_utf8(b, named[k].c);
			return (n + 2);
		}
	}
	return (0);
}

/*
 * Text with entities decoded and runs of white space one space onto b;
 * *space says a space is owed before the next word (and is updated).
 */
static void
worker_html_decode(struct evbuffer *b, const char *s, size_t len, int *space)
{
	size_t	 i, n;

	for (i = 0; i < len;) {
		if (isspace((u_char)s[i])) {
			*space = 1;
			i++;
			continue;
		}
		if (*space && evbuffer_get_length(b) > 0)
			evbuffer_add(b, " ", 1);
		*space = 0;
		if (s[i] == '&' && (n = worker_html_entity(s + i, len - i,
		    b)) > 0) {
			i += n;
			continue;
		}
		/* Control characters are not text a model should get. */
		if ((u_char)s[i] < 0x20 || s[i] == 0x7f)
			evbuffer_add(b, " ", 1);
		else
			evbuffer_add(b, s + i, 1);
		i++;
	}
}

/*
 * What b holds, at most max characters ("…" past them); frees b.  *cut,
 * if given, is set when it was cut.
 */
static char *
worker_html_cut(struct evbuffer *b, size_t max, int *cut)
{
	size_t	 len, k;
	char	*s;

	len = evbuffer_get_length(b);
	s = xmalloc(len + 4);
	evbuffer_remove(b, s, len);
	evbuffer_free(b);
	s[len] = '\0';
	if (utf8_chars(s, len) > max) {
		k = utf8_skip(s, len, max - 1);
		memcpy(s + k, "\xe2\x80\xa6", 4);
		if (cut != NULL)
			*cut = 1;
	}
	return (s);
}

/* A row as one line, its cells between " | ". */
static char *
worker_html_line(struct worker_html_row *r)
{
	struct evbuffer	*b;
	size_t		 i, n;

	b = evbuffer_new();
	n = r->ncells < WORKER_HTML_COLS ? r->ncells : WORKER_HTML_COLS;
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "%s%s", i > 0 ? " | " : "",
		    r->cell[i]);
	if (r->ncells > n)
		evbuffer_add_printf(b, " | (+%zu cells)", r->ncells - n);
	return (worker_html_cut(b, (size_t)-1, NULL));
}

static void
worker_html_row_free(struct worker_html_row *r)
{
	size_t	 i;

	for (i = 0; i < r->ncells && i < WORKER_HTML_COLS; i++)
		free(r->cell[i]);
	memset(r, 0, sizeof *r);
}

/* A row read: a header row, the types under it, "..." or data. */
static void
worker_html_row_end(struct worker_html_table *t, struct worker_html_row *r,
    int thead)
{
	char	*line;
	size_t	 k;

	if (r->ncells == 0) {
		worker_html_row_free(r);
		return;
	}
	line = worker_html_line(r);
	if (r->cut)
		t->cut_cells = 1;
	if (r->dots > 0 && r->other == 0) {
		/* The producer's own cut (pandas' "..." row). */
		if (t->elided_at == 0)
			t->elided_at = t->rows + 1;
		free(line);
	} else if (thead && r->ntd > 0 && r->nth == 0 && t->nheader > 0 &&
	    t->dtypes == NULL) {
		/* polars: the column types under the names. */
		t->dtypes = line;
	} else if ((thead || (r->ntd == 0 && t->rows == 0)) &&
	    t->rows == 0) {
		if (t->nheader++ < WORKER_HTML_HEADER)
			evbuffer_add_printf(t->header, "%s\n", line);
		free(line);
	} else {
		if (t->rows < WORKER_HTML_HEAD)
			t->head[t->rows] = line;
		else {
			k = (t->rows - WORKER_HTML_HEAD) % WORKER_HTML_TAIL;
			free(t->tail[k]);
			t->tail[k] = line;
		}
		t->rows++;
		if (r->ntd > 0 && r->ntd > t->cols)
			t->cols = r->ntd;
		if (r->ntd > 0 && r->nth > t->index)
			t->index = r->nth;
		if (r->ntd == 0 && r->ncells > t->cols)
			t->cols = r->ncells;
		if (r->ncells > WORKER_HTML_COLS)
			t->truncated_cols = 1;
	}
	worker_html_row_free(r);
}

/*
 * The frame's size where the output says it: pandas' "[1000 rows x 5
 * columns]" (text/plain) or "1000 rows × 5 columns" (its HTML), polars'
 * "shape: (1000, 5)".  1 if found, with who said it.
 */
static int
worker_html_dims(const char *html, size_t len, const char *plain,
    size_t *rows, size_t *cols, const char **from)
{
	const char		*p, *e;
	unsigned long long	 r, c;
	char			 buf[64];
	size_t			 n;

	if (plain != NULL && (p = strrchr(plain, '[')) != NULL &&
	    sscanf(p, "[%llu rows x %llu columns]", &r, &c) == 2) {
		*rows = (size_t)r;
		*cols = (size_t)c;
		*from = "text/plain";
		return (1);
	}
	if ((p = worker_html_find(html, len, "shape: (")) != NULL) {
		n = (size_t)(html + len - p) < sizeof buf - 1 ?
		    (size_t)(html + len - p) : sizeof buf - 1;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (sscanf(buf, "shape: (%llu, %llu)", &r, &c) == 2) {
			*rows = (size_t)r;
			*cols = (size_t)c;
			*from = "polars' shape";
			return (1);
		}
	}
	/* " rows × " then back to the number before it. */
	for (e = html; (p = worker_html_find(e, len - (size_t)(e - html),
	    " rows \xc3\x97 ")) != NULL; e = p + 1) {
		n = (size_t)(p - html);
		while (n > 0 && isdigit((u_char)html[n - 1]))
			n--;
		if (n == (size_t)(p - html))
			continue;
		memset(buf, 0, sizeof buf);
		memcpy(buf, html + n, (size_t)(html + len - (html + n)) <
		    sizeof buf - 1 ? (size_t)(html + len - (html + n)) :
		    sizeof buf - 1);
		if (sscanf(buf, "%llu rows \xc3\x97 %llu columns", &r,
		    &c) == 2) {
			*rows = (size_t)r;
			*cols = (size_t)c;
			*from = "the HTML";
			return (1);
		}
	}
	return (0);
}

/* The cell open, if one is, onto the row. */
static void
worker_html_cell_end(struct worker_html_row *r, struct evbuffer **cell,
    int th)
{
	char	*s;

	if (*cell == NULL)
		return;
	s = worker_html_cut(*cell, WORKER_HTML_CELL, &r->cut);
	*cell = NULL;
	if (strcmp(s, "...") == 0 || strcmp(s, "\xe2\x80\xa6") == 0)
		r->dots++;
	else if (*s != '\0')
		r->other++;
	if (r->ncells < WORKER_HTML_COLS)
		r->cell[r->ncells] = s;
	else
		free(s);
	r->ncells++;
	if (th)
		r->nth++;
	else
		r->ntd++;
}

/* Data row j onto out, after the "..." row its maker put before it. */
static void
worker_html_row_say(struct evbuffer *out, struct worker_html_table *tb,
    size_t j)
{
	const char	*line;

	if (tb->elided_at == j + 1)
		evbuffer_add_printf(out, "...\n");
	line = j < WORKER_HTML_HEAD ? tb->head[j] :
	    tb->tail[(j - WORKER_HTML_HEAD) % WORKER_HTML_TAIL];
	evbuffer_add_printf(out, "%s\n", line);
}

/* worker_html_rows, not asking whether the table is whole. */
char *
worker_html_table(const char *html, size_t len, const char *plain,
    const char *orig)
{
	return (worker_html_rows(html, len, plain, orig, NULL));
}

/*
 * The first table of an HTML output as text rows, headed by what it is:
 * rows shown of how many, columns, dtypes where the output has them, and
 * orig (how to get the original).  plain is the bundle's text/plain or
 * NULL.  NULL when the HTML has no table with a row.  *whole, if given,
 * says the rows shown are all the table's and all of it is in the HTML
 * (a text/plain beside it then shows as much).  Caller frees.
 */
char *
worker_html_rows(const char *html, size_t len, const char *plain,
    const char *orig, int *whole)
{
	struct worker_html_lex	 lx;
	struct worker_html_tok	 t;
	struct worker_html_table tb;
	struct worker_html_row	 r;
	struct evbuffer		*cell = NULL, *out;
	const char		*from = NULL;
	size_t			 depth = 0, tables = 0, j, shown, total;
	size_t			 drows = 0, dcols = 0;
	int			 done = 0, thead = 0, th = 0, space = 0;

	if (len > WORKER_HTML_MAX_INPUT)
		len = WORKER_HTML_MAX_INPUT;
	memset(&lx, 0, sizeof lx);
	lx.s = html;
	lx.len = len;
	memset(&tb, 0, sizeof tb);
	memset(&r, 0, sizeof r);
	tb.header = evbuffer_new();
	while (worker_html_next(&lx, &t)) {
		if (!t.tag) {
			if (cell != NULL)
				worker_html_decode(cell, t.text, t.len, &space);
			continue;
		}
		if (strcmp(t.name, "table") == 0) {
			if (!t.close) {
				if (depth++ == 0)
					tables++;
			} else if (depth > 0 && --depth == 0 && !done) {
				worker_html_cell_end(&r, &cell, th);
				worker_html_row_end(&tb, &r, thead);
				done = 1;
			}
			continue;
		}
		if (done || depth != 1)
			continue;
		if (strcmp(t.name, "br") == 0 || strcmp(t.name, "p") == 0 ||
		    strcmp(t.name, "div") == 0) {
			space = 1;
			continue;
		}
		if (strcmp(t.name, "td") == 0 || strcmp(t.name, "th") == 0) {
			worker_html_cell_end(&r, &cell, th);
			if (!t.close) {
				cell = evbuffer_new();
				space = 0;
				th = t.name[1] == 'h';
			}
			continue;
		}
		if (strcmp(t.name, "tr") != 0 && strcmp(t.name, "thead") != 0 &&
		    strcmp(t.name, "tbody") != 0 && strcmp(t.name, "tfoot") != 0)
			continue;
		worker_html_cell_end(&r, &cell, th);
		worker_html_row_end(&tb, &r, thead);
		if (strcmp(t.name, "thead") == 0)
			thead = !t.close;
		else if (strcmp(t.name, "tr") != 0)
			thead = 0;
	}
	if (!done) {
		/* The input ended inside the table. */
		worker_html_cell_end(&r, &cell, th);
		worker_html_row_end(&tb, &r, thead);
	}
	if (tb.rows == 0) {
		evbuffer_free(tb.header);
		free(tb.dtypes);
		return (NULL);
	}
	out = evbuffer_new();
	shown = tb.rows <= WORKER_HTML_HEAD + WORKER_HTML_TAIL ? tb.rows :
	    WORKER_HTML_HEAD + WORKER_HTML_TAIL;
	if (worker_html_dims(html, len, plain, &drows, &dcols, &from))
		total = drows;
	else {
		total = tb.rows;
		dcols = tb.cols;
	}
	if (whole != NULL)
		*whole = shown == tb.rows && total == tb.rows &&
		    tb.elided_at == 0 && !tb.truncated_cols;
	evbuffer_add_printf(out, "[HTML table as text rows: showing %zu of "
	    "%zu rows, %zu columns", shown, total, dcols);
	if (from != NULL && drows != tb.rows)
		evbuffer_add_printf(out, " (size from %s)", from);
	if (from == NULL && tb.elided_at > 0)
		evbuffer_add_printf(out, " (a \"...\" row: its maker left rows "
		    "out, how many is not said)");
	if (tb.index > 0)
		evbuffer_add_printf(out, "; first %s: the index", tb.index > 1 ?
		    "cells" : "cell");
	evbuffer_add_printf(out, "; dtypes %s", tb.dtypes != NULL ?
	    "in the row under the header" : "not in the output");
	if (tables > 1)
		evbuffer_add_printf(out, "; the first of %zu tables", tables);
	if (tb.truncated_cols)
		evbuffer_add_printf(out, "; %d cells a row shown",
		    WORKER_HTML_COLS);
	if (tb.cut_cells)
		evbuffer_add_printf(out, "; cells cut at %d characters",
		    WORKER_HTML_CELL);
	evbuffer_add_printf(out, "; %s]\n", orig);
	evbuffer_add_buffer(out, tb.header);
	evbuffer_free(tb.header);
	if (tb.dtypes != NULL)
		evbuffer_add_printf(out, "%s\n", tb.dtypes);
	free(tb.dtypes);
	for (j = 0; j < tb.rows && j < WORKER_HTML_HEAD; j++)
		worker_html_row_say(out, &tb, j);
	if (tb.rows > WORKER_HTML_HEAD + WORKER_HTML_TAIL)
		evbuffer_add_printf(out, "[... %zu rows not shown ...]\n",
		    tb.rows - WORKER_HTML_HEAD - WORKER_HTML_TAIL);
	j = tb.rows > WORKER_HTML_HEAD + WORKER_HTML_TAIL ?
	    tb.rows - WORKER_HTML_TAIL : WORKER_HTML_HEAD;
	for (; j < tb.rows; j++)
		worker_html_row_say(out, &tb, j);
	if (tb.elided_at == tb.rows + 1)
		evbuffer_add_printf(out, "...\n");
	for (j = 0; j < WORKER_HTML_HEAD; j++)
		free(tb.head[j]);
	for (j = 0; j < WORKER_HTML_TAIL; j++)
		free(tb.tail[j]);
	return (worker_html_cut(out, (size_t)-1, NULL));
}

/*
 * The text of an HTML output: tags, scripts, styles and comments out,
 * entities decoded, a line for each block, at most max characters.  NULL
 * when there is no text.  Caller frees.
 */
char *
worker_html_text(const char *html, size_t len, size_t max)
{
	struct worker_html_lex	 lx;
	struct worker_html_tok	 t;
	struct evbuffer		*b;
	size_t			 n, was;
	int			 space = 0, nl = 1;
	static const char *const blocks[] = { "br", "p", "div", "li", "tr",
	    "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "ul", "ol" };

	if (len > WORKER_HTML_MAX_INPUT)
		len = WORKER_HTML_MAX_INPUT;
	memset(&lx, 0, sizeof lx);
	lx.s = html;
	lx.len = len;
	b = evbuffer_new();
	while (worker_html_next(&lx, &t) && evbuffer_get_length(b) <
	    max * 4 + 8) {
		if (!t.tag) {
			/* No space at the start of a line. */
			while (nl && t.len > 0 && isspace((u_char)*t.text)) {
				t.text++;
				t.len--;
			}
			was = evbuffer_get_length(b);
			worker_html_decode(b, t.text, t.len, &space);
			if (evbuffer_get_length(b) != was)
				nl = 0;
			continue;
		}
		for (n = 0; n < sizeof blocks / sizeof blocks[0]; n++) {
			if (strcmp(t.name, blocks[n]) == 0)
				break;
		}
		if (n == sizeof blocks / sizeof blocks[0]) {
			if (strcmp(t.name, "td") == 0 ||
			    strcmp(t.name, "th") == 0)
				space = 1;
			continue;
		}
		if (!nl)
			evbuffer_add(b, "\n", 1);
		nl = 1;
		space = 0;
	}
	if (evbuffer_get_length(b) == 0) {
		evbuffer_free(b);
		return (NULL);
	}
	return (worker_html_cut(b, max, NULL));
}
