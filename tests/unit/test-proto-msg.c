/* SPDX-License-Identifier: ISC */
/*
 * test-proto-msg.c: the table of message facts (proto-msg.c).
 */

#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

Test(proto_msg, every_type_has_a_row)
{
	const struct proto_msg_info	*info, *reply;
	u_int				 type, n = 0;

	for (type = 0; type < 65536; type++) {
		if ((info = proto_msg_info(type)) == NULL)
			continue;
		n++;
		cr_assert_eq(info->type, type);
		cr_assert_neq(info->cap, 0, "%s has no cap", info->name);
		cr_assert_neq(info->from, 0, "%s has no sender", info->name);
		if (info->reply != 0) {
			reply = proto_msg_info(info->reply);
			cr_assert_not_null(reply, "%s replies with an unknown "
			    "type", info->name);
			cr_assert_eq(reply->flags & PROTO_F_EVENT, 0);
		}
		/* A request that needs a room is a client's. */
		if (info->flags & PROTO_F_ROOM)
			cr_assert(info->from == PROTO_FROM_CLIENT);
		/* Resending a change blindly is never safe. */
		cr_assert(!((info->flags & PROTO_F_RETRY) &&
		    (info->flags & PROTO_F_MUTATES)), "%s", info->name);
	}
	cr_assert_eq(n, 78, "the table has %u rows", n);
	cr_assert_null(proto_msg_info(9999));
	cr_assert_str_eq(proto_msg_name(9999), "unknown");
	cr_assert_eq(proto_msg_cap(9999), 0);
}

Test(proto_msg, facts)
{
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_EDIT, PROTO_F_ROOM));
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_EDIT, PROTO_F_MUTATES));
	cr_assert(!proto_msg_has(PROTO_MSG_ROOM_LIST, PROTO_F_ROOM));
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_GET, PROTO_F_RETRY));
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_CHANGED, PROTO_F_EVENT));
	/* A change wait: asked in the room, answered with the content. */
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_WAIT, PROTO_F_ROOM));
	cr_assert(!proto_msg_has(PROTO_MSG_ROOM_WAIT, PROTO_F_MUTATES));
	cr_assert_eq(proto_msg_info(PROTO_MSG_ROOM_WAIT)->reply, PROTO_MSG_OK);
	cr_assert(proto_msg_has(PROTO_MSG_ROOM_CHANGED_CONTENT, PROTO_F_EVENT));
	cr_assert(proto_msg_from(PROTO_MSG_ROOM_CHANGED_CONTENT,
	    PROTO_FROM_DAEMON));
	cr_assert(!proto_msg_from(PROTO_MSG_ROOM_CHANGED_CONTENT,
	    PROTO_FROM_CLIENT));
	cr_assert_geq(proto_msg_cap(PROTO_MSG_ROOM_CHANGED_CONTENT),
	    proto_msg_cap(PROTO_MSG_ROOM_CONTENT) +
	    proto_msg_cap(PROTO_MSG_ROOM_CHANGED));
	cr_assert(proto_msg_from(PROTO_MSG_ROOM_GET, PROTO_FROM_CLIENT));
	cr_assert(!proto_msg_from(PROTO_MSG_ROOM_CONTENT,
	    PROTO_FROM_CLIENT));
	cr_assert(!proto_msg_from(PROTO_MSG_AGENT_EXECUTE, PROTO_FROM_AGENT));
	cr_assert(proto_msg_from(PROTO_MSG_ERROR, PROTO_FROM_AGENT));
	cr_assert(!proto_msg_from(9999, PROTO_FROM_CLIENT));
	cr_assert_eq(proto_msg_info(PROTO_MSG_ROOM_SAVE)->reply,
	    PROTO_MSG_ROOM_SAVE_REPLY);
	cr_assert_str_eq(proto_msg_name(PROTO_MSG_KERNEL_SELECT),
	    "KERNEL_SELECT");
	/* The live view: VIEW_STATE needs the view's joined room. */
	cr_assert(proto_msg_has(PROTO_MSG_VIEW_STATE, PROTO_F_ROOM));
	cr_assert(!proto_msg_has(PROTO_MSG_VIEW_OPEN, PROTO_F_ROOM));
	cr_assert(!proto_msg_has(PROTO_MSG_VIEW_OPEN, PROTO_F_MUTATES));
	cr_assert_eq(proto_msg_info(PROTO_MSG_VIEW_OPEN)->reply,
	    PROTO_MSG_VIEW_URL);
	cr_assert_eq(proto_msg_info(PROTO_MSG_VIEW_READY)->reply,
	    PROTO_MSG_OK);
}

/* Types whose body is empty or read by key: no codec in the table. */
static int
no_codec(uint16_t type)
{
	switch (type) {
	case PROTO_MSG_OK:
	case PROTO_MSG_PING: case PROTO_MSG_PONG:
	case PROTO_MSG_DAEMON_STATUS: case PROTO_MSG_DAEMON_STOP:
	case PROTO_MSG_ROOM_LIST: case PROTO_MSG_ROOM_LEAVE:
	case PROTO_MSG_ROOM_GET: case PROTO_MSG_KERNEL_INTERRUPT:
	case PROTO_MSG_KERNEL_RESTART: case PROTO_MSG_KERNEL_INFO:
	case PROTO_MSG_KERNEL_LIST: case PROTO_MSG_VIEW_STATE:
		return (1);
	}
	return (0);
}

/* The codec column: every body with fields has one, and it refuses. */
Test(proto_msg, codecs)
{
	const struct proto_msg_info	*info;
	msgpack_object			 nil;
	size_t				 i;
	union {
		max_align_t	align;
		char		bytes[PROTO_BODY_MAX];
	}				 m;
	char				 err[256];

	memset(&nil, 0, sizeof nil);
	nil.type = MSGPACK_OBJECT_NIL;
	for (i = 0; (info = proto_msg_row(i)) != NULL; i++) {
		if (no_codec(info->type)) {
			cr_assert_null(info->unpack, "%s", info->name);
			cr_assert_eq(proto_msg_unpack(info->type, &nil, &m,
			    err, sizeof err), -1);
			cr_assert_not_null(strstr(err, "has no body to read"));
			continue;
		}
		cr_assert_not_null(info->unpack, "%s has no codec",
		    info->name);
		err[0] = '\0';
		cr_assert_eq(proto_msg_unpack(info->type, &nil, &m, err,
		    sizeof err), -1, "%s read nil", info->name);
		cr_assert_neq(err[0], '\0', "%s refused without a reason",
		    info->name);
	}
	cr_assert_eq(i, 78);
	cr_assert_null(proto_msg_row(78));
}

/* A body read through the table is the body its packer wrote. */
Test(proto_msg, unpack_through_the_table)
{
	struct proto_exec_input		 in, *out;
	msgpack_sbuffer			 sb;
	msgpack_packer			 pk;
	msgpack_unpacked		 u;
	union {
		max_align_t	align;
		char		bytes[PROTO_BODY_MAX];
	}				 m;
	char				 err[256];

	memset(&in, 0, sizeof in);
	in.execution_id = proto_str_make("run-1");
	in.value = proto_str_make("42");
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	proto_exec_input_pack(&pk, &in);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(proto_msg_unpack(PROTO_MSG_AGENT_INPUT_REPLY, &u.data,
	    &m, err, sizeof err), 0, "%s", err);
	out = (struct proto_exec_input *)&m;
	cr_assert(proto_str_eq(&out->execution_id, "run-1"));
	cr_assert(proto_str_eq(&out->value, "42"));
	/* Another type's codec says the body is not its own. */
	cr_assert_eq(proto_msg_unpack(PROTO_MSG_AGENT_STATUS, &u.data, &m,
	    err, sizeof err), -1);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* Senders ask the table for the reply they wait for. */
Test(proto_msg, reply)
{
	cr_assert_eq(proto_msg_reply(PROTO_MSG_KERNEL_VARIABLES),
	    PROTO_MSG_KERNEL_VARIABLES_REPLY);
	cr_assert_eq(proto_msg_reply(PROTO_MSG_AGENT_VARIABLES),
	    PROTO_MSG_KERNEL_VARIABLES_REPLY);
	cr_assert_eq(proto_msg_reply(PROTO_MSG_AGENT_INPUT_REPLY),
	    PROTO_MSG_OK);
	cr_assert_eq(proto_msg_reply(PROTO_MSG_EXEC_CANCEL),
	    PROTO_MSG_EXEC_STATE);
	cr_assert_eq(proto_msg_reply(PROTO_MSG_AGENT_OUTPUT), 0);
	cr_assert_eq(proto_msg_reply(9999), 0);
}

/* VERSION_MISMATCH is read by its codec, leniently: any version sends it. */
Test(proto_msg, mismatch)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 u;
	size_t			 off = 0;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	proto_mismatch_pack(&pk, 7);
	msgpack_pack_map(&pk, 1);		/* a body without a version */
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "x", 1);
	msgpack_pack_int(&pk, 1);
	msgpack_pack_map(&pk, 1);		/* a version that is no number */
	msgpack_pack_str(&pk, 7);
	msgpack_pack_str_body(&pk, "version", 7);
	msgpack_pack_str(&pk, 1);
	msgpack_pack_str_body(&pk, "2", 1);
	msgpack_pack_nil(&pk);			/* not a map */
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(proto_mismatch_version(&u.data), PROTO_VERSION);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(proto_mismatch_version(&u.data), -1);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(proto_mismatch_version(&u.data), -1);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(proto_mismatch_version(&u.data), -1);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}
