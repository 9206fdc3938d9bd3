#!/bin/sh
# SPDX-License-Identifier: ISC
# secrets.sh: secrets never reach the model (issue 40, item 4, decision
# 064).  The daemon starts with secret-looking variables (random values,
# new each run), a name listed in RUNTIMED_SECRET_NAMES and KEY=1; a real
# ipykernel prints them in every kind of output (stdout, stderr, a
# secret written in two flushes 300 ms apart, execute_result, display_data
# text/html and application/json, an error's evalue and traceback, an
# input() prompt) and credential shapes (AWS key id, GitHub token, sk-
# key, Bearer token, a PEM private key).  None of the values may appear
# in run_cells / get_results answers (text and structuredContent), the
# saved .ipynb, or anything in the state directory (the store, its WAL,
# blobs, the log); the markers must.  A getpass() answer is nowhere
# either, and KEY=1 blanks nothing.  xeus-python and IRkernel, when
# installed, print a stream, a result and an error each.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0

rnd() {
	/usr/bin/python3 -c 'import secrets, string, sys
a = sys.argv[1]
print("".join(secrets.choice(a) for _ in range(int(sys.argv[2]))))' "$1" "$2"
}
AN=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
UP=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
export AWS_SECRET_ACCESS_KEY="$(rnd "$AN" 30)/$(rnd "$AN" 9)"
export GITHUB_TOKEN="gh$(rnd "$AN" 38)"
export MY_DB_PASSWORD="pw-$(rnd "$AN" 20)"
export CUSTOM_THING="ct-$(rnd "$AN" 20)"
export RUNTIMED_SECRET_NAMES="CUSTOM_THING"
export KEY=1
# Shapes whatever their variable: these names look like nothing.
export SEED_AKIA="$(rnd "$UP" 16)" SEED_GHP="$(rnd "$AN" 36)"
export SEED_SK="$(rnd "$AN" 40)" SEED_BEARER="$(rnd "$AN" 32)"
PW_ANSWER="gp-$(rnd "$AN" 24)"
openssl genpkey -algorithm ed25519 -out "$T/key.pem" 2>/dev/null ||
    fail "openssl genpkey"
export PEM_FILE="$T/key.pem"
PEM_BODY=$(sed -n 2p "$T/key.pem")

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
nb=$T/nb/s.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
cells = [
    'import os, sys, time\nE = os.environ\n'
    'print("stdout", E["AWS_SECRET_ACCESS_KEY"])\n'
    'print("stderr", E["GITHUB_TOKEN"], file=sys.stderr)\n'
    'print("key is", E["KEY"], "and 1 2 3 stay")',
    # One secret in two flushes: the first part is held for the rest.
    's = E["MY_DB_PASSWORD"]\nsys.stdout.write("split " + s[:9])\n'
    'sys.stdout.flush()\ntime.sleep(0.3)\nsys.stdout.write(s[9:] + " end\\n")\n'
    'sys.stdout.flush()',
    'E["CUSTOM_THING"]',
    'from IPython.display import display\n'
    'display({"text/html": "<b>" + E["AWS_SECRET_ACCESS_KEY"] + "</b>",\n'
    '    "application/json": {"k": [E["MY_DB_PASSWORD"], 1]},\n'
    '    "text/plain": "plain " + E["GITHUB_TOKEN"]}, raw=True)',
    'print("AKIA" + E["SEED_AKIA"], "ghp_" + E["SEED_GHP"])\n'
    'print("sk-proj-" + E["SEED_SK"])\n'
    'print("Authorization: Bearer " + E["SEED_BEARER"])\n'
    'print(open(E["PEM_FILE"]).read())',
    'raise KeyError(E["AWS_SECRET_ACCESS_KEY"])',
]
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
nb.cells.append(nbformat.v4.new_code_cell(
    'name = input("token " + E["GITHUB_TOKEN"] + "? ")\nprint("hello", name)'))
nb.cells.append(nbformat.v4.new_code_cell(
    'import getpass\npw = getpass.getpass("pw? ")\nprint("got", len(pw))'))
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY

# Every cell runs: the error stops nothing the input cells need, as they
# are run on their own after it.
# The run ends in the KeyError, so runtimectl exits 1.
"$CTL" --json call run_cells path="$nb" all=true wait_secs=40 \
    >"$T/a.json" 2>&1 || :
[ "$(jq_py 'j["status"]' <"$T/a.json")" = error ] ||
    fail "run_cells: $(head -c 2000 "$T/a.json")"
"$CTL" call get_results path="$nb" \
    execution_id="$(jq_py 'j["execution_id"]' <"$T/a.json")" \
    timeout_secs=30 full_output=true >"$T/a.txt" 2>&1 || :
grep -q KeyError "$T/a.txt" || fail "get_results: $(head -c 2000 "$T/a.txt")"

ids=$(/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.read(sys.argv[1], as_version=4)
print(nb.cells[6].id, nb.cells[7].id)
PY
)
set -- $ids
"$CTL" --json call run_cells path="$nb" "cell_ids=[\"$1\",\"$2\"]" \
    wait_secs=30 >"$T/b.json" 2>&1 ||
    fail "run_cells input: $(head -c 2000 "$T/b.json")"
eid=$(jq_py 'j["execution_id"]' <"$T/b.json")
# A run may answer before the kernel asks: follow it until it does.
n=0
until jq_py 'j["status"]' <"$T/b.json" | grep -qx input_required; do
	n=$((n + 1))
	[ $n -gt 10 ] && fail "no input_required: $(head -c 2000 "$T/b.json")"
	"$CTL" --json call get_results path="$nb" execution_id="$eid" \
	    timeout_secs=10 >"$T/b.json" 2>&1 || fail "get_results"
done
prompt=$(jq_py 'j["input"]["prompt"]' <"$T/b.json")
[ "$prompt" = "token [redacted: GITHUB_TOKEN]? " ] ||
    fail "input() prompt: $prompt"
ok "an input() prompt is redacted: $prompt"
"$CTL" call send_input path="$nb" execution_id="$eid" value=bob \
    >"$T/si1" 2>&1 || fail "send_input: $(cat "$T/si1")"
n=0
until "$CTL" --json call get_results path="$nb" execution_id="$eid" \
    timeout_secs=10 >"$T/c.json" 2>&1 &&
    jq_py 'j["status"]' <"$T/c.json" | grep -qx input_required; do
	n=$((n + 1))
	[ $n -gt 10 ] && fail "getpass never asked: $(head -c 2000 "$T/c.json")"
done
"$CTL" call send_input path="$nb" execution_id="$eid" value="$PW_ANSWER" \
    >"$T/si2" 2>&1 || fail "send_input: $(cat "$T/si2")"
"$CTL" --json call get_results path="$nb" execution_id="$eid" \
    timeout_secs=30 >"$T/d.json" 2>&1 || fail "get_results"
"$CTL" call get_results path="$nb" execution_id="$eid" timeout_secs=30 \
    full_output=true >"$T/d.txt" 2>&1 || fail "get_results"
grep -q "hello bob" "$T/d.txt" || fail "input: $(head -c 2000 "$T/d.txt")"
grep -q "got 27" "$T/d.txt" || fail "getpass: $(head -c 2000 "$T/d.txt")"
"$CTL" call save_notebook notebook="$nb" >"$T/save" 2>&1 ||
    fail "save_notebook: $(cat "$T/save")"
sleep 0.5

# What must be there: the markers, KEY=1's output untouched.
for m in "stdout [redacted: AWS_SECRET_ACCESS_KEY]" \
    "stderr [redacted: GITHUB_TOKEN]" "key is 1 and 1 2 3 stay" \
    "split [redacted: MY_DB_PASSWORD] end" "[redacted: CUSTOM_THING]" \
    "[redacted: AWS access key id] [redacted: GitHub token]" \
    "[redacted: API key]" "Authorization: Bearer [redacted: bearer token]" \
    "[redacted: private key]" "KeyError"; do
	grep -qF "$m" "$T/a.txt" || fail "not in get_results: $m:
$(head -c 4000 "$T/a.txt")"
done
/usr/bin/python3 - "$nb" <<'PY' || fail "the saved notebook's outputs"
import nbformat, sys, json
nb = nbformat.read(sys.argv[1], as_version=4)
o = nb.cells[3].outputs[0]
assert o.data["text/html"] == "<b>[redacted: AWS_SECRET_ACCESS_KEY]</b>", o
assert o.data["application/json"] == {"k": ["[redacted: MY_DB_PASSWORD]", 1]}, o
assert o.data["text/plain"] == "plain [redacted: GITHUB_TOKEN]", o
e = nb.cells[5].outputs[0]
assert e.evalue == "'[redacted: AWS_SECRET_ACCESS_KEY]'", e.evalue
assert any("[redacted: AWS_SECRET_ACCESS_KEY]" in t for t in e.traceback)
assert nb.cells[2].outputs[0].data["text/plain"] == "'[redacted: CUSTOM_THING]'"
PY
ok "markers in get_results and the saved notebook; KEY=1 blanks nothing"

# xeus-python and IRkernel, when installed: a stream, a result and an
# error of each.
other() {	# kernel language cell1 cell2 cell3
	have_kernel "$1" || { echo "# $1 not installed: not tried"; return 0; }
	/usr/bin/python3 - "$T/nb/$1.ipynb" "$@" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in sys.argv[4:]]
nb.metadata["kernelspec"] = {"name": sys.argv[2], "display_name": sys.argv[2],
    "language": sys.argv[3]}
nbformat.write(nb, sys.argv[1])
PY
	"$CTL" call run_cells path="$T/nb/$1.ipynb" all=true wait_secs=50 \
	    >"$T/$1.txt" 2>&1 || :
	for m in "out [redacted: AWS_SECRET_ACCESS_KEY]" \
	    "[redacted: GITHUB_TOKEN]" "[redacted: MY_DB_PASSWORD]"; do
		grep -qF "$m" "$T/$1.txt" || fail "$1: not in run_cells: $m:
$(head -c 3000 "$T/$1.txt")"
	done
	ok "$1: a stream, a result and an error redacted"
}
other xpython python 'import os; print("out", os.environ["AWS_SECRET_ACCESS_KEY"])' \
    'os.environ["GITHUB_TOKEN"]' 'raise ValueError(os.environ["MY_DB_PASSWORD"])'
other ir R 'cat("out", Sys.getenv("AWS_SECRET_ACCESS_KEY"), "\n")' \
    'Sys.getenv("GITHUB_TOKEN")' 'stop(Sys.getenv("MY_DB_PASSWORD"))'

# What must not be anywhere.
sqlite3 "$RUNTIMED_STATE_DIR/runtimed.db" .dump >"$T/dump.sql" 2>&1 ||
    fail "sqlite3 .dump: $(head -c 500 "$T/dump.sql")"
for v in "$AWS_SECRET_ACCESS_KEY" "$GITHUB_TOKEN" "$MY_DB_PASSWORD" \
    "$CUSTOM_THING" "AKIA$SEED_AKIA" "ghp_$SEED_GHP" "sk-proj-$SEED_SK" \
    "$SEED_BEARER" "$PEM_BODY" "$PW_ANSWER" \
    "${AWS_SECRET_ACCESS_KEY%???????????????????????}"; do
	if grep -rlaF -e "$v" "$T"/*.json "$T"/*.txt "$T/dump.sql" "$nb" \
	    "$T/daemon.log" "$RUNTIMED_STATE_DIR" >"$T/where" 2>/dev/null; then
		fail "a secret (${#v} bytes) is in: $(cat "$T/where")"
	fi
done
ok "no value in run_cells/get_results answers, the .ipynb, the store or the state directory"
# What a model reads for the secret-printing cell, for the record.
n=$(/usr/bin/python3 -c 'import sys; t = open(sys.argv[1]).read()
i = t.find("stdout [redacted"); print(len(t[i:t.find("\n", i)]))' "$T/a.txt")
ok "a stdout line with a 40-byte secret reads as $n characters"
