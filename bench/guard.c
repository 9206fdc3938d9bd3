/* SPDX-License-Identifier: ISC */
/*
 * guard.c: the hot paths of the message path, each in one function that
 * callgrind counts alone (bench/guard.sh runs it under
 * valgrind --tool=callgrind --toggle-collect=guard_case_NAME).
 *
 *	bench-hotpath CASE
 *
 * The cases are not static, so the compiler does not inline them into
 * main and callgrind finds them by name.  Inputs are built outside the
 * counted function and are the same on
 * every run, so the count is the same on every run of one build.
 *
 *	frame	an AGENT_OUTPUT frame packed and decoded, 500 times
 *	rpc	a tools/call request parsed and a result serialized as the
 *		worker does, 500 times
 *	mpjson	an execute result crossing a frame: JSON to msgpack and
 *		back, 500 times
 *	ipynb	a 400-cell notebook (about 1 MB) loaded and saved
 *	shape	100,000 printed lines capped into one stream output
 *	wire	the five kernel messages of a `1+1` run (busy, execute_input,
 *		execute_result, idle, execute_reply) checked and parsed as
 *		the agent does, 500 times
 *	image	a display_data of a 1 MB PNG checked and parsed as the
 *		agent does (its HMAC thread aside), 10 times, and a notebook
 *		holding it in 4 cells loaded from memory (json-splice.c)
 *	read	the cells of ipynb's notebook packed for a read as the
 *		daemon does (room_cell_pack_read), 50 times: the first packs
 *		and hashes them, the others pack them at the version kept
 *		(docs/decisions/101)
 *	outline	a 500-cell outline written as the worker writes it, from
 *		the ROOM_CONTENT the daemon sends (worker_nb_cell_line and
 *		tool_inspect_notebook_line, docs/decisions/039): every
 *		cell's line and structuredContent, serialized, 20 times
 *	redact	the execute_result of frame redacted as the agent does
 *		(agent-redact.c, docs/decisions/064) with 8 secret values
 *		known, nothing found, 500 times
 *	redactmb shape's 100,000 printed lines (about 1.1 MB) redacted
 *		once as one stream text, with one secret in it
 *
 * The redact cases also print their wall time in ns to stdout.
 */

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "common.h"
#include "runtimed/runtimed.h"
#include "runtime-agent/agent.h"
#include "mcp-worker/worker.h"

#define GUARD_LOOPS	500

static struct json_object	*guard_output(void);
static void	guard_pack_json(msgpack_packer *, const void *);
void		guard_case_frame(struct json_object *);
void		guard_case_rpc(const char *, size_t, struct json_object *);
void		guard_case_mpjson(struct json_object *);
void		guard_case_ipynb(const char *);
void		guard_case_shape(const char *, size_t);
void		guard_case_wire(char **, size_t);
void		guard_case_image(char **, const char *, size_t);
void		guard_case_read(struct room_nb *);
void		guard_case_outline(const struct worker_nb *);
/* Small enough to be inlined into main, where callgrind loses them. */
void		guard_case_redact(struct json_object *)
		    __attribute__((noinline));
void		guard_case_redactmb(const char *, size_t)
		    __attribute__((noinline));
static void	guard_redact_init(void);
static int64_t	guard_ns(void);
static struct worker_nb *guard_outline(void);
static char	*guard_image(char **, size_t *);
static char	**guard_wire(size_t *);
static char	*guard_notebook(void);
static char	*guard_lines(size_t *);

/* One execute_result with text/plain and a small text/html. */
/* What a launch environment holds: 8 secret values among others. */
static void
guard_redact_init(void)
{
	char	*env[] = {
		"HOME=/home/user", "LANG=C.UTF-8", "TERM=xterm-256color",
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"OPENAI_API_KEY=sk-proj-0123456789abcdefghijklmnopqrstuv",
		"HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
		"DB_PASSWORD=correct-Horse-battery-9",
		"SLACK_BOT_TOKEN=xoxb-123456789012-abcdefABCDEF",
		"SESSION_SECRET=l1n3-n0t-4-l1n3-but-c0ld",
		NULL
	};

	agent_redact_init(env, 0);
}

static int64_t
guard_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* An ordinary output, nothing to redact: what every output pays. */
void
guard_case_redact(struct json_object *output)
{
	int	k;

	for (k = 0; k < GUARD_LOOPS; k++)
		agent_redact_json(output);
}

void
guard_case_redactmb(const char *s, size_t len)
{
	size_t	 outlen, hold, count;
	char	*t;

	t = agent_redact_text(s, len, 1, &outlen, &hold, &count);
	if (t == NULL || count != 1)
		abort();
	free(t);
}

/* libworker.a's exits go through main's worker_exit; none is taken here. */
void
worker_exit(int status)
{
	exit(status);
}

static struct json_object *
guard_output(void)
{
	const char	*s = "{\"output_type\": \"execute_result\", "
	    "\"execution_count\": 12, \"metadata\": {}, \"data\": "
	    "{\"text/plain\": \"array([0.1, 0.2, 0.3, 0.4])\", "
	    "\"text/html\": \"<table><tr><td>0.1</td><td>0.2</td></tr>"
	    "<tr><td>0.3</td><td>0.4</td></tr></table>\"}}";

	return (json_tokener_parse(s));
}

static void
guard_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

void
guard_case_frame(struct json_object *output)
{
	struct proto_agent_output	 m, got;
	struct proto_header		 hdr;
	msgpack_unpacked		 u;
	struct mpbuf			 b;
	uint8_t				*frame;
	size_t				 used;
	char				 err[256];
	int				 i;

	for (i = 0; i < GUARD_LOOPS; i++) {
		memset(&m, 0, sizeof m);
		m.exec_id = proto_str_make("5f0c3a52-8d1e-4b8e-9a61-2c7d0e9b1f44");
		m.cell_id = proto_str_make("a1b2c3d4");
		m.output.pack = guard_pack_json;
		m.output.arg = output;
		mpbuf_init(&b);
		proto_agent_output_pack(&b.pk, &m);
		frame = xmalloc(PROTO_HEADER_SIZE + b.sb.size);
		proto_header_make(frame, PROTO_MSG_AGENT_OUTPUT, 0, b.sb.size);
		memcpy(frame + PROTO_HEADER_SIZE, b.sb.data, b.sb.size);
		if (proto_frame_decode(frame, PROTO_HEADER_SIZE + b.sb.size,
		    &hdr, &u, &used, err, sizeof err) != 1 ||
		    proto_agent_output_unpack(&u.data, &got, err,
		    sizeof err) != 0) {
			fprintf(stderr, "bench-hotpath: frame: %s\n", err);
			exit(1);
		}
		msgpack_unpacked_destroy(&u);
		free(frame);
		mpbuf_free(&b);
	}
}

void
guard_case_rpc(const char *req, size_t len, struct json_object *output)
{
	struct json_object	*msg, *reply, *result, *content, *text;
	const char		*s;
	size_t			 id_off, id_len, out_len;
	char			*cause;
	int			 nested, i;

	for (i = 0; i < GUARD_LOOPS; i++) {
		cause = NULL;
		msg = jsonrpc_parse(req, len, &id_off, &id_len, &nested,
		    &cause);
		if (msg == NULL) {
			fprintf(stderr, "bench-hotpath: rpc: %s\n", cause);
			exit(1);
		}
		reply = json_object_new_object();
		json_object_object_add(reply, "jsonrpc",
		    json_object_new_string("2.0"));
		json_object_object_add(reply, "id",
		    json_object_get(json_object_object_get(msg, "id")));
		result = json_object_new_object();
		content = json_object_new_array();
		text = json_object_new_object();
		json_object_object_add(text, "type",
		    json_object_new_string("text"));
		json_object_object_add(text, "text", json_object_new_string(
		    "cell a1b2c3d4 [12] done\narray([0.1, 0.2, 0.3, 0.4])"));
		json_object_array_add(content, text);
		json_object_object_add(result, "content", content);
		json_object_object_add(result, "structuredContent",
		    json_object_get(output));
		json_object_object_add(reply, "result", result);
		s = json_object_to_json_string_length(reply,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &out_len);
		if (s == NULL || out_len == 0)
			exit(1);
		json_object_put(reply);
		json_object_put(msg);
	}
}

void
guard_case_mpjson(struct json_object *output)
{
	struct json_object	*back;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	size_t			 off;
	int			 i;

	for (i = 0; i < GUARD_LOOPS; i++) {
		mpbuf_init(&b);
		mpjson_pack(&b.pk, output);
		msgpack_unpacked_init(&u);
		off = 0;
		if (msgpack_unpack_next(&u, b.sb.data, b.sb.size, &off) !=
		    MSGPACK_UNPACK_SUCCESS ||
		    (back = mpjson_unpack(&u.data)) == NULL) {
			fprintf(stderr, "bench-hotpath: mpjson failed\n");
			exit(1);
		}
		json_object_put(back);
		msgpack_unpacked_destroy(&u);
		mpbuf_free(&b);
	}
}

void
guard_case_ipynb(const char *path)
{
	struct room_nb	*nb;
	char		*cause = NULL, *out;
	size_t		 len;

	if ((nb = room_ipynb_read(path, &cause)) == NULL) {
		fprintf(stderr, "bench-hotpath: ipynb: %s\n", cause);
		exit(1);
	}
	out = room_ipynb_write_dump(nb, &len);
	if (out == NULL || len == 0)
		exit(1);
	free(out);
	room_nb_free(nb);
}

void
guard_case_shape(const char *text, size_t len)
{
	struct streamcap	 sc;
	struct json_object	*o;
	size_t			 off, n;

	/* As the kernel sends it: a few kilobytes a message. */
	streamcap_init(&sc);
	for (off = 0; off < len; off += n) {
		n = len - off < 4096 ? len - off : 4096;
		streamcap_add(&sc, text + off, n);
	}
	o = streamcap_output(&sc, "stdout");
	json_object_put(o);
	streamcap_free(&sc);
}

void
guard_case_read(struct room_nb *nb)
{
	struct mpbuf	b;
	size_t		i;
	int		n;

	for (n = 0; n < 50; n++) {
		mpbuf_init(&b);
		msgpack_pack_array(&b.pk, nb->ncells);
		for (i = 0; i < nb->ncells; i++)
			room_cell_pack_read(&b.pk, nb->cells[i], 0, NULL);
		mpbuf_free(&b);
	}
}

void
guard_case_outline(const struct worker_nb *nb)
{
	struct worker_nb_line	 l;
	struct json_object	*out;
	struct evbuffer		*text, *js;
	size_t			 i, len, n = worker_nb_count(nb);
	int			 k;

	for (k = 0; k < 20; k++) {
		text = evbuffer_new();
		js = evbuffer_new();
		out = json_object_new_array();
		for (i = 0; i < n; i++) {
			if (worker_nb_cell_line(nb, i, &l) != 0) {
				fprintf(stderr, "bench-hotpath: outline: cell "
				    "%zu takes the decoded path\n", i);
				exit(1);
			}
			json_object_array_add(out, tool_inspect_notebook_line(i,
			    &l, text, js, &len));
		}
		(void)json_object_to_json_string_ext(out,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		json_object_put(out);
		evbuffer_free(js);
		evbuffer_free(text);
	}
}

/*
 * A ROOM_CONTENT of 500 code cells as the daemon packs it: a few lines
 * of source, a count, a stream output each; some ids and sources need
 * escaping.
 */
static struct worker_nb *
guard_outline(void)
{
	struct worker_nb	*nb;
	struct mpbuf		 b;
	msgpack_unpacked	 u;
	msgpack_object		*body;
	msgpack_zone		*zone;
	char			 s[160], *cause = NULL;
	int			 i;

	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	proto_pack_cstr(&b.pk, "notebook_id");
	proto_pack_cstr(&b.pk, "3b2f9c1e-5d4a-4e8b-9f70-1a2b3c4d5e6f");
	proto_pack_cstr(&b.pk, "seq");
	msgpack_pack_int64(&b.pk, 1000);
	proto_pack_cstr(&b.pk, "cells");
	msgpack_pack_array(&b.pk, 500);
	for (i = 0; i < 500; i++) {
		msgpack_pack_map(&b.pk, 5);
		proto_pack_cstr(&b.pk, "cell_id");
		snprintf(s, sizeof s, i % 50 == 0 ? "c\"%04d\"" : "c%04d", i);
		proto_pack_cstr(&b.pk, s);
		proto_pack_cstr(&b.pk, "cell_type");
		proto_pack_cstr(&b.pk, "code");
		proto_pack_cstr(&b.pk, "source");
		snprintf(s, sizeof s, "import numpy as np\nx%d = np.arange(%d)"
		    "\nprint(\"x%d\", x%d.sum())\t# total", i, i, i, i);
		proto_pack_cstr(&b.pk, s);
		proto_pack_cstr(&b.pk, "execution_count");
		msgpack_pack_int64(&b.pk, i + 1);
		proto_pack_cstr(&b.pk, "outputs");
		msgpack_pack_array(&b.pk, 1);
		msgpack_pack_map(&b.pk, 3);
		proto_pack_cstr(&b.pk, "output_type");
		proto_pack_cstr(&b.pk, "stream");
		proto_pack_cstr(&b.pk, "name");
		proto_pack_cstr(&b.pk, "stdout");
		proto_pack_cstr(&b.pk, "text");
		snprintf(s, sizeof s, "x%d %d\n", i, i * (i - 1) / 2);
		proto_pack_cstr(&b.pk, s);
	}
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, b.sb.data, b.sb.size, NULL) !=
	    MSGPACK_UNPACK_SUCCESS)
		fatalx("bench-hotpath: outline: unpack");
	msgpack_zone_push_finalizer(u.zone, free, b.sb.data);
	zone = msgpack_unpacked_release_zone(&u);
	body = msgpack_zone_malloc(zone, sizeof *body);
	*body = u.data;
	if ((nb = worker_nb_read(PROTO_MSG_ROOM_CONTENT, body, zone,
	    &cause)) == NULL)
		fatalx("bench-hotpath: outline: %s", cause);
	return (nb);
}

/* 400 code cells with source, a stream and an execute_result each. */
static char *
guard_notebook(void)
{
	struct json_object	*nb, *cells, *cell, *outs, *o, *data, *src;
	char			 line[128], *path;
	int			 i, j, fd;
	const char		*s;

	nb = json_object_new_object();
	cells = json_object_new_array();
	for (i = 0; i < 400; i++) {
		cell = json_object_new_object();
		json_object_object_add(cell, "cell_type",
		    json_object_new_string("code"));
		snprintf(line, sizeof line, "c%04d", i);
		json_object_object_add(cell, "id", json_object_new_string(line));
		json_object_object_add(cell, "metadata", json_object_new_object());
		json_object_object_add(cell, "execution_count",
		    json_object_new_int(i + 1));
		src = json_object_new_array();
		for (j = 0; j < 8; j++) {
			snprintf(line, sizeof line,
			    "x%d_%d = compute(%d, %d)  # \u00e9t\u00e9\n",
			    i, j, i, j);
			json_object_array_add(src, json_object_new_string(line));
		}
		json_object_object_add(cell, "source", src);
		outs = json_object_new_array();
		o = json_object_new_object();
		json_object_object_add(o, "output_type",
		    json_object_new_string("stream"));
		json_object_object_add(o, "name", json_object_new_string("stdout"));
		src = json_object_new_array();
		for (j = 0; j < 40; j++) {
			snprintf(line, sizeof line,
			    "step %d loss %d.%06d acc 0.%04d\n", j, i % 3,
			    (i * 7919 + j * 104729) % 1000000, (i + j) % 10000);
			json_object_array_add(src, json_object_new_string(line));
		}
		json_object_object_add(o, "text", src);
		json_object_array_add(outs, o);
		o = json_object_new_object();
		json_object_object_add(o, "output_type",
		    json_object_new_string("execute_result"));
		json_object_object_add(o, "execution_count",
		    json_object_new_int(i + 1));
		json_object_object_add(o, "metadata", json_object_new_object());
		data = json_object_new_object();
		snprintf(line, sizeof line, "<Figure size %dx%d>", 640 + i, 480);
		json_object_object_add(data, "text/plain",
		    json_object_new_string(line));
		json_object_object_add(o, "data", data);
		json_object_array_add(outs, o);
		json_object_object_add(cell, "outputs", outs);
		json_object_array_add(cells, cell);
	}
	json_object_object_add(nb, "cells", cells);
	json_object_object_add(nb, "metadata", json_object_new_object());
	json_object_object_add(nb, "nbformat", json_object_new_int(4));
	json_object_object_add(nb, "nbformat_minor", json_object_new_int(5));
	s = json_object_to_json_string_ext(nb, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_SPACED);

	xasprintf(&path, "%s/bench-hotpath.XXXXXX", getenv("TMPDIR") != NULL ?
	    getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(path)) == -1 ||
	    write(fd, s, strlen(s)) != (ssize_t)strlen(s) || close(fd) != 0) {
		fprintf(stderr, "bench-hotpath: cannot write %s\n", path);
		exit(1);
	}
	json_object_put(nb);
	return (path);
}

static char *
guard_lines(size_t *len)
{
	struct evbuffer	*b;
	char		*s;
	int		 i;

	b = evbuffer_new();
	for (i = 0; i < 100000; i++)
		evbuffer_add_printf(b, "line %d\n", i);
	*len = evbuffer_get_length(b);
	s = xmalloc(*len + 1);
	evbuffer_remove(b, s, *len);
	s[*len] = '\0';
	evbuffer_free(b);
	return (s);
}

#define GUARD_WIRE_KEY	"6f1e0c2a9b8d7e6f5a4b3c2d1e0f9a8b" \
	"7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"

/* The messages of one `1+1` run as a kernel signs them: 5 parts each. */
static char **
guard_wire(size_t *n)
{
	static const char	*msgs[][2] = {
		{ "status", "{\"execution_state\": \"busy\"}" },
		{ "execute_input", "{\"code\": \"1+1\", "
		    "\"execution_count\": 12}" },
		{ "execute_result", "{\"data\": {\"text/plain\": \"2\"}, "
		    "\"metadata\": {}, \"execution_count\": 12}" },
		{ "status", "{\"execution_state\": \"idle\"}" },
		{ "execute_reply", "{\"status\": \"ok\", "
		    "\"execution_count\": 12, \"user_expressions\": {}, "
		    "\"payload\": []}" },
	};
	struct json_object	*parent, *content;
	char			**parts, msg_id[37];
	size_t			 i;

	*n = sizeof msgs / sizeof msgs[0];
	parts = xcalloc(*n * AGENT_WIRE_NPARTS, sizeof *parts);
	parent = json_tokener_parse("{\"msg_id\": "
	    "\"0f6c2e3a-5b1d-4c8e-9a7f-3e2d1c0b9a8f\", \"msg_type\": "
	    "\"execute_request\", \"username\": \"runtimed\", "
	    "\"session\": \"7a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\", "
	    "\"date\": \"2026-12-01T18:00:00.000000Z\", "
	    "\"version\": \"5.3\"}");
	for (i = 0; i < *n; i++) {
		content = json_tokener_parse(msgs[i][1]);
		if (agent_wire_encode(GUARD_WIRE_KEY,
		    "1c2d3e4f-5a6b-7c8d-9e0f-1a2b3c4d5e6f", msgs[i][0],
		    content, parent, msg_id, parts + i * AGENT_WIRE_NPARTS) != 0)
			exit(1);
		json_object_put(content);
	}
	json_object_put(parent);
	return (parts);
}

void
guard_case_wire(char **parts, size_t n)
{
	struct agent_wire_frame	 frames[1 + AGENT_WIRE_NPARTS];
	struct agent_wire_msg	*m;
	char			*cause;
	size_t			 i, j;
	int			 k;

	for (k = 0; k < GUARD_LOOPS; k++) {
		for (i = 0; i < n; i++) {
			frames[0].data = AGENT_WIRE_DELIM;
			frames[0].len = strlen(AGENT_WIRE_DELIM);
			for (j = 0; j < AGENT_WIRE_NPARTS; j++) {
				frames[1 + j].data = parts[i *
				    AGENT_WIRE_NPARTS + j];
				frames[1 + j].len = strlen(frames[1 + j].data);
			}
			if ((m = agent_wire_parse(GUARD_WIRE_KEY, frames,
			    1 + AGENT_WIRE_NPARTS, &cause)) == NULL) {
				fprintf(stderr, "bench-hotpath: wire: %s\n",
				    cause);
				exit(1);
			}
			agent_wire_msg_free(m);
		}
	}
}

/*
 * A 1 MB PNG's base64 (1,398,104 bytes), as a signed display_data in
 * parts and as the output of 4 cells of a notebook (returned).
 */
static char *
guard_image(char **parts, size_t *len)
{
	static const char	 b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
	    "klmnopqrstuvwxyz0123456789+/";
	struct json_object	*content, *data;
	struct evbuffer		*b;
	char			*img, msg_id[37], *s;
	size_t			 n = 1398104, i;

	img = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		img[i] = b64[(i * 7919) % 64];
	img[n] = '\0';
	content = json_object_new_object();
	data = json_object_new_object();
	json_object_object_add(data, "image/png",
	    json_object_new_string_len(img, (int)n));
	json_object_object_add(data, "text/plain",
	    json_object_new_string("<Figure size 640x480 with 1 Axes>"));
	json_object_object_add(content, "data", data);
	json_object_object_add(content, "metadata", json_object_new_object());
	if (agent_wire_encode(GUARD_WIRE_KEY,
	    "1c2d3e4f-5a6b-7c8d-9e0f-1a2b3c4d5e6f", "display_data", content,
	    NULL, msg_id, parts) != 0)
		exit(1);
	json_object_put(content);
	b = evbuffer_new();
	evbuffer_add_printf(b, "{\"cells\": [");
	for (i = 0; i < 4; i++)
		evbuffer_add_printf(b, "%s{\"cell_type\": \"code\", \"id\": "
		    "\"c%zu\", \"execution_count\": %zu, \"metadata\": {}, "
		    "\"source\": [\"plt.plot(x)\\n\", \"plt.show()\"], "
		    "\"outputs\": [{\"output_type\": \"display_data\", "
		    "\"metadata\": {}, \"data\": {\"image/png\": \"%s\", "
		    "\"text/plain\": [\"<Figure>\"]}}]}", i == 0 ? "" : ", ",
		    i, i + 1, img);
	evbuffer_add_printf(b, "], \"metadata\": {}, \"nbformat\": 4, "
	    "\"nbformat_minor\": 5}\n");
	*len = evbuffer_get_length(b);
	s = xmalloc(*len + 1);
	evbuffer_remove(b, s, *len);
	s[*len] = '\0';
	evbuffer_free(b);
	free(img);
	return (s);
}

void
guard_case_image(char **parts, const char *nbtext, size_t nblen)
{
	struct agent_wire_frame	 frames[1 + AGENT_WIRE_NPARTS];
	struct agent_wire_msg	*m;
	struct room_nb		*nb;
	char			*cause = NULL;
	size_t			 j;
	int			 k;

	frames[0].data = AGENT_WIRE_DELIM;
	frames[0].len = strlen(AGENT_WIRE_DELIM);
	for (j = 0; j < AGENT_WIRE_NPARTS; j++) {
		frames[1 + j].data = parts[j];
		frames[1 + j].len = strlen(parts[j]);
	}
	for (k = 0; k < 10; k++) {
		if ((m = agent_wire_parse(GUARD_WIRE_KEY, frames,
		    1 + AGENT_WIRE_NPARTS, &cause)) == NULL) {
			fprintf(stderr, "bench-hotpath: image: %s\n", cause);
			exit(1);
		}
		agent_wire_msg_free(m);
	}
	if ((nb = room_ipynb_parse(nbtext, nblen, &cause)) == NULL) {
		fprintf(stderr, "bench-hotpath: image: %s\n", cause);
		exit(1);
	}
	room_nb_free(nb);
}

int
main(int argc, char **argv)
{
	struct json_object	*output;
	struct room_nb		*nb;
	struct worker_nb	*wnb;
	const char		*req;
	char			*s, **parts, *cause = NULL;
	size_t			 len, i;
	int64_t			 t0;

	if (argc != 2) {
		fprintf(stderr, "usage: bench-hotpath "
		    "frame|rpc|mpjson|ipynb|shape|wire|image|read|outline|"
		    "redact|redactmb\n");
		return (2);
	}
	output = guard_output();
	if (strcmp(argv[1], "frame") == 0)
		guard_case_frame(output);
	else if (strcmp(argv[1], "rpc") == 0) {
		req = "{\"jsonrpc\":\"2.0\",\"id\":4711,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"run_cells\","
		    "\"arguments\":{\"notebook_handle\":\"h-3f9a2c1b\","
		    "\"cell_ids\":[\"a1b2c3d4\"],\"wait_secs\":50},"
		    "\"_meta\":{\"progressToken\":17}}}";
		guard_case_rpc(req, strlen(req), output);
	} else if (strcmp(argv[1], "mpjson") == 0)
		guard_case_mpjson(output);
	else if (strcmp(argv[1], "ipynb") == 0) {
		s = guard_notebook();
		guard_case_ipynb(s);
		unlink(s);
		free(s);
	} else if (strcmp(argv[1], "shape") == 0) {
		s = guard_lines(&len);
		guard_case_shape(s, len);
		free(s);
	} else if (strcmp(argv[1], "wire") == 0) {
		parts = guard_wire(&len);
		guard_case_wire(parts, len);
		for (i = 0; i < len; i++)
			agent_wire_parts_free(parts + i * AGENT_WIRE_NPARTS);
		free(parts);
	} else if (strcmp(argv[1], "image") == 0) {
		parts = xcalloc(AGENT_WIRE_NPARTS, sizeof *parts);
		s = guard_image(parts, &len);
		guard_case_image(parts, s, len);
		agent_wire_parts_free(parts);
		free(parts);
		free(s);
	} else if (strcmp(argv[1], "read") == 0) {
		s = guard_notebook();
		if ((nb = room_ipynb_read(s, &cause)) == NULL) {
			fprintf(stderr, "bench-hotpath: read: %s\n", cause);
			return (1);
		}
		unlink(s);
		free(s);
		guard_case_read(nb);
		room_nb_free(nb);
	} else if (strcmp(argv[1], "outline") == 0) {
		wnb = guard_outline();
		guard_case_outline(wnb);
		worker_nb_unref(wnb);
	} else if (strcmp(argv[1], "redact") == 0) {
		guard_redact_init();
		t0 = guard_ns();
		guard_case_redact(output);
		printf("ns %lld\n", (long long)(guard_ns() - t0));
	} else if (strcmp(argv[1], "redactmb") == 0) {
		guard_redact_init();
		s = guard_lines(&len);
		/* One secret in the middle of the text. */
		memcpy(s + len / 2, "correct-Horse-battery-9", 23);
		t0 = guard_ns();
		guard_case_redactmb(s, len);
		printf("ns %lld bytes %zu\n", (long long)(guard_ns() - t0), len);
		free(s);
	} else {
		fprintf(stderr, "bench-hotpath: unknown case %s\n", argv[1]);
		return (2);
	}
	json_object_put(output);
	return (0);
}
