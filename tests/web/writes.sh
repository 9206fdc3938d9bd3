#!/bin/sh
# SPDX-License-Identifier: ISC
# writes.sh: what the live page may write, with curl (decisions 079 and
# 085).  A write (edit, insert, run, run-all, resolve, revert) without the cookie, without
# the page's token or with another, from a foreign Origin, by GET, with a
# body over 64 KiB, with fields it does not take, or to a path that is no
# write, is refused and the notebook (its cells, their versions, its
# file) is unchanged.  An edit made on the version the page showed is
# applied and read back by runtimectl call; the same edit again, on a
# version someone changed since, is refused with a message and changes
# nothing; a cell is added below another; resolving where there is no
# conflict is refused.  The page lists the batches with who made them;
# reverting an agent's batch puts its cell back; one whose cell someone
# changed since is refused (undo_conflict, named), as are one undone
# already and one not there, each changing nothing.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"

. "${srcdir:-.}/tests/lib/skip.sh"
command -v curl >/dev/null 2>&1 || skip_missing "no curl"
[ -x "$top_builddir/runtimed-web" ] || { echo "skip: no runtimed-web"; exit 77; }
start_daemon

NB=$T/nb.ipynb
/usr/bin/python3 - "$NB" <<'PY' || fail "cannot write the notebook"
import json, sys
cells = [
 {"cell_type": "markdown", "id": "md1", "metadata": {}, "source": "# Heading"},
 {"cell_type": "code", "id": "code1", "metadata": {}, "execution_count": None,
  "source": "x = 1", "outputs": []}]
json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells},
    open(sys.argv[1], "w"))
PY

URL=$("$CTL" open "$NB") || fail "runtimectl open failed"
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
ID=${URL##*nb=}
SECRET=${URL#*s=}; SECRET=${SECRET%%&*}
BASE=http://127.0.0.1:$PORT
P=/v$(printf %s "$SECRET" | sha256sum | cut -c1-16)
J=$T/jar
W=$BASE$P/nb/$ID

# code URL [curl options]: the status code; the body in $T/body.
code() {
	u=$1; shift
	curl -s -o "$T/body" -w '%{http_code}' "$@" "$u"
}
# The notebook as the daemon has it: [[id, version, type, source]...].
cells() {
	"$CTL" --json call inspect_notebook path="$NB" view=source |
	    jq_py 'json.dumps([[c["cell_id"], c["version"], c["cell_type"], c["source"]] for c in j["cells"]])'
}
c=$(code "$URL" -c "$J"); [ "$c" = 303 ] || fail "open: $c"
c=$(code "$W" -b "$J"); [ "$c" = 200 ] || fail "page: $c"
TOKEN=$(sed -n 's/.*name="rtd-token" content="\([^"]*\)".*/\1/p' "$T/body")
[ -n "$TOKEN" ] || fail "no token in the page"
# The page's stream keeps the notebook joined, as a browser's would.
curl -s -N -b "$J" "$W/events" >"$T/sse" &
track $!
i=0
until grep -q '^event: reset' "$T/sse"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no reset event"; sleep 0.1
done
grep -q 'data-version=\\"[0-9a-f]\{8\}\\"' "$T/sse" ||
    fail "the cells carry no version: $(head -c 600 "$T/sse")"
grep -q 'data-src=\\"x = 1\\"' "$T/sse" || fail "the cells carry no source"

S0=$(cells) || fail "inspect_notebook"
V=$(printf %s "$S0" | jq_py '[c[1] for c in j if c[0] == "code1"][0]')
SUM0=$(md5sum <"$NB")
ok "the page: cells with their versions and sources ($V)"

# Each write refused: no cookie, no token, a wrong or another notebook's
# token, a foreign Origin, GET, a body over 64 KiB.
EDIT="cell_id=code1&version=$V&source=evil"
for w in edit insert run run-all resolve revert; do
	f="cell_id=code1&version=$V&source=evil&after=code1&cell_type=code&take=disk&batch_id=1"
	c=$(code "$W/$w" -d "token=$TOKEN&$f"); [ "$c" = 403 ] ||
	    fail "$w without the cookie: $c"
	c=$(code "$W/$w" -b "$J" -d "$f"); [ "$c" = 403 ] ||
	    fail "$w without a token: $c"
	c=$(code "$W/$w" -b "$J" -d "token=${TOKEN}0&$f"); [ "$c" = 403 ] ||
	    fail "$w with a wrong token: $c"
	c=$(code "$W/$w" -b "$J" -d "token=$TOKEN&$f" \
	    -H "Origin: http://evil.example"); [ "$c" = 403 ] ||
	    fail "$w from a foreign origin: $c"
	c=$(code "$W/$w" -b "$J" -H "Origin: http://127.0.0.1:1$PORT" \
	    -d "token=$TOKEN&$f"); [ "$c" = 403 ] ||
	    fail "$w from another port's origin: $c"
	c=$(code "$W/$w?token=$TOKEN&$f" -b "$J"); [ "$c" = 404 ] ||
	    fail "GET $w: $c"
done
c=$(code "$BASE$P/nb/00000000-0000-0000-0000-000000000000/edit" -b "$J" \
    -d "token=$TOKEN&$EDIT"); [ "$c" = 403 ] ||
    fail "this page's token on another notebook: $c"
{ printf 'token=%s&%s' "$TOKEN" "$EDIT"; head -c 70000 /dev/zero |
    tr '\0' a; } >"$T/bigbody"
c=$(code "$W/edit" -b "$J" -H "Origin: $BASE" --data-binary @"$T/bigbody")
case $c in 4*) ;; *) fail "a body over 64 KiB: $c";; esac
ok "no cookie, no token, a wrong one, a foreign Origin, GET, 64 KiB+: refused"

# Paths that are no write, and fields a write does not take.
for w in delete save write-file move clear ../edit edit/x; do
	c=$(code "$W/$w" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&$EDIT" \
	    --path-as-is); [ "$c" = 404 ] || fail "POST $w: $c"
done
bad() {
	w=$1; shift
	c=$(code "$W/$w" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&$1")
	[ "$c" = 400 ] || fail "$w $1: $c $(cat "$T/body")"
}
bad edit "cell_id=code1&source=y"
bad edit "cell_id=code1&version=zzzzzzzz&source=y"
bad edit "cell_id=code1&version=${V}0&source=y"
bad edit "version=$V&source=y"
bad edit "cell_id=../x&version=$V&source=y"
bad edit "cell_id=code1&version=$V"
bad edit "cell_id=code1&version=$V&source=%ff%fe"
bad insert "after=code1&cell_type=raw&source=y"
bad insert "cell_type=code&source=y"
bad insert "after=no%20such&cell_type=code&source=y"
bad run ""
bad resolve "cell_id=code1&take=all"
bad resolve "cell_id=code1"
grep -q "take: room, disk or both" "$T/body" || fail "no message: $(cat "$T/body")"
bad revert ""
bad revert "batch_id=0"
bad revert "batch_id=b1"
bad revert "batch_id=1x"
bad revert "batch_id=-1"
bad revert "batch_id=1234567890123456789"
grep -q "batch_id of a batch" "$T/body" || fail "no message: $(cat "$T/body")"
bad resolve "cell_id=code1"
grep -q "take: room, disk or both" "$T/body" || fail "no message: $(cat "$T/body")"
c=$(code "$W/run" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&cell_id=nope")
[ "$c" = 409 ] || fail "run of a cell not there: $c $(cat "$T/body")"
c=$(code "$W/resolve" -b "$J" -H "Origin: $BASE" \
    -d "token=$TOKEN&cell_id=code1&take=disk")
[ "$c" = 409 ] || fail "resolve with no conflict: $c $(cat "$T/body")"
ok "no other path, no other field: 404, 400 with what it needs, 409"

S1=$(cells) || fail "inspect_notebook"
[ "$S1" = "$S0" ] || fail "a refused write changed the notebook: $S0 -> $S1"
[ "$(md5sum <"$NB")" = "$SUM0" ] || fail "a refused write changed the file"
ok "after every refusal: the cells, their versions and the file unchanged"

# An edit on the version the page showed: applied, read back.
c=$(code "$W/edit" -b "$J" -H "Origin: $BASE" --data-urlencode "token=$TOKEN" \
    --data-urlencode cell_id=code1 --data-urlencode "version=$V" \
    --data-urlencode "source=x = 'from the page' & 2")
[ "$c" = 200 ] || fail "edit: $c $(cat "$T/body")"
[ "$(cat "$T/body")" = saved ] || fail "edit said: $(cat "$T/body")"
S2=$(cells)
printf %s "$S2" | jq_py '[c[3] for c in j if c[0] == "code1"][0]' |
    grep -qx "x = 'from the page' & 2" || fail "the edit is not read back: $S2"
ok "an edit on the page's version is applied and read back"

# The same version again: someone changed the cell since; refused.
c=$(code "$W/edit" -b "$J" -H "Origin: $BASE" --data-urlencode "token=$TOKEN" \
    --data-urlencode cell_id=code1 --data-urlencode "version=$V" \
    --data-urlencode "source=stale")
[ "$c" = 409 ] || fail "a stale edit: $c $(cat "$T/body")"
grep -q "not applied" "$T/body" || fail "no message: $(cat "$T/body")"
[ "$(cells)" = "$S2" ] || fail "a stale edit changed the notebook"
ok "an edit on a version changed since: 409 \"$(cat "$T/body")\""

c=$(code "$W/insert" -b "$J" -H "Origin: $BASE" --data-urlencode "token=$TOKEN" \
    --data-urlencode after=md1 --data-urlencode cell_type=markdown \
    --data-urlencode "source=## Added on the page")
[ "$c" = 200 ] || fail "insert: $c $(cat "$T/body")"
S3=$(cells)
printf %s "$S3" | jq_py '"|".join(c[2] + ":" + c[3] for c in j)' |
    grep -qx "markdown:# Heading|markdown:## Added on the page|code:x = 'from the page' & 2" ||
    fail "the cell was not added below md1: $S3"
ok "a cell added below another"

# The batches: an agent's edit is listed with who made it; the person
# reverts it; a batch whose cell the page changed after is refused.
"$CTL" call edit_cells path="$NB" \
    'edits=[{"op":"edit","cell_id":"code1","source":"x = 10"}]' >/dev/null ||
    fail "the agent's edit"
batches() {
	"$CTL" --json call edit_cells path="$NB" undo=list |
	    jq_py 'json.dumps([[b["batch_id"], b.get("client", "you"), b["cell_ids"], b.get("undone_by")] for b in j["batches"]])'
}
L=$(batches) || fail "undo list"
B1=$(printf %s "$L" | jq_py 'j[0][0][1:]')
i=0
until grep "data-batch=\\\\\"$B1\\\\\"" "$T/sse" | grep -q 'class=\\"revert\\"'; do
	i=$((i + 1)); [ $i -gt 50 ] && fail "the page lists no batch b$B1: $L"
	sleep 0.1
done
ok "the page lists batch b$B1 with a Revert button ($L)"
S4=$(cells)
c=$(code "$W/revert" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&batch_id=$B1")
[ "$c" = 200 ] || fail "revert: $c $(cat "$T/body")"
grep -q "^reverted b$B1 as batch b[0-9]*$" "$T/body" || fail "revert said: $(cat "$T/body")"
printf %s "$(cells)" | jq_py '[c[3] for c in j if c[0] == "code1"][0]' |
    grep -qx "x = 'from the page' & 2" || fail "not reverted: $(cells)"
ok "an agent's batch reverted from the page: \"$(cat "$T/body")\""
c=$(code "$W/revert" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&batch_id=$B1")
[ "$c" = 409 ] || fail "a revert of an undone batch: $c $(cat "$T/body")"
grep -q "undone already" "$T/body" || fail "no message: $(cat "$T/body")"
c=$(code "$W/revert" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&batch_id=999999")
[ "$c" = 409 ] || fail "a revert of no batch: $c $(cat "$T/body")"
grep -q "no batch b999999" "$T/body" || fail "no message: $(cat "$T/body")"

"$CTL" call edit_cells path="$NB" \
    'edits=[{"op":"edit","cell_id":"code1","source":"x = 20"}]' >/dev/null ||
    fail "the agent's second edit"
B2=$(batches | jq_py 'j[0][0][1:]')
V2=$(cells | jq_py '[c[1] for c in j if c[0] == "code1"][0]')
c=$(code "$W/edit" -b "$J" -H "Origin: $BASE" --data-urlencode "token=$TOKEN" \
    --data-urlencode cell_id=code1 --data-urlencode "version=$V2" \
    --data-urlencode "source=x = 30")
[ "$c" = 200 ] || fail "the page's edit: $c $(cat "$T/body")"
S5=$(cells)
SUM5=$(md5sum <"$NB")
c=$(code "$W/revert" -b "$J" -H "Origin: $BASE" -d "token=$TOKEN&batch_id=$B2")
[ "$c" = 409 ] || fail "a revert of a batch changed since: $c $(cat "$T/body")"
grep -q "nothing was undone: cell code1 was changed after batch b$B2 by live page" \
    "$T/body" || fail "no message: $(cat "$T/body")"
[ "$(cells)" = "$S5" ] || fail "a refused revert changed the notebook"
ok "a revert of a batch someone changed since: 409 \"$(cat "$T/body")\""
