#!/bin/sh
# SPDX-License-Identifier: ISC
# http.sh: runtimed-web's door, with curl and no browser (issue 17).  The
# secret is 0600; no secret, a wrong one or a forged Host is 403 and
# nothing more; the URL's secret becomes an HttpOnly SameSite=Strict
# cookie; every page carries a strict Content-Security-Policy; a POST
# needs the page's token and no foreign Origin, and GET changes nothing;
# oversized headers and bodies and other methods are refused with the
# process alive; the page's stream sends the cells (notebook HTML
# escaped), a comment posted shows up in it; and the view exits when no
# page was open for RUNTIMED_WEB_IDLE_SECS.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 90 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

. "${srcdir:-.}/tests/lib/skip.sh"
command -v curl >/dev/null 2>&1 || skip_missing "no curl"
[ -x "$top_builddir/runtimed-web" ] || { echo "skip: no runtimed-web"; exit 77; }
export RUNTIMED_WEB_IDLE_SECS=3
start_daemon

NB=$T/nb.ipynb
/usr/bin/python3 - "$NB" <<'PY' || fail "cannot write the notebook"
import json, sys
cells = [
 {"cell_type": "markdown", "id": "md1", "metadata": {},
  "source": "# Heading\n<script>alert(1)</script>"},
 {"cell_type": "code", "id": "code1", "metadata": {}, "execution_count": 3,
  "source": "x = '<b>'", "outputs": [
  {"output_type": "stream", "name": "stdout", "text": "\u001b[31mred\u001b[0m <i>\n"}]}]
json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells},
    open(sys.argv[1], "w"))
PY

# A link planted where the secret goes is removed, never written through.
echo keep >"$T/target"
ln -s "$T/target" "$RUNTIMED_STATE_DIR/web-secret"
URL=$("$CTL" open "$NB") || fail "runtimectl open failed"
[ "$(cat "$T/target")" = keep ] || fail "the secret went through a link"
[ -L "$RUNTIMED_STATE_DIR/web-secret" ] && fail "the link is still there"
case $URL in http://127.0.0.1:*/open\?s=*\&nb=*) ;; *) fail "url $URL";; esac
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
ID=${URL##*nb=}
SECRET=${URL#*s=}; SECRET=${SECRET%%&*}
BASE=http://127.0.0.1:$PORT
# Every page is under the cookie's path: /v and 16 hex of the secret's hash.
P=/v$(printf %s "$SECRET" | sha256sum | cut -c1-16)
ok "runtimectl open: $BASE"
"$CTL" status | grep -qx "view $BASE/" || fail "status does not list the view"
ok "status lists the view"

mode=$(stat -c %a "$RUNTIMED_STATE_DIR/web-secret")
[ "$mode" = 600 ] || fail "web-secret mode $mode"
[ "$(cat "$RUNTIMED_STATE_DIR/web-secret")" = "$SECRET" ] ||
    fail "the URL's secret is not the file's"
ok "the secret is 0600 in the state dir"

# code URL [curl options]: the status code.
code() {
	u=$1; shift
	curl -s -o "$T/body" -w '%{http_code}' "$@" "$u"
}
J=$T/jar
c=$(code "$BASE$P/nb/$ID"); [ "$c" = 403 ] || fail "no secret: $c"
[ "$(cat "$T/body")" = forbidden ] || fail "403 reveals: $(cat "$T/body")"
c=$(code "$BASE/open?s=00$SECRET&nb=$ID"); [ "$c" = 403 ] ||
    fail "wrong secret: $c"
c=$(code "$BASE/open?nb=$ID"); [ "$c" = 403 ] || fail "missing secret: $c"
c=$(code "$BASE$P/static/page.js"); [ "$c" = 403 ] || fail "script: $c"
c=$(code "$BASE$P/nb/$ID" -H "Cookie: rtd_$PORT=$SECRET"x); [ "$c" = 403 ] ||
    fail "a wrong cookie: $c"
ok "no secret, a wrong one: 403 forbidden"

c=$(code "$URL" -D "$T/hdr" -c "$J"); [ "$c" = 303 ] || fail "open: $c"
grep -qi "^set-cookie: rtd_$PORT=$SECRET; HttpOnly; SameSite=Strict; Path=$P/" \
    "$T/hdr" || fail "no strict cookie: $(cat "$T/hdr")"
grep -qi "^location: $P/nb/$ID" "$T/hdr" || fail "not sent to the page"
c=$(code "$BASE$P/" -b "$J"); [ "$c" = 200 ] || fail "index: $c"
grep -q "href=\"nb/$ID\">$NB<" "$T/body" || fail "index lacks the notebook"
ok "the secret becomes an HttpOnly SameSite=Strict cookie; the index lists"

# Cookies are not port-scoped: another server on 127.0.0.1 would get it
# with every request of the person's, but for the cookie's path (issue
# 36).  curl's jar, as a browser, sends a cookie by host and path only.
/usr/bin/python3 - "$T/other" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[1], "a").write("%s %s\n" % (self.path,
            self.headers.get("Cookie", "-")))
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".port", "w").write(str(s.server_address[1]))
s.handle_request(); s.handle_request(); s.handle_request()
PY
track $!
i=0; while [ ! -s "$T/other.port" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "no other server"; sleep 0.1; done
OP=$(cat "$T/other.port")
for p in / /nb/$ID "$P/nb/$ID"; do
	curl -s -o /dev/null -b "$J" "http://127.0.0.1:$OP$p" || fail "other server"
done
grep -q "rtd_" "$T/other" && case $(grep rtd_ "$T/other") in
	"$P/"*) ;; *) fail "another port's server got the cookie: $(cat "$T/other")";; esac
ok "another server on 127.0.0.1 gets no cookie for its own pages ($(tr '\n' ';' <"$T/other"))"

c=$(code "$BASE$P/nb/$ID" -b "$J" -H "Host: evil.example:$PORT")
[ "$c" = 403 ] || fail "forged Host: $c"
c=$(code "$BASE$P/nb/$ID" -b "$J" -H "Host: 127.0.0.1:1$PORT")
[ "$c" = 403 ] || fail "other port in Host: $c"
c=$(code "$BASE/open?s=$SECRET" -H "Host: evil.example")
[ "$c" = 403 ] || fail "forged Host on open: $c"
c=$(code "http://localhost:$PORT$P/nb/$ID" -H "Cookie: rtd_$PORT=$SECRET" \
    --resolve "localhost:$PORT:127.0.0.1")
[ "$c" = 200 ] || fail "localhost Host: $c"
ok "a forged Host is refused (DNS rebinding)"

c=$(code "$BASE$P/nb/$ID" -b "$J" -D "$T/hdr"); [ "$c" = 200 ] ||
    fail "page: $c"
grep -qi "^content-security-policy: default-src 'none'; script-src 'self';" \
    "$T/hdr" || fail "no strict CSP"
grep -qi "^x-frame-options: DENY" "$T/hdr" || fail "no X-Frame-Options"
grep -q "<script" "$T/body" && ! grep -q '<script src="../static/page.js"' \
    "$T/body" && fail "inline script in the page"
TOKEN=$(sed -n 's/.*name="rtd-token" content="\([^"]*\)".*/\1/p' "$T/body")
[ -n "$TOKEN" ] || fail "no token in the page"
ok "the page: strict CSP, its own script only, a token"

# The stream: the cells, notebook HTML escaped.
curl -s -N -b "$J" "$BASE$P/nb/$ID/events" >"$T/sse" &
SSE=$!
track $SSE
i=0
until grep -q '^event: reset' "$T/sse"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no reset event"; sleep 0.1
done
grep -q '<h1>Heading</h1>' "$T/sse" || fail "no rendered heading"
grep -q '<script>alert(1)' "$T/sse" && fail "raw HTML of markdown passed"
grep -q 'data-src=\\"# Heading&#10;&lt;script&gt;alert(1)' "$T/sse" ||
    fail "the source for the editor is not escaped"
grep -q 'ansi-fg-1' "$T/sse" || fail "no ANSI colour"
grep -q '&lt;i&gt;' "$T/sse" || fail "stream text not escaped"
grep -q '\[3\]' "$T/sse" || fail "no execution count"
ok "the stream: cells rendered, notebook HTML escaped"

# Writes: POST with the token, nothing by GET.
c=$(code "$BASE$P/nb/$ID/interrupt" -b "$J"); [ "$c" = 404 ] ||
    fail "GET interrupt: $c"
c=$(code "$BASE$P/nb/$ID/interrupt" -b "$J" -d x=1); [ "$c" = 403 ] ||
    fail "POST without token: $c"
c=$(code "$BASE$P/nb/$ID/interrupt" -b "$J" -d "token=${TOKEN}0")
[ "$c" = 403 ] || fail "POST with a wrong token: $c"
c=$(code "$BASE$P/nb/$ID/interrupt" -b "$J" -d "token=$TOKEN" \
    -H "Origin: http://evil.example"); [ "$c" = 403 ] ||
    fail "POST from a foreign origin: $c"
c=$(code "$BASE$P/nb/$ID/interrupt" -d "token=$TOKEN"); [ "$c" = 403 ] ||
    fail "POST without the cookie: $c"
c=$(code "$BASE$P/nb/$ID/interrupt" -b "$J" -d "token=$TOKEN" \
    -H "Origin: $BASE"); [ "$c" = 200 ] ||
    fail "POST interrupt: $c $(cat "$T/body")"
ok "a write needs POST, the cookie, the page's token and our origin"

LAST0=$(sed -n 's/^id: //p' "$T/sse" | tail -1)
c=$(code "$BASE$P/nb/$ID/comment" -b "$J" \
    --data-urlencode "token=$TOKEN" --data-urlencode "cell_id=code1" \
    --data-urlencode "text=look <here> & there")
[ "$c" = 200 ] || fail "comment: $c $(cat "$T/body")"
i=0
until grep -q 'person (live view)</b> look &lt;here&gt; &amp; there' "$T/sse"
do
	i=$((i + 1)); [ $i -gt 50 ] && fail "the comment is not on the page"
	sleep 0.1
done
c=$(code "$BASE$P/nb/$ID/comment" -b "$J" -d "token=$TOKEN&cell_id=nope&text=x")
[ "$c" = 409 ] || fail "comment on a missing cell: $c"
ok "a comment posted appears on the page"

# A page that comes back with Last-Event-ID gets what changed since:
# the cells an edit named, or everything after a metadata change (the
# comments show in the cells).
LAST1=$(sed -n 's/^id: //p' "$T/sse" | tail -1)
"$CTL" call edit_cells path="$NB" \
    'edits=[{"op":"edit","cell_id":"code1","source":"y = 2"}]' \
    >/dev/null || fail "edit_cells through runtimectl call"
i=0
until grep -q 'y = 2' "$T/sse"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "the edit is not on the page"
	sleep 0.1
done
timeout 2 curl -s -N -b "$J" -H "Last-Event-ID: $LAST1" \
    "$BASE$P/nb/$ID/events" >"$T/resume"
first=$(sed -n 's/^event: //p' "$T/resume" | head -1)
[ "$first" = update ] || fail "resume from $LAST1 sent '$first'"
grep -q 'y = 2' "$T/resume" || fail "resume lacks the edit"
grep -q 'Heading' "$T/resume" && fail "resume sent an unchanged cell"
timeout 2 curl -s -N -b "$J" -H "Last-Event-ID: $LAST0" \
    "$BASE$P/nb/$ID/events" >"$T/resume"
[ "$(sed -n 's/^event: //p' "$T/resume" | head -1)" = reset ] ||
    fail "resume across a comment did not send everything"
grep -q 'look &lt;here&gt;' "$T/resume" || fail "resume lacks the comment"
timeout 2 curl -s -N -b "$J" -H "Last-Event-ID: 999999" \
    "$BASE$P/nb/$ID/events" >"$T/resume"
[ "$(sed -n 's/^event: //p' "$T/resume" | head -1)" = reset ] ||
    fail "an unknown Last-Event-ID did not get everything"
ok "a page resumes from Last-Event-ID (the daemon's change log)"

# Hostile requests: each answered, the process lives on.
big=$(head -c 20000 /dev/zero | tr '\0' a)
c=$(code "$BASE$P/nb/$ID" -b "$J" -H "X-Big: $big"); case $c in 4*) ;;
*) fail "oversized header: $c";; esac
head -c 100000 /dev/zero | tr '\0' a >"$T/bigbody"
c=$(code "$BASE$P/nb/$ID/comment" -b "$J" --data-binary @"$T/bigbody")
case $c in 4*) ;; *) fail "oversized body: $c";; esac
# evhttp itself refuses a method not allowed (501 Not Implemented).
c=$(code "$BASE$P/nb/$ID" -b "$J" -X PUT); [ "$c" = 501 ] || fail "PUT: $c"
c=$(code "$BASE$P/nb/../../etc/passwd" -b "$J" --path-as-is)
[ "$c" = 404 ] || fail "a path out: $c"
printf 'GARBAGE\r\n\r\n' | timeout 5 curl -s telnet://127.0.0.1:$PORT \
    >/dev/null 2>&1
c=$(code "$BASE$P/nb/$ID" -b "$J"); [ "$c" = 200 ] ||
    fail "the view died after hostile requests: $c"
ok "oversized headers and bodies, other methods, garbage: refused, alive"

# The view killed: the daemon lives on and starts another on demand.
W=$(ps -o pid=,comm= --ppid "$D" | awk '$2 == "runtimed-web" { print $1 }')
[ -n "$W" ] || fail "no runtimed-web child of the daemon"
kill -9 $W
i=0
while "$CTL" status | grep -q '^view '; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "the daemon did not see the view die"
	sleep 0.1
done
URL2=$("$CTL" open "$NB") || fail "runtimectl open after the view died"
c=$(code "$URL2" -L -c "$T/jar2" -b "$T/jar2"); [ "$c" = 200 ] ||
    fail "the new view: $c"
ok "a view killed is started again by the next open"

# Idle: no page open for 3 s and the view exits; status says so.
kill $SSE 2>/dev/null
i=0
while "$CTL" status | grep -q '^view '; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "the view did not exit idle"
	sleep 0.1
done
ok "the view exits when no page is open"
