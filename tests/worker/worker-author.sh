#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-author.sh: each cell's last editor in outlines (issue 39;
# worker-author.test.mjs) with two SDK clients through the real proxy,
# worker and daemon, across a daemon SIGKILL.  Skips (77) without node
# or the SDK (run "npm ci" in tests/e2e).
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "worker-author: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "worker-author: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
RUNTIMED_MCP=$B/runtimed-mcp
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export RUNTIMED_MCP RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
exec timeout 180 node --test --test-concurrency=1 \
    "$srcdir/tests/worker/worker-author.test.mjs"
