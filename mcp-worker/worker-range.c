/* SPDX-License-Identifier: ISC */
/*
 * worker-range.c: a range of lines of a cell's outputs, for reading a
 * long output on past what one result holds (get_results full_output
 * with start_line and end_line).  Lines are counted through the cell's
 * outputs in order: each stream's text, each traceback line, each
 * bundle's text/plain; what has no text lines (an image, HTML beside
 * text/plain) is left out of a range.  A line is what ends with "\n"
 * (a last line may not).
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_range {
	size_t	 start, end;	/* 1-based, inclusive; end 0: open */
	size_t	 line;		/* lines passed */
};


/* The lines of text v in the range, as a string; NULL if none are. */
static struct json_object *
worker_range_text(struct worker_range *r, struct json_object *v)
{
	struct json_object	*out = NULL;
	const char		*p, *e, *nl, *from = NULL, *to = NULL;
	char			*s;
	size_t			 len;

	s = worker_output_join(v, &len);
	for (p = s, e = s + len; p < e; p = nl) {
		nl = memchr(p, '\n', (size_t)(e - p));
		nl = nl != NULL ? nl + 1 : e;
		r->line++;
		if (r->line < r->start || (r->end != 0 && r->line > r->end))
			continue;
		if (from == NULL)
			from = p;
		to = nl;
	}
	if (from != NULL)
		out = json_object_new_string_len(from, (int)(to - from));
	free(s);
	return (out);
}

/* A copy of o with key set to v (taken). */
static struct json_object *
worker_range_with(struct json_object *o, const char *key,
    struct json_object *v)
{
	struct json_object_iterator	 it, end;
	struct json_object		*copy;
	const char			*k;

	copy = json_object_new_object();
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		k = json_object_iter_peek_name(&it);
		if (strcmp(k, key) != 0)
			json_object_object_add(copy, k, json_object_get(
			    json_object_iter_peek_value(&it)));
	}
	json_object_object_add(copy, key, v);
	return (copy);
}

/*
 * The outputs holding lines start..end (end 0: to the last) of a cell's
 * outputs; *lines gets how many lines they have in all.
 */
struct json_object *
worker_range_view(struct json_object *outputs, size_t start, size_t end,
    size_t *lines)
{
	struct worker_range	 r;
	struct json_object	*view, *o, *v, *t, *tb, *arr, *data;
	const char		*type;
	size_t			 i, k;

	memset(&r, 0, sizeof r);
	r.start = start;
	r.end = end;
	view = json_object_new_array();
	for (i = 0; json_object_is_type(outputs, json_type_array) &&
	    i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		type = json_object_get_string(json_object_object_get(o,
		    "output_type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "stream") == 0) {
			if ((t = worker_range_text(&r, json_object_object_get(
			    o, "text"))) != NULL)
				json_object_array_add(view,
				    worker_range_with(o, "text", t));
		} else if (strcmp(type, "error") == 0) {
			tb = json_object_object_get(o, "traceback");
			arr = json_object_new_array();
			for (k = 0; json_object_is_type(tb, json_type_array) &&
			    k < json_object_array_length(tb); k++) {
				if ((t = worker_range_text(&r,
				    json_object_array_get_idx(tb, k))) != NULL)
					json_object_array_add(arr, t);
			}
			if (json_object_array_length(arr) > 0)
				json_object_array_add(view,
				    worker_range_with(o, "traceback", arr));
			else
				json_object_put(arr);
		} else if (json_object_object_get_ex(o, "data", &data) &&
		    json_object_object_get_ex(data, "text/plain", &v) &&
		    (t = worker_range_text(&r, v)) != NULL) {
			arr = json_object_new_object();
			json_object_object_add(arr, "text/plain", t);
			json_object_array_add(view,
			    worker_range_with(o, "data", arr));
		}
	}
	*lines = r.line;
	return (view);
}
