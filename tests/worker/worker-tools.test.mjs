// SPDX-License-Identifier: ISC
// worker-tools.test.mjs: the real runtimed-mcp-worker on stdio, driven by
// the official MCP TypeScript SDK client (tests/e2e/node_modules, imported
// by relative path), against the real daemon, agent and ipykernel.  Every
// tool, the error codes, the limits at their edges, observation with
// cursors, waits and subscriptions between two clients, and the daemon
// incarnation watch.
//
// Environment: WORKER (the worker binary), RUNTIMED_BIN (the daemon),
// RUNTIMED_LIBEXEC_DIR (where the agent and daemon are).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { ResourceUpdatedNotificationSchema, LoggingMessageNotificationSchema } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld } from './worker-world.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wtools', ['RUNTIMED_MCP_PAGE_SIZE']);
const NB = path.join(T, 'work', 'tools.ipynb');
fs.mkdirSync(path.dirname(NB));

async function worker(name) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function raw(client, name, args, opts = {}) {
  return client.callTool({ name, arguments: args }, undefined,
    { timeout: 60000, ...opts });
}

async function ok(client, name, args, opts) {
  const r = await raw(client, name, args, opts);
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text, r };
}

async function fails(client, name, args, code) {
  const r = await raw(client, name, args);
  assert.equal(r.isError, true, `${name} should fail with ${code}`);
  assert.equal(r.structuredContent.error.code, code,
    `${name}: ${JSON.stringify(r.structuredContent.error)}`);
  assert.ok(r.structuredContent.error.message.length > 10);
  return r.structuredContent.error;
}

const samples = {};	// one result text per tool, for the report
function sample(tool, text) {
  if (!samples[tool]) samples[tool] = text;
}

let A, B, H, HB, cells;

before(async () => {
  A = await worker('client-a');
  const c = await ok(A, 'create_notebook', { path: NB });
  H = c.sc.notebook_handle;
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown', source: '# Report\nSome **bold** text.' },
    { op: 'insert', after: 'BOTTOM', source: 'x = 6 * 7\nprint("answer", x)' },
    { op: 'insert', after: 'BOTTOM', source: 'print("\\x1b[31mred\\x1b[0m")\nx' },
    { op: 'insert', after: 'BOTTOM', source: 'raise ValueError("boom")' },
  ], run: true });
  cells = e.sc.cells.map((c) => c.cell_id);
  assert.equal(cells.length, 4);
  // Let the runs finish (the kernel starts first).
  if (e.sc.run && e.sc.run.execution_id)
    await ok(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, timeout_secs: 40 });
});

after(async () => {
  const out = process.env.WORKER_SAMPLES;
  if (out) fs.writeFileSync(out, JSON.stringify(samples, null, 1));
  for (const c of [A, B]) if (c) await c.close().catch(() => {});
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
  await new Promise((r) => setTimeout(r, 500));
  const dir = path.dirname(SAN);
  const reports = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(SAN)));
  for (const f of reports) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    console.log(`# sanitizer report ${f}:\n${text.slice(0, 3000)}`);
    fs.rmSync(path.join(dir, f));
  }
  assert.equal(reports.length, 0, 'sanitizer reports');
});

test('search_cells: literal, regex, outputs, errors', async () => {
  let r = await ok(A, 'search_cells', { notebook_handle: H, query: 'print' });
  sample('search_cells', r.text);
  assert.equal(r.sc.matches.length, 2);
  assert.deepEqual(r.sc.matches[0], { ...r.sc.matches[0], cell_id: cells[1], line: 2, column: 1, in: 'source' });
  r = await ok(A, 'search_cells', { notebook_handle: H, query: 'x = [0-9]+ \\*', regex: true, in: 'source' });
  assert.equal(r.sc.matches.length, 1);
  assert.equal(r.sc.matches[0].column, 1);
  r = await ok(A, 'search_cells', { notebook_handle: H, query: 'answer 42', in: 'outputs' });
  assert.equal(r.sc.matches.length, 1);
  assert.equal(r.sc.matches[0].in, 'output');
  r = await ok(A, 'search_cells', { notebook_handle: H, query: 'red', in: 'outputs' });
  assert.equal(r.sc.matches[0].column, 1, 'ANSI stripped before matching');
  await fails(A, 'search_cells', { notebook_handle: H, query: 'a(' , regex: true }, 'invalid_argument');
  await fails(A, 'search_cells', { notebook_handle: H, query: '' }, 'invalid_argument');
});

test('search_cells: outputs of a file as Jupyter writes them', async () => {
  // Multi-line text as arrays, a traceback, text/plain beside an image:
  // what a notebook from disk holds, no kernel needed.
  const file = path.join(T, 'work', 'search-disk.ipynb');
  const code = (id, source, outputs) => ({ cell_type: 'code', id, metadata: {},
    execution_count: 1, source, outputs });
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [
    code('s1', ['import numpy\n', 'needle = 1'], [
      { output_type: 'stream', name: 'stdout', text: ['first line\n', 'a needle here\n'] }]),
    code('e1', 'boom()', [{ output_type: 'error', ename: 'NameError', evalue: 'x',
      traceback: ['\u001b[31mNameError\u001b[0m', 'needle in \u001b[1mtraceback\u001b[0m'] }]),
    code('r1', 'x', [
      { output_type: 'display_data', metadata: {}, data: { 'image/png': 'iVBORw0KGgo=' } },
      { output_type: 'execute_result', execution_count: 1, metadata: {},
        data: { 'text/plain': ['[1,\n', ' needle]'], 'text/html': ['<b>needle</b>'] } }]),
    { cell_type: 'markdown', id: 'm1', metadata: {}, source: 'no match' },
  ] }));
  const h = (await ok(A, 'connect_notebook', { path: file })).sc.notebook_handle;
  const r = await ok(A, 'search_cells', { notebook_handle: h, query: 'needle' });
  const got = r.sc.matches.map((m) => [m.cell_id, m.in, m.output_index ?? null, m.line, m.column]);
  assert.deepEqual(got, [
    ['s1', 'source', null, 2, 1],
    ['s1', 'output', 0, 2, 3],
    ['e1', 'output', 0, 2, 1],
    ['r1', 'output', 1, 2, 2],
  ]);
  assert.equal(r.sc.total, 4);
  assert.ok(r.sc.matches.every((m) => /^[0-9a-f]+$/.test(m.version)), 'each match names its version');
  const ic = await ok(A, 'search_cells', { notebook_handle: h, query: 'NAMEERROR', ignore_case: true, in: 'outputs' });
  assert.deepEqual(ic.sc.matches.map((m) => [m.cell_id, m.line, m.column]), [['e1', 1, 1]]);
  const re = await ok(A, 'search_cells', { notebook_handle: h, query: '^a n[e]+dle', regex: true, in: 'outputs' });
  assert.deepEqual(re.sc.matches.map((m) => [m.cell_id, m.match]), [['s1', 'a needle']]);
  // The outline of the same file: counts and previews, outputs not decoded.
  const o = await ok(A, 'inspect_notebook', { notebook_handle: h });
  assert.deepEqual(o.sc.cells.map((c) => [c.cell_id, c.cell_type, c.execution_count, c.outputs_count]),
    [['s1', 'code', 1, 1], ['e1', 'code', 1, 1], ['r1', 'code', 1, 2], ['m1', 'markdown', null, 0]]);
  assert.ok(o.sc.cells.every((c) => /^[0-9a-f]+$/.test(c.version) && c.outputs === undefined));
  assert.match(o.text, /\[2\] r1 code \[1\] v[0-9a-f]+ stale\([a-z_,]+\): x \(2 outputs\)\n/);
  assert.match(o.text, /\[0\] s1 code \[1\] v[0-9a-f]+ stale\([a-z_,]+\): import numpy … \(1 output\)\n/);
  assert.ok(o.sc.cells[0].stale.length > 0 && o.sc.cells[3].stale === undefined, 'stale as the daemon said');
  await ok(A, 'disconnect_notebook', { notebook_handle: h });
});

test('move_cells and clear_outputs', async () => {
  let r = await ok(A, 'move_cells', { notebook_handle: H, cell_ids: [cells[3]], after: 'TOP' });
  sample('move_cells', r.text);
  let o = await ok(A, 'inspect_notebook', { notebook_handle: H });
  assert.equal(o.sc.cells[0].cell_id, cells[3]);
  await ok(A, 'move_cells', { notebook_handle: H, cell_ids: [0], after: 'BOTTOM' });
  o = await ok(A, 'inspect_notebook', { notebook_handle: H });
  assert.deepEqual(o.sc.cells.map((c) => c.cell_id), cells);
  await fails(A, 'move_cells', { notebook_handle: H, cell_ids: ['nope'], after: 'TOP' }, 'cell_not_found');
  await fails(A, 'move_cells', { notebook_handle: H, cell_ids: [], after: 'TOP' }, 'invalid_argument');
  r = await ok(A, 'clear_outputs', { notebook_handle: H, cell_ids: [cells[2]] });
  sample('clear_outputs', r.text);
  o = await ok(A, 'inspect_notebook', { notebook_handle: H, cell_ids: [cells[2]] });
  assert.equal(o.sc.cells[0].outputs_count, 0);
  await fails(A, 'clear_outputs', { notebook_handle: H }, 'invalid_argument');
  await fails(A, 'clear_outputs', { notebook_handle: H, cell_ids: [99] }, 'cell_not_found');
});

test('kernel tools', async () => {
  let r = await ok(A, 'get_kernel_info', { notebook_handle: H });
  sample('get_kernel_info', r.text);
  assert.equal(r.sc.name, 'python3');
  assert.ok(['idle', 'busy', 'starting'].includes(r.sc.state));
  r = await ok(A, 'list_kernels', {});
  sample('list_kernels', r.text);
  assert.ok(r.sc.kernels.some((k) => k.name === 'python3'));
  await fails(A, 'select_kernel', { notebook_handle: H, kernel: 'no-such-kernel' }, 'kernel_unavailable');
  // interrupt: a long run ends interrupted.
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time\ntime.sleep(60)' }], run: true });
  const sleeper = e.sc.cells[0].cell_id;
  r = await ok(A, 'interrupt_kernel', { notebook_handle: H });
  sample('interrupt_kernel', r.text);
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, timeout_secs: 20 });
  assert.equal(g.sc.status, 'interrupted');
  r = await ok(A, 'restart_kernel', { notebook_handle: H });
  sample('restart_kernel', r.text);
  // The kernel's state as the daemon saw it when ready, not a constant.
  assert.equal(r.sc.state, 'idle');
  assert.match(r.text, /^kernel restarted and ready \(idle\);/);
  r = await ok(A, 'select_kernel', { notebook_handle: H, kernel: 'python3' });
  sample('select_kernel', r.text);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: sleeper }] });
});

test('export_notebook matches nbconvert on the important content', async () => {
  const run = await ok(A, 'run_cells', { notebook_handle: H, all: true, stop_on_error: false, wait_secs: 30 });
  await ok(A, 'get_results', { notebook_handle: H, execution_id: run.sc.execution_id, timeout_secs: 30 });
  await ok(A, 'save_notebook', { notebook_handle: H });
  for (const format of ['markdown', 'python', 'html']) {
    const r = await ok(A, 'export_notebook', { notebook_handle: H, format });
    sample(`export_notebook(${format})`, r.text.slice(0, 400));
    assert.equal(r.sc.truncated, false);
    const mine = r.sc.content;
    for (const s of ['x = 6 * 7', 'raise ValueError']) assert.ok(mine.includes(format === 'html' ? s.replace('"', '&quot;') : s), `${format}: ${s}`);
    if (format !== 'python') assert.ok(mine.includes('answer 42'), `${format} output`);
    const file = path.join(T, `export.${format}`);
    const w = await ok(A, 'export_notebook', { notebook_handle: H, format, path: file });
    assert.equal(fs.readFileSync(file, 'utf8'), mine);
    assert.equal(w.sc.path, file);
    const nbc = spawnSync('/usr/bin/python3', ['-m', 'nbconvert', '--to', format, '--stdout', NB],
      { encoding: 'utf8', timeout: 60000 });
    if (nbc.status !== 0) { console.log(`# nbconvert unavailable: ${nbc.stderr?.slice(0, 200)}`); continue; }
    // HTML: compare the visible text (nbconvert highlights code in spans).
    const vis = (h) => format !== 'html' ? h : h.replace(/<style[\s\S]*?<\/style>/g, '')
      .replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    const ref = vis(nbc.stdout);
    const mineVis = vis(mine);
    // Same important content: headings, every source line, text outputs.
    for (const line of format === 'python' ? ['x = 6 * 7', 'ValueError'] :
      ['x = 6 * 7', 'answer 42', 'ValueError', 'boom']) {
      assert.ok(ref.includes(line), `nbconvert ${format} has ${line}`);
      assert.ok(mineVis.includes(line), `export ${format} has ${line}`);
    }
    if (format === 'html') {
      assert.match(nbc.stdout, /<h1[^>]*>Report/);
      assert.match(nbc.stdout, /data:image|<img|<pre/);
      assert.match(mine, /<h1>Report<\/h1>/);
    } else if (format === 'markdown') {
      assert.ok(ref.includes('# Report') && mine.includes('# Report'));
    } else {
      assert.ok(ref.includes('# # Report') && mine.includes('# # Report'));
      assert.ok(/# In\[\d+\]:/.test(ref) && /# In\[\d+\]:/.test(mine));
    }
  }
  await fails(A, 'export_notebook', { notebook_handle: H, format: 'pdf' }, 'invalid_argument');
});

test('output shaping: PNG as image content, SVG as text, ANSI stripped, caps flagged', async () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source:
      'from IPython.display import Image, SVG, display\nimport base64\n' +
      `display(Image(data=base64.b64decode("${png}")))\n` +
      'display(SVG("<svg xmlns=\'http://www.w3.org/2000/svg\'><circle r=\'3\'/></svg>"))\n' +
      'print("\\x1b[1mbold\\x1b[0m")\nprint("y" * 20000)' }], run: true });
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, timeout_secs: 30 });
  sample('get_results', g.text.slice(0, 600));
  assert.equal(g.sc.status, 'done');
  const img = g.r.content.find((c) => c.type === 'image');
  assert.ok(img, 'an image content block');
  assert.equal(img.mimeType, 'image/png');
  assert.equal(img.data, png);
  assert.match(g.text, /\[image\/png 1x1, cell /);
  assert.match(g.text, /<svg/);
  assert.match(g.text, /\nbold\n/);
  assert.doesNotMatch(g.text, /\x1b/);
  assert.equal(g.sc.truncated, true, 'the 20,000-char line is cut to the cell cap');
  assert.match(g.text, /characters cut; get_results full_output/);
  const full = await ok(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, full_output: true });
  assert.equal(full.sc.truncated, false);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: e.sc.cells[0].cell_id }] });
});

test('comments: add, reply, resolve, in metadata and the resource', async () => {
  let r = await ok(A, 'add_comment', { notebook_handle: H, cell_id: cells[1], body: 'Why 42?' });
  sample('add_comment', r.text);
  const tid = r.sc.thread_id;
  r = await ok(A, 'reply_comment', { notebook_handle: H, thread_id: tid, body: 'Because.', author: 'deep-thought' });
  sample('reply_comment', r.text);
  assert.equal(r.sc.thread.comments.length, 2);
  r = await ok(A, 'resolve_comment', { notebook_handle: H, thread_id: tid });
  sample('resolve_comment', r.text);
  assert.equal(r.sc.thread.resolved, true);
  const n = await ok(A, 'add_comment', { notebook_handle: H, body: 'Notebook-level note' });
  assert.equal(n.sc.thread.anchor.notebook, true);
  await fails(A, 'reply_comment', { notebook_handle: H, thread_id: 't_nope', body: 'x' }, 'invalid_argument');
  await fails(A, 'add_comment', { notebook_handle: H, cell_id: 'nope', body: 'x' }, 'cell_not_found');
  const res = await A.readResource({ uri: `runtimed://sessions/${H}/comments` });
  const threads = JSON.parse(res.contents[0].text).threads;
  assert.equal(threads.length, 2);
  await ok(A, 'save_notebook', { notebook_handle: H });
  const saved = JSON.parse(fs.readFileSync(NB, 'utf8'));
  assert.equal(saved.metadata.runtimed.comments.length, 2);
});

test('two clients: cursors and subscriptions see each other', async () => {
  B = await worker('client-b');
  HB = (await ok(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
  const base = await ok(A, 'inspect_notebook', { notebook_handle: H });
  assert.equal(base.sc.outcome, 'baseline');
  const same = await ok(A, 'inspect_notebook', { notebook_handle: H, after: base.sc.cursor });
  assert.equal(same.sc.outcome, 'unchanged');
  sample('inspect_notebook(unchanged)', same.text);

  const updates = [];
  A.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
  const uri = `runtimed://sessions/${H}/cells`;
  await A.subscribeResource({ uri });

  // A waits; B edits; A's wait ends with what changed.
  const wait = ok(A, 'inspect_notebook', { notebook_handle: H, after: base.sc.cursor, timeout_secs: 20 });
  await new Promise((r) => setTimeout(r, 300));
  const ins = await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
    { op: 'insert', after: 'TOP', source: 'from_b = 1' }] });
  const w = await wait;
  sample('inspect_notebook(changed)', w.text);
  assert.equal(w.sc.outcome, 'changed');
  assert.ok(w.sc.changes.cell_ids.includes(ins.sc.cells[0].cell_id));
  assert.ok(w.sc.changes.kinds.includes('content'));
  await new Promise((r) => setTimeout(r, 400));
  assert.ok(updates.some((u) => u.uri === uri), 'A got notifications/resources/updated');

  // A timed-out wait; a cursor never issued; one from another notebook.
  const t0 = Date.now();
  const to = await ok(A, 'inspect_notebook', { notebook_handle: H, after: w.sc.cursor, timeout_secs: 1 });
  assert.equal(to.sc.outcome, 'timed_out');
  assert.ok(Date.now() - t0 >= 900);
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: 'c1.1.2.0000000000000000' }, 'invalid_argument');
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: 'garbage' }, 'invalid_argument');
  // B's cursors are B's session's: never issued for A.
  const bc = await ok(B, 'inspect_notebook', { notebook_handle: HB });
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: bc.sc.cursor }, 'invalid_argument');
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: w.sc.cursor, timeout_secs: 51 }, 'invalid_argument');
  await A.unsubscribeResource({ uri });
  await ok(B, 'edit_cells', { notebook_handle: HB, edits: [{ op: 'delete', cell_id: ins.sc.cells[0].cell_id }] });
});

test('waits: 8 permits, the ninth is busy; cancel ends the wait not the run; progress', async () => {
  // Eight waits hold every permit (again if an autosave ended one early).
  let cur, ctl, waits, settled;
  for (let attempt = 0; attempt < 4; attempt++) {
    cur = (await ok(A, 'inspect_notebook', { notebook_handle: H })).sc.cursor;
    ctl = [];
    waits = [];
    settled = 0;
    for (let i = 0; i < 8; i++) {
      const ac = new AbortController();
      ctl.push(ac);
      waits.push(raw(A, 'inspect_notebook', { notebook_handle: H, after: cur, timeout_secs: 30 },
        { signal: ac.signal }).then((r) => { settled++; return r; }, (e) => e));
    }
    await new Promise((r) => setTimeout(r, 300));
    if (settled === 0) break;
    for (const ac of ctl) ac.abort('retry');
    await Promise.all(waits);
  }
  assert.equal(settled, 0, 'eight waits in progress');
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: cur, timeout_secs: 5 }, 'busy');
  await fails(A, 'get_results', { notebook_handle: H, execution_id: 'x', timeout_secs: 5 }, 'busy');
  // A wait that does not wait (timeout 0) needs no permit.
  await ok(A, 'inspect_notebook', { notebook_handle: H, after: cur });
  for (const ac of ctl) ac.abort('test cancels');
  const res = await Promise.all(waits);
  for (const r of res) assert.ok(r instanceof Error, 'cancelled requests get no result');
  await new Promise((r) => setTimeout(r, 200));
  // Permits are back; progress comes with a token.
  // (the daemon's autosave is a change too: wait again past it)
  let progress, p;
  for (let i = 0; i < 4; i++) {
    progress = [];
    const cur2 = (await ok(A, 'inspect_notebook', { notebook_handle: H })).sc.cursor;
    p = await ok(A, 'inspect_notebook', { notebook_handle: H, after: cur2, timeout_secs: 3 },
      { onprogress: (n) => progress.push(n.progress) });
    if (p.sc.outcome === 'timed_out') break;
    assert.deepEqual(p.sc.changes.kinds, ['saves']);
  }
  assert.equal(p.sc.outcome, 'timed_out', JSON.stringify(p.sc.changes));
  assert.ok(progress.length >= 2, `progress ${progress}`);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i] > progress[i - 1]);

  // Cancelling get_results ends the wait, never the run.
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time\ntime.sleep(2)\nprint("survived")' }], run: true });
  const ac = new AbortController();
  const g = raw(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, timeout_secs: 30 },
    { signal: ac.signal }).catch((x) => x);
  await new Promise((r) => setTimeout(r, 200));
  ac.abort();
  assert.ok(await g instanceof Error);
  const done = await ok(A, 'get_results', { notebook_handle: H, execution_id: e.sc.run.execution_id, timeout_secs: 20 });
  assert.equal(done.sc.status, 'done');
  assert.match(done.text, /survived/);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: e.sc.cells[0].cell_id }] });
});

test('resources: list, templates, read, watches 128/129', async () => {
  const list = await A.listResources();
  assert.ok(list.resources.some((r) => r.uri === 'runtimed://notebooks'));
  assert.ok(list.resources.some((r) => r.uri === `runtimed://sessions/${H}/cells`));
  const t = await A.listResourceTemplates();
  assert.equal(t.resourceTemplates.length, 3);
  const rd = JSON.parse((await A.readResource({ uri: `runtimed://sessions/${H}/cells` })).contents[0].text);
  assert.equal(rd.cells.length, 4);
  const one = JSON.parse((await A.readResource({ uri: `runtimed://sessions/${H}/cells/${cells[1]}` })).contents[0].text);
  assert.equal(one.cell.cell_id, cells[1]);
  const nbs = JSON.parse((await A.readResource({ uri: 'runtimed://notebooks' })).contents[0].text);
  assert.ok(nbs.rooms.length >= 1);
  await assert.rejects(A.readResource({ uri: 'runtimed://sessions/nbh_nope/cells' }), /-32002|not found/i);
  await assert.rejects(A.readResource({ uri: 'file:///etc/passwd' }), /-32002|not found/i);
  for (let i = 0; i < 128; i++)
    await A.subscribeResource({ uri: `runtimed://sessions/${H}/cells/w${i}` });
  await assert.rejects(A.subscribeResource({ uri: `runtimed://sessions/${H}/cells/w128` }), /128/);
  await A.unsubscribeResource({ uri: `runtimed://sessions/${H}/cells/w0` });
  await A.subscribeResource({ uri: `runtimed://sessions/${H}/cells/w128` });
  for (let i = 1; i <= 128; i++)
    await A.unsubscribeResource({ uri: `runtimed://sessions/${H}/cells/w${i}` });
});

test('error codes', async () => {
  await fails(A, 'inspect_notebook', {}, 'invalid_notebook_target');
  await fails(A, 'inspect_notebook', { notebook_handle: 'nbh_bogus' }, 'invalid_notebook_target');
  await fails(A, 'inspect_notebook', { notebook_id: '00000000-0000-0000-0000-000000000000' }, 'not_attached');
  await fails(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'replace', cell_id: cells[1], old_text: 'nothere', new_text: 'x' }] }, 'no_match');
  await fails(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'replace', cell_id: cells[1], old_text: 'x', new_text: 'y' }] }, 'ambiguous_match');
  await fails(A, 'get_results', { notebook_handle: H, execution_id: 'no-such-run' }, 'execution_not_found');
  await fails(A, 'connect_notebook', { path: path.join(T, 'missing.ipynb') }, 'notebook_unavailable');
  const extra = (await ok(A, 'connect_notebook', { path: NB })).sc.notebook_handle;
  await ok(A, 'disconnect_notebook', { notebook_handle: extra });
  await fails(A, 'inspect_notebook', { notebook_handle: extra }, 'attachment_expired');
  // The file changed on disk behind the room's back.
  const d = JSON.parse(fs.readFileSync(NB, 'utf8'));
  d.metadata.touched = true;
  fs.writeFileSync(NB, JSON.stringify(d));
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'edit', cell_id: cells[1], metadata: { k: 1 } }] });
  const s = await raw(A, 'save_notebook', { notebook_handle: H });
  if (s.isError) assert.equal(s.structuredContent.error.code, 'file_changed_on_disk');
  await ok(A, 'save_notebook', { notebook_handle: H, force: true });
  // A dying kernel.
  const k = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import os\nos._exit(1)' }], run: true });
  const kd = await ok(A, 'get_results', { notebook_handle: H, execution_id: k.sc.run.execution_id, timeout_secs: 30 });
  assert.equal(kd.sc.status, 'kernel_died');
  // The run's own result says why and what to do (issue 34).
  assert.match(kd.text, /^kernel died: exited with status 1\. Call restart_kernel/m);
  await ok(A, 'restart_kernel', { notebook_handle: H });
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: k.sc.cells[0].cell_id }] });
});

test('attachments 127/128/129', async () => {
  // A holds H; B holds HB (another worker: its own registry).
  const hs = [];
  const count = (sc) => sc.attachments.length + (sc.attachments_omitted || 0);
  const have = count((await ok(A, 'list_notebooks', {})).sc);
  for (let i = have; i < 128; i++)
    hs.push((await ok(A, 'connect_notebook', { path: NB })).sc.notebook_handle);
  assert.equal(count((await ok(A, 'list_notebooks', {})).sc), 128);
  await fails(A, 'connect_notebook', { path: NB }, 'attachment_limit');
  await fails(A, 'create_notebook', {}, 'attachment_limit');
  await ok(A, 'disconnect_notebook', { notebook_handle: hs.pop() });
  hs.push((await ok(A, 'connect_notebook', { path: NB })).sc.notebook_handle);
  for (const h of hs) await ok(A, 'disconnect_notebook', { notebook_handle: h });
  await ok(A, 'inspect_notebook', { notebook_handle: H });
});

test('a replaced daemon expires every handle (and their watches)', async () => {
  const updates = [];
  B.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
  const uri = `runtimed://sessions/${HB}/cells`;
  await B.subscribeResource({ uri });
  // The daemon of this private socket, by its own word (never pgrep).
  const st = spawnSync(DAEMON, ['status'], { env, encoding: 'utf8', timeout: 10000 });
  const pid = Number(/^pid (\d+)/m.exec(st.stdout)[1]);
  assert.ok(pid > 1);
  const t0 = Date.now();
  process.kill(pid, 'SIGKILL');
  let code;
  for (;;) {
    const r = await raw(B, 'inspect_notebook', { notebook_handle: HB });
    code = r.isError ? r.structuredContent.error.code : 'ok';
    if (code === 'attachment_expired' || Date.now() - t0 > 5000) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  const ms = Date.now() - t0;
  console.log(`# daemon SIGKILL -> attachment_expired in ${ms} ms`);
  assert.equal(code, 'attachment_expired');
  assert.ok(ms <= 1000, `expired after ${ms} ms`);
  const fin = updates.find((u) => u.uri === uri && u._meta && u._meta['io.runtimed/attachmentExpired']);
  assert.ok(fin, `final update: ${JSON.stringify(updates)}`);
  // The next connect starts a new daemon; the old handle never names it.
  const h2 = (await ok(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
  assert.notEqual(h2, HB);
  await fails(B, 'inspect_notebook', { notebook_handle: HB }, 'attachment_expired');
});
