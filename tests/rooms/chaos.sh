#!/bin/sh
# SPDX-License-Identifier: ISC
# chaos.sh: two clients make scripted edits while the daemon is killed
# with SIGKILL at random moments; no acknowledged edit may be lost, and
# the autosaved file is always a valid notebook (old or new, never
# torn).  Default: 200 edits, 3 kills.  RUNTIMED_CHAOS_FULL=1: 20 rounds
# of 1,000 edits and 3 kills each.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 3000 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
# No kernel is needed: the rooms carry edits only.
export RUNTIMED_KERNEL_KEEPALIVE=0
rounds=1 edits=200
if [ "${RUNTIMED_CHAOS_FULL:-0}" = 1 ]; then
	rounds=20 edits=1000
fi
r=1
while [ $r -le $rounds ]; do
	mkdir -p "$T/r$r"
	"$ROOMS_CLIENT" chaos "$RUNTIMED_SOCKET" "$T/r$r" "$RUNTIMED" \
	    $edits 3 || fail "chaos round $r"
	r=$((r + 1))
done
ok "chaos: $rounds round(s) of $edits edits"
