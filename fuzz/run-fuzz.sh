#!/bin/sh
# SPDX-License-Identifier: ISC
# Run each fuzz target under libFuzzer for SECS seconds (make fuzz-short,
# make fuzz-long, scripts/test.sh).  Builds the instrumented targets in
# $FUZZ_BUILD (default build/fuzz of the source tree, configured with
# --enable-fuzzing CC=clang when it is not yet).  Each target starts from
# its committed seeds plus what earlier runs found (kept in
# $FUZZ_BUILD/fuzz-work/NAME, never in the source tree); crashes are
# written to $FUZZ_BUILD/fuzz-crashes/NAME/.  Prints one line per target
# (execs, execs/s, cov, ft) and exits 1 if any target crashed.
#
# usage: run-fuzz.sh SECS [target ...]
set -eu
secs=${1:?usage: run-fuzz.sh SECS [target ...]}
shift
src=$(cd "$(dirname "$0")/.." && pwd)
B=${FUZZ_BUILD:-$src/build/fuzz}
targets=${*:-fuzz-frame fuzz-ipynb fuzz-jupyter fuzz-rpc fuzz-args \
fuzz-reply fuzz-daemon fuzz-agent fuzz-proxy fuzz-agentframes fuzz-image fuzz-html fuzz-remote \
fuzz-web fuzz-store fuzz-wal fuzz-tbmap fuzz-pydefuse}

mkdir -p "$B"
cd "$B"
if [ ! -f Makefile ]; then
	[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1)
	"$src/configure" -q --enable-fuzzing CC=clang >/dev/null
fi
grep -q '^CFLAGS = .*-fsanitize=fuzzer-no-link' Makefile || {
	echo "run-fuzz: $B is not configured with --enable-fuzzing" >&2
	exit 2
}
# shellcheck disable=SC2086
if ! make -j2 $targets >fuzz-build.log 2>&1; then
	tail -n 40 fuzz-build.log >&2
	echo "run-fuzz: building the targets failed ($B/fuzz-build.log)" >&2
	exit 2
fi

# Leaks are checked by the sanitizer pass of make check; here a leak
# report would only hide the input that found it among the others.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

failed=
for t in $targets; do
	name=${t#fuzz-}
	work=$B/fuzz-work/$name
	crashes=$B/fuzz-crashes/$name
	mkdir -p "$work" "$crashes"
	log=$B/fuzz-work/$name.log
	# The tool names and arguments, for the targets that take JSON.
	dict=
	case $t in
	fuzz-rpc|fuzz-args|fuzz-reply) dict=-dict=$src/fuzz/tools.dict ;;
	esac
	# -timeout: an input that takes this long is a hang, reported.
	rc=0
	./"$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$crashes/" $dict \
	    "$work" "$src/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	printf '%-13s %5ss  execs %9s  %6s/s  cov %5s  ft %6s  %s\n' "$t" \
	    "$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
	    "$([ $rc = 0 ] && echo ok || echo "CRASH (rc $rc)")"
	if [ $rc != 0 ]; then
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 5
		# Where it stopped, and the input itself: a CI machine's
		# build tree is gone with it, its log is not.
		grep -E '^ +#[0-9]+ 0x.* in .*\.c:[0-9]+' "$log" | head -n 12
		for f in $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' \
		    "$log"); do
			[ -f "$f" ] || continue
			n=$(wc -c <"$f")
			if [ "$n" -le 16384 ]; then
				echo "input, $n bytes, base64 (decode it" \
				    "with base64 -d):"
				base64 -w 0 "$f"
				echo
			else
				echo "input: $n bytes, too big to print"
			fi
		done
		echo "run-fuzz: $t: see $log; reproduce with" \
		    "$B/$t $crashes/<file>" >&2
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "run-fuzz: crashed:$failed" >&2
	exit 1
fi
