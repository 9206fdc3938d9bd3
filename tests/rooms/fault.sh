#!/bin/sh
# SPDX-License-Identifier: ISC
# fault.sh: a mutation is applied if and only if it was acknowledged.
# The daemon's file writes are made to fail (RLIMIT_FSIZE lowered with
# prlimit, SQLite answers "database or disk is full"): every mutation
# is refused and changes nothing, not even seq, dirty or watchers; a
# save still writes the acknowledged content and its bookkeeping reaches
# the store later; outputs that land meanwhile are persisted later; the
# same batch applies once when the fault is lifted.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
mkdir -p "$T/nb"

# Wait for a line in $1 from client pid $2.
wait_line() {
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && fail "$3 did not finish"
		kill -0 "$2" 2>/dev/null || { cat "$1.err" >&2; fail "$3 failed"; }
		sleep 0.1
	done
}

start_daemon
"$ROOMS_CLIENT" fault1 "$RUNTIMED_SOCKET" "$T/nb" >"$T/out1" 2>"$T/out1.err" &
CL=$!
track $CL
until grep -q '^[0-9a-f]\{8\}-' "$T/out1" 2>/dev/null; do
	kill -0 $CL 2>/dev/null || { cat "$T/out1" "$T/out1.err"; fail "fault1"; }
	sleep 0.1
done
cat "$T/out1"
read ID C0 C1 <<EOT
$(grep '^[0-9a-f]\{8\}-' "$T/out1")
EOT
sleep 2		# the store catches up once it can write
kill9_daemon
kill $CL 2>/dev/null

start_daemon
"$ROOMS_CLIENT" fault2 "$RUNTIMED_SOCKET" "$T/nb" "$ID" "$C0" >"$T/out2" \
    2>"$T/out2.err" &
CL=$!
track $CL
until grep -q '^ready' "$T/out2" 2>/dev/null; do
	kill -0 $CL 2>/dev/null || { cat "$T/out2" "$T/out2.err"; fail "fault2"; }
	sleep 0.1
done
grep -v '^ready' "$T/out2"
sleep 2
kill9_daemon
kill $CL 2>/dev/null

start_daemon
"$ROOMS_CLIENT" fault3 "$RUNTIMED_SOCKET" "$ID" || fail "fault3"
"$RUNTIMED" stop >/dev/null || fail "stop"
