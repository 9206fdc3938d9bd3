#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for the e2e suite (tests/e2e/e2e.test.mjs, and
# kernels.test.mjs: python3, ir, xpython, each skipped if absent; and
# versions.test.mjs: two agents racing on one cell)
# against the binaries of this build.  Skips (77) without node or without
# the SDK (run "npm ci" in tests/e2e), or when RUNTIMED_SKIP_E2E=1
# (scripts/test.sh runs the suite itself against the installed tree).
srcdir=${srcdir:-.}
if [ "${RUNTIMED_SKIP_E2E:-0}" = 1 ]; then
	echo "e2e: skipped (RUNTIMED_SKIP_E2E=1)"
	exit 77
fi
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "e2e: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "e2e: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
RUNTIMED_MCP=${RUNTIMED_MCP:-$PWD/runtimed-mcp}
# The daemon is built as runtimed/runtimed (a directory runtimed/ holds
# its objects), installed as bin/runtimed.
if [ -z "${RUNTIMED_BIN:-}" ]; then
	RUNTIMED_BIN=$PWD/runtimed
	[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$PWD/runtimed/runtimed
fi
export RUNTIMED_MCP RUNTIMED_BIN
timeout 900 node --test --test-concurrency=1 \
    "$srcdir/tests/e2e/e2e.test.mjs" "$srcdir/tests/e2e/kernels.test.mjs" \
    "$srcdir/tests/e2e/versions.test.mjs"
