/* SPDX-License-Identifier: ISC */
/*
 * room-input.c: a running cell asks for input (docs/decisions/022).
 *
 * The agent's AGENT_INPUT_REQUEST makes the run's status input_required
 * (room-exec.c packs it with the question) and answers its waiters at
 * once.  The first EXEC_INPUT for that run takes the question and goes to
 * the agent as AGENT_INPUT_REPLY; any later one, and one for a run that
 * asks nothing, gets input_not_pending.  The question ends with the
 * cell: done, interrupted, restarted or dead (room_input_clear).
 *
 * The value is passed on and forgotten: it is never logged, journaled or
 * kept in a run record, so a password stays where it was typed.
 */

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

struct room_input {
	struct room		*room;
	char			*exec_id;
	char			*cell_id;
	char			*prompt;
	int			 password;
	int64_t			 asked_at;	/* us: names this question */
	TAILQ_ENTRY(room_input)	 entry;
};
static TAILQ_HEAD(, room_input) room_inputs =
    TAILQ_HEAD_INITIALIZER(room_inputs);

static struct room_input *room_input_find(struct room *);
static void	room_input_answer(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/* The requests this file answers on a joined room (server-client.c). */
const struct peer_dispatch room_input_table[] = {
	{ PROTO_MSG_EXEC_INPUT, PEER_DISPATCH_UNPACK, room_input_answer },
	{ 0, 0, NULL }
};

static struct room_input *
room_input_find(struct room *r)
{
	struct room_input	*in;

	TAILQ_FOREACH(in, &room_inputs, entry) {
		if (in->room == r)
			return (in);
	}
	return (NULL);
}

/* AGENT_INPUT_REQUEST: the room's running cell waits for an answer. */
void
room_input_request(struct room *r, const struct proto_agent_input_request *m)
{
	struct room_input	*in;

	room_input_clear(r);
	in = xcalloc(1, sizeof *in);
	in->room = r;
	in->exec_id = proto_str_dup(&m->exec_id);
	in->cell_id = proto_str_dup(&m->cell_id);
	in->prompt = m->prompt.ptr != NULL ? proto_str_dup(&m->prompt) :
	    xstrdup("");
	in->password = m->password;
	in->asked_at = util_now_us();
	TAILQ_INSERT_TAIL(&room_inputs, in, entry);
	log_info("run %s: cell %s waits for input", in->exec_id, in->cell_id);
	room_exec_wake(r, in->exec_id);
}

/* Is run exec_id of the room waiting for input? */
int
room_input_pending(struct room *r, const char *exec_id)
{
	struct room_input	*in = room_input_find(r);

	return (in != NULL && strcmp(in->exec_id, exec_id) == 0);
}

/*
 * The question, {cell_id, prompt, password, asked_at}, for
 * EXEC_STATE.input; asked_at (us) tells one question of a run from the
 * next (an MCP task's inputRequests key, decision 069).
 */
void
room_input_pack(msgpack_packer *pk, const void *arg)
{
	struct room_input	*in = room_input_find((struct room *)arg);

	if (in == NULL) {
		msgpack_pack_nil(pk);
		return;
	}
	msgpack_pack_map(pk, 4);
	proto_pack_str(pk, "cell_id", in->cell_id);
	proto_pack_str(pk, "prompt", in->prompt);
	proto_pack_bool(pk, "password", in->password);
	proto_pack_int(pk, "asked_at", in->asked_at);
}

/* EXEC_INPUT {execution_id, value}: the first answer wins. */
static void
room_input_answer(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_exec_input	*m = mv;
	struct room			*r = arg;
	struct room_input		*in;
	uint32_t			 id = hdr->id;

	in = room_input_find(r);
	if (in == NULL || !proto_str_eq(&m->execution_id, in->exec_id)) {
		peer_send_error(p, id, PROTO_E_INPUT_NOT_PENDING,
		    "run %.*s is not "
		    "waiting for input: it was answered already, or it does "
		    "not ask (get_results shows its status)",
		    (int)m->execution_id.len, m->execution_id.ptr);
		return;
	}
	log_info("run %s: cell %s answered", in->exec_id, in->cell_id);
	room_input_clear(r);
	kernel_introspect_ask(r, p, id, PROTO_MSG_AGENT_INPUT_REPLY, body);
}

/* The question ended with its cell, or the room goes. */
void
room_input_clear(struct room *r)
{
	struct room_input	*in;

	if ((in = room_input_find(r)) == NULL)
		return;
	TAILQ_REMOVE(&room_inputs, in, entry);
	free(in->exec_id);
	free(in->cell_id);
	free(in->prompt);
	free(in);
}
