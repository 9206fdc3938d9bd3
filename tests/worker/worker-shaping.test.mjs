// SPDX-License-Identifier: ISC
// worker-shaping.test.mjs: what a result puts first and how much of it
// there is, with the real runtimed-mcp-worker on stdio, the official MCP
// SDK client, the real daemon and ipykernel (docs/decisions/015).
//   - a run of several cells names its outcome, then the failing cell in
//     full, then the last cell; cells that succeeded are summarised and
//     not_run cells are one line; structuredContent keeps the outputs;
//   - a cut keeps the head and the tail (the traceback), says how much it
//     cut and which call returns the rest, and counts characters;
//   - caps hold in every mode: no result over 12,000 characters unless
//     the caller raised a cap.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-node.sh).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld, MKPNG } from './worker-world.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wshape');


const LIMIT = 12000;	// no result over this unless the caller raised a cap
const chars = (s) => [...s].length;
let A, H;

async function ok(name, args) {
  const r = await A.callTool({ name, arguments: args }, undefined, { timeout: 90000 });
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text };
}

// Insert cells at the bottom; their ids in order.
async function insert(sources) {
  const e = await ok('edit_cells', { notebook_handle: H, edits: sources.map((source) =>
    ({ op: 'insert', after: 'BOTTOM', source })) });
  return e.sc.cells.map((c) => c.cell_id);
}

async function run(ids, extra = {}) {
  return ok('run_cells', { notebook_handle: H, cell_ids: ids, wait_secs: 50, ...extra });
}

before(async () => {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env, stderr: 'pipe' });
  A = new Client({ name: 'shaping', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await A.connect(transport, { timeout: 30000 });
  H = (await ok('create_notebook', {})).sc.notebook_handle;
  // The kernel starts first.
  const [id] = await insert(['1']);
  await run([id]);
});

after(async () => {
  if (A) await A.close().catch(() => {});
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

test('a failed run: outcome, the failing cell in full, summaries, not_run in one line', async () => {
  const ids = await insert([
    ...[1, 2, 3, 4, 5].map((k) => `for i in range(40):\n    print("ok${k} line", i)`),
    'x = 1\nraise ValueError("boom in the middle")',
    ...[7, 8, 9].map((k) => `print("never${k}")`),
  ]);
  const r = await run(ids);
  assert.equal(r.sc.status, 'error');
  const lines = r.text.split('\n');
  // The outcome first, naming the failing cell.
  assert.match(lines[0], /error/);
  assert.ok(lines[0].includes(ids[5]), `first line names the failing cell: ${lines[0]}`);
  // The failing cell in full: its source, the error, the traceback.
  assert.match(r.text, /raise ValueError\("boom in the middle"\)/);
  assert.match(r.text, /ValueError: boom in the middle/);
  assert.match(r.text, /Traceback|most recent call/);
  // Cells that succeeded: counted and named, at most a line each.
  for (const id of ids.slice(0, 5)) assert.ok(r.text.includes(id), `ok cell ${id} named`);
  assert.match(r.text, /\b5 ok\b|ok: 5|5 cells? ok/);
  assert.ok(!r.text.includes('ok3 line 39'), 'ok cells are not printed in full');
  // Each by its first lines (issue 34: a table's header alone says
  // nothing), then how many more.
  assert.ok((r.text.match(/ok\d line/g) || []).length <= 5 * 8, 'a few lines each at most');
  assert.match(r.text, /\[\.\.\. 32 more lines\]/);
  // not_run: one line for all three.
  const nr = lines.slice(1).filter((l) => /not_run/.test(l));
  assert.equal(nr.length, 1, `not_run in one line: ${nr.join(' | ')}`);
  assert.match(nr[0], /3/);
  // The failing cell comes before the summaries.
  assert.ok(r.text.indexOf('ValueError: boom') < r.text.indexOf(ids[0]) ||
    lines[0].includes(ids[0]) === false, 'the error comes first');
  // structuredContent keeps every cell and the outputs.
  assert.equal(r.sc.cells.length, 9);
  assert.deepEqual(r.sc.cells.map((c) => c.status),
    ['ok', 'ok', 'ok', 'ok', 'ok', 'error', 'not_run', 'not_run', 'not_run']);
  assert.match(r.sc.cells[2].outputs[0].text, /ok3 line 39/);
  assert.equal(r.sc.cells[5].outputs[0].ename, 'ValueError');
  // get_results shapes the same run the same way.
  const g = await ok('get_results', { notebook_handle: H, execution_id: r.sc.execution_id });
  assert.equal(g.text, r.text);
});

test('a run that goes on past errors ends with the last cell in full', async () => {
  const ids = await insert([
    'print("first")', 'raise KeyError("k")',
    'for i in range(30):\n    print("tail line", i)']);
  const r = await run(ids, { stop_on_error: false });
  assert.match(r.text.split('\n')[0], /error/);
  assert.match(r.text, /KeyError/);
  assert.match(r.text, /tail line 0\n/);
  assert.match(r.text, /tail line 29/);
  assert.ok(r.text.indexOf('KeyError') < r.text.indexOf('tail line 29'));
});

test('a cut keeps the head and the traceback, counts characters, names the call', async () => {
  const [id] = await insert([
    'for i in range(5000):\n    print("log line %05d" % i)\nraise RuntimeError("at the end")']);
  const r = await run([id]);
  assert.equal(r.sc.status, 'error');
  assert.ok(chars(r.text) <= LIMIT, `text ${chars(r.text)} chars`);
  assert.match(r.text, /log line 00000/, 'the head');
  assert.match(r.text, /log line 04999/, 'the end of the log');
  assert.match(r.text, /RuntimeError: at the end/, 'the traceback');
  const m = /\[\.\.\. ([\d,]+) characters cut[^\]]*\]/.exec(r.text);
  assert.ok(m, 'says how much was cut');
  assert.match(m[0], /get_results/);
  assert.match(m[0], /full_output/);
  assert.equal(r.sc.truncated, true);
  assert.equal(r.sc.cells[0].truncated, true);
  // The rest, on demand.
  const full = await ok('get_results', { notebook_handle: H, execution_id: r.sc.execution_id, full_output: true });
  assert.equal(full.sc.truncated, false);
  assert.match(full.sc.cells[0].outputs[0].text, /log line 02500/);

  // Characters, not bytes; never inside a sequence.
  const [uid] = await insert(['print("\\u00e9" * 30000)']);
  const u = await run([uid]);
  const kept = u.sc.cells[0].outputs[0].text;
  assert.ok(!kept.includes('\ufffd'), 'no broken sequence');
  const n = (kept.match(/\u00e9/g) || []).length;
  assert.ok(n > 4000 && n <= 8000, `${n} characters kept`);
  assert.ok(chars(u.text) <= LIMIT);
});

test('caps hold in every mode: inspect_notebook output_mode full', async () => {
  const [id] = await insert(['print("z" * 60000)']);
  await run([id]);
  for (const mode of ['text', 'full']) {
    const r = await ok('inspect_notebook', { notebook_handle: H, view: 'outputs',
      cell_ids: [id], output_mode: mode, max_output_chars: 1000 });
    const z = JSON.stringify(r.sc.cells[0].outputs).match(/z/g).length;
    assert.ok(z <= 1000, `${mode}: ${z} characters of output kept`);
    assert.ok(chars(r.text) <= 1600, `${mode}: text ${chars(r.text)}`);
    assert.equal(r.sc.cells[0].truncated, true);
    assert.match(r.text, /characters cut/);
  }
  // Many bulky cells: the result cap, not 100 cells' worth.
  const bulky = await insert(Array.from({ length: 12 }, (_, k) => `print("${k}" * 5000)`));
  await run(bulky);
  for (const mode of ['text', 'full']) {
    const r = await ok('inspect_notebook', { notebook_handle: H, view: 'all',
      output_mode: mode, count: 100, max_output_chars: 5000 });
    assert.ok(chars(r.text) <= LIMIT, `${mode}: text ${chars(r.text)}`);
    assert.ok(chars(JSON.stringify(r.sc)) <= LIMIT, `${mode}: structured ${chars(JSON.stringify(r.sc))}`);
    assert.match(r.text, /start=\d+|start and count/);
  }
  // A run of bulky cells: within the result cap too.
  const g = await run(bulky, { stop_on_error: false });
  assert.ok(chars(g.text) <= LIMIT, `run text ${chars(g.text)}`);
  assert.ok(chars(JSON.stringify(g.sc)) <= LIMIT, `run structured ${chars(JSON.stringify(g.sc))}`);
});

test('a run of many cells: structuredContent within the cap too', async () => {
  const ids = await insert(Array.from({ length: 150 }, (_, k) => k === 70 ?
    'raise ValueError("cell seventy")' : `print("cell ${k} says " + "y" * 60)`));
  const r = await run(ids, { stop_on_error: false });
  const size = chars(JSON.stringify(r.sc));
  assert.ok(size <= LIMIT, `structured ${size} characters`);
  assert.ok(chars(r.text) <= LIMIT, `text ${chars(r.text)}`);
  assert.equal(r.sc.truncated, true);
  // The failing cell keeps its error; the rest are there or counted.
  const bad = r.sc.cells.find((c) => c.cell_id === ids[70]);
  assert.ok(bad && bad.outputs.some((o) => o.ename === 'ValueError'), 'the failing cell whole');
  assert.equal(r.sc.cells.length + (r.sc.cells_omitted || 0), 150);
  assert.ok(r.sc.cells.some((c) => c.outputs_omitted) || r.sc.cells_omitted > 0, `cells shortened or left out: ${r.sc.cells.length} ${r.sc.cells_omitted} ${JSON.stringify(r.sc.cells[0])}`);
  assert.match(r.text, /get_results full_output:true has every cell/);
  // Every cell, on demand.
  const full = await ok('get_results', { notebook_handle: H, execution_id: r.sc.execution_id, full_output: true });
  assert.equal(full.sc.cells.length, 150);
  assert.match(full.sc.cells[149].outputs[0].text, /cell 149 says/);
});

test('list_notebooks: within the caps however many notebooks are open', async () => {
  for (let k = 0; k < 100; k++) await ok('create_notebook', {});
  const r = await ok('list_notebooks', {});
  assert.ok(chars(r.text) <= LIMIT, `text ${chars(r.text)}`);
  assert.ok(chars(JSON.stringify(r.sc)) <= LIMIT, `structured ${chars(JSON.stringify(r.sc))}`);
  assert.ok(r.sc.notebooks_omitted > 0, 'the rest are counted');
  assert.ok(r.sc.notebooks.length + r.sc.notebooks_omitted >= 101);
  assert.match(r.text, /more not listed/);
});

test('search_cells: within the result cap unless max_matches is named', async () => {
  const [id] = await insert([Array.from({ length: 150 }, (_, k) =>
    `needle_${k} = "${'w'.repeat(150)}"`).join('\n')]);
  const r = await ok('search_cells', { notebook_handle: H, query: 'needle_', in: 'source' });
  assert.ok(chars(r.text) <= LIMIT, `text ${chars(r.text)}`);
  assert.ok(chars(JSON.stringify(r.sc)) <= LIMIT, `structured ${chars(JSON.stringify(r.sc))}`);
  assert.equal(r.sc.truncated, true);
  assert.ok(r.sc.matches.length < 100 && r.sc.total === 150, `${r.sc.matches.length} of ${r.sc.total}`);
  assert.match(r.text, /result cap/);
  const all = await ok('search_cells', { notebook_handle: H, query: 'needle_', in: 'source', max_matches: 150 });
  assert.equal(all.sc.matches.length, 150);
  await ok('edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: id }] });
});

test('a small notebook is listed by connect; a large one is counted', async () => {
  const c = await ok('connect_notebook', { notebook_id: (await ok('inspect_notebook', { notebook_handle: H })).sc.notebook_id });
  assert.ok(chars(c.text) <= 800, `connect text ${chars(c.text)}`);
  assert.match(c.text, /inspect_notebook/);
  assert.equal(c.sc.cells.length, 25, 'structuredContent keeps the summaries');
});

// Decision 043: a client that does not ask for structuredContent (Claude
// Code and Codex hand their model that JSON instead of the text when it
// is there) gets plain results: text and images, no output schemas.
test('a client that did not ask for structure gets text, not structuredContent', async () => {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env, stderr: 'pipe' });
  const B = new Client({ name: 'plain', version: '0' });
  await B.connect(transport, { timeout: 30000 });
  try {
    const { tools } = await B.listTools();
    assert.ok(tools.length >= 28, `${tools.length} tools`);
    for (const t of tools) assert.equal(t.outputSchema, undefined, `${t.name} has no outputSchema`);
    const c = await B.callTool({ name: 'create_notebook', arguments: {} });
    assert.equal(c.structuredContent, undefined);
    const h = /nbh_[0-9a-f]+/.exec(c.content[0].text)[0];
    const e = await B.callTool({ name: 'edit_cells', arguments: { notebook_handle: h,
      edits: [{ op: 'insert', after: 'BOTTOM', source: 'raise KeyError("k")' }] } });
    assert.equal(e.structuredContent, undefined);
    const id = /insert (\S+)/.exec(e.content[0].text)[1];
    const r = await B.callTool({ name: 'run_cells', arguments: { notebook_handle: h,
      cell_ids: [id], wait_secs: 50 } }, undefined, { timeout: 90000 });
    assert.equal(r.structuredContent, undefined);
    assert.equal(r.isError, false);
    assert.match(r.content[0].text.split('\n')[0], /error; cell \S+ failed \(KeyError: 'k'\)/);
    // A typed error reads "code: message", its other fields in the text.
    const bad = await B.callTool({ name: 'get_results', arguments: { notebook_handle: h,
      execution_id: 'e', timeout_secs: -1 } });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent, undefined);
    assert.match(bad.content[0].text, /^invalid_argument: /);
    // One call may still ask for it (_meta), as a stateless client would.
    const s = await B.callTool({ name: 'list_kernels', arguments: {},
      _meta: { 'io.runtimed/structured': true } });
    assert.ok(s.structuredContent && Array.isArray(s.structuredContent.kernels));
  } finally {
    await B.close().catch(() => {});
  }
});

// Issue 34: what a plain client's model reads of a traceback and of a
// run it follows.
async function plainClient(name) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env, stderr: 'pipe' });
  const C = new Client({ name, version: '0' });
  await C.connect(transport, { timeout: 30000 });
  const call = async (tool, args) => {
    const r = await C.callTool({ name: tool, arguments: args }, undefined, { timeout: 90000 });
    const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    assert.equal(r.isError, false, `${tool}: ${text}`);
    return { text, images: r.content.filter((c) => c.type === 'image').length };
  };
  const h = /nbh_[0-9a-f]+/.exec((await call('create_notebook', {})).text)[0];
  const insert = async (source) =>
    /insert (\S+)/.exec((await call('edit_cells', { notebook_handle: h,
      edits: [{ op: 'insert', after: 'BOTTOM', source }] })).text)[1];
  return { C, call, h, insert };
}

test('a traceback keeps the user\'s frames and folds the library\'s', async () => {
  const { C, call, h, insert } = await plainClient('tb');
  try {
    // json.loads raises from three frames inside the standard library.
    const id = await insert('import json\ndef parse(s):\n    return json.loads(s)\nparse("{")');
    const r = await call('run_cells', { notebook_handle: h, cell_ids: [id], wait_secs: 50 });
    assert.match(r.text.split('\n')[0], /failed \(JSONDecodeError: /);
    assert.match(r.text, /parse\("\{"\)/, 'the user\'s frame');
    assert.match(r.text, /return json\.loads\(s\)/, 'the user\'s function');
    assert.match(r.text, /\[\d+ library frames? folded \(json\); get_results full_output:true shows them\]/);
    assert.doesNotMatch(r.text, /Traceback \(most recent call last\)/, 'IPython\'s header says nothing the last line does not');
    assert.match(r.text, /JSONDecodeError: Expecting property name/, 'the last line');
    assert.doesNotMatch(r.text, /json\/decoder\.py/, 'no library frame');
    assert.doesNotMatch(r.text, /\x1b\[/, 'no ANSI');
    const eid = /execution_id (\S+):/.exec(r.text)[1];
    const f = await call('get_results', { notebook_handle: h, execution_id: eid, full_output: true });
    assert.match(f.text, /json\/decoder\.py/, 'full_output has every frame');
  } finally {
    await C.close().catch(() => {});
  }
});

test('a poll returns what is new since this session\'s last read, never an image twice', async () => {
  const { C, call, h, insert } = await plainClient('poll');
  try {
    // The kernel first, so the run below is timed by its cells alone.
    const warm = await insert('1');
    await call('run_cells', { notebook_handle: h, cell_ids: [warm], wait_secs: 50 });
    const img = await insert(`${MKPNG}\ndisplay(Image(data=png(40, 30)))`);
    const tick = await insert('import time\nfor i in range(6):\n    print("tick", i, flush=True)\n    time.sleep(0.5)');
    const r = await call('run_cells', { notebook_handle: h, cell_ids: [img, tick], wait_secs: 1.5 });
    assert.equal(r.images, 1, 'the run shows the image');
    const eid = /execution_id (\S+):/.exec(r.text)[1];
    const seen = (r.text.match(/tick \d/g) || []);
    const g = await call('get_results', { notebook_handle: h, execution_id: eid, timeout_secs: 30 });
    assert.match(g.text.split('\n')[0], /: done; 2 ok/);
    assert.equal(g.images, 0, 'no image already sent');
    for (const t of seen) assert.ok(!g.text.includes(t), `${t} is not sent again`);
    assert.match(g.text, /tick 5/);
    assert.match(g.text, new RegExp(`unchanged since your last read: ${img}`));
    // Nothing new: a few hundred characters.
    const again = await call('get_results', { notebook_handle: h, execution_id: eid });
    assert.ok(chars(again.text) < 400, `${chars(again.text)}: ${again.text}`);
    assert.doesNotMatch(again.text, /tick/);
    // The whole run is one argument away.
    const full = await call('get_results', { notebook_handle: h, execution_id: eid, full_output: true });
    assert.match(full.text, /tick 0[\s\S]*tick 5/);
    assert.equal(full.images, 1);
  } finally {
    await C.close().catch(() => {});
  }
});

test('a huge output: the whole cut is said, full output is bounded and read by lines', async () => {
  const { C, call, h, insert } = await plainClient('huge');
  try {
    // 7,000 lines of 100 characters: 700,000, past the 500,000 the
    // daemon keeps of one stream (its head and tail).
    const id = await insert('for i in range(7000):\n    print(f"{i:06d} " + "y" * 92)');
    const r = await call('run_cells', { notebook_handle: h, cell_ids: [id], wait_secs: 50 });
    const m = /\[\.\.\. (\d+) characters cut \((\d+) of them not kept by runtimed: the cell printed (\d+)/.exec(r.text);
    assert.ok(m, r.text.slice(0, 600));
    assert.equal(Number(m[3]), 700000, 'what the cell printed');
    assert.equal(Number(m[2]), 200000, 'what the daemon did not keep');
    assert.ok(Number(m[1]) > 690000 && Number(m[1]) < 700000, m[1]);
    assert.match(r.text, /full_output:true returns what was kept/);
    const eid = /execution_id (\S+):/.exec(r.text)[1];
    const f = await call('get_results', { notebook_handle: h, execution_id: eid, full_output: true });
    assert.ok(chars(f.text) < 101000, `full output bounded: ${chars(f.text)}`);
    assert.match(f.text, /start_line and end_line reads a range of lines/);
    const g = await call('get_results', { notebook_handle: h, execution_id: eid, full_output: true,
      start_line: 101, end_line: 103 });
    assert.match(g.text, /\[lines 101-103 of \d+\]\n000100 y+\n000101 y+\n000102 y+$/);
    assert.doesNotMatch(g.text, /000103/);
    const bad = await C.callTool({ name: 'get_results', arguments: { notebook_handle: h,
      execution_id: eid, start_line: 5 } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /^invalid_argument: start_line and end_line read a range/);
  } finally {
    await C.close().catch(() => {});
  }
});
