#!/bin/sh
# SPDX-License-Identifier: ISC
# fresh.sh: the Debian package on a fresh Debian 12.  debootstrap makes a
# minimal bookworm root (variant minbase, from Debian's mirror); the .deb
# built from this tree is installed there with "apt-get install ./DEB",
# which pulls its dependencies and the recommended python3-ipykernel as
# a new user's apt would; then, inside the root (chroot, with /proc and
# /dev mounted), a plain user runs /usr/bin/runtimed-mcp with no further
# step: one MCP session creates a notebook and runs a cell on the python3
# kernel (mcp-smoke.py).  Then, where systemd-nspawn is (Debian's
# systemd-container), systemd itself: the root gets systemd and a user
# session (dbus-user-session, libpam-systemd), boots as a container, the
# user enables runtimed.socket, and runtimed-mcp runs a cell again
# through the daemon systemd starts on the socket (Type=notify, the
# unit's hardening); the daemon answering is the unit's main process,
# also after "systemctl --user stop runtimed.service" leaves only the
# socket.  Needs root, debootstrap and network access to Debian's
# mirror; takes 10 to 20 minutes, so it is "make check-fresh" and not
# part of the default suite.
#	sh tests/install/fresh.sh [DEB]
# RUNTIMED_FRESH_ROOT keeps the root there (reused when it has one).
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
MIRROR=${RUNTIMED_FRESH_MIRROR:-http://deb.debian.org/debian}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || { echo "fresh: skipped: needs root"; exit 77; }
command -v debootstrap >/dev/null 2>&1 ||
    { echo "fresh: skipped: no debootstrap (apt-get install debootstrap)"; \
    exit 77; }
T=$(mktemp -d /tmp/runtimed-fresh.XXXXXX)
R=${RUNTIMED_FRESH_ROOT:-$T/root}
# Processes left in the root (a daemon the user started in the chroot).
kill_root() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] &&
		    kill -9 "${p#/proc/}" 2>/dev/null
	done
	:
}
cleanup() {
	[ -n "${init:-}" ] && nsenter -t "$init" -a systemctl poweroff \
	    >/dev/null 2>&1 && sleep 3
	kill_root
	for m in proc dev/pts dev; do
		mountpoint -q "$R/$m" 2>/dev/null && umount -l "$R/$m"
	done
	[ -n "${RUNTIMED_FRESH_ROOT:-}" ] || rm -rf "$R"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

deb=${1:-}
if [ -z "$deb" ]; then
	t0=$(date +%s)
	nice sh scripts/build-deb.sh "$T/out" >"$T/build.out" 2>&1 ||
	    { cat "$T/build.out"; fail "scripts/build-deb.sh"; }
	deb=$(ls "$T"/out/runtimed_*.deb)
	echo "ok: built $(basename "$deb") in $(( $(date +%s) - t0 )) s"
fi

if [ ! -x "$R/usr/bin/apt-get" ]; then
	t0=$(date +%s)
	debootstrap --variant=minbase bookworm "$R" "$MIRROR" \
	    >"$T/debootstrap.out" 2>&1 ||
	    { tail -n 30 "$T/debootstrap.out"; fail "debootstrap"; }
	echo "ok: debootstrap bookworm minbase in $(( $(date +%s) - t0 )) s"
fi
mount -t proc proc "$R/proc"
mount --bind /dev "$R/dev"
mount --bind /dev/pts "$R/dev/pts"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || :
cp "$deb" "$R/tmp/"
cp tests/install/mcp-smoke.py "$R/tmp/"

t0=$(date +%s)
chroot "$R" sh -c 'apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    /tmp/'"$(basename "$deb")" >"$T/apt.out" 2>&1 ||
    { tail -n 30 "$T/apt.out"; fail "apt-get install ./$(basename "$deb")"; }
echo "ok: apt-get install of the .deb in $(( $(date +%s) - t0 )) s," \
    "$(grep -c '^Setting up' "$T/apt.out") packages set up"
chroot "$R" dpkg -s python3-ipykernel >/dev/null 2>&1 ||
    fail "the recommended python3-ipykernel was not installed"

# A plain user, as one who just installed it: no environment of ours.
# (A kept root's user from an earlier run goes first, with its state.)
kill_root
chroot "$R" sh -c 'userdel -r fresh >/dev/null 2>&1; useradd -m fresh'
chroot "$R" su - fresh -c 'command -v runtimed-mcp' ||
    fail "runtimed-mcp is not on a new user's PATH"
chroot "$R" su - fresh -c 'runtimed-mcp --version' || fail "--version"
chroot "$R" su - fresh -c \
    'XDG_RUNTIME_DIR= timeout 240 python3 /tmp/mcp-smoke.py \
    /usr/bin/runtimed-mcp $HOME/first.ipynb' || fail "the first session"
echo "ok: a new user ran a cell through /usr/bin/runtimed-mcp"
chroot "$R" su - fresh -c 'runtimed stop' >/dev/null 2>&1 || :

command -v systemd-nspawn >/dev/null 2>&1 ||
    { echo "fresh: systemd part skipped: no systemd-nspawn" \
    "(apt-get install systemd-container)"; exit 0; }
chroot "$R" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    systemd systemd-sysv dbus dbus-user-session libpam-systemd' \
    >"$T/apt-systemd.out" 2>&1 ||
    { tail -n 30 "$T/apt-systemd.out"; fail "apt-get install systemd"; }
# Lingering: the user's systemd runs without a login.
mkdir -p "$R/var/lib/systemd/linger"
: >"$R/var/lib/systemd/linger/fresh"
cp tests/install/mcp-smoke.py "$R/home/fresh/"
for m in proc dev/pts dev; do umount -l "$R/$m"; done
setsid systemd-nspawn -q -D "$R" --register=no --keep-unit \
    --console=passive -b >"$T/nspawn.out" 2>&1 &
nspawn=$!
i=0
init=
while [ -z "$init" ]; do
	init=$(ps -o pid= --ppid "$nspawn" 2>/dev/null | tr -d ' ' | head -1)
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$T/nspawn.out"; fail "the container did not boot"; }
	[ -n "$init" ] || sleep 0.1
done
user() {
	nsenter -t "$init" -a su - fresh -c \
	    'export XDG_RUNTIME_DIR=/run/user/$(id -u); '"$1"
}
i=0
until user 'systemctl --user is-system-running --wait' >/dev/null 2>&1 ||
    user 'systemctl --user show -p ActiveState default.target' 2>/dev/null |
    grep -q '=active'; do
	i=$((i + 1))
	[ $i -gt 60 ] && fail "the user's systemd did not come up"
	sleep 1
done
user 'systemctl --user enable --now runtimed.socket' >/dev/null 2>&1 ||
    fail "systemctl --user enable --now runtimed.socket"
user 'timeout 240 python3 mcp-smoke.py /usr/bin/runtimed-mcp sd.ipynb' ||
    fail "a cell through the socket-activated daemon"
main=$(user 'systemctl --user show -p MainPID --value runtimed.service')
pid=$(user 'runtimed status' | sed -n 's/^pid //p')
[ -n "$pid" ] && [ "$main" = "$pid" ] ||
    fail "the daemon answering (pid $pid) is not the unit's ($main)"
echo "ok: runtimed.socket started runtimed.service (pid $main), which ran a cell"
user 'systemctl --user stop runtimed.service' >/dev/null 2>&1
user 'timeout 240 python3 mcp-smoke.py /usr/bin/runtimed-mcp sd2.ipynb' ||
    fail "a cell after stopping the service"
main=$(user 'systemctl --user show -p MainPID --value runtimed.service')
pid=$(user 'runtimed status' | sed -n 's/^pid //p')
[ -n "$pid" ] && [ "$main" = "$pid" ] ||
    fail "after a stop, a worker's start did not yield to the socket" \
    "(daemon $pid, unit $main)"
echo "ok: after a stop, the socket started the unit again (pid $main)"
