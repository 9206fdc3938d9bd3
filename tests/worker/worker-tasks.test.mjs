// SPDX-License-Identifier: ISC
// worker-tasks.test.mjs: run_cells as an MCP task (2025-11-25, the
// experimental tasks utility; docs/decisions/024), driven by the official
// SDK client's experimental tasks API through the real runtimed-mcp proxy,
// worker, daemon and a python3 kernel.  A task-augmented run is polled to
// completion with tasks/get and then tasks/result, which answers what
// run_cells would; another is cancelled (its kernel interrupted, another
// client's queued run goes on), and a queued one too; a third survives a worker SIGKILL while
// its tasks/result is blocked, and a daemon SIGKILL after, and still
// answers its outputs; tasks/list shows them all, in pages; a
// tasks/cancel the worker died under is not sent again, and its run
// still ends cancelled.
//
// Environment: RUNTIMED_MCP, WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR
// (worker-tasks.sh).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  call, childrenOf, connect, killWorld, outputText, privateWorld,
  processesOf, removeWorld, sanitizerReports, stopDaemon, waitFor,
} from '../e2e/lib.mjs';
import {
  CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema,
} from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';
import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';

const world = privateWorld('tasks');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let A, B, H, HB, NBID, WARM, cells;
const notes = [];

// Is the run's record in the daemon's store with this status?  (A run is
// answered before its record is on disk, decision 021.)
function recorded(execId, status) {
  const r = spawnSync('/usr/bin/python3', ['-c', `
import sqlite3, sys
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=5)
row = db.execute('select record from executions where execution_id = ?',
    (sys.argv[2],)).fetchone()
print('yes' if row and b'\\xa6status\\xa4' + sys.argv[3].encode() in row[0] else 'no')
`, path.join(world.env.RUNTIMED_STATE_DIR, 'runtimed.db'), execId, status],
  { encoding: 'utf8' });
  return r.stdout.trim() === 'yes';
}

// A task-augmented run_cells: the CreateTaskResult.
async function startTask(client, args) {
  return client.request({ method: 'tools/call', params: {
    name: 'run_cells', arguments: args, task: { ttl: 60000 } } },
  CreateTaskResultSchema, { timeout: 30000 });
}

before(async () => {
  A = await connect(world, 'tasks-a');
  B = await connect(world, 'tasks-b');
  A.client.setNotificationHandler(TaskStatusNotificationSchema,
    (n) => notes.push(n.params));
  const nb = path.join(world.dir, 'tasks.ipynb');
  const made = (await call(A.client, 'create_notebook', { path: nb })).structuredContent;
  H = { notebook_handle: made.notebook_handle };
  NBID = made.notebook_id;
  const e = await call(A.client, 'edit_cells', { ...H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time' },
    { op: 'insert', after: 'BOTTOM', source: 'time.sleep(3); print("slept")' },
    { op: 'insert', after: 'BOTTOM', source: 'time.sleep(30); print("never")' },
    { op: 'insert', after: 'BOTTOM', source: 'print("start"); time.sleep(2); print("end")' },
    { op: 'insert', after: 'BOTTOM', source: 'print("other client")' },
  ] });
  cells = e.structuredContent.cells.map((c) => c.cell_id);
  await call(A.client, 'save_notebook', H);
  HB = { notebook_handle: (await call(B.client, 'connect_notebook', { path: nb }))
    .structuredContent.notebook_handle };
  // The kernel is up before anything is timed.
  const r = await call(A.client, 'run_cells', { ...H, cell_ids: [cells[0]], wait_secs: 40 });
  assert.equal(r.structuredContent.status, 'done');
  WARM = r.structuredContent.execution_id;
});

after(async () => {
  for (const c of [A, B]) if (c) await c.client.close().catch(() => {});
  stopDaemon(world);
  await sleep(300);
  killWorld(world);
  const reports = sanitizerReports(world);
  removeWorld(world);
  assert.deepEqual(reports, [], 'sanitizer reports');
});

test('run_cells declares task support; a task is polled to its result', async () => {
  const caps = A.client.getServerCapabilities();
  assert.ok(caps.tasks?.requests?.tools?.call, JSON.stringify(caps.tasks));
  assert.ok(caps.tasks.list && caps.tasks.cancel);
  const tools = (await A.client.listTools()).tools;
  assert.equal(tools.find((t) => t.name === 'run_cells').execution?.taskSupport, 'optional');
  assert.equal(tools.find((t) => t.name === 'get_results').execution, undefined);

  const t0 = Date.now();
  const seen = [];
  let created, result;
  for await (const m of A.client.experimental.tasks.callToolStream(
    { name: 'run_cells', arguments: { ...H, cell_ids: [cells[1]] } },
    CallToolResultSchema, { timeout: 30000 })) {
    if (m.type === 'taskCreated') {
      created = m.task;
      assert.ok(Date.now() - t0 < 2500, 'the task is answered at once');
    } else if (m.type === 'taskStatus') seen.push(m.task);
    else if (m.type === 'result') result = m.result;
    else assert.fail(`stream error: ${m.error}`);
  }
  assert.equal(created.status, 'working');
  assert.match(created.taskId, /^rtk_/);
  assert.equal(created.ttl, 3600000);
  assert.equal(created.pollInterval, 1000);
  assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
  // tasks/get was polled while it ran, and said which cell.
  assert.ok(seen.length >= 2, `polled ${seen.length} times`);
  assert.ok(seen.some((t) => t.status === 'working' &&
    t.statusMessage.includes(cells[1])), JSON.stringify(seen));
  assert.equal(seen.at(-1).status, 'completed');
  assert.equal(seen.at(-1).createdAt, created.createdAt);
  // tasks/result: run_cells's result, with the related task.
  assert.equal(result.isError, false);
  assert.equal(result._meta['io.modelcontextprotocol/related-task'].taskId, created.taskId);
  const sc = result.structuredContent;
  assert.equal(sc.status, 'done');
  assert.ok(created.taskId.endsWith(sc.execution_id), 'the task id names the run');
  assert.equal(outputText(sc.cells[0]).trim(), 'slept');
  assert.match(result.content[0].text, /done/);
  // The same as get_results of that run would show, and asked again,
  // the same again.
  const gr = await call(A.client, 'get_results', { ...H, execution_id: sc.execution_id });
  assert.deepEqual(sc.cells.map(outputText), gr.structuredContent.cells.map(outputText));
  const again = await A.client.experimental.tasks.getTaskResult(created.taskId,
    CallToolResultSchema);
  assert.deepEqual(again.structuredContent, sc);
  // The end was told.
  await waitFor(() => notes.some((n) => n.taskId === created.taskId), 3000);
  const n = notes.find((x) => x.taskId === created.taskId);
  assert.equal(n?.status, 'completed', JSON.stringify(notes));

  // Unknown and foreign ids are the spec's -32602.
  await assert.rejects(A.client.experimental.tasks.getTask('nope'), /-32602/);
  await assert.rejects(B.client.experimental.tasks.getTask(created.taskId), /-32602/);
  // A plain run is no task, even named like one.
  await assert.rejects(A.client.experimental.tasks.getTask(`rtk_${NBID}_${WARM}`), /-32602/);
  assert.equal(created.taskId, `rtk_${NBID}_${sc.execution_id}`);
  // A tool without task support refuses a task: -32601.
  await assert.rejects(A.client.request({ method: 'tools/call', params: {
    name: 'list_kernels', arguments: {}, task: {} } }, CreateTaskResultSchema), /-32601/);
  // A task that cannot start fails the request with the tool's error.
  await assert.rejects(startTask(A.client, { ...H, cell_ids: ['no-such-cell'] }),
    /cell_not_found|no-such-cell/);
});

test('tasks/cancel interrupts that run only', async () => {
  const { task } = await startTask(A.client, { ...H, cell_ids: [cells[2]] });
  // Another client's run queued behind it, and another task of ours.
  const other = await call(B.client, 'run_cells', { ...HB, cell_ids: [cells[4]], wait_secs: 0 });
  assert.equal(other.structuredContent.status, 'queued');
  const queued = (await startTask(A.client, { ...H, cell_ids: [cells[4]] })).task;
  // A queued task leaves the queue at once; the rest stays.
  const q = await A.client.experimental.tasks.cancelTask(queued.taskId);
  assert.equal(q.status, 'cancelled');
  const qr = await A.client.experimental.tasks.getTaskResult(queued.taskId, CallToolResultSchema);
  assert.equal(qr.structuredContent.status, 'cancelled');
  assert.equal(qr.structuredContent.cells[0].status, 'not_run');
  assert.equal((await A.client.experimental.tasks.getTask(task.taskId)).status, 'working');
  for (let i = 0; i < 50; i++) {
    const t = await A.client.experimental.tasks.getTask(task.taskId);
    if (t.statusMessage.includes(cells[2])) break;
    await sleep(100);
  }
  const t0 = Date.now();
  const c = await A.client.experimental.tasks.cancelTask(task.taskId);
  assert.equal(c.status, 'cancelled');
  assert.ok(Date.now() - t0 < 10000, 'the kernel stopped the sleep');
  assert.equal((await A.client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
  // A terminal task cannot be cancelled again.
  await assert.rejects(A.client.experimental.tasks.cancelTask(task.taskId), /-32602/);
  const r = await A.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.equal(r.structuredContent.status, 'cancelled');
  assert.equal(r.structuredContent.cells[0].status, 'interrupted');
  assert.match(outputText(r.structuredContent.cells[0]), /KeyboardInterrupt/);
  // The other client's run was not interrupted.
  const o = await call(B.client, 'get_results', { ...HB,
    execution_id: other.structuredContent.execution_id, timeout_secs: 20 });
  assert.equal(o.structuredContent.status, 'done');
  assert.equal(outputText(o.structuredContent.cells[0]).trim(), 'other client');
});

test('a task outlives a worker SIGKILL and a daemon SIGKILL', async () => {
  const { task } = await startTask(A.client, { ...H, cell_ids: [cells[3]] });
  // tasks/result blocks; the worker dies under it.
  const blocked = A.client.experimental.tasks.getTaskResult(task.taskId,
    CallToolResultSchema, { timeout: 30000 });
  await sleep(500);
  const [w1] = childrenOf(A.transport.pid, 'runtimed-mcp-worker');
  assert.ok(w1, 'no worker');
  process.kill(w1, 'SIGKILL');
  const r = await blocked;
  const w2 = childrenOf(A.transport.pid, 'runtimed-mcp-worker')[0];
  assert.ok(w2 && w2 !== w1, 'the worker was replaced');
  assert.equal(r.structuredContent.status, 'done');
  assert.equal(outputText(r.structuredContent.cells[0]), 'start\nend\n');

  // The daemon dies too, once the record is on disk.
  assert.ok(await waitFor(() => recorded(r.structuredContent.execution_id, 'done'), 10000),
    'the finished run reached the store');
  const daemons = () => processesOf(world).filter((p) =>
    path.basename(p.cmd.split(' ')[0]) === 'runtimed').map((p) => p.pid);
  const [d1] = daemons();
  assert.ok(d1, 'no daemon');
  process.kill(d1, 'SIGKILL');
  await waitFor(() => !daemons().includes(d1), 5000);
  const got = await A.client.experimental.tasks.getTask(task.taskId);
  assert.equal(got.status, 'completed');
  const [d2] = daemons();
  assert.ok(d2 && d2 !== d1, `the daemon was replaced (${d1} -> ${d2})`);
  const r2 = await A.client.experimental.tasks.getTaskResult(task.taskId,
    CallToolResultSchema, { timeout: 30000 });
  assert.deepEqual(r2.structuredContent.cells.map(outputText), ['start\nend\n']);

  // tasks/list: this session's four tasks, newest first.
  const list = await A.client.experimental.tasks.listTasks();
  const ids = list.tasks.map((t) => t.taskId);
  assert.equal(list.tasks.length, 4, JSON.stringify(list));
  assert.equal(ids[0], task.taskId);
  assert.deepEqual(list.tasks.map((t) => t.status),
    ['completed', 'cancelled', 'cancelled', 'completed']);
  assert.deepEqual((await B.client.experimental.tasks.listTasks()).tasks, []);
  await assert.rejects(A.client.experimental.tasks.listTasks('bogus'), /-32602/);
});

test('tasks/list pages, and a worker on stdio lists only its own', async () => {
  // Its log (and a sanitizer's report) where after() looks for them.
  const transport = new StdioClientTransport({ command: process.env.WORKER,
    args: ['--log', path.join(world.dir, 'worker-c.log')],
    env: { ...world.env, RUNTIMED_MCP_PAGE_SIZE: '2' }, stderr: 'pipe' });
  const C = new Client({ name: 'tasks-c', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await C.connect(transport, { timeout: 30000 });
  try {
    const h = { notebook_handle: (await call(C, 'connect_notebook',
      { path: path.join(world.dir, 'tasks.ipynb') })).structuredContent.notebook_handle };
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await startTask(C, { ...h, cell_ids: [cells[4]] })).task.taskId);
    for (const id of ids)
      await C.experimental.tasks.getTaskResult(id, CallToolResultSchema, { timeout: 30000 });
    const p1 = await C.experimental.tasks.listTasks();
    assert.equal(p1.tasks.length, 2);
    assert.ok(p1.nextCursor, 'a second page');
    const p2 = await C.experimental.tasks.listTasks(p1.nextCursor);
    assert.equal(p2.tasks.length, 1);
    assert.equal(p2.nextCursor, undefined);
    assert.deepEqual([...p1.tasks, ...p2.tasks].map((t) => t.taskId), ids.reverse());
    assert.ok([...p1.tasks, ...p2.tasks].every((t) => t.status === 'completed'));
  } finally {
    await C.close().catch(() => {});
  }
});

test('a tasks/cancel the worker died under is not sent again; the run still ends cancelled', async () => {
  // A cell that ignores SIGINT: the interrupt does not stop it, so the
  // cancel waits (10 s) for a kernel that does not stop.
  const nb = path.join(world.dir, 'tasks.ipynb');
  const h = { notebook_handle: (await call(A.client, 'connect_notebook', { path: nb }))
    .structuredContent.notebook_handle };
  const ins = await call(A.client, 'edit_cells', { ...h, edits: [{ op: 'insert',
    after: 'BOTTOM', source: 'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)' }] });
  const cell = ins.structuredContent.cells[0].cell_id;
  const { task } = await startTask(A.client, { ...h, cell_ids: [cell] });
  for (let i = 0; i < 50; i++) {
    if ((await A.client.experimental.tasks.getTask(task.taskId)).statusMessage.includes(cell)) break;
    await sleep(100);
  }
  await sleep(300);
  const cancel = A.client.experimental.tasks.cancelTask(task.taskId, { timeout: 30000 });
  await sleep(1000);
  const [w] = childrenOf(A.transport.pid, 'runtimed-mcp-worker');
  process.kill(w, 'SIGKILL');
  await assert.rejects(cancel, /-32603.*may have taken effect/);
  // It did: the run ends cancelled once something stops it, here a
  // restart of the kernel (which alone would end it interrupted).
  assert.equal((await A.client.experimental.tasks.getTask(task.taskId)).status, 'working');
  const h2 = { notebook_handle: (await call(A.client, 'connect_notebook', { path: nb }))
    .structuredContent.notebook_handle };
  await call(A.client, 'restart_kernel', h2);
  const r = await A.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema,
    { timeout: 30000 });
  assert.equal(r.structuredContent.status, 'cancelled');
  assert.equal((await A.client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
});
