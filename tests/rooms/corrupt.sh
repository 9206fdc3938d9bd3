#!/bin/sh
# SPDX-License-Identifier: ISC
# corrupt.sh: a damaged state database never makes the daemon start
# silently with less than was stored.  8 KiB of garbage is written at
# each page of a store holding untitled notebooks; every time, either
# every room comes back whole, or the daemon says so (runtimed status,
# the ROOM_LIST warnings, the log) and keeps the damaged file aside,
# byte for byte.  A file that is not a database at all is a loud error.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
DB=$RUNTIMED_STATE_DIR/runtimed.db

start_daemon
"$ROOMS_CLIENT" fill "$RUNTIMED_SOCKET" 6 50 >"$T/ids" || fail "fill"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census.clean" ||
    fail "census"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"
[ -f "$DB-wal" ] && [ -s "$DB-wal" ] && fail "WAL not checkpointed at stop"
cp "$DB" "$T/clean.db"
SIZE=$(stat -c %s "$T/clean.db")
PAGES=$((SIZE / 4096))
ok "store of $(wc -l <"$T/ids") untitled notebooks, $PAGES pages"

# garble FILE OFFSET: 8 KiB of seeded garbage at OFFSET.
garble() {
	/usr/bin/python3 -c '
import random, sys
f, off = sys.argv[1], int(sys.argv[2])
random.seed(off)
with open(f, "r+b") as fh:
    fh.seek(off)
    fh.write(bytes(random.getrandbits(8) for _ in range(8192)))
' "$1" "$2"
}

page=1
warned=0
while [ $page -lt $((PAGES - 1)) ]; do
	off=$((page * 4096))
	rm -rf "$RUNTIMED_STATE_DIR"
	mkdir -m 700 "$RUNTIMED_STATE_DIR"
	cp "$T/clean.db" "$DB"
	garble "$DB" $off
	cp "$DB" "$T/garbled.db"
	: >"$T/daemon.log"
	start_daemon
	"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" ||
	    fail "census at offset $off"
	"$RUNTIMED" status >"$T/status" || fail "status at offset $off"
	if ! cmp -s "$T/census" "$T/census.clean"; then
		grep -q '^warnings 0$' "$T/census" &&
		    fail "offset $off: rooms lost and ROOM_LIST has no" \
		    "warning: $(cat "$T/census")"
		grep -q '^warning' "$T/status" ||
		    fail "offset $off: rooms lost and status says nothing"
	fi
	if grep -q '^warning' "$T/status"; then
		warned=$((warned + 1))
		set -- "$RUNTIMED_STATE_DIR"/runtimed.db.damaged-*
		[ -f "$1" ] || fail "offset $off: no damaged copy kept"
		cmp -s "$1" "$T/garbled.db" ||
		    fail "offset $off: the damaged copy is not the damaged file"
		grep -q "$1" "$T/status" ||
		    fail "offset $off: status does not say where the copy is"
		grep -q "damaged" "$T/daemon.log" ||
		    fail "offset $off: the log says nothing"
	fi
	"$RUNTIMED" stop >/dev/null || fail "stop at offset $off"
	wait "$DPID"
	page=$((page + 1))
done
[ $warned -gt 0 ] || fail "no offset was found damaged"
ok "garbage at each of $((PAGES - 2)) pages: nothing lost silently" \
    "($warned found damaged)"

# An MCP client hears it from list_notebooks (result and text).
rm -rf "$RUNTIMED_STATE_DIR"
mkdir -m 700 "$RUNTIMED_STATE_DIR"
cp "$T/clean.db" "$DB"
garble "$DB" $((PAGES / 2 * 4096))
start_daemon
(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"t","version":"0"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}'
    sleep 3) | timeout 20 "$top_builddir/runtimed-mcp-worker" >"$T/mcp.out" \
    2>"$T/mcp.err"
/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("id") != 2:
        continue
    w = r["result"]["structuredContent"]["warnings"]
    t = r["result"]["content"][0]["text"]
    assert w and "damaged" in w[0], w
    assert t.startswith("WARNING: ") and "damaged" in t, t
    print("ok: list_notebooks warns: " + w[0][:160] + "...")
    sys.exit(0)
sys.exit("no list_notebooks reply")
' "$T/mcp.out" || fail "list_notebooks does not warn: $(cat "$T/mcp.out")"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"

# Not a database at all: refused loudly, the file left as it was.
rm -rf "$RUNTIMED_STATE_DIR"
mkdir -m 700 "$RUNTIMED_STATE_DIR"
cp "$T/clean.db" "$DB"
garble "$DB" 0
cp "$DB" "$T/garbled.db"
"$RUNTIMED" -D >"$T/refused.log" 2>&1 && fail "started on a non-database"
grep -q "runtimed.db" "$T/refused.log" ||
    fail "the refusal does not name the file: $(cat "$T/refused.log")"
cmp -s "$DB" "$T/garbled.db" || fail "the non-database was changed"
ok "not a database: $(head -1 "$T/refused.log")"
"$RUNTIMED" >"$T/refused2.log" 2>&1 && fail "started (daemonized) on a non-database"
grep -q "runtimed.db" "$T/refused2.log" ||
    fail "runtimed start does not say why: $(cat "$T/refused2.log")"
ok "runtimed start says it too"
