// SPDX-License-Identifier: ISC
// bench/tasks.mjs: what a task-augmented run_cells costs through
// runtimed-mcp, driven by the official MCP SDK client: the time to its
// CreateTaskResult, to one tasks/get, and to tasks/result of a run of
// "x = 1", over 20 rounds on a warm python3 kernel (median and p90).
//
// usage: RUNTIMED_MCP=build/runtimed-mcp RUNTIMED_BIN=build/runtimed/runtimed \
//   node bench/tasks.mjs [rounds]
import path from 'node:path';
import {
  call, connect, killWorld, privateWorld, removeWorld, stopDaemon,
} from '../tests/e2e/lib.mjs';
import {
  CallToolResultSchema, CreateTaskResultSchema,
} from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';

const rounds = Number(process.argv[2] ?? 20);
const world = privateWorld('bench-tasks');
const { client } = await connect(world, 'bench-tasks');
const h = { notebook_handle: (await call(client, 'create_notebook',
  { path: path.join(world.dir, 'b.ipynb') })).structuredContent.notebook_handle };
const e = await call(client, 'edit_cells', { ...h, edits: [
  { op: 'insert', after: 'BOTTOM', source: 'x = 1' }] });
const cell = e.structuredContent.cells[0].cell_id;
await call(client, 'run_cells', { ...h, cell_ids: [cell], wait_secs: 40 });

const figures = (a) => {
  a.sort((x, y) => x - y);
  return `median ${a[a.length >> 1].toFixed(1)} ms, ` +
    `p90 ${a[Math.floor(a.length * 0.9)].toFixed(1)} ms`;
};
const created = [], got = [], result = [];
for (let i = 0; i < rounds; i++) {
  let t = performance.now();
  const { task } = await client.request({ method: 'tools/call', params: {
    name: 'run_cells', arguments: { ...h, cell_ids: [cell] }, task: {} } },
  CreateTaskResultSchema);
  created.push(performance.now() - t);
  t = performance.now();
  await client.experimental.tasks.getTask(task.taskId);
  got.push(performance.now() - t);
  t = performance.now();
  await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  result.push(performance.now() - t);
}
console.log(`CreateTaskResult: ${figures(created)}`);
console.log(`tasks/get: ${figures(got)}`);
console.log(`tasks/result of x = 1: ${figures(result)}`);
await client.close();
stopDaemon(world);
killWorld(world);
removeWorld(world);
