#!/bin/sh
# SPDX-License-Identifier: ISC
# swaplink.sh: an open notebook replaced by a symbolic link to a private
# file (issue 36, item 4).  The room does not reload through the link
# (the file is read O_NOFOLLOW at its real path); an edit then made is
# not autosaved over the link (the file changed on disk), and a forced
# save replaces the link with the room's own content: the private
# file's text never reaches the shared path, and the private file is
# untouched.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

start_daemon --warm-pool 0 --autosave-delay 1 -v
mkdir -m 755 "$T/shared"
mkdir -m 700 "$T/private"
mk() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(sys.argv[2])]
nbformat.write(nb, sys.argv[1])
PY
}
nb=$T/shared/nb.ipynb
mk "$nb" "print('shared')"
chmod 644 "$nb"
mk "$T/private/keys.ipynb" "SECRET = 'hunter2'"
chmod 600 "$T/private/keys.ipynb"
sum=$(sha256sum "$T/private/keys.ipynb")

id=$("$CTL" --json call connect_notebook path="$nb" | jq_py 'j["notebook_id"]') ||
    fail "connect"
[ -n "$id" ] || fail "no notebook_id"

# The swap: the shared name becomes a link to the private file.
ln -sf "$T/private/keys.ipynb" "$nb.new"
mv -T "$nb.new" "$nb"
sleep 1
grep -q "not reloading: $nb is a symbolic link (not followed)" "$T/daemon.log" ||
    fail "the room did not refuse the link: $(grep "$id" "$T/daemon.log" | tail -3)"
out=$("$CTL" call inspect_notebook notebook_id="$id" view=source 2>&1) ||
    fail "inspect: $out"
echo "$out" | grep -q hunter2 && fail "the room read the private file: $out"
echo "$out" | grep -q "print('shared')" || fail "the room lost its content: $out"
ok "the room did not reload through the link"

# An edit: autosave must not write over the link, nor through it.
out=$("$CTL" call edit_cells notebook_id="$id" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"edited"}]' 2>&1) ||
    fail "edit: $out"
sleep 3
[ -L "$nb" ] || fail "autosave replaced the link: $(cat "$nb")"
[ "$(sha256sum "$T/private/keys.ipynb")" = "$sum" ] ||
    fail "the private file was written"
ok "no autosave over the link; the private file untouched"

# A save: file_changed_on_disk; with force the room's content replaces
# the link, and nothing of the private file is in it.
out=$("$CTL" call save_notebook notebook_id="$id" 2>&1) &&
    fail "a save over the link answered OK: $out"
echo "$out" | grep -q file_changed_on_disk || fail "save: $out"
out=$("$CTL" call save_notebook notebook_id="$id" force=true 2>&1) ||
    fail "forced save: $out"
[ -L "$nb" ] && fail "the forced save wrote through the link"
grep -q hunter2 "$nb" && fail "the private content reached the shared path"
grep -q "print('shared')" "$nb" || fail "the forced save lacks the room's content"
[ "$(sha256sum "$T/private/keys.ipynb")" = "$sum" ] ||
    fail "the private file was written"
ok "save: file_changed_on_disk; forced: the room's content, the link replaced"
