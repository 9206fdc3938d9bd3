/* SPDX-License-Identifier: ISC */
/*
 * fuzz-store.c: libFuzzer target for what the daemon reads back from its
 * state store, which a damaged disk or another program can have written:
 * a room's snapshot, its journal entries and its run records.  The input
 * is records, each a kind byte, a 2-byte big-endian length and its bytes:
 *
 *	's'	the snapshot of one untitled room (the last one counts)
 *	'j'	the room's next journal entry
 *	'r'	one of its run records
 *
 * They go into the real store (SQLite) as the writer would put them, the
 * daemon starts as runtimed.c starts it (fuzz-daemon.c's box: no kernel
 * can start; room_start reads each stored room back, room_journal_check,
 * and names a damaged one), and a client of the harness opens the room
 * by its id (snapshot and journal replayed), reads it, lists its runs, gets one by
 * id and lists the task runs: every reader of stored bytes runs on the
 * fuzzer's.  After each input the rooms are freed and the store starts
 * empty.
 */

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz-runtimed.h"

#define FUZZ_STORE_ID		"0f5a3c1e-7b2d-4e8f-9a61-2c7d0e9b1f44"
#define FUZZ_STORE_RUNS		8
#define FUZZ_STORE_PASSES	64

static void	fuzz_store_fill(const uint8_t *, size_t);
static void	fuzz_store_client(int);

/* DAEMON_STOP is not sent here; server-client.c still links it. */
void
runtimed_stop(void)
{
}

/* The input's records into the store, as the writer commits them. */
static void
fuzz_store_fill(const uint8_t *p, size_t size)
{
	struct store_room	 sr;
	const uint8_t		*snap = (const uint8_t *)"\x80";
	size_t			 snaplen = 1, len;
	uint64_t		 jseq = 0;
	char			 eid[64], *cause = NULL;
	int			 runs = 0;

	store_writer_sync(runtimed_writer);
	if (store_group_begin(runtimed_store, &cause) != 0)
		abort();
	while (size >= 3) {
		len = (size_t)p[1] << 8 | p[2];
		if (len > size - 3)
			len = size - 3;
		switch (p[0]) {
		case 's':
			snap = p + 3;
			snaplen = len;
			break;
		case 'j':
			if (store_journal_append(runtimed_store, FUZZ_STORE_ID,
			    ++jseq, p + 3, len, &cause) != 0)
				abort();
			break;
		case 'r':
			if (runs >= FUZZ_STORE_RUNS)
				break;
			snprintf(eid, sizeof eid, "%.8s-000000000001-%014d",
			    FUZZ_STORE_ID, runs);
			if (store_exec_put(runtimed_store, eid, FUZZ_STORE_ID,
			    1000 + runs++, p + 3, len, &cause) != 0)
				abort();
			break;
		}
		p += 3 + len;
		size -= 3 + len;
	}
	memset(&sr, 0, sizeof sr);
	sr.notebook_id = FUZZ_STORE_ID;
	sr.kernel = "python3";
	sr.dirty = 1;
	sr.snapshot = snap;
	sr.snapshot_len = snaplen;
	if (store_room_snapshot(runtimed_store, &sr, &cause) != 0 ||
	    store_group_commit(runtimed_store, &cause) != 0) {
		fprintf(stderr, "fuzz-store: %s\n", cause);
		abort();
	}
}

/* The client's part: open the room by id, read it and its runs. */
static void
fuzz_store_client(int fd)
{
	struct mpbuf	b;

	fuzz_runtimed_hello(fd, "fuzz-store");
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "notebook_id", FUZZ_STORE_ID);
	fuzz_runtimed_frame(fd, PROTO_MSG_ROOM_OPEN, 2, &b);

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	fuzz_runtimed_frame(fd, PROTO_MSG_ROOM_GET, 3, &b);

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	fuzz_runtimed_frame(fd, PROTO_MSG_EXEC_LIST, 4, &b);

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "execution_id",
	    "0f5a3c1e-000000000001-00000000000000");
	fuzz_runtimed_frame(fd, PROTO_MSG_EXEC_GET, 5, &b);

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "task_owner", "fuzz");
	fuzz_runtimed_frame(fd, PROTO_MSG_EXEC_TASKS, 6, &b);
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	ready;
	int		sv[2];

	if (!ready) {
		fuzz_runtimed_init("fuzz-store", fuzz_runtimed_no_kernels,
		    fuzz_runtimed_no_kernels_cleanup);
		ready = 1;
	}
	fuzz_runtimed_cwd(1);
	/* The daemon of the last input is gone; this one finds the room. */
	room_free_all();
	fuzz_store_fill(data, size);
	room_start();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	server_client_accept(sv[0]);
	fuzz_store_client(sv[1]);
	fuzz_runtimed_hangup(sv[1], FUZZ_STORE_PASSES);
	fuzz_runtimed_reset(fuzz_runtimed_empty);
	fuzz_runtimed_cwd(0);
	return (0);
}
