#!/bin/sh
# SPDX-License-Identifier: ISC
# ipynb.sh: runtimed's .ipynb load/save against Python nbformat on a
# ~20 MB notebook (images + text), same file, same run.
#	sh bench/ipynb.sh [BUILDDIR] [MB] [ROUNDS]
# Goals: load >= 300 MB/s, save >= 150 MB/s, peak RSS <= 3x the file.
set -eu
b=${1:-.}
mb=${2:-20}
rounds=${3:-3}
src=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/bench-ipynb.XXXXXX)
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 "$src/ipynb-gen.py" "$T/nb.ipynb" "$mb"
size=$(stat -c %s "$T/nb.ipynb")
set -- $("$b/bench-ipynb" "$T/nb.ipynb" "$T/ours.ipynb" "$rounds")
c_load=$1 c_save=$2 c_atomic=$3 c_rss_load=$4 c_rss=$5
cmp -s "$T/nb.ipynb" "$T/ours.ipynb" && same=yes || same=NO
set -- $(/usr/bin/python3 "$src/ipynb-py.py" "$T/nb.ipynb" "$T/py.ipynb" "$rounds")
p_load=$1 p_save=$2 p_rss=$3
awk -v size="$size" -v cl="$c_load" -v cs="$c_save" -v ca="$c_atomic" \
    -v crl="$c_rss_load" -v cr="$c_rss" -v pl="$p_load" -v ps="$p_save" \
    -v pr="$p_rss" -v same="$same" 'BEGIN {
	mb = size / 1048576
	printf "file: %.1f MB; saved bytes identical to nbformat.write: %s\n", mb, same
	printf "%-26s %10s %10s %8s\n", "", "runtimed", "nbformat", "ratio"
	printf "%-26s %10.1f %10.1f %7.1fx\n", "load MB/s (goal >= 300)", mb/cl, mb/pl, pl/cl
	printf "%-26s %10.1f %10.1f %7.1fx\n", "save MB/s (goal >= 150)", mb/cs, mb/ps, ps/cs
	printf "%-26s %10.1f %10s\n", "atomic save+fsync MB/s", mb/ca, "-"
	printf "%-26s %10.1f %10.1f\n", "peak RSS after load MB", crl/1024, pr/1024
	printf "%-26s %10.1f %10.1f\n", "peak RSS total MB", cr/1024, pr/1024
	printf "%-26s %10.2f %10.2f\n", "peak RSS / file (<= 3)", cr/1024/mb, pr/1024/mb
}'
