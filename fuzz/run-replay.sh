#!/bin/sh
# SPDX-License-Identifier: ISC
# Run every fuzz target over its corpus plus random mutations (replay.c).
# Targets are in the build directory; corpora in the source directory.
# The targets that run the worker or the daemon for real cost more per
# input, so they get fewer mutations.
set -e
srcdir=${srcdir:-.}
n=${FUZZ_REPLAY_COUNT:-20000}
for t in fuzz-frame fuzz-ipynb fuzz-jupyter fuzz-rpc fuzz-args fuzz-reply \
    fuzz-daemon fuzz-agent fuzz-proxy fuzz-agentframes fuzz-image fuzz-html fuzz-web \
    fuzz-remote fuzz-store fuzz-wal fuzz-tbmap fuzz-pydefuse; do
	case $t in
	fuzz-daemon|fuzz-agent|fuzz-agentframes|fuzz-image|fuzz-store)
		count=$((n / 10)) ;;
	fuzz-rpc|fuzz-args|fuzz-reply|fuzz-proxy) count=$((n / 2)) ;;
	*)		count=$n ;;
	esac
	corpus=$srcdir/fuzz/corpus/${t#fuzz-}
	printf '%s: ' "$t"
	./$t -n "$count" "$corpus"/*
done
