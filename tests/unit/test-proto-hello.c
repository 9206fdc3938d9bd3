/* SPDX-License-Identifier: ISC */
/*
 * test-proto-hello.c: the handshake messages.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

static void	unpack_into(msgpack_sbuffer *, msgpack_unpacked *);

static void
unpack_into(msgpack_sbuffer *sb, msgpack_unpacked *u)
{
	size_t	off = 0;

	msgpack_unpacked_init(u);
	cr_assert_eq(msgpack_unpack_next(u, sb->data, sb->size, &off),
	    MSGPACK_UNPACK_SUCCESS);
}

Test(proto_hello, round_trip_and_check)
{
	struct proto_hello	a = { .version = PROTO_VERSION, .kind = "worker",
	    .label = "test", .pid = 123 };
	struct proto_hello	b;
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	msgpack_unpacked	u;
	char			err[128];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	proto_hello_pack(&pk, &a);
	unpack_into(&sb, &u);
	cr_assert_eq(proto_hello_unpack(&u.data, &b, err, sizeof err), 0);
	cr_assert_eq(b.version, PROTO_VERSION);
	cr_assert_str_eq(b.kind, "worker");
	cr_assert_str_eq(b.label, "test");
	cr_assert_eq(b.pid, 123);
	cr_assert_eq(proto_hello_check(&b, err, sizeof err), 0);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

Test(proto_hello, version_mismatch_is_reported)
{
	struct proto_hello	h = { .version = PROTO_VERSION + 1,
	    .kind = "worker", .pid = 1 };
	char			err[128];

	cr_assert_eq(proto_hello_check(&h, err, sizeof err), -1);
	cr_assert(strstr(err, "version mismatch") != NULL, "err: %s", err);
}

Test(proto_hello, unknown_kind_refused)
{
	struct proto_hello	h = { .version = PROTO_VERSION,
	    .kind = "intruder", .pid = 1 };
	char			err[128];

	cr_assert_eq(proto_hello_check(&h, err, sizeof err), -1);
	cr_assert(strstr(err, "intruder") != NULL);
}

Test(proto_hello, missing_fields_refused)
{
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	msgpack_unpacked	u;
	struct proto_hello	h;
	char			err[128];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 1);
	proto_pack_str(&pk, "kind", "worker");
	unpack_into(&sb, &u);
	cr_assert_eq(proto_hello_unpack(&u.data, &h, err, sizeof err), -1);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);

	/* A kind longer than the field is refused, not truncated. */
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 2);
	proto_pack_int(&pk, "version", PROTO_VERSION);
	proto_pack_str(&pk, "kind", "workerworkerworkerworker");
	unpack_into(&sb, &u);
	cr_assert_eq(proto_hello_unpack(&u.data, &h, err, sizeof err), -1);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

Test(proto_hello, ok_carries_incarnation)
{
	struct proto_incarnation	a = { 4242, 1700000000123456LL,
	    "0.1.0" }, b;
	msgpack_sbuffer			sb;
	msgpack_packer			pk;
	msgpack_unpacked		u;
	char				err[128];
	int64_t				v;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	proto_hello_ok_pack(&pk, &a);
	unpack_into(&sb, &u);
	cr_assert_eq(proto_hello_ok_unpack(&u.data, &b, err, sizeof err), 0);
	cr_assert_eq(b.pid, 4242);
	cr_assert_eq(b.started_at, 1700000000123456LL);
	cr_assert_str_eq(b.version, "0.1.0");
	cr_assert_eq(proto_get_int(&u.data, "version", &v), 0);
	cr_assert_eq(v, PROTO_VERSION);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

Test(proto_hello, mismatch_message_names_both_versions)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;
	const char		*m;
	size_t			 len;
	char			 msg[128];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	proto_mismatch_pack(&pk, 99);
	unpack_into(&sb, &u);
	m = proto_get_str(&u.data, "message", &len);
	cr_assert_not_null(m);
	snprintf(msg, sizeof msg, "%.*s", (int)len, m);
	cr_assert(strstr(msg, "peer 99") != NULL, "msg: %s", msg);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}
