#!/bin/sh
# SPDX-License-Identifier: ISC
# loglevel.sh: -q and -v on every executable.  A bad frame is a warning:
# logged by default, not under -q, and -v -q is the default again.  The
# daemon gives its level to its agents (with the python3 kernel, else
# that part is skipped) and the proxy to its worker (-q, -vv).
. "${srcdir:-.}/tests/runtimed/lib.sh"
trap '"$RUNTIMED" stop >/dev/null 2>&1; cleanup' EXIT
L=$RUNTIMED_STATE_DIR/runtimed.log
pool=0
jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 ' && pool=1
export RUNTIMED_WARM_POOL=$pool

for b in runtimed/runtimed runtimed-mcp runtimed-mcp-worker runtimed-agent; do
	for o in -q --quiet -v --verbose; do
		"$top_builddir/$b" $o --version >/dev/null 2>&1 ||
		    fail "$b $o --version exits $?"
	done
done
ok "-q, --quiet, -v and --verbose accepted everywhere"

# A frame of garbage before HELLO: a warning.
bad_frame() {
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"\xff" * 64)
time.sleep(0.3)' "$RUNTIMED_SOCKET"
	sleep 0.3
}
# The agent of the warm pool and its flags (none when no pool).
agent_args() {
	[ $pool = 1 ] || return 0
	i=0
	while :; do
		a=$(ps -o pid= --ppid "$1" | tr -d ' ' | head -1)
		[ -n "$a" ] && break
		i=$((i + 1))
		[ $i -gt 100 ] && fail "no warm-pool agent under $1"
		sleep 0.1
	done
	track "$a"
	tr '\0' ' ' <"/proc/$a/cmdline"
}
start() {
	timeout 30 "$RUNTIMED" "$@" || fail "runtimed $* did not start"
	wait_status
	dpid=$("$RUNTIMED" status | sed -n 's/^pid //p')
	track "$dpid"
}
stop() {
	"$RUNTIMED" stop >/dev/null || fail "runtimed stop"
	wait_gone "$dpid" 100 || fail "daemon $dpid did not exit"
}

start -q
args=$(agent_args "$dpid")
bad_frame
stop
grep -q "warn: .*before HELLO" "$L" && fail "runtimed -q logged a warning"
case " $args " in *" -q "*|"  ") ;; *) fail "agent of runtimed -q: $args";; esac
ok "runtimed -q: no warning logged; its agent runs ${args:-(no pool)}"

rm -f "$L"
start -v -q
args=$(agent_args "$dpid")
bad_frame
stop
grep -q "warn: .*before HELLO" "$L" || fail "runtimed -v -q: no warning"
grep -q "info: " "$L" && fail "runtimed -v -q logged info lines"
case " $args " in *" -q "*|*" -v"*) fail "agent of runtimed -v -q: $args";;
esac
ok "runtimed -v -q: warnings, no info, the agent at the default level"

# The proxy's level reaches its worker (its argv, its log).
start
mcp() {
	{
		printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"t","version":"1"}}}' \
		    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notebooks"}}'
		sleep 1
		ps -o args= --ppid "$(cat "$T/mcp.pid")" >"$T/worker.args"
		sleep 0.5
	} | { sh -c 'echo $$ >"$1"; exec "$2" "$3"' sh "$T/mcp.pid" \
	    "$top_builddir/runtimed-mcp" "$1" >"$T/mcp.out" 2>"$T/mcp.err"; }
}
mcp -q
grep -q "runtimed-mcp-worker .*-q" "$T/worker.args" ||
    fail "worker of runtimed-mcp -q: $(cat "$T/worker.args")"
mcp -vv
grep -q "runtimed-mcp-worker .*-vv" "$T/worker.args" ||
    fail "worker of runtimed-mcp -vv: $(cat "$T/worker.args")"
grep -q "runtimed-mcp-worker\[[0-9]*\] debug: tools/call list_notebooks" \
    "$RUNTIMED_STATE_DIR"/logs/mcp-worker-*.log ||
    fail "no debug line in the worker's log under runtimed-mcp -vv"
ok "runtimed-mcp gives -q and -vv to its worker"
