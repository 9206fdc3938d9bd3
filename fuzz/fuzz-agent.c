/* SPDX-License-Identifier: ISC */
/*
 * fuzz-agent.c: libFuzzer target for the agent's handling of what the
 * daemon sends on fd 3: the input is that byte stream (frames: 12-byte
 * header, body).  agent.c and agent-daemon.c are compiled in here, its
 * main() renamed, so the real agent_daemon_dispatch (a static function)
 * takes each frame on a socketpair, with the handshake state and
 * handlers as they are.
 *
 * Left out, so the process stays: before HELLO_OK is accepted,
 * VERSION_MISMATCH and ERROR (the agent exits on them, as it should), and
 * the loss of the link (the agent exits 1: the harness ends the input
 * there instead); AGENT_START bodies holding '/' or "..".  The harness
 * runs in a private directory of mode 0755, so a runtime_dir can only
 * name that directory or nothing, which the agent refuses (it must be
 * 0700): no kernel is ever started, AGENT_START is decoded and checked
 * up to the runtime directory, and EXECUTE, INTERRUPT and SHUTDOWN meet
 * "no kernel".
 */

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime-agent/agent.h"

int	agent_main(int, char **);
#define main agent_main
#include "runtime-agent/agent.c"
#undef main
#include "runtime-agent/agent-daemon.c"

#define FUZZ_AGENT_PASSES	64

static char	 fuzz_agent_dir[] = "/tmp/fuzz-agent-XXXXXX";
static int	 fuzz_agent_home = -1;

static void	fuzz_agent_cwd(int);
static void	fuzz_agent_cleanup(void);
static void	fuzz_agent_init(void);
static int	fuzz_agent_drain(int);
static int	fuzz_agent_skip(const struct proto_header *, const uint8_t *,
		    size_t);
static void	fuzz_agent_dispatch(struct peer *, const struct proto_header *,
		    const msgpack_object *, void *);

static void
fuzz_agent_cwd(int ours)
{
	if (ours ? chdir(fuzz_agent_dir) : fchdir(fuzz_agent_home)) {
		perror("fuzz-agent: chdir");
		abort();
	}
}

static void
fuzz_agent_cleanup(void)
{
	rmdir(fuzz_agent_dir);
}

static void
fuzz_agent_init(void)
{
	log_open("fuzz-agent", getenv("FUZZ_TRACE") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARN, getenv("FUZZ_TRACE") != NULL ?
	    NULL : "/dev/null");
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(fuzz_agent_dir) == NULL || chmod(fuzz_agent_dir,
	    0755) != 0 ||
	    (fuzz_agent_home = open(".", O_RDONLY | O_DIRECTORY)) == -1) {
		perror("fuzz-agent");
		exit(1);
	}
	atexit(fuzz_agent_cleanup);
	agent_daemon_init(&agent_hooks);
	if ((agent_daemon_base = event_base_new()) == NULL)
		abort();
	agent_exec_init(agent_daemon_base);
}

/* Read (and drop) what the agent answered; 1 once it closed its end. */
static int
fuzz_agent_drain(int fd)
{
	char	buf[65536];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		;
	return (n == 0);
}

/* Is this frame one the harness leaves out (see the top)? */
static int
fuzz_agent_skip(const struct proto_header *hdr, const uint8_t *body,
    size_t len)
{
	if (!agent_daemon_hello_done &&
	    (hdr->type == PROTO_MSG_VERSION_MISMATCH ||
	    hdr->type == PROTO_MSG_ERROR))
		return (1);
	return (memchr(body, '/', len) != NULL ||
	    memmem(body, len, "..", 2) != NULL);
}

/* agent_daemon_dispatch, but where the agent would exit the input ends. */
static void
fuzz_agent_dispatch(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, void *arg)
{
	if (hdr == NULL && !agent_daemon_hello_done) {
		/* "daemon closed fd 3 during the handshake": exit 1. */
		agent_daemon_peer = NULL;
		return;
	}
	agent_daemon_dispatch(p, hdr, body, arg);
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct proto_header	 hdr;
	size_t			 blen, n;
	int			 sv[2], i;

	if (!ready) {
		fuzz_agent_init();
		ready = 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	fuzz_agent_cwd(1);
	agent_daemon_peer = peer_create(agent_daemon_base, sv[0], "daemon",
	    fuzz_agent_dispatch, NULL);
	/* One frame at a time, each handled before the next is sent. */
	while (size > 0 && agent_daemon_peer != NULL) {
		n = size;
		if (size >= PROTO_HEADER_SIZE) {
			proto_header_unpack(data, &hdr);
			blen = size - PROTO_HEADER_SIZE;
			if (blen > hdr.length)
				blen = hdr.length;
			n = PROTO_HEADER_SIZE + blen;
			if (fuzz_agent_skip(&hdr, data + PROTO_HEADER_SIZE,
			    blen)) {
				data += n;
				size -= n;
				continue;
			}
		}
		if (write(sv[1], data, n) != (ssize_t)n)
			break;
		data += n;
		size -= n;
		for (i = 0; i < 4; i++)
			event_base_loop(agent_daemon_base, EVLOOP_NONBLOCK);
		fuzz_agent_drain(sv[1]);
	}

	/* The daemon hangs up; past the handshake the agent just ends. */
	agent_daemon_hello_done = 1;
	shutdown(sv[1], SHUT_WR);
	for (i = 0; i < FUZZ_AGENT_PASSES && agent_daemon_peer != NULL; i++) {
		event_base_loop(agent_daemon_base, EVLOOP_NONBLOCK);
		fuzz_agent_drain(sv[1]);
	}
	for (i = 0; i < 4; i++)
		event_base_loop(agent_daemon_base, EVLOOP_NONBLOCK);
	close(sv[1]);
	if (agent_daemon_peer != NULL || agent_daemon_k != NULL) {
		fprintf(stderr, "fuzz-agent: the daemon link outlived EOF\n");
		abort();
	}
	agent_daemon_hello_done = 0;
	agent_daemon_exiting = 0;
	agent_daemon_start_pending = 0;
	agent_daemon_shutdown_pending = 0;
	free(agent_daemon_state);
	agent_daemon_state = NULL;
	fuzz_agent_cwd(0);
	return (0);
}
