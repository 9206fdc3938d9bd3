# SPDX-License-Identifier: ISC
# lib.sh: shared by the kernel tests (sourced).  Builds on the runtimed
# tests' lib.sh (private socket and state dir, cleanup of what we start).
. "${srcdir:-.}/tests/runtimed/lib.sh"
KC=$top_builddir/kern-client
[ -x "$KC" ] || fail "kern-client not built"
[ -x "$top_builddir/runtimed-agent" ] || fail "runtimed-agent not built"

# Start a daemon in the foreground (its pid in $D) and wait for it.
start_daemon() {
	"$RUNTIMED" -D -v >>"$T/daemon.log" 2>&1 &
	D=$!
	track $D
	wait_status
}

# Every descendant of pid $1, via /proc (kernels sit in sessions of
# their own, so process groups would miss them).  Each stat file is read
# by the shell: a process that exits between the glob and the read is
# skipped, where awk reading the files itself would stop at it.
descendants() {
	for f in /proc/[0-9]*/stat; do
		{ read -r l <"$f"; } 2>/dev/null && printf '%s\n' "$l"
	done | awk -v root="$1" '
	{
		pid = $1; line = $0; sub(/^[0-9]+ \(.*\) /, "", line)
		split(line, f, " "); parent[pid] = f[2]
	}
	END {
		want[root] = 1; changed = 1
		while (changed) {
			changed = 0
			for (p in parent)
				if (!(p in want) && (parent[p] in want)) {
					want[p] = 1; changed = 1; print p
				}
		}
	}'
}

# Is any of the pids alive (zombies count as gone)?
any_alive() {
	for p in "$@"; do
		s=$(awk '{ sub(/^[0-9]+ \(.*\) /, ""); print $1 }' \
		    /proc/$p/stat 2>/dev/null)
		[ -n "$s" ] && [ "$s" != Z ] && return 0
	done
	return 1
}
