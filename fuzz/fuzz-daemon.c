/* SPDX-License-Identifier: ISC */
/*
 * fuzz-daemon.c: libFuzzer target for the daemon's handling of what a
 * client sends: the input is the byte stream of one client connection
 * (frames: 12-byte header, body).  The real server-client.c takes it on
 * a socketpair, with the real rooms, store (SQLite) and kernel code
 * behind it, as runtimed.c would set them up; so every handler's field
 * extraction runs on the fuzzer's bodies, and ROOM_EDIT edits a real
 * notebook.
 *
 * No process is ever started: the state directory holds a regular file
 * named "kernels", so each kernel fails to get its runtime directory and
 * is dead from the start (EXEC_RUN, KERNEL_RESTART and KERNEL_SELECT then
 * answer kernel_unavailable, as they do when a kernel cannot start).  The
 * daemon writes files where a client says (ROOM_CREATE then ROOM_SAVE):
 * it runs in the private state directory, and frames whose body holds
 * '/' or ".." (which could name a file elsewhere) are left out.  After
 * each input the rooms are freed and the store starts empty.
 */

#include <sys/socket.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz-runtimed.h"

#define FUZZ_DAEMON_MAX_PASSES	512

static int	 fuzz_daemon_stops;

static int	fuzz_daemon_escapes(const uint8_t *, size_t);
static void	fuzz_daemon_write(int, const uint8_t *, size_t);

/* DAEMON_STOP: the real one ends the process; count it instead. */
void
runtimed_stop(void)
{
	fuzz_daemon_stops++;
}

/* Could this body name a file outside the state directory? */
static int
fuzz_daemon_escapes(const uint8_t *body, size_t len)
{
	return (memchr(body, '/', len) != NULL ||
	    memmem(body, len, "..", 2) != NULL);
}

static void
fuzz_daemon_write(int fd, const uint8_t *p, size_t len)
{
	ssize_t	n;
	int	passes = 0;

	while (len > 0 && passes < FUZZ_DAEMON_MAX_PASSES) {
		n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN)
			return;
		/* Full: let the daemon read and answer. */
		fuzz_runtimed_pass();
		fuzz_runtimed_drain(fd);
		passes++;
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct proto_header	 hdr;
	size_t			 blen;
	int			 sv[2];

	if (!ready) {
		fuzz_runtimed_init("fuzz-daemon", fuzz_runtimed_no_kernels,
		    fuzz_runtimed_no_kernels_cleanup);
		ready = 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	fuzz_runtimed_cwd(1);
	server_client_accept(sv[0]);
	while (size >= PROTO_HEADER_SIZE) {
		proto_header_unpack(data, &hdr);
		blen = size - PROTO_HEADER_SIZE;
		if (blen > hdr.length)
			blen = hdr.length;
		if (!fuzz_daemon_escapes(data + PROTO_HEADER_SIZE, blen))
			fuzz_daemon_write(sv[1], data,
			    PROTO_HEADER_SIZE + blen);
		data += PROTO_HEADER_SIZE + blen;
		size -= PROTO_HEADER_SIZE + blen;
	}
	fuzz_daemon_write(sv[1], data, size);
	fuzz_runtimed_hangup(sv[1], FUZZ_DAEMON_MAX_PASSES);
	fuzz_runtimed_reset(fuzz_runtimed_empty);
	fuzz_runtimed_cwd(0);
	return (0);
}
