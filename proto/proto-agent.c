/* SPDX-License-Identifier: ISC */
/*
 * proto-agent.c: the bodies the daemon and a runtime agent exchange
 * (200-299; PROTOCOL.md, "Daemon and agent") that need code: AGENT_READY
 * (a pid that must be a process id), AGENT_OUTPUT (display_id required
 * with update) and AGENT_INTERRUPT.  The others are declared by their
 * fields in proto-body.h (docs/decisions/096).  Both ends pack and
 * unpack through these, so they cannot disagree about a key.
 *
 * An unpacker returns 0, or -1 with a message naming the message and the
 * field; it borrows from the frame and allocates nothing (proto-field.c,
 * as every codec).  Absent and nil are the same; unknown keys are
 * ignored.  Names and paths (ids, kernel
 * names, directories) are refused when they hold NUL, since the agent
 * hands them to C strings; cell code and outputs may hold anything.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

/* The names of the enums AGENT_STATUS and AGENT_EXEC_DONE carry
 * (proto-body.h declares those bodies by their fields). */
const char *const proto_agent_state_names[] = {
	"idle", "busy", "unresponsive", "dead", NULL
};
const char *const proto_agent_exec_status_names[] = {
	"ok", "error", "aborted", NULL
};

/* Names and paths the agent hands to C strings. */
#define PROTO_AGENT_NAME	(PROTO_REQ | PROTO_NONUL)

static int	proto_agent_get_ids(const msgpack_object *, const char *,
		    struct proto_str *, struct proto_str *, char *, size_t);

/* AGENT_READY {pid, kernel_name, display_name, language, language_info,
 * protocol_version} */
void
proto_agent_ready_pack(msgpack_packer *pk, const struct proto_agent_ready *m)
{
	msgpack_pack_map(pk, 6 + proto_doc_present(&m->capabilities) +
	    (m->server_kernel_id.ptr != NULL) + (m->transport.ptr != NULL));
	proto_pack_int(pk, "pid", m->pid);
	proto_pack_pstr(pk, "kernel_name", &m->kernel_name);
	proto_pack_pstr(pk, "display_name", &m->display_name);
	proto_pack_pstr(pk, "language", &m->language);
	proto_pack_key(pk, "language_info");
	proto_doc_pack(pk, &m->language_info);
	proto_pack_pstr(pk, "protocol_version", &m->protocol_version);
	if (proto_doc_present(&m->capabilities)) {
		proto_pack_key(pk, "capabilities");
		proto_doc_pack(pk, &m->capabilities);
	}
	if (m->server_kernel_id.ptr != NULL)
		proto_pack_pstr(pk, "server_kernel_id",
		    &m->server_kernel_id);
	if (m->transport.ptr != NULL)
		proto_pack_pstr(pk, "transport", &m->transport);
}

int
proto_agent_ready_unpack(const msgpack_object *body,
    struct proto_agent_ready *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_READY";
	int		 has;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, msg, err, errlen));
	PROTO_TRY(proto_field_int(body, msg, "pid", 0, &m->pid, &has, err,
	    errlen));
	if (!has || m->pid <= 0) {
		snprintf(err, errlen, "%s: pid is not a process id", msg);
		return (-1);
	}
	PROTO_TRY(proto_field_str(body, msg, "kernel_name", PROTO_AGENT_NAME,
	    &m->kernel_name, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "display_name", PROTO_NONUL,
	    &m->display_name, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "language", PROTO_NONUL,
	    &m->language, err, errlen));
	PROTO_TRY(proto_field_doc(body, msg, "language_info", PROTO_MAP,
	    &m->language_info, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "protocol_version", PROTO_NONUL,
	    &m->protocol_version, err, errlen));
	PROTO_TRY(proto_field_doc(body, msg, "capabilities", PROTO_MAP,
	    &m->capabilities, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "server_kernel_id", PROTO_NONUL,
	    &m->server_kernel_id, err, errlen));
	return (proto_field_str(body, msg, "transport", PROTO_NONUL,
	    &m->transport, err, errlen));
}

/* The exec_id and cell_id every run event carries. */
static int
proto_agent_get_ids(const msgpack_object *body, const char *msg,
    struct proto_str *exec_id, struct proto_str *cell_id, char *err,
    size_t errlen)
{
	PROTO_TRY(proto_field_body(body, msg, err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "exec_id", PROTO_AGENT_NAME,
	    exec_id, err, errlen));
	return (proto_field_str(body, msg, "cell_id", PROTO_AGENT_NAME,
	    cell_id, err, errlen));
}

/* AGENT_OUTPUT {exec_id, cell_id, output} or, for update_display_data,
 * {exec_id, cell_id, update: true, display_id, output} */
void
proto_agent_output_pack(msgpack_packer *pk,
    const struct proto_agent_output *m)
{
	msgpack_pack_map(pk, m->update ? 5 : 3);
	proto_pack_pstr(pk, "exec_id", &m->exec_id);
	proto_pack_pstr(pk, "cell_id", &m->cell_id);
	if (m->update) {
		proto_pack_bool(pk, "update", 1);
		proto_pack_pstr(pk, "display_id", &m->display_id);
	}
	proto_pack_key(pk, "output");
	proto_doc_pack(pk, &m->output);
}

int
proto_agent_output_unpack(const msgpack_object *body,
    struct proto_agent_output *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_OUTPUT";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_agent_get_ids(body, msg, &m->exec_id, &m->cell_id,
	    err, errlen));
	PROTO_TRY(proto_field_bool(body, msg, "update", 0, &m->update, NULL,
	    err, errlen));
	PROTO_TRY(proto_field_str(body, msg, "display_id", m->update ?
	    PROTO_AGENT_NAME : PROTO_NONUL, &m->display_id, err, errlen));
	return (proto_field_doc(body, msg, "output", PROTO_REQ | PROTO_MAP,
	    &m->output, err, errlen));
}

/* AGENT_INTERRUPT {} */
void
proto_agent_interrupt_pack(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 0);
}

int
proto_agent_interrupt_unpack(const msgpack_object *body, char *err,
    size_t errlen)
{
	return (proto_field_body(body, "AGENT_INTERRUPT", err, errlen));
}
