// SPDX-License-Identifier: ISC
// worker-figures.test.mjs: a Plotly or Vega figure the model sees as an
// image (issue 40 item 2, decision 088).  The real runtimed-mcp-worker on
// stdio, driven by the official MCP TypeScript SDK client, against the
// real daemon and a python3 ipykernel with Debian's python3-plotly: the
// figure is drawn by headless Chromium with the plotly.js python3-plotly
// ships (a Vega spec with libjs-vega's vega) and comes as an MCP image
// content item beside its summary.  The PNG is decoded here (node's zlib)
// and checked: its size is the one the text states and the plot area has
// ink.  A figure naming an external URL does not fetch it; the worker
// answers another call while a figure is drawn; without Chromium, or
// past the time bound, the text says why there is no image, and nothing
// is left in the temporary directory.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-node.sh).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { workerWorld } from './worker-world.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wfig');
const TMP = path.join(T, 'tmp');
fs.mkdirSync(TMP);
fs.mkdirSync(path.join(T, 'work'));
const NB = path.join(T, 'work', 'figures.ipynb');
// Chromium's temporary directories go under TMP, checked empty.
const wenv = { ...env, TMPDIR: TMP };

async function worker(name, extra = {}) {
  const transport = new StdioClientTransport({ command: WORKER, args: [],
    env: { ...wenv, ...extra }, stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities:
    { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined,
    { timeout: 90000 });
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text, images: r.content.filter((c) => c.type === 'image') };
}

// A PNG decoded: width, height and RGB(A) rows (8-bit, not interlaced,
// which is what Chromium writes).
function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  let off = 8, w = 0, h = 0, ct = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      w = data.readUInt32BE(0); h = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth'); ct = data[9];
      assert.equal(data[12], 0, 'not interlaced');
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const ch = { 2: 3, 6: 4 }[ct];
  assert.ok(ch, `colour type ${ct}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = w * ch, px = Buffer.alloc(h * stride);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= ch ? px[y * stride + x - ch] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= ch && y > 0 ? px[(y - 1) * stride + x - ch] : 0;
      let v = row[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 255;
    }
  }
  return { w, h, ch, px };
}

// Pixels of the box (fractions of the image) that are not near white.
function ink(img, x0, y0, x1, y1) {
  let n = 0;
  for (let y = Math.floor(img.h * y0); y < img.h * y1; y++)
    for (let x = Math.floor(img.w * x0); x < img.w * x1; x++) {
      const i = (y * img.w + x) * img.ch;
      if (img.px[i] < 200 || img.px[i + 1] < 200 || img.px[i + 2] < 200) n++;
    }
  return n;
}

// The only server an external URL in a figure could reach.
let hits = 0;
const server = http.createServer((req, res) => { hits++; res.end('{}'); });
let PORT;

let A, H;

async function runCell(source) {
  const e = await call(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source }], run: true });
  const g = await call(A, 'get_results', { notebook_handle: H,
    execution_id: e.sc.run.execution_id, timeout_secs: 50 });
  assert.equal(g.sc.status, 'done', g.text);
  return { cell: e.sc.cells[0].cell_id, run: e.sc.run.execution_id, first: g };
}

const PLOTLY = [
  'import plotly.graph_objects as go',
  'fig = go.Figure([go.Scatter(x=list(range(50)), y=[(i % 10) * 3 for i in range(50)],',
  '                            mode="lines+markers", name="saw")])',
  'fig.update_layout(title="Saw", width=640, height=400)',
  'fig.show()',
].join('\n');

const VEGA = (url) => [
  'from IPython.display import display',
  'spec = {"$schema": "https://vega.github.io/schema/vega/v5.json", "width": 400, "height": 200, "padding": 5,',
  '  "data": [{"name": "t", ' + (url ? `"url": "${url}"` :
    '"values": [{"c": "A", "n": 28}, {"c": "B", "n": 55}, {"c": "C", "n": 43}]') + '}],',
  '  "scales": [{"name": "x", "type": "band", "domain": {"data": "t", "field": "c"}, "range": "width", "padding": 0.1},',
  '             {"name": "y", "domain": {"data": "t", "field": "n"}, "nice": True, "range": "height"}],',
  '  "axes": [{"orient": "bottom", "scale": "x"}, {"orient": "left", "scale": "y"}],',
  '  "marks": [{"type": "rect", "from": {"data": "t"}, "encode": {"enter": {',
  '    "x": {"scale": "x", "field": "c"}, "width": {"scale": "x", "band": 1},',
  '    "y": {"scale": "y", "field": "n"}, "y2": {"scale": "y", "value": 0}, "fill": {"signal": "\'steel\' + \'blue\'"}}}}]}',
  'display({"application/vnd.vega.v5+json": spec, "text/plain": "<Vega 5 object>"}, raw=True)',
].join('\n');

let plotly, vega;

before(async () => {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  PORT = server.address().port;
  A = await worker('figures');
  H = (await call(A, 'create_notebook', { path: NB })).sc.notebook_handle;
  plotly = await runCell(PLOTLY);
  vega = await runCell(VEGA(null));
});

after(async () => {
  if (A) await A.close().catch(() => {});
  server.close();
  spawnSync(DAEMON, ['stop'], { env: wenv, timeout: 20000 });
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

function leftovers() {
  return fs.readdirSync(TMP).filter((f) => f.startsWith('runtimed-figure.'));
}

// The figure's line in the text, and its image checked.
function drawn(g, what, cell) {
  const re = new RegExp(`\\[${what}, cell ${cell} output (\\d+): drawn as a (\\d+)x(\\d+) PNG ` +
    'by headless Chromium in ([\\d.]+) s( \\(kept from an earlier read\\))?, the image below; ' +
    'the notebook keeps the figure\\]');
  const m = g.text.match(re);
  assert.ok(m, g.text);
  assert.equal(g.images.length, 1, 'one image');
  assert.equal(g.images[0].mimeType, 'image/png');
  const img = decodePng(Buffer.from(g.images[0].data, 'base64'));
  assert.equal(img.w, Number(m[2]), 'the stated width');
  assert.equal(img.h, Number(m[3]), 'the stated height');
  return { img, output: Number(m[1]), secs: Number(m[4]), kept: m[5] !== undefined };
}

test('a Plotly figure from python3-plotly: its summary and a PNG of it', async () => {
  const g = await call(A, 'get_results', { notebook_handle: H, execution_id: plotly.run });
  assert.match(g.text, /\[Plotly figure \(application\/vnd\.plotly\.v1\+json\) as a summary/);
  assert.match(g.text, /title: "Saw"/);
  const { img, secs, output } = drawn(g, 'Plotly figure', plotly.cell);
  assert.equal(img.w, 640, 'the layout\'s width');
  assert.equal(img.h, 400, 'the layout\'s height');
  // The plot area (inside the margins) has the line and markers.
  const n = ink(img, 0.15, 0.25, 0.85, 0.8);
  assert.ok(n > 500, `ink in the plot area: ${n} pixels`);
  const f = g.sc.figures.find((x) => x.cell_id === plotly.cell);
  assert.equal(f.output_index, output - 1, 'counted from 0 there, from 1 in the text');
  assert.equal(f.width, 640);
  assert.equal(f.mimeType, 'image/png');
  console.log(`# Plotly figure: drawn in ${secs} s; the image ${g.images[0].data.length} chars of base64 ` +
    `(${img.w}x${img.h}, about ${Math.round(img.w * img.h / 750)} image tokens); ` +
    `the result text ${g.text.length} chars`);
  assert.deepEqual(leftovers(), []);
  // Read again: the screenshot kept, not drawn again.
  const t0 = Date.now();
  const again = await call(A, 'get_results', { notebook_handle: H, execution_id: plotly.run });
  const ms = Date.now() - t0;
  assert.equal(drawn(again, 'Plotly figure', plotly.cell).kept, true);
  assert.equal(again.images[0].data, g.images[0].data);
  console.log(`# read again: answered in ${ms} ms, the screenshot kept`);
  // full_output gives the originals and draws nothing.
  const full = await call(A, 'get_results', { notebook_handle: H, execution_id: plotly.run,
    full_output: true });
  assert.equal(full.images.length, 0);
  assert.doesNotMatch(full.text, /drawn as a/);
});

test('a Vega spec: drawn with libjs-vega', async () => {
  const g = await call(A, 'get_results', { notebook_handle: H, execution_id: vega.run });
  assert.match(g.text, /\[Vega chart \(application\/vnd\.vega\.v5\+json\) as a summary/);
  const { img, secs } = drawn(g, 'Vega chart', vega.cell);
  assert.equal(img.w, 800);
  assert.equal(img.h, 500);
  // The bars, steelblue by an expression (interpreted: the page allows
  // no eval), scaled to fit.
  let blue = 0;
  for (let i = 0; i < img.w * img.h; i++) {
    const r = img.px[i * img.ch], gg = img.px[i * img.ch + 1], b = img.px[i * img.ch + 2];
    if (Math.abs(r - 70) < 20 && Math.abs(gg - 130) < 20 && Math.abs(b - 180) < 20) blue++;
  }
  assert.ok(blue > 10000, `steelblue pixels: ${blue}`);
  console.log(`# Vega chart: drawn in ${secs} s; the image ${g.images[0].data.length} chars of base64; ` +
    `the result text ${g.text.length} chars`);
  assert.deepEqual(leftovers(), []);
});

test('a figure naming external URLs: nothing is fetched', async () => {
  const base = `http://127.0.0.1:${PORT}`;
  const p = await runCell([
    'import plotly.graph_objects as go',
    'fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))',
    `fig.add_layout_image(source="${base}/logo.png", xref="paper", yref="paper", x=0, y=1, sizex=0.5, sizey=0.5)`,
    'fig.show()',
  ].join('\n'));
  const v = await runCell(VEGA(`${base}/data.json`));
  const gp = await call(A, 'get_results', { notebook_handle: H, execution_id: p.run });
  drawn(gp, 'Plotly figure', p.cell);
  const gv = await call(A, 'get_results', { notebook_handle: H, execution_id: v.run });
  assert.match(gv.text, new RegExp(`\\[Vega chart, cell ${v.cell} output \\d+: no image: the page failed: `), gv.text);
  assert.equal(gv.images.length, 0);
  console.log(`# ${gv.text.match(/\[Vega chart, cell \S+ output \d+: no image[^\]]*\]/)[0]}`);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(hits, 0, 'no request reached the server');
  assert.deepEqual(leftovers(), []);
});

test('the worker answers other calls while a figure is drawn', async () => {
  // A new figure, after the edit's own wait (1 s): get_results draws it.
  const e = await call(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'insert',
    after: 'BOTTOM', source: 'import time\ntime.sleep(2)\n' +
    PLOTLY.replace('title="Saw"', 'title="Saw 2"') }], run: true });
  assert.notEqual(e.sc.run.status, 'done');
  const t0 = Date.now();
  let drawnAt = 0;
  const fig = call(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id,
    timeout_secs: 50 }).then((g) => { drawnAt = Date.now() - t0; return g; });
  const answered = [];
  while (drawnAt === 0) {
    await call(A, 'list_notebooks', {});
    answered.push(Date.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  const g = await fig;
  const d = drawn(g, 'Plotly figure', e.sc.cells[0].cell_id);
  assert.equal(d.kept, false);
  const from = drawnAt - d.secs * 1000;
  const during = answered.filter((t) => t > from && t < drawnAt);
  console.log(`# while the figure was drawn (${Math.round(from)} to ${drawnAt} ms), ` +
    `list_notebooks was answered ${during.length} times`);
  assert.ok(during.length >= 2, `answers during the drawing: ${answered.join(' ')}`);
});

test('a Vega-Lite chart: no image, and why', async () => {
  const c = await runCell([
    'from IPython.display import display',
    'display({"application/vnd.vegalite.v5+json": {"mark": "point", "data": {"values": [{"a": 1}]},',
    '  "encoding": {"x": {"field": "a", "type": "quantitative"}}}}, raw=True)',
  ].join('\n'));
  const g = await call(A, 'get_results', { notebook_handle: H, execution_id: c.run });
  assert.match(g.text, new RegExp(`\\[Vega-Lite chart, cell ${c.cell} output 1: no image: ` +
    'Vega-Lite is not drawn here \\(no compiler to Vega\\)\\]'));
  assert.equal(g.images.length, 0);
});

test('without Chromium: no image, and why', async () => {
  const B = await worker('no-chromium', { RUNTIMED_CHROMIUM: '' });
  try {
    const HB = (await call(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
    const g = await call(B, 'get_results', { notebook_handle: HB, execution_id: plotly.run });
    assert.match(g.text, new RegExp(`\\[Plotly figure, cell ${plotly.cell} output \\d+: no image: ` +
      'no chromium \\(install chromium, or set RUNTIMED_CHROMIUM\\)\\]'));
    assert.equal(g.images.length, 0);
    assert.match(g.text, /title: "Saw"/, 'the summary is there');
  } finally {
    await B.close().catch(() => {});
  }
});

test('a browser without a sandbox it can use: no image, and what to install', async () => {
  // What Debian's chromium prints in a chroot without chromium-sandbox.
  const fake = path.join(T, 'nosandbox-chromium');
  fs.writeFileSync(fake, '#!/bin/sh\necho "[1:1:ERROR:zygote_host_impl_linux.cc(130)] No usable sandbox! ' +
    'If this is a Debian system, please install the chromium-sandbox package" >&2\nexit 1\n', { mode: 0o755 });
  const B = await worker('nosandbox', { RUNTIMED_CHROMIUM: fake });
  try {
    const HB = (await call(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
    const g = await call(B, 'get_results', { notebook_handle: HB, execution_id: vega.run });
    assert.match(g.text, /no image: chromium has no sandbox it can use here \(install chromium-sandbox\)\]/, g.text);
    assert.equal(g.images.length, 0);
    assert.deepEqual(leftovers(), []);
  } finally {
    await B.close().catch(() => {});
  }
});

test('a browser that never finishes is killed at the time bound, its group and directory gone', async () => {
  // A stand-in that leaves a child in its group and never draws.
  const fake = path.join(T, 'slow-chromium');
  const pidf = path.join(T, 'slow.pids');
  fs.writeFileSync(fake, `#!/bin/sh\nsleep 300 &\necho $$ $! > ${pidf}\nsleep 300\n`, { mode: 0o755 });
  const B = await worker('slow', { RUNTIMED_CHROMIUM: fake });
  try {
    const HB = (await call(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
    const t0 = Date.now();
    const g = await call(B, 'get_results', { notebook_handle: HB, execution_id: vega.run });
    const secs = (Date.now() - t0) / 1000;
    assert.match(g.text, /no image: not drawn within 8 s\]/, g.text);
    assert.ok(secs < 15, `answered in ${secs} s`);
    const pids = fs.readFileSync(pidf, 'utf8').trim().split(/\s+/).map(Number);
    for (const pid of pids) {
      // Gone, or a zombie no one reaped yet (a container's init).
      let alive = true;
      try { alive = !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); }
      catch { alive = false; }
      assert.equal(alive, false, `process ${pid} of its group is gone`);
    }
    assert.deepEqual(leftovers(), []);
  } finally {
    await B.close().catch(() => {});
  }
});
