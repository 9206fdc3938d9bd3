#!/bin/sh
# SPDX-License-Identifier: ISC
# units.sh: the service manager files.  "make install prefix=DIR" puts
# the systemd user units in DIR/lib/systemd/user, naming DIR/bin, and
# "systemd-analyze verify" finds nothing to say about them (77 without
# systemd-analyze); the launchd LaunchAgent is valid against the plist
# DTD (packaging/launchd/PropertyList-1.0.dtd; Debian ships none of
# Apple's) and has the keys launchd needs for socket activation.
set -u
top_builddir=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
T=$(mktemp -d /tmp/runtimed-units.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The plist, as "make install" writes it on macOS.
sed "s|@bindir@|$T/inst/bin|g" \
    "$srcdir/packaging/launchd/org.runtimed.runtimed.plist.in" \
    >"$T/org.runtimed.runtimed.plist"
# The DOCTYPE names Apple's DTD by URL: map it to ours, never fetch it.
cat >"$T/catalog.xml" <<XML
<?xml version="1.0"?>
<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">
  <public publicId="-//Apple//DTD PLIST 1.0//EN"
      uri="file://$(cd "$srcdir/packaging/launchd" && pwd)/PropertyList-1.0.dtd"/>
</catalog>
XML
XML_CATALOG_FILES=$T/catalog.xml xmllint --nonet --noout --valid \
    "$T/org.runtimed.runtimed.plist" >"$T/xmllint.out" 2>&1 ||
    { cat "$T/xmllint.out"; fail "xmllint: the plist is not valid"; }
[ -s "$T/xmllint.out" ] && { cat "$T/xmllint.out"; fail "xmllint warned"; }
python3 - "$T/org.runtimed.runtimed.plist" "$T/inst/bin/runtimed" <<'PY' ||
import plistlib, sys
with open(sys.argv[1], "rb") as f:
    p = plistlib.load(f)
assert p["Label"] == "org.runtimed.runtimed", p
assert p["ProgramArguments"] == [sys.argv[2], "-D"], p["ProgramArguments"]
l = p["Sockets"]["Listeners"]
assert l["SecureSocketWithKey"] == "RUNTIMED_SOCKET", l
assert l["SockFamily"] == "Unix" and l["SockType"] == "stream", l
assert "KeepAlive" not in p and not p.get("RunAtLoad"), p
PY
    fail "the plist lacks what launchd needs"
echo "ok: the LaunchAgent plist is valid and socket-activated"

make -C "$top_builddir" install prefix="$T/inst" >"$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "make install prefix=$T/inst"; }
U=$T/inst/lib/systemd/user
[ -f "$U/runtimed.service" ] && [ -f "$U/runtimed.socket" ] ||
    fail "make install put no units in $U"
grep -qx "ExecStart=$T/inst/bin/runtimed -D" "$U/runtimed.service" ||
    fail "runtimed.service does not run $T/inst/bin/runtimed"
echo "ok: make install put the units in lib/systemd/user"

. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip_missing "units: no systemd-analyze"
fi
# --man=no: the man pages named in Documentation= need not be installed;
# a user manager needs a runtime directory (%t), a private one here.
mkdir -m 700 "$T/xdg"
( cd "$U" && XDG_RUNTIME_DIR=$T/xdg systemd-analyze --user --man=no verify \
    "$U/runtimed.socket" "$U/runtimed.service" ) >"$T/verify.out" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ -s "$T/verify.out" ]; then
	cat "$T/verify.out"
	fail "systemd-analyze verify (exit $rc)"
fi
echo "ok: systemd-analyze verify is clean"
