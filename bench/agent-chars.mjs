// SPDX-License-Identifier: ISC
// bench/agent-chars.mjs: how many characters an agent reads for one task,
// "find and fix the one failing cell of a 100-cell notebook with bulky
// outputs", through runtimed-mcp (proxy -> worker -> daemon -> ipykernel)
// with the official SDK client (tests/e2e/node_modules).  The calls:
// connect_notebook, inspect_notebook (the outline), run_cells all:true,
// edit_cells (replace the bad text), run_cells all:true again.
// Counted: the text content of each result (what a client hands the
// model), in characters (code points); structuredContent is shown beside.
//   target: <= 4,000 characters of text for the whole task
// Usage: node bench/agent-chars.mjs [builddir]   (not part of make check)
// Exits 1 when the task fails or the total is over the target.

import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const TARGET = 4000;
const B = path.resolve(process.argv[2] || '.');
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'rtd-bench-chars-'));
const DAEMON = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
  path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME || T,
  RUNTIMED_SOCKET: path.join(T, 'run', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: path.join(T, 'state'),
  RUNTIMED_LIBEXEC_DIR: `${B}:${path.dirname(DAEMON)}`,
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};
fs.mkdirSync(path.join(T, 'run'), { mode: 0o700 });

// 100 cells: a markdown heading every tenth, code cells that print a
// small table (the outputs saved from an earlier run are in the file),
// and one cell, index 57, that fails with a misspelt key.
const NB = path.join(T, 'report.ipynb');
const BAD = 57;
const cells = [];
const table = (k) => {
  const lines = [`step ${k}: id  value  bucket\n`];
  for (let i = 0; i < 8; i++)
    lines.push(`${String(i).padStart(4)} ${String(i * k).padStart(6)} ${String((i * k) % 7).padStart(3)}\n`);
  return lines;
};
for (let k = 0; k < 100; k++) {
  const id = `cell-${String(k).padStart(3, '0')}`;
  if (k % 10 === 0) {
    cells.push({ cell_type: 'markdown', id, metadata: {},
      source: [`## Part ${k / 10}\n`, 'The steps below build the table.'] });
    continue;
  }
  if (k === BAD) {
    cells.push({ cell_type: 'code', id, metadata: {}, execution_count: null,
      source: ['summary = {"count": 3, "total": 57}\n',
        'print("mean", summary["total"] / summary["cuont"])'],
      outputs: [] });
    continue;
  }
  cells.push({ cell_type: 'code', id, metadata: {}, execution_count: k,
    source: [`rows = [(i, i * ${k}, (i * ${k}) % 7) for i in range(8)]\n`,
      `print("step ${k}: id  value  bucket")\n`,
      'for r in rows:\n', '    print("%4d %6d %3d" % r)'],
    outputs: [{ output_type: 'stream', name: 'stdout', text: table(k) }] });
}
fs.writeFileSync(NB, JSON.stringify({ cells, metadata: {
  kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4, nbformat_minor: 5 }, null, 1));

const transport = new StdioClientTransport({ command: path.join(B, 'runtimed-mcp'),
  args: [], env, stderr: 'ignore' });
const client = new Client({ name: 'bench-chars', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
await client.connect(transport);

const chars = (s) => [...s].length;
const rows = [];
async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  if (r.isError)
    throw new Error(`${name}: ${text}`);
  rows.push({ call: name, text: chars(text),
    structured: chars(JSON.stringify(r.structuredContent ?? {})) });
  if (process.env.BENCH_SHOW)
    console.log(`----- ${name}\n${text}\n`);
  return { text, sc: r.structuredContent };
}

let failed = 0;
try {
  const c = await call('connect_notebook', { path: NB });
  const H = c.sc.notebook_handle;
  await call('inspect_notebook', { notebook_handle: H });
  const run = await call('run_cells', { notebook_handle: H, all: true, wait_secs: 50 });
  if (run.sc.status !== 'error')
    throw new Error(`the first run should fail, not ${run.sc.status}`);
  // The agent reads the failing cell from the run's text.
  const m = /cell ([\w-]+)[^\n]*error/.exec(run.text);
  const bad = m ? m[1] : null;
  if (bad !== cells[BAD].id)
    throw new Error(`the run's text names ${bad}, not ${cells[BAD].id}`);
  await call('edit_cells', { notebook_handle: H, edits: [
    { op: 'replace', cell_id: bad, old_text: 'summary["cuont"]', new_text: 'summary["count"]' }] });
  const again = await call('run_cells', { notebook_handle: H, all: true, wait_secs: 50 });
  if (again.sc.status !== 'done')
    throw new Error(`the rerun should be done, not ${again.sc.status}`);
} catch (e) {
  console.error(`task failed: ${e.message}`);
  failed = 1;
}

await client.close();
spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
fs.rmSync(T, { recursive: true, force: true });

let total = 0, stotal = 0;
console.log('call                text chars  structuredContent chars');
for (const r of rows) {
  console.log(`${r.call.padEnd(20)}${String(r.text).padStart(10)}  ${String(r.structured).padStart(10)}`);
  total += r.text;
  stotal += r.structured;
}
console.log(`${'total'.padEnd(20)}${String(total).padStart(10)}  ${String(stotal).padStart(10)}`);
console.log(`target: <= ${TARGET} characters of text: ${total <= TARGET ? 'met' : 'NOT met'}`);
process.exit(failed || total > TARGET ? 1 : 0);
