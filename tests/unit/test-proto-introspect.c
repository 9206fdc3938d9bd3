/* SPDX-License-Identifier: ISC */
/*
 * test-proto-introspect.c: codecs of KERNEL_VARIABLES, _COMPLETE,
 * _INSPECT, their replies, EXEC_INPUT and AGENT_INPUT_REQUEST: round
 * trips, every unpacker refusing a mistyped field by name, the caps.
 */

#include "proto-test.h"

static void	pack_list(msgpack_packer *, const void *);

static void
pack_list(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 1);
	proto_pack_str(pk, "name", arg);
}

Test(proto_introspect, variables)
{
	struct proto_variables		v, vz;
	struct proto_variables_reply	r, rz;
	struct pt_buf			b;
	char				err[256];

	memset(&v, 0, sizeof v);
	v.filter = proto_str_make("df*");
	v.has_max = 1;
	v.max = 7;
	pt_init(&b);
	proto_variables_pack(&b.pk, &v);
	cr_assert_eq(proto_variables_unpack(pt_body(&b), &vz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(vz.filter, "df*");
	cr_assert(vz.has_max && vz.max == 7 && !vz.has_timeout_ms);
	pt_refuses_all(proto_variables_unpack, struct proto_variables,
	    pt_body(&b), "KERNEL_VARIABLES", "filter", "max", "timeout_ms");
	pt_free(&b);

	memset(&r, 0, sizeof r);
	r.variables.pack = pack_list;
	r.variables.arg = "x";
	r.total = 3;
	r.while_busy = 1;
	r.via = proto_str_make("debugger");
	pt_init(&b);
	proto_variables_reply_pack(&b.pk, &r);
	cr_assert_eq(proto_variables_reply_unpack(pt_body(&b), &rz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(rz.variables.obj->via.array.size, 1);
	cr_assert(rz.total == 3 && rz.while_busy);
	pt_str_eq(rz.via, "debugger");
	pt_refuses_all(proto_variables_reply_unpack,
	    struct proto_variables_reply, pt_body(&b),
	    "KERNEL_VARIABLES_REPLY", "variables", "total", "while_busy",
	    "via");
	pt_free(&b);
}

Test(proto_introspect, complete_inspect)
{
	struct proto_complete		c, cz;
	struct proto_complete_reply	cr, crz;
	struct proto_inspect		i, iz;
	struct proto_inspect_reply	ir, irz;
	struct pt_buf			b;
	char				err[256];

	memset(&c, 0, sizeof c);
	c.code = proto_str_make("import o");
	c.has_cursor_pos = 1;
	c.cursor_pos = 8;
	pt_init(&b);
	proto_complete_pack(&b.pk, &c);
	cr_assert_eq(proto_complete_unpack(pt_body(&b), &cz, err, sizeof err),
	    0, "%s", err);
	pt_str_eq(cz.code, "import o");
	cr_assert(cz.has_cursor_pos && cz.cursor_pos == 8);
	pt_refuses_all(proto_complete_unpack, struct proto_complete,
	    pt_body(&b), "KERNEL_COMPLETE", "code", "cursor_pos",
	    "timeout_ms");
	pt_free(&b);

	memset(&cr, 0, sizeof cr);
	cr.matches.pack = pack_list;
	cr.matches.arg = "os";
	cr.cursor_start = 7;
	cr.cursor_end = 8;
	cr.total = 40;
	pt_init(&b);
	proto_complete_reply_pack(&b.pk, &cr);
	cr_assert_eq(proto_complete_reply_unpack(pt_body(&b), &crz, err,
	    sizeof err), 0, "%s", err);
	cr_assert(crz.cursor_start == 7 && crz.cursor_end == 8 &&
	    crz.total == 40);
	pt_refuses_all(proto_complete_reply_unpack,
	    struct proto_complete_reply, pt_body(&b),
	    "KERNEL_COMPLETE_REPLY", "matches", "cursor_start", "cursor_end",
	    "total", "while_busy");
	pt_free(&b);

	memset(&i, 0, sizeof i);
	i.code = proto_str_make("len");
	i.detail_level = 1;
	pt_init(&b);
	proto_inspect_pack(&b.pk, &i);
	cr_assert_eq(proto_inspect_unpack(pt_body(&b), &iz, err, sizeof err),
	    0, "%s", err);
	cr_assert(!iz.has_cursor_pos && iz.detail_level == 1);
	pt_refuses_all(proto_inspect_unpack, struct proto_inspect,
	    pt_body(&b), "KERNEL_INSPECT", "code", "cursor_pos",
	    "detail_level", "timeout_ms");
	pt_free(&b);
	i.detail_level = 2;
	pt_init(&b);
	proto_inspect_pack(&b.pk, &i);
	cr_assert_eq(proto_inspect_unpack(pt_body(&b), &iz, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "KERNEL_INSPECT: detail_level is not 0 or 1");
	pt_free(&b);

	memset(&ir, 0, sizeof ir);
	ir.found = 1;
	ir.text = proto_str_make("Return the number of items");
	pt_init(&b);
	proto_inspect_reply_pack(&b.pk, &ir);
	cr_assert_eq(proto_inspect_reply_unpack(pt_body(&b), &irz, err,
	    sizeof err), 0, "%s", err);
	cr_assert(irz.found && !irz.truncated);
	pt_str_eq(irz.text, "Return the number of items");
	pt_refuses_all(proto_inspect_reply_unpack, struct proto_inspect_reply,
	    pt_body(&b), "KERNEL_INSPECT_REPLY", "found", "text", "truncated",
	    "while_busy");
	pt_free(&b);
}

Test(proto_introspect, input)
{
	struct proto_exec_input			m, z;
	struct proto_agent_input_request	q, qz;
	struct pt_buf				b;
	char					err[256], *big;

	memset(&m, 0, sizeof m);
	m.execution_id = proto_str_make("e1");
	m.value = proto_str_make("");
	pt_init(&b);
	proto_exec_input_pack(&b.pk, &m);
	cr_assert_eq(proto_exec_input_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(z.execution_id, "e1");
	cr_assert(z.value.ptr != NULL && z.value.len == 0);
	pt_refuses_all(proto_exec_input_unpack, struct proto_exec_input,
	    pt_body(&b), "EXEC_INPUT", "execution_id", "value");
	pt_free(&b);

	/* Over the cap: refused, and the message does not quote it. */
	big = malloc(PROTO_INPUT_MAX + 2);
	memset(big, 'p', PROTO_INPUT_MAX + 1);
	big[PROTO_INPUT_MAX + 1] = '\0';
	m.value = proto_str_make(big);
	pt_init(&b);
	proto_exec_input_pack(&b.pk, &m);
	cr_assert_eq(proto_exec_input_unpack(pt_body(&b), &z, err,
	    sizeof err), -1);
	cr_assert_null(strstr(err, "ppp"), "%s", err);
	pt_free(&b);
	free(big);

	memset(&q, 0, sizeof q);
	q.exec_id = proto_str_make("e1");
	q.cell_id = proto_str_make("c1");
	q.prompt = proto_str_make("pw: ");
	q.password = 1;
	pt_init(&b);
	proto_agent_input_request_pack(&b.pk, &q);
	cr_assert_eq(proto_agent_input_request_unpack(pt_body(&b), &qz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(qz.prompt, "pw: ");
	cr_assert(qz.password);
	pt_refuses_all(proto_agent_input_request_unpack,
	    struct proto_agent_input_request, pt_body(&b),
	    "AGENT_INPUT_REQUEST", "exec_id", "cell_id", "prompt",
	    "password");
	pt_free(&b);
}
