/* SPDX-License-Identifier: ISC */
/*
 * agent-redact.c: secrets taken out of what a kernel says before any of
 * it leaves the agent (decision 064), so the daemon, the store, a saved
 * .ipynb, the live page and a tool's answer never hold one.
 *
 * Two kinds are replaced by a marker, "[redacted: WHAT]":
 *
 * - the values of secret-looking variables of the kernel's environment
 *   (a name component TOKEN, SECRET, PASSWORD, KEY, ... see
 *   agent_redact_name) and of the variables RUNTIMED_SECRET_NAMES lists,
 *   WHAT being the variable's name.  A value shorter than
 *   AGENT_REDACT_MIN bytes is never one (KEY=1 would blank every "1"),
 *   nor a pattern-named one that is a single class of characters under
 *   AGENT_REDACT_PLAIN bytes ("disabled"), nor an absolute path that
 *   exists (GOOGLE_APPLICATION_CREDENTIALS names a file);
 * - credential shapes whatever their origin: AWS access key ids, GitHub,
 *   Slack, Google, Stripe and sk- API keys, JWTs, the token of a
 *   "Bearer" header, PEM private key blocks.
 *
 * The text is read once: a byte table says where a value or a shape may
 * start, and only there is anything compared.  A caller that will see
 * more of the same text (a stream) asks for the end that may be the
 * start of a secret to be held back rather than redacted or sent.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "agent.h"

struct agent_redact_secret {
	char	*label;
	char	*value;
	size_t	 len;
};
static struct agent_redact_secret	*agent_redact_list;
static size_t				 agent_redact_n;

/*
 * By first byte: bit 1, a value starts with it (the values starting so
 * are agent_redact_list[agent_redact_from[c]] on); bit 2, a shape may
 * (agent_redact_byshape[c], ending at -1).
 */
static unsigned char	agent_redact_first[256];
static size_t		agent_redact_from[256];
static signed char	agent_redact_byshape[256][8];

/* What a shape's body may hold. */
enum agent_redact_class {
	AGENT_REDACT_UPPER,	/* A-Z 0-9 */
	AGENT_REDACT_ALNUM,	/* A-Z a-z 0-9 */
	AGENT_REDACT_WORD,	/* and _ */
	AGENT_REDACT_DASH,	/* and - */
	AGENT_REDACT_URL,	/* and _ - */
	AGENT_REDACT_TOKEN68,	/* and . _ ~ + / = - (RFC 6750) */
	AGENT_REDACT_JWT,	/* three dotted base64url parts */
	AGENT_REDACT_PEM,	/* BEGIN ... PRIVATE KEY ... END */
};

struct agent_redact_shape {
	const char		*prefix;
	enum agent_redact_class	 class;
	size_t			 min;	/* body bytes */
	size_t			 max;	/* == min: exactly; 0: min or more */
	const char		*label;
	int			 keep;	/* the prefix stays ("Bearer ") */
};

/*
 * From the providers' documented formats and GitHub's and gitleaks'
 * secret-scanning rules.
 */
static const struct agent_redact_shape agent_redact_shapes[] = {
	{ "AKIA", AGENT_REDACT_UPPER, 16, 16, "AWS access key id", 0 },
	{ "ASIA", AGENT_REDACT_UPPER, 16, 16, "AWS access key id", 0 },
	{ "ghp_", AGENT_REDACT_ALNUM, 36, 0, "GitHub token", 0 },
	{ "gho_", AGENT_REDACT_ALNUM, 36, 0, "GitHub token", 0 },
	{ "ghu_", AGENT_REDACT_ALNUM, 36, 0, "GitHub token", 0 },
	{ "ghs_", AGENT_REDACT_ALNUM, 36, 0, "GitHub token", 0 },
	{ "ghr_", AGENT_REDACT_ALNUM, 36, 0, "GitHub token", 0 },
	{ "github_pat_", AGENT_REDACT_WORD, 22, 0, "GitHub token", 0 },
	{ "xoxa-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "xoxb-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "xoxe-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "xoxp-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "xoxr-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "xoxs-", AGENT_REDACT_DASH, 10, 0, "Slack token", 0 },
	{ "AIza", AGENT_REDACT_URL, 35, 35, "Google API key", 0 },
	{ "sk-", AGENT_REDACT_URL, 20, 0, "API key", 0 },
	{ "sk_live_", AGENT_REDACT_ALNUM, 16, 0, "Stripe key", 0 },
	{ "rk_live_", AGENT_REDACT_ALNUM, 16, 0, "Stripe key", 0 },
	{ "Bearer ", AGENT_REDACT_TOKEN68, 16, 0, "bearer token", 1 },
	{ "bearer ", AGENT_REDACT_TOKEN68, 16, 0, "bearer token", 1 },
	{ "eyJ", AGENT_REDACT_JWT, 0, 0, "JWT", 0 },
	{ "-----BEGIN ", AGENT_REDACT_PEM, 0, 0, "private key", 0 },
};
#define AGENT_REDACT_NSHAPES \
	(sizeof agent_redact_shapes / sizeof agent_redact_shapes[0])

/*
 * Name components that make a variable's value a secret: Sentry's
 * default scrubbed fields and the names the cloud CLIs document.
 */
static const char *agent_redact_words[] = {
	"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS",
	"PASSWD", "PASSPHRASE", "PWD", "KEY", "KEYS", "APIKEY", "PRIVATEKEY",
	"ACCESSKEY", "CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "AUTH",
	"COOKIE", "SIGNATURE", NULL
};
/* A component ending so counts too (PGPASSWORD, HFTOKEN). */
static const char *agent_redact_endings[] = {
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", NULL
};
/* A last component naming where a secret is, not the secret. */
static const char *agent_redact_places[] = {
	"FILE", "PATH", "DIR", "SOCK", "SOCKET", "HOST", "PORT", "USER",
	"USERNAME", "NAME", "TYPE", "URL", "REGION", NULL
};

static int	agent_redact_in(const char *, size_t, const char **, int);
static int	agent_redact_value_ok(const char *, int, const char *);
static int	agent_redact_configured(const char *, const char *, size_t);
static int	agent_redact_cmp(const void *, const void *);
static void	agent_redact_index(void);
static int	agent_redact_is(enum agent_redact_class, unsigned char);
static int	agent_redact_boundary(const struct agent_redact_shape *,
		    const char *, size_t);
static size_t	agent_redact_run(enum agent_redact_class, const char *,
		    size_t, size_t);
static int	agent_redact_jwt(const char *, size_t, size_t *);
static int	agent_redact_pem(const char *, size_t, size_t *);
static int	agent_redact_match(const char *, size_t, size_t, int,
		    const struct agent_redact_shape **, size_t *, size_t *);

/* Is the component w (n bytes) one of list, or does it end so? */
static int
agent_redact_in(const char *w, size_t n, const char **list, int ending)
{
	size_t	i, l;

	for (i = 0; list[i] != NULL; i++) {
		l = strlen(list[i]);
		if (ending ? n > l && strncasecmp(w + n - l, list[i], l) == 0 :
		    n == l && strncasecmp(w, list[i], l) == 0)
			return (1);
	}
	return (0);
}

/*
 * Does a variable of this name hold a secret?  Its components (split at
 * _ - .) are compared whole, so MONKEY or KEYBOARD is not KEY; a name
 * whose last component names a place (SSH_AUTH_SOCK, KEY_FILE) is not.
 */
int
agent_redact_name(const char *name)
{
	const char	*p = name, *w, *last = name;
	size_t		 n, lastn = 0;
	int		 hit = 0;

	if (strcmp(name, "PWD") == 0 || strcmp(name, "OLDPWD") == 0)
		return (0);
	while (*p != '\0') {
		w = p;
		while (*p != '\0' && strchr("_-.", *p) == NULL)
			p++;
		n = (size_t)(p - w);
		if (n > 0) {
			if (agent_redact_in(w, n, agent_redact_words, 0) ||
			    agent_redact_in(w, n, agent_redact_endings, 1))
				hit = 1;
			last = w;
			lastn = n;
		}
		if (*p != '\0')
			p++;
	}
	return (hit && !agent_redact_in(last, lastn, agent_redact_places, 0));
}

/*
 * May value be redacted wherever it appears?  At least AGENT_REDACT_MIN
 * bytes; a value found by its name's pattern (not configured) must also
 * mix classes of characters or be long, and not be a path that exists.
 */
static int
agent_redact_value_ok(const char *value, int configured, const char *name)
{
	struct stat	 sb;
	size_t		 len = strlen(value), i;
	int		 classes = 0, lower = 0, upper = 0, digit = 0, other = 0;

	if (len < AGENT_REDACT_MIN) {
		if (configured && len > 0)
			log_warnx("%s is not redacted: its value is shorter "
			    "than %d bytes", name, AGENT_REDACT_MIN);
		return (0);
	}
	if (configured)
		return (1);
	for (i = 0; i < len; i++) {
		if (islower((unsigned char)value[i]))
			lower = 1;
		else if (isupper((unsigned char)value[i]))
			upper = 1;
		else if (isdigit((unsigned char)value[i]))
			digit = 1;
		else
			other = 1;
	}
	classes = lower + upper + digit + other;
	if (classes < 2 && len < AGENT_REDACT_PLAIN)
		return (0);
	if (*value == '/' && stat(value, &sb) == 0)
		return (0);
	return (1);
}

/* Is name (n bytes) one that list names (RUNTIMED_SECRET_NAMES)? */
static int
agent_redact_configured(const char *list, const char *name, size_t n)
{
	const char	*p = list, *w;

	if (list == NULL)
		return (0);
	while (*p != '\0') {
		while (*p != '\0' && strchr(", \t\n:", *p) != NULL)
			p++;
		w = p;
		while (*p != '\0' && strchr(", \t\n:", *p) == NULL)
			p++;
		if ((size_t)(p - w) == n && n > 0 && strncmp(w, name, n) == 0)
			return (1);
	}
	return (0);
}

/*
 * By first byte, then longest first: a value inside another is replaced
 * as the longer.
 */
static int
agent_redact_cmp(const void *a, const void *b)
{
	const struct agent_redact_secret	*x = a, *y = b;

	if (x->value[0] != y->value[0])
		return ((unsigned char)x->value[0] <
		    (unsigned char)y->value[0] ? -1 : 1);
	if (x->len != y->len)
		return (x->len > y->len ? -1 : 1);
	return (strcmp(x->label, y->label));
}

static void
agent_redact_index(void)
{
	size_t		i, n;
	unsigned char	c;

	memset(agent_redact_first, 0, sizeof agent_redact_first);
	memset(agent_redact_byshape, -1, sizeof agent_redact_byshape);
	if (agent_redact_n > 0)
		qsort(agent_redact_list, agent_redact_n,
		    sizeof *agent_redact_list, agent_redact_cmp);
	for (i = agent_redact_n; i > 0; i--) {
		c = (unsigned char)agent_redact_list[i - 1].value[0];
		agent_redact_first[c] |= 1;
		agent_redact_from[c] = i - 1;
	}
	for (i = 0; i < AGENT_REDACT_NSHAPES; i++) {
		c = (unsigned char)agent_redact_shapes[i].prefix[0];
		agent_redact_first[c] |= 2;
		for (n = 0; agent_redact_byshape[c][n] != -1; n++)
			;
		agent_redact_byshape[c][n] = (signed char)i;
	}
}

/* Add one value to redact, labelled; 0, or -1 if it may not be. */
int
agent_redact_add(const char *label, const char *value, int configured)
{
	size_t	i;

	if (!agent_redact_value_ok(value, configured, label))
		return (-1);
	for (i = 0; i < agent_redact_n; i++) {
		if (strcmp(agent_redact_list[i].value, value) == 0)
			return (0);
	}
	agent_redact_list = xreallocarray(agent_redact_list,
	    agent_redact_n + 1, sizeof *agent_redact_list);
	agent_redact_list[agent_redact_n].label = xstrdup(label);
	agent_redact_list[agent_redact_n].value = xstrdup(value);
	agent_redact_list[agent_redact_n].len = strlen(value);
	agent_redact_n++;
	agent_redact_index();
	return (0);
}

/*
 * The values to redact, from an environment (NAME=value strings): every
 * secret-looking name's unless names_only, and the names
 * RUNTIMED_SECRET_NAMES lists (comma, colon or space separated).  The
 * shapes apply whatever this finds.  Returns how many values.
 */
size_t
agent_redact_init(char *const *envp, int names_only)
{
	const char	*list = getenv("RUNTIMED_SECRET_NAMES");
	char		*name;
	const char	*eq;
	size_t		 i;
	int		 configured;

	agent_redact_free();
	for (i = 0; envp != NULL && envp[i] != NULL; i++) {
		if ((eq = strchr(envp[i], '=')) == NULL || eq == envp[i])
			continue;
		configured = agent_redact_configured(list, envp[i],
		    (size_t)(eq - envp[i]));
		name = xstrndup(envp[i], (size_t)(eq - envp[i]));
		if (configured || (!names_only && agent_redact_name(name)))
			agent_redact_add(name, eq + 1, configured);
		free(name);
	}
	agent_redact_index();
	log_debug("%s: %zu values to redact", __func__, agent_redact_n);
	return (agent_redact_n);
}

/* Forget every value (tests, a restart's new environment). */
void
agent_redact_free(void)
{
	size_t	i;

	for (i = 0; i < agent_redact_n; i++) {
		free(agent_redact_list[i].label);
		free(agent_redact_list[i].value);
	}
	free(agent_redact_list);
	agent_redact_list = NULL;
	agent_redact_n = 0;
	agent_redact_index();
}

static int
agent_redact_is(enum agent_redact_class class, unsigned char c)
{
	if (isdigit(c) || isupper(c))
		return (1);
	if (class == AGENT_REDACT_UPPER)
		return (0);
	if (islower(c))
		return (1);
	switch (class) {
	case AGENT_REDACT_WORD:
		return (c == '_');
	case AGENT_REDACT_DASH:
		return (c == '-');
	case AGENT_REDACT_URL:
	case AGENT_REDACT_JWT:
		return (c == '_' || c == '-');
	case AGENT_REDACT_TOKEN68:
		return (c != '\0' && strchr("._~+/=-", c) != NULL);
	default:
		return (0);
	}
}

/* A shape starts a word: not inside an identifier or a longer token. */
static int
agent_redact_boundary(const struct agent_redact_shape *sh, const char *s,
    size_t i)
{
	unsigned char	c;

	if (i == 0 || sh->class == AGENT_REDACT_PEM)
		return (1);
	c = (unsigned char)s[i - 1];
	return (!isalnum(c) && c != '_' && (c != '-' ||
	    sh->class == AGENT_REDACT_TOKEN68));
}

/* Bytes of class from s[i], at most max. */
static size_t
agent_redact_run(enum agent_redact_class class, const char *s, size_t len,
    size_t i)
{
	size_t	n = 0;

	while (i + n < len && agent_redact_is(class, (unsigned char)s[i + n]))
		n++;
	return (n);
}

/*
 * A JWT at s (len bytes from "eyJ"): header.payload.signature, each at
 * least 10 base64url bytes.  1 and its length, 0 if none, -1 if the text
 * ends inside what may still become one.
 */
static int
agent_redact_jwt(const char *s, size_t len, size_t *mlen)
{
	size_t	i = 0, n;
	int	part;

	for (part = 0; part < 3; part++) {
		n = agent_redact_run(AGENT_REDACT_JWT, s, len, i);
		if (i + n == len)
			return (-1);
		if (n < 10)
			return (0);
		i += n;
		if (part < 2) {
			if (s[i] != '.')
				return (0);
			i++;
		}
	}
	*mlen = i;
	return (1);
}

/*
 * A PEM private key block at s ("-----BEGIN "): 1 and its length to the
 * END line's dashes, 0 if it is no private key, -1 if the text ends
 * before its END line.
 */
static int
agent_redact_pem(const char *s, size_t len, size_t *mlen)
{
	static const char	 key[] = "PRIVATE KEY";
	const char		*end, *p;
	size_t			 i = 11, n;

	n = 0;
	while (i + n < len && n < 64 && (isupper((unsigned char)s[i + n]) ||
	    isdigit((unsigned char)s[i + n]) || s[i + n] == ' '))
		n++;
	if (i + n == len)
		return (-1);
	p = memmem(s + i, n, key, sizeof key - 1);
	if (p == NULL || s[i + n] != '-')
		return (0);
	end = memmem(s + i + n, len - i - n, "-----END ", 9);
	if (end == NULL)
		return (-1);
	p = end + 9;
	while (p < s + len && *p != '-' && *p != '\n')
		p++;
	n = 0;
	while (p + n < s + len && p[n] == '-')
		n++;
	if (n < 5)
		return (p + n == s + len ? -1 : 0);
	*mlen = (size_t)(p + n - s);
	return (1);
}

/*
 * A shape at s[i]: 1 with the shape, the bytes it covers (*from: where
 * the replaced part starts, past a kept prefix), 0 if none, -1 if the
 * text ends where one may be going on.
 */
static int
agent_redact_match(const char *s, size_t len, size_t i, int final,
    const struct agent_redact_shape **out, size_t *from, size_t *mlen)
{
	const struct agent_redact_shape	*sh;
	const signed char		*k;
	size_t				 pl, n, left = len - i;
	int				 r, partial = 0;

	for (k = agent_redact_byshape[(unsigned char)s[i]]; *k != -1; k++) {
		sh = &agent_redact_shapes[*k];
		if (!agent_redact_boundary(sh, s, i))
			continue;
		pl = strlen(sh->prefix);
		if (left < pl) {
			/* The text ends inside the prefix. */
			if (!final && left >= 2 &&
			    memcmp(s + i, sh->prefix, left) == 0)
				partial = 1;
			continue;
		}
		if (memcmp(s + i, sh->prefix, pl) != 0)
			continue;
		if (sh->class == AGENT_REDACT_JWT ||
		    sh->class == AGENT_REDACT_PEM) {
			r = sh->class == AGENT_REDACT_JWT ?
			    agent_redact_jwt(s + i, left, &n) :
			    agent_redact_pem(s + i, left, &n);
			if (r < 0 && !final) {
				partial = 1;
				continue;
			}
			if (r < 0 && sh->class == AGENT_REDACT_PEM) {
				/* No END in the whole text: to its end. */
				n = left;
				r = 1;
			}
			if (r <= 0)
				continue;
			*out = sh;
			*from = i;
			*mlen = n;
			return (1);
		}
		/* The whole run: a longer token is still a secret. */
		n = agent_redact_run(sh->class, s, len, i + pl);
		if (i + pl + n == len && !final) {
			partial = 1;
			continue;
		}
		if (n < sh->min || (sh->max == sh->min && n != sh->max))
			continue;
		*out = sh;
		*from = sh->keep ? i + pl : i;
		*mlen = sh->keep ? n : pl + n;
		return (1);
	}
	return (partial ? -1 : 0);
}

/*
 * Redact s (len bytes).  Returns NULL when nothing was replaced, else
 * the new text (caller frees; *outlen its length).  Unless final, the
 * last *hold bytes may be the start of a secret the next text finishes:
 * they are not in what is returned, and the caller keeps them; a text
 * with nothing replaced is then s's first len - *hold bytes.  *count,
 * if not NULL, is how many markers were written.
 */
char *
agent_redact_text(const char *s, size_t len, int final, size_t *outlen,
    size_t *hold, size_t *count)
{
	const struct agent_redact_secret	*v;
	const struct agent_redact_shape		*sh;
	struct evbuffer				*b = NULL;
	const char				*label;
	char					*out;
	size_t					 i, k, copied = 0, from, n;
	size_t					 left, found = 0;
	unsigned char				 f;
	int					 r, fin;

	*hold = 0;
	for (i = 0; i < len; i++) {
		f = agent_redact_first[(unsigned char)s[i]];
		if (f == 0)
			continue;
		left = len - i;
		/* Held back only so far: past it, what is there is final. */
		fin = final || left > AGENT_REDACT_HOLD_MAX;
		label = NULL;
		from = i;
		n = 0;
		k = (f & 1) ? agent_redact_from[(unsigned char)s[i]] :
		    agent_redact_n;
		for (; k < agent_redact_n; k++) {
			v = &agent_redact_list[k];
			if (v->value[0] != s[i])
				break;
			if (left > 1 && v->value[1] != s[i + 1])
				continue;
			if (left >= v->len && memcmp(s + i, v->value,
			    v->len) == 0) {
				label = v->label;
				n = v->len;
				break;
			}
			if (!fin && left < v->len &&
			    memcmp(s + i, v->value, left) == 0) {
				*hold = left;
				goto done;
			}
		}
		/* Inside a word no shape starts (but a PEM's dashes). */
		if (label == NULL && (f & 2) && (i == 0 || s[i] == '-' ||
		    (!isalnum((unsigned char)s[i - 1]) && s[i - 1] != '_'))) {
			r = agent_redact_match(s, len, i, fin, &sh, &from,
			    &n);
			if (r < 0) {
				*hold = left;
				goto done;
			}
			if (r > 0)
				label = sh->label;
		}
		if (label == NULL)
			continue;
		if (b == NULL)
			b = evbuffer_new();
		evbuffer_add(b, s + copied, from - copied);
		evbuffer_add_printf(b, "[redacted: %s]", label);
		found++;
		copied = from + n;
		i = copied - 1;
	}
done:
	if (count != NULL)
		*count = found;
	if (b == NULL)
		return (NULL);
	evbuffer_add(b, s + copied, len - *hold - copied);
	*outlen = evbuffer_get_length(b);
	out = xmalloc(*outlen + 1);
	evbuffer_remove(b, out, *outlen);
	out[*outlen] = '\0';
	evbuffer_free(b);
	return (out);
}

/* Is mime a bundle entry of base64 bytes, never text to read? */
int
agent_redact_binary(const char *mime)
{
	if (strncmp(mime, "image/", 6) == 0)
		return (strcmp(mime, "image/svg+xml") != 0);
	return (strcmp(mime, "application/pdf") == 0 ||
	    strcmp(mime, "application/octet-stream") == 0);
}

/*
 * Redact every string in o, in place (an output's content, an error's
 * traceback, a JSON mime value); a mime bundle's binary entries are
 * skipped.  Returns how many markers were written.
 */
size_t
agent_redact_json(struct json_object *o)
{
	char			*t;
	size_t			 i, n, len, hold, count = 0, c;

	if (o == NULL)
		return (0);
	switch (json_object_get_type(o)) {
	case json_type_string:
		t = agent_redact_text(json_object_get_string(o),
		    (size_t)json_object_get_string_len(o), 1, &len, &hold, &c);
		if (t != NULL) {
			json_object_set_string_len(o, t, (int)len);
			free(t);
			count += c;
		}
		break;
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			count += agent_redact_json(
			    json_object_array_get_idx(o, i));
		break;
	case json_type_object: {
		/* The macro declares its variables: a block of their own. */
		json_object_object_foreach(o, key, v) {
			if (strcmp(key, "data") == 0 &&
			    json_object_is_type(v, json_type_object)) {
				json_object_object_foreach(v, mime, e) {
					if (!agent_redact_binary(mime))
						count += agent_redact_json(e);
				}
			} else
				count += agent_redact_json(v);
		}
		break;
	}
	default:
		break;
	}
	return (count);
}

/* How many values are redacted (the shapes besides). */
size_t
agent_redact_count(void)
{
	return (agent_redact_n);
}
