/* SPDX-License-Identifier: ISC */
/*
 * frameio.c: blocking frame I/O for short-lived clients (runtimed status,
 * stop) and tests.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static int	frameio_write_all(int, const void *, size_t);
static int	frameio_read_all(int, void *, size_t, int64_t, char **);

static int
frameio_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd	pfd = { fd, POLLOUT, 0 };

				poll(&pfd, 1, -1);
				continue;
			}
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Write one frame. */
int
frameio_write(int fd, uint16_t type, uint32_t id, const void *body,
    size_t len)
{
	uint8_t	h[PROTO_HEADER_SIZE];

	proto_header_make(h, type, id, (uint32_t)len);
	if (frameio_write_all(fd, h, sizeof h) != 0)
		return (-1);
	return (frameio_write_all(fd, body, len));
}

/* Read exactly len bytes within the deadline (-1: none). */
static int
frameio_read_all(int fd, void *buf, size_t len, int64_t deadline,
    char **cause)
{
	char		*p = buf;
	struct pollfd	 pfd;
	int		 wait;
	ssize_t		 n;

	while (len > 0) {
		if (deadline >= 0) {
			wait = (int)(deadline - util_mono_ms());
			if (wait < 0)
				wait = 0;
			pfd.fd = fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, wait) == 0) {
				xasprintf(cause, "timed out waiting for a "
				    "reply");
				return (-1);
			}
		}
		n = read(fd, p, len);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			xasprintf(cause, "read: %s", strerror(errno));
			return (-1);
		}
		if (n == 0) {
			xasprintf(cause, "connection closed");
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/*
 * Read one frame, waiting at most timeout ms (-1: forever).  On success the
 * caller destroys *out.
 */
int
frameio_read(int fd, int timeout, struct proto_header *hdr,
    msgpack_unpacked *out, char **cause)
{
	uint8_t	 h[PROTO_HEADER_SIZE], *buf;
	char	 err[256];
	size_t	 used;
	int64_t	 deadline = timeout < 0 ? -1 : util_mono_ms() + timeout;
	int	 r;

	if (frameio_read_all(fd, h, sizeof h, deadline, cause) != 0)
		return (-1);
	proto_header_unpack(h, hdr);
	if (proto_frame_check(hdr, err, sizeof err) != 0) {
		xasprintf(cause, "%s", err);
		return (-1);
	}
	buf = xmalloc(sizeof h + hdr->length);
	memcpy(buf, h, sizeof h);
	if (frameio_read_all(fd, buf + sizeof h, hdr->length, deadline,
	    cause) != 0) {
		free(buf);
		return (-1);
	}
	r = proto_frame_decode(buf, sizeof h + hdr->length, hdr, out, &used,
	    err, sizeof err);
	if (r != 1) {
		/* A whole frame is here, so 0 cannot happen; be safe. */
		xasprintf(cause, "%s", r == 0 ? "short frame" : err);
		free(buf);
		return (-1);
	}
	/* The objects point into buf: free it with the zone. */
	msgpack_zone_push_finalizer(out->zone, free, buf);
	return (0);
}

/*
 * Client side of the handshake on a connected fd: send HELLO, read
 * HELLO_OK into inc.  A version mismatch is reported with both versions.
 */
int
frameio_hello(int fd, const char *kind, const char *label,
    struct proto_incarnation *inc, char **cause)
{
	struct proto_hello	 hello;
	struct proto_header	 hdr;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	char			 err[256];
	const char		*msg;
	size_t			 len;
	int64_t			 v = 0;

	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", kind);
	snprintf(hello.label, sizeof hello.label, "%s", label);
	hello.pid = getpid();

	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	if (frameio_write(fd, PROTO_MSG_HELLO, 1, b.sb.data, b.sb.size) != 0) {
		mpbuf_free(&b);
		xasprintf(cause, "cannot send HELLO: %s", strerror(errno));
		return (-1);
	}
	mpbuf_free(&b);

	if (frameio_read(fd, 10000, &hdr, &u, cause) != 0)
		return (-1);
	if (hdr.type == PROTO_MSG_VERSION_MISMATCH) {
		proto_get_int(&u.data, "version", &v);
		msg = proto_get_str(&u.data, "message", &len);
		xasprintf(cause, "protocol version mismatch: ours %d, "
		    "theirs %lld%s%.*s", PROTO_VERSION, (long long)v,
		    msg != NULL ? ": " : "", msg != NULL ? (int)len : 0,
		    msg != NULL ? msg : "");
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	if (hdr.type != PROTO_MSG_HELLO_OK) {
		xasprintf(cause, "expected HELLO_OK, got %s",
		    proto_msg_name(hdr.type));
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	if (proto_hello_ok_unpack(&u.data, inc, err, sizeof err) != 0) {
		xasprintf(cause, "%s", err);
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	msgpack_unpacked_destroy(&u);
	return (0);
}
