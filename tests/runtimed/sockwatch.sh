#!/bin/sh
# SPDX-License-Identifier: ISC
# sockwatch.sh: as tmux does, the daemon stops (its kernels first) once
# its socket file is removed, or replaced by another; a replacement is
# left in place.  Needs the python3 kernel for the agent (else 77).
. "${srcdir:-.}/tests/runtimed/lib.sh"
# A daemon that failed a check may not be tracked yet: stop it too.
trap '"$RUNTIMED" stop >/dev/null 2>&1; cleanup' EXIT
. "${srcdir:-.}/tests/lib/skip.sh"
if ! jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 '; then
	skip_missing "sockwatch: no python3 kernel"
fi
export RUNTIMED_WARM_POOL=1

# start: the daemon up, its pid and its warm-pool agent's.
start() {
	"$RUNTIMED" >/dev/null 2>&1 || fail "runtimed did not start"
	wait_status
	dpid=$("$RUNTIMED" status | sed -n 's/^pid //p')
	track "$dpid"
	i=0
	agent=
	while [ -z "$agent" ]; do
		agent=$(ps -o pid= --ppid "$dpid" | tr -d ' ' | head -1)
		i=$((i + 1))
		[ $i -gt 100 ] && fail "no agent under the daemon"
		[ -n "$agent" ] || sleep 0.1
	done
	track "$agent"
}

start
rm "$RUNTIMED_SOCKET"
wait_gone "$dpid" 100 || fail "daemon $dpid still runs 10 s after rm"
wait_gone "$agent" 10 || fail "agent $agent outlived the daemon"
grep -q "removed; stopping" "$RUNTIMED_STATE_DIR/runtimed.log" ||
    fail "no word in the log of why it stopped"
ok "removed socket: daemon and agent gone"

start
# Another socket at the same path (the inode changes).
rm "$RUNTIMED_SOCKET"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
    "$RUNTIMED_SOCKET" || fail "binding a replacement"
wait_gone "$dpid" 100 || fail "daemon $dpid still runs 10 s after replace"
wait_gone "$agent" 10 || fail "agent $agent outlived the daemon"
[ -S "$RUNTIMED_SOCKET" ] || fail "the replacement socket was removed"
ok "replaced socket: daemon gone, the replacement kept"
