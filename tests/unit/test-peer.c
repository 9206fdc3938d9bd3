/* SPDX-License-Identifier: ISC */
/*
 * test-peer.c: the framed peer layer on a real event_base and socketpair,
 * and the blocking handshake client against it.
 */

#include <sys/socket.h>
#include <sys/wait.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "common.h"

struct seen {
	int	frames;
	int	lost;
	int	last_type;
	char	last_str[64];
	char	big[64];	/* big_cb: bytes right of the big value */
};

static void	record_cb(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static size_t	frame(uint8_t *, uint16_t, uint8_t, const char *);
static void	run_for(struct event_base *, int);
static void	accept_cb(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static void	server_cb(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static pid_t	start_server(int);
static void	big_cb(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);

static void
record_cb(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct seen	*s = arg;
	const char	*v;
	size_t		 len;

	if (hdr == NULL) {
		s->lost++;
		return;
	}
	s->frames++;
	s->last_type = hdr->type;
	if ((v = proto_get_str(body, "k", &len)) != NULL)
		snprintf(s->last_str, sizeof s->last_str, "%.*s", (int)len, v);
}

static size_t
frame(uint8_t *buf, uint16_t type, uint8_t version, const char *value)
{
	struct mpbuf		b;
	struct proto_header	hdr;
	size_t			n;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "k", value);
	hdr.length = (uint32_t)b.sb.size;
	hdr.type = type;
	hdr.version = version;
	hdr.flags = 0;
	hdr.id = 9;
	proto_header_pack(&hdr, buf);
	memcpy(buf + PROTO_HEADER_SIZE, b.sb.data, b.sb.size);
	n = PROTO_HEADER_SIZE + b.sb.size;
	mpbuf_free(&b);
	return (n);
}

static void
run_for(struct event_base *base, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

Test(peer, frame_split_byte_by_byte)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	uint8_t			 buf[128];
	size_t			 n, i;
	int			 sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", record_cb, &s);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION, "hello");
	for (i = 0; i < n; i++) {
		cr_assert_eq(write(sv[1], buf + i, 1), 1);
		run_for(base, 1);
	}
	run_for(base, 10);
	cr_assert_eq(s.frames, 1);
	cr_assert_eq(s.last_type, PROTO_MSG_HELLO);
	cr_assert_str_eq(s.last_str, "hello");
	cr_assert_eq(s.lost, 0);
	close(sv[1]);
	run_for(base, 10);
	cr_assert_eq(s.lost, 1);
	event_base_free(base);
}

Test(peer, oversized_header_kills_peer)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	struct proto_header	 hdr = { 0, PROTO_MSG_PING, PROTO_VERSION, 0,
	    1 };
	uint8_t			 h[PROTO_HEADER_SIZE];
	int			 sv[2];
	char			 c;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", record_cb, &s);
	hdr.length = 1U << 30;
	proto_header_pack(&hdr, h);
	cr_assert_eq(write(sv[1], h, sizeof h), (ssize_t)sizeof h);
	run_for(base, 20);
	cr_assert_eq(s.frames, 0);
	cr_assert_eq(s.lost, 1);
	/* Our end is closed: the writer sees EOF. */
	cr_assert_eq(read(sv[1], &c, 1), 0);
	event_base_free(base);
}

Test(peer, wrong_version_only_for_hello)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	uint8_t			 buf[128];
	size_t			 n;
	int			 sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", record_cb, &s);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION + 1, "a");
	cr_assert_eq(write(sv[1], buf, n), (ssize_t)n);
	run_for(base, 10);
	cr_assert_eq(s.frames, 1, "a HELLO of another version is delivered");
	n = frame(buf, PROTO_MSG_ROOM_GET, PROTO_VERSION + 1, "b");
	cr_assert_eq(write(sv[1], buf, n), (ssize_t)n);
	run_for(base, 10);
	cr_assert_eq(s.frames, 1);
	cr_assert_eq(s.lost, 1);
	close(sv[1]);
	event_base_free(base);
}

/* Answers HELLO with HELLO_OK, as every accepting side does. */
static void
accept_cb(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	record_cb(peer, hdr, body, arg);
	if (hdr != NULL && hdr->type == PROTO_MSG_HELLO)
		peer_send_raw(peer, PROTO_MSG_HELLO_OK, hdr->id, "\x80", 1);
}

Test(peer, before_hello_only_a_hello_sized_frame)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	struct proto_header	 hdr = { 64U * 1024 * 1024,
	    PROTO_MSG_ROOM_CONTENT, PROTO_VERSION, 0, 1 };
	uint8_t			 h[PROTO_HEADER_SIZE];
	int			 sv[2];
	char			 c;

	/* Within ROOM_CONTENT's own cap, but nobody has said HELLO yet. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", record_cb, &s);
	proto_header_pack(&hdr, h);
	cr_assert_eq(write(sv[1], h, sizeof h), (ssize_t)sizeof h);
	run_for(base, 20);
	cr_assert_eq(s.frames, 0);
	cr_assert_eq(s.lost, 1);
	cr_assert_eq(read(sv[1], &c, 1), 0);
	close(sv[1]);

	/* A HELLO larger than a HELLO may be. */
	memset(&s, 0, sizeof s);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", record_cb, &s);
	hdr.type = PROTO_MSG_HELLO;
	hdr.length = PROTO_HELLO_MAX + 1;
	proto_header_pack(&hdr, h);
	cr_assert_eq(write(sv[1], h, sizeof h), (ssize_t)sizeof h);
	run_for(base, 20);
	cr_assert_eq(s.lost, 1);
	close(sv[1]);
	event_base_free(base);
}

Test(peer, after_handshake_full_caps)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	static uint8_t		 big[128 + PROTO_HEADER_SIZE + 200 * 1024];
	struct proto_header	 hdr = { 200 * 1024 - PROTO_HEADER_SIZE,
	    PROTO_MSG_ROOM_CONTENT, PROTO_VERSION, 0, 2 };
	uint8_t			 buf[128];
	size_t			 n, len;
	int			 sv[2];

	/* HELLO and a 200 KiB frame in one write: the first is taken under
	 * the handshake rules, the second under ROOM_CONTENT's cap. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", accept_cb, &s);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION, "a");
	memcpy(big, buf, n);
	len = hdr.length;
	proto_header_pack(&hdr, big + n);
	big[n + PROTO_HEADER_SIZE] = 0x81;		/* map of 1 */
	big[n + PROTO_HEADER_SIZE + 1] = 0xa1;		/* "k" */
	big[n + PROTO_HEADER_SIZE + 2] = 'k';
	big[n + PROTO_HEADER_SIZE + 3] = 0xdb;		/* str32 */
	big[n + PROTO_HEADER_SIZE + 4] = (len - 8) >> 24;
	big[n + PROTO_HEADER_SIZE + 5] = (len - 8) >> 16;
	big[n + PROTO_HEADER_SIZE + 6] = (len - 8) >> 8;
	big[n + PROTO_HEADER_SIZE + 7] = (len - 8);
	memset(big + n + PROTO_HEADER_SIZE + 8, 'x', len - 8);
	util_set_nonblock(sv[1]);
	len = n + PROTO_HEADER_SIZE + len;
	for (n = 0; n < len;) {
		ssize_t	w = write(sv[1], big + n, len - n);

		if (w > 0)
			n += (size_t)w;
		run_for(base, 5);
	}
	run_for(base, 50);
	cr_assert_eq(s.frames, 2);
	cr_assert_eq(s.last_type, PROTO_MSG_ROOM_CONTENT);
	cr_assert_eq(s.lost, 0);
	close(sv[1]);
	run_for(base, 20);
	cr_assert_eq(s.lost, 1);
	event_base_free(base);
}

/* Checks every byte of a big frame's "k" (peer_read_rest's part). */
static void
big_cb(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct seen	*s = arg;
	const char	*v;
	size_t		 len, i;

	accept_cb(peer, hdr, body, arg);
	if (hdr == NULL || hdr->type != PROTO_MSG_BLOB_REPLY ||
	    (v = proto_get_str(body, "k", &len)) == NULL)
		return;
	for (i = 0; i < len; i++) {
		if (v[i] != 'a' + (char)(i % 23))
			break;
	}
	snprintf(s->big, sizeof s->big, "%zu of %zu", i, len);
}

Test(peer, big_frame_whole_and_in_order)
{
	struct event_base	*base = event_base_new();
	struct seen		 s = { 0 };
	struct proto_header	 hdr = { 0, PROTO_MSG_BLOB_REPLY,
	    PROTO_VERSION, 0, 3 };
	size_t			 len = 6 * 1024 * 1024, n, i;
	uint8_t			*big, buf[128];
	int			 sv[2];
	pid_t			 pid;

	/* A 6 MiB frame from another process, then a small one after it. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", big_cb, &s);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION, "a");
	big = xmalloc(n + PROTO_HEADER_SIZE + 8 + len);
	memcpy(big, buf, n);
	hdr.length = (uint32_t)(8 + len);
	proto_header_pack(&hdr, big + n);
	memcpy(big + n + PROTO_HEADER_SIZE, "\x81\xa1k\xdb", 4);
	big[n + PROTO_HEADER_SIZE + 4] = (uint8_t)(len >> 24);
	big[n + PROTO_HEADER_SIZE + 5] = (uint8_t)(len >> 16);
	big[n + PROTO_HEADER_SIZE + 6] = (uint8_t)(len >> 8);
	big[n + PROTO_HEADER_SIZE + 7] = (uint8_t)len;
	for (i = 0; i < len; i++)
		big[n + PROTO_HEADER_SIZE + 8 + i] = (uint8_t)('a' + i % 23);
	if ((pid = fork()) == 0) {
		close(sv[0]);
		n += PROTO_HEADER_SIZE + 8 + len;
		for (i = 0; i < n;) {
			ssize_t	w = write(sv[1], big + i, n - i);

			if (w <= 0)
				_exit(1);
			i += (size_t)w;
		}
		n = frame(buf, PROTO_MSG_ROOM_CONTENT, PROTO_VERSION, "after");
		if (write(sv[1], buf, n) != (ssize_t)n)
			_exit(1);
		/* Not gone before the HELLO_OK is written (EPIPE). */
		_exit(read(sv[1], buf, sizeof buf) > 0 ? 0 : 1);
	}
	close(sv[1]);
	for (i = 0; i < 200 && s.frames < 3; i++)
		run_for(base, 10);
	cr_assert_eq(s.frames, 3);
	cr_assert_eq(s.last_type, PROTO_MSG_ROOM_CONTENT);
	cr_assert_str_eq(s.last_str, "after");
	cr_assert_str_eq(s.big, "6291456 of 6291456");
	waitpid(pid, NULL, 0);
	/* The writer is gone: the peer is lost, and freed. */
	for (i = 0; i < 200 && !s.lost; i++)
		run_for(base, 10);
	cr_assert_eq(s.lost, 1);
	free(big);
	event_base_free(base);
}

/* Takes the zone of every frame it can (peer_take_frame), keeps bodies. */
struct kept {
	struct seen		 s;
	msgpack_zone		*zone[4];
	msgpack_object		 body[4];	/* parts in zone */
	int			 taken, tried;
};

static void
keep_cb(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct kept	*k = arg;
	msgpack_zone	*z;

	accept_cb(peer, hdr, body, &k->s);
	if (hdr == NULL || hdr->type != PROTO_MSG_ROOM_CONTENT ||
	    k->tried >= 4)
		return;
	z = peer_take_frame(peer);
	k->zone[k->tried] = z;
	if (z != NULL)
		k->body[k->tried] = *body;
	k->tried++;
	k->taken += z != NULL;
	cr_assert_null(peer_take_frame(peer));	/* once */
}

Test(peer, kept_frames_outlive_the_callback)
{
	struct event_base	*base = event_base_new();
	struct kept		 k;
	char			 value[3000];
	const char		*v;
	uint8_t			 buf[4096];
	size_t			 n, len;
	int			 sv[2], i;

	/* Frames of 1 KiB or more come from a copy the owner may keep. */
	memset(&k, 0, sizeof k);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_keep_frames(peer_create(base, sv[0], "test", keep_cb, &k), 1024);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION, "a");
	cr_assert_eq(write(sv[1], buf, n), (ssize_t)n);
	run_for(base, 10);
	for (i = 0; i < 3; i++) {
		memset(value, 'p' + i, sizeof value - 1);
		value[i == 1 ? 10 : sizeof value - 1] = '\0';
		n = frame(buf, PROTO_MSG_ROOM_CONTENT, PROTO_VERSION, value);
		cr_assert_eq(write(sv[1], buf, n), (ssize_t)n);
	}
	run_for(base, 20);
	cr_assert_eq(k.s.frames, 4);
	cr_assert_eq(k.tried, 3);
	cr_assert_eq(k.taken, 2);
	cr_assert_null(k.zone[1], "a small frame is not a copy");
	for (i = 0; i < 3; i += 2) {
		/* Read after the input it came in is gone. */
		v = proto_get_str(&k.body[i], "k", &len);
		cr_assert_eq(len, sizeof value - 1);
		cr_assert_eq(v[0], 'p' + i);
		cr_assert_eq(v[len - 1], 'p' + i);
		msgpack_zone_free(k.zone[i]);
	}
	close(sv[1]);
	run_for(base, 10);
	event_base_free(base);
}

Test(peer, no_hello_closed_after_timeout, .timeout = 40)
{
	struct event_base	*base = event_base_new();
	struct peer		*caller;
	struct seen		 s = { 0 }, t = { 0 };
	uint8_t			 buf[128];
	size_t			 n;
	int			 sv[2], sw[2];
	char			 c;

	/*
	 * One peer never speaks: closed after PEER_HELLO_TIMEOUT.  One
	 * connects (sends HELLO) and is never answered: closed after
	 * PEER_HELLO_OK_TIMEOUT from its HELLO, sent a while after it
	 * was created.
	 */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sw), 0);
	peer_create(base, sv[0], "silent", record_cb, &s);
	caller = peer_create(base, sw[0], "caller", record_cb, &t);
	run_for(base, 2000);
	peer_send_raw(caller, PROTO_MSG_HELLO, 1, "\x80", 1);
	run_for(base, PEER_HELLO_TIMEOUT * 1000 - 2500);
	cr_assert_eq(s.lost + t.lost, 0, "closed too early");
	run_for(base, 1000);
	cr_assert_eq(s.lost, 1, "a silent peer stays open");
	cr_assert_eq(read(sv[1], &c, 1), 0);
	close(sv[1]);
	run_for(base, (PEER_HELLO_OK_TIMEOUT - PEER_HELLO_TIMEOUT) * 1000);
	cr_assert_eq(t.lost, 0, "HELLO_OK not awaited from the HELLO");
	run_for(base, 2000);
	cr_assert_eq(t.lost, 1, "an unanswered HELLO stays open");
	close(sw[1]);

	/* A HELLO answered in time keeps the peer. */
	memset(&s, 0, sizeof s);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	peer_create(base, sv[0], "test", accept_cb, &s);
	n = frame(buf, PROTO_MSG_HELLO, PROTO_VERSION, "a");
	cr_assert_eq(write(sv[1], buf, n), (ssize_t)n);
	run_for(base, PEER_HELLO_TIMEOUT * 1000 + 500);
	cr_assert_eq(s.lost, 0);
	close(sv[1]);
	run_for(base, 20);
	cr_assert_eq(s.lost, 1);
	event_base_free(base);
}

static struct proto_incarnation	server_inc = { 777, 1234567, "9.9.9" };

/* A one-peer handshake server like the daemon's. */
static void
server_cb(struct peer *peer, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct proto_hello	hello;
	struct mpbuf		b;
	char			err[128];

	if (hdr == NULL) {
		event_base_loopbreak(arg);
		return;
	}
	mpbuf_init(&b);
	if (proto_hello_unpack(body, &hello, err, sizeof err) != 0 ||
	    proto_hello_check(&hello, err, sizeof err) != 0) {
		proto_mismatch_pack(&b.pk, hello.version);
		peer_send(peer, PROTO_MSG_VERSION_MISMATCH, hdr->id, &b.sb);
		peer_kill(peer, NULL);
	} else {
		proto_hello_ok_pack(&b.pk, &server_inc);
		peer_send(peer, PROTO_MSG_HELLO_OK, hdr->id, &b.sb);
	}
	mpbuf_free(&b);
}

static pid_t
start_server(int fd)
{
	struct event_base	*base;
	pid_t			 pid;

	if ((pid = fork()) == 0) {
		base = event_base_new();
		peer_create(base, fd, "server", server_cb, base);
		alarm(10);
		event_base_dispatch(base);
		_exit(0);
	}
	close(fd);
	return (pid);
}

Test(peer, handshake_answers_incarnation)
{
	struct proto_incarnation	 inc;
	char				*cause = NULL;
	int				 sv[2];
	pid_t				 pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = start_server(sv[0]);
	cr_assert_eq(frameio_hello(sv[1], "worker", "t", &inc, &cause), 0,
	    "cause: %s", cause);
	cr_assert_eq(inc.pid, 777);
	cr_assert_eq(inc.started_at, 1234567);
	cr_assert_str_eq(inc.version, "9.9.9");
	close(sv[1]);
	waitpid(pid, NULL, 0);
}

Test(peer, handshake_version_mismatch_closes_only_peer)
{
	struct proto_hello	 hello = { .version = PROTO_VERSION + 1,
	    .kind = "worker", .label = "t", .pid = 1 };
	struct proto_header	 hdr;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	char			*cause = NULL;
	int			 sv[2], status;
	pid_t			 pid;
	char			 c;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = start_server(sv[0]);
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	cr_assert_eq(frameio_write(sv[1], PROTO_MSG_HELLO, 1, b.sb.data,
	    b.sb.size), 0);
	mpbuf_free(&b);
	cr_assert_eq(frameio_read(sv[1], 5000, &hdr, &u, &cause), 0,
	    "cause: %s", cause);
	cr_assert_eq(hdr.type, PROTO_MSG_VERSION_MISMATCH);
	msgpack_unpacked_destroy(&u);
	/* The server closed this peer, and itself lives on to exit 0. */
	cr_assert_eq(read(sv[1], &c, 1), 0);
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sv[1]);
}

Test(mpjson, round_trip)
{
	const char		*text = "{\"a\":[1,-2,3.5,true,null,\"x\\u0000y\"],"
	    "\"b\":{\"c\":\"\\u00e9\"}}";
	struct json_object	*j, *back;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	size_t			 off = 0;

	j = json_tokener_parse(text);
	cr_assert_not_null(j);
	mpbuf_init(&b);
	mpjson_pack(&b.pk, j);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	back = mpjson_unpack(&u.data);
	cr_assert(json_object_equal(j, back));
	/* The NUL inside the string survives. */
	cr_assert_eq(json_object_get_string_len(json_object_array_get_idx(
	    json_object_object_get(back, "a"), 5)), 3);
	json_object_put(j);
	json_object_put(back);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
}

/* peer-dispatch.c: a table binds a type to its handler. */
struct dispatched {
	int		 handled, refused;
	uint16_t	 type;
	int		 typed;		/* the handler got a typed body */
	char		 value[64];
	char		 err[256];
};

static void
dispatch_handler(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct dispatched		*d = arg;
	const struct proto_exec_input	*in = m;

	d->handled++;
	d->type = hdr->type;
	d->typed = m != NULL;
	if (in != NULL)
		snprintf(d->value, sizeof d->value, "%.*s",
		    (int)in->value.len, in->value.ptr);
}

static void
dispatch_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	struct dispatched	*d = arg;

	d->refused++;
	snprintf(d->err, sizeof d->err, "%s", err);
}

static const struct peer_dispatch dispatch_table[] = {
	{ PROTO_MSG_EXEC_INPUT, PEER_DISPATCH_UNPACK, dispatch_handler },
	{ PROTO_MSG_ROOM_GET, 0, dispatch_handler },
	{ 0, 0, NULL }
};

static int
dispatch_one(uint16_t type, int good, struct dispatched *d)
{
	struct proto_header	 hdr;
	struct proto_exec_input	 in;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	int			 rc;

	memset(d, 0, sizeof *d);
	memset(&hdr, 0, sizeof hdr);
	hdr.type = type;
	hdr.id = 7;
	mpbuf_init(&b);
	if (good) {
		memset(&in, 0, sizeof in);
		in.execution_id = proto_str_make("run-1");
		in.value = proto_str_make("yes");
		proto_exec_input_pack(&b.pk, &in);
	} else {
		msgpack_pack_map(&b.pk, 1);
		proto_pack_int(&b.pk, "value", 3);
	}
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	rc = peer_dispatch(dispatch_table, dispatch_refuse, NULL, &hdr,
	    &u.data, d);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
	return (rc);
}

Test(peer, dispatch_table)
{
	struct dispatched	d;

	/* Typed: the handler gets the body its codec read. */
	cr_assert_eq(dispatch_one(PROTO_MSG_EXEC_INPUT, 1, &d), 0);
	cr_assert_eq(d.handled, 1);
	cr_assert_eq(d.refused, 0);
	cr_assert(d.typed);
	cr_assert_str_eq(d.value, "yes");

	/* A body the codec refuses goes to refuse, with its reason, once. */
	cr_assert_eq(dispatch_one(PROTO_MSG_EXEC_INPUT, 0, &d), 0);
	cr_assert_eq(d.handled, 0);
	cr_assert_eq(d.refused, 1);
	cr_assert_not_null(strstr(d.err, "EXEC_INPUT"), "%s", d.err);

	/* Untyped rows get the body as it is. */
	cr_assert_eq(dispatch_one(PROTO_MSG_ROOM_GET, 0, &d), 0);
	cr_assert_eq(d.handled, 1);
	cr_assert(!d.typed);
	cr_assert_eq(d.type, PROTO_MSG_ROOM_GET);

	/* No row: the caller decides. */
	cr_assert_eq(dispatch_one(PROTO_MSG_ROOM_EDIT, 1, &d), -1);
	cr_assert_eq(d.handled + d.refused, 0);
	cr_assert_null(peer_dispatch_find(dispatch_table, PROTO_MSG_PING));
	cr_assert_not_null(peer_dispatch_find(dispatch_table,
	    PROTO_MSG_ROOM_GET));
}

/*
 * mpjson_plain: a value it calls plain packs, copied, to the bytes it
 * packs through json-c; each thing json-c would change is not plain.
 */
static void
plain_case(const char *bytes, size_t len, int want)
{
	msgpack_unpacked	 u;
	msgpack_sbuffer		 a, b;
	msgpack_packer		 pa, pb;
	struct json_object	*j;
	size_t			 off = 0;

	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, bytes, len, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(mpjson_plain(&u.data, 1), want, "case %02x%02x...",
	    (unsigned char)bytes[0], len > 1 ? (unsigned char)bytes[1] : 0);
	msgpack_sbuffer_init(&a);
	msgpack_sbuffer_init(&b);
	msgpack_packer_init(&pa, &a, msgpack_sbuffer_write);
	msgpack_packer_init(&pb, &b, msgpack_sbuffer_write);
	msgpack_pack_object(&pa, u.data);
	j = mpjson_unpack(&u.data);
	mpjson_pack_depth(&pb, j, 1);
	json_object_put(j);
	cr_assert_eq(a.size == b.size && memcmp(a.data, b.data, a.size) == 0,
	    want, "plain %d but json-c %s the bytes", want,
	    want ? "changed" : "kept");
	msgpack_sbuffer_destroy(&a);
	msgpack_sbuffer_destroy(&b);
	msgpack_unpacked_destroy(&u);
}

#define PLAIN(s, want)	plain_case((s), sizeof (s) - 1, (want))

Test(mpjson, plain_is_what_json_c_keeps)
{
	char	deep[64];
	size_t	i;

	PLAIN("\x83\xa1" "a" "\x01\xa1" "b" "\x92\xc0\xc3\xa1" "c"
	    "\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00", 1);
	PLAIN("\x81\xa4" "text" "\xa3\xc3\xa9" "x", 1);	/* é */
	PLAIN("\x81\xa4" "text" "\xa2\xff" "x", 0);	/* not UTF-8 */
	PLAIN("\x82\xa1" "a" "\x01\xa1" "a" "\x02", 0);	/* a key twice */
	PLAIN("\x81\x01\x02", 0);			/* an integer key */
	PLAIN("\x81\xa3" "a\0b" "\x01", 0);		/* a key with NUL */
	PLAIN("\x81\xa1" "a" "\xc4\x01" "z", 0);	/* a binary */
	PLAIN("\x81\xa1" "a" "\xca\x3f\xc0\x00\x00", 0); /* a float32 */
	PLAIN("\x81\xa1" "a" "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00", 0);
	PLAIN("\x81\xa1" "a" "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 1);
	PLAIN("\x81\xa1" "a" "\xd3\x80\x00\x00\x00\x00\x00\x00\x00", 1);
	/* 23 arrays in (24 levels in a list) stay inline; 24 do not. */
	for (i = 0; i < 23; i++)
		deep[i] = '\x91';
	deep[23] = '\x01';
	plain_case(deep, 24, 1);
	deep[23] = '\x91';
	deep[24] = '\x01';
	plain_case(deep, 25, 0);
}
