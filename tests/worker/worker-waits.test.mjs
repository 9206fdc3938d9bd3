// SPDX-License-Identifier: ISC
// worker-waits.test.mjs: the real runtimed-mcp-worker on stdio, driven by
// the official MCP TypeScript SDK client, against the real daemon and a
// python3 kernel.  A change wait after a cursor is not woken by an
// autosave unless it asks for saves (changes), and says which cells
// changed and how; progress of waits says how long against the bound,
// which cell runs and its latest output line; a waiter pushed only the
// cells that changed sees what a fresh read shows; a call by notebook_id
// says which address owner it retained; list_notebooks counts right after
// a disconnect; a waiter that waits again asks the daemon for the content
// once, not once a change.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-waits.sh).

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
const { T, env, SAN } = workerWorld('wwaits');
fs.mkdirSync(path.join(T, 'work'));

async function worker(name, extra = {}) {
  const transport = new StdioClientTransport({ command: WORKER, args: [],
    env: { ...env, ...extra }, stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function raw(client, name, args, opts = {}) {
  return client.callTool({ name, arguments: args }, undefined,
    { timeout: 60000, ...opts });
}

async function ok(client, name, args, opts) {
  const r = await raw(client, name, args, opts);
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text, r };
}

async function fails(client, name, args, code) {
  const r = await raw(client, name, args);
  assert.equal(r.isError, true, `${name} should fail with ${code}`);
  assert.equal(r.structuredContent.error.code, code,
    `${name}: ${JSON.stringify(r.structuredContent.error)}`);
  return r.structuredContent.error;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let A, B, H, HB, NB, cells;

before(async () => {
  A = await worker('waits-a');
  B = await worker('waits-b');
  NB = path.join(T, 'work', 'waits.ipynb');
  H = (await ok(A, 'create_notebook', { path: NB })).sc.notebook_handle;
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'a = 1' },
    { op: 'insert', after: 'BOTTOM', source: 'print("b")' },
    { op: 'insert', after: 'BOTTOM', source: 'c = 3' },
  ] });
  cells = e.sc.cells.map((c) => c.cell_id);
  await ok(A, 'save_notebook', { notebook_handle: H });
  HB = (await ok(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
  // The kernel is up before the tests time anything.
  const r = await ok(A, 'run_cells', { notebook_handle: H, cell_ids: [cells[0]], wait_secs: 40 });
  assert.equal(r.sc.status, 'done');
});

after(async () => {
  for (const c of [A, B]) if (c) await c.close().catch(() => {});
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
  await sleep(500);
  const dir = path.dirname(SAN);
  const reports = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(SAN)));
  for (const f of reports) {
    console.log(`# sanitizer report ${f}:\n${fs.readFileSync(path.join(dir, f), 'utf8').slice(0, 3000)}`);
    fs.rmSync(path.join(dir, f));
  }
  assert.equal(reports.length, 0, 'sanitizer reports');
});

// Our own edit, then a wait: the autosave 2 s later is not a change
// unless asked for.
test('an autosave does not end a wait unless it asks for saves', async () => {
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'edit', cell_id: cells[2], source: 'c = 33' }] });
  const t0 = Date.now();
  const w = await ok(A, 'inspect_notebook', { notebook_handle: H, after: e.sc.cursor, timeout_secs: 4 });
  assert.equal(w.sc.outcome, 'timed_out', `woken by ${w.text}`);
  assert.ok(Date.now() - t0 >= 3800);
  // The save happened meanwhile, and the new cursor is past it.
  assert.equal(w.sc.dirty, false, 'autosaved during the wait');
  const again = await ok(A, 'inspect_notebook', { notebook_handle: H, after: w.sc.cursor, changes: ['saves'] });
  assert.equal(again.sc.outcome, 'unchanged');

  // Asked for saves: the autosave ends the wait and says so.
  const e2 = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'edit', cell_id: cells[2], source: 'c = 3' }] });
  const s = await ok(A, 'inspect_notebook', { notebook_handle: H, after: e2.sc.cursor, timeout_secs: 10,
    changes: ['saves'] });
  assert.equal(s.sc.outcome, 'changed');
  assert.match(s.text, /\bsaved\b/);
  assert.equal(s.sc.changes.saved, true);

  await fails(A, 'inspect_notebook', { notebook_handle: H, after: e2.sc.cursor, changes: ['bogus'] }, 'invalid_argument');
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: e2.sc.cursor, changes: [] }, 'invalid_argument');
  await fails(A, 'inspect_notebook', { notebook_handle: H, after: e2.sc.cursor, changes: 'content' }, 'invalid_argument');
});

test('the kernel writing language_info does not wake a wait for content (issue 39)', async () => {
  // A new notebook records its kernel's kernelspec and language_info
  // once one starts: kernel bookkeeping, not a content change.
  const nb = path.join(T, 'work', 'langinfo.ipynb');
  const h = (await ok(A, 'create_notebook', { path: nb })).sc.notebook_handle;
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'x = 1' }] });
  const w = ok(A, 'inspect_notebook', { notebook_handle: h, after: e.sc.cursor, timeout_secs: 6,
    changes: ['content'] });
  const hb = (await ok(B, 'connect_notebook', { path: nb })).sc.notebook_handle;
  const r = await ok(B, 'run_cells', { notebook_handle: hb, cell_ids: [e.sc.cells[0].cell_id],
    wait_secs: 40 });
  assert.equal(r.sc.status, 'done');
  const got = await w;
  assert.equal(got.sc.outcome, 'timed_out', `woken by ${got.text}`);
  const md = await ok(A, 'inspect_notebook', { notebook_handle: h, after: e.sc.cursor,
    changes: ['kernel'] });
  assert.equal(md.sc.outcome, 'changed', md.text);
  await ok(A, 'disconnect_notebook', { notebook_handle: h });
  await ok(B, 'disconnect_notebook', { notebook_handle: hb });
});

test('a change report says which cells changed and how', async () => {
  const base = await ok(A, 'inspect_notebook', { notebook_handle: H });
  const wait = ok(A, 'inspect_notebook', { notebook_handle: H, after: base.sc.cursor, timeout_secs: 20 });
  await sleep(200);
  const ins = await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
    { op: 'edit', cell_id: cells[0], source: 'a = 10' },
    { op: 'insert', after: cells[1], source: 'print("new")' }] });
  const w = await wait;
  const fresh = ins.sc.cells[1].cell_id;
  assert.equal(w.sc.outcome, 'changed');
  console.log(`# change report: ${w.text.split('\n')[0]}`);
  // Who made them: B, by its client's name and session (issue 39).
  assert.match(w.text, new RegExp(`cell ${cells[0]}: source edited \\(by waits-b\\)`));
  assert.match(w.text, new RegExp(`inserted ${fresh} at 2 \\(by waits-b\\)`));
  const c0 = w.sc.changes.cells.find((c) => c.cell_id === cells[0]);
  assert.deepEqual(c0.how, ['source edited']);
  assert.equal(c0.by, 'waits-b');
  assert.match(c0.session, /^[0-9a-f]{8}$/);
  const cf = w.sc.changes.cells.find((c) => c.cell_id === fresh);
  assert.equal(cf.inserted_at, 2);
  // A's own edits are not said to be anyone's in its text.
  const mine = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'edit', cell_id: cells[2], source: 'c = 3 ' }] });
  const own = await ok(A, 'inspect_notebook', { notebook_handle: H, after: w.sc.cursor });
  assert.match(own.text, new RegExp(`cell ${cells[2]}: source edited`));
  assert.doesNotMatch(own.text.split('\n')[0], /\(by /);
  // Its outline names B on the cells B wrote last, not A on its own.
  const line = (id) => own.text.split('\n').find((l) => l.includes(` ${id} `));
  assert.doesNotMatch(line(cells[2]), /\(by /);
  assert.match(line(cells[0]), / \(by waits-b\): a = 10$/);
  assert.equal(own.sc.changes.cells[0].by, 'waits-a');
  assert.ok(mine);

  // Outputs only: B's edit does not wake it, a run does, and says how
  // many outputs the cell has.
  const cur = w.sc.cursor;
  const w2 = ok(A, 'inspect_notebook', { notebook_handle: H, after: cur, timeout_secs: 20, changes: ['outputs'] });
  await sleep(200);
  await ok(B, 'edit_cells', { notebook_handle: HB, edits: [{ op: 'edit', cell_id: cells[2], source: 'c = 4' }] });
  await sleep(300);
  await ok(B, 'run_cells', { notebook_handle: HB, cell_ids: [cells[1]], wait_secs: 10 });
  const o1 = await w2;
  assert.equal(o1.sc.outcome, 'changed');
  assert.match(o1.text, new RegExp(`cell ${cells[1]}: outputs`));
  assert.doesNotMatch(o1.text, new RegExp(`cell ${cells[2]}`));
  // Read after the run: its changes coalesce into the count it ended with.
  const o = await ok(A, 'inspect_notebook', { notebook_handle: H, after: cur, changes: ['outputs'] });
  assert.equal(o.sc.outcome, 'changed');
  assert.match(o.text, new RegExp(`cell ${cells[1]}: outputs \\(1\\)`));
  assert.doesNotMatch(o.text, new RegExp(`cell ${cells[2]}`));
  assert.ok(o.sc.changes.skipped >= 1, 'the edit was skipped');
  assert.equal(o.sc.changes.cells.find((c) => c.cell_id === cells[1]).outputs, 1);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: fresh },
    { op: 'edit', cell_id: cells[0], source: 'a = 1' }, { op: 'edit', cell_id: cells[2], source: 'c = 3' }] });
});

test('progress of a run: elapsed against the bound, the cell, its last line', async () => {
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source:
      'import time\nfor i in range(5):\n    print(f"step {i} of 5", flush=True)\n    time.sleep(0.8)' }] });
  const id = e.sc.cells[0].cell_id;
  const seen = [];
  const r = await ok(A, 'run_cells', { notebook_handle: H, cell_ids: [id], wait_secs: 20 },
    { onprogress: (p) => seen.push({ ...p, at: Date.now() }) });
  assert.equal(r.sc.status, 'done');
  for (const p of seen) console.log(`# progress: ${p.message}`);
  assert.ok(seen.length >= 2, `progress: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].progress > seen[i - 1].progress);
    assert.ok(seen[i].at - seen[i - 1].at >= 800, 'at most one a second');
  }
  for (const p of seen) {
    assert.equal(p.total, 20);
    assert.match(p.message, /^\d+s of 20s/);
  }
  const withLine = seen.filter((p) => /step \d of 5/.test(p.message));
  assert.ok(withLine.length >= 1, `a latest line: ${JSON.stringify(seen)}`);
  assert.match(withLine[0].message, new RegExp(`cell ${id}`));

  // get_results too; a long line is cut at 120 characters.
  const e2 = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'edit', cell_id: id, source:
      'import time\nfor i in range(4):\n    print("x" * 300, i, flush=True)\n    time.sleep(0.8)' }] });
  const run = await ok(A, 'run_cells', { notebook_handle: H, cell_ids: [id], wait_secs: 0 });
  const seen2 = [];
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: run.sc.execution_id, timeout_secs: 15 },
    { onprogress: (p) => seen2.push(p) });
  assert.equal(g.sc.status, 'done');
  const long = seen2.filter((p) => /xxxx/.test(p.message));
  assert.ok(long.length >= 1, `get_results progress: ${JSON.stringify(seen2)}`);
  for (const p of long) {
    const line = p.message.slice(p.message.lastIndexOf(': ') + 2);
    assert.ok(line.length <= 121, `capped: ${line.length}`);
  }
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: id }] });
});

// Waiters in two workers (two at once in one) follow edits made as fast
// as they go: every answer accounts for each change between its cursors
// (count + skipped), none is reported twice or missed.
test('waiters see every change once, with no gap between cursors', async () => {
  const C = await worker('waits-c');
  try {
    const HC = (await ok(C, 'connect_notebook', { path: NB })).sc.notebook_handle;
    const seqOf = (cur) => Number(/^c1\.\d+\.(\d+)\./.exec(cur)[1]);
    let done = false;
    const loop = async (client, h, changes) => {
      const w = { seen: new Set(), bad: [], answers: 0 };
      let cur = (await ok(client, 'inspect_notebook', { notebook_handle: h, count: 1 })).sc.cursor;
      while (!done) {
        const r = await ok(client, 'inspect_notebook', { notebook_handle: h, after: cur,
          timeout_secs: 1, count: 1, ...(changes ? { changes } : {}) });
        const sc = r.sc;
        w.answers++;
        const d = seqOf(sc.cursor) - seqOf(cur);
        if (!['changed', 'timed_out', 'unchanged'].includes(sc.outcome)) w.bad.push(sc.outcome);
        if (d < 0) w.bad.push(`cursor went back ${d}`);
        if (sc.outcome === 'changed' && sc.changes.count + sc.changes.skipped !== d)
          w.bad.push(`${sc.changes.count} + ${sc.changes.skipped} changes for ${d} seqs`);
        for (const id of sc.changes?.cell_ids ?? []) w.seen.add(id);
        cur = sc.cursor;
      }
      return w;
    };
    const loops = [loop(A, H), loop(A, H, ['content']), loop(C, HC)];
    await sleep(300);
    const ids = [];
    for (let n = 0; n < 40; n++) {
      const e = await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
        { op: 'insert', after: 'BOTTOM', source: `# w${n}` }] });
      ids.push(e.sc.cells[0].cell_id);
      if (n < 20) await sleep(15);
    }
    await sleep(1500);
    done = true;
    const ws = await Promise.all(loops);
    for (const [i, w] of ws.entries()) {
      const missing = ids.filter((id) => !w.seen.has(id));
      assert.deepEqual(missing, [], `waiter ${i} missed ${missing.length} of ${ids.length}`);
      assert.deepEqual(w.bad, [], `waiter ${i}`);
      assert.ok(w.answers >= 2, `waiter ${i} answered ${w.answers}`);
    }
    await ok(B, 'edit_cells', { notebook_handle: HB, edits: ids.map((id) => ({ op: 'delete', cell_id: id })) });
  } finally {
    await C.close().catch(() => {});
  }
});

// A client that waits again right after each answer costs its worker
// one ROOM_WAIT, not one per change: the wait stands across changes and
// each push refers to the one before (docs/decisions/040).  Only this
// worker writes the trace (RUNTIMED_TRACE is read by each process).
test('a waiter asks the daemon once for the changes it waits for', async () => {
  const trace = path.join(T, 'standing.trace');
  const D = await worker('waits-d', { RUNTIMED_TRACE: trace });
  const ids = [];
  try {
    const HD = (await ok(D, 'connect_notebook', { path: NB })).sc.notebook_handle;
    let cur = (await ok(D, 'inspect_notebook', { notebook_handle: HD, count: 1 })).sc.cursor;
    for (let n = 0; n < 8; n++) {
      const w = ok(D, 'inspect_notebook', { notebook_handle: HD, after: cur,
        timeout_secs: 20, count: 1 });
      await sleep(150);	// parked before the edit
      const e = await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
        { op: 'insert', after: 'BOTTOM', source: `# standing ${n}` }] });
      ids.push(e.sc.cells[0].cell_id);
      const r = (await w).sc;
      assert.equal(r.outcome, 'changed');
      assert.deepEqual(r.changes.cell_ids, [e.sc.cells[0].cell_id]);
      cur = r.cursor;
    }
    const lines = fs.readFileSync(trace, 'utf8').split('\n');
    const asked = lines.filter((l) => / out \S+ ROOM_WAIT /.test(l)).length;
    const pushed = lines.filter((l) => / in \S+ ROOM_CHANGED_CONTENT /.test(l)).length;
    assert.equal(asked, 1, `ROOM_WAIT sent ${asked} times for 8 waits`);
    assert.equal(pushed, 8, `${pushed} pushes with the content for 8 changes`);
  } finally {
    await D.close().catch(() => {});
    if (ids.length)
      await ok(B, 'edit_cells', { notebook_handle: HB, edits: ids.map((id) => ({ op: 'delete', cell_id: id })) });
  }
});

test('a view decodes only its cells and shows what the whole notebook shows', async () => {
  // The view (cell 1) comes from the pushed content, decoded cell by cell
  // (docs/decisions/035); the cells resource decodes every cell, and the
  // saved file is the daemon's own.  All three agree, after an edit
  // outside the view and one inside it.
  await ok(A, 'run_cells', { notebook_handle: H, cell_ids: [cells[1]], wait_secs: 40 });
  const view = { notebook_handle: H, view: 'all', output_mode: 'full', start: 1, count: 1 };
  let cur = (await ok(A, 'inspect_notebook', view)).sc.cursor;
  const check = async (w, src) => {
    assert.equal(w.sc.outcome, 'changed');
    const [c] = w.sc.cells;
    assert.equal(c.cell_id, cells[1]);
    assert.equal(c.source, src);
    const rd = JSON.parse((await A.readResource({ uri: `runtimed://sessions/${H}/cells` })).contents[0].text);
    assert.equal(rd.cells[1].cell_id, c.cell_id);
    const full = JSON.parse((await A.readResource({ uri: `runtimed://sessions/${H}/cells/${cells[1]}` })).contents[0].text).cell;
    for (const k of ['cell_id', 'source', 'version', 'execution_count', 'outputs', 'stale'])
      assert.deepEqual(c[k], full[k], k);
    assert.deepEqual(rd.cells.map((x) => x.cell_id).slice(0, 3), cells);
    assert.equal(rd.cells.length, w.sc.total_cells);
    await ok(B, 'save_notebook', { notebook_handle: HB });
    const file = JSON.parse(fs.readFileSync(NB, 'utf8'));
    const fc = file.cells[1];
    assert.equal(fc.id, c.cell_id);
    assert.equal([].concat(fc.source).join(''), c.source);
    assert.deepEqual(fc.outputs.map((o) => [].concat(o.text).join('')),
      c.outputs.map((o) => o.text));
    assert.equal(c.outputs[0].text, 'b\n');
    return w.sc.cursor;
  };
  // By window, then by cell_id (found in the packed cells), then index.
  const byId = { notebook_handle: H, view: 'all', output_mode: 'full', cell_ids: [cells[1]] };
  const byIndex = { ...byId, cell_ids: [1] };
  for (const [cell, src, shown, v] of [[cells[0], 'a = 11', 'print("b")', view],
    [cells[1], 'print("b")  # in view', 'print("b")  # in view', byId],
    [cells[0], 'a = 1', 'print("b")  # in view', byIndex],
    [cells[1], 'print("b")', 'print("b")', byId]]) {
    const wait = ok(A, 'inspect_notebook', { ...v, after: cur, timeout_secs: 20 });
    await sleep(200);
    await ok(B, 'edit_cells', { notebook_handle: HB, edits: [{ op: 'edit', cell_id: cell, source: src }] });
    cur = await check(await wait, shown);
  }
});

// A waiter's worker is pushed only the cells changed since the content
// it holds, the others by reference (docs/decisions/036).  After each
// change, what the wait shows and what the waiter then reads without
// `after` (its kept copy) equal what a fresh worker reads from the daemon.
test('a waiter sees after each change what a fresh read shows', async () => {
  const C = await worker('waits-c');
  try {
    const HC = (await ok(C, 'connect_notebook', { path: NB })).sc.notebook_handle;
    const view = { view: 'all', output_mode: 'full', count: 100 };
    // C's worker keeps its copy until the change reaches it: read until
    // it shows the waiter's seq at least.
    const seqOf = (c) => Number(/^c1\.\d+\.(\d+)\./.exec(c)[1]);
    const fresh = async () => {
      for (let i = 0; ; i++) {
        const sc = (await ok(C, 'inspect_notebook', { notebook_handle: HC, ...view })).sc;
        if (seqOf(sc.cursor) >= seqOf(cur) || i === 100) return sc;
        await sleep(50);
      }
    };
    // A reader is not named as the last editor of its own cells (issue
    // 39): C names A where A's outline names no one.
    const asA = (cells) => cells.map((c) => {
      if (c.by !== 'waits-a') return c;
      const { by, ...rest } = c;
      return rest;
    });
    const same = (got, want, what) => {
      assert.equal(got.total_cells, want.total_cells, `${what}: total_cells`);
      assert.deepEqual(got.cells, asA(want.cells), `${what}: cells`);
    };
    let cur = (await ok(A, 'inspect_notebook', { notebook_handle: H, ...view })).sc.cursor;
    // Waits until a change and then until quiet; each answer checked.
    const waitFor = async (what, change) => {
      let w = ok(A, 'inspect_notebook', { notebook_handle: H, ...view, after: cur, timeout_secs: 20 });
      await sleep(100);
      await change();
      for (;;) {
        const r = (await w).sc;
        if (r.outcome === 'timed_out') break;
        assert.equal(r.outcome, 'changed', what);
        cur = r.cursor;
        w = ok(A, 'inspect_notebook', { notebook_handle: H, ...view, after: cur, timeout_secs: 1 });
      }
      const want = await fresh();
      same((await ok(A, 'inspect_notebook', { notebook_handle: H, ...view })).sc, want, `${what} (kept)`);
      return want;
    };
    // One change each: the wait's own answer is the content at it.
    const once = async (what, change) => {
      const w = ok(A, 'inspect_notebook', { notebook_handle: H, ...view, after: cur, timeout_secs: 20 });
      await sleep(100);
      await change();
      const r = (await w).sc;
      assert.equal(r.outcome, 'changed', what);
      cur = r.cursor;
      const want = await fresh();
      same(r, want, what);
      same((await ok(A, 'inspect_notebook', { notebook_handle: H, ...view })).sc, want, `${what} (kept)`);
    };
    const edit = (edits) => () => ok(B, 'edit_cells', { notebook_handle: HB, edits });
    let ins;
    await once('insert at the bottom', async () => {
      ins = (await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
        { op: 'insert', after: 'BOTTOM', source: 'd = 4' }] })).sc.cells[0].cell_id;
    });
    await once('two inserts', edit([{ op: 'insert', after: cells[0], source: '# two' },
      { op: 'insert', after: 'BOTTOM', source: '# three' }]));
    await once('a source edit', edit([{ op: 'edit', cell_id: cells[2], source: 'c = 30' }]));
    await once('a move', () => ok(B, 'move_cells', { notebook_handle: HB, cell_ids: [ins], after: 'TOP' }));
    await once('a delete', edit([{ op: 'delete', cell_id: ins }]));
    await once('a source edit back', edit([{ op: 'edit', cell_id: cells[2], source: 'c = 3' }]));
    // A run changes its cell's outputs and the stale of others.
    const after = await waitFor('a run', () => ok(B, 'run_cells', { notebook_handle: HB,
      cell_ids: [cells[1], cells[2]], wait_secs: 40 }));
    assert.ok(after.cells.some((c) => c.outputs.length > 0), 'the run has outputs');
    // Running the cell above again: the one below, unchanged, is now out of
    // order (its stale comes by reference).
    const ooo = await waitFor('a run above', () => ok(B, 'run_cells', { notebook_handle: HB,
      cell_ids: [cells[1]], wait_secs: 40 }));
    assert.deepEqual(ooo.cells.find((c) => c.cell_id === cells[2]).stale, ['out_of_order']);
    // Moving the cell above below it puts it in order, and back out of
    // order: one change each, the unchanged cell's stale by reference.
    const staleOf = async (id) => (await fresh()).cells.find((c) => c.cell_id === id).stale;
    await once('a move below', () => ok(B, 'move_cells', { notebook_handle: HB, cell_ids: [cells[1]],
      after: cells[2] }));
    assert.equal(await staleOf(cells[2]), undefined);
    await once('a move back', () => ok(B, 'move_cells', { notebook_handle: HB, cell_ids: [cells[1]],
      after: cells[0] }));
    assert.deepEqual(await staleOf(cells[2]), ['out_of_order']);
    await waitFor('a clear', () => ok(B, 'clear_outputs', { notebook_handle: HB, cell_ids: [cells[1]] }));
    // Forty inserts, one change each, every new cell kept: more frames
    // than a notebook built by reference may span (WORKER_NB_ZONES), so
    // the waiter's copy is compacted into one zone and goes on as a base.
    const many = [];
    for (let i = 0; i < 40; i++) {
      const w = ok(A, 'inspect_notebook', { notebook_handle: H, ...view, after: cur, timeout_secs: 20 });
      await sleep(100);
      many.push((await ok(B, 'edit_cells', { notebook_handle: HB, edits: [
        { op: 'insert', after: 'BOTTOM', source: `n = ${i}` }] })).sc.cells[0].cell_id);
      const r = (await w).sc;
      assert.equal(r.outcome, 'changed', `insert ${i}`);
      cur = r.cursor;
    }
    same((await ok(A, 'inspect_notebook', { notebook_handle: H, ...view })).sc, await fresh(),
      'forty inserts (kept)');
    await once('a source edit after them', edit([{ op: 'edit', cell_id: cells[2], source: 'c = 31' }]));
    await once('the forty deleted', edit([...many.map((id) => ({ op: 'delete', cell_id: id })),
      { op: 'edit', cell_id: cells[2], source: 'c = 3' }]));
    // The notebook as it was for the tests after this one.
    const extra = after.cells.filter((c) => !cells.includes(c.cell_id)).map((c) => c.cell_id);
    await waitFor('deletes', edit(extra.map((id) => ({ op: 'delete', cell_id: id }))));
  } finally {
    await C.close().catch(() => {});
  }
});

test('progress of a change wait says what it waits for', async () => {
  const base = await ok(A, 'inspect_notebook', { notebook_handle: H });
  const seen = [];
  const w = await ok(A, 'inspect_notebook', { notebook_handle: H, after: base.sc.cursor, timeout_secs: 3 },
    { onprogress: (p) => seen.push(p) });
  assert.equal(w.sc.outcome, 'timed_out');
  assert.ok(seen.length >= 2);
  assert.match(seen[0].message, /^\d+s of 3s: waiting for content, outputs, kernel changes/);
});

test('a call by notebook_id says which address owner it retained', async () => {
  const id = (await ok(A, 'inspect_notebook', { notebook_handle: H })).sc.notebook_id;
  const first = await ok(A, 'get_kernel_info', { notebook_id: id });
  const owner = first.sc.target.notebook_handle;
  assert.match(first.text, new RegExp(`address owner ${owner}`));
  assert.match(first.text, new RegExp(`disconnect_notebook.*${owner}`));
  const second = await ok(A, 'inspect_notebook', { notebook_id: id });
  assert.equal(second.sc.target.notebook_handle, owner);
  assert.match(second.text, new RegExp(owner));
  await ok(A, 'disconnect_notebook', { notebook_handle: owner });
  // A call by handle says nothing of owners.
  const byHandle = await ok(A, 'get_kernel_info', { notebook_handle: H });
  assert.doesNotMatch(byHandle.text, /address owner/);
});

// Connect twice, disconnect one, list: the daemon still counts one
// room connection of this worker, at once (no second join of the room
// behind a connect by notebook_id, closed again a moment later).
test('list_notebooks counts right after a disconnect', async () => {
  for (let round = 0; round < 10; round++) {
    const c = (await ok(A, 'create_notebook', {})).sc;
    const h1 = (await ok(A, 'connect_notebook', { notebook_id: c.notebook_id })).sc.notebook_handle;
    await ok(A, 'disconnect_notebook', { notebook_handle: c.notebook_handle });
    const l = await ok(A, 'list_notebooks', {});
    const nb = l.sc.notebooks.find((n) => n.notebook_id === c.notebook_id);
    assert.equal(nb.peers, 1, `round ${round}: ${l.text}`);
    assert.ok(l.sc.attachments.some((a) => a.notebook_handle === h1));
    assert.ok(!l.sc.attachments.some((a) => a.notebook_handle === c.notebook_handle));
    assert.match(l.text, new RegExp(`${l.sc.attachments.length} handles? in this session`));
    await ok(A, 'disconnect_notebook', { notebook_handle: h1 });
  }
  const id = (await ok(A, 'inspect_notebook', { notebook_handle: H })).sc.notebook_id;
  const before = (await ok(A, 'list_notebooks', {})).sc;
  const peers0 = before.notebooks.find((n) => n.notebook_id === id).peers;
  const n0 = before.attachments.length;
  const h1 = (await ok(A, 'connect_notebook', { notebook_id: id })).sc.notebook_handle;
  const h2 = (await ok(A, 'connect_notebook', { path: NB })).sc.notebook_handle;
  await ok(A, 'disconnect_notebook', { notebook_handle: h1 });
  const l = await ok(A, 'list_notebooks', {});
  assert.equal(l.sc.attachments.length, n0 + 1);
  assert.equal(l.sc.notebooks.find((n) => n.notebook_id === id).peers, peers0);
  await ok(A, 'disconnect_notebook', { notebook_handle: h2 });
});
