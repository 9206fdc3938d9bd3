// SPDX-License-Identifier: ISC
// bench/outputs-chars.mjs: the characters a model reads of rich outputs
// (decision 076): each cell of tests/worker/rich-cells.mjs (a Plotly
// figure of 10,000 points, a 1,000-row DataFrame shown twice, a
// Vega-Lite chart, a widget) is run, then read with get_results by a
// fresh plain session (no structuredContent: the text is what a model
// reads), through runtimed-mcp-worker with the official SDK client.
// Usage: node bench/outputs-chars.mjs [builddir [worker]]
// (worker: another runtimed-mcp-worker, an older one to compare; not
// part of make check).
import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld } from '../tests/worker/worker-world.mjs';
import { FIG, VL, WIDGET, FRAME } from '../tests/worker/rich-cells.mjs';

const B = path.resolve(process.argv[2] || '.');
const WORKER = path.resolve(process.argv[3] || path.join(B, 'runtimed-mcp-worker'));
const DAEMON = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
  path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
process.env.RUNTIMED_LIBEXEC_DIR = `${path.dirname(DAEMON)}:${B}`;
const { T, env } = workerWorld('bench-outputs');
fs.mkdirSync(path.join(T, 'work'));
const NB = path.join(T, 'work', 'outputs.ipynb');

async function worker(name) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const c = new Client({ name, version: '0' }, { capabilities: {} });
  await c.connect(transport, { timeout: 30000 });
  return c;
}

async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined,
    { timeout: 90000 });
  const text = r.content.filter((x) => x.type === 'text').map((x) => x.text).join('\n');
  if (r.isError) throw new Error(`${name}: ${text}`);
  return text;
}

const handle = (text) => text.match(/notebook_handle: (\S+)/)[1];
let status = 0;
const A = await worker('bench-outputs');
try {
  const H = handle(await call(A, 'create_notebook', { path: NB }));
  console.log('| cell | characters |\n|---|---:|');
  for (const [name, src] of [['Plotly figure, 10,000 points', FIG],
    ['DataFrame, 1,000 rows: display(df), display(HTML(df.to_html()))', FRAME],
    ['Vega-Lite chart, 200 rows', VL], ['ipywidgets view', WIDGET]]) {
    const e = await call(A, 'edit_cells', { notebook_handle: H, edits: [
      { op: 'insert', after: 'BOTTOM', source: src }], run: true });
    const id = e.match(/execution_id:? ([0-9a-f-]+)/)[1];
    await call(A, 'get_results', { notebook_handle: H, execution_id: id,
      timeout_secs: 50 });
    const R = await worker('bench-outputs-reader');
    const g = await call(R, 'get_results', { notebook_handle: handle(
      await call(R, 'connect_notebook', { path: NB })), execution_id: id });
    await R.close();
    console.log(`| ${name} | ${[...g].length.toLocaleString('en-US')} |`);
  }
} catch (err) {
  console.error(err.message);
  status = 1;
} finally {
  await A.close();
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
}
process.exit(status);
