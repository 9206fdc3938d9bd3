/*
 * worker-room.c: one daemon connection joined to a room per notebook
 * attached in this worker.  Every handle of that notebook shares it; the
 * last handle released closes it, which leaves the room.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct worker_room {
	char			*notebook_id;
	struct worker_dconn	*dc;
	int			 refs;
	int			 lost;
	int64_t			 seq;
	LIST_ENTRY(worker_room)	 entry;
};
LIST_HEAD(worker_room_list, worker_room);

static struct worker_room_list	worker_rooms =
    LIST_HEAD_INITIALIZER(worker_rooms);

struct worker_room_join {
	struct worker_dconn	*dc;
	worker_room_join_cb	 cb;
	void			*arg;
};

static struct worker_room *
worker_room_find(const char *notebook_id)
{
	struct worker_room	*room;

	LIST_FOREACH(room, &worker_rooms, entry) {
		if (!room->lost && strcmp(room->notebook_id, notebook_id) == 0)
			return room;
	}
	return NULL;
}

static void
worker_room_free(struct worker_room *room)
{
	LIST_REMOVE(room, entry);
	if (room->dc != NULL)
		worker_daemon_free(room->dc, "attachment_expired",
		    "the notebook handle was released during the call");
	free(room->notebook_id);
	free(room);
}

static void
worker_room_lost(struct worker_dconn *dc, void *arg)
{
	struct worker_room	*room = arg;

	log_warnx("lost the daemon connection of notebook %s",
	    room->notebook_id);
	room->lost = 1;
}

static void
worker_room_event(struct worker_dconn *dc, uint16_t type,
    struct json_object *body, void *arg)
{
	struct worker_room	*room = arg;
	struct json_object	*v;

	if (type == PROTO_MSG_ROOM_CHANGED &&
	    json_object_object_get_ex(body, "seq", &v))
		room->seq = json_object_get_int64(v);
}

static void
worker_room_joined(void *arg, uint16_t type, struct json_object *reply,
    const char *code, const char *msg)
{
	struct worker_room_join	*j = arg;
	struct worker_room	*room;
	struct json_object	*v;
	const char		*id;

	if (code != NULL) {
		j->cb(j->arg, NULL, NULL, code, msg);
		worker_daemon_free(j->dc, "notebook_unavailable", "closed");
		goto out;
	}
	if (type != PROTO_MSG_ROOM_JOINED ||
	    !json_object_object_get_ex(reply, "notebook_id", &v) ||
	    (id = json_object_get_string(v)) == NULL || *id == '\0') {
		j->cb(j->arg, NULL, NULL, "notebook_unavailable",
		    "unexpected reply from runtimed to a room join");
		worker_daemon_free(j->dc, "notebook_unavailable", "closed");
		goto out;
	}
	if ((room = worker_room_find(id)) != NULL) {
		/* Already joined here: share that connection. */
		worker_daemon_free(j->dc, "notebook_unavailable", "closed");
	} else {
		room = xcalloc(1, sizeof *room);
		room->notebook_id = xstrdup(id);
		room->dc = j->dc;
		worker_daemon_set_cbs(room->dc, worker_room_lost,
		    worker_room_event, room);
		LIST_INSERT_HEAD(&worker_rooms, room, entry);
	}
	if (json_object_object_get_ex(reply, "seq", &v))
		room->seq = json_object_get_int64(v);
	room->refs++;		/* hold it across the callback */
	j->cb(j->arg, room, reply, NULL, NULL);
	worker_room_unref(room);
out:
	free(j);
}

/* Join (ROOM_CREATE or ROOM_OPEN) on a new connection. */
void
worker_room_join(uint16_t type, struct json_object *body,
    worker_room_join_cb cb, void *arg)
{
	struct worker_room_join	*j;

	j = xcalloc(1, sizeof *j);
	j->cb = cb;
	j->arg = arg;
	j->dc = worker_daemon_open("room");
	worker_daemon_request(j->dc, type, body, worker_room_joined, j);
}

void
worker_room_ref(struct worker_room *room)
{
	if (room != NULL)
		room->refs++;
}

void
worker_room_unref(struct worker_room *room)
{
	if (room == NULL)
		return;
	if (--room->refs == 0)
		worker_room_free(room);
}

int
worker_room_alive(struct worker_room *room)
{
	return !room->lost && worker_daemon_alive(room->dc);
}

const char *
worker_room_notebook_id(struct worker_room *room)
{
	return room->notebook_id;
}

int64_t
worker_room_started_at(struct worker_room *room)
{
	return worker_daemon_incarnation(room->dc)->started_at;
}

int64_t
worker_room_seq(struct worker_room *room)
{
	return room->seq;
}

void
worker_room_request(struct worker_room *room, uint16_t type,
    struct json_object *body, worker_daemon_cb cb, void *arg)
{
	if (!worker_room_alive(room)) {
		worker_daemon_fail_later(cb, arg, "attachment_expired",
		    "the daemon behind this handle went away; call "
		    "connect_notebook again");
		return;
	}
	worker_daemon_request(room->dc, type, body, cb, arg);
}
