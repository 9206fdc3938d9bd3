#!/bin/sh
# SPDX-License-Identifier: ISC
# takeup.sh: a transfer whose worker was killed mid-way is taken up by
# the next call for it in a new worker (decision 098): a download killed
# at 16 MiB of 64 goes on with a Range from what was kept; the file
# changed meanwhile, a tampered leftover, a record a day old
# (tests/remote/takeup.py).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

start_daemon --warm-pool 0 -v
start_server
$PY "${srcdir:-.}/tests/remote/takeup.py" "$top_builddir" "$T" "$SROOT" ||
    fail "takeup.py"
ok "transfers whose worker was killed taken up by the next call"
