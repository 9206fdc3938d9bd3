/* SPDX-License-Identifier: ISC */
/*
 * kernel-introspect.c: a client's question for the room's kernel, passed
 * to its agent and the answer passed back (docs/decisions/022).
 *
 * KERNEL_VARIABLES, KERNEL_COMPLETE and KERNEL_INSPECT go to the agent
 * as AGENT_VARIABLES, AGENT_COMPLETE and AGENT_INSPECT with the same
 * body under a request id of the agent link; the agent's
 * KERNEL_*_REPLY or ERROR goes back to the client under its own id, as
 * it is.  room-input.c sends AGENT_INPUT_REPLY this way too.  Nothing
 * here starts a kernel: with none there is nothing to look at.
 *
 * KERNEL_INTERRUPT of a started kernel goes the same way
 * (kernel_introspect_interrupt): the runs are marked interrupted only
 * when the agent says OK, so an interrupt a Jupyter Server refused
 * (runtimed-agent-remote's ERROR refused) changes nothing and says so.
 *
 * Every question is answered: by the agent, or when the agent's link
 * goes (kernel_unavailable), or when the agent has not answered a
 * moment past the caller's bound (busy).  A client that leaves drops its
 * questions; their late answers are dropped.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"
#include "domain.h"

/* A question's bound when the client gives none, and our slack. */
#define KERNEL_INTROSPECT_TIMEOUT_MS	5000
#define KERNEL_INTROSPECT_SLACK_MS	2000

struct kernel_introspect {
	struct peer		*client;	/* NULL once it left */
	uint32_t		 client_id;
	struct peer		*agent;
	uint32_t		 agent_id;
	uint16_t		 reply;		/* the type passed back */
	int			 interrupt;	/* KERNEL_INTERRUPT */
	char			*by_name;	/* its client's, or NULL */
	char			*by_session;
	struct event		*timer;
	TAILQ_ENTRY(kernel_introspect) entry;
};
static TAILQ_HEAD(, kernel_introspect) kernel_introspects =
    TAILQ_HEAD_INITIALIZER(kernel_introspects);

static void	kernel_introspect_free(struct kernel_introspect *);
static void	kernel_introspect_timeout_cb(evutil_socket_t, short, void *);
static int	kernel_introspect_check(uint16_t, const msgpack_object *,
		    char *, size_t, int64_t *);
static void	kernel_introspect_client(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The requests this file answers on a joined room: server-client.c
 * tries this table, its handler given the room (docs/decisions/096).
 */
const struct peer_dispatch kernel_introspect_table[] = {
	{ PROTO_MSG_KERNEL_VARIABLES, 0, kernel_introspect_client },
	{ PROTO_MSG_KERNEL_COMPLETE, 0, kernel_introspect_client },
	{ PROTO_MSG_KERNEL_INSPECT, 0, kernel_introspect_client },
	{ PROTO_MSG_KERNEL_SEES, 0, kernel_introspect_client },
	{ 0, 0, NULL }
};

/* KERNEL_VARIABLES, _COMPLETE, _INSPECT, _SEES: to the agent as AGENT_*. */
static void
kernel_introspect_client(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	uint16_t	type;

	if (hdr->type == PROTO_MSG_KERNEL_VARIABLES)
		type = PROTO_MSG_AGENT_VARIABLES;
	else if (hdr->type == PROTO_MSG_KERNEL_COMPLETE)
		type = PROTO_MSG_AGENT_COMPLETE;
	else if (hdr->type == PROTO_MSG_KERNEL_SEES)
		type = PROTO_MSG_AGENT_SEES;
	else
		type = PROTO_MSG_AGENT_INSPECT;
	kernel_introspect_ask(arg, p, hdr->id, type, body);
}

static void
kernel_introspect_free(struct kernel_introspect *q)
{
	TAILQ_REMOVE(&kernel_introspects, q, entry);
	event_free(q->timer);
	free(q->by_name);
	free(q->by_session);
	free(q);
}

static void
kernel_introspect_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct kernel_introspect	*q = arg;

	if (q->client != NULL)
		peer_send_error(q->client, q->client_id, PROTO_E_BUSY,
		    "the kernel's agent did not answer in time: try again, or "
		    "get_kernel_info to see what the kernel is doing");
	kernel_introspect_free(q);
}

/*
 * Is the body what its type needs (its codec in proto's table)?  Its
 * timeout_ms is in *timeout.
 */
static int
kernel_introspect_check(uint16_t type, const msgpack_object *body,
    char *err, size_t errlen, int64_t *timeout)
{
	union {
		max_align_t		align;
		char			bytes[PROTO_BODY_MAX];
		struct proto_variables	v;
		struct proto_complete	c;
		struct proto_inspect	i;
		struct proto_sees	s;
	}				m;

	*timeout = KERNEL_INTROSPECT_TIMEOUT_MS;
	if (proto_msg_unpack(type, body, &m, err, errlen) != 0)
		return (-1);
	if (type == PROTO_MSG_AGENT_VARIABLES && m.v.has_timeout_ms)
		*timeout = m.v.timeout_ms;
	else if (type == PROTO_MSG_AGENT_COMPLETE && m.c.has_timeout_ms)
		*timeout = m.c.timeout_ms;
	else if (type == PROTO_MSG_AGENT_INSPECT && m.i.has_timeout_ms)
		*timeout = m.i.timeout_ms;
	else if (type == PROTO_MSG_AGENT_SEES && m.s.has_timeout_ms)
		*timeout = m.s.timeout_ms;
	return (0);
}

/*
 * Ask the room's agent: type is the AGENT_* request; its answer has the
 * reply type proto's table names.  The body is checked, then sent as
 * it is.
 */
void
kernel_introspect_ask(struct room *r, struct peer *p, uint32_t id,
    uint16_t type, const msgpack_object *body)
{
	struct kernel_introspect	*q;
	struct peer			*agent;
	struct mpbuf			 b;
	struct timeval			 tv;
	int64_t				 timeout;
	char				 err[256];

	if (kernel_introspect_check(type, body, err, sizeof err,
	    &timeout) != 0) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT, "%s", err);
		return;
	}
	if (timeout > PROTO_WAIT_MAX_MS) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "timeout_ms must "
		    "be an integer from 0 to %d", PROTO_WAIT_MAX_MS);
		return;
	}
	if ((agent = room_kernel_agent(r)) == NULL) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "the kernel is %s: nothing to look at (run a cell to start "
		    "it, or get_kernel_info)", room_kernel_state(r));
		return;
	}
	q = xcalloc(1, sizeof *q);
	q->client = p;
	q->client_id = id;
	q->agent = agent;
	q->agent_id = peer_next_id(agent);
	q->reply = proto_msg_reply(type);
	q->timer = evtimer_new(runtimed_base, kernel_introspect_timeout_cb,
	    q);
	timeout += KERNEL_INTROSPECT_SLACK_MS;
	tv.tv_sec = timeout / 1000;
	tv.tv_usec = (timeout % 1000) * 1000;
	evtimer_add(q->timer, &tv);
	TAILQ_INSERT_TAIL(&kernel_introspects, q, entry);

	mpbuf_init(&b);
	msgpack_pack_object(&b.pk, *body);
	if (peer_send(agent, type, q->agent_id, &b.sb) != 0) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "the kernel's agent is going away");
		kernel_introspect_free(q);
	}
	mpbuf_free(&b);
}

/*
 * KERNEL_INTERRUPT: AGENT_INTERRUPT to the room's agent, whose OK marks
 * the runs interrupted (room_exec_interrupt) before the client's OK, and
 * whose ERROR goes to the client with nothing changed.  -1 with no agent.
 */
int
kernel_introspect_interrupt(struct room *r, struct peer *p, uint32_t id,
    const char *name, const char *session)
{
	struct kernel_introspect	*q;
	struct peer			*agent;
	struct mpbuf			 b;
	struct timeval			 tv;

	if ((agent = room_kernel_agent(r)) == NULL)
		return (-1);
	q = xcalloc(1, sizeof *q);
	q->client = p;
	q->client_id = id;
	q->agent = agent;
	q->agent_id = peer_next_id(agent);
	q->reply = PROTO_MSG_OK;
	q->interrupt = 1;
	q->by_name = name != NULL ? xstrdup(name) : NULL;
	q->by_session = session != NULL ? xstrdup(session) : NULL;
	q->timer = evtimer_new(runtimed_base, kernel_introspect_timeout_cb,
	    q);
	/* A server's answer may take its whole timeout. */
	tv.tv_sec = JSERVER_TIMEOUT + KERNEL_INTROSPECT_SLACK_MS / 1000;
	tv.tv_usec = 0;
	evtimer_add(q->timer, &tv);
	TAILQ_INSERT_TAIL(&kernel_introspects, q, entry);
	mpbuf_init(&b);
	proto_agent_interrupt_pack(&b.pk);
	if (peer_send(agent, PROTO_MSG_AGENT_INTERRUPT, q->agent_id,
	    &b.sb) != 0) {
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "the kernel's agent is going away");
		kernel_introspect_free(q);
	}
	mpbuf_free(&b);
	return (0);
}

/*
 * A frame from an agent of room r (NULL: pooled): 0 when it answered one
 * of our questions (and went to its client), -1 when it is not ours.
 */
int
kernel_introspect_answer(struct room *r, struct peer *agent,
    const struct proto_header *hdr, const msgpack_object *body)
{
	struct kernel_introspect	*q;
	struct mpbuf			 b;

	TAILQ_FOREACH(q, &kernel_introspects, entry) {
		if (q->agent == agent && q->agent_id == hdr->id)
			break;
	}
	if (q == NULL || hdr->id == 0)
		return (-1);
	if (hdr->type != PROTO_MSG_ERROR && hdr->type != q->reply) {
		log_warnx("agent answered %s with %s",
		    proto_msg_name(q->reply), proto_msg_name(hdr->type));
		if (q->client != NULL)
			peer_send_error(q->client, q->client_id,
			    PROTO_E_KERNEL_UNAVAILABLE, "the kernel's agent "
			    "answered with %s", proto_msg_name(hdr->type));
	} else if (q->interrupt) {
		mpbuf_init(&b);
		/* Done: the runs it ended, whose (issue 39); else as said. */
		if (hdr->type == PROTO_MSG_OK && r != NULL)
			room_exec_interrupt_by(r, q->by_name, q->by_session,
			    &b.pk);
		else
			msgpack_pack_object(&b.pk, *body);
		if (q->client != NULL)
			peer_send(q->client, hdr->type, q->client_id, &b.sb);
		mpbuf_free(&b);
	} else if (q->client != NULL) {
		mpbuf_init(&b);
		msgpack_pack_object(&b.pk, *body);
		peer_send(q->client, hdr->type, q->client_id, &b.sb);
		mpbuf_free(&b);
	}
	kernel_introspect_free(q);
	return (0);
}

/* A client left (its questions go unanswered) or an agent's link went. */
void
kernel_introspect_peer_gone(struct peer *p)
{
	struct kernel_introspect	*q, *q1;

	TAILQ_FOREACH_SAFE(q, &kernel_introspects, entry, q1) {
		if (q->client == p)
			q->client = NULL;
		if (q->agent != p)
			continue;
		if (q->client != NULL)
			peer_send_error(q->client, q->client_id,
			    PROTO_E_KERNEL_UNAVAILABLE, "the kernel went away "
			    "before it answered");
		kernel_introspect_free(q);
	}
}
