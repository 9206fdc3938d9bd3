#!/bin/sh
# SPDX-License-Identifier: ISC
# worker-tasks26.sh: the tasks extension of 2026-07-28 (SEP-2663,
# worker-tasks26.test.mjs) with a raw JSON-RPC client through the real
# proxy, worker, daemon and python3 kernel, across a worker SIGKILL.
# It runs through worker-tasks.sh, whose checks (node, tests/e2e's
# modules, python3) and environment it shares.
WORKER_TASKS_TEST=worker-tasks26.test.mjs exec sh \
    "${srcdir:-.}/tests/worker/worker-tasks.sh"
