// SPDX-License-Identifier: ISC
// jobs.mjs: the realistic job of issue 34, as a script the scripted
// model (model.mjs) or a plain SDK client follows: a 10-cell notebook
// with a pandas KeyError in cell 4, a matplotlib plot and a 20 s cell;
// open it, read the outline, run it all (it stops at the KeyError),
// find and fix the bad key, rerun what the fix made stale, follow the
// 20 s cell with get_results polls, save and export.  Each step takes
// what it needs (the handle, the execution_id) from the text of the
// results before it, as a model would.

import fs from 'node:fs';

export const CELLS = [
  ['md-title', 'markdown', '# Regional sales\nUnits and revenue by region, from the March extract.'],
  ['c-imports', 'code', 'import pandas as pd\nimport matplotlib.pyplot as plt\nplt.rcParams["figure.dpi"] = 72'],
  ['c-load', 'code', 'df = pd.DataFrame({\n    "region": ["north", "south", "east", "west"] * 6,\n    "units": [12, 7, 9, 14, 3, 8, 11, 6, 10, 5, 13, 4] * 2,\n    "price": [2.5, 3.0, 2.75, 3.25] * 6,\n})\ndf.head()'],
  ['c-revenue', 'code', 'df["revenue"] = df["units"] * df["price"]\nprint(len(df), "rows,", df["revenue"].sum(), "total")'],
  ['c-share', 'code', 'share = df.groupby("region")["revenu"].sum() / df["revenue"].sum()\nshare.round(3)'],
  ['md-plot', 'markdown', '## Share by region'],
  ['c-plot', 'code', 'fig, ax = plt.subplots(figsize=(4, 3))\nshare.plot.bar(ax=ax, color="tab:blue")\nax.set_ylabel("share of revenue")\nplt.show()'],
  ['c-fit', 'code', 'import time\nfor step in range(4):\n    print(f"fitting: step {step + 1} of 4", flush=True)\n    time.sleep(5)\nprint("model fitted")'],
  ['c-summary', 'code', 'summary = df.groupby("region").agg(units=("units", "sum"), revenue=("revenue", "sum"))\nsummary'],
  ['md-end', 'markdown', 'Next: send the table to the team.'],
];

export const BAD = 'c-share';     // cell 4: the KeyError
export const PLOT = 'c-plot';
export const SLOW = 'c-fit';      // the 20 s cell

export function writeNotebook(file) {
  const lines = (s) => s.split('\n').map((l, i, a) => i < a.length - 1 ? `${l}\n` : l);
  const nb = {
    cells: CELLS.map(([id, type, src]) => type === 'code' ?
      { cell_type: 'code', execution_count: null, id, metadata: {}, outputs: [], source: lines(src) } :
      { cell_type: 'markdown', id, metadata: {}, source: lines(src) }),
    metadata: {
      kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' },
      language_info: { name: 'python' },
    },
    nbformat: 4,
    nbformat_minor: 5,
  };
  fs.writeFileSync(file, `${JSON.stringify(nb, null, 1)}\n`);
}

// The first match of re's group 1 in text, or a clear failure: a model
// that cannot find the handle in a result cannot go on either.
export function take(text, re, what) {
  const m = re.exec(text || '');
  if (!m) throw new Error(`no ${what} in: ${(text || '').slice(0, 400)}`);
  return m[1];
}

const handleOf = (ctx) => take(ctx.results[0].text, /\b(nbh_[A-Za-z0-9_-]+)/, 'notebook_handle');
const execOf = (r) => take(r.text, /execution_id[ :="]+([A-Za-z0-9_-]+)/, 'execution_id');

// The job: each entry names the call (what the model meant by it, for
// the tables) and builds its arguments from the results so far.
export function economyJob(nbPath, exportPath) {
  const at = (ctx) => ({ notebook_handle: handleOf(ctx) });
  let runFit = null;
  const steps = [
    ['connect_notebook', 'open the notebook', () => ({ path: nbPath })],
    ['inspect_notebook', 'read the outline', (ctx) => ({ ...at(ctx) })],
    ['run_cells', 'run all (stops at the KeyError)', (ctx) => ({ ...at(ctx), all: true, wait_secs: 30 })],
    ['search_cells', 'find the misspelt key', (ctx) => ({ ...at(ctx), query: 'revenu"' })],
    ['edit_cells', 'fix it', (ctx) => ({ ...at(ctx), edits: [{ op: 'replace', cell_id: BAD, old_text: '["revenu"]', new_text: '["revenue"]' }] })],
    ['run_cells', 'rerun the fixed cell and the plot', (ctx) => ({ ...at(ctx), cell_ids: [BAD, PLOT], wait_secs: 30 })],
    // The cell prints every 5 s; the waits end 2.5 s from a print, so
    // each poll sees one new line whatever the jitter.
    ['run_cells', 'start the 20 s cell and the summary', (ctx) => ({ ...at(ctx), cell_ids: [SLOW, 'c-summary'], wait_secs: 2.5 })],
    ['get_results', 'poll', (ctx) => { runFit = execOf(ctx.last); return { ...at(ctx), execution_id: runFit, timeout_secs: 5 }; }],
    ['get_results', 'poll', (ctx) => ({ ...at(ctx), execution_id: runFit, timeout_secs: 5 })],
    ['get_results', 'poll', (ctx) => ({ ...at(ctx), execution_id: runFit, timeout_secs: 5 })],
    ['get_results', 'wait for the end', (ctx) => ({ ...at(ctx), execution_id: runFit, timeout_secs: 30 })],
    ['inspect_notebook', 'check what is stale', (ctx) => ({ ...at(ctx) })],
    ['save_notebook', 'save', (ctx) => ({ ...at(ctx) })],
    ['export_notebook', 'export to markdown', (ctx) => ({ ...at(ctx), format: 'markdown', path: exportPath })],
  ];
  return {
    labels: steps.map(([tool, label]) => ({ tool, label })),
    script: steps.map(([tool, , args]) => (ctx) => ({ tool, args: args(ctx) })),
  };
}

// The edges of issue 34 in one short job: a tool error, the first
// guarded edit after one's own run, and a kernel that dies in a run.
export const EDGE_CELLS = [
  ['c-print', 'code', 'print("before")'],
  ['c-die', 'code', 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)'],
];

export function writeEdgeNotebook(file) {
  const lines = (s) => s.split('\n').map((l, i, a) => i < a.length - 1 ? `${l}\n` : l);
  fs.writeFileSync(file, `${JSON.stringify({
    cells: EDGE_CELLS.map(([id, , src]) =>
      ({ cell_type: 'code', execution_count: null, id, metadata: {}, outputs: [], source: lines(src) })),
    metadata: { kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' },
      language_info: { name: 'python' } },
    nbformat: 4, nbformat_minor: 5,
  }, null, 1)}\n`);
}

export function edgesJob(nbPath) {
  const at = (ctx) => ({ notebook_handle: handleOf(ctx) });
  // A cell's version as a result shows it ("v1a2b3c4d"), given back as
  // the instructions say: as an edit's expect_version.
  const shown = (r) => take(r.text, /c-print\b[^\n]*?\b(v[0-9a-f]{8})\b/, 'c-print version');
  const steps = [
    ['connect_notebook', 'open', () => ({ path: nbPath })],
    ['inspect_notebook', 'a cell that is not there', (ctx) => ({ ...at(ctx), cell_ids: ['no-such-cell'] })],
    ['edit_cells', 'edit, guarded by the version the outline shows', (ctx) => ({ ...at(ctx),
      edits: [{ op: 'edit', cell_id: 'c-print', source: 'print("edited")', expect_version: shown(ctx.results[0]) }] })],
    ['run_cells', 'run it', (ctx) => ({ ...at(ctx), cell_ids: ['c-print'], wait_secs: 30 })],
    ['edit_cells', 'edit again, guarded by the version from before the run', (ctx) => ({ ...at(ctx),
      edits: [{ op: 'edit', cell_id: 'c-print', source: 'print("after")', expect_version: shown(ctx.results[2]) }] })],
    ['run_cells', 'a cell that kills its kernel', (ctx) => ({ ...at(ctx), cell_ids: ['c-die'], wait_secs: 30 })],
  ];
  return {
    labels: steps.map(([tool, label]) => ({ tool, label })),
    script: steps.map(([tool, , args]) => (ctx) => ({ tool, args: args(ctx) })),
  };
}
