#!/bin/sh
# SPDX-License-Identifier: ISC
# Install what a fresh Debian 12 needs.
#
#   sh scripts/install-deps.sh --demo
#	to build and run runtimed and the demo: the compiler and autotools,
#	the libraries, one kernel (python3-ipykernel), nbformat (the demo
#	validates the notebook it saved) and Node.js for the official MCP
#	SDK client (scripts/demo.sh).
#   sh scripts/install-deps.sh --deb
#	to build the Debian package: the compiler, the libraries, dpkg-dev
#	and debhelper (scripts/build-deb.sh).
#   sh scripts/install-deps.sh
#	everything the tests use as well (scripts/test.sh): the three kernel
#	families the tests run on, python3 (ipykernel), xpython (xeus-python)
#	and ir (IRkernel); nbconvert and jupyter-server; Criterion; the
#	packaging tools (dpkg-buildpackage, debhelper and lintian for the
#	.deb, systemd-analyze and systemd-socket-activate, xmllint, man);
#	valgrind for the regression guard (make bench-guard); clang for
#	libFuzzer; chromium for the live view's browser tests, with
#	chromium-sandbox, its setuid sandbox where user namespaces are
#	not allowed (a chroot: the fresh CI root); the sqlite3
#	and strace commands; GNU time (tests/remote/badserver.sh's peak
#	RSS); curl; pandas and matplotlib for the realistic
#	job of the clients suite and bench/economy.mjs (a KeyError, a plot);
#	python3-plotly and libjs-vega for the figures chromium draws
#	(tests/worker/worker-figures.sh); python3-ipywidgets for the widget
#	views tests/worker/worker-outputs.sh reads;
#	jupyterhub and passwd (useradd) for tests/remote/hub.sh, whose
#	configurable-http-proxy comes from npm (scripts/test.sh); the
#	openssl command, which makes tests/remote/tls.sh's CA.  (TLS itself
#	is libssl-dev's libssl and libevent-dev's libevent_openssl.)
#
# A test that finds one of these missing skips, and fails under CI=true
# (tests/lib/skip.sh).  Idempotent: when everything is already installed
# it changes nothing and does not even refresh the package lists.  Runs
# apt-get as root, or through sudo for anyone else.
set -eu

BUILD="build-essential autoconf automake libtool pkg-config
libevent-dev libmsgpack-dev libzmq3-dev uuid-dev libssl-dev libjson-c-dev
libsqlite3-dev libpng-dev libjpeg62-turbo-dev libcmark-dev"
DEMO="$BUILD python3-ipykernel python3-nbformat ca-certificates"

TESTS="libcriterion-dev python3-jupyter-client
jupyter-client python3-zmq python3-nbconvert python3-debugpy xpython
r-cran-irkernel curl clang libclang-rt-dev valgrind dpkg-dev debhelper
lintian systemd libxml2-utils man-db groff-base chromium chromium-sandbox
python3-jupyter-server sqlite3 strace util-linux python3-pandas
python3-matplotlib jupyterhub passwd time openssl python3-plotly
libjs-vega python3-ipywidgets"

case "${1:-}" in
--demo)	PKGS=$DEMO; what="build and demo" ;;
--deb)	PKGS="$BUILD dpkg-dev debhelper"; what="package build" ;;
"")	PKGS="$DEMO $TESTS"; what="build and test" ;;
*)	echo "usage: install-deps.sh [--demo | --deb]" >&2; exit 2 ;;
esac

# Node for the end-to-end tests and the demo (the official MCP SDK).  A
# node already on PATH wins: NodeSource's nodejs ships its own npm and
# conflicts with Debian's npm package.
if [ "${1:-}" != --deb ] && ! command -v node >/dev/null 2>&1; then
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
	echo "install-deps: all $what dependencies are installed"
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
