#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""proxy-test.py: runtimed-mcp as a client sees it, on raw stdin/stdout,
with the real runtimed-mcp-worker.  Usage: proxy-test.py PATH-TO-runtimed-mcp

Checks: -V/--help/usage errors; every stdout line is one JSON-RPC message;
CR LF input; a parse error does not end the session; a line over the 16 MiB
message limit is refused with -32600 and the session goes on; stdin EOF ends
proxy and worker with status 0; the worker log file; the crash budget trips
after 5 worker deaths in 30 s (tools/call: isError with a code, when and
where the log is; other requests -32603) and reconnect ends it; upgrade
exits (75) are not crashes but have their own limiter; the worker is looked
up again on every spawn; a worker writing to its stdout never reaches ours;
tools/list from the cached catalog before a worker is up, the disk cache,
list_changed after discovery; in-flight read-only calls retried on the next
worker, mutations answered outcome_unknown and never replayed; the
reconnect tool; subscriptions end with a final update on worker
replacement and leases are counted per listener.  Each check uses a
private socket and state directory.  Some use a wrapper script as the
worker (RUNTIMED_LIBEXEC_DIR) that runs the real runtimed-mcp-worker.
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROXY = os.path.abspath(sys.argv[1])
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"io.runtimed/structured": {}}},
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
        self.wrapdir = None

    def wrap_worker(self, body):
        """Put a wrapper script first on RUNTIMED_LIBEXEC_DIR as the
        worker; $REAL is the real runtimed-mcp-worker.  Replaced by
        rename, so a spawn never sees a half-written file."""
        if self.wrapdir is None:
            self.wrapdir = os.path.join(self.dir, "wrap")
            os.mkdir(self.wrapdir)
            self.env["RUNTIMED_LIBEXEC_DIR"] = self.wrapdir + ":" + \
                self.env.get("RUNTIMED_LIBEXEC_DIR",
                             os.path.dirname(PROXY))
        real = real_worker(self.env)
        tmp = os.path.join(self.wrapdir, ".tmp")
        with open(tmp, "w") as f:
            f.write("#!/bin/sh\nREAL=%s\nD=%s\n%s\n" % (real, self.dir, body))
        os.chmod(tmp, 0o755)
        os.rename(tmp, os.path.join(self.wrapdir, "runtimed-mcp-worker"))

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


def real_worker(env):
    dirs = os.environ.get("RUNTIMED_LIBEXEC_DIR", os.path.dirname(PROXY))
    for d in dirs.split(":"):
        p = os.path.join(d, "runtimed-mcp-worker")
        if os.access(p, os.X_OK):
            return p
    raise SystemExit("runtimed-mcp-worker not found; set RUNTIMED_LIBEXEC_DIR")


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
        # The worker's log is made there; an empty one is removed at exit.
        check(os.path.isdir(logs) and
              not any(f.startswith("mcp-worker-") and
                      os.path.getsize(os.path.join(logs, f)) == 0
                      for f in os.listdir(logs)),
              "worker logs under <state>/logs, no empty one left")
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
        self.notes = []         # notifications seen while waiting
        self.others = {}        # answers to other ids seen while waiting
        self.buf = b""
        self.nid = 1000

    def send(self, msg):
        raw = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.p.stdin.write(raw + b"\n")
        self.p.stdin.flush()

    def recv(self, timeout=None):
        """One message; None at EOF or after timeout seconds."""
        end = None if timeout is None else time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = None if end is None else max(0, end - time.monotonic())
            if left == 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, msg, timeout=None):
        self.send(msg)
        return self.wait_id(msg["id"], timeout)

    def wait_id(self, rid, timeout=None):
        if rid in self.others:
            return self.others.pop(rid)
        while True:
            m = self.recv(timeout)
            if m is None or m.get("id") == rid:
                return m
            if "id" in m and "method" not in m:
                self.others[m["id"]] = m
            else:
                self.notes.append(m)

    def call(self, name, args=None, timeout=None):
        self.nid += 1
        return self.request({"jsonrpc": "2.0", "id": self.nid,
                             "method": "tools/call",
                             "params": {"name": name,
                                        "arguments": args or {}}}, timeout)

    def start_call(self, name, args=None):
        self.nid += 1
        self.send({"jsonrpc": "2.0", "id": self.nid, "method": "tools/call",
                   "params": {"name": name, "arguments": args or {}}})
        return self.nid

    def note(self, method, timeout, pred=lambda m: True):
        """Wait for a notification (also among those already seen)."""
        end = time.monotonic() + timeout
        while True:
            for m in self.notes:
                if m.get("method") == method and pred(m):
                    self.notes.remove(m)
                    return m
            left = end - time.monotonic()
            if left <= 0:
                return None
            m = self.recv(left)
            if m is None:
                return None
            if "id" in m and "method" not in m:
                self.others[m["id"]] = m
            else:
                self.notes.append(m)

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
        rest = self.buf + self.p.stdout.read()
        return self.p.wait(timeout=15), rest


def sc_of(m):
    return ((m or {}).get("result") or {}).get("structuredContent") or {}


def err_code(m):
    return sc_of(m).get("error", {}).get("code")


def descendants(pid):
    """pid's descendants, as {pid: ppid}."""
    parent = {}
    for ent in os.listdir("/proc"):
        if not ent.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % ent) as f:
                stat = f.read()
        except OSError:
            continue
        parent[int(ent)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.extend(kids)
        todo.extend(kids)
    return out


def real_workers_of(pid):
    """The real runtimed-mcp-worker processes below pid (through a
    wrapper script or not)."""
    found = []
    for c in descendants(pid):
        try:
            with open("/proc/%d/exe" % c, "rb"):
                pass
            exe = os.readlink("/proc/%d/exe" % c)
        except OSError:
            continue
        if exe.endswith("runtimed-mcp-worker"):
            found.append(c)
    return found


def open_session(w):
    s = Session(w)
    m = s.request(INIT, 60)
    check(m is not None and "result" in m, "initialize")
    s.send(INITIALIZED)
    return s


def kill_worker(s, timeout=10):
    wk = []
    time_until(lambda: wk.extend(real_workers_of(s.p.pid)) or wk, timeout)
    if not wk:
        return None
    os.kill(wk[0], signal.SIGKILL)
    return wk[0]


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
            b"y" * (15 * 1024 * 1024) + b'"}}'
        s.send(mid)
        m = s.recv()
        check(m is not None and m.get("id") == 6 and "result" in m,
              "a 15 MiB message is relayed and answered")
        big = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"' + \
            b"x" * (16 * 1024 * 1024) + b'"}}'
        s.send(big)
        m = s.recv()
        check(m is not None and m.get("id") is None and
              m.get("error", {}).get("code") == -32600,
              "a line over 16 MiB is refused with -32600")
        m = s.request({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        check(m is not None and "result" in m, "the session goes on after it")
        status, rest = s.close()
        check(status == 0 and rest == b"", "exit 0 at EOF, nothing more on stdout")
    finally:
        w.cleanup()


def test_limiter():
    """Crash budget: 5 deaths in 30 s trip it; reconnect ends it."""
    w = World()
    try:
        s = open_session(w)
        pids = []
        for i in range(5):
            pid = kill_worker(s)
            if pid is None:
                break
            pids.append(pid)
            if i < 4:
                # list_notebooks is read-only: even if it reached the
                # dying worker it is sent again to the next one.
                m = s.call("list_notebooks", timeout=60)
                if m is None or m.get("result", {}).get("isError"):
                    check(False, "call after restart %d: %r" % (i + 1, m))
                    return
        check(len(set(pids)) == 5, "5 workers started and killed")
        m = s.call("list_notebooks", timeout=30)
        e = sc_of(m).get("error", {})
        log = os.path.join(w.env["RUNTIMED_STATE_DIR"], "logs")
        check(m is not None and m["result"].get("isError") and
              e.get("code") == "notebook_unavailable" and
              "next try is in" in e.get("message", "") and
              log in e.get("message", "") and
              50 <= e.get("retry_after_secs", 0) <= 60,
              "tripped: tools/call is a tool error with a code, when and "
              "where the log is: %r" % (e,))
        m = s.request({"jsonrpc": "2.0", "id": 200, "method": "ping"}, 30)
        check(m is not None and m.get("error", {}).get("code") == -32603 and
              "not available" in m["error"]["message"] and
              log in m["error"]["message"],
              "tripped: other requests get -32603: %r" % (m,))
        m = s.request({"jsonrpc": "2.0", "id": 201, "method": "tools/list"},
                      30)
        check(m is not None and len(m.get("result", {}).get("tools", [])) > 1,
              "tripped: tools/list still answered from the catalog")
        check(not real_workers_of(s.p.pid), "no worker is started while tripped")
        m = s.call("reconnect", timeout=60)
        check(m is not None and not m["result"].get("isError") and
              sc_of(m).get("worker_pid", 0) > 0,
              "reconnect ends the cooldown: %r" % (sc_of(m),))
        m = s.call("list_notebooks", timeout=60)
        check(m is not None and not m["result"].get("isError"),
              "tools work again after reconnect")
        status, _ = s.close()
        check(status == 0, "exit 0 at EOF")
    finally:
        w.cleanup()


def test_upgrade():
    """Exit 75 is an upgrade handoff: not a crash, own limiter."""
    w = World()
    try:
        w.wrap_worker('"$REAL" "$@"; st=$?\n'
                      '[ -f "$D/upgrade" ] && exit 75\nexit $st')
        flag = os.path.join(w.dir, "upgrade")
        s = open_session(w)
        ok = True
        for i in range(8):
            if i == 0:
                open(flag, "w").close()
            if i == 4:
                os.unlink(flag)
            if kill_worker(s) is None:
                ok = False
                break
            m = s.call("list_notebooks", timeout=60)
            if m is None or m["result"].get("isError"):
                check(False, "death %d (%s): %r" % (
                    i + 1, "upgrade" if i < 4 else "crash", m))
                ok = False
                break
        check(ok, "4 upgrade exits and 4 crashes in 30 s do not trip "
              "the crash budget")
        open(flag, "w").close()
        kill_worker(s)
        m = s.call("list_notebooks", timeout=30)
        e = sc_of(m).get("error", {})
        check(e.get("code") == "notebook_unavailable" and
              "upgrade" in e.get("message", ""),
              "a 5th upgrade exit in 30 s trips the upgrade limiter: %r" % (e,))
        s.close()
    finally:
        w.cleanup()


def test_wrapper():
    """Nothing but protocol on stdout; the worker is looked up again."""
    w = World()
    try:
        gens = os.path.join(w.dir, "gens")
        w.wrap_worker('echo "gen1 says hello on stdout"\n'
                      'echo gen1 >>"$D/gens"\nexec "$REAL" "$@"')
        s = open_session(w)
        try:
            m = s.call("list_notebooks", timeout=60)
            check(m is not None and "result" in m, "served through gen1")
            w.wrap_worker('echo \'{"jsonrpc":"2.0","id":1001,"result":{}}\'\n'
                          'echo gen2 >>"$D/gens"\nexec "$REAL" "$@"')
            kill_worker(s)
            m = s.call("list_notebooks", timeout=60)
            check(m is not None and "result" in m and
                  not m["result"].get("isError"), "served through gen2")
            check(open(gens).read().split() == ["gen1", "gen2"],
                  "the worker executable is resolved again on respawn")
            status, rest = s.close()
            extra = lines_of(rest)
            check(status == 0 and not extra and 1001 not in s.others,
                  "the worker's stdout never reaches the client")
        except ValueError as e:
            check(False, "a stdout line is not JSON: %s" % e)
    finally:
        w.cleanup()


FAKE_TOOL = {"name": "old_tool", "description": "a tool of an older worker",
             "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True}}


def test_catalog():
    w = World()
    try:
        cache = os.path.join(w.env["RUNTIMED_STATE_DIR"], "proxy",
                             "tool-cache.json")
        # No disk cache and a worker slow to start: the built-in catalog.
        r = subprocess.run([real_worker(w.env), "--print-catalog"],
                           capture_output=True, timeout=30, env=w.env)
        try:
            built = [t["name"] for t in json.loads(r.stdout)["tools"]]
        except ValueError:
            built = None
        if built is None:
            print("skip  the built-in catalog: the worker has no "
                  "--print-catalog")
        else:
            w.wrap_worker('sleep 2\nexec "$REAL" "$@"')
            s = Session(w)
            t0 = time.monotonic()
            m = s.request({"jsonrpc": "2.0", "id": 2,
                           "method": "tools/list"}, 10)
            took = time.monotonic() - t0
            names = [t["name"] for t in
                     (m or {}).get("result", {}).get("tools", [])]
            check(names == built + ["reconnect"] and took < 1.0,
                  "tools/list from the built-in catalog before any worker "
                  "is up (%.3f s, %d tools)" % (took, len(names)))
            s.close()
            os.unlink(os.path.join(w.wrapdir, "runtimed-mcp-worker"))
        s = open_session(w)
        m = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 30)
        names = [t["name"] for t in m.get("result", {}).get("tools", [])]
        check("reconnect" in names and "list_notebooks" in names,
              "tools/list has the worker's tools and reconnect")
        check(time_until(lambda: os.path.exists(cache), 10),
              "the catalog is cached on disk after discovery")
        try:
            cached = [t["name"] for t in json.load(open(cache))["tools"]]
        except (OSError, ValueError, KeyError):
            cached = []
        check(cached == [n for n in names if n != "reconnect"],
              "the disk cache holds the discovered tools")
        tools = m.get("result", {}).get("tools", [])
        check(all("outputSchema" in t for t in tools),
              "a client that asked for structure gets output schemas")
        s.close()
        # Decision 043: without the capability, no output schemas (and
        # so no structuredContent owed); the cache keeps them.
        s = Session(w)
        plain = json.loads(json.dumps(INIT))
        plain["params"]["capabilities"] = {}
        s.request(plain, 60)
        s.send(INITIALIZED)
        m = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 30)
        tools = (m or {}).get("result", {}).get("tools", [])
        check(len(tools) == len(names) and
              not any("outputSchema" in t for t in tools),
              "a plain client's tools/list has no output schemas")
        m = s.request({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "list_notebooks",
                                  "arguments": {}}}, 30)
        r = (m or {}).get("result", {})
        check("structuredContent" not in r and r.get("content"),
              "a plain client's tool result is text only")
        try:
            kept = json.load(open(cache))["tools"]
        except (OSError, ValueError, KeyError):
            kept = []
        check(kept and all("outputSchema" in t for t in kept),
              "the disk cache keeps the output schemas")
        s.close()

        # An older catalog on disk and a worker slow to start.
        with open(cache, "w") as f:
            json.dump({"tools": [FAKE_TOOL]}, f)
        w.wrap_worker('sleep 2\nexec "$REAL" "$@"')
        s = Session(w)
        s.send(INIT)
        t0 = time.monotonic()
        m = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 10)
        took = time.monotonic() - t0
        names = [t["name"] for t in (m or {}).get("result", {}).get("tools", [])]
        check(names == ["old_tool", "reconnect"] and took < 1.0 and
              1 not in s.others,
              "tools/list is answered from the disk cache before the "
              "worker is up (%.3f s)" % took)
        check(s.wait_id(1, 60) is not None, "initialize answered")
        s.send(INITIALIZED)
        check(s.note("notifications/tools/list_changed", 30) is not None,
              "tools/list_changed once the worker's catalog differs")
        check(s.note("notifications/resources/list_changed", 5) is not None,
              "resources/list_changed with it")
        m = s.request({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, 10)
        names = [t["name"] for t in m.get("result", {}).get("tools", [])]
        check("old_tool" not in names and "list_notebooks" in names,
              "tools/list then has the discovered catalog")
        check(time_until(lambda: "old_tool" not in open(cache).read(), 5),
              "and the disk cache is rewritten")
        m = s.request({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                       "params": {"cursor": "x"}}, 10)
        check(m.get("error", {}).get("code") == -32602,
              "a tools/list cursor we never issued is -32602")
        s.close()
    finally:
        w.cleanup()


def test_inflight():
    """Read-only calls are retried once; mutations are outcome_unknown
    and never replayed; the reconnect tool."""
    w = World()
    try:
        nb = os.path.join(w.dir, "inflight.ipynb")
        ran = os.path.join(w.dir, "ran.txt")
        s = open_session(w)
        m = s.call("create_notebook", {"path": nb}, 120)
        h = sc_of(m).get("notebook_handle")
        check(h is not None, "create_notebook: %r" % (sc_of(m),))
        m = s.call("edit_cells", {"notebook_handle": h, "edits": [
            {"op": "insert", "after": "BOTTOM", "source":
             "import time\nopen(%r, 'a').write('x')\ntime.sleep(3)" % ran},
            {"op": "insert", "after": "BOTTOM",
             "source": "import time\ntime.sleep(4)"}]}, 60)
        cells = [c["cell_id"] for c in sc_of(m).get("cells", [])]
        check(len(cells) == 2, "two cells inserted")
        rid = s.start_call("run_cells", {"notebook_handle": h,
                                         "cell_ids": [cells[0]],
                                         "wait_secs": 20})
        time.sleep(1.5)
        kill_worker(s)
        m = s.wait_id(rid, 30)
        check(err_code(m) == "outcome_unknown" and
              sc_of(m)["error"].get("retry_safe") is False,
              "a run in flight when the worker died: outcome_unknown")
        m = s.call("connect_notebook", {"path": nb}, 60)
        h2 = sc_of(m).get("notebook_handle")
        check(h2 is not None, "connect again on the new worker")
        m = s.call("run_cells", {"notebook_handle": h2, "cell_ids": [cells[1]],
                                 "wait_secs": 0}, 30)
        ex = sc_of(m).get("execution_id")
        rid = s.start_call("get_results", {"notebook_handle": h2,
                                           "execution_id": ex,
                                           "timeout_secs": 20})
        time.sleep(1.0)
        kill_worker(s)
        m = s.wait_id(rid, 40)
        check(m is not None and err_code(m) not in (None, "outcome_unknown"),
              "a read-only call in flight is sent to the next worker, "
              "which answers it (%s)" % err_code(m))
        old = real_workers_of(s.p.pid)
        m = s.call("reconnect", timeout=60)
        new = sc_of(m).get("worker_pid")
        check(m is not None and not m["result"].get("isError") and
              old and new not in old and
              sc_of(m).get("previous_worker_pid") == old[0],
              "reconnect replaces the worker: %r" % (sc_of(m),))
        m = s.call("inspect_notebook", {"notebook_handle": h2}, 30)
        check(err_code(m) == "attachment_expired",
              "handles of the replaced worker are expired (%s)" % err_code(m))
        time.sleep(3)
        try:
            data = open(ran).read()
        except OSError:
            data = ""
        check(data == "x", "the mutation ran once, never replayed (%r)" % data)
        s.close()
    finally:
        w.cleanup()


def test_subs():
    """Leases: one worker subscription per URI, ended on replacement."""
    w = World()
    try:
        s = open_session(w)
        m = s.call("create_notebook", {}, 120)
        h = sc_of(m).get("notebook_handle")
        uri = "runtimed://sessions/%s/cells" % h
        for i in (300, 301):
            m = s.request({"jsonrpc": "2.0", "id": i,
                           "method": "resources/subscribe",
                           "params": {"uri": uri}}, 30)
            check(m is not None and "result" in m, "subscribe %d" % i)
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        for lid in ("la", "lb"):
            s.send({"jsonrpc": "2.0", "id": lid,
                    "method": "subscriptions/listen",
                    "params": {"_meta": meta, "notifications": {
                        "resourceSubscriptions": [uri]}}})
        for lid in ("la", "lb"):
            ack = lambda n, lid=lid: n["params"].get("_meta", {}).get(
                "io.modelcontextprotocol/subscriptionId") == lid
            n = s.note("notifications/subscriptions/acknowledged", 5, ack)
            check(n is not None and n["params"]["notifications"].get(
                  "resourceSubscriptions") == [uri],
                  "listener %s acknowledged with the URI it holds" % lid)
        # A listen for list changes only (what Claude Code sends) is
        # acknowledged too: the client waits for it before going on.
        s.send({"jsonrpc": "2.0", "id": "lc",
                "method": "subscriptions/listen",
                "params": {"_meta": meta, "notifications": {
                    "toolsListChanged": True,
                    "promptsListChanged": True}}})
        n = s.note("notifications/subscriptions/acknowledged", 5,
                   lambda n: n["params"].get("_meta", {}).get(
                       "io.modelcontextprotocol/subscriptionId") == "lc")
        check(n is not None and n["params"]["notifications"] ==
              {"toolsListChanged": True},
              "a listen without resources is acknowledged with what is "
              "honoured (no prompts here)")
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "la"}})
        m = s.request({"jsonrpc": "2.0", "id": 302,
                       "method": "resources/unsubscribe",
                       "params": {"uri": uri}}, 30)
        check(m is not None and "result" in m,
              "unsubscribe while a listener still holds the URI")
        kill_worker(s)
        ended = lambda n: n["params"].get("uri") == uri
        n = s.note("notifications/resources/updated", 15, ended)
        check(n is not None and n["params"].get("_meta", {}).get(
              "io.runtimed/attachmentExpired") is True,
              "the listener still holding it gets a final update with "
              "attachmentExpired")
        check(s.note("notifications/resources/updated", 2, ended) is None,
              "one final update per URI, not per listener")
        s.close()
    finally:
        w.cleanup()


def main():
    for t in (test_options, test_pipe, test_overlong, test_catalog,
              test_wrapper, test_limiter, test_upgrade, test_inflight,
              test_subs):
        t0 = time.monotonic()
        t()
        print("--    %s: %.1f s" % (t.__name__, time.monotonic() - t0),
              flush=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all proxy checks passed")


if __name__ == "__main__":
    main()
