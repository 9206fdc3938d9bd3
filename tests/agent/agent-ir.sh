#!/bin/sh
# SPDX-License-Identifier: ISC
# The ir kernel through the real runtimed-agent (agent-live.c, family
# test); skipped (77) when the ir kernelspec is not installed.
exec sh "$(dirname "$0")/agent-live.sh" ir
