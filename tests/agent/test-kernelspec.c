/* SPDX-License-Identifier: ISC */
/*
 * test-kernelspec.c: kernelspec search (common/kernelspec.c) on a private
 * tree of data dirs: Jupyter's search order, case-insensitive names,
 * first match wins, argv and env substitution, errors that list what
 * exists.  Criterion forks each test, so setenv stays local to it.
 *
 * Hermetic: the host's kernelspecs (/usr/share/jupyter, a user's
 * ~/.local/share/jupyter, an activated venv) are never read.  Jupyter's
 * own rules allow that: JUPYTER_PATH and JUPYTER_DATA_DIR point into our
 * tree, CONDA_PREFIX and VIRTUAL_ENV are unset, and JUPYTER_PLATFORM_DIRS
 * takes the system dirs from XDG_DATA_DIRS, which points into our tree.
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "agent.h"

static char	root[] = "/tmp/test-kernelspec-XXXXXX";

static void	spec(const char *, const char *, const char *);
static void	setup(void);
static void	teardown(void);

/* Write <root>/<dir>/kernels/<name>/kernel.json. */
static void
spec(const char *dir, const char *name, const char *json)
{
	char	path[512];
	FILE	*f;

	snprintf(path, sizeof path, "mkdir -p %s/%s", root, dir);
	cr_assert_eq(system(path), 0);
	snprintf(path, sizeof path, "%s/%s/kernels", root, dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/%s/kernels/%s", root, dir, name);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/%s/kernels/%s/kernel.json", root, dir,
	    name);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(json, f);
	fclose(f);
}

static void
setup(void)
{
	char	a[512], b[512], path[1100];

	cr_assert_not_null(mkdtemp(root));
	snprintf(a, sizeof a, "%s/a", root);
	snprintf(b, sizeof b, "%s/b", root);
	snprintf(path, sizeof path, "%s:%s", a, b);
	setenv("JUPYTER_PATH", path, 1);
	snprintf(path, sizeof path, "%s/user", root);
	setenv("JUPYTER_DATA_DIR", path, 1);
	unsetenv("CONDA_PREFIX");
	unsetenv("VIRTUAL_ENV");
	setenv("JUPYTER_PLATFORM_DIRS", "1", 1);
	snprintf(path, sizeof path, "%s/sys1:%s/sys2", root, root);
	setenv("XDG_DATA_DIRS", path, 1);

	spec("a", "MyKernel", "{\"argv\": [\"{prefix}/bin/mk\", \"-f\", "
	    "\"{connection_file}\", \"--res={resource_dir}\", \"{other}\"], "
	    "\"display_name\": \"My Kernel\", \"language\": \"mylang\", "
	    "\"interrupt_mode\": \"message\", \"env\": {\"A\": \"x${HOME}y\", "
	    "\"B\": \"$NO_SUCH_VAR_X/$$\"}}");
	spec("a", "dup", "{\"argv\": [\"a\"], \"display_name\": \"from a\", "
	    "\"language\": \"x\"}");
	spec("b", "DUP", "{\"argv\": [\"b\"], \"display_name\": \"from b\", "
	    "\"language\": \"x\"}");
	spec("b", "onlyb", "{\"argv\": [\"b\"], \"display_name\": \"B\"}");
	spec("user", "broken", "{\"argv\": []}");
	/* A system dir: found last, hidden by the same name earlier. */
	spec("sys1/jupyter", "dup", "{\"argv\": [\"s\"], \"display_name\": "
	    "\"from sys1\"}");
	spec("sys2/jupyter", "onlysys", "{\"argv\": [\"s\"], "
	    "\"display_name\": \"S\"}");
	/* A dir without kernel.json is not a kernelspec. */
	snprintf(path, sizeof path, "%s/a/kernels/empty", root);
	mkdir(path, 0700);
}

static void
teardown(void)
{
	char	cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	system(cmd);
}

TestSuite(kernelspec, .init = setup, .fini = teardown);

Test(kernelspec, search_order)
{
	char	**dirs, want[512];
	size_t	  n;

	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 5);
	snprintf(want, sizeof want, "%s/a", root);
	cr_assert_str_eq(dirs[0], want);
	snprintf(want, sizeof want, "%s/b", root);
	cr_assert_str_eq(dirs[1], want);
	snprintf(want, sizeof want, "%s/user", root);
	cr_assert_str_eq(dirs[2], want);
	snprintf(want, sizeof want, "%s/sys1/jupyter", root);
	cr_assert_str_eq(dirs[3], want);
	snprintf(want, sizeof want, "%s/sys2/jupyter", root);
	cr_assert_str_eq(dirs[4], want);
	kernelspec_dirs_free(dirs, n);

	/* Without JUPYTER_DATA_DIR: XDG_DATA_HOME, then HOME. */
	unsetenv("JUPYTER_PATH");
	unsetenv("JUPYTER_DATA_DIR");
	setenv("XDG_DATA_HOME", "/xdg", 1);
	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(dirs[0], "/xdg/jupyter");
	kernelspec_dirs_free(dirs, n);
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/someone", 1);
	dirs = kernelspec_dirs(&n);
	cr_assert_str_eq(dirs[0], "/home/someone/.local/share/jupyter");
	kernelspec_dirs_free(dirs, n);

	/* An activated environment's prefix comes before the system. */
	setenv("VIRTUAL_ENV", "/venv", 1);
	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(dirs[1], "/venv/share/jupyter");
	kernelspec_dirs_free(dirs, n);
	unsetenv("VIRTUAL_ENV");
}

/* jupyter_core's system dirs, and when XDG_DATA_DIRS replaces them. */
Test(kernelspec, system_dirs)
{
	const char	*off[] = { "0", "no", "False", "OFF", "n", "0.0" };
	char		**dirs;
	size_t		  n, i;

	unsetenv("JUPYTER_PATH");
	for (i = 0; i <= sizeof off / sizeof off[0]; i++) {
		if (i == sizeof off / sizeof off[0])
			unsetenv("JUPYTER_PLATFORM_DIRS");
		else
			setenv("JUPYTER_PLATFORM_DIRS", off[i], 1);
		dirs = kernelspec_dirs(&n);
		cr_assert_eq(n, 3);
		cr_assert_str_eq(dirs[1], "/usr/local/share/jupyter");
		cr_assert_str_eq(dirs[2], "/usr/share/jupyter");
		kernelspec_dirs_free(dirs, n);
	}

	/* Set (to anything but a "no"), with XDG_DATA_DIRS unset or blank. */
	setenv("JUPYTER_PLATFORM_DIRS", "yes", 1);
	unsetenv("XDG_DATA_DIRS");
	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(dirs[1], "/usr/local/share/jupyter");
	cr_assert_str_eq(dirs[2], "/usr/share/jupyter");
	kernelspec_dirs_free(dirs, n);
	setenv("XDG_DATA_DIRS", " ", 1);
	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(dirs[2], "/usr/share/jupyter");
	kernelspec_dirs_free(dirs, n);
	setenv("XDG_DATA_DIRS", "/opt/share::/srv", 1);
	dirs = kernelspec_dirs(&n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(dirs[1], "/opt/share/jupyter");
	cr_assert_str_eq(dirs[2], "/srv/jupyter");
	kernelspec_dirs_free(dirs, n);
}

Test(kernelspec, case_insensitive)
{
	struct kernelspec	*ks;
	const char		*names[] = {
		"mykernel", "MYKERNEL", "MyKernel"
	};
	char			*cause = NULL, want[512];
	size_t			 i;

	snprintf(want, sizeof want, "%s/a/kernels/MyKernel", root);
	for (i = 0; i < 3; i++) {
		ks = kernelspec_find(names[i], &cause);
		cr_assert_not_null(ks, "%s: %s", names[i], cause);
		cr_assert_str_eq(kernelspec_name(ks), "mykernel");
		cr_assert_str_eq(kernelspec_display_name(ks),
		    "My Kernel");
		cr_assert_str_eq(kernelspec_language(ks), "mylang");
		cr_assert_str_eq(kernelspec_resource_dir(ks), want);
		cr_assert_eq(kernelspec_interrupt_mode(ks),
		    KERNELSPEC_INTERRUPT_MESSAGE);
		kernelspec_free(ks);
	}
}

Test(kernelspec, first_match_wins)
{
	struct kernelspec	*ks;
	char			*cause = NULL;

	ks = kernelspec_find("Dup", &cause);
	cr_assert_not_null(ks, "%s", cause);
	cr_assert_str_eq(kernelspec_display_name(ks), "from a");
	kernelspec_free(ks);

	ks = kernelspec_find("onlyb", &cause);
	cr_assert_not_null(ks, "%s", cause);
	cr_assert_str_eq(kernelspec_display_name(ks), "B");
	/* Defaults. */
	cr_assert_str_eq(kernelspec_language(ks), "");
	cr_assert_eq(kernelspec_interrupt_mode(ks),
	    KERNELSPEC_INTERRUPT_SIGNAL);
	kernelspec_free(ks);
}

Test(kernelspec, argv_substitution)
{
	struct kernelspec	*ks;
	char			**argv, *cause = NULL, want[512];

	ks = kernelspec_find("mykernel", &cause);
	cr_assert_not_null(ks, "%s", cause);
	argv = kernelspec_argv(ks, "/run/x/kernel-1.json");
	/* Not under share/jupyter/kernels: prefix falls back to /usr. */
	cr_assert_str_eq(argv[0], "/usr/bin/mk");
	cr_assert_str_eq(argv[1], "-f");
	cr_assert_str_eq(argv[2], "/run/x/kernel-1.json");
	snprintf(want, sizeof want, "--res=%s/a/kernels/MyKernel", root);
	cr_assert_str_eq(argv[3], want);
	cr_assert_str_eq(argv[4], "{other}");
	cr_assert_null(argv[5]);
	kernelspec_argv_free(argv);
	kernelspec_free(ks);
}

Test(kernelspec, prefix_from_share_jupyter)
{
	struct kernelspec	*ks;
	char			**argv, *cause = NULL;
	char			 dir[600], path[700];
	FILE			*f;

	snprintf(dir, sizeof dir, "%s/pfx/share/jupyter/kernels/k", root);
	snprintf(path, sizeof path, "mkdir -p %s", dir);
	cr_assert_eq(system(path), 0);
	snprintf(path, sizeof path, "%s/kernel.json", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("{\"argv\": [\"{prefix}/bin/python\"]}", f);
	fclose(f);
	ks = kernelspec_load("k", dir, &cause);
	cr_assert_not_null(ks, "%s", cause);
	argv = kernelspec_argv(ks, "c");
	snprintf(path, sizeof path, "%s/pfx/bin/python", root);
	cr_assert_str_eq(argv[0], path);
	kernelspec_argv_free(argv);
	kernelspec_free(ks);
}

Test(kernelspec, env_substitution)
{
	struct kernelspec	*ks;
	char			*cause = NULL, *v;
	size_t			 i;
	int			 seen = 0;

	setenv("HOME", "/h", 1);
	ks = kernelspec_find("mykernel", &cause);
	cr_assert_not_null(ks, "%s", cause);
	cr_assert_eq(kernelspec_nenv(ks), 2);
	for (i = 0; i < kernelspec_nenv(ks); i++) {
		v = kernelspec_env_value(ks, i);
		if (strcmp(kernelspec_env_name(ks, i), "A") == 0) {
			cr_assert_str_eq(v, "x/hy");
			seen |= 1;
		} else {
			cr_assert_str_eq(v, "$NO_SUCH_VAR_X/$");
			seen |= 2;
		}
		free(v);
	}
	cr_assert_eq(seen, 3);
	kernelspec_free(ks);
}

Test(kernelspec, unknown_name_lists_available)
{
	struct kernelspec	*ks;
	char			*cause = NULL;

	ks = kernelspec_find("nosuch", &cause);
	cr_assert_null(ks);
	cr_assert_not_null(cause);
	cr_assert(strstr(cause, "no kernelspec named 'nosuch'") != NULL,
	    "%s", cause);
	cr_assert_str_eq(cause, "no kernelspec named 'nosuch' (available: "
	    "dup, mykernel, onlyb, onlysys)");
	/* The broken spec is not offered. */
	cr_assert(strstr(cause, "broken") == NULL, "%s", cause);
	free(cause);
}

Test(kernelspec, invalid_and_broken)
{
	struct kernelspec	*ks;
	char			*cause = NULL;

	ks = kernelspec_find("../a", &cause);
	cr_assert_null(ks);
	cr_assert(strstr(cause, "invalid kernel name") != NULL, "%s", cause);
	free(cause);

	cause = NULL;
	ks = kernelspec_find("broken", &cause);
	cr_assert_null(ks);
	cr_assert(strstr(cause, "argv is missing or empty") != NULL, "%s",
	    cause);
	free(cause);

	cause = NULL;
	ks = kernelspec_find("empty", &cause);
	cr_assert_null(ks);
	free(cause);
}

Test(kernelspec, list_sorted_first_wins)
{
	struct json_object	*list, *item, *v;
	const char		*want[] = { "dup", "mykernel", "onlyb",
	    "onlysys" };
	size_t			 i;

	/* Exactly ours: nothing of the host's leaks in. */
	list = kernelspec_list();
	cr_assert_eq(json_object_array_length(list), 4, "%s",
	    json_object_to_json_string(list));
	for (i = 0; i < 4; i++) {
		item = json_object_array_get_idx(list, i);
		cr_assert(json_object_object_get_ex(item, "name", &v));
		cr_assert_str_eq(json_object_get_string(v), want[i]);
	}
	item = json_object_array_get_idx(list, 0);
	json_object_object_get_ex(item, "display_name", &v);
	cr_assert_str_eq(json_object_get_string(v), "from a");
	json_object_put(list);
}

/* No kernelspec at all: the error says so. */
Test(kernelspec, none_installed)
{
	struct kernelspec	*ks;
	char			*cause = NULL, path[600];

	snprintf(path, sizeof path, "%s/nothing", root);
	setenv("JUPYTER_PATH", path, 1);
	setenv("JUPYTER_DATA_DIR", path, 1);
	setenv("XDG_DATA_DIRS", path, 1);
	ks = kernelspec_find("python3", &cause);
	cr_assert_null(ks);
	cr_assert_str_eq(cause, "no kernelspec named 'python3' and none "
	    "installed");
	free(cause);
}
