/* SPDX-License-Identifier: ISC */
/*
 * proto-agent.c: the bodies the daemon and a runtime agent exchange
 * (200-299; PROTOCOL.md, "Daemon and agent").  Both ends pack and unpack
 * through these, so they cannot disagree about a key.
 *
 * An unpacker returns 0, or -1 with a message naming the message and the
 * field; it borrows from the frame and allocates nothing.  Absent and nil
 * are the same; unknown keys are ignored.  Names and paths (ids, kernel
 * names, directories) are refused when they hold NUL, since the agent
 * hands them to C strings; cell code and outputs may hold anything.
 */

#include <stdio.h>
#include <string.h>

#include "proto.h"

static const char *proto_agent_states[] = {
	"idle", "busy", "unresponsive", "dead"
};
static const char *proto_agent_exec_statuses[] = {
	"ok", "error", "aborted"
};

#define PROTO_AGENT_NITEMS(a)	(sizeof (a) / sizeof *(a))

/* Field flags for proto_agent_get_str. */
#define PROTO_AGENT_REQUIRED	0x1
#define PROTO_AGENT_NO_NUL	0x2

static int	proto_agent_map(const msgpack_object *, const char *, char *,
		    size_t);
static const msgpack_object	*proto_agent_get(const msgpack_object *,
		    const char *);
static int	proto_agent_get_str(const msgpack_object *, const char *,
		    const char *, int, struct proto_str *, char *, size_t);
static int	proto_agent_get_int(const msgpack_object *, const char *,
		    const char *, int *, int64_t *, char *, size_t);
static int	proto_agent_get_bool(const msgpack_object *, const char *,
		    const char *, int *, char *, size_t);
static int	proto_agent_get_doc(const msgpack_object *, const char *,
		    const char *, int, struct proto_doc *, char *, size_t);
static int	proto_agent_get_enum(const msgpack_object *, const char *,
		    const char *, const char **, size_t, int *, char *, size_t);
static void	proto_agent_pack_str(msgpack_packer *, const char *,
		    const struct proto_str *);
static void	proto_agent_pack_int(msgpack_packer *, const char *, int,
		    int64_t);
static int	proto_agent_get_ids(const msgpack_object *, const char *,
		    struct proto_str *, struct proto_str *, char *, size_t);
static const char	*proto_agent_state_name(enum proto_agent_state);
static const char	*proto_agent_exec_status_name(enum proto_agent_exec_status);

/* The body must be a map. */
static int
proto_agent_map(const msgpack_object *body, const char *msg, char *err,
    size_t errlen)
{
	if (body == NULL || body->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: the body is not a map", msg);
		return (-1);
	}
	return (0);
}

/* A value, or NULL when absent or nil. */
static const msgpack_object *
proto_agent_get(const msgpack_object *body, const char *key)
{
	const msgpack_object	*v = proto_get(body, key);

	return (v != NULL && v->type != MSGPACK_OBJECT_NIL ? v : NULL);
}

static int
proto_agent_get_str(const msgpack_object *body, const char *msg,
    const char *key, int flags, struct proto_str *out, char *err,
    size_t errlen)
{
	const msgpack_object	*v = proto_agent_get(body, key);

	out->ptr = NULL;
	out->len = 0;
	if (v == NULL) {
		if (~flags & PROTO_AGENT_REQUIRED)
			return (0);
		snprintf(err, errlen, "%s: %s is missing", msg, key);
		return (-1);
	}
	if (v->type != MSGPACK_OBJECT_STR) {
		snprintf(err, errlen, "%s: %s is not a string", msg, key);
		return (-1);
	}
	if ((flags & PROTO_AGENT_NO_NUL) && v->via.str.size > 0 &&
	    memchr(v->via.str.ptr, '\0', v->via.str.size) != NULL) {
		snprintf(err, errlen, "%s: %s holds NUL", msg, key);
		return (-1);
	}
	/* msgpack-c gives an empty string a NULL pointer. */
	out->ptr = v->via.str.size > 0 ? v->via.str.ptr : "";
	out->len = v->via.str.size;
	return (0);
}

/* An optional integer. */
static int
proto_agent_get_int(const msgpack_object *body, const char *msg,
    const char *key, int *has, int64_t *value, char *err, size_t errlen)
{
	*has = 0;
	*value = 0;
	if (proto_agent_get(body, key) == NULL)
		return (0);
	if (proto_get_int(body, key, value) != 0) {
		snprintf(err, errlen, "%s: %s is not an integer", msg, key);
		return (-1);
	}
	*has = 1;
	return (0);
}

/* An optional boolean, false when absent. */
static int
proto_agent_get_bool(const msgpack_object *body, const char *msg,
    const char *key, int *value, char *err, size_t errlen)
{
	*value = 0;
	if (proto_agent_get(body, key) == NULL)
		return (0);
	if (proto_get_bool(body, key, value) != 0) {
		snprintf(err, errlen, "%s: %s is not a boolean", msg, key);
		return (-1);
	}
	return (0);
}

/* An optional map, as a document. */
static int
proto_agent_get_doc(const msgpack_object *body, const char *msg,
    const char *key, int required, struct proto_doc *doc, char *err,
    size_t errlen)
{
	const msgpack_object	*v = proto_agent_get(body, key);

	memset(doc, 0, sizeof *doc);
	if (v == NULL && !required)
		return (0);
	if (v == NULL || v->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: %s is not a map", msg, key);
		return (-1);
	}
	doc->obj = v;
	return (0);
}

/* One of names, by its string. */
static int
proto_agent_get_enum(const msgpack_object *body, const char *msg,
    const char *key, const char **names, size_t n, int *value, char *err,
    size_t errlen)
{
	struct proto_str	s;
	size_t			i;

	if (proto_agent_get_str(body, msg, key, PROTO_AGENT_REQUIRED, &s, err,
	    errlen) != 0)
		return (-1);
	for (i = 0; i < n; i++) {
		if (strlen(names[i]) == s.len &&
		    memcmp(names[i], s.ptr, s.len) == 0) {
			*value = (int)i;
			return (0);
		}
	}
	snprintf(err, errlen, "%s: %s \"%.*s\" is not one we know", msg, key,
	    s.len > 32 ? 32 : (int)s.len, s.ptr);
	return (-1);
}

/* Key and string; nil when absent. */
static void
proto_agent_pack_str(msgpack_packer *pk, const char *key,
    const struct proto_str *s)
{
	if (s->ptr == NULL)
		proto_pack_nil(pk, key);
	else
		proto_pack_strn(pk, key, s->ptr, s->len);
}

/* Key and integer; nil when it has none. */
static void
proto_agent_pack_int(msgpack_packer *pk, const char *key, int has,
    int64_t value)
{
	if (has)
		proto_pack_int(pk, key, value);
	else
		proto_pack_nil(pk, key);
}

static const char *
proto_agent_state_name(enum proto_agent_state state)
{
	if ((size_t)state >= PROTO_AGENT_NITEMS(proto_agent_states))
		return ("unknown");
	return (proto_agent_states[state]);
}

static const char *
proto_agent_exec_status_name(enum proto_agent_exec_status status)
{
	if ((size_t)status >= PROTO_AGENT_NITEMS(proto_agent_exec_statuses))
		return ("unknown");
	return (proto_agent_exec_statuses[status]);
}

/* AGENT_START {kernel_id, kernel_name, cwd, runtime_dir, state_dir?} */
void
proto_agent_start_pack(msgpack_packer *pk, const struct proto_agent_start *m)
{
	msgpack_pack_map(pk, 5 + (m->transport.ptr != NULL));
	proto_agent_pack_str(pk, "kernel_id", &m->kernel_id);
	proto_agent_pack_str(pk, "kernel_name", &m->kernel_name);
	proto_agent_pack_str(pk, "cwd", &m->cwd);
	proto_agent_pack_str(pk, "runtime_dir", &m->runtime_dir);
	proto_agent_pack_str(pk, "state_dir", &m->state_dir);
	if (m->transport.ptr != NULL)
		proto_agent_pack_str(pk, "transport", &m->transport);
}

int
proto_agent_start_unpack(const msgpack_object *body,
    struct proto_agent_start *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_START";
	const int	 req = PROTO_AGENT_REQUIRED | PROTO_AGENT_NO_NUL;

	memset(m, 0, sizeof *m);
	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "kernel_id", req, &m->kernel_id,
	    err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "kernel_name", req,
	    &m->kernel_name, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "cwd", req, &m->cwd, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "runtime_dir", req,
	    &m->runtime_dir, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "state_dir", PROTO_AGENT_NO_NUL,
	    &m->state_dir, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "transport", PROTO_AGENT_NO_NUL,
	    &m->transport, err, errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_READY {pid, kernel_name, display_name, language, language_info,
 * protocol_version} */
void
proto_agent_ready_pack(msgpack_packer *pk, const struct proto_agent_ready *m)
{
	msgpack_pack_map(pk, 6 + proto_doc_present(&m->capabilities) +
	    (m->server_kernel_id.ptr != NULL) + (m->transport.ptr != NULL));
	proto_pack_int(pk, "pid", m->pid);
	proto_agent_pack_str(pk, "kernel_name", &m->kernel_name);
	proto_agent_pack_str(pk, "display_name", &m->display_name);
	proto_agent_pack_str(pk, "language", &m->language);
	proto_pack_key(pk, "language_info");
	proto_doc_pack(pk, &m->language_info);
	proto_agent_pack_str(pk, "protocol_version", &m->protocol_version);
	if (proto_doc_present(&m->capabilities)) {
		proto_pack_key(pk, "capabilities");
		proto_doc_pack(pk, &m->capabilities);
	}
	if (m->server_kernel_id.ptr != NULL)
		proto_agent_pack_str(pk, "server_kernel_id",
		    &m->server_kernel_id);
	if (m->transport.ptr != NULL)
		proto_agent_pack_str(pk, "transport", &m->transport);
}

int
proto_agent_ready_unpack(const msgpack_object *body,
    struct proto_agent_ready *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_READY";
	int		 has;

	memset(m, 0, sizeof *m);
	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_int(body, msg, "pid", &has, &m->pid, err,
	    errlen) != 0)
		return (-1);
	if (!has || m->pid <= 0) {
		snprintf(err, errlen, "%s: pid is not a process id", msg);
		return (-1);
	}
	if (proto_agent_get_str(body, msg, "kernel_name",
	    PROTO_AGENT_REQUIRED | PROTO_AGENT_NO_NUL, &m->kernel_name, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "display_name", PROTO_AGENT_NO_NUL,
	    &m->display_name, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "language", PROTO_AGENT_NO_NUL,
	    &m->language, err, errlen) != 0 ||
	    proto_agent_get_doc(body, msg, "language_info", 0,
	    &m->language_info, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "protocol_version",
	    PROTO_AGENT_NO_NUL, &m->protocol_version, err, errlen) != 0 ||
	    proto_agent_get_doc(body, msg, "capabilities", 0,
	    &m->capabilities, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "server_kernel_id",
	    PROTO_AGENT_NO_NUL, &m->server_kernel_id, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "transport", PROTO_AGENT_NO_NUL,
	    &m->transport, err, errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_EXECUTE {exec_id, cell_id, code, stop_on_error, silent} */
void
proto_agent_execute_pack(msgpack_packer *pk,
    const struct proto_agent_execute *m)
{
	msgpack_pack_map(pk, 5);
	proto_agent_pack_str(pk, "exec_id", &m->exec_id);
	proto_agent_pack_str(pk, "cell_id", &m->cell_id);
	proto_agent_pack_str(pk, "code", &m->code);
	proto_pack_bool(pk, "stop_on_error", m->stop_on_error);
	proto_pack_bool(pk, "silent", m->silent);
}

int
proto_agent_execute_unpack(const msgpack_object *body,
    struct proto_agent_execute *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_EXECUTE";
	const int	 id = PROTO_AGENT_REQUIRED | PROTO_AGENT_NO_NUL;

	memset(m, 0, sizeof *m);
	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "exec_id", id, &m->exec_id, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "cell_id", id, &m->cell_id, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "code", PROTO_AGENT_REQUIRED,
	    &m->code, err, errlen) != 0 ||
	    proto_agent_get_bool(body, msg, "stop_on_error",
	    &m->stop_on_error, err, errlen) != 0 ||
	    proto_agent_get_bool(body, msg, "silent", &m->silent, err,
	    errlen) != 0)
		return (-1);
	return (0);
}

/* The exec_id and cell_id every run event carries. */
static int
proto_agent_get_ids(const msgpack_object *body, const char *msg,
    struct proto_str *exec_id, struct proto_str *cell_id, char *err,
    size_t errlen)
{
	const int	id = PROTO_AGENT_REQUIRED | PROTO_AGENT_NO_NUL;

	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_str(body, msg, "exec_id", id, exec_id, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "cell_id", id, cell_id, err,
	    errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_EXEC_STARTED {exec_id, cell_id, execution_count} */
void
proto_agent_exec_started_pack(msgpack_packer *pk,
    const struct proto_agent_exec_started *m)
{
	msgpack_pack_map(pk, 3);
	proto_agent_pack_str(pk, "exec_id", &m->exec_id);
	proto_agent_pack_str(pk, "cell_id", &m->cell_id);
	proto_agent_pack_int(pk, "execution_count", m->has_execution_count,
	    m->execution_count);
}

int
proto_agent_exec_started_unpack(const msgpack_object *body,
    struct proto_agent_exec_started *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_EXEC_STARTED";

	memset(m, 0, sizeof *m);
	if (proto_agent_get_ids(body, msg, &m->exec_id, &m->cell_id, err,
	    errlen) != 0 ||
	    proto_agent_get_int(body, msg, "execution_count",
	    &m->has_execution_count, &m->execution_count, err, errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_OUTPUT {exec_id, cell_id, output} or, for update_display_data,
 * {exec_id, cell_id, update: true, display_id, output} */
void
proto_agent_output_pack(msgpack_packer *pk,
    const struct proto_agent_output *m)
{
	msgpack_pack_map(pk, m->update ? 5 : 3);
	proto_agent_pack_str(pk, "exec_id", &m->exec_id);
	proto_agent_pack_str(pk, "cell_id", &m->cell_id);
	if (m->update) {
		proto_pack_bool(pk, "update", 1);
		proto_agent_pack_str(pk, "display_id", &m->display_id);
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
	if (proto_agent_get_ids(body, msg, &m->exec_id, &m->cell_id, err,
	    errlen) != 0 ||
	    proto_agent_get_bool(body, msg, "update", &m->update, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "display_id", m->update ?
	    PROTO_AGENT_REQUIRED | PROTO_AGENT_NO_NUL : PROTO_AGENT_NO_NUL,
	    &m->display_id, err, errlen) != 0 ||
	    proto_agent_get_doc(body, msg, "output", 1, &m->output, err,
	    errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_CLEAR_OUTPUT {exec_id, cell_id, wait} */
void
proto_agent_clear_output_pack(msgpack_packer *pk,
    const struct proto_agent_clear_output *m)
{
	msgpack_pack_map(pk, 3);
	proto_agent_pack_str(pk, "exec_id", &m->exec_id);
	proto_agent_pack_str(pk, "cell_id", &m->cell_id);
	proto_pack_bool(pk, "wait", m->wait);
}

int
proto_agent_clear_output_unpack(const msgpack_object *body,
    struct proto_agent_clear_output *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_CLEAR_OUTPUT";

	memset(m, 0, sizeof *m);
	if (proto_agent_get_ids(body, msg, &m->exec_id, &m->cell_id, err,
	    errlen) != 0 ||
	    proto_agent_get_bool(body, msg, "wait", &m->wait, err,
	    errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_EXEC_DONE {exec_id, cell_id, status, execution_count} */
void
proto_agent_exec_done_pack(msgpack_packer *pk,
    const struct proto_agent_exec_done *m)
{
	msgpack_pack_map(pk, 4);
	proto_agent_pack_str(pk, "exec_id", &m->exec_id);
	proto_agent_pack_str(pk, "cell_id", &m->cell_id);
	proto_pack_str(pk, "status", proto_agent_exec_status_name(m->status));
	proto_agent_pack_int(pk, "execution_count", m->has_execution_count,
	    m->execution_count);
}

int
proto_agent_exec_done_unpack(const msgpack_object *body,
    struct proto_agent_exec_done *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_EXEC_DONE";
	int		 status;

	memset(m, 0, sizeof *m);
	if (proto_agent_get_ids(body, msg, &m->exec_id, &m->cell_id, err,
	    errlen) != 0 ||
	    proto_agent_get_enum(body, msg, "status",
	    proto_agent_exec_statuses,
	    PROTO_AGENT_NITEMS(proto_agent_exec_statuses), &status, err,
	    errlen) != 0 ||
	    proto_agent_get_int(body, msg, "execution_count",
	    &m->has_execution_count, &m->execution_count, err, errlen) != 0)
		return (-1);
	m->status = (enum proto_agent_exec_status)status;
	return (0);
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
	return (proto_agent_map(body, "AGENT_INTERRUPT", err, errlen));
}

/* AGENT_SHUTDOWN {restart} */
void
proto_agent_shutdown_pack(msgpack_packer *pk,
    const struct proto_agent_shutdown *m)
{
	msgpack_pack_map(pk, 1);
	proto_pack_bool(pk, "restart", m->restart);
}

int
proto_agent_shutdown_unpack(const msgpack_object *body,
    struct proto_agent_shutdown *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_SHUTDOWN";

	memset(m, 0, sizeof *m);
	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_bool(body, msg, "restart", &m->restart, err,
	    errlen) != 0)
		return (-1);
	return (0);
}

/* AGENT_STATUS {state, reason?} */
void
proto_agent_status_pack(msgpack_packer *pk,
    const struct proto_agent_status *m)
{
	msgpack_pack_map(pk, m->reason.ptr != NULL ? 2 : 1);
	proto_pack_str(pk, "state", proto_agent_state_name(m->state));
	if (m->reason.ptr != NULL)
		proto_agent_pack_str(pk, "reason", &m->reason);
}

int
proto_agent_status_unpack(const msgpack_object *body,
    struct proto_agent_status *m, char *err, size_t errlen)
{
	const char	*msg = "AGENT_STATUS";
	int		 state;

	memset(m, 0, sizeof *m);
	if (proto_agent_map(body, msg, err, errlen) != 0 ||
	    proto_agent_get_enum(body, msg, "state", proto_agent_states,
	    PROTO_AGENT_NITEMS(proto_agent_states), &state, err,
	    errlen) != 0 ||
	    proto_agent_get_str(body, msg, "reason", 0, &m->reason, err,
	    errlen) != 0)
		return (-1);
	m->state = (enum proto_agent_state)state;
	return (0);
}
