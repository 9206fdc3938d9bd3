# SPDX-License-Identifier: ISC
# skip.sh: sourced by a test that cannot run without something
# scripts/install-deps.sh (or the "npm ci" of scripts/test.sh) installs.
# It skips (77) as before, saying what to install; under CI=true (as
# .ci/run sets it) it fails instead, so a machine that lacks what the
# install step would have installed cannot pass by skipping.

# skip_missing WHAT...: say what is missing, then skip, or fail in CI.
skip_missing() {
	echo "skip: $* (scripts/install-deps.sh and scripts/test.sh's npm ci install it)"
	if [ "${CI:-}" = true ]; then
		echo "FAIL: CI=true: a test may not skip for want of what the install step installs: $*" >&2
		exit 1
	fi
	exit 77
}
