// SPDX-License-Identifier: ISC
// worker-author.test.mjs: each cell's last editor (issue 39).  Two MCP
// clients through the real runtimed-mcp proxy, worker and daemon on a
// 50-cell notebook: a reader's outline of its own edits does not grow by
// a character, the cells another client edited say "(by NAME)" as change
// reports do, a cell the file's editor changed says "(on disk)", the
// saved .ipynb holds none of it, and it outlives a daemon SIGKILL.
// Prints what an outline costs in characters each way.
//
// Environment: RUNTIMED_MCP, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR
// (worker-author.sh).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  call, callRaw, connect, killWorld, privateWorld, processesOf, removeWorld,
  sanitizerReports, stopDaemon, validateNotebook, waitFor,
} from '../e2e/lib.mjs';

const world = privateWorld('author');
const N = 50;
let A, B, NB, HA, HB;

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const outline = (client, h) => call(client, 'inspect_notebook', { ...h, view: 'outline',
  count: 100 });
// The cells' lines, without the header (which says "unsaved changes").
const lines = (r) => text(r).split('\n').filter((l) => /^\[\d+\] /.test(l)).join('\n');
const by = (r, id) => r.structuredContent.cells.find((c) => c.cell_id === id).by;
const lineOf = (r, id) => text(r).split('\n').find((l) => l.includes(` ${id} `));
// A reader's copy follows another client's edit by the daemon's push:
// read until the outline is at least at seq (the edit's).
const seqOf = (r) => Number(/^c1\.\d+\.(\d+)\./.exec(r.structuredContent.cursor)[1]);
async function outlineAt(client, h, seq) {
  for (let i = 0; ; i++) {
    const o = await outline(client, h);
    if (seqOf(o) >= seq || i === 100) return o;
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  A = await connect(world, 'agent-a');
  B = await connect(world, 'agent-b');
  NB = path.join(world.dir, 'fifty.ipynb');
  const cells = [];
  for (let i = 0; i < N; i++)
    cells.push({ cell_type: 'code', id: `c${String(i).padStart(2, '0')}`, metadata: {},
      execution_count: null, outputs: [], source: `x${String(i).padStart(2, '0')} = 0` });
  fs.writeFileSync(NB, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells },
    null, 1) + '\n');
  HA = { notebook_handle: (await call(A.client, 'connect_notebook', { path: NB }))
    .structuredContent.notebook_handle };
  HB = { notebook_handle: (await call(B.client, 'connect_notebook', { path: NB }))
    .structuredContent.notebook_handle };
});

after(async () => {
  for (const c of [A, B]) if (c) await c.client.close().catch(() => {});
  stopDaemon(world);
  await new Promise((r) => setTimeout(r, 300));
  killWorld(world);
  const reports = sanitizerReports(world);
  removeWorld(world);
  assert.deepEqual(reports, [], 'sanitizer reports');
});

test('your own edits add nothing to your outline; another client\'s say (by NAME)', async () => {
  const o0 = await outline(A.client, HA);
  assert.doesNotMatch(text(o0), /\(by |\(on disk\)/);
  // A rewrites every cell (same lengths): its outline is as long as before.
  await call(A.client, 'edit_cells', { ...HA, edits: Array.from({ length: N }, (_, i) =>
    ({ op: 'edit', cell_id: `c${String(i).padStart(2, '0')}`,
      source: `x${String(i).padStart(2, '0')} = 1` })) });
  const o1 = await outline(A.client, HA);
  assert.doesNotMatch(text(o1), /\(by |\(on disk\)/);
  assert.equal(lines(o1).length, lines(o0).length, text(o1));
  assert.equal(JSON.stringify(o1.structuredContent.cells).length,
    JSON.stringify(o0.structuredContent.cells).length);
  assert.equal(by(o1, 'c00'), undefined);

  // B edits five cells and inserts one: A's outline names B there only.
  const ed = await call(B.client, 'edit_cells', { ...HB, edits: [
    ...[3, 7, 11, 19, 42].map((i) => ({ op: 'edit', cell_id: `c${String(i).padStart(2, '0')}`,
      source: `x${String(i).padStart(2, '0')} = 2` })),
    { op: 'insert', after: 'c49', source: 'y = 0' }] });
  const added = ed.structuredContent.cells[5].cell_id;
  const o2 = await outlineAt(A.client, HA, ed.structuredContent.seq);
  const marks = text(o2).match(/ \(by agent-b\)/g) || [];
  assert.equal(marks.length, 6, text(o2));
  assert.match(lineOf(o2, 'c07'), /^\[7\] c07 code v[0-9a-f]{8} \(by agent-b\): x07 = 2$/);
  assert.match(lineOf(o2, added), / \(by agent-b\): y = 0$/);
  assert.equal(by(o2, 'c07'), 'agent-b');
  assert.equal(by(o2, 'c08'), undefined);
  // B's own outline names A on the 45 cells A wrote last.
  const ob = await outline(B.client, HB);
  assert.equal((text(ob).match(/ \(by agent-a\)/g) || []).length, N - 5, text(ob));
  assert.equal(by(ob, 'c07'), undefined);
  // A source read says it too (the same words).
  const src = await call(A.client, 'inspect_notebook', { ...HA, view: 'source', cell_ids: ['c07'] });
  assert.match(text(src), /c07 code v[0-9a-f]{8} \(by agent-b\)/);
  assert.equal(src.structuredContent.cells[0].by, 'agent-b');
  const perCell = ' (by agent-b)'.length;
  console.log(`# outline of ${N} cells: ${text(o0).length} characters of text before any ` +
    `edit, ${text(o1).length} after the reader's own edits of all ${N} (cell lines ` +
    `${lines(o0).length} and ${lines(o1).length}), ${text(o2).length} for ${N + 1} cells after ` +
    `another client edited 5 and inserted 1 (+${perCell} on each of those); structured ` +
    `${JSON.stringify(o1.structuredContent.cells).length} -> ` +
    `${JSON.stringify(o2.structuredContent.cells).length}; the other client's outline of ` +
    `the same ${N + 1} cells, ${N - 5} by the reader: ${text(ob).length}`);
  // Moving, clearing outputs and metadata do not make B the editor.
  await call(B.client, 'move_cells', { ...HB, cell_ids: ['c08'], after: 'TOP' });
  const md = await call(B.client, 'edit_cells', { ...HB, edits: [
    { op: 'edit', cell_id: 'c09', metadata: { tags: ['x'] } }] });
  const o3 = await outlineAt(A.client, HA, md.structuredContent.seq);
  assert.match(lineOf(o3, 'c08'), /^\[0\] c08 /);
  assert.equal(by(o3, 'c08'), undefined);
  assert.equal(by(o3, 'c09'), undefined);
});

test('the file\'s editor is "(on disk)"; the saved .ipynb holds no author', async () => {
  await call(A.client, 'save_notebook', HA);
  const raw = fs.readFileSync(NB, 'utf8');
  assert.doesNotMatch(raw, /agent-[ab]|"by"/);
  validateNotebook(NB);
  const nb = JSON.parse(raw);
  nb.cells.find((c) => c.id === 'c20').source = 'x20 = 3';
  fs.writeFileSync(NB + '.tmp', JSON.stringify(nb, null, 1) + '\n');
  fs.renameSync(NB + '.tmp', NB);
  let seen = null;
  for (let i = 0; i < 100 && !seen; i++) {
    const o = await outline(A.client, HA);
    if (by(o, 'c20') === 'disk') seen = o;
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(seen, 'the merge from the file never named disk');
  assert.match(lineOf(seen, 'c20'), / \(on disk\): x20 = 3$/);
  assert.equal(by(seen, 'c07'), 'agent-b');
});

test('who last edited each cell outlives a daemon SIGKILL', async () => {
  const before = text(await outline(A.client, HA));
  const daemons = () => processesOf(world).filter((p) =>
    path.basename(p.cmd.split(' ')[0]) === 'runtimed').map((p) => p.pid);
  const [d1] = daemons();
  assert.ok(d1, 'no daemon');
  process.kill(d1, 'SIGKILL');
  await waitFor(() => !daemons().includes(d1), 5000);
  for (let i = 0; i < 100; i++) {
    const o = await callRaw(A.client, 'inspect_notebook', HA);
    if (o.isError) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  let c;
  for (let i = 0; i < 50; i++) {
    c = await callRaw(A.client, 'connect_notebook', { path: NB });
    if (!c.isError) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(c.isError, false, text(c));
  HA = { notebook_handle: c.structuredContent.notebook_handle };
  const o = await outline(A.client, HA);
  const marks = (t) => t.split('\n').filter((l) => /\((by|on) /.test(l))
    .map((l) => l.replace(/ v[0-9a-f]{8}/, ''));
  assert.deepEqual(marks(text(o)), marks(before));
  assert.equal(by(o, 'c07'), 'agent-b');
  assert.equal(by(o, 'c20'), 'disk');
  assert.equal(by(o, 'c00'), undefined);
});
