#!/bin/sh
# SPDX-License-Identifier: ISC
# remote.sh: a real Jupyter Server (1.23 here) as a domain: runtimectl
# domains (ok with the principal the server's evidence gives, the token
# never printed, a readable token file refused with the chmod, a wrong
# token refused, a dead server unreachable, a broken config and another
# scheme named); then notebooks and kernels on it through the real worker,
# daemon and runtimed-agent-remote (tests/remote/remote.py):
# open, edit, run, interrupt, restart, save, a change on the server
# detected, create, the server's kernelspecs, notebook_id + domain,
# upload and download of 5 MiB, 64 MiB (chunked, the worker's peak RSS
# bounded), an empty file and 1 GiB + 1 refused, with hashes, the local domain's copy, all
# on the v1 WebSocket subprotocol the server offers; contents calls held
# back by a relay while other clients and calls are answered, and a
# change on the server announced (tests/remote/offloop.py); then the server
# killed mid-run and started again with kernel_ws_protocol "" (JSON
# messages): the run kernel_died, the handle unavailable, a new connect
# runs (tests/remote/faults.py); then the local daemon SIGKILLed under a
# hosted handle that comes back with its unsaved edit and its kernel,
# and a run whose WebSocket is cut completing (tests/remote/keep.py).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 480 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

nb() {
	$PY - "$SROOT/nb.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
	rm -rf "$SROOT/sub" "$SROOT/big.bin"
}

# The watch of a server's copy, short for the test (default 5 s).
export RUNTIMED_REMOTE_WATCH_MS=300
# A lost kernel WebSocket's window, short: faults.py kills the server.
export RUNTIMED_REMOTE_REJOIN_MS=6000
start_daemon --warm-pool 0 -v
start_server
out=$("$CTL" domains 2>&1) || fail "domains: $out"
echo "$out" | grep -q "^js .*http://127.0.0.1:$PORT/ .*ok .*server:127.0.0.1:$PORT/" ||
    fail "domains said: $out"
"$CTL" domains --json >"$T/d.json" || fail "domains --json"
grep -q "$TOKEN" "$T/d.json" && fail "the token was printed"
$PY - "$T/d.json" <<'PY' || fail "domains --json: $(cat "$T/d.json")"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["domains"][0]
assert d["name"] == "js" and d["ok"] and d["reachable"] and d["authenticated"], d
assert d["principal"].startswith("server:") and "api/status" in d["evidence"], d
PY
ok "domains: reachable, token accepted, principal from the evidence"

chmod 640 "$RUNTIMED_CONFIG_DIR/js.token"
out=$("$CTL" domains 2>&1) && fail "a 0640 token file was used"
echo "$out" | grep -q "chmod 600 $RUNTIMED_CONFIG_DIR/js.token" ||
    fail "no chmod fix: $out"
chmod 600 "$RUNTIMED_CONFIG_DIR/js.token"
ok "domains: a token file others can read is refused with the fix"

cp "$RUNTIMED_CONFIG_DIR/js.token" "$T/good.token"
echo wrong >"$RUNTIMED_CONFIG_DIR/js.token"
out=$("$CTL" domains 2>&1) && fail "a wrong token was taken"
echo "$out" | grep -q "refused the token" || fail "wrong token: $out"
cp "$T/good.token" "$RUNTIMED_CONFIG_DIR/js.token"
ok "domains: a wrong token is refused"

nb
$PY "${srcdir:-.}/tests/remote/remote.py" "$top_builddir" "$T" "$SROOT" ||
    fail "remote.py (v1 subprotocol)"
grep -q "WebSocket open (v1.kernel.websocket.jupyter.org)" \
    "$T/daemon.log" || fail "the v1 subprotocol was not used"
ok "remote notebook and kernel, v1 subprotocol"

# A refused interrupt, a proxy restart mid-run (refuse.py).
$PY "${srcdir:-.}/tests/remote/refuse.py" "$top_builddir" "$T" "$SROOT" ||
    fail "refuse.py"
grep -q "answers not as itself" "$T/daemon.log" ||
    fail "the agent did not wait out the proxy"
ok "an interrupt the server refused; a proxy restart mid-run"

# Contents calls held at the server block no loop; the watch (offloop.py).
$PY "${srcdir:-.}/tests/remote/offloop.py" "$top_builddir" "$T" "$SROOT" ||
    fail "offloop.py"
ok "contents calls off the loops; a change on the server announced"

# The server killed mid-run, then back with JSON messages (faults.py).
nb
$PY "${srcdir:-.}/tests/remote/faults.py" "$top_builddir" "$T" "$SROOT" \
    >"$T/faults.out" 2>&1 &
F=$!
track $F
i=0
until [ -f "$T/running" ]; do
	i=$((i + 1))
	[ $i -gt 600 ] && { cat "$T/faults.out"; fail "faults.py never ran"; }
	kill -0 $F 2>/dev/null || { cat "$T/faults.out"; fail "faults.py"; }
	sleep 0.1
done
stop_server -9
touch "$T/killed"
out=$("$CTL" domains 2>&1) && fail "a dead server was ok"
echo "$out" | grep -q "cannot reach" || fail "dead server: $out"
ok "domains: a stopped server is unreachable"

until [ -f "$T/lost" ]; do
	kill -0 $F 2>/dev/null || { cat "$T/faults.out"; fail "faults.py"; }
	sleep 0.1
done
"$RUNTIMED" stop >/dev/null 2>&1 || fail "stop the daemon"
wait "$D" 2>/dev/null
mv "$T/daemon.log" "$T/daemon-0.log"
start_daemon --warm-pool 0 -v
touch "$T/restarted"

until [ -f "$T/checked" ]; do
	kill -0 $F 2>/dev/null || { cat "$T/faults.out"; fail "faults.py"; }
	sleep 0.1
done
SERVER_ARGS=--ServerApp.kernel_ws_protocol= start_server
touch "$T/back"
wait $F || { cat "$T/faults.out"; fail "faults.py"; }
cat "$T/faults.out"
grep -q "WebSocket open (JSON messages)" "$T/daemon.log" ||
    fail "the JSON encoding was not used"
ok "remote kernel: server lost and back, JSON messages"

# The local daemon SIGKILLed and started again under a hosted handle,
# then the kernel's WebSocket cut mid-run (tests/remote/keep.py).
nb
# faults.py's hand-offs have the same names: not taken for keep.py's.
rm -f "$T/edited" "$T/killed" "$T/checked" "$T/back" "$T/lost" "$T/restarted"
$PY "${srcdir:-.}/tests/remote/keep.py" "$top_builddir" "$T" "$SROOT" \
    "$PORT" >"$T/keep.out" 2>&1 &
K=$!
track $K
handoff() {
	until [ -f "$T/$1" ]; do
		kill -0 $K 2>/dev/null || { cat "$T/keep.out"; fail "keep.py"; }
		sleep 0.05
	done
}
handoff edited
kill -9 "$D"
wait "$D" 2>/dev/null
touch "$T/killed"
handoff checked
# The old agents still write to the old log: keep it apart.
mv "$T/daemon.log" "$T/daemon-1.log"
start_daemon --warm-pool 0 -v
touch "$T/back"
wait $K || { cat "$T/keep.out"; fail "keep.py"; }
cat "$T/keep.out"
grep -q "recovered nb.ipynb on" "$T/daemon.log" ||
    fail "the daemon did not recover the stored remote room"
grep -q "re-join refused: .* not joined under another identity" \
    "$T/daemon.log" || fail "the other principal was not what refused"
grep -q "kept by the server, taken back" "$T/daemon.log" ||
    fail "the new daemon's agent did not take the kept kernel back"
grep -q "reconnected to the kernel the server kept" "$T/daemon.log" ||
    fail "the WebSocket was not reconnected"
ok "hosted handle across a daemon SIGKILL; a run across a lost WebSocket"

echo '{"js": ' >"$RUNTIMED_CONFIG_DIR/domains.json"
out=$("$CTL" domains 2>&1) && fail "a broken domains.json was read"
echo "$out" | grep -q "domains.json is not a JSON object" || fail "bad config: $out"
echo '{"js": {"url": "ftp://example.org/", "token_file": "js.token"}}' \
    >"$RUNTIMED_CONFIG_DIR/domains.json"
out=$("$CTL" domains 2>&1) && fail "ftp was taken"
echo "$out" | grep -q "must start with https:// or http://" || fail "ftp: $out"
ok "domains: a broken config and another scheme are named"
