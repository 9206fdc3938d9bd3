#!/bin/sh
# SPDX-License-Identifier: ISC
# slowread.sh: pages that do not read their stream (issue 36, item 10).
# Eight streams opened and never read while a cell prints for a few
# seconds: what they did not read stayed in runtimed-web's memory (8
# such pages took it from 9 MB to 1.9 GB).  Now a stream more than
# WEB_STREAM_BACKLOG (4 MiB) behind is closed (the page's EventSource
# comes back and resumes) and runtimed-web's peak RSS stays small; a page
# that reads is served throughout.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 150 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
# Under ASan, freed memory waits in a quarantine (256 MB by default)
# that would count in the peak RSS measured here: a small one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
. "${srcdir:-.}/tests/lib/skip.sh"
command -v curl >/dev/null 2>&1 || skip_missing "no curl"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null || skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0
start_daemon --warm-pool 0

NB=$T/nb.ipynb
/usr/bin/python3 - "$NB" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "import time\nfor i in range(60):\n    print(str(i) * 100000, flush=True)\n    time.sleep(0.05)")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
URL=$("$CTL" open "$NB") || fail "runtimectl open"
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
ID=${URL##*nb=}
SECRET=${URL#*s=}; SECRET=${SECRET%%&*}
P=/v$(printf %s "$SECRET" | sha256sum | cut -c1-16)
W=$(ps -o pid=,comm= --ppid "$D" | awk '$2 == "runtimed-web" { print $1; exit }')
[ -n "$W" ] || fail "no runtimed-web"

# Eight streams that never read (small receive buffers), one that does.
/usr/bin/python3 - "$PORT" "$ID" "$SECRET" "$P" <<'PY' &
import socket, sys, time
port, nb, secret, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
socks = []
for _ in range(8):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET %s/nb/%s/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        "Cookie: rtd_%d=%s\r\n\r\n" % (prefix, nb, port, port,
        secret)).encode())
    socks.append(s)
time.sleep(60)
PY
track $!
curl -s -N -H "Cookie: rtd_$PORT=$SECRET" "http://127.0.0.1:$PORT$P/nb/$ID/events" \
    >"$T/reader" 2>/dev/null &
track $!
sleep 1
"$CTL" call run_cells path="$NB" all=true wait_secs=40 >"$T/run.out" 2>&1 ||
    fail "run: $(head -c 1000 "$T/run.out")"
sleep 1
h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$W/status")
kill -0 "$W" || fail "runtimed-web died"
[ "$h" -lt 81920 ] || fail "runtimed-web's peak RSS is $h KiB with 8 pages not reading"
grep -q "59595959" "$T/reader" || fail "the reading page did not get the last output"
ok "8 pages not reading: runtimed-web peak RSS $h KiB; the reading page served"
