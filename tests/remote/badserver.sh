#!/bin/sh
# SPDX-License-Identifier: ISC
# badserver.sh: a malicious "Jupyter Server" on 127.0.0.1 (a Python
# server in this test; issue 36, item 6).  One answers with endless
# headers: the reply is refused past JSERVER_HEADERS_MAX (64 KiB) and the
# daemon's and runtimectl's peak RSS stay small.  One trickles its answer
# a byte every 0.2 s, which evhttp's idle timeout never ends: the call is
# answered once JSERVER_TIMEOUT (20 s) has passed since it started
# (runtimectl domains: its 10 s), and the daemon answers others meanwhile.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
# Under ASan, freed memory waits in a quarantine (256 MB by default)
# that would count in the peak RSS measured here: a small one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

export RUNTIMED_CONFIG_DIR=$T/config
mkdir -m 700 "$RUNTIMED_CONFIG_DIR"
printf 'tok\n' >"$RUNTIMED_CONFIG_DIR/t.token"
chmod 600 "$RUNTIMED_CONFIG_DIR/t.token"

# serve MODE: a server of that mode; PORT its port, BS its pid.
serve() {
	/usr/bin/python3 - "$1" "$T/port" <<'PY' >>"$T/server.log" 2>&1 &
import socket, sys, threading, time
mode = sys.argv[1]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])

def serve(c):
    try:
        c.recv(65536)
        if mode == "headers":
            # At most 512 MiB of headers, never a blank line.
            line = b"X-Pad: " + b"a" * 8185 + b"\r\n"
            c.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(65536):
                c.sendall(line)
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n")
            for _ in range(100000):
                c.sendall(b" ")
                time.sleep(0.2)
    except OSError:
        pass
    finally:
        c.close()

while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	BS=$!
	track $BS
	i=0
	while [ ! -f "$T/port" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "the test server did not start"
		sleep 0.1
	done
	PORT=$(cat "$T/port")
	rm "$T/port"
	printf '{"evil": {"url": "http://127.0.0.1:%s/", "token_file": "%s"}}\n' \
	    "$PORT" "$RUNTIMED_CONFIG_DIR/t.token" >"$RUNTIMED_CONFIG_DIR/domains.json"
}

start_daemon --warm-pool 0 -v
hwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# Endless headers.
serve headers
/usr/bin/time -f %M -o "$T/ctl.rss" timeout 60 "$CTL" domains >"$T/d.out" 2>&1
rss=$(cat "$T/ctl.rss" | tail -1)
grep -q "headers are over 64 KiB" "$T/d.out" ||
    fail "runtimectl domains on endless headers: $(cat "$T/d.out")"
[ "$rss" -lt 65536 ] || fail "runtimectl took $rss KiB on endless headers"
ok "runtimectl domains, endless headers: peak RSS $rss KiB: $(grep problem "$T/d.out" || head -3 "$T/d.out")"
out=$(timeout 60 "$CTL" call connect_notebook domain=evil path=x.ipynb 2>&1) &&
    fail "connect to endless headers: $out"
h=$(hwm "$D")
[ "$h" -lt 102400 ] || fail "the daemon's peak RSS is $h KiB after endless headers"
ok "connect_notebook, endless headers: daemon peak RSS $h KiB: $out"
kill $BS

# A trickle: a byte every 0.2 s.
serve trickle
t0=$(date +%s)
timeout 60 "$CTL" domains >"$T/d.out" 2>&1
t=$(( $(date +%s) - t0 ))
[ $t -le 13 ] || fail "runtimectl domains took $t s on a trickle"
grep -q "did not come whole within 10 s" "$T/d.out" ||
    fail "runtimectl domains on a trickle: $(cat "$T/d.out")"
ok "runtimectl domains, a trickle: answered in $t s"
t0=$(date +%s)
"$CTL" call connect_notebook domain=evil path=x.ipynb >"$T/c.out" 2>&1 &
C=$!
sleep 2
timeout 3 "$RUNTIMED" status >/dev/null || fail "status not answered during a trickle"
wait $C && fail "connect to a trickle: $(cat "$T/c.out")"
t=$(( $(date +%s) - t0 ))
[ $t -le 45 ] || fail "connect_notebook took $t s on a trickle"
grep -q "did not come whole within" "$T/c.out" ||
    fail "connect on a trickle: $(cat "$T/c.out")"
ok "connect_notebook, a trickle: answered in $t s: $(cat "$T/c.out")"
