// SPDX-License-Identifier: ISC
// bench/worker.mjs: MCP round trips through runtimed-mcp (proxy -> worker
// -> daemon) with the official SDK client (tests/e2e/node_modules).
//   inspect_notebook outline of a 500-cell notebook: target <= 2 ms median
//   warm connect_notebook (room already open):     target <= 5 ms median
// Usage: node bench/worker.mjs [builddir]   (not part of make check)

import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const B = path.resolve(process.argv[2] || '.');
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'rtd-bench-worker-'));
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

// A 500-cell notebook: code cells with a line of output each, some markdown.
const NB = path.join(T, 'big.ipynb');
const cells = [];
for (let i = 0; i < 500; i++) {
  if (i % 5 === 0)
    cells.push({ cell_type: 'markdown', id: `m${i}`, metadata: {}, source: [`## Section ${i}\n`, 'Some text.'] });
  else
    cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: i,
      source: [`x${i} = ${i} * 2\n`, `print(x${i})`],
      outputs: [{ output_type: 'stream', name: 'stdout', text: [`${i * 2}\n`] }] });
}
fs.writeFileSync(NB, JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1));

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };

const transport = new StdioClientTransport({ command: path.join(B, 'runtimed-mcp'), args: [], env, stderr: 'ignore' });
const client = new Client({ name: 'bench', version: '0' });
await client.connect(transport);
const call = (name, args) => client.callTool({ name, arguments: args });

const first = await call('connect_notebook', { path: NB });
const H = first.structuredContent.notebook_handle;

async function measure(label, n, fn, target) {
  for (let i = 0; i < 20; i++) await fn();	// warm up
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(`${label}: median ${median(t).toFixed(3)} ms, p90 ${pct(t, 0.9).toFixed(3)} ms` +
    ` (n=${n}${target ? `, target <= ${target} ms` : ''})`);
  return median(t);
}

const r = await call('inspect_notebook', { notebook_handle: H });
if (r.isError || r.structuredContent.total_cells !== 500) throw new Error('bad notebook');
await measure('inspect_notebook outline (25 of 500 cells)', 300,
  () => call('inspect_notebook', { notebook_handle: H }), 2);
await measure('inspect_notebook outline (100 of 500 cells)', 300,
  () => call('inspect_notebook', { notebook_handle: H, count: 100 }));
await measure('warm connect_notebook + disconnect_notebook', 100, async () => {
  const c = await call('connect_notebook', { path: NB });
  await call('disconnect_notebook', { notebook_handle: c.structuredContent.notebook_handle });
});
const hs = [];
// (20 warm-up + 80 measured handles stay within the 128 limit)
await measure('warm connect_notebook', 80, async () => {
  const c = await call('connect_notebook', { path: NB });
  hs.push(c.structuredContent.notebook_handle);
}, 5);
for (const h of hs) await call('disconnect_notebook', { notebook_handle: h });

await client.close();
spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
fs.rmSync(T, { recursive: true, force: true });
