/* SPDX-License-Identifier: ISC */
/*
 * worker-image.c: PNG and JPEG outputs made fit for the model
 * (docs/decisions/017-images-for-the-model.md).  An image is decoded,
 * which also proves it is one (a client that forwards bytes that do not
 * decode may have the whole conversation refused), downscaled by area
 * averaging to WORKER_IMAGE_MAX_SIDE on its long side as its rows arrive,
 * and encoded again; the notebook keeps the original.  worker_image_show
 * is what worker-output.c calls for each image output it shapes.
 *
 * The bytes are a kernel's, so untrusted.  The header's size is checked
 * against WORKER_IMAGE_MAX_PIXELS before anything is allocated for
 * pixels; libpng and libjpeg errors longjmp back to one place, which
 * frees what the heap-held state records; their messages become the
 * cause, never stderr.
 */

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "worker.h"

#define WORKER_IMAGE_MAX_DIM	65535	/* either side (JPEG's own bound) */
#define WORKER_IMAGE_MAX_SCANS	256	/* progressive JPEG scans */
#define WORKER_IMAGE_JPEG_MEM	(256 * 1024 * 1024)
#define WORKER_IMAGE_CHUNK_MAX	(1024 * 1024)	/* a PNG ancillary chunk */
#define WORKER_IMAGE_QUALITY	85	/* JPEG re-encoding */

enum worker_image_kind {
	WORKER_IMAGE_PNG,
	WORKER_IMAGE_JPEG,
};

/* Area-averaging downscaler fed one 8-bit row at a time. */
struct worker_image_scale {
	u_int		 w, h, ow, oh, ch;
	u_int		*colmap;	/* input column -> its sum's offset */
	uint32_t	*colcnt;	/* inputs per output column */
	uint32_t	*sum;		/* ow * ch */
	u_int		 rows;		/* input rows in sum */
	u_int		 y;		/* next input row */
	u_int		 oy;		/* next output row */
	uint8_t		*out;		/* ow * oh * ch */
};

/*
 * Everything one decode or encode allocates, on the heap so a longjmp
 * loses none of it (locals changed after setjmp are indeterminate).
 */
struct worker_image_state {
	jmp_buf			 jmp;
	char			 msg[JMSG_LENGTH_MAX + 64];
	int			 too_large;	/* valid, over MAX_PIXELS */
	png_structp		 png;
	png_infop		 info;
	int			 png_write;
	struct jpeg_decompress_struct *jd;
	struct jpeg_compress_struct *jc;
	struct jpeg_error_mgr	 jerr;
	struct jpeg_progress_mgr jprog;
	uint8_t			*row;
	uint8_t			*full;		/* interlaced PNG */
	png_bytep		*rows;
	struct evbuffer		*pngout;
	unsigned char		*jpegout;
	unsigned long		 jpegsize;
	struct worker_image_scale sc;
};

static int	worker_image_kind(const char *, enum worker_image_kind *);
static uint8_t	*worker_image_b64_decode(const char *, size_t, size_t *);
static char	*worker_image_b64_encode(const uint8_t *, size_t, size_t *);
static void	worker_image_target(u_int, u_int, u_int *, u_int *);
static void	worker_image_scale_init(struct worker_image_scale *, u_int,
		    u_int, u_int, u_int, u_int);
static void	worker_image_scale_row(struct worker_image_scale *,
		    const uint8_t *);
static void	worker_image_state_free(struct worker_image_state *);
static void	worker_image_png_error(png_structp, png_const_charp);
static void	worker_image_png_warning(png_structp, png_const_charp);
static void	worker_image_png_read(png_structp, png_bytep, size_t);
static void	worker_image_png_write(png_structp, png_bytep, size_t);
static void	worker_image_png_flush(png_structp);
static void	worker_image_jpeg_error(j_common_ptr);
static void	worker_image_jpeg_message(j_common_ptr);
static void	worker_image_jpeg_progress(j_common_ptr);
static int	worker_image_decode_png(struct worker_image_state *,
		    const uint8_t *, size_t, int, struct worker_image_info *);
static int	worker_image_decode_jpeg(struct worker_image_state *,
		    const uint8_t *, size_t, int, struct worker_image_info *);
static uint8_t	*worker_image_encode_png(struct worker_image_state *,
		    const uint8_t *, u_int, u_int, u_int, size_t *);
static uint8_t	*worker_image_encode_jpeg(struct worker_image_state *,
		    const uint8_t *, u_int, u_int, u_int, size_t *);

/* The PNG reader's position in its input. */
struct worker_image_src {
	const uint8_t	*p;
	size_t		 len, off;
};

static int
worker_image_kind(const char *mime, enum worker_image_kind *kind)
{
	if (strcmp(mime, "image/png") == 0)
		*kind = WORKER_IMAGE_PNG;
	else if (strcmp(mime, "image/jpeg") == 0)
		*kind = WORKER_IMAGE_JPEG;
	else
		return (-1);
	return (0);
}

/* Does worker_image_fit take this type (PNG and JPEG)? */
int
worker_image_handles(const char *mime)
{
	enum worker_image_kind	kind;

	return (worker_image_kind(mime, &kind) == 0);
}

/* Bare base64 (no line breaks) to bytes; NULL if it is not.  Caller frees. */
static uint8_t *
worker_image_b64_decode(const char *s, size_t len, size_t *outlen)
{
	uint8_t	*out;
	int	 n;
	size_t	 pad = 0;

	if (len == 0 || len % 4 != 0 || len > INT_MAX)
		return (NULL);
	out = xmalloc(len / 4 * 3 + 1);
	if ((n = crypto_b64_decode(out, s, len)) < 0) {
		free(out);
		return (NULL);
	}
	/* crypto_b64_decode counts the padding as zero bytes. */
	if (s[len - 1] == '=')
		pad++;
	if (s[len - 2] == '=')
		pad++;
	*outlen = (size_t)n - pad;
	return (out);
}

/* Bytes to base64; caller frees. */
static char *
worker_image_b64_encode(const uint8_t *p, size_t len, size_t *outlen)
{
	char	*out;

	out = xmalloc((len + 2) / 3 * 4 + 1);
	*outlen = crypto_b64_encode(out, p, len);
	return (out);
}

/* The size sent for w x h: the long side at most WORKER_IMAGE_MAX_SIDE. */
static void
worker_image_target(u_int w, u_int h, u_int *ow, u_int *oh)
{
	uint64_t	long_side = w > h ? w : h;

	if (long_side <= WORKER_IMAGE_MAX_SIDE) {
		*ow = w;
		*oh = h;
		return;
	}
	*ow = (u_int)(((uint64_t)w * WORKER_IMAGE_MAX_SIDE + long_side / 2) /
	    long_side);
	*oh = (u_int)(((uint64_t)h * WORKER_IMAGE_MAX_SIDE + long_side / 2) /
	    long_side);
	if (*ow == 0)
		*ow = 1;
	if (*oh == 0)
		*oh = 1;
}

static void
worker_image_scale_init(struct worker_image_scale *sc, u_int w, u_int h,
    u_int ow, u_int oh, u_int ch)
{
	u_int	x;

	sc->w = w;
	sc->h = h;
	sc->ow = ow;
	sc->oh = oh;
	sc->ch = ch;
	sc->colmap = xcalloc(w, sizeof *sc->colmap);
	sc->colcnt = xcalloc(ow, sizeof *sc->colcnt);
	sc->sum = xcalloc((size_t)ow * ch, sizeof *sc->sum);
	sc->out = xmalloc((size_t)ow * oh * ch);
	for (x = 0; x < w; x++) {
		sc->colmap[x] = (u_int)((uint64_t)x * ow / w);
		sc->colcnt[sc->colmap[x]]++;
		sc->colmap[x] *= ch;
	}
}

/* One input row in; an output row out when the next input is another's. */
static void
worker_image_scale_row(struct worker_image_scale *sc, const uint8_t *row)
{
	uint32_t	*s, n;
	uint8_t		*o;
	u_int		 x, c, ox;

	if (sc->y >= sc->h)
		return;
	/* The hot loop: one pass over the row, the channel count fixed. */
	if (sc->ch == 3) {
		for (x = 0; x < sc->w; x++, row += 3) {
			s = sc->sum + sc->colmap[x];
			s[0] += row[0];
			s[1] += row[1];
			s[2] += row[2];
		}
	} else {
		for (x = 0; x < sc->w; x++, row += 4) {
			s = sc->sum + sc->colmap[x];
			s[0] += row[0];
			s[1] += row[1];
			s[2] += row[2];
			s[3] += row[3];
		}
	}
	sc->rows++;
	sc->y++;
	if (sc->y < sc->h && (uint64_t)sc->y * sc->oh / sc->h == sc->oy)
		return;
	o = sc->out + (size_t)sc->oy * sc->ow * sc->ch;
	for (ox = 0; ox < sc->ow; ox++) {
		n = sc->colcnt[ox] * sc->rows;
		for (c = 0; c < sc->ch; c++) {
			s = sc->sum + (size_t)ox * sc->ch + c;
			o[(size_t)ox * sc->ch + c] = (uint8_t)((*s + n / 2) / n);
			*s = 0;
		}
	}
	sc->rows = 0;
	sc->oy++;
}

static void
worker_image_state_free(struct worker_image_state *st)
{
	if (st->png != NULL) {
		if (st->png_write)
			png_destroy_write_struct(&st->png, &st->info);
		else
			png_destroy_read_struct(&st->png, &st->info, NULL);
	}
	if (st->jd != NULL) {
		jpeg_destroy_decompress(st->jd);
		free(st->jd);
	}
	if (st->jc != NULL) {
		jpeg_destroy_compress(st->jc);
		free(st->jc);
	}
	free(st->jpegout);
	if (st->pngout != NULL)
		evbuffer_free(st->pngout);
	free(st->row);
	free(st->full);
	free(st->rows);
	free(st->sc.colmap);
	free(st->sc.colcnt);
	free(st->sc.sum);
	free(st->sc.out);
	free(st);
}

static void
worker_image_png_error(png_structp png, png_const_charp msg)
{
	struct worker_image_state	*st = png_get_error_ptr(png);

	snprintf(st->msg, sizeof st->msg, "%s", msg);
	longjmp(st->jmp, 1);
}

/* Warnings (a bad CRC in an ancillary chunk, ...) are not the user's. */
static void
worker_image_png_warning(png_structp png, png_const_charp msg)
{
}

static void
worker_image_png_read(png_structp png, png_bytep out, size_t n)
{
	struct worker_image_src	*src = png_get_io_ptr(png);

	if (n > src->len - src->off)
		png_error(png, "the image ends early");
	memcpy(out, src->p + src->off, n);
	src->off += n;
}

static void
worker_image_png_write(png_structp png, png_bytep p, size_t n)
{
	struct worker_image_state	*st = png_get_io_ptr(png);

	evbuffer_add(st->pngout, p, n);
}

static void
worker_image_png_flush(png_structp png)
{
}

static void
worker_image_jpeg_error(j_common_ptr c)
{
	struct worker_image_state	*st = c->client_data;
	char				 buf[JMSG_LENGTH_MAX];

	c->err->format_message(c, buf);
	snprintf(st->msg, sizeof st->msg, "%s", buf);
	longjmp(st->jmp, 1);
}

/* libjpeg's warnings ("Corrupt JPEG data: ...") would go to stderr. */
static void
worker_image_jpeg_message(j_common_ptr c)
{
}

/* A progressive JPEG can ask for a scan per byte: cap them. */
static void
worker_image_jpeg_progress(j_common_ptr c)
{
	struct worker_image_state	*st = c->client_data;
	j_decompress_ptr		 d = (j_decompress_ptr)c;

	if (c->is_decompressor &&
	    d->input_scan_number > WORKER_IMAGE_MAX_SCANS) {
		snprintf(st->msg, sizeof st->msg, "more than %d progressive "
		    "scans", WORKER_IMAGE_MAX_SCANS);
		longjmp(st->jmp, 1);
	}
}

/* Decode a PNG through st->sc; with header_only, only info is set. */
static int
worker_image_decode_png(struct worker_image_state *st, const uint8_t *p,
    size_t len, int header_only, struct worker_image_info *info)
{
	struct worker_image_src	 src = { p, len, 0 };
	png_uint_32		 w, h, y;
	int			 depth, color, passes, pass;
	u_int			 ch, ow, oh;

	st->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, st,
	    worker_image_png_error, worker_image_png_warning);
	if (st->png == NULL)
		fatalx("png_create_read_struct failed");
	st->info = png_create_info_struct(st->png);
	if (st->info == NULL)
		fatalx("png_create_info_struct failed");
	if (setjmp(st->jmp) != 0)
		return (-1);
	/* Refused in the IHDR, before any row is allocated. */
	png_set_user_limits(st->png, WORKER_IMAGE_MAX_DIM,
	    WORKER_IMAGE_MAX_DIM);
	png_set_chunk_malloc_max(st->png, WORKER_IMAGE_CHUNK_MAX);
	png_set_chunk_cache_max(st->png, 128);
	png_set_read_fn(st->png, &src, worker_image_png_read);
	png_read_info(st->png, st->info);
	png_get_IHDR(st->png, st->info, &w, &h, &depth, &color, NULL, NULL,
	    NULL);
	info->width = w;
	info->height = h;
	if (header_only)
		return (0);
	if ((uint64_t)w * h > WORKER_IMAGE_MAX_PIXELS) {
		st->too_large = 1;
		return (-1);
	}
	/* Everything to 8-bit RGB, or RGBA when it has transparency. */
	png_set_expand(st->png);
	png_set_strip_16(st->png);
	png_set_gray_to_rgb(st->png);
	passes = png_set_interlace_handling(st->png);
	png_read_update_info(st->png, st->info);
	ch = png_get_channels(st->png, st->info);
	if (ch != 3 && ch != 4)
		png_error(st->png, "unexpected channel count");
	worker_image_target(w, h, &ow, &oh);
	/* Encoded again anyway: zlib's checksum of the original is moot. */
	if (ow != w || oh != h)
		png_set_option(st->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
	worker_image_scale_init(&st->sc, w, h, ow, oh, ch);
	if (passes == 1) {
		st->row = xmalloc((size_t)w * ch);
		for (y = 0; y < h; y++) {
			png_read_row(st->png, st->row, NULL);
			worker_image_scale_row(&st->sc, st->row);
		}
	} else {
		/* Adam7 needs the whole image; MAX_PIXELS bounds it. */
		st->full = xmalloc((size_t)w * h * ch);
		st->rows = xcalloc(h, sizeof *st->rows);
		for (y = 0; y < h; y++)
			st->rows[y] = st->full + (size_t)y * w * ch;
		for (pass = 0; pass < passes; pass++) {
			for (y = 0; y < h; y++)
				png_read_row(st->png, st->rows[y], NULL);
		}
		for (y = 0; y < h; y++)
			worker_image_scale_row(&st->sc, st->rows[y]);
	}
	png_read_end(st->png, NULL);
	return (0);
}

/* Decode a JPEG through st->sc, letting libjpeg shrink by 1/2..1/8 first. */
static int
worker_image_decode_jpeg(struct worker_image_state *st, const uint8_t *p,
    size_t len, int header_only, struct worker_image_info *info)
{
	struct jpeg_decompress_struct	*d;
	u_int				 ow, oh, ch, x, denom;
	JSAMPROW			 r;

	st->jd = d = xcalloc(1, sizeof *d);
	d->err = jpeg_std_error(&st->jerr);
	st->jerr.error_exit = worker_image_jpeg_error;
	st->jerr.output_message = worker_image_jpeg_message;
	d->client_data = st;
	if (setjmp(st->jmp) != 0)
		return (-1);
	jpeg_create_decompress(d);
	d->mem->max_memory_to_use = WORKER_IMAGE_JPEG_MEM;
	st->jprog.progress_monitor = worker_image_jpeg_progress;
	d->progress = &st->jprog;
	jpeg_mem_src(d, p, (unsigned long)len);
	jpeg_read_header(d, TRUE);
	info->width = d->image_width;
	info->height = d->image_height;
	if (header_only)
		return (0);
	if ((uint64_t)d->image_width * d->image_height >
	    WORKER_IMAGE_MAX_PIXELS) {
		st->too_large = 1;
		return (-1);
	}
	if (d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK)
		d->out_color_space = JCS_CMYK;
	else
		d->out_color_space = JCS_RGB;
	worker_image_target(d->image_width, d->image_height, &ow, &oh);
	for (denom = 8; denom > 1; denom /= 2) {
		if ((d->image_width + denom - 1) / denom >= ow &&
		    (d->image_height + denom - 1) / denom >= oh)
			break;
	}
	d->scale_num = 1;
	d->scale_denom = denom;
	jpeg_start_decompress(d);
	ch = (u_int)d->output_components;
	if (ch != 3 && ch != 4)
		ERREXIT(d, JERR_BAD_J_COLORSPACE);
	if (ow > d->output_width)
		ow = d->output_width;
	if (oh > d->output_height)
		oh = d->output_height;
	worker_image_scale_init(&st->sc, d->output_width, d->output_height,
	    ow, oh, 3);
	st->row = xmalloc((size_t)d->output_width * ch);
	while (d->output_scanline < d->output_height) {
		r = st->row;
		if (jpeg_read_scanlines(d, &r, 1) != 1)
			ERREXIT(d, JERR_INPUT_EMPTY);
		if (ch == 4) {
			/* Adobe CMYK is stored inverted: R = C * K / 255. */
			for (x = 0; x < d->output_width; x++) {
				st->row[x * 3] = (uint8_t)(st->row[x * 4] *
				    st->row[x * 4 + 3] / 255);
				st->row[x * 3 + 1] = (uint8_t)(
				    st->row[x * 4 + 1] * st->row[x * 4 + 3] /
				    255);
				st->row[x * 3 + 2] = (uint8_t)(
				    st->row[x * 4 + 2] * st->row[x * 4 + 3] /
				    255);
			}
		}
		worker_image_scale_row(&st->sc, st->row);
	}
	jpeg_finish_decompress(d);
	return (0);
}

/* RGB(A) pixels as a PNG; NULL (st->msg set) on failure.  Caller frees. */
static uint8_t *
worker_image_encode_png(struct worker_image_state *st, const uint8_t *px,
    u_int w, u_int h, u_int ch, size_t *len)
{
	uint8_t	*out;
	u_int	 y;

	st->png_write = 1;
	st->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, st,
	    worker_image_png_error, worker_image_png_warning);
	if (st->png == NULL)
		fatalx("png_create_write_struct failed");
	st->info = png_create_info_struct(st->png);
	if (st->info == NULL)
		fatalx("png_create_info_struct failed");
	st->pngout = evbuffer_new();
	if (setjmp(st->jmp) != 0)
		return (NULL);
	png_set_write_fn(st->png, st, worker_image_png_write,
	    worker_image_png_flush);
	png_set_IHDR(st->png, st->info, w, h, 8, ch == 4 ?
	    PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	    PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(st->png, st->info);
	for (y = 0; y < h; y++)
		png_write_row(st->png, px + (size_t)y * w * ch);
	png_write_end(st->png, NULL);
	*len = evbuffer_get_length(st->pngout);
	out = xmalloc(*len + 1);
	evbuffer_remove(st->pngout, out, *len);
	return (out);
}

/* RGB(A) pixels as a JPEG, alpha over white.  Caller frees. */
static uint8_t *
worker_image_encode_jpeg(struct worker_image_state *st, const uint8_t *px,
    u_int w, u_int h, u_int ch, size_t *len)
{
	struct jpeg_compress_struct	*c;
	uint8_t				*out;
	const uint8_t			*s;
	u_int				 x, y, k, a;
	JSAMPROW			 r;

	st->jc = c = xcalloc(1, sizeof *c);
	c->err = jpeg_std_error(&st->jerr);
	st->jerr.error_exit = worker_image_jpeg_error;
	st->jerr.output_message = worker_image_jpeg_message;
	c->client_data = st;
	st->row = xmalloc((size_t)w * 3);
	if (setjmp(st->jmp) != 0)
		return (NULL);
	jpeg_create_compress(c);
	jpeg_mem_dest(c, &st->jpegout, &st->jpegsize);
	c->image_width = w;
	c->image_height = h;
	c->input_components = 3;
	c->in_color_space = JCS_RGB;
	jpeg_set_defaults(c);
	jpeg_set_quality(c, WORKER_IMAGE_QUALITY, TRUE);
	jpeg_start_compress(c, TRUE);
	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			s = px + ((size_t)y * w + x) * ch;
			a = ch == 4 ? s[3] : 255;
			for (k = 0; k < 3; k++)
				st->row[x * 3 + k] = (uint8_t)((s[k] * a +
				    255 * (255 - a) + 127) / 255);
		}
		r = st->row;
		jpeg_write_scanlines(c, &r, 1);
	}
	jpeg_finish_compress(c);
	*len = st->jpegsize;
	out = xmalloc(*len + 1);
	memcpy(out, st->jpegout, *len);
	return (out);
}

/*
 * The width and height of an image from its header alone (for one that is
 * not sent).  0 on success.
 */
int
worker_image_probe(const char *mime, const char *b64, size_t len,
    struct worker_image_info *info)
{
	struct worker_image_state	*st;
	enum worker_image_kind		 kind;
	uint8_t				*bytes;
	size_t				 n;
	int				 r;

	memset(info, 0, sizeof *info);
	if (worker_image_kind(mime, &kind) != 0 ||
	    (bytes = worker_image_b64_decode(b64, len, &n)) == NULL)
		return (-1);
	st = xcalloc(1, sizeof *st);
	if (kind == WORKER_IMAGE_PNG)
		r = worker_image_decode_png(st, bytes, n, 1, info);
	else
		r = worker_image_decode_jpeg(st, bytes, n, 1, info);
	worker_image_state_free(st);
	free(bytes);
	return (r);
}

/*
 * An image for the model: b64 (bare base64 of a PNG or JPEG) decoded,
 * downscaled to WORKER_IMAGE_MAX_SIDE if larger, encoded again if it was
 * downscaled or is over max_b64 (as PNG if it was one and that fits, else
 * as JPEG).  Returns the base64 to send, its mime type and both sizes in
 * info; NULL with *cause (what is wrong with the image) if it cannot be
 * sent.  Caller frees both.
 */
char *
worker_image_fit(const char *mime, const char *b64, size_t len,
    size_t max_b64, struct worker_image_info *info, char **cause)
{
	struct worker_image_state	*st = NULL, *enc;
	enum worker_image_kind		 kind;
	uint8_t				*bytes = NULL, *out = NULL;
	char				*s = NULL;
	size_t				 n, outlen;
	int				 r;

	memset(info, 0, sizeof *info);
	*cause = NULL;
	if (worker_image_kind(mime, &kind) != 0) {
		xasprintf(cause, "%s is not decoded here", mime);
		return (NULL);
	}
	if ((bytes = worker_image_b64_decode(b64, len, &n)) == NULL) {
		xasprintf(cause, "not valid base64");
		return (NULL);
	}
	st = xcalloc(1, sizeof *st);
	if (kind == WORKER_IMAGE_PNG)
		r = worker_image_decode_png(st, bytes, n, 0, info);
	else
		r = worker_image_decode_jpeg(st, bytes, n, 0, info);
	if (r != 0 && st->too_large)
		xasprintf(cause, "over %u megapixels",
		    WORKER_IMAGE_MAX_PIXELS / 1000000);
	else if (r != 0)
		xasprintf(cause, "not a valid %s: %s", kind ==
		    WORKER_IMAGE_PNG ? "PNG" : "JPEG", st->msg);
	if (r != 0)
		goto out;
	info->sent_width = st->sc.ow;
	info->sent_height = st->sc.oh;
	info->sent_mime = kind == WORKER_IMAGE_PNG ? "image/png" :
	    "image/jpeg";
	if (info->sent_width == info->width &&
	    info->sent_height == info->height && len <= max_b64) {
		/* Fits as it is: send the kernel's bytes. */
		s = xmalloc(len + 1);
		memcpy(s, b64, len);
		s[len] = '\0';
		goto out;
	}
	if (kind == WORKER_IMAGE_PNG) {
		enc = xcalloc(1, sizeof *enc);
		out = worker_image_encode_png(enc, st->sc.out, st->sc.ow,
		    st->sc.oh, st->sc.ch, &outlen);
		worker_image_state_free(enc);
		if (out != NULL && (outlen + 2) / 3 * 4 > max_b64) {
			free(out);
			out = NULL;
		}
	}
	if (out == NULL) {
		info->sent_mime = "image/jpeg";
		enc = xcalloc(1, sizeof *enc);
		out = worker_image_encode_jpeg(enc, st->sc.out, st->sc.ow,
		    st->sc.oh, st->sc.ch, &outlen);
		if (out == NULL)
			xasprintf(cause, "encoding failed: %s", enc->msg);
		worker_image_state_free(enc);
		if (out == NULL)
			goto out;
	}
	s = worker_image_b64_encode(out, outlen, &n);
	if (n > max_b64) {
		xasprintf(cause, "%zu bytes of base64 even at %ux%u",
		    n, st->sc.ow, st->sc.oh);
		free(s);
		s = NULL;
	}
out:
	free(out);
	free(bytes);
	worker_image_state_free(st);
	return (s);
}

/*
 * An output's image (s, bare base64) for the model: an MCP image block
 * within b's per-result limits (none unless send), PNG and JPEG checked
 * and downscaled (worker_image_fit), or NULL.  The text names it in
 * place: type, size (and the size sent), cell, or why it is not shown.
 */
struct json_object *
worker_image_show(struct worker_budget *b, int send, const char *mime,
    const char *s, size_t len, struct evbuffer *text)
{
	struct worker_image_info	 info;
	struct json_object		*blk = NULL;
	char				*data = NULL, *cause = NULL;
	const char			*sent = mime;
	size_t				 left;
	int				 capped = 0;

	memset(&info, 0, sizeof info);
	left = WORKER_MAX_IMAGE_TOTAL - b->image_bytes;
	if (left > WORKER_MAX_IMAGE_B64)
		left = WORKER_MAX_IMAGE_B64;
	if (!send)
		worker_image_probe(mime, s, len, &info);
	else if (b->images >= WORKER_MAX_IMAGES || left == 0) {
		worker_image_probe(mime, s, len, &info);
		xasprintf(&cause, "at most %d images, %d KiB, a result",
		    WORKER_MAX_IMAGES, WORKER_MAX_IMAGE_TOTAL / 1024);
		capped = 1;
	} else if (worker_image_handles(mime)) {
		if ((data = worker_image_fit(mime, s, len, left, &info,
		    &cause)) != NULL)
			sent = info.sent_mime;
	} else if (len > 0 && len <= left)
		data = xstrdup(s);
	else {
		xasprintf(&cause, "%zu bytes of base64, over the %zu left",
		    len, left);
		capped = 1;
	}

	evbuffer_add_printf(text, "[%s", mime);
	if (info.width > 0) {
		evbuffer_add_printf(text, " %ux%u", info.width, info.height);
		if (data != NULL && (info.sent_width != info.width ||
		    info.sent_height != info.height))
			evbuffer_add_printf(text, " \xe2\x86\x92 %ux%u",
			    info.sent_width, info.sent_height);
	} else
		evbuffer_add_printf(text, ", %zu bytes base64", len);
	if (data != NULL && strcmp(sent, mime) != 0)
		evbuffer_add_printf(text, " as %s", sent);
	if (b->cell_id != NULL)
		evbuffer_add_printf(text, ", cell %s", b->cell_id);
	/* What was transformed, and where the original is. */
	if (data != NULL && info.width > 0 &&
	    (info.sent_width != info.width || info.sent_height != info.height))
		evbuffer_add_printf(text, "; downscaled for the model, the "
		    "notebook keeps the original");
	if (cause != NULL) {
		evbuffer_add_printf(text, "; not shown: %s", cause);
		if (capped && b->cell_id != NULL)
			evbuffer_add_printf(text, "; inspect_notebook "
			    "cell_ids [\"%s\"] shows this cell's", b->cell_id);
	}
	evbuffer_add(text, "]\n", 2);

	if (data != NULL) {
		blk = json_object_new_object();
		json_object_object_add(blk, "type",
		    json_object_new_string("image"));
		json_object_object_add(blk, "data",
		    json_object_new_string(data));
		json_object_object_add(blk, "mimeType",
		    json_object_new_string(sent));
		b->images++;
		b->image_bytes += strlen(data);
	}
	free(data);
	free(cause);
	return (blk);
}
