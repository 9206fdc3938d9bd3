#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-waits.sh: waits that wake for the right reason, progress that
# informs, results that say what happened (worker-waits.test.mjs), with
# the SDK client against the real worker, daemon and python3 kernel.
# Skips (77) without node, the SDK (run "npm ci" in tests/e2e) or python3.
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "worker-waits: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "worker-waits: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
if ! "$B/runtimed-agent" --list-kernelspecs 2>/dev/null | grep -q '"python3"'
then
	skip_missing "worker-waits: no python3 kernelspec"
fi
WORKER=$B/runtimed-mcp-worker
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export WORKER RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
exec timeout 300 node --test --test-concurrency=1 \
    "$srcdir/tests/worker/worker-waits.test.mjs"
