/* SPDX-License-Identifier: ISC */
/*
 * fuzz-tbmap.c: libFuzzer target for the reading of an error's traceback
 * into frames mapped to cells (common/tbmap.c, decision 070): what a
 * kernel sends as an error's traceback lines, split at NUL bytes into
 * the array's strings, resolved against three cells that ran (two of
 * them with the same code).  A frame names one of those cells or none,
 * at most 64 frames come back, and murmur2 reads every byte.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const struct tbmap_cell ran[] = {
	{ 1, 3433644812U, "cA" },
	{ 2, 3310911391U, "cB" },
	{ 3, 3433644812U, "cC" },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*tb, *m, *frames, *id;
	const char		*s = (const char *)data, *e = s + size, *nul;
	size_t			 i;

	if (size > 1024 * 1024)
		return (0);
	(void)tbmap_murmur2(data, size, TBMAP_SEED);
	tb = json_object_new_array();
	while (s < e) {
		nul = memchr(s, '\0', (size_t)(e - s));
		if (nul == NULL)
			nul = e;
		json_object_array_add(tb, json_object_new_string_len(s,
		    (int)(nul - s)));
		s = nul + 1;
	}
	m = tbmap_frames(tb, ran, sizeof ran / sizeof ran[0], "cR");
	if (m != NULL) {
		frames = json_object_object_get(m, "frames");
		if (!json_object_is_type(frames, json_type_array) ||
		    json_object_array_length(frames) > 64)
			abort();
		for (i = 0; i < json_object_array_length(frames); i++) {
			id = json_object_object_get(json_object_array_get_idx(
			    frames, i), "cell_id");
			/* cC ran A's code: its hash names no one cell. */
			if (id != NULL && strcmp(json_object_get_string(id),
			    "cA") != 0 && strcmp(json_object_get_string(id),
			    "cB") != 0 && strcmp(json_object_get_string(id),
			    "cC") != 0 && strcmp(json_object_get_string(id),
			    "cR") != 0)
				abort();
		}
		/* Every frame is JSON a client can read. */
		(void)json_object_to_json_string(m);
	}
	json_object_put(m);
	json_object_put(tb);
	return (0);
}
