/* SPDX-License-Identifier: ISC */
/*
 * agent.c: runtimed-agent, one per kernel.
 *
 * The daemon starts us with one end of a socketpair as fd 3 and nothing
 * else.  We say HELLO, wait for HELLO_OK, then serve AGENT_* requests
 * (PROTOCOL.md, "Daemon and agent").  When fd 3 goes away the daemon is
 * gone: shut the kernel down and exit 0.
 *
 * Replies and events:
 *	AGENT_START	-> AGENT_READY (same id) or ERROR
 *			   kernel_unavailable
 *	AGENT_EXECUTE	-> no reply on success, events carry exec_id;
 *			   ERROR (same id) if the kernel cannot take it
 *			   (the daemon then ends that run as error);
 *			   optional stop_on_error (default false) and
 *			   silent (no history, outputs not forwarded)
 *	AGENT_INTERRUPT	-> OK or ERROR
 *	AGENT_SHUTDOWN	-> OK once the old process is reaped; with
 *			   restart a new kernel is then launched and
 *			   announced with AGENT_READY id 0, or
 *			   AGENT_STATUS dead if it fails to come up
 *	AGENT_VARIABLES, AGENT_COMPLETE, AGENT_INSPECT
 *			-> KERNEL_*_REPLY or ERROR (agent-introspect.c)
 *	AGENT_INPUT_REPLY -> OK or ERROR (agent-stdin.c)
 */

#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_FD	3

static struct event_base	*agent_base;
static struct peer		*agent_peer;
static struct agent_kernel	*agent_k;
static int			 agent_hello_done;
static int			 agent_exiting;

static int			 agent_start_pending;
static uint32_t			 agent_start_id;
static int64_t			 agent_start_ms;

static char			*agent_state;	/* blob store root */

static int			 agent_shutdown_pending;
static uint32_t			 agent_shutdown_id;
static int			 agent_shutdown_restart;

static __dead void	agent_usage(int);
static void	agent_status(enum proto_agent_state, const char *);
static void	agent_pack_json(msgpack_packer *, const void *);
static void	agent_shutdown_done(struct agent_kernel *, void *);
static void	agent_exit(const char *);
static void	agent_start(struct peer *, uint32_t, const msgpack_object *);
static void	agent_execute(struct peer *, uint32_t, const msgpack_object *);
static void	agent_interrupt(struct peer *, uint32_t,
		    const msgpack_object *);
static void	agent_shutdown(struct peer *, uint32_t, const msgpack_object *);
static void	agent_handshake(struct peer *, const struct proto_header *,
		    const msgpack_object *);
static void	agent_dispatch(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);
static void	agent_signal(evutil_socket_t, short, void *);
static void	agent_cleanup(void);

static __dead void
agent_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-agent [-hqVv] [--log file]\n"
	    "       runtimed-agent --list-kernelspecs\n"
	    "Started by runtimed with its socket as fd 3; see "
	    "runtimed-agent(8).\n");
	exit(status);
}

/* Send a frame to the daemon if it is still there. */
void
agent_send(uint16_t type, uint32_t id, struct mpbuf *b)
{
	if (agent_peer != NULL)
		peer_send(agent_peer, type, id, &b->sb);
}

/* Send AGENT_STATUS {state, reason}. */
static void
agent_status(enum proto_agent_state state, const char *reason)
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
	return (agent_base);
}

/* Where large outputs go; NULL when the daemon gave no state dir. */
const char *
agent_state_dir(void)
{
	return (agent_state);
}

/* The heartbeat stopped or came back: AGENT_STATUS says which. */
void
agent_responsive(struct agent_kernel *k, int ok, const char *why)
{
	if (ok)
		agent_status(agent_exec_is_busy() ? PROTO_AGENT_BUSY :
		    PROTO_AGENT_IDLE, NULL);
	else
		agent_status(PROTO_AGENT_UNRESPONSIVE, why);
}

static void
agent_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* The kernel answered kernel_info: send AGENT_READY. */
void
agent_ready(struct agent_kernel *k, struct json_object *info)
{
	struct kernelspec		*ks = agent_kernel_spec(k);
	struct proto_agent_ready	 m;
	struct json_object		*v, *empty = NULL, *caps;
	struct mpbuf			 b;
	uint32_t			 id = 0;

	if (agent_start_pending) {
		id = agent_start_id;
		agent_start_pending = 0;
	}
	log_info("kernel ready %lld ms after the start request",
	    (long long)(util_mono_ms() - agent_start_ms));

	memset(&m, 0, sizeof m);
	m.pid = agent_kernel_pid(k);
	m.kernel_name = agent_str(kernelspec_name(ks));
	m.display_name = agent_str(kernelspec_display_name(ks));
	m.language = agent_str(kernelspec_language(ks));
	m.language_info.pack = agent_pack_json;
	if (json_object_object_get_ex(info, "language_info", &v) &&
	    json_object_is_type(v, json_type_object))
		m.language_info.arg = v;
	else
		m.language_info.arg = empty = json_object_new_object();
	if (json_object_object_get_ex(info, "protocol_version", &v) &&
	    json_object_is_type(v, json_type_string))
		m.protocol_version = agent_str(json_object_get_string(v));
	caps = agent_introspect_caps(k, info);
	m.capabilities.pack = agent_pack_json;
	m.capabilities.arg = caps;
	mpbuf_init(&b);
	proto_agent_ready_pack(&b.pk, &m);
	agent_send(PROTO_MSG_AGENT_READY, id, &b);
	mpbuf_free(&b);
	json_object_put(empty);
	json_object_put(caps);
}

/* The kernel never became ready. */
void
agent_failed(struct agent_kernel *k, const char *why)
{
	log_warnx("%s", why);
	agent_exec_clear();
	agent_stdin_clear();
	agent_introspect_clear();
	if (agent_start_pending) {
		agent_start_pending = 0;
		if (agent_peer != NULL)
			peer_send_error(agent_peer, agent_start_id,
			    "kernel_unavailable", "%s", why);
	} else
		agent_status(PROTO_AGENT_DEAD, why);
}

/* The kernel died while ready; the daemon fails the run in flight. */
void
agent_died(struct agent_kernel *k, const char *reason)
{
	log_warnx("kernel %s", reason);
	agent_exec_clear();
	agent_stdin_clear();
	agent_introspect_clear();
	agent_status(PROTO_AGENT_DEAD, reason);
}

/* Shutdown finished: answer, restart, or leave. */
static void
agent_shutdown_done(struct agent_kernel *k, void *arg)
{
	char	*cause;

	agent_exec_clear();
	agent_stdin_clear();
	agent_introspect_clear();
	if (agent_start_pending) {
		agent_start_pending = 0;
		if (agent_peer != NULL)
			peer_send_error(agent_peer, agent_start_id,
			    "kernel_unavailable",
			    "kernel was shut down before it was ready");
	}
	if (agent_exiting) {
		event_base_loopexit(agent_base, NULL);
		return;
	}
	if (!agent_shutdown_pending)
		return;
	agent_shutdown_pending = 0;
	if (agent_peer != NULL)
		peer_send_ok(agent_peer, agent_shutdown_id);
	if (agent_shutdown_restart) {
		agent_start_ms = util_mono_ms();
		if (agent_kernel_start(k, &cause) != 0) {
			log_warnx("restart: %s", cause);
			agent_status(PROTO_AGENT_DEAD, cause);
			free(cause);
		}
	}
}

/* Leave: stop the kernel first, then break the loop. */
static void
agent_exit(const char *why)
{
	if (agent_exiting)
		return;
	agent_exiting = 1;
	log_info("exiting: %s", why);
	if (agent_k != NULL && agent_kernel_is_running(agent_k))
		agent_kernel_shutdown(agent_k, 0, agent_shutdown_done, NULL);
	else
		event_base_loopexit(agent_base, NULL);
}

/* AGENT_START {kernel_id, kernel_name, cwd, runtime_dir, state_dir?}. */
static void
agent_start(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_start	 m;
	struct kernelspec		*ks;
	struct stat			 sb;
	char				 err[256];
	char				*kernel_id, *name, *cwd, *rdir;
	char				*cause, *real;

	if (agent_k != NULL && agent_kernel_is_running(agent_k)) {
		peer_send_error(p, id, "invalid_argument",
		    "kernel already started");
		return;
	}
	if (proto_agent_start_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	kernel_id = xstrndup(m.kernel_id.ptr, m.kernel_id.len);
	name = xstrndup(m.kernel_name.ptr, m.kernel_name.len);
	cwd = xstrndup(m.cwd.ptr, m.cwd.len);
	rdir = xstrndup(m.runtime_dir.ptr, m.runtime_dir.len);
	free(agent_state);
	agent_state = m.state_dir.ptr != NULL ?
	    xstrndup(m.state_dir.ptr, m.state_dir.len) : NULL;
	if (stat(cwd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		peer_send_error(p, id, "kernel_unavailable",
		    "working directory %s is not a directory", cwd);
		goto out;
	}
	if (sockdir_check_dir(rdir, 0, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable",
		    "runtime directory: %s", cause);
		free(cause);
		goto out;
	}
	/* The kernel runs in cwd, so its connection file path is absolute. */
	if ((real = util_realpath_new(rdir)) == NULL) {
		peer_send_error(p, id, "kernel_unavailable",
		    "runtime directory %s: %s", rdir, strerror(errno));
		goto out;
	}
	free(rdir);
	rdir = real;
	if ((real = util_realpath_new(cwd)) != NULL) {
		free(cwd);
		cwd = real;
	}
	if ((ks = kernelspec_find(name, &cause)) == NULL) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
		goto out;
	}

	agent_kernel_free(agent_k);
	agent_k = agent_kernel_create(agent_base, ks, kernel_id, cwd, rdir);
	agent_start_ms = util_mono_ms();
	agent_start_pending = 1;
	agent_start_id = id;
	if (agent_kernel_start(agent_k, &cause) != 0) {
		agent_start_pending = 0;
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	}

out:
	free(kernel_id);
	free(name);
	free(cwd);
	free(rdir);
}

/*
 * AGENT_EXECUTE {exec_id, cell_id, code, stop_on_error?, silent?}.  The
 * code may hold NUL: the Jupyter message carries it as \u0000 and the
 * kernel judges it.
 */
static void
agent_execute(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_execute	 m;
	char				 err[256], *cause;
	char				*exec_id, *cell_id;

	if (proto_agent_execute_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	if (agent_k == NULL) {
		peer_send_error(p, id, "kernel_unavailable",
		    "no kernel was started");
		return;
	}
	exec_id = xstrndup(m.exec_id.ptr, m.exec_id.len);
	cell_id = xstrndup(m.cell_id.ptr, m.cell_id.len);
	if (agent_exec_start(agent_k, exec_id, cell_id, m.code.ptr,
	    m.code.len, m.stop_on_error, m.silent, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	}
	free(exec_id);
	free(cell_id);
}

/* AGENT_INTERRUPT {}. */
static void
agent_interrupt(struct peer *p, uint32_t id, const msgpack_object *body)
{
	char	err[256], *cause;

	if (proto_agent_interrupt_unpack(body, err, sizeof err) != 0)
		peer_send_error(p, id, "invalid_argument", "%s", err);
	else if (agent_k == NULL)
		peer_send_error(p, id, "kernel_unavailable",
		    "no kernel was started");
	else if (agent_kernel_interrupt(agent_k, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	} else
		peer_send_ok(p, id);
}

/* AGENT_SHUTDOWN {restart?}. */
static void
agent_shutdown(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct proto_agent_shutdown	m;
	char				err[256];

	if (agent_shutdown_pending) {
		peer_send_error(p, id, "busy", "a shutdown is in progress");
		return;
	}
	if (proto_agent_shutdown_unpack(body, &m, err, sizeof err) != 0) {
		peer_send_error(p, id, "invalid_argument", "%s", err);
		return;
	}
	if (agent_k == NULL) {
		if (m.restart)
			peer_send_error(p, id, "kernel_unavailable",
			    "no kernel was started");
		else
			peer_send_ok(p, id);
		return;
	}
	agent_shutdown_pending = 1;
	agent_shutdown_id = id;
	agent_shutdown_restart = m.restart;
	agent_kernel_shutdown(agent_k, m.restart, agent_shutdown_done, NULL);
}

/* Before HELLO_OK only the handshake answers are accepted. */
static void
agent_handshake(struct peer *p, const struct proto_header *hdr,
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
		log_info("daemon pid %lld version %s accepted us",
		    (long long)inc.pid, inc.version);
		agent_hello_done = 1;
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
		log_warnx("%s before HELLO_OK", proto_msg_name(hdr->type));
		peer_kill(p, "message before HELLO_OK");
		return;
	}
}

/* One frame from the daemon, or its loss. */
static void
agent_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	if (hdr == NULL) {
		agent_peer = NULL;
		if (!agent_hello_done) {
			log_warnx("daemon closed fd 3 during the handshake");
			exit(1);
		}
		agent_exit("daemon closed fd 3");
		return;
	}
	if (!agent_hello_done) {
		agent_handshake(p, hdr, body);
		return;
	}
	log_debug("%s: %s id %u", __func__, proto_msg_name(hdr->type),
	    hdr->id);
	if (!proto_msg_from(hdr->type, PROTO_FROM_DAEMON)) {
		peer_send_error(p, hdr->id, "invalid_argument",
		    "runtimed-agent does not handle %s",
		    proto_msg_name(hdr->type));
		return;
	}

	switch (hdr->type) {
	case PROTO_MSG_AGENT_START:
		agent_start(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_EXECUTE:
		agent_execute(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_INTERRUPT:
		agent_interrupt(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_SHUTDOWN:
		agent_shutdown(p, hdr->id, body);
		break;
	case PROTO_MSG_AGENT_VARIABLES:
		agent_introspect_variables(p, hdr->id, body, agent_k);
		break;
	case PROTO_MSG_AGENT_COMPLETE:
		agent_introspect_complete(p, hdr->id, body, agent_k);
		break;
	case PROTO_MSG_AGENT_INSPECT:
		agent_introspect_inspect(p, hdr->id, body, agent_k);
		break;
	case PROTO_MSG_AGENT_INPUT_REPLY:
		agent_stdin_reply(p, hdr->id, body, agent_k);
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
		    "runtimed-agent does not handle %s",
		    proto_msg_name(hdr->type));
		break;
	}
}

static void
agent_signal(evutil_socket_t sig, short events, void *arg)
{
	switch (sig) {
	case SIGCHLD:
		if (agent_k != NULL)
			agent_kernel_sigchld(agent_k);
		break;
	case SIGTERM:
		agent_exit("SIGTERM");
		break;
	}
}

/* fatal() cleanup: never leave a kernel behind. */
static void
agent_cleanup(void)
{
	agent_kernel_emergency(agent_k);
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "list-kernelspecs", no_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct proto_hello	 hello;
	struct event		*ev_chld, *ev_term;
	struct mpbuf		 b;
	const char		*logfile = NULL;
	struct json_object	*specs;
	int			 ch, level = LOG_LEVEL_WARN, list = 0;

	/*
	 * One malloc arena: libzmq's I/O thread would otherwise get one of
	 * its own, which keeps what a burst of output left in it.
	 */
	mallopt(M_ARENA_MAX, 1);

	while ((ch = getopt_long(argc, argv, "hqVv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			agent_usage(0);
		case 'V':
			printf("runtimed-agent %s\n", RUNTIMED_VERSION);
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
		default:
			agent_usage(1);
		}
	}
	if (optind != argc)
		agent_usage(1);
	log_open("runtimed-agent", level, logfile);
	fatal_set_cleanup(agent_cleanup);

	/* For list_kernels: the installed kernelspecs as JSON on stdout. */
	if (list) {
		specs = kernelspec_list();
		printf("%s\n", json_object_to_json_string_ext(specs,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(specs);
		return (fflush(stdout) == 0 ? 0 : 1);
	}

	/* The daemon owns us: die with it even if fd 3 lingers. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (fcntl(AGENT_FD, F_GETFD) == -1)
		fatalx("fd %d is not open: runtimed-agent is started by "
		    "runtimed", AGENT_FD);
	util_set_cloexec(AGENT_FD);

	/* SIGINT is for the kernel's process group, never for us. */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);

	if ((agent_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	ev_chld = evsignal_new(agent_base, SIGCHLD, agent_signal, NULL);
	ev_term = evsignal_new(agent_base, SIGTERM, agent_signal, NULL);
	evsignal_add(ev_chld, NULL);
	evsignal_add(ev_term, NULL);
	agent_exec_init(agent_base);

	agent_peer = peer_create(agent_base, AGENT_FD, "daemon",
	    agent_dispatch, NULL);
	memset(&hello, 0, sizeof hello);
	hello.version = PROTO_VERSION;
	snprintf(hello.kind, sizeof hello.kind, "%s", PROTO_PEER_AGENT);
	snprintf(hello.label, sizeof hello.label, "runtimed-agent %ld",
	    (long)getpid());
	hello.pid = getpid();
	mpbuf_init(&b);
	proto_hello_pack(&b.pk, &hello);
	agent_send(PROTO_MSG_HELLO, 0, &b);
	mpbuf_free(&b);

	event_base_dispatch(agent_base);

	agent_kernel_free(agent_k);
	agent_k = NULL;
	event_free(ev_chld);
	event_free(ev_term);
	free(agent_state);
	log_info("exit");
	log_close();
	return (0);
}
