// SPDX-License-Identifier: ISC
// e2e.test.mjs: the official MCP TypeScript SDK client drives runtimed-mcp
// (the proxy an agent spawns) on a real ipykernel, with a private socket
// and state directory.  RUNTIMED_MCP names the binary (default: the one
// an in-tree build made).  Run: npm test (in tests/e2e).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  call, callRaw, childrenOf, connect, killWorld, outputText, privateWorld,
  processesOf, removeWorld, resultText, runAndWait, sanitizerReports, stopDaemon,
  validateNotebook, waitFor,
} from './lib.mjs';

const TEST_TIMEOUT = 240000;

// Insert one code cell at the bottom; returns its cell_id.
async function insert(client, target, source) {
  const r = await call(client, 'edit_cells', {
    ...target, edits: [{ op: 'insert', after: 'BOTTOM', cell_type: 'code', source }],
  });
  const id = r.structuredContent.cells[0].cell_id;
  assert.equal(typeof id, 'string');
  return id;
}

// Stop the world's daemon and check that nothing of it is left running
// and that no process logged a sanitizer report (ASan/UBSan builds).
async function teardown(world) {
  const stop = stopDaemon(world);
  assert.equal(stop.status, 0, `runtimed stop: ${stop.stderr}${stop.stdout}`);
  const left = await waitFor(() => processesOf(world).length === 0 ? true : null, 15000);
  assert.ok(left, `processes left behind: ${JSON.stringify(processesOf(world))}`);
  const reports = sanitizerReports(world);
  assert.equal(reports.length, 0, `sanitizer reports:\n${reports.join('\n')}`);
  removeWorld(world);
}

test('notebook round trip: create, edit, run twice on one kernel, save', { timeout: TEST_TIMEOUT }, async () => {
  const world = privateWorld('e2e');
  const file = path.join(world.dir, 'e2e.ipynb');
  let mcp;
  try {
    mcp = await connect(world);
    const { client } = mcp;
    const names = (await client.listTools(undefined, { timeout: 60000 })).tools.map((t) => t.name);
    for (const n of ['create_notebook', 'edit_cells', 'run_cells', 'save_notebook'])
      assert.ok(names.includes(n), `tools/list lacks ${n}: ${names}`);

    const created = await call(client, 'create_notebook', { path: file });
    const target = { notebook_handle: created.structuredContent.notebook_handle };
    assert.equal(typeof target.notebook_handle, 'string');

    const c1 = await insert(client, target, 'x = 6*7; print(x)');
    const run1 = await runAndWait(client, target, [c1]);
    assert.equal(run1.status, 'done', JSON.stringify(run1));
    assert.equal(run1.cells[0].cell_id, c1);
    assert.equal(run1.cells[0].status, 'ok');
    assert.equal(outputText(run1.cells[0]).trim(), '42');

    // A second cell sees the first one's variable: same kernel.
    const c2 = await insert(client, target, 'x + 1');
    const run2 = await runAndWait(client, target, [c2]);
    assert.equal(run2.status, 'done', JSON.stringify(run2));
    assert.equal(outputText(run2.cells[0]).trim(), '43');

    // A full result is bounded (issue 34: 100,000 characters of outputs,
    // read on by line ranges), however much a cell printed, and the
    // session goes on.
    const c3 = await insert(client, target,
      "from IPython.display import display\ndisplay({'text/plain': 'y' * 6_000_000}, raw=True)");
    const run3 = await runAndWait(client, target, [c3]);
    assert.equal(run3.status, 'done', JSON.stringify(run3));
    const full = await callRaw(client, 'get_results',
      { ...target, execution_id: run3.execution_id, full_output: true });
    assert.equal(full.isError, false, resultText(full).slice(0, 200));
    assert.ok(JSON.stringify(full).length < 250000, `${JSON.stringify(full).length} bytes`);
    assert.match(resultText(full), /start_line and end_line reads a range of lines/);
    await call(client, 'inspect_notebook', { ...target, view: 'outline' });

    // Readiness follows the kernel: it ran, so a new handle says ready.
    assert.ok(['ready', 'starting', 'not_started'].includes(created.structuredContent.readiness),
      created.structuredContent.readiness);
    const again = await call(client, 'connect_notebook', { path: file });
    assert.equal(again.structuredContent.readiness, 'ready');
    assert.equal(again.structuredContent.kernel.state, 'idle');
    await call(client, 'disconnect_notebook',
      { notebook_handle: again.structuredContent.notebook_handle });

    const saved = await call(client, 'save_notebook', target);
    assert.equal(fs.realpathSync(saved.structuredContent.path), fs.realpathSync(file));
    validateNotebook(file);
    const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
    const sources = nb.cells.map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));
    assert.deepEqual(sources.slice(0, 2), ['x = 6*7; print(x)', 'x + 1']);
    assert.equal(sources.length, 3);

    await mcp.client.close();
    mcp = null;
    await teardown(world);
  } finally {
    if (mcp) await mcp.client.close().catch(() => {});
    killWorld(world);
  }
});

test('a killed worker is replaced; the connection and the next call survive', { timeout: TEST_TIMEOUT }, async () => {
  const world = privateWorld('e2e-restart');
  let mcp;
  try {
    mcp = await connect(world);
    const { client, transport } = mcp;
    const proxy = transport.pid;
    const created = await call(client, 'create_notebook', {});
    const target = { notebook_handle: created.structuredContent.notebook_handle };
    const cell = await insert(client, target, 'import time; time.sleep(30)');

    const [w1] = childrenOf(proxy, 'runtimed-mcp-worker');
    assert.ok(w1, 'no runtimed-mcp-worker child of the proxy');

    // A run in flight when the worker dies: its outcome is unknown.
    const pending = callRaw(client, 'run_cells', { ...target, cell_ids: [cell], wait_secs: 40 });
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(w1, 'SIGKILL');
    const lost = await pending;
    assert.equal(lost.isError, true, JSON.stringify(lost));
    assert.equal(lost.structuredContent.error.code, 'outcome_unknown');

    // The proxy started another worker and initialized it by itself.
    const listed = await call(client, 'list_notebooks', {});
    assert.ok(Array.isArray(listed.structuredContent.notebooks));
    const w2 = await waitFor(() => childrenOf(proxy, 'runtimed-mcp-worker')[0], 10000);
    assert.ok(w2 && w2 !== w1, `worker not replaced (${w1} -> ${w2})`);

    // The old handle belongs to the dead worker: expired, never reused.
    const stale = await callRaw(client, 'inspect_notebook', target);
    assert.equal(stale.isError, true);
    assert.equal(stale.structuredContent.error.code, 'attachment_expired');

    // Work goes on in the new worker.
    const again = await call(client, 'create_notebook', {});
    const t2 = { notebook_handle: again.structuredContent.notebook_handle };
    const c2 = await insert(client, t2, 'print("after restart")');
    const run = await runAndWait(client, t2, [c2]);
    assert.equal(outputText(run.cells[0]).trim(), 'after restart');

    await mcp.client.close();
    mcp = null;
    await teardown(world);
  } finally {
    if (mcp) await mcp.client.close().catch(() => {});
    killWorld(world);
  }
});

test('the proxy lists and answers its own reconnect tool through the SDK', { timeout: TEST_TIMEOUT }, async () => {
  const world = privateWorld('e2e-reconnect');
  let mcp;
  try {
    mcp = await connect(world);
    const { client, transport } = mcp;
    const tools = (await client.listTools(undefined, { timeout: 60000 })).tools;
    const rc = tools.find((t) => t.name === 'reconnect');
    assert.ok(rc, `tools/list lacks reconnect: ${tools.map((t) => t.name)}`);
    assert.equal(rc.inputSchema.type, 'object');
    assert.ok(rc.description.length >= 20);

    const created = await call(client, 'create_notebook', {});
    const target = { notebook_handle: created.structuredContent.notebook_handle };
    const [w1] = childrenOf(transport.pid, 'runtimed-mcp-worker');
    // The SDK validates structuredContent against the listed outputSchema.
    const r = await call(client, 'reconnect', {});
    assert.equal(r.structuredContent.previous_worker_pid, w1);
    assert.notEqual(r.structuredContent.worker_pid, w1);
    assert.deepEqual(childrenOf(transport.pid, 'runtimed-mcp-worker')
      .filter((p) => p === r.structuredContent.worker_pid), [r.structuredContent.worker_pid]);
    const stale = await callRaw(client, 'inspect_notebook', target);
    assert.equal(stale.structuredContent?.error?.code, 'attachment_expired');
    // The notebook itself lives on in the daemon.
    const listed = await call(client, 'list_notebooks', {});
    assert.ok(listed.structuredContent.notebooks.some(
      (n) => n.notebook_id === created.structuredContent.notebook_id));

    await mcp.client.close();
    mcp = null;
    await teardown(world);
  } finally {
    if (mcp) await mcp.client.close().catch(() => {});
    killWorld(world);
  }
});
