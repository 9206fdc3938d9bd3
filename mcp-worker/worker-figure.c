/* SPDX-License-Identifier: ISC */
/*
 * worker-figure.c: a Plotly or Vega figure drawn to a PNG the model sees
 * as an image (docs/decisions/088).  The figure's JSON is the kernel's,
 * so untrusted: it is drawn by headless Chromium in a page written to a
 * private directory, with plotly.js or vega inlined from the files
 * Debian's python3-plotly and libjs-vega install, and nothing else
 * reachable: the page's Content-Security-Policy allows no request, and
 * Chromium resolves no host and uses no proxy.  One child per figure, in
 * its own process group, killed at WORKER_FIGURE_TIMEOUT_MS; its exit is
 * seen through SIGCHLD on the event loop, so other calls are answered
 * while it draws.  Its directory (page, profile, screenshot, log) is
 * removed whatever happens.
 *
 * A call's figures are queued while its outputs are shaped
 * (worker-output.c); worker_call_result holds the result until they are
 * drawn, then the images follow the text and a line for each figure
 * says what was drawn or why there is no image.
 */

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

#define WORKER_FIGURE_TAG	"runtimed-figure: "	/* console marker */
#define WORKER_FIGURE_LOG_MAX	(1024 * 1024)	/* log bytes read */
#define WORKER_FIGURE_FSIZE	(64 * 1024 * 1024)	/* a file it writes */
#define WORKER_FIGURE_CAUSE	160	/* characters of a page's error */

enum worker_figure_kind {
	WORKER_FIGURE_PLOTLY,
	WORKER_FIGURE_VEGA,
};

enum worker_figure_state {
	WORKER_FIGURE_WAITING,		/* for a free slot */
	WORKER_FIGURE_RUNNING,
	WORKER_FIGURE_DONE,
};

struct worker_figures;

struct worker_figure {
	struct worker_figures		*set;	/* NULL: its call is gone */
	enum worker_figure_kind		 kind;
	enum worker_figure_state	 state;
	char				*spec;	/* JSON, '<' escaped */
	char				*label;	/* "Plotly figure, cell …" */
	u_int				 w, h;
	size_t				 max_b64;	/* reserved */
	u_char				 key[CRYPTO_SHA256_LEN];
	pid_t				 pid;
	char				*dir;
	struct event			*timer;
	int				 timed_out;
	int64_t				 started;	/* ms */
	/* The outcome. */
	struct json_object		*block;	/* the image, or NULL */
	char				*note;	/* its line of text */
	struct json_object		*info;	/* for structuredContent */
	TAILQ_ENTRY(worker_figure)	 entry;	/* in its set */
	TAILQ_ENTRY(worker_figure)	 queue;	/* waiting or running */
};
TAILQ_HEAD(worker_figure_head, worker_figure);

struct worker_figures {
	struct worker_call		*call;
	struct worker_figure_head	 list;
	u_int				 pending;
	int				 held;	/* the result waits */
	char				*text;
	struct json_object		*sc;
};

/* The last screenshots, so a figure read again is not drawn again. */
struct worker_figure_png {
	u_char				 key[CRYPTO_SHA256_LEN];
	char				*png;
	size_t				 len;
	int64_t				 ms;	/* it took to draw */
	TAILQ_ENTRY(worker_figure_png)	 entry;
};
TAILQ_HEAD(worker_figure_pngs, worker_figure_png);
static struct worker_figure_pngs	 worker_figure_cache =
    TAILQ_HEAD_INITIALIZER(worker_figure_cache);
static u_int				 worker_figure_cache_n;
static size_t				 worker_figure_cache_bytes;

/* Each set's figures are on both lists: entry and queue differ. */
static struct event_base		*worker_figure_base;
static struct event			*worker_figure_sigchld;
static struct worker_figure_head	 worker_figure_waiting =
    TAILQ_HEAD_INITIALIZER(worker_figure_waiting);
static struct worker_figure_head	 worker_figure_running =
    TAILQ_HEAD_INITIALIZER(worker_figure_running);
static u_int				 worker_figure_nrunning;

/* Vega's modules, in the order a page defines them (libjs-vega). */
static const struct {
	const char	*name;
	const char	*file;
} worker_figure_vega[] = {
	{ "topojson-client", "topojson-client/topojson-client.min.js" },
	{ "vega-util", "vega/vega-util.min.js" },
	{ "vega-time", "vega/vega-time.min.js" },
	{ "vega-format", "vega/vega-format.min.js" },
	{ "vega-loader", "vega/vega-loader.browser.js" },
	{ "vega-canvas", "vega/vega-canvas.browser.js" },
	{ "vega-dataflow", "vega/vega-dataflow.min.js" },
	{ "vega-scale", "vega/vega-scale.min.js" },
	{ "vega-scenegraph", "vega/vega-scenegraph.min.js" },
	{ "vega-expression", "vega/vega-expression.min.js" },
	{ "vega-selections", "vega/vega-selection.min.js" },
	{ "vega-statistics", "vega/vega-statistics.min.js" },
	{ "vega-event-selector", "vega/vega-event-selector.min.js" },
	{ "vega-functions", "vega/vega-functions.min.js" },
	{ "vega-parser", "vega/vega-parser.min.js" },
	{ "vega-runtime", "vega/vega-runtime.min.js" },
	{ "vega-view", "vega/vega-view.min.js" },
	{ "vega-transforms", "vega/vega-transforms.min.js" },
	{ "vega-view-transforms", "vega/vega-view-transforms.min.js" },
	{ "vega-encode", "vega/vega-encode.min.js" },
	{ "vega-projection", "vega/vega-projection.min.js" },
	{ "vega-geo", "vega/vega-geo.min.js" },
	{ "vega-force", "vega/vega-force.min.js" },
	{ "vega-hierarchy", "vega/vega-hierarchy.min.js" },
	{ "vega-label", "vega/vega-label.min.js" },
	{ "vega-regression", "vega/vega-regression.min.js" },
	{ "vega-voronoi", "vega/vega-voronoi.min.js" },
	{ "vega-wordcloud", "vega/vega-wordcloud.min.js" },
	{ "vega-crossfilter", "vega/vega-crossfilter.min.js" },
	{ "vega-interpreter", "vega/vega-interpreter.min.js" },
};

/* Where Debian (then pip) puts plotly.js. */
static const char *worker_figure_plotly_js[] = {
	"/usr/share/python3-plotly/plotly.js",
	"/usr/share/javascript/plotly/plotly.min.js",
	"/usr/lib/python3/dist-packages/plotly/package_data/plotly.min.js",
};

/*
 * The page's head: no request of any kind (scripts are inline, images
 * only data: and blob:), a white page the figure's size.  plotly.js
 * compiles code with Function (55 places in 2.6.3), so its page allows
 * eval; Vega's is denied it: its expressions are interpreted
 * (vega-interpreter), not compiled.
 */
static const char worker_figure_head[] =
    "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
    "'none'; script-src 'unsafe-inline'%s; style-src "
    "'unsafe-inline'; img-src data: blob:; font-src data:\">"
    "<style>html,body{margin:0;background:#fff;overflow:hidden}</style>"
    "</head><body><div id=\"f\" style=\"width:%upx;height:%upx\"></div>"
    "<script>function __say(s){console.log('" WORKER_FIGURE_TAG "'+s)}"
    "window.onerror=function(m){__say('error: '+m)};"
    "var __m={},__d={};function __def(n,f){__d[n]=f}"
    "function __req(n){if(n in __m)return __m[n].exports;"
    "var m={exports:{}};__m[n]=m;"
    "if(__d[n])__d[n].call(m.exports,m.exports,m,__req);"
    "return m.exports}</script>\n";

static const char worker_figure_plotly_tail[] =
    "<script>(function(){try{"
    "var s=JSON.parse(document.getElementById('spec').textContent);"
    "var l=Object.assign({},s.layout||{},"
    "{width:%u,height:%u,autosize:false});"
    "Plotly.newPlot('f',s.data||[],l,{staticPlot:true}).then("
    "function(){__say('ok')},function(e){__say('error: '+e)})"
    "}catch(e){__say('error: '+e)}})()</script></body></html>\n";

/* The umbrella module's work (vega's index.js), then the view. */
static const char worker_figure_vega_tail[] =
    "<script>(function(){try{var V={},"
    "tx=__req('vega-dataflow').transforms;"
    "Object.keys(__d).forEach(function(n){Object.assign(V,__req(n))});"
    "['vega-transforms','vega-view-transforms','vega-encode','vega-geo',"
    "'vega-force','vega-label','vega-hierarchy','vega-regression',"
    "'vega-voronoi','vega-wordcloud','vega-crossfilter'].forEach("
    "function(n){Object.assign(tx,__req(n))});"
    "var err=null,log=V.logger(V.Warn),warn=log.warn;"
    "function fail(a){err=err||Array.prototype.join.call(a,' ')}"
    "log.error=function(){fail(arguments);return log};"
    /* A data URL not loaded (no request may leave) is said, not drawn. */
    "log.warn=function(m){if(m==='Loading failed')fail(arguments);"
    "return warn.apply(log,arguments)};"
    "var s=JSON.parse(document.getElementById('spec').textContent);"
    "var v=new V.View(V.parse(s,null,{ast:true}),{renderer:'svg',"
    "container:'#f',hover:false,logger:log,"
    "expr:V.expressionInterpreter});"
    "v.runAsync().then(function(){"
    "if(err){__say('error: '+err);return}"
    "var g=document.querySelector('#f svg');"
    "if(!g){__say('error: nothing drawn');return}"
    "var w=+g.getAttribute('width'),h=+g.getAttribute('height');"
    "var k=Math.min(%u/w,%u/h,2);"
    "g.setAttribute('viewBox','0 0 '+w+' '+h);"
    "g.setAttribute('width',Math.floor(w*k));"
    "g.setAttribute('height',Math.floor(h*k));__say('ok')},"
    "function(e){__say('error: '+e)})"
    "}catch(e){__say('error: '+e)}})()</script></body></html>\n";

static void	worker_figure_sigchld_cb(evutil_socket_t, short, void *);
static void	worker_figure_timeout_cb(evutil_socket_t, short, void *);
static int	worker_figure_kind(const char *, enum worker_figure_kind *,
		    const char **);
static char	*worker_figure_chromium(void);
static const char	*worker_figure_plotly(void);
static int	worker_figure_copy(int, const char *, char **);
static int	worker_figure_flush(struct evbuffer *, int);
static int	worker_figure_page(struct worker_figure *, char **);
static void	worker_figure_start(struct worker_figure *);
static void	worker_figure_next(void);
static void	worker_figure_reap(struct worker_figure *, int);
static void	worker_figure_outcome(struct worker_figure *, int);
static void	worker_figure_image(struct worker_figure *, const char *,
		    size_t, int64_t, int);
static struct worker_figure_png *worker_figure_cached(const u_char *);
static void	worker_figure_keep(const u_char *, const char *, size_t,
		    int64_t);
static void	worker_figure_fail(struct worker_figure *, const char *, ...)
		    printflike(2, 3);
static void	worker_figure_vnote(struct worker_figure *, const char *,
		    va_list);
static void	worker_figure_note(struct worker_figure *, const char *, ...)
		    printflike(2, 3);
static void	worker_figure_done(struct worker_figure *);
static void	worker_figure_finish(struct worker_figures *);
static void	worker_figure_free(struct worker_figure *);
static int	worker_figure_rm(const char *, const struct stat *, int,
		    struct FTW *);
static void	worker_figure_cleanup(struct worker_figure *);
static int64_t	worker_figure_now(void);

static int64_t
worker_figure_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
worker_figure_init(struct event_base *base)
{
	worker_figure_base = base;
}

/* Every child killed and its directory removed: the worker is leaving. */
void
worker_figure_shutdown(void)
{
	struct worker_figure	*f;

	while ((f = TAILQ_FIRST(&worker_figure_running)) != NULL) {
		TAILQ_REMOVE(&worker_figure_running, f, queue);
		kill(-f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
		worker_figure_cleanup(f);
	}
}

/* Which figures are drawn, and which are only said to be not. */
static int
worker_figure_kind(const char *mime, enum worker_figure_kind *kind,
    const char **none)
{
	*none = NULL;
	if (strcmp(mime, "application/vnd.plotly.v1+json") == 0) {
		*kind = WORKER_FIGURE_PLOTLY;
		return (0);
	}
	if (strcmp(mime, "application/vnd.vega.v5+json") == 0) {
		*kind = WORKER_FIGURE_VEGA;
		return (0);
	}
	if (strncmp(mime, "application/vnd.vegalite.v", 26) == 0) {
		*none = "Vega-Lite is not drawn here (no compiler to Vega)";
		return (0);
	}
	if (strncmp(mime, "application/vnd.vega.v", 22) == 0) {
		*none = "only Vega 5 (libjs-vega) is drawn";
		return (0);
	}
	return (-1);
}

/* RUNTIMED_CHROMIUM (a path, or empty for none), else on PATH. */
static char *
worker_figure_chromium(void)
{
	static const char	*names[] = { "chromium", "chromium-browser" };
	const char		*env, *path;
	char			*dirs, *dir, *last, *p;
	size_t			 i;

	if ((env = getenv("RUNTIMED_CHROMIUM")) != NULL) {
		if (*env == '\0' || access(env, X_OK) != 0)
			return (NULL);
		return (xstrdup(env));
	}
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/bin:/bin";
	for (i = 0; i < nitems(names); i++) {
		dirs = xstrdup(path);
		for (dir = strtok_r(dirs, ":", &last); dir != NULL;
		    dir = strtok_r(NULL, ":", &last)) {
			if (*dir != '/')
				continue;
			xasprintf(&p, "%s/%s", dir, names[i]);
			if (access(p, X_OK) == 0) {
				free(dirs);
				return (p);
			}
			free(p);
		}
		free(dirs);
	}
	return (NULL);
}

static const char *
worker_figure_plotly(void)
{
	size_t	i;

	for (i = 0; i < nitems(worker_figure_plotly_js); i++) {
		if (access(worker_figure_plotly_js[i], R_OK) == 0)
			return (worker_figure_plotly_js[i]);
	}
	return (NULL);
}

/*
 * A figure of one output, bundle data, queued on call (NULL: none sent).
 * Its image is reserved a slot in b now, so the images of one result
 * stay within its limits whatever order they are drawn in.
 */
void
worker_figure_queue(struct worker_call *call, struct worker_budget *b,
    struct json_object *data, size_t index)
{
	struct json_object_iterator	 it, end;
	struct worker_figures		**setp, *set;
	struct worker_figure		*f;
	struct worker_figure_png	*png;
	struct json_object		*spec = NULL, *lay, *v;
	enum worker_figure_kind		 kind = WORKER_FIGURE_PLOTLY;
	const char			*mime = NULL, *none = NULL, *s;
	size_t				 left, i, n, len;
	char				*out;

	if (call == NULL || !json_object_is_type(data, json_type_object))
		return;
	it = json_object_iter_begin(data);
	end = json_object_iter_end(data);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		mime = json_object_iter_peek_name(&it);
		if (worker_figure_kind(mime, &kind, &none) == 0) {
			spec = json_object_iter_peek_value(&it);
			break;
		}
	}
	if (spec == NULL || !json_object_is_type(spec, json_type_object))
		return;

	setp = worker_call_figures(call);
	if ((set = *setp) == NULL) {
		set = *setp = xcalloc(1, sizeof *set);
		set->call = call;
		TAILQ_INIT(&set->list);
	}
	f = xcalloc(1, sizeof *f);
	f->set = set;
	f->kind = kind;
	f->pid = -1;
	f->w = 800;
	f->h = 500;
	xasprintf(&f->label, "%s, cell %s output %zu", strncmp(mime,
	    "application/vnd.plotly", 22) == 0 ? "Plotly figure" :
	    strncmp(mime, "application/vnd.vegalite", 24) == 0 ?
	    "Vega-Lite chart" : "Vega chart", b->cell_id != NULL ?
	    b->cell_id : "?", index + 1);
	f->info = json_object_new_object();
	json_object_object_add(f->info, "cell_id", json_object_new_string(
	    b->cell_id != NULL ? b->cell_id : ""));
	json_object_object_add(f->info, "output_index", json_object_new_int64(
	    (int64_t)index));
	json_object_object_add(f->info, "mime", json_object_new_string(mime));
	TAILQ_INSERT_TAIL(&set->list, f, entry);
	set->pending++;

	if (none != NULL) {
		worker_figure_fail(f, "%s", none);
		return;
	}
	left = WORKER_MAX_IMAGE_TOTAL - b->image_bytes;
	if (left > WORKER_FIGURE_MAX_B64)
		left = WORKER_FIGURE_MAX_B64;
	if (b->images >= WORKER_MAX_IMAGES || left == 0) {
		worker_figure_fail(f, "at most %d images, %d KiB, a result",
		    WORKER_MAX_IMAGES, WORKER_MAX_IMAGE_TOTAL / 1024);
		return;
	}
	b->images++;
	b->image_bytes += left;
	f->max_b64 = left;

	/* Plotly's own size where the layout sets one. */
	if (kind == WORKER_FIGURE_PLOTLY &&
	    json_object_object_get_ex(spec, "layout", &lay)) {
		if (json_object_object_get_ex(lay, "width", &v) &&
		    (json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double)))
			f->w = (u_int)fmin(fmax(json_object_get_double(v),
			    WORKER_FIGURE_MIN_SIDE), WORKER_IMAGE_MAX_SIDE);
		if (json_object_object_get_ex(lay, "height", &v) &&
		    (json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double)))
			f->h = (u_int)fmin(fmax(json_object_get_double(v),
			    WORKER_FIGURE_MIN_SIDE), WORKER_IMAGE_MAX_SIDE);
	}

	/* '<' as \u003c: only inside strings, and no "</script>" then. */
	s = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	for (i = 0, n = 0; i < len; i++)
		n += s[i] == '<' ? 6 : 1;
	out = f->spec = xmalloc(n + 1);
	for (i = 0; i < len; i++) {
		if (s[i] == '<') {
			memcpy(out, "\\u003c", 6);
			out += 6;
		} else
			*out++ = s[i];
	}
	*out = '\0';

	/* Drawn before at this size: the screenshot kept. */
	xasprintf(&out, "%d %u %u\n%s", (int)kind, f->w, f->h, f->spec);
	crypto_sha256(out, strlen(out), f->key);
	free(out);
	if ((png = worker_figure_cached(f->key)) != NULL) {
		worker_figure_image(f, png->png, png->len, png->ms, 1);
		worker_figure_done(f);
		return;
	}

	f->state = WORKER_FIGURE_WAITING;
	TAILQ_INSERT_TAIL(&worker_figure_waiting, f, queue);
	worker_figure_next();
}

/* Start waiting figures while slots are free. */
static void
worker_figure_next(void)
{
	struct worker_figure	*f;

	while (worker_figure_nrunning < WORKER_FIGURE_AT_ONCE &&
	    (f = TAILQ_FIRST(&worker_figure_waiting)) != NULL) {
		TAILQ_REMOVE(&worker_figure_waiting, f, queue);
		worker_figure_start(f);
	}
}

/* Append the file at path to fd; -1 with *cause. */
static int
worker_figure_copy(int fd, const char *path, char **cause)
{
	char	 buf[65536];
	ssize_t	 n, w, off;
	int	 in;

	if ((in = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	for (;;) {
		if ((n = read(in, buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (off = 0; off < n; off += w) {
			if ((w = write(fd, buf + off, (size_t)(n - off))) ==
			    -1) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				xasprintf(cause, "writing the page: %s",
				    strerror(errno));
				close(in);
				return (-1);
			}
		}
	}
	if (n == -1)
		xasprintf(cause, "%s: %s", path, strerror(errno));
	close(in);
	return (n == -1 ? -1 : 0);
}

/* All of b to fd (a file: a short write is an error's). */
static int
worker_figure_flush(struct evbuffer *b, int fd)
{
	while (evbuffer_get_length(b) > 0) {
		if (evbuffer_write(b, fd) == -1 && errno != EINTR)
			return (-1);
	}
	return (0);
}

/* The page for f in its directory; -1 with *cause. */
static int
worker_figure_page(struct worker_figure *f, char **cause)
{
	struct evbuffer	*b;
	const char	*js = NULL;
	char		*path, *p;
	size_t		 i;
	int		 fd, r = -1;

	if (f->kind == WORKER_FIGURE_PLOTLY && (js = worker_figure_plotly()) ==
	    NULL) {
		xasprintf(cause, "no plotly.js (install python3-plotly)");
		return (-1);
	}
	xasprintf(&path, "%s/page.html", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	free(path);
	if (fd == -1) {
		xasprintf(cause, "the page: %s", strerror(errno));
		return (-1);
	}
	b = evbuffer_new();
	evbuffer_add_printf(b, worker_figure_head, f->kind ==
	    WORKER_FIGURE_PLOTLY ? " 'unsafe-eval'" : "", f->w, f->h);
	if (f->kind == WORKER_FIGURE_PLOTLY) {
		evbuffer_add_printf(b, "<script>");
		if (worker_figure_flush(b, fd) == -1)
			goto fail;
		if (worker_figure_copy(fd, js, cause) != 0)
			goto out;
		evbuffer_add_printf(b, "\n</script>\n");
	} else {
		for (i = 0; i < nitems(worker_figure_vega); i++) {
			evbuffer_add_printf(b, "<script>__def(\"%s\","
			    "function(exports,module,require){\n",
			    worker_figure_vega[i].name);
			if (worker_figure_flush(b, fd) == -1)
				goto fail;
			xasprintf(&p, "%s/%s", WORKER_FIGURE_JS_DIR,
			    worker_figure_vega[i].file);
			if (access(p, R_OK) != 0) {
				xasprintf(cause, "no %s (install libjs-vega)",
				    p);
				free(p);
				goto out;
			}
			r = worker_figure_copy(fd, p, cause);
			free(p);
			if (r != 0)
				goto out;
			r = -1;
			evbuffer_add_printf(b, "\n});</script>\n");
		}
	}
	evbuffer_add_printf(b, "<script type=\"application/json\" id=\"spec\">");
	evbuffer_add(b, f->spec, strlen(f->spec));
	evbuffer_add_printf(b, "</script>\n");
	if (f->kind == WORKER_FIGURE_PLOTLY)
		evbuffer_add_printf(b, worker_figure_plotly_tail, f->w, f->h);
	else
		evbuffer_add_printf(b, worker_figure_vega_tail, f->w, f->h);
	if (worker_figure_flush(b, fd) == -1)
		goto fail;
	r = 0;
	goto out;
fail:
	xasprintf(cause, "writing the page: %s", strerror(errno));
out:
	evbuffer_free(b);
	close(fd);
	return (r);
}

/* Write f's page and start Chromium on it. */
static void
worker_figure_start(struct worker_figure *f)
{
	struct timeval	 tv;
	struct rlimit	 rl;
	sigset_t	 none;
	char		*chromium, *cause = NULL, tmpl[PATH_MAX];
	char		*argv[40], *envp[8], *arg[8];
	const char	*tmp;
	int		 argc = 0, fd = -1, null, i;

	f->state = WORKER_FIGURE_RUNNING;
	memset(arg, 0, sizeof arg);
	if ((chromium = worker_figure_chromium()) == NULL) {
		worker_figure_fail(f, "no chromium (install chromium, or set "
		    "RUNTIMED_CHROMIUM)");
		return;
	}
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp != '/')
		tmp = "/tmp";
	if ((size_t)snprintf(tmpl, sizeof tmpl, "%s/runtimed-figure.XXXXXX",
	    tmp) >= sizeof tmpl || mkdtemp(tmpl) == NULL) {
		worker_figure_note(f, "no temporary directory: %s",
		    strerror(errno));
		goto out;
	}
	f->dir = xstrdup(tmpl);
	if (worker_figure_page(f, &cause) != 0) {
		worker_figure_note(f, "%s", cause);
		free(cause);
		goto out;
	}
	free(f->spec);
	f->spec = NULL;

	xasprintf(&arg[0], "--user-data-dir=%s/profile", f->dir);
	xasprintf(&arg[1], "--window-size=%u,%u", f->w, f->h);
	xasprintf(&arg[2], "--screenshot=%s/figure.png", f->dir);
	xasprintf(&arg[3], "file://%s/page.html", f->dir);
	xasprintf(&arg[4], "HOME=%s", f->dir);
	xasprintf(&arg[5], "TMPDIR=%s", f->dir);
	xasprintf(&arg[6], "%s/chromium.log", f->dir);
	argv[argc++] = chromium;
	argv[argc++] = (char *)"--headless";
	/* Root: Chromium will not run its sandbox (decision 088). */
	if (geteuid() == 0)
		argv[argc++] = (char *)"--no-sandbox";
	argv[argc++] = (char *)"--disable-gpu";
	argv[argc++] = (char *)"--no-first-run";
	argv[argc++] = (char *)"--no-default-browser-check";
	argv[argc++] = (char *)"--disable-background-networking";
	argv[argc++] = (char *)"--disable-component-update";
	argv[argc++] = (char *)"--disable-sync";
	argv[argc++] = (char *)"--disable-extensions";
	argv[argc++] = (char *)"--disable-default-apps";
	argv[argc++] = (char *)"--disable-breakpad";
	argv[argc++] = (char *)"--disable-crash-reporter";
	argv[argc++] = (char *)"--mute-audio";
	argv[argc++] = (char *)"--hide-scrollbars";
	argv[argc++] = (char *)"--force-device-scale-factor=1";
	/* No proxy, no host resolved, an IP literal included. */
	argv[argc++] = (char *)"--no-proxy-server";
	argv[argc++] = (char *)"--host-resolver-rules=MAP * ~NOTFOUND";
	argv[argc++] = (char *)"--virtual-time-budget=3000";
	argv[argc++] = (char *)"--enable-logging=stderr";
	argv[argc++] = (char *)"--v=0";
	argv[argc++] = arg[0];
	argv[argc++] = arg[1];
	argv[argc++] = arg[2];
	argv[argc++] = arg[3];
	argv[argc] = NULL;
	envp[0] = (char *)"PATH=/usr/bin:/bin";
	envp[1] = arg[4];
	envp[2] = arg[5];
	envp[3] = (char *)"LANG=C.UTF-8";
	envp[4] = NULL;

	if (worker_figure_sigchld == NULL) {
		worker_figure_sigchld = evsignal_new(worker_figure_base,
		    SIGCHLD, worker_figure_sigchld_cb, NULL);
		evsignal_add(worker_figure_sigchld, NULL);
	}
	fd = open(arg[6], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1) {
		worker_figure_note(f, "its log: %s", strerror(errno));
		goto out;
	}
	sigemptyset(&none);
	switch (f->pid = fork()) {
	case -1:
		worker_figure_note(f, "fork: %s", strerror(errno));
		goto out;
	case 0:
		/* Its own group, killed whole; nothing of ours inherited. */
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		dup2(fd, 2);
		if ((null = open("/dev/null", O_RDWR)) != -1) {
			dup2(null, 0);
			dup2(null, 1);
		}
		for (i = 3; i < 1024; i++)
			close(i);
		rl.rlim_cur = rl.rlim_max = WORKER_FIGURE_FSIZE;
		setrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = rl.rlim_max = 0;
		setrlimit(RLIMIT_CORE, &rl);
		execve(chromium, argv, envp);
		_exit(127);
	}
	setpgid(f->pid, f->pid);	/* either side may be first */
	f->started = worker_figure_now();
	worker_figure_nrunning++;
	TAILQ_INSERT_TAIL(&worker_figure_running, f, queue);
	f->timer = evtimer_new(worker_figure_base, worker_figure_timeout_cb,
	    f);
	tv.tv_sec = WORKER_FIGURE_TIMEOUT_MS / 1000;
	tv.tv_usec = (WORKER_FIGURE_TIMEOUT_MS % 1000) * 1000;
	evtimer_add(f->timer, &tv);
	log_debug("%s: %s: pid %ld in %s", __func__, f->label, (long)f->pid,
	    f->dir);
out:
	if (fd != -1)
		close(fd);
	for (i = 0; i < (int)nitems(arg); i++)
		free(arg[i]);
	free(chromium);
	if (f->pid <= 0) {
		/* Not started: done now, last, as that may free f. */
		worker_figure_cleanup(f);
		worker_figure_done(f);
	}
}

/* Over its time: the whole group goes; SIGCHLD reaps it. */
static void
worker_figure_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct worker_figure	*f = arg;

	f->timed_out = 1;
	kill(-f->pid, SIGKILL);
}

static void
worker_figure_sigchld_cb(evutil_socket_t sig, short events, void *arg)
{
	struct worker_figure	*f, *next;
	siginfo_t		 si;
	int			 status;

	TAILQ_FOREACH_SAFE(f, &worker_figure_running, queue, next) {
		/*
		 * Seen exited but not reaped, so its pid (and group id)
		 * is not reused: what it left in its group goes first.
		 */
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)f->pid, &si, WEXITED | WNOHANG |
		    WNOWAIT) != 0 || si.si_pid != f->pid)
			continue;
		kill(-f->pid, SIGKILL);
		if (waitpid(f->pid, &status, 0) != f->pid)
			continue;
		worker_figure_reap(f, status);
	}
	worker_figure_next();
}

/* f's child is gone: its outcome, its directory removed. */
static void
worker_figure_reap(struct worker_figure *f, int status)
{
	TAILQ_REMOVE(&worker_figure_running, f, queue);
	worker_figure_nrunning--;
	if (f->timer != NULL) {
		event_free(f->timer);
		f->timer = NULL;
	}
	if (f->set == NULL) {
		/* Its call went away. */
		worker_figure_cleanup(f);
		worker_figure_free(f);
		return;
	}
	worker_figure_outcome(f, status);
	worker_figure_cleanup(f);
	worker_figure_done(f);
}

/*
 * What the page said it did, from Chromium's log; NULL if nothing.
 * *nosandbox: Chromium found no sandbox it could use (no user
 * namespaces here, a chroot or a container, and no setuid helper).
 */
static char *
worker_figure_said(const char *dir, int *nosandbox)
{
	char		*path, *buf, *p, *q, *said = NULL;
	ssize_t		 n;
	size_t		 len = 0, i;
	int		 fd;

	*nosandbox = 0;
	xasprintf(&path, "%s/chromium.log", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return (NULL);
	buf = xmalloc(WORKER_FIGURE_LOG_MAX + 1);
	while (len < WORKER_FIGURE_LOG_MAX && (n = read(fd, buf + len,
	    WORKER_FIGURE_LOG_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0')
			buf[i] = ' ';
	}
	*nosandbox = strstr(buf, "No usable sandbox") != NULL;
	/* The first thing said: ok, or the first error. */
	if ((p = strstr(buf, "\"" WORKER_FIGURE_TAG)) != NULL) {
		p += 1 + strlen(WORKER_FIGURE_TAG);
		if ((q = strstr(p, "\", source:")) == NULL)
			q = strchr(p, '\n');
		if (q == NULL)
			q = buf + len;
		if ((size_t)(q - p) > WORKER_FIGURE_CAUSE)
			q = p + WORKER_FIGURE_CAUSE;
		said = xmalloc((size_t)(q - p) + 1);
		for (i = 0; p + i < q; i++)
			said[i] = (u_char)p[i] < 0x20 ? ' ' : p[i];
		said[i] = '\0';
	}
	free(buf);
	return (said);
}

/* Read the screenshot of f. */
static void
worker_figure_outcome(struct worker_figure *f, int status)
{
	struct stat	 sb;
	char		*path, *said, *png = NULL;
	int64_t		 ms = worker_figure_now() - f->started;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd = -1, nosandbox;

	said = worker_figure_said(f->dir, &nosandbox);
	if (f->timed_out) {
		worker_figure_note(f, "not drawn within %d s",
		    WORKER_FIGURE_TIMEOUT_MS / 1000);
		goto out;
	}
	if (said != NULL && strncmp(said, "error: ", 7) == 0) {
		worker_figure_note(f, "the page failed: %s", said + 7);
		goto out;
	}
	if (nosandbox) {
		worker_figure_note(f, "chromium has no sandbox it can use here "
		    "(install chromium-sandbox)");
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		worker_figure_note(f, "chromium %s %d", WIFEXITED(status) ?
		    "exited" : "killed by signal", WIFEXITED(status) ?
		    WEXITSTATUS(status) : WTERMSIG(status));
		goto out;
	}
	if (said == NULL || strcmp(said, "ok") != 0) {
		worker_figure_note(f, "the page did not finish drawing");
		goto out;
	}
	xasprintf(&path, "%s/figure.png", f->dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd == -1 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		worker_figure_note(f, "no screenshot");
		goto out;
	}
	if (sb.st_size <= 0 || sb.st_size > WORKER_FIGURE_MAX_PNG) {
		worker_figure_note(f, "a screenshot of %lld bytes (at most %d)",
		    (long long)sb.st_size, WORKER_FIGURE_MAX_PNG);
		goto out;
	}
	png = xmalloc((size_t)sb.st_size);
	while (len < (size_t)sb.st_size && (n = read(fd, png + len,
	    (size_t)sb.st_size - len)) > 0)
		len += (size_t)n;
	worker_figure_image(f, png, len, ms, 0);
	if (f->block != NULL)
		worker_figure_keep(f->key, png, len, ms);
out:
	if (fd != -1)
		close(fd);
	free(png);
	free(said);
}

/* A screenshot as f's image, fit for the model. */
static void
worker_figure_image(struct worker_figure *f, const char *png, size_t len,
    int64_t ms, int kept)
{
	struct worker_image_info	 info;
	char				*b64, *data, *cause = NULL;
	size_t				 blen;

	b64 = xmalloc((len + 2) / 3 * 4 + 1);
	blen = crypto_b64_encode(b64, png, len);
	/* Decoded, so proved a PNG, and made to fit what was reserved. */
	data = worker_image_fit("image/png", b64, blen, f->max_b64, &info,
	    &cause);
	free(b64);
	if (data == NULL) {
		worker_figure_note(f, "the screenshot: %s", cause);
		free(cause);
		return;
	}
	f->block = json_object_new_object();
	json_object_object_add(f->block, "type",
	    json_object_new_string("image"));
	json_object_object_add(f->block, "data", json_object_new_string(data));
	json_object_object_add(f->block, "mimeType",
	    json_object_new_string(info.sent_mime));
	xasprintf(&f->note, "[%s: drawn as a %ux%u %s by headless Chromium "
	    "in %.1f s%s, the image below; the notebook keeps the figure]",
	    f->label, info.sent_width, info.sent_height,
	    strcmp(info.sent_mime, "image/png") == 0 ? "PNG" : "JPEG",
	    (double)ms / 1000, kept ? " (kept from an earlier read)" : "");
	json_object_object_add(f->info, "width",
	    json_object_new_int64(info.sent_width));
	json_object_object_add(f->info, "height",
	    json_object_new_int64(info.sent_height));
	json_object_object_add(f->info, "mimeType",
	    json_object_new_string(info.sent_mime));
	json_object_object_add(f->info, "bytes",
	    json_object_new_int64((int64_t)strlen(data)));
	json_object_object_add(f->info, "ms", json_object_new_int64(ms));
	json_object_object_add(f->info, "kept",
	    json_object_new_boolean(kept));
	free(data);
}

static struct worker_figure_png *
worker_figure_cached(const u_char *key)
{
	struct worker_figure_png	*p;

	TAILQ_FOREACH(p, &worker_figure_cache, entry) {
		if (memcmp(p->key, key, CRYPTO_SHA256_LEN) == 0) {
			/* Most recently used first. */
			TAILQ_REMOVE(&worker_figure_cache, p, entry);
			TAILQ_INSERT_HEAD(&worker_figure_cache, p, entry);
			return (p);
		}
	}
	return (NULL);
}

/* Keep a screenshot; the least recently used go past the bounds. */
static void
worker_figure_keep(const u_char *key, const char *png, size_t len,
    int64_t ms)
{
	struct worker_figure_png	*p;

	if (len > WORKER_FIGURE_CACHE_BYTES / 4)
		return;
	p = xcalloc(1, sizeof *p);
	memcpy(p->key, key, CRYPTO_SHA256_LEN);
	p->png = xmalloc(len);
	memcpy(p->png, png, len);
	p->len = len;
	p->ms = ms;
	TAILQ_INSERT_HEAD(&worker_figure_cache, p, entry);
	worker_figure_cache_n++;
	worker_figure_cache_bytes += len;
	while (worker_figure_cache_n > WORKER_FIGURE_CACHE ||
	    worker_figure_cache_bytes > WORKER_FIGURE_CACHE_BYTES) {
		p = TAILQ_LAST(&worker_figure_cache, worker_figure_pngs);
		TAILQ_REMOVE(&worker_figure_cache, p, entry);
		worker_figure_cache_n--;
		worker_figure_cache_bytes -= p->len;
		free(p->png);
		free(p);
	}
}

/* Why f has no image (the first reason said stays). */
static void
worker_figure_vnote(struct worker_figure *f, const char *fmt, va_list ap)
{
	char	*why;

	if (f->note != NULL)
		return;
	xvasprintf(&why, fmt, ap);
	xasprintf(&f->note, "[%s: no image: %s]", f->label, why);
	json_object_object_add(f->info, "no_image", json_object_new_string(why));
	free(why);
}

static void
worker_figure_note(struct worker_figure *f, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	worker_figure_vnote(f, fmt, ap);
	va_end(ap);
}

/* No image for f, and why; f is done (and may be freed). */
static void
worker_figure_fail(struct worker_figure *f, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	worker_figure_vnote(f, fmt, ap);
	va_end(ap);
	worker_figure_done(f);
}

static void
worker_figure_done(struct worker_figure *f)
{
	struct worker_figures	*set = f->set;

	f->state = WORKER_FIGURE_DONE;
	set->pending--;
	if (set->held && set->pending == 0)
		worker_figure_finish(set);
}

/*
 * The result of a call with figures: held (text copied, sc taken) until
 * they are drawn.  Returns 1 if the call was held or finished here.
 */
int
worker_figure_hold(struct worker_figures *set, const char *text,
    struct json_object *sc)
{
	set->text = xstrdup(text);
	set->sc = sc;
	set->held = 1;
	if (set->pending == 0)
		worker_figure_finish(set);
	return (1);
}

/* Every figure is done: the result, with their images and lines. */
static void
worker_figure_finish(struct worker_figures *set)
{
	struct worker_call	*call = set->call;
	struct worker_figure	*f;
	struct json_object	*arr;
	struct evbuffer		*b;
	char			*text;

	b = evbuffer_new();
	evbuffer_add(b, set->text, strlen(set->text));
	if (*set->text != '\0' && set->text[strlen(set->text) - 1] != '\n')
		evbuffer_add(b, "\n", 1);
	arr = json_object_new_array();
	TAILQ_FOREACH(f, &set->list, entry) {
		evbuffer_add_printf(b, "%s\n", f->note);
		if (f->block != NULL) {
			worker_call_add_content(call, f->block);
			f->block = NULL;
		}
		json_object_array_add(arr, json_object_get(f->info));
	}
	if (json_object_is_type(set->sc, json_type_object))
		json_object_object_add(set->sc, "figures", arr);
	else
		json_object_put(arr);
	text = worker_output_take(b);
	*worker_call_figures(call) = NULL;
	set->call = NULL;
	worker_call_result(call, text, set->sc);
	set->sc = NULL;
	free(text);
	worker_figures_free(set);
}

/* A call's figures, when the call goes: the running ones are killed. */
void
worker_figures_free(struct worker_figures *set)
{
	struct worker_figure	*f;

	if (set == NULL)
		return;
	while ((f = TAILQ_FIRST(&set->list)) != NULL) {
		TAILQ_REMOVE(&set->list, f, entry);
		f->set = NULL;
		switch (f->state) {
		case WORKER_FIGURE_WAITING:
			TAILQ_REMOVE(&worker_figure_waiting, f, queue);
			worker_figure_free(f);
			break;
		case WORKER_FIGURE_RUNNING:
			if (f->pid > 0) {
				/* Reaped, its directory removed, on SIGCHLD. */
				kill(-f->pid, SIGKILL);
				break;
			}
			worker_figure_free(f);
			break;
		case WORKER_FIGURE_DONE:
			worker_figure_free(f);
			break;
		}
	}
	free(set->text);
	json_object_put(set->sc);
	free(set);
}

static void
worker_figure_free(struct worker_figure *f)
{
	if (f->timer != NULL)
		event_free(f->timer);
	free(f->spec);
	free(f->label);
	free(f->dir);
	free(f->note);
	json_object_put(f->block);
	json_object_put(f->info);
	free(f);
}

static int
worker_figure_rm(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return (0);
}

/* f's directory, and everything Chromium left in it, removed. */
static void
worker_figure_cleanup(struct worker_figure *f)
{
	if (f->dir == NULL)
		return;
	if (nftw(f->dir, worker_figure_rm, 16, FTW_DEPTH | FTW_PHYS |
	    FTW_MOUNT) != 0)
		log_warn("%s: removing %s", __func__, f->dir);
	free(f->dir);
	f->dir = NULL;
}
