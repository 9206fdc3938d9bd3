#!/bin/sh
# SPDX-License-Identifier: ISC
# durable.sh: execution records survive a daemon kill -9 and restart (a
# finished run with its source and outputs; the run in flight ends
# kernel_died); no agent or kernel outlives the killed daemon; none
# outlives `runtimed stop` either (processes counted through /proc).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/kernels/lib.sh"

export RUNTIMED_WARM_POOL=0
start_daemon
"$KC" durable1 "$RUNTIMED_SOCKET" "$T/ids" &
C=$!
track $C
i=0
while [ ! -s "$T/ids" ]; do
	i=$((i + 1)); [ $i -gt 600 ] && fail "durable1 did not get ready"
	kill -0 $C 2>/dev/null || fail "durable1 failed"
	sleep 0.1
done
kill -9 $D
wait $D 2>/dev/null
kill $C 2>/dev/null
ok "daemon killed with -9 during a run"
start_daemon
"$KC" durable2 "$RUNTIMED_SOCKET" "$T/ids" || fail "durable2"

# No orphans after a stop: two rooms and a pool kernel.
"$RUNTIMED" stop || fail "stop"
wait $D
export RUNTIMED_WARM_POOL=1
start_daemon
"$KC" rooms "$RUNTIMED_SOCKET" 2 >"$T/rooms.out" &
C=$!
track $C
i=0
while ! grep -q ready "$T/rooms.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 600 ] && fail "rooms did not get ready"
	kill -0 $C 2>/dev/null || fail "rooms failed"
	sleep 0.1
done
sleep 1
pids=$(descendants $D)
n=$(echo $pids | wc -w)
# 2 rooms + 1 pooled: an agent and a kernel each.
[ "$n" -ge 6 ] || fail "expected at least 6 processes under the daemon, " \
    "found $n: $pids"
"$RUNTIMED" stop || fail "stop"
wait $D
kill $C 2>/dev/null
i=0
while any_alive $pids; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "still alive after runtimed stop: $(for p in \
	    $pids; do any_alive $p && echo $p; done)"
	sleep 0.1
done
ok "none of the $n agent and kernel processes outlived runtimed stop"
