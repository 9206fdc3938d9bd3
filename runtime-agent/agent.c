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
 *			   ERROR (same id) if the kernel cannot take it;
 *			   optional stop_on_error (default false) and
 *			   silent (no history, outputs not forwarded)
 *	AGENT_INTERRUPT	-> OK or ERROR
 *	AGENT_SHUTDOWN	-> OK once the old process is reaped; with
 *			   restart a new kernel is then launched and
 *			   announced with AGENT_READY id 0, or
 *			   AGENT_STATUS dead if it fails to come up
 */

#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

static __dead void
agent_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: runtimed-agent [-v] [--log file]\n"
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
agent_status(const char *state, const char *reason)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, reason != NULL ? 2 : 1);
	proto_pack_str(&b.pk, "state", state);
	if (reason != NULL)
		proto_pack_str(&b.pk, "reason", reason);
	agent_send(PROTO_MSG_AGENT_STATUS, 0, &b);
	mpbuf_free(&b);
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
		agent_status(agent_exec_is_busy() ? "busy" : "idle", NULL);
	else
		agent_status("unresponsive", why);
}

/* The kernel answered kernel_info: send AGENT_READY. */
void
agent_ready(struct agent_kernel *k, struct json_object *info)
{
	struct kernelspec	*ks = agent_kernel_spec(k);
	struct json_object	*v;
	struct mpbuf		 b;
	uint32_t		 id = 0;

	if (agent_start_pending) {
		id = agent_start_id;
		agent_start_pending = 0;
	}
	log_info("kernel ready %lld ms after the start request",
	    (long long)(util_mono_ms() - agent_start_ms));

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 6);
	proto_pack_int(&b.pk, "pid", agent_kernel_pid(k));
	proto_pack_str(&b.pk, "kernel_name", kernelspec_name(ks));
	proto_pack_str(&b.pk, "display_name",
	    kernelspec_display_name(ks));
	proto_pack_str(&b.pk, "language", kernelspec_language(ks));
	proto_pack_key(&b.pk, "language_info");
	if (json_object_object_get_ex(info, "language_info", &v) &&
	    json_object_is_type(v, json_type_object))
		mpjson_pack(&b.pk, v);
	else
		msgpack_pack_map(&b.pk, 0);
	if (json_object_object_get_ex(info, "protocol_version", &v) &&
	    json_object_is_type(v, json_type_string))
		proto_pack_str(&b.pk, "protocol_version",
		    json_object_get_string(v));
	else
		proto_pack_nil(&b.pk, "protocol_version");
	agent_send(PROTO_MSG_AGENT_READY, id, &b);
	mpbuf_free(&b);
}

/* The kernel never became ready. */
void
agent_failed(struct agent_kernel *k, const char *why)
{
	log_warnx("%s", why);
	agent_exec_clear();
	if (agent_start_pending) {
		agent_start_pending = 0;
		if (agent_peer != NULL)
			peer_send_error(agent_peer, agent_start_id,
			    "kernel_unavailable", "%s", why);
	} else
		agent_status("dead", why);
}

/* The kernel died while ready; the daemon fails the run in flight. */
void
agent_died(struct agent_kernel *k, const char *reason)
{
	log_warnx("kernel %s", reason);
	agent_exec_clear();
	agent_status("dead", reason);
}

/* Shutdown finished: answer, restart, or leave. */
static void
agent_shutdown_done(struct agent_kernel *k, void *arg)
{
	char	*cause;

	agent_exec_clear();
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
			agent_status("dead", cause);
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
	struct kernelspec	*ks;
	struct stat		 sb;
	char			*kernel_id, *name, *cwd, *rdir, *cause, *real;

	if (agent_k != NULL && agent_kernel_is_running(agent_k)) {
		peer_send_error(p, id, "invalid_argument",
		    "kernel already started");
		return;
	}
	kernel_id = proto_dup_str(body, "kernel_id");
	name = proto_dup_str(body, "kernel_name");
	cwd = proto_dup_str(body, "cwd");
	rdir = proto_dup_str(body, "runtime_dir");
	free(agent_state);
	agent_state = proto_dup_str(body, "state_dir");
	if (kernel_id == NULL || name == NULL || cwd == NULL ||
	    rdir == NULL) {
		peer_send_error(p, id, "invalid_argument", "AGENT_START needs "
		    "kernel_id, kernel_name, cwd and runtime_dir");
		goto out;
	}
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

/* AGENT_EXECUTE {exec_id, cell_id, code, stop_on_error?}. */
static void
agent_execute(struct peer *p, uint32_t id, const msgpack_object *body)
{
	char	*exec_id, *cell_id, *code, *cause;
	int	 stop_on_error = 0, silent = 0;

	exec_id = proto_dup_str(body, "exec_id");
	cell_id = proto_dup_str(body, "cell_id");
	code = proto_dup_str(body, "code");
	proto_get_bool(body, "stop_on_error", &stop_on_error);
	proto_get_bool(body, "silent", &silent);
	if (exec_id == NULL || cell_id == NULL || code == NULL)
		peer_send_error(p, id, "invalid_argument",
		    "AGENT_EXECUTE needs exec_id, cell_id and code");
	else if (agent_k == NULL)
		peer_send_error(p, id, "kernel_unavailable",
		    "no kernel was started");
	else if (agent_exec_start(agent_k, exec_id, cell_id, code,
	    stop_on_error, silent, &cause) != 0) {
		peer_send_error(p, id, "kernel_unavailable", "%s", cause);
		free(cause);
	}
	free(exec_id);
	free(cell_id);
	free(code);
}

/* AGENT_SHUTDOWN {restart?}. */
static void
agent_shutdown(struct peer *p, uint32_t id, const msgpack_object *body)
{
	int	restart = 0;

	if (agent_shutdown_pending) {
		peer_send_error(p, id, "busy", "a shutdown is in progress");
		return;
	}
	proto_get_bool(body, "restart", &restart);
	if (agent_k == NULL) {
		if (restart)
			peer_send_error(p, id, "kernel_unavailable",
			    "no kernel was started");
		else
			peer_send_ok(p, id);
		return;
	}
	agent_shutdown_pending = 1;
	agent_shutdown_id = id;
	agent_shutdown_restart = restart;
	agent_kernel_shutdown(agent_k, restart, agent_shutdown_done, NULL);
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
	char	*cause;

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
		if (agent_k == NULL)
			peer_send_error(p, hdr->id, "kernel_unavailable",
			    "no kernel was started");
		else if (agent_kernel_interrupt(agent_k, &cause) != 0) {
			peer_send_error(p, hdr->id, "kernel_unavailable",
			    "%s", cause);
			free(cause);
		} else
			peer_send_ok(p, hdr->id);
		break;
	case PROTO_MSG_AGENT_SHUTDOWN:
		agent_shutdown(p, hdr->id, body);
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
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	struct proto_hello	 hello;
	struct event		*ev_chld, *ev_term;
	struct mpbuf		 b;
	const char		*logfile = NULL;
	struct json_object	*specs;
	int			 ch, level = LOG_LEVEL_WARN, list = 0;

	while ((ch = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			agent_usage(0);
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
