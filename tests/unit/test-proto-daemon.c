/* SPDX-License-Identifier: ISC */
/*
 * test-proto-daemon.c: codecs of ERROR and DAEMON_STATUS_REPLY.
 */

#include "proto-test.h"
static void	pack_warnings(msgpack_packer *, const void *);


Test(proto_daemon, error_round_trip)
{
	struct proto_error	a, z;
	struct pt_buf		b;
	char			err[256];

	memset(&a, 0, sizeof a);
	a.code = proto_str_make("invalid_argument");
	a.message = proto_str_make("the file is empty");
	a.reason = proto_str_make("too_large");
	a.has_bytes = a.has_cap = a.has_index = 1;
	a.bytes = 70000000;
	a.cap = 67108864;
	a.index = 3;
	pt_init(&b);
	proto_error_pack(&b.pk, &a);
	cr_assert_eq(proto_error_unpack(pt_body(&b), &z, err, sizeof err), 0,
	    "%s", err);
	pt_str_eq(z.code, "invalid_argument");
	pt_str_eq(z.message, "the file is empty");
	pt_str_eq(z.reason, "too_large");
	cr_assert(z.has_bytes && z.bytes == 70000000);
	cr_assert(z.has_cap && z.cap == 67108864);
	cr_assert(z.has_index && z.index == 3);
	pt_free(&b);

	/* Only the two required fields. */
	memset(&a, 0, sizeof a);
	a.code = proto_str_make("busy");
	a.message = proto_str_make("");
	pt_init(&b);
	proto_error_pack(&b.pk, &a);
	cr_assert_eq(proto_error_unpack(pt_body(&b), &z, err, sizeof err), 0);
	pt_str_eq(z.message, "");
	cr_assert_null(z.reason.ptr);
	cr_assert(!z.has_bytes && !z.has_cap && !z.has_index);
	pt_free(&b);
}

Test(proto_daemon, error_refuses)
{
	struct proto_error	a;
	struct pt_buf		b;

	memset(&a, 0, sizeof a);
	a.code = proto_str_make("c");
	a.message = proto_str_make("m");
	pt_init(&b);
	proto_error_pack(&b.pk, &a);
	pt_refuses_all(proto_error_unpack, struct proto_error, pt_body(&b),
	    "ERROR", "code", "message", "reason", "bytes", "cap", "index");
	pt_free(&b);
}

Test(proto_daemon, error_refuses_optional)
{
	struct pt_buf		b;
	struct proto_error	z;
	char			err[256];

	pt_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_str(&b.pk, "code", "c");
	proto_pack_str(&b.pk, "message", "m");
	proto_pack_str(&b.pk, "index", "1");
	cr_assert_eq(proto_error_unpack(pt_body(&b), &z, err, sizeof err), -1);
	cr_assert_str_eq(err, "ERROR: index is not an integer");
	pt_free(&b);
}

static void
pack_warnings(msgpack_packer *pk, const void *arg)
{
	msgpack_pack_array(pk, 1);
	proto_pack_cstr(pk, arg);
}

Test(proto_daemon, status_round_trip)
{
	struct proto_daemon_status_reply	a, z;
	struct pt_buf				b;
	char					err[256];

	memset(&a, 0, sizeof a);
	a.pid = 42;
	a.started_at = 1700000000000000LL;
	a.version = proto_str_make("0.9");
	a.rooms = 1;
	a.peers = 2;
	a.kernels = 3;
	a.has_fds = 1;
	a.fds_open = 10;
	a.fds_limit = 1024;
	a.peers_room = 500;
	a.warnings.pack = pack_warnings;
	a.warnings.arg = "the store was damaged";
	pt_init(&b);
	proto_daemon_status_reply_pack(&b.pk, &a);
	cr_assert_eq(proto_daemon_status_reply_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(z.pid, 42);
	cr_assert_eq(z.started_at, a.started_at);
	pt_str_eq(z.version, "0.9");
	cr_assert(z.rooms == 1 && z.peers == 2 && z.kernels == 3);
	cr_assert(z.has_fds && z.fds_open == 10 && z.fds_limit == 1024 &&
	    z.peers_room == 500);
	cr_assert_not_null(z.warnings.obj);
	cr_assert_eq(z.warnings.obj->via.array.size, 1);
	cr_assert(!z.has_detail);
	pt_free(&b);

	/* What runtimectl shows: agents, the pool, the store, kernels. */
	a.has_detail = 1;
	a.agents = 2;
	a.pool_size = 1;
	a.pool_ready = 1;
	a.state_dir = proto_str_make("/s");
	a.store_write_error = proto_str_make("disk full");
	a.kernel_list.pack = pack_warnings;
	a.kernel_list.arg = "k";
	pt_init(&b);
	proto_daemon_status_reply_pack(&b.pk, &a);
	cr_assert_eq(proto_daemon_status_reply_unpack(pt_body(&b), &z, err,
	    sizeof err), 0, "%s", err);
	cr_assert(z.has_detail && z.agents == 2 && z.pool_size == 1 &&
	    z.pool_ready == 1);
	pt_str_eq(z.state_dir, "/s");
	pt_str_eq(z.store_write_error, "disk full");
	cr_assert_null(z.store_damage.ptr);
	cr_assert_eq(z.kernel_list.obj->via.array.size, 1);
	pt_free(&b);
}

Test(proto_daemon, status_refuses)
{
	struct proto_daemon_status_reply	a;
	struct pt_buf				b;

	memset(&a, 0, sizeof a);
	a.version = proto_str_make("1");
	pt_init(&b);
	proto_daemon_status_reply_pack(&b.pk, &a);
	pt_refuses_all(proto_daemon_status_reply_unpack,
	    struct proto_daemon_status_reply, pt_body(&b),
	    "DAEMON_STATUS_REPLY", "pid", "started_at", "version", "rooms",
	    "peers", "kernels", "fds_open", "fds_limit", "peers_room",
	    "warnings");
	pt_free(&b);
}
