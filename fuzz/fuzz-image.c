/* SPDX-License-Identifier: ISC */
/*
 * fuzz-image.c: libFuzzer target for what the worker does with a PNG or
 * JPEG output before a model sees it (mcp-worker/worker-image.c).  The
 * first byte picks the type (even: image/png, odd: image/jpeg); the rest
 * are the image's bytes, given base64-encoded as nbformat holds them to
 * worker_image_probe and worker_image_fit: header checks, the libpng and
 * libjpeg decoders under their error longjmps, the downscaler and the
 * encoders.  libpng and libjpeg are Debian's and not instrumented; only
 * the worker's side of them is steered by coverage.  An image between
 * FUZZ_IMAGE_MAX_PIXELS and WORKER_IMAGE_MAX_PIXELS is only probed: it
 * is valid and merely slow (seconds under ASan), and every path it takes
 * is taken by smaller ones; one past the limit still runs, to its refusal.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "mcp-worker/worker.h"

#define FUZZ_IMAGE_MAX_PIXELS	(1024 * 1024)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct worker_image_info	 info;
	const char			*mime;
	char				*b64, *out, *cause = NULL;
	size_t				 len;

	if (size < 1 || size > 4 * 1024 * 1024)
		return (0);
	mime = (data[0] & 1) ? "image/jpeg" : "image/png";
	b64 = xmalloc((size - 1 + 2) / 3 * 4 + 1);
	len = (size_t)EVP_EncodeBlock((unsigned char *)b64, data + 1,
	    (int)(size - 1));
	if (worker_image_probe(mime, b64, len, &info) == 0 &&
	    (uint64_t)info.width * info.height > FUZZ_IMAGE_MAX_PIXELS &&
	    (uint64_t)info.width * info.height <= WORKER_IMAGE_MAX_PIXELS) {
		free(b64);
		return (0);
	}
	out = worker_image_fit(mime, b64, len, WORKER_MAX_IMAGE_B64, &info,
	    &cause);
	/* Exactly one of an image and a cause, and a sent size that fits. */
	if ((out == NULL) == (cause == NULL))
		abort();
	if (out != NULL && (strlen(out) > WORKER_MAX_IMAGE_B64 ||
	    info.sent_width > WORKER_IMAGE_MAX_SIDE ||
	    info.sent_height > WORKER_IMAGE_MAX_SIDE ||
	    info.sent_width == 0 || info.sent_height == 0))
		abort();
	free(out);
	free(cause);
	free(b64);
	return (0);
}
