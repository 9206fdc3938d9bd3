/* SPDX-License-Identifier: ISC */
/*
 * agent-wire.c: the Jupyter message codec, without ZeroMQ.
 *
 * A message on the wire is [ids...] "<IDS|MSG>" signature header parent
 * metadata content [buffers...].  The signature is the lowercase hex
 * HMAC-SHA256 of the four JSON parts keyed with the connection file's
 * key; buffers are not signed.  Frames are passed in as plain
 * (pointer, length) pairs so this file can be tested on its own.
 *
 * A signature is valid once: like jupyter_client's Session (its digest
 * history), the agent remembers the signatures of the messages it
 * accepted and drops one it has seen, so a message captured and sent
 * again is not taken twice.  The memory is bounded: two generations of
 * `remember` signatures each; when the current one is full the older is
 * forgotten, so at least the last `remember` are always known.
 */

#include <sys/time.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "agent.h"

/* As deep as notebooks may nest (proto.h). */
#define AGENT_WIRE_JSON_DEPTH	PROTO_MAX_DEPTH

struct agent_wire_msg {
	struct json_object	*header;
	struct json_object	*parent;
	struct json_object	*metadata;
	struct json_object	*content;
	const char		*msg_type;
	const char		*msg_id;
	const char		*parent_id;
	size_t			 nbuffers;
	char			 signature[65];
};

/*
 * From this many bytes of JSON (a big image), the signature is computed
 * on a thread of its own while the parts are parsed (13 and 50 ms for
 * 13 MB here, one after the other before); nothing parsed is used, or
 * said about the parts, before the signature is found good.  The thread
 * also checks the parts are UTF-8 (2 ms for 10 MB), so they are parsed
 * as they came; one that is not is parsed again, repaired, after it.
 */
#define AGENT_WIRE_THREAD_BYTES	(1024 * 1024)

/*
 * From this many bytes, a stream message's content is read straight into
 * the head and tail a stream output keeps (agent-wire-stream.c), never
 * parsed whole.
 */
#define AGENT_WIRE_STREAM_MIN	(4 * 1024 * 1024)

struct agent_wire_sign_job {
	const char			*key;
	const struct agent_wire_frame	*parts;
	char				 out[65];
	int				 rc;
	int				 valid[4];	/* part is UTF-8 */
};

/*
 * Bytes of a signature kept: a quarter of HMAC-SHA256, so a new message
 * is taken for one of the 65,536 remembered with odds of 2^-48; 1 MB for
 * both tables, which fill page by page as messages come.
 */
#define AGENT_WIRE_SEEN_BYTES	8

struct agent_wire_seen {
	size_t		 remember;	/* entries per generation */
	size_t		 slots;		/* per table: 2^n >= 2x */
	unsigned char	*table[2];	/* all-zero slot is empty */
	size_t		 count[2];
	int		 cur;
};

static EVP_MAC	*agent_wire_mac;

/*
 * One tokener for the process, reset for each part: creating one callocs
 * a stack of AGENT_WIRE_JSON_DEPTH levels, which cost more than parsing
 * the parts of a small message (decision 020 found the same in
 * jsonrpc_parse).
 */
static struct json_tokener	*agent_wire_tok;

/*
 * Its buffer keeps the size of the longest string it parsed, so after a
 * part this big (an image) the tokener is freed rather than kept.
 */
#define AGENT_WIRE_TOK_KEEP	(64 * 1024)

static EVP_MAC_CTX	*agent_wire_keyed(const char *);
static char	*agent_wire_dump(struct json_object *);
static void	*agent_wire_sign_thread(void *);
static int	 agent_wire_parts(struct agent_wire_msg *, char **);
static struct json_object	**agent_wire_part(struct agent_wire_msg *,
		    int);
static struct json_object	*agent_wire_json(
		    const struct agent_wire_frame *, int);
static const char	*agent_wire_string(struct json_object *, const char *);
static unsigned char	*agent_wire_seen_slot(struct agent_wire_seen *, int,
		    const unsigned char *, int *);

/*
 * A context set up with key, kept: each message's MAC starts from a copy,
 * which saves hashing the key's pads again (the key of one kernel does
 * not change while it runs).  NULL if OpenSSL fails.
 */
static EVP_MAC_CTX *
agent_wire_keyed(const char *key)
{
	static EVP_MAC_CTX	*keyed;
	static char		*keyed_for;
	OSSL_PARAM		 params[2];
	char			 digest[] = "SHA256";

	if (keyed != NULL && strcmp(keyed_for, key) == 0)
		return (keyed);
	EVP_MAC_CTX_free(keyed);
	keyed = NULL;
	free(keyed_for);
	keyed_for = NULL;
	if (agent_wire_mac == NULL &&
	    (agent_wire_mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL)
		return (NULL);
	if ((keyed = EVP_MAC_CTX_new(agent_wire_mac)) == NULL)
		return (NULL);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    digest, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(keyed, (const unsigned char *)key, strlen(key),
	    params)) {
		EVP_MAC_CTX_free(keyed);
		keyed = NULL;
		return (NULL);
	}
	keyed_for = xstrdup(key);
	return (keyed);
}

/*
 * Sign n parts with key into out (65 bytes).  An empty key means an empty
 * signature, as jupyter_client does.  Returns 0, or -1 if OpenSSL fails.
 */
int
agent_wire_sign(const char *key, const struct agent_wire_frame *parts,
    size_t n, char *out)
{
	EVP_MAC_CTX	*keyed, *ctx;
	unsigned char	 md[EVP_MAX_MD_SIZE];
	size_t		 mdlen, i;

	out[0] = '\0';
	if (key == NULL || *key == '\0')
		return (0);
	if ((keyed = agent_wire_keyed(key)) == NULL ||
	    (ctx = EVP_MAC_CTX_dup(keyed)) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if (!EVP_MAC_update(ctx, parts[i].data, parts[i].len))
			goto fail;
	}
	if (!EVP_MAC_final(ctx, md, &mdlen, sizeof md) || mdlen != 32)
		goto fail;
	EVP_MAC_CTX_free(ctx);
	util_hex(md, mdlen, out);
	return (0);

fail:
	EVP_MAC_CTX_free(ctx);
	return (-1);
}

/* ISO 8601 UTC with microseconds and Z, as Jupyter writes dates. */
void
agent_wire_date(char *buf, size_t len)
{
	struct timeval	 tv;
	struct tm	 tm;
	char		 tmp[32];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06ldZ", tmp, (long)tv.tv_usec);
}

/* Serialize compactly; caller frees. */
static char *
agent_wire_dump(struct json_object *obj)
{
	return (xstrdup(json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
}

/*
 * Build the five parts after the delimiter for one outgoing message:
 * parts[0] signature, then header, parent, metadata and content as JSON.
 * The new msg_id is written to msg_id (37 bytes).  parent may be NULL.
 * Caller frees parts with agent_wire_parts_free.
 */
int
agent_wire_encode(const char *key, const char *session, const char *msg_type,
    struct json_object *content, struct json_object *parent, char *msg_id,
    char **parts)
{
	struct json_object	*header, *empty;
	struct agent_wire_frame	 frames[4];
	const char		*user;
	char			 date[64];
	int			 i;

	util_uuid(msg_id);
	agent_wire_date(date, sizeof date);
	if ((user = getenv("USER")) == NULL || *user == '\0')
		user = "runtimed";

	header = json_object_new_object();
	json_object_object_add(header, "msg_id",
	    json_object_new_string(msg_id));
	json_object_object_add(header, "msg_type",
	    json_object_new_string(msg_type));
	json_object_object_add(header, "username",
	    json_object_new_string(user));
	json_object_object_add(header, "session",
	    json_object_new_string(session));
	json_object_object_add(header, "date", json_object_new_string(date));
	json_object_object_add(header, "version",
	    json_object_new_string(AGENT_WIRE_VERSION));

	empty = json_object_new_object();
	parts[1] = agent_wire_dump(header);
	parts[2] = agent_wire_dump(parent != NULL ? parent : empty);
	parts[3] = agent_wire_dump(empty);
	parts[4] = agent_wire_dump(content != NULL ? content : empty);
	json_object_put(header);
	json_object_put(empty);

	for (i = 0; i < 4; i++) {
		frames[i].data = parts[i + 1];
		frames[i].len = strlen(parts[i + 1]);
	}
	parts[0] = xmalloc(65);
	if (agent_wire_sign(key, frames, 4, parts[0]) != 0) {
		agent_wire_parts_free(parts);
		return (-1);
	}
	return (0);
}

/* Free the parts built by agent_wire_encode. */
void
agent_wire_parts_free(char **parts)
{
	int	i;

	for (i = 0; i < AGENT_WIRE_NPARTS; i++) {
		free(parts[i]);
		parts[i] = NULL;
	}
}

/* Index of the "<IDS|MSG>" frame, or -1. */
int
agent_wire_find_delim(const struct agent_wire_frame *frames, size_t n)
{
	size_t	i, dlen = strlen(AGENT_WIRE_DELIM);

	for (i = 0; i < n; i++) {
		if (frames[i].len == dlen &&
		    memcmp(frames[i].data, AGENT_WIRE_DELIM, dlen) == 0)
			return ((int)i);
	}
	return (-1);
}

/*
 * Parse one JSON part which must be an object; NULL if not.  Without
 * repair the caller has the part checked for UTF-8 elsewhere.
 */
static struct json_object *
agent_wire_json(const struct agent_wire_frame *f, int repair)
{
	struct json_tokener	*tok;
	struct json_object	*obj;
	const char		*data = f->data;
	char			*fixed = NULL;
	size_t			 len = f->len, end;

	if (f->len > INT32_MAX)
		return (NULL);
	/* Most metadata and many parents are empty: no parse for those. */
	if (f->len == 2 && memcmp(f->data, "{}", 2) == 0)
		return (json_object_new_object());
	/*
	 * Kernels may send bytes that are not UTF-8 (jupyter_client encodes
	 * a lone surrogate with surrogateescape): U+FFFD from here on.
	 */
	if (repair && (fixed = utf8_repair(f->data, f->len, &len)) != NULL)
		data = fixed;
	if (agent_wire_tok == NULL)
		agent_wire_tok = json_tokener_new_ex(AGENT_WIRE_JSON_DEPTH);
	if ((tok = agent_wire_tok) == NULL || len > INT32_MAX) {
		free(fixed);
		return (NULL);
	}
	/* An image's base64 is taken verbatim, not byte by byte (033). */
	if (len >= JSON_SPLICE_MIN)
		obj = json_splice_parse(tok, data, len, JSON_SPLICE_MIN, &end);
	else {
		json_tokener_reset(tok);
		obj = json_tokener_parse_ex(tok, data, (int)len);
		end = json_tokener_get_parse_end(tok);
	}
	if (obj == NULL ||
	    json_tokener_get_error(tok) != json_tokener_success ||
	    end != len ||
	    !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_reset(tok);
	if (len > AGENT_WIRE_TOK_KEEP) {
		json_tokener_free(tok);
		agent_wire_tok = NULL;
	}
	free(fixed);
	return (obj);
}

/* A string member of obj, or NULL. */
static const char *
agent_wire_string(struct json_object *obj, const char *name)
{
	struct json_object	*v;

	if (obj == NULL || !json_object_object_get_ex(obj, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

static void *
agent_wire_sign_thread(void *arg)
{
	struct agent_wire_sign_job	*job = arg;

	int				 i;

	job->rc = agent_wire_sign(job->key, job->parts, 4, job->out);
	for (i = 0; i < 4; i++)
		job->valid[i] = utf8_valid(job->parts[i].data,
		    job->parts[i].len, NULL);
	return (NULL);
}

/* Where part i (header, parent, metadata, content) of m goes. */
static struct json_object **
agent_wire_part(struct agent_wire_msg *m, int i)
{
	struct json_object	**slot[4] = { &m->header, &m->parent,
				    &m->metadata, &m->content };

	return (slot[i]);
}

/* Check the four decoded parts of m; -1 with cause if one is bad. */
static int
agent_wire_parts(struct agent_wire_msg *m, char **cause)
{
	if (m->header == NULL || m->parent == NULL || m->metadata == NULL ||
	    m->content == NULL) {
		*cause = xstrdup("a JSON part is not an object");
		return (-1);
	}
	if ((m->msg_type = agent_wire_string(m->header, "msg_type")) == NULL) {
		*cause = xstrdup("header has no msg_type");
		return (-1);
	}
	return (0);
}

/*
 * Parse a received multipart message: find the delimiter after any
 * identity or topic frames, check the signature against key and decode
 * the four JSON parts.  Returns NULL with cause set on any failure; a
 * bad signature is what is reported whatever else is wrong.
 */
struct agent_wire_msg *
agent_wire_parse(const char *key, const struct agent_wire_frame *frames,
    size_t n, char **cause)
{
	struct agent_wire_msg		*m;
	const struct agent_wire_frame	*sig, *json;
	struct agent_wire_sign_job	 job;
	pthread_t			 thread;
	const char			*t;
	char				*why = NULL;
	size_t				 bytes = 0, i;
	int				 d, threaded = 0, rc;

	if ((d = agent_wire_find_delim(frames, n)) == -1) {
		xasprintf(cause, "no delimiter in %zu frames", n);
		return (NULL);
	}
	if (n - (size_t)d < 1 + AGENT_WIRE_NPARTS) {
		xasprintf(cause, "truncated message: %zu frames after "
		    "delimiter", n - (size_t)d - 1);
		return (NULL);
	}
	sig = &frames[d + 1];
	json = &frames[d + 2];

	memset(&job, 0, sizeof job);
	job.key = key;
	job.parts = json;
	for (i = 0; i < 4; i++)
		bytes += json[i].len;
	if (bytes >= AGENT_WIRE_THREAD_BYTES && key != NULL && *key != '\0' &&
	    pthread_create(&thread, NULL, agent_wire_sign_thread, &job) == 0)
		threaded = 1;
	else {
		agent_wire_sign_thread(&job);
		if (job.rc != 0 || sig->len != strlen(job.out) ||
		    CRYPTO_memcmp(sig->data, job.out, sig->len) != 0) {
			*cause = xstrdup(job.rc != 0 ?
			    "HMAC computation failed" : "bad signature");
			return (NULL);
		}
	}

	m = xcalloc(1, sizeof *m);
	for (i = 0; i < 4; i++) {
		/* A huge stream's text goes straight to its head and tail. */
		if (i == 3 && json[3].len >= AGENT_WIRE_STREAM_MIN &&
		    (t = agent_wire_string(m->header, "msg_type")) != NULL &&
		    strcmp(t, "stream") == 0 &&
		    (m->content = agent_wire_stream_content(json[3].data,
		    json[3].len)) != NULL)
			continue;
		*agent_wire_part(m, (int)i) = agent_wire_json(&json[i],
		    !threaded);
	}
	if (threaded) {
		pthread_join(thread, NULL);
		for (i = 0; i < 4; i++) {
			if (job.valid[i] || (i == 3 &&
			    agent_wire_stream_output(m->content) != NULL))
				continue;
			json_object_put(*agent_wire_part(m, (int)i));
			*agent_wire_part(m, (int)i) = agent_wire_json(&json[i],
			    1);
		}
	}
	rc = agent_wire_parts(m, &why);
	if (threaded && (job.rc != 0 || sig->len != strlen(job.out) ||
	    CRYPTO_memcmp(sig->data, job.out, sig->len) != 0)) {
		free(why);
		why = xstrdup(job.rc != 0 ?
		    "HMAC computation failed" : "bad signature");
		rc = -1;
	}
	if (rc != 0) {
		*cause = why;
		agent_wire_msg_free(m);
		return (NULL);
	}
	m->msg_id = agent_wire_string(m->header, "msg_id");
	m->parent_id = agent_wire_string(m->parent, "msg_id");
	m->nbuffers = n - (size_t)d - 1 - AGENT_WIRE_NPARTS;
	memcpy(m->signature, job.out, sizeof m->signature);
	return (m);
}

/* The signature the message carried (hex; empty without a key). */
const char *
agent_wire_msg_signature(struct agent_wire_msg *m)
{
	return (m->signature);
}

/* A history remembering at least remember signatures. */
struct agent_wire_seen *
agent_wire_seen_create(size_t remember)
{
	struct agent_wire_seen	*h;

	h = xcalloc(1, sizeof *h);
	h->remember = remember > 0 ? remember : 1;
	h->slots = 2;
	while (h->slots < 2 * h->remember)
		h->slots *= 2;
	h->table[0] = xcalloc(h->slots, AGENT_WIRE_SEEN_BYTES);
	h->table[1] = xcalloc(h->slots, AGENT_WIRE_SEEN_BYTES);
	return (h);
}

void
agent_wire_seen_free(struct agent_wire_seen *h)
{
	if (h == NULL)
		return;
	free(h->table[0]);
	free(h->table[1]);
	free(h);
}

/* How many signatures are remembered now (at most 2 x remember). */
size_t
agent_wire_seen_count(struct agent_wire_seen *h)
{
	return (h->count[0] + h->count[1]);
}

/*
 * Find d in table t: its slot, or the empty slot where it would go.  The
 * digest is uniformly random, so its first bytes are the hash.
 */
static unsigned char *
agent_wire_seen_slot(struct agent_wire_seen *h, int t,
    const unsigned char *d, int *found)
{
	static const unsigned char	 zero[AGENT_WIRE_SEEN_BYTES];
	unsigned char			*slot;
	uint64_t			 hash;
	size_t				 i;

	memcpy(&hash, d, sizeof hash);
	for (i = hash & (h->slots - 1);; i = (i + 1) & (h->slots - 1)) {
		slot = h->table[t] + i * AGENT_WIRE_SEEN_BYTES;
		if (memcmp(slot, d, AGENT_WIRE_SEEN_BYTES) == 0) {
			*found = 1;
			return (slot);
		}
		if (memcmp(slot, zero, AGENT_WIRE_SEEN_BYTES) == 0) {
			*found = 0;
			return (slot);
		}
	}
}

/*
 * Record a signature (hex, as agent_wire_msg_signature gives it).
 * Returns 0 the first time, -1 for one already seen: a replay.  An empty
 * signature (no key) is never tracked, as jupyter_client does.
 */
int
agent_wire_seen_check(struct agent_wire_seen *h, const char *sig)
{
	unsigned char	 d[AGENT_WIRE_SEEN_BYTES], *slot;
	size_t		 i;
	int		 found, hi, lo;

	if (strlen(sig) < 2 * AGENT_WIRE_SEEN_BYTES)
		return (0);
	for (i = 0; i < AGENT_WIRE_SEEN_BYTES; i++) {
		hi = sig[2 * i] <= '9' ? sig[2 * i] - '0' :
		    sig[2 * i] - 'a' + 10;
		lo = sig[2 * i + 1] <= '9' ? sig[2 * i + 1] - '0' :
		    sig[2 * i + 1] - 'a' + 10;
		d[i] = (unsigned char)((hi << 4) | lo);
	}
	agent_wire_seen_slot(h, !h->cur, d, &found);
	if (found)
		return (-1);
	slot = agent_wire_seen_slot(h, h->cur, d, &found);
	if (found)
		return (-1);
	if (h->count[h->cur] == h->remember) {
		/* Full: forget the older generation and start over there. */
		h->cur = !h->cur;
		memset(h->table[h->cur], 0, h->slots * AGENT_WIRE_SEEN_BYTES);
		h->count[h->cur] = 0;
		slot = agent_wire_seen_slot(h, h->cur, d, &found);
	}
	memcpy(slot, d, AGENT_WIRE_SEEN_BYTES);
	h->count[h->cur]++;
	return (0);
}

/* Free a parsed message. */
void
agent_wire_msg_free(struct agent_wire_msg *m)
{
	if (m == NULL)
		return;
	json_object_put(m->header);
	json_object_put(m->parent);
	json_object_put(m->metadata);
	json_object_put(m->content);
	free(m);
}

const char *
agent_wire_msg_type(struct agent_wire_msg *m)
{
	return (m->msg_type);
}

const char *
agent_wire_msg_id(struct agent_wire_msg *m)
{
	return (m->msg_id);
}

/* The msg_id of the request this message answers, or NULL. */
const char *
agent_wire_msg_parent_id(struct agent_wire_msg *m)
{
	return (m->parent_id);
}

struct json_object *
agent_wire_msg_header(struct agent_wire_msg *m)
{
	return (m->header);
}

struct json_object *
agent_wire_msg_content(struct agent_wire_msg *m)
{
	return (m->content);
}

size_t
agent_wire_msg_nbuffers(struct agent_wire_msg *m)
{
	return (m->nbuffers);
}
