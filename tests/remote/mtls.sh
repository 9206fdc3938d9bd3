#!/bin/sh
# SPDX-License-Identifier: ISC
# mtls.sh: a domain's client certificate (cert_file, key_file) against
# Debian's Jupyter Server started with --certfile/--keyfile and
# --ServerApp.client_ca, which then takes no connection without a
# certificate its client CA signed.  The CA, the server's certificate, ours
# and a stranger's (from another CA) are made here with the openssl
# command; no private key is kept in the tree.  runtimectl domains: the
# domain with its certificate is ok; one without is refused saying the
# server asks for one and naming the options; one with the stranger's is
# refused as not taken; a key file others can read, a key that is not the
# certificate's, an encrypted key, one of the two options alone are
# refused with the fix.  Through the real worker, daemon and
# runtimed-agent-remote (tests/remote/tls.py mtls): connect without the
# certificate is tls_unverified and changes nothing; with it, 1+1 runs
# over the kernel WebSocket, an edit is saved, 5 MiB go up and down with
# matching SHA-256.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"
command -v openssl >/dev/null 2>&1 || skip_missing "the openssl command"

P=$T/pki
mkdir -p "$P"
# A CA named $1.
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/$1.key" -out "$P/$1.pem" -days 2 \
	    -subj "/CN=runtimed test $1" 2>>"$T/openssl.log" ||
	    fail "openssl: CA $1"
}
# A certificate for $1 signed by CA $2, with extensions $3.
cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$P/$1.key" -out "$P/$1.csr" -subj "/CN=$1" \
	    2>>"$T/openssl.log" || fail "openssl: $1's request"
	printf '%s\n' "$3" >"$P/$1.ext"
	openssl x509 -req -in "$P/$1.csr" -CA "$P/$2.pem" -CAkey "$P/$2.key" \
	    -CAcreateserial -out "$P/$1.pem" -days 2 -extfile "$P/$1.ext" \
	    2>>"$T/openssl.log" || fail "openssl: $1's certificate"
	chmod 600 "$P/$1.key"
}
ca ca
ca rogue
cert localhost ca "subjectAltName=DNS:localhost,IP:127.0.0.1"
cert me ca "extendedKeyUsage=clientAuth"
cert stranger rogue "extendedKeyUsage=clientAuth"
C=$RUNTIMED_CONFIG_DIR
cp "$P/ca.pem" "$C/ca.pem"
cp "$P/me.pem" "$C/me.pem"
cp "$P/stranger.pem" "$C/stranger.pem"
chmod 644 "$C/ca.pem" "$C/me.pem" "$C/stranger.pem"
(umask 077 && cp "$P/me.key" "$C/me.key" &&
    cp "$P/stranger.key" "$C/stranger.key" &&
    cp "$P/stranger.key" "$C/other.key" &&
    openssl pkey -in "$P/me.key" -out "$C/locked.key" -aes256 \
    -passout pass:secret 2>>"$T/openssl.log") || fail "keys"

domains() {
	cat >"$C/domains.json" <<JSON
{"js": {"url": "https://localhost:$PORT/", "token_file": "js.token",
    "ca_file": "ca.pem", "cert_file": "me.pem", "key_file": "me.key"},
 "nocert": {"url": "https://localhost:$PORT/", "token_file": "js.token",
    "ca_file": "ca.pem"},
 "stranger": {"url": "https://localhost:$PORT/", "token_file": "js.token",
    "ca_file": "ca.pem", "cert_file": "stranger.pem",
    "key_file": "$C/stranger.key"}}
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
CURL_TLS="--cacert $P/ca.pem --cert $P/me.pem --key $P/me.key"
SERVER_IP=localhost
SERVER_ARGS="--certfile=$P/localhost.pem --keyfile=$P/localhost.key --ServerApp.client_ca=$P/ca.pem"
start_daemon --warm-pool 0 -v
start_server
domains
# The server takes no connection without our certificate.
curl -sf -o /dev/null --cacert "$P/ca.pem" -H "Authorization: token $TOKEN" \
    "https://127.0.0.1:$PORT/api/status" 2>/dev/null &&
    fail "the server took a connection without a client certificate"

out=$("$CTL" domains 2>&1) && fail "a domain without a certificate was ok: $out"
echo "$out"
echo "$out" | grep -q "^js .*https://localhost:$PORT/ .*ok " ||
    fail "js (with its certificate) not ok: $out"
echo "$out" | grep -q "^nocert .*unusable" || fail "nocert was usable: $out"
echo "$out" | grep "nocert:" | grep -q "the server asks for a client certificate (.*) and the domain has none.*\"cert_file\" and \"key_file\"" ||
    fail "nocert's reason and fix: $out"
# Its alert (unknown ca) comes after TLS 1.3's handshake has ended on our
# side, and a reset answering the request sent meanwhile can drop it
# unread: then the closed connection is said to be the likely refusal
# (jserver_tls_closed), never a bare "connection refused or closed".
echo "$out" | grep "stranger:" | grep -q "the server refused the domain's client certificate (.*unknown ca)\|the connection closed without a reply; the domain presents a client certificate, and a server that refuses one may close the connection without saying so: check that its \"cert_file\"" ||
    fail "stranger's reason: $out"
echo "$out" | grep -q "BEGIN\|PRIVATE" && fail "key material shown: $out"
ok "domains: with the certificate ok; without it and with a stranger's refused with the reason and the fix"

# What runtimectl domains says of a domain named js after a change.
js_says() {
	out=$("$CTL" domains 2>&1) && fail "$1 was taken: $out"
	echo "$out" | grep "js:" | grep -q "$2" || fail "$1: $out"
	echo "$out" | grep -q "BEGIN\|PRIVATE" && fail "$1: key material shown"
	ok "domains: $1 refused with the fix"
}
chmod 644 "$C/me.key"
js_says "a key_file others can read" "key_file: $C/me.key can be read by others (mode 0644): chmod 600 $C/me.key"
chmod 600 "$C/me.key"
sed -i 's/"key_file": "me.key"/"key_file": "other.key"/' "$C/domains.json"
js_says "a key_file of another certificate" "key_file $C/other.key is not the key of cert_file $C/me.pem"
sed -i 's/"key_file": "other.key"/"key_file": "locked.key"/' "$C/domains.json"
js_says "an encrypted key_file" "key_file $C/locked.key is encrypted and nothing can ask for its passphrase"
sed -i 's/, "key_file": "locked.key"//' "$C/domains.json"
js_says "a cert_file without key_file" "needs both \"cert_file\" (its PEM certificate) and \"key_file\""
domains
chmod 666 "$C/me.pem"
js_says "a cert_file others can write" "cert_file $C/me.pem can be changed by others"
chmod 644 "$C/me.pem"

$PY "${srcdir:-.}/tests/remote/tls.py" "$top_builddir" "$T" "$SROOT" mtls ||
    fail "tls.py mtls"
grep -q "WebSocket open" "$T/daemon.log" ||
    fail "no kernel WebSocket was opened over TLS"
grep -q "BEGIN\|PRIVATE KEY" "$T/daemon.log" "$T"/*.log &&
    fail "key material in a log"
ok "tls.py mtls: refused without the certificate; run, save and 5 MiB transfers with it"
exit 0
