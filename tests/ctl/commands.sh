#!/bin/sh
# SPDX-License-Identifier: ISC
# commands.sh: runtimectl logs, doctor and stop in both formats against
# a private daemon; doctor finds planted faults (a 0755 socket
# directory, a stale socket and lock after kill -9) and names the fix;
# the documented exit codes.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

"$CTL" --version | grep -q "^runtimectl [0-9]" || fail "--version"
"$CTL" --help | grep -q "^usage: runtimectl" || fail "--help"
"$CTL" frobnicate >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "an unknown command exits $rc, not 2"
out=$("$CTL" status 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "^runtimectl: not running: start it with runtimed " ||
    fail "status with no daemon: rc $rc, $out"
# open says how to start a daemon, not only that none runs (issue 35).
out=$("$CTL" open 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "systemctl --user enable --now runtimed.socket" ||
    fail "open with no daemon: rc $rc, $out"
ok "--version, --help, usage exit 2, not running exit 1 and how to start one"

# The daemon writes its log to the state directory when not -D.
"$RUNTIMED" -v --warm-pool 0 || fail "runtimed did not start"
D=$("$CTL" --json status | jq_py 'j["pid"]')
track $D
out=$("$CTL" logs) || fail "logs"
echo "$out" | grep -q "^runtimed.log " || fail "logs lists no runtimed.log: $out"
"$CTL" logs --json | jq_py '[l["name"] for l in j["logs"]]' |
    grep -q "runtimed.log" || fail "logs --json: $("$CTL" logs --json)"
"$CTL" logs runtimed | grep -q "started, pid $D" ||
    fail "logs runtimed: $("$CTL" logs runtimed)"
"$CTL" --json logs runtimed | jq_py 'j["logs"][0]["text"]' |
    grep -q "started, pid $D" || fail "logs runtimed --json"
"$CTL" logs nosuch >/dev/null 2>&1 && fail "logs of no process exits 0"
# Workers' logs are where the proxy writes them, in logs/.
mkdir -p "$RUNTIMED_STATE_DIR/logs"
echo "worker 1 was here" >"$RUNTIMED_STATE_DIR/logs/mcp-worker-1.log"
echo "worker 2 was here" >"$RUNTIMED_STATE_DIR/logs/mcp-worker-2.log"
ln -s "$RUNTIMED_STATE_DIR/runtimed.log" "$RUNTIMED_STATE_DIR/logs/link.log"
out=$("$CTL" logs mcp-worker) || fail "logs mcp-worker"
echo "$out" | grep -q "worker 1 was here" && echo "$out" | grep -q "worker 2" ||
    fail "logs mcp-worker: $out"
"$CTL" logs | grep -q "^mcp-worker-2.log " || fail "logs lists no worker log"
"$CTL" logs link >/dev/null 2>&1 && fail "logs followed a symbolic link"
ok "runtimectl logs: list and print, both formats"

"$CTL" logs -f runtimed >"$T/follow.out" 2>&1 &
F=$!
track $F
sleep 0.5
echo "a line appended at $(date +%s%N)" >>"$RUNTIMED_STATE_DIR/runtimed.log"
line=$(tail -1 "$RUNTIMED_STATE_DIR/runtimed.log")
i=0
until grep -qF "$line" "$T/follow.out"; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "logs -f did not follow: $(cat "$T/follow.out")"
	sleep 0.1
done
kill $F
ok "runtimectl logs -f follows what is appended"

out=$("$CTL" doctor) || fail "doctor on a healthy setup exits $?: $out"
echo "$out" | grep -q "^ok  *the daemon (pid $D" || fail "doctor: $out"
echo "$out" | grep -q "^ok  *store .* passes" || fail "doctor store: $out"
echo "$out" | grep -q "^ok  *kernel python3 " ||
    { have_kernel python3 && fail "doctor kernels: $out"; }
"$CTL" --json doctor >"$T/doctor.json" ||
    fail "doctor --json exits $?: $(cat "$T/doctor.json")"
jq_py 'j["problems"]' <"$T/doctor.json" | grep -qx 0 ||
    fail "doctor --json: $(cat "$T/doctor.json")"
ok "runtimectl doctor: no problem, both formats"

# No kernelspec at all: on Debian the fix is its package, not pip, which
# Debian 12 refuses (externally-managed-environment; issue 35).
mkdir -p "$T/nohome"
out=$(HOME=$T/nohome JUPYTER_PLATFORM_DIRS=1 XDG_DATA_DIRS=$T/nohome \
    JUPYTER_PATH= JUPYTER_DATA_DIR= "$CTL" doctor 2>&1)
echo "$out" | grep -q "no kernelspec is installed" ||
    fail "doctor with no kernelspec: $out"
if [ -f /etc/debian_version ]; then
	echo "$out" | grep -q "fix: sudo apt-get install python3-ipykernel$" ||
	    fail "doctor's fix on Debian: $out"
fi
ok "runtimectl doctor: no kernelspec, fix $(echo "$out" | sed -n '/no kernelspec/{n;s/^ *fix: //p}')"

# Planted: a socket directory others can read.
chmod 755 "$T/run"
out=$("$CTL" doctor); rc=$?
[ $rc = 3 ] || fail "doctor exits $rc on a 0755 socket directory: $out"
echo "$out" | grep -q "^PROBLEM  *socket directory $T/run is open to others (mode 0755)" ||
    fail "doctor does not name the fault: $out"
echo "$out" | grep -q "fix: chmod 700 $T/run$" || fail "no fix named: $out"
"$CTL" --json doctor >"$T/doctor.json"; rc=$?
[ $rc = 3 ] || fail "doctor --json exits $rc"
python3 - "$T/doctor.json" "$T/run" <<'PY' || fail "doctor --json: $(cat "$T/doctor.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["problems"] == 1, j
f, = [f for f in j["findings"] if f["status"] == "problem"]
assert f["check"] == "socket directory", f
assert f["fix"] == "chmod 700 " + sys.argv[2], f
PY
chmod 700 "$T/run"
"$CTL" -q doctor >/dev/null || fail "doctor after the fix"
ok "runtimectl doctor: a 0755 socket directory found, chmod 700 named"

out=$("$CTL" stop) || fail "stop failed: $out"
[ "$out" = "stopped (pid $D)" ] || fail "stop said: $out"
gone "$D" || fail "daemon $D still running after stop"
"$CTL" stop >/dev/null 2>&1; rc=$?
[ $rc = 1 ] || fail "stop with no daemon exits $rc"
"$RUNTIMED" --warm-pool 0 || fail "runtimed did not start again"
D=$("$CTL" --json status | jq_py 'j["pid"]')
track $D
"$CTL" --json stop | jq_py 'j["stopped"] and j["pid"] == '"$D" |
    grep -q True || fail "stop --json"
ok "runtimectl stop, both formats; 1 when none runs"

# Planted: a daemon killed -9 leaves its socket and lock.
"$RUNTIMED" --warm-pool 0 || fail "runtimed did not start a third time"
D=$("$CTL" --json status | jq_py 'j["pid"]')
kill -9 "$D"
until gone "$D"; do sleep 0.1; done
out=$("$CTL" doctor); rc=$?
[ $rc = 0 ] || fail "doctor exits $rc on stale leftovers: $out"
echo "$out" | grep -q "^warning  *stale socket $RUNTIMED_SOCKET" ||
    fail "doctor misses the stale socket: $out"
echo "$out" | grep -q "fix: rm $RUNTIMED_SOCKET " || fail "no fix: $out"
echo "$out" | grep -q "^warning  *stale lock $RUNTIMED_SOCKET.lock (pid $D is gone)" ||
    fail "doctor misses the stale lock: $out"
ok "runtimectl doctor: stale socket and lock after kill -9, fixes named"
