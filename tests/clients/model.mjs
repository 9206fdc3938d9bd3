// SPDX-License-Identifier: ISC
// model.mjs: a scripted model on 127.0.0.1 that a real client CLI talks
// to instead of its vendor's API: the Anthropic Messages API
// (POST /v1/messages, SSE) for Claude Code and the OpenAI Responses API
// (POST /v1/responses, SSE) for Codex.  For each request it reads the
// conversation, records what the client handed the model (the
// tool_result / function_call_output of every call, the tool list, the
// instructions) and answers with the next step of its script: a call of
// one of runtimed's tools, or a final text.  It is also the clients'
// HTTP(S) proxy: a request for any other host is refused and recorded,
// so a test can say that nothing left the machine.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

// What a model reads of a tool's result, in one shape for every client:
// text parts and image parts in order.  The characters counted are
// those of the text parts (code points); images are counted apart.
export function chars(s) {
  let n = 0;
  for (const _ of s) n++;  // code points, not UTF-16 units
  return n;
}

function imagePart(mediaType, data) {
  return { type: 'image', mediaType, bytes: data.length };
}

// Claude: a tool_result's content is a string or an array of blocks.
function anthropicParts(content) {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return (content || []).map((b) => {
    if (b.type === 'text') return { type: 'text', text: b.text };
    if (b.type === 'image')
      return imagePart(b.source?.media_type, b.source?.data || b.source?.url || '');
    return { type: b.type, raw: JSON.stringify(b) };
  });
}

// Codex: a function_call_output's output is a string or an array of
// input_text / input_image items.
function openaiParts(output) {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  if (output && !Array.isArray(output) && typeof output.content !== 'undefined')
    return openaiParts(output.content);
  return (output || []).map((b) => {
    if (b.type === 'input_text' || b.type === 'output_text') return { type: 'text', text: b.text };
    if (b.type === 'input_image') {
      const url = b.image_url || '';
      const m = /^data:([^;,]+)[;,]/.exec(url);
      return imagePart(m ? m[1] : null, url);
    }
    return { type: b.type, raw: JSON.stringify(b) };
  });
}

// Every text the client put in a Messages request: system and messages.
function textsOf(b) {
  const out = [];
  const walk = (c) => {
    if (typeof c === 'string') out.push(c);
    else if (Array.isArray(c)) c.forEach(walk);
    else if (c && typeof c === 'object') {
      if (typeof c.text === 'string') out.push(c.text);
      if (c.content !== undefined && c.type !== 'tool_result') walk(c.content);
    }
  };
  walk(b.system);
  walk(b.messages);
  return out.join('\n');
}

// A tool as the model is shown it: its name (with the client's prefix),
// description and schema; not the fields that only steer the API
// (defer_loading, strict, cache_control, the item type).
function shownTool(t) {
  const { defer_loading: _d, strict: _s, cache_control: _c, type: _t, ...shown } = t;
  return { name: t.name, json: JSON.stringify(shown) };
}

export function partsText(parts) {
  return parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
}

// The script: an array of steps, each a function of the results so far
// (ctx.results[i] = {tool, args, text, parts, isError}) that returns
// {tool, args} or {text} (the final answer, which ends the script).
// One call per model turn, as a careful model makes them.
export class ScriptedModel {
  constructor(script, { server = 'runtimed', dumpDir = null } = {}) {
    this.script = script;
    this.dumpDir = dumpDir;
    this.server = server;
    this.t0 = Date.now();
    this.requests = [];   // every request: {t, api, main, url, bytes, tools}
    this.results = [];    // one per answered step, in order
    this.searches = [];   // the clients' own tool-search results
    this.issued = new Map();  // call id -> {step, tool, args} | {search}
    this.proxied = [];    // hosts a client tried to reach through us
    this.toolsShown = null;     // runtimed's tools as the client shows them
    this.instructions = null;   // runtimed's instructions as shown
    this.firstToolsAt = null;   // ms from t0 to the first request naming our tools
    this.errors = [];
    this.dumped = 0;
  }

  prefixFor(api) {
    return api === 'anthropic' ? `mcp__${this.server}__` : `mcp__${this.server}`;
  }

  async start() {
    this.http = http.createServer((req, res) => this.onRequest(req, res));
    this.http.on('connect', (req, sock) => {
      this.proxied.push(req.url);
      sock.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    });
    await new Promise((ok) => this.http.listen(0, '127.0.0.1', ok));
    this.port = this.http.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  close() {
    this.http.closeAllConnections?.();
    return new Promise((ok) => this.http.close(ok));
  }

  onRequest(req, res) {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      if (this.dumpDir && req.method === 'POST')
        fs.writeFileSync(path.join(this.dumpDir, `request-${String(++this.dumped).padStart(3, '0')}.json`),
          `${req.url}\n${body}`);
      try {
        this.route(req, res, body);
      } catch (e) {
        this.errors.push(`${req.url}: ${e.stack}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(e) } }));
      }
    });
  }

  route(req, res, body) {
    // A proxied plain-HTTP request names a full URL: refuse it.
    if (/^https?:\/\//.test(req.url)) {
      this.proxied.push(req.url);
      res.writeHead(403);
      res.end();
      return;
    }
    const url = req.url.split('?')[0];
    if (req.method === 'POST' && url === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: Math.ceil(body.length / 4) }));
      return;
    }
    if (req.method === 'POST' && url === '/v1/messages')
      return this.anthropic(res, JSON.parse(body), body.length);
    if (req.method === 'POST' && url === '/v1/responses')
      return this.openai(res, JSON.parse(body), body.length);
    this.requests.push({ t: Date.now() - this.t0, url, method: req.method, main: false });
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${url} here` } }));
  }

  // The next step of the script given the calls this conversation has
  // answered: steps run in order, one per turn.
  nextStep(answered) {
    const done = answered.filter((a) => a.step !== undefined).length;
    if (done >= this.script.length) return { text: 'done' };
    return { index: done, ...this.script[done]({ results: this.results, last: this.results[this.results.length - 1] }) };
  }

  record(id, parts, isError) {
    const what = this.issued.get(id);
    if (!what) return null;
    if (what.search) {
      if (!this.searches.some((s) => s.id === id))
        this.searches.push({ id, parts });
      return what;
    }
    if (!this.results.some((r) => r.id === id)) {
      this.results.push({
        id, step: what.step, tool: what.tool, args: what.args, parts,
        text: partsText(parts), isError: !!isError,
        t: Date.now() - this.t0,
      });
    }
    return what;
  }

  // ---- Anthropic Messages API (Claude Code) ----

  anthropic(res, b, bytes) {
    const names = (b.tools || []).map((t) => t.name);
    const main = names.includes('ToolSearch') || names.some((n) => n.startsWith('mcp__'));
    const entry = { t: Date.now() - this.t0, api: 'anthropic', main, bytes, model: b.model };
    this.requests.push(entry);
    if (!main) return this.anthropicReply(res, b, { text: 'ok' });

    const prefix = this.prefixFor('anthropic');
    const ours = (b.tools || []).filter((t) => t.name.startsWith(prefix));
    // Tools Claude Code defers are named in a system text ("available via
    // ToolSearch") and loaded by the model with ToolSearch.
    const all = JSON.stringify(b.system || '') + JSON.stringify(b.messages || []);
    const deferred = [...new Set(all.match(new RegExp(`${prefix}[a-z_]+`, 'g')) || [])];
    entry.tools = ours.map((t) => t.name);
    if ((ours.length || deferred.length) && this.firstToolsAt === null)
      this.firstToolsAt = entry.t;
    if (ours.length && (!this.toolsShown || ours.length > this.toolsShown.length))
      this.toolsShown = ours.map(shownTool);
    if (this.instructions === null) {
      // Claude Code's "# MCP Server Instructions" section: a "## name"
      // heading a server, up to the next heading or section.
      const m = new RegExp(`\\n## ${this.server}\\n([\\s\\S]*?)(?=\\n\\n(?:The following |## |# )|\\n## |$)`).exec(textsOf(b));
      if (m) this.instructions = m[1];
    }
    entry.system = JSON.stringify(b.system || '').length;

    const answered = [];
    for (const msg of b.messages || []) {
      if (msg.role !== 'user' || !Array.isArray(msg.content)) continue;
      for (const blk of msg.content) {
        if (blk.type !== 'tool_result') continue;
        const w = this.record(blk.tool_use_id, anthropicParts(blk.content), blk.is_error);
        if (w) answered.push(w);
      }
    }
    const next = this.nextStep(answered);
    if (next.text !== undefined) return this.anthropicReply(res, b, { text: next.text });
    const name = prefix + next.tool;
    if (!names.includes(name)) {
      // Load runtimed's tools the way a model must: ToolSearch select:.
      if (!names.includes('ToolSearch'))
        throw new Error(`${name} is neither offered nor deferred (tools: ${names})`);
      const id = `toolu_search_${next.index}_${answered.length}`;
      this.issued.set(id, { search: true });
      return this.anthropicReply(res, b, {
        tool: { id, name: 'ToolSearch', input: { query: `select:${deferred.join(',')}`, max_results: deferred.length } },
      });
    }
    const id = `toolu_step_${next.index}`;
    this.issued.set(id, { step: next.index, tool: next.tool, args: next.args });
    return this.anthropicReply(res, b, { tool: { id, name, input: next.args } });
  }

  anthropicReply(res, b, { text, tool }) {
    const msgId = `msg_${this.requests.length}`;
    const content = text !== undefined ? [{ type: 'text', text }] :
      [{ type: 'tool_use', id: tool.id, name: tool.name, input: tool.input }];
    const stop = text !== undefined ? 'end_turn' : 'tool_use';
    const usage = { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!b.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: msgId, type: 'message', role: 'assistant', model: b.model,
        content, stop_reason: stop, stop_sequence: null, usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', { message: { id: msgId, type: 'message', role: 'assistant', model: b.model,
      content: [], stop_reason: null, stop_sequence: null, usage } });
    if (text !== undefined) {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
    } else {
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } });
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(tool.input) } });
    }
    ev('content_block_stop', { index: 0 });
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
    ev('message_stop', {});
    res.end();
  }

  // ---- OpenAI Responses API (Codex) ----

  openai(res, b, bytes) {
    const tools = b.tools || [];
    const main = tools.some((t) => t.name === 'exec_command' || t.type === 'tool_search' ||
      (t.type === 'namespace'));
    const entry = { t: Date.now() - this.t0, api: 'openai', main, bytes, model: b.model };
    this.requests.push(entry);
    if (!main) return this.openaiReply(res, b, { text: 'ok' });

    const ns = this.prefixFor('openai');
    const input = b.input || [];
    // Our tools, offered up front (a namespace or flat mcp__ names) or
    // returned by a tool_search.
    let ours = [];
    for (const t of tools) {
      if (t.type === 'namespace' && t.name === ns) ours = t.tools || [];
      else if (t.type === 'function' && t.name?.startsWith(`${ns}__`)) ours.push(t);
    }
    let searched = null;
    for (const it of input) {
      if (it.type === 'tool_search_output') {
        for (const t of it.tools || []) {
          if (t.type === 'namespace' && t.name === ns) {
            searched = t;
            ours = ours.concat((t.tools || []).filter((x) => !ours.some((o) => o.name === x.name)));
          }
        }
        this.record(it.call_id, [{ type: 'text', text: JSON.stringify(it.tools) }], false);
      }
    }
    const text = JSON.stringify(input);
    const named = text.includes(`${ns}:`) || text.includes(`${ns}__`) || ours.length > 0;
    entry.tools = ours.map((t) => t.name);
    if (named && this.firstToolsAt === null) this.firstToolsAt = entry.t;
    if (ours.length && (!this.toolsShown || ours.length > this.toolsShown.length))
      this.toolsShown = ours.map(shownTool);
    if (searched && this.instructions === null) this.instructions = searched.description || '';
    entry.system = JSON.stringify(b.instructions || '').length;

    const answered = [];
    for (const it of input) {
      if (it.type !== 'function_call_output') continue;
      const w = this.record(it.call_id, openaiParts(it.output), false);
      if (w) answered.push(w);
    }
    const next = this.nextStep(answered);
    if (next.text !== undefined) return this.openaiReply(res, b, { text: next.text });
    const flat = `${ns}__${next.tool}`;
    const offered = ours.find((t) => t.name === next.tool || t.name === flat);
    if (!offered) {
      if (!tools.some((t) => t.type === 'tool_search'))
        throw new Error(`${next.tool} is neither offered nor searchable`);
      const id = `call_search_${next.index}_${answered.length}`;
      this.issued.set(id, { search: true });
      return this.openaiReply(res, b, {
        item: { type: 'tool_search_call', call_id: id, execution: 'client', status: 'completed',
          arguments: { query: `${this.server} notebook cells run results save export`, limit: 100 } },
      });
    }
    const id = `call_step_${next.index}`;
    this.issued.set(id, { step: next.index, tool: next.tool, args: next.args });
    const item = { type: 'function_call', call_id: id, status: 'completed',
      arguments: JSON.stringify(next.args) };
    if (offered.name === flat) item.name = flat;
    else Object.assign(item, { namespace: ns, name: next.tool });
    return this.openaiReply(res, b, { item });
  }

  openaiReply(res, b, { text, item }) {
    const n = this.requests.length;
    if (text !== undefined)
      item = { type: 'message', role: 'assistant', status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }] };
    item = { id: `item_${n}`, ...item };
    const resp = { id: `resp_${n}`, object: 'response', created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress', model: b.model, output: [] };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('response.created', { response: resp });
    ev('response.output_item.added', { output_index: 0, item });
    ev('response.output_item.done', { output_index: 0, item });
    ev('response.completed', { response: { ...resp, status: 'completed', output: [item],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 } } });
    res.end();
  }
}
