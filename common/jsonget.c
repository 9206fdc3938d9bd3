/* SPDX-License-Identifier: ISC */
/*
 * jsonget.c: a member of a JSON object read as the type a caller expects,
 * so that a peer's or a file's wrong type reads as absent instead of being
 * turned into text by json-c.
 */

#include "common.h"

/*
 * The string member key of o, or def when o is not an object, has no
 * such member or holds something else there.  Points into o.
 */
const char *
jsonget_str(struct json_object *o, const char *key, const char *def)
{
	struct json_object	*v;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return (def);
	return (json_object_get_string(v));
}
