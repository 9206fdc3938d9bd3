#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-images.sh: images the model sees (worker-images.test.mjs), run
# as worker-node.sh runs the SDK-driven tests.
srcdir=${srcdir:-.}
exec sh "$srcdir/tests/worker/worker-node.sh" worker-images.test.mjs
