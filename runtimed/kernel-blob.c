/* SPDX-License-Identifier: ISC */
/*
 * kernel-blob.c: BLOB_GET.  Agents write output values of BLOB_THRESHOLD
 * bytes or more to <state>/blobs (common/blob.c) and frames carry
 * {"runtimed_blob": sha256, "size": n} instead; clients fetch the bytes
 * here.  blob_get checks the content against its name.
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

static void	kernel_blob_get(struct peer *, const struct proto_header *,
		    const msgpack_object *, const void *, void *);

/*
 * The request this file answers (room-less): server-client.c tries this
 * table (docs/decisions/096).  BLOB_GET reads its body itself, to say
 * what a name must be.
 */
const struct peer_dispatch kernel_blob_table[] = {
	{ PROTO_MSG_BLOB_GET, 0, kernel_blob_get },
	{ 0, 0, NULL }
};

/* BLOB_GET {sha256} -> BLOB_REPLY {sha256, data} */
static void
kernel_blob_get(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	struct proto_blob_get	 m;
	struct proto_blob_reply	 rm;
	struct mpbuf		 b;
	uint32_t		 id = hdr->id;
	char			*hex, *data, *cause, err[256];
	size_t			 len;

	if (proto_blob_get_unpack(body, &m, err, sizeof err) != 0 ||
	    !blob_valid_name(m.sha256.ptr, m.sha256.len)) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "sha256 must be 64 lowercase hex digits");
		return;
	}
	hex = xstrndup(m.sha256.ptr, m.sha256.len);
	if (blob_get(runtimed_state_dir, hex, &data, &len, &cause) != 0) {
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "no blob %s: %s",
		    hex, cause);
		free(cause);
		free(hex);
		return;
	}
	rm.sha256 = proto_str_make(hex);
	rm.data.ptr = data;
	rm.data.len = len;
	mpbuf_init(&b);
	proto_blob_reply_pack(&b.pk, &rm);
	if (peer_send(p, PROTO_MSG_BLOB_REPLY, id, &b.sb) != 0)
		peer_send_error(p, id, PROTO_E_INVALID_ARGUMENT,
		    "blob %s is too large for a frame", hex);
	mpbuf_free(&b);
	free(data);
	free(hex);
}
