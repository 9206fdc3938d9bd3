#!/bin/sh
# SPDX-License-Identifier: ISC
# grace.sh: rooms with no peers and no kernel unload after the grace
# period; their state stays in the store and comes back.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_KERNEL_KEEPALIVE=0
mkdir -p "$T/nb"
start_daemon --room-grace 0.5
"$ROOMS_CLIENT" grace "$RUNTIMED_SOCKET" "$T/nb" || fail "grace"
"$RUNTIMED" stop >/dev/null || fail "stop"
