#!/bin/sh
# SPDX-License-Identifier: ISC
# docs-contract.sh: docs/ stays true to the code on the facts that drift
# most easily.  The real runtimed-mcp (and the worker it spawns) is asked
# for tools/list with a private socket and state directory; then
# - every tool has a "## `name`" section in docs/tools.md, and every such
#   section is a tool;
# - every argument of a tool's inputSchema is named in its section;
# - README.md's tool count and list, and the catalog's size in README,
#   docs/tools.md and docs/limits.md (within 100 characters, and the
#   budget of tests/worker/catalog-budget.sh), are tools/list's;
# - scripts/test.sh counts the fuzz targets of fuzz/include.am;
# - every error code and JSON-RPC error number in the C sources is in
#   docs/errors.md, and every code of its table is in the sources;
#   proto/proto-errors.h defines exactly the codes errors.md lists;
# - every constant docs/limits.md names exists in the sources;
# - no source or document cites the contract outside the repository;
# - every source file carries the SPDX line of the LICENSE (ISC).
# Usage: docs-contract.sh [builddir]
set -u

# Watchdog: the whole test within 60 s.
if [ -z "${DOCS_TEST_WATCHDOG:-}" ]; then
	export DOCS_TEST_WATCHDOG=1
	exec timeout 60 "$0" "$@"
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

T=$(mktemp -d /tmp/rtd-docs-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
mkdir -m 700 "$T/run"
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
export RUNTIMED_LIBEXEC_DIR=$B:$B/runtimed

# tools/list needs no daemon: none is started.
touch "$T/tools.json"
python3 - "$PROXY" "$T/tools.json" <<'EOF' || exit 1
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE,
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "docs-contract", "version": "1"}}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
for line in p.stdout:
    m = json.loads(line)
    if m.get("id") == 2:
        with open(sys.argv[2], "w") as f:
            json.dump(m["result"]["tools"], f)
        break
p.stdin.close()
try:
    p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
if not open(sys.argv[2]).read():
    sys.exit("no tools/list answer")
EOF

python3 "$S/tests/docs/error-codes.py" "$S" >"$T/codes" || exit 1

python3 - "$S" "$T/tools.json" "$T/codes" <<'EOF'
import json, re, sys
top, tools, codes = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
bad = []

# tools.md: one section per tool, naming each argument.
md = open(top + "/docs/tools.md", encoding="utf-8").read()
sections = {}
for part in re.split(r"^## ", md, flags=re.M)[1:]:
    m = re.match(r"`([a-z_]+)`\n", part)
    if m:
        sections[m.group(1)] = part
names = [t["name"] for t in tools]
if len(names) < 20:
    bad.append("tools/list has only %d tools" % len(names))
for t in tools:
    sec = sections.get(t["name"])
    if sec is None:
        bad.append("docs/tools.md: no section for tool %s" % t["name"])
        continue
    for arg in t["inputSchema"].get("properties", {}):
        if "`%s`" % arg not in sec:
            bad.append("docs/tools.md: %s: argument %s not described"
                % (t["name"], arg))
for n in sections:
    if n not in names:
        bad.append("docs/tools.md: section %s is not a tool" % n)

# README and tools.md: the tool count, the list and the catalog's size
# as tools/list has them (issue 35: "23 MCP tools" stood for 29).
def num(x):
    return int(x.replace(",", ""))
readme = open(top + "/README.md", encoding="utf-8").read()
m = re.search(r"runs any of the (\d+) MCP tools", readme)
if m is None or num(m.group(1)) != len(names):
    bad.append("README.md: 'runs any of the N MCP tools' says %s, "
        "tools/list has %d" % (m and m.group(1), len(names)))
agent = readme.split("## What an agent gets", 1)[-1].split("\n## ", 1)[0]
listed = set(re.findall(r"`([a-z_]+)`", agent))
for n in names:
    if n not in listed:
        bad.append("README.md: What an agent gets does not name %s" % n)
m = re.search(r"(\d+)\s+tools\. Their names", agent)
if m is None or num(m.group(1)) != len(names):
    bad.append("README.md: 'N tools. Their names' says %s, tools/list "
        "has %d" % (m and m.group(1), len(names)))
size = sum(len(json.dumps({"name": t["name"],
    "description": t.get("description", ""),
    "inputSchema": t["inputSchema"]}, separators=(",", ":"),
    ensure_ascii=False)) for t in tools)
budget = re.search(r"^BUDGET=(\d+)$", open(top +
    "/tests/worker/catalog-budget.sh").read(), flags=re.M)
budget = int(budget.group(1)) if budget else None
m = re.search(r"come to ([\d,]+) characters \(at\s+most ([\d,]+),", agent)
if m is None:
    bad.append("README.md: the catalog's size ('come to N characters (at "
        "most M,') is not said")
else:
    if abs(num(m.group(1)) - size) > 100:
        bad.append("README.md: the catalog comes to %s characters, "
            "tools/list says %d (bench/catalog.py)" % (m.group(1), size))
    if num(m.group(2)) != budget:
        bad.append("README.md: at most %s, tests/worker/catalog-budget.sh "
            "BUDGET=%s" % (m.group(2), budget))
m = re.search(r"the (\d+) tools of\s+`runtimed-mcp-worker`", md)
if m is None or num(m.group(1)) != len(names) - 1:
    bad.append("docs/tools.md: 'the N tools of runtimed-mcp-worker' says "
        "%s, tools/list has %d besides reconnect" % (m and m.group(1),
        len(names) - 1))
m = re.search(r"stay within ([\d,]+) characters \(\[limits\.md\]"
    r"\(limits\.md\);\s+([\d,]+) in this build\)", md)
if m is None or num(m.group(1)) != budget or \
        abs(num(m.group(2)) - size) > 100:
    bad.append("docs/tools.md: 'stay within N characters (limits.md; M in "
        "this build)' should say %s and about %d" % (budget, size))
lim = open(top + "/docs/limits.md", encoding="utf-8").read()
m = re.search(r"\| ([\d,]+) today, ([\d,]+) used by the (\d+) tools", lim)
if m is None or num(m.group(1)) != budget or \
        abs(num(m.group(2)) - size) > 100 or num(m.group(3)) != len(names):
    bad.append("docs/limits.md: the catalog row should say %s today, about "
        "%d used by the %d tools" % (budget, size, len(names)))

# test.sh: the fuzz targets it counts are fuzz/include.am's.
fam = open(top + "/fuzz/include.am").read()
targets = re.search(r"^FUZZ_TARGETS = (.*?)(?<!\\)\n", fam,
    flags=re.M | re.S)
ntargets = len(targets.group(1).replace("\\", " ").split()) if targets \
    else 0
m = re.search(r"the (\d+) targets of fuzz/include\.am",
    open(top + "/scripts/test.sh").read())
if m is None or int(m.group(1)) != ntargets:
    bad.append("scripts/test.sh: says %s fuzz targets, fuzz/include.am "
        "has %d" % (m and m.group(1), ntargets))

# errors.md: every code used, and no code that is not.
used = open(codes).read().split("--\n")
used_codes = used[0].split()
used_rpc = used[1].split()
if len(used_codes) < 12:
    bad.append("error-codes.py found only %d codes: did a function that "
        "sends them get another name?" % len(used_codes))
err = open(top + "/docs/errors.md", encoding="utf-8").read()
for c in used_codes:
    if "`%s`" % c not in err:
        bad.append("docs/errors.md: code %s is not described" % c)
for c in used_rpc:
    if "| %s |" % c not in err:
        bad.append("docs/errors.md: JSON-RPC error %s is not described" % c)
table = err.split("## Tool error codes", 1)[1].split("\n## ", 1)[0]
for c in re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M):
    if c not in used_codes:
        bad.append("docs/errors.md: code %s is used nowhere" % c)
# proto/proto-errors.h: its codes are the ones errors.md's tables list.
hdr = open(top + "/proto/proto-errors.h").read()
consts = set(re.findall(r'#define\s+PROTO_E_[A-Z_]+\s+"([a-z_]+)"', hdr))
listed = set(re.findall(r"^\| `([a-z_]+)` \|", err.split("## JSON-RPC", 1)[0],
    flags=re.M))
for c in sorted(consts - listed):
    bad.append("proto/proto-errors.h: code %s is not in docs/errors.md" % c)
for c in sorted(listed - consts):
    bad.append("docs/errors.md: code %s is not in proto/proto-errors.h" % c)
for c in sorted(set(used_codes) - consts):
    bad.append("code %s is used but not in proto/proto-errors.h" % c)

# limits.md: every constant it names exists.
import os
src = ""
for d in ("proto", "common", "runtimed", "runtime-agent", "runtime-web",
        "mcp-worker", "mcp-proxy"):
    for f in os.listdir(os.path.join(top, d)):
        if f.endswith((".c", ".h")):
            src += open(os.path.join(top, d, f), encoding="utf-8").read()
lim = open(top + "/docs/limits.md", encoding="utf-8").read()
for c in sorted(set(re.findall(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`", lim))):
    if not re.search(r"\b%s\b" % c, src):
        bad.append("docs/limits.md: %s is named nowhere in the sources" % c)

# The contract is docs/: nothing cites a file outside the repository.
cite = re.compile(r"CONTRACT(?:\.md| section| [0-9])|shared/spec")
paths = ["README.md", "PROTOCOL.md"]
for d in ("proto", "common", "runtimed", "runtime-agent", "runtime-web",
        "mcp-worker", "mcp-proxy", "tests", "fuzz", "docs"):
    for root, dirs, files in os.walk(os.path.join(top, d)):
        dirs[:] = [x for x in dirs if x not in ("node_modules", "corpus")]
        paths += [os.path.relpath(os.path.join(root, x), top)
            for x in files if x.endswith((".c", ".h", ".md", ".am",
            ".sh", ".mjs", ".py"))]
for p in paths:
    if p.startswith("tests/docs/"):
        continue
    for n, line in enumerate(open(os.path.join(top, p),
            encoding="utf-8", errors="replace"), 1):
        if cite.search(line):
            bad.append("%s:%d cites the external contract: %s" %
                (p, n, line.strip()))

# LICENSE: every source file says ISC in its first lines (after a
# shebang).  Fuzz corpora, notebooks and generated files are not sources.
spdx = "SPDX-License-Identifier: ISC"
nsrc = 0
for d in ("proto", "common", "runtimed", "runtime-agent", "runtime-web",
        "mcp-worker", "mcp-proxy", "runtimectl", "tests", "fuzz", "bench",
        "scripts"):
    for root, dirs, files in os.walk(os.path.join(top, d)):
        dirs[:] = [x for x in dirs if x not in ("node_modules", "corpus")]
        for x in files:
            if not x.endswith((".c", ".h", ".sh", ".py", ".mjs", ".js")):
                continue
            if x == "proxy-builtin.c":
                continue
            p = os.path.relpath(os.path.join(root, x), top)
            nsrc += 1
            head = open(os.path.join(top, p), encoding="utf-8",
                errors="replace").read(200).split("\n")[:2]
            if not any(spdx in l for l in head):
                bad.append("%s: no '%s' line" % (p, spdx))
if nsrc < 200:
    bad.append("only %d source files found" % nsrc)
if not os.path.exists(os.path.join(top, "LICENSE")):
    bad.append("no LICENSE")

for b in bad:
    print("FAIL " + b)
if bad:
    sys.exit(1)
print("PASS docs: %d tools, %d error codes, %d JSON-RPC errors, "
    "%d source files under ISC" %
    (len(names), len(used_codes), len(used_rpc), nsrc))
EOF
