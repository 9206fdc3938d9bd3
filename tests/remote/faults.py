# SPDX-License-Identifier: ISC
"""faults.py: the Jupyter Server killed mid-run and started again
(tests/remote/remote.sh drives the server; files in STATEDIR are the
hand-offs: "running" from us, "killed" and "back" from the script).

The run in flight ends kernel_died; the handle then answers
attachment_unavailable and keeps its slot; the notebook's unsaved edit
is kept and list_notebooks says server_lost, also after the local daemon
is stopped and started again; once the server is back a
new connect works and joins the kept edit, and it runs (on this server's
JSON WebSocket messages) in a new kernel.

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


def text_of_list(w):
    _, text, _ = w.call("list_notebooks")
    return text


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-f.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect", sc)
h = sc["notebook_handle"]
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "import time\nprint('started', flush=True)\n"
               "for i in range(600):\n    time.sleep(0.1)"}])
cell = long_id = sc["cells"][0]["cell_id"]
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
# Its unsaved cell is kept, bound to the notebook, and said so.
lost = [n for n in sc["notebooks"] if n.get("path") == "nb.ipynb" and
        n.get("domain") == "js"]
expect(len(lost) == 1 and lost[0]["dirty"] and lost[0]["server_lost"],
       "list_notebooks shows the lost server's unsaved notebook", sc)
expect("server lost" in text_of_list(w), "said in the text", None)
ok("list_notebooks: domain js, server_lost, dirty: the unsaved edits kept")
# The local daemon stopped and started again meanwhile: the room comes
# back from the store still bound to the lost server, and says so.
open(os.path.join(tmp, "lost"), "w").close()
handoff(tmp, "restarted")
sc, _, err = w.call("list_notebooks")
lost = [n for n in sc["notebooks"] if n.get("path") == "nb.ipynb" and
        n.get("domain") == "js"]
expect(len(lost) == 1 and lost[0]["dirty"] and lost[0]["server_lost"],
       "list_notebooks after a daemon restart", sc)
ok("a daemon restart keeps server_lost and the unsaved edits")

open(os.path.join(tmp, "checked"), "w").close()
handoff(tmp, "back")
sc, _, err = w.call("disconnect_notebook", notebook_handle=h)
# Across the daemon's restart the unavailable handle may have gone.
expect(not err or sc["error"]["code"] == "attachment_expired",
       "disconnect the unavailable handle", sc)
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect once the server is back", sc)
h = sc["notebook_handle"]
sc, _, err = w.call("inspect_notebook", notebook_handle=h)
expect(not err and sc["dirty"] and
       long_id in [c["cell_id"] for c in sc["cells"]],
       "the unsaved cell kept over the server's copy", sc)
sc2, _, err = w.call("list_notebooks")
expect(not any(n.get("server_lost") for n in sc2["notebooks"]
               if n.get("domain") == "js" and n.get("path") == "nb.ipynb"),
       "no longer server_lost", sc2)
ok("the server is back: a connect joins the kept edits (dirty)")
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
