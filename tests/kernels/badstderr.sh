#!/bin/sh
# SPDX-License-Identifier: ISC
# badstderr.sh: a kernel that dies at startup writing Latin-1 on stderr
# puts no invalid UTF-8 on MCP stdout (tests/kernels/badstderr.py).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
srcdir=${srcdir:-.}
top_builddir=${top_builddir:-$(pwd)}
T=$(mktemp -d /tmp/runtimed-badstderr.XXXXXX)
trap 'RUNTIMED_SOCKET=$T/run/runtimed.sock RUNTIMED_STATE_DIR=$T/state \
    "$top_builddir/runtimed/runtimed" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
/usr/bin/python3 "$srcdir/tests/kernels/badstderr.py" "$top_builddir" \
    "$srcdir" "$T"
