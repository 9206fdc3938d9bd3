#!/bin/sh
# SPDX-License-Identifier: ISC
# flood.sh: a cell printing 1 GB in 1 MB flushed writes, then raising, and
# a cell printing 600 MB in one message (issue 36, item 8).  The agent's
# libzmq queue of iopub had no bound: it held what the kernel printed
# faster than it was read, 630-780 MB of peak RSS for the 1 GB here (2.9
# GB in the issue), and 0.9-1 GB for the one message.  Now at most 128
# messages wait in the agent, each frame at most 64 MiB: the rest waits
# in the kernel, which drops what is past its own queue.  Each run ends
# and says what it lost: the flood its cut (and a note if the kernel
# dropped outputs), its error kept from the reply if its output was
# dropped; the one message a note naming the cap, after the agent
# connected again.  The kernel runs 1+1 after both.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
# Under ASan, freed memory waits in a quarantine (256 MB by default)
# that would count in the peak RSS measured here: a small one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0
# The bound asserted: the agent's peak RSS, KiB.
max=307200

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
nb=$T/nb/p.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(s) for s in [
    "1+1",
    "import sys\n"
    "for i in range(1000): sys.stdout.write('x'*1000000+'\\n'); sys.stdout.flush()\n"
    "raise ValueError('the end')",
    "print('x'*(600*1024*1024))",
    "1+1"]]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
# A run that ends in error exits 1: its JSON is checked below.  Under
# ASan the agent reads 1 GB slower than a wait: wait again, 4 times.
run() {
	"$CTL" --json call run_cells path="$nb" "cell_ids=[$1]" \
	    wait_secs=${FLOOD_WAIT:-50} >"$T/r$1.json" 2>&1 ||
	    [ $? -eq 1 ] || fail "run_cells $1: $(head -c 2000 "$T/r$1.json")"
	for i in 1 2 3 4; do
		st=$(jq_py 'j["status"]' <"$T/r$1.json") ||
		    fail "run $1: $(head -c 2000 "$T/r$1.json")"
		[ "$st" = running ] || [ "$st" = queued ] || return 0
		eid=$(jq_py 'j["execution_id"]' <"$T/r$1.json")
		"$CTL" --json call get_results path="$nb" execution_id="$eid" \
		    timeout_secs=50 >"$T/r$1.json" 2>&1 || [ $? -eq 1 ] ||
		    fail "get_results $1: $(head -c 2000 "$T/r$1.json")"
	done
}
peak() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$a/status"
}
run 0
a=$(ps -o pid=,comm= --ppid "$D" | awk '$2 == "runtimed-agent" { print $1; exit }')
[ -n "$a" ] || fail "no agent: $(ps -o pid=,stat=,comm= --ppid "$D")"

run 1
/usr/bin/python3 - "$T/r1.json" <<'PY' || fail "the 1 GB run: $(head -c 3000 "$T/r1.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "error", r["status"]
outs = r["cells"][0]["outputs"]
cut = [o for o in outs if o.get("transient", {}).get("runtimed_cut")]
assert cut and cut[0]["name"] == "stdout", [o.get("output_type") for o in outs]
n = cut[0]["transient"]["runtimed_cut"]["characters"]
errs = [o for o in outs if o["output_type"] == "error"]
assert errs and errs[0]["ename"] == "ValueError", outs[-1:]
lost = [o["transient"]["runtimed_lost"] for o in outs
    if "runtimed_lost" in o.get("transient", {})]
assert all(l["reason"] == "kernel_queue_full" for l in lost), lost
print("%d characters cut, %s" % (n, "outputs dropped by the kernel" if lost
    else "nothing dropped"))
PY
h=$(peak)
[ "$h" -lt $max ] || fail "the agent's peak RSS is $h KiB for 1 GB printed"
ok "1 GB in 1 MB writes: the run ended with its cut and its error; the" \
    "agent's peak RSS $h KiB"

run 2
/usr/bin/python3 - "$T/r2.json" <<'PY' || fail "the 600 MB run: $(head -c 3000 "$T/r2.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done", r["status"]
outs = r["cells"][0]["outputs"]
lost = [o for o in outs if "runtimed_lost" in o.get("transient", {})]
assert len(lost) == 1, outs
l = lost[0]["transient"]["runtimed_lost"]
assert l == {"reason": "message_over_cap", "cap_bytes": 64 << 20}, l
assert "larger than the 64 MiB" in lost[0]["text"], lost[0]["text"]
PY
h=$(peak)
[ "$h" -lt $max ] || fail "the agent's peak RSS is $h KiB after 600 MB in one message"
ok "600 MB in one message: dropped with a note naming the cap; the" \
    "agent's peak RSS $h KiB"

run 3
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done", r["status"]
assert r["cells"][0]["outputs"][0]["data"]["text/plain"] == "2", r
' "$T/r3.json" || fail "1+1 after: $(head -c 2000 "$T/r3.json")"
ok "the kernel runs 1+1 after both"
