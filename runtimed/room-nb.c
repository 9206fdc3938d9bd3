/* SPDX-License-Identifier: ISC */
/*
 * room-nb.c: a notebook's cells in memory and the atomic edit batch.
 */

#include <sys/random.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "runtimed.h"


struct room_nb_edit;

static void	room_nb_ids_drop(struct room_nb *);
static int	room_nb_fail(struct room_nb_edit *, const char *,
		    const char *, ...) printflike(3, 4);
struct room_nb_batch;
struct room_nb_node;
static struct room_cell	*room_nb_ids_get(struct room_nb *, const char *);
static void	room_nb_ids_add(struct room_nb *, struct room_cell *);
static void	room_nb_ids_del(struct room_nb *, struct room_cell *);
static void	room_nb_ids_move(struct room_nb *);
static void	room_nb_ids_build(struct room_nb *);
static struct room_cell	*room_nb_cell_new(enum room_cell_type, const char *,
		    const char *, size_t);
static struct room_cell	*room_nb_cell_clone(const struct room_cell *);
static void	room_nb_cell_rescan(struct room_cell *);
static ssize_t	room_nb_index(struct room_cell **, size_t, const char *,
		    size_t);
static void	room_nb_push(struct room_cell ***, size_t *,
		    struct room_cell *);
static int	room_nb_batch_orig(struct room_nb_batch *,
		    struct room_nb_node *);
static void	room_nb_batch_free_node(struct room_nb_batch *,
		    struct room_nb_node *);
static void	room_nb_batch_link(struct room_nb_batch *,
		    struct room_nb_node *, struct room_nb_node *);
static void	room_nb_batch_unlink(struct room_nb_batch *,
		    struct room_nb_node *);
static struct room_nb_node	*room_nb_batch_lookup(struct room_nb_batch *,
		    const char *);
static void	room_nb_batch_free_key(struct lh_entry *);
static void	room_nb_batch_index(struct room_nb_batch *,
		    struct room_nb_node *);
static void	room_nb_batch_unindex(struct room_nb_batch *,
		    struct room_nb_node *);
static struct room_nb_node	*room_nb_batch_find(struct room_nb_batch *,
		    const char *, size_t);
static void	room_nb_batch_init(struct room_nb_batch *, struct room_nb *);
static void	room_nb_batch_done(struct room_nb_batch *, int);
static int	room_nb_batch_gone(struct room_nb_batch *, const char *,
		    size_t);
static const char	*room_nb_plural(size_t);
static struct room_nb_node	*room_nb_resolve(struct room_nb_edit *,
		    const msgpack_object *, const char *);
static void	room_nb_batch_mint(struct room_nb_batch *, char [9]);
static struct room_cell	*room_nb_own(struct room_nb_batch *,
		    struct room_nb_node *);
static void	room_nb_touch(struct room_nb_batch *, struct room_nb_result *,
		    const char *);
static struct proto_doc room_nb_after(struct room_nb_batch *,
		    struct room_nb_node *);
static int	room_nb_edit_fields(struct room_nb_edit *);
static int	room_nb_edit_unknown(struct room_nb_edit *, struct room_cell *);
static void	room_nb_journal(struct room_nb_edit *,
		    const struct proto_edit *);
static int	room_nb_op_insert(struct room_nb_edit *);
static int	room_nb_op_edit(struct room_nb_edit *);
static int	room_nb_op_delete(struct room_nb_edit *);
static int	room_nb_count(const char *, size_t, const char *, size_t,
		    size_t *);
static int	room_nb_op_replace(struct room_nb_edit *);
static struct room_nb_node	**room_nb_move_list(struct room_nb_edit *,
		    size_t *);
static int	room_nb_op_move(struct room_nb_edit *);
static int	room_nb_op_clear_outputs(struct room_nb_edit *);
static int	room_nb_op_notebook_metadata(struct room_nb_edit *);
static const struct room_nb_op	*room_nb_edit_op(struct room_nb_edit *,
		    const msgpack_object *, size_t, char **);
static void	room_nb_cell_free(struct room_cell *);
static void	room_nb_cell_clear(struct room_cell *);
static int	room_nb_type_parse(const char *, size_t, enum room_cell_type *);
static void	room_nb_cell_set_type(struct room_cell *, enum room_cell_type);

/* An empty nbformat 4.5 notebook. */
struct room_nb *
room_nb_create(void)
{
	struct room_nb	*nb;

	nb = xcalloc(1, sizeof *nb);
	mpvalue_set_bytes(&nb->metadata, "\x80", 1);	/* {} */
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
	room_nb_ids_drop(nb);
	for (i = 0; i < nb->ncells; i++)
		room_nb_cell_free(nb->cells[i]);
	free(nb->cells);
	mpvalue_free(&nb->metadata);
	mpvalue_free(&nb->extra);
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

/*
 * The id index.  Keys are the cells' own id strings, so a cell leaves
 * the index before it is freed; the first of equal ids wins.  json-c's
 * linkhash would rehash every id at once when it fills (a stall of 50
 * to 200 ms at 100,000 cells), so before that the index starts a new
 * table four times the size and each commit moves ROOM_NB_IDS_MOVE
 * entries into it; lookups see both.  The same happens once deletes
 * have left a quarter of the table freed slots, which lookups probe
 * past.
 */
#define ROOM_NB_IDS_MOVE	4096

static void
room_nb_ids_drop(struct room_nb *nb)
{
	if (nb->ids != NULL)
		lh_table_free(nb->ids);
	if (nb->ids_old != NULL)
		lh_table_free(nb->ids_old);
	nb->ids = nb->ids_old = NULL;
	nb->ids_freed = 0;
}

static struct room_cell *
room_nb_ids_get(struct room_nb *nb, const char *id)
{
	void	*v;

	if (lh_table_lookup_ex(nb->ids, id, &v))
		return (v);
	if (nb->ids_old != NULL && lh_table_lookup_ex(nb->ids_old, id, &v))
		return (v);
	return (NULL);
}

static void
room_nb_ids_add(struct room_nb *nb, struct room_cell *c)
{
	struct lh_table	*t = nb->ids;

	if (room_nb_ids_get(nb, c->id) != NULL)
		return;
	if (nb->ids_old == NULL && (t->count + 1 >= t->size / 2 ||
	    nb->ids_freed >= (size_t)t->size / 4)) {
		nb->ids_old = t;
		nb->ids = lh_kchar_table_new(t->count * 4 + 1024, NULL);
		nb->ids_freed = 0;
	}
	lh_table_insert(nb->ids, c->id, c);
}

static void
room_nb_ids_del(struct room_nb *nb, struct room_cell *c)
{
	struct lh_entry	*e;

	if ((e = lh_table_lookup_entry(nb->ids, c->id)) != NULL &&
	    lh_entry_v(e) == c) {
		lh_table_delete_entry(nb->ids, e);
		nb->ids_freed++;
	} else if (nb->ids_old != NULL &&
	    (e = lh_table_lookup_entry(nb->ids_old, c->id)) != NULL &&
	    lh_entry_v(e) == c)
		lh_table_delete_entry(nb->ids_old, e);
}

/* Move a few entries of the old table into the new one. */
static void
room_nb_ids_move(struct room_nb *nb)
{
	struct lh_entry	*e;
	size_t		 n;

	if (nb->ids_old == NULL)
		return;
	for (n = 0; n < ROOM_NB_IDS_MOVE &&
	    (e = lh_table_head(nb->ids_old)) != NULL; n++) {
		lh_table_insert(nb->ids, lh_entry_k(e), lh_entry_v(e));
		lh_table_delete_entry(nb->ids_old, e);
	}
	if (lh_table_head(nb->ids_old) == NULL) {
		lh_table_free(nb->ids_old);
		nb->ids_old = NULL;
	}
}

/* Build the index if it is missing (the first batch). */
static void
room_nb_ids_build(struct room_nb *nb)
{
	size_t	i;

	if (nb->ids != NULL)
		return;
	nb->ids = lh_kchar_table_new((int)(nb->ncells * 4 + 1024), NULL);
	for (i = 0; i < nb->ncells; i++) {
		nb->cells[i]->pos = i;
		room_nb_ids_add(nb, nb->cells[i]);
	}
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
	mpvalue_set_bytes(&c->metadata, "\x80", 1);	/* {} */
	c->execution_count = -1;
	if (type == ROOM_CELL_CODE)
		c->outputs = room_nb_outputs_new();
	return (c);
}

/*
 * Append a cell with a minted id; the loader may set its own with
 * room_nb_cell_set_id.  The id index is kept from the first cell on,
 * so minting and a loader's duplicate check cost one lookup, not a scan
 * of the cells (a load was quadratic in cells).
 */
struct room_cell *
room_nb_cell_create(struct room_nb *nb, enum room_cell_type type,
    const char *src, size_t srclen)
{
	struct room_cell	*c;
	char			 id[9];

	room_nb_ids_build(nb);
	room_nb_mint_id(nb, id);
	c = room_nb_cell_new(type, id, src, srclen);
	nb->cells = xreallocarray(nb->cells, nb->ncells + 1,
	    sizeof *nb->cells);
	c->pos = nb->ncells;
	nb->cells[nb->ncells++] = c;
	room_nb_ids_add(nb, c);
	return (c);
}

/*
 * Make cells (n of them, which the notebook now owns) the notebook's
 * order, as a merge from disk built it (room-merge.c); cells of the old
 * order not in it are the caller's to free.
 */
void
room_nb_set_cells(struct room_nb *nb, struct room_cell **cells, size_t n)
{
	size_t	i;
	int	indexed = nb->ids != NULL;

	room_nb_ids_drop(nb);
	free(nb->cells);
	nb->cells = cells;
	nb->ncells = n;
	for (i = 0; i < n; i++)
		nb->cells[i]->pos = i;
	/* Outputs of a run find their cell by id: no scans meanwhile. */
	if (indexed)
		room_nb_ids_build(nb);
}

/* A cell no notebook holds any more. */
void
room_nb_cell_destroy(struct room_cell *c)
{
	room_nb_cell_free(c);
}

/* A loader sets cell c's id (len bytes, no NUL), keeping the index. */
void
room_nb_cell_set_id(struct room_nb *nb, struct room_cell *c,
    const char *id, size_t len)
{
	if (nb->ids != NULL)
		room_nb_ids_del(nb, c);
	free(c->id);
	c->id = xstrndup(id, len);
	room_cell_touch(c);
	if (nb->ids != NULL)
		room_nb_ids_add(nb, c);
}

static void
room_nb_cell_free(struct room_cell *c)
{
	if (c == NULL)
		return;
	free(c->id);
	free(c->type_name);
	free(c->source);
	mpvalue_free(&c->metadata);
	proto_outputs_unref(c->outputs);
	mpvalue_free(&c->attachments);
	mpvalue_free(&c->extra);
	pydefuse_free(c->defuse);
	room_author_unref(c->by);
	free(c);
}

/*
 * A cell's source changed: the names its scan found (room-stale.c) are
 * no longer what it holds; the next use scans it again.
 */
static void
room_nb_cell_rescan(struct room_cell *c)
{
	pydefuse_free(c->defuse);
	c->defuse = NULL;
}

/* A copy that shares nothing but the outputs list (copy on write). */
static struct room_cell *
room_nb_cell_clone(const struct room_cell *c)
{
	struct room_cell	*n;

	n = room_nb_cell_new(c->type, c->id, c->source, c->source_len);
	mpvalue_copy(&n->metadata, &c->metadata);
	n->execution_count = c->execution_count;
	proto_outputs_unref(n->outputs);
	n->outputs = proto_outputs_ref(c->outputs);
	mpvalue_copy(&n->attachments, &c->attachments);
	if (c->type_name != NULL)
		n->type_name = xstrdup(c->type_name);
	mpvalue_copy(&n->extra, &c->extra);
	n->flags = c->flags;
	n->by = c->by;
	room_author_ref(n->by);
	return (n);
}

/*
 * The setters of a cell in a notebook: each drops the cell's cache
 * (room-cell.c).  What changes a cell's json in place calls
 * room_cell_touch itself.
 */
void
room_nb_clear_outputs(struct room_cell *c)
{
	if (c->type != ROOM_CELL_CODE)
		return;
	room_nb_cell_set_outputs(c, room_nb_outputs_new());
}

/* An empty list of outputs, one reference. */
struct proto_outputs *
room_nb_outputs_new(void)
{
	struct proto_outputs	*o;

	if ((o = proto_outputs_new()) == NULL)
		fatalx("out of memory");
	return (o);
}

/* Set a code cell's outputs to o (the reference is the cell's). */
void
room_nb_cell_set_outputs(struct room_cell *c, struct proto_outputs *o)
{
	proto_outputs_unref(c->outputs);
	c->outputs = o;
	room_cell_touch(c);
}

/* Set a cell's execution_count (-1: null). */
void
room_nb_cell_set_count(struct room_cell *c, int64_t n)
{
	c->execution_count = n;
	room_cell_touch(c);
}

/* Set a cell's source (len bytes, which may hold NUL). */
void
room_nb_cell_set_source(struct room_cell *c, const char *s, size_t len)
{
	free(c->source);
	c->source = xmalloc(len + 1);
	memcpy(c->source, s, len);
	c->source[len] = '\0';
	c->source_len = len;
	room_nb_cell_rescan(c);
	room_cell_touch(c);
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
		c->outputs = room_nb_outputs_new();
	if (type != ROOM_CELL_CODE) {
		proto_outputs_unref(c->outputs);
		c->outputs = NULL;
	}
	room_cell_touch(c);
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
static void
room_nb_cell_clear(struct room_cell *c)
{
	mpvalue_set_bytes(&c->metadata, "\x80", 1);	/* {} */
	mpvalue_free(&c->attachments);
	mpvalue_free(&c->extra);
	c->flags = 0;
	free(c->source);
	c->source = xstrdup("");
	c->source_len = 0;
	room_nb_cell_rescan(c);
	room_cell_touch(c);
}

static int
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
static void
room_nb_cell_set_type(struct room_cell *c, enum room_cell_type type)
{
	static const char *const code[] = { "outputs", "execution_count",
	    NULL };

	if (c->type == type)
		return;
	free(c->type_name);
	c->type_name = NULL;
	if (type == ROOM_CELL_CODE) {
		mpvalue_del(&c->extra, code);
		mpvalue_free(&c->attachments);
		c->outputs = room_nb_outputs_new();
	} else {
		proto_outputs_unref(c->outputs);
		c->outputs = NULL;
	}
	c->execution_count = -1;
	c->type = type;
	room_cell_touch(c);
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

/* A cell by id: by the index, or a scan when there is none. */
struct room_cell *
room_nb_find(struct room_nb *nb, const char *id, size_t *idx)
{
	struct room_cell	*c;
	ssize_t			 i;

	if (nb->ids != NULL) {
		if ((c = room_nb_ids_get(nb, id)) == NULL)
			return (NULL);
		if (idx != NULL)
			*idx = c->pos;
		return (c);
	}
	if ((i = room_nb_index(nb->cells, nb->ncells, id, strlen(id))) < 0)
		return (NULL);
	if (idx != NULL)
		*idx = (size_t)i;
	return (nb->cells[i]);
}

/* Jupyter-like id: 8 lowercase hex digits, unique among cells. */
void
room_nb_mint_id(struct room_nb *nb, char id[9])
{
	uint32_t	r;

	do {
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (uint32_t)random();
		snprintf(id, 9, "%08x", r);
	} while (room_nb_find(nb, id, NULL) != NULL);
}

/*
 * An edit batch works on a copy of the cell order: a doubly linked list
 * of nodes (a sentinel closes the ring).  An id names the node of the
 * notebook's cell by the notebook's index (nb->ids, the cell's pos is
 * its node), unless the batch's own small table (b->ids) says otherwise:
 * a cell the batch inserted, or NULL for one it deleted.  So each edit
 * costs what it names; the notebook's length costs only pointer moves.
 * The notebook itself is untouched until room_nb_edit_commit.
 */
struct room_nb_node {
	struct room_cell	*c;
	struct room_nb_node	*prev;
	struct room_nb_node	*next;
	int			 moving;
	int			 gone;		/* an original, deleted */
};

struct room_nb_batch {
	struct room_nb		*nb;
	struct room_nb_node	 head;		/* sentinel */
	struct room_nb_node	*orig;		/* one node per original */
	size_t			 n;
	struct lh_table		*ids;		/* cell id -> node or NULL */
	struct lh_table		*touched;	/* ids in res->touched */
	size_t			 touched_cap;
	struct mpvalue		 metadata;	/* the notebook's, changed */
};

/* A batch applied to copies, waiting for its journal commit. */
struct room_nb_pending {
	struct room_cell	**cells;
	size_t			  ncells;
	struct room_cell	**fresh;	/* inserts and copies */
	size_t			  nfresh;
	struct room_cell	**old;		/* originals they replace */
	size_t			  nold;
	struct mpvalue		  metadata;	/* len 0: unchanged */
};

/*
 * One edit of a batch being applied: where it is, its common fields
 * (parsed once for every op), and what it gives back: the cell id the
 * reply names, or the error.
 */
struct room_nb_edit {
	struct room_nb_batch	*b;
	struct room_nb_result	*res;
	msgpack_packer		*rp;		/* the batch, resolved */
	struct proto_edit	 m;		/* the edit, read */
	int			 replay;
	enum room_cell_type	 type;		/* cell_type, code if none */
	int			 has_type;
	const char		*src;		/* source, or NULL */
	size_t			 srclen;
	const msgpack_object	*md;		/* metadata map, or NULL */
	char			*out;
	const char		*code;
	char			*cause;
};

/* Append to an array that doubles when n reaches a power of two. */
static void
room_nb_push(struct room_cell ***v, size_t *n, struct room_cell *c)
{
	if ((*n & (*n + 1)) == 0)
		*v = xreallocarray(*v, (*n + 1) * 2, sizeof **v);
	(*v)[(*n)++] = c;
}

/* Is the node's cell still the notebook's own (not a batch's copy)? */
static int
room_nb_batch_orig(struct room_nb_batch *b, struct room_nb_node *n)
{
	return (n >= b->orig && n < b->orig + b->nb->ncells &&
	    n->c == b->nb->cells[n - b->orig]);
}

/* Nodes of original cells live in b->orig; inserts' on their own. */
static void
room_nb_batch_free_node(struct room_nb_batch *b, struct room_nb_node *n)
{
	if (n < b->orig || n >= b->orig + b->nb->ncells)
		free(n);
}

static void
room_nb_batch_link(struct room_nb_batch *b, struct room_nb_node *after,
    struct room_nb_node *n)
{
	n->prev = after;
	n->next = after->next;
	after->next->prev = n;
	after->next = n;
	b->n++;
}

static void
room_nb_batch_unlink(struct room_nb_batch *b, struct room_nb_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	b->n--;
}

/* The node of a cell id (NUL-terminated): the batch's say, then nb's. */
static struct room_nb_node *
room_nb_batch_lookup(struct room_nb_batch *b, const char *key)
{
	struct room_cell	*c;
	void			*v;

	if (lh_table_lookup_ex(b->ids, key, &v))
		return (v);
	if ((c = room_nb_ids_get(b->nb, key)) == NULL)
		return (NULL);
	return (&b->orig[c->pos]);
}

/* The batch's table owns its keys: a deleted cell's id outlives it. */
static void
room_nb_batch_free_key(struct lh_entry *e)
{
	free((char *)lh_entry_k(e));
}

/* Index a node by its cell's id (the first of equal ids wins). */
static void
room_nb_batch_index(struct room_nb_batch *b, struct room_nb_node *n)
{
	struct lh_entry	*e;

	if ((e = lh_table_lookup_entry(b->ids, n->c->id)) != NULL) {
		if (lh_entry_v(e) == NULL)
			lh_table_delete_entry(b->ids, e);
		else
			return;
	} else if (room_nb_batch_lookup(b, n->c->id) != NULL)
		return;
	lh_table_insert(b->ids, xstrdup(n->c->id), n);
}

/* Forget a node's id: NULL hides the notebook's cell of that id. */
static void
room_nb_batch_unindex(struct room_nb_batch *b, struct room_nb_node *n)
{
	struct lh_entry	*e;

	if (room_nb_batch_lookup(b, n->c->id) != n)
		return;
	if ((e = lh_table_lookup_entry(b->ids, n->c->id)) != NULL)
		lh_table_delete_entry(b->ids, e);
	lh_table_insert(b->ids, xstrdup(n->c->id), NULL);
}

/* The node of a cell id given as bytes, or NULL. */
static struct room_nb_node *
room_nb_batch_find(struct room_nb_batch *b, const char *id, size_t len)
{
	struct room_nb_node	*n;
	char			 buf[80], *key;

	if (len == 0 || memchr(id, '\0', len) != NULL)
		return (NULL);
	key = len < sizeof buf ? buf : xmalloc(len + 1);
	memcpy(key, id, len);
	key[len] = '\0';
	n = room_nb_batch_lookup(b, key);
	if (key != buf)
		free(key);
	return (n);
}

static void
room_nb_batch_init(struct room_nb_batch *b, struct room_nb *nb)
{
	struct room_nb_node	*n;
	size_t			 i;

	memset(b, 0, sizeof *b);
	b->nb = nb;
	b->head.prev = b->head.next = &b->head;
	room_nb_ids_build(nb);
	b->ids = lh_kchar_table_new(16, room_nb_batch_free_key);
	b->touched = lh_kchar_table_new(16, NULL);
	b->orig = xcalloc(nb->ncells + 1, sizeof *b->orig);
	for (i = 0; i < nb->ncells; i++) {
		n = &b->orig[i];
		n->c = nb->cells[i];
		n->prev = i == 0 ? &b->head : n - 1;
		n->next = i + 1 == nb->ncells ? &b->head : n + 1;
	}
	if (nb->ncells > 0) {
		b->head.next = &b->orig[0];
		b->head.prev = &b->orig[nb->ncells - 1];
	}
	b->n = nb->ncells;
}

/*
 * Free the nodes; with `drop`, also the cells the batch made (inserts
 * and copies), leaving the originals as they were.
 */
static void
room_nb_batch_done(struct room_nb_batch *b, int drop)
{
	struct room_nb_node	*n, *next;

	for (n = b->head.next; n != &b->head; n = next) {
		next = n->next;
		if (drop && !room_nb_batch_orig(b, n))
			room_nb_cell_free(n->c);
		room_nb_batch_free_node(b, n);
	}
	free(b->orig);
	lh_table_free(b->ids);
	lh_table_free(b->touched);
	mpvalue_free(&b->metadata);
}

/* Did an earlier edit of the batch delete the cell of this id? */
static int
room_nb_batch_gone(struct room_nb_batch *b, const char *id, size_t len)
{
	void	*v;
	char	*key;
	int	 gone;

	key = xstrndup(id, len);
	gone = lh_table_lookup_ex(b->ids, key, &v) && v == NULL;
	free(key);
	return (gone);
}

/* "1 cell", "2 cells". */
static const char *
room_nb_plural(size_t n)
{
	return (n == 1 ? "" : "s");
}

/*
 * A cell reference against the notebook as it is: a cell_id string, or
 * an integer taken as a zero-based index.  NULL when it names no cell,
 * with *code and *cause (what is prefixed: "cell_ids[2]: ").  Nothing is
 * resolved anywhere else: the worker passes references on as given.
 */
struct room_cell *
room_nb_ref(struct room_nb *nb, const msgpack_object *ref, const char *what,
    char **cause, const char **code)
{
	struct room_cell	*c;
	char			*id;

	*code = PROTO_E_INVALID_ARGUMENT;
	if (ref == NULL || ref->type == MSGPACK_OBJECT_NIL) {
		xasprintf(cause, "%sa cell reference is missing", what);
		return (NULL);
	}
	if (ref->type == MSGPACK_OBJECT_STR) {
		if (ref->via.str.size == 0) {
			xasprintf(cause, "%sa cell_id must not be empty",
			    what);
			return (NULL);
		}
		id = xstrndup(ref->via.str.ptr, ref->via.str.size);
		c = NULL;
		if (strlen(id) == ref->via.str.size)
			c = room_nb_find(nb, id, NULL);
		free(id);
		if (c == NULL) {
			*code = PROTO_E_CELL_NOT_FOUND;
			xasprintf(cause, "%sno cell %.*s in this notebook; "
			    "inspect_notebook lists the cells", what,
			    (int)ref->via.str.size, ref->via.str.ptr);
		}
		return (c);
	}
	if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    ref->via.u64 < nb->ncells)
		return (nb->cells[ref->via.u64]);
	if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    ref->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*code = PROTO_E_CELL_NOT_FOUND;
		if (ref->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			xasprintf(cause, "%scell index %lld is out of range "
			    "(%zu cell%s)", what, (long long)ref->via.i64,
			    nb->ncells, room_nb_plural(nb->ncells));
		else
			xasprintf(cause, "%scell index %llu is out of range "
			    "(%zu cell%s)", what,
			    (unsigned long long)ref->via.u64, nb->ncells,
			    room_nb_plural(nb->ncells));
		return (NULL);
	}
	xasprintf(cause, "%sa cell reference is a cell_id string or a "
	    "zero-based index", what);
	return (NULL);
}

/*
 * A cell reference in a batch: an id string names the cell of that id
 * now (the batch's inserts included); an integer is the index at the
 * start of the batch, so it names the cell that was there then,
 * wherever the batch has moved it.  NULL after room_nb_fail.
 */
static struct room_nb_node *
room_nb_resolve(struct room_nb_edit *ed, const msgpack_object *ref,
    const char *what)
{
	struct room_nb_batch	*b = ed->b;
	struct room_nb_node	*n;
	struct room_cell	*c;
	const char		*code;
	char			*cause = NULL;

	if (ref != NULL && ref->type == MSGPACK_OBJECT_STR &&
	    ref->via.str.size > 0) {
		if ((n = room_nb_batch_find(b, ref->via.str.ptr,
		    ref->via.str.size)) != NULL)
			return (n);
		if (room_nb_batch_gone(b, ref->via.str.ptr, ref->via.str.size))
			room_nb_fail(ed, PROTO_E_CELL_NOT_FOUND,
			    "%scell %.*s was deleted by an earlier edit of "
			    "this batch", what,
			    (int)ref->via.str.size, ref->via.str.ptr);
		else
			room_nb_fail(ed, PROTO_E_CELL_NOT_FOUND,
			    "%sno cell %.*s in this notebook; inspect_notebook "
			    "lists the cells", what, (int)ref->via.str.size,
			    ref->via.str.ptr);
		return (NULL);
	}
	if ((c = room_nb_ref(b->nb, ref, what, &cause, &code)) == NULL) {
		room_nb_fail(ed, code, "%s", cause);
		free(cause);
		return (NULL);
	}
	if ((n = room_nb_batch_find(b, c->id, strlen(c->id))) == NULL)
		room_nb_fail(ed, PROTO_E_CELL_NOT_FOUND,
		    "%scell index %llu (cell %s) was deleted by an earlier "
		    "edit of this batch", what,
		    (unsigned long long)ref->via.u64, c->id);
	return (n);
}

/* Jupyter-like id: 8 lowercase hex digits, unique in the batch. */
static void
room_nb_batch_mint(struct room_nb_batch *b, char id[9])
{
	static uint32_t	pool[256];
	static size_t	left;

	do {
		/* One getrandom per 256 ids, not one each. */
		if (left == 0) {
			if (getrandom(pool, sizeof pool, 0) != sizeof pool)
				for (left = 0; left < 256; left++)
					pool[left] = (uint32_t)random();
			left = 256;
		}
		snprintf(id, 9, "%08x", pool[--left]);
	} while (room_nb_batch_find(b, id, 8) != NULL);
}

/* The node's cell, copied first if it is still the notebook's. */
static struct room_cell *
room_nb_own(struct room_nb_batch *b, struct room_nb_node *n)
{
	struct room_cell	*c = n->c;

	/* Same id, same node: what names it still finds it. */
	if (room_nb_batch_orig(b, n)) {
		c = room_nb_cell_clone(c);
		n->c = c;
	}
	return (c);
}

static void
room_nb_touch(struct room_nb_batch *b, struct room_nb_result *res,
    const char *id)
{
	char	*copy;

	if (lh_table_lookup_entry(b->touched, id) != NULL)
		return;
	if (res->ntouched == b->touched_cap) {
		b->touched_cap = b->touched_cap < 16 ? 16 : b->touched_cap * 2;
		res->touched = xreallocarray(res->touched, b->touched_cap,
		    sizeof *res->touched);
	}
	copy = xstrdup(id);
	res->touched[res->ntouched++] = copy;
	lh_table_insert(b->touched, copy, NULL);
}

/* "after" as resolved: the id of the cell before prev's place, or TOP. */
static struct proto_doc
room_nb_after(struct room_nb_batch *b, struct room_nb_node *prev)
{
	return (proto_doc_cstr(prev == &b->head ? "TOP" : prev->c->id));
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
	free(res->conflict_id);
	free(res->conflict_source);
	free(res->undo);
	memset(res, 0, sizeof *res);
	res->index = -1;
}

/* Fail the edit with a typed error; always -1. */
static int
room_nb_fail(struct room_nb_edit *ed, const char *code, const char *fmt, ...)
{
	va_list	ap;

	free(ed->cause);
	ed->code = code;
	va_start(ap, fmt);
	xvasprintf(&ed->cause, fmt, ap);
	va_end(ap);
	return (-1);
}

/*
 * The fields every op may carry, their types checked by the codec:
 * cell_type one we know, source valid UTF-8.
 */
static int
room_nb_edit_fields(struct room_nb_edit *ed)
{
	ed->type = ROOM_CELL_CODE;
	ed->has_type = 0;
	if (ed->m.cell_type.ptr != NULL) {
		if (room_nb_type_parse(ed->m.cell_type.ptr,
		    ed->m.cell_type.len, &ed->type) != 0)
			return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
			    "cell_type must be code, markdown or raw"));
		ed->has_type = 1;
	}
	ed->src = ed->m.source.ptr;
	ed->srclen = ed->m.source.len;
	if (ed->src != NULL && !utf8_valid(ed->src, ed->srclen, NULL))
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "source is not valid UTF-8"));
	ed->md = ed->m.metadata.obj;
	return (0);
}

/* A partial change of a cell runtimed cannot model is refused. */
static int
room_nb_edit_unknown(struct room_nb_edit *ed, struct room_cell *c)
{
	return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT, "cell %s is of type "
	    "\"%s\", which runtimed does not know: replace it whole (give "
	    "cell_type and source), move or delete it", c->id, c->type_name));
}

/*
 * expect_version: the cell as it was before the batch must be at that
 * version, else the batch is refused with the cell as it is now (its
 * source capped).  Never on replay: the journal has only applied ones.
 */
static int
room_nb_expect(struct room_nb_edit *ed, struct room_nb_node *node)
{
	struct room_nb_result	*res = ed->res;
	const struct proto_str	*v = &ed->m.expect_version;
	struct room_cell	*c;
	char			 version[ROOM_VERSION_LEN + 1];
	size_t			 len;

	if (ed->replay || v->ptr == NULL)
		return (0);
	if ((c = room_nb_find(ed->b->nb, node->c->id, NULL)) == NULL)
		return (room_nb_fail(ed, PROTO_E_EDIT_CONFLICT,
		    "cell %s is new in "
		    "this batch: it has no version to expect", node->c->id));
	room_cell_version(c, version);
	if (v->len == ROOM_VERSION_LEN &&
	    memcmp(v->ptr, version, ROOM_VERSION_LEN) == 0)
		return (0);
	/* Read before a run or more output: the content is as read. */
	if (room_cell_same_content(c, v->ptr, v->len))
		return (0);
	free(res->conflict_id);
	free(res->conflict_source);
	res->conflict_id = xstrdup(c->id);
	memcpy(res->conflict_version, version, sizeof version);
	len = utf8_skip(c->source, c->source_len, ROOM_CONFLICT_SOURCE_MAX);
	res->conflict_source = xmalloc(len + 1);
	memcpy(res->conflict_source, c->source, len);
	res->conflict_source[len] = '\0';
	res->conflict_source_len = len;
	return (room_nb_fail(ed, PROTO_E_EDIT_CONFLICT,
	    "cell %s changed since it "
	    "was read: it is at version %s, not %.*s; nothing was applied; "
	    "redo the edit on its current source", c->id, version,
	    (int)(v->len > 64 ? 64 : v->len), v->ptr));
}

/* The edit as applied, for the journal (when the batch is kept). */
static void
room_nb_journal(struct room_nb_edit *ed, const struct proto_edit *j)
{
	if (ed->rp != NULL)
		proto_edit_pack(ed->rp, j);
}

/* insert {after?, cell_type?, source?, metadata?}: a new cell. */
static int
room_nb_op_insert(struct room_nb_edit *ed)
{
	struct room_nb_batch	*b = ed->b;
	struct room_nb_node	*at, *node;
	struct room_cell	*c;
	struct proto_edit	 j;
	const msgpack_object	*ref, *id;
	char			 mint[9];

	ref = ed->m.after.obj;
	if (proto_obj_streq(ref, "TOP"))
		at = &b->head;
	else if (proto_obj_streq(ref, "BOTTOM") || ref == NULL)
		at = b->head.prev;
	else if ((at = room_nb_resolve(ed, ref, "after: ")) == NULL)
		return (-1);
	room_nb_batch_mint(b, mint);
	c = room_nb_cell_new(ed->type, mint, ed->src != NULL ? ed->src : "",
	    ed->src != NULL ? ed->srclen : 0);
	/* Replay lands on the ids the request got. */
	if (ed->replay && (id = ed->m.cell_id.obj) != NULL &&
	    id->type == MSGPACK_OBJECT_STR &&
	    room_nb_valid_id(id->via.str.ptr, id->via.str.size) &&
	    room_nb_batch_find(b, id->via.str.ptr, id->via.str.size) == NULL) {
		free(c->id);
		c->id = xstrndup(id->via.str.ptr, id->via.str.size);
	}
	if (ed->md != NULL && mpvalue_merge(&c->metadata, ed->md) != 0) {
		room_nb_cell_free(c);
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "bad metadata"));
	}
	memset(&j, 0, sizeof j);
	j.op = PROTO_EDIT_INSERT;
	j.after = room_nb_after(b, at);
	j.cell_id = proto_doc_cstr(c->id);
	j.cell_type = proto_str_make(room_nb_type_name(ed->type));
	j.source.ptr = c->source;
	j.source.len = c->source_len;
	j.metadata.obj = ed->md;
	room_nb_journal(ed, &j);
	node = xcalloc(1, sizeof *node);
	node->c = c;
	room_nb_batch_link(b, at, node);
	room_nb_batch_index(b, node);
	ed->out = xstrdup(c->id);
	return (0);
}

/* edit {cell_id, source?, cell_type?, metadata?}: change a cell. */
static int
room_nb_op_edit(struct room_nb_edit *ed)
{
	struct room_nb_node	*node;
	struct room_cell	*c;
	struct proto_edit	 j;

	if ((node = room_nb_resolve(ed, ed->m.cell_id.obj, "")) == NULL ||
	    room_nb_expect(ed, node) != 0)
		return (-1);
	if (ed->src == NULL && ed->md == NULL && !ed->has_type)
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT, "nothing to "
		    "change (source, cell_type or metadata)"));
	c = node->c;
	if (c->type == ROOM_CELL_UNKNOWN && (ed->src == NULL || !ed->has_type))
		return (room_nb_edit_unknown(ed, c));
	c = room_nb_own(ed->b, node);
	/* Replaced whole: nothing of the unknown cell stays. */
	if (c->type == ROOM_CELL_UNKNOWN)
		room_nb_cell_clear(c);
	if (ed->md != NULL && mpvalue_merge(&c->metadata, ed->md) != 0)
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "bad metadata"));
	room_cell_touch(c);
	if (ed->src != NULL)
		room_nb_cell_set_source(c, ed->src, ed->srclen);
	if (ed->has_type)
		room_nb_cell_set_type(c, ed->type);
	memset(&j, 0, sizeof j);
	j.op = PROTO_EDIT_EDIT;
	j.cell_id = proto_doc_cstr(c->id);
	j.source = ed->m.source;
	j.metadata.obj = ed->md;
	if (ed->has_type)
		j.cell_type = proto_str_make(room_nb_type_name(ed->type));
	room_nb_journal(ed, &j);
	ed->out = xstrdup(c->id);
	return (0);
}

/* delete {cell_id}. */
static int
room_nb_op_delete(struct room_nb_edit *ed)
{
	struct room_nb_batch	*b = ed->b;
	struct room_nb_node	*node;
	struct room_cell	*c;
	struct proto_edit	 j;

	if ((node = room_nb_resolve(ed, ed->m.cell_id.obj, "")) == NULL ||
	    room_nb_expect(ed, node) != 0)
		return (-1);
	c = node->c;
	ed->out = xstrdup(c->id);
	memset(&j, 0, sizeof j);
	j.op = PROTO_EDIT_DELETE;
	j.cell_id = proto_doc_cstr(c->id);
	room_nb_journal(ed, &j);
	room_nb_batch_unindex(b, node);
	room_nb_batch_unlink(b, node);
	if (!room_nb_batch_orig(b, node))
		room_nb_cell_free(c);
	node->gone = 1;
	room_nb_batch_free_node(b, node);
	return (0);
}

/* Count (overlapping) occurrences of needle, stopping at 2. */
static int
room_nb_count(const char *hay, size_t hlen, const char *needle,
    size_t nlen, size_t *first)
{
	const char	*p = hay, *q;
	int		 n = 0;

	while (n < 2 && (size_t)(hay + hlen - p) >= nlen &&
	    (q = memmem(p, (size_t)(hay + hlen - p), needle, nlen)) != NULL) {
		if (n == 0)
			*first = (size_t)(q - hay);
		n++;
		p = q + 1;
	}
	return (n);
}

/*
 * replace {cell_id, old_text, new_text}: old_text must occur exactly
 * once in the cell's source as the batch has it (earlier edits of the
 * batch applied), so the change is judged against the same state as
 * the rest of the batch.  Journalled as the edit it makes.
 */
static int
room_nb_op_replace(struct room_nb_edit *ed)
{
	struct room_nb_node	*node;
	struct room_cell	*c;
	struct proto_edit	 j;
	const char		*old, *new;
	char			*buf;
	size_t			 olen, nlen, at = 0, len;
	int			 n;

	if ((node = room_nb_resolve(ed, ed->m.cell_id.obj, "")) == NULL ||
	    room_nb_expect(ed, node) != 0)
		return (-1);
	old = ed->m.old_text.ptr;
	olen = ed->m.old_text.len;
	new = ed->m.new_text.ptr;
	nlen = ed->m.new_text.len;
	if (olen == 0)
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "old_text must not be empty"));
	if (!utf8_valid(new, nlen, NULL))
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "new_text is not valid UTF-8"));
	c = node->c;
	if (c->type == ROOM_CELL_UNKNOWN)
		return (room_nb_edit_unknown(ed, c));
	n = room_nb_count(c->source, c->source_len, old, olen, &at);
	if (n == 0)
		return (room_nb_fail(ed, PROTO_E_NO_MATCH,
		    "old_text occurs nowhere in cell %s; read the cell with "
		    "inspect_notebook and copy the text exactly", c->id));
	if (n > 1)
		return (room_nb_fail(ed, PROTO_E_AMBIGUOUS_MATCH,
		    "old_text occurs more than once in cell %s; include more "
		    "surrounding text to make it unique", c->id));
	c = room_nb_own(ed->b, node);
	len = c->source_len - olen + nlen;
	buf = xmalloc(len + 1);
	memcpy(buf, c->source, at);
	memcpy(buf + at, new, nlen);
	memcpy(buf + at + nlen, c->source + at + olen,
	    c->source_len - at - olen);
	buf[len] = '\0';
	free(c->source);
	c->source = buf;
	c->source_len = len;
	room_nb_cell_rescan(c);
	room_cell_touch(c);
	memset(&j, 0, sizeof j);
	j.op = PROTO_EDIT_EDIT;
	j.cell_id = proto_doc_cstr(c->id);
	j.source.ptr = c->source;
	j.source.len = c->source_len;
	room_nb_journal(ed, &j);
	ed->out = xstrdup(c->id);
	return (0);
}

/* The cells a move names, each marked moving; NULL after room_nb_fail. */
static struct room_nb_node **
room_nb_move_list(struct room_nb_edit *ed, size_t *np)
{
	struct room_nb_node	**moved;
	const msgpack_object	 *list;
	char			  what[40];
	size_t			  j, n;

	/* A non-empty list: the codec checked. */
	list = ed->m.cell_ids.obj;
	n = list->via.array.size;
	moved = xreallocarray(NULL, n, sizeof *moved);
	for (j = 0; j < n; j++) {
		snprintf(what, sizeof what, "cell_ids[%zu]: ", j);
		if ((moved[j] = room_nb_resolve(ed, &list->via.array.ptr[j],
		    what)) == NULL)
			break;
		if (moved[j]->moving) {
			room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
			    "cell %s named twice", moved[j]->c->id);
			break;
		}
		moved[j]->moving = 1;
	}
	/* A failed batch is dropped whole: the marks do not matter. */
	if (j < n) {
		free(moved);
		return (NULL);
	}
	*np = n;
	return (moved);
}

/* move {cell_ids, after?}: the cells, in that order, after a cell. */
static int
room_nb_op_move(struct room_nb_edit *ed)
{
	struct room_nb_batch	 *b = ed->b;
	struct room_nb_node	**moved, *at = NULL;
	struct proto_edit	  e;
	struct proto_cstrs	  l;
	const msgpack_object	 *ref;
	const char		**ids;
	size_t			  j, n;

	if ((moved = room_nb_move_list(ed, &n)) == NULL)
		return (-1);
	ref = ed->m.after.obj;
	if (!proto_obj_streq(ref, "TOP") && !proto_obj_streq(ref, "BOTTOM") &&
	    ref != NULL) {
		if ((at = room_nb_resolve(ed, ref, "after: ")) == NULL ||
		    (at->moving && room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "cannot move a cell after itself") != 0)) {
			free(moved);
			return (-1);
		}
	}
	/* Take the moved cells out, then put them back. */
	for (j = 0; j < n; j++) {
		room_nb_batch_unlink(b, moved[j]);
		moved[j]->moving = 0;
	}
	if (at == NULL)
		at = proto_obj_streq(ref, "TOP") ? &b->head : b->head.prev;
	if (ed->rp != NULL) {
		ids = xreallocarray(NULL, n, sizeof *ids);
		for (j = 0; j < n; j++)
			ids[j] = moved[j]->c->id;
		l.v = ids;
		l.n = n;
		memset(&e, 0, sizeof e);
		e.op = PROTO_EDIT_MOVE;
		e.after = room_nb_after(b, at);
		e.cell_ids = proto_doc_cstrs(&l);
		room_nb_journal(ed, &e);
		free(ids);
	}
	for (j = 0; j < n; j++) {
		room_nb_batch_link(b, at, moved[j]);
		at = moved[j];
		room_nb_touch(b, ed->res, moved[j]->c->id);
	}
	ed->out = xstrdup(moved[0]->c->id);
	free(moved);
	return (0);
}

/* clear_outputs {cell_ids?}: of those cells, or of every code cell. */
static int
room_nb_op_clear_outputs(struct room_nb_edit *ed)
{
	struct room_nb_batch	 *b = ed->b;
	struct room_nb_node	**cleared, *node, *at;
	struct room_cell	 *c;
	struct proto_edit	  e;
	struct proto_cstrs	  l;
	const msgpack_object	 *list;
	const char		**ids;
	char			  what[40];
	size_t			  j, k, n;

	/* A list or NULL: the codec checked. */
	list = ed->m.cell_ids.obj;
	n = list != NULL ? list->via.array.size : b->n;
	cleared = xcalloc(n + 1, sizeof *cleared);
	node = b->head.next;
	for (j = 0, k = 0; j < n; j++) {
		if (list == NULL) {
			at = node;
			node = node->next;
		} else {
			snprintf(what, sizeof what, "cell_ids[%zu]: ", j);
			if ((at = room_nb_resolve(ed, &list->via.array.ptr[j],
			    what)) == NULL) {
				free(cleared);
				return (-1);
			}
		}
		if (j == 0)
			ed->out = xstrdup(at->c->id);
		if (at->c->type != ROOM_CELL_CODE)
			continue;
		c = room_nb_own(b, at);
		room_nb_clear_outputs(c);
		room_nb_cell_set_count(c, -1);
		cleared[k++] = at;
		room_nb_touch(b, ed->res, c->id);
	}
	if (ed->rp != NULL) {
		ids = xcalloc(k + 1, sizeof *ids);
		for (j = 0; j < k; j++)
			ids[j] = cleared[j]->c->id;
		l.v = ids;
		l.n = k;
		memset(&e, 0, sizeof e);
		e.op = PROTO_EDIT_CLEAR_OUTPUTS;
		e.cell_ids = proto_doc_cstrs(&l);
		room_nb_journal(ed, &e);
		free(ids);
	}
	/* The reply names the first cell cleared, else the first named. */
	if (k > 0) {
		free(ed->out);
		ed->out = xstrdup(cleared[0]->c->id);
	} else if (list == NULL) {
		free(ed->out);
		ed->out = NULL;
	}
	free(cleared);
	return (0);
}

/* notebook_metadata {metadata}: merged into the notebook's. */
static int
room_nb_op_notebook_metadata(struct room_nb_edit *ed)
{
	struct room_nb_batch	*b = ed->b;
	struct proto_edit	 j;

	/* metadata is a map here: the table needs it, fields checked it. */
	if (b->metadata.len == 0)
		mpvalue_copy(&b->metadata, &b->nb->metadata);
	if (ed->md == NULL || mpvalue_merge(&b->metadata, ed->md) != 0)
		return (room_nb_fail(ed, PROTO_E_INVALID_ARGUMENT,
		    "bad metadata"));
	memset(&j, 0, sizeof j);
	j.op = PROTO_EDIT_NOTEBOOK_METADATA;
	j.metadata.obj = ed->md;
	room_nb_journal(ed, &j);
	return (0);
}

/*
 * The ops of a batch by enum proto_edit_op: handler and what it changes.
 * resolve is the daemon's to rewrite first (room-merge.c); none here.
 */
static const struct room_nb_op {
	int		(*fn)(struct room_nb_edit *);
	int		  kinds;
} room_nb_ops[] = {
	[PROTO_EDIT_INSERT] = { room_nb_op_insert, ROOM_CHANGE_CELLS },
	[PROTO_EDIT_EDIT] = { room_nb_op_edit, ROOM_CHANGE_CELLS },
	[PROTO_EDIT_DELETE] = { room_nb_op_delete, ROOM_CHANGE_CELLS },
	[PROTO_EDIT_REPLACE] = { room_nb_op_replace, ROOM_CHANGE_CELLS },
	[PROTO_EDIT_MOVE] = { room_nb_op_move, ROOM_CHANGE_CELLS },
	[PROTO_EDIT_CLEAR_OUTPUTS] = { room_nb_op_clear_outputs,
	    ROOM_CHANGE_OUTPUTS },
	[PROTO_EDIT_NOTEBOOK_METADATA] = { room_nb_op_notebook_metadata,
	    ROOM_CHANGE_METADATA },
	[PROTO_EDIT_RESOLVE] = { NULL, 0 },
};

/*
 * Edit i of the batch read by its codec, its op's handler; NULL with
 * *cause whole ("edit N: ...") when the edit is not one.
 */
static const struct room_nb_op *
room_nb_edit_op(struct room_nb_edit *ed, const msgpack_object *e, size_t i,
    char **cause)
{
	const struct room_nb_op	*op;
	char			 n[32], err[512];

	snprintf(n, sizeof n, "edit %zu", i);
	if (proto_edit_unpack(e, n, &ed->m, err, sizeof err) != 0) {
		*cause = xstrdup(err);
		return (NULL);
	}
	op = &room_nb_ops[ed->m.op];
	if (op->fn == NULL) {
		xasprintf(cause, "%s: unknown op \"%s\" (insert, edit, delete, "
		    "replace, move, clear_outputs or notebook_metadata)", n,
		    proto_edit_op_name(ed->m.op));
		return (NULL);
	}
	return (op);
}

/*
 * Apply a batch of edits to copies: on success *pend holds the new cell
 * order (originals that were edited are copied first), to be committed
 * with room_nb_edit_commit or dropped with room_nb_edit_abort; until
 * then the notebook is as it was.  Every edit is judged against the
 * batch's own state (references, replace's text), so a batch that
 * applies is one change of one state.  res gets one cell id per edit
 * (NULL for notebook_metadata), the change kinds and the cells touched
 * (caller frees with room_nb_result_free); rp, when given, gets the
 * batch resolved (ids for every reference, minted ids on inserts,
 * replace as the edit it made) for the journal.  With replay, an
 * insert's cell_id is used as is (unless taken).  On failure nothing
 * changed, res->index is the failing edit, *code the error code and
 * *cause starts "edit N: ".  Linear in the edits and cells named, plus
 * one pass over the notebook.
 */
int
room_nb_edit_prepare(struct room_nb *nb, const msgpack_object *edits,
    int replay, msgpack_packer *rp, struct room_nb_result *res,
    struct room_nb_pending **pend, char **cause, const char **code)
{
	struct room_nb_batch	 b;
	struct room_nb_edit	 ed;
	struct room_nb_node	*node;
	struct room_nb_pending	*p;
	const struct room_nb_op	*op;
	size_t			 i, j, nedits;
	char			**out;

	memset(res, 0, sizeof *res);
	res->index = -1;
	*pend = NULL;
	*cause = NULL;
	*code = PROTO_E_INVALID_ARGUMENT;
	if (edits == NULL || edits->type != MSGPACK_OBJECT_ARRAY ||
	    edits->via.array.size == 0) {
		xasprintf(cause, "edits must be a non-empty list");
		return (-1);
	}
	nedits = edits->via.array.size;
	room_nb_batch_init(&b, nb);
	out = xcalloc(nedits, sizeof *out);
	if (rp != NULL)
		msgpack_pack_array(rp, nedits);

	memset(&ed, 0, sizeof ed);
	ed.b = &b;
	ed.res = res;
	ed.rp = rp;
	ed.replay = replay;
	for (i = 0; i < nedits; i++) {
		res->index = (int)i;
		if ((op = room_nb_edit_op(&ed, &edits->via.array.ptr[i], i,
		    cause)) == NULL)
			goto undo;
		if (room_nb_edit_fields(&ed) != 0 || op->fn(&ed) != 0)
			goto fail;
		res->kinds |= op->kinds;
		if ((out[i] = ed.out) != NULL)
			room_nb_touch(&b, res, out[i]);
		ed.out = NULL;
	}

	/* The new order, built once, and what is new in it. */
	p = xcalloc(1, sizeof *p);
	p->ncells = b.n;
	p->cells = xreallocarray(NULL, b.n + 1, sizeof *p->cells);
	for (node = b.head.next, j = 0; node != &b.head; node = node->next) {
		p->cells[j++] = node->c;
		if (!room_nb_batch_orig(&b, node))
			room_nb_push(&p->fresh, &p->nfresh, node->c);
	}
	for (j = 0; j < nb->ncells; j++) {
		if (b.orig[j].gone || !room_nb_batch_orig(&b, &b.orig[j]))
			room_nb_push(&p->old, &p->nold, nb->cells[j]);
	}
	p->metadata = b.metadata;
	memset(&b.metadata, 0, sizeof b.metadata);
	room_nb_batch_done(&b, 0);
	*pend = p;
	res->ids = out;
	res->nids = nedits;
	res->index = -1;
	return (0);

fail:
	*code = ed.code;
	xasprintf(cause, "edit %zu: %s", i, ed.cause);
undo:
	free(ed.cause);
	free(ed.out);
	room_nb_batch_done(&b, 1);
	for (j = 0; j < nedits; j++)
		free(out[j]);
	free(out);
	for (j = 0; j < res->ntouched; j++)
		free(res->touched[j]);
	free(res->touched);
	res->touched = NULL;
	res->ntouched = 0;
	return (-1);
}

/* Make a prepared batch the notebook's content. */
void
room_nb_edit_commit(struct room_nb *nb, struct room_nb_pending *p)
{
	size_t	j;

	/* Free the originals that did not survive, then index the new. */
	for (j = 0; j < p->nold; j++) {
		room_nb_ids_del(nb, p->old[j]);
		room_nb_cell_free(p->old[j]);
	}
	for (j = 0; j < p->nfresh; j++)
		room_nb_ids_add(nb, p->fresh[j]);
	room_nb_ids_move(nb);
	/* Positions change only from the first cell that moved. */
	for (j = 0; j < p->ncells && j < nb->ncells; j++) {
		if (p->cells[j] != nb->cells[j])
			break;
	}
	free(nb->cells);
	nb->cells = p->cells;
	nb->ncells = p->ncells;
	for (; j < nb->ncells; j++)
		nb->cells[j]->pos = j;
	if (p->metadata.len != 0) {
		mpvalue_free(&nb->metadata);
		nb->metadata = p->metadata;
	}
	free(p->fresh);
	free(p->old);
	free(p);
}

/* Drop a prepared batch: the notebook stays exactly as it was. */
void
room_nb_edit_abort(struct room_nb *nb, struct room_nb_pending *p)
{
	size_t	j;

	(void)nb;
	for (j = 0; j < p->nfresh; j++)
		room_nb_cell_free(p->fresh[j]);
	mpvalue_free(&p->metadata);
	free(p->cells);
	free(p->fresh);
	free(p->old);
	free(p);
}

/* The cells a prepared batch makes, in their new order. */
struct room_cell **
room_nb_pending_cells(struct room_nb_pending *p, size_t *n)
{
	*n = p->ncells;
	return (p->cells);
}

/* The cells a prepared batch made: inserts and copies it changed. */
struct room_cell **
room_nb_pending_fresh(struct room_nb_pending *p, size_t *n)
{
	*n = p->nfresh;
	return (p->fresh);
}

/*
 * The batch's author becomes the last editor of each cell it made or
 * whose type or source it changed (not of a cell it only moved, cleared
 * or gave metadata): issue 39.  Before anything reads the cells'
 * versions, which hash it.
 */
void
room_nb_pending_author(struct room_nb *nb, struct room_nb_pending *p,
    struct room_author *by)
{
	struct room_cell	*c, *o;
	size_t			 j;

	if (by == NULL)
		return;
	for (j = 0; j < p->nfresh; j++) {
		c = p->fresh[j];
		o = room_nb_find(nb, c->id, NULL);
		if (o != NULL && o != c && o->type == c->type &&
		    o->source_len == c->source_len &&
		    memcmp(o->source, c->source, c->source_len) == 0)
			continue;
		room_cell_set_author(c, by);
	}
}

/* Prepare and commit at once (replay, tests). */
int
room_nb_edit(struct room_nb *nb, const msgpack_object *edits, int replay,
    msgpack_packer *rp, struct room_nb_result *res, char **cause,
    const char **code)
{
	struct room_nb_pending	*p;

	if (room_nb_edit_prepare(nb, edits, replay, rp, res, &p, cause,
	    code) != 0)
		return (-1);
	room_nb_edit_commit(nb, p);
	return (0);
}
