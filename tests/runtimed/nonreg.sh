#!/bin/sh
# SPDX-License-Identifier: ISC
# nonreg.sh: a FIFO, a socket or a device where a file is read never
# freezes the daemon or runtimectl (issue 36, item 1): an attached
# notebook replaced by a FIFO (the watch reloads it), a FIFO opened as a
# notebook, a FIFO as domains.json and as a domain's token file
# (runtimectl domains, and a connect through the daemon), a socket and
# /dev/zero as a notebook.  Each gets a typed answer naming what the file
# is, and the daemon answers `runtimed status` meanwhile.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

# Does the daemon answer within 3 s?
answers() {
	timeout 3 "$RUNTIMED" status >/dev/null 2>&1
}

start_daemon --warm-pool 0 -v
mkdir -m 700 "$T/nb"
/usr/bin/python3 - "$T/nb/a.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("print(1)")]
nbformat.write(nb, sys.argv[1])
PY

# An attached notebook replaced by a FIFO: the watch looks at it.
out=$("$RTD_CLIENT" open "$RUNTIMED_SOCKET" "$T/nb/a.ipynb") ||
    fail "open a.ipynb: $out"
rm "$T/nb/a.ipynb"
mkfifo "$T/nb/a.ipynb"
sleep 1
answers || fail "the daemon froze on a FIFO in an attached notebook's place"
grep -q "not reloading: $T/nb/a.ipynb is not a regular file (it is a FIFO)" \
    "$T/daemon.log" ||
    fail "no log line saying the FIFO was not read"
ok "an attached notebook replaced by a FIFO: not read, the daemon answers"

# A FIFO, a socket and /dev/zero opened as notebooks.
mkfifo "$T/nb/f.ipynb"
out=$(timeout 20 "$CTL" call connect_notebook path="$T/nb/f.ipynb" 2>&1)
rc=$?
[ $rc = 124 ] && fail "opening a FIFO hung"
[ $rc = 0 ] && fail "a FIFO opened as a notebook: $out"
echo "$out" | grep -q "not a regular file" || fail "FIFO open said: $out"
/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/nb/s.ipynb"
out=$(timeout 20 "$CTL" call connect_notebook path="$T/nb/s.ipynb" 2>&1) &&
    fail "a socket opened as a notebook: $out"
echo "$out" | grep -q "not a regular file" || fail "socket open said: $out"
ln -s /dev/zero "$T/nb/z.ipynb"
out=$(timeout 20 "$CTL" call connect_notebook path="$T/nb/z.ipynb" 2>&1) &&
    fail "/dev/zero opened as a notebook: $out"
echo "$out" | grep -q "not a regular file" || fail "/dev/zero open said: $out"
answers || fail "the daemon does not answer after the FIFO, socket, device"
ok "a FIFO, a socket, /dev/zero as notebooks: refused ($out)"

# domains.json as a FIFO: runtimectl domains says so, and does not hang.
export RUNTIMED_CONFIG_DIR=$T/conf
mkdir -m 700 "$RUNTIMED_CONFIG_DIR"
mkfifo "$RUNTIMED_CONFIG_DIR/domains.json"
out=$(timeout 5 "$CTL" domains 2>&1)
rc=$?
[ $rc = 124 ] && fail "runtimectl domains hung on a FIFO domains.json"
[ $rc = 0 ] && fail "a FIFO domains.json was read: $out"
echo "$out" | grep -q "domains.json is not a regular file (it is a FIFO)" ||
    fail "FIFO domains.json: $out"
ok "domains.json a FIFO: runtimectl domains exits $rc: $out"

# A token file that is a FIFO: runtimectl domains, then a connect through
# the daemon (which reads it too).
rm "$RUNTIMED_CONFIG_DIR/domains.json"
mkfifo -m 600 "$RUNTIMED_CONFIG_DIR/token"
printf '{"evil": {"url": "http://127.0.0.1:9/", "token_file": "%s"}}\n' \
    "$RUNTIMED_CONFIG_DIR/token" >"$RUNTIMED_CONFIG_DIR/domains.json"
out=$(timeout 5 "$CTL" domains 2>&1)
rc=$?
[ $rc = 124 ] && fail "runtimectl domains hung on a FIFO token file"
echo "$out" | grep -q "token is not a regular file (it is a FIFO)" ||
    fail "FIFO token: $out"
ok "a token file that is a FIFO: runtimectl domains exits $rc"
# The daemon started before the variable: start one that sees it.
"$RUNTIMED" stop >/dev/null 2>&1
wait_gone "$D" 50 || fail "the daemon did not stop"
start_daemon --warm-pool 0 -v
out=$(timeout 20 "$CTL" call connect_notebook domain=evil path=x.ipynb 2>&1)
rc=$?
[ $rc = 124 ] && fail "connect_notebook hung on a FIFO token file"
[ $rc = 0 ] && fail "connect through a FIFO token: $out"
echo "$out" | grep -q "not a regular file (it is a FIFO)" ||
    fail "connect with a FIFO token: $out"
answers || fail "the daemon froze on a FIFO token file"
ok "connect_notebook with a FIFO token file: refused, the daemon answers"
