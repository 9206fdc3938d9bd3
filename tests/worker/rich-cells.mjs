// SPDX-License-Identifier: ISC
// rich-cells.mjs: cells whose outputs are rich (decision 076), for
// worker-outputs.test.mjs and bench/outputs-chars.mjs: a Plotly figure of
// 10,000 points, a Vega-Lite chart, an ipywidgets view, a 1,000-row
// DataFrame.  Plotly, Altair and ipywidgets are not installed: their mime
// bundles are published with display(bundle, raw=True), as they publish
// them.

// The kernel's own mime bundles, as plotly.io and altair publish them.
export const FIG = [
  'import json, math',
  'from IPython.display import display',
  'xs = list(range(10000))',
  'fig = {"data": [{"type": "scatter", "mode": "lines", "name": "sin",',
  '  "x": xs, "y": [round(math.sin(x / 100), 4) for x in xs]},',
  ' {"type": "bar", "name": "count", "x": ["a", "b", "c"], "y": [3, 1, 2]}],',
  ' "layout": {"title": {"text": "Signal"}, "xaxis": {"title": {"text": "t"}},',
  '  "yaxis": {"title": {"text": "volts"}}}}',
  'html = "<div id=\\"p\\"></div><script>Plotly.newPlot(\\"p\\", " + json.dumps(fig) + ")</script>"',
  'display({"application/vnd.plotly.v1+json": fig, "text/html": html}, raw=True)',
].join('\n');
export const VL = [
  'from IPython.display import display',
  'rows = [{"hp": 50 + i, "mpg": 40 - i / 10, "origin": ["USA", "Japan"][i % 2]} for i in range(200)]',
  'spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",',
  '  "title": "Cars", "data": {"name": "d"}, "datasets": {"d": rows},',
  '  "mark": {"type": "point"}, "encoding": {',
  '    "x": {"field": "hp", "type": "quantitative", "title": "Horsepower"},',
  '    "y": {"field": "mpg", "type": "quantitative"},',
  '    "color": {"field": "origin", "type": "nominal"}}}',
  'display({"application/vnd.vegalite.v5+json": spec,',
  '  "text/plain": "<VegaLite 5 object>"}, raw=True)',
].join('\n');
export const WIDGET = [
  'from IPython.display import display',
  'display({"application/vnd.jupyter.widget-view+json": {"model_id": "8c3f1e", "version_major": 2, "version_minor": 0},',
  '  "text/plain": "IntSlider(value=7, description=\'n\')"}, raw=True)',
].join('\n');
// A 1,000-row DataFrame: pandas' own repr (cut to 10 rows), and all of
// it through to_html.  Without pandas, the HTML it writes, by hand.
export const FRAME = [
  'from IPython.display import display, HTML',
  'try:',
  '    import pandas as pd',
  '    df = pd.DataFrame({"id": range(1000), "name": ["n%d" % i for i in range(1000)],',
  '                       "score": [i * 0.5 for i in range(1000)]})',
  '    display(df)',
  '    display(HTML(df.to_html()))',
  'except ImportError:',
  '    head = "<table border=\\"1\\" class=\\"dataframe\\"><thead><tr><th></th><th>id</th><th>name</th><th>score</th></tr></thead><tbody>"',
  '    row = lambda i: "<tr><th>%d</th><td>%d</td><td>n%d</td><td>%s</td></tr>" % (i, i, i, i * 0.5)',
  '    cut = "".join(row(i) for i in range(5)) + "<tr><th>...</th><td>...</td><td>...</td><td>...</td></tr>" + "".join(row(i) for i in range(995, 1000))',
  '    display({"text/html": "<div>" + head + cut + "</tbody></table><p>1000 rows \\u00d7 3 columns</p></div>",',
  '             "text/plain": "      id  name  score\\n..\\n\\n[1000 rows x 3 columns]"}, raw=True)',
  '    display(HTML(head + "".join(row(i) for i in range(1000)) + "</tbody></table>"))',
].join('\n');
