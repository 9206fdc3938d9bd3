#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-conformance.sh: the official MCP conformance suite's generic
# server scenarios and the Inspector CLI against runtimed-mcp-worker on
# stdio.  The suite, the Inspector CLI and supergateway are pinned in
# tests/conformance (package-lock.json); scripts/test.sh runs "npm ci"
# there.  MCP_TOOLS_DIR names another such directory.  The suite needs
# Node 20 or later: where the system's is older (Debian 12's is 18), the
# Node 22 pinned beside the suite (npm's "node" package) runs it.
B=${abs_top_builddir:-$PWD}
srcdir=${srcdir:-.}
. "$srcdir/tests/lib/skip.sh"
D=${MCP_TOOLS_DIR:-$(cd "$srcdir/tests/conformance" && pwd)}
command -v node >/dev/null 2>&1 || skip_missing "no node"
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
	[ -x "$D/node_modules/node/bin/node" ] ||
	    skip_missing "Node 20 or later for the conformance suite (this is $(node --version); npm ci in $D installs one)"
	sys=$(node --version)
	PATH=$D/node_modules/node/bin:$PATH
	export PATH
	echo "worker-conformance: the system's node is $sys; the suite runs on $(node --version) from $D"
fi
[ -d "$D/node_modules/@modelcontextprotocol/conformance" ] ||
    skip_missing "no conformance suite in $D (run 'npm ci' there)"
command -v curl >/dev/null 2>&1 || skip_missing "no curl"
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
# inspector-cli 1.0.3 looks for ../package.json from its working
# directory but imports it from its own: give it one to find.
echo '{}' >"$T/package.json"
mkdir "$T/cwd"
n=$(cd "$T/cwd" && timeout 60 node "$D"/node_modules/@modelcontextprotocol/inspector-cli/build/index.js \
    "$T/worker.sh" --method tools/list | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).tools.length))')
[ "${n:-0}" -ge 21 ] && echo "PASS inspector tools/list ($n tools)" || { echo "FAIL inspector tools/list"; rc=1; }
(cd "$T/cwd" && timeout 60 node "$D"/node_modules/@modelcontextprotocol/inspector-cli/build/index.js \
    "$T/worker.sh" --method tools/call --tool-name list_kernels) | grep -q '"isError": false' &&
    echo "PASS inspector tools/call list_kernels" || { echo "FAIL inspector tools/call"; rc=1; }
exit $rc
