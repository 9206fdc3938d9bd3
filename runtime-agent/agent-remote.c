/* SPDX-License-Identifier: ISC */
/*
 * agent-remote.c: runtimed-agent-remote, the runtime agent for a kernel
 * on a Jupyter Server (agent-remote.h).  The daemon starts it like
 * runtimed-agent, with the domain and the kernel's server directory on
 * the command line, and speaks the same frames (PROTOCOL.md, "Daemon and
 * agent"):
 *
 *	AGENT_START	-> AGENT_READY once the server's kernel answers
 *			   kernel_info, or ERROR kernel_unavailable; its
 *			   kernel_name picks the server's kernelspec, its
 *			   cwd and runtime_dir are unused (the server has
 *			   them)
 *	AGENT_EXECUTE	as runtimed-agent (agent-exec.c, unchanged)
 *	AGENT_INTERRUPT	-> OK once POST .../interrupt is sent
 *	AGENT_SHUTDOWN	-> OK once the server answered the DELETE; with
 *			   restart, POST .../restart, then AGENT_READY id 0
 *			   when the kernel answers kernel_info again
 *
 * When fd 3 goes away the kernel is deleted on the server and we exit.
 * The pid in AGENT_READY is ours: the kernel's process is the server's.
 */

#include <sys/prctl.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-remote.h"

#define AGENT_REMOTE_FD	3

static struct event_base	*agent_remote_base;
static struct peer		*agent_remote_peer;
static struct agent_kernel	*agent_remote_k;
static struct domain		*agent_remote_domain;
static char			*agent_remote_dir;
static int			 agent_remote_hello_done;
static int			 agent_remote_exiting;
static char			*agent_remote_state;

static int			 agent_remote_start_pending;
static uint32_t			 agent_remote_start_id;
static int64_t			 agent_remote_start_ms;

static int			 agent_remote_shutdown_pending;
static uint32_t			 agent_remote_shutdown_id;
static int			 agent_remote_shutdown_restart;

static __dead void	agent_remote_usage(int);
static void	agent_remote_status(enum proto_agent_state, const char *);
static void	agent_remote_pack_json(msgpack_packer *, const void *);
static void	agent_remote_shutdown_done(struct agent_kernel *, void *);
static void	agent_remote_exit(const char *);
static void	agent_remote_start(struct peer *, uint32_t,
		    const msgpack_object *);
static void	agent_remote_execute(struct peer *, uint32_t,
		    const msgpack_object *);
static void	agent_remote_interrupt(struct peer *, uint32_t,
		    const msgpack_object *);
static void	agent_remote_shutdown(struct peer *, uint32_t,
		    const msgpack_object *);
static void	agent_remote_handshake(struct peer *,
		    const struct proto_header *, const msgpack_object *);
static void	agent_remote_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static void	agent_remote_signal(evutil_socket_t, short, void *);

static __dead void
agent_remote_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-agent-remote [-hqVv] [--log file] --domain name "
	    "[--path dir]\n"
	    "       runtimed-agent-remote --domain name --list-kernelspecs\n"
	    "Started by runtimed with its socket as fd 3; see "
	    "runtimed-agent(8).\n");
	exit(status);
}

void
agent_send(uint16_t type, uint32_t id, struct mpbuf *b)
{
	if (agent_remote_peer != NULL)
		peer_send(agent_remote_peer, type, id, &b->sb);
}

static void
agent_remote_status(enum proto_agent_state state, const char *reason)
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

struct proto_str
agent_str(const char *s)
{
	struct proto_str	p = { s, s != NULL ? strlen(s) : 0 };

	return (p);
}

const char *
agent_state_dir(void)
{
	return (agent_remote_state);
}

void
agent_responsive(struct agent_kernel *k, int ok, const char *why)
{
	if (ok)
		agent_remote_status(agent_exec_is_busy() ? PROTO_AGENT_BUSY :
		    PROTO_AGENT_IDLE, NULL);
	else
		agent_remote_status(PROTO_AGENT_UNRESPONSIVE, why);
}

static void
agent_remote_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* The server's kernel answered kernel_info: AGENT_READY. */
void
agent_ready(struct agent_kernel *k, struct json_object *info)
{
	struct proto_agent_ready	 m;
	struct json_object		*li = NULL, *v, *empty = NULL;
	struct mpbuf			 b;
	uint32_t			 id = 0;
	char				*display;

	if (agent_remote_start_pending) {
		id = agent_remote_start_id;
		agent_remote_start_pending = 0;
	}
	log_info("remote kernel ready %lld ms after the start request",
	    (long long)(util_mono_ms() - agent_remote_start_ms));
	memset(&m, 0, sizeof m);
	/* The kernel's process is the server's; ours stands for it. */
	m.pid = getpid();
	m.kernel_name = agent_str(agent_remote_kernel_name(k));
	if (agent_remote_kernel_display_name(k) != NULL)
		display = xstrdup(agent_remote_kernel_display_name(k));
	else
		display = xstrdup(agent_remote_kernel_name(k));
	m.display_name = agent_str(display);
	m.language = agent_str(agent_remote_kernel_language(k));
	m.language_info.pack = agent_remote_pack_json;
	if (json_object_object_get_ex(info, "language_info", &li) &&
	    json_object_is_type(li, json_type_object)) {
		m.language_info.arg = li;
		if (m.language.ptr == NULL &&
		    json_object_object_get_ex(li, "name", &v) &&
		    json_object_is_type(v, json_type_string))
			m.language = agent_str(json_object_get_string(v));
	} else
		m.language_info.arg = empty = json_object_new_object();
	if (json_object_object_get_ex(info, "protocol_version", &v) &&
	    json_object_is_type(v, json_type_string))
		m.protocol_version = agent_str(json_object_get_string(v));
	mpbuf_init(&b);
	proto_agent_ready_pack(&b.pk, &m);
	agent_send(PROTO_MSG_AGENT_READY, id, &b);
	mpbuf_free(&b);
	json_object_put(empty);
	free(display);
}

void
agent_failed(struct agent_kernel *k, const char *why)
{
	log_warnx("%s", why);
	agent_exec_clear();
	if (agent_remote_start_pending) {
		agent_remote_start_pending = 0;
		if (agent_remote_peer != NULL)
			peer_send_error(agent_remote_peer,
			    agent_remote_start_id, "kernel_unavailable", "%s",
			    why);
	} else
		agent_remote_status(PROTO_AGENT_DEAD, why);
}

void
agent_died(struct agent_kernel *k, const char *reason)
{
	log_warnx("kernel %s", reason);
	agent_exec_clear();
	agent_remote_status(PROTO_AGENT_DEAD, reason);
}

static void
agent_remote_shutdown_done(struct agent_kernel *k, void *arg)
{
	char	*cause;

	agent_exec_clear();
	if (agent_remote_start_pending) {
		agent_remote_start_pending = 0;
		if (agent_remote_peer != NULL)
			peer_send_error(agent_remote_peer,
			    agent_remote_start_id, "kernel_unavailable",
			    "kernel was shut down before it was ready");
	}
	if (agent_remote_exiting) {
		event_base_loopexit(agent_remote_base, NULL);
		return;
	}
	if (!agent_remote_shutdown_pending)
		return;
	agent_remote_shutdown_pending = 0;
	if (agent_remote_peer != NULL)
		peer_send_ok(agent_remote_peer, agent_remote_shutdown_id);
	if (!agent_remote_shutdown_restart)
		return;
	if (agent_kernel_is_running(k) || !agent_kernel_start_ok(k)) {
		agent_remote_status(PROTO_AGENT_DEAD,
		    agent_remote_kernel_why(k));
		return;
	}
	agent_remote_start_ms = util_mono_ms();
	if (agent_kernel_start(k, &cause) != 0) {
		log_warnx("restart: %s", cause);
		agent_remote_status(PROTO_AGENT_DEAD, cause);
		free(cause);
	}
}

static void
agent_remote_exit(const char *why)
{
	if (agent_remote_exiting)
		return;
	agent_remote_exiting = 1;
	log_info("exiting: %s", why);
	if (agent_remote_k != NULL && agent_kernel_is_running(agent_remote_k))
		agent_kernel_shutdown(agent_remote_k, 0,
		    agent_remote_shutdown_done, NULL);
	else
		event_base_loopexit(agent_remote_base, NULL);
}

/* AGENT_START {kernel_id, kernel_name, cwd, runtime_dir, state_dir?}. */
static void
agent_remote_start(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_start	 m;
	char				 err[256], *name, *cause;

	if (agent_remote_k != NULL && agent_kernel_is_running(agent_remote_k)) {
		peer_send_error(p, id, "invalid_argument",
		    "kernel already started");
		return;
	}
	if (proto_agent_start_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	free(agent_remote_state);
	agent_remote_state = m.state_dir.ptr != NULL ?
	    xstrndup(m.state_dir.ptr, m.state_dir.len) : NULL;
	name = xstrndup(m.kernel_name.ptr, m.kernel_name.len);
	agent_kernel_free(agent_remote_k);
	agent_remote_k = agent_remote_kernel_create(agent_remote_base,
	    agent_remote_domain, name, agent_remote_dir);
	free(name);
	agent_remote_start_ms = util_mono_ms();
	agent_remote_start_pending = 1;
	agent_remote_start_id = id;
	if (agent_kernel_start(agent_remote_k, &cause) != 0) {
		agent_remote_start_pending = 0;
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	}
}

static void
agent_remote_execute(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_execute	 m;
	char				 err[256], *cause;
	char				*exec_id, *cell_id;

	if (proto_agent_execute_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	if (agent_remote_k == NULL) {
		peer_send_error(p, id, "kernel_unavailable",
		    "no kernel was started");
		return;
	}
	exec_id = xstrndup(m.exec_id.ptr, m.exec_id.len);
	cell_id = xstrndup(m.cell_id.ptr, m.cell_id.len);
	if (agent_exec_start(agent_remote_k, exec_id, cell_id, m.code.ptr,
	    m.code.len, m.stop_on_error, m.silent, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	}
	free(exec_id);
	free(cell_id);
}

static void
agent_remote_interrupt(struct peer *p, uint32_t id,
    const msgpack_object *body)
{
	char	err[256], *cause;

	if (proto_agent_interrupt_unpack(body, err, sizeof err) != 0)
		peer_send_error(p, id, "invalid_argument", "%s", err);
	else if (agent_remote_k == NULL)
		peer_send_error(p, id, "kernel_unavailable",
		    "no kernel was started");
	else if (agent_kernel_interrupt(agent_remote_k, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	} else
		peer_send_ok(p, id);
}

static void
agent_remote_shutdown(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_shutdown	m;
	char				err[256];

	if (agent_remote_shutdown_pending) {
		peer_send_error(p, id, "busy", "a shutdown is in progress");
		return;
	}
	if (proto_agent_shutdown_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	if (agent_remote_k == NULL) {
		if (m.restart)
			peer_send_error(p, id, "kernel_unavailable",
			    "no kernel was started");
		else
			peer_send_ok(p, id);
		return;
	}
	agent_remote_shutdown_pending = 1;
	agent_remote_shutdown_id = id;
	agent_remote_shutdown_restart = m.restart;
	agent_kernel_shutdown(agent_remote_k, m.restart,
	    agent_remote_shutdown_done, NULL);
}

static void
agent_remote_handshake(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body)
{
	struct proto_incarnation	 inc;
	char				 cause[256];
	int64_t				 version = -1;
	const char			*msg;
	size_t				 len;

	switch (hdr->type) {
	case PROTO_MSG_HELLO_OK:
		if (proto_hello_ok_unpack(body, &inc, cause,
		    sizeof cause) != 0) {
			log_warnx("bad HELLO_OK: %s", cause);
			peer_kill(p, "bad HELLO_OK");
			return;
		}
		agent_remote_hello_done = 1;
		return;
	case PROTO_MSG_VERSION_MISMATCH:
		proto_get_int(body, "version", &version);
		log_warnx("protocol version mismatch: agent %d, daemon %lld",
		    PROTO_VERSION, (long long)version);
		exit(1);
	case PROTO_MSG_ERROR:
		msg = proto_get_str(body, "message", &len);
		log_warnx("daemon refused us: %.*s", msg != NULL ?
		    (int)len : 0, msg != NULL ? msg : "");
		exit(1);
	default:
		peer_kill(p, "message before HELLO_OK");
		return;
	}
}

static void
agent_remote_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	if (hdr == NULL) {
		agent_remote_peer = NULL;
		if (!agent_remote_hello_done)
			exit(1);
		agent_remote_exit("daemon closed fd 3");
		return;
	}
	if (!agent_remote_hello_done) {
		agent_remote_handshake(p, hdr, body);
		return;
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_DAEMON)) {
		peer_send_error(p, hdr->id, "invalid_argument",
		    "runtimed-agent-remote does not handle %s",
		    proto_msg_name(hdr->type));
		return;
	}
	switch (hdr->type) {
	case PROTO_MSG_AGENT_START:
		agent_remote_start(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_EXECUTE:
		agent_remote_execute(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_INTERRUPT:
		agent_remote_interrupt(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_SHUTDOWN:
		agent_remote_shutdown(p, hdr->id, body);
		break;
	case PROTO_MSG_PING:
		peer_send_raw(p, PROTO_MSG_PONG, hdr->id, "\x80", 1);
		break;
	case PROTO_MSG_OK:
	case PROTO_MSG_ERROR:
	case PROTO_MSG_PONG:
		break;
	default:
		peer_send_error(p, hdr->id, "invalid_argument",
		    "runtimed-agent-remote does not handle %s",
		    proto_msg_name(hdr->type));
		break;
	}
}

static void
agent_remote_signal(evutil_socket_t sig, short events, void *arg)
{
	if (sig == SIGTERM)
		agent_remote_exit("SIGTERM");
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "domain", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "list-kernelspecs", no_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "path", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct proto_hello	 hello;
	struct event		*ev_term;
	struct mpbuf		 b;
	const char		*logfile = NULL, *name = NULL;
	char			*cause;
	int			 ch, level = LOG_LEVEL_WARN, list = 0, rc;

	while ((ch = getopt_long(argc, argv, "hqVv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			name = optarg;
			break;
		case 'h':
			agent_remote_usage(0);
		case 'V':
			printf("runtimed-agent-remote %s\n", RUNTIMED_VERSION);
			exit(0);
		case 'q':
			if (level > LOG_LEVEL_ERROR)
				level--;
			break;
		case 'v':
			if (level < LOG_LEVEL_DEBUG)
				level++;
			break;
		case 'l':
			logfile = optarg;
			break;
		case 'k':
			list = 1;
			break;
		case 'p':
			free(agent_remote_dir);
			agent_remote_dir = xstrdup(optarg);
			break;
		default:
			agent_remote_usage(1);
		}
	}
	if (optind != argc || name == NULL)
		agent_remote_usage(1);
	log_open("runtimed-agent-remote", level, logfile);
	if ((agent_remote_domain = domain_load(name, &cause)) == NULL) {
		fprintf(stderr, "runtimed-agent-remote: %s\n", cause);
		log_warnx("%s", cause);
		free(cause);
		return (1);
	}
	if (agent_remote_dir == NULL)
		agent_remote_dir = xstrdup("");
	signal(SIGPIPE, SIG_IGN);
	if (list) {
		rc = agent_remote_kernel_list_specs(agent_remote_domain);
		domain_free(agent_remote_domain);
		return (rc);
	}

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (fcntl(AGENT_REMOTE_FD, F_GETFD) == -1)
		fatalx("fd %d is not open: runtimed-agent-remote is started "
		    "by runtimed", AGENT_REMOTE_FD);
	util_set_cloexec(AGENT_REMOTE_FD);
	signal(SIGINT, SIG_IGN);

	if ((agent_remote_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	ev_term = evsignal_new(agent_remote_base, SIGTERM, agent_remote_signal,
	    NULL);
	evsignal_add(ev_term, NULL);
	agent_exec_init(agent_remote_base);

	agent_remote_peer = peer_create(agent_remote_base, AGENT_REMOTE_FD,
	    "daemon", agent_remote_dispatch, NULL);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_AGENT);
	snprintf(hello.label, sizeof hello.label,
	    "runtimed-agent-remote %ld", (long)getpid());
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	agent_send(PROTO_MSG_HELLO, 0, &b);
	mpbuf_free(&b);

	event_base_dispatch(agent_remote_base);

	agent_kernel_free(agent_remote_k);
	event_free(ev_term);
	domain_free(agent_remote_domain);
	free(agent_remote_dir);
	free(agent_remote_state);
	log_info("exit");
	log_close();
	return (0);
}
