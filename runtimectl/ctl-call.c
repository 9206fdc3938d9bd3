/* SPDX-License-Identifier: ISC */
/*
 * ctl-call.c: one MCP tool from the shell.  The worker is started as the
 * proxy starts it (spawn_find), but over stdio: initialize, tools/list,
 * tools/call, then stdin is closed and it exits.  A notebook given by
 * path (path= on a tool that takes a notebook_handle, or notebook= on
 * any) is attached with connect_notebook first and released after.
 */

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ctl.h"

#define CTL_CALL_WORKER		"runtimed-mcp-worker"
#define CTL_CALL_PROTOCOL	"2025-06-18"

/*
 * reconnect is the proxy's own tool (it replaces the worker); here every
 * call has a fresh worker already, so it is answered as the proxy would.
 */
#define CTL_CALL_RECONNECT	"reconnect"

struct ctl_call {
	struct ctl_ctx	*ctx;
	pid_t		 pid;
	FILE		*in;		/* the worker's stdout */
	int		 out;		/* the worker's stdin */
	int64_t		 next_id;
};

static int	ctl_call_start(struct ctl_call *);
static void	ctl_call_stop(struct ctl_call *);
static int	ctl_call_send(struct ctl_call *, struct json_object *);
static struct json_object	*ctl_call_rpc(struct ctl_call *, const char *,
		    struct json_object *, struct json_object **);
static int	ctl_call_failed(struct ctl_call *, const char *,
		    struct json_object *);
static struct json_object	*ctl_call_tool(struct ctl_call *, const char *,
		    struct json_object *, int *);
static char	*ctl_call_text(struct json_object *);
static int	ctl_call_is_error(struct json_object *);
static struct json_object	*ctl_call_find(struct json_object *,
		    const char *);
static int	ctl_call_takes(struct json_object *, const char *);
static int	ctl_call_wants_string(struct json_object *, const char *);
static struct json_object	*ctl_call_args(int, char **,
		    struct json_object *);
static int	ctl_call_list(struct ctl_call *, struct json_object *);
static int	ctl_call_reconnect(struct ctl_call *);
static char	*ctl_call_attach(struct ctl_call *, const char *, const char *,
		    int *);
static void	ctl_call_release(struct ctl_call *, const char *);
static int	ctl_call_print(struct ctl_call *, struct json_object *);
static int	ctl_call_save_created(struct ctl_call *, struct json_object *);

/* Start the worker with pipes on its stdin and stdout. */
static int
ctl_call_start(struct ctl_call *c)
{
	char	*path, *argv[3], *cause = NULL;
	int	 to[2], from[2], fd;

	if ((path = spawn_find(CTL_CALL_WORKER, RUNTIMED_LIBEXECDIR,
	    &cause)) == NULL) {
		ctl_client_error("%s", cause);
		free(cause);
		return (-1);
	}
	if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
		ctl_client_error("pipe: %s", strerror(errno));
		free(path);
		return (-1);
	}
	argv[0] = path;
	argv[1] = c->ctx->verbose ? "-v" : NULL;
	argv[2] = NULL;
	switch (c->pid = fork()) {
	case -1:
		ctl_client_error("fork: %s", strerror(errno));
		free(path);
		return (-1);
	case 0:
		dup2(to[0], 0);
		dup2(from[1], 1);
		if (c->ctx->quiet && (fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, 2);
		execv(path, argv);
		fprintf(stderr, "%s: cannot run %s: %s\n",
		    program_invocation_short_name, path, strerror(errno));
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	free(path);
	c->out = to[1];
	c->in = fdopen(from[0], "r");
	return (0);
}

/* Close the worker's stdin (it exits at EOF) and reap it. */
static void
ctl_call_stop(struct ctl_call *c)
{
	if (c->out != -1)
		close(c->out);
	c->out = -1;
	if (c->in != NULL)
		fclose(c->in);
	c->in = NULL;
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
	c->pid = -1;
}

static int
ctl_call_send(struct ctl_call *c, struct json_object *msg)
{
	const char	*s;
	size_t		 len, off = 0;
	ssize_t		 n;

	s = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	while (off <= len) {
		n = write(c->out, off < len ? s + off : "\n", off < len ?
		    len - off : 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		off += (size_t)n;
	}
	return (0);
}

/*
 * A request; returns its result (caller puts), or NULL with *error set
 * to the JSON-RPC error (caller puts) or to NULL if the worker is gone.
 */
static struct json_object *
ctl_call_rpc(struct ctl_call *c, const char *method,
    struct json_object *params, struct json_object **error)
{
	struct json_object	*msg, *v, *res = NULL, *ans;
	char			*line = NULL;
	size_t			 cap = 0;
	ssize_t			 n;
	int64_t			 id = ++c->next_id;

	*error = NULL;
	msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_new_int64(id));
	json_object_object_add(msg, "method", json_object_new_string(method));
	if (params != NULL)
		json_object_object_add(msg, "params", params);
	if (ctl_call_send(c, msg) != 0) {
		json_object_put(msg);
		return (NULL);
	}
	json_object_put(msg);
	while ((n = getline(&line, &cap, c->in)) > 0) {
		if ((msg = json_tokener_parse(line)) == NULL)
			continue;
		/* A request of the worker's own (ping): we serve none. */
		if (json_object_object_get_ex(msg, "method", NULL)) {
			if (json_object_object_get_ex(msg, "id", &v)) {
				ans = json_object_new_object();
				json_object_object_add(ans, "jsonrpc",
				    json_object_new_string("2.0"));
				json_object_object_add(ans, "id",
				    json_object_get(v));
				json_object_object_add(ans, "result",
				    json_object_new_object());
				ctl_call_send(c, ans);
				json_object_put(ans);
			}
			json_object_put(msg);
			continue;
		}
		if (!json_object_object_get_ex(msg, "id", &v) ||
		    json_object_get_int64(v) != id) {
			json_object_put(msg);
			continue;
		}
		if (json_object_object_get_ex(msg, "result", &v))
			res = json_object_get(v);
		else if (json_object_object_get_ex(msg, "error", &v))
			*error = json_object_get(v);
		json_object_put(msg);
		break;
	}
	free(line);
	return (res);
}

/* Say what went wrong with a request; the worker's exit if it died. */
static int
ctl_call_failed(struct ctl_call *c, const char *what, struct json_object *e)
{
	struct json_object	*m;
	int			 status;

	if (e != NULL) {
		ctl_client_error("%s: %s", what,
		    json_object_object_get_ex(e, "message", &m) ?
		    json_object_get_string(m) : json_object_to_json_string(e));
		json_object_put(e);
		return (CTL_EXIT_FAIL);
	}
	close(c->out);
	c->out = -1;
	if (c->pid > 0 && waitpid(c->pid, &status, 0) == c->pid) {
		c->pid = -1;
		ctl_client_error("%s: the worker exited (status %d) without "
		    "an answer; runtimectl -v call ... shows its log", what,
		    WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status));
	} else
		ctl_client_error("%s: no answer from the worker", what);
	return (CTL_EXIT_WORKER);
}

/* One tools/call; the result (caller puts) or NULL with *rc set. */
static struct json_object *
ctl_call_tool(struct ctl_call *c, const char *name, struct json_object *args,
    int *rc)
{
	struct json_object	*p, *res, *e;

	p = json_object_new_object();
	json_object_object_add(p, "name", json_object_new_string(name));
	json_object_object_add(p, "arguments", json_object_get(args));
	if ((res = ctl_call_rpc(c, "tools/call", p, &e)) == NULL)
		*rc = ctl_call_failed(c, name, e);
	return (res);
}

/* The text of a tool's content, joined by newlines; caller frees. */
static char *
ctl_call_text(struct json_object *res)
{
	struct json_object	*content, *item, *v;
	char			*out = xstrdup(""), *next;
	size_t			 i;

	if (!json_object_object_get_ex(res, "content", &content) ||
	    !json_object_is_type(content, json_type_array))
		return (out);
	for (i = 0; i < json_object_array_length(content); i++) {
		item = json_object_array_get_idx(content, i);
		if (!json_object_object_get_ex(item, "type", &v) ||
		    strcmp(json_object_get_string(v), "text") != 0 ||
		    !json_object_object_get_ex(item, "text", &v))
			continue;
		xasprintf(&next, "%s%s%s", out, *out != '\0' ? "\n" : "",
		    json_object_get_string(v));
		free(out);
		out = next;
	}
	return (out);
}

static int
ctl_call_is_error(struct json_object *res)
{
	struct json_object	*v;

	return (json_object_object_get_ex(res, "isError", &v) &&
	    json_object_get_boolean(v));
}

/* The tool named name in a tools/list result, or NULL. */
static struct json_object *
ctl_call_find(struct json_object *list, const char *name)
{
	struct json_object	*tools, *t, *v;
	size_t			 i;

	if (!json_object_object_get_ex(list, "tools", &tools))
		return (NULL);
	for (i = 0; i < json_object_array_length(tools); i++) {
		t = json_object_array_get_idx(tools, i);
		if (json_object_object_get_ex(t, "name", &v) &&
		    strcmp(json_object_get_string(v), name) == 0)
			return (t);
	}
	return (NULL);
}

/* Does tool t take argument key? */
static int
ctl_call_takes(struct json_object *t, const char *key)
{
	struct json_object	*s, *props;

	return (json_object_object_get_ex(t, "inputSchema", &s) &&
	    json_object_object_get_ex(s, "properties", &props) &&
	    json_object_object_get_ex(props, key, NULL));
}

/* Does tool t want key as a string only (so "42" stays text)? */
static int
ctl_call_wants_string(struct json_object *t, const char *key)
{
	struct json_object	*s, *props, *p, *type;

	return (t != NULL &&
	    json_object_object_get_ex(t, "inputSchema", &s) &&
	    json_object_object_get_ex(s, "properties", &props) &&
	    json_object_object_get_ex(props, key, &p) &&
	    json_object_object_get_ex(p, "type", &type) &&
	    json_object_is_type(type, json_type_string) &&
	    strcmp(json_object_get_string(type), "string") == 0);
}

/*
 * key=value ...: a value that parses as JSON is that, else a string; a
 * string too where tool t (or NULL) takes only a string.  NULL if one
 * argument is not key=value.
 */
static struct json_object *
ctl_call_args(int argc, char **argv, struct json_object *t)
{
	struct json_object	*args, *v;
	enum json_tokener_error	 jerr;
	char			*eq, *key;
	int			 i;

	args = json_object_new_object();
	for (i = 0; i < argc; i++) {
		if ((eq = strchr(argv[i], '=')) == NULL || eq == argv[i]) {
			ctl_client_error("call: %s is not key=value", argv[i]);
			json_object_put(args);
			return (NULL);
		}
		key = xstrndup(argv[i], eq - argv[i]);
		v = NULL;
		if (!ctl_call_wants_string(t, key)) {
			v = json_tokener_parse_verbose(eq + 1, &jerr);
			if (jerr != json_tokener_success || eq[1] == '\0') {
				json_object_put(v);
				v = NULL;
			}
		}
		if (v == NULL)
			v = json_object_new_string(eq + 1);
		json_object_object_add(args, key, v);
		free(key);
	}
	return (args);
}

/* --list: the tools' names, or their whole catalog with --json. */
static int
ctl_call_list(struct ctl_call *c, struct json_object *list)
{
	struct json_object	*tools, *v;
	size_t			 i;

	if (c->ctx->json) {
		ctl_term_json(json_object_to_json_string_ext(list,
		    JSON_C_TO_STRING_PRETTY |
		    JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
		return (CTL_EXIT_OK);
	}
	if (!json_object_object_get_ex(list, "tools", &tools))
		return (CTL_EXIT_WORKER);
	printf("%s\n", CTL_CALL_RECONNECT);
	for (i = 0; i < json_object_array_length(tools); i++) {
		if (json_object_object_get_ex(json_object_array_get_idx(tools,
		    i), "name", &v))
			printf("%s\n", json_object_get_string(v));
	}
	return (CTL_EXIT_OK);
}

/* reconnect: the worker this call started is the fresh one. */
static int
ctl_call_reconnect(struct ctl_call *c)
{
	struct json_object	*sc;

	if (!c->ctx->json) {
		printf("a fresh worker (pid %ld) serves each runtimectl call; "
		    "no handles to expire\n", (long)c->pid);
		return (CTL_EXIT_OK);
	}
	sc = json_object_new_object();
	json_object_object_add(sc, "worker_pid",
	    json_object_new_int64(c->pid));
	json_object_object_add(sc, "previous_worker_pid", NULL);
	json_object_object_add(sc, "handles_expired",
	    json_object_new_boolean(0));
	ctl_term_json(json_object_to_json_string_ext(sc,
	    JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	json_object_put(sc);
	return (CTL_EXIT_OK);
}

/*
 * Attach the notebook at path (or of notebook_id): its handle, or NULL
 * with *rc set.  Caller frees.
 */
static char *
ctl_call_attach(struct ctl_call *c, const char *key, const char *value,
    int *rc)
{
	struct json_object	*args, *res, *sc, *h;
	char			*text, *handle = NULL;

	args = json_object_new_object();
	json_object_object_add(args, key, json_object_new_string(value));
	res = ctl_call_tool(c, "connect_notebook", args, rc);
	json_object_put(args);
	if (res == NULL)
		return (NULL);
	if (ctl_call_is_error(res)) {
		text = ctl_call_text(res);
		ctl_client_error("%s: %s", value, text);
		free(text);
		*rc = CTL_EXIT_FAIL;
	} else if (json_object_object_get_ex(res, "structuredContent", &sc) &&
	    json_object_object_get_ex(sc, "notebook_handle", &h))
		handle = xstrdup(json_object_get_string(h));
	else {
		ctl_client_error("connect_notebook gave no notebook_handle");
		*rc = CTL_EXIT_WORKER;
	}
	json_object_put(res);
	return (handle);
}

static void
ctl_call_release(struct ctl_call *c, const char *handle)
{
	struct json_object	*args, *res;
	int			 rc;

	args = json_object_new_object();
	json_object_object_add(args, "notebook_handle",
	    json_object_new_string(handle));
	res = ctl_call_tool(c, "disconnect_notebook", args, &rc);
	json_object_put(args);
	json_object_put(res);
}

/*
 * Print a tool's answer; its exit code: 1 for a tool error, and for a run
 * (run_cells, get_results) whose status is error, a cell raised, so that
 * a script stops as it would on a failing command.
 */
static int
ctl_call_print(struct ctl_call *c, struct json_object *res)
{
	struct json_object	*sc = NULL, *v;
	char			*text;
	int			 error = ctl_call_is_error(res), raised = 0;

	text = ctl_call_text(res);
	if (!json_object_object_get_ex(res, "structuredContent", &sc))
		sc = NULL;
	if (!error && sc != NULL &&
	    json_object_object_get_ex(sc, "execution_id", NULL) &&
	    json_object_object_get_ex(sc, "status", &v) &&
	    strcmp(json_object_get_string(v), "error") == 0)
		raised = 1;
	/* A notebook's text is anyone's: no escape reaches the terminal. */
	if (error)
		ctl_term_puts(text, stderr);
	else if (c->ctx->json && sc != NULL)
		ctl_term_json(json_object_to_json_string_ext(sc,
		    JSON_C_TO_STRING_PRETTY |
		    JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	else if (*text != '\0')
		ctl_term_puts(text, stdout);
	free(text);
	return (error || raised ? CTL_EXIT_FAIL : CTL_EXIT_OK);
}

/*
 * create_notebook with a path from the shell: the call's worker goes at
 * once, so the new notebook is saved now, or no file would be there to
 * find (the daemon writes a notebook at its first save or autosave).
 */
static int
ctl_call_save_created(struct ctl_call *c, struct json_object *res)
{
	struct json_object	*sc, *h, *p, *id, *args, *saved;
	char			*text;
	int			 rc = CTL_EXIT_OK;

	if (ctl_call_is_error(res) ||
	    !json_object_object_get_ex(res, "structuredContent", &sc) ||
	    !json_object_object_get_ex(sc, "notebook_handle", &h))
		return (CTL_EXIT_OK);
	if (!json_object_object_get_ex(sc, "path", &p) ||
	    !json_object_is_type(p, json_type_string)) {
		/* Untitled: it lives in the daemon until saved with a path. */
		if (json_object_object_get_ex(sc, "notebook_id", &id))
			fprintf(stderr, "untitled: runtimed holds it (runtimectl "
			    "rooms); write it to a file with runtimectl call "
			    "save_notebook notebook_id=%s path=FILE\n",
			    json_object_get_string(id));
		return (CTL_EXIT_OK);
	}
	args = json_object_new_object();
	json_object_object_add(args, "notebook_handle", json_object_get(h));
	saved = ctl_call_tool(c, "save_notebook", args, &rc);
	json_object_put(args);
	if (saved == NULL)
		return (rc);
	if (ctl_call_is_error(saved)) {
		text = ctl_call_text(saved);
		ctl_client_error("created, but not saved: %s", text);
		free(text);
		rc = CTL_EXIT_FAIL;
	}
	json_object_put(saved);
	return (rc);
}

int
ctl_call(struct ctl_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	struct ctl_call		 c;
	struct json_object	*args = NULL, *p, *info, *list = NULL, *e;
	struct json_object	*caps, *ex;
	struct json_object	*tool, *res, *v;
	const char		*name, *key = NULL;
	char			*json = NULL, *target = NULL;
	char			*handle = NULL;
	int			 ch, list_only = 0, rc = CTL_EXIT_OK;

	optind = 0;	/* GNU getopt: start afresh */
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = optarg;
			break;
		case 'l':
			list_only = 1;
			break;
		default:
			return (CTL_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (!list_only && argc < 1) {
		ctl_client_error("call: name a tool (runtimectl call --list "
		    "names them)");
		return (CTL_EXIT_USAGE);
	}
	name = list_only ? NULL : argv[0];
	if (name != NULL) {
		if (json != NULL && argc > 1) {
			ctl_client_error("call: give --json ARGS or key=value "
			    "pairs, not both");
			return (CTL_EXIT_USAGE);
		}
		if (json != NULL) {
			args = json_tokener_parse(json);
			if (args == NULL ||
			    !json_object_is_type(args, json_type_object)) {
				ctl_client_error("call: --json takes a JSON "
				    "object, like '{\"path\": \"a.ipynb\"}'");
				json_object_put(args);
				return (CTL_EXIT_USAGE);
			}
		} else if ((args = ctl_call_args(argc - 1, argv + 1,
		    NULL)) == NULL)
			return (CTL_EXIT_USAGE);
	}
	memset(&c, 0, sizeof c);
	c.ctx = ctx;
	c.out = -1;
	signal(SIGPIPE, SIG_IGN);
	if (ctl_call_start(&c) != 0) {
		json_object_put(args);
		return (CTL_EXIT_WORKER);
	}
	p = json_object_new_object();
	json_object_object_add(p, "protocolVersion",
	    json_object_new_string(CTL_CALL_PROTOCOL));
	/* The typed result too (decision 043): --json prints it. */
	caps = json_object_new_object();
	ex = json_object_new_object();
	json_object_object_add(ex, TOOLRESULT_STRUCTURED,
	    json_object_new_object());
	json_object_object_add(caps, "experimental", ex);
	json_object_object_add(p, "capabilities", caps);
	info = json_object_new_object();
	json_object_object_add(info, "name",
	    json_object_new_string("runtimectl"));
	json_object_object_add(info, "version",
	    json_object_new_string(RUNTIMED_VERSION));
	json_object_object_add(p, "clientInfo", info);
	if ((res = ctl_call_rpc(&c, "initialize", p, &e)) == NULL) {
		rc = ctl_call_failed(&c, "initialize", e);
		goto out;
	}
	json_object_put(res);
	p = json_object_new_object();
	json_object_object_add(p, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(p, "method",
	    json_object_new_string("notifications/initialized"));
	ctl_call_send(&c, p);
	json_object_put(p);
	if ((list = ctl_call_rpc(&c, "tools/list", NULL, &e)) == NULL) {
		rc = ctl_call_failed(&c, "tools/list", e);
		goto out;
	}
	if (list_only) {
		rc = ctl_call_list(&c, list);
		goto out;
	}
	if (strcmp(name, CTL_CALL_RECONNECT) == 0 &&
	    ctl_call_find(list, name) == NULL) {
		rc = ctl_call_reconnect(&c);
		goto out;
	}
	if ((tool = ctl_call_find(list, name)) == NULL) {
		ctl_client_error("call: no tool %s (runtimectl call --list "
		    "names them)", name);
		rc = CTL_EXIT_USAGE;
		goto out;
	}
	if (json == NULL) {
		/* Again, now that the tool's schema is known. */
		json_object_put(args);
		args = ctl_call_args(argc - 1, argv + 1, tool);
	}

	/* A notebook named by path: attach it for this one call. */
	if (ctl_call_takes(tool, "notebook_handle") &&
	    !json_object_object_get_ex(args, "notebook_handle", NULL)) {
		/*
		 * path= names the notebook, as for every tool; where the
		 * tool has a path of its own (save_notebook's save-as,
		 * export_notebook's file) that is path= once notebook= or
		 * notebook_id= names the notebook.
		 */
		if (json_object_object_get_ex(args, "notebook", &v))
			key = "notebook";
		else if ((!ctl_call_takes(tool, "path") ||
		    !json_object_object_get_ex(args, "notebook_id", NULL)) &&
		    json_object_object_get_ex(args, "path", &v))
			key = "path";
		else if (json_object_object_get_ex(args, "notebook_id", &v))
			key = "notebook_id";
		if (key != NULL) {
			target = xstrdup(json_object_get_string(v));
			json_object_object_del(args, key);
			json_object_object_del(args, "domain");
			handle = ctl_call_attach(&c, strcmp(key,
			    "notebook_id") == 0 ? "notebook_id" : "path",
			    target, &rc);
			if (handle == NULL)
				goto out;
			json_object_object_add(args, "notebook_handle",
			    json_object_new_string(handle));
		}
	}
	if ((res = ctl_call_tool(&c, name, args, &rc)) != NULL) {
		if (strcmp(name, "create_notebook") == 0)
			rc = ctl_call_save_created(&c, res);
		if (rc == CTL_EXIT_OK)
			rc = ctl_call_print(&c, res);
		json_object_put(res);
	}
	if (handle != NULL && c.pid > 0)
		ctl_call_release(&c, handle);
out:
	ctl_call_stop(&c);
	json_object_put(list);
	json_object_put(args);
	free(target);
	free(handle);
	return (rc);
}
