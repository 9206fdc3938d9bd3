// SPDX-License-Identifier: ISC
// run.mjs: every benchmark of bench/, one markdown table (bench/run.sh
// is the way in; docs/decisions/020-benchmark-method.md says why it
// measures this way).
//
// A subject (runtimed, driven by the official MCP SDK client) and its
// reference (raw pyzmq and jupyter_client on a kernel of their own;
// nbformat) alternate in rounds, a batch of each per round, so a change
// in machine load lands on both sides of a round.  A row shows the
// median over rounds of the per-round ratio (subject batch median over
// reference batch median) with its interquartile range, and p50/p99 of
// every sample of each side.
//
// usage: node bench/run.mjs --build DIR [--quick|--full] [--out FILE]
//     [--only SECTION,...]
// sections: rss exec first ipynb rpc supervision hops, and (--full or
// --only) scale waiters growth; env: RUNTIMED_MCP, RUNTIMED_BIN and RUNTIMED_LIBEXEC_DIR as
// for the e2e tests (run.sh sets them for a build tree).

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import {
  callRaw, childrenOf, connect, killWorld, mcpBinary, privateWorld,
  processesOf, removeWorld, stopDaemon,
} from '../tests/e2e/lib.mjs';
import { median, ratioSummary, summary } from './stats.mjs';
import { lineClient, refServer } from './clients.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const opt = { mode: 'quick', out: null, build: '.', only: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quick' || a === '--full') opt.mode = a.slice(2);
  else if (a === '--out') opt.out = process.argv[++i];
  else if (a === '--build') opt.build = path.resolve(process.argv[++i]);
  else if (a === '--only') opt.only = process.argv[++i].split(',');
  else throw new Error(`unknown argument ${a}`);
}
const FULL = opt.mode === 'full';
const ROUNDS = FULL ? 15 : 9;
const log = (...a) => console.error('bench:', ...a);

// ---------------------------------------------------------------- table

const rows = [];
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const side = (s, unit = 'ms') => (s ? `${ms(s.p50)} / ${ms(s.p99)} ${unit}` : '-');

// A row comparing subject and reference (lower is better unless higher).
function ratioRow(name, r, goal, unit = 'ms', higher = false) {
  rows.push({
    name, subject: side(r.subject, unit), reference: side(r.reference, unit),
    result: `${r.ratio.toFixed(2)}x (${r.q1.toFixed(2)}-${r.q3.toFixed(2)}, ` +
      `${r.rounds} rounds)`,
    goal: goal === null ? '-' : `${higher ? '>=' : '<='} ${goal}x`,
    met: goal === null ? null : higher ? r.ratio >= goal : r.ratio <= goal,
  });
}

// A row with no reference: the median against an absolute goal.
function valueRow(name, xs, goal, unit = 'ms', higher = false) {
  const s = summary(xs);
  rows.push({
    name, subject: side(s, unit), reference: '-',
    result: `${ms(s.p50)} ${unit} (${ms(s.q1)}-${ms(s.q3)}, n=${s.n})`,
    goal: goal === null ? '-' : `${higher ? '>=' : '<='} ${goal} ${unit}`,
    met: goal === null ? null : higher ? s.p50 >= goal : s.p50 <= goal,
  });
}

function table() {
  const head = ['benchmark', 'runtimed p50 / p99', 'reference p50 / p99',
    'result: median (IQR)', 'goal', 'met'];
  const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows)
    out.push(`| ${[r.name, r.subject, r.reference, r.result, r.goal,
      r.met === null ? '' : r.met ? 'yes' : '**no**'].join(' | ')} |`);
  return out.join('\n');
}

// ---------------------------------------------------------------- helpers

const RUNTIMECTL = (() => {
  const b = path.join(opt.build, 'runtimectl', 'runtimectl');
  return fs.existsSync(b) ? b : 'runtimectl';
})();

// The daemon's status, as runtimectl --json prints it.
function status(world) {
  const r = spawnSync(RUNTIMECTL, ['--json', 'status'], {
    env: world.env, encoding: 'utf8', timeout: 10000,
  });
  try { return JSON.parse(r.stdout); } catch { return null; }
}

// Wait until the warm pool is full again (or 30 s).
async function poolFull(world) {
  const end = Date.now() + 30000;
  while (Date.now() < end) {
    const s = status(world);
    if (s && s.pool_size > 0 && s.pool_ready >= s.pool_size) return true;
    await sleep(100);
  }
  return false;
}

async function tool(client, name, args) {
  const r = await callRaw(client, name, args);
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content).slice(0, 300)}`);
  return r.structuredContent;
}

// A cell of CODE at the bottom of notebook H; returns a timed runner.
async function cellRunner(client, h, code) {
  const ed = await tool(client, 'edit_cells', {
    notebook_handle: h, edits: [{ op: 'insert', after: 'BOTTOM', source: code }],
  });
  const cell = ed.cells[0].cell_id;
  const run = async () => {
    const t0 = performance.now();
    const r = await tool(client, 'run_cells', {
      notebook_handle: h, cell_ids: [cell], wait_secs: 50,
    });
    const t = performance.now() - t0;
    if (r.status !== 'done') throw new Error(`run of ${code.slice(0, 40)} ended ${r.status}`);
    return t;
  };
  run.cellId = cell;
  return run;
}

async function times(run, n) {
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(await run());
  return xs;
}

async function withWorld(tag, fn) {
  const world = privateWorld(tag);
  try {
    return await fn(world);
  } finally {
    stopDaemon(world);
    killWorld(world);
    removeWorld(world);
  }
}

const png = (mb) => "import base64; from IPython.display import display; " +
  `s = base64.b64encode(b'\\x89PNG' + bytes(${mb * 786432 - 4})).decode(); ` +
  "display({'image/png': s}, raw=True)";

// ---------------------------------------------------------------- sections

// Idle memory of each process, one notebook attached after a run: VmRSS
// (every resident page, shared library pages included), RssAnon (the
// process's own heap and stacks) and Pss (its share of every page, a
// shared one divided among the processes that map it: what it costs the
// machine).  "met" stays VmRSS's, the goal as issue 14 set it; the
// result says by which of the three the goal is met.  BENCH_SMAPS=DIR
// copies each process's /proc/PID/smaps there.
async function benchRss() {
  await withWorld('bench-rss', async (world) => {
    const { client } = await connect(world, 'bench-rss');
    const nb = await tool(client, 'create_notebook', {});
    await (await cellRunner(client, nb.notebook_handle, '1+1'))();
    await poolFull(world);
    await sleep(3000);
    const kb = (text, key) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text ?? '');
      return m ? Number(m[1]) / 1024 : NaN;
    };
    const read = (pid, f) => {
      try { return fs.readFileSync(`/proc/${pid}/${f}`, 'utf8'); } catch { return null; }
    };
    const mem = (pid) => {
      const st = read(pid, 'status'), roll = read(pid, 'smaps_rollup');
      return { rss: kb(st, 'VmRSS'), anon: kb(st, 'RssAnon'), pss: kb(roll, 'Pss') };
    };
    const by = {};
    for (const p of processesOf(world)) {
      const prog = path.basename(p.cmd.split(' ')[0]);
      (by[prog] ??= []).push({ pid: p.pid, ...mem(p.pid) });
      if (process.env.BENCH_SMAPS) {
        fs.mkdirSync(process.env.BENCH_SMAPS, { recursive: true });
        const sm = read(p.pid, 'smaps');
        if (sm) fs.writeFileSync(path.join(process.env.BENCH_SMAPS, `${prog}-${p.pid}.smaps`), sm);
      }
    }
    const goals = { runtimed: 8, 'runtimed-mcp-worker': 4, 'runtimed-mcp': 2, 'runtimed-agent': 4 };
    const mb = (x) => `${x.toFixed(1)} MB`;
    for (const [prog, goal] of Object.entries(goals)) {
      const xs = (by[prog] ?? []).filter((x) => !Number.isNaN(x.rss));
      if (!xs.length) continue;
      // Agents: the warm pool's too; the largest is the one in use.
      const v = xs.reduce((a, b) => (b.rss > a.rss ? b : a));
      const by3 = [['VmRSS', v.rss], ['RssAnon', v.anon], ['Pss', v.pss]];
      const yes = by3.filter(([, x]) => x <= goal).map(([k]) => k);
      const no = by3.filter(([, x]) => !(x <= goal)).map(([k]) => k);
      rows.push({
        name: `idle memory, ${prog}${xs.length > 1 ? ` (largest of ${xs.length})` : ''}`,
        subject: `${mb(v.rss)} / ${mb(v.anon)} / ${mb(v.pss)} (VmRSS / RssAnon / Pss)`,
        reference: '-',
        result: [yes.length && `met by ${yes.join(', ')}`, no.length && `not by ${no.join(', ')}`]
          .filter(Boolean).join('; '),
        goal: `<= ${goal} MB`, met: v.rss <= goal,
      });
    }
    // A 2.5 MB notebook read, then idle: its JSON tree is not kept.
    const big = path.join(world.dir, 'rss-big.ipynb');
    const cells = [];
    for (let i = 0; i < 3000; i++)
      cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: 1,
        source: `x${i} = ${i}\n# ${'y'.repeat(400)}`,
        outputs: [{ output_type: 'stream', name: 'stdout', text: `${'z'.repeat(300)}\n` }] });
    fs.writeFileSync(big, JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const bh = (await tool(client, 'connect_notebook', { path: big })).notebook_handle;
    await tool(client, 'inspect_notebook', { notebook_handle: bh, view: 'all', count: 100 });
    const wpid = (by['runtimed-mcp-worker'] ?? [])[0]?.pid;
    if (wpid) {
      const read1 = mem(wpid);
      await sleep(12000);
      const idle = mem(wpid);
      rows.push({
        name: 'idle memory, runtimed-mcp-worker, 12 s after reading a 2.5 MB notebook',
        subject: `${mb(idle.rss)} / ${mb(idle.anon)} / ${mb(idle.pss)} (VmRSS / RssAnon / Pss)`,
        reference: '-', result: `RssAnon ${mb(read1.anon)} right after the read`,
        goal: `<= 4 MB`, met: idle.rss <= 4,
      });
    }
    await client.close();
  });
}

// Execution through the whole chain against raw pyzmq and jupyter_client.
// CPU time (ms) of process pid, every thread: each thread's /proc
// schedstat counts its time on a CPU in nanoseconds (/proc/PID/stat's
// ticks are 10 ms: too coarse for a batch of 1+1).
function cpuMsOf(pid) {
  let t = 0;
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        t += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ')[0]) / 1e6;
      } catch { /* a thread that ended */ }
    }
  } catch { /* gone */ }
  return t;
}

async function benchExec() {
  const ref = refServer();
  const cold = await ref.ready;
  log(`reference kernel ready (jupyter_client cold start ${cold.cold_start_ms} ms)`);
  await withWorld('bench-exec', async (world) => {
    const { client } = await connect(world, 'bench-exec');
    const nb = await tool(client, 'create_notebook', { path: path.join(world.dir, 'bench.ipynb') });
    const h = nb.notebook_handle;
    const work = [
      { name: '`1+1` end to end', code: '1+1', n: FULL ? 50 : 20, goal: 1.10 },
      { name: '100,000 printed lines', code: "for i in range(100000): print(f'line {i}')", n: 1, goal: 1.05 },
      { name: '1 MB PNG', code: png(1), n: FULL ? 5 : 3, goal: 1.15 },
      { name: '10 MB PNG', code: png(10), n: 1, goal: 1.2 },
    ];
    // The kernel's own CPU per `1+1` execute, driven by runtimed and by
    // the raw client, on the same kernel: what the agent's requests (and
    // the chain beside the kernel on the same CPUs) make it do.
    const cpu = [];
    // `1+1` from a JSON-lines client through its own proxy, same notebook
    // and cell: the chain without the SDK; and this process's CPU per
    // call with each client.
    const lc = await lineClient(mcpBinary(), world.env, 'bench-lines');
    const lh = (await lc.tool('connect_notebook', { notebook_id: nb.notebook_id })).notebook_handle;
    const lines = [], client_cpu = [], pings = [];
    const cpuOf = async (run, n) => {
      const c0 = process.cpuUsage();
      const xs = await times(run, n);
      const c = process.cpuUsage(c0);
      return { xs, ms: (c.user + c.system) / 1000 / n };
    };
    for (const w of work) {
      w.run = await cellRunner(client, h, w.code);
      w.raw = []; w.jc = [];
      // Warm up both sides (imports, caches, the kernel's history).
      await times(w.run, w.n * 2);
      await ref.run('raw', w.code, w.n * 2);
      await ref.run('jc', w.code, w.n * 2);
    }
    const lineRun = async () => {
      const t0 = performance.now();
      const r = await lc.tool('run_cells', { notebook_handle: lh,
        cell_ids: [work[0].run.cellId], wait_secs: 50 });
      if (r.status !== 'done') throw new Error(`run of 1+1 ended ${r.status}`);
      return performance.now() - t0;
    };
    await times(lineRun, work[0].n * 2);
    // The raw client on runtimed's own kernel (its connection file is
    // the kernel's -f argument): both sides on one kernel, so a kernel
    // faster or slower than another moves neither.
    const { pid: kpid } = await tool(client, 'get_kernel_info', { notebook_handle: h });
    const argv = fs.readFileSync(`/proc/${kpid}/cmdline`, 'utf8').split('\0');
    const own = { connect: argv[argv.indexOf('-f') + 1], pid: kpid };
    const same = [];
    await ref.run('raw', '1+1', work[0].n * 2, own);
    for (let r = 0; r < ROUNDS; r++) {
      log(`exec round ${r + 1}/${ROUNDS}`);
      for (const w of work) {
        const raw = await ref.run('raw', w.code, w.n);
        const jc = await ref.run('jc', w.code, w.n);
        const c0 = cpuMsOf(kpid);
        const sdk = await cpuOf(w.run, w.n);
        const ours = sdk.xs;
        if (w === work[0]) {
          const kcpu = (cpuMsOf(kpid) - c0) / w.n;
          same.push({ subject: ours, reference: await ref.run('raw', w.code, w.n, own) });
          cpu.push({ subject: [kcpu], reference: [ref.kernelCpuMs / w.n] });
          const l = await cpuOf(lineRun, w.n);
          lines.push({ subject: l.xs, reference: raw });
          client_cpu.push({ subject: [sdk.ms], reference: [l.ms] });
          // The floor of any call: the SDK client, the proxy and the
          // worker, no daemon and no kernel.
          for (let i = 0; i < w.n; i++) {
            const t0 = performance.now();
            await client.ping();
            pings.push(performance.now() - t0);
          }
        }
        w.raw.push({ subject: ours, reference: raw });
        w.jc.push({ subject: ours, reference: jc });
      }
    }
    for (const w of work) {
      ratioRow(`${w.name} vs raw pyzmq`, ratioSummary(w.raw), w.goal);
      ratioRow(`${w.name} vs jupyter_client`, ratioSummary(w.jc), null);
      if (w === work[0]) {
        ratioRow('`1+1` vs raw pyzmq on the same kernel', ratioSummary(same), null);
        ratioRow('kernel CPU per `1+1` execute vs raw pyzmq, same kernel', ratioSummary(cpu), null);
        ratioRow('`1+1`, JSON-lines client (no SDK) vs raw pyzmq', ratioSummary(lines), null);
        ratioRow('client CPU per `1+1` call: SDK vs JSON lines', ratioSummary(client_cpu), null);
        valueRow('`ping`, SDK client through proxy and worker', pings, null);
      }
    }
    lc.close();
    await client.close();
  });
  ref.close();
}

// First run in a new notebook, a kernel from the warm pool: create,
// insert a cell, run it, its result.
async function benchFirst() {
  await withWorld('bench-first', async (world) => {
    const { client } = await connect(world, 'bench-first');
    await tool(client, 'list_notebooks', {});	// starts the daemon
    const xs = [];
    let refills = 0;
    for (let i = 0; i < ROUNDS + 1; i++) {
      if (!(await poolFull(world))) refills++;
      const t0 = performance.now();
      const nb = await tool(client, 'create_notebook', {});
      await (await cellRunner(client, nb.notebook_handle, '1+1'))();
      const t = performance.now() - t0;
      if (i > 0) xs.push(t);	// the first warms the daemon's caches
      await tool(client, 'disconnect_notebook', { notebook_handle: nb.notebook_handle });
    }
    if (refills) log(`first run: the pool was not full after 30 s ${refills} times`);
    valueRow('first run, new notebook, warm pool', xs, 25);
    await client.close();
  });
}

// .ipynb load and save against nbformat, same file, same run.
async function benchIpynb() {
  const prog = path.join(opt.build, 'bench-ipynb');
  if (!fs.existsSync(prog)) {
    log(`no ${prog}: make bench-ipynb first; ipynb skipped`);
    return;
  }
  const T = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ipynb-'));
  try {
    const nb = path.join(T, 'nb.ipynb');
    spawnSync('/usr/bin/python3', [path.join(here, 'ipynb-gen.py'), nb, '20'], { stdio: 'inherit' });
    const mb = fs.statSync(nb).size / 1048576;
    const load = [], save = [], rss = [];
    let same = true;
    for (let r = 0; r < ROUNDS; r++) {
      log(`ipynb round ${r + 1}/${ROUNDS}`);
      const ours = spawnSync(prog, [nb, path.join(T, 'ours.ipynb'), '2'], { encoding: 'utf8' });
      if (ours.status !== 0) throw new Error(`bench-ipynb: ${ours.stderr}`);
      const py = spawnSync('/usr/bin/python3', [path.join(here, 'ipynb-py.py'), nb,
        path.join(T, 'py.ipynb'), '2'], { encoding: 'utf8' });
      if (py.status !== 0) throw new Error(`ipynb-py.py: ${py.stderr}`);
      const [cl, cs, , , crss] = ours.stdout.trim().split(/\s+/).map(Number);
      const [pl, ps] = py.stdout.trim().split(/\s+/).map(Number);
      load.push({ subject: [mb / cl], reference: [mb / pl] });
      save.push({ subject: [mb / cs], reference: [mb / ps] });
      rss.push(crss / 1024 / mb);
      same &&= Buffer.compare(fs.readFileSync(path.join(T, 'ours.ipynb')),
        fs.readFileSync(path.join(T, 'py.ipynb'))) === 0;
    }
    const speed = (name, rounds, goal) => {
      const r = ratioSummary(rounds);
      rows.push({
        name, subject: side(r.subject, 'MB/s'), reference: side(r.reference, 'MB/s'),
        result: `${ms(r.subject.p50)} MB/s, ${r.ratio.toFixed(1)}x nbformat ` +
          `(${r.q1.toFixed(1)}-${r.q3.toFixed(1)})`,
        goal: `>= ${goal} MB/s`, met: r.subject.p50 >= goal,
      });
    };
    speed(`${mb.toFixed(0)} MB .ipynb load`, load, 300);
    speed(`${mb.toFixed(0)} MB .ipynb save${same ? '' : ' (bytes DIFFER from nbformat)'}`,
      save, 400);
    const p = Math.max(...rss);
    rows.push({
      name: '.ipynb load + save, peak RSS / file size', subject: `${p.toFixed(2)}x`,
      reference: '-', result: `${p.toFixed(2)}x`, goal: '<= 2.5x', met: p <= 2.5,
    });
  } finally {
    fs.rmSync(T, { recursive: true, force: true });
  }
}

// MCP round trips without a kernel (bench/worker.mjs before).
async function benchRpc() {
  await withWorld('bench-rpc', async (world) => {
    const nbPath = path.join(world.dir, 'big.ipynb');
    const cells = [];
    for (let i = 0; i < 500; i++) {
      if (i % 5 === 0)
        cells.push({ cell_type: 'markdown', id: `m${i}`, metadata: {}, source: [`## Section ${i}\n`, 'Text.'] });
      else
        cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: i,
          source: [`x${i} = ${i} * 2\n`, `print(x${i})`],
          outputs: [{ output_type: 'stream', name: 'stdout', text: [`${i * 2}\n`] }] });
    }
    fs.writeFileSync(nbPath, JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const { client } = await connect(world, 'bench-rpc');
    const h = (await tool(client, 'connect_notebook', { path: nbPath })).notebook_handle;
    const n = FULL ? 300 : 100;
    const timed = async (fn) => {
      for (let i = 0; i < 20; i++) await fn();
      const xs = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await fn();
        xs.push(performance.now() - t0);
      }
      return xs;
    };
    valueRow('inspect_notebook outline, 500 cells', await timed(() =>
      tool(client, 'inspect_notebook', { notebook_handle: h })), 2);
    valueRow('warm connect_notebook + disconnect', await timed(async () => {
      const c = await tool(client, 'connect_notebook', { path: nbPath });
      await tool(client, 'disconnect_notebook', { notebook_handle: c.notebook_handle });
    }), null);
    await client.close();
  });
}

async function ok(client, name, args) {
  try {
    const r = await callRaw(client, name, args);
    return r.isError ? (r.structuredContent?.error?.code || 'error') : null;
  } catch (e) {
    return `rpc${e.code ?? ''}`;
  }
}

// Worker SIGKILL -> the next successful tools/call; daemon SIGKILL -> the
// handle reported attachment_expired (bench/supervision.mjs before).
// Four kills per proxy, 1.2 s apart: neither the crash budget (5 in
// 30 s) nor the quick-death backoff is what gets measured.
async function benchSupervision() {
  const n = FULL ? 20 : ROUNDS;
  await withWorld('bench-sup', async (world) => {
    const xs = [];
    while (xs.length < n) {
      const mcp = await connect(world, 'bench-worker');
      if (await ok(mcp.client, 'list_notebooks', {})) throw new Error('no warm-up');
      for (let i = 0; i < 4 && xs.length < n; i++) {
        await sleep(1200);
        const [w] = childrenOf(mcp.transport.pid, 'runtimed-mcp-worker');
        if (!w) throw new Error('no worker');
        const t = performance.now();
        process.kill(w, 'SIGKILL');
        while (await ok(mcp.client, 'list_notebooks', {}));
        xs.push(performance.now() - t);
      }
      await mcp.client.close();
    }
    valueRow('worker SIGKILL -> serving again', xs, 20);

    const ys = [];
    const mcp = await connect(world, 'bench-daemon');
    for (let i = 0; i < n; i++) {
      let h = null;
      for (let k = 0; k < 100 && !h; k++) {
        const r = await callRaw(mcp.client, 'create_notebook', {}).catch(() => null);
        h = r && !r.isError ? r.structuredContent.notebook_handle : null;
        if (!h) await sleep(100);
      }
      if (!h) throw new Error('cannot create a notebook after a daemon kill');
      const d = processesOf(world).find((p) => path.basename(p.cmd.split(' ')[0]) === 'runtimed');
      if (!d) throw new Error('no daemon');
      const t = performance.now();
      process.kill(d.pid, 'SIGKILL');
      let code = null;
      while (performance.now() - t < 5000) {
        code = await ok(mcp.client, 'inspect_notebook', { notebook_handle: h });
        if (code === 'attachment_expired') break;
        await sleep(2);
      }
      if (code === 'attachment_expired') ys.push(performance.now() - t);
      else log(`daemon sample ${i + 1}: not expired after 5 s (last: ${code})`);
      // The kernels of the killed daemon's world go with their agents.
      await sleep(300);
    }
    await mcp.client.close();
    if (ys.length) valueRow('daemon SIGKILL -> handles expired', ys, 100);
  });
}

// 64 clients (one proxy each) in 8 groups of 8 sharing a notebook, a mixed
// loop (outline reads 40%, edits 25%, runs 20%, searches 10%, saves 5%):
// as fast as they go, then paced at 2 calls/s each.  Every acknowledged
// insert must be in the saved file, and every file valid.
async function benchScale() {
  const CLIENTS = 64, GROUPS = 8, SECS = 60;
  const KINDS = [['read', 40], ['edit', 25], ['run', 20], ['search', 10], ['save', 5]];
  await withWorld('bench-scale', async (world) => {
    const files = [];
    for (let g = 0; g < GROUPS; g++) {
      const f = path.join(world.dir, `group${g}.ipynb`);
      const cells = [];
      for (let i = 0; i < 20; i++)
        cells.push({ cell_type: 'code', id: `g${g}c${i}`, metadata: {}, execution_count: null,
          source: `y${i} = ${i} * 2`, outputs: [] });
      fs.writeFileSync(f, JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
      files.push(f);
    }
    const clients = [];
    for (let c = 0; c < CLIENTS; c++) {
      const mcp = await connect(world, `bench-scale-${c}`);
      const h = (await tool(mcp.client, 'connect_notebook', { path: files[c % GROUPS] })).notebook_handle;
      clients.push({ mcp, h, group: c % GROUPS, cell: `g${c % GROUPS}c${c % 20}` });
    }
    log(`scale: ${CLIENTS} clients attached`);
    const acked = files.map(() => new Map());
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = () => {
      let x = rand() * 100;
      for (const [k, w] of KINDS) if ((x -= w) < 0) return k;
      return 'read';
    };
    async function one(cl, kind, n) {
      const a = { notebook_handle: cl.h };
      switch (kind) {
      case 'read': return callRaw(cl.mcp.client, 'inspect_notebook', a);
      case 'edit': {
        const source = `# ${cl.group} ${n} ${rand()}`;
        const r = await callRaw(cl.mcp.client, 'edit_cells', { ...a,
          edits: [{ op: 'insert', after: 'BOTTOM', source }] });
        if (!r.isError) acked[cl.group].set(r.structuredContent.cells[0].cell_id, source);
        return r;
      }
      case 'run': return callRaw(cl.mcp.client, 'run_cells', { ...a, cell_ids: [cl.cell], wait_secs: 50 });
      case 'search': return callRaw(cl.mcp.client, 'search_cells', { ...a, query: 'y1' });
      default: return callRaw(cl.mcp.client, 'save_notebook', a);
      }
    }
    async function phase(paced) {
      const lat = Object.fromEntries(KINDS.map(([k]) => [k, []]));
      const errors = {};
      let calls = 0;
      const end = performance.now() + SECS * 1000;
      await Promise.all(clients.map(async (cl, i) => {
        let next = performance.now() + (paced ? rand() * 500 : 0);
        for (let n = 0; performance.now() < end; n++) {
          if (paced) {
            await sleep(Math.max(0, next - performance.now()));
            next += 500;
          }
          const kind = pick();
          const t0 = performance.now();
          let r;
          try { r = await one(cl, kind, n); } catch (e) { r = { isError: true, structuredContent: { error: { code: `rpc ${e.code}` } } }; }
          lat[kind].push(performance.now() - t0);
          calls++;
          if (r.isError) {
            const code = `${kind}: ${r.structuredContent?.error?.code ?? 'error'}`;
            errors[code] = (errors[code] ?? 0) + 1;
          }
        }
      }));
      const label = paced ? '64 clients paced at 2 calls/s' : '64 clients, as fast as they go';
      const nerr = Object.values(errors).reduce((a, b) => a + b, 0);
      rows.push({ name: `${label}: calls/s, errors`, subject: `${(calls / SECS).toFixed(0)} calls/s`,
        reference: '-', result: `${(calls / SECS).toFixed(0)} calls/s, ${nerr} errors` +
          (nerr ? ` ${JSON.stringify(errors).slice(0, 120)}` : ''),
        goal: paced ? '0 errors' : '>= 1000 calls/s, 0 errors',
        met: nerr === 0 && (paced || calls / SECS >= 1000) });
      for (const [k] of KINDS) {
        if (!lat[k].length) continue;
        const s = summary(lat[k]);
        rows.push({ name: `${label}: ${k}`, subject: side(s), reference: '-',
          result: `p99 ${ms(s.p99)} ms (n=${s.n})`,
          goal: paced && k !== 'run' ? '<= 50 ms p99' : '-',
          met: paced && k !== 'run' ? s.p99 <= 50 : null });
      }
    }
    log('scale: as fast as they go...');
    await phase(false);
    log('scale: paced...');
    await phase(true);
    // Every acknowledged insert in the saved file; every file valid.
    let missing = 0, invalid = 0;
    for (let g = 0; g < GROUPS; g++) {
      const cl = clients.find((c) => c.group === g);
      await tool(cl.mcp.client, 'save_notebook', { notebook_handle: cl.h });
      const nb = JSON.parse(fs.readFileSync(files[g], 'utf8'));
      const have = new Map(nb.cells.map((c) => [c.id, Array.isArray(c.source) ? c.source.join('') : c.source]));
      for (const [id, src] of acked[g]) if (have.get(id) !== src) missing++;
      const v = spawnSync('/usr/bin/python3', ['-c',
        'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))', files[g]]);
      if (v.status !== 0) invalid++;
    }
    const nacked = acked.reduce((a, m) => a + m.size, 0);
    rows.push({ name: '64 clients: acknowledged edits kept, files valid', subject: `${nacked - missing} of ${nacked}`,
      reference: '-', result: `${missing} missing, ${invalid} of ${GROUPS} files invalid`,
      goal: '0 missing, 0 invalid', met: missing === 0 && invalid === 0 });
    for (const cl of clients) await cl.mcp.client.close();
  });
}

// Memory and latency as counts grow (issue 14's scale): one worker
// holding 1 to 128 attachments; 1 to 256 idle proxies (each with its
// worker) on one daemon; the daemon's own memory per open room and per
// 1,000 cells.  RssAnon is the process's own memory, the part that grows.
async function benchGrowth() {
  const kb = (text, key) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text ?? '');
    return m ? Number(m[1]) / 1024 : NaN;
  };
  const mem = (pid) => {
    let st = null;
    try { st = fs.readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { /* gone */ }
    return { rss: kb(st, 'VmRSS'), anon: kb(st, 'RssAnon') };
  };
  const fds = (pid) => { try { return fs.readdirSync(`/proc/${pid}/fd`).length; } catch { return NaN; } };
  const pidOf = (world, prog, not = []) => processesOf(world).map((p) => ({
    pid: p.pid, prog: path.basename(p.cmd.split(' ')[0]) })).filter((p) => p.prog === prog &&
    !not.includes(p.pid)).map((p) => p.pid);
  const write = (f, n, out) => {
    const cells = [];
    for (let i = 0; i < n; i++)
      cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: out ? i + 1 : null,
        source: `x${i} = compute(${i})\nprint(x${i})`,
        outputs: out ? [{ output_type: 'stream', name: 'stdout', text: `${i * 7919}\n` }] : [] });
    fs.writeFileSync(f, JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
  };
  const outline = async (client, h) => {
    const xs = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await tool(client, 'inspect_notebook', { notebook_handle: h });
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  const mb = (x) => x.toFixed(1);
  await withWorld('bench-growth', async (world) => {
    const { client } = await connect(world, 'bench-growth');
    const files = [];
    for (let i = 0; i < 128; i++) {
      files.push(path.join(world.dir, `g${i}.ipynb`));
      write(files[i], 20, true);
    }
    const hs = [(await tool(client, 'connect_notebook', { path: files[0] })).notebook_handle];
    const worker = pidOf(world, 'runtimed-mcp-worker')[0];
    const daemon = pidOf(world, 'runtimed')[0];
    const steps = [];
    for (const n of [1, 32, 64, 128]) {
      while (hs.length < n)
        hs.push((await tool(client, 'connect_notebook', { path: files[hs.length] })).notebook_handle);
      await sleep(500);
      steps.push({ n, w: mem(worker), d: mem(daemon), lat: await outline(client, hs[0]) });
    }
    const first = steps[0], last = steps[steps.length - 1];
    rows.push({ name: 'one worker, 1 / 32 / 64 / 128 attachments: its RssAnon',
      subject: `${steps.map((x) => mb(x.w.anon)).join(' / ')} MB`, reference: '-',
      result: `outline p50 ${steps.map((x) => ms(x.lat)).join(' / ')} ms; ` +
        `${((last.w.anon - first.w.anon) * 1024 / (last.n - first.n)).toFixed(1)} kB per attachment`,
      goal: '-', met: null });
    rows.push({ name: 'daemon, per open room (20 cells, no kernel)',
      subject: `RssAnon ${mb(first.d.anon)} MB with 1 room, ${mb(last.d.anon)} MB with ${last.n}`,
      reference: '-',
      result: `${((last.d.anon - first.d.anon) * 1024 / (last.n - first.n)).toFixed(1)} kB per room`,
      goal: '-', met: null });
    // Idle proxies (each with its worker) on the daemon: its memory and
    // descriptors, and the first client's latency, as they grow.
    const idle = [];
    const psteps = [];
    for (const n of [1, 64, 128, 256]) {
      while (idle.length + 1 < n) {
        const c = await connect(world, `bench-growth-${idle.length}`);
        await tool(c.client, 'list_notebooks', {});
        idle.push(c);
      }
      await sleep(1000);
      psteps.push({ n, d: mem(daemon), fd: fds(daemon), lat: await outline(client, hs[0]) });
    }
    const p1 = psteps[0], pn = psteps[psteps.length - 1];
    rows.push({ name: '1 / 64 / 128 / 256 idle proxies on one daemon: its RssAnon, descriptors',
      subject: `${psteps.map((x) => mb(x.d.anon)).join(' / ')} MB, ` +
        `${psteps.map((x) => x.fd).join(' / ')} fds`, reference: '-',
      result: `outline p50 ${psteps.map((x) => ms(x.lat)).join(' / ')} ms; ` +
        `${((pn.d.anon - p1.d.anon) * 1024 / (pn.n - p1.n)).toFixed(1)} kB per client; ` +
        `VmRSS ${mb(pn.d.rss)} MB at ${pn.n}`,
      goal: '-', met: null });
    for (const c of idle) await c.client.close();
    // 10,000 cells of a line of code and a line of output each.
    const big = path.join(world.dir, 'cells10k.ipynb');
    write(big, 10000, true);
    await tool(client, 'disconnect_notebook', { notebook_handle: hs.pop() });
    const before = mem(daemon).anon;
    const bh = (await tool(client, 'connect_notebook', { path: big })).notebook_handle;
    await tool(client, 'inspect_notebook', { notebook_handle: bh, count: 1 });
    await sleep(500);
    const after = mem(daemon).anon;
    rows.push({ name: 'daemon, per 1,000 cells (a 10,000-cell notebook, 2 lines and an output each)',
      subject: `RssAnon +${mb(after - before)} MB for ${(fs.statSync(big).size / 1048576).toFixed(1)} MB of .ipynb`,
      reference: '-', result: `${((after - before) * 1024 / 10).toFixed(0)} kB per 1,000 cells`,
      goal: '-', met: null });
    await client.close();
  });
}

// 32 clients waiting on one notebook (inspect_notebook after, the
// longest timeout) while another makes 200 edits: every change reaches
// every waiter; the delay from the edit's acknowledgement to each
// waiter's answer.
async function benchWaiters() {
  const WAITERS = 32, EDITS = 200;
  await withWorld('bench-wait', async (world) => {
    const f = path.join(world.dir, 'wait.ipynb');
    fs.writeFileSync(f, JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const editor = await connect(world, 'bench-editor');
    const eh = (await tool(editor.client, 'connect_notebook', { path: f })).notebook_handle;
    const waiters = [];
    for (let i = 0; i < WAITERS; i++) {
      const mcp = await connect(world, `bench-waiter-${i}`);
      const r = await tool(mcp.client, 'connect_notebook', { path: f });
      const base = await tool(mcp.client, 'inspect_notebook', { notebook_handle: r.notebook_handle });
      waiters.push({ mcp, h: r.notebook_handle, cursor: base.cursor, seen: new Set(), gaps: 0 });
    }
    const ackAt = new Map();	// cell id -> acknowledgement time
    const delays = [];
    let stop = false;
    const loops = waiters.map(async (w) => {
      while (!stop) {
        const r = await callRaw(w.mcp.client, 'inspect_notebook', {
          notebook_handle: w.h, after: w.cursor, timeout_secs: 5, view: 'outline', count: 1 });
        const t = performance.now();
        if (r.isError) { w.gaps++; continue; }
        const sc = r.structuredContent;
        if (sc.outcome === 'resync_required') w.gaps++;
        w.cursor = sc.cursor;
        for (const id of sc.changes?.cell_ids ?? []) {
          if (w.seen.has(id)) continue;
          w.seen.add(id);
          if (ackAt.has(id)) delays.push(t - ackAt.get(id));
        }
        if (sc.changes?.truncated) w.gaps++;
      }
    });
    await sleep(500);
    for (let i = 0; i < EDITS; i++) {
      const r = await tool(editor.client, 'edit_cells', { notebook_handle: eh,
        edits: [{ op: 'insert', after: 'BOTTOM', source: `e${i}` }] });
      ackAt.set(r.cells[0].cell_id, performance.now());
      await sleep(20);
    }
    await sleep(2000);
    stop = true;
    await Promise.all(loops);
    const lost = waiters.reduce((a, w) => a + [...ackAt.keys()].filter((id) => !w.seen.has(id)).length, 0);
    const gaps = waiters.reduce((a, w) => a + w.gaps, 0);
    const s = summary(delays);
    rows.push({ name: `${WAITERS} waiters, ${EDITS} edits: delivery after the ack`, subject: side(s),
      reference: '-', result: `p99 ${ms(s.p99)} ms; ${lost} missed, ${gaps} gaps`,
      goal: '<= 10 ms p99, 0 missed', met: s.p99 <= 10 && lost === 0 && gaps === 0 });
    await editor.client.close();
    for (const w of waiters) await w.mcp.client.close();
  });
}

// Where the time of `1+1` goes: RUNTIMED_TRACE (common/trace.c) on in
// every process of a world, N runs, then each event's median offset from
// the client sending the request, in order.
const notes = [];
async function benchHops() {
  const N = FULL ? 200 : 50;
  await withWorld('bench-hops', async (world) => {
    const file = path.join(world.dir, 'trace');
    world.env.RUNTIMED_TRACE = file;
    const { client } = await connect(world, 'bench-hops');
    const nb = await tool(client, 'create_notebook', {});
    const run = await cellRunner(client, nb.notebook_handle, '1+1');
    await times(run, 20);
    fs.writeFileSync(file, '');
    // The client's own send and answer, on the processes' clock
    // (process.hrtime is CLOCK_MONOTONIC): a call is what happens from
    // its send to its answer.  A pause after each lets what a run sends
    // after its answer (the agent's idle, the last ROOM_CHANGED) settle
    // before the next send, so no call's table holds another's frames.
    const us = () => Number(process.hrtime.bigint() / 1000n);
    const mine = [];
    const total = await times(async () => {
      mine.push(`${us()} bench[0] out client request`);
      const t = await run();
      mine.push(`${us()} bench[0] in client answer`);
      await sleep(5);
      return t;
    }, N);
    await client.close();
    const ev = [...fs.readFileSync(file, 'utf8').trim().split('\n'), ...mine].map((l) => {
      const [t, proc, dir, peer, type] = l.split(' ');
      return { t: Number(t) / 1000, label: `${proc.replace(/\[.*/, '')} ${dir} ${peer} ${type}` };
    }).sort((a, b) => a.t - b.t);
    const calls = [];
    let open = false;
    for (const e of ev) {
      if (e.label === 'bench out client request') {
        calls.push([]);
        open = true;
      }
      if (open) calls.at(-1).push(e);
      if (e.label === 'bench in client answer') open = false;
    }
    const at = new Map();
    for (const c of calls) {
      const seen = {};
      for (const e of c) {
        const k = `${e.label}#${(seen[e.label] = (seen[e.label] ?? 0) + 1)}`;
        if (!at.has(k)) at.set(k, []);
        at.get(k).push(e.t - c[0].t);
      }
    }
    const list = [...at].filter(([, xs]) => xs.length >= calls.length / 2)
      .map(([k, xs]) => ({ k, off: median(xs), n: xs.length })).sort((a, b) => a.off - b.off);
    const out = [`Where \`1+1\` spends its time (RUNTIMED_TRACE, ${calls.length} runs; ` +
      `client-measured p50 ${ms(median(total))} ms): median offset of each hop from ` +
      'the client sending the request', '', '| hop | offset ms | since previous ms | in runs |', '|---|---|---|---|'];
    let prev = 0;
    for (const x of list) {
      out.push(`| ${x.k.replace(/#1$/, '')} | ${x.off.toFixed(3)} | ${(x.off - prev).toFixed(3)} | ${x.n} |`);
      prev = x.off;
    }
    notes.push(out.join('\n'));
  });
}

// ---------------------------------------------------------------- main

const sections = { rss: benchRss, exec: benchExec, first: benchFirst,
  ipynb: benchIpynb, rpc: benchRpc, supervision: benchSupervision,
  hops: benchHops, scale: benchScale, waiters: benchWaiters,
  growth: benchGrowth };
const fullOnly = ['scale', 'waiters', 'growth'];
const t0 = Date.now();
for (const [name, fn] of Object.entries(sections)) {
  if (opt.only ? !opt.only.includes(name) : !FULL && fullOnly.includes(name))
    continue;
  log(`${name}...`);
  try {
    await fn();
  } catch (e) {
    log(`${name} failed: ${e.stack ?? e}`);
    rows.push({ name: `${name}: FAILED (${String(e.message).slice(0, 80)})`,
      subject: '-', reference: '-', result: '-', goal: '-', met: false });
  }
}
const secs = Math.round((Date.now() - t0) / 1000);
const md = `${table()}\n\n${notes.map((n) => `${n}\n\n`).join('')}${opt.mode} mode, ${secs} s, ${new Date().toISOString().slice(0, 16)}Z, ` +
  `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)} at the end\n`;
process.stdout.write(md);
if (opt.out) fs.writeFileSync(opt.out, md);
if (rows.some((r) => r.name.includes('FAILED'))) process.exitCode = 1;
