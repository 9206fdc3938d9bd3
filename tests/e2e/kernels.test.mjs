// kernels.test.mjs: one cell on each kernel family the tests know
// (python3 = ipykernel, ir = IRkernel, xpython = xeus-python) through
// runtimed-mcp with the official MCP SDK client, as an agent would: the
// kernelspec is listed, a notebook is created on it, a cell prints and
// another evaluates, get_kernel_info names the language, the saved
// notebook carries the kernelspec.  A kernel that is not installed is
// reported as skipped (scripts/install-deps.sh installs all three).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  call, connect, killWorld, outputText, privateWorld, processesOf,
  removeWorld, runAndWait, sanitizerReports, stopDaemon, validateNotebook,
  waitFor,
} from './lib.mjs';

const TEST_TIMEOUT = 240000;

const FAMILIES = [
  { name: 'python3', language: 'python', print: 'print(6*7)', value: '6*7', shown: '42' },
  { name: 'ir', language: 'R', print: 'cat(6*7, "\\n")', value: '6*7', shown: '[1] 42' },
  { name: 'xpython', language: 'python', print: 'print(6*7)', value: '6*7', shown: '42' },
];

async function insert(client, target, source) {
  const r = await call(client, 'edit_cells', {
    ...target, edits: [{ op: 'insert', after: 'BOTTOM', cell_type: 'code', source }],
  });
  return r.structuredContent.cells[0].cell_id;
}

async function teardown(world) {
  const stop = stopDaemon(world);
  assert.equal(stop.status, 0, `runtimed stop: ${stop.stderr}${stop.stdout}`);
  const left = await waitFor(() => processesOf(world).length === 0 ? true : null, 15000);
  assert.ok(left, `processes left behind: ${JSON.stringify(processesOf(world))}`);
  const reports = sanitizerReports(world);
  assert.equal(reports.length, 0, `sanitizer reports:\n${reports.join('\n')}`);
  removeWorld(world);
}

for (const f of FAMILIES) {
  test(`a cell runs on the ${f.name} kernel through runtimed-mcp`, { timeout: TEST_TIMEOUT }, async (t) => {
    const world = privateWorld(`e2e-${f.name}`);
    const file = path.join(world.dir, `${f.name}.ipynb`);
    let mcp;
    try {
      mcp = await connect(world);
      const { client } = mcp;
      const listed = await call(client, 'list_kernels', {});
      const names = listed.structuredContent.kernels.map((k) => k.name);
      if (!names.includes(f.name)) {
        await mcp.client.close();
        mcp = null;
        await teardown(world);
        t.skip(`kernelspec ${f.name} is not installed (have: ${names.join(', ')})`);
        return;
      }

      const created = await call(client, 'create_notebook', { path: file, kernel: f.name });
      const target = { notebook_handle: created.structuredContent.notebook_handle };
      assert.equal(created.structuredContent.kernel.name, f.name);

      const c1 = await insert(client, target, f.print);
      const c2 = await insert(client, target, f.value);
      const run = await runAndWait(client, target, [c1, c2]);
      assert.equal(run.status, 'done', JSON.stringify(run));
      assert.deepEqual(run.cells.map((c) => c.status), ['ok', 'ok'], JSON.stringify(run));
      assert.equal(outputText(run.cells[0]).trim(), '42');
      assert.equal(outputText(run.cells[1]).trim(), f.shown);
      assert.equal(run.cells[0].execution_count, 1);

      const info = await call(client, 'get_kernel_info', target);
      assert.equal(info.structuredContent.name, f.name);
      assert.equal(info.structuredContent.language_info?.name, f.language,
        JSON.stringify(info.structuredContent));

      await call(client, 'save_notebook', target);
      validateNotebook(file);
      const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.equal(nb.metadata.kernelspec?.name, f.name, JSON.stringify(nb.metadata));

      await mcp.client.close();
      mcp = null;
      await teardown(world);
    } finally {
      if (mcp) await mcp.client.close().catch(() => {});
      killWorld(world);
    }
  });
}
