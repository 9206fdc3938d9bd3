# SPDX-License-Identifier: ISC
"""A minimal MCP client over stdio for the tests: runs the real
runtimed-mcp-worker (which autostarts the real daemon) and calls tools.

Every line the worker writes is checked to be strict UTF-8 and JSON.
"""
import json
import os
import select
import subprocess


class MCPError(Exception):
    pass


class Worker:
    def __init__(self, builddir, env, stderr_path):
        self.err = open(stderr_path, "ab")
        self.proc = subprocess.Popen(
            [os.path.join(builddir, "runtimed-mcp-worker")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.err, env=env)
        self.next_id = 1
        self.buf = b""
        self.raw = []
        r = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {"experimental": {"io.runtimed/structured": {}}},
            "clientInfo": {"name": "notebooks-test", "version": "0"}})
        assert r["protocolVersion"] == "2025-11-25", r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def line(self, timeout):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not r:
                raise MCPError("no reply within %s s" % timeout)
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise MCPError("worker closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.raw.append(line)
        # Strict: MCP stdout must never carry invalid UTF-8.
        text = line.decode("utf-8", errors="strict")
        return json.loads(text)

    def request(self, method, params, timeout=60):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   "params": params})
        while True:
            msg = self.line(timeout)
            if msg.get("id") == rid:
                if "error" in msg:
                    raise MCPError(msg["error"])
                return msg["result"]

    def call(self, name, timeout=60, **args):
        """A tool call: (structuredContent, text, isError)."""
        r = self.request("tools/call", {"name": name, "arguments": args},
                         timeout)
        text = "".join(c.get("text", "") for c in r.get("content", [])
                       if c.get("type") == "text")
        return r.get("structuredContent", {}), text, r.get("isError", False)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.err.close()
        return self.proc.returncode
