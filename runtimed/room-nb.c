/*
 * room-nb.c: a notebook's cells in memory and the atomic edit batch.
 */

#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* An empty nbformat 4.5 notebook. */
struct room_nb *
room_nb_create(void)
{
	struct room_nb	*nb;

	nb = xcalloc(1, sizeof *nb);
	nb->metadata = json_object_new_object();
	nb->nbformat = 4;
	nb->nbformat_minor = 5;
	return (nb);
}

void
room_nb_free(struct room_nb *nb)
{
	size_t	i;

	if (nb == NULL)
		return;
	for (i = 0; i < nb->ncells; i++)
		room_nb_cell_free(nb->cells[i]);
	free(nb->cells);
	json_object_put(nb->metadata);
	free(nb);
}

/* A fresh cell (not yet in any notebook). */
static struct room_cell *
room_nb_cell_new(enum room_cell_type type, const char *id, const char *src,
    size_t srclen)
{
	struct room_cell	*c;

	c = xcalloc(1, sizeof *c);
	c->id = xstrdup(id);
	c->type = type;
	c->source = xmalloc(srclen + 1);
	memcpy(c->source, src, srclen);
	c->source[srclen] = '\0';
	c->source_len = srclen;
	c->metadata = json_object_new_object();
	c->execution_count = -1;
	if (type == ROOM_CELL_CODE)
		c->outputs = json_object_new_array();
	return (c);
}

/* Append a cell with a minted id; the loader fixes the id afterwards. */
struct room_cell *
room_nb_cell_create(struct room_nb *nb, enum room_cell_type type,
    const char *src, size_t srclen)
{
	struct room_cell	*c;
	char			 id[9];

	room_nb_mint_id(nb, id);
	c = room_nb_cell_new(type, id, src, srclen);
	nb->cells = xreallocarray(nb->cells, nb->ncells + 1,
	    sizeof *nb->cells);
	nb->cells[nb->ncells++] = c;
	return (c);
}

void
room_nb_cell_free(struct room_cell *c)
{
	if (c == NULL)
		return;
	free(c->id);
	free(c->source);
	json_object_put(c->metadata);
	json_object_put(c->outputs);
	json_object_put(c->attachments);
	free(c);
}

/* A copy that shares nothing mutable except the outputs array. */
static struct room_cell *
room_nb_cell_clone(const struct room_cell *c)
{
	struct room_cell	*n;

	n = room_nb_cell_new(c->type, c->id, c->source, c->source_len);
	json_object_put(n->metadata);
	n->metadata = NULL;
	if (json_object_deep_copy(c->metadata, &n->metadata, NULL) != 0)
		n->metadata = json_object_new_object();
	n->execution_count = c->execution_count;
	json_object_put(n->outputs);
	n->outputs = json_object_get(c->outputs);
	n->attachments = json_object_get(c->attachments);
	return (n);
}

void
room_nb_clear_outputs(struct room_cell *c)
{
	if (c->type != ROOM_CELL_CODE)
		return;
	json_object_put(c->outputs);
	c->outputs = json_object_new_array();
}

const char *
room_nb_type_name(enum room_cell_type type)
{
	switch (type) {
	case ROOM_CELL_CODE:
		return ("code");
	case ROOM_CELL_MARKDOWN:
		return ("markdown");
	case ROOM_CELL_RAW:
		return ("raw");
	}
	return ("code");
}

int
room_nb_type_parse(const char *s, size_t len, enum room_cell_type *type)
{
	if (len == 4 && memcmp(s, "code", 4) == 0)
		*type = ROOM_CELL_CODE;
	else if (len == 8 && memcmp(s, "markdown", 8) == 0)
		*type = ROOM_CELL_MARKDOWN;
	else if (len == 3 && memcmp(s, "raw", 3) == 0)
		*type = ROOM_CELL_RAW;
	else
		return (-1);
	return (0);
}

/* Change a cell's type, dropping what the new type cannot hold. */
void
room_nb_cell_set_type(struct room_cell *c, enum room_cell_type type)
{
	if (c->type == type)
		return;
	if (type == ROOM_CELL_CODE) {
		json_object_put(c->attachments);
		c->attachments = NULL;
		c->outputs = json_object_new_array();
	} else {
		json_object_put(c->outputs);
		c->outputs = NULL;
	}
	c->execution_count = -1;
	c->type = type;
}

/* nbformat 4.5 cell ids: 1-64 of [A-Za-z0-9_-]. */
int
room_nb_valid_id(const char *id, size_t len)
{
	size_t	i;

	if (len == 0 || len > 64)
		return (0);
	for (i = 0; i < len; i++) {
		if (strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", id[i]) == NULL ||
		    id[i] == '\0')
			return (0);
	}
	return (1);
}

static ssize_t
room_nb_index(struct room_cell **cells, size_t ncells, const char *id,
    size_t len)
{
	size_t	i;

	for (i = 0; i < ncells; i++) {
		if (strlen(cells[i]->id) == len &&
		    memcmp(cells[i]->id, id, len) == 0)
			return ((ssize_t)i);
	}
	return (-1);
}

struct room_cell *
room_nb_find(struct room_nb *nb, const char *id, size_t *idx)
{
	ssize_t	i;

	if ((i = room_nb_index(nb->cells, nb->ncells, id, strlen(id))) < 0)
		return (NULL);
	if (idx != NULL)
		*idx = (size_t)i;
	return (nb->cells[i]);
}

/* Jupyter-like id: 8 lowercase hex digits, unique among cells. */
static void
room_nb_mint(struct room_cell **cells, size_t ncells, char id[9])
{
	uint32_t	r;

	do {
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (uint32_t)random();
		snprintf(id, 9, "%08x", r);
	} while (room_nb_index(cells, ncells, id, 8) >= 0);
}

void
room_nb_mint_id(struct room_nb *nb, char id[9])
{
	room_nb_mint(nb->cells, nb->ncells, id);
}

/* Strict UTF-8 (no surrogates, no overlongs); NUL is allowed. */
static int
room_nb_utf8_valid(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n, k;
	uint32_t		 cp;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((p[i] & 0xe0) == 0xc0) {
			n = 1;
			cp = p[i] & 0x1f;
		} else if ((p[i] & 0xf0) == 0xe0) {
			n = 2;
			cp = p[i] & 0x0f;
		} else if ((p[i] & 0xf8) == 0xf0) {
			n = 3;
			cp = p[i] & 0x07;
		} else
			return (0);
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (p[i + k] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return (0);
		i += n + 1;
	}
	return (1);
}

/*
 * Resolve a cell reference (id string, or integer index) within the
 * scratch array.  Returns the index or -1.
 */
static ssize_t
room_nb_resolve(struct room_cell **cells, size_t ncells,
    const msgpack_object *ref)
{
	if (ref == NULL)
		return (-1);
	if (ref->type == MSGPACK_OBJECT_STR)
		return (room_nb_index(cells, ncells, ref->via.str.ptr,
		    ref->via.str.size));
	if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    ref->via.u64 < ncells)
		return ((ssize_t)ref->via.u64);
	return (-1);
}

/* Shallow-merge a metadata map into a cell's metadata; null deletes. */
static int
room_nb_merge(struct json_object *dst, const msgpack_object *src)
{
	struct json_object	*add;

	if ((add = mpjson_unpack(src)) == NULL ||
	    !json_object_is_type(add, json_type_object)) {
		json_object_put(add);
		return (-1);
	}
	json_object_object_foreach(add, key, val) {
		if (val == NULL)
			json_object_object_del(dst, key);
		else
			json_object_object_add(dst, key, json_object_get(val));
	}
	json_object_put(add);
	return (0);
}

#define ROOM_NB_FAIL(c, ...) do {				\
	*code = (c);						\
	xasprintf(cause, __VA_ARGS__);				\
	goto fail;						\
} while (0)

/*
 * Apply a batch of edits atomically.  Edits work on a scratch array of
 * cell pointers; an edited original is cloned first, so on failure the
 * notebook is untouched and only the scratch clones are freed.  On
 * success *ids gets one cell id per edit (caller frees each and the
 * array).  On failure *index is the failing edit, *code the error code.
 */
int
room_nb_edit(struct room_nb *nb, const msgpack_object *edits, char ***ids,
    size_t *nids, int *index, char **cause, const char **code)
{
	struct room_cell	**scratch, *c;
	size_t			  n, cap, i, j, len;
	ssize_t			  at;
	const msgpack_object	 *e, *ref, *md;
	const char		 *op, *s;
	size_t			  oplen;
	enum room_cell_type	  type;
	char			  id[9], **out = NULL;

	*index = -1;
	*cause = NULL;
	*code = "invalid_argument";
	if (edits == NULL || edits->type != MSGPACK_OBJECT_ARRAY ||
	    edits->via.array.size == 0) {
		xasprintf(cause, "edits must be a non-empty list");
		return (-1);
	}
	cap = nb->ncells + edits->via.array.size + 1;
	scratch = xreallocarray(NULL, cap, sizeof *scratch);
	for (i = 0; i < nb->ncells; i++) {
		scratch[i] = nb->cells[i];
		scratch[i]->mark = 1;
	}
	n = nb->ncells;
	out = xcalloc(edits->via.array.size, sizeof *out);

	for (i = 0; i < edits->via.array.size; i++) {
		*index = (int)i;
		e = &edits->via.array.ptr[i];
		if (e->type != MSGPACK_OBJECT_MAP)
			ROOM_NB_FAIL("invalid_argument",
			    "edit %zu is not a map", i);
		if ((op = proto_get_str(e, "op", &oplen)) == NULL)
			ROOM_NB_FAIL("invalid_argument", "edit %zu has no op",
			    i);

		/* Common optional fields: type, source, metadata. */
		type = ROOM_CELL_CODE;
		if ((s = proto_get_str(e, "cell_type", &len)) != NULL) {
			if (room_nb_type_parse(s, len, &type) != 0)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell_type must be code, markdown or raw",
				    i);
		} else if (proto_get(e, "cell_type") != NULL &&
		    proto_get(e, "cell_type")->type != MSGPACK_OBJECT_NIL)
			ROOM_NB_FAIL("invalid_argument",
			    "edit %zu: cell_type is not a string", i);
		s = proto_get_str(e, "source", &len);
		if (s == NULL && proto_get(e, "source") != NULL &&
		    proto_get(e, "source")->type != MSGPACK_OBJECT_NIL)
			ROOM_NB_FAIL("invalid_argument",
			    "edit %zu: source is not a string", i);
		if (s != NULL && !room_nb_utf8_valid(s, len))
			ROOM_NB_FAIL("invalid_argument",
			    "edit %zu: source is not valid UTF-8", i);
		md = proto_get(e, "metadata");
		if (md != NULL && md->type == MSGPACK_OBJECT_NIL)
			md = NULL;
		if (md != NULL && md->type != MSGPACK_OBJECT_MAP)
			ROOM_NB_FAIL("invalid_argument",
			    "edit %zu: metadata is not a map", i);

		if (oplen == 6 && memcmp(op, "insert", 6) == 0) {
			ref = proto_get(e, "after");
			if (proto_obj_streq(ref, "TOP"))
				at = 0;
			else if (proto_obj_streq(ref, "BOTTOM") || ref == NULL)
				at = (ssize_t)n;
			else {
				at = room_nb_resolve(scratch, n, ref);
				if (at < 0)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: no cell to insert after",
					    i);
				at++;
			}
			room_nb_mint(scratch, n, id);
			c = room_nb_cell_new(type, id, s != NULL ? s : "",
			    s != NULL ? len : 0);
			c->mark = 0;
			if (md != NULL && room_nb_merge(c->metadata, md) != 0) {
				room_nb_cell_free(c);
				ROOM_NB_FAIL("invalid_argument",
				    "edit %zu: bad metadata", i);
			}
			memmove(&scratch[at + 1], &scratch[at],
			    (n - (size_t)at) * sizeof *scratch);
			scratch[at] = c;
			n++;
			out[i] = xstrdup(c->id);
		} else if (oplen == 4 && memcmp(op, "edit", 4) == 0) {
			if ((at = room_nb_resolve(scratch, n,
			    proto_get(e, "cell_id"))) < 0)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			if (s == NULL && md == NULL &&
			    proto_get_str(e, "cell_type", NULL) == NULL)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "nothing to change (source, cell_type or "
				    "metadata)", i);
			c = scratch[at];
			if (c->mark == 1) {
				c = room_nb_cell_clone(c);
				c->mark = 0;
				scratch[at] = c;
			}
			if (md != NULL && room_nb_merge(c->metadata, md) != 0)
				ROOM_NB_FAIL("invalid_argument",
				    "edit %zu: bad metadata", i);
			if (s != NULL) {
				free(c->source);
				c->source = xmalloc(len + 1);
				memcpy(c->source, s, len);
				c->source[len] = '\0';
				c->source_len = len;
			}
			if (proto_get_str(e, "cell_type", NULL) != NULL)
				room_nb_cell_set_type(c, type);
			out[i] = xstrdup(c->id);
		} else if (oplen == 6 && memcmp(op, "delete", 6) == 0) {
			if ((at = room_nb_resolve(scratch, n,
			    proto_get(e, "cell_id"))) < 0)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			c = scratch[at];
			out[i] = xstrdup(c->id);
			if (c->mark == 0)
				room_nb_cell_free(c);
			memmove(&scratch[at], &scratch[at + 1],
			    (n - (size_t)at - 1) * sizeof *scratch);
			n--;
		} else
			ROOM_NB_FAIL("invalid_argument", "edit %zu: unknown op "
			    "\"%.*s\"", i, (int)oplen, op);
	}

	/* Commit: free the originals that did not survive. */
	for (j = 0; j < n; j++)
		scratch[j]->mark = 2;
	for (j = 0; j < nb->ncells; j++) {
		if (nb->cells[j]->mark != 2)
			room_nb_cell_free(nb->cells[j]);
	}
	for (j = 0; j < n; j++)
		scratch[j]->mark = 0;
	free(nb->cells);
	nb->cells = scratch;
	nb->ncells = n;
	*ids = out;
	*nids = edits->via.array.size;
	*index = -1;
	return (0);

fail:
	for (j = 0; j < n; j++) {
		if (scratch[j]->mark == 0)
			room_nb_cell_free(scratch[j]);
	}
	for (j = 0; j < nb->ncells; j++)
		nb->cells[j]->mark = 0;
	free(scratch);
	for (j = 0; j < edits->via.array.size; j++)
		free(out[j]);
	free(out);
	return (-1);
}
