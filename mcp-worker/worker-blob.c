/* SPDX-License-Identifier: ISC */
/*
 * worker-blob.c: output values the daemon keeps in its blob store arrive
 * as {"runtimed_blob": sha256, "size": bytes}.  Results report them as
 * omitted with their size; full_output (and export) fetches them with
 * BLOB_GET and puts the real value in place, get_results the first few
 * images of a run.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define WORKER_BLOB_MAX_FETCH	64	/* per result */

struct worker_blob_slot {
	struct json_object	*parent;	/* object or array */
	char			*key;		/* NULL: index */
	size_t			 index;
	char			*sha;
};

struct worker_blob {
	struct worker_room	*room;
	struct worker_blob_slot	*slots;
	size_t			 n, next;
	int			 images;	/* PNG and JPEG only */
	worker_blob_cb		 cb;
	void			*arg;
};

static void	worker_blob_collect(struct worker_blob *, struct json_object *);
static void	worker_blob_got(void *, uint16_t, const msgpack_object *,
		    const char *, const char *);
static void	worker_blob_fetch(struct worker_room *, struct json_object *,
		    int, worker_blob_cb, void *);

/* Is v a blob reference?  Sets sha and size. */
int
worker_blob_is_ref(struct json_object *v, const char **sha, int64_t *size)
{
	struct json_object	*s;

	if (v == NULL || !json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "runtimed_blob", &s) ||
	    !json_object_is_type(s, json_type_string))
		return (0);
	*sha = json_object_get_string(s);
	*size = json_object_get_int64(json_object_object_get(v, "size"));
	return (1);
}

static void
worker_blob_collect(struct worker_blob *wb, struct json_object *v)
{
	struct json_object_iterator	 it, end;
	struct json_object		*c;
	struct worker_blob_slot		*sl;
	const char			*sha;
	int64_t				 size;
	size_t				 i;

	if (json_object_is_type(v, json_type_object)) {
		it = json_object_iter_begin(v);
		end = json_object_iter_end(v);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			c = json_object_iter_peek_value(&it);
			if (worker_blob_is_ref(c, &sha, &size)) {
				if (wb->n >= (wb->images ? WORKER_MAX_IMAGES :
				    WORKER_BLOB_MAX_FETCH))
					continue;
				if (wb->images && !worker_image_handles(
				    json_object_iter_peek_name(&it)))
					continue;
				wb->slots = xreallocarray(wb->slots, wb->n + 1,
				    sizeof *wb->slots);
				sl = &wb->slots[wb->n++];
				sl->parent = v;
				sl->key = xstrdup(json_object_iter_peek_name(
				    &it));
				sl->sha = xstrdup(sha);
			} else
				worker_blob_collect(wb, c);
		}
	} else if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++) {
			c = json_object_array_get_idx(v, i);
			if (worker_blob_is_ref(c, &sha, &size)) {
				if (wb->n >= WORKER_BLOB_MAX_FETCH || wb->images)
					continue;
				wb->slots = xreallocarray(wb->slots, wb->n + 1,
				    sizeof *wb->slots);
				sl = &wb->slots[wb->n++];
				sl->parent = v;
				sl->key = NULL;
				sl->index = i;
				sl->sha = xstrdup(sha);
			} else
				worker_blob_collect(wb, c);
		}
	}
}

static void	worker_blob_next(struct worker_blob *);

static void
worker_blob_got(void *arg, uint16_t type, const msgpack_object *reply,
    const char *code, const char *msg)
{
	struct worker_blob	*wb = arg;
	struct worker_blob_slot	*sl = &wb->slots[wb->next - 1];
	struct proto_blob_reply	 m;
	msgpack_object		 o;
	struct json_object	*data;
	char			 err[256];

	/* A blob that cannot be fetched stays a reference. */
	if (code == NULL && type == PROTO_MSG_BLOB_REPLY &&
	    proto_blob_reply_unpack(reply, &m, err, sizeof err) == 0) {
		/* The value, made valid UTF-8 as every output value is. */
		o.type = MSGPACK_OBJECT_STR;
		o.via.str.ptr = m.data.ptr;
		o.via.str.size = (uint32_t)m.data.len;
		data = mpjson_unpack(&o);
		if (sl->key != NULL)
			json_object_object_add(sl->parent, sl->key, data);
		else
			json_object_array_put_idx(sl->parent, sl->index, data);
	} else
		log_debug("%s: blob %s: %s", __func__, sl->sha,
		    msg != NULL ? msg : "bad reply");
	worker_blob_next(wb);
}

static void
worker_blob_next(struct worker_blob *wb)
{
	struct proto_blob_get	 m;
	struct mpbuf		 b;
	size_t			 i;

	if (wb->next < wb->n) {
		m.sha256 = proto_str_make(wb->slots[wb->next++].sha);
		mpbuf_init(&b);
		proto_blob_get_pack(&b.pk, &m);
		worker_room_request(wb->room, PROTO_MSG_BLOB_GET, &b.sb,
		    worker_blob_got, wb);
		mpbuf_free(&b);
		return;
	}
	wb->cb(wb->arg);
	for (i = 0; i < wb->n; i++) {
		free(wb->slots[i].key);
		free(wb->slots[i].sha);
	}
	free(wb->slots);
	worker_room_unref(wb->room);
	free(wb);
}

/* Replace every blob reference in v by its bytes, then call cb. */
void
worker_blob_resolve(struct worker_room *room, struct json_object *v,
    worker_blob_cb cb, void *arg)
{
	worker_blob_fetch(room, v, 0, cb, arg);
}

/*
 * Only the first WORKER_MAX_IMAGES PNG and JPEG values held as blobs (a
 * large plot is one), so the model is shown them downscaled.
 */
void
worker_blob_resolve_images(struct worker_room *room, struct json_object *v,
    worker_blob_cb cb, void *arg)
{
	worker_blob_fetch(room, v, 1, cb, arg);
}

static void
worker_blob_fetch(struct worker_room *room, struct json_object *v,
    int images, worker_blob_cb cb, void *arg)
{
	struct worker_blob	*wb;

	wb = xcalloc(1, sizeof *wb);
	wb->images = images;
	wb->room = room;
	worker_room_ref(room);
	wb->cb = cb;
	wb->arg = arg;
	worker_blob_collect(wb, v);
	if (wb->n == 0) {
		/* Nothing to fetch: answer now, no round trip. */
		wb->cb(wb->arg);
		free(wb->slots);
		worker_room_unref(wb->room);
		free(wb);
		return;
	}
	worker_blob_next(wb);
}
