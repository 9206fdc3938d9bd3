/* SPDX-License-Identifier: ISC */
/*
 * testclient.c: the helpers the C test clients (rtd-client, rooms-client,
 * kern-client, wire-client) share: failing a test, connecting with
 * HELLO, one request and its reply with a timeout, typed errors, and the
 * room and exec requests every scenario makes, packed by proto/'s codecs.
 */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/testclient.h"

struct testclient_sources {
	const char	**sources;
	const size_t	 *lens;		/* NULL: NUL-terminated */
	size_t		  n;
};

struct testclient_ids {
	char	**ids;
	size_t	  n;
};

static const char	*testclient_name = "testclient";
static int		 testclient_timeout = 5000;
static uint32_t		 testclient_id = 1;

static void	testclient_pack_inserts(msgpack_packer *, const void *);
static void	testclient_pack_ids(msgpack_packer *, const void *);
static char	*testclient_joined(int, uint16_t, struct mpbuf *);

/* Name the client (in messages and its HELLO) and its request timeout. */
void
testclient_init(const char *name, int timeout)
{
	testclient_name = name;
	testclient_timeout = timeout;
	/*
	 * A daemon may close a bad peer after reading a frame's header,
	 * while the body is still being written: that write must fail
	 * with EPIPE, not kill the test client silently.
	 */
	signal(SIGPIPE, SIG_IGN);
}

/* Fail the test: print why on stderr and exit 1. */
__dead void
testclient_fail(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: FAIL: ", testclient_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Connect and say HELLO as a ctl peer; -1 if either fails.  *pid (if not
 * NULL) gets the daemon's pid.
 */
int
testclient_try_connect(const char *sock, int64_t *pid)
{
	struct proto_incarnation	 inc;
	char				*cause = NULL;
	int				 fd;

	if ((fd = sockdir_connect(sock)) == -1)
		return (-1);
	if (frameio_hello(fd, PROTO_PEER_CTL, testclient_name, &inc,
	    &cause) != 0) {
		free(cause);
		close(fd);
		return (-1);
	}
	if (pid != NULL)
		*pid = inc.pid;
	return (fd);
}

/* Connect and say HELLO, or fail; the daemon must say who it is. */
int
testclient_connect(const char *sock)
{
	struct proto_incarnation	 inc;
	char				*cause = NULL;
	int				 fd;

	if ((fd = sockdir_connect(sock)) == -1)
		testclient_fail("connect %s: %s", sock, strerror(errno));
	if (frameio_hello(fd, PROTO_PEER_CTL, testclient_name, &inc,
	    &cause) != 0)
		testclient_fail("hello: %s", cause);
	if (inc.pid <= 0 || inc.started_at <= 0 || *inc.version == '\0')
		testclient_fail("HELLO_OK without an incarnation");
	return (fd);
}

/* The id for a request written by hand. */
uint32_t
testclient_next_id(void)
{
	return (testclient_id++);
}

/* Start a body packed by its codec. */
struct mpbuf *
testclient_codec(struct mpbuf *b)
{
	mpbuf_init(b);
	return (b);
}

/* Start a body that is a map of n entries, packed by the caller. */
struct mpbuf *
testclient_body(struct mpbuf *b, size_t n)
{
	mpbuf_init(b);
	msgpack_pack_map(&b->pk, n);
	return (b);
}

/* Send b (freed) as a request of type; -1 if the write failed. */
int
testclient_send(int fd, uint16_t type, struct mpbuf *b, uint32_t *id)
{
	int	rc;

	*id = testclient_id++;
	rc = frameio_write(fd, type, *id, b->sb.data, b->sb.size);
	mpbuf_free(b);
	return (rc);
}

/*
 * Read frames until the reply to id, skipping events; -1 with *cause
 * (caller frees; cause may be NULL) on a timeout, EOF or bad frame.
 */
int
testclient_wait_reply(int fd, uint32_t id, int timeout,
    struct proto_header *hdr, msgpack_unpacked *u, char **cause)
{
	char	*why = NULL;

	for (;;) {
		if (frameio_read(fd, timeout, hdr, u, &why) != 0) {
			if (cause != NULL)
				*cause = why;
			else
				free(why);
			return (-1);
		}
		if (hdr->id == id)
			return (0);
		msgpack_unpacked_destroy(u);
	}
}

/* testclient_request_wait with the client's timeout. */
uint16_t
testclient_request(int fd, uint16_t type, struct mpbuf *b, uint16_t expect,
    msgpack_unpacked *u)
{
	return (testclient_request_wait(fd, type, b, expect,
	    testclient_timeout, u));
}

/*
 * Send a request (b is freed) and wait up to timeout ms for its reply in
 * u (caller destroys); fail unless it is of type expect (0: any).
 * Returns the reply's type.
 */
uint16_t
testclient_request_wait(int fd, uint16_t type, struct mpbuf *b,
    uint16_t expect, int timeout, msgpack_unpacked *u)
{
	struct proto_header	 hdr;
	struct proto_error	 e;
	uint32_t		 id;
	char			*cause = NULL, err[256];

	if (testclient_send(fd, type, b, &id) != 0)
		testclient_fail("write %s", proto_msg_name(type));
	if (testclient_wait_reply(fd, id, timeout, &hdr, u, &cause) != 0)
		testclient_fail("no reply to %s: %s", proto_msg_name(type),
		    cause);
	if (expect != 0 && hdr.type != expect) {
		if (hdr.type != PROTO_MSG_ERROR ||
		    proto_error_unpack(&u->data, &e, err, sizeof err) != 0)
			e.message = proto_str_make("");
		testclient_fail("%s: got %s (%.*s), wanted %s",
		    proto_msg_name(type), proto_msg_name(hdr.type),
		    (int)e.message.len, e.message.ptr, proto_msg_name(expect));
	}
	return (hdr.type);
}

/* Expect ERROR {code}; returns its message (caller frees). */
char *
testclient_expect_error(int fd, uint16_t type, struct mpbuf *b,
    const char *code)
{
	msgpack_unpacked	 u;
	struct proto_error	 e;
	char			*msg, err[256];

	testclient_request(fd, type, b, PROTO_MSG_ERROR, &u);
	if (proto_error_unpack(&u.data, &e, err, sizeof err) != 0)
		testclient_fail("%s: %s", proto_msg_name(type), err);
	msg = xstrndup(e.message.ptr != NULL ? e.message.ptr : "",
	    e.message.len);
	if (!proto_str_eq(&e.code, code))
		testclient_fail("%s: error code %.*s, wanted %s: %s",
		    proto_msg_name(type), (int)e.code.len, e.code.ptr, code,
		    msg);
	msgpack_unpacked_destroy(&u);
	printf("ok: %s -> ERROR %s (%s)\n", proto_msg_name(type), code, msg);
	return (msg);
}

/* String member key of o, or fail (caller frees). */
char *
testclient_str(const msgpack_object *o, const char *key)
{
	char	*s;

	if ((s = proto_dup_str(o, key)) == NULL)
		testclient_fail("reply without %s", key);
	return (s);
}

/* Send b and return the notebook_id of its ROOM_JOINED (caller frees). */
static char *
testclient_joined(int fd, uint16_t type, struct mpbuf *b)
{
	struct proto_room_joined	 m;
	msgpack_unpacked		 u;
	char				*id, err[256];

	testclient_request(fd, type, b, PROTO_MSG_ROOM_JOINED, &u);
	if (proto_room_joined_unpack(&u.data, &m, err, sizeof err) != 0)
		testclient_fail("%s: %s", proto_msg_name(type), err);
	if ((id = proto_str_dup(&m.notebook_id)) == NULL)
		testclient_fail("ROOM_JOINED without notebook_id");
	msgpack_unpacked_destroy(&u);
	return (id);
}

/* ROOM_CREATE (path, kernel: NULL for none); returns the notebook_id. */
char *
testclient_create(int fd, const char *path, const char *kernel)
{
	struct proto_room_create	 m;
	struct mpbuf			 b;

	memset(&m, 0, sizeof m);
	if (path != NULL)
		m.path = proto_str_make(path);
	if (kernel != NULL)
		m.kernel = proto_str_make(kernel);
	proto_room_create_pack(&testclient_codec(&b)->pk, &m);
	return (testclient_joined(fd, PROTO_MSG_ROOM_CREATE, &b));
}

/* ROOM_OPEN by path or else by notebook_id; returns the notebook_id. */
char *
testclient_open(int fd, const char *path, const char *id)
{
	struct proto_room_open	 m;
	struct mpbuf		 b;

	memset(&m, 0, sizeof m);
	if (path != NULL)
		m.path = proto_str_make(path);
	else
		m.notebook_id = proto_str_make(id);
	proto_room_open_pack(&testclient_codec(&b)->pk, &m);
	return (testclient_joined(fd, PROTO_MSG_ROOM_OPEN, &b));
}

/* The edit batch: one insert at the bottom per source. */
static void
testclient_pack_inserts(msgpack_packer *pk, const void *arg)
{
	const struct testclient_sources	*s = arg;
	size_t				 i;

	msgpack_pack_array(pk, s->n);
	for (i = 0; i < s->n; i++) {
		msgpack_pack_map(pk, 3);
		proto_pack_str(pk, "op", "insert");
		proto_pack_str(pk, "after", "BOTTOM");
		proto_pack_strn(pk, "source", s->sources[i], s->lens != NULL ?
		    s->lens[i] : strlen(s->sources[i]));
	}
}

/*
 * Insert n code cells at the bottom in one ROOM_EDIT; ids[] get their ids
 * (caller frees) and *seq (if not NULL) the room's new seq.  With lens,
 * sources are lens[i] bytes long and may hold NUL.
 */
void
testclient_insert(int fd, const char **sources, const size_t *lens,
    size_t n, char **ids, uint64_t *seq)
{
	struct proto_room_edit		 m;
	struct proto_room_edit_reply	 r;
	struct testclient_sources	 s = { sources, lens, n };
	struct mpbuf			 b;
	msgpack_unpacked		 u;
	const msgpack_object		*cells;
	char				 err[256];
	size_t				 i;

	memset(&m, 0, sizeof m);
	m.edits.pack = testclient_pack_inserts;
	m.edits.arg = &s;
	proto_room_edit_pack(&testclient_codec(&b)->pk, &m);
	testclient_request(fd, PROTO_MSG_ROOM_EDIT, &b,
	    PROTO_MSG_ROOM_EDIT_REPLY, &u);
	if (proto_room_edit_reply_unpack(&u.data, &r, err, sizeof err) != 0)
		testclient_fail("ROOM_EDIT_REPLY: %s", err);
	cells = r.cells.obj;
	if (cells->via.array.size != n)
		testclient_fail("ROOM_EDIT_REPLY without one cell per edit");
	for (i = 0; i < n; i++)
		ids[i] = testclient_str(&cells->via.array.ptr[i], "cell_id");
	if (seq != NULL)
		*seq = r.seq;
	msgpack_unpacked_destroy(&u);
}

/* One insert at the bottom; returns the cell's id (caller frees). */
char *
testclient_insert1(int fd, const char *source, uint64_t *seq)
{
	char	*id;

	testclient_insert(fd, &source, NULL, 1, &id, seq);
	return (id);
}

/* EXEC_RUN's cell_ids. */
static void
testclient_pack_ids(msgpack_packer *pk, const void *arg)
{
	const struct testclient_ids	*l = arg;
	size_t				 i;

	msgpack_pack_array(pk, l->n);
	for (i = 0; i < l->n; i++)
		proto_pack_cstr(pk, l->ids[i]);
}

/*
 * EXEC_RUN of cells ids without waiting (stop: stop_on_error, -1 to leave
 * it out); its EXEC_STATE in u (caller destroys).
 */
void
testclient_run(int fd, char **ids, size_t n, int stop, msgpack_unpacked *u)
{
	struct proto_exec_run	 m;
	struct testclient_ids	 l = { ids, n };
	struct mpbuf		 b;

	memset(&m, 0, sizeof m);
	m.cell_ids.pack = testclient_pack_ids;
	m.cell_ids.arg = &l;
	if (stop != -1) {
		m.has_stop_on_error = 1;
		m.stop_on_error = stop;
	}
	proto_exec_run_pack(&testclient_codec(&b)->pk, &m);
	testclient_request(fd, PROTO_MSG_EXEC_RUN, &b, PROTO_MSG_EXEC_STATE,
	    u);
}

/* testclient_run that returns the execution_id (caller frees). */
char *
testclient_submit(int fd, char **ids, size_t n, int stop)
{
	struct proto_exec_state	 st;
	msgpack_unpacked	 u;
	char			*eid, err[256];

	testclient_run(fd, ids, n, stop, &u);
	if (proto_exec_state_unpack(&u.data, &st, err, sizeof err) != 0)
		testclient_fail("EXEC_STATE: %s", err);
	if ((eid = proto_str_dup(&st.execution_id)) == NULL)
		testclient_fail("EXEC_STATE without execution_id");
	msgpack_unpacked_destroy(&u);
	return (eid);
}

/*
 * EXEC_GET of run eid, waiting up to wait_ms for it to end (-1: no
 * timeout_ms); its EXEC_STATE in u (caller destroys).
 */
void
testclient_exec_get(int fd, const char *eid, int64_t wait_ms,
    msgpack_unpacked *u)
{
	struct proto_exec_id	 m;
	struct mpbuf		 b;
	int			 timeout = testclient_timeout;

	memset(&m, 0, sizeof m);
	m.execution_id = proto_str_make(eid);
	if (wait_ms >= 0) {
		m.has_timeout_ms = 1;
		m.timeout_ms = wait_ms;
		timeout = (int)wait_ms + 10000;
	}
	proto_exec_id_pack(&testclient_codec(&b)->pk, &m);
	testclient_request_wait(fd, PROTO_MSG_EXEC_GET, &b,
	    PROTO_MSG_EXEC_STATE, timeout, u);
}
