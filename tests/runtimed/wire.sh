#!/bin/sh
# SPDX-License-Identifier: ISC
# wire.sh: the handshake against the real daemon.  A client that never
# sends HELLO is closed after 5 s while others are served; a header
# declaring 64 MiB before HELLO is refused at once with nothing of its
# body buffered; the daemon lives on.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
WIRE=$top_builddir/wire-client

"$RUNTIMED" -D >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status

hwm() {
	awk '/^VmHWM/ { print $2 }' "/proc/$D/status"
}

# Silent clients: closed after about 5 s; meanwhile status is answered.
"$WIRE" idle "$RUNTIMED_SOCKET" >"$T/idle1.out" 2>&1 &
I1=$!
"$WIRE" idle "$RUNTIMED_SOCKET" >"$T/idle2.out" 2>&1 &
I2=$!
track $I1 $I2
for i in 1 2 3; do
	sleep 1
	"$RUNTIMED" status >/dev/null || fail "status not answered beside " \
	    "a silent client"
done
wait $I1 || fail "silent client: $(cat "$T/idle1.out")"
wait $I2 || fail "silent client: $(cat "$T/idle2.out")"
for f in "$T/idle1.out" "$T/idle2.out"; do
	ms=$(sed -n 's/^closed after \([0-9]*\) ms$/\1/p' "$f")
	[ -n "$ms" ] && [ "$ms" -ge 4500 ] && [ "$ms" -le 8000 ] ||
	    fail "silent client: $(cat "$f"), wanted about 5000 ms"
done
n=$(grep -c "no HELLO within 5 s" "$T/daemon.log")
[ "$n" = 2 ] || fail "$n log lines for 2 silent clients"
for p in $I1 $I2; do
	grep "no HELLO within 5 s" "$T/daemon.log" | grep -q "pid $p[^0-9]" ||
	    fail "no log line names pid $p: $(grep HELLO "$T/daemon.log")"
done
ok "silent clients closed: $(cat "$T/idle1.out"), $(cat "$T/idle2.out");" \
    "status served meanwhile; logged once each"

# 64 MiB declared before HELLO, as ROOM_CONTENT (121), MCP (300) and
# HELLO (1): refused on the header, the daemon's peak RSS unchanged.
before=$(hwm)
for type in 121 300 1; do
	out=$("$WIRE" prehello "$RUNTIMED_SOCKET" $type 2>&1) ||
	    fail "type $type before HELLO: $out"
	ok "64 MiB header of type $type before HELLO: $out"
done
after=$(hwm)
[ $((after - before)) -lt 2048 ] ||
    fail "peak RSS grew from $before to $after kB"
n=$(grep -c "before HELLO" "$T/daemon.log")
[ "$n" = 3 ] || fail "$n refusals logged for 3 big pre-HELLO frames"
grep "before HELLO" "$T/daemon.log" | head -1
ok "daemon peak RSS $before kB -> $after kB"

kill -0 $D || fail "the daemon died"
"$RUNTIMED" status >/dev/null || fail "the daemon stopped serving"
ok "daemon alive and serving"
