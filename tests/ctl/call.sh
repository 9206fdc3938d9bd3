#!/bin/sh
# SPDX-License-Identifier: ISC
# call.sh: runtimectl call runs MCP tools from the shell through a real
# worker and daemon: the catalog (all 29 tools), a read (inspect_notebook),
# an edit (edit_cells), a run (run_cells on a python3 kernel; skipped
# with 77 only when none is installed), text and --json, path= attaching,
# key=value parsing, a tool error's exit code and text, save_notebook
# path= (save) and notebook= path= (save-as), create_notebook path= leaving
# a file, and a raising cell exiting 1.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

n=$("$CTL" call --list | wc -l)
[ "$n" = 29 ] || fail "call --list names $n tools: $("$CTL" call --list)"
"$CTL" call --list | grep -qx inspect_notebook || fail "no inspect_notebook"
"$CTL" --json call --list | jq_py 'len(j["tools"])' | grep -qx 28 ||
    fail "call --list --json"
"$CTL" call no_such_tool >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "an unknown tool exits $rc, not 2"
"$CTL" call list_kernels 'a b' >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "an argument that is not key=value exits $rc"
ok "call --list: 29 tools; unknown tool and bad argument exit 2"

start_daemon --warm-pool 0
nb=$T/nb.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_markdown_cell("# title"),
    nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY

# A read, text and JSON.
out=$("$CTL" call inspect_notebook path="$nb") || fail "inspect: $out"
echo "$out" | grep -q "code v[0-9a-f]\{8\}: x = 6 \* 7" ||
    fail "inspect text lacks the cell and its version: $out"
"$CTL" --json call inspect_notebook path="$nb" >"$T/inspect.json" ||
    fail "inspect --json"
python3 - "$T/inspect.json" "$nb" <<'PY' || fail "inspect --json: $(cat "$T/inspect.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["path"] == sys.argv[2], j
assert [c["cell_type"] for c in j["cells"]] == ["markdown", "code"], j
PY
"$CTL" --json call inspect_notebook --json "{\"path\": \"$nb\", \"count\": 1}" |
    jq_py 'len(j["cells"])' | grep -qx 1 || fail "--json ARGS not used"
ok "call inspect_notebook path=: text and --json; --json ARGS"

# An edit: the file changes on disk (autosave) and in the room.
"$CTL" call edit_cells path="$nb" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"y = x + 1\nprint(y)"}]' \
    >"$T/edit.out" || fail "edit_cells: $(cat "$T/edit.out")"
grep -q "applied 1 edit" "$T/edit.out" || fail "edit said: $(cat "$T/edit.out")"
"$CTL" --json call inspect_notebook path="$nb" view=source |
    jq_py 'j["cells"][2]["source"]' | grep -q "y = x + 1" ||
    fail "the edit is not in the notebook"
"$CTL" --json call save_notebook notebook="$nb" >/dev/null ||
    fail "save_notebook notebook="
/usr/bin/python3 -c 'import nbformat, sys; nb = nbformat.read(sys.argv[1], 4); assert nb.cells[2].source == "y = x + 1\nprint(y)", nb.cells' "$nb" ||
    fail "the edit was not saved to $nb"
ok "call edit_cells path=: applied, saved (save_notebook notebook=)"

# save_notebook path= names the notebook, as for every tool (issue 35);
# its own save-as path is path= once notebook= names the notebook.
"$CTL" call edit_cells path="$nb" \
    'edits=[{"op":"insert","after":"BOTTOM","cell_type":"markdown","source":"z = 1"}]' >/dev/null ||
    fail "second edit"
out=$("$CTL" call save_notebook path="$nb" 2>&1) ||
    fail "save_notebook path=: $out"
echo "$out" | grep -q "^saved $nb$" || fail "save_notebook path= said: $out"
/usr/bin/python3 -c 'import nbformat, sys; nb = nbformat.read(sys.argv[1], 4); assert nb.cells[-1].source == "z = 1", nb.cells' "$nb" ||
    fail "save_notebook path= did not save $nb"
out=$("$CTL" call save_notebook notebook="$nb" path="$T/copy.ipynb" 2>&1) ||
    fail "save-as: $out"
[ -f "$T/copy.ipynb" ] || fail "save-as wrote no $T/copy.ipynb: $out"
"$CTL" call save_notebook notebook="$T/copy.ipynb" path="$nb" \
    >/dev/null 2>"$T/exists.err" && fail "save-as over another file succeeded"
grep -q "file_exists: .* exists; save with force to overwrite" "$T/exists.err" ||
    fail "save-as over another file: $(cat "$T/exists.err")"
ok "call save_notebook path=: saved; notebook= path=: save-as"

# create_notebook path=: the file is there when the call returns.
out=$("$CTL" call create_notebook path="$T/new.ipynb" 2>&1) ||
    fail "create_notebook: $out"
/usr/bin/python3 -c 'import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], 4))' "$T/new.ipynb" ||
    fail "create_notebook path= left no valid $T/new.ipynb: $out"
"$CTL" call create_notebook path="$T/new.ipynb" >/dev/null 2>&1 &&
    fail "create_notebook over an existing file succeeded"
out=$("$CTL" call create_notebook 2>&1 >/dev/null) || fail "untitled: $out"
echo "$out" | grep -q "save_notebook notebook_id=.* path=FILE" ||
    fail "an untitled create says not how to save it: $out"
ok "call create_notebook path=: a valid file at once; untitled says how to save"

# A tool error: non-zero, the error text on stderr.
"$CTL" call edit_cells path="$nb" 'edits=[{"op":"delete","cell_id":"nosuch"}]' \
    >"$T/err.out" 2>"$T/err.err"; rc=$?
[ $rc = 1 ] || fail "a tool error exits $rc"
[ -s "$T/err.err" ] && grep -q "cell_not_found" "$T/err.err" ||
    fail "the tool's error text: $(cat "$T/err.err")"
"$CTL" call inspect_notebook path="$T/missing.ipynb" 2>"$T/err.err"; rc=$?
[ $rc = 1 ] && grep -q "no such file" "$T/err.err" ||
    fail "a missing notebook: rc $rc, $(cat "$T/err.err")"
ok "a tool error exits 1 with its text: $(head -1 "$T/err.err")"

# key=value: JSON when it parses, else a string.
"$CTL" --json call search_cells path="$nb" query=print |
    jq_py 'len(j["matches"])' | grep -qx 2 || fail "search query=print"
"$CTL" --json call search_cells path="$nb" query=42 regex=false >/dev/null ||
    fail "query=42 (a number where a string is wanted)"
ok "key=value parsing"

# Every tool answers from the shell (its result, or its own error).
for t in $("$CTL" call --list); do
	case $t in
	disconnect_notebook|reconnect|list_kernels|list_notebooks)
		"$CTL" call "$t" >/dev/null 2>&1 ;;
	*)	"$CTL" call "$t" path="$nb" >/dev/null 2>&1 ;;
	esac
	rc=$?
	[ $rc = 0 ] || [ $rc = 1 ] || fail "call $t exits $rc"
done
ok "all 29 tools answer through runtimectl call"

. "${srcdir:-.}/tests/lib/skip.sh"
have_kernel python3 || skip_missing "no python3 kernel for run_cells"
out=$("$CTL" call run_cells path="$nb" all=true wait_secs=50) ||
    fail "run_cells: $out"
# The last cell in full, the one before summarised by its first line
# (docs/decisions/015-result-shaping.md).
echo "$out" | grep -q ": 42$" && echo "$out" | grep -q "^43$" ||
    fail "run_cells text lacks 42 and 43: $out"
"$CTL" --json call run_cells path="$nb" cell_ids='[1]' wait_secs=50 \
    >"$T/run.json" || fail "run_cells --json"
python3 - "$T/run.json" <<'PY' || fail "run --json: $(cat "$T/run.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "done", j
c, = j["cells"]
assert c["status"] == "ok" and c["outputs"][0]["text"] == "42\n", c
PY
ok "call run_cells on python3: 42 and 43, text and --json"
"$CTL" call edit_cells path="$nb" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"1/0"}]' >/dev/null ||
    fail "insert a raising cell"
"$CTL" call run_cells path="$nb" all=true wait_secs=50 >"$T/raise.out"; rc=$?
[ $rc = 1 ] || fail "a raising cell exits $rc: $(cat "$T/raise.out")"
grep -q ZeroDivisionError "$T/raise.out" || fail "raise: $(cat "$T/raise.out")"
"$CTL" --json call run_cells path="$nb" all=true wait_secs=50 >/dev/null; rc=$?
[ $rc = 1 ] || fail "a raising cell exits $rc with --json"
ok "call run_cells: a cell that raises exits 1, its traceback on stdout"
"$CTL" --json rooms | jq_py 'j["rooms"][0]["peers"]' | grep -qx 0 ||
    fail "a call left its notebook attached: $("$CTL" --json rooms)"
ok "every call released its notebook"
