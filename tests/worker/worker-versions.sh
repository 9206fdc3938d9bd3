#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-versions.sh: cell versions, edit_conflict, staleness and the run
# list against the real daemon and ipykernel (worker-versions.test.mjs).
srcdir=${srcdir:-.}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! /usr/bin/python3 -c 'import ipykernel' 2>/dev/null; then
	skip_missing "worker-versions: no ipykernel for /usr/bin/python3"
fi
exec sh "$srcdir/tests/worker/worker-node.sh" worker-versions.test.mjs
