#!/bin/sh
# SPDX-License-Identifier: ISC
# idle.sh: idle teardown after the keepalive (env), its cancel by a
# returning client, a new kernel on the next run; then the warm pool.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/kernels/lib.sh"

export RUNTIMED_KERNEL_KEEPALIVE=2 RUNTIMED_WARM_POOL=0
start_daemon
"$KC" idle "$RUNTIMED_SOCKET" 2 || fail "idle"
"$RUNTIMED" stop || fail "stop"
wait $D

# With a pool of one, a new notebook's kernel is up at once; the pool
# refills after an adoption.  Pooled kernels log "ready ... (pool)".
pool_ready() {
	i=0
	while [ "$(grep -c 'ready, pid.*(pool)' "$T/daemon.log")" -lt "$1" ]; do
		i=$((i + 1)); [ $i -gt 600 ] && fail "pool kernel $1 not ready"
		sleep 0.1
	done
}
export RUNTIMED_WARM_POOL=1
mkdir "$T/nbdir"
dir=$(cd "$T/nbdir" && pwd -P)
start_daemon
pool_ready 1
"$KC" pool "$RUNTIMED_SOCKET" "$dir" 0 || fail "pool"
pool_ready 2
"$KC" pool "$RUNTIMED_SOCKET" "$dir" 1 || fail "pool refilled"
grep -q "taken from the pool" "$T/daemon.log" || fail "no adoption logged"
"$RUNTIMED" stop || fail "stop"
wait $D
ok "daemon stopped cleanly"
