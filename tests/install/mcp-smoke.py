#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""mcp-smoke.py: one MCP session through an installed runtimed-mcp, on raw
stdin/stdout.  Usage: mcp-smoke.py PROXY NOTEBOOK
  initialize, then create NOTEBOOK, insert "x = 6*7; print(x)", run it on
  the default kernel and check that it printed 42.
mcp-smoke.py --unavailable PROXY TEXT
  initialize must be refused with an error that contains TEXT and does not
  blame crashes.
The caller sets RUNTIMED_SOCKET and RUNTIMED_STATE_DIR."""

import json
import select
import subprocess
import sys
import time

INIT = {"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"io.runtimed/structured": {}}},
        "clientInfo": {"name": "mcp-smoke", "version": "0"}}
TERMINAL = ("done", "error", "interrupted", "kernel_died", "cancelled")


class Session:
    def __init__(self, proxy):
        self.p = subprocess.Popen([proxy], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.next_id = 1
        self.buf = b""

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params, timeout=90):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   "params": params})
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == rid:
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                sys.exit("mcp-smoke: no answer to %s in %d s" %
                         (method, timeout))
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = self.p.stdout.read1(65536)
                if not chunk:
                    sys.exit("mcp-smoke: runtimed-mcp closed stdout "
                             "during %s" % method)
                self.buf += chunk

    def tool(self, name, args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        if "error" in r or r["result"].get("isError"):
            sys.exit("mcp-smoke: %s failed: %s" % (name, json.dumps(r)))
        return r["result"]["structuredContent"]

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)


def run(proxy, path):
    s = Session(proxy)
    r = s.request("initialize", INIT)
    if "result" not in r:
        sys.exit("mcp-smoke: initialize failed: %s" % json.dumps(r))
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    nb = s.tool("create_notebook", {"path": path})
    target = {"notebook_handle": nb["notebook_handle"]}
    ed = s.tool("edit_cells", dict(target, edits=[{
        "op": "insert", "after": "BOTTOM", "cell_type": "code",
        "source": "x = 6*7; print(x)"}]))
    cell = ed["cells"][0]["cell_id"]
    sc = s.tool("run_cells", dict(target, cell_ids=[cell], wait_secs=30))
    deadline = time.monotonic() + 120
    while sc["status"] not in TERMINAL and time.monotonic() < deadline:
        sc = s.tool("get_results", dict(target,
                                        execution_id=sc["execution_id"],
                                        timeout_secs=30))
    out = "".join("".join(o.get("text", ""))
                  for o in sc["cells"][0].get("outputs", [])
                  if o.get("output_type") == "stream")
    if out.strip() != "42":
        sys.exit("mcp-smoke: expected 42, got %r (%s)" %
                 (out, json.dumps(sc)))
    s.tool("save_notebook", target)
    rc = s.close()
    if rc != 0:
        sys.exit("mcp-smoke: runtimed-mcp exited with %d" % rc)
    print("mcp-smoke: ran x = 6*7 on the kernel: 42")


def unavailable(proxy, text):
    s = Session(proxy)
    r = s.request("initialize", INIT, timeout=60)
    msg = json.dumps(r)
    s.close()
    if "error" not in r:
        sys.exit("mcp-smoke: initialize succeeded: %s" % msg)
    if text not in msg or "crashed" in msg:
        sys.exit("mcp-smoke: expected %r in the error, got %s" % (text, msg))
    print("mcp-smoke: initialize refused: %s" % r["error"]["message"])


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--unavailable":
        unavailable(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        run(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
