/*
 * room-kernel.c: the link to a room's runtime agent (one kernel each).
 *
 * The agent is spawned with one end of a socketpair as its fd 3 and in
 * a session of its own, so a stop can signal its whole process group.
 * A kernel struct outlives its room's interest in it (restart, stop)
 * until both its link is lost and its process is reaped.
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimed.h"

enum room_kernel_state {
	ROOM_KERNEL_STARTING,
	ROOM_KERNEL_IDLE,
	ROOM_KERNEL_BUSY,
	ROOM_KERNEL_DEAD,
};

struct room_kernel {
	struct room		*room;	/* NULL once detached */
	char			 id[37];
	char			*name;
	pid_t			 pid;	/* agent; -1 once reaped */
	struct peer		*peer;	/* NULL once link lost */
	int			 hello;
	enum room_kernel_state	 state;
	char			*message;	/* why it is dead */
	uint32_t		 start_id;

	int64_t			 kernel_pid;
	char			*display_name;
	char			*language;
	struct json_object	*language_info;
	int64_t			 execution_count;

	struct peer		*restart_peer;	/* KERNEL_RESTART */
	uint32_t		 restart_id;

	TAILQ_ENTRY(room_kernel) entry;
};
static TAILQ_HEAD(, room_kernel) room_kernels =
    TAILQ_HEAD_INITIALIZER(room_kernels);

static void	room_kernel_dispatch(struct peer *,
		    const struct proto_header *, const msgpack_object *,
		    void *);

static void
room_kernel_destroy(struct room_kernel *k)
{
	TAILQ_REMOVE(&room_kernels, k, entry);
	free(k->name);
	free(k->message);
	free(k->display_name);
	free(k->language);
	json_object_put(k->language_info);
	free(k);
}

/* Free a detached kernel once nothing refers to it any more. */
static void
room_kernel_maybe_destroy(struct room_kernel *k)
{
	if (k->room == NULL && k->peer == NULL && k->pid == -1)
		room_kernel_destroy(k);
}

static void
room_kernel_reply_restart(struct room_kernel *k)
{
	if (k->restart_peer == NULL)
		return;
	if (k->state == ROOM_KERNEL_DEAD)
		peer_send_error(k->restart_peer, k->restart_id,
		    "kernel_unavailable", "kernel restart failed: %s",
		    k->message != NULL ? k->message : "unknown error");
	else
		peer_send_ok(k->restart_peer, k->restart_id);
	k->restart_peer = NULL;
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
	if (k->room != NULL) {
		room_exec_kernel_died(k->room, why);
		room_changed(k->room, NULL, "kernel");
	}
}

/* Start the room's kernel without waiting for it. */
void
room_kernel_start(struct room *r)
{
	struct room_kernel	*k;
	char			*agent, *rundir, *cause = NULL;
	char			*argv[4];
	int			 sv[2], i;

	/* The agent logs (to our stderr) as verbosely as we do. */
	argv[0] = (char *)"runtimed-agent";
	for (i = 1; i <= runtimed_log_level && i < 3; i++)
		argv[i] = (char *)"-v";
	argv[i] = NULL;

	k = xcalloc(1, sizeof *k);
	k->room = r;
	k->pid = -1;
	k->name = xstrdup(r->kernel_name);
	k->execution_count = 0;
	util_uuid(k->id);
	TAILQ_INSERT_TAIL(&room_kernels, k, entry);
	r->kernel = k;

	xasprintf(&rundir, "%s/kernels/%s", runtimed_state_dir, k->id);
	if (util_mkdir_private(rundir, &cause) != 0) {
		free(rundir);
		room_kernel_set_dead(k, cause);
		free(cause);
		return;
	}
	free(rundir);
	if ((agent = spawn_find("runtimed-agent", RUNTIMED_LIBEXECDIR)) ==
	    NULL) {
		room_kernel_set_dead(k, "runtimed-agent not found");
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(agent);
		room_kernel_set_dead(k, "socketpair failed");
		return;
	}
	k->pid = spawn_child(agent, argv, sv[1], 1, &cause);
	close(sv[1]);
	free(agent);
	if (k->pid == -1) {
		close(sv[0]);
		room_kernel_set_dead(k, cause != NULL ? cause : "spawn failed");
		free(cause);
		return;
	}
	k->peer = peer_create(runtimed_base, sv[0], "agent",
	    room_kernel_dispatch, k);
	log_info("kernel %s (%s): agent pid %ld", k->id, k->name,
	    (long)k->pid);
}

/* Detach the room's kernel: close its link so the agent exits. */
static void
room_kernel_detach(struct room_kernel *k, int tell)
{
	struct mpbuf	b;

	k->room = NULL;
	k->restart_peer = NULL;
	if (k->peer != NULL) {
		if (tell) {
			mpbuf_init(&b);
			msgpack_pack_map(&b.pk, 0);
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
}

const char *
room_kernel_state(struct room *r)
{
	struct room_kernel	*k = r->kernel;

	if (k == NULL)
		return ("none");
	switch (k->state) {
	case ROOM_KERNEL_STARTING:
		return (k->restart_peer != NULL ? "restarting" : "starting");
	case ROOM_KERNEL_IDLE:
		return ("idle");
	case ROOM_KERNEL_BUSY:
		return ("busy");
	case ROOM_KERNEL_DEAD:
		return ("dead");
	}
	return ("none");
}

/* Can the kernel take an AGENT_EXECUTE now? */
int
room_kernel_ready(struct room *r)
{
	struct room_kernel	*k = r->kernel;

	return (k != NULL && k->peer != NULL &&
	    (k->state == ROOM_KERNEL_IDLE || k->state == ROOM_KERNEL_BUSY));
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

int
room_kernel_execute(struct room *r, const char *exec_id, const char *cell_id,
    const char *code, size_t len)
{
	struct room_kernel	*k = r->kernel;
	struct mpbuf		 b;

	if (!room_kernel_ready(r))
		return (-1);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_str(&b.pk, "exec_id", exec_id);
	proto_pack_str(&b.pk, "cell_id", cell_id);
	proto_pack_strn(&b.pk, "code", code, len);
	peer_send(k->peer, PROTO_MSG_AGENT_EXECUTE, peer_next_id(k->peer),
	    &b.sb);
	mpbuf_free(&b);
	return (0);
}

int
room_kernel_interrupt(struct room *r)
{
	struct room_kernel	*k = r->kernel;
	struct mpbuf		 b;

	if (k == NULL || k->peer == NULL || k->state == ROOM_KERNEL_DEAD)
		return (-1);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
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
	if (r->kernel != NULL && r->kernel->restart_peer != NULL)
		return (-1);
	room_exec_interrupt(r, "kernel_restarted");
	if (r->kernel != NULL)
		room_kernel_detach(r->kernel, 1);
	r->kernel = NULL;
	room_kernel_start(r);
	if (r->kernel->state == ROOM_KERNEL_DEAD) {
		peer_send_error(p, id, "kernel_unavailable",
		    "kernel restart failed: %s", r->kernel->message);
	} else {
		r->kernel->restart_peer = p;
		r->kernel->restart_id = id;
	}
	room_changed(r, NULL, "kernel");
	return (0);
}

void
room_kernel_pack_info(struct room *r, msgpack_packer *pk)
{
	struct room_kernel	*k = r->kernel;

	msgpack_pack_map(pk, 9);
	proto_pack_str(pk, "name", r->kernel_name);
	proto_pack_str(pk, "state", room_kernel_state(r));
	if (k != NULL && k->kernel_pid > 0)
		proto_pack_int(pk, "pid", k->kernel_pid);
	else
		proto_pack_nil(pk, "pid");
	proto_pack_key(pk, "language_info");
	if (k != NULL && k->language_info != NULL)
		mpjson_pack(pk, k->language_info);
	else
		msgpack_pack_nil(pk);
	proto_pack_int(pk, "execution_count",
	    k != NULL ? k->execution_count : 0);
	proto_pack_uint(pk, "queue", room_exec_queue_length(r));
	if (k != NULL && k->display_name != NULL)
		proto_pack_str(pk, "display_name", k->display_name);
	else
		proto_pack_nil(pk, "display_name");
	if (k != NULL && k->message != NULL)
		proto_pack_str(pk, "message", k->message);
	else
		proto_pack_nil(pk, "message");
	if (k != NULL && k->pid > 0)
		proto_pack_int(pk, "agent_pid", k->pid);
	else
		proto_pack_nil(pk, "agent_pid");
}

/* The agent's HELLO: answer, then ask it to start the kernel. */
static void
room_kernel_hello(struct room_kernel *k, struct peer *p,
    const struct proto_header *hdr, const msgpack_object *body)
{
	struct proto_hello	 hello;
	struct mpbuf		 b;
	char			 err[256], *cwd, *rundir, *copy;
	const char		*home;

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
	mpbuf_init(&b);
	proto_hello_ok_pack(&b.pk, &runtimed_incarnation);
	peer_send(p, PROTO_MSG_HELLO_OK, hdr->id, &b.sb);
	mpbuf_free(&b);

	if (k->room == NULL) {
		peer_kill(p, NULL);
		return;
	}
	if (k->room->path != NULL) {
		copy = xstrdup(k->room->path);
		*strrchr(copy, '/') = '\0';
		cwd = xstrdup(*copy == '\0' ? "/" : copy);
		free(copy);
	} else {
		if ((home = getenv("HOME")) == NULL || *home == '\0')
			home = "/";
		cwd = xstrdup(home);
	}
	xasprintf(&rundir, "%s/kernels/%s", runtimed_state_dir, k->id);
	k->start_id = peer_next_id(p);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	proto_pack_str(&b.pk, "kernel_id", k->id);
	proto_pack_str(&b.pk, "kernel_name", k->name);
	proto_pack_str(&b.pk, "cwd", cwd);
	proto_pack_str(&b.pk, "runtime_dir", rundir);
	peer_send(p, PROTO_MSG_AGENT_START, k->start_id, &b.sb);
	mpbuf_free(&b);
	free(cwd);
	free(rundir);
}

static void
room_kernel_ready_msg(struct room_kernel *k, const msgpack_object *body)
{
	const msgpack_object	*li;
	struct room		*r = k->room;
	int64_t			 pid;

	if (proto_get_int(body, "pid", &pid) == 0)
		k->kernel_pid = pid;
	free(k->display_name);
	k->display_name = proto_dup_str(body, "display_name");
	free(k->language);
	k->language = proto_dup_str(body, "language");
	json_object_put(k->language_info);
	k->language_info = NULL;
	if ((li = proto_get_map(body, "language_info")) != NULL)
		k->language_info = mpjson_unpack(li);
	k->state = ROOM_KERNEL_IDLE;
	log_info("kernel %s (%s): ready, pid %lld", k->id, k->name,
	    (long long)k->kernel_pid);
	room_kernel_reply_restart(k);

	/* A notebook we created gets its kernelspec once it is known. */
	if (r->fresh && !json_object_object_get_ex(r->nb->metadata,
	    "kernelspec", NULL)) {
		room_ipynb_set_kernelspec(r->nb, k->name, k->display_name,
		    k->language);
		room_changed(r, NULL, "cells");
	}
	room_changed(r, NULL, "kernel");
	room_exec_kick(r);
}

static void
room_kernel_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	struct room_kernel	*k = arg;
	const char		*s, *why;
	size_t			 len;
	int64_t			 ec;
	char			*msg;

	if (hdr == NULL) {
		k->peer = NULL;
		if (k->room != NULL)
			room_kernel_set_dead(k, "runtime agent exited");
		room_kernel_maybe_destroy(k);
		return;
	}
	if (!k->hello) {
		room_kernel_hello(k, p, hdr, body);
		return;
	}
	if (k->room == NULL)
		return;		/* detached: only waiting for it to go */

	switch (hdr->type) {
	case PROTO_MSG_AGENT_READY:
		room_kernel_ready_msg(k, body);
		break;
	case PROTO_MSG_ERROR:
		s = proto_get_str(body, "message", &len);
		xasprintf(&msg, "%.*s", s != NULL ? (int)len : 7,
		    s != NULL ? s : "unknown");
		if (hdr->id == k->start_id && k->state ==
		    ROOM_KERNEL_STARTING)
			room_kernel_set_dead(k, msg);
		else
			log_warnx("kernel %s: agent error: %s", k->id, msg);
		free(msg);
		break;
	case PROTO_MSG_OK:
	case PROTO_MSG_PONG:
		break;
	case PROTO_MSG_PING:
		peer_send_raw(p, PROTO_MSG_PONG, hdr->id, "\x80", 1);
		break;
	case PROTO_MSG_AGENT_STATUS:
		if ((s = proto_get_str(body, "state", &len)) == NULL) {
			peer_kill(p, "AGENT_STATUS without state");
			break;
		}
		if (len == 4 && memcmp(s, "dead", 4) == 0) {
			why = proto_get_str(body, "reason", &len);
			xasprintf(&msg, "kernel died: %.*s",
			    why != NULL ? (int)len : 7,
			    why != NULL ? why : "unknown");
			room_kernel_set_dead(k, msg);
			free(msg);
		} else if (k->state != ROOM_KERNEL_DEAD &&
		    k->state != ROOM_KERNEL_STARTING) {
			k->state = (len == 4 && memcmp(s, "busy", 4) == 0) ?
			    ROOM_KERNEL_BUSY : ROOM_KERNEL_IDLE;
		}
		break;
	case PROTO_MSG_AGENT_EXEC_STARTED:
		room_exec_started(k->room, body);
		break;
	case PROTO_MSG_AGENT_OUTPUT:
		room_exec_output(k->room, body);
		break;
	case PROTO_MSG_AGENT_CLEAR_OUTPUT:
		room_exec_clear(k->room, body);
		break;
	case PROTO_MSG_AGENT_EXEC_DONE:
		if (proto_get_int(body, "execution_count", &ec) == 0)
			k->execution_count = ec;
		room_exec_done(k->room, body);
		break;
	default:
		peer_kill(p, "unexpected message from agent");
		break;
	}
}

/* SIGCHLD: reap agents. */
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
			room_kernel_maybe_destroy(k);
			break;
		}
	}
}

/* Agents still running. */
u_int
room_kernel_count(void)
{
	struct room_kernel	*k;
	u_int			 n = 0;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->pid > 0)
			n++;
	}
	return (n);
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
		}
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

/* A client that was waiting for a restart went away. */
void
room_kernel_peer_gone(struct peer *p)
{
	struct room_kernel	*k;

	TAILQ_FOREACH(k, &room_kernels, entry) {
		if (k->restart_peer == p)
			k->restart_peer = NULL;
	}
}
