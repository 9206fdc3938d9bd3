// SPDX-License-Identifier: ISC
// ab.mjs: `1+1` through the whole chain for two build trees, A (the
// reference, e.g. main's) and B, against raw pyzmq, in alternating
// rounds (docs/decisions/020-benchmark-method.md): per round a batch of
// raw pyzmq on a kernel of its own, then for A and B (their order
// swapped every round) a batch through the official MCP SDK client, one
// through a JSON-lines client (each its own runtimed-mcp; both attached
// to one notebook of that build's daemon), and one of raw pyzmq on that
// build's own kernel.  Prints the median per-round ratio with its
// interquartile range for each side and B/A.  Needs "npm ci" in
// tests/e2e, python3-zmq and jupyter-client.
//
// usage: node bench/ab.mjs BUILD_A BUILD_B [ROUNDS [N]]

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import {
  callRaw, connect, killWorld, privateWorld, removeWorld,
} from '../tests/e2e/lib.mjs';
import { median, quantile } from './stats.mjs';
import { lineClient, refServer } from './clients.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [A, B] = process.argv.slice(2, 4).map((b) => b && path.resolve(b));
const ROUNDS = Number(process.argv[4] ?? 15);
const N = Number(process.argv[5] ?? 30);
if (!A || !B) {
  console.error('usage: node bench/ab.mjs BUILD_A BUILD_B [ROUNDS [N]]');
  process.exit(2);
}

// A world of build b: its proxy, daemon, agents and kernel.
function world(tag, b) {
  const w = privateWorld(`ab-${tag}`);
  w.env.RUNTIMED_LIBEXEC_DIR = `${b}:${b}/runtimed`;
  w.b = b;
  return w;
}

// The SDK client of tests/e2e/lib.mjs, through build b's runtimed-mcp.
async function sdkClient(w) {
  process.env.RUNTIMED_MCP = `${w.b}/runtimed-mcp`;
  const { client } = await connect(w, 'bench-ab');
  return {
    async tool(name, args) {
      const r = await callRaw(client, name, args);
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`);
      return r.structuredContent;
    },
    close: () => client.close(),
  };
}

async function side(tag, b) {
  const w = world(tag, b);
  const sdk = await sdkClient(w);
  const nb = await sdk.tool('create_notebook', { path: path.join(w.dir, 'ab.ipynb') });
  const ed = await sdk.tool('edit_cells', { notebook_handle: nb.notebook_handle,
    edits: [{ op: 'insert', after: 'BOTTOM', source: '1+1' }] });
  const cell = ed.cells[0].cell_id;
  const lines = await lineClient(`${w.b}/runtimed-mcp`, w.env, 'bench-ab-lines');
  const lh = (await lines.tool('connect_notebook', { notebook_id: nb.notebook_id })).notebook_handle;
  const timed = (c, h) => async () => {
    const t0 = performance.now();
    const r = await c.tool('run_cells', { notebook_handle: h, cell_ids: [cell], wait_secs: 50 });
    if (r.status !== 'done') throw new Error(`run of 1+1 ended ${r.status}`);
    return performance.now() - t0;
  };
  const s = { w, sdk, lines, runSdk: timed(sdk, nb.notebook_handle), runLines: timed(lines, lh) };
  await s.runSdk();
  // Its kernel's connection file, for the raw client on the same kernel.
  const { pid } = await sdk.tool('get_kernel_info', { notebook_handle: nb.notebook_handle });
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  s.own = { connect: argv[argv.indexOf('-f') + 1], pid };
  return s;
}

const times = async (f, n) => {
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(await f());
  return xs;
};

const ref = refServer();
await ref.ready;
const sides = {};
try {
  sides.A = await side('A', A);
  sides.B = await side('B', B);
  for (const t of ['A', 'B']) {
    await times(sides[t].runSdk, 2 * N);
    await times(sides[t].runLines, 2 * N);
    await ref.run('raw', '1+1', 2 * N, sides[t].own);
  }
  await ref.run('raw', '1+1', 2 * N);
  const res = { raw: [], A_sdk: [], B_sdk: [], A_lines: [], B_lines: [], A_own: [], B_own: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? ['B', 'A'] : ['A', 'B'];
    res.raw.push(await ref.run('raw', '1+1', N));
    for (const t of order) {
      res[`${t}_sdk`].push(await times(sides[t].runSdk, N));
      res[`${t}_lines`].push(await times(sides[t].runLines, N));
      res[`${t}_own`].push(await ref.run('raw', '1+1', N, sides[t].own));
    }
    console.error(`ab: round ${r + 1}/${ROUNDS}`);
  }
  const f = (x) => x.toFixed(2);
  const ratio = (num, den) => {
    const q = res[num].map((x, i) => median(x) / median(res[den][i]));
    return `${f(median(q))}x (${f(quantile(q, 0.25))}-${f(quantile(q, 0.75))})`;
  };
  const p50 = (k) => `${f(median(res[k].flat()))} ms`;
  console.log(`1+1, ${ROUNDS} rounds of ${N}; A ${A}, B ${B}`);
  console.log(`p50: raw ${p50('raw')}, SDK A ${p50('A_sdk')} B ${p50('B_sdk')}, ` +
    `lines A ${p50('A_lines')} B ${p50('B_lines')}, raw on own kernel A ${p50('A_own')} B ${p50('B_own')}`);
  console.log(`SDK vs raw: A ${ratio('A_sdk', 'raw')}, B ${ratio('B_sdk', 'raw')}`);
  console.log(`lines vs raw: A ${ratio('A_lines', 'raw')}, B ${ratio('B_lines', 'raw')}`);
  console.log(`same kernel, SDK: A ${ratio('A_sdk', 'A_own')}, B ${ratio('B_sdk', 'B_own')}; ` +
    `lines: A ${ratio('A_lines', 'A_own')}, B ${ratio('B_lines', 'B_own')}`);
  console.log(`B/A: SDK ${ratio('B_sdk', 'A_sdk')}, lines ${ratio('B_lines', 'A_lines')}`);
} finally {
  for (const s of Object.values(sides)) {
    await s.sdk.close();
    s.lines.close();
    spawnSync(`${s.w.b}/runtimed/runtimed`, ['stop'], { env: s.w.env, timeout: 30000 });
    killWorld(s.w);
    removeWorld(s.w);
  }
  ref.close();
}
