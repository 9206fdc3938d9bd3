/* SPDX-License-Identifier: ISC */
/*
 * fuzz-web.c: libFuzzer target for what runtimed-web parses and renders
 * itself (runtime-web/web-form.c, web-token.c, web-ansi.c,
 * web-render.c).  The input, as text, is given as a query string and a
 * form body (web_form_get of every field a page's write sends), a
 * Cookie header (web_form_cookie), a path's notebook id, a token, and
 * stream text (web_ansi_html); and, when it is msgpack, as a cell of
 * ROOM_CONTENT to web_render_cell with itself as the comment threads,
 * its conflicts and cells to web_render_conflicts, and its batches (an
 * undo list) to web_render_batches.
 * The HTTP framing itself is libevent's evhttp, not ours.  Aborts if a
 * rendered cell holds "<script" or an event handler attribute that did
 * not come from our own markup.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime-web/web.h"

char	web_secret[WEB_SECRET_LEN + 1] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
static int	fuzz_web_unsafe(const char *);
static void	fuzz_web_check(struct evbuffer *);

/* A <script> tag, or an on* attribute outside quotes inside a tag. */
static int
fuzz_web_unsafe(const char *html)
{
	const char	*p;
	int		 tag = 0, quote = 0;

	for (p = html; *p != '\0'; p++) {
		if (!tag) {
			if (*p == '<') {
				if (strncasecmp(p, "<script", 7) == 0)
					return (1);
				tag = 1;
			}
			continue;
		}
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '"' || *p == '\'')
			quote = *p;
		else if (*p == '>')
			tag = 0;
		else if ((*p == ' ' || *p == '\t' || *p == '\n') &&
		    strncasecmp(p + 1, "on", 2) == 0)
			return (1);
	}
	return (0);
}

/* Take what was rendered into b and abort if it is unsafe. */
static void
fuzz_web_check(struct evbuffer *b)
{
	size_t	 len = evbuffer_get_length(b);
	char	*v = xmalloc(len + 1);

	evbuffer_remove(b, v, len);
	v[len] = '\0';
	if (fuzz_web_unsafe(v))
		abort();
	free(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {
		"s", "nb", "token", "cell_id", "text", "source", "version",
		"take", "cell_type", "after", "batch_id", NULL
	};
	struct evbuffer		*b;
	struct json_object	*threads;
	const msgpack_object	*c;
	msgpack_unpacked	 u;
	char			*s, *v;
	size_t			 i;

	s = xmalloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	for (i = 0; keys[i] != NULL; i++) {
		v = web_form_get(s, size, keys[i]);
		if (v != NULL) {
			web_form_id_ok(v);
			web_token_check(v, "nb");
		}
		free(v);
	}
	free(web_form_cookie(s, "rtd_1234"));
	web_form_equal(s, web_secret);
	b = evbuffer_new();
	web_ansi_html(b, s, size);
	evbuffer_free(b);

	/* As a frame's body gets to the renderer: walked before unpacked. */
	msgpack_unpacked_init(&u);
	if (proto_frame_sane(data, size) &&
	    msgpack_unpack_next(&u, (const char *)data, size, NULL) ==
	    MSGPACK_UNPACK_SUCCESS) {
		threads = u.data.type == MSGPACK_OBJECT_MAP ?
		    web_render_threads(proto_get(&u.data, "metadata")) : NULL;
		b = evbuffer_new();
		web_render_cell(b, &u.data, threads);
		fuzz_web_check(b);
		/* And as ROOM_CONTENT's conflicts with its cells. */
		c = u.data.type == MSGPACK_OBJECT_MAP ?
		    proto_get(&u.data, "conflicts") : NULL;
		if (c != NULL && c->type == MSGPACK_OBJECT_ARRAY) {
			web_render_conflicts(b, c, proto_get(&u.data,
			    "cells"));
			fuzz_web_check(b);
		}
		/* And as an undo list's batches (decision 085). */
		c = u.data.type == MSGPACK_OBJECT_MAP ?
		    proto_get(&u.data, "batches") : NULL;
		if (c != NULL) {
			web_render_batches(b, c);
			fuzz_web_check(b);
		}
		evbuffer_free(b);
		if (threads != NULL)
			json_object_put(threads);
	}
	msgpack_unpacked_destroy(&u);
	free(s);
	return (0);
}
