/* SPDX-License-Identifier: ISC */
/*
 * agent-introspect.c: what a kernel can do, and looking inside it
 * without a cell (docs/decisions/022).
 *
 * Capabilities come from the kernel_info_reply (protocol_version,
 * supported_features of JEP 92, a "debugger" flag) and the kernelspec's
 * metadata (Debian's ipykernel 6.17 says "debugger": true only there);
 * nothing is assumed from a kernel's name.
 *
 * AGENT_VARIABLES: a kernel with a debugger is asked on the control
 * channel (debug_request inspectVariables, which ipykernel answers from
 * its control thread while a cell runs, without starting debugpy); the
 * reply, tens of KB of DAP variables, is cut to the user's names.  A
 * kernel without one is asked only while idle, by a silent execute that
 * neither stores history nor counts (silent, store_history false): code
 * for its language (Python, R) that writes the list as JSON to a file of
 * our 0700 runtime directory, since not every kernel evaluates
 * user_expressions (IRkernel and xeus-python's raw mode do not).
 * While a cell runs such a kernel cannot answer: ERROR busy names it.
 *
 * AGENT_COMPLETE and AGENT_INSPECT are complete_request and
 * inspect_request on shell: they wait behind a running cell until the
 * caller's bound, then ERROR busy.  Neither runs user code.
 *
 * AGENT_SEES: does the kernel read the given text from the given file
 * (relative to its working directory)?  A silent execute for Python or
 * R that prints "seen" or "unseen", kept until the kernel restarts (a
 * request without a name gets it, or "unasked"); another
 * language, or a cell running, is "unknown" with why, never a guess
 * (decision 100).
 *
 * Replies are KERNEL_*_REPLY with the request's id; the daemon passes
 * them on to its client as they are.
 */

#include <sys/queue.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "agent.h"

/* A request's bound when the daemon gives none. */
#define AGENT_INTROSPECT_TIMEOUT_MS	5000
/* Largest answer read back from a kernel's file. */
#define AGENT_INTROSPECT_READ_MAX	(8 * 1024 * 1024)
/* Names a kernel lists before ours are cut: max is at most this. */
#define AGENT_INTROSPECT_KERNEL_MAX	PROTO_VARIABLES_MAX

enum agent_introspect_kind {
	AGENT_INTROSPECT_DEBUG,		/* variables, debugger */
	AGENT_INTROSPECT_EXEC,		/* variables, silent execute */
	AGENT_INTROSPECT_COMPLETE,
	AGENT_INTROSPECT_INSPECT,
	AGENT_INTROSPECT_SEES,		/* a file, silent execute */
};

struct agent_introspect_req {
	enum agent_introspect_kind	 kind;
	uint32_t			 id;	/* the daemon's request */
	char				 msg_id[37];
	int				 while_busy;
	char				*filter;	/* NULL: every name */
	uint64_t			 max;
	char				*path;	/* the kernel's answer file */
	/* No file we can read (a server's kernel): its stdout instead. */
	struct evbuffer			*out;
	int				 replied;	/* execute_reply ok */
	int				 idle;		/* iopub idle seen */
	struct event			*timer;
	TAILQ_ENTRY(agent_introspect_req) entry;
};
static TAILQ_HEAD(, agent_introspect_req) agent_introspect_reqs =
    TAILQ_HEAD_INITIALIZER(agent_introspect_reqs);

/* What the ready kernel can do (agent_introspect_caps). */
static int	 agent_introspect_debugger;
static int	 agent_introspect_subshells;
static int	 agent_introspect_dap;	/* inspectVariables unstarted */
static char	*agent_introspect_language;	/* language_info.name */
static int	 agent_introspect_dap_seq;
/* What this kernel answered AGENT_SEES: "seen", "unseen", or NULL. */
static const char *agent_introspect_sees_known;

/* IPython's own names in user_ns that user_ns_hidden may not list. */
static const char *agent_introspect_hidden[] = {
	"In", "Out", "get_ipython", "exit", "quit", "open"
};

/*
 * The Python code: the user's names (not _-prefixed, not IPython's, not
 * modules) matching the pattern, sorted, at most M of them, each with
 * type, a reprlib repr and len or shape where cheap, written as JSON to
 * the file; one expression statement, so it leaves no name behind.
 */
#define AGENT_INTROSPECT_PY						\
	"%s.write("							\
	"(lambda ns, hid, fn, rl, F, M: __import__('json').dumps("	\
	"(lambda names: {'total': len(names), "				\
	"'variables': [(lambda k, v: {'name': k, 'type': "		\
	"(type(v).__module__ + '.' if type(v).__module__ != 'builtins' "\
	"else '') + type(v).__qualname__, 'repr': rl.repr(v), 'len': "	\
	"len(v) if isinstance(v, (str, bytes, bytearray, list, tuple, "	\
	"dict, set, frozenset, range)) else None, 'shape': [int(x) for x " \
	"in v.shape] if isinstance(getattr(v, 'shape', None), tuple) "	\
	"else None})(k, ns[k]) for k in names[:M]]})(sorted(k for k in "\
	"list(ns) if not k.startswith('_') and k not in hid and not "	\
	"isinstance(ns[k], type(fn)) and (F is None or "		\
	"fn.fnmatchcase(k, F)))), default=str))("			\
	"globals(), getattr(globals().get('get_ipython', lambda: None)(), " \
	"'user_ns_hidden', {}), "					\
	"__import__('fnmatch'), (lambda r: [setattr(r, a, n) for a, n in " \
	"(('maxstring', 200), ('maxother', 200), ('maxlong', 60))] and r)(" \
	"__import__('reprlib').Repr()), %s, %llu))"

/* The same for R (IRkernel has no user_expressions either). */
#define AGENT_INTROSPECT_R						\
	"local({F <- %s; M <- %llu; nm <- ls(globalenv()); "		\
	"if (!is.null(F)) nm <- nm[grepl(utils::glob2rx(F), nm)]; "	\
	"vars <- lapply(head(nm, M), function(n) { "			\
	"v <- get(n, envir = globalenv()); "				\
	"r <- tryCatch(paste(utils::capture.output(utils::str(v, "	\
	"give.attr = FALSE, vec.len = 3, nchar.max = 200, list.len = 5)), " \
	"collapse = \" \"), error = function(e) \"?\"); d <- dim(v); "	\
	"list(name = n, type = class(v)[1], repr = substr(r, 1, 400), "	\
	"len = length(v), shape = if (is.null(d)) NULL else as.list(d)) " \
	"}); writeLines(jsonlite::toJSON(list(total = length(nm), "	\
	"variables = vars), auto_unbox = TRUE, null = \"null\", "	\
	"force = TRUE), %s)})"

/* AGENT_SEES's code: "seen" if the file holds exactly the text. */
#define AGENT_INTROSPECT_SEES_PY					\
	"__import__('sys').stdout.write((lambda p, t: 'seen' if "	\
	"__import__('os').path.isfile(p) and __import__('io').open(p, "	\
	"encoding='utf-8').read() == t else 'unseen')(%s, %s))"
#define AGENT_INTROSPECT_SEES_R						\
	"cat(local({p <- %s; t <- %s; if (file.exists(p) && "		\
	"identical(paste(readLines(p, warn = FALSE), collapse = \"\\n\"), " \
	"t)) \"seen\" else \"unseen\"}))"

static void	agent_introspect_busy(uint32_t, const char *);
static void	agent_introspect_sees_send(uint32_t, const char *,
		    const char *);
static void	agent_introspect_sees_reply(struct agent_introspect_req *,
		    struct json_object *);
static void	agent_introspect_ran(struct agent_introspect_req *,
		    struct json_object *);
static int	agent_introspect_running(void);
static void	agent_introspect_free(struct agent_introspect_req *);
static void	agent_introspect_timeout_cb(evutil_socket_t, short, void *);
static struct agent_introspect_req *agent_introspect_new(
		    enum agent_introspect_kind, uint32_t, int, int64_t);
static void	agent_introspect_silent(struct agent_kernel *,
		    struct agent_introspect_req *, const char *);
static int	agent_introspect_send(struct agent_kernel *,
		    struct agent_introspect_req *, enum agent_channel,
		    const char *, struct json_object *);
static char	*agent_introspect_literal(const char *);
static void	agent_introspect_exec(struct agent_kernel *,
		    struct agent_introspect_req *);
static int	agent_introspect_user_name(const char *, const char *);
static struct json_object *agent_introspect_cap(const char *, size_t,
		    int *);
static void	agent_introspect_vars_reply(struct agent_introspect_req *,
		    struct json_object *, int64_t, const char *);
static void	agent_introspect_pack_json(msgpack_packer *, const void *);
static int	agent_introspect_feature(struct json_object *, const char *);
static void	agent_introspect_debug_reply(struct agent_kernel *,
		    struct agent_introspect_req *, struct json_object *);
static void	agent_introspect_exec_reply(struct agent_introspect_req *,
		    struct json_object *);
static void	agent_introspect_complete_reply(struct agent_introspect_req *,
		    struct json_object *);
static char	*agent_introspect_plain(const char *, size_t, int *);
static void	agent_introspect_inspect_reply(struct agent_introspect_req *,
		    struct json_object *);
static int	agent_introspect_ready(uint32_t, struct agent_kernel *);
static void	agent_introspect_stdout(struct agent_introspect_req *,
		    const char *, struct json_object *);
static struct json_object *agent_introspect_at(const struct proto_str *, int,
		    int64_t);

static void
agent_introspect_pack_json(msgpack_packer *pk, const void *arg)
{
	mpjson_pack(pk, (struct json_object *)arg);
}

/* Is a run's cell in the kernel now? */
static int
agent_introspect_running(void)
{
	const char	*exec_id, *cell_id;

	return (agent_exec_lookup(NULL, &exec_id, &cell_id) == 0);
}

/* ERROR busy naming the cell in the kernel and its run. */
static void
agent_introspect_busy(uint32_t id, const char *why)
{
	const char	*exec_id = "?", *cell_id = "?";

	agent_exec_lookup(NULL, &exec_id, &cell_id);
	agent_send_error(id, PROTO_E_BUSY, "cell %s of run %s is running "
	    "and %s: ask again when it ends (get_results %s), or "
	    "interrupt_kernel", cell_id, exec_id, why, exec_id);
}

static void
agent_introspect_free(struct agent_introspect_req *r)
{
	TAILQ_REMOVE(&agent_introspect_reqs, r, entry);
	if (r->timer != NULL)
		event_free(r->timer);
	if (r->path != NULL)
		unlink(r->path);
	free(r->path);
	free(r->filter);
	if (r->out != NULL)
		evbuffer_free(r->out);
	free(r);
}

/* The caller's bound passed with no answer: the kernel is taken. */
static void
agent_introspect_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct agent_introspect_req	*r = arg;

	if (agent_introspect_running())
		agent_introspect_busy(r->id, r->kind ==
		    AGENT_INTROSPECT_DEBUG ? "the kernel's debugger did not "
		    "answer in time" : "this request waits behind it past "
		    "its bound");
	else
		agent_send_error(r->id, PROTO_E_BUSY, "the kernel did not "
		    "answer within the bound: try again, with a longer "
		    "timeout_secs");
	agent_introspect_free(r);
}

static struct agent_introspect_req *
agent_introspect_new(enum agent_introspect_kind kind, uint32_t id,
    int has_timeout, int64_t timeout_ms)
{
	struct agent_introspect_req	*r;
	struct timeval			 tv;

	if (!has_timeout || timeout_ms <= 0)
		timeout_ms = AGENT_INTROSPECT_TIMEOUT_MS;
	r = xcalloc(1, sizeof *r);
	r->kind = kind;
	r->id = id;
	r->while_busy = agent_introspect_running();
	r->timer = evtimer_new(agent_base_get(), agent_introspect_timeout_cb,
	    r);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(r->timer, &tv);
	TAILQ_INSERT_TAIL(&agent_introspect_reqs, r, entry);
	return (r);
}

/* Send r's request; -1 (and r answered and freed) when it cannot go. */
static int
agent_introspect_send(struct agent_kernel *k, struct agent_introspect_req *r,
    enum agent_channel channel, const char *type, struct json_object *content)
{
	if (agent_kernel_send(k, channel, type, content, r->msg_id) != 0) {
		agent_send_error(r->id, PROTO_E_KERNEL_UNAVAILABLE,
		    "cannot send %s to the kernel", type);
		agent_introspect_free(r);
		return (-1);
	}
	return (0);
}

/*
 * Send r's code as an execute_request the kernel runs silently: no
 * history, no count, no input, not stopping the queue on an error.
 */
static void
agent_introspect_silent(struct agent_kernel *k, struct agent_introspect_req *r,
    const char *code)
{
	struct json_object	*content;

	content = json_object_new_object();
	json_object_object_add(content, "code", json_object_new_string(code));
	json_object_object_add(content, "silent", json_object_new_boolean(1));
	json_object_object_add(content, "store_history",
	    json_object_new_boolean(0));
	json_object_object_add(content, "user_expressions",
	    json_object_new_object());
	json_object_object_add(content, "allow_stdin",
	    json_object_new_boolean(0));
	json_object_object_add(content, "stop_on_error",
	    json_object_new_boolean(0));
	agent_introspect_send(k, r, AGENT_CHANNEL_SHELL, "execute_request",
	    content);
	json_object_put(content);
}

/* A string as a literal both Python and R read (JSON's), or NULL. */
static char *
agent_introspect_literal(const char *s)
{
	struct json_object	*o;
	char			*lit;

	if (s == NULL)
		return (NULL);
	o = json_object_new_string(s);
	lit = xstrdup(json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return (lit);
}

/*
 * Variables by a silent execute: the kernel must be idle.  The list is
 * written to a file of our runtime directory; a kernel whose files are
 * not ours to read (on a Jupyter Server) prints it instead, and it is
 * read from its stdout on iopub until the request's idle.
 */
static void
agent_introspect_exec(struct agent_kernel *k, struct agent_introspect_req *r)
{
	const char		*lang = agent_introspect_language;
	const char		*rdir = agent_kernel_runtime_dir(k);
	char			*f, *code, *path, *file;
	static u_int		 n;

	if (lang == NULL || (strcasecmp(lang, "python") != 0 &&
	    strcasecmp(lang, "r") != 0)) {
		agent_send_error(r->id, PROTO_E_NOT_SUPPORTED, "this kernel "
		    "(language %s) has no debugger, and runtimed knows no "
		    "silent way to list its variables", lang != NULL ? lang :
		    "unknown");
		agent_introspect_free(r);
		return;
	}
	r->kind = AGENT_INTROSPECT_EXEC;
	f = agent_introspect_literal(r->filter);
	if (rdir != NULL) {
		xasprintf(&r->path, "%s/vars-%ld-%u.json", rdir,
		    (long)getpid(), n++);
		path = agent_introspect_literal(r->path);
		if (strcasecmp(lang, "python") == 0)
			xasprintf(&file, "__import__('io').open(%s, 'w', "
			    "encoding='utf-8')", path);
		else
			file = xstrdup(path);
		free(path);
	} else {
		r->out = evbuffer_new();
		file = xstrdup(strcasecmp(lang, "python") == 0 ?
		    "__import__('sys').stdout" : "stdout()");
	}
	if (strcasecmp(lang, "python") == 0)
		xasprintf(&code, AGENT_INTROSPECT_PY, file, f != NULL ? f :
		    "None", (unsigned long long)r->max);
	else
		xasprintf(&code, AGENT_INTROSPECT_R, f != NULL ? f : "NULL",
		    (unsigned long long)r->max, file);
	free(file);
	free(f);
	agent_introspect_silent(k, r, code);
	free(code);
}

/* AGENT_VARIABLES {filter?, max?, timeout_ms?}. */
void
agent_introspect_variables(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_variables	*m = mv;
	struct agent_kernel		*k = arg;
	struct agent_introspect_req	*r;
	struct json_object		*content;
	uint32_t			 id = hdr->id;

	if (agent_introspect_ready(id, k) != 0)
		return;
	r = agent_introspect_new(AGENT_INTROSPECT_DEBUG, id, m->has_timeout_ms,
	    m->timeout_ms);
	r->filter = m->filter.ptr != NULL ? proto_str_dup(&m->filter) : NULL;
	r->max = m->has_max ? m->max : PROTO_VARIABLES_DEFAULT;
	if (r->max > PROTO_VARIABLES_MAX)
		r->max = PROTO_VARIABLES_MAX;
	if (!agent_introspect_dap) {
		if (r->while_busy) {
			agent_introspect_busy(id, "this kernel cannot list "
			    "variables while it runs");
			agent_introspect_free(r);
		} else
			agent_introspect_exec(k, r);
		return;
	}
	/* DAP inside Jupyter: ipykernel answers this one unstarted. */
	content = json_object_new_object();
	json_object_object_add(content, "type",
	    json_object_new_string("request"));
	json_object_object_add(content, "seq",
	    json_object_new_int(++agent_introspect_dap_seq));
	json_object_object_add(content, "command",
	    json_object_new_string("inspectVariables"));
	json_object_object_add(content, "arguments", json_object_new_object());
	agent_introspect_send(k, r, AGENT_CHANNEL_CONTROL, "debug_request",
	    content);
	json_object_put(content);
}

/* KERNEL_SEES_REPLY {state, why?}. */
static void
agent_introspect_sees_send(uint32_t id, const char *state, const char *why)
{
	struct proto_sees_reply	m;
	struct mpbuf		b;

	memset(&m, 0, sizeof m);
	m.state = proto_str_make(state);
	m.why = proto_str_make(why);
	mpbuf_init(&b);
	proto_sees_reply_pack(&b.pk, &m);
	agent_send(PROTO_MSG_KERNEL_SEES_REPLY, id, &b);
	mpbuf_free(&b);
}

/* AGENT_SEES {name, text, timeout_ms?}. */
void
agent_introspect_sees(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_sees		*m = mv;
	struct agent_kernel		*k = arg;
	struct agent_introspect_req	*r;
	const char			*lang = agent_introspect_language;
	char				*name, *text, *ln, *lt, *code, *why;

	if (agent_introspect_ready(hdr->id, k) != 0)
		return;
	/* Asked before: a kernel's mounts do not change while it runs. */
	if (agent_introspect_sees_known != NULL) {
		agent_introspect_sees_send(hdr->id,
		    agent_introspect_sees_known, NULL);
		return;
	}
	if (lang == NULL || (strcasecmp(lang, "python") != 0 &&
	    strcasecmp(lang, "r") != 0)) {
		xasprintf(&why, "runtimed knows no silent way to ask a kernel "
		    "of language %s", lang != NULL ? lang : "unknown");
		agent_introspect_sees_send(hdr->id, "unknown", why);
		free(why);
		return;
	}
	/* No file named: could it be asked? */
	if (m->name.ptr == NULL || m->text.ptr == NULL) {
		agent_introspect_sees_send(hdr->id, "unasked", NULL);
		return;
	}
	if (agent_introspect_running()) {
		agent_introspect_sees_send(hdr->id, "unknown", "a cell is "
		    "running, and the kernel is asked only while idle");
		return;
	}
	r = agent_introspect_new(AGENT_INTROSPECT_SEES, hdr->id,
	    m->has_timeout_ms, m->timeout_ms);
	r->out = evbuffer_new();
	name = proto_str_dup(&m->name);
	text = proto_str_dup(&m->text);
	ln = agent_introspect_literal(name);
	lt = agent_introspect_literal(text);
	xasprintf(&code, strcasecmp(lang, "python") == 0 ?
	    AGENT_INTROSPECT_SEES_PY : AGENT_INTROSPECT_SEES_R, ln, lt);
	free(ln);
	free(lt);
	free(name);
	free(text);
	agent_introspect_silent(k, r, code);
	free(code);
}

/* AGENT_SEES's execute is done: what it printed is the answer. */
static void
agent_introspect_sees_reply(struct agent_introspect_req *r,
    struct json_object *content)
{
	const char	*status;
	char		 buf[16];
	size_t		 len;

	status = content != NULL ? jsonget_str(content, "status", NULL) :
	    "ok";
	len = evbuffer_get_length(r->out);
	if (len >= sizeof buf)
		len = sizeof buf - 1;
	evbuffer_remove(r->out, buf, len);
	buf[len] = '\0';
	if (status == NULL || strcmp(status, "ok") != 0 ||
	    (strcmp(buf, "seen") != 0 && strcmp(buf, "unseen") != 0))
		agent_introspect_sees_send(r->id, "unknown", "the kernel's "
		    "check failed");
	else {
		agent_introspect_sees_known = strcmp(buf, "seen") == 0 ?
		    "seen" : "unseen";
		agent_introspect_sees_send(r->id, buf, NULL);
	}
	agent_introspect_free(r);
}

/* A silent execute of ours ended (variables, or a file's check). */
static void
agent_introspect_ran(struct agent_introspect_req *r,
    struct json_object *content)
{
	if (r->kind == AGENT_INTROSPECT_SEES)
		agent_introspect_sees_reply(r, content);
	else
		agent_introspect_exec_reply(r, content);
}

/* Is name one of the user's: an identifier, not _-prefixed, not IPython's. */
static int
agent_introspect_user_name(const char *name, const char *filter)
{
	const char	*s;
	size_t		 i;

	if (name == NULL || *name == '\0' || *name == '_' ||
	    isdigit((u_char)*name))
		return (0);
	for (s = name; *s != '\0'; s++) {
		if (!isalnum((u_char)*s) && *s != '_' && *s != '.' &&
		    (u_char)*s < 0x80)
			return (0);
	}
	for (i = 0; i < sizeof agent_introspect_hidden /
	    sizeof *agent_introspect_hidden; i++) {
		if (strcmp(name, agent_introspect_hidden[i]) == 0)
			return (0);
	}
	return (filter == NULL || fnmatch(filter, name, 0) == 0);
}

/*
 * A string redacted (agent-redact.c) and cut to PROTO_REPR_MAX code
 * points, ... marking the cut.
 */
static struct json_object *
agent_introspect_cap(const char *s, size_t len, int *cut)
{
	struct json_object	*o;
	size_t			 n, hold;
	char			*t, *red;

	if ((red = agent_redact_text(s, len, 1, &len, &hold, NULL)) != NULL)
		s = red;
	n = utf8_skip(s, len, PROTO_REPR_MAX);
	*cut = n < len;
	if (!*cut)
		o = json_object_new_string_len(s, (int)len);
	else {
		xasprintf(&t, "%.*s...", (int)n, s);
		o = json_object_new_string(t);
		free(t);
	}
	free(red);
	return (o);
}

/*
 * Send KERNEL_VARIABLES_REPLY from a list of {name, type, repr|value,
 * len?, shape?}: the user's names only, filtered, at most max, each
 * repr capped.  total counts every name that matched.
 */
static void
agent_introspect_vars_reply(struct agent_introspect_req *r,
    struct json_object *list, int64_t kernel_total, const char *via)
{
	struct proto_variables_reply	 m;
	struct json_object		*out, *v, *o, *x;
	const char			*name, *repr, *type;
	size_t				 i, n;
	uint64_t			 total = 0;
	int64_t				 dropped = 0;
	int				 cut;
	struct mpbuf			 b;

	out = json_object_new_array();
	n = json_object_is_type(list, json_type_array) ?
	    json_object_array_length(list) : 0;
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(list, i);
		name = jsonget_str(v, "name", NULL);
		type = jsonget_str(v, "type", NULL);
		if (!agent_introspect_user_name(name, r->filter) ||
		    (type != NULL && strcmp(type, "module") == 0)) {
			dropped++;
			continue;
		}
		if (total++ >= r->max)
			continue;
		if ((repr = jsonget_str(v, "repr", NULL)) == NULL &&
		    (repr = jsonget_str(v, "value", NULL)) == NULL)
			repr = "";
		o = json_object_new_object();
		json_object_object_add(o, "name",
		    json_object_new_string(name));
		json_object_object_add(o, "type",
		    json_object_new_string(type != NULL ? type : "?"));
		json_object_object_add(o, "repr",
		    agent_introspect_cap(repr, strlen(repr), &cut));
		if (cut)
			json_object_object_add(o, "truncated",
			    json_object_new_boolean(1));
		if (json_object_object_get_ex(v, "len", &x) &&
		    json_object_is_type(x, json_type_int))
			json_object_object_add(o, "len", json_object_get(x));
		if (json_object_object_get_ex(v, "shape", &x) &&
		    json_object_is_type(x, json_type_array))
			json_object_object_add(o, "shape", json_object_get(x));
		json_object_array_add(out, o);
	}
	/* The kernel cut at max: it counted what matched, ours included. */
	if (kernel_total - dropped > (int64_t)total)
		total = (uint64_t)(kernel_total - dropped);
	memset(&m, 0, sizeof m);
	m.variables.pack = agent_introspect_pack_json;
	m.variables.arg = out;
	m.total = total;
	m.while_busy = r->while_busy;
	m.via = proto_str_make(via);
	mpbuf_init(&b);
	proto_variables_reply_pack(&b.pk, &m);
	agent_send(PROTO_MSG_KERNEL_VARIABLES_REPLY, r->id, &b);
	mpbuf_free(&b);
	json_object_put(out);
	agent_introspect_free(r);
}

/* debug_reply {success, body: {variables: [DAP variable]}}. */
static void
agent_introspect_debug_reply(struct agent_kernel *k,
    struct agent_introspect_req *r, struct json_object *content)
{
	struct json_object	*v, *body, *vars;

	if (json_object_object_get_ex(content, "success", &v) &&
	    json_object_get_boolean(v) &&
	    json_object_object_get_ex(content, "body", &body) &&
	    json_object_object_get_ex(body, "variables", &vars) &&
	    json_object_is_type(vars, json_type_array)) {
		agent_introspect_vars_reply(r, vars, -1, "debugger");
		return;
	}
	/* A debugger that would not answer: ask the idle kernel itself. */
	log_info("the kernel's debugger did not list variables");
	if (r->while_busy) {
		agent_introspect_busy(r->id, "the kernel's debugger did not "
		    "list its variables");
		agent_introspect_free(r);
	} else
		agent_introspect_exec(k, r);
}

/* execute_reply of the silent variables request. */
static void
agent_introspect_exec_reply(struct agent_introspect_req *r,
    struct json_object *content)
{
	struct json_object	*res = NULL, *vars, *t;
	const char		*status;
	char			*buf, *cause;
	size_t			 len;

	status = content != NULL ? jsonget_str(content, "status", NULL) :
	    "ok";
	if (status == NULL || strcmp(status, "ok") != 0)
		goto fail;
	if (r->out != NULL) {
		/* Printed on the kernel's stdout: the reply and idle came. */
		len = evbuffer_get_length(r->out);
		buf = xmalloc(len + 1);
		evbuffer_remove(r->out, buf, len);
		buf[len] = '\0';
	} else if (util_read_file(r->path, &buf, &len, &cause) != 0) {
		log_warnx("variables: %s", cause);
		free(cause);
		goto fail;
	}
	res = len <= AGENT_INTROSPECT_READ_MAX ? json_tokener_parse(buf) : NULL;
	free(buf);
	if (res == NULL || !json_object_object_get_ex(res, "variables",
	    &vars) || !json_object_is_type(vars, json_type_array)) {
		json_object_put(res);
		goto fail;
	}
	/* The kernel filtered and cut at max: it says how many matched. */
	agent_introspect_vars_reply(r, vars,
	    json_object_object_get_ex(res, "total", &t) ?
	    json_object_get_int64(t) : -1, "execute");
	json_object_put(res);
	return;

fail:
	agent_send_error(r->id, PROTO_E_KERNEL_UNAVAILABLE, "the kernel did "
	    "not list its variables (status %s)", status != NULL ? status :
	    "unknown");
	agent_introspect_free(r);
}

/* 0 when kernel k can be asked, else answer request id and -1. */
static int
agent_introspect_ready(uint32_t id, struct agent_kernel *k)
{
	if (k != NULL && agent_kernel_is_ready(k))
		return (0);
	agent_send_error(id, PROTO_E_KERNEL_UNAVAILABLE,
	    "the kernel is not ready");
	return (-1);
}

/*
 * The content of a complete_request or inspect_request: the code and a
 * cursor in code points, the given one, else the end of the code.
 */
static struct json_object *
agent_introspect_at(const struct proto_str *code, int has, int64_t pos)
{
	struct json_object	*content = json_object_new_object();
	int64_t			 n = (int64_t)utf8_chars(code->ptr, code->len);

	if (!has || pos > n)
		pos = n;
	json_object_object_add(content, "code",
	    json_object_new_string_len(code->ptr, (int)code->len));
	json_object_object_add(content, "cursor_pos",
	    json_object_new_int64(pos));
	return (content);
}

/* AGENT_COMPLETE {code, cursor_pos?, timeout_ms?}. */
void
agent_introspect_complete(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_complete	*m = mv;
	struct agent_kernel		*k = arg;
	struct agent_introspect_req	*r;
	struct json_object		*content;
	uint32_t			 id = hdr->id;

	if (agent_introspect_ready(id, k) != 0)
		return;
	r = agent_introspect_new(AGENT_INTROSPECT_COMPLETE, id,
	    m->has_timeout_ms, m->timeout_ms);
	content = agent_introspect_at(&m->code, m->has_cursor_pos,
	    m->cursor_pos);
	agent_introspect_send(k, r, AGENT_CHANNEL_SHELL, "complete_request",
	    content);
	json_object_put(content);
}

/* AGENT_INSPECT {code, cursor_pos?, detail_level?, timeout_ms?}. */
void
agent_introspect_inspect(struct peer *p, const struct proto_header *hdr,
    const msgpack_object *body, const void *mv, void *arg)
{
	const struct proto_inspect	*m = mv;
	struct agent_kernel		*k = arg;
	struct agent_introspect_req	*r;
	struct json_object		*content;
	uint32_t			 id = hdr->id;

	if (agent_introspect_ready(id, k) != 0)
		return;
	r = agent_introspect_new(AGENT_INTROSPECT_INSPECT, id,
	    m->has_timeout_ms, m->timeout_ms);
	content = agent_introspect_at(&m->code, m->has_cursor_pos,
	    m->cursor_pos);
	json_object_object_add(content, "detail_level",
	    json_object_new_int((int)m->detail_level));
	agent_introspect_send(k, r, AGENT_CHANNEL_SHELL, "inspect_request",
	    content);
	json_object_put(content);
}

/* complete_reply {matches, cursor_start, cursor_end, metadata}. */
static void
agent_introspect_complete_reply(struct agent_introspect_req *r,
    struct json_object *content)
{
	struct proto_complete_reply	 m;
	struct json_object		*matches, *md, *types = NULL, *t;
	struct json_object		*out, *o, *v;
	const char			*text, *tt, *type;
	size_t				 i, j, n, nt;
	struct mpbuf			 b;

	if (!json_object_object_get_ex(content, "matches", &matches) ||
	    !json_object_is_type(matches, json_type_array)) {
		agent_send_error(r->id, PROTO_E_KERNEL_UNAVAILABLE, "the "
		    "kernel did not complete: %s", jsonget_str(
		    content, "evalue", NULL) != NULL ? jsonget_str(content,
		    "evalue", NULL) : "no matches in its reply");
		agent_introspect_free(r);
		return;
	}
	if (json_object_object_get_ex(content, "metadata", &md))
		json_object_object_get_ex(md, "_jupyter_types_experimental",
		    &types);
	nt = json_object_is_type(types, json_type_array) ?
	    json_object_array_length(types) : 0;
	n = json_object_array_length(matches);
	out = json_object_new_array();
	for (i = 0; i < n && i < PROTO_COMPLETE_MAX; i++) {
		v = json_object_array_get_idx(matches, i);
		if ((text = json_object_get_string(v)) == NULL)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "text", json_object_new_string(text));
		for (j = 0, type = NULL; j < nt && type == NULL; j++) {
			t = json_object_array_get_idx(types, j);
			tt = jsonget_str(t, "text", NULL);
			if (tt != NULL && strcmp(tt, text) == 0)
				type = jsonget_str(t, "type", NULL);
		}
		if (type != NULL && *type != '\0' &&
		    strcmp(type, "<unknown>") != 0)
			json_object_object_add(o, "type",
			    json_object_new_string(type));
		json_object_array_add(out, o);
	}
	memset(&m, 0, sizeof m);
	m.matches.pack = agent_introspect_pack_json;
	m.matches.arg = out;
	v = json_object_object_get(content, "cursor_start");
	m.cursor_start = v != NULL ? json_object_get_int64(v) : 0;
	v = json_object_object_get(content, "cursor_end");
	m.cursor_end = v != NULL ? json_object_get_int64(v) : 0;
	m.total = n;
	m.while_busy = r->while_busy;
	mpbuf_init(&b);
	proto_complete_reply_pack(&b.pk, &m);
	agent_send(PROTO_MSG_KERNEL_COMPLETE_REPLY, r->id, &b);
	mpbuf_free(&b);
	json_object_put(out);
	agent_introspect_free(r);
}

/*
 * Text without ANSI escapes (ESC [ ... final byte, ESC and one byte),
 * cut to PROTO_INSPECT_MAX code points; caller frees.
 */
static char *
agent_introspect_plain(const char *s, size_t len, int *cut)
{
	char	*out;
	size_t	 i, n = 0, keep;

	out = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '\033') {
			out[n++] = s[i];
			continue;
		}
		if (i + 1 < len && s[i + 1] == '[') {
			for (i += 2; i < len && ((u_char)s[i] < 0x40 ||
			    (u_char)s[i] > 0x7e); i++)
				;
		} else
			i++;
	}
	out[n] = '\0';
	keep = utf8_skip(out, n, PROTO_INSPECT_MAX);
	*cut = keep < n;
	out[keep] = '\0';
	return (out);
}

/* inspect_reply {status, found, data: {text/plain}}. */
static void
agent_introspect_inspect_reply(struct agent_introspect_req *r,
    struct json_object *content)
{
	struct proto_inspect_reply	 m;
	struct json_object		*data, *v;
	const char			*text = NULL;
	char				*plain, *red;
	size_t				 len, hold;
	struct mpbuf			 b;

	memset(&m, 0, sizeof m);
	m.found = json_object_object_get_ex(content, "found", &v) &&
	    json_object_get_boolean(v);
	if (json_object_object_get_ex(content, "data", &data))
		text = jsonget_str(data, "text/plain", NULL);
	plain = agent_introspect_plain(text != NULL ? text : "",
	    text != NULL ? strlen(text) : 0, &m.truncated);
	if ((red = agent_redact_text(plain, strlen(plain), 1, &len, &hold,
	    NULL)) != NULL) {
		free(plain);
		plain = red;
	}
	m.text = proto_str_make(plain);
	m.while_busy = r->while_busy;
	mpbuf_init(&b);
	proto_inspect_reply_pack(&b.pk, &m);
	agent_send(PROTO_MSG_KERNEL_INSPECT_REPLY, r->id, &b);
	mpbuf_free(&b);
	free(plain);
	agent_introspect_free(r);
}

/*
 * A message from the ready kernel: 1 when it answers (or, on iopub, is
 * about) one of our requests, else 0 for agent-exec.c.
 */
int
agent_introspect_message(struct agent_kernel *k, enum agent_channel channel,
    struct agent_wire_msg *m)
{
	struct agent_introspect_req	*r;
	const char			*parent = agent_wire_msg_parent_id(m);
	const char			*type = agent_wire_msg_type(m);
	struct json_object		*content = agent_wire_msg_content(m);

	if (parent == NULL)
		return (0);
	TAILQ_FOREACH(r, &agent_introspect_reqs, entry) {
		if (strcmp(r->msg_id, parent) == 0)
			break;
	}
	if (r == NULL)
		return (0);
	if (channel == AGENT_CHANNEL_IOPUB) {
		if ((r->kind == AGENT_INTROSPECT_EXEC ||
		    r->kind == AGENT_INTROSPECT_SEES) && r->out != NULL)
			agent_introspect_stdout(r, type, content);
		return (1);
	}
	if ((r->kind == AGENT_INTROSPECT_EXEC ||
	    r->kind == AGENT_INTROSPECT_SEES) && r->out != NULL &&
	    strcmp(type, "execute_reply") == 0) {
		/* Its stdout may come after the reply: wait for idle. */
		if (jsonget_str(content, "status", NULL) == NULL ||
		    strcmp(jsonget_str(content, "status", NULL), "ok") != 0)
			agent_introspect_ran(r, content);
		else if ((r->replied = 1) && r->idle)
			agent_introspect_ran(r, NULL);
		return (1);
	}
	if (r->kind == AGENT_INTROSPECT_DEBUG &&
	    strcmp(type, "debug_reply") == 0)
		agent_introspect_debug_reply(k, r, content);
	else if (r->kind == AGENT_INTROSPECT_EXEC &&
	    strcmp(type, "execute_reply") == 0)
		agent_introspect_exec_reply(r, content);
	else if (r->kind == AGENT_INTROSPECT_COMPLETE &&
	    strcmp(type, "complete_reply") == 0)
		agent_introspect_complete_reply(r, content);
	else if (r->kind == AGENT_INTROSPECT_INSPECT &&
	    strcmp(type, "inspect_reply") == 0)
		agent_introspect_inspect_reply(r, content);
	return (1);
}

/*
 * iopub of a variables request printed on stdout: its text, capped, and
 * its idle, which ends it once the execute_reply came.
 */
static void
agent_introspect_stdout(struct agent_introspect_req *r, const char *type,
    struct json_object *content)
{
	const char	*s;

	if (strcmp(type, "stream") == 0) {
		s = jsonget_str(content, "name", NULL);
		if (s == NULL || strcmp(s, "stdout") != 0 ||
		    (s = jsonget_str(content, "text", NULL)) == NULL)
			return;
		if (evbuffer_get_length(r->out) + strlen(s) <=
		    AGENT_INTROSPECT_READ_MAX)
			evbuffer_add(r->out, s, strlen(s));
		return;
	}
	if (strcmp(type, "status") == 0 &&
	    (s = jsonget_str(content, "execution_state", NULL)) != NULL &&
	    strcmp(s, "idle") == 0) {
		r->idle = 1;
		if (r->replied)
			agent_introspect_ran(r, NULL);
	}
}

/* The kernel is gone: every request waiting on it is answered. */
void
agent_introspect_clear(void)
{
	struct agent_introspect_req	*r;

	while ((r = TAILQ_FIRST(&agent_introspect_reqs)) != NULL) {
		agent_send_error(r->id, PROTO_E_KERNEL_UNAVAILABLE, "the "
		    "kernel stopped before it answered");
		agent_introspect_free(r);
	}
}

/* A feature kernel_info_reply's supported_features lists (JEP 92). */
static int
agent_introspect_feature(struct json_object *features, const char *name)
{
	size_t	i;

	for (i = 0; json_object_is_type(features, json_type_array) &&
	    i < json_object_array_length(features); i++) {
		if (strcmp(json_object_get_string(json_object_array_get_idx(
		    features, i)) != NULL ? json_object_get_string(
		    json_object_array_get_idx(features, i)) : "", name) == 0)
			return (1);
	}
	return (0);
}

/*
 * What the kernel says it can do, from its kernel_info_reply and its
 * kernelspec's metadata: {protocol_version, debugger, subshells,
 * supported_features, debugger_from}.  Kept for the requests above.
 */
struct json_object *
agent_introspect_caps(struct agent_kernel *k, struct json_object *info)
{
	struct json_object	*caps, *v, *features = NULL, *li, *md;
	const char		*from = NULL, *s;

	/* A kernel (re)started is asked again what it sees. */
	agent_introspect_sees_known = NULL;
	caps = json_object_new_object();
	s = jsonget_str(info, "protocol_version", NULL);
	json_object_object_add(caps, "protocol_version",
	    s != NULL ? json_object_new_string(s) : NULL);
	json_object_object_get_ex(info, "supported_features", &features);
	if (json_object_is_type(features, json_type_array))
		json_object_object_add(caps, "supported_features",
		    json_object_get(features));
	else
		json_object_object_add(caps, "supported_features",
		    json_object_new_array());
	if (json_object_object_get_ex(info, "debugger", &v) &&
	    json_object_get_boolean(v))
		from = "kernel_info";
	else if (agent_introspect_feature(features, "debugger"))
		from = "supported_features";
	else if ((md = agent_kernel_metadata(k)) != NULL &&
	    json_object_object_get_ex(md, "debugger", &v) &&
	    json_object_is_type(v, json_type_boolean) &&
	    json_object_get_boolean(v))
		from = "kernelspec";
	agent_introspect_debugger = from != NULL;
	/*
	 * Only ipykernel answers inspectVariables with its debugger not
	 * started; xeus-python, which declares a debugger too, aborts on it
	 * (measured), and starting a debugger (debugpy) in a user's kernel
	 * to list names is too much.  So the control channel is asked only
	 * of the implementation that answers it unstarted.
	 */
	s = jsonget_str(info, "implementation", NULL);
	agent_introspect_dap = agent_introspect_debugger && s != NULL &&
	    strcmp(s, "ipython") == 0;
	agent_introspect_subshells = agent_introspect_feature(features,
	    "kernel subshells");
	json_object_object_add(caps, "debugger",
	    json_object_new_boolean(agent_introspect_debugger));
	if (from != NULL)
		json_object_object_add(caps, "debugger_from",
		    json_object_new_string(from));
	json_object_object_add(caps, "subshells",
	    json_object_new_boolean(agent_introspect_subshells));
	free(agent_introspect_language);
	agent_introspect_language = NULL;
	if (json_object_object_get_ex(info, "language_info", &li) &&
	    (s = jsonget_str(li, "name", NULL)) != NULL)
		agent_introspect_language = xstrdup(s);
	/* How list_variables answers while a cell runs, for a reader. */
	json_object_object_add(caps, "variables_while_busy",
	    json_object_new_boolean(agent_introspect_dap));
	return (caps);
}
