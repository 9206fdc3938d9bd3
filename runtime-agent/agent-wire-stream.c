/* SPDX-License-Identifier: ISC */
/*
 * agent-wire-stream.c: a huge stream message's content read straight into
 * the head and tail a stream output keeps (common/streamcap.c), so the
 * agent holds the kernel's message and at most a chunk besides, never a
 * parsed copy of it.  A cell printing 256 MB in one message took the
 * agent to 695 MB of peak RSS: the message, json-c's string of it, and
 * the cut.  The content {"name": ..., "text": "..."} is walked as JSON
 * without json-c: "text" is decoded a chunk at a time (escapes, \u
 * pairs, bytes that are not UTF-8 made U+FFFD) into a streamcap; any
 * other member is skipped.  Anything unexpected gives NULL, and the
 * caller parses the content as usual.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common.h"
#include "agent.h"

#define AGENT_WIRE_STREAM_CHUNK	(1024 * 1024)	/* decoded per add */
#define AGENT_WIRE_STREAM_DEPTH	64	/* of a member skipped */

struct agent_wire_stream {
	const unsigned char	*p;
	size_t			 len;
	size_t			 off;
	struct streamcap	 sc;
	char			*chunk;
	size_t			 used;
};

static void	agent_wire_stream_ws(struct agent_wire_stream *);
static int	agent_wire_stream_hex(struct agent_wire_stream *, unsigned *);
static void	agent_wire_stream_put(struct agent_wire_stream *, const char *,
		    size_t);
static void	agent_wire_stream_flush(struct agent_wire_stream *, int);
static int	agent_wire_stream_string(struct agent_wire_stream *, int,
		    char *, size_t);
static int	agent_wire_stream_skip(struct agent_wire_stream *);

static void
agent_wire_stream_ws(struct agent_wire_stream *s)
{
	while (s->off < s->len && strchr(" \t\r\n", s->p[s->off]) != NULL &&
	    s->p[s->off] != '\0')
		s->off++;
}

/* Four hex digits of a \u escape. */
static int
agent_wire_stream_hex(struct agent_wire_stream *s, unsigned *out)
{
	unsigned	v = 0, i, c;

	if (s->len - s->off < 4)
		return (-1);
	for (i = 0; i < 4; i++) {
		c = s->p[s->off + i];
		if (c >= '0' && c <= '9')
			v = v * 16 + c - '0';
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + c - 'A' + 10;
		else
			return (-1);
	}
	s->off += 4;
	*out = v;
	return (0);
}

/* Hand the decoded chunk to the streamcap, whole UTF-8 only. */
static void
agent_wire_stream_flush(struct agent_wire_stream *s, int last)
{
	char	*fixed;
	size_t	 keep = 0, n, len;

	if (s->used == 0)
		return;
	n = s->used;
	if (!last) {
		/* A character cut by the chunk's end waits for the next. */
		while (keep < 3 && keep < n &&
		    ((unsigned char)s->chunk[n - 1 - keep] & 0xc0) == 0x80)
			keep++;
		if (keep < n &&
		    ((unsigned char)s->chunk[n - 1 - keep] & 0xc0) == 0xc0)
			keep++;
		else
			keep = 0;
		n -= keep;
	}
	if (utf8_valid(s->chunk, n, NULL))
		streamcap_add(&s->sc, s->chunk, n);
	else {
		fixed = utf8_repair(s->chunk, n, &len);
		streamcap_add(&s->sc, fixed != NULL ? fixed : s->chunk,
		    fixed != NULL ? len : n);
		free(fixed);
	}
	memmove(s->chunk, s->chunk + n, keep);
	s->used = keep;
}

static void
agent_wire_stream_put(struct agent_wire_stream *s, const char *b, size_t n)
{
	if (s->used + n > AGENT_WIRE_STREAM_CHUNK)
		agent_wire_stream_flush(s, 0);
	memcpy(s->chunk + s->used, b, n);
	s->used += n;
}

/*
 * A JSON string at s->off: into the streamcap (text) or, up to size
 * bytes, into out (a member's name or the stream's name); 0, or -1 if
 * it is not a string or is longer than out.
 */
static int
agent_wire_stream_string(struct agent_wire_stream *s, int text, char *out,
    size_t size)
{
	unsigned	 u, lo;
	size_t		 o = 0, start;
	char		 b[4];
	int		 n;
	unsigned char	 c;

	if (s->off >= s->len || s->p[s->off] != '"')
		return (-1);
	s->off++;
	for (;;) {
		/* A run of plain bytes at once. */
		start = s->off;
		while (s->off < s->len && s->p[s->off] != '"' &&
		    s->p[s->off] != '\\' && s->p[s->off] >= 0x20)
			s->off++;
		if (text) {
			while (start < s->off) {
				n = (int)(s->off - start > AGENT_WIRE_STREAM_CHUNK ?
				    AGENT_WIRE_STREAM_CHUNK : s->off - start);
				agent_wire_stream_put(s, (const char *)s->p +
				    start, (size_t)n);
				start += (size_t)n;
			}
		} else {
			if (o + (s->off - start) >= size)
				return (-1);
			memcpy(out + o, s->p + start, s->off - start);
			o += s->off - start;
		}
		if (s->off >= s->len)
			return (-1);
		c = s->p[s->off++];
		if (c == '"')
			break;
		if (c != '\\' || s->off >= s->len)
			return (-1);	/* a raw control character */
		c = s->p[s->off++];
		n = 1;
		switch (c) {
		case '"': case '\\': case '/':
			b[0] = (char)c;
			break;
		case 'b': b[0] = '\b'; break;
		case 'f': b[0] = '\f'; break;
		case 'n': b[0] = '\n'; break;
		case 'r': b[0] = '\r'; break;
		case 't': b[0] = '\t'; break;
		case 'u':
			if (agent_wire_stream_hex(s, &u) != 0)
				return (-1);
			if (u >= 0xd800 && u <= 0xdbff && s->len - s->off >= 6 &&
			    s->p[s->off] == '\\' && s->p[s->off + 1] == 'u') {
				s->off += 2;
				if (agent_wire_stream_hex(s, &lo) != 0)
					return (-1);
				if (lo >= 0xdc00 && lo <= 0xdfff)
					u = 0x10000 + ((u - 0xd800) << 10) +
					    (lo - 0xdc00);
				else
					s->off -= 6;	/* lone: read again */
			}
			if (u >= 0xd800 && u <= 0xdfff)
				u = 0xfffd;
			if (u < 0x80)
				b[0] = (char)u;
			else if (u < 0x800) {
				b[0] = (char)(0xc0 | u >> 6);
				b[1] = (char)(0x80 | (u & 0x3f));
				n = 2;
			} else if (u < 0x10000) {
				b[0] = (char)(0xe0 | u >> 12);
				b[1] = (char)(0x80 | (u >> 6 & 0x3f));
				b[2] = (char)(0x80 | (u & 0x3f));
				n = 3;
			} else {
				b[0] = (char)(0xf0 | u >> 18);
				b[1] = (char)(0x80 | (u >> 12 & 0x3f));
				b[2] = (char)(0x80 | (u >> 6 & 0x3f));
				b[3] = (char)(0x80 | (u & 0x3f));
				n = 4;
			}
			break;
		default:
			return (-1);
		}
		if (text)
			agent_wire_stream_put(s, b, (size_t)n);
		else {
			if (o + (size_t)n >= size)
				return (-1);
			memcpy(out + o, b, (size_t)n);
			o += (size_t)n;
		}
	}
	if (!text)
		out[o] = '\0';
	return (0);
}

/* Skip one JSON value (a member's that is not read). */
static int
agent_wire_stream_skip(struct agent_wire_stream *s)
{
	int	depth = 0;

	do {
		agent_wire_stream_ws(s);
		if (s->off >= s->len)
			return (-1);
		switch (s->p[s->off]) {
		case '"':
			/* Only its end matters: read as a text of no use. */
			while (++s->off < s->len && s->p[s->off] != '"') {
				if (s->p[s->off] == '\\')
					s->off++;
			}
			if (s->off >= s->len)
				return (-1);
			s->off++;
			break;
		case '{': case '[':
			if (++depth > AGENT_WIRE_STREAM_DEPTH)
				return (-1);
			s->off++;
			break;
		case '}': case ']':
			if (depth-- == 0)
				return (-1);
			s->off++;
			break;
		case ',': case ':':
			if (depth == 0)
				return (-1);
			s->off++;
			break;
		default:
			/* A number or a literal (strchr finds a NUL too). */
			if (s->p[s->off] == '\0' ||
			    strchr("-0123456789tfn", s->p[s->off]) == NULL)
				return (-1);
			while (s->off < s->len && s->p[s->off] != '\0' &&
			    strchr(",]} \t\r\n", s->p[s->off]) == NULL)
				s->off++;
			break;
		}
	} while (depth > 0);
	return (0);
}

/*
 * The content of a stream message of len bytes as an object {name}
 * whose userdata is the stream output to send (the streamcap's, a new
 * reference: agent_wire_stream_output), or NULL if it is not such JSON.
 */
struct json_object *
agent_wire_stream_content(const char *data, size_t len)
{
	struct agent_wire_stream	 s;
	struct json_object		*content = NULL, *out;
	char				 key[64], name[64];
	int				 have_text = 0;

	memset(&s, 0, sizeof s);
	s.p = (const unsigned char *)data;
	s.len = len;
	*name = '\0';
	streamcap_init(&s.sc);
	s.chunk = xmalloc(AGENT_WIRE_STREAM_CHUNK + 4);
	agent_wire_stream_ws(&s);
	if (s.off >= s.len || s.p[s.off++] != '{')
		goto out;
	for (;;) {
		agent_wire_stream_ws(&s);
		if (agent_wire_stream_string(&s, 0, key, sizeof key) != 0) {
			/* A name too long for us is a member we skip. */
			goto out;
		}
		agent_wire_stream_ws(&s);
		if (s.off >= s.len || s.p[s.off++] != ':')
			goto out;
		agent_wire_stream_ws(&s);
		if (strcmp(key, "text") == 0) {
			/* Twice: json-c would keep the last; parse it so. */
			if (have_text)
				goto out;
			if (agent_wire_stream_string(&s, 1, NULL, 0) != 0)
				goto out;
			have_text = 1;
		} else if (strcmp(key, "name") == 0) {
			if (agent_wire_stream_string(&s, 0, name,
			    sizeof name) != 0)
				goto out;
		} else if (agent_wire_stream_skip(&s) != 0)
			goto out;
		agent_wire_stream_ws(&s);
		if (s.off >= s.len)
			goto out;
		if (s.p[s.off] == '}')
			break;
		if (s.p[s.off++] != ',')
			goto out;
	}
	s.off++;
	agent_wire_stream_ws(&s);
	if (s.off != s.len || !have_text || *name == '\0')
		goto out;
	agent_wire_stream_flush(&s, 1);
	content = json_object_new_object();
	json_object_object_add(content, "name", json_object_new_string(name));
	out = streamcap_output(&s.sc, name);
	json_object_set_userdata(content, out, agent_wire_stream_free);
out:
	free(s.chunk);
	streamcap_free(&s.sc);
	return (content);
}

/* userdata's free: the output's reference. */
void
agent_wire_stream_free(struct json_object *o, void *out)
{
	(void)o;
	json_object_put(out);
}

/* The output a stream content read here holds, or NULL. */
struct json_object *
agent_wire_stream_output(struct json_object *content)
{
	if (content == NULL || !json_object_is_type(content, json_type_object))
		return (NULL);
	return (json_object_get_userdata(content));
}
