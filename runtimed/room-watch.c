/* SPDX-License-Identifier: ISC */
/*
 * room-watch.c: notice a file-backed notebook changing on disk.
 *
 * One inotify instance watches the directory of every loaded file-backed
 * room and matches events by file name, so editors that write a new
 * file and rename it over the old one are seen as well as in-place
 * writes.  An event only schedules room_disk_check (after a short
 * debounce); that compares the file with what the room last loaded or
 * saved, so our own atomic saves are ignored.
 */

#include <sys/inotify.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

/* Let an editor finish its burst of writes and renames. */
#define ROOM_WATCH_DELAY_MS	100

#define ROOM_WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | \
			 IN_DELETE | IN_MOVED_FROM | IN_ATTRIB)

struct room_watch {
	struct room		*room;
	int			 wd;
	char			*name;
	struct event		*timer;
	TAILQ_ENTRY(room_watch)	 entry;
};
static TAILQ_HEAD(, room_watch) room_watches =
    TAILQ_HEAD_INITIALIZER(room_watches);
static void	room_watch_timer(evutil_socket_t, short, void *);
static void	room_watch_read(evutil_socket_t, short, void *);
static int	room_watch_init(void);

static int		 room_watch_fd = -1;
static struct event	*room_watch_ev;

static void
room_watch_timer(evutil_socket_t fd, short events, void *arg)
{
	struct room_watch	*w = arg;

	(void)fd;
	(void)events;
	room_disk_check(w->room);
}

static void
room_watch_read(evutil_socket_t fd, short events, void *arg)
{
	struct room_watch		*w;
	const struct inotify_event	*ev;
	char				 buf[16384]
					    __attribute__((aligned(8)));
	struct timeval			 tv = { 0, ROOM_WATCH_DELAY_MS * 1000 };
	ssize_t				 n;
	char				*p;

	(void)events;
	(void)arg;
	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return;
		for (p = buf; p < buf + n; p += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)p;
			TAILQ_FOREACH(w, &room_watches, entry) {
				if (ev->wd != w->wd)
					continue;
				if ((ev->mask & IN_Q_OVERFLOW) == 0 &&
				    (ev->len == 0 ||
				    strcmp(ev->name, w->name) != 0))
					continue;
				evtimer_add(w->timer, &tv);
			}
		}
	}
}

static int
room_watch_init(void)
{
	if (room_watch_fd != -1)
		return (0);
	if (runtimed_base == NULL)
		return (-1);
	room_watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (room_watch_fd == -1) {
		log_warn("inotify_init1");
		return (-1);
	}
	room_watch_ev = event_new(runtimed_base, room_watch_fd,
	    EV_READ | EV_PERSIST, room_watch_read, NULL);
	event_add(room_watch_ev, NULL);
	return (0);
}

/* Watch a loaded file-backed room's file (by its directory). */
void
room_watch_add(struct room *r)
{
	struct room_watch	*w;
	char			*copy, *dir;
	int			 wd;

	if (r->path == NULL || r->watch != NULL || room_watch_init() != 0)
		return;
	copy = xstrdup(r->path);
	dir = dirname(copy);
	wd = inotify_add_watch(room_watch_fd, dir, ROOM_WATCH_MASK);
	if (wd == -1) {
		log_warn("room %s: cannot watch %s", r->id, dir);
		free(copy);
		return;
	}
	free(copy);
	w = xcalloc(1, sizeof *w);
	w->room = r;
	w->wd = wd;
	copy = xstrdup(r->path);
	w->name = xstrdup(basename(copy));
	free(copy);
	w->timer = evtimer_new(runtimed_base, room_watch_timer, w);
	TAILQ_INSERT_TAIL(&room_watches, w, entry);
	r->watch = w;
}

void
room_watch_remove(struct room *r)
{
	struct room_watch	*w = r->watch, *o;

	if (w == NULL)
		return;
	TAILQ_REMOVE(&room_watches, w, entry);
	TAILQ_FOREACH(o, &room_watches, entry) {
		if (o->wd == w->wd)
			break;
	}
	if (o == NULL)
		inotify_rm_watch(room_watch_fd, w->wd);
	event_free(w->timer);
	free(w->name);
	free(w);
	r->watch = NULL;
}

/* At exit, after every room is gone. */
void
room_watch_free_all(void)
{
	if (room_watch_ev != NULL) {
		event_free(room_watch_ev);
		room_watch_ev = NULL;
	}
	if (room_watch_fd != -1) {
		close(room_watch_fd);
		room_watch_fd = -1;
	}
}
