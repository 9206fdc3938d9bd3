#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-node.sh: the SDK-driven tests of runtimed-mcp-worker
# (worker-tools.test.mjs, or the files named as arguments, in
# tests/worker).  Skips (77) without node or without the SDK in
# tests/e2e/node_modules (run "npm ci" there).
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
if ! command -v node >/dev/null 2>&1; then
	echo "worker-node: skipped: no node on PATH"
	exit 77
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	echo "worker-node: skipped: run 'npm ci' in $srcdir/tests/e2e first"
	exit 77
fi
WORKER=$B/runtimed-mcp-worker
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export WORKER RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
[ $# -gt 0 ] || set -- worker-tools.test.mjs worker-shaping.test.mjs
files=
for f; do
	files="$files $srcdir/tests/worker/$f"
done
# shellcheck disable=SC2086
exec timeout 420 node --test --test-concurrency=1 $files
