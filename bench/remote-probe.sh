#!/bin/sh
# SPDX-License-Identifier: ISC
# remote-probe.sh: what asking the kernel whether it sees a server's
# contents costs a transfer (decision 100).  On a real Jupyter Server, in
# alternating rounds (bench/remote-probe.py): restart_kernel, then a
# 1 KiB upload_file (the kernel probed), then another (its answer kept).
#     sh bench/remote-probe.sh [BUILDDIR [ROUNDS]]
# (defaults: build/dev, 11 rounds; `make bench-probe`).  The server,
# daemon and their files are private to the run (tests/remote/lib.sh).
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$(cd "${1:-$srcdir/build/dev}" && pwd)
export srcdir top_builddir
. "$srcdir/tests/remote/lib.sh"
$PY - "$SROOT/nb.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 1")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
start_daemon --warm-pool 0
start_server
uptime
$PY "$srcdir/bench/remote-probe.py" "$top_builddir" "$T" "${2:-11}" ||
    fail "remote-probe.py"
uptime
exit 0
