/* SPDX-License-Identifier: ISC */
/*
 * worker-args.c: tool argument checks.  Pure functions: each returns 0,
 * or -1 with a message (caller frees) that tells the agent what to send.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

static struct json_object	*worker_args_get(struct json_object *,
		    const char *);
static int	worker_args_utf8_valid(const unsigned char *, size_t);

int
worker_args_check(struct json_object *args, const char *const allowed[],
    char **msg)
{
	struct json_object_iterator	 it, end;
	const char			*key;
	char				*list = NULL, *tmp;
	u_int				 i;

	it = json_object_iter_begin(args);
	end = json_object_iter_end(args);
	for (; !json_object_iter_equal(&it, &end);
	    json_object_iter_next(&it)) {
		key = json_object_iter_peek_name(&it);
		for (i = 0; allowed[i] != NULL; i++) {
			if (strcmp(key, allowed[i]) == 0)
				break;
		}
		if (allowed[i] != NULL)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			xasprintf(&tmp, "%s%s%s", list ? list : "",
			    list ? ", " : "", allowed[i]);
			free(list);
			list = tmp;
		}
		xasprintf(msg, "unknown argument '%s'; allowed: %s", key,
		    list ? list : "none");
		free(list);
		return (-1);
	}
	return (0);
}

static struct json_object *
worker_args_get(struct json_object *args, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(args, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return (NULL);
	return (v);
}

int
worker_args_string(struct json_object *args, const char *key, int required,
    const char **out, char **msg)
{
	struct json_object	*v;

	*out = NULL;
	if ((v = worker_args_get(args, key)) == NULL) {
		if (!required)
			return (0);
		xasprintf(msg, "'%s' is required", key);
		return (-1);
	}
	if (!json_object_is_type(v, json_type_string)) {
		xasprintf(msg, "'%s' must be a string", key);
		return (-1);
	}
	*out = json_object_get_string(v);
	return (0);
}

/* Seconds 0..PROTO_WAIT_MAX_MS / 1000, never clamped; result in ms. */
int
worker_args_secs(struct json_object *args, const char *key, int def,
    int *out_ms, char **msg)
{
	struct json_object	*v;
	double			 d;
	const char		*s;
	char			*end;

	*out_ms = def * 1000;
	if ((v = worker_args_get(args, key)) == NULL)
		return (0);
	if (json_object_is_type(v, json_type_int))
		d = (double)json_object_get_int64(v);
	else if (json_object_is_type(v, json_type_double))
		d = json_object_get_double(v);
	else if (json_object_is_type(v, json_type_string)) {
		/* Some clients send numbers as strings. */
		s = json_object_get_string(v);
		errno = 0;
		d = strtod(s, &end);
		if (*s == '\0' || *end != '\0' || errno != 0)
			goto bad;
	} else
		goto bad;
	if (!isfinite(d) || d < 0 || d > PROTO_WAIT_MAX_MS / 1000)
		goto bad;
	*out_ms = (int)(d * 1000);
	return (0);
bad:
	xasprintf(msg, "'%s' must be a number of seconds from 0 to %d", key,
	    PROTO_WAIT_MAX_MS / 1000);
	return (-1);
}

/* Booleans, also as "true"/"false" (some clients send strings). */
int
worker_args_bool(struct json_object *args, const char *key, int def,
    int *out, char **msg)
{
	struct json_object	*v;
	const char		*s;

	*out = def;
	if ((v = worker_args_get(args, key)) == NULL)
		return (0);
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return (0);
	}
	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
			*out = (strcmp(s, "true") == 0);
			return (0);
		}
	}
	xasprintf(msg, "'%s' must be true or false", key);
	return (-1);
}

int
worker_args_uint(struct json_object *args, const char *key, int def,
    int min, int max, int *out, char **msg)
{
	struct json_object	*v;
	int64_t			 n;

	*out = def;
	if ((v = worker_args_get(args, key)) == NULL)
		return (0);
	if (!json_object_is_type(v, json_type_int))
		goto bad;
	n = json_object_get_int64(v);
	if (n < min || n > max)
		goto bad;
	*out = (int)n;
	return (0);
bad:
	xasprintf(msg, "'%s' must be an integer from %d to %d", key, min,
	    max);
	return (-1);
}

/* Well-formed UTF-8: no overlongs, no encoded surrogates, <= U+10FFFF. */
static int
worker_args_utf8_valid(const unsigned char *s, size_t len)
{
	size_t		i = 0, n, k;
	uint32_t	cp;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf) {
			n = 1;
			cp = s[i] & 0x1f;
		} else if (s[i] >= 0xe0 && s[i] <= 0xef) {
			n = 2;
			cp = s[i] & 0x0f;
		} else if (s[i] >= 0xf0 && s[i] <= 0xf4) {
			n = 3;
			cp = s[i] & 0x07;
		} else
			return (0);
		if (len - i <= n)
			return (0);
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return (0);
		i += n + 1;
	}
	return (1);
}

/* Every string and key in a JSON value is well-formed UTF-8. */
int
worker_args_utf8_ok(struct json_object *v)
{
	struct json_object_iterator	 it, end;
	const char			*key;
	size_t				 i;

	switch (json_object_get_type(v)) {
	case json_type_string:
		return (worker_args_utf8_valid((const unsigned char *)
		    json_object_get_string(v),
		    (size_t)json_object_get_string_len(v)));
	case json_type_array:
		for (i = 0; i < json_object_array_length(v); i++) {
			if (!worker_args_utf8_ok(
			    json_object_array_get_idx(v, i)))
				return (0);
		}
		return (1);
	case json_type_object:
		it = json_object_iter_begin(v);
		end = json_object_iter_end(v);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			key = json_object_iter_peek_name(&it);
			if (!worker_args_utf8_valid(
			    (const unsigned char *)key, strlen(key)) ||
			    !worker_args_utf8_ok(
			    json_object_iter_peek_value(&it)))
				return (0);
		}
		return (1);
	default:
		return (1);
	}
}

/*
 * A cell reference: a string is a cell_id (even if all digits); an
 * integer is a zero-based index into cells (the notebook as read at the
 * time of the call).  Returns 0, -1 (invalid_argument) or -2
 * (cell_not_found).  With cells NULL only strings are accepted.
 */
int
worker_args_cellref(struct json_object *ref, struct json_object *cells,
    const char **out, char **msg)
{
	struct json_object	*cell, *id;
	int64_t			 n;
	size_t			 count;

	*out = NULL;
	if (json_object_is_type(ref, json_type_string)) {
		if (json_object_get_string_len(ref) == 0) {
			xasprintf(msg, "a cell_id must not be empty");
			return (-1);
		}
		*out = json_object_get_string(ref);
		return (0);
	}
	if (!json_object_is_type(ref, json_type_int)) {
		xasprintf(msg, "a cell reference is a cell_id string or a "
		    "zero-based index");
		return (-1);
	}
	n = json_object_get_int64(ref);
	count = cells != NULL ? json_object_array_length(cells) : 0;
	if (n < 0 || (uint64_t)n >= count) {
		xasprintf(msg, "cell index %lld is out of range (%zu cells)",
		    (long long)n, count);
		return (-2);
	}
	cell = json_object_array_get_idx(cells, (size_t)n);
	if (!json_object_object_get_ex(cell, "cell_id", &id) ||
	    !json_object_is_type(id, json_type_string)) {
		xasprintf(msg, "cell %lld has no cell_id", (long long)n);
		return (-2);
	}
	*out = json_object_get_string(id);
	return (0);
}

/* A path as the daemon must see it: absolute, from our cwd.  Caller frees. */
char *
worker_args_path(const char *path)
{
	char	*cwd, *out;

	if (*path == '/')
		return (xstrdup(path));
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return (xstrdup(path));
	xasprintf(&out, "%s/%s", cwd, path);
	free(cwd);
	return (out);
}
