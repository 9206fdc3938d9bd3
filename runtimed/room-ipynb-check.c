/* SPDX-License-Identifier: ISC */
/*
 * room-ipynb-check.c: what nbformat's 4.5 schema says of the outputs and
 * the metadata of a notebook being read, checked as warnings.  nbformat
 * opens such a file and says it is invalid; so does runtimed, which keeps
 * the values as they are (a save writes them back unchanged).  Only what
 * the schema constrains is checked: the four output types and their
 * keys, mimebundles, the notebook's kernelspec, language_info, title and
 * authors, and cells' name, tags, jupyter, collapsed, scrolled,
 * execution and format.  At most ROOM_IPYNB_CHECK_MAX are listed; one
 * more warning counts the rest.
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"
#include "room-ipynb.h"

#define ROOM_IPYNB_CHECK_MAX	20

static void	room_ipynb_check_warn(struct room_ipynb_check *, ssize_t,
		    const char *, const char *, ...) printflike(4, 5);
static int	room_ipynb_check_lines(struct json_object *);
static void	room_ipynb_check_bundle(struct room_ipynb_check *, ssize_t,
		    const char *, const char *, struct json_object *);
static void	room_ipynb_check_string(struct room_ipynb_check *, ssize_t,
		    const char *, const char *, struct json_object *,
		    const char *);

void
room_ipynb_check_init(struct room_ipynb_check *ck, struct room_nb *nb)
{
	memset(ck, 0, sizeof *ck);
	ck->nb = nb;
}

/* One warning: where (a prefix) and what, within the cap. */
static void
room_ipynb_check_warn(struct room_ipynb_check *ck, ssize_t index,
    const char *id, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (ck->n >= ROOM_IPYNB_CHECK_MAX) {
		ck->cut++;
		return;
	}
	ck->n++;
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	room_nb_warn(ck->nb, index, id, NULL, "%s (nbformat's schema)", msg);
	free(msg);
}

/* The rest, counted. */
void
room_ipynb_check_done(struct room_ipynb_check *ck)
{
	if (ck->cut > 0)
		room_nb_warn(ck->nb, -1, NULL, NULL, "%zu more values nbformat's "
		    "schema refuses are not listed", ck->cut);
}

/* A string, or a list of strings (nbformat's multiline_string)? */
static int
room_ipynb_check_lines(struct json_object *v)
{
	size_t	i;

	if (json_object_is_type(v, json_type_string))
		return (1);
	if (!json_object_is_type(v, json_type_array))
		return (0);
	for (i = 0; i < json_object_array_length(v); i++) {
		if (!json_object_is_type(json_object_array_get_idx(v, i),
		    json_type_string))
			return (0);
	}
	return (1);
}

/* key of where must be a string (when present). */
static void
room_ipynb_check_string(struct room_ipynb_check *ck, ssize_t index,
    const char *id, const char *where, struct json_object *obj,
    const char *key)
{
	struct json_object	*v;

	if (json_object_object_get_ex(obj, key, &v) &&
	    !json_object_is_type(v, json_type_string))
		room_ipynb_check_warn(ck, index, id, "%s%s is %s, not a string",
		    where, key, room_ipynb_kind(v));
}

/* A mimebundle: each value text (a string or lines) but JSON types'. */
static void
room_ipynb_check_bundle(struct room_ipynb_check *ck, ssize_t index,
    const char *id, const char *where, struct json_object *b)
{
	if (!json_object_is_type(b, json_type_object)) {
		room_ipynb_check_warn(ck, index, id, "%s is %s, not an object "
		    "of mimetypes", where, room_ipynb_kind(b));
		return;
	}
	json_object_object_foreach(b, mime, v) {
		if (room_ipynb_json_mime(mime) || room_ipynb_check_lines(v))
			continue;
		room_ipynb_check_warn(ck, index, id, "%s[\"%s\"] is %s, not a "
		    "string or a list of strings", where, mime,
		    room_ipynb_kind(v));
	}
}

/* The notebook's metadata (an object). */
void
room_ipynb_check_notebook(struct room_ipynb_check *ck, struct json_object *md)
{
	static const char *const li[] = { "file_extension", "mimetype",
	    "pygments_lexer", NULL };
	struct json_object	*v, *w;
	size_t			 k;

	if (json_object_object_get_ex(md, "kernelspec", &v)) {
		if (!json_object_is_type(v, json_type_object))
			room_ipynb_check_warn(ck, -1, NULL, "metadata.kernelspec "
			    "is %s, not an object", room_ipynb_kind(v));
		else {
			if (!json_object_object_get_ex(v, "name", NULL))
				room_ipynb_check_warn(ck, -1, NULL,
				    "metadata.kernelspec has no name");
			if (!json_object_object_get_ex(v, "display_name", NULL))
				room_ipynb_check_warn(ck, -1, NULL,
				    "metadata.kernelspec has no display_name");
			room_ipynb_check_string(ck, -1, NULL,
			    "metadata.kernelspec.", v, "name");
			room_ipynb_check_string(ck, -1, NULL,
			    "metadata.kernelspec.", v, "display_name");
		}
	}
	if (json_object_object_get_ex(md, "language_info", &v)) {
		if (!json_object_is_type(v, json_type_object))
			room_ipynb_check_warn(ck, -1, NULL, "metadata."
			    "language_info is %s, not an object",
			    room_ipynb_kind(v));
		else {
			if (!json_object_object_get_ex(v, "name", NULL))
				room_ipynb_check_warn(ck, -1, NULL,
				    "metadata.language_info has no name");
			room_ipynb_check_string(ck, -1, NULL,
			    "metadata.language_info.", v, "name");
			for (k = 0; li[k] != NULL; k++)
				room_ipynb_check_string(ck, -1, NULL,
				    "metadata.language_info.", v, li[k]);
			if (json_object_object_get_ex(v, "codemirror_mode",
			    &w) && !json_object_is_type(w, json_type_string) &&
			    !json_object_is_type(w, json_type_object))
				room_ipynb_check_warn(ck, -1, NULL, "metadata."
				    "language_info.codemirror_mode is %s, not a "
				    "string or an object",
				    room_ipynb_kind(w));
		}
	}
	room_ipynb_check_string(ck, -1, NULL, "metadata.", md, "title");
	if (json_object_object_get_ex(md, "authors", &v) &&
	    !json_object_is_type(v, json_type_array))
		room_ipynb_check_warn(ck, -1, NULL, "metadata.authors is %s, "
		    "not a list", room_ipynb_kind(v));
}

/* Cell i's metadata (an object) and attachments (NULL if none). */
void
room_ipynb_check_cell(struct room_ipynb_check *ck, size_t i, const char *id,
    int type, struct json_object *md, struct json_object *attachments)
{
	struct json_object	*v, *t, *u;
	ssize_t			 x = (ssize_t)i;
	char			*where;
	size_t			 k, l;
	const char		*s;

	if (type == ROOM_CELL_UNKNOWN)
		return;
	xasprintf(&where, "cell %zu: metadata.", i);
	if (json_object_object_get_ex(md, "name", &v) &&
	    (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 ||
	    strchr(json_object_get_string(v), '\n') != NULL))
		room_ipynb_check_warn(ck, x, id, "%sname is %s, not a "
		    "non-empty line", where, json_object_is_type(v,
		    json_type_string) ? "an empty string or several lines" :
		    room_ipynb_kind(v));
	if (json_object_object_get_ex(md, "tags", &v)) {
		if (!json_object_is_type(v, json_type_array))
			room_ipynb_check_warn(ck, x, id, "%stags is %s, not a "
			    "list", where, room_ipynb_kind(v));
		else for (k = 0; k < json_object_array_length(v); k++) {
			t = json_object_array_get_idx(v, k);
			if (!json_object_is_type(t, json_type_string) ||
			    json_object_get_string_len(t) == 0 ||
			    strchr(json_object_get_string(t), ',') != NULL) {
				room_ipynb_check_warn(ck, x, id, "%stags[%zu] "
				    "is not a non-empty string without commas",
				    where, k);
				break;
			}
			s = json_object_get_string(t);
			for (l = 0; l < k; l++) {
				u = json_object_array_get_idx(v, l);
				if (json_object_is_type(u, json_type_string) &&
				    strcmp(json_object_get_string(u), s) == 0)
					break;
			}
			if (l < k) {
				room_ipynb_check_warn(ck, x, id, "%stags[%zu] "
				    "repeats \"%s\"", where, k, s);
				break;
			}
		}
	}
	if (json_object_object_get_ex(md, "jupyter", &v) &&
	    !json_object_is_type(v, json_type_object))
		room_ipynb_check_warn(ck, x, id, "%sjupyter is %s, not an "
		    "object", where, room_ipynb_kind(v));
	if (type == ROOM_CELL_CODE) {
		if (json_object_object_get_ex(md, "collapsed", &v) &&
		    !json_object_is_type(v, json_type_boolean))
			room_ipynb_check_warn(ck, x, id, "%scollapsed is %s, "
			    "not a boolean", where, room_ipynb_kind(v));
		if (json_object_object_get_ex(md, "scrolled", &v) &&
		    !json_object_is_type(v, json_type_boolean) &&
		    !(json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), "auto") == 0))
			room_ipynb_check_warn(ck, x, id, "%sscrolled is not "
			    "true, false or \"auto\"", where);
		if (json_object_object_get_ex(md, "execution", &v)) {
			if (!json_object_is_type(v, json_type_object))
				room_ipynb_check_warn(ck, x, id, "%sexecution "
				    "is %s, not an object", where,
				    room_ipynb_kind(v));
			else {
				json_object_object_foreach(v, ek, ev) {
					if (json_object_is_type(ev,
					    json_type_string))
						continue;
					room_ipynb_check_warn(ck, x, id,
					    "%sexecution[\"%s\"] is %s, not a "
					    "string", where, ek,
					    room_ipynb_kind(ev));
					break;
				}
			}
		}
	}
	if (type == ROOM_CELL_RAW)
		room_ipynb_check_string(ck, x, id, where, md, "format");
	free(where);
	if (attachments == NULL)
		return;
	json_object_object_foreach(attachments, name, b) {
		xasprintf(&where, "cell %zu: attachments[\"%s\"]", i, name);
		room_ipynb_check_bundle(ck, x, id, where, b);
		free(where);
	}
}

/* A packed value's kind, as room_ipynb_kind says a json-c one's. */
static const char *
room_ipynb_check_kind(const msgpack_object *v)
{
	switch (v->type) {
	case MSGPACK_OBJECT_NIL:
		return ("null");
	case MSGPACK_OBJECT_BOOLEAN:
		return ("a boolean");
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return ("a number");
	case MSGPACK_OBJECT_STR:
		return ("a string");
	case MSGPACK_OBJECT_ARRAY:
		return ("a list");
	case MSGPACK_OBJECT_MAP:
		return ("an object");
	default:
		return ("a value");
	}
}

/* A packed string, or a list of strings (nbformat's multiline_string)? */
static int
room_ipynb_check_plines(const msgpack_object *v)
{
	uint32_t	i;

	if (v->type == MSGPACK_OBJECT_STR)
		return (1);
	if (v->type != MSGPACK_OBJECT_ARRAY)
		return (0);
	for (i = 0; i < v->via.array.size; i++) {
		if (v->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
			return (0);
	}
	return (1);
}

/* key of a packed where must be a string (when present). */
static void
room_ipynb_check_pstring(struct room_ipynb_check *ck, ssize_t index,
    const char *id, const char *where, const msgpack_object *obj,
    const char *key)
{
	const msgpack_object	*v;

	if ((v = proto_get(obj, key)) != NULL && v->type != MSGPACK_OBJECT_STR)
		room_ipynb_check_warn(ck, index, id, "%s%s is %s, not a string",
		    where, key, room_ipynb_check_kind(v));
}

/* A packed mimebundle, as room_ipynb_check_bundle. */
static void
room_ipynb_check_pbundle(struct room_ipynb_check *ck, ssize_t index,
    const char *id, const char *where, const msgpack_object *b)
{
	const msgpack_object_kv	*kv;
	char			*mime;
	uint32_t		 i;

	if (b->type != MSGPACK_OBJECT_MAP) {
		room_ipynb_check_warn(ck, index, id, "%s is %s, not an object "
		    "of mimetypes", where, room_ipynb_check_kind(b));
		return;
	}
	for (i = 0; i < b->via.map.size; i++) {
		kv = &b->via.map.ptr[i];
		if (room_ipynb_check_plines(&kv->val))
			continue;
		/* Keys packed from json-c are strings without NUL. */
		mime = kv->key.type != MSGPACK_OBJECT_STR ? xstrdup("") :
		    xstrndup(kv->key.via.str.ptr, kv->key.via.str.size);
		if (!room_ipynb_json_mime(mime))
			room_ipynb_check_warn(ck, index, id, "%s[\"%s\"] is %s, "
			    "not a string or a list of strings", where, mime,
			    room_ipynb_check_kind(&kv->val));
		free(mime);
	}
}

/* Output j of code cell i, as it is kept (packed from json-c). */
void
room_ipynb_check_output(struct room_ipynb_check *ck, size_t i,
    const char *id, size_t j, const msgpack_object *o)
{
	static const char *const keys[][4] = {
		{ "execute_result", "data", "metadata", "execution_count" },
		{ "display_data", "data", "metadata", NULL },
		{ "stream", "name", "text", NULL },
		{ "error", "ename", "evalue", "traceback" },
	};
	const msgpack_object	*v, *key;
	ssize_t			 x = (ssize_t)i;
	char			*type = NULL, *pre, *where;
	size_t			 t, k, n = sizeof keys / sizeof keys[0];
	uint32_t		 m;

	xasprintf(&pre, "cell %zu, output %zu: ", i, j);
	if (o->type != MSGPACK_OBJECT_MAP) {
		room_ipynb_check_warn(ck, x, id, "%sit is %s, not an object",
		    pre, room_ipynb_check_kind(o));
		goto out;
	}
	/* Up to a NUL, as json-c's C string of it reads. */
	if ((v = proto_get(o, "output_type")) != NULL &&
	    v->type == MSGPACK_OBJECT_STR)
		type = v->via.str.size == 0 ? xstrdup("") :
		    xstrndup(v->via.str.ptr, v->via.str.size);
	for (t = 0; type != NULL && t < n; t++) {
		if (strcmp(type, keys[t][0]) == 0)
			break;
	}
	if (type == NULL || t == n) {
		room_ipynb_check_warn(ck, x, id, "%soutput_type \"%s\" is not "
		    "execute_result, display_data, stream or error", pre,
		    type != NULL ? type : "(missing)");
		goto out;
	}
	for (k = 1; k < 4 && keys[t][k] != NULL; k++) {
		if (proto_get(o, keys[t][k]) == NULL)
			room_ipynb_check_warn(ck, x, id, "%sa %s output has "
			    "no %s", pre, type, keys[t][k]);
	}
	/* transient has its own warning (room-ipynb.c): it is dropped. */
	for (m = 0; m < o->via.map.size; m++) {
		key = &o->via.map.ptr[m].key;
		if (proto_obj_streq(key, "output_type") ||
		    proto_obj_streq(key, "transient"))
			continue;
		for (k = 1; k < 4 && keys[t][k] != NULL; k++) {
			if (proto_obj_streq(key, keys[t][k]))
				break;
		}
		if (k == 4 || keys[t][k] == NULL)
			room_ipynb_check_warn(ck, x, id, "%s\"%.*s\" is not a "
			    "key of a %s output", pre, key->type ==
			    MSGPACK_OBJECT_STR ? (int)key->via.str.size : 0,
			    key->type == MSGPACK_OBJECT_STR ?
			    key->via.str.ptr : "", type);
	}
	if ((v = proto_get(o, "data")) != NULL) {
		xasprintf(&where, "%sdata", pre);
		room_ipynb_check_pbundle(ck, x, id, where, v);
		free(where);
	}
	if ((v = proto_get(o, "metadata")) != NULL &&
	    v->type != MSGPACK_OBJECT_MAP)
		room_ipynb_check_warn(ck, x, id, "%smetadata is %s, not an "
		    "object", pre, room_ipynb_check_kind(v));
	if ((v = proto_get(o, "execution_count")) != NULL &&
	    v->type != MSGPACK_OBJECT_NIL &&
	    v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		room_ipynb_check_warn(ck, x, id, "%sexecution_count is %s, "
		    "not a count or null", pre, room_ipynb_check_kind(v));
	room_ipynb_check_pstring(ck, x, id, pre, o, "name");
	room_ipynb_check_pstring(ck, x, id, pre, o, "ename");
	room_ipynb_check_pstring(ck, x, id, pre, o, "evalue");
	if ((v = proto_get(o, "text")) != NULL &&
	    !room_ipynb_check_plines(v))
		room_ipynb_check_warn(ck, x, id, "%stext is %s, not a string "
		    "or a list of strings", pre, room_ipynb_check_kind(v));
	if ((v = proto_get(o, "traceback")) != NULL &&
	    (v->type != MSGPACK_OBJECT_ARRAY ||
	    !room_ipynb_check_plines(v)))
		room_ipynb_check_warn(ck, x, id, "%straceback is not a list "
		    "of strings", pre);
out:
	free(type);
	free(pre);
}
