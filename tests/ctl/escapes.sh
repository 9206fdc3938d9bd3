#!/bin/sh
# SPDX-License-Identifier: ISC
# escapes.sh: runtimectl never prints a notebook's terminal escapes
# (issue 36, item 12).  A cell's source holding an OSC 52 clipboard
# write, a title change, a screen clear, a BEL and a C1 CSI (U+009B), and
# a notebook file name holding ESC: inspect_notebook (text and --json),
# a tool error, list_notebooks naming the file, and runtimectl status
# none of ESC, BEL or the C1 byte; the text shows them as ^[ and ^G.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
nb=$T/nb/esc.ipynb
/usr/bin/python3 - "$nb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    "x = 1  # \x1b]52;c;cm0gLXJmIH4K\x07 \x1b]0;pwned\x07 \x1b[2J \u009b2J end")]
nbformat.write(nb, sys.argv[1])
PY

# Does file $1 hold ESC, BEL or a UTF-8 C1 control?
raw() {
	/usr/bin/python3 - "$1" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
sys.exit(0 if re.search(rb"[\x1b\x07]|\xc2[\x80-\x9f]", b) else 1)
PY
}

"$CTL" call inspect_notebook path="$nb" view=source >"$T/text.out" 2>&1 ||
    fail "inspect: $(cat "$T/text.out")"
raw "$T/text.out" && fail "inspect printed raw escapes"
grep -qF '^[]52;c;cm0gLXJmIH4K^G' "$T/text.out" ||
    fail "the OSC 52 is not shown as text: $(cat -v "$T/text.out")"
grep -qF '^[[2J end' "$T/text.out" || fail "the C1 CSI not shown: $(cat -v "$T/text.out")"
ok "inspect_notebook text: escapes shown as ^[ and ^G"

"$CTL" --json call inspect_notebook path="$nb" view=source >"$T/json.out" 2>&1 ||
    fail "inspect --json"
raw "$T/json.out" && fail "inspect --json printed raw escapes"
/usr/bin/python3 - "$T/json.out" <<'PY' || fail "--json lost the source"
import json, sys
j = json.load(open(sys.argv[1]))
assert "\x1b]52;c;" in j["cells"][0]["source"] and "\u009b2J" in j["cells"][0]["source"], j
PY
ok "inspect_notebook --json: the same source, escaped as JSON"

# A file name with ESC in it: an error naming it, and status's table.
bad=$(printf '%s/nb/\033]0;pwned\007.ipynb' "$T")
cp "$nb" "$bad"
"$CTL" call inspect_notebook path="$bad" >/dev/null 2>&1 || fail "open the ESC name"
"$CTL" call inspect_notebook path="$bad" cell_ids='["nope"]' >"$T/err.out" 2>&1 &&
    fail "a missing cell id answered"
raw "$T/err.out" && fail "an error printed raw escapes: $(cat -v "$T/err.out")"
"$CTL" call list_notebooks >"$T/list.out" 2>&1 || fail "list: $(cat "$T/list.out")"
grep -qF '^[]0;pwned^G.ipynb' "$T/list.out" ||
    fail "list_notebooks does not show the name: $(cat -v "$T/list.out")"
raw "$T/list.out" && fail "list_notebooks printed raw escapes"
"$CTL" status >"$T/status.out" 2>&1 || fail "status: $(cat "$T/status.out")"
raw "$T/status.out" && fail "status printed raw escapes: $(cat -v "$T/status.out")"
ok "a tool error, list_notebooks and runtimectl status: no raw escapes"
