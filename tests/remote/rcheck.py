# SPDX-License-Identifier: ISC
"""rcheck.py: what the tests/remote/*.py scripts share: a line per
passed check, a failure that ends the script with what was seen, and
waiting for a hand-off file that remote.sh writes when it has done its
part (killed or restarted a server or daemon)."""
import json
import os
import time


def ok(msg):
    print("ok:", msg, flush=True)


def expect(cond, what, got=None):
    if not cond:
        raise SystemExit("FAIL: %s: %s" % (what, json.dumps(got)[:2000]))


def handoff(tmp, name, timeout=60):
    path = os.path.join(tmp, name)
    t0 = time.time()
    while not os.path.exists(path):
        if time.time() - t0 > timeout:
            raise SystemExit("FAIL: no %s from remote.sh" % name)
        time.sleep(0.05)
