/* SPDX-License-Identifier: ISC */
/*
 * room-changes.c: a room's change log.  Every change bumps the room's
 * seq and is kept in a ring of the last ROOM_LOG_SIZE changes, so a
 * client that missed some asks for those after its seq (ROOM_CHANGES)
 * and is told to resync when they are gone; the newest is announced to
 * every peer of the room as ROOM_CHANGED.
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

#ifndef nitems
#define nitems(a)	(sizeof (a) / sizeof (a)[0])
#endif

/* One entry of a room's change log. */
struct room_change {
	uint64_t	  seq;
	int		  kinds;
	char		**cells;
	size_t		  ncells;
	char		 *exec_id;
};

/* The last ROOM_LOG_SIZE changes, a ring; base = seq before the oldest. */
struct room_log {
	struct room_change	ring[ROOM_LOG_SIZE];
	size_t			head;
	size_t			n;
	uint64_t		base;
};

static const char *room_changes_kind_names[] = {
	"cells", "outputs", "kernel", "saved", "metadata", "reloaded"
};

static void	room_changes_pack_kinds(msgpack_packer *, int);
static void	room_changes_pack_one(msgpack_packer *, struct room_change *,
		    int);

/* A new room's empty log. */
void
room_changes_create(struct room *r)
{
	r->log = xcalloc(1, sizeof *r->log);
}

/* Forget every change (the room's content is dropped). */
void
room_changes_clear(struct room *r)
{
	struct room_log		*log = r->log;
	struct room_change	*ch;
	size_t			 i, j;

	for (i = 0; i < ROOM_LOG_SIZE; i++) {
		ch = &log->ring[i];
		for (j = 0; j < ch->ncells; j++)
			free(ch->cells[j]);
		free(ch->cells);
		free(ch->exec_id);
		memset(ch, 0, sizeof *ch);
	}
	log->head = log->n = 0;
}

/* The room is freed. */
void
room_changes_free(struct room *r)
{
	room_changes_clear(r);
	free(r->log);
	r->log = NULL;
}

/* The room was loaded: changes from its present seq on are known. */
void
room_changes_rebase(struct room *r)
{
	r->log->base = r->seq;
}

/*
 * Record a change: bump seq, keep it in the log, mark content changes
 * dirty (and due for autosave).  Takes cells (an array of ids, copied).
 * Announcing is separate, so a request's reply can go first.
 */
uint64_t
room_changes_record(struct room *r, int kinds, char **cells, size_t ncells,
    const char *exec_id)
{
	struct room_log		*log = r->log;
	struct room_change	*ch;
	size_t			 i;

	r->seq++;
	ch = &log->ring[log->head];
	if (log->n == ROOM_LOG_SIZE)
		log->base = ch->seq;
	for (i = 0; i < ch->ncells; i++)
		free(ch->cells[i]);
	free(ch->cells);
	free(ch->exec_id);
	ch->seq = r->seq;
	ch->kinds = kinds;
	ch->ncells = ncells;
	ch->cells = ncells > 0 ? xreallocarray(NULL, ncells,
	    sizeof *ch->cells) : NULL;
	for (i = 0; i < ncells; i++)
		ch->cells[i] = xstrdup(cells[i]);
	ch->exec_id = exec_id != NULL ? xstrdup(exec_id) : NULL;
	log->head = (log->head + 1) % ROOM_LOG_SIZE;
	if (log->n < ROOM_LOG_SIZE)
		log->n++;
	if (kinds & ROOM_CHANGE_CONTENT) {
		if (!r->dirty || r->unsaved_since == 0)
			r->unsaved_since = util_mono_ms();
		r->dirty = 1;
		room_autosave_arm(r);
	}
	return (r->seq);
}

static void
room_changes_pack_kinds(msgpack_packer *pk, int kinds)
{
	size_t	i, n = 0;

	for (i = 0; i < nitems(room_changes_kind_names); i++)
		n += (kinds & (1 << i)) != 0;
	proto_pack_key(pk, "kinds");
	msgpack_pack_array(pk, n);
	for (i = 0; i < nitems(room_changes_kind_names); i++) {
		if (kinds & (1 << i))
			proto_pack_cstr(pk, room_changes_kind_names[i]);
	}
}

/* {seq, kinds, cell_ids, execution_ids} of one change, plus extra. */
static void
room_changes_pack_one(msgpack_packer *pk, struct room_change *ch, int extra)
{
	size_t	i;

	msgpack_pack_map(pk, 4 + extra);
	proto_pack_uint(pk, "seq", ch->seq);
	room_changes_pack_kinds(pk, ch->kinds);
	proto_pack_key(pk, "cell_ids");
	msgpack_pack_array(pk, ch->ncells);
	for (i = 0; i < ch->ncells; i++)
		proto_pack_cstr(pk, ch->cells[i]);
	proto_pack_key(pk, "execution_ids");
	msgpack_pack_array(pk, ch->exec_id != NULL ? 1 : 0);
	if (ch->exec_id != NULL)
		proto_pack_cstr(pk, ch->exec_id);
}

/* Send the newest change as ROOM_CHANGED to every peer of the room. */
void
room_changes_announce(struct room *r)
{
	struct room_log		*log = r->log;
	struct room_change	*ch;
	struct mpbuf		 b;
	size_t			 i;

	if (r->nmembers == 0 || log->n == 0)
		return;
	ch = &log->ring[(log->head + ROOM_LOG_SIZE - 1) % ROOM_LOG_SIZE];
	mpbuf_init(&b);
	room_changes_pack_one(&b.pk, ch, 1);
	proto_pack_str(&b.pk, "notebook_id", r->id);
	for (i = 0; i < r->nmembers; i++)
		peer_send(r->members[i], PROTO_MSG_ROOM_CHANGED, 0, &b.sb);
	mpbuf_free(&b);
}

/* ROOM_CHANGES_REPLY {seq, resync, changes} for changes after `after`. */
int
room_changes_pack(struct room *r, uint64_t after, msgpack_packer *pk)
{
	struct room_log	*log = r->log;
	size_t		 i, first, n = 0;
	int		 resync;

	resync = after > r->seq || after < log->base;
	if (!resync)
		n = (size_t)(r->seq - after);
	msgpack_pack_map(pk, 3);
	proto_pack_uint(pk, "seq", r->seq);
	proto_pack_bool(pk, "resync", resync);
	proto_pack_key(pk, "changes");
	msgpack_pack_array(pk, n);
	first = (log->head + ROOM_LOG_SIZE - n) % ROOM_LOG_SIZE;
	for (i = 0; i < n; i++) {
		room_changes_pack_one(pk,
		    &log->ring[(first + i) % ROOM_LOG_SIZE], 0);
	}
	return (0);
}

/* A kind's name ("outputs") as its ROOM_CHANGE_* bit; 0 if unknown. */
int
room_changes_kind(const char *kind)
{
	size_t	i;

	for (i = 0; i < nitems(room_changes_kind_names); i++) {
		if (strcmp(kind, room_changes_kind_names[i]) == 0)
			return (1 << i);
	}
	return (0);
}
