#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""proxy-wire-test.py: hostile shapes on the wire, through the real chain
(runtimed-mcp -> runtimed-mcp-worker -> runtimed -> python3 kernel), seen
as a client sees it on raw stdin/stdout.
Usage: proxy-wire-test.py PATH-TO-runtimed-mcp [TEST...]

Checks (issue 10 items 4, 5, 7 and issue 11's nesting limit):
- ids come back exactly as sent: a 30-digit number keeps its text, a
  string with a lone surrogate escape keeps its escape, two ids that
  only differ past 64 bits stay two requests;
- invalid UTF-8 in an id or a method (also an encoded surrogate or an
  overlong form, as Python's decoder refuses them) is answered -32700 with
  id null,
  and no reply line carries invalid UTF-8;
- a reply too large for its frame is answered with a typed error that
  says how to ask for less: inspect_notebook output_mode "full",
  get_results full_output and resources/read on a 50 MB output
  (tests/runtimed/replies.sh covers the daemon's replies);
- a client that writes 30,000 tools/list (and 5,000 worker-answered
  ones) without reading keeps runtimed-mcp and the worker under 64 MB
  (VmHWM), and every request gets exactly one reply once it reads; a
  15 MiB request is relayed, a 40 MiB one refused, still under 64 MB;
- a valid request nesting 300 levels is answered with its id; past the
  limit the answer is a typed error carrying the id.
"""

import importlib.util
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "proxy_test", os.path.join(HERE, "proxy-test.py"))
pt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pt)
check = pt.check

MB = 1024 * 1024
RSS_LIMIT = 64 * MB


class RawSession(pt.Session):
    """A session that can also read one raw reply line."""

    def recv_raw(self, timeout=30):
        end = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = max(0, end - time.monotonic())
            if left == 0 or not pt.select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def raw_reply(self, raw, timeout=30):
        """Send raw bytes as a line; the next line that is not a
        notification, raw."""
        self.send(raw)
        while True:
            line = self.recv_raw(timeout)
            if line is None or b'"method":' not in line[:40]:
                return line


def open_raw(w):
    s = RawSession(w)
    m = s.request(pt.INIT, 60)
    check(m is not None and "result" in m, "initialize")
    s.send(pt.INITIALIZED)
    return s


def utf8_ok(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def id_text(line):
    """The raw text of a reply's top-level id; replies start
    {"jsonrpc":"2.0","id":...  None if the line is not one."""
    pre = b'{"jsonrpc":"2.0","id":'
    if line is None or not line.startswith(pre):
        return None
    rest = line[len(pre):]
    if rest[:1] != b'"':
        return rest[:min(i for i in (rest.find(b","), rest.find(b"}"),
                                     len(rest)) if i >= 0)]
    i = 1
    while i < len(rest) and rest[i:i + 1] != b'"':
        i += 2 if rest[i:i + 1] == b"\\" else 1
    return rest[:i + 1]


def test_ids():
    w = pt.World()
    try:
        s = open_raw(w)
        big = b"123456789012345678901234567890"
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":' + big +
                           b',"method":"ping"}')
        check(id_text(line) == big,
              "a 30-digit id comes back as sent (ping): %r" % (line,))
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":' + big +
                           b',"method":"tools/list"}')
        check(id_text(line) == big,
              "a 30-digit id comes back as sent (tools/list from the "
              "proxy's catalog): %r" % ((line or b"")[:80],))
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":-' + big +
                           b'9,"method":"tools/call","params":{"name":'
                           b'"list_kernels","arguments":{}}}', 60)
        check(id_text(line) == b"-" + big + b"9",
              "a 31-digit negative id comes back as sent (tools/call): %r"
              % ((line or b"")[:80],))
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":"\\ud800x",'
                           b'"method":"ping"}')
        check(id_text(line) == b'"\\ud800x"' and
              b'"result"' in (line or b""),
              "an id with a lone surrogate comes back as sent, answered: "
              "%r" % (line,))
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":1e2,"method":"ping"}')
        check(line is not None and id_text(line) in (b"1e2", b"null"),
              "a number id in exponent form is not rewritten: %r" % (line,))

        # Two ids equal in their first 64 bits are two requests.
        s.send(b'{"jsonrpc":"2.0","id":' + big + b'1,"method":"ping"}')
        s.send(b'{"jsonrpc":"2.0","id":' + big + b'2,"method":"ping"}')
        got = sorted(id_text(s.recv_raw()) or b"" for _ in range(2))
        check(got == [big + b"1", big + b"2"],
              "two long ids stay two requests: %r" % (got,))

        for what, raw in (
                ("an id", b'{"jsonrpc":"2.0","id":"a\xffb","method":"ping"}'),
                ("a method", b'{"jsonrpc":"2.0","id":9,'
                 b'"method":"pi\xffng"}'),
                ("params", b'{"jsonrpc":"2.0","id":10,"method":"ping",'
                 b'"params":{"x":"\xc3"}}'),
                ("params (an encoded surrogate)",
                 b'{"jsonrpc":"2.0","id":11,"method":"ping",'
                 b'"params":{"x":"\xed\xa0\x80"}}'),
                ("params (an overlong /)",
                 b'{"jsonrpc":"2.0","id":12,"method":"ping",'
                 b'"params":{"x":"\xc0\xaf"}}')):
            line = s.raw_reply(raw)
            m = json.loads(line) if line is not None and utf8_ok(line) \
                else None
            check(line is not None and utf8_ok(line),
                  "the answer to invalid UTF-8 in %s is valid UTF-8: %r"
                  % (what, line))
            check(m is not None and m.get("id") is None and
                  m.get("error", {}).get("code") == -32700,
                  "invalid UTF-8 in %s is answered -32700, id null: %r"
                  % (what, line))
        m = s.request({"jsonrpc": "2.0", "id": "after", "method": "ping"},
                      30)
        check(m is not None and "result" in m, "the session goes on")
        status, rest = s.close()
        check(status == 0, "exit 0 at EOF")
        check(all(utf8_ok(x) for x in rest.split(b"\n")),
              "nothing after is invalid UTF-8")
    finally:
        w.cleanup()


def vmhwm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    return int(ln.split()[1]) * 1024
    except OSError:
        pass
    return None


def sanitized(pid):
    """Built with AddressSanitizer: its shadow memory and quarantine make
    VmHWM meaningless, so the figures are printed but not checked."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return "libasan" in f.read()
    except OSError:
        return False


def under_limit(pid, peak):
    return peak is not None and (peak < RSS_LIMIT or sanitized(pid))


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}


def test_backpressure():
    w = pt.World()
    try:
        s = open_raw(w)
        wk = []
        pt.time_until(lambda: wk.extend(pt.real_workers_of(s.p.pid)) or wk,
                      10)
        n_proxy, n_worker = 30000, 5000
        if sanitized(s.p.pid):
            # ASan makes each reply ten times slower to build; 170 MB
            # of replies still passes the high-water mark many times.
            n_proxy, n_worker = 5000, 1000
        lines = []
        for i in range(n_proxy):
            lines.append(json.dumps({"jsonrpc": "2.0", "id": i,
                                     "method": "tools/list"}).encode())
        for i in range(n_worker):
            lines.append(json.dumps({"jsonrpc": "2.0", "id": "w%d" % i,
                                     "method": "tools/list",
                                     "params": {"_meta": MODERN}}).encode())
        data = b"\n".join(lines) + b"\n"
        done = threading.Event()

        def writer():
            try:
                s.p.stdin.write(data)
                s.p.stdin.flush()
            except OSError:
                pass
            done.set()

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        time.sleep(8)           # not reading stdout meanwhile
        peak_p = vmhwm(s.p.pid)
        peak_w = vmhwm(wk[0]) if wk else None
        print("      peak VmHWM while not read: runtimed-mcp %.1f MB, "
              "worker %s MB" % (peak_p / MB, "%.1f" % (peak_w / MB)
                                if peak_w else "?"), flush=True)
        seen = {}
        end = time.monotonic() + 240
        total = n_proxy + n_worker
        while len(seen) < total and time.monotonic() < end:
            line = s.recv_raw(30)
            if line is None:
                break
            m = json.loads(line)
            if "id" in m and "method" not in m:
                seen[m["id"]] = seen.get(m["id"], 0) + 1
        t.join(30)
        peak_p = vmhwm(s.p.pid)
        peak_w = vmhwm(wk[0]) if wk else None
        print("      peak VmHWM at the end: runtimed-mcp %.1f MB, "
              "worker %s MB" % (peak_p / MB, "%.1f" % (peak_w / MB)
                                if peak_w else "?"), flush=True)
        want = set(range(n_proxy)) | {"w%d" % i for i in range(n_worker)}
        check(set(seen) == want and all(v == 1 for v in seen.values()),
              "every request got exactly one reply (%d of %d)" %
              (len(set(seen) & want), total))
        check(under_limit(s.p.pid, peak_p),
              "runtimed-mcp stays under 64 MB (VmHWM %.1f MB)" %
              ((peak_p or 0) / MB))
        check(wk and under_limit(wk[0], peak_w),
              "the worker stays under 64 MB (VmHWM %.1f MB)" %
              ((peak_w or 0) / MB))
        m = s.request({"jsonrpc": "2.0", "id": "after", "method": "ping"},
                      30)
        check(m is not None and "result" in m, "the session goes on")

        # One message as large as allowed, and one past it.
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":"big","method":"ping",'
                           b'"params":{"pad":"' + b"y" * (15 * MB) + b'"}}',
                           60)
        check(line is not None and b'"result"' in line,
              "a 15 MiB request is answered")
        line = s.raw_reply(b'{"jsonrpc":"2.0","id":"huge","method":"ping",'
                           b'"params":{"pad":"' + b"y" * (40 * MB) + b'"}}',
                           60)
        check(line is not None and b'-32600' in line,
              "a 40 MiB request is refused with -32600")
        peak_p = vmhwm(s.p.pid)
        print("      peak VmHWM after them: runtimed-mcp %.1f MB" %
              (peak_p / MB), flush=True)
        check(under_limit(s.p.pid, peak_p),
              "runtimed-mcp still under 64 MB")
        s.close()
    finally:
        w.cleanup()


def tool(s, name, args, timeout):
    return s.call(name, args, timeout)


def test_large():
    if not os.path.isdir("/usr/share/jupyter/kernels/python3") and \
            not os.path.isdir("/usr/local/share/jupyter/kernels/python3"):
        print("      skipped: no python3 kernel")
        return
    w = pt.World()
    try:
        s = open_raw(w)
        m = tool(s, "create_notebook", {}, 60)
        h = pt.sc_of(m).get("notebook_handle")
        check(h is not None, "create_notebook: %r" % (pt.sc_of(m),))
        m = tool(s, "edit_cells", {"notebook_handle": h, "edits": [
            {"op": "insert", "after": "BOTTOM",
             # Display outputs: a stream this long would be cut to its
             # head and tail on the way in (common/streamcap.c).
             "source": "from IPython.display import display\n"
                       "for i in range(24):\n"
                       "    display({'text/plain': 'x' * 1_000_000}, "
                       "raw=True)\n"}]}, 60)
        cid = (pt.sc_of(m).get("cells") or [{}])[0].get("cell_id")
        m = tool(s, "run_cells", {"notebook_handle": h, "cell_ids": [cid],
                                  "wait_secs": 50}, 120)
        check(pt.sc_of(m).get("status") == "done",
              "a cell displaying 24 MB ran: %r" % (pt.sc_of(m).get("status"),))
        t0 = time.monotonic()
        m = tool(s, "inspect_notebook", {"notebook_handle": h,
                                         "view": "outputs",
                                         "output_mode": "full"}, 90)
        check(m is not None,
              "inspect_notebook output_mode full on 24 MB is answered "
              "(%.1f s)" % (time.monotonic() - t0))
        # Caps hold in every mode (docs/decisions/015-result-shaping.md).
        text = "".join(c.get("text", "") for c in
                       (m or {}).get("result", {}).get("content", []))
        cells = pt.sc_of(m).get("cells") or [{}]
        check(m is not None and not m["result"].get("isError") and
              len(text) <= 12000 and cells[0].get("truncated") is True,
              "... within the caps: %d characters, truncated %r" %
              (len(text), cells[0].get("truncated")))
        m = tool(s, "inspect_notebook", {"notebook_handle": h,
                                         "view": "outputs",
                                         "output_mode": "text"}, 60)
        check(m is not None and not m["result"].get("isError"),
              "output_mode text on it still works")

        eid = None
        m = tool(s, "run_cells", {"notebook_handle": h, "cell_ids": [cid],
                                  "wait_secs": 50}, 120)
        eid = pt.sc_of(m).get("execution_id")
        check(m is not None and not m["result"].get("isError"),
              "run_cells of it is answered (outputs capped)")
        m = tool(s, "get_results", {"notebook_handle": h,
                                    "execution_id": eid,
                                    "full_output": True}, 90)
        # Full output is bounded (100,000 characters) and says how to
        # read on by line ranges (issue 34), so it is answered.
        text = "".join(c.get("text", "") for c in
                       (m or {}).get("result", {}).get("content", []))
        check(m is not None and not m["result"].get("isError") and
              len(text) < 101000 and "start_line and end_line" in text,
              "get_results full_output on it is bounded: %d characters" %
              len(text))
        m = s.request({"jsonrpc": "2.0", "id": "res", "method":
                       "resources/read", "params": {"uri":
                       "runtimed://sessions/%s/cells/%s" % (h, cid)}}, 90)
        check(m is not None and m.get("error", {}).get("data", {})
              .get("reason") == "too_large",
              "resources/read of the cell: an error saying it is too "
              "large: %r" % ((m or {}).get("error"),))
        m = s.request({"jsonrpc": "2.0", "id": "after", "method": "ping"},
                      30)
        check(m is not None and "result" in m, "the session goes on")
        s.close()
    finally:
        w.cleanup()


def nested(depth, leaf='"x"'):
    return "[" * depth + leaf + "]" * depth


def test_depth():
    w = pt.World()
    try:
        s = open_raw(w)
        line = s.raw_reply(('{"jsonrpc":"2.0","id":31,"method":"ping",'
                            '"params":{"deep":%s}}' % nested(300)).encode())
        m = json.loads(line) if line else None
        check(m is not None and m.get("id") == 31 and "result" in m,
              "a request nesting 300 levels is answered with its id: %r" %
              ((line or b"")[:100],))
        line = s.raw_reply(('{"jsonrpc":"2.0","id":32,"method":"ping",'
                            '"params":{"deep":%s}}' % nested(5000)).encode())
        m = json.loads(line) if line else None
        check(m is not None and m.get("id") == 32 and "error" in m and
              "levels" in m["error"].get("message", ""),
              "past the nesting limit: a typed error with the id: %r" %
              ((line or b"")[:200],))
        # A notebook whose metadata nests 100 levels: stored, sent in
        # frames both ways, read back.
        m = tool(s, "create_notebook", {}, 60)
        h = pt.sc_of(m).get("notebook_handle")
        md = json.loads("{" + '"a":{' * 99 + '"b":1' + "}" * 99 + "}")
        m = tool(s, "edit_cells", {"notebook_handle": h, "edits": [
            {"op": "insert", "after": "BOTTOM", "source": "1",
             "metadata": {"deep": md}}]}, 60)
        check(m is not None and not m["result"].get("isError"),
              "a cell with metadata nesting 100 levels is inserted: %r" %
              (pt.sc_of(m).get("error"),))
        m = tool(s, "inspect_notebook", {"notebook_handle": h,
                                         "view": "all"}, 60)
        check(m is not None and not m["result"].get("isError") and
              pt.sc_of(m).get("total_cells") == 1,
              "... and read back: %r" % (pt.sc_of(m).get("error"),))

        # A file nbformat wrote with metadata 200 levels deep: loads,
        # and saves back the same; a kernel output 200 levels deep.
        import nbformat
        path = os.path.join(w.dir, "deep.ipynb")
        deep = json.loads('{"a":' * 199 + "1" + "}" * 199)
        nb = nbformat.v4.new_notebook()
        nb.metadata["deep"] = deep
        code = ("from IPython.display import display\n"
                "d = x = {}\n"
                "for i in range(200):\n"
                "    x['a'] = {}; x = x['a']\n"
                "display({'application/json': d}, raw=True)\n")
        nb.cells.append(nbformat.v4.new_code_cell(code))
        nb.cells[0].metadata["deep"] = deep
        nbformat.write(nb, path)
        m = tool(s, "connect_notebook", {"path": path}, 60)
        h2 = pt.sc_of(m).get("notebook_handle")
        check(h2 is not None, "a notebook with metadata 200 levels deep "
              "connects: %r" % (pt.sc_of(m).get("error"),))
        cid = (pt.sc_of(m).get("cells") or [{}])[0].get("cell_id")
        m = tool(s, "inspect_notebook", {"notebook_handle": h2,
                                         "view": "all"}, 60)
        check(m is not None and not m["result"].get("isError"),
              "... and reads: %r" % (pt.sc_of(m).get("error"),))
        m = tool(s, "run_cells", {"notebook_handle": h2, "cell_ids": [cid],
                                  "wait_secs": 50}, 120)
        outs = ((pt.sc_of(m).get("cells") or [{}])[0].get("outputs") or
                [{}])
        d, n = outs[0].get("data", {}).get("application/json"), 0
        while isinstance(d, dict) and "a" in d:
            d, n = d["a"], n + 1
        check(pt.sc_of(m).get("status") == "done" and n == 200,
              "a kernel output 200 levels deep comes back whole (%d)" % n)
        m = tool(s, "save_notebook", {"notebook_handle": h2}, 60)
        check(m is not None and not m["result"].get("isError"),
              "it saves: %r" % (pt.sc_of(m).get("error"),))
        back = nbformat.read(path, as_version=4)
        check(back.metadata.get("deep") == deep and
              back.cells[0].metadata.get("deep") == deep,
              "the saved file keeps the deep metadata")
        s.close()
    finally:
        w.cleanup()


def main():
    tests = [test_ids, test_backpressure, test_large, test_depth]
    only = sys.argv[2:]
    for t in tests:
        if only and t.__name__ not in only:
            continue
        t0 = time.monotonic()
        t()
        print("--    %s: %.1f s" % (t.__name__, time.monotonic() - t0),
              flush=True)
    if pt.failures:
        print("%d check(s) failed" % len(pt.failures))
        sys.exit(1)
    print("all wire checks passed")


if __name__ == "__main__":
    main()
