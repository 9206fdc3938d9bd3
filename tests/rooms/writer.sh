#!/bin/bash
# SPDX-License-Identifier: ISC
# writer.sh: the daemon's event loop never waits for the disk (decision
# 021).  Under strace -f, 300 edit batches of one insert each (every one
# answered only once durable) while another client reads: the store's
# fsyncs are all made by the writer thread, none by the loop (the main
# thread), and the loop does not toggle write interest per frame (a few
# epoll_ctl calls, not two per frame).  Then 60 saves of a file-backed
# notebook (decision 028): each answered with its file in place, and
# still no fsync by the loop.  Then kill -9: every batch is in the
# store.  Skipped without strace or ptrace permission.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
command -v strace >/dev/null || skip_missing "no strace"
export RUNTIMED_AUTOSAVE=0

start_daemon
ST=$T/strace
strace -f -qq -e trace=fdatasync,fsync,epoll_ctl -p "$DPID" -o "$ST" \
    2>"$T/strace.err" &
SPID=$!
track $SPID
i=0
until grep -q . "$ST" 2>/dev/null || [ $i -gt 50 ]; do
	# Attached once the loop's first epoll_ctl or a sync shows; a ping
	# makes one.
	"$RUNTIMED" status >/dev/null 2>&1
	i=$((i + 1))
	sleep 0.1
done
kill -0 $SPID 2>/dev/null || { echo "strace cannot attach: skipped"; exit 77; }
: >"$ST.mark"
"$ROOMS_CLIENT" bigbatch "$RUNTIMED_SOCKET" 0 300 1 0 0 ||
    fail "300 batches of one insert"
sleep 0.5
kill -INT $SPID
wait $SPID 2>/dev/null
loop_sync=$(grep -cE "^$DPID +(fdatasync|fsync)\(" "$ST")
all_sync=$(grep -cE "^[0-9]+ +(fdatasync|fsync)\(" "$ST")
loop_ctl=$(grep -cE "^$DPID +epoll_ctl\(" "$ST")
echo "fsync+fdatasync: $all_sync in all, $loop_sync by the loop;" \
    "epoll_ctl by the loop: $loop_ctl"
[ "$all_sync" -gt 0 ] || fail "strace saw no fsync at all: $(head -3 "$ST")"
[ "$loop_sync" -eq 0 ] || fail "the event loop called fsync or fdatasync" \
    "$loop_sync times"
# Each connection costs a few; per frame would be over 600.
[ "$loop_ctl" -lt 100 ] || fail "the loop called epoll_ctl $loop_ctl times" \
    "for 300 batches"
ok "300 durable batches: the writer thread made all $all_sync syncs," \
    "the loop $loop_ctl epoll_ctl calls"

# Saves: the loop writes the temporary file, the writer makes it durable.
strace -f -qq -e trace=fdatasync,fsync,renameat,rename,renameat2 \
    -p "$DPID" -o "$ST.save" 2>"$T/strace.err" &
SPID=$!
track $SPID
sleep 0.5
mkdir -p "$T/files"
"$ROOMS_CLIENT" saveloop "$RUNTIMED_SOCKET" "$T/files" 60 ||
    fail "60 saves"
sleep 0.5
kill -INT $SPID
wait $SPID 2>/dev/null
loop_sync=$(grep -cE "^$DPID +(fdatasync|fsync)\(" "$ST.save")
all_sync=$(grep -cE "^[0-9]+ +(fdatasync|fsync)\(" "$ST.save")
renames=$(grep -cE "^[0-9]+ +rename" "$ST.save")
loop_renames=$(grep -cE "^$DPID +rename" "$ST.save")
echo "saves: fsync+fdatasync $all_sync in all, $loop_sync by the loop;" \
    "renames $renames, $loop_renames by the loop"
[ "$renames" -ge 60 ] || fail "strace saw $renames renames for 60 saves"
[ "$loop_sync" -eq 0 ] || fail "the event loop called fsync or fdatasync" \
    "$loop_sync times during saves"
[ "$loop_renames" -eq 0 ] || fail "the event loop renamed $loop_renames" \
    "files during saves"
ok "60 saves: the writer thread made all $all_sync syncs and $renames renames"

kill9_daemon
start_daemon
"$ROOMS_CLIENT" census "$RUNTIMED_SOCKET" >"$T/census" ||
    fail "census after kill -9"
grep -q " 300$" "$T/census" || fail "after kill -9 the batches are not all" \
    "there: $(cat "$T/census")"
ok "after kill -9 every acknowledged batch is there"
"$RUNTIMED" stop >/dev/null || fail "stop"
