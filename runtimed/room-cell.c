/* SPDX-License-Identifier: ISC */
/*
 * room-cell.c: a cell as it crosses a frame, and its version: the first
 * ROOM_VERSION_LEN hex digits of the SHA-256 of the cell as packed (id,
 * type, source, metadata, execution_count, outputs, attachments, extra),
 * so it changes whenever any of them does and is the same for the same
 * content after any restart (docs/decisions/023).  Reads hash while they
 * pack, so a version costs one pass over bytes already being written.
 */

#include <string.h>

#include <openssl/evp.h>

#include "runtimed.h"

/* What is written is hashed, and passed on when out is set. */
struct room_cell_tee {
	EVP_MD_CTX	*md;
	msgpack_packer	*out;
};

/* The ROOM_STALE_* bits by name, in bit order. */
static const char *const room_cell_stale_names[] = {
	"source_changed", "kernel_restarted", "never_run", "out_of_order",
	NULL
};

static int	room_cell_tee_write(void *, const char *, size_t);
static size_t	room_cell_nfields(const struct room_cell *);
static void	room_cell_fields(msgpack_packer *, const struct room_cell *);
static void	room_cell_hashed(msgpack_packer *, const struct room_cell *,
		    char [ROOM_VERSION_LEN + 1]);

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
	return (6 + (c->attachments != NULL) + (c->extra != NULL) +
	    ((c->flags & ROOM_CELL_NO_SOURCE) != 0));
}

static void
room_cell_fields(msgpack_packer *pk, const struct room_cell *c)
{
	proto_pack_str(pk, "cell_id", c->id);
	proto_pack_str(pk, "cell_type", room_nb_cell_type_name(c));
	proto_pack_strn(pk, "source", c->source, c->source_len);
	proto_pack_key(pk, "metadata");
	mpjson_pack(pk, c->metadata);
	if (c->execution_count >= 0)
		proto_pack_int(pk, "execution_count", c->execution_count);
	else
		proto_pack_nil(pk, "execution_count");
	proto_pack_key(pk, "outputs");
	if (c->outputs != NULL)
		mpjson_pack(pk, c->outputs);
	else
		msgpack_pack_array(pk, 0);
	if (c->attachments != NULL) {
		proto_pack_key(pk, "attachments");
		mpjson_pack(pk, c->attachments);
	}
	if (c->extra != NULL) {
		proto_pack_key(pk, "extra");
		mpjson_pack(pk, c->extra);
	}
	if (c->flags & ROOM_CELL_NO_SOURCE)
		proto_pack_bool(pk, "no_source", 1);
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

/* The cell as the journal's snapshot keeps it. */
void
room_cell_pack(msgpack_packer *pk, const struct room_cell *c)
{
	msgpack_pack_map(pk, room_cell_nfields(c));
	room_cell_fields(pk, c);
}

/*
 * The cell as a read gets it: its fields, version, and stale (ROOM_STALE_*
 * bits, listed by name when any).
 */
void
room_cell_pack_read(msgpack_packer *pk, const struct room_cell *c, int stale)
{
	char	version[ROOM_VERSION_LEN + 1];
	size_t	n, i;

	msgpack_pack_map(pk, room_cell_nfields(c) + 1 + (stale != 0));
	room_cell_hashed(pk, c, version);
	proto_pack_str(pk, "version", version);
	if (stale == 0)
		return;
	proto_pack_key(pk, "stale");
	for (n = 0, i = 0; room_cell_stale_names[i] != NULL; i++)
		n += (stale & (1 << i)) != 0;
	msgpack_pack_array(pk, n);
	for (i = 0; room_cell_stale_names[i] != NULL; i++) {
		if (stale & (1 << i))
			proto_pack_cstr(pk, room_cell_stale_names[i]);
	}
}

/* The cell's version (ROOM_VERSION_LEN hex digits). */
void
room_cell_version(const struct room_cell *c,
    char version[ROOM_VERSION_LEN + 1])
{
	room_cell_hashed(NULL, c, version);
}
