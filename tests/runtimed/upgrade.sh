#!/bin/sh
# SPDX-License-Identifier: ISC
# upgrade.sh: nbformat 1-3 notebooks open through the real worker and
# daemon and save as nbformat's own upgrade writes them (upgrade.py).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
top_builddir=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import nbformat' 2>/dev/null || {
	skip_missing "/usr/bin/python3 has no nbformat"
}
for f in runtimed-mcp-worker runtimed/runtimed runtimed-agent; do
	[ -x "$top_builddir/$f" ] || { echo "missing $f"; exit 77; }
done
exec /usr/bin/python3 "$srcdir/tests/runtimed/upgrade.py" \
    "$top_builddir/runtimed-mcp-worker" "$srcdir/tests/notebooks/upgrade"
