#!/bin/sh
# SPDX-License-Identifier: ISC
# status.sh: the daemon's status tells the truth (issue 12).  With no
# client connected it counts no client (the asking connection is not
# one); the warm-pool kernel is counted and listed, marked as pooled; a
# connected MCP worker is counted as a client, kernel agents apart.
# status, kernels and rooms in both formats, and `runtimed status`.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

. "${srcdir:-.}/tests/lib/skip.sh"
have_kernel python3 || skip_missing "no python3 kernel"
start_daemon --warm-pool 1
wait_agents 1
# The pooled kernel is ready once it reports idle.
i=0
until "$CTL" kernels | grep -q "python3 *idle"; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "the pooled kernel never became idle"
	sleep 0.1
done

out=$("$RUNTIMED" status) || fail "runtimed status failed"
echo "$out" | grep -q "^peers 0$" ||
    fail "runtimed status counts a client where none is: $out"
echo "$out" | grep -q "^kernels 1$" ||
    fail "runtimed status misses the warm-pool kernel: $out"
echo "$out" | grep -q "^agents 1$" || fail "no agent counted: $out"
echo "$out" | grep -q "(warm pool)" || fail "pooled kernel not marked: $out"
ok "runtimed status: no client, one pooled kernel, one agent"

out=$("$CTL" status) || fail "runtimectl status failed"
printf '%s\n' "$out" >"$T/status.txt"
for k in pid incarnation started uptime version state rooms peers \
    agents kernels "warm pool" store; do
	echo "$out" | grep -q "^$k " || fail "status lacks $k: $out"
done
echo "$out" | grep -q "^warm pool 1 of 1 ready$" || fail "pool: $out"
echo "$out" | grep -q "^store ok$" || fail "store: $out"
echo "$out" | grep -q "^pid $D$" || fail "pid: $out"
ok "runtimectl status (text)"

"$CTL" --json status >"$T/status.json" || fail "status --json failed"
"$CTL" status --json | cmp -s - "$T/status.json" ||
    echo "(two status answers differ, as uptime may)"
python3 - "$T/status.json" "$D" "$RUNTIMED_STATE_DIR" "$T/status.txt" <<'PY' || fail "status --json: $(cat "$T/status.json")"
import json, sys
j = json.load(open(sys.argv[1]))
# A count has one name, in the text and in --json (issue 35: peers and
# clients were one count).
for line in open(sys.argv[4]):
    w = line.split()
    if len(w) == 2 and w[1].isdigit() and w[0] not in ("pid", "uptime"):
        assert j.get(w[0]) == int(w[1]), (w, j)
assert j["pid"] == int(sys.argv[2]), j
assert j["peers"] == 0 and j["agents"] == 1 and j["kernels"] == 1, j
assert j["pool_size"] == 1 and j["pool_ready"] == 1, j
assert j["state_dir"] == sys.argv[3], j
assert j["store_damage"] is None and j["store_write_error"] is None, j
assert j["uptime_s"] >= 0 and j["warnings"] == [], j
k, = j["kernel_list"]
assert k["pooled"] is True and k["notebook_id"] is None, k
assert k["name"] == "python3" and k["state"] == "idle", k
assert k["pid"] > 0 and k["agent_pid"] > 0, k
PY
ok "runtimectl status --json"

# A client: a worker on a pipe, with a notebook attached.
mkfifo "$T/in"
"$top_builddir/runtimed-mcp-worker" <"$T/in" \
    >"$T/worker.out" 2>"$T/worker.log" &
W=$!
track $W
exec 3>"$T/in"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"t","version":"1"}}}' >&3
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&3
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"create_notebook\",\"arguments\":{\"path\":\"$T/a.ipynb\"}}}" >&3
i=0
until grep -q '"id":2' "$T/worker.out"; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "create_notebook did not answer"
	sleep 0.1
done
# A new notebook has no kernel until a kernel call (decision 018).
h=$(grep '"id":2' "$T/worker.out" | jq_py 'j["result"]["structuredContent"]["notebook_handle"]')
printf '%s
' "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"get_kernel_info\",\"arguments\":{\"notebook_handle\":\"$h\"}}}" >&3
wait_agents 2
out=$("$CTL" --json status) || fail "status with a client"
echo "$out" | jq_py 'j["peers"] >= 1 and j["rooms"] == 1' | grep -q True ||
    fail "the worker is not counted as a client: $out"
ok "a connected worker counts as a client: $(echo "$out" | jq_py 'j["peers"]')"

out=$("$CTL" kernels) || fail "kernels"
echo "$out" | grep -q "a.ipynb" || fail "kernels: no room kernel: $out"
"$CTL" kernels --json | jq_py '[k["pooled"] for k in j["kernels"] if k["path"]]' |
    grep -q "^\[False\]$" || fail "kernels --json: $("$CTL" kernels --json)"
ok "runtimectl kernels: the room's kernel listed with its notebook"

out=$("$CTL" rooms) || fail "rooms"
echo "$out" | head -1 | grep -q "^NOTEBOOK  *KERNEL  *STATE" || fail "rooms: $out"
echo "$out" | grep -q "$T/a.ipynb" || fail "rooms: $out"
"$CTL" --json rooms | jq_py 'j["rooms"][0]["path"]' | grep -qx "$T/a.ipynb" ||
    fail "rooms --json: $("$CTL" --json rooms)"
ok "runtimectl rooms, both formats"

exec 3>&-
wait $W 2>/dev/null
