#!/bin/sh
# SPDX-License-Identifier: ISC
# Run agent-live (the real runtimed-agent on a real kernel) under a
# watchdog: python3 with no argument, else the family test of the
# kernelspec named (exit 77, a skip, when it is not installed).
# agent-live kills what it starts on exit; the timeout covers a hang, and
# the trap the rest of its process group.
builddir=${builddir:-.}
RUNTIMED_LIBEXEC_DIR=$(cd "$builddir" && pwd)
PYDEVD_DISABLE_FILE_VALIDATION=1
export RUNTIMED_LIBEXEC_DIR PYDEVD_DISABLE_FILE_VALIDATION
trap 'kill $pid 2>/dev/null' INT TERM
timeout 180 "$builddir/test-agent-live" "$@" &
pid=$!
wait $pid
rc=$?
# A kernelspec not installed (77): scripts/install-deps.sh installs all
# three, so under CI=true that is a failure (tests/lib/skip.sh).
if [ $rc = 77 ]; then
	. "${srcdir:-.}/tests/lib/skip.sh"
	skip_missing "the ${1:-python3} kernelspec"
fi
exit $rc
