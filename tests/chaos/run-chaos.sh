#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for the chaos suite (tests/chaos/chaos.mjs) against the
# binaries of this build: 20 s of workload by default, 180 s with
# RUNTIMED_CHAOS_FULL=1 ("make chaos").  Skips (77) without node or the
# SDK (run "npm ci" in tests/e2e).
srcdir=${srcdir:-.}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "chaos: no node on PATH"
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	skip_missing "chaos: no MCP SDK: run 'npm ci' in $srcdir/tests/e2e"
fi
RUNTIMED_MCP=${RUNTIMED_MCP:-$PWD/runtimed-mcp}
if [ -z "${RUNTIMED_BIN:-}" ]; then
	RUNTIMED_BIN=$PWD/runtimed
	[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$PWD/runtimed/runtimed
fi
export RUNTIMED_MCP RUNTIMED_BIN
limit=120
[ "${RUNTIMED_CHAOS_FULL:-0}" = 1 ] && limit=600
exec timeout $limit node "$srcdir/tests/chaos/chaos.mjs"
