/* SPDX-License-Identifier: ISC */
/*
 * room-kernel.c: the link to a room's runtime agent (one kernel each).
 *
 * The agent is spawned with one end of a socketpair as its fd 3 and in
 * a session of its own, so a stop can signal its whole process group.
 * A kernel struct outlives its room's interest in it (restart, stop)
 * until both its link is lost and its process is reaped.
 *
 * A kernel may also be pooled (kernel-pool.c): started for no room yet,
 * then adopted by the first room of its kernelspec, which moves it to
 * the notebook's directory with a silent os.chdir.  When a room's last
 * client peer leaves, its kernel is shut down after the keepalive unless
 * a peer comes back first; the next run starts one again.
 *
 * A server's kernel replaced by a restart is retired, not dropped: its
 * agent keeps its link until the server has answered the DELETE, and the
 * restart is answered after both that and the new kernel's readiness, so
 * a refused DELETE (the old kernel may still run there) reaches the tool.
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "runtimed.h"
#include "kernelspec.h"

enum room_kernel_state {
	ROOM_KERNEL_STARTING,
	ROOM_KERNEL_IDLE,
	ROOM_KERNEL_BUSY,
	ROOM_KERNEL_UNRESPONSIVE,
	ROOM_KERNEL_DEAD,
};

/* Seconds a room keeps its kernel after its last client peer left. */
int	room_kernel_keepalive = RUNTIMED_KERNEL_KEEPALIVE;

/*
 * Kernelspecs whose kernel could not start on ipc and ran on tcp
 * (AGENT_READY says): their next kernels go to tcp at once rather than
 * failing on ipc first, as long as this daemon runs (decision 060).
 */
#define ROOM_KERNEL_TCP_MAX	64
static char	*room_kernel_tcp[ROOM_KERNEL_TCP_MAX];
static int	 room_kernel_ntcp;

struct room_kernel {
	struct room		*room;	/* NULL once detached */
	char			 id[37];
	char			*name;
	pid_t			 pid;	/* agent; -1 once reaped */
	struct peer		*peer;	/* NULL once link lost */
	int			 hello;
	enum room_kernel_state	 state;
	char			*message;	/* why it is dead, or hung */
	uint32_t		 start_id;
	int			 pooled;	/* kernel-pool.c owns it */
	char			*cwd;		/* where it was started */
	struct event		*idle_ev;	/* idle teardown */

	int64_t			 kernel_pid;
	char			*display_name;
	char			*language;
	struct json_object	*language_info;
	struct json_object	*capabilities;	/* the agent's, or NULL */
	int64_t			 execution_count;

	struct peer		*restart_peer;	/* KERNEL_RESTART */
	uint32_t		 restart_id;

	struct room		*retire_room;	/* its DELETE awaited for */
	uint32_t		 retire_id;
	struct event		*retire_ev;
	struct peer		*retire_peer;	/* KERNEL_SELECT: told then */
	uint32_t		 retire_peer_id;
	int			 retire_idle;	/* torn down for idleness */

	TAILQ_ENTRY(room_kernel) entry;
};
static TAILQ_HEAD(, room_kernel) room_kernels =
    TAILQ_HEAD_INITIALIZER(room_kernels);

static void	room_kernel_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);
static void	room_kernel_destroy(struct room_kernel *);
static struct proto_str	room_kernel_str(const char *);
static void	room_kernel_maybe_destroy(struct room_kernel *);
static char	*room_kernel_cwd(struct room *);
static void	room_kernel_send_ready(struct room_kernel *, struct peer *,
		    uint32_t);
static void	room_kernel_reply_restart(struct room_kernel *);
static void	room_kernel_set_dead(struct room_kernel *, const char *);
static void	room_kernel_set_spec(struct room_kernel *);
static void	room_kernel_attached(struct room_kernel *);
static const char	*room_kernel_state_name(struct room_kernel *);
static void	room_kernel_pack_json(msgpack_packer *, const void *);
static void	room_kernel_status(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_hello(struct room_kernel *, struct peer *,
		    const struct proto_header *, const msgpack_object *);
static char	*room_kernel_dup(const struct proto_str *);
static void	room_kernel_ready_msg(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    const void *, void *);
static void	room_kernel_error(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_answer(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_started(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_output(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_clear(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_done(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);
static void	room_kernel_refuse(struct peer *,
		    const struct proto_header *, const char *, void *);
static void	room_kernel_tidy(struct room_kernel *);
static int	room_kernel_tcp_only(const char *);
static void	room_kernel_idle_cb(evutil_socket_t, short, void *);
static void	room_kernel_retire(struct room_kernel *, struct room *);
static void	room_kernel_retired(struct room_kernel *, const char *);
static void	room_kernel_retire_cb(evutil_socket_t, short, void *);
static void	room_kernel_retire_answer(struct room_kernel *,
		    const struct proto_header *, const msgpack_object *);

/* Seconds a retiring kernel's agent has to say how its DELETE went. */
#define ROOM_KERNEL_RETIRE_SECS	30
static void	room_kernel_input(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/* What an agent sends once it is ready; a body that does not read kills it. */
static const struct peer_dispatch room_kernel_table[] = {
	{ PROTO_MSG_AGENT_READY, PEER_DISPATCH_UNPACK, room_kernel_ready_msg },
	{ PROTO_MSG_ERROR, 0, room_kernel_error },
	{ PROTO_MSG_OK, 0, room_kernel_answer },
	{ PROTO_MSG_PONG, 0, peer_dispatch_ignore },
	{ PROTO_MSG_KERNEL_VARIABLES_REPLY, 0, room_kernel_answer },
	{ PROTO_MSG_KERNEL_COMPLETE_REPLY, 0, room_kernel_answer },
	{ PROTO_MSG_KERNEL_INSPECT_REPLY, 0, room_kernel_answer },
	{ PROTO_MSG_KERNEL_SEES_REPLY, 0, room_kernel_answer },
	{ PROTO_MSG_AGENT_INPUT_REQUEST, PEER_DISPATCH_UNPACK,
	    room_kernel_input },
	{ PROTO_MSG_PING, 0, peer_dispatch_pong },
	{ PROTO_MSG_AGENT_STATUS, PEER_DISPATCH_UNPACK, room_kernel_status },
	{ PROTO_MSG_AGENT_EXEC_STARTED, PEER_DISPATCH_UNPACK,
	    room_kernel_started },
	{ PROTO_MSG_AGENT_OUTPUT, PEER_DISPATCH_UNPACK, room_kernel_output },
	{ PROTO_MSG_AGENT_CLEAR_OUTPUT, PEER_DISPATCH_UNPACK,
	    room_kernel_clear },
	{ PROTO_MSG_AGENT_EXEC_DONE, PEER_DISPATCH_UNPACK, room_kernel_done },
	{ 0, 0, NULL }
};

static void
room_kernel_destroy(struct room_kernel *k)
{
	TAILQ_REMOVE(&room_kernels, k, entry);
	if (k->idle_ev != NULL)
		event_free(k->idle_ev);
	if (k->retire_ev != NULL)
		event_free(k->retire_ev);
	free(k->cwd);
	free(k->name);
	free(k->message);
	free(k->display_name);
	free(k->language);
	json_object_put(k->language_info);
	json_object_put(k->capabilities);
	free(k);
}

/* A C string as a borrowed proto_str. */
static struct proto_str
room_kernel_str(const char *s)
{
	struct proto_str	p = { s, strlen(s) };

	return (p);
}

/* Free a detached kernel once nothing refers to it any more. */
static void
room_kernel_maybe_destroy(struct room_kernel *k)
{
	if (k->room == NULL && !k->pooled && k->peer == NULL && k->pid == -1)
		room_kernel_destroy(k);
}

/* The directory a room's kernel runs in; caller frees. */
static char *
room_kernel_cwd(struct room *r)
{
	char		*copy, *cwd;
	const char	*home;

	if (r != NULL && r->path != NULL) {
		copy = xstrdup(r->path);
		*strrchr(copy, '/') = '\0';
		cwd = xstrdup(*copy == '\0' ? "/" : copy);
		free(copy);
		return (cwd);
	}
	if ((home = getenv("HOME")) == NULL || *home == '\0')
		home = "/";
	return (xstrdup(home));
}

/* A restart's OK {state}: as it is now, another client's run may be on. */
static void
room_kernel_send_ready(struct room_kernel *k, struct peer *p, uint32_t id)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "state", room_kernel_state_name(k));
	peer_send(p, PROTO_MSG_OK, id, &b.sb);
	mpbuf_free(&b);
}

/*
 * Answer a restart once the new kernel is up (or dead) and the kernel it
 * replaced is gone from its server, or said not to be (kernel_left).
 */
static void
room_kernel_reply_restart(struct room_kernel *k)
{
	struct room	*r = k->room;
	const char	*left = NULL;
	struct mpbuf	 b;

	if (k->restart_peer == NULL || k->state == ROOM_KERNEL_STARTING)
		return;
	if (r != NULL && r->kernel_leaving != NULL)
		return;		/* room_kernel_retired comes back here */
	if (r != NULL)
		left = r->kernel_left;
	if (k->state == ROOM_KERNEL_DEAD)
		peer_send_error(k->restart_peer, k->restart_id,
		    PROTO_E_KERNEL_UNAVAILABLE, "kernel restart failed: %s%s%s",
		    k->message != NULL ? k->message : "unknown error",
		    left != NULL ? "; and " : "", left != NULL ? left : "");
	else if (left == NULL)
		room_kernel_send_ready(k, k->restart_peer, k->restart_id);
	else {
		mpbuf_init(&b);
		msgpack_pack_map(&b.pk, 2);
		proto_pack_str(&b.pk, "state", room_kernel_state_name(k));
		proto_pack_str(&b.pk, "old_kernel", left);
		peer_send(k->restart_peer, PROTO_MSG_OK, k->restart_id, &b.sb);
		mpbuf_free(&b);
	}
	k->restart_peer = NULL;
	if (r != NULL) {
		free(r->kernel_left);
		r->kernel_left = NULL;
	}
}

/*
 * Retire r's server kernel k: AGENT_SHUTDOWN, and its link kept until
 * the agent says how the server took the DELETE (room_kernel_retired).
 */
static void
room_kernel_retire(struct room_kernel *k, struct room *r)
{
	struct proto_agent_shutdown	m;
	struct mpbuf			b;
	struct timeval			tv = { ROOM_KERNEL_RETIRE_SECS, 0 };

	/* One at a time: an earlier one is let go as any detach is. */
	if (r->kernel_leaving != NULL)
		room_kernel_retired(r->kernel_leaving, NULL);
	k->room = NULL;
	k->pooled = 0;
	k->restart_peer = NULL;
	if (k->idle_ev != NULL)
		evtimer_del(k->idle_ev);
	memset(&m, 0, sizeof m);
	mpbuf_init(&b);
	proto_agent_shutdown_pack(&b.pk, &m);
	k->retire_id = peer_next_id(k->peer);
	peer_send(k->peer, PROTO_MSG_AGENT_SHUTDOWN, k->retire_id, &b.sb);
	mpbuf_free(&b);
	k->retire_room = r;
	r->kernel_leaving = k;
	if (k->retire_ev == NULL)
		k->retire_ev = evtimer_new(runtimed_base, room_kernel_retire_cb,
		    k);
	evtimer_add(k->retire_ev, &tv);
}

/*
 * A retired kernel's DELETE is answered (left: why it may still run
 * there, or NULL): the link goes as a detached kernel's does, and a
 * restart waiting on it is answered if its new kernel is ready.
 */
static void
room_kernel_retired(struct room_kernel *k, const char *left)
{
	struct room	*r = k->retire_room;
	struct mpbuf	 b;

	k->retire_room = NULL;
	if (k->retire_ev != NULL)
		evtimer_del(k->retire_ev);
	if (left != NULL)
		log_warnx("kernel %s: %s", k->id, left);
	/* A KERNEL_SELECT is answered with it; a restart takes it after. */
	if (k->retire_peer != NULL) {
		mpbuf_init(&b);
		msgpack_pack_map(&b.pk, left != NULL ? 1 : 0);
		if (left != NULL)
			proto_pack_str(&b.pk, "old_kernel", left);
		peer_send(k->retire_peer, PROTO_MSG_OK, k->retire_peer_id,
		    &b.sb);
		mpbuf_free(&b);
		k->retire_peer = NULL;
	} else if (k->retire_idle && r != NULL && r->kernel_leaving == k) {
		/*
		 * Nobody asked: a kernel its server would not shut down is
		 * taken back by the room's next run, variables and all,
		 * rather than left running there unowned.
		 */
		if (r->kernel == NULL)
			room_remote_kernel_left(r, left != NULL);
	} else if (r != NULL && r->kernel_leaving == k && left != NULL) {
		free(r->kernel_left);
		r->kernel_left = xstrdup(left);
	}
	if (r != NULL && r->kernel_leaving == k) {
		r->kernel_leaving = NULL;
		if (r->kernel != NULL)
			room_kernel_reply_restart(r->kernel);
	}
	if (k->peer != NULL)
		peer_kill(k->peer, NULL);
	room_kernel_maybe_destroy(k);
}

/* The agent's OK, or ERROR with why the kernel may still run there. */
static void
room_kernel_retire_answer(struct room_kernel *k,
    const struct proto_header *hdr, const msgpack_object *body)
{
	const char	*s;
	size_t		 len;
	char		*msg;

	if (hdr->type == PROTO_MSG_OK) {
		room_kernel_retired(k, NULL);
		return;
	}
	s = proto_get_str(body, "message", &len);
	xasprintf(&msg, "%.*s", s != NULL ? (int)len : 40, s != NULL ? s :
	    "the server did not shut the old kernel down");
	room_kernel_retired(k, msg);
	free(msg);
}

static void
room_kernel_retire_cb(evutil_socket_t fd, short events, void *arg)
{
	struct room_kernel	*k = arg;

	room_kernel_retired(k, "the old kernel's agent did not say how its "
	    "server took the shutdown: it may still run there");
}

/* The kernel is gone for good: fail its runs, tell the room. */
static void
room_kernel_set_dead(struct room_kernel *k, const char *why)
{
	if (k->state == ROOM_KERNEL_DEAD)
		return;
	k->state = ROOM_KERNEL_DEAD;
	free(k->message);
	k->message = xstrdup(why);
	log_warnx("kernel %s (%s): dead: %s", k->id, k->name, why);
	room_kernel_reply_restart(k);
	if (k->pooled) {
		kernel_pool_lost(k);
		return;
	}
	if (k->room != NULL) {
		room_exec_kernel_died(k->room, why);
		room_changed(k->room, NULL, "kernel");
		room_remote_kernel_died(k->room);
	}
}

/*
 * Spawn an agent for kernelspec name, for room r or (r NULL) for the
 * pool; the kernel comes up later (AGENT_READY) or is marked dead.
 */
struct room_kernel *
room_kernel_spawn(struct room *r, const char *name)
{
	struct room_kernel	*k;
	char			*agent, *rundir, *cause = NULL, *dir = NULL;
	char			*argv[12], *kept = NULL;
	const char		*exe = "runtimed-agent";
	int			 sv[2], i = 1;

	/* A notebook on a Jupyter Server: its kernel is the server's. */
	if (r != NULL && r->remote != NULL)
		exe = "runtimed-agent-remote";
	/* The agent logs to our log (or stderr) as verbosely as we do. */
	argv[0] = (char *)exe;
	if (log_level_flag(runtimed_log_level) != NULL)
		argv[i++] = (char *)log_level_flag(runtimed_log_level);
	if (log_path() != NULL) {
		argv[i++] = (char *)"--log";
		argv[i++] = (char *)log_path();
	}
	if (r != NULL && r->remote != NULL) {
		dir = room_remote_kernel_dir(r);
		argv[i++] = (char *)"--domain";
		argv[i++] = (char *)room_remote_domain_name(r);
		argv[i++] = (char *)"--path";
		argv[i++] = dir;
		/* A kernel the server kept for us across our restart. */
		if ((kept = room_remote_take_kernel(r)) != NULL) {
			argv[i++] = (char *)"--kernel-id";
			argv[i++] = kept;
		}
	}
	argv[i] = NULL;

	k = xcalloc(1, sizeof *k);
	k->room = r;
	k->pooled = r == NULL;
	k->pid = -1;
	k->name = xstrdup(name);
	k->cwd = room_kernel_cwd(r);
	k->execution_count = 0;
	util_uuid(k->id);
	TAILQ_INSERT_TAIL(&room_kernels, k, entry);
	if (r != NULL)
		r->kernel = k;

	xasprintf(&rundir, "%s/kernels/%s", runtimed_state_dir, k->id);
	if (util_mkdir_private(rundir, &cause) != 0) {
		free(rundir);
		free(dir);
		free(kept);
		room_kernel_set_dead(k, cause);
		free(cause);
		return (k);
	}
	free(rundir);
	agent = spawn_find(exe, RUNTIMED_LIBEXECDIR, &cause);
	if (agent == NULL) {
		free(dir);
		free(kept);
		room_kernel_set_dead(k, cause);
		free(cause);
		return (k);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(dir);
		free(kept);
		free(agent);
		room_kernel_set_dead(k, "socketpair failed");
		return (k);
	}
	k->pid = spawn_child(agent, argv, sv[1], 1, &cause);
	free(dir);
	free(kept);
	close(sv[1]);
	free(agent);
	if (k->pid == -1) {
		close(sv[0]);
		room_kernel_set_dead(k, cause != NULL ? cause : "spawn failed");
		free(cause);
		return (k);
	}
	k->peer = peer_create(runtimed_base, sv[0], "agent",
	    room_kernel_dispatch, k);
	log_info("kernel %s (%s): agent pid %ld%s", k->id, k->name,
	    (long)k->pid, k->pooled ? " (pool)" : "");
	return (k);
}

/*
 * Record the kernel in the notebook's metadata as Jupyter does: its
 * kernelspec, and language_info from its kernel_info_reply.  For a
 * notebook we created, or after KERNEL_SELECT (r->kernel_facts), they
 * replace what the metadata had; else only what is absent is filled.
 */
static void
room_kernel_set_spec(struct room_kernel *k)
{
	struct room	*r = k->room;

	if (r == NULL || r->nb == NULL)
		return;
	if (r->kernel_facts) {
		mpvalue_del(&r->nb->metadata, room_ipynb_kernel_keys);
	}
	r->kernel_facts = 0;
	room_ipynb_set_kernelspec(r->nb, k->name, k->display_name,
	    k->language, k->language_info);
	room_changed_by(r, "metadata", "kernel");
}

/*
 * A ready kernel now serves room r: move it to the notebook's directory
 * (a pooled one started elsewhere), answer a waiting restart, record the
 * kernelspec in a new notebook, and feed it the queue.
 */
static void
room_kernel_attached(struct room_kernel *k)
{
	struct room			*r = k->room;
	struct proto_agent_execute	 m;
	struct json_object		*js;
	struct mpbuf			 b;
	char				*cwd, *code;

	cwd = room_kernel_cwd(r);
	if (strcmp(cwd, k->cwd) != 0 && k->language != NULL &&
	    strcasecmp(k->language, "python") == 0 && k->peer != NULL) {
		/* A JSON string is a Python string literal. */
		js = json_object_new_string(cwd);
		xasprintf(&code, "__import__('os').chdir(%s)",
		    json_object_to_json_string_ext(js,
		    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(js);
		memset(&m, 0, sizeof m);
		m.exec_id = room_kernel_str("");
		m.cell_id = room_kernel_str("");
		m.code = room_kernel_str(code);
		m.silent = 1;
		mpbuf_init(&b);
		proto_agent_execute_pack(&b.pk, &m);
		peer_send(k->peer, PROTO_MSG_AGENT_EXECUTE,
		    peer_next_id(k->peer), &b.sb);
		mpbuf_free(&b);
		free(code);
		free(k->cwd);
		k->cwd = cwd;
		log_info("kernel %s: adopted by room %s, cwd %s", k->id, r->id,
		    k->cwd);
	} else
		free(cwd);
	room_kernel_reply_restart(k);

	/* A notebook we created records its kernel once it is known. */
	if (r->kernel_facts || (r->fresh && r->nb != NULL &&
	    !room_ipynb_has_kernelspec(r->nb)))
		room_kernel_set_spec(k);
	room_changed(r, NULL, "kernel");
	room_exec_kick(r);
}

/* Start the room's kernel without waiting for it; a pooled one if any. */
void
room_kernel_start(struct room *r)
{
	struct room_kernel	*k;

	if (r->remote != NULL ||
	    (k = kernel_pool_take(r->kernel_name)) == NULL) {
		room_kernel_spawn(r, r->kernel_name);
		room_kernel_peers_changed(r);
		return;
	}
	k->pooled = 0;
	k->room = r;
	r->kernel = k;
	if (strcmp(r->kernel_name, k->name) != 0) {
		free(r->kernel_name);
		r->kernel_name = xstrdup(k->name);
	}
	log_info("kernel %s (%s): taken from the pool by room %s", k->id,
	    k->name, r->id);
	if (k->state != ROOM_KERNEL_STARTING)
		room_kernel_attached(k);
	room_kernel_peers_changed(r);
}

/* A call that needs the kernel: start it if the room has none. */
void
room_kernel_want(struct room *r)
{
	if (r->kernel != NULL)
		return;
	room_kernel_start(r);
	room_changed(r, NULL, "kernel");
}

/* Detach the room's kernel: close its link so the agent exits. */
void
room_kernel_detach(struct room_kernel *k, int tell)
{
	struct proto_agent_shutdown	m;
	struct mpbuf			b;

	k->room = NULL;
	k->pooled = 0;
	k->restart_peer = NULL;
	if (k->idle_ev != NULL)
		evtimer_del(k->idle_ev);
	if (k->peer != NULL) {
		if (tell) {
			memset(&m, 0, sizeof m);
			mpbuf_init(&b);
			proto_agent_shutdown_pack(&b.pk, &m);
			peer_send(k->peer, PROTO_MSG_AGENT_SHUTDOWN,
			    peer_next_id(k->peer), &b.sb);
			mpbuf_free(&b);
		}
		peer_kill(k->peer, NULL);
	}
	room_kernel_maybe_destroy(k);
}

void
room_kernel_free(struct room *r)
{
	if (r->kernel != NULL)
		room_kernel_detach(r->kernel, 1);
	r->kernel = NULL;
	if (r->kernel_leaving != NULL)
		r->kernel_leaving->retire_room = NULL;
	r->kernel_leaving = NULL;
	free(r->kernel_left);
	r->kernel_left = NULL;
}

static const char *
room_kernel_state_name(struct room_kernel *k)
{
	switch (k->state) {
	case ROOM_KERNEL_STARTING:
		return (k->restart_peer != NULL ? "restarting" : "starting");
	case ROOM_KERNEL_IDLE:
		return ("idle");
	case ROOM_KERNEL_BUSY:
		return ("busy");
	case ROOM_KERNEL_UNRESPONSIVE:
		return ("unresponsive");
	case ROOM_KERNEL_DEAD:
		return ("dead");
	}
	return ("none");
}

const char *
room_kernel_state(struct room *r)
{
	if (r->kernel == NULL)
		return ("none");
	return (room_kernel_state_name(r->kernel));
}

/* Can the kernel take an AGENT_EXECUTE now? */
int
room_kernel_ready(struct room *r)
{
	struct room_kernel	*k = r->kernel;

	return (k != NULL && k->peer != NULL &&
	    (k->state == ROOM_KERNEL_IDLE || k->state == ROOM_KERNEL_BUSY ||
	    k->state == ROOM_KERNEL_UNRESPONSIVE));
}

int
room_kernel_dead(struct room *r, const char **why)
{
	struct room_kernel	*k = r->kernel;

	if (k == NULL) {
		*why = "no kernel";
		return (1);
	}
	if (k->state != ROOM_KERNEL_DEAD)
		return (0);
	*why = k->message != NULL ? k->message : "kernel died";
	return (1);
}

/*
 * Send one cell to the kernel.  Returns its request id (an ERROR to it is
 * the agent refusing the cell), 0 if the kernel cannot take a cell now,
 * or -1 with cause when this cell can never be sent.
 */
int64_t
room_kernel_execute(struct room *r, const char *exec_id, const char *cell_id,
    const char *code, size_t len, char **cause)
{
	struct room_kernel		*k = r->kernel;
	struct proto_agent_execute	 m;
	struct mpbuf			 b;
	uint32_t			 id;

	if (!room_kernel_ready(r))
		return (0);
	memset(&m, 0, sizeof m);
	m.exec_id = room_kernel_str(exec_id);
	m.cell_id = room_kernel_str(cell_id);
	m.code.ptr = code;
	m.code.len = len;
	mpbuf_init(&b);
	proto_agent_execute_pack(&b.pk, &m);
	if (b.sb.size > proto_msg_cap(PROTO_MSG_AGENT_EXECUTE)) {
		xasprintf(cause, "cell %s was not run: its source of %zu "
		    "bytes does not fit an AGENT_EXECUTE frame (%u bytes "
		    "with the run's ids); split the cell", cell_id, len,
		    proto_msg_cap(PROTO_MSG_AGENT_EXECUTE));
		mpbuf_free(&b);
		return (-1);
	}
	id = peer_next_id(k->peer);
	if (peer_send(k->peer, PROTO_MSG_AGENT_EXECUTE, id, &b.sb) != 0) {
		mpbuf_free(&b);
		return (0);	/* the link is going: the kernel dies */
	}
	mpbuf_free(&b);
	return (id);
}

/* Interrupt the kernel; with none started nothing runs: 0, nothing sent. */
int
room_kernel_interrupt(struct room *r)
{
	struct room_kernel	*k = r->kernel;
	struct mpbuf		 b;

	if (k == NULL)
		return (0);
	if (k->peer == NULL || k->state == ROOM_KERNEL_DEAD)
		return (-1);
	mpbuf_init(&b);
	proto_agent_interrupt_pack(&b.pk);
	peer_send(k->peer, PROTO_MSG_AGENT_INTERRUPT, peer_next_id(k->peer),
	    &b.sb);
	mpbuf_free(&b);
	return (0);
}

/*
 * Restart: end every run as interrupted, replace the agent with a new
 * one and answer the requester once the new kernel is ready.
 */
int
room_kernel_restart(struct room *r, struct peer *p, uint32_t id)
{
	return (room_kernel_replace(r, p, id, "kernel_restarted"));
}

/*
 * Replace the room's kernel by a fresh one of r->kernel_name (restart,
 * KERNEL_SELECT): every run ends interrupted with reason.  With p, the
 * requester is answered once the new kernel is ready.
 */
int
room_kernel_replace(struct room *r, struct peer *p, uint32_t id,
    const char *reason)
{
	struct room_kernel	*k;

	if (r->kernel != NULL && r->kernel->restart_peer != NULL)
		return (-1);
	room_exec_interrupt(r, reason);
	/* A server's kernel: its DELETE's answer goes with the reply. */
	if (r->kernel != NULL && r->remote != NULL &&
	    r->kernel->peer != NULL && r->kernel->hello)
		room_kernel_retire(r->kernel, r);
	else if (r->kernel != NULL)
		room_kernel_detach(r->kernel, 1);
	r->kernel = NULL;
	/* KERNEL_SELECT: the new kernel replaces what the notebook names. */
	if (strcmp(reason, "kernel_changed") == 0)
		r->kernel_facts = 1;
	room_kernel_start(r);
	k = r->kernel;
	if (k->state == ROOM_KERNEL_DEAD) {
		if (p != NULL)
			peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
			    "kernel start failed: %s", k->message);
	} else if (p != NULL && k->state == ROOM_KERNEL_STARTING) {
		k->restart_peer = p;
		k->restart_id = id;
	} else if (p != NULL)
		room_kernel_send_ready(k, p, id);
	room_changed(r, NULL, "kernel");
	return (0);
}

/*
 * Answer p's KERNEL_SELECT once the kernel it replaced has left its
 * server (OK {old_kernel} if the server refused its DELETE), or now.
 */
void
room_kernel_answer_retired(struct room *r, struct peer *p, uint32_t id)
{
	if (r->kernel_leaving == NULL) {
		peer_send_ok(p, id);
		return;
	}
	r->kernel_leaving->retire_peer = p;
	r->kernel_leaving->retire_peer_id = id;
}

static void
room_kernel_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

void
room_kernel_pack_info(struct room *r, msgpack_packer *pk)
{
	struct room_kernel		*k = r->kernel;
	struct proto_kernel_info_reply	 m;

	memset(&m, 0, sizeof m);
	m.name = proto_str_make(r->kernel_name);
	m.state = proto_str_make(room_kernel_state(r));
	m.queue = room_exec_queue_length(r);
	if (k != NULL) {
		m.has_pid = k->kernel_pid > 0;
		m.pid = k->kernel_pid;
		m.has_agent_pid = k->pid > 0;
		m.agent_pid = k->pid;
		m.execution_count = k->execution_count;
		m.display_name = proto_str_make(k->display_name);
		m.message = proto_str_make(k->message);
		if (k->language_info != NULL) {
			m.language_info.pack = room_kernel_pack_json;
			m.language_info.arg = k->language_info;
		}
		if (k->capabilities != NULL) {
			m.capabilities.pack = room_kernel_pack_json;
			m.capabilities.arg = k->capabilities;
		}
	}
	proto_kernel_info_reply_pack(pk, &m);
}

/* AGENT_STATUS: dead, or busy, idle or unresponsive (with reason). */
static void
room_kernel_status(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct room_kernel			*k = arg;
	const struct proto_agent_status		*m = mv;
	enum room_kernel_state	 was = k->state;
	char			*msg;

	if (m->state == PROTO_AGENT_DEAD) {
		xasprintf(&msg, "kernel died: %.*s",
		    m->reason.ptr != NULL ? (int)m->reason.len : 7,
		    m->reason.ptr != NULL ? m->reason.ptr : "unknown");
		room_kernel_set_dead(k, msg);
		free(msg);
		return;
	}
	if (k->state == ROOM_KERNEL_DEAD || k->state == ROOM_KERNEL_STARTING)
		return;
	if (m->state == PROTO_AGENT_UNRESPONSIVE) {
		k->state = ROOM_KERNEL_UNRESPONSIVE;
		free(k->message);
		xasprintf(&k->message, "kernel unresponsive: %.*s",
		    m->reason.ptr != NULL ? (int)m->reason.len : 7,
		    m->reason.ptr != NULL ? m->reason.ptr : "unknown");
		log_warnx("kernel %s (%s): %s", k->id, k->name, k->message);
	} else {
		if (was == ROOM_KERNEL_UNRESPONSIVE) {
			free(k->message);
			k->message = NULL;
			log_warnx("kernel %s (%s): responsive again", k->id,
			    k->name);
		}
		k->state = m->state == PROTO_AGENT_BUSY ? ROOM_KERNEL_BUSY :
		    ROOM_KERNEL_IDLE;
	}
	if (k->room != NULL && (was == ROOM_KERNEL_UNRESPONSIVE) !=
	    (k->state == ROOM_KERNEL_UNRESPONSIVE))
		room_changed(k->room, NULL, "kernel");
}

/* The agent's HELLO: answer, then ask it to start the kernel. */
static void
room_kernel_hello(struct room_kernel *k, struct peer *p,
    const struct proto_header *hdr, const msgpack_object *body)
{
	struct proto_hello	 hello;
	struct proto_agent_start m;
	struct mpbuf		 b;
	char			 err[256], *rundir;

	if (hdr->type != PROTO_MSG_HELLO) {
		peer_kill(p, "agent spoke before HELLO");
		return;
	}
	if (proto_hello_unpack(body, &hello, err, sizeof err) != 0 ||
	    hdr->version != PROTO_VERSION ||
	    proto_hello_check(&hello, err, sizeof err) != 0 ||
	    strcmp(hello.kind, PROTO_PEER_AGENT) != 0) {
		if (hello.version != PROTO_VERSION ||
		    hdr->version != PROTO_VERSION) {
			mpbuf_init(&b);
			proto_mismatch_pack(&b.pk, hdr->version !=
			    PROTO_VERSION ? hdr->version : hello.version);
			peer_send(p, PROTO_MSG_VERSION_MISMATCH, hdr->id,
			    &b.sb);
			mpbuf_free(&b);
		}
		peer_kill(p, "bad agent HELLO");
		return;
	}
	k->hello = 1;
	memset(&m, 0, sizeof m);
	mpbuf_init(&b);
	proto_hello_ok_pack(&b.pk, &runtimed_incarnation);
	peer_send(p, PROTO_MSG_HELLO_OK, hdr->id, &b.sb);
	mpbuf_free(&b);

	if (k->room == NULL && !k->pooled) {
		peer_kill(p, NULL);
		return;
	}
	xasprintf(&rundir, "%s/kernels/%s", runtimed_state_dir, k->id);
	k->start_id = peer_next_id(p);
	m.kernel_id = room_kernel_str(k->id);
	m.kernel_name = room_kernel_str(k->name);
	m.cwd = room_kernel_str(k->cwd);
	m.runtime_dir = room_kernel_str(rundir);
	m.state_dir = room_kernel_str(runtimed_state_dir);
	if (room_kernel_tcp_only(k->name))
		m.transport = room_kernel_str("tcp");
	mpbuf_init(&b);
	proto_agent_start_pack(&b.pk, &m);
	peer_send(p, PROTO_MSG_AGENT_START, k->start_id, &b.sb);
	mpbuf_free(&b);
	free(rundir);
}

/* NUL-free (the codec saw to it) string as a C string, or NULL. */
static char *
room_kernel_dup(const struct proto_str *s)
{
	return (s->ptr != NULL ? xstrndup(s->ptr, s->len) : NULL);
}

static void
room_kernel_ready_msg(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct room_kernel		*k = arg;
	const struct proto_agent_ready	*m = mv;
	char	*name;

	k->kernel_pid = m->pid;
	/* The kernelspec's own spelling of a case-insensitive name. */
	name = room_kernel_dup(&m->kernel_name);
	if (strcasecmp(name, k->name) == 0) {
		free(k->name);
		k->name = name;
		if (k->room != NULL &&
		    strcasecmp(k->room->kernel_name, name) == 0 &&
		    strcmp(k->room->kernel_name, name) != 0) {
			free(k->room->kernel_name);
			k->room->kernel_name = xstrdup(name);
		}
	} else
		free(name);
	free(k->display_name);
	k->display_name = room_kernel_dup(&m->display_name);
	free(k->language);
	k->language = room_kernel_dup(&m->language);
	json_object_put(k->language_info);
	k->language_info = NULL;
	if (m->language_info.obj != NULL)
		k->language_info = mpjson_unpack(m->language_info.obj);
	json_object_put(k->capabilities);
	k->capabilities = m->capabilities.obj != NULL ?
	    mpjson_unpack(m->capabilities.obj) : NULL;
	k->state = ROOM_KERNEL_IDLE;
	if (k->room != NULL && k->room->remote != NULL &&
	    m->server_kernel_id.ptr != NULL) {
		name = room_kernel_dup(&m->server_kernel_id);
		room_remote_kernel_ready(k->room, name);
		free(name);
	}
	if (m->transport.ptr != NULL && m->transport.len == 3 &&
	    memcmp(m->transport.ptr, "tcp", 3) == 0 &&
	    !room_kernel_tcp_only(k->name) &&
	    room_kernel_ntcp < ROOM_KERNEL_TCP_MAX) {
		log_warnx("kernel %s (%s): it could not start on ipc and "
		    "listens on tcp 127.0.0.1; its next kernels will too",
		    k->id, k->name);
		room_kernel_tcp[room_kernel_ntcp++] = xstrdup(k->name);
	}
	log_info("kernel %s (%s): ready, pid %lld%s", k->id, k->name,
	    (long long)k->kernel_pid, k->pooled ? " (pool)" : "");
	if (k->room != NULL)
		room_kernel_attached(k);
}

/*
 * An ERROR from the agent: to AGENT_START the kernel never came up; to
 * an AGENT_EXECUTE the agent refused that cell, and its run ends with
 * the agent's reason (room-exec.c matches the request id).  Anything
 * else is an answer to a client's question.
 */
static void
room_kernel_error(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct room_kernel	*k = arg;
	const char		*s;
	size_t			 len;
	char			*msg;

	if (kernel_introspect_answer(k->room, p, hdr, body) == 0)
		return;
	s = proto_get_str(body, "message", &len);
	xasprintf(&msg, "%.*s", s != NULL ? (int)len : 7,
	    s != NULL ? s : "unknown");
	if (hdr->id == k->start_id && k->state == ROOM_KERNEL_STARTING)
		room_kernel_set_dead(k, msg);
	else if (k->room == NULL || room_exec_refused(k->room, hdr->id,
	    msg) != 0)
		log_warnx("kernel %s: agent error: %s", k->id, msg);
	free(msg);
}

/* OK or a KERNEL_*_REPLY: the answer to a client's question. */
static void
room_kernel_answer(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct room_kernel	*k = arg;

	kernel_introspect_answer(k->room, p, hdr, body);
}

/* The events of a run, typed. */
static void
room_kernel_started(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	room_exec_started(((struct room_kernel *)arg)->room, m);
}

static void
room_kernel_output(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	room_exec_output(((struct room_kernel *)arg)->room, m);
}

static void
room_kernel_clear(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	room_exec_clear(((struct room_kernel *)arg)->room, m);
}

static void
room_kernel_done(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct room_kernel			*k = arg;
	const struct proto_agent_exec_done	*done = mv;

	if (done->has_execution_count)
		k->execution_count = done->execution_count;
	room_exec_done(k->room, done);
}

/*
 * A body the codec refuses kills the link: the agent is ours and does
 * not send such, so it is broken, and its kernel's runs end kernel_died.
 */
static void
room_kernel_refuse(struct peer *p, const struct proto_header *hdr,
    const char *err, void *arg)
{
	struct room_kernel	*k = arg;

	log_warnx("kernel %s: %s", k->id, err);
	peer_kill(p, err);
}

static void
room_kernel_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct room_kernel	*k = arg;

	if (hdr == NULL) {
		kernel_introspect_peer_gone(p);
		k->peer = NULL;
		if (k->retire_room != NULL)
			room_kernel_retired(k, "the old kernel's agent exited "
			    "before its server answered the shutdown: it may "
			    "still run there");
		if (k->room != NULL || k->pooled)
			room_kernel_set_dead(k, "runtime agent exited");
		room_kernel_maybe_destroy(k);
		return;
	}
	if (!k->hello) {
		room_kernel_hello(k, p, hdr, body);
		return;
	}
	if (!proto_msg_from(hdr->type, PROTO_FROM_AGENT)) {
		peer_kill(p, "unexpected message from agent");
		return;
	}
	/* Retired: the answer to its AGENT_SHUTDOWN is all we wait for. */
	if (k->retire_room != NULL && hdr->id == k->retire_id &&
	    (hdr->type == PROTO_MSG_OK || hdr->type == PROTO_MSG_ERROR)) {
		room_kernel_retire_answer(k, hdr, body);
		return;
	}
	if (k->room == NULL && !k->pooled)
		return;		/* detached: only waiting for it to go */
	if (k->room == NULL && hdr->type != PROTO_MSG_AGENT_READY &&
	    hdr->type != PROTO_MSG_ERROR && hdr->type != PROTO_MSG_AGENT_STATUS)
		return;		/* pooled: nothing runs there */
	if (peer_dispatch(room_kernel_table, room_kernel_refuse, p, hdr, body,
	    k) != 0)
		peer_kill(p, "unexpected message from agent");
}

/* SIGCHLD: reap agents. */
/* Has a kernel of this kernelspec had to run on tcp? */
static int
room_kernel_tcp_only(const char *name)
{
	int	i;

	for (i = 0; i < room_kernel_ntcp; i++) {
		if (strcasecmp(room_kernel_tcp[i], name) == 0)
			return (1);
	}
	return (0);
}

/* Its agent is gone: drop its runtime directory and what it left. */
static void
room_kernel_tidy(struct room_kernel *k)
{
	char	*rundir;

	xasprintf(&rundir, "%s/kernels/%s", runtimed_state_dir, k->id);
	/* A killed agent left its connection file and ipc directory. */
	kernel_tidy(rundir);
	if (rmdir(rundir) != 0 && errno != ENOENT && errno != ENOTEMPTY &&
	    errno != EEXIST)
		log_debug("rmdir %s: %s", rundir, strerror(errno));
	free(rundir);
}

void
room_kernel_reap(void)
{
	struct room_kernel	*k, *k1;
	pid_t			 pid;
	int			 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH_SAFE(k, &room_kernels, entry, k1) {
			if (k->pid != pid)
				continue;
			if (WIFSIGNALED(status))
				log_info("agent %ld exited on signal %d",
				    (long)pid, WTERMSIG(status));
			else
				log_info("agent %ld exited %d", (long)pid,
				    WEXITSTATUS(status));
			k->pid = -1;
			room_kernel_tidy(k);
			room_kernel_maybe_destroy(k);
			break;
		}
	}
}

/* Agents still running, but those of the warm pool. */
u_int
room_kernel_count(void)
{
	struct room_kernel	*k;
	u_int			 n = 0;

	/* A pooled kernel runs too: it is counted (and listed as pooled). */
	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid > 0 && k->state != ROOM_KERNEL_DEAD)
			n++;
	}
	return (n);
}

/* Agents linked to us (past HELLO), pooled or a room's. */
u_int
room_kernel_agents(void)
{
	struct room_kernel	*k;
	u_int			 n = 0;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->peer != NULL && k->hello)
			n++;
	}
	return (n);
}

/*
 * DAEMON_STATUS_REPLY's kernel_list: [{kernel_id, name, state, pooled,
 * notebook_id, path, pid, agent_pid}], every kernel whose agent runs.
 */
void
room_kernel_list_pack(msgpack_packer *pk, const void *unused)
{
	struct room_kernel	*k;
	u_int			 n = 0;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid > 0)
			n++;
	}
	msgpack_pack_array(pk, n);
	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid <= 0)
			continue;
		msgpack_pack_map(pk, 8);
		proto_pack_str(pk, "kernel_id", k->id);
		proto_pack_str(pk, "name", k->name);
		proto_pack_str(pk, "state", room_kernel_state_name(k));
		proto_pack_bool(pk, "pooled", k->pooled);
		if (k->room != NULL) {
			proto_pack_str(pk, "notebook_id", k->room->id);
			if (k->room->path != NULL)
				proto_pack_str(pk, "path", k->room->path);
			else
				proto_pack_nil(pk, "path");
		} else {
			proto_pack_nil(pk, "notebook_id");
			proto_pack_nil(pk, "path");
		}
		if (k->kernel_pid > 0)
			proto_pack_int(pk, "pid", k->kernel_pid);
		else
			proto_pack_nil(pk, "pid");
		proto_pack_int(pk, "agent_pid", k->pid);
	}
}

/* Agent processes of any kind still running (for a stop). */
u_int
room_kernel_processes(void)
{
	struct room_kernel	*k;
	u_int			 n = 0;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid > 0)
			n++;
	}
	return (n);
}

int
room_kernel_is_dead(struct room_kernel *k)
{
	return (k->state == ROOM_KERNEL_DEAD);
}

int
room_kernel_is_starting(struct room_kernel *k)
{
	return (k->state == ROOM_KERNEL_STARTING);
}

const char *
room_kernel_name(struct room_kernel *k)
{
	return (k->name);
}

/* The kernel session outputs come from now (its id); NULL when none. */
const char *
room_kernel_session(struct room *r)
{
	if (r->kernel == NULL || r->kernel->state == ROOM_KERNEL_DEAD)
		return (NULL);
	return (r->kernel->id);
}

/* Graceful stop: every agent shuts its kernel down and exits. */
void
room_kernel_shutdown_all(void)
{
	struct room_kernel	*k, *k1;

	TAILQ_FOREACH_SAFE(k, &room_kernels, entry, k1) {
		if (k->room != NULL) {
			k->room->kernel = NULL;
			room_kernel_detach(k, 1);
		} else if (k->pooled)
			room_kernel_detach(k, 1);
	}
}

/* Stragglers: the agent's whole process group. */
void
room_kernel_kill_all(void)
{
	struct room_kernel	*k;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid > 0) {
			log_warnx("agent %ld did not exit; killing it",
			    (long)k->pid);
			kill(-k->pid, SIGKILL);
			kill(k->pid, SIGKILL);
		}
	}
}

/* The agent's link, for a question to a ready kernel; NULL if none. */
struct peer *
room_kernel_agent(struct room *r)
{
	struct room_kernel	*k = r->kernel;

	if (k == NULL || k->peer == NULL || !k->hello ||
	    k->state == ROOM_KERNEL_STARTING || k->state == ROOM_KERNEL_DEAD)
		return (NULL);
	return (k->peer);
}

/* AGENT_INPUT_REQUEST: the room's running cell asks for input. */
static void
room_kernel_input(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *m, void *arg)
{
	struct room_kernel	*k = arg;

	if (k->room != NULL)
		room_input_request(k->room, m);
}

/* A client that was waiting for a restart went away. */
void
room_kernel_peer_gone(struct peer *p)
{
	struct room_kernel	*k;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->restart_peer == p)
			k->restart_peer = NULL;
		if (k->retire_peer == p)
			k->retire_peer = NULL;
	}
}

/* The keepalive ran out: shut the kernel down if the room is idle. */
static void
room_kernel_idle_cb(evutil_socket_t fd, short events, void *arg)
{
	struct room_kernel	*k = arg;
	struct room		*r = k->room;
	struct timeval		 tv = { room_kernel_keepalive, 0 };

	if (r == NULL || r->kernel != k || r->nmembers > 0)
		return;
	if (room_exec_queue_length(r) > 0) {
		/* Idle means idle: a run nobody watches still finishes. */
		evtimer_add(k->idle_ev, &tv);
		return;
	}
	log_info("kernel %s (%s): no client in room %s for %d s; shutting "
	    "it down", k->id, k->name, r->id, room_kernel_keepalive);
	r->kernel = NULL;
	/* A server's kernel: how the server takes the DELETE matters. */
	if (r->remote != NULL && k->peer != NULL && k->hello) {
		k->retire_idle = 1;
		room_kernel_retire(k, r);
	} else
		room_kernel_detach(k, 1);
	room_changed(r, NULL, "kernel");
}

/*
 * The number of client peers in the room changed (room.c tells us): with
 * none left, arm the keepalive; a peer arriving disarms it.
 */
void
room_kernel_peers_changed(struct room *r)
{
	struct room_kernel	*k = r->kernel;
	struct timeval		 tv = { room_kernel_keepalive, 0 };

	if (k == NULL)
		return;
	if (r->nmembers > 0) {
		if (k->idle_ev != NULL && evtimer_pending(k->idle_ev, NULL)) {
			log_info("kernel %s: a client came back; teardown "
			    "cancelled", k->id);
			evtimer_del(k->idle_ev);
		}
		return;
	}
	if (k->state == ROOM_KERNEL_DEAD)
		return;
	if (k->idle_ev == NULL)
		k->idle_ev = evtimer_new(runtimed_base, room_kernel_idle_cb, k);
	if (!evtimer_pending(k->idle_ev, NULL)) {
		log_info("kernel %s: room %s has no client; shutdown in %d s",
		    k->id, r->id, room_kernel_keepalive);
		evtimer_add(k->idle_ev, &tv);
	}
}
