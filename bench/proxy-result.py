#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""proxy-result.py: a 10 MB tools/call result (inspect_notebook of five
1 MB outputs, output_mode "full") through runtimed-mcp and the real
worker, daemon and python3 kernel: per call the wall time and the CPU
the proxy spent (/proc/PID/schedstat).  With "long" the request ids are
over 4096 bytes, which the worker does not carry in the MCP envelope,
so the proxy parses each result to find its id (as it did for every
result before the envelope).
Usage: RUNTIMED_LIBEXEC_DIR=B:B/runtimed proxy-result.py B/runtimed-mcp
    [CALLS [long]]"""
import importlib.util, json, os, sys, time
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "tests", "e2e")
spec = importlib.util.spec_from_file_location("pt", HERE + "/proxy-test.py")
pt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pt)
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5
# "long": ids over 4096 bytes, which the worker does not carry in the
# envelope, so the proxy parses the result to find its id.
long_id = len(sys.argv) > 3 and sys.argv[3] == "long"

def cpu(pid):
    """Seconds on a CPU (schedstat: nanoseconds)."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9

w = pt.World()
try:
    s = pt.open_session(w)
    m = s.call("create_notebook", {}, 60)
    h = pt.sc_of(m)["notebook_handle"]
    m = s.call("edit_cells", {"notebook_handle": h, "edits": [
        {"op": "insert", "after": "BOTTOM", "source":
         "from IPython.display import display\nfor i in range(5):\n"
         "    display({'text/plain': 'x' * 1_000_000}, raw=True)\n"}]}, 60)
    cid = pt.sc_of(m)["cells"][0]["cell_id"]
    m = s.call("run_cells", {"notebook_handle": h, "cell_ids": [cid],
                             "wait_secs": 50}, 120)
    assert pt.sc_of(m).get("status") == "done", m
    walls, cpus = [], []
    for i in range(calls):
        c0, t0 = cpu(s.p.pid), time.monotonic()
        s.nid += 1
        rid = ("L%d" % s.nid) + "x" * 5000 if long_id else s.nid
        s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "inspect_notebook", "arguments": {
                    "notebook_handle": h, "view": "outputs",
                    "output_mode": "full"}}})
        want = json.dumps(rid).encode()
        while True:
            if b"\n" in s.buf:
                line, s.buf = s.buf.split(b"\n", 1)
            else:
                line, s.buf = s.buf + s.p.stdout.readline(), b""
            if line.startswith(b'{"jsonrpc":"2.0","id":' + want):
                break
        t1 = time.monotonic()
        time.sleep(0.2)
        c1 = cpu(s.p.pid)
        assert len(line) > 10_000_000 and b'"isError":true' not in line, \
            line[:300]
        walls.append(t1 - t0)
        cpus.append(c1 - c0)
    walls.sort(); cpus.sort()
    print("result %d bytes; %d calls: wall median %.3f s (min %.3f), "
          "proxy CPU median %.4f s (min %.4f)" % (len(line), calls,
          walls[calls // 2], walls[0], cpus[calls // 2], cpus[0]))
    s.close()
finally:
    w.cleanup()
