#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-merge.sh: a person's editor saving the notebook while an agent
# edits and runs (worker-merge.test.mjs), with the SDK client against the
# real worker, daemon and python3 kernel, and /usr/bin/python3 nbformat.
# Skips (77) without node, the SDK (run "npm ci" in tests/e2e) or python3.
srcdir=${srcdir:-.}
B=${abs_top_builddir:-$PWD}
if ! command -v node >/dev/null 2>&1; then
	echo "worker-merge: skipped: no node on PATH"
	exit 77
fi
if [ ! -d "$srcdir/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
	echo "worker-merge: skipped: run 'npm ci' in $srcdir/tests/e2e first"
	exit 77
fi
if ! /usr/bin/python3 -c 'import nbformat' 2>/dev/null; then
	echo "worker-merge: skipped: no nbformat for /usr/bin/python3"
	exit 77
fi
if ! "$B/runtimed-agent" --list-kernelspecs 2>/dev/null | grep -q '"python3"'
then
	echo "worker-merge: skipped: no python3 kernelspec"
	exit 77
fi
WORKER=$B/runtimed-mcp-worker
RUNTIMED_BIN=$B/runtimed/runtimed
[ -f "$RUNTIMED_BIN" ] || RUNTIMED_BIN=$B/runtimed
RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$(dirname "$RUNTIMED_BIN"):$B}
export WORKER RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
exec timeout 300 node --test --test-concurrency=1 \
    "$srcdir/tests/worker/worker-merge.test.mjs"
