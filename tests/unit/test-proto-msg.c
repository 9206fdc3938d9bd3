/* SPDX-License-Identifier: ISC */
/*
 * test-proto-msg.c: the table of message facts (proto-msg.c).
 */

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
	cr_assert_eq(n, 75, "the table has %u rows", n);
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
