#!/bin/sh
# SPDX-License-Identifier: ISC
# resume.sh: upload_file and download_file on a Jupyter Server domain
# whose connection is cut mid-transfer go on where they were, within the
# call (decision 092): a relay of the test's own cuts a download (closed,
# reset, the file changed meanwhile) and an upload's chunks and
# read-back; then the real configurable-http-proxy is killed
# mid-download and started again (tests/remote/resume.py).  SHA-256 at
# both ends; the bytes fetched after a cut are fewer than the file.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

# configurable-http-proxy: npm's (tests/remote, as hub.sh) or Debian's.
CHP=$(cd "${srcdir:-.}/tests/remote" && pwd)/node_modules/.bin/configurable-http-proxy
[ -x "$CHP" ] || CHP=$(command -v configurable-http-proxy 2>/dev/null) || CHP=
# (Debian's bookworm package lacks a module it needs.)
[ -n "$CHP" ] && ! "$CHP" --version >/dev/null 2>&1 && CHP=

start_daemon --warm-pool 0 -v
start_server
$PY "${srcdir:-.}/tests/remote/resume.py" "$top_builddir" "$T" "$SROOT" \
    "$CHP" || fail "resume.py"
ok "transfers cut mid-way resumed, SHA-256 at both ends"
