# SPDX-License-Identifier: ISC
"""faults.py: the Jupyter Server killed mid-run and started again
(tests/remote/remote.sh drives the server; files in STATEDIR are the
hand-offs: "running" from us, "killed" and "back" from the script).

The run in flight ends kernel_died; the handle then answers
attachment_unavailable and keeps its slot; once the server is back a new
connect works, the notebook is as the server has it, and it runs (on
this server's JSON WebSocket messages).

usage: faults.py BUILDDIR STATEDIR SERVERROOT
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, handoff, ok  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-f.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect", sc)
h = sc["notebook_handle"]
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "import time\nprint('started', flush=True)\n"
               "for i in range(600):\n    time.sleep(0.1)"}])
cell = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell],
                    wait_secs=1, timeout=60)
eid = sc["execution_id"]
expect(sc["status"] in ("running", "queued"), "a long run", sc)
# A wait on the run, in flight while the server is killed.
rid = w.next_id
w.next_id += 1
w.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
    "name": "get_results", "arguments": {
        "notebook_handle": h, "execution_id": eid, "timeout_secs": 40}}})
time.sleep(0.5)
open(os.path.join(tmp, "running"), "w").close()
handoff(tmp, "killed")
t0 = time.time()
while True:
    msg = w.line(60)
    if msg.get("id") == rid:
        break
sc = msg["result"].get("structuredContent", {})
expect(sc.get("status") == "kernel_died", "the run in flight", sc)
ok("server killed mid-run: the run ended kernel_died (%.1f s)" %
   (time.time() - t0))
time.sleep(0.5)
sc, _, err = w.call("inspect_notebook", notebook_handle=h)
expect(err and sc["error"]["code"] == "attachment_unavailable",
       "the handle after the server went", sc)
sc, _, err = w.call("list_notebooks")
expect(h in [a["notebook_handle"] for a in sc["attachments"]],
       "the handle keeps its slot", sc)
ok("its handle answers attachment_unavailable and keeps its slot")

open(os.path.join(tmp, "checked"), "w").close()
handoff(tmp, "back")
sc, _, err = w.call("disconnect_notebook", notebook_handle=h)
expect(not err, "disconnect the unavailable handle", sc)
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect once the server is back", sc)
h = sc["notebook_handle"]
expect(not any("range(600)" in c.get("preview", "") for c in sc["cells"]),
       "the notebook as the server has it (the unsaved cell is not there)",
       sc)
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "print(2 ** 10)"}])
cell = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done" and
       sc["cells"][0]["outputs"][0]["text"] == "1024\n", "a run", sc)
ok("the server is back: a new connect works and runs")
w.close()
print("done")
