# SPDX-License-Identifier: ISC
"""gateway.py: a notebook whose kernel runs behind a gateway
(tests/remote/gateway.sh: the domain's server C takes its kernels from
server G, whose working directory is not C's contents).

usage: gateway.py BUILDDIR STATEDIR SERVERROOT GATEWAYROOT
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

builddir, tmp, sroot, groot = sys.argv[1:5]


def roots():
    return (sorted(os.listdir(sroot)), sorted(os.listdir(groot)))


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err and sc.get("domain") == "js", "connect", sc)
h = sc["notebook_handle"]
cell0 = sc["cells"][0]["cell_id"]

small = os.path.join(tmp, "small.bin")
with open(small, "wb") as f:
    f.write(os.urandom(3000))
want = hashlib.sha256(open(small, "rb").read()).hexdigest()

# No kernel yet: nothing to ask; the upload goes on and says so.
sc, text, err = w.call("upload_file", notebook_handle=h, host_path=small,
                       kernel_path="early.bin", timeout=60)
expect(not err and sc["sha256"] == want, "an upload before the kernel", sc)
expect(sc.get("kernel_sees") == "unknown" and sc.get("kernel_sees_why"),
       "not decided, and said so", sc)
expect("not known whether the kernel sees" in text, "said in the text",
       text)
os.unlink(os.path.join(sroot, "early.bin"))
ok("before the kernel started: the upload goes on, saying it was not "
   "decided (%s)" % sc["kernel_sees_why"])

sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell0],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "run", sc)
cwd = sc["cells"][0]["outputs"][0]["text"].strip()
expect(os.path.realpath(cwd) == os.path.realpath(groot),
       "the kernel runs in the gateway's directory", cwd)
ok("the kernel runs behind the gateway, in %s" % cwd)

before = roots()
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=small,
                    kernel_path="up.bin", timeout=60)
expect(err and sc["error"]["code"] == "not_supported",
       "upload refused not_supported", sc)
msg = sc["error"]["message"]
expect("does not see the files of js's contents" in msg and
       "gateway" in msg and "Nothing was transferred" in msg,
       "the reason and what to do", msg)
expect(roots() == before, "nothing left in either root", roots())
ok("upload_file refused: %s" % msg)

sc, _, err = w.call("upload_file", notebook_handle=h, host_path=small,
                    kernel_path="up.bin", timeout=60)
expect(err and sc["error"]["code"] == "not_supported" and
       sc["error"]["message"] == msg, "refused again, from what the kernel "
       "answered before", sc)
expect(roots() == before, "nothing left in either root", roots())
ok("a second upload_file refused the same (the kernel's answer kept)")

back = os.path.join(tmp, "back.bin")
sc, _, err = w.call("download_file", notebook_handle=h,
                    kernel_path="there.bin", host_path=back, timeout=60)
expect(err and sc["error"]["code"] == "not_supported",
       "download refused not_supported", sc)
expect(not os.path.exists(back), "nothing written here")
expect(roots() == before, "nothing left in either root", roots())
ok("download_file refused before any byte moved")

w.call("disconnect_notebook", notebook_handle=h)
w.close()
