# SPDX-License-Identifier: ISC
"""badstderr.py: a kernel that dies at startup writing Latin-1 on its
stderr ("d\\xe9marrage"): what it said reaches the MCP answers
(get_kernel_info, run_cells) as strict UTF-8, the bad byte as U+FFFD,
and the worker's stdout carries no invalid UTF-8 (mcp.py checks every
line).  Usage: badstderr.py BUILDDIR SRCDIR TMPDIR
"""
import json
import os
import sys

builddir, srcdir, tmp = sys.argv[1:4]
sys.path.insert(0, os.path.join(srcdir, "tests", "notebooks"))
import mcp  # noqa: E402

spec = os.path.join(tmp, "jupyter", "kernels", "latin1")
os.makedirs(spec)
script = os.path.join(tmp, "die.py")
with open(script, "w") as f:
    f.write("import sys, time\n"
            "sys.stderr.buffer.write(b'Erreur au d\\xe9marrage: "
            "caf\\xe9\\n')\n"
            "sys.stderr.flush()\n"
            "sys.exit(3)\n")
with open(os.path.join(spec, "kernel.json"), "w") as f:
    json.dump({"argv": ["/usr/bin/python3", script, "{connection_file}"],
               "display_name": "Latin-1 on stderr", "language": "python"}, f)
nb = os.path.join(tmp, "l.ipynb")
with open(nb, "w") as f:
    json.dump({"cells": [{"cell_type": "code", "execution_count": None,
                          "id": "c1", "metadata": {}, "outputs": [],
                          "source": "1+1"}],
               "metadata": {"kernelspec": {"name": "latin1",
                                           "display_name": "L",
                                           "language": "python"}},
               "nbformat": 4, "nbformat_minor": 5}, f)

env = dict(os.environ, JUPYTER_PATH=os.path.join(tmp, "jupyter"),
           RUNTIMED_SOCKET=os.path.join(tmp, "run", "runtimed.sock"),
           RUNTIMED_STATE_DIR=os.path.join(tmp, "state"),
           RUNTIMED_LIBEXEC_DIR=builddir + ":" +
           os.path.join(builddir, "runtimed"),
           RUNTIMED_WARM_POOL="0")
w = mcp.Worker(builddir, env, os.path.join(tmp, "worker.err"))
failed = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)


sc, text, err = w.call("connect_notebook", path=nb)
check(not err, "connect: %s" % text)
h = sc.get("notebook_handle")
seen = ""
sc, text, err = w.call("run_cells", notebook_handle=h, all=True,
                       wait_secs=30)
seen += text + json.dumps(sc, ensure_ascii=False)
sc, text, err = w.call("get_kernel_info", notebook_handle=h)
seen += text + json.dumps(sc, ensure_ascii=False)
check("d\ufffdmarrage" in seen and "caf\ufffd" in seen,
      "the kernel's Latin-1 stderr reaches the answers with U+FFFD: %r"
      % seen[-600:])
check(all(l.decode("utf-8", "strict") is not None for l in w.raw),
      "every line on the worker's stdout is strict UTF-8 (%d lines)"
      % len(w.raw))
w.close()
sys.exit(1 if failed else 0)
