#!/bin/sh
# SPDX-License-Identifier: ISC
# introspect.sh: looking inside kernels and answering input() through
# the real worker, daemon, agent and kernels (introspect.py; decision
# 022): variables while time.sleep(30) runs, a 10^7 list and a 1 MB
# string, completion, inspection, input() and getpass() answered by
# send_input, an interrupted input, IRkernel idle and busy.  Then the
# password is looked for in everything runtimed wrote: the saved
# notebook, the state directory (store, journal, logs) and the logs.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 150 "$0" "$@"
. "${srcdir:-.}/tests/kernels/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel, debugpy' 2>/dev/null ||
    skip_missing "no ipykernel with debugpy"
export RUNTIMED_AUTOSAVE=0

start_daemon
/usr/bin/python3 "${srcdir:-.}/tests/kernels/introspect.py" \
    "$top_builddir" "${srcdir:-.}" "$T" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "introspect.py"; }
cat "$T/out"
nb=$(tail -1 "$T/out")
[ -f "$nb" ] || fail "no saved notebook $nb"
"$RUNTIMED" stop >/dev/null 2>&1
wait_gone "$D" 100 || fail "the daemon did not stop"
if grep -rl 's3cr3t-PW-q7Zx' "$T" 2>/dev/null | grep -v '/introspect\.py$'
then
	fail "the password is in the files above"
fi
ok "the password is in no file runtimed wrote (notebook, store, logs)"
