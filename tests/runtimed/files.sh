#!/bin/sh
# SPDX-License-Identifier: ISC
# files.sh: what the daemon does to files that are not its own.  A save
# never writes through a symlink planted where its temporary file could
# go; a 255-byte file name saves; a crash's leftover temporary files are
# removed on the next load (only ours), also one from the store; a symlinked notebook, dangling or
# not, is written through to its target; state files are 0600, and state
# or socket directories others can enter are refused with the fix; a
# peer of another uid is refused and logged.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/runtimed/lib.sh"
umask 022

# Directories others may enter: refused, and the message says the fix.
mkdir -m 755 "$T/open"
out=$(RUNTIMED_STATE_DIR=$T/open "$RUNTIMED" -D --warm-pool 0 2>&1) &&
    fail "a 0755 state directory was accepted"
want="state directory $T/open is readable by others (mode 0755): chmod 700 $T/open"
[ "$out" = "runtimed: $want" ] || fail "0755 state dir: $out"
out=$(RUNTIMED_STATE_DIR=$T/open "$RUNTIMED" --warm-pool 0 2>&1) &&
    fail "a 0755 state directory was accepted (daemonized)"
[ "$out" = "runtimed: $want" ] || fail "0755 state dir, daemonized: $out"
[ -z "$(ls -A "$T/open")" ] || fail "files created in a refused state dir"
ok "0755 state directory refused: $out"

mkdir -p "$T/sd" && chmod 700 "$T/sd"
mkdir -m 750 "$T/sock1"
out=$(RUNTIMED_STATE_DIR=$T/sd RUNTIMED_SOCKET=$T/sock1/s.sock \
    "$RUNTIMED" -D --warm-pool 0 2>&1) && fail "a 0750 socket dir was accepted"
echo "$out" | grep -qF "socket directory $T/sock1 is readable by others (mode 0750): chmod 700 $T/sock1" ||
    fail "0750 socket dir: $out"
ok "0750 socket directory refused: $out"

if [ "$(id -u)" = 0 ]; then
	mkdir -m 700 "$T/sock2"
	chown 65534 "$T/sock2"
	out=$(RUNTIMED_STATE_DIR=$T/sd RUNTIMED_SOCKET=$T/sock2/s.sock \
	    "$RUNTIMED" -D --warm-pool 0 2>&1) &&
	    fail "a socket dir of uid 65534 was accepted"
	echo "$out" | grep -qF "socket directory $T/sock2 is owned by uid 65534, not by you (uid 0): remove it" ||
	    fail "foreign socket dir: $out"
	ok "socket directory of another uid refused: $out"
fi

# A database and log an earlier version left 0644 are made 0600.
mkdir -m 700 "$RUNTIMED_STATE_DIR"
: >"$RUNTIMED_STATE_DIR/runtimed.db"
: >"$RUNTIMED_STATE_DIR/runtimed.log"
chmod 644 "$RUNTIMED_STATE_DIR/runtimed.db" "$RUNTIMED_STATE_DIR/runtimed.log"
"$RUNTIMED" -D -v --warm-pool 0 --kernel-keepalive 0 >"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
mkdir "$T/nb" "$T/other"
nb=$T/nb

# The old predictable temporary name, planted as a symlink to a victim.
echo "precious" >"$T/victim"
ln -s "$T/victim" "$nb/a.ipynb.runtimed-tmp-$D"
ln -s "$T/victim" "$nb/a.ipynb.tmp.$D"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/a.ipynb") ||
    fail "save next to a planted symlink: $out"
[ "$(cat "$T/victim")" = precious ] || fail "the save wrote through the planted link"
[ -L "$nb/a.ipynb.runtimed-tmp-$D" ] || fail "the planted link was replaced"
[ -f "$nb/a.ipynb" ] && [ ! -L "$nb/a.ipynb" ] || fail "a.ipynb not saved"
grep -q "saved by rtd-client" "$nb/a.ipynb" || fail "a.ipynb lacks the cell"
m=$(stat -c %a "$nb/a.ipynb")
[ "$m" = 644 ] || fail "a new notebook has mode $m, not 0644 under umask 022"
[ "$(ls -A "$nb" | grep -c '^\.rtd-')" = 0 ] || fail "temporary file left: $(ls -A "$nb")"
ok "a symlink at the old temporary name is not written through"

# The longest legal name.
long=$(printf 'n%.0s' $(seq 1 249)).ipynb
[ ${#long} = 255 ] || fail "test bug: name of ${#long} bytes"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/$long") ||
    fail "255-byte name: $out"
/usr/bin/python3 -c 'import nbformat,sys; nbformat.read(sys.argv[1], as_version=4)' \
    "$nb/$long" || fail "the 255-byte notebook does not read"
ok "a 255-byte file name saves"

# A dangling symlink (relative, into another directory): the save creates
# the target and keeps the link; the temporary file went to the target's
# directory.
ln -s ../other/t.ipynb "$nb/link.ipynb"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/link.ipynb") ||
    fail "save through a dangling link: $out"
[ -L "$nb/link.ipynb" ] || fail "the dangling link became a file"
[ "$(readlink "$nb/link.ipynb")" = ../other/t.ipynb ] || fail "link changed"
grep -q "saved by rtd-client" "$T/other/t.ipynb" || fail "target not written"
[ "$out" = "$T/other/t.ipynb" ] || fail "saved to $out"
ok "a dangling link keeps its link; target $out created"

# A chain of two links, the last dangling and relative to its own dir.
ln -s "$T/other/hop.ipynb" "$nb/chain.ipynb"
ln -s end.ipynb "$T/other/hop.ipynb"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/chain.ipynb") ||
    fail "save through a chain: $out"
[ -L "$nb/chain.ipynb" ] && [ -L "$T/other/hop.ipynb" ] ||
    fail "a link of the chain was replaced"
[ -f "$T/other/end.ipynb" ] || fail "chain's target not created"
ok "a chain of links, the last dangling: saved to $out"

# An existing target keeps the link and its mode.
chmod 640 "$T/other/t.ipynb"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/link.ipynb") ||
    fail "second save through the link: $out"
[ -L "$nb/link.ipynb" ] || fail "link lost on the second save"
[ "$(stat -c %a "$T/other/t.ipynb")" = 640 ] || fail "target mode changed"
ok "an existing target keeps the link and mode 640"

# A loop: refused, nothing created.
ln -s loop2.ipynb "$nb/loop1.ipynb"
ln -s loop1.ipynb "$nb/loop2.ipynb"
out=$("$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/loop1.ipynb") &&
    fail "a link loop saved: $out"
echo "$out" | grep -q "symbolic links" || fail "loop: $out"
[ -L "$nb/loop1.ipynb" ] && [ -L "$nb/loop2.ipynb" ] || fail "loop links changed"
ok "a link loop is refused: $out"

# Leftovers of a crash: ours are removed when the notebook loads; a
# symlink, a file of another owner, another notebook's and a name not
# ours are kept.
h=$(printf %s b.ipynb | sha256sum | cut -c1-16)
hx=$(printf %s x.ipynb | sha256sum | cut -c1-16)
cp "$nb/a.ipynb" "$nb/b.ipynb"
echo partial >"$nb/.rtd-$h-0123456789abcdef.tmp"
echo partial >"$nb/.rtd-$h-00000000000000ff.tmp"
ln -s "$T/victim" "$nb/.rtd-$h-1111111111111111.tmp"
echo other >"$nb/.rtd-$hx-2222222222222222.tmp"
echo notours >"$nb/.rtd-$h-333333333333333.tmp"
echo notours >"$nb/.rtd-$h-4444444444444444.tmp~"
if [ "$(id -u)" = 0 ]; then
	echo foreign >"$nb/.rtd-$h-5555555555555555.tmp"
	chown 65534 "$nb/.rtd-$h-5555555555555555.tmp"
fi
"$RTD_CLIENT" open "$RUNTIMED_SOCKET" "$nb/b.ipynb" >/dev/null ||
    fail "open b.ipynb"
[ -e "$nb/.rtd-$h-0123456789abcdef.tmp" ] && fail "leftover not removed"
[ -e "$nb/.rtd-$h-00000000000000ff.tmp" ] && fail "leftover 2 not removed"
[ -L "$nb/.rtd-$h-1111111111111111.tmp" ] || fail "a symlink was removed"
[ -f "$nb/.rtd-$hx-2222222222222222.tmp" ] || fail "another notebook's removed"
[ -f "$nb/.rtd-$h-333333333333333.tmp" ] || fail "a short name was removed"
[ -f "$nb/.rtd-$h-4444444444444444.tmp~" ] || fail "a longer name was removed"
if [ "$(id -u)" = 0 ]; then
	[ -f "$nb/.rtd-$h-5555555555555555.tmp" ] ||
	    fail "another owner's file was removed"
fi
[ "$(cat "$T/victim")" = precious ] || fail "victim changed"
ok "leftovers of b.ipynb removed on load; foreign ones kept"

# The daemon's files are private, but a kernel makes the user's files
# with the user's umask.
pids=$("$RTD_CLIENT" room "$RUNTIMED_SOCKET") || fail "no kernel came up"
m=$(sed -n 's/^Umask:[[:space:]]*//p' "/proc/${pids#* }/status")
[ "$m" = 0022 ] || fail "the kernel runs with umask $m"
ok "the kernel runs with the user's umask $m"

# Every state file is private.
for f in runtimed.db runtimed.db-wal runtimed.db-shm runtimed.db-walmark; do
	[ -f "$RUNTIMED_STATE_DIR/$f" ] || fail "no $f"
	m=$(stat -c %a "$RUNTIMED_STATE_DIR/$f")
	[ "$m" = 600 ] || fail "$f has mode $m"
done
ok "runtimed.db, -wal, -shm and -walmark are 0600"

# Another uid reaching the socket (its directory opened up for the test)
# is refused and logged.
if [ "$(id -u)" = 0 ]; then
	chmod 711 "$T" "$T/run"
	chmod 666 "$RUNTIMED_SOCKET"
	/usr/bin/python3 - "$RUNTIMED_SOCKET" <<'EOF' || fail "foreign uid not refused"
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
try:
    s.sendall(b"\0" * 16)
    got = s.recv(1)
except (BrokenPipeError, ConnectionResetError):
    got = b""
sys.exit(0 if got == b"" else 1)
EOF
	chmod 700 "$T" "$T/run"
	chmod 600 "$RUNTIMED_SOCKET"
	grep -q "refusing a connection from uid 65534" "$T/daemon.log" ||
	    fail "the refusal is not logged"
	ok "a peer of uid 65534 is refused and logged"
fi

"$RUNTIMED" stop >/dev/null || fail "stop"
wait $D

# A detached daemon: its log is 0600 too.
"$RUNTIMED" --warm-pool 0 --kernel-keepalive 0 || fail "daemonized start"
track "$("$RUNTIMED" status | sed -n 's/^pid //p')"
"$RTD_CLIENT" save "$RUNTIMED_SOCKET" "$nb/c.ipynb" >/dev/null || fail "save c"
for f in runtimed.db runtimed.db-wal runtimed.db-shm runtimed.db-walmark \
    runtimed.log; do
	m=$(stat -c %a "$RUNTIMED_STATE_DIR/$f")
	[ "$m" = 600 ] || fail "$f has mode $m (detached daemon)"
done
"$RUNTIMED" stop >/dev/null || fail "stop"
ok "state files of a detached daemon are 0600"

# A room restored from the store (unsaved changes) rather than read from
# its file also removes what a crashed save left beside the file (issue
# 35; docs/durability.md: "when the notebook is next loaded").
CTL=$top_builddir/runtimectl/runtimectl
export RUNTIMED_LIBEXEC_DIR=$top_builddir:$top_builddir/runtimed
RUNTIMED_AUTOSAVE=0 "$RUNTIMED" -D --warm-pool 0 >>"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
"$CTL" call edit_cells path="$nb/c.ipynb" \
    'edits=[{"op":"insert","after":"BOTTOM","source":"unsaved = 1"}]' \
    >/dev/null || fail "edit c.ipynb"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait $D
hc=$(printf %s c.ipynb | sha256sum | cut -c1-16)
echo partial >"$nb/.rtd-$hc-abcdefabcdefabcd.tmp"
RUNTIMED_AUTOSAVE=0 "$RUNTIMED" -D --warm-pool 0 >>"$T/daemon.log" 2>&1 &
D=$!
track $D
wait_status
"$CTL" call inspect_notebook path="$nb/c.ipynb" >"$T/c.out" ||
    fail "reopen c.ipynb: $(cat "$T/c.out")"
# The file lacks the cell: the room came from the store.
grep -q "unsaved = 1" "$T/c.out" || fail "not restored from the store"
grep -q "unsaved = 1" "$nb/c.ipynb" && fail "test bug: c.ipynb was saved"
[ -e "$nb/.rtd-$hc-abcdefabcdefabcd.tmp" ] &&
    fail "a crash's leftover kept when the room came from the store"
"$RUNTIMED" stop >/dev/null || fail "stop"
wait $D
ok "a room restored from the store removes the crash's leftover too"
