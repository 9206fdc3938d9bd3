// SPDX-License-Identifier: ISC
// bench/economy.mjs: the characters a model reads for a realistic job
// (issue 34), through the real clients: Claude Code (claude -p 2.1.332)
// and Codex (codex exec 0.171.0) against a scripted model on 127.0.0.1,
// and a plain MCP SDK client that reads `content`.  The job
// (tests/clients/jobs.mjs): a 10-cell notebook with a pandas KeyError in
// cell 4, a plot and a 20 s cell; connect, outline, run all, search,
// fix, rerun, follow the 20 s cell with get_results polls, outline,
// save, export: 14 calls.  Counted: the text of each tool result as the
// client handed it to its model, in characters (code points); images
// are counted apart.  Codex wraps every result in "Wall time: ...
// Output:"; that envelope is shown apart from runtimed's share.
//   target: <= 5,000 characters for the job through each client
// Usage: node bench/economy.mjs [builddir] [--clients claude,codex,sdk]
//        [--json FILE]   (needs "npm ci" in tests/clients; make bench-economy)
// Exits 1 when a job does not run to its end or a total is over the target.

import fs from 'node:fs';
import path from 'node:path';

const TARGET = 5000;
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return null;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const clients = (opt('--clients') || 'claude,codex,sdk').split(',');
const jsonOut = opt('--json');
const B = path.resolve(args[0] || '.');
if (!process.env.RUNTIMED_MCP) {
  process.env.RUNTIMED_MCP = path.join(B, 'runtimed-mcp');
  const daemon = fs.existsSync(path.join(B, 'runtimed', 'runtimed')) ?
    path.join(B, 'runtimed', 'runtimed') : path.join(B, 'runtimed');
  process.env.RUNTIMED_BIN = daemon;
  process.env.RUNTIMED_LIBEXEC_DIR = `${B}:${path.dirname(daemon)}`;
}

const { checkInstalled, runEconomy } = await import('../tests/clients/clients.mjs');
const versions = checkInstalled();

const runs = [];
let failed = false;
for (const c of clients) {
  process.stderr.write(`economy: ${c} ...\n`);
  const run = await runEconomy(c);
  const complete = run.exit.code === 0 && run.results.length === run.steps;
  if (!complete) {
    failed = true;
    process.stderr.write(`economy: ${c} answered ${run.results.length} of ${run.steps} calls, ` +
      `exit ${run.exit.code}: ${(run.exit.stderr || '').slice(-1500)}\n`);
  }
  runs.push(run);
}

const n = (x) => x === null || x === undefined ? '-' : x.toLocaleString('en-US');
const head = ['call', ...runs.map((r) => r.client === 'sdk' ? 'SDK client (`content`)' :
  r.client === 'claude' ? 'Claude Code' : 'Codex')];
const rows = [];
const labels = runs[0].labels;
labels.forEach((l, i) => {
  rows.push([`${i + 1}. \`${l.tool}\`: ${l.label}`, ...runs.map((r) => {
    const x = r.results[i];
    if (!x) return 'not reached';
    const img = x.images.length ? ` + ${x.images.length} image` : '';
    return `${n(x.bodyChars)}${img}`;
  })]);
});
rows.push(['**total** (target 5,000)', ...runs.map((r) => `**${n(r.bodyTotal)}**`)]);
if (runs.some((r) => r.total !== r.bodyTotal))
  rows.push(['the client\'s own envelope ("Wall time: ... Output:")',
    ...runs.map((r) => n(r.total - r.bodyTotal))]);
rows.push(['images the model received', ...runs.map((r) =>
  n(r.results.reduce((a, x) => a + x.images.length, 0)))]);
rows.push(['runtimed\'s tools as shown (characters, tools)', ...runs.map((r) =>
  `${n(r.toolsChars)} (${r.toolsShown?.length ?? 0})`)]);
rows.push(['instructions as shown', ...runs.map((r) => n(r.instructionsChars))]);
rows.push(['start to the first request offering the tools (ms)', ...runs.map((r) =>
  r.client === 'sdk' ? '-' : n(r.firstToolsAt))]);

const md = [`| ${head.join(' | ')} |`, `|---|${head.slice(1).map(() => '---:').join('|')}|`,
  ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
console.log(`economy: ${versions.claude}; codex ${versions.codex}; runtimed-mcp ${process.env.RUNTIMED_MCP}`);
console.log(md);

if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify(runs.map((r) => ({
    client: r.client, total: r.bodyTotal, withEnvelope: r.total, toolsChars: r.toolsChars,
    instructionsChars: r.instructionsChars, firstToolsAt: r.firstToolsAt,
    calls: r.results.map((x) => ({ tool: x.tool, args: x.args, chars: x.bodyChars,
      envelope: x.envelope.length, images: x.images, isError: x.isError, text: x.text })),
  })), null, 1));
}
for (const r of runs) {
  if (r.bodyTotal > TARGET) {
    failed = true;
    process.stderr.write(`economy: ${r.client}: ${r.bodyTotal} characters, over the target of ${TARGET}\n`);
  }
}
process.exit(failed ? 1 : 0);
