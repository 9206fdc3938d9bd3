#!/bin/sh
# SPDX-License-Identifier: ISC
# relocate.sh: "make install prefix=DIR", move DIR, and the moved tree
# still works: runtimed-mcp finds its worker, the worker the daemon, the
# daemon the agent, each relative to its own executable (no
# RUNTIMED_LIBEXEC_DIR), and one cell runs on a real Python kernel.  With
# the worker removed, initialize is refused with a message naming the
# paths tried.  Needs the python3 kernel (else 77).
set -u
top_builddir=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
unset RUNTIMED_LIBEXEC_DIR
export PYDEVD_DISABLE_FILE_VALIDATION=1
. "${srcdir:-.}/tests/lib/skip.sh"
if ! jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 '; then
	skip_missing "relocate: no python3 kernel"
fi
T=$(mktemp -d /tmp/runtimed-reloc.XXXXXX)
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
cleanup() {
	[ -x "$T/moved/bin/runtimed" ] && "$T/moved/bin/runtimed" stop \
	    >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*" >&2
	for f in "$RUNTIMED_STATE_DIR"/runtimed.log \
	    "$RUNTIMED_STATE_DIR"/logs/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
	done
	exit 1
}

make -C "$top_builddir" install prefix="$T/inst" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "make install prefix=$T/inst"; }
mv "$T/inst" "$T/moved"
P=$T/moved
[ -x "$P/bin/runtimed-mcp" ] || fail "no bin/runtimed-mcp"
[ -x "$P/libexec/runtimed/runtimed-mcp-worker" ] ||
    fail "no libexec/runtimed/runtimed-mcp-worker"

timeout 240 python3 "$srcdir/tests/install/mcp-smoke.py" \
    "$P/bin/runtimed-mcp" "$T/smoke.ipynb" || fail "the moved tree"
echo "ok: the moved tree ran a cell"
empty=$(find "$RUNTIMED_STATE_DIR/logs" -name 'mcp-worker-*.log' -empty)
[ -z "$empty" ] || fail "empty worker logs left: $empty"
"$P/bin/runtimed" stop >/dev/null 2>&1 || fail "runtimed stop"

rm "$P/libexec/runtimed/runtimed-mcp-worker"
timeout 120 python3 "$srcdir/tests/install/mcp-smoke.py" --unavailable \
    "$P/bin/runtimed-mcp" "$P/libexec/runtimed/runtimed-mcp-worker" ||
    fail "a missing worker"
echo "ok: a missing worker is named to the client"
