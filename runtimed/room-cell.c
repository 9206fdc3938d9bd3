/* SPDX-License-Identifier: ISC */
/*
 * room-cell.c: a cell as it crosses a frame, and its version: the first
 * ROOM_VERSION_LEN hex digits of the SHA-256 of the cell as packed (id,
 * type, source, metadata, execution_count, outputs, attachments, extra),
 * so it changes whenever any of them does and is the same for the same
 * content after any restart (docs/decisions/023).  Every field is kept
 * packed (source as bytes, outputs decision 097, metadata, attachments
 * and extra decision 101), so packing a cell is copying them.  The first
 * pack hashes while it writes and keeps the version until a change of
 * the cell calls room_cell_touch (docs/decisions/101).  Who last
 * changed the cell (by: issue 39) is one of its fields, so a reader's
 * copy at a version has it as it is.
 */

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "runtimed.h"

/* What is written is hashed (md) and passed on (out, when set). */
struct room_cell_tee {
	EVP_MD_CTX	*md;
	msgpack_packer	*out;
};

/*
 * A cell is packed as thirty small writes (keys, headers, short strings)
 * around its big values: the small ones are gathered here, written
 * without a call each, and reach out in one write; the big ones go
 * straight on.  Through msgpack's packer each small write was a call, a
 * capacity check and a memcpy of the sbuffer (bench-guard's read case:
 * 79.3 M instructions, against 50.3 M when a cache kept each cell's
 * bytes in one piece, decision 037).
 */
#define ROOM_CELL_STAGE		4096
#define ROOM_CELL_STAGE_BIG	1024
struct room_cell_stage {
	msgpack_packer	*out;
	size_t		 len;
	char		 buf[ROOM_CELL_STAGE];
};

/* The ROOM_STALE_* bits by name, in bit order. */
static const char *const room_cell_stale_names[] = {
	"source_changed", "kernel_restarted", "never_run", "out_of_order",
	"upstream_changed", NULL
};

static void	room_cell_stage_init(struct room_cell_stage *,
		    msgpack_packer *, msgpack_packer *);
static int	room_cell_stage_write(void *, const char *, size_t);
static void	room_cell_stage_flush(struct room_cell_stage *);
static int	room_cell_tee_write(void *, const char *, size_t);
static size_t	room_cell_nfields(const struct room_cell *);
static void	room_cell_fields(msgpack_packer *, const struct room_cell *);
static void	room_cell_hashed(msgpack_packer *, const struct room_cell *,
		    char [ROOM_VERSION_LEN + 1]);
static int	room_cell_out(const struct room_cell *);
static void	room_cell_fill(msgpack_packer *, struct room_cell *);
static void	room_cell_write(msgpack_packer *, struct room_cell *);
static void	room_cell_pack_stale(msgpack_packer *, int, const char *);
static void	room_cell_seen(struct room_cell *);

static void
room_cell_stage_init(struct room_cell_stage *s, msgpack_packer *pk,
    msgpack_packer *out)
{
	s->out = out;
	s->len = 0;
	msgpack_packer_init(pk, s, room_cell_stage_write);
}

static void
room_cell_stage_flush(struct room_cell_stage *s)
{
	if (s->len != 0)
		s->out->callback(s->out->data, s->buf, s->len);
	s->len = 0;
}

static inline void
room_cell_stage_put(struct room_cell_stage *s, const void *buf, size_t len)
{
	if (len >= ROOM_CELL_STAGE_BIG) {
		room_cell_stage_flush(s);
		s->out->callback(s->out->data, buf, len);
		return;
	}
	if (len > sizeof s->buf - s->len)
		room_cell_stage_flush(s);
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
}

static int
room_cell_stage_write(void *data, const char *buf, size_t len)
{
	room_cell_stage_put(data, buf, len);
	return (0);
}

/* A string as msgpack_pack_str and _str_body write it. */
static inline __attribute__((always_inline)) void
room_cell_stage_str(struct room_cell_stage *s, const char *p, size_t len)
{
	unsigned char	*h;

	if (5 > sizeof s->buf - s->len)
		room_cell_stage_flush(s);
	h = (unsigned char *)s->buf + s->len;
	if (len < 32) {
		h[0] = 0xa0 | (unsigned char)len;
		s->len += 1;
	} else if (len < 256) {
		h[0] = 0xd9;
		h[1] = (unsigned char)len;
		s->len += 2;
	} else if (len < 65536) {
		h[0] = 0xda;
		h[1] = (unsigned char)(len >> 8);
		h[2] = (unsigned char)len;
		s->len += 3;
	} else {
		h[0] = 0xdb;
		h[1] = (unsigned char)(len >> 24);
		h[2] = (unsigned char)(len >> 16);
		h[3] = (unsigned char)(len >> 8);
		h[4] = (unsigned char)len;
		s->len += 5;
	}
	room_cell_stage_put(s, p, len);
}

/*
 * A map or array header, or an integer, as msgpack-c writes it: one byte
 * when small (fixmap, fixarray, positive fixint), else through the packer.
 */
static inline void
room_cell_stage_byte(struct room_cell_stage *s, unsigned char b)
{
	if (s->len == sizeof s->buf)
		room_cell_stage_flush(s);
	s->buf[s->len++] = (char)b;
}

/* A kept value's bytes, or nil (mpvalue_pack). */
static inline void
room_cell_stage_value(struct room_cell_stage *s, const struct mpvalue *v)
{
	if (v->len == 0)
		room_cell_stage_byte(s, 0xc0);
	else if (v->len == 1)
		room_cell_stage_byte(s, (unsigned char)v->ptr[0]); /* {} */
	else
		room_cell_stage_put(s, v->ptr, v->len);
}

/* A key shorter than 32 bytes, header and all, in one literal. */
#define ROOM_CELL_KEY(s, k) room_cell_stage_put(s, k, sizeof k - 1)

static int
room_cell_tee_write(void *data, const char *buf, size_t len)
{
	struct room_cell_tee	*t = data;

	if (EVP_DigestUpdate(t->md, buf, len) != 1)
		fatalx("EVP_DigestUpdate failed");
	if (t->out != NULL)
		return (t->out->callback(t->out->data, buf, len));
	return (0);
}

static size_t
room_cell_nfields(const struct room_cell *c)
{
	return (6 + (c->attachments.len != 0) + (c->extra.len != 0) +
	    ((c->flags & ROOM_CELL_NO_SOURCE) != 0) + (c->by != NULL));
}

static void
room_cell_fields(msgpack_packer *out, const struct room_cell *c)
{
	struct room_cell_stage	 local, *sp;
	msgpack_packer		 lpk, *pk;
	const char		*type = room_nb_cell_type_name(c);
	size_t			 i;

	/* Into the caller's stage when it has one, else one of its own. */
	if (out->callback == room_cell_stage_write) {
		sp = out->data;
		pk = out;
	} else {
		room_cell_stage_init(&local, &lpk, out);
		sp = &local;
		pk = &lpk;
	}
	ROOM_CELL_KEY(sp, "\xa7" "cell_id");
	room_cell_stage_str(sp, c->id, strlen(c->id));
	ROOM_CELL_KEY(sp, "\xa9" "cell_type");
	room_cell_stage_str(sp, type, strlen(type));
	ROOM_CELL_KEY(sp, "\xa6" "source");
	room_cell_stage_str(sp, c->source, c->source_len);
	ROOM_CELL_KEY(sp, "\xa8" "metadata");
	room_cell_stage_value(sp, &c->metadata);
	ROOM_CELL_KEY(sp, "\xaf" "execution_count");
	if (c->execution_count >= 0 && c->execution_count < 128)
		room_cell_stage_byte(sp, (unsigned char)c->execution_count);
	else if (c->execution_count >= 0)
		msgpack_pack_int64(pk, c->execution_count);
	else
		room_cell_stage_put(sp, "\xc0", 1);
	ROOM_CELL_KEY(sp, "\xa7" "outputs");
	if (c->outputs != NULL) {
		if (c->outputs->n < 16)
			room_cell_stage_byte(sp,
			    (unsigned char)(0x90 | c->outputs->n));
		else
			msgpack_pack_array(pk, c->outputs->n);
		for (i = 0; i < c->outputs->n; i++)
			room_cell_stage_put(sp, c->outputs->v[i].data,
			    c->outputs->v[i].len);
	} else
		room_cell_stage_put(sp, "\x90", 1);
	if (c->attachments.len != 0) {
		ROOM_CELL_KEY(sp, "\xab" "attachments");
		room_cell_stage_value(sp, &c->attachments);
	}
	if (c->extra.len != 0) {
		ROOM_CELL_KEY(sp, "\xa5" "extra");
		room_cell_stage_value(sp, &c->extra);
	}
	if (c->flags & ROOM_CELL_NO_SOURCE)
		proto_pack_bool(pk, "no_source", 1);
	if (c->by != NULL) {
		proto_pack_key(pk, "by");
		room_author_pack(pk, c->by);
	}
	if (sp == &local)
		room_cell_stage_flush(&local);
}

/* Pack the fields to out (or nowhere) and give their version. */
static void
room_cell_hashed(msgpack_packer *out, const struct room_cell *c,
    char version[ROOM_VERSION_LEN + 1])
{
	static const char	 hex[] = "0123456789abcdef";
	static EVP_MD		*sha256;
	static EVP_MD_CTX	*ctx;
	struct room_cell_tee	 t;
	msgpack_packer		 pk;
	unsigned char		 md[EVP_MAX_MD_SIZE];
	u_int			 mdlen, i;

	/* Fetched once, one context reused: only the loop packs cells. */
	if (sha256 == NULL &&
	    (sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		fatalx("EVP_MD_fetch SHA256 failed");
	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		fatalx("EVP_MD_CTX_new failed");
	t.md = ctx;
	if (EVP_DigestInit_ex(t.md, sha256, NULL) != 1)
		fatalx("EVP_DigestInit_ex failed");
	t.out = out;
	msgpack_packer_init(&pk, &t, room_cell_tee_write);
	room_cell_fields(&pk, c);
	if (EVP_DigestFinal_ex(t.md, md, &mdlen) != 1)
		fatalx("EVP_DigestFinal_ex failed");
	for (i = 0; i < ROOM_VERSION_LEN / 2; i++) {
		version[2 * i] = hex[md[i] >> 4];
		version[2 * i + 1] = hex[md[i] & 0xf];
	}
	version[ROOM_VERSION_LEN] = '\0';
}

/* Does the cell show a run (a count or outputs)? */
static int
room_cell_out(const struct room_cell *c)
{
	return (c->execution_count >= 0 || (c->outputs != NULL &&
	    c->outputs->n > 0));
}

/* Pack the fields to out (or nowhere), keeping their version. */
static void
room_cell_fill(msgpack_packer *out, struct room_cell *c)
{
	room_cell_hashed(out, c, c->version);
	c->has_out = room_cell_out(c);
	room_cell_seen(c);
}

/* An FNV-1a accumulator as a msgpack writer. */
static int
room_cell_fnv_write(void *data, const char *buf, size_t len)
{
	uint64_t	*h = data;

	*h = proto_fnv64(*h, buf, len);
	return (0);
}

/*
 * Note the version just computed among those of the cell's content: what
 * an edit changes (type, source, metadata, attachments, unknown keys),
 * not what a run does (outputs, count).  A run or a cell that prints
 * makes new versions of the same content; an edit's expect_version of
 * any of them still holds (issue 34), where the daemon remembers it:
 * the last ROOM_CELL_SEEN versions since the content last changed, and
 * not across a restart (the guard is then exact, as before).
 */
static void
room_cell_seen(struct room_cell *c)
{
	msgpack_packer	 pk;
	uint64_t	 h = PROTO_FNV64_INIT;
	uint32_t	 v;

	msgpack_packer_init(&pk, &h, room_cell_fnv_write);
	proto_pack_str(&pk, "cell_type", room_nb_cell_type_name(c));
	proto_pack_strn(&pk, "source", c->source, c->source_len);
	proto_pack_key(&pk, "metadata");
	mpvalue_pack(&pk, &c->metadata);
	if (c->attachments.len != 0) {
		proto_pack_key(&pk, "attachments");
		mpvalue_pack(&pk, &c->attachments);
	}
	if (c->extra.len != 0) {
		proto_pack_key(&pk, "extra");
		mpvalue_pack(&pk, &c->extra);
	}
	msgpack_pack_int(&pk, (c->flags & ROOM_CELL_NO_SOURCE) != 0);
	if (h != c->edit_hash || c->nseen == 0) {
		c->edit_hash = h;
		c->nseen = 0;
	}
	v = (uint32_t)strtoul(c->version, NULL, 16);
	if (c->nseen > 0 && c->seen[(c->nseen - 1) % ROOM_CELL_SEEN] == v)
		return;
	c->seen[c->nseen % ROOM_CELL_SEEN] = v;
	c->nseen++;
}

/*
 * Was version (len hex digits) one of this cell's content as it is now
 * (a version before a run or before more output), as far as the daemon
 * remembers?  The cell's current version is computed first.
 */
int
room_cell_same_content(struct room_cell *c, const char *version, size_t len)
{
	char		 buf[ROOM_VERSION_LEN + 1], now[ROOM_VERSION_LEN + 1];
	uint32_t	 v;
	u_int		 i, n;

	if (len != ROOM_VERSION_LEN)
		return (0);
	memcpy(buf, version, len);
	buf[len] = '\0';
	for (i = 0; i < len; i++) {
		if (!((buf[i] >= '0' && buf[i] <= '9') ||
		    (buf[i] >= 'a' && buf[i] <= 'f')))
			return (0);
	}
	room_cell_version(c, now);
	v = (uint32_t)strtoul(buf, NULL, 16);
	n = c->nseen < ROOM_CELL_SEEN ? c->nseen : ROOM_CELL_SEEN;
	for (i = 0; i < n; i++) {
		if (c->seen[i] == v)
			return (1);
	}
	return (0);
}

/* Pack the fields to out, hashing them when the version is not kept. */
static void
room_cell_write(msgpack_packer *out, struct room_cell *c)
{
	if (c->version[0] == '\0')
		room_cell_fill(out, c);
	else
		room_cell_fields(out, c);
}

/* The cell as the journal's snapshot keeps it. */
void
room_cell_pack(msgpack_packer *out, struct room_cell *c)
{
	struct room_cell_stage	s;
	msgpack_packer		pk;

	room_cell_stage_init(&s, &pk, out);
	msgpack_pack_map(&pk, room_cell_nfields(c));
	room_cell_write(&pk, c);
	room_cell_stage_flush(&s);
}

/*
 * The cell as a read gets it: its fields, version, and stale (ROOM_STALE_*
 * bits, listed by name when any; up, the id of the cell upstream_changed
 * names).  Stale depends on more than the cell, so it is never kept.
 */
void
room_cell_pack_read(msgpack_packer *out, struct room_cell *c, int stale,
    const char *up)
{
	struct room_cell_stage	s;
	msgpack_packer		pk;

	room_cell_stage_init(&s, &pk, out);
	/* At most 12 fields: a fixmap. */
	room_cell_stage_byte(&s, 0x80 | (room_cell_nfields(c) + 1 +
	    (stale != 0)));
	room_cell_write(&pk, c);
	ROOM_CELL_KEY(&s, "\xa7" "version");
	room_cell_stage_str(&s, c->version, ROOM_VERSION_LEN);
	if (stale != 0) {
		proto_pack_key(&pk, "stale");
		room_cell_pack_stale(&pk, stale, up);
	}
	room_cell_stage_flush(&s);
}

/*
 * The cell as a reference to the same version a reader holds: [cell_id,
 * version, stale?], stale being the cell's now (a run or a restart
 * changes it without changing the cell).
 */
void
room_cell_pack_ref(msgpack_packer *pk, struct room_cell *c, int stale,
    const char *up)
{
	char	version[ROOM_VERSION_LEN + 1];

	room_cell_version(c, version);
	msgpack_pack_array(pk, 2 + (stale != 0));
	proto_pack_cstr(pk, c->id);
	proto_pack_cstr(pk, version);
	if (stale != 0)
		room_cell_pack_stale(pk, stale, up);
}

/*
 * The cell's hash in a run of references (docs/decisions/041): its
 * version, then a NUL and each name of stale, as the reader holds them.
 */
uint64_t
room_cell_run_hash(struct room_cell *c, int stale, const char *up)
{
	char		version[ROOM_VERSION_LEN + 1];
	uint64_t	h;
	size_t		i;

	room_cell_version(c, version);
	h = proto_fnv64(PROTO_FNV64_INIT, version, strlen(version));
	for (i = 0; room_cell_stale_names[i] != NULL; i++) {
		if (stale & (1 << i)) {
			h = proto_fnv64(h, "", 1);
			h = proto_fnv64(h, room_cell_stale_names[i],
			    strlen(room_cell_stale_names[i]));
			if ((1 << i) == ROOM_STALE_UPSTREAM && up != NULL) {
				h = proto_fnv64(h, ":", 1);
				h = proto_fnv64(h, up, strlen(up));
			}
		}
	}
	return (h);
}

/*
 * Stale's bits by name; upstream_changed carries the cell that caused it,
 * "upstream_changed:<cell_id>" (decision 072).
 */
static void
room_cell_pack_stale(msgpack_packer *pk, int stale, const char *up)
{
	size_t	n, i, len;

	for (n = 0, i = 0; room_cell_stale_names[i] != NULL; i++)
		n += (stale & (1 << i)) != 0;
	msgpack_pack_array(pk, n);
	for (i = 0; room_cell_stale_names[i] != NULL; i++) {
		if (!(stale & (1 << i)))
			continue;
		if ((1 << i) != ROOM_STALE_UPSTREAM || up == NULL) {
			proto_pack_cstr(pk, room_cell_stale_names[i]);
			continue;
		}
		len = strlen(room_cell_stale_names[i]);
		msgpack_pack_str(pk, len + 1 + strlen(up));
		msgpack_pack_str_body(pk, room_cell_stale_names[i], len);
		msgpack_pack_str_body(pk, ":", 1);
		msgpack_pack_str_body(pk, up, strlen(up));
	}
}

/* The cell's version (ROOM_VERSION_LEN hex digits). */
void
room_cell_version(struct room_cell *c, char version[ROOM_VERSION_LEN + 1])
{
	if (c->version[0] == '\0')
		room_cell_fill(NULL, c);
	memcpy(version, c->version, sizeof c->version);
}

/*
 * Does the cell show a run: a count or outputs (room-stale.c asks on every
 * read; kept, it spares a look into the outputs of each cell)?
 */
int
room_cell_has_out(struct room_cell *c)
{
	if (c->version[0] == '\0')
		return (room_cell_out(c));
	return (c->has_out);
}

/* The cell changed: its version is computed again at the next pack. */
void
room_cell_touch(struct room_cell *c)
{
	c->version[0] = '\0';
}

/*
 * An author: a client (client, session when one was said) or, with disk,
 * a merge of the file.  One reference, the caller's.
 */
struct room_author *
room_author_create(const char *client, const char *session, int disk)
{
	struct room_author	*a;

	a = xcalloc(1, sizeof *a);
	a->refs = 1;
	a->disk = disk;
	if (!disk && client != NULL)
		a->client = xstrdup(client);
	if (!disk && session != NULL)
		a->session = xstrdup(session);
	return (a);
}

void
room_author_ref(struct room_author *a)
{
	if (a != NULL)
		a->refs++;
}

void
room_author_unref(struct room_author *a)
{
	if (a == NULL || --a->refs > 0)
		return;
	free(a->client);
	free(a->session);
	free(a);
}

/* {disk: true} or {client, session?}: fields apart, as in a change. */
void
room_author_pack(msgpack_packer *pk, const struct room_author *a)
{
	if (a->disk) {
		msgpack_pack_map(pk, 1);
		proto_pack_bool(pk, "disk", 1);
		return;
	}
	msgpack_pack_map(pk, 1 + (a->session != NULL));
	proto_pack_str(pk, "client", a->client != NULL ? a->client : "");
	if (a->session != NULL)
		proto_pack_str(pk, "session", a->session);
}

/* An author as room_author_pack wrote it (a snapshot's), or NULL. */
struct room_author *
room_author_unpack(const msgpack_object *o)
{
	const char	*s;
	char		*client, *session = NULL;
	size_t		 len;
	int		 disk;
	struct room_author *a;

	if (o == NULL || o->type != MSGPACK_OBJECT_MAP)
		return (NULL);
	if (proto_get_bool(o, "disk", &disk) == 0 && disk)
		return (room_author_create(NULL, NULL, 1));
	if ((s = proto_get_str(o, "client", &len)) == NULL)
		return (NULL);
	client = xstrndup(s, len);
	if ((s = proto_get_str(o, "session", &len)) != NULL)
		session = xstrndup(s, len);
	a = room_author_create(client, session, 0);
	free(client);
	free(session);
	return (a);
}

/* The cell's last editor is now a (a reference of its own is taken). */
void
room_cell_set_author(struct room_cell *c, struct room_author *a)
{
	if (c->by == a)
		return;
	room_author_ref(a);
	room_author_unref(c->by);
	c->by = a;
	room_cell_touch(c);
}
