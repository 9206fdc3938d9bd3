#!/bin/bash
# SPDX-License-Identifier: ISC
# editrace.sh: edit_cells and run_cells are judged against one state, the
# daemon's.  The real worker talks to the real daemon through a relay
# (rooms-client relay) that, when told, lets another client edit a cell
# just before the worker's ROOM_EDIT reaches the daemon.  A replace then
# applies to the source as the other client left it (its edit is kept);
# a replace whose old_text that edit removed fails with no_match and no
# edit of its batch applies; cells named by index are resolved by the
# daemon.  run_cells by index on a notebook of 10,000 cells moves no
# ROOM_CONTENT: the relay's frame log shows what each call cost, and the
# figures are printed.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/rooms/lib.sh"
WORKER=$top_builddir/runtimed-mcp-worker
[ -x "$WORKER" ] || { echo "missing $WORKER: skipped"; exit 77; }
export RUNTIMED_AUTOSAVE=0

start_daemon
R=$T/relay
mkdir -m 700 "$R"
"$ROOMS_CLIENT" relay "$RUNTIMED_SOCKET" "$R/runtimed.sock" "$R" \
    >"$T/relay.log" 2>&1 &
track $!
i=0
until [ -S "$R/runtimed.sock" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "the relay did not listen within 10 s"
	sleep 0.1
done

coproc W { RUNTIMED_SOCKET=$R/runtimed.sock exec "$WORKER" \
    2>"$T/worker.log"; }
track $W_PID
N=0

# One tools/call; REPLY is the answer line.
call() {
	N=$((N + 1))
	printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' \
	    $N "$1" "$2" >&"${W[1]}"
	REPLY=
	while IFS= read -r -t 60 REPLY <&"${W[0]}"; do
		case $REPLY in '{"jsonrpc":"2.0","method":'*) continue ;; esac
		break
	done
	[ -n "$REPLY" ] || fail "no answer to $1"
}

# A field of REPLY's structuredContent, by a python expression on s.
field() {
	printf '%s' "$REPLY" | /usr/bin/python3 -c \
	    "import json,sys; s=json.load(sys.stdin)['result']['structuredContent']; print($1)"
}

# Sources of the notebook, "|" between cells.
sources() {
	call inspect_notebook "{\"notebook_handle\":\"$H\",\"view\":\"all\"}"
	field '"|".join(c["source"] for c in s["cells"])'
}

printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"editrace","version":"0"}}}' >&"${W[1]}"
read -r -t 30 REPLY <&"${W[0]}" || fail "no answer to initialize"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${W[1]}"

call create_notebook '{}'
H=$(field 's["notebook_handle"]')
NBID=$(field 's["notebook_id"]')
call edit_cells "{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"insert\",\"after\":\"BOTTOM\",\"source\":\"a = 1\\nb = 2\"}]}"
C=$(field 's["cells"][0]["cell_id"]')
[ -n "$C" ] || fail "no cell inserted: $REPLY"

# Another client's edit lands between the worker's read and its write.
printf '%s\n%s\n%s' "$NBID" "$C" 'a = 100
b = 2' >"$R/next"
call edit_cells "{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"replace\",\"cell_id\":0,\"old_text\":\"b = 2\",\"new_text\":\"b = 3\"}]}"
[ -e "$R/next" ] && fail "the relay did not make the other edit"
[ "$(field 's.get("error")')" = None ] || fail "replace failed: $REPLY"
[ "$(field 's["cells"][0]["cell_id"]')" = "$C" ] ||
    fail "replace by index 0 named another cell: $REPLY"
got=$(sources)
[ "$got" = 'a = 100
b = 3' ] || fail "the other client's edit was overwritten: source is" \
    "\"$got\", wanted \"a = 100\\nb = 3\""
ok "a replace keeps another client's edit made after the worker's read"

# That edit removes old_text: no_match, and the batch's insert is not made.
printf '%s\n%s\n%s' "$NBID" "$C" 'c = 9' >"$R/next"
call edit_cells "{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"insert\",\"after\":\"TOP\",\"source\":\"new\"},{\"op\":\"replace\",\"cell_id\":\"$C\",\"old_text\":\"b = 3\",\"new_text\":\"b = 4\"}]}"
[ "$(field 's["error"]["code"]')" = no_match ] ||
    fail "a replace whose text another client removed: $REPLY"
field 's["error"]["message"]' | grep -q 'edits\[1\].*inspect_notebook' ||
    fail "no_match does not name the edit or say what to do: $REPLY"
got=$(sources)
[ "$got" = 'c = 9' ] || fail "a failed batch changed the notebook: \"$got\""
ok "a replace whose old_text another client removed: no_match, nothing applied"

# Index references the daemon refuses, with the worker's codes.
call edit_cells "{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"delete\",\"cell_id\":7}]}"
[ "$(field 's["error"]["code"]')" = cell_not_found ] ||
    fail "delete of index 7 in a 1-cell notebook: $REPLY"
field 's["error"]["message"]' | grep -q 'index 7 is out of range (1 cell' ||
    fail "an index out of range does not say so: $REPLY"
ok "an index out of range: cell_not_found, saying so"

# run_cells by index on 10,000 cells: what the call moves.
NB=$T/big.ipynb
/usr/bin/python3 - "$NB" <<'EOF' || fail "cannot write $NB"
import sys, nbformat
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x_%d = %d  # %s" % (i, i, "." * 40))
    for i in range(10000)]
nbformat.write(nb, sys.argv[1])
EOF
call connect_notebook "{\"path\":\"$NB\"}"
H=$(field 's["notebook_handle"]')
before=$(wc -l <"$R/frames")
t0=$(date +%s%N)
call run_cells "{\"notebook_handle\":\"$H\",\"cell_ids\":[5000,9999],\"wait_secs\":0}"
t1=$(date +%s%N)
[ "$(field 's["cells"][0]["cell_id"] != s["cells"][1]["cell_id"]')" = True ] ||
    fail "run_cells by index: $REPLY"
[ "$(field 's["cells"][1]["source"][:8]')" = "x_9999 =" ] ||
    fail "index 9999 ran another cell: $REPLY"
moved=$(tail -n +$((before + 1)) "$R/frames")
echo "$moved" | grep -q ROOM_CONTENT && fail "run_cells by index read the" \
    "whole notebook: $moved"
echo "run_cells [5000,9999] on 10,000 cells: $(echo "$moved" |
    awk '{n++; b += $3} END {print n " frames, " b " bytes"}'), $(((t1 - t0) / 1000000)) ms"
call run_cells "{\"notebook_handle\":\"$H\",\"cell_ids\":[10000],\"wait_secs\":0}"
[ "$(field 's["error"]["code"]')" = cell_not_found ] ||
    fail "run_cells of index 10000 of 10,000: $REPLY"
ok "run_cells by index reads no notebook; past the end: cell_not_found"
"$RUNTIMED" stop >/dev/null || fail "stop"
