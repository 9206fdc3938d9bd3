#!/usr/bin/python3
# SPDX-License-Identifier: ISC
# bench/chain-instr.py BUILD PROG [CALLS] [KEEP]: the instructions
# (callgrind Ir) one process of the chain spends per `1+1` run_cells,
# for telling where the chain's CPU goes without a quiet machine.  PROG
# is runtimed-mcp, runtimed-mcp-worker, runtimed or runtimed-agent.
# Starts runtimed-mcp of the build tree BUILD with a private socket and
# state directory and PROG under callgrind (through a wrapper first on
# RUNTIMED_LIBEXEC_DIR; the proxy directly), makes a notebook with a
# `1+1` cell, runs it 20 times to warm up, then CALLS times (default
# 40); then a second world runs it twice as many times.  The difference
# of the two totals over CALLS is the cost of one call, start-up and
# set-up left out.  A daemon's writer thread is counted with it (its
# group commits follow the runs by ROOM_EXEC_PERSIST_MS).  KEEP, a
# prefix, keeps both profiles as KEEP.a and KEEP.b for callgrind_annotate.
# Needs valgrind.
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def world(build, prog, calls, keep):
    d = tempfile.mkdtemp(prefix="chain-instr.")
    lib = os.path.join(d, "libexec")
    os.mkdir(lib)
    vg = ["valgrind", "--tool=callgrind",
          "--callgrind-out-file=%s/cg.%%p.out" % d]
    real = (build + "/runtimed/runtimed" if prog == "runtimed"
            else build + "/" + prog)
    with open(os.path.join(lib, prog), "w") as f:
        f.write("#!/bin/sh\nexec %s %s \"$@\" 2>>%s/valgrind.log\n" %
                (" ".join(vg), real, d))
    os.chmod(os.path.join(lib, prog), 0o755)
    env = dict(os.environ, RUNTIMED_SOCKET=d + "/s.sock",
               RUNTIMED_STATE_DIR=d + "/state",
               RUNTIMED_LIBEXEC_DIR="%s:%s:%s/runtimed" % (lib, build, build))
    cmd = [build + "/runtimed-mcp"]
    if prog == "runtimed-mcp":
        cmd = vg + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=env, cwd=d)
    n = [0]

    def rpc(method, params):
        n[0] += 1
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n[0],
                                   "method": method, "params": params})
                       + "\n").encode())
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == n[0]:
                return m

    def call(name, args):
        r = rpc("tools/call", {"name": name, "arguments": args})
        if "error" in r or r["result"].get("isError"):
            sys.exit("chain-instr: %s: %s" % (name, json.dumps(r)[:300]))
        return r["result"]["structuredContent"]

    rpc("initialize", {"protocolVersion": "2025-06-18",
                       "capabilities": {"experimental":
                                        {"io.runtimed/structured": {}}},
                       "clientInfo": {"name": "chain-instr",
                                      "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()
    h = call("create_notebook", {"path": d + "/n.ipynb"})["notebook_handle"]
    cell = call("edit_cells", {"notebook_handle": h, "edits": [
        {"op": "insert", "after": "BOTTOM", "source": "1+1"}]})
    cell = cell["cells"][0]["cell_id"]
    for _ in range(20 + calls):
        call("run_cells", {"notebook_handle": h, "cell_ids": [cell],
                           "wait_secs": 50})
    p.stdin.close()
    p.wait()
    subprocess.run([build + "/runtimed/runtimed", "stop"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Every process of PROG's name wrote a profile at its exit (the
    # daemon's parent, the pool's second agent): the busiest is the one.
    for _ in range(50):
        outs = glob.glob(d + "/cg.*.out")
        if outs and not subprocess.run(["pgrep", "-f", d],
                                       capture_output=True).stdout:
            break
        time.sleep(0.2)
    best = max(outs, key=os.path.getsize)
    out = subprocess.run(["callgrind_annotate", best], capture_output=True,
                         text=True).stdout
    if keep:
        shutil.copy(best, keep)
    shutil.rmtree(d, ignore_errors=True)
    m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", out)
    if m is None:
        sys.exit("chain-instr: no callgrind totals (is valgrind there?)")
    return int(m.group(1).replace(",", ""))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: chain-instr.py BUILD PROG [CALLS] [KEEP]")
    build = os.path.abspath(sys.argv[1])
    prog = sys.argv[2]
    if prog not in ("runtimed-mcp", "runtimed-mcp-worker", "runtimed",
                    "runtimed-agent"):
        sys.exit("chain-instr: PROG is runtimed-mcp, runtimed-mcp-worker, "
                 "runtimed or runtimed-agent")
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    keep = sys.argv[4] if len(sys.argv) > 4 else None
    a = world(build, prog, calls, keep and keep + ".a")
    b = world(build, prog, 2 * calls, keep and keep + ".b")
    print("%s: %d instructions per 1+1 run_cells (%d calls)" % (
        prog, (b - a) // calls, calls))


if __name__ == "__main__":
    main()
