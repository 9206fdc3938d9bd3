#!/bin/sh
# SPDX-License-Identifier: ISC
# gateway.sh: a kernel behind a gateway, made with two of Debian's
# Jupyter Servers on 127.0.0.1: G (the gateway, its own root, its
# kernels' working directory) and C (started with --gateway-url naming G:
# contents from C's root, kernels run by G).  The domain names C.
# Through the real worker, daemon and runtimed-agent-remote
# (tests/remote/gateway.py): the kernel runs in G's directory; an
# upload_file and a download_file are refused not_supported before any
# byte moves, saying the kernel does not see the server's contents and
# what to do; nothing is left in either root (the probe file included);
# a transfer before the kernel started goes on and says it was not
# decided.  The plain layout (no gateway) is tests/remote/tls.sh's and
# remote.sh's, whose transfers go on with the kernel seeing the file.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

GROOT=$T/gatewayroot
GTOKEN=gw-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$GROOT"
GPORT=$(free_port)
# A plain Jupyter Server takes no working directory from the gateway
# client's KERNEL_WORKING_DIR: its kernels start in its own.
(cd "$GROOT" && exec $PY -m jupyter_server --allow-root \
    --ServerApp.token="$GTOKEN" --port="$GPORT" --port-retries=0 \
    --ip=127.0.0.1 --no-browser --ServerApp.root_dir="$GROOT") \
    >>"$T/gateway.log" 2>&1 &
GJS=$!
track $GJS
i=0
until curl -sf -o /dev/null -H "Authorization: token $GTOKEN" \
    "http://127.0.0.1:$GPORT/api/status"; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "the gateway server did not answer in 30 s"
	kill -0 $GJS 2>/dev/null || fail "the gateway server exited"
	sleep 0.1
done
trap 'stop_server; kill -TERM $GJS 2>/dev/null; wait $GJS 2>/dev/null; stop_kernels; cleanup' EXIT

$PY - "$SROOT/nb.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("import os\nprint(os.getcwd())")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
head -c 100000 /dev/urandom >"$SROOT/there.bin"

SERVER_ARGS="--gateway-url=http://127.0.0.1:$GPORT --GatewayClient.auth_token=$GTOKEN"
start_daemon --warm-pool 0 -v
start_server
grep -q "Kernels will be managed by the Gateway server" "$T/server.log" ||
    fail "C is not in gateway mode"

$PY "${srcdir:-.}/tests/remote/gateway.py" "$top_builddir" "$T" "$SROOT" \
    "$GROOT" || fail "gateway.py"
n=$(grep -c "Uploading file to /rtd-probe-" "$T/server.log")
[ "$n" = 1 ] || fail "$n probe files written, not 1 (the kernel's answer kept)"
ok "gateway.py: transfers a gateway's kernel cannot see refused before any byte moved; one probe for the kernel"
exit 0
