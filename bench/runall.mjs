// SPDX-License-Identifier: ISC
// bench/runall.mjs: what run_cells all:true costs before its run is
// queued, on notebooks of many cells (issue 37): the time from the
// worker reading the tools/call to the daemon answering EXEC_RUN (the
// run is queued then: wait_secs 0 answers at once), and the bytes of
// the frames between the worker and the daemon in that time, both from
// the per-hop trace (RUNTIMED_TRACE, common/trace.c).
//
// Each notebook has CELLS cells, 250 of them code cells spread through
// it (a run takes at most 256), each with a 200-byte stream output; the
// others markdown.  Two cases a round: "edited" right after an edit by
// this worker (its copy of the notebook is gone, as after any edit),
// "kept" right after a run ended with no edit since.
//
// Usage: node bench/runall.mjs BUILDDIR
// env: RUNALL_CELLS (1000,10000), RUNALL_ROUNDS (5), WORKER (the worker
// binary: BUILDDIR/runtimed-mcp-worker; another build's to compare).
// Prints one line per notebook size and case: p50 and max ms, p50 bytes.
// Not part of make check.

import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const B = path.resolve(process.argv[2] || '.');
const SIZES = (process.env.RUNALL_CELLS || '1000,10000').split(',').map(Number);
const ROUNDS = Number(process.env.RUNALL_ROUNDS || 5);
const WORKER = process.env.WORKER || path.join(B, 'runtimed-mcp-worker');
const DAEMON = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
  path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'rtd-bench-runall-'));
const TRACE = path.join(T, 'trace');
fs.mkdirSync(path.join(T, 'run'), { mode: 0o700 });
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME || T,
  RUNTIMED_SOCKET: path.join(T, 'run', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: path.join(T, 'state'),
  RUNTIMED_LIBEXEC_DIR: `${path.dirname(DAEMON)}:${B}`,
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
  RUNTIMED_TRACE: TRACE,
};

function notebook(file, n) {
  const every = Math.floor(n / 250);
  const cells = [];
  for (let i = 0; i < n; i++) {
    if (i % every === 0 && cells.filter((c) => c.cell_type === 'code').length < 250)
      cells.push({ cell_type: 'code', id: `c${i}`, metadata: {},
        execution_count: 1, source: `x${i} = ${i}\n`,
        outputs: [{ output_type: 'stream', name: 'stdout',
          text: 'o'.repeat(199) + '\n' }] });
    else
      cells.push({ cell_type: 'markdown', id: `m${i}`, metadata: {},
        source: `## Section ${i}\n\n` + 'Some prose about the analysis. '.repeat(4) });
  }
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3',
      language: 'python' } }, cells }));
}

// From the worker's tools/call line to the daemon's EXEC_STATE out.
function measure() {
  const lines = fs.readFileSync(TRACE, 'utf8').trim().split('\n').map((l) => {
    const [us, proc, dir, peer, type, , len] = l.split(' ');
    return { us: Number(us), proc, dir, peer, type, len: Number(len) };
  });
  const worker = (l) => l.proc.startsWith('runtimed-mcp-w');
  const start = lines.find((l) => worker(l) && l.peer === 'stdin');
  const queued = lines.find((l) => l.proc.startsWith('runtimed[') &&
    l.dir === 'out' && l.type === 'EXEC_STATE');
  const back = lines.find((l) => worker(l) && l.dir === 'in' &&
    l.type === 'EXEC_STATE');
  let bytes = 0, frames = [];
  for (const l of lines) {
    if (!worker(l) || l.peer === 'stdin' || l.peer === 'stdout' ||
        l.us < start.us || l.us > back.us)
      continue;
    bytes += l.len;
    frames.push(`${l.dir} ${l.type}`);
  }
  return { ms: (queued.us - start.us) / 1000, bytes, frames };
}

const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

const A = new Client({ name: 'bench-runall', version: '1' },
  { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
await A.connect(new StdioClientTransport({ command: WORKER, args: [], env,
  stderr: 'inherit' }), { timeout: 60000 });
async function call(name, args) {
  const r = await A.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent;
}

try {
  for (const n of SIZES) {
    const file = path.join(T, `nb${n}.ipynb`);
    notebook(file, n);
    const h = (await call('connect_notebook', { path: file })).notebook_handle;
    const got = { edited: [], kept: [] };
    for (let round = 0; round <= ROUNDS; round++) {
      for (const kase of ['edited', 'kept']) {
        if (kase === 'edited')
          await call('edit_cells', { notebook_handle: h, edits: [
            { op: 'edit', cell_id: 'm1', source: `## Section 1, round ${round}` }] });
        fs.truncateSync(TRACE, 0);
        const r = await call('run_cells', { notebook_handle: h, all: true,
          stop_on_error: false, wait_secs: 0 });
        const m = measure();
        await call('get_results', { notebook_handle: h,
          execution_id: r.execution_id, timeout_secs: 50 });
        if (round > 0)	/* the first round warms up */
          got[kase].push(m);
        if (round === 1 && process.env.RUNALL_FRAMES)
          console.log(`${n} ${kase}: ${m.frames.join(', ')}`);
      }
    }
    for (const kase of ['edited', 'kept']) {
      const ms = got[kase].map((m) => m.ms);
      console.log(`cells ${n} ${kase}: tools/call -> queued p50 ` +
        `${p50(ms).toFixed(2)} ms (max ${Math.max(...ms).toFixed(2)}), ` +
        `worker<->daemon ${p50(got[kase].map((m) => m.bytes))} bytes ` +
        `(${ROUNDS} rounds)`);
    }
    await call('disconnect_notebook', { notebook_handle: h });
  }
} finally {
  await A.close().catch(() => {});
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
}
