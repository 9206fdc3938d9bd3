/* SPDX-License-Identifier: ISC */
/*
 * test-worker.c: the pure parts of runtimed-mcp-worker: target parsing,
 * the handle registry and its limit, JSON-RPC framing, argument checks,
 * output caps and the tool catalog.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "worker.h"

static struct json_object	*parse(const char *);
static int	target(const char *, int, struct worker_target *);
static struct worker_handle	*resolve(enum worker_target_kind, const char *,
		    int *, const char **);
static void	capture(const char *, size_t, void *);
static void	rpc_setup(void);
static void	rpc_teardown(void);
static void	input(const char *);
static int64_t	error_code(struct json_object *);
static const char	*tool_error(struct json_object *);
static void	id_echo(const char *, const char *);
static char	*nested_text(size_t);

/* The library's exits go through main's worker_exit. */
void
worker_exit(int status)
{
	exit(status);
}

static struct json_object *
parse(const char *text)
{
	struct json_object	*o;

	o = json_tokener_parse(text);
	cr_assert_not_null(o, "bad test JSON: %s", text);
	return (o);
}

/* Target parsing (docs/targets.md). */

static int
target(const char *args, int allow_id, struct worker_target *t)
{
	struct json_object	*o = parse(args);
	char			*msg = NULL;
	int			 r;

	r = worker_target_parse(o, allow_id, t, &msg);
	if (r != 0) {
		cr_assert_not_null(msg);
		free(msg);
	}
	json_object_put(o);
	return (r);
}

Test(target, handle_only)
{
	struct worker_target	t;

	cr_assert_eq(target("{\"notebook_handle\":\"nbh_1\"}", 1, &t), 0);
	cr_assert_eq(t.kind, WORKER_TARGET_HANDLE);
}

Test(target, id_with_local_domain)
{
	struct worker_target	t;

	cr_assert_eq(target("{\"notebook_id\":\"abc\"}", 1, &t), 0);
	cr_assert_eq(t.kind, WORKER_TARGET_ID);
	cr_assert_eq(target("{\"notebook_id\":\"abc\",\"domain\":\"LOCAL\"}",
	    1, &t), 0);
	cr_assert_eq(target("{\"notebook_id\":\"abc\",\"domain\":null}", 1,
	    &t), 0);
	cr_assert_null(t.domain);
}

/* A remote domain is a name domains.json may hold (decision 026). */
Test(target, id_with_remote_domain)
{
	struct worker_target	 t;
	struct json_object	*o;
	char			*msg = NULL;

	/* t borrows from the arguments: keep them while looking. */
	o = parse("{\"notebook_id\":\"i\",\"domain\":\"example.com\"}");
	cr_assert_eq(worker_target_parse(o, 1, &t, &msg), 0);
	cr_assert_str_eq(t.domain, "example.com");
	json_object_put(o);
	cr_assert_eq(target("{\"notebook_id\":\"i\",\"domain\":"
	    "\"a b\"}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_id\":\"i\",\"domain\":"
	    "\"\"}", 1, &t), -1);
}

Test(target, rejected_forms)
{
	struct worker_target	t;

	cr_assert_eq(target("{}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_handle\":null}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_handle\":\"h\",\"notebook_id\":"
	    "\"i\"}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_handle\":\"\"}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_handle\":7}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_handle\":\"h\",\"domain\":"
	    "\"local\"}", 1, &t), -1);
	cr_assert_eq(target("{\"notebook_id\":\"i\"}", 0, &t), -1);
}

/* The handle registry. */

Test(attach, limit_127_128_129, .fini = worker_attach_reset)
{
	struct worker_handle	*h[WORKER_MAX_ATTACH + 1];
	int			 i;

	for (i = 0; i < 127; i++)
		cr_assert_not_null(h[i] = worker_attach_reserve());
	cr_assert_eq(worker_attach_count(), 127);
	cr_assert_not_null(h[127] = worker_attach_reserve(), "128th");
	cr_assert_eq(worker_attach_count(), 128);
	cr_assert_null(worker_attach_reserve(), "129th must fail");
	/* Pending acquisitions count; a cancelled one frees its slot. */
	worker_attach_cancel(h[5]);
	cr_assert_not_null(worker_attach_reserve());
	cr_assert_null(worker_attach_reserve());
}

Test(attach, handles_are_distinct_and_opaque, .fini = worker_attach_reset)
{
	struct worker_handle	*a, *b;

	worker_attach_set_tag(0x12345678);
	a = worker_attach_reserve();
	b = worker_attach_reserve();
	cr_assert_eq(strlen(worker_attach_id(a)), WORKER_HANDLE_LEN);
	cr_assert_eq(strncmp(worker_attach_id(a), "nbh_12345678", 12), 0);
	cr_assert_str_neq(worker_attach_id(a), worker_attach_id(b));
}

static struct worker_handle *
resolve(enum worker_target_kind kind, const char *value, int *minted,
    const char **code)
{
	struct worker_target	 t = { .kind = kind, .value = value };
	struct worker_handle	*h;
	char			*msg = NULL;

	*code = NULL;
	h = worker_attach_resolve(&t, minted, code, &msg);
	if (h == NULL) {
		cr_assert_not_null(msg);
		free(msg);
	}
	return (h);
}

Test(attach, resolve_handles, .fini = worker_attach_reset)
{
	struct worker_handle	*h, *r;
	const char		*code;
	char			 id[WORKER_HANDLE_LEN + 1], fake[64];
	int			 minted;

	worker_attach_set_tag(0xabcdef01);
	h = worker_attach_reserve();
	/* A pending handle does not resolve yet. */
	cr_assert_null(resolve(WORKER_TARGET_HANDLE, worker_attach_id(h),
	    &minted, &code));
	worker_attach_commit(h, NULL, "nb-1");
	r = resolve(WORKER_TARGET_HANDLE, worker_attach_id(h), &minted,
	    &code);
	cr_assert_eq(r, h);
	cr_assert_eq(minted, 0);

	snprintf(id, sizeof id, "%s", worker_attach_id(h));
	worker_attach_release(h);
	cr_assert_null(resolve(WORKER_TARGET_HANDLE, id, &minted, &code));
	cr_assert_str_eq(code, "attachment_expired");

	/* Our session's shape but never issued here: an earlier worker. */
	snprintf(fake, sizeof fake, "nbh_abcdef01%032d", 0);
	cr_assert_null(resolve(WORKER_TARGET_HANDLE, fake, &minted, &code));
	cr_assert_str_eq(code, "attachment_expired");

	/* Not ours at all. */
	cr_assert_null(resolve(WORKER_TARGET_HANDLE, "nbh_0000000000", &minted,
	    &code));
	cr_assert_str_eq(code, "invalid_notebook_target");
	cr_assert_null(resolve(WORKER_TARGET_HANDLE, "whatever", &minted,
	    &code));
	cr_assert_str_eq(code, "invalid_notebook_target");
}

Test(attach, resolve_ids, .fini = worker_attach_reset)
{
	struct worker_handle	*h, *owner, *again;
	const char		*code;
	int			 minted, i;

	cr_assert_null(resolve(WORKER_TARGET_ID, "nb-1", &minted, &code));
	cr_assert_str_eq(code, "not_attached");

	h = worker_attach_reserve();
	worker_attach_commit(h, NULL, "nb-1");
	owner = resolve(WORKER_TARGET_ID, "nb-1", &minted, &code);
	cr_assert_not_null(owner);
	cr_assert_eq(minted, 1, "the first ID call mints an address owner");
	cr_assert_neq(owner, h);
	cr_assert_eq(worker_attach_count(), 2);
	again = resolve(WORKER_TARGET_ID, "nb-1", &minted, &code);
	cr_assert_eq(again, owner);
	cr_assert_eq(minted, 0);
	cr_assert_null(resolve(WORKER_TARGET_ID, "nb-2", &minted, &code));
	cr_assert_str_eq(code, "not_attached");

	/* The owner counts in the limit: with all slots taken, none. */
	worker_attach_release(owner);
	for (i = worker_attach_count(); i < WORKER_MAX_ATTACH; i++)
		worker_attach_reserve();
	cr_assert_null(resolve(WORKER_TARGET_ID, "nb-1", &minted, &code));
	cr_assert_str_eq(code, "attachment_limit");
}

/* JSON-RPC framing through the real dispatcher. */

static struct json_object	*sent[16];
static int			 nsent;

static void
capture(const char *json, size_t len, void *arg)
{
	cr_assert_lt(nsent, 16);
	sent[nsent] = json_tokener_parse(json);
	cr_assert_not_null(sent[nsent], "reply is not JSON: %.*s", (int)len,
	    json);
	cr_assert_null(memchr(json, '\n', len), "newline inside a message");
	nsent++;
}

static const struct worker_transport capture_transport = {
	.send = capture,
};

static void
rpc_setup(void)
{
	nsent = 0;
	worker_rpc_init(NULL, &capture_transport);
}

static void
rpc_teardown(void)
{
	while (nsent > 0)
		json_object_put(sent[--nsent]);
	worker_attach_reset();
}

static void
input(const char *line)
{
	worker_rpc_input(line, strlen(line));
}

static int64_t
error_code(struct json_object *msg)
{
	struct json_object	*e;

	cr_assert(json_object_object_get_ex(msg, "error", &e));
	return (json_object_get_int64(json_object_object_get(e, "code")));
}

/*
 * The code of a tool error as a client that did not ask for structure
 * reads it (decision 043): the text's "code: message", and no
 * structuredContent beside it.
 */
static const char *
tool_error(struct json_object *msg)
{
	static char		 code[64];
	struct json_object	*r, *blk;
	const char		*text;
	size_t			 n;

	cr_assert(json_object_object_get_ex(msg, "result", &r));
	cr_assert(json_object_get_boolean(json_object_object_get(r,
	    "isError")));
	cr_assert(!json_object_object_get_ex(r, "structuredContent", NULL));
	blk = json_object_array_get_idx(json_object_object_get(r, "content"),
	    0);
	text = json_object_get_string(json_object_object_get(blk, "text"));
	cr_assert(text != NULL);
	n = strcspn(text, ":");
	cr_assert(n < sizeof code);
	memcpy(code, text, n);
	code[n] = '\0';
	return (code);
}

Test(rpc, garbage_line_then_next_served, .init = rpc_setup,
    .fini = rpc_teardown)
{
	input("this is not json {");
	cr_assert_eq(nsent, 1);
	cr_assert_eq(error_code(sent[0]), -32700);
	cr_assert(json_object_is_type(json_object_object_get(sent[0], "id"),
	    json_type_null));
	cr_assert(json_object_object_get_ex(sent[0], "id", NULL));

	input("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
	cr_assert_eq(nsent, 2);
	cr_assert_eq(json_object_get_int(json_object_object_get(sent[1],
	    "id")), 7);
	cr_assert(json_object_object_get_ex(sent[1], "result", NULL));

	input("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"} trailing");
	cr_assert_eq(error_code(sent[2]), -32700);
	input("   ");
	cr_assert_eq(nsent, 3, "a blank line gets no answer");
}

/* What Python's decoder refuses is not UTF-8 here either (issue 35). */
Test(rpc, surrogate_and_overlong_are_parse_errors, .init = rpc_setup,
    .fini = rpc_teardown)
{
	static const char *const bad[] = {
		"\xed\xa0\x80",		/* U+D800, a surrogate */
		"\xed\xbf\xbf",		/* U+DFFF */
		"\xc0\xaf",		/* overlong '/' */
		"\xe0\x80\xaf",		/* overlong, 3 bytes */
		"\xf0\x80\x80\xaf",	/* overlong, 4 bytes */
		"\xf4\x90\x80\x80",	/* past U+10FFFF */
	};
	char	*line;
	size_t	 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		xasprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"ping\",\"params\":{\"x\":\"a%sb\"}}",
		    i + 1, bad[i]);
		input(line);
		free(line);
		cr_assert_eq(nsent, i + 1);
		cr_assert_eq(error_code(sent[i]), -32700, "case %zu", i);
	}
	input("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\","
	    "\"params\":{\"x\":\"\xed\x9f\xbf\xf4\x8f\xbf\xbf\"}}");
	cr_assert(json_object_object_get_ex(sent[nsent - 1], "result", NULL),
	    "U+D7FF and U+10FFFF are characters");
}

Test(rpc, methods, .init = rpc_setup, .fini = rpc_teardown)
{
	struct json_object	*r;

	input("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\"}}");
	r = json_object_object_get(sent[0], "result");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(r,
	    "protocolVersion")), "2024-11-05");
	input("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	r = json_object_object_get(sent[1], "result");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(r,
	    "protocolVersion")), WORKER_PROTOCOL_LATEST);
	input("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	input("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":2}}");
	cr_assert_eq(nsent, 2, "notifications get no answer");
	input("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}");
	cr_assert_eq(error_code(sent[2]), -32601);
	input("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"no_such_tool\"}}");
	cr_assert_eq(error_code(sent[3]), -32602);
	input("[1,2]");
	cr_assert_eq(error_code(sent[4]), -32600);
}

Test(rpc, argument_errors_are_tool_results, .init = rpc_setup,
    .fini = rpc_teardown)
{
	input("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_results\",\"arguments\":{"
	    "\"notebook_handle\":\"nbh_x\",\"execution_id\":\"e\","
	    "\"timeout_secs\":-1}}}");
	cr_assert_str_eq(tool_error(sent[0]), "invalid_argument");
	input("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_results\",\"arguments\":{"
	    "\"notebook_handle\":\"nbh_x\",\"execution_id\":\"e\","
	    "\"timeout_secs\":51}}}");
	cr_assert_str_eq(tool_error(sent[1]), "invalid_argument");
	/* 50 is allowed: the next failure is the unknown handle. */
	input("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_results\",\"arguments\":{"
	    "\"notebook_handle\":\"nbh_x\",\"execution_id\":\"e\","
	    "\"timeout_secs\":50}}}");
	cr_assert_str_eq(tool_error(sent[2]), "invalid_notebook_target");
	input("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"run_cells\",\"arguments\":{"
	    "\"notebook_handle\":\"h\",\"notebook_id\":\"i\",\"all\":true}}}");
	cr_assert_str_eq(tool_error(sent[3]), "invalid_notebook_target");
	input("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"edit_cells\",\"arguments\":{"
	    "\"notebook_handle\":\"h\",\"edits\":[]}}}");
	cr_assert_str_eq(tool_error(sent[4]), "invalid_argument");
	input("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"edit_cells\",\"arguments\":{"
	    "\"notebook_handle\":\"h\",\"edits\":[{\"op\":\"insert\","
	    "\"after\":\"TOP\",\"source\":\"\\ud800\"}]}}}");
	cr_assert_str_eq(tool_error(sent[5]), "invalid_argument");
	input("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"list_notebooks\",\"arguments\":{"
	    "\"bogus\":1}}}");
	cr_assert_str_eq(tool_error(sent[6]), "invalid_argument");
	cr_assert_eq(json_object_get_int(json_object_object_get(sent[6],
	    "id")), 7);
}

Test(args, secs_edges)
{
	struct json_object	*o;
	char			*msg = NULL;
	int			 ms;

	o = parse("{\"a\":-1,\"b\":51,\"c\":0,\"d\":50,\"e\":0.5,\"f\":\"x\","
	    "\"g\":true}");
	cr_assert_eq(worker_args_secs(o, "a", 1, &ms, &msg), -1);
	free(msg);
	cr_assert_eq(worker_args_secs(o, "b", 1, &ms, &msg), -1);
	free(msg);
	cr_assert_eq(worker_args_secs(o, "f", 1, &ms, &msg), -1);
	free(msg);
	cr_assert_eq(worker_args_secs(o, "g", 1, &ms, &msg), -1);
	free(msg);
	cr_assert_eq(worker_args_secs(o, "c", 1, &ms, &msg), 0);
	cr_assert_eq(ms, 0);
	cr_assert_eq(worker_args_secs(o, "d", 1, &ms, &msg), 0);
	cr_assert_eq(ms, 50000);
	cr_assert_eq(worker_args_secs(o, "e", 1, &ms, &msg), 0);
	cr_assert_eq(ms, 500);
	cr_assert_eq(worker_args_secs(o, "missing", 1, &ms, &msg), 0);
	cr_assert_eq(ms, 1000);
	json_object_put(o);
}

Test(args, surrogates_and_utf8)
{
	struct json_object	*o;

	cr_assert(worker_rpc_scan_surrogates("\"\\ud800\"", 8));
	cr_assert(worker_rpc_scan_surrogates("\"\\udc00x\"", 9));
	cr_assert(worker_rpc_scan_surrogates("\"\\ud800\\u0041\"", 14));
	cr_assert_not(worker_rpc_scan_surrogates("\"\\ud83d\\ude00\"", 14));
	cr_assert_not(worker_rpc_scan_surrogates("\"\\\\ud800\"", 9),
	    "an escaped backslash is not an escape");
	cr_assert_not(worker_rpc_scan_surrogates("{\"a\":\"\\u0000\"}", 13));

	o = json_object_new_string_len("a\0b", 3);
	cr_assert(worker_args_utf8_ok(o), "NUL is allowed in cell source");
	json_object_put(o);
	o = json_object_new_string("\xff");
	cr_assert_not(worker_args_utf8_ok(o));
	json_object_put(o);
	o = json_object_new_string("\xed\xa0\x80");	/* encoded U+D800 */
	cr_assert_not(worker_args_utf8_ok(o));
	json_object_put(o);
	o = json_object_new_string("h\xc3\xa9 \xf0\x9f\x98\x80");
	cr_assert(worker_args_utf8_ok(o));
	json_object_put(o);
}

/* The id of a message prints as the text it was sent with. */
static void
id_echo(const char *msg, const char *want)
{
	struct json_object	*o, *id;
	char			*cause = NULL;
	size_t			 off, len;

	o = jsonrpc_parse(msg, strlen(msg), &off, &len, NULL, &cause);
	cr_assert_not_null(o, "%s: %s", msg, cause);
	cr_assert(json_object_object_get_ex(o, "id", &id));
	cr_assert_str_eq(json_object_to_json_string_ext(id,
	    JSON_C_TO_STRING_PLAIN), want);
	cr_assert_eq(len, strlen(want));
	cr_assert_eq(memcmp(msg + off, want, len), 0);
	json_object_put(o);
}

/* {"a":{"a":...1...}} nested n levels; caller frees. */
static char *
nested_text(size_t n)
{
	char	*text;
	size_t	 i;

	text = xmalloc(n * 6 + 2);
	for (i = 0; i < n; i++)
		memcpy(text + i * 5, "{\"a\":", 5);
	text[n * 5] = '1';
	memset(text + n * 5 + 1, '}', n);
	text[n * 6 + 1] = '\0';
	return (text);
}

/* Values deeper than msgpack-c's 32 levels still cross a frame. */
Test(mpjson, deep_values_cross)
{
	struct json_object	*j, *back;
	msgpack_unpacked	 u;
	struct mpbuf		 b;
	char			*text, *cause = NULL;
	size_t			 off = 0;

	text = nested_text(PROTO_MAX_DEPTH - 1);
	j = mpjson_parse(text, strlen(text), &cause);
	cr_assert_not_null(j, "%s", cause);
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	proto_pack_key(&b.pk, "v");
	mpjson_pack(&b.pk, j);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, b.sb.data, b.sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS, "msgpack-c refused the frame body");
	back = mpjson_unpack(proto_get(&u.data, "v"));
	cr_assert_str_eq(json_object_to_json_string_ext(back,
	    JSON_C_TO_STRING_PLAIN), text);
	msgpack_unpacked_destroy(&u);
	mpbuf_free(&b);
	json_object_put(back);
	json_object_put(j);
	free(text);

	/* Past the limit: refused, with the limit named. */
	text = nested_text(PROTO_MAX_DEPTH + 1);
	cr_assert_null(mpjson_parse(text, strlen(text), &cause));
	cr_assert_not_null(strstr(cause, "1024"), "%s", cause);
	free(cause);
	free(text);
}

Test(jsonrpc, ids_kept_as_sent)
{
	struct json_object	*a, *b;
	char			*cause = NULL;
	int			 nested;

	id_echo("{\"id\":123456789012345678901234567890}",
	    "123456789012345678901234567890");
	id_echo("{\"jsonrpc\":\"2.0\", \"id\" : -0 , \"method\":\"x\"}", "-0");
	id_echo("{\"id\":\"\\ud800x\"}", "\"\\ud800x\"");
	id_echo("{\"params\":{\"id\":1},\"id\":1e2}", "1e2");
	id_echo("{\"id\":1,\"id\":2}", "2");
	/* The members before it skipped unparsed: strings, arrays, scalars. */
	id_echo("{\"params\":{\"s\":\"a\\\"}{[\\\\\",\"n\":[1,{\"id\":3}]},"
	    "\"x\":true, \"y\":null,\"z\":-1.5e3 ,\"w\":\"\\\\\",\"id\":7}",
	    "7");
	id_echo("{\"i\\u0064\":5,\"id\":6}", "6");

	cr_assert_null(jsonrpc_parse("{\"id\":\"\xff\"}", 10, NULL, NULL,
	    NULL, &cause));
	cr_assert_not_null(strstr(cause, "UTF-8"), "%s", cause);
	free(cause);
	cr_assert_null(jsonrpc_parse("{} x", 4, NULL, NULL, NULL, &cause));
	free(cause);
	a = jsonrpc_parse("42", 2, NULL, NULL, &nested, &cause);
	cr_assert(a != NULL && json_object_get_int(a) == 42 && !nested);
	json_object_put(a);

	a = jsonrpc_id_from_text("123456789012345678901234567890");
	b = jsonrpc_id_from_text("123456789012345678901234567891");
	cr_assert_not(jsonrpc_id_equal(a, b), "ids past 64 bits differ");
	json_object_put(b);
	b = jsonrpc_id_from_text("123456789012345678901234567890");
	cr_assert(jsonrpc_id_equal(a, b));
	json_object_put(a);
	json_object_put(b);
	a = jsonrpc_id_from_text("\"7\"");
	b = jsonrpc_id_from_text("7");
	cr_assert_not(jsonrpc_id_equal(a, b), "\"7\" is not 7");
	json_object_put(a);
	json_object_put(b);
}

Test(args, cell_references)
{
	struct json_object	*cells, *ref;
	const char		*id;
	char			*msg = NULL;

	cells = parse("[{\"cell_id\":\"a\"},{\"cell_id\":\"b\"}]");
	ref = parse("1");
	cr_assert_eq(worker_args_cellref(ref, cells, &id, &msg), 0);
	cr_assert_str_eq(id, "b");
	json_object_put(ref);
	ref = parse("2");
	cr_assert_eq(worker_args_cellref(ref, cells, &id, &msg), -2);
	free(msg);
	json_object_put(ref);
	ref = parse("\"1\"");
	cr_assert_eq(worker_args_cellref(ref, cells, &id, &msg), 0);
	cr_assert_str_eq(id, "1", "a string is always an id");
	json_object_put(ref);
	ref = parse("1.5");
	cr_assert_eq(worker_args_cellref(ref, cells, &id, &msg), -1);
	free(msg);
	json_object_put(ref);
	json_object_put(cells);
}

/* Output caps and ANSI stripping. */

/* worker_output_num: what printf's %lld gives, at the edges too. */
Test(output, num_is_lld)
{
	static const long long	 v[] = { 0, 1, -1, 9, 10, -10, 123456789,
	    INT64_MAX, INT64_MIN, INT64_MIN + 1, 4294967296LL };
	struct evbuffer		*b;
	char			 want[40];
	size_t			 i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		b = evbuffer_new();
		worker_output_num(b, "x=", v[i]);
		snprintf(want, sizeof want, "x=%lld", v[i]);
		cr_assert_eq(evbuffer_get_length(b), strlen(want));
		cr_assert_eq(memcmp(evbuffer_pullup(b, -1), want,
		    strlen(want)), 0, "%s", want);
		evbuffer_free(b);
	}
}

/* A NUL in the text (from a source) is shown, and what follows kept. */
Test(output, take_shows_nul)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;

	evbuffer_add(b, "[3] c4 code: a\0b\n[4] c5 code: x\0\n", 33);
	s = worker_output_take(b);
	cr_assert_str_eq(s, "[3] c4 code: a\xe2\x90\x80" "b\n[4] c5 code: x"
	    "\xe2\x90\x80");
	free(s);
}

Test(output, strip_ansi)
{
	const char	*in =
	    "\033[0;31mred\033[0m and \033]0;title\007plain";
	char		*out;
	size_t		 len;

	out = worker_output_strip_ansi(in, strlen(in), &len);
	cr_assert_str_eq(out, "red and plain");
	cr_assert_eq(len, strlen("red and plain"));
	free(out);
}

/* A stream's text in a capped copy: its head and tail, without the marker. */
static size_t
test_worker_kept(struct json_object *capped, const char *c)
{
	const char	*s;
	size_t		 i, n = 0;

	s = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(capped, 0), "text"));
	for (i = 0; s[i] != '\0'; i++)
		n += s[i] == *c;
	return (n);
}

Test(output, caps_per_cell_and_result)
{
	struct worker_budget	 b;
	struct json_object	*outs, *o, *capped;
	struct evbuffer		*text;
	char			*big, *t;
	int			 trunc, i;

	/* 20,000 'x' then 5,000 'y': a quarter of the cap from the head,
	 * the rest from the tail, all the y in it. */
	big = xmalloc(25001);
	memset(big, 'x', 20000);
	memset(big + 20000, 'y', 5000);
	big[25000] = '\0';
	outs = json_object_new_array();
	o = json_object_new_object();
	json_object_object_add(o, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(o, "name", json_object_new_string("stdout"));
	json_object_object_add(o, "text", json_object_new_string(big));
	json_object_array_add(outs, o);

	worker_budget_init(&b, 0);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	cr_assert(trunc);
	cr_assert_eq(test_worker_kept(capped, "x"), WORKER_CELL_CAP - 5000);
	cr_assert_eq(test_worker_kept(capped, "y"), 5000);
	t = (char *)json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(capped, 0), "text"));
	cr_assert_eq(strspn(t, "x"), WORKER_CELL_CAP / 4);
	cr_assert_eq(b.result_left, WORKER_RESULT_CAP - WORKER_CELL_CAP);
	t = (char *)evbuffer_pullup(text, -1);
	cr_assert(strstr(t, "[... 17000 characters cut; get_results "
	    "full_output:true returns them]") != NULL);
	json_object_put(capped);
	/* The next cell gets what the result has left, then nothing. */
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	cr_assert_eq(test_worker_kept(capped, "x") + test_worker_kept(capped,
	    "y"), WORKER_RESULT_CAP - WORKER_CELL_CAP);
	json_object_put(capped);
	cr_assert_eq(b.result_left, 0);
	/* Spent: no outputs, and the text says why. */
	for (i = 0; i < 2; i++) {
		capped = worker_output_cap(outs, &b, text, &trunc, NULL);
		cr_assert(trunc);
		cr_assert_eq(json_object_array_length(capped), 0);
		json_object_put(capped);
	}
	t = (char *)evbuffer_pullup(text, -1);
	cr_assert(strstr(t, "[25000 characters of output not shown: the "
	    "result cap is reached;") != NULL);
	evbuffer_free(text);

	worker_budget_init(&b, 1);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	cr_assert_not(trunc, "full_output is uncapped");
	json_object_put(capped);
	evbuffer_free(text);
	json_object_put(outs);
	free(big);
}

/* Characters, not bytes: a cut never falls inside a sequence. */
Test(output, caps_count_characters)
{
	struct worker_budget	 b;
	struct json_object	*outs, *o, *capped;
	struct evbuffer		*text;
	const char		*s;
	char			*big;
	size_t			 i, len;
	int			 trunc;

	big = xmalloc(2 * 20000 + 1);
	for (i = 0; i < 20000; i++)
		memcpy(big + 2 * i, "\xc3\xa9", 2);
	big[40000] = '\0';
	outs = json_object_new_array();
	o = json_object_new_object();
	json_object_object_add(o, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(o, "text", json_object_new_string(big));
	json_object_array_add(outs, o);
	worker_budget_init(&b, 0);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	s = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(capped, 0), "text"));
	len = strlen(s);
	cr_assert(utf8_valid(s, len, NULL));
	cr_assert(strstr(s, "12000 characters cut") != NULL, "%s", s);
	cr_assert_eq(b.result_left, WORKER_RESULT_CAP - WORKER_CELL_CAP);
	json_object_put(capped);
	evbuffer_free(text);
	json_object_put(outs);
	free(big);
}

/* Counting and cutting by code point (common/utf8.c). */
Test(output, utf8_characters)
{
	const char	*s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";

	cr_assert_eq(utf8_chars(s, strlen(s)), 5);
	cr_assert_eq(utf8_skip(s, strlen(s), 0), 0);
	cr_assert_eq(utf8_skip(s, strlen(s), 2), 3);
	cr_assert_eq(utf8_skip(s, strlen(s), 4), 10);
	cr_assert_eq(utf8_skip(s, strlen(s), 9), strlen(s));
	cr_assert_eq(utf8_back(s, strlen(s), 1), 10);
	cr_assert_eq(utf8_back(s, strlen(s), 2), 6);
	cr_assert_eq(utf8_back(s, strlen(s), 9), 0);
}

/* A long log then an error: the cut spares the traceback. */
Test(output, cut_keeps_the_traceback)
{
	struct worker_budget	 b;
	struct json_object	*outs, *o, *tb, *capped;
	struct evbuffer		*text;
	char			*big;
	const char		*t;
	int			 trunc;

	big = xmalloc(50001);
	memset(big, 'x', 50000);
	big[50000] = '\0';
	outs = json_object_new_array();
	o = json_object_new_object();
	json_object_object_add(o, "output_type",
	    json_object_new_string("stream"));
	json_object_object_add(o, "text", json_object_new_string(big));
	json_object_array_add(outs, o);
	o = json_object_new_object();
	json_object_object_add(o, "output_type",
	    json_object_new_string("error"));
	json_object_object_add(o, "ename", json_object_new_string("E"));
	json_object_object_add(o, "evalue", json_object_new_string("v"));
	tb = json_object_new_array();
	json_object_array_add(tb, json_object_new_string("Traceback line"));
	json_object_array_add(tb, json_object_new_string("E: v"));
	json_object_object_add(o, "traceback", tb);
	json_object_array_add(outs, o);
	worker_budget_init(&b, 0);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	cr_assert(trunc);
	cr_assert_eq(json_object_array_length(capped), 2);
	cr_assert_eq(json_object_array_length(json_object_object_get(
	    json_object_array_get_idx(capped, 1), "traceback")), 2);
	evbuffer_add(text, "", 1);
	t = (const char *)evbuffer_pullup(text, -1);
	cr_assert(strstr(t, "characters cut;") != NULL);
	cr_assert(strstr(t, "Traceback line\nE: v\n") != NULL, "%s", t);
	cr_assert_eq(b.result_left, WORKER_RESULT_CAP - WORKER_CELL_CAP);
	json_object_put(capped);
	evbuffer_free(text);
	json_object_put(outs);
	free(big);
}

/* An error that quotes a long argument back keeps its message's head. */
Test(output, error_message_capped)
{
	struct json_object	*res;
	const char		*m;
	char			*long_msg;
	int			 i;

	long_msg = xmalloc(3 * 5000 + 1);
	for (i = 0; i < 5000; i++)
		memcpy(long_msg + 3 * i, "\xe2\x82\xac", 3);
	long_msg[15000] = '\0';
	res = toolresult_error("invalid_argument", long_msg);
	m = json_object_get_string(json_object_object_get(
	    toolresult_error_detail(res), "message"));
	cr_assert_eq(utf8_chars(m, strlen(m)), TOOLRESULT_MESSAGE_MAX + 6);
	cr_assert(utf8_valid(m, strlen(m), NULL));
	json_object_put(res);
	res = toolresult_error("busy", "short");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(
	    toolresult_error_detail(res), "message")), "short");
	json_object_put(res);
	free(long_msg);
}

/* The catalog: names, descriptions, schemas that admit the error shape. */

Test(tools, catalog)
{
	struct json_object	*list, *tools, *t, *os, *props, *err;
	size_t			 i;

	list = worker_tool_list();
	tools = json_object_object_get(list, "tools");
	cr_assert_geq(json_object_array_length(tools), 9);
	for (i = 0; i < json_object_array_length(tools); i++) {
		t = json_object_array_get_idx(tools, i);
		cr_assert_geq(strlen(json_object_get_string(
		    json_object_object_get(t, "description"))), 20);
		cr_assert_str_eq(json_object_get_string(json_object_object_get(
		    json_object_object_get(t, "inputSchema"), "type")),
		    "object");
		os = json_object_object_get(t, "outputSchema");
		cr_assert_null(json_object_object_get(os, "required"),
		    "%s: a required list would reject the error shape",
		    json_object_get_string(json_object_object_get(t, "name")));
		props = json_object_object_get(os, "properties");
		cr_assert(json_object_object_get_ex(props, "error", &err));
		cr_assert_not_null(worker_tool_find(json_object_get_string(
		    json_object_object_get(t, "name"))));
	}
	cr_assert_null(worker_tool_find("nope"));
	json_object_put(list);
}

/* Cursors: issued here, another incarnation, or never issued. */
Test(cursor, issued_stale_foreign)
{
	char	*c;
	int64_t	 seq = -1;

	c = worker_cursor_make(0x1234, "nb-1", 1000, 42);
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 1000, c, &seq), 0);
	cr_assert_eq(seq, 42);
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 2000, c, &seq), 1,
	    "another daemon incarnation: resync");
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-2", 1000, c, &seq), -1,
	    "another notebook's cursor was never issued for this one");
	cr_assert_eq(worker_cursor_parse(0x9999, "nb-1", 1000, c, &seq), -1,
	    "another session's cursor");
	c[strlen(c) - 1] = c[strlen(c) - 1] == '0' ? '1' : '0';
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 1000, c, &seq), -1);
	free(c);
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 1000, "1000:42",
	    &seq), -1);
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 1000, "", &seq), -1);
	cr_assert_eq(worker_cursor_parse(0x1234, "nb-1", 1000,
	    "c1.1000.42.zz", &seq), -1);
}

/* worker_json_quote writes what json-c writes, for every byte. */
Test(rpc, quote_is_json_c)
{
	struct json_object	*str;
	struct evbuffer		*b;
	const char		*want;
	char			 s[3];
	size_t			 len;
	int			 c;

	for (c = -1; c < 256; c++) {
		s[0] = 'a';
		s[1] = (char)c;
		s[2] = 'z';
		len = c == -1 ? 0 : 3;	/* -1: the empty string */
		str = json_object_new_string_len(s, (int)len);
		want = json_object_to_json_string_ext(str,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		b = evbuffer_new();
		worker_json_quote(b, s, len);
		cr_assert_eq(evbuffer_get_length(b), strlen(want), "byte %d",
		    c);
		cr_assert_eq(memcmp(evbuffer_pullup(b, -1), want,
		    strlen(want)), 0, "byte %d", c);
		evbuffer_free(b);
		json_object_put(str);
	}
}

Test(rpc, tools_list_pages, .init = rpc_setup, .fini = rpc_teardown)
{
	struct json_object	*r;

	input("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	r = json_object_object_get(sent[0], "result");
	cr_assert_eq(json_object_array_length(json_object_object_get(r,
	    "tools")), 28);
	cr_assert_null(json_object_object_get(r, "nextCursor"));
	input("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
	    "\"params\":{\"cursor\":\"bogus\"}}");
	cr_assert_eq(error_code(sent[1]), -32602);
	input("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
	    "\"params\":{\"cursor\":\"pg1.64\"}}");
	cr_assert_eq(error_code(sent[2]), -32602, "past the end");
	input("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"resources/list\",\"params\":{\"cursor\":7}}");
	cr_assert_eq(error_code(sent[3]), -32602);
	input("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"resources/templates/list\"}");
	r = json_object_object_get(sent[4], "result");
	cr_assert_eq(json_object_array_length(json_object_object_get(r,
	    "resourceTemplates")), 3);
}

Test(rpc, logging_levels, .init = rpc_setup, .fini = rpc_teardown)
{
	input("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":\"info\"}}");
	cr_assert(json_object_object_get_ex(sent[0], "result", NULL));
	input("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}");
	cr_assert_eq(error_code(sent[1]), -32602);
}

/* The stateless revision: per-request metadata, checked first. */
Test(rpc, stateless_2026, .init = rpc_setup, .fini = rpc_teardown)
{
	struct json_object	*r, *d;

	input("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server/discover\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
	r = json_object_object_get(sent[0], "result");
	cr_assert_not_null(r);
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(
	    json_object_object_get(r, "supportedVersions"), 0)),
	    "2026-07-28");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(r,
	    "resultType")), "complete");
	/* Caching hints, both fields (2026-07-28, server/utilities/caching). */
	cr_assert_eq(json_object_get_int(json_object_object_get(r, "ttlMs")),
	    0);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(r,
	    "cacheScope")), "private");
	/* Tasks are the extension there (SEP-2663, decision 069). */
	d = json_object_object_get(json_object_object_get(r, "capabilities"),
	    "extensions");
	cr_assert(json_object_object_get_ex(d, "io.modelcontextprotocol/tasks",
	    NULL));
	cr_assert_null(json_object_object_get(json_object_object_get(r,
	    "capabilities"), "tasks"));
	/* An unknown version: -32022 with the supported list. */
	input("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2099-01-01\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}}}");
	cr_assert_eq(error_code(sent[1]), -32022);
	d = json_object_object_get(json_object_object_get(sent[1], "error"),
	    "data");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(d,
	    "requested")), "2099-01-01");
	cr_assert_gt(json_object_array_length(json_object_object_get(d,
	    "supported")), 0);
	/* Missing capabilities fail before the tool runs (no effect). */
	input("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"create_notebook\",\"arguments\":{},"
	    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\"}}}");
	cr_assert_eq(error_code(sent[2]), -32602);
	cr_assert_eq(worker_attach_count(), 0, "no handle was reserved");
	input("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}}}");
	r = json_object_object_get(sent[3], "result");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(r,
	    "resultType")), "complete");
	cr_assert_eq(json_object_array_length(json_object_object_get(r,
	    "tools")), 28);
	input("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{},\"io.modelcontextprotocol/logLevel\":"
	    "\"chatty\"}}}");
	cr_assert_eq(error_code(sent[4]), -32602);
	/* The extension's methods, undeclared: -32021 naming it; declared,
	 * no tasks/list; a 2025-11-25 request has no tasks/update. */
	input("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tasks/get\","
	    "\"params\":{\"taskId\":\"rtk_0_0\",\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
	cr_assert_eq(error_code(sent[5]), -32021);
	d = json_object_object_get(json_object_object_get(sent[5], "error"),
	    "data");
	cr_assert_not_null(json_object_object_get(json_object_object_get(
	    json_object_object_get(d, "requiredCapabilities"), "extensions"),
	    "io.modelcontextprotocol/tasks"));
	input("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tasks/list\","
	    "\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":"
	    "{\"io.modelcontextprotocol/tasks\":{}}}}}}");
	cr_assert_eq(error_code(sent[6]), -32601);
	input("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tasks/update\","
	    "\"params\":{\"taskId\":\"rtk_0_0\",\"inputResponses\":{}}}");
	cr_assert_eq(error_code(sent[7]), -32601);
}

/* Export: the three formats of a small notebook (pure rendering). */
Test(export, formats)
{
	struct json_object	*nb;
	char			*s;
	size_t			 len, omitted;

	nb = parse("{\"path\":\"/tmp/x.ipynb\",\"metadata\":{"
	    "\"language_info\":{\"name\":\"python\"}},\"cells\":["
	    "{\"cell_id\":\"m\",\"cell_type\":\"markdown\",\"source\":"
	    "\"# Title\\nsome *text* <b>\"},"
	    "{\"cell_id\":\"c\",\"cell_type\":\"code\",\"execution_count\":"
	    "3,\"source\":\"print(1 < 2)\",\"outputs\":[{\"output_type\":"
	    "\"stream\",\"name\":\"stdout\",\"text\":\"True\\n\"},"
	    "{\"output_type\":\"display_data\",\"data\":{\"image/png\":"
	    "\"iVBORw0K\\nGgo=\",\"text/plain\":\"<Figure>\"},"
	    "\"metadata\":{}}]}]}");
	s = tool_export_notebook_render(nb, "markdown", NULL, &len);
	cr_assert_not_null(strstr(s, "# Title"));
	cr_assert_not_null(strstr(s, "```python\nprint(1 < 2)\n```"));
	cr_assert_not_null(strstr(s, "    True"));
	cr_assert_not_null(strstr(s, "data:image/png;base64,iVBORw0KGgo="));
	free(s);
	s = tool_export_notebook_render(nb, "python", NULL, &len);
	cr_assert_not_null(strstr(s, "# In[3]:"));
	cr_assert_not_null(strstr(s, "# # Title"));
	cr_assert_not_null(strstr(s, "print(1 < 2)"));
	free(s);
	s = tool_export_notebook_render(nb, "html", NULL, &len);
	cr_assert_not_null(strstr(s, "<h1>Title</h1>"));
	cr_assert_not_null(strstr(s, "print(1 &lt; 2)"));
	cr_assert_not_null(strstr(s, "&lt;b&gt;"), "markdown HTML escaped");
	cr_assert_not_null(strstr(s, "<img src=\"data:image/png;base64,"
	    "iVBORw0KGgo=\">"));
	cr_assert_not_null(strstr(s, "</html>"));
	cr_assert_not_null(strstr(s, "<head>\n<meta charset=\"utf-8\">\n"
	    "<title>x.ipynb</title>"));
	free(s);
	/* Inline: the image becomes a line naming its cell. */
	omitted = 0;
	s = tool_export_notebook_render(nb, "markdown", &omitted, &len);
	cr_assert_eq(omitted, 1);
	cr_assert_null(strstr(s, "base64"));
	cr_assert_null(strstr(s, "<Figure>"));
	cr_assert_not_null(strstr(s, "[image/png output of cell c left out"));
	free(s);
	omitted = 0;
	s = tool_export_notebook_render(nb, "html", &omitted, &len);
	cr_assert_eq(omitted, 1);
	cr_assert_null(strstr(s, "base64"));
	cr_assert_not_null(strstr(s, "<p class=\"output_image_omitted\">"
	    "[image/png output of cell c left out of this inline export: "
	    "inspect_notebook with cell_ids [&quot;c&quot;]"));
	free(s);
	json_object_put(nb);
}

Test(resource, encode)
{
	char	*s;

	s = worker_resource_encode("nbh_ab12");
	cr_assert_str_eq(s, "nbh_ab12");
	free(s);
	s = worker_resource_encode("a b/c%");
	cr_assert_str_eq(s, "a%20b%2Fc%25");
	free(s);
}

/* One change of a ROOM_CHANGES_REPLY list, as the daemon packs it. */
static void
pack_change(msgpack_packer *pk, uint64_t seq, const char *kind,
    const struct proto_change_detail *d, size_t nd)
{
	size_t	i;

	msgpack_pack_map(pk, 5);
	proto_pack_uint(pk, "seq", seq);
	proto_pack_key(pk, "kinds");
	msgpack_pack_array(pk, 1);
	proto_pack_cstr(pk, kind);
	proto_pack_key(pk, "cell_ids");
	msgpack_pack_array(pk, 0);
	proto_pack_key(pk, "execution_ids");
	msgpack_pack_array(pk, 0);
	proto_pack_key(pk, "details");
	msgpack_pack_array(pk, nd);
	for (i = 0; i < nd; i++)
		proto_change_detail_pack(pk, &d[i]);
}

Test(changes, filter_and_report)
{
	struct proto_change_detail	 d[4];
	struct proto_room_changed	 ev;
	struct json_object		*args, *sc, *ch, *c0;
	struct evbuffer			*text;
	msgpack_sbuffer			 sb;
	msgpack_packer			 pk;
	msgpack_unpacked		 u;
	char				*msg = NULL, *s, err[256];
	size_t				 matched;
	int				 mask;

	args = parse("{}");
	cr_assert_eq(worker_changes_parse(args, &mask, &msg), 0);
	cr_assert_eq(mask, WORKER_CHANGES_DEFAULT);
	json_object_put(args);
	args = parse("{\"changes\":[\"saves\",\"outputs\"]}");
	cr_assert_eq(worker_changes_parse(args, &mask, &msg), 0);
	cr_assert_eq(mask, WORKER_CHANGES_SAVES | WORKER_CHANGES_OUTPUTS);
	json_object_put(args);
	args = parse("{\"changes\":[\"content\",\"nope\"]}");
	cr_assert_eq(worker_changes_parse(args, &mask, &msg), -1);
	cr_assert(strstr(msg, "content, outputs") != NULL, "%s", msg);
	free(msg);
	json_object_put(args);

	memset(d, 0, sizeof d);
	d[0].how = PROTO_CHANGE_SOURCE;
	d[0].cell_id = proto_str_make("aaa");
	d[1].how = PROTO_CHANGE_INSERTED;
	d[1].cell_id = proto_str_make("bbb");
	d[1].has_index = 1;
	d[1].index = 4;
	d[2].how = PROTO_CHANGE_OUTPUTS;
	d[2].cell_id = proto_str_make("aaa");
	d[2].has_outputs = 1;
	d[2].outputs = 2;
	d[3].how = PROTO_CHANGE_KERNEL;
	d[3].from = proto_str_make("busy");
	d[3].to = proto_str_make("idle");
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4);
	pack_change(&pk, 1, "cells", d, 2);
	pack_change(&pk, 2, "saved", NULL, 0);
	pack_change(&pk, 3, "outputs", &d[2], 1);
	pack_change(&pk, 4, "kernel", &d[3], 1);
	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, sb.data, sb.size, NULL),
	    MSGPACK_UNPACK_SUCCESS);

	/* The default leaves the save out and says the rest, per cell. */
	sc = json_object_new_object();
	text = evbuffer_new();
	worker_changes_report(sc, &u.data, WORKER_CHANGES_DEFAULT, INT64_MAX,
	    text, &matched);
	cr_assert_eq(matched, 3);
	s = worker_output_take(text);
	cr_assert_str_eq(s, "3 changes: cell aaa: source edited, outputs (2); "
	    "inserted bbb at 4; kernel busy->idle");
	free(s);
	ch = json_object_object_get(sc, "changes");
	cr_assert_eq(json_object_get_int(json_object_object_get(ch,
	    "skipped")), 1);
	cr_assert(!json_object_get_boolean(json_object_object_get(ch,
	    "saved")));
	c0 = json_object_array_get_idx(json_object_object_get(ch, "cells"), 0);
	cr_assert_eq(json_object_get_int(json_object_object_get(c0,
	    "outputs")), 2);
	json_object_put(sc);

	/* Saves only: the save, nothing else. */
	sc = json_object_new_object();
	text = evbuffer_new();
	worker_changes_report(sc, &u.data, WORKER_CHANGES_SAVES, INT64_MAX,
	    text, &matched);
	cr_assert_eq(matched, 1);
	s = worker_output_take(text);
	cr_assert_str_eq(s, "1 change: saved");
	free(s);
	json_object_put(sc);

	/* Up to seq 3 (the content read): the kernel change is the next's. */
	sc = json_object_new_object();
	text = evbuffer_new();
	worker_changes_report(sc, &u.data, WORKER_CHANGES_DEFAULT, 3, text,
	    &matched);
	cr_assert_eq(matched, 2);
	s = worker_output_take(text);
	cr_assert_str_eq(s, "2 changes: cell aaa: source edited, outputs (2); "
	    "inserted bbb at 4");
	free(s);
	json_object_put(sc);

	/* One change a wait saw, after one it skipped: the same report. */
	cr_assert_eq(proto_room_change_unpack(&u.data.via.array.ptr[2], &ev,
	    err, sizeof err), 0, "%s", err);
	sc = json_object_new_object();
	text = evbuffer_new();
	worker_changes_report_one(sc, &ev, 1, WORKER_CHANGES_DEFAULT, text,
	    &matched);
	cr_assert_eq(matched, 1);
	s = worker_output_take(text);
	cr_assert_str_eq(s, "1 change: cell aaa: outputs (2)");
	free(s);
	ch = json_object_object_get(sc, "changes");
	cr_assert_eq(json_object_get_int(json_object_object_get(ch,
	    "skipped")), 1);
	cr_assert_eq(json_object_get_int(json_object_object_get(ch,
	    "count")), 1);
	json_object_put(sc);
	cr_assert_eq(worker_changes_kinds(WORKER_CHANGES_DEFAULT),
	    PROTO_KIND_ALL & ~PROTO_KIND_SAVED);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* The body packed in sb as a frame's: decoded in a zone that frees sb. */
static const msgpack_object *
sb_frame(msgpack_sbuffer *sb, msgpack_zone **zone)
{
	msgpack_unpacked	 u;
	msgpack_object		*body;

	msgpack_unpacked_init(&u);
	cr_assert_eq(msgpack_unpack_next(&u, sb->data, sb->size, NULL),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert(msgpack_zone_push_finalizer(u.zone, free, sb->data));
	*zone = msgpack_unpacked_release_zone(&u);
	body = msgpack_zone_malloc(*zone, sizeof *body);
	*body = u.data;
	return (body);
}

/* The JSON text as a frame's body: msgpack in a zone of its own. */
static const msgpack_object *
nb_frame(const char *json, msgpack_zone **zone)
{
	struct json_object	*o = parse(json);
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	mpjson_pack(&pk, o);
	json_object_put(o);
	return (sb_frame(&sb, zone));
}

/* Cell i of nb as JSON text. */
static void
nb_cell_is(struct worker_nb *nb, size_t i, const char *want)
{
	cr_assert_str_eq(json_object_to_json_string_ext(worker_nb_cell(nb, i),
	    JSON_C_TO_STRING_PLAIN), want, "cell %zu", i);
}

/*
 * What an outline reads of a cell without decoding it: the fields of
 * the types the daemon sends, or -1 (the decoded path) for anything
 * else, and for a cell already decoded.
 */
Test(reply, outline_line)
{
	struct worker_nb	*nb;
	struct worker_nb_line	 l;
	const msgpack_object	*o;
	msgpack_zone		*z;
	char			*cause = NULL, json[1024], longtype[300];
	size_t			 i;

	memset(longtype, 'x', sizeof longtype - 1);
	longtype[sizeof longtype - 1] = '\0';
	snprintf(json, sizeof json, "{\"notebook_id\":\"nb\",\"seq\":1,"
	    "\"cells\":["
	    "{\"cell_id\":\"a\",\"cell_type\":\"markdown\",\"source\":"
	    "\"x\\ny\",\"version\":\"v1\",\"execution_count\":null,"
	    "\"outputs\":[1,2],\"stale\":[\"never_run\",\"kernel_restarted\"]},"
	    "{\"cell_id\":\"b\",\"source\":\"s\",\"execution_count\":7},"
	    "{\"cell_id\":\"c\",\"execution_count\":1.5},"
	    "{\"source\":\"no id\"},"
	    "{\"cell_id\":\"d\",\"stale\":\"never_run\"},"
	    "{\"cell_id\":\"e\",\"stale\":[3]},"
	    "{\"cell_id\":\"f\",\"source\":[\"a\",\"b\"]},"
	    "{\"cell_id\":\"g\",\"stale\":[],\"execution_count\":-2},"
	    "{\"cell_id\":\"h\",\"cell_type\":\"%s\"},"
	    "{\"cell_id\":\"i\\u0000j\"},"
	    "{\"cell_id\":\"k\",\"version\":7}]}", longtype);
	o = nb_frame(json, &z);
	nb = worker_nb_read(PROTO_MSG_ROOM_CONTENT, o, z, &cause);
	cr_assert_not_null(nb, "%s", cause);

	cr_assert_eq(worker_nb_cell_line(nb, 0, &l), 0);
	cr_assert_eq(l.id->via.str.size, 1);
	cr_assert_eq(memcmp(l.type->via.str.ptr, "markdown", 8), 0);
	cr_assert_eq(l.source_len, 3);
	cr_assert_eq(memcmp(l.source, "x\ny", 3), 0);
	cr_assert_eq(l.has_count, 0);
	cr_assert_eq(memcmp(l.version->via.str.ptr, "v1", 2), 0);
	cr_assert_eq(l.stale->via.array.size, 2);
	cr_assert_eq(l.nouts, 2);

	cr_assert_eq(worker_nb_cell_line(nb, 1, &l), 0);
	cr_assert_null(l.type);
	cr_assert_null(l.version);
	cr_assert_null(l.stale);
	cr_assert(l.has_count && l.count == 7);
	cr_assert_eq(l.nouts, 0);

	cr_assert_eq(worker_nb_cell_line(nb, 7, &l), 0);
	cr_assert_null(l.stale, "an empty stale shows nothing");
	cr_assert(l.has_count && l.count == -2);
	cr_assert_str_eq(l.source, "");

	/* A float count, no id, a stale not a list of names, a source in
	 * lines, a type too long to be one, a NUL in an id, a number as
	 * version: the decoded path shows them as it always has. */
	for (i = 2; i <= 10; i++) {
		if (i == 7)
			continue;
		cr_assert_eq(worker_nb_cell_line(nb, i, &l), -1, "cell %zu",
		    i);
	}
	cr_assert_eq(worker_nb_cell_line(nb, 11, &l), -1, "past the end");

	/* Once decoded (a delta applied to it, a source view), -1 too. */
	cr_assert_not_null(worker_nb_cell(nb, 1));
	cr_assert_eq(worker_nb_cell_line(nb, 1, &l), -1);
	worker_nb_unref(nb);
}

/*
 * A content pushed by reference (docs/decisions/036): cells as arrays are
 * the held cells of that id and version, with the stale they have now;
 * they outlive the content they came from; a reference to a cell not
 * held, or not at that version, is refused (the caller re-reads).
 */
Test(reply, content_by_reference)
{
	struct worker_nb	*nb0, *nb1, *nb2, *nbx;
	const msgpack_object	*o;
	msgpack_zone		*z;
	char			*cause = NULL;

	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":5,\"cells\":["
	    "{\"cell_id\":\"a\",\"source\":\"1\",\"version\":\"v1\"},"
	    "{\"cell_id\":\"b\",\"source\":\"2\",\"version\":\"v2\","
	    "\"stale\":[\"never_run\"]},"
	    "{\"cell_id\":\"c\",\"source\":\"3\",\"version\":\"v3\"}]}", &z);
	nb0 = worker_nb_read(PROTO_MSG_ROOM_CONTENT, o, z, &cause);
	cr_assert_not_null(nb0, "%s", cause);
	cr_assert(worker_nb_delta_ok(nb0));

	/* c moved first, d inserted, a went stale, b is no longer. */
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":7,\"dirty\":true,"
	    "\"cells\":[[\"c\",\"v3\"],"
	    "{\"cell_id\":\"d\",\"cell_type\":\"code\",\"source\":\"4\","
	    "\"version\":\"v4\"},"
	    "[\"a\",\"v1\",[\"source_changed\"]],[\"b\",\"v2\"]]}", &z);
	nb1 = worker_nb_read_delta(o, z, nb0, &cause);
	cr_assert_not_null(nb1, "%s", cause);
	worker_nb_unref(nb0);	/* its cells live on in nb1 */
	cr_assert_eq(nb1->seq, 7);
	cr_assert(nb1->dirty);
	cr_assert_eq(worker_nb_count(nb1), 4);
	nb_cell_is(nb1, 0, "{\"cell_id\":\"c\",\"source\":\"3\","
	    "\"version\":\"v3\"}");
	nb_cell_is(nb1, 1, "{\"cell_id\":\"d\",\"cell_type\":\"code\","
	    "\"source\":\"4\",\"version\":\"v4\"}");
	nb_cell_is(nb1, 2, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\",\"stale\":[\"source_changed\"]}");
	nb_cell_is(nb1, 3, "{\"cell_id\":\"b\",\"source\":\"2\","
	    "\"version\":\"v2\"}");
	cr_assert_eq(worker_nb_find(nb1, "a"), 2);
	cr_assert(worker_nb_delta_ok(nb1));

	/*
	 * By reference to a held cell whose stale changed (a, which nb1
	 * holds as a copy of its own) and to one of nb0's (c), none of nb1's
	 * new cells: nbx holds a after nb1 and nb2 are gone (checked at the
	 * end; the sanitizer build sees a read of freed memory else).
	 */
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":8,\"cells\":["
	    "[\"a\",\"v1\",[\"source_changed\"]],[\"c\",\"v3\"]]}", &z);
	nbx = worker_nb_read_delta(o, z, nb1, &cause);
	cr_assert_not_null(nbx, "%s", cause);

	/* Again, by reference to cells of both frames before. */
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":8,\"cells\":["
	    "[\"d\",\"v4\"],[\"a\",\"v1\",[\"source_changed\"]]]}", &z);
	nb2 = worker_nb_read_delta(o, z, nb1, &cause);
	cr_assert_not_null(nb2, "%s", cause);
	worker_nb_unref(nb1);
	nb_cell_is(nb2, 0, "{\"cell_id\":\"d\",\"cell_type\":\"code\","
	    "\"source\":\"4\",\"version\":\"v4\"}");
	nb_cell_is(nb2, 1, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\",\"stale\":[\"source_changed\"]}");

	/* Another version, or a cell not held: refused, zone the caller's. */
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":9,\"cells\":["
	    "[\"d\",\"v5\"]]}", &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb2, &cause));
	cr_assert_not_null(cause);
	free(cause);
	cause = NULL;
	msgpack_zone_free(z);
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":9,\"cells\":["
	    "[\"d\",\"v4\"],[\"b\",\"v2\"]]}", &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb2, &cause));
	free(cause);
	msgpack_zone_free(z);
	cr_assert_eq(worker_nb_count(nb2), 2);
	worker_nb_unref(nb2);
	nb_cell_is(nbx, 0, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\",\"stale\":[\"source_changed\"]}");
	nb_cell_is(nbx, 1, "{\"cell_id\":\"c\",\"source\":\"3\","
	    "\"version\":\"v3\"}");
	worker_nb_unref(nbx);
}

#define RUN_INIT	0xcbf29ce484222325ULL

/* A cell's hash in a run, by the letter of PROTOCOL.md (FNV-1a 64). */
static uint64_t
run_cell_hash(const char *version, const char *stale)
{
	const char	*s[2] = { version, stale };
	uint64_t	 h = RUN_INIT;
	size_t		 i, n = stale != NULL ? 2 : 1;
	const char	*p;

	for (i = 0; i < n; i++) {
		if (i > 0)
			h = (h ^ 0) * 0x100000001b3ULL;	/* the NUL */
		for (p = s[i]; *p != '\0'; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	}
	return (h);
}

/* A run's digest d with the next cell's hash h, as PROTOCOL.md says. */
static uint64_t
run_fold(uint64_t d, uint64_t h)
{
	return ((d ^ h) * 0x100000001b3ULL);
}

/* The frame of a content by reference: runs [count, id, digest], and a
 * whole cell {cell_id: id, source, version} where whole. */
struct run_elem {
	int		 whole;
	uint64_t	 count;
	const char	*id;
	uint64_t	 digest;
};
static const msgpack_object *
runs_frame(int64_t seq, const struct run_elem *e, size_t n,
    msgpack_zone **zone)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	size_t			 i;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	proto_pack_str(&pk, "notebook_id", "nb");
	proto_pack_int(&pk, "seq", seq);
	proto_pack_key(&pk, "cells");
	msgpack_pack_array(&pk, n);
	for (i = 0; i < n; i++) {
		if (e[i].whole) {
			msgpack_pack_map(&pk, 3);
			proto_pack_str(&pk, "cell_id", e[i].id);
			proto_pack_str(&pk, "source", "new");
			proto_pack_str(&pk, "version", "vn");
			continue;
		}
		msgpack_pack_array(&pk, 3);
		msgpack_pack_uint64(&pk, e[i].count);
		proto_pack_cstr(&pk, e[i].id);
		msgpack_pack_uint64(&pk, e[i].digest);
	}
	return (sb_frame(&sb, zone));
}

/*
 * Runs of held cells (docs/decisions/041): [count, cell_id, digest] is
 * count cells of base from that one, as held, when their hashes fold to
 * digest; a digest of other versions or stale, a run past base's end, an
 * empty run or runs of more cells than base holds are refused.
 */
Test(reply, content_by_runs)
{
	struct worker_nb	*nb0, *nb1;
	const msgpack_object	*o;
	msgpack_zone		*z;
	char			*cause = NULL;
	uint64_t		 ha, hb, hc, hd, ab, cd, bc;
	struct run_elem		 e[3];

	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":5,\"cells\":["
	    "{\"cell_id\":\"a\",\"source\":\"1\",\"version\":\"v1\"},"
	    "{\"cell_id\":\"b\",\"source\":\"2\",\"version\":\"v2\","
	    "\"stale\":[\"never_run\"]},"
	    "{\"cell_id\":\"c\",\"source\":\"3\",\"version\":\"v3\"},"
	    "{\"cell_id\":\"d\",\"source\":\"4\",\"version\":\"v4\"}]}", &z);
	nb0 = worker_nb_read(PROTO_MSG_ROOM_CONTENT, o, z, &cause);
	cr_assert_not_null(nb0, "%s", cause);
	ha = run_cell_hash("v1", NULL);
	hb = run_cell_hash("v2", "never_run");
	hc = run_cell_hash("v3", NULL);
	hd = run_cell_hash("v4", NULL);
	ab = run_fold(run_fold(RUN_INIT, ha), hb);
	cd = run_fold(run_fold(RUN_INIT, hc), hd);
	bc = run_fold(run_fold(RUN_INIT, hb), hc);

	/* a b, then e inserted, then c d. */
	e[0] = (struct run_elem){ 0, 2, "a", ab };
	e[1] = (struct run_elem){ 1, 0, "e", 0 };
	e[2] = (struct run_elem){ 0, 2, "c", cd };
	o = runs_frame(6, e, 3, &z);
	nb1 = worker_nb_read_delta(o, z, nb0, &cause);
	cr_assert_not_null(nb1, "%s", cause);
	worker_nb_unref(nb0);
	cr_assert_eq(worker_nb_count(nb1), 5);
	nb_cell_is(nb1, 1, "{\"cell_id\":\"b\",\"source\":\"2\","
	    "\"version\":\"v2\",\"stale\":[\"never_run\"]}");
	nb_cell_is(nb1, 2, "{\"cell_id\":\"e\",\"source\":\"new\","
	    "\"version\":\"vn\"}");
	nb_cell_is(nb1, 4, "{\"cell_id\":\"d\",\"source\":\"4\","
	    "\"version\":\"v4\"}");
	cr_assert_eq(worker_nb_find(nb1, "c"), 3);

	/* A run of nb1's, held across two frames: b c (e between is not). */
	e[0] = (struct run_elem){ 0, 2, "b", bc };
	o = runs_frame(7, e, 1, &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb1, &cause),
	    "a run over a cell not in it");
	free(cause);
	msgpack_zone_free(z);
	e[0] = (struct run_elem){ 0, 2, "c", cd };
	e[1] = (struct run_elem){ 0, 1, "a", run_fold(RUN_INIT, ha) };
	o = runs_frame(7, e, 2, &z);
	nb0 = worker_nb_read_delta(o, z, nb1, &cause);
	cr_assert_not_null(nb0, "%s", cause);
	cr_assert_eq(worker_nb_count(nb0), 3);
	nb_cell_is(nb0, 2, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\"}");
	worker_nb_unref(nb0);

	/* Past the end, empty, more cells than held, another stale. */
	e[0] = (struct run_elem){ 0, 3, "c", cd };
	o = runs_frame(7, e, 1, &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb1, &cause));
	free(cause);
	msgpack_zone_free(z);
	e[0] = (struct run_elem){ 0, 0, "c", RUN_INIT };
	o = runs_frame(7, e, 1, &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb1, &cause), "empty run");
	free(cause);
	msgpack_zone_free(z);
	e[0] = (struct run_elem){ 0, 5, "a", 0 };
	e[1] = (struct run_elem){ 0, 5, "a", 0 };
	o = runs_frame(7, e, 2, &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb1, &cause));
	free(cause);
	msgpack_zone_free(z);
	e[0] = (struct run_elem){ 0, 1, "b", run_fold(RUN_INIT,
	    run_cell_hash("v2", "kernel_restarted")) };
	o = runs_frame(7, e, 1, &z);
	cr_assert_null(worker_nb_read_delta(o, z, nb1, &cause),
	    "a run of cells whose stale changed");
	free(cause);
	msgpack_zone_free(z);
	worker_nb_unref(nb1);
}

/*
 * A notebook built by reference, compacted: its cells copied into one
 * zone of its own outlive every frame they came from, it is a base
 * again, and a content by reference to it reads.
 */
Test(reply, content_compacted)
{
	struct worker_nb	*nb0, *nb1, *c, *nb2;
	const msgpack_object	*o;
	msgpack_zone		*z;
	char			*cause = NULL, *json, *refs, *t;
	int			 i;

	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":1,\"path\":\"p.ipynb\","
	    "\"kernel\":{\"name\":\"python3\",\"state\":\"idle\"},"
	    "\"metadata\":{\"k\":1},\"cells\":["
	    "{\"cell_id\":\"a\",\"source\":\"1\",\"version\":\"v1\","
	    "\"outputs\":[{\"output_type\":\"stream\",\"text\":\"x\"}]}]}",
	    &z);
	nb0 = worker_nb_read(PROTO_MSG_ROOM_CONTENT, o, z, &cause);
	cr_assert_not_null(nb0, "%s", cause);
	/*
	 * Each push brings one new cell and refers to all before it, so each
	 * frame keeps a cell: until their zones are too many for a base.
	 */
	refs = xstrdup("[\"a\",\"v1\"]");
	for (i = 2; worker_nb_delta_ok(nb0); i++) {
		cr_assert_lt(i, 200, "never too many zones");
		xasprintf(&json, "{\"notebook_id\":\"nb\",\"seq\":%d,"
		    "\"path\":\"p.ipynb\",\"kernel\":{\"name\":\"python3\","
		    "\"state\":\"idle\"},\"cells\":"
		    "[%s,{\"cell_id\":\"n%d\",\"source\":\"%d\","
		    "\"version\":\"w%d\"}]}", i, refs, i, i, i);
		o = nb_frame(json, &z);
		free(json);
		nb1 = worker_nb_read_delta(o, z, nb0, &cause);
		cr_assert_not_null(nb1, "%s", cause);
		worker_nb_unref(nb0);
		nb0 = nb1;
		xasprintf(&t, "%s,[\"n%d\",\"w%d\"]", refs, i, i);
		free(refs);
		refs = t;
	}
	free(refs);
	c = worker_nb_compact(nb0);
	worker_nb_unref(nb0);
	cr_assert(worker_nb_delta_ok(c));
	cr_assert_eq(worker_nb_count(c), (size_t)i - 1);
	cr_assert_eq(c->seq, i - 1);
	cr_assert_str_eq(c->notebook_id, "nb");
	cr_assert_str_eq(c->path, "p.ipynb");
	cr_assert_str_eq(c->kernel_state, "idle");
	nb_cell_is(c, 0, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\",\"outputs\":[{\"output_type\":\"stream\","
	    "\"text\":\"x\"}]}");
	nb_cell_is(c, 1, "{\"cell_id\":\"n2\",\"source\":\"2\","
	    "\"version\":\"w2\"}");
	o = nb_frame("{\"notebook_id\":\"nb\",\"seq\":500,\"cells\":["
	    "[\"n3\",\"w3\"],[\"a\",\"v1\",[\"source_changed\"]]]}", &z);
	nb2 = worker_nb_read_delta(o, z, c, &cause);
	cr_assert_not_null(nb2, "%s", cause);
	worker_nb_unref(c);
	nb_cell_is(nb2, 0, "{\"cell_id\":\"n3\",\"source\":\"3\","
	    "\"version\":\"w3\"}");
	nb_cell_is(nb2, 1, "{\"cell_id\":\"a\",\"source\":\"1\","
	    "\"version\":\"v1\",\"outputs\":[{\"output_type\":\"stream\","
	    "\"text\":\"x\"}],\"stale\":[\"source_changed\"]}");
	worker_nb_unref(nb2);
}

/* Issue 34: library frames folded, the user's frames and last line kept. */
Test(traceback, library_frames_fold)
{
	static const char *tb[] = {
	    "\033[0;31m-----------------------------------------------------"
	    "----------------------\033[0m",
	    "\033[0;31mKeyError\033[0m                                  "
	    "Traceback (most recent call last)",
	    "File \033[0;32m/usr/lib/python3/dist-packages/pandas/core/"
	    "indexes/base.py:3802\033[0m, in \033[0;36mIndex.get_loc\033[0m"
	    "\n   3801 try:\n-> 3802     return self._engine.get_loc(k)\n",
	    "File \033[0;32mpandas/_libs/index.pyx:138\033[0m, in "
	    "\033[0;36mpandas._libs.index.IndexEngine.get_loc\033[0m()\n",
	    "\033[0;31mKeyError\033[0m: 'revenue'",
	    "\nThe above exception was the direct cause of the following "
	    "exception:\n",
	    "\033[0;31mKeyError\033[0m                                  "
	    "Traceback (most recent call last)",
	    "Cell \033[0;32mIn [4], line 1\033[0m\n\033[0;32m----> 1\033[0m "
	    "best \033[38;5;241m=\033[39m df[\"revenue\"].max()\n",
	    "File \033[0;32m/home/u/proj/helpers.py:7\033[0m, in "
	    "\033[0;36mload\033[0m()\n      7 return x\n",
	    "File \033[0;32m/usr/lib/python3/dist-packages/pandas/core/"
	    "frame.py:3807\033[0m, in \033[0;36mDataFrame.__getitem__\033[0m\n"
	    "-> 3807 indexer = self.columns.get_loc(key)\n",
	    "\033[0;31mKeyError\033[0m: 'revenue'",
	};
	struct json_object	*arr, *out;
	const char		*s;
	size_t			 i;

	arr = json_object_new_array();
	for (i = 0; i < sizeof tb / sizeof tb[0]; i++)
		json_object_array_add(arr, json_object_new_string(tb[i]));
	out = worker_traceback_fold(arr);
	cr_assert_not_null(out);
	cr_assert_eq(json_object_array_length(out), 1);
	s = json_object_get_string(json_object_array_get_idx(out, 0));
	cr_assert_null(strchr(s, '\033'), "no ANSI: %s", s);
	cr_assert_null(strstr(s, "-----"), "no rule: %s", s);
	cr_assert_null(strstr(s, "Traceback (most recent"), "%s", s);
	cr_assert_not_null(strstr(s, "[2 library frames folded (pandas)]\n"
	    "KeyError: 'revenue'"), "%s", s);
	cr_assert_not_null(strstr(s, "Cell In [4], line 1\n----> 1 best = "
	    "df[\"revenue\"].max()\n"), "%s", s);
	cr_assert_not_null(strstr(s, "/home/u/proj/helpers.py:7"),
	    "a file of the user's is the user's: %s", s);
	cr_assert_null(strstr(s, "frame.py"), "%s", s);
	cr_assert_not_null(strstr(s, "[3 library frames folded; get_results "
	    "full_output:true shows them]"), "%s", s);
	json_object_put(out);
	/* Nothing to fold: the caller keeps what it has. */
	json_object_array_del_idx(arr, 2, 2);
	json_object_array_del_idx(arr, 6, 2);
	cr_assert_null(worker_traceback_fold(arr));
	json_object_put(arr);
}

/*
 * An error's mapped frames (decision 070): lifted into structuredContent,
 * transient's other members kept, the "at cell" line innermost first,
 * the chain's causes left out, at most 6 cells named.
 */
Test(traceback, lift_and_where)
{
	struct json_object	*tr, *copy, *rt;
	struct evbuffer		*text;
	char			*s;
	int			 i;

	tr = json_tokener_parse("{\"runtimed_cut\": {\"characters\": 1},"
	    "\"runtimed_traceback\": {\"frames\": ["
	    "{\"cell_id\": \"cC\", \"line\": 2, \"chained\": true},"
	    "{\"cell_id\": \"cB\", \"line\": 2, \"code\": \"f()\"},"
	    "{\"text\": \"Cell In [9], line 1\"},"
	    "{\"cell_id\": \"cA\", \"line\": 2, \"name\": \"f\"}],"
	    "\"library_frames\": 3}}");
	copy = json_object_new_object();
	text = evbuffer_new();
	worker_traceback_lift(tr, copy, text);
	s = worker_output_take(text);
	cr_expect_str_eq(s, "at cell cA line 2 in f, called from cell cB "
	    "line 2");
	free(s);
	cr_expect_eq(json_object_array_length(json_object_object_get(copy,
	    "frames")), 4);
	cr_expect_eq(json_object_get_int(json_object_object_get(copy,
	    "library_frames")), 3);
	cr_expect_not_null(json_object_object_get(json_object_object_get(copy,
	    "transient"), "runtimed_cut"));
	cr_expect_null(json_object_object_get(json_object_object_get(copy,
	    "transient"), "runtimed_traceback"));
	json_object_put(copy);
	json_object_put(tr);

	/* Deep: six cells named, the rest counted. */
	tr = json_tokener_parse("{\"runtimed_traceback\": {\"frames\": [],"
	    "\"library_frames\": 0, \"frames_omitted\": 5}}");
	rt = json_object_object_get(json_object_object_get(tr,
	    "runtimed_traceback"), "frames");
	for (i = 0; i < 9; i++)
		json_object_array_add(rt, json_tokener_parse(
		    "{\"cell_id\": \"cA\", \"line\": 1}"));
	copy = json_object_new_object();
	text = evbuffer_new();
	worker_traceback_lift(tr, copy, text);
	s = worker_output_take(text);
	cr_expect_not_null(strstr(s, "called from cell cA line 1 (and 3 more "
	    "frames in cells)"), "%s", s);
	free(s);
	cr_expect_eq(json_object_get_int(json_object_object_get(copy,
	    "frames_omitted")), 5);
	cr_expect_null(json_object_object_get(copy, "transient"));
	json_object_put(copy);
	json_object_put(tr);
}
