// SPDX-License-Identifier: ISC
// clients.test.mjs: what the model reads through the real clients
// (issue 34).  The realistic job (jobs.mjs) runs through Claude Code
// (claude -p), Codex (codex exec) and a plain MCP SDK client reading
// `content`; each assertion is on what the client handed its model:
// the tool_result / function_call_output text and image blocks, the
// tool list and the instructions as the client shows them.
// RUNTIMED_MCP names the proxy under test.  Run: npm test (tests/clients).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { checkInstalled, makeWorld, mcpBinary, removeWorld, runEconomy, runJob, stopWorld } from './clients.mjs';
import { BAD, CELLS, PLOT } from './jobs.mjs';

// The budgets of issue 34.
const JOB_BUDGET = 5000;        // characters of results, the whole job
const TOOLS_BUDGET = 12000;     // runtimed's tools as the client shows them
const INSTRUCTIONS_BUDGET = 2500;
const FIRST_TOOLS_MS = 10000;   // start to the first request offering them
const POLL_BUDGET = 400;        // a poll with little new

const TIMEOUT = 300000;

test('the pinned client CLIs are installed', () => {
  const v = checkInstalled();
  assert.match(v.claude, /2\.1\.332/);
  assert.match(v.codex, /0\.171\.0/);
});

const firstLine = (r) => r.body.split('\n')[0];
const byTool = (run, tool) => run.results.filter((r) => r.tool === tool);
const ANSI = /\x1b\[|\\u001b\[|\\x1b\[/;

for (const client of ['claude', 'codex', 'sdk']) {
  describe(`through ${client}`, { timeout: TIMEOUT }, () => {
    let run;
    let keep = false;
    before(async () => {
      run = await runEconomy(client, { keep: true });
    });
    after(() => {
      if (!run) return;
      console.log(`# ${client}: ${run.bodyTotal} characters of results (${run.total} with the client's envelope), ` +
        `tools ${run.toolsChars} (${run.toolsShown?.length}), instructions ${run.instructionsChars}, ` +
        `first tools at ${run.firstToolsAt} ms; per call: ${run.results.map((r) => r.bodyChars).join(' ')}`);
      if (keep) console.log(`# ${client}: kept ${run.world.dir} (requests, client log)`);
      else removeWorld(run.world);
    });
    const check = (name, fn) => test(name, () => {
      try {
        fn();
      } catch (e) {
        keep = true;
        throw e;
      }
    });

    check('the job runs to its end: every call answered, the fix saved, the export written', () => {
      assert.equal(run.exit.code, 0, `${client} exited ${run.exit.code}: ${run.exit.stderr?.slice(-2000)}`);
      assert.deepEqual(run.modelErrors, []);
      assert.equal(run.results.length, run.steps,
        `answered ${run.results.length} of ${run.steps} calls`);
      const saved = JSON.parse(fs.readFileSync(run.nbPath, 'utf8'));
      const src = saved.cells.find((c) => c.id === BAD).source.join('');
      assert.match(src, /\["revenue"\]\.sum\(\) \//, 'the fix is in the saved file');
      assert.ok(fs.statSync(run.exportPath).size > 0, 'the export exists');
    });

    if (client !== 'sdk') {
      check('nothing but the loopback: no request for another host', () => {
        assert.deepEqual(run.proxied, []);
      });
    }

    check('a run result names its outcome on its first line', () => {
      const want = { 2: 'error', 5: 'done', 6: 'running' };
      for (const [i, status] of Object.entries(want)) {
        const r = run.results[i];
        assert.ok(!firstLine(r).startsWith('{'), `step ${i} (${r.tool}) reads as JSON: ${firstLine(r).slice(0, 120)}`);
        assert.match(firstLine(r), new RegExp(`\\b${status}\\b`), `step ${i}: ${firstLine(r).slice(0, 200)}`);
      }
      const last = run.results[10];
      assert.match(firstLine(last), /\bdone\b/, `the last poll: ${firstLine(last).slice(0, 200)}`);
    });

    check('the failing cell shows ename: evalue and the user\'s line', () => {
      const r = run.results[2];
      assert.ok(r.body.includes("KeyError: 'Column not found: revenu'"), r.body.slice(0, 600));
      assert.ok(r.body.includes('share = df.groupby("region")["revenu"].sum()'), r.body.slice(0, 600));
    });

    check('library frames are folded: no pandas-internal source line', () => {
      const r = run.results[2];
      assert.ok(!r.body.includes('Indexing with multiple keys'), 'a pandas-internal line reached the model');
    });

    check('the inspect_notebook outline has each cell\'s source first line', () => {
      const r = run.results[1];
      for (const [id, , src] of CELLS) {
        const head = src.split('\n')[0].slice(0, 40);
        assert.ok(r.body.includes(head), `outline lacks cell ${id}'s "${head}": ${r.body.slice(0, 300)}`);
      }
    });

    check('the plot reaches the model as an image block', () => {
      const r = run.results[5];
      const img = r.images.find((p) => p.mediaType === 'image/png');
      assert.ok(img, `run of ${PLOT}: parts ${JSON.stringify(r.parts.map((p) => p.type))}: ${r.body.slice(0, 300)}`);
      assert.ok(img.bytes > 1000, `image of ${img.bytes} bytes`);
    });

    check('no ANSI escapes and no text/html twin reach the model', () => {
      for (const r of run.results) {
        assert.ok(!ANSI.test(r.text), `step ${r.step} (${r.tool}) has ANSI escapes`);
        assert.ok(!/text\/html|<table|<div/.test(r.text), `step ${r.step} (${r.tool}) has an HTML twin`);
      }
    });

    check('polls return what is new: no output line read twice', () => {
      for (const i of [7, 8, 9]) {
        const r = run.results[i];
        const seen = run.results.slice(6, i).flatMap((p) => p.body.split('\n'))
          .filter((l) => /^fitting: step/.test(l));
        for (const l of seen)
          assert.ok(!r.body.split('\n').includes(l), `poll ${i} repeats "${l}"`);
        assert.ok(r.bodyChars <= POLL_BUDGET, `poll ${i}: ${r.bodyChars} characters`);
      }
    });

    check(`the job costs at most ${JOB_BUDGET} characters of results`, () => {
      const per = run.results.map((r) => `${r.tool} ${r.bodyChars}`).join(', ');
      assert.ok(run.bodyTotal <= JOB_BUDGET, `${run.bodyTotal} characters (${per})`);
    });

    check(`runtimed's tools as shown take at most ${TOOLS_BUDGET} characters`, () => {
      assert.ok(run.toolsShown && run.toolsShown.length >= 25, `tools shown: ${run.toolsShown?.length}`);
      assert.ok(run.toolsChars <= TOOLS_BUDGET, `${run.toolsChars} characters in ${run.toolsShown.length} tools`);
    });

    check(`the instructions as shown take at most ${INSTRUCTIONS_BUDGET} characters`, () => {
      assert.ok(run.instructionsChars > 100, `instructions not found (${run.instructionsChars})`);
      assert.ok(run.instructionsChars <= INSTRUCTIONS_BUDGET, `${run.instructionsChars} characters`);
    });

    if (client === 'claude') {
      check(`Claude Code offers runtimed's tools within ${FIRST_TOOLS_MS / 1000} s of its start`, () => {
        assert.ok(run.firstToolsAt !== null, 'no request offered them');
        assert.ok(run.firstToolsAt < FIRST_TOOLS_MS, `first request with them at ${run.firstToolsAt} ms`);
      });
    }
  });
}

// The edges of issue 34 (jobs.mjs edgesJob): a tool error, the first
// guarded edit after one's own run, a kernel that dies in a run.
for (const client of ['claude', 'codex', 'sdk']) {
  describe(`edges through ${client}`, { timeout: TIMEOUT }, () => {
    let run;
    let keep = false;
    before(async () => {
      run = await runJob(client, 'edges', { keep: true });
    });
    after(() => {
      if (!run) return;
      if (keep) console.log(`# ${client} edges: kept ${run.world.dir} (requests, client log)`);
      else removeWorld(run.world);
    });
    const check = (name, fn) => test(name, () => {
      try {
        fn();
      } catch (e) {
        keep = true;
        throw e;
      }
    });

    check('the edges job runs to its end', () => {
      assert.equal(run.exit.code, 0, `${client} exited ${run.exit.code}: ${run.exit.stderr?.slice(-2000)}`);
      assert.deepEqual(run.modelErrors, []);
      assert.equal(run.results.length, run.steps, `answered ${run.results.length} of ${run.steps} calls`);
    });

    check('a tool error reaches the model as "code: message" on its first line', () => {
      const r = run.results[1];
      assert.match(firstLine(r), /^cell_not_found: /, r.body.slice(0, 300));
      // Codex's function_call_output has no error flag to carry.
      if (client !== 'codex') assert.equal(r.isError, true);
    });

    check('an edit guarded by the version as a result shows it ("v1a2b3c4d") succeeds', () => {
      const r = run.results[2];
      assert.ok(!/^edit_conflict/.test(firstLine(r)), r.body.slice(0, 400));
      assert.equal(r.isError, false);
    });

    check('the first guarded edit after one\'s own run succeeds (expect_version guards the source)', () => {
      const r = run.results[4];
      assert.ok(!/^edit_conflict/.test(firstLine(r)), r.body.slice(0, 400));
      assert.equal(r.isError, false);
    });

    check('a kernel death says why and what next in the run result', () => {
      const r = run.results[5];
      assert.match(firstLine(r), /\bkernel_died\b/, r.body.slice(0, 300));
      assert.match(r.body, /restart_kernel/, r.body.slice(0, 600));
      assert.match(r.body, /signal|SIGKILL|killed|exit/i, r.body.slice(0, 600));
    });
  });
}

// Structured results are for the clients that ask (issue 34): a client
// that declares the capability gets structuredContent, one that does
// not gets content alone.
describe('structuredContent on request', { timeout: 120000 }, () => {
  const world = makeWorld('structured');
  after(() => { stopWorld(world); removeWorld(world); });
  const listWith = async (capabilities) => {
    const transport = new StdioClientTransport({ command: mcpBinary(), args: [], env: world.mcpEnv, stderr: 'pipe' });
    const client = new Client({ name: 'runtimed-clients-structured', version: '0.1.0' }, { capabilities });
    try {
      await client.connect(transport, { timeout: 60000 });
      return await client.callTool({ name: 'list_notebooks', arguments: {} }, undefined, { timeout: 60000 });
    } finally {
      await client.close().catch(() => {});
    }
  };
  test('without the capability: content only', async () => {
    const r = await listWith({});
    assert.ok(Array.isArray(r.content) && r.content[0].type === 'text');
    assert.equal(r.structuredContent, undefined, JSON.stringify(r.structuredContent));
  });
  test('with experimental io.runtimed/structured: structuredContent too', async () => {
    const r = await listWith({ experimental: { 'io.runtimed/structured': {} } });
    assert.equal(typeof r.structuredContent, 'object');
    assert.ok(Array.isArray(r.structuredContent.notebooks));
  });
});
