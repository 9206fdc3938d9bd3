// SPDX-License-Identifier: ISC
// web.test.mjs: the live notebook page in a real browser (issue 17).
// Debian's chromium, headless, driven by playwright-core; an MCP SDK
// client works the notebook meanwhile.  The page shows the cells, a
// markdown heading and a PNG the kernel made; an edit by the client
// appears without a reload within 1 s (and the latency of 30 edits is
// measured); a time.sleep(3) cell is shown running, then done; the
// Interrupt button ends a running cell, Restart restarts the kernel; a
// comment made on the page is read back by the client; an output
// carrying <script>, <img onerror> and an SVG with script sets no
// global in the page; cells named constructor, __proto__ and toString
// (Object.prototype's keys) are edited and deleted in place; no secret is 403
// and a forged Host is refused.  The person acts on the page (decision
// 079): an edit the agent reads back, a stale edit refused with nothing
// changed, cells added, a run and run all whose outputs show on the page
// and in the agent's read, a conflict from an editor's save shown with
// both versions and resolved, and a run the agent's interrupt_kernel
// names as the live page's; each cell's last editor, and the person
// reverting an agent's batch from the page's list (refused, and said,
// when the person changed its cell since).  Screenshots go to the artifacts
// directory ($RUNTIMED_TEST_ARTIFACTS, else ./tests/e2e/artifacts).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import {
  privateWorld, connect, call, runAndWait, stopDaemon, killWorld,
  processesOf, sanitizerReports, waitFor, outputText,
} from './lib.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const world = privateWorld('web');
const artifacts = process.env.RUNTIMED_TEST_ARTIFACTS ||
  path.resolve('tests/e2e/artifacts');
let browser;
let conn;

after(async () => {
  if (browser) await browser.close();
  if (conn) await conn.client.close();
  stopDaemon(world);
  killWorld(world);
});

// A PNG made with zlib and struct: no matplotlib needed.
const PNG_CELL = `
import struct, zlib
from IPython.display import Image, display
def chunk(t, d):
    c = struct.pack('>I', len(d)) + t + d
    return c + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
w, h = 64, 32
rows = b''.join(b'\\x00' + b''.join(bytes([x * 4 % 256, y * 8 % 256, 160])
    for x in range(w)) for y in range(h))
png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB',
    w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) +
    chunk(b'IEND', b''))
display(Image(data=png, format='png'))
`;

const HOSTILE_CELL = `
from IPython.display import HTML, SVG, Markdown, display
display(HTML("<script>window.pwnedScript=1</script>"
    "<img src=x onerror='window.pwnedImg=1'>"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" '
    'onload="window.pwnedSvg=1"><script>window.pwnedSvg2=1</script>'
    '<rect width="10" height="10"/></svg>'))
display(Markdown("<img src=x onerror='window.pwnedMd=1'>"))
print("<img src=x onerror='window.pwnedText=1'>\\x1b[31mred\\x1b[0m")
`;

function get(port, pathname, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname,
      headers }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the live page in chromium', { timeout: 120000 }, async () => {
  const t0 = Date.now();
  conn = await connect(world, 'web-e2e-agent');
  const { client } = conn;
  const file = path.join(world.dir, 'live.ipynb');
  const created = await call(client, 'create_notebook', { path: file });
  const target = { notebook_handle: created.structuredContent.notebook_handle };
  const ed = await call(client, 'edit_cells', { ...target, edits: [
    { op: 'insert', after: 'BOTTOM', cell_type: 'markdown',
      source: '# Live heading\n\nSome *text*.' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'code', source: PNG_CELL },
    { op: 'insert', after: 'BOTTOM', cell_type: 'code', source: HOSTILE_CELL },
    { op: 'insert', after: 'BOTTOM', cell_type: 'code', source: 'x = 1' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'code',
      source: 'import time\ntime.sleep(3)' },
    { op: 'insert', after: 'BOTTOM', cell_type: 'code',
      source: 'import time\ntime.sleep(30)' },
  ] });
  const [mdId, pngId, hostileId, editId, sleepId, longId] =
    ed.structuredContent.cells.map((c) => c.cell_id);
  const run = await runAndWait(client, target, [pngId, hostileId]);
  assert.equal(run.status, 'done', JSON.stringify(run));

  const shown = await call(client, 'show_notebook', target);
  const url = shown.structuredContent.url;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/open\?s=[0-9a-f]{64}&nb=/);
  assert.match(shown.content[0].text, /open/);
  const port = Number(new URL(url).port);
  const nbId = created.structuredContent.notebook_id;

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [] });
  const page = await (await browser.newContext()).newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tOpen = Date.now();
  await page.goto(url);
  await page.waitForSelector(`section[data-id="${sleepId}"]`, { timeout: 5000 });
  const renderMs = Date.now() - tOpen;
  assert.equal(new URL(page.url()).search, '', 'the secret left the address');
  assert.ok(await page.locator('h1', { hasText: 'Live heading' }).isVisible());
  const img = page.locator(`section[data-id="${pngId}"] img.out-img`);
  assert.ok(await img.isVisible());
  assert.match(await img.getAttribute('src'), /^data:image\/png;base64,/);
  assert.ok(await img.evaluate((i) => i.naturalWidth) === 64);
  assert.equal(await page.locator('section.cell').count(), 6);
  // Hostile output: nothing ran in the page.
  const pwned = await page.evaluate(() => [window.pwnedScript, window.pwnedImg,
    window.pwnedSvg, window.pwnedSvg2, window.pwnedMd, window.pwnedText]);
  assert.deepEqual(pwned, [undefined, undefined, undefined, undefined,
    undefined, undefined]);
  const frame = page.locator(`section[data-id="${hostileId}"] iframe`);
  assert.equal(await frame.getAttribute('sandbox'), '');
  assert.ok(await page.locator(`section[data-id="${hostileId}"] .ansi-fg-1`)
    .count() > 0, 'ANSI colour');
  assert.match(await page.locator('#peers').textContent(), /web-e2e-agent/);

  // Edits by the client reach the page without a reload.
  const lat = [];
  for (let i = 0; i < 30; i++) {
    const marker = `marker_${i}_${Date.now()}`;
    await page.evaluate((m) => {
      window.rtdSeen = 0;
      const cells = document.getElementById('cells');
      const obs = new MutationObserver(() => {
        if (cells.textContent.includes(m)) { window.rtdSeen = Date.now(); obs.disconnect(); }
      });
      obs.observe(cells, { childList: true, subtree: true, characterData: true });
    }, marker);
    const t = Date.now();
    await call(client, 'edit_cells', { ...target, edits: [
      { op: 'edit', cell_id: editId, source: `${marker} = 1` }] });
    await page.waitForFunction(() => window.rtdSeen > 0, null, { timeout: 1000 });
    lat.push((await page.evaluate(() => window.rtdSeen)) - t);
  }
  lat.sort((a, b) => a - b);
  const p50 = lat[Math.floor(lat.length / 2)];
  const p99 = lat[Math.ceil(lat.length * 0.99) - 1];
  assert.match(await page.locator('#last').textContent(), /web-e2e-agent/);

  // A running cell is shown running, then done.
  await call(client, 'run_cells', { ...target, cell_ids: [sleepId], wait_secs: 0 });
  await page.waitForSelector(`section.running[data-id="${sleepId}"]`, { timeout: 3000 });
  await page.waitForSelector(`section[data-id="${sleepId}"]:not(.running)`, { timeout: 10000 });
  assert.match(await page.locator(`section[data-id="${sleepId}"] .gutter`)
    .textContent(), /\[\d+\]/);

  // The Interrupt button ends a running cell.
  const long = await call(client, 'run_cells', { ...target, cell_ids: [longId], wait_secs: 0 });
  await page.waitForSelector(`section.running[data-id="${longId}"]`, { timeout: 5000 });
  await page.click('#interrupt');
  await page.waitForSelector(`section[data-id="${longId}"]:not(.running)`, { timeout: 5000 });
  const ended = await call(client, 'get_results', { ...target,
    execution_id: long.structuredContent.execution_id, timeout_secs: 10 });
  assert.equal(ended.structuredContent.status, 'interrupted');

  // A comment made on the page is read back by the client.
  await page.click(`section[data-id="${mdId}"] .comment-btn`);
  await page.fill('#comment-text', 'Please explain this heading');
  await page.click('#comment-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('note')
    .textContent === 'comment posted', null, { timeout: 5000 });
  const res = await client.readResource({
    uri: `runtimed://sessions/${target.notebook_handle}/comments` });
  const threads = JSON.parse(res.contents[0].text).threads;
  assert.ok(threads.some((t) => t.anchor.cell_id === mdId &&
    t.comments.some((c) => c.body === 'Please explain this heading')),
    JSON.stringify(threads));
  await page.waitForSelector(`section[data-id="${mdId}"] .thread`, { timeout: 2000 });

  // Restart: the kernel comes back, its counts start again.
  await page.click('#restart');
  await page.waitForFunction(() => document.getElementById('note')
    .textContent === 'the kernel restarted', null, { timeout: 30000 });
  await page.waitForFunction(() => document.body.getAttribute('data-kernel')
    === 'idle', null, { timeout: 10000 });
  const again = await runAndWait(client, target, [editId]);
  assert.equal(again.cells[0].execution_count, 1);

  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'web-live-page.png'), fullPage: true });

  // No secret: 403 and nothing more; a forged Host: refused.
  const bare = await (await browser.newContext()).newPage();
  const r403 = await bare.goto(`http://127.0.0.1:${port}/nb/${nbId}`);
  assert.equal(r403.status(), 403);
  assert.equal((await r403.text()).trim(), 'forbidden');
  const secret = new URL(url).searchParams.get('s');
  const cookie = `rtd_${port}=${secret}`;
  // Every page is under the cookie's path: /v, 16 hex of the secret's hash.
  const prefix = '/v' + crypto.createHash('sha256').update(secret)
    .digest('hex').slice(0, 16);
  const forged = await get(port, `${prefix}/nb/${nbId}`, { Host: `evil.example:${port}`, Cookie: cookie });
  assert.equal(forged.status, 403);
  const good = await get(port, `${prefix}/nb/${nbId}`, { Host: `127.0.0.1:${port}`, Cookie: cookie });
  assert.equal(good.status, 200);
  assert.deepEqual(errors, []);
  console.log(`# web: 6 cells rendered in ${renderMs} ms; edit to page ` +
    `p50 ${p50} ms p99 ${p99} ms (n=${lat.length}); test ${Date.now() - t0} ms`);
});

test('a 500-cell notebook renders in under 1 s', { timeout: 60000 }, async () => {
  const { client } = conn;
  const file = path.join(world.dir, 'big.ipynb');
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const cells = [];
  for (let i = 0; i < 500; i++) {
    if (i % 2 === 0) {
      cells.push({ cell_type: 'markdown', id: `m${i}`, metadata: {},
        source: `## Section ${i}\n\nSome *markdown* with \`code\` and a [link](https://example.org).` });
    } else {
      cells.push({ cell_type: 'code', id: `c${i}`, metadata: {}, execution_count: i,
        source: `for k in range(3):\n    print(k, ${i})`,
        outputs: [
          { output_type: 'stream', name: 'stdout', text: `0 ${i}\n1 ${i}\n\u001b[32m2\u001b[0m ${i}\n` },
          { output_type: 'display_data', metadata: {}, data: { 'image/png': png, 'text/plain': '<Figure>' } },
        ] });
    }
  }
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5,
    metadata: {}, cells }));
  const c = await call(client, 'connect_notebook', { path: file });
  const target = { notebook_handle: c.structuredContent.notebook_handle };
  const url = (await call(client, 'show_notebook', target)).structuredContent.url;
  const page = await (await browser.newContext()).newPage();
  const t = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll('section.cell')
    .length === 500, null, { timeout: 5000, polling: 'raf' });
  const wall = Date.now() - t;
  // From the navigation's start (the /open redirect included) to the
  // cells in the page; wall adds the browser's own new-tab start.
  const ms = await page.evaluate(() => Math.round(window.rtdApplied[0].at -
    performance.timeOrigin));
  assert.ok(await page.locator('h2', { hasText: 'Section 498' }).count() === 1);
  console.log(`# web: 500 cells rendered in ${ms} ms from navigation start ` +
    `(${wall} ms from goto)`);
  // The target is 1 s; a loaded machine (make check -j, sanitizers)
  // gets RUNTIMED_TEST_SLACK times that (default 3).
  const slack = Number(process.env.RUNTIMED_TEST_SLACK || 3);
  assert.ok(ms < 1000 * slack, `500 cells took ${ms} ms`);
});

// Issue 36: cell ids a file may hold that are Object.prototype's keys.
test('cells named constructor, __proto__, toString update in place', { timeout: 60000 }, async () => {
  const { client } = conn;
  const file = path.join(world.dir, 'proto-ids.ipynb');
  const ids = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5,
    metadata: {}, cells: ids.map((id) => ({ cell_type: 'markdown', id,
      metadata: {}, source: `cell named ${id}` })) }));
  const c = await call(client, 'connect_notebook', { path: file });
  const target = { notebook_handle: c.structuredContent.notebook_handle };
  const url = (await call(client, 'show_notebook', target)).structuredContent.url;
  const page = await (await browser.newContext()).newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll('section.cell')
    .length === 4, null, { timeout: 5000 });
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'delete', cell_id: '__proto__' },
    { op: 'edit', cell_id: 'toString', source: 'edited toString' },
  ] });
  await page.waitForFunction(() => {
    const s = Array.from(document.querySelectorAll('section.cell'));
    return s.length === 3 && !document.body.textContent.includes(
      'cell named __proto__') &&
      document.body.textContent.includes('edited toString');
  }, null, { timeout: 5000 }).catch(async () => {
    assert.fail('the page did not follow: ' + (await page.evaluate(() =>
      Array.from(document.querySelectorAll('section.cell')).map((e) =>
      e.getAttribute('data-id')).join(','))) + ' errors: ' + errors.join('; '));
  });
  assert.deepEqual(errors, []);
  await page.close();
});

// Decision 079: the person acts on the page as an agent does, through
// the view's own daemon connection, with the same version guard.
test('the person edits, adds, runs and resolves a conflict on the page', { timeout: 150000 }, async () => {
  const { client } = conn;
  const file = path.join(world.dir, 'person.ipynb');
  const code = (id, source) => ({ cell_type: 'code', id, metadata: {},
    execution_count: null, outputs: [], source });
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3',
      language: 'python' } },
    cells: [code('ca', 'a = 1'), code('cb', 'print("b", a)'),
      { cell_type: 'markdown', id: 'md', metadata: {}, source: '# notes' }] }));
  const c = await call(client, 'connect_notebook', { path: file });
  const target = { notebook_handle: c.structuredContent.notebook_handle };
  const url = (await call(client, 'show_notebook', target)).structuredContent.url;
  const page = await (await browser.newContext()).newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector('section[data-id="md"]', { timeout: 5000 });
  const read = async (view = 'source') => (await call(client,
    'inspect_notebook', { ...target, view })).structuredContent;
  const src = (sc, id) => sc.cells.find((x) => x.cell_id === id).source;
  const note = (re, ms = 5000) => page.waitForFunction((r) =>
    new RegExp(r).test(document.getElementById('note').textContent),
    re.source, { timeout: ms }).catch(async () => assert.fail(
    `the page says "${await page.locator('#note').textContent()}", not ${re}`));
  const submit = () => page.click('#edit-form button[type=submit]');
  const noteClear = () => page.evaluate(() => {
    document.getElementById('note').textContent = ''; });

  // An edit on the page: the agent reads it, as the live page's.
  const before = (await read('outline')).cursor;
  await page.click('section[data-id="ca"] button[data-act="edit"]');
  assert.equal(await page.inputValue('#edit-text'), 'a = 1');
  await page.fill('#edit-text', 'a = 2');
  await submit();
  await note(/^saved$/);
  assert.equal(src(await read(), 'ca'), 'a = 2');
  const seen = (await call(client, 'inspect_notebook', { ...target,
    after: before })).structuredContent;
  assert.equal(seen.changes.cells.find((x) => x.cell_id === 'ca').by,
    'live page', JSON.stringify(seen.changes));
  await page.waitForSelector('section[data-id="ca"][data-src="a = 2"]', { timeout: 3000 });

  // A stale edit: the agent changed the cell after the person opened
  // it; refused with a message, the person's text kept, nothing changed.
  await page.click('section[data-id="ca"] button[data-act="edit"]');
  const v0 = (await read()).cells.find((x) => x.cell_id === 'ca').version;
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'edit', cell_id: 'ca', source: 'a = 3' }] });
  await page.waitForSelector('section[data-id="ca"][data-src="a = 3"]', { timeout: 3000 });
  await page.fill('#edit-text', 'a = 99');
  await noteClear();
  await submit();
  await note(/someone changed this cell.*not applied/);
  assert.ok(await page.locator('#edit-form').isVisible());
  assert.equal(await page.inputValue('#edit-text'), 'a = 99');
  const after = await read();
  assert.equal(src(after, 'ca'), 'a = 3');
  assert.notEqual(after.cells.find((x) => x.cell_id === 'ca').version, v0);
  await page.click('#edit-cancel');

  // Cells added: markdown below a cell, code at the end.
  await page.click('section[data-id="md"] button[data-act="insert"]');
  await page.selectOption('#edit-type', 'markdown');
  await page.fill('#edit-text', '## Added by the person');
  await noteClear();
  await submit();
  await note(/^cell added$/);
  await page.click('#add-end');
  await page.selectOption('#edit-type', 'code');
  await page.fill('#edit-text', 'print("end", a)');
  await noteClear();
  await submit();
  await note(/^cell added$/);
  let sc = await read();
  assert.deepEqual(sc.cells.map((x) => x.source), ['a = 3', 'print("b", a)',
    '# notes', '## Added by the person', 'print("end", a)']);
  assert.equal(sc.cells[3].cell_type, 'markdown');
  const endId = sc.cells[4].cell_id;
  await page.waitForSelector('section.cell h2', { timeout: 3000 });
  assert.equal(await page.locator('section.cell').count(), 5);

  // Run a cell, then run all: outputs on the page and in the agent's read.
  const outOf = (id) => page.locator(`section[data-id="${id}"] .out-stream`);
  await noteClear();
  await page.click('section[data-id="ca"] button[data-act="run"]');
  await note(/running or queued/);
  await page.click('section[data-id="cb"] button[data-act="run"]');
  await page.waitForFunction(() => {
    const o = document.querySelector('section[data-id="cb"] .out-stream');
    return o && o.textContent.includes('b 3'); }, null, { timeout: 60000 });
  sc = await read('all');
  assert.match(outputText(sc.cells.find((x) => x.cell_id === 'cb')), /^b 3\n/);
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'edit', cell_id: 'ca', source: 'a = 4' }] });
  await noteClear();
  await page.click('#run-all');
  await note(/code cells are running or queued/);
  await page.waitForFunction((id) => {
    const o = document.querySelector(`section[data-id="${id}"] .out-stream`);
    return o && o.textContent.includes('end 4'); }, endId, { timeout: 30000 });
  assert.match(await outOf('cb').textContent(), /b 4/);
  sc = await read('all');
  assert.match(outputText(sc.cells.find((x) => x.cell_id === 'cb')), /^b 4\n/);
  assert.match(outputText(sc.cells.find((x) => x.cell_id === endId)), /^end 4\n/);

  // A conflict an editor's save makes: shown with both versions, resolved
  // on the page.  The room is saved first (autosave), so the file is the base.
  const fileSrc = () => JSON.parse(fs.readFileSync(file, 'utf8')).cells
    .map((x) => Array.isArray(x.source) ? x.source.join('') : x.source);
  assert.ok(await waitFor(() => fileSrc()[0] === 'a = 4' &&
    fileSrc().length === 5 ? true : null, 15000), 'autosave');
  await sleep(300);
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'edit', cell_id: 'cb', source: 'print("agent")' }] });
  // The person's editor saves as Jupyter does: a new file renamed over.
  const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  nb.cells.find((x) => x.id === 'cb').source = 'print("person")';
  fs.writeFileSync(file + '.tmp', JSON.stringify(nb, null, 1));
  fs.renameSync(file + '.tmp', file);
  const box = page.locator('#conflicts .conflict[data-cell="cb"]');
  await box.waitFor({ timeout: 5000 });
  assert.match(await box.locator('.side.room').textContent(), /print\("agent"\)/);
  assert.match(await box.locator('.side.disk').textContent(), /print\("person"\)/);
  await page.waitForSelector('section.conflict[data-id="cb"]', { timeout: 2000 });
  sc = await read();
  assert.equal(sc.conflicts.length, 1, JSON.stringify(sc.conflicts));
  assert.equal(sc.conflicts[0].cell_id, 'cb');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'web-conflict.png'), fullPage: true });
  await noteClear();
  await box.locator('button.resolve[data-act="disk"]').click();
  await note(/^conflict resolved$/);
  await page.waitForSelector('#conflicts', { state: 'hidden', timeout: 3000 });
  assert.equal(await page.locator('section.conflict').count(), 0);
  sc = await read();
  assert.equal(sc.conflicts, undefined);
  assert.equal(src(sc, 'cb'), 'print("person")');
  await page.waitForSelector('section[data-id="cb"][data-src=\'print("person")\']', { timeout: 3000 });

  // The page's runs are the live page's: an agent's interrupt_kernel
  // says whose run it ended.
  const ins = await call(client, 'edit_cells', { ...target, edits: [
    { op: 'insert', after: 'BOTTOM', source: 'import time\ntime.sleep(30)' }] });
  const sleepId = ins.structuredContent.cells[0].cell_id;
  await page.click(`section[data-id="${sleepId}"] button[data-act="run"]`);
  await page.waitForSelector(`section.running[data-id="${sleepId}"]`, { timeout: 10000 });
  const intr = await call(client, 'interrupt_kernel', target);
  assert.deepEqual(intr.structuredContent.ended.map((e) => [e.client_name, e.yours]),
    [['live page', false]], JSON.stringify(intr.structuredContent));

  // Each cell says who last changed it (decision 084): the agent's
  // edits, the person's resolve.
  await page.waitForSelector('section[data-id="ca"] .by[data-by="web-e2e-agent"]', { timeout: 3000 });
  await page.waitForSelector('section[data-id="cb"] .by[data-by="live page"]', { timeout: 3000 });
  assert.match(await page.locator('section[data-id="ca"] .by').getAttribute('title'),
    /^last changed by web-e2e-agent, session [0-9a-f]{8}$/);

  // The person reverts an agent's batch from the list (decision 085).
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'edit', cell_id: 'ca', source: 'a = 5' }] });
  const mineList = async () => (await call(client, 'edit_cells', { ...target,
    undo: 'list' })).structuredContent.batches;
  const b5 = (await mineList())[0].batch_id.slice(1);
  await page.click('#batches-box summary');
  const row = page.locator(`#batches li.batch[data-batch="${b5}"]`);
  await row.waitFor({ timeout: 3000 });
  assert.equal(await row.locator('.who').textContent(), 'web-e2e-agent');
  assert.match(await row.textContent(), /1 cell: ca/);
  assert.ok(Number(await page.locator('#nbatches').textContent()) >= 4);
  await noteClear();
  await row.locator('button.revert').click();
  await note(new RegExp(`^reverted b${b5} as batch b\\d+$`));
  assert.equal(src(await read(), 'ca'), 'a = 4');
  await page.waitForSelector(`#batches li.batch.undone[data-batch="${b5}"]`, { timeout: 3000 });
  assert.equal(await page.locator(`#batches li[data-batch="${b5}"] button.revert`).count(), 0);
  assert.equal((await mineList()).find((b) => b.batch_id === `b${b5}`).undone_by !== undefined, true);

  // A batch whose cell the person changed after: refused, said on the
  // page, nothing changed.
  await call(client, 'edit_cells', { ...target, edits: [
    { op: 'edit', cell_id: 'ca', source: 'a = 6' }] });
  const b6 = (await mineList())[0].batch_id.slice(1);
  await page.waitForSelector('section[data-id="ca"][data-src="a = 6"]', { timeout: 3000 });
  await page.click('section[data-id="ca"] button[data-act="edit"]');
  await page.fill('#edit-text', 'a = 7');
  await noteClear();
  await submit();
  await note(/^saved$/);
  const row6 = page.locator(`#batches li.batch[data-batch="${b6}"] button.revert`);
  await row6.waitFor({ timeout: 3000 });
  await noteClear();
  await row6.click();
  await note(new RegExp(`nothing was undone: cell ca was changed after batch b${b6} by live page`));
  assert.equal(src(await read(), 'ca'), 'a = 7');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'web-batches.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the daemon stops, the view with it; no sanitizer report', { timeout: 60000 }, async () => {
  await browser.close();
  browser = null;
  await conn.client.close();
  conn = null;
  const stop = stopDaemon(world);
  assert.equal(stop.status, 0, `runtimed stop: ${stop.stderr}${stop.stdout}`);
  const left = await waitFor(() => processesOf(world).length === 0 ? true : null, 15000);
  assert.ok(left, `processes left behind: ${JSON.stringify(processesOf(world))}`);
  const reports = sanitizerReports(world);
  assert.equal(reports.length, 0, `sanitizer reports:\n${reports.join('\n')}`);
});
