# SPDX-License-Identifier: ISC
"""tls.py: notebooks and kernels on a Jupyter Server over https through
the real worker, daemon and runtimed-agent-remote (tests/remote/tls.sh
starts the server with its certificate and writes domains.json).

- "noca" (no ca_file, a private CA): connect_notebook is tls_unverified,
  naming the domain, OpenSSL's reason and ca_file; nothing changes.
- "js" (ca_file): 1+1 runs, an edit is saved on the server, 5 MiB go
  up and down with SHA-256 checked at both ends.

- mtls (tests/remote/mtls.sh: the server asks for a client certificate):
  "nocert" (no cert_file) is tls_unverified, saying the server asks for
  one and naming cert_file; "js" (with it) as above.

usage: tls.py BUILDDIR STATEDIR SERVERROOT [other|mtls]
(other: the server's certificate is for another name: js refused too)
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]
other = sys.argv[4:] == ["other"]
mtls = sys.argv[4:] == ["mtls"]
nbfile = os.path.join(sroot, "nb.ipynb")


def snapshot():
    st = os.stat(nbfile)
    return (open(nbfile, "rb").read(), st.st_mtime_ns,
            sorted(os.listdir(sroot)))


def refused(domain, reason, w):
    before = snapshot()
    sc, _, err = w.call("list_notebooks")
    rooms = sorted(n["notebook_id"] for n in sc["notebooks"])
    sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain=domain)
    expect(err and sc["error"]["code"] == "tls_unverified",
           "%s: tls_unverified" % domain, sc)
    msg = sc["error"]["message"]
    expect("domain %s:" % domain in msg and reason in msg,
           "%s: the domain and OpenSSL's reason named" % domain, sc)
    sc, _, err = w.call("list_notebooks")
    expect(not err and not sc["attachments"] and
           sorted(n["notebook_id"] for n in sc["notebooks"]) == rooms,
           "%s: no notebook opened or attached" % domain, sc)
    expect(snapshot() == before, "%s: the server's files unchanged" % domain)
    return msg


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))

if other:
    refused("js", "is not for localhost (hostname mismatch)", w)
    ok("a certificate for another name: tls_unverified, nothing changed")
    w.close()
    sys.exit(0)

if mtls:
    msg = refused("nocert", "the server asks for a client certificate", w)
    expect('"cert_file"' in msg and '"key_file"' in msg,
           "the options named", msg)
    ok("no cert_file for a server that asks: tls_unverified with the reason "
       "and the options, nothing changed")
else:
    msg = refused("noca", "did not verify (unable to get local issuer "
                  "certificate)", w)
    expect('"ca_file"' in msg, "the option named", msg)
    ok("no ca_file for a private CA: tls_unverified with the reason and the "
       "option, nothing changed")

sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err and sc.get("domain") == "js", "connect over https", sc)
h = sc["notebook_handle"]
cell0 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "1 + 1"}])
expect(not err, "edit", sc)
cell1 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell0, cell1],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "run", sc)
outs = sc["cells"][1]["outputs"]
expect(outs and outs[0].get("data", {}).get("text/plain") == "2",
       "1 + 1 is 2", sc)
ok("run_cells 1 + 1 on the server's kernel over TLS")

sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "save over https", sc)
expect("1 + 1" in open(nbfile, encoding="utf-8").read(),
       "the edit is in the server's file")
ok("edit and save_notebook over TLS")

big = os.path.join(tmp, "big.bin")
with open(big, "wb") as f:
    f.write(os.urandom(5 << 20))
want = hashlib.sha256(open(big, "rb").read()).hexdigest()
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=big,
                    kernel_path="big.bin", timeout=120)
expect(not err and sc["sha256"] == want and sc["bytes"] == 5 << 20,
       "upload over https", sc)
expect("kernel_sees" not in sc, "the kernel sees the server's files", sc)
got = hashlib.sha256(open(os.path.join(sroot, "big.bin"), "rb").read())
expect(got.hexdigest() == want, "the server's file")
back = os.path.join(tmp, "back.bin")
sc, _, err = w.call("download_file", notebook_handle=h, kernel_path="big.bin",
                    host_path=back, timeout=120)
expect(not err and sc["sha256"] == want and sc["bytes"] == 5 << 20,
       "download over https", sc)
expect(hashlib.sha256(open(back, "rb").read()).hexdigest() == want,
       "the downloaded file")
ok("upload_file/download_file: 5 MiB over TLS, sha256 both ends")

w.call("disconnect_notebook", notebook_handle=h)
w.close()
