# SPDX-License-Identifier: ISC
"""resume.py: transfers cut mid-way go on where they were (decision 092).
A relay of our own between the worker and the real Jupyter Server cuts
chosen connections: a download's GET closed after N bytes (and the relay
then "restarting" for OUTAGE s: connections closed at once, then 503s),
one reset (RST), one cut while the file changes on the server (begun
again from zero, once); an upload's chunk cut before the server had it
(sent again), one cut after the server appended it (its reply lost: the
next one), its read-back cut (resumed with a Range).  Then the real
configurable-http-proxy in front of the server, killed mid-download and
started again.  Each: the SHA-256 at both ends, and the bytes fetched
after the cut fewer than the file (resumed, not begun again).

usage: resume.py BUILDDIR STATEDIR SERVERROOT [CHP]
"""
import hashlib
import json
import os
import socket
import subprocess
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
chp = sys.argv[4] if len(sys.argv) > 4 else ""
cfg = os.environ["RUNTIMED_CONFIG_DIR"]
MiB = 1 << 20
OUTAGE = 0.35       # configurable-http-proxy's restart

domains = json.load(open(os.path.join(cfg, "domains.json")))
port = int(domains["js"]["url"].rsplit(":", 1)[1].strip("/"))

# The connections relayed: dicts of method, path, range, down (bytes of
# the reply passed on), cut (the rule applied).
log = []
# Rules: [match(method, path, n), action, arg, then, outage]; the first
# that matches is used once; then (if there) is called before the
# connection is closed, outage (default OUTAGE) is how long the relay is
# "restarting" after it.  n counts the connections with that method and
# path so far.  Actions: "down" N (pass N bytes of the reply, then
# close), "rst" N (the same, then a reset), "up" N (pass N bytes of the
# request, then close both: the server never has it whole), "noreply"
# (the server answers, the client gets nothing), "pause" N (pass N bytes,
# then call then() before closing), "norange" (the request's Range
# dropped: a server that does not do ranges).
rules = []
down_until = [0.0]
lock = threading.Lock()


def head_of(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = c.recv(65536)
        if not b:
            return None
        buf += b
    return buf


def relay_one(c):
    buf = head_of(c)
    if buf is None:
        c.close()
        return
    lines = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    rng = [v.split(":", 1)[1].strip() for v in lines[1:]
           if v.lower().startswith("range:")]
    # "Restarting": at first nobody listens, then a 503 (the proxy up,
    # its target not yet).
    left = down_until[0] - time.time()
    if left > 0:
        if left > OUTAGE / 2:
            c.close()
        else:
            c.sendall(b"HTTP/1.1 503 Service Unavailable\r\n"
                      b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            c.close()
        return
    with lock:
        n = sum(1 for e in log if e["method"] == method and
                e["path"] == path)
        rule = None
        for r in rules:
            if r[0](method, path, n):
                rule = r
                rules.remove(r)
                break
        entry = {"method": method, "path": path,
                 "range": rng[0] if rng else None, "down": 0,
                 "cut": rule[1] if rule else None}
        log.append(entry)
    u = socket.create_connection(("127.0.0.1", port))
    action = rule[1] if rule else None
    if action == "up":
        n = rule[2]
        u.sendall(buf[:n])
        n -= min(n, len(buf))
        while n > 0:
            b = c.recv(min(n, 65536))
            if not b:
                break
            u.sendall(b)
            n -= len(b)
        for x in (c, u):
            x.shutdown(socket.SHUT_RDWR)
            x.close()
        down_until[0] = time.time() + OUTAGE
        return
    if action == "norange":
        head, rest = buf.split(b"\r\n\r\n", 1)
        head = b"\r\n".join(x for x in head.split(b"\r\n")
                            if not x.lower().startswith(b"range:"))
        buf = head + b"\r\n\r\n" + rest
        action = None
    u.sendall(buf)
    t = threading.Thread(target=pump, args=(c, u), daemon=True)
    t.start()
    if action is None:
        while True:
            try:
                b = u.recv(65536)
                if not b:
                    break
                c.sendall(b)
            except OSError:
                break
            entry["down"] += len(b)
    elif action == "noreply":
        while u.recv(65536):
            pass
    else:
        n = rule[2]
        while n > 0:
            b = u.recv(min(n, 65536))
            if not b:
                break
            c.sendall(b)
            entry["down"] += len(b)
            n -= len(b)
    if rule is not None and len(rule) > 3 and rule[3] is not None:
        rule[3]()
    if action == "rst":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     b"\x01\x00\x00\x00\x00\x00\x00\x00")
    for x in (c, u):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        x.close()
    if action in ("down", "rst", "noreply"):
        down_until[0] = time.time() + (rule[4] if len(rule) > 4 else OUTAGE)


def serve(lsock):
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=relay_one, args=(c,), daemon=True).start()


lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(16)
rport = lsock.getsockname()[1]
threading.Thread(target=serve, args=(lsock,), daemon=True).start()
domains["cut"] = {"url": "http://127.0.0.1:%d/" % rport,
                  "token_file": "js.token"}
with open(os.path.join(cfg, "domains.json"), "w") as f:
    json.dump(domains, f)

for name in ("nb.ipynb", "nb2.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nbformat.write(nb, os.path.join(sroot, name))

w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-r.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="cut",
                    timeout=60)
expect(not err, "connect through the relay", sc)
h = sc["notebook_handle"]


def files_get(name):
    return lambda m, p, n: m == "GET" and p.endswith("/files/" + name)


def after_cut(name):
    """Bytes of name's GETs passed on after the first one cut."""
    es = [e for e in log if e["method"] == "GET" and
          e["path"].endswith("/files/" + name)]
    i = next(i for i, e in enumerate(es) if e["cut"])
    return es[i]["down"], sum(e["down"] for e in es[i + 1:]), es


def resumed_at(e):
    """The first byte a Range asked for, or None."""
    r = e["range"]
    if r is None or not r.startswith("bytes=") or not r.endswith("-"):
        return None
    return int(r[6:-1])


def make(name, size):
    data = os.urandom(size)
    with open(os.path.join(sroot, name), "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def download(name, want, size, what, **extra):
    d = os.path.join(tmp, "got-" + name)
    os.mkdir(d)
    dst = os.path.join(d, name)
    t0 = time.time()
    sc, text, err = w.call("download_file", notebook_handle=h,
                           kernel_path=name, host_path=dst, timeout=120)
    dt = time.time() - t0
    expect(not err, what + ": download_file", sc)
    expect(sc["sha256"] == want and sc["bytes"] == size, what + ": hash", sc)
    got = hashlib.sha256(open(dst, "rb").read()).hexdigest()
    expect(got == want, what + ": the file here", got)
    for k, v in extra.items():
        expect(sc.get(k) == v, "%s: %s" % (what, k), sc)
    expect("resumed" in text, what + ": the text says resumed", text)
    expect(os.listdir(d) == [name], what + ": no temporary left here",
           os.listdir(d))
    return sc, dt


# A download cut after 12 MiB (a FIN before Content-Length), the relay
# then down for OUTAGE s.
SIZE = 40 * MiB
want = make("dl.bin", SIZE)
rules.append([files_get("dl.bin"), "down", 12 * MiB])
sc, dt = download("dl.bin", want, SIZE, "closed", resumed=1)
cutn, rest, es = after_cut("dl.bin")
expect(rest < SIZE, "closed: fetched after the cut < the file",
       [cutn, rest, es])
# From all that came before the close (its headers aside): none of it
# read and then dropped with the connection.
expect(resumed_at(es[-1]) is not None and
       cutn - 4096 < resumed_at(es[-1]) < cutn,
       "closed: the rest asked with a Range, from all that came", es)
ok("download cut at %d of %d bytes (closed; the relay down %.2f s): "
   "resumed with %s, %d bytes after the cut, sha256 both ends (%.2f s)"
   % (cutn, SIZE, OUTAGE, es[-1]["range"], rest, dt))

# The same, reset.
log.clear()
want = make("rst.bin", SIZE)
rules.append([files_get("rst.bin"), "rst", 20 * MiB])
sc, dt = download("rst.bin", want, SIZE, "reset", resumed=1)
cutn, rest, es = after_cut("rst.bin")
expect(rest < SIZE, "reset: fetched after the cut < the file",
       [cutn, rest, es])
ok("download reset at %d bytes: resumed, %d bytes after the cut (%.2f s)"
   % (cutn, rest, dt))


# Cut while the file is replaced on the server (same size, later
# mtime): not spliced, begun again from zero, once.
def change():
    data = os.urandom(16 * MiB)
    with open(os.path.join(sroot, "chg.bin"), "wb") as f:
        f.write(data)
    st = os.stat(os.path.join(sroot, "chg.bin"))
    os.utime(os.path.join(sroot, "chg.bin"), (st.st_atime, st.st_mtime + 5))
    newsum[0] = hashlib.sha256(data).hexdigest()


newsum = [None]
log.clear()
old = make("chg.bin", 16 * MiB)
rules.append([files_get("chg.bin"), "pause", 4 * MiB, change])
sc, text, err = w.call("download_file", notebook_handle=h,
                       kernel_path="chg.bin",
                       host_path=os.path.join(tmp, "chg.bin"), timeout=120)
expect(not err and sc.get("restarted") is True and
       sc["sha256"] == newsum[0] != old, "changed: begun again", sc)
expect(hashlib.sha256(open(os.path.join(tmp, "chg.bin"), "rb").read())
       .hexdigest() == newsum[0], "changed: the file here", None)
ok("download cut while the file changed: begun again from zero, the new "
   "file's sha256")

# A server that answers the rest with the whole file (200): begun again
# from zero, once.
log.clear()
want = make("nr.bin", 16 * MiB)
rules.append([files_get("nr.bin"), "down", 4 * MiB])
rules.append([lambda m, p, n: files_get("nr.bin")(m, p, n) and n == 1,
              "norange", 0])
sc, text, err = w.call("download_file", notebook_handle=h,
                       kernel_path="nr.bin",
                       host_path=os.path.join(tmp, "nr.bin"), timeout=120)
expect(not err and sc.get("restarted") is True and sc["sha256"] == want and
       "begun again" in text, "no ranges: begun again", [sc, log])
expect(hashlib.sha256(open(os.path.join(tmp, "nr.bin"), "rb").read())
       .hexdigest() == want, "no ranges: the file here", None)
expect([e["cut"] for e in log if e["path"].endswith("/files/nr.bin")] ==
       ["down", "norange", None], "no ranges: cut, 200 refused, again",
       log)
ok("a server answering a Range with the whole file: begun again from "
   "zero once, sha256 both ends")

# An upload of 6 chunks: its first question (is the target there?) cut,
# the answer after the outage a 404 (not there: go on, not a proxy's
# 404 to wait out); the third chunk cut before the server had it whole,
# the (then) fifth PUT's reply lost after the server appended it, the
# read-back cut after 5 MiB.
log.clear()
USIZE = 24 * MiB
up = os.path.join(tmp, "up.bin")
data = os.urandom(USIZE)
with open(up, "wb") as f:
    f.write(data)
uwant = hashlib.sha256(data).hexdigest()


def put_n(k):
    return lambda m, p, n: m == "PUT" and "/rtd-" in p and n == k


rules.append([lambda m, p, n: m == "GET" and
              p.endswith("/api/contents/up.bin?content=0"), "down", 0])
rules.append([put_n(2), "up", 1 * MiB])
rules.append([put_n(4), "noreply", 0])
rules.append([lambda m, p, n: m == "GET" and "/files/rtd-" in p,
              "down", 5 * MiB])
t0 = time.time()
sc, text, err = w.call("upload_file", notebook_handle=h, host_path=up,
                       kernel_path="up.bin", timeout=120)
dt = time.time() - t0
expect(not err and sc["sha256"] == uwant and sc["bytes"] == USIZE,
       "upload", [sc, log])
expect(sc.get("resumed") == 3, "upload: resumed 3 times", [sc, log])
expect(hashlib.sha256(open(os.path.join(sroot, "up.bin"), "rb").read())
       .hexdigest() == uwant, "upload: the server's file", None)
expect(not [n for n in os.listdir(sroot) if n.startswith("rtd-")],
       "upload: no temporary left on the server", os.listdir(sroot))
expect([e for e in log if e["cut"] == "down" and
        e["path"].endswith("/api/contents/up.bin?content=0")],
       "upload: its first question cut", log)
puts = [e for e in log if e["method"] == "PUT"]
expect(len(puts) == 7, "upload: 6 chunks and one sent again", puts)
backs = [e for e in log if e["method"] == "GET" and "/files/rtd-" in e["path"]]
expect(len(backs) == 2 and resumed_at(backs[1]) is not None and
       0 < resumed_at(backs[1]) < 5 * MiB, "upload: the read-back resumed",
       backs)
ok("upload of 6 chunks: its target's 404 after a cut taken as not there, "
   "one cut before the server had it (sent again), "
   "one whose reply was lost (not sent again), the read-back resumed; "
   "sha256 both ends (%.2f s)" % dt)

# Refused, not guessed: an upload whose temporary, after a cut chunk,
# holds neither the bytes before it nor those with it (someone else
# wrote it meanwhile); the temporary is removed.
def spoil():
    tmps = [n for n in os.listdir(sroot) if n.startswith("rtd-")]
    with open(os.path.join(sroot, tmps[0]), "ab") as f:
        f.write(b"x" * 1000)


log.clear()
rules.append([put_n(1), "noreply", 0, spoil])
sc, text, err = w.call("upload_file", notebook_handle=h, host_path=up,
                       kernel_path="up2.bin", timeout=120)
expect(err and sc["error"]["code"] == "notebook_unavailable" and
       "neither" in sc["error"]["message"] and
       "upload it again" in sc["error"]["message"], "spoiled: refused", sc)
t0 = time.time()
while [n for n in os.listdir(sroot) if n.startswith("rtd-")] and \
        time.time() - t0 < 10:
    time.sleep(0.1)
expect(not [n for n in os.listdir(sroot) if n.startswith("rtd-")] and
       not os.path.exists(os.path.join(sroot, "up2.bin")),
       "spoiled: nothing left on the server", os.listdir(sroot))
ok("upload whose temporary changed during a cut: refused (%s), its "
   "temporary removed" % sc["error"]["message"])

# A server that does not come back within the window: a typed error
# saying so, nothing left here (the window is 15 s).
log.clear()
rules.append([files_get("dl.bin"), "down", 8 * MiB, None, 30])
never = os.path.join(tmp, "never")
os.mkdir(never)
t0 = time.time()
sc, text, err = w.call("download_file", notebook_handle=h,
                       kernel_path="dl.bin",
                       host_path=os.path.join(never, "never.bin"), timeout=60)
dt = time.time() - t0
down_until[0] = 0
expect(err and sc["error"]["code"] == "notebook_unavailable" and
       "within 15 s" in sc["error"]["message"] and
       "try again" in sc["error"]["message"], "not back: refused", sc)
expect(os.listdir(never) == [], "not back: nothing left here",
       os.listdir(never))
expect(10 < dt < 25, "not back: within the window", dt)
ok("a server not back within the window: %s (%.1f s)" %
   (sc["error"]["message"], dt))

# The real configurable-http-proxy in front of the relay (which only
# counts here): killed mid-download, started again on its port.
if chp:
    ppt = socket.socket()
    ppt.bind(("127.0.0.1", 0))
    pport = ppt.getsockname()[1]
    ppt.close()
    apt = socket.socket()
    apt.bind(("127.0.0.1", 0))
    aport = apt.getsockname()[1]
    apt.close()
    env = dict(os.environ, CONFIGPROXY_AUTH_TOKEN="resume-test")
    plog = open(os.path.join(tmp, "chp.log"), "ab")

    def chp_start():
        return subprocess.Popen(
            [chp, "--ip", "127.0.0.1", "--port", str(pport),
             "--api-ip", "127.0.0.1", "--api-port", str(aport),
             "--default-target", "http://127.0.0.1:%d" % rport],
            env=env, stdout=plog, stderr=plog)

    def chp_wait():
        t0 = time.time()
        while time.time() - t0 < 20:
            try:
                socket.create_connection(("127.0.0.1", pport), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("FAIL: configurable-http-proxy did not listen")

    proxy = [chp_start()]
    chp_wait()
    restart = [0.0]

    def kill_proxy():
        t0 = time.time()
        proxy[0].kill()
        proxy[0].wait()
        time.sleep(OUTAGE)
        proxy[0] = chp_start()
        chp_wait()
        restart[0] = time.time() - t0

    domains["chp"] = {"url": "http://127.0.0.1:%d/" % pport,
                      "token_file": "js.token"}
    with open(os.path.join(cfg, "domains.json"), "w") as f:
        json.dump(domains, f)
    try:
        sc, _, err = w.call("connect_notebook", path="nb2.ipynb",
                            domain="chp", timeout=60)
        expect(not err, "connect through configurable-http-proxy", sc)
        h = sc["notebook_handle"]
        log.clear()
        want = make("chp.bin", SIZE)
        rules.append([files_get("chp.bin"), "pause", 16 * MiB, kill_proxy])
        sc, dt = download("chp.bin", want, SIZE, "proxy restart", resumed=1)
        cutn, rest, es = after_cut("chp.bin")
        expect(rest < SIZE, "proxy restart: fetched after the cut < the "
               "file", [cutn, rest, es])
        ok("configurable-http-proxy killed at %d of %d bytes, back in "
           "%.2f s: the download resumed, %d bytes after the cut, sha256 "
           "both ends (%.2f s)" % (cutn, SIZE, restart[0], rest, dt))
    finally:
        proxy[0].kill()
        proxy[0].wait()
else:
    print("skip: no configurable-http-proxy", flush=True)
rc = w.close()
wlog = open(os.path.join(tmp, "worker-r.log"), errors="replace").read()
expect(rc == 0 and "AddressSanitizer" not in wlog and
       "runtime error:" not in wlog, "the worker ended cleanly (%s)" % rc,
       wlog[-3000:])
