/* SPDX-License-Identifier: ISC */
/* room-test.c: what the room unit tests share. */

#ifndef ROOM_TEST_H
#define ROOM_TEST_H

void	room_test_md_set(struct mpvalue *, const char *, struct json_object *);
int	room_test_md_has(const struct mpvalue *, const char *, char *, size_t);

#endif
