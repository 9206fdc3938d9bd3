/* SPDX-License-Identifier: ISC */
/*
 * rtd-client.c: a small blocking client of runtimed for the integration
 * tests.  Each mode drives real requests and exits non-zero (with a
 * message) on the first answer that is not what PROTOCOL.md promises.
 *
 *	rtd-client exec SOCKET PATH	create, edit, run, wait, save
 *	rtd-client errors SOCKET DIR	typed errors for bad requests
 *	rtd-client mismatch SOCKET	version 99 gets VERSION_MISMATCH
 *	rtd-client room SOCKET		untitled room, wait for kernel
 *	rtd-client kernel SOCKET	interrupt, restart, kernel death
 *	rtd-client open SOCKET PATH	open a notebook file (loads it)
 *	rtd-client save SOCKET PATH	open or create PATH, add a cell, save
 *	rtd-client replies SOCKET	replies near and past their caps
 *	rtd-client run SOCKET OUT CODE...
 *					run cells, write EXEC_STATE to OUT
 *	rtd-client runfile SOCKET OUT FILE...
 *					the same, each source read from a
 *					file (it may hold NUL)
 *	rtd-client streamread SOCKET	reads during a run see each output
 *	rtd-client reads SOCKET PATH N	open PATH, then N ROOM_GETs (for
 *					counting the daemon's cost of a read)
 */

#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tests/lib/testclient.h"

static void	rtd_expect_message(int, uint16_t, struct mpbuf *, const char *,
		    const char *);
static void	rtd_free_ids(char **, size_t);
static void	rtd_run(int, char **, size_t, int, msgpack_unpacked *);
static const msgpack_object	*rtd_cell(msgpack_unpacked *, size_t);
static void	rtd_expect_str(const msgpack_object *, const char *,
		    const char *);
static int	rtd_exec(const char *, const char *);
static int	rtd_errors(const char *, const char *);
static int	rtd_mismatch(const char *);
static int	rtd_kernel(const char *);
static int	rtd_room(const char *);
static int	rtd_save(const char *, const char *, int);
static int	rtd_runcells(const char *, const char *, char **,
		    const size_t *, int);
static int	rtd_runfiles(const char *, const char *, char **, int);
static void	rtd_edit_many(int, size_t, const char *, const char *, uint16_t,
		    int, msgpack_unpacked *);
static int64_t	rtd_count(int, msgpack_unpacked *);
static void	rtd_expect_too_large(msgpack_unpacked *, const char *,
		    const char *);
static int	rtd_replies(const char *);
static int	rtd_has_str(const msgpack_object *, const char *);
static int	rtd_streamread(const char *);
static int	rtd_reads(const char *, const char *, int);

/* Expect ERROR {code} whose message is want. */
static void
rtd_expect_message(int fd, uint16_t type, struct mpbuf *b, const char *code,
    const char *want)
{
	msgpack_unpacked	 u;
	struct proto_error	 e;
	char			 err[256];

	testclient_request(fd, type, b, PROTO_MSG_ERROR, &u);
	if (proto_error_unpack(&u.data, &e, err, sizeof err) != 0)
		testclient_fail("%s: %s", proto_msg_name(type), err);
	if (!proto_str_eq(&e.code, code) || !proto_str_eq(&e.message, want))
		testclient_fail("%s: ERROR %.*s \"%.*s\", wanted %s \"%s\"",
		    proto_msg_name(type), (int)e.code.len, e.code.ptr,
		    (int)e.message.len, e.message.ptr, code, want);
	printf("ok: %s -> ERROR %s (%s)\n", proto_msg_name(type), code, want);
	msgpack_unpacked_destroy(&u);
}

static void
rtd_free_ids(char **ids, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(ids[i]);
}

/*
 * EXEC_RUN then EXEC_GET for as long as a wait may be (a loaded machine
 * takes over 30 s to print 72 MB); returns the final EXEC_STATE.
 */
static void
rtd_run(int fd, char **ids, size_t n, int stop, msgpack_unpacked *u)
{
	struct proto_exec_state	 st;
	char			*eid, err[256];

	testclient_run(fd, ids, n, stop, u);
	if (proto_exec_state_unpack(&u->data, &st, err, sizeof err) != 0)
		testclient_fail("%s", err);
	if (!proto_str_eq(&st.status, "queued") &&
	    !proto_str_eq(&st.status, "running"))
		testclient_fail("EXEC_RUN answered status %.*s",
		    (int)st.status.len, st.status.ptr);
	eid = proto_str_dup(&st.execution_id);
	printf("ok: EXEC_RUN -> %s %.*s\n", eid, (int)st.status.len,
	    st.status.ptr);
	msgpack_unpacked_destroy(u);
	testclient_exec_get(fd, eid, PROTO_WAIT_MAX_MS, u);
	free(eid);
}

static const msgpack_object *
rtd_cell(msgpack_unpacked *u, size_t i)
{
	const msgpack_object	*cells;

	cells = proto_get_array(&u->data, "cells");
	if (cells == NULL || i >= cells->via.array.size)
		testclient_fail("EXEC_STATE has no cell %zu", i);
	return (&cells->via.array.ptr[i]);
}

static void
rtd_expect_str(const msgpack_object *o, const char *key, const char *want)
{
	const char	*s;
	size_t		 len;

	struct json_object	*j;

	s = proto_get_str(o, key, &len);
	if (s == NULL || strlen(want) != len || memcmp(s, want, len) != 0) {
		j = mpjson_unpack(o);
		testclient_fail("%s is %.*s, wanted %s, in %s", key,
		    s != NULL ? (int)len : 6, s != NULL ? s : "(none)", want,
		    json_object_to_json_string(j));
	}
}

static int
rtd_exec(const char *sock, const char *path)
{
	struct proto_room_create	 cm;
	struct proto_room_open		 om;
	struct proto_room_joined	 jm;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	struct proto_header	 hdr;
	const msgpack_object	*c, *outs;
	struct json_object	*j;
	char			*nbid, *ids[3], *cause = NULL, *eid, *saved;
	char			*state;
	char			 err[256];
	const char		*src42[] = { "x = 6*7; print(x)" };
	const char		*srcerr[] = { "1/0", "print('after')" };
	int			 a, bfd, i, busy;
	int64_t			 ec;

	a = testclient_connect(sock);
	bfd = testclient_connect(sock);

	/* A creates the notebook; B joins the same room by id. */
	memset(&cm, 0, sizeof cm);
	cm.path = proto_str_make(path);
	proto_room_create_pack(&testclient_codec(&b)->pk, &cm);
	testclient_request(a, PROTO_MSG_ROOM_CREATE, &b, PROTO_MSG_ROOM_JOINED,
	    &u);
	if (proto_room_joined_unpack(&u.data, &jm, err, sizeof err) != 0)
		testclient_fail("%s", err);
	nbid = proto_str_dup(&jm.notebook_id);
	msgpack_unpacked_destroy(&u);
	printf("ok: ROOM_CREATE -> %s\n", nbid);
	memset(&om, 0, sizeof om);
	om.notebook_id = proto_str_make(nbid);
	proto_room_open_pack(&testclient_codec(&b)->pk, &om);
	testclient_request(bfd, PROTO_MSG_ROOM_OPEN, &b, PROTO_MSG_ROOM_JOINED,
	    &u);
	if (proto_room_joined_unpack(&u.data, &jm, err, sizeof err) != 0 ||
	    !proto_str_eq(&jm.notebook_id, nbid))
		testclient_fail("ROOM_OPEN by id joined another room: %s",
		    err);
	msgpack_unpacked_destroy(&u);

	/* A's edit reaches B as ROOM_CHANGED {kinds: ["cells"]}. */
	testclient_insert(a, src42, NULL, 1, ids, NULL);
	for (;;) {
		if (frameio_read(bfd, 5000, &hdr, &u, &cause) != 0)
			testclient_fail("no ROOM_CHANGED for B: %s", cause);
		if (hdr.type == PROTO_MSG_ROOM_CHANGED) {
			const msgpack_object *k = proto_get_array(&u.data,
			    "kinds");
			if (k != NULL && k->via.array.size == 1 &&
			    proto_obj_streq(&k->via.array.ptr[0], "cells"))
				break;
		}
		msgpack_unpacked_destroy(&u);
	}
	msgpack_unpacked_destroy(&u);
	printf("ok: ROOM_EDIT -> cell %s, ROOM_CHANGED cells to the other "
	    "peer\n", ids[0]);

	/* Run it: outputs hold 42. */
	rtd_run(a, ids, 1, 1, &u);
	rtd_expect_str(&u.data, "status", "done");
	c = rtd_cell(&u, 0);
	rtd_expect_str(c, "status", "ok");
	rtd_expect_str(c, "source", src42[0]);
	if (proto_get_int(c, "execution_count", &ec) != 0 || ec < 1)
		testclient_fail("no execution_count");
	outs = proto_get(c, "outputs");
	j = mpjson_unpack(outs);
	if (j == NULL || strstr(json_object_to_json_string(j), "42") == NULL)
		testclient_fail("outputs lack 42: %s",
		    j != NULL ? json_object_to_json_string(j) : "null");
	printf("ok: EXEC_GET -> done, outputs %s\n",
	    json_object_to_json_string(j));
	json_object_put(j);
	eid = testclient_str(&u.data, "execution_id");
	msgpack_unpacked_destroy(&u);

	/* The run belongs to this room only; B sees it, bad ids do not. */
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "execution_id", eid);
	testclient_request(bfd, PROTO_MSG_EXEC_GET, &b, PROTO_MSG_EXEC_STATE,
	    &u);
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "execution_id", "no-such-run");
	free(testclient_expect_error(a, PROTO_MSG_EXEC_GET, &b,
	    "execution_not_found"));
	testclient_body(&b, 2);
	proto_pack_str(&b.pk, "execution_id", eid);
	proto_pack_int(&b.pk, "timeout_ms", 50001);
	free(testclient_expect_error(a, PROTO_MSG_EXEC_GET, &b,
	    "invalid_argument"));
	free(eid);

	/* stop_on_error: the error stops the run, the rest is not_run. */
	testclient_insert(a, srcerr, NULL, 2, ids + 1, NULL);
	rtd_run(a, ids + 1, 2, 1, &u);
	rtd_expect_str(&u.data, "status", "error");
	rtd_expect_str(rtd_cell(&u, 0), "status", "error");
	rtd_expect_str(rtd_cell(&u, 1), "status", "not_run");
	msgpack_unpacked_destroy(&u);
	printf("ok: error run -> error, next cell not_run\n");

	/* A failing batch changes nothing and names the failing edit. */
	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "edits");
	msgpack_pack_array(&b.pk, 2);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "delete");
	proto_pack_str(&b.pk, "cell_id", ids[0]);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "op", "delete");
	proto_pack_str(&b.pk, "cell_id", "nosuchcell");
	testclient_request(a, PROTO_MSG_ROOM_EDIT, &b, PROTO_MSG_ERROR, &u);
	rtd_expect_str(&u.data, "code", "cell_not_found");
	if (proto_get_int(&u.data, "index", &ec) != 0 || ec != 1)
		testclient_fail("failing edit index is not 1");
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 0);
	testclient_request(a, PROTO_MSG_ROOM_GET, &b, PROTO_MSG_ROOM_CONTENT,
	    &u);
	if (proto_get_array(&u.data, "cells")->via.array.size != 3)
		testclient_fail("failed batch changed the room");
	msgpack_unpacked_destroy(&u);
	printf("ok: failed batch -> ERROR cell_not_found index 1, room "
	    "unchanged\n");

	testclient_body(&b, 0);
	testclient_request_wait(a, PROTO_MSG_ROOM_SAVE, &b,
	    PROTO_MSG_ROOM_SAVE_REPLY, 10000, &u);
	saved = testclient_str(&u.data, "path");
	printf("ok: ROOM_SAVE -> %s\n", saved);
	free(saved);
	msgpack_unpacked_destroy(&u);

	/* Opening the saved path joins the same room. */
	close(bfd);
	bfd = testclient_connect(sock);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	testclient_request(bfd, PROTO_MSG_ROOM_OPEN, &b, PROTO_MSG_ROOM_JOINED,
	    &u);
	rtd_expect_str(&u.data, "notebook_id", nbid);
	msgpack_unpacked_destroy(&u);
	printf("ok: ROOM_OPEN of the path -> same room\n");

	/*
	 * The error run ended with its failing cell, but the kernel may
	 * still be aborting the cell after it (ipykernel's stop_on_error):
	 * busy for a moment, then idle.
	 */
	for (i = 0;; i++) {
		testclient_body(&b, 0);
		testclient_request(a, PROTO_MSG_KERNEL_INFO, &b,
		    PROTO_MSG_KERNEL_INFO_REPLY, &u);
		state = testclient_str(&u.data, "state");
		busy = strcmp(state, "busy") == 0;
		free(state);
		if (!busy || i == 100)
			break;
		msgpack_unpacked_destroy(&u);
		usleep(100000);
	}
	rtd_expect_str(&u.data, "state", "idle");
	msgpack_unpacked_destroy(&u);
	printf("ok: KERNEL_INFO -> idle\n");
	close(a);
	close(bfd);
	free(nbid);
	rtd_free_ids(ids, 3);
	return (0);
}

static int
rtd_errors(const char *sock, const char *dir)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	struct proto_header	 hdr;
	char			*path, *cause = NULL;
	FILE			*f;
	int			 fd;

	fd = testclient_connect(sock);
	/* A mistyped field is refused by name; the connection lives on. */
	testclient_body(&b, 1);
	proto_pack_int(&b.pk, "path", 7);
	rtd_expect_message(fd, PROTO_MSG_ROOM_CREATE, &b, "invalid_argument",
	    "ROOM_CREATE: path is not a string");
	xasprintf(&path, "%s/missing.ipynb", dir);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_OPEN, &b,
	    "notebook_unavailable"));
	free(path);
	xasprintf(&path, "%s/exists.ipynb", dir);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_CREATE, &b,
	    "invalid_argument"));
	free(path);
	xasprintf(&path, "%s/no/such/dir/x.ipynb", dir);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_CREATE, &b,
	    "invalid_argument"));
	free(path);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "notebook_id", "00000000-0000-0000-0000-0");
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_OPEN, &b,
	    "notebook_unavailable"));
	testclient_body(&b, 0);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_GET, &b,
	    "invalid_argument"));
	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 0);
	free(testclient_expect_error(fd, PROTO_MSG_EXEC_RUN, &b,
	    "invalid_argument"));

	/* Untitled room: save needs a path; run of unknown cell. */
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_ROOM_CREATE, &b, PROTO_MSG_ROOM_JOINED,
	    &u);
	if (proto_get(&u.data, "path")->type != MSGPACK_OBJECT_NIL)
		testclient_fail("untitled room has a path");
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 0);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_SAVE, &b,
	    "invalid_argument"));
	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 1);
	proto_pack_cstr(&b.pk, "nosuchcell");
	free(testclient_expect_error(fd, PROTO_MSG_EXEC_RUN, &b,
	    "cell_not_found"));
	testclient_body(&b, 0);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_CREATE, &b,
	    "invalid_argument"));

	/* Save-as gives the untitled room a file; outside edits are kept. */
	xasprintf(&path, "%s/saveas.ipynb", dir);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	testclient_request(fd, PROTO_MSG_ROOM_SAVE, &b,
	    PROTO_MSG_ROOM_SAVE_REPLY, &u);
	msgpack_unpacked_destroy(&u);
	/* Unsaved changes: an outside write must not reload over them. */
	{
		const char	*src[] = { "unsaved = 1" };
		char		*nid[1];

		testclient_insert(fd, src, NULL, 1, nid, NULL);
		free(nid[0]);
	}
	sleep(1);	/* a visibly different mtime */
	if ((f = fopen(path, "a")) == NULL || fputs(" ", f) == EOF ||
	    fclose(f) != 0)
		testclient_fail("cannot change %s", path);
	testclient_body(&b, 0);
	free(testclient_expect_error(fd, PROTO_MSG_ROOM_SAVE, &b,
	    "file_changed_on_disk"));
	testclient_body(&b, 1);
	proto_pack_bool(&b.pk, "force", 1);
	testclient_request(fd, PROTO_MSG_ROOM_SAVE, &b,
	    PROTO_MSG_ROOM_SAVE_REPLY, &u);
	msgpack_unpacked_destroy(&u);
	printf("ok: save-as, then file_changed_on_disk unless force\n");
	free(path);
	close(fd);

	/* A first frame that is not HELLO closes that connection only. */
	if ((fd = sockdir_connect(sock)) == -1)
		testclient_fail("connect");
	frameio_write(fd, PROTO_MSG_DAEMON_STATUS, 1, "\x80", 1);
	if (frameio_read(fd, 5000, &hdr, &u, &cause) == 0)
		testclient_fail("daemon answered %s before HELLO",
		    proto_msg_name(hdr.type));
	free(cause);
	cause = NULL;
	close(fd);
	printf("ok: request before HELLO -> connection closed\n");
	fd = testclient_connect(sock);
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_DAEMON_STATUS, &b,
	    PROTO_MSG_DAEMON_STATUS_REPLY, &u);
	msgpack_unpacked_destroy(&u);
	close(fd);
	printf("ok: daemon still serving\n");
	return (0);
}

static int
rtd_mismatch(const char *sock)
{
	struct proto_header	 hdr;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	uint8_t			 h[PROTO_HEADER_SIZE];
	char			*cause = NULL, *msg;
	int64_t			 v;
	int			 fd, other;
	ssize_t			 n;

	/* Another client is connected throughout and keeps working. */
	other = testclient_connect(sock);
	if ((fd = sockdir_connect(sock)) == -1)
		testclient_fail("connect");
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	proto_pack_int(&b.pk, "version", 99);
	proto_pack_str(&b.pk, "kind", "ctl");
	proto_pack_str(&b.pk, "label", "from the future");
	proto_pack_int(&b.pk, "pid", getpid());
	memset(&hdr, 0, sizeof hdr);
	hdr.length = (uint32_t)b.sb.size;
	hdr.type = PROTO_MSG_HELLO;
	hdr.version = 99;
	hdr.id = 7;
	proto_header_pack(&hdr, h);
	if (write(fd, h, sizeof h) != (ssize_t)sizeof h ||
	    write(fd, b.sb.data, b.sb.size) != (ssize_t)b.sb.size)
		testclient_fail("write");
	mpbuf_free(&b);
	if (frameio_read(fd, 5000, &hdr, &u, &cause) != 0)
		testclient_fail("no answer to a version 99 HELLO: %s", cause);
	if (hdr.type != PROTO_MSG_VERSION_MISMATCH)
		testclient_fail("answer is %s", proto_msg_name(hdr.type));
	if (proto_get_int(&u.data, "version", &v) != 0 || v != PROTO_VERSION)
		testclient_fail("VERSION_MISMATCH without our version");
	msg = testclient_str(&u.data, "message");
	printf("ok: version 99 HELLO -> VERSION_MISMATCH {version %lld, "
	    "message \"%s\"}\n", (long long)v, msg);
	free(msg);
	msgpack_unpacked_destroy(&u);
	n = read(fd, h, 1);
	if (n != 0)
		testclient_fail("connection not closed after VERSION_MISMATCH");
	close(fd);
	printf("ok: mismatched connection closed\n");

	testclient_body(&b, 0);
	testclient_request(other, PROTO_MSG_DAEMON_STATUS, &b,
	    PROTO_MSG_DAEMON_STATUS_REPLY, &u);
	msgpack_unpacked_destroy(&u);
	close(other);
	fd = testclient_connect(sock);
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_ROOM_LIST, &b,
	    PROTO_MSG_ROOM_LIST_REPLY, &u);
	msgpack_unpacked_destroy(&u);
	close(fd);
	printf("ok: daemon keeps serving other clients\n");
	return (0);
}

/* Interrupt, restart and kernel death on an untitled room. */
static int
rtd_kernel(const char *sock)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	const char		*sleep_src[] = {
				    "import time; time.sleep(60)",
				    "print('never')" };
	const char		*more[] = { "y = 5", "print(y)",
				    "import os; os._exit(3)", "print('no')" };
	char			*ids[6], *e1, *e2;
	int			 fd;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	testclient_insert(fd, sleep_src, NULL, 2, ids, NULL);
	testclient_insert(fd, more, NULL, 4, ids + 2, NULL);

	/* A long run and a queued one; interrupt ends both interrupted. */
	e1 = testclient_submit(fd, ids, 2, -1);
	e2 = testclient_submit(fd, ids + 2, 2, -1);
	for (;;) {	/* until the sleep is running in the kernel */
		testclient_body(&b, 1);
		proto_pack_str(&b.pk, "execution_id", e1);
		testclient_request(fd, PROTO_MSG_EXEC_GET, &b,
		    PROTO_MSG_EXEC_STATE, &u);
		if (proto_obj_streq(proto_get(rtd_cell(&u, 0), "status"),
		    "running")) {
			msgpack_unpacked_destroy(&u);
			break;
		}
		msgpack_unpacked_destroy(&u);
		usleep(100000);
	}
	usleep(300000);
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_KERNEL_INTERRUPT, &b, PROTO_MSG_OK,
	    &u);
	msgpack_unpacked_destroy(&u);
	testclient_exec_get(fd, e1, 30000, &u);
	rtd_expect_str(&u.data, "status", "interrupted");
	rtd_expect_str(rtd_cell(&u, 0), "status", "interrupted");
	rtd_expect_str(rtd_cell(&u, 1), "status", "not_run");
	msgpack_unpacked_destroy(&u);
	testclient_exec_get(fd, e2, 30000, &u);
	rtd_expect_str(&u.data, "status", "interrupted");
	msgpack_unpacked_destroy(&u);
	printf("ok: KERNEL_INTERRUPT -> running and queued runs "
	    "interrupted\n");
	free(e1);
	free(e2);

	/* The kernel still works and keeps its state ... */
	rtd_run(fd, ids + 2, 2, 1, &u);
	rtd_expect_str(&u.data, "status", "done");
	msgpack_unpacked_destroy(&u);

	/* ... until a restart, which answers once the kernel is ready. */
	testclient_body(&b, 0);
	testclient_request_wait(fd, PROTO_MSG_KERNEL_RESTART, &b, PROTO_MSG_OK,
	    60000, &u);
	msgpack_unpacked_destroy(&u);
	rtd_run(fd, ids + 3, 1, 1, &u);
	rtd_expect_str(&u.data, "status", "error");
	rtd_expect_str(rtd_cell(&u, 0), "status", "error");
	msgpack_unpacked_destroy(&u);
	printf("ok: KERNEL_RESTART -> OK, state gone (NameError)\n");

	/* Kernel death: kernel_died, later cells not_run, room usable. */
	rtd_run(fd, ids + 4, 2, 1, &u);
	rtd_expect_str(&u.data, "status", "kernel_died");
	rtd_expect_str(rtd_cell(&u, 0), "status", "kernel_died");
	rtd_expect_str(rtd_cell(&u, 1), "status", "not_run");
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_ROOM_GET, &b, PROTO_MSG_ROOM_CONTENT,
	    &u);
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "cell_ids");
	msgpack_pack_array(&b.pk, 1);
	proto_pack_cstr(&b.pk, ids[2]);
	free(testclient_expect_error(fd, PROTO_MSG_EXEC_RUN, &b,
	    "kernel_unavailable"));
	printf("ok: kernel death -> kernel_died, not_run, room usable\n");

	/* A restart brings it back. */
	testclient_body(&b, 0);
	testclient_request_wait(fd, PROTO_MSG_KERNEL_RESTART, &b, PROTO_MSG_OK,
	    60000, &u);
	msgpack_unpacked_destroy(&u);
	rtd_run(fd, ids + 2, 2, 1, &u);
	rtd_expect_str(&u.data, "status", "done");
	msgpack_unpacked_destroy(&u);
	printf("ok: KERNEL_RESTART after death -> runs again\n");
	close(fd);
	rtd_free_ids(ids, 6);
	return (0);
}

/* An untitled room whose kernel is up; prints the agent and kernel pids. */
static int
rtd_room(const char *sock)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	int64_t			 agent, kpid, deadline;
	int			 fd;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	deadline = util_mono_ms() + 60000;
	for (;;) {
		testclient_body(&b, 0);
		testclient_request(fd, PROTO_MSG_KERNEL_INFO, &b,
		    PROTO_MSG_KERNEL_INFO_REPLY, &u);
		if (proto_obj_streq(proto_get(&u.data, "state"), "idle"))
			break;
		if (proto_obj_streq(proto_get(&u.data, "state"), "dead"))
			testclient_fail("kernel dead: %s",
			    proto_dup_str(&u.data, "message"));
		msgpack_unpacked_destroy(&u);
		if (util_mono_ms() > deadline)
			testclient_fail("kernel not idle within 60 s");
		usleep(100000);
	}
	if (proto_get_int(&u.data, "agent_pid", &agent) != 0 ||
	    proto_get_int(&u.data, "pid", &kpid) != 0)
		testclient_fail("KERNEL_INFO_REPLY without pids");
	printf("%lld %lld\n", (long long)agent, (long long)kpid);
	msgpack_unpacked_destroy(&u);
	close(fd);
	return (0);
}

/*
 * Open PATH (create it when it does not exist), insert a markdown cell
 * and save; prints the path the daemon saved to.  With save 0, only open
 * (which loads the file) and print the notebook id.
 */
static int
rtd_save(const char *sock, const char *path, int save)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	const char		*src[] = { "saved by rtd-client" };
	char			*id, *msg, *cell;
	int			 fd;

	fd = testclient_connect(sock);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "path", path);
	testclient_request(fd, PROTO_MSG_ROOM_OPEN, &b, 0, &u);
	if (proto_get(&u.data, "notebook_id") == NULL) {
		msgpack_unpacked_destroy(&u);
		if (!save)
			testclient_fail("ROOM_OPEN %s failed", path);
		testclient_body(&b, 1);
		proto_pack_str(&b.pk, "path", path);
		if (testclient_request(fd, PROTO_MSG_ROOM_CREATE, &b, 0,
		    &u) != PROTO_MSG_ROOM_JOINED) {
			msg = proto_dup_str(&u.data, "message");
			printf("error: %s\n", msg != NULL ? msg : "?");
			return (1);
		}
	}
	id = testclient_str(&u.data, "notebook_id");
	msgpack_unpacked_destroy(&u);
	if (!save) {
		printf("%s\n", id);
		free(id);
		close(fd);
		return (0);
	}
	testclient_insert(fd, src, NULL, 1, &cell, NULL);
	free(cell);
	testclient_body(&b, 0);
	if (testclient_request_wait(fd, PROTO_MSG_ROOM_SAVE, &b, 0, 10000,
	    &u) != PROTO_MSG_ROOM_SAVE_REPLY) {
		msg = proto_dup_str(&u.data, "message");
		printf("error: %s\n", msg != NULL ? msg : "?");
		return (1);
	}
	msg = testclient_str(&u.data, "path");
	printf("%s\n", msg);
	free(msg);
	free(id);
	msgpack_unpacked_destroy(&u);
	close(fd);
	return (0);
}

/*
 * An untitled room; run each CODE as one cell of one run and write the
 * final EXEC_STATE, as JSON, to out.  Prints the agent's pid.
 */
static int
rtd_runcells(const char *sock, const char *out, char **codes,
    const size_t *lens, int n)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	struct json_object	*j;
	char			**ids, *eid, *status;
	int64_t			 agent = -1, deadline;
	FILE			*f;
	int			 fd, i;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	ids = xcalloc((size_t)n, sizeof *ids);
	testclient_insert(fd, (const char **)codes, lens, (size_t)n, ids,
	    NULL);
	/* Every cell runs, even after an error. */
	eid = testclient_submit(fd, ids, (size_t)n, 0);
	deadline = util_mono_ms() + 300000;
	for (;;) {
		testclient_exec_get(fd, eid, 30000, &u);
		status = testclient_str(&u.data, "status");
		if (strcmp(status, "queued") != 0 &&
		    strcmp(status, "running") != 0)
			break;
		free(status);
		msgpack_unpacked_destroy(&u);
		if (util_mono_ms() > deadline)
			testclient_fail("run %s not done within 300 s", eid);
	}
	free(status);
	if ((f = fopen(out, "w")) == NULL)
		testclient_fail("%s: %s", out, strerror(errno));
	j = mpjson_unpack(&u.data);
	fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), f);
	fclose(f);
	json_object_put(j);
	msgpack_unpacked_destroy(&u);

	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_KERNEL_INFO, &b,
	    PROTO_MSG_KERNEL_INFO_REPLY, &u);
	proto_get_int(&u.data, "agent_pid", &agent);
	printf("%lld\n", (long long)agent);
	msgpack_unpacked_destroy(&u);
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(eid);
	close(fd);
	return (0);
}

/* As rtd_runcells, each cell's source the bytes of a file. */
static int
rtd_runfiles(const char *sock, const char *out, char **files, int n)
{
	char	**codes;
	size_t	 *lens;
	FILE	 *f;
	int	  i, rc;

	codes = xcalloc((size_t)n, sizeof *codes);
	lens = xcalloc((size_t)n, sizeof *lens);
	for (i = 0; i < n; i++) {
		if ((f = fopen(files[i], "rb")) == NULL ||
		    fseek(f, 0, SEEK_END) != 0 || (lens[i] = ftell(f)) ==
		    (size_t)-1 || fseek(f, 0, SEEK_SET) != 0)
			testclient_fail("%s: %s", files[i], strerror(errno));
		codes[i] = xmalloc(lens[i] + 1);
		if (fread(codes[i], 1, lens[i], f) != lens[i])
			testclient_fail("%s: short read", files[i]);
		fclose(f);
	}
	rc = rtd_runcells(sock, out, codes, lens, n);
	for (i = 0; i < n; i++)
		free(codes[i]);
	free(codes);
	free(lens);
	return (rc);
}

/* ROOM_EDIT of n copies of one edit; the reply within timeout ms. */
static void
rtd_edit_many(int fd, size_t n, const char *op, const char *source,
    uint16_t expect, int timeout, msgpack_unpacked *u)
{
	struct mpbuf	b;
	size_t		i;

	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "edits");
	msgpack_pack_array(&b.pk, n);
	for (i = 0; i < n; i++) {
		msgpack_pack_map(&b.pk, 3);
		proto_pack_str(&b.pk, "op", op);
		if (strcmp(op, "insert") == 0)
			proto_pack_str(&b.pk, "after", "BOTTOM");
		else
			proto_pack_int(&b.pk, "cell_id", 0);
		proto_pack_str(&b.pk, "source", source);
	}
	testclient_request_wait(fd, PROTO_MSG_ROOM_EDIT, &b, expect, timeout,
	    u);
}

/* ROOM_GET: the number of cells, or -1 with *u the ERROR. */
static int64_t
rtd_count(int fd, msgpack_unpacked *u)
{
	struct mpbuf		 b;
	const msgpack_object	*cells;

	testclient_body(&b, 0);
	testclient_request_wait(fd, PROTO_MSG_ROOM_GET, &b, 0, 30000, u);
	if ((cells = proto_get_array(&u->data, "cells")) == NULL)
		return (-1);
	return ((int64_t)cells->via.array.size);
}

static void
rtd_expect_too_large(msgpack_unpacked *u, const char *code, const char *what)
{
	const char	*got, *msg;
	size_t		 len, mlen;

	got = proto_get_str(&u->data, "code", &len);
	msg = proto_get_str(&u->data, "message", &mlen);
	if (got == NULL || strlen(code) != len || memcmp(got, code, len) != 0 ||
	    msg == NULL || !proto_obj_streq(proto_get(&u->data, "reason"),
	    "too_large"))
		testclient_fail("%s: wanted ERROR %s, too_large", what, code);
	printf("ok: %s -> ERROR %s: %.*s\n", what, code, (int)mlen, msg);
}

/*
 * Replies near and past their frame caps are answered, and a batch whose
 * reply could not be sent is refused before any of it is applied.
 */
static int
rtd_replies(const char *sock)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	const msgpack_object	*cells;
	const char		*code =
				    "from IPython.display import display\n"
				    "for i in range(80):\n"
				    "    display({'text/plain': 'x' * 900000}, "
				    "raw=True)\n";
	struct proto_header	 hdr;
	char			*big, *id, *cid, *msg;
	int64_t			 n;
	size_t			 i;
	int			 fd, fd2, fd3, omitted;

	fd = testclient_connect(sock);
	testclient_body(&b, 0);
	testclient_request(fd, PROTO_MSG_ROOM_CREATE, &b, PROTO_MSG_ROOM_JOINED,
	    &u);
	id = testclient_str(&u.data, "notebook_id");
	msgpack_unpacked_destroy(&u);

	/* A run whose outputs (80 of 900 KB, each inline) pass 64 MiB. */
	testclient_insert(fd, &code, NULL, 1, &cid, NULL);
	rtd_run(fd, &cid, 1, 1, &u);
	rtd_expect_str(&u.data, "status", "done");
	if (proto_get_bool(&u.data, "outputs_omitted", &omitted) != 0 ||
	    !omitted)
		testclient_fail("EXEC_STATE over its cap without "
		    "outputs_omitted");
	msg = proto_dup_str(&u.data, "message");
	if (msg == NULL || strstr(msg, "left out") == NULL)
		testclient_fail("EXEC_STATE over its cap does not say why");
	printf("ok: EXEC_STATE of 72 MB of outputs answered: %s\n", msg);
	free(msg);
	msgpack_unpacked_destroy(&u);
	free(cid);
	rtd_edit_many(fd, 1, "delete", "", PROTO_MSG_ROOM_EDIT_REPLY, 30000,
	    &u);
	msgpack_unpacked_destroy(&u);

	/* A batch at the limit: one cell id per edit in the reply. */
	rtd_edit_many(fd, 10, "insert", "", PROTO_MSG_ROOM_EDIT_REPLY, 30000,
	    &u);
	msgpack_unpacked_destroy(&u);
	rtd_edit_many(fd, PROTO_EDIT_MAX_EDITS, "edit", "",
	    PROTO_MSG_ROOM_EDIT_REPLY, 120000, &u);
	cells = proto_get_array(&u.data, "cells");
	if (cells == NULL || cells->via.array.size != PROTO_EDIT_MAX_EDITS)
		testclient_fail("ROOM_EDIT_REPLY of %d edits lacks cells",
		    PROTO_EDIT_MAX_EDITS);
	msgpack_unpacked_destroy(&u);
	if ((n = rtd_count(fd, &u)) != 10)
		testclient_fail("%lld cells, wanted 10", (long long)n);
	msgpack_unpacked_destroy(&u);
	printf("ok: ROOM_EDIT of %d edits answered\n", PROTO_EDIT_MAX_EDITS);

	/* Past the batch limit: refused, nothing applied. */
	rtd_edit_many(fd, PROTO_EDIT_MAX_EDITS + 1, "edit", "changed",
	    PROTO_MSG_ERROR, 60000, &u);
	if (!proto_obj_streq(proto_get(&u.data, "code"), "invalid_argument"))
		testclient_fail("an oversized batch: not invalid_argument");
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 0);
	testclient_request_wait(fd, PROTO_MSG_ROOM_GET, &b,
	    PROTO_MSG_ROOM_CONTENT, 30000, &u);
	cells = proto_get_array(&u.data, "cells");
	if (cells == NULL ||
	    !proto_obj_streq(proto_get(&cells->via.array.ptr[0], "source"), ""))
		testclient_fail("an oversized batch was applied");
	msgpack_unpacked_destroy(&u);
	printf("ok: ROOM_EDIT of %d edits refused, nothing applied\n",
	    PROTO_EDIT_MAX_EDITS + 1);

	/* Content past ROOM_CONTENT's 64 MiB: a typed error, not silence. */
	for (i = 0; i < 10; i++) {
		rtd_edit_many(fd, 1, "delete", "", PROTO_MSG_ROOM_EDIT_REPLY,
		    30000, &u);
		msgpack_unpacked_destroy(&u);
	}
	big = xmalloc(14 * 1024 * 1024 + 1);
	memset(big, 'x', 14 * 1024 * 1024);
	big[14 * 1024 * 1024] = '\0';
	for (i = 0; i < 5; i++) {
		rtd_edit_many(fd, 1, "insert", big, PROTO_MSG_ROOM_EDIT_REPLY,
		    30000, &u);
		msgpack_unpacked_destroy(&u);
	}
	free(big);
	if (rtd_count(fd, &u) != -1)
		testclient_fail("ROOM_GET of 70 MB answered ROOM_CONTENT");
	rtd_expect_too_large(&u, "notebook_unavailable", "ROOM_GET of 70 MB");
	msgpack_unpacked_destroy(&u);

	fd2 = testclient_connect(sock);
	testclient_body(&b, 1);
	proto_pack_str(&b.pk, "notebook_id", id);
	testclient_request_wait(fd2, PROTO_MSG_ROOM_OPEN, &b, PROTO_MSG_ERROR,
	    30000, &u);
	rtd_expect_too_large(&u, "notebook_unavailable", "ROOM_OPEN of 70 MB");
	msgpack_unpacked_destroy(&u);
	testclient_body(&b, 0);
	testclient_request(fd2, PROTO_MSG_ROOM_GET, &b, PROTO_MSG_ERROR, &u);
	msgpack_unpacked_destroy(&u);
	printf("ok: the refused ROOM_OPEN did not join\n");
	close(fd2);

	/* The room still serves: less content, and it reads again. */
	for (i = 0; i < 2; i++) {
		rtd_edit_many(fd, 1, "delete", "", PROTO_MSG_ROOM_EDIT_REPLY,
		    30000, &u);
		msgpack_unpacked_destroy(&u);
	}
	if ((n = rtd_count(fd, &u)) != 3)
		testclient_fail("%lld cells, wanted 3", (long long)n);
	msgpack_unpacked_destroy(&u);
	printf("ok: after deleting two big cells it reads again\n");

	/*
	 * Another peer hears of clearing 10,000 cells' outputs: an event
	 * past 64 KiB (the old cap), from batches within the limit.
	 */
	fd3 = testclient_connect(sock);
	free(testclient_open(fd3, NULL, id));
	for (i = 0; i < 10000 / PROTO_EDIT_MAX_EDITS; i++) {
		rtd_edit_many(fd, PROTO_EDIT_MAX_EDITS, "insert", "",
		    PROTO_MSG_ROOM_EDIT_REPLY, 60000, &u);
		msgpack_unpacked_destroy(&u);
	}
	testclient_body(&b, 1);
	proto_pack_key(&b.pk, "edits");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_str(&b.pk, "op", "clear_outputs");	/* every cell */
	testclient_request_wait(fd, PROTO_MSG_ROOM_EDIT, &b,
	    PROTO_MSG_ROOM_EDIT_REPLY, 60000, &u);
	msgpack_unpacked_destroy(&u);
	/* The inserts' events come first; the clear's names every cell. */
	for (;;) {
		if (frameio_read(fd3, 10000, &hdr, &u, &msg) != 0)
			testclient_fail("no ROOM_CHANGED for clearing 10000 "
			    "cells: %s", msg);
		cells = proto_get_array(&u.data, "cell_ids");
		if (hdr.type == PROTO_MSG_ROOM_CHANGED && cells != NULL &&
		    cells->via.array.size >= 10000)
			break;
		msgpack_unpacked_destroy(&u);
	}
	msgpack_unpacked_destroy(&u);
	close(fd3);
	printf("ok: ROOM_CHANGED of clearing 10000 cells reaches another "
	    "peer\n");
	free(id);
	close(fd);
	return (0);
}

/* Does o hold, at any depth, the string want? */
static int
rtd_has_str(const msgpack_object *o, const char *want)
{
	uint32_t	i;

	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		return (o->via.str.size == strlen(want) &&
		    memcmp(o->via.str.ptr, want, o->via.str.size) == 0);
	case MSGPACK_OBJECT_ARRAY:
		for (i = 0; i < o->via.array.size; i++) {
			if (rtd_has_str(&o->via.array.ptr[i], want))
				return (1);
		}
		return (0);
	case MSGPACK_OBJECT_MAP:
		for (i = 0; i < o->via.map.size; i++) {
			if (rtd_has_str(&o->via.map.ptr[i].val, want))
				return (1);
		}
		return (0);
	default:
		return (0);
	}
}

/*
 * Reads while a cell runs see each output as it comes: a stream that
 * grows and a display that is updated in place, both changes of a cell
 * already read (each change drops the cell's kept version, docs/decisions/
 * 101).
 */
static int
rtd_streamread(const char *sock)
{
	const char		*src = "import time\n"
				    "from IPython.display import display\n"
				    "print('a', flush=True)\n"
				    "time.sleep(0.5)\n"
				    "print('b', flush=True)\n"
				    "h = display('x', display_id=True)\n"
				    "time.sleep(0.5)\n"
				    "h.update('y')\n"
				    "time.sleep(3)\n";
	const char		*want[] = { "a\n", "a\nb\n", "'y'" };
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	const msgpack_object	*c, *outs;
	char			*id, *eid;
	int64_t			 deadline;
	int			 fd, seen = 0, reads = 0, i;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	id = testclient_insert1(fd, src, NULL);
	eid = testclient_submit(fd, &id, 1, -1);
	/* The kernel starts first; then 2.5 s for what 1 s prints. */
	deadline = util_mono_ms() + 60000;
	while (seen < (int)(sizeof want / sizeof want[0])) {
		if (util_mono_ms() > deadline)
			testclient_fail("streamread: after %d reads, the "
			    "outputs never showed \"%s\"", reads, want[seen]);
		testclient_body(&b, 0);
		testclient_request(fd, PROTO_MSG_ROOM_GET, &b,
		    PROTO_MSG_ROOM_CONTENT, &u);
		reads++;
		c = rtd_cell(&u, 0);
		if ((outs = proto_get_array(c, "outputs")) == NULL)
			testclient_fail("streamread: a cell without outputs");
		for (i = (int)(sizeof want / sizeof want[0]) - 1; i >= seen;
		    i--) {
			if (rtd_has_str(outs, want[i])) {
				if (seen == 0)
					deadline = util_mono_ms() + 2500;
				seen = i + 1;
				break;
			}
		}
		msgpack_unpacked_destroy(&u);
		usleep(50000);
	}
	testclient_exec_get(fd, eid, 30000, &u);
	msgpack_unpacked_destroy(&u);
	printf("ok: %d reads during a run saw its stream grow and its "
	    "display updated\n", reads);
	free(id);
	free(eid);
	close(fd);
	return (0);
}

/* Open path, then n whole reads of it. */
static int
rtd_reads(const char *sock, const char *path, int n)
{
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	int			 fd, i;

	fd = testclient_connect(sock);
	free(testclient_open(fd, path, NULL));
	for (i = 0; i < n; i++) {
		testclient_body(&b, 0);
		testclient_request(fd, PROTO_MSG_ROOM_GET, &b,
		    PROTO_MSG_ROOM_CONTENT, &u);
		msgpack_unpacked_destroy(&u);
	}
	printf("ok: %d reads\n", n);
	close(fd);
	return (0);
}

int
main(int argc, char **argv)
{
	testclient_init("rtd-client", 5000);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "exec") == 0)
		return (rtd_exec(argv[2], argv[3]));
	if (argc == 4 && strcmp(argv[1], "errors") == 0)
		return (rtd_errors(argv[2], argv[3]));
	if (argc == 3 && strcmp(argv[1], "mismatch") == 0)
		return (rtd_mismatch(argv[2]));
	if (argc == 3 && strcmp(argv[1], "room") == 0)
		return (rtd_room(argv[2]));
	if (argc == 3 && strcmp(argv[1], "kernel") == 0)
		return (rtd_kernel(argv[2]));
	if (argc == 4 && strcmp(argv[1], "open") == 0)
		return (rtd_save(argv[2], argv[3], 0));
	if (argc == 4 && strcmp(argv[1], "save") == 0)
		return (rtd_save(argv[2], argv[3], 1));
	if (argc >= 5 && strcmp(argv[1], "run") == 0)
		return (rtd_runcells(argv[2], argv[3], argv + 4, NULL,
		    argc - 4));
	if (argc >= 5 && strcmp(argv[1], "runfile") == 0)
		return (rtd_runfiles(argv[2], argv[3], argv + 4, argc - 4));
	if (argc == 3 && strcmp(argv[1], "replies") == 0)
		return (rtd_replies(argv[2]));
	if (argc == 3 && strcmp(argv[1], "streamread") == 0)
		return (rtd_streamread(argv[2]));
	if (argc == 5 && strcmp(argv[1], "reads") == 0)
		return (rtd_reads(argv[2], argv[3], atoi(argv[4])));
	fprintf(stderr, "usage: rtd-client "
	    "exec|errors|mismatch|room|kernel|open|save|replies|streamread "
	    "SOCKET [PATH]\n"
	    "       rtd-client reads SOCKET PATH N\n"
	    "       rtd-client run SOCKET OUT.json CODE...\n"
	    "       rtd-client runfile SOCKET OUT.json FILE...\n");
	return (2);
}
