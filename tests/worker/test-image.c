/* SPDX-License-Identifier: ISC */
/*
 * test-image.c: worker-image.c on images made here with libpng and
 * libjpeg, and on crafted ones (a side over the limit, a bad CRC, a huge
 * ancillary chunk, a pixel bomb, interlacing, noise that does not fit).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jpeglib.h>
#include <openssl/evp.h>
#include <png.h>
#include <zlib.h>

#include "worker.h"

struct test_image_buf {
	uint8_t	*p;
	size_t	 len;
};

static void	test_image_write(png_structp, png_bytep, size_t);
static void	test_image_flush(png_structp);
static uint8_t	*test_image_png(u_int, u_int, int, int, int, size_t *);
static char	*test_image_b64(const uint8_t *, size_t, size_t *);
static uint8_t	*test_image_chunk(uint8_t *, size_t *, size_t, const char *,
		    const uint8_t *, size_t);
static void	test_image_recrc(uint8_t *, size_t, size_t);
static char	*test_image_fit(const char *, const uint8_t *, size_t,
		    struct worker_image_info *, char **);
static uint8_t	*test_image_jpeg(u_int, u_int, int, unsigned long *);

static void
test_image_write(png_structp png, png_bytep p, size_t n)
{
	struct test_image_buf	*b = png_get_io_ptr(png);

	b->p = realloc(b->p, b->len + n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void
test_image_flush(png_structp png)
{
}

/* A w x h PNG (RGB, or RGBA with alpha), a gradient or noise. */
static uint8_t *
test_image_png(u_int w, u_int h, int alpha, int interlace, int noise,
    size_t *len)
{
	struct test_image_buf	 b = { NULL, 0 };
	png_structp		 png;
	png_infop		 info;
	uint8_t			*row;
	u_int			 x, y, ch = alpha ? 4 : 3, k;
	int			 passes, pass;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL,
	    NULL);
	info = png_create_info_struct(png);
	png_set_write_fn(png, &b, test_image_write, test_image_flush);
	png_set_IHDR(png, info, w, h, 8, alpha ? PNG_COLOR_TYPE_RGB_ALPHA :
	    PNG_COLOR_TYPE_RGB, interlace ? PNG_INTERLACE_ADAM7 :
	    PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
	    PNG_FILTER_TYPE_DEFAULT);
	png_set_compression_level(png, 1);
	png_write_info(png, info);
	passes = png_set_interlace_handling(png);
	row = malloc((size_t)w * ch);
	for (pass = 0; pass < passes; pass++) {
		for (y = 0; y < h; y++) {
			for (x = 0; x < w; x++) {
				for (k = 0; k < ch; k++)
					row[x * ch + k] = noise ?
					    (uint8_t)rand() :
					    (uint8_t)(x * (k + 1) + y);
			}
			png_write_row(png, row);
		}
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	*len = b.len;
	return (b.p);
}

static char *
test_image_b64(const uint8_t *p, size_t len, size_t *outlen)
{
	char	*s;

	s = malloc((len + 2) / 3 * 4 + 1);
	*outlen = (size_t)EVP_EncodeBlock((unsigned char *)s, p, (int)len);
	return (s);
}

/* Insert a chunk at offset off of a PNG; returns the new buffer. */
static uint8_t *
test_image_chunk(uint8_t *p, size_t *len, size_t off, const char *type,
    const uint8_t *data, size_t n)
{
	uint8_t		*q;
	uint32_t	 crc;

	q = malloc(*len + n + 12);
	memcpy(q, p, off);
	q[off] = (uint8_t)(n >> 24);
	q[off + 1] = (uint8_t)(n >> 16);
	q[off + 2] = (uint8_t)(n >> 8);
	q[off + 3] = (uint8_t)n;
	memcpy(q + off + 4, type, 4);
	memcpy(q + off + 8, data, n);
	crc = (uint32_t)crc32(0, q + off + 4, (uInt)(n + 4));
	q[off + 8 + n] = (uint8_t)(crc >> 24);
	q[off + 9 + n] = (uint8_t)(crc >> 16);
	q[off + 10 + n] = (uint8_t)(crc >> 8);
	q[off + 11 + n] = (uint8_t)crc;
	memcpy(q + off + n + 12, p + off, *len - off);
	*len += n + 12;
	free(p);
	return (q);
}

/* The CRC of the chunk at off (n data bytes) made right again. */
static void
test_image_recrc(uint8_t *p, size_t off, size_t n)
{
	uint32_t	crc;

	crc = (uint32_t)crc32(0, p + off + 4, (uInt)(n + 4));
	p[off + 8 + n] = (uint8_t)(crc >> 24);
	p[off + 9 + n] = (uint8_t)(crc >> 16);
	p[off + 10 + n] = (uint8_t)(crc >> 8);
	p[off + 11 + n] = (uint8_t)crc;
}

static char *
test_image_fit(const char *mime, const uint8_t *p, size_t len,
    struct worker_image_info *info, char **cause)
{
	char	*b64, *out;
	size_t	 n;

	b64 = test_image_b64(p, len, &n);
	out = worker_image_fit(mime, b64, n, WORKER_MAX_IMAGE_B64, info,
	    cause);
	free(b64);
	return (out);
}

Test(image, small_png_sent_as_it_is)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*b64, *out, *cause;
	size_t				 len, n;

	p = test_image_png(40, 30, 0, 0, 0, &len);
	b64 = test_image_b64(p, len, &n);
	out = worker_image_fit("image/png", b64, n, WORKER_MAX_IMAGE_B64,
	    &info, &cause);
	cr_assert_not_null(out, "%s", cause);
	cr_assert_str_eq(out, b64);
	cr_assert_eq(info.width, 40);
	cr_assert_eq(info.sent_width, 40);
	cr_assert_eq(info.sent_height, 30);
	free(out);
	free(b64);
	free(p);
}

Test(image, large_png_downscaled_keeps_aspect)
{
	struct worker_image_info	 info, sent;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	p = test_image_png(3000, 2000, 1, 0, 0, &len);
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_not_null(out, "%s", cause);
	cr_assert_eq(info.width, 3000);
	cr_assert_eq(info.height, 2000);
	cr_assert_eq(info.sent_width, WORKER_IMAGE_MAX_SIDE);
	cr_assert_eq(info.sent_height, 1045);
	cr_assert_str_eq(info.sent_mime, "image/png");
	cr_assert_eq(worker_image_probe("image/png", out, strlen(out), &sent),
	    0);
	cr_assert_eq(sent.width, WORKER_IMAGE_MAX_SIDE);
	cr_assert_eq(sent.height, 1045);
	free(out);
	free(p);
}

Test(image, interlaced_png)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	p = test_image_png(1700, 90, 0, 1, 0, &len);
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_not_null(out, "%s", cause);
	cr_assert_eq(info.sent_width, WORKER_IMAGE_MAX_SIDE);
	cr_assert_eq(info.sent_height, 83);
	free(out);
	free(p);
}

Test(image, side_over_the_limit_refused_in_the_header)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	p = test_image_png(1, 1, 0, 0, 0, &len);
	/* IHDR data starts at 16: width 70000. */
	p[16] = 0;
	p[17] = 1;
	p[18] = 0x11;
	p[19] = 0x70;
	test_image_recrc(p, 8, 13);
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_null(out);
	cr_assert_not_null(strstr(cause, "not a valid PNG"), "%s", cause);
	cr_assert_not_null(strstr(cause, "Invalid IHDR data"), "%s", cause);
	free(cause);
	free(p);
}

Test(image, pixel_bomb_refused_before_allocating)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	p = test_image_png(1, 1, 0, 0, 0, &len);
	/* 60000 x 60000: 3.6 gigapixels from a 70-byte file. */
	p[16] = p[20] = 0;
	p[17] = p[21] = 0;
	p[18] = p[22] = 0xea;
	p[19] = p[23] = 0x60;
	test_image_recrc(p, 8, 13);
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_null(out);
	cr_assert_str_eq(cause, "over 50 megapixels");
	cr_assert_eq(info.width, 60000);
	free(cause);
	free(p);
}

Test(image, bad_crc_and_truncation)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	p = test_image_png(20, 20, 0, 0, 0, &len);
	p[40] ^= 0xff;		/* in the IDAT */
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_null(out);
	cr_assert_not_null(strstr(cause, "not a valid PNG"), "%s", cause);
	free(cause);
	out = test_image_fit("image/png", p, 30, &info, &cause);
	cr_assert_null(out);
	cr_assert_not_null(strstr(cause, "not a valid PNG"), "%s", cause);
	free(cause);
	out = worker_image_fit("image/png", "@@@@", 4, WORKER_MAX_IMAGE_B64,
	    &info, &cause);
	cr_assert_null(out);
	cr_assert_str_eq(cause, "not valid base64");
	free(cause);
	free(p);
}

Test(image, huge_ancillary_chunk_dropped)
{
	struct worker_image_info	 info;
	uint8_t				*p, *z, *data;
	char				*out, *cause;
	size_t				 len, zeros = 8 * 1024 * 1024;
	uLongf				 zlen;

	/* An iCCP profile that inflates to 8 MiB. */
	z = calloc(1, zeros);
	zlen = compressBound(zeros);
	data = malloc(zlen + 3);
	memcpy(data, "x\0\0", 3);
	compress(data + 3, &zlen, z, zeros);
	p = test_image_png(30, 20, 0, 0, 0, &len);
	p = test_image_chunk(p, &len, 33, "iCCP", data, zlen + 3);
	out = test_image_fit("image/png", p, len, &info, &cause);
	cr_assert_not_null(out, "%s", cause);
	cr_assert_eq(info.sent_width, 30);
	free(out);
	free(p);
	free(data);
	free(z);
}

Test(image, noise_png_sent_as_jpeg_or_refused)
{
	struct worker_image_info	 info;
	uint8_t				*p;
	char				*out, *cause;
	size_t				 len;

	/* Noise: the 1568-pixel PNG is far over 1 MiB of base64. */
	p = test_image_png(2000, 1000, 0, 0, 1, &len);
	out = test_image_fit("image/png", p, len, &info, &cause);
	if (out != NULL) {
		cr_assert_str_eq(info.sent_mime, "image/jpeg");
		cr_assert_leq(strlen(out), WORKER_MAX_IMAGE_B64);
	} else
		cr_assert_not_null(strstr(cause, "bytes of base64 even at"),
		    "%s", cause);
	free(out);
	free(cause);
	free(p);
}

/* A w x h RGB JPEG, progressive or not; free() it. */
static uint8_t *
test_image_jpeg(u_int w, u_int h, int progressive, unsigned long *size)
{
	struct jpeg_compress_struct	 c;
	struct jpeg_error_mgr		 e;
	unsigned char			*buf = NULL;
	uint8_t				*row;
	u_int				 x, y;
	JSAMPROW			 r;

	*size = 0;
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, size);
	c.image_width = w;
	c.image_height = h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	if (progressive)
		jpeg_simple_progression(&c);
	jpeg_start_compress(&c, TRUE);
	row = malloc((size_t)w * 3);
	for (y = 0; y < h; y++) {
		for (x = 0; x < w * 3; x++)
			row[x] = (uint8_t)(x / 7 + y);
		r = row;
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	free(row);
	return (buf);
}

Test(image, jpeg_scan_flood_refused)
{
	struct worker_image_info	 info;
	uint8_t				*p, *q;
	unsigned long			 size;
	size_t				 i, last = 0, seg, n;
	char				*out, *cause;
	int				 k;

	/* The last scan of a progressive JPEG, repeated 300 times. */
	p = test_image_jpeg(64, 64, 1, &size);
	for (i = 0; i + 1 < size; i++) {
		if (p[i] == 0xff && p[i + 1] == 0xda)
			last = i;
	}
	cr_assert_gt(last, 0);
	seg = size - 2 - last;
	q = malloc(size + seg * 300);
	memcpy(q, p, size - 2);
	n = size - 2;
	for (k = 0; k < 300; k++, n += seg)
		memcpy(q + n, p + last, seg);
	q[n++] = 0xff;
	q[n++] = 0xd9;
	out = test_image_fit("image/jpeg", q, n, &info, &cause);
	cr_assert_null(out);
	cr_assert_str_eq(cause, "not a valid JPEG: more than 256 progressive "
	    "scans");
	free(cause);
	free(q);
	free(p);
}

Test(image, jpeg_downscaled)
{
	struct jpeg_compress_struct	 c;
	struct jpeg_error_mgr		 e;
	struct worker_image_info	 info;
	unsigned char			*buf = NULL;
	unsigned long			 size = 0;
	uint8_t				*row;
	char				*out, *cause;
	u_int				 x, y;
	JSAMPROW			 r;

	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &size);
	c.image_width = 4000;
	c.image_height = 300;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_simple_progression(&c);
	jpeg_start_compress(&c, TRUE);
	row = malloc(4000 * 3);
	for (y = 0; y < 300; y++) {
		for (x = 0; x < 4000 * 3; x++)
			row[x] = (uint8_t)(x / 7 + y);
		r = row;
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	out = test_image_fit("image/jpeg", buf, size, &info, &cause);
	cr_assert_not_null(out, "%s", cause);
	cr_assert_eq(info.width, 4000);
	cr_assert_eq(info.sent_width, WORKER_IMAGE_MAX_SIDE);
	cr_assert_eq(info.sent_height, 118);
	cr_assert_str_eq(info.sent_mime, "image/jpeg");
	free(out);
	/* Cut short: libjpeg's error, through the longjmp. */
	out = test_image_fit("image/jpeg", buf, 300, &info, &cause);
	if (out == NULL) {
		cr_assert_not_null(strstr(cause, "not a valid JPEG"), "%s",
		    cause);
		free(cause);
	}
	free(out);
	free(row);
	free(buf);
}
