#!/bin/sh
# SPDX-License-Identifier: ISC
# fds.sh: the daemon out of file descriptors.  Under a limit of 48, 60
# clients connect at once: the daemon stops accepting while it has no
# room (clients wait in the listen backlog), logs that a bounded number
# of times, keeps serving the clients it has, uses little CPU, answers
# every client once others leave, and says in status how many fit.  The
# soft limit is raised to the hard one.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 150 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
WIRE=$top_builddir/wire-client
. "${srcdir:-.}/tests/lib/skip.sh"
command -v prlimit >/dev/null || skip_missing "no prlimit"
export RUNTIMED_WARM_POOL=0

# utime + stime of a process, in clock ticks.
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

prlimit --nofile=48 "$RUNTIMED" -D >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
out=$("$RUNTIMED" status) || fail "status"
echo "$out" | grep "^descriptors" ||
    fail "status does not say how many peers fit: $out"
ok "under nofile=48: $(echo "$out" | grep '^descriptors')"

t0=$(ticks $D)
s0=$(date +%s%N)
# Each client is held 3 s after its answer, so the last ones are only
# served once the first have left.
out=$("$WIRE" crowd "$RUNTIMED_SOCKET" 60 3000) ||
    fail "not every client was answered: $out"
s1=$(date +%s%N)
t1=$(ticks $D)
ms=$(( (s1 - s0) / 1000000 ))
cpu=$(( (t1 - t0) * 10 ))
ok "60 clients: $out; daemon CPU $cpu ms in $ms ms"
[ $cpu -lt $((ms / 10)) ] || fail "daemon used $cpu ms CPU in $ms ms"

n=$(grep -c "accept" "$T/daemon.log")
bytes=$(wc -c <"$T/daemon.log")
grep "accept" "$T/daemon.log" | head -3
[ "$n" -ge 1 ] && [ "$n" -le 10 ] ||
    fail "$n log lines about accept ($bytes bytes of log)"
ok "$n log lines about accept, log $bytes bytes"

kill -0 $D || fail "the daemon died"
out=$("$RUNTIMED" status) || fail "the daemon stopped serving"
# The status connection itself is no client.
echo "$out" | grep -q "^peers 0$" || fail "clients left behind: $out"
out=$("$WIRE" crowd "$RUNTIMED_SOCKET" 10 0) || fail "after: $out"
ok "serving again after the crowd left: $out"

# The soft limit is raised to the hard one at start.
"$RUNTIMED" stop >/dev/null || fail "stop"
wait $D 2>/dev/null
prlimit --nofile=48:1024 "$RUNTIMED" -D >>"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
out=$("$RUNTIMED" status | grep "^descriptors") || fail "status"
echo "$out" | grep -q " of 1024:" || fail "soft limit 48 not raised: $out"
ok "soft 48, hard 1024: $out"
