/* SPDX-License-Identifier: ISC */
/*
 * proto-msg.c: the one table of facts about every message type: its
 * name, body cap, who may send it, its reply, its flags and its codec
 * (docs/decisions/014), built from proto.h's list (PROTO_MSGS,
 * docs/decisions/096): a new type needs no line here.  Every process
 * asks here; no other list of types exists.
 */

#include <pthread.h>
#include <stdio.h>

#include "proto.h"

#define KIB	1024U
#define MIB	(1024U * 1024U)

/* A batch within PROTO_EDIT_MAX_EDITS always has a reply that fits. */
_Static_assert((uint64_t)PROTO_EDIT_MAX_EDITS * PROTO_EDIT_REPLY_ENTRY + 64 <=
    16 * MIB, "ROOM_EDIT_REPLY's cap must hold a full batch's reply");

#define C	PROTO_FROM_CLIENT
#define D	PROTO_FROM_DAEMON
#define A	PROTO_FROM_AGENT
#define P	PROTO_FROM_PROXY
#define W	PROTO_FROM_WORKER
#define ANY	(C | D | A | P | W)

#define ROOM	PROTO_F_ROOM
#define MUT	PROTO_F_MUTATES
#define RETRY	PROTO_F_RETRY
#define EVENT	PROTO_F_EVENT
#define HS	PROTO_F_HANDSHAKE
#define ANYV	PROTO_F_ANY_VERSION

/*
 * The codec column: a function per type behind the one signature of
 * proto_unpack_cb, its struct checked to fit PROTO_BODY_MAX.
 */
#define PROTO_MSG_CODEC_BODY(fn, name, codec, st)			\
_Static_assert(sizeof (struct proto_##st) <= PROTO_BODY_MAX,		\
    "struct proto_" #st " is larger than PROTO_BODY_MAX");		\
static int								\
fn(const msgpack_object *o, void *m, char *err, size_t len)		\
{									\
	return (proto_##codec##_unpack(o, m, err, len));		\
}
#define PROTO_MSG_CODEC_NAMED(fn, name, codec, st)			\
_Static_assert(sizeof (struct proto_##st) <= PROTO_BODY_MAX,		\
    "struct proto_" #st " is larger than PROTO_BODY_MAX");		\
static int								\
fn(const msgpack_object *o, void *m, char *err, size_t len)		\
{									\
	return (proto_##codec##_unpack(o, name, m, err, len));		\
}
#define PROTO_MSG_CODEC_EMPTY(fn, name, codec, st)			\
static int								\
fn(const msgpack_object *o, void *m, char *err, size_t len)		\
{									\
	(void)m;							\
	return (proto_##codec##_unpack(o, err, len));			\
}
#define PROTO_MSG_CODEC_NONE(fn, name, codec, st)
#define X(t, n, cap, from, reply, flags, kind, codec, st)		\
	PROTO_MSG_CODEC_##kind(proto_msg_codec_##t, #t, codec, st)
PROTO_MSGS(X)
#undef X

#define PROTO_MSG_ROW_BODY(fn)	fn
#define PROTO_MSG_ROW_NAMED(fn)	fn
#define PROTO_MSG_ROW_EMPTY(fn)	fn
#define PROTO_MSG_ROW_NONE(fn)	NULL

/* The facts, one row per type of proto.h's list, in its order. */
static const struct proto_msg_info proto_msg_table[] = {
#define X(t, n, cap, from, reply, flags, kind, codec, st)		\
	{ PROTO_MSG_##t, #t, cap, from, PROTO_MSG_##reply, flags,	\
	    PROTO_MSG_ROW_##kind(proto_msg_codec_##t) },
	PROTO_MSGS(X)
#undef X
};

/*
 * Every frame asks the table several times (its cap, who may send it,
 * its name for the trace): types below PROTO_MSG_INDEX_MAX find their
 * row through an index (row + 1; 0 = not a type), built once, by
 * whichever thread asks first.
 */
#define PROTO_MSG_INDEX_MAX	1024
#define PROTO_MSG_NTYPES	(sizeof proto_msg_table / sizeof *proto_msg_table)
_Static_assert(PROTO_MSG_NTYPES < 255, "the index holds a row in a byte");

static uint8_t		proto_msg_index[PROTO_MSG_INDEX_MAX];
static pthread_once_t	proto_msg_index_once = PTHREAD_ONCE_INIT;

static void
proto_msg_index_build(void)
{
	size_t	i;

	for (i = 0; i < PROTO_MSG_NTYPES; i++) {
		if (proto_msg_table[i].type < PROTO_MSG_INDEX_MAX)
			proto_msg_index[proto_msg_table[i].type] = i + 1;
	}
}

/* The facts of a type, or NULL for a type not in the table. */
const struct proto_msg_info *
proto_msg_info(uint16_t type)
{
	size_t	i;

	if (type < PROTO_MSG_INDEX_MAX) {
		if (pthread_once(&proto_msg_index_once,
		    proto_msg_index_build) != 0)
			return (NULL);
		i = proto_msg_index[type];
		return (i != 0 ? &proto_msg_table[i - 1] : NULL);
	}
	for (i = 0; i < PROTO_MSG_NTYPES; i++) {
		if (proto_msg_table[i].type == type)
			return (&proto_msg_table[i]);
	}
	return (NULL);
}

/* Name of a message type for logs; "unknown" if not in the table. */
const char *
proto_msg_name(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->name : "unknown");
}

/* Largest body allowed for a type; 0 for an unknown type. */
uint32_t
proto_msg_cap(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->cap : 0);
}

/* Does a type carry flag (PROTO_F_*)?  0 for an unknown type. */
int
proto_msg_has(uint16_t type, u_int flag)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL && (info->flags & flag) != 0);
}

/* May a peer of kind from (PROTO_FROM_*) send this type? */
int
proto_msg_from(uint16_t type, u_int from)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL && (info->from & from) != 0);
}

/* The table's rows in order, for whoever walks them all; NULL past the end. */
const struct proto_msg_info *
proto_msg_row(size_t i)
{
	return (i < PROTO_MSG_NTYPES ? &proto_msg_table[i] : NULL);
}

/* The type that answers a request; 0 when none does. */
uint16_t
proto_msg_reply(uint16_t type)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	return (info != NULL ? info->reply : 0);
}

/*
 * Read a body of a type into its struct (m, PROTO_BODY_MAX bytes will
 * do) through the type's codec; -1 with the codec's reason in err, or
 * when the type has none.
 */
int
proto_msg_unpack(uint16_t type, const msgpack_object *body, void *m,
    char *err, size_t errlen)
{
	const struct proto_msg_info	*info = proto_msg_info(type);

	if (info == NULL || info->unpack == NULL) {
		snprintf(err, errlen, "%s has no body to read",
		    proto_msg_name(type));
		return (-1);
	}
	return (info->unpack(body, m, err, errlen));
}
