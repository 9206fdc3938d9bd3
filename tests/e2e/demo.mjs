// SPDX-License-Identifier: ISC
// demo.mjs: what an agent does with runtimed, shown step by step.  The
// official MCP SDK client spawns runtimed-mcp ($RUNTIMED_MCP), creates a
// notebook, adds a cell, runs it on a real Python kernel, prints the
// output, saves the notebook and stops the private daemon it used.

import fs from 'node:fs';
import path from 'node:path';

import {
  call, connect, killWorld, mcpBinary, outputText, privateWorld, runAndWait,
  stopDaemon, validateNotebook,
} from './lib.mjs';

const say = (s) => console.log(`demo: ${s}`);

const world = privateWorld('demo');
const file = path.join(world.dir, 'demo.ipynb');
let client;
let status = 0;
try {
  say(`starting ${mcpBinary()} (socket ${world.env.RUNTIMED_SOCKET})`);
  ({ client } = await connect(world, 'runtimed-demo'));
  const info = client.getServerVersion();
  say(`connected to ${info?.name} ${info?.version}`);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  say(`${tools.length} tools: ${tools.join(', ')}`);

  const created = await call(client, 'create_notebook', { path: file });
  const target = { notebook_handle: created.structuredContent.notebook_handle };
  say(`created ${file}`);

  const edited = await call(client, 'edit_cells', {
    ...target, edits: [{ op: 'insert', after: 'BOTTOM', cell_type: 'code', source: 'x = 6*7; print(x)' }],
  });
  const cell = edited.structuredContent.cells[0].cell_id;
  say(`inserted cell ${cell}: x = 6*7; print(x)`);

  const run = await runAndWait(client, target, [cell], 30);
  const out = outputText(run.cells[0]).trim();
  say(`ran it on the kernel: status ${run.status}, output: ${out}`);
  if (out !== '42') throw new Error(`expected 42, got ${JSON.stringify(out)}`);

  const saved = await call(client, 'save_notebook', target);
  validateNotebook(file);
  say(`saved ${saved.structuredContent.path} (${fs.statSync(file).size} bytes, valid nbformat)`);
  if (process.env.RUNTIMED_DEMO_OUT) {
    fs.copyFileSync(file, process.env.RUNTIMED_DEMO_OUT);
    say(`a copy is at ${process.env.RUNTIMED_DEMO_OUT}`);
  }
} catch (e) {
  console.error(`demo: FAILED: ${e.message}`);
  status = 1;
} finally {
  if (client) await client.close().catch(() => {});
  const stop = stopDaemon(world);
  say(stop.status === 0 ? 'stopped the daemon' : `runtimed stop: ${stop.stderr || stop.error}`);
  killWorld(world);
  fs.rmSync(world.dir, { recursive: true, force: true });
}
process.exit(status);
