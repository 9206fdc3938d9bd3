/* SPDX-License-Identifier: ISC */
/*
 * worker-digest.c: a compact readable form of each rich output for the
 * model (docs/decisions/076).  A Plotly or Vega figure is its JSON, a
 * DataFrame an HTML table, a widget a model id: none of it reads well,
 * and most of it is large.  The model is shown a summary instead, headed
 * by what was transformed and how to get the original; the original is
 * untouched (in the notebook, in structuredContent as budget allows, and
 * whole with full_output).  The summary rides in the outputs the reader
 * caps as one more representation, WORKER_DIGEST_MIME, so it is cut and
 * counted as any text is.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define WORKER_DIGEST_DEPTH	3	/* nested arrays walked */
#define WORKER_DIGEST_TRACES	20	/* traces or views listed */
#define WORKER_DIGEST_STR	40	/* characters of a value quoted */
#define WORKER_DIGEST_HTML_TEXT	2000	/* characters of HTML as text */

/* What an array of values holds. */
struct worker_digest_stats {
	size_t		 n;		/* values */
	size_t		 nums, strs, nulls;
	double		 min, max;
	const char	*first, *last;	/* strings */
	const char	*dtype;		/* Plotly's binary arrays */
};

static void	worker_digest_walk(struct json_object *,
		    struct worker_digest_stats *, int);
static void	worker_digest_quote(struct evbuffer *, const char *);
static void	worker_digest_num(struct evbuffer *, double);
static void	worker_digest_range(struct evbuffer *, const char *,
		    const struct worker_digest_stats *);
static const char	*worker_digest_title(struct json_object *);
static void	worker_digest_trace(struct evbuffer *, size_t,
		    struct json_object *);
static void	worker_digest_axes(struct evbuffer *, struct json_object *,
		    int);
static struct json_object	*worker_digest_rows(struct json_object *,
		    struct json_object *, const char **);
static void	worker_digest_vl_view(struct evbuffer *, struct json_object *,
		    struct json_object *, struct json_object *, int, size_t *);
static void	worker_digest_vg_marks(struct evbuffer *, struct json_object *,
		    int, size_t *);
static char	*worker_digest_take(struct evbuffer *);

/* Count and range of the values in v, an array (nested ones walked). */
static void
worker_digest_walk(struct json_object *v, struct worker_digest_stats *st,
    int depth)
{
	struct json_object	*e, *dt, *bd;
	const char		*s;
	size_t			 i, n, len, size;
	double			 d;

	if (json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "dtype", &dt) &&
	    json_object_object_get_ex(v, "bdata", &bd) &&
	    json_object_is_type(bd, json_type_string)) {
		/* Plotly 6's typed arrays: counted, not decoded. */
		st->dtype = json_object_get_string(dt);
		size = st->dtype != NULL && strlen(st->dtype) == 2 &&
		    st->dtype[1] >= '1' && st->dtype[1] <= '8' ?
		    (size_t)(st->dtype[1] - '0') : 1;
		len = (size_t)json_object_get_string_len(bd);
		n = len / 4 * 3;
		s = json_object_get_string(bd);
		if (len > 0 && s[len - 1] == '=')
			n--;
		if (len > 1 && s[len - 2] == '=')
			n--;
		st->n += n / size;
		return;
	}
	if (!json_object_is_type(v, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(v); i++) {
		e = json_object_array_get_idx(v, i);
		switch (json_object_get_type(e)) {
		case json_type_array:
			if (depth < WORKER_DIGEST_DEPTH)
				worker_digest_walk(e, st, depth + 1);
			else
				st->n++;
			break;
		case json_type_int:
		case json_type_double:
			d = json_object_get_double(e);
			st->n++;
			if (!isfinite(d))
				break;
			if (st->nums == 0 || d < st->min)
				st->min = d;
			if (st->nums == 0 || d > st->max)
				st->max = d;
			st->nums++;
			break;
		case json_type_string:
			st->n++;
			st->strs++;
			if (st->first == NULL)
				st->first = json_object_get_string(e);
			st->last = json_object_get_string(e);
			break;
		case json_type_null:
			st->n++;
			st->nulls++;
			break;
		default:
			st->n++;
			break;
		}
	}
}

/* A string value in quotes, cut. */
static void
worker_digest_quote(struct evbuffer *b, const char *s)
{
	size_t	 len = strlen(s), k, i;

	k = utf8_chars(s, len) > WORKER_DIGEST_STR ?
	    utf8_skip(s, len, WORKER_DIGEST_STR - 1) : len;
	evbuffer_add(b, "\"", 1);
	for (i = 0; i < k; i++) {
		/* One line: a newline in a label would read as a new item. */
		if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
			evbuffer_add(b, " ", 1);
		else
			evbuffer_add(b, s + i, 1);
	}
	evbuffer_add_printf(b, "%s\"", k < len ? "\xe2\x80\xa6" : "");
}

static void
worker_digest_num(struct evbuffer *b, double d)
{
	evbuffer_add_printf(b, "%.6g", d);
}

/* "; x 0 to 9999" and the like, for values named name. */
static void
worker_digest_range(struct evbuffer *b, const char *name,
    const struct worker_digest_stats *st)
{
	if (st->n == 0)
		return;
	evbuffer_add_printf(b, "; %s ", name);
	if (st->dtype != NULL) {
		evbuffer_add_printf(b, "%zu binary values (dtype %s; range not "
		    "decoded)", st->n, st->dtype);
		return;
	}
	if (st->nums > 0) {
		worker_digest_num(b, st->min);
		evbuffer_add(b, " to ", 4);
		worker_digest_num(b, st->max);
	}
	if (st->strs > 0) {
		if (st->nums > 0)
			evbuffer_add_printf(b, " and ");
		evbuffer_add_printf(b, "%zu strings ", st->strs);
		worker_digest_quote(b, st->first);
		if (st->strs > 1) {
			evbuffer_add_printf(b, " \xe2\x80\xa6 ");
			worker_digest_quote(b, st->last);
		}
	}
	if (st->nulls > 0)
		evbuffer_add_printf(b, " (%zu null)", st->nulls);
}

/* A title: a string, or an object with text. */
static const char *
worker_digest_title(struct json_object *v)
{
	struct json_object	*t;

	if (json_object_is_type(v, json_type_string))
		return (json_object_get_string(v));
	if (json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "text", &t) &&
	    json_object_is_type(t, json_type_string))
		return (json_object_get_string(t));
	if (json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0 && json_object_is_type(
	    json_object_array_get_idx(v, 0), json_type_string))
		return (json_object_get_string(json_object_array_get_idx(v,
		    0)));
	return (NULL);
}

/* One Plotly trace as a line. */
static void
worker_digest_trace(struct evbuffer *b, size_t i, struct json_object *tr)
{
	static const char *const	 keys[] = { "x", "y", "z", "values",
	    "labels", "lat", "lon", "r", "theta", "close" };
	struct worker_digest_stats	 st[sizeof keys / sizeof keys[0]];
	struct json_object		*v;
	const char			*s;
	size_t				 k, points = 0;

	s = jsonget_str(tr, "type", NULL);
	evbuffer_add_printf(b, "- trace %zu: %s", i, s != NULL ? s :
	    "scatter");
	if ((s = jsonget_str(tr, "mode", NULL)) != NULL)
		evbuffer_add_printf(b, " (%s)", s);
	if ((s = jsonget_str(tr, "name", NULL)) != NULL) {
		evbuffer_add(b, " ", 1);
		worker_digest_quote(b, s);
	}
	memset(st, 0, sizeof st);
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		if (json_object_object_get_ex(tr, keys[k], &v))
			worker_digest_walk(v, &st[k], 1);
		if (st[k].n > points)
			points = st[k].n;
	}
	evbuffer_add_printf(b, ": %zu point%s", points, points == 1 ? "" :
	    "s");
	for (k = 0; k < 4; k++)
		worker_digest_range(b, keys[k], &st[k]);
	evbuffer_add(b, "\n", 1);
}

/*
 * Plotly's axes (xaxis, yaxis2, scene.zaxis ...): titles, types and
 * ranges set by hand, a line.
 */
static void
worker_digest_axes(struct evbuffer *b, struct json_object *layout, int depth)
{
	struct json_object	*r;
	const char		*t, *type;
	int			 first = 1;

	if (!json_object_is_type(layout, json_type_object))
		return;
	json_object_object_foreach(layout, key, val) {
		if (depth == 0 && strncmp(key, "scene", 5) == 0) {
			worker_digest_axes(b, val, 1);
			continue;
		}
		if ((strncmp(key, "xaxis", 5) != 0 && strncmp(key, "yaxis",
		    5) != 0 && strncmp(key, "zaxis", 5) != 0) ||
		    !json_object_is_type(val, json_type_object))
			continue;
		t = worker_digest_title(json_object_object_get(val, "title"));
		type = jsonget_str(val, "type", NULL);
		r = json_object_object_get(val, "range");
		if (t == NULL && type == NULL && r == NULL)
			continue;
		evbuffer_add_printf(b, "%s%s", first ? "axes: " : "; ", key);
		first = 0;
		if (t != NULL) {
			evbuffer_add(b, " ", 1);
			worker_digest_quote(b, t);
		}
		if (type != NULL)
			evbuffer_add_printf(b, " (%s)", type);
		if (json_object_is_type(r, json_type_array) &&
		    json_object_array_length(r) == 2)
			evbuffer_add_printf(b, " range %s to %s",
			    json_object_to_json_string(
			    json_object_array_get_idx(r, 0)),
			    json_object_to_json_string(
			    json_object_array_get_idx(r, 1)));
	}
	if (!first)
		evbuffer_add(b, "\n", 1);
}

/* The text gathered; frees b.  Caller frees. */
static char *
worker_digest_take(struct evbuffer *b)
{
	size_t	 len;
	char	*s;

	len = evbuffer_get_length(b);
	s = xmalloc(len + 1);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	evbuffer_free(b);
	return (s);
}

/* A Plotly figure ({data, layout}) summarized.  Caller frees. */
char *
worker_digest_plotly(struct json_object *fig, const char *orig)
{
	struct evbuffer		*b;
	struct json_object	*data, *layout;
	const char		*t;
	size_t			 i, n;

	b = evbuffer_new();
	data = json_object_object_get(fig, "data");
	layout = json_object_object_get(fig, "layout");
	n = json_object_is_type(data, json_type_array) ?
	    json_object_array_length(data) : 0;
	evbuffer_add_printf(b, "[Plotly figure (application/vnd.plotly.v1+"
	    "json) as a summary: trace types, points, ranges, axes; %s]\n",
	    orig);
	if ((t = worker_digest_title(json_object_object_get(layout,
	    "title"))) != NULL) {
		evbuffer_add_printf(b, "title: ");
		worker_digest_quote(b, t);
		evbuffer_add(b, "\n", 1);
	}
	worker_digest_axes(b, layout, 0);
	evbuffer_add_printf(b, "%zu trace%s\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n && i < WORKER_DIGEST_TRACES; i++)
		worker_digest_trace(b, i, json_object_array_get_idx(data, i));
	if (n > WORKER_DIGEST_TRACES)
		evbuffer_add_printf(b, "- (%zu more traces)\n",
		    n - WORKER_DIGEST_TRACES);
	return (worker_digest_take(b));
}

/*
 * The rows of a Vega-Lite view's data: inline values, or a named data
 * set of the spec's datasets; NULL with *where saying where they are
 * (a URL) when not in the output.
 */
static struct json_object *
worker_digest_rows(struct json_object *data, struct json_object *datasets,
    const char **where)
{
	struct json_object	*v;
	const char		*name;

	*where = NULL;
	if (!json_object_is_type(data, json_type_object))
		return (NULL);
	if (json_object_object_get_ex(data, "values", &v) &&
	    json_object_is_type(v, json_type_array))
		return (v);
	if ((name = jsonget_str(data, "name", NULL)) != NULL &&
	    json_object_object_get_ex(datasets, name, &v) &&
	    json_object_is_type(v, json_type_array))
		return (v);
	*where = jsonget_str(data, "url", NULL);
	return (NULL);
}

/*
 * A Vega-Lite view and the views inside it (layers, concats, facets),
 * a line each and a line a channel; data is what it inherits.
 */
static void
worker_digest_vl_view(struct evbuffer *b, struct json_object *view,
    struct json_object *data, struct json_object *datasets, int depth,
    size_t *views)
{
	static const char *const	 kids[] = { "layer", "hconcat",
	    "vconcat", "concat" };
	struct worker_digest_stats	 st;
	struct json_object		*v, *enc, *rows, *col;
	const char			*mark, *t, *where, *field;
	size_t				 i, k;

	if (!json_object_is_type(view, json_type_object) || depth > 4)
		return;
	if (json_object_object_get_ex(view, "data", &v) && v != NULL)
		data = v;
	rows = worker_digest_rows(data, datasets, &where);
	v = json_object_object_get(view, "mark");
	mark = json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : jsonget_str(v, "type", NULL);
	if (mark != NULL && (*views)++ < WORKER_DIGEST_TRACES) {
		evbuffer_add_printf(b, "%*s- mark %s", depth * 2, "", mark);
		/* The top view's title heads the summary. */
		if (depth > 0 && (t = worker_digest_title(
		    json_object_object_get(view, "title"))) != NULL) {
			evbuffer_add(b, " ", 1);
			worker_digest_quote(b, t);
		}
		if (rows != NULL)
			evbuffer_add_printf(b, ": %zu data rows",
			    json_object_array_length(rows));
		else if (where != NULL) {
			evbuffer_add_printf(b, ": data from ");
			worker_digest_quote(b, where);
			evbuffer_add_printf(b, " (not in the output)");
		} else
			evbuffer_add_printf(b, ": data not in the output");
		evbuffer_add(b, "\n", 1);
		enc = json_object_object_get(view, "encoding");
		if (json_object_is_type(enc, json_type_object)) {
			json_object_object_foreach(enc, ch, e) {
				if (!json_object_is_type(e, json_type_object))
					continue;
				evbuffer_add_printf(b, "%*s  %s:", depth * 2, "",
				    ch);
				if ((field = jsonget_str(e, "field", NULL)) !=
				    NULL) {
					evbuffer_add(b, " ", 1);
					worker_digest_quote(b, field);
				}
				if ((t = jsonget_str(e, "aggregate", NULL)) !=
				    NULL)
					evbuffer_add_printf(b, " %s", t);
				if ((t = jsonget_str(e, "type", NULL)) != NULL)
					evbuffer_add_printf(b, " (%s)", t);
				t = worker_digest_title(json_object_object_get(
				    e, "title"));
				if (t == NULL)
					t = worker_digest_title(
					    json_object_object_get(
					    json_object_object_get(e, "axis"),
					    "title"));
				if (t != NULL) {
					evbuffer_add_printf(b, " title ");
					worker_digest_quote(b, t);
				}
				if (field != NULL && rows != NULL) {
					/* The field's values in the rows. */
					memset(&st, 0, sizeof st);
					col = json_object_new_array();
					for (k = 0; k < json_object_array_length(
					    rows); k++)
						if (json_object_object_get_ex(
						    json_object_array_get_idx(
						    rows, k), field, &v))
							json_object_array_add(
							    col, json_object_get(
							    v));
					worker_digest_walk(col, &st, 1);
					json_object_put(col);
					worker_digest_range(b, "values", &st);
				}
				evbuffer_add(b, "\n", 1);
			}
		}
	}
	for (k = 0; k < sizeof kids / sizeof kids[0]; k++) {
		v = json_object_object_get(view, kids[k]);
		for (i = 0; json_object_is_type(v, json_type_array) &&
		    i < json_object_array_length(v); i++)
			worker_digest_vl_view(b, json_object_array_get_idx(v,
			    i), data, datasets, depth + 1, views);
	}
	if ((v = json_object_object_get(view, "spec")) != NULL)
		worker_digest_vl_view(b, v, data, datasets, depth + 1, views);
}

/* Vega's marks, group marks' marks within, a line each. */
static void
worker_digest_vg_marks(struct evbuffer *b, struct json_object *marks,
    int depth, size_t *views)
{
	struct json_object	*m;
	const char		*type, *from;
	size_t			 i;

	if (!json_object_is_type(marks, json_type_array) || depth > 4)
		return;
	for (i = 0; i < json_object_array_length(marks); i++) {
		m = json_object_array_get_idx(marks, i);
		type = jsonget_str(m, "type", NULL);
		if (type == NULL || (*views)++ >= WORKER_DIGEST_TRACES)
			continue;
		evbuffer_add_printf(b, "%*s- mark %s", depth * 2, "", type);
		from = jsonget_str(json_object_object_get(m, "from"),
		    "data", NULL);
		if (from != NULL) {
			evbuffer_add_printf(b, " from data ");
			worker_digest_quote(b, from);
		}
		evbuffer_add(b, "\n", 1);
		worker_digest_vg_marks(b, json_object_object_get(m, "marks"),
		    depth + 1, views);
	}
}

/*
 * A Vega-Lite or Vega spec (mime says which) summarized: marks,
 * channels, data sizes and ranges, axes, title.  Caller frees.
 */
char *
worker_digest_vega(const char *mime, struct json_object *spec,
    const char *orig)
{
	struct evbuffer		*b;
	struct json_object	*v, *d;
	const char		*t, *where;
	size_t			 i, views = 0;
	int			 lite;

	lite = strncmp(mime, "application/vnd.vegalite.", 25) == 0;
	b = evbuffer_new();
	evbuffer_add_printf(b, "[%s chart (%s) as a summary: marks, "
	    "encodings, data size and ranges; %s]\n", lite ? "Vega-Lite" :
	    "Vega", mime, orig);
	if ((t = worker_digest_title(json_object_object_get(spec,
	    "title"))) != NULL) {
		evbuffer_add_printf(b, "title: ");
		worker_digest_quote(b, t);
		evbuffer_add(b, "\n", 1);
	}
	if (lite) {
		worker_digest_vl_view(b, spec, NULL, json_object_object_get(
		    spec, "datasets"), 0, &views);
		if (views == 0)
			evbuffer_add_printf(b, "no mark in the spec\n");
		else if (views > WORKER_DIGEST_TRACES)
			evbuffer_add_printf(b, "- (%zu more views)\n",
			    views - WORKER_DIGEST_TRACES);
		return (worker_digest_take(b));
	}
	v = json_object_object_get(spec, "data");
	for (i = 0; json_object_is_type(v, json_type_array) &&
	    i < json_object_array_length(v) && i < WORKER_DIGEST_TRACES; i++) {
		d = json_object_array_get_idx(v, i);
		evbuffer_add_printf(b, "data ");
		worker_digest_quote(b, (t = jsonget_str(d, "name", NULL)) !=
		    NULL ? t : "?");
		if (worker_digest_rows(d, NULL, &where) != NULL)
			evbuffer_add_printf(b, ": %zu rows",
			    json_object_array_length(worker_digest_rows(d, NULL,
			    &where)));
		else if (where != NULL) {
			evbuffer_add_printf(b, ": from ");
			worker_digest_quote(b, where);
			evbuffer_add_printf(b, " (not in the output)");
		} else if ((t = jsonget_str(d, "source", NULL)) != NULL) {
			evbuffer_add_printf(b, ": from data ");
			worker_digest_quote(b, t);
		}
		evbuffer_add(b, "\n", 1);
	}
	v = json_object_object_get(spec, "axes");
	for (i = 0; json_object_is_type(v, json_type_array) &&
	    i < json_object_array_length(v) && i < WORKER_DIGEST_TRACES; i++) {
		d = json_object_array_get_idx(v, i);
		evbuffer_add_printf(b, "axis %s", (t = jsonget_str(d,
		    "orient", NULL)) != NULL ? t : "?");
		if ((t = jsonget_str(d, "scale", NULL)) != NULL)
			evbuffer_add_printf(b, " scale %s", t);
		if ((t = worker_digest_title(json_object_object_get(d,
		    "title"))) != NULL) {
			evbuffer_add_printf(b, " title ");
			worker_digest_quote(b, t);
		}
		evbuffer_add(b, "\n", 1);
	}
	worker_digest_vg_marks(b, json_object_object_get(spec, "marks"), 0,
	    &views);
	if (views > WORKER_DIGEST_TRACES)
		evbuffer_add_printf(b, "- (%zu more marks)\n",
		    views - WORKER_DIGEST_TRACES);
	return (worker_digest_take(b));
}

/*
 * An ipywidgets view: what it is, and that its state is not here (the
 * daemon does not keep comm messages, where a widget's state lives);
 * its text/plain, the widget's repr when shown, is the state there is.
 */
char *
worker_digest_widget(struct json_object *view, const char *plain,
    const char *orig)
{
	struct evbuffer	*b;
	const char	*id;

	b = evbuffer_new();
	id = jsonget_str(view, "model_id", NULL);
	evbuffer_add_printf(b, "[ipywidget %s: live state not available "
	    "(runtimed keeps no comm messages); %s; %s]\n", id != NULL ? id :
	    "?", plain != NULL ? "its repr when shown follows" :
	    "no repr was sent", orig);
	if (plain != NULL)
		evbuffer_add_printf(b, "%s\n", plain);
	return (worker_digest_take(b));
}

/*
 * An ipywidgets view whose model's state the agent kept from the
 * kernel's comm messages (decision 089; the output's transient.widget):
 * the model's class and its description, value, index, min, max and
 * option labels, as they were when the view was shown.
 */
char *
worker_digest_widget_state(struct json_object *view, struct json_object *st,
    const char *orig)
{
	static const char *const keys[] = { "description", "value", "index",
	    "min", "max" };
	struct evbuffer		*b;
	struct json_object	*v, *e;
	const char		*id, *name;
	size_t			 i, n, len, k = 0;

	b = evbuffer_new();
	id = jsonget_str(view, "model_id", NULL);
	name = jsonget_str(st, "_model_name", NULL);
	len = name != NULL ? strlen(name) : 0;
	if (len > 5 && strcmp(name + len - 5, "Model") == 0)
		len -= 5;
	evbuffer_add_printf(b, "[ipywidget %.*s%s%s: its state when shown, "
	    "from the kernel's comm messages; %s]\n", (int)len,
	    name != NULL ? name : "", len > 0 ? " " : "", id != NULL ? id :
	    "?", orig);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (!json_object_object_get_ex(st, keys[i], &v))
			continue;
		evbuffer_add_printf(b, "%s%s ", k++ > 0 ? "; " : "", keys[i]);
		if (json_object_is_type(v, json_type_string))
			worker_digest_quote(b, json_object_get_string(v));
		else
			evbuffer_add_printf(b, "%s",
			    json_object_to_json_string_ext(v,
			    JSON_C_TO_STRING_PLAIN |
			    JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	if ((json_object_object_get_ex(st, "_options_labels", &v) ||
	    json_object_object_get_ex(st, "options", &v)) &&
	    json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		evbuffer_add_printf(b, "%soptions ", k++ > 0 ? "; " : "");
		for (i = 0; i < n; i++) {
			e = json_object_array_get_idx(v, i);
			if (i > 0)
				evbuffer_add(b, ", ", 2);
			if (json_object_is_type(e, json_type_string))
				worker_digest_quote(b,
				    json_object_get_string(e));
			else
				evbuffer_add_printf(b, "%s",
				    json_object_to_json_string_ext(e,
				    JSON_C_TO_STRING_PLAIN));
		}
	}
	if (k > 0)
		evbuffer_add(b, "\n", 1);
	return (worker_digest_take(b));
}

/*
 * The summary of a mime bundle, or NULL when it has nothing to
 * summarize (plain text, an image alone).  Caller frees.
 */
char *
worker_digest_bundle(struct json_object *data, const char *orig)
{
	struct json_object	*v, *pv;
	const char		*plain = NULL, *html;
	char			*s = NULL, *t, *p = NULL;
	size_t			 len, plen = 0;
	int			 image = 0, rich = 0, whole = 0, idle;

	if (!json_object_is_type(data, json_type_object) ||
	    json_object_object_get(data, WORKER_DIGEST_MIME) != NULL)
		return (NULL);
	/* Most bundles are text alone: nothing to join for them. */
	json_object_object_foreach(data, m, mv) {
		(void)mv;
		if (strcmp(m, "text/html") == 0 ||
		    strncmp(m, "application/vnd.", 16) == 0)
			rich = 1;
	}
	if (!rich)
		return (NULL);
	if (json_object_object_get_ex(data, "text/plain", &pv) &&
	    (json_object_is_type(pv, json_type_string) ||
	    json_object_is_type(pv, json_type_array))) {
		p = worker_output_join(pv, &plen);
		plain = p;
	}
	json_object_object_foreach(data, mime, val) {
		if (s != NULL)
			break;
		if (strcmp(mime, "image/png") == 0 ||
		    strcmp(mime, "image/jpeg") == 0 ||
		    strcmp(mime, "image/gif") == 0)
			image = 1;
		if (!json_object_is_type(val, json_type_object))
			continue;
		if (strcmp(mime, "application/vnd.plotly.v1+json") == 0)
			s = worker_digest_plotly(val, orig);
		else if ((strncmp(mime, "application/vnd.vegalite.v", 26) == 0 ||
		    strncmp(mime, "application/vnd.vega.v", 22) == 0) &&
		    (len = strlen(mime)) > 5 &&
		    strcmp(mime + len - 5, "+json") == 0)
			s = worker_digest_vega(mime, val, orig);
		else if (strcmp(mime,
		    "application/vnd.jupyter.widget-view+json") == 0)
			s = worker_digest_widget(val, plain, orig);
	}
	if (s == NULL && !image &&
	    json_object_object_get_ex(data, "text/html", &v) &&
	    (json_object_is_type(v, json_type_string) ||
	    json_object_is_type(v, json_type_array))) {
		t = worker_output_join(v, &len);
		html = t;
		/* A text/plain that says nothing: "<... object>". */
		idle = plain == NULL || (plen > 8 && plain[0] == '<' &&
		    strcmp(plain + plen - 8, " object>") == 0);
		s = worker_html_rows(html, len, plain, orig, &whole);
		/*
		 * A whole table beside a real text/plain (pandas' repr of a
		 * small frame) is read as that: it shows the same rows, and
		 * the summary's header would only add characters.
		 */
		if (s != NULL && whole && !idle) {
			free(s);
			s = NULL;
		}
		/* HTML without a table: its text, where text/plain is idle. */
		if (s == NULL && idle) {
			free(p);
			p = worker_html_text(html, len,
			    WORKER_DIGEST_HTML_TEXT);
			if (p != NULL)
				xasprintf(&s, "[HTML as text: tags, "
				    "scripts and styles left out, at most %d "
				    "characters; %s]\n%s\n",
				    WORKER_DIGEST_HTML_TEXT, orig, p);
		}
		free(t);
	}
	free(p);
	return (s);
}

/*
 * outputs with each bundle that has a summary given it as one more
 * representation (WORKER_DIGEST_MIME), which the reader then shows in
 * place of the others; NULL when no output has one.
 */
struct json_object *
worker_digest_view(struct json_object *outputs, const char *orig)
{
	struct json_object	*view = NULL, *o, *copy, *data, *dcopy, *v, *t;
	struct json_object	*w;
	char			*s;
	size_t			 i;

	if (!json_object_is_type(outputs, json_type_array))
		return (NULL);
	if (orig == NULL)
		orig = "get_results full_output:true shows the original";
	for (i = 0; i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		s = NULL;
		if (json_object_is_type(o, json_type_object) &&
		    json_object_object_get_ex(o, "data", &data)) {
			/* A widget view with its model's state kept. */
			if (json_object_is_type(data, json_type_object) &&
			    !json_object_object_get_ex(data,
			    WORKER_DIGEST_MIME, NULL) &&
			    json_object_object_get_ex(data,
			    "application/vnd.jupyter.widget-view+json", &v) &&
			    json_object_is_type(v, json_type_object) &&
			    json_object_object_get_ex(o, "transient", &t) &&
			    json_object_object_get_ex(t, "widget", &w) &&
			    json_object_is_type(w, json_type_object))
				s = worker_digest_widget_state(v, w, orig);
			else
				s = worker_digest_bundle(data, orig);
		}
		if (s == NULL) {
			worker_output_view_put(&view, outputs, i, NULL);
			continue;
		}
		copy = worker_output_copy_but(o, "data");
		dcopy = worker_output_copy_but(data, NULL);
		json_object_object_add(dcopy, WORKER_DIGEST_MIME,
		    json_object_new_string(s));
		json_object_object_add(copy, "data", dcopy);
		worker_output_view_put(&view, outputs, i, copy);
		free(s);
	}
	return (view);
}
