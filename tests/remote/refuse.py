# SPDX-License-Identifier: ISC
"""refuse.py: what a proxy in front of a Jupyter Server does to us, with
a relay of our own between the daemon and the real server (issue 38).

- The server refuses an interrupt (403, as a hub does for a token that
  may not): interrupt_kernel answers `refused`, and the run goes on to
  its end.
- The relay goes away as configurable-http-proxy does when it restarts:
  every connection cut, then "connection refused", then 404s (a proxy
  without its routes) and hub-like 302s for a while, then the routes
  are back.  The kernel is not taken for gone: the run in flight
  completes with all its outputs, and the same kernel runs the next
  cell with its variables.

usage: refuse.py BUILDDIR STATEDIR SERVERROOT
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
from rcheck import expect, ok  # noqa: E402

import nbformat  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]
cfg = os.environ["RUNTIMED_CONFIG_DIR"]
domains = json.load(open(os.path.join(cfg, "domains.json")))
port = int(domains["js"]["url"].rsplit(":", 1)[1].strip("/"))

# mode[0]: "pass"; "refuse" (403 to an interrupt); "down" (connections
# refused: the listening socket closed); "noroute" (404 and 302, as a
# restarting proxy and then the hub answer).
mode = ["pass"]
conns = []
lock = threading.Lock()



def answer(c, status, body, ctype="application/json", extra=""):
    c.sendall(("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
               "%sConnection: close\r\n\r\n" % (status, ctype, len(body),
                                                extra)).encode() + body)
    c.close()


served = {"refused": 0, "noroute": 0}


def relay_one(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = c.recv(65536)
        if not b:
            c.close()
            return
        buf += b
    method, path = buf.split(b"\r\n", 1)[0].decode().split(" ")[:2]
    if mode[0] == "refuse" and method == "POST" and \
            path.endswith("/interrupt"):
        served["refused"] += 1
        answer(c, "403 Forbidden", b'{"message": "Forbidden", '
               b'"reason": null}')
        return
    if mode[0] == "noroute":
        served["noroute"] += 1
        if served["noroute"] % 2:
            answer(c, "404 Not Found", b"<html>no route</html>",
                   "text/html")
        else:
            answer(c, "302 Found", b"", "text/html",
                   "Location: /hub/user/someone/api\r\n"
                   "X-JupyterHub-Version: 3.0.0\r\n")
        return
    u = socket.create_connection(("127.0.0.1", port))
    u.sendall(buf)
    with lock:
        conns.append((c, u))
    t = threading.Thread(target=pump, args=(u, c), daemon=True)
    t.start()
    pump(c, u)
    t.join()
    c.close()
    u.close()


lport = [0]
lsock = [None]


def listen():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", lport[0]))
    s.listen(16)
    lport[0] = s.getsockname()[1]
    lsock[0] = s

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=relay_one, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


def cut_all():
    with lock:
        for c, u in conns:
            for x in (c, u):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        conns.clear()


listen()
domains["gate"] = {"url": "http://127.0.0.1:%d/" % lport[0],
                   "token_file": "js.token"}
with open(os.path.join(cfg, "domains.json"), "w") as f:
    json.dump(domains, f)
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("y = 5")]
nbformat.write(nb, os.path.join(sroot, "gate.ipynb"))

w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-g.log"))
sc, _, err = w.call("connect_notebook", path="gate.ipynb", domain="gate")
expect(not err, "connect through the relay", sc)
h = sc["notebook_handle"]
c0 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source":
     "import time\nfor i in range(6):\n    print(i, flush=True)\n"
     "    time.sleep(0.5)\nprint('end', y)"}])
long_cell = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[c0],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "a first run", sc)

# 1. The interrupt refused: said so, and the run goes on to its end.
mode[0] = "refuse"
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[long_cell],
                    wait_secs=1)
eid = sc["execution_id"]
sc, _, err = w.call("interrupt_kernel", notebook_handle=h)
expect(err and sc["error"]["code"] == "refused" and
       "the run goes on" in sc["error"]["message"] and
       "403" in sc["error"]["message"], "a refused interrupt", sc)
expect(served["refused"] == 1, "the server was asked", served)
mode[0] = "pass"
sc, _, err = w.call("get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=30, timeout=60)
expect(sc["status"] == "done" and "end 5" in json.dumps(sc),
       "the run went on to its end", sc)
ok("interrupt_kernel refused by the server (403): said refused; the run "
   "went on to its end")

# 2. A proxy restart mid-run: cut, refused, 404 and 302, then back.
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[long_cell],
                    wait_secs=1)
eid = sc["execution_id"]
t0 = time.time()
lsock[0].close()
cut_all()
time.sleep(0.7)             # connections refused meanwhile
mode[0] = "noroute"
listen()
time.sleep(1.5)             # 404s and 302s meanwhile
mode[0] = "pass"
sc, _, err = w.call("get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=30, timeout=60)
text = json.dumps(sc)
expect(sc["status"] == "done" and "end 5" in text, "the run across a proxy "
       "restart", sc)
expect(served["noroute"] >= 1, "the kernel was asked about meanwhile", served)
sc, _, err = w.call("edit_cells", notebook_handle=h, run=True, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "print(y * 2)"}])
expect(not err and "10" in json.dumps(sc), "the same kernel, y kept", sc)
ok("a proxy restart mid-run (cut, refused, 404 and 302 for 2.2 s): the run "
   "completed in %.1f s, the same kernel kept y" % (time.time() - t0))
w.call("disconnect_notebook", notebook_handle=h)
w.close()
print("done")
