/* SPDX-License-Identifier: ISC */
/*
 * test-proto-body.c: the bodies proto-body.h declares by their fields
 * (docs/decisions/096) pack to the bytes their hand-written codecs
 * packed (taken from those codecs before they were deleted), and refuse
 * as the field readers do.
 */

#include "proto-test.h"

#define pt_bytes(pack, m, want) do {					\
	struct pt_buf	b_;						\
									\
	pt_init(&b_);							\
	pack(&b_.pk, (m));						\
	cr_assert_eq(b_.sb.size, sizeof (want) - 1, "%zu bytes",	\
	    b_.sb.size);						\
	cr_assert(memcmp(b_.sb.data, (want), b_.sb.size) == 0);		\
	pt_free(&b_);							\
} while (0)

static msgpack_object	pt_seven = { .type = MSGPACK_OBJECT_POSITIVE_INTEGER,
			    .via.u64 = 7 };
static msgpack_object	pt_list = { .type = MSGPACK_OBJECT_ARRAY,
			    .via.array = { 1, &pt_seven } };

Test(proto_body, exec_bytes)
{
	struct proto_exec_list	l;
	struct proto_exec_runs	r;
	struct proto_exec_id	e;

	memset(&l, 0, sizeof l);
	pt_bytes(proto_exec_list_pack, &l, "\x80");
	l.has_limit = 1;
	l.limit = 5;
	pt_bytes(proto_exec_list_pack, &l, "\x81\xa5" "limit" "\x05");

	memset(&r, 0, sizeof r);
	r.runs.obj = &pt_list;
	pt_bytes(proto_exec_runs_pack, &r, "\x81\xa4" "runs" "\x91\x07");

	memset(&e, 0, sizeof e);
	e.execution_id = proto_str_make("r1");
	pt_bytes(proto_exec_id_pack, &e,
	    "\x81\xac" "execution_id" "\xa2" "r1");
	e.has_timeout_ms = 1;
	e.timeout_ms = 300;
	pt_bytes(proto_exec_id_pack, &e,
	    "\x82\xac" "execution_id" "\xa2" "r1"
	    "\xaa" "timeout_ms" "\xcd\x01\x2c");
}

Test(proto_body, view_and_blob_bytes)
{
	struct proto_view_open		o;
	struct proto_view_url		u;
	struct proto_view_state_reply	s;
	struct proto_blob_reply		br;

	memset(&o, 0, sizeof o);
	pt_bytes(proto_view_open_pack, &o, "\x81\xab" "notebook_id" "\xc0");

	memset(&u, 0, sizeof u);
	u.url = proto_str_make("u");
	u.address = proto_str_make("a");
	u.port = 8080;
	pt_bytes(proto_view_url_pack, &u,
	    "\x83\xa3" "url" "\xa1" "u" "\xa7" "address" "\xa1" "a"
	    "\xa4" "port" "\xcd\x1f\x90");

	memset(&s, 0, sizeof s);
	s.seq = 1ULL << 40;
	s.kernel_state = proto_str_make("idle");
	s.cells.obj = &pt_list;
	pt_bytes(proto_view_state_reply_pack, &s,
	    "\x85\xa3" "seq" "\xcf\x00\x00\x01\x00\x00\x00\x00\x00"
	    "\xac" "kernel_state" "\xa4" "idle" "\xa5" "cells" "\x91\x07"
	    "\xa5" "peers" "\xc0" "\xab" "last_client" "\xc0");

	memset(&br, 0, sizeof br);
	br.sha256 = proto_str_make("ab");
	br.data = proto_str_make("xyz");
	pt_bytes(proto_blob_reply_pack, &br,
	    "\x82\xa6" "sha256" "\xa2" "ab" "\xa4" "data" "\xa3" "xyz");
}

Test(proto_body, introspect_bytes)
{
	struct proto_variables_reply	v;

	memset(&v, 0, sizeof v);
	v.variables.obj = &pt_list;
	v.total = 300;
	v.while_busy = 1;
	v.via = proto_str_make("execute");
	pt_bytes(proto_variables_reply_pack, &v,
	    "\x84\xa9" "variables" "\x91\x07" "\xa5" "total" "\xcd\x01\x2c"
	    "\xaa" "while_busy" "\xc3" "\xa3" "via" "\xa7" "execute");
}

/* Each kind refuses as its field reader does, naming message and key. */
Test(proto_body, refusals)
{
	struct proto_exec_list		l;
	struct proto_exec_id		e;
	struct proto_view_state_reply	s;
	struct pt_buf			b;
	char				err[256];

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_int(&b.pk, "limit", -1);
	cr_assert_eq(proto_exec_list_unpack(pt_body(&b), &l, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "EXEC_LIST: limit is not a non-negative integer");
	cr_assert_eq(l.has_limit, 0);
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_int(&b.pk, "timeout_ms", 5);
	cr_assert_eq(proto_exec_id_unpack(pt_body(&b), "EXEC_CANCEL", &e, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "EXEC_CANCEL: execution_id is missing");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_uint(&b.pk, "seq", 1);
	proto_pack_str(&b.pk, "kernel_state", "idle");
	proto_pack_str(&b.pk, "cells", "no");
	cr_assert_eq(proto_view_state_reply_unpack(pt_body(&b), &s, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "VIEW_STATE_REPLY: cells is not an array");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "limit", "5");
	cr_assert_eq(proto_exec_list_unpack(pt_body(&b), &l, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "EXEC_LIST: limit is not an integer");
	pt_free(&b);
}

/* The kinds added with the agent's bodies (NIL_INT, NIL_UINT, OPT_STR,
 * OPT_DOC, FLAG, ENUM, RANGE, STR_MAX) pack as the hand-written codecs
 * did. */
Test(proto_body, kind_bytes)
{
	struct proto_agent_status	st;
	struct proto_agent_exec_started	es;
	struct proto_view_ready		vr;
	struct proto_variables		v;
	struct proto_room_save		sv;
	struct proto_room_edit_reply	er;

	memset(&sv, 0, sizeof sv);
	pt_bytes(proto_room_save_pack, &sv, "\x80");
	sv.force = 1;
	pt_bytes(proto_room_save_pack, &sv, "\x81\xa5" "force" "\xc3");

	memset(&er, 0, sizeof er);
	er.seq = 1;
	er.cells.obj = &pt_list;
	pt_bytes(proto_room_edit_reply_pack, &er,
	    "\x82\xa3" "seq" "\x01" "\xa5" "cells" "\x91\x07");
	er.undo.obj = &pt_list;
	pt_bytes(proto_room_edit_reply_pack, &er,
	    "\x83\xa3" "seq" "\x01" "\xa5" "cells" "\x91\x07"
	    "\xa4" "undo" "\x91\x07");

	memset(&st, 0, sizeof st);
	st.state = PROTO_AGENT_BUSY;
	pt_bytes(proto_agent_status_pack, &st,
	    "\x81\xa5" "state" "\xa4" "busy");
	st.reason = proto_str_make("r");
	pt_bytes(proto_agent_status_pack, &st,
	    "\x82\xa5" "state" "\xa4" "busy" "\xa6" "reason" "\xa1" "r");
	st.state = (enum proto_agent_state)9;
	st.reason.ptr = NULL;
	pt_bytes(proto_agent_status_pack, &st,
	    "\x81\xa5" "state" "\xa7" "unknown");

	memset(&es, 0, sizeof es);
	es.exec_id = proto_str_make("e");
	es.cell_id = proto_str_make("c");
	pt_bytes(proto_agent_exec_started_pack, &es,
	    "\x83\xa7" "exec_id" "\xa1" "e" "\xa7" "cell_id" "\xa1" "c"
	    "\xaf" "execution_count" "\xc0");
	es.has_execution_count = 1;
	es.execution_count = 3;
	pt_bytes(proto_agent_exec_started_pack, &es,
	    "\x83\xa7" "exec_id" "\xa1" "e" "\xa7" "cell_id" "\xa1" "c"
	    "\xaf" "execution_count" "\x03");

	memset(&vr, 0, sizeof vr);
	vr.port = 8080;
	pt_bytes(proto_view_ready_pack, &vr, "\x81\xa4" "port" "\xcd\x1f\x90");

	memset(&v, 0, sizeof v);
	v.has_max = 1;
	v.max = UINT64_MAX;
	pt_bytes(proto_variables_pack, &v,
	    "\x83\xa6" "filter" "\xc0" "\xa3" "max"
	    "\xcf\xff\xff\xff\xff\xff\xff\xff\xff" "\xaa" "timeout_ms" "\xc0");
}

/* ... and refuse with the hand-written codecs' words. */
Test(proto_body, kind_refusals)
{
	static char			 big[PROTO_INPUT_MAX + 1];
	struct proto_agent_status	 st;
	struct proto_view_ready		 vr;
	struct proto_exec_input		 in;
	struct pt_buf			 b;
	char				 err[256];

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_int(&b.pk, "port", 65536);
	cr_assert_eq(proto_view_ready_unpack(pt_body(&b), &vr, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "VIEW_READY: port is not 1-65535");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_int(&b.pk, "port", 0);
	cr_assert_eq(proto_view_ready_unpack(pt_body(&b), &vr, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "VIEW_READY: port is not 1-65535");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "state", "gone");
	cr_assert_eq(proto_agent_status_unpack(pt_body(&b), &st, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "AGENT_STATUS: state \"gone\" is not one we know");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "state", "dead");
	cr_assert_eq(proto_agent_status_unpack(pt_body(&b), &st, err,
	    sizeof err), 0);
	cr_assert_eq(st.state, PROTO_AGENT_DEAD);
	cr_assert_null(st.reason.ptr);
	pt_free(&b);

	memset(big, 'x', sizeof big);
	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "execution_id", "r1");
	proto_pack_strn(&b.pk, "value", big, sizeof big);
	cr_assert_eq(proto_exec_input_unpack(pt_body(&b), &in, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "EXEC_INPUT: value is over 65536 bytes");
	pt_free(&b);
}

/* proto_map_copy's callback: the old value's size, or -1 when new. */
static void
pt_map_size(msgpack_packer *pk, const msgpack_object *old, void *arg)
{
	cr_assert_str_eq(arg, "arg");
	if (old == NULL)
		msgpack_pack_int(pk, -1);
	else
		msgpack_pack_int(pk, (int)old->via.str.size);
}

Test(proto_body, map_copy)
{
	struct pt_buf		in, out;
	struct proto_map_set	set[5];
	msgpack_object		seven = pt_seven;

	pt_init(&in);
	pt_init(&out);
	/* {"a":1,"bb":"xyz","c":3} */
	msgpack_pack_map(&in.pk, 3);
	proto_pack_int(&in.pk, "a", 1);
	proto_pack_str(&in.pk, "bb", "xyz");
	proto_pack_int(&in.pk, "c", 3);
	memset(set, 0, sizeof set);
	set[0].key = "c";				/* dropped */
	set[1].key = "new";				/* added, by callback */
	set[1].pack = pt_map_size;
	set[1].arg = "arg";
	set[2].key = "a";				/* set in place */
	set[2].packed = "\xa1z";
	set[2].packed_len = 2;
	set[3].key = "gone";				/* dropped, absent */
	set[4].key = "bb";				/* set from the old */
	set[4].pack = pt_map_size;
	set[4].arg = "arg";
	cr_assert_eq(proto_map_copy(&out.pk, pt_body(&in), set, 5, NULL, NULL), 0);
	cr_assert_eq(out.sb.size, sizeof "\x83\xa1" "a\xa1z\xa2" "bb\x03"
	    "\xa3" "new\xff" - 1);
	cr_assert(memcmp(out.sb.data, "\x83\xa1" "a\xa1z\xa2" "bb\x03"
	    "\xa3" "new\xff", out.sb.size) == 0);
	/* Not a map: nothing packed. */
	cr_assert_eq(proto_map_copy(&out.pk, &seven, set, 5, NULL, NULL), -1);
	cr_assert_eq(out.sb.size, 14);
	pt_free(&in);
	pt_free(&out);
}
