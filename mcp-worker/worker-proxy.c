/* SPDX-License-Identifier: ISC */
/*
 * worker-proxy.c: the link to runtimed-mcp over the inherited socketpair.
 * JSON-RPC messages travel unchanged as MCP frames both ways
 * (proto-mcp.c); ours carry their id, method and error flag beside them.
 * Above PEER_QUEUE_HIGH of answers the proxy has not taken, no more
 * requests are read from it until they drain below PEER_QUEUE_LOW.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

/* An id longer than this is not carried beside the message. */
#define WORKER_PROXY_ID_MAX	4096

static struct peer	*worker_proxy_peer;
static int		 worker_proxy_ready;	/* HELLO_OK seen */

static void	worker_proxy_send(const char *, size_t, void *);
static void	worker_proxy_drained(struct peer *, void *);
static void	worker_proxy_initialized(void *);
static uint32_t	worker_proxy_tag(const struct proto_incarnation *);
static void	worker_proxy_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static void	worker_proxy_hello_ok(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	worker_proxy_mismatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	worker_proxy_mcp(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	worker_proxy_shutdown(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	worker_proxy_refuse(struct peer *,
		    const struct proto_header *, const char *, void *);

/* What the proxy sends its worker. */
static const struct peer_dispatch worker_proxy_table[] = {
	{ PROTO_MSG_HELLO_OK, PEER_DISPATCH_UNPACK, worker_proxy_hello_ok },
	{ PROTO_MSG_VERSION_MISMATCH, 0, worker_proxy_mismatch },
	{ PROTO_MSG_MCP, PEER_DISPATCH_UNPACK, worker_proxy_mcp },
	{ PROTO_MSG_WORKER_SHUTDOWN, 0, worker_proxy_shutdown },
	{ PROTO_MSG_PING, 0, peer_dispatch_pong },
	{ 0, 0, NULL }
};

static void
worker_proxy_send(const char *json, size_t len, void *arg)
{
	const struct worker_rpc_head	*h = worker_rpc_head();
	struct proto_mcp		 mcp;
	struct mpbuf			 b;

	if (worker_proxy_peer == NULL)
		return;
	/* What the proxy needs to know, so it need not parse json (an id
	 * too long to carry twice it parses); then json, not copied. */
	memset(&mcp, 0, sizeof mcp);
	mcp.json.ptr = json;
	mcp.json.len = len;
	if (h->id != NULL && strlen(h->id) <= WORKER_PROXY_ID_MAX) {
		mcp.id.ptr = h->id;
		mcp.id.len = strlen(h->id);
	}
	if (h->method != NULL) {
		mcp.method.ptr = h->method;
		mcp.method.len = strlen(h->method);
	}
	mcp.error = h->error;
	mpbuf_init(&b);
	proto_mcp_pack_head(&b.pk, &mcp);
	/* worker-rpc.c keeps messages within the cap: only a dying link
	 * refuses one, and then the proxy answers what is in flight. */
	if (peer_send_parts(worker_proxy_peer, PROTO_MSG_MCP, 0, b.sb.data,
	    b.sb.size, json, len) != 0)
		log_warnx("proxy link refused a message of %zu bytes", len);
	mpbuf_free(&b);
	/* A proxy that does not read: read no more requests from it. */
	if (peer_pending_output(worker_proxy_peer) > PEER_QUEUE_HIGH)
		peer_set_reading(worker_proxy_peer, 0);
}

/* Our answers drained below the low mark: read requests again. */
static void
worker_proxy_drained(struct peer *p, void *arg)
{
	peer_set_reading(p, 1);
}

/* The daemon was upgraded: say so before exiting 75. */
void
worker_proxy_upgrade(void)
{
	struct mpbuf	b;
	int64_t		deadline;

	if (worker_proxy_peer == NULL)
		return;
	mpbuf_init(&b);
	proto_worker_upgrade_pack(&b.pk);
	peer_send(worker_proxy_peer, PROTO_MSG_WORKER_UPGRADE, 0, &b.sb);
	mpbuf_free(&b);
	/* Let the frame (and any answer before it) reach the proxy. */
	deadline = util_mono_ms() + 1000;
	while (worker_proxy_peer != NULL &&
	    peer_pending_output(worker_proxy_peer) > 0 &&
	    util_mono_ms() < deadline)
		event_base_loop(worker_rpc_base(), EVLOOP_ONCE |
		    EVLOOP_NONBLOCK);
}

/* After the first initialize: tell the proxy our catalog. */
static void
worker_proxy_initialized(void *arg)
{
	struct proto_worker_ready	 ready;
	struct json_object		*list;
	struct mpbuf			 b;
	size_t				 len;

	if (worker_proxy_peer == NULL)
		return;
	list = worker_tool_list();
	ready.catalog.ptr = json_object_to_json_string_length(list,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	ready.catalog.len = len;
	mpbuf_init(&b);
	proto_worker_ready_pack(&b.pk, &ready);
	peer_send(worker_proxy_peer, PROTO_MSG_WORKER_READY, 0, &b.sb);
	mpbuf_free(&b);
	json_object_put(list);
}

/* A stable tag for the handles of every worker of this proxy. */
static uint32_t
worker_proxy_tag(const struct proto_incarnation *inc)
{
	uint64_t	 h = 1469598103934665603ULL;
	uint64_t	 v[2];
	const uint8_t	*p;
	size_t		 i;
	const char	*env;
	char		*end;
	unsigned long	 ul;

	if ((env = getenv("RUNTIMED_MCP_SESSION")) != NULL) {
		ul = strtoul(env, &end, 16);
		if (*env != '\0' && *end == '\0')
			return ((uint32_t)ul);
	}
	v[0] = (uint64_t)inc->pid;
	v[1] = (uint64_t)inc->started_at;
	p = (const uint8_t *)v;
	for (i = 0; i < sizeof v; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return ((uint32_t)(h ^ (h >> 32)));
}

/* HELLO_OK: the proxy's incarnation tags our attachments. */
static void
worker_proxy_hello_ok(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	worker_attach_set_tag(worker_proxy_tag(m));
	worker_proxy_ready = 1;
}

static void
worker_proxy_mismatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	log_warnx("protocol version mismatch: worker %d, proxy %lld",
	    PROTO_VERSION, (long long)proto_mismatch_version(body));
	worker_exit(1);
}

/* MCP: one JSON-RPC message from the client. */
static void
worker_proxy_mcp(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_mcp	*mcp = mv;

	if (!worker_proxy_ready)
		log_debug("MCP frame before HELLO_OK");
	worker_rpc_input(mcp->json.ptr, mcp->json.len);
}

/* WORKER_SHUTDOWN: we go, whatever its body says. */
static void
worker_proxy_shutdown(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	char	cause[256];

	if (proto_worker_shutdown_unpack(body, cause, sizeof cause) != 0)
		log_warnx("bad frame from proxy: %s", cause);
	log_debug("proxy asked us to exit");
	worker_exit(0);
}

/* A bad HELLO_OK ends us; any other bad frame is logged and dropped. */
static void
worker_proxy_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	if (hdr->type == PROTO_MSG_HELLO_OK) {
		log_warnx("bad HELLO_OK from proxy: %s", err);
		worker_exit(1);
	}
	log_warnx("bad frame from proxy: %s", err);
}

static void
worker_proxy_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	if (hdr == NULL) {
		log_debug("proxy link closed");
		worker_proxy_peer = NULL;
		worker_exit(0);
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_PROXY) ||
	    peer_dispatch(worker_proxy_table, worker_proxy_refuse, p, hdr,
	    body, NULL) != 0)
		log_warnx("unexpected %s from proxy",
		    proto_msg_name(hdr->type));
}

/* The link closing ends us, so an idle worker has nothing to do. */
static const struct worker_transport worker_proxy_transport = {
	.send = worker_proxy_send,
	.initialized = worker_proxy_initialized,
};

int
worker_proxy_start(struct event_base *base, int fd)
{
	struct proto_hello	 hello;
	struct mpbuf		 b;

	worker_rpc_init(base, &worker_proxy_transport);
	worker_proxy_peer = peer_create(base, fd, "proxy",
	    worker_proxy_dispatch, NULL);
	if (worker_proxy_peer == NULL) {
		log_warnx("cannot use fd %d", fd);
		return (-1);
	}
	peer_set_drain_cb(worker_proxy_peer, PEER_QUEUE_LOW,
	    worker_proxy_drained);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_WORKER);
	snprintf(hello.label, sizeof hello.label, "runtimed-mcp-worker");
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	peer_send(worker_proxy_peer, PROTO_MSG_HELLO,
	    peer_next_id(worker_proxy_peer), &b.sb);
	mpbuf_free(&b);
	return (0);
}
