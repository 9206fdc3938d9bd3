#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-figures.sh: Plotly and Vega figures drawn to PNG by headless
# Chromium (worker-figures.test.mjs, decision 088), run as worker-node.sh
# runs the SDK-driven tests.  Skips without chromium, python3-plotly or
# libjs-vega (fails under CI=true, tests/lib/skip.sh).
srcdir=${srcdir:-.}
. "$srcdir/tests/lib/skip.sh"
command -v chromium >/dev/null 2>&1 ||
	skip_missing "worker-figures: no chromium"
[ -r /usr/share/python3-plotly/plotly.js ] ||
	skip_missing "worker-figures: no python3-plotly"
[ -r /usr/share/javascript/vega/vega-view.min.js ] ||
	skip_missing "worker-figures: no libjs-vega"
exec sh "$srcdir/tests/worker/worker-node.sh" worker-figures.test.mjs
