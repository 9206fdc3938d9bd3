/* SPDX-License-Identifier: ISC */
/* jsonget.c: a member read as the type expected, else the default. */

#include <criterion/criterion.h>

#include "common.h"

Test(jsonget, str_only_when_a_string)
{
	struct json_object	*o;

	o = json_tokener_parse("{\"s\":\"text\",\"n\":12,\"z\":null,"
	    "\"a\":[\"x\"],\"e\":\"\"}");
	cr_assert_not_null(o);
	cr_assert_str_eq(jsonget_str(o, "s", NULL), "text");
	cr_assert_str_eq(jsonget_str(o, "e", "def"), "");
	/* json-c would print these as text: they read as absent. */
	cr_assert_str_eq(jsonget_str(o, "n", "def"), "def");
	cr_assert_null(jsonget_str(o, "z", NULL));
	cr_assert_null(jsonget_str(o, "a", NULL));
	cr_assert_str_eq(jsonget_str(o, "missing", "?"), "?");
	json_object_put(o);
}

Test(jsonget, not_an_object)
{
	struct json_object	*a;

	a = json_tokener_parse("[\"s\"]");
	cr_assert_null(jsonget_str(a, "s", NULL));
	cr_assert_null(jsonget_str(NULL, "s", NULL));
	json_object_put(a);
}
