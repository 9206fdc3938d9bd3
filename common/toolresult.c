/* SPDX-License-Identifier: ISC */
/*
 * toolresult.c: the MCP tool error result of docs/errors.md, built in
 * one place for the worker and for the proxy's own answers, so a client
 * meets one shape whichever process answered:
 *
 *	{content: [{type: "text", text: "code: message"}],
 *	 structuredContent: {error: {code, message, ...}}, isError: true}
 *
 * and what makes a result plain (decision 043): the clients agents use
 * hand their model structuredContent instead of the text when both are
 * there (Claude Code its JSON, Codex its JSON and no image), so a
 * result carries it only for a client that asked.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

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

/* Whether obj (an object) has key, and it is not false or null. */
static int
toolresult_has(struct json_object *obj, const char *key)
{
	struct json_object	*v;

	if (obj == NULL || !json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, key, &v) || v == NULL)
		return (0);
	if (json_object_is_type(v, json_type_boolean))
		return (json_object_get_boolean(v));
	return (1);
}

/* Whether capabilities (a ClientCapabilities) asks for structure. */
static int
toolresult_caps(struct json_object *caps)
{
	struct json_object	*ex;

	if (caps == NULL || !json_object_is_type(caps, json_type_object) ||
	    !json_object_object_get_ex(caps, "experimental", &ex))
		return (0);
	return (toolresult_has(ex, TOOLRESULT_STRUCTURED));
}

/*
 * Whether the params of an initialize or of one request ask for
 * structuredContent: capabilities.experimental["io.runtimed/structured"]
 * of initialize, the same in a request's
 * _meta["io.modelcontextprotocol/clientCapabilities"] (2026-07-28), or
 * _meta["io.runtimed/structured"]: true on one call.
 */
int
toolresult_structured(struct json_object *params)
{
	struct json_object	*meta, *caps;

	if (params == NULL || !json_object_is_type(params, json_type_object))
		return (0);
	if (json_object_object_get_ex(params, "capabilities", &caps) &&
	    toolresult_caps(caps))
		return (1);
	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object))
		return (0);
	if (toolresult_has(meta, TOOLRESULT_STRUCTURED))
		return (1);
	return (json_object_object_get_ex(meta,
	    "io.modelcontextprotocol/clientCapabilities", &caps) &&
	    toolresult_caps(caps));
}

/*
 * A tool result (in place) as a client that did not ask for structure is
 * given it: no structuredContent.  An error's fields beyond code and
 * message (reason, retry_after_secs, ...) move into its text, so nothing
 * an agent acts on is lost with them.
 */
void
toolresult_plain(struct json_object *res)
{
	struct json_object_iterator	 it, end;
	struct json_object		*err, *content, *blk, *v;
	struct evbuffer			*b;
	const char			*k;
	size_t				 len;

	if (res == NULL || !json_object_is_type(res, json_type_object))
		return;
	err = toolresult_error_detail(res);
	content = json_object_object_get(res, "content");
	blk = json_object_is_type(content, json_type_array) ?
	    json_object_array_get_idx(content, 0) : NULL;
	if (err != NULL && json_object_is_type(err, json_type_object) &&
	    blk != NULL && json_object_object_get_ex(blk, "text", &v)) {
		b = evbuffer_new();
		evbuffer_add(b, json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
		it = json_object_iter_begin(err);
		end = json_object_iter_end(err);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			k = json_object_iter_peek_name(&it);
			v = json_object_iter_peek_value(&it);
			if (strcmp(k, "code") == 0 ||
			    strcmp(k, "message") == 0 || v == NULL)
				continue;
			evbuffer_add_printf(b, "\n%s: %s", k,
			    json_object_is_type(v, json_type_string) ?
			    json_object_get_string(v) :
			    json_object_to_json_string_ext(v,
			    JSON_C_TO_STRING_PLAIN |
			    JSON_C_TO_STRING_NOSLASHESCAPE));
		}
		len = evbuffer_get_length(b);
		json_object_object_add(blk, "text", json_object_new_string_len(
		    (const char *)evbuffer_pullup(b, -1), (int)len));
		evbuffer_free(b);
	}
	json_object_object_del(res, "structuredContent");
}

/*
 * A tools/list result (in place) for a client that did not ask for
 * structure: no outputSchema, which would oblige every result to carry
 * structuredContent (a client may refuse a result without it).
 */
void
toolresult_lean_tools(struct json_object *list)
{
	struct json_object	*tools;
	size_t			 i;

	if (!json_object_object_get_ex(list, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(tools); i++)
		json_object_object_del(json_object_array_get_idx(tools, i),
		    "outputSchema");
}
