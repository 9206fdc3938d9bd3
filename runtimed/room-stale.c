/* SPDX-License-Identifier: ISC */
/*
 * room-stale.c: why a code cell's outputs may not match it.  Each run of
 * a cell notes the source it ran, the kernel session (the kernel's id)
 * and its place in the room's order of runs; a read compares that with
 * the cell now (docs/decisions/023).  Kept in memory: a daemon restart
 * ends every kernel, so what is left to say then is kernel_restarted.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "runtimed.h"

#define ROOM_STALE_HASH	32

struct room_stale_cell {
	unsigned char	 src[ROOM_STALE_HASH];	/* SHA-256 of what ran */
	char		 session[37];
	uint64_t	 order;
};

struct room_stale {
	struct lh_table	*cells;		/* cell id -> room_stale_cell */
	uint64_t	 order;
};

static void	room_stale_entry_free(struct lh_entry *);
static void	room_stale_hash(const char *, size_t,
		    unsigned char [ROOM_STALE_HASH]);
static void	room_stale_prune(struct room *);
static struct room_stale_cell *room_stale_find(struct room *, const char *);
static int	room_stale_python(struct room *);
static struct pydefuse *room_stale_defuse(struct room_cell *);
static void	room_stale_upstream(struct room *, int *, const uint64_t *,
		    struct room_cell **);

static struct room_stale_cell *
room_stale_find(struct room *r, const char *id)
{
	void	*v;

	if (r->stale == NULL || !lh_table_lookup_ex(r->stale->cells, id, &v))
		return (NULL);
	return (v);
}

static void
room_stale_entry_free(struct lh_entry *e)
{
	free(lh_entry_k(e));
	free(lh_entry_v(e));
}

static void
room_stale_hash(const char *s, size_t len, unsigned char md[ROOM_STALE_HASH])
{
	u_int	mdlen;

	if (EVP_Digest(s, len, md, &mdlen, EVP_sha256(), NULL) != 1)
		fatalx("EVP_Digest failed");
}

/* A cell started running src in the room's kernel. */
void
room_stale_ran(struct room *r, const char *cell_id, const char *src,
    size_t len)
{
	struct room_stale	*st;
	struct room_stale_cell	*sc;
	const char		*session;

	if ((st = r->stale) == NULL) {
		st = r->stale = xcalloc(1, sizeof *st);
		st->cells = lh_kchar_table_new(64, room_stale_entry_free);
	}
	if ((sc = room_stale_find(r, cell_id)) == NULL) {
		sc = xcalloc(1, sizeof *sc);
		lh_table_insert(st->cells, xstrdup(cell_id), sc);
	}
	room_stale_hash(src, len, sc->src);
	session = room_kernel_session(r);
	snprintf(sc->session, sizeof sc->session, "%s",
	    session != NULL ? session : "");
	sc->order = ++st->order;
	room_stale_prune(r);
}

/* Forget deleted cells once they outnumber the notebook's. */
static void
room_stale_prune(struct room *r)
{
	struct room_stale	*st = r->stale;
	struct lh_entry		*e, *next;

	if (r->nb == NULL ||
	    (size_t)st->cells->count < 2 * r->nb->ncells + 256)
		return;
	for (e = st->cells->head; e != NULL; e = next) {
		next = e->next;
		if (room_nb_find(r->nb, lh_entry_k(e), NULL) == NULL)
			lh_table_delete_entry(st->cells, e);
	}
}

/*
 * ROOM_STALE_* bits of every cell, in order (caller frees): a code cell
 * run in this kernel session may have been edited since (source_changed)
 * or have run before a cell above it that ran later (out_of_order); one
 * not run in it has outputs from an earlier kernel (kernel_restarted) or
 * none (never_run), and source_changed when we know what it ran.  *upp
 * (caller frees) names, for upstream_changed, the cell that caused it.
 */
int *
room_stale_compute(struct room *r, struct room_cell ***upp)
{
	struct room_stale_cell	*sc;
	struct room_cell	*c;
	const char		*session;
	unsigned char		 md[ROOM_STALE_HASH];
	uint64_t		 above = 0, *order;
	size_t			 i;
	int			*bits;

	bits = xcalloc(r->nb->ncells + 1, sizeof *bits);
	order = xcalloc(r->nb->ncells + 1, sizeof *order);
	*upp = xcalloc(r->nb->ncells + 1, sizeof **upp);
	session = room_kernel_session(r);
	for (i = 0; i < r->nb->ncells; i++) {
		c = r->nb->cells[i];
		if (c->type != ROOM_CELL_CODE)
			continue;
		sc = room_stale_find(r, c->id);
		if (sc != NULL) {
			room_stale_hash(c->source, c->source_len, md);
			if (memcmp(md, sc->src, sizeof md) != 0)
				bits[i] |= ROOM_STALE_SOURCE;
		}
		if (sc != NULL && session != NULL &&
		    strcmp(sc->session, session) == 0) {
			order[i] = sc->order;
			if (sc->order < above)
				bits[i] |= ROOM_STALE_ORDER;
			else
				above = sc->order;
			continue;
		}
		bits[i] |= room_cell_has_out(c) ? ROOM_STALE_KERNEL :
		    ROOM_STALE_NEVER_RUN;
	}
	if (room_stale_python(r))
		room_stale_upstream(r, bits, order, *upp);
	free(order);
	return (bits);
}

/* Is the notebook's language python (its language_info, else kernelspec)? */
static int
room_stale_python(struct room *r)
{
	char	*name;
	int	 had, py;

	name = room_ipynb_meta_str(r->nb, "language_info", "name", &had);
	if (!had)
		name = room_ipynb_meta_str(r->nb, "kernelspec", "language",
		    NULL);
	py = name != NULL && strcasecmp(name, "python") == 0;
	free(name);
	return (py);
}

/*
 * What the cell defines and reads, scanned once per source: every setter
 * of a cell's source drops the scan (room-nb.c).  Hashing the source at
 * each use cost a read of every source per cell of an edit's reply (a
 * minute for 1,000 inserts beside 42 MB of sources).
 */
static struct pydefuse *
room_stale_defuse(struct room_cell *c)
{
	if (c->defuse == NULL)
		c->defuse = pydefuse_scan(c->source, c->source_len);
	return (c->defuse);
}

/*
 * upstream_changed, in notebook order: a cell that ran in this session
 * reads a name whose nearest definer above (a cell defining it, or one
 * that may define anything) ran after it, or is stale for a reason that
 * says its names may differ: edited, not run in this session, or
 * upstream_changed itself (so it propagates).  Not out_of_order alone:
 * where it matters, upstream_changed says it.  up[i] is the topmost such
 * definer.
 */
static void
room_stale_upstream(struct room *r, int *bits, const uint64_t *order,
    struct room_cell **up)
{
	struct lh_table		*last;
	struct lh_entry		*e;
	struct pydefuse		*du;
	struct room_cell	*c;
	size_t			 i, j, k, wild = 0, best;

	/* name -> 1 + index of the nearest cell above defining it */
	last = lh_kchar_table_new(256, NULL);
	for (i = 0; i < r->nb->ncells; i++) {
		c = r->nb->cells[i];
		if (c->type != ROOM_CELL_CODE)
			continue;
		du = room_stale_defuse(c);
		if (order[i] != 0 &&
		    !(bits[i] & (ROOM_STALE_KERNEL | ROOM_STALE_NEVER_RUN))) {
			best = SIZE_MAX;
			for (k = 0; k < du->nuses; k++) {
				e = lh_table_lookup_entry(last, du->uses[k]);
				j = e != NULL ? (size_t)(uintptr_t)e->v : 0;
				if (wild > j)
					j = wild;
				if (j-- == 0 || j >= best)
					continue;
				if ((bits[j] & ~ROOM_STALE_ORDER) != 0 ||
				    order[j] > order[i])
					best = j;
			}
			if (best != SIZE_MAX) {
				bits[i] |= ROOM_STALE_UPSTREAM;
				up[i] = r->nb->cells[best];
			}
		}
		for (k = 0; k < du->ndefs; k++) {
			if ((e = lh_table_lookup_entry(last,
			    du->defs[k])) != NULL)
				lh_entry_set_val(e, (void *)(uintptr_t)(i + 1));
			else
				lh_table_insert(last, du->defs[k],
				    (void *)(uintptr_t)(i + 1));
		}
		if (du->flags & PYDEFUSE_WILDCARD)
			wild = i + 1;
	}
	lh_table_free(last);
}

/*
 * Every name a code cell of a python notebook defines, for
 * room_stale_undefined, built once for all the cells of an edit's reply;
 * NULL when there is no lint: not python, or a cell may define names we
 * cannot see (import *, %run, magics).  Its keys point into the cells'
 * scans: free it (lh_table_free) before the notebook changes.
 */
struct lh_table *
room_stale_defined(struct room *r)
{
	struct lh_table		*all;
	struct pydefuse		*du;
	struct room_cell	*c;
	size_t			 i, k;

	if (!room_stale_python(r))
		return (NULL);
	all = lh_kchar_table_new(256, NULL);
	for (i = 0; i < r->nb->ncells; i++) {
		c = r->nb->cells[i];
		if (c->type != ROOM_CELL_CODE)
			continue;
		du = room_stale_defuse(c);
		if (du->flags & PYDEFUSE_WILDCARD) {
			lh_table_free(all);
			return (NULL);
		}
		for (k = 0; k < du->ndefs; k++)
			if (!lh_table_lookup_ex(all, du->defs[k], NULL))
				lh_table_insert(all, du->defs[k], NULL);
	}
	return (all);
}

/*
 * The names a python code cell reads that no code cell of the notebook
 * defines (all, from room_stale_defined) and that are not builtins (up
 * to max into names, pointing into the cell's scan; the count found is
 * returned).
 */
size_t
room_stale_undefined(struct lh_table *all, struct room_cell *cell,
    const char **names, size_t max)
{
	struct pydefuse		*mine;
	size_t			 k, n = 0;

	if (all == NULL || cell->type != ROOM_CELL_CODE)
		return (0);
	mine = room_stale_defuse(cell);
	if (mine->flags & PYDEFUSE_NOLINT)
		return (0);
	for (k = 0; k < mine->nuses; k++) {
		if (pydefuse_known(mine->uses[k]) ||
		    lh_table_lookup_ex(all, mine->uses[k], NULL))
			continue;
		if (n < max)
			names[n] = mine->uses[k];
		n++;
	}
	return (n);
}

void
room_stale_free(struct room *r)
{
	if (r->stale == NULL)
		return;
	lh_table_free(r->stale->cells);
	free(r->stale);
	r->stale = NULL;
}
