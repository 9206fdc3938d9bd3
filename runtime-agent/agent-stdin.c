/* SPDX-License-Identifier: ISC */
/*
 * agent-stdin.c: a cell asks for input (input(), getpass.getpass()).
 *
 * Runs are sent with allow_stdin, so the kernel asks on stdin with
 * input_request {prompt, password} and waits.  We tell the daemon with
 * AGENT_INPUT_REQUEST {exec_id, cell_id, prompt, password}; its
 * AGENT_INPUT_REPLY {execution_id, value} becomes the input_reply, whose
 * parent is the request's header, as jupyter_client answers.
 *
 * One question waits at a time: the kernel runs one cell.  A question
 * ends when it is answered, when its cell is no longer in the kernel
 * (interrupted: ipykernel raises KeyboardInterrupt in input()), or when
 * the kernel goes (agent_stdin_clear).  A value is never logged: a
 * password must not reach a log file.  The prompt is redacted like an
 * output (agent-redact.c); the value is the daemon's to keep or not.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static struct json_object	*agent_stdin_header;	/* NULL: none waits */
static char			*agent_stdin_exec_id;
static char			 agent_stdin_parent[64]; /* its execute */

/*
 * A prompt to send: whole up to PROTO_PROMPT_MAX bytes, else its last
 * bytes (from a character's start) after a note of how much was left
 * out.  Caller frees.
 */
static char *
agent_stdin_cut(const char *prompt)
{
	size_t	 len = strlen(prompt), start;
	char	*out;

	if (len <= PROTO_PROMPT_MAX)
		return (xstrdup(prompt));
	start = len - (PROTO_PROMPT_MAX - 64);
	while (start < len && ((unsigned char)prompt[start] & 0xc0) == 0x80)
		start++;
	xasprintf(&out, "[the first %zu bytes of this prompt left out] %s",
	    start, prompt + start);
	return (out);
}

/*
 * An input_request from the kernel: 1 if it is a run's, now waiting for
 * the daemon's answer; 0 leaves it to agent-exec.c (a silent request's,
 * or a kernel asking although not allowed to: answered empty).
 */
int
agent_stdin_message(struct agent_kernel *k, struct agent_wire_msg *m)
{
	struct proto_agent_input_request	 r;
	struct json_object			*content, *v;
	const char				*parent, *exec_id, *cell_id;
	const char				*prompt;
	char					*cut, *red;
	size_t					 len, hold;
	struct mpbuf				 b;

	if (strcmp(agent_wire_msg_type(m), "input_request") != 0)
		return (0);
	parent = agent_wire_msg_parent_id(m);
	if (parent == NULL || strlen(parent) >= sizeof agent_stdin_parent ||
	    agent_exec_lookup(parent, &exec_id, &cell_id) != 0)
		return (0);
	content = agent_wire_msg_content(m);
	prompt = jsonget_str(content, "prompt", NULL);

	agent_stdin_clear();
	agent_stdin_header = json_object_get(agent_wire_msg_header(m));
	agent_stdin_exec_id = xstrdup(exec_id);
	snprintf(agent_stdin_parent, sizeof agent_stdin_parent, "%s", parent);

	memset(&r, 0, sizeof r);
	r.exec_id = agent_str(exec_id);
	r.cell_id = agent_str(cell_id);
	/*
	 * A prompt of megabytes (input("x" * 10**7)) is cut to its end, the
	 * part next to where the answer goes: sent whole it was over the
	 * frame's cap and dropped, and the run never asked for input.
	 */
	cut = agent_stdin_cut(prompt != NULL ? prompt : "");
	if ((red = agent_redact_text(cut, strlen(cut), 1, &len, &hold,
	    NULL)) != NULL) {
		free(cut);
		cut = red;
	}
	r.prompt = agent_str(cut);
	r.password = json_object_object_get_ex(content, "password", &v) &&
	    json_object_get_boolean(v);
	log_info("exec %s: cell %s asks for input%s", exec_id, cell_id,
	    r.password ? " (a password)" : "");
	mpbuf_init(&b);
	proto_agent_input_request_pack(&b.pk, &r);
	agent_send(PROTO_MSG_AGENT_INPUT_REQUEST, 0, &b);
	mpbuf_free(&b);
	free(cut);
	return (1);
}

/* AGENT_INPUT_REPLY {execution_id, value} -> OK, or ERROR. */
void
agent_stdin_reply(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_input	*m = mv;
	struct agent_kernel		*k = arg;
	struct json_object		*content;
	const char			*exec_id, *cell_id;
	char				 msg_id[37];
	uint32_t			 id = hdr->id;
	int				 rc;

	/* Its cell may have ended (interrupted) since it asked. */
	if (agent_stdin_header != NULL &&
	    agent_exec_lookup(agent_stdin_parent, &exec_id, &cell_id) != 0)
		agent_stdin_clear();
	if (k == NULL || agent_stdin_header == NULL ||
	    !proto_str_eq(&m->execution_id, agent_stdin_exec_id)) {
		peer_send_error(p, id, PROTO_E_INPUT_NOT_PENDING,
		    "run %.*s is not "
		    "waiting for input", (int)m->execution_id.len,
		    m->execution_id.ptr);
		return;
	}
	content = json_object_new_object();
	json_object_object_add(content, "value",
	    json_object_new_string_len(m->value.ptr, (int)m->value.len));
	rc = agent_kernel_send_parent(k, AGENT_CHANNEL_STDIN, "input_reply",
	    content, agent_stdin_header, msg_id);
	json_object_put(content);
	agent_stdin_clear();
	if (rc != 0)
		peer_send_error(p, id, PROTO_E_KERNEL_UNAVAILABLE,
		    "cannot send input_reply to the kernel");
	else
		peer_send_ok(p, id);
}

/* Forget the waiting question: the kernel is gone or restarted. */
void
agent_stdin_clear(void)
{
	json_object_put(agent_stdin_header);
	agent_stdin_header = NULL;
	free(agent_stdin_exec_id);
	agent_stdin_exec_id = NULL;
	agent_stdin_parent[0] = '\0';
}
