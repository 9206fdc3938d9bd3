/* SPDX-License-Identifier: ISC */
/*
 * test-proto-edit.c: the codec of one ROOM_EDIT edit (struct
 * proto_edit): every op round trips, each refusal says what a client has
 * always been told, named "edit N".
 */

#include <stdio.h>

#include "proto-test.h"

static void	pack_ids(msgpack_packer *, const void *);
static void	pack_md(msgpack_packer *, const void *);
static void	pack_ref(msgpack_packer *, const void *);
static void	refuses(struct pt_buf *, const char *);

static void
pack_ids(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 2);
	proto_pack_cstr(pk, arg);
	msgpack_pack_uint64(pk, 3);
}

static void
pack_md(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_map(pk, 1);
	proto_pack_str(pk, "tag", arg);
}

static void
pack_ref(msgpack_packer *pk, const void *arg)
{
	proto_pack_cstr(pk, arg);
}

/* The body in b is refused as edit 4 with exactly want. */
static void
refuses(struct pt_buf *b, const char *want)
{
	struct proto_edit	m;
	char			err[512];

	cr_assert_eq(proto_edit_unpack(pt_body(b), "edit 4", &m, err,
	    sizeof err), -1, "accepted, wanted \"%s\"", want);
	cr_assert_str_eq(err, want);
	pt_free(b);
}

/* Each op, packed from the struct and read back, the same edit. */
Test(proto_edit, every_op_round_trips)
{
	struct proto_edit	 e, z;
	struct pt_buf		 b;
	const msgpack_object	*o;
	char			 err[512];
	int			 op;

	for (op = PROTO_EDIT_INSERT; op <= PROTO_EDIT_RESOLVE; op++) {
		memset(&e, 0, sizeof e);
		e.op = (enum proto_edit_op)op;
		e.cell_id.pack = pack_ref;
		e.cell_id.arg = "c1";
		e.after.pack = pack_ref;
		e.after.arg = "TOP";
		e.cell_ids.pack = pack_ids;
		e.cell_ids.arg = "c2";
		e.cell_type = proto_str_make("markdown");
		e.source = proto_str_make("");
		e.metadata.pack = pack_md;
		e.metadata.arg = "x";
		e.expect_version = proto_str_make("0123abcd");
		e.old_text = proto_str_make("a");
		e.new_text = proto_str_make("b");
		e.take = proto_str_make("disk");
		pt_init(&b);
		proto_edit_pack(&b.pk, &e);
		/* Read once: z borrows from it. */
		o = pt_body(&b);
		cr_assert_eq(proto_edit_unpack(o, "edit 0", &z, err,
		    sizeof err), 0, "%s: %s", proto_edit_op_name(e.op), err);
		cr_assert_eq(z.op, e.op);
		cr_assert(proto_obj_streq(proto_get(o, "op"),
		    proto_edit_op_name(e.op)));
		cr_assert(proto_obj_streq(z.cell_id.obj, "c1"));
		cr_assert(proto_obj_streq(z.after.obj, "TOP"));
		pt_str_eq(z.cell_type, "markdown");
		cr_assert(z.source.ptr != NULL && z.source.len == 0,
		    "an empty source is there");
		cr_assert(proto_obj_streq(proto_get(z.metadata.obj, "tag"),
		    "x"));
		/* Each op reads the fields that are its own. */
		cr_assert_eq(z.expect_version.ptr != NULL,
		    op == PROTO_EDIT_EDIT || op == PROTO_EDIT_DELETE ||
		    op == PROTO_EDIT_REPLACE);
		cr_assert_eq(z.old_text.ptr != NULL, op == PROTO_EDIT_REPLACE);
		cr_assert_eq(z.take.ptr != NULL, op == PROTO_EDIT_RESOLVE);
		cr_assert_eq(z.cell_ids.obj != NULL, op == PROTO_EDIT_MOVE ||
		    op == PROTO_EDIT_CLEAR_OUTPUTS);
		pt_free(&b);
	}
	cr_assert_str_eq(proto_edit_op_name(PROTO_EDIT_NOTEBOOK_METADATA),
	    "notebook_metadata");
}

/* Only what is there is packed: no nil for an absent field. */
Test(proto_edit, packs_only_what_is_there)
{
	struct proto_edit	e;
	struct pt_buf		b;

	memset(&e, 0, sizeof e);
	e.op = PROTO_EDIT_DELETE;
	e.cell_id.pack = pack_ref;
	e.cell_id.arg = "c1";
	pt_init(&b);
	proto_edit_pack(&b.pk, &e);
	cr_assert_eq(pt_body(&b)->via.map.size, 2);
	pt_free(&b);
}

Test(proto_edit, refusals_say_what_they_said)
{
	struct proto_edit	m;
	struct pt_buf		b;
	char			err[512];

	/* A batch's item that is no map (here a map's value). */
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "e", "insert");
	cr_assert_eq(proto_edit_unpack(proto_get(pt_body(&b), "e"), "edit 4",
	    &m, err, sizeof err), -1);
	cr_assert_str_eq(err, "edit 4: an edit is a map");
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "source", "x");
	refuses(&b, "edit 4: op is missing");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_int(&b.pk, "op", 3);
	refuses(&b, "edit 4: op is missing");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "op", "explode");
	refuses(&b, "edit 4: unknown op \"explode\" (insert, edit, delete, "
	    "replace, move, clear_outputs or notebook_metadata)");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "replace");
	proto_pack_str(&b.pk, "cell_id", "c1");
	refuses(&b, "edit 4: replace needs old_text");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "notebook_metadata");
	proto_pack_nil(&b.pk, "metadata");
	refuses(&b, "edit 4: notebook_metadata needs metadata");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "op", "resolve");
	refuses(&b, "edit 4: resolve needs cell_id");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "insert");
	proto_pack_int(&b.pk, "cell_type", 1);
	refuses(&b, "edit 4: cell_type is not a string");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "insert");
	proto_pack_bool(&b.pk, "source", 1);
	refuses(&b, "edit 4: source is not a string");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "insert");
	proto_pack_str(&b.pk, "metadata", "{}");
	refuses(&b, "edit 4: metadata is not a map");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_str(&b.pk, "op", "edit");
	proto_pack_str(&b.pk, "cell_id", "c1");
	proto_pack_int(&b.pk, "expect_version", 7);
	refuses(&b, "edit 4: expect_version is not a string");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 4);
	proto_pack_str(&b.pk, "op", "replace");
	proto_pack_str(&b.pk, "cell_id", "c1");
	proto_pack_str(&b.pk, "old_text", "a");
	proto_pack_int(&b.pk, "new_text", 2);
	refuses(&b, "edit 4: old_text and new_text must be strings");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "move");
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 0);
	refuses(&b, "edit 4: cell_ids must be a non-empty list");

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "clear_outputs");
	proto_pack_str(&b.pk, "cell_ids", "c1");
	refuses(&b, "edit 4: cell_ids must be a list");
}

/* An insert ignores what is not its own; nil is absent. */
Test(proto_edit, others_fields_and_nil)
{
	struct proto_edit	z;
	struct pt_buf		b;
	char			err[512];

	pt_init(&b);
	msgpack_pack_map(&b.pk, 4);
	proto_pack_str(&b.pk, "op", "insert");
	proto_pack_int(&b.pk, "expect_version", 7);
	proto_pack_nil(&b.pk, "after");
	proto_pack_nil(&b.pk, "source");
	cr_assert_eq(proto_edit_unpack(pt_body(&b), "edit 0", &z, err,
	    sizeof err), 0, "%s", err);
	cr_assert_null(z.after.obj);
	cr_assert_null(z.source.ptr);
	cr_assert_null(z.expect_version.ptr);
	pt_free(&b);

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "clear_outputs");
	proto_pack_nil(&b.pk, "cell_ids");
	cr_assert_eq(proto_edit_unpack(pt_body(&b), "edit 0", &z, err,
	    sizeof err), 0, "%s", err);
	cr_assert_null(z.cell_ids.obj, "nil: every code cell");
	pt_free(&b);
}

/* A batch packed from structs; an op found by its name. */
Test(proto_edit, batch_and_names)
{
	struct proto_edit	 v[2], z;
	struct proto_edits	 l = { v, 2 };
	enum proto_edit_op	 op;
	struct pt_buf		 b;
	const msgpack_object	*edits;
	char			 err[512];
	uint32_t		 i;

	memset(v, 0, sizeof v);
	v[0].op = PROTO_EDIT_INSERT;
	v[0].source = proto_str_make("x = 1");
	v[1].op = PROTO_EDIT_CLEAR_OUTPUTS;
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_key(&b.pk, "edits");
	proto_edits_pack(&b.pk, &l);
	edits = proto_get_array(pt_body(&b), "edits");
	for (i = 0; i < 2; i++) {
		cr_assert_eq(proto_edit_unpack(&edits->via.array.ptr[i],
		    "edit 0", &z, err, sizeof err), 0, "%s", err);
		cr_assert_eq(z.op, v[i].op);
	}
	pt_free(&b);
	cr_assert_eq(proto_edit_op_find("move", 4, &op), 0);
	cr_assert_eq(op, PROTO_EDIT_MOVE);
	cr_assert_eq(proto_edit_op_find("moves", 5, &op), -1);
	cr_assert_eq(proto_edit_op_find("mov", 3, &op), -1);
}

/*
 * A journal's edit as the daemon packs it: references are the ids it
 * holds as C text (proto_doc_cstr, proto_doc_cstrs), read back by the
 * same codec a client's edit is.
 */
Test(proto_edit, ids_as_text)
{
	static const char *const ids[] = { "c1", "c2", "c3" };
	struct proto_cstrs	 l = { ids, 3 };
	struct proto_edit	 e, z;
	struct pt_buf		 b;
	const msgpack_object	*o;
	char			 err[512];
	uint32_t		 i;

	memset(&e, 0, sizeof e);
	e.op = PROTO_EDIT_MOVE;
	e.after = proto_doc_cstr("TOP");
	e.cell_ids = proto_doc_cstrs(&l);
	pt_init(&b);
	proto_edit_pack(&b.pk, &e);
	o = pt_body(&b);
	cr_assert_eq(o->via.map.size, 3);
	cr_assert_eq(proto_edit_unpack(o, "edit 0", &z, err, sizeof err), 0,
	    "%s", err);
	cr_assert_eq(z.op, PROTO_EDIT_MOVE);
	cr_assert(proto_obj_streq(z.after.obj, "TOP"));
	cr_assert_eq(z.cell_ids.obj->via.array.size, 3);
	for (i = 0; i < 3; i++)
		cr_assert(proto_obj_streq(&z.cell_ids.obj->via.array.ptr[i],
		    ids[i]));
	pt_free(&b);

	/* An insert names the id it got; none listed is an empty list. */
	memset(&e, 0, sizeof e);
	l.n = 0;
	e.op = PROTO_EDIT_INSERT;
	e.cell_id = proto_doc_cstr("new1");
	e.after = proto_doc_cstr("c1");
	e.source = proto_str_make("");
	e.cell_ids = proto_doc_cstrs(&l);
	pt_init(&b);
	proto_edit_pack(&b.pk, &e);
	o = pt_body(&b);
	cr_assert_eq(proto_edit_unpack(o, "edit 0", &z, err, sizeof err), 0,
	    "%s", err);
	cr_assert(proto_obj_streq(z.cell_id.obj, "new1"));
	cr_assert(proto_obj_streq(z.after.obj, "c1"));
	cr_assert_eq(proto_get(o, "cell_ids")->via.array.size, 0);
	pt_free(&b);
}

/* A batch's size as its limit counts it: edits and the cells listed. */
Test(proto_edit, batch_size)
{
	struct pt_buf		 b;
	const msgpack_object	*o;

	pt_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_key(&b.pk, "edits");
	msgpack_pack_array(&b.pk, 3);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "move");
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 2);
	proto_pack_cstr(&b.pk, "c1");
	msgpack_pack_uint64(&b.pk, 4);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "op", "clear_outputs");
	msgpack_pack_nil(&b.pk);	/* no edit: counted, read later */
	proto_pack_str(&b.pk, "other", "x");
	o = pt_body(&b);
	cr_assert_eq(proto_edits_size(proto_get(o, "edits")), 5);
	cr_assert_eq(proto_edits_size(proto_get(o, "other")), 0);
	cr_assert_eq(proto_edits_size(NULL), 0);
	pt_free(&b);
}
