#!/bin/sh
# SPDX-License-Identifier: ISC
# fidelity.sh: the notebook corpus through the real worker and daemon,
# compared byte for byte with nbformat (tests/notebooks/fidelity.py).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
srcdir=${srcdir:-.}
top_builddir=${top_builddir:-$(pwd)}
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import nbformat' 2>/dev/null || {
	skip_missing "/usr/bin/python3 has no nbformat"
}
T=$(mktemp -d /tmp/runtimed-nb.XXXXXX)
trap 'RUNTIMED_SOCKET=$T/run/runtimed.sock RUNTIMED_STATE_DIR=$T/state \
    "$top_builddir/runtimed/runtimed" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
/usr/bin/python3 "$srcdir/tests/notebooks/fidelity.py" "$top_builddir" \
    "$srcdir" "$T"
