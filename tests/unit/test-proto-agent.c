/* SPDX-License-Identifier: ISC */
/*
 * test-proto-agent.c: the AGENT_* codecs (proto/proto-agent.c): every
 * body packed and unpacked again, and the refusals a bad peer meets.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

static msgpack_sbuffer	sb;
static msgpack_packer	pk;
static msgpack_unpacked	u;

static void	setup(void);
static void	teardown(void);
static const msgpack_object	*packed(void);
static void	reset(void);
static struct proto_str	S(const char *);
static void	expect_str(struct proto_str, const char *, size_t);
static void	pack_language_info(msgpack_packer *, const void *);

static void
setup(void)
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&u);
}

static void
teardown(void)
{
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

TestSuite(proto_agent, .init = setup, .fini = teardown);

/* What was packed so far, as one object. */
static const msgpack_object *
packed(void)
{
	size_t	off = 0;

	msgpack_unpacked_destroy(&u);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, sb.size);
	return (&u.data);
}

/* A body from a JSON-ish list of msgpack values: restart the buffer. */
static void
reset(void)
{
	msgpack_sbuffer_clear(&sb);
}

static struct proto_str
S(const char *s)
{
	struct proto_str	p = { s, strlen(s) };

	return (p);
}

static void
expect_str(struct proto_str got, const char *want, size_t len)
{
	cr_assert_not_null(got.ptr);
	cr_assert_eq(got.len, len);
	cr_assert_eq(memcmp(got.ptr, want, len), 0);
}

static void
pack_language_info(msgpack_packer *p, const void *arg)
{
	msgpack_pack_map(p, 1);
	proto_pack_str(p, "name", arg);
}

Test(proto_agent, start_round_trip)
{
	struct proto_agent_start	a, b;
	char				err[128];

	memset(&a, 0, sizeof a);
	a.kernel_id = S("k1");
	a.kernel_name = S("python3");
	a.cwd = S("/home/u");
	a.runtime_dir = S("/run/k1");
	proto_agent_start_pack(&pk, &a);
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	expect_str(b.kernel_id, "k1", 2);
	expect_str(b.kernel_name, "python3", 7);
	expect_str(b.cwd, "/home/u", 7);
	expect_str(b.runtime_dir, "/run/k1", 7);
	cr_assert_null(b.state_dir.ptr, "an absent state_dir is NULL");
	cr_assert_null(b.transport.ptr, "an absent transport is NULL");

	reset();
	a.state_dir = S("/state");
	a.transport = S("tcp");
	proto_agent_start_pack(&pk, &a);
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	expect_str(b.state_dir, "/state", 6);
	expect_str(b.transport, "tcp", 3);
}

Test(proto_agent, start_refusals)
{
	struct proto_agent_start	b;
	char				err[128];

	msgpack_pack_array(&pk, 0);
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_START: the body is not a map");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "kernel_id", "k");
	proto_pack_str(&pk, "kernel_name", "python3");
	proto_pack_int(&pk, "cwd", 7);
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_START: cwd is not a string");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "kernel_id", "k");
	proto_pack_str(&pk, "kernel_name", "python3");
	proto_pack_str(&pk, "cwd", "/");
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_START: runtime_dir is missing");

	/* A path is a C string at the other end. */
	reset();
	msgpack_pack_map(&pk, 4);
	proto_pack_str(&pk, "kernel_id", "k");
	proto_pack_str(&pk, "kernel_name", "python3");
	proto_pack_strn(&pk, "cwd", "/tmp\0/etc", 9);
	proto_pack_str(&pk, "runtime_dir", "/r");
	cr_assert_eq(proto_agent_start_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_START: cwd holds a NUL");
}

Test(proto_agent, ready_round_trip)
{
	struct proto_agent_ready	a, b;
	msgpack_sbuffer			li;
	msgpack_packer			lp;
	msgpack_unpacked		lu;
	size_t				off = 0;
	char				err[128];

	memset(&a, 0, sizeof a);
	a.pid = 4242;
	a.kernel_name = S("python3");
	a.display_name = S("Python 3");
	a.language = S("python");
	a.language_info.pack = pack_language_info;
	a.language_info.arg = "python";
	a.protocol_version = S("5.3");
	a.transport = S("ipc");
	proto_agent_ready_pack(&pk, &a);
	cr_assert_eq(proto_agent_ready_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(b.pid, 4242);
	expect_str(b.transport, "ipc", 3);
	expect_str(b.kernel_name, "python3", 7);
	expect_str(b.display_name, "Python 3", 8);
	expect_str(b.language, "python", 6);
	expect_str(b.protocol_version, "5.3", 3);
	cr_assert_not_null(b.language_info.obj);
	cr_assert(proto_obj_streq(proto_get(b.language_info.obj, "name"),
	    "python"));

	/* Packed again from the object it was read as: the same bytes. */
	msgpack_sbuffer_init(&li);
	msgpack_packer_init(&lp, &li, msgpack_sbuffer_write);
	proto_agent_ready_pack(&lp, &b);
	cr_assert_eq(li.size, sb.size);
	cr_assert_eq(memcmp(li.data, sb.data, sb.size), 0);
	msgpack_unpacked_init(&lu);
	cr_assert_eq(msgpack_unpack_next(&lu, li.data, li.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	msgpack_unpacked_destroy(&lu);
	msgpack_sbuffer_destroy(&li);

	/* Without a document, nil; unpacked, absent. */
	reset();
	a.language_info.pack = NULL;
	a.display_name.ptr = NULL;
	proto_agent_ready_pack(&pk, &a);
	cr_assert_eq(proto_agent_ready_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert_null(b.language_info.obj);
	cr_assert_null(b.display_name.ptr);
}

Test(proto_agent, ready_refusals)
{
	struct proto_agent_ready	b;
	char				err[128];

	msgpack_pack_map(&pk, 1);
	proto_pack_str(&pk, "kernel_name", "python3");
	cr_assert_eq(proto_agent_ready_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_READY: pid is not a process id");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_int(&pk, "pid", 12);
	proto_pack_str(&pk, "kernel_name", "python3");
	proto_pack_str(&pk, "language_info", "python");
	cr_assert_eq(proto_agent_ready_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_READY: language_info is not a map");
}

Test(proto_agent, execute_keeps_nul_in_code)
{
	struct proto_agent_execute	a, b;
	char				err[128];

	memset(&a, 0, sizeof a);
	a.exec_id = S("e1");
	a.cell_id = S("c1");
	a.code.ptr = "print('a\0b')";
	a.code.len = 12;
	a.silent = 1;
	proto_agent_execute_pack(&pk, &a);
	cr_assert_eq(proto_agent_execute_unpack(packed(), &b, err,
	    sizeof err), 0, "%s", err);
	expect_str(b.exec_id, "e1", 2);
	expect_str(b.cell_id, "c1", 2);
	expect_str(b.code, "print('a\0b')", 12);
	cr_assert_eq(b.silent, 1);
	cr_assert_eq(b.stop_on_error, 0);

	/* An empty cell is code too. */
	reset();
	a.code = S("");
	proto_agent_execute_pack(&pk, &a);
	cr_assert_eq(proto_agent_execute_unpack(packed(), &b, err,
	    sizeof err), 0, "%s", err);
	cr_assert_not_null(b.code.ptr);
	cr_assert_eq(b.code.len, 0);
}

Test(proto_agent, execute_refusals)
{
	struct proto_agent_execute	b;
	char				err[128];

	msgpack_pack_map(&pk, 2);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "cell_id", "c");
	cr_assert_eq(proto_agent_execute_unpack(packed(), &b, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_EXECUTE: code is missing");

	reset();
	msgpack_pack_map(&pk, 4);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "cell_id", "c");
	proto_pack_str(&pk, "code", "1");
	proto_pack_int(&pk, "silent", 1);
	cr_assert_eq(proto_agent_execute_unpack(packed(), &b, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_EXECUTE: silent is not a boolean");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_strn(&pk, "exec_id", "e\0", 2);
	proto_pack_str(&pk, "cell_id", "c");
	proto_pack_str(&pk, "code", "1");
	cr_assert_eq(proto_agent_execute_unpack(packed(), &b, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_EXECUTE: exec_id holds a NUL");
}

Test(proto_agent, events_round_trip)
{
	struct proto_agent_exec_started	sa, sb2;
	struct proto_agent_clear_output	ca, cb;
	struct proto_agent_exec_done	da, db;
	char				err[128];

	memset(&sa, 0, sizeof sa);
	sa.exec_id = S("e");
	sa.cell_id = S("c");
	proto_agent_exec_started_pack(&pk, &sa);
	cr_assert_eq(proto_agent_exec_started_unpack(packed(), &sb2, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(sb2.has_execution_count, 0);
	reset();
	sa.has_execution_count = 1;
	sa.execution_count = 7;
	proto_agent_exec_started_pack(&pk, &sa);
	cr_assert_eq(proto_agent_exec_started_unpack(packed(), &sb2, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(sb2.has_execution_count, 1);
	cr_assert_eq(sb2.execution_count, 7);

	reset();
	memset(&ca, 0, sizeof ca);
	ca.exec_id = S("e");
	ca.cell_id = S("c");
	ca.wait = 1;
	proto_agent_clear_output_pack(&pk, &ca);
	cr_assert_eq(proto_agent_clear_output_unpack(packed(), &cb, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(cb.wait, 1);
	expect_str(cb.cell_id, "c", 1);

	reset();
	memset(&da, 0, sizeof da);
	da.exec_id = S("e");
	da.cell_id = S("c");
	da.status = PROTO_AGENT_EXEC_ABORTED;
	da.has_execution_count = 1;
	da.execution_count = 3;
	proto_agent_exec_done_pack(&pk, &da);
	cr_assert(proto_obj_streq(proto_get(packed(), "status"), "aborted"));
	cr_assert_eq(proto_agent_exec_done_unpack(packed(), &db, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(db.status, PROTO_AGENT_EXEC_ABORTED);
	cr_assert_eq(db.execution_count, 3);
}

Test(proto_agent, event_refusals)
{
	struct proto_agent_exec_done	db;
	struct proto_agent_exec_started	sb2;
	char				err[128];

	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "cell_id", "c");
	proto_pack_str(&pk, "status", "finished");
	cr_assert_eq(proto_agent_exec_done_unpack(packed(), &db, err,
	    sizeof err), -1);
	cr_assert_str_eq(err,
	    "AGENT_EXEC_DONE: status \"finished\" is not one we know");

	reset();
	msgpack_pack_map(&pk, 2);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "status", "ok");
	cr_assert_eq(proto_agent_exec_done_unpack(packed(), &db, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_EXEC_DONE: cell_id is missing");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "cell_id", "c");
	proto_pack_str(&pk, "execution_count", "1");
	cr_assert_eq(proto_agent_exec_started_unpack(packed(), &sb2, err,
	    sizeof err), -1);
	cr_assert_str_eq(err,
	    "AGENT_EXEC_STARTED: execution_count is not an integer");
}

Test(proto_agent, output_round_trip_and_refusals)
{
	struct proto_agent_output	a, b;
	msgpack_sbuffer			osb;
	msgpack_packer			opk;
	msgpack_unpacked		ou;
	size_t				off = 0;
	char				err[128];

	/* An output read from another frame. */
	msgpack_sbuffer_init(&osb);
	msgpack_packer_init(&opk, &osb, msgpack_sbuffer_write);
	msgpack_pack_map(&opk, 3);
	proto_pack_str(&opk, "output_type", "stream");
	proto_pack_str(&opk, "name", "stdout");
	proto_pack_strn(&opk, "text", "a\0b", 3);
	msgpack_unpacked_init(&ou);
	cr_assert_eq(msgpack_unpack_next(&ou, osb.data, osb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);

	memset(&a, 0, sizeof a);
	a.exec_id = S("e");
	a.cell_id = S("c");
	a.output.obj = &ou.data;
	proto_agent_output_pack(&pk, &a);
	cr_assert_eq(proto_agent_output_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(b.update, 0);
	cr_assert_null(b.display_id.ptr);
	cr_assert(proto_obj_streq(proto_get(b.output.obj, "name"), "stdout"));

	reset();
	a.update = 1;
	a.display_id = S("d1");
	proto_agent_output_pack(&pk, &a);
	cr_assert_eq(proto_agent_output_unpack(packed(), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(b.update, 1);
	expect_str(b.display_id, "d1", 2);

	reset();
	a.display_id.ptr = NULL;
	proto_agent_output_pack(&pk, &a);
	cr_assert_eq(proto_agent_output_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_OUTPUT: display_id is missing");

	reset();
	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "exec_id", "e");
	proto_pack_str(&pk, "cell_id", "c");
	proto_pack_str(&pk, "output", "text");
	cr_assert_eq(proto_agent_output_unpack(packed(), &b, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_OUTPUT: output is not a map");

	msgpack_unpacked_destroy(&ou);
	msgpack_sbuffer_destroy(&osb);
}

Test(proto_agent, control_round_trip)
{
	struct proto_agent_shutdown	sa = { 1 }, sb2;
	struct proto_agent_status	ta, tb;
	char				err[128];

	proto_agent_interrupt_pack(&pk);
	cr_assert_eq(proto_agent_interrupt_unpack(packed(), err, sizeof err),
	    0);
	reset();
	msgpack_pack_nil(&pk);
	cr_assert_eq(proto_agent_interrupt_unpack(packed(), err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "AGENT_INTERRUPT: the body is not a map");

	reset();
	proto_agent_shutdown_pack(&pk, &sa);
	cr_assert_eq(proto_agent_shutdown_unpack(packed(), &sb2, err,
	    sizeof err), 0);
	cr_assert_eq(sb2.restart, 1);
	reset();
	msgpack_pack_map(&pk, 0);
	cr_assert_eq(proto_agent_shutdown_unpack(packed(), &sb2, err,
	    sizeof err), 0);
	cr_assert_eq(sb2.restart, 0, "restart defaults to false");

	reset();
	memset(&ta, 0, sizeof ta);
	ta.state = PROTO_AGENT_UNRESPONSIVE;
	ta.reason = S("no heartbeat for 1.5 s");
	proto_agent_status_pack(&pk, &ta);
	cr_assert_eq(proto_agent_status_unpack(packed(), &tb, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(tb.state, PROTO_AGENT_UNRESPONSIVE);
	expect_str(tb.reason, "no heartbeat for 1.5 s", 22);

	reset();
	ta.state = PROTO_AGENT_DEAD;
	ta.reason.ptr = NULL;
	proto_agent_status_pack(&pk, &ta);
	cr_assert_eq(proto_agent_status_unpack(packed(), &tb, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(tb.state, PROTO_AGENT_DEAD);
	cr_assert_null(tb.reason.ptr);

	reset();
	msgpack_pack_map(&pk, 1);
	proto_pack_str(&pk, "state", "sleepy");
	cr_assert_eq(proto_agent_status_unpack(packed(), &tb, err,
	    sizeof err), -1);
	cr_assert_str_eq(err,
	    "AGENT_STATUS: state \"sleepy\" is not one we know");
	reset();
	msgpack_pack_map(&pk, 0);
	cr_assert_eq(proto_agent_status_unpack(packed(), &tb, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_STATUS: state is missing");
}
