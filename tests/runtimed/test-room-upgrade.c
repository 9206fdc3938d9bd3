/* SPDX-License-Identifier: ISC */
/*
 * test-room-upgrade.c: nbformat 1-3 to 4 upgrade, one conversion at a
 * time, against the results nbformat's own upgrade gives (worked out
 * from nbformat/v4/convert.py and checked with nbformat 5.5), then
 * generated notebooks against nbformat itself (upgrade-gen.py).  The
 * daemon end to end is tests/runtimed/upgrade.sh.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "runtimed/runtimed.h"

static struct json_object	*up(const char *, char **, char **);
static void	expect(const char *, const char *);
static void	refuse(const char *, const char *);
static void	gen_setup(void);
static void	gen_teardown(void);
static char	*gen_no_ids(const char *);
static char	*deep_v3(int);

/* Upgrade JSON text; the result (or NULL) and the note or the cause. */
static struct json_object *
up(const char *text, char **note, char **cause)
{
	struct json_object	*root, *copy = NULL, *nb;

	root = json_tokener_parse(text);
	cr_assert_not_null(root, "bad test JSON: %s", text);
	cr_assert_eq(json_object_deep_copy(root, &copy, NULL), 0);
	*note = *cause = NULL;
	nb = room_upgrade_v4(root, note, cause);
	cr_assert(json_object_equal(root, copy), "the input was changed");
	json_object_put(copy);
	json_object_put(root);
	return (nb);
}

/* Upgrade and compare with the expected nbformat 4 JSON. */
static void
expect(const char *text, const char *want)
{
	struct json_object	*nb, *w;
	char			*note, *cause;

	nb = up(text, &note, &cause);
	cr_assert_not_null(nb, "refused: %s", cause);
	w = json_tokener_parse(want);
	cr_assert_not_null(w, "bad expected JSON: %s", want);
	cr_assert(json_object_equal(nb, w), "got %s\nwant %s",
	    json_object_to_json_string(nb), json_object_to_json_string(w));
	json_object_put(w);
	json_object_put(nb);
	free(note);
}

/* Refused, with a cause that mentions what. */
static void
refuse(const char *text, const char *what)
{
	struct json_object	*nb;
	char			*note, *cause;

	nb = up(text, &note, &cause);
	cr_assert_null(nb, "not refused: %s", text);
	cr_assert_null(note);
	cr_assert_not_null(cause);
	cr_assert(strstr(cause, what) != NULL, "cause \"%s\" lacks \"%s\"",
	    cause, what);
	free(cause);
}

/* A v3 notebook with these cells in one worksheet. */
#define V3(cells) "{\"metadata\": {\"name\": \"n\"}, \"nbformat\": 3, " \
	"\"nbformat_minor\": 0, \"worksheets\": [{\"cells\": [" cells \
	"], \"metadata\": {}}]}"
#define V4(cells) "{\"metadata\": {\"orig_nbformat\": 3, " \
	"\"orig_nbformat_minor\": 0}, \"nbformat\": 4, " \
	"\"nbformat_minor\": 5, \"cells\": [" cells "]}"
#define CODE3(outs) "{\"cell_type\": \"code\", \"input\": \"x\", " \
	"\"language\": \"python\", \"metadata\": {}, \"outputs\": [" outs \
	"], \"prompt_number\": 1}"
#define CODE4(outs) "{\"cell_type\": \"code\", \"source\": \"x\", " \
	"\"metadata\": {}, \"outputs\": [" outs "], \"execution_count\": 1}"

Test(room_upgrade, headings_to_markdown)
{
	expect(V3("{\"cell_type\": \"heading\", \"level\": 1, "
	    "\"metadata\": {}, \"source\": \"One\"},"
	    "{\"cell_type\": \"heading\", \"level\": 3, "
	    "\"metadata\": {}, \"source\": [\"Three\"]},"
	    "{\"cell_type\": \"heading\", \"level\": 6, "
	    "\"metadata\": {\"k\": 1}, \"source\": \"Six\"},"
	    "{\"cell_type\": \"heading\", \"source\": \"none\"}"),
	    V4("{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"# One\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"### Three\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {\"k\": 1}, "
	    "\"source\": \"###### Six\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"# none\"}"));
}

Test(room_upgrade, heading_lines_joined_as_python_splitlines)
{
	/* " ".join(s.splitlines()): every Python line boundary. */
	expect(V3("{\"cell_type\": \"heading\", \"level\": 2, "
	    "\"metadata\": {}, \"source\": "
	    "\"a\\nb\\r\\nc\\rd\\u000be\\u000cf\\u001cg\\u0085h\\u2028i"
	    "\\u2029j\\n\\nk\\n\"},"
	    "{\"cell_type\": \"heading\", \"level\": 2, \"metadata\": {}, "
	    "\"source\": \"\"},"
	    "{\"cell_type\": \"heading\", \"level\": 0, \"metadata\": {}, "
	    "\"source\": \"zero\"},"
	    "{\"cell_type\": \"heading\", \"level\": 1, \"metadata\": {}, "
	    "\"source\": [\"no newline\", \"joined with one\"]}"),
	    V4("{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"## a b c d e f g h i j  k\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"## \"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \" zero\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"# no newline joined with one\"}"));
}

Test(room_upgrade, html_to_markdown_raw_kept)
{
	expect(V3("{\"cell_type\": \"html\", \"metadata\": {}, "
	    "\"source\": \"<b>\"},"
	    "{\"cell_type\": \"raw\", \"metadata\": {}, \"source\": \"r\"},"
	    "{\"cell_type\": \"markdown\", \"source\": [\"a\\n\", \"b\"]}"),
	    V4("{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"<b>\"},"
	    "{\"cell_type\": \"raw\", \"metadata\": {}, \"source\": \"r\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"a\\nb\"}"));
}

Test(room_upgrade, code_cell_fields)
{
	expect(V3("{\"cell_type\": \"code\", \"collapsed\": true, "
	    "\"input\": [\"a = 1\", \"b = 2\"], \"language\": \"python\", "
	    "\"metadata\": {\"scrolled\": true}, \"outputs\": [], "
	    "\"prompt_number\": 7},"
	    "{\"cell_type\": \"code\", \"language\": \"python\", "
	    "\"outputs\": []}"),
	    V4("{\"cell_type\": \"code\", \"source\": \"a = 1\\nb = 2\", "
	    "\"metadata\": {\"collapsed\": true, \"scrolled\": true}, "
	    "\"outputs\": [], \"execution_count\": 7},"
	    "{\"cell_type\": \"code\", \"source\": \"\", \"metadata\": {}, "
	    "\"outputs\": [], \"execution_count\": null}"));
}

Test(room_upgrade, pyout_to_execute_result)
{
	expect(V3(CODE3("{\"output_type\": \"pyout\", \"prompt_number\": 4, "
	    "\"text\": [\"line\", \"two\"], \"html\": [\"<p>\\n\", \"</p>\"], "
	    "\"latex\": \"$x$\", \"metadata\": {}},"
	    "{\"output_type\": \"pyout\", \"text\": \"t\"}")),
	    V4(CODE4("{\"output_type\": \"execute_result\", "
	    "\"execution_count\": 4, \"metadata\": {}, \"data\": "
	    "{\"text/plain\": \"line\\ntwo\", \"text/html\": \"<p>\\n</p>\", "
	    "\"text/latex\": \"$x$\"}},"
	    "{\"output_type\": \"execute_result\", \"execution_count\": null, "
	    "\"metadata\": {}, \"data\": {\"text/plain\": \"t\"}}")));
}

Test(room_upgrade, display_data_keys_to_mimetypes)
{
	expect(V3(CODE3("{\"output_type\": \"display_data\", "
	    "\"png\": \"iVBO\\n\", \"jpeg\": \"/9j/\", "
	    "\"svg\": [\"<svg>\\n\", \"</svg>\"], \"javascript\": \"f()\", "
	    "\"json\": [\"{\\\"a\\\": [1,\", \" 2.5]}\"], "
	    "\"text/markdown\": \"*m*\", \"metadata\": {\"png\": "
	    "{\"width\": 5}, \"other\": 1}},"
	    "{\"output_type\": \"display_data\", \"json\": \" null\"},"
	    "{\"output_type\": \"display_data\", \"json\": \"3\"}")),
	    V4(CODE4("{\"output_type\": \"display_data\", \"metadata\": "
	    "{\"image/png\": {\"width\": 5}, \"other\": 1}, \"data\": {"
	    "\"image/png\": \"iVBO\\n\", \"image/jpeg\": \"/9j/\", "
	    "\"image/svg+xml\": \"<svg>\\n</svg>\", "
	    "\"application/javascript\": \"f()\", "
	    "\"application/json\": {\"a\": [1, 2.5]}, "
	    "\"text/markdown\": \"*m*\"}},"
	    "{\"output_type\": \"display_data\", \"metadata\": {}, "
	    "\"data\": {\"application/json\": null}},"
	    "{\"output_type\": \"display_data\", \"metadata\": {}, "
	    "\"data\": {\"application/json\": 3}}")));
}

Test(room_upgrade, pyerr_and_streams)
{
	expect(V3(CODE3("{\"output_type\": \"pyerr\", \"ename\": \"E\", "
	    "\"evalue\": \"v\", \"traceback\": [\"a\", \"b\"]},"
	    "{\"output_type\": \"stream\", \"stream\": \"stderr\", "
	    "\"text\": [\"e\\n\", \"f\"]},"
	    "{\"output_type\": \"stream\", \"text\": \"o\"},"
	    "{\"output_type\": \"clear_output\", \"stdout\": true}")),
	    V4(CODE4("{\"output_type\": \"error\", \"ename\": \"E\", "
	    "\"evalue\": \"v\", \"traceback\": [\"a\", \"b\"]},"
	    "{\"output_type\": \"stream\", \"name\": \"stderr\", "
	    "\"text\": \"e\\nf\"},"
	    "{\"output_type\": \"stream\", \"name\": \"stdout\", "
	    "\"text\": \"o\"},"
	    "{\"output_type\": \"clear_output\", \"stdout\": true}")));
}

Test(room_upgrade, worksheets_flattened_metadata_moved)
{
	expect("{\"metadata\": {\"name\": \"n\", \"signature\": \"s\", "
	    "\"kernelspec\": {\"name\": \"python3\"}}, \"nbformat\": 3, "
	    "\"nbformat_minor\": 0, \"orig_nbformat\": 2, \"extra\": [1], "
	    "\"worksheets\": ["
	    "{\"cells\": [{\"cell_type\": \"markdown\", \"source\": \"1\"}], "
	    "\"metadata\": {\"w\": 1}, \"name\": \"a\"},"
	    "{\"cells\": []},"
	    "{\"cells\": [{\"cell_type\": \"raw\", \"source\": \"2\"}, "
	    "{\"cell_type\": \"markdown\", \"source\": \"3\"}]}]}",
	    "{\"metadata\": {\"kernelspec\": {\"name\": \"python3\"}, "
	    "\"orig_nbformat\": 2, \"orig_nbformat_minor\": 0}, "
	    "\"nbformat\": 4, \"nbformat_minor\": 5, \"extra\": [1], "
	    "\"cells\": ["
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"1\"},"
	    "{\"cell_type\": \"raw\", \"metadata\": {}, \"source\": \"2\"},"
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"3\"}]}");
}

Test(room_upgrade, v2_joins_with_newlines)
{
	expect("{\"metadata\": {\"name\": \"n\", \"created\": \"c\"}, "
	    "\"nbformat\": 2, \"worksheets\": [{\"cells\": ["
	    "{\"cell_type\": \"markdown\", \"source\": [\"a\\n\", \"b\"]},"
	    "{\"cell_type\": \"code\", \"collapsed\": false, "
	    "\"input\": [\"x\", \"y\"], \"language\": \"python\", "
	    "\"outputs\": [{\"output_type\": \"pyout\", \"prompt_number\": 2, "
	    "\"text\": [\"1\", \"2\"], \"png\": \"AAAA\"}], "
	    "\"prompt_number\": 2}]}]}",
	    "{\"metadata\": {\"created\": \"c\", \"orig_nbformat\": 2, "
	    "\"orig_nbformat_minor\": 0}, \"nbformat\": 4, "
	    "\"nbformat_minor\": 5, \"cells\": ["
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"a\\n\\nb\"},"
	    "{\"cell_type\": \"code\", \"source\": \"x\\ny\", "
	    "\"metadata\": {\"collapsed\": false}, \"execution_count\": 2, "
	    "\"outputs\": [{\"output_type\": \"execute_result\", "
	    "\"execution_count\": 2, \"metadata\": {}, \"data\": "
	    "{\"text/plain\": \"1\\n2\", \"image/png\": \"AAAA\"}}]}]}");
}

Test(room_upgrade, v1_cells_only)
{
	expect("{\"nbformat\": 1, \"name\": \"dropped\", \"cells\": ["
	    "{\"cell_type\": \"text\", \"text\": \"hello\", \"x\": 1},"
	    "{\"cell_type\": \"code\", \"code\": \"1+1\", "
	    "\"prompt_number\": 3},"
	    "{\"cell_type\": \"code\"}]}",
	    "{\"metadata\": {\"orig_nbformat\": 2, "
	    "\"orig_nbformat_minor\": 0}, "
	    "\"nbformat\": 4, \"nbformat_minor\": 5, \"cells\": ["
	    "{\"cell_type\": \"markdown\", \"metadata\": {}, "
	    "\"source\": \"hello\"},"
	    "{\"cell_type\": \"code\", \"source\": \"1+1\", "
	    "\"metadata\": {\"collapsed\": false}, \"execution_count\": 3, "
	    "\"outputs\": []},"
	    "{\"cell_type\": \"code\", \"source\": \"\", "
	    "\"metadata\": {\"collapsed\": false}, \"execution_count\": null, "
	    "\"outputs\": []}]}");
}

Test(room_upgrade, notes)
{
	struct json_object	*nb;
	char			*note, *cause;

	nb = up(V3(""), &note, &cause);
	cr_assert_not_null(nb);
	cr_assert_str_eq(note, "upgraded from nbformat 3.0; a save writes "
	    "nbformat 4.5");
	json_object_put(nb);
	free(note);
	nb = up("{\"metadata\": {}, \"nbformat\": 2, \"worksheets\": []}",
	    &note, &cause);
	cr_assert_not_null(nb);
	cr_assert_str_eq(note, "upgraded from nbformat 2; a save writes "
	    "nbformat 4.5");
	json_object_put(nb);
	free(note);
	nb = up("{\"nbformat\": 1, \"cells\": []}", &note, &cause);
	cr_assert_not_null(nb);
	cr_assert_str_eq(note, "upgraded from nbformat 1; a save writes "
	    "nbformat 4.5");
	json_object_put(nb);
	free(note);
}

Test(room_upgrade, refusals_say_what_and_where)
{
	refuse("{\"nbformat\": 3, \"nbformat_minor\": 0, \"worksheets\": []}",
	    "without \"metadata\"");
	refuse("{\"metadata\": {}, \"nbformat\": 3, \"worksheets\": []}",
	    "\"nbformat_minor\"");
	refuse("{\"metadata\": {}, \"nbformat\": 3, \"nbformat_minor\": 0}",
	    "without \"worksheets\"");
	refuse("{\"metadata\": {}, \"nbformat\": 3, \"nbformat_minor\": 0, "
	    "\"worksheets\": [{}]}", "worksheet 1 has no \"cells\"");
	refuse(V3("{\"source\": \"x\"}"), "worksheet 1 cell 1 has no "
	    "\"cell_type\"");
	refuse(V3("{\"cell_type\": \"markdown\"}, {\"cell_type\": \"code\"}"),
	    "worksheet 1 cell 2 has no \"outputs\"");
	refuse(V3(CODE3("{\"text\": \"x\"}")), "output 1 has no "
	    "\"output_type\"");
	refuse(V3(CODE3("{\"output_type\": \"pyout\", \"json\": \"{x\"}")),
	    "\"json\" is not valid JSON");
	refuse(V3(CODE3("{\"output_type\": \"pyout\", \"json\": 5}")),
	    "\"json\" is not a string of JSON");
	refuse(V3("{\"cell_type\": \"markdown\", \"source\": [\"a\", 1]}"),
	    "holding something other than strings");
	refuse(V3("{\"cell_type\": \"heading\", \"level\": \"2\"}"),
	    "\"level\" is not a number");
	refuse(V3("{\"cell_type\": \"heading\", \"level\": 100000}"),
	    "level 100000 is out of range");
	refuse(V3("{\"cell_type\": \"markdown\", \"metadata\": []}"),
	    "\"metadata\" is not an object");
	refuse("{\"metadata\": {}, \"nbformat\": 2, \"worksheets\": [{"
	    "\"cells\": [{\"cell_type\": \"code\", \"outputs\": [{"
	    "\"output_type\": \"display_data\", \"png\": \"\\u00e9\"}]}]}]}",
	    "non-ASCII byte at offset 0");
	refuse("{\"nbformat\": 1, \"cells\": [{\"cell_type\": \"heading\"}]}",
	    "cell 1 is neither a code nor a text cell");
	refuse("{\"nbformat\": 1}", "without \"cells\"");
	refuse("{\"nbformat\": 4, \"cells\": []}", "not an nbformat 1, 2 or 3");
}

/* The hook: room_ipynb_parse reads older files and keeps the note. */
Test(room_upgrade, parse_upgrades_and_keeps_note)
{
	const char	*v3 = V3("{\"cell_type\": \"heading\", \"level\": 2, "
	    "\"metadata\": {}, \"source\": \"T\"}," CODE3(""));
	const char	*v4;
	struct room_nb	*nb;
	char		*cause = NULL, *out;
	size_t		 len;

	nb = room_ipynb_parse(v3, strlen(v3), &cause);
	cr_assert_not_null(nb, "refused: %s", cause);
	cr_assert_not_null(nb->warnings);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(nb->warnings, 0), "message")),
	    "upgraded from nbformat 3.0; a save writes nbformat 4.5");
	cr_assert_eq(nb->ncells, 2);
	cr_assert_eq(nb->cells[0]->type, ROOM_CELL_MARKDOWN);
	cr_assert_str_eq(nb->cells[0]->source, "## T");
	cr_assert_eq(nb->cells[1]->type, ROOM_CELL_CODE);
	cr_assert_eq(nb->cells[1]->execution_count, 1);
	cr_assert(room_nb_valid_id(nb->cells[0]->id,
	    strlen(nb->cells[0]->id)));
	out = room_ipynb_write_dump(nb, &len);
	cr_assert(strstr(out, "\"orig_nbformat") == NULL);
	cr_assert(strstr(out, "\"nbformat_minor\": 5\n") != NULL);
	free(out);
	room_nb_free(nb);

	v4 = "{\"cells\": [], \"metadata\": {}, \"nbformat\": 4, "
	    "\"nbformat_minor\": 5}";
	nb = room_ipynb_parse(v4, strlen(v4), &cause);
	cr_assert_not_null(nb, "refused: %s", cause);
	cr_assert_null(nb->warnings);
	room_nb_free(nb);
}

Test(room_upgrade, parse_refuses_newer_naming_version)
{
	const char	*v5 = "{\"cells\": [], \"metadata\": {}, "
	    "\"nbformat\": 5, \"nbformat_minor\": 0}";
	char		*cause = NULL;

	cr_assert_null(room_ipynb_parse(v5, strlen(v5), &cause));
	cr_assert_str_eq(cause, "nbformat 5 is newer than runtimed reads "
	    "(nbformat 1 to 4): update runtimed");
	free(cause);
	cause = NULL;
	cr_assert_null(room_ipynb_parse(V3("{}"), strlen(V3("{}")), &cause));
	cr_assert(strstr(cause, "nbformat 3 notebook: worksheet 1 cell 1 has "
	    "no \"cell_type\"") != NULL, "%s", cause);
	free(cause);
}

/* A v3 notebook whose pyout holds JSON text nested depth levels. */
static char *
deep_v3(int depth)
{
	const char	*head = V3(CODE3("{\"output_type\": \"pyout\", "
	    "\"json\": \"@\"}"));
	const char	*at = strchr(head, '@');
	char		*s, *p;
	int		 i;

	p = s = xmalloc(strlen(head) + 2 * (size_t)depth);
	memcpy(p, head, (size_t)(at - head));
	p += at - head;
	for (i = 0; i < depth; i++)
		*p++ = '[';
	for (i = 0; i < depth; i++)
		*p++ = ']';
	strcpy(p, at + 1);
	return (s);
}

/* The JSON text of an old output nests as deep as any JSON we read. */
Test(room_upgrade, output_json_depth_is_proto_max_depth)
{
	struct room_nb	*nb;
	char		*text, *cause = NULL;

	text = deep_v3(PROTO_MAX_DEPTH - 1);
	nb = room_ipynb_parse(text, strlen(text), &cause);
	cr_assert_not_null(nb, "refused: %s", cause);
	cr_assert_eq(nb->ncells, 1);
	room_nb_free(nb);
	free(text);

	text = deep_v3(PROTO_MAX_DEPTH + 1);
	cr_assert_null(room_ipynb_parse(text, strlen(text), &cause));
	cr_assert_not_null(cause);
	cr_assert(strstr(cause, "nbformat 3 notebook: worksheet 1 cell 1 "
	    "output 1: \"json\" nests deeper than 1024 levels") != NULL,
	    "%s", cause);
	free(cause);
	free(text);
}

/*
 * Generated notebooks (tests/runtimed/upgrade-gen.py) against nbformat:
 * our load and save gives nbformat's bytes, cell ids aside, and what
 * nbformat refuses we refuse.
 */
static char	gen_dir[] = "/tmp/test-room-upgrade.XXXXXX";

static void
gen_setup(void)
{
	const char	*srcdir = getenv("srcdir");
	char		*cmd;

	cr_assert_not_null(mkdtemp(gen_dir));
	xasprintf(&cmd, "/usr/bin/python3 %s/tests/runtimed/upgrade-gen.py "
	    "%s 300 1", srcdir != NULL ? srcdir : ".", gen_dir);
	cr_assert_eq(system(cmd), 0, "generation failed: %s", cmd);
	free(cmd);
}

static void
gen_teardown(void)
{
	char	*cmd;

	xasprintf(&cmd, "rm -rf %s", gen_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	free(cmd);
}

/* Text with every cell id's value taken out. */
static char *
gen_no_ids(const char *s)
{
	static const char	 key[] = "\n   \"id\": \"";
	char			*out, *o;
	const char		*p;

	o = out = xmalloc(strlen(s) + 1);
	while ((p = strstr(s, key)) != NULL) {
		memcpy(o, s, (size_t)(p - s) + sizeof key - 1);
		o += (p - s) + sizeof key - 1;
		s = p + sizeof key - 1;
		while (*s != '\0' && *s != '"')
			s++;
	}
	strcpy(o, s);
	return (out);
}

TestSuite(generated, .init = gen_setup, .fini = gen_teardown);

Test(generated, same_as_nbformat)
{
	struct room_nb	*nb;
	DIR		*d;
	struct dirent	*e;
	char		*path, *base, *want, *got, *a, *b, *cause;
	size_t		 len, n = 0, refused = 0;

	cr_assert_not_null(d = opendir(gen_dir));
	while ((e = readdir(d)) != NULL) {
		len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 6, ".ipynb") != 0)
			continue;
		xasprintf(&path, "%s/%s", gen_dir, e->d_name);
		xasprintf(&base, "%.*s", (int)(strlen(path) - 6), path);
		cause = NULL;
		nb = room_ipynb_read(path, &cause);
		free(path);
		xasprintf(&path, "%s.refused", base);
		if (access(path, F_OK) == 0) {
			cr_assert_null(nb, "%s: nbformat refuses it, we do not",
			    base);
			free(cause);
			refused++;
		} else {
			cr_assert_not_null(nb, "%s: %s", base, cause);
			free(path);
			xasprintf(&path, "%s.want", base);
			cr_assert_eq(util_read_file(path, &want, &len, &cause),
			    0, "%s", cause);
			got = room_ipynb_write_dump(nb, &len);
			a = gen_no_ids(want);
			b = gen_no_ids(got);
			cr_assert_str_eq(b, a, "%s.ipynb: not nbformat's "
			    "upgrade", base);
			free(a);
			free(b);
			free(got);
			free(want);
			room_nb_free(nb);
			n++;
		}
		free(path);
		free(base);
	}
	closedir(d);
	cr_assert_eq(n + refused, 300);
	cr_assert_gt(n, 250);
	cr_assert_gt(refused, 0);
}
