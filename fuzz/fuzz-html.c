/* SPDX-License-Identifier: ISC */
/*
 * fuzz-html.c: libFuzzer target for what the worker reads of a rich
 * output before a model sees it (mcp-worker/worker-html.c and
 * worker-digest.c, decision 076).  The first byte picks the reader: the
 * HTML table and text scans take the rest as HTML; the others parse it
 * as JSON and summarize it as a Plotly figure, a Vega-Lite or Vega spec,
 * a widget view, or a whole mime bundle.  Each answer is bounded.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-worker/worker.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* worker-output.c comes with the rest of the worker, and its exits. */
void
worker_exit(int status)
{
	exit(status);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*o;
	const char		*s = (const char *)data + 1;
	char			*out = NULL, *plain, *js;
	size_t			 len;
	int			 whole;

	if (size < 1 || size > 1024 * 1024)
		return (0);
	len = size - 1;
	switch (data[0] % 7) {
	case 0:
		out = worker_html_table(s, len, NULL, "orig");
		/* Head and tail rows, each bounded: never the input's size. */
		if (out != NULL && strlen(out) > 256 * 1024)
			abort();
		break;
	case 1:
		/* The size line searched in a text/plain of the same bytes. */
		plain = xmalloc(len + 1);
		memcpy(plain, s, len);
		plain[len] = '\0';
		out = worker_html_rows(s, len, plain, "orig", &whole);
		free(plain);
		break;
	case 2:
		out = worker_html_text(s, len, 100);
		if (out != NULL && utf8_chars(out, strlen(out)) > 100)
			abort();
		break;
	default:
		js = xmalloc(len + 1);
		memcpy(js, s, len);
		js[len] = '\0';
		o = json_tokener_parse(js);
		free(js);
		if (o == NULL)
			return (0);
		if (data[0] % 7 == 3)
			out = worker_digest_plotly(o, "orig");
		else if (data[0] % 7 == 4)
			out = worker_digest_vega(data[0] & 8 ?
			    "application/vnd.vegalite.v5+json" :
			    "application/vnd.vega.v5+json", o, "orig");
		else if (data[0] % 7 == 5 && (data[0] & 8))
			out = worker_digest_widget_state(o, o, "orig");
		else if (data[0] % 7 == 5)
			out = worker_digest_widget(o, "repr", "orig");
		else
			out = worker_digest_bundle(o, "orig");
		json_object_put(o);
		break;
	}
	free(out);
	return (0);
}
