/* SPDX-License-Identifier: ISC */
/*
 * test-room-ipynb.c: .ipynb load and save against Jupyter's nbformat.
 * Fixtures are written at test time by /usr/bin/python3 with nbformat
 * (tests/runtimed/nbfixtures.py); our load+save must give the same bytes.
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "runtimed/runtimed.h"
#include "tests/runtimed/room-test.h"

/* Outputs are kept packed (decision 097): a json-c one added, put. */
static void
test_outputs_add(struct proto_outputs *o, struct json_object *j)
{
	mpjson_outputs_add(o, j);
	json_object_put(j);
}

static char	fx_dir[] = "/tmp/test-room-ipynb.XXXXXX";

static void	fx_setup(void);
static void	fx_teardown(void);
static char	*fx_path(const char *);
static void	fx_roundtrip(const char *);
static void	fx_check_saved(struct room_nb *, const char *, const char *);
static struct room_nb	*fx_parse_dump(const char *, const char *);
static int	fx_warned(struct room_nb *, const char *);

static void
fx_setup(void)
{
	const char	*srcdir = getenv("srcdir");
	char		*cmd;

	cr_assert_not_null(mkdtemp(fx_dir));
	xasprintf(&cmd, "/usr/bin/python3 %s/tests/runtimed/nbfixtures.py %s",
	    srcdir != NULL ? srcdir : ".", fx_dir);
	cr_assert_eq(system(cmd), 0, "fixture generation failed: %s", cmd);
	free(cmd);
}

static void
fx_teardown(void)
{
	char	*cmd;

	xasprintf(&cmd, "rm -rf %s", fx_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	free(cmd);
}

static char *
fx_path(const char *name)
{
	char	*p;

	xasprintf(&p, "%s/%s", fx_dir, name);
	return (p);
}

/* Load a fixture, save it, compare with the file's bytes. */
static void
fx_roundtrip(const char *name)
{
	struct room_nb	*nb;
	char		*path, *data, *out, *cause = NULL;
	size_t		 len, outlen, i;

	path = fx_path(name);
	cr_assert_eq(util_read_file(path, &data, &len, &cause), 0, "%s",
	    cause);
	nb = room_ipynb_parse(data, len, &cause);
	cr_assert_not_null(nb, "%s: %s", name, cause);
	out = room_ipynb_write_dump(nb, &outlen);
	for (i = 0; i < len && i < outlen && data[i] == out[i]; i++)
		;
	cr_assert(i == len && len == outlen,
	    "%s differs at byte %zu (lengths %zu, %zu):\n"
	    "nbformat: ...%.60s\nours:     ...%.60s", name, i, len, outlen,
	    data + (i > 20 ? i - 20 : 0), out + (i > 20 ? i - 20 : 0));
	free(out);
	room_nb_free(nb);
	free(data);
	free(path);
}

TestSuite(ipynb, .init = fx_setup, .fini = fx_teardown);

Test(ipynb, roundtrip_full)
{
	fx_roundtrip("fixture-full.ipynb");
}

Test(ipynb, roundtrip_reread)
{
	fx_roundtrip("fixture-reread.ipynb");
}

Test(ipynb, roundtrip_empty)
{
	fx_roundtrip("fixture-empty.ipynb");
}

Test(ipynb, loaded_content)
{
	struct room_nb		*nb;
	struct room_cell	*c;
	struct json_object	*outs;
	char			*path, *cause = NULL;

	path = fx_path("fixture-full.ipynb");
	nb = room_ipynb_read(path, &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_eq(nb->ncells, 9);
	c = nb->cells[1];
	cr_assert_eq(c->type, ROOM_CELL_CODE);
	cr_assert_str_eq(c->source, "import sys\nfor i in range(3):\n"
	    "    print(i)\r\nx = '\xc3\xa9\xf0\x9f\x98\x80'\n");
	cr_assert_eq(c->execution_count, 1);
	cr_assert_eq(c->outputs->n, 2);
	outs = mpjson_outputs_unpack(c->outputs);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(outs, 0), "text")), "0\n1\n2\n");
	json_object_put(outs);
	cr_assert_eq(nb->cells[5]->type, ROOM_CELL_MARKDOWN);
	cr_assert_neq(nb->cells[5]->attachments.len, 0);
	cr_assert_eq(nb->cells[6]->type, ROOM_CELL_RAW);
	cr_assert_null(nb->cells[6]->outputs);
	cr_assert_eq(nb->cells[7]->execution_count, -1);
	cr_assert_eq(nb->nbformat_minor, 5);
	room_nb_free(nb);
	free(path);
}

/* A 4.4 file without ids: ids minted, saved as 4.5, nbformat accepts it. */
Test(ipynb, upgrade_44)
{
	struct room_nb	*nb;
	char		*path, *cause = NULL, *cmd;
	size_t		 i, j;

	path = fx_path("old-44.ipynb");
	nb = room_ipynb_read(path, &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_eq(nb->ncells, 3);
	cr_assert_str_eq(nb->cells[0]->source, "print('hi')\nx = 1");
	for (i = 0; i < nb->ncells; i++) {
		cr_assert_eq(strlen(nb->cells[i]->id), 8);
		cr_assert_eq(strspn(nb->cells[i]->id, "0123456789abcdef"), 8);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(nb->cells[i]->id, nb->cells[j]->id);
	}
	free(path);
	path = fx_path("upgraded.ipynb");
	cr_assert_eq(room_ipynb_write(nb, path, &cause), 0, "%s", cause);
	xasprintf(&cmd, "/usr/bin/python3 -c 'import nbformat,sys; "
	    "nb = nbformat.read(sys.argv[1], as_version=4); "
	    "nbformat.validate(nb); "
	    "assert nb.nbformat_minor == 5, nb.nbformat_minor; "
	    "assert all(len(c.id) == 8 for c in nb.cells); "
	    "assert nb.cells[0].outputs[0].text == \"hi\\n\"' %s", path);
	cr_assert_eq(system(cmd), 0, "nbformat rejects our 4.5 file");
	free(cmd);

	/* Our saved file is itself a fixed point. */
	room_nb_free(nb);
	fx_roundtrip("upgraded.ipynb");
	free(path);
}

Test(ipynb, bad_input)
{
	char		*cause = NULL;
	const char	*bad[] = {
		"", "{", "[]", "{\"nbformat\": 3, \"cells\": []}",
		"{\"nbformat\": 4, \"nbformat_minor\": 5}",
		"{\"nbformat\": 4, \"cells\": [{\"cell_type\": \"code\", "
		    "\"source\": [1, 2]}]}",
		"{\"nbformat\": 4, \"cells\": []} trailing",
	};
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_null(room_ipynb_parse(bad[i], strlen(bad[i]),
		    &cause), "accepted: %s", bad[i]);
		cr_assert_not_null(cause);
		free(cause);
		cause = NULL;
	}
}

/*
 * As nbformat: a duplicate id is replaced, an id that breaks the pattern
 * is kept; both are warned about.
 */
Test(ipynb, ids)
{
	const char	*s = "{\"nbformat\": 4, \"nbformat_minor\": 5, "
	    "\"metadata\": {}, \"cells\": ["
	    "{\"cell_type\": \"code\", \"id\": \"keep-me\", \"source\": \"\", "
	    "\"metadata\": {}, \"outputs\": [], \"execution_count\": null},"
	    "{\"cell_type\": \"code\", \"id\": \"keep-me\", \"source\": \"\", "
	    "\"metadata\": {}, \"outputs\": [], \"execution_count\": null},"
	    "{\"cell_type\": \"markdown\", \"id\": \"bad id!\", "
	    "\"source\": \"\", \"metadata\": {}}]}";
	struct room_nb	*nb;
	char		*cause = NULL;

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_str_eq(nb->cells[0]->id, "keep-me");
	cr_assert_str_neq(nb->cells[1]->id, "keep-me");
	cr_assert_eq(strlen(nb->cells[1]->id), 8);
	cr_assert_str_eq(nb->cells[2]->id, "bad id!");
	cr_assert_not_null(nb->warnings);
	cr_assert_eq(json_object_array_length(nb->warnings), 2);
	room_nb_free(nb);
}

/*
 * 100,000 cells load in linear time: each id is checked against the id
 * index, not a scan of the cells before it (that took 270 s).  Every
 * 1000th cell has no id and the second after it repeats the id of the
 * one before it; both get fresh ids, the others keep theirs, and every
 * id finds its cell.
 */
/*
 * Under AddressSanitizer an allocation costs tens of times more (38 s for
 * 100,000 cells, most of it in the kernel): fewer cells, the same check.
 */
#ifdef __SANITIZE_ADDRESS__
#define TEST_ROOM_IPYNB_LARGE	20000
#else
#define TEST_ROOM_IPYNB_LARGE	100000
#endif

Test(ipynb, ids_large, .timeout = 60)
{
	struct room_nb	*nb;
	char		*s, *cause = NULL, id[32];
	size_t		 len = 0, cap, i, idx;
	int		 n = TEST_ROOM_IPYNB_LARGE;

	cap = (size_t)n * 128 + 128;
	s = xmalloc(cap);
	len += (size_t)snprintf(s + len, cap - len, "{\"nbformat\": 4, "
	    "\"nbformat_minor\": 5, \"metadata\": {}, \"cells\": [");
	for (i = 0; i < (size_t)n; i++) {
		if (i % 1000 == 0)
			id[0] = '\0';
		else if (i % 1000 == 2)
			snprintf(id, sizeof id, "\"id\": \"c%zu\", ", i - 1);
		else
			snprintf(id, sizeof id, "\"id\": \"c%zu\", ", i);
		len += (size_t)snprintf(s + len, cap - len, "%s{%s"
		    "\"cell_type\": \"markdown\", \"metadata\": {}, "
		    "\"source\": \"x\"}", i > 0 ? ", " : "", id);
	}
	len += (size_t)snprintf(s + len, cap - len, "]}");
	nb = room_ipynb_parse(s, len, &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_eq(nb->ncells, (size_t)n);
	for (i = 0; i < (size_t)n; i++) {
		snprintf(id, sizeof id, "c%zu", i);
		if (i % 1000 == 0 || i % 1000 == 2)
			cr_assert_eq(strlen(nb->cells[i]->id), 8, "cell %zu",
			    i);
		else
			cr_assert_str_eq(nb->cells[i]->id, id);
		cr_assert_eq(room_nb_find(nb, nb->cells[i]->id, &idx),
		    nb->cells[i], "cell %zu", i);
		cr_assert_eq(idx, i);
	}
	room_nb_free(nb);
	free(s);
}

/* Large outputs, unicode of every plane, ANSI tracebacks. */
Test(ipynb, roundtrip_large)
{
	fx_roundtrip("fixture-large.ipynb");
}

/* Save path, then nbcheck.py: valid 4.5, ids, content kept. */
static void
fx_check_saved(struct room_nb *nb, const char *name, const char *orig)
{
	const char	*srcdir = getenv("srcdir");
	char		*path, *cmd, *cause = NULL;

	path = fx_path(name);
	cr_assert_eq(room_ipynb_write(nb, path, &cause), 0, "%s", cause);
	xasprintf(&cmd, "/usr/bin/python3 %s/tests/runtimed/nbcheck.py %s %s",
	    srcdir != NULL ? srcdir : ".", path, orig);
	cr_assert_eq(system(cmd), 0, "nbcheck failed: %s", cmd);
	free(cmd);
	free(path);
}

/* nbformat 4.0-4.4: ids minted, saved as 4.5, every field kept. */
Test(ipynb, upgrade_40_to_44)
{
	struct room_nb	*nb;
	char		*path, *name, *cause = NULL;
	int		 minor;

	for (minor = 0; minor <= 4; minor++) {
		xasprintf(&name, "older-4%d.ipynb", minor);
		path = fx_path(name);
		nb = room_ipynb_read(path, &cause);
		cr_assert_not_null(nb, "%s: %s", name, cause);
		cr_assert_eq(nb->ncells, 3);
		cr_assert_eq(strlen(nb->cells[0]->id), 8);
		cr_assert_eq(nb->cells[0]->execution_count, 3);
		cr_assert_eq(nb->nbformat_minor, 5);
		free(name);
		xasprintf(&name, "saved-4%d.ipynb", minor);
		fx_check_saved(nb, name, path);
		room_nb_free(nb);
		free(name);
		free(path);
	}
}

/* Every save of the corpus validates and keeps the content. */
Test(ipynb, corpus_saves_validate)
{
	const char	*names[] = { "fixture-full.ipynb",
			    "fixture-large.ipynb", "fixture-empty.ipynb" };
	struct room_nb	*nb;
	char		*path, *out, *cause = NULL;
	size_t		 i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		path = fx_path(names[i]);
		nb = room_ipynb_read(path, &cause);
		cr_assert_not_null(nb, "%s", cause);
		xasprintf(&out, "saved-%s", names[i]);
		fx_check_saved(nb, out, path);
		free(out);
		room_nb_free(nb);
		free(path);
	}
}

/* transient is never saved; blob references are saved as real values. */
Test(ipynb, transient_and_blobs)
{
	struct room_nb		*nb;
	struct room_cell	*c;
	struct json_object	*out, *data, *ref;
	char			*value, hex[65], *cause = NULL, *file;
	char			*path, *bdir;
	size_t			 len = BLOB_THRESHOLD + 17, flen;

	bdir = fx_path("state");
	cr_assert_eq(mkdir(bdir, 0700), 0);
	value = xmalloc(len + 1);
	memset(value, 'A', len);
	value[len] = '\0';
	cr_assert_eq(blob_put(bdir, value, len, hex, &cause), 0, "%s", cause);
	room_ipynb_write_set_blob_dir(bdir);

	nb = room_nb_create();
	c = room_nb_cell_create(nb, ROOM_CELL_CODE, "big()", 5);
	out = json_object_new_object();
	json_object_object_add(out, "output_type",
	    json_object_new_string("display_data"));
	json_object_object_add(out, "metadata", json_object_new_object());
	data = json_object_new_object();
	ref = json_object_new_object();
	json_object_object_add(ref, "runtimed_blob", json_object_new_string(hex));
	json_object_object_add(ref, "size", json_object_new_int64((int64_t)len));
	json_object_object_add(data, "image/png", ref);
	json_object_object_add(out, "data", data);
	json_object_object_add(out, "transient", json_object_new_object());
	mpjson_outputs_add(c->outputs, out);

	path = fx_path("blob.ipynb");
	cr_assert_eq(room_ipynb_write(nb, path, &cause), 0, "%s", cause);
	cr_assert_eq(util_read_file(path, &file, &flen, &cause), 0);
	cr_assert_null(strstr(file, "transient"));
	cr_assert_null(strstr(file, "runtimed_blob"));
	cr_assert_not_null(strstr(file, value));
	free(file);

	/* A missing blob fails the save instead of writing the reference. */
	json_object_object_add(ref, "runtimed_blob", json_object_new_string(
	    "0000000000000000000000000000000000000000000000000000000000000000"));
	proto_outputs_clear(c->outputs);
	test_outputs_add(c->outputs, out);
	room_cell_touch(c);
	cr_assert_neq(room_ipynb_write(nb, path, &cause), 0);
	cr_assert_not_null(cause);
	free(cause);
	room_ipynb_write_set_blob_dir(NULL);
	room_nb_free(nb);
	free(path);
	free(value);
	free(bdir);
}

/* Parse s (must succeed), dump it, compare with want (s when NULL). */
static struct room_nb *
fx_parse_dump(const char *s, const char *want)
{
	struct room_nb	*nb;
	char		*out, *cause = NULL;
	size_t		 len;

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "refused: %s", cause);
	out = room_ipynb_write_dump(nb, &len);
	cr_assert_str_eq(out, want != NULL ? want : s);
	free(out);
	return (nb);
}

/* Does some warning's message hold sub? */
static int
fx_warned(struct room_nb *nb, const char *sub)
{
	struct json_object	*w;
	size_t			 i;

	for (i = 0; nb->warnings != NULL &&
	    i < json_object_array_length(nb->warnings); i++) {
		w = json_object_array_get_idx(nb->warnings, i);
		if (strstr(json_object_get_string(json_object_object_get(w,
		    "message")), sub) != NULL)
			return (1);
	}
	return (0);
}

/* A 4.6 file: unknown keys at every level and unknown cells, kept. */
Test(ipynb, unknown_keys_kept_in_sorted_place)
{
	const char	*s = "{\n"
	    " \"aa\": 1,\n"
	    " \"cells\": [\n"
	    "  {\n"
	    "   \"a_first\": [],\n"
	    "   \"cell_type\": \"code\",\n"
	    "   \"execution_count\": null,\n"
	    "   \"id\": \"c\",\n"
	    "   \"metadata\": {},\n"
	    "   \"new\": {\n"
	    "    \"x\": 1.5\n"
	    "   },\n"
	    "   \"outputs\": [\n"
	    "    {\n"
	    "     \"name\": \"stdout\",\n"
	    "     \"output_type\": \"stream\",\n"
	    "     \"text\": [\n"
	    "      \"a\\n\",\n"
	    "      \"b\"\n"
	    "     ],\n"
	    "     \"zz\": true\n"
	    "    }\n"
	    "   ],\n"
	    "   \"source\": [\n"
	    "    \"x\"\n"
	    "   ]\n"
	    "  },\n"
	    "  {\n"
	    "   \"cell_type\": \"widget\",\n"
	    "   \"id\": \"w\",\n"
	    "   \"metadata\": {},\n"
	    "   \"state\": null\n"
	    "  },\n"
	    "  {\n"
	    "   \"cell_type\": \"markdown\",\n"
	    "   \"execution_count\": 3,\n"
	    "   \"id\": \"m\",\n"
	    "   \"metadata\": {},\n"
	    "   \"outputs\": [],\n"
	    "   \"source\": []\n"
	    "  }\n"
	    " ],\n"
	    " \"metadata\": {},\n"
	    " \"nbformat\": 4,\n"
	    " \"nbformat_minor\": 6,\n"
	    " \"zz\": \"last\"\n"
	    "}\n";
	struct room_nb	*nb;

	nb = fx_parse_dump(s, NULL);
	cr_assert_null(nb->warnings, "a 4.6 file may hold all of it");
	cr_assert_eq(nb->cells[1]->type, ROOM_CELL_UNKNOWN);
	cr_assert_str_eq(room_nb_cell_type_name(nb->cells[1]), "widget");
	cr_assert(nb->cells[1]->flags & ROOM_CELL_NO_SOURCE);
	cr_assert_eq(room_test_md_has(&nb->cells[2]->extra, "outputs", NULL, 0), 1);
	room_nb_free(nb);
}

/* The same keys in a 4.5 file are kept too, with warnings. */
Test(ipynb, unknown_keys_warned_in_45)
{
	const char	*s = "{\"cells\": [{\"cell_type\": \"code\", "
	    "\"execution_count\": null, \"id\": \"c\", \"metadata\": {}, "
	    "\"new\": 1, \"outputs\": [], \"source\": \"\"}, "
	    "{\"cell_type\": \"widget\", \"id\": \"w\", \"metadata\": {}, "
	    "\"source\": \"s\"}], \"metadata\": {}, \"nbformat\": 4, "
	    "\"nbformat_minor\": 5, \"zz\": 2}";
	struct room_nb	*nb;
	char		*cause = NULL;

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert(fx_warned(nb, "\"zz\" is not a top-level key"));
	cr_assert(fx_warned(nb, "cell 0: \"new\" is not a key of a code"));
	cr_assert(fx_warned(nb, "cell 1 is of type \"widget\""));
	cr_assert_eq(json_object_array_length(nb->warnings), 3);
	room_nb_free(nb);
}

/* Missing structure: opened, warned, and what a save writes. */
Test(ipynb, missing_structure_warned)
{
	const char	*s = "{\"cells\": [{\"cell_type\": \"code\", "
	    "\"source\": \"x\"}, {\"cell_type\": \"markdown\", \"id\": 7, "
	    "\"metadata\": {}}], \"nbformat\": 4}";
	const char	*keys[] = { "no valid nbformat_minor",
	    "the notebook has no metadata", "code cell 0 has no "
	    "execution_count", "code cell 0 has no outputs",
	    "cell 0 has no metadata", "cell 1 has no source",
	    "cell 1: id is a number" };
	struct room_nb	*nb;
	struct json_object *w;
	char		*cause = NULL;
	size_t		 i;

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "%s", cause);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cr_assert(fx_warned(nb, keys[i]), "no warning: %s", keys[i]);
	cr_assert_eq(json_object_array_length(nb->warnings),
	    sizeof keys / sizeof keys[0]);
	for (i = 0; i < json_object_array_length(nb->warnings); i++) {
		w = json_object_array_get_idx(nb->warnings, i);
		cr_assert_not_null(json_object_object_get(w, "on_save"));
		if (json_object_object_get(w, "cell_index") != NULL)
			cr_assert_not_null(json_object_object_get(w,
			    "cell_id"), "a cell warning names the cell");
	}
	cr_assert_eq(nb->nbformat_minor, 5);
	cr_assert_eq(strlen(nb->cells[1]->id), 8);
	room_nb_free(nb);
}

/* Refusals say what is wrong and where. */
Test(ipynb, refusal_messages)
{
	struct {
		const char	*text;
		size_t		 len;
		const char	*want;
	} cases[] = {
		{ "", 0, "the file is empty" },
		{ "  \n", 3, "the file holds only white space (3 bytes)" },
		{ "{\"cells\": [\"abc", 15, "the file ends at byte 15 in the "
		    "middle of a string (truncated?)" },
		{ "{\"cells\": [1, ", 14, "the file ends at byte 14 in the "
		    "middle of a list (truncated?)" },
		{ "{\"a\": \"\xc3", 8, "the file ends at byte 8 in the middle "
		    "of a string (truncated?)" },
		{ "{\"a\": \"caf\xe9\"}", 13, "not UTF-8: byte 10 (line 1, "
		    "column 11) is 0xe9" },
		{ "{\"a\": \"\xed\xa0\x80\"}", 13, "not UTF-8: byte 7" },
		{ "\xef\xbb\xbf{}", 5, "byte order mark" },
		{ "<html>", 6, "not JSON text: it starts with '<' at byte 0" },
		{ "{}\n{}", 5, "something follows the notebook at byte 3 "
		    "(line 2, column 1)" },
		{ "{\"a\" 1}", 7, "at byte 5 (line 1, column 6)" },
		{ "[1]", 3, "the top level is a list" },
		{ "{\"a\": 1 /* c */}", 0, "unexpected '/' at byte 8" },
		{ "{\"a\": 'x'}", 0, "not JSON: unexpected \"'\" at byte 6" },
		{ "{\"a\": [1,]}", 0, "not JSON: unexpected ']' at byte 9" },
		{ "{\"a\": \"x\ty\"}", 0, "a raw control character (0x09) "
		    "in a string at byte 8" },
		{ "{\"nbformat\": 4, \"cells\": [[]]}", 30,
		    "cell 0 is a list, not an object" },
		{ "{\"nbformat\": 4, \"cells\": [{\"cell_type\": \"code\", "
		    "\"outputs\": {}}]}", 0,
		    "code cell 0: outputs is an object, not a list" },
	};
	char		*cause;
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cause = NULL;
		if (cases[i].len == 0 && *cases[i].text != '\0')
			cases[i].len = strlen(cases[i].text);
		cr_assert_null(room_ipynb_parse(cases[i].text, cases[i].len,
		    &cause), "accepted case %zu", i);
		cr_assert_not_null(strstr(cause, cases[i].want),
		    "case %zu: \"%s\" lacks \"%s\"", i, cause, cases[i].want);
		free(cause);
	}
}

/*
 * A raw control character is found wherever it falls: before and after
 * an escape, on either side of the fast reader's 256 KB slice boundary,
 * in and out of 16-byte blocks; the same text without it is accepted.
 */
Test(ipynb, raw_control_anywhere)
{
	static const size_t	 at[] = { 7, 8, 22, 23, 262143, 262144, 262145,
	    262160, 299000 };
	static const char	 head[] = "{\"nbformat\": 4, \"nbformat_minor\": "
	    "5, \"metadata\": {}, \"cells\": [], \"x\": \"";
	char			*s, *cause, want[80];
	struct room_nb		*nb;
	size_t			 n = 300000, h = sizeof head - 1, i, bad;

	s = xmalloc(n + 4);
	memcpy(s, head, h);
	memset(s + h, 'a', n - h);
	memcpy(s + h + 10, "\\\"", 2);
	memcpy(s + n - 2, "\"}", 2);
	cause = NULL;
	nb = room_ipynb_parse(s, n, &cause);
	cr_assert_not_null(nb, "clean text refused: %s", cause);
	room_nb_free(nb);
	for (i = 0; i < sizeof at / sizeof at[0]; i++) {
		bad = h + at[i] - 7;
		if (bad == h + 10 || bad == h + 11)
			continue;
		s[bad] = '\x01';
		cause = NULL;
		cr_assert_null(room_ipynb_parse(s, n, &cause),
		    "accepted a control at %zu", bad);
		snprintf(want, sizeof want, "raw control character (0x01)");
		cr_assert_not_null(strstr(cause, want), "at %zu: %s", bad,
		    cause);
		free(cause);
		s[bad] = 'a';
	}
	free(s);
}

/* Thousands separators in offsets. */
Test(ipynb, refusal_offsets_grouped)
{
	char	*s, *cause = NULL;
	size_t	 n = 12345;

	s = xmalloc(n);
	memset(s, ' ', n);
	memcpy(s, "{\"a\": \"", 7);
	cr_assert_null(room_ipynb_parse(s, n, &cause));
	cr_assert_str_eq(cause, "the file ends at byte 12,345 in the middle "
	    "of a string (truncated?)");
	free(cause);
	free(s);
}

/* Invalid UTF-8 repaired as Python's "replace" handler does. */
Test(ipynb, utf8_repair)
{
	struct {
		const char	*in;
		const char	*out;
	} cases[] = {
		{ "caf\xe9", "caf\xef\xbf\xbd" },
		{ "a\xe2\x82" "b", "a\xef\xbf\xbd" "b" },
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
		    "\xef\xbf\xbd" },
		{ "\xf0\x9f\x90", "\xef\xbf\xbd" },
	};
	char	*out;
	size_t	 i, len, bad;

	cr_assert_null(utf8_repair("ok \xf0\x9f\x90\x8d", 7, &len));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert(!utf8_valid(cases[i].in, strlen(cases[i].in), &bad));
		out = utf8_repair(cases[i].in, strlen(cases[i].in), &len);
		cr_assert_not_null(out);
		cr_assert_str_eq(out, cases[i].out, "case %zu", i);
		cr_assert_eq(len, strlen(cases[i].out));
		free(out);
	}
}

/*
 * The notebook's metadata is kept packed (decision 105): a kernel's
 * facts fill only what is absent, at the end in the order json-c's add
 * gave (kernelspec, then language_info), and the bytes are those
 * mpjson_pack writes of that tree; a kernelspec name is read up to a
 * NUL it holds, as json_object_get_string read it; a null kernelspec
 * is one the notebook has.
 */
Test(ipynb, kernel_facts_in_packed_metadata)
{
	static const char *const s = "{\"nbformat\": 4, \"nbformat_minor\": "
	    "5, \"metadata\": {\"z\": 1, \"language_info\": {\"name\": \"r\"},"
	    " \"signature\": \"x\"}, \"cells\": []}";
	static const char *const nul = "{\"nbformat\": 4, \"nbformat_minor\": "
	    "5, \"metadata\": {\"kernelspec\": {\"name\": \"py\\u0000x\"}}, "
	    "\"cells\": []}";
	static const char *const null = "{\"nbformat\": 4, \"nbformat_minor\": "
	    "5, \"metadata\": {\"kernelspec\": null}, \"cells\": []}";
	struct json_object	*info, *want;
	struct mpvalue		 w = { NULL, 0 };
	struct room_nb		*nb;
	char			*cause = NULL, *name;
	const char		*keys[] = { "kernelspec", "language_info", NULL };

	nb = room_ipynb_parse(s, strlen(s), &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_eq(room_ipynb_has_kernelspec(nb), 0);
	info = json_tokener_parse("{\"name\": \"python\", \"version\": "
	    "\"3.11\"}");
	room_ipynb_set_kernelspec(nb, "python3", "Python 3", "python", info);
	want = json_tokener_parse("{\"z\": 1, \"language_info\": {\"name\": "
	    "\"r\"}, \"kernelspec\": {\"display_name\": \"Python 3\", "
	    "\"language\": \"python\", \"name\": \"python3\"}}");
	mpvalue_set_json(&w, want);
	cr_assert_eq(nb->metadata.len, w.len);
	cr_assert_eq(memcmp(nb->metadata.ptr, w.ptr, w.len), 0);
	name = room_ipynb_meta_str(nb, "kernelspec", "name", NULL);
	cr_assert_str_eq(name, "python3");
	free(name);

	/* Selected again: both go, then come back in order, the kernel's. */
	mpvalue_del(&nb->metadata, keys);
	room_ipynb_set_kernelspec(nb, "python3", NULL, NULL, info);
	json_object_object_del(want, "language_info");
	json_object_object_del(want, "kernelspec");
	json_object_object_add(want, "kernelspec", json_tokener_parse(
	    "{\"display_name\": \"python3\", \"language\": \"python\", "
	    "\"name\": \"python3\"}"));
	json_object_object_add(want, "language_info", json_object_get(info));
	mpvalue_set_json(&w, want);
	cr_assert_eq(nb->metadata.len, w.len);
	cr_assert_eq(memcmp(nb->metadata.ptr, w.ptr, w.len), 0);
	mpvalue_free(&w);
	json_object_put(want);
	json_object_put(info);
	room_nb_free(nb);

	nb = room_ipynb_parse(nul, strlen(nul), &cause);
	cr_assert_not_null(nb, "%s", cause);
	name = room_ipynb_meta_str(nb, "kernelspec", "name", NULL);
	cr_assert_str_eq(name, "py");
	free(name);
	room_nb_free(nb);
	nb = room_ipynb_parse(null, strlen(null), &cause);
	cr_assert_not_null(nb, "%s", cause);
	cr_assert_eq(room_ipynb_has_kernelspec(nb), 1);
	cr_assert_null(room_ipynb_meta_str(nb, "kernelspec", "name", NULL));
	room_nb_free(nb);
}
