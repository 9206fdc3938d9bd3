#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Notebook fidelity through the real suite: runtimed-mcp-worker on stdio,
the daemon it autostarts, real kernels where a case needs one.

usage: fidelity.py BUILDDIR SRCDIR TMPDIR

For every file in tests/notebooks/corpus (see make-corpus.py for the
MANIFEST): connect_notebook, check the warnings or the refusal, save it
unchanged and compare byte for byte with nbformat.write(nbformat.read(f,
4)) (after the manifest's repairs).  Then: one edit changes only that
cell; a cell of an unknown type is listed, refused by run_cells and by a
partial edit, moved, deleted and replaced whole; unknown keys and cells
survive a kill -9 of the daemon while the room is dirty; bytes a kernel
sends that are not UTF-8 reach neither MCP stdout nor the saved file.
"""
import copy
import hashlib
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings

import nbformat

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp  # noqa: E402

BUILD, SRC, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CORPUS = os.path.join(SRC, "tests", "notebooks", "corpus")
WORK = os.path.join(TMP, "work")
DAEMON = os.path.join(BUILD, "runtimed", "runtimed")
os.makedirs(WORK)
logging.getLogger("traitlets").setLevel(logging.CRITICAL)
warnings.simplefilter("ignore")

ENV = dict(os.environ)
ENV.update({
    "RUNTIMED_SOCKET": os.path.join(TMP, "run", "runtimed.sock"),
    "RUNTIMED_STATE_DIR": os.path.join(TMP, "state"),
    "RUNTIMED_LIBEXEC_DIR": os.path.join(BUILD, "runtimed") + ":" + BUILD,
    "RUNTIMED_WARM_POOL": "0",
    "RUNTIMED_KERNEL_KEEPALIVE": "0",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
})
os.makedirs(os.path.join(TMP, "run"), mode=0o700)
failures = []


def check(cond, what):
    if cond:
        print("ok: " + what)
    else:
        print("FAIL: " + what)
        failures.append(what)
    return cond


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def nbformat_bytes(node):
    """What nbformat.write puts in a file."""
    out = io.StringIO()
    nbformat.write(node, out)
    return out.getvalue().encode("utf-8")


def apply(d, repair):
    *path, value = repair
    for k in path[:-1]:
        d = d[k]
    if value == "__delete__":
        del d[path[-1]]
    else:
        d[path[-1]] = value


def expected(path, info, saved):
    """nbformat's bytes for path, with the manifest's repairs."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    for r in info.get("repairs", []):
        apply(d, r)
    node = nbformat.reads(json.dumps(d), as_version=4)
    ours = json.loads(saved)
    for i in info.get("minted", []):
        node.cells[i].id = ours["cells"][i]["id"]
    return nbformat_bytes(node)


def daemon_pid():
    out = subprocess.run([DAEMON, "status"], env=ENV, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("pid "):
            return int(line.split()[1])
    return None


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


W = mcp.Worker(BUILD, ENV, os.path.join(TMP, "worker.err"))


def connect(path):
    return W.call("connect_notebook", path=path)


def corpus():
    with open(os.path.join(CORPUS, "MANIFEST.json")) as f:
        manifest = json.load(f)
    for name in sorted(manifest):
        info = manifest[name]
        path = os.path.join(WORK, name.replace("/", "_"))
        shutil.copyfile(os.path.join(CORPUS, name), path)
        before = sha(path)
        sc, text, err = connect(path)
        if info["kind"] == "refused":
            e = sc.get("error", {})
            check(err and e.get("code") == "notebook_unavailable" and
                  info["error"] in e.get("message", ""),
                  "%s refused: %s" % (name, e.get("message")))
            check(sha(path) == before, "%s untouched" % name)
            try:
                nbformat.read(path, as_version=4)
                refuses = False
            except Exception:
                refuses = True
            check(refuses == info["nbformat"], "%s: nbformat %s it too" % (
                name, "refuses" if refuses else "opens"))
            continue
        if not check(not err, "%s opens" % name):
            print(sc, text)
            continue
        got = [w["message"] for w in sc.get("warnings", [])]
        want = info.get("warnings", [])
        missing = [w for w in want if not any(w in g for g in got)]
        check(not missing and len(got) == len(want),
              "%s warnings %s" % (name, got))
        if want:
            check("warning" in text and all(
                "a save " in line for line in text.splitlines()
                if line.startswith("- ") and "more)" not in line),
                "%s: warnings in the text, each with what a save does" %
                name)
            check(all(w.get("on_save") for w in sc.get("warnings", [])),
                  "%s: every warning says what a save does" % name)
        s, _, err = W.call("save_notebook", notebook_handle=sc[
            "notebook_handle"])
        check(not err, "%s saved" % name)
        with open(path, "rb") as f:
            saved = f.read()
        exp = expected(os.path.join(CORPUS, name), info, saved)
        same = saved == exp
        if not same:
            i = first_diff(saved, exp)
            print("  ours:     %r" % saved[max(0, i - 80):i + 80])
            print("  nbformat: %r" % exp[max(0, i - 80):i + 80])
        check(same, "%s: save == nbformat.write%s (%d bytes)" % (
            name, " after repairs" if info["kind"] == "fixed" else "",
            len(saved)))
        W.call("disconnect_notebook", notebook_handle=sc["notebook_handle"])


def one_edit():
    """An edit of one cell changes only that cell's bytes."""
    path = os.path.join(WORK, "edit-46.ipynb")
    shutil.copyfile(os.path.join(CORPUS, "future-46.ipynb"), path)
    sc, _, err = connect(path)
    h = sc["notebook_handle"]
    _, _, err = W.call("edit_cells", notebook_handle=h, edits=[
        {"op": "edit", "cell_id": "c-result", "source": "{'a': 2}"}])
    check(not err, "edit one cell of a 4.6 notebook")
    W.call("save_notebook", notebook_handle=h)
    node = nbformat.read(os.path.join(CORPUS, "future-46.ipynb"), 4)
    node.cells[2].source = "{'a': 2}"
    with open(path, "rb") as f:
        saved = f.read()
    check(saved == nbformat_bytes(node),
          "one edit: the file differs from the original in that cell only")
    W.call("disconnect_notebook", notebook_handle=h)


def unknown_cells():
    path = os.path.join(WORK, "unknown.ipynb")
    shutil.copyfile(os.path.join(CORPUS, "future-46.ipynb"), path)
    sc, text, _ = connect(path)
    h = sc["notebook_handle"]
    types = {c["cell_id"]: c["cell_type"] for c in sc["cells"]}
    check(types.get("w-1") == "widget" and types.get("w-2") == "canvas",
          "connect summary lists unknown cells with their type")
    check("widget (unknown type" in text, "connect text marks them")
    ins, _, _ = W.call("inspect_notebook", notebook_handle=h, view="all")
    cell = [c for c in ins["cells"] if c["cell_id"] == "w-1"]
    check(cell and cell[0]["cell_type"] == "widget" and
          cell[0].get("source") == "a\nb",
          "inspect_notebook shows the unknown cell, its type and source")
    r, _, err = W.call("run_cells", notebook_handle=h, cell_ids=["w-1"])
    m = r.get("error", {}).get("message", "")
    check(err and r["error"]["code"] == "invalid_argument" and
          "w-1" in m and "widget" in m, "run_cells refuses it: %s" % m)
    for e in ({"op": "edit", "cell_id": "w-1", "source": "x"},
              {"op": "edit", "cell_id": "w-1", "metadata": {"a": 1}},
              {"op": "edit", "cell_id": "w-1", "cell_type": "code"},
              {"op": "replace", "cell_id": "w-1", "old_text": "a",
               "new_text": "z"}):
        r, _, err = W.call("edit_cells", notebook_handle=h, edits=[e])
        check(err and r["error"]["code"] == "invalid_argument" and
              "w-1" in r["error"]["message"],
              "edit_cells refuses a partial edit %s: %s" % (
                  e, r.get("error", {}).get("message")))
    _, _, err = W.call("move_cells", notebook_handle=h, cell_ids=["w-1"],
                       after="TOP")
    check(not err, "move_cells moves it")
    _, _, err = W.call("edit_cells", notebook_handle=h, edits=[
        {"op": "delete", "cell_id": "w-2"},
        {"op": "edit", "cell_id": "w-1", "cell_type": "markdown",
         "source": "now *markdown*", "metadata": {"k": 1}}])
    check(not err, "edit_cells deletes one and replaces the other whole")
    W.call("save_notebook", notebook_handle=h)
    node = nbformat.read(os.path.join(CORPUS, "future-46.ipynb"), 4)
    w1 = [c for c in node.cells if c.id == "w-1"][0]
    node.cells = [w1] + [c for c in node.cells if c.id not in ("w-1", "w-2")]
    node.cells[0] = nbformat.from_dict({
        "cell_type": "markdown", "id": "w-1", "metadata": {"k": 1},
        "source": "now *markdown*"})
    with open(path, "rb") as f:
        saved = f.read()
    check(saved == nbformat_bytes(node),
          "save after move/delete/replace == nbformat; other unknown "
          "keys kept")
    W.call("disconnect_notebook", notebook_handle=h)


def hostile_export():
    """A file's ids and cell types reach an HTML export escaped."""
    path = os.path.join(WORK, "hostile.ipynb")
    shutil.copyfile(os.path.join(CORPUS, "hostile-names.ipynb"), path)
    sc, _, _ = connect(path)
    h = sc["notebook_handle"]
    r, text, err = W.call("export_notebook", notebook_handle=h,
                          format="html")
    html = json.dumps(r) + text
    check(not err and "<script>" not in html and
          'onmouseover="' not in html and "&lt;script&gt;" in html,
          "HTML export escapes a file's cell ids and types")
    W.call("disconnect_notebook", notebook_handle=h)


def restart():
    """Dirty rooms, kill -9: unknown keys, cells and warnings come back."""
    global W
    files = {"restart-46.ipynb": ("future-46.ipynb", "tail", -2),
             "restart-45.ipynb": ("unknown-keys-45.ipynb", "m1", 1)}
    warned = {}
    for name, (orig, cid, _) in files.items():
        path = os.path.join(WORK, name)
        shutil.copyfile(os.path.join(CORPUS, orig), path)
        sc, _, _ = connect(path)
        warned[name] = sc.get("warnings", [])
        edits = [{"op": "edit", "cell_id": cid, "source": "edited"}]
        if orig == "future-46.ipynb":
            edits += [{"op": "delete", "cell_id": "w-2"},
                      {"op": "edit", "cell_id": "w-1", "cell_type": "raw",
                       "source": "whole"}]
        _, _, err = W.call("edit_cells", notebook_handle=sc[
            "notebook_handle"], edits=edits)
        check(not err, "restart: unsaved edits of %s" % name)
    pid = daemon_pid()
    os.kill(pid, signal.SIGKILL)
    W.close()
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except OSError:
            break
        time.sleep(0.1)
    W = mcp.Worker(BUILD, ENV, os.path.join(TMP, "worker.err"))
    for name, (orig, cid, index) in files.items():
        path = os.path.join(WORK, name)
        sc, _, err = connect(path)
        check(not err and sc.get("dirty") is True,
              "restart: %s is recovered dirty after kill -9" % name)
        check(sc.get("warnings", []) == warned[name],
              "restart: %s keeps its %d warnings" % (name,
                                                     len(warned[name])))
        W.call("save_notebook", notebook_handle=sc["notebook_handle"])
        node = nbformat.read(os.path.join(CORPUS, orig), 4)
        node.cells[index].source = "edited"
        if orig == "future-46.ipynb":
            node.cells = [c for c in node.cells if c.id != "w-2"]
            at = [i for i, c in enumerate(node.cells) if c.id == "w-1"][0]
            node.cells[at] = nbformat.from_dict({
                "cell_type": "raw", "id": "w-1", "metadata": {},
                "source": "whole"})
        with open(path, "rb") as f:
            saved = f.read()
        check(saved == nbformat_bytes(node),
              "restart: %s: unknown keys and cells survive the journal" %
              name)
        W.call("disconnect_notebook", notebook_handle=sc["notebook_handle"])


def kernel_bytes():
    """A kernel sends bytes that are not UTF-8 (a lone surrogate that
    jupyter_client encodes with surrogateescape)."""
    have = subprocess.run(["/usr/bin/python3", "-c", "import ipykernel"],
                          capture_output=True).returncode == 0
    if not have:
        print("skip: no ipykernel for the kernel-bytes case")
        return
    path = os.path.join(WORK, "bytes.ipynb")
    sc, _, err = W.call("create_notebook", path=path, timeout=90)
    h = sc["notebook_handle"]
    r, text, err = W.call("edit_cells", timeout=90, notebook_handle=h,
                          run=True, edits=[{
                              "op": "insert", "after": "BOTTOM",
                              "source": "print('caf' + chr(0xdce9) + '!')"}])
    outs = r.get("run", {}).get("cells", [{}])[0].get("outputs", [])
    if not outs:
        # The run may still be going: wait for it.
        ex = r.get("run", {}).get("execution_id")
        r, text, err = W.call("get_results", notebook_handle=h,
                              execution_id=ex, timeout_secs=30, timeout=60)
        outs = r.get("cells", [{}])[0].get("outputs", [])
    check(outs and outs[0].get("text") == "caf\ufffd!\n",
          "kernel bytes reach MCP as U+FFFD: %r" % (outs,))
    W.call("save_notebook", notebook_handle=h)
    with open(path, "rb") as f:
        data = f.read()
    try:
        data.decode("utf-8")
        ok = "caf\ufffd!" in data.decode()
    except UnicodeDecodeError:
        ok = False
    check(ok, "the saved file is UTF-8 with U+FFFD")
    for fmt in ("markdown", "html", "python"):
        r, text, err = W.call("export_notebook", notebook_handle=h,
                              format=fmt)
        check(not err, "export %s is valid UTF-8 JSON text" % fmt)
    W.call("disconnect_notebook", notebook_handle=h)


try:
    for part in (corpus, one_edit, unknown_cells, hostile_export, restart,
                 kernel_bytes):
        try:
            part()
        except Exception as e:
            check(False, "%s: %s: %s" % (part.__name__,
                                         type(e).__name__, e))
    check(all(line.decode("utf-8", "strict") is not None for line in W.raw),
          "every line on MCP stdout was strict UTF-8 JSON")
finally:
    W.close()
    subprocess.run([DAEMON, "stop"], env=ENV, capture_output=True)

if failures:
    print("%d FAILED" % len(failures))
    sys.exit(1)
print("PASS")
