#!/usr/bin/python3
# SPDX-License-Identifier: ISC
# bench/disk-probe.py DIR SECS [RATE]: the disk's own flush latency, for
# telling a slow disk from slow code.  Appends 4 KiB to a file in DIR
# and fdatasyncs it RATE times a second (default 20) for SECS seconds,
# then prints one line: count, p50, p99, max and the flushes over 50 ms.
# bench/scale.mjs runs it beside a paced load, in the daemon's state
# directory's file system.
import os
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: disk-probe.py DIR SECS [RATE]")
    secs = float(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    fd, path = tempfile.mkstemp(prefix="disk-probe.", dir=sys.argv[1])
    lat = []
    try:
        end = time.monotonic() + secs
        off = 0
        while time.monotonic() < end:
            os.pwrite(fd, b"p" * 4096, off)
            off = (off + 4096) % (1 << 20)
            t = time.monotonic()
            os.fdatasync(fd)
            lat.append((time.monotonic() - t) * 1000)
            time.sleep(1 / rate)
    finally:
        os.close(fd)
        os.unlink(path)
    lat.sort()
    n = len(lat)
    if n == 0:
        sys.exit("disk-probe: no flush measured")
    print("disk flushes (fdatasync of 4 KiB, %g/s, beside the load): %d, "
          "p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d over 50 ms" %
          (rate, n, lat[n // 2], lat[min(n - 1, int(n * 0.99))], lat[-1],
           sum(1 for x in lat if x > 50)))


main()
