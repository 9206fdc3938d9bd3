#!/usr/bin/python3
"""proxy-test.py: runtimed-mcp as a client sees it, on raw stdin/stdout,
with the real runtimed-mcp-worker.  Usage: proxy-test.py PATH-TO-runtimed-mcp

Checks: -V/--help/usage errors; every stdout line is one JSON-RPC message;
CR LF input; a parse error does not end the session; a line over the 64 MiB
frame limit is refused with -32600 and the session goes on; stdin EOF ends
proxy and worker with status 0; the worker log file; the restart limiter
trips after 5 worker deaths in 30 s.  Each check uses a private socket and
state directory.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROXY = os.path.abspath(sys.argv[1])
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "proxy-test", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


class World:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="rtd-proxy-")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", self.dir),
            "RUNTIMED_SOCKET": os.path.join(self.dir, "runtimed.sock"),
            "RUNTIMED_STATE_DIR": os.path.join(self.dir, "state"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        for k in ("RUNTIMED_LIBEXEC_DIR", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                self.env[k] = os.environ[k]

    def procs(self):
        """pids of processes started for this world (env marker)."""
        mark = ("RUNTIMED_STATE_DIR=" + self.env["RUNTIMED_STATE_DIR"]).encode()
        found = []
        for ent in os.listdir("/proc"):
            if not ent.isdigit() or int(ent) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % ent, "rb") as f:
                    if mark in f.read().split(b"\0"):
                        found.append(int(ent))
            except OSError:
                pass
        return found

    def cleanup(self):
        daemon = os.environ.get("RUNTIMED_BIN") or \
            os.path.join(os.path.dirname(PROXY), "runtimed")
        if os.path.isdir(daemon):
            daemon = os.path.join(daemon, "runtimed")
        if os.path.isfile(daemon) and os.access(daemon, os.X_OK):
            subprocess.run([daemon, "stop"], env=self.env, timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for pid in self.procs():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def lines_of(out):
    msgs = []
    for raw in out.split(b"\n"):
        if raw == b"":
            continue
        msgs.append(json.loads(raw))
    return msgs


def test_options():
    r = subprocess.run([PROXY, "-V"], capture_output=True, timeout=10)
    check(r.returncode == 0 and r.stdout.startswith(b"runtimed-mcp "),
          "-V prints the version")
    r = subprocess.run([PROXY, "--help"], capture_output=True, timeout=10)
    check(r.returncode == 0 and b"usage: runtimed-mcp" in r.stdout,
          "--help prints usage, exit 0")
    r = subprocess.run([PROXY, "--bogus"], capture_output=True, timeout=10)
    check(r.returncode == 2 and r.stdout == b"",
          "an unknown option exits 2 with nothing on stdout")


def test_pipe():
    """The no-dependency smoke test: requests piped in, then EOF."""
    w = World()
    try:
        data = b"".join(json.dumps(m).encode() + b"\r\n" for m in [
            INIT, INITIALIZED,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]) + b"this is not json\r\n\r\n" + \
            json.dumps({"jsonrpc": "2.0", "id": "p", "method": "ping"}).encode()
        t0 = time.monotonic()
        r = subprocess.run([PROXY], input=data, capture_output=True,
                           env=w.env, timeout=60)
        took = time.monotonic() - t0
        check(r.returncode == 0, "exit 0 at end of input (took %.1f s)" % took)
        try:
            msgs = lines_of(r.stdout)
            check(True, "every stdout line is JSON (%d lines)" % len(msgs))
        except ValueError as e:
            check(False, "every stdout line is JSON: %s: %r" % (e, r.stdout[:500]))
            return
        by_id = {m.get("id"): m for m in msgs}
        check(by_id.get(1, {}).get("result", {}).get("protocolVersion")
              == "2025-11-25", "initialize answered (CR LF input)")
        names = [t["name"] for t in
                 by_id.get(2, {}).get("result", {}).get("tools", [])]
        check("create_notebook" in names and "run_cells" in names,
              "tools/list answered with the tools")
        check(any(m.get("error", {}).get("code") == -32700 for m in msgs),
              "a line that is not JSON gets -32700 and the session goes on")
        check("result" in by_id.get("p", {}),
              "a last line without newline is still answered")
        logs = os.path.join(w.env["RUNTIMED_STATE_DIR"], "logs")
        check(os.path.isdir(logs) and
              any(f.startswith("mcp-worker-") for f in os.listdir(logs)),
              "worker log file under <state>/logs")
        check(time_until(lambda: not w.procs(), 5),
              "no worker left after exit")
    finally:
        w.cleanup()


def time_until(pred, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


class Session:
    def __init__(self, world):
        self.p = subprocess.Popen([PROXY], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=world.env)

    def send(self, msg):
        raw = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.p.stdin.write(raw + b"\n")
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        return json.loads(line) if line else None

    def request(self, msg):
        self.send(msg)
        while True:
            m = self.recv()
            if m is None or m.get("id") == msg["id"]:
                return m

    def request_settled(self, method, first_id):
        """A request sent right after a worker death may still reach the
        dying worker and come back "restarted before answering"; ask
        again then (up to three times)."""
        for i in range(3):
            m = self.request({"jsonrpc": "2.0", "id": first_id + i,
                              "method": method})
            if m is None or "restarted before answering" not in \
                    m.get("error", {}).get("message", ""):
                return m
        return m

    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        return self.p.wait(timeout=15), rest


def workers_of(pid):
    kids = []
    for ent in os.listdir("/proc"):
        if not ent.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % ent) as f:
                stat = f.read()
            with open("/proc/%s/cmdline" % ent, "rb") as f:
                cmd = f.read().split(b"\0")[0]
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and cmd.endswith(b"runtimed-mcp-worker"):
            kids.append(int(ent))
    return kids


def test_overlong():
    w = World()
    try:
        s = Session(w)
        check(s.request(INIT) is not None, "initialize")
        s.send(INITIALIZED)
        mid = b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"' + \
            b"y" * (20 * 1024 * 1024) + b'"}}'
        s.send(mid)
        m = s.recv()
        check(m is not None and m.get("id") == 6 and "result" in m,
              "a 20 MiB message is relayed and answered")
        big = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"' + \
            b"x" * (64 * 1024 * 1024) + b'"}}'
        s.send(big)
        m = s.recv()
        check(m is not None and m.get("id") is None and
              m.get("error", {}).get("code") == -32600,
              "a line over 64 MiB is refused with -32600")
        m = s.request({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        check(m is not None and "result" in m, "the session goes on after it")
        status, rest = s.close()
        check(status == 0 and rest == b"", "exit 0 at EOF, nothing more on stdout")
    finally:
        w.cleanup()


def test_limiter():
    w = World()
    try:
        s = Session(w)
        check(s.request(INIT) is not None, "initialize")
        s.send(INITIALIZED)
        pids = []
        for i in range(5):
            wk = []
            time_until(lambda: wk.extend(workers_of(s.p.pid)) or wk, 10)
            if not wk:
                break
            pids.append(wk[0])
            os.kill(wk[0], signal.SIGKILL)
            if i < 4:
                # Each new worker is initialized privately and answers.
                m = s.request_settled("tools/list", 100 + 10 * i)
                if m is None or "result" not in m:
                    check(False, "request after restart %d: %r" % (i + 1, m))
                    return
        check(len(set(pids)) == 5, "5 workers started and killed")
        m = s.request_settled("tools/list", 200)
        check(m is not None and m.get("error", {}).get("code") == -32603 and
              "not available" in m["error"]["message"],
              "after 5 deaths in 30 s requests are refused: %r" % (m,))
        check(not workers_of(s.p.pid), "no worker is started while tripped")
        status, _ = s.close()
        check(status == 0, "exit 0 at EOF while tripped")
    finally:
        w.cleanup()


def main():
    test_options()
    test_pipe()
    test_overlong()
    test_limiter()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all proxy checks passed")


main()
