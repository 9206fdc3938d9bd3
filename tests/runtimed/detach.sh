#!/bin/sh
# SPDX-License-Identifier: ISC
# detach.sh: the daemon lets go of whoever started it.  "runtimed 2>&1 |
# cat" returns (no warm-pool agent holds the pipe); a daemon started with
# its stderr on some other process's log (as a worker's on-demand start
# does) leaves that log open in none of its agents, whose stdout and
# stderr are the daemon's own log; and after "runtimed stop" no empty
# kernel directory or empty runtimed.log is left, even when another
# daemon started meanwhile and found it running.  Needs the python3 kernel (else 77).
. "${srcdir:-.}/tests/runtimed/lib.sh"
# A daemon that failed a check may not be tracked yet: stop it too.
trap '"$RUNTIMED" stop >/dev/null 2>&1; cleanup' EXIT
. "${srcdir:-.}/tests/lib/skip.sh"
if ! jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 '; then
	skip_missing "detach: no python3 kernel"
fi

# The warm pool (1 kernel) starts an agent before the daemon is ready.
export RUNTIMED_WARM_POOL=1
timeout 30 sh -c '"$1" 2>&1 | cat' sh "$RUNTIMED" >"$T/piped.out" ||
    fail "runtimed 2>&1 | cat did not return in 30 s"
ok "runtimed 2>&1 | cat returned"
wait_status
"$RUNTIMED" stop >/dev/null || fail "runtimed stop"

# As a worker starts it: stderr on the worker's log, stdout to it too.
: >"$T/worker.log"
timeout 30 "$RUNTIMED" >>"$T/worker.log" 2>&1 ||
    fail "runtimed did not start"
wait_status
dpid=$("$RUNTIMED" status | sed -n 's/^pid //p')
track "$dpid"
i=0
agent=
while [ -z "$agent" ]; do
	agent=$(ps -o pid= --ppid "$dpid" | tr -d ' ' | head -1)
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no warm-pool agent under the daemon"
	[ -n "$agent" ] || sleep 0.1
done
track "$agent"
# A second start finds it running: it opened the log too, wrote nothing.
"$RUNTIMED" >/dev/null 2>&1 || fail "a second runtimed start failed"
log=$(readlink -f "$RUNTIMED_STATE_DIR/runtimed.log")
for fd in /proc/"$agent"/fd/*; do
	to=$(readlink "$fd") || continue
	case $to in
	"$T/worker.log")
		fail "agent $agent holds the starter's log as fd ${fd##*/}";;
	esac
done
for n in 1 2; do
	[ "$(readlink "/proc/$agent/fd/$n")" = "$log" ] ||
	    fail "agent fd $n is $(readlink "/proc/$agent/fd/$n"), not $log"
done
ok "the agent holds the daemon's log, not the starter's"
"$RUNTIMED" stop >/dev/null || fail "runtimed stop"
wait_gone "$agent" 50 || fail "agent $agent outlived the daemon"
left=$(find "$RUNTIMED_STATE_DIR/kernels" -mindepth 1 -type d -empty \
    2>/dev/null)
[ -z "$left" ] || fail "empty kernel directories left: $left"
ok "no empty kernel directory left"
wait_gone "$dpid" 50 || fail "daemon $dpid outlived runtimed stop"
if [ -f "$RUNTIMED_STATE_DIR/runtimed.log" ] &&
    [ ! -s "$RUNTIMED_STATE_DIR/runtimed.log" ]; then
	fail "an empty runtimed.log is left"
fi
ok "no empty runtimed.log left"
