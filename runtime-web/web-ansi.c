/* SPDX-License-Identifier: ISC */
/*
 * web-ansi.c: stream and traceback text to HTML.  Every byte of the text
 * is escaped; SGR colour and bold sequences become spans with classes
 * (ansi-fg-N, ansi-bg-N, ansi-bold) the page's style sheet colours, so no
 * style attribute ever comes from notebook content.  Other escape
 * sequences are dropped.
 */

#include <stdio.h>
#include <string.h>

#include "web.h"

struct web_ansi {
	int	fg;	/* -1: default, 0-15 */
	int	bg;
	int	bold;
	int	open;	/* a span is open */
};

static void	web_ansi_sgr(struct web_ansi *, const char *, size_t);
static void	web_ansi_span(struct evbuffer *, struct web_ansi *);

/* Escape text for an element's content or (attr) a quoted attribute. */
void
web_ansi_escape(struct evbuffer *b, const char *s, size_t len, int attr)
{
	size_t	i, from = 0;
	const char *rep;

	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\0':
			rep = "\xef\xbf\xbd";
			break;
		case '\n':
			rep = attr ? "&#10;" : NULL;
			break;
		case '\r':
			/* A parser folds a raw CR; a reference stays one. */
			rep = attr ? "&#13;" : NULL;
			break;
		default:
			rep = NULL;
			break;
		}
		if (rep == NULL)
			continue;
		evbuffer_add(b, s + from, i - from);
		evbuffer_add(b, rep, strlen(rep));
		from = i + 1;
	}
	evbuffer_add(b, s + from, len - from);
}

/* Apply "1;31" to the state. */
static void
web_ansi_sgr(struct web_ansi *st, const char *p, size_t len)
{
	int	 v[16], n = 0, cur = 0, have = 0, i;
	size_t	 k;

	for (k = 0; k <= len && n < 16; k++) {
		if (k == len || p[k] == ';') {
			v[n++] = have ? cur : 0;
			cur = have = 0;
		} else if (p[k] >= '0' && p[k] <= '9' && cur < 1000) {
			cur = cur * 10 + (p[k] - '0');
			have = 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (v[i] == 0)
			st->fg = st->bg = -1, st->bold = 0;
		else if (v[i] == 1)
			st->bold = 1;
		else if (v[i] == 22)
			st->bold = 0;
		else if (v[i] >= 30 && v[i] <= 37)
			st->fg = v[i] - 30;
		else if (v[i] >= 90 && v[i] <= 97)
			st->fg = v[i] - 90 + 8;
		else if (v[i] == 39)
			st->fg = -1;
		else if (v[i] >= 40 && v[i] <= 47)
			st->bg = v[i] - 40;
		else if (v[i] >= 100 && v[i] <= 107)
			st->bg = v[i] - 100 + 8;
		else if (v[i] == 49)
			st->bg = -1;
		else if ((v[i] == 38 || v[i] == 48) && i + 2 < n &&
		    v[i + 1] == 5) {
			/* 256 colours: the first 16 only. */
			if (v[i + 2] < 16)
				*(v[i] == 38 ? &st->fg : &st->bg) = v[i + 2];
			i += 2;
		} else if ((v[i] == 38 || v[i] == 48) && i + 4 < n &&
		    v[i + 1] == 2)
			i += 4;
	}
}

static void
web_ansi_span(struct evbuffer *b, struct web_ansi *st)
{
	if (st->open) {
		WEB_ADD(b, "</span>");
		st->open = 0;
	}
	if (st->fg == -1 && st->bg == -1 && !st->bold)
		return;
	WEB_ADD(b, "<span class=\"");
	if (st->fg != -1)
		evbuffer_add_printf(b, "ansi-fg-%d ", st->fg);
	if (st->bg != -1)
		evbuffer_add_printf(b, "ansi-bg-%d ", st->bg);
	if (st->bold)
		WEB_ADD(b, "ansi-bold");
	WEB_ADD(b, "\">");
	st->open = 1;
}

/* Text with ANSI escapes, as escaped HTML with colour spans. */
void
web_ansi_html(struct evbuffer *b, const char *s, size_t len)
{
	struct web_ansi	 st = { -1, -1, 0, 0 };
	size_t		 i = 0, from = 0, j;

	while (i < len) {
		if (s[i] != '\033') {
			i++;
			continue;
		}
		web_ansi_escape(b, s + from, i - from, 0);
		if (i + 1 < len && s[i + 1] == '[') {
			/* CSI: parameters, then one final byte 0x40-0x7e. */
			for (j = i + 2; j < len && ((u_char)s[j] < 0x40 ||
			    (u_char)s[j] > 0x7e); j++)
				;
			if (j < len && s[j] == 'm') {
				web_ansi_sgr(&st, s + i + 2, j - i - 2);
				web_ansi_span(b, &st);
			}
			i = j < len ? j + 1 : len;
		} else
			i = i + 2 < len ? i + 2 : len;
		from = i;
	}
	web_ansi_escape(b, s + from, len - from, 0);
	if (st.open)
		WEB_ADD(b, "</span>");
}
