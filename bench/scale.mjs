// SPDX-License-Identifier: ISC
// bench/scale.mjs: many official-SDK clients, each through its own
// runtimed-mcp, on one daemon (issue 14, Scale).
//
//   mixed:   CLIENTS clients in GROUPS groups, each group sharing one
//            notebook, run a mixed loop for SECS seconds: outline reads
//            40%, edits 25%, runs 20%, searches 10%, saves 5%; RATE calls
//            a second each (0: as fast as they go).  Prints p50/p99 per
//            kind, calls/s and errors; then checks every acknowledged
//            edit is in its notebook and every saved file is valid.
//   waiters: WAITERS clients wait on one notebook (inspect_notebook with
//            after and timeout_secs) while another makes EDITS edits;
//            prints p50/p90/p99/max of delivery after each edit's reply,
//            and fails when a waiter misses a change, is told to resync,
//            or gets an answer whose changes (count + skipped) are not
//            exactly those between its two cursors (a gap or a repeat).
//
// Usage: node bench/scale.mjs BUILDDIR [mixed|waiters]
// env: SCALE_CLIENTS (64), SCALE_GROUPS (8), SCALE_SECS (30), SCALE_RATE
// (2), SCALE_WAITERS (32), SCALE_EDITS (200), SCALE_WAIT_CELLS (10: the
// waiters' notebook's cells at the start), SCALE_WAIT_OUTPUT (0: bytes of
// a stdout output on each of them), SCALE_JSON=FILE to write
// the figures as JSON, SCALE_CALLS=FILE to write one line per mixed call
// (ms since the start, client, kind, ms taken).  Prints the daemon's pid before the load starts
// (for strace -c -p), and after the load the CPU each kind of process
// used during it (from /proc: every process whose environment names the
// run's state dir, and this Node process for the clients).  Exit 0 when
// every check holds.  Not part of make
// check; bench/run.sh may call it.

import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const B = path.resolve(process.argv[2] || '.');
const MODE = process.argv[3] || 'mixed';
const CLIENTS = Number(process.env.SCALE_CLIENTS || 64);
const GROUPS = Number(process.env.SCALE_GROUPS || 8);
const SECS = Number(process.env.SCALE_SECS || 30);
const RATE = Number(process.env.SCALE_RATE ?? 2);
const WAITERS = Number(process.env.SCALE_WAITERS || 32);
const EDITS = Number(process.env.SCALE_EDITS || 200);
const WAIT_CELLS = Number(process.env.SCALE_WAIT_CELLS || 10);
const WAIT_OUTPUT = Number(process.env.SCALE_WAIT_OUTPUT || 0);
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'rtd-bench-scale-'));
const DAEMON = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
  path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
const MCP = path.join(B, 'runtimed-mcp');
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME || T,
  RUNTIMED_SOCKET: path.join(T, 'run', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: path.join(T, 'state'),
  RUNTIMED_LIBEXEC_DIR: `${B}:${path.dirname(DAEMON)}:` +
    `${path.join(B, 'runtime-agent')}:${path.join(B, 'mcp-worker')}`,
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};
for (const k of ['JUPYTER_PATH', 'JUPYTER_DATA_DIR', 'LANG', 'RUNTIMED_TRACE'])
  if (process.env[k]) env[k] = process.env[k];
fs.mkdirSync(path.join(T, 'run'), { mode: 0o700 });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// bench/disk-probe.py's one line, or why there is none.
const diskProbe = (dir, secs) => new Promise((resolve) => {
  const p = spawn('/usr/bin/python3', [path.join(path.dirname(new URL(import.meta.url).pathname),
    'disk-probe.py'), dir, String(secs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { out += d; });
  p.on('close', () => resolve(out.trim() || 'disk probe: no output'));
});
const now = () => Number(process.hrtime.bigint()) / 1e6;
const pct = (a, p) => {
  if (a.length === 0) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};
const fmt = (x) => (Number.isNaN(x) ? '-' : x.toFixed(1));
let failed = 0;
function check(ok, what) {
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
  if (!ok) failed++;
}

async function client(name) {
  const transport = new StdioClientTransport({ command: MCP, args: [], env, stderr: 'ignore' });
  const c = new Client({ name, version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await c.connect(transport, { timeout: 120000 });
  return c;
}
async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) {
    const e = new Error(`${name}: ${r.structuredContent?.error?.code}: ` +
      (r.content || []).map((x) => x.text).join(' '));
    e.code = r.structuredContent?.error?.code;
    throw e;
  }
  return r.structuredContent;
}

function notebook(file, n, outBytes = 0) {
  const cells = [];
  const text = 'o'.repeat(Math.max(0, outBytes - 1)) + '\n';
  for (let i = 0; i < n; i++)
    cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: outBytes ? i + 1 : null,
      source: `x${i} = ${i} * 2\nprint(x${i})`,
      outputs: outBytes ? [{ output_type: 'stream', name: 'stdout', text }] : [] });
  fs.writeFileSync(file, JSON.stringify({ cells, metadata: {
    kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4, nbformat_minor: 5 }, null, 1));
}

// Every source of a notebook, read through c.
async function sources(c, h) {
  const out = [];
  // A page holds what its caps let it: go on after its last cell.
  for (let start = 0; ; ) {
    const r = await call(c, 'inspect_notebook', { notebook_handle: h, view: 'source',
      start, count: 100, max_source_chars: 12000 });
    for (const cell of r.cells) out.push(cell.source);
    if (r.cells.length === 0) throw new Error(`inspect_notebook returned no cell at ${start}`);
    start += r.cells.length;
    if (start >= r.total_cells) return out;
  }
}

function daemonPid() {
  const r = spawnSync(DAEMON, ['status'], { env, encoding: 'utf8' });
  const m = /pid[^0-9]*([0-9]+)/.exec(r.stdout || '');
  return m ? Number(m[1]) : 0;
}

// CPU ticks (utime + stime) of every process of this run, by kind: the
// processes whose environment names this run's state dir (the daemon,
// proxies, workers, agents and kernels all inherit it) and this Node
// process, which holds every client.
const TICK = 100;	// USER_HZ on Linux
function cpuTicks() {
  const by = new Map();
  const mark = `RUNTIMED_STATE_DIR=${env.RUNTIMED_STATE_DIR}\0`;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    let stat;
    try {
      if (!fs.readFileSync(`/proc/${pid}/environ`, 'latin1').includes(mark)) continue;
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch { continue; }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    by.set(pid, { comm, ticks: Number(f[11]) + Number(f[12]) });
  }
  const u = process.cpuUsage();
  by.set('node', { comm: 'node (clients)', ticks: (u.user + u.system) / 1e6 * TICK });
  return by;
}
// Seconds of CPU each kind used between two cpuTicks(); a process born
// in between counts from zero.
function cpuSpent(a, b) {
  const kind = (c) => (c === 'python3' ? 'kernels (python3)' : c.startsWith('runtimed-mcp-wo') ?
    'runtimed-mcp-worker' : c);
  const out = {};
  for (const [pid, v] of b) {
    const k = kind(v.comm);
    out[k] = (out[k] || 0) + (v.ticks - (a.get(pid)?.ticks || 0)) / TICK;
  }
  return out;
}
function printCpu(spent, secs, calls, what) {
  const total = Object.values(spent).reduce((x, y) => x + y, 0);
  console.log(`\nCPU over the ${secs.toFixed(1)} s (${os.cpus().length} CPUs: ` +
    `${(os.cpus().length * secs).toFixed(0)} s available), per ${what}`);
  console.log(`| process | CPU s | share | ms per ${what} |\n|---|---|---|---|`);
  for (const [k, v] of Object.entries(spent).sort((x, y) => y[1] - x[1]))
    console.log(`| ${k} | ${v.toFixed(2)} | ${(100 * v / total).toFixed(0)}% | ` +
      `${(1000 * v / calls).toFixed(3)} |`);
  figures.cpu = spent;
}

const figures = { mode: MODE, clients: CLIENTS, groups: GROUPS, secs: SECS, rate: RATE };

async function mixed() {
  const files = [];
  for (let g = 0; g < GROUPS; g++) {
    files.push(path.join(T, `g${g}.ipynb`));
    notebook(files[g], 40);
  }
  const cs = [];
  for (let i = 0; i < CLIENTS; i += 8)
    cs.push(...await Promise.all(Array.from({ length: Math.min(8, CLIENTS - i) },
      (_, j) => client(`scale-${i + j}`))));
  const hs = await Promise.all(cs.map((c, i) =>
    call(c, 'connect_notebook', { path: files[i % GROUPS] }).then((r) => r.notebook_handle)));
  // Start each group's kernel before the clock starts.
  await Promise.all(files.map((_, g) => call(cs[g], 'run_cells',
    { notebook_handle: hs[g], cell_ids: ['c0'], wait_secs: 30 })));
  console.log(`daemon pid ${daemonPid()}`);
  const kinds = [['outline', 40], ['edit', 25], ['run', 20], ['search', 10], ['save', 5]];
  const lat = Object.fromEntries(kinds.map(([k]) => [k, []]));
  const errs = Object.fromEntries(kinds.map(([k]) => [k, 0]));
  const errSample = [];
  const acked = files.map(() => []);
  let seedState = 12345;
  const rand = () => {
    seedState = (seedState * 1103515245 + 12345) & 0x7fffffff;
    return seedState / 0x7fffffff;
  };
  const pick = () => {
    let x = rand() * 100;
    for (const [k, w] of kinds) { if (x < w) return k; x -= w; }
    return 'outline';
  };
  let marker = 0;
  const callLog = process.env.SCALE_CALLS ? [] : null;
  const cpu0 = cpuTicks();
  const t0 = now();
  const end = t0 + SECS * 1000;
  // Paced, edits and saves wait for the disk's flushes: measure the
  // disk's own beside them, so a slow disk is told from slow code.
  const probe = RATE > 0 ? diskProbe(env.RUNTIMED_STATE_DIR, SECS) : null;
  const loop = async (i) => {
    const c = cs[i], h = hs[i], g = i % GROUPS;
    let next = t0 + (RATE > 0 ? (i / CLIENTS) * (1000 / RATE) : 0);
    while (now() < end) {
      if (RATE > 0) {
        const wait = next - now();
        if (wait > 0) await sleep(wait);
        next += 1000 / RATE;
        if (now() >= end) break;
      }
      const k = pick();
      const t = now();
      try {
        if (k === 'outline') {
          await call(c, 'inspect_notebook', { notebook_handle: h });
        } else if (k === 'edit') {
          const m = `m${i}_${marker++}`;
          await call(c, 'edit_cells', { notebook_handle: h,
            edits: [{ op: 'insert', after: 'BOTTOM', source: `# ${m}` }] });
          acked[g].push(m);
        } else if (k === 'run') {
          await call(c, 'run_cells', { notebook_handle: h, cell_ids: ['c1'], wait_secs: 0 });
        } else if (k === 'search') {
          await call(c, 'search_cells', { notebook_handle: h, query: 'print' });
        } else {
          await call(c, 'save_notebook', { notebook_handle: h });
        }
        lat[k].push(now() - t);
        if (callLog) callLog.push(`${(t - t0).toFixed(1)} ${i} ${k} ${(now() - t).toFixed(2)}`);
      } catch (e) {
        errs[k]++;
        if (errSample.length < 5) errSample.push(e.message.slice(0, 200));
      }
    }
  };
  await Promise.all(cs.map((_, i) => loop(i)));
  const secs = (now() - t0) / 1000;
  if (callLog) fs.writeFileSync(process.env.SCALE_CALLS, callLog.join('\n') + '\n');
  const disk = probe ? await probe : null;
  const cpu = cpuSpent(cpu0, cpuTicks());
  let total = 0, nerr = 0;
  console.log(`\n${CLIENTS} clients, ${GROUPS} groups, ${RATE > 0 ? `${RATE} calls/s each` : 'unpaced'}, ${secs.toFixed(1)} s`);
  console.log('| kind | calls | errors | p50 ms | p99 ms |\n|---|---|---|---|---|');
  figures.kinds = {};
  for (const [k] of kinds) {
    total += lat[k].length;
    nerr += errs[k];
    figures.kinds[k] = { calls: lat[k].length, errors: errs[k], p50: pct(lat[k], 0.5),
      p99: pct(lat[k], 0.99) };
    console.log(`| ${k} | ${lat[k].length} | ${errs[k]} | ${fmt(pct(lat[k], 0.5))} | ${fmt(pct(lat[k], 0.99))} |`);
  }
  figures.calls_per_sec = total / secs;
  figures.errors = nerr;
  console.log(`${(total / secs).toFixed(0)} calls/s, ${nerr} errors`);
  if (disk) { console.log(disk); figures.disk = disk; }
  for (const e of errSample) console.log(`  error: ${e}`);
  printCpu(cpu, secs, total, 'call');
  check(nerr === 0, `0 errors (${nerr})`);
  // Every acknowledged edit is in its notebook; every saved file valid.
  for (let g = 0; g < GROUPS; g++) {
    const src = new Set(await sources(cs[g], hs[g]));
    const missing = acked[g].filter((m) => !src.has(`# ${m}`));
    check(missing.length === 0, `group ${g}: ${acked[g].length} acknowledged edits present` +
      (missing.length ? ` (missing ${missing.slice(0, 5)})` : ''));
    await call(cs[g], 'save_notebook', { notebook_handle: hs[g] });
    const v = spawnSync('/usr/bin/python3', ['-c', 'import nbformat,sys; nbformat.validate(' +
      'nbformat.read(sys.argv[1], as_version=4))', files[g]], { encoding: 'utf8' });
    check(v.status === 0, `group ${g}: saved file valid${v.status ? `: ${v.stderr.slice(-200)}` : ''}`);
  }
  await Promise.all(cs.map((c) => c.close()));
}

async function waiters() {
  const file = path.join(T, 'w.ipynb');
  notebook(file, WAIT_CELLS, WAIT_OUTPUT);
  const ed = await client('scale-editor');
  const eh = (await call(ed, 'connect_notebook', { path: file })).notebook_handle;
  const ws = [];
  for (let i = 0; i < WAITERS; i += 8)
    ws.push(...await Promise.all(Array.from({ length: Math.min(8, WAITERS - i) },
      (_, j) => client(`scale-w${i + j}`))));
  const whs = await Promise.all(ws.map((c) =>
    call(c, 'connect_notebook', { path: file }).then((r) => r.notebook_handle)));
  const ackAt = new Map();
  const delay = [];
  let done = false, resyncs = 0, gaps = 0;
  const gapSample = [];
  const seen = ws.map(() => new Map());	// cell id -> when it came
  // A cursor is c1.INCARNATION.SEQ.CHECK (mcp-worker/worker-cursor.c).
  const seqOf = (c) => Number(/^c1\.\d+\.(\d+)\./.exec(c)[1]);
  const wait = async (i) => {
    let cur = (await call(ws[i], 'inspect_notebook', { notebook_handle: whs[i], count: 1 })).cursor;
    while (!done) {
      const r = await call(ws[i], 'inspect_notebook', { notebook_handle: whs[i], after: cur,
        timeout_secs: 2, count: 1 });
      const t = now();
      if (r.outcome === 'resync_required') resyncs++;
      const d = seqOf(r.cursor) - seqOf(cur);
      if (d < 0 || (r.outcome === 'changed' && r.changes.count + r.changes.skipped !== d)) {
        gaps++;
        if (gapSample.length < 5)
          gapSample.push(`waiter ${i}: ${r.outcome} ${r.changes?.count}+${r.changes?.skipped} for ${d}`);
      }
      cur = r.cursor;
      for (const id of r.changes?.cell_ids || [])
        if (!seen[i].has(id)) seen[i].set(id, t);
    }
  };
  console.log(`daemon pid ${daemonPid()}`);
  const running = ws.map((_, i) => wait(i));
  await sleep(500);
  const cpu0 = cpuTicks(), t0 = now();
  const ids = [];
  for (let n = 0; n < EDITS; n++) {
    const r = await call(ed, 'edit_cells', { notebook_handle: eh,
      edits: [{ op: 'insert', after: 'BOTTOM', source: `# e${n}` }] });
    const id = r.cells[0].cell_id;
    ids.push(id);
    ackAt.set(id, now());
    await sleep(10);
  }
  await sleep(2500);
  const cpu = cpuSpent(cpu0, cpuTicks()), secs = (now() - t0) / 1000;
  done = true;
  await Promise.all(running);
  const missing = seen.map((s) => ids.filter((id) => !s.has(id)).length);
  // Delivery after the editor saw its reply (0 when a waiter was first).
  for (const s of seen)
    for (const id of ids)
      if (s.has(id)) delay.push(Math.max(0, s.get(id) - ackAt.get(id)));
  figures.delivery = { n: delay.length, p50: pct(delay, 0.5), p90: pct(delay, 0.9),
    p99: pct(delay, 0.99), max: pct(delay, 1) };
  figures.load = os.loadavg();
  console.log(`\n${WAITERS} waiters, ${EDITS} edits: delivery after the ack p50 ` +
    `${fmt(pct(delay, 0.5))} ms, p90 ${fmt(pct(delay, 0.9))} ms, p99 ` +
    `${fmt(pct(delay, 0.99))} ms, max ${fmt(pct(delay, 1))} ms (n=${delay.length}; ` +
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  printCpu(cpu, secs, delay.length, 'delivery');
  check(missing.every((m) => m === 0), `every change delivered to every waiter ` +
    `(missing: ${missing.reduce((a, b) => a + b, 0)})`);
  check(resyncs === 0, `no resync_required (${resyncs})`);
  for (const g of gapSample) console.log(`  ${g}`);
  check(gaps === 0, `every answer has exactly the changes between its cursors (${gaps} not)`);
  await Promise.all([ed, ...ws].map((c) => c.close()));
}

try {
  if (MODE === 'waiters') await waiters();
  else await mixed();
} finally {
  spawnSync(DAEMON, ['stop'], { env, stdio: 'ignore' });
  if (process.env.SCALE_JSON)
    fs.writeFileSync(process.env.SCALE_JSON, JSON.stringify(figures, null, 1));
  fs.rmSync(T, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
