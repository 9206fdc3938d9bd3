// SPDX-License-Identifier: ISC
// clients.mjs: the two plain clients bench/run.mjs and bench/ab.mjs
// share: JSON-RPC lines over a runtimed-mcp of its own, and the kernel
// references of ref_kernel.py as a line server.

import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// The least an MCP client can be: JSON-RPC lines over the runtimed-mcp
// at bin, answers matched by id, notifications ignored.  Beside the SDK
// client it tells the chain's time from the client's.
export async function lineClient(bin, env, name) {
  const p = spawn(bin, [], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map();
  let next = 1;
  readline.createInterface({ input: p.stdout }).on('line', (l) => {
    const m = JSON.parse(l);
    if (m.id != null && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
    }
  });
  const rpc = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
  // Typed results, as the SDK client here asks (decision 043).
  await rpc('initialize', { protocolVersion: '2025-11-25',
    capabilities: { experimental: { 'io.runtimed/structured': {} } },
    clientInfo: { name, version: '1' } });
  p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return {
    async tool(tname, args) {
      const m = await rpc('tools/call', { name: tname, arguments: args });
      if (m.error || m.result.isError)
        throw new Error(`${tname}: ${JSON.stringify(m.error ?? m.result.structuredContent).slice(0, 300)}`);
      return m.result.structuredContent;
    },
    close: () => p.stdin.end(),
  };
}

// Kernel references: ref_kernel.py as a line server.
export function refServer() {
  const p = spawn('/usr/bin/python3', [path.join(here, 'ref_kernel.py')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1' },
  });
  const waiting = [];
  readline.createInterface({ input: p.stdout }).on('line', (l) => waiting.shift()?.(JSON.parse(l)));
  const next = () => new Promise((r) => waiting.push(r));
  return {
    ready: next(),
    kernelCpuMs: 0,	// of the last batch
    // client: 'raw' or 'jc'; kernel: {connect, pid} of another kernel.
    async run(client, code, n, kernel = {}) {
      const answer = next();
      p.stdin.write(`${JSON.stringify({ client, code, n, ...kernel })}\n`);
      const a = await answer;
      this.kernelCpuMs = a.kernel_cpu_ms;
      return a.samples;
    },
    close() { p.stdin.end('\n'); },
  };
}
