#!/bin/sh
# SPDX-License-Identifier: ISC
# hub.sh: notebooks on JupyterHub user servers, against the real thing
# (issue 38): Debian's jupyterhub 3.0 with configurable-http-proxy (npm,
# pinned in tests/remote/package.json) on 127.0.0.1, the dummy
# authenticator, two local users made here (useradd; root or sudo:
# tests/lib/root.sh), each
# user's Jupyter Server 1.23 started by the hub (LocalProcessSpawner),
# hub API tokens with one scope (access:servers!user=NAME).  Then
# tests/remote/hub.py drives the real worker, daemon and
# runtimed-agent-remote through a domain at /user/NAME/: the tool set,
# the faults (the proxy killed and restarted by the hub, the hub
# restarted, the user's server stopped and started, token rotation) and
# each user confined to their own server (403 across users).
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/lib/root.sh"
need_root "it makes two local users with useradd and runs JupyterHub's LocalProcessSpawner" "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"

command -v useradd >/dev/null 2>&1 || skip_missing "useradd (passwd)"
$PY -c 'import jupyterhub' 2>/dev/null || skip_missing "jupyterhub"
command -v jupyterhub-singleuser >/dev/null 2>&1 ||
    skip_missing "jupyterhub-singleuser (jupyterhub)"
CHP=$(cd "${srcdir:-.}/tests/remote" && pwd)/node_modules/.bin/configurable-http-proxy
[ -x "$CHP" ] || skip_missing "configurable-http-proxy (npm ci in tests/remote)"

# Two users of our own; homes outside $T (0700), which they cannot enter.
HOMES=$(mktemp -d /tmp/runtimed-hub.XXXXXX)
chmod 755 "$HOMES"
tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
UA=rtdh${tag}a
UB=rtdh${tag}b
hub_cleanup() {
	[ -n "${HUBPY:-}" ] && kill "$HUBPY" 2>/dev/null
	for u in "$UA" "$UB"; do
		id "$u" >/dev/null 2>&1 || continue
		# Only what runs as the users this test made.
		pids=$(ps -o pid= -u "$u" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		sleep 0.2
		userdel -r "$u" >/dev/null 2>&1 || userdel "$u" >/dev/null 2>&1
	done
	rm -rf "$HOMES"
	stop_server
	cleanup
}
trap hub_cleanup EXIT
for u in "$UA" "$UB"; do
	useradd -m -d "$HOMES/$u" -s /bin/sh "$u" ||
	    fail "useradd $u"
done

export RUNTIMED_REMOTE_WATCH_MS=500
# A lost kernel WebSocket's window: past a proxy the hub restarts
# (within a second here) and a hub restart (a few seconds), short of the
# test's patience when the user's server is stopped.
export RUNTIMED_REMOTE_REJOIN_MS=15000
start_daemon --warm-pool 0 -v
export HUB_CHP=$CHP HUB_USERS="$UA $UB" HUB_HOMES=$HOMES
$PY "${srcdir:-.}/tests/remote/hub.py" "$top_builddir" "$T" "$CTL" &
HUBPY=$!
wait $HUBPY || { rc=$?; HUBPY=; tail -n 40 "$T/hub/hub.log" 2>/dev/null;
    fail "hub.py ($rc)"; }
HUBPY=
grep -q "answers not as itself" "$T/daemon.log" ||
    fail "the agent never waited out the proxy or the hub"
ok "JupyterHub: the tool set through a domain, its faults, two users"
