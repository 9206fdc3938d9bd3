# SPDX-License-Identifier: ISC
"""remote.py: notebooks and kernels on a real Jupyter Server through the
real worker and daemon (tests/remote/remote.sh starts the server and
sets the environment).  Open, read, edit, run, interrupt, restart, save,
a change on the server detected at save, create, the server's
kernelspecs, a notebook_id + domain target.

usage: remote.py BUILDDIR STATEDIR SERVERROOT [quick]
(quick: open, run, interrupt and restart only)
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

import nbformat  # noqa: E402

builddir, tmp, sroot = sys.argv[1:4]
quick = sys.argv[4:] == ["quick"]


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))

# Open: the notebook is the server's copy.
sc, text, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect_notebook on the domain", sc)
h = sc["notebook_handle"]
nid = sc["notebook_id"]
expect(sc["path"] == "nb.ipynb" and len(sc["cells"]) == 1 and
       sc.get("domain") == "js", "connect", sc)
cell0 = sc["cells"][0]["cell_id"]
ok("connect_notebook {path, domain}: the server's notebook")

# A wrong domain name and a bad path are refused before any effect.
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="nope")
expect(err and sc["error"]["code"] == "invalid_argument" and
       "no domain nope" in sc["error"]["message"], "unknown domain", sc)
sc, _, err = w.call("connect_notebook", path="../etc/passwd", domain="js")
expect(err and sc["error"]["code"] == "invalid_argument", "a climbing path",
       sc)
ok("unknown domain and a path climbing out are refused")

# Edit and run: the kernel is the server's.
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "import os\nprint(os.getcwd(), x + 1)"}])
expect(not err, "edit", sc)
cell1 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell0, cell1],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "run", sc)
out1 = sc["cells"][1]["outputs"][0]["text"]
expect(out1.strip().endswith("43") and out1.startswith(sroot),
       "the cell ran in the server's root", sc)
ok("run_cells on the server's kernel: outputs, cwd the notebook's dir")

# all:true and stale:true: the daemon picks the cells of a server's
# notebook as it queues the run (decision 082), in notebook order.
sc, _, err = w.call("run_cells", notebook_handle=h, all=True, wait_secs=50,
                    timeout=120)
expect(not err and sc["status"] == "done" and
       [c["cell_id"] for c in sc["cells"]] == [cell0, cell1], "run all", sc)
sc, text, err = w.call("run_cells", notebook_handle=h, stale=True)
expect(not err and sc["cells"] == [] and "no code cell is stale" in text,
       "nothing stale", sc)
ok("run_cells all:true and stale:true on a server's notebook")

# The server has our kernel.
sc, _, err = w.call("get_kernel_info", notebook_handle=h)
expect(not err and sc.get("state") in ("idle", "busy"), "kernel info", sc)
ok("get_kernel_info: %s" % sc.get("state"))

# What the local agent does, on the server's kernel (issue 38): the
# variables (the kernelspec's debugger, over the control channel), and
# the silent execute that prints them where the debugger is not taken.
sc, _, err = w.call("list_variables", notebook_handle=h)
expect(not err and "x" in [v["name"] for v in sc["variables"]],
       "list_variables on a server's kernel", sc)
via = sc.get("via")
sc, _, err = w.call("complete_code", notebook_handle=h, code="os.getc")
expect(not err and any("getcwd" in m["text"] for m in sc["matches"]),
       "complete_code on a server's kernel", sc)
sc, _, err = w.call("inspect_code", notebook_handle=h, code="os.getcwd")
expect(not err and sc.get("found"), "inspect_code on a server's kernel", sc)
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "name = input('who? ')\nprint('hello', name)"}])
ci = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[ci],
                    wait_secs=20)
expect(sc.get("status") == "input_required", "input() asks", sc)
eid = sc["execution_id"]
sc, _, err = w.call("send_input", notebook_handle=h, execution_id=eid,
                    value="server")
expect(not err, "send_input", sc)
sc, _, err = w.call("get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=20)
expect(sc.get("status") == "done" and "hello server" in str(sc),
       "the answer reached input()", sc)
w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "delete", "cell_id": ci}])
ok("list_variables (via %s), complete_code, inspect_code, input() with "
   "send_input on the server's kernel" % via)

# A kernel whose debugger is not asked (xeus-python): the silent execute
# prints the list, read from its stdout (no file of ours on a server).
sc, _, err = w.call("list_kernels", notebook_handle=h)
if not err and "xpython" in [k["name"] for k in sc["kernels"]]:
    sc, _, err = w.call("create_notebook", path="xpy.ipynb", kernel="xpython",
                        domain="js")
    expect(not err, "an xpython notebook on the server", sc)
    hx = sc["notebook_handle"]
    sc, _, err = w.call("edit_cells", notebook_handle=hx, edits=[
        {"op": "insert", "after": "TOP", "source": "zz = [1, 2, 3]"}])
    sc, _, err = w.call("run_cells", notebook_handle=hx,
                        cell_ids=[sc["cells"][0]["cell_id"]], wait_secs=50,
                        timeout=120)
    expect(not err and sc["status"] == "done", "a run on xpython", sc)
    sc, _, err = w.call("list_variables", notebook_handle=hx)
    expect(not err and "zz" in [v["name"] for v in sc["variables"]],
           "list_variables on a server's xpython kernel", sc)
    expect(sc.get("via") == "execute", "by a silent execute", sc)
    ok("list_variables (via %s) on a server's xpython kernel: read from its "
       "stdout" % sc.get("via"))
    w.call("disconnect_notebook", notebook_handle=hx)
    os.unlink(os.path.join(sroot, "xpy.ipynb"))

# notebook_id + domain targets the attachment; another domain does not.
sc, _, err = w.call("inspect_notebook", notebook_id=nid, domain="js")
expect(not err and sc["total_cells"] == 2, "id + domain", sc)
sc, _, err = w.call("inspect_notebook", notebook_id=nid)
expect(err and sc["error"]["code"] == "not_attached", "id without domain",
       sc)
ok("notebook_id + domain targets it; the id alone (local) does not")

# Interrupt a long cell.
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "import time\nfor i in range(600):\n    time.sleep(0.1)"}])
cell2 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell2],
                    wait_secs=2)
eid = sc["execution_id"]
expect(sc["status"] in ("running", "queued"), "long run started", sc)
t0 = time.time()
sc, _, err = w.call("interrupt_kernel", notebook_handle=h)
expect(not err, "interrupt", sc)
sc, _, err = w.call("get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=30, timeout=60)
expect(sc["status"] in ("interrupted", "error"), "interrupted run", sc)
ok("interrupt_kernel: the run ended %s in %.1f s" % (sc["status"],
                                                     time.time() - t0))

# Restart: the kernel forgets x and answers again.
sc, _, err = w.call("restart_kernel", notebook_handle=h, timeout=120)
expect(not err and "old_kernel" not in sc, "restart (the old kernel gone)",
       sc)
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM",
     "source": "print('x' in globals())"}])
cell3 = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell3],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done" and
       sc["cells"][0]["outputs"][0]["text"].strip() == "False",
       "run after restart", sc)
ok("restart_kernel: a fresh kernel runs cells again")
if quick:
    w.close()
    print("done")
    sys.exit(0)

# Save: the server's file is what we have, byte-stable nbformat.
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "save", sc)
nb = nbformat.read(os.path.join(sroot, "nb.ipynb"), 4)
expect(len(nb.cells) == 4 and nb.cells[1].outputs[0]["text"].endswith("43\n"),
       "saved content", nb.cells)
ok("save_notebook: the contents API wrote it")

# Someone changes it on the server while we have unsaved edits: the
# watch merges the change into the room (issue 39) against the copy both
# last agreed on, and a plain save writes both sides.
srv = os.path.join(sroot, "nb.ipynb")


def room_until(pred, what, secs=6):
    end = time.time() + secs
    while True:
        sc, _, err = w.call("inspect_notebook", notebook_handle=h,
                            view="source")
        if not err and pred(sc):
            return sc
        expect(time.time() < end, what, sc)
        time.sleep(0.1)


w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "edit", "cell_id": cell0, "source": "x = 7 * 6\nprint(x)"}])
time.sleep(1.1)
nb.cells.append(nbformat.v4.new_markdown_cell("from the server"))
nbformat.write(nb, srv)
sc = room_until(lambda sc: sc["total_cells"] == 5,
                "the server's new cell merged into the dirty room")
expect(sc["dirty"] and sc["cells"][0]["source"] == "x = 7 * 6\nprint(x)" and
       sc["cells"][-1]["source"] == "from the server" and
       not sc.get("conflicts"), "both sides kept", sc)
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "a save after the merge needs no force", sc)
nb = nbformat.read(srv, 4)
expect(nb.cells[0].source == "x = 7 * 6\nprint(x)" and
       nb.cells[-1].source == "from the server" and len(nb.cells) == 5,
       "the server's copy has both", nb.cells)
ok("a change on the server is merged into unsaved edits; a save writes both")

# The same cell changed on both sides: a typed conflict, the server's
# copy not overwritten until edit_cells resolves it.
w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "edit", "cell_id": cell0, "source": "x = 1"}])
time.sleep(1.1)
nb.cells[0].source = "x = 2"
nbformat.write(nb, srv)
sc = room_until(lambda sc: sc.get("conflicts"), "a conflict is reported")
expect(sc["conflicts"][0]["cell_id"] == cell0 and
       sc["conflicts"][0]["kind"] == "both_edited" and
       sc["conflicts"][0]["disk"]["source"] == "x = 2", "the conflict", sc)
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(err and sc["error"]["code"] == "file_changed_on_disk" and
       "conflict" in sc["error"]["message"], "a save refused", sc)
expect(nbformat.read(srv, 4).cells[0].source == "x = 2",
       "the server's version kept", None)
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "resolve", "cell_id": cell0, "take": "room"}])
expect(not err, "resolve", sc)
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "save once resolved", sc)
expect(nbformat.read(srv, 4).cells[0].source == "x = 1", "the room's kept",
       None)
ok("the same cell changed on both: a conflict, resolved by one op, saved")

# A clean room: the server's copy moves its last cell to the top and
# deletes another; the room follows and stays clean.
nb = nbformat.read(srv, 4)
ids = [c.id for c in nb.cells]
gone = ids[2]
nb.cells = [nb.cells[-1]] + [c for c in nb.cells[:-1] if c.id != gone]
time.sleep(1.1)
nbformat.write(nb, srv)
want = [c.id for c in nb.cells]
sc = room_until(lambda sc: [c["cell_id"] for c in sc["cells"]] == want,
                "the server's move and delete in the clean room")
expect(not sc["dirty"], "a clean room merged stays clean", sc)
# A dirty room: the room deletes a cell while the server edits another.
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "delete", "cell_id": want[-1]}])
expect(not err, "delete in the room", sc)
nb = nbformat.read(srv, 4)
nb.cells[0].source = "edited on the server"
time.sleep(1.1)
nbformat.write(nb, srv)
sc = room_until(lambda sc: sc["cells"][0]["source"] ==
                "edited on the server", "the server's edit merged")
expect(sc["dirty"] and want[-1] not in [c["cell_id"] for c in sc["cells"]],
       "the room's delete kept beside the server's edit", sc)
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "save", sc)
nb = nbformat.read(srv, 4)
expect([c.id for c in nb.cells] == want[:-1] and
       nb.cells[0].source == "edited on the server", "both saved", nb.cells)
ok("a move and a delete there into a clean room; a delete here beside "
   "an edit there, saved")

# Kernelspecs are the server's; select one of them, refuse another.
sc, _, err = w.call("list_kernels", notebook_handle=h)
expect(not err and "python3" in [k["name"] for k in sc["kernels"]],
       "list_kernels on the remote notebook", sc)
sc, _, err = w.call("select_kernel", notebook_handle=h, kernel="nosuch")
expect(err and sc["error"]["code"] == "kernel_unavailable" and
       "python3" in sc["error"]["message"], "select an unknown kernel", sc)
ok("select_kernel: the server's kernelspecs are the choice")

# Create on the server.
sc, _, err = w.call("create_notebook", path="sub/new.ipynb", domain="js")
expect(err, "create in a missing directory fails", sc)
os.mkdir(os.path.join(sroot, "sub"))
sc, _, err = w.call("create_notebook", path="sub/new.ipynb", domain="js")
expect(not err and sc["path"] == "sub/new.ipynb", "create", sc)
expect(os.path.exists(os.path.join(sroot, "sub", "new.ipynb")),
       "created on the server", None)
h2 = sc["notebook_handle"]
sc, _, err = w.call("edit_cells", notebook_handle=h2, run=True, edits=[
    {"op": "insert", "after": "TOP", "source": "import os; print(os.getcwd())"}])
expect(not err, "edit+run on the new notebook", sc)
sc, _, err = w.call("create_notebook", path="sub/new.ipynb", domain="js")
expect(err and "exists" in sc["error"]["message"], "create over a file", sc)
ok("create_notebook {path, domain}: made on the server; not over a file")

# The creating PUT's 201 recorded last_modified: a plain save works
# (issue 38: it was file_changed_on_disk until force), and so does a
# save of a notebook the server named.
sc, _, err = w.call("save_notebook", notebook_handle=h2)
expect(not err and sc.get("saved", True), "save after create", sc)
nb3 = nbformat.read(os.path.join(sroot, "sub", "new.ipynb"), 4)
expect(len(nb3.cells) == 1 and "getcwd" in nb3.cells[0].source,
       "the created notebook saved", nb3.cells)
sc, _, err = w.call("create_notebook", domain="js")
expect(not err, "create without a path", sc)
h3 = sc["notebook_handle"]
w.call("edit_cells", notebook_handle=h3, edits=[
    {"op": "insert", "after": "TOP", "source": "1 + 1"}])
sc, _, err = w.call("save_notebook", notebook_handle=h3)
expect(not err, "save after a create the server named", sc)
ok("create_notebook then save_notebook: saved without force")

# Files: 5 MB up and down, hashes checked at both ends.
import hashlib  # noqa: E402
import shutil  # noqa: E402
big = os.path.join(tmp, "big.bin")
with open(big, "wb") as f:
    f.write(os.urandom(5 * 1024 * 1024))
want = hashlib.sha256(open(big, "rb").read()).hexdigest()
t0 = time.time()
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=big,
                    kernel_path="big.bin", timeout=120)
expect(not err and sc["sha256"] == want and sc["bytes"] == 5 << 20,
       "upload", sc)
up = time.time() - t0
got = hashlib.sha256(open(os.path.join(sroot, "big.bin"), "rb").read())
expect(got.hexdigest() == want, "the server's file", None)
expect(not [n for n in os.listdir(sroot) if n.startswith("rtd-")],
       "no temporary left on the server", os.listdir(sroot))
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=big,
                    kernel_path="big.bin")
expect(err and "overwrite" in sc["error"]["message"], "no overwrite", sc)
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=big,
                    kernel_path="big.bin", overwrite=True, timeout=120)
expect(not err and sc["replaced"], "overwrite", sc)
# The kernel sees it where the notebook is.
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source":
     "import hashlib\nprint(hashlib.sha256(open('big.bin','rb').read())"
     ".hexdigest())"}])
sc, _, err = w.call("run_cells", notebook_handle=h,
                    cell_ids=[sc["cells"][0]["cell_id"]], wait_secs=50,
                    timeout=120)
expect(sc["cells"][0]["outputs"][0]["text"].strip() == want,
       "the kernel read the upload", sc)
back = os.path.join(tmp, "back.bin")
t0 = time.time()
sc, _, err = w.call("download_file", notebook_handle=h, kernel_path="big.bin",
                    host_path=back, timeout=120)
expect(not err and sc["sha256"] == want, "download", sc)
down = time.time() - t0
expect(hashlib.sha256(open(back, "rb").read()).hexdigest() == want,
       "the downloaded file", None)
sc, _, err = w.call("download_file", notebook_handle=h, kernel_path="big.bin",
                    host_path=back)
expect(err and "overwrite" in sc["error"]["message"], "no overwrite down", sc)
sc, _, err = w.call("download_file", notebook_handle=h,
                    kernel_path="../x", host_path=back + "2")
expect(err and sc["error"]["code"] == "invalid_argument", "a climbing path",
       sc)
ok("upload_file/download_file: 5 MiB, sha256 both ends (%.2f s up, %.2f s "
   "down); no overwrite unless asked; no temporary left" % (up, down))

# 64 MiB both ways: sixteen chunked PUTs and a streamed GET, the
# worker's memory bounded all along (its peak RSS, VmHWM, reset through
# clear_refs first), SHA-256 at both ends, no temporary left on either.
MIB64 = 64 << 20
large = os.path.join(tmp, "large.bin")
hl64 = hashlib.sha256()
with open(large, "wb") as f:
    for _ in range(16):
        b = os.urandom(4 << 20)
        hl64.update(b)
        f.write(b)
want64 = hl64.hexdigest()


def vm(key):
    for line in open("/proc/%d/status" % w.proc.pid):
        if line.startswith(key + ":"):
            return int(line.split()[1]) << 10
    return 0


def file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b)
    return h.hexdigest()


os.makedirs(os.path.join(sroot, "sub2"))
asan = "libasan" in open("/proc/%d/maps" % w.proc.pid).read()
idle = vm("VmRSS")
peaks = []
for up in (True, False):
    with open("/proc/%d/clear_refs" % w.proc.pid, "w") as f:
        f.write("5")
    if up:
        sc, _, err = w.call("upload_file", notebook_handle=h,
                            host_path=large, kernel_path="sub2/large.bin",
                            timeout=300)
    else:
        sc, _, err = w.call("download_file", notebook_handle=h,
                            kernel_path="sub2/large.bin",
                            host_path=large + ".back", timeout=300)
    peaks.append(vm("VmHWM") - idle)
    expect(not err and sc["bytes"] == MIB64 and sc["sha256"] == want64,
           "64 MiB " + ("up" if up else "down"), sc)
    # ASan's quarantine keeps freed memory: no bound to check there.
    expect(peaks[-1] < 64e6 or asan, "the worker's peak RSS over its "
           "idle (%.1f MB) under 64 MB" % (peaks[-1] / 1e6), None)
expect(file_sha(os.path.join(sroot, "sub2", "large.bin")) == want64,
       "the server's 64 MiB file", None)
expect(file_sha(large + ".back") == want64, "the downloaded 64 MiB", None)


def held(name):
    """The worker's descriptors of a file named name (deleted or not)."""
    fds, out = "/proc/%d/fd" % w.proc.pid, []
    for n in os.listdir(fds):
        try:
            if os.path.basename(os.readlink(os.path.join(fds, n))).startswith(
                    name):
                out.append(n)
        except OSError:
            pass    # closed meanwhile
    return out


# Again over the last: the file replaced is held open only until the
# answer (its freeing comes after it), then closed; the new one in place.
sc, _, err = w.call("download_file", notebook_handle=h,
                    kernel_path="sub2/large.bin", host_path=large + ".back",
                    overwrite=True, timeout=300)
expect(not err and sc["replaced"] and sc["sha256"] == want64,
       "64 MiB down over the last", sc)
t0 = time.time()
while held("large.bin.back"):
    expect(time.time() - t0 < 5, "the replaced file is still held",
           held("large.bin.back"))
    time.sleep(0.05)
expect(file_sha(large + ".back") == want64, "the 64 MiB in place", None)
left = os.listdir(os.path.join(sroot, "sub2"))
expect("large.bin" in left and not [n for n in left if n.startswith("rtd-")],
       "no temporary left on the server", left)
expect(not [n for n in os.listdir(tmp) if n.startswith(".rtd-")],
       "no temporary left here", os.listdir(tmp))
ok("transfers: 64 MiB both ways in chunks, sha256 both ends, worker peak "
   "RSS +%.1f/+%.1f MB over idle, no temporary left" % (
       peaks[0] / 1e6, peaks[1] / 1e6))

# An empty file and one of a single chunk: one plain PUT each.
for n, data in (("empty.bin", b""), ("small.bin", os.urandom(1000))):
    with open(os.path.join(tmp, n), "wb") as f:
        f.write(data)
    sc, _, err = w.call("upload_file", notebook_handle=h,
                        host_path=os.path.join(tmp, n), kernel_path=n)
    expect(not err and sc["bytes"] == len(data) and
           open(os.path.join(sroot, n), "rb").read() == data, "up " + n, sc)
    sc, _, err = w.call("download_file", notebook_handle=h, kernel_path=n,
                        host_path=os.path.join(tmp, n + ".back"))
    expect(not err and sc["sha256"] == hashlib.sha256(data).hexdigest() and
           open(os.path.join(tmp, n + ".back"), "rb").read() == data,
           "down " + n, sc)
    os.unlink(os.path.join(sroot, n))
ok("transfers: an empty file and 1000 bytes both ways")

# Over the cap (WORKER_FILES_MAX, 1 GiB) by one byte, both ways: refused
# before any byte moves, naming no temporary file (sparse files: cheap).
CAP = 1 << 30
edge = os.path.join(tmp, "edge.bin")
with open(edge, "wb") as f:
    f.truncate(CAP + 1)
sc, _, err = w.call("upload_file", notebook_handle=h, host_path=edge,
                    kernel_path="over.bin")
expect(err and sc["error"]["code"] == "invalid_argument" and
       "1073741824-byte" in sc["error"]["message"] and
       "rtd-" not in sc["error"]["message"], "an upload over the cap", sc)
expect(not os.path.exists(os.path.join(sroot, "over.bin")) and
       not [n for n in os.listdir(sroot) if n.startswith("rtd-")],
       "nothing written on the server", os.listdir(sroot))
with open(os.path.join(sroot, "over.bin"), "wb") as f:
    f.truncate(CAP + 1)
sc, _, err = w.call("download_file", notebook_handle=h, kernel_path="over.bin",
                    host_path=edge + ".over", timeout=120)
expect(err and sc["error"]["code"] == "invalid_argument" and
       "nothing was fetched" in sc["error"]["message"] and
       not os.path.exists(edge + ".over") and
       not [n for n in os.listdir(tmp) if n.startswith(".rtd-")],
       "a download over the cap", sc)
for n in ("over.bin", "sub2/large.bin"):
    os.unlink(os.path.join(sroot, n))
shutil.rmtree(os.path.join(sroot, "sub2"))
for n in (edge, large, large + ".back"):
    os.unlink(n)
ok("transfers: one byte over the 1 GiB cap refused first, both ways")

# The local domain: a copy beside a local notebook.
lnb = os.path.join(tmp, "local.ipynb")
sc, _, err = w.call("create_notebook", path=lnb)
expect(not err, "a local notebook", sc)
hl = sc["notebook_handle"]
sc, _, err = w.call("upload_file", notebook_handle=hl, host_path=big,
                    kernel_path="copy.bin")
expect(not err and sc["kernel_path"] == os.path.join(tmp, "copy.bin") and
       sc["sha256"] == want, "local upload", sc)
os.symlink("/etc/passwd", os.path.join(tmp, "link.bin"))
sc, _, err = w.call("download_file", notebook_handle=hl, kernel_path="copy.bin",
                    host_path=os.path.join(tmp, "link.bin"), overwrite=True)
expect(err and "symbolic link" in sc["error"]["message"],
       "never written through a symlink", sc)
ok("the local domain: a copy on this machine; a symlink is never written "
   "through")

w.close()
print("done")
