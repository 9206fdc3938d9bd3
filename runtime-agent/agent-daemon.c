/* SPDX-License-Identifier: ISC */
/*
 * agent-daemon.c: the daemon link on fd 3 that runtimed-agent (agent.c)
 * and runtimed-agent-remote (agent-remote.c) share.  We say HELLO, wait
 * for HELLO_OK, then serve AGENT_* requests (PROTOCOL.md, "Daemon and
 * agent"); when fd 3 goes away the daemon is gone: shut the kernel down
 * and leave.  What differs between the agents (how a kernel is made,
 * what else is cleared or dispatched) comes in struct agent_daemon_hooks.
 */

#include <sys/prctl.h>

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_DAEMON_FD	3

static const struct agent_daemon_hooks	*agent_daemon_hooks;
static struct event_base	*agent_daemon_base;
static struct peer		*agent_daemon_peer;
static struct agent_kernel	*agent_daemon_k;
static int			 agent_daemon_hello_done;
static int			 agent_daemon_exiting;

static int			 agent_daemon_start_pending;
static uint32_t			 agent_daemon_start_id;
static int64_t			 agent_daemon_start_ms;

static char			*agent_daemon_state;	/* blob store root */

static int			 agent_daemon_shutdown_pending;
static uint32_t			 agent_daemon_shutdown_id;
static int			 agent_daemon_shutdown_restart;

static void	agent_daemon_status(enum proto_agent_state, const char *);
static void	agent_daemon_pack_json(msgpack_packer *, const void *);
static void	agent_daemon_clear(void);
static void	agent_daemon_shutdown_done(struct agent_kernel *, void *);
static void	agent_daemon_exit(const char *, int);
static pid_t	agent_daemon_ppid;
static struct event	*agent_daemon_term_ev;
static void	agent_daemon_term(evutil_socket_t, short, void *);
static void	agent_daemon_start(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	agent_daemon_execute(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	agent_daemon_interrupt(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	agent_daemon_shutdown(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	agent_daemon_refuse(struct peer *,
		    const struct proto_header *, const char *, void *);
static void	agent_daemon_hello_ok(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	agent_daemon_mismatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	agent_daemon_refused(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	agent_daemon_bad_hello(struct peer *,
		    const struct proto_header *, const char *, void *);
static void	agent_daemon_handshake(struct peer *,
		    const struct proto_header *, const msgpack_object *);
static void	agent_daemon_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);

/*
 * What the daemon asks, of runtimed-agent and runtimed-agent-remote
 * alike; a body that does not read is answered invalid_argument.
 */
static const struct peer_dispatch agent_daemon_table[] = {
	{ PROTO_MSG_AGENT_START, PEER_DISPATCH_UNPACK, agent_daemon_start },
	{ PROTO_MSG_AGENT_EXECUTE, PEER_DISPATCH_UNPACK, agent_daemon_execute },
	{ PROTO_MSG_AGENT_INTERRUPT, PEER_DISPATCH_UNPACK,
	    agent_daemon_interrupt },
	{ PROTO_MSG_AGENT_SHUTDOWN, PEER_DISPATCH_UNPACK,
	    agent_daemon_shutdown },
	{ PROTO_MSG_AGENT_VARIABLES, PEER_DISPATCH_UNPACK,
	    agent_introspect_variables },
	{ PROTO_MSG_AGENT_SEES, PEER_DISPATCH_UNPACK, agent_introspect_sees },
	{ PROTO_MSG_AGENT_COMPLETE, PEER_DISPATCH_UNPACK,
	    agent_introspect_complete },
	{ PROTO_MSG_AGENT_INSPECT, PEER_DISPATCH_UNPACK,
	    agent_introspect_inspect },
	{ PROTO_MSG_AGENT_INPUT_REPLY, PEER_DISPATCH_UNPACK, agent_stdin_reply },
	{ PROTO_MSG_PING, 0, peer_dispatch_pong },
	{ PROTO_MSG_OK, 0, peer_dispatch_ignore },
	{ PROTO_MSG_ERROR, 0, peer_dispatch_ignore },
	{ PROTO_MSG_PONG, 0, peer_dispatch_ignore },
	{ 0, 0, NULL }
};

/* The handshake's answers, before HELLO_OK. */
static const struct peer_dispatch agent_daemon_hello_table[] = {
	{ PROTO_MSG_HELLO_OK, PEER_DISPATCH_UNPACK, agent_daemon_hello_ok },
	{ PROTO_MSG_VERSION_MISMATCH, 0, agent_daemon_mismatch },
	{ PROTO_MSG_ERROR, 0, agent_daemon_refused },
	{ 0, 0, NULL }
};
static void	agent_daemon_signal(evutil_socket_t, short, void *);

/*
 * Send a frame to the daemon if it is still there, after the outputs
 * waiting for their blobs (agent-blob.c), so the daemon sees frames in
 * the order they were made.  Only PONG and the handshake go past them.
 */
void
agent_send(uint16_t type, uint32_t id, struct mpbuf *b)
{
	if (agent_blob_hold(type, id, b->sb.data, b->sb.size))
		return;
	agent_send_raw(type, id, b->sb.data, b->sb.size);
}

/* Who waits for the daemon to read what is queued for it. */
static void			(*agent_daemon_resume)(void *);
static void			*agent_daemon_resume_arg;

static void
agent_daemon_drained(struct peer *p, void *arg)
{
	void	(*cb)(void *) = agent_daemon_resume;

	peer_set_drain_cb(p, 0, NULL);
	agent_daemon_resume = NULL;
	if (cb != NULL)
		cb(agent_daemon_resume_arg);
}

/*
 * Is more than PEER_QUEUE_HIGH queued for the daemon?  Then resume(arg)
 * runs once it has read down to PEER_QUEUE_LOW: the kernel's outputs
 * wait in the kernel meanwhile, not in the agent.
 */
int
agent_daemon_backlog(void (*resume)(void *), void *arg)
{
	if (agent_daemon_peer == NULL ||
	    peer_pending_output(agent_daemon_peer) <= PEER_QUEUE_HIGH)
		return (0);
	if (resume == NULL)
		return (1);	/* only asking */
	agent_daemon_resume = resume;
	agent_daemon_resume_arg = arg;
	peer_set_drain_cb(agent_daemon_peer, PEER_QUEUE_LOW,
	    agent_daemon_drained);
	return (1);
}

/* Send a frame now. */
void
agent_send_raw(uint16_t type, uint32_t id, const void *body, size_t len)
{
	if (agent_daemon_peer != NULL)
		peer_send_raw(agent_daemon_peer, type, id, body, len);
}

/* OK in reply to request id, in order. */
void
agent_send_ok(uint32_t id)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	proto_empty_pack(&b.pk);
	agent_send(PROTO_MSG_OK, id, &b);
	mpbuf_free(&b);
}

/* ERROR {code, message} in reply to request id, in order. */
void
agent_send_error(uint32_t id, const char *code, const char *fmt, ...)
{
	struct mpbuf	b;
	va_list		ap;

	va_start(ap, fmt);
	mpbuf_error(&b, code, fmt, ap);
	va_end(ap);
	agent_send(PROTO_MSG_ERROR, id, &b);
	mpbuf_free(&b);
}

/* Send AGENT_STATUS {state, reason}. */
static void
agent_daemon_status(enum proto_agent_state state, const char *reason)
{
	struct proto_agent_status	m;
	struct mpbuf			b;

	memset(&m, 0, sizeof m);
	m.state = state;
	if (reason != NULL) {
		m.reason.ptr = reason;
		m.reason.len = strlen(reason);
	}
	mpbuf_init(&b);
	proto_agent_status_pack(&b.pk, &m);
	agent_send(PROTO_MSG_AGENT_STATUS, 0, &b);
	mpbuf_free(&b);
}

/* A C string as a borrowed proto_str; NULL stays absent. */
struct proto_str
agent_str(const char *s)
{
	struct proto_str	p = { s, s != NULL ? strlen(s) : 0 };

	return (p);
}

struct event_base *
agent_base_get(void)
{
	return (agent_daemon_base);
}

/* Where large outputs go; NULL when the daemon gave no state dir. */
const char *
agent_state_dir(void)
{
	return (agent_daemon_state);
}

/* The kernel, for fatal() cleanup; NULL before AGENT_START. */
struct agent_kernel *
agent_daemon_kernel(void)
{
	return (agent_daemon_k);
}

/* Parse one of the options both agents take; 0 if ch is not one. */
int
agent_daemon_option(int ch, const char *arg, int *level,
    const char **logfile, int *list)
{
	switch (ch) {
	case 'V':
		printf("%s %s\n", agent_daemon_name(), RUNTIMED_VERSION);
		exit(0);
	case 'q':
	case 'v':
		*level = log_level_step(*level, ch);
		return (1);
	case 'l':
		*logfile = arg;
		return (1);
	case 'k':
		*list = 1;
		return (1);
	}
	return (0);
}

/* The heartbeat stopped or came back: AGENT_STATUS says which. */
void
agent_responsive(struct agent_kernel *k, int ok, const char *why)
{
	if (ok)
		agent_daemon_status(agent_exec_is_busy() ? PROTO_AGENT_BUSY :
		    PROTO_AGENT_IDLE, NULL);
	else
		agent_daemon_status(PROTO_AGENT_UNRESPONSIVE, why);
}

static void
agent_daemon_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/*
 * The kernel answered kernel_info: fill in language_info and
 * protocol_version from it and send AGENT_READY, to the AGENT_START
 * waiting or as id 0 after a restart.  The caller set the rest of m.
 */
void
agent_daemon_ready(struct proto_agent_ready *m, struct json_object *info,
    const char *what)
{
	struct json_object	*li, *v, *empty = NULL;
	struct mpbuf		 b;
	uint32_t		 id = 0;

	if (agent_daemon_start_pending) {
		id = agent_daemon_start_id;
		agent_daemon_start_pending = 0;
	}
	log_info("%s ready %lld ms after the start request", what,
	    (long long)(util_mono_ms() - agent_daemon_start_ms));

	m->language_info.pack = agent_daemon_pack_json;
	if (json_object_object_get_ex(info, "language_info", &li) &&
	    json_object_is_type(li, json_type_object)) {
		m->language_info.arg = li;
		if (m->language.ptr == NULL &&
		    agent_daemon_hooks->language_fallback &&
		    json_object_object_get_ex(li, "name", &v) &&
		    json_object_is_type(v, json_type_string))
			m->language = agent_str(json_object_get_string(v));
	} else
		m->language_info.arg = empty = json_object_new_object();
	if (json_object_object_get_ex(info, "protocol_version", &v) &&
	    json_object_is_type(v, json_type_string))
		m->protocol_version = agent_str(json_object_get_string(v));
	if (m->capabilities.arg != NULL)
		m->capabilities.pack = agent_daemon_pack_json;
	mpbuf_init(&b);
	proto_agent_ready_pack(&b.pk, m);
	agent_send(PROTO_MSG_AGENT_READY, id, &b);
	mpbuf_free(&b);
	json_object_put(empty);
}

/* Forget what the kernel had in flight. */
static void
agent_daemon_clear(void)
{
	agent_exec_clear();
	agent_widget_clear();
	if (agent_daemon_hooks->clear != NULL)
		agent_daemon_hooks->clear();
}

/* The kernel never became ready. */
void
agent_failed(struct agent_kernel *k, const char *why)
{
	log_warnx("%s", why);
	agent_daemon_clear();
	if (agent_daemon_start_pending) {
		agent_daemon_start_pending = 0;
		if (agent_daemon_peer != NULL)
			agent_send_error(agent_daemon_start_id,
			    PROTO_E_KERNEL_UNAVAILABLE, "%s", why);
	} else
		agent_daemon_status(PROTO_AGENT_DEAD, why);
}

/* The kernel died while ready; the daemon fails the run in flight. */
void
agent_died(struct agent_kernel *k, const char *reason)
{
	log_warnx("kernel %s", reason);
	agent_daemon_clear();
	agent_daemon_status(PROTO_AGENT_DEAD, reason);
}

/* Shutdown finished: answer, restart, or leave. */
static void
agent_daemon_shutdown_done(struct agent_kernel *k, void *arg)
{
	const char	*why;
	char		*cause;

	agent_daemon_clear();
	if (agent_daemon_start_pending) {
		agent_daemon_start_pending = 0;
		if (agent_daemon_peer != NULL)
			agent_send_error(agent_daemon_start_id,
			    PROTO_E_KERNEL_UNAVAILABLE,
			    "kernel was shut down before it was ready");
	}
	if (agent_daemon_exiting) {
		event_base_loopexit(agent_daemon_base, NULL);
		return;
	}
	if (!agent_daemon_shutdown_pending)
		return;
	agent_daemon_shutdown_pending = 0;
	if (agent_daemon_peer != NULL && !agent_daemon_shutdown_restart &&
	    agent_daemon_hooks->shutdown_refused != NULL &&
	    (why = agent_daemon_hooks->shutdown_refused(k)) != NULL)
		agent_send_error(agent_daemon_shutdown_id, PROTO_E_REFUSED,
		    "%s", why);
	else if (agent_daemon_peer != NULL)
		agent_send_ok(agent_daemon_shutdown_id);
	if (!agent_daemon_shutdown_restart)
		return;
	if (agent_daemon_hooks->restart_check != NULL &&
	    (why = agent_daemon_hooks->restart_check(k)) != NULL) {
		agent_daemon_status(PROTO_AGENT_DEAD, why);
		return;
	}
	agent_daemon_start_ms = util_mono_ms();
	if (agent_kernel_start(k, &cause) != 0) {
		log_warnx("restart: %s", cause);
		agent_daemon_status(PROTO_AGENT_DEAD, cause);
		free(cause);
	}
}

/* Leave: stop the kernel first, then break the loop. */
static void
agent_daemon_exit(const char *why, int lost)
{
	if (agent_daemon_exiting)
		return;
	agent_daemon_exiting = 1;
	log_info("exiting: %s", why);
	if (lost && !agent_daemon_shutdown_pending && agent_daemon_k != NULL &&
	    agent_daemon_hooks->orphaned != NULL &&
	    agent_daemon_hooks->orphaned(agent_daemon_k)) {
		event_base_loopexit(agent_daemon_base, NULL);
		return;
	}
	if (agent_daemon_k != NULL && agent_kernel_is_running(agent_daemon_k))
		agent_kernel_shutdown(agent_daemon_k, 0,
		    agent_daemon_shutdown_done, NULL);
	else
		event_base_loopexit(agent_daemon_base, NULL);
}

/*
 * AGENT_START {kernel_id, kernel_name, cwd, runtime_dir, state_dir?}:
 * the hook makes the kernel (or answers the error), we launch it.
 */
static void
agent_daemon_start(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_agent_start	*m = mv;
	struct agent_kernel		*k;
	char				*cause;
	uint32_t			 id = hdr->id;

	if (agent_daemon_k != NULL && agent_kernel_is_running(agent_daemon_k)) {
		agent_send_error(id, PROTO_E_INVALID_ARGUMENT,
		    "kernel already started");
		return;
	}
	free(agent_daemon_state);
	agent_daemon_state = m->state_dir.ptr != NULL ?
	    xstrndup(m->state_dir.ptr, m->state_dir.len) : NULL;
	if ((k = agent_daemon_hooks->create(agent_daemon_base, p, id,
	    m)) == NULL)
		return;

	agent_kernel_free(agent_daemon_k);
	agent_daemon_k = k;
	agent_daemon_start_ms = util_mono_ms();
	agent_daemon_start_pending = 1;
	agent_daemon_start_id = id;
	if (agent_kernel_start(agent_daemon_k, &cause) != 0) {
		agent_daemon_start_pending = 0;
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		free(cause);
	}
}

/*
 * AGENT_EXECUTE {exec_id, cell_id, code, stop_on_error?, silent?}.  The
 * code may hold NUL: the Jupyter message carries it as \u0000 and the
 * kernel judges it.
 */
static void
agent_daemon_execute(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_agent_execute	*m = mv;
	char					*cause, *exec_id, *cell_id;
	uint32_t				 id = hdr->id;

	if (agent_daemon_k == NULL) {
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE,
		    "no kernel was started");
		return;
	}
	exec_id = xstrndup(m->exec_id.ptr, m->exec_id.len);
	cell_id = xstrndup(m->cell_id.ptr, m->cell_id.len);
	if (agent_exec_start(agent_daemon_k, exec_id, cell_id, m->code.ptr,
	    m->code.len, m->stop_on_error, m->silent, &cause) != 0) {
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		free(cause);
	}
	free(exec_id);
	free(cell_id);
}

/* AGENT_INTERRUPT {}. */
static void
agent_daemon_interrupt(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	char		*cause;
	uint32_t	 id = hdr->id;

	if (agent_daemon_k == NULL)
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE,
		    "no kernel was started");
	else if (agent_daemon_hooks->interrupt != NULL)
		agent_daemon_hooks->interrupt(agent_daemon_k, id);
	else if (agent_kernel_interrupt(agent_daemon_k, &cause) != 0) {
		agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE, "%s", cause);
		free(cause);
	} else
		agent_send_ok(id);
}

/* AGENT_SHUTDOWN {restart?}. */
static void
agent_daemon_shutdown(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_agent_shutdown	*m = mv;
	uint32_t				 id = hdr->id;

	if (agent_daemon_shutdown_pending) {
		agent_send_error(id, PROTO_E_BUSY, "a shutdown is in progress");
		return;
	}
	if (agent_daemon_k == NULL) {
		if (m->restart)
			agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE,
			    "no kernel was started");
		else
			agent_send_ok(id);
		return;
	}
	agent_daemon_shutdown_pending = 1;
	agent_daemon_shutdown_id = id;
	agent_daemon_shutdown_restart = m->restart;
	agent_kernel_shutdown(agent_daemon_k, m->restart,
	    agent_daemon_shutdown_done, NULL);
}

/* HELLO_OK: the daemon took us. */
static void
agent_daemon_hello_ok(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_incarnation	*inc = mv;

	log_info("daemon pid %lld version %s accepted us",
	    (long long)inc->pid, inc->version);
	agent_daemon_hello_done = 1;
}

static void
agent_daemon_mismatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	log_warnx("protocol version mismatch: agent %d, daemon %lld",
	    PROTO_VERSION, (long long)proto_mismatch_version(body));
	exit(1);
}

static void
agent_daemon_refused(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const char	*msg;
	size_t		 len;

	msg = proto_get_str(body, "message", &len);
	log_warnx("daemon refused us: %.*s", msg != NULL ? (int)len : 0,
	    msg != NULL ? msg : "");
	exit(1);
}

static void
agent_daemon_bad_hello(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	log_warnx("bad HELLO_OK: %s", err);
	peer_kill(p, "bad HELLO_OK");
}

/* Before HELLO_OK only the handshake answers are accepted. */
static void
agent_daemon_handshake(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body)
{
	if (peer_dispatch(agent_daemon_hello_table, agent_daemon_bad_hello,
	    p, hdr, body, NULL) != 0) {
		log_warnx("%s before HELLO_OK", proto_msg_name(hdr->type));
		peer_kill(p, "message before HELLO_OK");
	}
}

/* A request whose body does not read: invalid_argument, nothing done. */
static void
agent_daemon_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	agent_send_error(hdr->id, PROTO_E_INVALID_ARGUMENT, "%s", err);
}

/* One frame from the daemon, or its loss. */
static void
agent_daemon_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	const struct agent_daemon_hooks	*h = agent_daemon_hooks;

	if (hdr == NULL) {
		agent_daemon_peer = NULL;
		if (!agent_daemon_hello_done) {
			log_warnx("daemon closed fd 3 during the handshake");
			exit(1);
		}
		agent_daemon_exit("daemon closed fd 3", 1);
		return;
	}
	if (!agent_daemon_hello_done) {
		agent_daemon_handshake(p, hdr, body);
		return;
	}
	log_debug("%s: %s id %u", __func__, proto_msg_name(hdr->type),
	    hdr->id);
	if (proto_msg_from(hdr->type, PROTO_FROM_DAEMON) &&
	    peer_dispatch(agent_daemon_table, agent_daemon_refuse, p, hdr, body,
	    agent_daemon_k) == 0)
		return;
	agent_send_error(hdr->id, PROTO_E_INVALID_ARGUMENT,
	    "%s does not handle %s", h->name, proto_msg_name(hdr->type));
}

static void
agent_daemon_signal(evutil_socket_t sig, short events, void *arg)
{
	struct timeval	tv = { 1, 0 };

	switch (sig) {
	case SIGCHLD:
		if (agent_daemon_k != NULL)
			agent_daemon_hooks->sigchld(agent_daemon_k);
		break;
	case SIGTERM:
		if (getppid() != agent_daemon_ppid)
			agent_daemon_exit("SIGTERM, the daemon is gone", 1);
		else if (agent_daemon_hooks->orphaned != NULL &&
		    agent_daemon_peer != NULL && !agent_daemon_exiting) {
			/*
			 * PR_SET_PDEATHSIG comes when the thread that started
			 * us exits, while the daemon's other threads may still
			 * be ours: fd 3 closing says it died.
			 */
			if (agent_daemon_term_ev == NULL)
				agent_daemon_term_ev = evtimer_new(
				    agent_daemon_base, agent_daemon_term, NULL);
			evtimer_add(agent_daemon_term_ev, &tv);
		} else
			agent_daemon_exit("SIGTERM", 0);
		break;
	}
}

/* SIGTERM, and fd 3 did not close meanwhile: the daemon lives. */
static void
agent_daemon_term(evutil_socket_t fd, short events, void *arg)
{
	agent_daemon_exit("SIGTERM", 0);
}

/* The executable's name, for messages. */
const char *
agent_daemon_name(void)
{
	return (agent_daemon_hooks->name);
}

/* Set the hooks; before option parsing, so -V knows our name. */
void
agent_daemon_init(const struct agent_daemon_hooks *h)
{
	agent_daemon_hooks = h;
}

/*
 * Serve the daemon on fd 3 until it goes or SIGTERM; then free the
 * kernel.  Options and the log are the caller's.
 */
void
agent_daemon_run(void)
{
	const struct agent_daemon_hooks	*h = agent_daemon_hooks;
	struct proto_hello		 hello;
	struct event			*ev_chld = NULL, *ev_term;
	struct mpbuf			 b;

	/* The daemon owns us: die with it even if fd 3 lingers. */
	agent_daemon_ppid = getppid();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (fcntl(AGENT_DAEMON_FD, F_GETFD) == -1)
		fatalx("fd %d is not open: %s is started by runtimed",
		    AGENT_DAEMON_FD, h->name);
	util_set_cloexec(AGENT_DAEMON_FD);

	/* SIGINT is for the kernel's process group, never for us. */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);

	if ((agent_daemon_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	if (h->sigchld != NULL) {
		ev_chld = evsignal_new(agent_daemon_base, SIGCHLD,
		    agent_daemon_signal, NULL);
		evsignal_add(ev_chld, NULL);
	}
	ev_term = evsignal_new(agent_daemon_base, SIGTERM, agent_daemon_signal,
	    NULL);
	evsignal_add(ev_term, NULL);
	agent_exec_init(agent_daemon_base);
	agent_blob_init(agent_daemon_base);

	agent_daemon_peer = peer_create(agent_daemon_base, AGENT_DAEMON_FD,
	    "daemon", agent_daemon_dispatch, NULL);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_AGENT);
	snprintf(hello.label, sizeof hello.label, "%s %ld", h->name,
	    (long)getpid());
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	agent_send(PROTO_MSG_HELLO, 0, &b);
	mpbuf_free(&b);

	event_base_dispatch(agent_daemon_base);
	/* Outputs still waiting for their blobs go out, daemon willing. */
	agent_blob_finish(agent_daemon_peer != NULL);

	agent_kernel_free(agent_daemon_k);
	agent_daemon_k = NULL;
	if (ev_chld != NULL)
		event_free(ev_chld);
	event_free(ev_term);
	if (agent_daemon_term_ev != NULL)
		event_free(agent_daemon_term_ev);
	agent_daemon_term_ev = NULL;
	free(agent_daemon_state);
	agent_daemon_state = NULL;
}
