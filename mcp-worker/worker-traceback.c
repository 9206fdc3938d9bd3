/* SPDX-License-Identifier: ISC */
/*
 * worker-traceback.c: a traceback as a model reads it.  Of a pandas
 * KeyError's 1,876 characters, ~1,700 are frames inside pandas; what an
 * agent fixes is in its own cells.  So, unless full output was asked for,
 * each run of library frames is folded into one line that says how many
 * frames of which packages went and how to get them, and the frames of
 * the user's code, the chain of exceptions and the last line stay.
 *
 * A frame is a piece of the traceback that starts with a frame header:
 * IPython's "File PATH:LINE, in f" / "Cell In[3], line 1" / "Input In
 * [3]" / "<ipython-input-...>", or Python's '  File "PATH", line N, in f'.
 * It is the user's when it is a cell (or a cell's temporary file) or a
 * file outside the Python installation; a library's when its path is in
 * site-packages, dist-packages or a lib/pythonX.Y directory, or relative
 * (a compiled module's .pyx/.pxi).  Lines outside frames (headers, the
 * chain's "The above exception ...", the "Name: message" line) stay.
 */

#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define TB_HEAD	"Traceback (most recent call last)"

/* Cells an error's "at cell" line names at most, innermost first. */
#define WORKER_WHERE_CELLS	6

struct worker_traceback {
	struct evbuffer	*out;		/* the folded text */
	struct evbuffer	*frame;		/* the frame being read */
	int		 in_frame;
	int		 user;		/* the frame is the user's */
	size_t		 folded;	/* library frames in the run */
	size_t		 total;		/* library frames folded in all */
	size_t		 runs;		/* fold lines */
	char		 pkgs[160];	/* their packages, comma-separated */
};

static int	worker_traceback_header(const char *, size_t);
static int	worker_traceback_user(const char *, size_t);
static void	worker_traceback_package(struct worker_traceback *,
		    const char *, size_t);
static void	worker_traceback_end_frame(struct worker_traceback *);
static void	worker_traceback_flush(struct worker_traceback *);
static void	worker_traceback_line(struct worker_traceback *, const char *,
		    size_t);

static int
worker_traceback_starts(const char *s, size_t len, const char *p)
{
	size_t	n = strlen(p);

	return (len >= n && memcmp(s, p, n) == 0);
}

/* Does this line start a frame? */
static int
worker_traceback_header(const char *s, size_t len)
{
	return (worker_traceback_starts(s, len, "File ") ||
	    worker_traceback_starts(s, len, "  File \"") ||
	    worker_traceback_starts(s, len, "Cell In") ||
	    worker_traceback_starts(s, len, "Input In [") ||
	    worker_traceback_starts(s, len, "<ipython-input-"));
}

/* The path of a frame's header, or NULL for a cell. */
static const char *
worker_traceback_path(const char *s, size_t len, size_t *plen)
{
	const char	*p, *e;

	if (worker_traceback_starts(s, len, "  File \"")) {
		p = s + 8;
		e = memchr(p, '"', len - 8);
	} else if (worker_traceback_starts(s, len, "File ")) {
		p = s + 5;
		e = memchr(p, ':', len - 5);
		/* "File PATH:LINE, in f"; a path with ':' is rare. */
		if (e == NULL)
			e = memchr(p, ',', len - 5);
	} else
		return (NULL);
	if (e == NULL)
		e = s + len;
	*plen = (size_t)(e - p);
	return (p);
}

static int
worker_traceback_has(const char *s, size_t len, const char *needle)
{
	size_t	n = strlen(needle), i;

	for (i = 0; i + n <= len; i++) {
		if (memcmp(s + i, needle, n) == 0)
			return (1);
	}
	return (0);
}

/* Is the frame whose header this is the user's code? */
static int
worker_traceback_user(const char *s, size_t len)
{
	const char	*p;
	size_t		 plen;

	if ((p = worker_traceback_path(s, len, &plen)) == NULL)
		return (1);	/* a cell */
	if (plen > 0 && *p == '<')
		return (1);	/* <string>, <ipython-input-...> */
	/* A cell's temporary file (ipykernel, xeus-python). */
	if (worker_traceback_has(p, plen, "/ipykernel_") ||
	    worker_traceback_has(p, plen, "/xpython_"))
		return (1);
	if (plen == 0 || *p != '/')
		return (0);	/* pandas/_libs/index.pyx */
	return (!worker_traceback_has(p, plen, "/site-packages/") &&
	    !worker_traceback_has(p, plen, "/dist-packages/") &&
	    !worker_traceback_has(p, plen, "/lib/python"));
}

/* Note the package of a library frame (its first path part there). */
static void
worker_traceback_package(struct worker_traceback *t, const char *s,
    size_t len)
{
	const char	*p, *q, *e;
	size_t		 plen, n, have;
	static const char *roots[] = { "/site-packages/", "/dist-packages/",
	    "/lib/python", NULL };
	u_int		 i;

	if ((p = worker_traceback_path(s, len, &plen)) == NULL)
		return;
	e = p + plen;
	for (i = 0; roots[i] != NULL; i++) {
		n = strlen(roots[i]);
		for (q = p; q + n <= e; q++) {
			if (memcmp(q, roots[i], n) != 0)
				continue;
			p = q + n;
			/* The standard library's lib/python3.11/json/... */
			if (roots[i][n - 1] != '/') {
				while (p < e && *p != '/')
					p++;
				if (p < e)
					p++;
			}
			goto found;
		}
	}
found:
	for (q = p; q < e && *q != '/' && *q != '.'; q++)
		;
	n = (size_t)(q - p);
	if (n == 0 || n > 40)
		return;
	/* Once each. */
	for (q = t->pkgs; *q != '\0'; q++) {
		if ((q == t->pkgs || q[-1] == ',') &&
		    strncmp(q, p, n) == 0 && (q[n] == ',' || q[n] == '\0'))
			return;
	}
	have = strlen(t->pkgs);
	if (have + n + 2 >= sizeof t->pkgs)
		return;
	if (have > 0)
		t->pkgs[have++] = ',';
	memcpy(t->pkgs + have, p, n);
	t->pkgs[have + n] = '\0';
}

/* The frame read so far is done: keep it, or count it into the run. */
static void
worker_traceback_end_frame(struct worker_traceback *t)
{
	if (!t->in_frame)
		return;
	t->in_frame = 0;
	if (t->user) {
		worker_traceback_flush(t);
		evbuffer_add_buffer(t->out, t->frame);
		return;
	}
	t->folded++;
	t->total++;
	evbuffer_drain(t->frame, evbuffer_get_length(t->frame));
}

/* Say how many library frames the current run folded. */
static void
worker_traceback_flush(struct worker_traceback *t)
{
	if (t->folded == 0)
		return;
	evbuffer_add_printf(t->out, "[%zu library frame%s folded (%s)\001]\n",
	    t->folded, t->folded == 1 ? "" : "s", t->pkgs);
	t->runs++;
	t->folded = 0;
	t->pkgs[0] = '\0';
}

/* One line of the traceback (no newline), ANSI stripped. */
static void
worker_traceback_line(struct worker_traceback *t, const char *s, size_t len)
{
	size_t	i;

	if (worker_traceback_header(s, len)) {
		worker_traceback_end_frame(t);
		t->in_frame = 1;
		t->user = worker_traceback_user(s, len);
		if (!t->user)
			worker_traceback_package(t, s, len);
	} else if (t->in_frame && (len == 0 ||
	    (s[0] != ' ' && s[0] != '-' && s[0] != '\t' &&
	    !(s[0] >= '0' && s[0] <= '9')))) {
		/*
		 * Frame bodies are indented or numbered ("-> 3802", "   3801
		 * try:"); anything else ends the frame.
		 */
		worker_traceback_end_frame(t);
	}
	if (t->in_frame) {
		evbuffer_add(t->frame, s, len);
		evbuffer_add(t->frame, "\n", 1);
		return;
	}
	/* A rule of dashes says nothing. */
	for (i = 0; i < len && s[i] == '-'; i++)
		;
	if (len >= 10 && i == len)
		return;
	/*
	 * Nor does IPython's "KeyError     Traceback (most recent call
	 * last)": the last line names the error, and the frames follow.
	 */
	if (len > sizeof TB_HEAD && memcmp(s + len - (sizeof TB_HEAD - 1),
	    TB_HEAD, sizeof TB_HEAD - 1) == 0 && s[len - sizeof TB_HEAD] == ' ')
		return;
	worker_traceback_flush(t);
	/* IPython pads "KeyError   Traceback" to its terminal's width. */
	for (i = 0; i < len; i++) {
		if (s[i] == ' ' && i + 2 < len && s[i + 1] == ' ' &&
		    s[i + 2] == ' ') {
			evbuffer_add(t->out, " ", 1);
			while (i + 1 < len && s[i + 1] == ' ')
				i++;
		} else
			evbuffer_add(t->out, s + i, 1);
	}
	evbuffer_add(t->out, "\n", 1);
}

/*
 * The traceback lines tb (an array of strings) folded, as a new array of
 * one string; NULL when nothing was folded (the caller keeps tb).
 */
struct json_object *
worker_traceback_fold(struct json_object *tb)
{
	struct worker_traceback	 t;
	struct json_object	*arr, *e;
	struct evbuffer		*hint;
	const char		*s, *nl;
	char			*clean;
	size_t			 i, len, clen, n;

	if (tb == NULL || !json_object_is_type(tb, json_type_array))
		return (NULL);
	memset(&t, 0, sizeof t);
	t.out = evbuffer_new();
	t.frame = evbuffer_new();
	for (i = 0; i < json_object_array_length(tb); i++) {
		e = json_object_array_get_idx(tb, i);
		if (!json_object_is_type(e, json_type_string))
			continue;
		clean = worker_output_strip_ansi(json_object_get_string(e),
		    (size_t)json_object_get_string_len(e), &clen);
		for (s = clean, len = clen; len > 0; s += n, len -= n) {
			nl = memchr(s, '\n', len);
			n = nl != NULL ? (size_t)(nl - s) + 1 : len;
			worker_traceback_line(&t, s, nl != NULL ? n - 1 : n);
		}
		free(clean);
	}
	worker_traceback_end_frame(&t);
	worker_traceback_flush(&t);
	arr = NULL;
	if (t.total > 0) {
		/*
		 * How to see them, once: in the fold's line when there is
		 * one, else on a line of its own.  A fold line ends with a
		 * \001 where the hint may go.
		 */
		if (t.runs > 1)
			evbuffer_add_printf(t.out, "[%zu library frames "
			    "folded; get_results full_output:true shows them]",
			    t.total);
		s = (const char *)evbuffer_pullup(t.out, -1);
		len = evbuffer_get_length(t.out);
		hint = evbuffer_new();
		for (i = 0; i < len; i = n + 1) {
			nl = memchr(s + i, '\001', len - i);
			n = nl != NULL ? (size_t)(nl - s) : len;
			evbuffer_add(hint, s + i, n - i);
			if (nl != NULL && t.runs == 1)
				evbuffer_add_printf(hint, "; get_results "
				    "full_output:true shows them");
		}
		arr = json_object_new_array();
		json_object_array_add(arr, json_object_new_string_len(
		    (const char *)evbuffer_pullup(hint, -1),
		    (int)evbuffer_get_length(hint)));
		evbuffer_free(hint);
	}
	evbuffer_free(t.out);
	evbuffer_free(t.frame);
	return (arr);
}

/*
 * outputs as a model reads them: a copy whose error outputs have their
 * tracebacks folded, or NULL when none was (the caller keeps outputs).
 */
struct json_object *
worker_traceback_view(struct json_object *outputs)
{
	struct json_object		*view = NULL, *o, *copy, *tb;
	const char			*type;
	size_t				 i;

	if (outputs == NULL || !json_object_is_type(outputs, json_type_array))
		return (NULL);
	for (i = 0; i < json_object_array_length(outputs); i++) {
		o = json_object_array_get_idx(outputs, i);
		type = json_object_get_string(json_object_object_get(o,
		    "output_type"));
		tb = NULL;
		if (type != NULL && strcmp(type, "error") == 0)
			tb = worker_traceback_fold(json_object_object_get(o,
			    "traceback"));
		if (tb == NULL) {
			worker_output_view_put(&view, outputs, i, NULL);
			continue;
		}
		copy = worker_output_copy_but(o, "traceback");
		json_object_object_add(copy, "traceback", tb);
		worker_output_view_put(&view, outputs, i, copy);
	}
	return (view);
}

/*
 * Where an error was raised, from the frames the agent mapped to cells
 * (common/tbmap.c): innermost first, the exception raised's own frames,
 * "at cell c1 line 2 in f, called from cell c2 line 2".
 */
static void
worker_traceback_where(struct json_object *frames, struct evbuffer *text)
{
	struct json_object	*f, *v;
	size_t			 i, k = 0, more = 0;

	for (i = json_object_array_length(frames); i-- > 0;) {
		f = json_object_array_get_idx(frames, i);
		if (json_object_get_boolean(json_object_object_get(f,
		    "chained")) || !json_object_object_get_ex(f, "cell_id",
		    &v) || !json_object_is_type(v, json_type_string))
			continue;
		/* A deep stack: where it was raised is what is read. */
		if (k == WORKER_WHERE_CELLS) {
			more++;
			continue;
		}
		evbuffer_add_printf(text, "%s cell %s",
		    k++ == 0 ? "at" : ", called from",
		    json_object_get_string(v));
		v = json_object_object_get(f, "line");
		if (json_object_is_type(v, json_type_int))
			evbuffer_add_printf(text, " line %lld",
			    (long long)json_object_get_int64(v));
		v = json_object_object_get(f, "name");
		if (json_object_is_type(v, json_type_string))
			evbuffer_add_printf(text, " in %s",
			    json_object_get_string(v));
	}
	if (more > 0)
		evbuffer_add_printf(text, " (and %zu more frame%s in cells)",
		    more, more == 1 ? "" : "s");
	if (k > 0)
		evbuffer_add(text, "\n", 1);
}

/*
 * An error output's mapped frames (the agent's transient
 * runtimed_traceback) lifted into its copy for structuredContent as
 * frames and library_frames, and where it was raised onto text (if not
 * NULL).  The rest of transient stays.
 */
void
worker_traceback_lift(struct json_object *transient, struct json_object *copy,
    struct evbuffer *text)
{
	struct json_object	*rt, *frames, *t;

	if (!json_object_is_type(transient, json_type_object))
		return;
	if (!json_object_object_get_ex(transient, "runtimed_traceback", &rt) ||
	    !json_object_object_get_ex(rt, "frames", &frames) ||
	    !json_object_is_type(frames, json_type_array)) {
		json_object_object_add(copy, "transient",
		    json_object_get(transient));
		return;
	}
	json_object_object_add(copy, "frames", json_object_get(frames));
	json_object_object_add(copy, "library_frames", json_object_get(
	    json_object_object_get(rt, "library_frames")));
	if (json_object_object_get_ex(rt, "frames_omitted", &t))
		json_object_object_add(copy, "frames_omitted",
		    json_object_get(t));
	if (json_object_object_length(transient) > 1) {
		t = json_object_new_object();
		json_object_object_foreach(transient, key, val) {
			if (strcmp(key, "runtimed_traceback") != 0)
				json_object_object_add(t, key,
				    json_object_get(val));
		}
		json_object_object_add(copy, "transient", t);
	}
	if (text != NULL)
		worker_traceback_where(frames, text);
}
