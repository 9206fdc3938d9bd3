#!/bin/sh
# SPDX-License-Identifier: ISC
# refusal.sh: an agent's ERROR to an AGENT_EXECUTE ends that run as
# error with the agent's message; it is not dropped with the run left
# "running".  A real agent refuses a cell only in a race (its kernel
# going as the cell arrives), so the daemon's real code is driven by
# fuzz-agentframes over the recorded seed refused-execute: a room runs
# three cells, the agent runs the first as recorded, then refuses the
# second.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 60 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"

FUZZ_TRACE=1 "$top_builddir/fuzz-agentframes" -n 0 \
    "${srcdir:-.}/fuzz/corpus/agentframes/refused-execute" \
    >"$T/trace.log" 2>&1 || fail "fuzz-agentframes failed"
grep -q "the kernel's agent refused cell [0-9a-f]*: kernel is not ready" \
    "$T/trace.log" ||
    fail "the refusal did not reach the run: $(cat "$T/trace.log")"
grep -Eq "run [0-9a-f-]+: error$" "$T/trace.log" ||
    fail "the run did not end as error: $(cat "$T/trace.log")"
ok "an agent's refusal of a cell ends its run as error"
