#!/bin/sh
# SPDX-License-Identifier: ISC
# diskfull.sh: after a full disk clears, edits succeed again (issue 35).
# The state directory is a 6 MB tmpfs of a private mount namespace
# (unshare -rm: no root needed; in a chroot, where that is refused, a
# tmpfs mounted through sudo); tests/runtimed/diskfull.py fills and
# frees it from another process while a worker edits.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
if [ -z "${RUNTIMED_DISKFULL_NS:-}" ]; then
	unshare -rm true 2>/dev/null &&
	    RUNTIMED_DISKFULL_NS=1 exec unshare -rm "$0" "$@"
	# A chrooted process may make no user namespace (.ci/run's fresh
	# root, where unshare -m cannot change / either): root mounts the
	# tmpfs through sudo, and unmounts it after the test.
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		small=$(mktemp -d /tmp/runtimed-diskfull.XXXXXX)
		trap 'sudo -n umount "$small" 2>/dev/null; rmdir "$small"' EXIT
		trap 'exit 1' INT TERM
		sudo -n mount -t tmpfs \
		    -o "size=6m,mode=0700,uid=$(id -u),gid=$(id -g)" tmpfs \
		    "$small" || { echo "FAIL: mount a 6 MB tmpfs"; exit 1; }
		RUNTIMED_DISKFULL_NS=sudo RUNTIMED_DISKFULL_SMALL=$small \
		    "$0" "$@"
		exit
	fi
	echo "skip: this kernel allows no user namespace (unshare -rm), and sudo -n is not allowed"
	exit 77
fi
. "${srcdir:-.}/tests/runtimed/lib.sh"
trap 'cleanup_small' EXIT
cleanup_small() {
	"$RUNTIMED" stop >/dev/null 2>&1
	[ "$RUNTIMED_DISKFULL_NS" = sudo ] || umount "$small" 2>/dev/null
	cleanup
}

if [ "$RUNTIMED_DISKFULL_NS" = sudo ]; then
	small=$RUNTIMED_DISKFULL_SMALL
else
	small=$T/small
	mkdir "$small"
	mount -t tmpfs -o size=6m tmpfs "$small" || fail "mount a 6 MB tmpfs"
fi
mkdir -m 700 "$small/state"
export RUNTIMED_STATE_DIR=$small/state RUNTIMED_AUTOSAVE=0
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed
"$RUNTIMED" -D --warm-pool 0 >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
printf '%s\n' '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}' \
    >"$T/nb.ipynb"
/usr/bin/python3 "${srcdir:-.}/tests/runtimed/diskfull.py" "$top_builddir" \
    "${srcdir:-.}" "$T/nb.ipynb" "$small" ||
    fail "edits after the disk was freed (state: $(ls -l "$small/state"))"
