# SPDX-License-Identifier: ISC
# lib.sh: shared by the rooms tests (sourced).  On top of the runtimed
# tests' lib.sh: the rooms client, no warm kernel pool, and a daemon
# starter that remembers the pid.
. "${srcdir:-.}/tests/runtimed/lib.sh"
ROOMS_CLIENT=$top_builddir/rooms-client
export RUNTIMED_WARM_POOL=0

# Start runtimed -D with extra arguments; sets DPID.
start_daemon() {
	"$RUNTIMED" -D "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	track $DPID
	wait_status
}

kill9_daemon() {
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
}
