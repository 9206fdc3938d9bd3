#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-node.sh: the SDK-driven tests of runtimed-mcp-worker
# (worker-tools.test.mjs, or the files named as arguments, in
# tests/worker).  Skips (77) without node or without the SDK in
# tests/e2e/node_modules (run "npm ci" there).
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "worker-node: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "worker-node: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
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
