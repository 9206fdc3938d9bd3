#!/bin/sh
# SPDX-License-Identifier: ISC
# remote-xfer.sh: upload_file and download_file to a real Jupyter Server
# against curl on the same file and the same server, in alternating
# rounds (bench/remote-xfer.py), with the worker's peak RSS per transfer.
#     sh bench/remote-xfer.sh [BUILDDIR [MIB [ROUNDS [http|https]]]]
# (defaults: build/dev, 64 MiB, 7 rounds, http; `make bench-xfer` is
# 64 MiB, `make bench-xfer-1g` 1 GiB, `make bench-xfer-tls` 64 MiB over
# https).  https: the server runs with --certfile/--keyfile from a CA
# made here (as tests/remote/tls.sh does), named as the domain's ca_file
# and as curl's --cacert.  XFER_BASE=DIR also runs DIR/runtimed-mcp-worker
# (another build's) in the same rounds: a before and after on one server.
# The server, daemon and their files are private to the run (the remote
# tests' world, tests/remote/lib.sh), all removed at the end.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$(cd "${1:-$srcdir/build/dev}" && pwd)
export srcdir top_builddir
. "$srcdir/tests/remote/lib.sh"
CACERT=
if [ "${4:-http}" = https ]; then
	command -v openssl >/dev/null 2>&1 || skip_missing "the openssl command"
	P=$T/pki
	mkdir -p "$P"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 \
	    -subj "/CN=runtimed bench CA" 2>>"$T/openssl.log" ||
	    fail "openssl: CA"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/srv.key" -out "$P/srv.csr" -subj "/CN=127.0.0.1" \
	    2>>"$T/openssl.log" || fail "openssl: the server's request"
	printf 'subjectAltName=IP:127.0.0.1\n' >"$P/srv.ext"
	openssl x509 -req -in "$P/srv.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" \
	    -CAcreateserial -out "$P/srv.pem" -days 2 -extfile "$P/srv.ext" \
	    2>>"$T/openssl.log" || fail "openssl: the server's certificate"
	chmod 600 "$P/srv.key"
	cp "$P/ca.pem" "$RUNTIMED_CONFIG_DIR/ca.pem"
	chmod 644 "$RUNTIMED_CONFIG_DIR/ca.pem"
	SCHEME=https
	CURL_TLS="--cacert $P/ca.pem"
	SERVER_ARGS="--certfile=$P/srv.pem --keyfile=$P/srv.key"
	DOMAIN_EXTRA=', "ca_file": "ca.pem"'
	CACERT=$P/ca.pem
fi
start_daemon --warm-pool 0
start_server
$PY "$srcdir/bench/remote-xfer.py" "$top_builddir" "$T" "$SROOT" \
    "${SCHEME:-http}://127.0.0.1:$PORT/" "$TOKEN" "${2:-64}" "${3:-7}" \
    "$CACERT" || fail "remote-xfer.py"
