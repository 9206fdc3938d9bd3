#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-tasks26.sh: the tasks extension of 2026-07-28 (SEP-2663,
# worker-tasks26.test.mjs) with a raw JSON-RPC client through the real
# proxy, worker, daemon and python3 kernel, across a worker SIGKILL.
# Skips (77) without node, tests/e2e's modules ("npm ci" there; lib.mjs
# uses the SDK) or python3.
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "worker-tasks26: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "worker-tasks26: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
if ! "$B/runtimed-agent" --list-kernelspecs 2>/dev/null | grep -q '"python3"'
then
	echo "worker-tasks26: skipped: no python3 kernelspec"
	exit 77
fi
RUNTIMED_MCP=$B/runtimed-mcp
WORKER=$B/runtimed-mcp-worker
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export RUNTIMED_MCP WORKER RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
exec timeout 240 node --test --test-concurrency=1 \
    "$srcdir/tests/worker/worker-tasks26.test.mjs"
