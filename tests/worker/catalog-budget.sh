#!/bin/sh
# SPDX-License-Identifier: ISC
# catalog-budget.sh: the tool catalog an agent is handed stays lean.  The
# real runtimed-mcp and runtimed-mcp-worker (on its own stdio) are asked
# for initialize and tools/list (bench/catalog.py, private socket and
# state directory, no daemon needed), and
# - names, descriptions and input schemas of all tools, as the compact
#   JSON a client hands the model, are at most BUDGET characters;
# - every tool has a description of 20 characters or more and an object
#   inputSchema;
# - initialize returns instructions, and they name every argument that
#   three or more tools share, since those arguments are explained there
#   once rather than in each tool;
# - the proxy's catalog is the worker's, tool for tool, plus reconnect.
# Usage: catalog-budget.sh [builddir]
set -u

# The budget (docs/limits.md).  Later tools may raise it, never past
# CEILING; past that, cut text or decide anew (docs/decisions/016).
BUDGET=11650
CEILING=14000

if [ -z "${CATALOG_TEST_WATCHDOG:-}" ]; then
	export CATALOG_TEST_WATCHDOG=1
	exec timeout 90 "$0" "$@"
fi

B=${1:-${abs_top_builddir:-$(pwd)}}
S=$(cd "$(dirname "$0")/../.." && pwd)
PROXY=$B/runtimed-mcp
WORKER=$B/runtimed-mcp-worker
for f in "$PROXY" "$WORKER"; do
	if [ ! -x "$f" ]; then
		echo "missing $f" >&2
		exit 77
	fi
done
command -v python3 >/dev/null 2>&1 || { echo "no python3"; exit 77; }
if [ "$BUDGET" -gt "$CEILING" ]; then
	echo "FAIL the budget $BUDGET is over the ceiling $CEILING"
	exit 1
fi

T=$(mktemp -d /tmp/rtd-catalog-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
mkdir -m 700 "$T/run"
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
export RUNTIMED_LIBEXEC_DIR=$B:$B/runtimed

rc=0
for who in proxy worker; do
	[ $who = proxy ] && cmd=$PROXY || cmd=$WORKER
	if python3 "$S/bench/catalog.py" --budget "$BUDGET" \
	    --dump "$T/$who.json" "$cmd" >"$T/$who.out" 2>&1; then
		echo "PASS $who: $(tail -1 "$T/$who.out")"
	else
		cat "$T/$who.out"
		echo "FAIL $who catalog"
		rc=1
	fi
done
[ $rc = 0 ] || exit 1

python3 - "$T/proxy.json" "$T/worker.json" <<'EOF'
import json, re, sys
proxy, worker = (json.load(open(f)) for f in sys.argv[1:3])
ptools, wtools = proxy["tools"], worker["tools"]
bad = []

# One source: the proxy answers with the worker's catalog and its own
# reconnect, nothing changed on the way.
pnames = [t["name"] for t in ptools]
if pnames != [t["name"] for t in wtools] + ["reconnect"]:
    bad.append("the proxy's tools %s are not the worker's plus reconnect"
        % pnames)
for p, w in zip(ptools, wtools):
    if p != w:
        bad.append("%s differs between the proxy and the worker" % w["name"])

# Arguments shared by three or more tools are explained once, in the
# instructions, so the instructions must name them.
instr = proxy["instructions"] or ""
if instr != worker["instructions"]:
    bad.append("the proxy's instructions are not the worker's")
uses = {}
for t in ptools:
    for arg in t["inputSchema"].get("properties", {}):
        uses[arg] = uses.get(arg, 0) + 1
for arg, n in sorted(uses.items()):
    if n >= 3 and not re.search(r"\b%s\b" % re.escape(arg), instr):
        bad.append("instructions do not name %s, an argument of %d tools"
            % (arg, n))
for step in ("connect_notebook", "inspect_notebook", "edit_cells",
        "run_cells", "get_results"):
    if step not in instr:
        bad.append("instructions do not say when to use %s" % step)

for b in bad:
    print("FAIL " + b)
if bad:
    sys.exit(1)
print("PASS one catalog, %d tools; instructions name the %d shared "
    "arguments" % (len(ptools), len([a for a in uses if uses[a] >= 3])))
EOF
