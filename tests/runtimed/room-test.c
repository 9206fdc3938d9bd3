/* SPDX-License-Identifier: ISC */
/*
 * room-test.c: what the room unit tests share, a cell's kept metadata
 * (struct mpvalue, decision 101) changed and read as a test does.
 */

#include <stdio.h>

#include "runtimed/runtimed.h"
#include "tests/runtimed/room-test.h"

/* A kept map's key set to a json-c value (taken), or deleted (NULL). */
void
room_test_md_set(struct mpvalue *m, const char *key, struct json_object *v)
{
	struct json_object	*j;

	if ((j = mpvalue_json(m)) == NULL)
		j = json_object_new_object();
	if (v == NULL)
		json_object_object_del(j, key);
	else
		json_object_object_add(j, key, v);
	mpvalue_set_json(m, j);
	json_object_put(j);
}

/* Does a kept map have key (-1: it is absent)?  With a string, its text. */
int
room_test_md_has(const struct mpvalue *m, const char *key, char *str, size_t size)
{
	msgpack_unpacked	 u;
	const msgpack_object	*o, *v;
	int			 has;

	msgpack_unpacked_init(&u);
	if ((o = mpvalue_view(m, &u)) == NULL) {
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	has = (v = proto_get(o, key)) != NULL;
	if (has && str != NULL && v->type == MSGPACK_OBJECT_STR)
		snprintf(str, size, "%.*s", (int)v->via.str.size,
		    v->via.str.ptr);
	msgpack_unpacked_destroy(&u);
	return (has);
}
