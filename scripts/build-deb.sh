#!/bin/sh
# SPDX-License-Identifier: ISC
# Build the Debian package from this tree: copy the sources (no build
# directories, no node_modules) to a scratch tree, put packaging/debian
# there as debian/, and run "dpkg-buildpackage -us -uc -b".  The .deb
# (and .buildinfo, .changes) land in OUTDIR (default build/deb).
# Installs what that needs when it is missing (scripts/install-deps.sh
# --deb: the compiler, the libraries, dpkg-dev and debhelper), as root or
# through sudo.
#	sh scripts/build-deb.sh [OUTDIR]
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# A fresh machine stopped at "dpkg-buildpackage: not found" (issue 35).
sh "$ROOT/scripts/install-deps.sh" --deb
OUT=${1:-$ROOT/build/deb}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/runtimed-deb.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/runtimed"
# What a fresh checkout has, and no more.
tar -C "$ROOT" -cf - --exclude=./build --exclude=node_modules \
    --exclude=.git --exclude=autom4te.cache --exclude=./debian \
    --exclude=./_build --exclude="./runtimed-[0-9]*" \
    --exclude=Makefile.in --exclude=./configure --exclude=./configure~ \
    --exclude=./aclocal.m4 --exclude=./config.status --exclude=./config.log \
    --exclude=./Makefile --exclude=./m4 --exclude=./etc . |
    tar -C "$W/runtimed" -xf -
cp -r "$ROOT/packaging/debian" "$W/runtimed/debian"
cd "$W/runtimed"
DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-"nocheck parallel=2"} \
    dpkg-buildpackage -us -uc -b >"$W/build.log" 2>&1 || {
	tail -n 60 "$W/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed" >&2
	exit 1
}
cp "$W"/*.deb "$W"/*.buildinfo "$W"/*.changes "$OUT"/
ls "$OUT"/*.deb
