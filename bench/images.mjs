// SPDX-License-Identifier: ISC
// bench/images.mjs: what an agent reads of a notebook with plots, through
// runtimed-mcp-worker with the official SDK client (decision 017).
//   a 6-cell report with two plots: inline markdown and html exports
//   (images left out) against the same export written to a file;
//   inspect_notebook of a 4000x3000 plot: time to downscale, sizes sent.
// Usage: node bench/images.mjs [builddir]   (not part of make check)

import { Client } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const B = path.resolve(process.argv[2] || '.');
const T = fs.mkdtempSync(path.join(os.tmpdir(), 'rtd-bench-images-'));
const DAEMON = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
  path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME || T,
  RUNTIMED_SOCKET: path.join(T, 'run', 'runtimed.sock'),
  RUNTIMED_STATE_DIR: path.join(T, 'state'),
  RUNTIMED_LIBEXEC_DIR: `${B}:${path.dirname(DAEMON)}`,
};
fs.mkdirSync(path.join(T, 'run'), { mode: 0o700 });

const CRC = Array.from({ length: 256 }, (_, n) => {
  for (let k = 0; k < 8; k++) n = n & 1 ? 0xedb88320 ^ (n >>> 1) : n >>> 1;
  return n >>> 0;
});
function crc32(b) {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const t = Buffer.concat([Buffer.from(type), data]);
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(t));
  return Buffer.concat([len, t, crc]);
}
// A plot-like RGB PNG: white, a grid, two curves.
function plot(w, h) {
  const rows = [];
  for (let y = 0; y < h; y++) {
    const r = Buffer.alloc(1 + w * 3, 255); r[0] = 0;
    for (let x = 0; x < w; x++) {
      const c = (yy, rgb) => { if (Math.abs(y - yy) < h / 200 + 1) rgb.forEach((v, k) => { r[1 + x * 3 + k] = v; }); };
      if (x % (w / 10 | 0) === 0 || y % (h / 8 | 0) === 0) [0, 1, 2].forEach((k) => { r[1 + x * 3 + k] = 220; });
      c(h / 2 + Math.sin(x / w * 12) * h / 3, [31, 119, 180]);
      c(h * 0.8 - x / w * h * 0.6, [255, 127, 14]);
    }
    rows.push(r);
  }
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

const small = plot(640, 480).toString('base64');
const big = plot(4000, 3000).toString('base64');
const code = (source, n, outputs = []) => ({ cell_type: 'code', id: `c${n}`, metadata: {},
  execution_count: n, source, outputs });
const md = (source, n) => ({ cell_type: 'markdown', id: `m${n}`, metadata: {}, source });
const image = (b64) => ({ output_type: 'display_data', metadata: {},
  data: { 'image/png': b64, 'text/plain': '<Figure size 640x480 with 1 Axes>' } });
const NB = path.join(T, 'report.ipynb');
fs.writeFileSync(NB, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [
  md('# Sales\nA look at the numbers.', 1),
  code("import pandas as pd\ndf = pd.read_csv('sales.csv')", 1),
  code('df.describe()', 2, [{ output_type: 'execute_result', execution_count: 2,
    metadata: {}, data: { 'text/plain': 'count 100\nmean 4.2' } }]),
  code('df.plot()', 3, [image(small)]),
  md('Sales grow in the summer.', 2),
  code('df.plot(figsize=(40, 30))', 4, [image(big)]),
] }, null, 1));

const client = new Client({ name: 'bench-images', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
await client.connect(new StdioClientTransport({ command: path.join(B, 'runtimed-mcp-worker'),
  args: [], env }), { timeout: 30000 });
const call = async (name, args) => {
  const t0 = process.hrtime.bigint();
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
  return { r, ms, text, images: r.content.filter((c) => c.type === 'image') };
};
const h = (await call('connect_notebook', { path: NB })).r.structuredContent.notebook_handle;
for (const format of ['markdown', 'html']) {
  const out = path.join(T, `report.${format}`);
  const inl = await call('export_notebook', { notebook_handle: h, format });
  const file = await call('export_notebook', { notebook_handle: h, format, path: out });
  console.log(`export ${format}: inline ${inl.text.length} chars (${inl.r.structuredContent.images_omitted} images left out); ` +
    `to a path ${file.text.length} chars; the file (images embedded, what an inline export held before) ${fs.statSync(out).size} bytes`);
}
for (const [cell, name] of [[3, '640x480'], [5, '4000x3000']]) {
  const times = [];
  let last;
  for (let i = 0; i < 5; i++) {
    last = await call('inspect_notebook', { notebook_handle: h, view: 'outputs', cell_ids: [cell] });
    times.push(last.ms);
  }
  times.sort((a, b) => a - b);
  console.log(`inspect_notebook of the ${name} plot: median ${times[2].toFixed(1)} ms, text ${last.text.length} chars, ` +
    `${last.images.length} image of ${last.images[0].data.length} base64 chars; ${last.text.split('\n').pop()}`);
}
await client.close();
spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
fs.rmSync(T, { recursive: true, force: true });
