// SPDX-License-Identifier: ISC
// worker-outputs.test.mjs: outputs an agent can read (issue 40 item 2,
// decision 076).  The real runtimed-mcp-worker on stdio, driven by the
// official MCP TypeScript SDK client, against the real daemon and a
// python3 ipykernel.  A pandas DataFrame (when python3-pandas is
// installed; else the same HTML and text/plain published as they are),
// and Plotly, Vega-Lite and ipywidgets bundles published by the kernel
// with IPython.display.display(bundle, raw=True), as those libraries do
// (they are not installed): the model reads a summary headed by what was
// transformed and how to get the original, and full_output returns the
// original.  A real ipywidgets slider and dropdown (python3-ipywidgets)
// are read as their model's state, kept by the agent (decision 089).
// The characters before and after are printed.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-node.sh).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld } from './worker-world.mjs';
import { FIG, VL, WIDGET, FRAME } from './rich-cells.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wout');
fs.mkdirSync(path.join(T, 'work'));
const NB = path.join(T, 'work', 'outputs.ipynb');

async function worker(name, structured) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities:
    structured ? { experimental: { 'io.runtimed/structured': {} } } : {} });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function ok(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined,
    { timeout: 90000 });
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text };
}

let A, P, H, HP;

// Insert a cell, run it, wait: [cell_id, execution_id].
async function runCell(source) {
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source }], run: true });
  const g = await ok(A, 'get_results', { notebook_handle: H,
    execution_id: e.sc.run.execution_id, timeout_secs: 50 });
  assert.equal(g.sc.status, 'done', g.text);
  return [e.sc.cells[0].cell_id, e.sc.run.execution_id];
}

let fig, vl, widget, frame;

before(async () => {
  A = await worker('outputs', true);
  H = (await ok(A, 'create_notebook', { path: NB })).sc.notebook_handle;
  fig = await runCell(FIG);
  vl = await runCell(VL);
  widget = await runCell(WIDGET);
  frame = await runCell(FRAME);
  P = await worker('outputs-plain', false);
  HP = (await ok(P, 'connect_notebook', { path: NB })).text.match(/notebook_handle: (\S+)/)[1];
});

after(async () => {
  if (A) await A.close().catch(() => {});
  if (P) await P.close().catch(() => {});
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
  await new Promise((r) => setTimeout(r, 500));
  const dir = path.dirname(SAN);
  const reports = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(SAN)));
  for (const f of reports) {
    console.log(`# sanitizer report ${f}:\n${fs.readFileSync(path.join(dir, f), 'utf8').slice(0, 3000)}`);
    fs.rmSync(path.join(dir, f));
  }
  assert.equal(reports.length, 0, 'sanitizer reports');
});

// The original outputs of a run, from the structured full read.
async function originals(run) {
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: run[1],
    full_output: true });
  return g.sc.cells[0].outputs;
}

test('a Plotly figure of 10,000 points: a summary, the original on asking', async () => {
  const g = await ok(P, 'get_results', { notebook_handle: HP, execution_id: fig[1] });
  assert.match(g.text, /\[Plotly figure \(application\/vnd\.plotly\.v1\+json\) as a summary: trace types, points, ranges, axes; get_results full_output:true shows the original\]/);
  assert.match(g.text, /title: "Signal"/);
  assert.match(g.text, /axes: xaxis "t"; yaxis "volts"/);
  assert.match(g.text, /- trace 0: scatter \(lines\) "sin": 10000 points; x 0 to 9999; y -1 to 1/);
  assert.match(g.text, /- trace 1: bar "count": 3 points; x 3 strings "a" … "c"; y 1 to 3/);
  assert.doesNotMatch(g.text, /Plotly\.newPlot|<script/, 'no HTML in the text');
  const full = await ok(P, 'get_results', { notebook_handle: HP, execution_id: fig[1],
    full_output: true });
  assert.match(full.text, /Plotly\.newPlot/, 'full_output shows the original');
  const orig = await originals(fig);
  const json = JSON.stringify(orig[0].data['application/vnd.plotly.v1+json']);
  const html = orig[0].data['text/html'];
  assert.equal(orig[0].data['text/x-runtimed-summary'], undefined);
  console.log(`# plotly 10,000 points: figure JSON ${json.length} chars, its text/html ${html.length}; ` +
    `the model reads ${g.text.length} (whole result text)`);
  // A structured client gets the summary beside what fits of the rest.
  const s = await ok(A, 'get_results', { notebook_handle: H, execution_id: fig[1] });
  assert.match(s.sc.cells[0].outputs[0].data['text/x-runtimed-summary'], /^\[Plotly figure/);
});

test('a Vega-Lite chart: marks, fields, data rows and ranges', async () => {
  const g = await ok(P, 'get_results', { notebook_handle: HP, execution_id: vl[1] });
  assert.match(g.text, /\[Vega-Lite chart \(application\/vnd\.vegalite\.v5\+json\) as a summary/);
  assert.match(g.text, /title: "Cars"/);
  assert.match(g.text, /- mark point: 200 data rows/);
  assert.match(g.text, /x: "hp" \(quantitative\) title "Horsepower"; values 50 to 249/);
  assert.match(g.text, /y: "mpg" \(quantitative\); values 20\.1 to 40/);
  assert.match(g.text, /color: "origin" \(nominal\); values 200 strings "USA" … "Japan"/);
  assert.doesNotMatch(g.text, /VegaLite 5 object/);
});

test('a widget view: what it is and that its state is not here', async () => {
  const g = await ok(P, 'get_results', { notebook_handle: HP, execution_id: widget[1] });
  assert.match(g.text, /\[ipywidget 8c3f1e: live state not available \(runtimed keeps no comm messages\); its repr when shown follows; get_results full_output:true shows the original\]/);
  assert.match(g.text, /IntSlider\(value=7, description='n'\)/);
});

test('a 1,000-row DataFrame: rows as text with its size, the HTML on asking', async () => {
  const g = await ok(P, 'get_results', { notebook_handle: HP, execution_id: frame[1] });
  assert.match(g.text, /\[HTML table as text rows: showing 10 of 1000 rows, 3 columns \(size from text\/plain\); first cell: the index; dtypes not in the output; get_results full_output:true shows the original\]/);
  assert.match(g.text, /\n \| id \| name \| score\n0 \| 0 \| n0 \| 0\.0\n/);
  assert.match(g.text, /\n\.\.\.\n995 \| 995 \| n995 \| 497\.5\n/);
  assert.match(g.text, /\[HTML table as text rows: showing 15 of 1000 rows, 3 columns; first cell: the index;/);
  assert.match(g.text, /\[\.\.\. 985 rows not shown \.\.\.\]\n995 \| 995 \| n995 \| 497\.5/);
  assert.doesNotMatch(g.text, /text\/html|<table|<td>|<div/, 'no HTML twin');
  const orig = await originals(frame);
  const repr = orig[0].data['text/html'];
  const whole = orig[1].data['text/html'];
  const one = g.text.indexOf('[HTML table');
  const two = g.text.indexOf('[HTML table', one + 1);
  console.log(`# DataFrame 1000x3: pandas' HTML repr ${repr.length} chars and its text/plain ` +
    `${orig[0].data['text/plain'].length}, the summary ${two - one}; to_html() of all rows ` +
    `${whole.length} chars, the summary ${g.text.length - two}`);
  // inspect_notebook names its own way to the original.
  const i = await ok(P, 'inspect_notebook', { notebook_handle: HP, view: 'outputs',
    cell_ids: [frame[0]] });
  assert.match(i.text, /inspect_notebook output_mode:"full" shows the original\]/);
  const f = await ok(P, 'inspect_notebook', { notebook_handle: HP, view: 'outputs',
    cell_ids: [frame[0]], output_mode: 'full' });
  assert.doesNotMatch(f.text, /HTML table as text rows/);
});

// Real ipywidgets (python3-ipywidgets: 6.0.0 on Debian 12, whose comm
// data is the state itself; 7 and 8 send {state}): the agent keeps the
// model's state from comm_open and comm_msg updates (decision 089), the
// view is read as its class and state when shown; the saved file has
// none of it; a restart forgets the models.
test('an ipywidgets view: its model\'s class and state, from the comm messages', async (t) => {
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import ipywidgets'], { timeout: 30000 });
  if (probe.status !== 0) {
    if (process.env.CI === 'true') assert.fail('python3-ipywidgets is not installed');
    t.skip('python3-ipywidgets is not installed');
    return;
  }
  const s = await runCell([
    'import ipywidgets as w',
    's = w.IntSlider(value=7, min=0, max=10, description="n")',
    'display(s)',
  ].join('\n'));
  const g = await ok(P, 'get_results', { notebook_handle: HP, execution_id: s[1] });
  const m = g.text.match(/\[ipywidget IntSlider (\w+): its state when shown, from the kernel's comm messages; get_results full_output:true shows the original\]\ndescription "n"; value 7; min 0; max 10(\n|$)/);
  assert.ok(m, g.text);
  const id = m[1];
  // An update (comm_msg) before the next view is shown.
  const u = await runCell('s.value = 9\ns.description = "count"\ndisplay(s)');
  const gu = await ok(P, 'get_results', { notebook_handle: HP, execution_id: u[1] });
  assert.match(gu.text, new RegExp(`\\[ipywidget IntSlider ${id}: its state when shown[^\\]]*\\]\\ndescription "count"; value 9; min 0; max 10(\\n|$)`), gu.text);
  // The first view keeps the state it was shown with.
  const again = await ok(P, 'inspect_notebook', { notebook_handle: HP, view: 'outputs',
    cell_ids: [s[0]] });
  assert.match(again.text, /description "n"; value 7; min 0; max 10(\n|$)/);
  const d = await runCell('d = w.Dropdown(options=["a", "b", "c"], value="b", description="pick")\ndisplay(d)');
  const gd = await ok(P, 'get_results', { notebook_handle: HP, execution_id: d[1] });
  assert.match(gd.text, /\[ipywidget Dropdown \w+: its state when shown[^\]]*\]\ndescription "pick"; value "b"; options "a", "b", "c"(\n|$)/, gd.text);
  console.log(`# ipywidgets IntSlider view: the model reads ${g.text.length} characters (whole result text)`);
  // Bounded: 100 sliders (300 models with their layouts and styles) with
  // 1,000-character descriptions: the first is forgotten, the last kept
  // with its description cut to 200 bytes.
  const many = await runCell([
    'many = [w.IntSlider(value=i, description="x" * 1000) for i in range(100)]',
    'display(many[0]); display(many[-1])',
  ].join('\n'));
  const gm = await ok(P, 'get_results', { notebook_handle: HP, execution_id: many[1] });
  assert.match(gm.text, /\[ipywidget \w+: live state not available/, gm.text);
  assert.match(gm.text, /\[ipywidget IntSlider \w+: its state when shown[^\]]*\]\ndescription "x{39}…"; value 99; min 0; max 100/, gm.text);
  const im = await ok(A, 'inspect_notebook', { notebook_handle: H, view: 'outputs',
    cell_ids: [many[0]] });
  const kept = im.sc.cells[0].outputs.map((o) => o.transient?.widget).filter(Boolean);
  assert.equal(kept.length, 1, JSON.stringify(im.sc.cells[0].outputs));
  assert.equal(kept[0].description, 'x'.repeat(200), 'kept to 200 bytes');
  // Never in the saved file.
  await ok(A, 'save_notebook', { notebook_handle: H });
  const saved = fs.readFileSync(NB, 'utf8');
  assert.ok(saved.includes(id), 'the view is saved');
  assert.doesNotMatch(saved, /"transient"|its state when shown/);
  // A restart forgets the models: a view of the old model is unknown.
  await ok(A, 'restart_kernel', { notebook_handle: H });
  const r = await runCell([
    'from IPython.display import display',
    `display({"application/vnd.jupyter.widget-view+json": {"model_id": "${id}", "version_major": 2, "version_minor": 0}}, raw=True)`,
  ].join('\n'));
  const gr = await ok(P, 'get_results', { notebook_handle: HP, execution_id: r[1] });
  assert.match(gr.text, new RegExp(`\\[ipywidget ${id}: live state not available`), gr.text);
});
