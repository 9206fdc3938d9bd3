/* SPDX-License-Identifier: ISC */
/*
 * worker-json.c: JSON text the worker writes itself, beside json-c's
 * trees: a result serialized once and copied from then on (frozen), a
 * reply part written as text, and strings quoted as json-c quotes them
 * (docs/decisions/039).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "worker.h"

/* The text of a frozen object (worker_json_freeze). */
struct worker_json_frozen {
	size_t	len;
	char	text[];
};

static int
worker_json_frozen_out(struct json_object *o, struct printbuf *pb, int level,
    int flags)
{
	struct worker_json_frozen	*f = json_object_get_userdata(o);

	return (printbuf_memappend(pb, f->text, (int)f->len));
}

static void
worker_json_frozen_free(struct json_object *o, void *arg)
{
	free(arg);
}

/*
 * Serialize o once as worker_rpc_emit will, and have every later
 * serialization (o inside a reply, its size measured again) copy that
 * text: a result measured against its caps and then sent is otherwise
 * serialized two or three times over (issue 14).  o must not change
 * after this.  Returns the length of its text.
 */
size_t
worker_json_freeze(struct json_object *o)
{
	struct worker_json_frozen	*f;
	const char			*s;
	size_t				 len;

	if (o == NULL)
		return (4);	/* null */
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	f = xmalloc(sizeof *f + len);
	f->len = len;
	memcpy(f->text, s, len);
	json_object_set_serializer(o, worker_json_frozen_out, f,
	    worker_json_frozen_free);
	return (len);
}

/*
 * An object whose text is the JSON in buf (which is emptied), as a
 * frozen one: for a part of a reply written as text, not built.
 */
struct json_object *
worker_json_frozen(struct evbuffer *buf)
{
	struct worker_json_frozen	*f;
	struct json_object		*o;
	size_t				 len = evbuffer_get_length(buf);

	f = xmalloc(sizeof *f + len);
	f->len = len;
	evbuffer_remove(buf, f->text, len);
	o = json_object_new_int(0);
	json_object_set_serializer(o, worker_json_frozen_out, f,
	    worker_json_frozen_free);
	return (o);
}

/*
 * s (len bytes) as a JSON string onto buf, escaped by json-c as
 * worker_json_emit escapes it; one string object serves every call.
 */
void
worker_json_quote(struct evbuffer *buf, const char *s, size_t len)
{
	static struct json_object	*str;
	const char			*t;
	size_t				 n;

	/* Most (ids, versions, names) have nothing json-c would escape. */
	for (n = 0; n < len; n++) {
		if ((unsigned char)s[n] < 0x20 || s[n] == '"' || s[n] == '\\')
			break;
	}
	if (n == len) {
		evbuffer_add(buf, "\"", 1);
		evbuffer_add(buf, s, len);
		evbuffer_add(buf, "\"", 1);
		return;
	}
	if (str == NULL)
		str = json_object_new_string("");
	if (len > INT32_MAX - 1 ||
	    !json_object_set_string_len(str, s, (int)len))
		fatalx("worker_json_quote: a string of %zu bytes", len);
	t = json_object_to_json_string_length(str, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	evbuffer_add(buf, t, n);
}
