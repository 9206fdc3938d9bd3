# SPDX-License-Identifier: ISC
"""remote-probe.py: a 1 KiB upload_file right after restart_kernel (the
kernel asked whether it sees the server's contents) and the next one (the
answer kept), in alternating rounds; medians with min and max.

usage: remote-probe.py BUILDDIR STATEDIR ROUNDS (bench/remote-probe.sh)
"""
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "notebooks"))
from mcp import Worker  # noqa: E402

builddir, tmp, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
assert not err, sc
h = sc["notebook_handle"]
cell = sc["cells"][0]["cell_id"]
src = os.path.join(tmp, "k.bin")
with open(src, "wb") as f:
    f.write(os.urandom(1024))


def run():
    sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell],
                        wait_secs=50, timeout=120)
    assert not err and sc["status"] == "done", sc


def upload(name):
    t = time.monotonic()
    sc, _, err = w.call("upload_file", notebook_handle=h, host_path=src,
                        kernel_path=name, timeout=60)
    assert not err and "kernel_sees" not in sc, sc
    return time.monotonic() - t


probed, kept = [], []
run()
for i in range(rounds):
    sc, _, err = w.call("restart_kernel", notebook_handle=h, timeout=60)
    assert not err, sc
    run()
    probed.append(upload("p%d.bin" % i))
    kept.append(upload("k%d.bin" % i))


def says(v):
    return "median %.1f ms (min %.1f, max %.1f)" % (
        1000 * statistics.median(v), 1000 * min(v), 1000 * max(v))


print("%d rounds, 1 KiB upload_file" % rounds)
print("  the kernel probed (first after a restart): " + says(probed))
print("  its answer kept (the next one):            " + says(kept))
w.close()
