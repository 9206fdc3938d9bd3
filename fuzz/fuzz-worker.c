/* SPDX-License-Identifier: ISC */
/*
 * fuzz-worker.c: the worker in a box (see fuzz-worker.h).  The worker
 * connects by path, as in production, to a socket the harness listens on
 * in a private 0700 directory; the daemon end there says HELLO_OK and
 * answers each request through the target's callback or with a canned
 * reply shaped like the real daemon's.  Nothing is spawned: the socket
 * always answers, so the worker never autostarts runtimed.
 *
 * The worker writes files where a tool is told to (export_notebook
 * path): the worker runs in the harness's private directory (the caller's
 * working directory is restored between inputs, for libFuzzer's relative
 * paths) and the harness drops any input
 * that could name a file elsewhere (an absolute path, "..", or an escape
 * that could spell either), and empties the directory after each input.
 */

#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz-worker.h"

#define FUZZ_WORKER_MAX_CONNS	64
#define FUZZ_WORKER_MAX_PASSES	256

static struct event_base	*fuzz_worker_base;
static fuzz_worker_answer_cb	 fuzz_worker_answer;
static char			 fuzz_worker_dir[] =
				     "/tmp/fuzz-worker-XXXXXX";
static char			*fuzz_worker_sock;
static struct peer		*fuzz_worker_conns[FUZZ_WORKER_MAX_CONNS];
static int			 fuzz_worker_trace;
static int			 fuzz_worker_home = -1; /* caller's cwd */

static void	fuzz_worker_sweep(void);
static void	fuzz_worker_sink(const char *, size_t, void *);
static void	fuzz_worker_reply_sb(int, uint16_t, uint32_t, struct mpbuf *);
static void	fuzz_worker_pack_cell(msgpack_packer *, const char *,
		    const char *, const char *);
static void	fuzz_worker_pack_joined(msgpack_packer *, int);
static void	fuzz_worker_dispatch(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static void	fuzz_worker_accept_cb(evutil_socket_t, short, void *);
static void	fuzz_worker_cleanup(void);
static void	fuzz_worker_cwd(int);
static int	fuzz_worker_escapes(const char *, size_t);
static int64_t			 fuzz_worker_id;

/* The worker's JSON-RPC output: shown with FUZZ_TRACE set. */
static void
fuzz_worker_sink(const char *json, size_t len, void *arg)
{
	if (fuzz_worker_trace)
		fprintf(stderr, "< %.*s\n", (int)len, json);
}

static const struct worker_transport fuzz_worker_transport = {
	.send = fuzz_worker_sink,
};

/* libworker.a calls this where the real worker exits. */
__dead void
worker_exit(int status)
{
	fprintf(stderr, "fuzz-worker: the worker exited with %d\n", status);
	abort();
}

/* One frame from the daemon end; the body is raw bytes. */
void
fuzz_worker_reply(int fd, uint16_t type, uint32_t id, const void *body,
    size_t len)
{
	uint8_t			 h[PROTO_HEADER_SIZE];
	const uint8_t		*p;
	ssize_t			 n;
	size_t			 left;
	int			 i;

	proto_header_make(h, type, id, (uint32_t)len);
	for (i = 0; i < 2; i++) {
		p = i == 0 ? h : body;
		left = i == 0 ? sizeof h : len;
		while (left > 0) {
			/* Nonblocking: a full socket drops the rest. */
			if ((n = write(fd, p, left)) <= 0)
				return;
			p += n;
			left -= (size_t)n;
		}
	}
}

static void
fuzz_worker_reply_sb(int fd, uint16_t type, uint32_t id, struct mpbuf *b)
{
	fuzz_worker_reply(fd, type, id, b->sb.data, b->sb.size);
}

/* A cell as room_pack_cell sends it. */
static void
fuzz_worker_pack_cell(msgpack_packer *pk, const char *id, const char *type,
    const char *source)
{
	msgpack_pack_map(pk, 6);
	proto_pack_str(pk, "cell_id", id);
	proto_pack_str(pk, "cell_type", type);
	proto_pack_str(pk, "source", source);
	proto_pack_key(pk, "metadata");
	msgpack_pack_map(pk, 0);
	proto_pack_int(pk, "execution_count", 1);
	proto_pack_key(pk, "outputs");
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 3);
	proto_pack_str(pk, "output_type", "stream");
	proto_pack_str(pk, "name", "stdout");
	proto_pack_str(pk, "text", "2\n");
}

/* ROOM_JOINED and ROOM_CONTENT, as room_pack_joined sends them. */
static void
fuzz_worker_pack_joined(msgpack_packer *pk, int with_metadata)
{
	msgpack_pack_map(pk, with_metadata ? 9 : 8);
	proto_pack_str(pk, "notebook_id", FUZZ_WORKER_NOTEBOOK);
	proto_pack_nil(pk, "path");
	proto_pack_bool(pk, "dirty", 1);
	proto_pack_uint(pk, "seq", 3);
	proto_pack_int(pk, "nbformat", 4);
	proto_pack_int(pk, "nbformat_minor", 5);
	proto_pack_key(pk, "kernel");
	msgpack_pack_map(pk, 2);
	proto_pack_str(pk, "name", "python3");
	proto_pack_str(pk, "state", "idle");
	if (with_metadata) {
		proto_pack_key(pk, "metadata");
		msgpack_pack_map(pk, 0);
	}
	proto_pack_key(pk, "cells");
	msgpack_pack_array(pk, 2);
	fuzz_worker_pack_cell(pk, "c1", "code", "1+1");
	fuzz_worker_pack_cell(pk, "c2", "markdown", "# title");
}

/* The canned answer to a request: joins succeed, the rest fail typed. */
void
fuzz_worker_canned(int fd, const struct proto_header *hdr)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	switch (hdr->type) {
	case PROTO_MSG_ROOM_CREATE:
	case PROTO_MSG_ROOM_OPEN:
		fuzz_worker_pack_joined(&b.pk, 0);
		fuzz_worker_reply_sb(fd, PROTO_MSG_ROOM_JOINED, hdr->id, &b);
		break;
	case PROTO_MSG_ROOM_GET:
		fuzz_worker_pack_joined(&b.pk, 1);
		fuzz_worker_reply_sb(fd, PROTO_MSG_ROOM_CONTENT, hdr->id, &b);
		break;
	case PROTO_MSG_ROOM_LEAVE:
		fuzz_worker_reply(fd, PROTO_MSG_OK, hdr->id, "\x80", 1);
		break;
	default:
		msgpack_pack_map(&b.pk, 2);
		proto_pack_str(&b.pk, "code", "notebook_unavailable");
		proto_pack_str(&b.pk, "message", "the fuzz daemon end "
		    "answers this request with an error");
		fuzz_worker_reply_sb(fd, PROTO_MSG_ERROR, hdr->id, &b);
		break;
	}
	mpbuf_free(&b);
}

static void
fuzz_worker_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct proto_incarnation	 inc;
	struct mpbuf			 b;
	size_t				 i;

	if (hdr == NULL) {
		for (i = 0; i < FUZZ_WORKER_MAX_CONNS; i++) {
			if (fuzz_worker_conns[i] == p)
				fuzz_worker_conns[i] = NULL;
		}
		return;
	}
	if (hdr->type == PROTO_MSG_HELLO) {
		memset(&inc, 0, sizeof inc);
		inc.pid = getpid();
		inc.started_at = 1700000000000000LL;
		snprintf(inc.version, sizeof inc.version, "%s",
		    RUNTIMED_VERSION);
		mpbuf_init(&b);
		proto_hello_ok_pack(&b.pk, &inc);
		fuzz_worker_reply_sb(peer_fd(p), PROTO_MSG_HELLO_OK, hdr->id,
		    &b);
		mpbuf_free(&b);
		return;
	}
	if (fuzz_worker_answer == NULL ||
	    !fuzz_worker_answer(peer_fd(p), hdr, body))
		fuzz_worker_canned(peer_fd(p), hdr);
}

static void
fuzz_worker_accept_cb(evutil_socket_t lfd, short events, void *arg)
{
	size_t	i;
	int	fd;

	while ((fd = accept(lfd, NULL, NULL)) != -1) {
		for (i = 0; i < FUZZ_WORKER_MAX_CONNS; i++) {
			if (fuzz_worker_conns[i] == NULL)
				break;
		}
		if (i == FUZZ_WORKER_MAX_CONNS) {
			close(fd);
			continue;
		}
		fuzz_worker_conns[i] = peer_create(fuzz_worker_base, fd,
		    "fuzz-daemon", fuzz_worker_dispatch, NULL);
	}
}

static void
fuzz_worker_cleanup(void)
{
	if (fuzz_worker_sock != NULL)
		unlink(fuzz_worker_sock);
	if (chdir(fuzz_worker_dir) == 0)
		fuzz_worker_sweep();
	rmdir(fuzz_worker_dir);
}

void
fuzz_worker_init(fuzz_worker_answer_cb answer)
{
	struct event	*ev;
	char		*cause;
	int		 lfd;

	fuzz_worker_answer = answer;
	fuzz_worker_trace = getenv("FUZZ_TRACE") != NULL;
	log_open("fuzz-worker", fuzz_worker_trace ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_WARN, fuzz_worker_trace ? NULL : "/dev/null");
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(fuzz_worker_dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(fuzz_worker_cleanup);
	if ((fuzz_worker_home = open(".", O_RDONLY | O_DIRECTORY)) == -1) {
		perror("open .");
		exit(1);
	}
	xasprintf(&fuzz_worker_sock, "%s/runtimed.sock", fuzz_worker_dir);
	setenv("RUNTIMED_SOCKET", fuzz_worker_sock, 1);
	setenv("RUNTIMED_STATE_DIR", fuzz_worker_dir, 1);
	if ((lfd = sockdir_listen(fuzz_worker_sock, &cause)) == -1) {
		fprintf(stderr, "fuzz-worker: %s\n", cause);
		exit(1);
	}
	fuzz_worker_base = event_base_new();
	ev = event_new(fuzz_worker_base, lfd, EV_READ | EV_PERSIST,
	    fuzz_worker_accept_cb, NULL);
	event_add(ev, NULL);
	worker_daemon_init(fuzz_worker_base);
	worker_rpc_init(fuzz_worker_base, &fuzz_worker_transport);
}

/* Into our directory (1) or back to the caller's (0). */
static void
fuzz_worker_cwd(int ours)
{
	if (ours ? chdir(fuzz_worker_dir) : fchdir(fuzz_worker_home)) {
		perror("fuzz-worker: chdir");
		abort();
	}
}

/* Run the loop until no call is in flight (or a bound on passes). */
void
fuzz_worker_run(void)
{
	int	i, quiet = 0;

	fuzz_worker_cwd(1);
	for (i = 0; i < FUZZ_WORKER_MAX_PASSES && quiet < 4; i++) {
		event_base_loop(fuzz_worker_base, EVLOOP_NONBLOCK);
		if (worker_call_inflight() == 0)
			quiet++;
	}
	fuzz_worker_cwd(0);
}

/* Could this JSON text name a file outside the current directory? */
static int
fuzz_worker_escapes(const char *json, size_t len)
{
	static const char *const	 bad[] = {
		"\"/", "\\/", "..", "\\u002", NULL
	};
	u_int				 i;

	for (i = 0; bad[i] != NULL; i++) {
		if (memmem(json, len, bad[i], strlen(bad[i])) != NULL)
			return (1);
	}
	return (0);
}

/* One JSON-RPC message, then whatever it set going. */
void
fuzz_worker_input(const char *json, size_t len)
{
	if (fuzz_worker_escapes(json, len))
		return;
	fuzz_worker_cwd(1);
	worker_rpc_input(json, len);
	fuzz_worker_run();
}

/* tools/call of tool with args (JSON text, used as it is). */
void
fuzz_worker_call(const char *tool, const char *args, size_t len)
{
	char	*msg;
	int	 n;

	n = xasprintf(&msg, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%.*s}}",
	    (long long)++fuzz_worker_id, tool, (int)len, args);
	fuzz_worker_input(msg, (size_t)n);
	free(msg);
}

/* Remove what the worker wrote in our directory. */
static void
fuzz_worker_sweep(void)
{
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(".")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "runtimed.sock") != 0)
			unlink(de->d_name);
	}
	closedir(d);
}

/*
 * Forget this input: the daemon end hangs up (as a daemon that exits),
 * which fails every request and waits on it, and the handles go.
 */
void
fuzz_worker_reset(void)
{
	size_t	i;

	for (i = 0; i < FUZZ_WORKER_MAX_CONNS; i++) {
		if (fuzz_worker_conns[i] != NULL)
			shutdown(peer_fd(fuzz_worker_conns[i]), SHUT_RDWR);
	}
	fuzz_worker_run();
	worker_attach_reset();
	fuzz_worker_run();
	fuzz_worker_cwd(1);
	fuzz_worker_sweep();
	fuzz_worker_cwd(0);
}
