/*
 * room-nb.c: a notebook's cells in memory and the atomic edit batch.
 */

#include <sys/random.h>

#include <stdarg.h>
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
	json_object_put(nb->extra);
	json_object_put(nb->warnings);
	free(nb);
}

/*
 * Note what the loader found wrong: where (cell index, or -1 for the
 * notebook; the cell's id when it has one), what, and what a save will
 * change (NULL: nothing, the file's content is kept as it is).
 */
void
room_nb_warn(struct room_nb *nb, ssize_t index, const char *id,
    const char *on_save, const char *fmt, ...)
{
	struct json_object	*w;
	va_list			 ap;
	char			*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	w = json_object_new_object();
	if (index >= 0)
		json_object_object_add(w, "cell_index",
		    json_object_new_int64(index));
	if (id != NULL && *id != '\0')
		json_object_object_add(w, "cell_id",
		    json_object_new_string(id));
	json_object_object_add(w, "message", json_object_new_string(msg));
	json_object_object_add(w, "on_save", json_object_new_string(
	    on_save != NULL ? on_save : "keeps it as it is"));
	free(msg);
	if (nb->warnings == NULL)
		nb->warnings = json_object_new_array();
	json_object_array_add(nb->warnings, w);
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
	free(c->type_name);
	free(c->source);
	json_object_put(c->metadata);
	json_object_put(c->outputs);
	json_object_put(c->attachments);
	json_object_put(c->extra);
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
	if (c->type_name != NULL)
		n->type_name = xstrdup(c->type_name);
	if (c->extra != NULL &&
	    json_object_deep_copy(c->extra, &n->extra, NULL) != 0)
		fatalx("json_object_deep_copy failed");
	n->flags = c->flags;
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
	case ROOM_CELL_UNKNOWN:
		return ("unknown");
	}
	return ("code");
}

/* The cell_type a cell is saved with: its own for an unknown type. */
const char *
room_nb_cell_type_name(const struct room_cell *c)
{
	if (c->type == ROOM_CELL_UNKNOWN && c->type_name != NULL)
		return (c->type_name);
	return (room_nb_type_name(c->type));
}

/* Set a loaded cell's type from its cell_type, known or not. */
void
room_nb_cell_set_type_name(struct room_cell *c, const char *s, size_t len)
{
	enum room_cell_type	type;

	free(c->type_name);
	c->type_name = NULL;
	if (room_nb_type_parse(s, len, &type) != 0) {
		type = ROOM_CELL_UNKNOWN;
		c->type_name = xstrndup(s, len);
	}
	c->type = type;
	if (type == ROOM_CELL_CODE && c->outputs == NULL)
		c->outputs = json_object_new_array();
	if (type != ROOM_CELL_CODE) {
		json_object_put(c->outputs);
		c->outputs = NULL;
	}
}

/*
 * Is key one runtimed models for this cell?  Every other key is kept
 * verbatim in extra.  As nbformat's reader does, attachments and source
 * are read (lines joined) whatever the type; outputs and
 * execution_count only for code cells.
 */
int
room_nb_cell_known_key(const struct room_cell *c, const char *key)
{
	static const char *const all[] = { "cell_type", "id", "metadata",
	    "source", "attachments", NULL };
	size_t	i;

	for (i = 0; all[i] != NULL; i++) {
		if (strcmp(key, all[i]) == 0)
			return (1);
	}
	return (c->type == ROOM_CELL_CODE && (strcmp(key, "outputs") == 0 ||
	    strcmp(key, "execution_count") == 0));
}

/* Empty a cell of an unknown type before it is replaced whole. */
void
room_nb_cell_clear(struct room_cell *c)
{
	json_object_put(c->metadata);
	c->metadata = json_object_new_object();
	json_object_put(c->attachments);
	c->attachments = NULL;
	json_object_put(c->extra);
	c->extra = NULL;
	c->flags = 0;
	free(c->source);
	c->source = xstrdup("");
	c->source_len = 0;
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

/*
 * Change a cell's type, dropping what the new type cannot hold, and the
 * kept keys the new type defines (a markdown cell's stray outputs).
 */
void
room_nb_cell_set_type(struct room_cell *c, enum room_cell_type type)
{
	if (c->type == type)
		return;
	free(c->type_name);
	c->type_name = NULL;
	if (c->extra != NULL && type == ROOM_CELL_CODE) {
		json_object_object_del(c->extra, "outputs");
		json_object_object_del(c->extra, "execution_count");
	}
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

/*
 * Resolve a cell reference within the scratch array: an id string, or
 * an integer taken as the index at the start of the batch (so it names
 * the cell that was there then, wherever it is now).  Returns the
 * scratch index or -1.
 */
static ssize_t
room_nb_resolve(struct room_nb *nb, struct room_cell **cells, size_t ncells,
    const msgpack_object *ref)
{
	const char	*id;

	if (ref == NULL)
		return (-1);
	if (ref->type == MSGPACK_OBJECT_STR)
		return (room_nb_index(cells, ncells, ref->via.str.ptr,
		    ref->via.str.size));
	if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    ref->via.u64 < nb->ncells) {
		id = nb->cells[ref->via.u64]->id;
		return (room_nb_index(cells, ncells, id, strlen(id)));
	}
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

/* The scratch cell at, cloned first if it is still the original. */
static struct room_cell *
room_nb_own(struct room_cell **scratch, ssize_t at)
{
	struct room_cell	*c = scratch[at];

	if (c->mark == 1) {
		c = room_nb_cell_clone(c);
		c->mark = 0;
		scratch[at] = c;
	}
	return (c);
}

static void
room_nb_touch(struct room_nb_result *res, const char *id)
{
	size_t	i;

	for (i = 0; i < res->ntouched; i++) {
		if (strcmp(res->touched[i], id) == 0)
			return;
	}
	res->touched = xreallocarray(res->touched, res->ntouched + 1,
	    sizeof *res->touched);
	res->touched[res->ntouched++] = xstrdup(id);
}

/* Pack "after" as resolved: the id of the cell before at, or TOP. */
static void
room_nb_pack_after(msgpack_packer *rp, struct room_cell **scratch,
    ssize_t at)
{
	if (rp == NULL)
		return;
	if (at == 0)
		proto_pack_str(rp, "after", "TOP");
	else
		proto_pack_str(rp, "after", scratch[at - 1]->id);
}

void
room_nb_result_free(struct room_nb_result *res)
{
	size_t	i;

	for (i = 0; i < res->nids; i++)
		free(res->ids[i]);
	free(res->ids);
	for (i = 0; i < res->ntouched; i++)
		free(res->touched[i]);
	free(res->touched);
	memset(res, 0, sizeof *res);
	res->index = -1;
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
 * success res gets one cell id per edit (NULL for notebook_metadata),
 * the change kinds and the cells touched (caller frees with
 * room_nb_result_free); rp, when given, gets the batch resolved (ids for
 * every reference, minted ids on inserts) for the journal.  With replay,
 * an insert's cell_id is used as is.  On failure res->index is the
 * failing edit and *code the error code.
 */
int
room_nb_edit(struct room_nb *nb, const msgpack_object *edits, int replay,
    msgpack_packer *rp, struct room_nb_result *res, char **cause,
    const char **code)
{
	struct room_cell	**scratch, *c, **moved = NULL;
	struct json_object	 *newmd = NULL;
	size_t			  n, cap, i, j, k, len, nmoved;
	ssize_t			  at;
	const msgpack_object	 *e, *ref, *md, *list;
	const char		 *op, *s;
	size_t			  oplen;
	enum room_cell_type	  type;
	char			  id[9], **out = NULL;

	memset(res, 0, sizeof *res);
	res->index = -1;
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
	if (rp != NULL)
		msgpack_pack_array(rp, edits->via.array.size);

	for (i = 0; i < edits->via.array.size; i++) {
		res->index = (int)i;
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
		if (s != NULL && !utf8_valid(s, len, NULL))
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
			else if (proto_obj_streq(ref, "BOTTOM") ||
			    ref == NULL || ref->type == MSGPACK_OBJECT_NIL)
				at = (ssize_t)n;
			else {
				at = room_nb_resolve(nb, scratch, n, ref);
				if (at < 0)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: no cell to insert after",
					    i);
				at++;
			}
			room_nb_mint(scratch, n, id);
			c = room_nb_cell_new(type, id, s != NULL ? s : "",
			    s != NULL ? len : 0);
			if (replay && (ref = proto_get(e, "cell_id")) != NULL &&
			    ref->type == MSGPACK_OBJECT_STR &&
			    room_nb_valid_id(ref->via.str.ptr,
			    ref->via.str.size)) {
				free(c->id);
				c->id = xstrndup(ref->via.str.ptr,
				    ref->via.str.size);
			}
			c->mark = 0;
			if (md != NULL && room_nb_merge(c->metadata, md) != 0) {
				room_nb_cell_free(c);
				ROOM_NB_FAIL("invalid_argument",
				    "edit %zu: bad metadata", i);
			}
			if (rp != NULL) {
				msgpack_pack_map(rp, md != NULL ? 6 : 5);
				proto_pack_str(rp, "op", "insert");
				room_nb_pack_after(rp, scratch, at);
				proto_pack_str(rp, "cell_id", c->id);
				proto_pack_str(rp, "cell_type",
				    room_nb_type_name(type));
				proto_pack_strn(rp, "source", c->source,
				    c->source_len);
				if (md != NULL) {
					proto_pack_key(rp, "metadata");
					msgpack_pack_object(rp, *md);
				}
			}
			memmove(&scratch[at + 1], &scratch[at],
			    (n - (size_t)at) * sizeof *scratch);
			scratch[at] = c;
			n++;
			out[i] = xstrdup(c->id);
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 4 && memcmp(op, "edit", 4) == 0) {
			if ((at = room_nb_resolve(nb, scratch, n,
			    proto_get(e, "cell_id"))) < 0)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			if (s == NULL && md == NULL &&
			    proto_get_str(e, "cell_type", NULL) == NULL)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "nothing to change (source, cell_type or "
				    "metadata)", i);
			c = scratch[at];
			if (c->type == ROOM_CELL_UNKNOWN && (s == NULL ||
			    proto_get_str(e, "cell_type", NULL) == NULL))
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell %s is of type \"%s\", which runtimed "
				    "does not know: replace it whole (give "
				    "cell_type and source), move or delete it",
				    i, c->id, c->type_name);
			c = room_nb_own(scratch, at);
			/* Replaced whole: nothing of the unknown cell stays. */
			if (c->type == ROOM_CELL_UNKNOWN)
				room_nb_cell_clear(c);
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
			if (rp != NULL) {
				msgpack_pack_map(rp, 2 + (s != NULL) +
				    (md != NULL) + (proto_get_str(e,
				    "cell_type", NULL) != NULL));
				proto_pack_str(rp, "op", "edit");
				proto_pack_str(rp, "cell_id", c->id);
				if (s != NULL)
					proto_pack_strn(rp, "source", s, len);
				if (md != NULL) {
					proto_pack_key(rp, "metadata");
					msgpack_pack_object(rp, *md);
				}
				if (proto_get_str(e, "cell_type", NULL) != NULL)
					proto_pack_str(rp, "cell_type",
					    room_nb_type_name(type));
			}
			out[i] = xstrdup(c->id);
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 6 && memcmp(op, "delete", 6) == 0) {
			if ((at = room_nb_resolve(nb, scratch, n,
			    proto_get(e, "cell_id"))) < 0)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			c = scratch[at];
			out[i] = xstrdup(c->id);
			if (rp != NULL) {
				msgpack_pack_map(rp, 2);
				proto_pack_str(rp, "op", "delete");
				proto_pack_str(rp, "cell_id", c->id);
			}
			if (c->mark == 0)
				room_nb_cell_free(c);
			memmove(&scratch[at], &scratch[at + 1],
			    (n - (size_t)at - 1) * sizeof *scratch);
			n--;
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 4 && memcmp(op, "move", 4) == 0) {
			list = proto_get_array(e, "cell_ids");
			if (list == NULL || list->via.array.size == 0)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell_ids must be a non-empty list", i);
			nmoved = list->via.array.size;
			moved = xreallocarray(NULL, nmoved, sizeof *moved);
			for (j = 0; j < nmoved; j++) {
				at = room_nb_resolve(nb, scratch, n,
				    &list->via.array.ptr[j]);
				if (at < 0)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: cell %zu to move not "
					    "found", i, j);
				moved[j] = scratch[at];
				for (k = 0; k < j; k++) {
					if (moved[k] == moved[j])
						ROOM_NB_FAIL("invalid_argument",
						    "edit %zu: cell %s named "
						    "twice", i, moved[j]->id);
				}
			}
			ref = proto_get(e, "after");
			c = NULL;
			if (!proto_obj_streq(ref, "TOP") &&
			    !proto_obj_streq(ref, "BOTTOM") && ref != NULL &&
			    ref->type != MSGPACK_OBJECT_NIL) {
				if ((at = room_nb_resolve(nb, scratch, n,
				    ref)) < 0)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: no cell to move after",
					    i);
				c = scratch[at];
				for (k = 0; k < nmoved; k++) {
					if (moved[k] == c)
						ROOM_NB_FAIL("invalid_argument",
						    "edit %zu: cannot move a "
						    "cell after itself", i);
				}
			}
			/* Take the moved cells out, then put them back. */
			for (j = 0, k = 0; j < n; j++) {
				size_t	m;

				for (m = 0; m < nmoved; m++) {
					if (moved[m] == scratch[j])
						break;
				}
				if (m == nmoved)
					scratch[k++] = scratch[j];
			}
			n = k;
			if (c != NULL)
				at = room_nb_index(scratch, n, c->id,
				    strlen(c->id)) + 1;
			else if (proto_obj_streq(ref, "TOP"))
				at = 0;
			else
				at = (ssize_t)n;
			if (rp != NULL) {
				msgpack_pack_map(rp, 3);
				proto_pack_str(rp, "op", "move");
				room_nb_pack_after(rp, scratch, at);
				proto_pack_key(rp, "cell_ids");
				msgpack_pack_array(rp, nmoved);
				for (j = 0; j < nmoved; j++)
					proto_pack_cstr(rp, moved[j]->id);
			}
			memmove(&scratch[at + nmoved], &scratch[at],
			    (n - (size_t)at) * sizeof *scratch);
			memcpy(&scratch[at], moved, nmoved * sizeof *moved);
			n += nmoved;
			out[i] = xstrdup(moved[0]->id);
			for (j = 0; j < nmoved; j++)
				room_nb_touch(res, moved[j]->id);
			free(moved);
			moved = NULL;
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 13 && memcmp(op, "clear_outputs", 13) == 0) {
			list = proto_get(e, "cell_ids");
			if (list != NULL && list->type == MSGPACK_OBJECT_NIL)
				list = NULL;
			if (list != NULL && list->type != MSGPACK_OBJECT_ARRAY)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell_ids must be a list", i);
			nmoved = list != NULL ? list->via.array.size : n;
			moved = xcalloc(nmoved + 1, sizeof *moved);
			for (j = 0, k = 0; j < nmoved; j++) {
				if (list == NULL)
					at = (ssize_t)j;
				else if ((at = room_nb_resolve(nb, scratch, n,
				    &list->via.array.ptr[j])) < 0)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: cell %zu to clear not "
					    "found", i, j);
				if (scratch[at]->type != ROOM_CELL_CODE)
					continue;
				c = room_nb_own(scratch, at);
				room_nb_clear_outputs(c);
				c->execution_count = -1;
				moved[k++] = c;
				room_nb_touch(res, c->id);
			}
			if (rp != NULL) {
				msgpack_pack_map(rp, 2);
				proto_pack_str(rp, "op", "clear_outputs");
				proto_pack_key(rp, "cell_ids");
				msgpack_pack_array(rp, k);
				for (j = 0; j < k; j++)
					proto_pack_cstr(rp, moved[j]->id);
			}
			if (k > 0)
				out[i] = xstrdup(moved[0]->id);
			else if (list != NULL && list->via.array.size > 0 &&
			    (at = room_nb_resolve(nb, scratch, n,
			    &list->via.array.ptr[0])) >= 0)
				out[i] = xstrdup(scratch[at]->id);
			free(moved);
			moved = NULL;
			res->kinds |= ROOM_CHANGE_OUTPUTS;
		} else if (oplen == 17 &&
		    memcmp(op, "notebook_metadata", 17) == 0) {
			if (md == NULL)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "notebook_metadata needs a metadata map",
				    i);
			if (newmd == NULL && json_object_deep_copy(nb->metadata,
			    &newmd, NULL) != 0)
				fatalx("json_object_deep_copy failed");
			if (room_nb_merge(newmd, md) != 0)
				ROOM_NB_FAIL("invalid_argument",
				    "edit %zu: bad metadata", i);
			if (rp != NULL) {
				msgpack_pack_map(rp, 2);
				proto_pack_str(rp, "op", "notebook_metadata");
				proto_pack_key(rp, "metadata");
				msgpack_pack_object(rp, *md);
			}
			res->kinds |= ROOM_CHANGE_METADATA;
		} else
			ROOM_NB_FAIL("invalid_argument", "edit %zu: unknown op "
			    "\"%.*s\"", i, (int)oplen, op);
		if (out[i] != NULL)
			room_nb_touch(res, out[i]);
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
	if (newmd != NULL) {
		json_object_put(nb->metadata);
		nb->metadata = newmd;
	}
	res->ids = out;
	res->nids = edits->via.array.size;
	res->index = -1;
	return (0);

fail:
	free(moved);
	for (j = 0; j < n; j++) {
		if (scratch[j]->mark == 0)
			room_nb_cell_free(scratch[j]);
	}
	for (j = 0; j < nb->ncells; j++)
		nb->cells[j]->mark = 0;
	free(scratch);
	json_object_put(newmd);
	for (j = 0; j < edits->via.array.size; j++)
		free(out[j]);
	free(out);
	for (j = 0; j < res->ntouched; j++)
		free(res->touched[j]);
	free(res->touched);
	res->touched = NULL;
	res->ntouched = 0;
	return (-1);
}
