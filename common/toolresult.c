/* SPDX-License-Identifier: ISC */
/*
 * toolresult.c: the MCP tool error result of docs/errors.md, built in
 * one place for the worker and for the proxy's own answers, so a client
 * meets one shape whichever process answered:
 *
 *	{content: [{type: "text", text: "code: message"}],
 *	 structuredContent: {error: {code, message, ...}}, isError: true}
 */

#include <stdlib.h>
#include <string.h>

#include "common.h"

/*
 * A tool error result; the caller adds further fields to its error.  A
 * message longer than TOOLRESULT_MESSAGE_MAX characters (one that quotes
 * a long argument back) keeps its head, like every other result's cap.
 */
struct json_object *
toolresult_error(const char *code, const char *message)
{
	struct json_object	*res, *content, *block, *sc, *err;
	char			*text, *cut = NULL;
	size_t			 len;

	len = strlen(message);
	if (utf8_chars(message, len) > TOOLRESULT_MESSAGE_MAX) {
		xasprintf(&cut, "%.*s [...]", (int)utf8_skip(message, len,
		    TOOLRESULT_MESSAGE_MAX), message);
		message = cut;
	}
	xasprintf(&text, "%s: %s", code, message);
	block = json_object_new_object();
	json_object_object_add(block, "type", json_object_new_string("text"));
	json_object_object_add(block, "text", json_object_new_string(text));
	free(text);
	content = json_object_new_array();
	json_object_array_add(content, block);
	err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message",
	    json_object_new_string(message));
	sc = json_object_new_object();
	json_object_object_add(sc, "error", err);
	res = json_object_new_object();
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(1));
	free(cut);
	return (res);
}

/* The {code, message, ...} object of a toolresult_error result. */
struct json_object *
toolresult_error_detail(struct json_object *res)
{
	return (json_object_object_get(json_object_object_get(res,
	    "structuredContent"), "error"));
}
