// SPDX-License-Identifier: ISC
// worker-undo.test.mjs: an agent undoes its own turn (issue 40 item 5,
// docs/decisions/074).  Two MCP clients through the real runtimed-mcp
// proxy, worker and daemon on one notebook: A's batch is listed, its
// undo is refused with undo_conflict naming the cell B changed later,
// A's undo of a batch touching only its own cells puts them back (the
// saved .ipynb too), the revert is itself a batch that can be undone,
// and the batches and their undo outlive a daemon SIGKILL.  Prints what
// a list and an undo cost in characters.
//
// Environment: RUNTIMED_MCP, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR
// (worker-undo.sh).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  call, callRaw, connect, killWorld, privateWorld, processesOf, removeWorld,
  sanitizerReports, stopDaemon, validateNotebook, waitFor,
} from '../e2e/lib.mjs';

const world = privateWorld('undo');
let A, B, NB;

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function fails(client, args, code) {
  const r = await callRaw(client, 'edit_cells', args);
  assert.equal(r.isError, true, `edit_cells should fail with ${code}: ${text(r)}`);
  assert.equal(r.structuredContent.error.code, code, JSON.stringify(r.structuredContent.error));
  return r;
}

async function sources(client, h) {
  const r = await call(client, 'inspect_notebook', { notebook_handle: h, view: 'source' });
  return r.structuredContent.cells.map((c) => [c.cell_id, c.source]);
}

function fileSources(file) {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  return nb.cells.map((c) => [c.id, Array.isArray(c.source) ? c.source.join('') : c.source]);
}

let HA, HB, ids;

before(async () => {
  A = await connect(world, 'agent-a');
  B = await connect(world, 'agent-b');
  NB = path.join(world.dir, 'undo.ipynb');
  const made = (await call(A.client, 'create_notebook', { path: NB })).structuredContent;
  HA = { notebook_handle: made.notebook_handle };
  const e = await call(A.client, 'edit_cells', { ...HA, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'one = 1' },
    { op: 'insert', after: 'BOTTOM', source: 'two = 2' },
    { op: 'insert', after: 'BOTTOM', source: 'three = 3' },
  ] });
  ids = e.structuredContent.cells.map((c) => c.cell_id);
  await call(A.client, 'save_notebook', HA);
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

test('edit_cells lists undo in its schema', async () => {
  const tools = (await A.client.listTools()).tools;
  const ec = tools.find((t) => t.name === 'edit_cells');
  assert.ok(ec.inputSchema.properties.undo, JSON.stringify(ec.inputSchema));
  assert.equal(ec.inputSchema.required, undefined);
});

test('bad undo arguments are refused and change nothing', async () => {
  const before = await sources(A.client, HA.notebook_handle);
  await fails(A.client, { ...HA, undo: 0 }, 'invalid_argument');
  await fails(A.client, { ...HA, undo: 'b0' }, 'invalid_argument');
  await fails(A.client, { ...HA, undo: 'nope' }, 'invalid_argument');
  await fails(A.client, { ...HA, undo: 1, edits: [{ op: 'delete', cell_id: 0 }] }, 'invalid_argument');
  await fails(A.client, { ...HA, undo: 'b999999' }, 'invalid_argument');
  // B has made no batch of its own.
  await fails(B.client, { ...HB, undo: 1 }, 'invalid_argument');
  assert.deepEqual(await sources(A.client, HA.notebook_handle), before);
});

test('another client\'s later edit refuses the undo, naming the cell; an undo of only its own cells goes through', async () => {
  // A edits cells 1 and 2 in one batch, then cell 3 in another.
  await call(A.client, 'edit_cells', { ...HA, edits: [
    { op: 'edit', cell_id: ids[0], source: 'one = 10' },
    { op: 'edit', cell_id: ids[1], source: 'two = 20' }] });
  // B edits cell 2 later.
  await call(B.client, 'edit_cells', { ...HB, edits: [
    { op: 'edit', cell_id: ids[1], source: 'two = 200' }] });
  await call(A.client, 'edit_cells', { ...HA, edits: [
    { op: 'replace', cell_id: ids[2], old_text: '3', new_text: '30' },
    { op: 'insert', after: ids[2], source: 'four = 4' }] });

  const l = await call(A.client, 'edit_cells', { ...HA, undo: 'list' });
  const batches = l.structuredContent.batches;
  console.log(`# a list of ${batches.length} batches: ${text(l).length} characters of text, ` +
    `${JSON.stringify(l.structuredContent).length} structured`);
  assert.equal(batches.length, 4, text(l));
  assert.deepEqual(batches.map((b) => b.mine), [true, false, true, true]);
  assert.equal(batches[1].client, 'agent-b');
  assert.match(text(l), /^4 batches on this notebook, newest first:\nb\d+ you 2 cells /);
  const [last, bs, edit12] = batches;

  // Its last two: the second touched cell 2, which B changed after.
  const r = await fails(A.client, { ...HA, undo: 2 }, 'undo_conflict');
  assert.match(text(r), new RegExp(`cell ${ids[1]} was changed after your batch ` +
    `${edit12.batch_id} by another client agent-b \\(batch ${bs.batch_id}\\)`));
  assert.doesNotMatch(text(r), new RegExp(`cell ${ids[0]}`));
  await fails(A.client, { ...HA, undo: edit12.batch_id }, 'undo_conflict');
  // Nothing of B's is undone: B cannot take A's batch either.
  await fails(B.client, { ...HB, undo: last.batch_id }, 'invalid_argument');
  assert.deepEqual((await sources(A.client, HA.notebook_handle)).map((c) => c[1]),
    ['one = 10', 'two = 200', 'three = 30', 'four = 4']);

  const u = await call(A.client, 'edit_cells', { ...HA, undo: 1 });
  console.log(`# an undo of one batch: ${text(u).length} characters of text, ` +
    `${JSON.stringify(u.structuredContent).length} structured`);
  assert.deepEqual(u.structuredContent.reverted, [last.batch_id]);
  assert.match(text(u), new RegExp(`^undid ${last.batch_id} as batch b\\d+`));
  assert.deepEqual(await sources(A.client, HA.notebook_handle),
    [[ids[0], 'one = 10'], [ids[1], 'two = 200'], [ids[2], 'three = 3']]);

  // The revert is a batch: undoing it redoes, the inserted cell under its id.
  const redo = await call(A.client, 'edit_cells', { ...HA, undo: u.structuredContent.batch_id });
  const s = await sources(A.client, HA.notebook_handle);
  assert.deepEqual(s.map((c) => c[1]), ['one = 10', 'two = 200', 'three = 30', 'four = 4']);
  const l2r = await call(A.client, 'edit_cells', { ...HA, undo: 'list' });
  const l2 = l2r.structuredContent.batches;
  // The redo undid the revert, so the batch it reverted stands again.
  assert.equal(l2[0].batch_id, redo.structuredContent.batch_id, text(l2r));
  assert.deepEqual(redo.structuredContent.reverted, [u.structuredContent.batch_id]);
  assert.equal(l2[1].undone_by, redo.structuredContent.batch_id, text(l2r));
  assert.equal(l2[2].batch_id, last.batch_id);
  assert.equal(l2[2].undone_by, undefined, text(l2r));
  assert.match(text(l2r), new RegExp(`\n${l2[1].batch_id} you 2 cells .*, undoes ` +
    `${last.batch_id}, undone by ${l2[0].batch_id}\n`));
  assert.equal(s[3][0], (await sources(B.client, HB.notebook_handle))[3][0]);
});

test('the batches and the undo survive a daemon SIGKILL; the revert reaches the saved file', async () => {
  // A deletes cell 1 and moves cell 3 to the top: one batch, its own cells.
  await call(A.client, 'edit_cells', { ...HA, edits: [{ op: 'delete', cell_id: ids[0] }] });
  await call(A.client, 'move_cells', { ...HA, cell_ids: [ids[2]], after: 'TOP' });
  const want = [[ids[2], 'three = 30'], [ids[1], 'two = 200']];
  assert.deepEqual((await sources(A.client, HA.notebook_handle)).slice(0, 2), want);
  const daemons = () => processesOf(world).filter((p) =>
    path.basename(p.cmd.split(' ')[0]) === 'runtimed').map((p) => p.pid);
  const [d1] = daemons();
  assert.ok(d1, 'no daemon');
  process.kill(d1, 'SIGKILL');
  await waitFor(() => !daemons().includes(d1), 5000);
  // The worker may not have read the end of its connection yet: a
  // connect before then is answered from the handle it still holds, and
  // that handle fails the next call.  Wait until the old one says so.
  for (let i = 0; i < 100; i++) {
    const o = await callRaw(A.client, 'inspect_notebook', HA);
    if (o.isError) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // The handle is gone with the daemon; the proxy's session is not.
  // (A call may find the old connection closing: retry.)
  let c;
  for (let i = 0; i < 50; i++) {
    c = await callRaw(A.client, 'connect_notebook', { path: NB });
    if (!c.isError) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(c.isError, false, text(c));
  HA = { notebook_handle: c.structuredContent.notebook_handle };
  assert.deepEqual((await sources(A.client, HA.notebook_handle)).slice(0, 2), want);
  const l = (await call(A.client, 'edit_cells', { ...HA, undo: 'list' })).structuredContent.batches;
  assert.equal(l.length, 8, JSON.stringify(l));
  // Undo the move and the delete: cell 1 is back under its id, first.
  const u = await call(A.client, 'edit_cells', { ...HA, undo: 2 });
  assert.deepEqual(u.structuredContent.reverted, [l[0].batch_id, l[1].batch_id]);
  const s = await sources(A.client, HA.notebook_handle);
  assert.deepEqual(s.map((c) => c[0]), [ids[0], ids[1], ids[2], s[3][0]]);
  assert.deepEqual(s.map((c) => c[1]), ['one = 10', 'two = 200', 'three = 30', 'four = 4']);
  await call(A.client, 'save_notebook', HA);
  assert.deepEqual(fileSources(NB), s);
  validateNotebook(NB);
});
