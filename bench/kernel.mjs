// SPDX-License-Identifier: ISC
// bench/kernel.mjs: the kernel workloads of ref_kernel.py, end to end
// through runtimed-mcp driven by the official MCP SDK client, printed side
// by side with the references measured in the same run.
//
// usage: node bench/kernel.mjs <runtimed-mcp> <ref.json> [iterations]
import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

const [proxy, refPath, itersArg] = process.argv.slice(2);
const iterations = Number(itersArg ?? 200);
const ref = JSON.parse(readFileSync(refPath, 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'runtimed-bench-'));
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME,
  RUNTIMED_SOCKET: join(dir, 'sock', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: join(dir, 'state'),
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};
if (process.env.RUNTIMED_LIBEXEC_DIR)
  env.RUNTIMED_LIBEXEC_DIR = process.env.RUNTIMED_LIBEXEC_DIR;

const LINES = "for i in range(100000): print(f'line {i}')";
const PNG = "import base64; from IPython.display import display; " +
  "s = base64.b64encode(b'\\x89PNG' + bytes(786430)).decode(); " +
  "display({'image/png': s}, raw=True)";

const client = new Client({ name: 'runtimed-bench', version: '0' });
await client.connect(new StdioClientTransport({ command: proxy, args: [], env, stderr: 'inherit' }));

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent;
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

async function cellRunner(handle, code) {
  const ed = await call('edit_cells', { notebook_handle: handle, edits: [{ op: 'insert', after: 'BOTTOM', source: code }] });
  const cell = ed.cells[0].cell_id;
  return async () => {
    const t0 = performance.now();
    const r = await call('run_cells', { notebook_handle: handle, cell_ids: [cell], wait_secs: 50 });
    const t = performance.now() - t0;
    if (r.status !== 'done') throw new Error(`run ended ${r.status}`);
    return t;
  };
}

async function timeIt(run, n, warm = 0) {
  for (let i = 0; i < warm; i++) await run();
  const s = [];
  for (let i = 0; i < n; i++) s.push(await run());
  return median(s);
}

// First run in a new notebook: create, insert, run, result.
async function firstRun() {
  const t0 = performance.now();
  const nb = await call('create_notebook', {});
  const run = await cellRunner(nb.notebook_handle, '1+1');
  await run();
  const t = performance.now() - t0;
  await call('disconnect_notebook', { notebook_handle: nb.notebook_handle });
  return t;
}

const cold = await firstRun();
await new Promise((r) => setTimeout(r, 3000)); // let a warm pool refill
const warm = await firstRun();

const nb = await call('create_notebook', { path: join(dir, 'bench.ipynb') });
const h = nb.notebook_handle;
const onePlusOne = await timeIt(await cellRunner(h, '1+1'), iterations, 20);
const lines = await timeIt(await cellRunner(h, LINES), 5, 1);
const png = await timeIt(await cellRunner(h, PNG), 10, 2);
await client.close();
execFileSync(process.env.RUNTIMED_BIN ?? 'runtimed', ['stop'], { env, stdio: 'inherit' });

const row = (what, ours, base, goal) =>
  console.log(`${what.padEnd(34)} ${ours.toFixed(2).padStart(9)} ms  ${base.toFixed(2).padStart(9)} ms  ${(ours / base).toFixed(2).padStart(6)}x  (goal <= ${goal}x)`);
console.log(`${'workload'.padEnd(34)} ${'runtimed'.padStart(12)} ${'reference'.padStart(12)}  ratio`);
row('1+1 vs jupyter_client', onePlusOne, ref.jc_1p1_ms, '1.0');
row('1+1 vs raw pyzmq', onePlusOne, ref.raw_1p1_ms, '1.2');
row('100,000 printed lines vs raw', lines, ref.raw_lines_ms, '1.1');
row('1 MB PNG display vs raw', png, ref.raw_png_ms, '1.2');
console.log(`first run, new notebook: cold ${cold.toFixed(1)} ms, warm ${warm.toFixed(1)} ms (goal warm <= 50 ms); jupyter_client cold start ${ref.cold_start_ms} ms`);
