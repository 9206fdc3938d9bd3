/*
 * room-ipynb.c: .ipynb files (nbformat 4.x) in and out.
 *
 * Loading follows nbformat's reader: multi-line fields stored as lists
 * of lines are joined, orig_nbformat/signature/trusted are dropped.
 * Saving follows nbformat.write byte for byte: lines split as
 * str.splitlines(keepends=True), then json.dumps(indent=1,
 * sort_keys=True, ensure_ascii=False) and a trailing newline.  json-c's
 * printer neither sorts keys nor escapes like Python, hence our own.
 */

#include <sys/types.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* Deep enough for any sane application/json output. */
#define ROOM_IPYNB_MAX_DEPTH	2000

/* Is this a JSON mimetype, kept as is by nbformat? */
static int
room_ipynb_json_mime(const char *mime)
{
	size_t	len = strlen(mime);

	if (strcmp(mime, "application/json") == 0)
		return (1);
	return (strncmp(mime, "application/", 12) == 0 && len >= 5 &&
	    strcmp(mime + len - 5, "+json") == 0);
}

/* Does nbformat split this mimetype's string into lines on write? */
static int
room_ipynb_split_mime(const char *mime)
{
	return (strncmp(mime, "text/", 5) == 0 ||
	    strcmp(mime, "application/javascript") == 0 ||
	    strcmp(mime, "image/svg+xml") == 0);
}

/* A list of strings joined into one string, or NULL. */
static struct json_object *
room_ipynb_join(struct json_object *list)
{
	struct json_object	*item, *s;
	char			*buf = NULL;
	size_t			 len = 0, n, i, total = 0;

	if (!json_object_is_type(list, json_type_array))
		return (NULL);
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		if (!json_object_is_type(item, json_type_string))
			return (NULL);
		total += (size_t)json_object_get_string_len(item);
	}
	buf = xmalloc(total + 1);
	for (i = 0; i < n; i++) {
		item = json_object_array_get_idx(list, i);
		memcpy(buf + len, json_object_get_string(item),
		    (size_t)json_object_get_string_len(item));
		len += (size_t)json_object_get_string_len(item);
	}
	buf[len] = '\0';
	s = json_object_new_string_len(buf, (int)len);
	free(buf);
	return (s);
}

static void
room_ipynb_rejoin_bundle(struct json_object *data)
{
	struct json_object	*s;

	if (!json_object_is_type(data, json_type_object))
		return;
	json_object_object_foreach(data, key, val) {
		if (room_ipynb_json_mime(key))
			continue;
		if ((s = room_ipynb_join(val)) != NULL)
			json_object_object_add(data, key, s);
	}
}

static void
room_ipynb_rejoin_output(struct json_object *out)
{
	struct json_object	*type, *v, *s;

	if (!json_object_is_type(out, json_type_object))
		return;
	if (!json_object_object_get_ex(out, "output_type", &type) ||
	    !json_object_is_type(type, json_type_string))
		return;
	if (strcmp(json_object_get_string(type), "execute_result") == 0 ||
	    strcmp(json_object_get_string(type), "display_data") == 0) {
		if (json_object_object_get_ex(out, "data", &v))
			room_ipynb_rejoin_bundle(v);
	} else if (json_object_object_get_ex(out, "text", &v) &&
	    (s = room_ipynb_join(v)) != NULL)
		json_object_object_add(out, "text", s);
}

/* Parse notebook text.  Returns NULL with *cause set (caller frees). */
struct room_nb *
room_ipynb_parse(const char *data, size_t len, char **cause)
{
	struct json_tokener	*tok;
	struct json_object	*root, *v, *cells, *cell, *src, *o, *outs;
	struct room_nb		*nb = NULL;
	struct room_cell	*c;
	enum room_cell_type	 type;
	enum json_tokener_error	 jerr;
	size_t			 i, ncells, j, used;
	const char		*str;
	char			 id[9];

	if (len > INT32_MAX) {
		xasprintf(cause, "notebook too large");
		return (NULL);
	}
	tok = json_tokener_new_ex(ROOM_IPYNB_MAX_DEPTH);
	root = json_tokener_parse_ex(tok, data, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (root == NULL || jerr != json_tokener_success) {
		xasprintf(cause, "not JSON: %s", json_tokener_error_desc(jerr));
		json_object_put(root);
		return (NULL);
	}
	for (; used < len; used++) {
		if (strchr(" \t\r\n", data[used]) == NULL) {
			xasprintf(cause, "not JSON: trailing data");
			json_object_put(root);
			return (NULL);
		}
	}
	if (!json_object_is_type(root, json_type_object)) {
		xasprintf(cause, "not a notebook (top level is not an object)");
		goto fail;
	}
	if (!json_object_object_get_ex(root, "nbformat", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != 4) {
		xasprintf(cause, "unsupported notebook format (nbformat 4 "
		    "only)");
		goto fail;
	}
	nb = room_nb_create();
	if (json_object_object_get_ex(root, "nbformat_minor", &v) &&
	    json_object_is_type(v, json_type_int))
		nb->nbformat_minor = json_object_get_int(v);
	if (nb->nbformat_minor < 5)
		nb->nbformat_minor = 5;
	if (json_object_object_get_ex(root, "metadata", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			xasprintf(cause, "notebook metadata is not an object");
			goto fail;
		}
		json_object_put(nb->metadata);
		nb->metadata = json_object_get(v);
		json_object_object_del(v, "orig_nbformat");
		json_object_object_del(v, "orig_nbformat_minor");
		json_object_object_del(v, "signature");
	}
	if (!json_object_object_get_ex(root, "cells", &cells) ||
	    !json_object_is_type(cells, json_type_array)) {
		xasprintf(cause, "notebook has no cells list");
		goto fail;
	}
	ncells = json_object_array_length(cells);
	for (i = 0; i < ncells; i++) {
		cell = json_object_array_get_idx(cells, i);
		if (!json_object_is_type(cell, json_type_object) ||
		    !json_object_object_get_ex(cell, "cell_type", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    room_nb_type_parse(json_object_get_string(v),
		    (size_t)json_object_get_string_len(v), &type) != 0) {
			xasprintf(cause, "cell %zu has no known cell_type", i);
			goto fail;
		}
		src = NULL;
		if (json_object_object_get_ex(cell, "source", &v)) {
			if (json_object_is_type(v, json_type_string))
				src = json_object_get(v);
			else if ((src = room_ipynb_join(v)) == NULL) {
				xasprintf(cause, "cell %zu: source is neither "
				    "a string nor a list of strings", i);
				goto fail;
			}
		}
		c = room_nb_cell_create(nb, type,
		    src != NULL ? json_object_get_string(src) : "",
		    src != NULL ? (size_t)json_object_get_string_len(src) : 0);
		json_object_put(src);

		/*
		 * Keep a valid, unique id.  Others get an empty id now and
		 * a minted one once every kept id is known.
		 */
		free(c->id);
		c->id = xstrdup("");
		if (json_object_object_get_ex(cell, "id", &v) &&
		    json_object_is_type(v, json_type_string)) {
			str = json_object_get_string(v);
			if (room_nb_valid_id(str,
			    (size_t)json_object_get_string_len(v)) &&
			    room_nb_find(nb, str, &j) == NULL) {
				free(c->id);
				c->id = xstrdup(str);
			}
		}

		if (json_object_object_get_ex(cell, "metadata", &v) &&
		    json_object_is_type(v, json_type_object)) {
			json_object_put(c->metadata);
			c->metadata = json_object_get(v);
			json_object_object_del(v, "trusted");
		}
		if (json_object_object_get_ex(cell, "attachments", &v) &&
		    json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, akey, aval) {
				(void)akey;
				room_ipynb_rejoin_bundle(aval);
			}
			c->attachments = json_object_get(v);
		}
		if (type != ROOM_CELL_CODE)
			continue;
		if (json_object_object_get_ex(cell, "execution_count", &v) &&
		    json_object_is_type(v, json_type_int))
			c->execution_count = json_object_get_int64(v);
		if (json_object_object_get_ex(cell, "outputs", &outs) &&
		    json_object_is_type(outs, json_type_array)) {
			for (j = 0; j < json_object_array_length(outs); j++) {
				o = json_object_array_get_idx(outs, j);
				room_ipynb_rejoin_output(o);
			}
			json_object_put(c->outputs);
			c->outputs = json_object_get(outs);
		}
	}
	for (i = 0; i < nb->ncells; i++) {
		if (*nb->cells[i]->id != '\0')
			continue;
		room_nb_mint_id(nb, id);
		free(nb->cells[i]->id);
		nb->cells[i]->id = xstrdup(id);
	}
	json_object_put(root);
	return (nb);

fail:
	room_nb_free(nb);
	json_object_put(root);
	return (NULL);
}

/* Read and parse a notebook file. */
struct room_nb *
room_ipynb_read(const char *path, char **cause)
{
	struct room_nb	*nb;
	char		*data, *why = NULL;
	size_t		 len;

	if (util_read_file(path, &data, &len, &why) != 0) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		return (NULL);
	}
	nb = room_ipynb_parse(data, len, &why);
	free(data);
	if (nb == NULL) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
	}
	return (nb);
}

/*
 * Python's str.splitlines(keepends=True) on UTF-8: breaks at \n, \r,
 * \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028 and U+2029.
 */
static struct json_object *
room_ipynb_splitlines(const char *s, size_t len)
{
	struct json_object	*list;
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 start = 0, i = 0, brk;

	list = json_object_new_array();
	while (i < len) {
		brk = 0;
		if (p[i] == '\r')
			brk = (i + 1 < len && p[i + 1] == '\n') ? 2 : 1;
		else if (p[i] == '\n' || p[i] == 0x0b || p[i] == 0x0c ||
		    (p[i] >= 0x1c && p[i] <= 0x1e))
			brk = 1;
		else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] == 0x85)
			brk = 2;
		else if (p[i] == 0xe2 && i + 2 < len && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			brk = 3;
		if (brk == 0) {
			i++;
			continue;
		}
		i += brk;
		json_object_array_add(list,
		    json_object_new_string_len(s + start, (int)(i - start)));
		start = i;
	}
	if (start < len)
		json_object_array_add(list,
		    json_object_new_string_len(s + start, (int)(len - start)));
	return (list);
}

static struct json_object *
room_ipynb_split_string(struct json_object *str)
{
	return (room_ipynb_splitlines(json_object_get_string(str),
	    (size_t)json_object_get_string_len(str)));
}

static struct json_object *
room_ipynb_copy(struct json_object *o)
{
	struct json_object	*c = NULL;

	if (o == NULL)
		return (NULL);
	if (json_object_deep_copy(o, &c, NULL) != 0)
		return (NULL);
	return (c);
}

static void
room_ipynb_split_bundle(struct json_object *data)
{
	if (!json_object_is_type(data, json_type_object))
		return;
	json_object_object_foreach(data, key, val) {
		if (json_object_is_type(val, json_type_string) &&
		    room_ipynb_split_mime(key))
			json_object_object_add(data, key,
			    room_ipynb_split_string(val));
	}
}

/* An output as saved: lines split, transient dropped. */
static struct json_object *
room_ipynb_save_output(struct json_object *out)
{
	struct json_object	*o, *type, *v;
	const char		*t;

	o = room_ipynb_copy(out);
	if (!json_object_is_type(o, json_type_object))
		return (o);
	json_object_object_del(o, "transient");
	if (!json_object_object_get_ex(o, "output_type", &type) ||
	    !json_object_is_type(type, json_type_string))
		return (o);
	t = json_object_get_string(type);
	if (strcmp(t, "execute_result") == 0 ||
	    strcmp(t, "display_data") == 0) {
		if (json_object_object_get_ex(o, "data", &v))
			room_ipynb_split_bundle(v);
	} else if (strcmp(t, "stream") == 0 &&
	    json_object_object_get_ex(o, "text", &v) &&
	    json_object_is_type(v, json_type_string))
		json_object_object_add(o, "text", room_ipynb_split_string(v));
	return (o);
}

/* The whole notebook as the json tree nbformat would dump. */
static struct json_object *
room_ipynb_tree(struct room_nb *nb)
{
	struct json_object	*root, *cells, *cell, *md, *outs, *att;
	struct room_cell	*c;
	size_t			 i, j;

	root = json_object_new_object();
	cells = json_object_new_array();
	for (i = 0; i < nb->ncells; i++) {
		c = nb->cells[i];
		cell = json_object_new_object();
		json_object_object_add(cell, "cell_type",
		    json_object_new_string(room_nb_type_name(c->type)));
		json_object_object_add(cell, "id",
		    json_object_new_string(c->id));
		md = room_ipynb_copy(c->metadata);
		json_object_object_del(md, "trusted");
		json_object_object_add(cell, "metadata", md);
		json_object_object_add(cell, "source",
		    room_ipynb_splitlines(c->source, c->source_len));
		if (c->attachments != NULL && c->type != ROOM_CELL_CODE) {
			att = room_ipynb_copy(c->attachments);
			json_object_object_foreach(att, akey, aval) {
				(void)akey;
				room_ipynb_split_bundle(aval);
			}
			json_object_object_add(cell, "attachments", att);
		}
		if (c->type == ROOM_CELL_CODE) {
			json_object_object_add(cell, "execution_count",
			    c->execution_count < 0 ? NULL :
			    json_object_new_int64(c->execution_count));
			outs = json_object_new_array();
			for (j = 0; c->outputs != NULL &&
			    j < json_object_array_length(c->outputs); j++)
				json_object_array_add(outs,
				    room_ipynb_save_output(
				    json_object_array_get_idx(c->outputs, j)));
			json_object_object_add(cell, "outputs", outs);
		}
		json_object_array_add(cells, cell);
	}
	json_object_object_add(root, "cells", cells);
	md = room_ipynb_copy(nb->metadata);
	json_object_object_del(md, "orig_nbformat");
	json_object_object_del(md, "orig_nbformat_minor");
	json_object_object_del(md, "signature");
	json_object_object_add(root, "metadata", md);
	json_object_object_add(root, "nbformat", json_object_new_int(4));
	json_object_object_add(root, "nbformat_minor",
	    json_object_new_int(nb->nbformat_minor < 5 ? 5 :
	    nb->nbformat_minor));
	return (root);
}

/* Python json string escaping with ensure_ascii=False. */
static void
room_ipynb_put_string(FILE *f, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		switch (p[i]) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (p[i] < 0x20)
				fprintf(f, "\\u%04x", p[i]);
			else
				fputc(p[i], f);
			break;
		}
	}
	fputc('"', f);
}

/* Python's float repr: shortest round-trip digits, repr's layout. */
static void
room_ipynb_put_double(FILE *f, double d)
{
	char	buf[64], digits[32];
	int	prec, exp10, decpt, nd, i;
	char	*e, *p;

	if (isnan(d)) {
		fputs("NaN", f);
		return;
	}
	if (isinf(d)) {
		fputs(d < 0 ? "-Infinity" : "Infinity", f);
		return;
	}
	if (d == 0) {
		fputs(signbit(d) ? "-0.0" : "0.0", f);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	p = buf;
	if (*p == '-') {
		fputc('-', f);
		p++;
	}
	e = strchr(p, 'e');
	exp10 = atoi(e + 1);
	nd = 0;
	for (; p < e; p++) {
		if (*p != '.')
			digits[nd++] = *p;
	}
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	decpt = exp10 + 1;
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			fputs("0.", f);
			for (i = 0; i < -decpt; i++)
				fputc('0', f);
			fputs(digits, f);
		} else if (decpt < nd) {
			fwrite(digits, 1, (size_t)decpt, f);
			fputc('.', f);
			fputs(digits + decpt, f);
		} else {
			fputs(digits, f);
			for (i = nd; i < decpt; i++)
				fputc('0', f);
			fputs(".0", f);
		}
		return;
	}
	fputc(digits[0], f);
	if (nd > 1) {
		fputc('.', f);
		fputs(digits + 1, f);
	}
	fprintf(f, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
}

static int
room_ipynb_key_cmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

static void
room_ipynb_indent(FILE *f, int level)
{
	fputc('\n', f);
	while (level-- > 0)
		fputc(' ', f);
}

/* json.dumps(indent=1, sort_keys=True, separators=(",", ": ")). */
static void
room_ipynb_put(FILE *f, struct json_object *o, int level)
{
	const char	**keys;
	size_t		  n, i;
	int64_t		  v;

	switch (json_object_get_type(o)) {
	case json_type_null:
		fputs("null", f);
		break;
	case json_type_boolean:
		fputs(json_object_get_boolean(o) ? "true" : "false", f);
		break;
	case json_type_int:
		v = json_object_get_int64(o);
		if (v == INT64_MAX)
			fprintf(f, "%llu",
			    (unsigned long long)json_object_get_uint64(o));
		else
			fprintf(f, "%lld", (long long)v);
		break;
	case json_type_double:
		room_ipynb_put_double(f, json_object_get_double(o));
		break;
	case json_type_string:
		room_ipynb_put_string(f, json_object_get_string(o),
		    (size_t)json_object_get_string_len(o));
		break;
	case json_type_array:
		n = json_object_array_length(o);
		if (n == 0) {
			fputs("[]", f);
			break;
		}
		fputc('[', f);
		for (i = 0; i < n; i++) {
			if (i != 0)
				fputc(',', f);
			room_ipynb_indent(f, level + 1);
			room_ipynb_put(f, json_object_array_get_idx(o, i),
			    level + 1);
		}
		room_ipynb_indent(f, level);
		fputc(']', f);
		break;
	case json_type_object:
		n = (size_t)json_object_object_length(o);
		if (n == 0) {
			fputs("{}", f);
			break;
		}
		keys = xreallocarray(NULL, n, sizeof *keys);
		i = 0;
		json_object_object_foreach(o, key, val) {
			(void)val;
			keys[i++] = key;
		}
		qsort(keys, n, sizeof *keys, room_ipynb_key_cmp);
		fputc('{', f);
		for (i = 0; i < n; i++) {
			if (i != 0)
				fputc(',', f);
			room_ipynb_indent(f, level + 1);
			room_ipynb_put_string(f, keys[i], strlen(keys[i]));
			fputs(": ", f);
			room_ipynb_put(f, json_object_object_get(o, keys[i]),
			    level + 1);
		}
		free(keys);
		room_ipynb_indent(f, level);
		fputc('}', f);
		break;
	}
}

/* Any json value in Python's layout, no trailing newline.  Caller frees. */
char *
room_ipynb_json_dump(struct json_object *o, size_t *len)
{
	FILE	*f;
	char	*buf = NULL;

	if ((f = open_memstream(&buf, len)) == NULL)
		fatal("open_memstream");
	room_ipynb_put(f, o, 0);
	if (fclose(f) != 0)
		fatal("open_memstream");
	return (buf);
}

/* The notebook as nbformat.write would write it.  Caller frees. */
char *
room_ipynb_dump(struct room_nb *nb, size_t *len)
{
	struct json_object	*tree;
	FILE			*f;
	char			*buf = NULL;

	tree = room_ipynb_tree(nb);
	if ((f = open_memstream(&buf, len)) == NULL)
		fatal("open_memstream");
	room_ipynb_put(f, tree, 0);
	fputc('\n', f);
	if (fclose(f) != 0)
		fatal("open_memstream");
	json_object_put(tree);
	return (buf);
}

/* Save atomically (temporary file, fsync, rename, fsync directory). */
int
room_ipynb_write(struct room_nb *nb, const char *path, char **cause)
{
	char	*buf;
	size_t	 len;
	int	 rc;

	buf = room_ipynb_dump(nb, &len);
	rc = util_write_atomic(path, buf, len, cause);
	free(buf);
	return (rc);
}

/* Fill kernelspec and language_info for a new notebook, if absent. */
void
room_ipynb_set_kernelspec(struct room_nb *nb, const char *name,
    const char *display, const char *language)
{
	struct json_object	*ks, *li;

	if (json_object_object_get_ex(nb->metadata, "kernelspec", NULL))
		return;
	ks = json_object_new_object();
	json_object_object_add(ks, "display_name",
	    json_object_new_string(display != NULL ? display : name));
	json_object_object_add(ks, "language",
	    json_object_new_string(language != NULL ? language : "python"));
	json_object_object_add(ks, "name", json_object_new_string(name));
	json_object_object_add(nb->metadata, "kernelspec", ks);
	if (!json_object_object_get_ex(nb->metadata, "language_info", NULL)) {
		li = json_object_new_object();
		json_object_object_add(li, "name", json_object_new_string(
		    language != NULL ? language : "python"));
		json_object_object_add(nb->metadata, "language_info", li);
	}
}
