// SPDX-License-Identifier: ISC
// kernels.test.mjs: one cell on each kernel family the tests know
// (python3 = ipykernel, ir = IRkernel, xpython = xeus-python) through
// runtimed-mcp with the official MCP SDK client, as an agent would: the
// kernelspec is listed, a notebook is created on it, cells print,
// evaluate, display and fail, a long cell is interrupted, the kernel is
// restarted, get_kernel_info names the language, the saved notebook
// carries the kernelspec.  A kernel that is not installed is
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

const PY_DISPLAY = 'from IPython.display import display\ndisplay({"text/plain": "shown"}, raw=True)';
const FAMILIES = [
  { name: 'python3', language: 'python', print: 'print(6*7)', value: '6*7', shown: '42',
    display: PY_DISPLAY, error: '1/0', ename: 'ZeroDivisionError',
    sleep: 'import time; time.sleep(60)', set: 'x = 1', get: "'x' in globals()",
    yes: 'True', no: 'False' },
  { name: 'ir', language: 'R', print: 'cat(6*7, "\\n")', value: '6*7', shown: '[1] 42',
    display: 'IRdisplay::publish_mimebundle(list("text/plain" = "shown"))',
    error: 'stop("boom")', ename: 'ERROR', sleep: 'Sys.sleep(60)', set: 'x <- 1',
    get: 'exists("x")', yes: '[1] TRUE', no: '[1] FALSE' },
  // xeus-python 0.14 ends on an interrupt (as under jupyter_client).
  { name: 'xpython', language: 'python', print: 'print(6*7)', value: '6*7', shown: '42',
    display: PY_DISPLAY, error: '1/0', ename: 'ZeroDivisionError',
    sleep: 'import time; time.sleep(60)', set: 'x = 1', get: "'x' in globals()",
    yes: 'True', no: 'False', interruptEnds: true },
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

      // display_data and error outputs.
      const c3 = await insert(client, target, f.display);
      const c4 = await insert(client, target, f.error);
      const run2 = await runAndWait(client, target, [c3, c4]);
      assert.equal(run2.status, 'error', JSON.stringify(run2));
      assert.equal(run2.cells[0].outputs[0].output_type, 'display_data');
      assert.equal(outputText(run2.cells[0]), 'shown');
      assert.equal(run2.cells[1].status, 'error');
      assert.equal(run2.cells[1].outputs[0].output_type, 'error');
      assert.ok(run2.cells[1].outputs[0].ename.includes(f.ename),
        JSON.stringify(run2.cells[1].outputs));

      // Interrupt a long cell: it ends (the kernel too, for xpython).
      const c5 = await insert(client, target, f.sleep);
      const started = await call(client, 'run_cells', { ...target, cell_ids: [c5], wait_secs: 2 });
      assert.equal(started.structuredContent.status, 'running', JSON.stringify(started.structuredContent));
      const t0 = Date.now();
      await call(client, 'interrupt_kernel', target);
      const ended = await call(client, 'get_results',
        { ...target, execution_id: started.structuredContent.execution_id, timeout_secs: 20 });
      const want = f.interruptEnds ? ['interrupted', 'kernel_died'] : ['interrupted'];
      assert.ok(want.includes(ended.structuredContent.status), JSON.stringify(ended.structuredContent));
      assert.ok(Date.now() - t0 < 15000, `interrupt took ${Date.now() - t0} ms`);

      // Restart: a fresh kernel, without the old state.
      const c6 = await insert(client, target, f.set);
      const c7 = await insert(client, target, f.get);
      if (!f.interruptEnds) {
        const before = await runAndWait(client, target, [c6, c7]);
        assert.equal(outputText(before.cells[1]).trim(), f.yes, JSON.stringify(before));
      }
      await call(client, 'restart_kernel', target);
      const after = await runAndWait(client, target, [c7]);
      assert.equal(after.status, 'done', JSON.stringify(after));
      assert.equal(outputText(after.cells[0]).trim(), f.no);
      assert.equal(after.cells[0].execution_count, 1);

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
