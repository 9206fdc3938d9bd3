/* SPDX-License-Identifier: ISC */
/*
 * kernelspec.c: find and read kernelspecs the way jupyter_client does;
 * the agent launches from them, the daemon lists and checks them.
 *
 * A kernelspec is <data dir>/kernels/<name>/kernel.json.  Data dirs are
 * searched in Jupyter's order: each entry of $JUPYTER_PATH, then the user
 * data dir ($JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else
 * ~/.local/share/jupyter), then the Python prefix's share/jupyter
 * ($CONDA_PREFIX or $VIRTUAL_ENV when set), then the system dirs:
 * /usr/local/share/jupyter and /usr/share/jupyter (also the prefix of
 * Debian's python3), or with $JUPYTER_PLATFORM_DIRS set, as jupyter_core
 * 5 does, each $XDG_DATA_DIRS entry's jupyter.  Names are
 * case-insensitive and the first dir that has a match wins.  There is
 * no Python here, so {prefix} (sys.prefix for jupyter_client) is the
 * directory above share/jupyter when the spec lives in such a tree, else
 * /usr.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common.h"
#include "kernelspec.h"

struct kernelspec {
	char			*name;		/* lowercase */
	char			*resource_dir;
	char			*prefix;
	char			*display_name;
	char			*language;
	char			**argv;
	size_t			 argc;
	char			**env_names;
	char			**env_values;
	size_t			 nenv;
	enum kernelspec_interrupt_mode interrupt_mode;
	struct json_object	*metadata;	/* kernel.json's, or NULL */
};

static void	kernelspec_dirs_add(char ***, size_t *, const char *);
static int	kernelspec_envset(const char *);
static void	kernelspec_dirs_system(char ***, size_t *);
static int	kernelspec_valid_name(const char *);
static int	kernelspec_is_spec(const char *, const char *);
static char	*kernelspec_scan(const char *, const char *);
static char	*kernelspec_lower(const char *);
static const char	*kernelspec_string(struct json_object *, const char *);
static char	*kernelspec_prefix(const char *);
static char	*kernelspec_subst(const char *, const char *const *,
		    const char *const *, size_t);
static int	kernelspec_cmp(const void *, const void *);

/* Add dir to the list unless it is empty or already there. */
static void
kernelspec_dirs_add(char ***dirs, size_t *n, const char *dir)
{
	size_t	i;

	if (dir == NULL || *dir == '\0')
		return;
	for (i = 0; i < *n; i++) {
		if (strcmp((*dirs)[i], dir) == 0)
			return;
	}
	*dirs = xreallocarray(*dirs, *n + 1, sizeof **dirs);
	(*dirs)[(*n)++] = xstrdup(dir);
}

/* Is an environment flag set, as jupyter_core's envset reads it? */
static int
kernelspec_envset(const char *name)
{
	static const char	*off[] = {
		"no", "n", "false", "off", "0", "0.0"
	};
	const char		*v;
	size_t			 i;

	if ((v = getenv(name)) == NULL)
		return (0);
	for (i = 0; i < sizeof off / sizeof off[0]; i++) {
		if (strcasecmp(v, off[i]) == 0)
			return (0);
	}
	return (1);
}

/*
 * The system data dirs.  jupyter_core hard-codes /usr/local/share/jupyter
 * and /usr/share/jupyter, unless JUPYTER_PLATFORM_DIRS is set: then they
 * are platformdirs' site_data_dir, each entry of $XDG_DATA_DIRS (default
 * /usr/local/share:/usr/share) with /jupyter appended.
 */
static void
kernelspec_dirs_system(char ***dirs, size_t *n)
{
	const char	*env;
	char		*copy, *next, *tok, *path;

	if (!kernelspec_envset("JUPYTER_PLATFORM_DIRS")) {
		kernelspec_dirs_add(dirs, n, "/usr/local/share/jupyter");
		kernelspec_dirs_add(dirs, n, "/usr/share/jupyter");
		return;
	}
	env = getenv("XDG_DATA_DIRS");
	if (env == NULL || env[strspn(env, " \t\n")] == '\0')
		env = "/usr/local/share:/usr/share";
	copy = next = xstrdup(env);
	while ((tok = strsep(&next, ":")) != NULL) {
		if (*tok == '\0')
			continue;
		xasprintf(&path, "%s/jupyter", tok);
		kernelspec_dirs_add(dirs, n, path);
		free(path);
	}
	free(copy);
}

/* The data dirs in search order; caller frees with _dirs_free. */
char **
kernelspec_dirs(size_t *n)
{
	char		**dirs = NULL, *copy, *next, *tok, *path;
	const char	 *env, *home;
	struct passwd	 *pw;

	*n = 0;
	if ((env = getenv("JUPYTER_PATH")) != NULL) {
		copy = next = xstrdup(env);
		while ((tok = strsep(&next, ":")) != NULL)
			kernelspec_dirs_add(&dirs, n, tok);
		free(copy);
	}

	if ((env = getenv("JUPYTER_DATA_DIR")) != NULL && *env != '\0')
		kernelspec_dirs_add(&dirs, n, env);
	else if ((env = getenv("XDG_DATA_HOME")) != NULL && *env != '\0') {
		xasprintf(&path, "%s/jupyter", env);
		kernelspec_dirs_add(&dirs, n, path);
		free(path);
	} else {
		if ((home = getenv("HOME")) == NULL || *home == '\0') {
			pw = getpwuid(getuid());
			home = pw != NULL ? pw->pw_dir : NULL;
		}
		if (home != NULL) {
			xasprintf(&path, "%s/.local/share/jupyter", home);
			kernelspec_dirs_add(&dirs, n, path);
			free(path);
		}
	}

	/* sys.prefix of the Python an activated environment points at. */
	if (((env = getenv("CONDA_PREFIX")) != NULL && *env != '\0') ||
	    ((env = getenv("VIRTUAL_ENV")) != NULL && *env != '\0')) {
		xasprintf(&path, "%s/share/jupyter", env);
		kernelspec_dirs_add(&dirs, n, path);
		free(path);
	}
	kernelspec_dirs_system(&dirs, n);
	return (dirs);
}

/* Free a list from kernelspec_dirs. */
void
kernelspec_dirs_free(char **dirs, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* Jupyter accepts only these characters in kernel names. */
static int
kernelspec_valid_name(const char *name)
{
	const char	*cp;

	if (*name == '\0' || strlen(name) > 255)
		return (0);
	for (cp = name; *cp != '\0'; cp++) {
		if (!isalnum((unsigned char)*cp) && strchr("._-", *cp) == NULL)
			return (0);
	}
	return (strcmp(name, ".") != 0 && strcmp(name, "..") != 0);
}

/* Does <kernels>/<entry>/kernel.json exist as a regular file? */
static int
kernelspec_is_spec(const char *kernels, const char *entry)
{
	struct stat	 sb;
	char		*path;
	int		 ok;

	xasprintf(&path, "%s/%s/kernel.json", kernels, entry);
	ok = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
	free(path);
	return (ok);
}

/*
 * Look for name in one <data dir>/kernels.  An exact match beats other
 * spellings; among those the smallest name wins so the answer does not
 * depend on readdir order.  Returns the entry name or NULL; caller frees.
 */
static char *
kernelspec_scan(const char *kernels, const char *name)
{
	DIR		*dp;
	struct dirent	*de;
	char		*best = NULL;

	if ((dp = opendir(kernels)) == NULL)
		return (NULL);
	while ((de = readdir(dp)) != NULL) {
		if (strcasecmp(de->d_name, name) != 0 ||
		    !kernelspec_is_spec(kernels, de->d_name))
			continue;
		if (strcmp(de->d_name, name) == 0) {
			free(best);
			best = xstrdup(de->d_name);
			break;
		}
		if (best == NULL || strcmp(de->d_name, best) < 0) {
			free(best);
			best = xstrdup(de->d_name);
		}
	}
	closedir(dp);
	return (best);
}

/* Lowercase copy; caller frees. */
static char *
kernelspec_lower(const char *s)
{
	char	*copy, *cp;

	copy = xstrdup(s);
	for (cp = copy; *cp != '\0'; cp++)
		*cp = tolower((unsigned char)*cp);
	return (copy);
}

/*
 * Find a kernelspec by name.  Returns NULL with cause set when it does
 * not exist (the cause lists the names that do) or cannot be read.
 */
struct kernelspec *
kernelspec_find(const char *name, char **cause)
{
	struct kernelspec	*ks = NULL;
	struct json_object	*list, *item, *v;
	char			**dirs, *kernels, *entry, *dir;
	char			*names, *prev;
	size_t			 ndirs, i;

	if (!kernelspec_valid_name(name)) {
		xasprintf(cause, "invalid kernel name '%s' (letters, digits, "
		    "'.', '_' and '-' only)", name);
		return (NULL);
	}

	dirs = kernelspec_dirs(&ndirs);
	for (i = 0; i < ndirs; i++) {
		xasprintf(&kernels, "%s/kernels", dirs[i]);
		entry = kernelspec_scan(kernels, name);
		if (entry != NULL) {
			xasprintf(&dir, "%s/%s", kernels, entry);
			ks = kernelspec_load(entry, dir, cause);
			free(dir);
			free(entry);
			free(kernels);
			kernelspec_dirs_free(dirs, ndirs);
			return (ks);
		}
		free(kernels);
	}
	kernelspec_dirs_free(dirs, ndirs);

	list = kernelspec_list();
	names = xstrdup("");
	for (i = 0; i < json_object_array_length(list); i++) {
		item = json_object_array_get_idx(list, i);
		json_object_object_get_ex(item, "name", &v);
		prev = names;
		xasprintf(&names, "%s%s%s", prev, *prev == '\0' ? "" : ", ",
		    json_object_get_string(v));
		free(prev);
	}
	json_object_put(list);
	if (*names == '\0')
		xasprintf(cause, "no kernelspec named '%s' and none installed",
		    name);
	else
		xasprintf(cause, "no kernelspec named '%s' (available: %s)",
		    name, names);
	free(names);
	return (NULL);
}

/* A string member, or NULL when absent or not a string. */
static const char *
kernelspec_string(struct json_object *obj, const char *key)
{
	struct json_object	*v;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return (NULL);
	return (json_object_get_string(v));
}

/* {prefix}: the dir above share/jupyter/kernels/<name>, else /usr. */
static char *
kernelspec_prefix(const char *resource_dir)
{
	const char	*suffix = "/share/jupyter/kernels/";
	const char	*cp;
	size_t		 len;

	if ((cp = strstr(resource_dir, suffix)) == NULL ||
	    strchr(cp + strlen(suffix), '/') != NULL)
		return (xstrdup("/usr"));
	len = cp - resource_dir;
	if (len == 0)
		return (xstrdup("/"));
	return (xstrndup(resource_dir, len));
}

/* Read <resource_dir>/kernel.json; name is the directory's name. */
struct kernelspec *
kernelspec_load(const char *name, const char *resource_dir,
    char **cause)
{
	struct kernelspec	*ks;
	struct json_object	*obj, *argv, *env, *v;
	struct json_object_iterator it, end;
	const char		*s;
	char			*path, *data, *why;
	size_t			 len, i;

	xasprintf(&path, "%s/kernel.json", resource_dir);
	if (util_read_file_max(path, 0, KERNELSPEC_JSON_MAX, &data, &len,
	    &why) != 0) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		free(path);
		return (NULL);
	}
	if ((obj = mpjson_parse(data, len, &why)) == NULL)
		free(why);
	free(data);
	if (obj == NULL || !json_object_is_type(obj, json_type_object)) {
		xasprintf(cause, "%s: not a JSON object", path);
		goto fail;
	}
	if (!json_object_object_get_ex(obj, "argv", &argv) ||
	    !json_object_is_type(argv, json_type_array) ||
	    json_object_array_length(argv) == 0) {
		xasprintf(cause, "%s: argv is missing or empty", path);
		goto fail;
	}
	for (i = 0; i < json_object_array_length(argv); i++) {
		v = json_object_array_get_idx(argv, i);
		if (!json_object_is_type(v, json_type_string)) {
			xasprintf(cause, "%s: argv[%zu] is not a string",
			    path, i);
			goto fail;
		}
	}

	ks = xcalloc(1, sizeof *ks);
	ks->name = kernelspec_lower(name);
	ks->resource_dir = xstrdup(resource_dir);
	ks->prefix = kernelspec_prefix(resource_dir);
	s = kernelspec_string(obj, "display_name");
	ks->display_name = xstrdup(s != NULL ? s : ks->name);
	s = kernelspec_string(obj, "language");
	ks->language = xstrdup(s != NULL ? s : "");

	ks->argc = json_object_array_length(argv);
	ks->argv = xcalloc(ks->argc + 1, sizeof *ks->argv);
	for (i = 0; i < ks->argc; i++) {
		ks->argv[i] = xstrdup(json_object_get_string(
		    json_object_array_get_idx(argv, i)));
	}

	if (json_object_object_get_ex(obj, "env", &env) &&
	    json_object_is_type(env, json_type_object)) {
		it = json_object_iter_begin(env);
		end = json_object_iter_end(env);
		for (; !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it)) {
			v = json_object_iter_peek_value(&it);
			if (!json_object_is_type(v, json_type_string))
				continue;
			ks->env_names = xreallocarray(ks->env_names,
			    ks->nenv + 1, sizeof *ks->env_names);
			ks->env_values = xreallocarray(ks->env_values,
			    ks->nenv + 1, sizeof *ks->env_values);
			ks->env_names[ks->nenv] =
			    xstrdup(json_object_iter_peek_name(&it));
			ks->env_values[ks->nenv] =
			    xstrdup(json_object_get_string(v));
			ks->nenv++;
		}
	}

	s = kernelspec_string(obj, "interrupt_mode");
	if (s == NULL || strcmp(s, "signal") == 0)
		ks->interrupt_mode = KERNELSPEC_INTERRUPT_SIGNAL;
	else if (strcmp(s, "message") == 0)
		ks->interrupt_mode = KERNELSPEC_INTERRUPT_MESSAGE;
	else {
		xasprintf(cause, "%s: unknown interrupt_mode '%s'", path, s);
		kernelspec_free(ks);
		goto fail;
	}

	if (json_object_object_get_ex(obj, "metadata", &v) &&
	    json_object_is_type(v, json_type_object))
		ks->metadata = json_object_get(v);
	json_object_put(obj);
	free(path);
	return (ks);

fail:
	json_object_put(obj);
	free(path);
	return (NULL);
}

/* Free a kernelspec. */
void
kernelspec_free(struct kernelspec *ks)
{
	size_t	i;

	if (ks == NULL)
		return;
	free(ks->name);
	free(ks->resource_dir);
	free(ks->prefix);
	free(ks->display_name);
	free(ks->language);
	for (i = 0; i < ks->argc; i++)
		free(ks->argv[i]);
	free(ks->argv);
	for (i = 0; i < ks->nenv; i++) {
		free(ks->env_names[i]);
		free(ks->env_values[i]);
	}
	free(ks->env_names);
	free(ks->env_values);
	json_object_put(ks->metadata);
	free(ks);
}

const char *
kernelspec_name(struct kernelspec *ks)
{
	return (ks->name);
}

const char *
kernelspec_display_name(struct kernelspec *ks)
{
	return (ks->display_name);
}

const char *
kernelspec_language(struct kernelspec *ks)
{
	return (ks->language);
}

const char *
kernelspec_resource_dir(struct kernelspec *ks)
{
	return (ks->resource_dir);
}

/* kernel.json's metadata object (borrowed), or NULL. */
struct json_object *
kernelspec_metadata(struct kernelspec *ks)
{
	return (ks->metadata);
}

enum kernelspec_interrupt_mode
kernelspec_interrupt_mode(struct kernelspec *ks)
{
	return (ks->interrupt_mode);
}

/* Replace every {name} in s for which a value is given; caller frees. */
static char *
kernelspec_subst(const char *s, const char *const *keys,
    const char *const *values, size_t n)
{
	char		*out;
	size_t		 len = 0, size, i, klen, vlen;

	size = strlen(s) + 1;
	out = xmalloc(size);
	while (*s != '\0') {
		for (i = 0; i < n; i++) {
			klen = strlen(keys[i]);
			if (strncmp(s, keys[i], klen) == 0)
				break;
		}
		if (i == n) {
			out[len++] = *s++;
			continue;
		}
		vlen = strlen(values[i]);
		size += vlen;
		out = xreallocarray(out, 1, size);
		memcpy(out + len, values[i], vlen);
		len += vlen;
		s += klen;
	}
	out[len] = '\0';
	return (out);
}

/*
 * The argv with {connection_file}, {resource_dir} and {prefix} replaced;
 * NULL-terminated, caller frees with kernelspec_argv_free.
 */
char **
kernelspec_argv(struct kernelspec *ks, const char *conn_file)
{
	const char	*keys[] = {
		"{connection_file}", "{resource_dir}", "{prefix}"
	};
	const char	*values[3];
	char		**argv;
	size_t		 i;

	values[0] = conn_file;
	values[1] = ks->resource_dir;
	values[2] = ks->prefix;
	argv = xcalloc(ks->argc + 1, sizeof *argv);
	for (i = 0; i < ks->argc; i++)
		argv[i] = kernelspec_subst(ks->argv[i], keys, values, 3);
	return (argv);
}

/* Free an argv from kernelspec_argv. */
void
kernelspec_argv_free(char **argv)
{
	char	**ap;

	if (argv == NULL)
		return;
	for (ap = argv; *ap != NULL; ap++)
		free(*ap);
	free(argv);
}

size_t
kernelspec_nenv(struct kernelspec *ks)
{
	return (ks->nenv);
}

const char *
kernelspec_env_name(struct kernelspec *ks, size_t i)
{
	return (ks->env_names[i]);
}

/*
 * An env value with $VAR and ${VAR} taken from our environment, as
 * jupyter_client's string.Template safe_substitute does: unknown names
 * stay as written, $$ is a dollar.  Caller frees.
 */
char *
kernelspec_env_value(struct kernelspec *ks, size_t i)
{
	const char	*s = ks->env_values[i], *end, *value;
	char		*out, *name;
	size_t		 len = 0, size, nlen, vlen;
	int		 braced;

	size = strlen(s) + 1;
	out = xmalloc(size);
	while (*s != '\0') {
		if (s[0] != '$') {
			out[len++] = *s++;
			continue;
		}
		if (s[1] == '$') {
			out[len++] = '$';
			s += 2;
			continue;
		}
		braced = s[1] == '{';
		end = s + 1 + braced;
		if (!isalpha((unsigned char)*end) && *end != '_') {
			out[len++] = *s++;
			continue;
		}
		while (isalnum((unsigned char)*end) || *end == '_')
			end++;
		if (braced && *end != '}') {
			out[len++] = *s++;
			continue;
		}
		nlen = end - (s + 1 + braced);
		name = xstrndup(s + 1 + braced, nlen);
		value = getenv(name);
		free(name);
		if (value == NULL) {
			out[len++] = *s++;
			continue;
		}
		vlen = strlen(value);
		size += vlen;
		out = xreallocarray(out, 1, size);
		memcpy(out + len, value, vlen);
		len += vlen;
		s = end + braced;
	}
	out[len] = '\0';
	return (out);
}

/* Order list entries by name. */
static int
kernelspec_cmp(const void *a, const void *b)
{
	struct json_object	*ja = *(struct json_object *const *)a;
	struct json_object	*jb = *(struct json_object *const *)b;

	return (strcmp(kernelspec_string(ja, "name"),
	    kernelspec_string(jb, "name")));
}

/*
 * Every installed kernelspec as a JSON array of {name, display_name,
 * language, resource_dir}, sorted by name, first dir winning for each
 * name.  Broken specs are logged and left out.  Caller puts.
 */
struct json_object *
kernelspec_list(void)
{
	struct kernelspec	*ks;
	struct json_object	*list, *item;
	DIR			*dp;
	struct dirent		*de;
	char			**dirs, *kernels, *dir, *lower, *cause;
	char			**seen = NULL;
	size_t			 ndirs, nseen = 0, i, j;

	list = json_object_new_array();
	dirs = kernelspec_dirs(&ndirs);
	for (i = 0; i < ndirs; i++) {
		xasprintf(&kernels, "%s/kernels", dirs[i]);
		if ((dp = opendir(kernels)) == NULL) {
			free(kernels);
			continue;
		}
		while ((de = readdir(dp)) != NULL) {
			if (!kernelspec_valid_name(de->d_name) ||
			    !kernelspec_is_spec(kernels, de->d_name))
				continue;
			lower = kernelspec_lower(de->d_name);
			for (j = 0; j < nseen; j++) {
				if (strcmp(seen[j], lower) == 0)
					break;
			}
			if (j != nseen) {
				free(lower);
				continue;
			}
			free(lower);
			xasprintf(&dir, "%s/%s", kernels, de->d_name);
			ks = kernelspec_load(de->d_name, dir, &cause);
			free(dir);
			if (ks == NULL) {
				log_warnx("kernelspec: %s", cause);
				free(cause);
				continue;
			}
			seen = xreallocarray(seen, nseen + 1, sizeof *seen);
			seen[nseen++] = xstrdup(ks->name);
			item = json_object_new_object();
			json_object_object_add(item, "name",
			    json_object_new_string(ks->name));
			json_object_object_add(item, "display_name",
			    json_object_new_string(ks->display_name));
			json_object_object_add(item, "language",
			    json_object_new_string(ks->language));
			json_object_object_add(item, "resource_dir",
			    json_object_new_string(ks->resource_dir));
			json_object_array_add(list, item);
			kernelspec_free(ks);
		}
		closedir(dp);
		free(kernels);
	}
	kernelspec_dirs_free(dirs, ndirs);
	for (j = 0; j < nseen; j++)
		free(seen[j]);
	free(seen);
	json_object_array_sort(list, kernelspec_cmp);
	return (list);
}
