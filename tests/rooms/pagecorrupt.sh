#!/bin/sh
# SPDX-License-Identifier: ISC
# pagecorrupt.sh: one damaged page of the state database that leaves a
# notebook impossible to restore (issue 36, item 7).  Three notebook
# files with unsaved edits; then garbage over the page of the store that
# holds the end of b.ipynb's stored copy (a page of its snapshot's
# overflow chain), in two ways: the whole page (quick_check sees the
# chain broken, but recovery read the row back with the garbage in it
# and said "nothing known lost"), and all of the page but its first four
# bytes (quick_check sees nothing: the store opened as sound).  Before,
# b.ipynb was then listed but could not be opened, and nothing said so.
# Now the daemon reads every stored room back at start: b.ipynb is named
# in a warning (runtimed status, ROOM_LIST, the log) with why, the store
# as it was is kept aside byte for byte, a.ipynb and c.ipynb come back
# whole with their edits, and b.ipynb opens as its file was last saved.
# Garbage over the page before (the middle of the chain) loses the row:
# the recovery's report now names b.ipynb by its file, not only an id.
# Garbage over the journal's page loses the unsaved edits: each notebook
# they were of is named and opens from its file, not as its snapshot
# without them (before: listed with 300 cells, dirty, no word of it).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
DB=$RUNTIMED_STATE_DIR/runtimed.db
CTL=$top_builddir/runtimectl/runtimectl
mkdir "$T/nb"

for n in a b c; do
	/usr/bin/python3 -c '
import json, sys
cells = [{"cell_type": "code", "id": "c%d" % k, "metadata": {},
          "execution_count": None, "outputs": [],
          "source": "x%d = %d  # %s" % (k, k, "y" * 60)} for k in range(300)]
cells[-1]["source"] = "end_of_" + sys.argv[2]
json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
           "cells": cells}, open(sys.argv[1], "w"))
' "$T/nb/$n.ipynb" "$n"
done

start_daemon
for n in a b c; do
	"$CTL" call edit_cells --json "{\"path\": \"$T/nb/$n.ipynb\", \"edits\": [{\"op\": \"insert\", \"after\": \"BOTTOM\", \"source\": \"unsaved = 1\"}]}" \
	    >/dev/null || fail "edit $n"
done
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census.clean" || fail "census"
[ "$(grep -c ' 301$' "$T/census.clean")" -eq 3 ] ||
    fail "not three notebooks of 301 cells: $(cat "$T/census.clean")"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"
[ -s "$DB-wal" ] && fail "the WAL is not checkpointed at stop"
cp "$DB" "$T/clean.db"

# The page holding "end_of_b" (b's last cell, in its stored snapshot).
page=$(/usr/bin/python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"end_of_b")
assert i > 0 and d.find(b"end_of_b", i + 1) < 0, "end_of_b not once"
print(i // 4096)
' "$T/clean.db") || fail "end_of_b is not in the store once"

# damage SKIP [PAGE]: the store as stopped, seeded garbage over the page
# of end_of_b (or PAGE) but its first SKIP bytes; then a daemon on it.
damage() {
	rm -rf "$RUNTIMED_STATE_DIR"
	mkdir -m 700 "$RUNTIMED_STATE_DIR"
	cp "$T/clean.db" "$DB"
	/usr/bin/python3 -c '
import random, sys
random.seed(7)
off = int(sys.argv[2]) * 4096 + int(sys.argv[3])
with open(sys.argv[1], "r+b") as f:
    f.seek(off)
    f.write(bytes(random.getrandbits(8) for _ in range(4096 - int(sys.argv[3]))))
' "$DB" "${2:-$page}" "$1"
	cp "$DB" "$T/garbled.db"
	: >"$T/daemon.log"
	start_daemon
}

for skip in 0 4; do
	damage $skip
	"$RUNTIMED" status >"$T/status" || fail "status ($skip)"
	"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" ||
	    fail "census ($skip)"
	grep -q "^warning.*could not be restored.*$T/nb/b.ipynb (notebook [0-9a-f-]*): " "$T/status" ||
	    fail "page $page, garbage after byte $skip: b.ipynb is not named: $(cat "$T/status" "$T/census")"
	grep -q "could not be restored" "$T/daemon.log" ||
	    fail "($skip) the log says nothing"
	grep -q '^warnings 0$' "$T/census" && fail "($skip) ROOM_LIST has no warning"
	grep -q unavailable "$T/census" &&
	    fail "($skip) a notebook is listed that cannot be opened: $(cat "$T/census")"
	[ "$(grep -c ' 301$' "$T/census")" -eq 2 ] ||
	    fail "($skip) a.ipynb and c.ipynb are not whole: $(cat "$T/census")"
	# The store as it was, kept aside: the damaged file itself.
	set -- "$RUNTIMED_STATE_DIR"/runtimed.db.damaged-*[0-9Z]
	[ -f "$1" ] || fail "($skip) no copy of the store kept"
	cmp -s "$1" "$T/garbled.db" || fail "($skip) the kept store is not the damaged one"
	grep -q "kept as $1" "$T/status" || fail "($skip) status does not say where"
	# b.ipynb opens as its file was saved, not failing, not empty.
	"$CTL" call inspect_notebook path="$T/nb/b.ipynb" >"$T/b.out" 2>&1 ||
	    fail "($skip) b.ipynb cannot be opened: $(cat "$T/b.out")"
	grep -q "b.ipynb: 300 cells" "$T/b.out" ||
	    fail "($skip) b.ipynb is not its file: $(head -c 600 "$T/b.out")"
	ok "garbage over page $page after byte $skip: $(grep -o 'could not be restored.*): [^;]*' "$T/status")"
	"$RUNTIMED" stop >/dev/null || fail "stop ($skip)"
	wait "$DPID"
	# Its damaged rows are gone from the store: the next start is quiet.
	: >"$T/daemon.log"
	start_daemon
	"$RUNTIMED" status >"$T/status" || fail "status after ($skip)"
	grep -q '^warning' "$T/status" && fail "($skip) the next start warns again: $(cat "$T/status")"
	"$RUNTIMED" stop >/dev/null || fail "stop ($skip)"
	wait "$DPID"
done

# The page before it, a middle page of b's overflow chain: the row no
# longer reads at all, and the recovery's report names b.ipynb by its
# file, not only by an id.
damage 0 $((page - 1))
"$RUNTIMED" status >"$T/status" || fail "status (page before)"
grep -q "^warning.*; lost: notebook [0-9a-f-]* ($T/nb/b.ipynb)" "$T/status" ||
    fail "page $((page - 1)): the lost notebook is not named by its file: $(cat "$T/status")"
"$CTL" call inspect_notebook path="$T/nb/b.ipynb" >"$T/b.out" 2>&1 ||
    fail "b.ipynb cannot be opened: $(cat "$T/b.out")"
grep -q "b.ipynb: 300 cells" "$T/b.out" || fail "b.ipynb is not its file"
ok "garbage over page $((page - 1)): $(grep -o 'lost: notebook [^;]*' "$T/status")"

# The page of the journal holding the unsaved edits: recovery loses
# them.  A notebook with a file is not brought back as its snapshot
# without its edits (listed, dirty, autosaved over its file later): it
# is named, and its file as last saved is what opens.
jpage=$(/usr/bin/python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
print(d.find(b"unsaved = 1") // 4096)
' "$T/clean.db")
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"
damage 0 "$jpage"
"$RUNTIMED" status >"$T/status" || fail "status (journal)"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" || fail "census (journal)"
grep -q "^warning.*could not be restored.*ipynb (notebook [0-9a-f-]*): edits in its journal were lost" "$T/status" ||
    fail "journal page $jpage: no notebook named: $(cat "$T/status" "$T/census")"
grep -q ' 300$' "$T/census" &&
    fail "journal page $jpage: a notebook came back without its edits: $(cat "$T/census")"
for n in a b c; do
	grep -q "$T/nb/$n.ipynb (notebook [0-9a-f-]*): edits in its journal" "$T/status" ||
	    continue
	"$CTL" call inspect_notebook path="$T/nb/$n.ipynb" >"$T/n.out" 2>&1 ||
	    fail "$n.ipynb cannot be opened: $(cat "$T/n.out")"
	grep -q "$n.ipynb: 300 cells" "$T/n.out" || fail "$n.ipynb is not its file"
done
ok "garbage over the journal's page $jpage: $(grep -o 'could not be restored.*' "$T/status" | cut -c1-200)"

# Garbage that leaves the rows decodable (SQLite keeps no page
# checksums, quick_check sees nothing): one byte of b's last cell in its
# snapshot, then one byte of an unsaved edit in the journal.  Each row's
# own checksum names it (docs/decisions/080); before, b came back with
# "end_of_X" as its last cell, and the edit as "unsaved = 7", unsaid.
# rewrite FROM TO: the store as stopped with FROM's first occurrence
# turned into TO (as long); then a daemon on it.
rewrite() {
	rm -rf "$RUNTIMED_STATE_DIR"
	mkdir -m 700 "$RUNTIMED_STATE_DIR"
	cp "$T/clean.db" "$DB"
	/usr/bin/python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.find(sys.argv[2].encode())
assert i > 0 and len(sys.argv[2]) == len(sys.argv[3])
d[i:i + len(sys.argv[3])] = sys.argv[3].encode()
open(sys.argv[1], "wb").write(d)
' "$DB" "$1" "$2"
	: >"$T/daemon.log"
	start_daemon
}
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"
rewrite end_of_b end_of_X
"$RUNTIMED" status >"$T/status" || fail "status (a byte of the snapshot)"
grep -q "^warning.*could not be restored.*$T/nb/b.ipynb (notebook [0-9a-f-]*): its snapshot ([0-9]* bytes) fails its checksum" "$T/status" ||
    fail "a byte of b's snapshot: b.ipynb is not named: $(cat "$T/status")"
"$CTL" call inspect_notebook path="$T/nb/b.ipynb" view=source cell_ids='[299]' >"$T/b.out" 2>&1 ||
    fail "b.ipynb cannot be opened: $(cat "$T/b.out")"
grep -q "end_of_X" "$T/b.out" && fail "b.ipynb came back with the garbage"
grep -q "end_of_b" "$T/b.out" || fail "b.ipynb is not its file: $(head -c 600 "$T/b.out")"
ok "a byte of b's snapshot changed, still decodable: $(grep -o 'could not be restored.*checksum' "$T/status" | cut -c1-160)"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID"
rewrite "unsaved = 1" "unsaved = 7"
"$RUNTIMED" status >"$T/status" || fail "status (a byte of the journal)"
grep -q "^warning.*could not be restored.*ipynb (notebook [0-9a-f-]*): 1 of its 1 journal entries do not decode" "$T/status" ||
    fail "a byte of the journal: no notebook named: $(cat "$T/status")"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" || fail "census (a byte of the journal)"
[ "$(grep -c ' 301$' "$T/census")" -eq 2 ] ||
    fail "the other two are not whole: $(cat "$T/census")"
ok "a byte of an unsaved edit changed: $(grep -o 'could not be restored.*decode' "$T/status" | cut -c1-160)"
