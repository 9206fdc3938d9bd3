#!/bin/sh
# SPDX-License-Identifier: ISC
# watch.sh: outside changes to a notebook file, merged (decision 056):
# clean and dirty rooms, and our own saves ignored.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
mkdir -p "$T/nb"
start_daemon
"$ROOMS_CLIENT" watch "$RUNTIMED_SOCKET" "$T/nb" || fail "watch"
"$RUNTIMED" stop >/dev/null || fail "stop"
