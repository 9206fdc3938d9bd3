#!/bin/sh
# SPDX-License-Identifier: ISC
# fresh.sh: the Debian package on a fresh Debian 12.  debootstrap makes a
# minimal bookworm root (variant minbase, from Debian's mirror); the .deb
# built from this tree is installed there with "apt-get install ./DEB",
# which pulls its dependencies and the recommended python3-ipykernel as
# a new user's apt would; then, inside the root (chroot, with /proc and
# /dev mounted), a plain user runs /usr/bin/runtimed-mcp with no further
# step: one MCP session creates a notebook and runs a cell on the python3
# kernel (mcp-smoke.py).  Needs root, debootstrap and network access to
# Debian's mirror; takes several minutes, so it is "make check-fresh"
# and not part of the default suite.
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
cleanup() {
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
chroot "$R" sh -c 'id fresh >/dev/null 2>&1 || useradd -m fresh'
chroot "$R" su - fresh -c 'command -v runtimed-mcp' ||
    fail "runtimed-mcp is not on a new user's PATH"
chroot "$R" su - fresh -c 'runtimed-mcp --version' || fail "--version"
chroot "$R" su - fresh -c \
    'XDG_RUNTIME_DIR= timeout 240 python3 /tmp/mcp-smoke.py \
    /usr/bin/runtimed-mcp $HOME/first.ipynb' || fail "the first session"
echo "ok: a new user ran a cell through /usr/bin/runtimed-mcp"
chroot "$R" su - fresh -c 'runtimed stop' >/dev/null 2>&1 || :
