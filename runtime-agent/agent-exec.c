/* SPDX-License-Identifier: ISC */
/*
 * agent-exec.c: execute requests and what the kernel says about them.
 *
 * Each AGENT_EXECUTE becomes one execute_request on shell.  Messages on
 * iopub and shell are matched to it by the parent msg_id and turned into
 * AGENT_EXEC_STARTED, AGENT_OUTPUT (one nbformat output each),
 * AGENT_CLEAR_OUTPUT and finally AGENT_EXEC_DONE, which is sent only
 * once both the execute_reply (shell) and the idle status (iopub) have
 * arrived: either can come first.
 *
 * Consecutive stream messages of the same name for the same run are
 * merged into one output for up to AGENT_EXEC_MERGE_MS: a loop of
 * flushed print() calls (one iopub message per line) then costs the
 * daemon a frame per window instead of a frame per line.  Any other
 * message for the run sends the pending text first, so order holds and
 * EXEC_DONE is never delayed by the window.
 *
 * display_data keeps its transient.display_id in the output (the daemon
 * drops "transient" when it writes .ipynb); update_display_data becomes
 * AGENT_OUTPUT {update: true, display_id} whatever run it belongs to, so
 * the daemon can replace that display in every cell.  Output values of
 * BLOB_THRESHOLD bytes or more are written to the blob store and cross
 * as {"runtimed_blob": sha256, "size": n}: on agent-blob.c's thread, the
 * output sent once they are durable, with every later frame behind it.
 *
 * A kernel that goes idle for a request it never answers failed to
 * handle it (ipykernel raises on a NUL in the code, logs the traceback
 * and sends no execute_reply): AGENT_EXEC_REPLY_MS after the idle the
 * cell ends as error, with the kernel's last stderr lines, so every run
 * ends.  The kernel sends the reply before the idle, on another socket;
 * the wait only covers our reading them in either order.
 *
 * The other way round, a reply whose idle never comes: the kernel
 * dropped it, past its iopub queue (a flood), or the agent lost iopub's
 * connection to a message over its cap (agent-kernel.c).  The cell ends
 * on the reply, with a note saying outputs were lost, and a failed
 * cell's error taken from the reply if its output is among them
 * (decision 078).
 */

#include <sys/queue.h>

#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

/* Largest merged stream text, and longest wait, before it is sent. */
#define AGENT_EXEC_MERGE_MAX	(1024 * 1024)
#define AGENT_EXEC_MERGE_MS	10

/* How long after its idle a request's missing reply is given up. */
#define AGENT_EXEC_REPLY_MS	3000
/*
 * And the idle after the reply, once iopub has been quiet that long: the
 * kernel's PUB dropped it (past its high-water mark: ipykernel's is 1000
 * messages) with outputs before it, as a rule.
 */
#define AGENT_EXEC_IDLE_MS	3000
#define AGENT_EXEC_KERNEL_HWM	1000	/* zmq's default, ipykernel's */

struct agent_exec {
	char			*exec_id;
	char			*cell_id;
	char			 msg_id[37];
	int			 got_reply;
	int			 got_idle;
	enum proto_agent_exec_status status;
	int			 silent;	/* nothing forwarded */
	const char		*lost;		/* why outputs were lost */
	int			 got_error;	/* its error output came */
	struct json_object	*reply;		/* an error's execute_reply */
	size_t			 lost_cap;	/* message_over_cap: the cap */
	int64_t			 execution_count; /* -1: none */
	uint32_t		 hash;		/* its compiler's file name */
	struct agent_kernel	*k;
	struct event		*reply_ev;	/* idle came, no reply */
	struct event		*idle_ev;	/* reply came, no idle */
	TAILQ_ENTRY(agent_exec)	 entry;
};
static TAILQ_HEAD(, agent_exec) agent_exec_list =
    TAILQ_HEAD_INITIALIZER(agent_exec_list);

/*
 * The cells that ran in this kernel's life, by execution count and code
 * hash, for mapping an error's frames to them (common/tbmap.c).  A count
 * not above the last one means the kernel restarted: its counts start
 * again and the cells before it name nothing now.  The oldest go past
 * AGENT_EXEC_RAN_MAX (their frames then keep their text).
 */
#define AGENT_EXEC_RAN_MAX	4096
static struct tbmap_cell	*agent_exec_ran;
static size_t			 agent_exec_nran;
static void	agent_exec_note_ran(const struct agent_exec *);
static void	agent_exec_map(const struct agent_exec *,
		    struct json_object *, struct json_object *);
static void	agent_exec_status(int);
static void	agent_exec_trim_cb(evutil_socket_t, short, void *);
static void	agent_exec_pack_json(msgpack_packer *, const void *);
static void	agent_exec_send_output(struct agent_exec *,
		    struct json_object *, const char *);
static void	agent_exec_send_ids(const char *, const char *,
		    struct json_object *, const char *);
static void	agent_exec_stream_cb(evutil_socket_t, short, void *);
static int	agent_exec_stream_cut(struct agent_exec *, const char *,
		    const char *, size_t);
static void	agent_exec_stream(struct agent_exec *, const char *,
		    const char *, size_t);
static void	agent_exec_free(struct agent_exec *);
static void	agent_exec_maybe_done(struct agent_exec *);
static void	agent_exec_lost_note(struct agent_exec *);
static void	agent_exec_lost_error(struct agent_exec *);
static void	agent_exec_no_idle_cb(evutil_socket_t, short, void *);
static void	agent_exec_wait_idle(struct agent_exec *);
static struct json_object	*agent_exec_get(struct json_object *,
		    const char *);
static const char	*agent_exec_string(struct json_object *, const char *);
static void	agent_exec_copy(struct json_object *, struct json_object *,
		    const char *, int);
struct agent_exec_blobs;
static struct json_object	*agent_exec_blobs(struct json_object *,
		    struct agent_exec_blobs **);
static void	agent_exec_blobs_cb(void *);
static void	agent_exec_output(struct agent_exec *, const char *,
		    struct json_object *);
static void	agent_exec_no_reply_cb(evutil_socket_t, short, void *);
static void	agent_exec_wait_reply(struct agent_exec *);
static void	agent_exec_iopub(struct agent_exec *, const char *,
		    struct json_object *);
static void	agent_exec_reply(struct agent_exec *, struct json_object *);
static void	agent_exec_input(struct agent_kernel *,
		    struct agent_wire_msg *);
static void	agent_exec_flush(void);
static void	agent_exec_flush_part(int);

/* A stream output being merged, not yet sent. */
static struct agent_exec	*agent_exec_stream_exec;
static char			*agent_exec_stream_name;
static char			*agent_exec_stream_text;
static size_t			 agent_exec_stream_len;
static struct event		*agent_exec_stream_ev;
/* When the last iopub message of a run came. */
static int64_t			 agent_exec_iopub_ms;

/* Since when its end is held as the start of a secret (0: not held). */
static int64_t			 agent_exec_stream_held;

static struct event_base	*agent_exec_base;

/* Whether AGENT_STATUS busy was sent and idle not yet. */
static int			 agent_exec_busy;

/* Gives the heap back once the kernel has been idle (agent.h). */
static struct event		*agent_exec_trim_ev;

/* Send AGENT_STATUS {state} when it changes. */
static void
agent_exec_status(int busy)
{
	struct proto_agent_status	m;
	struct mpbuf			b;
	struct timeval			tv = { AGENT_EXEC_TRIM_SECS, 0 };

	if (busy == agent_exec_busy)
		return;
	agent_exec_busy = busy;
	if (busy)
		evtimer_del(agent_exec_trim_ev);
	else
		evtimer_add(agent_exec_trim_ev, &tv);
	memset(&m, 0, sizeof m);
	m.state = busy ? PROTO_AGENT_BUSY : PROTO_AGENT_IDLE;
	mpbuf_init(&b);
	proto_agent_status_pack(&b.pk, &m);
	agent_send(PROTO_MSG_AGENT_STATUS, 0, &b);
	mpbuf_free(&b);
}

static void
agent_exec_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* Send AGENT_OUTPUT with one output object for run e (NULL: none). */
static void
agent_exec_send_output(struct agent_exec *e, struct json_object *output,
    const char *update_id)
{
	if (e != NULL && e->silent)
		return;
	agent_exec_send_ids(e != NULL ? e->exec_id : "",
	    e != NULL ? e->cell_id : "", output, update_id);
}

/*
 * Send AGENT_OUTPUT with one output object.  One too big for a frame (not
 * a stream: those are cut to fit) is replaced by a note on stderr, marked
 * transient.runtimed_dropped, rather than lost without a word.
 */
static void
agent_exec_send_ids(const char *exec_id, const char *cell_id,
    struct json_object *output, const char *update_id)
{
	struct proto_agent_output	 m;
	struct json_object		*note, *t;
	struct mpbuf			 b;
	char				*text;
	size_t				 size;

	memset(&m, 0, sizeof m);
	m.exec_id = agent_str(exec_id);
	m.cell_id = agent_str(cell_id);
	m.update = update_id != NULL;
	m.display_id = agent_str(update_id);
	m.output.pack = agent_exec_pack_json;
	m.output.arg = output;
	mpbuf_init(&b);
	proto_agent_output_pack(&b.pk, &m);
	size = b.sb.size;
	if (size <= proto_msg_cap(PROTO_MSG_AGENT_OUTPUT))
		agent_send(PROTO_MSG_AGENT_OUTPUT, 0, &b);
	mpbuf_free(&b);
	if (size <= proto_msg_cap(PROTO_MSG_AGENT_OUTPUT))
		return;

	log_warnx("exec %s: dropped an output of %zu bytes",
	    *exec_id != '\0' ? exec_id : "-", size);
	if (update_id != NULL)
		return;
	xasprintf(&text, "[runtimed: an output of %zu bytes was dropped: "
	    "larger than the %u byte limit]\n", size,
	    proto_msg_cap(PROTO_MSG_AGENT_OUTPUT));
	note = json_object_new_object();
	json_object_object_add(note, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(note, "name", json_object_new_string("stderr"));
	json_object_object_add(note, "text", json_object_new_string(text));
	free(text);
	/* So the worker reports the output truncated. */
	t = json_object_new_object();
	json_object_object_add(t, "runtimed_dropped",
	    json_object_new_int64((int64_t)size));
	json_object_object_add(note, "transient", t);
	agent_exec_send_ids(exec_id, cell_id, note, NULL);
	json_object_put(note);
}

static void
agent_exec_stream_cb(evutil_socket_t fd, short events, void *arg)
{
	agent_exec_flush_part(1);
}

/*
 * Idle for AGENT_EXEC_TRIM_SECS: what the last big outputs left in the
 * heap goes back to the system, free pages in its middle too.
 */
static void
agent_exec_trim_cb(evutil_socket_t fd, short events, void *arg)
{
	if (!agent_exec_busy)
		malloc_trim(0);
}

/* Set up the merge and trim timers. */
void
agent_exec_init(struct event_base *base)
{
	agent_exec_base = base;
	agent_exec_stream_ev = evtimer_new(base, agent_exec_stream_cb, NULL);
	agent_exec_trim_ev = evtimer_new(base, agent_exec_trim_cb, NULL);
}

/* Send the merged stream output, if any. */
static void
agent_exec_flush(void)
{
	agent_exec_flush_part(0);
}

/*
 * Send the merged stream output, secrets redacted.  From the merge timer
 * (may_hold), an end that may be the start of a secret stays pending for
 * the next message of this stream, up to AGENT_REDACT_HOLD_MS: a secret
 * printed in two flushes is then read whole (decision 064).
 */
static void
agent_exec_flush_part(int may_hold)
{
	struct json_object	*output;
	struct timeval		 tv;
	char			*red;
	size_t			 len, hold;
	int64_t			 now = util_mono_ms(), left;

	if (agent_exec_stream_exec == NULL)
		return;
	left = agent_exec_stream_held == 0 ? AGENT_REDACT_HOLD_MS :
	    agent_exec_stream_held + AGENT_REDACT_HOLD_MS - now;
	red = agent_redact_text(agent_exec_stream_text, agent_exec_stream_len,
	    !may_hold || left <= 0, &len, &hold, NULL);
	if (red == NULL)
		len = agent_exec_stream_len - hold;
	if (len > 0) {
		output = json_object_new_object();
		json_object_object_add(output, "output_type",
		    json_object_new_string("stream"));
		json_object_object_add(output, "name",
		    json_object_new_string(agent_exec_stream_name));
		json_object_object_add(output, "text",
		    json_object_new_string_len(red != NULL ? red :
		    agent_exec_stream_text, (int)len));
		agent_exec_send_output(agent_exec_stream_exec, output, NULL);
		json_object_put(output);
	}
	free(red);
	if (hold > 0) {
		memmove(agent_exec_stream_text, agent_exec_stream_text +
		    agent_exec_stream_len - hold, hold);
		agent_exec_stream_len = hold;
		agent_exec_stream_text[hold] = '\0';
		if (agent_exec_stream_held == 0) {
			agent_exec_stream_held = now;
			left = AGENT_REDACT_HOLD_MS;
		}
		tv.tv_sec = left / 1000;
		tv.tv_usec = (left % 1000) * 1000;
		evtimer_add(agent_exec_stream_ev, &tv);
		return;
	}
	agent_exec_stream_held = 0;

	free(agent_exec_stream_name);
	free(agent_exec_stream_text);
	evtimer_del(agent_exec_stream_ev);
	agent_exec_stream_exec = NULL;
	agent_exec_stream_name = NULL;
	agent_exec_stream_text = NULL;
	agent_exec_stream_len = 0;
}

/*
 * One stream message longer than a stream output keeps (a 200 MB print):
 * send its head and tail alone, cut (common/streamcap.c), rather than
 * merge or drop it.  Returns 0 when it fits after all.
 */
static int
agent_exec_stream_cut(struct agent_exec *e, const char *name,
    const char *text, size_t len)
{
	struct streamcap	 sc;
	struct json_object	*out;

	streamcap_init(&sc);
	streamcap_add(&sc, text, len);
	if (!sc.is_cut) {
		streamcap_free(&sc);
		return (0);
	}
	agent_exec_flush();
	log_info("exec %s: %s output of %zu bytes: %llu characters cut",
	    e->exec_id, name, len, (unsigned long long)sc.cut);
	out = streamcap_output(&sc, name);
	agent_redact_json(out);
	agent_exec_send_output(e, out, NULL);
	json_object_put(out);
	streamcap_free(&sc);
	return (1);
}

/* Add stream text, merging with the pending one when it continues it. */
static void
agent_exec_stream(struct agent_exec *e, const char *name, const char *text,
    size_t len)
{
	struct timeval	tv = { 0, AGENT_EXEC_MERGE_MS * 1000 };

	if (len > STREAMCAP_HEAD + STREAMCAP_TAIL &&
	    agent_exec_stream_cut(e, name, text, len))
		return;

	if (agent_exec_stream_exec != NULL &&
	    (agent_exec_stream_exec != e ||
	    strcmp(agent_exec_stream_name, name) != 0))
		agent_exec_flush();
	/* Stay far below the frame cap for AGENT_OUTPUT. */
	if (agent_exec_stream_len + len > AGENT_EXEC_MERGE_MAX)
		agent_exec_flush_part(1);
	if (agent_exec_stream_exec == NULL) {
		agent_exec_stream_exec = e;
		agent_exec_stream_name = xstrdup(name);
		evtimer_add(agent_exec_stream_ev, &tv);
	} else if (agent_exec_stream_held != 0) {
		/* What was held is continued: read it with the rest. */
		agent_exec_stream_held = 0;
		evtimer_add(agent_exec_stream_ev, &tv);
	}
	agent_exec_stream_text = xreallocarray(agent_exec_stream_text, 1,
	    agent_exec_stream_len + len + 1);
	memcpy(agent_exec_stream_text + agent_exec_stream_len, text, len);
	agent_exec_stream_len += len;
	agent_exec_stream_text[agent_exec_stream_len] = '\0';
}

/* Free one run. */
static void
agent_exec_free(struct agent_exec *e)
{
	if (agent_exec_stream_exec == e)
		agent_exec_flush();
	TAILQ_REMOVE(&agent_exec_list, e, entry);
	if (e->reply_ev != NULL)
		event_free(e->reply_ev);
	if (e->idle_ev != NULL)
		event_free(e->idle_ev);
	json_object_put(e->reply);
	free(e->exec_id);
	free(e->cell_id);
	free(e);
}

/*
 * Send execute_request for one cell.  Returns -1 with cause when the
 * kernel cannot take it.
 *
 * stop_on_error is off unless the daemon asks: it sends one cell at a
 * time and stops a run itself, while ipykernel's flag leaves the kernel
 * "aborting" for a moment after an error, so the next cell sent right
 * after an error came back "aborted" in our tests.
 */
int
agent_exec_start(struct agent_kernel *k, const char *exec_id,
    const char *cell_id, const char *code, size_t len, int stop_on_error,
    int silent, char **cause)
{
	struct agent_exec	*e;
	struct json_object	*content;
	int			 rc;

	if (!agent_kernel_is_ready(k)) {
		*cause = xstrdup("kernel is not ready");
		return (-1);
	}
	e = xcalloc(1, sizeof *e);
	e->exec_id = xstrdup(exec_id);
	e->cell_id = xstrdup(cell_id);
	e->execution_count = -1;
	e->silent = silent;
	e->k = k;
	e->hash = tbmap_murmur2(code, len, TBMAP_SEED);

	if (len > INT_MAX) {
		*cause = xstrdup("the code is too long for the kernel");
		return (-1);
	}
	content = json_object_new_object();
	/* json-c writes a NUL in it as \u0000, as Jupyter's JSON does. */
	json_object_object_add(content, "code",
	    json_object_new_string_len(code, (int)len));
	json_object_object_add(content, "silent",
	    json_object_new_boolean(silent));
	json_object_object_add(content, "store_history",
	    json_object_new_boolean(!silent));
	json_object_object_add(content, "user_expressions",
	    json_object_new_object());
	/* A cell's input() is answered with send_input (agent-stdin.c). */
	json_object_object_add(content, "allow_stdin",
	    json_object_new_boolean(!silent));
	json_object_object_add(content, "stop_on_error",
	    json_object_new_boolean(stop_on_error));
	/* Listed first: the reply may be read during the send's drain. */
	TAILQ_INSERT_TAIL(&agent_exec_list, e, entry);
	rc = agent_kernel_send(k, AGENT_CHANNEL_SHELL, "execute_request",
	    content, e->msg_id);
	json_object_put(content);
	if (rc != 0) {
		agent_exec_free(e);
		*cause = xstrdup("cannot send execute_request to the kernel");
		return (-1);
	}
	log_debug("%s: exec %s cell %s msg %s", __func__, exec_id, cell_id,
	    e->msg_id);
	return (0);
}

/* Send AGENT_EXEC_DONE once both the reply and idle are in. */
static void
agent_exec_maybe_done(struct agent_exec *e)
{
	struct proto_agent_exec_done	m;
	struct mpbuf			b;

	if (!e->got_reply || !e->got_idle)
		return;
	if (agent_exec_stream_exec == e)
		agent_exec_flush();
	if (e->silent)
		goto out;
	/* A failed cell whose error output never came: it was dropped. */
	if (e->lost == NULL && !e->got_error && e->reply != NULL &&
	    agent_exec_get(e->reply, "ename") != NULL)
		e->lost = "kernel_queue_full";
	if (e->lost != NULL) {
		agent_exec_lost_error(e);
		agent_exec_lost_note(e);
	}
	memset(&m, 0, sizeof m);
	m.exec_id = agent_str(e->exec_id);
	m.cell_id = agent_str(e->cell_id);
	m.status = e->status;
	m.has_execution_count = e->execution_count >= 0;
	m.execution_count = e->execution_count;
	mpbuf_init(&b);
	proto_agent_exec_done_pack(&b.pk, &m);
	agent_send(PROTO_MSG_AGENT_EXEC_DONE, 0, &b);
	mpbuf_free(&b);
out:
	agent_exec_free(e);
	if (TAILQ_EMPTY(&agent_exec_list))
		agent_exec_status(0);
}

/* Member of obj by name or NULL. */
static struct json_object *
agent_exec_get(struct json_object *obj, const char *name)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(obj, name, &v))
		return (NULL);
	return (v);
}

/* A string member or NULL. */
static const char *
agent_exec_string(struct json_object *obj, const char *name)
{
	struct json_object	*v = agent_exec_get(obj, name);

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

/* Copy member name of from into to, as {} when missing. */
static void
agent_exec_copy(struct json_object *to, struct json_object *from,
    const char *name, int object)
{
	struct json_object	*v = agent_exec_get(from, name);

	if (v != NULL)
		json_object_object_add(to, name, json_object_get(v));
	else if (object)
		json_object_object_add(to, name, json_object_new_object());
	else
		json_object_object_add(to, name, NULL);
}

/* An output waiting for its values to be written (agent-blob.c). */
struct agent_exec_blobs {
	char			*exec_id;
	char			*cell_id;
	char			*update_id;	/* NULL: not an update */
	struct json_object	*output;
	struct json_object	*data;		/* in output, the bundle */
	size_t			 n;
	char			**mimes;	/* in data, written as */
	struct agent_blob	**blobs;
};

/*
 * Large values of a mime bundle go to the blob store: the frame then
 * carries {"runtimed_blob": sha256, "size": n}.  The copy returned keeps
 * them for now, and *pending says which are being written (NULL: none).
 */
static struct json_object *
agent_exec_blobs(struct json_object *data, struct agent_exec_blobs **pending)
{
	struct agent_exec_blobs	*p = NULL;
	struct json_object	*out;
	const char		*dir = agent_state_dir();
	size_t			 len;

	*pending = NULL;
	if (dir == NULL || !json_object_is_type(data, json_type_object))
		return (json_object_get(data));
	out = json_object_new_object();
	json_object_object_foreach(data, mime, v) {
		len = json_object_is_type(v, json_type_string) ?
		    (size_t)json_object_get_string_len(v) : 0;
		json_object_object_add(out, mime, json_object_get(v));
		if (len < BLOB_THRESHOLD)
			continue;
		if (p == NULL)
			p = xcalloc(1, sizeof *p);
		p->mimes = xreallocarray(p->mimes, p->n + 1,
		    sizeof *p->mimes);
		p->blobs = xreallocarray(p->blobs, p->n + 1,
		    sizeof *p->blobs);
		p->mimes[p->n] = xstrdup(mime);
		p->blobs[p->n] = agent_blob_write(dir, v);
		p->n++;
	}
	if (p != NULL)
		p->data = out;
	*pending = p;
	return (out);
}

/*
 * The values are written: name each one stored, keep inline with a
 * warning each one that could not be, and send the output.
 */
static void
agent_exec_blobs_cb(void *arg)
{
	struct agent_exec_blobs	*p = arg;
	struct json_object	*ref;
	const char		*hex, *cause;
	size_t			 i, len;

	for (i = 0; i < p->n; i++) {
		if (agent_blob_result(p->blobs[i], &hex, &cause) != 0) {
			log_warnx("blob store: %s", cause);
			continue;
		}
		len = (size_t)json_object_get_string_len(
		    json_object_object_get(p->data, p->mimes[i]));
		ref = json_object_new_object();
		json_object_object_add(ref, "runtimed_blob",
		    json_object_new_string(hex));
		json_object_object_add(ref, "size",
		    json_object_new_int64((int64_t)len));
		json_object_object_add(p->data, p->mimes[i], ref);
	}
	agent_exec_send_ids(p->exec_id, p->cell_id, p->output, p->update_id);
	json_object_put(p->output);
	for (i = 0; i < p->n; i++)
		free(p->mimes[i]);
	free(p->mimes);
	free(p->blobs);
	free(p->exec_id);
	free(p->cell_id);
	free(p->update_id);
	free(p);
}

/*
 * Turn an iopub output message into one nbformat output and send it;
 * update_display_data is sent as an update of its display_id.
 */
static void
agent_exec_output(struct agent_exec *e, const char *type,
    struct json_object *content)
{
	struct agent_exec_blobs	*p = NULL;
	struct json_object	*output, *v, *t, *id, *w;
	const char		*display_id = NULL;
	int			 update;

	if (e != NULL && e->silent)
		return;
	/* Before any of it is written to a blob or sent. */
	agent_redact_json(content);
	update = strcmp(type, "update_display_data") == 0;
	if (update && ((t = agent_exec_get(content, "transient")) == NULL ||
	    (id = agent_exec_get(t, "display_id")) == NULL ||
	    !json_object_is_type(id, json_type_string))) {
		log_debug("%s: update_display_data without display_id",
		    __func__);
		return;
	}
	output = json_object_new_object();
	json_object_object_add(output, "output_type",
	    json_object_new_string(update ? "display_data" : type));
	if (strcmp(type, "error") == 0) {
		agent_exec_copy(output, content, "ename", 0);
		agent_exec_copy(output, content, "evalue", 0);
		if ((v = agent_exec_get(content, "traceback")) != NULL)
			json_object_object_add(output, "traceback",
			    json_object_get(v));
		else
			json_object_object_add(output, "traceback",
			    json_object_new_array());
		agent_exec_map(e, output, v);
	} else {
		if ((v = agent_exec_get(content, "data")) != NULL)
			json_object_object_add(output, "data",
			    agent_exec_blobs(v, &p));
		else
			json_object_object_add(output, "data",
			    json_object_new_object());
		agent_exec_copy(output, content, "metadata", 1);
		if (strcmp(type, "execute_result") == 0)
			agent_exec_copy(output, content, "execution_count", 0);
		/* Kept for later updates; never saved to .ipynb. */
		if ((t = agent_exec_get(content, "transient")) != NULL &&
		    (id = agent_exec_get(t, "display_id")) != NULL &&
		    json_object_is_type(id, json_type_string)) {
			display_id = json_object_get_string(id);
			v = json_object_new_object();
			json_object_object_add(v, "display_id",
			    json_object_get(id));
			json_object_object_add(output, "transient", v);
		}
		/* A widget view: its model's state as it is now. */
		if ((w = agent_widget_view(content)) != NULL) {
			if (!json_object_object_get_ex(output, "transient",
			    &v)) {
				v = json_object_new_object();
				json_object_object_add(output, "transient", v);
			}
			json_object_object_add(v, "widget", w);
		}
	}
	if (p == NULL) {
		agent_exec_send_output(e, output, update ? display_id : NULL);
		json_object_put(output);
		return;
	}
	/* Sent once its values are durable: e may be gone by then. */
	p->exec_id = xstrdup(e != NULL ? e->exec_id : "");
	p->cell_id = xstrdup(e != NULL ? e->cell_id : "");
	p->update_id = update ? xstrdup(display_id) : NULL;
	p->output = output;
	agent_blob_after(p->blobs, p->n, agent_exec_blobs_cb, p);
}

/*
 * The kernel went idle and never answered: end the cell as error, saying
 * what the kernel wrote on stderr (its traceback, as a rule).
 */
static void
agent_exec_no_reply_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_exec	*e = arg;
	struct json_object	*out;
	char			*tail, *msg;

	if (e->got_reply)
		return;
	tail = agent_kernel_tail(e->k);
	xasprintf(&msg, "the kernel went idle without answering this cell, "
	    "so it could not run it; the kernel's stderr ends: %s", tail);
	log_warnx("exec %s: %s", e->exec_id, msg);
	out = json_object_new_object();
	json_object_object_add(out, "output_type",
	    json_object_new_string("error"));
	json_object_object_add(out, "ename",
	    json_object_new_string("KernelError"));
	json_object_object_add(out, "evalue", json_object_new_string(msg));
	json_object_object_add(out, "traceback", json_object_new_array());
	agent_redact_json(out);
	agent_exec_send_output(e, out, NULL);
	json_object_put(out);
	free(msg);
	free(tail);
	e->status = PROTO_AGENT_EXEC_ERROR;
	e->got_reply = 1;
	agent_exec_maybe_done(e);
}

/* Idle came before the reply: give the reply a moment. */
static void
agent_exec_wait_reply(struct agent_exec *e)
{
	struct timeval	tv = { AGENT_EXEC_REPLY_MS / 1000,
	    (AGENT_EXEC_REPLY_MS % 1000) * 1000 };

	if (e->reply_ev == NULL)
		e->reply_ev = evtimer_new(agent_exec_base,
		    agent_exec_no_reply_cb, e);
	evtimer_add(e->reply_ev, &tv);
}

/* Handle an iopub message for run e. */
static void
agent_exec_iopub(struct agent_exec *e, const char *type,
    struct json_object *content)
{
	struct proto_agent_exec_started	 st;
	struct proto_agent_clear_output	 co;
	struct mpbuf			 b;
	struct json_object		*v;
	const char			*s, *name;

	if (strcmp(type, "stream") != 0)
		agent_exec_flush();

	if (strcmp(type, "status") == 0) {
		s = agent_exec_string(content, "execution_state");
		if (s != NULL && strcmp(s, "busy") == 0)
			agent_exec_status(1);
		else if (s != NULL && strcmp(s, "idle") == 0) {
			e->got_idle = 1;
			if (!e->got_reply)
				agent_exec_wait_reply(e);
			agent_exec_maybe_done(e);
		}
	} else if (strcmp(type, "execute_input") == 0) {
		if (e->silent)
			return;
		v = agent_exec_get(content, "execution_count");
		if (v != NULL && json_object_is_type(v, json_type_int))
			e->execution_count = json_object_get_int64(v);
		agent_exec_note_ran(e);
		memset(&st, 0, sizeof st);
		st.exec_id = agent_str(e->exec_id);
		st.cell_id = agent_str(e->cell_id);
		st.has_execution_count = e->execution_count >= 0;
		st.execution_count = e->execution_count;
		mpbuf_init(&b);
		proto_agent_exec_started_pack(&b.pk, &st);
		agent_send(PROTO_MSG_AGENT_EXEC_STARTED, 0, &b);
		mpbuf_free(&b);
	} else if (strcmp(type, "stream") == 0) {
		name = agent_exec_string(content, "name");
		if ((v = agent_wire_stream_output(content)) != NULL) {
			/* Read as it came: already its head and tail. */
			agent_exec_flush();
			log_info("exec %s: a huge %s message read into its "
			    "head and tail: %llu characters cut", e->exec_id,
			    name, (unsigned long long)streamcap_cut(v));
			agent_redact_json(v);
			agent_exec_send_output(e, v, NULL);
			return;
		}
		v = agent_exec_get(content, "text");
		if (name == NULL || v == NULL ||
		    !json_object_is_type(v, json_type_string))
			return;
		agent_exec_stream(e, name, json_object_get_string(v),
		    json_object_get_string_len(v));
	} else if (strcmp(type, "display_data") == 0 ||
	    strcmp(type, "update_display_data") == 0 ||
	    strcmp(type, "execute_result") == 0 ||
	    strcmp(type, "error") == 0) {
		if (strcmp(type, "error") == 0)
			e->got_error = 1;
		agent_exec_output(e, type, content);
	}
	else if (strcmp(type, "clear_output") == 0) {
		if (e->silent)
			return;
		v = agent_exec_get(content, "wait");
		memset(&co, 0, sizeof co);
		co.exec_id = agent_str(e->exec_id);
		co.cell_id = agent_str(e->cell_id);
		co.wait = v != NULL && json_object_get_boolean(v);
		mpbuf_init(&b);
		proto_agent_clear_output_pack(&b.pk, &co);
		agent_send(PROTO_MSG_AGENT_CLEAR_OUTPUT, 0, &b);
		mpbuf_free(&b);
	} else
		log_debug("%s: ignored %s for exec %s", __func__, type,
		    e->exec_id);
}

/* A cell started with its execution count: note it for tracebacks. */
static void
agent_exec_note_ran(const struct agent_exec *e)
{
	struct tbmap_cell	*c;
	size_t			 i;

	if (e->execution_count < 0)
		return;
	if (agent_exec_nran > 0 && e->execution_count <=
	    agent_exec_ran[agent_exec_nran - 1].count) {
		for (i = 0; i < agent_exec_nran; i++)
			free((char *)agent_exec_ran[i].cell_id);
		agent_exec_nran = 0;
	}
	if (agent_exec_nran == AGENT_EXEC_RAN_MAX) {
		free((char *)agent_exec_ran[0].cell_id);
		memmove(agent_exec_ran, agent_exec_ran + 1,
		    (agent_exec_nran - 1) * sizeof *agent_exec_ran);
		agent_exec_nran--;
	}
	agent_exec_ran = xreallocarray(agent_exec_ran, agent_exec_nran + 1,
	    sizeof *agent_exec_ran);
	c = &agent_exec_ran[agent_exec_nran++];
	c->count = e->execution_count;
	c->hash = e->hash;
	c->cell_id = xstrdup(e->cell_id);
}

/*
 * An error's frames mapped to cells, as transient.runtimed_traceback of
 * its output: runtime data, never saved to .ipynb.
 */
static void
agent_exec_map(const struct agent_exec *e, struct json_object *output,
    struct json_object *tb)
{
	struct json_object	*m, *t;

	if (e == NULL || (m = tbmap_frames(tb, agent_exec_ran,
	    agent_exec_nran, e->cell_id)) == NULL)
		return;
	t = json_object_new_object();
	json_object_object_add(t, "runtimed_traceback", m);
	json_object_object_add(output, "transient", t);
}

/* Handle the execute_reply for run e. */
static void
agent_exec_reply(struct agent_exec *e, struct json_object *content)
{
	struct json_object	*v;
	const char		*s;

	s = agent_exec_string(content, "status");
	/* "abort" is the old spelling (IRkernel's, for an interrupt). */
	if (s != NULL && strcmp(s, "ok") == 0)
		e->status = PROTO_AGENT_EXEC_OK;
	else if (s != NULL && (strcmp(s, "aborted") == 0 ||
	    strcmp(s, "abort") == 0))
		e->status = PROTO_AGENT_EXEC_ABORTED;
	else
		e->status = PROTO_AGENT_EXEC_ERROR;
	v = agent_exec_get(content, "execution_count");
	if (v != NULL && json_object_is_type(v, json_type_int))
		e->execution_count = json_object_get_int64(v);
	e->got_reply = 1;
	/* Its error output may be lost: the reply has it too. */
	if (e->status == PROTO_AGENT_EXEC_ERROR)
		e->reply = json_object_get(content);
	/* Its idle may have been lost with the connection: end on this. */
	if (e->lost != NULL)
		e->got_idle = 1;
	else if (!e->got_idle)
		agent_exec_wait_idle(e);
	agent_exec_maybe_done(e);
}

/*
 * The reply came and iopub has been quiet for AGENT_EXEC_IDLE_MS without
 * the idle: it was dropped.  End the cell, saying outputs may be lost.
 */
static void
agent_exec_no_idle_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_exec	*e = arg;
	int64_t			 quiet;

	if (e->got_idle)
		return;
	quiet = util_mono_ms() - agent_exec_iopub_ms;
	/* Outputs still come, or wait for the daemon to read: not yet. */
	if (quiet < AGENT_EXEC_IDLE_MS || agent_daemon_backlog(NULL, NULL)) {
		agent_exec_wait_idle(e);
		return;
	}
	log_warnx("exec %s: no idle status %lld ms after the reply",
	    e->exec_id, (long long)quiet);
	e->lost = "kernel_queue_full";
	e->got_idle = 1;
	agent_exec_maybe_done(e);
}

static void
agent_exec_wait_idle(struct agent_exec *e)
{
	struct timeval	tv = { AGENT_EXEC_IDLE_MS / 1000,
	    (AGENT_EXEC_IDLE_MS % 1000) * 1000 };

	if (e->idle_ev == NULL)
		e->idle_ev = evtimer_new(agent_exec_base,
		    agent_exec_no_idle_cb, e);
	evtimer_add(e->idle_ev, &tv);
}

/*
 * The kernel's iopub connection was dropped for a message over cap bytes
 * (agent-kernel.c) and made again: what the runs in the kernel printed
 * meanwhile is lost.  Each ends on its execute_reply alone, with a note.
 */
void
agent_exec_iopub_lost(size_t cap)
{
	struct agent_exec	*e;

	TAILQ_FOREACH(e, &agent_exec_list, entry) {
		if (!e->got_idle) {
			e->lost = "message_over_cap";
			e->lost_cap = cap;
		}
	}
	if (agent_exec_stream_exec != NULL)
		agent_exec_flush();
}

/*
 * The cell failed and its error output is among those lost: the reply
 * carries the same ename, evalue and traceback, so the error survives.
 */
static void
agent_exec_lost_error(struct agent_exec *e)
{
	if (e->got_error || e->reply == NULL ||
	    agent_exec_get(e->reply, "ename") == NULL)
		return;
	agent_exec_output(e, "error", e->reply);
}

/* Say in the cell that outputs were lost, and why (typed: transient). */
static void
agent_exec_lost_note(struct agent_exec *e)
{
	struct json_object	*note, *t, *why;
	char			*text;

	if (strcmp(e->lost, "message_over_cap") == 0)
		xasprintf(&text, "[runtimed: output lost: the kernel sent a "
		    "message larger than the %zu MiB an output message may "
		    "have; it was dropped, with what the cell printed until "
		    "the agent was connected to the kernel again]\n",
		    e->lost_cap >> 20);
	else
		xasprintf(&text, "[runtimed: output may be missing: the "
		    "cell's outputs came faster than they could be read, and "
		    "the kernel dropped some past its queue of %d messages "
		    "(they never reached runtimed)]\n", AGENT_EXEC_KERNEL_HWM);
	log_warnx("exec %s: %s", e->exec_id, text);
	note = json_object_new_object();
	json_object_object_add(note, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(note, "name", json_object_new_string("stderr"));
	json_object_object_add(note, "text", json_object_new_string(text));
	free(text);
	/* runtimed_dropped: the note is kept as it is, reported truncated. */
	t = json_object_new_object();
	json_object_object_add(t, "runtimed_dropped", json_object_new_int64(0));
	why = json_object_new_object();
	json_object_object_add(why, "reason", json_object_new_string(e->lost));
	if (e->lost_cap != 0)
		json_object_object_add(why, "cap_bytes",
		    json_object_new_int64((int64_t)e->lost_cap));
	json_object_object_add(t, "runtimed_lost", why);
	json_object_object_add(note, "transient", t);
	agent_exec_send_output(e, note, NULL);
	json_object_put(note);
}

/*
 * An input_request although allow_stdin was false (IRkernel asks
 * anyway, and would wait forever): answer with an empty line and say so
 * in the cell's stderr.
 */
static void
agent_exec_input(struct agent_kernel *k, struct agent_wire_msg *m)
{
	struct agent_exec	*e;
	struct json_object	*content;
	const char		*parent = agent_wire_msg_parent_id(m);
	const char		*prompt;
	char			*text, msg_id[37];

	prompt = agent_exec_string(agent_wire_msg_content(m), "prompt");
	TAILQ_FOREACH(e, &agent_exec_list, entry) {
		if (parent != NULL && strcmp(e->msg_id, parent) == 0)
			break;
	}
	if (e != NULL) {
		xasprintf(&text, "[runtimed: the kernel asked for input (%s) "
		    "and got an empty line: cells cannot be answered]\n",
		    prompt != NULL && *prompt != '\0' ? prompt : "no prompt");
		agent_exec_stream(e, "stderr", text, strlen(text));
		free(text);
	}
	content = json_object_new_object();
	json_object_object_add(content, "value", json_object_new_string(""));
	if (agent_kernel_send_parent(k, AGENT_CHANNEL_STDIN, "input_reply",
	    content, agent_wire_msg_header(m), msg_id) != 0)
		log_warnx("cannot answer input_request");
	json_object_put(content);
}

/* A message from the kernel on shell or iopub once it is ready. */
void
agent_exec_message(struct agent_kernel *k, enum agent_channel channel,
    struct agent_wire_msg *m)
{
	struct agent_exec	*e;
	const char		*parent = agent_wire_msg_parent_id(m);
	const char		*type = agent_wire_msg_type(m);

	if (channel == AGENT_CHANNEL_STDIN) {
		if (strcmp(type, "input_request") == 0)
			agent_exec_input(k, m);
		else
			log_warnx("unexpected %s on stdin", type);
		return;
	}
	/* Widget models, whichever run (or thread) opened them. */
	if (channel == AGENT_CHANNEL_IOPUB && strncmp(type, "comm_", 5) == 0)
		agent_widget_comm(type, agent_wire_msg_content(m));
	if (parent == NULL)
		return;
	TAILQ_FOREACH(e, &agent_exec_list, entry) {
		if (strcmp(e->msg_id, parent) == 0)
			break;
	}
	if (e == NULL) {
		/* A display updated after its run ended (a thread, say). */
		if (channel == AGENT_CHANNEL_IOPUB &&
		    strcmp(type, "update_display_data") == 0)
			agent_exec_output(NULL, type,
			    agent_wire_msg_content(m));
		else
			log_debug("%s: %s for unknown parent %s", __func__,
			    type, parent);
		return;
	}
	if (channel == AGENT_CHANNEL_IOPUB) {
		agent_exec_iopub_ms = util_mono_ms();
		agent_exec_iopub(e, type, agent_wire_msg_content(m));
	}
	else if (channel == AGENT_CHANNEL_SHELL &&
	    strcmp(type, "execute_reply") == 0)
		agent_exec_reply(e, agent_wire_msg_content(m));
}

/*
 * The run and cell of the execute_request msg_id, or with msg_id NULL
 * of the first cell in the kernel that is not silent: 0, or -1 if none.
 */
int
agent_exec_lookup(const char *msg_id, const char **exec_id,
    const char **cell_id)
{
	struct agent_exec	*e;

	TAILQ_FOREACH(e, &agent_exec_list, entry) {
		if (msg_id != NULL ? strcmp(e->msg_id, msg_id) == 0 :
		    !e->silent) {
			if (e->silent)
				return (-1);
			*exec_id = e->exec_id;
			*cell_id = e->cell_id;
			return (0);
		}
	}
	return (-1);
}

/* Is a cell in the kernel now? */
int
agent_exec_running(void)
{
	return (!TAILQ_EMPTY(&agent_exec_list));
}

/* Did we report the kernel busy? */
int
agent_exec_is_busy(void)
{
	return (agent_exec_busy);
}

/*
 * Forget every run without a reply: the kernel is gone, the daemon ends
 * them from AGENT_STATUS dead.
 */
void
agent_exec_clear(void)
{
	struct agent_exec	*e;

	agent_exec_flush();
	while ((e = TAILQ_FIRST(&agent_exec_list)) != NULL)
		agent_exec_free(e);
	agent_exec_busy = 0;
}
