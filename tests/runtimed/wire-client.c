/* SPDX-License-Identifier: ISC */
/*
 * wire-client.c: hostile and crowded clients of a running runtimed, for
 * tests/runtimed/wire.sh.
 *
 *	wire-client idle SOCK		connect, send nothing; print the ms
 *					until the daemon closes us
 *	wire-client prehello SOCK TYPE	send a header declaring 64 MiB of
 *					TYPE before HELLO, then up to 8 MiB
 *					of body; print bytes taken and ms
 *	wire-client crowd SOCK N HOLD	N clients at once, each HELLO then
 *					DAEMON_STATUS, each held HOLD ms
 *					after its answer; print how many
 *					were answered
 */

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tests/lib/testclient.h"

/* Give up on anything after this long. */
#define WIRE_DEADLINE_MS	60000

struct wire_conn;
static int64_t	wire_wait_closed(int, int64_t, int64_t);
static int	wire_idle(const char *);
static int	wire_prehello(const char *, const char *);
static void	wire_crowd_send(int);
static int	wire_crowd_read(struct wire_conn *);
static int	wire_crowd(const char *, int, int);

/* Wait for EOF or reset on fd; ms waited, or -1 at the deadline. */
static int64_t
wire_wait_closed(int fd, int64_t start, int64_t limit)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	char		buf[4096];
	ssize_t		n;

	for (;;) {
		if (util_mono_ms() - start > limit)
			return (-1);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(fd, buf, sizeof buf);
		if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
			return (util_mono_ms() - start);
	}
}

static int
wire_idle(const char *sock)
{
	int64_t	start = util_mono_ms(), ms;
	int	fd;

	if ((fd = sockdir_connect(sock)) == -1)
		testclient_fail("connect %s: %s", sock, strerror(errno));
	if ((ms = wire_wait_closed(fd, start, WIRE_DEADLINE_MS)) < 0)
		testclient_fail("still open after %d ms", WIRE_DEADLINE_MS);
	printf("closed after %lld ms\n", (long long)ms);
	return (0);
}

static int
wire_prehello(const char *sock, const char *type)
{
	struct proto_header	 hdr = { 64U * 1024 * 1024, 0, PROTO_VERSION,
	    0, 1 };
	uint8_t			 h[PROTO_HEADER_SIZE];
	static char		 chunk[64 * 1024];
	struct pollfd		 pfd;
	size_t			 sent = 0;
	int64_t			 start = util_mono_ms(), ms;
	ssize_t			 n;
	int			 fd;

	hdr.type = (uint16_t)atoi(type);
	if ((fd = sockdir_connect(sock)) == -1)
		testclient_fail("connect %s: %s", sock, strerror(errno));
	util_set_nonblock(fd);
	proto_header_pack(&hdr, h);
	if (write(fd, h, sizeof h) != (ssize_t)sizeof h)
		testclient_fail("header: %s", strerror(errno));
	memset(chunk, 0xa5, sizeof chunk);
	/* Push the body until the daemon stops taking it for 2 s. */
	while (sent < 8U * 1024 * 1024) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 2000) <= 0)
			break;
		n = write(fd, chunk, sizeof chunk);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		sent += (size_t)n;
	}
	/* Refused at once: well before the 5 s handshake timeout. */
	if ((ms = wire_wait_closed(fd, start, 4000)) < 0)
		testclient_fail("still open after 4000 ms (%zu bytes taken)",
		    sent);
	printf("took %zu bytes, closed after %lld ms\n", sent, (long long)ms);
	return (0);
}

struct wire_conn {
	int		 fd;
	int		 state;		/* 0 waiting, 1 answered, 2 closed */
	int64_t		 answered;
	uint8_t		*buf;
	size_t		 len;
};

/* One HELLO + DAEMON_STATUS, written whole into the socket buffer. */
static void
wire_crowd_send(int fd)
{
	struct proto_hello	hello;
	struct mpbuf		b;

	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_CTL);
	snprintf(hello.label, sizeof hello.label, "wire-client");
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	if (frameio_write(fd, PROTO_MSG_HELLO, 1, b.sb.data, b.sb.size) != 0 ||
	    frameio_write(fd, PROTO_MSG_DAEMON_STATUS, 2, "\x80", 1) != 0)
		testclient_fail("send: %s", strerror(errno));
	mpbuf_free(&b);
}

/* Read what came; 1 once the DAEMON_STATUS_REPLY is in. */
static int
wire_crowd_read(struct wire_conn *c)
{
	struct proto_header	hdr;
	msgpack_unpacked	u;
	char			err[256];
	size_t			used;
	ssize_t			n;
	int			r;

	c->buf = xreallocarray(c->buf, 1, c->len + 65536);
	n = read(c->fd, c->buf + c->len, 65536);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
		return (-1);
	if (n > 0)
		c->len += (size_t)n;
	for (;;) {
		r = proto_frame_decode(c->buf, c->len, &hdr, &u, &used, err,
		    sizeof err);
		if (r == -1)
			testclient_fail("bad frame: %s", err);
		if (r == 0)
			return (0);
		msgpack_unpacked_destroy(&u);
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		if (hdr.type == PROTO_MSG_DAEMON_STATUS_REPLY)
			return (1);
	}
}

static int
wire_crowd(const char *sock, int n, int hold)
{
	struct wire_conn	*cs;
	struct pollfd		*pfds;
	int64_t			 start = util_mono_ms(), now, worst = 0;
	int			 i, left, answered = 0, lost = 0, r;

	cs = xcalloc((size_t)n, sizeof *cs);
	pfds = xcalloc((size_t)n, sizeof *pfds);
	/* Connects succeed into the listen backlog even when the daemon
	 * cannot accept yet; they must be answered once it can. */
	for (i = 0; i < n; i++) {
		if ((cs[i].fd = sockdir_connect(sock)) == -1)
			testclient_fail("connect %d: %s", i, strerror(errno));
		wire_crowd_send(cs[i].fd);
		util_set_nonblock(cs[i].fd);
	}
	for (left = n; left > 0;) {
		now = util_mono_ms();
		if (now - start > WIRE_DEADLINE_MS)
			break;
		for (i = 0; i < n; i++) {
			pfds[i].fd = cs[i].state == 0 ? cs[i].fd : -1;
			pfds[i].events = POLLIN;
			if (cs[i].state == 1 && now - cs[i].answered >= hold) {
				close(cs[i].fd);
				cs[i].state = 2;
				left--;
			}
		}
		if (poll(pfds, (nfds_t)n, 50) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (cs[i].state != 0 || pfds[i].revents == 0)
				continue;
			if ((r = wire_crowd_read(&cs[i])) == 0)
				continue;
			if (r == -1) {
				lost++;
				close(cs[i].fd);
				cs[i].state = 2;
				left--;
				continue;
			}
			cs[i].state = 1;
			cs[i].answered = util_mono_ms();
			if (cs[i].answered - start > worst)
				worst = cs[i].answered - start;
			answered++;
		}
	}
	printf("answered %d of %d, closed unanswered %d, slowest %lld ms\n",
	    answered, n, lost, (long long)worst);
	for (i = 0; i < n; i++) {
		if (cs[i].state != 2)
			close(cs[i].fd);
		free(cs[i].buf);
	}
	free(cs);
	free(pfds);
	return (answered == n ? 0 : 1);
}

int
main(int argc, char **argv)
{
	testclient_init("wire-client", WIRE_DEADLINE_MS);
	if (argc == 3 && strcmp(argv[1], "idle") == 0)
		return (wire_idle(argv[2]));
	if (argc == 4 && strcmp(argv[1], "prehello") == 0)
		return (wire_prehello(argv[2], argv[3]));
	if (argc == 5 && strcmp(argv[1], "crowd") == 0)
		return (wire_crowd(argv[2], atoi(argv[3]), atoi(argv[4])));
	fprintf(stderr, "usage: wire-client idle SOCK | prehello SOCK TYPE | "
	    "crowd SOCK N HOLD_MS\n");
	return (2);
}
