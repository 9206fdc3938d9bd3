#!/bin/bash
# SPDX-License-Identifier: ISC
# ci-fresh-root.sh: the README's test command on a fresh Debian 12, not
# on the machine it happens to run on (issue 35; decisions 049, 066);
# "sh scripts/test.sh" runs it when RUNTIMED_FRESH_ROOT=1, as .ci/run
# sets.  Each run makes a minimal bookworm
# root with mmdebstrap (minbase, plus sudo and git, as a user who cloned
# the repository has; the host's apt cache is shared with it both ways),
# clones this repository's HEAD into it, and runs "sh scripts/test.sh"
# there as a user who may sudo, with CI=true: a test that skips for want
# of what the install step installs fails (tests/lib/skip.sh).
#
# Needs root, or sudo, for mmdebstrap and chroot (it installs mmdebstrap
# when missing).  RUNTIMED_CI_KEEP=1 keeps the root (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
export CI=true
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
T0=$(date +%s)
say() {
	echo "== ci-fresh-root: $* (at $(( $(date +%s) - T0 )) s)"
}

# Where no root can be made here (no mmdebstrap to be had, no mounts in
# a container), the tests run on this machine, and the log says so.
R=
on_host() {
	say "no fresh root here: $*; scripts/test.sh runs on this machine"
	[ -z "$R" ] || release
	trap - EXIT
	RUNTIMED_FRESH_ROOT=0 exec sh scripts/test.sh
}

if ! command -v mmdebstrap >/dev/null 2>&1; then
	say "installing mmdebstrap"
	# A fresh machine may have no package lists yet.
	$SUDO apt-get update -qq >/dev/null || on_host "apt-get update failed"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    mmdebstrap >/dev/null || on_host "mmdebstrap cannot be installed"
fi
if ! $SUDO unshare -m true 2>/dev/null; then
	on_host "this machine allows no mount namespace (a container?)"
fi

CACHE=/var/cache/apt/archives
# Not under /tmp: the root gets a tmpfs of its own there.
R=$($SUDO mktemp -d /var/tmp/runtimed-ci.XXXXXX)
release() {
	# Whatever a test left running in the root holds its mounts.
	for p in /proc/[0-9]*; do
		[ "$($SUDO readlink "$p/root" 2>/dev/null)" = "$R" ] &&
		    $SUDO kill -9 "${p#/proc/}" 2>/dev/null
	done
	sleep 1
	$SUDO umount -R "$R/proc" "$R/sys" "$R/dev" "$R/tmp" \
	    "$R/var/cache/apt/archives" 2>/dev/null || true
	if [ "${RUNTIMED_CI_KEEP:-0}" = 1 ]; then
		echo "ci-fresh-root: the root is kept at $R"
	else
		$SUDO rm -rf --one-file-system "$R"
	fi
}
cleanup() {
	rc=$?
	release
	exit $rc
}
trap cleanup EXIT
# A run stopped from outside (a CI timeout) releases its root too.
trap 'exit 1' INT TERM

say "mmdebstrap: a minimal bookworm root in $R"
# The host's package cache is bound into the root while it is made and
# while the tests install their dependencies, so nothing is fetched twice.
$SUDO mmdebstrap --quiet --variant=minbase --include=sudo,git,ca-certificates \
    --setup-hook="mkdir -p \"\$1$CACHE\" && mount --bind $CACHE \"\$1$CACHE\"" \
    --customize-hook="umount \"\$1$CACHE\"" \
    bookworm "$R" \
    "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian bookworm-updates main" \
    "deb http://deb.debian.org/debian-security bookworm-security main" ||
    on_host "mmdebstrap could not make the root"

say "a user with sudo, and $(git -C "$SRC" rev-parse --short HEAD) cloned"
$SUDO chroot "$R" useradd -m -s /bin/bash ci
echo "ci ALL=(ALL) NOPASSWD: ALL" | $SUDO tee "$R/etc/sudoers.d/ci" >/dev/null
$SUDO chmod 440 "$R/etc/sudoers.d/ci"
# This machine's network as it is: its resolver, and the certificate
# authorities it added (a proxy that inspects TLS, say), which npm and
# Node must trust in the root too.
$SUDO cp /etc/resolv.conf "$R/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost\n' \
    "$(hostname)" | $SUDO tee "$R/etc/hosts" >/dev/null
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	$SUDO cp /usr/local/share/ca-certificates/*.crt \
	    "$R/usr/local/share/ca-certificates/"
	$SUDO chroot "$R" update-ca-certificates >/dev/null
fi
$SUDO git clone -q --no-hardlinks "$SRC" "$R/home/ci/runtimed"
$SUDO chroot "$R" chown -R ci:ci /home/ci/runtimed

{ $SUDO mount -t proc proc "$R/proc" &&
    $SUDO mount --rbind /sys "$R/sys" &&
    $SUDO mount --rbind /dev "$R/dev" &&
    $SUDO mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" &&
    $SUDO mount --bind "$CACHE" "$R$CACHE"; } ||
    on_host "the root's file systems cannot be mounted"

say "sh scripts/test.sh in the root, as user ci"
$SUDO chroot --userspec=ci:ci "$R" /usr/bin/env -i HOME=/home/ci USER=ci \
    LOGNAME=ci PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 CI=true \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    sh -c 'cd /home/ci/runtimed && sh scripts/test.sh'
say "passed"
