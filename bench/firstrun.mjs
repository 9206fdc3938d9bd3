// SPDX-License-Identifier: ISC
// bench/firstrun.mjs: the first run in a new notebook, from the warm pool,
// end to end through runtimed-mcp driven by the official MCP SDK client.
// Each round waits for the pool's kernel to be ready (runtimed status),
// then times create_notebook + edit_cells (insert 1+1) + run_cells until
// the result, and the run_cells call alone.  Prints the median and the
// interquartile range over the rounds.  Also counts the kernels after
// connecting 5 notebooks and reading them (decision 018: none but the
// pool's).
//
// usage: node bench/firstrun.mjs <runtimed-mcp> [rounds]
//   RUNTIMECTL: the runtimectl to ask for status (default: beside the
//   proxy, in a build tree or an install)
import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';

const [proxy, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 9);
const ctl = process.env.RUNTIMECTL ??
  [join(dirname(proxy), 'runtimectl', 'runtimectl'), join(dirname(proxy), 'runtimectl')].find(existsSync) ?? 'runtimectl';
const dir = mkdtempSync(join(tmpdir(), 'runtimed-firstrun-'));
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME,
  RUNTIMED_SOCKET: join(dir, 'sock', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: join(dir, 'state'),
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};
if (process.env.RUNTIMED_LIBEXEC_DIR)
  env.RUNTIMED_LIBEXEC_DIR = process.env.RUNTIMED_LIBEXEC_DIR;

const client = new Client({ name: 'runtimed-firstrun', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
await client.connect(new StdioClientTransport({ command: proxy, args: [], env, stderr: 'inherit' }));

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent;
}

function status() {
  return JSON.parse(execFileSync(ctl, ['--json', 'status'], { env }).toString());
}

async function poolReady() {
  for (let i = 0; i < 600; i++) {
    if (status().pool_ready >= 1) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the warm pool was not ready in 60 s');
}

const q = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

await call('list_notebooks', {});	// the daemon is up
const whole = [], run = [];
for (let i = 0; i < rounds; i++) {
  await poolReady();
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  const nb = await call('create_notebook', {});
  const ed = await call('edit_cells', { notebook_handle: nb.notebook_handle, edits: [{ op: 'insert', after: 'BOTTOM', source: '1+1' }] });
  const t1 = performance.now();
  const r = await call('run_cells', { notebook_handle: nb.notebook_handle, cell_ids: [ed.cells[0].cell_id], wait_secs: 50 });
  const t2 = performance.now();
  if (r.status !== 'done') throw new Error(`run ended ${r.status}`);
  whole.push(t2 - t0);
  run.push(t2 - t1);
  await call('disconnect_notebook', { notebook_handle: nb.notebook_handle });
}

// A read-only sweep: 5 files connected and read, kernels counted.
const before = status().kernel_list.filter((k) => !k.pooled).length;
for (let i = 0; i < 5; i++) {
  const p = join(dir, `sweep${i}.ipynb`);
  writeFileSync(p, JSON.stringify({ cells: [{ cell_type: 'code', execution_count: null, id: `c${i}`, metadata: {}, outputs: [], source: `x = ${i}` }], metadata: {}, nbformat: 4, nbformat_minor: 5 }));
  const c = await call('connect_notebook', { path: p });
  await call('inspect_notebook', { notebook_handle: c.notebook_handle, view: 'all' });
}
await new Promise((r) => setTimeout(r, 500));
const after = status().kernel_list.filter((k) => !k.pooled).length;
await client.close();
execFileSync(ctl, ['stop'], { env, stdio: 'ignore' });

const fmt = (a) => `median ${q(a, 0.5).toFixed(1)} ms (IQR ${q(a, 0.25).toFixed(1)}-${q(a, 0.75).toFixed(1)})`;
console.log(`first run in a new notebook, warm pool, ${rounds} rounds:`);
console.log(`  create + insert + run 1+1: ${fmt(whole)}`);
console.log(`  run_cells alone:           ${fmt(run)}  (goal <= 25 ms)`);
console.log(`5 notebooks connected and read: ${after - before} kernels started beyond the pool`);
