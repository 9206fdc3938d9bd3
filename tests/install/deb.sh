#!/bin/sh
# SPDX-License-Identifier: ISC
# deb.sh: the Debian package.  scripts/build-deb.sh builds it with
# "dpkg-buildpackage -us -uc -b"; lintian reports no error or warning;
# the .deb is unpacked with dpkg-deb -x into a scratch root, the root is
# moved, and the moved usr/bin/runtimed-mcp runs a cell on a real python3
# kernel (mcp-smoke.py), finding its worker, daemon and agent relative
# to itself.  Skips (77) without dpkg-buildpackage or debhelper, or with
# RUNTIMED_SKIP_DEB=1 (scripts/test.sh sets it for the distcheck and
# sanitizer passes, which would build the same package again).
set -u
srcdir=${srcdir:-.}
unset RUNTIMED_LIBEXEC_DIR
export PYDEVD_DISABLE_FILE_VALIDATION=1
if [ "${RUNTIMED_SKIP_DEB:-0}" = 1 ]; then
	echo "deb: skipped (RUNTIMED_SKIP_DEB=1)"
	exit 77
fi
. "${srcdir:-.}/tests/lib/skip.sh"
for c in dpkg-buildpackage dh dpkg-deb; do
	if ! command -v $c >/dev/null 2>&1; then
		skip_missing "deb: no $c"
	fi
done
T=$(mktemp -d /tmp/runtimed-deb-test.XXXXXX)
export RUNTIMED_SOCKET=$T/run/runtimed.sock
export RUNTIMED_STATE_DIR=$T/state
cleanup() {
	[ -x "$T/moved/usr/bin/runtimed" ] &&
	    "$T/moved/usr/bin/runtimed" stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*" >&2
	for f in "$RUNTIMED_STATE_DIR"/runtimed.log \
	    "$RUNTIMED_STATE_DIR"/logs/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
	done
	exit 1
}

t0=$(date +%s)
nice sh "$srcdir/scripts/build-deb.sh" "$T/out" >"$T/build.out" 2>&1 ||
    { cat "$T/build.out"; fail "scripts/build-deb.sh"; }
deb=$(ls "$T"/out/runtimed_*.deb)
echo "ok: built $(basename "$deb") in $(( $(date +%s) - t0 )) s"

if command -v lintian >/dev/null 2>&1; then
	lintian "$deb" >"$T/lintian.out" 2>&1
	if grep -E '^[EW]: ' "$T/lintian.out"; then
		fail "lintian: fix these, or explain them in" \
		    "packaging/debian/README"
	fi
	echo "ok: lintian reports no error or warning"
else
	echo "deb: lintian not installed; not run"
fi

dpkg-deb -f "$deb" Recommends | grep -q python3-ipykernel ||
    fail "the package does not recommend python3-ipykernel"
dpkg-deb -f "$deb" Depends | grep -q ipykernel &&
    fail "the package requires a kernel"
dpkg-deb -x "$deb" "$T/root" || fail "dpkg-deb -x"
mv "$T/root" "$T/moved"
P=$T/moved/usr
for f in bin/runtimed bin/runtimed-mcp libexec/runtimed/runtimed-mcp-worker \
    libexec/runtimed/runtimed-agent libexec/runtimed/runtimed-web \
    share/man/man8/runtimed-web.8.gz \
    share/man/man8/runtimed-agent-remote.8.gz \
    libexec/runtimed/runtimed-agent-remote lib/systemd/user/runtimed.service \
    lib/systemd/user/runtimed.socket; do
	[ -e "$P/$f" ] || fail "the package lacks /usr/$f"
done
"$P/bin/runtimed-mcp" --version >/dev/null || fail "runtimed-mcp --version"

if ! jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 '; then
	skip_missing "deb: the cell run: no python3 kernel"
fi
timeout 240 python3 "$srcdir/tests/install/mcp-smoke.py" \
    "$P/bin/runtimed-mcp" "$T/smoke.ipynb" || fail "the moved package"
echo "ok: the unpacked, moved package ran a cell"
