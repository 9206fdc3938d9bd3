#!/bin/sh
# SPDX-License-Identifier: ISC
# killdir.sh: an agent killed with SIGKILL cannot remove its kernel's
# private ipc directory (/tmp/rtdk-XXXXXX, decision 060) nor its
# connection file: /tmp kept a directory per kill.  The daemon removes
# both when it reaps the agent; a directory that is not ours, or a
# symbolic link in its place, it leaves alone.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
nb=$T/nb/p.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("1+1")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY

# Start a kernel; its agent's pid, connection file and ipc directory.
start_kernel() {
	[ -z "${a:-}" ] ||
	    "$CTL" --json call restart_kernel path="$nb" >"$T/re.json" 2>&1 ||
	    fail "restart_kernel: $(head -c 2000 "$T/re.json")"
	"$CTL" --json call run_cells path="$nb" all=true wait_secs=50 \
	    >"$T/run.json" 2>&1 || fail "run_cells: $(head -c 2000 "$T/run.json")"
	a=$(ps -o pid=,comm= --ppid "$D" |
	    awk '$2 == "runtimed-agent" { print $1; exit }')
	[ -n "$a" ] || fail "no agent: $(ps -o pid=,stat=,comm= --ppid "$D")"
	conn=$(ls "$RUNTIMED_STATE_DIR"/kernels/*/kernel-*.json)
	[ -f "$conn" ] || fail "no connection file: $conn"
	dir=$(/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); assert j["transport"] == "ipc", j
print(j["ip"].rsplit("/", 1)[0])' "$conn") || fail "not on ipc"
	[ -d "$dir" ] || fail "no ipc directory $dir"
}

# Kill the agent; wait for the daemon to reap it (its zombie is gone):
# the reap removes what the agent left.
kill_agent() {
	kill -9 "$a"
	i=0
	while [ -n "$(ps -o pid= -p "$a")" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "the daemon did not reap agent $a in 10 s"
		sleep 0.1
	done
	# The tidy follows the reap; the connection file goes last.
	i=0
	while [ -e "$conn" ] && [ $i -lt 50 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

start_kernel
kill_agent
[ ! -e "$dir" ] || fail "$dir left behind: $(ls -la "$dir")"
[ ! -e "$conn" ] || fail "$conn left behind"
ok "kill -9 of an agent: its ipc directory $dir and connection file removed"

# Another file in the directory: the sockets go, the rest stays.
start_kernel
: >"$dir/other"
kill_agent
[ -e "$dir/other" ] || fail "a file we did not name was removed"
[ "$(ls "$dir")" = other ] || fail "the sockets stayed: $(ls "$dir")"
rm -r "$dir"
ok "only the sockets the connection file names are removed"

# The directory replaced by a link to one of ours: not followed.
start_kernel
mkdir "$T/target"
/usr/bin/python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/target/k-1"
mv "$dir" "$T/moved"
ln -s "$T/target" "$dir"
kill_agent
[ -L "$dir" ] && [ -e "$T/target/k-1" ] ||
    fail "a symbolic link in the directory's place was followed"
rm "$dir"
ok "a symbolic link in the directory's place is left alone"
start_kernel
ok "a new kernel runs after"
