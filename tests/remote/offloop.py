# SPDX-License-Identifier: ISC
"""offloop.py: no contents call waits on an event loop (decision 029).
A relay of our own between the daemon and the real Jupyter Server holds
back the server's answers to chosen requests of one notebook for
DELAY s; while one is held, other clients of the same daemon (a read, the
daemon's list, an edit) and other tool calls of the same worker are
answered at once.  Transfers the relay cuts resume; a worker killed
while a download's reply stalls leaves no part at the destination.  Then
a change written to the server's copy by another client is announced
(the watch, RUNTIMED_REMOTE_WATCH_MS short in remote.sh).

usage: offloop.py BUILDDIR STATEDIR SERVERROOT
"""
import hashlib
import json
import os
import socket
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from relay import pump  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

import nbformat  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]
began = time.time()
DELAY = 2.0
QUICK = 1.0         # "at once", on a loaded 2-core machine
cfg = os.environ["RUNTIMED_CONFIG_DIR"]


# The server, and a domain "slow" reaching it through the relay.
domains = json.load(open(os.path.join(cfg, "domains.json")))
url = domains["js"]["url"]
port = int(url.rsplit(":", 1)[1].strip("/"))
token = open(os.path.join(cfg, "js.token")).read().strip()

# What to hold back: a function of (method, path) -> bool.
hold = [lambda m, p: False]
# What to cut: (method, path) -> None (relay it all), 0 (drop the request
# unsent) or N (pass N bytes of the reply, then close); -N: pass N bytes,
# then stall until release is set, then close.
cut = [lambda m, p: None]
release = threading.Event()



def relay_one(c):
    buf = b""
    while b"\r\n" not in buf:
        b = c.recv(65536)
        if not b:
            c.close()
            return
        buf += b
    method, path = buf.split(b"\r\n", 1)[0].decode().split(" ")[:2]
    if hold[0](method, path):
        time.sleep(DELAY)
    n = cut[0](method, path)
    if n == 0:
        c.close()
        return
    u = socket.create_connection(("127.0.0.1", port))
    u.sendall(buf)
    if n is not None:
        threading.Thread(target=pump, args=(c, u), daemon=True).start()
        stall, n = n < 0, abs(n)
        while n > 0:
            b = u.recv(min(n, 65536))
            if not b:
                break
            c.sendall(b)
            n -= len(b)
        if stall:
            release.wait(60)
        for x in (c, u):
            x.shutdown(socket.SHUT_RDWR)
            x.close()
        return
    t = threading.Thread(target=pump, args=(u, c), daemon=True)
    t.start()
    pump(c, u)
    t.join()
    c.close()
    u.close()


lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(16)


def relay():
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=relay_one, args=(c,), daemon=True).start()


threading.Thread(target=relay, daemon=True).start()
domains["slow"] = {"url": "http://127.0.0.1:%d/" % lsock.getsockname()[1],
                   "token_file": "js.token"}
# By name: resolved by the loop's DNS base (evdns), not a blocking lookup.
domains["named"] = {"url": "http://localhost:%d/" % port,
                    "token_file": "js.token"}
with open(os.path.join(cfg, "domains.json"), "w") as f:
    json.dump(domains, f)

for name in ("slow.ipynb", "fast.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(%r)" % name)]
    nbformat.write(nb, os.path.join(sroot, name))


class Calls:
    """Tool calls in flight on one worker, answered in any order."""

    def __init__(self, w):
        self.w = w
        self.got = {}

    def start(self, name, **args):
        rid = self.w.next_id
        self.w.next_id += 1
        self.w.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                     "params": {"name": name, "arguments": args}})
        return rid

    def wait(self, rid, timeout=60):
        while rid not in self.got:
            msg = self.w.line(timeout)
            if "id" in msg:
                self.got[msg["id"]] = msg
        r = self.got.pop(rid)["result"]
        return r.get("structuredContent", {}), r.get("isError", False)

    def call(self, name, **args):
        return self.wait(self.start(name, **args))


def timed(calls, name, **args):
    t0 = time.time()
    sc, err = calls.call(name, **args)
    return sc, err, time.time() - t0


A = Calls(Worker(builddir, dict(os.environ), os.path.join(tmp, "wa.log")))
B = Calls(Worker(builddir, dict(os.environ), os.path.join(tmp, "wb.log")))
C = Calls(Worker(builddir, dict(os.environ), os.path.join(tmp, "wc.log")))
sc, err = B.call("connect_notebook", path="fast.ipynb", domain="named")
expect(not err, "connect fast, the server by name", sc)
hb = sc["notebook_handle"]

# A connect held at the server: another client's read goes on; a second
# open of the same path at the same time joins the same room.
hold[0] = lambda m, p: m == "GET" and "slow.ipynb" in p and "content=1" in p
t0 = time.time()
ra = A.start("connect_notebook", path="slow.ipynb", domain="slow")
# A client that goes while its open is held: its answer goes nowhere.
C.start("connect_notebook", path="slow.ipynb", domain="slow")
time.sleep(0.3)
C.w.proc.kill()
C.w.proc.wait()
rb = B.start("connect_notebook", path="slow.ipynb", domain="slow")
time.sleep(0.3)
sc, err, dt = timed(B, "inspect_notebook", notebook_handle=hb)
expect(not err and sc["total_cells"] == 1, "read during a held connect", sc)
expect(dt < QUICK, "a read waited %.2f s behind a connect" % dt, sc)
# list_notebooks asks the daemon each time (a read may be the worker's).
sc, err, dl = timed(B, "list_notebooks")
expect(not err and dl < QUICK, "a list waited %.2f s behind a connect" % dl,
       sc)
sa, err = A.wait(ra)
expect(not err, "the held connect", sa)
held = time.time() - t0
expect(held >= DELAY * 0.9, "the connect was not held (%.2f s)" % held, sa)
sb, err = B.wait(rb)
expect(not err and sb["notebook_id"] == sa["notebook_id"],
       "two opens at once are one room", [sa, sb])
ha, hb2 = sa["notebook_handle"], sb["notebook_handle"]
ok("a connect held %.1f s at the server: another notebook read in %.3f s, "
   "the daemon's list in %.3f s; a second open joined the same room; a "
   "client gone meanwhile was no harm" % (held, dt, dl))

# A save held at the server: reads go on; an edit landing while the PUT
# is in flight leaves the room dirty after it.
hold[0] = lambda m, p: m == "PUT" and "slow.ipynb" in p
sc, err = A.call("edit_cells", notebook_handle=ha, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "print('saved')"}])
expect(not err, "edit before the save", sc)
t0 = time.time()
rs = A.start("save_notebook", notebook_handle=ha)
time.sleep(0.5)
sc, err, dt = timed(B, "list_notebooks")
expect(not err, "list during a held save", sc)
expect(dt < QUICK, "a list waited %.2f s behind a save" % dt, sc)
sc, err, dt2 = timed(B, "edit_cells", notebook_handle=hb2, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "print('late')"}])
expect(not err and dt2 < QUICK, "an edit during the save (%.2f s)" % dt2, sc)
sc, err = A.wait(rs)
expect(not err, "the held save", sc)
expect(time.time() - t0 >= DELAY * 0.9, "the save was not held", sc)
on = nbformat.read(os.path.join(sroot, "slow.ipynb"), 4)
expect([c.source for c in on.cells][-1] == "print('saved')",
       "the server has the content at the PUT", on.cells)
sc, err = A.call("inspect_notebook", notebook_handle=ha)
expect(not err and sc["dirty"] and sc["total_cells"] == 3,
       "an edit during the PUT keeps the room dirty", sc)
hold[0] = lambda m, p: False
sc, err = A.call("save_notebook", notebook_handle=ha)
expect(not err, "save again", sc)
sc, err = A.call("inspect_notebook", notebook_handle=ha)
expect(not err and not sc["dirty"], "clean after a quiet save", sc)
ok("a save held %.1f s: the daemon's list in %.3f s, an edit in %.3f s; "
   "that edit keeps the room dirty" % (DELAY, dt, dt2))

# An upload held at the server: the same worker answers another call.
big = os.path.join(tmp, "held.bin")
with open(big, "wb") as f:
    f.write(os.urandom(5 * 1024 * 1024))
want = hashlib.sha256(open(big, "rb").read()).hexdigest()
hold[0] = lambda m, p: m == "PUT" and "rtd-" in p
t0 = time.time()
ru = A.start("upload_file", notebook_handle=ha, host_path=big,
             kernel_path="held.bin")
time.sleep(0.5)
sc, err, dt = timed(A, "inspect_notebook", notebook_handle=ha)
expect(not err, "a call during a held upload", sc)
expect(dt < QUICK, "a call waited %.2f s behind an upload" % dt, sc)
sc, err = A.wait(ru)
up = time.time() - t0
expect(not err and sc["sha256"] == want, "the held upload", sc)
expect(up >= DELAY * 0.9, "the upload was not held (%.2f s)" % up, sc)
got = hashlib.sha256(open(os.path.join(sroot, "held.bin"), "rb").read())
expect(got.hexdigest() == want, "the server's file", None)
hold[0] = lambda m, p: False
ok("an upload of 5 MiB held %.1f s: the same worker answered another call "
   "in %.3f s" % (up, dt))

# Transfers cut midway (the connection dropped): taken up where they
# were (decision 092; tests/remote/resume.sh cuts them every way), no
# temporary left at either end.
puts = []


def cut_second_put(m, p):
    if m == "PUT" and "rtd-" in p:
        puts.append(p)
        return 0 if len(puts) == 2 else None
    return None


cut[0] = cut_second_put
sc, err = A.call("upload_file", notebook_handle=ha, host_path=big,
                 kernel_path="cut.bin")
expect(not err and sc["sha256"] == want and sc.get("resumed") == 1 and
       len(puts) == 3, "an upload cut at its second chunk, resumed", sc)
got = hashlib.sha256(open(os.path.join(sroot, "cut.bin"), "rb").read())
expect(got.hexdigest() == want, "the resumed upload's file", None)
expect(not [n for n in os.listdir(sroot) if n.startswith("rtd-")],
       "the cut upload's temporary was left", os.listdir(sroot))
# Every GET of files/ cut after 1 MiB: each resumed from where it was.
cut[0] = lambda m, p: (1 << 20) if m == "GET" and "/files/" in p else None
back = os.path.join(tmp, "cutdir")
os.mkdir(back)
sc, err = A.call("download_file", notebook_handle=ha, kernel_path="held.bin",
                 host_path=os.path.join(back, "held.bin"))
# Each GET's bytes up to its cut are kept (5 MiB in 1 MiB replies with
# their headers: 6 GETs); those read ahead of evhttp were lost, 13-17.
expect(not err and sc["sha256"] == want and 4 <= sc.get("resumed", 0) <= 6,
       "a download cut after every MiB, resumed", sc)
expect(os.listdir(back) == ["held.bin"], "the cut download left files",
       (os.listdir(back), sc))
cut[0] = lambda m, p: None
ok("transfers cut midway: resumed where they were (%d times, the download "
   "cut after every MiB), no temporary left at either end" % sc["resumed"])

# A worker killed (-9) mid-download, its reply stalled after 1 MiB: the
# destination never holds a part; only the worker's hidden temporary is
# left, named as runtimed's (decision 081).
D = Calls(Worker(builddir, dict(os.environ), os.path.join(tmp, "wd.log")))
sc, err = D.call("connect_notebook", path="slow.ipynb", domain="slow")
expect(not err, "connect for the killed download", sc)
cut[0] = lambda m, p: -(1 << 20) if m == "GET" and "/files/" in p else None
kdir = os.path.join(tmp, "killdir")
os.mkdir(kdir)
D.start("download_file", notebook_handle=sc["notebook_handle"],
        kernel_path="held.bin", host_path=os.path.join(kdir, "held.bin"))


def written():
    return [n for n in os.listdir(kdir)
            if os.path.getsize(os.path.join(kdir, n)) > 0]


t0 = time.time()
while not written():
    expect(time.time() - t0 < 10, "the download wrote nothing",
           os.listdir(kdir))
    time.sleep(0.05)
D.w.proc.kill()
D.w.proc.wait()
release.set()
cut[0] = lambda m, p: None
left = os.listdir(kdir)
expect("held.bin" not in left and len(left) == 1 and
       left[0].startswith(".rtd-") and left[0].endswith(".tmp") and
       os.path.getsize(os.path.join(kdir, left[0])) < 5 << 20,
       "a killed download left a part at the destination", left)
ok("a worker killed mid-download: nothing at the destination, its "
   "temporary (%d bytes) named as runtimed's" %
   os.path.getsize(os.path.join(kdir, left[0])))


def put(content):
    req = urllib.request.Request(
        "%sapi/contents/slow.ipynb" % url, method="PUT",
        data=json.dumps(content).encode(),
        headers={"Authorization": "token " + token,
                 "Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


# Another client writes the notebook on the server: announced.
on = nbformat.read(os.path.join(sroot, "slow.ipynb"), 4)
on.cells.append(nbformat.v4.new_markdown_cell("from another client"))
put({"type": "notebook", "format": "json",
     "content": json.loads(nbformat.writes(on))})
t0 = time.time()
while True:
    sc, err = A.call("inspect_notebook", notebook_handle=ha)
    expect(not err, "read after the outside change", sc)
    if sc["total_cells"] == 4:
        break
    expect(time.time() - t0 < 2.0, "the outside change was not announced "
           "in 2 s", sc)
    time.sleep(0.1)
seen = time.time() - t0
expect(not sc["dirty"], "reloaded clean", sc)
ok("a change written on the server by another client was announced in "
   "%.2f s" % seen)

# What another client writes there is not a notebook: kept as it is
# here, said in the log, and the next save needs force.
put({"type": "file", "format": "text", "content": "{not a notebook"})
log = os.path.join(tmp, "daemon.log")
t0 = time.time()
while "not reloading: slow.ipynb" not in open(log, errors="replace").read():
    expect(time.time() - t0 < 3.0, "a bad copy on the server not seen", None)
    time.sleep(0.1)
sc, err = A.call("inspect_notebook", notebook_handle=ha)
expect(not err and sc["total_cells"] == 4, "kept over a bad copy", sc)
sc, err = A.call("save_notebook", notebook_handle=ha)
expect(err and sc["error"]["code"] == "file_changed_on_disk",
       "a save over the bad copy", sc)
sc, err = A.call("save_notebook", notebook_handle=ha, force=True)
expect(not err, "a forced save", sc)
expect(len(nbformat.read(os.path.join(sroot, "slow.ipynb"), 4).cells) == 4,
       "the forced save wrote the notebook", None)
ok("a copy on the server that is not a notebook: kept here, logged, the "
   "save needs force")

# A create the server names, answered from the server's answers too.
sc, err = A.call("create_notebook", domain="js")
expect(not err and sc["path"].startswith("Untitled") and
       os.path.exists(os.path.join(sroot, sc["path"])), "create unnamed", sc)
sc, err = A.call("create_notebook", domain="js", kernel="nosuch")
expect(err and sc["error"]["code"] == "kernel_unavailable" and
       "python3" in sc["error"]["message"], "create with a kernel not there",
       sc)
ok("create_notebook {domain}: the server named it; an unknown kernelspec "
   "refused with the list")

for c in (A, B):
    c.w.close()
print("done in %.1f s" % (time.time() - began))
