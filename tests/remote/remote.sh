#!/bin/sh
# SPDX-License-Identifier: ISC
# remote.sh: notebooks and kernels on a real Jupyter Server through the
# real worker, daemon and runtimed-agent-remote (tests/remote/remote.py):
# open, edit, run, interrupt, restart, save, a change on the server
# detected, create, the server's kernelspecs, notebook_id + domain,
# upload and download of 5 MiB with hashes, the local domain's copy.  The
# v1 WebSocket subprotocol the server offers, then (open, run, interrupt,
# restart) the JSON messages of a server started with kernel_ws_protocol
# "".
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
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

start_daemon --warm-pool 0 -v
start_server
nb
$PY "${srcdir:-.}/tests/remote/remote.py" "$top_builddir" "$T" "$SROOT" ||
    fail "remote.py (v1 subprotocol)"
grep -q "WebSocket open (v1.kernel.websocket.jupyter.org)" \
    "$T/daemon.log" || fail "the v1 subprotocol was not used"
ok "remote notebook and kernel, v1 subprotocol"

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
