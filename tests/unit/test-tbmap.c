/* SPDX-License-Identifier: ISC */
/*
 * test-tbmap.c: an error's frames mapped to cells (common/tbmap.c,
 * docs/decisions/070).  The tracebacks are the ones ipykernel 6.17
 * (IPython 8.5), xeus-python and IRkernel sent on this machine, and the
 * hashes are ipykernel/compiler.py's murmur2_x86 of the same strings.
 */

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common.h"

/* Cells that ran: A defined f (In[1]), B called it (In[2]). */
static const struct tbmap_cell ran[] = {
	{ 1, 3433644812U, "cA" },
	{ 2, 3310911391U, "cB" },
	{ 4, 1278102326U, "cS" },
};

static struct json_object *
tb_of(const char *const *lines)
{
	struct json_object	*a = json_object_new_array();

	for (; *lines != NULL; lines++)
		json_object_array_add(a, json_object_new_string(*lines));
	return (a);
}

static struct json_object *
map(const char *const *lines, const char *running)
{
	struct json_object	*tb, *m;

	tb = tb_of(lines);
	m = tbmap_frames(tb, ran, sizeof ran / sizeof ran[0], running);
	json_object_put(tb);
	return (m);
}

static const char *
frames_str(struct json_object *m)
{
	cr_assert_not_null(m);
	return (json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
}

Test(tbmap, murmur2_as_ipykernel)
{
	static const struct {
		const char	*s;
		uint32_t	 h;
	} v[] = {
		{ "", 3990065800U },
		{ "a", 2167009006U },
		{ "ab", 2805137849U },
		{ "abc", 3350977461U },
		{ "abcd", 804720481U },
		{ "abcde", 730143326U },
		{ "\xc3\xa9\xf0\x9f\x98\x80x", 2319415465U },
		{ "def f():\n    return x", 791972880U },
		/* /tmp/ipykernel_12108/3433644812.py, as the kernel named it */
		{ "def f():\n    return x\n", 3433644812U },
	};
	size_t	i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++)
		cr_expect_eq(tbmap_murmur2(v[i].s, strlen(v[i].s),
		    TBMAP_SEED), v[i].h, "%zu", i);
}

/* IPython 8.5, ANSI and all: f of cell A raising, called from B. */
Test(tbmap, cell_in_counts)
{
	static const char *const tb[] = {
		"\033[0;31m------------------------------------------\033[0m",
		"\033[0;31mNameError\033[0m        Traceback (most recent call last)",
		"Cell \033[0;32mIn [2], line 2\033[0m\n\033[1;32m      1\033[0m "
		    "\033[38;5;241m1\033[39m\n\033[0;32m----> 2\033[0m "
		    "\033[43mf\033[49m\033[43m(\033[49m\033[43m)\033[49m\n",
		"Cell \033[0;32mIn [1], line 2\033[0m, in \033[0;36mf\033[0;34m()"
		    "\033[0m\n\033[1;32m      1\033[0m def f():\n"
		    "\033[0;32m----> 2\033[0m     return x\n",
		"\033[0;31mNameError\033[0m: name 'x' is not defined",
		NULL
	};
	struct json_object	*m = map(tb, "cB");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":2,\"code\":\"f()\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return x\",\"name\":\"f\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
}

/* Newer IPython's spelling, "Cell In[2]", and an older one's. */
Test(tbmap, other_ipythons)
{
	static const char *const a[] = {
		"Cell In[1], line 2, in f()\n      1 def f():\n----> 2     return x\n",
		NULL
	};
	static const char *const b[] = {
		"Input In [2], in <cell line: 2>()\n      1 1\n----> 2 f()\n",
		"<ipython-input-1-5f0c1d2e> in f()\n      1 def f():\n----> 2     return x\n",
		NULL
	};
	struct json_object	*m;

	m = map(a, "cB");
	cr_expect_str_eq(frames_str(m), "{\"frames\":[{\"cell_id\":\"cA\","
	    "\"line\":2,\"code\":\"return x\",\"name\":\"f\"}],"
	    "\"library_frames\":0}");
	json_object_put(m);
	m = map(b, "cB");
	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":2,\"code\":\"f()\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return x\",\"name\":\"f\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
}

/*
 * Python's own format, as traceback.print_exc() and xeus-python write
 * it: the compiler's file names resolve by the hash of the code, the
 * PID's directory whatever it is.
 */
Test(tbmap, temp_files)
{
	static const char *const tb[] = {
		"Traceback (most recent call last):\n"
		"  File \"/tmp/xpython_14973/3310911391.py\", line 3, in <module>\n"
		"    f()\n"
		"  File \"/tmp/ipykernel_12108/3433644812.py\", line 2, in f\n"
		"    return x\n"
		"           ^\n"
		"  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads\n"
		"    return _default_decoder.decode(s)\n"
		"  File \"/home/u/mod.py\", line 7, in g\n"
		"    h()\n"
		"  File \"/tmp/ipykernel_1/123.py\", line 2, in h\n"
		"NameError: name 'x' is not defined\n",
		NULL
	};
	struct json_object	*m = map(tb, "cB");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":3,\"code\":\"f()\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return x\",\"name\":\"f\"},"
	    "{\"file\":\"/home/u/mod.py\",\"line\":7,\"code\":\"h()\",\"name\":\"g\"},"
	    "{\"text\":\"  File \\\"/tmp/ipykernel_1/123.py\\\", line 2, in h\","
	    "\"name\":\"h\"}"
	    "],\"library_frames\":1}");
	json_object_put(m);
}

/* IPython 8's "File PATH:LINE, in f": pandas folded, the cell kept. */
Test(tbmap, library_frames)
{
	static const char *const tb[] = {
		"File /usr/lib/python3/dist-packages/pandas/core/indexes/base.py:3802, "
		    "in Index.get_loc(self, key, method, tolerance)\n"
		    "   3801 try:\n-> 3802     return self._engine.get_loc(casted_key)\n",
		"File pandas/_libs/hashtable_class_helper.pxi:5745, in "
		    "pandas._libs.hashtable.PyObjectHashTable.get_item()\n",
		"KeyError: 'b'",
		"\nThe above exception was the direct cause of the following exception:\n",
		"KeyError                                  Traceback (most recent call last)",
		"Cell In [2], line 3\n      1 import pandas as pd\n"
		    "      2 df = pd.DataFrame({\"a\":[1]})\n----> 3 df[\"b\"]\n",
		"File /tmp/ipykernel_9/3433644812.py:2, in f()\n",
		"KeyError: 'b'",
		NULL
	};
	struct json_object	*m = map(tb, "cB");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":3,\"code\":\"df[\\\"b\\\"]\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"name\":\"f\"}"
	    "],\"library_frames\":2}");
	json_object_put(m);
}

/* A chain: the cause's frames say so; a message quoting frames is none. */
Test(tbmap, chained)
{
	static const char *const tb[] = {
		"Cell In [2], line 2\n      1 try:\n----> 2     f()\n",
		"Cell In [1], line 2, in f()\n      1 def f():\n----> 2     return x\n",
		"NameError: name 'x' is not defined",
		"\nDuring handling of the above exception, another exception occurred:\n",
		"RuntimeError                              Traceback (most recent call last)",
		"Cell In [2], line 4\n----> 4     raise RuntimeError(traceback.format_exc())\n",
		"RuntimeError: Traceback (most recent call last):\n"
		    "  File \"/tmp/ipykernel_9913/3433644812.py\", line 2, in f\n"
		    "    return x\nNameError: name 'x' is not defined\n",
		NULL
	};
	struct json_object	*m = map(tb, "cB");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":2,\"code\":\"f()\",\"chained\":true},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return x\",\"name\":\"f\","
	    "\"chained\":true},"
	    "{\"cell_id\":\"cB\",\"line\":4,\"code\":\"raise RuntimeError("
	    "traceback.format_exc())\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
}

/* Never a guess: an unknown count, or one code run from two cells. */
Test(tbmap, unknown_and_ambiguous)
{
	static const struct tbmap_cell twice[] = {
		{ 1, 3433644812U, "cA" },
		{ 2, 3433644812U, "cA2" },
		{ 3, 3433644812U, "cA" },
	};
	static const char *const tb[] = {
		"Cell In [7], line 1\n----> 1 g()\n",
		"File /tmp/ipykernel_1/3433644812.py:2, in f()\n"
		    "----> 2     return x\n",
		"Cell In [3], line 2, in f()\n----> 2     return x\n",
		"NameError: name 'x' is not defined",
		NULL
	};
	struct json_object	*a, *m;

	a = tb_of(tb);
	m = tbmap_frames(a, twice, 3, "cB");
	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"text\":\"Cell In [7], line 1\",\"code\":\"g()\"},"
	    "{\"text\":\"File /tmp/ipykernel_1/3433644812.py:2, in f()\","
	    "\"code\":\"return x\",\"name\":\"f\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return x\",\"name\":\"f\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
	json_object_put(a);
}

/* A SyntaxError's frame is indented; its code comes before the caret. */
Test(tbmap, syntax_error)
{
	static const char *const tb[] = {
		"  Cell In [4], line 1\n    1 +\n       ^\nSyntaxError: invalid syntax\n",
		NULL
	};
	struct json_object	*m = map(tb, "cS");

	cr_expect_str_eq(frames_str(m), "{\"frames\":[{\"cell_id\":\"cS\","
	    "\"line\":1,\"code\":\"1 +\"}],\"library_frames\":0}");
	json_object_put(m);
}

/* IRkernel: the first frame is the running cell's call, with no line. */
Test(tbmap, irkernel)
{
	static const char *const tb[] = {
		"Error in f(): boom\nTraceback:\n",
		"1. g()",
		"2. f()   # at line 1 of file <text>",
		"3. stop(\"boom\")   # at line 2 of file <text>",
		NULL
	};
	struct json_object	*m = map(tb, "cR");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cR\",\"line\":null,\"code\":\"g()\"},"
	    "{\"text\":\"2. f()   # at line 1 of file <text>\",\"code\":\"f()\"},"
	    "{\"text\":\"3. stop(\\\"boom\\\")   # at line 2 of file <text>\","
	    "\"code\":\"stop(\\\"boom\\\")\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
}

/* No frame, nothing: the agent's own KernelError, a non-array. */
Test(tbmap, nothing)
{
	static const char *const none[] = { NULL };
	static const char *const msg[] = { "KeyError: 'x'", NULL };
	struct json_object	*s;

	cr_expect_null(map(none, "c"));
	cr_expect_null(map(msg, "c"));
	s = json_object_new_string("x");
	cr_expect_null(tbmap_frames(s, ran, 3, "c"));
	cr_expect_null(tbmap_frames(NULL, ran, 3, "c"));
	json_object_put(s);
}

/* A RecursionError: frames after IPython's "skipping" line still count. */
Test(tbmap, recursion)
{
	static const char *const tb[] = {
		"RecursionError                            Traceback (most recent call last)",
		"Cell In [2], line 1\n----> 1 f(0)\n",
		"Cell In [1], line 2, in f(n)\n      1 def f(n):\n----> 2     return f(n+1)\n",
		"    [... skipping similar frames: f at line 2 (2970 times)]\n",
		"Cell In [1], line 2, in f(n)\n      1 def f(n):\n----> 2     return f(n+1)\n",
		"RecursionError: maximum recursion depth exceeded",
		NULL
	};
	struct json_object	*m = map(tb, "cB");

	cr_expect_str_eq(frames_str(m), "{\"frames\":["
	    "{\"cell_id\":\"cB\",\"line\":1,\"code\":\"f(0)\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return f(n+1)\",\"name\":\"f\"},"
	    "{\"cell_id\":\"cA\",\"line\":2,\"code\":\"return f(n+1)\",\"name\":\"f\"}"
	    "],\"library_frames\":0}");
	json_object_put(m);
}

/* A deep stack keeps its first 16 frames and its last 48. */
Test(tbmap, deep_stack)
{
	struct json_object	*tb, *m, *fr;
	char			 line[80];
	int			 i;

	tb = json_object_new_array();
	for (i = 1; i <= 100; i++) {
		snprintf(line, sizeof line, "Cell In [1], line %d, in f%d()\n", i, i);
		json_object_array_add(tb, json_object_new_string(line));
	}
	json_object_array_add(tb, json_object_new_string("E: x"));
	m = tbmap_frames(tb, ran, 3, "cB");
	cr_assert_not_null(m);
	fr = json_object_object_get(m, "frames");
	cr_expect_eq(json_object_array_length(fr), 64);
	cr_expect_eq(json_object_get_int(json_object_object_get(m,
	    "frames_omitted")), 36);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(fr, 15), "name")), "f16");
	cr_expect_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(fr, 16), "name")), "f53");
	cr_expect_str_eq(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(fr, 63), "name")), "f100");
	json_object_put(m);
	json_object_put(tb);
}
