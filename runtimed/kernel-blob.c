/*
 * kernel-blob.c: BLOB_GET.  Agents write output values of BLOB_THRESHOLD
 * bytes or more to <state>/blobs (common/blob.c) and frames carry
 * {"runtimed_blob": sha256, "size": n} instead; clients fetch the bytes
 * here.  blob_get checks the content against its name.
 */

#include <stdlib.h>
#include <string.h>

#include "runtimed.h"

/* BLOB_GET {sha256} -> BLOB_REPLY {sha256, data} */
void
kernel_blob_get(struct peer *p, uint32_t id, const msgpack_object *body)
{
	struct mpbuf	 b;
	const char	*name;
	char		*hex, *data, *cause;
	size_t		 len, nlen;

	name = proto_get_str(body, "sha256", &nlen);
	if (name == NULL || !blob_valid_name(name, nlen)) {
		peer_send_error(p, id, "invalid_argument",
		    "sha256 must be 64 lowercase hex digits");
		return;
	}
	hex = xstrndup(name, nlen);
	if (blob_get(runtimed_state_dir, hex, &data, &len, &cause) != 0) {
		peer_send_error(p, id, "invalid_argument", "no blob %s: %s",
		    hex, cause);
		free(cause);
		free(hex);
		return;
	}
	mpbuf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	proto_pack_str(&b.pk, "sha256", hex);
	proto_pack_strn(&b.pk, "data", data, len);
	if (peer_send(p, PROTO_MSG_BLOB_REPLY, id, &b.sb) != 0)
		peer_send_error(p, id, "invalid_argument",
		    "blob %s is too large for a frame", hex);
	mpbuf_free(&b);
	free(data);
	free(hex);
}
