#!/bin/sh
# SPDX-License-Identifier: ISC
# life.sh: kernel death (SIGKILL during a run, os._exit from a cell), a
# hung kernel (SIGSTOP) seen by the heartbeat and killed after the bound,
# kernelspecs (list, select, case-insensitive names, unknown names,
# message-mode interrupt).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/kernels/lib.sh"

mkdir -p "$T/jupyter/kernels/pymsg"
cat >"$T/jupyter/kernels/pymsg/kernel.json" <<'JSON'
{"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f",
  "{connection_file}"], "display_name": "Python 3 (message interrupt)",
 "language": "python", "interrupt_mode": "message"}
JSON
export JUPYTER_PATH=$T/jupyter
export RUNTIMED_KERNEL_HUNG_SECS=3 RUNTIMED_WARM_POOL=1
start_daemon

"$KC" death "$RUNTIMED_SOCKET" || fail "death"
"$KC" hang "$RUNTIMED_SOCKET" || fail "hang"
"$KC" specs "$RUNTIMED_SOCKET" || fail "specs"
kill -0 $D || fail "daemon died"
"$RUNTIMED" stop || fail "stop"
wait $D || fail "daemon exited $?"
ok "daemon stopped cleanly"
