/* SPDX-License-Identifier: ISC */
/*
 * worker-progress.c: what a wait for a run says in its progress
 * notifications: which cell of the run is running and the latest line
 * of its output.  It learns the run's cells from each EXEC_STATE it is
 * shown and follows the room's changes between them: each output of the
 * run comes as an "outputs" detail carrying the cell's last line
 * (PROTOCOL.md), so no notebook or record is read to say it; the line
 * of an EXEC_STATE comes from common/lastline.c as the daemon's does.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_progress {
	struct worker_room_watch	*watch;
	char				*exec_id;	/* NULL until known */
	char				**cells;	/* the run's */
	size_t				  ncells;
	char				*running;	/* cell id, or NULL */
	char				*line;		/* its latest line */
	int				  ended;
};

static int	worker_progress_has(const msgpack_object *, const char *);
static size_t	worker_progress_index(struct worker_progress *, const char *,
		    size_t);
static void	worker_progress_set(char **, const char *, size_t);
static void	worker_progress_changed(struct worker_room *,
		    const struct proto_room_changed *, void *);
static void	worker_progress_say(struct worker_call *, void *,
		    struct evbuffer *);

/* Does array (msgpack strings) hold s? */
static int
worker_progress_has(const msgpack_object *a, const char *s)
{
	uint32_t	i;

	if (a == NULL || a->type != MSGPACK_OBJECT_ARRAY || s == NULL)
		return (0);
	for (i = 0; i < a->via.array.size; i++) {
		if (proto_obj_streq(&a->via.array.ptr[i], s))
			return (1);
	}
	return (0);
}

/* The place of cell id (len bytes) in the run, or ncells. */
static size_t
worker_progress_index(struct worker_progress *p, const char *id, size_t len)
{
	size_t	i;

	for (i = 0; i < p->ncells; i++) {
		if (strlen(p->cells[i]) == len &&
		    memcmp(p->cells[i], id, len) == 0)
			break;
	}
	return (i);
}

static void
worker_progress_set(char **dst, const char *s, size_t len)
{
	free(*dst);
	*dst = s != NULL ? xstrndup(s, len) : NULL;
}

/* An output of this run: that cell runs, and this is its last line. */
static void
worker_progress_changed(struct worker_room *room,
    const struct proto_room_changed *ev, void *arg)
{
	struct worker_progress		*p = arg;
	struct proto_change_detail	 d;
	const msgpack_object		*dl;
	uint32_t			 i;
	char				 err[256];

	if (ev == NULL || p->exec_id == NULL || p->ended ||
	    !worker_progress_has(ev->execution_ids.obj, p->exec_id))
		return;
	if ((dl = ev->details.obj) == NULL)
		return;
	for (i = 0; i < dl->via.array.size; i++) {
		if (proto_change_detail_unpack(&dl->via.array.ptr[i], &d, err,
		    sizeof err) != 0 || d.how != PROTO_CHANGE_OUTPUTS ||
		    d.cell_id.ptr == NULL || worker_progress_index(p,
		    d.cell_id.ptr, d.cell_id.len) == p->ncells)
			continue;
		if (p->running == NULL || !proto_str_eq(&d.cell_id,
		    p->running)) {
			worker_progress_set(&p->running, d.cell_id.ptr,
			    d.cell_id.len);
			worker_progress_set(&p->line, NULL, 0);
		}
		if (d.line.ptr != NULL)
			worker_progress_set(&p->line, d.line.ptr, d.line.len);
		else if (d.has_outputs && d.outputs == 0)
			worker_progress_set(&p->line, NULL, 0);
	}
}

/* "cell abc (2 of 5) running: step 2", or where the run is. */
static void
worker_progress_say(struct worker_call *call, void *arg, struct evbuffer *msg)
{
	struct worker_progress	*p = arg;
	char			*clean;
	size_t			 k, len;

	if (p->running == NULL) {
		evbuffer_add_printf(msg, "%s", p->exec_id == NULL ?
		    "submitting the run" : "run queued");
		return;
	}
	k = worker_progress_index(p, p->running, strlen(p->running));
	evbuffer_add_printf(msg, "cell %s", p->running);
	if (k < p->ncells && p->ncells > 1)
		evbuffer_add_printf(msg, " (%zu of %zu)", k + 1, p->ncells);
	evbuffer_add_printf(msg, " running");
	if (p->line != NULL && *p->line != '\0') {
		clean = worker_output_strip_ansi(p->line, strlen(p->line),
		    &len);
		evbuffer_add(msg, ": ", 2);
		evbuffer_add(msg, clean, len);
		free(clean);
	}
}

/* A wait for a run of call: its progress says what the run does. */
struct worker_progress *
worker_progress_create(struct worker_call *call, struct worker_room *room,
    int bound_ms)
{
	struct worker_progress	*p;

	p = xcalloc(1, sizeof *p);
	p->watch = worker_room_watch(room, worker_progress_changed, p);
	worker_call_wait_bound(call, bound_ms, worker_progress_say, p);
	return (p);
}

/* What an EXEC_STATE says: the run's cells, the one running, its line. */
void
worker_progress_exec(struct worker_progress *p, const struct worker_exec *st)
{
	struct json_object	*cell;
	const char		*id, *status, *line;
	size_t			 i, n, len;

	if (p == NULL)
		return;
	if (p->exec_id == NULL)
		p->exec_id = xstrdup(st->execution_id);
	p->ended = worker_output_terminal(st->status);
	for (i = 0; i < p->ncells; i++)
		free(p->cells[i]);
	free(p->cells);
	n = json_object_array_length(st->cells);
	p->cells = xcalloc(n + 1, sizeof *p->cells);
	p->ncells = 0;
	for (i = 0; i < n; i++) {
		cell = json_object_array_get_idx(st->cells, i);
		if ((id = json_object_get_string(json_object_object_get(cell,
		    "cell_id"))) == NULL)
			continue;
		p->cells[p->ncells++] = xstrdup(id);
		status = json_object_get_string(json_object_object_get(cell,
		    "status"));
		if (status == NULL || strcmp(status, "running") != 0)
			continue;
		worker_progress_set(&p->running, id, strlen(id));
		line = lastline_find(json_object_object_get(cell, "outputs"),
		    PROTO_CHANGE_LINE_MAX, &len);
		worker_progress_set(&p->line, line, len);
	}
}

void
worker_progress_free(struct worker_progress *p)
{
	size_t	i;

	if (p == NULL)
		return;
	worker_room_unwatch(p->watch);
	for (i = 0; i < p->ncells; i++)
		free(p->cells[i]);
	free(p->cells);
	free(p->exec_id);
	free(p->running);
	free(p->line);
	free(p);
}
