#!/bin/sh
# SPDX-License-Identifier: ISC
# hugefile.sh: a notebook file too large, or growing while it loads
# (issue 36, item 2).  A sparse 1 TiB file and a sparse 3 GiB one whose
# first bytes look like a notebook are refused from their size, before
# anything is allocated (the daemon's peak RSS stays small); a file that
# a writer keeps growing is read only as far as the size it had when it
# was opened, so the load ends at once and other clients are answered
# meanwhile.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
# Under ASan, freed memory waits in a quarantine (256 MB by default)
# that would count in the peak RSS measured here: a small one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

start_daemon --warm-pool 0 -v
mkdir -m 700 "$T/nb"

# Peak RSS of the daemon, in KiB.
hwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$D/status"
}

for size in 1T 3G; do
	f=$T/nb/sparse-$size.ipynb
	printf '{"cells": [{"cell_type": "code", "source": "' >"$f"
	truncate -s "$size" "$f" || fail "cannot make a sparse $size file"
	out=$(timeout 20 "$CTL" call connect_notebook path="$f" 2>&1)
	rc=$?
	[ $rc = 124 ] && fail "opening a sparse $size file hung"
	kill -0 "$D" 2>/dev/null || fail "the daemon died on a sparse $size file"
	[ $rc = 0 ] && fail "a sparse $size file opened: $out"
	echo "$out" | grep -q "notebook too large: [0-9]* bytes, over the 512 MiB a notebook file may be" ||
	    fail "sparse $size: $out"
	ok "a sparse $size file: $out"
done
h=$(hwm)
[ "$h" -lt 102400 ] || fail "the daemon's peak RSS is $h KiB after the sparse files"
ok "the daemon's peak RSS after both: $h KiB"

# A file a writer keeps growing (a string that never ends).
g=$T/nb/grow.ipynb
/usr/bin/python3 - "$g" "$T/grow.pid" <<'PY' &
import os, sys, time
open(sys.argv[2], "w").write(str(os.getpid()))
f = open(sys.argv[1], "wb", buffering=0)
f.write(b'{"cells": [{"cell_type": "code", "source": "')
chunk = b"x" * (1 << 20)
while True:
    f.write(chunk)
    time.sleep(0.005)
PY
W=$!
track $W
sleep 0.2
"$CTL" call connect_notebook path="$g" >"$T/grow.out" 2>&1 &
C=$!
slow=0
i=0
while kill -0 $C 2>/dev/null && [ $i -lt 40 ]; do
	t0=$(date +%s%N)
	timeout 5 "$RUNTIMED" status >/dev/null 2>&1 || fail "status failed during the load"
	t=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ $t -gt $slow ] && slow=$t
	i=$((i + 1))
done
wait $C && fail "a growing file opened: $(cat "$T/grow.out")"
kill $W
grep -q "changed while it was read (it grew past the [0-9]* bytes it had)" "$T/grow.out" ||
    fail "growing file: $(cat "$T/grow.out")"
[ $slow -lt 1000 ] || fail "status took $slow ms while a growing file loaded"
ok "a growing file: refused ($(cat "$T/grow.out")); status at most $slow ms meanwhile"
