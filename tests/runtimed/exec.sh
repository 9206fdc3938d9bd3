#!/bin/sh
# SPDX-License-Identifier: ISC
# exec.sh: requests end to end on a real kernel.  Create a notebook,
# insert x = 6*7; print(x), run it, wait for 42, save, and check the file
# with Jupyter's nbformat; typed errors; a version-99 HELLO; interrupt,
# restart and kernel death; reads during a run see every output.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"

[ -x "$top_builddir/runtimed-agent" ] || fail "runtimed-agent not built"
"$RUNTIMED" -D -v >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status

mkdir "$T/nb"
"$RTD_CLIENT" exec "$RUNTIMED_SOCKET" "$T/nb/test.ipynb" ||
    fail "exec scenario"
/usr/bin/python3 -c 'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))' \
    "$T/nb/test.ipynb" || fail "nbformat rejects the saved file"
grep -q '"42\\n"' "$T/nb/test.ipynb" || fail "saved file lacks the output"
ok "saved notebook validates with nbformat and holds the output"

: >"$T/nb/exists.ipynb"
"$RTD_CLIENT" errors "$RUNTIMED_SOCKET" "$T/nb" || fail "errors scenario"
"$RTD_CLIENT" mismatch "$RUNTIMED_SOCKET" || fail "mismatch scenario"
"$RTD_CLIENT" kernel "$RUNTIMED_SOCKET" || fail "kernel scenario"
"$RTD_CLIENT" streamread "$RUNTIMED_SOCKET" || fail "streamread scenario"
kill -0 $D || fail "daemon died"

"$RUNTIMED" stop || fail "stop"
wait $D; rc=$?
[ $rc = 0 ] || fail "daemon exited $rc"
ok "daemon stopped cleanly"
