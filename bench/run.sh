#!/bin/sh
# SPDX-License-Identifier: ISC
# Every benchmark, one markdown table (bench/run.mjs; method in
# docs/decisions/020-benchmark-method.md).
#	bench/run.sh [--quick|--full] [--only SECTION,...] [BUILDDIR]
# --quick (the default) takes at most 5 minutes on 2 cores; --full runs
# more rounds and samples.  BUILDDIR (default: build, else .) is a
# configured build tree after "make bench-ipynb"; the table goes to
# stdout and BUILDDIR/bench-results.md.  Needs "npm ci" in tests/e2e
# (the official MCP SDK client) and python3-zmq, jupyter-client and
# python3-nbformat for the references.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
mode=--quick
only=
b=
while [ $# -gt 0 ]; do
	case $1 in
	--quick|--full) mode=$1;;
	--only)	only="--only $2"; shift;;
	-*)	echo "usage: bench/run.sh [--quick|--full] [--only S,...]" \
		    "[BUILDDIR]" >&2; exit 2;;
	*)	b=$1;;
	esac
	shift
done
if [ -z "$b" ]; then
	b=$src/build
	[ -x "$b/runtimed-mcp" ] || b=.
fi
b=$(cd "$b" && pwd)
if [ ! -x "$b/runtimed-mcp" ]; then
	echo "bench/run.sh: no runtimed-mcp in $b: build first" >&2
	exit 1
fi
if [ ! -d "$src/tests/e2e/node_modules" ]; then
	echo "bench/run.sh: run \"npm ci\" in $src/tests/e2e first" >&2
	exit 1
fi
RUNTIMED_MCP=$b/runtimed-mcp
RUNTIMED_BIN=$b/runtimed/runtimed
RUNTIMED_LIBEXEC_DIR=$b:$b/runtimed
export RUNTIMED_MCP RUNTIMED_BIN RUNTIMED_LIBEXEC_DIR
# shellcheck disable=SC2086
exec node "$src/bench/run.mjs" --build "$b" $mode $only \
    --out "$b/bench-results.md"
