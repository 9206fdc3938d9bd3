#!/bin/sh
# SPDX-License-Identifier: ISC
# facts.sh: a notebook runtimed creates records its kernel as Jupyter
# does (docs/decisions/018).  Saved before any run it names its
# kernelspec (from kernel.json); after a run on a real python3 kernel,
# metadata.language_info is the kernel's kernel_info_reply language_info
# (name python, its version, mimetype, file_extension, ...), the same
# get_kernel_info reports.  Files that exist keep their metadata as it
# was, through a connect, a run and a save: one with its own kernelspec
# and language_info, one with none at all.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
have_kernel python3 || skip_missing "no python3 kernelspec"
export RUNTIMED_AUTOSAVE=0

mkdir "$T/nb"
dir=$(cd "$T/nb" && pwd -P)
start_daemon --warm-pool 0

# metadata of notebook $1 as sorted JSON.
meta() {
	/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["metadata"], sort_keys=True))' "$1"
}

new=$dir/new.ipynb
"$CTL" call create_notebook path="$new" >"$T/create.out" ||
    fail "create: $(cat "$T/create.out")"
"$CTL" call save_notebook notebook="$new" >/dev/null || fail "save before a run"
meta "$new" >"$T/m0"
/usr/bin/python3 - "$T/m0" <<'PY' || fail "saved before a run: $(cat "$T/m0")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["kernelspec"]["name"] == "python3", m
assert m["kernelspec"]["language"] == "python", m
assert m["kernelspec"]["display_name"], m
PY
ok "a new notebook saved before any run names its kernelspec: $(cat "$T/m0")"

"$CTL" call edit_cells path="$new" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"1+1"}]' >/dev/null ||
    fail "insert"
"$CTL" --json call run_cells path="$new" all=true wait_secs=30 >"$T/run.json" ||
    fail "run: $(cat "$T/run.json")"
"$CTL" --json call get_kernel_info path="$new" >"$T/info.json" ||
    fail "get_kernel_info"
"$CTL" call save_notebook notebook="$new" >/dev/null || fail "save after a run"
/usr/bin/python3 - "$new" "$T/info.json" <<'PY' || fail "after a run: $(meta "$new")"
import json, nbformat, sys
nb = nbformat.read(sys.argv[1], 4)
nbformat.validate(nb)
li = json.load(open(sys.argv[1]))["metadata"]["language_info"]
info = json.load(open(sys.argv[2]))
assert li == info["language_info"], (li, info["language_info"])
assert li["name"] == "python", li
for k in ("version", "mimetype", "file_extension", "pygments_lexer",
        "codemirror_mode", "nbconvert_exporter"):
    assert k in li, (k, li)
assert li["mimetype"] == "text/x-python" and li["file_extension"] == ".py", li
ks = json.load(open(sys.argv[1]))["metadata"]["kernelspec"]
assert ks["name"] == "python3" and ks["language"] == "python", ks
PY
ok "after a run: language_info from the kernel: $(meta "$new")"

# Existing files: their metadata as it was, through connect, run, save.
/usr/bin/python3 - "$dir" <<'PY'
import nbformat, sys
for name, md in (("own", {"kernelspec": {"name": "python3",
        "display_name": "Mine", "language": "python"},
        "language_info": {"name": "python", "version": "3.0.0"},
        "custom": {"k": [1, 2]}}), ("bare", {})):
    nb = nbformat.v4.new_notebook()
    nb.metadata = md
    nb.cells = [nbformat.v4.new_code_cell("print('hi')")]
    nbformat.write(nb, "%s/%s.ipynb" % (sys.argv[1], name))
PY
for f in own bare; do
	meta "$dir/$f.ipynb" >"$T/$f.before"
	"$CTL" --json call run_cells path="$dir/$f.ipynb" all=true wait_secs=30 \
	    >"$T/$f.run" || fail "run $f: $(cat "$T/$f.run")"
	"$CTL" call save_notebook notebook="$dir/$f.ipynb" >/dev/null ||
	    fail "save $f"
	meta "$dir/$f.ipynb" >"$T/$f.after"
	cmp -s "$T/$f.before" "$T/$f.after" ||
	    fail "$f.ipynb: metadata $(cat "$T/$f.before") became $(cat "$T/$f.after")"
	grep -q '"hi' "$dir/$f.ipynb" || fail "$f.ipynb: the run's output was not saved"
done
ok "existing files keep their own metadata through a run and a save"

"$CTL" stop >/dev/null || fail "stop"
wait $D
