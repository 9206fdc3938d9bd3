/* SPDX-License-Identifier: ISC */
/*
 * fuzz-agentframes.c: libFuzzer target for the daemon's handling of what
 * a runtime agent sends: the input is the byte stream of an agent's fd 3
 * (frames: 12-byte header, body).  The daemon is set up as runtimed.c
 * sets it up (fuzz-daemon.c's way: real rooms, store, kernel and run
 * code); a client connection of the harness creates an untitled room,
 * inserts three code cells and runs them, so the room's kernel is spawned
 * and a run waits for it.  The agent's end of that kernel's socketpair is
 * the harness's, and the input is written to it one frame at a time: the
 * real room_kernel_dispatch decodes each (HELLO, AGENT_READY, AGENT_STATUS,
 * AGENT_EXEC_STARTED, AGENT_OUTPUT, AGENT_CLEAR_OUTPUT, AGENT_EXEC_DONE,
 * ERROR, OK, PING) with the proto/proto-agent.c codecs and room-exec.c
 * applies them to the run and the notebook.
 *
 * Cut at the edge: spawn_find and spawn_child are the harness's (no
 * runtimed-agent is started; a child that exits at once gives the kernel
 * a pid to reap).  A run's id is random, so the 36-byte marker
 * FUZZ_AF_EXEC in the input is replaced by the exec_id of the last
 * AGENT_EXECUTE the daemon sent, and the 8-byte FUZZ_AF_CELL by its
 * cell_id: events can then name the cell in flight (the seeds, recorded
 * by fuzz/capture.py, carry the markers).  After each input the link is
 * closed (the kernel dies, its runs end kernel_died), the rooms are freed
 * and the store starts empty.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz-runtimed.h"

#define FUZZ_AF_PASSES	64
#define FUZZ_AF_EXEC	"@@@@@@@@@@@@@@@@FUZZ_EXEC_ID@@@@@@@@"
#define FUZZ_AF_CELL	"@FZCELL@"

/* The agent end of the last kernel spawned, and its stand-in pid. */
static int	 fuzz_af_fd = -1;
static pid_t	 fuzz_af_pid = -1;

/* What the daemon sent that end and has not been parsed yet. */
static uint8_t	*fuzz_af_in;
static size_t	 fuzz_af_inlen;
static char	 fuzz_af_exec[37];
static const char *fuzz_af_sources[] = { "print(1)", "display(2)", "1/0" };
static char	 fuzz_af_cell[9];

static void	fuzz_af_sweep(const char *, int);
static void	fuzz_af_cleanup(void);
static void	fuzz_af_prepare(void);
static void	fuzz_af_read_agent(void);
static void	fuzz_af_mark(uint8_t *, size_t, const char *, const char *);
static void	fuzz_af_client(int);
static void	fuzz_af_loop(int, int);

void
runtimed_stop(void)
{
}

/* The edge: the agent is not looked for. */
char *
spawn_find(const char *name, const char *configured, char **cause)
{
	return (xstrdup(name));
}

/*
 * The edge: keep the daemon's fd 3 for the agent instead of starting
 * one.  The kernel gets the pid of a child that exits at once, reaped by
 * room_kernel_reap as an agent's would be.
 */
pid_t
spawn_child(const char *path, char *const argv[], int fd3, int new_session,
    char **cause)
{
	pid_t	pid;

	if (fuzz_af_fd != -1) {
		*cause = xstrdup("fuzz-agentframes: one agent at a time");
		return (-1);
	}
	/* vfork: fork would copy the sanitizers' page tables each input. */
	if ((pid = vfork()) == -1) {
		*cause = xstrdup("vfork failed");
		return (-1);
	}
	if (pid == 0)
		_exit(0);
	if ((fuzz_af_fd = fcntl(fd3, F_DUPFD_CLOEXEC, 0)) == -1)
		abort();
	util_set_nonblock(fuzz_af_fd);
	fuzz_af_pid = pid;
	return (pid);
}

/* Remove a directory's entries (one level of subdirectories). */
static void
fuzz_af_sweep(const char *dir, int keep_kernels)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (strcmp(de->d_name, "kernels") == 0) {
			fuzz_af_sweep(path, 0);
			if (keep_kernels)
				continue;
		}
		if (unlink(path) != 0 && errno == EISDIR)
			rmdir(path);
	}
	closedir(d);
}

/* At exit: the state directory's files. */
static void
fuzz_af_cleanup(void)
{
	fuzz_af_sweep(fuzz_runtimed_dir, 0);
}

/* The kernels' directory, where each kernel gets its runtime dir. */
static void
fuzz_af_prepare(void)
{
	char	path[PATH_MAX];

	snprintf(path, sizeof path, "%s/kernels", fuzz_runtimed_dir);
	if (mkdir(path, 0700) != 0) {
		perror("fuzz-agentframes: kernels");
		exit(1);
	}
}

/*
 * Read what the daemon sent the agent end; remember the ids of each
 * AGENT_EXECUTE for the markers.
 */
static void
fuzz_af_read_agent(void)
{
	struct proto_agent_execute	 m;
	struct proto_header		 hdr;
	msgpack_unpacked		 u;
	uint8_t				 buf[65536];
	char				 err[256];
	size_t				 used;
	ssize_t				 n;
	int				 rc;

	while ((n = read(fuzz_af_fd, buf, sizeof buf)) > 0) {
		fuzz_af_in = xreallocarray(fuzz_af_in, 1, fuzz_af_inlen + n);
		memcpy(fuzz_af_in + fuzz_af_inlen, buf, n);
		fuzz_af_inlen += n;
	}
	for (;;) {
		rc = proto_frame_decode(fuzz_af_in, fuzz_af_inlen, &hdr, &u,
		    &used, err, sizeof err);
		if (rc == 0)
			return;
		if (rc < 0) {
			/* The daemon sends only frames it can decode. */
			fprintf(stderr, "fuzz-agentframes: daemon sent a bad "
			    "frame: %s\n", err);
			abort();
		}
		if (hdr.type == PROTO_MSG_AGENT_EXECUTE &&
		    proto_agent_execute_unpack(&u.data, &m, err,
		    sizeof err) == 0 && m.exec_id.len == 36 &&
		    m.cell_id.len == 8) {
			memcpy(fuzz_af_exec, m.exec_id.ptr, 36);
			memcpy(fuzz_af_cell, m.cell_id.ptr, 8);
		}
		msgpack_unpacked_destroy(&u);
		memmove(fuzz_af_in, fuzz_af_in + used, fuzz_af_inlen - used);
		fuzz_af_inlen -= used;
	}
}

/* Put an id in flight where the input has its marker (as long as it). */
static void
fuzz_af_mark(uint8_t *p, size_t len, const char *marker, const char *id)
{
	uint8_t	*at, *end = p + len;
	size_t	 n = strlen(marker);

	while ((at = memmem(p, end - p, marker, n)) != NULL) {
		memcpy(at, id, n);
		p = at + n;
	}
}

/* The client's part: HELLO, an untitled room, three cells, a run. */
static void
fuzz_af_client(int fd)
{
	struct proto_edit	ins[3];
	struct proto_edits	l = { ins, 3 };
	struct proto_room_edit	em;
	struct mpbuf		b;
	int			i;

	fuzz_runtimed_hello(fd, "fuzz-agentframes");
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	fuzz_runtimed_frame(fd, PROTO_MSG_ROOM_CREATE, 2, &b);

	memset(ins, 0, sizeof ins);
	for (i = 0; i < 3; i++) {
		ins[i].op = PROTO_EDIT_INSERT;
		ins[i].after = proto_doc_cstr("BOTTOM");
		ins[i].source = proto_str_make(fuzz_af_sources[i]);
	}
	memset(&em, 0, sizeof em);
	em.edits.pack = proto_edits_pack;
	em.edits.arg = &l;
	mpbuf_init(&b);
	proto_room_edit_pack(&b.pk, &em);
	fuzz_runtimed_frame(fd, PROTO_MSG_ROOM_EDIT, 3, &b);

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 3);
	for (i = 0; i < 3; i++)
		msgpack_pack_uint8(&b.pk, i);
	proto_pack_bool(&b.pk, "stop_on_error", 0);
	fuzz_runtimed_frame(fd, PROTO_MSG_EXEC_RUN, 4, &b);
}

static void
fuzz_af_loop(int cfd, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		fuzz_runtimed_pass();
		fuzz_runtimed_drain(cfd);
		if (fuzz_af_fd != -1)
			fuzz_af_read_agent();
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int		 ready;
	struct proto_header	 hdr;
	uint8_t			*copy, *p;
	size_t			 blen, n;
	siginfo_t		 si;
	int			 sv[2], i;

	if (!ready) {
		fuzz_runtimed_init("fuzz-agentframes", fuzz_af_prepare,
		    fuzz_af_cleanup);
		ready = 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	util_set_nonblock(sv[1]);
	memset(fuzz_af_exec, '-', 36);
	memset(fuzz_af_cell, '-', 8);
	fuzz_runtimed_cwd(1);
	server_client_accept(sv[0]);
	fuzz_af_client(sv[1]);
	for (i = 0; i < FUZZ_AF_PASSES && fuzz_af_fd == -1; i++)
		fuzz_af_loop(sv[1], 1);
	if (fuzz_af_fd == -1) {
		fprintf(stderr, "fuzz-agentframes: no kernel was spawned\n");
		abort();
	}

	/* One frame at a time, each handled before the next is sent. */
	p = copy = xmalloc(size > 0 ? size : 1);
	memcpy(copy, data, size);
	while (size > 0 && fuzz_af_fd != -1) {
		n = size;
		if (size >= PROTO_HEADER_SIZE) {
			proto_header_unpack(p, &hdr);
			blen = size - PROTO_HEADER_SIZE;
			if (blen > hdr.length)
				blen = hdr.length;
			n = PROTO_HEADER_SIZE + blen;
			fuzz_af_mark(p, n, FUZZ_AF_EXEC, fuzz_af_exec);
			fuzz_af_mark(p, n, FUZZ_AF_CELL, fuzz_af_cell);
		}
		if (write(fuzz_af_fd, p, n) != (ssize_t)n)
			break;
		p += n;
		size -= n;
		fuzz_af_loop(sv[1], 4);
	}
	free(copy);

	/* The agent goes: its kernel is dead, the run ends. */
	close(fuzz_af_fd);
	fuzz_af_fd = -1;
	fuzz_af_loop(sv[1], 4);
	shutdown(sv[1], SHUT_WR);
	fuzz_af_loop(sv[1], 4);
	close(sv[1]);
	for (i = 0; i < FUZZ_AF_PASSES && server_client_count() > 0; i++)
		fuzz_runtimed_pass();
	fuzz_runtimed_pass();

	/* Next input: a daemon that knows nothing. */
	room_free_all();
	if (fuzz_af_pid != -1) {
		/* Exited, not yet reaped: room_kernel_reap reaps it. */
		waitid(P_PID, fuzz_af_pid, &si, WEXITED | WNOWAIT);
		room_kernel_reap();
		fuzz_af_pid = -1;
	}
	fuzz_af_inlen = 0;
	room_exec_flush();
	fuzz_runtimed_close_store();
	fuzz_af_sweep(fuzz_runtimed_dir, 1);
	fuzz_runtimed_open_store();
	room_start();
	fuzz_runtimed_cwd(0);
	return (0);
}
