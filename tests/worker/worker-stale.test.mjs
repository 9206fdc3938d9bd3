// SPDX-License-Identifier: ISC
// worker-stale.test.mjs: staleness that follows dependencies (decision
// 072) through the real worker, daemon and ipykernel: an edited cell
// makes the cells reading its names upstream_changed, transitively; a
// definer run again makes the cells below that read it stale;
// run_cells stale:true runs exactly the stale cells in notebook order,
// picked by the daemon (the worker reads no notebook for all or stale);
// edit_cells warns of names no cell defines and never refuses.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR.

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld } from './worker-world.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wstale');
const NB = path.join(T, 'work', 'stale.ipynb');
fs.mkdirSync(path.dirname(NB));

let A, H, ids;

function textOf(r) {
  return r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function raw(name, args) {
  return A.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
}

async function ok(name, args) {
  const r = await raw(name, args);
  assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
  return { sc: r.structuredContent, text: textOf(r) };
}

async function outline() {
  const r = await ok('inspect_notebook', { notebook_handle: H, view: 'outline' });
  return { text: r.text, cells: Object.fromEntries(r.sc.cells.map((c) => [c.cell_id, c])) };
}

async function waitRun(r) {
  if (r.sc.status === 'done') return r;
  const g = await ok('get_results', { notebook_handle: H,
    execution_id: r.sc.execution_id, timeout_secs: 40 });
  assert.equal(g.sc.status, 'done', g.text);
  return g;
}

async function run(cellIds) {
  return waitRun(await ok('run_cells', { notebook_handle: H, cell_ids: cellIds,
    wait_secs: 30 }));
}

before(async () => {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  A = new Client({ name: 'stale-test', version: '1' },
    { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await A.connect(transport, { timeout: 30000 });
  const c = await ok('create_notebook', { path: NB });
  H = c.sc.notebook_handle;
  const e = await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import math\nbase = 10' },
    { op: 'insert', after: 'BOTTOM', source: 'scaled = base * 2\nprint(scaled)' },
    { op: 'insert', after: 'BOTTOM', source: 'total = scaled + abs(-1)\ntotal' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown', source: '# other' },
    { op: 'insert', after: 'BOTTOM', source: 'other = 7' },
    { op: 'insert', after: 'BOTTOM', source: 'print(f"{other + 1}")' },
  ] });
  ids = e.sc.cells.map((x) => x.cell_id);
});

after(async () => {
  if (A) await A.close().catch(() => {});
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

test('an edit upstream makes its readers stale, transitively, and stale:true runs them', async () => {
  await waitRun(await ok('run_cells', { notebook_handle: H, all: true, wait_secs: 30 }));
  let o = await outline();
  for (const id of ids)
    assert.equal(o.cells[id].stale, undefined, `${id}: ${JSON.stringify(o.cells[id])}`);

  // Edit cell 0 after its run: 1 reads base, 2 reads scaled (from 1).
  await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'replace', cell_id: ids[0], old_text: '10', new_text: '20' }] });
  o = await outline();
  assert.deepEqual(o.cells[ids[0]].stale, ['source_changed']);
  assert.deepEqual(o.cells[ids[1]].stale, ['upstream_changed']);
  assert.equal(o.cells[ids[1]].upstream, ids[0]);
  assert.deepEqual(o.cells[ids[2]].stale, ['upstream_changed']);
  assert.equal(o.cells[ids[2]].upstream, ids[1], 'the definer it reads, itself stale');
  for (const i of [4, 5])
    assert.equal(o.cells[ids[i]].stale, undefined, `independent cell ${i}`);
  assert.ok(o.text.includes(`stale(upstream_changed by ${ids[0]})`), o.text);
  // Every view says it alike; the connect summary counts it by reason.
  const all = await ok('inspect_notebook', { notebook_handle: H, view: 'all' });
  assert.deepEqual(all.sc.cells[2].stale, ['upstream_changed']);
  assert.equal(all.sc.cells[2].upstream, ids[1]);
  const c = await ok('connect_notebook', { path: NB });
  assert.equal(c.sc.stale.cells, 3, JSON.stringify(c.sc.stale));
  assert.equal(c.sc.stale.upstream_changed, 2);
  assert.ok(c.text.includes('upstream_changed 2'), c.text);

  // stale:true runs exactly the stale cells, in notebook order.
  const r = await waitRun(await ok('run_cells', { notebook_handle: H, stale: true,
    wait_secs: 30 }));
  assert.deepEqual(r.sc.cells.map((x) => x.cell_id), [ids[0], ids[1], ids[2]]);
  assert.ok(JSON.stringify(r.sc.cells[1].outputs).includes('40'), r.text);
  o = await outline();
  for (const i of [0, 1, 2])
    assert.equal(o.cells[ids[i]].stale, undefined, `${i} after: ${JSON.stringify(o.cells[ids[i]])}`);
  // The cells below ran before cells above them now (decision 023):
  // out_of_order, and nothing upstream of them changed.
  for (const i of [4, 5]) {
    assert.deepEqual(o.cells[ids[i]].stale, ['out_of_order']);
    assert.equal(o.cells[ids[i]].upstream, undefined);
  }
  const r2 = await waitRun(await ok('run_cells', { notebook_handle: H, stale: true,
    wait_secs: 30 }));
  assert.deepEqual(r2.sc.cells.map((x) => x.cell_id), [ids[4], ids[5]]);
  // Nothing stale: nothing runs, and that is no error.
  const n = await ok('run_cells', { notebook_handle: H, stale: true });
  assert.ok(n.text.includes('no code cell is stale'), n.text);
  assert.deepEqual(n.sc.cells, []);
  const both = await raw('run_cells', { notebook_handle: H, stale: true, all: true });
  assert.equal(both.isError, true);
  assert.equal(both.structuredContent.error.code, 'invalid_argument');
});

test('a definer run again after its reader makes the reader stale', async () => {
  // Cell 4 (other = 7) runs again after cell 5 read other: 5 is stale,
  // upstream_changed by 4 (and out_of_order); the cells above are not.
  await run([ids[4]]);
  const o = await outline();
  assert.deepEqual(o.cells[ids[5]].stale, ['out_of_order', 'upstream_changed']);
  assert.equal(o.cells[ids[5]].upstream, ids[4]);
  for (const i of [0, 1, 2, 4])
    assert.equal(o.cells[ids[i]].stale, undefined, `cell ${i}`);
  // A cell that reads nothing upstream is only out_of_order.
  const e = await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'free = 1' }] });
  const free = e.sc.cells[0].cell_id;
  await run([free, ids[4]]);
  const o2 = await outline();
  assert.deepEqual(o2.cells[free].stale, ['out_of_order']);
  assert.equal(o2.cells[free].upstream, undefined);
});

test('edit_cells warns of names no cell defines, and applies the edit', async () => {
  const e = await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'print(nowhere_defined + base, len(other_gone))' },
    { op: 'insert', after: 'BOTTOM', source: 'fine = math.pi * base\ndisplay(fine)' },
  ] });
  assert.deepEqual(e.sc.cells[0].undefined, ['nowhere_defined', 'other_gone']);
  assert.ok(e.text.includes('warning: reads nowhere_defined, other_gone, which no cell defines'),
    e.text);
  assert.equal(e.sc.cells[1].undefined, undefined, 'builtins, IPython names and defined names');
  const o = await outline();
  assert.ok(o.cells[e.sc.cells[0].cell_id], 'the cell was inserted');
  // %run and cells that are not python turn it off for themselves.
  const m = await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: '%%bash\necho $nothing_here' },
    { op: 'insert', after: 'BOTTOM', source: '%run helpers.py\nq = zz' }] });
  assert.equal(m.sc.cells[0].undefined, undefined, m.text);
  assert.equal(m.sc.cells[1].undefined, undefined, m.text);
  await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'delete', cell_id: m.sc.cells[1].cell_id }] });
  // A star import anywhere turns the lint off: it may define anything.
  const s = await ok('edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'TOP', source: 'from os.path import *' },
    { op: 'edit', cell_id: e.sc.cells[0].cell_id, source: 'print(still_nowhere)' },
  ] });
  assert.equal(s.sc.cells[1].undefined, undefined, s.text);
  assert.ok(!s.text.includes('warning'), s.text);
});

test('all:true and stale:true are picked by the daemon: the worker reads no notebook', async () => {
  // A second worker that traces its frames (common/trace.c), on the
  // same daemon. Its own edit empties the copy of the notebook it keeps,
  // so a worker that listed the cells itself would send ROOM_GET.
  const TRACE = path.join(T, 'trace');
  const B = new Client({ name: 'stale-trace', version: '1' },
    { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await B.connect(new StdioClientTransport({ command: WORKER, args: [],
    env: { ...env, RUNTIMED_TRACE: TRACE }, stderr: 'pipe' }), { timeout: 30000 });
  const call = async (name, args) => {
    const r = await B.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
    assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
    return r.structuredContent;
  };
  const frames = (type) => fs.readFileSync(TRACE, 'utf8').split('\n')
    .filter((l) => l.split(' ')[2] === 'out' && l.split(' ')[4] === type).length;
  try {
    const h = (await call('connect_notebook', { path: NB })).notebook_handle;
    const added = (await call('edit_cells', { notebook_handle: h, edits: [
      { op: 'insert', after: 'TOP', source: 'picked = 1' }] })).cells[0].cell_id;
    fs.truncateSync(TRACE, 0);
    const r = await call('run_cells', { notebook_handle: h, all: true,
      stop_on_error: false, wait_secs: 0 });
    assert.equal(frames('EXEC_RUN'), 1, 'the trace sees the run');
    assert.equal(frames('ROOM_GET'), 0, 'all:true read the notebook first');
    // Every code cell, in notebook order, the one just inserted first.
    const all = await ok('inspect_notebook', { notebook_handle: H, view: 'all' });
    const code = all.sc.cells.filter((c) => c.cell_type === 'code').map((c) => c.cell_id);
    assert.deepEqual(r.cells.map((c) => c.cell_id), code);
    assert.equal(code[0], added);
    // Ends in error (a cell above reads a name nothing defines).
    await ok('get_results', { notebook_handle: H, execution_id: r.execution_id,
      timeout_secs: 40 });
    await call('edit_cells', { notebook_handle: h, edits: [
      { op: 'edit', cell_id: added, source: 'picked = 2' }] });
    fs.truncateSync(TRACE, 0);
    const s = await call('run_cells', { notebook_handle: h, stale: true, wait_secs: 30 });
    assert.equal(frames('ROOM_GET'), 0, 'stale:true read the notebook first');
    assert.equal(s.cells[0].cell_id, added);
    await ok('edit_cells', { notebook_handle: H, edits: [
      { op: 'delete', cell_id: added }] });
  } finally {
    await B.close().catch(() => {});
  }
});
