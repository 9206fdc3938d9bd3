#!/bin/sh
# SPDX-License-Identifier: ISC
# activate.sh: the daemon under a service manager, without PID 1.
# systemd-socket-activate holds the socket; the first connection starts
# "runtimed -D" with it (LISTEN_FDS); an on-demand start meanwhile yields
# (it finds the socket live and exits 0); at exit the daemon leaves the
# manager's socket in place.  With NOTIFY_SOCKET the daemon sends READY=1
# once it serves and STOPPING=1 when it stops (Type=notify).  Skips (77)
# without systemd-socket-activate.
. "${srcdir:-.}/tests/runtimed/lib.sh"
trap '"$RUNTIMED" stop >/dev/null 2>&1; cleanup' EXIT
export RUNTIMED_WARM_POOL=0
mkdir -m 700 "$T/run"

# Type=notify: a datagram socket standing in for systemd.
python3 - "$T/notify" "$T/notified" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "a") as f:
    while True:
        msg = s.recv(4096).decode()
        f.write(msg + "\n")
        f.flush()
        if "STOPPING=1" in msg:
            break
PY
track $!
i=0
while [ ! -S "$T/notify" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no notify socket"; sleep 0.1
done
NOTIFY_SOCKET=$T/notify "$RUNTIMED" -D 2>"$T/notify-daemon.log" &
dpid=$!
track $dpid
i=0
while ! grep -q '^READY=1$' "$T/notified" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no READY=1 in 10 s"; sleep 0.1
done
"$RUNTIMED" status >/dev/null || fail "READY=1 before the daemon answers"
"$RUNTIMED" stop >/dev/null || fail "runtimed stop"
i=0
while ! grep -q '^STOPPING=1$' "$T/notified" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no STOPPING=1"; sleep 0.1
done
wait_gone "$dpid" 100 || fail "the notified daemon did not stop"
ok "NOTIFY_SOCKET: READY=1 once serving, STOPPING=1 on stop"

# A descriptor 3 that is no listening Unix socket: refused, nothing made.
out=$(LISTEN_FDS=1 timeout 10 sh -c 'LISTEN_PID=$$ exec "$1" -D 3</dev/null' \
    sh "$RUNTIMED" 2>&1) && fail "runtimed took /dev/null as its socket"
case $out in
*"is not a socket"*|*"not a Unix stream socket"*) ;;
*) fail "a bad activated descriptor: $out";;
esac
[ -e "$RUNTIMED_SOCKET" ] && fail "a socket was made beside a bad activation"
# A Unix socket, bound but not listening, as descriptor 3.
python3 - "$T/unlistened.sock" "$RUNTIMED" <<'PY' \
    >"$T/unlistened.out" 2>&1 &&
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_PID"] = str(os.getpid())
os.environ["LISTEN_FDS"] = "1"
os.execv(sys.argv[2], [sys.argv[2], "-D"])
PY
    fail "runtimed took a socket that does not listen"
grep -q "is not listening" "$T/unlistened.out" ||
    fail "a socket that does not listen: $(cat "$T/unlistened.out")"
ok "a bad activated descriptor is refused with why"

. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v systemd-socket-activate >/dev/null 2>&1; then
	skip_missing "activate: no systemd-socket-activate"
fi
systemd-socket-activate -l "$RUNTIMED_SOCKET" \
    -E RUNTIMED_STATE_DIR -E RUNTIMED_LIBEXEC_DIR -E RUNTIMED_WARM_POOL \
    -E PATH -E HOME -E PYDEVD_DISABLE_FILE_VALIDATION \
    -E ASAN_OPTIONS -E UBSAN_OPTIONS \
    "$RUNTIMED" -D -v 2>"$T/activated.log" &
apid=$!
track $apid
i=0
while [ ! -S "$RUNTIMED_SOCKET" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "systemd-socket-activate made no socket"
	sleep 0.1
done
# What a worker's on-demand start runs: it must yield to the manager.
out=$(timeout 20 "$RUNTIMED" 2>&1) || fail "on-demand start: $out"
case $out in
*"already running"*) ;;
*) fail "the on-demand start did not yield: $out";;
esac
wait_status
pid=$("$RUNTIMED" status | sed -n 's/^pid //p')
[ "$pid" = "$apid" ] ||
    fail "status pid $pid is not the activated daemon ($apid)"
grep -q "socket-activated" "$T/activated.log" ||
    fail "the daemon did not say it was socket-activated"
ok "socket activation: the first connection started the daemon"
"$RUNTIMED" stop >/dev/null || fail "runtimed stop (activated)"
wait_gone "$apid" 100 || fail "the activated daemon did not stop"
[ -S "$RUNTIMED_SOCKET" ] || fail "the daemon removed the manager's socket"
ok "the manager's socket is left in place"
