/* SPDX-License-Identifier: ISC */
/*
 * room-edit.c: ROOM_EDIT batches on their way to durability.  A batch is
 * applied to a copy (room_nb_edit_prepare), its journal entry goes to
 * the store's writer, and only once the entry is durable does the copy
 * become the room's content and the batch get its reply; meanwhile the
 * room serves reads of what it was.  The next batch on the same room
 * waits in its queue, since it must be prepared on the content this one
 * makes; batches of other rooms, and everything else, go on.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

struct room_edit_wait {
	msgpack_sbuffer		 edits;		/* packed, as sent */
	int			 has_if_seq;
	uint64_t		 if_seq;
	struct peer		*peer;		/* NULL once it left */
	uint32_t		 id;
	room_edit_cb		 cb;
	struct room_nb_pending	*pend;
	struct room_nb_result	 res;
	msgpack_sbuffer		 resolved;	/* as journaled: says how */
	char			**conflicts;	/* resolve ops' cells */
	size_t			 nconflicts;
	char			*session;	/* whose batch, or NULL */
	char			*client;
	int			 person;	/* from the live page */
	int			 undo;		/* ROOM_EDIT_UNDO_* */
	int64_t			 undo_batches;
	uint64_t		 undo_id;
	uint64_t		*reverts;	/* a revert's batches */
	size_t			 nreverts;
	msgpack_sbuffer		 record;	/* for undo; size 0: none */
	uint64_t		 batch_id;	/* its id there */
	TAILQ_ENTRY(room_edit_wait) entry;
};
#define ROOM_EDIT_UNDO_NONE	0
#define ROOM_EDIT_UNDO_LIST	1
#define ROOM_EDIT_UNDO_REVERT	2

struct room_edits {
	TAILQ_HEAD(, room_edit_wait)	 queue;	/* the first may be in flight */
	int				 inflight;
};

static void	room_edit_wait_free(struct room_edit_wait *);
static void	room_edit_fail(struct room *, struct room_edit_wait *,
		    const char *, const char *, ...) printflike(4, 5);
static int	room_edit_prepare(struct room *, struct room_edit_wait *);
static void	room_edit_next(struct room *);
static void	room_edit_durable(struct room *, int, const char *, void *);
static void	room_edit_commit(struct room *, struct room_edit_wait *);
static int	room_edit_undo_args(struct room *, struct room_edit_wait *,
		    const msgpack_object *);
static void	room_edit_undo_reply(struct room_edit_wait *, struct room *);
static int	room_edit_undo(struct room *, struct room_edit_wait *);
static void	room_edit_record(struct room *, struct room_edit_wait *);

static void
room_edit_wait_free(struct room_edit_wait *w)
{
	size_t	i;

	for (i = 0; i < w->nconflicts; i++)
		free(w->conflicts[i]);
	free(w->conflicts);
	msgpack_sbuffer_destroy(&w->edits);
	msgpack_sbuffer_destroy(&w->resolved);
	msgpack_sbuffer_destroy(&w->record);
	free(w->session);
	free(w->client);
	free(w->reverts);
	room_nb_result_free(&w->res);
	free(w);
}

/* Answer a batch that was not applied. */
static void
room_edit_fail(struct room *r, struct room_edit_wait *w, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*cause;

	va_start(ap, fmt);
	xvasprintf(&cause, fmt, ap);
	va_end(ap);
	if (w->peer != NULL)
		w->cb(r, w->peer, w->id, &w->res, cause, code);
	free(cause);
}

/*
 * undo {list: true} | {batches: N} | {batch_id}: checked as it comes;
 * -1 (answered) if it is not one of them.
 */
static int
room_edit_undo_args(struct room *r, struct room_edit_wait *w,
    const msgpack_object *o)
{
	int64_t	v;
	int	list = 0, n = 0;

	if (proto_get_bool(o, "list", &list) == 0 && list)
		n++;
	if (proto_get(o, "batches") != NULL) {
		if (proto_get_int(o, "batches", &v) != 0 || v < 1 ||
		    v > ROOM_UNDO_MAX) {
			room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
			    "undo: a number of batches from 1 to %d",
			    ROOM_UNDO_MAX);
			return (-1);
		}
		w->undo_batches = v;
		n++;
	}
	if (proto_get(o, "batch_id") != NULL) {
		if (proto_get_int(o, "batch_id", &v) != 0 || v < 1) {
			room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
			    "undo: batch_id is a batch's number (list them)");
			return (-1);
		}
		w->undo_id = (uint64_t)v;
		n++;
	}
	if (n != 1) {
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
		    "undo takes exactly one of list, batches and batch_id");
		return (-1);
	}
	if (w->person && w->undo_batches > 0) {
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
		    "the live page reverts one batch, by its batch_id");
		return (-1);
	}
	/* The person's page may revert anyone's batch (decision 085). */
	if (w->session == NULL && !w->person) {
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
		    "undo needs the session whose batches they are");
		return (-1);
	}
	if (w->person) {
		free(w->session);
		w->session = NULL;
	}
	w->undo = list ? ROOM_EDIT_UNDO_LIST : ROOM_EDIT_UNDO_REVERT;
	return (0);
}

/* An undo's answer {batch_id, reverted} or {batches}, in res.undo. */
static void
room_edit_undo_reply(struct room_edit_wait *w, struct room *r)
{
	struct mpbuf	b;
	size_t		i;

	mpbuf_init(&b);
	if (w->undo == ROOM_EDIT_UNDO_LIST) {
		msgpack_pack_map(&b.pk, 1);
		proto_pack_key(&b.pk, "batches");
		room_undo_list(r->undo, w->session, 0, ROOM_UNDO_MAX, &b.pk);
	} else {
		msgpack_pack_map(&b.pk, 2);
		proto_pack_uint(&b.pk, "batch_id", w->batch_id);
		proto_pack_key(&b.pk, "reverted");
		msgpack_pack_array(&b.pk, w->nreverts);
		for (i = 0; i < w->nreverts; i++)
			msgpack_pack_uint64(&b.pk, w->reverts[i]);
	}
	free(w->res.undo);
	w->res.undo = b.sb.data;
	w->res.undo_len = b.sb.size;
}

/*
 * An undo at the head of the queue: a list is answered here (-1, as
 * nothing is journaled); a revert becomes the batch that does it, or is
 * refused (-1).
 */
static int
room_edit_undo(struct room *r, struct room_edit_wait *w)
{
	char			*cause = NULL;
	const char		*code;

	if (w->undo == ROOM_EDIT_UNDO_LIST) {
		room_edit_undo_reply(w, r);
		if (w->peer != NULL)
			w->cb(r, w->peer, w->id, &w->res, NULL, NULL);
		return (-1);
	}
	/* The revert is the batch. */
	msgpack_sbuffer_clear(&w->edits);
	if (room_undo_plan(r->undo, r->nb, w->session, w->undo_batches,
	    w->undo_id, &w->edits, &w->reverts, &w->nreverts, &cause,
	    &code) != 0) {
		room_edit_fail(r, w, code, "%s", cause);
		free(cause);
		return (-1);
	}
	w->has_if_seq = 0;
	return (0);
}

/* The batch's record for undo, from the content and what it becomes. */
static void
room_edit_record(struct room *r, struct room_edit_wait *w)
{
	struct room_cell	**after, **fresh;
	size_t			  n, nfresh;

	after = room_nb_pending_cells(w->pend, &n);
	fresh = room_nb_pending_fresh(w->pend, &nfresh);
	msgpack_sbuffer_destroy(&w->record);
	msgpack_sbuffer_init(&w->record);
	/* The entry about to be appended is journal entry jseq + 1. */
	w->batch_id = r->jseq + 1;
	if (room_undo_record(r->nb, after, n, fresh, nfresh, w->res.touched,
	    w->res.ntouched, r->jseq + 1, w->session, w->client, w->reverts,
	    w->nreverts, 0, &w->record) == 0)
		return;
	if (w->record.size > ROOM_UNDO_RECORD_MAX) {
		msgpack_sbuffer_destroy(&w->record);
		(void)room_undo_record(r->nb, after, n, fresh, nfresh,
		    w->res.touched, w->res.ntouched, r->jseq + 1, w->session,
		    w->client, w->reverts, w->nreverts, 1, &w->record);
	}
}

/* Prepare the first queued batch and send its entry; -1 if refused. */
static int
room_edit_prepare(struct room *r, struct room_edit_wait *w)
{
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	msgpack_sbuffer		 rw;
	struct room_author	*by;
	char			*cause = NULL;
	const char		*code;
	size_t			 n;
	int			 rewritten = 0;

	w->res.index = -1;
	if (w->undo != ROOM_EDIT_UNDO_NONE && room_edit_undo(r, w) != 0)
		return (-1);
	if (w->has_if_seq && w->if_seq != r->seq) {
		room_edit_fail(r, w, PROTO_E_CONFLICT,
		    "the notebook changed (seq "
		    "%llu, not %llu); read it again and retry",
		    (unsigned long long)r->seq,
		    (unsigned long long)w->if_seq);
		return (-1);
	}
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, w->edits.data, w->edits.size, NULL) !=
	    MSGPACK_UNPACK_SUCCESS) {
		msgpack_unpacked_destroy(&u);
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
		    "edits: unreadable");
		return (-1);
	}
	if ((n = proto_edits_size(&u.data)) > PROTO_EDIT_MAX_EDITS) {
		msgpack_unpacked_destroy(&u);
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT,
		    "this batch has %zu edits and cells named; a batch holds "
		    "at most %d and nothing was applied: split it into batches "
		    "of at most %d",
		    n, PROTO_EDIT_MAX_EDITS, PROTO_EDIT_MAX_EDITS);
		return (-1);
	}
	/* resolve ops become the plain ops that do them (room-merge.c). */
	switch (room_merge_rewrite(r, &u.data, &rw, &w->conflicts,
	    &w->nconflicts, &cause)) {
	case -1:
		msgpack_unpacked_destroy(&u);
		room_edit_fail(r, w, PROTO_E_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		return (-1);
	case 1:
		msgpack_unpacked_destroy(&u);
		msgpack_unpacked_init(&u);
		if (msgpack_unpack_next(&u, rw.data, rw.size, NULL) !=
		    MSGPACK_UNPACK_SUCCESS)
			fatalx("%s: rewritten batch unreadable", __func__);
		rewritten = 1;
		break;
	}
	mpbuf_init(&b);
	/* A revert's inserts put cells back under their own ids. */
	if (room_nb_edit_prepare(r->nb, &u.data, w->nreverts > 0, &b.pk,
	    &w->res, &w->pend, &cause, &code) != 0) {
		if (rewritten)
			msgpack_sbuffer_destroy(&rw);
		msgpack_unpacked_destroy(&u);
		mpbuf_free(&b);
		room_edit_fail(r, w, code, "%s", cause);
		free(cause);
		return (-1);
	}
	msgpack_unpacked_destroy(&u);
	if (rewritten)
		msgpack_sbuffer_destroy(&rw);
	/* The cells it wrote are its client's now (issue 39). */
	by = w->client != NULL ? room_author_create(w->client, w->session, 0) :
	    NULL;
	room_nb_pending_author(r->nb, w->pend, by);
	r->edits->inflight = 1;
	room_edit_record(r, w);
	room_journal_edit(r, b.sb.data, b.sb.size, w->record.data,
	    w->record.size, by, room_edit_durable, w);
	room_author_unref(by);
	/* Kept until it is durable: the change it records says how. */
	w->resolved = b.sb;
	return (0);
}

/* Start the next batch, unless one is in flight. */
static void
room_edit_next(struct room *r)
{
	struct room_edit_wait	*w;

	while (!r->edits->inflight &&
	    (w = TAILQ_FIRST(&r->edits->queue)) != NULL) {
		if (room_edit_prepare(r, w) == 0)
			return;
		TAILQ_REMOVE(&r->edits->queue, w, entry);
		room_edit_wait_free(w);
	}
}

/*
 * Make the prepared copy the room's content.  A run may have written
 * outputs to a cell the batch copied while its entry was on its way; a
 * batch that does not change outputs keeps the cell's outputs as they
 * are now, not as they were when it was prepared.
 */
static void
room_edit_commit(struct room *r, struct room_edit_wait *w)
{
	struct room_cell	*c;
	struct proto_outputs	**outs;
	int64_t			*counts;
	size_t			 i, n = w->res.ntouched;

	if (w->res.kinds & ROOM_CHANGE_OUTPUTS) {
		room_nb_edit_commit(r->nb, w->pend);
		return;
	}
	outs = xcalloc(n + 1, sizeof *outs);
	counts = xcalloc(n + 1, sizeof *counts);
	for (i = 0; i < n; i++) {
		c = room_nb_find(r->nb, w->res.touched[i], NULL);
		if (c != NULL && c->type == ROOM_CELL_CODE &&
		    c->outputs != NULL) {
			outs[i] = proto_outputs_ref(c->outputs);
			counts[i] = c->execution_count;
		}
	}
	room_nb_edit_commit(r->nb, w->pend);
	for (i = 0; i < n; i++) {
		c = room_nb_find(r->nb, w->res.touched[i], NULL);
		if (outs[i] != NULL && c != NULL && c->type == ROOM_CELL_CODE &&
		    c->outputs != outs[i]) {
			room_nb_cell_set_outputs(c, proto_outputs_ref(outs[i]));
			room_nb_cell_set_count(c, counts[i]);
		}
		proto_outputs_unref(outs[i]);
	}
	free(outs);
	free(counts);
}

/* The batch's entry is durable (ok) or refused: apply it or drop it. */
static void
room_edit_durable(struct room *r, int ok, const char *why, void *arg)
{
	struct room_edit_wait	*w = arg;

	TAILQ_REMOVE(&r->edits->queue, w, entry);
	r->edits->inflight = 0;
	if (!ok) {
		/* Not durable, so not applied: the room is as it was. */
		room_nb_edit_abort(r->nb, w->pend);
		room_nb_result_free(&w->res);
		w->res.index = -1;
		room_edit_fail(r, w, PROTO_E_NOTEBOOK_UNAVAILABLE,
		    "the edit was not "
		    "applied: the state database cannot store it (%s); free "
		    "disk space for %s, then retry", why, runtimed_state_dir);
	} else {
		room_edit_commit(r, w);
		if (w->record.size > 0) {
			if (r->undo == NULL)
				r->undo = room_undo_create();
			(void)room_undo_add(r->undo, w->record.data,
			    w->record.size);
		}
		if (w->nreverts > 0)
			room_edit_undo_reply(w, r);
		room_merge_resolved(r, w->conflicts, w->nconflicts);
		room_changes_record_edit(r, &w->res, w->resolved.data,
		    w->resolved.size, w->conflicts, w->nconflicts, w->client,
		    w->session);
		room_journal_grown(r);
		if (w->peer != NULL)
			w->cb(r, w->peer, w->id, &w->res, NULL, NULL);
		else
			room_changes_announce(r);
	}
	room_edit_wait_free(w);
	room_edit_next(r);
}

/*
 * ROOM_EDIT: apply a batch (only at if_seq, when given) once it is
 * durable; cb (peer, id) then replies and announces.  The batch is
 * copied, so the request may go.  person: it came from the live page's
 * connection (its undo may revert any one batch).
 */
void
room_edit(struct room *r, const struct proto_room_edit *m, int person,
    struct peer *p, uint32_t id, room_edit_cb cb)
{
	struct room_edit_wait	*w;
	msgpack_packer		 pk;

	if (r->edits == NULL) {
		r->edits = xcalloc(1, sizeof *r->edits);
		TAILQ_INIT(&r->edits->queue);
	}
	w = xcalloc(1, sizeof *w);
	msgpack_sbuffer_init(&w->edits);
	msgpack_packer_init(&pk, &w->edits, msgpack_sbuffer_write);
	if (m->edits.obj != NULL)
		msgpack_pack_object(&pk, *m->edits.obj);
	else
		msgpack_pack_nil(&pk);
	w->has_if_seq = m->has_if_seq;
	w->if_seq = m->if_seq;
	w->peer = p;
	w->id = id;
	w->cb = cb;
	w->res.index = -1;
	w->person = person;
	msgpack_sbuffer_init(&w->record);
	if (m->session.ptr != NULL)
		w->session = proto_str_dup(&m->session);
	if (m->client_name.ptr != NULL)
		w->client = proto_str_dup(&m->client_name);
	if (m->undo.obj != NULL && room_edit_undo_args(r, w,
	    m->undo.obj) != 0) {
		room_edit_wait_free(w);
		return;
	}
	TAILQ_INSERT_TAIL(&r->edits->queue, w, entry);
	room_edit_next(r);
}

/* Batches queued or in flight. */
u_int
room_edit_pending(struct room *r)
{
	struct room_edit_wait	*w;
	u_int			 n = 0;

	if (r->edits == NULL)
		return (0);
	TAILQ_FOREACH(w, &r->edits->queue, entry)
		n++;
	return (n);
}

/* A peer left: its batches go on, unanswered (outcome_unknown there). */
void
room_edit_peer_gone(struct room *r, struct peer *p)
{
	struct room_edit_wait	*w;

	if (r->edits == NULL)
		return;
	TAILQ_FOREACH(w, &r->edits->queue, entry) {
		if (w->peer == p)
			w->peer = NULL;
	}
}

/*
 * The room's content goes away (before room_journal_stop): the batch in
 * flight is dropped (if its entry still commits, the journal has it) and
 * the queued ones with it.
 */
void
room_edit_free(struct room *r)
{
	struct room_edit_wait	*w;

	if (r->edits == NULL)
		return;
	while ((w = TAILQ_FIRST(&r->edits->queue)) != NULL) {
		TAILQ_REMOVE(&r->edits->queue, w, entry);
		if (w->pend != NULL && r->nb != NULL)
			room_nb_edit_abort(r->nb, w->pend);
		room_edit_wait_free(w);
	}
	free(r->edits);
	r->edits = NULL;
}
