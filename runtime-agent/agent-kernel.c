/* SPDX-License-Identifier: ISC */
/*
 * agent-kernel.c: one Jupyter kernel process and its ZeroMQ sockets.
 *
 * This is the only file that includes zmq.h.  It writes the connection
 * file, launches the kernel in its own session, connects the shell,
 * control, stdin and iopub sockets and feeds them into libevent, waits
 * for the kernel to answer kernel_info, reaps it, and shuts it down with
 * the same escalation as jupyter_client (request, SIGTERM, SIGKILL).
 *
 * Whether the kernel is alive is agent-heartbeat.c's to judge; this file
 * sends its pings and hands it the echoes.  What the kernel prints goes
 * to agent-stderr.c.
 *
 * Kernels listen on ipc sockets in a private directory of their own,
 * /tmp/rtdk-XXXXXX (mkdtemp, 0700), so no other local user can connect
 * to them; the path is short because xeus kernels abort on an ipc
 * endpoint over 31 characters (docs/decisions/060).  A kernel that
 * cannot do ipc is started again on tcp 127.0.0.1: one that dies or
 * stays silent before it has bound the five sockets we named, or that
 * binds anything else in the directory (another reading of the ipc
 * convention).  AGENT_READY says so, and the daemon starts later
 * kernels of that kernelspec on tcp at once (agent_kernel_set_tcp).
 *
 * On tcp the ports are chosen as jupyter_client chooses them (bound to
 * port 0 together, then released; decision 008).  A port can be taken
 * by someone else between our choice and the kernel's bind: a kernel
 * that fails to start while one of its ports is held by another process
 * is started again on new ports, a bounded number of times.
 *
 * A kernel is ready when it has answered kernel_info on shell, published
 * on iopub, and our stdin socket has finished its handshake with the
 * kernel's (a socket monitor says so).  The kernel's stdin is a ROUTER,
 * which drops a message to a peer it does not know yet: a cell calling
 * input() before our stdin had connected asked nobody and waited for
 * good (issue 36, item 9; the sockets reconnect on their own timers, so
 * on a loaded machine stdin can come last).  A kernel whose stdin never
 * connects is called ready AGENT_KERNEL_STDIN_GRACE_MS later anyway, or
 * just before the start bound, whichever comes first.
 *
 * iopub holds at most 128 messages in the agent, each frame at most 64
 * MiB (decision 078): the kernel's own queue holds the rest, and iopub is
 * not read while the daemon is behind.  libzmq drops the connection on a
 * larger frame and a SUB never reconnects after that, so a second
 * monitor watches iopub and makes it again.
 *
 * ZMQ_FD is edge-triggered: it only says "the state of this socket
 * changed".  So every wakeup, and every send (which can consume that
 * edge), is followed by reading ZMQ_EVENTS and receiving until no
 * ZMQ_POLLIN is left.
 */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <zmq.h>

#include "agent.h"

extern char **environ;

/*
 * Slow joiner: probe every 100 ms, give up after 30 s (env
 * RUNTIMED_KERNEL_START_SECS).
 */
#define AGENT_KERNEL_PROBE_MS		100
#define AGENT_KERNEL_START_MS		30000
/* A kernel dying this soon after SIGINT died of the interrupt. */
#define AGENT_KERNEL_INTERRUPT_MS	5000
/* Shutdown escalation: request, SIGTERM, SIGKILL, each given 2 s. */
#define AGENT_KERNEL_STOP_MS		2000
/* Signatures remembered against replays, as jupyter_client's 2^16. */
#define AGENT_KERNEL_SEEN		32768
/* Where kernels listen, and how often a port race is retried. */
#define AGENT_KERNEL_IP			"127.0.0.1"
/*
 * The ipc directory; "<dir>/k" is the connection file's ip, 18
 * characters: xeus-python 0.14 aborts past 23 (its endpoint buffer).
 */
#define AGENT_KERNEL_IPC_DIR		"/tmp/rtdk-XXXXXX"
#define AGENT_KERNEL_IPC_NAME		"k"
#define AGENT_KERNEL_START_TRIES	3
/* How long a kernel that answers may wait for its stdin to connect. */
#define AGENT_KERNEL_STDIN_GRACE_MS	10000
/*
 * What iopub may hold in the agent: at most AGENT_KERNEL_IOPUB_HWM
 * messages wait in libzmq (past them the kernel's PUB keeps them, and
 * drops them past its own mark: ipykernel's is 1000), each frame at most
 * AGENT_KERNEL_IOPUB_MAX bytes.  A larger frame makes libzmq drop the
 * connection before it allocates it, and a SUB does not reconnect after
 * that (a protocol error ends its session): a monitor sees the
 * disconnect and the socket is made again (agent_kernel_iopub_renew).
 */
#define AGENT_KERNEL_IOPUB_MAX		(64 * 1024 * 1024)
#define AGENT_KERNEL_IOPUB_HWM		128

enum agent_kernel_state {
	AGENT_KERNEL_NONE,		/* never started */
	AGENT_KERNEL_STARTING,		/* waiting for kernel_info */
	AGENT_KERNEL_READY,
	AGENT_KERNEL_STOPPING,		/* shutdown escalation running */
	AGENT_KERNEL_DEAD,		/* exited; may be started again */
};

struct agent_kernel_sock {
	struct agent_kernel	*k;
	enum agent_channel	 channel;
	void			*zs;
	struct event		*ev;
	int			 draining;
};

struct agent_kernel {
	struct event_base	*base;
	struct kernelspec	*spec;
	char			*kernel_id;
	char			*cwd;
	char			*runtime_dir;
	char			*conn_file;
	int			 ports[AGENT_NCHANNELS];
	char			*ipc_dir;	/* NULL: on tcp */
	int			 ipc_bound;	/* our sockets seen */
	int			 ipc_foreign;	/* something else there */
	int			 tcp_only;	/* ipc failed it */
	int			 tcp_fallback;	/* ...this start */
	int			 tries;		/* launches so far */
	int			 start_timeout;	/* no kernel_info */
	char			 key[65];
	char			 session[37];
	struct agent_wire_seen	*seen;		/* against replays */

	void			*zctx;
	struct agent_kernel_sock socks[AGENT_NCHANNELS];

	enum agent_kernel_state	 state;
	pid_t			 pid;

	struct agent_stderr	*err;		/* its stdout and stderr */

	struct event		*probe_ev;
	int64_t			 start_ms;
	int			 got_iopub;
	struct json_object	*info;
	void			*stdin_mon;	/* PAIR: stdin's events */
	void			*iopub_mon;	/* PAIR: iopub's disconnects */
	struct event		*iopub_mon_ev;
	int			 iopub_held;	/* the daemon is behind */
	int			 stdin_up;	/* its handshake is done */
	int64_t			 answered_ms;	/* info and iopub came */

	struct agent_heartbeat	*hb;
	int64_t			 interrupt_ms;	/* last SIGINT */
	int64_t			 start_max_ms;

	struct event		*stop_ev;
	int			 stop_stage;
	void			(*stop_cb)(struct agent_kernel *, void *);
	void			*stop_arg;
};

static void	agent_kernel_drain(struct agent_kernel_sock *);
static void	agent_kernel_close(struct agent_kernel *);
static int	agent_kernel_write_conn(struct agent_kernel *, char **);
static int	agent_kernel_pick_ports(struct agent_kernel *, char **);
static int	agent_kernel_port_taken(struct agent_kernel *);
static char	*agent_kernel_endpoint(struct agent_kernel *,
		    enum agent_channel);
static int	agent_kernel_ipc_open(struct agent_kernel *);
static void	agent_kernel_ipc_scan(struct agent_kernel *);
static void	agent_kernel_ipc_remove(struct agent_kernel *);
static int	agent_kernel_ipc_fallback(struct agent_kernel *,
		    const char *);
static void	agent_kernel_sock_cb(evutil_socket_t, short, void *);
static int	agent_kernel_connect(struct agent_kernel *, enum agent_channel,
		    int, char **);
static char	**agent_kernel_envp(struct agent_kernel *);
static void	agent_kernel_strv_free(char **);
static __dead void	agent_kernel_child(struct agent_kernel *, pid_t, int,
		    char **, char **);
static void	agent_kernel_probe_cb(evutil_socket_t, short, void *);
static int	agent_kernel_launch(struct agent_kernel *, char **);
static void	agent_kernel_start_failed(struct agent_kernel *, const char *);
static void	agent_kernel_starting(struct agent_kernel *, enum agent_channel,
		    struct agent_wire_msg *);
static void	agent_kernel_maybe_ready(struct agent_kernel *);
static void	agent_kernel_stdin_watch(struct agent_kernel *);
static void	*agent_kernel_monitor(struct agent_kernel *, int, const char *,
		    int);
static void	 agent_kernel_monitor_stop(struct agent_kernel *, int, void **);
static void	agent_kernel_stdin_unwatch(struct agent_kernel *);
static void	agent_kernel_iopub_watch(struct agent_kernel *);
static void	agent_kernel_iopub_unwatch(struct agent_kernel *);
static void	agent_kernel_iopub_mon_cb(evutil_socket_t, short, void *);
static void	agent_kernel_iopub_renew(struct agent_kernel *);
static void	agent_kernel_iopub_resume(void *);
static int	agent_kernel_recv(struct agent_kernel_sock *);
static void	agent_kernel_stopped(struct agent_kernel *);
static void	agent_kernel_stop_cb(evutil_socket_t, short, void *);

/* Create a kernel object; nothing runs until agent_kernel_start. */
struct agent_kernel *
agent_kernel_create(struct event_base *base, struct kernelspec *spec,
    const char *kernel_id, const char *cwd, const char *runtime_dir)
{
	struct agent_kernel	*k;
	const char		*env;
	int			 i;

	k = xcalloc(1, sizeof *k);
	k->start_max_ms = AGENT_KERNEL_START_MS;
	if ((env = getenv("RUNTIMED_KERNEL_START_SECS")) != NULL &&
	    atoi(env) > 0)
		k->start_max_ms = (int64_t)atoi(env) * 1000;
	k->base = base;
	k->hb = agent_heartbeat_create(base, k);
	k->spec = spec;
	k->kernel_id = xstrdup(kernel_id);
	k->cwd = xstrdup(cwd);
	k->runtime_dir = xstrdup(runtime_dir);
	k->pid = -1;
	k->err = agent_stderr_create(base);
	k->state = AGENT_KERNEL_NONE;
	for (i = 0; i < AGENT_NCHANNELS; i++) {
		k->socks[i].k = k;
		k->socks[i].channel = i;
	}
	if ((k->zctx = zmq_ctx_new()) == NULL)
		fatal("zmq_ctx_new");
	return (k);
}

/* Free a kernel; kills the process group if it is still there. */
void
agent_kernel_free(struct agent_kernel *k)
{
	if (k == NULL)
		return;
	if (k->pid > 0) {
		killpg(k->pid, SIGKILL);
		waitpid(k->pid, NULL, 0);
		k->pid = -1;
	}
	agent_kernel_close(k);
	if (k->stop_ev != NULL)
		event_free(k->stop_ev);
	agent_heartbeat_free(k->hb);
	agent_stderr_free(k->err);
	zmq_ctx_term(k->zctx);
	kernelspec_free(k->spec);
	agent_wire_seen_free(k->seen);
	free(k->kernel_id);
	free(k->cwd);
	free(k->runtime_dir);
	free(k->conn_file);
	free(k);
}

int
agent_kernel_is_ready(struct agent_kernel *k)
{
	return (k->state == AGENT_KERNEL_READY);
}

/* Is a kernel process starting, running or stopping? */
int
agent_kernel_is_running(struct agent_kernel *k)
{
	return (k->state == AGENT_KERNEL_STARTING ||
	    k->state == AGENT_KERNEL_READY ||
	    k->state == AGENT_KERNEL_STOPPING);
}

pid_t
agent_kernel_pid(struct agent_kernel *k)
{
	return (k->pid);
}

struct kernelspec *
agent_kernel_spec(struct agent_kernel *k)
{
	return (k->spec);
}

/* The kernelspec's metadata (introspection reads "debugger" there). */
struct json_object *
agent_kernel_metadata(struct agent_kernel *k)
{
	return (kernelspec_metadata(k->spec));
}

/* The last lines of the kernel's stderr as one line; caller frees. */
/* The 0700 directory of the connection file. */
const char *
agent_kernel_runtime_dir(struct agent_kernel *k)
{
	return (k->runtime_dir);
}

/* Where the kernel listens: "ipc", or "tcp" (decision 060). */
const char *
agent_kernel_transport(struct agent_kernel *k)
{
	return (k->ipc_dir != NULL ? "ipc" : "tcp");
}

/* Start it on tcp: the daemon saw this kernelspec fail on ipc. */
void
agent_kernel_set_tcp(struct agent_kernel *k)
{
	log_info("kernel %s: on tcp %s, as it could not start on ipc "
	    "before", kernelspec_name(k->spec), AGENT_KERNEL_IP);
	k->tcp_only = 1;
}

/* The kernel's last stderr lines, secrets redacted; caller frees. */
char *
agent_kernel_tail(struct agent_kernel *k)
{
	char	*tail, *red;
	size_t	 len, hold;

	tail = agent_stderr_tail(k->err);
	red = agent_redact_text(tail, strlen(tail), 1, &len, &hold, NULL);
	if (red == NULL)
		return (tail);
	free(tail);
	return (red);
}

/* Write the connection file, 0600, via a temporary name. */
static int
agent_kernel_write_conn(struct agent_kernel *k, char **cause)
{
	struct json_object	*obj;
	const char		*text;
	char			*tmp;
	size_t			 len;
	int			 fd;

	obj = json_object_new_object();
	json_object_object_add(obj, "shell_port",
	    json_object_new_int(k->ports[AGENT_CHANNEL_SHELL]));
	json_object_object_add(obj, "iopub_port",
	    json_object_new_int(k->ports[AGENT_CHANNEL_IOPUB]));
	json_object_object_add(obj, "stdin_port",
	    json_object_new_int(k->ports[AGENT_CHANNEL_STDIN]));
	json_object_object_add(obj, "control_port",
	    json_object_new_int(k->ports[AGENT_CHANNEL_CONTROL]));
	json_object_object_add(obj, "hb_port",
	    json_object_new_int(k->ports[AGENT_CHANNEL_HB]));
	if (k->ipc_dir != NULL) {
		xasprintf(&tmp, "%s/%s", k->ipc_dir, AGENT_KERNEL_IPC_NAME);
		json_object_object_add(obj, "ip",
		    json_object_new_string(tmp));
		free(tmp);
	} else
		json_object_object_add(obj, "ip",
		    json_object_new_string(AGENT_KERNEL_IP));
	json_object_object_add(obj, "key", json_object_new_string(k->key));
	json_object_object_add(obj, "transport",
	    json_object_new_string(k->ipc_dir != NULL ? "ipc" : "tcp"));
	json_object_object_add(obj, "signature_scheme",
	    json_object_new_string("hmac-sha256"));
	json_object_object_add(obj, "kernel_name",
	    json_object_new_string(kernelspec_name(k->spec)));
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(text);

	xasprintf(&tmp, "%s.tmp", k->conn_file);
	unlink(tmp);
	fd = open(tmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600);
	if (fd == -1 || fchmod(fd, 0600) == -1 ||
	    write(fd, text, len) != (ssize_t)len || close(fd) == -1 ||
	    rename(tmp, k->conn_file) == -1) {
		xasprintf(cause, "cannot write %s: %s", k->conn_file,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		unlink(tmp);
		free(tmp);
		json_object_put(obj);
		return (-1);
	}
	free(tmp);
	json_object_put(obj);
	return (0);
}

/*
 * Choose the five ports as jupyter_client does: bind that many sockets
 * to port 0 at once (so the ports differ), note them, close them.
 */
static int
agent_kernel_pick_ports(struct agent_kernel *k, char **cause)
{
	struct sockaddr_in	 sin;
	socklen_t		 len;
	int			 fds[AGENT_NCHANNELS], i, rc = 0;

	for (i = 0; i < AGENT_NCHANNELS; i++)
		fds[i] = -1;
	for (i = 0; i < AGENT_NCHANNELS; i++) {
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_port = 0;
		inet_pton(AF_INET, AGENT_KERNEL_IP, &sin.sin_addr);
		len = sizeof sin;
		if ((fds[i] = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC,
		    0)) == -1 ||
		    bind(fds[i], (struct sockaddr *)&sin, sizeof sin) == -1 ||
		    getsockname(fds[i], (struct sockaddr *)&sin, &len) == -1) {
			xasprintf(cause, "cannot choose a port on %s: %s",
			    AGENT_KERNEL_IP, strerror(errno));
			rc = -1;
			break;
		}
		k->ports[i] = ntohs(sin.sin_port);
	}
	for (i = 0; i < AGENT_NCHANNELS; i++) {
		if (fds[i] != -1)
			close(fds[i]);
	}
	return (rc);
}

/*
 * After a failed start: the first of our ports another process holds
 * (it cannot be bound even with SO_REUSEADDR, which only TIME_WAIT
 * passes), or 0.
 */
static int
agent_kernel_port_taken(struct agent_kernel *k)
{
	struct sockaddr_in	 sin;
	int			 fd, i, one = 1, taken = 0;

	if (k->ipc_dir != NULL)
		return (0);
	for (i = 0; i < AGENT_NCHANNELS && taken == 0; i++) {
		if (k->ports[i] == 0)
			continue;
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_port = htons(k->ports[i]);
		inet_pton(AF_INET, AGENT_KERNEL_IP, &sin.sin_addr);
		if ((fd = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)) == -1)
			return (0);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == -1 &&
		    errno == EADDRINUSE)
			taken = k->ports[i];
		close(fd);
	}
	return (taken);
}

/* Endpoint for one channel; caller frees. */
static char *
agent_kernel_endpoint(struct agent_kernel *k, enum agent_channel channel)
{
	char	*ep;

	/* jupyter_client's ipc endpoints are ipc://{ip}-{port}. */
	if (k->ipc_dir != NULL)
		xasprintf(&ep, "ipc://%s/%s-%d", k->ipc_dir,
		    AGENT_KERNEL_IPC_NAME, k->ports[channel]);
	else
		xasprintf(&ep, "tcp://%s:%d", AGENT_KERNEL_IP,
		    k->ports[channel]);
	return (ep);
}

/*
 * Make the private ipc directory of a launch and number the sockets
 * 1-5.  -1 (logged) if it cannot be made: the kernel goes on tcp.
 */
static int
agent_kernel_ipc_open(struct agent_kernel *k)
{
	char	tmpl[] = AGENT_KERNEL_IPC_DIR;
	int	i;

	/* mkdtemp makes it 0700; sticky /tmp keeps it ours. */
	if (mkdtemp(tmpl) == NULL) {
		log_warnx("kernel %s: cannot make an ipc directory in /tmp "
		    "(%s); it listens on tcp %s", kernelspec_name(k->spec),
		    strerror(errno), AGENT_KERNEL_IP);
		return (-1);
	}
	k->ipc_dir = xstrdup(tmpl);
	for (i = 0; i < AGENT_NCHANNELS; i++)
		k->ports[i] = i + 1;
	return (0);
}

/*
 * While it starts: how many of our five sockets the kernel has bound,
 * and whether it made anything else in the directory.
 */
static void
agent_kernel_ipc_scan(struct agent_kernel *k)
{
	DIR		*dp;
	struct dirent	*de;
	char		 want[16];
	int		 i, n = 0, ours;

	if (k->ipc_dir == NULL || (dp = opendir(k->ipc_dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		ours = 0;
		for (i = 0; i < AGENT_NCHANNELS && !ours; i++) {
			snprintf(want, sizeof want, "%s-%d",
			    AGENT_KERNEL_IPC_NAME, k->ports[i]);
			ours = strcmp(de->d_name, want) == 0;
		}
		if (ours)
			n++;
		else if (!k->ipc_foreign) {
			log_warnx("kernel %s made %s in its ipc directory, "
			    "not an endpoint of the connection file",
			    kernelspec_name(k->spec), de->d_name);
			k->ipc_foreign = 1;
		}
	}
	closedir(dp);
	if (n > k->ipc_bound)
		k->ipc_bound = n;
}

/* Remove the ipc directory and what the kernel left in it. */
static void
agent_kernel_ipc_remove(struct agent_kernel *k)
{
	DIR		*dp;
	struct dirent	*de;

	if (k->ipc_dir == NULL)
		return;
	/* 0700 and ours: only our kernel can have put anything there. */
	if ((dp = opendir(k->ipc_dir)) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				unlinkat(dirfd(dp), de->d_name, 0);
		}
		closedir(dp);
	}
	if (rmdir(k->ipc_dir) == -1)
		log_warnx("rmdir %s: %s", k->ipc_dir, strerror(errno));
	free(k->ipc_dir);
	k->ipc_dir = NULL;
}

static void
agent_kernel_sock_cb(evutil_socket_t fd, short events, void *arg)
{
	agent_kernel_drain(arg);
}

/* Create and connect one socket and hook its ZMQ_FD into libevent. */
static int
agent_kernel_connect(struct agent_kernel *k, enum agent_channel channel,
    int type, char **cause)
{
	struct agent_kernel_sock	*s = &k->socks[channel];
	char				*ep;
	int				 linger = 0, fd;
	int				 hwm = AGENT_KERNEL_IOPUB_HWM;
	int64_t				 max = AGENT_KERNEL_IOPUB_MAX;
	size_t				 fdlen = sizeof fd;

	if ((s->zs = zmq_socket(k->zctx, type)) == NULL)
		goto fail;
	if (zmq_setsockopt(s->zs, ZMQ_LINGER, &linger, sizeof linger) != 0)
		goto fail;
	if (type == ZMQ_DEALER && zmq_setsockopt(s->zs, ZMQ_ROUTING_ID,
	    k->session, strlen(k->session)) != 0)
		goto fail;
	if (type == ZMQ_SUB && zmq_setsockopt(s->zs, ZMQ_SUBSCRIBE, "", 0) != 0)
		goto fail;
	/*
	 * PUB/SUB drops messages silently at the high-water mark, but an
	 * unbounded one here held a 1 GB print in the agent (2.9 GB of RSS,
	 * issue 36): 128 messages wait here, the kernel's PUB holds the
	 * rest (see AGENT_KERNEL_IOPUB_HWM).
	 */
	if (type == ZMQ_SUB && (zmq_setsockopt(s->zs, ZMQ_RCVHWM, &hwm,
	    sizeof hwm) != 0 || zmq_setsockopt(s->zs, ZMQ_MAXMSGSIZE,
	    &max, sizeof max) != 0))
		goto fail;
	if (channel == AGENT_CHANNEL_STDIN)
		agent_kernel_stdin_watch(k);
	if (channel == AGENT_CHANNEL_IOPUB)
		agent_kernel_iopub_watch(k);
	ep = agent_kernel_endpoint(k, channel);
	if (zmq_connect(s->zs, ep) != 0) {
		free(ep);
		goto fail;
	}
	free(ep);
	if (zmq_getsockopt(s->zs, ZMQ_FD, &fd, &fdlen) != 0)
		goto fail;
	s->ev = event_new(k->base, fd, EV_READ|EV_PERSIST,
	    agent_kernel_sock_cb, s);
	event_add(s->ev, NULL);
	return (0);

fail:
	xasprintf(cause, "zmq socket for port %d: %s", k->ports[channel],
	    zmq_strerror(zmq_errno()));
	return (-1);
}

/*
 * Build the kernel's environment in the parent: after fork only
 * async-signal-safe calls are allowed, and libzmq has threads.
 */
static char **
agent_kernel_envp(struct agent_kernel *k)
{
	struct kernelspec	*ks = k->spec;
	char			**envp, **ep, *entry, *value;
	const char		*name;
	size_t			 n = 0, i, j, nlen;

	for (ep = environ; *ep != NULL; ep++)
		n++;
	envp = xcalloc(n + kernelspec_nenv(ks) + 3, sizeof *envp);
	n = 0;
	for (ep = environ; *ep != NULL; ep++)
		envp[n++] = xstrdup(*ep);

	for (i = 0; i < kernelspec_nenv(ks) + 2; i++) {
		if (i < kernelspec_nenv(ks)) {
			name = kernelspec_env_name(ks, i);
			value = kernelspec_env_value(ks, i);
			xasprintf(&entry, "%s=%s", name, value);
			free(value);
		} else if (i == kernelspec_nenv(ks)) {
			name = "PYDEVD_DISABLE_FILE_VALIDATION";
			entry = xstrdup("PYDEVD_DISABLE_FILE_VALIDATION=1");
		} else {
			name = "JPY_PARENT_PID";
			xasprintf(&entry, "JPY_PARENT_PID=%ld",
			    (long)getpid());
		}
		nlen = strlen(name);
		for (j = 0; j < n; j++) {
			if (strncmp(envp[j], name, nlen) == 0 &&
			    envp[j][nlen] == '=')
				break;
		}
		if (j < n)
			free(envp[j]);
		else
			n++;
		envp[j] = entry;
	}
	envp[n] = NULL;
	return (envp);
}

/* Free a NULL-terminated string vector. */
static void
agent_kernel_strv_free(char **v)
{
	char	**vp;

	for (vp = v; *vp != NULL; vp++)
		free(*vp);
	free(v);
}

/* Child side of fork: only async-signal-safe calls from here on. */
static __dead void
agent_kernel_child(struct agent_kernel *k, pid_t parent, int err_fd,
    char **argv, char **envp)
{
	struct sigaction	 sa;
	sigset_t		 set;
	int			 fd, sig;
	const char		*msg;

	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);

	/* We ignore SIGINT and SIGPIPE; the kernel must not inherit that. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);

	if ((fd = open("/dev/null", O_RDONLY)) != -1 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	dup2(err_fd, 1);
	dup2(err_fd, 2);
	close_range(3, ~0U, 0);

	if (chdir(k->cwd) == -1) {
		msg = "runtimed-agent: cannot change to the notebook "
		    "directory: ";
		write(2, msg, strlen(msg));
		msg = strerror(errno);
		write(2, msg, strlen(msg));
		write(2, "\n", 1);
		_exit(126);
	}
	execvpe(argv[0], argv, envp);
	msg = "runtimed-agent: cannot execute ";
	write(2, msg, strlen(msg));
	write(2, argv[0], strlen(argv[0]));
	write(2, ": ", 2);
	msg = strerror(errno);
	write(2, msg, strlen(msg));
	write(2, "\n", 1);
	_exit(127);
}

/* Send one kernel_info_request on shell: the slow-joiner probe. */
static void
agent_kernel_probe_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_kernel	*k = arg;
	struct timeval		 tv = { 0, AGENT_KERNEL_PROBE_MS * 1000 };
	char			 msg_id[37];

	if (k->state != AGENT_KERNEL_STARTING || k->start_timeout)
		return;
	agent_kernel_maybe_ready(k);
	if (k->state != AGENT_KERNEL_STARTING)
		return;
	agent_kernel_ipc_scan(k);
	if (k->ipc_foreign) {
		/* It read ipc its own way: no use waiting (_start_failed). */
		killpg(k->pid, SIGKILL);
		return;
	}
	if (util_mono_ms() - k->start_ms > k->start_max_ms) {
		/* Kill it now; the reap retries or reports (_start_failed). */
		log_warnx("kernel %s did not answer kernel_info within %d s",
		    kernelspec_name(k->spec), (int)(k->start_max_ms / 1000));
		k->start_timeout = 1;
		killpg(k->pid, SIGKILL);
		return;
	}
	/*
	 * Keep asking until iopub has delivered something too: the
	 * subscription may still be in flight when the first replies come,
	 * and only another request makes the kernel publish again.
	 */
	agent_kernel_send(k, AGENT_CHANNEL_SHELL, "kernel_info_request",
	    NULL, msg_id);
	evtimer_add(k->probe_ev, &tv);
}

/*
 * Ping the heartbeat; 0 when sent.  With reconnect the last ping's echo
 * never came: a REQ socket is then stuck waiting, so it is replaced.
 */
int
agent_kernel_ping(struct agent_kernel *k, int reconnect)
{
	struct agent_kernel_sock	*s = &k->socks[AGENT_CHANNEL_HB];
	char				*cause;

	if (reconnect) {
		if (s->ev != NULL)
			event_free(s->ev);
		s->ev = NULL;
		if (s->zs != NULL)
			zmq_close(s->zs);
		s->zs = NULL;
		if (agent_kernel_connect(k, AGENT_CHANNEL_HB, ZMQ_REQ,
		    &cause) != 0) {
			log_warnx("heartbeat: %s", cause);
			free(cause);
		}
	}
	if (s->zs == NULL || zmq_send(s->zs, "ping", 4, ZMQ_DONTWAIT) != 4)
		return (-1);
	return (0);
}

/* Read the heartbeat socket: a send consumes ZMQ_FD's edge. */
void
agent_kernel_ping_drain(struct agent_kernel *k)
{
	agent_kernel_drain(&k->socks[AGENT_CHANNEL_HB]);
}

/*
 * One launch: new ports, the connection file, fork and exec, connect.
 * Returns -1 with cause if the kernel could not even be launched.
 */
static int
agent_kernel_launch(struct agent_kernel *k, char **cause)
{
	char		**argv, **envp;
	int		 errpipe[2];
	pid_t		 pid, parent = getpid();

	k->tries++;
	k->start_timeout = 0;
	k->ipc_bound = k->ipc_foreign = 0;
	agent_stderr_reset(k->err);
	if ((k->tcp_only || agent_kernel_ipc_open(k) != 0) &&
	    agent_kernel_pick_ports(k, cause) != 0)
		return (-1);
	if (agent_kernel_write_conn(k, cause) != 0) {
		agent_kernel_ipc_remove(k);
		return (-1);
	}

	if (pipe2(errpipe, O_CLOEXEC) == -1) {
		xasprintf(cause, "pipe: %s", strerror(errno));
		unlink(k->conn_file);
		agent_kernel_ipc_remove(k);
		return (-1);
	}
	argv = kernelspec_argv(k->spec, k->conn_file);
	envp = agent_kernel_envp(k);
	/* The kernel's own environment says which values are secrets. */
	agent_redact_init(envp, 0);
	if (k->ipc_dir != NULL)
		log_info("starting kernel %s: %s ... (ipc in %s)",
		    kernelspec_name(k->spec), argv[0], k->ipc_dir);
	else
		log_info("starting kernel %s: %s ... (tcp ports "
		    "%d-%d-%d-%d-%d, try %d)", kernelspec_name(k->spec),
		    argv[0], k->ports[AGENT_CHANNEL_SHELL],
		    k->ports[AGENT_CHANNEL_IOPUB],
		    k->ports[AGENT_CHANNEL_STDIN],
		    k->ports[AGENT_CHANNEL_CONTROL],
		    k->ports[AGENT_CHANNEL_HB], k->tries);

	pid = fork();
	if (pid == 0)
		agent_kernel_child(k, parent, errpipe[1], argv, envp);
	close(errpipe[1]);
	kernelspec_argv_free(argv);
	agent_kernel_strv_free(envp);
	if (pid == -1) {
		xasprintf(cause, "fork: %s", strerror(errno));
		close(errpipe[0]);
		unlink(k->conn_file);
		agent_kernel_ipc_remove(k);
		return (-1);
	}
	k->pid = pid;
	k->state = AGENT_KERNEL_STARTING;
	k->start_ms = util_mono_ms();
	k->got_iopub = 0;
	k->stdin_up = 0;
	k->answered_ms = 0;

	agent_stderr_open(k->err, errpipe[0], pid);

	if (agent_kernel_connect(k, AGENT_CHANNEL_SHELL, ZMQ_DEALER,
	    cause) != 0 ||
	    agent_kernel_connect(k, AGENT_CHANNEL_CONTROL, ZMQ_DEALER,
	    cause) != 0 ||
	    agent_kernel_connect(k, AGENT_CHANNEL_STDIN, ZMQ_DEALER,
	    cause) != 0 ||
	    agent_kernel_connect(k, AGENT_CHANNEL_IOPUB, ZMQ_SUB,
	    cause) != 0 ||
	    agent_kernel_connect(k, AGENT_CHANNEL_HB, ZMQ_REQ,
	    cause) != 0) {
		/* The reap will clean up once it is gone. */
		k->state = AGENT_KERNEL_STOPPING;
		k->stop_stage = 2;
		killpg(k->pid, SIGKILL);
		return (-1);
	}

	k->probe_ev = evtimer_new(k->base, agent_kernel_probe_cb, k);
	agent_kernel_probe_cb(-1, 0, k);
	log_info("kernel %s pid %ld launched", kernelspec_name(k->spec),
	    (long)pid);
	return (0);
}

/*
 * Launch the kernel and start probing it.  The result arrives later
 * through agent_ready or agent_failed.  Returns -1 with
 * cause if it could not even be launched.
 */
int
agent_kernel_start(struct agent_kernel *k, char **cause)
{
	unsigned char	 raw[32];
	char		 shortid[9];
	size_t		 i;

	if (agent_kernel_is_running(k)) {
		*cause = xstrdup("kernel is already running");
		return (-1);
	}

	util_uuid(k->session);
	if (RAND_bytes(raw, sizeof raw) != 1) {
		*cause = xstrdup("RAND_bytes failed");
		return (-1);
	}
	util_hex(raw, sizeof raw, k->key);
	OPENSSL_cleanse(raw, sizeof raw);
	agent_wire_seen_free(k->seen);
	k->seen = agent_wire_seen_create(AGENT_KERNEL_SEEN);

	/* The kernel id is the daemon's; keep only safe characters. */
	for (i = 0; i < 8 && k->kernel_id[i] != '\0'; i++) {
		shortid[i] = k->kernel_id[i];
		if (!(shortid[i] >= '0' && shortid[i] <= '9') &&
		    !(shortid[i] >= 'a' && shortid[i] <= 'z') &&
		    !(shortid[i] >= 'A' && shortid[i] <= 'Z'))
			shortid[i] = '_';
	}
	shortid[i] = '\0';
	free(k->conn_file);
	/* It failed on tcp too: ipc was not the cause; try it again. */
	if (k->tcp_fallback)
		k->tcp_only = k->tcp_fallback = 0;
	xasprintf(&k->conn_file, "%s/kernel-%s.json", k->runtime_dir,
	    shortid);
	k->tries = 0;
	return (agent_kernel_launch(k, cause));
}

/*
 * On ipc, the kernel ended or was killed before it was ready: if it had
 * not bound our five sockets, or bound something else, it does not do
 * ipc as jupyter_client does.  Launch it on tcp and keep it there; 0
 * when that launch is under way, -1 when it is no fallback case.
 */
static int
agent_kernel_ipc_fallback(struct agent_kernel *k, const char *reason)
{
	char	*tail, *why, *cause;

	if (k->ipc_dir == NULL)
		return (-1);
	agent_kernel_ipc_scan(k);
	if (!k->ipc_foreign && k->ipc_bound == AGENT_NCHANNELS)
		return (-1);
	tail = agent_kernel_tail(k);
	log_warnx("kernel %s did not start on ipc (%s, %d of %d sockets "
	    "bound; stderr: %s): starting it on tcp %s, where other local "
	    "users can connect to its ports", kernelspec_name(k->spec),
	    k->ipc_foreign ? "it made other paths than the connection "
	    "file's" : k->start_timeout ? "no answer" : reason, k->ipc_bound,
	    AGENT_NCHANNELS, tail, AGENT_KERNEL_IP);
	free(tail);
	agent_kernel_close(k);
	k->tcp_only = 1;
	k->tcp_fallback = 1;
	k->tries = 0;
	if (agent_kernel_launch(k, &cause) == 0)
		return (0);
	agent_kernel_close(k);
	xasprintf(&why, "kernel %s: %s", kernelspec_name(k->spec), cause);
	free(cause);
	agent_failed(k, why);
	free(why);
	return (0);
}

/*
 * The kernel exited, or was killed for not answering, before it was
 * ready.  On ipc, it may not do ipc (_ipc_fallback).  On tcp, if
 * another process holds one of its ports, that is the race between
 * choosing ports and the kernel's bind: launch it again on new ones, up
 * to AGENT_KERNEL_START_TRIES times.  Otherwise, or past the bound,
 * report why.
 */
static void
agent_kernel_start_failed(struct agent_kernel *k, const char *reason)
{
	char	*tail, *why, *cause, *conflict = NULL;
	int	 port;

	if (agent_kernel_ipc_fallback(k, reason) == 0)
		return;
	tail = agent_kernel_tail(k);
	port = agent_kernel_port_taken(k);
	agent_kernel_close(k);
	if (port != 0) {
		log_warnx("kernel %s: port %d on %s is held by another "
		    "process (try %d of %d)", kernelspec_name(k->spec), port,
		    AGENT_KERNEL_IP, k->tries, AGENT_KERNEL_START_TRIES);
		if (k->tries < AGENT_KERNEL_START_TRIES) {
			free(tail);
			if (agent_kernel_launch(k, &cause) == 0)
				return;
			agent_kernel_close(k);
			xasprintf(&why, "kernel %s: %s",
			    kernelspec_name(k->spec), cause);
			free(cause);
			agent_failed(k, why);
			free(why);
			return;
		}
		xasprintf(&conflict, "; port %d on %s was taken by another "
		    "process, %d tries", port, AGENT_KERNEL_IP, k->tries);
	}
	if (k->start_timeout)
		xasprintf(&why, "kernel %s did not answer kernel_info within "
		    "%d s%s (stderr: %s)", kernelspec_name(k->spec),
		    (int)(k->start_max_ms / 1000), conflict != NULL ? conflict :
		    "", tail);
	else
		xasprintf(&why, "kernel %s %s during startup%s (stderr: %s)",
		    kernelspec_name(k->spec), reason, conflict != NULL ?
		    conflict : "", tail);
	free(conflict);
	free(tail);
	agent_failed(k, why);
	free(why);
}

/* Close sockets, timers and files of the current run. */
static void
agent_kernel_close(struct agent_kernel *k)
{
	struct agent_kernel_sock	*s;
	int				 i;

	agent_kernel_stdin_unwatch(k);
	agent_kernel_iopub_unwatch(k);
	k->iopub_held = 0;
	for (i = 0; i < AGENT_NCHANNELS; i++) {
		s = &k->socks[i];
		if (s->ev != NULL) {
			event_free(s->ev);
			s->ev = NULL;
		}
		if (s->zs != NULL) {
			zmq_close(s->zs);
			s->zs = NULL;
		}
	}
	if (k->probe_ev != NULL) {
		event_free(k->probe_ev);
		k->probe_ev = NULL;
	}
	agent_heartbeat_stop(k->hb);
	k->interrupt_ms = 0;
	agent_stderr_close(k->err);
	json_object_put(k->info);
	k->info = NULL;
	if (k->conn_file != NULL)
		unlink(k->conn_file);
	agent_kernel_ipc_remove(k);
}

/*
 * Send one message on a channel; msg_id (37 bytes) receives its id.
 * content may be NULL for {}.  Returns 0 or -1.
 */
int
agent_kernel_send(struct agent_kernel *k, enum agent_channel channel,
    const char *msg_type, struct json_object *content, char *msg_id)
{
	return (agent_kernel_send_parent(k, channel, msg_type, content, NULL,
	    msg_id));
}

/* Send a message answering parent (a header), as input_reply does. */
int
agent_kernel_send_parent(struct agent_kernel *k, enum agent_channel channel,
    const char *msg_type, struct json_object *content,
    struct json_object *parent, char *msg_id)
{
	struct agent_kernel_sock	*s = &k->socks[channel];
	char				*parts[AGENT_WIRE_NPARTS];
	int				 i, rc = 0;

	if (s->zs == NULL)
		return (-1);
	if (agent_wire_encode(k->key, k->session, msg_type, content, parent,
	    msg_id, parts) != 0) {
		log_warnx("cannot sign %s", msg_type);
		return (-1);
	}
	trace_hop("out", "kernel", msg_type, 0, 0);
	if (zmq_send(s->zs, AGENT_WIRE_DELIM, strlen(AGENT_WIRE_DELIM),
	    ZMQ_SNDMORE|ZMQ_DONTWAIT) == -1)
		rc = -1;
	for (i = 0; rc == 0 && i < AGENT_WIRE_NPARTS; i++) {
		if (zmq_send(s->zs, parts[i], strlen(parts[i]),
		    (i < AGENT_WIRE_NPARTS - 1 ? ZMQ_SNDMORE : 0) |
		    ZMQ_DONTWAIT) == -1)
			rc = -1;
	}
	if (rc != 0)
		log_warnx("send %s: %s", msg_type, zmq_strerror(zmq_errno()));
	else
		log_debug("%s: sent %s %s", __func__, msg_type, msg_id);
	agent_wire_parts_free(parts);

	/* A send can swallow the ZMQ_FD edge for pending input. */
	agent_kernel_drain(s);
	return (rc);
}

/* Handle one received message while starting. */
static void
agent_kernel_starting(struct agent_kernel *k, enum agent_channel channel,
    struct agent_wire_msg *m)
{
	if (channel == AGENT_CHANNEL_IOPUB)
		k->got_iopub = 1;
	else if (channel == AGENT_CHANNEL_SHELL && k->info == NULL &&
	    strcmp(agent_wire_msg_type(m), "kernel_info_reply") == 0)
		k->info = json_object_get(agent_wire_msg_content(m));
	agent_kernel_maybe_ready(k);
}

/* Ready once it answered and our stdin is connected; see the top. */
static void
agent_kernel_maybe_ready(struct agent_kernel *k)
{
	unsigned char	 ev[6];
	uint16_t	 event;
	int		 more;
	size_t		 len;
	int64_t		 now;

	if (!k->got_iopub || k->info == NULL)
		return;
	if (k->answered_ms == 0)
		k->answered_ms = util_mono_ms();
	/* Each event is two parts: {uint16 event, uint32 value}, address. */
	while (!k->stdin_up && k->stdin_mon != NULL &&
	    zmq_recv(k->stdin_mon, ev, sizeof ev, ZMQ_DONTWAIT) >= 2) {
		memcpy(&event, ev, sizeof event);
		if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
			k->stdin_up = 1;
		len = sizeof more;
		while (zmq_getsockopt(k->stdin_mon, ZMQ_RCVMORE, &more,
		    &len) == 0 && more)
			zmq_recv(k->stdin_mon, ev, sizeof ev, ZMQ_DONTWAIT);
	}
	/*
	 * Without a monitor nothing will tell: ready as before.  Otherwise
	 * wait for stdin, for the grace period, and never past the start
	 * bound (a kernel that answers is not killed for its stdin).
	 */
	if (!k->stdin_up && k->stdin_mon != NULL) {
		now = util_mono_ms();
		if (now - k->answered_ms < AGENT_KERNEL_STDIN_GRACE_MS &&
		    now - k->start_ms < k->start_max_ms -
		    2 * AGENT_KERNEL_PROBE_MS)
			return;
		log_warnx("kernel %s: its stdin socket has not connected "
		    "in %lld ms; ready without it (input() may not be "
		    "answered)", kernelspec_name(k->spec),
		    (long long)(now - k->answered_ms));
	}
	agent_kernel_stdin_unwatch(k);
	k->state = AGENT_KERNEL_READY;
	event_del(k->probe_ev);
	agent_heartbeat_start(k->hb);
	k->tcp_fallback = 0;
	log_info("kernel %s ready in %lld ms (%s)", kernelspec_name(k->spec),
	    (long long)(util_mono_ms() - k->start_ms),
	    k->ipc_dir != NULL ? "ipc" : "tcp");
	agent_ready(k, k->info);
}

/* Watch the stdin socket's handshake (before it connects). */
static void
agent_kernel_stdin_watch(struct agent_kernel *k)
{
	static unsigned	 n;
	char		 ep[96];

	/*
	 * A name of its own each time: a stopped monitor's endpoint is
	 * released by libzmq later, and a relaunch (tcp after ipc) found it
	 * still bound.
	 */
	agent_kernel_stdin_unwatch(k);
	snprintf(ep, sizeof ep, "inproc://stdin-%s-%u", k->session, ++n);
	/* Without it the kernel is ready without waiting for stdin. */
	k->stdin_mon = agent_kernel_monitor(k, AGENT_CHANNEL_STDIN, ep,
	    ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
}

/* A PAIR socket reading a channel's events at ep, or NULL (logged). */
static void *
agent_kernel_monitor(struct agent_kernel *k, int ch, const char *ep,
    int events)
{
	void	*mon = NULL;

	if (zmq_socket_monitor(k->socks[ch].zs, ep, events) != 0 ||
	    (mon = zmq_socket(k->zctx, ZMQ_PAIR)) == NULL ||
	    zmq_connect(mon, ep) != 0) {
		log_warnx("%s monitor: %s", ep, zmq_strerror(zmq_errno()));
		if (mon != NULL)
			zmq_close(mon);
		return (NULL);
	}
	return (mon);
}

/* Stop a channel's monitor *mon, if any. */
static void
agent_kernel_monitor_stop(struct agent_kernel *k, int ch, void **mon)
{
	if (*mon == NULL)
		return;
	if (k->socks[ch].zs != NULL)
		zmq_socket_monitor(k->socks[ch].zs, NULL, 0);
	zmq_close(*mon);
	*mon = NULL;
}

/* Stop watching stdin: it is up, or the kernel is going. */
static void
agent_kernel_stdin_unwatch(struct agent_kernel *k)
{
	agent_kernel_monitor_stop(k, AGENT_CHANNEL_STDIN, &k->stdin_mon);
}

/*
 * Watch iopub for a dropped connection: libzmq drops it on a frame over
 * AGENT_KERNEL_IOPUB_MAX, and a SUB stays without one after that.
 */
static void
agent_kernel_iopub_watch(struct agent_kernel *k)
{
	static unsigned	 n;
	char		 ep[96];
	int		 fd;
	size_t		 len = sizeof fd;

	agent_kernel_iopub_unwatch(k);
	/* A name of its own each time, as stdin's (agent_kernel_stdin_watch). */
	snprintf(ep, sizeof ep, "inproc://iopub-%s-%u", k->session, ++n);
	/* Without it an oversize message leaves the kernel without outputs. */
	if ((k->iopub_mon = agent_kernel_monitor(k, AGENT_CHANNEL_IOPUB, ep,
	    ZMQ_EVENT_DISCONNECTED)) == NULL)
		return;
	if (zmq_getsockopt(k->iopub_mon, ZMQ_FD, &fd, &len) != 0) {
		log_warnx("iopub monitor: %s", zmq_strerror(zmq_errno()));
		agent_kernel_monitor_stop(k, AGENT_CHANNEL_IOPUB,
		    &k->iopub_mon);
		return;
	}
	k->iopub_mon_ev = event_new(k->base, fd, EV_READ|EV_PERSIST,
	    agent_kernel_iopub_mon_cb, k);
	event_add(k->iopub_mon_ev, NULL);
	/*
	 * ZMQ_FD signals only once a read found nothing: one now, or the
	 * first event would never wake us.
	 */
	agent_kernel_iopub_mon_cb(-1, 0, k);
}

static void
agent_kernel_iopub_unwatch(struct agent_kernel *k)
{
	if (k->iopub_mon_ev != NULL) {
		event_free(k->iopub_mon_ev);
		k->iopub_mon_ev = NULL;
	}
	agent_kernel_monitor_stop(k, AGENT_CHANNEL_IOPUB, &k->iopub_mon);
}

/* The monitor's events (edge-triggered: read until none is left). */
static void
agent_kernel_iopub_mon_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_kernel	*k = arg;
	unsigned char		 ev[6];
	uint16_t		 event;
	int			 more, lost = 0;
	size_t			 len;

	/* Each event is two parts: {uint16 event, uint32 value}, address. */
	while (k->iopub_mon != NULL &&
	    zmq_recv(k->iopub_mon, ev, sizeof ev, ZMQ_DONTWAIT) >= 2) {
		memcpy(&event, ev, sizeof event);
		if (event == ZMQ_EVENT_DISCONNECTED)
			lost = 1;
		len = sizeof more;
		while (zmq_getsockopt(k->iopub_mon, ZMQ_RCVMORE, &more,
		    &len) == 0 && more)
			zmq_recv(k->iopub_mon, ev, sizeof ev, ZMQ_DONTWAIT);
	}
	if (lost && k->pid > 0 && (k->state == AGENT_KERNEL_STARTING ||
	    k->state == AGENT_KERNEL_READY))
		agent_kernel_iopub_renew(k);
}

/*
 * iopub's connection was dropped (a message over the cap, as a rule; a
 * kernel that is dying also closes it, and its reap follows): take what
 * came before it, make the socket again, and tell the runs in the kernel
 * that some of their output is lost.
 */
static void
agent_kernel_iopub_renew(struct agent_kernel *k)
{
	struct agent_kernel_sock	*s = &k->socks[AGENT_CHANNEL_IOPUB];
	char				*cause;

	log_warnx("kernel %s: its iopub connection was dropped (ZeroMQ does "
	    "so on a message over %d bytes); connecting again, the outputs "
	    "meanwhile are lost", kernelspec_name(k->spec),
	    AGENT_KERNEL_IOPUB_MAX);
	if (!k->iopub_held)
		agent_kernel_drain(s);
	agent_kernel_iopub_unwatch(k);
	if (s->ev != NULL)
		event_free(s->ev);
	s->ev = NULL;
	if (s->zs != NULL)
		zmq_close(s->zs);
	s->zs = NULL;
	k->iopub_held = 0;
	if (agent_kernel_connect(k, AGENT_CHANNEL_IOPUB, ZMQ_SUB,
	    &cause) != 0) {
		log_warnx("iopub: %s", cause);
		free(cause);
	}
	agent_exec_iopub_lost(AGENT_KERNEL_IOPUB_MAX);
}

/* The daemon caught up: read iopub again (its ZMQ_FD edge is gone). */
static void
agent_kernel_iopub_resume(void *arg)
{
	struct agent_kernel	*k = arg;

	if (!k->iopub_held)
		return;
	k->iopub_held = 0;
	agent_kernel_drain(&k->socks[AGENT_CHANNEL_IOPUB]);
}

/* Receive one multipart message; 0 when none was waiting. */
static int
agent_kernel_recv(struct agent_kernel_sock *s)
{
	struct agent_kernel	*k = s->k;
	struct agent_wire_msg	*m;
	zmq_msg_t		*msgs = NULL;
	struct agent_wire_frame	*frames = NULL;
	static const char	*names[] = { "shell", "control", "stdin",
				    "iopub", "hb" };
	size_t			 n = 0, i, bytes = 0;
	char			*cause;
	int			 more;

	do {
		msgs = xreallocarray(msgs, n + 1, sizeof *msgs);
		zmq_msg_init(&msgs[n]);
		if (zmq_msg_recv(&msgs[n], s->zs, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&msgs[n]);
			if (n == 0) {
				free(msgs);
				return (0);
			}
			/* Parts of one message arrive together. */
			log_warnx("recv: %s", zmq_strerror(zmq_errno()));
			break;
		}
		more = zmq_msg_more(&msgs[n]);
		n++;
	} while (more);

	if (s->channel == AGENT_CHANNEL_HB) {
		agent_heartbeat_echo(k->hb);
		goto out;
	}
	frames = xcalloc(n, sizeof *frames);
	for (i = 0; i < n; i++) {
		frames[i].data = zmq_msg_data(&msgs[i]);
		frames[i].len = zmq_msg_size(&msgs[i]);
		bytes += frames[i].len;
	}
	/* The agent's span of a kernel message starts here. */
	trace_hop("in", "kernel", names[s->channel], 0, bytes);
	m = agent_wire_parse(k->key, frames, n, &cause);
	if (m == NULL) {
		log_warnx("dropped a message from the kernel on channel %d: "
		    "%s", s->channel, cause);
		free(cause);
	} else if (agent_wire_seen_check(k->seen,
	    agent_wire_msg_signature(m)) != 0) {
		log_warnx("dropped a replayed %s on channel %d: its "
		    "signature was seen before", agent_wire_msg_type(m),
		    s->channel);
		agent_wire_msg_free(m);
	} else {
		log_debug("%s: channel %d %s parent %s", __func__, s->channel,
		    agent_wire_msg_type(m),
		    agent_wire_msg_parent_id(m) != NULL ?
		    agent_wire_msg_parent_id(m) : "-");
		switch (k->state) {
		case AGENT_KERNEL_STARTING:
			agent_kernel_starting(k, s->channel, m);
			break;
		case AGENT_KERNEL_READY:
		case AGENT_KERNEL_STOPPING:
			/* Introspection and stdin first (decision 022). */
			if (agent_introspect_message(k, s->channel, m))
				break;
			if (s->channel == AGENT_CHANNEL_STDIN &&
			    agent_stdin_message(k, m))
				break;
			agent_exec_message(k, s->channel, m);
			break;
		default:
			break;
		}
		agent_wire_msg_free(m);
	}
out:
	for (i = 0; i < n; i++)
		zmq_msg_close(&msgs[i]);
	free(msgs);
	free(frames);
	return (1);
}

/* Receive until ZMQ_EVENTS has no POLLIN; see the top of the file. */
static void
agent_kernel_drain(struct agent_kernel_sock *s)
{
	int	events;
	size_t	len;

	if (s->draining || s->zs == NULL)
		return;
	s->draining = 1;
	for (;;) {
		/*
		 * The daemon reads slower than the kernel prints: leave the
		 * rest in libzmq and the kernel until it caught up.
		 */
		if (s->channel == AGENT_CHANNEL_IOPUB && (s->k->iopub_held ||
		    agent_daemon_backlog(agent_kernel_iopub_resume, s->k))) {
			s->k->iopub_held = 1;
			break;
		}
		len = sizeof events;
		if (s->zs == NULL ||
		    zmq_getsockopt(s->zs, ZMQ_EVENTS, &events, &len) != 0 ||
		    (events & ZMQ_POLLIN) == 0)
			break;
		if (!agent_kernel_recv(s))
			break;
	}
	s->draining = 0;
}

/* Interrupt the kernel the way its kernelspec asks. */
int
agent_kernel_interrupt(struct agent_kernel *k, char **cause)
{
	char	msg_id[37];

	/* SIGINT during startup would kill it in the middle of imports. */
	if (k->state != AGENT_KERNEL_READY) {
		*cause = xstrdup("kernel is not ready");
		return (-1);
	}
	if (kernelspec_interrupt_mode(k->spec) ==
	    KERNELSPEC_INTERRUPT_MESSAGE) {
		if (agent_kernel_send(k, AGENT_CHANNEL_CONTROL,
		    "interrupt_request", NULL, msg_id) != 0) {
			*cause = xstrdup("cannot send interrupt_request");
			return (-1);
		}
		return (0);
	}
	if (killpg(k->pid, SIGINT) == -1) {
		xasprintf(cause, "killpg: %s", strerror(errno));
		return (-1);
	}
	k->interrupt_ms = util_mono_ms();
	return (0);
}

/* Finish a shutdown: run the callback once. */
static void
agent_kernel_stopped(struct agent_kernel *k)
{
	void	(*cb)(struct agent_kernel *, void *) = k->stop_cb;
	void	*arg = k->stop_arg;

	if (k->stop_ev != NULL)
		event_del(k->stop_ev);
	k->stop_cb = NULL;
	k->stop_arg = NULL;
	if (cb != NULL)
		cb(k, arg);
}

/* One step of the escalation: SIGTERM, then SIGKILL, then give up. */
static void
agent_kernel_stop_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_kernel	*k = arg;
	struct timeval		 tv = { AGENT_KERNEL_STOP_MS / 1000, 0 };

	if (k->pid <= 0)
		return;
	switch (k->stop_stage++) {
	case 0:
		log_info("kernel %ld did not exit; SIGTERM", (long)k->pid);
		killpg(k->pid, SIGTERM);
		break;
	case 1:
		log_warnx("kernel %ld ignored SIGTERM; SIGKILL", (long)k->pid);
		killpg(k->pid, SIGKILL);
		break;
	default:
		log_warnx("kernel %ld not reaped after SIGKILL", (long)k->pid);
		return;
	}
	evtimer_add(k->stop_ev, &tv);
}

/*
 * Shut the kernel down: shutdown_request on control, then 2 s, SIGTERM
 * to the process group, 2 s, SIGKILL.  cb runs once the process is
 * reaped (at once if there is none).  A second call while stopping only
 * replaces the callback.
 */
void
agent_kernel_shutdown(struct agent_kernel *k, int restart,
    void (*cb)(struct agent_kernel *, void *), void *arg)
{
	struct json_object	*content;
	struct timeval		 tv = { AGENT_KERNEL_STOP_MS / 1000, 0 };
	char			 msg_id[37];

	k->stop_cb = cb;
	k->stop_arg = arg;
	if (k->stop_ev == NULL)
		k->stop_ev = evtimer_new(k->base, agent_kernel_stop_cb, k);

	switch (k->state) {
	case AGENT_KERNEL_NONE:
	case AGENT_KERNEL_DEAD:
		agent_kernel_close(k);
		agent_kernel_stopped(k);
		return;
	case AGENT_KERNEL_STOPPING:
		return;
	case AGENT_KERNEL_STARTING:
	case AGENT_KERNEL_READY:
		break;
	}
	if (k->probe_ev != NULL)
		event_del(k->probe_ev);
	k->state = AGENT_KERNEL_STOPPING;
	k->stop_stage = 0;
	content = json_object_new_object();
	json_object_object_add(content, "restart",
	    json_object_new_boolean(restart));
	agent_kernel_send(k, AGENT_CHANNEL_CONTROL, "shutdown_request",
	    content, msg_id);
	json_object_put(content);
	evtimer_add(k->stop_ev, &tv);
}

/*
 * SIGCHLD: reap the kernel if it exited.  Leftovers in its process group
 * are killed before the reap, while the zombie still pins the group id.
 */
void
agent_kernel_sigchld(struct agent_kernel *k)
{
	siginfo_t		 si;
	enum agent_kernel_state	 was = k->state;
	char			*reason, *why;
	int			 status, i;

	if (k->pid <= 0)
		return;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, k->pid, &si, WEXITED|WNOHANG|WNOWAIT) != 0 ||
	    si.si_pid == 0)
		return;
	killpg(k->pid, SIGKILL);
	if (waitpid(k->pid, &status, 0) == -1)
		return;

	/* The heartbeat's kill says why; else the status does. */
	reason = agent_heartbeat_kill_reason(k->hb);
	if (reason == NULL && WIFEXITED(status))
		xasprintf(&reason, "exited with status %d",
		    WEXITSTATUS(status));
	else if (reason == NULL && WIFSIGNALED(status))
		xasprintf(&reason, "killed by signal %d", WTERMSIG(status));
	else if (reason == NULL)
		reason = xstrdup("exited");
	/* xeus-python, for one, ends on SIGINT instead of interrupting. */
	if (was == AGENT_KERNEL_READY && k->interrupt_ms != 0 &&
	    util_mono_ms() - k->interrupt_ms < AGENT_KERNEL_INTERRUPT_MS) {
		why = reason;
		xasprintf(&reason, "%s on the interrupt (SIGINT): kernel %s "
		    "cannot interrupt a cell and ends instead; restart it",
		    why, kernelspec_name(k->spec));
		free(why);
	}
	log_info("kernel %ld %s", (long)k->pid, reason);
	k->pid = -1;

	/* Deliver what it said before dying. */
	agent_stderr_read(k->err);
	for (i = 0; i < AGENT_NCHANNELS; i++)
		agent_kernel_drain(&k->socks[i]);

	k->state = AGENT_KERNEL_DEAD;
	switch (was) {
	case AGENT_KERNEL_STARTING:
		agent_kernel_start_failed(k, reason);
		break;
	case AGENT_KERNEL_READY:
		agent_kernel_close(k);
		agent_died(k, reason);
		break;
	case AGENT_KERNEL_STOPPING:
		agent_kernel_close(k);
		agent_kernel_stopped(k);
		break;
	default:
		agent_kernel_close(k);
		break;
	}
	free(reason);
}

/* From fatal(): kill the group and remove our files, nothing else. */
void
agent_kernel_emergency(struct agent_kernel *k)
{
	if (k == NULL)
		return;
	if (k->pid > 0)
		killpg(k->pid, SIGKILL);
	if (k->conn_file != NULL)
		unlink(k->conn_file);
	agent_kernel_ipc_remove(k);
}
