/* SPDX-License-Identifier: ISC */
/*
 * tool-inspect-notebook.c: a bounded read of a notebook: an outline, the
 * sources, the outputs or all, for chosen cells or a window of them, with
 * per-cell caps.  Returns a cursor for later change observation.  A wait
 * that saw every change since its cursor, the last with the content
 * (ROOM_CHANGED_CONTENT), answers from them without asking the daemon
 * again (docs/decisions/031).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define TOOL_INSPECT_COUNT_DEFAULT	25
#define TOOL_INSPECT_COUNT_MAX		100
#define TOOL_INSPECT_SOURCE_DEFAULT	4000
#define TOOL_INSPECT_OUTPUT_DEFAULT	2000
#define TOOL_INSPECT_CHARS_MAX		12000	/* a caller may raise a cap to */

struct tool_inspect_notebook {
	struct worker_call	*call;
	struct worker_room	*room;
	char			*handle;	/* for the cell resource */
	struct json_object	*cell_ids;	/* borrowed, or NULL */
	int			 source;	/* the view shows sources */
	int			 outputs;	/* the view shows outputs */
	const char		*output_mode;
	int			 start, count;
	int			 start_line, end_line;
	int			 max_source, max_output;
	const char		*after;
	int64_t			 after_seq;
	int			 resync;	/* cursor of another daemon */
	int			 wait_ms;
	int			 waited;
	int64_t			 deadline;	/* of the wait, mono ms */
	int			 mask;		/* WORKER_CHANGES_* */
	int64_t			 seen_seq;	/* listed, none asked for */
	int64_t			 skip_seq;	/* an event not asked for */
	size_t			 skipped;
	int64_t			 next_seq;	/* of the change it expects */
	int			 gapless;	/* saw each change since */
	struct worker_room_watch *watch;
	struct event		*timer;
	struct worker_nb	*content;	/* last ROOM_CONTENT */
};

static void	tool_inspect_notebook_get(struct tool_inspect_notebook *);
static void	tool_inspect_notebook_lines(const char *, size_t, int, int,
		    size_t *, size_t *);
static struct json_object	*tool_inspect_notebook_summary(
		    struct json_object *, struct worker_budget *,
		    struct evbuffer *);
static int	tool_inspect_notebook_source(struct tool_inspect_notebook *,
		    struct json_object *, struct json_object *,
		    struct worker_budget *, struct evbuffer *);
static void	tool_inspect_notebook_charge(struct worker_budget *,
		    struct evbuffer *, size_t);
static int	tool_inspect_notebook_pick(struct tool_inspect_notebook *,
		    const struct worker_nb *, struct json_object *);
static void	tool_inspect_notebook_free(struct tool_inspect_notebook *);
static struct json_object	*tool_inspect_notebook_cell(
		    struct tool_inspect_notebook *, const struct worker_nb *,
		    size_t, struct worker_budget *, struct evbuffer *, size_t,
		    char **);
static void	tool_inspect_notebook_answer(struct tool_inspect_notebook *,
		    const struct worker_nb *, const char *,
		    struct json_object *, const char *);
static void	tool_inspect_notebook_wait(struct tool_inspect_notebook *);
static void	tool_inspect_notebook_progress(struct worker_call *, void *,
		    struct evbuffer *);
static void	tool_inspect_notebook_changes(void *, uint16_t,
		    const msgpack_object *, const char *, const char *);
static void	tool_inspect_notebook_report(struct tool_inspect_notebook *,
		    const msgpack_object *, int64_t);
static void	tool_inspect_notebook_stop(struct tool_inspect_notebook *);
static void	tool_inspect_notebook_seen(struct tool_inspect_notebook *,
		    struct worker_nb *, const struct proto_room_changed *);
static void	tool_inspect_notebook_changed(struct worker_room *,
		    const struct proto_room_changed *, void *);
static void	tool_inspect_notebook_timeout(evutil_socket_t, short, void *);
static void	tool_inspect_notebook_cancel(struct worker_call *, void *);
static void	tool_inspect_notebook_content(void *, struct worker_nb *,
		    const char *, const char *);
static void	tool_inspect_notebook(struct worker_call *);

/* Lines start_line..end_line (1-based, inclusive; 0 = open end). */
static void
tool_inspect_notebook_lines(const char *s, size_t len, int first, int last,
    size_t *off, size_t *n)
{
	size_t	i, begin = 0, end = len;
	int	line = 1;

	if (first > 1) {
		begin = len;
		for (i = 0; i < len; i++) {
			if (s[i] == '\n' && ++line == first) {
				begin = i + 1;
				break;
			}
		}
		line = first;
	}
	if (last > 0) {
		for (i = begin; i < len; i++) {
			if (s[i] == '\n' && line++ == last) {
				end = i;
				break;
			}
		}
	}
	*off = begin;
	*n = end > begin ? end - begin : 0;
}

/* Charge what text gained since it was mark bytes long. */
static void
tool_inspect_notebook_charge(struct worker_budget *b, struct evbuffer *text,
    size_t mark)
{
	size_t	 len, n;
	char	*p;

	len = evbuffer_get_length(text);
	if (len <= mark)
		return;
	p = (char *)evbuffer_pullup(text, -1);
	n = utf8_chars(p + mark, len - mark);
	b->result_left -= n < b->result_left ? n : b->result_left;
}

/* A line per output, while the result's budget lasts. */
static struct json_object *
tool_inspect_notebook_summary(struct json_object *outputs,
    struct worker_budget *b, struct evbuffer *text)
{
	struct json_object	*arr, *o, *s, *d, *v;
	struct json_object_iterator it, end;
	const char		*type;
	struct evbuffer		*line;
	size_t			 i, len;
	char			*p;

	arr = json_object_new_array();
	for (i = 0; outputs != NULL &&
	    json_object_is_type(outputs, json_type_array) &&
	    i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		type = json_object_get_string(json_object_object_get(o,
		    "output_type"));
		if (type == NULL)
			type = "?";
		line = evbuffer_new();
		if (strcmp(type, "stream") == 0) {
			v = json_object_object_get(o, "text");
			evbuffer_add_printf(line, "%s: ",
			    json_object_get_string(json_object_object_get(o,
			    "name")));
			if (json_object_is_type(v, json_type_string)) {
				p = worker_output_strip_ansi(
				    json_object_get_string(v),
				    (size_t)json_object_get_string_len(v),
				    &len);
				worker_output_preview(line, p, len, 120);
				free(p);
			}
		} else if (strcmp(type, "error") == 0) {
			evbuffer_add_printf(line, "error: %s: ",
			    json_object_get_string(json_object_object_get(o,
			    "ename")));
			v = json_object_object_get(o, "evalue");
			p = worker_output_strip_ansi(json_object_get_string(v) ?
			    json_object_get_string(v) : "", v != NULL ?
			    (size_t)json_object_get_string_len(v) : 0, &len);
			worker_output_preview(line, p, len, 120);
			free(p);
		} else {
			evbuffer_add_printf(line, "%s:", type);
			d = json_object_object_get(o, "data");
			if (d != NULL && json_object_is_type(d,
			    json_type_object)) {
				it = json_object_iter_begin(d);
				end = json_object_iter_end(d);
				for (; !json_object_iter_equal(&it, &end);
				    json_object_iter_next(&it))
					evbuffer_add_printf(line, " %s",
					    json_object_iter_peek_name(&it));
				v = json_object_object_get(d, "text/plain");
				if (json_object_is_type(v, json_type_string)) {
					evbuffer_add(line, ": ", 2);
					worker_output_preview(line,
					    json_object_get_string(v),
					    (size_t)json_object_get_string_len(
					    v), 120);
				}
			}
		}
		len = evbuffer_get_length(line);
		if (utf8_chars((char *)evbuffer_pullup(line, -1), len) + 3 >
		    b->result_left) {
			evbuffer_free(line);
			evbuffer_add_printf(text, "  (+%zu more outputs)\n",
			    json_object_array_length(outputs) - i);
			break;
		}
		p = xmalloc(len + 1);
		evbuffer_remove(line, p, len);
		p[len] = '\0';
		evbuffer_free(line);
		evbuffer_add_printf(text, "  %s\n", p);
		b->result_left -= utf8_chars(p, len) + 3;
		s = json_object_new_object();
		json_object_object_add(s, "output_type",
		    json_object_new_string(type));
		json_object_object_add(s, "summary", json_object_new_string(p));
		json_object_array_add(arr, s);
		free(p);
	}
	return (arr);
}

/*
 * The source view of a cell: the asked lines, their head kept within
 * max_source_chars and the result's budget.  Returns whether it was cut.
 */
static int
tool_inspect_notebook_source(struct tool_inspect_notebook *st,
    struct json_object *cell, struct json_object *c, struct worker_budget *b,
    struct evbuffer *text)
{
	const char	*src;
	size_t		 slen, off, len, l, n, cut;
	int		 line;

	src = worker_output_source(cell, &slen);
	tool_inspect_notebook_lines(src, slen, st->start_line, st->end_line,
	    &off, &len);
	l = utf8_chars(src + off, len);
	n = (size_t)st->max_source < b->result_left ?
	    (size_t)st->max_source : b->result_left;
	cut = 0;
	if (l > n) {
		cut = l - n;
		len = utf8_skip(src + off, len, n);
		l = n;
	}
	b->result_left -= l;
	json_object_object_add(c, "source",
	    json_object_new_string_len(src + off, (int)len));
	json_object_object_add(c, "source_truncated",
	    json_object_new_boolean(cut > 0));
	evbuffer_add(text, src + off, len);
	if (len > 0 && src[off + len - 1] != '\n')
		evbuffer_add(text, "\n", 1);
	if (cut > 0) {
		/* Where the next read starts: the line the cut is in. */
		line = st->start_line;
		for (n = 0; n < len; n++)
			line += src[off + n] == '\n';
		evbuffer_add_printf(text, "[... %zu characters of source cut; "
		    "start_line=%d reads on]\n", cut, line);
	}
	return (cut > 0);
}

/*
 * Which cells: the ids asked for, or the start/count window.  Only the
 * cells picked are decoded (worker_nb_cell).
 */
static int
tool_inspect_notebook_pick(struct tool_inspect_notebook *st,
    const struct worker_nb *nb, struct json_object *picked)
{
	struct json_object	*ref;
	int64_t			 idx;
	ssize_t			 found;
	size_t			 i, k, n;

	n = worker_nb_count(nb);
	if (st->cell_ids == NULL) {
		for (i = (size_t)st->start; i < n &&
		    i < (size_t)st->start + (size_t)st->count; i++)
			json_object_array_add(picked, json_object_new_int64(
			    (int64_t)i));
		return (0);
	}
	for (k = 0; k < json_object_array_length(st->cell_ids); k++) {
		ref = json_object_array_get_idx(st->cell_ids, k);
		if (json_object_is_type(ref, json_type_string)) {
			if (json_object_get_string_len(ref) == 0) {
				worker_call_error(st->call,
				    PROTO_E_INVALID_ARGUMENT,
				    "cell_ids[%zu]: a cell_id must not be "
				    "empty", k);
				return (-1);
			}
			found = worker_nb_find(nb, json_object_get_string(ref));
			if (found == -1) {
				worker_call_error(st->call,
				    PROTO_E_CELL_NOT_FOUND,
				    "cell_ids[%zu]: no cell %s in this "
				    "notebook", k, json_object_get_string(ref));
				return (-1);
			}
			idx = (int64_t)found;
		} else {
			idx = json_object_get_int64(ref);
			if (idx < 0 || (uint64_t)idx >= n) {
				worker_call_error(st->call,
				    PROTO_E_CELL_NOT_FOUND,
				    "cell_ids[%zu]: cell index %lld is out of "
				    "range (%zu cells)", k, (long long)idx, n);
				return (-1);
			}
			if (!json_object_is_type(json_object_object_get(
			    worker_nb_cell(nb, (size_t)idx), "cell_id"),
			    json_type_string)) {
				worker_call_error(st->call,
				    PROTO_E_CELL_NOT_FOUND,
				    "cell_ids[%zu]: cell %lld has no cell_id",
				    k, (long long)idx);
				return (-1);
			}
		}
		json_object_array_add(picked, json_object_new_int64(idx));
	}
	return (0);
}

static void
tool_inspect_notebook_free(struct tool_inspect_notebook *st)
{
	worker_room_unwatch(st->watch);
	if (st->timer != NULL)
		event_free(st->timer);
	worker_nb_unref(st->content);
	worker_room_unref(st->room);
	free(st->handle);
	free(st);
}

/*
 * Cell idx of an answer, decoded: its structuredContent, and its text
 * onto text (from mark), charged to budget.  *more is the text a capped
 * output points to (the caller's to free).
 */
static struct json_object *
tool_inspect_notebook_cell(struct tool_inspect_notebook *st,
    const struct worker_nb *reply, size_t idx, struct worker_budget *budget,
    struct evbuffer *text, size_t mark, char **more)
{
	struct json_object	*cell, *c, *ec, *outs, *head;
	const char		*src, *ctype, *run;
	char			*enc;
	size_t			 slen, nouts;
	int			 trunc;

	/* An outline decodes a cell's own fields, not its outputs. */
	if (!st->source && !st->outputs) {
		head = worker_nb_cell_head(reply, idx, &nouts);
		cell = head;
	} else {
		cell = worker_nb_cell(reply, idx);
		head = NULL;
	}
	ctype = json_object_get_string(json_object_object_get(cell,
	    "cell_type"));
	ec = json_object_object_get(cell, "execution_count");
	outs = json_object_object_get(cell, "outputs");
	if (head == NULL)
		nouts = json_object_is_type(outs, json_type_array) ?
		    json_object_array_length(outs) : 0;
	c = json_object_new_object();
	json_object_object_add(c, "index",
	    json_object_new_int64((int64_t)idx));
	json_object_object_add(c, "cell_id", json_object_get(
	    json_object_object_get(cell, "cell_id")));
	json_object_object_add(c, "cell_type", json_object_new_string(
	    ctype != NULL ? ctype : "code"));
	json_object_object_add(c, "execution_count",
	    json_object_get(ec));
	evbuffer_add_printf(text, "[%zu] %s %s", idx,
	    json_object_get_string(json_object_object_get(cell,
	    "cell_id")), ctype != NULL ? ctype : "code");
	if (json_object_is_type(ec, json_type_int))
		evbuffer_add_printf(text, " [%lld]",
		    (long long)json_object_get_int64(ec));
	worker_output_version(cell, c, text);
	/* A cell a run has now: "running" or "queued" (issue 39). */
	if ((run = worker_nb_run_status(reply, json_object_get_string(
	    json_object_object_get(cell, "cell_id")))) != NULL)
		evbuffer_add_printf(text, " %s", run);
	src = worker_output_source(cell, &slen);
	if (!st->source) {
		evbuffer_add(text, ": ", 2);
		worker_output_preview(text, src, slen, 80);
		if (nouts > 0)
			evbuffer_add_printf(text, " (%zu outputs)",
			    nouts);
		evbuffer_add(text, "\n", 1);
		json_object_object_add(c, "outputs_count",
		    json_object_new_int((int)nouts));
		if (run != NULL)
			json_object_object_add(c, "run",
			    json_object_new_string(run));
		tool_inspect_notebook_charge(budget, text, mark);
	} else {
		if (run != NULL)
			json_object_object_add(c, "run",
			    json_object_new_string(run));
		evbuffer_add(text, "\n", 1);
		tool_inspect_notebook_charge(budget, text, mark);
		tool_inspect_notebook_source(st, cell, c, budget,
		    text);
	}
	if (st->outputs) {
		if (strcmp(st->output_mode, "summary") == 0)
			json_object_object_add(c, "outputs",
			    tool_inspect_notebook_summary(outs,
			    budget, text));
		else {
			free(*more);
			enc = worker_resource_encode(
			    json_object_get_string(
			    json_object_object_get(cell, "cell_id")));
			xasprintf(more, "the resource runtimed://"
			    "sessions/%s/cells/%s has them all",
			    st->handle, enc);
			free(enc);
			budget->more = *more;
			budget->cell_cap = (size_t)st->max_output;
			budget->cell_id = json_object_get_string(
			    json_object_object_get(cell, "cell_id"));
			json_object_object_add(c, "outputs",
			    worker_output_cap(outs, budget, text,
			    &trunc, st->call));
			json_object_object_add(c, "truncated",
			    json_object_new_boolean(trunc));
		}
	}
	json_object_put(head);
	return (c);
}

/*
 * Cell idx of an outline from what worker_nb_cell_line read: its line
 * onto text, and its structuredContent written as JSON text (in js, an
 * empty scratch buffer) rather than built, in *len bytes (outlines are
 * most reads: decision 039).  The bytes are those
 * tool_inspect_notebook_cell gives.  Public for bench-hotpath's outline
 * case.
 */
struct json_object *
tool_inspect_notebook_line(size_t idx, const struct worker_nb_line *l,
    struct evbuffer *text, struct evbuffer *js, size_t *len)
{
	struct json_object	*c;
	const msgpack_object	*name;
	const char		*type = "code", *up, *p;
	size_t			 tlen = 4, n, uplen = 0, plen;
	uint32_t		 k;

	if (l->type != NULL) {
		type = l->type->via.str.ptr;
		tlen = l->type->via.str.size;
	}
	/* Pieces added as bytes: a printf per piece costs more than all. */
	worker_output_num(text, "[", (long long)idx);
	evbuffer_add(text, "] ", 2);
	evbuffer_add(text, l->id->via.str.ptr, l->id->via.str.size);
	evbuffer_add(text, " ", 1);
	evbuffer_add(text, type, tlen);
	if (l->has_count) {
		worker_output_num(text, " [", (long long)l->count);
		evbuffer_add(text, "]", 1);
	}
	if (l->version != NULL) {
		evbuffer_add(text, " v", 2);
		evbuffer_add(text, l->version->via.str.ptr,
		    l->version->via.str.size);
	}
	if (l->stale != NULL)
		worker_output_stale_mp(text, l->stale);
	worker_output_by(text, NULL, NULL, l->by_client != NULL ?
	    l->by_client->via.str.ptr : NULL, l->by_client != NULL ?
	    l->by_client->via.str.size : 0, l->by_session != NULL ?
	    l->by_session->via.str.ptr : NULL, l->by_session != NULL ?
	    l->by_session->via.str.size : 0, l->by_disk);
	if (l->run != NULL) {
		evbuffer_add(text, " ", 1);
		evbuffer_add(text, l->run, strlen(l->run));
	}
	evbuffer_add(text, ": ", 2);
	worker_output_preview(text, l->source, l->source_len, 80);
	if (l->nouts == 1)
		evbuffer_add(text, " (1 output)", 11);
	else if (l->nouts > 0) {
		worker_output_num(text, " (", (long long)l->nouts);
		evbuffer_add(text, " outputs)", 9);
	}
	evbuffer_add(text, "\n", 1);

	worker_output_num(js, "{\"index\":", (long long)idx);
	evbuffer_add(js, ",\"cell_id\":", 11);
	worker_json_quote(js, l->id->via.str.ptr, l->id->via.str.size);
	evbuffer_add(js, ",\"cell_type\":", 13);
	worker_json_quote(js, type, tlen);
	if (l->has_count)
		worker_output_num(js, ",\"execution_count\":",
		    (long long)l->count);
	else
		evbuffer_add(js, ",\"execution_count\":null", 23);
	if (l->version != NULL) {
		evbuffer_add(js, ",\"version\":", 11);
		worker_json_quote(js, l->version->via.str.ptr,
		    l->version->via.str.size);
	}
	if (l->stale != NULL) {
		evbuffer_add(js, ",\"stale\":[", 10);
		up = NULL;
		for (k = 0; k < l->stale->via.array.size; k++) {
			name = &l->stale->via.array.ptr[k];
			if (k > 0)
				evbuffer_add(js, ",", 1);
			n = worker_output_stale_reason(name->via.str.ptr,
			    name->via.str.size, &p, &plen);
			worker_json_quote(js, name->via.str.ptr, n);
			if (p != NULL) {
				up = p;
				uplen = plen;
			}
		}
		evbuffer_add(js, "]", 1);
		if (up != NULL) {
			evbuffer_add(js, ",\"upstream\":", 12);
			worker_json_quote(js, up, uplen);
		}
	}
	worker_output_by(NULL, js, NULL, l->by_client != NULL ?
	    l->by_client->via.str.ptr : NULL, l->by_client != NULL ?
	    l->by_client->via.str.size : 0, l->by_session != NULL ?
	    l->by_session->via.str.ptr : NULL, l->by_session != NULL ?
	    l->by_session->via.str.size : 0, l->by_disk);
	worker_output_num(js, ",\"outputs_count\":",
	    (long long)(int)l->nouts);
	if (l->run != NULL) {
		evbuffer_add(js, ",\"run\":", 7);
		worker_json_quote(js, l->run, strlen(l->run));
	}
	evbuffer_add(js, "}", 1);
	*len = evbuffer_get_length(js);
	c = worker_json_frozen(js);
	return (c);
}

/*
 * Answer from reply (ROOM_CONTENT) with outcome and what changed (the
 * changes object and its line of text, or NULL); frees st.
 */
static void
tool_inspect_notebook_answer(struct tool_inspect_notebook *st,
    const struct worker_nb *reply, const char *outcome,
    struct json_object *changes, const char *ctext)
{
	struct json_object		*picked, *out, *c, *sc;
	struct worker_budget		 budget;
	struct worker_nb_line		 line;
	struct evbuffer			*text, *kept, *js = NULL;
	const char			*path;
	char				*s, *more = NULL;
	size_t				 i, n, mark, shown, used = 0, len;
	int64_t				 seq;

	seq = reply->seq;
	picked = json_object_new_array();
	if (tool_inspect_notebook_pick(st, reply, picked) != 0) {
		json_object_put(picked);
		goto out;
	}
	if (strcmp(outcome, "unchanged") == 0 ||
	    strcmp(outcome, "timed_out") == 0) {
		/* Nothing new: the cursor and outcome are the whole answer. */
		json_object_put(picked);
		picked = json_object_new_array();
	}
	n = worker_nb_count(reply);
	path = reply->path;
	text = evbuffer_new();
	sc = json_object_new_object();
	if (changes != NULL)
		json_object_object_add(sc, "changes", json_object_get(changes));
	/* A plain read is its cells; a cursor's read says its outcome. */
	if (strcmp(outcome, "baseline") == 0) {
		evbuffer_add_printf(text, "%s: %zu cells%s\n", path != NULL ?
		    path : "untitled", n, reply->dirty ? ", unsaved changes" :
		    "");
	} else {
		evbuffer_add_printf(text, "%s: ", outcome);
		if (ctext != NULL)
			evbuffer_add_printf(text, "%s\n", ctext);
		evbuffer_add_printf(text, "notebook %s (%s), %zu cells%s\n",
		    reply->notebook_id, path != NULL ? path : "untitled", n,
		    reply->dirty ? ", unsaved changes" : "");
	}
	worker_output_conflicts(reply->conflicts, sc, text);
	/*
	 * Caps hold in every mode: "full" shows every representation, within
	 * max_output_chars a cell and the result's budget (which a caller's
	 * larger max_output_chars raises for one cell).
	 */
	worker_budget_init(&budget, 0);
	budget.every_mime = strcmp(st->output_mode, "full") == 0;
	budget.original = "inspect_notebook output_mode:\"full\" shows the "
	    "original";
	if ((size_t)st->max_output > budget.result_left)
		budget.result_left = (size_t)st->max_output;

	out = json_object_new_array();
	for (i = 0; i < json_object_array_length(picked); i++) {
		size_t idx = (size_t)json_object_get_int64(
		    json_object_array_get_idx(picked, i));

		if (budget.result_left == 0)
			break;
		mark = evbuffer_get_length(text);
		if (!st->source && !st->outputs &&
		    worker_nb_cell_line(reply, idx, &line) == 0) {
			if (js == NULL)
				js = evbuffer_new();
			if (reply->active != NULL) {
				s = xstrndup(line.id->via.str.ptr,
				    line.id->via.str.size);
				line.run = worker_nb_run_status(reply, s);
				free(s);
			}
			c = tool_inspect_notebook_line(idx, &line, text, js,
			    &len);
			tool_inspect_notebook_charge(&budget, text, mark);
			len++;
		} else {
			c = tool_inspect_notebook_cell(st, reply, idx, &budget,
			    text, mark, &more);
			len = worker_json_freeze(c) + 1;
		}
		/*
		 * structuredContent within its cap too: a cell that does not
		 * fit is left for the next call (its text taken back), unless
		 * it is the first.
		 */
		if (json_object_array_length(out) > 0 &&
		    used + len > WORKER_STRUCT_CAP - 1500) {
			json_object_put(c);
			kept = evbuffer_new();
			evbuffer_remove_buffer(text, kept, mark);
			evbuffer_free(text);
			text = kept;
			break;
		}
		used += len;
		json_object_array_add(out, c);
	}
	shown = json_object_array_length(out);
	if (shown < json_object_array_length(picked)) {
		/* The result's budget ran out before the cells asked for. */
		if (st->cell_ids == NULL)
			evbuffer_add_printf(text, "(cells %d-%zu of %zu: the "
			    "%d-character result cap stops here; start=%zu "
			    "reads on)\n", st->start, (size_t)st->start +
			    shown - 1, n, WORKER_RESULT_CAP,
			    (size_t)st->start + shown);
		else
			evbuffer_add_printf(text, "(%zu of the %zu cells "
			    "asked for: the %d-character result cap stops "
			    "here; ask for the rest by cell_ids)\n", shown,
			    json_object_array_length(picked),
			    WORKER_RESULT_CAP);
		json_object_object_add(sc, "cells_truncated",
		    json_object_new_boolean(1));
	} else if (shown > 0 && shown < n && st->cell_ids == NULL)
		evbuffer_add_printf(text, "(cells %d-%zu of %zu; start=%zu "
		    "reads on)\n", st->start, (size_t)st->start + shown - 1,
		    n, (size_t)st->start + shown);
	free(more);
	if (js != NULL)
		evbuffer_free(js);
	json_object_put(picked);

	c = sc;
	json_object_object_add(c, "notebook_id",
	    json_object_new_string(reply->notebook_id));
	json_object_object_add(c, "path", path != NULL ?
	    json_object_new_string(path) : NULL);
	json_object_object_add(c, "dirty",
	    json_object_new_boolean(reply->dirty));
	json_object_object_add(c, "cells", out);
	json_object_object_add(c, "total_cells",
	    json_object_new_int64((int64_t)n));
	json_object_object_add(c, "cursor",
	    worker_output_cursor(st->room, seq));
	json_object_object_add(c, "outcome", json_object_new_string(outcome));
	json_object_object_add(c, "readiness", json_object_new_string(
	    worker_room_alive(st->room) ?
	    worker_output_readiness(reply->kernel_state) : "unavailable"));
	json_object_object_add(c, "kernel", worker_nb_kernel(reply));
	s = worker_output_take(text);
	worker_call_result(st->call, s, c);
	free(s);
out:
	tool_inspect_notebook_free(st);
}

static void
tool_inspect_notebook_changes(void *arg, uint16_t type,
    const msgpack_object *reply, const char *code, const char *msg)
{
	struct tool_inspect_notebook	*st = arg;
	struct proto_room_changes_reply	 m;
	char				 err[256];

	if (code != NULL) {
		worker_call_error(st->call, code, "%s", msg);
		tool_inspect_notebook_free(st);
		return;
	}
	if (type != PROTO_MSG_ROOM_CHANGES_REPLY ||
	    proto_room_changes_reply_unpack(reply, &m, err, sizeof err) != 0 ||
	    m.resync) {
		tool_inspect_notebook_answer(st, st->content,
		    "resync_required", NULL, NULL);
		return;
	}
	tool_inspect_notebook_report(st, m.changes.obj, (int64_t)m.seq);
}

/*
 * Answer from changes (ROOM_CHANGES_REPLY's, or the room's log's) after
 * the cursor, known up to seq; or wait on when none was asked for.
 */
static void
tool_inspect_notebook_report(struct tool_inspect_notebook *st,
    const msgpack_object *changes, int64_t seq)
{
	struct json_object	*sc;
	struct evbuffer		*ctext;
	size_t			 matched;
	int64_t			 upto;
	char			*line;

	/* Changes after the content read are the next answer's. */
	upto = st->content->seq;
	if (seq < upto)
		upto = seq;
	sc = json_object_new_object();
	ctext = evbuffer_new();
	worker_changes_report(sc, changes, st->mask, upto, ctext, &matched);
	if (matched > 0) {
		line = worker_output_take(ctext);
		tool_inspect_notebook_answer(st, st->content, "changed",
		    json_object_object_get(sc, "changes"), line);
		free(line);
		json_object_put(sc);
		return;
	}
	evbuffer_free(ctext);
	json_object_put(sc);
	/* Only changes it did not ask for (an autosave): wait on past them. */
	st->skipped = (size_t)(upto - st->after_seq);
	if (upto > st->seen_seq)
		st->seen_seq = upto;
	if (st->wait_ms > 0 && !worker_call_cancelled(st->call)) {
		tool_inspect_notebook_wait(st);
		return;
	}
	tool_inspect_notebook_answer(st, st->content, "unchanged", NULL,
	    NULL);
}

/* Stop watching and the timer; the wait permit stays until the answer. */
static void
tool_inspect_notebook_stop(struct tool_inspect_notebook *st)
{
	worker_room_unwatch(st->watch);
	st->watch = NULL;
	if (st->timer != NULL) {
		event_free(st->timer);
		st->timer = NULL;
	}
	worker_call_on_cancel(st->call, NULL, NULL);
}

static void
tool_inspect_notebook_changed(struct worker_room *room,
    const struct proto_room_changed *ev, void *arg)
{
	struct tool_inspect_notebook	*st = arg;

	if (ev == NULL) {
		tool_inspect_notebook_stop(st);
		tool_inspect_notebook_answer(st, st->content, "unavailable",
		    NULL, NULL);
		return;
	}
	if ((int64_t)ev->seq <= st->after_seq ||
	    (int64_t)ev->seq <= st->seen_seq)
		return;
	if ((int64_t)ev->seq != st->next_seq)
		st->gapless = 0;
	st->next_seq = (int64_t)ev->seq + 1;
	if (!worker_changes_event(st->mask, ev)) {
		/* Not asked for; the answer's cursor goes past it. */
		st->skip_seq = (int64_t)ev->seq;
		st->skipped++;
		return;
	}
	tool_inspect_notebook_stop(st);
	if (st->gapless && worker_room_content(room) != NULL &&
	    worker_room_content(room)->seq == (int64_t)ev->seq) {
		tool_inspect_notebook_seen(st, worker_room_content(room), ev);
		return;
	}
	tool_inspect_notebook_get(st);
}

/*
 * Answer from the changes the wait saw: those skipped and ev, the one it
 * asked for, with nb, the content just after ev.  ROOM_CHANGES would
 * list the same.
 */
static void
tool_inspect_notebook_seen(struct tool_inspect_notebook *st,
    struct worker_nb *nb, const struct proto_room_changed *ev)
{
	struct json_object	*sc;
	struct evbuffer		*ctext;
	size_t			 matched;
	char			*line;

	sc = json_object_new_object();
	ctext = evbuffer_new();
	worker_changes_report_one(sc, ev, st->skipped, st->mask, ctext,
	    &matched);
	line = worker_output_take(ctext);
	worker_nb_unref(st->content);
	st->content = worker_nb_ref(nb);
	tool_inspect_notebook_answer(st, st->content, "changed",
	    json_object_object_get(sc, "changes"), line);
	free(line);
	json_object_put(sc);
}

static void
tool_inspect_notebook_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct tool_inspect_notebook	*st = arg;

	tool_inspect_notebook_stop(st);
	/* Read again past what was skipped, so the cursor is past it too. */
	if (st->skip_seq > st->content->seq) {
		tool_inspect_notebook_get(st);
		return;
	}
	tool_inspect_notebook_answer(st, st->content, "timed_out", NULL,
	    NULL);
}

/* notifications/cancelled: end the wait, answer nothing. */
static void
tool_inspect_notebook_cancel(struct worker_call *call, void *arg)
{
	struct tool_inspect_notebook	*st = arg;

	tool_inspect_notebook_stop(st);
	worker_call_error(st->call, PROTO_E_BUSY, "cancelled");
	tool_inspect_notebook_free(st);
}

/* What a change wait's progress says. */
static void
tool_inspect_notebook_progress(struct worker_call *call, void *arg,
    struct evbuffer *msg)
{
	struct tool_inspect_notebook	*st = arg;

	evbuffer_add_printf(msg, "waiting for ");
	worker_changes_names(st->mask, msg);
	evbuffer_add_printf(msg, " changes");
	if (st->skipped > 0)
		evbuffer_add_printf(msg, " (%zu other change%s skipped)",
		    st->skipped, st->skipped == 1 ? "" : "s");
}

/* Wait for a change asked for, until the deadline. */
static void
tool_inspect_notebook_wait(struct tool_inspect_notebook *st)
{
	struct timeval	tv;
	int64_t		left;

	if (!st->waited) {
		st->waited = 1;
		st->deadline = util_mono_ms() + st->wait_ms;
	}
	left = st->deadline - util_mono_ms();
	if (left <= 0 || worker_call_cancelled(st->call)) {
		tool_inspect_notebook_answer(st, st->content, "timed_out",
		    NULL, NULL);
		return;
	}
	/* Every change from the next on is seen, unless one came already. */
	st->next_seq = (st->seen_seq > st->content->seq ? st->seen_seq :
	    st->content->seq) + 1;
	if (worker_room_seq(st->room) >= st->next_seq) {
		tool_inspect_notebook_get(st);
		return;
	}
	st->gapless = 1;
	st->watch = worker_room_watch(st->room, tool_inspect_notebook_changed,
	    st);
	worker_room_want(st->watch, worker_changes_kinds(st->mask));
	st->timer = evtimer_new(worker_rpc_base(),
	    tool_inspect_notebook_timeout, st);
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	evtimer_add(st->timer, &tv);
	worker_call_on_cancel(st->call, tool_inspect_notebook_cancel, st);
}

static void
tool_inspect_notebook_content(void *arg, struct worker_nb *reply,
    const char *code, const char *msg)
{
	struct tool_inspect_notebook	*st = arg;
	struct proto_room_changes	 cm;
	struct mpbuf			 b;
	msgpack_sbuffer			 sb;
	msgpack_unpacked		 u;
	int64_t				 seq;

	if (code != NULL) {
		worker_call_error(st->call, code, "%s", msg);
		tool_inspect_notebook_free(st);
		return;
	}
	worker_nb_unref(st->content);
	st->content = worker_nb_ref(reply);
	seq = reply->seq;
	if (st->after == NULL) {
		tool_inspect_notebook_answer(st, reply, "baseline", NULL,
		    NULL);
		return;
	}
	if (st->resync || seq < st->after_seq) {
		tool_inspect_notebook_answer(st, reply, "resync_required",
		    NULL, NULL);
		return;
	}
	if (seq > st->after_seq) {
		/* Recent enough: what changed is in the room's log. */
		msgpack_sbuffer_init(&sb);
		if (worker_room_changes(st->room, st->after_seq, seq,
		    &sb) == 0) {
			msgpack_unpacked_init(&u);
			if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) ==
			    MSGPACK_UNPACK_SUCCESS) {
				tool_inspect_notebook_report(st, &u.data, seq);
				msgpack_unpacked_destroy(&u);
				msgpack_sbuffer_destroy(&sb);
				return;
			}
			msgpack_unpacked_destroy(&u);
		}
		msgpack_sbuffer_destroy(&sb);
		cm.after = (uint64_t)st->after_seq;
		mpbuf_init(&b);
		proto_room_changes_pack(&b.pk, &cm);
		worker_room_request(st->room, PROTO_MSG_ROOM_CHANGES, &b.sb,
		    tool_inspect_notebook_changes, st);
		mpbuf_free(&b);
		return;
	}
	if (st->wait_ms == 0) {
		tool_inspect_notebook_answer(st, reply, "unchanged", NULL,
		    NULL);
		return;
	}
	/* Nothing yet: wait for a ROOM_CHANGED past the cursor. */
	tool_inspect_notebook_wait(st);
}

static void
tool_inspect_notebook_get(struct tool_inspect_notebook *st)
{
	worker_room_get(st->room, tool_inspect_notebook_content, st);
}

static void
tool_inspect_notebook(struct worker_call *call)
{
	static const char *const	 allowed[] = {
		"notebook_handle", "notebook_id", "domain", "view", "cell_ids",
		"start", "count", "start_line", "end_line", "max_source_chars",
		"output_mode", "max_output_chars", "after", "timeout_secs",
		"changes", NULL
	};
	struct json_object		*args = worker_call_args(call), *ids;
	struct tool_inspect_notebook	*st;
	struct worker_handle		*h;
	const char			*view, *mode, *after;
	char				*msg = NULL;
	int				 start, count, sl, el, ms, mo, tmo, r;
	int				 mask;
	size_t				 i;

	if (worker_call_check(call, allowed) != 0)
		return;
	if (worker_args_string(args, "view", 0, &view, &msg) != 0 ||
	    worker_args_string(args, "output_mode", 0, &mode, &msg) != 0 ||
	    worker_args_string(args, "after", 0, &after, &msg) != 0 ||
	    worker_args_uint(args, "start", 0, 0, INT32_MAX, &start,
	    &msg) != 0 ||
	    worker_args_uint(args, "count", TOOL_INSPECT_COUNT_DEFAULT, 1,
	    TOOL_INSPECT_COUNT_MAX, &count, &msg) != 0 ||
	    worker_args_uint(args, "start_line", 1, 1, INT32_MAX, &sl,
	    &msg) != 0 ||
	    worker_args_uint(args, "end_line", 0, 1, INT32_MAX, &el,
	    &msg) != 0 ||
	    worker_args_uint(args, "max_source_chars",
	    TOOL_INSPECT_SOURCE_DEFAULT, 1, TOOL_INSPECT_CHARS_MAX, &ms,
	    &msg) != 0 ||
	    worker_args_uint(args, "max_output_chars",
	    TOOL_INSPECT_OUTPUT_DEFAULT, 1, TOOL_INSPECT_CHARS_MAX, &mo,
	    &msg) != 0 ||
	    worker_args_secs(args, "timeout_secs", 0, &tmo, &msg) != 0 ||
	    worker_changes_parse(args, &mask, &msg) != 0)
		goto bad;
	if (view == NULL)
		view = "outline";
	if (strcmp(view, "outline") != 0 && strcmp(view, "source") != 0 &&
	    strcmp(view, "outputs") != 0 && strcmp(view, "all") != 0) {
		xasprintf(&msg, "view must be outline, source, outputs or all");
		goto bad;
	}
	if (mode == NULL)
		mode = strcmp(view, "outline") == 0 ? "summary" : "text";
	if (strcmp(mode, "summary") != 0 && strcmp(mode, "text") != 0 &&
	    strcmp(mode, "full") != 0) {
		xasprintf(&msg, "output_mode must be summary, text or full");
		goto bad;
	}
	if (el != 0 && el < sl) {
		xasprintf(&msg, "end_line must not be before start_line");
		goto bad;
	}
	if (!json_object_object_get_ex(args, "cell_ids", &ids) ||
	    json_object_is_type(ids, json_type_null))
		ids = NULL;
	if (ids != NULL) {
		if (!json_object_is_type(ids, json_type_array) ||
		    json_object_array_length(ids) == 0 ||
		    json_object_array_length(ids) > TOOL_INSPECT_COUNT_MAX) {
			xasprintf(&msg, "cell_ids must be a list of 1 to %d "
			    "cell references", TOOL_INSPECT_COUNT_MAX);
			goto bad;
		}
		if (json_object_object_get(args, "start") != NULL ||
		    json_object_object_get(args, "count") != NULL) {
			xasprintf(&msg, "give cell_ids or start/count, not "
			    "both");
			goto bad;
		}
		for (i = 0; i < json_object_array_length(ids); i++) {
			if (!json_object_is_type(json_object_array_get_idx(ids,
			    i), json_type_string) &&
			    !json_object_is_type(json_object_array_get_idx(ids,
			    i), json_type_int)) {
				xasprintf(&msg, "cell_ids[%zu] must be a "
				    "cell_id string or a zero-based index", i);
				goto bad;
			}
		}
	}
	if ((h = worker_call_target(call)) == NULL)
		return;

	st = xcalloc(1, sizeof *st);
	st->call = call;
	st->room = worker_attach_room(h);
	worker_room_ref(st->room);
	st->handle = worker_resource_encode(worker_attach_id(h));
	st->cell_ids = ids;
	st->source = strcmp(view, "source") == 0 || strcmp(view, "all") == 0;
	st->outputs = strcmp(view, "outputs") == 0 ||
	    strcmp(view, "all") == 0;
	st->output_mode = mode;
	st->start = start;
	st->count = count;
	st->start_line = sl;
	st->end_line = el;
	st->max_source = ms;
	st->max_output = mo;
	st->after = after;
	st->wait_ms = tmo;
	st->mask = mask;
	if (after != NULL) {
		r = worker_cursor_parse(worker_attach_tag(),
		    worker_room_notebook_id(st->room),
		    worker_room_started_at(st->room), after, &st->after_seq);
		if (r == -1) {
			worker_call_error(call, PROTO_E_INVALID_ARGUMENT,
			    "after is not a cursor this server issued for this "
			    "notebook; pass the cursor of an earlier "
			    "inspect_notebook, or omit after");
			tool_inspect_notebook_free(st);
			return;
		}
		st->resync = (r == 1);
		if (tmo > 0 && !st->resync &&
		    worker_call_wait_acquire(call) != 0) {
			tool_inspect_notebook_free(st);
			return;
		}
		if (tmo > 0 && !st->resync)
			worker_call_wait_bound(call, tmo,
			    tool_inspect_notebook_progress, st);
	} else
		st->wait_ms = 0;
	tool_inspect_notebook_get(st);
	return;
bad:
	worker_call_error(call, PROTO_E_INVALID_ARGUMENT, "%s", msg);
	free(msg);
}

const struct tool_entry tool_inspect_notebook_entry = {
	.name = "inspect_notebook",
	.description = "Read cells: view outline (default), source, outputs "
	    "or all, of cell_ids or start/count (default 25), bounded by "
	    "start_line/end_line and max_*_chars. after=<cursor> reports "
	    "changes since, waiting up to timeout_secs.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"view\":{\"type\":\"string\",\"enum\":[\"outline\",\"source\","
	    "\"outputs\",\"all\"]},"
	    "\"cell_ids\":{\"type\":\"array\",\"items\":{\"type\":[\"string\","
	    "\"integer\"]}},"
	    "\"start\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
	    "\"start_line\":{\"type\":\"integer\",\"minimum\":1},"
	    "\"end_line\":{\"type\":\"integer\",\"minimum\":1},"
	    "\"max_source_chars\":{\"type\":\"integer\",\"minimum\":1,"
	    "\"maximum\":12000},"
	    "\"output_mode\":{\"type\":\"string\",\"enum\":[\"summary\","
	    "\"text\",\"full\"]},"
	    "\"max_output_chars\":{\"type\":\"integer\",\"minimum\":1,"
	    "\"maximum\":12000},"
	    "\"after\":{\"type\":\"string\"},"
	    "\"timeout_secs\":{\"type\":\"number\",\"minimum\":0,"
	    "\"maximum\":50},"
	    "\"changes\":{\"type\":\"array\",\"items\":{\"enum\":["
	    "\"content\",\"outputs\",\"kernel\",\"saves\"]},"
	    "\"description\":\"What ends a wait (default content, outputs, "
	    "kernel).\"}}}",
	.output_schema = "{\"type\":\"object\",\"properties\":{"
	    "\"notebook_id\":{\"type\":\"string\"},"
	    "\"cells\":{\"type\":\"array\"},"
	    "\"total_cells\":{\"type\":\"integer\"},"
	    "\"cursor\":{\"type\":\"string\"},"
	    "\"outcome\":{\"type\":\"string\",\"enum\":[\"baseline\","
	    "\"changed\",\"unchanged\",\"timed_out\",\"resync_required\","
	    "\"unavailable\"]},"
	    "\"changes\":{\"type\":\"object\",\"properties\":{"
	    "\"count\":{\"type\":\"integer\"},"
	    "\"kinds\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	    "\"cell_ids\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\"}},"
	    "\"execution_ids\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\"}},\"truncated\":{\"type\":\"boolean\"}}},"
	    "\"kernel\":{\"type\":\"object\"},"
	    "\"readiness\":{\"type\":\"string\"},"
	    "\"target\":{\"type\":\"object\"}," WORKER_ERROR_PROP "}}",
	.read_only = 1,
	.destructive = 0,
	.idempotent = 1,
	.handler = tool_inspect_notebook,
};
