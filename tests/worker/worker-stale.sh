#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-stale.sh: staleness that follows dependencies (upstream_changed),
# run_cells stale:true and the undefined-name warning of edit_cells,
# against the real daemon and ipykernel (worker-stale.test.mjs).
srcdir=${srcdir:-.}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! /usr/bin/python3 -c 'import ipykernel' 2>/dev/null; then
	skip_missing "worker-stale: no ipykernel for /usr/bin/python3"
fi
exec sh "$srcdir/tests/worker/worker-node.sh" worker-stale.test.mjs
