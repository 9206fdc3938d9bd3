// SPDX-License-Identifier: ISC
// chaos.mjs: docs/durability.md under fire.  Two official-SDK clients, each
// through its own runtimed-mcp, work on one notebook (insert cells with
// unique markers, run them, wait for runs, save) while a driver SIGKILLs
// a worker, the daemon, an agent or a kernel at random moments.  Then:
//
//   1. every edit_cells that returned success is in the notebook (read
//      through a fresh client);
//   2. no mutation was replayed: each marker appears at most once;
//   3. no torn .ipynb: every file a save produced, and the file after
//      every kill, validates with nbformat;
//   4. every run reached a terminal status (get_results);
//   5. no agent or kernel is left once the daemon stops.
//
// Usage: node chaos.mjs   (env: RUNTIMED_MCP, RUNTIMED_BIN as for the e2e
// tests; RUNTIMED_CHAOS_SECS workload length, default 20, or 180 with
// RUNTIMED_CHAOS_FULL=1; RUNTIMED_CHAOS_SEED to repeat a run).
// Exit 0 when every assertion holds, 1 otherwise; each assertion prints
// PASS or FAIL with the evidence.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  callRaw, connect, killWorld, processesOf, privateWorld, removeWorld,
  sanitizerReports, stopDaemon, waitFor,
} from '../e2e/lib.mjs';

const FULL = process.env.RUNTIMED_CHAOS_FULL === '1';
const SECS = Number(process.env.RUNTIMED_CHAOS_SECS || (FULL ? 180 : 20));
const SEED = Number(process.env.RUNTIMED_CHAOS_SEED || (Date.now() % 1000000));
const TERMINAL = new Set(['done', 'error', 'interrupted', 'kernel_died', 'cancelled']);
const REATTACH = new Set(['attachment_expired', 'not_attached', 'invalid_notebook_target',
  'attachment_unavailable']);

// A small seeded PRNG (mulberry32), so a failing run can be repeated.
let seedState = SEED >>> 0;
function rand() {
  seedState = (seedState + 0x6d2b79f5) >>> 0;
  let t = seedState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const now = () => ((Date.now() - t0) / 1000).toFixed(1);
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

const world = privateWorld('chaos');
const file = path.join(world.dir, 'chaos.ipynb');
const events = [];		// kills
const failures = [];
const tornFiles = [];
let savedOk = 0;

function verdict(ok, what, evidence) {
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${what}${evidence ? `: ${evidence}` : ''}`);
  if (!ok) failures.push(what);
}

// nbformat validation of the file as it is on disk right now.
function validateNow(why) {
  if (!fs.existsSync(file)) return;
  const snap = path.join(world.dir, `snap-${Date.now()}.ipynb`);
  fs.copyFileSync(file, snap);
  try {
    execFileSync('/usr/bin/python3', ['-c',
      'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
      snap], { stdio: ['ignore', 'ignore', 'pipe'] });
    fs.unlinkSync(snap);
  } catch (e) {
    tornFiles.push(`${why}: ${snap}: ${String(e.stderr || e.message).split('\n').slice(-3).join(' ')}`);
  }
}

// One agent: a client, its handle, its record of what it was told.
class Agent {
  constructor(name) {
    this.name = name;
    this.mcp = null;
    this.handle = null;
    this.acked = [];		// markers edit_cells confirmed
    this.ackedAt = new Map();	// marker -> seconds into the run
    this.unknown = [];	// markers whose outcome is unknown
    this.refused = [];	// markers refused with a definitive error
    this.cells = [];	// cell_ids of acknowledged inserts
    this.runs = [];		// execution_ids
    this.n = 0;
    this.calls = 0;
    this.errors = {};
  }

  async start() {
    this.mcp = await connect(world, `chaos-${this.name}`);
  }

  count(code) {
    this.errors[code] = (this.errors[code] || 0) + 1;
  }

  // A tool call that never throws: {sc, code} (code null on success).
  async tool(name, args) {
    this.calls++;
    try {
      const r = await callRaw(this.mcp.client, name, args);
      const sc = r.structuredContent || {};
      const code = r.isError ? (sc.error?.code || 'tool_error') : null;
      if (code) this.count(code);
      return { sc, code };
    } catch (e) {
      const code = `rpc${e.code ?? ''}`;
      this.count(code);
      return { sc: {}, code, message: e.message };
    }
  }

  async attach() {
    for (let i = 0; i < 200; i++) {
      const { sc, code } = await this.tool('connect_notebook', { path: file });
      if (!code) {
        this.handle = sc.notebook_handle;
        return true;
      }
      // A worker that cannot reach a daemon again: ask for a new one.
      if (i % 5 === 4) await this.tool('reconnect', {});
      await sleep(100 + 50 * Math.min(i, 10));
    }
    return false;
  }

  // Handle-bound call; on an expired or unknown handle, attach again.
  async onNote(name, args) {
    if (!this.handle && !(await this.attach())) return { code: 'no_handle', sc: {} };
    const res = await this.tool(name, { notebook_handle: this.handle, ...args });
    if (res.code && REATTACH.has(res.code)) this.handle = null;
    return res;
  }

  async insert() {
    const marker = `chaos-${this.name}-${SEED}-${++this.n}`;
    const source = `# ${marker}\nv_${this.name}_${this.n} = ${this.n}`;
    const { sc, code } = await this.onNote('edit_cells', {
      edits: [{ op: 'insert', after: 'BOTTOM', cell_type: 'code', source }],
    });
    if (!code) {
      this.acked.push(marker);
      this.ackedAt.set(marker, now());
      this.cells.push(sc.cells?.[0]?.cell_id);
    } else if (code === 'outcome_unknown' || code.startsWith('rpc')) {
      this.unknown.push(marker);
    } else {
      this.refused.push(`${marker}:${code}`);
    }
  }

  async run() {
    if (this.cells.length === 0) return;
    const ids = [pick(this.cells), pick(this.cells)];
    const { sc, code } = await this.onNote('run_cells', {
      cell_ids: [...new Set(ids)], wait_secs: pick([0, 0, 1]),
    });
    if (!code && sc.execution_id) this.runs.push(sc.execution_id);
  }

  async save() {
    const { code } = await this.onNote('save_notebook', {});
    if (!code) {
      savedOk++;
      validateNow(`after a save by ${this.name}`);
    }
  }

  async work(until) {
    while (Date.now() < until) {
      const r = rand();
      if (r < 0.6) await this.insert();
      else if (r < 0.85) await this.run();
      else await this.save();
    }
  }
}

const VICTIMS = {
  worker: (p) => /runtimed-mcp-worker/.test(p.cmd),
  daemon: (p) => /(^|\/)runtimed( |$)/.test(p.cmd) && !/runtimed-/.test(p.cmd.split(' ')[0]),
  agent: (p) => /runtimed-agent/.test(p.cmd),
  kernel: (p) => /ipykernel/.test(p.cmd),
};

async function driver(until) {
  while (Date.now() < until) {
    await sleep(1500 + rand() * 2500);
    if (Date.now() >= until) break;
    const kind = pick(Object.keys(VICTIMS));
    const cands = processesOf(world).filter(VICTIMS[kind]);
    if (cands.length === 0) {
      events.push(`${kind}: none running`);
      continue;
    }
    const v = pick(cands);
    try {
      process.kill(v.pid, 'SIGKILL');
      events.push(`${kind} ${v.pid} @${now()}s`);
      log(`killed ${kind} ${v.pid}`);
    } catch {
      events.push(`${kind} ${v.pid}: already gone`);
    }
    await sleep(200);
    validateNow(`after killing ${kind} ${v.pid}`);
  }
}

// Every run must reach a terminal status; ask through a live handle.
async function settleRuns(agent) {
  const stuck = [];
  for (const ex of agent.runs) {
    let status = null;
    let code = null;
    for (let i = 0; i < 10 && !TERMINAL.has(status); i++) {
      const r = await agent.onNote('get_results', { execution_id: ex, timeout_secs: 20 });
      code = r.code;
      status = r.sc.status ?? null;
      if (code && !REATTACH.has(code) && code !== 'notebook_unavailable' &&
          !code.startsWith('rpc')) break;
    }
    if (!TERMINAL.has(status)) stuck.push(`${ex}: ${status ?? code}`);
  }
  return stuck;
}

// Every cell source of the notebook, through a fresh client.
async function readBack() {
  const reader = new Agent('reader');
  await reader.start();
  if (!(await reader.attach())) throw new Error('reader cannot connect');
  const sources = [];
  let total = Infinity;
  // A result holds as many cells as its caps let it: read on from the
  // cell after the last one returned.
  for (let start = 0; start < total;) {
    const { sc, code } = await reader.onNote('inspect_notebook', {
      view: 'source', start, count: 100, max_source_chars: 12000,
    });
    if (code) throw new Error(`inspect_notebook: ${code}`);
    total = sc.total_cells;
    for (const c of sc.cells || []) sources.push(c.source ?? '');
    if (!sc.cells?.length) break;
    start = sc.cells[sc.cells.length - 1].index + 1;
  }
  const { code } = await reader.onNote('save_notebook', {});
  if (!code) validateNow('final save');
  await reader.mcp.client.close();
  return sources;
}

async function main() {
  log(`chaos: ${SECS} s of workload, seed ${SEED}, world ${world.dir}`);
  const a = new Agent('a');
  const b = new Agent('b');
  await a.start();
  await b.start();
  const created = await a.tool('create_notebook', { path: file });
  if (created.code) throw new Error(`create_notebook: ${created.code}`);
  await a.tool('save_notebook', { notebook_handle: created.sc.notebook_handle });
  a.handle = created.sc.notebook_handle;
  await b.attach();

  const until = Date.now() + SECS * 1000;
  await Promise.all([a.work(until), b.work(until), driver(until)]);
  log('workload over; settling runs');
  const stuck = [...(await settleRuns(a)), ...(await settleRuns(b))];

  const sources = await readBack();
  const seen = new Map();
  for (const s of sources) {
    const m = /^# (chaos-\S+)/.exec(s);
    if (m) seen.set(m[1], (seen.get(m[1]) || 0) + 1);
  }
  const acked = [...a.acked, ...b.acked];
  const lost = acked.filter((m) => !seen.has(m))
    .map((m) => `${m} (acked @${a.ackedAt.get(m) ?? b.ackedAt.get(m)}s)`);
  const twice = [...seen].filter(([, n]) => n > 1).map(([m, n]) => `${m} x${n}`);
  const unknownPresent = [...a.unknown, ...b.unknown].filter((m) => seen.has(m)).length;
  const refusedPresent = [...a.refused, ...b.refused]
    .filter((r) => seen.has(r.split(':')[0]));

  log(`kills: ${events.join(', ') || 'none'}`);
  log(`calls a=${a.calls} b=${b.calls}; acknowledged edits ${acked.length}, ` +
    `unknown ${a.unknown.length + b.unknown.length} (${unknownPresent} applied), ` +
    `refused ${a.refused.length + b.refused.length}; runs ${a.runs.length + b.runs.length}; ` +
    `saves ${savedOk}; cells read back ${sources.length}`);
  log(`error codes a: ${JSON.stringify(a.errors)} b: ${JSON.stringify(b.errors)}`);

  verdict(events.some((e) => !e.includes(':')), 'the driver killed something',
    events.join(', '));
  verdict(lost.length === 0, 'zero acknowledged edits lost',
    `${lost.length} of ${acked.length} missing${lost.length ? ` (first: ${lost.slice(0, 5).join(', ')})` : ''}`);
  verdict(twice.length === 0, 'no mutation replayed (each marker at most once)',
    twice.slice(0, 5).join(', '));
  verdict(refusedPresent.length === 0, 'a refused edit did not happen',
    refusedPresent.slice(0, 5).join(', '));
  verdict(tornFiles.length === 0, 'no torn .ipynb (every saved file validates)',
    `${savedOk} saves${tornFiles.length ? `; ${tornFiles.slice(0, 3).join('; ')}` : ''}`);
  verdict(stuck.length === 0, 'every run ends in a terminal status',
    `${a.runs.length + b.runs.length} runs${stuck.length ? `; not terminal: ${stuck.slice(0, 5).join(', ')}` : ''}`);

  await a.mcp.client.close();
  await b.mcp.client.close();
  const stop = stopDaemon(world);
  const left = await waitFor(() => {
    const p = processesOf(world).filter((x) => VICTIMS.agent(x) || VICTIMS.kernel(x) ||
      VICTIMS.daemon(x) || VICTIMS.worker(x));
    return p.length === 0 ? [] : null;
  }, 15000);
  const leftover = processesOf(world).map((p) => `${p.pid} ${p.cmd.slice(0, 80)}`);
  verdict(left !== null, 'no orphan agents or kernels once the daemon stops',
    `runtimed stop: ${stop.status}${leftover.length ? `; left: ${leftover.join(' | ')}` : ''}`);
  const reports = sanitizerReports(world);
  verdict(reports.length === 0, 'no sanitizer reports', reports.slice(0, 2).join('\n'));
}

let status = 0;
try {
  await main();
  status = failures.length ? 1 : 0;
} catch (e) {
  console.log(`FAIL  chaos run aborted: ${e.stack || e}`);
  status = 1;
}
console.log(failures.length || status ? `chaos: ${failures.length} assertion(s) failed (seed ${SEED})`
  : `chaos: all assertions hold (seed ${SEED})`);
killWorld(world);
if (status === 0 && !process.env.RUNTIMED_CHAOS_KEEP) removeWorld(world);
else console.log(`chaos: world kept in ${world.dir}`);
process.exit(status);
