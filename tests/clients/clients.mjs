// SPDX-License-Identifier: ISC
// clients.mjs: a private world (socket, state dir, HOME) and the three
// clients the suite and bench/economy.mjs drive through it: the real
// Claude Code CLI (claude -p) and the real Codex CLI (codex exec), both
// pointed at the scripted model (model.mjs) and given runtimed-mcp as
// their MCP server, and a plain MCP SDK client that reads `content`.
// RUNTIMED_MCP names the proxy under test (default: the in-tree build).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { economyJob, edgesJob, writeEdgeNotebook, writeNotebook } from './jobs.mjs';
import { ScriptedModel, chars, partsText } from './model.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(here, 'node_modules', '.bin');
export const CLAUDE = path.join(here, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
export const CODEX_JS = path.join(here, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
export const NODE22 = path.join(here, 'node_modules', 'node', 'bin', 'node');
export const VERSIONS = { claude: '2.1.332', codex: '0.171.0' };

// The pinned CLIs must be there: a suite that skipped them would prove
// nothing (CI installs them with npm ci in tests/clients).
export function checkInstalled() {
  const missing = [CLAUDE, CODEX_JS, NODE22].filter((f) => !fs.existsSync(f));
  if (missing.length)
    throw new Error(`not installed: ${missing.join(', ')}; run "npm ci" in ${here}`);
  const v = (args) => spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 30000,
    env: { PATH: `${BIN}:/usr/bin:/bin`, HOME: os.tmpdir() } });
  const c = v([CLAUDE, '--version']);
  const x = v([NODE22, CODEX_JS, '--version']);
  if (!c.stdout.includes(VERSIONS.claude)) throw new Error(`claude --version: ${c.stdout}${c.stderr}`);
  if (!x.stdout.includes(VERSIONS.codex)) throw new Error(`codex --version: ${x.stdout}${x.stderr}`);
  return { claude: c.stdout.trim(), codex: x.stdout.trim() };
}

export function mcpBinary() {
  const bin = process.env.RUNTIMED_MCP || path.resolve(here, '../../runtimed-mcp');
  if (!fs.existsSync(bin)) throw new Error(`runtimed-mcp not found at ${bin}; set RUNTIMED_MCP`);
  return bin;
}

export function daemonBinary() {
  if (process.env.RUNTIMED_BIN) return process.env.RUNTIMED_BIN;
  const dir = path.dirname(mcpBinary());
  for (const p of [path.join(dir, 'runtimed'), path.join(dir, 'runtimed', 'runtimed')])
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
  throw new Error(`runtimed not found beside ${mcpBinary()}; set RUNTIMED_BIN`);
}

// One world per client run: its own daemon (socket, state dir), its own
// HOME with the client's config, a work dir for the notebook.
// Under /tmp whatever TMPDIR says: the notebook's path is in the text
// the model reads, so its length is part of what the budgets measure.
export function makeWorld(tag) {
  const dir = fs.mkdtempSync(path.join('/tmp', `rtd-clients-${tag}-`));
  const home = path.join(dir, 'home');
  const work = path.join(dir, 'work');
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  fs.mkdirSync(home);
  fs.mkdirSync(work);
  // What runtimed-mcp gets, whoever spawns it: clients pass a server
  // only the variables its configuration names (Codex) or their own
  // (Claude Code), so every one is named.
  const mcpEnv = {
    PATH: '/usr/bin:/bin',
    HOME: home,
    RUNTIMED_SOCKET: path.join(dir, 'run', 'runtimed.sock'),
    RUNTIMED_STATE_DIR: path.join(dir, 'state'),
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
  };
  for (const k of ['RUNTIMED_LIBEXEC_DIR', 'LANG', 'LC_ALL',
    'JUPYTER_PATH', 'JUPYTER_DATA_DIR', 'JUPYTER_PLATFORM_DIRS', 'XDG_DATA_DIRS',
    'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS'])
    if (process.env[k]) mcpEnv[k] = process.env[k];
  return { dir, home, work, mcpEnv, tag };
}

export function stopWorld(world) {
  const r = spawnSync(daemonBinary(), ['stop'], { env: world.mcpEnv, encoding: 'utf8', timeout: 30000 });
  return r;
}

export function removeWorld(world) {
  fs.rmSync(world.dir, { recursive: true, force: true });
}

// What keeps a client on the loopback: the model's URL, no telemetry,
// no update checks, and every other HTTP(S) request sent through the
// scripted model as a proxy that refuses it and records the host.
function quietEnv(world, model) {
  return {
    PATH: `${BIN}:/usr/bin:/bin`,
    HOME: world.home,
    TMPDIR: world.dir,
    LANG: 'C.UTF-8',
    HTTPS_PROXY: model.url,
    HTTP_PROXY: model.url,
    https_proxy: model.url,
    http_proxy: model.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

function spawnLogged(cmd, args, { env, cwd, timeoutMs, log }) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { stderr += `\n[killed after ${timeoutMs} ms]`; child.kill('SIGKILL'); }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (log) fs.writeFileSync(log, `$ ${cmd} ${args.join(' ')}\n--- stdout\n${stdout}\n--- stderr\n${stderr}\n`);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

const PROMPT = 'Work on the notebook with the runtimed tools as you are told.';

// claude -p with runtimed-mcp as its one MCP server, its tools allowed.
export async function runClaude(world, model, { timeoutMs = 180000 } = {}) {
  const cfg = path.join(world.dir, 'mcp.json');
  fs.writeFileSync(cfg, JSON.stringify({ mcpServers: { runtimed: {
    type: 'stdio', command: mcpBinary(), args: [], env: world.mcpEnv } } }, null, 1));
  const env = {
    ...quietEnv(world, model),
    CLAUDE_CONFIG_DIR: path.join(world.home, '.claude'),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-scripted-model-dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
  };
  model.t0 = Date.now();
  return spawnLogged(CLAUDE, ['-p', PROMPT, '--mcp-config', cfg, '--strict-mcp-config',
    '--allowedTools', 'mcp__runtimed', '--no-session-persistence', '--output-format', 'json'],
  { env, cwd: world.work, timeoutMs, log: path.join(world.dir, 'claude.log') });
}

// Codex features that reach for hosts other than the model's
// (plugins, apps, model discovery): off, so that the run stays local.
const CODEX_OFF = (process.env.CODEX_OFF ?? 'plugins apps remote_plugin api_key_model_discovery tool_suggest').split(/\s+/).filter(Boolean);

function tomlString(s) {
  return JSON.stringify(s);  // a TOML basic string is a JSON string here
}

// codex exec with a provider that is the scripted model (Responses API)
// and runtimed-mcp as mcp_servers.runtimed.
export async function runCodex(world, model, { timeoutMs = 180000 } = {}) {
  const codexHome = path.join(world.home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  const envLines = Object.entries(world.mcpEnv).map(([k, v]) => `${k} = ${tomlString(v)}`);
  fs.writeFileSync(path.join(codexHome, 'config.toml'), [
    'model = "gpt-5.5"',
    'model_provider = "scripted"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[features]',
    ...CODEX_OFF.map((f) => `${f} = false`),
    '',
    '[model_providers.scripted]',
    'name = "scripted model"',
    `base_url = ${tomlString(`${model.url}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_MODEL_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[mcp_servers.runtimed]',
    `command = ${tomlString(mcpBinary())}`,
    'default_tools_approval_mode = "approve"',
    'startup_timeout_sec = 60',
    'tool_timeout_sec = 120',
    '',
    '[mcp_servers.runtimed.env]',
    ...envLines,
    '',
  ].join('\n'));
  const env = {
    ...quietEnv(world, model),
    CODEX_HOME: codexHome,
    SCRIPTED_MODEL_KEY: 'scripted-model-dummy',
  };
  model.t0 = Date.now();
  return spawnLogged(NODE22, [CODEX_JS, 'exec', '--skip-git-repo-check', '--ephemeral',
    '--strict-config', '--color', 'never', '--json', '-C', world.work, PROMPT],
  { env, cwd: world.work, timeoutMs, log: path.join(world.dir, 'codex.log') });
}

// A plain MCP client (the official SDK) that follows the same script and
// hands "the model" what `content` holds: text blocks and image blocks.
export async function runSdk(world, script, { callTimeoutMs = 120000 } = {}) {
  const t0 = Date.now();
  const transport = new StdioClientTransport({ command: mcpBinary(), args: [], env: world.mcpEnv, stderr: 'pipe' });
  const client = new Client({ name: 'runtimed-clients-sdk', version: '0.1.0' });
  const results = [];
  let tools = null;
  let instructions = null;
  try {
    await client.connect(transport, { timeout: callTimeoutMs });
    instructions = client.getInstructions() || '';
    tools = (await client.listTools()).tools.map((t) => ({ name: t.name,
      json: JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema }) }));
    for (let i = 0; i < script.length; i++) {
      const step = script[i]({ results, last: results[results.length - 1] });
      const r = await client.callTool({ name: step.tool, arguments: step.args }, undefined,
        { timeout: callTimeoutMs });
      const parts = (r.content || []).map((c) => c.type === 'text' ? { type: 'text', text: c.text } :
        c.type === 'image' ? { type: 'image', mediaType: c.mimeType, bytes: c.data.length } :
          { type: c.type, raw: JSON.stringify(c) });
      results.push({ id: `sdk_${i}`, step: i, tool: step.tool, args: step.args, parts,
        text: partsText(parts), isError: !!r.isError, structured: r.structuredContent,
        t: Date.now() - t0 });
    }
  } finally {
    await client.close().catch(() => {});
  }
  return { results, toolsShown: tools, instructions, ms: Date.now() - t0 };
}

// What Codex wraps every MCP result in before the model reads it:
// "Wall time: 0.0528 seconds\nOutput:\n".  Not runtimed's to change; it
// is counted apart so runtimed's share can be held to the same budget.
const CODEX_ENVELOPE = /^Wall time: [0-9.]+ seconds\nOutput:\n/;

// The realistic job through one client; every result as the model read
// it: parts (text and images, in order), text (all text parts), body
// (text less the client's own envelope), and its characters.
export async function runEconomy(client, opts) {
  return runJob(client, 'economy', opts);
}

// job: 'economy' (the realistic job) or 'edges' (an error, a guarded
// edit after a run, a kernel death).
export async function runJob(client, which, { keep = false, timeoutMs = 240000 } = {}) {
  const world = makeWorld(which === 'economy' ? client : `${client}-${which}`);
  const nbPath = path.join(world.work, which === 'edges' ? 'edges.ipynb' : 'sales.ipynb');
  const exportPath = path.join(world.work, 'sales.md');
  (which === 'edges' ? writeEdgeNotebook : writeNotebook)(nbPath);
  const job = which === 'edges' ? edgesJob(nbPath) : economyJob(nbPath, exportPath);
  const out = { client, world, nbPath, exportPath, labels: job.labels, steps: job.script.length };
  try {
    if (client === 'sdk') {
      const r = await runSdk(world, job.script);
      Object.assign(out, { results: r.results, toolsShown: r.toolsShown, instructions: r.instructions,
        ms: r.ms, exit: { code: 0 }, firstToolsAt: null, proxied: [], modelErrors: [] });
    } else {
      const model = await new ScriptedModel(job.script, { dumpDir: world.dir }).start();
      try {
        const exit = await (client === 'claude' ? runClaude : runCodex)(world, model, { timeoutMs });
        Object.assign(out, { results: model.results, toolsShown: model.toolsShown,
          instructions: model.instructions, firstToolsAt: model.firstToolsAt, ms: exit.ms,
          exit, proxied: model.proxied, modelErrors: model.errors, requests: model.requests,
          searches: model.searches });
      } finally {
        await model.close();
      }
    }
  } finally {
    out.stop = stopWorld(world);
  }
  for (const r of out.results) {
    const env = client === 'codex' ? (CODEX_ENVELOPE.exec(r.text) || [''])[0] : '';
    r.envelope = env;
    r.body = r.text.slice(env.length);
    r.chars = chars(r.text);
    r.bodyChars = chars(r.body);
    r.images = r.parts.filter((p) => p.type === 'image');
  }
  out.total = out.results.reduce((a, r) => a + r.chars, 0);
  out.bodyTotal = out.results.reduce((a, r) => a + r.bodyChars, 0);
  out.toolsChars = (out.toolsShown || []).reduce((a, t) => a + chars(t.json), 0);
  out.instructionsChars = out.instructions === null || out.instructions === undefined ? null :
    chars(out.instructions);
  if (!keep) removeWorld(world);
  return out;
}
