#!/bin/sh
# SPDX-License-Identifier: ISC
# nbschema.sh: nbformat's schema on outputs and metadata gives warnings
# where nbformat's own validator refuses, and only there
# (tests/runtimed/nbschema.py, with python3-nbformat as the reference).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed
mkdir "$T/nb"
/usr/bin/python3 "${srcdir:-.}/tests/runtimed/nbschema.py" "$top_builddir" \
    "${srcdir:-.}" "$T/nb" || fail "nbschema.py"
"$RUNTIMED" stop >/dev/null 2>&1
