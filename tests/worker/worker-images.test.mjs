// SPDX-License-Identifier: ISC
// worker-images.test.mjs: images the model can see (issue 13, decision
// 017).  The real runtimed-mcp-worker on stdio, driven by the official MCP
// TypeScript SDK client, against the real daemon and a python3 kernel.
// PNGs are made in the cell with zlib and struct (no matplotlib, no PIL);
// the JPEG is a small one embedded below.  PNG and JPEG outputs read
// through get_results and inspect_notebook come as MCP image content; a
// 4000x3000 PNG comes back downscaled with both sizes said while the
// notebook keeps the original; inline exports carry a placeholder, not
// base64; an export to a path returns the path and size only.
//
// Environment: WORKER, RUNTIMED_BIN, RUNTIMED_LIBEXEC_DIR (worker-node.sh).

import { Client } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workerWorld, MKPNG } from './worker-world.mjs';

const WORKER = process.env.WORKER;
const DAEMON = process.env.RUNTIMED_BIN;
const { T, env, SAN } = workerWorld('wimg');
fs.mkdirSync(path.join(T, 'work'));
const NB = path.join(T, 'work', 'images.ipynb');

// 24x16, made with libjpeg-turbo at quality 50.
const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAQABgDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDmorHye27P4VdisfJ7bs1sxWPk9t2auxWPk9t2fwpVMXyf3eX58t//AErm/A5sJjvMxorHye27P4UV0sVj5PbdmiuOWP8AZPk9pyW6Wvb5/ifR0sbeJ//Z';

async function worker(name) {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const client = new Client({ name, version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function ok(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined,
    { timeout: 90000 });
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.equal(r.isError, false, `${name}: ${text}`);
  return { sc: r.structuredContent, text, r,
    images: r.content.filter((c) => c.type === 'image') };
}

// Width and height of a PNG or JPEG given as base64.
function dims(b64) {
  const b = Buffer.from(b64, 'base64');
  if (b.subarray(1, 4).toString() === 'PNG')
    return [b.readUInt32BE(16), b.readUInt32BE(20)];
  for (let i = 2; i + 9 < b.length;) {
    const m = b[i + 1];
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc)
      return [b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)];
    i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}

let A, H, small, big, many;

// Insert a cell, run it, wait for it: [cell_id, execution_id].
async function runCell(source) {
  const e = await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', source }], run: true });
  const g = await ok(A, 'get_results', { notebook_handle: H,
    execution_id: e.sc.run.execution_id, timeout_secs: 50 });
  assert.equal(g.sc.status, 'done', g.text);
  return [e.sc.cells[0].cell_id, e.sc.run.execution_id];
}

before(async () => {
  A = await worker('images');
  H = (await ok(A, 'create_notebook', { path: NB })).sc.notebook_handle;
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown', source: '# Plots' }] });
  small = await runCell(MKPNG + '\ndisplay(Image(data=png(40, 30), format="png"))\n' +
    `display(Image(data=base64.b64decode("${JPEG}"), format="jpeg"))`);
  big = await runCell(MKPNG + '\ndisplay(Image(data=png(4000, 3000), format="png"))');
  many = await runCell(MKPNG + '\nfor i in range(6): display(Image(data=png(20 + i, 10), format="png"))');
});

after(async () => {
  if (A) await A.close().catch(() => {});
  spawnSync(DAEMON, ['stop'], { env, timeout: 20000 });
  fs.rmSync(T, { recursive: true, force: true });
  await new Promise((r) => setTimeout(r, 500));
  const dir = path.dirname(SAN);
  const reports = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(SAN)));
  for (const f of reports) {
    console.log(`# sanitizer report ${f}:\n${fs.readFileSync(path.join(dir, f), 'utf8').slice(0, 3000)}`);
    fs.rmSync(path.join(dir, f));
  }
  assert.equal(reports.length, 0, 'sanitizer reports');
});

// What every reader of the small cell must give: both images, as sent.
function smallImages(r, cell, sourceShown = false) {
  assert.equal(r.images.length, 2, r.text);
  assert.equal(r.images[0].mimeType, 'image/png');
  assert.deepEqual(dims(r.images[0].data), [40, 30]);
  assert.equal(r.images[1].mimeType, 'image/jpeg');
  assert.equal(r.images[1].data, JPEG, 'a small image is sent as it is');
  assert.match(r.text, new RegExp(`\\[image/png 40x30, cell ${cell}`));
  assert.match(r.text, new RegExp(`\\[image/jpeg 24x16, cell ${cell}`));
  if (!sourceShown)
    assert.doesNotMatch(r.text, /iVBORw0KGgo|\/9j\/4AAQ/, 'no base64 in the text');
  assert.doesNotMatch(r.text, /IPython.core.display.Image object/,
    'an image\'s repr is not shown');
}

// The worker maps libcrypto only once it first encodes (decision 042):
// an outline needs none of it; an image sent to the model does.
test('a worker loads libcrypto when it first needs it', async () => {
  const transport = new StdioClientTransport({ command: WORKER, args: [], env,
    stderr: 'pipe' });
  const B = new Client({ name: 'images-lazy', version: '0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await B.connect(transport, { timeout: 30000 });
  try {
    const mapped = () => /libcrypto\.so/.test(fs.readFileSync(`/proc/${transport.pid}/maps`, 'utf8'));
    const h = (await ok(B, 'connect_notebook', { path: NB })).sc.notebook_handle;
    await ok(B, 'inspect_notebook', { notebook_handle: h });
    assert.equal(mapped(), false, 'libcrypto mapped before any hash or base64');
    const g = await ok(B, 'get_results', { notebook_handle: h, execution_id: big[1] });
    assert.equal(g.images.length, 1, g.text);
    assert.equal(mapped(), true, 'libcrypto not mapped after encoding an image');
  } finally {
    await B.close().catch(() => {});
  }
});

test('get_results: PNG and JPEG outputs as image content', async () => {
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: small[1] });
  smallImages(g, small[0]);
});

test('inspect_notebook outputs: PNG and JPEG outputs as image content', async () => {
  for (const view of ['outputs', 'all']) {
    const r = await ok(A, 'inspect_notebook', { notebook_handle: H, view,
      cell_ids: [small[0]] });
    smallImages(r, small[0], view === 'all');
  }
  const full = await ok(A, 'inspect_notebook', { notebook_handle: H,
    view: 'outputs', output_mode: 'full', cell_ids: [small[0]] });
  assert.equal(full.images.length, 2);
  // The outline and the summary stay text.
  const o = await ok(A, 'inspect_notebook', { notebook_handle: H, view: 'outline' });
  assert.equal(o.images.length, 0);
});

test('a 4000x3000 PNG is downscaled for the model, the notebook keeps it', async () => {
  for (const r of [
    await ok(A, 'get_results', { notebook_handle: H, execution_id: big[1] }),
    await ok(A, 'inspect_notebook', { notebook_handle: H, view: 'outputs', cell_ids: [big[0]] })]) {
    assert.equal(r.images.length, 1, r.text);
    assert.equal(r.images[0].mimeType, 'image/png');
    assert.deepEqual(dims(r.images[0].data), [1568, 1176]);
    assert.match(r.text, new RegExp(`\\[image/png 4000x3000 \u2192 1568x1176, cell ${big[0]}`));
  }
  const full = await ok(A, 'get_results', { notebook_handle: H, execution_id: big[1],
    full_output: true });
  const data = full.sc.cells[0].outputs[0].data['image/png'];
  assert.deepEqual(dims(Array.isArray(data) ? data.join('') : data), [4000, 3000],
    'the notebook keeps the original');
});

test('an image held as a blob is fetched and sent; a PNG too big as PNG goes as JPEG', async () => {
  // Noise does not compress: 1.6 MB of base64, kept in the blob store.
  const [cell, exec] = await runCell(MKPNG + '\nimport os\n' +
    'raw = b"".join(b"\\x00" + os.urandom(3000) for y in range(400))\n' +
    'p = png(1, 1).replace(struct.pack(">II", 1, 1), struct.pack(">II", 1000, 400))\n' +
    'p = p[:29] + struct.pack(">I", zlib.crc32(p[12:29]) & 0xffffffff)\n' +
    'idat = zlib.compress(raw, 1)\n' +
    'p += struct.pack(">I", len(idat)) + b"IDAT" + idat + struct.pack(">I", zlib.crc32(b"IDAT" + idat) & 0xffffffff)\n' +
    'p += struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND") & 0xffffffff)\n' +
    'display(Image(data=p, format="png"))');
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: exec });
  assert.equal(g.images.length, 1, g.text);
  assert.equal(g.images[0].mimeType, 'image/jpeg');
  assert.deepEqual(dims(g.images[0].data), [1000, 400]);
  assert.ok(g.images[0].data.length <= 1024 * 1024);
  assert.match(g.text, new RegExp(`\\[image/png 1000x400 as image/jpeg, cell ${cell}\\]`));
  // inspect_notebook does not fetch blobs: it names it (so it is one).
  const i = await ok(A, 'inspect_notebook', { notebook_handle: H, view: 'outputs', cell_ids: [cell] });
  assert.equal(i.images.length, 0);
  assert.match(i.text, /\[image\/png: \d+ bytes omitted \(blob [0-9a-f]+\)/);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: cell }] });
});

test('a save writes outputs held as blobs as nbformat does, checked', async () => {
  // Two values of a megabyte or more go to the blob store: a PNG (one
  // string) and HTML of many lines (a text mimetype, saved as lines);
  // the store writer writes them into the file (decision 038).
  const file = path.join(T, 'work', 'blobs.ipynb');
  const h = (await ok(A, 'create_notebook', { path: file })).sc.notebook_handle;
  const e = await ok(A, 'edit_cells', { notebook_handle: h, edits: [
    { op: 'insert', after: 'BOTTOM', source: MKPNG + '\nimport os\n' +
      'display({"image/png": base64.b64encode(os.urandom(900000)).decode()}, raw=True)\n' +
      'display({"text/html": "".join("<p>line %d \u00e9\\t\\"q\\"</p>\\n" % i for i in range(60000)), ' +
      '"text/plain": "html"}, raw=True)\nprint("after")' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown', source: '# after the blobs' },
  ], run: true });
  const g = await ok(A, 'get_results', { notebook_handle: h, execution_id: e.sc.run.execution_id, timeout_secs: 50 });
  assert.equal(g.sc.status, 'done', g.text);
  await ok(A, 'save_notebook', { notebook_handle: h });
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.length > 3000000, `${text.length} bytes`);
  assert.doesNotMatch(text, /runtimed_blob/);
  // Byte for byte what nbformat writes for what it reads back.
  const nbf = spawnSync('/usr/bin/python3', ['-c', 'import nbformat, sys\n' +
    'raw = open(sys.argv[1], encoding="utf-8").read()\n' +
    'nb = nbformat.reads(raw, as_version=4)\n' +
    'out = nbformat.writes(nb) + "\\n"\n' +
    'html = nb.cells[0].outputs[1].data["text/html"].splitlines(True)\n' +
    'assert len(html) == 60000 and html[7] == "<p>line 7 \\u00e9\\t\\"q\\"</p>\\n", html[7]\n' +
    'assert \'"<p>line 7 \' in raw, "saved as lines"\n' +
    'assert nb.cells[1].source == "# after the blobs"\n' +
    'sys.exit(0 if out == raw else 1)', file], { encoding: 'utf8' });
  assert.equal(nbf.status, 0, `nbformat round trip: ${nbf.stderr}`);
  // The save knows the file it wrote: the next one is not refused.
  await ok(A, 'edit_cells', { notebook_handle: h, edits: [{ op: 'edit', cell_id: e.sc.cells[1].cell_id, source: '# again' }] });
  await ok(A, 'save_notebook', { notebook_handle: h });
  assert.match(fs.readFileSync(file, 'utf8'), /# again/);
  // A damaged blob fails the save and leaves the file as it was.
  const blobs = path.join(env.RUNTIMED_STATE_DIR, 'blobs');
  const files = fs.readdirSync(blobs).flatMap((d) => fs.readdirSync(path.join(blobs, d)).map((f) => path.join(blobs, d, f)));
  const html = files.find((f) => fs.readFileSync(f, 'utf8').startsWith('<p>line 0 '));
  assert.ok(html, 'the HTML is a blob');
  const good = fs.readFileSync(html);
  fs.writeFileSync(html, Buffer.concat([good.subarray(0, 100), Buffer.from('X'), good.subarray(101)]));
  await ok(A, 'edit_cells', { notebook_handle: h, edits: [{ op: 'edit', cell_id: e.sc.cells[1].cell_id, source: '# third' }] });
  const before = fs.readFileSync(file);
  const s = await A.callTool({ name: 'save_notebook', arguments: { notebook_handle: h } }, undefined, { timeout: 90000 });
  assert.equal(s.isError, true, 'a save with a damaged blob fails');
  assert.match(s.content[0].text, /output blob/);
  assert.ok(fs.readFileSync(file).equals(before), 'the file is unchanged');
  fs.writeFileSync(html, good);
  await ok(A, 'save_notebook', { notebook_handle: h });
  assert.match(fs.readFileSync(file, 'utf8'), /# third/);
  await ok(A, 'disconnect_notebook', { notebook_handle: h });
});

test('images per result are capped, the rest named in the text', async () => {
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: many[1] });
  assert.equal(g.images.length, 4);
  assert.deepEqual(g.images.map((i) => dims(i.data)[0]), [20, 21, 22, 23]);
  assert.match(g.text, /\[image\/png 24x10, cell [^\]]*not shown/);
  assert.match(g.text, /\[image\/png 25x10, cell [^\]]*not shown/);
});

test('images that do not decode, or claim too many pixels, are named, not sent', async () => {
  const [cell, exec] = await runCell(MKPNG + '\n' +
    'display({"image/png": base64.b64encode(b"\\x89PNG not really").decode()}, raw=True)\n' +
    'display({"image/jpeg": "////"}, raw=True)\n' +
    'bomb = png(1, 1).replace(struct.pack(">II", 1, 1), struct.pack(">II", 60000, 60000))\n' +
    'bomb = bomb[:29] + struct.pack(">I", zlib.crc32(bomb[12:29]) & 0xffffffff) + bomb[33:]\n' +
    'display(Image(data=bomb, format="png"))\n' +
    'display(Image(data=png(30, 20), format="png"))');
  const g = await ok(A, 'get_results', { notebook_handle: H, execution_id: exec });
  assert.equal(g.images.length, 1, 'only the good one');
  assert.deepEqual(dims(g.images[0].data), [30, 20]);
  assert.match(g.text, new RegExp(`\\[image/png, \\d+ bytes base64, cell ${cell}; not shown: not a valid PNG: `));
  assert.match(g.text, /\[image\/jpeg, 4 bytes base64, cell [^;]+; not shown: not a valid JPEG: /);
  assert.match(g.text, /\[image\/png 60000x60000, cell [^;]+; not shown: over 50 megapixels/);
  await ok(A, 'edit_cells', { notebook_handle: H, edits: [{ op: 'delete', cell_id: cell }] });
});

test('an inline export leaves images out, with a placeholder naming the cell', async () => {
  for (const format of ['markdown', 'html']) {
    const r = await ok(A, 'export_notebook', { notebook_handle: H, format });
    assert.doesNotMatch(r.sc.content, /data:image|iVBORw0KGgo/, format);
    assert.ok(r.text.length < 8000, `${format}: ${r.text.length} chars`);
    assert.match(r.sc.content, new RegExp(`image/png output of cell ${big[0]}`));
    assert.match(r.sc.content, /get_results|inspect_notebook/);
    assert.equal(r.sc.images_omitted, 9, format);
    assert.match(r.sc.content, /# Plots|<h1>Plots/);
  }
});

test('an export to a path returns the path and size, not the content', async () => {
  const out = path.join(T, 'work', 'report.html');
  const r = await ok(A, 'export_notebook', { notebook_handle: H, format: 'html', path: out });
  const size = fs.statSync(out).size;
  assert.equal(r.sc.path, out);
  assert.equal(r.sc.bytes, size);
  assert.equal(r.sc.content, undefined);
  assert.ok(r.text.includes(out) && r.text.includes(String(size)), r.text);
  assert.ok(r.text.length < 300, r.text);
  assert.match(fs.readFileSync(out, 'utf8'), /data:image\/png;base64,iVBORw0KGgo/,
    'a file export keeps its images');
});
