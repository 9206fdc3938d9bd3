/* SPDX-License-Identifier: ISC */
/*
 * agent.h: runtimed-agent, the process that runs one Jupyter kernel for
 * the daemon.  It talks frames (proto.h) to the daemon on fd 3 and the
 * Jupyter wire protocol over ZeroMQ to the kernel.
 *
 * agent.c		main, how a local kernel is started and announced
 * agent-daemon.c	the daemon link on fd 3 and request dispatch,
 *			shared with runtimed-agent-remote (agent-remote.h)
 * agent-wire.c		Jupyter message codec: HMAC, header, parse
 * agent-kernel.c	connection file, launch, ZeroMQ sockets, lifecycle
 * agent-heartbeat.c	liveness: heartbeat echoes, unresponsive, hung
 * agent-stderr.c	the kernel's output pipe: logged, its tail kept
 * agent-exec.c		execute requests and the iopub -> output mapping
 * agent-blob.c		large values written off the loop, frames in order
 * agent-stdin.c	a cell's input(): input_request <-> AGENT_INPUT_*
 * agent-introspect.c	capabilities, variables, completion, inspection
 * agent-redact.c	secrets taken out of outputs (decision 064)
 * agent-widget.c	ipywidgets models' state from comm messages (089)
 */

#ifndef AGENT_H
#define AGENT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "kernelspec.h"

struct agent_wire_msg;
struct agent_wire_seen;
struct agent_kernel;
struct agent_heartbeat;
struct agent_stderr;
struct proto_agent_start;
struct proto_agent_ready;

/* What runtimed-agent and runtimed-agent-remote do differently. */
struct agent_daemon_hooks {
	const char	*name;		/* the executable, for messages */
	/* SIGCHLD: the kernel is our child; NULL if it is not. */
	void		(*sigchld)(struct agent_kernel *);
	int		 language_fallback; /* language from language_info */
	/* Make the kernel AGENT_START asks for, or answer the error. */
	struct agent_kernel *(*create)(struct event_base *, struct peer *,
			    uint32_t, const struct proto_agent_start *);
	/* Forget what else was in flight, past agent-exec.c's. */
	void		(*clear)(void);
	/* Why a restart cannot be started, or NULL. */
	const char	*(*restart_check)(struct agent_kernel *);
	/*
	 * The daemon died without asking for a shutdown: 1 if the kernel
	 * was left to outlive it (a server's), 0 to shut it down; NULL: 0.
	 */
	int		(*orphaned)(struct agent_kernel *);
	/*
	 * AGENT_INTERRUPT answered by the kernel's side once it knows (a
	 * server may refuse it); NULL: agent_kernel_interrupt, then OK.
	 */
	void		(*interrupt)(struct agent_kernel *, uint32_t);
	/*
	 * After an AGENT_SHUTDOWN: why the kernel may still run (a server
	 * refused it), answered as refused; NULL (or no hook): OK.
	 */
	const char	*(*shutdown_refused)(struct agent_kernel *);
};

/* Jupyter channels the agent uses. */
enum agent_channel {
	AGENT_CHANNEL_SHELL,
	AGENT_CHANNEL_CONTROL,
	AGENT_CHANNEL_STDIN,
	AGENT_CHANNEL_IOPUB,
	AGENT_CHANNEL_HB,		/* raw REQ echo, not Jupyter frames */
};
#define AGENT_NCHANNELS		5

/* One frame of a multipart message, not owned. */
struct agent_wire_frame {
	const void	*data;
	size_t		 len;
};

#define AGENT_WIRE_DELIM	"<IDS|MSG>"
#define AGENT_WIRE_VERSION	"5.3"
/* Parts after the delimiter: signature, header, parent, metadata, content. */
#define AGENT_WIRE_NPARTS	5

/* agent.c, agent-remote.c */
void	 agent_ready(struct agent_kernel *, struct json_object *);

/* agent-daemon.c */
void	 agent_send(uint16_t, uint32_t, struct mpbuf *);
void	 agent_send_raw(uint16_t, uint32_t, const void *, size_t);
void	 agent_send_ok(uint32_t);
void	 agent_send_error(uint32_t, const char *, const char *, ...)
	     printflike(3, 4);
void	 agent_failed(struct agent_kernel *, const char *);
void	 agent_died(struct agent_kernel *, const char *);
void	 agent_responsive(struct agent_kernel *, int, const char *);
const char *agent_state_dir(void);
struct event_base *agent_base_get(void);
struct proto_str agent_str(const char *);
void	 agent_daemon_init(const struct agent_daemon_hooks *);
const char *agent_daemon_name(void);
int	 agent_daemon_option(int, const char *, int *, const char **, int *);
void	 agent_daemon_ready(struct proto_agent_ready *, struct json_object *,
	     const char *);
struct agent_kernel *agent_daemon_kernel(void);
int	 agent_daemon_backlog(void (*)(void *), void *);
void	 agent_daemon_run(void);

/* agent-wire-stream.c */
struct json_object *agent_wire_stream_content(const char *, size_t);
void	 agent_wire_stream_free(struct json_object *, void *);
struct json_object *agent_wire_stream_output(struct json_object *);

/* agent-wire.c */
int	 agent_wire_sign(const char *, const struct agent_wire_frame *,
	     size_t, char *);
void	 agent_wire_date(char *, size_t);
int	 agent_wire_encode(const char *, const char *, const char *,
	     struct json_object *, struct json_object *, char *, char **);
void	 agent_wire_parts_free(char **);
int	 agent_wire_find_delim(const struct agent_wire_frame *, size_t);
struct agent_wire_msg *agent_wire_parse(const char *,
	     const struct agent_wire_frame *, size_t, char **);
void	 agent_wire_msg_free(struct agent_wire_msg *);
const char *agent_wire_msg_type(struct agent_wire_msg *);
const char *agent_wire_msg_id(struct agent_wire_msg *);
const char *agent_wire_msg_parent_id(struct agent_wire_msg *);
struct json_object *agent_wire_msg_header(struct agent_wire_msg *);
struct json_object *agent_wire_msg_content(struct agent_wire_msg *);
size_t	 agent_wire_msg_nbuffers(struct agent_wire_msg *);
const char *agent_wire_msg_signature(struct agent_wire_msg *);
struct agent_wire_seen *agent_wire_seen_create(size_t);
void	 agent_wire_seen_free(struct agent_wire_seen *);
int	 agent_wire_seen_check(struct agent_wire_seen *, const char *);
size_t	 agent_wire_seen_count(struct agent_wire_seen *);

/* agent-kernel.c */
struct agent_kernel *agent_kernel_create(struct event_base *,
	     struct kernelspec *, const char *, const char *,
	     const char *);
void	 agent_kernel_free(struct agent_kernel *);
int	 agent_kernel_start(struct agent_kernel *, char **);
int	 agent_kernel_is_ready(struct agent_kernel *);
int	 agent_kernel_is_running(struct agent_kernel *);
pid_t	 agent_kernel_pid(struct agent_kernel *);
struct kernelspec *agent_kernel_spec(struct agent_kernel *);
struct json_object *agent_kernel_metadata(struct agent_kernel *);
const char *agent_kernel_runtime_dir(struct agent_kernel *);
const char *agent_kernel_transport(struct agent_kernel *);
void	 agent_kernel_set_tcp(struct agent_kernel *);
char	*agent_kernel_tail(struct agent_kernel *);
int	 agent_kernel_send(struct agent_kernel *, enum agent_channel,
	     const char *, struct json_object *, char *);
int	 agent_kernel_send_parent(struct agent_kernel *, enum agent_channel,
	     const char *, struct json_object *, struct json_object *,
	     char *);
int	 agent_kernel_interrupt(struct agent_kernel *, char **);
void	 agent_kernel_shutdown(struct agent_kernel *, int,
	     void (*)(struct agent_kernel *, void *), void *);
void	 agent_kernel_sigchld(struct agent_kernel *);
void	 agent_kernel_emergency(struct agent_kernel *);
int	 agent_kernel_ping(struct agent_kernel *, int);
void	 agent_kernel_ping_drain(struct agent_kernel *);

/* agent-heartbeat.c */
struct agent_heartbeat *agent_heartbeat_create(struct event_base *,
	     struct agent_kernel *);
void	 agent_heartbeat_free(struct agent_heartbeat *);
void	 agent_heartbeat_start(struct agent_heartbeat *);
void	 agent_heartbeat_stop(struct agent_heartbeat *);
void	 agent_heartbeat_echo(struct agent_heartbeat *);
char	*agent_heartbeat_kill_reason(struct agent_heartbeat *);

/* agent-stderr.c */
struct agent_stderr *agent_stderr_create(struct event_base *);
void	 agent_stderr_free(struct agent_stderr *);
void	 agent_stderr_reset(struct agent_stderr *);
void	 agent_stderr_open(struct agent_stderr *, int, pid_t);
void	 agent_stderr_close(struct agent_stderr *);
void	 agent_stderr_read(struct agent_stderr *);
char	*agent_stderr_tail(struct agent_stderr *);

/* agent-exec.c */
/*
 * Allocations up to AGENT_HEAP_MMAP come from the heap, which keeps up to
 * AGENT_HEAP_TRIM free at its top while runs come; malloc_trim gives it
 * all back AGENT_EXEC_TRIM_SECS after the kernel went idle (agent.c).
 */
#define AGENT_HEAP_MMAP		(32 * 1024 * 1024)	/* glibc's most */
#define AGENT_HEAP_TRIM		(64 * 1024 * 1024)
#define AGENT_EXEC_TRIM_SECS	5

void	 agent_exec_init(struct event_base *);
int	 agent_exec_start(struct agent_kernel *, const char *, const char *,
	     const char *, size_t, int, int, char **);
int	 agent_exec_running(void);
int	 agent_exec_is_busy(void);
void	 agent_exec_message(struct agent_kernel *, enum agent_channel,
	     struct agent_wire_msg *);
void	 agent_exec_clear(void);
void	 agent_exec_iopub_lost(size_t);
int	 agent_exec_lookup(const char *, const char **, const char **);

/* agent-blob.c */
struct agent_blob;
typedef void	(*agent_blob_cb)(void *);
void	 agent_blob_init(struct event_base *);
struct agent_blob *agent_blob_write(const char *, struct json_object *);
int	 agent_blob_result(struct agent_blob *, const char **,
	     const char **);
void	 agent_blob_after(struct agent_blob **, size_t, agent_blob_cb,
	     void *);
int	 agent_blob_hold(uint16_t, uint32_t, const void *, size_t);
int	 agent_blob_pending(void);
void	 agent_blob_finish(int);

/* agent-stdin.c */
int	 agent_stdin_message(struct agent_kernel *, struct agent_wire_msg *);
void	 agent_stdin_reply(struct peer *, const struct proto_header *,
	     const msgpack_object *, const void *, void *);
void	 agent_stdin_clear(void);

/* agent-redact.c */
#define AGENT_REDACT_MIN	8	/* bytes: a shorter value is kept */
#define AGENT_REDACT_PLAIN	16	/* one class of characters, shorter */
#define AGENT_REDACT_HOLD_MAX	(64 * 1024) /* a stream's end held back */
#define AGENT_REDACT_HOLD_MS	1000	/* for the next message, at most */
int	 agent_redact_name(const char *);
int	 agent_redact_add(const char *, const char *, int);
size_t	 agent_redact_init(char *const *, int);
void	 agent_redact_free(void);
char	*agent_redact_text(const char *, size_t, int, size_t *, size_t *,
	     size_t *);
int	 agent_redact_binary(const char *);
size_t	 agent_redact_json(struct json_object *);

/* agent-widget.c: widget models' state, from comm messages (089). */
#define AGENT_WIDGET_MAX	256	/* models kept */
#define AGENT_WIDGET_BYTES	(256 * 1024)	/* their kept state */
#define AGENT_WIDGET_STR	200	/* bytes of a string value kept */
#define AGENT_WIDGET_ITEMS	20	/* of an array value (options) */
void	 agent_widget_comm(const char *, struct json_object *);
struct json_object *agent_widget_view(struct json_object *);
void	 agent_widget_clear(void);
size_t	 agent_redact_count(void);

/* agent-introspect.c */
struct json_object *agent_introspect_caps(struct agent_kernel *,
	     struct json_object *);
int	 agent_introspect_message(struct agent_kernel *, enum agent_channel,
	     struct agent_wire_msg *);
void	 agent_introspect_sees(struct peer *, const struct proto_header *,
	     const msgpack_object *, const void *, void *);
void	 agent_introspect_variables(struct peer *, const struct proto_header *,
	     const msgpack_object *, const void *, void *);
void	 agent_introspect_complete(struct peer *, const struct proto_header *,
	     const msgpack_object *, const void *, void *);
void	 agent_introspect_inspect(struct peer *, const struct proto_header *,
	     const msgpack_object *, const void *, void *);
void	 agent_introspect_clear(void);

#endif
