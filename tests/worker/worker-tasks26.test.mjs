// SPDX-License-Identifier: ISC
// worker-tasks26.test.mjs: the tasks extension of protocol 2026-07-28
// (SEP-2663, io.modelcontextprotocol/tasks; docs/decisions/069), driven
// by a raw JSON-RPC client (the SDK has no API for it) through the real
// runtimed-mcp proxy, worker, daemon and a python3 kernel.  A client that
// declares the extension gets a task handle from run_cells when the run
// outlasts the wait, polls it with tasks/get to the result, answers a
// cell's input() with tasks/update, declines one, cancels a run, and
// polls on across a worker SIGKILL; legacy params.task is ignored; a
// 2026 client without the extension, and a 2025-11-25 client, are
// refused the extension's methods and keep today's shapes.
//
// Environment: RUNTIMED_MCP, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR
// (worker-tasks26.sh).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  childrenOf, killWorld, privateWorld, removeWorld, sanitizerReports,
  stopDaemon,
} from '../e2e/lib.mjs';

const world = privateWorld('tasks26');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const V = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const STRUCT = { experimental: { 'io.runtimed/structured': {} } };
// Per-request metadata: with the extension (and structured results, to
// assert on), without it, and with it but lean (what a model reads).
const meta = (caps) => ({ 'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': caps });
const M_EXT = meta({ ...STRUCT, extensions: { [EXT]: {} } });
const M_LEAN = meta({ extensions: { [EXT]: {} } });
const M_PLAIN = meta({ ...STRUCT });
const M_PLAIN_LEAN = meta({});

// A raw JSON-RPC client on the proxy's stdio: one request, one answer.
class Raw {
  constructor() {
    this.p = spawn(process.env.RUNTIMED_MCP, [], { env: world.env,
      stdio: ['pipe', 'pipe', 'inherit'] });
    this.next = 1;
    this.waiting = new Map();
    this.notes = [];
    this.lines = new Map();
    let buf = '';
    this.p.stdout.setEncoding('utf8');
    this.p.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim() === '') continue;
        const m = JSON.parse(line);
        if (m.id !== undefined && this.waiting.has(m.id)) {
          this.lines.set(m.id, line.length);
          this.waiting.get(m.id)(m);
          this.waiting.delete(m.id);
        } else this.notes.push(m);
      }
    });
  }

  // The whole answer ({result} or {error}) and its length on the wire.
  async send(method, params, ms = 60000) {
    const id = this.next++;
    const p = new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${method}: no answer in ${ms} ms`)), ms);
      t.unref();	// a listen is never answered
      this.waiting.set(id, (m) => { clearTimeout(t); resolve(m); });
    });
    this.p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    const m = await p;
    m.chars = this.lines.get(id);
    return m;
  }

  async ok(method, params, ms) {
    const m = await this.send(method, params, ms);
    // TASKS26_DUMP=file keeps the extension's answers, for a schema check.
    if (process.env.TASKS26_DUMP && m.result && (method.startsWith('tasks/') ||
      m.result.resultType === 'task'))
      fs.appendFileSync(process.env.TASKS26_DUMP, JSON.stringify({ method, result: m.result }) + '\n');
    assert.ok(m.result, `${method}: ${JSON.stringify(m.error)}`);
    return m.result;
  }

  async tool(name, args, m = M_EXT, extra = {}) {
    return this.ok('tools/call', { name, arguments: args, _meta: m, ...extra });
  }

  close() {
    this.p.stdin.end();
    return new Promise((r) => { this.p.on('exit', r); setTimeout(r, 5000); });
  }
}

let C, H, cells;
const figures = [];

function text(r) {
  return (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// tasks/get until the task's status is one of want (or 20 s pass).
async function pollTo(id, want, m = M_EXT, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const g = await C.send('tasks/get', { taskId: id, _meta: m });
    assert.ok(g.result, JSON.stringify(g.error));
    if (process.env.TASKS26_DUMP)
      fs.appendFileSync(process.env.TASKS26_DUMP, JSON.stringify({ method: 'tasks/get', result: g.result }) + '\n');
    if (want.includes(g.result.status) || Date.now() > deadline) return g;
    await sleep(200);
  }
}

before(async () => {
  C = new Raw();
  const made = await C.tool('create_notebook', { path: path.join(world.dir, 't26.ipynb') });
  H = { notebook_handle: made.structuredContent.notebook_handle };
  const e = await C.tool('edit_cells', { ...H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time' },
    { op: 'insert', after: 'BOTTOM', source: 'time.sleep(3); print("slept")' },
    { op: 'insert', after: 'BOTTOM', source: 'a = input("first? "); b = input("second? "); print("got", a, b)' },
    { op: 'insert', after: 'BOTTOM', source: 'time.sleep(30); print("never")' },
    { op: 'insert', after: 'BOTTOM', source: 'print("quick")' },
    { op: 'insert', after: 'BOTTOM', source: 'x = input("never answered? "); print("no")' },
  ] });
  cells = e.structuredContent.cells.map((c) => c.cell_id);
  const r = await C.tool('run_cells', { ...H, cell_ids: [cells[0]], wait_secs: 40 });
  assert.equal(r.structuredContent.status, 'done', text(r));
});

after(async () => {
  if (C) await C.close();
  stopDaemon(world);
  await sleep(300);
  killWorld(world);
  const reports = sanitizerReports(world);
  if (figures.length) console.log(figures.join('\n'));
  removeWorld(world);
  assert.deepEqual(reports, [], 'sanitizer reports');
});

test('server/discover declares the extension, not the 2025 tasks capability', async () => {
  const d = await C.ok('server/discover', { _meta: M_PLAIN });
  assert.deepEqual(d.capabilities.extensions, { [EXT]: {} });
  assert.equal(d.capabilities.tasks, undefined);
});

test('a run done within the wait is a plain result; legacy params.task is ignored', async () => {
  const r = await C.tool('run_cells', { ...H, cell_ids: [cells[4]], wait_secs: 20 },
    M_EXT, { task: { ttl: 60000 } });
  assert.equal(r.resultType, 'complete');
  assert.equal(r.task, undefined, 'no 2025 CreateTaskResult');
  assert.equal(r.structuredContent.status, 'done');
  assert.match(text(r), /quick/);
});

test('a run that outlasts the wait is a task, polled to its result', async () => {
  const t = await C.tool('run_cells', { ...H, cell_ids: [cells[1]], wait_secs: 0 },
    M_EXT, { task: { ttl: 5 } });
  assert.equal(t.resultType, 'task');
  assert.match(t.taskId, /^rtk_/);
  assert.equal(t.status, 'working');
  assert.equal(t.ttlMs, 3600000);
  assert.equal(t.pollIntervalMs, 1000);
  assert.equal(t.ttl, undefined);
  assert.equal(t.content, undefined);
  assert.ok(!Number.isNaN(Date.parse(t.createdAt)));
  assert.ok(!Number.isNaN(Date.parse(t.lastUpdatedAt)));
  const w = await C.send('tasks/get', { taskId: t.taskId, _meta: M_EXT });
  assert.equal(w.result.resultType, 'complete');
  assert.equal(w.result.status, 'working');
  assert.equal(w.result.result, undefined);
  // What a model reads: a poll that is still working, then a
  // get_results of the same run (lean, as a model's host asks).
  const eid = t.taskId.split('_').at(-1);
  const wl = await C.send('tasks/get', { taskId: t.taskId, _meta: M_LEAN });
  const gl = await C.send('tools/call', { name: 'get_results', arguments: { ...H,
    execution_id: eid, timeout_secs: 0 }, _meta: M_PLAIN_LEAN });
  figures.push(`chars: tasks/get working ${wl.chars}, get_results running ${gl.chars}`);

  const g = await pollTo(t.taskId, ['completed', 'cancelled']);
  assert.equal(g.result.status, 'completed', JSON.stringify(g.result));
  assert.equal(g.result.resultType, 'complete');
  const res = g.result.result;
  assert.equal(res.isError, false);
  assert.equal(res.structuredContent.status, 'done');
  assert.ok(t.taskId.endsWith(res.structuredContent.execution_id));
  assert.equal(res.structuredContent.cells[0].outputs[0].text, 'slept\n');
  // The same outputs as get_results; asked again, the same again.
  const gr = await C.tool('get_results', { ...H, execution_id: eid });
  assert.deepEqual(res.structuredContent.cells, gr.structuredContent.cells);
  const again = await C.ok('tasks/get', { taskId: t.taskId, _meta: M_EXT });
  assert.deepEqual(again.result, res);
  const dl = await C.send('tasks/get', { taskId: t.taskId, _meta: M_LEAN });
  assert.equal(dl.result.result.structuredContent, undefined, 'lean when not asked');
  assert.match(text(dl.result.result), /slept/);
  const gd = await C.send('tools/call', { name: 'get_results', arguments: { ...H,
    execution_id: eid, full: true }, _meta: M_PLAIN_LEAN });
  figures.push(`chars: tasks/get completed ${dl.chars}, get_results done (full) ${gd.chars}`);
  // No notifications/tasks/status for the extension's client.
  assert.ok(!C.notes.some((n) => n.method === 'notifications/tasks/status'),
    JSON.stringify(C.notes.map((n) => n.method)));
});

test('input() is answered through the task with tasks/update', async () => {
  const t = await C.tool('run_cells', { ...H, cell_ids: [cells[2]], wait_secs: 10 });
  assert.equal(t.resultType, 'task', JSON.stringify(t));
  const g1 = await pollTo(t.taskId, ['input_required']);
  assert.equal(g1.result.status, 'input_required');
  const keys = Object.keys(g1.result.inputRequests);
  assert.equal(keys.length, 1);
  const req = g1.result.inputRequests[keys[0]];
  assert.equal(req.method, 'elicitation/create');
  assert.equal(req.params.mode, 'form');
  assert.match(req.params.message, /first\? /);
  assert.equal(req.params.requestedSchema.properties.input.type, 'string');
  assert.deepEqual(req.params.requestedSchema.required, ['input']);
  // Polled again: the same key.
  const g2 = await C.ok('tasks/get', { taskId: t.taskId, _meta: M_EXT });
  assert.deepEqual(Object.keys(g2.inputRequests), keys);
  // A key not asked is ignored; a bad answer to the one asked refused.
  const u0 = await C.ok('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { 'stdin-1': { action: 'accept', content: { input: 'no' } } } });
  assert.deepEqual(u0, { resultType: 'complete' });
  const bad = await C.send('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { [keys[0]]: { action: 'accept', content: { name: 'x' } } } });
  assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
  assert.equal((await C.ok('tasks/get', { taskId: t.taskId, _meta: M_EXT })).status,
    'input_required');
  const u = await C.ok('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { [keys[0]]: { action: 'accept', content: { input: 'Luca' } } } });
  assert.deepEqual(u, { resultType: 'complete' });
  // The second question has a key of its own.
  const g3 = await pollTo(t.taskId, ['input_required', 'completed'].filter(Boolean));
  let g = g3;
  for (let i = 0; i < 50 && g.result.status === 'input_required' &&
    Object.keys(g.result.inputRequests)[0] === keys[0]; i++) {
    await sleep(100);
    g = await C.send('tasks/get', { taskId: t.taskId, _meta: M_EXT });
  }
  assert.equal(g.result.status, 'input_required', JSON.stringify(g.result));
  const k2 = Object.keys(g.result.inputRequests);
  assert.equal(k2.length, 1);
  assert.notEqual(k2[0], keys[0], 'a new key for a new question');
  assert.match(g.result.inputRequests[k2[0]].params.message, /second\? /);
  // The answer to the first question, again, is ignored.
  await C.ok('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { [keys[0]]: { action: 'accept', content: { input: 'again' } } } });
  await C.ok('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { [k2[0]]: { action: 'accept', content: { input: 'Butler' } } } });
  const d = await pollTo(t.taskId, ['completed', 'cancelled']);
  assert.equal(d.result.status, 'completed');
  // (ipykernel does not echo a prompt to stdout.)
  assert.equal(d.result.result.structuredContent.cells[0].outputs.map((o) => o.text).join(''),
    'got Luca Butler\n');
});

test('declining the input ends the run cancelled', async () => {
  const t = await C.tool('run_cells', { ...H, cell_ids: [cells[5]], wait_secs: 10 });
  assert.equal(t.resultType, 'task');
  const g = await pollTo(t.taskId, ['input_required']);
  const [key] = Object.keys(g.result.inputRequests);
  await C.ok('tasks/update', { taskId: t.taskId, _meta: M_EXT,
    inputResponses: { [key]: { action: 'decline' } } }, 30000);
  const d = await pollTo(t.taskId, ['cancelled', 'completed']);
  assert.equal(d.result.status, 'cancelled');
  assert.equal(d.result.result, undefined);
});

test('tasks/cancel interrupts the run; acknowledged again once ended', async () => {
  const t = await C.tool('run_cells', { ...H, cell_ids: [cells[3]], wait_secs: 0 });
  assert.equal(t.resultType, 'task');
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline &&
    !(await C.ok('tasks/get', { taskId: t.taskId, _meta: M_EXT })).statusMessage.includes(cells[3]))
    await sleep(100);
  const t0 = Date.now();
  const c = await C.ok('tasks/cancel', { taskId: t.taskId, _meta: M_EXT }, 30000);
  assert.deepEqual(c, { resultType: 'complete' });
  const g = await pollTo(t.taskId, ['cancelled', 'completed']);
  assert.equal(g.result.status, 'cancelled');
  assert.ok(Date.now() - t0 < 12000, 'the kernel stopped the sleep');
  const r = await C.tool('get_results', { ...H, execution_id: t.taskId.split('_').at(-1) });
  assert.equal(r.structuredContent.status, 'cancelled');
  assert.equal(r.structuredContent.cells[0].status, 'interrupted', JSON.stringify(r));
  assert.deepEqual(await C.ok('tasks/cancel', { taskId: t.taskId, _meta: M_EXT }),
    { resultType: 'complete' });
});

test('what is refused, and to whom', async () => {
  // A 2026 client without the extension: -32021 naming it.
  for (const m of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    const r = await C.send(m, { taskId: 'rtk_0_0', inputResponses: {}, _meta: M_PLAIN });
    assert.equal(r.error?.code, -32021, `${m}: ${JSON.stringify(r)}`);
    assert.deepEqual(r.error.data.requiredCapabilities, { extensions: { [EXT]: {} } });
  }
  const sl = await C.send('subscriptions/listen', { _meta: M_PLAIN,
    notifications: { taskIds: ['rtk_0_0'] } });
  assert.equal(sl.error?.code, -32021, JSON.stringify(sl));
  assert.deepEqual(sl.error.data.requiredCapabilities, { extensions: { [EXT]: {} } });
  // Declared: acknowledged, with no taskIds (none are sent).
  const ack = C.notes.length;
  const sl2 = C.send('subscriptions/listen', { _meta: M_EXT,
    notifications: { taskIds: ['rtk_0_0'] } });
  for (let i = 0; i < 50 && !C.notes.slice(ack).some((n) =>
    n.method === 'notifications/subscriptions/acknowledged'); i++) await sleep(100);
  const a = C.notes.slice(ack).find((n) => n.method === 'notifications/subscriptions/acknowledged');
  assert.ok(a, 'acknowledged');
  assert.equal(a.params.notifications.taskIds, undefined);
  sl2.catch(() => {});
  // ... whose run_cells is never a task.
  const p = await C.tool('run_cells', { ...H, cell_ids: [cells[4]], wait_secs: 0 }, M_PLAIN);
  assert.equal(p.resultType, 'complete');
  assert.ok(p.structuredContent?.execution_id, JSON.stringify(p));
  // The extension has no tasks/list or tasks/result.
  for (const m of ['tasks/list', 'tasks/result']) {
    const r = await C.send(m, { taskId: 'rtk_0_0', _meta: M_EXT });
    assert.equal(r.error?.code, -32601, `${m}: ${JSON.stringify(r)}`);
  }
  const nf = await C.send('tasks/get', { taskId: 'rtk_00_11', _meta: M_EXT });
  assert.equal(nf.error?.code, -32602);
  const nb = await C.send('tasks/get', { taskId: 'nonsense', _meta: M_EXT });
  assert.equal(nb.error?.code, -32602);
  const nu = await C.send('tasks/update', { taskId: 'rtk_00_11', inputResponses: [], _meta: M_EXT });
  assert.equal(nu.error?.code, -32602);
  // A 2025-11-25 request: no tasks/update; tasks/list as before.
  const lu = await C.send('tasks/update', { taskId: 'rtk_00_11', inputResponses: {} });
  assert.equal(lu.error?.code, -32601);
  const ll = await C.send('tasks/list', {});
  assert.ok(Array.isArray(ll.result?.tasks), JSON.stringify(ll));
});

test('a task outlives a worker SIGKILL between its creation and tasks/get', async () => {
  const t = await C.tool('run_cells', { ...H, cell_ids: [cells[1]], wait_secs: 0 });
  assert.equal(t.resultType, 'task');
  const [w1] = childrenOf(C.p.pid, 'runtimed-mcp-worker');
  assert.ok(w1, 'no worker');
  process.kill(w1, 'SIGKILL');
  await sleep(300);
  const g = await pollTo(t.taskId, ['completed', 'cancelled']);
  const [w2] = childrenOf(C.p.pid, 'runtimed-mcp-worker');
  assert.ok(w2 && w2 !== w1, 'the worker was replaced');
  assert.equal(g.result.status, 'completed', JSON.stringify(g.result));
  assert.equal(g.result.result.structuredContent.cells[0].outputs[0].text, 'slept\n');
});
