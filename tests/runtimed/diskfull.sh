#!/bin/sh
# SPDX-License-Identifier: ISC
# diskfull.sh: after a full disk clears, edits succeed again (issue 35).
# The state directory is a 6 MB tmpfs of a private mount namespace
# (unshare -rm: no root needed); tests/runtimed/diskfull.py fills and
# frees it from another process while a worker edits.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
if [ -z "${RUNTIMED_DISKFULL_NS:-}" ]; then
	unshare -rm true 2>/dev/null || {
		echo "skip: this kernel allows no user namespace (unshare -rm)"
		exit 77
	}
	RUNTIMED_DISKFULL_NS=1 exec unshare -rm "$0" "$@"
fi
. "${srcdir:-.}/tests/runtimed/lib.sh"
trap 'cleanup_small' EXIT
cleanup_small() {
	"$RUNTIMED" stop >/dev/null 2>&1
	umount "$T/small" 2>/dev/null
	cleanup
}

mkdir "$T/small"
mount -t tmpfs -o size=6m tmpfs "$T/small" || fail "mount a 6 MB tmpfs"
mkdir -m 700 "$T/small/state"
export RUNTIMED_STATE_DIR=$T/small/state RUNTIMED_AUTOSAVE=0
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed
"$RUNTIMED" -D --warm-pool 0 >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
printf '%s\n' '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}' \
    >"$T/nb.ipynb"
/usr/bin/python3 "${srcdir:-.}/tests/runtimed/diskfull.py" "$top_builddir" \
    "${srcdir:-.}" "$T/nb.ipynb" "$T/small" ||
    fail "edits after the disk was freed (state: $(ls -l "$T/small/state"))"
