#!/bin/sh
# SPDX-License-Identifier: ISC
# delete.sh: a Jupyter Server that refuses to shut a kernel down (its
# authorizer, as a hub's scopes may, answers 403 to DELETE api/kernels/ID
# and to nothing else).  restart_kernel on a notebook there: the new
# kernel runs, and the result says the server refused to shut the old
# one down and that it may still run there (old_kernel, and the text);
# the server indeed still has it.  select_kernel (to a kernelspec of the
# test's own) says the same of the kernel it replaced.  The refusal was
# only logged before.  And a kernel shut down because nobody used its
# notebook, whose DELETE the server refuses, is taken back by the
# notebook's next run, variables and all; it was left running there,
# unowned, and the next run started another.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

mkdir -p "$T/py"
cat >"$T/py/refusedelete.py" <<'PY'
from jupyter_server.auth.authorizer import Authorizer


class RefuseDelete(Authorizer):
    """Everything but shutting a kernel down."""

    def is_authorized(self, handler, user, action, resource):
        return not (resource == "kernels" and
                    handler.request.method == "DELETE")
PY
export PYTHONPATH="$T/py${PYTHONPATH:+:$PYTHONPATH}"
# A second kernelspec for select_kernel, the server's own (its data dir).
mkdir -p "$JUPYTER_DATA_DIR/kernels/py2nd"
cat >"$JUPYTER_DATA_DIR/kernels/py2nd/kernel.json" <<JSON
{"argv": ["$PY", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "Python 3 (second)", "language": "python"}
JSON
SERVER_ARGS="--ServerApp.authorizer_class=refusedelete.RefuseDelete"

$PY - "$SROOT/nb.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 6 * 7")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY

start_daemon --warm-pool 0 --kernel-keepalive 2 -v
start_server

$PY - "$top_builddir" "$T" "$PORT" "$TOKEN" <<'PY' || fail "delete"
import json, os, sys, time, urllib.request
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ.get("srcdir", "."), "tests",
                                "notebooks"))
sys.path.insert(0, os.path.join(os.environ.get("srcdir", "."), "tests",
                                "remote"))
from mcp import Worker
from rcheck import expect, ok

builddir, tmp, port, token = sys.argv[1:5]


def kernels():
    req = urllib.request.Request(
        "http://127.0.0.1:%s/api/kernels" % port,
        headers={"Authorization": "token " + token})
    return [k["id"] for k in json.load(urllib.request.urlopen(req))]


w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect", sc)
h = sc["notebook_handle"]
cell = sc["cells"][0]["cell_id"]
sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cell],
                    wait_secs=50, timeout=120)
expect(not err and sc["status"] == "done", "run", sc)
old = kernels()
expect(len(old) == 1, "one kernel on the server", old)

sc, text, err = w.call("restart_kernel", notebook_handle=h, timeout=120)
expect(not err and sc.get("restarted"), "restart", sc)
left = sc.get("old_kernel", "")
expect("refused to shut kernel %s down (HTTP 403" % old[0] in left and
       "may still run there" in left, "old_kernel says the refusal", sc)
expect("old kernel: " in text and old[0] in text, "the text says it", text)
now = kernels()
expect(old[0] in now and len(now) == 2,
       "the refused kernel still runs on the server", now)
ok("restart_kernel: the server refused the old kernel's DELETE, and the "
   "result says so (old_kernel) while it still runs there")

sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "'x' in globals()"}])
sc, _, err = w.call("run_cells", notebook_handle=h,
                    cell_ids=[sc["cells"][0]["cell_id"]], wait_secs=50,
                    timeout=120)
expect(not err and sc["cells"][0]["outputs"][0]["data"]["text/plain"] ==
       "False", "the new kernel runs, without x", sc)
ok("the new kernel runs cells")

before = kernels()
sc, text, err = w.call("select_kernel", notebook_handle=h, kernel="py2nd",
                       timeout=120)
expect(not err and sc.get("kernel") == "py2nd", "select_kernel", sc)
gone = [k for k in before if k != old[0]]
expect(len(gone) == 1, "the kernel select replaces", before)
left = sc.get("old_kernel", "")
expect("refused to shut kernel %s down (HTTP 403" % gone[0] in left and
       "may still run there" in left, "select's old_kernel", sc)
expect("old kernel: " in text, "select's text says it", text)
expect(gone[0] in kernels(), "the replaced kernel still runs there")
ok("select_kernel says the server refused the replaced kernel's DELETE")

sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "y = 5"}])
sc, _, err = w.call("run_cells", notebook_handle=h,
                    cell_ids=[sc["cells"][0]["cell_id"]], wait_secs=50,
                    timeout=120)
expect(not err and sc["status"] == "done", "y = 5", sc)
cur = [k for k in kernels() if k not in before]
expect(len(cur) == 1, "the selected kernel", cur)
sc, _, err = w.call("save_notebook", notebook_handle=h)
expect(not err, "save", sc)
there = sorted(kernels())
sc, _, err = w.call("disconnect_notebook", notebook_handle=h)
expect(not err, "disconnect", sc)


def seen(name, text, tries):
    for _ in range(tries):
        with open(os.path.join(tmp, name), errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


# The teardown's DELETE refused, then (briefly) the daemon taking note.
expect(seen("server.log", "403 DELETE /api/kernels/" + cur[0], 200),
       "the idle teardown asked the server to shut the kernel down")
seen("daemon.log", "kernel %s still runs on" % cur[0], 50)
sc, _, err = w.call("connect_notebook", path="nb.ipynb", domain="js")
expect(not err, "connect again", sc)
h = sc["notebook_handle"]
sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
    {"op": "insert", "after": "BOTTOM", "source": "y + 1"}])
sc, _, err = w.call("run_cells", notebook_handle=h,
                    cell_ids=[sc["cells"][0]["cell_id"]], wait_secs=50,
                    timeout=120)
expect(not err and sc["cells"][0]["outputs"][0].get("data", {}).get(
       "text/plain") == "6", "the next run is on the kept kernel, y defined", sc)
expect(sorted(kernels()) == there, "no other kernel started", kernels())
ok("an idle kernel whose DELETE the server refused is taken back by the "
   "next run, its variables there")
w.close()
PY
grep -q "refused to shut kernel .* down (HTTP 403" "$T/daemon.log" ||
    fail "the daemon did not log the refusal"
ok "a refused kernel DELETE is said in the tool result"
exit 0
