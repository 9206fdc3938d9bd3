#!/bin/sh
# SPDX-License-Identifier: ISC
# tracebacks.sh: tracebacks that point at cells (issue 40, item 3,
# decision 070).  On a real ipykernel: a function defined in one cell
# raising when called from another, in one run (frames in both cells,
# the innermost first in the text); a chained exception; a pandas
# KeyError (its frames in pandas folded and counted); the calling cell
# run again (a new execution count, the same cells); a restart (counts
# start again: In[2] is another cell now).  xeus-python the same, and
# IRkernel the cell that raised, with no line (it gives none).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0

start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"

mknb() {	# path kernel language cell...
	/usr/bin/python3 - "$@" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in sys.argv[4:]]
nb.metadata["kernelspec"] = {"name": sys.argv[2], "display_name": sys.argv[2],
    "language": sys.argv[3]}
nbformat.write(nb, sys.argv[1])
for c in nb.cells:
    print(c.id)
PY
}

# run NAME PATH CELL... : run_cells of those cells, text and JSON kept.
run() {
	name=$1 path=$2
	shift 2
	ids=$(printf '"%s",' "$@")
	"$CTL" --json call run_cells path="$path" "cell_ids=[${ids%,}]" \
	    wait_secs=40 >"$T/$name.json" 2>&1 || :
	"$CTL" call get_results path="$path" \
	    execution_id="$(jq_py 'j["execution_id"]' <"$T/$name.json")" \
	    timeout_secs=30 >"$T/$name.txt" 2>&1 || :
}

# frames NAME : the error's frames, one line each: cell|line|name|chained|code.
frames() {
	python3 -c 'import json, sys
j = json.load(sys.stdin)
for c in j["cells"]:
    for o in c.get("outputs", []):
        if o.get("output_type") != "error":
            continue
        print("library", o.get("library_frames"))
        for f in o.get("frames", []):
            print("|".join(str(v) for v in (f.get("cell_id", "-"),
                f.get("line", "-"), f.get("name", "-"),
                "chained" if f.get("chained") else "", f.get("code", "-"))))
' <"$T/$1.json"
}

expect() {	# NAME WANT
	got=$(frames "$1")
	[ "$got" = "$2" ] || fail "$1: frames
$got
want
$2
$(head -c 3000 "$T/$1.txt")"
}

nb=$T/nb/t.ipynb
set -- $(mknb "$nb" python3 python 'def f():
    return x' '1
f()' 'try:
    f()
except Exception as e:
    raise ValueError("v") from e' 'import pandas as pd
df = pd.DataFrame({"a": [1]})
df["b"]' 'pass')
A=$1 B=$2 C=$3 P=$4 N=$5

# Defined in A, raised in A's f called from B, one run of both.
run multi "$nb" "$A" "$B"
expect multi "library 0
$B|2|-||f()
$A|2|f||return x"
grep -q "^at cell $A line 2 in f, called from cell $B line 2$" "$T/multi.txt" ||
    fail "multi: no 'at cell' line: $(head -c 3000 "$T/multi.txt")"
ok "a function of one cell raising when called from another: both cells, with lines"

run chain "$nb" "$C"
expect chain "library 0
$C|2|-|chained|f()
$A|2|f|chained|return x
$C|4|-||raise ValueError(\"v\") from e"
grep -q "^at cell $C line 4$" "$T/chain.txt" ||
    fail "chain: $(head -c 3000 "$T/chain.txt")"
ok "a chained exception: the cause's frames say chained"

if /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
	run pandas "$nb" "$P"
	got=$(frames pandas)
	case $got in
	"library "[1-9]*"
$P|3|-||df[\"b\"]") ;;
	*) fail "pandas: $got
$(head -c 3000 "$T/pandas.txt")" ;;
	esac
	grep -q "library frames folded (pandas" "$T/pandas.txt" ||
	    fail "pandas: not folded: $(head -c 3000 "$T/pandas.txt")"
	ok "a pandas KeyError: the cell's frame, $(echo "$got" | sed -n '1s/library //p') library frames counted"
else
	echo "# pandas not installed: its KeyError not tried"
fi

# What a model reads (decision 070): the text's characters with and
# without the "at cell" line, structuredContent's with and without the
# frames and library_frames of its error.
cost() {	# NAME
	python3 - "$T/$1.txt" "$T/$1.json" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
at = sum(len(l) + 1 for l in t.splitlines() if l.startswith("at cell "))
j = json.load(open(sys.argv[2]))
n = len(json.dumps(j, ensure_ascii=False, separators=(",", ":")))
for c in j["cells"]:
    for o in c.get("outputs", []):
        o.pop("frames", None)
        o.pop("library_frames", None)
m = len(json.dumps(j, ensure_ascii=False, separators=(",", ":")))
print("text %d -> %d characters (+%d), structuredContent %d -> %d (+%d)"
    % (len(t) - at, len(t), at, m, n, n - m))
PY
}
# TB_SHOW=1 shows what was measured.
[ -n "${TB_SHOW:-}" ] && cat "$T/multi.txt" "$T/multi.json" "$T/pandas.txt" >&2
ok "cost, a NameError in a function of another cell: $(cost multi)"
[ -f "$T/pandas.json" ] && ok "cost, a pandas KeyError: $(cost pandas)"

# B again: a new count, the same cells; the first run's answer still maps.
run again "$nb" "$B"
expect again "library 0
$B|2|-||f()
$A|2|f||return x"
c1=$(jq_py 'j["cells"][1]["execution_count"]' <"$T/multi.json")
c2=$(jq_py 'j["cells"][0]["execution_count"]' <"$T/again.json")
[ "$c1" != "$c2" ] || fail "again: the same count $c1"
"$CTL" --json call get_results path="$nb" \
    execution_id="$(jq_py 'j["execution_id"]' <"$T/multi.json")" \
    >"$T/multi.json" 2>&1 || :
expect multi "library 0
$B|2|-||f()
$A|2|f||return x"
ok "a cell run again (In[$c1] then In[$c2]) maps to the same cells; the old run still does"

# After a restart counts start again: N is In[1], A In[2], B In[3].
"$CTL" call restart_kernel path="$nb" >"$T/restart" 2>&1 ||
    fail "restart_kernel: $(cat "$T/restart")"
run restarted "$nb" "$N" "$A" "$B"
expect restarted "library 0
$B|2|-||f()
$A|2|f||return x"
[ "$(jq_py 'j["cells"][2]["execution_count"]' <"$T/restarted.json")" = 3 ] ||
    fail "restarted: counts $(head -c 2000 "$T/restarted.json")"
ok "after a restart In[2] is cell A, not the cell that was In[2] before"

# The live page says it too, each cell a link to it.
if [ -x "$top_builddir/runtimed-web" ] && command -v curl >/dev/null 2>&1; then
	URL=$("$CTL" open "$nb") || fail "runtimectl open failed"
	curl -s -o /dev/null -c "$T/jar" "$URL" || fail "open: $URL"
	BASE=${URL%%/open*}
	P=/v$(printf %s "${URL#*s=}" | cut -d'&' -f1 | tr -d '\n' |
	    sha256sum | cut -c1-16)
	timeout 3 curl -s -N -b "$T/jar" "$BASE$P/nb/${URL##*nb=}/events" \
	    >"$T/sse" 2>/dev/null || :
	grep -qF "<div class=\\\"out-where\\\">at <a href=\\\"#cell-$A\\\">cell $A</a> line 2 in f, called from <a href=\\\"#cell-$B\\\">cell $B</a> line 2</div>" \
	    "$T/sse" || fail "the live page: $(grep -o 'out-error.\{0,300\}' "$T/sse" | head -c 2000)"
	grep -qF "id=\\\"cell-$A\\\"" "$T/sse" || fail "the live page: no cell anchor"
	ok "the live page: at cell A line 2 in f, called from cell B line 2, linked"
else
	echo "# runtimed-web or curl missing: the live page not tried"
fi

"$CTL" call save_notebook notebook="$nb" >"$T/save" 2>&1 ||
    fail "save_notebook: $(cat "$T/save")"
sleep 0.5
grep -q runtimed_traceback "$nb" && fail "the saved notebook has the frames"
ok "the saved notebook keeps nbformat's error outputs only"

if have_kernel xpython; then
	xnb=$T/nb/x.ipynb
	set -- $(mknb "$xnb" xpython python 'def f():
    return x' '1
f()')
	run xpython "$xnb" "$1" "$2"
	expect xpython "library 0
$2|2|-||f()
$1|2|f||return x"
	ok "xeus-python: both cells, with lines"
else
	echo "# xpython not installed: not tried"
fi

if have_kernel ir; then
	rnb=$T/nb/r.ipynb
	set -- $(mknb "$rnb" ir R 'f <- function() {
  stop("boom")
}' '1
f()')
	run ir "$rnb" "$1" "$2"
	got=$(python3 -c 'import json, sys
j = json.load(sys.stdin)
o = [o for o in j["cells"][1]["outputs"] if o["output_type"] == "error"][0]
print(o["library_frames"])
for f in o["frames"]:
    print(f.get("cell_id", "-"), f.get("line", "-"), f.get("code"), f.get("text", "-"))
' <"$T/ir.json")
	want="0
$2 None f() -
- - stop(\"boom\") 2. stop(\"boom\")   # at line 2 of file <text>"
	[ "$got" = "$want" ] || fail "ir: $got
want
$want
$(head -c 3000 "$T/ir.txt")"
	grep -q "^at cell $2$" "$T/ir.txt" || fail "ir: $(head -c 3000 "$T/ir.txt")"
	ok "IRkernel: the cell that raised, no line; the frames inside keep their text"
else
	echo "# IRkernel not installed: not tried"
fi
