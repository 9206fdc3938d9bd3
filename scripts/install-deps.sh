#!/bin/sh
# SPDX-License-Identifier: ISC
# Install what a fresh Debian 12 needs to build, test and run runtimed,
# with the three kernel families the tests run on: python3 (ipykernel),
# xpython (xeus-python) and ir (IRkernel); and what the packaging tests
# use (dpkg-buildpackage, debhelper and lintian for the .deb,
# systemd-analyze and systemd-socket-activate, xmllint, man); valgrind for
# the regression guard (make bench-guard); cmark for the live view's
# markdown, chromium for its browser tests, jupyter-server for the
# remote-domain tests, and pandas and matplotlib for the realistic job of
# the clients suite and bench/economy.mjs (a KeyError, a plot).
# Idempotent: when everything is already installed it changes nothing and
# does not even refresh the package lists.  Runs apt-get as root, or
# through sudo for anyone else.
set -eu

PKGS="build-essential autoconf automake libtool pkg-config
libevent-dev libmsgpack-dev libzmq3-dev uuid-dev libcriterion-dev
libssl-dev libjson-c-dev libsqlite3-dev libpng-dev libjpeg62-turbo-dev
python3-ipykernel python3-nbformat python3-jupyter-client jupyter-client
python3-zmq python3-nbconvert python3-debugpy xpython r-cran-irkernel
ca-certificates curl clang libclang-rt-dev valgrind
dpkg-dev debhelper lintian systemd libxml2-utils man-db groff-base
libcmark-dev chromium python3-jupyter-server python3-pandas python3-matplotlib"

# Node for the end-to-end tests and the demo (the official MCP SDK).  A
# node already on PATH wins: NodeSource's nodejs ships its own npm and
# conflicts with Debian's npm package.
if ! command -v node >/dev/null 2>&1; then
	PKGS="$PKGS nodejs npm"
fi

missing=
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all build and test dependencies are installed"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "install-deps: need root or sudo to install:$missing" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends $missing >/dev/null
echo "install-deps: done"
