#!/bin/sh
# SPDX-License-Identifier: ISC
# daemon.sh: runtimed's life cycle.  Socket and directory modes, status,
# single instance (a second daemon exits 0 and the first keeps serving),
# stale socket replacement after kill -9, concurrent daemonized starters,
# and a stop that leaves no agent or kernel behind.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"

"$RUNTIMED" -D >"$T/d1.log" 2>&1 &
D1=$!
track $D1
wait_status
ok "runtimed -D started (pid $D1)"

mode=$(stat -c %a "$T/run")
[ "$mode" = 700 ] || fail "socket dir mode $mode, wanted 700"
mode=$(stat -c %A "$RUNTIMED_SOCKET")
[ "$mode" = srw------- ] || fail "socket mode $mode, wanted srw-------"
ok "socket dir 0700, socket $mode"

out=$("$RUNTIMED" status) || fail "status failed"
echo "$out" | grep -q "^pid $D1\$" || fail "status: $out"
for k in started version rooms peers agents kernels; do
	echo "$out" | grep -q "^$k " || fail "status lacks $k: $out"
done
ok "runtimed status: $(echo $out)"

out=$("$RUNTIMED" -D 2>&1); rc=$?
[ $rc = 0 ] || fail "second runtimed -D exited $rc: $out"
echo "$out" | grep -q "already running (pid $D1)" || fail "second: $out"
kill -0 $D1 || fail "first daemon died"
"$RUNTIMED" status >/dev/null || fail "first daemon stopped serving"
ok "second runtimed -D: $out; first still serving"

kill -9 $D1
wait $D1 2>/dev/null
[ -S "$RUNTIMED_SOCKET" ] || fail "no stale socket left by kill -9"
"$RUNTIMED" status >/dev/null 2>&1 && fail "status answered a dead daemon"
out=$("$RUNTIMED" status 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "^runtimed: not running: start it with runtimed " ||
    fail "status of a dead daemon: rc $rc, $out"
ok "after kill -9: stale socket present, status says: $out"

"$RUNTIMED" -D >"$T/d2.log" 2>&1 &
D2=$!
track $D2
wait_status
"$RUNTIMED" status | grep -q "^pid $D2\$" || fail "new daemon not serving"
ok "stale socket replaced by a new daemon (pid $D2)"

# A room with a live kernel, then stop: nothing of it may remain.
pids=$("$RTD_CLIENT" room "$RUNTIMED_SOCKET") || fail "no kernel came up"
agent=${pids% *}
kernel=${pids#* }
kill -0 "$agent" && kill -0 "$kernel" || fail "agent/kernel not running"
"$RUNTIMED" status | grep -q " $kernel  *$agent  " || fail "status: no kernel"
ok "room with kernel: agent $agent, kernel $kernel"

out=$("$RUNTIMED" stop 2>&1) || fail "stop failed: $out"
wait_gone $D2 50 || fail "daemon still running after stop"
wait $D2; rc=$?
[ $rc = 0 ] || fail "daemon exited $rc after stop"
[ -e "$RUNTIMED_SOCKET" ] && fail "socket left after stop"
wait_gone "$agent" 30 || fail "agent $agent survived the stop"
wait_gone "$kernel" 30 || fail "kernel $kernel survived the stop"
ok "runtimed stop: daemon exited 0, socket removed, agent and kernel gone"

# Daemonized starters racing: all succeed, one daemon serves.
for i in 1 2 3; do
	( "$RUNTIMED" -v >"$T/start$i.log" 2>&1; echo $? >"$T/start$i.rc" ) &
done
wait
for i in 1 2 3; do
	[ "$(cat "$T/start$i.rc")" = 0 ] || fail "starter $i: $(cat "$T/start$i.log")"
done
out=$("$RUNTIMED" status) || fail "no daemon after concurrent starts"
D3=$(echo "$out" | sed -n 's/^pid //p')
track $D3
n=$(grep -l "already running (pid $D3)" "$T"/start*.log | wc -l)
[ "$n" = 2 ] || fail "expected 2 'already running', got $n"
ok "3 concurrent daemonized starters: all exit 0, one daemon (pid $D3)"

kill -TERM $D3
wait_gone $D3 80 || fail "SIGTERM did not stop the daemon"
[ -e "$RUNTIMED_SOCKET" ] && fail "socket left after SIGTERM"
grep -q "stopped" "$RUNTIMED_STATE_DIR/runtimed.log" ||
    fail "daemon log lacks the stop"
ok "SIGTERM: graceful stop, socket removed, log in state dir"
