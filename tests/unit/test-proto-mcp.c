/* SPDX-License-Identifier: ISC */
/*
 * test-proto-mcp.c: the proxy <-> worker bodies.
 */

#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

struct body {
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	msgpack_unpacked	u;
};

static void	body_init(struct body *);
static const msgpack_object	*body_unpack(struct body *);
static void	body_free(struct body *);
static int	str_is(const struct proto_str *, const char *);
static const msgpack_object	*hand_body(struct body *, const char *, int,
		    const char *);

static void
body_init(struct body *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&b->u);
}

static const msgpack_object *
body_unpack(struct body *b)
{
	size_t	off = 0;

	cr_assert_eq(msgpack_unpack_next(&b->u, b->sb.data, b->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, b->sb.size);
	return (&b->u.data);
}

static void
body_free(struct body *b)
{
	msgpack_unpacked_destroy(&b->u);
	msgpack_sbuffer_destroy(&b->sb);
}

static int
str_is(const struct proto_str *s, const char *want)
{
	return (s->ptr != NULL && s->len == strlen(want) &&
	    memcmp(s->ptr, want, s->len) == 0);
}

Test(proto_mcp, round_trip_with_envelope)
{
	static const char	json[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,"
	    "\"result\":{}}";
	static const char	id[] = "123456789012345678901234567890";
	struct proto_mcp	a, b;
	struct body		bd;
	char			err[128];

	memset(&a, 0, sizeof a);
	a.json.ptr = json;
	a.json.len = sizeof json - 1;
	a.id.ptr = id;
	a.id.len = sizeof id - 1;
	a.error = 1;
	body_init(&bd);
	proto_mcp_pack(&bd.pk, &a);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert(str_is(&b.json, json));
	cr_assert(str_is(&b.id, id), "the id keeps its exact text");
	cr_assert_null(b.method.ptr, "absent method is NULL");
	cr_assert_eq(b.error, 1);
	/* Borrowed: the strings point into the received body. */
	cr_assert(b.json.ptr >= bd.sb.data &&
	    b.json.ptr < bd.sb.data + bd.sb.size);
	body_free(&bd);
}

Test(proto_mcp, head_then_bytes_is_the_whole_body)
{
	static const char	json[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}";
	struct proto_mcp	a, b;
	msgpack_sbuffer		whole;
	msgpack_packer		pk;
	struct body		bd;
	char			err[128];

	memset(&a, 0, sizeof a);
	a.json.ptr = json;
	a.json.len = sizeof json - 1;
	a.method.ptr = "x";
	a.method.len = 1;
	msgpack_sbuffer_init(&whole);
	msgpack_packer_init(&pk, &whole, msgpack_sbuffer_write);
	proto_mcp_pack(&pk, &a);

	body_init(&bd);
	proto_mcp_pack_head(&bd.pk, &a);
	msgpack_sbuffer_write(&bd.sb, json, sizeof json - 1);
	cr_assert_eq(bd.sb.size, whole.size);
	cr_assert_eq(memcmp(bd.sb.data, whole.data, whole.size), 0);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &b, err, sizeof err),
	    0, "%s", err);
	cr_assert(str_is(&b.method, "x"));
	cr_assert_null(b.id.ptr);
	cr_assert_eq(b.error, 0);
	body_free(&bd);
	msgpack_sbuffer_destroy(&whole);
}

Test(proto_mcp, from_the_proxy_json_only)
{
	struct proto_mcp	a, b;
	struct body		bd;
	char			err[128];

	memset(&a, 0, sizeof a);
	a.json.ptr = "{}";
	a.json.len = 2;
	body_init(&bd);
	proto_mcp_pack(&bd.pk, &a);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &b, err, sizeof err),
	    0);
	cr_assert(str_is(&b.json, "{}"));
	cr_assert_eq(bd.u.data.via.map.size, 1, "only json is packed");
	body_free(&bd);
}

/* A body built by hand, as a peer of another version might send it. */
static const msgpack_object *
hand_body(struct body *bd, const char *k1, int v1_type, const char *k2)
{
	body_init(bd);
	msgpack_pack_map(&bd->pk, k2 != NULL ? 2 : 1);
	proto_pack_key(&bd->pk, k1);
	if (v1_type == MSGPACK_OBJECT_STR)
		proto_pack_cstr(&bd->pk, "v");
	else
		msgpack_pack_int(&bd->pk, 7);
	if (k2 != NULL)
		proto_pack_str(&bd->pk, k2, "unknown keys are ignored");
	return (body_unpack(bd));
}

Test(proto_mcp, bad_bodies_name_the_field)
{
	struct proto_mcp	m;
	struct body		bd;
	char			err[128];

	cr_assert_eq(proto_mcp_unpack(hand_body(&bd, "id", MSGPACK_OBJECT_STR,
	    NULL), &m, err, sizeof err), -1);
	cr_assert_str_eq(err, "MCP: json is missing");
	body_free(&bd);

	cr_assert_eq(proto_mcp_unpack(hand_body(&bd, "json",
	    MSGPACK_OBJECT_POSITIVE_INTEGER, NULL), &m, err, sizeof err), -1);
	cr_assert_str_eq(err, "MCP: json is not a string");
	body_free(&bd);

	body_init(&bd);
	msgpack_pack_map(&bd.pk, 2);
	proto_pack_str(&bd.pk, "json", "{}");
	proto_pack_int(&bd.pk, "id", 5);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &m, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "MCP: id is not a string");
	body_free(&bd);

	body_init(&bd);
	msgpack_pack_map(&bd.pk, 2);
	proto_pack_str(&bd.pk, "json", "{}");
	proto_pack_str(&bd.pk, "error", "yes");
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &m, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "MCP: error is not a boolean");
	body_free(&bd);

	body_init(&bd);
	msgpack_pack_array(&bd.pk, 0);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &m, err, sizeof err),
	    -1);
	cr_assert_str_eq(err, "MCP: the body is not a map");
	body_free(&bd);

	cr_assert_eq(proto_mcp_unpack(hand_body(&bd, "json",
	    MSGPACK_OBJECT_STR, "future"), &m, err, sizeof err), 0);
	cr_assert(str_is(&m.json, "v"));
	body_free(&bd);
}

Test(proto_mcp, empty_json_is_present)
{
	struct proto_mcp	m;
	struct body		bd;
	char			err[128];

	body_init(&bd);
	msgpack_pack_map(&bd.pk, 1);
	proto_pack_strn(&bd.pk, "json", "", 0);
	cr_assert_eq(proto_mcp_unpack(body_unpack(&bd), &m, err, sizeof err),
	    0);
	cr_assert_not_null(m.json.ptr);
	cr_assert_eq(m.json.len, 0);
	body_free(&bd);
}

Test(proto_worker, ready_round_trip_and_missing_catalog)
{
	struct proto_worker_ready	a, b;
	struct body			bd;
	char				err[128];

	a.catalog.ptr = "{\"tools\":[]}";
	a.catalog.len = strlen(a.catalog.ptr);
	body_init(&bd);
	proto_worker_ready_pack(&bd.pk, &a);
	cr_assert_eq(proto_worker_ready_unpack(body_unpack(&bd), &b, err,
	    sizeof err), 0);
	cr_assert(str_is(&b.catalog, "{\"tools\":[]}"));
	body_free(&bd);

	cr_assert_eq(proto_worker_ready_unpack(hand_body(&bd, "tools",
	    MSGPACK_OBJECT_STR, NULL), &b, err, sizeof err), -1);
	cr_assert_str_eq(err, "WORKER_READY: catalog is missing");
	body_free(&bd);
}

Test(proto_worker, empty_bodies)
{
	struct body	bd;
	char		err[128];

	body_init(&bd);
	proto_worker_upgrade_pack(&bd.pk);
	cr_assert_eq(bd.sb.size, 1);
	cr_assert_eq((uint8_t)bd.sb.data[0], 0x80, "an empty map");
	cr_assert_eq(proto_worker_upgrade_unpack(body_unpack(&bd), err,
	    sizeof err), 0);
	body_free(&bd);

	body_init(&bd);
	proto_worker_shutdown_pack(&bd.pk);
	cr_assert_eq(proto_worker_shutdown_unpack(body_unpack(&bd), err,
	    sizeof err), 0);
	body_free(&bd);

	body_init(&bd);
	msgpack_pack_nil(&bd.pk);
	cr_assert_eq(proto_worker_shutdown_unpack(body_unpack(&bd), err,
	    sizeof err), -1);
	cr_assert_str_eq(err, "WORKER_SHUTDOWN: the body is not a map");
	body_free(&bd);
}
