# SPDX-License-Identifier: ISC
# lib.sh: shared by the runtimectl tests (sourced, not run).  The runtimed
# tests' private socket, state directory and cleanup trap
# (tests/runtimed/lib.sh), plus runtimectl and a daemon of our own.

. "${srcdir:-.}/tests/runtimed/lib.sh"
CTL=$top_builddir/runtimectl/runtimectl
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed

# Is kernelspec $1 installed?
have_kernel() {
	jupyter kernelspec list 2>/dev/null | awk '{ print $1 }' |
	    grep -qx "$1"
}

# Start a daemon in the foreground (extra options in $@); D is its pid.
start_daemon() {
	"$RUNTIMED" -D "$@" >"$T/daemon.log" 2>&1 &
	D=$!
	track $D
	wait_status
}

# Wait (max 30 s) until the daemon has $1 agent children.
wait_agents() {
	i=0
	while [ "$(ps -o pid= --ppid "$D" | wc -l)" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -gt 300 ] && fail "no $1 agents after 30 s"
		sleep 0.1
	done
}

# A JSON field of stdin, by a Python expression on j.
jq_py() {
	python3 -c 'import json, signal, sys; signal.signal(signal.SIGPIPE, signal.SIG_DFL); j = json.load(sys.stdin); print('"$1"')'
}

# Has pid $1 exited?  A zombie counts (whoever reaps it is not us).
gone() {
	kill -0 "$1" 2>/dev/null || return 0
	case $(ps -o stat= -p "$1" 2>/dev/null) in Z*) return 0;; esac
	return 1
}
