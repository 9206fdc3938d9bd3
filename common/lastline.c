/* SPDX-License-Identifier: ISC */
/*
 * lastline.c: the latest line a cell printed, for a change detail (the
 * daemon) and a wait's progress (the worker): the last line of its last
 * output, a stream's text, an error's evalue or a result's text/plain.
 */

#include <string.h>

#include "common.h"

/*
 * The last non-empty line of the last output in outs, at most max
 * characters, cut on a character boundary: its start, and its length in
 * bytes in *len; NULL when there is none.  Points into outs.
 */
const char *
lastline_find(struct json_object *outs, size_t max, size_t *len)
{
	struct json_object	*o, *v, *d;
	const char		*s, *type, *end, *start;
	size_t			 n, chars;

	n = outs != NULL && json_object_is_type(outs, json_type_array) ?
	    json_object_array_length(outs) : 0;
	if (n == 0)
		return (NULL);
	o = json_object_array_get_idx(outs, n - 1);
	type = json_object_get_string(json_object_object_get(o,
	    "output_type"));
	v = NULL;
	if (type != NULL && strcmp(type, "stream") == 0)
		v = json_object_object_get(o, "text");
	else if (type != NULL && strcmp(type, "error") == 0)
		v = json_object_object_get(o, "evalue");
	else if ((d = json_object_object_get(o, "data")) != NULL)
		v = json_object_object_get(d, "text/plain");
	if (v == NULL || !json_object_is_type(v, json_type_string))
		return (NULL);
	s = json_object_get_string(v);
	end = s + json_object_get_string_len(v);
	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (start = end; start > s && start[-1] != '\n'; start--)
		;
	for (*len = 0, chars = 0; start + *len < end && chars < max;
	    chars++) {
		(*len)++;
		while (start + *len < end &&
		    ((unsigned char)start[*len] & 0xc0) == 0x80)
			(*len)++;
	}
	return (*len > 0 ? start : NULL);
}
