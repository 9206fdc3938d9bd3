/* SPDX-License-Identifier: ISC */
/*
 * tool-search-cells.c: find text in a notebook, literal or POSIX extended
 * regex, in sources and/or text outputs (ANSI stripped).  Every match is
 * named by cell_id, 1-based line and 1-based column (in characters).
 */

#include <sys/types.h>

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define TOOL_SEARCH_DEFAULT	100
#define TOOL_SEARCH_MAX		1000
#define TOOL_SEARCH_LINE	160	/* context chars shown */

struct tool_search_cells {
	const char	*query;
	size_t		 qlen;
	int		 regex, icase;
	regex_t		 re;
	int		 max;
	size_t		 left;	/* characters of text the result has left */
	size_t		 sleft;	/* bytes of structuredContent it has left */
	int		 capped;	/* a match was left out for the cap */
	struct json_object *matches;
	struct evbuffer	*text;
	struct evbuffer	*one;		/* scratch: a match's line */
	struct evbuffer	*js;		/* scratch: a match's JSON */
	int		 total;
	const char	*version;	/* of the cell being searched */
};

static int	tool_search_cells_column(const char *, size_t);
static const char	*tool_search_cells_find(struct tool_search_cells *,
		    const char *, size_t, size_t, size_t *);
static void	tool_search_cells_match(struct tool_search_cells *,
		    const char *, int, const char *, int, int, const char *,
		    size_t, size_t, size_t);
static void	tool_search_cells_text(struct tool_search_cells *, const char *,
		    int, const char *, int, const char *, size_t);
static void	tool_search_cells_join(struct evbuffer *,
		    const msgpack_object *, const char *);
static void	tool_search_cells_outputs(struct tool_search_cells *,
		    const char *, int, const msgpack_object *);
static char	*tool_search_cells_field(const msgpack_object *, const char *);
static void	tool_search_cells_done(struct worker_call *,
		    struct worker_room *, struct worker_nb *);
static void	tool_search_cells(struct worker_call *);

/* Characters (not bytes) before offset off. */
static int
tool_search_cells_column(const char *s, size_t off)
{
	size_t	i;
	int	col = 1;

	for (i = 0; i < off; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			col++;
	}
	return (col);
}

static const char *
tool_search_cells_find(struct tool_search_cells *st, const char *line,
    size_t len, size_t from, size_t *mlen)
{
	const char	*p;
	size_t		 i, k;

	if (st->qlen > len || from > len - st->qlen)
		return (NULL);
	if (!st->icase) {
		p = memmem(line + from, len - from, st->query, st->qlen);
		*mlen = st->qlen;
		return (p);
	}
	for (i = from; i + st->qlen <= len; i++) {
		for (k = 0; k < st->qlen; k++) {
			if (tolower((unsigned char)line[i + k]) !=
			    tolower((unsigned char)st->query[k]))
				break;
		}
		if (k == st->qlen) {
			*mlen = st->qlen;
			return (line + i);
		}
	}
	return (NULL);
}

static void
tool_search_cells_match(struct tool_search_cells *st, const char *cell_id,
    int index, const char *where, int output, int lineno, const char *line,
    size_t len, size_t at, size_t mlen)
{
	struct json_object	*m;
	struct evbuffer		*one = st->one, *js = st->js;
	size_t			 show, n, size;
	int			 col;

	st->total++;
	if ((int)json_object_array_length(st->matches) >= st->max ||
	    st->capped)
		return;
	show = utf8_skip(line, len, TOOL_SEARCH_LINE);
	mlen = utf8_skip(line + at, mlen, TOOL_SEARCH_LINE);
	col = tool_search_cells_column(line, at);
	/* Written in pieces, the match as JSON text (a search's cost). */
	evbuffer_add(one, cell_id, strlen(cell_id));
	if (st->version != NULL) {
		evbuffer_add(one, " v", 2);
		evbuffer_add(one, st->version, strlen(st->version));
	}
	evbuffer_add(one, " ", 1);
	evbuffer_add(one, where, strlen(where));
	worker_output_num(one, ":", lineno);
	worker_output_num(one, ":", col);
	evbuffer_add(one, ": ", 2);
	evbuffer_add(one, line, show);
	if (show < len)
		evbuffer_add(one, " ...", 4);
	evbuffer_add(one, "\n", 1);
	n = utf8_chars((char *)evbuffer_pullup(one, -1),
	    evbuffer_get_length(one));

	evbuffer_add(js, "{\"cell_id\":", 11);
	worker_json_quote(js, cell_id, strlen(cell_id));
	if (st->version != NULL) {
		evbuffer_add(js, ",\"version\":", 11);
		worker_json_quote(js, st->version, strlen(st->version));
	}
	worker_output_num(js, ",\"index\":", index);
	evbuffer_add(js, ",\"in\":", 6);
	worker_json_quote(js, where, strlen(where));
	if (output >= 0)
		worker_output_num(js, ",\"output_index\":", output);
	worker_output_num(js, ",\"line\":", lineno);
	worker_output_num(js, ",\"column\":", col);
	evbuffer_add(js, ",\"match\":", 9);
	worker_json_quote(js, line + at, mlen);
	evbuffer_add(js, ",\"text\":", 8);
	worker_json_quote(js, line, show);
	evbuffer_add(js, "}", 1);
	size = evbuffer_get_length(js) + 1;
	if (n > st->left || size > st->sleft) {
		/* The result caps (docs/limits.md): no more matches. */
		evbuffer_drain(js, evbuffer_get_length(js));
		evbuffer_drain(one, evbuffer_get_length(one));
		st->capped = 1;
		return;
	}
	m = worker_json_frozen(js);
	st->left -= n;
	if (st->sleft != SIZE_MAX)
		st->sleft -= size;
	evbuffer_add_buffer(st->text, one);
	json_object_array_add(st->matches, m);
}

/* Search one text (source or output), line by line. */
static void
tool_search_cells_text(struct tool_search_cells *st, const char *cell_id,
    int index, const char *where, int output, const char *s, size_t len)
{
	const char	*line, *nl, *p;
	char		*copy;
	size_t		 llen, from, mlen;
	regmatch_t	 rm;
	int		 lineno = 0, flags;

	for (line = s; line <= s + len; line = nl + 1) {
		lineno++;
		nl = memchr(line, '\n', (size_t)(s + len - line));
		if (nl == NULL)
			nl = s + len;
		llen = (size_t)(nl - line);
		if (!st->regex) {
			for (from = 0; (p = tool_search_cells_find(st, line,
			    llen, from, &mlen)) != NULL;
			    from = (size_t)(p - line) + mlen)
				tool_search_cells_match(st, cell_id, index,
				    where, output, lineno, line, llen,
				    (size_t)(p - line), mlen);
		} else {
			copy = xmalloc(llen + 1);
			memcpy(copy, line, llen);
			copy[llen] = '\0';
			from = 0;
			flags = 0;
			while (from <= llen && regexec(&st->re, copy + from, 1,
			    &rm, flags) == 0) {
				tool_search_cells_match(st, cell_id, index,
				    where, output, lineno, line, llen,
				    from + (size_t)rm.rm_so,
				    (size_t)(rm.rm_eo - rm.rm_so));
				from += rm.rm_eo > rm.rm_so ?
				    (size_t)rm.rm_eo : (size_t)rm.rm_so + 1;
				flags = REG_NOTBOL;
			}
			free(copy);
		}
		if (nl == s + len)
			break;
	}
}

/* Add a str, or the strs of an array (each then sep, if any), to b. */
static void
tool_search_cells_join(struct evbuffer *b, const msgpack_object *v,
    const char *sep)
{
	const msgpack_object	*p;
	uint32_t		 k;

	if (v->type == MSGPACK_OBJECT_STR) {
		evbuffer_add(b, v->via.str.ptr, v->via.str.size);
		return;
	}
	if (v->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (k = 0; k < v->via.array.size; k++) {
		p = &v->via.array.ptr[k];
		if (p->type != MSGPACK_OBJECT_STR)
			continue;
		evbuffer_add(b, p->via.str.ptr, p->via.str.size);
		if (sep != NULL)
			evbuffer_add(b, sep, strlen(sep));
	}
}

/*
 * The text outputs of a cell, ANSI stripped: stream text, an error's
 * traceback, or a result's text/plain, read from the cell as sent.
 */
static void
tool_search_cells_outputs(struct tool_search_cells *st, const char *cell_id,
    int index, const msgpack_object *outs)
{
	const msgpack_object	*o, *v;
	struct evbuffer		*b;
	const char		*type;
	char			*joined, *clean;
	size_t			 len, tlen, clen;
	uint32_t		 i;
	int			 error;

	if (outs == NULL || outs->type != MSGPACK_OBJECT_ARRAY)
		return;
	b = evbuffer_new();
	for (i = 0; i < outs->via.array.size; i++) {
		o = &outs->via.array.ptr[i];
		if ((type = proto_get_str(o, "output_type", &tlen)) == NULL)
			continue;
		error = tlen == 5 && memcmp(type, "error", 5) == 0;
		if (tlen == 6 && memcmp(type, "stream", 6) == 0)
			v = proto_get(o, "text");
		else if (error)
			v = proto_get(o, "traceback");
		else
			v = proto_get(proto_get_map(o, "data"), "text/plain");
		if (v == NULL)
			continue;
		tool_search_cells_join(b, v, error ? "\n" : NULL);
		len = evbuffer_get_length(b);
		joined = xmalloc(len + 1);
		evbuffer_remove(b, joined, len);
		joined[len] = '\0';
		clean = worker_output_strip_ansi(joined, len, &clen);
		tool_search_cells_text(st, cell_id, index, "output", (int)i,
		    clean, clen);
		free(clean);
		free(joined);
	}
	evbuffer_free(b);
}

/* A str field of a cell as a NUL-terminated copy (caller frees), or NULL. */
static char *
tool_search_cells_field(const msgpack_object *cell, const char *key)
{
	const char	*s;
	size_t		 len;

	if ((s = proto_get_str(cell, key, &len)) == NULL ||
	    memchr(s, '\0', len) != NULL)
		return (NULL);
	return (xstrndup(s, len));
}

static void
tool_search_cells_done(struct worker_call *call, struct worker_room *room,
    struct worker_nb *reply)
{
	struct tool_search_cells	 st;
	struct json_object		*args = worker_call_args(call);
	const msgpack_object		*cell;
	struct json_object		*sc;
	const char			*in, *src;
	size_t				 i, slen;
	char				*s, *id, *version, errbuf[256];
	int				 r, srcs, outs, max;

	memset(&st, 0, sizeof st);
	st.query = json_object_get_string(json_object_object_get(args,
	    "query"));
	st.qlen = (size_t)json_object_get_string_len(json_object_object_get(
	    args, "query"));
	worker_args_bool(args, "regex", 0, &st.regex, &s);
	worker_args_bool(args, "ignore_case", 0, &st.icase, &s);
	worker_args_uint(args, "max_matches", TOOL_SEARCH_DEFAULT, 1,
	    TOOL_SEARCH_MAX, &max, &s);
	st.max = max;
	/* A caller who names max_matches raised the result cap. */
	st.left = json_object_object_get(args, "max_matches") != NULL ?
	    SIZE_MAX : WORKER_RESULT_CAP;
	st.sleft = st.left == SIZE_MAX ? SIZE_MAX : WORKER_STRUCT_CAP - 1000;
	worker_args_string(args, "in", 0, &in, &s);
	if (in == NULL)
		in = "all";
	srcs = strcmp(in, "outputs") != 0;
	outs = strcmp(in, "source") != 0;
	if (st.regex && (r = regcomp(&st.re, st.query, REG_EXTENDED |
	    (st.icase ? REG_ICASE : 0))) != 0) {
		regerror(r, &st.re, errbuf, sizeof errbuf);
		worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
		    "query is not a valid POSIX extended regex: %s", errbuf);
		return;
	}
	st.matches = json_object_new_array();
	st.text = evbuffer_new();
	st.one = evbuffer_new();
	st.js = evbuffer_new();
	/* Read from the cells as sent: a search decodes none of them. */
	for (i = 0; (cell = worker_nb_packed(reply, i)) != NULL; i++) {
		if ((id = tool_search_cells_field(cell, "cell_id")) == NULL)
			continue;
		version = tool_search_cells_field(cell, "version");
		st.version = version;
		if (srcs) {
			if ((src = proto_get_str(cell, "source", &slen)) ==
			    NULL)
				/* Not as the daemon sends it: as a tool reads it. */
				src = worker_output_source(worker_nb_cell(reply,
				    i), &slen);
			tool_search_cells_text(&st, id, (int)i, "source", -1,
			    src, slen);
		}
		if (outs)
			tool_search_cells_outputs(&st, id, (int)i,
			    proto_get_array(cell, "outputs"));
		free(version);
		free(id);
	}
	if (st.regex)
		regfree(&st.re);
	evbuffer_free(st.one);
	evbuffer_free(st.js);
	sc = json_object_new_object();
	json_object_object_add(sc, "matches", st.matches);
	json_object_object_add(sc, "total", json_object_new_int(st.total));
	json_object_object_add(sc, "truncated", json_object_new_boolean(
	    st.total > (int)json_object_array_length(st.matches)));
	if (st.total == 0)
		evbuffer_add_printf(st.text, "no match for %s%s%s in %s",
		    st.regex ? "/" : "\"", st.query, st.regex ? "/" : "\"",
		    in);
	else if (st.total > (int)json_object_array_length(st.matches))
		evbuffer_add_printf(st.text, "[%zu of %d matches shown%s; "
		    "raise max_matches or narrow the query]",
		    json_object_array_length(st.matches), st.total,
		    st.capped ? " (the 10,000-character result cap)" : "");
	s = worker_output_take(st.text);
	worker_call_result(call, s, sc);
	free(s);
}

static void
tool_search_cells(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "query", "regex",
		"in", "ignore_case", "max_matches", NULL
	};
	struct json_object		*args = worker_call_args(call);
	struct worker_handle		*h;
	const char			*q, *in;
	char				*msg = NULL;
	int				 b, n;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "query", 1, &q, &msg) != 0 ||
	    worker_args_string(args, "in", 0, &in, &msg) != 0 ||
	    worker_args_bool(args, "ignore_case", 0, &b, &msg) != 0 ||
	    worker_args_bool(args, "regex", 0, &b, &msg) != 0 ||
	    worker_args_uint(args, "max_matches", TOOL_SEARCH_DEFAULT, 1,
	    TOOL_SEARCH_MAX, &n, &msg) != 0)
		goto bad;
	if (*q == '\0' || strlen(q) != (size_t)json_object_get_string_len(
	    json_object_object_get(args, "query"))) {
		xasprintf(&msg, "query must be a non-empty string without NUL");
		goto bad;
	}
	if (in != NULL && strcmp(in, "source") != 0 &&
	    strcmp(in, "outputs") != 0 && strcmp(in, "all") != 0) {
		xasprintf(&msg, "in must be source, outputs or all");
		goto bad;
	}
	if (b && worker_args_bool(args, "regex", 0, &b, &msg) == 0 && b) {
		regex_t	re;
		char	errbuf[256];
		int	r;

		if ((r = regcomp(&re, q, REG_EXTENDED)) != 0) {
			regerror(r, &re, errbuf, sizeof errbuf);
			xasprintf(&msg, "query is not a valid POSIX extended "
			    "regex: %s", errbuf);
			goto bad;
		}
		regfree(&re);
	}
	if ((h = worker_call_target(call)) == NULL)
		return;
	worker_call_room_get(call, worker_attach_room(h),
	    tool_search_cells_done);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_search_cells_entry = {
	.name = "search_cells",
	.description = "Find text in sources and outputs (literal, or a POSIX "
	    "regex per line with regex:true): the cell_id, line number, column "
	    "and text of each match.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"query\":{\"type\":\"string\",\"minLength\":1},"
	    "\"regex\":{\"type\":\"boolean\"},"
	    "\"in\":{\"type\":\"string\",\"enum\":[\"source\",\"outputs\","
	    "\"all\"]},"
	    "\"ignore_case\":{\"type\":\"boolean\"},"
	    "\"max_matches\":{\"type\":\"integer\",\"minimum\":1,"
	    "\"maximum\":1000}},\"required\":[\"query\"]}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"matches\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"cell_id\":{\"type\":\"string\"},"
	    "\"index\":{\"type\":\"integer\"},"
	    "\"in\":{\"type\":\"string\",\"enum\":[\"source\",\"output\"]},"
	    "\"output_index\":{\"type\":\"integer\"},"
	    "\"line\":{\"type\":\"integer\"},"
	    "\"column\":{\"type\":\"integer\"},"
	    "\"match\":{\"type\":\"string\"},"
	    "\"text\":{\"type\":\"string\"}}}},"
	    "\"total\":{\"type\":\"integer\"},"
	    "\"truncated\":{\"type\":\"boolean\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_search_cells,
};
