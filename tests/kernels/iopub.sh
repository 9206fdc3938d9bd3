#!/bin/sh
# SPDX-License-Identifier: ISC
# iopub.sh: update_display_data across cells, clear_output(wait=True),
# merged streams, comm messages, input(); a 2 MiB output through the
# blob store and BLOB_GET.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/kernels/lib.sh"

export RUNTIMED_WARM_POOL=1
start_daemon
"$KC" display "$RUNTIMED_SOCKET" || fail "display"
"$KC" blob "$RUNTIMED_SOCKET" || fail "blob"
n=$(find "$RUNTIMED_STATE_DIR/blobs" -type f | wc -l)
[ "$n" -ge 1 ] || fail "no file in the blob store"
ok "blob store holds $n file(s)"
"$RUNTIMED" stop || fail "stop"
wait $D || fail "daemon exited $?"
ok "daemon stopped cleanly"
