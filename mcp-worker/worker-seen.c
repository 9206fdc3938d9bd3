/* SPDX-License-Identifier: ISC */
/*
 * worker-seen.c: what this session has already read of each run, so a
 * poll returns only what is new.  An agent that follows a long run calls
 * get_results again and again; each answer used to resend every output
 * and the same image.  Per run, per cell, this keeps the status last
 * shown, how many outputs there were and how many characters the last
 * (a stream that may still grow) had; a later read gets each cell's
 * outputs from there on, and a cell with nothing new is one id on a line
 * of unchanged cells.  The worker serves one client, so "this caller"
 * is the session.  Kept for the last WORKER_SEEN_RUNS runs read; a run
 * forgotten is read whole again, which is only more, never wrong.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_seen_cell {
	char		*cell_id;
	char		*status;
	size_t		 outputs;	/* how many were read */
	size_t		 chars;		/* of the last, a stream */
};

struct worker_seen {
	char				*execution_id;
	struct worker_seen_cell		*cells;
	size_t				 n;
	TAILQ_ENTRY(worker_seen)	 entry;
};
TAILQ_HEAD(worker_seen_head, worker_seen);

static struct worker_seen_head	worker_seen_runs =
    TAILQ_HEAD_INITIALIZER(worker_seen_runs);
static u_int			worker_seen_nruns;

static void	worker_seen_free(struct worker_seen *);

static struct worker_seen *
worker_seen_find(const char *execution_id)
{
	struct worker_seen	*s;

	TAILQ_FOREACH(s, &worker_seen_runs, entry) {
		if (strcmp(s->execution_id, execution_id) == 0)
			return (s);
	}
	return (NULL);
}

static void
worker_seen_free(struct worker_seen *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++) {
		free(s->cells[i].cell_id);
		free(s->cells[i].status);
	}
	free(s->cells);
	free(s->execution_id);
	free(s);
}

/* Characters of a stream output's text, 0 for any other output. */
static size_t
worker_seen_stream_chars(struct json_object *o, char **joined, size_t *len)
{
	struct json_object	*v;

	*joined = NULL;
	*len = 0;
	/* Not a blob reference (an object): no text to count. */
	if (strcmp(jsonget_str(o, "output_type", ""), "stream") != 0 ||
	    !json_object_object_get_ex(o, "text", &v) ||
	    json_object_is_type(v, json_type_object))
		return (0);
	*joined = worker_output_join(v, len);
	return (utf8_chars(*joined, *len));
}

/* Remember what cells (a run's, as EXEC_STATE has them) hold now. */
void
worker_seen_note(const char *execution_id, struct json_object *cells)
{
	struct worker_seen	*s;
	struct json_object	*c, *outs;
	char			*joined;
	size_t			 i, n, len;

	if (execution_id == NULL || *execution_id == '\0' ||
	    cells == NULL || !json_object_is_type(cells, json_type_array))
		return;
	if ((s = worker_seen_find(execution_id)) != NULL) {
		TAILQ_REMOVE(&worker_seen_runs, s, entry);
		worker_seen_nruns--;
		worker_seen_free(s);
	}
	s = xcalloc(1, sizeof *s);
	s->execution_id = xstrdup(execution_id);
	n = json_object_array_length(cells);
	s->cells = xcalloc(n + 1, sizeof *s->cells);
	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(cells, i);
		s->cells[i].cell_id = xstrdup(jsonget_str(c, "cell_id", ""));
		s->cells[i].status = xstrdup(jsonget_str(c, "status", ""));
		outs = json_object_object_get(c, "outputs");
		if (!json_object_is_type(outs, json_type_array))
			continue;
		s->cells[i].outputs = json_object_array_length(outs);
		if (s->cells[i].outputs > 0) {
			s->cells[i].chars = worker_seen_stream_chars(
			    json_object_array_get_idx(outs,
			    s->cells[i].outputs - 1), &joined, &len);
			free(joined);
		}
	}
	s->n = n;
	TAILQ_INSERT_HEAD(&worker_seen_runs, s, entry);
	if (++worker_seen_nruns > WORKER_SEEN_RUNS) {
		s = TAILQ_LAST(&worker_seen_runs, worker_seen_head);
		TAILQ_REMOVE(&worker_seen_runs, s, entry);
		worker_seen_nruns--;
		worker_seen_free(s);
	}
}

/* A copy of output o whose stream text starts after skip characters. */
static struct json_object *
worker_seen_tail(struct json_object *o, const char *s, size_t len,
    size_t skip)
{
	struct json_object_iterator	 it, end;
	struct json_object		*copy;
	size_t				 off;

	off = utf8_skip(s, len, skip);
	copy = json_object_new_object();
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		json_object_object_add(copy, json_object_iter_peek_name(&it),
		    json_object_get(json_object_iter_peek_value(&it)));
	json_object_object_add(copy, "text",
	    json_object_new_string_len(s + off, (int)(len - off)));
	return (copy);
}

/*
 * The cells of a run as this session has not read them yet: a copy of
 * cells in which each cell read before keeps only its new outputs, and
 * one with the same status and nothing new is marked "unchanged": true.
 * NULL when this run was not read before (the caller shows it whole).
 */
struct json_object *
worker_seen_delta(const char *execution_id, struct json_object *cells)
{
	struct json_object_iterator	 it, end;
	struct worker_seen		*s;
	struct worker_seen_cell		*sc;
	struct json_object		*view, *c, *copy, *outs, *o, *nouts;
	const char			*key;
	char				*joined;
	size_t				 i, k, n, len, chars;

	if (execution_id == NULL || cells == NULL ||
	    !json_object_is_type(cells, json_type_array) ||
	    (s = worker_seen_find(execution_id)) == NULL)
		return (NULL);
	view = json_object_new_array();
	n = json_object_array_length(cells);
	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(cells, i);
		sc = NULL;
		for (k = 0; k < s->n; k++) {
			if (strcmp(s->cells[k].cell_id,
			    jsonget_str(c, "cell_id", "")) == 0) {
				sc = &s->cells[k];
				break;
			}
		}
		outs = json_object_object_get(c, "outputs");
		if (sc == NULL || !json_object_is_type(outs, json_type_array) ||
		    json_object_array_length(outs) < sc->outputs) {
			/* Not read, or its outputs were cleared: whole. */
			json_object_array_add(view, json_object_get(c));
			continue;
		}
		nouts = json_object_new_array();
		for (k = sc->outputs > 0 ? sc->outputs - 1 : 0;
		    k < json_object_array_length(outs); k++) {
			o = json_object_array_get_idx(outs, k);
			if (k + 1 == sc->outputs) {
				/* The last read: only if its stream grew. */
				chars = worker_seen_stream_chars(o, &joined,
				    &len);
				if (joined != NULL && chars > sc->chars)
					json_object_array_add(nouts,
					    worker_seen_tail(o, joined, len,
					    sc->chars));
				free(joined);
				continue;
			}
			json_object_array_add(nouts, json_object_get(o));
		}
		copy = json_object_new_object();
		it = json_object_iter_begin(c);
		end = json_object_iter_end(c);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			key = json_object_iter_peek_name(&it);
			if (strcmp(key, "outputs") != 0)
				json_object_object_add(copy, key,
				    json_object_get(
				    json_object_iter_peek_value(&it)));
		}
		if (json_object_array_length(nouts) == 0 &&
		    strcmp(sc->status, jsonget_str(c, "status", "")) == 0)
			json_object_object_add(copy, "unchanged",
			    json_object_new_boolean(1));
		json_object_object_add(copy, "outputs", nouts);
		json_object_array_add(view, copy);
	}
	return (view);
}

void
worker_seen_reset(void)
{
	struct worker_seen	*s;

	while ((s = TAILQ_FIRST(&worker_seen_runs)) != NULL) {
		TAILQ_REMOVE(&worker_seen_runs, s, entry);
		worker_seen_free(s);
	}
	worker_seen_nruns = 0;
}
