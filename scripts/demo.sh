#!/bin/sh
# SPDX-License-Identifier: ISC
# The demo, in one command: install the dependencies (Debian 12), build,
# install under build/_inst (no root needed for that), then let the
# official MCP SDK client drive the installed runtimed-mcp: create a
# notebook, add "x = 6*7; print(x)", run it on a real Python kernel, print
# the output, save the notebook, stop the private daemon.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$ROOT/build/demo
PREFIX=$ROOT/build/_inst
LOG=$ROOT/build/demo-build.log

# Only what the demo needs; scripts/test.sh installs the rest.
sh scripts/install-deps.sh --demo

mkdir -p "$BUILD"
: >"$LOG"
run() {
	if ! "$@" >>"$LOG" 2>&1; then
		echo "demo: '$*' failed; the end of $LOG:" >&2
		tail -n 40 "$LOG" >&2
		exit 1
	fi
}
echo "demo: building (log: $LOG)"
[ -x configure ] || run ./autogen.sh
cd "$BUILD"
[ -f Makefile ] || run "$ROOT/configure" --prefix="$PREFIX"
run make -j2
run make install
echo "demo: installed under $PREFIX"

cd "$ROOT/tests/e2e"
if [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
	echo "demo: installing the MCP SDK client (npm ci --omit=dev)"
	run npm ci --omit=dev --no-audit --no-fund
fi
RUNTIMED_MCP=$PREFIX/bin/runtimed-mcp RUNTIMED_BIN=$PREFIX/bin/runtimed \
RUNTIMED_DEMO_OUT=$ROOT/build/demo.ipynb \
    exec node demo.mjs
