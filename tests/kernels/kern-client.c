/* SPDX-License-Identifier: ISC */
/*
 * kern-client.c: the kernel lifecycle tests' client of runtimed.  Each
 * mode drives a real daemon, agent and ipykernel and exits non-zero with
 * a message on the first answer that is not what PROTOCOL.md promises.
 * Requests and replies are handled as JSON (mpjson) to keep scenarios
 * short.
 *
 *	kern-client death SOCK		SIGKILL and os._exit during a run
 *	kern-client hang SOCK		SIGSTOP: unresponsive, then dead
 *	kern-client specs SOCK		KERNEL_LIST, KERNEL_SELECT, message
 *					interrupt, unknown names
 *	kern-client idle SOCK KEEP	idle teardown and its cancel
 *	kern-client pool SOCK DIR I	warm pool adoption and cwd
 *	kern-client display SOCK	update_display_data, clear_output,
 *					stream merge, comm, input()
 *	kern-client blob SOCK		a 2 MiB output through the blob store
 *	kern-client durable1 SOCK FILE	runs, then state for durable2
 *	kern-client durable2 SOCK FILE	after kill -9 and restart
 *	kern-client rooms SOCK N	N rooms with live kernels (for stop)
 */

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tests/lib/testclient.h"

static struct json_object	*kc_json(const char *, ...) printflike(1, 2);
static const char	*kc_dump(struct json_object *);
static struct json_object	*kc_call(int, uint16_t, struct json_object *,
		    int, uint16_t *);
static struct json_object	*kc_req(int, uint16_t, struct json_object *,
		    uint16_t, int);
static char	*kc_error(int, uint16_t, struct json_object *, const char *);
static struct json_object	*kc_get(struct json_object *, const char *);
static const char	*kc_str(struct json_object *, const char *);
static int64_t	kc_int(struct json_object *, const char *);
static void	kc_expect(struct json_object *, const char *, const char *);
static void	kc_expect_sub(struct json_object *, const char *, const char *);
static struct json_object	*kc_create(int, const char *, const char *);
static struct json_object	*kc_info(int);
static struct json_object	*kc_wait_state(int, const char *, int64_t);
static struct json_object	*kc_get_run(int, const char *, int);
static struct json_object	*kc_run(int, char **, size_t);
static struct json_object	*kc_run1(int, const char *, char **);
static void	kc_wait_running(int, const char *);
static void	kc_restart(int);
static char	*kc_text(struct json_object *, size_t);
static int	kc_gone(pid_t);
static int	kc_wait_gone(pid_t, int64_t);
static int	kc_death(const char *);
static int	kc_hang(const char *);
static int	kc_specs(const char *);
static int	kc_idle(const char *, int);
static int	kc_pool(const char *, const char *, int);
static int	kc_display(const char *);
static int	kc_blob(const char *);
static int	kc_durable1(const char *, const char *);
static int	kc_durable2(const char *, const char *);
static int	kc_rooms(const char *, int);
static int	kc_cmp64(const void *, const void *);
static int	kc_bench(const char *, const char *, int);

/* A JSON object from printf-style text. */
static struct json_object * printflike(1, 2)
kc_json(const char *fmt, ...)
{
	struct json_object	*j;
	va_list			 ap;
	char			*text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	if ((j = json_tokener_parse(text)) == NULL)
		testclient_fail("bad test JSON: %s", text);
	free(text);
	return (j);
}

static const char *
kc_dump(struct json_object *j)
{
	return (json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * Send type with body (consumed; NULL for {}), wait for its reply
 * (events skipped) and return it as JSON; *rtype gets its type.
 */
static struct json_object *
kc_call(int fd, uint16_t type, struct json_object *body, int timeout,
    uint16_t *rtype)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct json_object	*j;
	struct mpbuf		 b;
	uint32_t		 id;
	char			*cause = NULL;

	mpbuf_init(&b);
	if (body == NULL)
		msgpack_pack_map(&b.pk, 0);
	else
		mpjson_pack(&b.pk, body);
	json_object_put(body);
	if (testclient_send(fd, type, &b, &id) != 0)
		testclient_fail("write %s", proto_msg_name(type));
	if (testclient_wait_reply(fd, id, timeout, &hdr, &u, &cause) != 0)
		testclient_fail("%s: read: %s", proto_msg_name(type), cause);
	j = mpjson_unpack(&u.data);
	msgpack_unpacked_destroy(&u);
	*rtype = hdr.type;
	return (j);
}

/* kc_call that must answer expect. */
static struct json_object *
kc_req(int fd, uint16_t type, struct json_object *body, uint16_t expect,
    int timeout)
{
	struct json_object	*j;
	uint16_t		 rtype;

	j = kc_call(fd, type, body, timeout, &rtype);
	if (rtype != expect)
		testclient_fail("%s: got %s %s, wanted %s",
		    proto_msg_name(type), proto_msg_name(rtype), kc_dump(j),
		    proto_msg_name(expect));
	return (j);
}

/* kc_call that must answer ERROR {code}; returns the message. */
static char *
kc_error(int fd, uint16_t type, struct json_object *body, const char *code)
{
	struct json_object	*j, *v;
	char			*msg;

	j = kc_req(fd, type, body, PROTO_MSG_ERROR, 10000);
	if (!json_object_object_get_ex(j, "code", &v) ||
	    strcmp(json_object_get_string(v), code) != 0)
		testclient_fail("%s: %s, wanted code %s", proto_msg_name(type),
		    kc_dump(j), code);
	json_object_object_get_ex(j, "message", &v);
	msg = xstrdup(json_object_get_string(v));
	printf("ok: %s -> ERROR %s (%s)\n", proto_msg_name(type), code, msg);
	json_object_put(j);
	return (msg);
}

/* Member by path "a.b.0.c" (numbers index arrays), or NULL. */
static struct json_object *
kc_get(struct json_object *j, const char *path)
{
	char	*copy, *next, *tok, *end;
	long	 i;

	copy = next = xstrdup(path);
	while (j != NULL && (tok = strsep(&next, ".")) != NULL) {
		i = strtol(tok, &end, 10);
		if (*end == '\0' && json_object_is_type(j, json_type_array))
			j = i < (long)json_object_array_length(j) ?
			    json_object_array_get_idx(j, i) : NULL;
		else if (!json_object_is_type(j, json_type_object) ||
		    !json_object_object_get_ex(j, tok, &j))
			j = NULL;
	}
	free(copy);
	return (j);
}

static const char *
kc_str(struct json_object *j, const char *path)
{
	struct json_object	*v = kc_get(j, path);

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

static int64_t
kc_int(struct json_object *j, const char *path)
{
	struct json_object	*v = kc_get(j, path);

	if (v == NULL || !json_object_is_type(v, json_type_int))
		testclient_fail("%s is not an integer in %s", path,
		    kc_dump(j));
	return (json_object_get_int64(v));
}

static void
kc_expect(struct json_object *j, const char *path, const char *want)
{
	const char	*s = kc_str(j, path);

	if (s == NULL || strcmp(s, want) != 0)
		testclient_fail("%s is %s, wanted %s, in %.2000s", path,
		    s != NULL ? s : "(none)", want, kc_dump(j));
}

static void
kc_expect_sub(struct json_object *j, const char *path, const char *want)
{
	const char	*s = kc_str(j, path);

	if (s == NULL || strstr(s, want) == NULL)
		testclient_fail("%s is %s, wanted it to contain %s, in %.2000s",
		    path, s != NULL ? s : "(none)", want, kc_dump(j));
}

/* ROOM_CREATE (path may be NULL, kernel may be NULL); returns joined. */
static struct json_object *
kc_create(int fd, const char *path, const char *kernel)
{
	struct json_object	*body = json_object_new_object();

	if (path != NULL)
		json_object_object_add(body, "path",
		    json_object_new_string(path));
	if (kernel != NULL)
		json_object_object_add(body, "kernel",
		    json_object_new_string(kernel));
	return (kc_req(fd, PROTO_MSG_ROOM_CREATE, body,
	    PROTO_MSG_ROOM_JOINED, 10000));
}

/* KERNEL_INFO. */
static struct json_object *
kc_info(int fd)
{
	return (kc_req(fd, PROTO_MSG_KERNEL_INFO, NULL,
	    PROTO_MSG_KERNEL_INFO_REPLY, 10000));
}

/* Poll KERNEL_INFO until state (max ms); returns the reply. */
static struct json_object *
kc_wait_state(int fd, const char *state, int64_t ms)
{
	struct json_object	*j;
	int64_t			 deadline = util_mono_ms() + ms;
	const char		*s;

	for (;;) {
		j = kc_info(fd);
		s = kc_str(j, "state");
		if (s != NULL && strcmp(s, state) == 0)
			return (j);
		if (util_mono_ms() > deadline)
			testclient_fail("kernel state %s, not %s, after %lld "
			    "ms: %s", s != NULL ? s : "?", state, (long long)ms,
			    kc_dump(j));
		json_object_put(j);
		usleep(20000);
	}
}

/* EXEC_GET with a wait. */
static struct json_object *
kc_get_run(int fd, const char *eid, int wait_ms)
{
	struct json_object	*j;
	msgpack_unpacked	 u;

	testclient_exec_get(fd, eid, wait_ms, &u);
	j = mpjson_unpack(&u.data);
	msgpack_unpacked_destroy(&u);
	return (j);
}

/* Run and wait for the end (30 s). */
static struct json_object *
kc_run(int fd, char **ids, size_t n)
{
	struct json_object	*j;
	char			*eid;

	eid = testclient_submit(fd, ids, n, -1);
	j = kc_get_run(fd, eid, 30000);
	free(eid);
	return (j);
}

/* Run one new cell of source and wait. */
static struct json_object *
kc_run1(int fd, const char *src, char **idp)
{
	struct json_object	*j;
	char			*id;

	testclient_insert(fd, &src, NULL, 1, &id, NULL);
	j = kc_run(fd, &id, 1);
	if (idp != NULL)
		*idp = id;
	else
		free(id);
	return (j);
}

/* Wait until the first cell of run eid is running in the kernel. */
static void
kc_wait_running(int fd, const char *eid)
{
	struct json_object	*j;
	int64_t			 deadline = util_mono_ms() + 30000;
	const char		*s;

	for (;;) {
		j = kc_get_run(fd, eid, 0);
		s = kc_str(j, "cells.0.status");
		if (s != NULL && strcmp(s, "running") == 0) {
			json_object_put(j);
			return;
		}
		if (util_mono_ms() > deadline)
			testclient_fail("run never started: %s", kc_dump(j));
		json_object_put(j);
		usleep(20000);
	}
}

static void
kc_restart(int fd)
{
	json_object_put(kc_req(fd, PROTO_MSG_KERNEL_RESTART, NULL,
	    PROTO_MSG_OK, 70000));
}

/* Text of the outputs of cell i of an EXEC_STATE or ROOM_CONTENT. */
static char *
kc_text(struct json_object *j, size_t i)
{
	struct json_object	*outs, *o, *v;
	char			*text = xstrdup(""), *prev;
	char			 path[32];
	size_t			 k;

	snprintf(path, sizeof path, "cells.%zu.outputs", i);
	if ((outs = kc_get(j, path)) == NULL)
		return (text);
	for (k = 0; k < json_object_array_length(outs); k++) {
		o = json_object_array_get_idx(outs, k);
		if ((v = kc_get(o, "text")) == NULL)
			v = kc_get(o, "data.text/plain");
		if (v == NULL)
			v = kc_get(o, "ename");
		prev = text;
		xasprintf(&text, "%s%s", prev, v != NULL &&
		    json_object_is_type(v, json_type_string) ?
		    json_object_get_string(v) : "?");
		free(prev);
	}
	return (text);
}

/* Is pid gone (or a zombie)? */
static int
kc_gone(pid_t pid)
{
	char	 path[64], buf[512], *p;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (1);
	if (fgets(buf, sizeof buf, f) == NULL) {
		fclose(f);
		return (1);
	}
	fclose(f);
	p = strrchr(buf, ')');
	return (p != NULL && p[1] == ' ' && p[2] == 'Z');
}

static int
kc_wait_gone(pid_t pid, int64_t ms)
{
	int64_t	deadline = util_mono_ms() + ms;

	while (!kc_gone(pid)) {
		if (util_mono_ms() > deadline)
			return (0);
		usleep(10000);
	}
	return (1);
}

/*
 * Kernel death: SIGKILL of the kernel during a run, then os._exit from
 * a cell.  The run ends kernel_died, later cells not_run, quickly; the
 * room still answers and a restart brings the kernel back.
 */
static int
kc_death(const char *sock)
{
	const char		*src[] = { "import time; time.sleep(30)",
				    "print('never')" };
	const char		*ex[] = { "import os; os._exit(7)",
				    "print('never')" };
	struct json_object	*j;
	char			*ids[2], *eid;
	int64_t			 kpid, t0, ms;
	int			 fd;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	j = kc_wait_state(fd, "idle", 60000);
	kpid = kc_int(j, "pid");
	json_object_put(j);

	testclient_insert(fd, src, NULL, 2, ids, NULL);
	eid = testclient_submit(fd, ids, 2, -1);
	kc_wait_running(fd, eid);
	t0 = util_mono_ms();
	if (kill((pid_t)kpid, SIGKILL) != 0)
		testclient_fail("kill %lld: %s", (long long)kpid,
		    strerror(errno));
	j = kc_get_run(fd, eid, 10000);
	ms = util_mono_ms() - t0;
	kc_expect(j, "status", "kernel_died");
	kc_expect(j, "cells.0.status", "kernel_died");
	kc_expect(j, "cells.1.status", "not_run");
	kc_expect_sub(j, "message", "signal 9");
	if (ms > 1000)
		testclient_fail("kernel death noticed after %lld ms",
		    (long long)ms);
	printf("ok: SIGKILL of the kernel -> kernel_died, not_run in %lld ms "
	    "(%s)\n", (long long)ms, kc_str(j, "message"));
	json_object_put(j);
	free(eid);
	free(ids[0]);
	free(ids[1]);

	j = kc_info(fd);
	kc_expect(j, "state", "dead");
	json_object_put(j);
	json_object_put(kc_req(fd, PROTO_MSG_ROOM_GET, NULL,
	    PROTO_MSG_ROOM_CONTENT, 10000));
	kc_restart(fd);
	printf("ok: room answers after the death; restart -> OK\n");

	testclient_insert(fd, ex, NULL, 2, ids, NULL);
	t0 = util_mono_ms();
	j = kc_run(fd, ids, 2);
	kc_expect(j, "status", "kernel_died");
	kc_expect(j, "cells.0.status", "kernel_died");
	kc_expect(j, "cells.1.status", "not_run");
	kc_expect_sub(j, "message", "status 7");
	printf("ok: os._exit(7) in a cell -> kernel_died, not_run in %lld ms "
	    "(%s)\n", (long long)(util_mono_ms() - t0), kc_str(j, "message"));
	json_object_put(j);
	free(ids[0]);
	free(ids[1]);

	kc_restart(fd);
	j = kc_run1(fd, "print(6*7)", NULL);
	kc_expect(j, "status", "done");
	kc_expect(j, "cells.0.outputs.0.text", "42\n");
	json_object_put(j);
	printf("ok: runs again after the restart\n");
	close(fd);
	return (0);
}

/*
 * A hung kernel (SIGSTOP): reported unresponsive within a few seconds,
 * killed and reported dead after RUNTIMED_KERNEL_HUNG_SECS; the run in
 * flight ends kernel_died.  A SIGCONT before that bound recovers.
 */
static int
kc_hang(const char *sock)
{
	struct json_object	*j;
	char			*id, *eid;
	int64_t			 kpid, t0;
	const char		*src = "import time; time.sleep(60)";
	int			 fd;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	j = kc_wait_state(fd, "idle", 60000);
	kpid = kc_int(j, "pid");
	json_object_put(j);

	/* Stopped briefly, then continued: back to normal. */
	kill((pid_t)kpid, SIGSTOP);
	t0 = util_mono_ms();
	json_object_put(kc_wait_state(fd, "unresponsive", 5000));
	printf("ok: SIGSTOP -> unresponsive after %lld ms\n",
	    (long long)(util_mono_ms() - t0));
	kill((pid_t)kpid, SIGCONT);
	json_object_put(kc_wait_state(fd, "idle", 5000));
	printf("ok: SIGCONT -> idle again\n");

	/* Stopped during a run for longer than the bound: dead. */
	testclient_insert(fd, &src, NULL, 1, &id, NULL);
	eid = testclient_submit(fd, &id, 1, -1);
	kc_wait_running(fd, eid);
	kill((pid_t)kpid, SIGSTOP);
	t0 = util_mono_ms();
	j = kc_wait_state(fd, "unresponsive", 5000);
	printf("ok: SIGSTOP during a run -> unresponsive after %lld ms (%s)\n",
	    (long long)(util_mono_ms() - t0), kc_str(j, "message"));
	json_object_put(j);
	j = kc_get_run(fd, eid, 20000);
	kc_expect(j, "status", "kernel_died");
	kc_expect(j, "cells.0.status", "kernel_died");
	kc_expect_sub(j, "message", "unresponsive");
	printf("ok: hung kernel killed after %lld ms -> kernel_died (%s)\n",
	    (long long)(util_mono_ms() - t0), kc_str(j, "message"));
	json_object_put(j);
	if (!kc_wait_gone((pid_t)kpid, 5000))
		testclient_fail("hung kernel %lld still there",
		    (long long)kpid);
	kc_restart(fd);
	j = kc_run1(fd, "print('back')", NULL);
	kc_expect(j, "status", "done");
	json_object_put(j);
	printf("ok: restart after the hang -> runs again\n");
	free(id);
	free(eid);
	close(fd);
	return (0);
}

/*
 * Kernelspecs: KERNEL_LIST (room-less), an unknown name on ROOM_CREATE
 * and KERNEL_SELECT, case-insensitive names, a message-mode interrupt,
 * and KERNEL_SELECT replacing the kernel.  The test's JUPYTER_PATH has
 * "pymsg", python3 with interrupt_mode "message".
 */
static int
kc_specs(const char *sock)
{
	struct json_object	*j, *k;
	const char		*src = "import time; time.sleep(30)";
	char			*msg, *id, *eid;
	size_t			 i;
	int			 fd, found = 0, fd2;

	fd = testclient_connect(sock);
	j = kc_req(fd, PROTO_MSG_KERNEL_LIST, NULL,
	    PROTO_MSG_KERNEL_LIST_REPLY, 10000);
	kc_expect(j, "default", "python3");
	k = kc_get(j, "kernels");
	for (i = 0; k != NULL && i < json_object_array_length(k); i++) {
		if (strcmp(kc_str(json_object_array_get_idx(k, i), "name"),
		    "pymsg") == 0)
			found |= 1;
		if (strcmp(kc_str(json_object_array_get_idx(k, i), "name"),
		    "python3") == 0)
			found |= 2;
	}
	if (found != 3)
		testclient_fail("KERNEL_LIST lacks pymsg or python3: %s",
		    kc_dump(j));
	printf("ok: KERNEL_LIST -> %s\n", kc_dump(j));
	json_object_put(j);


	/* Case-insensitive: PyMsg is pymsg. */
	free(testclient_create(fd, NULL, "PyMsg"));
	j = kc_wait_state(fd, "idle", 60000);
	kc_expect(j, "display_name", "Python 3 (message interrupt)");
	json_object_put(j);
	testclient_insert(fd, &src, NULL, 1, &id, NULL);
	eid = testclient_submit(fd, &id, 1, -1);
	kc_wait_running(fd, eid);
	usleep(200000);
	json_object_put(kc_req(fd, PROTO_MSG_KERNEL_INTERRUPT, NULL,
	    PROTO_MSG_OK, 10000));
	j = kc_get_run(fd, eid, 10000);
	kc_expect(j, "status", "interrupted");
	kc_expect(j, "cells.0.status", "interrupted");
	kc_expect(j, "cells.0.outputs.0.ename", "KeyboardInterrupt");
	json_object_put(j);
	printf("ok: message-mode interrupt -> interrupted, "
	    "KeyboardInterrupt\n");
	free(eid);

	msg = kc_error(fd, PROTO_MSG_KERNEL_SELECT,
	    kc_json("{\"kernel\":\"nosuchkernel\"}"), "kernel_unavailable");
	if (strstr(msg, "python3") == NULL)
		testclient_fail("message does not list the kernels: %s", msg);
	free(msg);
	free(kc_error(fd, PROTO_MSG_KERNEL_SELECT, kc_json("{\"kernel\":3}"),
	    "invalid_argument"));

	/* Select python3: a new kernel of that spec, runs interrupted. */
	json_object_put(kc_run1(fd, "x = 1", NULL));
	eid = testclient_submit(fd, &id, 1, -1);
	kc_wait_running(fd, eid);
	json_object_put(kc_req(fd, PROTO_MSG_KERNEL_SELECT,
	    kc_json("{\"kernel\":\"Python3\"}"), PROTO_MSG_OK, 10000));
	j = kc_get_run(fd, eid, 10000);
	kc_expect(j, "status", "interrupted");
	json_object_put(j);
	j = kc_wait_state(fd, "idle", 60000);
	kc_expect(j, "name", "python3");
	kc_expect(j, "display_name", "Python 3 (ipykernel)");
	json_object_put(j);
	j = kc_run1(fd, "print('x' in dir())", NULL);
	kc_expect(j, "cells.0.outputs.0.text", "False\n");
	json_object_put(j);
	j = kc_req(fd, PROTO_MSG_ROOM_GET, NULL, PROTO_MSG_ROOM_CONTENT,
	    10000);
	kc_expect(j, "metadata.kernelspec.name", "python3");
	json_object_put(j);
	printf("ok: KERNEL_SELECT Python3 -> new python3 kernel, run "
	    "interrupted, kernelspec metadata updated\n");
	free(eid);
	free(id);

	/* A connection without a room. */
	fd2 = testclient_connect(sock);
	free(kc_error(fd2, PROTO_MSG_KERNEL_SELECT,
	    kc_json("{\"kernel\":\"python3\"}"), "invalid_argument"));
	msg = kc_error(fd2, PROTO_MSG_ROOM_CREATE,
	    kc_json("{\"kernel\":\"nosuchkernel\"}"), "kernel_unavailable");
	if (strstr(msg, "python3") == NULL || strstr(msg, "pymsg") == NULL)
		testclient_fail("message does not list the kernels: %s", msg);
	free(msg);
	close(fd2);
	close(fd);
	return (0);
}

/*
 * Idle teardown: the last client leaves, the kernel goes after the
 * keepalive; a client coming back in time cancels it; the next run
 * after a teardown starts a kernel again.
 */
static int
kc_idle(const char *sock, int keep)
{
	struct json_object	*j, *r;
	char			*nbid, *id;
	int64_t			 agent, kpid, t0;
	size_t			 i;
	int			 fd, fd2;

	fd = testclient_connect(sock);
	j = kc_create(fd, NULL, NULL);
	nbid = xstrdup(kc_str(j, "notebook_id"));
	json_object_put(j);
	j = kc_wait_state(fd, "idle", 60000);
	agent = kc_int(j, "agent_pid");
	kpid = kc_int(j, "pid");
	json_object_put(j);
	json_object_put(kc_run1(fd, "v = 'kept'", NULL));

	/* Leave and come back within the keepalive: nothing happens. */
	close(fd);
	usleep(keep * 1000000 / 3);
	fd = testclient_connect(sock);
	json_object_put(kc_req(fd, PROTO_MSG_ROOM_OPEN,
	    kc_json("{\"notebook_id\":\"%s\"}", nbid), PROTO_MSG_ROOM_JOINED,
	    10000));
	usleep(keep * 1000000 + 500000);
	if (kc_gone((pid_t)kpid) || kc_gone((pid_t)agent))
		testclient_fail("kernel went although a client came back");
	j = kc_run1(fd, "print(v)", NULL);
	kc_expect(j, "cells.0.outputs.0.text", "kept\n");
	json_object_put(j);
	printf("ok: a client back within the keepalive cancels the "
	    "teardown (state kept)\n");

	/* Leave for good: the agent and kernel go after the keepalive. */
	close(fd);
	t0 = util_mono_ms();
	if (!kc_wait_gone((pid_t)kpid, keep * 1000 + 8000) ||
	    !kc_wait_gone((pid_t)agent, 5000))
		testclient_fail("kernel %lld / agent %lld still there %d s "
		    "after the " "last client left", (long long)kpid,
		    (long long)agent, keep + 8);
	printf("ok: kernel and agent gone %lld ms after the last client "
	    "left (keepalive %d s)\n", (long long)(util_mono_ms() - t0),
	    keep);

	/* A watcher without a room is not a client of the room. */
	fd2 = testclient_connect(sock);
	j = kc_req(fd2, PROTO_MSG_ROOM_LIST, NULL, PROTO_MSG_ROOM_LIST_REPLY,
	    10000);
	for (i = 0; i < json_object_array_length(kc_get(j, "rooms")); i++) {
		r = json_object_array_get_idx(kc_get(j, "rooms"), i);
		if (strcmp(kc_str(r, "notebook_id"), nbid) == 0)
			kc_expect(r, "kernel.state", "none");
	}
	printf("ok: ROOM_LIST says kernel none: %s\n", kc_dump(j));
	json_object_put(j);
	close(fd2);

	/* Back, and a run starts a kernel again. */
	fd = testclient_connect(sock);
	json_object_put(kc_req(fd, PROTO_MSG_ROOM_OPEN,
	    kc_json("{\"notebook_id\":\"%s\"}", nbid), PROTO_MSG_ROOM_JOINED,
	    10000));
	j = kc_run1(fd, "print('v' in dir())", &id);
	kc_expect(j, "status", "done");
	kc_expect(j, "cells.0.outputs.0.text", "False\n");
	json_object_put(j);
	j = kc_info(fd);
	if (kc_int(j, "pid") == kpid)
		testclient_fail("the same kernel pid after a teardown");
	json_object_put(j);
	printf("ok: the next run after the teardown starts a new kernel\n");
	free(id);
	free(nbid);
	close(fd);
	return (0);
}

/*
 * Warm pool: a new notebook has no kernel until its first run, which
 * takes one that is already up, moved to the notebook's directory; the
 * first run is fast; the pool refills.
 */
static int
kc_pool(const char *sock, const char *dir, int i)
{
	struct json_object	*j;
	char			*path, *expect;
	int64_t			 t0, first;
	int			 fd;

	fd = testclient_connect(sock);
	xasprintf(&path, "%s/pool%d.ipynb", dir, i);
	t0 = util_mono_ms();
	j = kc_create(fd, path, NULL);
	kc_expect(j, "kernel.state", "none");
	json_object_put(j);
	j = kc_run1(fd, "import os; print(os.getcwd())", NULL);
	first = util_mono_ms() - t0;
	kc_expect(j, "status", "done");
	xasprintf(&expect, "%s\n", dir);
	kc_expect(j, "cells.0.outputs.0.text", expect);
	json_object_put(j);
	printf("ok: new notebook %d: no kernel at join, the pooled one at "
	    "the first run, cwd %s, done %lld ms after ROOM_CREATE\n", i, dir,
	    (long long)first);
	free(expect);
	free(path);
	close(fd);
	return (0);
}

/*
 * iopub: update_display_data across cells (room and run records),
 * clear_output(wait=True), merged streams, comm messages, input().
 */
static int
kc_display(const char *sock)
{
	struct json_object	*j, *r1, *room;
	char			*id1, *eid1, *t;
	const char		*src = "h = display('one', display_id=True)";
	int			 fd;
	int64_t			 t0;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	json_object_put(kc_wait_state(fd, "idle", 60000));

	testclient_insert(fd, &src, NULL, 1, &id1, NULL);
	eid1 = testclient_submit(fd, &id1, 1, -1);
	r1 = kc_get_run(fd, eid1, 30000);
	kc_expect(r1, "cells.0.outputs.0.data.text/plain", "'one'");
	json_object_put(r1);
	j = kc_run1(fd, "h.update('two'); print('updated')", NULL);
	kc_expect(j, "status", "done");
	kc_expect(j, "cells.0.outputs.0.text", "updated\n");
	json_object_put(j);
	r1 = kc_get_run(fd, eid1, 0);
	kc_expect(r1, "cells.0.outputs.0.data.text/plain", "'two'");
	json_object_put(r1);
	room = kc_req(fd, PROTO_MSG_ROOM_GET, NULL, PROTO_MSG_ROOM_CONTENT,
	    10000);
	kc_expect(room, "cells.0.outputs.0.data.text/plain", "'two'");
	kc_expect(room, "cells.0.cell_id", id1);
	json_object_put(room);
	printf("ok: update_display_data from another cell -> the display in "
	    "the room and in the first run's record updated\n");

	j = kc_run1(fd, "from IPython.display import clear_output\n"
	    "print('a', flush=True)\nclear_output(wait=True)\n"
	    "print('b', flush=True)", NULL);
	t = kc_text(j, 0);
	if (strcmp(t, "b\n") != 0)
		testclient_fail("clear_output(wait=True) left %s", kc_dump(j));
	free(t);
	json_object_put(j);
	printf("ok: clear_output(wait=True) clears at the next output\n");

	j = kc_run1(fd, "for i in range(500):\n    print(i, flush=True)",
	    NULL);
	if (json_object_array_length(kc_get(j, "cells.0.outputs")) != 1)
		testclient_fail("consecutive stdout not merged: %s",
		    kc_dump(j));
	t = kc_text(j, 0);
	if (strncmp(t, "0\n1\n2\n", 6) != 0 || strstr(t, "\n499\n") == NULL)
		testclient_fail("merged stream text wrong");
	free(t);
	json_object_put(j);
	printf("ok: 500 flushed prints -> one merged stream output\n");

	j = kc_run1(fd, "from ipykernel.comm import Comm\n"
	    "c = Comm(target_name='runtimed_test', data={'a': 1})\n"
	    "c.send({'b': 2}); c.close(); print('comm ok')", NULL);
	kc_expect(j, "status", "done");
	kc_expect(j, "cells.0.outputs.0.text", "comm ok\n");
	json_object_put(j);
	printf("ok: comm_open/msg/close from the kernel ignored safely\n");

	/* input() makes the run input_required at once; interrupt ends it. */
	t0 = util_mono_ms();
	j = kc_run1(fd, "input('name? ')", NULL);
	kc_expect(j, "status", "input_required");
	kc_expect(j, "input.prompt", "name? ");
	json_object_put(j);
	printf("ok: input() -> input_required in %lld ms\n",
	    (long long)(util_mono_ms() - t0));
	json_object_put(kc_req(fd, PROTO_MSG_KERNEL_INTERRUPT, NULL,
	    PROTO_MSG_OK, 10000));
	free(id1);
	free(eid1);
	close(fd);
	return (0);
}

/* A 2 MiB output goes through the blob store; BLOB_GET returns it. */
static int
kc_blob(const char *sock)
{
	struct json_object	*j, *b;
	const char		*sha, *data;
	char			*hex;
	int64_t			 size;
	size_t			 i, n = 2 * 1024 * 1024;
	int			 fd, fd2;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	json_object_put(kc_wait_state(fd, "idle", 60000));
	j = kc_run1(fd, "from IPython.display import display\n"
	    "display({'text/plain': 'x' * (2 * 1024 * 1024), "
	    "'text/html': '<b>small</b>'}, raw=True)", NULL);
	kc_expect(j, "status", "done");
	if ((sha = kc_str(j, "cells.0.outputs.0.data.text/plain."
	    "runtimed_blob")) == NULL)
		testclient_fail("no blob reference: %.500s", kc_dump(j));
	size = kc_int(j, "cells.0.outputs.0.data.text/plain.size");
	if (size != (int64_t)n)
		testclient_fail("blob size %lld", (long long)size);
	kc_expect(j, "cells.0.outputs.0.data.text/html", "<b>small</b>");
	hex = xstrdup(sha);
	json_object_put(j);

	j = kc_req(fd, PROTO_MSG_ROOM_GET, NULL, PROTO_MSG_ROOM_CONTENT,
	    10000);
	kc_expect(j, "cells.0.outputs.0.data.text/plain.runtimed_blob", hex);
	json_object_put(j);

	/* Room-less connections may fetch blobs too. */
	fd2 = testclient_connect(sock);
	b = kc_req(fd2, PROTO_MSG_BLOB_GET, kc_json("{\"sha256\":\"%s\"}",
	    hex), PROTO_MSG_BLOB_REPLY, 10000);
	kc_expect(b, "sha256", hex);
	data = kc_str(b, "data");
	if (data == NULL || strlen(data) != n)
		testclient_fail("BLOB_REPLY data of %zu bytes",
		    data != NULL ? strlen(data) : 0);
	for (i = 0; i < n; i++) {
		if (data[i] != 'x')
			testclient_fail("BLOB_REPLY data differs at %zu", i);
	}
	json_object_put(b);
	printf("ok: 2 MiB output -> {runtimed_blob %s, size %zu}; BLOB_GET "
	    "returns the bytes\n", hex, n);
	free(kc_error(fd2, PROTO_MSG_BLOB_GET,
	    kc_json("{\"sha256\":\"../../etc/passwd\"}"), "invalid_argument"));
	free(kc_error(fd2, PROTO_MSG_BLOB_GET, kc_json("{\"sha256\":\"%064d\"}",
	    0), "invalid_argument"));
	close(fd2);
	free(hex);
	close(fd);
	return (0);
}

/*
 * Durable records, part 1: a finished run (whose cell is edited after),
 * then a run left in flight.  Writes "NBID DONE INFLIGHT KPID APID" to
 * file.
 */
static int
kc_durable1(const char *sock, const char *file)
{
	struct json_object	*j;
	const char		*src = "print('ran before')";
	const char		*slow = "import time; time.sleep(60)";
	char			*nbid, *id, *id2, *done, *flight;
	int64_t			 kpid, apid;
	FILE			*f;
	int			 fd;

	fd = testclient_connect(sock);
	j = kc_create(fd, NULL, NULL);
	nbid = xstrdup(kc_str(j, "notebook_id"));
	json_object_put(j);
	j = kc_wait_state(fd, "idle", 60000);
	kpid = kc_int(j, "pid");
	apid = kc_int(j, "agent_pid");
	json_object_put(j);
	testclient_insert(fd, &src, NULL, 1, &id, NULL);
	done = testclient_submit(fd, &id, 1, -1);
	j = kc_get_run(fd, done, 30000);
	kc_expect(j, "status", "done");
	json_object_put(j);
	json_object_put(kc_req(fd, PROTO_MSG_ROOM_EDIT, kc_json("{\"edits\":"
	    "[{\"op\":\"edit\",\"cell_id\":\"%s\",\"source\":\"print('edited')"
	    "\"}]}", id), PROTO_MSG_ROOM_EDIT_REPLY, 10000));
	testclient_insert(fd, &slow, NULL, 1, &id2, NULL);
	flight = testclient_submit(fd, &id2, 1, -1);
	kc_wait_running(fd, flight);
	usleep(200000);		/* the in-flight record is written */
	if ((f = fopen(file, "w")) == NULL)
		testclient_fail("%s: %s", file, strerror(errno));
	fprintf(f, "%s %s %s %lld %lld\n", nbid, done, flight,
	    (long long)kpid, (long long)apid);
	fclose(f);
	printf("ok: run %s done, run %s in flight\n", done, flight);
	/* Stay connected: the daemon is killed under us. */
	pause();
	return (0);
}

/* Durable records, part 2: the new daemon answers for both runs. */
static int
kc_durable2(const char *sock, const char *file)
{
	struct json_object	*j;
	char			 nbid[64], done[64], flight[64], lost[64];
	long long		 kpid, apid;
	FILE			*f;
	int			 fd, fd2;

	if ((f = fopen(file, "r")) == NULL ||
	    fscanf(f, "%63s %63s %63s %lld %lld", nbid, done, flight, &kpid,
	    &apid) != 5)
		testclient_fail("%s unreadable", file);
	fclose(f);
	if (!kc_wait_gone((pid_t)kpid, 10000) ||
	    !kc_wait_gone((pid_t)apid, 5000))
		testclient_fail("kernel %lld or agent %lld outlived the "
		    "daemon's " "kill -9", kpid, apid);
	printf("ok: agent and kernel gone after the daemon's kill -9\n");

	fd = testclient_connect(sock);
	json_object_put(kc_req(fd, PROTO_MSG_ROOM_OPEN,
	    kc_json("{\"notebook_id\":\"%s\"}", nbid), PROTO_MSG_ROOM_JOINED,
	    10000));
	j = kc_get_run(fd, done, 0);
	kc_expect(j, "status", "done");
	kc_expect(j, "cells.0.status", "ok");
	kc_expect(j, "cells.0.source", "print('ran before')");
	kc_expect(j, "cells.0.outputs.0.text", "ran before\n");
	json_object_put(j);
	printf("ok: EXEC_GET after kill -9 + restart -> done, source as "
	    "run, outputs\n");
	j = kc_get_run(fd, flight, 1000);
	kc_expect(j, "status", "kernel_died");
	kc_expect(j, "cells.0.status", "kernel_died");
	kc_expect_sub(j, "message", "daemon restarted");
	json_object_put(j);
	printf("ok: the run in flight at the kill -> kernel_died (daemon "
	    "restarted)\n");
	free(kc_error(fd, PROTO_MSG_EXEC_GET, kc_json("{\"execution_id\":"
	    "\"00000000-0000-0000-0000-000000000000\"}"),
	    "execution_not_found"));

	/*
	 * A run the earlier daemon acknowledged but never recorded (killed
	 * in between): same notebook and incarnation part as `done`, a
	 * random part never issued.  It answers ended, not unknown.
	 */
	snprintf(lost, sizeof lost, "%.22sffffffffffffff", done);
	j = kc_get_run(fd, lost, 0);
	kc_expect(j, "status", "kernel_died");
	kc_expect_sub(j, "message", "before this run was recorded");
	json_object_put(j);
	printf("ok: a run acknowledged but never recorded -> kernel_died\n");

	/* Another notebook sees neither. */
	fd2 = testclient_connect(sock);
	free(testclient_create(fd2, NULL, NULL));
	free(kc_error(fd2, PROTO_MSG_EXEC_GET, kc_json("{\"execution_id\":"
	    "\"%s\"}", done), "execution_not_found"));
	free(kc_error(fd2, PROTO_MSG_EXEC_GET, kc_json("{\"execution_id\":"
	    "\"%s\"}", lost), "execution_not_found"));
	close(fd2);
	close(fd);
	return (0);
}

/* N rooms with kernels up; then waits (killed by the test). */
static int
kc_rooms(const char *sock, int n)
{
	struct json_object	*j;
	int			 i, *fds;

	fds = xcalloc(n, sizeof *fds);
	for (i = 0; i < n; i++) {
		fds[i] = testclient_connect(sock);
		free(testclient_create(fds[i], NULL, NULL));
	}
	for (i = 0; i < n; i++) {
		j = kc_wait_state(fds[i], "idle", 60000);
		printf("room %d: agent %lld kernel %lld\n", i,
		    (long long)kc_int(j, "agent_pid"),
		    (long long)kc_int(j, "pid"));
		json_object_put(j);
	}
	printf("ready\n");
	pause();
	return (0);
}

static int
kc_cmp64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Median of n runs of src, EXEC_RUN to terminal EXEC_STATE (in us). */
static int
kc_bench(const char *sock, const char *src, int n)
{
	struct json_object	*j;
	int64_t			*t, t0;
	char			*id, *eid;
	int			 fd, i;

	fd = testclient_connect(sock);
	free(testclient_create(fd, NULL, NULL));
	json_object_put(kc_wait_state(fd, "idle", 60000));
	testclient_insert(fd, &src, NULL, 1, &id, NULL);
	t = xcalloc(n, sizeof *t);
	for (i = 0; i < n; i++) {
		t0 = util_now_us();
		eid = testclient_submit(fd, &id, 1, -1);
		j = kc_get_run(fd, eid, 30000);
		t[i] = util_now_us() - t0;
		kc_expect(j, "status", "done");
		json_object_put(j);
		free(eid);
	}
	qsort(t, n, sizeof *t, kc_cmp64);
	printf("%d runs: min %.2f median %.2f ms\n", n, t[0] / 1000.0,
	    t[n / 2] / 1000.0);
	free(t);
	free(id);
	close(fd);
	return (0);
}

int
main(int argc, char **argv)
{
	testclient_init("kern-client", 10000);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "death") == 0)
		return (kc_death(argv[2]));
	if (argc == 3 && strcmp(argv[1], "hang") == 0)
		return (kc_hang(argv[2]));
	if (argc == 3 && strcmp(argv[1], "specs") == 0)
		return (kc_specs(argv[2]));
	if (argc == 4 && strcmp(argv[1], "idle") == 0)
		return (kc_idle(argv[2], atoi(argv[3])));
	if (argc == 5 && strcmp(argv[1], "pool") == 0)
		return (kc_pool(argv[2], argv[3], atoi(argv[4])));
	if (argc == 3 && strcmp(argv[1], "display") == 0)
		return (kc_display(argv[2]));
	if (argc == 3 && strcmp(argv[1], "blob") == 0)
		return (kc_blob(argv[2]));
	if (argc == 4 && strcmp(argv[1], "durable1") == 0)
		return (kc_durable1(argv[2], argv[3]));
	if (argc == 4 && strcmp(argv[1], "durable2") == 0)
		return (kc_durable2(argv[2], argv[3]));
	if (argc == 5 && strcmp(argv[1], "bench") == 0)
		return (kc_bench(argv[2], argv[3], atoi(argv[4])));
	if (argc == 4 && strcmp(argv[1], "rooms") == 0)
		return (kc_rooms(argv[2], atoi(argv[3])));
	fprintf(stderr, "usage: kern-client death|hang|specs|display|blob "
	    "SOCK | idle SOCK SECS | pool SOCK DIR I |\n"
	    "       durable1|durable2 SOCK FILE | rooms SOCK N\n");
	return (2);
}
