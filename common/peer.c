/* SPDX-License-Identifier: ISC */
/*
 * peer.c: one framed connection on a libevent base.  Reads whole frames,
 * checks each header against its cap before the body is buffered, and
 * hands the decoded body to the owner's dispatch callback.  A bad frame
 * kills only this peer.
 *
 * The handshake is enforced here, for every process alike: until a
 * HELLO_OK crosses the connection (the side that accepts sends it, the
 * side that connects receives it) only handshake frames of at most
 * PROTO_HELLO_MAX bytes are taken, reads are no larger than one such
 * frame, and the peer is closed if the handshake is not done within
 * PEER_HELLO_TIMEOUT seconds, or PEER_HELLO_OK_TIMEOUT from our HELLO.
 */

#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "common.h"

struct peer {
	struct event_base	*base;
	struct bufferevent	*bev;
	int			 fd;
	char			*name;
	peer_dispatch_cb	 cb;
	void			*arg;
	uint32_t		 next_id;
	int			 dying;		/* killed: reading stopped */
	int			 gone;		/* lost callback scheduled */
	int			 in_read;
	int			 paused;	/* owner stopped reading */
	int			 held;		/* owner holds dispatch */
	int			 held_full;	/* reading stopped while held */
	peer_drain_cb		 drain_cb;	/* output drained low */
	struct event		*kill_timer;	/* bounds a killed peer's drain */
	int			 hello_done;	/* HELLO_OK sent or received */
	int			 hello_sent;	/* we said HELLO: await OK */
	struct event		*hello_timer;
	char			*label;		/* name and pid, for logs */
	size_t			 keep_min;	/* frames decoded from copies */
	msgpack_unpacked	*frame;		/* dispatched, from a copy */
};

/* Largest read once the handshake is done. */
#define PEER_READ_MAX	(1024 * 1024)
/* Input kept while dispatch is held before reading stops too. */
#define PEER_HELD_MAX	(4 * PEER_READ_MAX)
/* The rest of a frame this large is read straight into place. */
#define PEER_READ_BIG	(64 * 1024)

static void	peer_lost(struct peer *);
static void	peer_lost_cb(evutil_socket_t, short, void *);
static void	peer_kill_timer_cb(evutil_socket_t, short, void *);
static void	peer_hello_done(struct peer *);
static void	peer_hello_timer_cb(evutil_socket_t, short, void *);
static void	peer_read_rest(struct peer *, struct evbuffer *, size_t);
static void	peer_read_cb(struct bufferevent *, void *);
static void	peer_write_cb(struct bufferevent *, void *);
static void	peer_event_cb(struct bufferevent *, short, void *);
static int	peer_send_now(struct peer *, struct evbuffer *,
		    const uint8_t *, const void *, size_t, const void *,
		    size_t);

static void
peer_lost_cb(evutil_socket_t fd, short events, void *arg)
{
	struct peer	*peer = arg;

	peer->cb(peer, NULL, NULL, peer->arg);
	if (peer->kill_timer != NULL)
		event_free(peer->kill_timer);
	if (peer->hello_timer != NULL)
		event_free(peer->hello_timer);
	bufferevent_free(peer->bev);
	free(peer->name);
	free(peer->label);
	free(peer);
}

/* Tell the owner the peer is gone, then free it, from a fresh callback so
 * no caller up the stack still holds it. */
static void
peer_lost(struct peer *peer)
{
	if (peer->gone)
		return;
	peer->gone = 1;
	peer->dying = 1;
	bufferevent_disable(peer->bev, EV_READ | EV_WRITE);
	event_base_once(peer->base, -1, EV_TIMEOUT, peer_lost_cb, peer, NULL);
}

static void
peer_kill_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	peer_lost(arg);
}

/* The handshake is done: full reads and per-type caps from now on. */
static void
peer_hello_done(struct peer *peer)
{
	if (peer->hello_done)
		return;
	peer->hello_done = 1;
	if (peer->hello_timer != NULL) {
		event_free(peer->hello_timer);
		peer->hello_timer = NULL;
	}
	bufferevent_set_max_single_read(peer->bev, PEER_READ_MAX);
	/* What the socket did not take at once goes in 16 KiB otherwise. */
	bufferevent_set_max_single_write(peer->bev, PEER_READ_MAX);
}

static void
peer_hello_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct peer	*peer = arg;

	if (peer->dying)
		return;
	log_warnx("peer %s: no %s within %d s; closing", peer->label,
	    peer->hello_sent ? "HELLO_OK" : "HELLO", peer->hello_sent ?
	    PEER_HELLO_OK_TIMEOUT : PEER_HELLO_TIMEOUT);
	peer_kill(peer, NULL);
}

/*
 * The rest of a big frame (need bytes, its header checked against its
 * cap) from the socket into in, as much as is there and at most
 * PEER_HELD_MAX a call, so other events get their turn: libevent 2.1
 * reads 4 KiB a time, a syscall and a callback each, 2,560 for the 10 MB
 * of a large image.  EOF and errors are left for the bufferevent to find.
 */
static void
peer_read_rest(struct peer *peer, struct evbuffer *in, size_t need)
{
	struct evbuffer_iovec	 v;
	struct iovec		 iov;
	struct msghdr		 msg;
	ssize_t			 r;

	if (need > PEER_HELD_MAX)
		need = PEER_HELD_MAX;
	/* A bufferevent keeps its input's end frozen but while it reads. */
	evbuffer_unfreeze(in, 0);
	while (need > 0) {
		if (evbuffer_reserve_space(in, (ev_ssize_t)need, &v, 1) != 1)
			break;
		iov.iov_base = v.iov_base;
		iov.iov_len = need < v.iov_len ? need : v.iov_len;
		memset(&msg, 0, sizeof msg);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		r = recvmsg(peer->fd, &msg, MSG_DONTWAIT);
		if (r <= 0) {
			evbuffer_commit_space(in, &v, 0);
			break;
		}
		v.iov_len = (size_t)r;
		evbuffer_commit_space(in, &v, 1);
		need -= (size_t)r;
	}
	evbuffer_freeze(in, 0);
}

static void
peer_read_cb(struct bufferevent *bev, void *arg)
{
	struct peer		*peer = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	uint8_t			 h[PROTO_HEADER_SIZE], *data, *own;
	char			 err[256];
	size_t			 used;
	int			 r;

	while (!peer->dying && !peer->paused) {
		if (peer->held) {
			if (evbuffer_get_length(in) > PEER_HELD_MAX &&
			    !peer->held_full) {
				peer->held_full = 1;
				bufferevent_disable(bev, EV_READ);
			}
			break;
		}
		if (evbuffer_get_length(in) < PROTO_HEADER_SIZE)
			break;
		evbuffer_copyout(in, h, sizeof h);
		proto_header_unpack(h, &hdr);
		if ((peer->hello_done ? proto_frame_check(&hdr, err,
		    sizeof err) : proto_frame_check_hello(&hdr, err,
		    sizeof err)) != 0) {
			peer_kill(peer, err);
			break;
		}
		if (evbuffer_get_length(in) < PROTO_HEADER_SIZE + hdr.length &&
		    peer->hello_done && hdr.length >= PEER_READ_BIG)
			peer_read_rest(peer, in, PROTO_HEADER_SIZE +
			    hdr.length - evbuffer_get_length(in));
		if (evbuffer_get_length(in) < PROTO_HEADER_SIZE + hdr.length)
			break;
		own = NULL;
		if (peer->keep_min > 0 && hdr.length >= peer->keep_min) {
			/* A copy the owner may keep (peer_take_frame). */
			own = xmalloc(PROTO_HEADER_SIZE + hdr.length);
			evbuffer_copyout(in, own, PROTO_HEADER_SIZE +
			    hdr.length);
			data = own;
		} else
			data = evbuffer_pullup(in, PROTO_HEADER_SIZE +
			    hdr.length);
		r = proto_frame_decode(data, PROTO_HEADER_SIZE + hdr.length,
		    &hdr, &u, &used, err, sizeof err);
		if (r != 1) {
			free(own);
			peer_kill(peer, r == 0 ? "short frame" : err);
			break;
		}
		if (own != NULL) {
			if (!msgpack_zone_push_finalizer(u.zone, free, own)) {
				msgpack_unpacked_destroy(&u);
				free(own);
				peer_kill(peer, "out of memory");
				break;
			}
			peer->frame = &u;
		}
		trace_hop("in", peer->name, proto_msg_name(hdr.type), hdr.id,
		    hdr.length);
		if (hdr.type == PROTO_MSG_HELLO_OK)
			peer_hello_done(peer);
		peer->in_read = 1;
		peer->cb(peer, &hdr, &u.data, peer->arg);
		peer->in_read = 0;
		peer->frame = NULL;
		msgpack_unpacked_destroy(&u);	/* unless taken */
		evbuffer_drain(in, used);
	}
}

static void
peer_write_cb(struct bufferevent *bev, void *arg)
{
	struct peer	*peer = arg;

	/* Output drained: a killed peer can now be closed. */
	if (peer->dying) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			peer_lost(peer);
		return;
	}
	if (peer->drain_cb != NULL)
		peer->drain_cb(peer, peer->arg);
}

static void
peer_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct peer	*peer = arg;

	if (what & BEV_EVENT_ERROR)
		log_debug("peer %s: %s", peer->label, strerror(errno));
	else if (what & BEV_EVENT_EOF)
		log_debug("peer %s: closed", peer->label);
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		peer_lost(peer);
}

/* Wrap a connected stream fd; the peer owns it from now on. */
struct peer *
peer_create(struct event_base *base, int fd, const char *name,
    peer_dispatch_cb cb, void *arg)
{
	struct peer	*peer;
	struct ucred	 cred;
	socklen_t	 len = sizeof cred;
	struct timeval	 tv = { PEER_HELLO_TIMEOUT, 0 };

	util_set_nonblock(fd);
	util_set_cloexec(fd);
	peer = xcalloc(1, sizeof *peer);
	peer->base = base;
	peer->fd = fd;
	peer->name = xstrdup(name);
	/* A socketpair's credentials are its creator's: ours, no news. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    cred.pid > 0 && cred.pid != getpid())
		xasprintf(&peer->label, "%s (pid %ld)", name, (long)cred.pid);
	else
		peer->label = xstrdup(name);
	peer->cb = cb;
	peer->arg = arg;
	peer->next_id = 1;
	peer->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (peer->bev == NULL)
		fatalx("bufferevent_socket_new failed");
	/* One handshake frame at most until the handshake is done. */
	bufferevent_set_max_single_read(peer->bev, PROTO_HEADER_SIZE +
	    PROTO_HELLO_MAX);
	bufferevent_setcb(peer->bev, peer_read_cb, peer_write_cb,
	    peer_event_cb, peer);
	bufferevent_enable(peer->bev, EV_READ | EV_WRITE);
	peer->hello_timer = evtimer_new(base, peer_hello_timer_cb, peer);
	evtimer_add(peer->hello_timer, &tv);
	return (peer);
}

void
peer_set_arg(struct peer *peer, void *arg)
{
	peer->arg = arg;
}

const char *
peer_name(struct peer *peer)
{
	return (peer->name);
}

int
peer_fd(struct peer *peer)
{
	return (peer->fd);
}

/* A fresh request id; never 0, which marks events. */
uint32_t
peer_next_id(struct peer *peer)
{
	if (peer->next_id == 0)
		peer->next_id = 1;
	return (peer->next_id++);
}

/*
 * Write a frame straight to the socket when nothing is queued before it:
 * a frame given to the bufferevent arms EV_WRITE and disarms it once
 * written, two epoll_ctl calls per frame.  What the socket does not take
 * is queued (from where it stopped) and the bufferevent sends the rest.
 * 0 when the frame is sent or queued, -1 to queue it whole.
 */
static int
peer_send_now(struct peer *peer, struct evbuffer *out, const uint8_t *h,
    const void *head, size_t hlen, const void *data, size_t dlen)
{
	struct iovec	iov[3];
	size_t		len[3], i, n = 0;
	ssize_t		w;

	if (evbuffer_get_length(out) != 0 || !peer->hello_done)
		return (-1);
	iov[n].iov_base = (void *)h;
	iov[n++].iov_len = PROTO_HEADER_SIZE;
	iov[n].iov_base = (void *)head;
	iov[n++].iov_len = hlen;
	if (dlen > 0) {
		iov[n].iov_base = (void *)data;
		iov[n++].iov_len = dlen;
	}
	w = writev(peer->fd, iov, (int)n);
	if (w < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return (-1);	/* the bufferevent finds the error */
		w = 0;
	}
	for (i = 0; i < n; i++) {
		len[i] = iov[i].iov_len;
		if ((size_t)w >= len[i]) {
			w -= (ssize_t)len[i];
			continue;
		}
		evbuffer_add(out, (const char *)iov[i].iov_base + w,
		    len[i] - (size_t)w);
		w = 0;
	}
	return (0);
}

/* Queue one frame.  Fails when the peer is dying or it is over its cap. */
int
peer_send_raw(struct peer *peer, uint16_t type, uint32_t id,
    const void *body, size_t len)
{
	return (peer_send_parts(peer, type, id, body, len, NULL, 0));
}

/*
 * Queue one frame whose body is head then data, so a large value need
 * not be copied into one buffer first.
 */
int
peer_send_parts(struct peer *peer, uint16_t type, uint32_t id,
    const void *head, size_t hlen, const void *data, size_t dlen)
{
	uint8_t			 h[PROTO_HEADER_SIZE];
	struct evbuffer		*out;
	struct timeval		 ok_tv = { PEER_HELLO_OK_TIMEOUT, 0 };
	size_t			 len = hlen + dlen;

	if (peer->dying)
		return (-1);
	if (len > proto_msg_cap(type)) {
		log_warnx("peer %s: not sending %s of %zu bytes (cap %u)",
		    peer->label, proto_msg_name(type), len,
		    proto_msg_cap(type));
		return (-1);
	}
	proto_header_make(h, type, id, (uint32_t)len);
	out = bufferevent_get_output(peer->bev);
	/* Before the write: the peer it wakes may run before we go on. */
	trace_hop("out", peer->name, proto_msg_name(type), id, len);
	if (peer_send_now(peer, out, h, head, hlen, data, dlen) != 0) {
		evbuffer_add(out, h, sizeof h);
		evbuffer_add(out, head, hlen);
		if (dlen > 0)
			evbuffer_add(out, data, dlen);
	}
	if (type == PROTO_MSG_HELLO && !peer->hello_sent) {
		peer->hello_sent = 1;
		if (peer->hello_timer != NULL)
			evtimer_add(peer->hello_timer, &ok_tv);	/* anew */
	} else if (type == PROTO_MSG_HELLO_OK)
		peer_hello_done(peer);
	return (0);
}

int
peer_send(struct peer *peer, uint16_t type, uint32_t id,
    const msgpack_sbuffer *sb)
{
	return (peer_send_raw(peer, type, id, sb->data, sb->size));
}

/* ERROR {code, message} in reply to request id. */
int
peer_send_error(struct peer *peer, uint32_t id, const char *code,
    const char *fmt, ...)
{
	struct mpbuf	b;
	va_list		ap;
	int		r;

	va_start(ap, fmt);
	mpbuf_error(&b, code, fmt, ap);
	va_end(ap);
	r = peer_send(peer, PROTO_MSG_ERROR, id, &b.sb);
	mpbuf_free(&b);
	return (r);
}

int
peer_send_ok(struct peer *peer, uint32_t id)
{
	struct mpbuf	b;
	int		r;

	mpbuf_init(&b);
	proto_empty_pack(&b.pk);
	r = peer_send(peer, PROTO_MSG_OK, id, &b.sb);
	mpbuf_free(&b);
	return (r);
}

/*
 * Stop reading from a peer, let what we queued for it drain, then close
 * it; the owner hears of it through the lost callback.
 */
void
peer_kill(struct peer *peer, const char *why)
{
	struct timeval	tv = { 5, 0 };

	if (peer->dying)
		return;
	if (why != NULL)
		log_warnx("peer %s: closing: %s", peer->label, why);
	peer->dying = 1;
	bufferevent_disable(peer->bev, EV_READ);
	bufferevent_setwatermark(peer->bev, EV_WRITE, 0, 0);
	if (evbuffer_get_length(bufferevent_get_output(peer->bev)) == 0) {
		peer_lost(peer);
		return;
	}
	/* A peer that never reads must not keep us waiting for ever. */
	peer->kill_timer = evtimer_new(peer->base, peer_kill_timer_cb, peer);
	evtimer_add(peer->kill_timer, &tv);
}

/*
 * Stop (0) or resume (1) reading frames, for backpressure: a peer that
 * does not read what we send must not make us queue without bound.
 * Frames already buffered wait, and are dispatched on resuming.
 */
void
peer_set_reading(struct peer *peer, int on)
{
	if (peer->dying || peer->paused == !on)
		return;
	peer->paused = !on;
	if (!on) {
		bufferevent_disable(peer->bev, EV_READ);
		return;
	}
	bufferevent_enable(peer->bev, EV_READ);
	bufferevent_trigger(peer->bev, EV_READ,
	    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * Hold (1) or release (0) the dispatch of frames, for the owner's
 * ordering (the daemon, while a connection's edit is not yet durable).
 * Unlike peer_set_reading it leaves the socket's read interest alone,
 * so a short hold costs no epoll_ctl; input past PEER_HELD_MAX stops
 * reading until the release.
 */
void
peer_hold(struct peer *peer, int on)
{
	if (peer->dying || peer->held == on)
		return;
	peer->held = on;
	if (on)
		return;
	if (peer->held_full) {
		peer->held_full = 0;
		if (!peer->paused)
			bufferevent_enable(peer->bev, EV_READ);
	}
	if (!peer->paused)
		bufferevent_trigger(peer->bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* Call cb whenever the output queue drains to low bytes or below. */
void
peer_set_drain_cb(struct peer *peer, size_t low, peer_drain_cb cb)
{
	peer->drain_cb = cb;
	bufferevent_setwatermark(peer->bev, EV_WRITE, cb != NULL ? low : 0,
	    0);
}

size_t
peer_pending_output(struct peer *peer)
{
	return (evbuffer_get_length(bufferevent_get_output(peer->bev)));
}

void
mpbuf_init(struct mpbuf *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

/* b (initialized here) holds ERROR {code, message}, the message from fmt. */
void
mpbuf_error(struct mpbuf *b, const char *code, const char *fmt, va_list ap)
{
	struct proto_error	 e;
	char			*msg;

	xvasprintf(&msg, fmt, ap);
	memset(&e, 0, sizeof e);
	e.code = proto_str_make(code);
	e.message = proto_str_make(msg);
	mpbuf_init(b);
	proto_error_pack(&b->pk, &e);
	free(msg);
}

void
mpbuf_free(struct mpbuf *b)
{
	msgpack_sbuffer_destroy(&b->sb);
}

/*
 * Frames of at least min body bytes (0: none) are decoded from a copy of
 * their own, which the dispatch callback may keep (peer_take_frame): an
 * owner that holds on to a big body need not copy its objects again.
 */
void
peer_keep_frames(struct peer *peer, size_t min)
{
	peer->keep_min = min;
}

/*
 * In the dispatch callback: the zone holding the body it was given (its
 * objects stay valid until msgpack_zone_free), or NULL when the frame
 * was not decoded from a copy (peer_keep_frames) or is taken already.
 */
msgpack_zone *
peer_take_frame(struct peer *peer)
{
	msgpack_zone	*z;

	if (peer->frame == NULL)
		return (NULL);
	z = msgpack_unpacked_release_zone(peer->frame);
	peer->frame = NULL;
	return (z);
}
