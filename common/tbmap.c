/* SPDX-License-Identifier: ISC */
/*
 * tbmap.c: an error's frames mapped to the cells that ran them
 * (docs/decisions/070).  A Python kernel names a cell's frame by its
 * execution count (IPython's "Cell In[3], line 2", "Input In [3]",
 * "<ipython-input-3-...>") or by the file its compiler gave the code:
 * ipykernel's and xeus-python's /tmp/ipykernel_PID/H.py, H the murmur2
 * of the code with a fixed seed (ipykernel/compiler.py).  The agent
 * knows which cell ran with which count and code in this kernel's life,
 * so both resolve to a cell_id exactly; a frame that does not resolve
 * to exactly one cell keeps its text and has no cell_id.
 *
 * An IRkernel traceback has no lines of the cells ("1. f()", "2.
 * stop(\"boom\")   # at line 2 of file <text>": every cell is <text>):
 * its first frame is the call the running cell made, the rest keep
 * their text.
 *
 * The result: {frames: [{cell_id, line, code, name} | {file, line,
 * name, code} | {text}], library_frames}; frames of an exception that
 * caused or was being handled by the one raised say chained: true.  Of
 * more than TBMAP_FRAMES_MAX frames, the middle ones are counted in
 * frames_omitted.
 */

#include <stdlib.h>
#include <string.h>

#include "common.h"

#define TBMAP_HEAD	"Traceback (most recent call last)"

/* Frames kept of a deep stack: the first HEAD and the rest of MAX last. */
#define TBMAP_FRAMES_MAX	64
#define TBMAP_FRAMES_HEAD	16

/* Frame kinds, by what names the code. */
enum tbmap_kind {
	TBMAP_COUNT,		/* a cell by execution count */
	TBMAP_HASH,		/* a cell by its compiler's file name */
	TBMAP_FILE,		/* a file of the user's */
	TBMAP_LIBRARY,		/* a file of an installed package */
	TBMAP_R			/* an IRkernel frame */
};

struct tbmap_frame {
	enum tbmap_kind	 kind;
	int64_t		 count;
	uint32_t	 hash;
	int64_t		 line;		/* 0: not known */
	char		*name;
	char		*file;
	char		*header;
	char		*code;
	int		 chained;
	int		 syntax;	/* a SyntaxError's: code, then ^ */
};

struct tbmap_state {
	struct tbmap_frame	*v;
	size_t			 n;
	int			 in_frame;
	int			 python;	/* a python frame header seen */
	int			 message;	/* in "Name: message" */
	int			 r;		/* after IRkernel's "Traceback:" */
};

uint32_t
tbmap_murmur2(const void *data, size_t len, uint32_t seed)
{
	const unsigned char	*p = data;
	const uint32_t		 m = 0x5bd1e995U;
	uint32_t		 h = seed ^ (uint32_t)len, k;
	size_t			 i, end = len & ~(size_t)3;

	/* As ipykernel/compiler.py's murmur2_x86, byte for byte. */
	for (i = 0; i < end; i += 4) {
		k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
		    (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	switch (len & 3) {
	case 3:
		h ^= (uint32_t)p[end + 2] << 16;
		/* FALLTHROUGH */
	case 2:
		h ^= (uint32_t)p[end + 1] << 8;
		/* FALLTHROUGH */
	case 1:
		h ^= (uint32_t)p[end];
		h *= m;
		break;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return (h);
}

static int
tbmap_starts(const char *s, size_t len, const char *p)
{
	size_t	n = strlen(p);

	return (len >= n && memcmp(s, p, n) == 0);
}

static const char *
tbmap_find(const char *s, size_t len, const char *needle)
{
	size_t	n = strlen(needle), i;

	for (i = 0; i + n <= len; i++) {
		if (memcmp(s + i, needle, n) == 0)
			return (s + i);
	}
	return (NULL);
}

/* Digits at s as a number; *end past them.  -1 if none. */
static int64_t
tbmap_num(const char *s, const char *e, const char **end)
{
	int64_t	v = 0;
	int	any = 0;

	while (s < e && *s >= '0' && *s <= '9' && v < INT64_MAX / 10 - 10) {
		v = v * 10 + (*s++ - '0');
		any = 1;
	}
	if (end != NULL)
		*end = s;
	return (any ? v : -1);
}

static char *
tbmap_dup(const char *s, size_t len)
{
	char	*p;

	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

/* The name after ", in " or " in " up to "(" or the end. */
static char *
tbmap_name(const char *s, size_t len, const char *after)
{
	const char	*p, *e = s + len, *q;

	if ((p = tbmap_find(s, len, after)) == NULL)
		return (NULL);
	p += strlen(after);
	for (q = p; q < e && *q != '('; q++)
		;
	while (q > p && q[-1] == ' ')
		q--;
	/* Module level is no function. */
	if (q == p || *p == '<')
		return (NULL);
	return (tbmap_dup(p, (size_t)(q - p)));
}

/* A cell's compiler file, ipykernel_PID/H.py or xpython_PID/H.py. */
static int
tbmap_tmpfile(const char *p, size_t plen, uint32_t *hash)
{
	const char	*q, *e = p + plen, *end;
	int64_t		 v;

	if ((q = tbmap_find(p, plen, "/ipykernel_")) != NULL)
		q += 11;
	else if ((q = tbmap_find(p, plen, "/xpython_")) != NULL)
		q += 9;
	else
		return (0);
	if (tbmap_num(q, e, &end) < 0 || end >= e || *end != '/')
		return (0);
	v = tbmap_num(end + 1, e, &end);
	if (v < 0 || v > UINT32_MAX || (size_t)(e - end) != 3 ||
	    memcmp(end, ".py", 3) != 0)
		return (0);
	*hash = (uint32_t)v;
	return (1);
}

/* An installed package's file, or a compiled module's relative one. */
static int
tbmap_library(const char *p, size_t plen)
{
	if (plen == 0 || *p == '<')
		return (0);
	if (*p != '/')
		return (1);
	return (tbmap_find(p, plen, "/site-packages/") != NULL ||
	    tbmap_find(p, plen, "/dist-packages/") != NULL ||
	    tbmap_find(p, plen, "/lib/python") != NULL);
}

/* A file frame: path, line and name into f. */
static void
tbmap_file(struct tbmap_frame *f, const char *p, size_t plen, int64_t line)
{
	if (tbmap_tmpfile(p, plen, &f->hash))
		f->kind = TBMAP_HASH;
	else if (tbmap_library(p, plen))
		f->kind = TBMAP_LIBRARY;
	else {
		f->kind = TBMAP_FILE;
		f->file = tbmap_dup(p, plen);
	}
	f->line = line > 0 ? line : 0;
}

/* Parse a frame header into f; 0 if this line is none. */
static int
tbmap_header(const char *s, size_t len, struct tbmap_frame *f)
{
	const char	*e = s + len, *p, *q, *end;
	int64_t		 line;

	memset(f, 0, sizeof *f);
	if (tbmap_starts(s, len, "Cell In") ||
	    tbmap_starts(s, len, "Input In")) {
		/* "Cell In[3], line 2, in f()", "Input In [3], in f()" */
		p = s + 8;
		while (p < e && (*p == ' ' || *p == '['))
			p++;
		if ((f->count = tbmap_num(p, e, &end)) < 0 || end >= e ||
		    *end != ']')
			return (0);
		f->kind = TBMAP_COUNT;
		if ((q = tbmap_find(s, len, ", line ")) != NULL)
			f->line = tbmap_num(q + 7, e, NULL);
		else if ((q = tbmap_find(s, len, "<cell line: ")) != NULL)
			f->line = tbmap_num(q + 12, e, NULL);
		if (f->line < 0)
			f->line = 0;
		f->name = tbmap_name(s, len, ", in ");
	} else if (tbmap_starts(s, len, "<ipython-input-")) {
		/* IPython 7: "<ipython-input-3-5f0c...> in f()" */
		if ((f->count = tbmap_num(s + 15, e, &end)) < 0)
			return (0);
		f->kind = TBMAP_COUNT;
		f->name = tbmap_name(s, len, "> in ");
	} else if (tbmap_starts(s, len, "  File \"")) {
		/* Python's '  File "PATH", line 2, in f' */
		p = s + 8;
		if ((q = memchr(p, '"', (size_t)(e - p))) == NULL)
			return (0);
		line = 0;
		if ((end = tbmap_find(q, (size_t)(e - q), ", line ")) != NULL)
			line = tbmap_num(end + 7, e, NULL);
		tbmap_file(f, p, (size_t)(q - p), line);
		f->name = tbmap_name(q, (size_t)(e - q), ", in ");
	} else if (tbmap_starts(s, len, "File ")) {
		/* IPython 8's "File PATH:LINE, in f" */
		p = s + 5;
		if ((q = tbmap_find(p, (size_t)(e - p), ", in ")) == NULL)
			q = e;
		for (end = q; end > p && end[-1] != ':'; end--)
			;
		if (end > p && tbmap_num(end, q, NULL) >= 0) {
			line = tbmap_num(end, q, NULL);
			tbmap_file(f, p, (size_t)(end - 1 - p), line);
		} else
			tbmap_file(f, p, (size_t)(q - p), 0);
		f->name = tbmap_name(s, len, ", in ");
	} else
		return (0);
	f->header = tbmap_dup(s, len);
	return (1);
}

/*
 * A line of a frame's body with the code: IPython's "----> 2     return
 * x" (its line number too) or Python's "    return x".
 */
static void
tbmap_body(struct tbmap_frame *f, const char *s, size_t len)
{
	const char	*e = s + len, *p = s, *end;
	int64_t		 n;

	if (f->code != NULL)
		return;
	if (*p == '-') {
		while (p < e && *p == '-')
			p++;
		if (p >= e || *p != '>')
			return;
		p++;
		while (p < e && *p == ' ')
			p++;
		if ((n = tbmap_num(p, e, &end)) < 0)
			return;
		if (f->line == 0)
			f->line = n;
		p = end;
	} else if (!tbmap_starts(s, len, "    ") || (!f->syntax &&
	    (f->header == NULL || f->header[0] != ' ')))
		return;		/* IPython numbers its lines, and marks one */
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\r'))
		e--;
	if (e > p && !(e - p == 1 && *p == '^'))
		f->code = tbmap_dup(p, (size_t)(e - p));
}

static void
tbmap_push(struct tbmap_state *st, struct tbmap_frame *f)
{
	st->v = xreallocarray(st->v, st->n + 1, sizeof *st->v);
	st->v[st->n++] = *f;
}

/* An IRkernel frame, "2. f()   # at line 1 of file <text>". */
static int
tbmap_r(const char *s, size_t len, struct tbmap_frame *f)
{
	const char	*e = s + len, *end;

	memset(f, 0, sizeof *f);
	if (tbmap_num(s, e, &end) < 0 || end + 1 >= e || end[0] != '.' ||
	    end[1] != ' ')
		return (0);
	f->kind = TBMAP_R;
	f->header = tbmap_dup(s, len);
	end += 2;
	f->code = tbmap_dup(end, (size_t)(e - end));
	/* The call alone, without where R found its source. */
	if ((end = tbmap_find(f->code, strlen(f->code), "   # at line "))
	    != NULL)
		f->code[end - f->code] = '\0';
	return (1);
}

/*
 * One line.  After a frame, a line that is none of the traceback's own
 * ("NameError: ...") starts the exception's message, whose lines are
 * never frames (a message may quote a formatted traceback) until the
 * chain's next exception.
 */
static void
tbmap_line(struct tbmap_state *st, const char *s, size_t len)
{
	struct tbmap_frame	 f;
	size_t			 i;
	int			 syntax = 0;

	if (tbmap_starts(s, len, "The above exception was") ||
	    tbmap_starts(s, len, "During handling of the above exception")) {
		for (i = 0; i < st->n; i++)
			st->v[i].chained = 1;
		st->in_frame = st->message = 0;
		return;
	}
	if (st->message)
		return;
	/* A SyntaxError's frame is indented: "  Cell In[1], line 1". */
	if (tbmap_starts(s, len, "  Cell In") ||
	    tbmap_starts(s, len, "  Input In")) {
		s += 2;
		len -= 2;
		syntax = 1;
	}
	if (!st->r && tbmap_header(s, len, &f)) {
		f.syntax = syntax;
		tbmap_push(st, &f);
		st->in_frame = 1;
		st->python = 1;
		return;
	}
	if (!st->python && len == 10 && memcmp(s, "Traceback:", 10) == 0) {
		st->r = 1;
		return;
	}
	if (st->r) {
		if (tbmap_r(s, len, &f))
			tbmap_push(st, &f);
		return;
	}
	if (st->in_frame && len > 0 && (s[0] == ' ' || s[0] == '-' ||
	    s[0] == '\t' || (s[0] >= '0' && s[0] <= '9'))) {
		tbmap_body(&st->v[st->n - 1], s, len);
		return;
	}
	st->in_frame = 0;
	/*
	 * Indented, outside a frame: IPython's "[... skipping similar
	 * frames: f at line 2 (2970 times)]", Python's "[Previous line
	 * repeated 996 more times]".  The frames go on after it.
	 */
	if (len > 0 && (s[0] == ' ' || s[0] == '\t'))
		return;
	for (i = 0; i < len && s[i] == '-'; i++)
		;
	/* Python's "Traceback (...):" and IPython's "NameError  Tr...)". */
	if (i == len || tbmap_starts(s, len, TBMAP_HEAD) ||
	    (len >= sizeof TBMAP_HEAD - 1 && memcmp(s + len -
	    (sizeof TBMAP_HEAD - 1), TBMAP_HEAD, sizeof TBMAP_HEAD - 1) == 0))
		return;
	st->message = st->n > 0;
}

/* s without ANSI escapes (CSI sequences), a new string. */
static char *
tbmap_plain(const char *s, size_t len, size_t *out)
{
	char	*p;
	size_t	 i, k = 0;

	p = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] == '\033' && i + 1 < len && s[i + 1] == '[') {
			for (i += 2; i < len && !(s[i] >= 0x40 &&
			    s[i] <= 0x7e); i++)
				;
			continue;
		}
		p[k++] = s[i];
	}
	p[k] = '\0';
	*out = k;
	return (p);
}

/* The one cell that ran with this count or code hash, else NULL. */
static const char *
tbmap_resolve(const struct tbmap_frame *f, const struct tbmap_cell *cells,
    size_t n)
{
	const char	*id = NULL;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (f->kind == TBMAP_COUNT ? cells[i].count != f->count :
		    cells[i].hash != f->hash)
			continue;
		if (cells[i].cell_id == NULL || *cells[i].cell_id == '\0')
			return (NULL);
		/* The same code run from two cells: which is not known. */
		if (id != NULL && strcmp(id, cells[i].cell_id) != 0)
			return (NULL);
		id = cells[i].cell_id;
	}
	return (id);
}

static void
tbmap_add_str(struct json_object *o, const char *key, const char *v)
{
	if (v != NULL)
		json_object_object_add(o, key, json_object_new_string(v));
}

/*
 * The frames of the traceback lines tb (an array of strings), resolved
 * with the cells that ran in this kernel (cells[n]); running is the cell
 * whose run raised.  NULL when tb has no frame.
 */
struct json_object *
tbmap_frames(struct json_object *tb, const struct tbmap_cell *cells,
    size_t n, const char *running)
{
	struct tbmap_state	 st;
	struct tbmap_frame	*f;
	struct json_object	*out, *frames, *o, *e;
	const char		*s, *nl, *id;
	char			*clean;
	size_t			 i, len, clen, k;
	int64_t			 library = 0, r = 0, omitted = 0;
	size_t			 user;

	if (tb == NULL || !json_object_is_type(tb, json_type_array))
		return (NULL);
	memset(&st, 0, sizeof st);
	for (i = 0; i < json_object_array_length(tb); i++) {
		e = json_object_array_get_idx(tb, i);
		if (!json_object_is_type(e, json_type_string))
			continue;
		clean = tbmap_plain(json_object_get_string(e),
		    (size_t)json_object_get_string_len(e), &clen);
		for (s = clean, len = clen; len > 0; s += k, len -= k) {
			nl = memchr(s, '\n', len);
			k = nl != NULL ? (size_t)(nl - s) + 1 : len;
			tbmap_line(&st, s, nl != NULL ? k - 1 : k);
		}
		free(clean);
		/* An element ends a frame (IPython gives one each). */
		st.in_frame = 0;
	}
	if (st.n == 0) {
		free(st.v);
		return (NULL);
	}
	for (i = 0, user = 0; i < st.n; i++)
		user += st.v[i].kind != TBMAP_LIBRARY;
	frames = json_object_new_array();
	for (i = 0, k = 0; i < st.n; i++) {
		f = &st.v[i];
		if (f->kind == TBMAP_LIBRARY) {
			library++;
			goto next;
		}
		/* A deep stack keeps its outer and its inner frames. */
		if (user > TBMAP_FRAMES_MAX && k++ >= TBMAP_FRAMES_HEAD &&
		    k <= user - (TBMAP_FRAMES_MAX - TBMAP_FRAMES_HEAD)) {
			omitted++;
			goto next;
		}
		o = json_object_new_object();
		id = NULL;
		if (f->kind == TBMAP_COUNT || f->kind == TBMAP_HASH)
			id = tbmap_resolve(f, cells, n);
		else if (f->kind == TBMAP_R && r++ == 0)
			id = running;	/* the call the cell made */
		if (id != NULL) {
			json_object_object_add(o, "cell_id",
			    json_object_new_string(id));
			if (f->line > 0)
				json_object_object_add(o, "line",
				    json_object_new_int64(f->line));
			else
				json_object_object_add(o, "line", NULL);
		} else if (f->kind == TBMAP_FILE) {
			tbmap_add_str(o, "file", f->file);
			if (f->line > 0)
				json_object_object_add(o, "line",
				    json_object_new_int64(f->line));
		} else
			tbmap_add_str(o, "text", f->header);
		tbmap_add_str(o, "code", f->code);
		tbmap_add_str(o, "name", f->name);
		if (f->chained)
			json_object_object_add(o, "chained",
			    json_object_new_boolean(1));
		json_object_array_add(frames, o);
next:
		free(f->name);
		free(f->file);
		free(f->header);
		free(f->code);
	}
	free(st.v);
	out = json_object_new_object();
	json_object_object_add(out, "frames", frames);
	json_object_object_add(out, "library_frames",
	    json_object_new_int64(library));
	if (omitted > 0)
		json_object_object_add(out, "frames_omitted",
		    json_object_new_int64(omitted));
	return (out);
}
