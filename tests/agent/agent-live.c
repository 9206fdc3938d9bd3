/* SPDX-License-Identifier: ISC */
/*
 * agent-live.c: drive the real runtimed-agent on a real python3 kernel
 * the way the daemon does, over a socketpair on its fd 3, with blocking
 * frameio calls.  Prints the start time and the median round trip of
 * `1+1` over 50 runs.  Run through agent-live.sh (timeout watchdog).
 *
 * With AGENT_LIVE_BENCH=N it only measures: N starts of python3 and 20
 * `1+1` after each, medians printed (docs/decisions/008).  With
 * AGENT_LIVE_IMAGES=N, N cells that each display a new random 1 MB PNG,
 * then N of 10 MB: median and best run (decision 034); with
 * AGENT_LIVE_SAME set, the same image every run, as bench/run.mjs;
 * with AGENT_LIVE_CODE, N runs of that cell instead.
 *
 * `test-agent-live KERNEL` runs the family test instead on another
 * kernelspec (ir, xpython): every output type, a busy cell longer than
 * the hang bound, a stopped kernel, interrupt, restart.  It exits 77
 * when that kernelspec is not installed.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common.h"
#include "kernelspec.h"

#define WAIT_MS		60000

static int	 dfd = -1;		/* our end of the socketpair */
static pid_t	 agent_pid = -1;
static pid_t	 kernel_pids[8];
static int	 nkernel_pids;
static char	 rdir[4096] = "/tmp/agent-live-XXXXXX";
static char	 rbase[64];		/* rdir before the deep test */
static char	 datadir[] = "/tmp/agent-live-data-XXXXXX";
static uint32_t	 next_id = 1;
static int	 nexec;
static const char *want_name = "python3";	/* AGENT_READY kernel_name */
static const char *want_lang = "python";	/* language_info.name */

struct run;
struct family;
static void	cleanup(void);
static void	sendf(uint16_t, uint32_t, struct mpbuf *);
static void	recvf(struct proto_header *, msgpack_unpacked *, int);
static char	*str(const msgpack_object *, const char *);
static void	reply(uint32_t, struct proto_header *, msgpack_unpacked *);
static void	run_free(struct run *);
static uint32_t	execute_send(const char *, char *, size_t, int);
static void	execute_wait(const char *, struct run *, int);
static void	answer_input(const char *, const char *);
static void	execute(const char *, struct run *, int);
static const char	*outfield(struct run *, size_t, const char *);
static const char	*outplain(struct run *, size_t);
static pid_t	start(const char *, int64_t *, char **);
static void	write_spec(const char *, const char *, const char *);
static void	write_racer(void);
static void	write_replayer(void);
static int	stolen_port(int *);
static int	conn_file_mode(void);
static struct json_object	*conn_file_check(const char *, const char *);
static int	conn_port(struct json_object *, const char *);
static int	gone(pid_t, int);
static int	cmp64(const void *, const void *);
static void	listing(const char *);
static int	wait_agent(void);
static void	spawn_agent(char *);
static char	*streams(struct run *, const char *);
static void	wait_for(uint16_t, const char *, int);
static void	interrupt(void);
static pid_t	restart(pid_t);
static int	family(char *, const struct family *);
static int	bench(char *, int);
static int	images(char *, int);
static long	outblob(struct run *, size_t, const char *);
static void	blobs_in_order(void);
static int	sigterm_outputs(void);
static long	rss_kb(pid_t);

/* A process's resident set (VmRSS) in KiB, or -1. */
static long
rss_kb(pid_t pid)
{
	char	 path[64], line[256];
	FILE	*f;
	long	 kb = -1;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return (kb);
}

/* Kill what we started; runs at exit, also on failure. */
static void
cleanup(void)
{
	char	cmd[128], path[1024];
	FILE	*f;
	long	 pid;
	int	 i, port;

	/* The port thieves of the race test live in their own sessions. */
	snprintf(path, sizeof path, "%s/holders", datadir);
	if ((f = fopen(path, "r")) != NULL) {
		while (fscanf(f, "%ld %d", &pid, &port) == 2) {
			if (pid > 0)
				kill(pid, SIGKILL);
		}
		fclose(f);
	}

	for (i = 0; i < nkernel_pids; i++) {
		if (kernel_pids[i] > 0)
			killpg(kernel_pids[i], SIGKILL);
	}
	if (agent_pid > 0) {
		kill(agent_pid, SIGKILL);
		waitpid(agent_pid, NULL, 0);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", rbase, datadir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__,	\
		    #cond);						\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		exit(1);						\
	}								\
} while (0)

/* Send one frame. */
static void
sendf(uint16_t type, uint32_t id, struct mpbuf *b)
{
	CHECK(frameio_write(dfd, type, id, b->sb.data, b->sb.size) == 0,
	    "write %s: %s", proto_msg_name(type), strerror(errno));
}

/* Read one frame; fails the test on timeout. */
static void
recvf(struct proto_header *hdr, msgpack_unpacked *u, int timeout)
{
	char	*cause = NULL;

	msgpack_unpacked_init(u);
	CHECK(frameio_read(dfd, timeout, hdr, u, &cause) == 0, "read: %s",
	    cause);
}

/* Copy of a string field, "" when absent; caller frees. */
static char *
str(const msgpack_object *o, const char *key)
{
	char	*s = proto_dup_str(o, key);

	return (s != NULL ? s : xstrdup(""));
}

/* Wait for a reply to id (events in between are reported and dropped). */
static void
reply(uint32_t id, struct proto_header *hdr, msgpack_unpacked *u)
{
	for (;;) {
		recvf(hdr, u, WAIT_MS);
		if (hdr->id == id)
			return;
		fprintf(stderr, "  (event %s while waiting for reply %u)\n",
		    proto_msg_name(hdr->type), id);
		msgpack_unpacked_destroy(u);
	}
}

/* What one cell run produced. */
struct run {
	int			 started;
	int64_t			 started_count;
	char			*status;	/* NULL if no EXEC_DONE */
	int64_t			 execution_count;
	struct json_object	*outputs;	/* array */
	char			*dead;		/* dead reason */
	int			 nstream;	/* stream frames */
	int			 clear;
	int			 nupdate;	/* update_display_data */
	int			 nunresponsive;	/* AGENT_STATUS */
	int			 ninput;	/* AGENT_INPUT_REQUEST */
	int			 password;	/* the last one's flag */
};

static void
run_free(struct run *r)
{
	free(r->status);
	free(r->dead);
	json_object_put(r->outputs);
	memset(r, 0, sizeof *r);
}

/* Send AGENT_EXECUTE; returns the request id. */
static uint32_t
execute_send(const char *code, char *exec_id, size_t len, int stop_on_error)
{
	struct mpbuf	b;
	uint32_t	id = next_id++;

	snprintf(exec_id, len, "exec-%d", ++nexec);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	proto_pack_str(&b.pk, "exec_id", exec_id);
	proto_pack_str(&b.pk, "cell_id", "cell-1");
	proto_pack_str(&b.pk, "code", code);
	proto_pack_bool(&b.pk, "stop_on_error", stop_on_error);
	sendf(PROTO_MSG_AGENT_EXECUTE, id, &b);
	mpbuf_free(&b);
	return (id);
}

/* AGENT_INPUT_REPLY {execution_id, value}; its OK comes with events. */
static void
answer_input(const char *exec_id, const char *value)
{
	struct mpbuf	b;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "execution_id", exec_id);
	proto_pack_str(&b.pk, "value", value);
	sendf(PROTO_MSG_AGENT_INPUT_REPLY, next_id++, &b);
	mpbuf_free(&b);
}

/* Collect events for exec_id until EXEC_DONE or the kernel dies. */
static void
execute_wait(const char *exec_id, struct run *r, int quiet)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	const msgpack_object	*o, *out;
	struct json_object	*j, *t;
	char			*s;
	int			 upd;

	memset(r, 0, sizeof *r);
	r->outputs = json_object_new_array();
	r->execution_count = -1;
	for (;;) {
		recvf(&hdr, &u, WAIT_MS);
		o = &u.data;
		CHECK(hdr.type != PROTO_MSG_ERROR, "ERROR: %s",
		    proto_get_str(o, "message", NULL));
		s = proto_dup_str(o, "exec_id");
		CHECK(hdr.type == PROTO_MSG_AGENT_STATUS ||
		    hdr.type == PROTO_MSG_OK || (s != NULL &&
		    strcmp(s, exec_id) == 0), "%s for exec %s, want %s",
		    proto_msg_name(hdr.type), s ? s : "-", exec_id);
		free(s);
		switch (hdr.type) {
		case PROTO_MSG_AGENT_EXEC_STARTED:
			r->started = 1;
			proto_get_int(o, "execution_count", &r->started_count);
			break;
		case PROTO_MSG_AGENT_OUTPUT:
			out = proto_get_map(o, "output");
			CHECK(out != NULL, "output is not a map");
			j = mpjson_unpack(out);
			if (proto_get_bool(o, "update", &upd) == 0 && upd)
				r->nupdate++;
			if (json_object_object_get_ex(j, "output_type", &t) &&
			    strcmp(json_object_get_string(t), "stream") == 0)
				r->nstream++;
			if (!quiet)
				printf("  output %s\n",
				    json_object_to_json_string(j));
			json_object_array_add(r->outputs, j);
			break;
		case PROTO_MSG_AGENT_CLEAR_OUTPUT:
			r->clear++;
			break;
		case PROTO_MSG_AGENT_INPUT_REQUEST:
			/* Answered as send_input would: the run goes on. */
			r->ninput++;
			proto_get_bool(o, "password", &r->password);
			answer_input(exec_id, "agent");
			break;
		case PROTO_MSG_OK:
			break;
		case PROTO_MSG_AGENT_EXEC_DONE:
			r->status = str(o, "status");
			if (proto_get_int(o, "execution_count",
			    &r->execution_count) != 0)
				r->execution_count = -1;
			msgpack_unpacked_destroy(&u);
			return;
		case PROTO_MSG_AGENT_STATUS:
			s = str(o, "state");
			if (strcmp(s, "unresponsive") == 0)
				r->nunresponsive++;
			if (strcmp(s, "dead") == 0) {
				r->dead = str(o, "reason");
				free(s);
				msgpack_unpacked_destroy(&u);
				return;
			}
			free(s);
			break;
		default:
			CHECK(0, "unexpected %s", proto_msg_name(hdr.type));
		}
		msgpack_unpacked_destroy(&u);
	}
}

static void
execute(const char *code, struct run *r, int quiet)
{
	char	exec_id[32];

	if (!quiet)
		printf("run: %s\n", code);
	execute_send(code, exec_id, sizeof exec_id, 0);
	execute_wait(exec_id, r, quiet);
}

/* Field of output i as a string, or "". */
static const char *
outfield(struct run *r, size_t i, const char *key)
{
	struct json_object	*o, *v;

	if (i >= json_object_array_length(r->outputs))
		return ("");
	o = json_object_array_get_idx(r->outputs, i);
	if (!json_object_object_get_ex(o, key, &v))
		return ("");
	return (json_object_get_string(v));
}

/* data["text/plain"] of output i, or "". */
static const char *
outplain(struct run *r, size_t i)
{
	struct json_object	*o, *d, *v;

	if (i >= json_object_array_length(r->outputs))
		return ("");
	o = json_object_array_get_idx(r->outputs, i);
	if (!json_object_object_get_ex(o, "data", &d) ||
	    !json_object_object_get_ex(d, "text/plain", &v))
		return ("");
	return (json_object_get_string(v));
}

/*
 * data[mime] of output i: the size of the blob it names, checked against
 * its name by blob_get, or -1 if it is no blob reference.
 */
static long
outblob(struct run *r, size_t i, const char *mime)
{
	struct json_object	*o, *d, *ref, *h;
	char			*data, *cause;
	size_t			 len;

	if (i >= json_object_array_length(r->outputs))
		return (-1);
	o = json_object_array_get_idx(r->outputs, i);
	if (!json_object_object_get_ex(o, "data", &d) ||
	    !json_object_object_get_ex(d, mime, &ref) ||
	    !json_object_object_get_ex(ref, "runtimed_blob", &h))
		return (-1);
	CHECK(blob_get(rdir, json_object_get_string(h), &data, &len,
	    &cause) == 0, "output %zu: %s", i, cause);
	free(data);
	return ((long)len);
}

/*
 * New values are written and fsynced on the agent's blob thread
 * (agent-blob.c), yet the daemon gets them in order: two outputs of one
 * new value (the second queued while the first is written), a second
 * new value, then a print, each output only once its blob is there.  A
 * store that cannot be written keeps the value inline, still in order.
 */
static void
blobs_in_order(void)
{
	struct run		 r;
	struct json_object	*d, *v;
	char			 dir[4200], keep[4200];
	long			 n;
	int			 fd;

	execute("import os, base64\n"
	    "a = base64.b64encode(os.urandom(800000)).decode()\n"
	    "display({'image/png': a}, raw=True)\n"
	    "display({'image/png': a}, raw=True)\n"
	    "display({'text/plain': base64.b64encode(os.urandom(800000))"
	    ".decode()}, raw=True)\n"
	    "print('after')\n", &r, 1);
	CHECK(strcmp(r.status, "ok") == 0, "status %s", r.status);
	CHECK(json_object_array_length(r.outputs) == 4, "%zu outputs",
	    json_object_array_length(r.outputs));
	n = outblob(&r, 0, "image/png");
	CHECK(n == 1066668 && outblob(&r, 1, "image/png") == n &&
	    outblob(&r, 2, "text/plain") == n, "blob sizes %ld %ld %ld", n,
	    outblob(&r, 1, "image/png"), outblob(&r, 2, "text/plain"));
	CHECK(strcmp(outfield(&r, 0, "data"), outfield(&r, 1, "data")) == 0,
	    "one value, two names");
	CHECK(strcmp(outfield(&r, 2, "data"), outfield(&r, 1, "data")) != 0,
	    "two values, one name");
	CHECK(strcmp(outfield(&r, 3, "text"), "after\n") == 0,
	    "the print is not last: %.200s", outfield(&r, 3, "text"));
	run_free(&r);
	printf("two new values, three outputs, a print: in order, blobs "
	    "valid\n");

	/* blobs a file: mkdir under it fails, for root too. */
	snprintf(dir, sizeof dir, "%s/blobs", rdir);
	snprintf(keep, sizeof keep, "%s/blobs.keep", rdir);
	CHECK(rename(dir, keep) == 0, "rename %s: %s", dir, strerror(errno));
	CHECK((fd = open(dir, O_WRONLY|O_CREAT|O_EXCL, 0600)) != -1,
	    "%s: %s", dir, strerror(errno));
	close(fd);
	execute("import os, base64\n"
	    "display({'image/png': base64.b64encode(os.urandom(800000))"
	    ".decode()}, raw=True)\n"
	    "print('after')\n", &r, 1);
	CHECK(strcmp(r.status, "ok") == 0, "status %s", r.status);
	CHECK(json_object_array_length(r.outputs) == 2, "%zu outputs",
	    json_object_array_length(r.outputs));
	CHECK(json_object_object_get_ex(json_object_array_get_idx(r.outputs,
	    0), "data", &d) && json_object_object_get_ex(d, "image/png", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    json_object_get_string_len(v) == 1066668,
	    "not kept inline: %.200s", outfield(&r, 0, "data"));
	CHECK(strcmp(outfield(&r, 1, "text"), "after\n") == 0,
	    "the print is not last");
	run_free(&r);
	CHECK(unlink(dir) == 0 && rename(keep, dir) == 0, "restore %s", dir);
	printf("blob store not writable: the value inline, in order\n");
}

/*
 * The frames an exiting agent sent, up to EOF: each output's blob must
 * be valid, nothing of the run after its EXEC_DONE.  Returns how many
 * outputs.
 */
static int
sigterm_outputs(void)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct run		 r;
	const msgpack_object	*out;
	char			*cause = NULL;
	int			 n = 0, done = 0;

	memset(&r, 0, sizeof r);
	r.outputs = json_object_new_array();
	for (;;) {
		msgpack_unpacked_init(&u);
		if (frameio_read(dfd, 5000, &hdr, &u, &cause) != 0)
			break;
		if (hdr.type == PROTO_MSG_AGENT_OUTPUT) {
			CHECK(!done, "an output after EXEC_DONE");
			out = proto_get_map(&u.data, "output");
			CHECK(out != NULL, "output is not a map");
			json_object_array_add(r.outputs, mpjson_unpack(out));
			CHECK(outblob(&r, n, "image/png") == (4 << 20) + 4,
			    "output %d: no valid blob", n);
			n++;
		} else if (hdr.type == PROTO_MSG_AGENT_EXEC_DONE)
			done = 1;
		msgpack_unpacked_destroy(&u);
	}
	msgpack_unpacked_destroy(&u);
	free(cause);
	run_free(&r);
	return (n);
}

/* Send AGENT_START and wait for READY; returns the kernel pid. */
static pid_t
start(const char *name, int64_t *ms, char **err)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	const msgpack_object	*li;
	char			 cwd[1024], *s;
	uint32_t		 id = next_id++;
	int64_t			 t0, pid = -1;

	CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 5);
	proto_pack_str(&b.pk, "kernel_id", "0123abcd-live-test");
	proto_pack_str(&b.pk, "state_dir", rdir);
	proto_pack_str(&b.pk, "kernel_name", name);
	proto_pack_str(&b.pk, "cwd", cwd);
	proto_pack_str(&b.pk, "runtime_dir", rdir);
	t0 = util_mono_ms();
	sendf(PROTO_MSG_AGENT_START, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	*ms = util_mono_ms() - t0;
	if (hdr.type == PROTO_MSG_ERROR) {
		s = str(&u.data, "code");
		CHECK(strcmp(s, "kernel_unavailable") == 0, "code %s", s);
		free(s);
		*err = str(&u.data, "message");
		msgpack_unpacked_destroy(&u);
		return (-1);
	}
	CHECK(hdr.type == PROTO_MSG_AGENT_READY, "got %s",
	    proto_msg_name(hdr.type));
	CHECK(proto_get_int(&u.data, "pid", &pid) == 0 && pid > 0, "pid");
	s = str(&u.data, "kernel_name");
	CHECK(strcmp(s, want_name) == 0, "kernel_name %s", s);
	free(s);
	s = str(&u.data, "language");
	CHECK(strcasecmp(s, want_lang) == 0, "language %s", s);
	free(s);
	s = str(&u.data, "protocol_version");
	CHECK(strncmp(s, "5.", 2) == 0, "protocol_version %s", s);
	free(s);
	li = proto_get_map(&u.data, "language_info");
	CHECK(li != NULL, "no language_info");
	s = str(li, "name");
	CHECK(strcasecmp(s, want_lang) == 0, "language_info.name %s", s);
	free(s);
	msgpack_unpacked_destroy(&u);
	kernel_pids[nkernel_pids++] = pid;
	*err = NULL;
	return (pid);
}

/* Install a kernelspec in our private Jupyter data dir. */
static void
write_spec(const char *name, const char *argv, const char *language)
{
	char	path[1024];
	FILE	*f;

	snprintf(path, sizeof path, "%s/kernels", datadir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/kernels/%s", datadir, name);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/kernels/%s/kernel.json", datadir,
	    name);
	CHECK((f = fopen(path, "w")) != NULL, "fopen %s", path);
	fprintf(f, "{\"argv\": %s, \"display_name\": \"%s\", "
	    "\"language\": \"%s\"}\n", argv, name, language);
	fclose(f);
}

/*
 * A kernel whose ports are stolen: before it starts ipykernel, it binds
 * and listens on the shell port from a child in its own session (out of
 * reach of the agent's killpg), as another program could between the
 * agent's choice of ports and the kernel's bind.  "once" steals on the
 * first launch only; "always" on each and then fails as a kernel would;
 * "hang" steals on the first launch and then never answers.  The race
 * is tcp's: on ipc it exits at once, and the agent starts it on tcp.
 */
static void
write_racer(void)
{
	char	path[1024], argv[2048];
	FILE	*f;

	snprintf(path, sizeof path, "%s/racer.py", datadir);
	CHECK((f = fopen(path, "w")) != NULL, "fopen %s", path);
	fputs("import json, os, socket, sys, time\n"
	    "conn, mode = sys.argv[1], sys.argv[2]\n"
	    "d = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
	    "if json.load(open(conn))['transport'] != 'tcp':\n"
	    "    sys.exit('the port race is on tcp')\n"
	    "port = json.load(open(conn))['shell_port']\n"
	    "marker = os.path.join(d, 'stolen-' + mode)\n"
	    "if mode == 'always' or not os.path.exists(marker):\n"
	    "    open(marker, 'a').close()\n"
	    "    r, w = os.pipe()\n"
	    "    if os.fork() == 0:\n"
	    "        os.setsid()\n"
	    "        null = os.open(os.devnull, os.O_RDWR)\n"
	    "        for fd in (0, 1, 2): os.dup2(null, fd)\n"
	    "        s = socket.socket()\n"
	    "        s.bind(('127.0.0.1', port))\n"
	    "        s.listen(1)\n"
	    "        with open(os.path.join(d, 'holders'), 'a') as f:\n"
	    "            f.write('%d %d\\n' % (os.getpid(), port))\n"
	    "        os.write(w, b'x')\n"
	    "        time.sleep(120)\n"
	    "        os._exit(0)\n"
	    "    os.close(w)\n"
	    "    os.read(r, 1)\n"
	    "    if mode == 'always':\n"
	    "        sys.exit('Address already in use: port %d' % port)\n"
	    "    if mode == 'hang':\n"
	    "        time.sleep(600)\n"
	    "os.execv(sys.executable, [sys.executable, '-m', "
	    "'ipykernel_launcher', '-f', conn])\n", f);
	fclose(f);
	snprintf(argv, sizeof argv, "[\"/usr/bin/python3\", \"%s\", "
	    "\"{connection_file}\", \"once\"]", path);
	write_spec("racer-once", argv, "python");
	snprintf(argv, sizeof argv, "[\"/usr/bin/python3\", \"%s\", "
	    "\"{connection_file}\", \"always\"]", path);
	write_spec("racer-always", argv, "python");
	snprintf(argv, sizeof argv, "[\"/usr/bin/python3\", \"%s\", "
	    "\"{connection_file}\", \"hang\"]", path);
	write_spec("racer-hang", argv, "python");
}

/*
 * A kernel that is a real ZeroMQ peer written for the test (pyzmq and
 * Python's hmac): it answers kernel_info, and for each execute_request
 * publishes one stream message twice, byte for byte (a replay), one
 * with a bad signature, and sends its execute_reply twice.  It knows
 * only tcp (its bind of tcp://<ipc path>:1 fails), as a kernel written
 * for tcp alone would: the agent starts it on tcp instead.
 */
static void
write_replayer(void)
{
	char	path[1024], argv[2048];
	FILE	*f;

	snprintf(path, sizeof path, "%s/replayer.py", datadir);
	CHECK((f = fopen(path, "w")) != NULL, "fopen %s", path);
	fputs("import datetime, hashlib, hmac, json, sys, uuid, zmq\n"
	    "c = json.load(open(sys.argv[1]))\n"
	    "key = c['key'].encode()\n"
	    "ctx = zmq.Context()\n"
	    "def bind(kind, port):\n"
	    "    s = ctx.socket(kind)\n"
	    "    s.bind('tcp://%s:%d' % (c['ip'], c[port]))\n"
	    "    return s\n"
	    "shell = bind(zmq.ROUTER, 'shell_port')\n"
	    "control = bind(zmq.ROUTER, 'control_port')\n"
	    "stdin = bind(zmq.ROUTER, 'stdin_port')\n"
	    "iopub = bind(zmq.PUB, 'iopub_port')\n"
	    "hb = bind(zmq.REP, 'hb_port')\n"
	    "def msg(t, parent, content):\n"
	    "    h = {'msg_id': uuid.uuid4().hex, 'msg_type': t,\n"
	    "         'session': 'replayer', 'username': 'test',\n"
	    "         'date': datetime.datetime.utcnow().isoformat() + 'Z',\n"
	    "         'version': '5.3'}\n"
	    "    parts = [json.dumps(x).encode()\n"
	    "             for x in (h, parent, {}, content)]\n"
	    "    sig = hmac.new(key, b''.join(parts), hashlib.sha256)\n"
	    "    return [b'<IDS|MSG>', sig.hexdigest().encode()] + parts\n"
	    "def status(parent, state):\n"
	    "    iopub.send_multipart(msg('status', parent,\n"
	    "                             {'execution_state': state}))\n"
	    "poller = zmq.Poller()\n"
	    "for s in (shell, control, hb):\n"
	    "    poller.register(s, zmq.POLLIN)\n"
	    "while True:\n"
	    "    for s, _ in poller.poll():\n"
	    "        if s is hb:\n"
	    "            hb.send(hb.recv())\n"
	    "            continue\n"
	    "        f = s.recv_multipart()\n"
	    "        i = f.index(b'<IDS|MSG>')\n"
	    "        ids, header = f[:i], json.loads(f[i + 2])\n"
	    "        t = header['msg_type']\n"
	    "        if t == 'kernel_info_request':\n"
	    "            status(header, 'busy')\n"
	    "            s.send_multipart(ids + msg('kernel_info_reply',\n"
	    "                header,\n"
	    "                {'status': 'ok', 'protocol_version': '5.3',\n"
	    "                 'language_info': {'name': 'python'}}))\n"
	    "            status(header, 'idle')\n"
	    "        elif t == 'execute_request':\n"
	    "            status(header, 'busy')\n"
	    "            m = msg('stream', header,\n"
	    "                    {'name': 'stdout', 'text': 'once\\n'})\n"
	    "            iopub.send_multipart(m)\n"
	    "            iopub.send_multipart(m)\n"
	    "            bad = msg('stream', header,\n"
	    "                      {'name': 'stdout', 'text': 'forged\\n'})\n"
	    "            bad[1] = b'0' * 64\n"
	    "            iopub.send_multipart(bad)\n"
	    "            r = msg('execute_reply', header,\n"
	    "                    {'status': 'ok', 'execution_count': 1})\n"
	    "            s.send_multipart(ids + r)\n"
	    "            s.send_multipart(ids + r)\n"
	    "            status(header, 'idle')\n"
	    "        elif t == 'shutdown_request':\n"
	    "            sys.exit(0)\n", f);
	fclose(f);
	snprintf(argv, sizeof argv, "[\"/usr/bin/python3\", \"%s\", "
	    "\"{connection_file}\"]", path);
	write_spec("replayer", argv, "python");
}

/* The last port a thief took, from its note; 0 if none. */
static int
stolen_port(int *count)
{
	char	 path[1024];
	FILE	*f;
	long	 pid;
	int	 port, last = 0;

	*count = 0;
	snprintf(path, sizeof path, "%s/holders", datadir);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	while (fscanf(f, "%ld %d", &pid, &port) == 2) {
		last = port;
		(*count)++;
	}
	fclose(f);
	return (last);
}

/* Is there a connection file in rdir, and is it 0600? */
static int
conn_file_mode(void)
{
	DIR		*dp;
	struct dirent	*de;
	struct stat	 sb;
	char		 path[8192];
	int		 mode = -1;

	CHECK((dp = opendir(rdir)) != NULL, "opendir");
	while ((de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, "kernel-", 7) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", rdir, de->d_name);
		CHECK(stat(path, &sb) == 0, "stat");
		mode = sb.st_mode & 07777;
	}
	closedir(dp);
	return (mode);
}

/*
 * The connection file of the running kernel: 0600 in a 0700 directory,
 * on transport want: ipc in a 0700 directory of ours with a path short
 * enough for xeus (decision 060), or tcp on 127.0.0.1; a 256-bit key as
 * 64 hex digits.  Returns it parsed; caller puts.
 */
static struct json_object *
conn_file_check(const char *dir, const char *want)
{
	char			 ipdir[8192];
	DIR			*dp;
	struct dirent		*de;
	struct stat		 sb;
	struct json_object	*j = NULL, *v;
	char			 path[8192];
	const char		*key;
	size_t			 i;

	/* ipykernel rewrites the file and adds the sticky bit to the dir. */
	CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700,
	    "runtime dir mode %o", sb.st_mode & 07777);
	CHECK((dp = opendir(dir)) != NULL, "opendir");
	while ((de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, "kernel-", 7) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode), "stat");
		CHECK((sb.st_mode & 07777) == 0600, "connection file mode %o",
		    sb.st_mode & 07777);
		CHECK((j = json_object_from_file(path)) != NULL, "%s", path);
	}
	closedir(dp);
	CHECK(j != NULL, "no connection file in %s", dir);
	CHECK(json_object_object_get_ex(j, "transport", &v) &&
	    strcmp(json_object_get_string(v), want) == 0, "transport %s, "
	    "not %s", json_object_get_string(v), want);
	CHECK(json_object_object_get_ex(j, "ip", &v), "ip");
	if (strcmp(want, "tcp") == 0)
		CHECK(strcmp(json_object_get_string(v), "127.0.0.1") == 0,
		    "ip %s", json_object_get_string(v));
	else {
		/* xeus-python aborts on an ip over 23 characters. */
		CHECK(strlen(json_object_get_string(v)) <= 23 &&
		    strncmp(json_object_get_string(v), "/tmp/", 5) == 0,
		    "ipc ip %s", json_object_get_string(v));
		snprintf(ipdir, sizeof ipdir, "%s", json_object_get_string(v));
		*strrchr(ipdir, '/') = '\0';
		CHECK(lstat(ipdir, &sb) == 0 && S_ISDIR(sb.st_mode) &&
		    (sb.st_mode & 07777) == 0700 && sb.st_uid == getuid(),
		    "ipc directory %s mode %o", ipdir, sb.st_mode & 07777);
	}
	CHECK(json_object_object_get_ex(j, "signature_scheme", &v) &&
	    strcmp(json_object_get_string(v), "hmac-sha256") == 0, "scheme");
	CHECK(json_object_object_get_ex(j, "key", &v), "key");
	key = json_object_get_string(v);
	CHECK(strlen(key) == 64, "key of %zu hex digits", strlen(key));
	for (i = 0; i < 64; i++)
		CHECK(strchr("0123456789abcdef", key[i]) != NULL, "key %s",
		    key);
	return (j);
}

/* A port of the connection file. */
static int
conn_port(struct json_object *j, const char *name)
{
	struct json_object	*v;

	CHECK(json_object_object_get_ex(j, name, &v), "%s", name);
	return (json_object_get_int(v));
}

/* Wait up to ms for pid to be gone (kill(pid, 0) fails). */
static int
gone(pid_t pid, int ms)
{
	int64_t	end = util_mono_ms() + ms;

	while (util_mono_ms() < end) {
		if (kill(pid, 0) == -1 && errno == ESRCH)
			return (1);
		usleep(10000);
	}
	return (0);
}

static int
cmp64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

/* runtimed-agent --list-kernelspecs prints every kernelspec as JSON. */
static void
listing(const char *path)
{
	struct json_object	*list, *item, *v;
	char			 cmd[1100], buf[65536];
	FILE			*f;
	size_t			 n, i;
	int			 seen = 0;

	snprintf(cmd, sizeof cmd, "%s --list-kernelspecs", path);
	CHECK((f = popen(cmd, "r")) != NULL, "popen");
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	CHECK(pclose(f) == 0, "--list-kernelspecs failed");
	CHECK((list = json_tokener_parse(buf)) != NULL &&
	    json_object_is_type(list, json_type_array), "not JSON: %s", buf);
	for (i = 0; i < json_object_array_length(list); i++) {
		item = json_object_array_get_idx(list, i);
		CHECK(json_object_object_get_ex(item, "name", &v), "name");
		if (strcmp(json_object_get_string(v), "python3") == 0)
			seen |= 1;
		if (strcmp(json_object_get_string(v), "failing") == 0)
			seen |= 2;
	}
	CHECK(seen == 3, "listing %s", buf);
	json_object_put(list);
	printf("--list-kernelspecs: %s", buf);
}

/* Wait up to 10 s for the agent to exit; returns its status. */
static int
wait_agent(void)
{
	int	status, i;

	for (i = 0; i < 1000; i++) {
		if (waitpid(agent_pid, &status, WNOHANG) == agent_pid) {
			agent_pid = -1;
			return (status);
		}
		usleep(10000);
	}
	CHECK(0, "agent %ld did not exit", (long)agent_pid);
	return (-1);
}

/* Start runtimed-agent on a socketpair and answer its HELLO. */
static void
spawn_agent(char *path)
{
	struct proto_header		 hdr;
	msgpack_unpacked		 u;
	struct proto_hello		 hello;
	struct proto_incarnation	 inc;
	struct mpbuf			 b;
	char				*argv[3], *cause = NULL, err1[256];
	int				 sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0, sv) == 0,
	    "socketpair");
	argv[0] = path;
	argv[1] = getenv("AGENT_LIVE_VERBOSE") != NULL ? "-vv" : NULL;
	argv[2] = NULL;
	agent_pid = spawn_child(path, argv, sv[1], 0, &cause);
	CHECK(agent_pid > 0, "spawn: %s", cause);
	close(sv[1]);
	dfd = sv[0];

	/* Handshake, daemon side. */
	recvf(&hdr, &u, 10000);
	CHECK(hdr.type == PROTO_MSG_HELLO, "first frame %s",
	    proto_msg_name(hdr.type));
	CHECK(proto_hello_unpack(&u.data, &hello, err1, sizeof err1) == 0,
	    "%s", err1);
	CHECK(strcmp(hello.kind, PROTO_PEER_AGENT) == 0, "kind %s",
	    hello.kind);
	CHECK(hello.pid == agent_pid, "hello pid");
	msgpack_unpacked_destroy(&u);
	memset(&inc, 0, sizeof inc);
	inc.pid = getpid();
	inc.started_at = util_now_us();
	snprintf(inc.version, sizeof inc.version, "test");
	mpbuf_init(&b);
	proto_hello_ok_pack(&b.pk, &inc);
	sendf(PROTO_MSG_HELLO_OK, hdr.id, &b);
	mpbuf_free(&b);

}

/* What the family test runs on one kernelspec. */
struct family {
	const char	*name;
	const char	*language;	/* language_info.name */
	const char	*print;		/* prints 42 and a newline */
	const char	*result;	/* the value 42 */
	const char	*result_type;	/* its output_type */
	const char	*result_plain;	/* its text/plain */
	const char	*display;	/* display_data "shown" */
	const char	*error;		/* fails */
	const char	*ename;		/* part of its ename */
	const char	*to_stderr;	/* writes "e" to stderr */
	const char	*ask;		/* asks for input */
	const char	*busy;		/* busy for 4 s */
	const char	*sleep;		/* busy for 30 s */
	const char	*set;		/* x = 1 */
	const char	*get;		/* does x exist? */
	const char	*yes, *no;	/* text/plain of get */
	int		 interrupt_ends; /* SIGINT ends the kernel */
};

static const struct family families[] = {
	{ "ir", "R", "cat('42\\n')", "6*7", "display_data", "[1] 42",
	  "IRdisplay::publish_mimebundle(list('text/plain' = 'shown'))",
	  "stop('boom')", "ERROR", "message('e')", "readline('name? ')",
	  "Sys.sleep(4)", "Sys.sleep(30)", "x <- 1", "exists('x')",
	  "[1] TRUE", "[1] FALSE", 0 },
	{ "xpython", "python", "print(42)", "6*7", "execute_result", "42",
	  "from IPython.display import display\n"
	  "display({'text/plain': 'shown'}, raw=True)",
	  "1/0", "ZeroDivisionError", "import sys; print('e', file=sys.stderr)",
	  "input('name? ')", "import time; time.sleep(4)",
	  "import time; time.sleep(30)", "x = 1", "'x' in globals()",
	  "True", "False", 1 },
};

/* All the text of one stream name, concatenated; caller frees. */
static char *
streams(struct run *r, const char *name)
{
	char	*out = xstrdup(""), *prev;
	size_t	 i;

	for (i = 0; i < json_object_array_length(r->outputs); i++) {
		if (strcmp(outfield(r, i, "output_type"), "stream") != 0 ||
		    strcmp(outfield(r, i, "name"), name) != 0)
			continue;
		prev = out;
		xasprintf(&out, "%s%s", prev, outfield(r, i, "text"));
		free(prev);
	}
	return (out);
}

/*
 * Receive until a frame of type (and state, for AGENT_STATUS).  What is
 * passed over is reported, so that a timeout says what came instead.
 */
static void
wait_for(uint16_t type, const char *state, int ms)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	char			*got;

	for (;;) {
		recvf(&hdr, &u, ms);
		if (hdr.type == type && (state == NULL ||
		    proto_obj_streq(proto_get(&u.data, "state"), state))) {
			msgpack_unpacked_destroy(&u);
			return;
		}
		got = str(&u.data, "state");
		fprintf(stderr, "  (%s%s%s at %lld ms while waiting for %s%s%s)"
		    "\n", proto_msg_name(hdr.type), *got != '\0' ? " " : "",
		    got, (long long)util_mono_ms(), proto_msg_name(type),
		    state != NULL ? " " : "", state != NULL ? state : "");
		free(got);
		msgpack_unpacked_destroy(&u);
	}
}

/* AGENT_INTERRUPT; the reply must be OK. */
static void
interrupt(void)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	uint32_t		 id = next_id++;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	sendf(PROTO_MSG_AGENT_INTERRUPT, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	CHECK(hdr.type == PROTO_MSG_OK, "interrupt reply %s: %s",
	    proto_msg_name(hdr.type), proto_get_str(&u.data, "message",
	    NULL));
	msgpack_unpacked_destroy(&u);
}

/* AGENT_SHUTDOWN {restart}: OK, then READY id 0; returns the new pid. */
static pid_t
restart(pid_t old)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	uint32_t		 id = next_id++;
	int64_t			 pid = -1;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_bool(&b.pk, "restart", 1);
	sendf(PROTO_MSG_AGENT_SHUTDOWN, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	CHECK(hdr.type == PROTO_MSG_OK, "shutdown reply %s",
	    proto_msg_name(hdr.type));
	msgpack_unpacked_destroy(&u);
	CHECK(gone(old, 1000), "old kernel %ld still there", (long)old);
	recvf(&hdr, &u, WAIT_MS);
	CHECK(hdr.type == PROTO_MSG_AGENT_READY && hdr.id == 0,
	    "after restart %s id %u: %s", proto_msg_name(hdr.type), hdr.id,
	    proto_get_str(&u.data, "reason", NULL));
	CHECK(proto_get_int(&u.data, "pid", &pid) == 0 && pid > 0 &&
	    pid != old, "new pid");
	msgpack_unpacked_destroy(&u);
	kernel_pids[nkernel_pids++] = pid;
	return (pid);
}

/*
 * One kernel family through the agent: every output type, stdin refused,
 * a cell busier than the hang bound, a stopped kernel, interrupt,
 * restart, and the agent leaving.
 */
static int
family(char *path, const struct family *f)
{
	struct run		 r;
	struct json_object	*conn;
	struct kernelspec	*ks;
	char			*err, *text, exec_id[32];
	int64_t			 ms, t0, us[20];
	pid_t			 kpid;
	int			 i, status;

	if ((ks = kernelspec_find(f->name, &err)) == NULL) {
		printf("SKIP: kernelspec %s is not installed (%s)\n", f->name,
		    err);
		free(err);
		return (77);
	}
	kernelspec_free(ks);
	want_name = f->name;
	want_lang = f->language;
	/* A cell busy for 4 s must outlive a 2 s hang bound. */
	setenv("RUNTIMED_KERNEL_HUNG_SECS", "2", 1);
	spawn_agent(path);

	kpid = start(f->name, &ms, &err);
	CHECK(kpid > 0, "start %s: %s", f->name, err);
	printf("%s: AGENT_START -> AGENT_READY: %lld ms (kernel pid %ld)\n",
	    f->name, (long long)ms, (long)kpid);
	conn = conn_file_check(rdir, "ipc");
	printf("%s: connection file 0600 in 0700, ipc in a 0700 directory "
	    "(%s)\n", f->name, json_object_get_string(
	    json_object_object_get(conn, "ip")));
	json_object_put(conn);

	execute(f->print, &r, 0);
	CHECK(strcmp(r.status, "ok") == 0, "print status %s", r.status);
	CHECK(r.started && r.execution_count == 1, "count %lld",
	    (long long)r.execution_count);
	text = streams(&r, "stdout");
	CHECK(strcmp(text, "42\n") == 0, "stdout '%s'", text);
	free(text);
	run_free(&r);

	execute(f->result, &r, 0);
	CHECK(strcmp(r.status, "ok") == 0, "result status %s", r.status);
	CHECK(strcmp(outfield(&r, 0, "output_type"), f->result_type) == 0 &&
	    strcmp(outplain(&r, 0), f->result_plain) == 0, "result");
	run_free(&r);

	execute(f->display, &r, 0);
	CHECK(strcmp(r.status, "ok") == 0, "display status %s", r.status);
	CHECK(strcmp(outfield(&r, 0, "output_type"), "display_data") == 0 &&
	    strcmp(outplain(&r, 0), "shown") == 0, "display_data");
	run_free(&r);

	execute(f->error, &r, 0);
	CHECK(strcmp(r.status, "error") == 0, "error status %s", r.status);
	CHECK(strcmp(outfield(&r, 0, "output_type"), "error") == 0 &&
	    strstr(outfield(&r, 0, "ename"), f->ename) != NULL, "ename %s",
	    outfield(&r, 0, "ename"));
	run_free(&r);

	execute(f->to_stderr, &r, 0);
	text = streams(&r, "stderr");
	CHECK(strcmp(r.status, "ok") == 0 && strstr(text, "e") != NULL,
	    "stderr '%s'", text);
	free(text);
	run_free(&r);

	/* Asking for input is answered and ends (R's readline may not ask). */
	t0 = util_mono_ms();
	execute(f->ask, &r, 0);
	CHECK(r.status != NULL && util_mono_ms() - t0 < 10000 &&
	    r.ninput <= 1, "input waited, or asked %d times", r.ninput);
	printf("%s: input with allow_stdin: %s in %lld ms, asked %d time(s)\n",
	    f->name, r.status, (long long)(util_mono_ms() - t0), r.ninput);
	run_free(&r);

	for (i = 0; i < 20; i++) {
		t0 = util_now_us();
		execute(f->result, &r, 1);
		CHECK(strcmp(r.status, "ok") == 0, "round trip");
		run_free(&r);
		us[i] = util_now_us() - t0;
	}
	qsort(us, 20, sizeof us[0], cmp64);
	printf("%s: round trip of %s over 20 runs: min %.2f ms, median "
	    "%.2f ms\n", f->name, f->result, us[0] / 1000.0,
	    (us[9] + us[10]) / 2000.0);

	/* Busy is not hung, whether or not it answers while busy. */
	execute(f->busy, &r, 0);
	CHECK(r.dead == NULL, "busy kernel killed: %s", r.dead);
	CHECK(strcmp(r.status, "ok") == 0 && r.nunresponsive == 0,
	    "busy cell: %s, %d unresponsive", r.status, r.nunresponsive);
	run_free(&r);
	printf("%s: a 4 s cell with a 2 s hang bound: ok\n", f->name);

	/* A stopped kernel is unresponsive, even in a run; then back. */
	execute_send(f->sleep, exec_id, sizeof exec_id, 0);
	wait_for(PROTO_MSG_AGENT_EXEC_STARTED, NULL, WAIT_MS);
	kill(kpid, SIGSTOP);
	t0 = util_mono_ms();
	wait_for(PROTO_MSG_AGENT_STATUS, "unresponsive", 5000);
	kill(kpid, SIGCONT);
	printf("%s: SIGSTOP during a run -> unresponsive in %lld ms "
	    "(SIGCONT at %lld ms)\n", f->name, (long long)(util_mono_ms() -
	    t0), (long long)util_mono_ms());
	wait_for(PROTO_MSG_AGENT_STATUS, "busy", 5000);

	/*
	 * Interrupt the sleeping cell: the kernel lives on, or (xeus-python
	 * 0.14 ends on SIGINT, as under jupyter_client) its death says why.
	 */
	usleep(300000);
	t0 = util_mono_ms();
	interrupt();
	execute_wait(exec_id, &r, 0);
	CHECK(util_mono_ms() - t0 < 10000, "interrupt took too long");
	if (f->interrupt_ends) {
		CHECK(r.dead != NULL && strstr(r.dead, "on the interrupt") !=
		    NULL, "death after the interrupt: %s", r.dead);
		printf("%s: interrupt: kernel ended %lld ms after "
		    "AGENT_INTERRUPT: %s\n", f->name,
		    (long long)(util_mono_ms() - t0), r.dead);
		run_free(&r);
		kpid = restart(kpid);
	} else {
		CHECK(r.dead == NULL, "interrupt killed the kernel: %s",
		    r.dead);
		CHECK(strcmp(r.status, "ok") != 0, "interrupted cell ended ok");
		printf("%s: interrupt: cell ended %s %lld ms after "
		    "AGENT_INTERRUPT\n", f->name, r.status,
		    (long long)(util_mono_ms() - t0));
		run_free(&r);
	}
	execute(f->print, &r, 1);
	CHECK(strcmp(r.status, "ok") == 0, "after interrupt %s", r.status);
	run_free(&r);

	/* Restart: a fresh kernel without x. */
	execute(f->set, &r, 1);
	run_free(&r);
	execute(f->get, &r, 1);
	CHECK(strcmp(outplain(&r, 0), f->yes) == 0, "get %s", outplain(&r, 0));
	run_free(&r);
	t0 = util_mono_ms();
	kpid = restart(kpid);
	printf("%s: restart: ready again after %lld ms (pid %ld)\n", f->name,
	    (long long)(util_mono_ms() - t0), (long)kpid);
	execute(f->get, &r, 1);
	CHECK(strcmp(outplain(&r, 0), f->no) == 0 && r.execution_count == 1,
	    "after restart: %s, count %lld", outplain(&r, 0),
	    (long long)r.execution_count);
	run_free(&r);

	close(dfd);
	dfd = -1;
	status = wait_agent();
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "agent exit status %d", status);
	CHECK(gone(kpid, 1000), "kernel %ld survived its agent", (long)kpid);
	CHECK(conn_file_mode() == -1, "connection file left behind");
	printf("%s: fd 3 closed: agent exited 0, kernel gone\n", f->name);
	free(path);
	printf("PASS\n");
	return (0);
}

/* AGENT_LIVE_BENCH: n starts, each followed by 20 runs of 1+1. */
static int
bench(char *path, int n)
{
	struct proto_header	 hdr;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	struct run		 r;
	int64_t			 st[64], rt[64 * 20], ms, t0;
	char			*err;
	uint32_t		 id;
	int			 i, j;

	if (n < 1 || n > 64)
		n = 10;
	spawn_agent(path);
	for (i = 0; i < n; i++) {
		CHECK(start("python3", &ms, &err) > 0, "start: %s", err);
		st[i] = ms;
		for (j = 0; j < 20; j++) {
			t0 = util_now_us();
			execute("1+1", &r, 1);
			CHECK(strcmp(r.status, "ok") == 0, "1+1");
			run_free(&r);
			rt[i * 20 + j] = util_now_us() - t0;
		}
		mpbuf_init(&b);
		msgpack_pack_map(&b.pk, 0);
		id = next_id++;
		sendf(PROTO_MSG_AGENT_SHUTDOWN, id, &b);
		mpbuf_free(&b);
		reply(id, &hdr, &u);
		msgpack_unpacked_destroy(&u);
	}
	qsort(st, n, sizeof st[0], cmp64);
	qsort(rt, n * 20, sizeof rt[0], cmp64);
	printf("bench: %d starts: median %lld ms (min %lld, max %lld); "
	    "1+1 x %d: median %.2f ms\n", n, (long long)st[n / 2],
	    (long long)st[0], (long long)st[n - 1], n * 20,
	    rt[n * 10] / 1000.0);
	close(dfd);
	dfd = -1;
	wait_agent();
	free(path);
	return (0);
}

/*
 * N cells of a new random PNG of 1 MB, then of 10 MB, as bench/run.mjs
 * makes its PNG cell but with os.urandom: each writes a new blob.  The
 * agent's pid is printed and 2 s given to attach strace or perf.
 */
static int
images(char *path, int n)
{
	struct run	 r;
	int64_t		 rt[100], t0, ms;
	char		*err, code[512], what[64];
	int		 i, k, mb[2] = { 1, 10 };

	if (n < 1 || n > 100)
		n = 20;
	spawn_agent(path);
	CHECK(start("python3", &ms, &err) > 0, "start: %s", err);
	printf("images: agent pid %ld\n", (long)agent_pid);
	fflush(stdout);
	sleep(2);
	for (k = 0; k < 2; k++) {
		if (getenv("AGENT_LIVE_CODE") != NULL && k == 1)
			break;
		snprintf(code, sizeof code, "import base64, os; "
		    "from IPython.display import display; "
		    "s = base64.b64encode(b'\\x89PNG' + %s(%d))"
		    ".decode(); display({'image/png': s}, raw=True)",
		    getenv("AGENT_LIVE_SAME") != NULL ? "bytes" : "os.urandom",
		    mb[k] * 786432 - 4);
		if (getenv("AGENT_LIVE_CODE") != NULL)
			snprintf(code, sizeof code, "%s",
			    getenv("AGENT_LIVE_CODE"));
		for (i = 0; i < n; i++) {
			t0 = util_now_us();
			execute(code, &r, 1);
			CHECK(strcmp(r.status, "ok") == 0, "status %s",
			    r.status);
			run_free(&r);
			rt[i] = util_now_us() - t0;
		}
		qsort(rt, n, sizeof rt[0], cmp64);
		if (getenv("AGENT_LIVE_CODE") != NULL)
			snprintf(what, sizeof what, "AGENT_LIVE_CODE");
		else
			snprintf(what, sizeof what, "%s %d MB PNG",
			    getenv("AGENT_LIVE_SAME") != NULL ? "the same" :
			    "a new", mb[k]);
		printf("images: %s x %d: median %.2f ms, best %.2f ms\n",
		    what, n, rt[n / 2] / 1000.0, rt[0] / 1000.0);
	}
	close(dfd);
	dfd = -1;
	wait_agent();
	free(path);
	return (0);
}

int
main(int argc, char **argv)
{
	struct proto_header		 hdr;
	msgpack_unpacked		 u;
	struct mpbuf			 b;
	struct run			 r;
	char				*path, *err;
	char				 exec_id[32], exec2[32], want[64];
	const char			*text;
	struct json_object		*conn;
	int				 status, i, n, port;
	int64_t				 ms, us[50], t0, t1, trim0;
	long				 rss0;
	pid_t				 kpid, kpid2;
	uint32_t			 id;
	size_t				 len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	log_open("agent-live", LOG_LEVEL_WARN, NULL);
	atexit(cleanup);
	CHECK(mkdtemp(rdir) != NULL && chmod(rdir, 0700) == 0, "mkdtemp");
	snprintf(rbase, sizeof rbase, "%.63s", rdir);
	CHECK(mkdtemp(datadir) != NULL, "mkdtemp");
	/* Only the system python3 kernelspec: no user or pyenv ones. */
	unsetenv("JUPYTER_PATH");
	setenv("JUPYTER_DATA_DIR", datadir, 1);

	path = spawn_find("runtimed-agent", RUNTIMED_LIBEXECDIR, NULL);
	CHECK(path != NULL, "runtimed-agent not found");
	printf("agent: %s\n", path);
	if (getenv("AGENT_LIVE_BENCH") != NULL)
		return (bench(path, atoi(getenv("AGENT_LIVE_BENCH"))));
	if (getenv("AGENT_LIVE_IMAGES") != NULL)
		return (images(path, atoi(getenv("AGENT_LIVE_IMAGES"))));
	if (argc > 1) {
		for (i = 0; i < (int)(sizeof families / sizeof families[0]);
		    i++) {
			if (strcmp(families[i].name, argv[1]) == 0)
				return (family(path, &families[i]));
		}
		CHECK(0, "no family test for %s", argv[1]);
	}
	spawn_agent(path);

	/* Nothing to execute on yet. */
	id = execute_send("1", exec_id, sizeof exec_id, 0);
	reply(id, &hdr, &u);
	CHECK(hdr.type == PROTO_MSG_ERROR, "execute before start");
	msgpack_unpacked_destroy(&u);

	/* An unknown kernel is a typed error naming what exists. */
	kpid = start("nosuchkernel", &ms, &err);
	CHECK(kpid == -1 && strstr(err, "python3") != NULL, "err %s", err);
	printf("unknown kernel: %s\n", err);
	free(err);

	/* A kernel that dies at once: its stderr says why. */
	write_spec("failing", "[\"/bin/sh\", \"-c\", "
	    "\"echo starting >&2; echo boom: no module >&2; exit 3\", "
	    "\"{connection_file}\"]", "sh");
	kpid = start("failing", &ms, &err);
	CHECK(kpid == -1 && strstr(err, "boom: no module") != NULL &&
	    strstr(err, "exited with status 3") != NULL, "err %s", err);
	printf("failing kernel (%lld ms): %s\n", (long long)ms, err);
	free(err);
	write_spec("missing", "[\"/nonexistent/python\", \"-f\", "
	    "\"{connection_file}\"]", "sh");
	kpid = start("missing", &ms, &err);
	CHECK(kpid == -1 && strstr(err, "cannot execute") != NULL, "err %s",
	    err);
	printf("missing executable: %s\n", err);
	free(err);

	/* The listing for list_kernels sees the same search path. */
	listing(path);

	kpid = start("python3", &ms, &err);
	CHECK(kpid > 0, "start: %s", err);
	printf("AGENT_START -> AGENT_READY: %lld ms (kernel pid %ld)\n",
	    (long long)ms, (long)kpid);
	CHECK(conn_file_mode() == 0600, "connection file mode %o",
	    conn_file_mode());

	execute("x = 6*7; print(x)", &r, 0);
	CHECK(r.started && r.started_count == 1, "started");
	CHECK(r.status != NULL && strcmp(r.status, "ok") == 0, "status");
	CHECK(r.execution_count == 1, "count %lld",
	    (long long)r.execution_count);
	CHECK(json_object_array_length(r.outputs) == 1, "outputs");
	CHECK(strcmp(outfield(&r, 0, "output_type"), "stream") == 0 &&
	    strcmp(outfield(&r, 0, "name"), "stdout") == 0 &&
	    strcmp(outfield(&r, 0, "text"), "42\n") == 0, "stream");
	run_free(&r);

	execute("x + 1", &r, 0);
	CHECK(strcmp(r.status, "ok") == 0, "status %s", r.status);
	CHECK(strcmp(outfield(&r, 0, "output_type"), "execute_result") == 0,
	    "type");
	CHECK(strcmp(outplain(&r, 0), "43") == 0, "43");
	CHECK(strcmp(outfield(&r, 0, "execution_count"), "2") == 0, "count");
	run_free(&r);

	/* Displays keep their display_id; an update names it. */
	execute("h = display('a', display_id='d1')", &r, 0);
	CHECK(strstr(outfield(&r, 0, "transient"), "d1") != NULL,
	    "no transient.display_id");
	run_free(&r);
	execute("h.update('b')", &r, 0);
	CHECK(r.nupdate == 1 && strcmp(outplain(&r, 0), "'b'") == 0,
	    "update_display_data not sent as an update");
	run_free(&r);
	printf("update_display_data -> AGENT_OUTPUT {update, display_id}\n");

	/* A value of 1 MiB or more goes to the blob store. */
	execute("display({'text/plain': 'y' * (1 << 20)}, raw=True)", &r, 1);
	text = outfield(&r, 0, "data");
	CHECK(strstr(text, "runtimed_blob") != NULL &&
	    strstr(text, "1048576") != NULL, "no blob reference: %.200s",
	    text);
	printf("1 MiB output -> %s\n", text);
	run_free(&r);
	blobs_in_order();

	/*
	 * The buffers of a big output stay in the agent's heap while runs
	 * come, and go back once the kernel has been idle for
	 * AGENT_EXEC_TRIM_SECS (5, runtime-agent/agent.h): checked after
	 * the heartbeat's, which runs no cell meanwhile.
	 */
	rss0 = rss_kb(agent_pid);
	for (i = 0; i < 2; i++) {
		execute("display({'text/plain': 'y' * (12 << 20)}, raw=True)",
		    &r, 1);
		run_free(&r);
	}
	trim0 = util_mono_ms();
	printf("two 12 MiB outputs: agent RSS %ld KiB, %ld before\n",
	    rss_kb(agent_pid), rss0);

	/* Heartbeat: a stopped kernel is unresponsive, then back. */
	kill(kpid, SIGSTOP);
	t0 = util_mono_ms();
	for (;;) {
		recvf(&hdr, &u, 5000);
		if (hdr.type == PROTO_MSG_AGENT_STATUS &&
		    proto_obj_streq(proto_get(&u.data, "state"),
		    "unresponsive"))
			break;
		msgpack_unpacked_destroy(&u);
	}
	msgpack_unpacked_destroy(&u);
	printf("SIGSTOP -> AGENT_STATUS unresponsive in %lld ms\n",
	    (long long)(util_mono_ms() - t0));
	kill(kpid, SIGCONT);
	for (;;) {
		recvf(&hdr, &u, 5000);
		if (hdr.type == PROTO_MSG_AGENT_STATUS &&
		    proto_obj_streq(proto_get(&u.data, "state"), "idle"))
			break;
		msgpack_unpacked_destroy(&u);
	}
	msgpack_unpacked_destroy(&u);
	printf("SIGCONT -> AGENT_STATUS idle\n");

#ifndef __SANITIZE_ADDRESS__	/* ASan's allocator keeps what it likes */
	while (rss_kb(agent_pid) > rss0 + 4096 &&
	    util_mono_ms() - trim0 < 10000)
		usleep(100000);
	CHECK(rss_kb(agent_pid) <= rss0 + 4096, "the agent kept %ld KiB "
	    "%lld ms after two 12 MiB outputs", rss_kb(agent_pid) - rss0,
	    (long long)(util_mono_ms() - trim0));
	printf("idle -> agent RSS %ld KiB after %lld ms\n", rss_kb(agent_pid),
	    (long long)(util_mono_ms() - trim0));
#else
	printf("agent RSS %lld ms after the outputs not checked under ASan\n",
	    (long long)(util_mono_ms() - trim0));
#endif

	execute("1/0", &r, 0);
	CHECK(r.status != NULL && strcmp(r.status, "error") == 0, "status");
	CHECK(strcmp(outfield(&r, 0, "output_type"), "error") == 0 &&
	    strcmp(outfield(&r, 0, "ename"), "ZeroDivisionError") == 0,
	    "error output");
	run_free(&r);

	/* input() asks once (allow_stdin) and goes on with the answer. */
	t0 = util_mono_ms();
	execute("print('got', input('name? '))", &r, 0);
	CHECK(strcmp(r.status, "ok") == 0 && r.ninput == 1 && !r.password,
	    "input status %s, asked %d", r.status, r.ninput);
	CHECK(strcmp(outfield(&r, 0, "text"), "got agent\n") == 0,
	    "input's answer: %s", outfield(&r, 0, "text"));
	printf("input() asked and was answered in %lld ms\n",
	    (long long)(util_mono_ms() - t0));
	run_free(&r);

	/* display_data and clear_output. */
	execute("from IPython.display import display, clear_output\n"
	    "display({'text/plain': 'shown'}, raw=True)\n"
	    "clear_output(wait=True)\nprint('after')", &r, 0);
	CHECK(strcmp(r.status, "ok") == 0, "status");
	CHECK(strcmp(outfield(&r, 0, "output_type"), "display_data") == 0 &&
	    strcmp(outplain(&r, 0), "shown") == 0, "display_data");
	CHECK(r.clear == 1, "clear_output");
	run_free(&r);

	/*
	 * Many flushed lines: all text arrives, merged into few frames.
	 * 900 stays under the kernel's PUB high-water mark (1000), past
	 * which ZeroMQ drops iopub messages when any reader lags.
	 */
	execute("import sys\nfor i in range(900): print(i, flush=True)\n"
	    "print('err', file=sys.stderr)", &r, 1);
	CHECK(strcmp(r.status, "ok") == 0, "status");
	len = 0;
	n = 0;
	for (i = 0; i < (int)json_object_array_length(r.outputs); i++) {
		if (strcmp(outfield(&r, i, "name"), "stdout") == 0) {
			text = outfield(&r, i, "text");
			for (; *text != '\0'; text++) {
				if (*text == '\n')
					n++;
			}
			len += strlen(outfield(&r, i, "text"));
		}
	}
	CHECK(n == 900, "lines %d", n);
	CHECK(strcmp(outfield(&r, json_object_array_length(r.outputs) - 1,
	    "name"), "stderr") == 0, "stderr last");
	printf("900 flushed prints: %zu bytes in %d stream frames\n", len,
	    r.nstream);
	run_free(&r);

	/* Round trip of 1+1, 50 times. */
	for (i = 0; i < 50; i++) {
		t0 = util_now_us();
		execute("1+1", &r, 1);
		t1 = util_now_us();
		CHECK(strcmp(r.status, "ok") == 0 &&
		    strcmp(outplain(&r, 0), "2") == 0, "1+1");
		run_free(&r);
		us[i] = t1 - t0;
	}
	qsort(us, 50, sizeof us[0], cmp64);
	printf("1+1 round trip over 50 runs: min %.2f ms, median %.2f ms, "
	    "max %.2f ms\n", us[0] / 1000.0, (us[24] + us[25]) / 2000.0,
	    us[49] / 1000.0);

	/* Interrupt a sleeping cell. */
	execute_send("import time; time.sleep(30)", exec_id, sizeof exec_id,
	    0);
	recvf(&hdr, &u, WAIT_MS);
	while (hdr.type != PROTO_MSG_AGENT_EXEC_STARTED) {
		msgpack_unpacked_destroy(&u);
		recvf(&hdr, &u, WAIT_MS);
	}
	msgpack_unpacked_destroy(&u);
	usleep(200000);
	t0 = util_mono_ms();
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	id = next_id++;
	sendf(PROTO_MSG_AGENT_INTERRUPT, id, &b);
	mpbuf_free(&b);
	recvf(&hdr, &u, WAIT_MS);
	CHECK(hdr.type == PROTO_MSG_OK && hdr.id == id, "interrupt reply %s",
	    proto_msg_name(hdr.type));
	msgpack_unpacked_destroy(&u);
	execute_wait(exec_id, &r, 0);
	CHECK(strcmp(r.status, "error") == 0, "interrupted status %s",
	    r.status);
	CHECK(strcmp(outfield(&r, 0, "ename"), "KeyboardInterrupt") == 0,
	    "KeyboardInterrupt");
	printf("interrupt: cell ended %lld ms after AGENT_INTERRUPT\n",
	    (long long)(util_mono_ms() - t0));
	run_free(&r);

	/*
	 * stop_on_error: a cell queued behind a failure is aborted.  The
	 * failing cell sleeps first so the second request is surely queued
	 * while it runs, even on a loaded machine.  The kernel stays
	 * "aborting" for a moment, so the restart comes next.
	 */
	execute_send("import time; time.sleep(0.5); 1/0", exec_id,
	    sizeof exec_id, 1);
	execute_send("print('never')", exec2, sizeof exec2, 1);
	execute_wait(exec_id, &r, 1);
	CHECK(strcmp(r.status, "error") == 0, "first %s", r.status);
	run_free(&r);
	execute_wait(exec2, &r, 1);
	CHECK(strcmp(r.status, "aborted") == 0, "second %s", r.status);
	CHECK(json_object_array_length(r.outputs) == 0, "aborted output");
	printf("queued behind an error: %s\n", "aborted");
	run_free(&r);

	/* Restart: OK once the old kernel is gone, then READY id 0. */
	t0 = util_mono_ms();
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_bool(&b.pk, "restart", 1);
	id = next_id++;
	sendf(PROTO_MSG_AGENT_SHUTDOWN, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	CHECK(hdr.type == PROTO_MSG_OK, "shutdown reply %s",
	    proto_msg_name(hdr.type));
	msgpack_unpacked_destroy(&u);
	CHECK(gone(kpid, 100), "old kernel %ld still there", (long)kpid);
	printf("restart: old kernel gone after %lld ms\n",
	    (long long)(util_mono_ms() - t0));
	recvf(&hdr, &u, WAIT_MS);
	CHECK(hdr.type == PROTO_MSG_AGENT_READY && hdr.id == 0,
	    "after restart %s id %u", proto_msg_name(hdr.type), hdr.id);
	CHECK(proto_get_int(&u.data, "pid", &ms) == 0 && ms > 0 &&
	    ms != kpid, "new pid");
	kpid = ms;
	kernel_pids[nkernel_pids++] = kpid;
	msgpack_unpacked_destroy(&u);
	printf("restart: ready again after %lld ms (pid %ld)\n",
	    (long long)(util_mono_ms() - t0), (long)kpid);
	execute("x = 1\nx", &r, 1);
	CHECK(strcmp(outplain(&r, 0), "1") == 0 && r.execution_count == 1,
	    "fresh kernel after restart");
	run_free(&r);

	/* The kernel dies: AGENT_STATUS dead, no reply awaited forever. */
	execute("import os; os._exit(1)", &r, 0);
	CHECK(r.dead != NULL, "no AGENT_STATUS dead");
	snprintf(want, sizeof want, "exited with status 1");
	CHECK(strcmp(r.dead, want) == 0, "reason %s", r.dead);
	printf("kernel death: %s\n", r.dead);
	run_free(&r);
	CHECK(gone(kpid, 1000), "dead kernel %ld still there", (long)kpid);
	CHECK(conn_file_mode() == -1, "connection file left behind");

	/* It can be started again, then losing fd 3 takes it down. */
	kpid2 = start("python3", &ms, &err);
	CHECK(kpid2 > 0, "second start: %s", err);
	printf("second AGENT_START -> AGENT_READY: %lld ms\n", (long long)ms);
	execute("print('again')", &r, 1);
	CHECK(strcmp(outfield(&r, 0, "text"), "again\n") == 0, "again");
	run_free(&r);

	t0 = util_mono_ms();
	close(dfd);
	dfd = -1;
	status = wait_agent();
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "agent exit status %d", status);
	CHECK(kill(kpid2, 0) == -1 && errno == ESRCH,
	    "kernel %ld survived its agent", (long)kpid2);
	CHECK(conn_file_mode() == -1, "connection file left behind");
	printf("fd 3 closed: agent exited 0 and kernel gone in %lld ms\n",
	    (long long)(util_mono_ms() - t0));

	/*
	 * SIGTERM: the same, from a fresh agent, sent while new values are
	 * being written: what the agent queued is sent before it exits, in
	 * order, each blob valid.
	 */
	spawn_agent(path);
	kpid2 = start("python3", &ms, &err);
	CHECK(kpid2 > 0, "third start: %s", err);
	execute_send("import base64, os\n"
	    "r = os.urandom(3 << 20)\n"
	    "for i in range(4): display({'image/png': "
	    "base64.b64encode(bytes([i]) + r).decode()}, raw=True)\n",
	    exec_id, sizeof exec_id, 0);
	wait_for(PROTO_MSG_AGENT_OUTPUT, NULL, WAIT_MS);
	t0 = util_mono_ms();
	CHECK(kill(agent_pid, SIGTERM) == 0, "kill");
	status = wait_agent();
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "agent exit status %d", status);
	n = sigterm_outputs();
	printf("SIGTERM after the first of 4 new values: %d more sent, "
	    "blobs valid\n", n);
	CHECK(kill(kpid2, 0) == -1 && errno == ESRCH,
	    "kernel %ld survived its agent", (long)kpid2);
	close(dfd);
	dfd = -1;
	printf("SIGTERM: agent exited 0 and kernel gone in %lld ms\n",
	    (long long)(util_mono_ms() - t0));

	/*
	 * A runtime directory deeper than any ipc socket path could be
	 * (sun_path is 108 bytes): the sockets are in /tmp, not there.
	 */
	len = strlen(rdir);
	for (i = 0; i < 12; i++) {
		snprintf(rdir + len, sizeof rdir - len, "/deep-directory-%02d",
		    i);
		len = strlen(rdir);
		CHECK(mkdir(rdir, 0700) == 0, "mkdir %s", rdir);
	}
	spawn_agent(path);
	kpid2 = start("python3", &ms, &err);
	CHECK(kpid2 > 0, "start in a %zu-byte runtime dir: %s", len, err);
	json_object_put(conn_file_check(rdir, "ipc"));
	execute("print('deep')", &r, 1);
	CHECK(strcmp(outfield(&r, 0, "text"), "deep\n") == 0, "deep");
	run_free(&r);
	printf("runtime dir of %zu bytes: ready in %lld ms\n", len,
	    (long long)ms);

	/* The port race: stolen once, the kernel comes up on new ports. */
	write_racer();
	t0 = util_mono_ms();
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	id = next_id++;
	sendf(PROTO_MSG_AGENT_SHUTDOWN, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	msgpack_unpacked_destroy(&u);
	want_name = "racer-once";
	kpid2 = start("racer-once", &ms, &err);
	CHECK(kpid2 > 0, "racer-once: %s", err);
	port = stolen_port(&n);
	conn = conn_file_check(rdir, "tcp");
	CHECK(n == 1 && port != 0 && port != conn_port(conn, "shell_port"),
	    "stolen port %d (%d thieves), kernel on %d", port, n,
	    conn_port(conn, "shell_port"));
	printf("port race: shell port %d stolen, kernel ready on %d after "
	    "%lld ms\n", port, conn_port(conn, "shell_port"), (long long)ms);
	json_object_put(conn);
	execute("print('raced')", &r, 1);
	CHECK(strcmp(outfield(&r, 0, "text"), "raced\n") == 0, "raced");
	run_free(&r);

	/* Stolen every time: a bounded number of tries, then the reason. */
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 0);
	id = next_id++;
	sendf(PROTO_MSG_AGENT_SHUTDOWN, id, &b);
	mpbuf_free(&b);
	reply(id, &hdr, &u);
	msgpack_unpacked_destroy(&u);
	kpid2 = start("racer-always", &ms, &err);
	stolen_port(&n);
	CHECK(kpid2 == -1 && strstr(err, "taken by another process, 3 "
	    "tries") != NULL && n == 4, "racer-always (%d thieves): %s", n,
	    err);
	printf("port stolen every time (%lld ms): %s\n", (long long)ms, err);
	free(err);

	/*
	 * A signed message replayed byte for byte is dropped, as Jupyter's
	 * Session drops a digest it has seen; a bad signature is dropped.
	 */
	write_replayer();
	want_name = "replayer";
	kpid2 = start("replayer", &ms, &err);
	CHECK(kpid2 > 0, "replayer: %s", err);
	json_object_put(conn_file_check(rdir, "tcp"));
	printf("a kernel that knows only tcp: ready on tcp in %lld ms\n",
	    (long long)ms);
	for (i = 0; i < 3; i++) {
		execute("anything", &r, 0);
		text = streams(&r, "stdout");
		CHECK(strcmp(r.status, "ok") == 0 &&
		    strcmp(text, "once\n") == 0,
		    "replayed or forged output accepted: '%s'", text);
		free((char *)text);
		run_free(&r);
	}
	printf("replayed and forged messages dropped, 3 runs\n");
	close(dfd);
	dfd = -1;
	CHECK(WIFEXITED(wait_agent()), "agent exit");

	/*
	 * The race again, but the kernel does not exit: it is killed at the
	 * start bound (3 s here), and then started on new ports.
	 */
	setenv("RUNTIMED_KERNEL_START_SECS", "3", 1);
	spawn_agent(path);
	want_name = "racer-hang";
	stolen_port(&i);
	kpid2 = start("racer-hang", &ms, &err);
	port = stolen_port(&n);
	CHECK(kpid2 > 0 && n == i + 1 && ms >= 3000, "racer-hang (%d "
	    "thieves, %lld ms): %s", n - i, (long long)ms, err);
	conn = conn_file_check(rdir, "tcp");
	CHECK(port != conn_port(conn, "shell_port"), "same port %d", port);
	json_object_put(conn);
	printf("port race with a silent kernel: ready on new ports after "
	    "%lld ms\n", (long long)ms);
	close(dfd);
	dfd = -1;
	CHECK(WIFEXITED(wait_agent()), "agent exit");
	free(path);
	printf("PASS\n");
	return (0);
}
