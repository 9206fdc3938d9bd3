#!/bin/sh
# Run every fuzz target over its corpus plus random mutations.
# Targets are in the build directory; corpora in the source directory.
set -e
srcdir=${srcdir:-.}
n=${FUZZ_REPLAY_COUNT:-20000}
for t in fuzz-frame fuzz-ipynb fuzz-jupyter; do
	corpus=$srcdir/fuzz/corpus/${t#fuzz-}
	./$t -n "$n" "$corpus"/*
done
