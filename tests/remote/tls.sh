#!/bin/sh
# SPDX-License-Identifier: ISC
# tls.sh: https domains against Debian's Jupyter Server started with
# --certfile/--keyfile from a throwaway CA made here with the openssl
# command (the server's certificate names localhost and 127.0.0.1).
# runtimectl domains: a domain by name (SNI, host name checked) and one by
# address, both with the CA as ca_file, are ok; one without ca_file is
# refused with OpenSSL's reason and the option to set; a ca_file others
# can write is refused.  Through the real worker, daemon and
# runtimed-agent-remote (tests/remote/tls.py): connect without the CA is
# tls_unverified and changes nothing; with it, 1+1 runs over the kernel
# WebSocket on TLS, an edit is saved, 5 MiB go up and down with matching
# SHA-256.  Then the server comes back with a certificate for another
# name: refused as not for localhost, nothing changed.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"
command -v openssl >/dev/null 2>&1 || skip_missing "the openssl command"

P=$T/pki
mkdir -p "$P"
# A CA, and a certificate it signs for $1 with subjectAltName $2.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 \
    -subj "/CN=runtimed test CA" 2>>"$T/openssl.log" || fail "openssl: CA"
cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/$1.key" -out "$P/$1.csr" -subj "/CN=$1" \
	    2>>"$T/openssl.log" || fail "openssl: $1's request"
	printf 'subjectAltName=%s\n' "$2" >"$P/$1.ext"
	openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" \
	    -CAcreateserial -out "$P/$1.pem" -days 2 -extfile "$P/$1.ext" \
	    2>>"$T/openssl.log" || fail "openssl: $1's certificate"
	chmod 600 "$P/$1.key"
}
cert localhost "DNS:localhost,IP:127.0.0.1"
cert other "DNS:other.example"
cp "$P/ca.pem" "$RUNTIMED_CONFIG_DIR/ca.pem"
chmod 644 "$RUNTIMED_CONFIG_DIR/ca.pem"

# The url's host name: the server listens on all of localhost's addresses.
domains() {
	cat >"$RUNTIMED_CONFIG_DIR/domains.json" <<JSON
{"js": {"url": "https://localhost:$PORT/", "token_file": "js.token",
    "ca_file": "ca.pem"},
 "ip": {"url": "https://127.0.0.1:$PORT/", "token_file": "js.token",
    "ca_file": "$RUNTIMED_CONFIG_DIR/ca.pem"},
 "noca": {"url": "https://localhost:$PORT/", "token_file": "js.token"}}
JSON
}

$PY - "$SROOT/nb.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("x = 6 * 7")]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY

SCHEME=https
CURL_TLS="--cacert $P/ca.pem"
SERVER_IP=localhost
SERVER_ARGS="--certfile=$P/localhost.pem --keyfile=$P/localhost.key"
start_daemon --warm-pool 0 -v
start_server
domains

out=$("$CTL" domains 2>&1) && fail "a domain without its CA was ok: $out"
echo "$out" | grep -q "^js .*https://localhost:$PORT/ .*ok " ||
    fail "js (by name, ca_file) not ok: $out"
echo "$out" | grep -q "^ip .*https://127.0.0.1:$PORT/ .*ok " ||
    fail "ip (by address, ca_file) not ok: $out"
echo "$out" | grep -q "^noca .*unusable" || fail "noca was usable: $out"
echo "$out" | grep "noca:" | grep -q "did not verify (unable to get local issuer certificate).*\"ca_file\"" ||
    fail "noca's reason and fix: $out"
ok "domains: https by name and by address with ca_file; without it refused with the reason and the option"

chmod 666 "$RUNTIMED_CONFIG_DIR/ca.pem"
out=$("$CTL" domains 2>&1) && fail "a ca_file others can write was taken"
echo "$out" | grep -q "ca_file $RUNTIMED_CONFIG_DIR/ca.pem can be changed by others" ||
    fail "a writable ca_file: $out"
chmod 644 "$RUNTIMED_CONFIG_DIR/ca.pem"
ok "domains: a ca_file others can write is refused"

$PY "${srcdir:-.}/tests/remote/tls.py" "$top_builddir" "$T" "$SROOT" ||
    fail "tls.py"
grep -q "WebSocket open" "$T/daemon.log" ||
    fail "no kernel WebSocket was opened over TLS"
ok "tls.py: refused without the CA; run, save and 5 MiB transfers over TLS"

# The server again with a certificate for another name (by our CA).
stop_server
CURL_TLS=-k
SERVER_IP=localhost
SERVER_ARGS="--certfile=$P/other.pem --keyfile=$P/other.key"
start_server
domains
out=$("$CTL" domains 2>&1) && fail "a certificate for another name was ok"
echo "$out" | grep "js:" | grep -q "is not for localhost (hostname mismatch)" ||
    fail "another name: $out"
echo "$out" | grep "ip:" | grep -q "is not for 127.0.0.1 (IP address mismatch)" ||
    fail "another address: $out"
$PY "${srcdir:-.}/tests/remote/tls.py" "$top_builddir" "$T" "$SROOT" other ||
    fail "tls.py other"
ok "a certificate for another name or address is refused"
exit 0
