/* SPDX-License-Identifier: ISC */
/*
 * room-ipynb.h: what the .ipynb reader (room-ipynb.c) and writer
 * (room-ipynb-write.c) share: word-at-a-time byte scanning and which
 * mimetypes nbformat keeps as JSON.
 */

#ifndef ROOM_IPYNB_H
#define ROOM_IPYNB_H

#include <stdint.h>
#include <string.h>

/*
 * Word-at-a-time scanning (SWAR): does any byte of w fall below n, or
 * equal c?  False positives only send a word to the byte loop.
 */
#define ROOM_IPYNB_ONES		0x0101010101010101ULL
#define ROOM_IPYNB_HIGHS	0x8080808080808080ULL

static inline int
room_ipynb_has_less(uint64_t w, unsigned n)
{
	return (((w - ROOM_IPYNB_ONES * n) & ~w & ROOM_IPYNB_HIGHS) != 0);
}

static inline int
room_ipynb_has_byte(uint64_t w, unsigned c)
{
	uint64_t	x = w ^ (ROOM_IPYNB_ONES * c);

	return (((x - ROOM_IPYNB_ONES) & ~x & ROOM_IPYNB_HIGHS) != 0);
}

/* Is this a JSON mimetype, kept as is by nbformat? */
static inline int
room_ipynb_json_mime(const char *mime)
{
	size_t	len = strlen(mime);

	if (strcmp(mime, "application/json") == 0)
		return (1);
	return (strncmp(mime, "application/", 12) == 0 && len >= 5 &&
	    strcmp(mime + len - 5, "+json") == 0);
}

#endif /* ROOM_IPYNB_H */
