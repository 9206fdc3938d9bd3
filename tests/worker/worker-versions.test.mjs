// SPDX-License-Identifier: ISC
// worker-versions.test.mjs: per-cell versions, expect_version and
// edit_conflict (two SDK clients racing on one cell), staleness produced
// by the real ipykernel (edit after run, out-of-order runs, restart),
// and who ran what (the run list naming two clients).  Two real workers
// (two MCP connections with their own clientInfo) share one daemon.
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
const { T, env, SAN } = workerWorld('wversions');
const NB = path.join(T, 'work', 'versions.ipynb');
fs.mkdirSync(path.dirname(NB));

async function worker(name, version) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const client = new Client({ name, version }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function raw(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined,
    { timeout: 60000 });
}

function textOf(r) {
  return r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function ok(client, name, args) {
  const r = await raw(client, name, args);
  assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
  return { sc: r.structuredContent, text: textOf(r) };
}

let A, B, HA, HB, ids;

async function cellsOf(client, h) {
  const r = await ok(client, 'inspect_notebook', { notebook_handle: h,
    view: 'outline' });
  return Object.fromEntries(r.sc.cells.map((c) => [c.cell_id, c]));
}

async function runWait(client, h, cellIds) {
  const r = await ok(client, 'run_cells', { notebook_handle: h,
    cell_ids: cellIds, wait_secs: 0 });
  const g = await ok(client, 'get_results', { notebook_handle: h,
    execution_id: r.sc.execution_id, timeout_secs: 40 });
  assert.equal(g.sc.status, 'done', g.text);
  return g;
}

before(async () => {
  A = await worker('agent-alpha', '1.2');
  B = await worker('agent-beta', '3.4');
  const c = await ok(A, 'create_notebook', { path: NB });
  HA = c.sc.notebook_handle;
  const e = await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'x = 1' },
    { op: 'insert', after: 'BOTTOM', source: 'y = x + 1\nprint(y)' },
    { op: 'insert', after: 'BOTTOM', source: 'z = 3' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown', source: '# notes' },
  ] });
  ids = e.sc.cells.map((x) => x.cell_id);
  const b = await ok(B, 'connect_notebook', { path: NB });
  HB = b.sc.notebook_handle;
});

after(async () => {
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

test('versions: in every read, changed by every change, guarded edits', async () => {
  let cs = await cellsOf(A, HA);
  const v0 = cs[ids[0]].version;
  assert.match(v0, /^[0-9a-f]{8}$/);
  // Every view and search hit carries it, the same for the same content.
  for (const view of ['source', 'outputs', 'all']) {
    const r = await ok(B, 'inspect_notebook', { notebook_handle: HB, view });
    assert.equal(r.sc.cells[0].version, v0, view);
    assert.ok(r.text.includes(`v${v0}`), view);
  }
  const s = await ok(B, 'search_cells', { notebook_handle: HB, query: 'x = 1' });
  assert.equal(s.sc.matches[0].version, v0);
  // An edit's result gives the new version; metadata changes it too.
  let e = await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'edit', cell_id: ids[0], metadata: { tags: ['t'] }, expect_version: v0 }] });
  const v1 = e.sc.cells[0].version;
  assert.notEqual(v1, v0);
  cs = await cellsOf(A, HA);
  assert.equal(cs[ids[0]].version, v1);
  // A stale expect_version refuses the whole batch, nothing applied.
  const r = await raw(B, 'edit_cells', { notebook_handle: HB, edits: [
    { op: 'edit', cell_id: ids[2], source: 'z = 30' },
    { op: 'replace', cell_id: ids[0], old_text: '1', new_text: '2', expect_version: v0 }] });
  assert.equal(r.isError, true);
  const err = r.structuredContent.error;
  assert.equal(err.code, 'edit_conflict');
  assert.equal(err.cell_id, ids[0]);
  assert.equal(err.version, v1);
  assert.equal(err.source, 'x = 1');
  assert.ok(textOf(r).includes('x = 1'), 'the source is in the text');
  const src = await ok(B, 'inspect_notebook', { notebook_handle: HB,
    view: 'source', cell_ids: [ids[2]] });
  assert.equal(src.sc.cells[0].source, 'z = 3', 'nothing of the batch applied');
  // Outputs change it: a run gives the cell a new version.
  await runWait(A, HA, [ids[0]]);
  cs = await cellsOf(A, HA);
  assert.notEqual(cs[ids[0]].version, v1);
  // But expect_version guards what an edit changes, not outputs (issue
  // 34): the version read before the run still lets the first guarded
  // edit through, since the source is as read.
  // As the text shows it, with its "v" (a model copies it so).
  e = await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'edit', cell_id: ids[0], metadata: { tags: [] }, expect_version: `v${v1}` }] });
  const v2 = e.sc.cells[0].version;
  // Once the content changed, the versions before it are refused.
  const old = await raw(B, 'edit_cells', { notebook_handle: HB, edits: [
    { op: 'edit', cell_id: ids[0], metadata: { tags: ['b'] }, expect_version: v1 }] });
  assert.equal(old.isError, true);
  assert.equal(old.structuredContent.error.code, 'edit_conflict');
  assert.equal(old.structuredContent.error.version, v2);
  // A version that matches lets delete through; a wrong type is refused.
  const bad = await raw(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'delete', cell_id: ids[3], expect_version: 7 }] });
  assert.equal(bad.structuredContent.error.code, 'invalid_argument');
});

test('race: two clients edit one cell with the same expect_version', async () => {
  const cs = await cellsOf(A, HA);
  const v = cs[ids[2]].version;
  const [ra, rb] = await Promise.all([
    raw(A, 'edit_cells', { notebook_handle: HA, edits: [
      { op: 'edit', cell_id: ids[2], source: 'z = "alpha"', expect_version: v }] }),
    raw(B, 'edit_cells', { notebook_handle: HB, edits: [
      { op: 'edit', cell_id: ids[2], source: 'z = "beta"', expect_version: v }] }),
  ]);
  const wins = [ra, rb].filter((r) => !r.isError);
  const loses = [ra, rb].filter((r) => r.isError);
  assert.equal(wins.length, 1, `exactly one wins: ${textOf(ra)} / ${textOf(rb)}`);
  assert.equal(loses.length, 1);
  const won = wins[0].structuredContent.cells[0];
  const err = loses[0].structuredContent.error;
  assert.equal(err.code, 'edit_conflict');
  assert.equal(err.version, won.version, 'the loser sees the winner\'s version');
  const winner = wins[0] === ra ? 'alpha' : 'beta';
  assert.equal(err.source, `z = "${winner}"`);
  const now = wins[0] === ra ? await cellsOf(A, HA) : await cellsOf(B, HB);
  assert.equal(now[ids[2]].version, won.version);
});

test('staleness from the real kernel: edit, order, restart, never run', async () => {
  // Run all three code cells in order: none stale.
  await runWait(A, HA, [ids[0], ids[1], ids[2]]);
  let cs = await cellsOf(A, HA);
  for (const i of [0, 1, 2])
    assert.equal(cs[ids[i]].stale, undefined, `cell ${i}: ${JSON.stringify(cs[ids[i]])}`);
  assert.equal(cs[ids[3]].stale, undefined, 'markdown is never stale');
  // Edit after the run: source_changed (read by the editor: another
  // client's view follows once the change reaches it).
  await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
    { op: 'replace', cell_id: ids[1], old_text: 'x + 1', new_text: 'x + 2' }] });
  let r = await ok(B, 'inspect_notebook', { notebook_handle: HB, view: 'all' });
  assert.deepEqual(r.sc.cells[1].stale, ['source_changed']);
  assert.ok(/\[1\] \S+ code \[\d+\] v[0-9a-f]{8} stale/.test(r.text), r.text);
  // Cell 0 run again after cell 1 ran: 1 and 2 ran before a cell above,
  // and 1 reads x, which 0 defines (decision 072).
  await runWait(A, HA, [ids[0]]);
  cs = await cellsOf(A, HA);
  assert.deepEqual(cs[ids[1]].stale, ['source_changed', 'out_of_order',
    'upstream_changed']);
  assert.equal(cs[ids[1]].upstream, ids[0]);
  assert.deepEqual(cs[ids[2]].stale, ['out_of_order']);
  assert.equal(cs[ids[0]].stale, undefined);
  // A new cell has never run; the connect summary counts them.
  const added = (await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'w = 4' }] })).sc.cells[0].cell_id;
  let c = await ok(B, 'connect_notebook', { path: NB });
  assert.equal(c.sc.stale.cells, 3, JSON.stringify(c.sc.stale));
  assert.equal(c.sc.stale.never_run, 1);
  assert.ok(c.text.includes('3 code cells stale'), c.text);
  await ok(B, 'disconnect_notebook', { notebook_handle: c.sc.notebook_handle });
  // Restart: every output is from an earlier kernel session.
  await ok(A, 'restart_kernel', { notebook_handle: HA });
  cs = await cellsOf(A, HA);
  assert.deepEqual(cs[ids[0]].stale, ['kernel_restarted']);
  assert.deepEqual(cs[ids[1]].stale, ['source_changed', 'kernel_restarted']);
  // By id: an object's all-digit keys (an id like "12345678") come
  // first, so its last value need not be the last cell.
  assert.deepEqual(cs[added].stale, ['never_run']);
});

// A record as a daemon before who-ran-what wrote it (no client, no
// session, no submitted_at), msgpack-encoded by hand.
function oldRecord(execId, notebookId, cellId) {
  const parts = [];
  const str = (s) => {
    const b = Buffer.from(s, 'utf8');
    parts.push(b.length < 32 ? Buffer.from([0xa0 | b.length]) : Buffer.from([0xd9, b.length]), b);
  };
  const map = (n) => parts.push(Buffer.from([0x80 | n]));
  const int = (v) => { const b = Buffer.alloc(9); b[0] = 0xd3; b.writeBigInt64BE(BigInt(v), 1); parts.push(b); };
  map(6);
  str('execution_id'); str(execId);
  str('daemon_started_at'); int(1);
  str('notebook_id'); str(notebookId);
  str('status'); str('done');
  str('message'); parts.push(Buffer.from([0xc0]));
  str('cells'); parts.push(Buffer.from([0x91])); map(6);
  str('cell_id'); str(cellId); str('cell_type'); str('code');
  str('status'); str('ok'); str('execution_count'); int(1);
  str('source'); str('x = 0'); str('outputs'); parts.push(Buffer.from([0x90]));
  return Buffer.concat(parts);
}

test('who ran what: the run list names both clients, and old records', async () => {
  const ra = await runWait(A, HA, [ids[0]]);
  const rb = await runWait(B, HB, [ids[2], ids[0]]);
  let l = await ok(B, 'get_results', { notebook_handle: HB });
  const runs = l.sc.runs;
  assert.ok(runs.length >= 2, l.text);
  assert.equal(runs[0].execution_id, rb.sc.execution_id, 'newest first');
  assert.equal(runs[0].client_name, 'agent-beta');
  assert.equal(runs[0].client_version, '3.4');
  assert.match(runs[0].session, /^[0-9a-f]{8}$/);
  assert.match(runs[0].kernel_session, /^[0-9a-f-]{36}$/);
  assert.deepEqual(runs[0].cell_ids, [ids[2], ids[0]]);
  assert.equal(runs[1].execution_id, ra.sc.execution_id);
  assert.equal(runs[1].client_name, 'agent-alpha');
  assert.notEqual(runs[0].session, runs[1].session);
  assert.ok(runs.every((r, i) => i === 0 || r.submitted_at <= runs[i - 1].submitted_at));
  const line = l.text.split('\n').find((s) => s.startsWith(rb.sc.execution_id));
  assert.match(line, /agent-beta 3\.4 \(session [0-9a-f]{8}\) \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ done 2 cells: /);
  assert.ok(l.text.includes('agent-alpha 1.2'), l.text);
  const err = await raw(B, 'get_results', { notebook_handle: HB, timeout_secs: 1 });
  assert.equal(err.structuredContent.error.code, 'invalid_argument');

  // A store an older daemon wrote: its record lists, without a client.
  const info = await ok(A, 'list_notebooks', {});
  const notebookId = info.sc.notebooks.find((n) => n.path === NB).notebook_id;
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  const oldId = `${runs[0].execution_id.slice(0, 8)}-000000000001-0123456789abcd`;
  const blob = oldRecord(oldId, notebookId, ids[0]).toString('hex');
  const db = path.join(env.RUNTIMED_STATE_DIR, 'runtimed.db');
  const sq = spawnSync('sqlite3', [db, `INSERT INTO executions (execution_id, notebook_id, finished_at, record) VALUES ('${oldId}', '${notebookId}', 1000, X'${blob}');`]);
  assert.equal(sq.status, 0, String(sq.stderr));
  const c = await ok(A, 'connect_notebook', { path: NB });
  l = await ok(A, 'get_results', { notebook_handle: c.sc.notebook_handle });
  const ids2 = l.sc.runs.map((r) => r.execution_id);
  assert.ok(ids2.includes(rb.sc.execution_id), 'runs survive the restart');
  const old = l.sc.runs.find((r) => r.execution_id === oldId);
  assert.ok(old, l.text);
  assert.equal(old.client_name, undefined);
  assert.equal(old.status, 'done');
  assert.equal(l.sc.runs.at(-1).execution_id, oldId, 'oldest last');
  assert.ok(l.text.includes(`${oldId} (unknown client)`), l.text);
  HA = c.sc.notebook_handle;
});

test('a cell that is printing can be edited with the version read', async () => {
  const e = await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time\nfor i in range(6):\n    print(i, flush=True)\n    time.sleep(0.4)' }] });
  const id = e.sc.cells[0].cell_id;
  const r = await ok(A, 'run_cells', { notebook_handle: HA, cell_ids: [id], wait_secs: 1 });
  // The daemon was restarted above: its kernel may still be starting.
  let v;
  for (let k = 0; k < 200 && v === undefined; k++) {
    const c = (await cellsOf(A, HA))[id];
    if (c.run === 'running' && c.outputs_count > 0)
      v = c.version;
    else
      await new Promise((res) => setTimeout(res, 50));
  }
  assert.ok(v, 'the cell prints within 10 s');
  await new Promise((res) => setTimeout(res, 900));
  assert.notEqual((await cellsOf(A, HA))[id].version, v, 'more output, a new version');
  const m = await ok(A, 'edit_cells', { notebook_handle: HA, edits: [
    { op: 'edit', cell_id: id, metadata: { tags: ['printing'] }, expect_version: v }] });
  assert.equal(m.sc.cells[0].cell_id, id);
  await ok(A, 'get_results', { notebook_handle: HA, execution_id: r.sc.execution_id, timeout_secs: 30 });
});
