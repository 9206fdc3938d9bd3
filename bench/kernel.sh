#!/bin/sh
# SPDX-License-Identifier: ISC
# Kernel benchmarks, side by side with jupyter_client and raw pyzmq in the
# same run.  usage: bench/kernel.sh [runtimed-mcp] [iterations]
# Run from the source tree after `make install` (or pass the proxy path).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proxy=${1:-runtimed-mcp}
n=${2:-200}
# An install finds its worker, daemon and agent relative to the proxy by
# itself; a build tree needs its top directory searched.
case $proxy in
*/*)	bin=$(cd "$(dirname "$proxy")" && pwd)
	RUNTIMED_LIBEXEC_DIR=${RUNTIMED_LIBEXEC_DIR:-$bin}
	export RUNTIMED_LIBEXEC_DIR
	RUNTIMED_BIN=${RUNTIMED_BIN:-$bin/runtimed}
	export RUNTIMED_BIN;;
esac
ref=$(mktemp)
trap 'rm -f "$ref"' EXIT
echo "reference: jupyter_client and raw pyzmq ($n iterations)..." >&2
/usr/bin/python3 "$here/ref_kernel.py" --iterations "$n" > "$ref"
echo "runtimed: through $proxy..." >&2
node "$here/kernel.mjs" "$proxy" "$ref" "$n"
