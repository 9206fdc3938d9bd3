/* SPDX-License-Identifier: ISC */
/*
 * agent-remote-ws.c: the WebSocket client to a Jupyter Server's
 * /api/kernels/ID/channels (RFC 6455, written here: none of our
 * libraries has one).  The upgrade offers the
 * v1.kernel.websocket.jupyter.org subprotocol; a server that chooses it
 * sends binary messages of 64-bit little-endian offsets, the channel
 * name and the raw Jupyter parts; one that does not sends one JSON text
 * message per kernel message, with a "channel" key (or a binary one
 * with 32-bit offsets when it has buffers).  Either way a message
 * becomes a struct agent_wire_msg through agent-wire.c's own parser.
 *
 * Frames we send are masked with a key from RAND_bytes; frames from the
 * server must not be.  A message (all its fragments) is refused past
 * AGENT_REMOTE_WS_MAX before it is buffered, and the server's handshake
 * past AGENT_REMOTE_WS_HANDSHAKE_MAX.  An https domain's WebSocket is
 * over TLS, verified as its REST calls are (common/jserver-tls.c).
 */

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "agent-remote.h"

#define AGENT_REMOTE_WS_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

enum agent_remote_ws_state {
	AGENT_REMOTE_WS_CONNECTING,
	AGENT_REMOTE_WS_HANDSHAKE,
	AGENT_REMOTE_WS_OPEN,
	AGENT_REMOTE_WS_CLOSED,
};

struct agent_remote_ws {
	struct bufferevent		*bev;
	enum agent_remote_ws_state	 state;
	char				 key[25];
	int				 v1;
	struct evbuffer			*msg;	/* fragments so far */
	int				 msg_opcode;
	struct agent_remote_ws_cbs	 cbs;
	void				*arg;
	struct event			*close_ev;
	char				*why;
	const struct domain		*d;
};

static void	agent_remote_ws_fail(struct agent_remote_ws *, const char *);
static void	agent_remote_ws_close_cb(evutil_socket_t, short, void *);
static void	agent_remote_ws_read_cb(struct bufferevent *, void *);
static void	agent_remote_ws_quickack(struct bufferevent *);
static void	agent_remote_ws_event_cb(struct bufferevent *, short, void *);
static int	agent_remote_ws_frame(struct agent_remote_ws *,
		    const struct agent_remote_ws_frame *);
static uint64_t	agent_remote_ws_le64(const u_char *);
static uint32_t	agent_remote_ws_be32(const u_char *);

/*
 * Parse one frame at p (len bytes available).  0 if more bytes are
 * needed (f->size then says how many in all, or 0 while the header is
 * incomplete), 1 with f filled, -1 with a cause for a frame no server may
 * send: masked, reserved bits, an unknown opcode, a long or fragmented
 * control frame, or a payload over max.
 */
int
agent_remote_ws_frame_parse(const u_char *p, size_t len, size_t max,
    struct agent_remote_ws_frame *f, char **cause)
{
	uint64_t	plen;
	size_t		hlen = 2;
	int		i;

	f->size = 0;
	if (len < 2)
		return (0);
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	if ((p[0] & 0x70) != 0) {
		*cause = xstrdup("a frame with reserved bits set");
		return (-1);
	}
	if (p[1] & 0x80) {
		*cause = xstrdup("the server masked a frame");
		return (-1);
	}
	switch (f->opcode) {
	case AGENT_REMOTE_WS_CONT:
	case AGENT_REMOTE_WS_TEXT:
	case AGENT_REMOTE_WS_BINARY:
		break;
	case AGENT_REMOTE_WS_CLOSE:
	case AGENT_REMOTE_WS_PING:
	case AGENT_REMOTE_WS_PONG:
		if (!f->fin || (p[1] & 0x7f) > 125) {
			*cause = xstrdup("a control frame fragmented or over "
			    "125 bytes");
			return (-1);
		}
		break;
	default:
		xasprintf(cause, "a frame of unknown opcode %d", f->opcode);
		return (-1);
	}
	plen = p[1] & 0x7f;
	if (plen == 126) {
		if (len < 4)
			return (0);
		plen = ((uint64_t)p[2] << 8) | p[3];
		hlen = 4;
	} else if (plen == 127) {
		if (len < 10)
			return (0);
		if (p[2] & 0x80) {
			*cause = xstrdup("a frame length with the top bit set");
			return (-1);
		}
		plen = 0;
		for (i = 0; i < 8; i++)
			plen = (plen << 8) | p[2 + i];
		hlen = 10;
	}
	if (plen > max) {
		xasprintf(cause, "a frame of %llu bytes, over the %zu byte cap",
		    (unsigned long long)plen, max);
		return (-1);
	}
	if (len - hlen < plen) {
		f->size = hlen + (size_t)plen;
		return (0);
	}
	f->payload = p + hlen;
	f->len = (size_t)plen;
	f->size = hlen + (size_t)plen;
	return (1);
}

/* Sec-WebSocket-Accept for key: base64(SHA-1(key GUID)), 29 bytes. */
void
agent_remote_ws_accept(const char *key, char *out)
{
	unsigned char	md[EVP_MAX_MD_SIZE];
	unsigned int	mdlen = 0;
	char		buf[128];

	snprintf(buf, sizeof buf, "%s%s", key, AGENT_REMOTE_WS_GUID);
	if (EVP_Digest(buf, strlen(buf), md, &mdlen, EVP_sha1(), NULL) != 1 ||
	    mdlen != 20) {
		out[0] = '\0';
		return;
	}
	EVP_EncodeBlock((unsigned char *)out, md, 20);
}

/*
 * The server's answer to the upgrade: 0 if incomplete, 1 when it is a
 * 101 with the right Sec-WebSocket-Accept (*hlen its length, *proto the
 * subprotocol chosen or NULL), -1 with a cause otherwise.
 */
int
agent_remote_ws_handshake_parse(const char *buf, size_t len, const char *key,
    size_t *hlen, char **proto, char **cause)
{
	const char	*end, *line, *next, *colon, *v;
	char		 expect[32];
	int		 status, accepted = 0, upgrade = 0;
	size_t		 n, vlen;

	*proto = NULL;
	if ((end = memmem(buf, len, "\r\n\r\n", 4)) == NULL) {
		if (len > AGENT_REMOTE_WS_HANDSHAKE_MAX) {
			xasprintf(cause, "the server's answer to the upgrade "
			    "is over %d bytes", AGENT_REMOTE_WS_HANDSHAKE_MAX);
			return (-1);
		}
		return (0);
	}
	*hlen = (size_t)(end - buf) + 4;
	if (*hlen > AGENT_REMOTE_WS_HANDSHAKE_MAX) {
		xasprintf(cause, "the server's answer to the upgrade is over "
		    "%d bytes", AGENT_REMOTE_WS_HANDSHAKE_MAX);
		return (-1);
	}
	/* Three digits read in place: buf is not a C string (no sscanf). */
	if (len < 12 || strncmp(buf, "HTTP/1.1 ", 9) != 0 ||
	    !isdigit((unsigned char)buf[9]) ||
	    !isdigit((unsigned char)buf[10]) ||
	    !isdigit((unsigned char)buf[11])) {
		*cause = xstrdup("the server's answer is not HTTP/1.1");
		return (-1);
	}
	status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (status != 101) {
		xasprintf(cause, "the server answered %d to the kernel "
		    "WebSocket%s", status, status == 403 ? " (the token was "
		    "refused)" : status == 404 ? " (no such kernel)" : "");
		return (-1);
	}
	agent_remote_ws_accept(key, expect);
	line = memchr(buf, '\n', (size_t)(end - buf));
	for (line = line != NULL ? line + 1 : end; line < end; line = next) {
		if ((next = memchr(line, '\n', (size_t)(end - line))) == NULL)
			next = end;
		else
			next++;
		n = (size_t)(next - line);
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if ((colon = memchr(line, ':', n)) == NULL)
			continue;
		v = colon + 1;
		while (v < line + n && (*v == ' ' || *v == '\t'))
			v++;
		vlen = (size_t)(line + n - v);
#define AGENT_REMOTE_WS_IS(name) \
	((size_t)(colon - line) == strlen(name) && \
	    strncasecmp(line, name, strlen(name)) == 0)
		if (AGENT_REMOTE_WS_IS("Sec-WebSocket-Accept"))
			accepted = vlen == strlen(expect) &&
			    memcmp(v, expect, vlen) == 0;
		else if (AGENT_REMOTE_WS_IS("Upgrade"))
			upgrade = vlen == 9 && strncasecmp(v, "websocket",
			    9) == 0;
		else if (AGENT_REMOTE_WS_IS("Sec-WebSocket-Protocol") &&
		    *proto == NULL && vlen > 0 && vlen < 128)
			*proto = xstrndup(v, vlen);
#undef AGENT_REMOTE_WS_IS
	}
	if (!accepted || !upgrade) {
		*cause = xstrdup("the server's upgrade lacks a valid "
		    "Sec-WebSocket-Accept or Upgrade: websocket");
		free(*proto);
		*proto = NULL;
		return (-1);
	}
	return (1);
}

static uint64_t
agent_remote_ws_le64(const u_char *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return (v);
}

static uint32_t
agent_remote_ws_be32(const u_char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/*
 * A v1 message: n = count of offsets, then n 64-bit offsets; part i
 * runs from offset i to i+1, the last to the end.  out[0] is the
 * channel, then header, parent, metadata, content and buffers.
 */
int
agent_remote_ws_v1_split(const u_char *p, size_t len,
    struct agent_wire_frame *out, size_t max, size_t *n, char **cause)
{
	uint64_t	count, start, stop, i;

	if (len < 8 || (count = agent_remote_ws_le64(p)) < 6 ||
	    count - 1 > max || len / 8 < count + 1) {
		*cause = xstrdup("a v1 message with a bad offset table");
		return (-1);
	}
	for (i = 0; i + 1 < count; i++) {
		start = agent_remote_ws_le64(p + 8 * (i + 1));
		stop = agent_remote_ws_le64(p + 8 * (i + 2));
		if (i == 0 && start < 8 * (count + 1)) {
			*cause = xstrdup("a v1 offset inside the table");
			return (-1);
		}
		if (start > stop || stop > len) {
			*cause = xstrdup("a v1 offset out of order or past "
			    "the end");
			return (-1);
		}
		out[i].data = p + start;
		out[i].len = (size_t)(stop - start);
	}
	*n = (size_t)count - 1;
	return (0);
}

/*
 * The legacy binary message (a JSON message with buffers): a 32-bit
 * big-endian count of parts, their offsets, then the JSON message and
 * the buffers.
 */
int
agent_remote_ws_binary_split(const u_char *p, size_t len,
    struct agent_wire_frame *out, size_t max, size_t *n, char **cause)
{
	uint32_t	count, start, stop, i;

	if (len < 4 || (count = agent_remote_ws_be32(p)) < 1 ||
	    count > max || len / 4 < (size_t)count + 1) {
		*cause = xstrdup("a binary message with a bad offset table");
		return (-1);
	}
	for (i = 0; i < count; i++) {
		start = agent_remote_ws_be32(p + 4 * (i + 1));
		stop = i + 1 < count ? agent_remote_ws_be32(p + 4 * (i + 2)) :
		    (uint32_t)len;
		if (start < 4 * (count + 1) || start > stop || stop > len) {
			*cause = xstrdup("a binary offset out of order or "
			    "past the end");
			return (-1);
		}
		out[i].data = p + start;
		out[i].len = stop - start;
	}
	*n = count;
	return (0);
}

/* A JSON object's member as text for the wire parser; caller frees. */
static char *
agent_remote_ws_member(struct json_object *o, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_object))
		return (xstrdup("{}"));
	return (xstrdup(json_object_to_json_string_ext(v,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
}

/*
 * A message from the server as a wire message, its channel in *channel
 * (caller frees both); NULL with a cause if it is not a kernel message.
 */
struct agent_wire_msg *
agent_remote_ws_decode(int v1, int binary, const u_char *p, size_t len,
    char **channel, char **cause)
{
	struct agent_wire_frame	 parts[AGENT_REMOTE_MAX_PARTS];
	struct agent_wire_frame	 frames[AGENT_REMOTE_MAX_PARTS + 2];
	struct json_tokener	*tok;
	struct json_object	*o = NULL, *v;
	struct agent_wire_msg	*m;
	char			*text[4];
	size_t			 n, i, nbuf = 0;
	int			 k;

	*channel = NULL;
	frames[0].data = AGENT_WIRE_DELIM;
	frames[0].len = strlen(AGENT_WIRE_DELIM);
	frames[1].data = "";
	frames[1].len = 0;
	if (v1) {
		if (!binary) {
			*cause = xstrdup("a text message on the v1 "
			    "subprotocol");
			return (NULL);
		}
		if (agent_remote_ws_v1_split(p, len, parts,
		    AGENT_REMOTE_MAX_PARTS, &n, cause) != 0)
			return (NULL);
		*channel = xstrndup(parts[0].data, parts[0].len);
		for (i = 1; i < n; i++)
			frames[i + 1] = parts[i];
		m = agent_wire_parse("", frames, n + 1, cause);
		if (m == NULL) {
			free(*channel);
			*channel = NULL;
		}
		return (m);
	}
	if (binary) {
		if (agent_remote_ws_binary_split(p, len, parts,
		    AGENT_REMOTE_MAX_PARTS, &n, cause) != 0)
			return (NULL);
		p = parts[0].data;
		len = parts[0].len;
		nbuf = n - 1;
	}
	if (len == 0 || len > INT32_MAX) {
		*cause = xstrdup("an empty message");
		return (NULL);
	}
	tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
	o = json_tokener_parse_ex(tok, (const char *)p, (int)len);
	if (o == NULL || (size_t)tok->char_offset != len ||
	    !json_object_is_type(o, json_type_object)) {
		json_tokener_free(tok);
		json_object_put(o);
		*cause = xstrdup("a text message that is not a JSON object");
		return (NULL);
	}
	json_tokener_free(tok);
	if (!json_object_object_get_ex(o, "channel", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		json_object_put(o);
		*cause = xstrdup("a message without a channel");
		return (NULL);
	}
	*channel = xstrdup(json_object_get_string(v));
	text[0] = agent_remote_ws_member(o, "header");
	text[1] = agent_remote_ws_member(o, "parent_header");
	text[2] = agent_remote_ws_member(o, "metadata");
	text[3] = agent_remote_ws_member(o, "content");
	json_object_put(o);
	for (k = 0; k < 4; k++) {
		frames[k + 2].data = text[k];
		frames[k + 2].len = strlen(text[k]);
	}
	for (i = 0; i < nbuf && i < AGENT_REMOTE_MAX_PARTS - 4; i++)
		frames[i + 6] = parts[i + 1];
	m = agent_wire_parse("", frames, 6 + i, cause);
	for (k = 0; k < 4; k++)
		free(text[k]);
	if (m == NULL) {
		free(*channel);
		*channel = NULL;
	}
	return (m);
}

/*
 * A message to send on channel from agent_wire_encode's parts (signature,
 * header, parent, metadata, content): binary v1 or JSON text.  Caller
 * frees; *len its length.
 */
char *
agent_remote_ws_encode(int v1, const char *channel, char **parts,
    size_t *len)
{
	uint64_t	off[7];
	size_t		plen[5], i, total;
	char		*out;
	int		b;

	if (!v1) {
		xasprintf(&out, "{\"channel\":\"%s\",\"header\":%s,"
		    "\"parent_header\":%s,\"metadata\":%s,\"content\":%s,"
		    "\"buffers\":[]}", channel, parts[1], parts[2], parts[3],
		    parts[4]);
		*len = strlen(out);
		return (out);
	}
	plen[0] = strlen(channel);
	for (i = 1; i < 5; i++)
		plen[i] = strlen(parts[i]);
	/* Count, then 6 offsets: channel and four parts start, the end. */
	off[0] = 6;
	off[1] = 8 * 7;
	for (i = 0; i < 5; i++)
		off[i + 2] = off[i + 1] + plen[i];
	total = (size_t)off[6];
	out = xmalloc(total);
	for (i = 0; i < 7; i++) {
		for (b = 0; b < 8; b++)
			out[8 * i + b] = (char)((off[i] >> (8 * b)) & 0xff);
	}
	memcpy(out + off[1], channel, plen[0]);
	for (i = 1; i < 5; i++)
		memcpy(out + off[i + 1], parts[i], plen[i]);
	*len = total;
	return (out);
}

/* Tell the owner once, later: a callback may free us. */
static void
agent_remote_ws_fail(struct agent_remote_ws *ws, const char *why)
{
	if (ws->state == AGENT_REMOTE_WS_CLOSED)
		return;
	ws->state = AGENT_REMOTE_WS_CLOSED;
	ws->why = xstrdup(why);
	bufferevent_disable(ws->bev, EV_READ | EV_WRITE);
	event_active(ws->close_ev, EV_TIMEOUT, 0);
}

static void
agent_remote_ws_close_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_remote_ws	*ws = arg;

	ws->cbs.closed(ws->arg, ws->why);
}

/* One frame while open; -1 to close. */
static int
agent_remote_ws_frame(struct agent_remote_ws *ws,
    const struct agent_remote_ws_frame *f)
{
	const u_char	*data;
	size_t		 len;

	switch (f->opcode) {
	case AGENT_REMOTE_WS_PING:
		agent_remote_ws_send(ws, AGENT_REMOTE_WS_PONG, f->payload,
		    f->len);
		return (0);
	case AGENT_REMOTE_WS_PONG:
		return (0);
	case AGENT_REMOTE_WS_CLOSE:
		agent_remote_ws_send(ws, AGENT_REMOTE_WS_CLOSE, f->payload,
		    f->len >= 2 ? 2 : 0);
		agent_remote_ws_fail(ws, "the server closed the kernel "
		    "WebSocket");
		return (-1);
	case AGENT_REMOTE_WS_CONT:
		if (ws->msg_opcode == 0) {
			agent_remote_ws_fail(ws, "a continuation frame with "
			    "no message");
			return (-1);
		}
		break;
	default:
		if (ws->msg_opcode != 0) {
			agent_remote_ws_fail(ws, "a new message inside a "
			    "fragmented one");
			return (-1);
		}
		ws->msg_opcode = f->opcode;
		break;
	}
	if (evbuffer_get_length(ws->msg) + f->len > AGENT_REMOTE_WS_MAX) {
		agent_remote_ws_fail(ws, "a kernel message over the "
		    "64 MiB cap");
		return (-1);
	}
	if (!f->fin) {
		evbuffer_add(ws->msg, f->payload, f->len);
		return (0);
	}
	if (evbuffer_get_length(ws->msg) == 0) {
		data = f->payload;
		len = f->len;
		ws->cbs.message(ws->arg, ws->msg_opcode ==
		    AGENT_REMOTE_WS_BINARY, data, len);
	} else {
		evbuffer_add(ws->msg, f->payload, f->len);
		len = evbuffer_get_length(ws->msg);
		data = evbuffer_pullup(ws->msg, -1);
		ws->cbs.message(ws->arg, ws->msg_opcode ==
		    AGENT_REMOTE_WS_BINARY, data, len);
		evbuffer_drain(ws->msg, len);
	}
	ws->msg_opcode = 0;
	return (0);
}

/*
 * Acknowledge what was read at once.  A Jupyter Server writes a reply as
 * several small frames without TCP_NODELAY, so its Nagle holds the
 * second until the first is acknowledged; a delayed ACK made that a
 * 40 ms stall in about half the rounds of `1+1`.  Linux leaves quick-ACK
 * mode on its own, so it is asked for again on every read.
 */
static void
agent_remote_ws_quickack(struct bufferevent *bev)
{
#ifdef TCP_QUICKACK
	evutil_socket_t	fd = bufferevent_getfd(bev);
	int		one = 1;

	if (fd != -1)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one,
		    sizeof one);
#else
	(void)bev;
#endif
}

static void
agent_remote_ws_read_cb(struct bufferevent *bev, void *arg)
{
	struct agent_remote_ws		*ws = arg;
	struct evbuffer			*in = bufferevent_get_input(bev);
	struct agent_remote_ws_frame	 f;
	const u_char			*p;
	char				*cause, *proto;
	size_t				 len, hlen, want;
	int				 rc;

	agent_remote_ws_quickack(bev);
	if (ws->state == AGENT_REMOTE_WS_HANDSHAKE) {
		len = evbuffer_get_length(in);
		p = evbuffer_pullup(in, -1);
		rc = agent_remote_ws_handshake_parse((const char *)p, len,
		    ws->key, &hlen, &proto, &cause);
		if (rc == 0)
			return;
		if (rc == -1) {
			agent_remote_ws_fail(ws, cause);
			free(cause);
			return;
		}
		evbuffer_drain(in, hlen);
		ws->v1 = proto != NULL &&
		    strcmp(proto, AGENT_REMOTE_WS_V1) == 0;
		free(proto);
		ws->state = AGENT_REMOTE_WS_OPEN;
		ws->cbs.open(ws->arg, ws->v1);
	}
	while (ws->state == AGENT_REMOTE_WS_OPEN &&
	    (len = evbuffer_get_length(in)) >= 2) {
		/*
		 * The header first (at most 10 bytes): it says the frame's
		 * size, so a large frame is made contiguous once, when it
		 * is all here, not on every read.
		 */
		want = len < 10 ? len : 10;
		p = evbuffer_pullup(in, (ev_ssize_t)want);
		rc = agent_remote_ws_frame_parse(p, want, AGENT_REMOTE_WS_MAX,
		    &f, &cause);
		if (rc == 0 && f.size > want) {
			if (f.size > len)
				return;
			p = evbuffer_pullup(in, (ev_ssize_t)f.size);
			rc = agent_remote_ws_frame_parse(p, f.size,
			    AGENT_REMOTE_WS_MAX, &f, &cause);
		}
		if (rc == 0)
			return;
		if (rc == -1) {
			agent_remote_ws_fail(ws, cause);
			free(cause);
			return;
		}
		hlen = f.size;
		if (agent_remote_ws_frame(ws, &f) != 0)
			return;
		evbuffer_drain(in, hlen);
	}
}

static void
agent_remote_ws_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct agent_remote_ws	*ws = arg;
	char			*why;
	int			 untrusted;

	if (what & BEV_EVENT_CONNECTED) {
		ws->state = AGENT_REMOTE_WS_HANDSHAKE;
		return;
	}
	if (ws->d->tls && (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) &&
	    (why = jserver_tls_failure(bev, ws->d->name, ws->d->host,
	    ws->d->ca_file, (what & BEV_EVENT_TIMEOUT) != 0,
	    &untrusted)) != NULL) {
		agent_remote_ws_fail(ws, why);
		free(why);
	} else if (what & BEV_EVENT_EOF)
		agent_remote_ws_fail(ws, "the Jupyter Server closed the "
		    "connection");
	else if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		agent_remote_ws_fail(ws, "the Jupyter Server connection "
		    "failed or timed out");
}

/*
 * Connect to path (under the domain's base, with its query) and send the
 * upgrade; offer_v1 offers the v1 subprotocol.  cbs run on base's loop.
 */
struct agent_remote_ws *
agent_remote_ws_create(struct event_base *base, const struct domain *d,
    const char *path, int offer_v1, const struct agent_remote_ws_cbs *cbs,
    void *arg, char **cause)
{
	struct agent_remote_ws	*ws;
	struct addrinfo		 hints, *ai;
	struct evbuffer		*out;
	unsigned char		 nonce[16];
	char			 port[16];
	int			 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof port, "%d", d->port);
	if ((rc = getaddrinfo(d->host, port, &hints, &ai)) != 0) {
		xasprintf(cause, "cannot resolve %s: %s", d->host,
		    gai_strerror(rc));
		return (NULL);
	}
	if (RAND_bytes(nonce, sizeof nonce) != 1) {
		freeaddrinfo(ai);
		*cause = xstrdup("RAND_bytes failed");
		return (NULL);
	}
	ws = xcalloc(1, sizeof *ws);
	EVP_EncodeBlock((unsigned char *)ws->key, nonce, sizeof nonce);
	ws->cbs = *cbs;
	ws->arg = arg;
	ws->msg = evbuffer_new();
	ws->close_ev = event_new(base, -1, 0, agent_remote_ws_close_cb, ws);
	ws->d = d;
	if (d->tls)
		ws->bev = jserver_tls_bufferevent(base, d);
	else
		ws->bev = bufferevent_socket_new(base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	if (ws->bev == NULL) {
		freeaddrinfo(ai);
		xasprintf(cause, "cannot make a connection to %s", d->url);
		agent_remote_ws_free(ws);
		return (NULL);
	}
	bufferevent_setcb(ws->bev, agent_remote_ws_read_cb, NULL,
	    agent_remote_ws_event_cb, ws);
	bufferevent_enable(ws->bev, EV_READ | EV_WRITE);
	out = bufferevent_get_output(ws->bev);
	evbuffer_add_printf(out, "GET %s%s HTTP/1.1\r\n"
	    "Host: %s:%d\r\n"
	    "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "%s%s%s"
	    "Authorization: token %s\r\n\r\n",
	    d->base, path, d->host, d->port, ws->key,
	    offer_v1 ? "Sec-WebSocket-Protocol: " : "",
	    offer_v1 ? AGENT_REMOTE_WS_V1 : "", offer_v1 ? "\r\n" : "",
	    d->token);
	ws->state = AGENT_REMOTE_WS_CONNECTING;
	if (bufferevent_socket_connect(ws->bev, ai->ai_addr,
	    (int)ai->ai_addrlen) != 0) {
		freeaddrinfo(ai);
		xasprintf(cause, "cannot connect to %s:%d", d->host, d->port);
		agent_remote_ws_free(ws);
		return (NULL);
	}
	freeaddrinfo(ai);
	return (ws);
}

/* Send one unfragmented, masked frame. */
int
agent_remote_ws_send(struct agent_remote_ws *ws, int opcode, const void *data,
    size_t len)
{
	struct evbuffer	*out;
	const u_char	*src = data;
	u_char		 hdr[14], mask[4], chunk[4096];
	size_t		 hlen = 2, i, n, off;
	int		 b;

	if (ws->state != AGENT_REMOTE_WS_OPEN &&
	    opcode != AGENT_REMOTE_WS_CLOSE)
		return (-1);
	if (RAND_bytes(mask, sizeof mask) != 1)
		return (-1);
	hdr[0] = 0x80 | (opcode & 0x0f);
	if (len < 126)
		hdr[1] = 0x80 | (u_char)len;
	else if (len < 65536) {
		hdr[1] = 0x80 | 126;
		hdr[2] = (u_char)(len >> 8);
		hdr[3] = (u_char)len;
		hlen = 4;
	} else {
		hdr[1] = 0x80 | 127;
		for (b = 0; b < 8; b++)
			hdr[2 + b] = (u_char)((uint64_t)len >> (56 - 8 * b));
		hlen = 10;
	}
	memcpy(hdr + hlen, mask, 4);
	hlen += 4;
	out = bufferevent_get_output(ws->bev);
	evbuffer_add(out, hdr, hlen);
	for (off = 0; off < len; off += n) {
		n = len - off < sizeof chunk ? len - off : sizeof chunk;
		for (i = 0; i < n; i++)
			chunk[i] = src[off + i] ^ mask[(off + i) & 3];
		evbuffer_add(out, chunk, n);
	}
	return (0);
}

void
agent_remote_ws_free(struct agent_remote_ws *ws)
{
	if (ws == NULL)
		return;
	if (ws->bev != NULL)
		bufferevent_free(ws->bev);
	event_free(ws->close_ev);
	evbuffer_free(ws->msg);
	free(ws->why);
	free(ws);
}
