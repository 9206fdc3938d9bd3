/* SPDX-License-Identifier: ISC */
/*
 * proto-test.h: helpers the codec tests share: pack into a buffer, read
 * it back as a frame body would be.
 */

#ifndef PROTO_TEST_H
#define PROTO_TEST_H

#include <string.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

struct pt_buf {
	msgpack_sbuffer		sb;
	msgpack_packer		pk;
	msgpack_unpacked	u;
};

static inline void
pt_init(struct pt_buf *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&b->u);
}

/* The packed bytes as a received body. */
static inline const msgpack_object *
pt_body(struct pt_buf *b)
{
	size_t	off = 0;

	cr_assert_eq(msgpack_unpack_next(&b->u, b->sb.data, b->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, b->sb.size);
	cr_assert_eq(b->u.data.type, MSGPACK_OBJECT_MAP);
	return (&b->u.data);
}

static inline void
pt_free(struct pt_buf *b)
{
	msgpack_unpacked_destroy(&b->u);
	msgpack_sbuffer_destroy(&b->sb);
}

#define pt_str_eq(ps, s) do {						\
	cr_assert_not_null((ps).ptr);					\
	cr_assert_eq((ps).len, strlen(s));				\
	cr_assert(memcmp((ps).ptr, (s), (ps).len) == 0);		\
} while (0)

/*
 * Copy a valid body with fkey's value (added when absent) made a float,
 * which no field is, and expect fn to refuse it naming msg and fkey.
 */
#define pt_refuses(fn, type, valid, msg, fkey) do {			\
	struct pt_buf		 b_;					\
	type			 v_;					\
	const msgpack_object	*o_ = (valid);				\
	char			 e_[256] = "", want_[128];		\
	uint32_t		 i_, n_ = o_->via.map.size;		\
	int			 found_ = 0;				\
									\
	for (i_ = 0; i_ < o_->via.map.size; i_++)			\
		found_ |= proto_obj_streq(&o_->via.map.ptr[i_].key, (fkey)); \
	pt_init(&b_);							\
	msgpack_pack_map(&b_.pk, n_ + !found_);				\
	for (i_ = 0; i_ < o_->via.map.size; i_++) {			\
		msgpack_pack_object(&b_.pk, o_->via.map.ptr[i_].key);	\
		if (proto_obj_streq(&o_->via.map.ptr[i_].key, (fkey)))	\
			msgpack_pack_double(&b_.pk, 0.5);		\
		else							\
			msgpack_pack_object(&b_.pk,			\
			    o_->via.map.ptr[i_].val);			\
	}								\
	if (!found_) {							\
		proto_pack_key(&b_.pk, (fkey));				\
		msgpack_pack_double(&b_.pk, 0.5);			\
	}								\
	cr_assert_eq(fn(pt_body(&b_), &v_, e_, sizeof e_), -1,		\
	    "%s accepted a wrong %s", #fn, (fkey));			\
	snprintf(want_, sizeof want_, "%s: %s is not ", (msg), (fkey));	\
	cr_assert(strncmp(e_, want_, strlen(want_)) == 0,		\
	    "%s said \"%s\"", #fn, e_);					\
	pt_free(&b_);							\
} while (0)

/* Expect fn to refuse every one of keys in a valid body. */
#define pt_refuses_all(fn, type, valid, msg, ...) do {			\
	const char	*k_[] = { __VA_ARGS__ };			\
	size_t		 j_;						\
									\
	for (j_ = 0; j_ < sizeof k_ / sizeof *k_; j_++)			\
		pt_refuses(fn, type, valid, msg, k_[j_]);		\
} while (0)

#endif
