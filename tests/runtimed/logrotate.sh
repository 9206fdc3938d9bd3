#!/bin/sh
# SPDX-License-Identifier: ISC
# logrotate.sh: the daemon's log is rotated by size (common/log.c).  With
# RUNTIMED_LOG_MAX_BYTES=4096 and -vv, many requests make runtimed.log.1
# .. .3 appear and no .4; the live file stays below the limit plus one
# line, each generation too, all 0600; a symlink planted as a generation
# is replaced, never written through, and one as the live log is not
# opened (the starter is told); every line is whole.  With the
# python3 kernel a warm-pool agent shares the file (--log) and its lines
# follow the rotations; runtimectl logs lists the generations, prints
# them oldest first, and -f loses no line across a rotation.  A proxy's
# worker (RUNTIMED_DEBUG) rotates its log in logs/ the same way.
. "${srcdir:-.}/tests/runtimed/lib.sh"
trap '"$RUNTIMED" stop >/dev/null 2>&1; cleanup' EXIT
CTL=$top_builddir/runtimectl/runtimectl
LIMIT=4096
LINE=1024	# no line of ours is longer
export RUNTIMED_LOG_MAX_BYTES=$LIMIT
pool=0
jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 ' && pool=1
export RUNTIMED_WARM_POOL=$pool

mkdir -p "$RUNTIMED_STATE_DIR"
chmod 700 "$RUNTIMED_STATE_DIR"
echo "keep me" >"$T/victim"
ln -s "$T/victim" "$RUNTIMED_STATE_DIR/runtimed.log.3"

timeout 30 "$RUNTIMED" -vv || fail "runtimed -vv did not start"
wait_status
dpid=$("$RUNTIMED" status | sed -n 's/^pid //p')
track "$dpid"
i=0
while [ $i -lt 200 ]; do
	"$RUNTIMED" status >/dev/null || fail "status $i"
	i=$((i + 1))
done
L=$RUNTIMED_STATE_DIR/runtimed.log
[ -f "$L.1" ] || fail "no runtimed.log.1 after 200 requests at -vv"
[ -f "$L.3" ] && [ ! -L "$L.3" ] ||
    fail "runtimed.log.3 is not a rotated file"
[ -e "$L.4" ] && fail "runtimed.log.4 exists: more than 3 kept"
[ "$(cat "$T/victim")" = "keep me" ] ||
    fail "the symlink's target was written: $(cat "$T/victim")"
ok "rotated into runtimed.log.1 .. .3, the planted symlink replaced"

# The daemon stops: its last lines (and the agent's) are in the files.
"$RUNTIMED" stop >/dev/null || fail "runtimed stop"
wait_gone "$dpid" 100 || fail "daemon $dpid did not exit"
total=0
for f in "$L" "$L.1" "$L.2" "$L.3"; do
	size=$(stat -c %s "$f")
	mode=$(stat -c %a "$f")
	[ "$mode" = 600 ] || fail "$f is mode $mode, not 600"
	[ "$size" -lt $((LIMIT + LINE)) ] ||
	    fail "$f is $size bytes: over $LIMIT plus one line"
	total=$((total + size))
	bad=$(grep -cv '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]* [a-z-]*\[[0-9]*\] [a-z]*: ' "$f")
	[ "$bad" = 0 ] || fail "$f has $bad torn or foreign lines"
done
[ "$total" -lt $((4 * (LIMIT + LINE))) ] || fail "$total bytes in all"
ok "each file under $LIMIT bytes plus a line, $total in all, mode 600"
grep -q "runtimed\[$dpid\] .*stopp\|runtimed\[$dpid\] .*exit" "$L" "$L.1" ||
    fail "the daemon's last lines are not in the newest files"
ok "the daemon's own last lines kept"
if [ $pool = 1 ]; then
	grep -q 'runtimed-agent\[' "$L" "$L.1" "$L.2" "$L.3" ||
	    fail "no agent line in any generation"
	grep -q 'runtimed-agent\[[0-9]*\] info: exit' "$L" "$L.1" ||
	    fail "the agent's last line is not in the newest files"
	ok "the agent writes the same log and follows its rotations"
else
	echo "logrotate: no python3 kernel: agent part skipped"
fi

out=$("$CTL" -s "$RUNTIMED_STATE_DIR" logs) || fail "runtimectl logs"
echo "$out" | grep -q '^runtimed.log.1 ' ||
    fail "runtimectl logs lists no runtimed.log.1: $out"
"$CTL" -s "$RUNTIMED_STATE_DIR" logs runtimed >"$T/all.out" ||
    fail "runtimectl logs runtimed"
first=$(sed -n 's/^==> \(.*\) <==$/\1/p' "$T/all.out" | head -1)
last=$(sed -n 's/^==> \(.*\) <==$/\1/p' "$T/all.out" | tail -1)
[ "$first" = "$L.3" ] && [ "$last" = "$L" ] ||
    fail "runtimectl logs runtimed prints $first first and $last last"
ok "runtimectl logs lists the generations and prints them oldest first"

# The worker writes and rotates logs/mcp-worker-PID.log (--log).
RUNTIMED_WARM_POOL=0 timeout 30 "$RUNTIMED" || fail "runtimed did not start"
wait_status
track "$("$RUNTIMED" status | sed -n 's/^pid //p')"
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"t","version":"1"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	call='"method":"tools/call","params":{"name":"list_notebooks"}'
	i=2
	while [ $i -lt 250 ]; do
		printf '{"jsonrpc":"2.0","id":%d,%s}\n' $i "$call"
		i=$((i + 1))
	done
	sleep 2
} | RUNTIMED_DEBUG=1 timeout 30 "$top_builddir/runtimed-mcp" >"$T/mcp.out" \
    2>"$T/mcp.err" || fail "runtimed-mcp: $(tail -5 "$T/mcp.err")"
W=$(ls "$RUNTIMED_STATE_DIR"/logs/mcp-worker-*.log) ||
    fail "no worker log in $RUNTIMED_STATE_DIR/logs"
[ -f "$W.1" ] || fail "the worker's log was not rotated: $(cat "$W"; head -c 600 "$T/mcp.out")"
[ -e "$W.4" ] && fail "$W.4 exists: more than 3 kept"
for f in "$W"*; do
	size=$(stat -c %s "$f")
	[ "$size" -lt $((LIMIT + LINE)) ] || fail "$f is $size bytes"
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is not mode 600"
done
ok "the worker's log rotated into $(ls "$W"* | wc -l) files, each bounded"

# A symlink as the live log: not written through; the starter is told.
"$RUNTIMED" stop >/dev/null 2>&1
rm -f "$L"*
ln -s "$T/victim" "$L"
RUNTIMED_WARM_POOL=0 timeout 30 "$RUNTIMED" 2>"$T/start.err" ||
    fail "runtimed with a symlinked log did not start"
wait_status
track "$("$RUNTIMED" status | sed -n 's/^pid //p')"
"$RUNTIMED" status >/dev/null
"$RUNTIMED" stop >/dev/null || fail "runtimed stop"
[ "$(cat "$T/victim")" = "keep me" ] ||
    fail "the log was written through a symlink: $(cat "$T/victim")"
grep -q "no log: cannot open $L" "$T/start.err" ||
    fail "the starter was not told: $(cat "$T/start.err")"
ok "a symlink as runtimed.log is refused, and the starter told why"

# runtimectl logs -f follows runtimed.log across its rotations, losing
# no line (requests are paced so no two rotations fall in one poll).
rm -f "$L"*
RUNTIMED_WARM_POOL=0 timeout 30 "$RUNTIMED" -vv || fail "runtimed -vv"
wait_status
track "$("$RUNTIMED" status | sed -n 's/^pid //p')"
"$CTL" -s "$RUNTIMED_STATE_DIR" logs -f runtimed >"$T/follow.out" 2>&1 &
F=$!
track $F
sleep 1
i=0
while [ $i -lt 100 ]; do
	"$RUNTIMED" status >/dev/null || fail "status $i"
	sleep 0.05
	i=$((i + 1))
done
sleep 1
kill $F
[ -f "$L.1" ] || fail "no rotation while following"
n=$(grep -c 'client ctl pid [0-9]* (runtimed) connected' "$T/follow.out")
[ "$n" -ge 100 ] || fail "runtimectl logs -f printed $n of 100+ requests"
ok "runtimectl logs -f followed $n requests across the rotations"
"$RUNTIMED" stop >/dev/null
