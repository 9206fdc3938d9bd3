#!/bin/sh
# SPDX-License-Identifier: ISC
# ipcfallback.sh: a kernel that cannot do ipc still starts, on tcp
# 127.0.0.1 (decision 060).  Kernels are given ipc sockets in a private
# directory; one that exits before binding them (tcponly), binds other
# paths there (colon: at once, without waiting for the start bound), or
# binds nothing and stays silent until the start bound (silent) is
# started again on tcp, and a restart goes straight to tcp.  The
# launcher is tests/kernels/notipc.py around a real ipykernel.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0
# The silent kernel is given up on ipc after this.
export RUNTIMED_KERNEL_START_SECS=5

here=$(cd "${srcdir:-.}" && pwd)
for m in tcponly colon silent; do
	mkdir -p "$T/jupyter/kernels/notipc-$m"
	cat >"$T/jupyter/kernels/notipc-$m/kernel.json" <<JSON
{"argv": ["/usr/bin/python3", "$here/tests/kernels/notipc.py", "$m",
  "{connection_file}"],
 "display_name": "not ipc ($m)", "language": "python"}
JSON
done
export JUPYTER_PATH=$T/jupyter
start_daemon --warm-pool 0 -v
mkdir -m 700 "$T/nb"
log() {
	cat "$T/daemon.log" "$RUNTIMED_STATE_DIR/runtimed.log" 2>/dev/null
}

for m in tcponly colon silent; do
	nb=$T/nb/$m.ipynb
	/usr/bin/python3 - "$nb" "notipc-$m" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
nb.metadata["kernelspec"] = {"name": sys.argv[2], "display_name": "x",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
	t0=$(date +%s)
	"$CTL" --json call run_cells path="$nb" all=true wait_secs=50 \
	    >"$T/run.json" 2>&1 || fail "$m: run_cells: $(head -c 2000 "$T/run.json")"
	t=$(($(date +%s) - t0))
	grep -q '"status":"done"' "$T/run.json" && grep -q '42' "$T/run.json" ||
	    fail "$m: the cell did not run: $(head -c 2000 "$T/run.json")"
	conn=$(ls -t "$RUNTIMED_STATE_DIR"/kernels/*/kernel-*.json | head -1)
	tr=$(/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["transport"])' "$conn")
	[ "$tr" = tcp ] || fail "$m: the kernel is on $tr"
	line=$(log | grep "kernel notipc-$m did not start on ipc") ||
	    fail "$m: no word of the fallback"
	case $m in
	colon)	[ $t -lt 5 ] ||
		    fail "colon: $t s: the fallback waited for the start bound";;
	silent)	[ $t -ge 5 ] || fail "silent: on tcp after $t s only";;
	esac
	ok "$m: ran on tcp after ${t} s: ${line#*warn: }"
done

# The daemon remembers: the next kernel of the silent kernelspec (a
# restart is a new agent) goes to tcp at once, with no wait on ipc.
before=$(log | grep -c "kernel notipc-silent did not start on ipc")
t0=$(date +%s)
"$CTL" --json call restart_kernel path="$T/nb/silent.ipynb" >"$T/re.json" 2>&1 ||
    fail "restart: $(head -c 2000 "$T/re.json")"
"$CTL" --json call run_cells path="$T/nb/silent.ipynb" all=true wait_secs=50 \
    >"$T/run.json" 2>&1 || fail "run after restart: $(head -c 2000 "$T/run.json")"
t=$(($(date +%s) - t0))
grep -q '"status":"done"' "$T/run.json" ||
    fail "after the restart: $(head -c 2000 "$T/run.json")"
after=$(log | grep -c "kernel notipc-silent did not start on ipc")
[ "$after" = "$before" ] && [ $t -lt 5 ] ||
    fail "the restart tried ipc again ($t s)"
log | grep -q "kernel notipc-silent: on tcp 127.0.0.1, as it could not start on ipc before" ||
    fail "no word of tcp at once"
ok "a restart starts it on tcp at once (${t} s)"

# Every ipc directory made is gone once the daemon has stopped.
dirs=$(log | sed -n 's/.*(ipc in \(\/tmp\/rtdk-[A-Za-z0-9]*\)).*/\1/p' | sort -u)
[ -n "$dirs" ] || fail "no ipc directory in the log"
kill -TERM "$D"
wait_gone "$D" 100 || fail "the daemon did not stop"
i=0
while left=$(ls -d $dirs 2>/dev/null) && [ -n "$left" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "ipc directories left behind: $left"
	sleep 0.1
done
ok "no ipc directory left: $(echo $dirs)"
