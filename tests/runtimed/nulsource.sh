#!/bin/sh
# SPDX-License-Identifier: ISC
# nulsource.sh: every run ends, whatever its cells' sources hold.  A
# cell whose source holds NUL (the contract allows it) reaches a real
# python3 kernel, which answers with its own error, and the next cell
# runs; a source too large for an AGENT_EXECUTE frame ends its run as
# error with a message saying so.  Before the fix the agent refused the
# NUL, the daemon dropped the refusal and the run stayed "running".
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_WARM_POOL=0

"$RUNTIMED" -D -v >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status

printf "print('before')" >"$T/c0.py"
printf "print(len('a\000b'))" >"$T/c1.py"
printf "print('after')" >"$T/c2.py"
timeout 60 "$RTD_CLIENT" runfile "$RUNTIMED_SOCKET" "$T/nul.json" \
    "$T/c0.py" "$T/c1.py" "$T/c2.py" >"$T/client.log" 2>&1 ||
    fail "the run of a cell holding NUL did not end within 60 s"
/usr/bin/python3 - "$T/nul.json" <<'PY' || fail "the NUL run ended wrong"
import json, sys
s = json.load(open(sys.argv[1]))
c = s["cells"]
assert s["status"] == "error", s["status"]
assert c[1]["source"] == "print(len('a\0b'))", repr(c[1]["source"])
assert c[1]["status"] == "error", c[1]
err = [o for o in c[1]["outputs"] if o["output_type"] == "error"]
assert err and "null" in (err[0]["ename"] + err[0]["evalue"]).lower(), c[1]
assert c[2]["status"] == "ok", c[2]
assert c[2]["outputs"][0]["text"] == "after\n", c[2]
print("cell 1: %s: %s" % (err[0]["ename"], err[0]["evalue"]))
PY
ok "a cell holding NUL runs; the kernel's error ends it; the next cell runs"

# The largest source a ROOM_EDIT carries is larger than an AGENT_EXECUTE
# can: ROOM_EDIT adds 44 bytes to it, AGENT_EXECUTE about a hundred.
/usr/bin/python3 -c 'import sys
sys.stdout.write("#" + "x" * (16 * 1024 * 1024 - 45))' >"$T/big.py"
timeout 60 "$RTD_CLIENT" runfile "$RUNTIMED_SOCKET" "$T/big.json" \
    "$T/big.py" >"$T/client.log" 2>&1 ||
    fail "the run of a 16 MiB cell did not end within 60 s"
/usr/bin/python3 - "$T/big.json" <<'PY' || fail "the big run ended wrong"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["status"] == "error", s["status"]
assert "AGENT_EXECUTE" in s["message"] and "bytes" in s["message"], s
assert s["cells"][0]["status"] == "error", s["cells"][0]
print("run message: %s" % s["message"])
PY
ok "a source too large to send ends its run as error, saying why"

kill -0 $D || fail "daemon died"
"$RUNTIMED" stop || fail "stop"
wait $D
