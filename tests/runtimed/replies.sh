#!/bin/sh
# SPDX-License-Identifier: ISC
# replies.sh: every request is answered, even when its reply would be
# over its frame cap: an edit batch with a reply past the old 1 MiB cap,
# a batch past the limit refused before any of it applies, a notebook
# too large to send answered with a typed error (issue 10 item 4).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 600 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"

"$RUNTIMED" -D --no-autosave >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
"$RTD_CLIENT" replies "$RUNTIMED_SOCKET" || fail "replies scenario"
kill -0 $D || fail "the daemon died"
ok "the daemon lives on"
