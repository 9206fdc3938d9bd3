/* SPDX-License-Identifier: ISC */
/*
 * test-wire.c: the Jupyter message codec (agent-wire.c): HMAC-SHA256
 * signatures, the delimiter scan past identity frames, rejection of bad
 * signatures and malformed messages, and the history that refuses a
 * replayed signature within bounded memory.
 */

#include <regex.h>
#include <string.h>

#include <criterion/criterion.h>

#include "agent.h"

#define F(s)	{ (s), sizeof (s) - 1 }

static size_t	build(struct agent_wire_frame *, char **, size_t);
static void	seen_sig(unsigned, char *);

/* Expected value computed with Python's hmac module. */
Test(wire, sign_known_vector)
{
	struct agent_wire_frame	parts[] = {
		F("{\"msg_type\":\"x\"}"), F("{}"), F("{}"), F("{\"a\":1}")
	};
	char			sig[65];

	cr_assert_eq(agent_wire_sign("secret", parts, 4, sig), 0);
	cr_assert_str_eq(sig, "32972b1815408d08f4296c6fe7ec76ca"
	    "2b7e7a96abe4a2babcb557017d696574");
}

Test(wire, sign_empty_key_is_empty)
{
	struct agent_wire_frame	parts[] = { F("{}"), F("{}"), F("{}"),
	    F("{}") };
	char			sig[65] = "junk";

	cr_assert_eq(agent_wire_sign("", parts, 4, sig), 0);
	cr_assert_str_eq(sig, "");
}

Test(wire, date_format)
{
	regex_t	re;
	char	date[64];

	agent_wire_date(date, sizeof date);
	cr_assert_eq(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
	    "[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$", REG_EXTENDED), 0);
	cr_assert_eq(regexec(&re, date, 0, NULL, 0), 0, "bad date %s", date);
	regfree(&re);
}

/* Frames as a kernel would send them, with n identity frames first. */
static size_t
build(struct agent_wire_frame *frames, char **parts, size_t nids)
{
	static const char	*ids[] = { "kernel.abc.status", "second-id" };
	size_t			 i, n = 0;

	for (i = 0; i < nids; i++) {
		frames[n].data = ids[i];
		frames[n++].len = strlen(ids[i]);
	}
	frames[n].data = AGENT_WIRE_DELIM;
	frames[n++].len = strlen(AGENT_WIRE_DELIM);
	for (i = 0; i < AGENT_WIRE_NPARTS; i++) {
		frames[n].data = parts[i];
		frames[n++].len = strlen(parts[i]);
	}
	return (n);
}

Test(wire, encode_parse_roundtrip_with_identities)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	struct json_object	*content, *parent, *v;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL;
	size_t			 n, nids;

	for (nids = 0; nids <= 2; nids++) {
		content = json_object_new_object();
		json_object_object_add(content, "code",
		    json_object_new_string("print(\"é\")\n"));
		parent = json_object_new_object();
		json_object_object_add(parent, "msg_id",
		    json_object_new_string("parent-1"));
		cr_assert_eq(agent_wire_encode("k3y", "sess", "execute_request",
		    content, parent, msg_id, parts), 0);
		cr_assert_eq(strlen(parts[0]), 64);
		n = build(frames, parts, nids);
		cr_assert_eq(agent_wire_find_delim(frames, n), (int)nids);

		m = agent_wire_parse("k3y", frames, n, &cause);
		cr_assert_not_null(m, "parse failed: %s", cause);
		cr_assert_str_eq(agent_wire_msg_type(m), "execute_request");
		cr_assert_str_eq(agent_wire_msg_id(m), msg_id);
		cr_assert_str_eq(agent_wire_msg_parent_id(m), "parent-1");
		cr_assert_eq(agent_wire_msg_nbuffers(m), 0);
		cr_assert(json_object_object_get_ex(
		    agent_wire_msg_content(m), "code", &v));
		cr_assert_str_eq(json_object_get_string(v), "print(\"é\")\n");
		cr_assert(json_object_object_get_ex(agent_wire_msg_header(m),
		    "version", &v));
		cr_assert_str_eq(json_object_get_string(v), "5.3");
		cr_assert(json_object_object_get_ex(agent_wire_msg_header(m),
		    "session", &v));
		cr_assert_str_eq(json_object_get_string(v), "sess");
		agent_wire_msg_free(m);
		agent_wire_parts_free(parts);
		json_object_put(content);
		json_object_put(parent);
	}
}

Test(wire, buffers_are_counted_not_signed)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL;
	size_t			 n;

	cr_assert_eq(agent_wire_encode("k", "s", "comm_msg", NULL, NULL,
	    msg_id, parts), 0);
	n = build(frames, parts, 1);
	frames[n].data = "\x00\x01\x02";
	frames[n++].len = 3;
	frames[n].data = "buf2";
	frames[n++].len = 4;
	m = agent_wire_parse("k", frames, n, &cause);
	cr_assert_not_null(m, "%s", cause);
	cr_assert_eq(agent_wire_msg_nbuffers(m), 2);
	cr_assert_null(agent_wire_msg_parent_id(m));
	agent_wire_msg_free(m);
	agent_wire_parts_free(parts);
}

Test(wire, bad_signature_rejected)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL;
	size_t			 n;

	cr_assert_eq(agent_wire_encode("right", "s", "status", NULL, NULL,
	    msg_id, parts), 0);
	n = build(frames, parts, 1);

	/* Wrong key. */
	m = agent_wire_parse("wrong", frames, n, &cause);
	cr_assert_null(m);
	cr_assert_str_eq(cause, "bad signature");
	free(cause);

	/* Tampered content, right key. */
	frames[n - 1].data = "{\"evil\":1}";
	frames[n - 1].len = strlen("{\"evil\":1}");
	cause = NULL;
	m = agent_wire_parse("right", frames, n, &cause);
	cr_assert_null(m);
	cr_assert_str_eq(cause, "bad signature");
	free(cause);

	/* Truncated signature. */
	frames[n - 1].data = parts[4];
	frames[n - 1].len = strlen(parts[4]);
	frames[2].len = 10;
	cause = NULL;
	m = agent_wire_parse("right", frames, n, &cause);
	cr_assert_null(m);
	free(cause);

	/* Signed message received by a client with no key. */
	frames[2].len = 64;
	cause = NULL;
	m = agent_wire_parse("", frames, n, &cause);
	cr_assert_null(m);
	free(cause);
	agent_wire_parts_free(parts);
}

Test(wire, malformed_rejected)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	struct agent_wire_frame	 sigparts[4];
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			 sig[65], *cause = NULL;
	size_t			 n, i;

	cr_assert_eq(agent_wire_encode("k", "s", "status", NULL, NULL,
	    msg_id, parts), 0);
	n = build(frames, parts, 0);

	/* No delimiter. */
	m = agent_wire_parse("k", frames + 1, n - 1, &cause);
	cr_assert_null(m);
	cr_assert(strstr(cause, "delimiter") != NULL);
	free(cause);

	/* Too few parts after the delimiter. */
	cause = NULL;
	m = agent_wire_parse("k", frames, n - 1, &cause);
	cr_assert_null(m);
	cr_assert(strstr(cause, "truncated") != NULL);
	free(cause);

	/* Correctly signed but not JSON objects. */
	frames[5].data = "[1,2]";
	frames[5].len = 5;
	for (i = 0; i < 4; i++)
		sigparts[i] = frames[2 + i];
	agent_wire_sign("k", sigparts, 4, sig);
	frames[1].data = sig;
	frames[1].len = 64;
	cause = NULL;
	m = agent_wire_parse("k", frames, n, &cause);
	cr_assert_null(m);
	cr_assert(strstr(cause, "JSON") != NULL);
	free(cause);

	/* Header without msg_type. */
	frames[2].data = "{\"msg_id\":\"x\"}";
	frames[2].len = strlen("{\"msg_id\":\"x\"}");
	frames[5].data = "{}";
	frames[5].len = 2;
	for (i = 0; i < 4; i++)
		sigparts[i] = frames[2 + i];
	agent_wire_sign("k", sigparts, 4, sig);
	cause = NULL;
	m = agent_wire_parse("k", frames, n, &cause);
	cr_assert_null(m);
	cr_assert(strstr(cause, "msg_type") != NULL);
	free(cause);
	agent_wire_parts_free(parts);
}

/* A signature in hex whose first 16 bytes encode i. */
static void
seen_sig(unsigned i, char *out)
{
	unsigned char	raw[32];
	size_t		j;

	memset(raw, 0x5a, sizeof raw);
	for (j = 0; j < 4; j++)
		raw[j] = (unsigned char)(i >> (8 * j));
	raw[15] = (unsigned char)(i * 7);
	util_hex(raw, sizeof raw, out);
}

/* A signature counts once; a replay is refused. */
Test(wire, seen_rejects_replay)
{
	struct agent_wire_seen	*h;
	char			 a[65], b[65];

	h = agent_wire_seen_create(16);
	seen_sig(1, a);
	seen_sig(2, b);
	cr_assert_eq(agent_wire_seen_check(h, a), 0);
	cr_assert_eq(agent_wire_seen_check(h, a), -1);
	cr_assert_eq(agent_wire_seen_check(h, b), 0);
	cr_assert_eq(agent_wire_seen_check(h, a), -1);
	cr_assert_eq(agent_wire_seen_check(h, b), -1);
	/* No key, no signature: nothing to track. */
	cr_assert_eq(agent_wire_seen_check(h, ""), 0);
	cr_assert_eq(agent_wire_seen_check(h, ""), 0);
	cr_assert_eq(agent_wire_seen_count(h), 2);
	agent_wire_seen_free(h);
}

/*
 * Bounded: never more than 2 x remember kept, and always at least the
 * last remember; older ones are forgotten.
 */
Test(wire, seen_bounded)
{
	struct agent_wire_seen	*h;
	char			 sig[65];
	unsigned		 i;

	h = agent_wire_seen_create(100);
	for (i = 0; i < 10000; i++) {
		seen_sig(i, sig);
		cr_assert_eq(agent_wire_seen_check(h, sig), 0, "%u", i);
		cr_assert_leq(agent_wire_seen_count(h), 200);
	}
	for (i = 10000 - 100; i < 10000; i++) {
		seen_sig(i, sig);
		cr_assert_eq(agent_wire_seen_check(h, sig), -1, "%u", i);
	}
	seen_sig(0, sig);
	cr_assert_eq(agent_wire_seen_check(h, sig), 0);
	agent_wire_seen_free(h);
}

/*
 * A message of a megabyte or more is checked on a thread while it is
 * parsed: still taken when signed, refused when not, and a bad signature
 * is what is said even when the JSON is bad too.
 */
Test(wire, big_message_signature)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	struct json_object	*content, *v;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37], *big;
	char			*cause = NULL;
	size_t			 n, len = 3 * 1024 * 1024;

	big = xmalloc(len + 1);
	memset(big, 'Q', len);
	big[len] = '\0';
	content = json_object_new_object();
	json_object_object_add(content, "image/png",
	    json_object_new_string(big));
	cr_assert_eq(agent_wire_encode("k3y", "s", "display_data", content,
	    NULL, msg_id, parts), 0);
	n = build(frames, parts, 0);
	m = agent_wire_parse("k3y", frames, n, &cause);
	cr_assert_not_null(m, "%s", cause);
	cr_assert(json_object_object_get_ex(agent_wire_msg_content(m),
	    "image/png", &v));
	cr_assert_eq((size_t)json_object_get_string_len(v), len);
	cr_assert_str_eq(agent_wire_msg_signature(m), parts[0]);
	agent_wire_msg_free(m);

	cr_assert_null(agent_wire_parse("other", frames, n, &cause));
	cr_assert_str_eq(cause, "bad signature");
	free(cause);
	cause = NULL;
	/* Cut the content short: bad JSON and a bad signature. */
	frames[n - 1].len -= 2;
	cr_assert_null(agent_wire_parse("k3y", frames, n, &cause));
	cr_assert_str_eq(cause, "bad signature");
	free(cause);
	agent_wire_parts_free(parts);
	json_object_put(content);
	free(big);
}

/*
 * A big message is parsed as it came while the thread checks it is
 * UTF-8; a part that is not is parsed again, repaired: the same U+FFFD
 * as a small message gets.
 */
Test(wire, big_message_not_utf8_repaired)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	struct json_object	*v;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL, *body;
	size_t			 n, len = 2 * 1024 * 1024;
	const char		*s;

	cr_assert_eq(agent_wire_encode("k3y", "s", "stream", NULL, NULL,
	    msg_id, parts), 0);
	body = xmalloc(len + 32);
	n = (size_t)snprintf(body, 32, "{\"text\": \"");
	memset(body + n, 'Q', len);
	body[n + 7] = (char)0xff;		/* not UTF-8 */
	memcpy(body + n + len, "\"}", 3);
	free(parts[4]);
	parts[4] = body;
	n = build(frames, parts, 0);
	cr_assert_eq(agent_wire_sign("k3y", &frames[2], 4, parts[0]), 0);
	m = agent_wire_parse("k3y", frames, n, &cause);
	cr_assert_not_null(m, "%s", cause);
	cr_assert(json_object_object_get_ex(agent_wire_msg_content(m),
	    "text", &v));
	s = json_object_get_string(v);
	cr_assert_eq((size_t)json_object_get_string_len(v), len + 2);
	cr_assert_eq(memcmp(s + 6, "Q\xef\xbf\xbdQ", 5), 0);
	agent_wire_msg_free(m);
	agent_wire_parts_free(parts);
}

/*
 * A big content part (long literals taken verbatim, json-splice.c) is
 * the value json-c gives: with escapes and a long key beside them.
 */
Test(wire, big_content_as_json_c)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	struct json_object	*want;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL, *body, *o;
	size_t			 n, k, len = 200 * 1024;

	cr_assert_eq(agent_wire_encode("k3y", "s", "display_data", NULL, NULL,
	    msg_id, parts), 0);
	o = body = xmalloc(4 * len + 256);
	o += sprintf(o, "{\"data\": {\"image/png\": \"");
	for (k = 0; k < len; k++)
		*o++ = "iVBORw0KGgo+/="[k % 14];
	o += sprintf(o, "\", \"text/plain\": \"a\\\"b\\u00e9\", \"");
	for (k = 0; k < len; k++)
		*o++ = 'K';
	o += sprintf(o, "\": [\"");
	for (k = 0; k < len; k++)
		*o++ = k == len / 2 ? '\t' : 'x';
	o += sprintf(o, "\", \"\\n");
	for (k = 0; k < len; k++)
		*o++ = 'y';
	o += sprintf(o, "\"]}, \"metadata\": {}}");
	free(parts[4]);
	parts[4] = body;
	n = build(frames, parts, 0);
	cr_assert_eq(agent_wire_sign("k3y", &frames[2], 4, parts[0]), 0);
	m = agent_wire_parse("k3y", frames, n, &cause);
	cr_assert_not_null(m, "%s", cause);
	cr_assert_not_null(want = json_tokener_parse(body));
	cr_assert(json_object_equal(agent_wire_msg_content(m), want));
	json_object_put(want);
	agent_wire_msg_free(m);
	/* Cut inside the first literal: refused, as json-c refuses it. */
	frames[n - 1].len = 1000;
	cr_assert_eq(agent_wire_sign("k3y", &frames[2], 4, parts[0]), 0);
	cr_assert_null(agent_wire_parse("k3y", frames, n, &cause));
	cr_assert_str_eq(cause, "a JSON part is not an object");
	free(cause);
	agent_wire_parts_free(parts);
}

/* What parse verified is what agent_wire_msg_signature gives. */
Test(wire, parse_keeps_signature)
{
	struct agent_wire_frame	 frames[16];
	struct agent_wire_msg	*m;
	char			*parts[AGENT_WIRE_NPARTS], msg_id[37];
	char			*cause = NULL;
	size_t			 n;

	cr_assert_eq(agent_wire_encode("k", "s", "status", NULL, NULL,
	    msg_id, parts), 0);
	n = build(frames, parts, 1);
	m = agent_wire_parse("k", frames, n, &cause);
	cr_assert_not_null(m, "%s", cause);
	cr_assert_str_eq(agent_wire_msg_signature(m), parts[0]);
	agent_wire_msg_free(m);
	agent_wire_parts_free(parts);
}
