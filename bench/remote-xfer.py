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
its idle RSS.  Run by bench/remote-xfer.sh.
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

w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))
sc, _, err = w.call("create_notebook", path="xfer.ipynb", domain="js")
assert not err, sc
nb = sc["notebook_handle"]
pid = w.proc.pid


def cpu():
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def status(key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def ours_up():
    sc, _, err = w.call("upload_file", notebook_handle=nb, host_path=src,
                        kernel_path="ours.bin", overwrite=True, timeout=3600)
    assert not err and sc["sha256"] == want, sc


def ours_down():
    sc, _, err = w.call("download_file", notebook_handle=nb,
                        kernel_path="ours.bin",
                        host_path=os.path.join(tmp, "ours.back"),
                        overwrite=True, timeout=3600)
    assert not err and sc["sha256"] == want, sc


def curl_up():
    subprocess.run(["curl", "-sfS", "-o", "/dev/null", "-X", "PUT",
                    "-H", auth, "-H", "Content-Type: application/json",
                    "--data-binary", "@" + body,
                    url + "api/contents/curl.bin"], check=True)


def curl_down():
    subprocess.run(["curl", "-sfS", "-H", auth, "-o",
                    os.path.join(tmp, "curl.back"),
                    url + "files/ours.bin"], check=True)


idle = status("VmRSS")
peak = {"up": 0, "down": 0}
times = {k: [] for k in ("ours_up", "curl_up", "ours_down", "curl_down")}
cpus = {k: [] for k in times}
ours_up()	# the first upload: ours.bin exists for every download
for i in range(rounds):
    for kind in ("up", "down"):
        pair = ("ours", "curl") if i % 2 == 0 else ("curl", "ours")
        for who in pair:
            if who == "curl" and kind == "up" and body is None:
                continue
            if who == "ours":
                with open("/proc/%d/clear_refs" % pid, "w") as f:
                    f.write("5")
            c0 = cpu() if who == "ours" else sum(os.times()[2:4])
            t0 = time.perf_counter()
            globals()["%s_%s" % (who, kind)]()
            times["%s_%s" % (who, kind)].append(time.perf_counter() - t0)
            cpus["%s_%s" % (who, kind)].append(
                (cpu() if who == "ours" else sum(os.times()[2:4])) - c0)
            if who == "ours":
                peak[kind] = max(peak[kind], status("VmHWM"))
w.close()


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


print("%d MiB on %s, %d alternating rounds; worker idle VmRSS %.1f MB" % (
    mib, url, rounds, idle / 1e6))
for kind in ("up", "down"):
    o = times["ours_" + kind]
    c = times["curl_" + kind]
    line = ("%-4s runtimed %.3f s (%.0f MB/s, worker CPU %.2f s), peak "
            "VmHWM %.1f MB (+%.1f)" % (
                kind, statistics.median(o), size / statistics.median(o) / 1e6,
                statistics.median(cpus["ours_" + kind]), peak[kind] / 1e6,
                (peak[kind] - idle) / 1e6))
    if c:
        r = [ci / oi for ci, oi in zip(c, o)]
        line += ("; curl %.3f s (CPU %.2f s); ratio %.2fx (IQR %.2f-%.2f, "
                 "min %.2f)" % (statistics.median(c),
                                statistics.median(cpus["curl_" + kind]),
                                statistics.median(r), q(r, 0.25), q(r, 0.75),
                                min(r)))
    print(line)
if os.environ.get("XFER_TRACE"):  # the worker's stderr
    print(open(os.path.join(tmp, "worker.log")).read())
