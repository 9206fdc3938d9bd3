/* SPDX-License-Identifier: ISC */
/*
 * fuzz-frame.c: libFuzzer target for the frame decoder and the body
 * readers every peer runs on untrusted input: every codec's unpacker
 * reads every body (its own type's among them).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Every unpacker of proto/; each reads every body. */
#define FUZZ_FRAME_UNPACK(name, type)					\
static void								\
fuzz_frame_##name(const msgpack_object *o)				\
{									\
	struct proto_##type	v;					\
	char			err[256];				\
									\
	proto_##name##_unpack(o, &v, err, sizeof err);			\
}
FUZZ_FRAME_UNPACK(error, error)
FUZZ_FRAME_UNPACK(daemon_status_reply, daemon_status_reply)
FUZZ_FRAME_UNPACK(room_create, room_create)
FUZZ_FRAME_UNPACK(room_open, room_open)
FUZZ_FRAME_UNPACK(room_joined, room_joined)
FUZZ_FRAME_UNPACK(room_content, room_joined)
FUZZ_FRAME_UNPACK(room_list_reply, room_list_reply)
FUZZ_FRAME_UNPACK(room_edit, room_edit)
FUZZ_FRAME_UNPACK(room_edit_reply, room_edit_reply)
FUZZ_FRAME_UNPACK(room_save, room_save)
FUZZ_FRAME_UNPACK(room_save_reply, room_save_reply)
FUZZ_FRAME_UNPACK(room_changed, room_changed)
FUZZ_FRAME_UNPACK(room_changes, room_changes)
FUZZ_FRAME_UNPACK(room_changes_reply, room_changes_reply)
FUZZ_FRAME_UNPACK(room_wait, room_wait)
FUZZ_FRAME_UNPACK(room_changed_content, room_changed_content)
FUZZ_FRAME_UNPACK(blob_get, blob_get)
FUZZ_FRAME_UNPACK(blob_reply, blob_reply)
FUZZ_FRAME_UNPACK(exec_run, exec_run)
FUZZ_FRAME_UNPACK(exec_state, exec_state)
FUZZ_FRAME_UNPACK(exec_tasks, exec_tasks)
FUZZ_FRAME_UNPACK(kernel_info_reply, kernel_info_reply)
FUZZ_FRAME_UNPACK(kernel_list_reply, kernel_list_reply)
FUZZ_FRAME_UNPACK(kernel_select, kernel_select)

static void
fuzz_frame_exec_id(const msgpack_object *o)
{
	struct proto_exec_id	v;
	char			err[256];

	proto_exec_id_unpack(o, "EXEC_GET", &v, err, sizeof err);
}

static void
fuzz_frame_exec_runs(const msgpack_object *o)
{
	struct proto_exec_runs	v;
	char			err[256];

	proto_exec_runs_unpack(o, "EXEC_LIST_REPLY", &v, err, sizeof err);
}

static void (*const fuzz_frame_unpackers[])(const msgpack_object *) = {
	fuzz_frame_error,
	fuzz_frame_daemon_status_reply,
	fuzz_frame_room_create,
	fuzz_frame_room_open,
	fuzz_frame_room_joined,
	fuzz_frame_room_content,
	fuzz_frame_room_list_reply,
	fuzz_frame_room_edit,
	fuzz_frame_room_edit_reply,
	fuzz_frame_room_save,
	fuzz_frame_room_save_reply,
	fuzz_frame_room_changed,
	fuzz_frame_room_changes,
	fuzz_frame_room_changes_reply,
	fuzz_frame_room_wait,
	fuzz_frame_room_changed_content,
	fuzz_frame_blob_get,
	fuzz_frame_blob_reply,
	fuzz_frame_exec_run,
	fuzz_frame_exec_id,
	fuzz_frame_exec_state,
	fuzz_frame_exec_tasks,
	fuzz_frame_exec_runs,
	fuzz_frame_kernel_info_reply,
	fuzz_frame_kernel_list_reply,
	fuzz_frame_kernel_select,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_header		 hdr;
	struct proto_hello		 hello;
	struct proto_incarnation	 inc;
	struct json_object		*j;
	msgpack_unpacked		 u;
	char				 err[256], *s;
	size_t				 used, len, i;
	int64_t				 v;
	int				 b;

	/* Decode frames back to back, as a peer reads a stream. */
	while (proto_frame_decode(data, size, &hdr, &u, &used, err,
	    sizeof err) == 1) {
		proto_hello_unpack(&u.data, &hello, err, sizeof err);
		proto_hello_check(&hello, err, sizeof err);
		proto_hello_ok_unpack(&u.data, &inc, err, sizeof err);
		for (i = 0; i < sizeof fuzz_frame_unpackers /
		    sizeof *fuzz_frame_unpackers; i++)
			fuzz_frame_unpackers[i](&u.data);
		proto_get_str(&u.data, "code", &len);
		proto_get_int(&u.data, "id", &v);
		proto_get_bool(&u.data, "force", &b);
		proto_get_array(&u.data, "cells");
		if ((s = proto_dup_str(&u.data, "path")) != NULL)
			free(s);
		j = mpjson_unpack(&u.data);
		json_object_put(j);
		msgpack_unpacked_destroy(&u);
		data += used;
		size -= used;
	}
	return (0);
}
