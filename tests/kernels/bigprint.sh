#!/bin/sh
# SPDX-License-Identifier: ISC
# bigprint.sh: a cell printing 60 MiB in one stream message (issue 36,
# item 8).  The agent held the message, json-c's copy of its text and
# the cut: 695 MB of peak RSS for 256 MB.  Now a stream message over 4
# MiB is read straight into the head and tail a stream output keeps
# (agent-wire-stream.c): the agent's peak is the message and little more,
# and the output is the same: its first and last characters (escapes and
# non-ASCII decoded), a marker, truncated.  (A message over 64 MiB is
# dropped with a note: tests/kernels/flood.sh.)
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 150 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
# Under ASan, freed memory waits in a quarantine (256 MB by default)
# that would count in the peak RSS measured here: a small one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
nb=$T/nb/p.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    'import sys\n'
    'sys.stdout.write("h\\u00e9\\t\\"\\U0001f600<" + "x" * (60 << 20) + ">end\\u2713\\n")\n'
    'sys.stdout.flush()')]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
"$CTL" --json call run_cells path="$nb" all=true wait_secs=50 >"$T/run.json" 2>&1 ||
    fail "run_cells: $(head -c 2000 "$T/run.json")"
"$CTL" --json call inspect_notebook path="$nb" view=outputs output_mode=full \
    max_output_chars=12000 >"$T/out.json" 2>&1 || fail "inspect"
/usr/bin/python3 - "$T/run.json" "$T/out.json" <<'PY' || fail "the output: $(head -c 3000 "$T/out.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done", r["status"]
o = json.dumps(json.load(open(sys.argv[2])), ensure_ascii=False)
assert 'h\u00e9\\t\\"\U0001f600<xxx' in o, o[:500]
assert "xxx>end\u2713" in o, o[-500:]
assert '"runtimed_cut"' in o, o[:3000]
PY
a=$(ps -o pid=,comm= --ppid "$D" | awk '$2 == "runtimed-agent" { print $1; exit }')
[ -n "$a" ] || fail "no agent: $(ps -o pid=,stat=,comm= --ppid "$D")"
h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$a/status")
[ "$h" -lt 163840 ] || fail "the agent's peak RSS is $h KiB for 60 MiB printed"
ok "60 MiB in one message: head and tail kept; the agent's peak RSS $h KiB"
