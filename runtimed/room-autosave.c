/* SPDX-License-Identifier: ISC */
/*
 * room-autosave.c: saving a changed file-backed room to its file a
 * moment (--autosave-delay) after the last change, without waiting for
 * ever while changes keep coming or a run goes on.
 */

#include <stdlib.h>

#include "runtimed.h"

static int		room_autosave_on = 1;
static int64_t		room_autosave_ms = 2000;
/* A busy room saves at least this often while changes keep coming. */
#define ROOM_AUTOSAVE_MAX_MS	30000

static void	room_autosave_fire(evutil_socket_t, short, void *);

/* --no-autosave, --autosave-delay; ms < 0 keeps the delay. */
void
room_autosave_set(int on, int64_t ms)
{
	room_autosave_on = on;
	if (ms >= 0)
		room_autosave_ms = ms;
}

int
room_autosave_enabled(void)
{
	return (room_autosave_on);
}

static void
room_autosave_fire(evutil_socket_t fd, short events, void *arg)
{
	struct room	*r = arg;
	struct timeval	 tv;
	char		*cause = NULL;
	const char	*code;

	(void)fd;
	(void)events;
	if (!r->loaded || !r->dirty || r->path == NULL)
		return;
	/* Mid-run, wait for the run to end, but not for ever. */
	if (room_exec_queue_length(r) > 0 && r->unsaved_since != 0 &&
	    util_mono_ms() - r->unsaved_since < ROOM_AUTOSAVE_MAX_MS) {
		tv.tv_sec = room_autosave_ms / 1000;
		tv.tv_usec = (room_autosave_ms % 1000) * 1000;
		evtimer_add(r->autosave_ev, &tv);
		return;
	}
	if (room_save(r, NULL, 0, &cause, &code) != 0) {
		log_info("room %s: autosave skipped: %s", r->id, cause);
		free(cause);
		return;
	}
	room_changes_announce(r);
}

/* (Re)arm autosave after a change to a file-backed room. */
void
room_autosave_arm(struct room *r)
{
	struct timeval	tv;
	int64_t		ms = room_autosave_ms;

	if (!room_autosave_on || r->path == NULL || !r->loaded)
		return;
	if (r->autosave_ev == NULL)
		r->autosave_ev = evtimer_new(runtimed_base, room_autosave_fire,
		    r);
	/* Changes that keep coming do not postpone it for ever. */
	if (r->unsaved_since != 0 && util_mono_ms() - r->unsaved_since >=
	    ROOM_AUTOSAVE_MAX_MS && evtimer_pending(r->autosave_ev, NULL))
		return;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(r->autosave_ev, &tv);
}

/* The room was saved: nothing is due. */
void
room_autosave_cancel(struct room *r)
{
	if (r->autosave_ev != NULL)
		evtimer_del(r->autosave_ev);
}

/* The room's content is dropped. */
void
room_autosave_free(struct room *r)
{
	if (r->autosave_ev != NULL) {
		event_free(r->autosave_ev);
		r->autosave_ev = NULL;
	}
}
