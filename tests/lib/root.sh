# SPDX-License-Identifier: ISC
# root.sh: sourced by a test that must run as root (it makes users with
# useradd, mounts, or spawns as other users).  The README's test command
# is run by a user who may sudo, as .ci/run's fresh root does
# (scripts/ci-fresh-root.sh): such a test runs itself again under
# "sudo -n", keeping its environment, so it is not skipped there.
# Without root or a password-free sudo it skips (77), saying why.

# need_root WHY "$0" "$@": return as root, or run the test again as root.
need_root() {
	why=$1
	shift
	[ "$(id -u)" = 0 ] && return 0
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		# secure_path would reset PATH: the test's own is kept, with
		# root's directories (useradd is in /usr/sbin).
		exec sudo -n -E env PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" "$@"
	fi
	echo "skip: $(basename "$1") needs root ($why): run it as root or as a user who may sudo without a password"
	exit 77
}
