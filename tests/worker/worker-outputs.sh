#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-outputs.sh: rich outputs the model can read
# (worker-outputs.test.mjs), run as worker-node.sh runs the SDK-driven
# tests.
srcdir=${srcdir:-.}
exec sh "$srcdir/tests/worker/worker-node.sh" worker-outputs.test.mjs
