#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for the clients suite (tests/clients/clients.test.mjs):
# the real Claude Code and Codex CLIs, pinned in tests/clients/
# package.json, drive this build's runtimed-mcp against a scripted model
# on 127.0.0.1, and the suite asserts on what each client hands its
# model (issue 34).  Skips (77) only when RUNTIMED_SKIP_CLIENTS=1
# (scripts/test.sh runs the suite itself against the installed tree) or
# without node (a failure under CI=true, tests/lib/skip.sh); without the
# pinned CLIs (run "npm ci" in tests/clients)
# it fails: a suite that skipped them would prove nothing.
srcdir=${srcdir:-.}
if [ "${RUNTIMED_SKIP_CLIENTS:-0}" = 1 ]; then
	echo "clients: skipped (RUNTIMED_SKIP_CLIENTS=1)"
	exit 77
fi
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v node >/dev/null 2>&1; then
	skip_missing "clients: no node on PATH"
fi
D=$srcdir/tests/clients
for f in node_modules/@anthropic-ai/claude-code/bin/claude.exe \
    node_modules/@openai/codex/bin/codex.js node_modules/node/bin/node \
    node_modules/@modelcontextprotocol/sdk/package.json; do
	if [ ! -e "$D/$f" ]; then
		echo "clients: FAILED: $D/$f is missing; run 'npm ci' in $D" >&2
		exit 1
	fi
done
RUNTIMED_MCP=${RUNTIMED_MCP:-$PWD/runtimed-mcp}
if [ -z "${RUNTIMED_BIN:-}" ]; then
	RUNTIMED_BIN=$PWD/runtimed
	[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$PWD/runtimed/runtimed
fi
export RUNTIMED_MCP RUNTIMED_BIN
# Node 22 from the same package.json runs the suite (the clients need
# it; the machine's node may be older).
timeout 600 "$D/node_modules/node/bin/node" --test --test-concurrency=1 \
    "$D/clients.test.mjs"
