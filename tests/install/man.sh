#!/bin/sh
# SPDX-License-Identifier: ISC
# man.sh: every executable answers --help and --version (exit 0, on
# stdout) and has a manual page that renders without a warning
# ("MANWIDTH=80 man --warnings -l", and groff -ww -z), has the sections
# NAME, SYNOPSIS, DESCRIPTION, ENVIRONMENT, FILES and EXIT STATUS, and
# names every long option its --help lists.  Skips (77) without man.
set -u
top_builddir=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
. "${srcdir:-.}/tests/lib/skip.sh"
if ! command -v man >/dev/null 2>&1; then
	skip_missing "man: no man"
fi
T=$(mktemp -d /tmp/runtimed-man.XXXXXX)
trap 'rm -rf "$T"' EXIT
failed=0
bad() {
	echo "FAIL: $*" >&2
	failed=1
}
for e in runtimed/runtimed:runtimed.1 runtimed-mcp:runtimed-mcp.1 \
    runtimed-mcp-worker:runtimed-mcp-worker.8 \
    runtimed-agent:runtimed-agent.8 \
    runtimed-agent-remote:runtimed-agent-remote.8 \
    runtimed-web:runtimed-web.8; do
	bin=$top_builddir/${e%%:*}
	page=$srcdir/man/${e#*:}
	name=$(basename "$bin")
	for o in --help --version; do
		"$bin" $o </dev/null >"$T/out" 2>"$T/err" ||
		    bad "$name $o exits $?"
		[ -s "$T/out" ] || bad "$name $o prints nothing on stdout"
	done
	"$bin" --version | grep -q "^$name [0-9]" ||
	    bad "$name --version: $("$bin" --version)"
	MANWIDTH=80 man --warnings -l "$page" >"$T/page" 2>"$T/warn" ||
	    bad "man -l $page failed"
	[ -s "$T/warn" ] && { cat "$T/warn" >&2; bad "man warns on $page"; }
	groff -ww -z -mandoc "$page" 2>"$T/warn"
	[ -s "$T/warn" ] && { cat "$T/warn" >&2; bad "groff warns on $page"; }
	for sec in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES "EXIT STATUS"; do
		grep -q "^\.Sh $sec\$" "$page" || bad "$page has no $sec"
	done
	"$bin" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u |
	while read -r opt; do
		grep -q -- "^\.It.*Fl -${opt#--}\( \|$\)" "$page" ||
		    grep -q -- "Fl Fl ${opt#--}\( \|$\)" "$page" ||
		    { echo "FAIL: $page does not document $opt" >&2;
		    echo x >>"$T/undoc"; }
	done
done
[ -s "$T/undoc" ] && failed=1
[ $failed = 0 ] || exit 1
echo "ok: --help, --version and a complete page for each executable"
