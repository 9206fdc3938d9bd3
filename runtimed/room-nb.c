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

static void	room_nb_ids_drop(struct room_nb *);

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
	room_nb_ids_drop(nb);
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
	c->metadata = json_object_new_object();
	c->execution_count = -1;
	if (type == ROOM_CELL_CODE)
		c->outputs = json_object_new_array();
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

/* A loader sets cell c's id (len bytes, no NUL), keeping the index. */
void
room_nb_cell_set_id(struct room_nb *nb, struct room_cell *c,
    const char *id, size_t len)
{
	if (nb->ids != NULL)
		room_nb_ids_del(nb, c);
	free(c->id);
	c->id = xstrndup(id, len);
	if (nb->ids != NULL)
		room_nb_ids_add(nb, c);
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
};

/* A batch applied to copies, waiting for its journal commit. */
struct room_nb_pending {
	struct room_cell	**cells;
	size_t			  ncells;
	struct room_cell	**fresh;	/* inserts and copies */
	size_t			  nfresh;
	struct room_cell	**old;		/* originals they replace */
	size_t			  nold;
	struct json_object	 *metadata;	/* NULL when unchanged */
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
}

/*
 * Resolve a cell reference: an id string, or an integer taken as the
 * index at the start of the batch (so it names the cell that was there
 * then, wherever it is now).
 */
static struct room_nb_node *
room_nb_resolve(struct room_nb_batch *b, const msgpack_object *ref)
{
	const char	*id;

	if (ref == NULL)
		return (NULL);
	if (ref->type == MSGPACK_OBJECT_STR)
		return (room_nb_batch_find(b, ref->via.str.ptr,
		    ref->via.str.size));
	if (ref->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    ref->via.u64 < b->nb->ncells) {
		id = b->nb->cells[ref->via.u64]->id;
		return (room_nb_batch_find(b, id, strlen(id)));
	}
	return (NULL);
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

/* Pack "after" as resolved: the id of the cell before n's place, or TOP. */
static void
room_nb_pack_after(msgpack_packer *rp, struct room_nb_batch *b,
    struct room_nb_node *prev)
{
	if (rp == NULL)
		return;
	if (prev == &b->head)
		proto_pack_str(rp, "after", "TOP");
	else
		proto_pack_str(rp, "after", prev->c->id);
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
 * Apply a batch of edits to copies: on success *pend holds the new cell
 * order (originals that were edited are copied first), to be committed
 * with room_nb_edit_commit or dropped with room_nb_edit_abort; until
 * then the notebook is as it was.  res gets one cell id per edit (NULL
 * for notebook_metadata), the change kinds and the cells touched (caller
 * frees with room_nb_result_free); rp, when given, gets the batch
 * resolved (ids for every reference, minted ids on inserts) for the
 * journal.  With replay, an insert's cell_id is used as is (unless
 * taken).  On failure nothing changed, res->index is the failing edit
 * and *code the error code.  Linear in the edits and cells named, plus
 * one pass over the notebook.
 */
int
room_nb_edit_prepare(struct room_nb *nb, const msgpack_object *edits,
    int replay, msgpack_packer *rp, struct room_nb_result *res,
    struct room_nb_pending **pend, char **cause, const char **code)
{
	struct room_nb_batch	  b;
	struct room_nb_node	 *node, *at, **moved = NULL;
	struct room_nb_pending	 *p;
	struct room_cell	 *c;
	struct json_object	 *newmd = NULL;
	size_t			  i, j, k, len, nmoved, nedits;
	const msgpack_object	 *e, *ref, *md, *list;
	const char		 *op, *s;
	size_t			  oplen;
	enum room_cell_type	  type;
	char			  id[9], **out = NULL;

	memset(res, 0, sizeof *res);
	res->index = -1;
	*pend = NULL;
	*cause = NULL;
	*code = "invalid_argument";
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

	for (i = 0; i < nedits; i++) {
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
				at = &b.head;
			else if (proto_obj_streq(ref, "BOTTOM") ||
			    ref == NULL || ref->type == MSGPACK_OBJECT_NIL)
				at = b.head.prev;
			else if ((at = room_nb_resolve(&b, ref)) == NULL)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: no cell to insert after", i);
			room_nb_batch_mint(&b, id);
			c = room_nb_cell_new(type, id, s != NULL ? s : "",
			    s != NULL ? len : 0);
			if (replay && (ref = proto_get(e, "cell_id")) != NULL &&
			    ref->type == MSGPACK_OBJECT_STR &&
			    room_nb_valid_id(ref->via.str.ptr,
			    ref->via.str.size) && room_nb_batch_find(&b,
			    ref->via.str.ptr, ref->via.str.size) == NULL) {
				free(c->id);
				c->id = xstrndup(ref->via.str.ptr,
				    ref->via.str.size);
			}
			if (md != NULL && room_nb_merge(c->metadata, md) != 0) {
				room_nb_cell_free(c);
				ROOM_NB_FAIL("invalid_argument",
				    "edit %zu: bad metadata", i);
			}
			if (rp != NULL) {
				msgpack_pack_map(rp, md != NULL ? 6 : 5);
				proto_pack_str(rp, "op", "insert");
				room_nb_pack_after(rp, &b, at);
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
			node = xcalloc(1, sizeof *node);
			node->c = c;
			room_nb_batch_link(&b, at, node);
			room_nb_batch_index(&b, node);
			out[i] = xstrdup(c->id);
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 4 && memcmp(op, "edit", 4) == 0) {
			if ((node = room_nb_resolve(&b,
			    proto_get(e, "cell_id"))) == NULL)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			if (s == NULL && md == NULL &&
			    proto_get_str(e, "cell_type", NULL) == NULL)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "nothing to change (source, cell_type or "
				    "metadata)", i);
			c = node->c;
			if (c->type == ROOM_CELL_UNKNOWN && (s == NULL ||
			    proto_get_str(e, "cell_type", NULL) == NULL))
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell %s is of type \"%s\", which runtimed "
				    "does not know: replace it whole (give "
				    "cell_type and source), move or delete it",
				    i, c->id, c->type_name);
			c = room_nb_own(&b, node);
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
			if ((node = room_nb_resolve(&b,
			    proto_get(e, "cell_id"))) == NULL)
				ROOM_NB_FAIL("cell_not_found",
				    "edit %zu: cell not found", i);
			c = node->c;
			out[i] = xstrdup(c->id);
			if (rp != NULL) {
				msgpack_pack_map(rp, 2);
				proto_pack_str(rp, "op", "delete");
				proto_pack_str(rp, "cell_id", c->id);
			}
			room_nb_batch_unindex(&b, node);
			room_nb_batch_unlink(&b, node);
			if (!room_nb_batch_orig(&b, node))
				room_nb_cell_free(c);
			node->gone = 1;
			room_nb_batch_free_node(&b, node);
			res->kinds |= ROOM_CHANGE_CELLS;
		} else if (oplen == 4 && memcmp(op, "move", 4) == 0) {
			list = proto_get_array(e, "cell_ids");
			if (list == NULL || list->via.array.size == 0)
				ROOM_NB_FAIL("invalid_argument", "edit %zu: "
				    "cell_ids must be a non-empty list", i);
			nmoved = list->via.array.size;
			moved = xreallocarray(NULL, nmoved, sizeof *moved);
			for (j = 0; j < nmoved; j++) {
				moved[j] = room_nb_resolve(&b,
				    &list->via.array.ptr[j]);
				if (moved[j] == NULL)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: cell %zu to move not "
					    "found", i, j);
				if (moved[j]->moving)
					ROOM_NB_FAIL("invalid_argument",
					    "edit %zu: cell %s named twice", i,
					    moved[j]->c->id);
				moved[j]->moving = 1;
			}
			ref = proto_get(e, "after");
			at = NULL;
			if (!proto_obj_streq(ref, "TOP") &&
			    !proto_obj_streq(ref, "BOTTOM") && ref != NULL &&
			    ref->type != MSGPACK_OBJECT_NIL) {
				if ((at = room_nb_resolve(&b, ref)) == NULL)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: no cell to move after",
					    i);
				if (at->moving)
					ROOM_NB_FAIL("invalid_argument",
					    "edit %zu: cannot move a cell "
					    "after itself", i);
			}
			/* Take the moved cells out, then put them back. */
			for (j = 0; j < nmoved; j++) {
				room_nb_batch_unlink(&b, moved[j]);
				moved[j]->moving = 0;
			}
			if (at == NULL)
				at = proto_obj_streq(ref, "TOP") ? &b.head :
				    b.head.prev;
			if (rp != NULL) {
				msgpack_pack_map(rp, 3);
				proto_pack_str(rp, "op", "move");
				room_nb_pack_after(rp, &b, at);
				proto_pack_key(rp, "cell_ids");
				msgpack_pack_array(rp, nmoved);
				for (j = 0; j < nmoved; j++)
					proto_pack_cstr(rp, moved[j]->c->id);
			}
			for (j = 0; j < nmoved; j++) {
				room_nb_batch_link(&b, at, moved[j]);
				at = moved[j];
			}
			out[i] = xstrdup(moved[0]->c->id);
			for (j = 0; j < nmoved; j++)
				room_nb_touch(&b, res, moved[j]->c->id);
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
			nmoved = list != NULL ? list->via.array.size : b.n;
			moved = xcalloc(nmoved + 1, sizeof *moved);
			node = b.head.next;
			for (j = 0, k = 0; j < nmoved; j++) {
				if (list == NULL) {
					at = node;
					node = node->next;
				} else if ((at = room_nb_resolve(&b,
				    &list->via.array.ptr[j])) == NULL)
					ROOM_NB_FAIL("cell_not_found",
					    "edit %zu: cell %zu to clear not "
					    "found", i, j);
				if (at->c->type != ROOM_CELL_CODE)
					continue;
				c = room_nb_own(&b, at);
				room_nb_clear_outputs(c);
				c->execution_count = -1;
				moved[k++] = at;
				room_nb_touch(&b, res, c->id);
			}
			if (rp != NULL) {
				msgpack_pack_map(rp, 2);
				proto_pack_str(rp, "op", "clear_outputs");
				proto_pack_key(rp, "cell_ids");
				msgpack_pack_array(rp, k);
				for (j = 0; j < k; j++)
					proto_pack_cstr(rp, moved[j]->c->id);
			}
			if (k > 0)
				out[i] = xstrdup(moved[0]->c->id);
			else if (list != NULL && list->via.array.size > 0 &&
			    (at = room_nb_resolve(&b,
			    &list->via.array.ptr[0])) != NULL)
				out[i] = xstrdup(at->c->id);
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
			room_nb_touch(&b, res, out[i]);
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
	p->metadata = newmd;
	room_nb_batch_done(&b, 0);
	*pend = p;
	res->ids = out;
	res->nids = nedits;
	res->index = -1;
	return (0);

fail:
	free(moved);
	room_nb_batch_done(&b, 1);
	json_object_put(newmd);
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
	if (p->metadata != NULL) {
		json_object_put(nb->metadata);
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
	json_object_put(p->metadata);
	free(p->cells);
	free(p->fresh);
	free(p->old);
	free(p);
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
