#!/bin/sh
# SPDX-License-Identifier: ISC
# make check hook for proxy-test.py against this build's runtimed-mcp.
srcdir=${srcdir:-.}
exec timeout 300 /usr/bin/python3 "$srcdir/tests/e2e/proxy-test.py" \
    "${RUNTIMED_MCP:-$PWD/runtimed-mcp}"
