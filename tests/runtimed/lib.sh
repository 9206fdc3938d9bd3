# SPDX-License-Identifier: ISC
# lib.sh: shared by the runtimed integration tests (sourced, not run).
# Each test gets a private socket and state dir and a cleanup trap that
# kills every process it started.

set -u
top_builddir=${top_builddir:-$(pwd)}
RUNTIMED=$top_builddir/runtimed/runtimed
RTD_CLIENT=$top_builddir/rtd-client
export RUNTIMED_LIBEXEC_DIR=$top_builddir
export PYDEVD_DISABLE_FILE_VALIDATION=1

T=$(mktemp -d /tmp/runtimed-test.XXXXXX)
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

# Remember a pid to kill at exit.
track() {
	PIDS="$PIDS $*"
}

# Wait until the daemon answers "runtimed status" (max 10 s).
wait_status() {
	i=0
	while ! "$RUNTIMED" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "daemon did not answer within 10 s"
		sleep 0.1
	done
}

# Wait until a pid is gone (max $2 tenths of a second).
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		# A zombie of ours counts as gone.
		case $(ps -o stat= -p "$1" 2>/dev/null) in Z*) return 0;; esac
		i=$((i + 1))
		[ $i -gt "$2" ] && return 1
		sleep 0.1
	done
	return 0
}
