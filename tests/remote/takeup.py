# SPDX-License-Identifier: ISC
"""takeup.py: a transfer whose worker was killed mid-way is taken up by
the next call for it, in a new worker (decision 098).  A relay of our own
between the worker and the real Jupyter Server counts the bytes of each
connection and kills the worker (SIGKILL) after N bytes of a chosen one.
A 64 MiB download killed at 16 MiB, then the same call in a new worker:
the same SHA-256, fewer bytes than the file moved (a Range from what was
kept); the file changed on the server between the calls: begun from zero,
saying so; a tampered leftover (a symbolic link where the temporary was,
a record naming another host_path) is never written through; a record
older than a day is swept with its temporary by the next transfer.  An
upload killed at its fifth chunk of 16 sends the 12 left in the next
call; the local file touched between the calls sends all again.  Last,
through runtimed-mcp as an agent sees it: the proxy's worker killed
mid-download (the call answered outcome_unknown), connect_notebook and
download_file again on the worker the proxy started: taken up.

usage: takeup.py BUILDDIR STATEDIR SERVERROOT
"""
import glob
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import MCPError, Worker  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from relay import pump  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

import nbformat  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]
cfg = os.environ["RUNTIMED_CONFIG_DIR"]
records = os.path.join(os.environ["RUNTIMED_STATE_DIR"], "transfers")
MiB = 1 << 20
SIZE = 64 * MiB

domains = json.load(open(os.path.join(cfg, "domains.json")))
port = int(domains["js"]["url"].rsplit(":", 1)[1].strip("/"))

# Each connection relayed: method, path, range, down (reply bytes passed).
log = []
# kill[0]: (a predicate on method and path, N): the worker is killed
# after N bytes of the first such reply, then the connection closed.
kill = [None]
lock = threading.Lock()
cur = [None]    # the worker


def relay_one(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = c.recv(65536)
        if not b:
            c.close()
            return
        buf += b
    lines = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    rng = [v.split(":", 1)[1].strip() for v in lines[1:]
           if v.lower().startswith("range:")]
    with lock:
        entry = {"method": method, "path": path,
                 "range": rng[0] if rng else None, "down": 0}
        log.append(entry)
        rule = kill[0] if kill[0] and kill[0][0](method, path) else None
        if rule:
            kill[0] = None
    u = socket.create_connection(("127.0.0.1", port))
    u.sendall(buf)
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    left = rule[1] if rule else -1
    while left != 0:
        try:
            b = u.recv(65536 if left < 0 else min(left, 65536))
            if not b:
                break
            c.sendall(b)
        except OSError:
            break
        entry["down"] += len(b)
        if left > 0:
            left -= len(b)
    if rule:
        cur[0].proc.send_signal(signal.SIGKILL)
        cur[0].proc.wait()
    for x in (c, u):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        x.close()


def serve(lsock):
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=relay_one, args=(c,), daemon=True).start()


lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(16)
threading.Thread(target=serve, args=(lsock,), daemon=True).start()
domains["cut"] = {"url": "http://127.0.0.1:%d/" % lsock.getsockname()[1],
                  "token_file": "js.token"}
with open(os.path.join(cfg, "domains.json"), "w") as f:
    json.dump(domains, f)

nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 1")]
nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                             "display_name": "Python 3"}
nbformat.write(nb, os.path.join(sroot, "nb.ipynb"))
nwork = [0]


def worker():
    """A new worker, connected to the notebook through the relay."""
    nwork[0] += 1
    w = Worker(builddir, dict(os.environ),
               os.path.join(tmp, "worker-t%d.log" % nwork[0]))
    sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="cut",
                        timeout=60)
    expect(not err, "connect through the relay", sc)
    cur[0] = w
    return w, sc["notebook_handle"]


def make(name, size):
    data = os.urandom(size)
    with open(os.path.join(sroot, name), "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def files_get(name):
    return lambda m, p: m == "GET" and p.endswith("/files/" + name)


def gets(name):
    return [e for e in log if e["method"] == "GET" and
            e["path"].endswith("/files/" + name)]


def killed_download(name, dst, at=16 * MiB):
    """download_file of name to dst, its worker killed after at bytes."""
    w, h = worker()
    kill[0] = (files_get(name), at)
    try:
        w.call("download_file", notebook_handle=h, kernel_path=name,
               host_path=dst, timeout=120)
        expect(False, "killed: the worker answered", None)
    except MCPError:
        pass
    d = os.path.dirname(dst)
    left = [n for n in os.listdir(d) if n.startswith(".rtd-")]
    expect(len(left) == 1 and not os.path.exists(dst),
           "killed: its temporary left", os.listdir(d))
    recs = glob.glob(os.path.join(records, "*.json"))
    expect(len(recs) == 1, "killed: its record left", recs)
    return os.path.join(d, left[0]), recs[0]


def again(name, dst):
    w, h = worker()
    n = len(log)
    sc, text, err = w.call("download_file", notebook_handle=h,
                           kernel_path=name, host_path=dst, timeout=120)
    rc = w.close()
    expect(rc == 0, "the worker ended cleanly", rc)
    return sc, text, err, [e for e in log[n:] if e["method"] == "GET" and
                           e["path"].endswith("/files/" + name)]


def clean(d, name):
    expect(os.listdir(d) == [name], "no temporary left here", os.listdir(d))
    expect(glob.glob(os.path.join(records, "*")) == [], "no record left",
           os.listdir(records))


# Killed at 16 MiB of 64, the same call again in a new worker.
os.mkdir(os.path.join(tmp, "a"))
dst = os.path.join(tmp, "a", "big.bin")
want = make("big.bin", SIZE)
killed_download("big.bin", dst)
first = gets("big.bin")[0]["down"]
sc, text, err, es = again("big.bin", dst)
expect(not err and sc["sha256"] == want and sc["bytes"] == SIZE,
       "taken up: the download", [sc, text])
expect(hashlib.sha256(open(dst, "rb").read()).hexdigest() == want,
       "taken up: the file here", None)
expect(sc.get("resumed") == 1 and "earlier call" in text and
       not sc.get("restarted"), "taken up: says so", [sc, text])
expect(len(es) == 1 and es[0]["range"] is not None and
       es[0]["range"].startswith("bytes=") and
       4 * MiB <= int(es[0]["range"][6:-1]) <= first,
       "taken up: a Range from what was kept", es)
expect(es[0]["down"] < SIZE, "taken up: fewer bytes than the file", es)
clean(os.path.join(tmp, "a"), "big.bin")
ok("download of %d bytes killed after %d: the next call (a new worker) "
   "asked %s and moved %d bytes; sha256 both ends, nothing left (%s)"
   % (SIZE, first, es[0]["range"], es[0]["down"], text))

# The file changed on the server between the calls: from zero, saying so.
os.mkdir(os.path.join(tmp, "b"))
dst = os.path.join(tmp, "b", "chg.bin")
make("chg.bin", SIZE)
killed_download("chg.bin", dst)
want = make("chg.bin", SIZE)
st = os.stat(os.path.join(sroot, "chg.bin"))
os.utime(os.path.join(sroot, "chg.bin"), (st.st_atime, st.st_mtime + 5))
sc, text, err, es = again("chg.bin", dst)
expect(not err and sc["sha256"] == want and sc.get("restarted") is True and
       "changed on the server" in text and not sc.get("resumed"),
       "changed: begun from zero, saying so", [sc, text])
expect(len(es) == 1 and es[0]["range"] is None and es[0]["down"] > SIZE,
       "changed: all of it asked", es)
expect(hashlib.sha256(open(dst, "rb").read()).hexdigest() == want,
       "changed: the new file here", None)
clean(os.path.join(tmp, "b"), "chg.bin")
ok("the file changed on the server between the calls: %s" % text)

# A symbolic link where the temporary was: never written through.
os.mkdir(os.path.join(tmp, "c"))
dst = os.path.join(tmp, "c", "big.bin")
victim = os.path.join(tmp, "victim")
with open(victim, "wb") as f:
    f.write(b"not yours\n")
want = hashlib.sha256(open(os.path.join(sroot, "big.bin"), "rb").read()) \
    .hexdigest()
t, _ = killed_download("big.bin", dst)
os.unlink(t)
os.symlink(victim, t)
sc, text, err, es = again("big.bin", dst)
expect(not err and sc["sha256"] == want and es[0]["range"] is None,
       "a link for the temporary: from zero", [sc, text, es])
expect(open(victim, "rb").read() == b"not yours\n",
       "a link for the temporary: not written through", None)
expect(os.path.islink(t) and sorted(os.listdir(os.path.join(tmp, "c"))) ==
       sorted(["big.bin", os.path.basename(t)]),
       "a link for the temporary: left as it is", os.listdir(tmp + "/c"))
os.unlink(t)
clean(os.path.join(tmp, "c"), "big.bin")
ok("a symbolic link where the temporary was: not followed, the download "
   "from zero")

# A record naming another host_path: ignored, removed; the temporary it
# belonged to swept as ours.
os.mkdir(os.path.join(tmp, "d"))
dst = os.path.join(tmp, "d", "big.bin")
other = os.path.join(tmp, "other.bin")
t, rec = killed_download("big.bin", dst)
r = json.load(open(rec))
r["host_path"] = other
with open(rec, "w") as f:
    json.dump(r, f)
sc, text, err, es = again("big.bin", dst)
expect(not err and sc["sha256"] == want and es[0]["range"] is None,
       "a record of another path: from zero", [sc, text, es])
expect(not os.path.exists(other), "a record of another path: not written",
       None)
clean(os.path.join(tmp, "d"), "big.bin")
ok("a record naming another host_path: ignored and removed, the "
   "download from zero, the old temporary swept")

# The kept bytes changed here between the calls (a byte of the first
# MiB): hashed again, not as recorded: from zero, saying so.
os.mkdir(os.path.join(tmp, "h"))
dst = os.path.join(tmp, "h", "big.bin")
t, rec = killed_download("big.bin", dst)
with open(t, "r+b") as f:
    f.seek(MiB)
    b = f.read(1)
    f.seek(MiB)
    f.write(bytes([b[0] ^ 1]))
sc, text, err, es = again("big.bin", dst)
expect(not err and sc["sha256"] == want and sc.get("restarted") is True and
       "not the bytes it was" in text and es[0]["range"] is None,
       "kept bytes changed: from zero, saying so", [sc, text, es])
clean(os.path.join(tmp, "h"), "big.bin")
ok("the kept bytes changed here between the calls: %s" % text)

# A record that is not one (torn, or written by someone else): removed,
# the download from zero.
os.mkdir(os.path.join(tmp, "f"))
dst = os.path.join(tmp, "f", "big.bin")
t, rec = killed_download("big.bin", dst)
with open(rec, "wb") as f:
    f.write(b'{"v": 1, "kind": "download", "tmp": "../../x\x00')
sc, text, err, es = again("big.bin", dst)
expect(not err and sc["sha256"] == want and es[0]["range"] is None,
       "a record that is not one: from zero", [sc, text, es])
clean(os.path.join(tmp, "f"), "big.bin")
ok("a record that is not JSON: removed, the download from zero")

# A record older than a day: swept, with its temporary, by the next
# transfer with a server (of another file).
os.mkdir(os.path.join(tmp, "e"))
dst = os.path.join(tmp, "e", "big.bin")
t, rec = killed_download("big.bin", dst)
old = time.time() - 25 * 3600
os.utime(rec, (old, old))
want = make("small.bin", 1 * MiB)
sc, text, err, es = again("small.bin", os.path.join(tmp, "small.bin"))
expect(not err and sc["sha256"] == want, "another download", [sc, text])
expect(os.listdir(os.path.join(tmp, "e")) == [] and
       glob.glob(os.path.join(records, "*")) == [],
       "a record a day old: swept with its temporary",
       [os.listdir(os.path.join(tmp, "e")), os.listdir(records)])
ok("a record a day old: its temporary and itself removed by the next "
   "transfer")

# An upload of 16 chunks killed as its fifth is sent, then the same call
# in a new worker: it asks the temporary's size and sends the rest.
up = os.path.join(tmp, "up.bin")
data = os.urandom(SIZE)
with open(up, "wb") as f:
    f.write(data)
uwant = hashlib.sha256(data).hexdigest()


def put_k(k):
    n = [0]

    def pred(m, p):
        if m == "PUT" and "/rtd-" in p:
            n[0] += 1
            return n[0] == k
        return False
    return pred


def server_tmps():
    return [n for n in os.listdir(sroot) if n.startswith("rtd-")]


def killed_upload(name):
    w, h = worker()
    kill[0] = (put_k(5), 0)
    try:
        w.call("upload_file", notebook_handle=h, host_path=up,
               kernel_path=name, timeout=120)
        expect(False, "killed upload: the worker answered", None)
    except MCPError:
        pass
    t = server_tmps()
    expect(len(t) == 1 and
           os.path.getsize(os.path.join(sroot, t[0])) == 16 * MiB,
           "killed upload: 4 chunks in its temporary",
           [(n, os.path.getsize(os.path.join(sroot, n))) for n in t])
    recs = glob.glob(os.path.join(records, "*.json"))
    expect(len(recs) == 1, "killed upload: its record left", recs)
    return t[0], recs[0]


def upload_again(name):
    w, h = worker()
    n = len(log)
    sc, text, err = w.call("upload_file", notebook_handle=h, host_path=up,
                           kernel_path=name, timeout=120)
    rc = w.close()
    expect(rc == 0, "the worker ended cleanly", rc)
    return sc, text, err, [e for e in log[n:] if e["method"] == "PUT"]


def gone_tmps():
    t0 = time.time()
    while server_tmps() and time.time() - t0 < 10:
        time.sleep(0.1)
    return server_tmps() == []


killed_upload("up.bin")
sc, text, err, puts = upload_again("up.bin")
expect(not err and sc["sha256"] == uwant and sc["bytes"] == SIZE and
       sc.get("resumed") == 1 and "earlier call" in text and
       not sc.get("restarted"), "upload taken up", [sc, text])
expect(hashlib.sha256(open(os.path.join(sroot, "up.bin"), "rb").read())
       .hexdigest() == uwant, "upload taken up: the server's file", None)
expect(len(puts) == 12, "upload taken up: the 12 chunks left sent", puts)
expect(gone_tmps() and glob.glob(os.path.join(records, "*")) == [],
       "upload taken up: no temporary, no record", server_tmps())
ok("upload of %d bytes killed at its fifth chunk: the next call (a new "
   "worker) sent the 12 chunks left; sha256 both ends, nothing left (%s)"
   % (SIZE, text))

# The local file touched between the calls: from zero, the old
# temporary deleted.
killed_upload("up2.bin")
st = os.stat(up)
os.utime(up, (st.st_atime, st.st_mtime + 5))
sc, text, err, puts = upload_again("up2.bin")
expect(not err and sc["sha256"] == uwant and sc.get("restarted") is True and
       "local file changed" in text and len(puts) == 16,
       "upload of a touched file: from zero, saying so", [sc, text, puts])
expect(gone_tmps() and glob.glob(os.path.join(records, "*")) == [],
       "upload of a touched file: the old temporary deleted",
       server_tmps())
ok("the local file touched between the calls: %s" % text)

# An upload's record a day old: its temporary on the server deleted by
# the next transfer with that server.
killed_upload("up3.bin")
recs = glob.glob(os.path.join(records, "*.json"))
old = time.time() - 25 * 3600
os.utime(recs[0], (old, old))
sc, text, err, es = again("small.bin", os.path.join(tmp, "small2.bin"))
expect(not err, "another download", [sc, text])
expect(gone_tmps() and glob.glob(os.path.join(records, "*")) == [],
       "an upload's record a day old: its temporary deleted",
       [server_tmps(), os.listdir(records)])
ok("an upload's record a day old: its temporary on the server deleted by "
   "the next transfer")

# Through runtimed-mcp, as an agent sees it: the proxy's worker killed
# mid-download; the proxy starts another, the agent connects again and
# calls download_file again, which the new worker takes up.
pbin = os.path.join(tmp, "proxybin")
os.mkdir(pbin)
os.symlink(os.path.join(builddir, "runtimed-mcp"),
           os.path.join(pbin, "runtimed-mcp-worker"))


def children(pid):
    kids = []
    for ent in os.listdir("/proc"):
        if ent.isdigit():
            try:
                with open("/proc/%s/stat" % ent) as f:
                    st = f.read()
            except OSError:
                continue
            if int(st.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(ent))
    return kids


class Proxied:
    """The proxy as cur[0]: killing it kills its worker."""
    def __init__(self, proxy):
        self.proxy = proxy
        self.proc = self

    def send_signal(self, sig):
        for k in children(self.proxy.proc.pid):
            os.kill(k, sig)
        self.killed = time.time()

    def wait(self):
        pass


p = Worker(pbin, dict(os.environ), os.path.join(tmp, "proxy.log"))
sc, _, err = p.call("connect_notebook", path="nb.ipynb", domain="cut",
                    timeout=60)
expect(not err, "proxy: connect", sc)
os.mkdir(os.path.join(tmp, "g"))
dst = os.path.join(tmp, "g", "big.bin")
want = hashlib.sha256(open(os.path.join(sroot, "big.bin"), "rb").read()) \
    .hexdigest()
cur[0] = Proxied(p)
kill[0] = (files_get("big.bin"), 16 * MiB)
sc, text, err = p.call("download_file", notebook_handle=sc["notebook_handle"],
                       kernel_path="big.bin", host_path=dst, timeout=120)
expect(err and not os.path.exists(dst), "proxy: the first call fails with "
       "its worker", [sc, text])
first = sc.get("error", {}).get("code")
n = len(log)
sc, _, err = p.call("connect_notebook", path="nb.ipynb", domain="cut",
                    timeout=60)
expect(not err, "proxy: connect again", sc)
sc, text, err = p.call("download_file", notebook_handle=sc["notebook_handle"],
                       kernel_path="big.bin", host_path=dst, timeout=120)
es = [e for e in log[n:] if e["method"] == "GET" and
      e["path"].endswith("/files/big.bin")]
expect(not err and sc["sha256"] == want and sc.get("resumed") == 1 and
       "earlier call" in text and len(es) == 1 and es[0]["down"] < SIZE,
       "proxy: the second call taken up", [sc, text, es])
clean(os.path.join(tmp, "g"), "big.bin")
rc = p.close()
expect(rc == 0, "proxy: ended cleanly", rc)
ok("through runtimed-mcp: its worker killed 16 MiB into the download "
   "(the call answered %s), the call again on the new worker asked %s "
   "and moved %d bytes" % (first, es[0]["range"], es[0]["down"]))

for name in ["worker-t%d.log" % i for i in range(1, nwork[0] + 1)] + \
        ["proxy.log"]:
    wlog = open(os.path.join(tmp, name), errors="replace").read()
    expect("AddressSanitizer" not in wlog and "runtime error:" not in wlog,
           "%s: no sanitizer report" % name, wlog[-3000:])
