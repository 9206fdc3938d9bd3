#!/bin/sh
# SPDX-License-Identifier: ISC
# changes.sh: ROOM_CHANGED to every peer, ROOM_CHANGES, if_seq, move,
# clear_outputs, notebook_metadata, integer cell references.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
start_daemon
"$ROOMS_CLIENT" changes "$RUNTIMED_SOCKET" || fail "changes"
"$RUNTIMED" stop >/dev/null || fail "stop"
