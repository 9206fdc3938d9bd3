#!/usr/bin/python3
# SPDX-License-Identifier: ISC
# bench/worker-instr.py BUILD TOOL [CALLS] [CELLS]: the worker's
# instructions (callgrind Ir) per call of one tool, for telling where a
# worker's CPU goes without a quiet machine.  Starts runtimed-mcp of the
# build tree BUILD with a private socket and state directory and the
# worker under callgrind, makes a notebook of CELLS cells (default 20),
# and calls TOOL (outline, source, search, edit, edit+outline: an edit,
# then an outline that reads the content again, or run: run_cells of a
# `1+1` cell on the default kernel, waiting for it, or wait: an
# inspect_notebook waiting past its cursor for an edit that a second
# runtimed-mcp, not under callgrind, makes meanwhile) CALLS times (default
# 50), then as many again in a second world; the difference of the two
# totals over CALLS is the cost of one call, start-up and set-up left
# out.  WORKER_INSTR_KEEP=PREFIX keeps both profiles as PREFIX.N.out.
# Needs valgrind.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def client(build, env, d):
    """A runtimed-mcp started in env, and its send, rpc and call."""
    p = subprocess.Popen([build + "/runtimed-mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=env, cwd=d)
    n = [0]

    def send(method, params):
        n[0] += 1
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n[0],
                                   "method": method, "params": params})
                       + "\n").encode())
        p.stdin.flush()
        return n[0]

    def answer(want):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == want:
                return m

    def rpc(method, params):
        return answer(send(method, params))

    def call(name, args, wait=None):
        if wait is not None:
            # Sent now, answered after wait() ran.
            i = send("tools/call", {"name": name, "arguments": args})
            wait()
            r = answer(i)
        else:
            r = rpc("tools/call", {"name": name, "arguments": args})
        if "error" in r or r["result"].get("isError"):
            sys.exit("worker-instr: %s: %s" % (name, json.dumps(r)[:300]))
        return r["result"]["structuredContent"]

    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {"experimental": {"io.runtimed/structured": {}}},
                       "clientInfo": {"name": "worker-instr", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()
    return p, send, rpc, call


def world(build, tool, calls, cells):
    d = tempfile.mkdtemp(prefix="worker-instr.")
    lib = os.path.join(d, "libexec")
    os.mkdir(lib)
    wrap = os.path.join(lib, "runtimed-mcp-worker")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nexec valgrind --tool=callgrind "
                "--callgrind-out-file=%s/cg.out %s/runtimed-mcp-worker "
                "\"$@\" 2>%s/valgrind.log\n" % (d, build, d))
    os.chmod(wrap, 0o755)
    env = dict(os.environ, RUNTIMED_SOCKET=d + "/s.sock",
               RUNTIMED_STATE_DIR=d + "/state",
               RUNTIMED_LIBEXEC_DIR="%s:%s:%s/runtimed" % (lib, build, build))
    p, send, rpc, call = client(build, env, d)
    h = call("create_notebook", {"path": d + "/n.ipynb"})["notebook_handle"]
    call("edit_cells", {"notebook_handle": h, "edits": [
        {"op": "insert", "after": "BOTTOM",
         "source": "for i in range(%d):\n    print('line', i)\nx = %d" % (i, i)}
        for i in range(cells)]})
    if tool == "run":
        # The kernel is started and warm before the calls counted.
        run_id = call("edit_cells", {"notebook_handle": h, "edits": [
            {"op": "insert", "after": "BOTTOM", "source": "1+1"}]})
        run_id = run_id["cells"][0]["cell_id"]
        call("run_cells", {"notebook_handle": h, "cell_ids": [run_id],
                           "wait_secs": 30})
    if tool == "wait":
        # The editor's worker is not the one counted.
        eenv = dict(env, RUNTIMED_LIBEXEC_DIR="%s:%s/runtimed" % (build,
                                                                   build))
        ep, _, _, ecall = client(build, eenv, d)
        eh = ecall("connect_notebook", {"path": d + "/n.ipynb"})
        eh = eh["notebook_handle"]
        cur = call("inspect_notebook", {"notebook_handle": h,
                                        "count": 1})["cursor"]

        def edit():
            time.sleep(0.05)	# the wait is parked before the edit
            ecall("edit_cells", {"notebook_handle": eh, "edits": [
                {"op": "edit", "cell_id": 0, "source": "x = %d" % i}]})
    for i in range(calls):
        if tool == "wait":
            r = call("inspect_notebook", {"notebook_handle": h, "after": cur,
                                          "timeout_secs": 10, "count": 1},
                     wait=edit)
            if r.get("outcome") != "changed":
                sys.exit("worker-instr: wait: %s" % json.dumps(r)[:300])
            cur = r["cursor"]
        elif tool == "outline":
            call("inspect_notebook", {"notebook_handle": h})
        elif tool == "source":
            call("inspect_notebook", {"notebook_handle": h, "view": "source"})
        elif tool == "search":
            call("search_cells", {"notebook_handle": h, "query": "print"})
        elif tool in ("edit", "edit+outline"):
            call("edit_cells", {"notebook_handle": h, "edits": [
                {"op": "edit", "cell_id": 0, "source": "x = %d" % i}]})
            if tool == "edit+outline":
                call("inspect_notebook", {"notebook_handle": h})
        elif tool == "run":
            call("run_cells", {"notebook_handle": h, "cell_ids": [run_id],
                               "wait_secs": 30})
        else:
            sys.exit("worker-instr: unknown tool %s" % tool)
    p.stdin.close()
    p.wait()
    if tool == "wait":
        ep.stdin.close()
        ep.wait()
    subprocess.run([build + "/runtimed/runtimed", "stop"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(["callgrind_annotate", d + "/cg.out"],
                         capture_output=True, text=True).stdout
    m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", out)
    if os.environ.get("WORKER_INSTR_KEEP"):
        # For callgrind_annotate by function: KEEP.CALLS.out
        shutil.copy(d + "/cg.out", "%s.%d.out" % (
            os.environ["WORKER_INSTR_KEEP"], calls))
    shutil.rmtree(d, ignore_errors=True)
    if m is None:
        sys.exit("worker-instr: no callgrind totals (is valgrind there?)")
    return int(m.group(1).replace(",", ""))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: worker-instr.py BUILD TOOL [CALLS] [CELLS]")
    build = os.path.abspath(sys.argv[1])
    tool = sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    cells = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    a = world(build, tool, calls, cells)
    b = world(build, tool, 2 * calls, cells)
    print("%s, %d cells: %d instructions per call (worker, callgrind)"
          % (tool, cells, (b - a) // calls))


main()
