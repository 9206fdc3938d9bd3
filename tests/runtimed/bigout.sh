#!/bin/sh
# SPDX-License-Identifier: ISC
# bigout.sh: a cell printing far more than an output keeps.  60 MB in
# one write (a kernel message may have 64 MiB: AGENT_KERNEL_IOPUB_MAX), and 40 MB of lines ending in a traceback, on a real python3
# kernel: each stream keeps its first and last STREAMCAP_HEAD/TAIL
# (250,000) characters with a marker saying how many were cut, says so
# in transient.runtimed_cut, the error output survives, the daemon's
# memory stays bounded and the kernel runs the next cell.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 400 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_WARM_POOL=0
# Under ASan, freed memory waits in a quarantine (256 MB by default) that
# would count as the daemon's own; keep it small so the bound means the same.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

"$RUNTIMED" -D >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status

hwm() {
	awk '/^VmHWM/ { print $2 }' "/proc/$1/status"
}

# check.py FILE CELL HEAD TAIL CUT: cell CELL's first output is a stdout
# stream made of HEAD, the marker for CUT characters, and TAIL (Python
# expressions).
cat >"$T/check.py" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
cell = state["cells"][int(sys.argv[2])]
head, tail, cut = eval(sys.argv[3]), eval(sys.argv[4]), int(sys.argv[5])
o = cell["outputs"][0]
assert o["output_type"] == "stream" and o["name"] == "stdout", o.keys()
marker = "\n[... runtimed: %d characters cut here ...]\n" % cut
t = o["text"]
assert t == head + marker + tail, (len(t), t[:80], t[-80:],
    t[len(head):len(head) + 80])
assert o["transient"]["runtimed_cut"]["characters"] == cut, o["transient"]
print("stream of %d characters: %d + marker + %d, %d cut" %
    (len(t), len(head), len(tail), cut))
PY

# One write of 60,000,003 characters.
agent=$("$RTD_CLIENT" run "$RUNTIMED_SOCKET" "$T/one.json" \
    "import sys; sys.stdout.write('x' * 60_000_000 + 'END')" \
    "print('alive')") || fail "run"
/usr/bin/python3 - "$T/one.json" <<'PY' || fail "the 60 MB write"
import json, sys
state = json.load(open(sys.argv[1]))
c0, c1 = state["cells"]
assert c0["status"] == "ok", c0["status"]
PY
/usr/bin/python3 "$T/check.py" "$T/one.json" 0 "'x' * 250000" \
    "'x' * 249997 + 'END'" 59500003 || fail "the 60 MB write"
/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cells"][1]; assert c["outputs"][0]["text"] == "alive\n", c' \
    "$T/one.json" || fail "the kernel did not run the next cell"
ok "60 MB write: head and tail kept, 59500003 characters cut; next" \
    "cell ran; peak RSS daemon $(hwm $D) kB, agent $(hwm $agent) kB"
[ "$(hwm $D)" -lt 65536 ] || fail "daemon peak RSS $(hwm $D) kB"

# 400,000 lines of 101 characters, then a traceback.
agent=$("$RTD_CLIENT" run "$RUNTIMED_SOCKET" "$T/lines.json" \
    "for i in range(400_000): print('line %07d ' % i + 'y' * 87)
raise ValueError('the end')" "print('alive')") || fail "run"
/usr/bin/python3 - "$T/lines.json" <<'PY' || fail "lines"
import json, sys
state = json.load(open(sys.argv[1]))
c0, c1 = state["cells"]
assert c0["status"] == "error", c0["status"]
outs = c0["outputs"]
assert [o["output_type"] for o in outs] == ["stream", "error"], outs
assert outs[1]["ename"] == "ValueError", outs[1]
assert c1["outputs"][0]["text"] == "alive\n", c1
lines = "".join("line %07d " % i + "y" * 87 + "\n" for i in range(400_000))
cut = len(lines) - 500000
marker = "\n[... runtimed: %d characters cut here ...]\n" % cut
t = outs[0]["text"]
assert t == lines[:250000] + marker + lines[-250000:], (
    len(t), t[249990:250100])
assert outs[0]["transient"]["runtimed_cut"]["characters"] == cut
print("lines: %d characters, %d cut" % (len(lines), cut))
PY
ok "40 MB of lines then a traceback: head, tail and the error kept;" \
    "peak RSS daemon $(hwm $D) kB"
[ "$(hwm $D)" -lt 65536 ] || fail "daemon peak RSS $(hwm $D) kB"

# Through the MCP worker: get_results with full_output (no cut of the
# worker's own) still says truncated, because the daemon cut.
/usr/bin/python3 - "$top_builddir/runtimed-mcp-worker" <<'PY' ||
import json, subprocess, sys
w = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE,
    stdout=subprocess.PIPE, text=True)
n = 0
def call(method, params):
    global n
    n += 1
    w.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
        "params": params}) + "\n")
    w.stdin.flush()
    while True:
        r = json.loads(w.stdout.readline())
        if r.get("id") == n:
            return r
def tool(name, **args):
    return toolr(name, **args)["structuredContent"]
def toolr(name, **args):
    r = call("tools/call", {"name": name, "arguments": args})
    assert not r["result"].get("isError"), r
    return r["result"]
call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"io.runtimed/structured": {}}},
    "clientInfo": {"name": "bigout", "version": "0"}})
w.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
h = tool("create_notebook")["notebook_handle"]
c = tool("edit_cells", notebook_handle=h, edits=[{"op": "insert",
    "after": "BOTTOM", "source": "print('z' * 600_000)"}])["cells"][0]["cell_id"]
r = tool("run_cells", notebook_handle=h, cell_ids=[c], wait_secs=50)
assert r["status"] == "done", r["status"]
fr = toolr("get_results", notebook_handle=h, execution_id=r["execution_id"],
    full_output=True)
full = fr["structuredContent"]
o = full["cells"][0]["outputs"][0]
assert full["truncated"] is True and full["cells"][0]["truncated"] is True, \
    (full["truncated"], full["cells"][0]["truncated"])
assert o["transient"]["runtimed_cut"]["characters"] == 100001, o["transient"]
# Full output is bounded too (100,000 characters), and its marker tells
# the whole cut: the worker's and the daemon's, and what the cell printed.
text = "".join(c.get("text", "") for c in fr["content"])
assert len(text) < 101000, len(text)
assert "(100001 of them not kept by runtimed: the cell printed 600001;" \
    in text, text[24990:25300]
print("MCP get_results full_output: truncated true, %d characters cut" %
    o["transient"]["runtimed_cut"]["characters"])
w.stdin.close()
w.wait(10)
PY
    fail "MCP result of a cut output"
ok "MCP: get_results(full_output) of a cut stream says truncated"

kill -0 $D || fail "the daemon died"
"$RUNTIMED" status >/dev/null || fail "the daemon stopped serving"
ok "daemon alive"
