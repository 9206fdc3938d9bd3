/* SPDX-License-Identifier: ISC */
/*
 * test-proto-room.c: codecs of ROOM_* and BLOB_*: round trips, and every
 * unpacker refusing a mistyped field by name.
 */

#include "proto-test.h"

static void	pack_cells(msgpack_packer *, const void *);
static void	pack_map(msgpack_packer *, const void *);

static void
pack_map(msgpack_packer *pk, const void *arg)
{
	(void)arg;
	msgpack_pack_map(pk, 1);
	proto_pack_bool(pk, "list", 1);
}

static void
pack_cells(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 1);
	proto_pack_str(pk, "cell_id", arg);
}

static void
pack_kinds(msgpack_packer *pk, const void *arg)
{
	(void)arg;
	msgpack_pack_array(pk, 3);
	proto_pack_cstr(pk, "cells");
	proto_pack_cstr(pk, "saved");
	proto_pack_cstr(pk, "from-the-future");
}

Test(proto_room, create_open_round_trip)
{
	struct proto_room_create	c, cz;
	struct proto_room_open		o, oz;
	struct pt_buf			b;
	char				err[256];

	memset(&c, 0, sizeof c);
	c.path = proto_str_make("/tmp/a.ipynb");
	pt_init(&b);
	proto_room_create_pack(&b.pk, &c);
	cr_assert_eq(proto_room_create_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(cz.path, "/tmp/a.ipynb");
	cr_assert_null(cz.kernel.ptr);
	pt_refuses_all(proto_room_create_unpack, struct proto_room_create,
	    pt_body(&b), "ROOM_CREATE", "path", "kernel");
	pt_free(&b);

	memset(&o, 0, sizeof o);
	o.notebook_id = proto_str_make("abc");
	pt_init(&b);
	proto_room_open_pack(&b.pk, &o);
	cr_assert_eq(proto_room_open_unpack(pt_body(&b), &oz, err,
	    sizeof err), 0);
	pt_str_eq(oz.notebook_id, "abc");
	cr_assert_null(oz.path.ptr);
	pt_refuses_all(proto_room_open_unpack, struct proto_room_open,
	    pt_body(&b), "ROOM_OPEN", "path", "notebook_id");
	pt_free(&b);
}

Test(proto_room, path_with_nul_refused)
{
	struct proto_room_save	z;
	struct pt_buf		b;
	char			err[256];

	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_strn(&b.pk, "path", "a\0b", 3);
	cr_assert_eq(proto_room_save_unpack(pt_body(&b), &z, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "ROOM_SAVE: path holds a NUL");
	pt_free(&b);
}

Test(proto_room, joined_content_round_trip)
{
	struct proto_room_joined	j, z;
	struct pt_buf			b;
	char				err[256];

	memset(&j, 0, sizeof j);
	j.notebook_id = proto_str_make("nb1");
	j.dirty = 1;
	j.seq = 9;
	j.nbformat = 4;
	j.nbformat_minor = 5;
	j.kernel_name = proto_str_make("python3");
	j.kernel_state = proto_str_make("idle");
	j.cells.pack = pack_cells;
	j.cells.arg = "c1";
	pt_init(&b);
	proto_room_joined_pack(&b.pk, &j);
	cr_assert_eq(proto_room_joined_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	pt_str_eq(z.notebook_id, "nb1");
	cr_assert_null(z.path.ptr);
	cr_assert(z.dirty && z.seq == 9 && z.nbformat == 4 &&
	    z.nbformat_minor == 5);
	pt_str_eq(z.kernel_name, "python3");
	pt_str_eq(z.kernel_state, "idle");
	cr_assert_null(z.metadata.obj);
	cr_assert_eq(z.cells.obj->via.array.size, 1);
	pt_refuses_all(proto_room_joined_unpack, struct proto_room_joined,
	    pt_body(&b), "ROOM_JOINED", "notebook_id", "path", "dirty", "seq",
	    "nbformat", "nbformat_minor", "kernel", "metadata", "warnings",
	    "cells");
	pt_free(&b);

	/* ROOM_CONTENT carries the metadata copied from a received one. */
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "k", "v");
	j.metadata.obj = pt_body(&b);
	{
		struct pt_buf	c;

		pt_init(&c);
		proto_room_content_pack(&c.pk, &j);
		cr_assert_eq(proto_room_content_unpack(pt_body(&c), &z, err,
		    sizeof err), 0, "%s", err);
		cr_assert_not_null(z.metadata.obj);
		cr_assert(proto_obj_streq(proto_get(z.metadata.obj, "k"),
		    "v"));
		pt_free(&c);
	}
	pt_free(&b);
}

Test(proto_room, list_edit_save_round_trip)
{
	struct proto_room_list_reply	l, lz;
	struct proto_room_edit		e, ez;
	struct proto_room_edit_reply	r, rz;
	struct proto_room_save		s, sz;
	struct proto_room_save_reply	sr, srz;
	struct pt_buf			b;
	char				err[256];

	memset(&l, 0, sizeof l);
	l.rooms.pack = pack_cells;
	l.rooms.arg = "x";
	l.warnings.pack = pack_cells;
	l.warnings.arg = "y";
	pt_init(&b);
	proto_room_list_reply_pack(&b.pk, &l);
	cr_assert_eq(proto_room_list_reply_unpack(pt_body(&b), &lz, err,
	    sizeof err), 0);
	cr_assert_eq(lz.rooms.obj->via.array.size, 1);
	pt_refuses_all(proto_room_list_reply_unpack,
	    struct proto_room_list_reply, pt_body(&b), "ROOM_LIST_REPLY",
	    "rooms", "warnings");
	pt_free(&b);

	memset(&e, 0, sizeof e);
	e.edits.pack = pack_cells;
	e.edits.arg = "z";
	e.has_if_seq = 1;
	e.if_seq = 12;
	pt_init(&b);
	proto_room_edit_pack(&b.pk, &e);
	cr_assert_eq(proto_room_edit_unpack(pt_body(&b), &ez, err,
	    sizeof err), 0);
	cr_assert(ez.has_if_seq && ez.if_seq == 12);
	cr_assert_eq(ez.edits.obj->type, MSGPACK_OBJECT_ARRAY);
	pt_refuses_all(proto_room_edit_unpack, struct proto_room_edit,
	    pt_body(&b), "ROOM_EDIT", "edits", "if_seq");
	pt_free(&b);

	/* An undo (decision 074): no edits, whose it is. */
	memset(&e, 0, sizeof e);
	e.undo.pack = pack_map;
	e.session = proto_str_make("0badcafe");
	e.client_name = proto_str_make("agent");
	pt_init(&b);
	proto_room_edit_pack(&b.pk, &e);
	cr_assert_eq(proto_room_edit_unpack(pt_body(&b), &ez, err,
	    sizeof err), 0, "%s", err);
	cr_assert_null(ez.edits.obj);
	cr_assert_eq(ez.undo.obj->type, MSGPACK_OBJECT_MAP);
	cr_assert(proto_str_eq(&ez.session, "0badcafe"));
	cr_assert(proto_str_eq(&ez.client_name, "agent"));
	pt_refuses_all(proto_room_edit_unpack, struct proto_room_edit,
	    pt_body(&b), "ROOM_EDIT", "undo", "session", "client_name");
	pt_free(&b);
	/* Neither edits nor undo. */
	pt_init(&b);
	msgpack_pack_map(&b.pk, 0);
	cr_assert_neq(proto_room_edit_unpack(pt_body(&b), &ez, err,
	    sizeof err), 0);
	pt_free(&b);

	memset(&r, 0, sizeof r);
	r.seq = 3;
	r.cells.pack = pack_cells;
	r.cells.arg = "c";
	pt_init(&b);
	proto_room_edit_reply_pack(&b.pk, &r);
	cr_assert_eq(proto_room_edit_reply_unpack(pt_body(&b), &rz, err,
	    sizeof err), 0);
	cr_assert_eq(rz.seq, 3);
	pt_refuses_all(proto_room_edit_reply_unpack,
	    struct proto_room_edit_reply, pt_body(&b), "ROOM_EDIT_REPLY",
	    "seq", "cells");
	pt_free(&b);
	r.undo.pack = pack_map;
	pt_init(&b);
	proto_room_edit_reply_pack(&b.pk, &r);
	cr_assert_eq(proto_room_edit_reply_unpack(pt_body(&b), &rz, err,
	    sizeof err), 0);
	cr_assert_eq(rz.undo.obj->type, MSGPACK_OBJECT_MAP);
	pt_refuses_all(proto_room_edit_reply_unpack,
	    struct proto_room_edit_reply, pt_body(&b), "ROOM_EDIT_REPLY",
	    "undo");
	pt_free(&b);

	memset(&s, 0, sizeof s);
	s.path = proto_str_make("b.ipynb");
	s.force = 1;
	pt_init(&b);
	proto_room_save_pack(&b.pk, &s);
	cr_assert_eq(proto_room_save_unpack(pt_body(&b), &sz, err,
	    sizeof err), 0);
	pt_str_eq(sz.path, "b.ipynb");
	cr_assert(sz.force);
	pt_refuses_all(proto_room_save_unpack, struct proto_room_save,
	    pt_body(&b), "ROOM_SAVE", "path", "force");
	pt_free(&b);

	sr.path = proto_str_make("/x/b.ipynb");
	sr.seq = 4;
	pt_init(&b);
	proto_room_save_reply_pack(&b.pk, &sr);
	cr_assert_eq(proto_room_save_reply_unpack(pt_body(&b), &srz, err,
	    sizeof err), 0);
	pt_str_eq(srz.path, "/x/b.ipynb");
	cr_assert_eq(srz.seq, 4);
	pt_refuses_all(proto_room_save_reply_unpack,
	    struct proto_room_save_reply, pt_body(&b), "ROOM_SAVE_REPLY",
	    "path", "seq");
	pt_free(&b);
}

Test(proto_room, change_details)
{
	struct proto_change_detail	d, dz;
	struct proto_room_changed	c, cz;
	struct pt_buf			b;
	char				err[256];

	memset(&d, 0, sizeof d);
	d.how = PROTO_CHANGE_OUTPUTS;
	d.cell_id = proto_str_make("abc");
	d.has_outputs = 1;
	d.outputs = 2;
	d.line = proto_str_make("step 2");
	pt_init(&b);
	proto_change_detail_pack(&b.pk, &d);
	cr_assert_eq(proto_change_detail_unpack(pt_body(&b), &dz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(dz.how, PROTO_CHANGE_OUTPUTS);
	cr_assert(dz.has_outputs && dz.outputs == 2 && !dz.has_index);
	pt_str_eq(dz.cell_id, "abc");
	pt_str_eq(dz.line, "step 2");
	cr_assert_null(dz.from.ptr);
	pt_refuses_all(proto_change_detail_unpack, struct proto_change_detail,
	    pt_body(&b), "change detail", "how", "cell_id", "index",
	    "outputs", "line", "from", "to");
	pt_free(&b);

	/* A how this end does not know is refused, by name. */
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "how", "teleported");
	cr_assert_eq(proto_change_detail_unpack(pt_body(&b), &dz, err,
	    sizeof err), -1);
	cr_assert(strstr(err, "teleported") != NULL, "%s", err);
	pt_free(&b);

	cr_assert_str_eq(proto_change_how_name(PROTO_CHANGE_KERNEL),
	    "kernel");
	cr_assert_eq(proto_change_kind_parse("saved", 5), PROTO_KIND_SAVED);
	cr_assert_eq(proto_change_kind_parse("nope", 4), 0);
	cr_assert_str_eq(proto_change_kind_name(PROTO_KIND_RELOADED),
	    "reloaded");
	cr_assert_null(proto_change_kind_name(PROTO_KIND_ALL + 1));

	/* ROOM_CHANGED carries them; its kinds read as bits. */
	memset(&c, 0, sizeof c);
	c.notebook_id = proto_str_make("nb");
	c.seq = 3;
	c.kinds.pack = pack_kinds;
	c.cell_ids.pack = c.execution_ids.pack = c.details.pack = pack_cells;
	c.cell_ids.arg = c.execution_ids.arg = c.details.arg = "k";
	c.details_truncated = 1;
	c.client = proto_str_make("claude-code");
	c.session = proto_str_make("0a1b2c3d");
	pt_init(&b);
	proto_room_changed_pack(&b.pk, &c);
	cr_assert_eq(proto_room_changed_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_not_null(cz.details.obj);
	cr_assert(cz.details_truncated);
	pt_str_eq(cz.client, "claude-code");
	pt_str_eq(cz.session, "0a1b2c3d");
	cr_assert_eq(proto_room_change_kinds(&cz),
	    PROTO_KIND_CELLS | PROTO_KIND_SAVED);
	pt_refuses_all(proto_room_changed_unpack, struct proto_room_changed,
	    pt_body(&b), "ROOM_CHANGED", "details", "details_truncated",
	    "client", "session");
	cr_assert_eq(proto_room_change_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	pt_free(&b);
}

Test(proto_room, changes_blob_round_trip)
{
	struct proto_room_changed	c, cz;
	struct proto_room_changes	q, qz;
	struct proto_room_changes_reply	r, rz;
	struct proto_blob_get		g, gz;
	struct proto_blob_reply		br, brz;
	struct pt_buf			b;
	char				err[256];

	memset(&c, 0, sizeof c);
	c.notebook_id = proto_str_make("nb");
	c.seq = 5;
	c.kinds.pack = c.cell_ids.pack = c.execution_ids.pack = pack_cells;
	c.kinds.arg = c.cell_ids.arg = c.execution_ids.arg = "k";
	pt_init(&b);
	proto_room_changed_pack(&b.pk, &c);
	cr_assert_eq(proto_room_changed_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0);
	cr_assert_eq(cz.seq, 5);
	pt_str_eq(cz.notebook_id, "nb");
	pt_refuses_all(proto_room_changed_unpack, struct proto_room_changed,
	    pt_body(&b), "ROOM_CHANGED", "seq", "kinds", "cell_ids",
	    "execution_ids", "notebook_id");
	pt_free(&b);

	q.after = 77;
	pt_init(&b);
	proto_room_changes_pack(&b.pk, &q);
	cr_assert_eq(proto_room_changes_unpack(pt_body(&b), &qz, err,
	    sizeof err), 0);
	cr_assert_eq(qz.after, 77);
	pt_refuses(proto_room_changes_unpack, struct proto_room_changes,
	    pt_body(&b), "ROOM_CHANGES", "after");
	pt_free(&b);

	memset(&r, 0, sizeof r);
	r.seq = 8;
	r.resync = 1;
	r.changes.pack = pack_cells;
	r.changes.arg = "q";
	pt_init(&b);
	proto_room_changes_reply_pack(&b.pk, &r);
	cr_assert_eq(proto_room_changes_reply_unpack(pt_body(&b), &rz, err,
	    sizeof err), 0);
	cr_assert(rz.seq == 8 && rz.resync);
	pt_refuses_all(proto_room_changes_reply_unpack,
	    struct proto_room_changes_reply, pt_body(&b),
	    "ROOM_CHANGES_REPLY", "seq", "resync", "changes");
	pt_free(&b);

	g.sha256 = proto_str_make("ab");
	pt_init(&b);
	proto_blob_get_pack(&b.pk, &g);
	cr_assert_eq(proto_blob_get_unpack(pt_body(&b), &gz, err,
	    sizeof err), 0);
	pt_str_eq(gz.sha256, "ab");
	pt_refuses(proto_blob_get_unpack, struct proto_blob_get, pt_body(&b),
	    "BLOB_GET", "sha256");
	pt_free(&b);

	br.sha256 = proto_str_make("ab");
	br.data.ptr = "x\0y";
	br.data.len = 3;
	pt_init(&b);
	proto_blob_reply_pack(&b.pk, &br);
	cr_assert_eq(proto_blob_reply_unpack(pt_body(&b), &brz, err,
	    sizeof err), 0);
	cr_assert(brz.data.len == 3 && memcmp(brz.data.ptr, "x\0y", 3) == 0);
	pt_refuses_all(proto_blob_reply_unpack, struct proto_blob_reply,
	    pt_body(&b), "BLOB_REPLY", "sha256", "data");
	pt_free(&b);
}

static void
pack_content(msgpack_packer *pk, const void *arg)
{
	struct proto_room_joined	j;

	memset(&j, 0, sizeof j);
	j.notebook_id = proto_str_make("nb");
	j.seq = 9;
	j.cells.pack = pack_cells;
	j.cells.arg = arg;
	proto_room_content_pack(pk, &j);
}

/* The hash of runs (docs/decisions/041): FNV-1a 64, folded a word. */
Test(proto_room, run_hash)
{
	/* FNV-1a 64's published values. */
	cr_assert_eq(proto_fnv64(PROTO_FNV64_INIT, "", 0),
	    0xcbf29ce484222325ULL);
	cr_assert_eq(proto_fnv64(PROTO_FNV64_INIT, "a", 1),
	    0xaf63dc4c8601ec8cULL);
	cr_assert_eq(proto_fnv64(PROTO_FNV64_INIT, "foobar", 6),
	    0x85944171f73967e8ULL);
	cr_assert_eq(proto_fnv64(proto_fnv64(PROTO_FNV64_INIT, "foo", 3),
	    "bar", 3), 0x85944171f73967e8ULL, "in pieces as at once");
	cr_assert_eq(proto_run_fold(PROTO_FNV64_INIT, 1),
	    (0xcbf29ce484222325ULL ^ 1) * 0x100000001b3ULL);
	cr_assert_neq(proto_run_fold(proto_run_fold(PROTO_FNV64_INIT, 1), 2),
	    proto_run_fold(proto_run_fold(PROTO_FNV64_INIT, 2), 1),
	    "the order of cells counts");
}

/* A change wait's ROOM_WAIT, and the ROOM_CHANGED_CONTENT it brings. */
Test(proto_room, wait_round_trip)
{
	struct proto_room_wait			 w, wz;
	struct proto_room_changed_content	 c, cz;
	struct proto_room_joined		 j;
	struct pt_buf				 b;
	char					 err[256];

	memset(&w, 0, sizeof w);
	w.kinds = PROTO_KIND_CELLS | PROTO_KIND_KERNEL;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.kinds, PROTO_KIND_CELLS | PROTO_KIND_KERNEL);
	cr_assert_eq(wz.has_have, 0);
	pt_refuses(proto_room_wait_unpack, struct proto_room_wait,
	    pt_body(&b), "ROOM_WAIT", "kinds");
	pt_free(&b);

	/* The content held (docs/decisions/036), seq 0 included. */
	w.has_have = 1;
	w.have = 0;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.has_have, 1);
	cr_assert_eq(wz.have, 0);
	pt_free(&b);
	w.have = 41;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.has_have, 1);
	cr_assert_eq(wz.have, 41);
	pt_refuses(proto_room_wait_unpack, struct proto_room_wait,
	    pt_body(&b), "ROOM_WAIT", "have");
	pt_free(&b);
	w.has_have = 0;

	/* Standing (docs/decisions/040): absent is not. */
	cr_assert_eq(wz.standing, 0);
	w.standing = 1;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.standing, 1);
	cr_assert_eq(wz.kinds, PROTO_KIND_CELLS | PROTO_KIND_KERNEL);
	pt_refuses(proto_room_wait_unpack, struct proto_room_wait,
	    pt_body(&b), "ROOM_WAIT", "standing");
	pt_free(&b);
	w.standing = 0;

	/* Runs (docs/decisions/041): absent is not. */
	cr_assert_eq(wz.runs, 0);
	w.runs = 1;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.runs, 1);
	cr_assert_eq(wz.standing, 0);
	pt_refuses(proto_room_wait_unpack, struct proto_room_wait,
	    pt_body(&b), "ROOM_WAIT", "runs");
	pt_free(&b);
	w.runs = 0;

	/* None: the wait is over; a kind of a newer end is left out. */
	w.kinds = 0;
	pt_init(&b);
	proto_room_wait_pack(&b.pk, &w);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.kinds, 0);
	pt_free(&b);
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_key(&b.pk, "kinds");
	pack_kinds(&b.pk, NULL);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(wz.kinds, PROTO_KIND_CELLS | PROTO_KIND_SAVED);
	pt_free(&b);
	pt_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_key(&b.pk, "kinds");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_int(&b.pk, 3);
	cr_assert_eq(proto_room_wait_unpack(pt_body(&b), &wz, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "ROOM_WAIT: kinds[0] is not a string");
	pt_free(&b);

	memset(&c, 0, sizeof c);
	c.change.notebook_id = proto_str_make("nb");
	c.change.seq = 9;
	c.change.kinds.pack = pack_kinds;
	c.change.cell_ids.pack = c.change.execution_ids.pack =
	    c.change.details.pack = pack_cells;
	c.change.cell_ids.arg = c.change.execution_ids.arg =
	    c.change.details.arg = "k";
	c.content.pack = pack_content;
	c.content.arg = "k";
	pt_init(&b);
	proto_room_changed_content_pack(&b.pk, &c);
	cr_assert_eq(proto_room_changed_content_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(cz.change.seq, 9);
	pt_str_eq(cz.change.notebook_id, "nb");
	cr_assert_eq(proto_room_change_kinds(&cz.change),
	    PROTO_KIND_CELLS | PROTO_KIND_SAVED);
	cr_assert_not_null(cz.change.details.obj);
	/* The content reads as a ROOM_CONTENT. */
	cr_assert_eq(proto_room_content_unpack(cz.content.obj, &j, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(j.seq, 9);
	cr_assert_eq(j.cells.obj->via.array.size, 1);
	cr_assert_eq(cz.has_base, 0);
	pt_refuses_all(proto_room_changed_content_unpack,
	    struct proto_room_changed_content, pt_body(&b),
	    "ROOM_CHANGED_CONTENT", "seq", "kinds", "cell_ids",
	    "execution_ids", "details", "notebook_id", "content");
	pt_free(&b);
	/* By reference to the content at seq 8. */
	c.has_base = 1;
	c.base = 8;
	pt_init(&b);
	proto_room_changed_content_pack(&b.pk, &c);
	cr_assert_eq(proto_room_changed_content_unpack(pt_body(&b), &cz, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(cz.has_base, 1);
	cr_assert_eq(cz.base, 8);
	cr_assert_eq(cz.change.seq, 9);
	pt_refuses(proto_room_changed_content_unpack,
	    struct proto_room_changed_content, pt_body(&b),
	    "ROOM_CHANGED_CONTENT", "base");
	pt_free(&b);
	c.has_base = 0;
	/* Without the content (nil) it is not one. */
	memset(&c.content, 0, sizeof c.content);
	pt_init(&b);
	proto_room_changed_content_pack(&b.pk, &c);
	cr_assert_eq(proto_room_changed_content_unpack(pt_body(&b), &cz, err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "ROOM_CHANGED_CONTENT: content is missing");
	pt_free(&b);
}
