#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for proxy-wire-test.py against this build's runtimed-mcp.
srcdir=${srcdir:-.}
exec timeout 600 /usr/bin/python3 "$srcdir/tests/e2e/proxy-wire-test.py" \
    "${RUNTIMED_MCP:-$PWD/runtimed-mcp}"
