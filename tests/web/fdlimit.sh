#!/bin/sh
# SPDX-License-Identifier: ISC
# fdlimit.sh: runtimed-web out of descriptors (issue 36, item 10).
# With its limit lowered (prlimit) and 60 connections held open, accept()
# fails with EMFILE; evhttp tried again at once, forever: 100% of a CPU
# and a log line each time (430 MB of log in 10 s).  Now accepting
# pauses a second at a time, logged at most once per 10 s: little CPU, a
# few log lines, and once the connections go the view serves again.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 90 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
command -v curl >/dev/null 2>&1 || skip_missing "no curl"
command -v prlimit >/dev/null 2>&1 || skip_missing "no prlimit"
start_daemon --warm-pool 0

NB=$T/nb.ipynb
/usr/bin/python3 -c 'import nbformat, sys; nbformat.write(nbformat.v4.new_notebook(), sys.argv[1])' "$NB"
URL=$("$CTL" open "$NB") || fail "runtimectl open"
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
SECRET=${URL#*s=}; SECRET=${SECRET%%&*}
P=/v$(printf %s "$SECRET" | sha256sum | cut -c1-16)
W=$(ps -o pid=,comm= --ppid "$D" | awk '$2 == "runtimed-web" { print $1; exit }')
[ -n "$W" ] || fail "no runtimed-web"
prlimit --pid "$W" --nofile=24:24 || fail "prlimit"

/usr/bin/python3 - "$PORT" "$T/held" <<'PY' &
import socket, sys, time, os
socks = []
for _ in range(60):
    s = socket.socket()
    s.connect(("127.0.0.1", int(sys.argv[1])))
    socks.append(s)
open(sys.argv[2], "w").write("held")
time.sleep(6)
PY
LP=$!
track $LP
i=0
while [ ! -f "$T/held" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "the connections were not made"
	sleep 0.1
done
sleep 0.5
ticks() {
	awk '{ print $14 + $15 }' "/proc/$W/stat"
}
c0=$(ticks); l0=$(stat -c %s "$T/daemon.log")
sleep 3
c1=$(ticks); l1=$(stat -c %s "$T/daemon.log")
kill -0 "$W" || fail "runtimed-web died"
cpu=$((c1 - c0)); grew=$((l1 - l0))
[ $cpu -lt 60 ] || fail "runtimed-web used $cpu ticks of CPU in 3 s out of descriptors"
[ $grew -lt 4096 ] || fail "the log grew $grew bytes in 3 s"
grep -q "runtimed-web.*cannot accept a connection: .*pausing 1000 ms" "$T/daemon.log" ||
    fail "no log line: $(tail -5 "$T/daemon.log")"
ok "out of descriptors: $cpu ticks of CPU and $grew bytes of log in 3 s"
wait $LP
sleep 1.5
c=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: rtd_$PORT=$SECRET" "http://127.0.0.1:$PORT$P/")
[ "$c" = 200 ] || fail "the view does not serve again: $c"
ok "once they are gone, the view serves again"
