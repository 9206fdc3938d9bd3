#!/bin/sh
# SPDX-License-Identifier: ISC
# otheruser.sh: another local user cannot read a kernel's outputs (issue
# 36, item 11).  Kernels listened on tcp 127.0.0.1 (decision 008), and
# any local user could subscribe to iopub without the key and read every
# output as it was published.  Now they listen on ipc sockets in a 0700
# directory of their own (decision 060): a real second user (useradd;
# the test needs root: tests/lib/root.sh) is refused (EACCES) on
# the iopub and shell sockets and on the directory, and its ZeroMQ
# subscriber reads nothing while a cell prints a secret, for each kernel
# family installed (python3, xpython, ir).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/lib/root.sh"
need_root "it makes a second user with useradd" "$0" "$@"
command -v useradd >/dev/null && command -v setpriv >/dev/null || {
	echo "SKIP: otheruser.sh needs useradd and setpriv"
	exit 77
}
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel, zmq' 2>/dev/null ||
    skip_missing "no ipykernel or pyzmq"
export RUNTIMED_AUTOSAVE=0

U=rtdother$$
useradd -M -N -s /usr/sbin/nologin "$U" || fail "useradd $U"
trap 'userdel "$U" 2>/dev/null; cleanup' EXIT
as_other() {
	HOME=/ setpriv --reuid="$U" --regid=65534 --clear-groups "$@"
}

start_daemon --warm-pool 0
chmod 711 "$T"
mkdir -m 755 "$T/pub"
mkdir -m 700 "$T/nb"
# The other user's program: it is given the endpoints (without the key),
# as it could read them from ss or /proc/net/unix, tries to connect to
# iopub and shell, to list the socket directory, and reads iopub for
# SECS seconds with a ZeroMQ subscriber, counting messages that carry
# the secret.
cat >"$T/pub/spy.py" <<'PY'
import errno, json, os, socket, sys, time, zmq
c, secs = json.loads(sys.argv[1]), float(sys.argv[2])
tcp = c["transport"] == "tcp"
def ep(name):
    if tcp:
        return "tcp://%s:%d" % (c["ip"], c[name])
    return "ipc://%s-%d" % (c["ip"], c[name])
def raw(name):
    try:
        if tcp:
            socket.create_connection((c["ip"], c[name]), timeout=2).close()
        else:
            s = socket.socket(socket.AF_UNIX)
            s.connect("%s-%d" % (c["ip"], c[name]))
            s.close()
        return "connected"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("iopub", raw("iopub_port"))
print("shell", raw("shell_port"))
if not tcp:
    try:
        os.listdir(os.path.dirname(c["ip"]))
        print("listdir ok")
    except OSError as e:
        print("listdir", errno.errorcode.get(e.errno, str(e.errno)))
sub = zmq.Context().socket(zmq.SUB)
sub.setsockopt(zmq.SUBSCRIBE, b"")
sub.connect(ep("iopub_port"))
print("ready", flush=True)
n, end = 0, time.time() + secs
while time.time() < end:
    if sub.poll(200):
        if any(b"secret-4242" in p for p in sub.recv_multipart()):
            n += 1
print("secret messages", n)
PY

families=python3
have_kernel xpython && families="$families xpython"
have_kernel ir && families="$families ir"
for k in $families; do
	case $k in
	ir)	lang=R
		cell='for (i in 1:20) { cat("secret-4242", i, "\n"); flush(stdout()); Sys.sleep(0.2) }';;
	*)	lang=python
		cell='import time
for i in range(20):
    print("secret-4242", i, flush=True)
    time.sleep(0.2)';;
	esac
	nb=$T/nb/$k.ipynb
	/usr/bin/python3 - "$nb" "$k" "$lang" "$cell" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("1"), nbformat.v4.new_code_cell(sys.argv[4])]
nb.metadata["kernelspec"] = {"name": sys.argv[2], "display_name": sys.argv[2],
    "language": sys.argv[3]}
nbformat.write(nb, sys.argv[1])
PY
	"$CTL" --json call run_cells path="$nb" 'cell_ids=[0]' wait_secs=50 \
	    >"$T/run0.json" 2>&1 || fail "$k: run_cells: $(head -c 2000 "$T/run0.json")"
	grep -q '"status":"done"' "$T/run0.json" ||
	    fail "$k: the kernel did not run: $(head -c 2000 "$T/run0.json")"
	conn=$(ls -t "$RUNTIMED_STATE_DIR"/kernels/*/kernel-*.json | head -1)
	[ -f "$conn" ] || fail "$k: no connection file"
	info=$(/usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); del c["key"]; print(json.dumps(c))' "$conn")
	as_other /usr/bin/python3 "$T/pub/spy.py" "$info" 8 >"$T/spy.out" 2>&1 &
	spy=$!
	track $spy
	i=0
	until grep -q '^ready' "$T/spy.out"; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "$k: the spy did not start: $(cat "$T/spy.out")"
		sleep 0.1
	done
	sleep 1
	"$CTL" --json call run_cells path="$nb" 'cell_ids=[1]' wait_secs=50 \
	    >"$T/run1.json" 2>&1 || fail "$k: run_cells: $(head -c 2000 "$T/run1.json")"
	grep -q 'secret-4242 19' "$T/run1.json" ||
	    fail "$k: the cell did not print: $(head -c 2000 "$T/run1.json")"
	wait $spy
	spied=$(tr '\n' ' ' <"$T/spy.out")
	grep -q '^secret messages 0$' "$T/spy.out" ||
	    fail "$k: another user read the kernel's outputs ($info): $spied"
	grep -q '^iopub EACCES$' "$T/spy.out" && grep -q '^shell EACCES$' "$T/spy.out" &&
	    grep -q '^listdir EACCES$' "$T/spy.out" ||
	    fail "$k: another user could reach the kernel's sockets ($info): $spied"
	dir=$(/usr/bin/python3 -c 'import json, os, sys
print(os.path.dirname(json.loads(sys.argv[1])["ip"]))' "$info")
	[ "$(stat -c '%a %u' "$dir")" = "700 $(id -u)" ] ||
	    fail "$k: $dir is $(stat -c '%a %U' "$dir")"
	ok "$k: another user is refused by its ipc sockets in $dir (0700) and reads none of its outputs: $spied"
done
