/* SPDX-License-Identifier: ISC */
/*
 * test-proto-outputs.c: a cell's outputs kept packed (decision 097):
 * each output's bytes are the ones it came with, the list packs as one
 * array of them, and a display update changes only data and metadata of
 * the outputs with that display_id, keys in their order.
 */

#include "proto-test.h"

/* One packed value read back (owned by b). */
static const msgpack_object *
po_value(struct pt_buf *b)
{
	size_t	off = 0;

	cr_assert_eq(msgpack_unpack_next(&b->u, b->sb.data, b->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	return (&b->u.data);
}

/* {output_type: type, transient: {display_id: did}?, data: {text/plain: t}} */
static void
po_output(struct pt_buf *b, const char *type, const char *did,
    const char *text)
{
	pt_init(b);
	msgpack_pack_map(&b->pk, 2 + (did != NULL));
	proto_pack_str(&b->pk, "output_type", type);
	if (did != NULL) {
		proto_pack_key(&b->pk, "transient");
		msgpack_pack_map(&b->pk, 1);
		proto_pack_str(&b->pk, "display_id", did);
	}
	proto_pack_key(&b->pk, "data");
	msgpack_pack_map(&b->pk, 1);
	proto_pack_str(&b->pk, "text/plain", text);
}

static void
po_packed(const struct proto_outputs *o, const char *want, size_t len)
{
	struct pt_buf	b;

	pt_init(&b);
	proto_outputs_pack(&b.pk, o);
	cr_assert_eq(b.sb.size, len, "%zu bytes, wanted %zu", b.sb.size, len);
	cr_assert(memcmp(b.sb.data, want, len) == 0);
	pt_free(&b);
}

Test(proto_outputs, bytes_as_they_came)
{
	struct proto_outputs	 o, copy;
	struct pt_buf		 a, b, arr;
	msgpack_unpacked	 u;
	const msgpack_object	*v;
	char			*taken;

	proto_outputs_init(&o);
	proto_outputs_init(&copy);
	po_packed(&o, "\x90", 1);
	po_output(&a, "execute_result", NULL, "2");
	po_output(&b, "display_data", "d1", "x");
	cr_assert_eq(proto_outputs_append(&o, po_value(&a)), 0);
	cr_assert_eq(proto_outputs_append_packed(&o, b.sb.data, b.sb.size), 0);
	cr_assert_eq(o.n, 2);
	cr_assert_eq(o.v[0].len, a.sb.size);
	cr_assert(memcmp(o.v[0].data, a.sb.data, a.sb.size) == 0);
	cr_assert_eq(proto_outputs_bytes(&o), a.sb.size + b.sb.size);

	/* The array is its elements' bytes behind one header. */
	pt_init(&arr);
	msgpack_sbuffer_write(&arr.sb, "\x92", 1);
	msgpack_sbuffer_write(&arr.sb, a.sb.data, a.sb.size);
	msgpack_sbuffer_write(&arr.sb, b.sb.data, b.sb.size);
	po_packed(&o, arr.sb.data, arr.sb.size);

	/* Read back from an array, the same list. */
	cr_assert_eq(proto_outputs_unpack(&copy, po_value(&arr)), 0);
	cr_assert(proto_outputs_equal(&o, &copy));
	cr_assert_eq(proto_outputs_unpack(&copy, &a.u.data), -1);
	cr_assert_eq(copy.n, 0);
	cr_assert_eq(proto_outputs_copy(&copy, &o), 0);
	cr_assert(proto_outputs_equal(&o, &copy));

	/* Views. */
	msgpack_unpacked_init(&u);
	v = proto_outputs_get(&o, 1, &u);
	cr_assert_not_null(v);
	cr_assert(proto_obj_streq(proto_get(v, "output_type"),
	    "display_data"));
	cr_assert_null(proto_outputs_get(&o, 2, &u));
	msgpack_unpacked_destroy(&u);

	/* Replace, refuse what is not one value, clear. */
	cr_assert_eq(proto_outputs_set(&o, 0, po_value(&b)), 0);
	cr_assert_eq(o.v[0].len, b.sb.size);
	cr_assert(!proto_outputs_equal(&o, &copy));
	cr_assert_eq(proto_outputs_set(&o, 2, &b.u.data), -1);
	cr_assert_eq(proto_outputs_append_packed(&o, "\x92\x01", 2), -1);
	cr_assert_eq(proto_outputs_append_packed(&o, "\x01\x02", 2), -1);
	cr_assert_eq(proto_outputs_set_packed(&o, 1, "\xc0", 1), 0);
	cr_assert_eq(o.n, 2);

	/* Taken without a copy. */
	taken = malloc(a.sb.size);
	memcpy(taken, a.sb.data, a.sb.size);
	cr_assert_eq(proto_outputs_append_take(&o, taken, a.sb.size), 0);
	cr_assert_eq(o.v[2].data, taken);
	cr_assert_eq(o.n, 3);
	proto_outputs_truncate(&o, 2);
	cr_assert_eq(o.n, 2);
	proto_outputs_clear(&o);
	po_packed(&o, "\x90", 1);
	proto_outputs_free(&o);
	proto_outputs_free(&copy);
	pt_free(&a);
	pt_free(&b);
	pt_free(&arr);
}

Test(proto_outputs, display_update_keeps_key_order)
{
	struct proto_outputs	 o;
	struct pt_buf		 a, b, c, upd, want;

	proto_outputs_init(&o);
	po_output(&a, "display_data", "d1", "old");
	po_output(&b, "display_data", "d2", "other");
	po_output(&c, "stream", NULL, "no id");
	cr_assert_eq(proto_outputs_append(&o, po_value(&a)), 0);
	cr_assert_eq(proto_outputs_append(&o, po_value(&b)), 0);
	cr_assert_eq(proto_outputs_append(&o, po_value(&c)), 0);
	cr_assert_eq(proto_outputs_append(&o, &a.u.data), 0);

	/* data replaced where it was; metadata, absent, added at the end. */
	pt_init(&upd);
	msgpack_pack_map(&upd.pk, 3);
	proto_pack_key(&upd.pk, "metadata");
	msgpack_pack_map(&upd.pk, 0);
	proto_pack_str(&upd.pk, "output_type", "update_display_data");
	proto_pack_key(&upd.pk, "data");
	msgpack_pack_map(&upd.pk, 1);
	proto_pack_str(&upd.pk, "text/plain", "new");
	cr_assert_eq(proto_outputs_update_display(&o, "d1", 2,
	    po_value(&upd)), 2);
	cr_assert_eq(proto_outputs_update_display(&o, "d", 1, &upd.u.data), 0);

	pt_init(&want);
	msgpack_pack_map(&want.pk, 4);
	proto_pack_str(&want.pk, "output_type", "display_data");
	proto_pack_key(&want.pk, "transient");
	msgpack_pack_map(&want.pk, 1);
	proto_pack_str(&want.pk, "display_id", "d1");
	proto_pack_key(&want.pk, "data");
	msgpack_pack_map(&want.pk, 1);
	proto_pack_str(&want.pk, "text/plain", "new");
	proto_pack_key(&want.pk, "metadata");
	msgpack_pack_map(&want.pk, 0);
	cr_assert_eq(o.v[0].len, want.sb.size);
	cr_assert(memcmp(o.v[0].data, want.sb.data, want.sb.size) == 0);
	cr_assert_eq(o.v[3].len, want.sb.size);
	cr_assert(memcmp(o.v[3].data, want.sb.data, want.sb.size) == 0);
	cr_assert_eq(o.v[1].len, b.sb.size);
	cr_assert(memcmp(o.v[1].data, b.sb.data, b.sb.size) == 0);
	cr_assert_eq(o.v[2].len, c.sb.size);
	cr_assert(memcmp(o.v[2].data, c.sb.data, c.sb.size) == 0);
	proto_outputs_free(&o);
	pt_free(&a);
	pt_free(&b);
	pt_free(&c);
	pt_free(&upd);
	pt_free(&want);
}
