# SPDX-License-Identifier: ISC
# lib.sh: shared by the remote-domain tests (sourced, not run).  The
# runtimectl tests' private daemon world (tests/ctl/lib.sh), plus a real
# Jupyter Server of our own on 127.0.0.1 with a token, a domains.json
# naming it, and its Jupyter directories private to the test.

. "${srcdir:-.}/tests/ctl/lib.sh"
PY=/usr/bin/python3
. "${srcdir:-.}/tests/lib/skip.sh"
$PY -c 'import jupyter_server' 2>/dev/null ||
    skip_missing "jupyter_server is not importable by $PY"

export RUNTIMED_CONFIG_DIR=$T/config
export JUPYTER_RUNTIME_DIR=$T/jupyter/runtime
export JUPYTER_DATA_DIR=$T/jupyter/data
export JUPYTER_CONFIG_DIR=$T/jupyter/config
SROOT=$T/serverroot
TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$RUNTIMED_CONFIG_DIR" "$SROOT" "$JUPYTER_RUNTIME_DIR"
printf '%s\n' "$TOKEN" >"$RUNTIMED_CONFIG_DIR/js.token"
chmod 600 "$RUNTIMED_CONFIG_DIR/js.token"

# A free port on 127.0.0.1 (bind 0, close: racy, but ours is the only use).
free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Start the server (again, on the same port if PORT is set): JS is its pid.
# For https (tests/remote/tls.sh): SCHEME=https, SERVER_HOST the url's
# host, SERVER_IP its --ip, CURL_TLS curl's --cacert, DOMAIN_EXTRA more of the
# domain's entry.
start_server() {
	[ -n "${PORT:-}" ] || PORT=$(free_port)
	$PY -m jupyter_server --allow-root --ServerApp.token="$TOKEN" \
	    --port="$PORT" --port-retries=0 --ip="${SERVER_IP:-127.0.0.1}" --no-browser \
	    --ServerApp.root_dir="$SROOT" ${SERVER_ARGS:-} \
	    >>"$T/server.log" 2>&1 &
	JS=$!
	track $JS
	i=0
	until curl -sf -o /dev/null ${CURL_TLS:-} \
	    -H "Authorization: token $TOKEN" \
	    "${SCHEME:-http}://127.0.0.1:$PORT/api/status"; do
		i=$((i + 1))
		[ $i -gt 300 ] && fail "jupyter_server did not answer in 30 s"
		kill -0 $JS 2>/dev/null || fail "jupyter_server exited"
		sleep 0.1
	done
	cat >"$RUNTIMED_CONFIG_DIR/domains.json" <<JSON
{"js": {"url": "${SCHEME:-http}://${SERVER_HOST:-127.0.0.1}:$PORT/",
    "token_file": "js.token"${DOMAIN_EXTRA:-}}}
JSON
}

# Stop our server (only ours, by its pid): TERM shuts its kernels down;
# with -9, as a crash, they follow it once they see their parent gone.
stop_server() {
	[ -n "${JS:-}" ] || return 0
	if [ "${1:-}" = -9 ]; then
		kill -9 "$JS" 2>/dev/null
	else
		kill -TERM "$JS" 2>/dev/null
		wait_gone "$JS" 100 || kill -9 "$JS" 2>/dev/null
	fi
	wait "$JS" 2>/dev/null
	JS=
}
# The server's kernels: ipykernel ends when its parent does, but
# xeus-python has no parent poller and outlived a server killed with -9
# (faults.py does it), holding the test's files.  Its connection file
# names our runtime directory.
stop_kernels() {
	pkill -9 -f -- "$JUPYTER_RUNTIME_DIR/kernel-" 2>/dev/null
	return 0
}
trap 'stop_server; stop_kernels; cleanup' EXIT
