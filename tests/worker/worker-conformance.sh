#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-conformance.sh: the official MCP conformance suite's generic
# server scenarios and the Inspector CLI against runtimed-mcp-worker on
# stdio.  Optional: needs a copy of ../shared/tools/mcp with its npm
# packages installed, named by MCP_TOOLS_DIR; skips (77) otherwise.
B=${abs_top_builddir:-$PWD}
D=${MCP_TOOLS_DIR:-}
if [ -z "$D" ] || [ ! -d "$D/node_modules/@modelcontextprotocol/conformance" ] ||
    ! command -v node >/dev/null 2>&1; then
	echo "worker-conformance: skipped: set MCP_TOOLS_DIR to an npm-installed copy of shared/tools/mcp"
	exit 77
fi
T=$(mktemp -d /tmp/rtd-wconf.XXXXXX)
mkdir -m 700 "$T/run"
DAEMON=$B/runtimed/runtimed
[ -f "$DAEMON" ] || DAEMON=$B/runtimed
cat >"$T/worker.sh" <<EOS
#!/bin/sh
export RUNTIMED_SOCKET=$T/run/runtimed.sock RUNTIMED_STATE_DIR=$T/state
export RUNTIMED_LIBEXEC_DIR=$(dirname "$DAEMON"):$B
exec $B/runtimed-mcp-worker 2>>$T/worker.err
EOS
chmod +x "$T/worker.sh"
trap 'RUNTIMED_SOCKET=$T/run/runtimed.sock "$DAEMON" stop >/dev/null 2>&1; rm -rf "$T"' EXIT
rc=0
for s in server-initialize logging-set-level ping tools-list resources-list \
    resources-subscribe resources-unsubscribe prompts-list; do
	if "$D/conformance-stdio.sh" "$T/worker.sh" --scenario "$s" \
	    >"$T/$s.out" 2>&1; then
		echo "PASS conformance $s"
	else
		echo "FAIL conformance $s"
		sed 's/\x1b\[[0-9;]*m//g' "$T/$s.out" | tail -20
		rc=1
	fi
done
mkdir -p "$D/run"
n=$(cd "$D/run" && timeout 60 node ../node_modules/@modelcontextprotocol/inspector-cli/build/index.js \
    "$T/worker.sh" --method tools/list | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).tools.length))')
[ "${n:-0}" -ge 21 ] && echo "PASS inspector tools/list ($n tools)" || { echo "FAIL inspector tools/list"; rc=1; }
(cd "$D/run" && timeout 60 node ../node_modules/@modelcontextprotocol/inspector-cli/build/index.js \
    "$T/worker.sh" --method tools/call --tool-name list_kernels) | grep -q '"isError": false' &&
    echo "PASS inspector tools/call list_kernels" || { echo "FAIL inspector tools/call"; rc=1; }
exit $rc
