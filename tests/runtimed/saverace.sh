#!/bin/sh
# SPDX-License-Identifier: ISC
# saverace.sh: an editor renames its own version over the notebook while
# a long save (50 MB: a notebook joined whole must fit a 64 MiB frame)
# runs (issue 36, item 3).  The save must see it at
# its rename and answer file_changed_on_disk, leaving the editor's
# version in place; three tries, each on a fresh notebook.  Then the
# same with the file deleted and created anew during a save-as to a path
# that did not exist, and a plain save with nothing in its way still
# replaces the file (the check is not a refusal of every save).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

start_daemon --warm-pool 0 --no-autosave -v
mkdir -m 700 "$T/nb"

# A notebook of about 50 MB: 50 cells, each a 1 MB text output.
bignb() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
text = "x" * (1 << 20)
cells = [{"cell_type": "code", "id": "c%03d" % i, "metadata": {},
    "source": "print(%d)" % i, "execution_count": i + 1,
    "outputs": [{"output_type": "execute_result", "execution_count": i + 1,
        "metadata": {}, "data": {"text/plain": text}}]}
    for i in range(50)]
json.dump({"cells": cells, "metadata": {}, "nbformat": 4,
    "nbformat_minor": 5}, open(sys.argv[1], "w"))
PY
}

# The editor: once a save's temporary file shows in the directory, its
# own version is renamed over the notebook (as vim or VS Code save).
editor() {
	/usr/bin/python3 - "$1" <<'PY' &
import os, sys, time
path = sys.argv[1]
d = os.path.dirname(path)
mine = os.path.join(d, "editor-version.tmp")
open(mine, "w").write('{"cells": [], "metadata": {"editor": "mine"}, '
    '"nbformat": 4, "nbformat_minor": 5}\n')
end = time.time() + 60
while time.time() < end:
    if any(n.startswith(".rtd-") for n in os.listdir(d)):
        os.replace(mine, path)
        sys.exit(0)
    time.sleep(0.0005)
sys.exit(1)
PY
	E=$!
}

for try in 1 2 3; do
	nb=$T/nb/race$try.ipynb
	bignb "$nb"
	out=$("$CTL" call edit_cells path="$nb" \
	    'edits=[{"op":"insert","after":"BOTTOM","source":"edited"}]' 2>&1) ||
	    fail "edit $try: $out"
	editor "$nb"
	t0=$(date +%s%N)
	out=$("$CTL" call save_notebook notebook="$nb" 2>&1)
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait $E || fail "try $try: the editor never saw the save's temporary file"
	grep -q '"editor": "mine"' "$nb" ||
	    fail "try $try: the editor's version is gone (save exit $rc: $out)"
	[ $rc = 0 ] && fail "try $try: the save answered OK over the editor's version"
	echo "$out" | grep -q "file_changed_on_disk" ||
	    fail "try $try: not file_changed_on_disk: $out"
	[ -z "$(ls -A "$T/nb" | grep '^\.rtd-')" ] ||
	    fail "try $try: a temporary file is left: $(ls -A "$T/nb")"
	ok "try $try: the save (${ms} ms) answered: $out"
done

# Save-as to a new path that an editor creates during the save.
src=$T/nb/src.ipynb
bignb "$src"
"$CTL" call edit_cells path="$src" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"edited"}]' >/dev/null 2>&1 ||
    fail "edit src"
editor "$T/nb/new.ipynb"
out=$("$CTL" call save_notebook notebook="$src" path="$T/nb/new.ipynb" 2>&1) &&
    fail "save-as answered OK over a file created meanwhile: $out"
wait $E || fail "save-as: the editor never saw the temporary file"
grep -q '"editor": "mine"' "$T/nb/new.ipynb" ||
    fail "save-as replaced the file created meanwhile"
echo "$out" | grep -q "file_changed_on_disk" || fail "save-as: $out"
ok "save-as to a path created during the save: $out"

# Nothing in the way: the save replaces the file.
out=$("$CTL" call save_notebook notebook="$src" 2>&1) || fail "plain save: $out"
grep -q '"source": "edited"' "$src" || grep -q '"edited"' "$src" ||
    fail "the plain save did not write the edit"
ok "a save with nothing in its way replaces the file"
