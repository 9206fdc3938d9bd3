/* SPDX-License-Identifier: ISC */
/*
 * proto-exec.c: codecs of the execution messages (EXEC_*) and the kernel
 * requests of a room (KERNEL_*).  Cells and language_info are documents.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static size_t
proto_exec_who_count(const struct proto_exec_who *w)
{
	return ((w->client_name.ptr != NULL) +
	    (w->client_version.ptr != NULL) + (w->session.ptr != NULL));
}

static void
proto_exec_who_pack(msgpack_packer *pk, const struct proto_exec_who *w)
{
	if (w->client_name.ptr != NULL)
		proto_pack_pstr(pk, "client_name", &w->client_name);
	if (w->client_version.ptr != NULL)
		proto_pack_pstr(pk, "client_version", &w->client_version);
	if (w->session.ptr != NULL)
		proto_pack_pstr(pk, "session", &w->session);
}

static int
proto_exec_who_unpack(const msgpack_object *body, const char *n,
    struct proto_exec_who *w, char *err, size_t errlen)
{
	PROTO_TRY(proto_field_str(body, n, "client_name", PROTO_NONUL,
	    &w->client_name, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "client_version", PROTO_NONUL,
	    &w->client_version, err, errlen));
	return (proto_field_str(body, n, "session", PROTO_NONUL, &w->session,
	    err, errlen));
}

/* EXEC_RUN's select: enum proto_run_select less one (none is ids). */
static const char *const proto_exec_run_selects[] = { "all", "stale" };

void
proto_exec_run_pack(msgpack_packer *pk, const struct proto_exec_run *m)
{
	msgpack_pack_map(pk, 1 + m->has_stop_on_error + m->has_timeout_ms +
	    (m->task_owner.ptr != NULL) + proto_exec_who_count(&m->who));
	if (m->select != PROTO_RUN_SELECT_IDS)
		proto_pack_str(pk, "select",
		    proto_exec_run_selects[m->select - 1]);
	else
		proto_pack_doc(pk, "cell_ids", &m->cell_ids);
	if (m->has_stop_on_error)
		proto_pack_bool(pk, "stop_on_error", m->stop_on_error);
	if (m->has_timeout_ms)
		proto_pack_int(pk, "timeout_ms", m->timeout_ms);
	if (m->task_owner.ptr != NULL)
		proto_pack_pstr(pk, "task_owner", &m->task_owner);
	proto_exec_who_pack(pk, &m->who);
}

int
proto_exec_run_unpack(const msgpack_object *body, struct proto_exec_run *m,
    char *err, size_t errlen)
{
	const char	*n = "EXEC_RUN";
	int		 sel;

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "cell_ids", PROTO_ARRAY,
	    &m->cell_ids, err, errlen));
	PROTO_TRY(proto_field_enum(body, n, "select", 0,
	    proto_exec_run_selects, sizeof proto_exec_run_selects /
	    sizeof proto_exec_run_selects[0], &sel, err, errlen));
	m->select = (enum proto_run_select)(sel + 1);
	if ((sel >= 0) == (m->cell_ids.obj != NULL)) {
		snprintf(err, errlen, sel >= 0 ? "%s: give cell_ids or "
		    "select, not both" : "%s: cell_ids or select is missing",
		    n);
		return (-1);
	}
	PROTO_TRY(proto_field_bool(body, n, "stop_on_error", 0,
	    &m->stop_on_error, &m->has_stop_on_error, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "task_owner", PROTO_NONUL,
	    &m->task_owner, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "timeout_ms", 0, &m->timeout_ms,
	    &m->has_timeout_ms, err, errlen));
	return (proto_exec_who_unpack(body, n, &m->who, err, errlen));
}

void
proto_exec_state_pack(msgpack_packer *pk, const struct proto_exec_state *m)
{
	msgpack_pack_map(pk, 6 + (m->reason.ptr != NULL) + m->outputs_omitted +
	    (m->task_owner.ptr != NULL) + (m->created_at != 0) +
	    (m->updated_at != 0) + proto_doc_present(&m->input) +
	    proto_exec_who_count(&m->who) + m->has_submitted_at +
	    (m->kernel_session.ptr != NULL));
	proto_pack_pstr(pk, "execution_id", &m->execution_id);
	/* Which daemon wrote it: an unfinished record of another is dead. */
	proto_pack_int(pk, "daemon_started_at", m->daemon_started_at);
	proto_pack_pstr(pk, "notebook_id", &m->notebook_id);
	proto_pack_pstr(pk, "status", &m->status);
	proto_pack_pstr(pk, "message", &m->message);
	if (m->reason.ptr != NULL)
		proto_pack_pstr(pk, "reason", &m->reason);
	if (m->outputs_omitted)
		proto_pack_bool(pk, "outputs_omitted", 1);
	if (m->task_owner.ptr != NULL)
		proto_pack_pstr(pk, "task_owner", &m->task_owner);
	if (m->created_at != 0)
		proto_pack_int(pk, "created_at", m->created_at);
	if (m->updated_at != 0)
		proto_pack_int(pk, "updated_at", m->updated_at);
	if (proto_doc_present(&m->input))
		proto_pack_doc(pk, "input", &m->input);
	proto_exec_who_pack(pk, &m->who);
	if (m->has_submitted_at)
		proto_pack_int(pk, "submitted_at", m->submitted_at);
	if (m->kernel_session.ptr != NULL)
		proto_pack_pstr(pk, "kernel_session", &m->kernel_session);
	proto_pack_doc(pk, "cells", &m->cells);
}

int
proto_exec_state_unpack(const msgpack_object *body,
    struct proto_exec_state *m, char *err, size_t errlen)
{
	const char	*n = "EXEC_STATE";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "execution_id", PROTO_REQ,
	    &m->execution_id, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "daemon_started_at", 0,
	    &m->daemon_started_at, NULL, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "notebook_id", 0,
	    &m->notebook_id, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "status", PROTO_REQ,
	    &m->status, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "message", 0, &m->message,
	    err, errlen));
	PROTO_TRY(proto_field_str(body, n, "reason", 0, &m->reason,
	    err, errlen));
	PROTO_TRY(proto_field_bool(body, n, "outputs_omitted", 0,
	    &m->outputs_omitted, NULL, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "task_owner", 0, &m->task_owner,
	    err, errlen));
	PROTO_TRY(proto_field_int(body, n, "created_at", 0, &m->created_at,
	    NULL, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "updated_at", 0, &m->updated_at,
	    NULL, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "input", PROTO_MAP, &m->input,
	    err, errlen));
	PROTO_TRY(proto_exec_who_unpack(body, n, &m->who, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "submitted_at", 0,
	    &m->submitted_at, &m->has_submitted_at, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "kernel_session", PROTO_NONUL,
	    &m->kernel_session, err, errlen));
	return (proto_field_doc(body, n, "cells", PROTO_REQ | PROTO_ARRAY,
	    &m->cells, err, errlen));
}

void
proto_kernel_info_reply_pack(msgpack_packer *pk,
    const struct proto_kernel_info_reply *m)
{
	msgpack_pack_map(pk, 9 + proto_doc_present(&m->capabilities));
	proto_pack_pstr(pk, "name", &m->name);
	proto_pack_pstr(pk, "state", &m->state);
	proto_pack_opt_int(pk, "pid", m->has_pid, m->pid);
	proto_pack_doc(pk, "language_info", &m->language_info);
	proto_pack_int(pk, "execution_count", m->execution_count);
	proto_pack_uint(pk, "queue", m->queue);
	proto_pack_pstr(pk, "display_name", &m->display_name);
	proto_pack_pstr(pk, "message", &m->message);
	proto_pack_opt_int(pk, "agent_pid", m->has_agent_pid, m->agent_pid);
	if (proto_doc_present(&m->capabilities))
		proto_pack_doc(pk, "capabilities", &m->capabilities);
}

int
proto_kernel_info_reply_unpack(const msgpack_object *body,
    struct proto_kernel_info_reply *m, char *err, size_t errlen)
{
	const char	*n = "KERNEL_INFO_REPLY";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "name", 0, &m->name, err,
	    errlen));
	PROTO_TRY(proto_field_str(body, n, "state", PROTO_REQ,
	    &m->state, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "pid", 0, &m->pid,
	    &m->has_pid, err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "language_info", PROTO_MAP,
	    &m->language_info, err, errlen));
	PROTO_TRY(proto_field_int(body, n, "execution_count", 0,
	    &m->execution_count, NULL, err, errlen));
	PROTO_TRY(proto_field_uint(body, n, "queue", 0, &m->queue, NULL, err,
	    errlen));
	PROTO_TRY(proto_field_str(body, n, "display_name", 0,
	    &m->display_name, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "message", 0, &m->message,
	    err, errlen));
	PROTO_TRY(proto_field_doc(body, n, "capabilities", PROTO_MAP,
	    &m->capabilities, err, errlen));
	return (proto_field_int(body, n, "agent_pid", 0, &m->agent_pid,
	    &m->has_agent_pid, err, errlen));
}

void
proto_kernel_list_reply_pack(msgpack_packer *pk,
    const struct proto_kernel_list_reply *m)
{
	msgpack_pack_map(pk, 2);
	proto_pack_pstr(pk, "default", &m->default_name);
	proto_pack_doc(pk, "kernels", &m->kernels);
}

int
proto_kernel_list_reply_unpack(const msgpack_object *body,
    struct proto_kernel_list_reply *m, char *err, size_t errlen)
{
	const char	*n = "KERNEL_LIST_REPLY";

	memset(m, 0, sizeof *m);
	PROTO_TRY(proto_field_body(body, n, err, errlen));
	PROTO_TRY(proto_field_str(body, n, "default", 0,
	    &m->default_name, err, errlen));
	return (proto_field_doc(body, n, "kernels", PROTO_REQ | PROTO_ARRAY,
	    &m->kernels, err, errlen));
}
