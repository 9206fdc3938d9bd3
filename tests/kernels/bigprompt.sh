#!/bin/sh
# SPDX-License-Identifier: ISC
# bigprompt.sh: input() with a 10 MB prompt (issue 36, item 8).  The
# agent sent the prompt whole, over AGENT_INPUT_REQUEST's 64 KiB cap, so
# it was dropped: the run stayed "running" and send_input answered
# input_not_pending.  Now the prompt is cut to its last 8 KiB
# (PROTO_PROMPT_MAX) with a note: the run is input_required at once,
# send_input answers it, and the daemon's peak RSS and the state
# directory stay small.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 400 "$0" "$@"
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
    'name = input("p" * 10_000_000 + "name? ")\nprint("hello", name)')]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
# The run must ask at once: when it did not (one run in three under
# load), the kernel's stdin had not connected yet (slowstdin.sh).
"$CTL" --json call run_cells path="$nb" all=true wait_secs=30 \
    >"$T/run.json" 2>&1 || fail "run_cells: $(head -c 2000 "$T/run.json")"
/usr/bin/python3 - "$T/run.json" >"$T/eid" <<'PY' || fail "run: $(head -c 2000 "$T/run.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "input_required", j["status"]
p = j["input"]["prompt"]
assert p.endswith("pppname? ") and len(p.encode()) <= 8192, len(p)
assert p.startswith("[the first "), p[:80]
print(j["execution_id"])
PY
eid=$(cat "$T/eid")
ok "a 10 MB prompt: input_required, the prompt cut to its end"
out=$("$CTL" call send_input path="$nb" execution_id="$eid" value=bob 2>&1) ||
    fail "send_input: $out"
"$CTL" call get_results path="$nb" execution_id="$eid" timeout_secs=20 >"$T/res" 2>&1 ||
    fail "get_results: $(head -c 2000 "$T/res")"
grep -q "hello bob" "$T/res" || fail "the answer did not reach the cell: $(head -c 2000 "$T/res")"
h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$D/status")
s=$(du -sk "$RUNTIMED_STATE_DIR" | cut -f1)
[ "$h" -lt 102400 ] || fail "the daemon's peak RSS is $h KiB"
[ "$s" -lt 20480 ] || fail "the state directory is $s KiB"
ok "send_input answered it; daemon peak RSS $h KiB, state directory $s KiB"
