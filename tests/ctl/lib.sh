# SPDX-License-Identifier: ISC
# lib.sh: shared by the runtimectl tests (sourced, not run).  A private
# socket and state directory, a daemon of our own, a trap that kills what
# we started.

set -u
top_builddir=${top_builddir:-$(pwd)}
RUNTIMED=$top_builddir/runtimed/runtimed
CTL=$top_builddir/runtimectl/runtimectl
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed
export PYDEVD_DISABLE_FILE_VALIDATION=1

T=$(mktemp -d /tmp/runtimectl-test.XXXXXX)
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
PIDS=""

cleanup() {
	for p in $PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log "$RUNTIMED_STATE_DIR"/runtimed.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -40 "$f" >&2; }
	done
	exit 1
}

ok() {
	echo "ok: $*"
}

track() {
	PIDS="$PIDS $*"
}

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
	i=0
	while ! "$RUNTIMED" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "daemon did not answer within 10 s"
		sleep 0.1
	done
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
