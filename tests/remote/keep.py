# SPDX-License-Identifier: ISC
"""keep.py: a notebook on a Jupyter Server outlives the local daemon,
and a run outlives its WebSocket (decision 030).  tests/remote/remote.sh
kills and restarts the daemon; files in STATEDIR are the hand-offs:
"edited" and "checked" from us, "killed" and "back" from the script.

The server is reached through a TCP relay of ours (domain "jr"), so the
test can cut the kernel's WebSocket while the server stays up.

1. Connect, run a cell (x = 42 in the server's kernel), make an
   (unsaved) edit; the daemon is SIGKILLed: the handle answers
   attachment_unavailable; the file changes on the server meanwhile; a
   daemon is started again: the same handle answers again, with the
   edit kept and the server's new cell merged, a save needs no force,
   and it runs in the kernel the server kept (x is still 42).  A second handle, of domain "jq",
   whose URL is changed meanwhile (the server's evidence then names
   another principal, server:host:port/), is not joined again: it
   expires, and its stored room is not opened by its id alone.  A third
   handle, clean, comes back as the server has its file now (written
   there while no daemon was up).
2. A run of time.sleep(3); print("done") with the relay's connections
   cut mid-run: the agent finds the kernel kept and reconnects with its
   session, and the run completes with "done".

usage: keep.py BUILDDIR STATEDIR SERVERROOT PORT
"""
import json
import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from relay import pump  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, handoff, ok  # noqa: E402

builddir, tmp, sroot, port = sys.argv[1:5]


class Relay:
    """127.0.0.1:ANY -> 127.0.0.1:port, byte for byte; cut() closes
    every connection open now (new ones pass again)."""

    def __init__(self, target):
        self.target = target
        self.lock = threading.Lock()
        self.conns = []
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            c, _ = self.ls.accept()
            try:
                s = socket.create_connection(("127.0.0.1", self.target))
            except OSError as e:
                print("relay: %s" % e, file=sys.stderr, flush=True)
                c.close()
                continue
            with self.lock:
                self.conns.append((c, s))
            for a, b in ((c, s), (s, c)):
                threading.Thread(target=pump, args=(a, b),
                                 daemon=True).start()


    def cut(self):
        with self.lock:
            conns, self.conns = self.conns, []
        n = 0
        for c, s in conns:
            live = 0
            for x in (c, s):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                    live += 1
                except OSError:
                    pass  # closed already (by a pipe, or a finished call)
            n += live > 0
        return n


t_start = time.time()
relay = Relay(int(port))
cfg = os.path.join(os.environ["RUNTIMED_CONFIG_DIR"], "domains.json")
domains = json.load(open(cfg))


def domain(name, relay):
    domains[name] = {"url": "http://127.0.0.1:%d/" % relay.port,
                     "token_file": domains["js"]["token_file"]}
    json.dump(domains, open(cfg, "w"))


domain("jr", relay)
domain("jq", Relay(int(port)))


def cells(w, h):
    sc, _, err = w.call("inspect_notebook", notebook_handle=h)
    return sc, err


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-k.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="jr")
expect(not err, "connect", sc)
h, nid = sc["notebook_handle"], sc["notebook_id"]
cell0 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell0],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "a first run", sc)
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "print('kept', x)"}])
expect(not err, "edit", sc)
kept = sc["cells"][0]["cell_id"]
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="jq")
expect(not err, "connect on jq", sc)
hq, nidq = sc["notebook_handle"], sc["notebook_id"]
sc, _, err = w.call("create_notebook", path="clean.ipynb", domain="jr")
expect(not err, "create on jr", sc)
hc = sc["notebook_handle"]

# 1. The daemon SIGKILLed: unavailable, not expired.
open(os.path.join(tmp, "edited"), "w").close()
handoff(tmp, "killed")
t0 = time.time()
while True:
    sc, err = cells(w, h)
    if err and sc["error"]["code"] == "attachment_unavailable":
        break
    expect(time.time() - t0 < 5, "the handle while no daemon is up", sc)
    time.sleep(0.1)
ok("no daemon: the hosted handle is attachment_unavailable (%s)" %
   sc["error"]["message"][:60])
# The server's copy changes while no daemon is up: someone adds a cell
# there (and a newer mtime is a new last_modified).
srv = os.path.join(sroot, "nb.ipynb")
theirs = json.load(open(srv))
theirs["cells"].append({"cell_type": "markdown", "id": "by-server",
                        "metadata": {}, "source": "added on the server"})
json.dump(theirs, open(srv, "w"))
later = time.time() + 5
os.utime(srv, (later, later))
with open(os.path.join(sroot, "clean.ipynb"), "w") as f:
    json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
               "cells": [{"cell_type": "code", "id": "c1", "metadata": {},
                          "execution_count": None, "outputs": [],
                          "source": "print('from the server')"}]}, f)
domain("jq", Relay(int(port)))
open(os.path.join(tmp, "checked"), "w").close()
handoff(tmp, "back")
t0 = time.time()
while True:
    sc, err = cells(w, h)
    if not err:
        break
    expect(sc["error"]["code"] == "attachment_unavailable" and
           time.time() - t0 < 20, "the handle once a daemon is back", sc)
    time.sleep(0.2)
expect(sc["total_cells"] == 3 and sc.get("notebook_id", nid) == nid and
       kept in [c["cell_id"] for c in sc["cells"]] and
       "by-server" in [c["cell_id"] for c in sc["cells"]],
       "the notebook with the acknowledged edit and the server's cell", sc)
ok("a daemon again: the same handle answers, the unsaved edit there and "
   "the server's new cell merged (%.1f s)" % (time.time() - t0))
t0 = time.time()
while True:
    sc, err = cells(w, hq)
    if err and sc["error"]["code"] == "attachment_expired":
        break
    expect(err and sc["error"]["code"] == "attachment_unavailable" and
           time.time() - t0 < 10, "the handle of another principal", sc)
    time.sleep(0.2)
ok("a handle whose server now names another principal expires")
t0 = time.time()
while True:
    sc, err = cells(w, hc)
    if not err:
        break
    expect(sc["error"]["code"] == "attachment_unavailable" and
           time.time() - t0 < 10, "the clean handle", sc)
    time.sleep(0.2)
expect(sc["total_cells"] == 1 and sc["cells"][0]["cell_id"] == "c1",
       "the clean notebook as the server has it", sc)
ok("a clean handle comes back as the server's copy is now")
# Its room stays stored, dormant: only its server may wake it, so its id
# alone (a local open) is refused, and the daemon lives on.
sc, _, err = w.call("connect_notebook", notebook_id=nidq)
expect(err and sc["error"]["code"] == "invalid_argument" and
       "domain" in sc["error"]["message"], "the id alone of it", sc)
sc, err = cells(w, h)
expect(not err, "the daemon after that", sc)
ok("its id alone is refused: a stored remote notebook wakes from its "
   "server")
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "a save of the merge needs no force", sc)
ids = [c["id"] for c in json.load(open(srv))["cells"]]
expect(len(ids) == 3 and kept in ids and "by-server" in ids,
       "the server's copy has both", ids)
ok("the server's copy changed meanwhile: merged with the unsaved edit, "
   "saved without force")
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "import time\ntime.sleep(3)\nprint('done')"}])
expect(not err, "edit after the re-join", sc)
slow = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[kept],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done" and
       sc["cells"][0]["outputs"][0]["text"] == "kept 42\n",
       "a run in the kernel the server kept", sc)
ok("and it runs in the kernel the server kept (its x is still 42)")

# 2. The kernel's WebSocket cut mid-run, the server up.
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[slow],
                    wait_secs=1, timeout=60)
expect(not err and sc["status"] in ("running", "queued"), "a slow run", sc)
eid = sc["execution_id"]
time.sleep(0.5)
n = relay.cut()
expect(n >= 1, "a live connection (the WebSocket) to cut", n)
t0 = time.time()
sc, _, err = w.call("get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=30)
expect(not err and sc["status"] == "done" and
       sc["cells"][0]["outputs"][0]["text"] == "done\n",
       "the run across a lost WebSocket", sc)
ok("%d connection(s) cut mid-run: the run completed with its output "
   "(%.1f s later)" % (n, time.time() - t0))
w.close()
print("done (%.1f s)" % (time.time() - t_start))
