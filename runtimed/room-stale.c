/* SPDX-License-Identifier: ISC */
/*
 * room-stale.c: why a code cell's outputs may not match it.  Each run of
 * a cell notes the source it ran, the kernel session (the kernel's id)
 * and its place in the room's order of runs; a read compares that with
 * the cell now (docs/decisions/023).  Kept in memory: a daemon restart
 * ends every kernel, so what is left to say then is kernel_restarted.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * none (never_run), and source_changed when we know what it ran.
 */
int *
room_stale_compute(struct room *r)
{
	struct room_stale_cell	*sc;
	struct room_cell	*c;
	const char		*session;
	unsigned char		 md[ROOM_STALE_HASH];
	uint64_t		 above = 0;
	size_t			 i;
	int			*bits;

	bits = xcalloc(r->nb->ncells + 1, sizeof *bits);
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
			if (sc->order < above)
				bits[i] |= ROOM_STALE_ORDER;
			else
				above = sc->order;
			continue;
		}
		bits[i] |= room_cell_has_out(c) ? ROOM_STALE_KERNEL :
		    ROOM_STALE_NEVER_RUN;
	}
	return (bits);
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
