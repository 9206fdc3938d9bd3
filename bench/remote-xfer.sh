#!/bin/sh
# SPDX-License-Identifier: ISC
# remote-xfer.sh: upload_file and download_file to a real Jupyter Server
# against curl on the same file and the same server, in alternating
# rounds (bench/remote-xfer.py), with the worker's peak RSS per transfer.
#     sh bench/remote-xfer.sh [BUILDDIR [MIB [ROUNDS]]]
# (defaults: build/dev, 64 MiB, 7 rounds; `make bench-xfer` is 1 GiB).
# The server, daemon and their files are private to the run (the remote
# tests' world, tests/remote/lib.sh), all removed at the end.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$(cd "${1:-$srcdir/build/dev}" && pwd)
export srcdir top_builddir
. "$srcdir/tests/remote/lib.sh"
start_daemon --warm-pool 0
start_server
$PY "$srcdir/bench/remote-xfer.py" "$top_builddir" "$T" "$SROOT" \
    "http://127.0.0.1:$PORT/" "$TOKEN" "${2:-64}" "${3:-7}" ||
    fail "remote-xfer.py"
