#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for web.test.mjs: the live page in Debian's chromium,
# headless, through playwright-core, against this build.  Skips (77)
# without chromium, node, the SDK or playwright-core (run "npm ci" in
# tests/e2e), or when RUNTIMED_SKIP_E2E=1.  playwright-core is pinned to
# 1.61.1 (package.json): the last release that runs on Debian 12's Node 18
# (1.65 needs Node 20); it passes on Node 18 and 20.
srcdir=${srcdir:-.}
if [ "${RUNTIMED_SKIP_E2E:-0}" = 1 ]; then
	echo "web: skipped (RUNTIMED_SKIP_E2E=1)"
	exit 77
fi
. "$srcdir/tests/lib/skip.sh"
[ -x /usr/bin/chromium ] || skip_missing "web: no /usr/bin/chromium"
command -v node >/dev/null 2>&1 || skip_missing "web: no node"
for m in @modelcontextprotocol/sdk playwright-core; do
	if [ ! -d "$srcdir/tests/e2e/node_modules/$m" ]; then
		skip_missing "web: no $m: run 'npm ci' in $srcdir/tests/e2e"
	fi
done
export RUNTIMED_MCP=${RUNTIMED_MCP:-$PWD/runtimed-mcp}
if [ -z "${RUNTIMED_BIN:-}" ]; then
	RUNTIMED_BIN=$PWD/runtimed
	[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$PWD/runtimed/runtimed
fi
export RUNTIMED_BIN
export RUNTIMED_TEST_ARTIFACTS=${RUNTIMED_TEST_ARTIFACTS:-$PWD/tests/e2e/artifacts}
timeout 180 node --test --test-concurrency=1 "$srcdir/tests/e2e/web.test.mjs"
