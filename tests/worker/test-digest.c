/* SPDX-License-Identifier: ISC */
/*
 * test-digest.c: rich outputs made readable (worker-html.c,
 * worker-digest.c, decision 076): HTML tables as text rows with their
 * size, HTML as text, Plotly and Vega figures and widget views as
 * summaries, and the reader showing the summary in place of the rest.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "worker.h"

#define ORIG	"get_results full_output:true shows the original"

static struct json_object	*parse(const char *);
static char	*frame_html(size_t, int);

void
worker_exit(int status)
{
	exit(status);
}

static struct json_object *
parse(const char *text)
{
	struct json_object	*o;

	o = json_tokener_parse(text);
	cr_assert_not_null(o, "bad fixture: %s", text);
	return (o);
}

/*
 * A DataFrame's HTML as pandas 1.5 writes it: rows rows of columns a, b,
 * with the "..." row and the size line when cut (show_dimensions).
 */
static char *
frame_html(size_t rows, int cut)
{
	struct evbuffer	*b;
	size_t		 i, len;
	char		*s;

	b = evbuffer_new();
	evbuffer_add_printf(b, "<div>\n<style scoped>\n    .dataframe tbody "
	    "tr th:only-of-type {\n        vertical-align: middle;\n    }\n"
	    "</style>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n"
	    "    <tr style=\"text-align: right;\">\n      <th></th>\n"
	    "      <th>a</th>\n      <th>b</th>\n    </tr>\n  </thead>\n"
	    "  <tbody>\n");
	for (i = 0; i < rows; i++) {
		if (cut && i == 5) {
			evbuffer_add_printf(b, "    <tr>\n      <th>...</th>\n"
			    "      <td>...</td>\n      <td>...</td>\n    </tr>\n");
			i = rows - 5;
		}
		evbuffer_add_printf(b, "    <tr>\n      <th>%zu</th>\n"
		    "      <td>%zu</td>\n      <td>x%zu</td>\n    </tr>\n",
		    i, i * 2, i);
	}
	evbuffer_add_printf(b, "  </tbody>\n</table>\n%s</div>",
	    cut ? "<p>1000 rows \xc3\x97 2 columns</p>\n" : "");
	len = evbuffer_get_length(b);
	s = xmalloc(len + 1);
	evbuffer_remove(b, s, len);
	s[len] = '\0';
	evbuffer_free(b);
	return (s);
}

Test(html, pandas_cut_frame)
{
	char	*html, *s;

	html = frame_html(1000, 1);
	s = worker_html_table(html, strlen(html), "     a     b\n0    0    x0\n"
	    "..\n\n[1000 rows x 2 columns]", ORIG);
	cr_assert_not_null(s);
	cr_assert(strstr(s, "showing 10 of 1000 rows, 2 columns (size from "
	    "text/plain); first cell: the index; dtypes not in the output; "
	    ORIG "]\n") != NULL, "%s",
	    s);
	cr_assert(strstr(s, "first cell: the index") != NULL,
	    "%s", s);
	cr_assert(strstr(s, "dtypes not in the output") != NULL, "%s", s);
	cr_assert(strstr(s, ORIG "]\n") != NULL, "%s", s);
	cr_assert(strstr(s, "\n | a | b\n0 | 0 | x0\n") != NULL, "%s", s);
	cr_assert(strstr(s, "4 | 8 | x4\n...\n995 | 1990 | x995\n") != NULL,
	    "%s", s);
	cr_assert(strstr(s, "999 | 1998 | x999\n") != NULL, "%s", s);
	cr_assert(strstr(s, "vertical-align") == NULL, "%s", s);
	free(s);
	/* The size from the HTML itself when there is no text/plain. */
	s = worker_html_table(html, strlen(html), NULL, ORIG);
	cr_assert(strstr(s, "showing 10 of 1000 rows, 2 columns (size from "
	    "the HTML);") != NULL, "%s", s);
	free(s);
	free(html);
}

Test(html, whole_frame_head_and_tail)
{
	char	*html, *s;

	html = frame_html(1000, 0);
	s = worker_html_table(html, strlen(html), NULL, ORIG);
	cr_assert(strstr(s, "showing 15 of 1000 rows, 2 columns;") != NULL,
	    "%s", s);
	cr_assert(strstr(s, "9 | 18 | x9\n[... 985 rows not shown ...]\n"
	    "995 | 1990 | x995\n996 | 1992 | x996\n997 | 1994 | x997\n"
	    "998 | 1996 | x998\n999 | 1998 | x999\n") != NULL, "%s", s);
	cr_assert(strlen(s) < 1000, "%zu", strlen(s));
	free(s);
	free(html);
}

Test(html, polars_shape_and_dtypes)
{
	const char	*html = "<div><style>\n.dataframe > thead > tr > th {"
	    "text-align: right;}</style>\n<small>shape: (3, 2)</small><table "
	    "border=\"1\" class=\"dataframe\"><thead><tr><th>n</th><th>s</th>"
	    "</tr><tr><td>i64</td><td>str</td></tr></thead><tbody><tr><td>1"
	    "</td><td>&quot;a&quot;</td></tr><tr><td>2</td><td>&quot;b&quot;"
	    "</td></tr><tr><td>3</td><td>null</td></tr></tbody></table></div>";
	char		*s;

	s = worker_html_table(html, strlen(html), NULL, ORIG);
	cr_assert(strstr(s, "showing 3 of 3 rows, 2 columns; dtypes in the "
	    "row under the header;") != NULL, "%s", s);
	cr_assert(strstr(s, "]\nn | s\ni64 | str\n1 | \"a\"\n2 | \"b\"\n"
	    "3 | null\n") != NULL, "%s", s);
	free(s);
}

Test(html, entities_and_cells)
{
	const char	*html = "<table><tr><td>&lt;b&gt; &amp; &#x41;&#66;"
	    "&nbsp;x &#0; &#xd800; &bogus; &#99999999999;</td><td>a<br>b"
	    "</td><td>  spaced \n\t out  </td></tr></table>";
	char		*s;

	s = worker_html_table(html, strlen(html), NULL, ORIG);
	cr_assert(strstr(s, "\n<b> & AB x \xef\xbf\xbd \xef\xbf\xbd &bogus; "
	    "&#99999999999; | a b | spaced out\n") != NULL, "%s", s);
	free(s);
}

Test(html, long_cells_and_wide_rows_cut)
{
	struct evbuffer	*b;
	char		*s, *html;
	size_t		 i, len;

	b = evbuffer_new();
	evbuffer_add_printf(b, "<table><tr>");
	for (i = 0; i < 30; i++)
		evbuffer_add_printf(b, "<td>%s</td>", i == 0 ? "\xc3\xa9"
		    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
		    "abcdefghijklmnopqrstuvwxyz" : "c");
	evbuffer_add_printf(b, "</tr></table>");
	len = evbuffer_get_length(b);
	html = xmalloc(len + 1);
	evbuffer_remove(b, html, len);
	html[len] = '\0';
	evbuffer_free(b);
	s = worker_html_table(html, len, NULL, ORIG);
	cr_assert(strstr(s, "1 of 1 rows, 30 columns") != NULL, "%s", s);
	cr_assert(strstr(s, "; 24 cells a row shown; cells cut at 60 "
	    "characters;") != NULL, "%s", s);
	cr_assert(strstr(s, "\n\xc3\xa9" "abcdefghijklmnopqrstuvwxyzabcdefghi"
	    "jklmnopqrstuvwxyzabcdef\xe2\x80\xa6 | c") != NULL, "%s", s);
	cr_assert(strstr(s, " | (+6 cells)\n") != NULL, "%s", s);
	free(s);
	free(html);
}

Test(html, hostile_input_is_not_a_table)
{
	const char	*none[] = {
		"",
		"<",
		"<table",
		"<table><tr>",
		"<!-- <table><tr><td>1</td></tr></table> -->",
		"<script>var t = '<table><tr><td>1</td></tr></table>';</script>",
		"<style>td { x: '<table><tr><td>1' }</style>",
		"<div title='<table><tr><td>1</td>'>no</div>",
		"</table></tr></td>",
		"<table><table><tr><td>nested only</td></tr></table></table>",
	};
	size_t		 i;
	char		*s;

	for (i = 0; i < sizeof none / sizeof none[0]; i++) {
		s = worker_html_table(none[i], strlen(none[i]), NULL, ORIG);
		cr_assert_null(s, "%zu: %s", i, s);
	}
	/* Cut off inside a cell: what there is. */
	s = worker_html_table("<table><tr><td>1<td>2", 21, NULL, ORIG);
	cr_assert(strstr(s, "\n1 | 2\n") != NULL, "%s", s);
	free(s);
	/* A NUL and control bytes read as spaces, not as the end. */
	s = worker_html_table("<table><tr><td>a\0b\x01" "c</td></tr></table>",
	    38, NULL, ORIG);
	cr_assert(strstr(s, "\na b c\n") != NULL, "%s", s);
	free(s);
}

Test(html, text_of_html)
{
	const char	*html = "<h1>Report</h1><script>alert(1)</script>"
	    "<p>Total:   <b>42</b> &euro; &amp; more</p><ul><li>one</li>"
	    "<li>two</li></ul><style>p{}</style>";
	char		*s;

	s = worker_html_text(html, strlen(html), 2000);
	cr_assert_str_eq(s, "Report\nTotal: 42 &euro; & more\none\ntwo\n");
	free(s);
	s = worker_html_text(html, strlen(html), 8);
	cr_assert_str_eq(s, "Report\n\xe2\x80\xa6");
	free(s);
	cr_assert_null(worker_html_text("<br><script>x</script>", 22, 100));
}

Test(digest, plotly_figure)
{
	struct json_object	*fig;
	char			*s;

	fig = parse("{\"data\": [{\"type\": \"scatter\", \"mode\": \"lines\", "
	    "\"name\": \"revenue\", \"x\": [1, 2, 3, 4], \"y\": [-2.5, 7, 1, "
	    "null]}, {\"type\": \"bar\", \"x\": [\"Jan\", \"Feb\", \"Mar\"], "
	    "\"y\": [3, 1, 2]}, {\"type\": \"heatmap\", \"z\": [[1, 2], [3, "
	    "9]]}, {\"y\": {\"dtype\": \"f8\", \"bdata\": "
	    "\"AAAAAAAA8D8AAAAAAAAAQA==\"}}], \"layout\": {\"title\": {\"text\": "
	    "\"Sales\"}, \"xaxis\": {\"title\": {\"text\": \"month\"}, \"type\": "
	    "\"date\"}, \"yaxis\": {\"title\": \"USD\", \"range\": [0, 10]}}}");
	s = worker_digest_plotly(fig, ORIG);
	cr_assert(strstr(s, "[Plotly figure (application/vnd.plotly.v1+json) "
	    "as a summary: trace types, points, ranges, axes; " ORIG "]\n")
	    == s, "%s", s);
	cr_assert(strstr(s, "title: \"Sales\"\n") != NULL, "%s", s);
	cr_assert(strstr(s, "axes: xaxis \"month\" (date); yaxis \"USD\" "
	    "range 0 to 10\n") != NULL, "%s", s);
	cr_assert(strstr(s, "4 traces\n- trace 0: scatter (lines) \"revenue\":"
	    " 4 points; x 1 to 4; y -2.5 to 7 (1 null)\n") != NULL, "%s", s);
	cr_assert(strstr(s, "- trace 1: bar: 3 points; x 3 strings \"Jan\" "
	    "\xe2\x80\xa6 \"Mar\"; y 1 to 3\n") != NULL, "%s", s);
	cr_assert(strstr(s, "- trace 2: heatmap: 4 points; z 1 to 9\n") !=
	    NULL, "%s", s);
	cr_assert(strstr(s, "- trace 3: scatter: 2 points; y 2 binary values "
	    "(dtype f8; range not decoded)\n") != NULL, "%s", s);
	free(s);
	json_object_put(fig);
}

Test(digest, vegalite_chart)
{
	struct json_object	*spec;
	char			*s;

	spec = parse("{\"$schema\": \"https://vega.github.io/schema/vega-lite/"
	    "v5.json\", \"title\": \"Cars\", \"data\": {\"name\": \"d1\"}, "
	    "\"datasets\": {\"d1\": [{\"hp\": 130, \"mpg\": 18, \"origin\": "
	    "\"USA\"}, {\"hp\": 95, \"mpg\": 24, \"origin\": \"Japan\"}, "
	    "{\"hp\": 220, \"mpg\": 9.5, \"origin\": \"USA\"}]}, \"layer\": "
	    "[{\"mark\": {\"type\": \"point\"}, \"encoding\": {\"x\": {\"field\": "
	    "\"hp\", \"type\": \"quantitative\", \"title\": \"Horsepower\"}, "
	    "\"y\": {\"field\": \"mpg\", \"type\": \"quantitative\"}, \"color\": "
	    "{\"field\": \"origin\", \"type\": \"nominal\"}}}, {\"mark\": "
	    "\"rule\", \"data\": {\"url\": \"data/x.json\"}, \"encoding\": "
	    "{\"y\": {\"aggregate\": \"mean\", \"field\": \"mpg\"}}}]}");
	s = worker_digest_vega("application/vnd.vegalite.v5+json", spec, ORIG);
	cr_assert(strstr(s, "[Vega-Lite chart (application/vnd.vegalite.v5+"
	    "json) as a summary: marks, encodings, data size and ranges; "
	    ORIG "]\ntitle: \"Cars\"\n") == s, "%s", s);
	cr_assert(strstr(s, "  - mark point: 3 data rows\n    x: \"hp\" "
	    "(quantitative) title \"Horsepower\"; values 95 to 220\n"
	    "    y: \"mpg\" (quantitative); values 9.5 to 24\n    color: "
	    "\"origin\" (nominal); values 3 strings \"USA\" \xe2\x80\xa6 "
	    "\"USA\"\n") != NULL, "%s", s);
	cr_assert(strstr(s, "  - mark rule: data from \"data/x.json\" (not in "
	    "the output)\n    y: \"mpg\" mean\n") != NULL, "%s", s);
	free(s);
	json_object_put(spec);
}

Test(digest, vega_spec)
{
	struct json_object	*spec;
	char			*s;

	spec = parse("{\"data\": [{\"name\": \"table\", \"values\": [{\"a\": 1}, "
	    "{\"a\": 2}]}, {\"name\": \"remote\", \"url\": \"x.csv\"}], \"axes\": "
	    "[{\"orient\": \"bottom\", \"scale\": \"xscale\", \"title\": \"A\"}], "
	    "\"marks\": [{\"type\": \"group\", \"marks\": [{\"type\": \"rect\", "
	    "\"from\": {\"data\": \"table\"}}]}]}");
	s = worker_digest_vega("application/vnd.vega.v5+json", spec, ORIG);
	cr_assert(strstr(s, "data \"table\": 2 rows\ndata \"remote\": from "
	    "\"x.csv\" (not in the output)\naxis bottom scale xscale title "
	    "\"A\"\n- mark group\n  - mark rect from data \"table\"\n") != NULL,
	    "%s", s);
	free(s);
	json_object_put(spec);
}

Test(digest, widget_view)
{
	struct json_object	*data;
	char			*s;

	data = parse("{\"text/plain\": \"IntSlider(value=7)\", "
	    "\"application/vnd.jupyter.widget-view+json\": {\"model_id\": "
	    "\"5f3c\", \"version_major\": 2, \"version_minor\": 0}}");
	s = worker_digest_bundle(data, ORIG);
	cr_assert(strstr(s, "[ipywidget 5f3c: live state not available "
	    "(runtimed keeps no comm messages); its repr when shown follows; "
	    ORIG "]\n") == s, "%s", s);
	cr_assert(strstr(s, "]\nIntSlider(value=7)\n") != NULL, "%s", s);
	free(s);
	json_object_put(data);
}

Test(digest, which_bundles)
{
	struct json_object	*data;
	char			*s;

	/* Text alone, or an image with HTML: nothing to summarize. */
	data = parse("{\"text/plain\": \"42\"}");
	cr_assert_null(worker_digest_bundle(data, ORIG));
	json_object_put(data);
	data = parse("{\"text/plain\": \"<Figure>\", \"image/png\": \"iVBO\", "
	    "\"text/html\": \"<table><tr><td>1</td></tr></table>\"}");
	cr_assert_null(worker_digest_bundle(data, ORIG));
	json_object_put(data);
	/* HTML without a table: its text when text/plain says nothing. */
	data = parse("{\"text/plain\": \"<IPython.core.display.HTML object>\", "
	    "\"text/html\": [\"<b>Done</b>\", \" in 3s\"]}");
	s = worker_digest_bundle(data, ORIG);
	cr_assert(strstr(s, "[HTML as text: tags, scripts and styles left "
	    "out, at most 2000 characters; " ORIG "]\nDone in 3s\n") == s,
	    "%s", s);
	free(s);
	json_object_put(data);
	data = parse("{\"text/plain\": \"a real repr\", \"text/html\": "
	    "\"<b>x</b>\"}");
	cr_assert_null(worker_digest_bundle(data, ORIG));
	json_object_put(data);
	/*
	 * A whole table beside a real repr is read as the repr (pandas'
	 * small frame); beside an idle one, or cut, it is summarized.
	 */
	data = parse("{\"text/plain\": \"   a\\n0  1\", \"text/html\": "
	    "\"<table><tr><th></th><th>a</th></tr><tr><th>0</th><td>1</td></tr>"
	    "</table>\"}");
	cr_assert_null(worker_digest_bundle(data, ORIG));
	json_object_object_add(data, "text/plain", json_object_new_string(
	    "<IPython.core.display.HTML object>"));
	s = worker_digest_bundle(data, ORIG);
	cr_assert(strstr(s, "[HTML table as text rows: showing 1 of 1 rows, "
	    "1 columns;") == s, "%s", s);
	free(s);
	json_object_object_add(data, "text/plain", json_object_new_string(
	    "   a\n0  1\n..\n\n[70 rows x 1 columns]"));
	s = worker_digest_bundle(data, ORIG);
	cr_assert(strstr(s, "showing 1 of 70 rows, 1 columns (size from "
	    "text/plain)") != NULL, "%s", s);
	free(s);
	json_object_put(data);
	/* Plotly's JSON before its HTML. */
	data = parse("{\"text/html\": \"<div>plotly.js</div>\", "
	    "\"application/vnd.plotly.v1+json\": {\"data\": [], \"layout\": {}}}");
	s = worker_digest_bundle(data, ORIG);
	cr_assert(strstr(s, "[Plotly figure") == s, "%s", s);
	free(s);
	json_object_put(data);
}

Test(digest, reader_shows_the_summary)
{
	struct worker_budget	 b;
	struct json_object	*outs, *capped, *d;
	struct evbuffer		*text;
	char			*html, *s;
	int			 trunc;

	html = frame_html(1000, 1);
	outs = json_object_new_array();
	d = json_object_new_object();
	json_object_object_add(d, "text/plain", json_object_new_string(
	    "[1000 rows x 2 columns]"));
	json_object_object_add(d, "text/html", json_object_new_string(html));
	json_object_array_add(outs, json_object_new_object());
	json_object_object_add(json_object_array_get_idx(outs, 0),
	    "output_type", json_object_new_string("execute_result"));
	json_object_object_add(json_object_array_get_idx(outs, 0), "data", d);
	worker_budget_init(&b, 0);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	s = worker_output_take(text);
	cr_assert(strstr(s, "[HTML table as text rows: showing 10 of "
	    "1000 rows") == s, "%s", s);
	cr_assert(strstr(s, "<table") == NULL, "%s", s);
	d = json_object_object_get(json_object_array_get_idx(capped, 0),
	    "data");
	cr_assert_not_null(json_object_object_get(d, WORKER_DIGEST_MIME));
	cr_assert_not_null(json_object_object_get(d, "text/plain"));
	free(s);
	json_object_put(capped);
	/* full_output: the originals, no summary. */
	worker_budget_init(&b, 1);
	text = evbuffer_new();
	capped = worker_output_cap(outs, &b, text, &trunc, NULL);
	s = worker_output_take(text);
	cr_assert(strstr(s, "[1000 rows x 2 columns]") == s, "%s", s);
	cr_assert(strstr(s, "showing") == NULL, "%s", s);
	d = json_object_object_get(json_object_array_get_idx(capped, 0),
	    "data");
	cr_assert_null(json_object_object_get(d, WORKER_DIGEST_MIME));
	cr_assert_not_null(json_object_object_get(d, "text/html"));
	free(s);
	json_object_put(capped);
	json_object_put(outs);
	free(html);
}
