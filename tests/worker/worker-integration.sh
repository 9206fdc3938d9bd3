#!/bin/bash
# SPDX-License-Identifier: ISC
# worker-integration.sh: the real runtimed-mcp-worker on stdio against the
# real daemon (autostarted by the worker) and a real python3 kernel.
# Usage: worker-integration.sh [builddir]
set -u

# Watchdog: the whole test, daemon and kernel included, within 180 s.
if [ -z "${WORKER_TEST_WATCHDOG:-}" ]; then
	export WORKER_TEST_WATCHDOG=1
	exec timeout 180 "$0" "$@"
fi

B=${1:-${abs_top_builddir:-$(pwd)}}
S=$(cd "$(dirname "$0")/../.." && pwd)
WORKER=$B/runtimed-mcp-worker
DAEMON=$B/runtimed/runtimed
[ -f "$DAEMON" ] || DAEMON=$B/runtimed
AGENT=$B/runtimed-agent
for f in "$WORKER" "$DAEMON" "$AGENT"; do
	if [ ! -f "$f" ] || [ ! -x "$f" ]; then
		echo "missing $f" >&2
		exit 77
	fi
done

T=$(mktemp -d /tmp/rtd-worker-test.XXXXXX)
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
# runtimed is runtimed/runtimed in a build tree: list both directories.
export RUNTIMED_LIBEXEC_DIR=$(dirname "$DAEMON"):$(dirname "$AGENT")
export PYDEVD_DISABLE_FILE_VALIDATION=1
export PATH=/usr/bin:/bin:$PATH
mkdir -m 700 "$T/run"

cleanup() {
	[ -n "${WPID:-}" ] && kill "$WPID" 2>/dev/null
	"$DAEMON" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	echo "--- worker stderr:" >&2
	cat "$T/worker.err" >&2
	exit 1
}

coproc W { exec "$WORKER" 2>"$T/worker.err"; }
WPID=$W_PID
# Our own copies of its pipes: bash unsets W (and closes its fds) once
# it reaps the worker, which may be before the last reply is read.
exec {WIN}>&"${W[1]}" {WOUT}<&"${W[0]}"

# Send one request line, read the next reply line (within $2 seconds).
rpc() {
	printf '%s\n' "$1" >&"$WIN"
	reply "$@"
}

# Read the next reply line (within $2 seconds).
reply() {
	REPLY=
	# Skip notifications (no id) to the reply.
	while IFS= read -r -t "${2:-30}" REPLY <&"$WOUT"; do
		case $REPLY in
		'{"jsonrpc":"2.0","method":'*) continue ;;
		esac
		break
	done
	[ -n "$REPLY" ] || fail "no reply to: $1"
	echo "<<< ${REPLY:0:600}" >&2
}

# A field of the last reply, by a python expression on r.
field() {
	printf '%s' "$REPLY" | /usr/bin/python3 -c \
	    "import json,sys; r=json.load(sys.stdin); print($1)" 2>/dev/null
}

rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"io.runtimed/structured":{}}},"clientInfo":{"name":"test","version":"0"}}}'
[ "$(field 'r["result"]["protocolVersion"]')" = 2025-11-25 ] ||
    fail "initialize"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$WIN"

# The tools are the sections of docs/tools.md but reconnect, which the
# proxy answers (docs-contract.sh checks what each says), so a new tool
# needs no second list here.
want=$(sed -n 's/^## `\([a-z_]*\)`$/\1/p' "$S/docs/tools.md" |
    grep -vx reconnect | LC_ALL=C sort | tr '\n' ' ')
[ -n "$want" ] || fail "no tool sections in $S/docs/tools.md"
rpc '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
[ "$(field '" ".join(sorted(t["name"] for t in r["result"]["tools"]))')" = \
    "${want% }" ] || fail "tools/list is not the tools of docs/tools.md"

# A line over the 16 MiB request cap: -32600 with id null and the reason,
# as the proxy answers it; the session goes on.
/usr/bin/python3 -c 'import sys; sys.stdout.buffer.write(b"{\"jsonrpc\":\"2.0\",\"id\":50,\"method\":\"ping\",\"params\":{\"pad\":\"" + b"x" * (16 << 20) + b"\"}}\n")' >&"$WIN"
reply "over the cap" 60
[ "$(field 'r["error"]["code"], r["id"]')" = "-32600 None" ] ||
    fail "a line over 16 MiB: $REPLY"
field 'r["error"]["message"]' |
    grep -q "exceeds the limit of 16777216 bytes and was dropped" ||
    fail "a line over 16 MiB: the reason"
rpc '{"jsonrpc":"2.0","id":51,"method":"ping"}'
[ "$(field '"result" in r and r["id"]')" = 51 ] ||
    fail "ping after a line over the cap"

NB=$T/work/test.ipynb
mkdir -p "$T/work"
rpc "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"create_notebook\",\"arguments\":{\"path\":\"$NB\"}}}" 60
[ "$(field 'r["result"]["isError"]')" = False ] || fail "create_notebook"
H=$(field 'r["result"]["structuredContent"]["notebook_handle"]')
case $H in nbh_*) ;; *) fail "bad handle $H" ;; esac
NBID=$(field 'r["result"]["structuredContent"]["notebook_id"]')

rpc "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"insert\",\"after\":\"BOTTOM\",\"source\":\"x = 6*7; print(x)\"}]}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "edit_cells"
C=$(field 'r["result"]["structuredContent"]["cells"][0]["cell_id"]')
[ -n "$C" ] || fail "no cell id"

rpc "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"run_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"cell_ids\":[\"$C\"],\"wait_secs\":30}}}" 60
[ "$(field 'r["result"]["structuredContent"]["status"]')" = done ] ||
    fail "run not done"
[ "$(field 'r["result"]["structuredContent"]["cells"][0]["outputs"][0]["text"].strip()')" = 42 ] ||
    fail "no 42 in outputs"
field 'r["result"]["content"][0]["text"]' | grep -qx 42 ||
    fail "no 42 in text"
EXEC=$(field 'r["result"]["structuredContent"]["execution_id"]')

# The same run by execution_id; and by index (0) through notebook_id.
rpc "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"get_results\",\"arguments\":{\"notebook_handle\":\"$H\",\"execution_id\":\"$EXEC\"}}}"
[ "$(field 'r["result"]["structuredContent"]["cells"][0]["source"]')" = \
    "x = 6*7; print(x)" ] || fail "get_results source"

rpc "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"inspect_notebook\",\"arguments\":{\"notebook_handle\":\"$H\",\"view\":\"all\"}}}"
[ "$(field 'r["result"]["structuredContent"]["total_cells"]')" = 1 ] ||
    fail "inspect total_cells"

# edit_cells' ops are insert, edit, delete, replace and resolve: move and
# clear_outputs are their own tools'; an edit must change something.
for op in move explode; do
	rpc "{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"$op\",\"cell_ids\":[0]}]}}}"
	field 'r["result"]["structuredContent"]["error"]["message"]' | grep -q \
	    '^edits\[0\]: op must be insert, edit, delete, replace or resolve' ||
	    fail "edit_cells op $op: $REPLY"
done
rpc "{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"edit\",\"cell_id\":0}]}}}"
field 'r["result"]["structuredContent"]["error"]["message"]' | grep -q \
    '^edits\[0\]: edit needs source, cell_type or metadata' ||
    fail "edit_cells edit of nothing: $REPLY"

# replace: exactly one match, else no_match / ambiguous_match; index refs.
rpc "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"replace\",\"cell_id\":0,\"old_text\":\"nothere\",\"new_text\":\"y\"}]}}}"
[ "$(field 'r["result"]["structuredContent"]["error"]["code"]')" = no_match ] ||
    fail "no_match"
rpc "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"replace\",\"cell_id\":\"$C\",\"old_text\":\"x\",\"new_text\":\"y\"}]}}}"
[ "$(field 'r["result"]["structuredContent"]["error"]["code"]')" = \
    ambiguous_match ] || fail "ambiguous_match"
rpc "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"insert\",\"after\":0,\"source\":\"import time; time.sleep(2); 1/0\"},{\"op\":\"replace\",\"cell_id\":0,\"old_text\":\"6*7\",\"new_text\":\"7*6\"}]}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "insert+replace"
C2=$(field 'r["result"]["structuredContent"]["cells"][0]["cell_id"]')

# A long wait does not block other requests: ping is answered first.
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"run_cells\",\"arguments\":{\"notebook_id\":\"$(printf '%s' "$NBID")\",\"cell_ids\":[1],\"wait_secs\":30}}}" >&"$WIN"
rpc '{"jsonrpc":"2.0","id":24,"method":"ping"}'
[ "$(field 'r["id"]')" = 24 ] || fail "ping was not answered during a wait"
IFS= read -r -t 60 REPLY <&"$WOUT" || fail "no run reply"
echo "<<< ${REPLY:0:600}" >&2
[ "$(field 'r["id"]')" = 23 ] || fail "run reply id"
OWNER_REPLY=$REPLY
[ "$(field 'r["result"]["structuredContent"]["status"]')" = error ] ||
    fail "1/0 did not end in error"
[ "$(field 'r["result"]["structuredContent"]["cells"][0]["cell_id"]')" = \
    "$C2" ] || fail "index 1 is not the inserted cell"
field 'r["result"]["content"][0]["text"]' | grep -q ZeroDivisionError ||
    fail "no traceback text"
field 'r["result"]["content"][0]["text"]' | grep -q "$(printf '\033')" &&
    fail "ANSI escapes in model text"
[ -n "$(field 'r["result"]["structuredContent"]["target"]["notebook_handle"]')" ] ||
    fail "an ID target names its address owner"

# An image output: MCP image content for the model, a placeholder inline.
PNG=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==
rpc "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"run\":true,\"edits\":[{\"op\":\"insert\",\"after\":\"BOTTOM\",\"source\":\"import base64\\nfrom IPython.display import Image, display\\ndisplay(Image(base64.b64decode('$PNG')))\"}]}}}" 60
[ "$(field '[c["mimeType"] for c in r["result"]["content"] if c["type"]=="image"]')" = \
    "['image/png']" ] || fail "no image content"
[ "$(field 'r["result"]["structuredContent"]["run"]["status"]')" = done ] ||
    fail "image cell run"
C3=$(field 'r["result"]["structuredContent"]["cells"][0]["cell_id"]')
rpc "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"delete\",\"cell_id\":\"$C3\"}]}}}"

rpc "{\"jsonrpc\":\"2.0\",\"id\":25,\"method\":\"tools/call\",\"params\":{\"name\":\"list_notebooks\",\"arguments\":{}}}"
[ "$(field 'len(r["result"]["structuredContent"]["notebooks"])')" = 1 ] ||
    fail "list_notebooks"

rpc "{\"jsonrpc\":\"2.0\",\"id\":26,\"method\":\"tools/call\",\"params\":{\"name\":\"edit_cells\",\"arguments\":{\"notebook_handle\":\"$H\",\"edits\":[{\"op\":\"delete\",\"cell_id\":\"$C2\"}]}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "delete"

rpc "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"save_notebook\",\"arguments\":{\"notebook_handle\":\"$H\"}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "save_notebook"
/usr/bin/python3 -c "import nbformat,sys; nb=nbformat.read('$NB',4); sys.exit(len(nb.cells)!=1 or nb.cells[0].source!='x = 7*6; print(x)')" ||
    fail "saved file"

# Exports: a symlink planted at the old temporary name is not written
# through; a dangling symlink is written through to its target.
echo precious >"$T/victim"
ln -s "$T/victim" "$T/work/out.html.tmp.$WPID"
rpc "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":{\"name\":\"export_notebook\",\"arguments\":{\"notebook_handle\":\"$H\",\"format\":\"html\",\"path\":\"$T/work/out.html\"}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "export to html"
[ "$(cat "$T/victim")" = precious ] || fail "the export wrote through a planted link"
[ -f "$T/work/out.html" ] && [ ! -L "$T/work/out.html" ] || fail "no out.html"
mkdir "$T/exp"
ln -s ../exp/target.md "$T/work/link.md"
rpc "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"export_notebook\",\"arguments\":{\"notebook_handle\":\"$H\",\"format\":\"markdown\",\"path\":\"$T/work/link.md\"}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "export through a link"
[ -L "$T/work/link.md" ] || fail "the export replaced the link"
grep -q "7\*6" "$T/exp/target.md" || fail "the link's target was not written"
ls -A "$T/work" "$T/exp" | grep -q '^\.rtd-' && fail "temporary file left"
# An existing file is replaced only with overwrite (issue 35), as save
# and the transfers refuse: file_exists, the file untouched.
echo theirs >"$T/work/theirs.md"
rpc "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"export_notebook\",\"arguments\":{\"notebook_handle\":\"$H\",\"format\":\"markdown\",\"path\":\"$T/work/theirs.md\"}}}"
[ "$(field 'r["result"]["structuredContent"]["error"]["code"]')" = \
    file_exists ] || fail "export over an existing file: $REPLY"
field 'r["result"]["structuredContent"]["error"]["message"]' |
    grep -q "exists; pass overwrite: true to replace it" ||
    fail "export refusal wording: $REPLY"
[ "$(cat "$T/work/theirs.md")" = theirs ] || fail "export replaced a file"
rpc "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tools/call\",\"params\":{\"name\":\"export_notebook\",\"arguments\":{\"notebook_handle\":\"$H\",\"format\":\"markdown\",\"path\":\"$T/work/theirs.md\",\"overwrite\":true}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "export overwrite: $REPLY"
grep -q "7\*6" "$T/work/theirs.md" || fail "overwrite did not write"

rpc "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"disconnect_notebook\",\"arguments\":{\"notebook_handle\":\"$H\"}}}"
[ "$(field 'r["result"]["isError"]')" = False ] || fail "disconnect"
rpc "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"inspect_notebook\",\"arguments\":{\"notebook_handle\":\"$H\"}}}"
[ "$(field 'r["result"]["structuredContent"]["error"]["code"]')" = \
    attachment_expired ] || fail "released handle not expired"

# The daemon goes away: the handle still held (the address owner that
# the notebook_id call minted) expires; the next call starts a new one.
OWNER=$(printf '%s' "$OWNER_REPLY" | /usr/bin/python3 -c \
    'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["target"]["notebook_handle"])')
"$DAEMON" stop >/dev/null 2>&1 || fail "runtimed stop"
sleep 1
rpc "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"inspect_notebook\",\"arguments\":{\"notebook_handle\":\"$OWNER\"}}}"
[ "$(field 'r["result"]["structuredContent"]["error"]["code"]')" = \
    attachment_expired ] || fail "handle of a stopped daemon not expired"
rpc '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"create_notebook","arguments":{}}}' 60
[ "$(field 'r["result"]["isError"]')" = False ] ||
    fail "create_notebook after a daemon restart"
[ "$(field 'r["result"]["structuredContent"]["path"]')" = None ] ||
    fail "untitled notebook has a path"

# stdin EOF with a call in flight: its answer comes, then the worker
# exits 0 at once (the stdio transport hears the last call end), not
# after the WORKER_EOF_GRACE_MS (2 s) grace.
printf '%s\n' '{"jsonrpc":"2.0","id":52,"method":"tools/call","params":{"name":"list_kernels","arguments":{}}}' >&"$WIN"
exec {WIN}>&- {W[1]}>&-
reply "list_kernels at EOF" 30
[ "$(field 'r["id"], "result" in r')" = "52 True" ] ||
    fail "the call in flight at EOF is answered"
T0=$(date +%s%N)
wait "$WPID"
rc=$?
MS=$(( ($(date +%s%N) - T0) / 1000000 ))
WPID=
[ $rc = 0 ] || fail "worker exit status $rc"
[ "$MS" -lt 1000 ] || fail "the worker exited $MS ms after its last answer"
echo "PASS"
