/* SPDX-License-Identifier: ISC */
/*
 * worker-changes.c: what a change wait asks for and what it reports.  A
 * caller names the classes of change it waits for (content, outputs,
 * kernel, saves; saves not by default, so the autosave of its own edit
 * does not end its wait) and is told, cell by cell, how the notebook
 * changed: "cell abc: source edited", "inserted ghi at 4", "cell def:
 * outputs (2)", "kernel starting->idle", "saved"
 * (docs/decisions/019-wait-reasons.md).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

#ifndef nitems
#endif

static const struct {
	const char	*name;
	int		 cls;
	int		 kinds;		/* PROTO_KIND_* it stands for */
} worker_changes_classes[] = {
	{ "content", WORKER_CHANGES_CONTENT,
	    PROTO_KIND_CELLS | PROTO_KIND_METADATA | PROTO_KIND_RELOADED },
	{ "outputs", WORKER_CHANGES_OUTPUTS, PROTO_KIND_OUTPUTS },
	{ "kernel", WORKER_CHANGES_KERNEL, PROTO_KIND_KERNEL },
	{ "saves", WORKER_CHANGES_SAVES, PROTO_KIND_SAVED },
};
#define WORKER_CHANGES_NCLASSES \
	(sizeof worker_changes_classes / sizeof worker_changes_classes[0])

/* What a report gathers about one cell, in order of first mention. */
struct worker_changes_cell {
	char	*id;
	int	 hows;		/* 1 << enum proto_change_how */
	int64_t	 index;		/* inserted or moved to; -1 */
	int64_t	 outputs;	/* -1 */
	int	 disk;		/* changed by a merge of the file */
	char	*client;	/* the client of its last edit, or NULL */
	char	*session;	/* and its session */
};

struct worker_changes_report {
	struct worker_changes_cell	*cells;
	size_t				 ncells;
	size_t				 more;		/* cells past the cap */
	char				*kernel[6];	/* states, in order */
	size_t				 nkernel;
	int				 kinds;		/* of matched changes */
	int				 cur_disk;	/* the change at hand */
	struct proto_str		 cur_client;	/* its client's name */
	struct proto_str		 cur_session;	/* and session */
	size_t				 ndisk;		/* changes by disk */
	int64_t				 disk_at;	/* the file's mtime, ms */
};

static int	worker_changes_wanted(int, int);
static int	worker_changes_other(const struct worker_changes_cell *);
static struct worker_changes_cell *worker_changes_cell(
		    struct worker_changes_report *, const struct proto_str *);
static void	worker_changes_state(struct worker_changes_report *,
		    const struct proto_str *);
static void	worker_changes_detail(struct worker_changes_report *,
		    const struct proto_change_detail *);
static void	worker_changes_bare(struct worker_changes_report *,
		    const struct proto_room_changed *);
static void	worker_changes_union(struct json_object *,
		    const msgpack_object *, int *);
static void	worker_changes_text(struct worker_changes_report *,
		    struct evbuffer *);
static struct json_object	*worker_changes_cells(
		    struct worker_changes_report *);

/* The changes argument: a list of class names; absent is the default. */
int
worker_changes_parse(struct json_object *args, int *mask, char **msg)
{
	struct json_object	*v, *e;
	size_t			 i, k;

	*mask = WORKER_CHANGES_DEFAULT;
	if (!json_object_object_get_ex(args, "changes", &v) ||
	    json_object_is_type(v, json_type_null))
		return (0);
	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0)
		goto bad;
	*mask = 0;
	for (i = 0; i < json_object_array_length(v); i++) {
		e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			goto bad;
		for (k = 0; k < WORKER_CHANGES_NCLASSES; k++) {
			if (strcmp(json_object_get_string(e),
			    worker_changes_classes[k].name) == 0)
				break;
		}
		if (k == WORKER_CHANGES_NCLASSES)
			goto bad;
		*mask |= worker_changes_classes[k].cls;
	}
	return (0);
bad:
	xasprintf(msg, "changes must be a non-empty list of content, outputs, "
	    "kernel and saves (default: content, outputs, kernel)");
	return (-1);
}

/* "content, outputs, kernel" for mask (a progress message says it). */
void
worker_changes_names(int mask, struct evbuffer *out)
{
	size_t	k;
	int	first = 1;

	for (k = 0; k < WORKER_CHANGES_NCLASSES; k++) {
		if ((mask & worker_changes_classes[k].cls) == 0)
			continue;
		evbuffer_add_printf(out, "%s%s", first ? "" : ", ",
		    worker_changes_classes[k].name);
		first = 0;
	}
}

/* Do PROTO_KIND_* kinds hold a class of mask? */
static int
worker_changes_wanted(int mask, int kinds)
{
	size_t	k;

	for (k = 0; k < WORKER_CHANGES_NCLASSES; k++) {
		if ((mask & worker_changes_classes[k].cls) &&
		    (kinds & worker_changes_classes[k].kinds))
			return (1);
	}
	return (0);
}

/* Does a ROOM_CHANGED matter to a wait for mask?  Unknown kinds do. */
int
worker_changes_event(int mask, const struct proto_room_changed *ev)
{
	int	kinds = proto_room_change_kinds(ev);

	if (kinds == 0)
		return (1);
	return (worker_changes_wanted(mask, kinds));
}

static struct worker_changes_cell *
worker_changes_cell(struct worker_changes_report *rep,
    const struct proto_str *id)
{
	struct worker_changes_cell	*c;
	size_t				 i;

	for (i = 0; i < rep->ncells; i++) {
		c = &rep->cells[i];
		if (proto_str_eq(id, c->id))
			return (c);
	}
	if (rep->ncells == WORKER_CHANGES_MAX) {
		rep->more++;
		return (NULL);
	}
	rep->cells = xreallocarray(rep->cells, rep->ncells + 1,
	    sizeof *rep->cells);
	c = &rep->cells[rep->ncells++];
	c->id = proto_str_dup(id);
	c->hows = 0;
	c->disk = 0;
	c->client = c->session = NULL;
	c->index = c->outputs = -1;
	return (c);
}

/* Add a kernel state unless it is the last one said. */
static void
worker_changes_state(struct worker_changes_report *rep,
    const struct proto_str *s)
{
	if (s->ptr == NULL || (rep->nkernel > 0 &&
	    proto_str_eq(s, rep->kernel[rep->nkernel - 1])))
		return;
	if (rep->nkernel == nitems(rep->kernel)) {
		/* Keep the first and the latest. */
		free(rep->kernel[1]);
		memmove(&rep->kernel[1], &rep->kernel[2],
		    (rep->nkernel - 2) * sizeof rep->kernel[0]);
		rep->nkernel--;
	}
	rep->kernel[rep->nkernel++] = proto_str_dup(s);
}

static void
worker_changes_detail(struct worker_changes_report *rep,
    const struct proto_change_detail *d)
{
	struct worker_changes_cell	*c;

	if (d->how == PROTO_CHANGE_KERNEL) {
		worker_changes_state(rep, &d->from);
		worker_changes_state(rep, &d->to);
		return;
	}
	if (d->cell_id.ptr == NULL ||
	    (c = worker_changes_cell(rep, &d->cell_id)) == NULL)
		return;
	c->hows |= 1 << d->how;
	c->disk |= rep->cur_disk;
	if (rep->cur_client.ptr != NULL) {
		/* The last edit's client is whose the cell now is. */
		free(c->client);
		free(c->session);
		c->client = proto_str_dup(&rep->cur_client);
		c->session = proto_str_dup(&rep->cur_session);
	}
	if (d->has_index)
		c->index = d->index;
	if (d->how == PROTO_CHANGE_OUTPUTS && d->has_outputs)
		c->outputs = d->outputs;
	if (d->how == PROTO_CHANGE_CLEARED)
		c->outputs = 0;
}

/* A change without details (an older daemon): its cells, by kind. */
static void
worker_changes_bare(struct worker_changes_report *rep,
    const struct proto_room_changed *m)
{
	const msgpack_object		*ids = m->cell_ids.obj;
	struct worker_changes_cell	*c;
	struct proto_str		 id;
	uint32_t			 i;
	int				 kinds = proto_room_change_kinds(m);

	for (i = 0; ids != NULL && ids->type == MSGPACK_OBJECT_ARRAY &&
	    i < ids->via.array.size; i++) {
		if (ids->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
			continue;
		id.ptr = ids->via.array.ptr[i].via.str.ptr;
		id.len = ids->via.array.ptr[i].via.str.size;
		if ((c = worker_changes_cell(rep, &id)) == NULL)
			continue;
		if (kinds & PROTO_KIND_OUTPUTS)
			c->hows |= 1 << PROTO_CHANGE_OUTPUTS;
		if (kinds & PROTO_KIND_CELLS)
			c->hows |= 1 << PROTO_CHANGE_SOURCE;
	}
}

/* Add the strings of array from to the set (at most WORKER_CHANGES_MAX). */
static void
worker_changes_union(struct json_object *set, const msgpack_object *from,
    int *truncated)
{
	const msgpack_object	*v;
	size_t			 k;
	uint32_t		 i;

	if (from == NULL || from->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (i = 0; i < from->via.array.size; i++) {
		v = &from->via.array.ptr[i];
		if (v->type != MSGPACK_OBJECT_STR)
			continue;
		for (k = 0; k < json_object_array_length(set); k++) {
			if (strlen(json_object_get_string(
			    json_object_array_get_idx(set, k))) ==
			    v->via.str.size && memcmp(json_object_get_string(
			    json_object_array_get_idx(set, k)),
			    v->via.str.ptr, v->via.str.size) == 0)
				break;
		}
		if (k < json_object_array_length(set))
			continue;
		if (json_object_array_length(set) >= WORKER_CHANGES_MAX) {
			*truncated = 1;
			continue;
		}
		json_object_array_add(set, json_object_new_string_len(
		    v->via.str.ptr, (int)v->via.str.size));
	}
}

static const struct {
	enum proto_change_how	 how;
	const char		*says;
} worker_changes_says[] = {
	{ PROTO_CHANGE_SOURCE, "source edited" },
	{ PROTO_CHANGE_TYPE, "type changed" },
	{ PROTO_CHANGE_METADATA, "metadata edited" },
	{ PROTO_CHANGE_MOVED, "moved" },
	{ PROTO_CHANGE_CLEARED, "outputs cleared" },
	{ PROTO_CHANGE_OUTPUTS, "outputs" },
	{ PROTO_CHANGE_DELETED, "deleted" },
	{ PROTO_CHANGE_CONFLICT, "conflict with the file" },
	{ PROTO_CHANGE_RESOLVED, "conflict resolved" },
};
#define WORKER_CHANGES_NSAYS \
	(sizeof worker_changes_says / sizeof worker_changes_says[0])

/* Was the cell last edited by another session than this worker's? */
static int
worker_changes_other(const struct worker_changes_cell *c)
{
	char	own[16];

	if (c->client == NULL)
		return (0);
	snprintf(own, sizeof own, "%08x", worker_attach_tag());
	return (c->session == NULL || strcmp(c->session, own) != 0);
}

/* One line: "cell a: source edited; inserted b at 4; kernel x->y; saved". */
static void
worker_changes_text(struct worker_changes_report *rep, struct evbuffer *text)
{
	struct worker_changes_cell	*c;
	const char			*sep = "";
	size_t				 i, k;
	int				 n;

	for (i = 0; i < rep->ncells; i++) {
		c = &rep->cells[i];
		evbuffer_add(text, sep, strlen(sep));
		sep = "; ";
		if (c->hows & (1 << PROTO_CHANGE_INSERTED)) {
			evbuffer_add_printf(text, "inserted %s", c->id);
			if (c->index >= 0)
				evbuffer_add_printf(text, " at %lld",
				    (long long)c->index);
		} else if (c->hows & (1 << PROTO_CHANGE_DELETED)) {
			evbuffer_add_printf(text, "deleted %s%s", c->id,
			    c->disk ? " on disk" : "");
			if (!c->disk && worker_changes_other(c))
				evbuffer_add_printf(text, " (by %s)",
				    c->client);
			continue;
		} else
			evbuffer_add_printf(text, "cell %s", c->id);
		n = 0;
		for (k = 0; k < WORKER_CHANGES_NSAYS; k++) {
			if ((c->hows & (1 << worker_changes_says[k].how)) == 0)
				continue;
			evbuffer_add_printf(text, "%s%s", n++ == 0 ?
			    (c->hows & (1 << PROTO_CHANGE_INSERTED) ? ", " :
			    ": ") : ", ", worker_changes_says[k].says);
			if (worker_changes_says[k].how == PROTO_CHANGE_MOVED &&
			    c->index >= 0)
				evbuffer_add_printf(text, " to %lld",
				    (long long)c->index);
			if (worker_changes_says[k].how ==
			    PROTO_CHANGE_OUTPUTS && c->outputs >= 0)
				evbuffer_add_printf(text, " (%lld)",
				    (long long)c->outputs);
		}
		if (n == 0 && (c->hows & (1 << PROTO_CHANGE_INSERTED)) == 0)
			evbuffer_add(text, ": changed", 9);
		if (c->disk)
			evbuffer_add_printf(text, " (on disk)");
		else if (worker_changes_other(c))
			evbuffer_add_printf(text, " (by %s)", c->client);
	}
	if (rep->more > 0) {
		evbuffer_add_printf(text, "%sand %zu more cells", sep,
		    rep->more);
		sep = "; ";
	}
	if (rep->nkernel > 0 || (rep->kinds & PROTO_KIND_KERNEL)) {
		evbuffer_add_printf(text, "%skernel", sep);
		for (i = 0; i < rep->nkernel; i++)
			evbuffer_add_printf(text, "%s%s", i == 0 ? " " : "->",
			    rep->kernel[i]);
		sep = "; ";
	}
	if (rep->kinds & PROTO_KIND_METADATA) {
		evbuffer_add_printf(text, "%snotebook metadata", sep);
		sep = "; ";
	}
	if (rep->kinds & PROTO_KIND_RELOADED) {
		evbuffer_add_printf(text, "%sreloaded from disk", sep);
		sep = "; ";
	}
	if (rep->kinds & PROTO_KIND_SAVED) {
		evbuffer_add_printf(text, "%ssaved", sep);
		sep = "; ";
	}
	/* Nothing more precise (an update of a display): say the kinds. */
	if (*sep == '\0' && (rep->kinds & PROTO_KIND_OUTPUTS))
		evbuffer_add_printf(text, "outputs");
	evbuffer_add(text, "\n", 1);
}

/* [{cell_id, how: [...], inserted_at?, moved_to?, outputs?}] */
static struct json_object *
worker_changes_cells(struct worker_changes_report *rep)
{
	struct worker_changes_cell	*c;
	struct json_object		*arr, *o, *how;
	size_t				 i, k;

	arr = json_object_new_array();
	for (i = 0; i < rep->ncells; i++) {
		c = &rep->cells[i];
		o = json_object_new_object();
		json_object_object_add(o, "cell_id",
		    json_object_new_string(c->id));
		how = json_object_new_array();
		if (c->hows & (1 << PROTO_CHANGE_INSERTED))
			json_object_array_add(how,
			    json_object_new_string("inserted"));
		for (k = 0; k < WORKER_CHANGES_NSAYS; k++) {
			if (c->hows & (1 << worker_changes_says[k].how))
				json_object_array_add(how,
				    json_object_new_string(
				    worker_changes_says[k].says));
		}
		json_object_object_add(o, "how", how);
		if (c->index >= 0 && (c->hows & (1 << PROTO_CHANGE_INSERTED)))
			json_object_object_add(o, "inserted_at",
			    json_object_new_int64(c->index));
		else if (c->index >= 0)
			json_object_object_add(o, "moved_to",
			    json_object_new_int64(c->index));
		if (c->outputs >= 0)
			json_object_object_add(o, "outputs",
			    json_object_new_int64(c->outputs));
		if (c->disk)
			json_object_object_add(o, "by",
			    json_object_new_string("disk"));
		else if (c->client != NULL) {
			json_object_object_add(o, "by",
			    json_object_new_string(c->client));
			if (c->session != NULL)
				json_object_object_add(o, "session",
				    json_object_new_string(c->session));
		}
		json_object_array_add(arr, o);
	}
	return (arr);
}

/* A file's mtime (ms) as an RFC 3339 string in UTC, to the ms. */
static struct json_object *
worker_changes_time(int64_t ms)
{
	struct tm	tm;
	time_t		t = (time_t)(ms / 1000);
	char		buf[64];

	gmtime_r(&t, &tm);
	snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return (json_object_new_string(buf));
}

/* The PROTO_KIND_* kinds the classes of mask stand for. */
int
worker_changes_kinds(int mask)
{
	size_t	k;
	int	kinds = 0;

	for (k = 0; k < WORKER_CHANGES_NCLASSES; k++) {
		if (mask & worker_changes_classes[k].cls)
			kinds |= worker_changes_classes[k].kinds;
	}
	return (kinds);
}

/* A report being gathered, and the lists it fills. */
struct worker_changes_acc {
	struct worker_changes_report	 rep;
	struct json_object		*cells, *execs;
	size_t				 n, skipped;
	int				 trunc;
};

/* Take one change into acc, unless a wait for mask did not ask for it. */
static void
worker_changes_add(struct worker_changes_acc *a,
    const struct proto_room_changed *m, int mask)
{
	struct proto_change_detail	 d;
	const msgpack_object		*dl;
	uint32_t			 e;
	int				 kbits;
	char				 err[256];

	kbits = proto_room_change_kinds(m);
	if (kbits != 0 && !worker_changes_wanted(mask, kbits)) {
		a->skipped++;
		return;
	}
	a->n++;
	a->rep.kinds |= kbits;
	a->rep.cur_disk = proto_str_eq(&m->by, "disk");
	a->rep.cur_client = m->client;
	a->rep.cur_session = m->session;
	if (a->rep.cur_disk) {
		a->rep.ndisk++;
		if (m->has_at && m->at > a->rep.disk_at)
			a->rep.disk_at = m->at;
	}
	worker_changes_union(a->cells, m->cell_ids.obj, &a->trunc);
	worker_changes_union(a->execs, m->execution_ids.obj, &a->trunc);
	dl = m->details.obj;
	if (dl == NULL || dl->via.array.size == 0) {
		worker_changes_bare(&a->rep, m);
		return;
	}
	a->trunc |= m->details_truncated;
	for (e = 0; e < dl->via.array.size; e++) {
		/* A detail of a kind this worker does not know. */
		if (proto_change_detail_unpack(&dl->via.array.ptr[e], &d,
		    err, sizeof err) != 0)
			continue;
		worker_changes_detail(&a->rep, &d);
	}
}

/* Put acc into sc.changes and one line of text; frees what acc holds. */
static void
worker_changes_end(struct worker_changes_acc *a, struct json_object *sc,
    struct evbuffer *text)
{
	struct worker_changes_report	*rep = &a->rep;
	struct json_object		*out, *kinds, *k, *s;
	size_t				 i;

	out = json_object_new_object();
	/* In the words changes takes: one vocabulary (issue 39). */
	kinds = json_object_new_array();
	for (i = 0; i < WORKER_CHANGES_NCLASSES; i++) {
		if (rep->kinds & worker_changes_classes[i].kinds)
			json_object_array_add(kinds, json_object_new_string(
			    worker_changes_classes[i].name));
	}
	json_object_object_add(out, "count", json_object_new_int64(
	    (int64_t)a->n));
	json_object_object_add(out, "skipped", json_object_new_int64(
	    (int64_t)a->skipped));
	json_object_object_add(out, "kinds", kinds);
	json_object_object_add(out, "cell_ids", a->cells);
	json_object_object_add(out, "execution_ids", a->execs);
	json_object_object_add(out, "cells", worker_changes_cells(rep));
	if (rep->nkernel > 0) {
		k = json_object_new_array();
		for (i = 0; i < rep->nkernel; i++)
			json_object_array_add(k,
			    json_object_new_string(rep->kernel[i]));
		json_object_object_add(out, "kernel", k);
	}
	json_object_object_add(out, "saved",
	    json_object_new_boolean((rep->kinds & PROTO_KIND_SAVED) != 0));
	if (rep->ndisk > 0) {
		/* Merged from the file: whose and when (its mtime). */
		k = json_object_new_object();
		json_object_object_add(k, "changes",
		    json_object_new_int64((int64_t)rep->ndisk));
		if (rep->disk_at > 0)
			json_object_object_add(k, "mtime",
			    worker_changes_time(rep->disk_at));
		json_object_object_add(out, "disk", k);
	}
	json_object_object_add(out, "truncated",
	    json_object_new_boolean(a->trunc || rep->more > 0));
	json_object_object_add(sc, "changes", out);
	if (text != NULL && a->n > 0) {
		evbuffer_add_printf(text, "%zu change%s", a->n,
		    a->n == 1 ? "" : "s");
		if (rep->ndisk > 0) {
			s = worker_changes_time(rep->disk_at);
			evbuffer_add_printf(text, " (%zu merged from the file, "
			    "saved %s)", rep->ndisk, json_object_get_string(s));
			json_object_put(s);
		}
		evbuffer_add(text, ": ", 2);
		worker_changes_text(rep, text);
	}
	for (i = 0; i < rep->ncells; i++) {
		free(rep->cells[i].id);
		free(rep->cells[i].client);
		free(rep->cells[i].session);
	}
	free(rep->cells);
	for (i = 0; i < rep->nkernel; i++)
		free(rep->kernel[i]);
}

/*
 * Report the changes (ROOM_CHANGES_REPLY.changes) up to seq upto (those
 * of the content the answer's cursor is of; later ones are the next
 * answer's) a wait for mask asked for into sc.changes and one line of
 * text; *matched counts them.
 */
void
worker_changes_report(struct json_object *sc, const msgpack_object *changes,
    int mask, int64_t upto, struct evbuffer *text, size_t *matched)
{
	struct worker_changes_acc	 a;
	struct proto_room_changed	 m;
	uint32_t			 j;
	char				 err[256];

	memset(&a, 0, sizeof a);
	a.cells = json_object_new_array();
	a.execs = json_object_new_array();
	for (j = 0; changes != NULL && changes->type == MSGPACK_OBJECT_ARRAY &&
	    j < changes->via.array.size; j++) {
		if (proto_room_change_unpack(&changes->via.array.ptr[j], &m,
		    err, sizeof err) != 0) {
			log_warnx("%s", err);
			continue;
		}
		if ((int64_t)m.seq > upto)
			continue;
		worker_changes_add(&a, &m, mask);
	}
	*matched = a.n;
	worker_changes_end(&a, sc, text);
}

/*
 * The same report of one change a wait saw (ROOM_CHANGED), after skipped
 * changes it did not ask for: what ROOM_CHANGES would have listed.
 */
void
worker_changes_report_one(struct json_object *sc,
    const struct proto_room_changed *m, size_t skipped, int mask,
    struct evbuffer *text, size_t *matched)
{
	struct worker_changes_acc	 a;

	memset(&a, 0, sizeof a);
	a.cells = json_object_new_array();
	a.execs = json_object_new_array();
	a.skipped = skipped;
	worker_changes_add(&a, m, mask);
	*matched = a.n;
	worker_changes_end(&a, sc, text);
}
