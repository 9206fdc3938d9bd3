#!/bin/sh
# SPDX-License-Identifier: ISC
# readme.sh: the client setup snippets of README.md ("Using it from an
# agent").  Each parses (JSON, TOML, the claude command line), names an
# absolute path ending in /runtimed-mcp with no arguments, and the
# runtimed-mcp of this build, started that way, answers initialize.
set -u
top_builddir=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
T=$(mktemp -d /tmp/runtimed-readme.XXXXXX)
trap 'rm -rf "$T"' EXIT
RUNTIMED_SOCKET=$T/run/runtimed.sock RUNTIMED_STATE_DIR=$T/state \
python3 - "$srcdir/README.md" "$top_builddir/runtimed-mcp" <<'PY'
import json, os, re, shlex, subprocess, sys, tomllib
text = open(sys.argv[1]).read()
part = text.split("## Using it from an agent", 1)[1].split("\n## ", 1)[0]
found = {}
for lang, body in re.findall(r"```(\w+)\n(.*?)```", part, re.S):
    if lang == "json":
        d = json.loads(body)
        servers = d.get("mcpServers") or d.get("servers")
        key = "vscode" if "servers" in d else "mcpServers"
        s = servers["runtimed"]
        if key == "vscode":
            assert s.get("type") == "stdio", s
    elif lang == "toml":
        s = tomllib.loads(body)["mcp_servers"]["runtimed"]
        key = "codex"
    else:
        continue
    assert not s.get("args"), s
    found.setdefault(key, []).append(s["command"])
m = re.search(r"^    (claude mcp add .*)$", part, re.M)
argv = shlex.split(m.group(1))
assert argv[-2] == "--", argv
found["claude"] = [argv[-1]]
assert set(found) == {"mcpServers", "codex", "vscode", "claude"}, found
assert len(found["mcpServers"]) == 2, found      # Cursor, Claude Desktop
for cmds in found.values():
    for c in cmds:
        assert c.startswith("/") and c.endswith("/runtimed-mcp"), c
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "readme", "version": "0"}}}
r = subprocess.run([sys.argv[2]], input=(json.dumps(init) + "\n").encode(),
                   capture_output=True, timeout=60)
reply = json.loads(r.stdout.splitlines()[0])
assert reply["result"]["serverInfo"], reply
print("ok: %d snippets parse and name an absolute runtimed-mcp; it "
      "answers initialize" % sum(len(v) for v in found.values()))
PY
