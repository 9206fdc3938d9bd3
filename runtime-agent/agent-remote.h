/* SPDX-License-Identifier: ISC */
/*
 * agent-remote.h: runtimed-agent-remote, the runtime agent for a kernel
 * on a Jupyter Server.  It speaks the same frames to the daemon as
 * runtimed-agent (agent.h) and links its wire codec and execute mapping
 * (agent-wire.c, agent-exec.c); the kernel is reached over the server's
 * kernels API and its kernel WebSocket instead of ZeroMQ.
 *
 * agent-remote.c		main, how a server's kernel is made and
 *				announced (the daemon link is agent-daemon.c)
 * agent-remote-kernel.c	the agent_kernel_* calls agent-exec.c makes,
 *				over REST and the WebSocket
 * agent-remote-ws.c		the WebSocket client (RFC 6455) and the
 *				kernel message encodings on it
 */

#ifndef AGENT_REMOTE_H
#define AGENT_REMOTE_H

#include "agent.h"
#include "domain.h"

/* A whole WebSocket message (all fragments) past this is refused. */
#define AGENT_REMOTE_WS_MAX		(64 * 1024 * 1024)
/* The server's HTTP answer to the upgrade, headers only. */
#define AGENT_REMOTE_WS_HANDSHAKE_MAX	(16 * 1024)
#define AGENT_REMOTE_WS_V1		"v1.kernel.websocket.jupyter.org"
/* Parts of a kernel message we pass on: header .. content, buffers. */
/* What a redacted server token is called (agent-redact.c). */
#define AGENT_REMOTE_TOKEN_LABEL	"Jupyter Server token"
#define AGENT_REMOTE_MAX_PARTS		64

enum agent_remote_ws_opcode {
	AGENT_REMOTE_WS_CONT = 0x0,
	AGENT_REMOTE_WS_TEXT = 0x1,
	AGENT_REMOTE_WS_BINARY = 0x2,
	AGENT_REMOTE_WS_CLOSE = 0x8,
	AGENT_REMOTE_WS_PING = 0x9,
	AGENT_REMOTE_WS_PONG = 0xa,
};

/* One frame as received; payload points into the input, unmasked. */
struct agent_remote_ws_frame {
	int		 fin;
	int		 opcode;
	const u_char	*payload;
	size_t		 len;
	size_t		 size;		/* header and payload */
};

struct agent_remote_ws;
struct agent_remote_kernel;

struct agent_remote_ws_cbs {
	void	(*open)(void *, int);	/* v1 subprotocol chosen? */
	void	(*message)(void *, int, const u_char *, size_t);
	void	(*closed)(void *, const char *);
};

/* agent-remote-ws.c */
int	 agent_remote_ws_frame_parse(const u_char *, size_t, size_t,
	     struct agent_remote_ws_frame *, char **);
void	 agent_remote_ws_accept(const char *, char *);
int	 agent_remote_ws_handshake_parse(const char *, size_t, const char *,
	     size_t *, char **, char **);
int	 agent_remote_ws_v1_split(const u_char *, size_t,
	     struct agent_wire_frame *, size_t, size_t *, char **);
int	 agent_remote_ws_binary_split(const u_char *, size_t,
	     struct agent_wire_frame *, size_t, size_t *, char **);
struct agent_wire_msg *agent_remote_ws_decode(int, int, const u_char *,
	     size_t, char **, char **);
char	*agent_remote_ws_encode(int, const char *, char **, size_t *);
struct agent_remote_ws *agent_remote_ws_create(struct event_base *,
	     const struct domain *, const char *, int,
	     const struct agent_remote_ws_cbs *, void *, char **);
int	 agent_remote_ws_send(struct agent_remote_ws *, int, const void *,
	     size_t);
void	 agent_remote_ws_free(struct agent_remote_ws *);

/* agent-remote-kernel.c */
struct agent_kernel *agent_remote_kernel_create(struct event_base *,
	     struct domain *, const char *, const char *);
int	 agent_remote_kernel_list_specs(struct domain *);
const char *agent_remote_kernel_name(struct agent_kernel *);
const char *agent_remote_kernel_why(struct agent_kernel *);
const char *agent_remote_kernel_refused(struct agent_kernel *);
int	 agent_kernel_start_ok(struct agent_kernel *);
const char *agent_remote_kernel_display_name(struct agent_kernel *);
const char *agent_remote_kernel_language(struct agent_kernel *);
void	 agent_remote_kernel_keep(struct agent_kernel *, const char *);
const char *agent_remote_kernel_id(struct agent_kernel *);
int	 agent_remote_kernel_orphaned(struct agent_kernel *);
void	 agent_remote_kernel_interrupt(struct agent_kernel *, uint32_t);

#endif
