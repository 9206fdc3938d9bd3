// SPDX-License-Identifier: ISC
// worker-merge.test.mjs: a person's editor saves the notebook an agent
// works on (issue 39, docs/decisions/056).  The real worker, daemon and
// python3 kernel, driven by the MCP SDK client; the editor is
// editor-standin.py (nbformat writing as Jupyter does, or a VS Code-style
// in-place write keeping ids and metadata).  For same and different
// cells, inserts, deletes and moves, the notebook's metadata (key by
// key), clean and dirty rooms, and while a run streams: no acknowledged
// edit and no saved edit is lost, the merge reaches the agent's wait as
// a change by disk, a conflict is typed in reads and resolved by one
// edit_cells op, the file is not overwritten while it stands.  Prints how long a save takes to reach a wait.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-merge.sh).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { workerWorld } from './worker-world.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wmerge');
const WORK = path.join(T, 'work');
fs.mkdirSync(WORK);
// Autosave well after an editor's save, so a room is dirty when merged.
const AUTOSAVE_SECS = 3;

async function worker(name) {
  const transport = new StdioClientTransport({ command: WORKER, args: [],
    env, stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function raw(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
}

async function ok(client, name, args) {
  const r = await raw(client, name, args);
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text };
}

async function fails(client, name, args, code) {
  const r = await raw(client, name, args);
  assert.equal(r.isError, true, `${name} should fail with ${code}`);
  assert.equal(r.structuredContent.error.code, code,
    `${name}: ${JSON.stringify(r.structuredContent.error)}`);
  return r;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The editor stand-in: one Python process, a request a line.
let editor, editorLines;
function editorStart() {
  editor = spawn('/usr/bin/python3', [path.join(here, 'editor-standin.py')],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  editorLines = readline.createInterface({ input: editor.stdout })[Symbol.asyncIterator]();
}
async function save(mode, file, ops) {
  editor.stdin.write(JSON.stringify({ mode, path: file, ops }) + '\n');
  const { value } = await editorLines.next();
  const r = JSON.parse(value);
  assert.equal(r.error, undefined, `editor: ${r.error}`);
  return r.t;
}

function fileCells(file) {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  return nb.cells.map((c) => ({ id: c.id, type: c.cell_type,
    source: Array.isArray(c.source) ? c.source.join('') : c.source,
    outputs: c.outputs }));
}

function validate(file) {
  const r = spawnSync('/usr/bin/python3', ['-c',
    'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
    file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${file} is not valid nbformat: ${r.stderr}`);
}

async function roomCells(client, h) {
  const r = await ok(client, 'inspect_notebook', { notebook_handle: h, view: 'source' });
  return { cells: r.sc.cells.map((c) => ({ id: c.cell_id, source: c.source, type: c.cell_type })),
    sc: r.sc, text: r.text };
}

// Until the file holds what pred wants (autosave), or ms pass.
async function fileUntil(file, pred, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const cells = fileCells(file);
    if (pred(cells) || Date.now() > deadline) return cells;
    await sleep(100);
  }
}

let A, n = 0;
const BASE = [['markdown', '# notes', 'md'], ['code', 'a = 1', 'ca'],
  ['code', 'b = 2', 'cb'], ['code', 'c = 3', 'cc']];

// A new notebook file as a person made it, connected by the agent.
async function fresh() {
  const file = path.join(WORK, `n${++n}.ipynb`);
  await save('jupyter', file, [{ op: 'create', cells: BASE }]);
  const c = await ok(A, 'connect_notebook', { path: file });
  return { file, h: c.sc.notebook_handle, cursor: c.sc.cursor };
}

// The agent's wait for the next content change after cursor.
async function waitChange(h, cursor, secs = 10) {
  return ok(A, 'inspect_notebook', { notebook_handle: h, after: cursor, timeout_secs: secs });
}

before(async () => {
  const d = spawnSync(DAEMON, ['--autosave-delay', String(AUTOSAVE_SECS)],
    { env, encoding: 'utf8', timeout: 30000 });
  assert.equal(d.status, 0, `runtimed: ${d.stderr}`);
  editorStart();
  A = await worker('agent-a');
});

after(async () => {
  if (A) await A.close().catch(() => {});
  if (editor) editor.stdin.end();
  spawnSync(DAEMON, ['stop'], { env, timeout: 30000 });
  if (fs.existsSync(path.dirname(SAN))) {
    const reports = fs.readdirSync(path.dirname(SAN))
      .filter((f) => f.startsWith(path.basename(SAN)));
    assert.deepEqual(reports, [], 'sanitizer reports');
  }
});

for (const mode of ['jupyter', 'vscode']) {
  test(`${mode}: different cells in a dirty room are both kept, and autosave writes the merge`, async () => {
    const { file, h } = await fresh();
    const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
      { op: 'edit', cell_id: 'ca', source: 'a = 2' }] });
    await save(mode, file, [{ op: 'set', id: 'md', source: '# notes by the person' }]);
    const w = await waitChange(h, e.sc.cursor);
    assert.equal(w.sc.outcome, 'changed', w.text);
    assert.equal(w.sc.changes.disk.changes, 1, JSON.stringify(w.sc.changes));
    assert.match(w.sc.changes.disk.mtime, /^\d{4}-\d\d-\d\dT.*Z$/);
    const md = w.sc.changes.cells.find((c) => c.cell_id === 'md');
    assert.ok(md && md.by === 'disk' && md.how.includes('source edited'), JSON.stringify(w.sc.changes));
    assert.match(w.text, /merged from the file/);
    const r = await roomCells(A, h);
    assert.deepEqual(r.cells.map((c) => c.source), ['# notes by the person', 'a = 2', 'b = 2', 'c = 3']);
    assert.equal(r.sc.dirty, true);
    const f = await fileUntil(file, (cs) => cs[1].source === 'a = 2', (AUTOSAVE_SECS + 5) * 1000);
    assert.deepEqual(f.map((c) => c.source), ['# notes by the person', 'a = 2', 'b = 2', 'c = 3']);
    assert.deepEqual(f.map((c) => c.id), ['md', 'ca', 'cb', 'cc']);
    validate(file);
  });
}

test('clean room: the file\'s change is taken, the room stays clean', async () => {
  const { file, h, cursor } = await fresh();
  await save('vscode', file, [{ op: 'set', id: 'cb', source: 'b = 20' }]);
  const w = await waitChange(h, cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  const r = await roomCells(A, h);
  assert.deepEqual(r.cells.map((c) => c.source), ['# notes', 'a = 1', 'b = 20', 'c = 3']);
  assert.equal(r.sc.dirty, false);
});

function fileMeta(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8')).metadata;
}

test('the notebook\'s metadata merges key by key: the agent\'s comment, the file\'s new, changed and dropped keys', async () => {
  const { file, h, cursor } = await fresh();
  // Keys the file adds while the room is clean: the base has them.
  await save('jupyter', file, [{ op: 'set', id: 'cb', source: 'b = 20' },
    { op: 'meta', set: { dropme: 1, kept: 'base' } }]);
  let w = await waitChange(h, cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  // The agent's comment thread is in the room's metadata (runtimed).
  await ok(A, 'add_comment', { notebook_handle: h, body: 'agent note' });
  const before = await roomCells(A, h);
  assert.equal(before.sc.dirty, true);
  // The file adds a key, changes kernelspec, drops one the room kept.
  await save('jupyter', file, [{ op: 'set', id: 'cc', source: 'c = 30' },
    { op: 'meta', set: { editor: 'x', kernelspec: { name: 'python3',
      display_name: 'Person 3', language: 'python' } }, del: ['dropme'] }]);
  w = await waitChange(h, before.sc.cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  let md;
  const deadline = Date.now() + (AUTOSAVE_SECS + 5) * 1000;
  do {
    await sleep(100);
    md = fileMeta(file);
  } while (md.runtimed === undefined && Date.now() < deadline);
  assert.equal(md.runtimed.comments.length, 1, JSON.stringify(md));
  assert.equal(md.runtimed.comments[0].comments[0].body, 'agent note');
  assert.equal(md.editor, 'x');
  assert.equal(md.kept, 'base');
  assert.equal(md.kernelspec.display_name, 'Person 3');
  assert.equal(md.dropme, undefined, JSON.stringify(md));
  assert.deepEqual(fileCells(file).map((c) => c.source), ['# notes', 'a = 1', 'b = 20', 'c = 30']);
  validate(file);
});

test('inserts, deletes and moves on disk merge with the agent\'s insert', async () => {
  const { file, h } = await fresh();
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'insert', after: 'ca', source: 'x = 9' }] });
  const xid = e.sc.cells[0].cell_id;
  await save('jupyter', file, [
    { op: 'delete', id: 'cc' },
    { op: 'insert', at: 0, cell_type: 'markdown', source: '# title', id: 'ti' },
    { op: 'move', id: 'cb', to: 1 }]);
  const w = await waitChange(h, e.sc.cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  const r = await roomCells(A, h);
  assert.deepEqual(r.cells.map((c) => c.id), ['ti', 'cb', 'md', 'ca', xid]);
  assert.deepEqual(r.cells.map((c) => c.source), ['# title', 'b = 2', '# notes', 'a = 1', 'x = 9']);
  const f = await fileUntil(file, (cs) => cs.length === 5, (AUTOSAVE_SECS + 5) * 1000);
  assert.deepEqual(f.map((c) => c.id), ['ti', 'cb', 'md', 'ca', xid]);
  validate(file);
});

test('the agent moved cells, the file inserted one: the agent\'s order, the insert after its predecessor', async () => {
  const { file, h } = await fresh();
  const e = await ok(A, 'move_cells', { notebook_handle: h, cell_ids: ['cc'], after: 'TOP' });
  await save('vscode', file, [{ op: 'insert', at: 2, source: 'y = 5', id: 'cy' }]);
  const w = await waitChange(h, e.sc.cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  const r = await roomCells(A, h);
  assert.deepEqual(r.cells.map((c) => c.id), ['cc', 'md', 'ca', 'cy', 'cb']);
});

test('the same cell changed on both sides: a typed conflict, the file kept, one op resolves it', async () => {
  const { file, h } = await fresh();
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'edit', cell_id: 'ca', source: "a = 'agent'" }] });
  await save('jupyter', file, [{ op: 'set', id: 'ca', source: "a = 'person'" },
    { op: 'set', id: 'cb', source: 'b = 3' }]);
  const w = await waitChange(h, e.sc.cursor);
  assert.equal(w.sc.outcome, 'changed', w.text);
  const ca = w.sc.changes.cells.find((c) => c.cell_id === 'ca');
  assert.ok(ca && ca.how.includes('conflict with the file'), JSON.stringify(w.sc.changes));
  let r = await roomCells(A, h);
  assert.deepEqual(r.cells.map((c) => c.source), ['# notes', "a = 'agent'", 'b = 3', 'c = 3']);
  assert.equal(r.sc.conflicts.length, 1);
  assert.equal(r.sc.conflicts[0].cell_id, 'ca');
  assert.equal(r.sc.conflicts[0].kind, 'both_edited');
  assert.equal(r.sc.conflicts[0].disk.source, "a = 'person'");
  assert.match(r.text, /1 conflict with the file/);
  // Autosave does not write over the person's version, nor does a save.
  await sleep((AUTOSAVE_SECS + 1) * 1000);
  assert.equal(fileCells(file)[1].source, "a = 'person'");
  await fails(A, 'save_notebook', { notebook_handle: h }, 'file_changed_on_disk');
  await fails(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'resolve', cell_id: 'cb', take: 'disk' }] }, 'invalid_argument');
  const res = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'resolve', cell_id: 'ca', take: 'both' }] });
  const both = res.sc.cells[0].cell_id;
  r = await roomCells(A, h);
  assert.equal(r.sc.conflicts, undefined);
  assert.deepEqual(r.cells.map((c) => c.source), ['# notes', "a = 'agent'", "a = 'person'", 'b = 3', 'c = 3']);
  assert.equal(r.cells[2].id, both);
  const f = await fileUntil(file, (cs) => cs.length === 5, (AUTOSAVE_SECS + 5) * 1000);
  assert.deepEqual(f.map((c) => c.source), ['# notes', "a = 'agent'", "a = 'person'", 'b = 3', 'c = 3']);
  validate(file);
});

test('resolve take disk and take room; edited here and deleted on disk', async () => {
  const { file, h } = await fresh();
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'edit', cell_id: 'ca', source: 'a = 10' },
    { op: 'edit', cell_id: 'cb', source: 'b = 10' },
    { op: 'edit', cell_id: 'cc', source: 'c = 10' }] });
  await save('vscode', file, [{ op: 'set', id: 'ca', source: 'a = 20' },
    { op: 'set', id: 'cb', source: 'b = 20' }, { op: 'delete', id: 'cc' }]);
  await waitChange(h, e.sc.cursor);
  let r = await roomCells(A, h);
  assert.deepEqual(r.sc.conflicts.map((c) => [c.cell_id, c.kind]).sort(),
    [['ca', 'both_edited'], ['cb', 'both_edited'], ['cc', 'deleted_on_disk']]);
  await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'resolve', cell_id: 'ca', take: 'disk' },
    { op: 'resolve', cell_id: 'cb', take: 'room' },
    { op: 'resolve', cell_id: 'cc', take: 'disk' }] });
  r = await roomCells(A, h);
  assert.equal(r.sc.conflicts, undefined);
  assert.deepEqual(r.cells.map((c) => c.source), ['# notes', 'a = 20', 'b = 10']);
  const f = await fileUntil(file, (cs) => cs.length === 3 && cs[2].source === 'b = 10',
    (AUTOSAVE_SECS + 5) * 1000);
  assert.deepEqual(f.map((c) => c.source), ['# notes', 'a = 20', 'b = 10']);
});

test('a run streaming while the person saves keeps its outputs; the file gets both', async () => {
  const { file, h } = await fresh();
  await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'edit', cell_id: 'cc', source: 'import time\nfor i in range(6):\n    print("tick", i, flush=True)\n    time.sleep(0.4)' }] });
  const run = await ok(A, 'run_cells', { notebook_handle: h, cell_ids: ['cc'], wait_secs: 0 });
  await sleep(900);
  // The person's buffer has the cell without outputs; they edit another.
  await save('jupyter', file, [{ op: 'set', id: 'md', source: '# notes, during the run' }]);
  let s = run.sc;
  while (!['done', 'error', 'interrupted', 'kernel_died', 'cancelled'].includes(s.status))
    s = (await ok(A, 'get_results', { notebook_handle: h, execution_id: run.sc.execution_id, timeout_secs: 30 })).sc;
  assert.equal(s.status, 'done');
  const out = await ok(A, 'inspect_notebook', { notebook_handle: h, cell_ids: ['cc'], view: 'outputs' });
  for (let i = 0; i < 6; i++) assert.match(out.text, new RegExp(`tick ${i}`));
  const r = await roomCells(A, h);
  assert.equal(r.cells[0].source, '# notes, during the run');
  const f = await fileUntil(file, (cs) => (cs[3].outputs || []).length > 0 &&
    JSON.stringify(cs[3].outputs).includes('tick 5'), (AUTOSAVE_SECS + 10) * 1000);
  assert.equal(f[0].source, '# notes, during the run');
  assert.match(JSON.stringify(f[3].outputs), /tick 0.*tick 5/s);
  validate(file);
});

test('a save reaches an agent\'s wait quickly (figure printed)', async () => {
  const { file, h } = await fresh();
  let cursor = (await ok(A, 'inspect_notebook', { notebook_handle: h })).sc.cursor;
  const lat = [];
  for (let i = 0; i < 12; i++) {
    const waiting = waitChange(h, cursor, 20);
    await sleep(150);	// the wait is parked in the daemon
    const t = await save(i % 2 ? 'vscode' : 'jupyter', file,
      [{ op: 'set', id: 'cb', source: `b = ${100 + i}` }]);
    const w = await waiting;
    const got = Date.now();
    assert.equal(w.sc.outcome, 'changed', w.text);
    assert.equal(w.sc.changes.disk.changes, 1);
    lat.push(got - t);
    cursor = w.sc.cursor;
  }
  lat.sort((a, b) => a - b);
  const ms = (v) => v.toFixed(0);
  const p50 = lat[Math.floor(lat.length / 2)];
  console.log(`# a person's save reaches an agent's wait: p50 ${ms(p50)} ms, ` +
    `min ${ms(lat[0])} ms, max ${ms(lat[lat.length - 1])} ms (n=${lat.length}; ` +
    `inotify debounce 100 ms included)`);
  // Loose: a loaded 2-core machine shares it; the goal is 200 ms.
  assert.ok(p50 < 2000, `p50 ${p50} ms`);
});

test('a conflict survives a daemon restart: still typed, the file still not overwritten', async () => {
  const { file, h } = await fresh();
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'edit', cell_id: 'cb', source: 'b = "agent"' }] });
  await save('jupyter', file, [{ op: 'set', id: 'cb', source: 'b = "person"' }]);
  await waitChange(h, e.sc.cursor);
  const st = spawnSync(DAEMON, ['stop'], { env, encoding: 'utf8', timeout: 30000 });
  assert.equal(st.status, 0, st.stderr);
  const d = spawnSync(DAEMON, ['--autosave-delay', '1'], { env, encoding: 'utf8', timeout: 30000 });
  assert.equal(d.status, 0, `runtimed: ${d.stderr}`);
  const c = await ok(A, 'connect_notebook', { path: file });
  assert.match(c.text, /1 conflict with the file/);
  const r = await roomCells(A, c.sc.notebook_handle);
  assert.equal(r.sc.conflicts[0].cell_id, 'cb');
  assert.equal(r.sc.conflicts[0].disk.source, 'b = "person"');
  assert.equal(r.cells[2].source, 'b = "agent"');
  await sleep(2500);
  assert.equal(fileCells(file)[2].source, 'b = "person"');
  await ok(A, 'edit_cells', { notebook_handle: c.sc.notebook_handle, edits: [
    { op: 'resolve', cell_id: 'cb', take: 'room' }] });
  const f = await fileUntil(file, (cs) => cs[2].source === 'b = "agent"', 8000);
  assert.equal(f[2].source, 'b = "agent"');
});

test('outlines mark the cells running and queued (issue 39)', async () => {
  const { h } = await fresh();
  await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'edit', cell_id: 'ca', source: 'import time; time.sleep(2.5)' }] });
  const r1 = await ok(A, 'run_cells', { notebook_handle: h, cell_ids: ['ca'], wait_secs: 0 });
  await ok(A, 'run_cells', { notebook_handle: h, cell_ids: ['cb'], wait_secs: 0 });
  // Once the first is running (the kernel may still be starting).
  let o;
  for (let i = 0; i < 100; i++) {
    o = await ok(A, 'inspect_notebook', { notebook_handle: h });
    if (o.sc.cells[1].run === 'running') break;
    await sleep(100);
  }
  assert.equal(o.sc.cells[1].run, 'running', o.text);
  assert.equal(o.sc.cells[2].run, 'queued', o.text);
  assert.equal(o.sc.cells[3].run, undefined);
  assert.match(o.text, /\] ca code .*running: import time/);
  assert.match(o.text, /\] cb code .*queued: b = 2/);
  const v = await ok(A, 'inspect_notebook', { notebook_handle: h, cell_ids: ['ca'], view: 'source' });
  assert.equal(v.sc.cells[0].run, 'running');
  await ok(A, 'get_results', { notebook_handle: h, execution_id: r1.sc.execution_id, timeout_secs: 30 });
  for (let i = 0; i < 100; i++) {
    o = await ok(A, 'inspect_notebook', { notebook_handle: h });
    if (o.sc.cells.every((c) => c.run === undefined)) break;
    await sleep(100);
  }
  assert.ok(o.sc.cells.every((c) => c.run === undefined), o.text);
});

test('interrupt_kernel says whose runs it ended; a run another client ended says so, and that none of its cells ran (issue 39)', async () => {
  const { file, h } = await fresh();
  const B = await worker('agent-b');
  try {
    const hb = (await ok(B, 'connect_notebook', { path: file })).sc.notebook_handle;
    await ok(A, 'edit_cells', { notebook_handle: h, edits: [
      { op: 'edit', cell_id: 'ca', source: 'import time; time.sleep(20)' }] });
    const ra = await ok(A, 'run_cells', { notebook_handle: h, cell_ids: ['ca'], wait_secs: 0 });
    const rb = await ok(B, 'run_cells', { notebook_handle: hb, cell_ids: ['cb', 'cc'], wait_secs: 0 });
    for (let i = 0; i < 100; i++) {
      const o = await ok(A, 'inspect_notebook', { notebook_handle: h });
      if (o.sc.cells[1].run === 'running') break;
      await sleep(100);
    }
    const it = await ok(A, 'interrupt_kernel', { notebook_handle: h });
    const ended = it.sc.ended;
    assert.equal(ended.length, 2, it.text);
    assert.deepEqual(ended.map((e) => [e.execution_id, e.status, e.yours]),
      [[ra.sc.execution_id, 'running', true], [rb.sc.execution_id, 'queued', false]]);
    assert.equal(ended[1].client_name, 'agent-b');
    assert.match(it.text, /yours, running.*agent-b, queued: none of its cells ran/);
    const gb = await ok(B, 'get_results', { notebook_handle: hb, execution_id: rb.sc.execution_id, timeout_secs: 10 });
    assert.equal(gb.sc.status, 'interrupted');
    assert.match(gb.text, /ended by agent-a's interrupt_kernel \(another client, session [0-9a-f]+\) before it started: none of its cells ran/);
    assert.ok(gb.sc.cells.every((c) => c.status === 'not_run'), JSON.stringify(gb.sc.cells));
    const ga = await ok(A, 'get_results', { notebook_handle: h, execution_id: ra.sc.execution_id, timeout_secs: 10 });
    assert.equal(ga.sc.status, 'interrupted');
    assert.doesNotMatch(ga.text, /another client/);
  } finally {
    await B.close().catch(() => {});
  }
});

test('interrupt_kernel with execution_id cancels that run only: queued, removed; running, interrupted; the other client\'s run goes on (issue 39)', async () => {
  const { file, h } = await fresh();
  const B = await worker('agent-b2');
  try {
    const hb = (await ok(B, 'connect_notebook', { path: file })).sc.notebook_handle;
    await ok(A, 'edit_cells', { notebook_handle: h, edits: [
      { op: 'edit', cell_id: 'ca', source: 'import time; time.sleep(20)' },
      { op: 'edit', cell_id: 'cb', source: 'b = 2\nprint("b ran")' }] });
    const running = async () => {
      for (let i = 0; i < 100; i++) {
        const o = await ok(A, 'inspect_notebook', { notebook_handle: h });
        if (o.sc.cells[1].run === 'running') return;
        await sleep(100);
      }
    };
    // B's queued run cancelled: A's keeps running.
    const ra = await ok(A, 'run_cells', { notebook_handle: h, cell_ids: ['ca'], wait_secs: 0 });
    const rb = await ok(B, 'run_cells', { notebook_handle: hb, cell_ids: ['cb'], wait_secs: 0 });
    await running();
    const cb = await ok(B, 'interrupt_kernel', { notebook_handle: hb, execution_id: rb.sc.execution_id });
    assert.equal(cb.sc.status, 'cancelled', cb.text);
    assert.ok(cb.sc.cells.every((c) => c.status === 'not_run'), JSON.stringify(cb.sc.cells));
    let o = await ok(A, 'inspect_notebook', { notebook_handle: h });
    assert.equal(o.sc.cells[1].run, 'running', o.text);
    // A's running run cancelled: B's run queued behind it goes on and runs.
    const rb2 = await ok(B, 'run_cells', { notebook_handle: hb, cell_ids: ['cb'], wait_secs: 0 });
    const ca = await ok(A, 'interrupt_kernel', { notebook_handle: h, execution_id: ra.sc.execution_id });
    assert.equal(ca.sc.status, 'cancelled', ca.text);
    const gb = await ok(B, 'get_results', { notebook_handle: hb, execution_id: rb2.sc.execution_id, timeout_secs: 30 });
    assert.equal(gb.sc.status, 'done', gb.text);
    assert.match(gb.text, /b ran/);
    await fails(A, 'interrupt_kernel', { notebook_handle: h, execution_id: ra.sc.execution_id }, 'invalid_argument');
  } finally {
    await B.close().catch(() => {});
  }
});
