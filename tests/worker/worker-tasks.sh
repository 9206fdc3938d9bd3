#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-tasks.sh: run_cells as MCP tasks (worker-tasks.test.mjs) with the
# SDK client's experimental tasks API through the real proxy, worker,
# daemon and python3 kernel, across a worker and a daemon SIGKILL.
# Skips (77) without node, the SDK (run "npm ci" in tests/e2e) or python3.
# worker-tasks26.sh runs its own test file through this one
# (WORKER_TASKS_TEST).
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "worker-tasks: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "worker-tasks: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
if ! "$B/runtimed-agent" --list-kernelspecs 2>/dev/null | grep -q '"python3"'
then
	echo "worker-tasks: skipped: no python3 kernelspec"
	exit 77
fi
RUNTIMED_MCP=$B/runtimed-mcp
WORKER=$B/runtimed-mcp-worker
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export RUNTIMED_MCP WORKER RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
exec timeout 240 node --test --test-concurrency=1 \
    "$srcdir/tests/worker/${WORKER_TASKS_TEST:-worker-tasks.test.mjs}"
