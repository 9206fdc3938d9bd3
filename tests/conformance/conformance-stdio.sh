#!/bin/sh
# SPDX-License-Identifier: ISC
# conformance-stdio.sh: the official MCP conformance suite speaks
# Streamable HTTP only; this puts a stdio server behind supergateway
# (stateful, one child per session) on a free local port and runs the
# suite's "server" command against it.
#	conformance-stdio.sh "SERVER COMMAND" [conformance arguments...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cmd=$1
shift
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1",
    () => { console.log(s.address().port); s.close(); });')
node "$here/node_modules/supergateway/dist/index.js" --stdio "$cmd" \
    --outputTransport streamableHttp --stateful --sessionTimeout 5000 \
    --port "$port" --logLevel none >/dev/null 2>&1 &
sg=$!
trap 'kill $sg 2>/dev/null; wait $sg 2>/dev/null' EXIT
i=0
until curl -s -o /dev/null "http://127.0.0.1:$port/mcp"; do
	i=$((i + 1))
	[ $i -gt 50 ] && { echo "supergateway did not listen on $port" >&2; exit 1; }
	sleep 0.2
done
node --import "$here/node20-compat.mjs" \
    "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "http://127.0.0.1:$port/mcp" "$@"
