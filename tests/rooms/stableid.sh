#!/bin/sh
# SPDX-License-Identifier: ISC
# stableid.sh: a file keeps its notebook_id (docs/decisions/018).  Through
# runtimectl call (a real worker): connect by path, release, let the room
# unload, connect again: the same id; the same after the daemon is killed
# with -9 and restarted; connect_notebook by that id opens the unloaded
# file again.  Another file, a hard link: other ids; a symlink: the same.
# A file renamed while unloaded keeps its id under its new name; a deleted
# file's id answers notebook_unavailable saying so.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
export RUNTIMED_ROOM_GRACE_MS=200 RUNTIMED_KERNEL_KEEPALIVE=1

mknb() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(sys.argv[2])]
nbformat.write(nb, sys.argv[1])
PY
}

# The notebook_id connect_notebook gives (the handle is released at exit).
nbid() {
	"$CTL" --json call connect_notebook "$@" | jq_py 'j["notebook_id"]' ||
	    fail "connect_notebook $*"
}

# Wait (max 20 s) until the daemon holds no room for path $1.
unloaded() {
	i=0
	while "$CTL" --json rooms | jq_py '[r["path"] for r in j["rooms"]]' |
	    grep -qF "'$1'"; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "the room of $1 was not unloaded"
		sleep 0.1
	done
}

mkdir "$T/nb"
dir=$(cd "$T/nb" && pwd -P)
mknb "$dir/a.ipynb" "1"
mknb "$dir/b.ipynb" "2"
start_daemon --warm-pool 0

a1=$(nbid path="$dir/a.ipynb")
[ -n "$a1" ] || fail "no id"
unloaded "$dir/a.ipynb"
a2=$(nbid path="$dir/a.ipynb")
[ "$a1" = "$a2" ] || fail "reopened after unloading: $a2, not $a1"
ok "connect, release, unload, connect: the same id $a1"

b1=$(nbid path="$dir/b.ipynb")
[ "$b1" != "$a1" ] || fail "another file got the same id"
ln -s "$dir/b.ipynb" "$dir/link.ipynb"
[ "$(nbid path="$dir/link.ipynb")" = "$b1" ] || fail "a symlink: another id"
ln "$dir/b.ipynb" "$dir/hard.ipynb"
h1=$(nbid path="$dir/hard.ipynb")
[ "$h1" != "$b1" ] || fail "a hard link got the id of its other name"
ok "another file and a hard link: other ids; a symlink: its target's"

kill -9 $D
wait $D 2>/dev/null
start_daemon --warm-pool 0
a3=$(nbid path="$dir/a.ipynb")
[ "$a3" = "$a1" ] || fail "after kill -9 and restart: $a3, not $a1"
[ "$(nbid path="$dir/b.ipynb")" = "$b1" ] || fail "b after restart"
ok "after kill -9 and a restart: the same ids"

# By id, once unloaded: the file is opened again.
unloaded "$dir/a.ipynb"
"$CTL" --json call connect_notebook notebook_id="$a1" >"$T/byid.json" ||
    fail "connect by the id of an unloaded file: $(cat "$T/byid.json")"
jq_py 'j["path"]' <"$T/byid.json" | grep -qx "$dir/a.ipynb" ||
    fail "by id: $(cat "$T/byid.json")"
ok "connect_notebook notebook_id= of an unloaded file opens it again"

# Renamed while unloaded: the id follows the file (same inode, size,
# mtime, and the old name gone); the old name, made again, is new.
unloaded "$dir/a.ipynb"
mv "$dir/a.ipynb" "$dir/renamed.ipynb"
[ "$(nbid path="$dir/renamed.ipynb")" = "$a1" ] ||
    fail "a renamed file lost its id"
mknb "$dir/a.ipynb" "3"
[ "$(nbid path="$dir/a.ipynb")" != "$a1" ] ||
    fail "a new file at the old name took the renamed file's id"
ok "a renamed file keeps its id; a new file at its old name does not"

# Deleted: its id says what happened.
unloaded "$dir/renamed.ipynb"
rm "$dir/renamed.ipynb"
"$CTL" call connect_notebook notebook_id="$a1" >/dev/null 2>"$T/gone.err" &&
    fail "the id of a deleted file opened something"
grep -q "notebook_unavailable" "$T/gone.err" &&
    grep -q "renamed.ipynb" "$T/gone.err" ||
    fail "the id of a deleted file: $(cat "$T/gone.err")"
ok "the id of a deleted file: $(head -1 "$T/gone.err")"

"$CTL" stop >/dev/null || fail "stop"
wait $D
