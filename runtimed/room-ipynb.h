/* SPDX-License-Identifier: ISC */
/*
 * room-ipynb.h: what the .ipynb reader (room-ipynb.c) and writer
 * (room-ipynb-write.c) share: word-at-a-time byte scanning and which
 * mimetypes nbformat keeps as JSON.
 */

#ifndef ROOM_IPYNB_H
#define ROOM_IPYNB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/*
 * The first byte at or after i that is below 0x20 or equals a or b (or
 * len): 16 bytes at a time with SSE2, else 8 (SWAR).
 */
static inline size_t
room_ipynb_scan(const unsigned char *p, size_t i, size_t len, unsigned a,
    unsigned b)
{
#ifdef __SSE2__
	const __m128i	va = _mm_set1_epi8((char)a);
	const __m128i	vb = _mm_set1_epi8((char)b);
	const __m128i	vc = _mm_set1_epi8(0x1f);
	__m128i		v, m;
	int		bits;

	while (i + 16 <= len) {
		v = _mm_loadu_si128((const __m128i *)(p + i));
		m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, va),
		    _mm_cmpeq_epi8(v, vb)), _mm_cmpeq_epi8(_mm_min_epu8(v, vc),
		    v));
		if ((bits = _mm_movemask_epi8(m)) != 0)
			return (i + (size_t)__builtin_ctz((unsigned)bits));
		i += 16;
	}
#else
	while (i + 8 <= len) {
		uint64_t	w;

		memcpy(&w, p + i, 8);
		if (room_ipynb_has_less(w, 0x20) || room_ipynb_has_byte(w, a) ||
		    room_ipynb_has_byte(w, b))
			break;
		i += 8;
	}
#endif
	for (; i < len && p[i] >= 0x20 && p[i] != a && p[i] != b; i++)
		;
	return (i);
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

/* room-ipynb-check.c: nbformat's schema on outputs and metadata. */
struct room_nb;
struct json_object;
struct room_ipynb_check {
	struct room_nb	*nb;
	size_t		 n;	/* warnings given */
	size_t		 cut;	/* past the cap, counted */
};
void	room_ipynb_check_init(struct room_ipynb_check *, struct room_nb *);
void	room_ipynb_check_notebook(struct room_ipynb_check *,
	    struct json_object *);
void	room_ipynb_check_cell(struct room_ipynb_check *, size_t, const char *,
	    int, struct json_object *, struct json_object *);
void	room_ipynb_check_output(struct room_ipynb_check *, size_t,
	    const char *, size_t, const msgpack_object *);
void	room_ipynb_check_done(struct room_ipynb_check *);
const char	*room_ipynb_kind(struct json_object *);

#endif /* ROOM_IPYNB_H */
