#!/bin/sh
# SPDX-License-Identifier: ISC
# sticky.sh: another local user's symbolic link in a sticky directory
# others can write (as /tmp) is never followed (issue 36, item 5), as
# fs.protected_symlinks would refuse it, whatever that sysctl says here:
# export_notebook path= through a link to the victim's authorized_keys,
# save_notebook path= through a dangling link into the victim's home,
# connect_notebook through a link to a private notebook, download_file
# and upload_file through a linked directory.  A real second user is made
# with useradd; the test needs root (tests/lib/root.sh).  The
# user's own link in the same directory is still followed.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 120 "$0" "$@"
. "${srcdir:-.}/tests/lib/root.sh"
need_root "it makes a second user with useradd" "$0" "$@"
command -v useradd >/dev/null && command -v setpriv >/dev/null || {
	echo "SKIP: sticky.sh needs useradd and setpriv"
	exit 77
}
. "${srcdir:-.}/tests/ctl/lib.sh"

U=rtdsticky$$
useradd -M -N -s /usr/sbin/nologin "$U" || fail "useradd $U"
trap 'userdel "$U" 2>/dev/null; cleanup' EXIT
as_other() {
	setpriv --reuid="$U" --regid=65534 --clear-groups "$@"
}

start_daemon --warm-pool 0 --no-autosave -v
chmod 711 "$T"
mkdir -m 1777 "$T/tmp"
mkdir -p -m 700 "$T/victim/.ssh"
echo "ssh-ed25519 AAAA victim" >"$T/victim/.ssh/authorized_keys"
chmod 600 "$T/victim/.ssh/authorized_keys"
keys=$(sha256sum "$T/victim/.ssh/authorized_keys")
mkdir -m 700 "$T/nb"
/usr/bin/python3 - "$T/nb/nb.ipynb" "$T/victim/private.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell("print('attacker-chosen line')")]
nbformat.write(nb, sys.argv[1])
nb.cells = [nbformat.v4.new_code_cell("SECRET = 'hunter2'")]
nbformat.write(nb, sys.argv[2])
PY
id=$("$CTL" --json call connect_notebook path="$T/nb/nb.ipynb" | jq_py 'j["notebook_id"]') ||
    fail "connect"

# The other user's links.
as_other ln -s "$T/victim/.ssh/authorized_keys" "$T/tmp/report.py" ||
    fail "the other user cannot make a link"
as_other ln -s "$T/victim/notes.ipynb" "$T/tmp/notes.ipynb"
as_other ln -s "$T/victim/private.ipynb" "$T/tmp/private.ipynb"
as_other ln -s "$T/victim/.ssh" "$T/tmp/d"
[ "$(stat -c %U "$T/tmp/report.py")" = "$U" ] || fail "the link is not $U's"

out=$("$CTL" call export_notebook notebook_id="$id" format=python \
    path="$T/tmp/report.py" overwrite=true 2>&1) &&
    fail "export through another user's link: $out"
[ "$(sha256sum "$T/victim/.ssh/authorized_keys")" = "$keys" ] ||
    fail "export wrote the victim's authorized_keys"
echo "$out" | grep -q "is a symbolic link of another user (uid [0-9]*) in the shared directory $T/tmp: not followed" ||
    fail "export: $out"
ok "export_notebook path= through another user's link: $out"

out=$("$CTL" call save_notebook notebook_id="$id" path="$T/tmp/notes.ipynb" 2>&1) &&
    fail "save through another user's dangling link: $out"
[ -e "$T/victim/notes.ipynb" ] && fail "save created a file in the victim's home"
echo "$out" | grep -q "not followed" || fail "save: $out"
ok "save_notebook path= through a dangling link: $out"

out=$("$CTL" call connect_notebook path="$T/tmp/private.ipynb" 2>&1) &&
    fail "connect through another user's link: $out"
echo "$out" | grep -q hunter2 && fail "the private notebook was read"
echo "$out" | grep -q "not followed" || fail "connect: $out"
ok "connect_notebook through another user's link: refused"

out=$("$CTL" call download_file notebook_id="$id" kernel_path="$T/nb/nb.ipynb" \
    host_path="$T/tmp/d/authorized_keys" overwrite=true 2>&1) &&
    fail "download through another user's linked directory: $out"
[ "$(sha256sum "$T/victim/.ssh/authorized_keys")" = "$keys" ] ||
    fail "download wrote the victim's authorized_keys"
echo "$out" | grep -q "not followed" || fail "download: $out"
out=$("$CTL" call upload_file notebook_id="$id" host_path="$T/tmp/d/authorized_keys" \
    kernel_path="$T/nb/copy" 2>&1) &&
    fail "upload through another user's linked directory: $out"
[ -e "$T/nb/copy" ] && fail "upload copied the victim's file"
echo "$out" | grep -q "not followed" || fail "upload: $out"
ok "download_file and upload_file through a linked directory: refused"

out=$("$CTL" open "$T/tmp/private.ipynb" 2>&1) &&
    fail "runtimectl open through another user's link: $out"
echo "$out" | grep -q "not followed" || fail "runtimectl open: $out"
ok "runtimectl open through another user's link: refused"

# Our own link in the same directory is followed (as the kernel does).
ln -s "$T/nb/mine.py" "$T/tmp/mine.py"
out=$("$CTL" call export_notebook notebook_id="$id" format=python \
    path="$T/tmp/mine.py" 2>&1) || fail "export through our own link: $out"
grep -q "attacker-chosen line" "$T/nb/mine.py" || fail "our own link not written through"
ok "our own link in the sticky directory is followed"
