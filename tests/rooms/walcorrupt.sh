#!/bin/sh
# SPDX-License-Identifier: ISC
# walcorrupt.sh: garbage in the state database's write-ahead log after a
# kill -9 (issue 36, item 7).  SQLite reads a log only up to its first
# bad frame and drops every committed transaction after it without a
# word, so the store opened as if acknowledged edits never were.  Now
# each damage (at the log's header, its first frame's header, inside its
# first page, the middle) is found before SQLite opens the file: runtimed
# status, ROOM_LIST's warnings and the log say where the log broke and
# how many committed transactions are lost, naming the notebooks their
# pages held, and the database and log are kept aside as they were.  The
# undamaged log of the same kill -9 gives no warning.  A log cut at a
# frame boundary, which SQLite takes for a shorter sound log, is found
# by the writer's mark of what was committed.  A store cut in
# half is said to be cut short, with how many pages are gone.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
export RUNTIMED_AUTOSAVE=0
DB=$RUNTIMED_STATE_DIR/runtimed.db

start_daemon
"$ROOMS_CLIENT" fill "$RUNTIMED_SOCKET" 4 12 >"$T/ids" || fail "fill"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census.clean" || fail "census"
kill9_daemon
[ -s "$DB-wal" ] || fail "no WAL left by kill -9"
cp "$DB" "$T/clean.db"
cp "$DB-wal" "$T/clean.db-wal"
[ -s "$DB-walmark" ] || fail "no mark of the WAL left by kill -9"
cp "$DB-walmark" "$T/clean.db-walmark"
WSIZE=$(stat -c %s "$T/clean.db-wal")
ok "kill -9 left a WAL of $WSIZE bytes"

# restore [OFFSET]: the store as the kill left it, 64 bytes of garbage
# at OFFSET in its log if given; then a daemon on it.
restore() {
	"$RUNTIMED" stop >/dev/null 2>&1
	[ -n "${DPID:-}" ] && wait "$DPID" 2>/dev/null
	rm -rf "$RUNTIMED_STATE_DIR"
	mkdir -m 700 "$RUNTIMED_STATE_DIR"
	cp "$T/clean.db" "$DB"
	cp "$T/clean.db-wal" "$DB-wal"
	cp "$T/clean.db-walmark" "$DB-walmark"
	if [ -n "${1:-}" ]; then
		/usr/bin/python3 -c '
import random, sys
random.seed(int(sys.argv[2]))
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    f.write(bytes(random.getrandbits(8) for _ in range(64)))
' "$DB-wal" "$1"
		cp "$DB" "$T/garbled.db"
		cp "$DB-wal" "$T/garbled.db-wal"
	fi
	: >"$T/daemon.log"
	start_daemon
}

restore
"$RUNTIMED" status >"$T/status" || fail "status"
grep -q '^warning' "$T/status" && fail "an undamaged WAL warned: $(cat "$T/status")"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" || fail "census"
cmp -s "$T/census" "$T/census.clean" || fail "the undamaged WAL lost rooms"
ok "the undamaged WAL: every room, no warning"

# The frames are 4096 + 24 bytes after a 32-byte header.
mid=$(( 32 + (WSIZE - 32) / 4120 / 2 * 4120 + 1000 ))
for off in 0 32 4120 $mid; do
	restore $off
	"$RUNTIMED" status >"$T/status" || fail "status at $off"
	"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" || fail "census at $off"
	grep -q "^warning.*write-ahead log is damaged at byte [0-9]*: [0-9]* committed transactions\{0,1\} after it" "$T/status" ||
	    fail "offset $off: status says nothing of the WAL: $(cat "$T/status"; cat "$T/census")"
	grep -q '^warnings 0$' "$T/census" && fail "offset $off: ROOM_LIST has no warning"
	grep -q "write-ahead log is damaged" "$T/daemon.log" || fail "offset $off: the log says nothing"
	set -- "$RUNTIMED_STATE_DIR"/runtimed.db.damaged-*-wal
	[ -f "$1" ] || fail "offset $off: no copy of the log kept"
	cmp -s "$1" "$T/garbled.db-wal" || fail "offset $off: the kept log is not the damaged one"
	cmp -s "${1%-wal}" "$T/garbled.db" || fail "offset $off: the kept database is not the one"
	ok "garbage at byte $off of the WAL: $(grep '^warning' "$T/status" | cut -c1-240)"
done

# The log cut exactly at a frame boundary, half its frames gone: sound
# to SQLite, which opens the shorter log without a word.  The writer's
# mark (runtimed.db-walmark, written after each commit) says how many
# frames were committed, so the cut is found and said.
frames=$(( (WSIZE - 32) / 4120 ))
restore
"$RUNTIMED" stop >/dev/null 2>&1
wait "$DPID" 2>/dev/null
rm -rf "$RUNTIMED_STATE_DIR"
mkdir -m 700 "$RUNTIMED_STATE_DIR"
cp "$T/clean.db" "$DB"
cp "$T/clean.db-walmark" "$DB-walmark"
head -c $(( 32 + frames / 2 * 4120 )) "$T/clean.db-wal" >"$DB-wal"
cp "$DB-wal" "$T/garbled.db-wal"
: >"$T/daemon.log"
start_daemon
"$RUNTIMED" status >"$T/status" || fail "status of a cut log"
grep -q "^warning.*write-ahead log is cut short: it ends with frame [0-9]* where $frames frames had been committed" "$T/status" ||
    fail "a log cut at frame $((frames / 2)) of $frames: $(cat "$T/status")"
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" || fail "census of a cut log"
grep -q '^warnings 0$' "$T/census" && fail "a cut log: ROOM_LIST has no warning"
set -- "$RUNTIMED_STATE_DIR"/runtimed.db.damaged-*-wal
cmp -s "$1" "$T/garbled.db-wal" || fail "a cut log: the kept log is not the cut one"
ok "the log cut at frame $((frames / 2)) of $frames: $(grep -o 'cut short: [^(]*' "$T/status")"
# Stopped cleanly and started again: nothing claimed, nothing said.
"$RUNTIMED" stop >/dev/null || fail "stop after a cut log"
wait "$DPID"
: >"$T/daemon.log"
start_daemon
"$RUNTIMED" status >"$T/status" || fail "status"
grep -q '^warning' "$T/status" && fail "a clean restart warned: $(cat "$T/status")"
ok "a clean stop and start after it: no warning"

# A store cut in half (checkpointed by a clean stop first): the recovery
# says the file is cut short and how much, not only "nothing known lost".
restore
"$RUNTIMED" stop >/dev/null || fail "stop"
wait "$DPID" 2>/dev/null
[ -s "$DB-wal" ] && fail "the WAL is not checkpointed at stop"
size=$(stat -c %s "$DB")
truncate -s $((size / 2 / 4096 * 4096)) "$DB"
: >"$T/daemon.log"
start_daemon
"$RUNTIMED" status >"$T/status" || fail "status of a cut store"
grep -q "^warning.*the file is cut short: it holds [0-9]* of the [0-9]* pages its header counts" "$T/status" ||
    fail "a store cut in half: $(cat "$T/status")"
ok "a store cut in half: $(grep -o 'the file is cut short[^(]*' "$T/status")"
