#!/bin/sh
# SPDX-License-Identifier: ISC
# The regression guard: instructions (callgrind's Ir) of each hot path of
# bench-hotpath (bench/guard.c) against the committed baseline; fails when
# a case runs more than 10% more instructions.  Counts depend on the
# compiler, its flags and the library versions, so the baseline records
# the build it was made with and a different build is skipped with a
# note rather than compared.
#	bench/guard.sh [-u] PROG BASELINE [BUILD]
# -u writes BASELINE from this build instead (make bench-guard-baseline).
# BUILD names the build ("$(CC) version, $(CFLAGS)"; make passes it).
set -eu
update=0
if [ "${1:-}" = -u ]; then
	update=1
	shift
fi
prog=$1 base=$2 build=${3:-unknown}
cases="frame rpc mpjson ipynb shape wire image read outline redact redactmb"
limit=10	# percent
if ! command -v valgrind >/dev/null 2>&1; then
	echo "bench-guard: valgrind is not installed (apt-get install" \
	    "valgrind)" >&2
	exit 1
fi
T=$(mktemp -d /tmp/bench-guard.XXXXXX)
trap 'rm -rf "$T"' EXIT
# glibc copies and clears large blocks with rep movsb / rep stosb or with
# a vector loop, chosen by the blocks' addresses; callgrind counts rep's
# every byte as an instruction, so the same work counted 50% apart with
# the heap's layout (docs/decisions/103).  The vector loops only, then.
tunables=glibc.cpu.x86_rep_movsb_threshold=1000000000
tunables=$tunables:glibc.cpu.x86_rep_stosb_threshold=1000000000
count() {
	rc=0
	TMPDIR=$T GLIBC_TUNABLES=$tunables valgrind --tool=callgrind \
	    --callgrind-out-file=/dev/null \
	    --toggle-collect="guard_case_$1" "$prog" "$1" \
	    >"$T/out" 2>"$T/err" || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$T/out" "$T/err" >&2
		return $rc
	fi
	sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$T/err"
}

if [ $update = 1 ]; then
	{
		echo "# Instructions (callgrind Ir) per case of bench-hotpath;"
		echo "# written by make bench-guard-baseline, checked by"
		echo "# make bench-guard (bench/guard.sh, docs/decisions/020),"
		echo "# glibc without rep movsb/stosb (docs/decisions/103)."
		echo "build $build"
		for c in $cases; do
			echo "$c $(count "$c")"
		done
	} >"$T/new"
	cp "$T/new" "$base"
	cat "$base"
	exit 0
fi

want=$(sed -n 's/^build //p' "$base")
if [ "$want" != "$build" ]; then
	echo "bench-guard: skipped: the baseline is of another build"
	echo "  baseline: $want"
	echo "  this one: $build"
	echo "  (make bench-guard-baseline on the old and the new tree to" \
	    "compare two commits)"
	exit 0
fi
bad=0
for c in $cases; do
	old=$(awk -v c="$c" '$1 == c { print $2 }' "$base")
	rc=0
	new=$(count "$c") || rc=$?
	[ $rc -eq 0 ] && [ -n "$new" ] || {
		echo "bench-guard: $c: $prog failed" >&2
		exit 1
	}
	if [ -z "$old" ]; then
		echo "bench-guard: $c: not in $base (make bench-guard-baseline)"
		bad=1
		continue
	fi
	awk -v c="$c" -v old="$old" -v new="$new" -v limit="$limit" 'BEGIN {
		d = (new - old) * 100 / old
		v = d > limit ? "REGRESSION" : d < -limit ? \
		    "faster: make bench-guard-baseline to keep it" : "ok"
		printf "bench-guard: %-7s %13d instructions, baseline %13d, " \
		    "%+6.1f%%  %s\n", c, new, old, d, v
		exit d > limit
	}' || bad=1
done
if [ $bad -ne 0 ]; then
	echo "bench-guard: FAILED: a hot path runs more than $limit% more" \
	    "instructions than bench/guard-baseline.txt" >&2
	exit 1
fi
