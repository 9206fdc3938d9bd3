// SPDX-License-Identifier: ISC
// lib.mjs: shared by the e2e tests and the demo.  Starts runtimed-mcp
// through the official MCP TypeScript SDK client with a private socket
// and state directory, calls tools, reads outputs, and finds and stops
// the processes a run left behind.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const CALL_TIMEOUT_MS = 60000;

// The proxy under test: $RUNTIMED_MCP, else the one an in-tree build made.
export function mcpBinary() {
  const bin = process.env.RUNTIMED_MCP || path.resolve(here, '../../runtimed-mcp');
  if (!fs.existsSync(bin))
    throw new Error(`runtimed-mcp not found at ${bin}; set RUNTIMED_MCP`);
  return bin;
}

// runtimed (for "runtimed stop"): $RUNTIMED_BIN, else beside runtimed-mcp
// (installed), else runtimed/runtimed (a build tree).
export function daemonBinary() {
  if (process.env.RUNTIMED_BIN) return process.env.RUNTIMED_BIN;
  const dir = path.dirname(mcpBinary());
  for (const p of [path.join(dir, 'runtimed'), path.join(dir, 'runtimed', 'runtimed')])
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
  throw new Error(`runtimed not found beside ${mcpBinary()}; set RUNTIMED_BIN`);
}

// A private world: socket, state dir and notebooks under one temp dir.
// The SDK passes only a few variables by default, so the env is explicit.
export function privateWorld(tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rtd-${tag}-`));
  const env = {
    PATH: process.env.PATH || '/usr/bin:/bin',
    HOME: process.env.HOME || dir,
    RUNTIMED_SOCKET: path.join(dir, 'runtimed.sock'),
    RUNTIMED_STATE_DIR: path.join(dir, 'state'),
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
  };
  // The kernelspec search path too (kernels.test.mjs skips a kernel
  // that is not on it).
  for (const k of ['RUNTIMED_LIBEXEC_DIR',
    'LANG', 'LC_ALL', 'LSAN_OPTIONS',
    'JUPYTER_PATH', 'JUPYTER_DATA_DIR', 'JUPYTER_PLATFORM_DIRS', 'XDG_DATA_DIRS'])
    if (process.env[k]) env[k] = process.env[k];
  // Sanitizer builds: every process of this world (proxy, worker, daemon,
  // agent) writes its reports to <dir>/sanitizer.<pid>, checked at the end.
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS'])
    if (process.env[k]) env[k] = `${process.env[k]}:log_path=${path.join(dir, 'sanitizer')}`;
  return { dir, env };
}

export async function connect(world, name = 'runtimed-e2e') {
  const transport = new StdioClientTransport({
    command: mcpBinary(),
    args: [],
    env: world.env,
    stderr: 'inherit',
  });
  const client = new Client({ name, version: '0.1.0' }, { capabilities: { experimental: { 'io.runtimed/structured': {} } } });
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  return { client, transport };
}

export function resultText(r) {
  return (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Call a tool; a tool error (isError) throws with its code and text.
export async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined,
    { timeout: CALL_TIMEOUT_MS });
  if (r.isError) {
    const code = r.structuredContent?.error?.code;
    const e = new Error(`${name} failed: ${code}: ${resultText(r)}`);
    e.result = r;
    throw e;
  }
  return r;
}

// Like call() but hands back tool errors as results.
export async function callRaw(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined,
    { timeout: CALL_TIMEOUT_MS });
}

const TERMINAL = new Set(['done', 'error', 'interrupted', 'kernel_died', 'cancelled']);

// run_cells, then get_results until the run is over.
export async function runAndWait(client, target, cellIds, waitSecs = 30) {
  let r = await call(client, 'run_cells', { ...target, cell_ids: cellIds, wait_secs: waitSecs });
  let sc = r.structuredContent;
  const deadline = Date.now() + 120000;
  while (!TERMINAL.has(sc.status) && Date.now() < deadline) {
    r = await call(client, 'get_results',
      { ...target, execution_id: sc.execution_id, timeout_secs: 30 });
    sc = r.structuredContent;
  }
  return sc;
}

function joinText(v) {
  return Array.isArray(v) ? v.join('') : (v ?? '');
}

// The text a cell printed or evaluated to, as a person would read it.
export function outputText(cell) {
  return (cell.outputs || []).map((o) => {
    if (o.output_type === 'stream') return joinText(o.text);
    if (o.output_type === 'error') return `${o.ename}: ${o.evalue}`;
    return joinText(o.data?.['text/plain']);
  }).join('');
}

export function validateNotebook(file) {
  execFileSync('/usr/bin/python3', ['-c',
    'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
    file], { stdio: ['ignore', 'inherit', 'inherit'] });
}

function readProc(pid, what) {
  try {
    return fs.readFileSync(`/proc/${pid}/${what}`, 'latin1');
  } catch {
    return null;
  }
}

// Processes started for this world: they carry its RUNTIMED_SOCKET in
// their environment, or its directory on their command line.
export function processesOf(world) {
  const mark = `RUNTIMED_SOCKET=${world.env.RUNTIMED_SOCKET}`;
  const found = [];
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    const cmd = readProc(ent, 'cmdline');
    if (cmd === null || cmd === '') continue;
    const env = readProc(ent, 'environ') || '';
    if (env.split('\0').includes(mark) || cmd.includes(world.dir))
      found.push({ pid: Number(ent), cmd: cmd.split('\0').join(' ').trim() });
  }
  return found;
}

// Children of pid whose command is prog (by /proc/<pid>/stat).
export function childrenOf(pid, prog) {
  const kids = [];
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    const stat = readProc(ent, 'stat');
    if (stat === null) continue;
    const m = /^\d+ \((.*)\) \S+ (\d+)/s.exec(stat);
    if (!m || Number(m[2]) !== pid) continue;
    const cmd = (readProc(ent, 'cmdline') || '').split('\0')[0];
    if (path.basename(cmd) === prog) kids.push(Number(ent));
  }
  return kids;
}

export function stopDaemon(world) {
  return spawnSync(daemonBinary(), ['stop'], {
    env: world.env, encoding: 'utf8', timeout: 30000,
  });
}

export async function waitFor(pred, ms, step = 100) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = pred();
    if (v || Date.now() >= deadline) return v;
    await new Promise((r) => setTimeout(r, step));
  }
}

// Last resort after a failed test: nothing of this world may outlive it.
export function killWorld(world) {
  for (const p of processesOf(world)) {
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

// Sanitizer reports (ASan, LSan, UBSan) that processes of this world left
// in their logs: the workers' and the daemon's stderr end up there.
export function sanitizerReports(world) {
  const found = [];
  const re = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer/;
  const walk = (d) => {
    let ents;
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && (e.name.endsWith('.log') || e.name.startsWith('sanitizer.'))) {
        const text = fs.readFileSync(p, 'latin1');
        const m = re.exec(text);
        if (m) found.push(`${p}:\n${text.slice(Math.max(0, m.index - 200), m.index + 1500)}`);
      }
    }
  };
  walk(world.dir);
  return found;
}

export function removeWorld(world) {
  fs.rmSync(world.dir, { recursive: true, force: true });
}
