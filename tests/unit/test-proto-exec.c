/* SPDX-License-Identifier: ISC */
/*
 * test-proto-exec.c: codecs of EXEC_* and KERNEL_*: round trips, and
 * every unpacker refusing a mistyped field by name.
 */

#include "proto-test.h"

static void	pack_ids(msgpack_packer *, const void *);
static void	pack_info(msgpack_packer *, const void *);
static int	get_unpack(const msgpack_object *, struct proto_exec_id *,
		    char *, size_t);
static int	cancel_unpack(const msgpack_object *, struct proto_exec_id *,
		    char *, size_t);
static int	tasks_reply_unpack(const msgpack_object *,
		    struct proto_exec_runs *, char *, size_t);
static int	list_reply_unpack(const msgpack_object *,
		    struct proto_exec_runs *, char *, size_t);

static void
pack_ids(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 2);
	proto_pack_cstr(pk, arg);
	msgpack_pack_uint64(pk, 0);
}

static void
pack_info(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_map(pk, 1);
	proto_pack_str(pk, "name", arg);
}

/* One codec serves two messages; each names its own. */
static int
get_unpack(const msgpack_object *o, struct proto_exec_id *m, char *err,
    size_t errlen)
{
	return (proto_exec_id_unpack(o, "EXEC_GET", m, err, errlen));
}

static int
cancel_unpack(const msgpack_object *o, struct proto_exec_id *m, char *err,
    size_t errlen)
{
	return (proto_exec_id_unpack(o, "EXEC_CANCEL", m, err, errlen));
}

static int
tasks_reply_unpack(const msgpack_object *o, struct proto_exec_runs *m,
    char *err, size_t errlen)
{
	return (proto_exec_runs_unpack(o, "EXEC_TASKS_REPLY", m, err,
	    errlen));
}

static int
list_reply_unpack(const msgpack_object *o, struct proto_exec_runs *m,
    char *err, size_t errlen)
{
	return (proto_exec_runs_unpack(o, "EXEC_LIST_REPLY", m, err, errlen));
}

Test(proto_exec, run_get_round_trip)
{
	struct proto_exec_run	r, rz;
	struct proto_exec_id	g, gz;
	struct pt_buf		b;
	char			err[256];

	memset(&r, 0, sizeof r);
	r.cell_ids.pack = pack_ids;
	r.cell_ids.arg = "c1";
	r.has_stop_on_error = 1;
	r.stop_on_error = 0;
	r.has_timeout_ms = 1;
	r.timeout_ms = 5000;
	r.task_owner = proto_str_make("mcp-1");
	pt_init(&b);
	proto_exec_run_pack(&b.pk, &r);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(rz.cell_ids.obj->via.array.size, 2);
	cr_assert(rz.has_stop_on_error && !rz.stop_on_error);
	cr_assert(rz.has_timeout_ms && rz.timeout_ms == 5000);
	pt_str_eq(rz.task_owner, "mcp-1");
	pt_refuses_all(proto_exec_run_unpack, struct proto_exec_run,
	    pt_body(&b), "EXEC_RUN", "cell_ids", "stop_on_error",
	    "timeout_ms", "task_owner", "select");
	pt_free(&b);

	memset(&g, 0, sizeof g);
	g.execution_id = proto_str_make("e1");
	pt_init(&b);
	proto_exec_id_pack(&b.pk, &g);
	cr_assert_eq(get_unpack(pt_body(&b), &gz, err, sizeof err),
	    0);
	pt_str_eq(gz.execution_id, "e1");
	cr_assert(!gz.has_timeout_ms);
	pt_refuses_all(get_unpack, struct proto_exec_id,
	    pt_body(&b), "EXEC_GET", "execution_id", "timeout_ms");
	pt_free(&b);
}

/*
 * select: the daemon picks the cells (all, stale); exactly one of it and
 * cell_ids; an unknown selection is refused by name.
 */
Test(proto_exec, run_select)
{
	struct proto_exec_run	r, rz;
	struct pt_buf		b;
	char			err[256];

	memset(&r, 0, sizeof r);
	cr_assert_eq(r.select, PROTO_RUN_SELECT_IDS, "zeroed means cell_ids");
	r.select = PROTO_RUN_SELECT_STALE;
	pt_init(&b);
	proto_exec_run_pack(&b.pk, &r);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(rz.select, PROTO_RUN_SELECT_STALE);
	cr_assert_null(rz.cell_ids.obj);
	cr_assert_null(proto_get(pt_body(&b), "cell_ids"));
	pt_refuses_all(proto_exec_run_unpack, struct proto_exec_run,
	    pt_body(&b), "EXEC_RUN", "select");
	pt_free(&b);

	r.select = PROTO_RUN_SELECT_ALL;
	pt_init(&b);
	proto_exec_run_pack(&b.pk, &r);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(rz.select, PROTO_RUN_SELECT_ALL);
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "select", "some");
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "EXEC_RUN: select \"some\" is not one we know");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "select", "all");
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 0);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "EXEC_RUN: give cell_ids or select, not both");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 0);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "EXEC_RUN: cell_ids or select is missing");
	pt_free(&b);
}

Test(proto_exec, state_round_trip)
{
	struct proto_exec_state	s, z;
	struct pt_buf		b;
	char			err[256];

	memset(&s, 0, sizeof s);
	s.execution_id = proto_str_make("e1");
	s.daemon_started_at = 123;
	s.notebook_id = proto_str_make("nb");
	s.status = proto_str_make("done");
	s.reason = proto_str_make("kernel_restarted");
	s.outputs_omitted = 1;
	s.cells.pack = pack_ids;
	s.cells.arg = "x";
	s.task_owner = proto_str_make("mcp-2");
	s.created_at = 1700000000000;
	s.updated_at = 1700000000500;
	pt_init(&b);
	proto_exec_state_pack(&b.pk, &s);
	/* message is always there, nil when there is none. */
	cr_assert_eq(proto_get(pt_body(&b), "message")->type,
	    MSGPACK_OBJECT_NIL);
	cr_assert_eq(proto_exec_state_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(z.execution_id, "e1");
	cr_assert_eq(z.daemon_started_at, 123);
	pt_str_eq(z.status, "done");
	pt_str_eq(z.reason, "kernel_restarted");
	cr_assert_null(z.message.ptr);
	cr_assert(z.outputs_omitted);
	pt_str_eq(z.task_owner, "mcp-2");
	cr_assert_eq(z.created_at, 1700000000000);
	cr_assert_eq(z.updated_at, 1700000000500);
	pt_refuses_all(proto_exec_state_unpack, struct proto_exec_state,
	    pt_body(&b), "EXEC_STATE", "execution_id", "daemon_started_at",
	    "notebook_id", "status", "message", "reason", "outputs_omitted",
	    "task_owner", "created_at", "updated_at", "cells");
	pt_free(&b);
}

Test(proto_exec, cancel_tasks_round_trip)
{
	struct proto_exec_id		 c, cz;
	struct proto_exec_tasks		 t, tz;
	struct proto_exec_runs		 r, rz;
	struct pt_buf			 b;
	char				 err[256];

	memset(&c, 0, sizeof c);
	c.execution_id = proto_str_make("e1");
	c.has_timeout_ms = 1;
	c.timeout_ms = 10000;
	pt_init(&b);
	proto_exec_id_pack(&b.pk, &c);
	cr_assert_eq(cancel_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(cz.execution_id, "e1");
	cr_assert(cz.has_timeout_ms && cz.timeout_ms == 10000);
	pt_refuses_all(cancel_unpack, struct proto_exec_id,
	    pt_body(&b), "EXEC_CANCEL", "execution_id", "timeout_ms");
	pt_free(&b);

	memset(&t, 0, sizeof t);
	t.task_owner = proto_str_make("mcp-3");
	pt_init(&b);
	proto_exec_tasks_pack(&b.pk, &t);
	cr_assert_eq(proto_exec_tasks_unpack(pt_body(&b), &tz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(tz.task_owner, "mcp-3");
	pt_refuses_all(proto_exec_tasks_unpack, struct proto_exec_tasks,
	    pt_body(&b), "EXEC_TASKS", "task_owner");
	pt_free(&b);

	memset(&r, 0, sizeof r);
	r.runs.pack = pack_ids;
	r.runs.arg = "e2";
	pt_init(&b);
	proto_exec_runs_pack(&b.pk, &r);
	cr_assert_eq(tasks_reply_unpack(pt_body(&b), &rz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(rz.runs.obj->via.array.size, 2);
	pt_refuses_all(tasks_reply_unpack,
	    struct proto_exec_runs, pt_body(&b), "EXEC_TASKS_REPLY",
	    "runs");
	pt_free(&b);
}

Test(proto_exec, kernel_round_trip)
{
	struct proto_kernel_info_reply	i, iz;
	struct proto_kernel_list_reply	l, lz;
	struct proto_kernel_select	s, sz;
	struct pt_buf			b;
	char				err[256];

	memset(&i, 0, sizeof i);
	i.name = proto_str_make("python3");
	i.state = proto_str_make("idle");
	i.has_pid = 1;
	i.pid = 77;
	i.execution_count = 4;
	i.queue = 2;
	i.language_info.pack = pack_info;
	i.language_info.arg = "python";
	pt_init(&b);
	proto_kernel_info_reply_pack(&b.pk, &i);
	cr_assert_eq(proto_kernel_info_reply_unpack(pt_body(&b), &iz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(iz.name, "python3");
	cr_assert(iz.has_pid && iz.pid == 77 && !iz.has_agent_pid);
	cr_assert(iz.execution_count == 4 && iz.queue == 2);
	cr_assert_null(iz.display_name.ptr);
	cr_assert_not_null(iz.language_info.obj);
	pt_refuses_all(proto_kernel_info_reply_unpack,
	    struct proto_kernel_info_reply, pt_body(&b), "KERNEL_INFO_REPLY",
	    "name", "state", "pid", "language_info", "execution_count",
	    "queue", "display_name", "message", "agent_pid");
	pt_free(&b);

	memset(&l, 0, sizeof l);
	l.default_name = proto_str_make("python3");
	l.kernels.pack = pack_ids;
	l.kernels.arg = "k";
	pt_init(&b);
	proto_kernel_list_reply_pack(&b.pk, &l);
	cr_assert_eq(proto_kernel_list_reply_unpack(pt_body(&b), &lz, err,
	    sizeof err), 0);
	pt_str_eq(lz.default_name, "python3");
	pt_refuses_all(proto_kernel_list_reply_unpack,
	    struct proto_kernel_list_reply, pt_body(&b), "KERNEL_LIST_REPLY",
	    "default", "kernels");
	pt_free(&b);

	s.kernel = proto_str_make("ir");
	pt_init(&b);
	proto_kernel_select_pack(&b.pk, &s);
	cr_assert_eq(proto_kernel_select_unpack(pt_body(&b), &sz, err,
	    sizeof err), 0);
	pt_str_eq(sz.kernel, "ir");
	pt_refuses(proto_kernel_select_unpack, struct proto_kernel_select,
	    pt_body(&b), "KERNEL_SELECT", "kernel");
	pt_free(&b);
}

/* The status names PROTOCOL.md lists, in both directions. */
Test(proto_exec, status_names)
{
	static const char *const run[] = { "queued", "running", "done",
	    "error", "interrupted", "kernel_died", "cancelled" };
	static const char *const cell[] = { "queued", "running", "ok",
	    "error", "not_run", "interrupted", "kernel_died" };
	enum proto_run_status	rs;
	enum proto_cell_status	cs;
	size_t			i;

	for (i = 0; i < sizeof run / sizeof *run; i++) {
		cr_assert_eq(proto_run_status_parse(run[i], strlen(run[i]),
		    &rs), 0, "%s", run[i]);
		cr_assert_eq((size_t)rs, i);
		cr_assert_str_eq(proto_run_status_name(rs), run[i]);
		cr_assert_eq(proto_run_status_ended(rs), i >= 2);
	}
	for (i = 0; i < sizeof cell / sizeof *cell; i++) {
		cr_assert_eq(proto_cell_status_parse(cell[i], strlen(cell[i]),
		    &cs), 0, "%s", cell[i]);
		cr_assert_eq((size_t)cs, i);
		cr_assert_str_eq(proto_cell_status_name(cs), cell[i]);
	}
	cr_assert_eq(proto_run_status_parse("ok", 2, &rs), -1);
	cr_assert_eq(proto_run_status_parse("done!", 4, &rs), 0);
	cr_assert_eq(proto_cell_status_parse("done", 4, &cs), -1);
	cr_assert_eq(proto_cell_status_parse(NULL, 0, &cs), -1);
}

/* Who asked for a run, in EXEC_RUN and in the record; EXEC_LIST. */
Test(proto_exec, who_and_list_round_trip)
{
	struct proto_exec_run		r, rz;
	struct proto_exec_state		s, z;
	struct proto_exec_list		l, lz;
	struct proto_exec_runs		lr, lrz;
	struct pt_buf			b;
	char				err[256];

	memset(&r, 0, sizeof r);
	r.cell_ids.pack = pack_ids;
	r.cell_ids.arg = "c1";
	r.who.client_name = proto_str_make("agent");
	r.who.client_version = proto_str_make("1.0");
	r.who.session = proto_str_make("0badcafe");
	pt_init(&b);
	proto_exec_run_pack(&b.pk, &r);
	cr_assert_eq(proto_exec_run_unpack(pt_body(&b), &rz, err, sizeof err),
	    0, "%s", err);
	pt_str_eq(rz.who.client_name, "agent");
	pt_str_eq(rz.who.client_version, "1.0");
	pt_str_eq(rz.who.session, "0badcafe");
	pt_refuses_all(proto_exec_run_unpack, struct proto_exec_run,
	    pt_body(&b), "EXEC_RUN", "client_name", "client_version",
	    "session");
	pt_free(&b);

	memset(&s, 0, sizeof s);
	s.execution_id = proto_str_make("e1");
	s.status = proto_str_make("done");
	s.cells.pack = pack_ids;
	s.cells.arg = "x";
	s.who.client_name = proto_str_make("agent");
	s.has_submitted_at = 1;
	s.submitted_at = 42;
	s.kernel_session = proto_str_make("k1");
	pt_init(&b);
	proto_exec_state_pack(&b.pk, &s);
	cr_assert_eq(proto_exec_state_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(z.who.client_name, "agent");
	cr_assert_null(z.who.session.ptr);
	cr_assert(z.has_submitted_at && z.submitted_at == 42);
	pt_str_eq(z.kernel_session, "k1");
	pt_refuses_all(proto_exec_state_unpack, struct proto_exec_state,
	    pt_body(&b), "EXEC_STATE", "client_name", "submitted_at",
	    "kernel_session");
	pt_free(&b);

	memset(&l, 0, sizeof l);
	l.has_limit = 1;
	l.limit = 5;
	pt_init(&b);
	proto_exec_list_pack(&b.pk, &l);
	cr_assert_eq(proto_exec_list_unpack(pt_body(&b), &lz, err, sizeof err),
	    0, "%s", err);
	cr_assert(lz.has_limit && lz.limit == 5);
	pt_refuses_all(proto_exec_list_unpack, struct proto_exec_list,
	    pt_body(&b), "EXEC_LIST", "limit");
	pt_free(&b);

	memset(&lr, 0, sizeof lr);
	lr.runs.pack = pack_ids;
	lr.runs.arg = "e1";
	pt_init(&b);
	proto_exec_runs_pack(&b.pk, &lr);
	cr_assert_eq(list_reply_unpack(pt_body(&b), &lrz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(lrz.runs.obj->via.array.size, 2);
	pt_refuses_all(list_reply_unpack,
	    struct proto_exec_runs, pt_body(&b), "EXEC_LIST_REPLY",
	    "runs");
	pt_free(&b);
}
