#!/bin/sh
# SPDX-License-Identifier: ISC
# domains.sh: runtimectl domains against a real Jupyter Server: ok with
# the principal the server's evidence gives (1.23 has no /api/me: the
# token's tag), the token never printed; a token file others can read
# refused with the chmod; a wrong token refused; a server that is gone
# unreachable; a bad domains.json named.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

start_server
out=$("$CTL" domains 2>&1) || fail "domains: $out"
echo "$out" | grep -q "^js .*http://127.0.0.1:$PORT/ .*ok .*token:" ||
    fail "domains said: $out"
"$CTL" domains --json >"$T/d.json" || fail "domains --json"
grep -q "$TOKEN" "$T/d.json" && fail "the token was printed"
$PY - "$T/d.json" <<'PY' || fail "domains --json: $(cat "$T/d.json")"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["domains"][0]
assert d["name"] == "js" and d["ok"] and d["reachable"] and d["authenticated"], d
assert d["principal"].startswith("token:") and "api/status" in d["evidence"], d
PY
ok "domains: reachable, token accepted, principal from the evidence"

chmod 640 "$RUNTIMED_CONFIG_DIR/js.token"
out=$("$CTL" domains 2>&1) && fail "a 0640 token file was used"
echo "$out" | grep -q "chmod 600 $RUNTIMED_CONFIG_DIR/js.token" ||
    fail "no chmod fix: $out"
chmod 600 "$RUNTIMED_CONFIG_DIR/js.token"
ok "domains: a token file others can read is refused with the fix"

cp "$RUNTIMED_CONFIG_DIR/js.token" "$T/good.token"
echo wrong >"$RUNTIMED_CONFIG_DIR/js.token"
out=$("$CTL" domains 2>&1) && fail "a wrong token was taken"
echo "$out" | grep -q "refused the token" || fail "wrong token: $out"
cp "$T/good.token" "$RUNTIMED_CONFIG_DIR/js.token"
ok "domains: a wrong token is refused"

stop_server
out=$("$CTL" domains 2>&1) && fail "a dead server was ok"
echo "$out" | grep -q "cannot reach" || fail "dead server: $out"
ok "domains: a stopped server is unreachable"

echo '{"js": ' >"$RUNTIMED_CONFIG_DIR/domains.json"
out=$("$CTL" domains 2>&1) && fail "a broken domains.json was read"
echo "$out" | grep -q "domains.json is not a JSON object" || fail "bad config: $out"
echo '{"js": {"url": "https://example.org/", "token_file": "js.token"}}' \
    >"$RUNTIMED_CONFIG_DIR/domains.json"
out=$("$CTL" domains 2>&1) && fail "https was taken"
echo "$out" | grep -q "https is not supported" || fail "https: $out"
ok "domains: a broken config and https are named"
