#!/bin/sh
# SPDX-License-Identifier: ISC
# durable.sh: untitled notebooks and unsaved edits of file-backed ones
# survive kill -9 of the daemon and come back by path and by id; a
# missing file is notebook_unavailable by path, its unsaved copy is
# still there by id.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
mkdir -p "$T/nb"

start_daemon
"$ROOMS_CLIENT" durable1 "$RUNTIMED_SOCKET" "$T/nb" >"$T/ids" &
CL=$!
track $CL
i=0
while [ ! -s "$T/ids" ]; do
	i=$((i + 1))
	[ $i -gt 600 ] && fail "durable1 did not finish"
	kill -0 $CL 2>/dev/null || fail "durable1 failed"
	sleep 0.1
done
read UID_ FID <"$T/ids"
kill9_daemon
kill $CL 2>/dev/null
ok "state made (untitled $UID_, file $FID), daemon killed with SIGKILL"

start_daemon
"$ROOMS_CLIENT" durable2 "$RUNTIMED_SOCKET" "$T/nb" "$UID_" "$FID" ||
    fail "durable2"
kill9_daemon

rm -f "$T/nb/f.ipynb"
start_daemon
"$ROOMS_CLIENT" durable3 "$RUNTIMED_SOCKET" "$T/nb" "$FID" ||
    fail "durable3"
/usr/bin/python3 -c 'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))' \
    "$T/nb/f.ipynb" || fail "restored file does not validate"
ok "restored file validates with nbformat"
"$RUNTIMED" stop >/dev/null || fail "stop"
