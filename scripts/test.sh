#!/bin/sh
# SPDX-License-Identifier: ISC
# Everything CI runs, in one command: install the dependencies (Debian
# 12); build and run "make check" (unit and integration tests); install
# under build/check/_inst, move that to build/check/_moved and run the
# end-to-end suite (the official MCP SDK client driving the installed,
# moved runtimed-mcp on a real kernel) and the clients suite (the real
# Claude Code and Codex CLIs against a scripted model: what the model
# reads); "make distcheck" (the tarball
# builds, installs and runs the unit tests, and ships every tracked
# file); then build again with AddressSanitizer and UndefinedBehaviorSanitizer and run
# "make check" there, e2e included; then run each libFuzzer target for
# RUNTIMED_FUZZ_SECS (15) seconds in an instrumented clang build.
#
# RUNTIMED_DISTCHECK=0 skips "make distcheck" (about 1 minute);
# RUNTIMED_NO_SANITIZERS=1 skips the second pass; RUNTIMED_NO_FUZZ=1 the
# libFuzzer phase (about 4 minutes: the 18 targets of fuzz/include.am,
# 15 s each).  The
# regression guard (make bench-guard, docs/decisions/020) runs after e2e.
set -eu
cd "$(dirname "$0")/.."
# .ci/run sets RUNTIMED_FRESH_ROOT=1: this same command then runs again
# in a fresh Debian 12 root, as a user who may sudo
# (scripts/ci-fresh-root.sh, decision 066).
if [ "${RUNTIMED_FRESH_ROOT:-0}" = 1 ]; then
	exec bash scripts/ci-fresh-root.sh
fi
ROOT=$(pwd)
T0=$(date +%s)
phase() {
	echo "== test.sh: $* (at $(( $(date +%s) - T0 )) s)"
}
# A failing phase is reported and the later phases still run, so one CI
# run shows every failure; the exit status is 1 if any phase failed.
failed=
FAILS=$(mktemp)
FAIL_LINES='^FAIL|FAIL [^ ]+:[0-9]+:|not ok|\[FAIL\]|Assertion Failed'
trap 'rm -f "$FAILS"' EXIT
fail_log() {
	# $1: a pattern of logs worth showing.
	for f in $1; do
		if [ -f "$f" ]; then
			# The assertions that failed, kept for the end of
			# the run: a long log's tail may not reach them.
			grep -h -A3 -E "$FAIL_LINES" "$f" | head -n 40 \
			    >> "$FAILS"
			echo "== $f (last 200 lines):"
			tail -n 200 "$f"
		fi
	done
	echo "== test.sh: FAILED: $2 (at $(( $(date +%s) - T0 )) s)" >&2
	failed="$failed, $2"
}

phase "dependencies"
sh scripts/install-deps.sh

phase "autogen"
./autogen.sh >/dev/null 2>&1 || ./autogen.sh

B=$ROOT/build/check
P=$B/_inst
phase "build ($B)"
rm -rf "$B"
mkdir -p "$B"
cd "$B"
"$ROOT/configure" -q --prefix="$P"
make -j2 >/dev/null
# The official MCP SDK client, for the tests that drive the real chain
# with it (worker tools, chaos, e2e); before make check so they run there.
phase "npm ci (tests/e2e, tests/conformance)"
(cd "$ROOT/tests/e2e" && npm ci --no-audit --no-fund --loglevel=error) ||
    fail_log "" "npm ci"
# The official MCP conformance suite and Inspector CLI, pinned
# (tests/worker/worker-conformance.sh runs them in make check).
(cd "$ROOT/tests/conformance" && npm ci --no-audit --no-fund \
    --loglevel=error) || fail_log "" "npm ci (tests/conformance)"
# The real Claude Code and Codex CLIs (pinned, with Node 22) for the
# clients suite; without them that suite fails, it never skips.
phase "npm ci (tests/clients)"
(cd "$ROOT/tests/clients" && npm ci --no-audit --no-fund --loglevel=error) ||
    fail_log "" "npm ci (tests/clients)"
# configurable-http-proxy for tests/remote/hub.sh (Debian's package does
# not run on the Node the tests use).
phase "npm ci (tests/remote)"
(cd "$ROOT/tests/remote" && npm ci --no-audit --no-fund --loglevel=error) ||
    fail_log "" "npm ci (tests/remote)"
phase "make check"
# The e2e and clients suites run below against the installed tree.
RUNTIMED_SKIP_E2E=1 RUNTIMED_SKIP_CLIENTS=1 make -j2 check ||
    fail_log "$B/test-suite.log" "make check"
make install >/dev/null
# Moved after installing: the programs find each other relative to
# themselves, so the suite also checks that an install is relocatable.
M=$B/_moved
rm -rf "$M"
mv "$P" "$M"

phase "e2e against $P, moved to $M"
cd "$ROOT/tests/e2e"
env -u RUNTIMED_LIBEXEC_DIR \
    RUNTIMED_MCP=$M/bin/runtimed-mcp RUNTIMED_BIN=$M/bin/runtimed \
    timeout 600 npm test || fail_log "" "e2e"

# What the model reads through the real Claude Code and Codex CLIs and a
# plain SDK client (issue 34), against the same installed, moved tree.
phase "clients (Claude Code, Codex) against $M"
cd "$B"
env -u RUNTIMED_LIBEXEC_DIR \
    RUNTIMED_MCP=$M/bin/runtimed-mcp RUNTIMED_BIN=$M/bin/runtimed \
    srcdir=$ROOT sh "$ROOT/tests/clients/run-clients.sh" ||
    fail_log "" "clients"

# Instruction counts of the hot paths against bench/guard-baseline.txt
# (callgrind; under a minute): fails on a regression over 10%.
phase "regression guard (make bench-guard)"
cd "$B"
make bench-guard || fail_log "" "bench-guard"

DISTCHECK_TESTS="test-proto test-common test-files test-store \
test-agent-kernelspec test-agent-wire test-room-ipynb test-room-nb \
test-room-upgrade test-worker tests/runtimed/daemon.sh \
tests/docs/docs-contract.sh tests/install/man.sh"
if [ "${RUNTIMED_DISTCHECK:-1}" = 1 ]; then
	phase "make distcheck"
	cd "$B"
	# The whole suite ran above on these sources; in the tarball's
	# build the unit tests and a few scripts show that it builds,
	# installs and tests from what it ships, and the list below that
	# it ships every tracked file.
	RUNTIMED_SKIP_E2E=1 RUNTIMED_SKIP_DEB=1 make -j2 distcheck \
	    TESTS="$DISTCHECK_TESTS" >"$B/distcheck.log" 2>&1 ||
	    fail_log "$B/distcheck.log $B/runtimed-*/_build/sub/test-suite.log" \
	    "make distcheck"
	if [ -d "$ROOT/.git" ]; then
		tar tzf "$B"/runtimed-*.tar.gz | sed 's|^[^/]*/||' | sort \
		    >"$B/dist-files.txt"
		missing=$(cd "$ROOT" && git ls-files | grep -v -e '^\.ci/' \
		    -e '^\.gitignore$' | sort | comm -23 - "$B/dist-files.txt")
		if [ -n "$missing" ]; then
			echo "$missing" >&2
			fail_log "" "make dist leaves out tracked files (add \
them to EXTRA_DIST)"
		fi
	fi
fi

if [ "${RUNTIMED_NO_SANITIZERS:-0}" != 1 ]; then
	B=$ROOT/build/asan
	phase "build with ASan and UBSan ($B)"
	rm -rf "$B"
	mkdir -p "$B"
	cd "$B"
	"$ROOT/configure" -q --enable-asan --enable-ubsan
	make -j2 >/dev/null
	# LeakSanitizer needs ptrace-like access that some containers deny;
	# probe it on a tiny program and keep leak checks only where it works.
	printf 'int main(void){return 0;}\n' >lsan-probe.c
	leaks=0
	if cc -fsanitize=address -o lsan-probe lsan-probe.c 2>/dev/null &&
	    ASAN_OPTIONS=detect_leaks=1 ./lsan-probe >/dev/null 2>&1; then
		leaks=1
	fi
	# allocator_may_return_null: an absurd allocation fails as plain
	# malloc would, instead of ASan aborting.  Stacks are unwound by
	# frame pointer (the build keeps them), not the slow unwinder.
	ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=1:allocator_may_return_null=1
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	export ASAN_OPTIONS UBSAN_OPTIONS
	phase "make check with sanitizers (ASAN_OPTIONS=$ASAN_OPTIONS)"
	# The Debian package was built and tried in the first pass.  The
	# fuzz replay gets a tenth of its mutations here (200 s of a 580 s
	# pass, alone at its end): the libFuzzer phase below runs the same
	# targets under the same sanitizers for longer.
	# The clients suite ran against the installed tree above: what the
	# model reads does not change with the sanitizers.
	RUNTIMED_SKIP_DEB=1 RUNTIMED_SKIP_CLIENTS=1 FUZZ_REPLAY_COUNT=2000 \
	    make -j2 check ||
	    fail_log "$B/test-suite.log" "make check (sanitizers)"
fi

if [ "${RUNTIMED_NO_FUZZ:-0}" != 1 ]; then
	# Every fuzz target, instrumented as a whole (configure
	# --enable-fuzzing CC=clang), from its seeds for a short run; a
	# crash fails the phase and its input is kept in build/fuzz/
	# fuzz-crashes (docs/fuzzing.md).
	B=$ROOT/build/fuzz
	phase "libFuzzer, each target ${RUNTIMED_FUZZ_SECS:-15} s ($B)"
	rm -rf "$B"
	FUZZ_BUILD=$B sh "$ROOT/fuzz/run-fuzz.sh" "${RUNTIMED_FUZZ_SECS:-15}" ||
	    fail_log "" "libFuzzer"
fi

if [ -n "$failed" ]; then
	if [ -s "$FAILS" ]; then
		echo "== test.sh: what said FAIL, from the logs above:"
		cat "$FAILS"
	fi
	echo "== test.sh: FAILED:${failed#,} (total $(( $(date +%s) - T0 )) s)" >&2
	exit 1
fi
phase "all passed"
