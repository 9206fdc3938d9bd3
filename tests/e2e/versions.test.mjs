// SPDX-License-Identifier: ISC
// versions.test.mjs: two agents, each its own runtimed-mcp (the proxy an
// agent spawns) driven by the official MCP TypeScript SDK client with its
// own clientInfo, on one notebook and a real ipykernel: they race to edit
// one cell with the same expect_version (exactly one wins, the other gets
// edit_conflict with the winner's version), then each runs a cell and
// get_results without an execution_id names both.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  call, callRaw, connect, processesOf, removeWorld, runAndWait,
  sanitizerReports, stopDaemon, waitFor, privateWorld,
} from './lib.mjs';

test('two agents: the expect_version race and who ran what', { timeout: 240000 }, async () => {
  const world = privateWorld('versions');
  const file = path.join(world.dir, 'race.ipynb');
  let one, two;
  try {
    one = await connect(world, 'agent-one');
    two = await connect(world, 'agent-two');
    const c = await call(one.client, 'create_notebook', { path: file });
    const t1 = { notebook_handle: c.structuredContent.notebook_handle };
    const e = await call(one.client, 'edit_cells', { ...t1, edits: [
      { op: 'insert', after: 'BOTTOM', source: 'v = 0' }] });
    const cell = e.structuredContent.cells[0].cell_id;
    const version = e.structuredContent.cells[0].version;
    assert.match(version, /^[0-9a-f]{8}$/);
    const j = await call(two.client, 'connect_notebook', { path: file });
    const t2 = { notebook_handle: j.structuredContent.notebook_handle };
    assert.equal(j.structuredContent.cells[0].version, version);

    const [r1, r2] = await Promise.all([
      callRaw(one.client, 'edit_cells', { ...t1, edits: [
        { op: 'edit', cell_id: cell, source: 'v = 1', expect_version: version }] }),
      callRaw(two.client, 'edit_cells', { ...t2, edits: [
        { op: 'edit', cell_id: cell, source: 'v = 2', expect_version: version }] }),
    ]);
    const won = [r1, r2].filter((r) => !r.isError);
    const lost = [r1, r2].filter((r) => r.isError);
    assert.equal(won.length, 1, 'exactly one edit wins');
    assert.equal(lost.length, 1);
    const err = lost[0].structuredContent.error;
    assert.equal(err.code, 'edit_conflict');
    assert.equal(err.version, won[0].structuredContent.cells[0].version);
    assert.equal(err.source, won[0] === r1 ? 'v = 1' : 'v = 2');

    const a = await runAndWait(one.client, t1, [cell]);
    const b = await runAndWait(two.client, t2, [cell]);
    const list = await call(two.client, 'get_results', t2);
    const runs = list.structuredContent.runs;
    assert.equal(runs[0].execution_id, b.execution_id);
    assert.equal(runs[0].client_name, 'agent-two');
    assert.equal(runs[1].execution_id, a.execution_id);
    assert.equal(runs[1].client_name, 'agent-one');
    assert.notEqual(runs[0].session, runs[1].session);
  } finally {
    for (const m of [one, two]) if (m) await m.client.close().catch(() => {});
    const stop = stopDaemon(world);
    assert.equal(stop.status, 0, `runtimed stop: ${stop.stderr}${stop.stdout}`);
    const left = await waitFor(() => processesOf(world).length === 0 ? true : null, 15000);
    assert.ok(left, `processes left behind: ${JSON.stringify(processesOf(world))}`);
    assert.deepEqual(sanitizerReports(world), []);
    removeWorld(world);
  }
});
