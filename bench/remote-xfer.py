# SPDX-License-Identifier: ISC
"""remote-xfer.py: upload_file and download_file of one file through
runtimed (the real worker on a notebook of a Jupyter Server domain)
against curl on the same file and server, in alternating rounds
(docs/decisions/020): curl's download is one GET of files/PATH to a file,
its upload one PUT of the whole file as the contents API's base64 JSON,
made before the clock starts (a PUT over the server's max_body_size,
512 MiB of JSON, 384 MiB of file, is refused: above that curl's upload
is not run).  Ratios are curl's time over runtimed's (throughput, higher
is better; issue 38's goal is at least 0.8).  The worker's peak RSS
(VmHWM, reset through clear_refs before each transfer) is printed over
its idle RSS.  With XFER_BASE=DIR (or several, space-separated),
DIR/runtimed-mcp-worker (another build's) runs in the same rounds too,
named by DIR's last component, against the same file and server: a
change's before and after, both against curl.  XFER_KINDS=down (or up)
runs only those rounds.  Run by bench/remote-xfer.sh (an https url
comes with its CA's file, for curl).
"""
import base64
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "notebooks"))
from mcp import Worker  # noqa: E402

builddir, tmp, sroot, url, token = sys.argv[1:6]
mib = int(sys.argv[6]) if len(sys.argv) > 6 else 64
rounds = int(sys.argv[7]) if len(sys.argv) > 7 else 7
cacert = sys.argv[8] if len(sys.argv) > 8 and sys.argv[8] else None
tls = ["--cacert", cacert] if cacert else []
size = mib << 20
auth = "Authorization: token " + token

src = os.path.join(tmp, "xfer.bin")
h = hashlib.sha256()
with open(src, "wb") as f:
    left = size
    while left:
        b = os.urandom(min(left, 1 << 22))
        h.update(b)
        f.write(b)
        left -= len(b)
want = h.hexdigest()
body = None
if size <= 384 << 20:
    body = os.path.join(tmp, "xfer.json")
    with open(src, "rb") as f, open(body, "wb") as o:
        o.write(b'{"type":"file","format":"base64","content":"')
        o.write(base64.b64encode(f.read()))
        o.write(b'"}')

workers = {"ours": builddir}
for d in os.environ.get("XFER_BASE", "").split():
    workers[os.path.basename(os.path.normpath(d))] = d
W = {}
for who, d in workers.items():
    w = Worker(d, dict(os.environ), os.path.join(tmp, who + ".log"))
    sc, _, err = w.call("create_notebook", path=who + ".ipynb", domain="js")
    assert not err, sc
    W[who] = (w, sc["notebook_handle"])


def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def status(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def up(who):
    w, nb = W[who]
    sc, _, err = w.call("upload_file", notebook_handle=nb, host_path=src,
                        kernel_path=who + ".bin", overwrite=True,
                        timeout=3600)
    assert not err and sc["sha256"] == want, sc


def down(who):
    w, nb = W[who]
    sc, _, err = w.call("download_file", notebook_handle=nb,
                        kernel_path="ours.bin",
                        host_path=os.path.join(tmp, who + ".back"),
                        overwrite=True, timeout=3600)
    assert not err and sc["sha256"] == want, sc


def curl_up():
    subprocess.run(["curl", "-sfS"] + tls + ["-o", "/dev/null", "-X", "PUT",
                    "-H", auth, "-H", "Content-Type: application/json",
                    "--data-binary", "@" + body,
                    url + "api/contents/curl.bin"], check=True)


def curl_down():
    subprocess.run(["curl", "-sfS"] + tls + ["-H", auth, "-o",
                    os.path.join(tmp, "curl.back"),
                    url + "files/ours.bin"], check=True)


def run(who, kind):
    if who == "curl":
        (curl_up if kind == "up" else curl_down)()
    else:
        (up if kind == "up" else down)(who)


pids = {who: W[who][0].proc.pid for who in W}
idle = {who: status(pids[who], "VmRSS") for who in W}
peak = {(who, kind): 0 for who in W for kind in ("up", "down")}
order = list(W) + ["curl"]
times = {(who, kind): [] for who in order for kind in ("up", "down")}
cpus = {k: [] for k in times}
kinds = os.environ.get("XFER_KINDS", "up down").split()
up("ours")	# the first upload: ours.bin exists for every download
for i in range(rounds):
    for kind in kinds:
        # Each contestant first, middle and last in turn.
        k = i % len(order)
        for who in order[k:] + order[:k]:
            if who == "curl" and kind == "up" and body is None:
                continue
            if who != "curl":
                with open("/proc/%d/clear_refs" % pids[who], "w") as f:
                    f.write("5")
            c0 = cpu(pids[who]) if who != "curl" else sum(os.times()[2:4])
            t0 = time.perf_counter()
            run(who, kind)
            times[who, kind].append(time.perf_counter() - t0)
            cpus[who, kind].append((cpu(pids[who]) if who != "curl" else
                                    sum(os.times()[2:4])) - c0)
            if who != "curl":
                peak[who, kind] = max(peak[who, kind],
                                      status(pids[who], "VmHWM"))
for w, _ in W.values():
    w.close()


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


print("%d MiB on %s, %d alternating rounds; load average %s" % (
    mib, url, rounds, " ".join(open("/proc/loadavg").read().split()[:3])))
for kind in kinds:
    c = times["curl", kind]
    if c:
        print("%-4s curl     %.3f s (%.3f-%.3f, CPU %.2f s)" % (
            kind, statistics.median(c), min(c), max(c),
            statistics.median(cpus["curl", kind])))
    for who in W:
        o = times[who, kind]
        line = ("%-4s %-8s %.3f s (%.3f-%.3f; %.0f MB/s, worker CPU %.2f s), "
                "peak VmHWM %.1f MB (+%.1f over idle)" % (
                    kind, who if who != "ours" else "runtimed",
                    statistics.median(o), min(o), max(o),
                    size / statistics.median(o) / 1e6,
                    statistics.median(cpus[who, kind]), peak[who, kind] / 1e6,
                    (peak[who, kind] - idle[who]) / 1e6))
        if c:
            r = [ci / oi for ci, oi in zip(c, o)]
            line += ("; ratio %.2fx curl (IQR %.2f-%.2f, min %.2f)" % (
                statistics.median(r), q(r, 0.25), q(r, 0.75), min(r)))
        print(line)
if os.environ.get("XFER_TRACE"):  # the workers' stderr
    for who in W:
        print(open(os.path.join(tmp, who + ".log")).read())
