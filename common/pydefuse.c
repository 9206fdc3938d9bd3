/* SPDX-License-Identifier: ISC */
/*
 * pydefuse.c: the top-level names a python cell may define and the names
 * it reads from outside itself, by a tokenizer and a statement scanner in
 * one pass (docs/decisions/072).  Not a parser: where it cannot tell, it
 * says the cell reads a name (staleness follows more dependencies, never
 * fewer) and turns the undefined-name lint off for the cell (PYDEFUSE_NOLINT):
 * the lint prefers silence to a false warning.
 *
 * A logical line is lexed into tokens (names, operators with their bracket
 * depth, strings; the expressions inside f-string braces come inline in
 * brackets of their own), then read as statements.  Reads of a statement
 * count before its definitions (x = x + 1 reads x); an unconditional
 * definition at the top level (indent 0, not after a header on one line)
 * hides later reads of the name in the cell.  def and class bodies are
 * scopes of their own: what they bind is local; what they read from
 * outside counts unless the cell defines it anywhere (it is read at call
 * time).  Comprehension targets and lambda parameters are local to their
 * brackets.  IPython: %% cell magics whose body is not python make the
 * cell opaque; %time and %timeit lines are read as python after the magic;
 * %run and %pylab may define anything (PYDEFUSE_WILDCARD); other line
 * magics, ! shell lines and ? help lines are skipped.
 */

#include <stdlib.h>
#include <string.h>

#include "common.h"

#define PD_NITEMS(a)	(sizeof (a) / sizeof (a)[0])

enum pd_type {
	PD_NAME,
	PD_OP,
	PD_STR,
	PD_NUM
};

struct pd_tok {
	enum pd_type	 type;
	const char	*p;
	size_t		 len;
	int		 depth;		/* brackets around it (an opener: outside) */
	int		 keyword;	/* a NAME that is a keyword */
};

struct pd_name {
	const char	*p;
	size_t		 len;
};

/* A set of names (slices of the source): open addressing. */
struct pd_set {
	struct pd_name	*slot;
	size_t		 cap;
	size_t		 n;
};

struct pd_vec {
	struct pd_name	*v;
	size_t		 n;
	size_t		 cap;
};

enum pd_scope_kind {
	PD_SCOPE_FUNC,
	PD_SCOPE_CLASS
};

struct pd_scope {
	enum pd_scope_kind	 kind;
	int			 indent;	/* of its header line */
	struct pd_set		 locals;
	struct pd_set		 globals;
	struct pd_vec		 reads;
};

struct pd_frame {
	int		 depth;		/* of the opener */
	int		 trailer;	/* a call or subscript */
	size_t		 rstart;	/* reads before it */
	size_t		 cstart;	/* comprehension names before it */
};

struct pd_lambda {
	int		 depth;
	size_t		 pstart;	/* its parameters in params */
	size_t		 rstart;
};

struct pd_scan {
	const char		*src;
	const char		*end;
	const char		*p;
	int			 first;		/* at the cell's first line */
	int			 flags;
	int			 depth;
	int			 skipline;	/* a magic: drop the line */

	struct pd_tok		*tok;
	size_t			 ntok;
	size_t			 captok;
	int			 indent;

	/* The statement being read. */
	struct pd_vec		 sreads;
	struct pd_vec		 sdefs;
	struct pd_vec		 cnames;	/* comprehension targets */
	struct pd_vec		 params;	/* lambda parameters */

	/* The module. */
	struct pd_set		 defs;
	struct pd_set		 mask;
	struct pd_set		 uses;
	struct pd_vec		 late;		/* reads from def/class bodies */

	struct pd_scope		*scope;
	size_t			 nscope;
	size_t			 capscope;
};

enum pd_mode {
	PD_READ,
	PD_TARGET,	/* names bound; subscripts and attributes read */
	PD_AUG,		/* bound and read (x += 1, del x) */
	PD_CASE		/* a case pattern: capture names bound */
};

static const char *const pydefuse_keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await",
	"break", "class", "continue", "def", "del", "elif", "else", "except",
	"finally", "for", "from", "global", "if", "import", "in", "is",
	"lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
	"while", "with", "yield"
};

/* dir(builtins) of python 3.13, and the names IPython puts in the user's
 * namespace; sorted (strcmp). */
static const char *const pydefuse_known_names[] = {
	"ArithmeticError", "AssertionError", "AttributeError",
	"BaseException", "BaseExceptionGroup", "BlockingIOError",
	"BrokenPipeError", "BufferError", "BytesWarning",
	"ChildProcessError", "ConnectionAbortedError", "ConnectionError",
	"ConnectionRefusedError", "ConnectionResetError",
	"DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning",
	"EnvironmentError", "Exception", "ExceptionGroup", "False",
	"FileExistsError", "FileNotFoundError", "FloatingPointError",
	"FutureWarning", "GeneratorExit", "IOError", "ImportError",
	"ImportWarning", "In", "IndentationError", "IndexError",
	"InterruptedError", "IsADirectoryError", "KeyError",
	"KeyboardInterrupt", "LookupError", "MemoryError",
	"ModuleNotFoundError", "NameError", "None", "NotADirectoryError",
	"NotImplemented", "NotImplementedError", "OSError", "Out",
	"OverflowError", "PendingDeprecationWarning", "PermissionError",
	"ProcessLookupError", "PythonFinalizationError", "RecursionError",
	"ReferenceError", "ResourceWarning", "RuntimeError",
	"RuntimeWarning", "StopAsyncIteration", "StopIteration",
	"SyntaxError", "SyntaxWarning", "SystemError", "SystemExit",
	"TabError", "TimeoutError", "True", "TypeError",
	"UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
	"UnicodeError", "UnicodeTranslateError", "UnicodeWarning",
	"UserWarning", "ValueError", "Warning", "ZeroDivisionError", "_",
	"__", "__IPYTHON__", "___", "__annotations__", "__build_class__",
	"__builtin__", "__builtins__", "__debug__", "__doc__", "__file__",
	"__import__", "__loader__", "__name__", "__package__", "__spec__",
	"_dh", "_i", "_ih", "_ii", "_iii", "_oh", "abs", "aiter", "all",
	"anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray",
	"bytes", "callable", "chr", "classmethod", "compile", "complex",
	"copyright", "credits", "delattr", "dict", "dir", "display",
	"divmod", "enumerate", "eval", "exec", "exit", "filter", "float",
	"format", "frozenset", "get_ipython", "getattr", "globals",
	"hasattr", "hash", "help", "hex", "id", "input", "int",
	"isinstance", "issubclass", "iter", "len", "license", "list",
	"locals", "map", "max", "memoryview", "min", "next", "object",
	"oct", "open", "ord", "pow", "print", "property", "quit", "range",
	"repr", "reversed", "round", "set", "setattr", "slice", "sorted",
	"staticmethod", "str", "sum", "super", "tuple", "type", "vars",
	"zip"
};

/* Line magics that bind no name the lint could miss. */
static const char *const pydefuse_quiet_magics[] = {
	"aimport", "alias_magic", "autoawait", "autocall", "autoreload",
	"cd", "clear", "colors", "conda", "config", "debug", "dhist",
	"dirs", "doctest_mode", "env", "history", "less", "load_ext",
	"lsmagic", "magic", "matplotlib", "mkdir", "page", "pdb", "pdef",
	"pdoc", "pfile", "pinfo", "pinfo2", "pip", "popd", "pprint",
	"precision", "psearch", "psource", "pushd", "pwd", "pycat",
	"rehashx", "reload_ext", "tb", "unload_ext", "uv", "who", "who_ls",
	"whos", "xdel", "xmode"
};

/* Cell magics whose body is python (%%capture NAME binds NAME). */
static const char *const pydefuse_python_cell_magics[] = {
	"capture", "prun", "time", "timeit"
};

static void	pd_set_add(struct pd_set *, const char *, size_t);
static int	pd_set_has(const struct pd_set *, const char *, size_t);
static void	pd_set_free(struct pd_set *);
static void	pd_vec_add(struct pd_vec *, const char *, size_t);
static int	pd_in(const char *const *, size_t, const char *, size_t);
static int	pd_keyword(const struct pd_tok *);
static int	pd_kw(const char *, size_t);
static int	pd_is_n(const struct pd_tok *, const char *, size_t);
static int	pd_name_is_n(const struct pd_tok *, const char *, size_t);

/* Of a string literal only ("" refuses anything else): its length is
 * known at compile time (these are hot). */
#define pd_is(t, op)		pd_is_n((t), "" op, sizeof ("" op) - 1)
#define pd_name_is(t, name)	pd_name_is_n((t), "" name, sizeof ("" name) - 1)
static void	pd_emit(struct pd_scan *, enum pd_type, const char *, size_t);
static const char *pd_skip_string(const char *, const char *);
static const char *pd_skip_field(const char *, const char *);
static const char *pd_string(struct pd_scan *, const char *, const char *);
static void	pd_fbody(struct pd_scan *, const char *, const char *);
static const char *pd_lex(struct pd_scan *, const char *, const char *,
		    int);
static int	pd_magic(struct pd_scan *, const char **);
static int	pd_line(struct pd_scan *);
static void	pd_read(struct pd_scan *, const struct pd_tok *);
static void	pd_def(struct pd_scan *, const struct pd_tok *);
static void	pd_comp_filter(struct pd_scan *, size_t, size_t);
static void	pd_lambda_end(struct pd_scan *, struct pd_lambda *);
static void	pd_expr(struct pd_scan *, size_t, size_t, enum pd_mode);
static void	pd_commit(struct pd_scan *, int);
static void	pd_scope_push(struct pd_scan *, enum pd_scope_kind, int);
static void	pd_scope_pop(struct pd_scan *);
static ssize_t	pd_find(struct pd_scan *, size_t, size_t, const char *, int);
static ssize_t	pd_header_colon(struct pd_scan *, size_t, size_t);
static void	pd_import(struct pd_scan *, size_t, size_t);
static void	pd_from(struct pd_scan *, size_t, size_t);
static void	pd_names(struct pd_scan *, size_t, size_t, int);
static void	pd_with(struct pd_scan *, size_t, size_t);
static void	pd_funcdef(struct pd_scan *, size_t, size_t, int);
static void	pd_simple(struct pd_scan *, size_t, size_t, int);
static void	pd_body(struct pd_scan *, size_t, size_t, int);
static void	pd_statement(struct pd_scan *);
static int	pd_compare(const void *, const void *);
static const char **pd_collect(const struct pd_set *, char **, size_t *);

static uint32_t
pd_hash(const char *p, size_t len)
{
	uint32_t	h = 2166136261u;

	while (len-- > 0)
		h = (h ^ (u_char)*p++) * 16777619u;
	return (h);
}

static void
pd_set_add(struct pd_set *s, const char *p, size_t len)
{
	struct pd_name	*old;
	size_t		 oldcap, i, k;

	if (pd_set_has(s, p, len))
		return;
	if (2 * (s->n + 1) > s->cap) {
		old = s->slot;
		oldcap = s->cap;
		s->cap = oldcap == 0 ? 16 : 2 * oldcap;
		s->slot = xcalloc(s->cap, sizeof *s->slot);
		s->n = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].p != NULL)
				pd_set_add(s, old[i].p, old[i].len);
		free(old);
	}
	k = pd_hash(p, len) & (s->cap - 1);
	while (s->slot[k].p != NULL)
		k = (k + 1) & (s->cap - 1);
	s->slot[k].p = p;
	s->slot[k].len = len;
	s->n++;
}

static int
pd_set_has(const struct pd_set *s, const char *p, size_t len)
{
	size_t	k;

	if (s->n == 0)
		return (0);
	k = pd_hash(p, len) & (s->cap - 1);
	for (; s->slot[k].p != NULL; k = (k + 1) & (s->cap - 1)) {
		if (s->slot[k].len == len && memcmp(s->slot[k].p, p, len) == 0)
			return (1);
	}
	return (0);
}

static void
pd_set_free(struct pd_set *s)
{
	free(s->slot);
	memset(s, 0, sizeof *s);
}

static void
pd_vec_add(struct pd_vec *v, const char *p, size_t len)
{
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 16 : 2 * v->cap;
		v->v = xreallocarray(v->v, v->cap, sizeof *v->v);
	}
	v->v[v->n].p = p;
	v->v[v->n].len = len;
	v->n++;
}

/* Is the name one of a sorted list? */
static int
pd_in(const char *const *list, size_t n, const char *p, size_t len)
{
	size_t	lo = 0, hi = n, mid;
	int	c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strncmp(list[mid], p, len);
		if (c == 0 && list[mid][len] != '\0')
			c = 1;
		if (c == 0)
			return (1);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (0);
}

static int
pd_keyword(const struct pd_tok *t)
{
	return (t->keyword);
}

static int
pd_is_n(const struct pd_tok *t, const char *op, size_t len)
{
	return (t->type == PD_OP && t->len == len && t->p[0] == op[0] &&
	    memcmp(t->p, op, len) == 0);
}

static int
pd_name_is_n(const struct pd_tok *t, const char *name, size_t len)
{
	return (t->type == PD_NAME && t->len == len && t->p[0] == name[0] &&
	    memcmp(t->p, name, len) == 0);
}

/* A keyword: those of the first letter, by length, then bytes. */
static int
pd_kw(const char *p, size_t len)
{
	size_t	i;

	if (len < 2 || len > 8 || ((*p < 'a' || *p > 'y') && *p != 'F' &&
	    *p != 'N' && *p != 'T'))
		return (0);
	for (i = 0; i < PD_NITEMS(pydefuse_keywords); i++) {
		if (pydefuse_keywords[i][0] > *p)
			break;
		/* strncmp stops at the keyword's end, so [len] is in it. */
		if (pydefuse_keywords[i][0] == *p &&
		    strncmp(pydefuse_keywords[i], p, len) == 0 &&
		    pydefuse_keywords[i][len] == '\0')
			return (1);
	}
	return (0);
}

static void
pd_emit(struct pd_scan *s, enum pd_type type, const char *p, size_t len)
{
	struct pd_tok	*t;

	if (s->ntok == s->captok) {
		s->captok = s->captok == 0 ? 64 : 2 * s->captok;
		s->tok = xreallocarray(s->tok, s->captok, sizeof *s->tok);
	}
	t = &s->tok[s->ntok++];
	t->type = type;
	t->p = p;
	t->len = len;
	t->keyword = type == PD_NAME && pd_kw(p, len);
	if (type == PD_OP && len == 1 && (*p == ')' || *p == ']' ||
	    *p == '}') && s->depth > 0)
		s->depth--;
	t->depth = s->depth;
	if (type == PD_OP && len == 1 && (*p == '(' || *p == '[' ||
	    *p == '{'))
		s->depth++;
}

static int
pd_ident(u_char c)
{
	return (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c >= 0x80);
}

/* At p a string's prefix and quote: the prefix's length, else -1. */
static int
pd_string_at(const char *p, const char *end)
{
	int	n;

	for (n = 0; n < 3 && p + n < end; n++) {
		switch (p[n]) {
		case '\'':
		case '"':
			return (n);
		case 'r': case 'R': case 'b': case 'B': case 'u': case 'U':
		case 'f': case 'F': case 't': case 'T':
			continue;
		default:
			return (-1);
		}
	}
	return (-1);
}

/* Past the string at p (prefix included), or end. */
static const char *
pd_skip_string(const char *p, const char *end)
{
	const char	*q;
	int		 n, f, triple;
	char		 quote;

	if ((n = pd_string_at(p, end)) < 0)
		return (p + 1);
	f = memchr(p, 'f', n) != NULL || memchr(p, 'F', n) != NULL ||
	    memchr(p, 't', n) != NULL || memchr(p, 'T', n) != NULL;
	q = p + n;
	quote = *q;
	triple = end - q >= 3 && q[1] == quote && q[2] == quote;
	q += triple ? 3 : 1;
	while (q < end) {
		if (*q == '\\') {
			q += end - q >= 2 ? 2 : 1;
			continue;
		}
		if (*q == quote && (!triple || (end - q >= 3 &&
		    q[1] == quote && q[2] == quote)))
			return (q + (triple ? 3 : 1));
		if (!triple && *q == '\n')
			return (q);
		if (f && *q == '{') {
			if (q + 1 < end && q[1] == '{')
				q += 2;
			else
				q = pd_skip_field(q + 1, end);
			continue;
		}
		q++;
	}
	return (end);
}

/* Past the '}' that closes the f-string field starting at p, or end. */
static const char *
pd_skip_field(const char *p, const char *end)
{
	int	depth = 0;

	while (p < end) {
		if (pd_string_at(p, end) >= 0 && (p[0] == '\'' ||
		    p[0] == '"' || !pd_ident((u_char)p[-1]))) {
			p = pd_skip_string(p, end);
			continue;
		}
		if (*p == '{' || *p == '(' || *p == '[')
			depth++;
		else if (*p == ')' || *p == ']')
			depth--;
		else if (*p == '}' && depth-- == 0)
			return (p + 1);
		p++;
	}
	return (end);
}

/*
 * The string at p: a token, and for an f-string the expression of each
 * field inline, in brackets of its own.
 */
static const char *
pd_string(struct pd_scan *s, const char *p, const char *end)
{
	const char	*q, *body;
	int		 n, f, triple;

	q = pd_skip_string(p, end);
	pd_emit(s, PD_STR, p, q - p);
	n = pd_string_at(p, end);
	f = memchr(p, 'f', n) != NULL || memchr(p, 'F', n) != NULL ||
	    memchr(p, 't', n) != NULL || memchr(p, 'T', n) != NULL;
	if (!f)
		return (q);
	triple = end - (p + n) >= 3 && p[n + 1] == p[n] && p[n + 2] == p[n];
	body = p + n + (triple ? 3 : 1);
	pd_fbody(s, body, q);
	return (q);
}

/* The fields of an f-string's body (or of a format spec) in [p, end). */
static void
pd_fbody(struct pd_scan *s, const char *p, const char *end)
{
	const char	*f, *fe, *e, *x;
	int		 depth;

	while (p < end) {
		if (*p == '\\') {
			p += end - p >= 2 ? 2 : 1;
			continue;
		}
		if (*p != '{') {
			p++;
			continue;
		}
		if (p + 1 < end && p[1] == '{') {
			p += 2;
			continue;
		}
		f = p + 1;
		fe = pd_skip_field(f, end);	/* past '}' */
		if (fe > end)
			fe = end;
		/* The expression ends at a conversion or a spec. */
		depth = 0;
		for (e = f; e < fe - 1; e++) {
			if (pd_string_at(e, fe) >= 0 && (*e == '\'' ||
			    *e == '"' || !pd_ident((u_char)e[-1]))) {
				e = pd_skip_string(e, fe) - 1;
				continue;
			}
			if (strchr("([{", *e) != NULL)
				depth++;
			else if (strchr(")]}", *e) != NULL)
				depth--;
			else if (depth == 0 && *e == '!' && e[1] != '=')
				break;
			else if (depth == 0 && *e == ':')
				break;
		}
		if (e > fe - 1)
			e = fe - 1;
		/* {x=} shows x: the '=' is no keyword argument. */
		for (x = e; x > f && (x[-1] == ' ' || x[-1] == '\t'); x--)
			;
		if (x - f >= 2 && x[-1] == '=' &&
		    strchr("=!<>", x[-2]) == NULL)
			x--;
		pd_emit(s, PD_OP, "(", 1);
		pd_lex(s, f, x, 1);
		pd_emit(s, PD_OP, ")", 1);
		if (e < fe - 1 && *e == '!')
			while (e < fe - 1 && *e != ':')
				e++;	/* !r, then the spec */
		if (e < fe - 1 && *e == ':')
			pd_fbody(s, e + 1, fe - 1);
		p = fe;
	}
}

/*
 * Tokens from p up to the end of the logical line (nested: up to end,
 * newlines are blanks).  Returns where it stopped: at the newline.
 */
static const char *
pd_lex(struct pd_scan *s, const char *p, const char *end, int nested)
{
	static const char *const ops3[] = { "**=", "//=", ">>=", "<<=",
	    "..." };
	static const char *const ops2[] = { ":=", "==", "!=", "<=", ">=",
	    "->", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "**",
	    "//", "<<", ">>" };
	const char	*q;
	size_t		 i;
	int		 depth0 = s->depth;

	while (p < end) {
		switch (*p) {
		case ' ':
		case '\t':
		case '\f':
			p++;
			continue;
		case '\\':
			if (p + 1 < end && p[1] == '\n') {
				p += 2;
				continue;
			}
			if (end - p >= 3 && p[1] == '\r' && p[2] == '\n') {
				p += 3;
				continue;
			}
			p++;
			continue;
		case '\r':
		case '\n':
			if (nested || s->depth > 0) {
				p++;
				continue;
			}
			return (p);
		case '#':
			while (p < end && *p != '\n')
				p++;
			continue;
		case '?':
			/* x? and x?? ask for help: not python. */
			s->skipline = 1;
			while (p < end && *p != '\n')
				p++;
			continue;
		case '!':
			if (p + 1 < end && p[1] == '=')
				break;
			/* x = !ls: a shell line, x bound. */
			while (p < end && *p != '\n')
				p++;
			continue;
		case '%':
			if (s->ntok > 0 && pd_is(&s->tok[s->ntok - 1], "=") &&
			    s->depth == depth0) {
				/* x = %sx ls */
				while (p < end && *p != '\n')
					p++;
				continue;
			}
			break;
		}
		if (pd_string_at(p, end) >= 0) {
			p = pd_string(s, p, end);
			continue;
		}
		if ((*p >= '0' && *p <= '9') || (*p == '.' && p + 1 < end &&
		    p[1] >= '0' && p[1] <= '9')) {
			q = p;
			while (q < end && (pd_ident((u_char)*q) || *q == '.' ||
			    ((*q == '+' || *q == '-') &&
			    (q[-1] == 'e' || q[-1] == 'E') &&
			    !(p[0] == '0' && p + 1 < end &&
			    (p[1] == 'x' || p[1] == 'X')))))
				q++;
			pd_emit(s, PD_NUM, p, q - p);
			p = q;
			continue;
		}
		if (pd_ident((u_char)*p)) {
			for (q = p; q < end && pd_ident((u_char)*q); q++)
				;
			pd_emit(s, PD_NAME, p, q - p);
			p = q;
			continue;
		}
		for (i = 0; i < PD_NITEMS(ops3); i++) {
			if (end - p >= 3 && memcmp(p, ops3[i], 3) == 0)
				break;
		}
		if (i < PD_NITEMS(ops3)) {
			pd_emit(s, PD_OP, p, 3);
			p += 3;
			continue;
		}
		for (i = 0; i < PD_NITEMS(ops2); i++) {
			if (end - p >= 2 && memcmp(p, ops2[i], 2) == 0)
				break;
		}
		if (i < PD_NITEMS(ops2)) {
			pd_emit(s, PD_OP, p, 2);
			p += 2;
			continue;
		}
		if (strchr("()[]{}:;,.=+-*/%@&|^~<>", *p) != NULL)
			pd_emit(s, PD_OP, p, 1);
		p++;
	}
	return (p);
}

/* The magic at *pp (a line starting with % or !): 1 to lex the rest. */
static int
pd_magic(struct pd_scan *s, const char **pp)
{
	const char	*p = *pp, *w, *we, *eol;
	size_t		 len;
	int		 cell;

	for (eol = p; eol < s->end && *eol != '\n'; eol++)
		;
	if (*p == '!') {
		*pp = eol;
		return (0);
	}
	cell = eol - p >= 2 && p[1] == '%';
	w = p + (cell ? 2 : 1);
	for (we = w; we < eol && pd_ident((u_char)*we); we++)
		;
	len = we - w;
	if (cell) {
		if (!s->first || !pd_in(pydefuse_python_cell_magics,
		    PD_NITEMS(pydefuse_python_cell_magics), w, len)) {
			/* Not python below (%%bash, %%writefile ...). */
			s->flags |= PYDEFUSE_NOLINT;
			*pp = s->end;
			return (0);
		}
		if (len == 7 && memcmp(w, "capture", 7) == 0) {
			/* %%capture [--no-stdout ...] [name] */
			pd_lex(s, we, eol, 1);
			if (s->ntok > 0 && s->tok[s->ntok - 1].type ==
			    PD_NAME && (s->ntok == 1 ||
			    !pd_is(&s->tok[s->ntok - 2], "-")))
				pd_vec_add(&s->sdefs, s->tok[s->ntok - 1].p,
				    s->tok[s->ntok - 1].len);
			s->ntok = 0;
			s->depth = 0;
			pd_commit(s, 1);
		}
		*pp = eol;
		return (0);
	}
	if ((len == 4 && memcmp(w, "time", 4) == 0) ||
	    (len == 6 && memcmp(w, "timeit", 6) == 0) ||
	    (len == 4 && memcmp(w, "prun", 4) == 0)) {
		/* The statement after the options is python. */
		p = we;
		for (;;) {
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
			if (p >= eol || *p != '-')
				break;
			while (p < eol && *p != ' ' && *p != '\t')
				p++;
		}
		*pp = p;
		return (1);
	}
	if ((len == 3 && memcmp(w, "run", 3) == 0) ||
	    (len == 5 && memcmp(w, "pylab", 5) == 0))
		s->flags |= PYDEFUSE_WILDCARD | PYDEFUSE_NOLINT;
	else if (!pd_in(pydefuse_quiet_magics, PD_NITEMS(pydefuse_quiet_magics),
	    w, len))
		s->flags |= PYDEFUSE_NOLINT;
	*pp = eol;
	return (0);
}

/* The next logical line into tok: 0 at the end of the cell. */
static int
pd_line(struct pd_scan *s)
{
	const char	*p;
	int		 col, lex;

	while ((p = s->p) < s->end) {
		col = 0;
		for (; p < s->end && (*p == ' ' || *p == '\t' || *p == '\f');
		    p++)
			col = *p == '\t' ? (col / 8 + 1) * 8 : col + 1;
		if (p < s->end && (*p == '\n' || *p == '\r' || *p == '#')) {
			while (p < s->end && *p != '\n')
				p++;
			s->p = p < s->end ? p + 1 : p;
			continue;	/* blank: IPython drops it */
		}
		s->ntok = 0;
		s->depth = 0;
		s->skipline = 0;
		s->indent = col;
		lex = 1;
		if (p < s->end && (*p == '%' || *p == '!'))
			lex = pd_magic(s, &p);
		s->first = 0;
		if (lex)
			p = pd_lex(s, p, s->end, 0);
		else
			while (p < s->end && *p != '\n')
				p++;
		s->p = p < s->end ? p + 1 : p;
		if (s->skipline)
			s->ntok = 0;
		if (s->ntok > 0)
			return (1);
	}
	return (0);
}

/* A name the statement reads. */
static void
pd_read(struct pd_scan *s, const struct pd_tok *t)
{
	pd_vec_add(&s->sreads, t->p, t->len);
}

/* A name the statement binds. */
static void
pd_def(struct pd_scan *s, const struct pd_tok *t)
{
	/* Only a name binds: "import m as" before junk binds nothing. */
	if (t->type != PD_NAME || t->len == 0)
		return;
	pd_vec_add(&s->sdefs, t->p, t->len);
}

/* Reads since rstart of the names in v from vstart: local, dropped. */
static void
pd_filter(struct pd_scan *s, size_t rstart, const struct pd_vec *v,
    size_t vstart)
{
	size_t	i, j, k;

	for (i = k = rstart; i < s->sreads.n; i++) {
		for (j = vstart; j < v->n; j++) {
			if (v->v[j].len == s->sreads.v[i].len &&
			    memcmp(v->v[j].p, s->sreads.v[i].p,
			    v->v[j].len) == 0)
				break;
		}
		if (j == v->n)
			s->sreads.v[k++] = s->sreads.v[i];
	}
	s->sreads.n = k;
}

static void
pd_comp_filter(struct pd_scan *s, size_t rstart, size_t cstart)
{
	if (s->cnames.n > cstart)
		pd_filter(s, rstart, &s->cnames, cstart);
	s->cnames.n = cstart;
}

static void
pd_lambda_end(struct pd_scan *s, struct pd_lambda *l)
{
	if (s->params.n > l->pstart)
		pd_filter(s, l->rstart, &s->params, l->pstart);
	s->params.n = l->pstart;
}

/* The names of tokens [a, b) as mode says. */
static void
pd_expr(struct pd_scan *s, size_t a, size_t b, enum pd_mode mode)
{
	struct pd_frame		*fr = NULL;
	struct pd_lambda	*lam = NULL;
	struct pd_tok		*t = s->tok, *prev, *next;
	size_t			 nfr = 0, capfr = 0, nlam = 0, caplam = 0;
	size_t			 i, j, ntrailer = 0;

	for (i = a; i < b; i++) {
		prev = i > a ? &t[i - 1] : NULL;
		next = i + 1 < b ? &t[i + 1] : NULL;
		if (t[i].type == PD_OP && t[i].len == 1 && (*t[i].p == '(' ||
		    *t[i].p == '[' || *t[i].p == '{')) {
			if (nfr == capfr) {
				capfr = capfr == 0 ? 8 : 2 * capfr;
				fr = xreallocarray(fr, capfr, sizeof *fr);
			}
			fr[nfr].depth = t[i].depth;
			fr[nfr].trailer = prev != NULL &&
			    ((prev->type == PD_NAME && !pd_keyword(prev)) ||
			    prev->type == PD_STR || pd_is(prev, ")") ||
			    pd_is(prev, "]") || pd_is(prev, "}"));
			fr[nfr].rstart = s->sreads.n;
			fr[nfr].cstart = s->cnames.n;
			ntrailer += fr[nfr].trailer;
			nfr++;
			continue;
		}
		if (t[i].type == PD_OP && t[i].len == 1 && (*t[i].p == ')' ||
		    *t[i].p == ']' || *t[i].p == '}' || *t[i].p == ',' ||
		    *t[i].p == ':')) {
			/* A lambda ends at a comma or bracket of its own. */
			while (nlam > 0 && (lam[nlam - 1].depth > t[i].depth ||
			    (lam[nlam - 1].depth == t[i].depth &&
			    *t[i].p != ':')))
				pd_lambda_end(s, &lam[--nlam]);
			if (*t[i].p != ',' && *t[i].p != ':' && nfr > 0) {
				nfr--;
				ntrailer -= fr[nfr].trailer;
				pd_comp_filter(s, fr[nfr].rstart,
				    fr[nfr].cstart);
			}
			continue;
		}
		if (t[i].type != PD_NAME)
			continue;
		if (prev != NULL && pd_is(prev, "."))
			continue;	/* an attribute */
		if (pd_name_is(&t[i], "lambda")) {
			if (nlam == caplam) {
				caplam = caplam == 0 ? 4 : 2 * caplam;
				lam = xreallocarray(lam, caplam, sizeof *lam);
			}
			lam[nlam].depth = t[i].depth;
			lam[nlam].pstart = s->params.n;
			for (j = i + 1; j < b && !(pd_is(&t[j], ":") &&
			    t[j].depth == t[i].depth); j++) {
				if (t[j].type != PD_NAME || pd_keyword(&t[j]))
					continue;
				if (t[j].depth == t[i].depth &&
				    (pd_name_is(&t[j - 1], "lambda") ||
				    pd_is(&t[j - 1], ",") ||
				    pd_is(&t[j - 1], "*") ||
				    pd_is(&t[j - 1], "**")))
					pd_vec_add(&s->params, t[j].p,
					    t[j].len);
				else if (!pd_is(&t[j - 1], "."))
					pd_read(s, &t[j]);	/* a default */
			}
			lam[nlam].rstart = s->sreads.n;
			nlam++;
			i = j;
			continue;
		}
		if (pd_name_is(&t[i], "for") && nfr > 0 &&
		    t[i].depth == fr[nfr - 1].depth + 1) {
			/* A comprehension: its targets are its own. */
			for (j = i + 1; j < b && !(pd_name_is(&t[j], "in") &&
			    t[j].depth == t[i].depth); j++) {
				if (t[j].type == PD_NAME && !pd_keyword(&t[j]))
					pd_vec_add(&s->cnames, t[j].p,
					    t[j].len);
			}
			i = j;
			continue;
		}
		if (pd_keyword(&t[i]))
			continue;
		if (next != NULL && pd_is(next, ":=")) {
			pd_def(s, &t[i]);
			continue;
		}
		if (next != NULL && pd_is(next, "=") && t[i].depth > 0)
			continue;	/* f(x=1) */
		if (mode == PD_CASE) {
			if (next == NULL || !(pd_is(next, ".") ||
			    pd_is(next, "(")))
				pd_def(s, &t[i]);
			else
				pd_read(s, &t[i]);
			continue;
		}
		if ((mode == PD_TARGET || mode == PD_AUG) && ntrailer == 0 &&
		    (next == NULL || !(pd_is(next, ".") || pd_is(next, "(") ||
		    pd_is(next, "[")))) {
			pd_def(s, &t[i]);
			if (mode == PD_AUG)
				pd_read(s, &t[i]);
			continue;
		}
		pd_read(s, &t[i]);
	}
	while (nlam > 0)
		pd_lambda_end(s, &lam[--nlam]);
	while (nfr > 0) {
		nfr--;
		pd_comp_filter(s, fr[nfr].rstart, fr[nfr].cstart);
	}
	free(fr);
	free(lam);
}

/* The statement's reads, then its definitions, into the scope it is in. */
static void
pd_commit(struct pd_scan *s, int cond)
{
	struct pd_scope	*sc;
	size_t		 i;

	if (s->nscope == 0) {
		for (i = 0; i < s->sreads.n; i++) {
			if (!pd_set_has(&s->mask, s->sreads.v[i].p,
			    s->sreads.v[i].len))
				pd_set_add(&s->uses, s->sreads.v[i].p,
				    s->sreads.v[i].len);
		}
		for (i = 0; i < s->sdefs.n; i++) {
			pd_set_add(&s->defs, s->sdefs.v[i].p,
			    s->sdefs.v[i].len);
			if (!cond)
				pd_set_add(&s->mask, s->sdefs.v[i].p,
				    s->sdefs.v[i].len);
		}
	} else {
		sc = &s->scope[s->nscope - 1];
		for (i = 0; i < s->sreads.n; i++)
			pd_vec_add(&sc->reads, s->sreads.v[i].p,
			    s->sreads.v[i].len);
		for (i = 0; i < s->sdefs.n; i++) {
			if (pd_set_has(&sc->globals, s->sdefs.v[i].p,
			    s->sdefs.v[i].len))
				continue;
			pd_set_add(&sc->locals, s->sdefs.v[i].p,
			    s->sdefs.v[i].len);
		}
	}
	s->sreads.n = 0;
	s->sdefs.n = 0;
}

static void
pd_scope_push(struct pd_scan *s, enum pd_scope_kind kind, int indent)
{
	if (s->nscope == s->capscope) {
		s->capscope = s->capscope == 0 ? 4 : 2 * s->capscope;
		s->scope = xreallocarray(s->scope, s->capscope,
		    sizeof *s->scope);
	}
	memset(&s->scope[s->nscope], 0, sizeof *s->scope);
	s->scope[s->nscope].kind = kind;
	s->scope[s->nscope].indent = indent;
	s->nscope++;
}

/* A body ends: what it read from outside goes up. */
static void
pd_scope_pop(struct pd_scan *s)
{
	struct pd_scope	*sc = &s->scope[--s->nscope];
	struct pd_name	*r;
	size_t		 i;

	for (i = 0; i < sc->reads.n; i++) {
		r = &sc->reads.v[i];
		if (pd_set_has(&sc->locals, r->p, r->len) &&
		    !pd_set_has(&sc->globals, r->p, r->len))
			continue;
		if (s->nscope == 0)
			pd_vec_add(&s->late, r->p, r->len);
		else
			pd_vec_add(&s->scope[s->nscope - 1].reads, r->p,
			    r->len);
	}
	pd_set_free(&sc->locals);
	pd_set_free(&sc->globals);
	free(sc->reads.v);
}

/* The first token in [a, b) at depth 0 that is the keyword or op. */
static ssize_t
pd_find(struct pd_scan *s, size_t a, size_t b, const char *what, int name)
{
	size_t	i;

	for (i = a; i < b; i++) {
		if (s->tok[i].depth != 0)
			continue;
		if (name ? pd_name_is_n(&s->tok[i], what, strlen(what)) :
		    pd_is_n(&s->tok[i], what, strlen(what)))
			return ((ssize_t)i);
	}
	return (-1);
}

/* The colon ending a compound statement's header, or -1. */
static ssize_t
pd_header_colon(struct pd_scan *s, size_t a, size_t b)
{
	size_t	i;
	int	lambdas = 0;

	for (i = a; i < b; i++) {
		if (s->tok[i].depth != 0)
			continue;
		if (pd_name_is(&s->tok[i], "lambda"))
			lambdas++;
		else if (pd_is(&s->tok[i], ":") && lambdas-- == 0)
			return ((ssize_t)i);
	}
	return (-1);
}

/* import a.b as c, d: binds c and d. */
static void
pd_import(struct pd_scan *s, size_t a, size_t b)
{
	size_t	i, start = a;

	for (i = a; i <= b; i++) {
		if (i < b && !pd_is(&s->tok[i], ","))
			continue;
		if (i - start >= 3 && pd_name_is(&s->tok[i - 2], "as"))
			pd_def(s, &s->tok[i - 1]);
		else if (start < i && s->tok[start].type == PD_NAME)
			pd_def(s, &s->tok[start]);
		start = i + 1;
	}
}

/* from m import a as b, (c, d) or *. */
static void
pd_from(struct pd_scan *s, size_t a, size_t b)
{
	ssize_t	imp;
	size_t	i;

	if ((imp = pd_find(s, a, b, "import", 1)) < 0)
		return;
	for (i = imp + 1; i < b; i++) {
		if (pd_is(&s->tok[i], "*"))
			s->flags |= PYDEFUSE_WILDCARD | PYDEFUSE_NOLINT;
		if (s->tok[i].type != PD_NAME || pd_keyword(&s->tok[i]))
			continue;
		/* The name bound is the last of "a" or "a as b". */
		if (i + 2 < b && pd_name_is(&s->tok[i + 1], "as"))
			continue;
		pd_def(s, &s->tok[i]);
	}
}

/* global / nonlocal names. */
static void
pd_names(struct pd_scan *s, size_t a, size_t b, int global)
{
	struct pd_scope	*sc;
	size_t		 i;

	for (i = a; i < b; i++) {
		if (s->tok[i].type != PD_NAME)
			continue;
		if (s->nscope > 0) {
			sc = &s->scope[s->nscope - 1];
			pd_set_add(&sc->globals, s->tok[i].p, s->tok[i].len);
		}
		if (global)
			pd_set_add(&s->defs, s->tok[i].p, s->tok[i].len);
	}
}

/* with a as b, (c as (d, e)): the targets after each "as". */
static void
pd_with(struct pd_scan *s, size_t a, size_t b)
{
	size_t	i, j, start = a;
	int	d;

	for (i = a; i < b; i++) {
		if (!pd_name_is(&s->tok[i], "as"))
			continue;
		pd_expr(s, start, i, PD_READ);
		d = s->tok[i].depth;
		for (j = i + 1; j < b && !(s->tok[j].depth < d ||
		    (s->tok[j].depth == d && pd_is(&s->tok[j], ","))); j++)
			;
		pd_expr(s, i + 1, j, PD_TARGET);
		start = i = j;
	}
	if (start < b)
		pd_expr(s, start, b, PD_READ);
}

/*
 * def name(params) -> ann: the name here; defaults and annotations read
 * here; parameters local to the body (a scope pushed by the caller).
 */
static void
pd_funcdef(struct pd_scan *s, size_t a, size_t hc, int cond)
{
	struct pd_vec	 params;
	size_t		 i, j, open;
	int		 d;

	memset(&params, 0, sizeof params);
	/* Without a name (not python) the body is a scope all the same. */
	if (a + 1 < hc && s->tok[a + 1].type == PD_NAME)
		pd_def(s, &s->tok[a + 1]);
	open = a + 2;
	if (open < hc && pd_is(&s->tok[open], "(")) {
		d = s->tok[open].depth + 1;
		for (i = open + 1; i < hc && s->tok[i].depth >= d; i++) {
			if (s->tok[i].depth == d && s->tok[i].type ==
			    PD_NAME && (pd_is(&s->tok[i - 1], "(") ||
			    pd_is(&s->tok[i - 1], ",") ||
			    pd_is(&s->tok[i - 1], "*") ||
			    pd_is(&s->tok[i - 1], "**"))) {
				pd_vec_add(&params, s->tok[i].p,
				    s->tok[i].len);
				continue;
			}
			if (s->tok[i].depth == d && (pd_is(&s->tok[i], ":") ||
			    pd_is(&s->tok[i], "="))) {
				/* An annotation ends at its default. */
				for (j = i + 1; j < hc && !(s->tok[j].depth <
				    d || (s->tok[j].depth == d &&
				    (pd_is(&s->tok[j], ",") ||
				    pd_is(&s->tok[j], "=")))); j++)
					;
				pd_expr(s, i + 1, j, PD_READ);
				i = j - 1;
			}
		}
		if (i < hc)
			pd_expr(s, i + 1, hc, PD_READ);	/* -> ann */
	}
	pd_commit(s, cond);
	pd_scope_push(s, PD_SCOPE_FUNC, s->indent);
	for (i = 0; i < params.n; i++)
		pd_set_add(&s->scope[s->nscope - 1].locals, params.v[i].p,
		    params.v[i].len);
	free(params.v);
}

/* A simple statement (no header) of tokens [a, b). */
static void
pd_simple(struct pd_scan *s, size_t a, size_t b, int cond)
{
	struct pd_tok	*t = s->tok;
	size_t		 i, seg, last = 0, neq = 0;
	ssize_t		 colon;
	int		 lambda = 0;

	if (a >= b)
		return;
	if (pd_name_is(&t[a], "import"))
		pd_import(s, a + 1, b);
	else if (pd_name_is(&t[a], "from"))
		pd_from(s, a + 1, b);
	else if (pd_name_is(&t[a], "global") || pd_name_is(&t[a], "nonlocal"))
		pd_names(s, a + 1, b, pd_name_is(&t[a], "global"));
	else if (pd_name_is(&t[a], "del"))
		pd_expr(s, a + 1, b, PD_AUG);
	else {
		for (i = a; i < b; i++) {
			if (t[i].depth != 0)
				continue;
			if (pd_name_is(&t[i], "lambda"))
				lambda = 1;
			if (lambda)
				continue;
			/* x op= y: an operator of 2 or 3 ending in '=' */
			if (t[i].type == PD_OP && t[i].len >= 2 &&
			    t[i].p[t[i].len - 1] == '=' && !pd_is(&t[i], "==") &&
			    !pd_is(&t[i], "!=") && !pd_is(&t[i], "<=") &&
			    !pd_is(&t[i], ">=") && !pd_is(&t[i], ":=")) {
				pd_expr(s, a, i, PD_AUG);
				pd_expr(s, i + 1, b, PD_READ);
				pd_commit(s, cond);
				return;
			}
			if (pd_is(&t[i], "=")) {
				neq++;
				last = i;
			}
		}
		if (neq == 0) {
			colon = t[a].type == PD_NAME && !pd_keyword(&t[a]) ?
			    pd_find(s, a, b, ":", 0) : -1;
			if (colon > 0) {
				/* x: int, annotated and not assigned */
				pd_expr(s, a, colon, PD_TARGET);
				pd_expr(s, colon + 1, b, PD_READ);
			} else
				pd_expr(s, a, b, PD_READ);
		} else {
			for (seg = a, i = a; i <= last; i++) {
				if (!pd_is(&t[i], "=") || t[i].depth != 0)
					continue;
				colon = pd_find(s, seg, i, ":", 0);
				if (colon > 0) {
					pd_expr(s, seg, colon, PD_TARGET);
					pd_expr(s, colon + 1, i, PD_READ);
				} else
					pd_expr(s, seg, i, PD_TARGET);
				seg = i + 1;
			}
			pd_expr(s, last + 1, b, PD_READ);
		}
	}
	pd_commit(s, cond);
}

/* The simple statements of [a, b), split at ';'. */
static void
pd_body(struct pd_scan *s, size_t a, size_t b, int cond)
{
	size_t	i, start = a;

	for (i = a; i <= b; i++) {
		if (i < b && !(pd_is(&s->tok[i], ";") &&
		    s->tok[i].depth == 0))
			continue;
		pd_simple(s, start, i, cond);
		start = i + 1;
	}
}

/* The logical line in tok. */
static void
pd_statement(struct pd_scan *s)
{
	struct pd_tok	*t = s->tok;
	size_t		 n = s->ntok, a = 0;
	ssize_t		 hc, k;
	int		 cond, soft = 0, scoped = 0;

	while (s->nscope > 0 && s->scope[s->nscope - 1].indent >= s->indent)
		pd_scope_pop(s);
	cond = s->indent > 0;
	if (pd_is(&t[0], "@")) {
		pd_expr(s, 1, n, PD_READ);	/* a decorator */
		pd_commit(s, cond);
		return;
	}
	if (pd_name_is(&t[0], "async") && n > 1)
		a = 1;
	if ((pd_name_is(&t[a], "match") || pd_name_is(&t[a], "case")) &&
	    a + 1 < n && !(t[a + 1].type == PD_OP && (t[a + 1].p[0] == '=' ||
	    t[a + 1].p[0] == '.' || t[a + 1].p[0] == ':' ||
	    t[a + 1].p[0] == ',' || t[a + 1].p[t[a + 1].len - 1] == '=' ||
	    t[a + 1].p[0] == ')' || t[a + 1].p[0] == ']')))
		soft = pd_header_colon(s, a, n) > 0;
	if (!soft && !(t[a].type == PD_NAME && (pd_name_is(&t[a], "if") ||
	    pd_name_is(&t[a], "elif") || pd_name_is(&t[a], "while") ||
	    pd_name_is(&t[a], "else") || pd_name_is(&t[a], "try") ||
	    pd_name_is(&t[a], "finally") || pd_name_is(&t[a], "except") ||
	    pd_name_is(&t[a], "for") || pd_name_is(&t[a], "with") ||
	    pd_name_is(&t[a], "def") || pd_name_is(&t[a], "class")))) {
		pd_body(s, 0, n, cond);
		return;
	}
	if ((hc = pd_header_colon(s, a, n)) < 0) {
		pd_expr(s, a + 1, n, PD_READ);	/* not python: read it */
		pd_commit(s, 1);
		return;
	}
	if (pd_name_is(&t[a], "if") || pd_name_is(&t[a], "elif") ||
	    pd_name_is(&t[a], "while") || pd_name_is(&t[a], "match"))
		pd_expr(s, a + 1, hc, PD_READ);
	else if (pd_name_is(&t[a], "except")) {
		if ((k = pd_find(s, a + 1, hc, "as", 1)) > 0) {
			pd_expr(s, a + 1, k, PD_READ);
			pd_expr(s, k + 1, hc, PD_TARGET);
		} else
			pd_expr(s, a + 1, hc, PD_READ);
	} else if (pd_name_is(&t[a], "for")) {
		if ((k = pd_find(s, a + 1, hc, "in", 1)) > 0) {
			pd_expr(s, a + 1, k, PD_TARGET);
			pd_expr(s, k + 1, hc, PD_READ);
		} else
			pd_expr(s, a + 1, hc, PD_READ);
	} else if (pd_name_is(&t[a], "with"))
		pd_with(s, a + 1, hc);
	else if (pd_name_is(&t[a], "case")) {
		if ((k = pd_find(s, a + 1, hc, "if", 1)) > 0) {
			pd_expr(s, a + 1, k, PD_CASE);
			pd_expr(s, k + 1, hc, PD_READ);
		} else
			pd_expr(s, a + 1, hc, PD_CASE);
	} else if (pd_name_is(&t[a], "def")) {
		pd_funcdef(s, a, hc, cond);
		scoped = 1;
	} else if (pd_name_is(&t[a], "class")) {
		if (a + 1 < (size_t)hc && t[a + 1].type == PD_NAME)
			pd_def(s, &t[a + 1]);
		pd_expr(s, a + 2, hc, PD_READ);
		pd_commit(s, cond);
		pd_scope_push(s, PD_SCOPE_CLASS, s->indent);
		scoped = 1;
	}
	if (!scoped)
		pd_commit(s, cond);
	/* One-line body: of the scope just opened, or conditional. */
	if ((size_t)hc + 1 < n)
		pd_body(s, hc + 1, n, 1);
	if (scoped && (size_t)hc + 1 < n)
		pd_scope_pop(s);
}

static int
pd_compare(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* The set's names, sorted, copied to *bufp. */
static const char **
pd_collect(const struct pd_set *set, char **bufp, size_t *n)
{
	const char	**v;
	size_t		  i;

	v = xcalloc(set->n + 1, sizeof *v);
	*n = 0;
	for (i = 0; i < set->cap; i++) {
		if (set->slot[i].p == NULL)
			continue;
		memcpy(*bufp, set->slot[i].p, set->slot[i].len);
		(*bufp)[set->slot[i].len] = '\0';
		v[(*n)++] = *bufp;
		*bufp += set->slot[i].len + 1;
	}
	qsort(v, *n, sizeof *v, pd_compare);
	return (v);
}

/* What the python source src defines and reads (never NULL). */
struct pydefuse *
pydefuse_scan(const char *src, size_t len)
{
	struct pd_scan	 s;
	struct pydefuse	*du;
	size_t		 i, size;
	char		*buf;

	memset(&s, 0, sizeof s);
	s.src = s.p = src;
	s.end = src + len;
	s.first = 1;
	while (pd_line(&s)) {
		pd_statement(&s);
		if (s.depth != 0)
			s.flags |= PYDEFUSE_NOLINT;	/* unbalanced */
	}
	while (s.nscope > 0)
		pd_scope_pop(&s);
	for (i = 0; i < s.late.n; i++) {
		if (!pd_set_has(&s.defs, s.late.v[i].p, s.late.v[i].len))
			pd_set_add(&s.uses, s.late.v[i].p, s.late.v[i].len);
	}

	du = xcalloc(1, sizeof *du);
	du->flags = s.flags;
	size = 1;
	for (i = 0; i < s.defs.cap; i++)
		size += s.defs.slot[i].p != NULL ? s.defs.slot[i].len + 1 : 0;
	for (i = 0; i < s.uses.cap; i++)
		size += s.uses.slot[i].p != NULL ? s.uses.slot[i].len + 1 : 0;
	buf = du->buf = xmalloc(size);
	du->defs = pd_collect(&s.defs, &buf, &du->ndefs);
	du->uses = pd_collect(&s.uses, &buf, &du->nuses);

	free(s.tok);
	free(s.sreads.v);
	free(s.sdefs.v);
	free(s.cnames.v);
	free(s.params.v);
	free(s.late.v);
	free(s.scope);
	pd_set_free(&s.defs);
	pd_set_free(&s.mask);
	pd_set_free(&s.uses);
	return (du);
}

void
pydefuse_free(struct pydefuse *du)
{
	if (du == NULL)
		return;
	free(du->defs);
	free(du->uses);
	free(du->buf);
	free(du);
}

static int
pd_bsearch(const char *const *v, size_t n, const char *name)
{
	const char *const	*hit;

	hit = bsearch(&name, v, n, sizeof *v, pd_compare);
	return (hit != NULL);
}

/* Does the cell bind name (its own definitions only)? */
int
pydefuse_defines(const struct pydefuse *du, const char *name)
{
	return (pd_bsearch(du->defs, du->ndefs, name));
}

/* Does the cell read name from outside itself? */
int
pydefuse_uses(const struct pydefuse *du, const char *name)
{
	return (pd_bsearch(du->uses, du->nuses, name));
}

/* A builtin, or a name IPython defines (_5, _i3 included). */
int
pydefuse_known(const char *name)
{
	const char	*p;

	if (pd_in(pydefuse_known_names, PD_NITEMS(pydefuse_known_names), name,
	    strlen(name)))
		return (1);
	p = name;
	if (*p++ != '_')
		return (0);
	if (*p == 'i')
		p++;
	if (*p < '0' || *p > '9')
		return (0);
	while (*p >= '0' && *p <= '9')
		p++;
	return (*p == '\0');
}
